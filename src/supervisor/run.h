/* SPDX-License-Identifier: MIT */
/*
 * run.h - the one run lifecycle of the supervisor, used by `berth run`
 * (src/cli/cmd_run.c), each boot of a resident app (app.c) and each agent
 * session (src/session/supervise.c); docs/architecture.md "The run
 * lifecycle".
 *
 * In order:
 *   berth_run_init()    the run's id and actor; nothing is written yet
 *   berth_run_attach()  the runtime hooks (src/runtime/runtime.h) of the run:
 *                       on_spawned starts the audit job on a thread of its
 *                       own (open the log, say "audit: recovered ...",
 *                       register the secrets, run.start + policy in one group
 *                       commit), before_release joins it (fail closed),
 *                       on_egress starts the egress broker on the runtime's
 *                       listeners, on_measured writes the run record's
 *                       enforced.json (with record_enforced) or the
 *                       `enforced` record alone (audit_enforced)
 *   berth_run_exec() / berth_run_start()   the runtime's run()/start()
 *   ... the command runs; the broker's decisions become net.decision records
 *       (at most BERTH_AUDIT_NET_MAX_PER_OUTCOME per outcome), queued
 *   berth_rt_free()     (a started sandbox) the sandbox is gone
 *   berth_run_end()     the broker stops ("refused: ..." lines), the summary
 *                       of decisions left out, the queue closes, run.stop,
 *                       the paths that live as long as the run are removed,
 *                       the log closes
 *
 * Notices (the audit log's recovery, the broker's refusals, records that
 * could not be written) go to spec->notice, one line each without the
 * "berth: " prefix; the caller prints them (the CLI's edge) or keeps them.
 * Errors are returned (struct berth_error), never printed.
 */
#ifndef BERTH_SUPERVISOR_RUN_H
#define BERTH_SUPERVISOR_RUN_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>

#include "../audit/audit.h"
#include "../audit/queue.h"
#include "../broker/broker.h"
#include "../runtime/runtime.h"
#include "../util/journal.h"
#include "ask.h"
#include "denials.h"

/* Which of the policy's environment values are secrets for the log. */
enum berth_run_secrets {
	/* every value the policy carries (`berth run --env`, a session's
	 * profile): berth cannot tell a token from a harmless value */
	BERTH_RUN_SECRETS_ENV = 0,
	/* only values taken from berth's environment (an app manifest's
	 * `secrets`): the manifest's own `env` values are published in it */
	BERTH_RUN_SECRETS_FROM_HOST,
};

typedef void (*berth_run_notice_fn)(void *arg, const char *line);

struct berth_cred_run;
struct berth_ssh_run;

struct berth_run_spec {
	const struct berth_policy *policy; /* must outlive the run */
	/* injected credentials for the broker (credentials.h); NULL: none; must outlive the run */
	const struct berth_cred_run *creds;
	/* the --ssh agent relay (sshagent.h), served beside the broker; NULL: none; must outlive the run */
	struct berth_ssh_run *ssh;
	const struct berth_runtime_ops *runtime; /* NULL: berth_runtime_default() */
	const char *actor;                       /* run.start, policy, run.stop (copied); NULL: "berth" */
	bool
	    audit; /* record the run; false: only the broker (a session's git clone, an app with audit off) */
	enum berth_run_secrets secrets;
	/* Names of environment variables whose values are not declared
	 * secrets, whatever @secrets says (NULL-terminated, borrowed; NULL:
	 * none): `berth oci`'s HOSTNAME, container, ... that the engine sets
	 * (an OCI bundle's env is all literal values, and HOSTNAME is the
	 * container's id or name: as a secret it would blank that id in every
	 * record). */
	const char *const *public_env;
	/* Members added to run.start, to the policy record and to each
	 * net.decision (borrowed; NULL: none): what tells this kind of run
	 * apart (`berth run`: workspace, cwd; a session: its name, profile,
	 * repository; an app: its name, version, directory and digest). */
	json_t *start_extra, *policy_extra, *net_extra;
	/* Apps: the queue is made with run.start, before the command starts,
	 * since every call is recorded through it; an app whose calls could
	 * not be recorded never starts.  Others make it at the first network
	 * decision (no thread for runs that make none: start latency). */
	bool queue_at_start;
	/* `berth run`: the run directory's enforced.json (and the "enforced"
	 * record) when the command measured (src/supervisor/runs.h). */
	bool record_enforced;
	/* Resident apps in a microVM: the measurement as an `enforced` record
	 * of the audit trail (no run directory), through the queue, durable
	 * before the command's execve (with @audit and @queue_at_start; a
	 * record that cannot be written fails the run closed). */
	bool audit_enforced;
	/* `berth run --explain`: the run's denials (denials.h) as notices at
	 * berth_run_end(), each line "denied ...", "  rule: ...", "  fix: ...",
	 * then "denials: ..." totals. */
	bool explain;
	/* `berth run --ask` (ask.h, docs/ask.md): the command's opens outside
	 * the policy's view are held and put to a human, for at most
	 * @ask_timeout_ms (0: the default) each; with @ask_terminal on berth's
	 * controlling terminal too.  The control socket is made in the run
	 * directory (which the caller made: berth_run_record_start). */
	bool ask;
	unsigned ask_timeout_ms;
	bool ask_terminal;
	/* When not NULL, a run the audit trail cannot record fails with "the
	 * audit trail cannot record WHAT, so it does not start (fail closed):
	 * CAUSE" ("the app's run", "this session"); NULL leaves CAUSE alone
	 * (the CLI prints its own line after it). */
	const char *refuse_what;
	bool quiet;                 /* no "refused: ..." lines (a session: nobody reads them) */
	berth_run_notice_fn notice; /* NULL: notices are dropped */
	void *notice_arg;
	/* Paths that live as long as the run (the runtime's remove_at_end):
	 * `berth run --evidence`'s copy.  Borrowed. */
	const char *const *remove_at_end;
	size_t n_remove_at_end;
	/* The run's journal (util/journal.h), made by the caller (`berth run`,
	 * which names its run directory and evidence copy there too), or NULL:
	 * a run with @audit then makes its own at berth_run_init(), after
	 * repairing the runs whose supervisor died (orphans.h), and removes it
	 * at berth_run_end(). */
	const struct berth_journal *journal;
};

/* ---- net.decision records */

/*
 * berth_audit_net_payload - the payload of a `net.decision` record for one
 * decision of the egress broker (docs/audit.md): proxy ("http", "socks5",
 * "transparent", "dns"), decision ("allowed", "refused", "failed"), host,
 * port, address, reason, bytes_up, bytes_down, duration_ms.  Returns a new
 * object, or NULL (ENOMEM).
 */
json_t *berth_audit_net_payload(const struct berth_broker_decision *d);

/*
 * The cap on `net.decision` records of one run (docs/audit.md): at most
 * BERTH_AUDIT_NET_MAX_PER_OUTCOME records per outcome (allowed, refused,
 * failed); beyond it decisions are only counted, and one summary record
 * closes the run's decisions.  Without it a sandbox connecting in a loop
 * fills the host's disk through the audit log (and, since a refusal waits for
 * its group commit, keeps its broker waiting for the disk).  Every run has
 * one, zeroed at berth_run_init(), touched on the broker's thread only and
 * read for the summary once the broker stopped.
 */
#define BERTH_AUDIT_NET_MAX_PER_OUTCOME 1000

struct berth_audit_net_cap {
	unsigned long long count[4], suppressed[4]; /* by enum berth_broker_outcome */
};

/*
 * berth_audit_net_admit - count decision @d in @c.  Returns true when it is
 * to be recorded one by one, false when its outcome is over the cap (the
 * decision itself stands: a refusal stays a refusal).
 */
bool berth_audit_net_admit(struct berth_audit_net_cap *c, const struct berth_broker_decision *d);

/*
 * berth_audit_net_summary - the payload of the record that closes a run's
 * decisions when some were left out: {"decision":"summary",
 * "recorded_each":1000, "allowed_not_recorded":N, "refused_not_recorded":N,
 * "failed_not_recorded":N}.  Returns a new object, or NULL when nothing was
 * left out (or ENOMEM).
 */
json_t *berth_audit_net_summary(const struct berth_audit_net_cap *c);

/* One run; fields are private to run.c and run_egress.c. */
struct berth_run {
	struct berth_run_spec spec;
	const struct berth_runtime_ops *rt_ops;
	char run_id[17];
	char actor[160];
	long long t0_ms;
	/* the audit job: run.start and policy, on a thread from on_spawned */
	pthread_t job_th;
	bool job_started, job_done;
	struct berth_audit *audit;
	struct berth_error job_err;
	/* the records of the run after those, through a writer thread */
	pthread_mutex_t q_mu;
	struct berth_audit_queue *q;
	bool q_failed;
	struct berth_error q_err;
	struct berth_audit_net_cap net_cap;
	/* the denial stream (denials.h), for recorded runs */
	struct berth_denials *denials;
	/* --ask's engine (ask.h), from on_notify to berth_run_end() */
	struct berth_ask *ask;
	/* the egress broker (run_egress.c) */
	struct berth_broker *broker;
	pthread_t broker_th;
	bool broker_running;
	/* its own journal when spec.journal is NULL (fd -1: none) */
	struct berth_journal journal;
};

/*
 * berth_run_init - a run of @spec->policy: its id (@run_id when not NULL,
 * else a new one), actor and runtime (spec->runtime, found by the caller
 * with berth_runtime_find(), or the default).  With @spec->audit and no
 * @spec->journal: repairs the runs whose supervisor died (orphans.h) and
 * makes the run's journal; when it cannot, the run goes on without one
 * (a notice says what a SIGKILL of berth would then leave).  Writes no
 * record and cannot fail today: returns 0 (@err is for a runtime that must
 * be opened).
 */
int berth_run_init(struct berth_run *r, const struct berth_run_spec *spec, const char *run_id,
		   struct berth_error *err);

/* berth_run_attach - fill @ro->run_id, @ro->hooks and @ro->remove_at_end
 * for @r (@r must outlive the runtime's use of @ro). */
void berth_run_attach(struct berth_run *r, struct berth_runtime_opts *ro);

/* berth_run_id - the run's id (16 hex digits). */
const char *berth_run_id(const struct berth_run *r);

/*
 * berth_run_record_now - the audit job on this thread, now (`berth run
 * --evidence` records its manifest after run.start and policy, before the
 * sandbox).  Returns 0 when run.start and policy are durable, or -1 with
 * @err filled (as berth_run_join()).
 */
int berth_run_record_now(struct berth_run *r, struct berth_error *err);

/*
 * berth_run_join - wait for the audit job (run it here when the runtime
 * failed before it could start it).  Returns 0 when run.start and policy
 * are durable (or the run is not recorded), or -1 with @err filled: why the
 * audit trail cannot record the run (wrapped as spec->refuse_what says).
 */
int berth_run_join(struct berth_run *r, struct berth_error *err);

/* berth_run_audit_failed - once joined, why the audit trail could not
 * record the run (not wrapped), or NULL when it could. */
const struct berth_error *berth_run_audit_failed(const struct berth_run *r);

/* berth_run_audit - the run's audit handle once joined, or NULL. */
struct berth_audit *berth_run_audit(const struct berth_run *r);

/*
 * berth_run_queue - the run's record queue (made now if need be), for
 * records of the caller's own (an app's tool.call and tool.result).
 * Returns NULL when the run is not recorded or the queue could not be made
 * (then berth_run_end() reports it).  Any thread.
 */
struct berth_audit_queue *berth_run_queue(struct berth_run *r);

/*
 * berth_run_exec - the runtime's run() for the attached @ro (`berth run`):
 * the command runs to its end.  As berth_sandbox_run().
 */
int berth_run_exec(struct berth_run *r, const struct berth_runtime_opts *ro, int *status,
		   struct berth_error *err);

/*
 * berth_run_start - the runtime's start() for the attached @ro (apps,
 * sessions): *@out is the started sandbox, the caller's to free
 * (berth_rt_free) before berth_run_end().  As berth_sandbox_start().
 */
int berth_run_start(struct berth_run *r, const struct berth_runtime_opts *ro, struct berth_rt **out,
		    struct berth_error *err);

/*
 * berth_run_end - end the run (its sandbox ended and was freed): stop the
 * broker and name what it refused, queue the summary of decisions left out,
 * close the queue, append run.stop ({"status": @status or null when < 0,
 * "duration_ms": since berth_run_init} and @stop_extra's members, borrowed;
 * with "records_lost" when the queue lost some), remove the run's paths and
 * close the log.  Failures are notices; the run's status stays the command's.
 * @r may be ended once; an ended run can be initialised again.
 */
void berth_run_end(struct berth_run *r, int status, json_t *stop_extra);

/*
 * berth_run_unrecorded - a run of @p that the audit trail does not record
 * (a session's git clone): the runtime's run() with the broker attached.
 * @ro as for berth_sandbox_run() (its hooks are set here).
 */
int berth_run_unrecorded(const struct berth_policy *p, struct berth_runtime_opts *ro, int *status,
			 struct berth_error *err);

/* ---- run_egress.c: the egress broker of a run */

/* hooks.on_egress: a broker on @l's listeners, serving from a thread.
 * Returns 0, or -1 with @err (the listeners are closed). */
int berth_run_egress_start(void *run, const struct berth_egress_listeners *l, struct berth_error *err);

/* Stop and free the broker (if any): its thread is joined, so no decision
 * arrives after this; "refused: ..." notices unless spec->quiet. */
void berth_run_egress_stop(struct berth_run *r);

#endif
