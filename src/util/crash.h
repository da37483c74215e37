/* SPDX-License-Identifier: MIT */
/*
 * crash.h - named crash points for the crash-consistency tests (issue 15),
 * in the manner of SQLite's crash tests: every multi-step change berth makes
 * on the host marks the places between its steps with berth_crash_point(),
 * and tests/integration/run-crash.sh kills berth at each in turn, then
 * asserts that nothing is left behind and that the audit trail verifies or
 * names what happened.
 *
 * Only a build configured with `-Dcrash_points=true` (the test build of
 * tests/run) has them; in every other build berth_crash_point() is an empty
 * inline function and the environment below is never read.
 *
 * The environment of a crash-point build:
 *   BERTH_TEST_CRASH_AT=NAME[:N]  the Nth time (default 1) this process
 *                                 reaches the point NAME, it appends
 *                                 "NAME PID\n" to BERTH_TEST_CRASH_LOG (if
 *                                 set) and sends itself SIGKILL;
 *   BERTH_TEST_CRASH_TRACE=FILE   every point reached is appended to FILE
 *                                 as "NAME PID\n", and the run goes on (the
 *                                 harness learns which points a scenario
 *                                 passes).
 * Point names are `area.step` in lower case (`run.cgroup`,
 * `audit.quarantine`); each is written once in the source, as a string
 * literal, so that the harness can list them with grep.
 */
#ifndef BERTH_CRASH_H
#define BERTH_CRASH_H

#ifdef BERTH_CRASH_POINTS
/*
 * berth_crash_point - the place @name (a string literal, `area.step`) in a
 * multi-step change.  Returns only if this process is not to be killed here;
 * async-signal-safe apart from getenv(3) (no allocation, no stdio), so it
 * may be called in a child between fork(2) and exec.
 */
void berth_crash_point(const char *name);
#else
static inline void berth_crash_point(const char *name)
{
	(void)name;
}
#endif

#endif
