/* SPDX-License-Identifier: MIT */
/*
 * run.c - the one run lifecycle (run.h): the audit records of a run around
 * whichever runtime runs it, for `berth run`, apps and sessions alike.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../sandbox/landlock.h"
#include "../sandbox/measure.h"
#include "../util/crash.h"
#include "../util/rmtree.h"
#include "../util/sys.h"
#include "run.h"
#include "orphans.h"
#include "runs.h"

static void notice(const struct berth_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void notice(const struct berth_run *r, const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	if (r->spec.notice == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	r->spec.notice(r->spec.notice_arg, line);
}

/* Adds @extra's members to @o (NULL: none); @o may be NULL (ENOMEM). */
static json_t *with(json_t *o, json_t *extra)
{
	if (o != NULL && extra != NULL)
		json_object_update(o, extra);
	return o;
}

int berth_run_init(struct berth_run *r, const struct berth_run_spec *spec, const char *run_id,
		   struct berth_error *err)
{
	*r = (struct berth_run){.spec = *spec};
	r->rt_ops = spec->runtime != NULL ? spec->runtime : berth_runtime_default();
	if (run_id != NULL)
		snprintf(r->run_id, sizeof r->run_id, "%s", run_id);
	else
		berth_audit_new_run_id(r->run_id);
	snprintf(r->actor, sizeof r->actor, "%s", spec->actor != NULL ? spec->actor : "berth");
	pthread_mutex_init(&r->q_mu, NULL);
	r->journal = (struct berth_journal)BERTH_JOURNAL_NONE;
	if (spec->audit && spec->journal == NULL) {
		struct berth_error je = {0};
		char adir[PATH_MAX] = "";
		if (berth_run_sweep(spec->notice, spec->notice_arg, &je) < 0)
			notice(r, "%s", je.msg);
		je = (struct berth_error){0};
		(void)berth_audit_dir(adir, sizeof adir, &je);
		je = (struct berth_error){0};
		if (berth_journal_create(&r->journal, r->run_id, adir, &je) < 0)
			notice(
			    r,
			    "%s: if berth is killed, what this run made on the host stays and its end is not "
			    "recorded",
			    je.msg);
	}
	/* Before anything is cloned: the kernel's records of the run's
	 * Landlock probe must find the socket bound (denials.h). */
	if (spec->audit || spec->explain)
		r->denials = berth_denials_open(spec->policy);
	r->t0_ms = berth_now_ms();
	(void)err; /* the runtime is chosen by the caller (berth_runtime_find) */
	return 0;
}

const char *berth_run_id(const struct berth_run *r)
{
	return r->run_id;
}

/* ---------------------------------------------------------- the audit job */

static bool public_env(const struct berth_run *r, const char *name)
{
	for (const char *const *n = r->spec.public_env; n != NULL && *n != NULL; n++)
		if (strcmp(*n, name) == 0)
			return true;
	return false;
}

/* Declared --env values (or an app's secrets) never reach the log, also
 * not through argv. */
static int add_secrets(struct berth_run *r, struct berth_error *err)
{
	const struct berth_policy *p = r->spec.policy;

	for (size_t i = 0; i < p->n_env; i++) {
		if (p->env[i].value == NULL ||
		    (r->spec.secrets == BERTH_RUN_SECRETS_FROM_HOST && !p->env[i].from_host) ||
		    public_env(r, p->env[i].name))
			continue;
		if (berth_audit_add_secret(r->audit, p->env[i].value, err) < 0)
			return -1;
	}
	return 0;
}

/* The queue, made under q_mu; NULL when it cannot be (q_err says why). */
static struct berth_audit_queue *queue_locked(struct berth_run *r)
{
	if (r->q == NULL && !r->q_failed && r->audit != NULL) {
		r->q = berth_audit_queue_new(r->audit, r->run_id, r->actor, &r->q_err);
		r->q_failed = r->q == NULL;
	}
	return r->q;
}

/*
 * Open the log, then run.start and policy in one group commit.  On a
 * thread of its own from on_spawned, so that opening the log (the host key,
 * the head's signature) and the commit overlap the sandbox's set-up.
 */
static int audit_begin(struct berth_run *r, struct berth_error *err)
{
	const struct berth_policy *p = r->spec.policy;
	struct berth_audit_entry e[2] = {{0}};
	char digest[65], d[80];
	char *pj = NULL;
	json_t *argv = json_array(), *start = NULL, *pol = NULL, *polv = NULL;
	int rc = -1;

	r->audit = berth_audit_open(NULL, err);
	if (r->audit == NULL)
		goto out;
	if (berth_audit_recovered(r->audit) != NULL)
		notice(r, "audit: %s", berth_audit_recovered(r->audit));
	if (add_secrets(r, err) < 0)
		goto out;
	for (size_t i = 0; argv != NULL && i < p->argc; i++)
		json_array_append_new(argv, json_string(p->argv[i]));
	start = with(json_pack("{s:O, s:I, s:s}", "argv", argv, "pid", (json_int_t)getpid(), "berth_version",
			       BERTH_VERSION),
		     r->spec.start_extra);
	pj = berth_policy_to_json(p, false, err);
	if (pj == NULL || berth_policy_digest(p, digest, err) < 0)
		goto out;
	polv = json_loads(pj, 0, NULL);
	snprintf(d, sizeof d, "sha256:%s", digest);
	pol = with(json_pack("{s:s, s:O}", "digest", d, "policy", polv != NULL ? polv : json_null()),
		   r->spec.policy_extra);
	if (start == NULL || pol == NULL) {
		berth_err(err, ENOMEM, "audit: cannot build the run records");
		goto out;
	}
	e[0] = (struct berth_audit_entry){
	    .run_id = r->run_id, .kind = "run.start", .actor = r->actor, .payload = start};
	e[1] = (struct berth_audit_entry){
	    .run_id = r->run_id, .kind = "policy", .actor = r->actor, .payload = pol};
	if (berth_audit_append_batch(r->audit, e, 2, err) < 0)
		goto out;
	berth_crash_point("run.audit");
	rc = 0;
	if (r->spec.queue_at_start) {
		pthread_mutex_lock(&r->q_mu);
		if (queue_locked(r) == NULL) {
			*err = r->q_err;
			rc = -1; /* run.start is durable: berth_run_end() writes its run.stop */
		}
		pthread_mutex_unlock(&r->q_mu);
	}
out:
	free(pj);
	json_decref(argv);
	json_decref(start);
	json_decref(pol);
	json_decref(polv);
	if (rc < 0 && e[0].seq == 0) {
		berth_audit_close(r->audit);
		r->audit = NULL;
	}
	return rc;
}

static void *job_main(void *arg)
{
	struct berth_run *r = arg;

	if (audit_begin(r, &r->job_err) < 0 && r->job_err.msg[0] == '\0')
		berth_err(&r->job_err, EIO, "audit: the run could not be recorded");
	return NULL;
}

static void job_start(struct berth_run *r, bool async)
{
	if (!r->spec.audit || r->job_started || r->job_done)
		return;
	if (async && pthread_create(&r->job_th, NULL, job_main, r) == 0) {
		r->job_started = true;
		return;
	}
	job_main(r);
	r->job_done = true;
}

int berth_run_record_now(struct berth_run *r, struct berth_error *err)
{
	job_start(r, false);
	return berth_run_join(r, err);
}

int berth_run_join(struct berth_run *r, struct berth_error *err)
{
	if (!r->spec.audit)
		return 0;
	if (r->job_started && !r->job_done) {
		pthread_join(r->job_th, NULL);
		r->job_done = true;
	} else if (!r->job_done) {
		job_start(r, false);
	}
	if (r->job_err.msg[0] == '\0')
		return 0;
	*err = r->job_err;
	if (r->spec.refuse_what != NULL)
		berth_err_wrap(err, "the audit trail cannot record %s, so it does not start (fail closed)",
			       r->spec.refuse_what);
	return -1;
}

const struct berth_error *berth_run_audit_failed(const struct berth_run *r)
{
	return r->job_done && r->job_err.msg[0] != '\0' ? &r->job_err : NULL;
}

struct berth_audit *berth_run_audit(const struct berth_run *r)
{
	return r->job_done ? r->audit : NULL;
}

struct berth_audit_queue *berth_run_queue(struct berth_run *r)
{
	struct berth_audit_queue *q;

	if (berth_run_audit(r) == NULL)
		return NULL;
	pthread_mutex_lock(&r->q_mu);
	q = queue_locked(r);
	pthread_mutex_unlock(&r->q_mu);
	return q;
}

/* ---------------------------------------------------------- the hooks */

/* 1: no process is cloned from here on; a thread is safe now. */
static struct berth_audit_queue *denials_queue(void *arg)
{
	struct berth_run *r = arg;

	return r->spec.audit ? berth_run_queue(r) : NULL;
}

static void on_spawned(void *arg)
{
	struct berth_run *r = arg;

	job_start(arg, true);
	berth_denials_start(r->denials, denials_queue, r);
}

/* 2: the command starts only once its run is on record. */
static int before_release(void *arg, struct berth_error *err)
{
	return berth_run_join(arg, err);
}

/* 4, audit_enforced: the measurement on record before the command runs. */
static int audit_enforced(struct berth_run *r, const struct berth_measure *m, struct berth_error *err)
{
	struct berth_audit_queue *q = berth_run_queue(r);
	json_t *e;

	if (q == NULL)
		return 0; /* no audit trail for this run */
	if ((e = berth_measure_to_json(m, r->spec.policy, err)) == NULL)
		return -1;
	if (berth_audit_queue_push_as(q, "berth", "enforced", e, true, err) < 0)
		return berth_err_wrap(err, "cannot record what is enforced in the audit trail");
	return 0;
}

/* 4: `berth run`'s run record (docs/attest.md). */
static int on_measured(void *arg, const char *run_id, const struct berth_measure *m, struct berth_error *err)
{
	struct berth_run *r = arg;

	/* The run's Landlock domain, named by the probe's record before the
	 * command's first instruction (denials.h); the namespace runtime's
	 * only (a microVM's kernel is not this one), and only for a command
	 * in a pid namespace of its own: berth's would also hold every other
	 * domain's creator on the host (degraded mode). */
	if (r->denials != NULL && strcmp(m->runtime, "namespace") == 0 && m->ns_ino[BERTH_NS_PID] != 0 &&
	    (m->ns_ino[BERTH_NS_PID] != m->parent_ns_ino[BERTH_NS_PID] ||
	     m->ns_dev[BERTH_NS_PID] != m->parent_ns_dev[BERTH_NS_PID]))
		berth_denials_join(r->denials, m->ns_dev[BERTH_NS_PID], m->ns_ino[BERTH_NS_PID],
				   m->landlock_probe == BERTH_LL_IN_FORCE &&
				       berth_landlock_log_flags(m->landlock_ruleset_abi) != 0);
	if (r->spec.audit_enforced && r->spec.audit)
		return audit_enforced(r, m, err);
	if (!r->spec.record_enforced)
		return 0;
	int rc = berth_run_record_enforced(run_id, r->spec.policy, m, berth_run_audit(r), err);
	berth_crash_point("run.measured");
	return rc;
}

/* 3b, --ask: the listener to the engine, before the command's first
 * instruction (its loader's first open waits on it). */
static void ask_notice(void *arg, const char *line)
{
	notice(arg, "%s", line);
}

static int ask_net_answer(void *arg, uint64_t token, bool grant)
{
	struct berth_run *r = arg;

	return berth_broker_answer(r->broker, token, grant);
}

static int on_notify(void *arg, int listener, const struct berth_measure *m, struct berth_error *err)
{
	struct berth_run *r = arg;
	char dir[PATH_MAX];
	struct berth_error de = {0};
	bool have_dir = berth_run_dir(r->run_id, false, dir, &de) == 0;
	struct berth_ask_opts o = {.policy = r->spec.policy,
				   .run_id = r->run_id,
				   .timeout_ms = r->spec.ask_timeout_ms,
				   .pidns_dev = m->ns_dev[BERTH_NS_PID],
				   .pidns_ino = m->ns_ino[BERTH_NS_PID],
				   .ctl_dir = have_dir ? dir : NULL,
				   .terminal = r->spec.ask_terminal,
				   .queue = denials_queue,
				   .queue_arg = r,
				   .notice = ask_notice,
				   .notice_arg = r,
				   .net_answer = r->broker != NULL ? ask_net_answer : NULL,
				   .net_arg = r};

	struct berth_ask *a = berth_ask_start(listener, &o, err);
	__atomic_store_n(&r->ask, a, __ATOMIC_RELEASE);
	if (r->ask == NULL)
		return berth_err_wrap(err, "--ask");
	if (!have_dir)
		notice(r, "--ask: no run directory (%s): asks are answered at the terminal only", de.msg);
	return 0;
}

void berth_run_attach(struct berth_run *r, struct berth_runtime_opts *ro)
{
	ro->run_id = r->run_id;
	ro->hooks = (struct berth_run_hooks){.arg = r,
					     .on_spawned = on_spawned,
					     .before_release = before_release,
					     .on_egress = berth_run_egress_start,
					     .on_measured = on_measured};
	if (r->spec.ask) {
		ro->ask = true;
		ro->hooks.on_notify = on_notify;
	}
	ro->remove_at_end = r->spec.remove_at_end;
	ro->n_remove_at_end = r->spec.n_remove_at_end;
	ro->journal = r->spec.journal != NULL ? r->spec.journal : r->journal.fd >= 0 ? &r->journal : NULL;
}

int berth_run_exec(struct berth_run *r, const struct berth_runtime_opts *ro, int *status,
		   struct berth_error *err)
{
	return r->rt_ops->run(r->spec.policy, ro, status, err);
}

int berth_run_start(struct berth_run *r, const struct berth_runtime_opts *ro, struct berth_rt **out,
		    struct berth_error *err)
{
	return r->rt_ops->start(r->spec.policy, ro, out, err);
}

/* ---------------------------------------------------------- the end */

static void explain_line(void *arg, const char *text)
{
	notice(arg, "%s", text);
}

/* run.stop, directly (the queue is closed: everything it held is before). */
static void record_stop(struct berth_run *r, int status, json_t *stop_extra, const char *lost)
{
	struct berth_error err = {0};
	json_t *stop =
	    with(json_pack("{s:o, s:I}", "status", status >= 0 ? json_integer(status) : json_null(),
			   "duration_ms", (json_int_t)(berth_now_ms() - r->t0_ms)),
		 stop_extra);

	if (stop != NULL && lost != NULL)
		json_object_set_new(stop, "records_lost", json_string(lost));
	if (stop == NULL ||
	    berth_audit_append(r->audit, r->run_id, "run.stop", r->actor, stop, NULL, NULL, &err) < 0) {
		notice(r, "%s", stop == NULL ? "out of memory" : err.msg);
		notice(r,
		       "the run ended but its run.stop record could not be written (the exit status is the "
		       "command's)");
	}
	json_decref(stop);
}

void berth_run_end(struct berth_run *r, int status, json_t *stop_extra)
{
	struct berth_error err = {0}, je = {0};

	/* the asks first: what waited is denied, the broker's held requests
	 * too, while the broker is still there to refuse them */
	berth_ask_stop(r->ask);
	berth_run_egress_stop(r); /* no decision arrives after this */
	/* A run.start on record gets its run.stop, also when the queue made
	 * with it failed (queue_at_start). */
	berth_run_join(r, &je);
	berth_denials_stop(r->denials, r->run_id, r->spec.explain); /* no denial arrives after this */
	if (r->spec.explain && r->denials != NULL)
		berth_denials_explain(r->denials, r->net_cap.count[BERTH_BROKER_REFUSED], explain_line, r);
	/* Only where there is something to say: the kernel's records were
	 * read, or the run was asked to explain (docs/denials.md). */
	char dwhy[8];
	if (r->spec.audit && r->audit != NULL && r->denials != NULL &&
	    (berth_denials_seen(r->denials, dwhy, sizeof dwhy) || r->spec.explain)) {
		json_t *ds = berth_denials_summary(r->denials, r->net_cap.count[BERTH_BROKER_REFUSED]);
		struct berth_audit_queue *q = ds != NULL ? berth_run_queue(r) : NULL;
		if (q != NULL)
			berth_audit_queue_push_as(q, "kernel", "denial.summary", ds, false, &err);
		else
			json_decref(ds);
		err = (struct berth_error){0};
	}
	/* --ask's counts go in run.stop ("ask"): no record of their own, so
	 * a run that asked nothing starts no queue for them (start latency) */
	json_t *ask_extra = NULL;
	if (r->ask != NULL) {
		json_t *as = berth_ask_summary(r->ask);
		ask_extra = stop_extra != NULL ? json_copy(stop_extra) : json_object();
		if (ask_extra != NULL && as != NULL)
			json_object_set_new(ask_extra, "ask", as);
		else
			json_decref(as);
		if (ask_extra != NULL)
			stop_extra = ask_extra;
	}
	berth_ask_free(r->ask);
	r->ask = NULL;
	if (r->spec.audit && r->audit != NULL) {
		json_t *sum = berth_audit_net_summary(&r->net_cap);
		if (sum != NULL && r->q != NULL)
			berth_audit_queue_push_as(r->q, "broker", "net.decision",
						  with(sum, r->spec.net_extra), false, &err);
		else
			json_decref(sum);
		err = (struct berth_error){0};
		bool lost = r->q_failed || berth_audit_queue_close(r->q, &err) < 0;
		r->q = NULL;
		if (lost) {
			struct berth_error *why = r->q_failed && err.msg[0] == '\0' ? &r->q_err : &err;
			notice(r, "%s", why->msg);
			notice(r,
			       "some records of this run are not in the audit trail (the exit status is the "
			       "command's)");
			record_stop(r, status, stop_extra, why->msg);
		} else {
			record_stop(r, status, stop_extra, NULL);
		}
		berth_crash_point("run.stopped");
	}
	for (size_t i = 0; i < r->spec.n_remove_at_end; i++) {
		struct berth_error e = {0};
		if (r->spec.remove_at_end[i] != NULL && berth_rmtree(r->spec.remove_at_end[i], NULL, &e) < 0)
			notice(r, "%s", e.msg);
	}
	berth_audit_close(r->audit);
	r->audit = NULL;
	berth_denials_free(r->denials);
	r->denials = NULL;
	berth_journal_done(&r->journal); /* the run's end is on record */
	json_decref(ask_extra);
	pthread_mutex_destroy(&r->q_mu);
}

int berth_run_unrecorded(const struct berth_policy *p, struct berth_runtime_opts *ro, int *status,
			 struct berth_error *err)
{
	struct berth_run r;
	int rc;

	berth_run_init(&r, &(struct berth_run_spec){.policy = p, .quiet = ro->quiet}, NULL, err);
	berth_run_attach(&r, ro);
	rc = berth_run_exec(&r, ro, status, err);
	berth_run_end(&r, rc < 0 ? -1 : *status, NULL);
	return rc;
}

/* ---------------------------------------------------------- net.decision */

json_t *berth_audit_net_payload(const struct berth_broker_decision *d)
{
	const char *decision = d->outcome == BERTH_BROKER_ALLOWED   ? "allowed"
			       : d->outcome == BERTH_BROKER_REFUSED ? "refused"
								    : "failed";
	const char *proxy = d->kind == BERTH_BROKER_SOCKS5        ? "socks5"
			    : d->kind == BERTH_BROKER_TRANSPARENT ? "transparent"
			    : d->kind == BERTH_BROKER_DNS         ? "dns"
								  : "http";

	return json_pack("{s:s, s:s, s:s, s:I, s:s, s:s, s:I, s:I, s:I}", "proxy", proxy, "decision",
			 decision, "host", d->host, "port", (json_int_t)d->port, "address", d->address,
			 "reason", d->reason, "bytes_up", (json_int_t)d->bytes_up, "bytes_down",
			 (json_int_t)d->bytes_down, "duration_ms", (json_int_t)d->duration_ms);
}

bool berth_audit_net_admit(struct berth_audit_net_cap *c, const struct berth_broker_decision *d)
{
	unsigned k = (unsigned)d->outcome < 4 ? (unsigned)d->outcome : 0;

	if (++c->count[k] <= BERTH_AUDIT_NET_MAX_PER_OUTCOME)
		return true;
	c->suppressed[k]++;
	return false;
}

json_t *berth_audit_net_summary(const struct berth_audit_net_cap *c)
{
	if (c->suppressed[0] + c->suppressed[1] + c->suppressed[2] + c->suppressed[3] == 0)
		return NULL;
	return json_pack("{s:s, s:I, s:I, s:I, s:I}", "decision", "summary", "recorded_each",
			 (json_int_t)BERTH_AUDIT_NET_MAX_PER_OUTCOME, "allowed_not_recorded",
			 (json_int_t)c->suppressed[BERTH_BROKER_ALLOWED], "refused_not_recorded",
			 (json_int_t)c->suppressed[BERTH_BROKER_REFUSED], "failed_not_recorded",
			 (json_int_t)c->suppressed[BERTH_BROKER_FAILED]);
}
