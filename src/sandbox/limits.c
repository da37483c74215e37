/* SPDX-License-Identifier: MIT */
/*
 * limits.c - resource limits: cgroup v2, cgroup v1, or rlimits.  This file
 * chooses the mode and holds rlimit mode and what the child applies; the
 * cgroups are made and removed in limits_cgroup.c, found in limits_find.c.
 *
 * The run's cgroup is created below the caller's own cgroup in each
 * hierarchy (read from /proc/self/cgroup), located through the cgroup mounts
 * in /proc/self/mountinfo, never through hard-coded paths.
 *
 * Preference, first that works:
 *   1. cgroup v2 with memory, pids and cpu available to the caller's cgroup
 *      (enabling them in its cgroup.subtree_control if needed) or, for an
 *      unprivileged caller, to the nearest ancestor delegated to it;
 *   2. cgroup v1 with writable memory and pids hierarchies (cpu optional);
 *   3. cgroup v2 with memory and pids only;
 *   4. rlimits: RLIMIT_NPROC and a CPU-affinity mask, and NO memory limit.
 * "Works" means the directory could be created: an unprivileged caller gets
 * cgroups only when a cgroup is delegated to it.
 *
 * Delegated (cgroup-v2.rst, "Delegation Containment"): a process may move
 * another from cgroup A to B only with write access to cgroup.procs of the
 * common ancestor of A and B.  The run's cgroup is therefore made below a
 * cgroup whose directory, cgroup.procs and cgroup.subtree_control belong to
 * the caller and that contains the caller's cgroup: the nearest such one,
 * from the caller's own up, that can give memory and pids to a child (no
 * member process, or it gives them already; berth itself is a member of its
 * own cgroup, so that is usually an ancestor) -- as systemd delegates
 * user@UID.service (init.scope and app.slice beside each other, owned by
 * the user) and `systemd-run --user --scope -p Delegate=yes`.  berth writes
 * to no cgroup file the caller does not own: the walk stops at the first
 * cgroup that is not (berth_limits_v2_delegated).  A delegated subtree the caller is not inside (the
 * user manager's, seen from an ssh session's scope) is of no use: moving a
 * process there needs the root-owned user-UID.slice; berth says so in
 * `berth doctor` instead of asking systemd over D-Bus for a scope.
 *
 * Memory in rlimit mode: RLIMIT_AS bounds address space, not memory.  The
 * runtimes agents are written in reserve far more than they use (Bun and
 * JavaScriptCore's gigacage, V8's pointer-compression cages, Go's arenas,
 * Java's heap reservation, all MAP_NORESERVE): under --memory 2G as
 * RLIMIT_AS, Claude Code's runtime died of SIGILL.  So rlimit mode sets no
 * memory limit.  A limit the user asked for with --memory is refused
 * (exit 2) unless --allow-degraded, which runs without it and lists it as
 * not enforced; the default limit and an app's declared one are not applied
 * and named as not enforced in the one-line `how`.
 *
 * Value 0 in the policy for memory, pids or CPUs means "no limit".
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* meson passes -D_GNU_SOURCE; this is for standalone builds */
#endif
#include "limits_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/crash.h"
#include "../util/sys.h"

#define RUN_ID_MAX 64

/* ---- small string and file helpers ---------------------------------- */

/* berth_lim_appendf - append formatted text to the NUL-terminated @buf (truncating). */
void berth_lim_appendf(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

/* berth_lim_add_unenforced - add one item to the comma-separated @lim->unenforced. */
void berth_lim_add_unenforced(struct berth_limits *lim, const char *what)
{
	berth_lim_appendf(lim->unenforced, sizeof lim->unenforced, "%s%s", lim->unenforced[0] ? ", " : "",
			  what);
}

/* berth_lim_has_token - whether @tok is one of the @sep-separated words of @list. */
bool berth_lim_has_token(const char *list, const char *tok, char sep)
{
	size_t n = strlen(tok);

	for (const char *s = list; s != NULL; s = strchr(s, sep), s = s ? s + 1 : NULL) {
		if (strncmp(s, tok, n) == 0 && (s[n] == sep || s[n] == '\0' || s[n] == '\n'))
			return true;
	}
	return false;
}

/* berth_lim_path_join - "@dir/@name" into @out; returns 0 or -ENAMETOOLONG. */
int berth_lim_path_join(char *out, size_t size, const char *dir, const char *name)
{
	int n = snprintf(out, size, "%s/%s", dir, name);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* berth_lim_write_str - write @val to @path in one write(2); returns 0 or -errno. */
int berth_lim_write_str(const char *path, const char *val)
{
	cleanup_close int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t n = strlen(val);
	ssize_t w;

	if (fd < 0)
		return -errno;
	w = write(fd, val, n);
	if (w < 0)
		return -errno;
	return (size_t)w == n ? 0 : -EIO;
}

/* berth_lim_read_str - read up to @size-1 bytes of @path into @buf; returns 0 or -errno. */
int berth_lim_read_str(const char *path, char *buf, size_t size)
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = read(fd, buf, size - 1);
	if (r < 0)
		return -errno;
	buf[r] = '\0';
	return 0;
}

/* ---- rlimits -------------------------------------------------------- */

/* usable_cpus - number of CPUs in the caller's affinity mask. */
static int usable_cpus(void)
{
	cpu_set_t set;
	long n;

	if (sched_getaffinity(0, sizeof set, &set) == 0)
		return CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

/* fmt_size - @v bytes as the shortest exact --memory spelling ("2G", "640M", "12345"). */
static const char *fmt_size(char *buf, size_t size, unsigned long long v)
{
	static const char units[] = "KMGT";
	int u = -1;

	while (u < 3 && v != 0 && v % 1024 == 0) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, size, "%llu", v);
	else
		snprintf(buf, size, "%llu%c", v, units[u]);
	return buf;
}

/* Why rlimit mode has no memory limit, for messages. */
#define NO_AS_WHY                                                                                            \
	"only an address-space rlimit (RLIMIT_AS) is available, which counts reserved address space, "       \
	"not memory, and kills runtimes that reserve large ranges (Bun/JavaScriptCore, Node/V8, Go, Java)"

/*
 * setup_rlimits - rlimit mode: RLIMIT_NPROC for pids (counted per user
 * namespace since Linux 5.14; never applied to real root or
 * CAP_SYS_RESOURCE holders), ceil(millicpus / 1000) CPUs of affinity, and
 * no memory limit (see the top of this file).  A --memory the caller gave
 * reaches here only with --allow-degraded: it is listed in @lim->unenforced.
 */
static void setup_rlimits(const struct berth_policy *p, struct berth_limits *lim)
{
	int online = usable_cpus();
	unsigned long long want = ((unsigned long long)p->millicpus + 999) / 1000;
	char cpus[96], mem[160], sz[32];

	lim->mode = BERTH_LIMITS_RLIMITS;
	lim->memory_enforced = false;
	lim->swap_off = false;
	lim->pids_enforced = getuid() != 0 && geteuid() != 0;
	lim->cpus_enforced = true;
	if (want > 0 && want < (unsigned long long)online) {
		lim->cpus_affinity = (int)want;
		snprintf(cpus, sizeof cpus, "%d of %d CPUs", lim->cpus_affinity, online);
	} else if (want == 0) {
		snprintf(cpus, sizeof cpus, "no limit");
	} else {
		snprintf(cpus, sizeof cpus, "%llu requested, %d available, not restricted", want, online);
	}
	if (p->memory == 0)
		snprintf(mem, sizeof mem, "memory: no limit asked");
	else if (berth_limits_memory_explicit(p))
		snprintf(mem, sizeof mem, "memory: not enforced (--allow-degraded)");
	else
		snprintf(mem, sizeof mem,
			 "memory: not enforced, %s %s limit not applied: RLIMIT_AS breaks runtimes",
			 p->app ? "the app's" : "the default", fmt_size(sz, sizeof sz, p->memory));
	snprintf(lim->how, sizeof lim->how, "rlimits (%s; RLIMIT_NPROC for pids; CPU affinity for cpus: %s)",
		 mem, cpus);
	if (p->memory != 0 && berth_limits_memory_explicit(p))
		berth_lim_add_unenforced(lim, "memory (" NO_AS_WHY ")");
	if (!lim->pids_enforced)
		berth_lim_add_unenforced(lim, "pids (RLIMIT_NPROC does not apply to root)");
}

/*
 * refuse_memory - the refusal of a --memory that rlimit mode cannot
 * enforce: usage error (exit 2), naming the value, why, and the ways out.
 */
static int refuse_memory(const struct berth_policy *p, struct berth_error *err)
{
	char sz[32], advice[BERTH_ERR_HINT_MAX];

	berth_usage_err(err, "--memory `%s` cannot be enforced: this caller has no writable cgroup, and %s",
			fmt_size(sz, sizeof sz, p->memory), NO_AS_WHY);
	/* The way to a cgroup that works on this machine (`berth doctor`'s):
	 * systemd-run cannot delegate a memory controller cgroup v1 holds. */
	berth_limits_advice(advice, sizeof advice);
	return berth_err_hint(err, "%.450s; or pass `--allow-degraded` to run without a memory limit",
			      advice);
}

/* ---- public interface ----------------------------------------------- */

/* check_run_id - @run_id must be 1..RUN_ID_MAX of [A-Za-z0-9._-]. */
static int check_run_id(const char *run_id, struct berth_error *err)
{
	static const char ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
	size_t n = run_id ? strlen(run_id) : 0;

	if (n == 0 || n > RUN_ID_MAX || strspn(run_id, ok) != n)
		return berth_err(err, EINVAL, "invalid run id `%s`", run_id ? run_id : "");
	return 0;
}

/*
 * refuse_unenforced - an explicit --cpus or --pids the mode chosen cannot
 * enforce is refused (125) unless --allow-degraded; what was made is
 * removed.  Returns 0 or -1 with @err filled.
 */
static int refuse_unenforced(const struct berth_policy *p, struct berth_limits *lim, struct berth_error *err)
{
	if (p->allow_degraded ||
	    !((p->cpus_set && !lim->cpus_enforced) || (p->pids_set && !lim->pids_enforced)))
		return 0;
	berth_limits_refuse(lim, err);
	berth_lim_discard(lim);
	return -1;
}

int berth_limits_refuse(const struct berth_limits *lim, struct berth_error *err)
{
	berth_err(err, 0, "cannot enforce the requested limits: %s", lim->unenforced);
	/* Root makes its cgroups in the host's cgroup v2 tree: missing, it is
	 * not the caller's identity that is wrong. */
	return berth_err_hint(err, geteuid() == 0
				       ? "mount the cgroup v2 hierarchy at /sys/fs/cgroup, or pass "
					 "`--allow-degraded`; see `berth doctor`"
				       : "run as root or in a delegated cgroup v2 subtree, or pass "
					 "`--allow-degraded`; see `berth doctor`");
}

/*
 * refuse_nproc - rlimit mode holds --pids as RLIMIT_NPROC, set in the
 * sandbox's user namespace, where no capability raises a hard limit: a
 * value above berth's own would fail after the run started (exit 125) and
 * pass --dry-run.  Refused here, for both (exit 2).
 */
static int refuse_nproc(const struct berth_policy *p, const struct berth_limits *lim, struct berth_error *err)
{
	struct rlimit rl;

	if (!lim->pids_enforced || p->pids == 0 || getrlimit(RLIMIT_NPROC, &rl) < 0 ||
	    rl.rlim_max == RLIM_INFINITY || (uint64_t)p->pids <= (uint64_t)rl.rlim_max)
		return 0;
	berth_usage_err(
	    err,
	    "invalid --pids `%u`: above berth's own hard RLIMIT_NPROC %llu (rlimit mode: no writable "
	    "cgroup), expected 2 to %llu here",
	    p->pids, (unsigned long long)rl.rlim_max, (unsigned long long)rl.rlim_max);
	return berth_err_hint(err, "give at most %llu, or run in a cgroup (see `berth doctor`)",
			      (unsigned long long)rl.rlim_max);
}

int berth_limits_prepare(const struct berth_policy *p, const char *run_id, bool force_rlimits,
			 struct berth_limits *lim, struct berth_error *err)
{
	return berth_limits_prepare_noted(p, run_id, force_rlimits, NULL, lim, err);
}

int berth_limits_prepare_noted(const struct berth_policy *p, const char *run_id, bool force_rlimits,
			       const struct berth_journal *journal, struct berth_limits *lim,
			       struct berth_error *err)
{
	int r = TRY_UNAVAILABLE;

	memset(lim, 0, sizeof *lim);
	(void)berth_limits_test_skew("", 0); /* reads the test build's switch while there is an environment */
	lim->journal = journal;
	if (check_run_id(run_id, err) < 0)
		return -1;
	if (!force_rlimits) {
		r = berth_lim_try_cgroup2(p, run_id, true, lim, err);
		if (r == TRY_UNAVAILABLE)
			r = berth_lim_try_cgroup1(p, run_id, lim, err);
		if (r == TRY_UNAVAILABLE)
			r = berth_lim_try_cgroup2(p, run_id, false, lim, err);
		if (r == TRY_FAILED)
			return -1;
	}
	if (r == TRY_UNAVAILABLE) {
		if (p->memory != 0 && berth_limits_memory_explicit(p) && !p->allow_degraded) {
			memset(lim, 0, sizeof *lim);
			return refuse_memory(p, err);
		}
		setup_rlimits(p, lim);
		if (refuse_nproc(p, lim, err) < 0)
			return -1;
	}
	return refuse_unenforced(p, lim, err);
}

bool berth_limits_memory_explicit(const struct berth_policy *p)
{
	return p->memory_set && !p->app;
}

int berth_limits_check(const struct berth_policy *p, bool force_rlimits, const struct berth_journal *journal,
		       struct berth_error *err)
{
	struct berth_limits lim;
	char id[32];
	int r;

	/* Only an explicit limit can be refused; nothing else needs the
	 * probe (a cgroup made and removed at once). */
	if (p->allow_degraded ||
	    !((p->memory != 0 && berth_limits_memory_explicit(p)) || p->cpus_set || p->pids_set))
		return 0;
	/* the time too: a probe left by a berth killed right here must not
	 * stand in the way of a later one with the same pid */
	snprintf(id, sizeof id, "check-%ld-%lld", (long)getpid(), (long long)berth_now_ms());
	r = berth_limits_prepare_noted(p, id, force_rlimits, journal, &lim, err);
	berth_crash_point("run.check_probe");
	if (r == 0) {
		berth_limits_destroy(&lim);
		for (int i = 0; i < lim.n_dirs; i++)
			free(lim.dirs[i]);
	}
	return r;
}

int berth_limits_test_skew_check(struct berth_error *err)
{
#ifdef BERTH_CRASH_POINTS
	static const char *const known[] = {"memory", "pids", "cpu", "nofile", "tmp"};
	const char *s = getenv("BERTH_TEST_LIMIT_SKEW");

	if (s == NULL || s[0] == '\0')
		return 0;
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (strcmp(s, known[i]) == 0)
			return 0;
	berth_usage_err(err, "unknown BERTH_TEST_LIMIT_SKEW `%s`", s);
	return berth_err_hint(err, "use one of memory, pids, cpu, nofile, tmp (or unset it)");
#else
	(void)err;
	return 0;
#endif
}

unsigned long long berth_limits_test_skew(const char *which, unsigned long long by)
{
#ifdef BERTH_CRASH_POINTS
	/* read once, in berth (berth_limits_prepare): the sandbox's child
	 * wipes its environment before it applies rlimits and mounts */
	static char name[16];
	static bool read;

	if (!read) {
		const char *s = getenv("BERTH_TEST_LIMIT_SKEW");
		snprintf(name, sizeof name, "%s", s != NULL ? s : "");
		read = true;
	}
	return strcmp(name, which) == 0 ? by : 0;
#else
	(void)which;
	(void)by;
	return 0;
#endif
}

/* set_rlimit - soft and hard limit of @res (named @name) to @v; no allocation. */
static int set_rlimit(int res, const char *name, unsigned long long v, struct berth_error *err)
{
	struct rlimit rl = {.rlim_cur = (rlim_t)v, .rlim_max = (rlim_t)v};
	struct rlimit cur;
	int e;

	if (setrlimit(res, &rl) == 0)
		return 0;
	e = errno;
	if (getrlimit(res, &cur) == 0 && cur.rlim_max != RLIM_INFINITY)
		return berth_err(err, e, "cannot set `%s` to `%llu` (hard limit `%llu`)", name, v,
				 (unsigned long long)cur.rlim_max);
	return berth_err(err, e, "cannot set `%s` to `%llu`", name, v);
}

/* restrict_affinity - keep only the first @n CPUs of the current mask. */
static int restrict_affinity(int n, struct berth_error *err)
{
	cpu_set_t cur, want;
	int kept = 0;

	if (sched_getaffinity(0, sizeof cur, &cur) < 0)
		return berth_err(err, errno, "cannot read the cpu affinity mask");
	CPU_ZERO(&want);
	for (int i = 0; i < CPU_SETSIZE && kept < n; i++) {
		if (CPU_ISSET(i, &cur)) {
			CPU_SET(i, &want);
			kept++;
		}
	}
	if (sched_setaffinity(0, sizeof want, &want) < 0)
		return berth_err(err, errno, "cannot restrict cpu affinity to `%d` cpus", n);
	return 0;
}

int berth_limits_apply_child(const struct berth_policy *p, const struct berth_limits *lim,
			     struct berth_error *err)
{
	if (p->nofile != 0 && set_rlimit(RLIMIT_NOFILE, "RLIMIT_NOFILE",
					 p->nofile - berth_limits_test_skew("nofile", 1), err) < 0)
		return -1;
	if (set_rlimit(RLIMIT_CORE, "RLIMIT_CORE", 0, err) < 0)
		return -1;
	if (lim->mode != BERTH_LIMITS_RLIMITS)
		return 0;
	/* no RLIMIT_AS: see the top of this file */
	if (p->pids != 0 && set_rlimit(RLIMIT_NPROC, "RLIMIT_NPROC", p->pids, err) < 0)
		return -1;
	if (lim->cpus_affinity > 0 && restrict_affinity(lim->cpus_affinity, err) < 0)
		return -1;
	return 0;
}
