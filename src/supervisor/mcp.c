/* SPDX-License-Identifier: MIT */

#include "mcp.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/text.h"
#include "app.h"
#include "dev.h"
#include "lines.h"

#ifndef BERTH_VERSION
#define BERTH_VERSION "0.0.0"
#endif

/* Revisions this server speaks, newest first. */
static const char *const versions[] = {"2025-06-18", "2025-03-26", "2024-11-05"};

/* RFC 5424 severities, as MCP's logging/setLevel names them, lowest first. */
static const char *const levels[] = {"debug", "info",	  "notice", "warning",
				     "error", "critical", "alert",  "emergency"};

struct mcp_app {
	char dir[PATH_MAX];
	struct berth_app *app; /* manifest, policy, and the sandbox when booted locally */
	/* A running `berth dev` for this app directory, when attached. */
	int dev_fd;
	struct berth_lines dev_in;
	char *dev_out;
	size_t dev_olen, dev_ocap;
	long long dev_next_id;
	json_t *tools; /* names of this app's tools as last listed (for list_changed) */
};

struct pending {
	json_t *req_id;	    /* the client's request id */
	const char *export; /* dev calls: kept to re-run the call here */
	json_t *args;	    /* dev calls: the arguments (owned), or NULL */
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
	char actor[64];	  /* "mcp:uid:N": who runs the apps (docs/audit.md) */
	char caller[160]; /* "mcp:client:NAME" from initialize: who calls */
	char version[16];
	int min_level;
	struct pending *pend;
	size_t n_pend, cap_pend;
	char *obuf; /* protocol output not written yet (stdout) */
	size_t olen, ocap;
	long long log_second; /* notifications/message rate limit */
	unsigned log_sent;
	unsigned long long log_dropped;
};

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ---------------------------------------------------------- output */

static void emit(struct berth_mcp *m, json_t *msg)
{
	char *s = msg != NULL ? json_dumps(msg, JSON_COMPACT) : NULL;
	size_t len;

	json_decref(msg);
	if (s == NULL)
		return;
	len = strlen(s);
	s[len] = '\n'; /* json_dumps leaves room: we own the terminating byte */
	if (m->o.write != NULL) {
		m->o.write(m->o.write_ctx, s, len + 1);
		free(s);
		return;
	}
	/* Queued, and written by the loop when stdout takes it: a client that
	 * stops reading must not stall deadlines and signals. */
	if (m->olen + len + 1 > m->ocap) {
		size_t cap = m->ocap ? m->ocap : 65536;
		while (cap < m->olen + len + 1)
			cap *= 2;
		char *b = realloc(m->obuf, cap);
		if (b == NULL) {
			free(s);
			return;
		}
		m->obuf = b;
		m->ocap = cap;
	}
	memcpy(m->obuf + m->olen, s, len + 1);
	m->olen += len + 1;
	free(s);
}

/* Write what stdout takes now: after poll(2) said POLLOUT, at most PIPE_BUF
 * bytes at a time never block on a pipe (pipe(7)); with @wait_ms > 0, keep
 * going until the queue is empty or that time has passed. */
static void flush_out(struct berth_mcp *m, int wait_ms)
{
	long long deadline = now_ms() + wait_ms;

	while (m->olen > 0) {
		struct pollfd p = {STDOUT_FILENO, POLLOUT, 0};
		long long left = deadline - now_ms();
		if (poll(&p, 1, left > 0 ? (int)left : 0) <= 0 || !(p.revents & POLLOUT)) {
			if (p.revents & (POLLERR | POLLHUP | POLLNVAL))
				m->olen = 0; /* the client is gone */
			return;
		}
		ssize_t w = write(STDOUT_FILENO, m->obuf, m->olen < PIPE_BUF ? m->olen : PIPE_BUF);
		if (w < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (w <= 0) {
			m->olen = 0;
			return;
		}
		memmove(m->obuf, m->obuf + w, m->olen - (size_t)w);
		m->olen -= (size_t)w;
	}
}

static void reply(struct berth_mcp *m, json_t *id, json_t *result)
{
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

static void notify(struct berth_mcp *m, const char *method, json_t *params)
{
	if (!m->initialized) {
		json_decref(params);
		return;
	}
	emit(m, json_pack("{s:s, s:s, s:o*}", "jsonrpc", "2.0", "method", method, "params", params));
}

/* ---------------------------------------------------------- tools */

static bool structured(const struct berth_mcp *m)
{
	return strcmp(m->version, "2025-06-18") >= 0;
}

static void tool_name(const struct berth_mcp *m, const struct mcp_app *a, const char *export, char *buf,
		      size_t len)
{
	if (m->n_apps > 1)
		snprintf(buf, len, "%s__%s", berth_app_manifest(a->app)->name, export);
	else
		snprintf(buf, len, "%s", export);
}

static bool served(const struct berth_mcp *m, const char *tool, const char *export)
{
	if (m->o.n_only == 0)
		return true;
	for (size_t i = 0; i < m->o.n_only; i++)
		if (strcmp(m->o.only[i], tool) == 0 || strcmp(m->o.only[i], export) == 0)
			return true;
	return false;
}

/* Every tool, in order: app by app, export by export. */
static json_t *all_tools(const struct berth_mcp *m)
{
	json_t *v = json_array();

	for (size_t i = 0; i < m->n_apps; i++) {
		const struct berth_manifest *man = berth_app_manifest(m->apps[i].app);
		for (size_t k = 0; k < man->n_exports; k++) {
			const struct berth_export *ex = &man->exports[k];
			char name[256];
			tool_name(m, &m->apps[i], ex->name, name, sizeof name);
			if (!served(m, name, ex->name))
				continue;
			json_t *t = json_pack("{s:s, s:s, s:O}", "name", name, "description", ex->description,
					      "inputSchema", ex->input);
			if (t != NULL && structured(m))
				json_object_set(t, "outputSchema", ex->output);
			json_array_append_new(v, t);
		}
	}
	return v;
}

/* The app and export of tool @name, or NULL. */
static struct mcp_app *find_tool(struct berth_mcp *m, const char *name, const char **export)
{
	for (size_t i = 0; i < m->n_apps; i++) {
		const struct berth_manifest *man = berth_app_manifest(m->apps[i].app);
		for (size_t k = 0; k < man->n_exports; k++) {
			char tn[256];
			tool_name(m, &m->apps[i], man->exports[k].name, tn, sizeof tn);
			if (strcmp(tn, name) == 0 && served(m, tn, man->exports[k].name)) {
				*export = man->exports[k].name;
				return &m->apps[i];
			}
		}
	}
	return NULL;
}

static json_t *tool_names_of(const struct berth_mcp *m, const struct mcp_app *a)
{
	json_t *v = json_array();
	const struct berth_manifest *man = berth_app_manifest(a->app);

	for (size_t k = 0; k < man->n_exports; k++) {
		json_t *e = json_pack("{s:s, s:s, s:O, s:O}", "name", man->exports[k].name, "description",
				      man->exports[k].description, "input", man->exports[k].input, "output",
				      man->exports[k].output);
		json_array_append_new(v, e);
	}
	(void)m;
	return v;
}

/* ---------------------------------------------------------- results */

static json_t *text_block(const char *text)
{
	return json_pack("{s:s, s:s}", "type", "text", "text", text);
}

static void finish_ok(struct berth_mcp *m, json_t *req_id, json_t *output)
{
	char *text = json_dumps(output, JSON_COMPACT);
	json_t *r =
	    json_pack("{s:[o], s:b}", "content", text_block(text != NULL ? text : "{}"), "isError", false);

	free(text);
	if (r != NULL && structured(m))
		json_object_set(r, "structuredContent", output);
	reply(m, req_id, r);
}

/* A failed call is a tool result with isError, so that the model sees it
 * (MCP: "tool execution errors"). */
static void finish_error(struct berth_mcp *m, json_t *req_id, int code, const char *message, json_t *data,
			 const char *denial)
{
	char *data_text = data != NULL ? json_dumps(data, JSON_COMPACT) : NULL;
	char *text = NULL;

	if (asprintf(&text, "%s (error %d)%s%s%s%s", message, code, data_text ? "\ndata: " : "",
		     data_text ? data_text : "", denial ? "\n\n" : "", denial ? denial : "") < 0)
		text = NULL;
	const char *t = text != NULL ? text : message;
	size_t cap = 3 * strlen(t) + 1;
	char *fixed = malloc(cap);
	if (fixed != NULL)
		berth_utf8_fix(fixed, cap, t); /* an app's text may be cut inside a character */
	reply(m, req_id,
	      json_pack("{s:[o], s:b}", "content", text_block(fixed != NULL ? fixed : "error"), "isError",
			true));
	free(fixed);
	free(text);
	free(data_text);
}

static ssize_t find_pending(const struct berth_mcp *m, const struct mcp_app *a, bool via_dev,
			    long long call_id)
{
	for (size_t i = 0; i < m->n_pend; i++)
		if (m->pend[i].app == a && m->pend[i].via_dev == via_dev && m->pend[i].call_id == call_id)
			return (ssize_t)i;
	return -1;
}

static void pend_remove(struct berth_mcp *m, size_t i)
{
	json_decref(m->pend[i].req_id);
	json_decref(m->pend[i].args);
	memmove(&m->pend[i], &m->pend[i + 1], (m->n_pend - i - 1) * sizeof *m->pend);
	m->n_pend--;
}

struct done_ctx {
	struct berth_mcp *m;
	struct mcp_app *a;
};

/* A local call finished (berth_app_process / berth_app_expire). */
static void local_done(void *ctx, long long id, json_t *result, const struct berth_call_error *ce)
{
	struct done_ctx *d = ctx;
	ssize_t i = find_pending(d->m, d->a, false, id);

	if (i < 0)
		return; /* cancelled */
	json_t *req_id = json_incref(d->m->pend[i].req_id);
	pend_remove(d->m, (size_t)i);
	if (result != NULL)
		finish_ok(d->m, req_id, result);
	else
		finish_error(d->m, req_id, ce->code, ce->message, ce->data, ce->denial);
	json_decref(req_id);
}

static int add_pending(struct berth_mcp *m, json_t *req_id, struct mcp_app *a, long long call_id,
		       bool via_dev, long long deadline)
{
	if (m->n_pend == m->cap_pend) {
		size_t cap = m->cap_pend ? m->cap_pend * 2 : 32;
		struct pending *v = realloc(m->pend, cap * sizeof *v);
		if (v == NULL)
			return -1;
		m->pend = v;
		m->cap_pend = cap;
	}
	m->pend[m->n_pend++] =
	    (struct pending){json_incref(req_id), NULL, NULL, a, call_id, via_dev, deadline};
	return 0;
}

static void app_log(void *ctx, const char *app, const char *level, const char *line);

/* ---------------------------------------------------------- berth dev link */

static void local_done(void *ctx, long long id, json_t *result, const struct berth_call_error *ce);
static void finish_error(struct berth_mcp *m, json_t *req_id, int code, const char *message, json_t *data,
			 const char *denial);

/* Leave berth dev.  Calls it owed fail, or with @rerun (it never ran them:
 * it serves another directory) run here instead. */
static void dev_detach(struct berth_mcp *m, struct mcp_app *a, const char *why, bool rerun)
{
	if (a->dev_fd < 0)
		return;
	close(a->dev_fd);
	a->dev_fd = -1;
	berth_lines_free(&a->dev_in);
	free(a->dev_out);
	a->dev_out = NULL;
	a->dev_olen = a->dev_ocap = 0;
	fprintf(stderr, "berth: mcp: left `berth dev` for `%s`: %s\n", berth_app_manifest(a->app)->name, why);
	/* The next calls boot the app here. */
	for (size_t i = 0; i < m->n_pend;) {
		struct pending *q = &m->pend[i];
		if (q->app != a || !q->via_dev) {
			i++;
			continue;
		}
		if (rerun) {
			struct berth_call_error ce = {0};
			long long cid;
			if (berth_app_start_call(a->app, q->export, q->args, m->o.timeout_ms, &cid, &ce) ==
			    0) {
				/* The same client request, now a local call. */
				q->via_dev = false;
				q->call_id = cid;
				json_decref(q->args);
				q->args = NULL;
				i++;
				continue;
			}
			json_t *req_id = json_incref(q->req_id);
			pend_remove(m, i);
			finish_error(m, req_id, ce.code, ce.message, ce.data, ce.denial);
			berth_call_error_free(&ce);
			json_decref(req_id);
			continue;
		}
		json_t *req_id = json_incref(q->req_id);
		pend_remove(m, i);
		finish_error(m, req_id, BERTH_RPC_CRASHED, "berth dev went away during the call", NULL, NULL);
		json_decref(req_id);
	}
}

/* Queue @msg (NULL: nothing new) for berth dev and write what it takes. */
static void dev_send(struct berth_mcp *m, struct mcp_app *a, json_t *msg)
{
	char *s = msg != NULL ? json_dumps(msg, JSON_COMPACT) : NULL;
	size_t len = s != NULL ? strlen(s) : 0;

	json_decref(msg);
	if (msg != NULL && s == NULL)
		return;
	if (s != NULL && a->dev_olen + len + 1 > a->dev_ocap) {
		size_t cap = a->dev_ocap ? a->dev_ocap : 65536;
		while (cap < a->dev_olen + len + 1)
			cap *= 2;
		char *b = realloc(a->dev_out, cap);
		if (b == NULL) {
			free(s);
			dev_detach(m, a, "out of memory", false);
			return;
		}
		a->dev_out = b;
		a->dev_ocap = cap;
	}
	if (s != NULL) {
		memcpy(a->dev_out + a->dev_olen, s, len);
		a->dev_out[a->dev_olen + len] = '\n';
		a->dev_olen += len + 1;
		free(s);
	}
	while (a->dev_olen > 0) {
		ssize_t w = send(a->dev_fd, a->dev_out, a->dev_olen, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w <= 0)
			break;
		memmove(a->dev_out, a->dev_out + w, a->dev_olen - (size_t)w);
		a->dev_olen -= (size_t)w;
	}
}

/* Attach to a running berth dev serving this very app directory. */
static void dev_attach(struct berth_mcp *m, struct mcp_app *a)
{
	char path[PATH_MAX];
	struct berth_error err = {0};
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	const char *name = berth_app_manifest(a->app)->name;
	int fd;

	a->dev_fd = -1;
	if (m->o.no_dev || berth_dev_socket_path(name, false, path, sizeof path, &err) < 0)
		return;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	struct ucred cred;
	socklen_t cl = sizeof cred;
	/* Only a berth dev of this very user (see berth_dev_socket_path). */
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 || cred.uid != getuid()) {
		if (fd >= 0)
			close(fd);
		return;
	}
	/* Is it the same directory?  `info` does not say; a `call` names it,
	 * so ask with `watch` first and check with the first call's answer. */
	fcntl(fd, F_SETFL, O_NONBLOCK);
	if (berth_lines_init(&a->dev_in, BERTH_RPC_MAX_LINE + 65536) < 0) {
		close(fd);
		return;
	}
	a->dev_fd = fd;
	dev_send(m, a, json_pack("{s:s, s:i, s:s}", "jsonrpc", "2.0", "id", 0, "method", "watch"));
	fprintf(stderr, "berth: mcp: `%s` is served by a running `berth dev` (%s)\n", name, path);
}

/* Re-read the app's manifest after berth dev reloaded it; tell the client
 * when its tools changed. */
static void dev_changed(struct berth_mcp *m, struct mcp_app *a)
{
	struct berth_app_opts ao = {
	    .force_off = m->o.force_off, .log = app_log, .log_ctx = m, .audit = true, .actor = m->actor};
	struct berth_diags d = {0};
	struct berth_error err = {0};
	struct berth_app *fresh = NULL;

	if (berth_app_open(a->dir, &ao, &fresh, &d, &err) < 0) {
		berth_diags_free(&d);
		fprintf(stderr, "berth: mcp: `%s` changed but its manifest does not load: %s\n", a->dir,
			err.msg);
		return;
	}
	json_t *before = a->tools, *after;
	berth_app_stop(a->app); /* a local sandbox, if any, runs the old code */
	berth_app_close(a->app);
	a->app = fresh;
	if (m->caller[0])
		berth_app_set_caller(a->app, m->caller);
	after = tool_names_of(m, a);
	a->tools = after;
	if (!json_equal(before, after))
		notify(m, "notifications/tools/list_changed", NULL);
	json_decref(before);
}

static void dev_input(struct berth_mcp *m, struct mcp_app *a)
{
	char *line;
	size_t len;
	int r;
	long n = berth_lines_fill(&a->dev_in, a->dev_fd);

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		dev_detach(m, a, "it closed the connection", false);
		return;
	}
	while (a->dev_fd >= 0 && (r = berth_lines_next(&a->dev_in, &line, &len)) != 0) {
		json_t *msg = r == 1 ? json_loadb(line, len, 0, NULL) : NULL;
		const char *method = json_string_value(json_object_get(msg, "method"));
		json_t *jid = json_object_get(msg, "id");
		if (method != NULL && strcmp(method, "changed") == 0) {
			dev_changed(m, a);
		} else if (json_is_integer(jid) && json_integer_value(jid) > 0) {
			ssize_t i = find_pending(m, a, true, json_integer_value(jid));
			json_t *e = json_object_get(msg, "error"), *res = json_object_get(msg, "result");
			if (json_integer_value(json_object_get(e, "code")) == BERTH_DEV_OTHER_DIR) {
				/* A dev for another directory: retry here, locally. */
				json_decref(msg);
				dev_detach(m, a, "it serves the app from another directory", true);
				return;
			}
			if (i >= 0) {
				json_t *req_id = json_incref(m->pend[i].req_id);
				pend_remove(m, (size_t)i);
				if (json_is_object(json_object_get(res, "output"))) {
					finish_ok(m, req_id, json_object_get(res, "output"));
				} else {
					json_t *data = json_deep_copy(json_object_get(e, "data"));
					const char *denial =
					    json_string_value(json_object_get(data, "denial"));
					char *dcopy = denial != NULL ? strdup(denial) : NULL;
					json_object_del(data, "denial");
					if (json_object_size(data) == 0) {
						json_decref(data);
						data = NULL;
					}
					finish_error(m, req_id,
						     (int)json_integer_value(json_object_get(e, "code")),
						     json_string_value(json_object_get(e, "message"))
							 ? json_string_value(json_object_get(e, "message"))
							 : "error",
						     data, dcopy);
					free(dcopy);
					json_decref(data);
				}
				json_decref(req_id);
			}
		}
		json_decref(msg);
	}
	if (a->dev_fd >= 0 && a->dev_in.eof)
		dev_detach(m, a, "it closed the connection", false);
}

/* ---------------------------------------------------------- methods */

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
	{
		/* The client names itself (clientInfo.name): the actor of its
		 * calls in the audit trail.  Its word, not proof: the uid is
		 * in run.start's actor. */
		const char *cn =
		    json_string_value(json_object_get(json_object_get(params, "clientInfo"), "name"));
		snprintf(m->caller, sizeof m->caller, "mcp:client:%.100s",
			 cn != NULL && cn[0] ? cn : "unnamed");
		for (size_t i = 0; i < m->n_apps; i++)
			berth_app_set_caller(m->apps[i].app, m->caller);
	}
	reply(
	    m, id,
	    json_pack(
		"{s:s, s:{s:{s:b}, s:{}}, s:{s:s, s:s}, s:s}", "protocolVersion", m->version, "capabilities",
		"tools", "listChanged", true, "logging", "serverInfo", "name", "berth", "version",
		BERTH_VERSION, "instructions",
		"Each tool is an export of a resident app that runs in its own kernel-enforced sandbox "
		"(berth). "
		"A failed call returns isError with the reason; a capability denial says what refused it."));
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
	json_t *all = all_tools(m), *pagev = json_array();
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
	if (start + page < n) {
		char next[32];
		snprintf(next, sizeof next, "tools:%lu", start + page);
		json_object_set_new(r, "nextCursor", json_string(next));
	}
	json_decref(all);
	reply(m, id, r);
}

static void on_tools_call(struct berth_mcp *m, json_t *id, json_t *params)
{
	const char *name = json_string_value(json_object_get(params, "name")), *export = NULL;
	json_t *args = json_object_get(params, "arguments");
	struct berth_call_error ce = {0};
	struct mcp_app *a;
	long long call_id;

	if (name == NULL) {
		reply_error(m, id, BERTH_RPC_INVALID_PARAMS, NULL, "tools/call needs params.name");
		return;
	}
	a = find_tool(m, name, &export);
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
	/* Rejected against the schema before the app sees them. */
	/* Bounded: beyond this, the client must wait for answers first. */
	if (m->n_pend >= BERTH_MCP_MAX_PENDING) {
		finish_error(m, id, BERTH_RPC_APP_ERROR,
			     "too many calls in progress; wait for some to finish", NULL, NULL);
		return;
	}
	if (berth_app_check_input(a->app, export, args, &ce) < 0) {
		reply_error(m, id, BERTH_RPC_INVALID_PARAMS, json_incref(ce.data), "%s", ce.message);
		berth_call_error_free(&ce);
		return;
	}
	if (a->dev_fd >= 0) {
		long long cid = ++a->dev_next_id;
		unsigned t = m->o.timeout_ms ? m->o.timeout_ms : BERTH_APP_CALL_TIMEOUT_MS;
		if (add_pending(m, id, a, cid, true, now_ms() + t + 5000) < 0) {
			reply_error(m, id, BERTH_RPC_INTERNAL, NULL, "out of memory");
			return;
		}
		m->pend[m->n_pend - 1].export = export;
		m->pend[m->n_pend - 1].args = args != NULL ? json_incref(args) : NULL;
		dev_send(m, a,
			 json_pack("{s:s, s:I, s:s, s:{s:s, s:O*, s:i, s:s}}", "jsonrpc", "2.0", "id",
				   (json_int_t)cid, "method", "call", "params", "export", export, "input",
				   args, "timeout_ms", (int)t, "app_dir", berth_app_paths(a->app)->app_dir));
		return;
	}
	if (berth_app_start_call(a->app, export, args, m->o.timeout_ms, &call_id, &ce) < 0) {
		finish_error(m, id, ce.code, ce.message, ce.data, ce.denial);
		berth_call_error_free(&ce);
		return;
	}
	if (add_pending(m, id, a, call_id, false, 0) < 0) {
		berth_app_cancel(a->app, call_id);
		reply_error(m, id, BERTH_RPC_INTERNAL, NULL, "out of memory");
	}
}

static void on_set_level(struct berth_mcp *m, json_t *id, json_t *params)
{
	const char *lv = json_string_value(json_object_get(params, "level"));

	for (int i = 0; lv != NULL && i < (int)(sizeof levels / sizeof levels[0]); i++)
		if (strcmp(lv, levels[i]) == 0) {
			m->min_level = i;
			reply(m, id, json_object());
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
		pend_remove(m, i);
		return;
	}
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
		json_decref(msg); /* a response: this server sends no requests */
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
		json_decref(msg);
		return;
	}
	if (strcmp(method, "initialize") == 0)
		on_initialize(m, id, params);
	else if (strcmp(method, "ping") == 0)
		reply(m, id, json_object());
	else if (!m->initialized)
		reply_error(m, id, BERTH_RPC_INVALID_REQUEST, NULL, "not initialized: send initialize first");
	else if (strcmp(method, "tools/list") == 0)
		on_tools_list(m, id, params);
	else if (strcmp(method, "tools/call") == 0)
		on_tools_call(m, id, params);
	else if (strcmp(method, "logging/setLevel") == 0)
		on_set_level(m, id, params);
	else
		reply_error(m, id, BERTH_RPC_METHOD_NOT_FOUND, NULL, "unknown method `%s`", method);
	json_decref(msg);
}

/* ---------------------------------------------------------- life */

static void app_log(void *ctx, const char *app, const char *level, const char *line)
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
	long long sec = now_ms() / 1000;
	if (sec != m->log_second) {
		if (m->log_dropped > 0) {
			char note[128];
			snprintf(note, sizeof note, "%llu log lines dropped (more than %d a second)",
				 (unsigned long long)m->log_dropped, BERTH_MCP_LOG_RATE);
			notify(m, "notifications/message",
			       json_pack("{s:s, s:s, s:s}", "level", "warning", "logger", "berth", "data",
					 note));
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
	notify(m, "notifications/message",
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
	snprintf(m->actor, sizeof m->actor, "mcp:uid:%u", (unsigned)getuid());
	m->min_level = 1; /* info */
	snprintf(m->version, sizeof m->version, "%s", BERTH_MCP_LATEST);
	for (size_t i = 0; i < o->n_apps; i++) {
		struct mcp_app *a = &m->apps[m->n_apps];
		struct berth_app_opts ao = {.force_off = o->force_off,
					    .log = app_log,
					    .log_ctx = m,
					    .audit = true,
					    .actor = m->actor};
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
		a->tools = tool_names_of(m, a);
		dev_attach(m, a);
		if (o->warm && a->dev_fd < 0 && berth_app_boot(a->app, NULL, err) < 0) {
			berth_mcp_free(m);
			return NULL;
		}
	}
	for (size_t i = 0; i < o->n_only; i++)
		if (find_tool(m, o->only[i], &(const char *){NULL}) == NULL) {
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
	free(m->obuf);
	for (size_t i = 0; i < m->n_apps; i++) {
		struct mcp_app *a = &m->apps[i];
		if (a->dev_fd >= 0) {
			close(a->dev_fd);
			berth_lines_free(&a->dev_in);
		}
		free(a->dev_out);
		json_decref(a->tools);
		berth_app_close(a->app);
	}
	free(m);
}

int berth_mcp_run(struct berth_mcp *m, int in_fd, struct berth_error *err)
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
		struct pollfd p[3 + BERTH_MCP_MAX_APPS * 4];
		size_t np = 0;
		long long soonest = -1;

		/* Backpressure: while much output waits, read no new requests. */
		p[np++] = (struct pollfd){in.eof || m->olen > 16 * 1024 * 1024 ? -1 : in_fd, POLLIN, 0};
		p[np++] = (struct pollfd){sfd, POLLIN, 0};
		for (size_t i = 0; i < m->n_apps; i++) {
			struct mcp_app *a = &m->apps[i];
			berth_app_poll_fds(a->app, &p[np]);
			np += 3;
			p[np++] =
			    (struct pollfd){a->dev_fd, (short)(POLLIN | (a->dev_olen ? POLLOUT : 0)), 0};
			long long d = berth_app_next_deadline(a->app);
			if (d >= 0 && (soonest < 0 || d < soonest))
				soonest = d;
		}
		for (size_t i = 0; i < m->n_pend; i++)
			if (m->pend[i].via_dev && (soonest < 0 || m->pend[i].deadline < soonest))
				soonest = m->pend[i].deadline;
		size_t out_idx = np;
		p[np++] = (struct pollfd){m->olen > 0 ? STDOUT_FILENO : -1, POLLOUT, 0};
		if (in.eof)
			break;
		long long left = soonest < 0 ? -1 : soonest - now_ms();
		if (poll(p, np,
			 left < 0	? (soonest < 0 ? -1 : 0)
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
				berth_app_process(a->app, local_done, &dc);
			berth_app_expire(a->app, local_done, &dc);
			if (a->dev_fd >= 0 && (q[3].revents & POLLOUT))
				dev_send(m, a, NULL);
			if (a->dev_fd >= 0 && (q[3].revents & (POLLIN | POLLHUP | POLLERR)))
				dev_input(m, a);
		}
		long long now = now_ms();
		for (size_t i = 0; i < m->n_pend;) {
			if (m->pend[i].via_dev && m->pend[i].deadline <= now) {
				json_t *req_id = json_incref(m->pend[i].req_id);
				pend_remove(m, i);
				finish_error(m, req_id, BERTH_RPC_TIMEOUT, "berth dev did not answer in time",
					     NULL, NULL);
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
