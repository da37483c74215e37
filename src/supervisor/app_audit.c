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
	    .run_id = a->run_id, .kind = "run.start", .actor = berth_ap_app_actor(a), .payload = start};
	e[1] = (struct berth_audit_entry){
	    .run_id = a->run_id, .kind = "policy", .actor = berth_ap_app_actor(a), .payload = pol};
	if (berth_audit_append_batch(a->audit, e, 2, err) < 0)
		goto out;
	a->aq = berth_audit_queue_new(a->audit, a->run_id, berth_ap_app_actor(a), err);
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

void *berth_ap_audit_main(void *arg)
{
	struct berth_app *a = arg;

	a->aud_rc = audit_begin(a, &a->aud_err);
	return NULL;
}

/* Wait for audit_begin(); 0 when run.start and policy are durable. */
int berth_ap_audit_join(struct berth_app *a, struct berth_error *err)
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
int berth_ap_audit_release(void *arg, struct berth_error *err)
{
	struct berth_app *a = arg;

	if (berth_ap_audit_join(a, err) < 0)
		return berth_err_wrap(err,
				      "the audit trail cannot record the app's run, so it does not start "
				      "(fail closed)");
	return 0;
}

/* The egress broker's decisions, on its thread: a refusal is durable before
 * the app's client gets its 403, as for `berth run`. */
void berth_ap_audit_net(const struct berth_broker_decision *d, void *arg)
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
			      (json_int_t)((berth_ap_now_us() - q->t0_us) / 1000));

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

/* run.stop, then close this boot's queue and handle (all durable).  When
 * the queue failed (a full disk that has room again), run.stop is tried
 * once more directly, naming how many records were lost. */
void berth_ap_audit_end(struct berth_app *a)
{
	struct berth_error err = {0};

	if (a->aq != NULL) {
		audit_settle(a);
		json_t *sum = berth_audit_net_summary(&a->net_cap); /* the broker has stopped */
		if (sum != NULL) {
			json_object_set_new(sum, "app", json_string(a->m.name));
			berth_audit_queue_push_as(a->aq, "broker", "net.decision", sum, false, &err);
		}
		json_int_t ms = (json_int_t)(berth_ap_now_ms() - a->boot_ms);
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
			if (stop == NULL ||
			    berth_audit_append(a->audit, a->run_id, "run.stop", berth_ap_app_actor(a), stop,
					       NULL, NULL, &e2) < 0) {
				snprintf(buf, sizeof buf,
					 "the audit trail could not record the end of this run: %s", err.msg);
				berth_ap_app_log(a, "error", buf);
			}
		}
		json_decref(stop);
		a->aq = NULL;
	}
	berth_audit_close(a->audit);
	a->audit = NULL;
	a->stop_reason = NULL;
}
