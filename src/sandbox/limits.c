/* SPDX-License-Identifier: MIT */
/*
 * limits.c - resource limits: cgroup v2, cgroup v1, or rlimits.
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
#include "limits.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../util/cleanup.h"

#define CG_PERIOD_US 100000ULL   /* cpu.max / cpu.cfs_period_us period */
#define CG_MIN_QUOTA_US 1000ULL  /* smallest quota the kernel accepts */
#define CG_DRAIN_MS 2000         /* how long destroy waits for members to die */
#define CG_POLL_MS 10
#define CG_MAX_DEPTH 16          /* nested cgroups destroy descends into */
#define RUN_ID_MAX 64

/* Outcome of one attempt at a mode. */
enum { TRY_OK = 0, TRY_UNAVAILABLE = 1, TRY_FAILED = -1 };

/* ---- small string and file helpers ---------------------------------- */

/* appendf - append formatted text to the NUL-terminated @buf (truncating). */
static void appendf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void appendf(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

/* add_unenforced - add one item to the comma-separated @lim->unenforced. */
static void add_unenforced(struct berth_limits *lim, const char *what)
{
	appendf(lim->unenforced, sizeof lim->unenforced, "%s%s", lim->unenforced[0] ? ", " : "",
		what);
}

/* has_token - whether @tok is one of the @sep-separated words of @list. */
static bool has_token(const char *list, const char *tok, char sep)
{
	size_t n = strlen(tok);

	for (const char *s = list; s != NULL; s = strchr(s, sep), s = s ? s + 1 : NULL) {
		if (strncmp(s, tok, n) == 0 && (s[n] == sep || s[n] == '\0' || s[n] == '\n'))
			return true;
	}
	return false;
}

/* path_join - "@dir/@name" into @out; returns 0 or -ENAMETOOLONG. */
static int path_join(char *out, size_t size, const char *dir, const char *name)
{
	int n = snprintf(out, size, "%s/%s", dir, name);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* write_str - write @val to @path in one write(2); returns 0 or -errno. */
static int write_str(const char *path, const char *val)
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

/* read_str - read up to @size-1 bytes of @path into @buf; returns 0 or -errno. */
static int read_str(const char *path, char *buf, size_t size)
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

/* set_file - write @val to @dir/@name, with a message naming both on failure. */
static int set_file(const char *dir, const char *name, const char *val, struct berth_error *err)
{
	char path[PATH_MAX];
	int r = path_join(path, sizeof path, dir, name);

	if (r == 0)
		r = write_str(path, val);
	if (r < 0)
		return berth_err(err, -r, "cannot write `%s` to `%s/%s`", val, dir, name);
	return 0;
}

/* file_exists - whether @dir/@name exists. */
static bool file_exists(const char *dir, const char *name)
{
	char path[PATH_MAX];

	return path_join(path, sizeof path, dir, name) == 0 && access(path, F_OK) == 0;
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

	return q < CG_MIN_QUOTA_US ? CG_MIN_QUOTA_US : q;
}

/* ---- locating the caller's cgroups ---------------------------------- */

/* unescape - decode the \ooo escapes of /proc/self/mountinfo in place. */
static void unescape(char *s)
{
	char *w = s;

	for (; *s; s++, w++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*w = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*w = *s;
		}
	}
	*w = '\0';
}

struct mnt {
	char *root, *point, *fstype, *super;
};

/*
 * parse_mountinfo - split one /proc/self/mountinfo @line in place:
 * "id parent maj:min root point opts [optional...] - fstype source super".
 * Returns 0 or -1 if malformed.
 */
static int parse_mountinfo(char *line, struct mnt *m)
{
	char *save = NULL, *tok;
	int i = 0;

	memset(m, 0, sizeof *m);
	for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save), i++) {
		if (i == 3)
			m->root = tok;
		else if (i == 4)
			m->point = tok;
		else if (i > 5 && strcmp(tok, "-") == 0)
			break;
	}
	if (tok == NULL || m->point == NULL)
		return -1;
	m->fstype = strtok_r(NULL, " \n", &save);
	if (m->fstype == NULL || strtok_r(NULL, " \n", &save) == NULL)
		return -1;
	m->super = strtok_r(NULL, " \n", &save);
	if (m->super == NULL)
		return -1;
	unescape(m->root);
	unescape(m->point);
	return 0;
}

/*
 * below_root - the part of cgroup path @path below mount root @root ("" for
 * the root itself), or NULL when the mount does not show @path.
 */
static const char *below_root(const char *root, const char *path)
{
	size_t n = strlen(root);

	if (strcmp(root, "/") == 0)
		return strcmp(path, "/") == 0 ? "" : path;
	if (strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/'))
		return path + n;
	return NULL;
}

/*
 * self_cgroup - the caller's cgroup path from /proc/self/cgroup: in the v2
 * hierarchy ("0::/path") when @ctrl is NULL, else in the v1 hierarchy that
 * has controller @ctrl.  Returns 0 or -1 if there is none.
 */
static int self_cgroup(const char *ctrl, char *out, size_t size)
{
	cleanup_fclose FILE *f = fopen("/proc/self/cgroup", "re");
	cleanup_free char *line = NULL;
	size_t cap = 0;

	if (f == NULL)
		return -1;
	while (getline(&line, &cap, f) > 0) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		bool match;

		if (c2 == NULL)
			continue;
		*c1 = *c2 = '\0';
		c2[1 + strcspn(c2 + 1, "\n")] = '\0';
		if (ctrl == NULL)
			match = strcmp(line, "0") == 0 && c1[1] == '\0';
		else
			match = has_token(c1 + 1, ctrl, ',');
		/* "/.." appears for cgroups outside our cgroup namespace: unusable */
		if (!match || c2[1] != '/' || strstr(c2 + 1, "/..") != NULL)
			continue;
		if ((size_t)snprintf(out, size, "%s", c2 + 1) >= size)
			return -1;
		return 0;
	}
	return -1;
}

/*
 * cgroup_dir_at - the directory of the caller's cgroup: in the cgroup v2
 * hierarchy when @ctrl is NULL, else in the v1 hierarchy of @ctrl.
 * *@mnt_len (may be NULL) gets the length of the mount point's part of @out.
 * Returns 0 or -1 when the hierarchy is not mounted or not visible.
 */
static int cgroup_dir_at(const char *ctrl, char *out, size_t size, size_t *mnt_len)
{
	cleanup_fclose FILE *f = NULL;
	cleanup_free char *line = NULL;
	char cg[PATH_MAX];
	size_t cap = 0;

	if (self_cgroup(ctrl, cg, sizeof cg) < 0)
		return -1;
	f = fopen("/proc/self/mountinfo", "re");
	if (f == NULL)
		return -1;
	while (getline(&line, &cap, f) > 0) {
		struct mnt m;
		const char *rel;
		int n;

		if (parse_mountinfo(line, &m) < 0)
			continue;
		if (strcmp(m.fstype, ctrl ? "cgroup" : "cgroup2") != 0)
			continue;
		if (ctrl != NULL && !has_token(m.super, ctrl, ','))
			continue;
		rel = below_root(m.root, cg);
		if (rel == NULL)
			continue;
		n = snprintf(out, size, "%s%s", m.point, rel);
		if (n > 0 && (size_t)n < size && access(out, F_OK) == 0) {
			if (mnt_len != NULL)
				*mnt_len = strlen(m.point);
			return 0;
		}
	}
	return -1;
}

/* cgroup_dir - cgroup_dir_at without the mount point. */
static int cgroup_dir(const char *ctrl, char *out, size_t size)
{
	return cgroup_dir_at(ctrl, out, size, NULL);
}

/* owned - whether @dir/@name (@dir itself when @name is NULL) belongs to
 * the caller's effective uid. */
static bool owned(const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	if (name != NULL && path_join(path, sizeof path, dir, name) < 0)
		return false;
	return stat(name != NULL ? path : dir, &st) == 0 && st.st_uid == geteuid();
}

/* delegated - whether the cgroup at @dir is delegated to the caller: the
 * directory, cgroup.procs and cgroup.subtree_control are the caller's. */
static bool delegated(const char *dir)
{
	return owned(dir, NULL) && owned(dir, "cgroup.procs") && owned(dir, "cgroup.subtree_control");
}

/* ---- creating and removing directories ------------------------------ */

/*
 * make_run_dir - create @parent/berth-@run_id and record it in @lim->dirs
 * (once: co-mounted v1 hierarchies share a directory).
 * Returns TRY_OK, TRY_UNAVAILABLE (not allowed here: fall back), or
 * TRY_FAILED with @err filled.
 */
static int make_run_dir(const char *parent, const char *run_id, struct berth_limits *lim,
			char *out, size_t size, struct berth_error *err)
{
	int n = snprintf(out, size, "%s/berth-%s", parent, run_id);

	if (n < 0 || (size_t)n >= size)
		return berth_err(err, ENAMETOOLONG, "cannot create cgroup `%s/berth-%s`", parent,
				 run_id);
	for (int i = 0; i < lim->n_dirs; i++) {
		if (strcmp(lim->dirs[i], out) == 0)
			return TRY_OK;
	}
	if (lim->n_dirs >= BERTH_CG_MAX_DIRS)
		return berth_err(err, E2BIG, "too many cgroup directories at `%s`", out);
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
	return TRY_OK;
}

/* sleep_ms - sleep for @ms milliseconds. */
static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* now_ms - CLOCK_MONOTONIC in milliseconds. */
static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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

	if (path_join(path, sizeof path, dir, "cgroup.procs") < 0)
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
	long long deadline = now_ms() + CG_DRAIN_MS;

	while (kill_procs(dir) > 0) {
		if (now_ms() >= deadline)
			return -1;
		sleep_ms(CG_POLL_MS);
	}
	return 0;
}

/* cgroup_kill - write 1 to @dir/cgroup.kill (cgroup v2, Linux 5.14+). */
static int cgroup_kill(const char *dir)
{
	char path[PATH_MAX];

	if (path_join(path, sizeof path, dir, "cgroup.kill") < 0)
		return -1;
	return write_str(path, "1") < 0 ? -1 : 0;
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

/* discard - undo a failed attempt: remove and forget every directory. */
static void discard(struct berth_limits *lim)
{
	berth_limits_destroy(lim);
	for (int i = 0; i < lim->n_dirs; i++)
		free(lim->dirs[i]);
	memset(lim, 0, sizeof *lim);
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
	if (path_join(path, sizeof path, dir, "cgroup.subtree_control") < 0 ||
	    read_str(path, cur, sizeof cur) < 0)
		return -1;
	if (has_token(cur, name, ' '))
		return 0;
	snprintf(val, sizeof val, "+%s", name);
	if (write_str(path, val) < 0)
		return -1;
	*changed = true;
	return 0;
}

/* disable_changed - undo enable_controller for the first @n of @names. */
static void disable_changed(const char *dir, const char *const *names, size_t n,
			    const bool *changed)
{
	char path[PATH_MAX], val[64];

	if (path_join(path, sizeof path, dir, "cgroup.subtree_control") < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		if (!changed[i])
			continue;
		snprintf(val, sizeof val, "-%s", names[i]);
		write_str(path, val);
	}
}

/* write_v2 - write memory.max, memory.swap.max, pids.max and cpu.max. */
static int write_v2(const struct berth_policy *p, const char *dir, bool cpu,
		    struct berth_limits *lim, struct berth_error *err)
{
	char v[64];

	if (set_file(dir, "memory.max", fmt_limit(v, sizeof v, p->memory, "max"), err) < 0 ||
	    set_file(dir, "pids.max", fmt_limit(v, sizeof v, p->pids, "max"), err) < 0)
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
	static const char *const names[] = { "memory", "pids", "cpu" };
	char path[PATH_MAX], avail[512], dir[PATH_MAX];
	bool changed[3] = { false, false, false }, cpu;
	int r;

	if (path_join(path, sizeof path, parent, "cgroup.controllers") < 0 ||
	    read_str(path, avail, sizeof avail) < 0)
		return TRY_UNAVAILABLE;
	cpu = has_token(avail, "cpu", ' ');
	if (!has_token(avail, "memory", ' ') || !has_token(avail, "pids", ' ') || (need_cpu && !cpu))
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
		discard(lim);
		disable_changed(parent, names, 3, changed);
		return r;
	}
	appendf(lim->how, sizeof lim->how, "cgroup v2 %s%s (memory, pids%s)%s", geteuid() != 0 ? "delegated " : "",
		dir, cpu ? ", cpu" : "", lim->swap_off ? "" : "; swap not limited: no memory.swap.max");
	if (!cpu)
		add_unenforced(lim, "cpus (no cpu controller in cgroup v2)");
	return TRY_OK;
}

/* has_procs - whether @dir/cgroup.procs lists a process (unreadable: yes). */
static bool has_procs(const char *dir)
{
	char path[PATH_MAX], buf[16];

	if (path_join(path, sizeof path, dir, "cgroup.procs") < 0 || read_str(path, buf, sizeof buf) < 0)
		return true;
	return buf[strspn(buf, " \n")] != '\0';
}

/* up - cut the last component of @dir, never above its first @top bytes. */
static bool up(char *dir, size_t top)
{
	char *slash = strrchr(dir, '/');

	if (slash == NULL || (size_t)(slash - dir) < top)
		return false;
	*slash = '\0';
	return true;
}

int berth_limits_v2_delegated(const char *start, size_t top, char *out, size_t size)
{
	char dir[PATH_MAX], path[PATH_MAX], buf[512];

	if ((size_t)snprintf(dir, sizeof dir, "%s", start) >= sizeof dir)
		return -1;
	do {
		if (!delegated(dir))
			return -1; /* the edge of what is the caller's: never above it */
		if (path_join(path, sizeof path, dir, "cgroup.controllers") < 0 || read_str(path, buf, sizeof buf) < 0 ||
		    !has_token(buf, "memory", ' ') || !has_token(buf, "pids", ' '))
			continue;
		/* "no internal processes": a cgroup with members cannot give
		 * its children controllers it has not given them already */
		if (has_procs(dir) &&
		    (path_join(path, sizeof path, dir, "cgroup.subtree_control") < 0 ||
		     read_str(path, buf, sizeof buf) < 0 || !has_token(buf, "memory", ' ') || !has_token(buf, "pids", ' ')))
			continue;
		if ((size_t)snprintf(out, size, "%s", dir) >= size)
			return -1;
		return 0;
	} while (up(dir, top));
	return -1;
}

/*
 * try_cgroup2 - root: the caller's own v2 cgroup.  Unprivileged: the
 * nearest cgroup delegated to it (berth_limits_v2_delegated), then the next
 * one up if that fails, up to the first that is not the caller's.  Root
 * stays in its own cgroup: every directory is root's, and a walk would
 * reach cgroups that belong to the service manager.  @need_cpu: only a
 * cgroup with the cpu controller will do.
 */
static int try_cgroup2(const struct berth_policy *p, const char *run_id, bool need_cpu,
		       struct berth_limits *lim, struct berth_error *err)
{
	char dir[PATH_MAX], cand[PATH_MAX];
	size_t mnt_len = 0;
	int r;

	if (cgroup_dir_at(NULL, dir, sizeof dir, &mnt_len) < 0)
		return TRY_UNAVAILABLE;
	if (geteuid() == 0)
		return try_v2_at(p, dir, run_id, need_cpu, lim, err);
	while (berth_limits_v2_delegated(dir, mnt_len, cand, sizeof cand) == 0) {
		r = try_v2_at(p, cand, run_id, need_cpu, lim, err);
		if (r != TRY_UNAVAILABLE)
			return r;
		memcpy(dir, cand, sizeof dir);
		if (!up(dir, mnt_len))
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
static int write_v1(const struct berth_policy *p, const char *mem, const char *pids,
		    const char *cpu, struct berth_limits *lim, struct berth_error *err)
{
	char v[64], mv[64];
	const char *m = fmt_limit(mv, sizeof mv, p->memory, "-1");

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
	if (set_file(pids, "pids.max", fmt_limit(v, sizeof v, p->pids, "max"), err) < 0)
		return -1;
	lim->memory_enforced = lim->pids_enforced = true;
	if (cpu == NULL)
		return 0;
	snprintf(v, sizeof v, "%llu", CG_PERIOD_US);
	if (set_file(cpu, "cpu.cfs_period_us", v, err) < 0 ||
	    set_file(cpu, "cpu.cfs_quota_us",
		     fmt_limit(v, sizeof v, p->millicpus ? cpu_quota_us(p->millicpus) : 0, "-1"),
		     err) < 0)
		return -1;
	lim->cpus_enforced = true;
	return 0;
}

/*
 * try_cgroup1 - directories in the v1 memory, pids and (when there is one
 * we can write) cpu hierarchies, below the caller's cgroup in each.
 */
static int try_cgroup1(const struct berth_policy *p, const char *run_id,
		       struct berth_limits *lim, struct berth_error *err)
{
	char mem[PATH_MAX], pids[PATH_MAX], cpu[PATH_MAX];
	char dmem[PATH_MAX], dpids[PATH_MAX], dcpu[PATH_MAX];
	bool has_cpu;
	int r;

	if (cgroup_dir("memory", mem, sizeof mem) < 0 || cgroup_dir("pids", pids, sizeof pids) < 0)
		return TRY_UNAVAILABLE;
	has_cpu = cgroup_dir("cpu", cpu, sizeof cpu) == 0;
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
		discard(lim);
		return r;
	}
	snprintf(lim->how, sizeof lim->how, "cgroup v1 (memory, pids%s)%s", has_cpu ? ", cpu" : "",
		 lim->swap_off ? "" : "; swappiness 0, swap not limited: no memory.memsw");
	if (!has_cpu)
		add_unenforced(lim, "cpus (no writable cpu hierarchy in cgroup v1)");
	return TRY_OK;
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
#define NO_AS_WHY                                                                                   \
	"only an address-space rlimit (RLIMIT_AS) is available, which counts reserved address space, " \
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
		snprintf(cpus, sizeof cpus, "%llu requested, %d available, not restricted", want,
			 online);
	}
	if (p->memory == 0)
		snprintf(mem, sizeof mem, "memory: no limit asked");
	else if (berth_limits_memory_explicit(p))
		snprintf(mem, sizeof mem, "memory: not enforced (--allow-degraded)");
	else
		snprintf(mem, sizeof mem, "memory: not enforced, %s %s limit not applied: RLIMIT_AS breaks runtimes",
			 p->app ? "the app's" : "the default", fmt_size(sz, sizeof sz, p->memory));
	snprintf(lim->how, sizeof lim->how,
		 "rlimits (%s; RLIMIT_NPROC for pids; CPU affinity for cpus: %s)", mem, cpus);
	if (p->memory != 0 && berth_limits_memory_explicit(p))
		add_unenforced(lim, "memory (" NO_AS_WHY ")");
	if (!lim->pids_enforced)
		add_unenforced(lim, "pids (RLIMIT_NPROC does not apply to root)");
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
	return berth_err_hint(err, "%.450s; or pass `--allow-degraded` to run without a memory limit", advice);
}

/* v2_root - the cgroup v2 mount point (the first mount of its root) into @out. */
static int v2_root(char *out, size_t size)
{
	cleanup_fclose FILE *f = fopen("/proc/self/mountinfo", "re");
	cleanup_free char *line = NULL;
	size_t cap = 0;

	if (f == NULL)
		return -1;
	while (getline(&line, &cap, f) > 0) {
		struct mnt m;

		if (parse_mountinfo(line, &m) == 0 && strcmp(m.fstype, "cgroup2") == 0 && strcmp(m.root, "/") == 0 &&
		    (size_t)snprintf(out, size, "%s", m.point) < size)
			return 0;
	}
	return -1;
}

void berth_limits_advice(char *buf, size_t size)
{
	char root[PATH_MAX], path[PATH_MAX], avail[512];
	unsigned uid = (unsigned)geteuid();

	if (v2_root(root, sizeof root) < 0 || path_join(path, sizeof path, root, "cgroup.controllers") < 0 ||
	    read_str(path, avail, sizeof avail) < 0 || !has_token(avail, "memory", ' ')) {
		snprintf(buf, size, "the memory controller is not in a cgroup v2 hierarchy here (cgroup v1 holds it, "
				    "or no cgroup2 is mounted), so it cannot be delegated: boot with cgroup v2 "
				    "(systemd.unified_cgroup_hierarchy=1) and use `systemd-run --user --scope -p "
				    "Delegate=yes berth run ...`, have root make v1 memory and pids cgroups owned by this "
				    "user and start berth in them, or run as root");
		return;
	}
	snprintf(path, sizeof path, "%s/user.slice/user-%u.slice/user@%u.service", root, uid, uid);
	if (owned(path, NULL))
		snprintf(buf, size, "the systemd user manager delegates `%s` to you but berth does not run inside it: "
				    "`systemd-run --user --scope -p Delegate=yes berth run ...`", path);
	else
		snprintf(buf, size, "no systemd user manager here (no `%s` owned by uid %u): log in through logind "
				    "or `loginctl enable-linger`, then `systemd-run --user --scope -p Delegate=yes berth "
				    "run ...`; or have root delegate a cgroup v2 directory (chown it, its cgroup.procs and "
				    "cgroup.subtree_control, +memory +pids in its parent) and start berth in a child of it",
			 path, uid);
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
	berth_err(err, 0, "cannot enforce the requested limits: %s", lim->unenforced);
	berth_err_hint(err, "run as root or in a delegated cgroup v2 subtree, or pass `--allow-degraded`; see "
			    "`berth doctor`");
	discard(lim);
	return -1;
}

int berth_limits_prepare(const struct berth_policy *p, const char *run_id, bool force_rlimits,
			 struct berth_limits *lim, struct berth_error *err)
{
	int r = TRY_UNAVAILABLE;

	memset(lim, 0, sizeof *lim);
	if (check_run_id(run_id, err) < 0)
		return -1;
	if (!force_rlimits) {
		r = try_cgroup2(p, run_id, true, lim, err);
		if (r == TRY_UNAVAILABLE)
			r = try_cgroup1(p, run_id, lim, err);
		if (r == TRY_UNAVAILABLE)
			r = try_cgroup2(p, run_id, false, lim, err);
		if (r == TRY_FAILED)
			return -1;
	}
	if (r == TRY_UNAVAILABLE) {
		if (p->memory != 0 && berth_limits_memory_explicit(p) && !p->allow_degraded) {
			memset(lim, 0, sizeof *lim);
			return refuse_memory(p, err);
		}
		setup_rlimits(p, lim);
	}
	return refuse_unenforced(p, lim, err);
}

bool berth_limits_memory_explicit(const struct berth_policy *p)
{
	return p->memory_set && !p->app;
}

int berth_limits_check(const struct berth_policy *p, bool force_rlimits, struct berth_error *err)
{
	struct berth_limits lim;
	char id[32];
	int r;

	/* Only an explicit limit can be refused; nothing else needs the
	 * probe (a cgroup made and removed at once). */
	if (p->allow_degraded || !((p->memory != 0 && berth_limits_memory_explicit(p)) || p->cpus_set || p->pids_set))
		return 0;
	/* the time too: a probe left by a berth killed right here must not
	 * stand in the way of a later one with the same pid */
	snprintf(id, sizeof id, "check-%ld-%lld", (long)getpid(), now_ms());
	r = berth_limits_prepare(p, id, force_rlimits, &lim, err);
	if (r == 0) {
		berth_limits_destroy(&lim);
		for (int i = 0; i < lim.n_dirs; i++)
			free(lim.dirs[i]);
	}
	return r;
}

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

/* set_rlimit - soft and hard limit of @res (named @name) to @v; no allocation. */
static int set_rlimit(int res, const char *name, unsigned long long v, struct berth_error *err)
{
	struct rlimit rl = { .rlim_cur = (rlim_t)v, .rlim_max = (rlim_t)v };
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
	if (p->nofile != 0 && set_rlimit(RLIMIT_NOFILE, "RLIMIT_NOFILE", p->nofile, err) < 0)
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
			FILE *fp = fopen(path, "re");
			if (fp == NULL)
				continue;
			while (fgets(line, sizeof line, fp) != NULL)
				if (sscanf(line, "oom_kill %lld", &v) == 1)
					total = (total < 0 ? 0 : total) + v;
			fclose(fp);
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
