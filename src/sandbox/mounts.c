/* SPDX-License-Identifier: MIT */
/*
 * mounts.c - build the sandbox's root.  Every mount is nosuid, and nodev but for the bound device nodes and /dev/pts;
 * everything but /workspace, /tmp, $HOME, /dev/shm and --rw mounts is
 * read-only.
 */

#include "mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../policy/sysdirs.h"
#include "../util/cleanup.h"
#include "../util/rundir.h"
#include "../util/text.h"
#include "limits.h"
#include "mounts_int.h"

#define NEWROOT "/newroot"
#define OLDROOT "/oldroot"

static const char *const dev_nodes[] = {"null", "zero", "full", "random", "urandom", "tty", NULL};
/* Kernel knobs under /proc that stay read-only. */
static const char *const proc_ro[] = {"sys", "sysrq-trigger", "irq",        "bus",
				      "fs",  "latency_stats", "timer_list", NULL};

int berth_mnt_set_attr(const char *path, uint64_t set, bool recursive, struct berth_error *err)
{
	struct mount_attr attr = {.attr_set = set};

	if (syscall(SYS_mount_setattr, AT_FDCWD, path, AT_SYMLINK_NOFOLLOW | (recursive ? AT_RECURSIVE : 0),
		    &attr, sizeof attr) < 0)
		return berth_err(err, errno, "cannot set mount attributes of `%s`", path);
	return 0;
}

/* mkdir -p: the directories above @path 0755, @path itself @mode. */
static int mkdir_p(const char *path, mode_t mode, struct berth_error *err)
{
	if (berth_mkdir_parents(path, 0755, err) < 0)
		return -1;
	if (mkdir(path, mode) < 0 && errno != EEXIST)
		return berth_err(err, errno, "cannot create `%s`", path);
	return 0;
}

static int touch(const char *path, struct berth_error *err)
{
	/* O_EXCL: a file already there (a container's, not writable by the
	 * sandbox identity) is the mount point as it is. */
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0444);

	if (fd < 0 && errno != EEXIST)
		return berth_err(err, errno, "cannot create `%s`", path);
	if (fd >= 0)
		close(fd);
	return 0;
}

static int bind(const char *src, const char *dst, uint64_t attrs, struct berth_error *err)
{
	if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
		return berth_err(err, errno, "cannot bind `%s` to `%s`", src, dst);
	return berth_mnt_set_attr(dst, attrs | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, true, err);
}

static int tmpfs(const char *dst, const char *opts, unsigned long flags, struct berth_error *err)
{
	if (mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV | flags, opts) < 0)
		return berth_err(err, errno, "cannot mount a tmpfs on `%s` (%s)", dst, opts);
	return 0;
}

/* Mount point of the right kind (directory or file) at @dst. */
static int make_mountpoint(bool is_dir, const char *dst, struct berth_error *err)
{
	char parent[PATH_MAX];
	char *slash;

	if (is_dir)
		return mkdir_p(dst, 0755, err);
	snprintf(parent, sizeof parent, "%s", dst);
	slash = strrchr(parent, '/');
	if (slash != NULL && slash != parent) {
		*slash = '\0';
		if (mkdir_p(parent, 0755, err) < 0)
			return -1;
	}
	return touch(dst, err);
}

/*
 * make_mountpoint_in_root - make_mountpoint for a target in a container's
 * root (@dst: NEWROOT + the path resolve_in_newroot found), each directory
 * made below its parent opened inside NEWROOT (openat2 RESOLVE_IN_ROOT),
 * never by path: the root is the image's, and a directory on the way swapped
 * for a link after it was resolved (another container writing a volume both
 * share) would have mkdir(2) or open(2) follow it out of the root, making the
 * mount point on the host (pin_target refuses the mount only afterwards).
 */
static int make_mountpoint_in_root(bool is_dir, const char *dst, struct berth_error *err)
{
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
	cleanup_close int root = open(NEWROOT, O_PATH | O_DIRECTORY | O_CLOEXEC);
	const char *rel = dst + strlen(NEWROOT), *c = rel;
	char parent[PATH_MAX] = ".";

	if (root < 0)
		return berth_err(err, errno, "cannot open the sandbox's root");
	for (;;) {
		cleanup_close int pfd = -1;
		char name[NAME_MAX + 1];
		size_t n, pl = strlen(parent);
		const char *next;
		int fd;

		while (*c == '/')
			c++;
		if (*c == '\0')
			return 0;
		n = strcspn(c, "/");
		for (next = c + n; *next == '/'; next++)
			;
		if (n > NAME_MAX || pl + 1 + n >= sizeof parent)
			return berth_err(err, ENAMETOOLONG, "mount target `%s`", rel);
		memcpy(name, c, n);
		name[n] = '\0';
		if ((pfd = (int)syscall(SYS_openat2, root, parent, &how, sizeof how)) < 0)
			return berth_err(err, errno, "cannot open `%s` in the container's root",
					 pl > 1 ? parent + 1 : "/");
		if (*next != '\0' || is_dir) {
			if (mkdirat(pfd, name, 0755) < 0 && errno != EEXIST)
				return berth_err(err, errno, "cannot create `%.*s`", (int)(c + n - rel), rel);
		} else {
			/* O_EXCL: a file already there is the mount point as it is */
			fd = openat(pfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
			if (fd < 0 && errno != EEXIST)
				return berth_err(err, errno, "cannot create `%s`", rel);
			if (fd >= 0)
				close(fd);
		}
		snprintf(parent + pl, sizeof parent - pl, "/%s", name);
		c = next;
	}
}

/* mkdir, or a directory already there (a container's root has its own
 * /dev, /proc...; berth's fresh tmpfs root never has). */
static int mkdir_mp(const char *path, mode_t mode, struct berth_error *err)
{
	struct stat st;

	if (mkdir(path, mode) == 0)
		return 0;
	if (errno == EEXIST && lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	return berth_err(err, errno == EEXIST ? ENOTDIR : errno, "mkdir `%s`", path + strlen(NEWROOT));
}

/* @root_tmpfs: the sandbox's root is a fresh tmpfs (not a container's). */
static int base_and_pivot(bool root_tmpfs, struct berth_error *err)
{
	/* Nothing we mount propagates back to the host; host unmounts still
	 * reach us so we never pin a host filesystem. */
	if (mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) < 0)
		return berth_err(err, errno, "cannot make the mount tree a slave");
	/* A tmpfs on /tmp as a base, as bubblewrap does: /tmp always exists. */
	if (tmpfs("/tmp", "mode=0755,size=1m", 0, err) < 0)
		return -1;
	if (mkdir("/tmp" NEWROOT, 0755) < 0 || mkdir("/tmp" OLDROOT, 0755) < 0)
		return berth_err(err, errno, "cannot create the base directories");
	if (syscall(SYS_pivot_root, "/tmp", "/tmp" OLDROOT) < 0)
		return berth_err(err, errno, "cannot pivot_root into the base tmpfs");
	if (chdir("/") < 0)
		return berth_err(err, errno, "chdir /");
	return root_tmpfs ? tmpfs(NEWROOT, "mode=0755,size=1m", 0, err) : 0;
}

/* The BIND rows of the default view (src/policy/sysdirs.c), in order. */
static int system_tree(bool ro, struct berth_error *err)
{
	for (size_t i = 0; i < berth_n_sysdirs; i++) {
		char src[PATH_MAX], dst[PATH_MAX], link[PATH_MAX];
		struct stat st;
		ssize_t n;

		if (berth_sysdirs[i].mount != BERTH_SYSDIR_BIND)
			continue;
		snprintf(src, sizeof src, OLDROOT "%s", berth_sysdirs[i].path);
		snprintf(dst, sizeof dst, NEWROOT "%s", berth_sysdirs[i].path);
		if (lstat(src, &st) < 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			/* Merged /usr: /bin -> usr/bin stays a symlink. */
			n = readlink(src, link, sizeof link - 1);
			if (n < 0)
				return berth_err(err, errno, "readlink `%s`", src);
			link[n] = '\0';
			if (symlink(link, dst) < 0)
				return berth_err(err, errno, "cannot create symlink `%s`", dst);
			continue;
		}
		if (!S_ISDIR(st.st_mode))
			continue;
		if (mkdir(dst, 0755) < 0 || bind(src, dst, ro ? MOUNT_ATTR_RDONLY : 0, err) < 0)
			return err->msg[0] ? -1 : berth_err(err, errno, "mkdir `%s`", dst);
	}
	return 0;
}

static int move_tree(int fd, const char *dst, struct berth_error *err)
{
	if (syscall(SYS_move_mount, fd, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return berth_err(err, errno, "cannot attach the idmapped mount at `%s`", dst);
	return 0;
}

/* ---------------------------------------------------------- pinned targets */

/*
 * pin_target - the mount target @dst (a NEWROOT path that exists now, as
 * resolve_in_newroot or berth made it) as an O_PATH descriptor the kernel
 * opened inside NEWROOT (openat2 RESOLVE_IN_ROOT, no magic links), checked
 * to be at @dst still.  A path is followed once more by every mount(2) of
 * it: a component that became a link meanwhile (another container writing
 * a volume both share: runc's CVE-2021-30465) would take the mount out of
 * the root, or elsewhere in it past the checks made on @dst.  Mounting
 * onto the descriptor (berth_mnt_attach_at, and mount(2) through its /proc magic
 * link, berth_mnt_pinned_path) follows nothing.  @shown names the target in errors.
 * Returns the descriptor, or -1 with @err filled.
 */
static int pin_target(const char *dst, const char *shown, struct berth_error *err)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC,
			       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
	const char *rel = dst + strlen(NEWROOT);
	char magic[64], real[PATH_MAX];
	cleanup_close int root = open(NEWROOT, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int fd;
	ssize_t n;

	if (root < 0)
		return berth_err(err, errno, "cannot open the sandbox's root");
	if (strncmp(dst, NEWROOT, strlen(NEWROOT)) != 0 || (rel[0] != '/' && rel[0] != '\0'))
		return berth_err(err, EINVAL, "mount target `%s` is outside the sandbox's root", shown);
	fd = (int)syscall(SYS_openat2, root, rel[0] != '\0' ? rel : ".", &how, sizeof how);
	if (fd < 0)
		return berth_err(err, errno, "cannot open the mount target `%s`", shown);
	snprintf(magic, sizeof magic, OLDROOT "/proc/self/fd/%d", fd);
	n = readlink(magic, real, sizeof real - 1);
	/* @dst may end in a slash (the root itself); the link never does */
	if (n < 0 || (size_t)n >= sizeof real - 1 || (real[n] = '\0', strncmp(real, dst, (size_t)n) != 0) ||
	    (dst[n] != '\0' && strcmp(dst + n, "/") != 0)) {
		close(fd);
		berth_usage_err(
		    err, "the mount target `%s` changed while the sandbox was made (a link on its way)",
		    shown);
		return berth_err_hint(err,
				      "nothing may change a container's root or workspace while it starts");
	}
	return fd;
}

/* berth_mnt_pinned_path - @fd's /proc magic link, for mount(2) and friends. */
const char *berth_mnt_pinned_path(int fd, char *buf, size_t len)
{
	snprintf(buf, len, OLDROOT "/proc/self/fd/%d", fd);
	return buf;
}

/* mount_pinned - mount(2) of @src (@fstype, @flags, @opts) onto @dst,
 * pinned first (pin_target); @shown names it in errors. */
static int mount_pinned(const char *src, const char *dst, const char *fstype, unsigned long flags,
			const char *opts, const char *shown, struct berth_error *err)
{
	cleanup_close int tfd = pin_target(dst, shown, err);
	char at[64];

	if (tfd < 0)
		return -1;
	if (mount(src, berth_mnt_pinned_path(tfd, at, sizeof at), fstype, flags, opts) < 0)
		return berth_err(err, errno, "cannot mount %s on `%s`", fstype != NULL ? fstype : src, shown);
	return 0;
}

/* berth_mnt_attach_at - the detached mount @tree onto the pinned target @tfd. */
int berth_mnt_attach_at(int tree, int tfd, const char *shown, struct berth_error *err)
{
	if (syscall(SYS_move_mount, tree, "", tfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return berth_err(err, errno, "cannot mount at `%s`", shown);
	return 0;
}

/*
 * bind_at - @src (a path: through OLDROOT, or a /proc magic link) bound
 * recursively onto the pinned target @tfd, then @attrs, nosuid and nodev
 * set on that mount through its own descriptor (nothing is looked up by
 * path after the pin; no sandbox process exists yet to see it writable).
 */
static int bind_at(const char *src, int tfd, uint64_t attrs, const char *shown, struct berth_error *err)
{
	struct mount_attr attr = {.attr_set = attrs | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
	cleanup_close int tree =
	    (int)syscall(SYS_open_tree, AT_FDCWD, src, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	char at[64];

	if (tree < 0)
		return berth_err(err, errno, "cannot bind `%s` to `%s`", src, shown);
	if (berth_mnt_attach_at(tree, tfd, shown, err) < 0)
		return -1;
	if (syscall(SYS_mount_setattr, AT_FDCWD, berth_mnt_pinned_path(tree, at, sizeof at), AT_RECURSIVE,
		    &attr, sizeof attr) < 0)
		return berth_err(err, errno, "cannot set mount attributes of `%s`", shown);
	return 0;
}

int berth_open_nofollow(int dirfd, const char *path, int flags)
{
	/* No O_NOFOLLOW: with O_PATH it would open a trailing link itself
	 * instead of failing (openat2(2)); RESOLVE_NO_SYMLINKS refuses it. */
	struct open_how how = {.flags = (uint64_t)(flags | O_PATH | O_CLOEXEC),
			       .resolve = RESOLVE_NO_SYMLINKS};
	char buf[PATH_MAX];
	char *save = NULL;
	int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);

	if (fd >= 0 || errno != ENOSYS)
		return fd;
	/* No openat2 (before Linux 5.6, or a seccomp filter that answers
	 * ENOSYS, as berth's own does): one component at a time, each opened
	 * O_NOFOLLOW below the previous one's descriptor; a link is ELOOP. */
	if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
		return errno = ENAMETOOLONG, -1;
	fd = openat(path[0] == '/' ? AT_FDCWD : dirfd, path[0] == '/' ? "/" : ".",
		    O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (char *c = strtok_r(buf, "/", &save); fd >= 0 && c != NULL; c = strtok_r(NULL, "/", &save)) {
		struct stat st;
		int next = openat(fd, c, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		close(fd);
		if (next >= 0 && fstat(next, &st) == 0 && S_ISLNK(st.st_mode)) {
			close(next);
			return errno = ELOOP, -1;
		}
		fd = next;
		errno = e;
	}
	if (fd >= 0 && (flags & O_DIRECTORY) != 0) {
		struct stat st;
		if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) {
			close(fd);
			return errno = ENOTDIR, -1;
		}
	}
	return fd;
}

static int open_nofollow(int dirfd, const char *path)
{
	return berth_open_nofollow(dirfd, path, 0);
}

static int changed(const char *what, const char *path, const char *how, struct berth_error *err)
{
	char c[PATH_MAX];

	berth_usage_err(err, "%s `%s` changed after berth checked it: %s", what,
			berth_text_clean(c, sizeof c, path), how);
	return berth_err_hint(
	    err, "something (a sandbox in the same workspace?) replaced it while berth was starting "
		 "the sandbox: look at it, then run again");
}

int berth_source_open(const char *what, const char *path, struct stat *st, struct berth_error *err)
{
	cleanup_close int fd = open_nofollow(AT_FDCWD, path);

	if (fd < 0 && (errno == ELOOP || errno == EXDEV))
		return changed(what, path, "it is now, or is reached through, a symbolic link", err);
	if (fd < 0 && (errno == ENOENT || errno == ENOTDIR))
		return changed(what, path, "it is gone", err);
	if (fd < 0)
		return berth_err(err, errno, "cannot open %s `%s`", what, path);
	if (fstat(fd, st) < 0)
		return berth_err(err, errno, "cannot stat %s `%s`", what, path);
	if (strcmp(what, "the workspace") == 0 && !S_ISDIR(st->st_mode))
		return changed(what, path, "it is no longer a directory", err);
	return steal_fd(&fd);
}

/* In the child: bind @parent_fd's inode (berth_source_open) at @dst.  A
 * descriptor from berth's mount namespace cannot be bound here (EINVAL), so
 * the child opens the host path again below /oldroot, with no link followed,
 * and binds only when that is the very inode berth checked. */
int berth_mnt_bind_source(const char *what, const char *path, int parent_fd, int tfd, const char *shown,
			  uint64_t attrs, struct berth_error *err)
{
	char src[PATH_MAX], fdpath[64];
	cleanup_close int fd = -1;
	struct stat a, b;

	snprintf(src, sizeof src, OLDROOT "%s", path);
	fd = open_nofollow(AT_FDCWD, src);
	if (fd < 0 && (errno == ELOOP || errno == EXDEV))
		return changed(what, path, "it is now, or is reached through, a symbolic link", err);
	if (fd < 0 && (errno == ENOENT || errno == ENOTDIR))
		return changed(what, path, "it is gone", err);
	if (fd < 0) {
		berth_err(err, errno, "cannot mount %s `%s`", what, path);
		return berth_err_hint(
		    err,
		    "the sandbox runs as uid %u: it must be able to reach `%s` (every directory "
		    "on the way searchable)",
		    (unsigned)getuid(), path);
	}
	if (fstat(fd, &a) < 0 || fstat(parent_fd, &b) < 0)
		return berth_err(err, errno, "cannot stat %s `%s`", what, path);
	if (a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		return changed(what, path, "another file is there now", err);
	snprintf(fdpath, sizeof fdpath, OLDROOT "/proc/self/fd/%d", fd);
	if (bind_at(fdpath, tfd, attrs, shown, err) < 0)
		return berth_err_wrap(err, "cannot mount %s `%s`", what, path);
	return 0;
}

static int workspace(const struct berth_mount_plan *plan, struct berth_error *err)
{
	cleanup_close int tfd = -1;

	if (mkdir(NEWROOT "/workspace", 0755) < 0)
		return berth_err(err, errno, "mkdir /workspace");
	if ((tfd = pin_target(NEWROOT "/workspace", "/workspace", err)) < 0)
		return -1;
	if (plan->policy->review)
		return berth_review_workspace(plan, tfd, err);
	if (plan->ws_fd >= 0)
		return berth_mnt_attach_at(plan->ws_fd, tfd, "/workspace", err);
	return berth_mnt_bind_source("the workspace", plan->policy->workspace, plan->ws_src_fd, tfd,
				     "/workspace", 0, err);
}

/* Depth of a path: more components mount later, so nested scopes stack right. */
static int depth(const char *p)
{
	int d = 0;
	for (; *p; p++)
		d += *p == '/';
	return d;
}

static int resolve_in_newroot(const char *path, char *out, size_t len);
static int guarded_target(const char *what, const char *dst, const char *real, struct berth_error *err);

static int extra_mounts(const struct berth_mount_plan *plan, struct berth_error *err)
{
	const struct berth_policy *p = plan->policy;

	for (int d = 1; d < 256; d++) {
		for (size_t i = 0; i < p->n_mounts; i++) {
			const struct berth_mount *m = &p->mounts[i];
			char dst[PATH_MAX];
			struct stat st;

			if (depth(m->dst) != d)
				continue;
			if (p->container != NULL) {
				/* A link in the container's root is followed inside
				 * it, never out of it. */
				if (resolve_in_newroot(m->dst, dst, sizeof dst) < 0)
					return berth_err(err, errno, "cannot follow the mount target `%s`",
							 m->dst);
				if (m->rw && !m->tmpfs && plan->mount_is_dir[i] &&
				    guarded_target("the writable mount target", m->dst, dst, err) < 0)
					return -1;
			} else {
				snprintf(dst, sizeof dst, NEWROOT "%s", m->dst);
			}
			if (m->tmpfs) {
				char opts[96];
				int o = snprintf(opts, sizeof opts, "mode=%o,size=%llu",
						 m->tmpfs_mode != 0 ? (unsigned)m->tmpfs_mode : 01777U,
						 (unsigned long long)m->tmpfs_size);
				if (m->tmpfs_inodes != 0)
					snprintf(opts + o, sizeof opts - (size_t)o, ",nr_inodes=%llu",
						 (unsigned long long)m->tmpfs_inodes);
				if ((p->container != NULL ? make_mountpoint_in_root(true, dst, err)
							  : mkdir_p(dst, 0755, err)) < 0 ||
				    mount_pinned("tmpfs", dst, "tmpfs",
						 MS_NOSUID | MS_NODEV | (m->noexec ? MS_NOEXEC : 0), opts,
						 m->dst, err) < 0)
					return -1;
				continue;
			}
			if (p->container == NULL && strncmp(m->dst, "/workspace/", 11) == 0 &&
			    lstat(dst, &st) < 0) {
				berth_usage_err(err, "mount target `%s` does not exist in the workspace",
						m->dst);
				return berth_err_hint(
				    err, "create it first; berth does not create files in your workspace");
			}
			if (p->container != NULL) {
				if (make_mountpoint_in_root(plan->mount_is_dir[i], dst, err) < 0)
					return berth_err_wrap(err, "cannot create the mount point `%s`",
							      m->dst);
			} else if (make_mountpoint(plan->mount_is_dir[i], dst, err) < 0) {
				return berth_err(err, errno, "cannot create the mount point `%s`", m->dst);
			}
			cleanup_close int tfd = pin_target(dst, m->dst, err);
			if (tfd < 0)
				return -1;
			if (plan->mount_fds != NULL && plan->mount_fds[i] >= 0) {
				struct mount_attr noexec = {.attr_set = MOUNT_ATTR_NOEXEC};
				char at[64];
				if (berth_mnt_attach_at(plan->mount_fds[i], tfd, m->dst, err) < 0)
					return berth_err(err, errno, "cannot mount `%s` at `%s`", m->src,
							 m->dst);
				/* through the attached tree's own descriptor */
				if (m->noexec &&
				    syscall(SYS_mount_setattr, AT_FDCWD,
					    berth_mnt_pinned_path(plan->mount_fds[i], at, sizeof at),
					    AT_RECURSIVE, &noexec, sizeof noexec) < 0)
					return berth_err(err, errno, "cannot make `%s` noexec", m->dst);
			} else if (berth_mnt_bind_source(m->rw ? "the --rw source" : "the --ro source",
							 m->src, plan->src_fds[i], tfd, m->dst,
							 (m->rw ? 0 : MOUNT_ATTR_RDONLY) |
							     (m->noexec ? MOUNT_ATTR_NOEXEC : 0),
							 err) < 0) {
				/* Messages name host and sandbox paths, never /oldroot or /newroot. */
				return -1;
			}
		}
	}
	return 0;
}

int berth_ro_tree(const char *path, struct berth_error *err)
{
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
					      MOUNT_ATTR_NOEXEC};
	int fd =
	    (int)syscall(SYS_open_tree, AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);

	if (fd < 0)
		return berth_err(err, errno, "cannot clone the mount tree of `%s`", path);
	if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) < 0) {
		int e = errno;
		close(fd);
		return berth_err(err, e, "cannot make `%s` read-only", path);
	}
	return fd;
}

/* --evidence: read-only, noexec, nosuid, nodev, whatever the copy's modes
 * (docs/security.md, "Evidence"). */
static int evidence_tree(const struct berth_mount_plan *plan, struct berth_error *err)
{
	char src[PATH_MAX];

	if (plan->policy->evidence_dir == NULL)
		return 0;
	if (mkdir(NEWROOT "/evidence", 0555) < 0)
		return berth_err(err, errno, "mkdir /evidence");
	if (plan->evidence_fd >= 0) {
		if (move_tree(plan->evidence_fd, NEWROOT "/evidence", err) < 0)
			return -1;
	} else {
		snprintf(src, sizeof src, OLDROOT "%s", plan->policy->evidence_dir);
		if (bind(src, NEWROOT "/evidence", 0, err) < 0)
			return berth_err_wrap(err, "cannot mount the evidence copy");
	}
	return berth_mnt_set_attr(
	    NEWROOT "/evidence", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
	    true, err);
}

static int dev_tree(const struct berth_policy *p, struct berth_error *err)
{
	char opts[64];

	if (mkdir_mp(NEWROOT "/dev", 0755, err) < 0)
		return -1;
	if (mount_pinned("tmpfs", NEWROOT "/dev", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			 "mode=0755,size=64k", "/dev", err) < 0)
		return -1;
	for (int i = 0; dev_nodes[i] != NULL; i++) {
		char src[64], dst[64];
		snprintf(src, sizeof src, OLDROOT "/dev/%s", dev_nodes[i]);
		snprintf(dst, sizeof dst, NEWROOT "/dev/%s", dev_nodes[i]);
		if (touch(dst, err) < 0)
			return -1;
		/* Device nodes can only be bound from the host: no mknod in a user namespace. */
		if (mount(src, dst, NULL, MS_BIND, NULL) < 0)
			return berth_err(err, errno, "cannot bind `/dev/%s`", dev_nodes[i]);
		if (berth_mnt_set_attr(dst, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, false, err) < 0)
			return -1;
	}
	if (mkdir(NEWROOT "/dev/pts", 0755) < 0 || mkdir(NEWROOT "/dev/shm", 01777) < 0)
		return berth_err(err, errno, "mkdir /dev/pts, /dev/shm");
	/* max=: the kernel's pty count is shared by every devpts instance but
	 * the host's (kernel.pty.max minus kernel.pty.reserve, 3072 by
	 * default); without a cap of its own one sandbox could take them all,
	 * and no other sandbox, session or container could open a pty. */
	snprintf(opts, sizeof opts, "newinstance,ptmxmode=0666,mode=620,max=%d", BERTH_PTY_MAX);
	if (mount("devpts", NEWROOT "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, opts) < 0)
		return berth_err(err, errno, "cannot mount a new devpts instance");
	snprintf(opts, sizeof opts, "mode=1777,size=%llu", (unsigned long long)p->tmp_size);
	if (tmpfs(NEWROOT "/dev/shm", opts, 0, err) < 0)
		return -1;
	if (symlink("pts/ptmx", NEWROOT "/dev/ptmx") < 0 || symlink("/proc/self/fd", NEWROOT "/dev/fd") < 0 ||
	    symlink("/proc/self/fd/0", NEWROOT "/dev/stdin") < 0 ||
	    symlink("/proc/self/fd/1", NEWROOT "/dev/stdout") < 0 ||
	    symlink("/proc/self/fd/2", NEWROOT "/dev/stderr") < 0)
		return berth_err(err, errno, "cannot create the /dev symlinks");
	return berth_mnt_set_attr(
	    NEWROOT "/dev", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
	    false, err);
}

static int proc_tree(struct berth_error *err)
{
	if (mkdir_mp(NEWROOT "/proc", 0555, err) < 0)
		return -1;
	/* Needs the host's fully visible /proc, still reachable at /oldroot/proc. */
	if (mount_pinned("proc", NEWROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL, "/proc",
			 err) < 0)
		return berth_err_wrap(err, "cannot mount a new /proc");
	for (int i = 0; proc_ro[i] != NULL; i++) {
		char path[64];
		snprintf(path, sizeof path, NEWROOT "/proc/%s", proc_ro[i]);
		if (access(path, F_OK) < 0)
			continue;
		if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) < 0)
			return berth_err(err, errno, "cannot bind `%s`", path);
		if (berth_mnt_set_attr(
			path, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
			true, err) < 0)
			return -1;
	}
	return 0;
}

static int sys_tree(const struct berth_mount_plan *plan, struct berth_error *err)
{
	if (mkdir_mp(NEWROOT "/sys", 0555, err) < 0)
		return -1;
	/* A fresh sysfs shows this network namespace only; it needs one we own. */
	if (plan->own_netns) {
		struct berth_error ignored = {0};
		if (mount_pinned("sysfs", NEWROOT "/sys", "sysfs",
				 MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL, "/sys", &ignored) == 0)
			return 0;
	}
	/* a joined network's own sysfs, made by the parent in it */
	if (!plan->own_netns && plan->sys_fd >= 0) {
		cleanup_close int tfd = pin_target(NEWROOT "/sys", "/sys", err);
		return tfd < 0 ? -1 : berth_mnt_attach_at(plan->sys_fd, tfd, "/sys", err);
	}
	{
		cleanup_close int tfd = pin_target(NEWROOT "/sys", "/sys", err);
		if (tfd < 0 ||
		    bind_at(OLDROOT "/sys", tfd, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOEXEC, "/sys", err) < 0)
			return -1;
	}
	/* A container that joined a network namespace by path (a pod's, owned
	 * by the host's user namespace: no sysfs of its own can be mounted)
	 * gets the host's /sys; its cgroup tree, every other container's and
	 * service's, is not shown, as in a fresh sysfs (docs/oci.md). */
	if (plan->policy->container != NULL && access(NEWROOT "/sys/fs/cgroup", F_OK) == 0 &&
	    tmpfs(NEWROOT "/sys/fs/cgroup", "mode=0555,size=4k", MS_RDONLY | MS_NOEXEC, err) < 0)
		return berth_err_wrap(err, "cannot hide the host's cgroup tree");
	return 0;
}

/*
 * The seeded home (berth_runtime_opts.home_files) into the fresh tmpfs at
 * @home: each directory on the way opened relative to the last, never
 * through a symbolic link (O_NOFOLLOW), made 0700 when missing; each file
 * created new (O_EXCL), 0600.  No allocation: this is pid 1 of a raw clone
 * (see child_main in spawn_child.c).
 */
static int seed_home(const struct berth_mount_plan *plan, const char *home, struct berth_error *err)
{
	for (size_t i = 0; i < plan->n_home_files; i++) {
		const struct berth_home_file *f = &plan->home_files[i];
		char buf[PATH_MAX];
		char *comp = buf, *slash;
		int dfd, fd;

		if (snprintf(buf, sizeof buf, "%s", f->path) >= (int)sizeof buf)
			return berth_err(err, ENAMETOOLONG, "seeded home file `%s`", f->path);
		dfd = open(home, O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0)
			return berth_err(err, errno, "cannot open the home to seed it");
		while ((slash = strchr(comp, '/')) != NULL) {
			*slash = '\0';
			if (mkdirat(dfd, comp, 0700) < 0 && errno != EEXIST) {
				close(dfd);
				return berth_err(err, errno, "cannot create `~/%s` in the seeded home", buf);
			}
			int next = openat(dfd, comp, O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			close(dfd);
			if (next < 0)
				return berth_err(err, errno, "cannot open `~/%s` in the seeded home", buf);
			dfd = next;
			*slash = '/';
			comp = slash + 1;
		}
		fd = openat(dfd, comp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		close(dfd);
		if (fd < 0)
			return berth_err(err, errno, "cannot create `~/%s` in the seeded home", f->path);
		for (size_t off = 0; off < f->len;) {
			ssize_t n = write(fd, f->data + off, f->len - off);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				int e = n < 0 ? errno : ENOSPC;
				close(fd);
				return berth_err(err, e, "cannot write `~/%s` in the seeded home", f->path);
			}
			off += (size_t)n;
		}
		close(fd);
	}
	return 0;
}

static int private_dirs(const struct berth_mount_plan *plan, struct berth_error *err)
{
	char opts[96], home[PATH_MAX];

	if (mkdir(NEWROOT "/tmp", 01777) < 0)
		return berth_err(err, errno, "mkdir /tmp");
	snprintf(opts, sizeof opts, "mode=1777,size=%llu",
		 (unsigned long long)plan->policy->tmp_size + berth_limits_test_skew("tmp", 1 << 20));
	if (tmpfs(NEWROOT "/tmp", opts, 0, err) < 0)
		return -1;
	snprintf(home, sizeof home, NEWROOT "%s", plan->home);
	if (mkdir_p(home, 0700, err) < 0)
		return -1;
	/* A persistent home (--persist-home) instead of the tmpfs. */
	if (plan->home_fd >= 0)
		return move_tree(plan->home_fd, home, err);
	if (plan->policy->home_dir != NULL) {
		char src[PATH_MAX];
		snprintf(src, sizeof src, OLDROOT "%s", plan->policy->home_dir);
		return bind(src, home, 0, err);
	}
	snprintf(opts, sizeof opts, "mode=0700,size=%llu", (unsigned long long)plan->policy->tmp_size);
	if (tmpfs(home, opts, 0, err) < 0)
		return -1;
	return seed_home(plan, home, err);
}

/*
 * @path (a path in the sandbox's view) with every symbolic link followed
 * inside NEWROOT, never out of it: into @out as NEWROOT + the real path,
 * which need not exist.  Each component is looked at on its own (lstat of a
 * prefix made of components already known not to be links), so a link
 * anywhere on the way, not only the last one, is followed in the sandbox's
 * root: an absolute target starts again at NEWROOT, ".." stops at it (as
 * the kernel does at a root).  A container's image is untrusted: a link it
 * planted (`/etc -> /oldroot/etc`) can never lead a mount, or the mount
 * point berth creates, out of its root.  Returns 0, or -1 (ELOOP after 40
 * links, ENAMETOOLONG).
 */
static int resolve_in_newroot(const char *path, char *out, size_t len)
{
	char todo[2 * PATH_MAX], done[PATH_MAX] = "", next[2 * PATH_MAX];
	int links = 0;
	size_t dl = 0;

	if (snprintf(todo, sizeof todo, "%s", path) >= (int)sizeof todo)
		return errno = ENAMETOOLONG, -1;
	for (char *c = todo; *c != '\0';) {
		char full[PATH_MAX + sizeof NEWROOT], link[PATH_MAX];
		struct stat st;
		size_t n;
		ssize_t l;
		char *end;

		while (*c == '/')
			c++;
		if (*c == '\0')
			break;
		end = strchrnul(c, '/');
		n = (size_t)(end - c);
		if (n == 1 && c[0] == '.') {
			c = end;
			continue;
		}
		if (n == 2 && c[0] == '.' && c[1] == '.') {
			char *slash = strrchr(done, '/');
			if (slash != NULL)
				*slash = '\0';
			dl = strlen(done);
			c = end;
			continue;
		}
		if (dl + 1 + n >= sizeof done)
			return errno = ENAMETOOLONG, -1;
		done[dl] = '/';
		memcpy(done + dl + 1, c, n);
		done[dl + 1 + n] = '\0';
		snprintf(full, sizeof full, NEWROOT "%s", done);
		if (lstat(full, &st) < 0 || !S_ISLNK(st.st_mode)) {
			dl += 1 + n;
			c = end;
			continue;
		}
		if (++links > 40)
			return errno = ELOOP, -1;
		l = readlink(full, link, sizeof link - 1);
		if (l < 0)
			return -1;
		link[l] = '\0';
		done[dl] = '\0'; /* the link's own name is replaced by its target */
		if (link[0] == '/')
			dl = 0, done[0] = '\0';
		if (snprintf(next, sizeof next, "%s/%s", link, end) >= (int)sizeof next)
			return errno = ENAMETOOLONG, -1;
		memcpy(todo, next, strlen(next) + 1);
		c = todo;
	}
	if (snprintf(out, len, NEWROOT "%s", dl > 0 ? done : "/") >= (int)len)
		return errno = ENAMETOOLONG, -1;
	return 0;
}

/*
 * --network proxy: /etc/resolv.conf names the sandbox's resolver (netns.h),
 * bound read-only over the host's file, or over the file it links to
 * (systemd-resolved's ../run/systemd/resolve/stub-resolv.conf), which is
 * created in the sandbox's root when it is not in a system directory.
 * Without any (a host with no resolv.conf) glibc asks 127.0.0.1 anyway.
 */
static int resolver_conf(struct berth_error *err)
{
	static const char conf[] = "# berth: the sandbox's resolver; it answers declared names only "
				   "(docs/egress.md)\nnameserver 127.0.0.1\n";
	const char *src = "/berth-resolv.conf"; /* in the base tmpfs */
	char dst[PATH_MAX];
	struct stat st;
	int fd = open(src, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);

	if (fd < 0 || write(fd, conf, sizeof conf - 1) != (ssize_t)(sizeof conf - 1)) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return berth_err(err, e, "cannot write the sandbox's resolv.conf");
	}
	close(fd);
	if (resolve_in_newroot("/etc/resolv.conf", dst, sizeof dst) < 0)
		return berth_err(err, errno, "cannot follow /etc/resolv.conf");
	if (lstat(dst, &st) < 0) {
		if (errno != ENOENT)
			return berth_err(err, errno, "cannot stat `%s`", dst + strlen(NEWROOT));
		struct berth_error ignored = {0};
		if (make_mountpoint(false, dst, &ignored) < 0)
			return 0; /* under a read-only system directory: glibc's default is 127.0.0.1 */
	} else if (!S_ISREG(st.st_mode)) {
		return 0;
	}
	cleanup_close int tfd = pin_target(dst, "/etc/resolv.conf", err);
	if (tfd < 0)
		return -1;
	return bind_at(src, tfd, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOEXEC, "/etc/resolv.conf", err);
}

static int finish_pivot(struct berth_error *err)
{
	if (umount2(OLDROOT, MNT_DETACH) < 0)
		return berth_err(err, errno, "cannot detach the host's root");
	if (chdir(NEWROOT) < 0)
		return berth_err(err, errno, "chdir " NEWROOT);
	/* pivot_root(".", ".") stacks the old root on the new one; detach it. */
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		return berth_err(err, errno, "cannot pivot_root into the sandbox root");
	if (umount2(".", MNT_DETACH) < 0)
		return berth_err(err, errno, "cannot detach the base tmpfs");
	if (chdir("/") < 0)
		return berth_err(err, errno, "chdir /");
	return 0;
}

/* A container's root at NEWROOT: its idmapped tree, or a bind of the
 * descriptor berth opened (not invoked by root). */
static int container_root(const struct berth_mount_plan *plan, struct berth_error *err)
{
	static const char *const own[] = {"/dev", "/proc", "/sys", "/tmp", NULL};
	const struct berth_container *c = plan->policy->container;

	if (plan->root_fd >= 0) {
		if (move_tree(plan->root_fd, NEWROOT, err) < 0)
			return -1;
	} else {
		cleanup_close int tfd = pin_target(NEWROOT, "/", err);
		if (tfd < 0 || berth_mnt_bind_source("the container's root", c->root, plan->root_src_fd, tfd,
						     "/", 0, err) < 0)
			return -1;
	}
	/* berth mounts its own instances there: never through a link the
	 * image planted (it would lead the mount out of the root). */
	for (int i = 0; own[i] != NULL; i++) {
		char path[64];
		struct stat st;
		snprintf(path, sizeof path, NEWROOT "%s", own[i]);
		if (lstat(path, &st) == 0 && !S_ISDIR(st.st_mode)) {
			berth_usage_err(err, "the container's root has `%s` and it is not a directory",
					own[i]);
			return berth_err_hint(
			    err, "berth mounts its own %s there: make it a directory in the image", own[i]);
		}
	}
	return 0;
}

/* The workspace and a writable directory mount are guarded at their path
 * in the container (guard.h), which berth decided before the root was
 * there to look at: a link in the image on the way would put the mount
 * somewhere the guard is not. */
static int guarded_target(const char *what, const char *dst, const char *real, struct berth_error *err)
{
	char lexical[PATH_MAX + sizeof NEWROOT];

	snprintf(lexical, sizeof lexical, NEWROOT "%s", dst);
	if (strcmp(lexical, real) == 0)
		return 0;
	berth_usage_err(
	    err, "%s `%s` is reached through a symbolic link in the container's root (it leads to `%s`)",
	    what, dst, real + strlen(NEWROOT));
	return berth_err_hint(err, "mount it at the path the link leads to");
}

static int container_workspace(const struct berth_mount_plan *plan, struct berth_error *err)
{
	const struct berth_policy *p = plan->policy;
	char dst[PATH_MAX];

	if (resolve_in_newroot(p->container->workspace_at, dst, sizeof dst) < 0)
		return berth_err(err, errno, "cannot follow the workspace's mount target `%s`",
				 p->container->workspace_at);
	if (guarded_target("the workspace's mount target", p->container->workspace_at, dst, err) < 0)
		return -1;
	cleanup_close int tfd = -1;

	if (mkdir_p(dst, 0755, err) < 0)
		return -1;
	if ((tfd = pin_target(dst, p->container->workspace_at, err)) < 0)
		return -1;
	if (plan->ws_fd >= 0)
		return berth_mnt_attach_at(plan->ws_fd, tfd, p->container->workspace_at, err);
	return berth_mnt_bind_source("the workspace", p->workspace, plan->ws_src_fd, tfd,
				     p->container->workspace_at, 0, err);
}

static bool mounts_at(const struct berth_policy *p, const char *dst)
{
	for (size_t i = 0; i < p->n_mounts; i++)
		if (strcmp(p->mounts[i].dst, dst) == 0)
			return true;
	return false;
}

/* linux.maskedPaths: a read-only empty tmpfs over a directory, /dev/null
 * over anything else; a path that is not there is left alone (runc's
 * meaning).  linux.readonlyPaths: bound read-only over themselves. */
static int container_paths(const struct berth_container *c, struct berth_error *err)
{
	for (size_t i = 0; i < c->n_masked + c->n_readonly; i++) {
		bool mask = i < c->n_masked;
		const char *path = mask ? c->masked[i] : c->readonly[i - c->n_masked];
		char real[PATH_MAX];
		struct stat st;

		cleanup_close int tfd = -1;
		char at[64];

		if (resolve_in_newroot(path, real, sizeof real) < 0 || lstat(real, &st) < 0)
			continue;
		if ((tfd = pin_target(real, path, err)) < 0)
			return -1;
		berth_mnt_pinned_path(tfd, at, sizeof at);
		if (!mask) {
			if (bind_at(at, tfd, MOUNT_ATTR_RDONLY, path, err) < 0)
				return berth_err_wrap(err, "cannot bind the read-only path `%s`", path);
		} else if (S_ISDIR(st.st_mode)) {
			if (tmpfs(at, "mode=0555,size=4k", MS_RDONLY | MS_NOEXEC, err) < 0)
				return berth_err_wrap(err, "cannot mask `%s`", path);
		} else if (mount(NEWROOT "/dev/null", at, NULL, MS_BIND, NULL) < 0) {
			return berth_err(err, errno, "cannot mask `%s`", path);
		}
	}
	return 0;
}

/* A container: its root instead of the host's system directories; then
 * the workspace, the bundle's mounts, berth's /tmp (unless the bundle
 * mounts one), /dev, /proc and /sys of the sandbox's own, the masked and
 * read-only paths, and the root read-only unless the bundle asks
 * otherwise.  No $HOME tmpfs: the image has its own home. */
static int container_build(const struct berth_mount_plan *plan, struct berth_error *err)
{
	const struct berth_policy *p = plan->policy;
	uint64_t root_attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;

	if (base_and_pivot(false, err) < 0 || container_root(plan, err) < 0)
		return -1;
	if (p->workspace != NULL && container_workspace(plan, err) < 0)
		return -1;
	if (extra_mounts(plan, err) < 0)
		return -1;
	if (plan->resolver && resolver_conf(err) < 0)
		return -1;
	if (berth_guard_mount(plan->guard, NEWROOT, OLDROOT "/proc", err) < 0)
		return -1;
	if (!mounts_at(p, "/tmp")) {
		char opts[64];
		snprintf(opts, sizeof opts, "mode=1777,size=%llu", (unsigned long long)p->tmp_size);
		if (mkdir_mp(NEWROOT "/tmp", 01777, err) < 0 || tmpfs(NEWROOT "/tmp", opts, 0, err) < 0)
			return -1;
	}
	if (dev_tree(p, err) < 0 || proc_tree(err) < 0 || sys_tree(plan, err) < 0 ||
	    container_paths(p->container, err) < 0)
		return -1;
	if (!p->container->root_rw)
		root_attrs |= MOUNT_ATTR_RDONLY;
	if (berth_mnt_set_attr(NEWROOT, root_attrs, false, err) < 0)
		return -1;
	return finish_pivot(err);
}

int berth_mounts_build(const struct berth_mount_plan *plan, struct berth_error *err)
{
	if (plan->policy->container != NULL)
		return container_build(plan, err);
	if (base_and_pivot(true, err) < 0 || system_tree(!plan->system_by_landlock, err) < 0 ||
	    workspace(plan, err) < 0)
		return -1;
	if (extra_mounts(plan, err) < 0 || evidence_tree(plan, err) < 0)
		return -1;
	if (plan->resolver && resolver_conf(err) < 0)
		return -1;
	if (berth_guard_mount(plan->guard, NEWROOT, OLDROOT "/proc", err) < 0)
		return -1;
	if (private_dirs(plan, err) < 0 || dev_tree(plan->policy, err) < 0 || proc_tree(err) < 0 ||
	    sys_tree(plan, err) < 0)
		return -1;
	/* The root itself is read-only: no new top-level files. */
	if (berth_mnt_set_attr(NEWROOT, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false,
			       err) < 0)
		return -1;
	return finish_pivot(err);
}
