/* SPDX-License-Identifier: MIT */
/*
 * orphans.h - runs whose supervisor died (issue 15): every audited run
 * (`berth run`, an app's boot, a session; src/supervisor/run.c) repairs,
 * before it starts, what every run whose journal (util/journal.h) it can
 * lock left behind, and records in the audit trail that the run ended
 * (docs/audit.md, "run.stop"; docs/security.md "When berth is killed").
 */
#ifndef BERTH_ORPHANS_H
#define BERTH_ORPHANS_H

#include "../util/error.h"

/* The `ended` member of the run.stop record berth writes for a run whose
 * supervisor died before writing one (docs/audit.md). */
#define BERTH_RUN_ENDED_SUPERVISOR_DIED "supervisor died"

/*
 * berth_run_sweep - for each run journal whose supervisor is gone: kill what
 * is left in its cgroups and remove them, do the end-of-run trust scan its
 * janitor did not (no "trust-done" line: berth_trust_repair, the roots by
 * their real paths only), remove its --evidence copy, remove
 * its run directory when the run never got a run.json (keeping an
 * evidence.json that the audit trail has an evidence.ingest record of),
 * and, when its audit log has its run.start and no run.stop, append
 * run.stop {"status": null, "duration_ms": null, "ended": "supervisor died",
 * "supervisor_pid": PID}.  Only what berth makes for the run is taken from
 * a journal (a cgroup `berth-RUN_ID`, or `berth-check-PID-MS` of the
 * journal's pid, on a cgroup file system by its real
 * path, runs/RUN_ID and its evidence/, an audit directory that is berth's
 * or holds an audit log): anything else it names is left alone, named in a
 * notice, and a foreign audit directory is not written.  A run whose journal is still locked (its
 * supervisor or janitor alive) is never touched; one another berth is
 * repairing is skipped.  A repair that could not finish (a cgroup that
 * stays, an audit log that cannot be written) keeps the journal for the next
 * berth.  @notice (may be NULL) gets one line per run repaired or kept.
 * Returns the number of runs repaired, or -1 with @err filled (the journals
 * cannot be listed).
 */
int berth_run_sweep(void (*notice)(void *arg, const char *line), void *arg, struct berth_error *err);

#endif
