/* SPDX-License-Identifier: MIT */

#include "userns.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/cleanup.h"

static int write_file(const char *path, const char *s, struct berth_error *err)
{
	cleanup_close int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t n = strlen(s);

	if (fd < 0)
		return berth_err(err, errno, "cannot open `%s`", path);
	if (write(fd, s, n) != (ssize_t)n)
		return berth_err(err, errno, "cannot write `%s` to `%s`", s, path);
	return 0;
}

static int write_maps(pid_t pid, uid_t in_uid, uid_t out_uid, gid_t in_gid, gid_t out_gid, bool deny,
		      struct berth_error *err)
{
	char path[64], line[64];

	if (deny) {
		snprintf(path, sizeof path, "/proc/%d/setgroups", (int)pid);
		if (write_file(path, "deny", err) < 0)
			return -1;
	}
	snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
	snprintf(line, sizeof line, "%u %u 1\n", (unsigned)in_uid, (unsigned)out_uid);
	if (write_file(path, line, err) < 0)
		return -1;
	snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
	snprintf(line, sizeof line, "%u %u 1\n", (unsigned)in_gid, (unsigned)out_gid);
	return write_file(path, line, err);
}

int berth_userns_write_maps(pid_t pid, const struct berth_ids *ids, struct berth_error *err)
{
	return write_maps(pid, ids->in_uid, ids->host_uid, ids->in_gid, ids->host_gid, ids->deny_setgroups,
			  err);
}

/* A throwaway user namespace whose only purpose is to describe an idmapping. */
static int idmap_userns_fd(uid_t owner_uid, gid_t owner_gid, const struct berth_ids *ids,
			   struct berth_error *err)
{
	int pfd[2];
	pid_t pid;
	char path[64];
	int fd, r;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return berth_err(err, errno, "pipe");
	pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, NULL);
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return berth_err(err, errno, "cannot create the idmapping user namespace");
	}
	if (pid == 0) {
		char c;
		close(pfd[1]);
		(void)!read(pfd[0], &c, 1); /* wait until the parent is done, then go */
		_exit(0);
	}
	close(pfd[0]);
	/* On disk (inside) owner -> seen as (outside) the sandbox's host id. */
	r = write_maps(pid, owner_uid, ids->host_uid, owner_gid, ids->host_gid, false, err);
	snprintf(path, sizeof path, "/proc/%d/ns/user", (int)pid);
	fd = r < 0 ? -1 : open(path, O_RDONLY | O_CLOEXEC);
	if (r == 0 && fd < 0)
		berth_err(err, errno, "cannot open `%s`", path);
	close(pfd[1]);
	waitpid(pid, NULL, 0);
	return fd;
}

int berth_idmapped_tree(const char *path, uid_t owner_uid, gid_t owner_gid, const struct berth_ids *ids,
			bool ro, struct berth_error *err)
{
	cleanup_close int ns = idmap_userns_fd(owner_uid, owner_gid, ids, err);
	cleanup_close int mfd = -1;
	struct mount_attr attr = {
		.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (ro ? MOUNT_ATTR_RDONLY : 0),
	};

	if (ns < 0)
		return -1;
	attr.userns_fd = (uint64_t)ns;
	mfd = (int)syscall(SYS_open_tree, AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	if (mfd < 0)
		return berth_err(err, errno, "cannot clone the mount tree of `%s`", path);
	if (syscall(SYS_mount_setattr, mfd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) < 0) {
		/* A submount whose filesystem cannot be idmapped: map the top only. */
		close(mfd);
		mfd = (int)syscall(SYS_open_tree, AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		if (mfd < 0)
			return berth_err(err, errno, "cannot clone the mount of `%s`", path);
		if (syscall(SYS_mount_setattr, mfd, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0)
			return berth_err(err, errno, "cannot make an idmapped mount of `%s`", path);
	}
	return steal_fd(&mfd);
}

int berth_userns_probe(void)
{
	pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, NULL);
	int st;

	if (pid < 0)
		return errno;
	if (pid == 0)
		_exit(0);
	if (waitpid(pid, &st, 0) < 0)
		return errno;
	return 0;
}

/* The first line of @path, without its newline, into @buf ("" when unreadable). */
static void read_first_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (f == NULL)
		return;
	if (fgets(buf, (int)len, f) == NULL)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* Is a seccomp filter installed on this process (/proc/self/status, proc(5))? */
static bool seccomp_filtered(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	bool on = false;

	if (f == NULL)
		return false;
	while (fgets(line, sizeof line, f) != NULL)
		if (strncmp(line, "Seccomp:", 8) == 0) {
			on = atoi(line + 8) == 2; /* SECCOMP_MODE_FILTER */
			break;
		}
	fclose(f);
	return on;
}

bool berth_userns_inside_berth(void)
{
	char buf[64];
	size_t n = 0;
	FILE *f;

	/* The kernel's view: new user namespaces are capped at 0 here, and a
	 * seccomp filter is on, as berth leaves every sandbox (spawn.c,
	 * userns_limits and the seccomp table). */
	read_first_line("/proc/sys/user/max_user_namespaces", buf, sizeof buf);
	if (strcmp(buf, "0") != 0 || !seccomp_filtered())
		return false;
	/* And berth's mark: its pid 1 is `berth-init`. */
	f = fopen("/proc/1/cmdline", "re");
	if (f == NULL)
		return false;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strcmp(buf, "berth-init") == 0;
}
