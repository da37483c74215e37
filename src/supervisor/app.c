/* SPDX-License-Identifier: MIT */

#include "app.h"

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../audit/audit.h"
#include "../audit/exposure.h"
#include "../audit/queue.h"
#include "../manifest/schema.h"
#include "../util/cleanup.h"
#include "../util/text.h"
#include "lines.h"

struct berth_app {
	struct berth_app_opts o;
	struct berth_manifest m;
	struct berth_app_paths paths;
	struct berth_policy p;
	char digest[65];
	struct berth_runtime_opts ro;
	struct berth_sandbox *sb;
	struct berth_enforced enforced;
	int rpc;   /* berth's end of the channel, non-blocking; -1 when stopped */
	int logfd; /* read end of the app's stdout+stderr; -1 when stopped */
	struct berth_lines rin, lin;
	long long next_id;
	/* Calls not answered yet, in the order they were made.  At most
	 * BERTH_APP_MAX_INFLIGHT are sent; the rest wait in order. */
	struct pending *pend;
	size_t n_pend, cap_pend;
	/* Bytes queued for the channel (requests, cancellations). */
	char *obuf;
	size_t olen, ocap;
	/* The audit trail (docs/audit.md, "Resident apps"): one run per boot. */
	char run_id[17];
	char actor[160];	      /* who runs the app: run.start, policy, run.stop */
	char caller[160];	      /* who calls: tool.call, tool.result */
	struct berth_audit *audit;    /* this boot's handle, or NULL */
	struct berth_audit_queue *aq; /* its writer, or NULL */
	struct berth_audit_net_cap net_cap; /* this boot's net.decision records (docs/audit.md) */
	pthread_t aud_th;
	bool aud_thread; /* aud_th runs or must be joined */
	int aud_rc;	 /* run.start + policy: 0 durable, -1 not */
	struct berth_error aud_err;
	bool audit_refused;	      /* the last boot failed for the audit trail */
	struct berth_error audit_why; /* why */
	long long boot_ms;
	int exit_status; /* -1 unknown */
	const char *stop_reason;
	unsigned long calls;
	/* Calls finished and not yet reported: their tool.result records are
	 * queued; they are reported once those are durable (one group commit
	 * for all that finished in one wakeup). */
	struct completion *comp;
	size_t n_comp, cap_comp;
};

struct completion {
	long long id;
	json_t *result; /* or NULL: ce */
	struct berth_call_error ce;
	bool audit_failed; /* its record could not be written */
	struct berth_error why;
};

struct pending {
	long long id;
	const struct berth_export *ex;
	long long deadline; /* ms, CLOCK_MONOTONIC */
	unsigned timeout_ms;
	char *line; /* the request with its newline, until it is sent */
	size_t len;
	bool sent, cancelled;
	json_t *input;	 /* until its tool.call is recorded */
	bool recorded;	 /* its tool.call is queued */
	long long t0_us; /* when it was made */
};

static void pend_remove(struct berth_app *a, size_t i);

/* ---------------------------------------------------------- small helpers */

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static long long now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static void default_log(void *ctx, const char *app, const char *level, const char *line)
{
	(void)ctx;
	if (strcmp(level, "info") == 0)
		fprintf(stderr, "[%s] %s\n", app, line);
	else
		fprintf(stderr, "[%s] %s: %s\n", app, level, line);
}

static void app_log(struct berth_app *a, const char *level, const char *line)
{
	/* Everything the app says is cleaned of terminal controls here, once,
	 * for every consumer (a terminal, berth mcp's notifications). */
	static char clean[65536 * 4 + 64];
	char lv[32];

	berth_text_clean(clean, sizeof clean, line);
	berth_text_clean(lv, sizeof lv, level);
	if (a->o.log != NULL)
		a->o.log(a->o.log_ctx, a->m.name, lv, clean);
	else
		default_log(NULL, a->m.name, lv, clean);
}

void berth_call_error_free(struct berth_call_error *ce)
{
	json_decref(ce->data);
	ce->data = NULL;
	free(ce->denial);
	ce->denial = NULL;
}

static int call_fail(struct berth_call_error *ce, int code, json_t *data, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int call_fail(struct berth_call_error *ce, int code, json_t *data, const char *fmt, ...)
{
	va_list ap;

	ce->code = code;
	va_start(ap, fmt);
	vsnprintf(ce->message, sizeof ce->message, fmt, ap);
	va_end(ap);
	json_decref(ce->data);
	ce->data = data;
	return -1;
}

static const struct berth_export *find_export(const struct berth_manifest *m, const char *name)
{
	for (size_t i = 0; i < m->n_exports; i++)
		if (strcmp(m->exports[i].name, name) == 0)
			return &m->exports[i];
	return NULL;
}

/* ---------------------------------------------------------- audit trail */

/*
 * Each boot of the app is a run of the audit trail (docs/audit.md,
 * "Resident apps"): run.start and policy are durable before the app's
 * command starts, tool.call and tool.result record every call that reaches
 * the sandbox, net.decision the egress broker's decisions, run.stop its end.
 * Records go through a writer thread (src/audit/queue.h); a call's result is
 * reported only once its tool.result is durable, and the results of all
 * calls that finished in one wakeup share one group commit.
 */

static const char *app_actor(const struct berth_app *a)
{
	return a->actor[0] ? a->actor : "berth";
}

static const char *call_actor(const struct berth_app *a)
{
	return a->caller[0] ? a->caller : app_actor(a);
}

bool berth_app_audit_refused(const struct berth_app *a)
{
	return a->audit_refused;
}

void berth_app_set_caller(struct berth_app *a, const char *caller)
{
	berth_text_clean(a->caller, sizeof a->caller, caller != NULL ? caller : "");
}

/* run.start and policy, then the queue for the boot's other records. */
static int audit_begin(struct berth_app *a, struct berth_error *err)
{
	struct berth_audit_entry e[2] = {{0}};
	char pdigest[65], adigest[80], pd[80];
	char *policy_json = NULL;
	json_t *argv = json_array(), *start = NULL, *pol = NULL, *polv = NULL;
	int rc = -1;

	a->audit = berth_audit_open(NULL, err);
	if (a->audit == NULL)
		goto out;
	if (berth_audit_recovered(a->audit) != NULL)
		fprintf(stderr, "berth: audit: %s\n", berth_audit_recovered(a->audit));
	/* The manifest's `secrets` reach the app only, never the log. */
	for (size_t i = 0; i < a->p.n_env; i++)
		if (a->p.env[i].from_host && a->p.env[i].value != NULL &&
		    berth_audit_add_secret(a->audit, a->p.env[i].value, err) < 0)
			goto out;
	for (size_t i = 0; argv != NULL && i < a->p.argc; i++)
		json_array_append_new(argv, json_string(a->p.argv[i]));
	snprintf(adigest, sizeof adigest, "sha256:%s", a->digest);
	start = json_pack("{s:s, s:s, s:s, s:s, s:O, s:I, s:s}", "app", a->m.name, "version", a->m.version,
			  "app_dir", a->paths.app_dir, "app_digest", adigest, "argv", argv, "pid",
			  (json_int_t)getpid(), "berth_version", BERTH_VERSION);
	policy_json = berth_policy_to_json(&a->p, false, err);
	if (policy_json == NULL || berth_policy_digest(&a->p, pdigest, err) < 0)
		goto out;
	polv = json_loads(policy_json, 0, NULL);
	snprintf(pd, sizeof pd, "sha256:%s", pdigest);
	pol = json_pack("{s:s, s:s, s:O}", "digest", pd, "app_digest", adigest, "policy",
			polv != NULL ? polv : json_null());
	if (start == NULL || pol == NULL) {
		berth_err(err, ENOMEM, "audit: cannot build the run records");
		goto out;
	}
	e[0] = (struct berth_audit_entry){
	    .run_id = a->run_id, .kind = "run.start", .actor = app_actor(a), .payload = start};
	e[1] = (struct berth_audit_entry){
	    .run_id = a->run_id, .kind = "policy", .actor = app_actor(a), .payload = pol};
	if (berth_audit_append_batch(a->audit, e, 2, err) < 0)
		goto out;
	a->aq = berth_audit_queue_new(a->audit, a->run_id, app_actor(a), err);
	a->net_cap = (struct berth_audit_net_cap){0};
	rc = a->aq != NULL ? 0 : -1;
out:
	free(policy_json);
	json_decref(argv);
	json_decref(start);
	json_decref(pol);
	json_decref(polv);
	if (rc < 0 && a->aq == NULL) {
		/* A run.start already durable gets its run.stop from the caller. */
		if (e[0].seq == 0) {
			berth_audit_close(a->audit);
			a->audit = NULL;
		}
	}
	return rc;
}

static void *audit_main(void *arg)
{
	struct berth_app *a = arg;

	a->aud_rc = audit_begin(a, &a->aud_err);
	return NULL;
}

/* Wait for audit_begin(); 0 when run.start and policy are durable. */
static int audit_join(struct berth_app *a, struct berth_error *err)
{
	if (a->aud_thread) {
		pthread_join(a->aud_th, NULL);
		a->aud_thread = false;
	}
	if (a->aud_rc == 0)
		return 0;
	*err = a->aud_err;
	return -1;
}

/* berth_runtime_opts.before_release: the app starts only once its run is
 * on record. */
static int audit_release(void *arg, struct berth_error *err)
{
	struct berth_app *a = arg;

	if (audit_join(a, err) < 0)
		return berth_err_wrap(err,
				      "the audit trail cannot record the app's run, so it does not start "
				      "(fail closed)");
	return 0;
}

/* The egress broker's decisions, on its thread: a refusal is durable before
 * the app's client gets its 403, as for `berth run`. */
static void audit_net(const struct berth_broker_decision *d, void *arg)
{
	struct berth_app *a = arg;
	struct berth_error err = {0};

	if (a->aq == NULL || !berth_audit_net_admit(&a->net_cap, d))
		return; /* over the cap: a refusal stays a refusal, it is only not recorded one by one */
	json_t *payload = berth_audit_net_payload(d);
	if (payload == NULL)
		return;
	json_object_set_new(payload, "app", json_string(a->m.name));
	berth_audit_queue_push_as(a->aq, "broker", "net.decision", payload, d->outcome == BERTH_BROKER_REFUSED, &err);
}

/* tool.call for @q (not waited for: its tool.result is).  Returns 0, or -1
 * with @err when the trail cannot take it. */
static int record_call(struct berth_app *a, struct pending *q, struct berth_error *err)
{
	if (a->aq == NULL)
		return 0;
	json_t *payload =
	    json_pack("{s:s, s:s, s:I, s:O}", "app", a->m.name, "export", q->ex->name, "call_id",
		      (json_int_t)q->id, "input", q->input != NULL ? q->input : json_object());
	if (payload == NULL)
		return berth_err(err, ENOMEM, "audit: cannot build the tool.call record");
	if (berth_audit_queue_push_as(a->aq, call_actor(a), "tool.call", payload, false, err) < 0)
		return -1;
	q->recorded = true;
	a->calls++;
	return 0;
}

/* The tool.result payload of a finished call. */
static json_t *result_payload(const struct berth_app *a, const struct pending *q, json_t *result,
			      const struct berth_call_error *ce)
{
	json_t *p = json_pack("{s:s, s:s, s:I, s:b, s:I}", "app", a->m.name, "export", q->ex->name, "call_id",
			      (json_int_t)q->id, "ok", result != NULL, "duration_ms",
			      (json_int_t)((now_us() - q->t0_us) / 1000));

	if (p == NULL)
		return NULL;
	if (result != NULL) {
		char *out = json_dumps(result, JSON_COMPACT);
		json_object_set_new(p, "output_bytes",
				    json_integer(out != NULL ? (json_int_t)strlen(out) : -1));
		free(out);
	} else {
		json_object_set_new(p, "error",
				    json_pack("{s:i, s:s, s:O?}", "code", ce->code, "message", ce->message,
					      "data", ce->data));
		if (ce->denial != NULL)
			json_object_set_new(p, "denial", json_string(ce->denial));
	}
	return p;
}

/* A call finished: queue its tool.result (its tool.call first, if it never
 * had one), and, when @report, keep it to be reported by deliver(). */
static void finish(struct berth_app *a, struct pending *q, json_t *result, const struct berth_call_error *ce,
		   bool report)
{
	struct completion c = {.id = q->id};

	if (a->aq != NULL) {
		json_t *payload;
		if (!q->recorded && record_call(a, q, &c.why) < 0)
			c.audit_failed = true;
		else if ((payload = result_payload(a, q, result, ce)) == NULL)
			c.audit_failed =
			    berth_err(&c.why, ENOMEM, "audit: cannot build the tool.result record") < 0;
		else if (berth_audit_queue_push_as(a->aq, call_actor(a), "tool.result", payload, false,
						   &c.why) < 0)
			c.audit_failed = true;
	} else if (a->o.audit && result != NULL) {
		/* No run to put it in: cannot happen (a result comes from a
		 * booted app), but a result that is not on record is no result. */
		c.audit_failed = berth_err(&c.why, EIO, "audit: no run to record the result in") < 0;
	}
	if (!report)
		return;
	if (a->n_comp == a->cap_comp) {
		size_t cap = a->cap_comp ? a->cap_comp * 2 : 16;
		struct completion *v = realloc(a->comp, cap * sizeof *v);
		if (v == NULL)
			return; /* not reported: the caller's deadline fails it */
		a->comp = v;
		a->cap_comp = cap;
	}
	if (result != NULL) {
		c.result = json_incref(result);
	} else {
		c.ce = *ce;
		c.ce.data = json_incref(ce->data);
		c.ce.denial = ce->denial != NULL ? strdup(ce->denial) : NULL;
	}
	a->comp[a->n_comp++] = c;
}

/* Wait (once) until the queued records of the finished calls are durable;
 * if they are not, those calls fail. */
static void audit_settle(struct berth_app *a)
{
	struct berth_error err = {0};

	if (a->aq == NULL || a->n_comp == 0)
		return;
	if (berth_audit_queue_sync(a->aq, &err) == 0)
		return;
	for (size_t i = 0; i < a->n_comp; i++)
		if (!a->comp[i].audit_failed) {
			a->comp[i].audit_failed = true;
			a->comp[i].why = err;
		}
}

/* Report the finished calls, each once its record is durable. */
static void deliver(struct berth_app *a, berth_app_done_fn done, void *ctx)
{
	audit_settle(a);
	while (a->n_comp > 0) {
		struct completion *v = a->comp;
		size_t n = a->n_comp;
		a->comp = NULL;
		a->n_comp = a->cap_comp = 0;
		for (size_t i = 0; i < n; i++) {
			struct completion *c = &v[i];
			if (c->audit_failed) {
				struct berth_call_error ae = {0};
				call_fail(
				    &ae, BERTH_RPC_AUDIT, NULL,
				    "the audit trail cannot record the call's result (%s); the result is "
				    "withheld (fail closed)",
				    c->why.msg);
				done(ctx, c->id, NULL, &ae);
				berth_call_error_free(&ae);
			} else {
				done(ctx, c->id, c->result, c->result != NULL ? NULL : &c->ce);
			}
			json_decref(c->result);
			berth_call_error_free(&c->ce);
		}
		free(v);
		audit_settle(a);
	}
}

/* run.stop, then close this boot's queue and handle (all durable).  When
 * the queue failed (a full disk that has room again), run.stop is tried
 * once more directly, naming how many records were lost. */
static void audit_end(struct berth_app *a)
{
	struct berth_error err = {0};

	if (a->aq != NULL) {
		audit_settle(a);
		json_t *sum = berth_audit_net_summary(&a->net_cap); /* the broker has stopped */
		if (sum != NULL) {
			json_object_set_new(sum, "app", json_string(a->m.name));
			berth_audit_queue_push_as(a->aq, "broker", "net.decision", sum, false, &err);
		}
		json_int_t ms = (json_int_t)(now_ms() - a->boot_ms);
		const char *reason = a->stop_reason != NULL ? a->stop_reason : "stopped";
		json_t *stop =
		    json_pack("{s:s, s:s, s:o, s:I, s:I}", "app", a->m.name, "reason", reason, "status",
			      a->exit_status >= 0 ? json_integer(a->exit_status) : json_null(), "duration_ms",
			      ms, "calls", (json_int_t)a->calls);
		if (stop != NULL)
			berth_audit_queue_push(a->aq, "run.stop", json_incref(stop), false, &err);
		if (berth_audit_queue_close(a->aq, &err) < 0) {
			char buf[1400];
			json_object_set_new(stop, "records_lost", json_string(err.msg));
			struct berth_error e2 = {0};
			if (stop == NULL || berth_audit_append(a->audit, a->run_id, "run.stop", app_actor(a),
							       stop, NULL, NULL, &e2) < 0) {
				snprintf(buf, sizeof buf,
					 "the audit trail could not record the end of this run: %s", err.msg);
				app_log(a, "error", buf);
			}
		}
		json_decref(stop);
		a->aq = NULL;
	}
	berth_audit_close(a->audit);
	a->audit = NULL;
	a->stop_reason = NULL;
}

/* ---------------------------------------------------------- open */

int berth_app_open(const char *app_dir, const struct berth_app_opts *o, struct berth_app **out,
		   struct berth_diags *d, struct berth_error *err)
{
	struct berth_app *a = calloc(1, sizeof *a);

	*out = NULL;
	if (a == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	a->o = *o;
	a->rpc = a->logfd = -1;
	a->exit_status = -1;
	berth_text_clean(a->actor, sizeof a->actor, o->actor != NULL ? o->actor : "");
	berth_policy_init(&a->p);
	if (berth_manifest_load(app_dir, app_dir, &a->m, d, err) < 0 ||
	    berth_app_resolve(app_dir, &a->m, o->state_root, o->dry, &a->paths, err) < 0 ||
	    berth_app_digest(a->paths.app_dir, a->digest, err) < 0 ||
	    berth_app_policy(&a->m, &a->paths, a->digest, getenv, &a->p, err) < 0 ||
	    (!o->dry && berth_audit_exposure_check(&a->p, NULL, 0, NULL, err) < 0)) {
		berth_app_close(a);
		return -1;
	}
	a->p.allow_degraded = o->allow_degraded;
	*out = a;
	return 0;
}

const struct berth_manifest *berth_app_manifest(const struct berth_app *a)
{
	return &a->m;
}

const struct berth_app_paths *berth_app_paths(const struct berth_app *a)
{
	return &a->paths;
}

const struct berth_policy *berth_app_policy_of(const struct berth_app *a)
{
	return &a->p;
}

bool berth_app_running(const struct berth_app *a)
{
	return a->sb != NULL;
}

/* ---------------------------------------------------------- the channel */

/* Every complete log line the app wrote so far, to the log callback. */
static void drain_logs(struct berth_app *a)
{
	size_t budget = 256 * 1024; /* bytes per call: a flood cannot starve deadlines */
	char *line;
	size_t len;
	int r;

	if (a->logfd < 0)
		return;
	for (;;) {
		while ((r = berth_lines_next(&a->lin, &line, &len)) != 0)
			app_log(a, r == 1 ? "info" : "warning",
				r == 1 ? line : "(a log line over 64 KiB was dropped)");
		if (a->lin.eof || budget == 0)
			break;
		long n = berth_lines_fill(&a->lin, a->logfd);
		if (n <= 0)
			break;
		budget = (size_t)n >= budget ? 0 : budget - (size_t)n;
	}
	if (a->lin.eof) {
		/* A last line without a newline; then stop watching the pipe
		 * (a closed pipe polls readable for ever). */
		while ((r = berth_lines_next(&a->lin, &line, &len)) != 0)
			app_log(a, "info", line);
		close(a->logfd);
		a->logfd = -1;
	}
}

/* A notification from the app that is not an answer: berth/log. */
static void handle_notification(struct berth_app *a, json_t *msg)
{
	const char *method = json_string_value(json_object_get(msg, "method"));
	json_t *params = json_object_get(msg, "params");

	if (method != NULL && strcmp(method, "berth/log") == 0) {
		const char *level = json_string_value(json_object_get(params, "level"));
		const char *text = json_string_value(json_object_get(params, "message"));
		app_log(a, level != NULL ? level : "info", text != NULL ? text : "");
	} else if (method != NULL) {
		char buf[256];
		snprintf(buf, sizeof buf, "ignored an unexpected `%.120s` message from the app", method);
		app_log(a, "warning", buf);
	}
}

enum wait_result { GOT_MESSAGE, APP_DIED, TIMED_OUT, CHANNEL_BROKEN };

/*
 * Wait until the app sends one JSON-RPC message (a new reference in *msg),
 * while relaying its logs; bad lines are reported and skipped.
 */
static enum wait_result next_message(struct berth_app *a, long long deadline, json_t **msg)
{
	for (;;) {
		char *line;
		size_t len;
		int r = berth_lines_next(&a->rin, &line, &len);

		if (r == 2) {
			app_log(a, "warning", "dropped a protocol message over 1 MiB");
			continue;
		}
		if (r == 1) {
			json_error_t je;
			json_t *j = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
			if (j == NULL || !json_is_object(j)) {
				char buf[256];
				snprintf(buf, sizeof buf,
					 "the app sent a line that is not a JSON object (%.120s)", je.text);
				app_log(a, "warning", buf);
				json_decref(j);
				continue;
			}
			*msg = j;
			return GOT_MESSAGE;
		}
		if (a->rin.eof)
			return APP_DIED;
		long long left = deadline - now_ms();
		if (left <= 0)
			return TIMED_OUT;
		struct pollfd p[3] = {
		    {a->rpc, POLLIN, 0}, {a->logfd, POLLIN, 0}, {berth_sandbox_pidfd(a->sb), POLLIN, 0}};
		if (poll(p, 3, (int)(left > 60000 ? 60000 : left)) < 0 && errno != EINTR)
			return CHANNEL_BROKEN;
		if (p[1].revents & (POLLIN | POLLHUP))
			drain_logs(a);
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			long n = berth_lines_fill(&a->rin, a->rpc);
			if (n < 0 && errno != EAGAIN)
				a->rin.eof = true;
		} else if (p[2].revents & POLLIN) {
			/* Dead, and nothing more to read on the channel. */
			drain_logs(a);
			return APP_DIED;
		}
	}
}

/* ---------------------------------------------------------- boot, stop */

static void close_channel(struct berth_app *a)
{
	if (a->rpc >= 0)
		close(a->rpc);
	a->rpc = -1;
	if (a->logfd >= 0)
		drain_logs(a);
	if (a->logfd >= 0)
		close(a->logfd);
	a->logfd = -1;
	berth_lines_free(&a->rin);
	berth_lines_free(&a->lin);
}

/* Stop the sandbox (gracefully: end of file first, then the grace period);
 * pending calls stay pending. */
static void stop_sandbox(struct berth_app *a, bool graceful)
{
	if (a->sb == NULL)
		return;
	if (!graceful)
		berth_sandbox_kill(a->sb);
	/* End of file on its channel asks the app to exit (docs/protocol.md). */
	if (graceful && a->rpc >= 0) {
		shutdown(a->rpc, SHUT_WR);
		long long deadline = now_ms() + BERTH_APP_STOP_GRACE_MS;
		for (;;) {
			long long left = deadline - now_ms();
			struct pollfd p[2] = {{berth_sandbox_pidfd(a->sb), POLLIN, 0}, {a->logfd, POLLIN, 0}};
			if (left <= 0 || poll(p, 2, (int)left) <= 0)
				break;
			if (p[1].revents & (POLLIN | POLLHUP))
				drain_logs(a);
			if (p[0].revents & POLLIN)
				break;
		}
	}
	if (a->exit_status < 0) {
		/* How it ended, for run.stop: still running after the grace
		 * period (or not asked to stop) means killed. */
		struct pollfd pd = {berth_sandbox_pidfd(a->sb), POLLIN, 0};
		if (poll(&pd, 1, 0) <= 0)
			berth_sandbox_kill(a->sb);
		berth_sandbox_wait(a->sb, &a->exit_status);
	}
	berth_sandbox_free(a->sb); /* the broker stops here: its decisions are queued */
	a->sb = NULL;
	close_channel(a);
	audit_end(a);
	a->olen = 0;
	/* What was sent is lost with the app; what waits goes out again. */
	for (size_t i = 0; i < a->n_pend;)
		if (a->pend[i].sent)
			pend_remove(a, i);
		else
			i++;
}

void berth_app_stop(struct berth_app *a)
{
	if (a == NULL)
		return;
	/* Calls the app had are on record as ended by the stop. */
	for (size_t i = 0; a->sb != NULL && i < a->n_pend; i++)
		if (a->pend[i].recorded) {
			struct berth_call_error ce = {0};
			call_fail(&ce, BERTH_RPC_CRASHED, NULL, "the app `%s` was stopped during the call",
				  a->m.name);
			finish(a, &a->pend[i], NULL, &ce, false);
			berth_call_error_free(&ce);
		}
	stop_sandbox(a, true);
	/* Calls still owed are dropped: callers that track them (berth mcp)
	 * fail them before stopping. */
	while (a->n_pend > 0)
		pend_remove(a, a->n_pend - 1);
}

void berth_app_fds(const struct berth_app *a, int *log_fd, int *pid_fd)
{
	*log_fd = a->sb != NULL ? a->logfd : -1;
	*pid_fd = a->sb != NULL ? berth_sandbox_pidfd(a->sb) : -1;
}

static void idle_done(void *ctx, long long id, json_t *result, const struct berth_call_error *ce)
{
	(void)ctx;
	(void)id;
	(void)result;
	(void)ce;
}

bool berth_app_idle(struct berth_app *a)
{
	if (a->sb == NULL)
		return false;
	berth_app_process(a, idle_done, NULL);
	return a->sb == NULL;
}

void berth_app_close(struct berth_app *a)
{
	if (a == NULL)
		return;
	berth_app_stop(a);
	for (size_t i = 0; i < a->n_comp; i++) {
		json_decref(a->comp[i].result);
		berth_call_error_free(&a->comp[i].ce);
	}
	free(a->comp);
	berth_manifest_free(&a->m);
	berth_policy_free(&a->p);
	free(a->pend);
	free(a->obuf);
	free(a);
}

/* The announced exports against the manifest's. */
static int check_parity(struct berth_app *a, json_t *exports, struct berth_error *err)
{
	char missing[1024] = "", extra[1024] = "";
	size_t i;
	json_t *v;

	if (!json_is_array(exports))
		return berth_err(err, EPROTO, "the app `%s` announced no `exports` list in berth/ready",
				 a->m.name);
	for (size_t k = 0; k < a->m.n_exports; k++) {
		bool found = false;
		json_array_foreach(exports, i, v) if (json_is_string(v) &&
						      strcmp(json_string_value(v), a->m.exports[k].name) == 0)
		    found = true;
		if (!found)
			snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s`%s`",
				 missing[0] ? ", " : "", a->m.exports[k].name);
	}
	json_array_foreach(exports, i, v)
	{
		const char *n = json_string_value(v);
		char cn[160];
		if (n != NULL)
			n = berth_text_clean(cn, sizeof cn, n);
		if (n == NULL || find_export(&a->m, n) == NULL)
			snprintf(extra + strlen(extra), sizeof extra - strlen(extra), "%s`%s`",
				 extra[0] ? ", " : "", n != NULL ? n : "(not a string)");
	}
	if (missing[0] == '\0' && extra[0] == '\0')
		return 0;
	berth_err(err, 0, "the app `%s` serves other exports than %s declares: missing %s; extra %s",
		  a->m.name, a->paths.manifest, missing[0] ? missing : "none", extra[0] ? extra : "none");
	err->errnum = EPROTO; /* marks a parity failure (berth test: the app fails its test) */
	return berth_err_hint(err, "make the exports in %s and those the code registers the same",
			      a->paths.manifest);
}

int berth_app_boot(struct berth_app *a, unsigned long *boot_us, struct berth_error *err)
{
	int sv[2] = {-1, -1}, lp[2] = {-1, -1};
	cleanup_close int devnull = -1;
	long long t0 = now_us(), deadline;
	json_t *msg = NULL;

	if (a->sb != NULL)
		return 0;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 || pipe2(lp, O_CLOEXEC) < 0 ||
	    (devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
		berth_err(err, errno, "cannot create the app's channel");
		goto fail;
	}
	if (berth_lines_init(&a->rin, BERTH_RPC_MAX_LINE) < 0 || berth_lines_init(&a->lin, 64 * 1024) < 0) {
		berth_err(err, ENOMEM, "out of memory");
		goto fail;
	}
	a->ro = (struct berth_runtime_opts){.force_off = a->o.force_off,
					    .quiet = a->o.quiet,
					    .has_stdio = true,
					    .stdio_fd = {devnull, lp[1], lp[1]},
					    .has_rpc = true,
					    .rpc_fd = sv[1],
					    .identity = berth_app_identity(a->paths.state_dir)};
	a->exit_status = -1;
	a->stop_reason = NULL;
	a->calls = 0;
	a->boot_ms = now_ms();
	a->audit_refused = false;
	if (a->o.audit) {
		/* The run is recorded on a thread while the sandbox is built;
		 * the app starts only once that is durable (audit_release). */
		berth_audit_new_run_id(a->run_id);
		a->ro.run_id = a->run_id;
		a->ro.before_release = audit_release;
		a->ro.release_arg = a;
		a->ro.on_net_decision = audit_net;
		a->ro.net_decision_arg = a;
		a->aud_rc = -1;
		a->aud_err = (struct berth_error){0};
		if (pthread_create(&a->aud_th, NULL, audit_main, a) == 0)
			a->aud_thread = true;
		else
			audit_main(a);
	}
	if (berth_sandbox_start(&a->p, &a->ro, &a->sb, err) < 0) {
		if (a->o.audit) {
			struct berth_error ae = {0};
			if (audit_join(a, &ae) < 0 && a->aq == NULL) {
				a->audit_refused = true;
				a->audit_why = ae;
			}
			if (a->audit != NULL && a->aq == NULL) {
				/* run.start is on record, the queue is not: end it here. */
				json_t *stop = json_pack("{s:s, s:s, s:n}", "app", a->m.name, "reason",
							 "boot failed", "status");
				berth_audit_append(a->audit, a->run_id, "run.stop", app_actor(a), stop, NULL,
						   NULL, &ae);
				json_decref(stop);
			}
			a->stop_reason = "boot failed";
			audit_end(a);
		}
		berth_err_wrap(err, "cannot boot the app `%s`", a->m.name);
		goto fail;
	}
	close(sv[1]);
	close(lp[1]);
	sv[1] = lp[1] = -1;
	a->rpc = sv[0];
	a->logfd = lp[0];
	fcntl(a->rpc, F_SETFL, O_NONBLOCK);
	fcntl(a->logfd, F_SETFL, O_NONBLOCK);
	berth_sandbox_enforced(a->sb, &a->enforced);

	/* The first message must be berth/ready. */
	deadline = now_ms() + BERTH_APP_BOOT_TIMEOUT_MS;
	for (;;) {
		enum wait_result w = next_message(a, deadline, &msg);
		if (w == TIMED_OUT) {
			berth_err(err, 0, "the app `%s` did not announce itself (berth/ready) within %d ms",
				  a->m.name, BERTH_APP_BOOT_TIMEOUT_MS);
			berth_err_hint(err, "the entry must start the SDK's run loop (see docs/protocol.md)");
			berth_sandbox_kill(a->sb); /* unresponsive: no grace period */
			goto stop;
		}
		if (w != GOT_MESSAGE) {
			berth_app_stop(a);
			berth_err(err, 0, "the app `%s` exited before it was ready", a->m.name);
			return berth_err_hint(err,
					      "its log above says why; run the entry by hand to debug it");
		}
		const char *method = json_string_value(json_object_get(msg, "method"));
		if (method != NULL && strcmp(method, "berth/ready") == 0)
			break;
		if (method != NULL && strcmp(method, "berth/log") == 0) {
			handle_notification(a, msg);
			json_decref(msg);
			continue;
		}
		json_decref(msg);
		berth_err(err, EPROTO, "the app `%s` sent something other than berth/ready first", a->m.name);
		goto stop;
	}
	if (check_parity(a, json_object_get(json_object_get(msg, "params"), "exports"), err) < 0) {
		json_decref(msg);
		goto stop;
	}
	json_decref(msg);
	if (boot_us != NULL)
		*boot_us = (unsigned long)(now_us() - t0);
	return 0;
stop:
	berth_app_stop(a);
	return -1;
fail:
	for (int i = 0; i < 2; i++) {
		if (sv[i] >= 0)
			close(sv[i]);
		if (lp[i] >= 0)
			close(lp[i]);
	}
	berth_lines_free(&a->rin);
	berth_lines_free(&a->lin);
	return -1;
}

/* ---------------------------------------------------------- denials */

static bool write_syscall(const char *sc)
{
	static const char *const reads[] = {"stat",	  "lstat",    "fstatat", "statx",    "access",
					    "faccessat",  "readlink", "opendir", "getdents", "read",
					    "readdir",	  "realpath", "listdir", "scandir",  "execve",
					    "readlinkat", NULL};

	if (sc == NULL)
		return true;
	for (int i = 0; reads[i] != NULL; i++)
		if (strcmp(sc, reads[i]) == 0)
			return false;
	return true;
}

/* @path made absolute in the sandbox and normalised (".", "..", "//"). */
static void sandbox_path(const char *path, char *out, size_t len)
{
	char buf[PATH_MAX];
	char *save = NULL;
	size_t n = 0;

	snprintf(buf, sizeof buf, "%s%s", path[0] == '/' ? "" : "/workspace/", path);
	out[0] = '\0';
	for (char *c = strtok_r(buf, "/", &save); c != NULL; c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0) {
			char *slash = strrchr(out, '/');
			if (slash != NULL)
				*slash = '\0';
			n = strlen(out);
			continue;
		}
		n += (size_t)snprintf(out + n, n < len ? len - n : 0, "/%s", c);
	}
	if (out[0] == '\0')
		snprintf(out, len, "/");
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static bool context_writable(const struct berth_app *a)
{
	for (size_t i = 0; i < a->p.n_mounts; i++)
		if (strcmp(a->p.mounts[i].dst, "/context") == 0)
			return a->p.mounts[i].rw;
	return false;
}

char *berth_app_denial(const struct berth_app *a, const char *errno_name, const char *syscall,
		       const char *path)
{
	static const char *const roots[] = {"/workspace", "/context", "/tmp"};
	char abs[PATH_MAX], fix[PATH_MAX + 512], by[512], scope[PATH_MAX];
	const char *root = NULL;
	bool write = write_syscall(syscall);
	char *out = NULL;
	int e;

	if (errno_name == NULL || path == NULL ||
	    (strcmp(errno_name, "EACCES") != 0 && strcmp(errno_name, "EPERM") != 0 &&
	     strcmp(errno_name, "EROFS") != 0))
		return NULL;
	e = strcmp(errno_name, "EACCES") == 0 ? EACCES : strcmp(errno_name, "EPERM") == 0 ? EPERM : EROFS;
	/* The path and call name come from the app: never raw on a terminal. */
	char cpath[PATH_MAX], csys[64];
	path = berth_text_clean(cpath, sizeof cpath, path);
	syscall = syscall != NULL ? berth_text_clean(csys, sizeof csys, syscall) : NULL;
	sandbox_path(path, abs, sizeof abs);
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(roots); i++)
		if (under(abs, roots[i]))
			root = roots[i];
	/* What the app reports is checked against the policy: EROFS where the
	 * sandbox has no read-only mount is not a denial berth can explain. */
	if (e == EROFS && root != NULL && !(strcmp(root, "/context") == 0 && !context_writable(a)))
		return NULL;

	/* What enforced it, as measured at boot. */
	if (e == EROFS)
		snprintf(by, sizeof by,
			 "the kernel — a read-only mount in the sandbox berth built from \"%s\"'s berth.yml",
			 a->m.name);
	else if (a->enforced.landlock_abi >= 4)
		snprintf(by, sizeof by,
			 "the kernel — Landlock ruleset (ABI %d, fully enforced) compiled from \"%s\"'s "
			 "berth.yml, "
			 "applied before the app's first line ran",
			 a->enforced.landlock_abi, a->m.name);
	else if (a->enforced.landlock_abi > 0)
		snprintf(by, sizeof by,
			 "the kernel — Landlock ruleset (ABI %d, partially enforced: this kernel lacks later "
			 "rights) "
			 "compiled from \"%s\"'s berth.yml, applied before the app's first line ran",
			 a->enforced.landlock_abi, a->m.name);
	else
		snprintf(by, sizeof by,
			 "the kernel's file permissions only — Landlock is NOT enforced for \"%s\" "
			 "(--allow-degraded)",
			 a->m.name);

	/* What would help. */
	if (under(abs, "/app"))
		snprintf(fix, sizeof fix,
			 "none available — /app is the app's own code, read-only by design; "
			 "write under /workspace instead");
	else if (root == NULL)
		snprintf(
		    fix, sizeof fix,
		    "none available — a filesystem scope may only name /workspace, /context, /tmp, /app");
	else {
		bool covered = false;
		for (size_t i = 0; i < a->p.n_grants; i++)
			if (under(abs, a->p.grants[i].path) && (a->p.grants[i].write || !write))
				covered = true;
		/* The directory that holds the path (or the scope root itself). */
		snprintf(scope, sizeof scope, "%s", abs);
		char *slash = strrchr(scope, '/');
		if (slash != NULL && slash != scope && strlen(scope) > strlen(root) &&
		    (size_t)(slash - scope) >= strlen(root))
			*slash = '\0';
		if (strcmp(scope, abs) == 0 && strcmp(abs, root) != 0)
			snprintf(scope, sizeof scope, "%s", root);
		if (covered)
			snprintf(fix, sizeof fix,
				 "none available — \"%s\" already declares access to %s; the kernel refused "
				 "for another reason (%s)",
				 a->m.name, abs, errno_name);
		else
			snprintf(fix, sizeof fix, "add \"filesystem:%s:%s\" to capabilities in %s",
				 write ? "write" : "read", scope, a->paths.manifest);
	}
	char msg[128];
	snprintf(msg, sizeof msg, "%s", strerror(e));
	if (msg[0] >= 'A' && msg[0] <= 'Z')
		msg[0] = (char)(msg[0] - 'A' + 'a');
	if (asprintf(&out,
		     "BERTH CAPABILITY DENIAL\n"
		     "app: %s   manifest: %s\n"
		     "denied: %s(2) on %s (%s: %s)\n"
		     "denied-by: %s\n"
		     "fix: %s\n",
		     a->m.name, a->paths.manifest, syscall != NULL ? syscall : "a system call", path,
		     errno_name, msg, by, fix) < 0)
		return NULL;
	return out;
}

/* ---------------------------------------------------------- calls */

static int schema_fail(struct berth_call_error *ce, int code, const char *what, const char *path,
		       const char *reason)
{
	return call_fail(ce, code, json_pack("{s:s, s:s}", "path", path, "reason", reason), "%s: %s: %s",
			 what, path, reason);
}

static void took_error(struct berth_app *a, json_t *error, struct berth_call_error *ce)
{
	json_t *code = json_object_get(error, "code"), *data = json_object_get(error, "data");
	const char *message = json_string_value(json_object_get(error, "message"));
	char clean[1024];
	json_int_t c = json_is_integer(code) ? json_integer_value(code) : BERTH_RPC_INTERNAL;

	/* The app's words, not a terminal's commands; a code beyond the
	 * protocol's 32-bit range is no code. */
	berth_text_clean(clean, sizeof clean, message != NULL ? message : "the app failed");
	if (c < INT32_MIN || c > INT32_MAX)
		c = BERTH_RPC_INTERNAL;
	/* Codes that say what berth did (crash, timeout, bad output) are
	 * berth's to give: an app using them is reporting its own failure. */
	if (c == BERTH_RPC_CRASHED || c == BERTH_RPC_TIMEOUT || c == BERTH_RPC_BAD_OUTPUT)
		c = BERTH_RPC_APP_ERROR;
	call_fail(ce, (int)c, json_is_object(data) ? json_incref(data) : NULL, "%s", clean);
	if (json_is_object(data))
		ce->denial = berth_app_denial(a, json_string_value(json_object_get(data, "errno_name")),
					      json_string_value(json_object_get(data, "syscall")),
					      json_string_value(json_object_get(data, "path")));
}

int berth_app_check_input(const struct berth_app *a, const char *name, json_t *input,
			  struct berth_call_error *ce)
{
	const struct berth_export *ex = find_export(&a->m, name);
	char path[512], reason[512];
	json_t *empty = NULL;
	int r = 0;

	memset(ce, 0, sizeof *ce);
	if (ex == NULL) {
		ce->refused_input = true;
		return call_fail(ce, BERTH_RPC_METHOD_NOT_FOUND, NULL, "the app `%s` has no export `%s`",
				 a->m.name, name);
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

static void pend_remove(struct berth_app *a, size_t i)
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

static int queue_out(struct berth_app *a, const char *s, size_t len)
{
	if (a->olen + len > a->ocap) {
		size_t cap = a->ocap ? a->ocap : 65536;
		while (cap < a->olen + len)
			cap *= 2;
		char *b = realloc(a->obuf, cap);
		if (b == NULL)
			return -1;
		a->obuf = b;
		a->ocap = cap;
	}
	memcpy(a->obuf + a->olen, s, len);
	a->olen += len;
	return 0;
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
		if (queue_out(a, q->line, q->len) < 0)
			break;
		free(q->line);
		q->line = NULL;
		q->sent = true;
		n++;
	}
	while (a->rpc >= 0 && a->olen > 0) {
		ssize_t w = send(a->rpc, a->obuf, a->olen, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w <= 0)
			break;
		memmove(a->obuf, a->obuf + w, a->olen - (size_t)w);
		a->olen -= (size_t)w;
	}
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
		call_fail(&ce, code, json_incref(data),
			  "%s during the call to `%s`; the next call boots it again", why, name);
		finish(a, &a->pend[i], NULL, &ce, report);
		berth_call_error_free(&ce);
		pend_remove(a, i);
	}
	a->olen = 0;
}

static void stop_sandbox(struct berth_app *a, bool graceful);

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
		if (record_call(a, &a->pend[i], &aerr) < 0)
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
		return call_fail(
		    ce, BERTH_RPC_AUDIT, NULL,
		    "the audit trail cannot record a run of the app `%s` (%s), so the call is refused "
		    "(fail closed)",
		    a->m.name, a->audit_why.msg);
	return call_fail(ce, BERTH_RPC_CRASHED, NULL, "%s%s%s", err.msg, err.hint[0] ? "; " : "", err.hint);
}

int berth_app_start_call(struct berth_app *a, const char *name, json_t *input, unsigned timeout_ms,
			 long long *id, struct berth_call_error *ce)
{
	const struct berth_export *ex = find_export(&a->m, name);
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
		return call_fail(ce, BERTH_RPC_INTERNAL, NULL, "cannot encode the request");
	size_t len = strlen(line);
	if (len + 1 > BERTH_RPC_MAX_LINE) {
		free(line);
		return call_fail(ce, BERTH_RPC_INVALID_REQUEST, NULL,
				 "the request is %zu bytes, over the %d-byte limit", len + 1,
				 BERTH_RPC_MAX_LINE);
	}
	if (a->n_pend == a->cap_pend) {
		size_t cap = a->cap_pend ? a->cap_pend * 2 : 16;
		struct pending *v = realloc(a->pend, cap * sizeof *v);
		if (v == NULL) {
			free(line);
			return call_fail(ce, BERTH_RPC_INTERNAL, NULL, "out of memory");
		}
		a->pend = v;
		a->cap_pend = cap;
	}
	char *nl = realloc(line, len + 2);
	if (nl == NULL) {
		free(line);
		return call_fail(ce, BERTH_RPC_INTERNAL, NULL, "out of memory");
	}
	nl[len] = '\n';
	nl[len + 1] = '\0';
	timeout_ms = timeout_ms ? timeout_ms : BERTH_APP_CALL_TIMEOUT_MS;
	struct pending *q = &a->pend[a->n_pend];
	*q = (struct pending){*id,	  ex,	   now_ms() + timeout_ms,
			      timeout_ms, nl,	   len + 1,
			      false,	  false,   no_input ? json_object() : json_incref(input),
			      false,	  now_us()};
	/* On record before the app sees it; if the trail failed and the app
	 * owes nothing, a fresh boot (a fresh log handle) gets another try. */
	struct berth_error aerr = {0};
	if (record_call(a, q, &aerr) < 0 && a->n_pend == 0) {
		a->stop_reason = "audit trail failed";
		stop_sandbox(a, true);
		if (boot_for_call(a, ce) < 0) {
			json_decref(q->input);
			free(nl);
			return -1;
		}
		aerr = (struct berth_error){0};
		record_call(a, q, &aerr);
	}
	if (a->o.audit && !q->recorded) {
		json_decref(q->input);
		free(nl);
		return call_fail(
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
			pend_remove(a, i);
			return;
		}
		/* In flight: tell the app; its slot stays taken until it answers
		 * (the answer is dropped) or the call's deadline passes. */
		q->cancelled = true;
		char msg[128];
		int n = snprintf(
		    msg, sizeof msg,
		    "{\"jsonrpc\":\"2.0\",\"method\":\"berth/cancel\",\"params\":{\"id\":%lld}}\n", id);
		if (queue_out(a, msg, (size_t)n) == 0)
			flush(a);
		return;
	}
}

void berth_app_poll_fds(const struct berth_app *a, struct pollfd p[3])
{
	bool up = a->sb != NULL;

	p[0] = (struct pollfd){up ? a->rpc : -1, (short)(POLLIN | (a->olen ? POLLOUT : 0)), 0};
	p[1] = (struct pollfd){up ? a->logfd : -1, POLLIN, 0};
	p[2] = (struct pollfd){up ? berth_sandbox_pidfd(a->sb) : -1, POLLIN, 0};
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

/* One answer from the app: finish its call. */
static void answer(struct berth_app *a, json_t *msg, berth_app_done_fn done, void *ctx)
{
	json_t *jid = json_object_get(msg, "id");
	size_t i;

	for (i = 0; i < a->n_pend; i++)
		if (a->pend[i].sent && json_is_integer(jid) && json_integer_value(jid) == a->pend[i].id)
			break;
	if (i == a->n_pend)
		return; /* an answer to nothing we wait for */
	struct pending *q = &a->pend[i];
	struct berth_call_error ce = {0};
	json_t *error = json_object_get(msg, "error"), *res = json_object_get(msg, "result");
	char path[512], reason[512];
	(void)done;
	(void)ctx;
	if (q->cancelled) {
		call_fail(&ce, BERTH_RPC_CANCELLED, NULL,
			  "cancelled by the caller; the app's answer was dropped");
		finish(a, q, NULL, &ce, false);
	} else if (error != NULL) {
		took_error(a, error, &ce);
		finish(a, q, NULL, &ce, true);
	} else if (!json_is_object(res)) {
		call_fail(&ce, BERTH_RPC_BAD_OUTPUT, NULL, "the app answered `%s` without a result object",
			  q->ex->name);
		finish(a, q, NULL, &ce, true);
	} else if (berth_schema_validate(q->ex->output, res, path, sizeof path, reason, sizeof reason) < 0) {
		schema_fail(&ce, BERTH_RPC_BAD_OUTPUT, "invalid output", path, reason);
		finish(a, q, NULL, &ce, true);
	} else {
		finish(a, q, res, NULL, true);
	}
	berth_call_error_free(&ce);
	pend_remove(a, i);
}

/* The app ended (or closed its channel): fail what it owed, and stop it. */
static void died(struct berth_app *a, berth_app_done_fn done, void *ctx)
{
	char why[512];
	int status = -1;
	bool closed_only = false;
	struct pollfd pd = {berth_sandbox_pidfd(a->sb), POLLIN, 0};

	drain_logs(a);
	/* End of file on the channel: give a dying app a moment to be reaped. */
	if (poll(&pd, 1, 500) <= 0) {
		closed_only = true;
		berth_sandbox_kill(a->sb);
	}
	berth_sandbox_wait(a->sb, &status);
	if (closed_only)
		snprintf(why, sizeof why, "the app `%s` closed its channel and was stopped", a->m.name);
	else if (status > 128)
		snprintf(why, sizeof why, "the app `%s` was killed by signal %d (%s)", a->m.name,
			 status - 128, strsignal(status - 128));
	else
		snprintf(why, sizeof why, "the app `%s` exited with status %d", a->m.name, status);
	app_log(a, "warning", why);
	a->exit_status = status;
	a->stop_reason = closed_only ? "closed its channel" : status > 128 ? "killed by a signal" : "exited";
	json_t *data = closed_only    ? NULL
		       : status > 128 ? json_pack("{s:i}", "signal", status - 128)
				      : json_pack("{s:i}", "status", status);
	fail_calls(a, false, BERTH_RPC_CRASHED, data, why, done, ctx);
	json_decref(data);
	stop_sandbox(a, false);
	restart_for_queue(a, done, ctx);
}

void berth_app_process(struct berth_app *a, berth_app_done_fn done, void *ctx)
{
	if (a->sb == NULL)
		return;
	flush(a);
	drain_logs(a);
	/* A budget per wakeup: an app flooding its channel cannot starve
	 * deadlines, signals or other apps (the rest is read next time). */
	size_t budget = 4 * 1024 * 1024;
	for (;;) {
		char *line;
		size_t len;
		int r = berth_lines_next(&a->rin, &line, &len);
		if (r == 2) {
			app_log(a, "warning", "dropped a protocol message over 1 MiB");
			continue;
		}
		if (r == 1) {
			json_t *j = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
			if (!json_is_object(j))
				app_log(a, "warning", "the app sent a line that is not a JSON object");
			else if (json_object_get(j, "id") == NULL)
				handle_notification(a, j);
			else
				answer(a, j, done, ctx);
			json_decref(j);
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
	struct pollfd pd = {berth_sandbox_pidfd(a->sb), POLLIN, 0};
	if (a->rin.eof || poll(&pd, 1, 0) > 0)
		died(a, done, ctx);
	deliver(a, done, ctx);
}

void berth_app_expire(struct berth_app *a, berth_app_done_fn done, void *ctx)
{
	long long now = now_ms();
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
			berth_sandbox_kill(a->sb);
		call_fail(&ce, BERTH_RPC_TIMEOUT, NULL,
			  "the call to `%s` timed out after %u ms; the app `%s` was stopped (the "
			  "next call boots "
			  "it again)",
			  name, t, a->m.name);
		finish(a, q, NULL, &ce, report);
		berth_call_error_free(&ce);
		pend_remove(a, i);
		snprintf(why, sizeof why, "the app `%s` was stopped because another call to it timed out",
			 a->m.name);
		fail_calls(a, false, BERTH_RPC_CRASHED, NULL, why, done, ctx);
		a->stop_reason = "call timed out";
		stop_sandbox(a, false);
		restart_for_queue(a, done, ctx);
		deliver(a, done, ctx);
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
		long long d = berth_app_next_deadline(a), left = d < 0 ? 1000 : d - now_ms();
		berth_app_poll_fds(a, p);
		if (poll(p, 3, left < 0 ? 0 : left > 1000 ? 1000 : (int)left) < 0 && errno != EINTR)
			return call_fail(ce, BERTH_RPC_INTERNAL, NULL, "poll: %s", strerror(errno));
		berth_app_process(a, sync_done, &w);
		if (!w.done)
			berth_app_expire(a, sync_done, &w);
	}
	*result = w.result;
	return w.result != NULL ? 0 : -1;
}
