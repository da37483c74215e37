/* SPDX-License-Identifier: MIT */
/*
 * limits_cgroup.c - the run's cgroups (limits.c chooses the mode): made
 * below the caller's cgroup in the v2 hierarchy or in the v1 memory, pids
 * and cpu hierarchies, the limits written to them, the sandbox moved in,
 * its OOM kills read, and everything killed and removed at the end.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* meson passes -D_GNU_SOURCE; this is for standalone builds */
#endif
#include "limits_int.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/crash.h"
#include "../util/journal.h"
#include "../util/sys.h"

#define CG_MIN_QUOTA_US 1000ULL /* smallest quota the kernel accepts */
#define CG_DRAIN_MS 2000        /* how long destroy waits for members to die */
#define CG_POLL_MS 10
#define CG_MAX_DEPTH 16 /* nested cgroups destroy descends into */

/* ---- file helpers ---------------------------------------------------- */

/* set_file - write @val to @dir/@name, with a message naming both on failure. */
static int set_file(const char *dir, const char *name, const char *val, struct berth_error *err)
{
	char path[PATH_MAX];
	int r = berth_lim_path_join(path, sizeof path, dir, name);

	if (r == 0)
		r = berth_lim_write_str(path, val);
	if (r < 0)
		return berth_err(err, -r, "cannot write `%s` to `%s/%s`", val, dir, name);
	return 0;
}

/* file_exists - whether @dir/@name exists. */
static bool file_exists(const char *dir, const char *name)
{
	char path[PATH_MAX];

	return berth_lim_path_join(path, sizeof path, dir, name) == 0 && access(path, F_OK) == 0;
}

/* fmt_limit - @v in decimal into @buf, or @unlimited when @v is 0. */
static const char *fmt_limit(char *buf, size_t size, unsigned long long v, const char *unlimited)
{
	if (v == 0)
		return unlimited;
	snprintf(buf, size, "%llu", v);
	return buf;
}

/* cpu_quota_us - CPU bandwidth quota per CG_PERIOD_US for @millicpus. */
static unsigned long long cpu_quota_us(uint32_t millicpus)
{
	unsigned long long q = (unsigned long long)millicpus * CG_PERIOD_US / 1000ULL;

	return (q < CG_MIN_QUOTA_US ? CG_MIN_QUOTA_US : q) + berth_limits_test_skew("cpu", 1000);
}

/* ---- creating and removing directories ------------------------------ */

/*
 * make_run_dir - create @parent/berth-@run_id and record it in @lim->dirs
 * (once: co-mounted v1 hierarchies share a directory).
 * Returns TRY_OK, TRY_UNAVAILABLE (not allowed here: fall back), or
 * TRY_FAILED with @err filled.
 */
static int make_run_dir(const char *parent, const char *run_id, struct berth_limits *lim, char *out,
			size_t size, struct berth_error *err)
{
	int n = snprintf(out, size, "%s/berth-%s", parent, run_id);

	if (n < 0 || (size_t)n >= size)
		return berth_err(err, ENAMETOOLONG, "cannot create cgroup `%s/berth-%s`", parent, run_id);
	for (int i = 0; i < lim->n_dirs; i++) {
		if (strcmp(lim->dirs[i], out) == 0)
			return TRY_OK;
	}
	if (lim->n_dirs >= BERTH_CG_MAX_DIRS)
		return berth_err(err, E2BIG, "too many cgroup directories at `%s`", out);
	/* Named in the run journal first: a berth killed after the mkdir
	 * leaves a directory the next berth removes (util/journal.h). */
	if (berth_journal_note(lim->journal, "cgroup", out, err) < 0)
		return TRY_FAILED;
	if (mkdir(out, 0755) < 0) {
		if (errno == EACCES || errno == EPERM || errno == EROFS || errno == ENOENT)
			return TRY_UNAVAILABLE;
		if (errno == EEXIST)
			return berth_err(err, EEXIST, "cgroup `%s` already exists", out);
		return berth_err(err, errno, "cannot create cgroup `%s`", out);
	}
	lim->dirs[lim->n_dirs] = strdup(out);
	if (lim->dirs[lim->n_dirs] == NULL) {
		rmdir(out);
		return berth_err(err, ENOMEM, "cannot record cgroup `%s`", out);
	}
	lim->n_dirs++;
	berth_crash_point("run.cgroup");
	return TRY_OK;
}

/* sleep_ms - sleep for @ms milliseconds. */
static void sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/*
 * kill_procs - SIGKILL every process listed in @dir/cgroup.procs (never the
 * caller).  Returns the number of processes listed (0: empty or gone).
 */
static int kill_procs(const char *dir)
{
	char path[PATH_MAX];
	cleanup_fclose FILE *f = NULL;
	pid_t self = getpid();
	int pid, n = 0;

	if (berth_lim_path_join(path, sizeof path, dir, "cgroup.procs") < 0)
		return 0;
	f = fopen(path, "re");
	if (f == NULL)
		return 0;
	while (fscanf(f, "%d", &pid) == 1) {
		n++;
		if (pid > 0 && pid != self)
			kill(pid, SIGKILL);
	}
	return n;
}

/*
 * drain - kill the members of @dir until cgroup.procs is empty, for at most
 * CG_DRAIN_MS.  Returns 0 when empty, -1 on timeout.
 */
static int drain(const char *dir)
{
	long long deadline = berth_now_ms() + CG_DRAIN_MS;

	while (kill_procs(dir) > 0) {
		if (berth_now_ms() >= deadline)
			return -1;
		sleep_ms(CG_POLL_MS);
	}
	return 0;
}

/* cgroup_kill - write 1 to @dir/cgroup.kill (cgroup v2, Linux 5.14+). */
static int cgroup_kill(const char *dir)
{
	char path[PATH_MAX];

	if (berth_lim_path_join(path, sizeof path, dir, "cgroup.kill") < 0)
		return -1;
	return berth_lim_write_str(path, "1") < 0 ? -1 : 0;
}

/*
 * remove_tree - kill everything in the cgroup at @buf (cgroup.kill when the
 * kernel has it, which covers the subtree), remove its child cgroups, wait
 * until it is empty and rmdir it.  @buf (PATH_MAX bytes) is used as scratch
 * and restored.  Returns 0 if gone (or already absent), -1 if it remains.
 */
static int remove_tree(char *buf, int depth)
{
	size_t len = strlen(buf);
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (access(buf, F_OK) < 0 && errno == ENOENT)
		return 0;
	if (cgroup_kill(buf) < 0)
		kill_procs(buf);
	d = depth < CG_MAX_DEPTH ? opendir(buf) : NULL;
	while (d != NULL && (e = readdir(d)) != NULL) {
		if (e->d_type != DT_DIR || strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if ((size_t)snprintf(buf + len, PATH_MAX - len, "/%s", e->d_name) < PATH_MAX - len &&
		    remove_tree(buf, depth + 1) < 0)
			rc = -1;
		buf[len] = '\0';
	}
	if (d != NULL)
		closedir(d);
	if (drain(buf) < 0)
		rc = -1;
	if (rmdir(buf) < 0 && errno != ENOENT)
		rc = -1;
	return rc;
}

/* remove_cgroup - remove the cgroup at @dir as remove_tree does. */
static int remove_cgroup(const char *dir)
{
	char buf[PATH_MAX];
	int n = snprintf(buf, sizeof buf, "%s", dir);

	if (n < 0 || (size_t)n >= sizeof buf)
		return -1;
	return remove_tree(buf, 0);
}

/* berth_lim_discard - undo a failed attempt: remove and forget every directory. */
void berth_lim_discard(struct berth_limits *lim)
{
	const struct berth_journal *journal = lim->journal;

	berth_limits_destroy(lim);
	for (int i = 0; i < lim->n_dirs; i++)
		free(lim->dirs[i]);
	memset(lim, 0, sizeof *lim);
	lim->journal = journal;
}

/* ---- cgroup v2 ------------------------------------------------------ */

/*
 * enable_controller - make controller @name available to the children of
 * @dir through its cgroup.subtree_control.  *@changed tells whether this
 * call enabled it.  Fails (e.g. EBUSY) when @dir has member processes and
 * is not the root: the "no internal processes" rule.  Returns 0 or -1.
 */
static int enable_controller(const char *dir, const char *name, bool *changed)
{
	char path[PATH_MAX], cur[512], val[64];

	*changed = false;
	if (berth_lim_path_join(path, sizeof path, dir, "cgroup.subtree_control") < 0 ||
	    berth_lim_read_str(path, cur, sizeof cur) < 0)
		return -1;
	if (berth_lim_has_token(cur, name, ' '))
		return 0;
	snprintf(val, sizeof val, "+%s", name);
	if (berth_lim_write_str(path, val) < 0)
		return -1;
	*changed = true;
	return 0;
}

/* disable_changed - undo enable_controller for the first @n of @names. */
static void disable_changed(const char *dir, const char *const *names, size_t n, const bool *changed)
{
	char path[PATH_MAX], val[64];

	if (berth_lim_path_join(path, sizeof path, dir, "cgroup.subtree_control") < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		if (!changed[i])
			continue;
		snprintf(val, sizeof val, "-%s", names[i]);
		berth_lim_write_str(path, val);
	}
}

/* write_v2 - write memory.max, memory.swap.max, pids.max and cpu.max. */
static int write_v2(const struct berth_policy *p, const char *dir, bool cpu, struct berth_limits *lim,
		    struct berth_error *err)
{
	char v[64];

	if (set_file(dir, "memory.max",
		     fmt_limit(v, sizeof v, p->memory + berth_limits_test_skew("memory", 1 << 20), "max"),
		     err) < 0 ||
	    set_file(dir, "pids.max",
		     fmt_limit(v, sizeof v, p->pids + berth_limits_test_skew("pids", 1), "max"), err) < 0)
		return -1;
	lim->memory_enforced = lim->pids_enforced = true;
	if (file_exists(dir, "memory.swap.max")) {
		if (set_file(dir, "memory.swap.max", "0", err) < 0)
			return -1;
		lim->swap_off = true;
	}
	if (!cpu)
		return 0;
	if (p->millicpus == 0)
		snprintf(v, sizeof v, "max %llu", CG_PERIOD_US);
	else
		snprintf(v, sizeof v, "%llu %llu", cpu_quota_us(p->millicpus), CG_PERIOD_US);
	if (set_file(dir, "cpu.max", v, err) < 0)
		return -1;
	lim->cpus_enforced = true;
	return 0;
}

/*
 * try_v2_at - one cgroup v2 directory below @parent, with memory, pids and
 * (when available) cpu.  @need_cpu: give up without cpu.
 */
static int try_v2_at(const struct berth_policy *p, const char *parent, const char *run_id, bool need_cpu,
		     struct berth_limits *lim, struct berth_error *err)
{
	static const char *const names[] = {"memory", "pids", "cpu"};
	char path[PATH_MAX], avail[512], dir[PATH_MAX];
	bool changed[3] = {false, false, false}, cpu;
	int r;

	if (berth_lim_path_join(path, sizeof path, parent, "cgroup.controllers") < 0 ||
	    berth_lim_read_str(path, avail, sizeof avail) < 0)
		return TRY_UNAVAILABLE;
	cpu = berth_lim_has_token(avail, "cpu", ' ');
	if (!berth_lim_has_token(avail, "memory", ' ') || !berth_lim_has_token(avail, "pids", ' ') ||
	    (need_cpu && !cpu))
		return TRY_UNAVAILABLE;
	for (size_t i = 0; i < (cpu ? 3U : 2U); i++) {
		if (enable_controller(parent, names[i], &changed[i]) == 0)
			continue;
		if (i == 2 && !need_cpu) {
			cpu = false;
			break;
		}
		disable_changed(parent, names, i, changed);
		return TRY_UNAVAILABLE;
	}
	lim->mode = BERTH_LIMITS_CGROUP2;
	r = make_run_dir(parent, run_id, lim, dir, sizeof dir, err);
	if (r == TRY_OK && write_v2(p, dir, cpu, lim, err) < 0)
		r = TRY_FAILED;
	if (r != TRY_OK) {
		berth_lim_discard(lim);
		disable_changed(parent, names, 3, changed);
		return r;
	}
	berth_lim_appendf(lim->how, sizeof lim->how, "cgroup v2 %s%s (memory, pids%s)%s",
			  geteuid() != 0 ? "delegated " : "", dir, cpu ? ", cpu" : "",
			  lim->swap_off ? "" : "; swap not limited: no memory.swap.max");
	if (!cpu)
		berth_lim_add_unenforced(lim, "cpus (no cpu controller in cgroup v2)");
	return TRY_OK;
}

/*
 * berth_lim_try_cgroup2 - root: the caller's own v2 cgroup.  Unprivileged: the
 * nearest cgroup delegated to it (berth_limits_v2_delegated), then the next
 * one up if that fails, up to the first that is not the caller's.  Root
 * stays in its own cgroup: every directory is root's, and a walk would
 * reach cgroups that belong to the service manager.  @need_cpu: only a
 * cgroup with the cpu controller will do.
 */
int berth_lim_try_cgroup2(const struct berth_policy *p, const char *run_id, bool need_cpu,
			  struct berth_limits *lim, struct berth_error *err)
{
	char dir[PATH_MAX], cand[PATH_MAX];
	size_t mnt_len = 0;
	int r;

	if (berth_lim_cgroup_dir_at(NULL, dir, sizeof dir, &mnt_len) < 0)
		return TRY_UNAVAILABLE;
	if (geteuid() == 0)
		return try_v2_at(p, dir, run_id, need_cpu, lim, err);
	while (berth_limits_v2_delegated(dir, mnt_len, cand, sizeof cand) == 0) {
		r = try_v2_at(p, cand, run_id, need_cpu, lim, err);
		if (r != TRY_UNAVAILABLE)
			return r;
		memcpy(dir, cand, sizeof dir);
		if (!berth_lim_up(dir, mnt_len))
			break;
	}
	return TRY_UNAVAILABLE;
}

/* ---- cgroup v1 ------------------------------------------------------ */

/*
 * write_v1 - memory.limit_in_bytes and memory.memsw.limit_in_bytes (swap
 * off) or, without swap accounting, memory.swappiness 0 in @mem; pids.max in
 * @pids; cpu.cfs_period_us and cpu.cfs_quota_us in @cpu (may be NULL).
 */
static int write_v1(const struct berth_policy *p, const char *mem, const char *pids, const char *cpu,
		    struct berth_limits *lim, struct berth_error *err)
{
	char v[64], mv[64];
	const char *m = fmt_limit(mv, sizeof mv, p->memory + berth_limits_test_skew("memory", 1 << 20), "-1");

	/* limit first: memsw must never be below it */
	if (set_file(mem, "memory.limit_in_bytes", m, err) < 0)
		return -1;
	if (file_exists(mem, "memory.memsw.limit_in_bytes")) {
		if (set_file(mem, "memory.memsw.limit_in_bytes", m, err) < 0)
			return -1;
		lim->swap_off = true;
	} else if (set_file(mem, "memory.swappiness", "0", err) < 0) {
		return -1;
	}
	if (set_file(pids, "pids.max",
		     fmt_limit(v, sizeof v, p->pids + berth_limits_test_skew("pids", 1), "max"), err) < 0)
		return -1;
	lim->memory_enforced = lim->pids_enforced = true;
	if (cpu == NULL)
		return 0;
	snprintf(v, sizeof v, "%llu", CG_PERIOD_US);
	if (set_file(cpu, "cpu.cfs_period_us", v, err) < 0 ||
	    set_file(cpu, "cpu.cfs_quota_us",
		     fmt_limit(v, sizeof v, p->millicpus ? cpu_quota_us(p->millicpus) : 0, "-1"), err) < 0)
		return -1;
	lim->cpus_enforced = true;
	return 0;
}

/*
 * berth_lim_try_cgroup1 - directories in the v1 memory, pids and (when there is one
 * we can write) cpu hierarchies, below the caller's cgroup in each.
 */
int berth_lim_try_cgroup1(const struct berth_policy *p, const char *run_id, struct berth_limits *lim,
			  struct berth_error *err)
{
	char mem[PATH_MAX], pids[PATH_MAX], cpu[PATH_MAX];
	char dmem[PATH_MAX], dpids[PATH_MAX], dcpu[PATH_MAX];
	bool has_cpu;
	int r;

	if (berth_lim_cgroup_dir("memory", mem, sizeof mem) < 0 ||
	    berth_lim_cgroup_dir("pids", pids, sizeof pids) < 0)
		return TRY_UNAVAILABLE;
	has_cpu = berth_lim_cgroup_dir("cpu", cpu, sizeof cpu) == 0;
	lim->mode = BERTH_LIMITS_CGROUP1;
	r = make_run_dir(mem, run_id, lim, dmem, sizeof dmem, err);
	if (r == TRY_OK)
		r = make_run_dir(pids, run_id, lim, dpids, sizeof dpids, err);
	if (r == TRY_OK && has_cpu) {
		r = make_run_dir(cpu, run_id, lim, dcpu, sizeof dcpu, err);
		has_cpu = r == TRY_OK;
		r = r == TRY_UNAVAILABLE ? TRY_OK : r;
	}
	if (r == TRY_OK && write_v1(p, dmem, dpids, has_cpu ? dcpu : NULL, lim, err) < 0)
		r = TRY_FAILED;
	if (r != TRY_OK) {
		berth_lim_discard(lim);
		return r;
	}
	snprintf(lim->how, sizeof lim->how, "cgroup v1 (memory, pids%s)%s", has_cpu ? ", cpu" : "",
		 lim->swap_off ? "" : "; swappiness 0, swap not limited: no memory.memsw");
	if (!has_cpu)
		berth_lim_add_unenforced(lim, "cpus (no writable cpu hierarchy in cgroup v1)");
	return TRY_OK;
}

/* ---- the run ------------------------------------------------------ */

int berth_limits_attach(const struct berth_limits *lim, pid_t pid, struct berth_error *err)
{
	char v[32];

	snprintf(v, sizeof v, "%d", (int)pid);
	for (int i = 0; i < lim->n_dirs; i++) {
		if (lim->dirs[i] != NULL && set_file(lim->dirs[i], "cgroup.procs", v, err) < 0)
			return -1;
	}
	return 0;
}

long long berth_limits_oom_kills(const struct berth_limits *lim)
{
	static const char *const files[] = {"memory.events", "memory.oom_control"};
	long long total = -1;

	if (lim->mode != BERTH_LIMITS_CGROUP2 && lim->mode != BERTH_LIMITS_CGROUP1)
		return -1;
	for (int i = 0; i < lim->n_dirs; i++)
		for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
			char path[PATH_MAX], line[128];
			long long v;
			snprintf(path, sizeof path, "%s/%s", lim->dirs[i], files[f]);
			cleanup_fclose FILE *fp = fopen(path, "re");
			if (fp == NULL)
				continue;
			while (fgets(line, sizeof line, fp) != NULL)
				if (sscanf(line, "oom_kill %lld", &v) == 1)
					total = (total < 0 ? 0 : total) + v;
		}
	return total;
}

int berth_limits_destroy(struct berth_limits *lim)
{
	int kept = 0;

	for (int i = 0; i < lim->n_dirs; i++) {
		if (lim->dirs[i] == NULL)
			continue;
		if (remove_cgroup(lim->dirs[i]) == 0)
			free(lim->dirs[i]);
		else
			lim->dirs[kept++] = lim->dirs[i];
	}
	for (int i = kept; i < BERTH_CG_MAX_DIRS; i++)
		lim->dirs[i] = NULL;
	lim->n_dirs = kept;
	return kept;
}

int berth_limits_cleanup_dirs(char *const dirs[], int n)
{
	int left = 0;

	for (int i = 0; i < n; i++) {
		if (dirs[i] != NULL && remove_cgroup(dirs[i]) < 0)
			left++;
	}
	return left;
}
