/* SPDX-License-Identifier: MIT */
/*
 * limits_find.c - where the run's cgroup can go: the caller's cgroups read
 * from /proc/self/cgroup and located through the cgroup mounts in
 * /proc/self/mountinfo (never hard-coded paths), the nearest cgroup v2
 * ancestor delegated to an unprivileged caller (limits.c's top comment says
 * what "delegated" means), and the advice berth gives when there is none.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* meson passes -D_GNU_SOURCE; this is for standalone builds */
#endif
#include "limits_int.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"

/* ---- locating the caller's cgroups ---------------------------------- */

/* unescape - decode the \ooo escapes of /proc/self/mountinfo in place. */
static void unescape(char *s)
{
	char *w = s;

	for (; *s; s++, w++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
		    s[3] <= '7') {
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

/* next_mount - the next mount of type @fstype in the mountinfo stream @f
 * (one getline(3) buffer, *@line of *@cap bytes) into @m, which points into
 * *@line; false at the end. */
static bool next_mount(FILE *f, char **line, size_t *cap, const char *fstype, struct mnt *m)
{
	while (getline(line, cap, f) > 0)
		if (parse_mountinfo(*line, m) == 0 && strcmp(m->fstype, fstype) == 0)
			return true;
	return false;
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
			match = berth_lim_has_token(c1 + 1, ctrl, ',');
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
 * berth_lim_cgroup_dir_at - the directory of the caller's cgroup: in the cgroup v2
 * hierarchy when @ctrl is NULL, else in the v1 hierarchy of @ctrl.
 * *@mnt_len (may be NULL) gets the length of the mount point's part of @out.
 * Returns 0 or -1 when the hierarchy is not mounted or not visible.
 */
int berth_lim_cgroup_dir_at(const char *ctrl, char *out, size_t size, size_t *mnt_len)
{
	cleanup_fclose FILE *f = NULL;
	cleanup_free char *line = NULL;
	char cg[PATH_MAX];
	size_t cap = 0;
	struct mnt m;

	if (self_cgroup(ctrl, cg, sizeof cg) < 0)
		return -1;
	f = fopen("/proc/self/mountinfo", "re");
	if (f == NULL)
		return -1;
	while (next_mount(f, &line, &cap, ctrl ? "cgroup" : "cgroup2", &m)) {
		const char *rel;
		int n;

		if (ctrl != NULL && !berth_lim_has_token(m.super, ctrl, ','))
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

int berth_limits_placement_dirs(const char *cgpath, char **dirs, size_t max)
{
	cleanup_fclose FILE *f = fopen("/proc/self/mountinfo", "re");
	cleanup_free char *line = NULL;
	size_t cap = 0, n = 0;

	if (f == NULL)
		return -1;
	while (n < max && getline(&line, &cap, f) > 0) {
		struct mnt m;
		const char *rel;
		char *dir;

		if (parse_mountinfo(line, &m) < 0 ||
		    (strcmp(m.fstype, "cgroup") != 0 && strcmp(m.fstype, "cgroup2") != 0))
			continue;
		if ((rel = below_root(m.root, cgpath)) == NULL)
			continue;
		if (asprintf(&dir, "%s%s", m.point, rel) < 0) {
			while (n > 0)
				free(dirs[--n]);
			errno = ENOMEM;
			return -1;
		}
		dirs[n++] = dir;
	}
	return (int)n;
}

/* berth_lim_cgroup_dir - cgroup_dir_at without the mount point. */
int berth_lim_cgroup_dir(const char *ctrl, char *out, size_t size)
{
	return berth_lim_cgroup_dir_at(ctrl, out, size, NULL);
}

/* owned - whether @dir/@name (@dir itself when @name is NULL) belongs to
 * the caller's effective uid. */
static bool owned(const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	if (name != NULL && berth_lim_path_join(path, sizeof path, dir, name) < 0)
		return false;
	return stat(name != NULL ? path : dir, &st) == 0 && st.st_uid == geteuid();
}

/* delegated - whether the cgroup at @dir is delegated to the caller: the
 * directory, cgroup.procs and cgroup.subtree_control are the caller's. */
static bool delegated(const char *dir)
{
	return owned(dir, NULL) && owned(dir, "cgroup.procs") && owned(dir, "cgroup.subtree_control");
}

/* has_procs - whether @dir/cgroup.procs lists a process (unreadable: yes). */
static bool has_procs(const char *dir)
{
	char path[PATH_MAX], buf[16];

	if (berth_lim_path_join(path, sizeof path, dir, "cgroup.procs") < 0 ||
	    berth_lim_read_str(path, buf, sizeof buf) < 0)
		return true;
	return buf[strspn(buf, " \n")] != '\0';
}

/* berth_lim_up - cut the last component of @dir, never above its first @top bytes. */
bool berth_lim_up(char *dir, size_t top)
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
		if (berth_lim_path_join(path, sizeof path, dir, "cgroup.controllers") < 0 ||
		    berth_lim_read_str(path, buf, sizeof buf) < 0 ||
		    !berth_lim_has_token(buf, "memory", ' ') || !berth_lim_has_token(buf, "pids", ' '))
			continue;
		/* "no internal processes": a cgroup with members cannot give
		 * its children controllers it has not given them already */
		if (has_procs(dir) &&
		    (berth_lim_path_join(path, sizeof path, dir, "cgroup.subtree_control") < 0 ||
		     berth_lim_read_str(path, buf, sizeof buf) < 0 ||
		     !berth_lim_has_token(buf, "memory", ' ') || !berth_lim_has_token(buf, "pids", ' ')))
			continue;
		if ((size_t)snprintf(out, size, "%s", dir) >= size)
			return -1;
		return 0;
	} while (berth_lim_up(dir, top));
	return -1;
}

/* v2_root - the cgroup v2 mount point (the first mount of its root) into @out. */
static int v2_root(char *out, size_t size)
{
	cleanup_fclose FILE *f = fopen("/proc/self/mountinfo", "re");
	cleanup_free char *line = NULL;
	size_t cap = 0;
	struct mnt m;

	if (f == NULL)
		return -1;
	while (next_mount(f, &line, &cap, "cgroup2", &m))
		if (strcmp(m.root, "/") == 0 && (size_t)snprintf(out, size, "%s", m.point) < size)
			return 0;
	return -1;
}

void berth_limits_advice(char *buf, size_t size)
{
	char root[PATH_MAX], path[PATH_MAX], avail[512];
	unsigned uid = (unsigned)geteuid();

	if (v2_root(root, sizeof root) < 0 ||
	    berth_lim_path_join(path, sizeof path, root, "cgroup.controllers") < 0 ||
	    berth_lim_read_str(path, avail, sizeof avail) < 0 || !berth_lim_has_token(avail, "memory", ' ')) {
		snprintf(
		    buf, size,
		    "the memory controller is not in a cgroup v2 hierarchy here (cgroup v1 holds it, "
		    "or no cgroup2 is mounted), so it cannot be delegated: boot with cgroup v2 "
		    "(systemd.unified_cgroup_hierarchy=1) and use `systemd-run --user --scope -p "
		    "Delegate=yes berth run ...`, have root make v1 memory and pids cgroups owned by this "
		    "user and start berth in them, or run as root");
		return;
	}
	snprintf(path, sizeof path, "%s/user.slice/user-%u.slice/user@%u.service", root, uid, uid);
	if (owned(path, NULL))
		snprintf(buf, size,
			 "the systemd user manager delegates `%s` to you but berth does not run inside it: "
			 "`systemd-run --user --scope -p Delegate=yes berth run ...`",
			 path);
	else
		snprintf(
		    buf, size,
		    "no systemd user manager here (no `%s` owned by uid %u): log in through logind "
		    "or `loginctl enable-linger`, then `systemd-run --user --scope -p Delegate=yes berth "
		    "run ...`; or have root delegate a cgroup v2 directory (chown it, its cgroup.procs and "
		    "cgroup.subtree_control, +memory +pids in its parent) and start berth in a child of it",
		    path, uid);
}
