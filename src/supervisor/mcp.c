/* SPDX-License-Identifier: MIT */
/*
 * mcp.c - `berth mcp`: resident apps served as an MCP server over stdio
 * (mcp.h).  The protocol (output, methods, the loop) is here; the tools and
 * their results are in mcp_tools.c, the link to a running `berth dev` in
 * mcp_dev.c.
 */
#include "mcp_int.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/sys.h"
#include "../util/text.h"

#ifndef BERTH_VERSION
#define BERTH_VERSION "0.0.0"
#endif

/* Revisions this server speaks, newest first. */
static const char *const versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

/* RFC 5424 severities, as MCP's logging/setLevel names them, lowest first. */
static const char *const levels[] = {"debug", "info",     "notice", "warning",
				     "error", "critical", "alert",  "emergency"};

/* ---------------------------------------------------------- output */

static void emit(struct berth_mcp *m, json_t *msg)
{
	cleanup_free char *s = msg != NULL ? json_dumps(msg, JSON_COMPACT) : NULL;
	size_t len;

	json_decref(msg);
	if (s == NULL)
		return;
	len = strlen(s);
	s[len] = '\n'; /* json_dumps leaves room: we own the terminating byte */
	if (m->o.write != NULL) {
		m->o.write(m->o.write_ctx, s, len + 1);
		return;
	}
	/* Queued, and written by the loop when stdout takes it: a client that
	 * stops reading must not stall deadlines and signals. */
	(void)berth_outq_put_line(&m->out, s, len);
}

/* Write what stdout takes now: after poll(2) said POLLOUT, at most PIPE_BUF
 * bytes at a time never block on a pipe (pipe(7)); with @wait_ms > 0, keep
 * going until the queue is empty or that time has passed. */
static void flush_out(struct berth_mcp *m, int wait_ms)
{
	long long deadline = berth_now_ms() + wait_ms;

	while (m->out.len > 0) {
		struct pollfd p = {STDOUT_FILENO, POLLOUT, 0};
		long long left = deadline - berth_now_ms();
		if (poll(&p, 1, left > 0 ? (int)left : 0) <= 0 || !(p.revents & POLLOUT)) {
			if (p.revents & (POLLERR | POLLHUP | POLLNVAL))
				m->out.len = 0; /* the client is gone */
			return;
		}
		ssize_t w = write(STDOUT_FILENO, m->out.buf, m->out.len < PIPE_BUF ? m->out.len : PIPE_BUF);
		if (w < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (w <= 0) {
			m->out.len = 0;
			return;
		}
		berth_outq_consume(&m->out, (size_t)w);
	}
}

void berth_mcpi_send(struct berth_mcp *m, json_t *msg)
{
	emit(m, msg);
}

void berth_mcpi_reply(struct berth_mcp *m, json_t *id, json_t *result)
{
	/* 2026-07-28: every result says it is complete (no input_required:
	 * berth asks for nothing mid-call) */
	if (m->modern && json_is_object(result) && json_object_get(result, "resultType") == NULL)
		json_object_set_new(result, "resultType", json_string("complete"));
	json_t *msg = result != NULL
			  ? json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result)
			  : NULL;

	/* Every request gets its answer, even one that cannot be encoded. */
	if (msg == NULL)
		msg = json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id, "error", "code",
				BERTH_RPC_INTERNAL, "message",
				"internal error: the answer could not be encoded");
	emit(m, msg);
}

static void reply_error(struct berth_mcp *m, json_t *id, int code, json_t *data, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void reply_error(struct berth_mcp *m, json_t *id, int code, json_t *data, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	char clean[4200];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	/* The message may quote the client's bytes (a method name, a parse
	 * error's excerpt), cut anywhere: always valid UTF-8 for JSON, so that
	 * every request gets its answer. */
	berth_text_clean(clean, sizeof clean, msg);
	emit(m, json_pack("{s:s, s:O?, s:{s:i, s:s, s:o*}}", "jsonrpc", "2.0", "id", id, "error", "code",
			  code, "message", clean, "data", data));
}

void berth_mcpi_reply_error(struct berth_mcp *m, json_t *id, int code, const char *message)
{
	reply_error(m, id, code, NULL, "%s", message);
}

void berth_mcpi_notify(struct berth_mcp *m, const char *method, json_t *params)
{
	if (!m->initialized) {
		json_decref(params);
		return;
	}
	emit(m, json_pack("{s:s, s:s, s:o*}", "jsonrpc", "2.0", "method", method, "params", params));
}

/* ---------------------------------------------------------- methods */

/* The client names itself (clientInfo.name, or in 2026-07-28 the _meta
 * clientInfo): the actor of its calls in the audit trail.  Its word, not
 * proof: the uid is in run.start's actor. */
static void set_caller(struct berth_mcp *m, const char *cn)
{
	snprintf(m->caller, sizeof m->caller, "mcp:client:%.100s", cn != NULL && cn[0] ? cn : "unnamed");
	for (size_t i = 0; i < m->n_apps; i++)
		berth_app_set_caller(m->apps[i].app, m->caller);
}

static const char instructions[] =
    "Each tool is an export of a resident app that runs in its own kernel-enforced sandbox (berth). "
    "A failed call returns isError with the reason; a capability denial says what refused it.";

/* server/discover (2026-07-28; answered under any revision): what the
 * server speaks, without a session. */
static void on_discover(struct berth_mcp *m, json_t *id)
{
	json_t *r = json_pack("{s:[s], s:{s:{s:b}}, s:s, s:i, s:s, s:{s:{s:s, s:s}}}", "supportedVersions",
			      BERTH_MCP_STATELESS, "capabilities", "tools", "listChanged", true,
			      "instructions", instructions, "ttlMs", 0, "cacheScope", "private", "_meta",
			      BERTH_MCP_META_SERVER, "name", "berth", "version", BERTH_VERSION);
	if (r != NULL && !m->modern)
		json_object_set_new(r, "resultType", json_string("complete"));
	berth_mcpi_reply(m, id, r);
}

static void on_initialize(struct berth_mcp *m, json_t *id, json_t *params)
{
	const char *want = json_string_value(json_object_get(params, "protocolVersion"));

	if (m->initialized) {
		reply_error(m, id, BERTH_RPC_INVALID_REQUEST, NULL, "already initialized");
		return;
	}
	if (want == NULL) {
		reply_error(m, id, BERTH_RPC_INVALID_PARAMS, NULL, "initialize needs params.protocolVersion");
		return;
	}
	/* The client's revision if we speak it, else our latest (the client
	 * then decides whether it can go on). */
	snprintf(m->version, sizeof m->version, "%s", BERTH_MCP_LATEST);
	for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++)
		if (strcmp(want, versions[i]) == 0)
			snprintf(m->version, sizeof m->version, "%s", versions[i]);
	m->initialized = true;
	set_caller(m, json_string_value(json_object_get(json_object_get(params, "clientInfo"), "name")));
	/* 2025-11-25: URL-mode elicitation only when the client says it takes
	 * it (capabilities.elicitation.url; an empty elicitation object means
	 * form mode only). */
	m->client_elicit_url = json_is_object(
	    json_object_get(json_object_get(json_object_get(params, "capabilities"), "elicitation"), "url"));
	json_t *r = json_pack("{s:s, s:{s:{s:b}, s:{}}, s:{s:s, s:s}, s:s}", "protocolVersion", m->version,
			      "capabilities", "tools", "listChanged", true, "logging", "serverInfo", "name",
			      "berth", "version", BERTH_VERSION, "instructions", instructions);
	if (r != NULL && berth_mcpi_tasks_on(m)) {
		/* The tasks utility: tools/call may run as a task (every tool's
		 * execution.taskSupport is "optional"). */
		json_object_set_new(
		    json_object_get(r, "capabilities"), "tasks",
		    json_pack("{s:{}, s:{}, s:{s:{s:{}}}}", "list", "cancel", "requests", "tools", "call"));
	}
	berth_mcpi_reply(m, id, r);
}

static void on_tools_list(struct berth_mcp *m, json_t *id, json_t *params)
{
	json_t *cursor = json_object_get(params, "cursor");
	unsigned page = m->o.page_size ? m->o.page_size : BERTH_MCP_PAGE_SIZE;
	unsigned long start = 0;

	if (cursor != NULL && !json_is_null(cursor)) {
		const char *c = json_string_value(cursor);
		char *end = NULL;
		errno = 0;
		if (c != NULL && strncmp(c, "tools:", 6) == 0)
			start = strtoul(c + 6, &end, 10);
		if (c == NULL || end == NULL || *end != '\0' || errno != 0 || end == c + 6) {
			reply_error(m, id, BERTH_RPC_INVALID_PARAMS, NULL, "invalid cursor");
			return;
		}
	}
	json_t *all = berth_mcpi_all_tools(m), *pagev = json_array();
	size_t n = json_array_size(all);
	if (start > n) {
		json_decref(all);
		json_decref(pagev);
		reply_error(m, id, BERTH_RPC_INVALID_PARAMS, NULL, "invalid cursor");
		return;
	}
	for (size_t i = start; i < n && i < start + page; i++)
		json_array_append(pagev, json_array_get(all, i));
	json_t *r = json_pack("{s:o}", "tools", pagev);
	if (r != NULL && m->modern) {
		/* 2026-07-28 cache hints: berth dev may change the list at any time */
		json_object_set_new(r, "ttlMs", json_integer(0));
		json_object_set_new(r, "cacheScope", json_string("private"));
	}
	if (start + page < n) {
		char next[32];
		snprintf(next, sizeof next, "tools:%lu", start + page);
		json_object_set_new(r, "nextCursor", json_string(next));
	}
	json_decref(all);
	berth_mcpi_reply(m, id, r);
}

static void on_tools_call(struct berth_mcp *m, json_t *id, json_t *params)
{
	const char *name = json_string_value(json_object_get(params, "name")), *export = NULL;
	json_t *args = json_object_get(params, "arguments"), *task = json_object_get(params, "task");
	struct berth_call_error ce = {0};
	struct mcp_app *a;
	long long call_id;

	if (name == NULL) {
		reply_error(m, id, BERTH_RPC_INVALID_PARAMS, NULL, "tools/call needs params.name");
		return;
	}
	a = berth_mcpi_find_tool(m, name, &export);
	if (a == NULL) {
		reply_error(m, id, BERTH_RPC_INVALID_PARAMS, NULL, "unknown tool `%s`", name);
		return;
	}
	if (args != NULL && !json_is_null(args) && !json_is_object(args)) {
		reply_error(m, id, BERTH_RPC_INVALID_PARAMS, NULL, "arguments must be an object");
		return;
	}
	if (json_is_null(args))
		args = NULL;
	if (task != NULL && (!berth_mcpi_tasks_on(m) || !json_is_object(task))) {
		reply_error(m, id, BERTH_RPC_INVALID_PARAMS, NULL,
			    !berth_mcpi_tasks_on(m) ? "params.task: tasks need protocol revision 2025-11-25"
						    : "params.task must be an object");
		return;
	}
	/* Rejected against the schema before the app sees them. */
	/* Bounded: beyond this, the client must wait for answers first. */
	if (m->n_pend >= BERTH_MCP_MAX_PENDING) {
		berth_mcpi_finish_error(m, id, BERTH_RPC_APP_ERROR,
					"too many calls in progress; wait for some to finish", NULL, NULL);
		return;
	}
	if (berth_app_check_input(a->app, export, args, &ce) < 0) {
		reply_error(m, id, BERTH_RPC_INVALID_PARAMS, json_incref(ce.data), "%s", ce.message);
		berth_call_error_free(&ce);
		return;
	}
	json_t *client_id = id;
	if (task != NULL) {
		/* Answered now with the task; the call's result goes to it. */
		if ((id = berth_mcpi_task_start(m, client_id, task)) == NULL)
			return;
	}
	if (a->dev_fd >= 0) {
		long long cid = ++a->dev_next_id;
		unsigned t = m->o.timeout_ms ? m->o.timeout_ms : BERTH_APP_CALL_TIMEOUT_MS;
		if (berth_mcpi_add_pending(m, id, a, cid, true, berth_now_ms() + t + 5000) < 0) {
			berth_mcpi_finish_error(m, id, BERTH_RPC_INTERNAL, "out of memory", NULL, NULL);
			return;
		}
		m->pend[m->n_pend - 1].export = export;
		m->pend[m->n_pend - 1].args = args != NULL ? json_incref(args) : NULL;
		berth_mcpi_dev_send(m, a,
				    json_pack("{s:s, s:I, s:s, s:{s:s, s:O*, s:i, s:s}}", "jsonrpc", "2.0",
					      "id", (json_int_t)cid, "method", "call", "params", "export",
					      export, "input", args, "timeout_ms", (int)t, "app_dir",
					      berth_app_paths(a->app)->app_dir));
		return;
	}
	if (berth_app_start_call(a->app, export, args, m->o.timeout_ms, &call_id, &ce) < 0) {
		berth_mcpi_finish_error(m, id, ce.code, ce.message, ce.data, ce.denial);
		berth_call_error_free(&ce);
		return;
	}
	if (berth_mcpi_add_pending(m, id, a, call_id, false, 0) < 0) {
		berth_app_cancel(a->app, call_id);
		berth_mcpi_finish_error(m, id, BERTH_RPC_INTERNAL, "out of memory", NULL, NULL);
		return;
	}
	m->pend[m->n_pend - 1].export = export; /* its output schema: media content */
	(void)client_id;
}

static void on_set_level(struct berth_mcp *m, json_t *id, json_t *params)
{
	const char *lv = json_string_value(json_object_get(params, "level"));

	for (int i = 0; lv != NULL && i < (int)(sizeof levels / sizeof levels[0]); i++)
		if (strcmp(lv, levels[i]) == 0) {
			m->min_level = i;
			berth_mcpi_reply(m, id, json_object());
			return;
		}
	reply_error(m, id, BERTH_RPC_INVALID_PARAMS, NULL,
		    "unknown level: use debug, info, notice, warning, error, critical, alert or emergency");
}

static void on_cancelled(struct berth_mcp *m, json_t *params)
{
	json_t *rid = json_object_get(params, "requestId");

	for (size_t i = 0; rid != NULL && i < m->n_pend; i++) {
		if (!json_equal(m->pend[i].req_id, rid))
			continue;
		/* No answer for a cancelled request (MCP cancellation); the app
		 * hears berth/cancel. */
		if (!m->pend[i].via_dev)
			berth_app_cancel(m->pend[i].app->app, m->pend[i].call_id);
		berth_mcpi_pend_remove(m, i);
		return;
	}
}

static void test_elicit_done(void *ctx, const char *action, const char *error)
{
	struct berth_mcp *m = ctx;
	char text[512];

	snprintf(text, sizeof text, "elicitation berth-test-1: %s%s",
		 action != NULL ? action : "error: ", action != NULL ? "" : error);
	berth_mcpi_notify(m, "notifications/message",
			  json_pack("{s:s, s:s, s:s}", "level", "info", "logger", "berth", "data", text));
	if (action != NULL && strcmp(action, "accept") == 0)
		berth_mcp_elicit_complete(m, "berth-test-1");
}

/* BERTH_MCP_TEST_ELICIT_URL (mcp.h): the hook exercised end to end. */
static void test_elicit(struct berth_mcp *m)
{
	struct berth_error e = {0};

	if (berth_mcp_elicit_url(m, "berth test: open this page to approve the grant", m->o.test_elicit_url,
				 "berth-test-1", test_elicit_done, m, &e) < 0)
		test_elicit_done(m, NULL, e.msg);
}

void berth_mcp_handle(struct berth_mcp *m, const char *line, size_t len)
{
	json_error_t je;
	json_t *msg = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je), *id, *params;
	const char *method, *jv;

	if (msg == NULL) {
		reply_error(m, NULL, BERTH_RPC_PARSE_ERROR, NULL, "parse error: %s", je.text);
		return;
	}
	if (!json_is_object(msg)) {
		reply_error(m, NULL, BERTH_RPC_INVALID_REQUEST, NULL,
			    json_is_array(msg) ? "batches are not supported: send one message per line"
					       : "a message is a JSON object");
		json_decref(msg);
		return;
	}
	id = json_object_get(msg, "id");
	params = json_object_get(msg, "params");
	method = json_string_value(json_object_get(msg, "method"));
	jv = json_string_value(json_object_get(msg, "jsonrpc"));
	if (method == NULL &&
	    (json_object_get(msg, "result") != NULL || json_object_get(msg, "error") != NULL)) {
		berth_mcpi_client_response(m, msg); /* to one of our requests, or dropped */
		json_decref(msg);
		return;
	}
	if (jv == NULL || strcmp(jv, "2.0") != 0 || method == NULL ||
	    (id != NULL && !json_is_string(id) && !json_is_integer(id)) ||
	    (params != NULL && !json_is_object(params))) {
		reply_error(
		    m, id != NULL && (json_is_string(id) || json_is_integer(id)) ? id : NULL,
		    BERTH_RPC_INVALID_REQUEST, NULL,
		    "not a JSON-RPC 2.0 request (jsonrpc \"2.0\", a method, an id that is a string or an "
		    "integer, params an object)");
		json_decref(msg);
		return;
	}
	if (id == NULL) { /* a notification: never answered */
		if (strcmp(method, "notifications/cancelled") == 0)
			on_cancelled(m, params);
		else if (strcmp(method, "notifications/initialized") == 0 && m->o.test_elicit_url != NULL)
			test_elicit(m);
		json_decref(msg);
		return;
	}
	/* 2026-07-28 (stateless): a request names its revision in _meta; no
	 * initialize comes first. */
	json_t *meta = json_object_get(params, "_meta");
	const char *pv = json_string_value(json_object_get(meta, BERTH_MCP_META_VERSION));
	if (pv != NULL && strcmp(pv, "2026-07-28") >= 0 && strcmp(method, "initialize") != 0) {
		if (strcmp(pv, BERTH_MCP_STATELESS) != 0) {
			reply_error(
			    m, id, BERTH_RPC_UNSUPPORTED_VERSION,
			    json_pack("{s:[s], s:s}", "supported", BERTH_MCP_STATELESS, "requested", pv),
			    "unsupported protocol version `%s`: this server speaks %s (and, through "
			    "initialize, "
			    "2025-11-25 and older)",
			    pv, BERTH_MCP_STATELESS);
			json_decref(msg);
			return;
		}
		if (m->initialized && !m->modern) {
			reply_error(m, id, BERTH_RPC_INVALID_REQUEST, NULL,
				    "this connection initialized %s: a 2026-07-28 request cannot follow",
				    m->version);
			json_decref(msg);
			return;
		}
		if (!m->modern) {
			m->modern = m->initialized = true;
			snprintf(m->version, sizeof m->version, "%s", BERTH_MCP_STATELESS);
			set_caller(m, json_string_value(json_object_get(
					  json_object_get(meta, BERTH_MCP_META_CLIENT), "name")));
		}
	}
	if (strcmp(method, "server/discover") == 0)
		on_discover(m, id);
	else if (strcmp(method, "initialize") == 0)
		on_initialize(m, id, params);
	else if (strcmp(method, "ping") == 0)
		berth_mcpi_reply(m, id, json_object());
	else if (!m->initialized)
		reply_error(m, id, BERTH_RPC_INVALID_REQUEST, NULL, "not initialized: send initialize first");
	else if (strcmp(method, "tools/list") == 0)
		on_tools_list(m, id, params);
	else if (strcmp(method, "tools/call") == 0)
		on_tools_call(m, id, params);
	else if (strcmp(method, "logging/setLevel") == 0)
		on_set_level(m, id, params);
	else if (berth_mcpi_tasks_method(m, method, id, params))
		;
	else
		reply_error(m, id, BERTH_RPC_METHOD_NOT_FOUND, NULL, "unknown method `%s`", method);
	json_decref(msg);
}

/* ---------------------------------------------------------- life */

void berth_mcpi_app_log(void *ctx, const char *app, const char *level, const char *line)
{
	struct berth_mcp *m = ctx;
	int lv = 1;

	fprintf(stderr, "[%s] %s%s%s\n", app, strcmp(level, "info") ? level : "",
		strcmp(level, "info") ? ": " : "", line);
	for (int i = 0; i < (int)(sizeof levels / sizeof levels[0]); i++)
		if (strcmp(level, levels[i]) == 0)
			lv = i;
	if (lv < m->min_level)
		return;
	/* At most BERTH_MCP_LOG_RATE messages a second reach the client: an app
	 * flooding its logs must not flood the model's context.  What is dropped
	 * is counted and said once the next second begins. */
	long long sec = berth_now_ms() / 1000;
	if (sec != m->log_second) {
		if (m->log_dropped > 0) {
			char note[128];
			snprintf(note, sizeof note, "%llu log lines dropped (more than %d a second)",
				 (unsigned long long)m->log_dropped, BERTH_MCP_LOG_RATE);
			berth_mcpi_notify(m, "notifications/message",
					  json_pack("{s:s, s:s, s:s}", "level", "warning", "logger", "berth",
						    "data", note));
		}
		m->log_second = sec;
		m->log_sent = 0;
		m->log_dropped = 0;
	}
	if (m->log_sent >= BERTH_MCP_LOG_RATE) {
		m->log_dropped++;
		return;
	}
	m->log_sent++;
	berth_mcpi_notify(m, "notifications/message",
			  json_pack("{s:s, s:s, s:s}", "level", levels[lv], "logger", app, "data", line));
}

struct berth_mcp *berth_mcp_new(const struct berth_mcp_opts *o, struct berth_error *err)
{
	struct berth_mcp *m = calloc(1, sizeof *m);

	if (m == NULL)
		return berth_err(err, ENOMEM, "out of memory"), NULL;
	if (o->n_apps > BERTH_MCP_MAX_APPS) {
		free(m);
		berth_usage_err(err, "berth mcp serves at most %d apps", BERTH_MCP_MAX_APPS);
		return NULL;
	}
	m->o = *o;
	/* `berth dev` runs its apps on the default runtime: not what was asked */
	if (o->runtime != NULL && o->runtime != berth_runtime_default())
		m->o.no_dev = true;
	snprintf(m->actor, sizeof m->actor, "mcp:uid:%u", (unsigned)getuid());
	m->min_level = 1; /* info */
	snprintf(m->version, sizeof m->version, "%s", BERTH_MCP_LATEST);
	for (size_t i = 0; i < o->n_apps; i++) {
		struct mcp_app *a = &m->apps[m->n_apps];
		struct berth_app_opts ao = {.force_off = o->force_off,
					    .log = berth_mcpi_app_log,
					    .log_ctx = m,
					    .audit = true,
					    .actor = m->actor,
					    .runtime = o->runtime};
		struct berth_diags d = {0};
		a->dev_fd = -1;
		snprintf(a->dir, sizeof a->dir, "%s", o->app_dirs[i]);
		if (berth_app_open(a->dir, &ao, &a->app, &d, err) < 0) {
			for (size_t k = 0; k < d.n; k++)
				fprintf(stderr, "%s\n", d.items[k].text);
			berth_diags_free(&d);
			berth_mcp_free(m);
			return NULL;
		}
		m->n_apps++;
		const char *name = berth_app_manifest(a->app)->name;
		if (o->app_names != NULL && o->app_names[i] != NULL && strcmp(o->app_names[i], name) != 0) {
			berth_usage_err(err, "--app %s: `%s` holds the app `%s`", o->app_names[i], a->dir,
					name);
			berth_mcp_free(m);
			return NULL;
		}
		for (size_t k = 0; k + 1 < m->n_apps; k++)
			if (strcmp(berth_app_manifest(m->apps[k].app)->name, name) == 0) {
				berth_usage_err(err, "the app `%s` is given twice", name);
				berth_mcp_free(m);
				return NULL;
			}
		if (o->runtime != NULL && o->runtime->check(berth_app_policy_of(a->app), NULL, err) < 0) {
			berth_err_wrap(err, "the app `%s`", name);
			berth_mcp_free(m);
			return NULL;
		}
		a->tools = berth_mcpi_tool_names_of(m, a);
		a->icons = berth_mcpi_app_icons(a->dir);
		berth_mcpi_dev_attach(m, a);
		if (o->warm && a->dev_fd < 0 && berth_app_boot(a->app, NULL, err) < 0) {
			berth_mcp_free(m);
			return NULL;
		}
	}
	for (size_t i = 0; i < o->n_only; i++)
		if (berth_mcpi_find_tool(m, o->only[i], &(const char *){NULL}) == NULL) {
			/* find_tool matches tool names; an export name counts too */
			bool found = false;
			for (size_t k = 0; k < m->n_apps && !found; k++) {
				const struct berth_manifest *man = berth_app_manifest(m->apps[k].app);
				for (size_t e = 0; e < man->n_exports; e++)
					found |= strcmp(man->exports[e].name, o->only[i]) == 0;
			}
			if (!found) {
				berth_usage_err(err, "--only: no export or tool `%s`", o->only[i]);
				berth_mcp_free(m);
				return NULL;
			}
		}
	return m;
}

void berth_mcp_free(struct berth_mcp *m)
{
	if (m == NULL)
		return;
	for (size_t i = 0; i < m->n_pend; i++)
		json_decref(m->pend[i].req_id);
	free(m->pend);
	berth_mcpi_tasks_free(m);
	berth_outq_free(&m->out);
	for (size_t i = 0; i < m->n_apps; i++) {
		struct mcp_app *a = &m->apps[i];
		if (a->dev_fd >= 0) {
			close(a->dev_fd);
			berth_lines_free(&a->dev_in);
		}
		berth_outq_free(&a->dev_out);
		json_decref(a->tools);
		json_decref(a->icons);
		berth_app_close(a->app);
	}
	free(m);
}

int berth_mcp_run(struct berth_mcp *m, int in_fd, struct berth_error *err)
{
	return berth_mcpi_loop(m, in_fd, NULL, err);
}

const char *const *berth_mcpi_versions(void)
{
	static const char *const v[] = {BERTH_MCP_STATELESS, "2025-11-25", "2025-06-18",
					"2025-03-26",        "2024-11-05", NULL};
	return v;
}

void berth_mcpi_end_session(struct berth_mcp *m)
{
	for (size_t i = 0; i < m->n_pend; i++)
		if (!m->pend[i].via_dev)
			berth_app_cancel(m->pend[i].app->app, m->pend[i].call_id);
	while (m->n_pend > 0)
		berth_mcpi_pend_remove(m, m->n_pend - 1);
	berth_mcpi_tasks_free(m);
	m->initialized = false;
	m->modern = false;
	m->client_elicit_url = false;
	m->min_level = 1;
	snprintf(m->version, sizeof m->version, "%s", BERTH_MCP_LATEST);
}

int berth_mcpi_loop(struct berth_mcp *m, int in_fd, const struct berth_mcpi_transport *t,
		    struct berth_error *err)
{
	struct berth_lines in;
	sigset_t set, old;
	cleanup_close int sfd = -1;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGPIPE);
	sigprocmask(SIG_BLOCK, &set, &old);
	sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0 || berth_lines_init(&in, BERTH_MCP_MAX_LINE) < 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		return berth_err(err, errno, "cannot set up the server loop");
	}
	/* No O_NONBLOCK on the client's descriptor: it may be shared with our
	 * stdout (a socket, a tty) and with whoever started us; poll(2) says
	 * when one read(2) will not block. */
	for (;;) {
		struct pollfd p[3 + BERTH_MCP_MAX_APPS * 4 + BERTH_MCPI_TRANSPORT_FDS];
		size_t np = 0;
		long long soonest = -1;

		/* Backpressure: while much output waits, read no new requests. */
		p[np++] = (struct pollfd){in.eof || m->out.len > 16 * 1024 * 1024 ? -1 : in_fd, POLLIN, 0};
		p[np++] = (struct pollfd){sfd, POLLIN, 0};
		for (size_t i = 0; i < m->n_apps; i++) {
			struct mcp_app *a = &m->apps[i];
			berth_app_poll_fds(a->app, &p[np]);
			np += 3;
			p[np++] =
			    (struct pollfd){a->dev_fd, (short)(POLLIN | (a->dev_out.len ? POLLOUT : 0)), 0};
			long long d = berth_app_next_deadline(a->app);
			if (d >= 0 && (soonest < 0 || d < soonest))
				soonest = d;
		}
		for (size_t i = 0; i < m->n_pend; i++)
			if (m->pend[i].via_dev && (soonest < 0 || m->pend[i].deadline < soonest))
				soonest = m->pend[i].deadline;
		size_t out_idx = np;
		p[np++] = (struct pollfd){m->out.len > 0 ? STDOUT_FILENO : -1, POLLOUT, 0};
		size_t t_idx = np, nt = 0;
		if (t != NULL) {
			nt = t->fds(t->ctx, &p[np], BERTH_MCPI_TRANSPORT_FDS, &soonest);
			np += nt;
		}
		if (in.eof)
			break;
		long long left = soonest < 0 ? -1 : soonest - berth_now_ms();
		if (poll(p, np,
			 left < 0       ? (soonest < 0 ? -1 : 0)
			 : left > 60000 ? 60000
					: (int)left) < 0 &&
		    errno != EINTR)
			break;
		if (p[out_idx].revents & (POLLOUT | POLLERR | POLLHUP))
			flush_out(m, 0);
		if (p[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			(void)!read(sfd, &si, sizeof si);
			if (si.ssi_signo != SIGPIPE) {
				fprintf(stderr, "berth: mcp: signal %d: stopping\n", (int)si.ssi_signo);
				break;
			}
		}
		if (t != NULL)
			t->ready(t->ctx, &p[t_idx], nt);
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			char *line;
			size_t len;
			int r;
			long n = berth_lines_fill(&in, in_fd);
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				in.eof = true;
			while ((r = berth_lines_next(&in, &line, &len)) != 0) {
				if (r == 2) {
					reply_error(m, NULL, BERTH_RPC_INVALID_REQUEST, NULL,
						    "message over %d bytes, dropped", BERTH_MCP_MAX_LINE);
					continue;
				}
				if (len > 0 && line[len - 1] == '\r')
					line[--len] = '\0';
				if (len > 0)
					berth_mcp_handle(m, line, len);
			}
		}
		for (size_t i = 0; i < m->n_apps; i++) {
			struct mcp_app *a = &m->apps[i];
			struct pollfd *q = &p[2 + i * 4];
			struct done_ctx dc = {m, a};
			if ((q[0].revents | q[1].revents | q[2].revents) &
			    (POLLIN | POLLOUT | POLLHUP | POLLERR))
				berth_app_process(a->app, berth_mcpi_local_done, &dc);
			berth_app_expire(a->app, berth_mcpi_local_done, &dc);
			if (a->dev_fd >= 0 && (q[3].revents & POLLOUT))
				berth_mcpi_dev_send(m, a, NULL);
			if (a->dev_fd >= 0 && (q[3].revents & (POLLIN | POLLHUP | POLLERR)))
				berth_mcpi_dev_input(m, a);
		}
		long long now = berth_now_ms();
		for (size_t i = 0; i < m->n_pend;) {
			if (m->pend[i].via_dev && m->pend[i].deadline <= now) {
				json_t *req_id = json_incref(m->pend[i].req_id);
				berth_mcpi_pend_remove(m, i);
				berth_mcpi_finish_error(m, req_id, BERTH_RPC_TIMEOUT,
							"berth dev did not answer in time", NULL, NULL);
				json_decref(req_id);
			} else {
				i++;
			}
		}
		flush_out(m, 0); /* what stdout takes now, without waiting */
	}
	/* Answers already due go out (for a while), then nothing of ours may
	 * outlive the client. */
	flush_out(m, 2000);
	/* The client is gone: nothing of ours may outlive it. */
	for (size_t i = 0; i < m->n_apps; i++)
		berth_app_stop(m->apps[i].app);
	berth_lines_free(&in);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return 0;
}
