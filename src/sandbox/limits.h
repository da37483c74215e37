/* SPDX-License-Identifier: MIT */
/*
 * limits.h - resource limits: cgroup v2, cgroup v1, or rlimits.
 *
 * Invoked by root: a cgroup per run, in the cgroup v2 hierarchy when the
 * controllers are available there, else in the cgroup v1 hierarchies
 * (memory, pids, cpu).  Invoked by an unprivileged user: a cgroup v2 subtree
 * delegated to it (its own cgroup or the nearest ancestor it owns), or
 * writable v1 hierarchies, else rlimits: RLIMIT_NPROC, a CPU-affinity mask
 * for --cpus (sched_setaffinity denied by seccomp) and NO memory limit --
 * RLIMIT_AS breaks runtimes that reserve address space, so an explicit
 * --memory is refused there unless --allow-degraded.  The mode chosen is
 * reported so the CLI can say which.
 * Sources: Documentation/admin-guide/cgroup-v2.rst, cgroup-v1/memory.rst,
 * cgroup-v1/pids.rst, scheduler/sched-bwc.rst; setrlimit(2).
 */
#ifndef BERTH_LIMITS_H
#define BERTH_LIMITS_H

#include <stdbool.h>
#include <sys/types.h>

#include "../policy/policy.h"
#include "../util/error.h"

struct berth_journal; /* util/journal.h */

enum berth_limits_mode {
	BERTH_LIMITS_NONE = 0,
	BERTH_LIMITS_CGROUP2, /* a cgroup v2 directory */
	BERTH_LIMITS_CGROUP1, /* cgroup v1 directories, one per controller */
	BERTH_LIMITS_RLIMITS, /* rlimits and affinity only */
};

#define BERTH_CG_MAX_DIRS 4

struct berth_limits {
	enum berth_limits_mode mode;
	char *dirs[BERTH_CG_MAX_DIRS]; /* cgroup directories created (to remove) */
	int n_dirs;
	/* What is enforced, for reporting/attestation (memory_enforced is
	 * false in rlimit mode: no memory limit there). */
	bool memory_enforced, swap_off, cpus_enforced, pids_enforced;
	char how[256];        /* one line: "cgroup v1 (memory, pids, cpu)" etc. */
	char unenforced[256]; /* what could not be applied, empty if none */
	int cpus_affinity;    /* >0: restrict to this many CPUs via affinity (rlimit mode) */
	/* berth_limits_prepare_noted's @journal: each cgroup directory is named
	 * there before its mkdir(2), or NULL (util/journal.h). */
	const struct berth_journal *journal;
};

/*
 * berth_limits_prepare - decide the mode and, for cgroups, create the run's
 * cgroup(s) named after @run_id and write the limits of @p into them
 * (memory.max / memory.swap.max = 0 / cpu.max / pids.max for v2;
 * memory.limit_in_bytes, memory.memsw.limit_in_bytes or swappiness 0,
 * cpu.cfs_quota_us, pids.max for v1).
 * @force_rlimits: test-only, act as if no cgroup were writable.
 * In rlimit mode no memory limit is set; the default memory limit and an
 * app's declared one are named as not enforced in @lim->how, and an
 * explicit --memory (berth_limits_memory_explicit) is listed in
 * @lim->unenforced with @p->allow_degraded, else refused; so is an explicit
 * --cpus or --pids the mode cannot enforce (listed in @lim->unenforced).
 * Runs in the parent before clone.  On failure nothing created is left.
 * berth_limits_prepare_noted does the same and names each cgroup directory
 * in @journal (util/journal.h; NULL: none) before it makes it.
 * Returns 0 or -1 with @err filled: status 2 (usage) when @p asks for an
 * explicit memory limit and only rlimits are available, the message naming
 * the value and the hint the ways out (a delegated cgroup through
 * `systemd-run --user --scope -p Delegate=yes`, root, --allow-degraded);
 * 125 when an explicit --cpus/--pids cannot be enforced ("cannot enforce
 * the requested limits: ...") or a cgroup could not be made or written
 * (message names the file).
 */
/*
 * berth_limits_refuse - fill @err with the refusal of limits asked for and
 * not enforceable: "cannot enforce the requested limits: " and
 * @lim->unenforced (what, and why), the hint naming the way out for this
 * caller (root: mount cgroup v2; a user: root or a delegated subtree; both:
 * --allow-degraded).  Status 125.  Returns -1.
 */
int berth_limits_refuse(const struct berth_limits *lim, struct berth_error *err);

int berth_limits_prepare(const struct berth_policy *p, const char *run_id, bool force_rlimits,
			 struct berth_limits *lim, struct berth_error *err);
int berth_limits_prepare_noted(const struct berth_policy *p, const char *run_id, bool force_rlimits,
			       const struct berth_journal *journal, struct berth_limits *lim,
			       struct berth_error *err);

/*
 * berth_limits_memory_explicit - whether @p's memory limit was asked for by
 * the caller (--memory), not the default nor an app manifest's.
 */
bool berth_limits_memory_explicit(const struct berth_policy *p);

/*
 * berth_limits_check - refuse, before anything is recorded or printed
 * (`berth run` and `berth run --dry-run` alike), a policy that
 * berth_limits_prepare would refuse for its limits.  Decides as prepare
 * does, by preparing under a run id of its own ("check-PID-MS") and destroying
 * at once, and only when @p has an explicit --memory, --cpus or --pids
 * without --allow-degraded (nothing else can be refused).  @journal (NULL:
 * none) names the probe's directories before they are made (util/journal.h).
 * Returns 0, or -1 with @err filled as berth_limits_prepare fills it.
 */
int berth_limits_check(const struct berth_policy *p, bool force_rlimits, const struct berth_journal *journal,
		       struct berth_error *err);

/*
 * berth_limits_attach - move @pid (the sandbox's init) into the run's
 * cgroup(s).  Runs in the parent after clone, before the child continues.
 * A no-op in rlimit mode.  Returns 0 or -1 with @err filled.
 */
int berth_limits_attach(const struct berth_limits *lim, pid_t pid, struct berth_error *err);

/*
 * berth_limits_v2_delegated - where an unprivileged caller's run cgroup can
 * go in cgroup v2: from the cgroup directory @start up, never above its
 * first @top bytes (the mount point), the nearest directory that is
 * delegated to the caller (it, its cgroup.procs and cgroup.subtree_control
 * owned by the effective uid), lists memory and pids in cgroup.controllers,
 * and either has no member process or already gives memory and pids to its
 * children in cgroup.subtree_control.  The walk stops at the first
 * directory that is not delegated.  Reads only.
 * Returns 0 with the directory in @out (@size bytes), or -1 if there is none.
 */
int berth_limits_v2_delegated(const char *start, size_t top, char *out, size_t size);

/*
 * berth_limits_placement_dirs - the directory of the cgroup @cgpath (an
 * absolute cgroup path, as an OCI bundle's `linux.cgroupsPath`: no `.` or
 * `..` component) in each mounted cgroup hierarchy (v1 controllers and
 * named hierarchies, and the v2 one) whose root shows it, one per mount
 * (a hierarchy mounted twice is named twice).  Reads /proc/self/mountinfo only; the directories need not
 * exist.  @dirs gets up to @max malloc'd paths (the caller frees them).
 * Returns how many, or -1 with errno (ENOMEM, or a read error).
 */
int berth_limits_placement_dirs(const char *cgpath, char **dirs, size_t max);

/*
 * berth_limits_advice - for `berth doctor` in rlimit mode: one sentence on
 * how this caller can get a cgroup (whether cgroup v2 holds the memory
 * controller, whether the systemd user manager delegates a subtree to the
 * caller).  Reads only.  Writes a NUL-terminated sentence into @buf.
 */
void berth_limits_advice(char *buf, size_t size);

/*
 * berth_limits_apply_child - in the child, right before exec: RLIMIT_NOFILE
 * from @p, RLIMIT_CORE 0, and in rlimit mode RLIMIT_NPROC (pids, counted per
 * user namespace) and the CPU affinity mask.  Never RLIMIT_AS.
 * Allocation-free.  Returns 0 or -1 with @err filled.
 */
/*
 * berth_limits_test_skew_check - in the test build, refuse a
 * BERTH_TEST_LIMIT_SKEW that names none of memory, pids, cpu, nofile, tmp
 * (once ignored: a misspelt switch made a test pass that skewed nothing).
 * Returns 0 (also in other builds, which never read it) or -1 with @err
 * filled (exit status 2) naming the value and the accepted ones.
 */
int berth_limits_test_skew_check(struct berth_error *err);

/*
 * berth_limits_test_skew - 0, or in the test build only (-Dcrash_points=true)
 * @by when BERTH_TEST_LIMIT_SKEW names @which (memory, pids, cpu, nofile,
 * tmp): what the writer of that limit adds to the value it gives the kernel
 * (a MiB, a task, a millisecond of quota, a file, a MiB of /tmp), so that
 * the kernel holds another value than the policy's and the attestation must
 * say PARTIAL (tests/integration/run-limits.sh).  Other builds never read
 * the environment.  Allocation-free (called in the child before exec).
 */
unsigned long long berth_limits_test_skew(const char *which, unsigned long long by);

int berth_limits_apply_child(const struct berth_policy *p, const struct berth_limits *lim,
			     struct berth_error *err);

/*
 * berth_limits_oom_kills - how many processes of the run the kernel's OOM
 * killer ended for reaching the memory limit: `oom_kill` of the run's
 * cgroup's memory.events (v2), or of memory.oom_control (v1, Linux >= 4.13).
 * Call before berth_limits_destroy().
 * Returns the count, 0 when none, or -1 when it cannot be known (rlimit
 * mode, no such file, an older kernel).
 */
long long berth_limits_oom_kills(const struct berth_limits *lim);

/*
 * berth_limits_destroy - kill whatever is left in the run's cgroup(s)
 * (cgroup.kill on v2, SIGKILL to each pid in cgroup.procs on v1), then
 * remove the directories.  Safe to call more than once.  Never fails loudly:
 * returns the number of directories it could not remove.
 */
int berth_limits_destroy(struct berth_limits *lim);

/*
 * berth_limits_cleanup_dirs - remove cgroup directories by path (used by the
 * janitor after berth itself was killed).  Same semantics as destroy.
 */
int berth_limits_cleanup_dirs(char *const dirs[], int n);

#endif
