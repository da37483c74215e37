/* SPDX-License-Identifier: MIT */
/*
 * mcp.h - `berth mcp`: a Model Context Protocol server (stdio transport:
 * newline-delimited JSON-RPC 2.0) that serves resident apps' exports as
 * tools.  Protocol revision 2025-06-18, and 2025-03-26 or 2024-11-05 when
 * the client asks for those (https://modelcontextprotocol.io/specification).
 *
 * One tool per export: `<export>` when one app is served, `<app>__<export>`
 * when several are.  Calls run concurrently (at most BERTH_APP_MAX_INFLIGHT
 * in flight per app, the rest queued), each with a timeout.  An app is booted
 * at its first call (or at start with `warm`), or reached through a running
 * `berth dev` for the same app directory, which is left running.  Nothing
 * but protocol is written to the output; human text goes to stderr.
 */
#ifndef BERTH_MCP_H
#define BERTH_MCP_H

#include <stdbool.h>
#include <stddef.h>

#include "../runtime/runtime.h"
#include "../util/error.h"

#define BERTH_MCP_MAX_APPS 16
#define BERTH_MCP_MAX_LINE (8 * 1024 * 1024) /* bytes: one client message, newline included */
#define BERTH_MCP_PAGE_SIZE 100              /* tools per tools/list page */
#define BERTH_MCP_LOG_RATE 200     /* notifications/message per second; more are counted and dropped */
#define BERTH_MCP_MAX_PENDING 1024 /* tools/call in progress; more get isError at once */
#define BERTH_MCP_LATEST "2025-06-18"

struct berth_mcp_opts {
	const char *const *app_dirs;  /* @n_apps app directories */
	const char *const *app_names; /* the name each is given as (--app); must match its manifest */
	size_t n_apps;                /* 0 is allowed (tests, fuzzing): no tools */
	const char *const *only;      /* serve only these exports (or app__export names); NULL: all */
	size_t n_only;
	bool warm;           /* boot every app at start */
	unsigned timeout_ms; /* per call; 0: BERTH_APP_CALL_TIMEOUT_MS */
	unsigned page_size;  /* tools per page; 0: BERTH_MCP_PAGE_SIZE */
	unsigned force_off;  /* test-only switch, as for `berth run` */
	bool no_dev;         /* never attach to a running berth dev */
	/* What enforces the apps' policies (`--runtime`; src/runtime/runtime.h);
	 * NULL: the default.  Another than the default never attaches to a
	 * `berth dev` (which runs the default), and is checked for every app
	 * at berth_mcp_new (its check(): what it cannot run is refused then). */
	const struct berth_runtime_ops *runtime;
	/* Where protocol output goes: one whole message per call, newline
	 * included.  NULL: standard output. */
	void (*write)(void *ctx, const char *line, size_t len);
	void *write_ctx;
};

struct berth_mcp;

/*
 * berth_mcp_new - open every app (manifest, policy; nothing runs unless
 * @o->warm) and check that each app's name matches the one it was given.
 * Returns the server, or NULL with @err filled (an invalid manifest, status
 * 2, its problems printed on stderr; a name mismatch; what @o->runtime's
 * check() refuses, its status, the message naming the app; a boot failure
 * with warm).
 */
struct berth_mcp *berth_mcp_new(const struct berth_mcp_opts *o, struct berth_error *err);

/*
 * berth_mcp_handle - one message from the client (@len bytes, no newline).
 * Answers (if any) go to the output.  Never fails: bad input gets a
 * JSON-RPC error (-32700 parse error, -32600 invalid request, -32601 unknown
 * method, -32602 invalid params).  A tools/call is answered later, from
 * berth_mcp_run(), when the app answers.
 */
void berth_mcp_handle(struct berth_mcp *m, const char *line, size_t len);

/*
 * berth_mcp_run - serve messages from @in_fd until end of file, SIGINT or
 * SIGTERM; then stop every app it booted (graceful, then SIGKILL) and
 * return 0.  Returns -1 with @err filled only when the loop cannot be set up.
 */
int berth_mcp_run(struct berth_mcp *m, int in_fd, struct berth_error *err);

/* berth_mcp_free - stop and release everything (safe on NULL). */
void berth_mcp_free(struct berth_mcp *m);

#endif
