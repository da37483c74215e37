/* SPDX-License-Identifier: MIT */
/*
 * mcp_int.h - private to src/supervisor/mcp*.c: the server (struct
 * berth_mcp), its apps and the calls in progress, and the helpers one file
 * shares with another.  Nothing else includes it; the interface is mcp.h.
 *
 * Files, one concern each:
 *   mcp.c        the protocol: output, methods, logging, the server loop
 *   mcp_tools.c  the tool list, a call's result, the calls in progress
 *   mcp_dev.c    apps served through a running `berth dev`
 *   mcp_tasks.c  tasks (2025-11-25: tools/call as a task, tasks/get and the rest) and the
 *                server's requests to the client (elicitation/create)
 *   mcp_http.c   the Streamable HTTP transport (berth_mcp_listen)
 *
 * None of these fails to its caller: what goes wrong is answered to the
 * client (a JSON-RPC error, a tool result with isError) or said on stderr.
 */
#ifndef BERTH_SUPERVISOR_MCP_INT_H
#define BERTH_SUPERVISOR_MCP_INT_H

#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "mcp.h"
#include "app.h"
#include "lines.h"
#include "outq.h"

/* 2026-07-28: a request naming a revision the server does not speak (its
 * data: {supported, requested}). */
#define BERTH_RPC_UNSUPPORTED_VERSION (-32022)

struct mcp_app {
	char dir[PATH_MAX];
	struct berth_app *app; /* manifest, policy, and the sandbox when booted locally */
	/* A running `berth dev` for this app directory, when attached. */
	int dev_fd;
	struct berth_lines dev_in;
	struct berth_outq dev_out; /* what berth dev has not taken yet */
	long long dev_next_id;
	json_t *tools; /* names of this app's tools as last listed (for list_changed) */
	json_t *icons; /* the tools' icons (2025-11-25), from the app's icon file, or NULL */
};

struct pending {
	json_t *req_id;     /* the client's request id */
	const char *export; /* the export (the manifest's): its output schema; dev calls re-run it here */
	json_t *args;       /* dev calls: the arguments (owned), or NULL */
	struct mcp_app *app;
	long long call_id; /* the app's (or dev's) call id */
	bool via_dev;
	long long deadline; /* ms; dev calls only (local calls have their own) */
};

/* A tools/call run as a task (2025-11-25 tasks utility). */
enum mcp_task_status { TASK_WORKING, TASK_COMPLETED, TASK_FAILED, TASK_CANCELLED };

struct mcp_task {
	char id[40]; /* "task-" and 32 hex digits: not guessable */
	enum mcp_task_status status;
	char message[256];                /* statusMessage, or "" */
	json_t *result;                   /* the CallToolResult once done, or NULL */
	json_t *waiters;                  /* request ids of tasks/result calls waiting for it */
	json_t *marker;                   /* the pending call's "request id": {"task": id} */
	long long created_ms, updated_ms; /* wall clock, ms */
	long long ttl_ms;                 /* kept this long after its last update once done */
};

/* A request of ours to the client waiting for its answer (elicitation). */
struct mcp_out_req {
	char id[32]; /* "berth-N": our JSON-RPC id */
	berth_mcp_elicit_cb cb;
	void *ctx;
};

struct berth_mcp {
	struct berth_mcp_opts o;
	struct mcp_app apps[BERTH_MCP_MAX_APPS];
	size_t n_apps;
	bool initialized;
	char actor[64];   /* "mcp:uid:N": who runs the apps (docs/audit.md) */
	char caller[160]; /* "mcp:client:NAME" from initialize: who calls */
	char version[16];
	int min_level;
	struct pending *pend;
	size_t n_pend, cap_pend;
	struct berth_outq out; /* protocol output not written yet (stdout) */
	long long log_second;  /* notifications/message rate limit */
	unsigned log_sent;
	unsigned long long log_dropped;
	struct mcp_task *tasks; /* oldest first */
	size_t n_tasks, cap_tasks;
	bool client_elicit_url; /* the client declared capabilities.elicitation.url */
	bool modern;            /* 2026-07-28 requests (stateless: no initialize) are served */
	struct mcp_out_req *outreq;
	size_t n_outreq, cap_outreq;
	unsigned long long next_out_id;
};

struct done_ctx {
	struct berth_mcp *m;
	struct mcp_app *a;
};

/* berth_mcpi_reply - answer request @id with @result (taken over; NULL:
 * it could not be built, and the client gets an internal error instead). */
void berth_mcpi_reply(struct berth_mcp *m, json_t *id, json_t *result);

/* berth_mcpi_send - write @msg (taken over; NULL: nothing) as it is. */
void berth_mcpi_send(struct berth_mcp *m, json_t *msg);

/* berth_mcpi_notify - send notification @method with @params (taken over),
 * once the client is initialized. */
void berth_mcpi_notify(struct berth_mcp *m, const char *method, json_t *params);

/* berth_mcpi_app_log - an app's log line (struct berth_app_opts.log, @ctx
 * the server): on stderr, and to the client as notifications/message at
 * or above its level, at most BERTH_MCP_LOG_RATE a second. */
void berth_mcpi_app_log(void *ctx, const char *app, const char *level, const char *line);

/* berth_mcpi_all_tools - every tool served, in order: app by app, export by
 * export (a new array). */
json_t *berth_mcpi_all_tools(const struct berth_mcp *m);

/* berth_mcpi_app_icons - the icons of an app's tools: the first of
 * icon.svg, icon.png in @dir (a regular file, at most BERTH_MCP_ICON_MAX
 * bytes) as a data: URI in an MCP Icon list, or NULL when there is none. */
json_t *berth_mcpi_app_icons(const char *dir);

/* berth_mcpi_find_tool - the app and *@export of tool @name, or NULL. */
struct mcp_app *berth_mcpi_find_tool(struct berth_mcp *m, const char *name, const char **export);

/* berth_mcpi_tasks_on - whether the negotiated revision has tasks and URL
 * elicitation in its core (2025-11-25: 2026-07-28 moved tasks to an
 * extension and replaced server-to-client requests). */
bool berth_mcpi_tasks_on(const struct berth_mcp *m);

/* berth_mcpi_reply_error - answer request @id with JSON-RPC error @code and
 * @message (any bytes: made valid UTF-8). */
void berth_mcpi_reply_error(struct berth_mcp *m, json_t *id, int code, const char *message);

/* berth_mcpi_deliver - the tool result @result (taken over) of the call
 * made for @req_id: the answer to that request, or, when @req_id is a
 * task's marker ({"task": ID}, never a client's id: those are strings or
 * integers), the task's result. */
void berth_mcpi_deliver(struct berth_mcp *m, json_t *req_id, json_t *result);

/* berth_mcpi_task_start - tools/call with params.task: the caller has
 * checked the call; returns the marker to use as the pending call's request
 * id (borrowed from the task), and answers @id with the CreateTaskResult.
 * NULL (and @id answered with an error) when no task can be made. */
json_t *berth_mcpi_task_start(struct berth_mcp *m, json_t *id, json_t *task_params);

/* berth_mcpi_task_drop_last - forget the task just started (its call could
 * not be made), answering nothing. */
void berth_mcpi_task_drop_last(struct berth_mcp *m);

/* berth_mcpi_tasks_method - tasks/get, tasks/result, tasks/list,
 * tasks/cancel.  Returns false when @method is none of them. */
bool berth_mcpi_tasks_method(struct berth_mcp *m, const char *method, json_t *id, json_t *params);

/* berth_mcpi_client_response - a response from the client (@msg, borrowed)
 * to one of our requests; ignored when it answers none. */
void berth_mcpi_client_response(struct berth_mcp *m, json_t *msg);

/* berth_mcpi_tasks_free - release every task and waiting request. */
void berth_mcpi_tasks_free(struct berth_mcp *m);

/* berth_mcpi_tool_names_of - @a's exports as last listed (name,
 * description, input, output: a new array), to tell when they change. */
json_t *berth_mcpi_tool_names_of(const struct berth_mcp *m, const struct mcp_app *a);

/* berth_mcpi_finish_ok - answer @req_id with the tool result @output
 * (borrowed): a text block of its JSON and structuredContent; each member
 * @schema (the export's output schema, or NULL) declares as base64 of an
 * image/ or audio/ contentMediaType an image or audio block instead of text
 * (docs/mcp.md, "Images and audio"). */
void berth_mcpi_finish_ok(struct berth_mcp *m, json_t *req_id, const json_t *schema, json_t *output);

/*
 * berth_mcpi_media_blocks - the content blocks of @output's media members:
 * each top-level property that @schema (an export's output schema) declares
 * `contentEncoding: base64` with an image/ `contentMediaType` (audio/ when
 * @version, the negotiated revision, is 2025-03-26 or later: audio content)
 * and whose value in @output is base64 (RFC 4648, section 4, padded) is
 * appended to @content as an image (audio) block of that MIME type (MCP,
 * "Tool Result") and deleted from @text_out, the copy the text block shows.
 * Anything else is left as it is.
 */
void berth_mcpi_media_blocks(const char *version, const json_t *schema, const json_t *output, json_t *content,
			     json_t *text_out);

/* berth_mcpi_output_schema - the output schema of @a's export @export (NULL:
 * none of that name, or @export NULL). */
const json_t *berth_mcpi_output_schema(const struct mcp_app *a, const char *export);

/* berth_mcpi_finish_error - answer @req_id with a failed call's tool result
 * (isError): @message, @code, @data (borrowed, may be NULL) and the denial
 * text (may be NULL). */
void berth_mcpi_finish_error(struct berth_mcp *m, json_t *req_id, int code, const char *message, json_t *data,
			     const char *denial);

/* berth_mcpi_find_pending - the index of @a's call @call_id (through berth
 * dev or local, @via_dev), or -1. */
ssize_t berth_mcpi_find_pending(const struct berth_mcp *m, const struct mcp_app *a, bool via_dev,
				long long call_id);

/* berth_mcpi_pend_remove - forget call @i (its request id and arguments
 * released). */
void berth_mcpi_pend_remove(struct berth_mcp *m, size_t i);

/* berth_mcpi_local_done - a local call finished (the callback of
 * berth_app_process and berth_app_expire; @ctx a struct done_ctx). */
void berth_mcpi_local_done(void *ctx, long long id, json_t *result, const struct berth_call_error *ce);

/* berth_mcpi_add_pending - remember a call of @a for request @req_id
 * (referenced), with its @deadline in ms for calls through berth dev.
 * Returns 0, or -1 when out of memory. */
int berth_mcpi_add_pending(struct berth_mcp *m, json_t *req_id, struct mcp_app *a, long long call_id,
			   bool via_dev, long long deadline);

/* A transport besides stdio (mcp_http.c): its descriptors join the server
 * loop's poll(2). */
#define BERTH_MCPI_TRANSPORT_FDS 72
struct berth_mcpi_transport {
	void *ctx;
	/* fill at most @max entries of @p; lower *@soonest (ms, -1: none) to
	 * the transport's next deadline; return how many were filled */
	size_t (*fds)(void *ctx, struct pollfd *p, size_t max, long long *soonest);
	/* act on the entries fds() filled (their revents set) */
	void (*ready)(void *ctx, struct pollfd *p, size_t n);
};

/* berth_mcpi_loop - berth_mcp_run(), with the messages of @t as well
 * (@in_fd -1: no stdin; then it runs until a signal). */
int berth_mcpi_loop(struct berth_mcp *m, int in_fd, const struct berth_mcpi_transport *t,
		    struct berth_error *err);

/* berth_mcpi_versions - the revisions served, newest first, NULL-terminated. */
const char *const *berth_mcpi_versions(void);

/* berth_mcpi_end_session - forget the client: its calls (cancelled), tasks
 * and requests, its revision; the next message must be initialize. */
void berth_mcpi_end_session(struct berth_mcp *m);

/* berth_mcpi_dev_attach - connect @a to a running `berth dev` of this user
 * for its app (@a->dev_fd, -1 when there is none or --no-dev). */
void berth_mcpi_dev_attach(struct berth_mcp *m, struct mcp_app *a);

/* berth_mcpi_dev_send - queue @msg (taken over; NULL: nothing new) for
 * @a's berth dev and write what it takes now. */
void berth_mcpi_dev_send(struct berth_mcp *m, struct mcp_app *a, json_t *msg);

/* berth_mcpi_dev_input - read and act on what @a's berth dev sent: the
 * answers to calls, `changed` (the app reloaded); leave it when it closed
 * the connection. */
void berth_mcpi_dev_input(struct berth_mcp *m, struct mcp_app *a);

#endif
