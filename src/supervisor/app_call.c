/* SPDX-License-Identifier: MIT */
/*
 * app_call.c - calls into a resident app (app.c): the input checked against the
 * schema, the async calls in flight (sent, timed out, cancelled, answered), and
 * the synchronous call over them.
 */

#include <string.h>

#include "../manifest/schema.h"
#include "../util/cleanup.h"
#include "../util/text.h"

#include "app_int.h"

/* ---------------------------------------------------------- calls */

static int schema_fail(struct berth_call_error *ce, int code, const char *what, const char *path,
		       const char *reason)
{
	return berth_ap_call_fail(ce, code, json_pack("{s:s, s:s}", "path", path, "reason", reason),
				  "%s: %s: %s", what, path, reason);
}

int berth_app_check_input(const struct berth_app *a, const char *name, json_t *input,
			  struct berth_call_error *ce)
{
	const struct berth_export *ex = berth_ap_find_export(&a->m, name);
	char path[512], reason[512];
	json_t *empty = NULL;
	int r = 0;

	memset(ce, 0, sizeof *ce);
	if (ex == NULL) {
		ce->refused_input = true;
		return berth_ap_call_fail(ce, BERTH_RPC_METHOD_NOT_FOUND, NULL,
					  "the app `%s` has no export `%s`", a->m.name, name);
	}
	if (input == NULL)
		input = empty = json_object();
	if (berth_schema_validate(ex->input, input, path, sizeof path, reason, sizeof reason) < 0)
		r = schema_fail(ce, BERTH_RPC_INVALID_PARAMS, "invalid input", path, reason);
	json_decref(empty);
	ce->refused_input = r < 0;
	return r;
}

/* ---------------------------------------------------------- async calls */

void berth_ap_pend_remove(struct berth_app *a, size_t i)
{
	free(a->pend[i].line);
	json_decref(a->pend[i].input);
	memmove(&a->pend[i], &a->pend[i + 1], (a->n_pend - i - 1) * sizeof *a->pend);
	a->n_pend--;
}

static size_t inflight(const struct berth_app *a)
{
	size_t n = 0;

	for (size_t i = 0; i < a->n_pend; i++)
		n += a->pend[i].sent;
	return n;
}

/* Move waiting requests to the channel while fewer than the bound are in
 * flight, and write what the socket takes without blocking. */
static void flush(struct berth_app *a)
{
	size_t n = inflight(a);
	bool held = false;

	/* While a cancelled call is still in the app, nothing new is sent: a
	 * sequential app would serve it only after the abandoned work, and if
	 * that work hangs, its deadline restarts the app and the waiting calls
	 * go to the new one. */
	for (size_t i = 0; i < a->n_pend; i++)
		held |= a->pend[i].sent && a->pend[i].cancelled;
	for (size_t i = 0; !held && i < a->n_pend && n < BERTH_APP_MAX_INFLIGHT; i++) {
		struct pending *q = &a->pend[i];
		if (q->sent)
			continue;
		if (berth_outq_put(&a->out, q->line, q->len) < 0)
			break;
		free(q->line);
		q->line = NULL;
		q->sent = true;
		n++;
	}
	/* A peer gone is seen by the reader (POLLHUP, EOF), not here. */
	if (a->rpc >= 0)
		(void)berth_outq_send(&a->out, a->rpc);
}

/* Fail the pending calls the app had received (@all: also those still
 * waiting) with @code: the app is gone or was stopped. */
static void fail_calls(struct berth_app *a, bool all, int code, json_t *data, const char *why,
		       berth_app_done_fn done, void *ctx)
{
	(void)done;
	(void)ctx;
	for (size_t i = 0; i < a->n_pend;) {
		struct berth_call_error ce = {0};
		bool report = !a->pend[i].cancelled;
		const char *name = a->pend[i].ex->name;
		if (!all && !a->pend[i].sent) {
			i++;
			continue;
		}
		berth_ap_call_fail(&ce, code, json_incref(data),
				   "%s during the call to `%s`; the next call boots it again", why, name);
		berth_ap_finish(a, &a->pend[i], NULL, &ce, report);
		berth_call_error_free(&ce);
		berth_ap_pend_remove(a, i);
	}
	a->out.len = 0;
}

/* The app was stopped with calls still waiting to be sent: they go to a
 * fresh sandbox (or fail, if it does not boot). */
static void restart_for_queue(struct berth_app *a, berth_app_done_fn done, void *ctx)
{
	struct berth_error err = {0};
	char why[1200];

	if (a->n_pend == 0)
		return;
	if (berth_app_boot(a, NULL, &err) < 0) {
		snprintf(why, sizeof why, "the app `%s` could not be restarted: %s", a->m.name, err.msg);
		fail_calls(a, true, a->audit_refused ? BERTH_RPC_AUDIT : BERTH_RPC_CRASHED, NULL, why, done,
			   ctx);
		return;
	}
	/* The waiting calls go to this run: on its record too. */
	for (size_t i = 0; i < a->n_pend; i++) {
		struct berth_error aerr = {0};
		a->pend[i].recorded = false;
		if (berth_ap_record_call(a, &a->pend[i], &aerr) < 0)
			break; /* their results fail with the trail (finish) */
	}
	flush(a);
}

/* Boot the app for a call; a failure is the call's: -32005 when the audit
 * trail refused the run, else -32002. */
static int boot_for_call(struct berth_app *a, struct berth_call_error *ce)
{
	struct berth_error err = {0};

	if (berth_app_boot(a, NULL, &err) == 0)
		return 0;
	if (a->audit_refused)
		return berth_ap_call_fail(
		    ce, BERTH_RPC_AUDIT, NULL,
		    "the audit trail cannot record a run of the app `%s` (%s), so the call is refused "
		    "(fail closed)",
		    a->m.name, a->audit_why.msg);
	return berth_ap_call_fail(ce, BERTH_RPC_CRASHED, NULL, "%s%s%s", err.msg, err.hint[0] ? "; " : "",
				  err.hint);
}

int berth_app_start_call(struct berth_app *a, const char *name, json_t *input, unsigned timeout_ms,
			 long long *id, struct berth_call_error *ce)
{
	const struct berth_export *ex = berth_ap_find_export(&a->m, name);
	json_t *req, *empty = NULL;
	char *line;

	if (berth_app_check_input(a, name, input, ce) < 0)
		return -1;
	if (a->sb == NULL && boot_for_call(a, ce) < 0)
		return -1;
	bool no_input = input == NULL;
	if (input == NULL)
		input = empty = json_object();
	*id = ++a->next_id;
	req = json_pack("{s:s, s:I, s:s, s:O}", "jsonrpc", "2.0", "id", (json_int_t)*id, "method", name,
			"params", input);
	json_decref(empty);
	line = req != NULL ? json_dumps(req, JSON_COMPACT) : NULL;
	json_decref(req);
	if (line == NULL)
		return berth_ap_call_fail(ce, BERTH_RPC_INTERNAL, NULL, "cannot encode the request");
	size_t len = strlen(line);
	if (len + 1 > BERTH_RPC_MAX_LINE) {
		free(line);
		return berth_ap_call_fail(ce, BERTH_RPC_INVALID_REQUEST, NULL,
					  "the request is %zu bytes, over the %d-byte limit", len + 1,
					  BERTH_RPC_MAX_LINE);
	}
	if (a->n_pend == a->cap_pend) {
		size_t cap = a->cap_pend ? a->cap_pend * 2 : 16;
		struct pending *v = realloc(a->pend, cap * sizeof *v);
		if (v == NULL) {
			free(line);
			return berth_ap_call_fail(ce, BERTH_RPC_INTERNAL, NULL, "out of memory");
		}
		a->pend = v;
		a->cap_pend = cap;
	}
	char *nl = realloc(line, len + 2);
	if (nl == NULL) {
		free(line);
		return berth_ap_call_fail(ce, BERTH_RPC_INTERNAL, NULL, "out of memory");
	}
	nl[len] = '\n';
	nl[len + 1] = '\0';
	timeout_ms = timeout_ms ? timeout_ms : BERTH_APP_CALL_TIMEOUT_MS;
	struct pending *q = &a->pend[a->n_pend];
	*q = (struct pending){*id,
			      ex,
			      berth_now_ms() + timeout_ms,
			      timeout_ms,
			      nl,
			      len + 1,
			      false,
			      false,
			      no_input ? json_object() : json_incref(input),
			      false,
			      berth_now_us()};
	/* On record before the app sees it; if the trail failed and the app
	 * owes nothing, a fresh boot (a fresh log handle) gets another try. */
	struct berth_error aerr = {0};
	if (berth_ap_record_call(a, q, &aerr) < 0 && a->n_pend == 0) {
		a->stop_reason = "audit trail failed";
		berth_ap_stop_sandbox(a, true);
		if (boot_for_call(a, ce) < 0) {
			json_decref(q->input);
			free(nl);
			return -1;
		}
		aerr = (struct berth_error){0};
		berth_ap_record_call(a, q, &aerr);
	}
	if (a->o.audit && !q->recorded) {
		json_decref(q->input);
		free(nl);
		return berth_ap_call_fail(
		    ce, BERTH_RPC_AUDIT, NULL,
		    "the audit trail cannot record the call (%s), so it is refused (fail closed)", aerr.msg);
	}
	a->n_pend++;
	flush(a);
	return 0;
}

void berth_app_cancel(struct berth_app *a, long long id)
{
	for (size_t i = 0; i < a->n_pend; i++) {
		struct pending *q = &a->pend[i];
		if (q->id != id)
			continue;
		if (!q->sent) {
			berth_ap_pend_remove(a, i);
			return;
		}
		/* In flight: tell the app; its slot stays taken until it answers
		 * (the answer is dropped) or the call's deadline passes. */
		q->cancelled = true;
		char msg[128];
		int n = snprintf(
		    msg, sizeof msg,
		    "{\"jsonrpc\":\"2.0\",\"method\":\"berth/cancel\",\"params\":{\"id\":%lld}}\n", id);
		if (berth_outq_put(&a->out, msg, (size_t)n) == 0)
			flush(a);
		return;
	}
}

void berth_app_poll_fds(const struct berth_app *a, struct pollfd p[3])
{
	bool up = a->sb != NULL;

	p[0] = (struct pollfd){up ? a->rpc : -1, (short)(POLLIN | (a->out.len ? POLLOUT : 0)), 0};
	p[1] = (struct pollfd){up ? a->logfd : -1, POLLIN, 0};
	p[2] = (struct pollfd){up ? berth_rt_pidfd(a->sb) : -1, POLLIN, 0};
}

long long berth_app_next_deadline(const struct berth_app *a)
{
	long long d = -1;

	for (size_t i = 0; i < a->n_pend; i++)
		if (d < 0 || a->pend[i].deadline < d)
			d = a->pend[i].deadline;
	return d;
}

size_t berth_app_pending(const struct berth_app *a)
{
	return a->n_pend;
}

/* One answer from the app (appchan.h decides what it means): finish its
 * call. */
/*
 * The denial an app's error data reports, explained by berth against the
 * app's own policy: a filesystem one (errno_name, syscall, path) or a
 * destination the egress broker refused (errno_name EACCES, syscall
 * connect, host, port).
 */
static char *call_denial(const struct berth_app *a, json_t *data)
{
	const char *en = json_string_value(json_object_get(data, "errno_name"));
	const char *sys = json_string_value(json_object_get(data, "syscall"));
	json_t *host = json_object_get(data, "host"), *port = json_object_get(data, "port");

	if (json_is_string(host) && json_is_integer(port) && en != NULL && strcmp(en, "EACCES") == 0 &&
	    sys != NULL && strcmp(sys, "connect") == 0)
		return berth_app_net_denial(a, json_string_value(host), json_integer_value(port));
	return berth_app_denial(a, en, sys, json_string_value(json_object_get(data, "path")));
}

static void answer(struct berth_app *a, const struct berth_appmsg *m)
{
	size_t i;

	for (i = 0; i < a->n_pend; i++)
		if (a->pend[i].sent && m->id_ok && m->id == a->pend[i].id)
			break;
	if (i == a->n_pend)
		return; /* an answer to nothing we wait for */
	struct pending *q = &a->pend[i];
	struct berth_call_error ce = {0};
	json_t *res = NULL;
	if (q->cancelled) {
		berth_ap_call_fail(&ce, BERTH_RPC_CANCELLED, NULL,
				   "cancelled by the caller; the app's answer was dropped");
		berth_ap_finish(a, q, NULL, &ce, false);
	} else if (berth_appmsg_outcome(m, q->ex, &res, &ce) < 0) {
		/* The app's error data may report a denial (errno_name, syscall,
		 * path): explained against this app's mounts.  An output schema
		 * failure's data {path, reason} names none. */
		if (ce.data != NULL)
			ce.denial = call_denial(a, ce.data);
		berth_ap_finish(a, q, NULL, &ce, true);
	} else {
		berth_ap_finish(a, q, res, NULL, true);
	}
	berth_call_error_free(&ce);
	berth_ap_pend_remove(a, i);
}

/* The app ended (or closed its channel): fail what it owed, and stop it. */
static void died(struct berth_app *a, berth_app_done_fn done, void *ctx)
{
	char why[512];
	int status = -1;
	bool closed_only = false;
	struct pollfd pd = {berth_rt_pidfd(a->sb), POLLIN, 0};

	berth_ap_drain_logs(a);
	/* End of file on the channel: give a dying app a moment to be reaped. */
	if (poll(&pd, 1, 500) <= 0) {
		closed_only = true;
		berth_rt_kill(a->sb);
	}
	berth_rt_wait(a->sb, &status);
	if (closed_only)
		snprintf(why, sizeof why, "the app `%s` closed its channel and was stopped", a->m.name);
	else if (status > 128)
		snprintf(why, sizeof why, "the app `%s` was killed by signal %d (%s)", a->m.name,
			 status - 128, strsignal(status - 128));
	else
		snprintf(why, sizeof why, "the app `%s` exited with status %d", a->m.name, status);
	berth_ap_app_log(a, "warning", why);
	a->exit_status = status;
	a->stop_reason = closed_only ? "closed its channel" : status > 128 ? "killed by a signal" : "exited";
	json_t *data = closed_only    ? NULL
		       : status > 128 ? json_pack("{s:i}", "signal", status - 128)
				      : json_pack("{s:i}", "status", status);
	fail_calls(a, false, BERTH_RPC_CRASHED, data, why, done, ctx);
	json_decref(data);
	berth_ap_stop_sandbox(a, false);
	restart_for_queue(a, done, ctx);
}

void berth_app_process(struct berth_app *a, berth_app_done_fn done, void *ctx)
{
	if (a->sb == NULL)
		return;
	flush(a);
	berth_ap_drain_logs(a);
	/* A budget per wakeup: an app flooding its channel cannot starve
	 * deadlines, signals or other apps (the rest is read next time). */
	size_t budget = 4 * 1024 * 1024;
	for (;;) {
		struct berth_appmsg m;
		if (berth_ap_next_line(a, &m)) {
			if (m.kind == BERTH_APPMSG_BAD)
				berth_ap_app_log(a, "warning",
						 "the app sent a line that is not a JSON object");
			else if (m.kind == BERTH_APPMSG_ANSWER)
				answer(a, &m);
			else
				berth_ap_handle_notification(a, &m);
			berth_appmsg_free(&m);
			continue;
		}
		if (a->rin.eof || budget == 0)
			break;
		long n = berth_lines_fill(&a->rin, a->rpc);
		if (n > 0)
			budget = (size_t)n >= budget ? 0 : budget - (size_t)n;
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			a->rin.eof = true;
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
	}
	flush(a);
	struct pollfd pd = {berth_rt_pidfd(a->sb), POLLIN, 0};
	if (a->rin.eof || poll(&pd, 1, 0) > 0)
		died(a, done, ctx);
	berth_ap_deliver(a, done, ctx);
}

void berth_app_expire(struct berth_app *a, berth_app_done_fn done, void *ctx)
{
	long long now = berth_now_ms();
	char why[512];

	for (size_t i = 0; i < a->n_pend; i++) {
		struct pending *q = &a->pend[i];
		if (q->deadline > now)
			continue;
		bool report = !q->cancelled;
		unsigned t = q->timeout_ms;
		const char *name = q->ex->name;
		struct berth_call_error ce = {0};
		/* Unresponsive: stop it at once, without a grace period; fail
		 * this call and every other it owed, then stop it. */
		if (a->sb != NULL)
			berth_rt_kill(a->sb);
		berth_ap_call_fail(&ce, BERTH_RPC_TIMEOUT, NULL,
				   "the call to `%s` timed out after %u ms; the app `%s` was stopped (the "
				   "next call boots "
				   "it again)",
				   name, t, a->m.name);
		berth_ap_finish(a, q, NULL, &ce, report);
		berth_call_error_free(&ce);
		berth_ap_pend_remove(a, i);
		snprintf(why, sizeof why, "the app `%s` was stopped because another call to it timed out",
			 a->m.name);
		fail_calls(a, false, BERTH_RPC_CRASHED, NULL, why, done, ctx);
		a->stop_reason = "call timed out";
		berth_ap_stop_sandbox(a, false);
		restart_for_queue(a, done, ctx);
		berth_ap_deliver(a, done, ctx);
		return;
	}
}

/* ---------------------------------------------------------- sync calls */

struct sync_wait {
	long long id;
	bool done;
	json_t *result;
	struct berth_call_error *ce;
};

static void sync_done(void *ctx, long long id, json_t *result, const struct berth_call_error *ce)
{
	struct sync_wait *w = ctx;

	if (id != w->id)
		return;
	w->done = true;
	if (result != NULL) {
		w->result = json_incref(result);
	} else {
		*w->ce = *ce;
		w->ce->data = json_incref(ce->data);
		w->ce->denial = ce->denial != NULL ? strdup(ce->denial) : NULL;
	}
}

int berth_app_call(struct berth_app *a, const char *name, json_t *input, unsigned timeout_ms, json_t **result,
		   struct berth_call_error *ce)
{
	struct sync_wait w = {.ce = ce};

	*result = NULL;
	memset(ce, 0, sizeof *ce);
	if (berth_app_start_call(a, name, input, timeout_ms, &w.id, ce) < 0)
		return -1;
	while (!w.done) {
		struct pollfd p[3];
		long long d = berth_app_next_deadline(a), left = d < 0 ? 1000 : d - berth_now_ms();
		berth_app_poll_fds(a, p);
		if (poll(p, 3, left < 0 ? 0 : left > 1000 ? 1000 : (int)left) < 0 && errno != EINTR)
			return berth_ap_call_fail(ce, BERTH_RPC_INTERNAL, NULL, "poll: %s", strerror(errno));
		berth_app_process(a, sync_done, &w);
		if (!w.done)
			berth_app_expire(a, sync_done, &w);
	}
	*result = w.result;
	return w.result != NULL ? 0 : -1;
}
