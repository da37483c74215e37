/* SPDX-License-Identifier: MIT */
/*
 * mcp_dev.c - `berth mcp` through a running `berth dev`: an app whose
 * directory a `berth dev` of this user serves is called through that dev's
 * control socket (dev.h), its reloads heard and the client told when the
 * tools changed; when the dev goes away, or serves the app from another
 * directory, the calls it owed fail or run here.
 */
#include "mcp_int.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "dev.h"

/* Leave berth dev.  Calls it owed fail, or with @rerun (it never ran them:
 * it serves another directory) run here instead. */
static void dev_detach(struct berth_mcp *m, struct mcp_app *a, const char *why, bool rerun)
{
	if (a->dev_fd < 0)
		return;
	close(a->dev_fd);
	a->dev_fd = -1;
	berth_lines_free(&a->dev_in);
	berth_outq_free(&a->dev_out);
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
			berth_mcpi_pend_remove(m, i);
			berth_mcpi_finish_error(m, req_id, ce.code, ce.message, ce.data, ce.denial);
			berth_call_error_free(&ce);
			json_decref(req_id);
			continue;
		}
		json_t *req_id = json_incref(q->req_id);
		berth_mcpi_pend_remove(m, i);
		berth_mcpi_finish_error(m, req_id, BERTH_RPC_CRASHED, "berth dev went away during the call",
					NULL, NULL);
		json_decref(req_id);
	}
}

/* Queue @msg (NULL: nothing new) for berth dev and write what it takes. */
void berth_mcpi_dev_send(struct berth_mcp *m, struct mcp_app *a, json_t *msg)
{
	cleanup_free char *s = msg != NULL ? json_dumps(msg, JSON_COMPACT) : NULL;
	size_t len = s != NULL ? strlen(s) : 0;

	json_decref(msg);
	if (msg != NULL && s == NULL)
		return;
	if (s != NULL && berth_outq_put_line(&a->dev_out, s, len) < 0) {
		dev_detach(m, a, "out of memory", false);
		return;
	}
	/* what it does not take now waits for POLLOUT; a connection that broke
	 * shows as POLLHUP (berth_mcpi_dev_input) */
	(void)berth_outq_send(&a->dev_out, a->dev_fd);
}

/* Attach to a running berth dev serving this very app directory. */
void berth_mcpi_dev_attach(struct berth_mcp *m, struct mcp_app *a)
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
	berth_mcpi_dev_send(m, a, json_pack("{s:s, s:i, s:s}", "jsonrpc", "2.0", "id", 0, "method", "watch"));
	fprintf(stderr, "berth: mcp: `%s` is served by a running `berth dev` (%s)\n", name, path);
}

/* Re-read the app's manifest after berth dev reloaded it; tell the client
 * when its tools changed. */
static void dev_changed(struct berth_mcp *m, struct mcp_app *a)
{
	struct berth_app_opts ao = {.force_off = m->o.force_off,
				    .log = berth_mcpi_app_log,
				    .log_ctx = m,
				    .audit = true,
				    .actor = m->actor};
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
	after = berth_mcpi_tool_names_of(m, a);
	a->tools = after;
	if (!json_equal(before, after))
		berth_mcpi_notify(m, "notifications/tools/list_changed", NULL);
	json_decref(before);
}

void berth_mcpi_dev_input(struct berth_mcp *m, struct mcp_app *a)
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
			ssize_t i = berth_mcpi_find_pending(m, a, true, json_integer_value(jid));
			json_t *e = json_object_get(msg, "error"), *res = json_object_get(msg, "result");
			if (json_integer_value(json_object_get(e, "code")) == BERTH_DEV_OTHER_DIR) {
				/* A dev for another directory: retry here, locally. */
				json_decref(msg);
				dev_detach(m, a, "it serves the app from another directory", true);
				return;
			}
			if (i >= 0) {
				json_t *req_id = json_incref(m->pend[i].req_id);
				const json_t *schema = berth_mcpi_output_schema(a, m->pend[i].export);
				berth_mcpi_pend_remove(m, (size_t)i);
				if (json_is_object(json_object_get(res, "output"))) {
					berth_mcpi_finish_ok(m, req_id, schema,
							     json_object_get(res, "output"));
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
					berth_mcpi_finish_error(
					    m, req_id, (int)json_integer_value(json_object_get(e, "code")),
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
