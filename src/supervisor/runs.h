/* SPDX-License-Identifier: MIT */
/*
 * runs.h - the state berth keeps for one `berth run`:
 * $XDG_STATE_HOME/berth/runs/<run_id>/ (or $HOME/.local/state/...), 0700,
 * files 0600, each written whole (temporary file, rename(2); not fsync'd:
 * the audit trail is the durable record):
 *   run.json       what ran: berth version, host, policy and its digest,
 *                  start and end, exit status, the evidence summary
 *   enforced.json  the command's own measurement (docs/attest.md)
 *   evidence/      the evidence copy while the run lasts (docs/security.md)
 * and runs/last, the id of the newest run.
 */
#ifndef BERTH_RUNS_H
#define BERTH_RUNS_H

#include <limits.h>
#include <stdbool.h>

#include <jansson.h>

#include "../util/error.h"

/*
 * berth_run_dir - the directory of run @run_id in @out (PATH_MAX bytes).
 * @create: create it (and runs/, 0700) when missing.
 * The runs live in berth_state_path("runs") (util/rundir.h).
 * Returns 0, or -1 with @err filled: no absolute XDG_STATE_HOME nor home
 * (status 2), an invalid @run_id (2), mkdir(2) failed, or with !@create a
 * run that does not exist (ENOENT, status 2).
 */
int berth_run_dir(const char *run_id, bool create, char out[PATH_MAX], struct berth_error *err);

/*
 * berth_run_write_json - write @v as RUN/@name, 0600, atomically
 * (O_EXCL temporary, rename(2)).
 * Returns 0, or -1 with @err filled (nothing half-written remains).
 */
int berth_run_write_json(const char *run_id, const char *name, const json_t *v, struct berth_error *err);

/*
 * berth_run_read_json - read RUN/@name.  Returns a new reference, or NULL
 * with @err filled (missing file: status 2; bad JSON: the line and column).
 */
json_t *berth_run_read_json(const char *run_id, const char *name, struct berth_error *err);

/*
 * berth_run_set_last / berth_run_get_last - runs/last: the id of the newest
 * run.  get returns -1 with @err filled (status 2) when there is none.
 */
int berth_run_set_last(const char *run_id, struct berth_error *err);
int berth_run_get_last(char id[17], struct berth_error *err);

/*
 * berth_run_get_last_own - the newest run started from the caller's login:
 * set_last also writes runs/last.login-UID, UID the login uid
 * (/proc/self/loginuid, kept across sudo and su), so that two people who
 * are root with the same HOME do not get each other's run.  Without a login
 * uid (unset: a service, a container) this is berth_run_get_last().
 * Returns 0, or -1 with @err filled (status 2: none of this login's).
 */
int berth_run_get_last_own(char id[17], struct berth_error *err);

/* How many run directories berth keeps by default ($BERTH_RUNS_KEEP). */
#define BERTH_RUNS_KEEP 1000

/*
 * berth_run_prune - when runs/ holds more than @keep run directories
 * (counted in O(1) from its link count, st_nlink - 2, on filesystems that
 * keep it), remove the oldest (by the mtime of their run.json) down to
 * @keep.  @keep 0: keep everything.  The audit trail keeps their records.
 * Returns the number removed, or -1 with @err filled.
 */
int berth_run_prune(unsigned long keep, struct berth_error *err);

/* berth_run_id_valid - 16 lowercase hex digits. */
bool berth_run_id_valid(const char *id);

/* ---- the run record of `berth run` ---- */
struct berth_policy;
struct berth_measure;
struct berth_audit;

/*
 * berth_run_record_start - create RUN/ and write run.json for @p (berth
 * version, host kernel and architecture, start time, the policy as
 * berth_policy_to_json() gives it (environment values never appear) and its
 * digest, @evidence (NULL: none)) and point runs/last at it.
 * Returns 0, or -1 with @err filled.
 */
int berth_run_record_start(const char *run_id, const struct berth_policy *p, const json_t *evidence,
			   struct berth_error *err);

/*
 * berth_run_record_discard - take back what berth_run_record_start() and
 * berth_run_record_enforced() wrote for a run whose command never started
 * (the audit trail refused it): RUN/run.json, RUN/enforced.json, RUN/ itself
 * when nothing else is in it (an evidence copy and its manifest stay, with
 * their audit record), and runs/last back to @prev_last (the id it held
 * before; "" or NULL: none) when it names @run_id.  Best effort, no error:
 * the caller is already reporting why the run failed.
 */
void berth_run_record_discard(const char *run_id, const char *prev_last);

/*
 * berth_run_record_enforced - write RUN/enforced.json from @m
 * (berth_measure_to_json) and, when @audit is not NULL, append it to the
 * audit trail as kind "enforced", actor "berth".
 * Returns 0, or -1 with @err filled (the caller fails the run closed).
 */
int berth_run_record_enforced(const char *run_id, const struct berth_policy *p, const struct berth_measure *m,
			      struct berth_audit *audit, struct berth_error *err);

/*
 * berth_run_record_end - add "ended" and "exit_status" (@status) to
 * run.json.  Returns 0, or -1 with @err filled.
 */
int berth_run_record_end(const char *run_id, int status, struct berth_error *err);

#endif
