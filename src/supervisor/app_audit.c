/* SPDX-License-Identifier: MIT */
/*
 * app_audit.c - the audit trail of a resident app (app.c, docs/audit.md "Resident
 * apps"): one run per boot, its tool.call and tool.result records, and the
 * results delivered once their records are durable.
 */

#include <string.h>

#include "../util/cleanup.h"
#include "../util/text.h"

#include "app_int.h"

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

const char *berth_ap_app_actor(const struct berth_app *a)
{
	return a->actor[0] ? a->actor : "berth";
}

static const char *call_actor(const struct berth_app *a)
{
	return a->caller[0] ? a->caller : berth_ap_app_actor(a);
}

bool berth_app_audit_refused(const struct berth_app *a)
{
	return a->audit_refused;
}

void berth_app_set_caller(struct berth_app *a, const char *caller)
{
	berth_text_clean(a->caller, sizeof a->caller, caller != NULL ? caller : "");
}

/* The boot's notices (the audit log's recovery, what could not be
 * recorded, the broker's refusals) on stderr, as `berth run` prints them. */
static void run_notice(void *arg, const char *line)
{
	char clean[2100];

	(void)arg;
	fprintf(stderr, "berth: %s\n", berth_text_clean(clean, sizeof clean, line));
}

/* The boot's run (src/supervisor/run.h): run.start and policy on a thread
 * while the sandbox is built, durable before the app's command starts. */
int berth_ap_run_begin(struct berth_app *a, struct berth_error *err)
{
	char adigest[80];

	snprintf(adigest, sizeof adigest, "sha256:%s", a->digest);
	a->run_extra[0] = json_pack("{s:s, s:s, s:s, s:s}", "app", a->m.name, "version", a->m.version,
				    "app_dir", a->paths.app_dir, "app_digest", adigest);
	a->run_extra[1] = json_pack("{s:s}", "app_digest", adigest);
	a->run_extra[2] = json_pack("{s:s}", "app", a->m.name);
	if (a->run_extra[0] == NULL || a->run_extra[1] == NULL || a->run_extra[2] == NULL) {
		berth_ap_run_free_extra(a);
		return berth_err(err, ENOMEM, "out of memory");
	}
	struct berth_run_spec spec = {
	    .policy = &a->p,
	    .creds = a->creds,
	    .runtime = a->o.runtime,
	    /* a microVM's measurement names its guest (docs/attest.md): on
	     * record, as `berth run --runtime vm` records it */
	    .audit_enforced = a->o.runtime == &berth_runtime_vm,
	    .actor = berth_ap_app_actor(a),
	    .audit = a->o.audit,
	    /* The manifest's `secrets` reach the app only, never the log; its
	     * `env` values are published in the manifest. */
	    .secrets = BERTH_RUN_SECRETS_FROM_HOST,
	    .start_extra = a->run_extra[0],
	    .policy_extra = a->run_extra[1],
	    .net_extra = a->run_extra[2],
	    .queue_at_start = true,
	    .refuse_what = "the app's run",
	    .quiet = a->o.quiet,
	    .notice = run_notice,
	};
	berth_run_init(&a->run, &spec, NULL, err);
	berth_run_attach(&a->run, &a->ro);
	a->run_live = true;
	return 0;
}

void berth_ap_run_free_extra(struct berth_app *a)
{
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(a->run_extra); i++) {
		json_decref(a->run_extra[i]);
		a->run_extra[i] = NULL;
	}
}

/* The sandbox started: its calls are recorded through the run's queue. */
void berth_ap_run_started(struct berth_app *a)
{
	a->aq = a->o.audit ? berth_run_queue(&a->run) : NULL;
}

/* The sandbox did not start: when the audit trail was the reason, calls
 * fail with -32005 (BERTH_RPC_AUDIT) until a boot succeeds. */
void berth_ap_run_failed(struct berth_app *a)
{
	struct berth_error ae = {0};

	if (berth_run_join(&a->run, &ae) < 0 && berth_run_audit_failed(&a->run) != NULL) {
		a->audit_refused = true;
		a->audit_why = *berth_run_audit_failed(&a->run);
	}
	a->stop_reason = "boot failed";
	berth_ap_audit_end(a);
}

/* tool.call for @q (not waited for: its tool.result is).  Returns 0, or -1
 * with @err when the trail cannot take it. */
int berth_ap_record_call(struct berth_app *a, struct pending *q, struct berth_error *err)
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
			      (json_int_t)((berth_now_us() - q->t0_us) / 1000));

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
 * had one), and, when @report, keep it to be reported by berth_ap_deliver(). */
void berth_ap_finish(struct berth_app *a, struct pending *q, json_t *result,
		     const struct berth_call_error *ce, bool report)
{
	struct completion c = {.id = q->id};

	if (a->aq != NULL) {
		json_t *payload;
		if (!q->recorded && berth_ap_record_call(a, q, &c.why) < 0)
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
void berth_ap_deliver(struct berth_app *a, berth_app_done_fn done, void *ctx)
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
				berth_ap_call_fail(
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

/* run.stop (src/supervisor/run.c: after the queue closed; with
 * "records_lost" when it lost some), then the boot's handle closes. */
void berth_ap_audit_end(struct berth_app *a)
{
	if (a->run_live) {
		audit_settle(a);
		const char *reason = a->stop_reason != NULL ? a->stop_reason : "stopped";
		json_t *extra = json_pack("{s:s, s:s, s:I}", "app", a->m.name, "reason", reason, "calls",
					  (json_int_t)a->calls);
		a->aq = NULL; /* closed by berth_run_end() */
		berth_run_end(&a->run, a->exit_status, extra);
		json_decref(extra);
		berth_ap_run_free_extra(a);
		a->run_live = false;
	}
	a->stop_reason = NULL;
}
