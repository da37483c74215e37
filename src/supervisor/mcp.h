/* SPDX-License-Identifier: MIT */
/*
 * mcp.h - `berth mcp`: a Model Context Protocol server (stdio transport:
 * newline-delimited JSON-RPC 2.0; or Streamable HTTP, berth_mcp_listen)
 * that serves resident apps' exports as tools.  Protocol revision
 * 2025-11-25, and 2025-06-18, 2025-03-26 or 2024-11-05 when the client asks
 * for those at initialize; and 2026-07-28, the stateless revision, for
 * requests that name it in _meta (no initialize)
 * (https://modelcontextprotocol.io/specification).
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
#define BERTH_MCP_LOG_RATE 200           /* notifications/message per second; more are counted and dropped */
#define BERTH_MCP_MAX_PENDING 1024       /* tools/call in progress; more get isError at once */
#define BERTH_MCP_LATEST "2025-11-25"    /* the latest revision negotiated through initialize */
#define BERTH_MCP_STATELESS "2026-07-28" /* the stateless revision: no initialize, _meta on each request */
#define BERTH_MCP_META_VERSION "io.modelcontextprotocol/protocolVersion"
#define BERTH_MCP_META_CLIENT "io.modelcontextprotocol/clientInfo"
#define BERTH_MCP_META_SERVER "io.modelcontextprotocol/serverInfo"
#define BERTH_MCP_ICON_MAX (64 * 1024)    /* bytes of an app's icon.svg or icon.png */
#define BERTH_MCP_MAX_TASKS 1024          /* tasks kept (working or done); more are refused */
#define BERTH_MCP_TASK_TTL_MS 300000      /* a done task's result is kept this long by default */
#define BERTH_MCP_TASK_TTL_MAX_MS 3600000 /* and at most this long, whatever the client asks */

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
	/* test-only (BERTH_MCP_TEST_ELICIT_URL): at notifications/initialized,
	 * send a URL elicitation of this URL through berth_mcp_elicit_url()
	 * and say the answer (or why it could not be sent) as a
	 * notifications/message of logger "berth"; NULL: never. */
	const char *test_elicit_url;
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

/*
 * URL-mode elicitation (2025-11-25): the hook through which berth asks the
 * user, through the client, to visit a URL (an on-demand grant's approval
 * page, say) and learns what they answered.
 *
 * berth_mcp_elicit_url - send `elicitation/create` with mode "url" to the
 * client.
 * @message: what the user is asked and why (shown by the client)
 * @url: the page to open (an absolute URL)
 * @elicitation_id: unique within this server; echoed by
 *     berth_mcp_elicit_complete() once the page's work is done
 * @cb: called once with the client's answer: @action "accept", "decline"
 *     or "cancel", or NULL when the client answered with an error (then
 *     @error is its message) or went away before answering (@error "the
 *     client went away")
 * Returns 0 when the request was sent; -1 with @err filled (status 2) when
 * the client cannot take it: not initialized, a revision other than
 * 2025-11-25, or no capabilities.elicitation.url declared at initialize.
 * "accept" means only that the user agreed to open the URL: what happens
 * there is for the page's own server to tell.
 */
typedef void (*berth_mcp_elicit_cb)(void *ctx, const char *action, const char *error);
int berth_mcp_elicit_url(struct berth_mcp *m, const char *message, const char *url,
			 const char *elicitation_id, berth_mcp_elicit_cb cb, void *ctx,
			 struct berth_error *err);

/* berth_mcp_elicit_complete - tell the client that the out-of-band
 * interaction of @elicitation_id is over (notifications/elicitation/complete). */
void berth_mcp_elicit_complete(struct berth_mcp *m, const char *elicitation_id);

/*
 * berth_mcp_listen - serve over the Streamable HTTP transport instead of
 * stdio, at @addr (IPv4 a.b.c.d:PORT or [IPv6]:PORT; PORT 0: any free one),
 * path /mcp, until SIGINT or SIGTERM; then stop every app and return 0.
 * Every request must carry `Authorization: Bearer @token`; an Origin
 * header, when sent, must name a loopback host.  Once the address is
 * bound, @ready (may be NULL) is called with the endpoint's URL to hand out
 * the token (a -1 from it stops here, nothing served); then the URL is said
 * on stderr ("berth: mcp: listening on http://...").
 * Returns -1 with @err filled when the address cannot be used.
 * Whether a non-loopback address may be used is the caller's decision.
 */
int berth_mcp_listen(struct berth_mcp *m, const char *addr, const char *token,
		     int (*ready)(void *ctx, const char *url), void *ready_ctx, struct berth_error *err);

/* berth_mcp_listen_loopback - whether @addr (as for berth_mcp_listen) is a
 * loopback address (127.0.0.0/8, ::1): *@loopback.  Returns 0, or -1 with
 * @err filled (status 2) when @addr is not an address and a port. */
int berth_mcp_listen_loopback(const char *addr, bool *loopback, struct berth_error *err);

/* berth_mcp_free - stop and release everything (safe on NULL). */
void berth_mcp_free(struct berth_mcp *m);

#endif
