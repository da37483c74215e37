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
 *
 * None of these fails to its caller: what goes wrong is answered to the
 * client (a JSON-RPC error, a tool result with isError) or said on stderr.
 */
#ifndef BERTH_SUPERVISOR_MCP_INT_H
#define BERTH_SUPERVISOR_MCP_INT_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "mcp.h"
#include "app.h"
#include "lines.h"
#include "outq.h"

struct mcp_app {
	char dir[PATH_MAX];
	struct berth_app *app; /* manifest, policy, and the sandbox when booted locally */
	/* A running `berth dev` for this app directory, when attached. */
	int dev_fd;
	struct berth_lines dev_in;
	struct berth_outq dev_out; /* what berth dev has not taken yet */
	long long dev_next_id;
	json_t *tools; /* names of this app's tools as last listed (for list_changed) */
};

struct pending {
	json_t *req_id;     /* the client's request id */
	const char *export; /* dev calls: kept to re-run the call here */
	json_t *args;       /* dev calls: the arguments (owned), or NULL */
	struct mcp_app *app;
	long long call_id; /* the app's (or dev's) call id */
	bool via_dev;
	long long deadline; /* ms; dev calls only (local calls have their own) */
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
};

struct done_ctx {
	struct berth_mcp *m;
	struct mcp_app *a;
};

/* berth_mcpi_reply - answer request @id with @result (taken over; NULL:
 * it could not be built, and the client gets an internal error instead). */
void berth_mcpi_reply(struct berth_mcp *m, json_t *id, json_t *result);

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

/* berth_mcpi_find_tool - the app and *@export of tool @name, or NULL. */
struct mcp_app *berth_mcpi_find_tool(struct berth_mcp *m, const char *name, const char **export);

/* berth_mcpi_tool_names_of - @a's exports as last listed (name,
 * description, input, output: a new array), to tell when they change. */
json_t *berth_mcpi_tool_names_of(const struct berth_mcp *m, const struct mcp_app *a);

/* berth_mcpi_finish_ok - answer @req_id with the tool result @output
 * (borrowed). */
void berth_mcpi_finish_ok(struct berth_mcp *m, json_t *req_id, json_t *output);

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
