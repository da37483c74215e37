/* SPDX-License-Identifier: MIT */
/*
 * staging.c - the guest's root file system as the host builds it, in
 * virtiofsd's own user and mount namespaces (virtiofsd.c), before virtiofsd
 * serves it as the one share `root` (docs/vm.md, "THE DESIGN"):
 *
 *   a tmpfs (read-only once built) with the mount points /dev /proc /sys
 *   /tmp /run /mnt the guest mounts its own on;
 *   the system directories of src/policy/sysdirs.h (the BIND rows) bound
 *   read-only from the host, the host's own links (/bin -> usr/bin) made
 *   as the same links;
 *   the workspace, a persistent home and each --rw source bound read-write,
 *   each --ro source and the evidence read-only, all at their HOST paths:
 *   the guest's namespace runtime binds them where the policy says, from
 *   the same paths the policy's canonical JSON names.
 *
 * Read-only is the bind's (mount_setattr MOUNT_ATTR_RDONLY, recursive): a
 * write through virtiofsd fails EROFS on the host, whatever the guest's
 * kernel or a process with capabilities in it does.  Every bind is nosuid
 * and nodev.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../policy/sysdirs.h"
#include "../sandbox/userns.h"
#include "../util/cleanup.h"
#include "../util/rundir.h"
#include "vm_int.h"

static const char *const own_dirs[] = {"dev", "proc", "sys", "tmp", "run", "mnt", NULL};

/* The mount point for @src (a directory or a file) at STAGING/@src. */
static int mount_point(const char *staging, const char *src, bool dir, char *at, size_t len,
		       struct berth_error *err)
{
	if ((size_t)snprintf(at, len, "%s%s", staging, src) >= len)
		return berth_err(err, ENAMETOOLONG, "the staging path of `%s` is too long", src);
	if (berth_mkdir_parents(at, 0755, err) < 0)
		return -1;
	if (dir ? mkdir(at, 0755) < 0 && errno != EEXIST
		: mknod(at, S_IFREG | 0644, 0) < 0 && errno != EEXIST)
		return berth_err(err, errno, "cannot make the mount point `%s`", at);
	return 0;
}

/* Bind the host's @src (its whole tree) at its own path in the staging
 * tree, read-only unless @rw, always nosuid and nodev. */
static int bind_at(const char *staging, const char *src, bool rw, const struct berth_ids *idmap,
		   struct berth_error *err)
{
	char at[PATH_MAX * 2];
	struct stat st;
	struct mount_attr attr = {.attr_set =
				      MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (rw ? 0 : MOUNT_ATTR_RDONLY)};
	cleanup_close int fd = -1;

	if (lstat(src, &st) < 0)
		return berth_err(err, errno, "cannot share `%s` with the microVM", src);
	if (mount_point(staging, src, S_ISDIR(st.st_mode), at, sizeof at, err) < 0)
		return -1;
	/* The tree cloned by the descriptor of @src opened without following
	 * a last link (the policy's sources are physical paths already);
	 * root's writable shares idmapped: its owner's files are the guest's */
	if (rw && idmap != NULL) {
		fd = berth_idmapped_tree(-1, src, st.st_uid, st.st_gid, idmap, false, err);
		if (fd < 0)
			return -1;
	} else {
		fd = (int)syscall(SYS_open_tree, AT_FDCWD, src,
				  OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_SYMLINK_NOFOLLOW);
	}
	if (fd < 0)
		return berth_err(err, errno, "cannot clone the mount of `%s`", src);
	if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) < 0)
		return berth_err(err, errno, "cannot make `%s` %s for the microVM", src,
				 rw ? "nosuid" : "read-only");
	if (syscall(SYS_move_mount, fd, "", AT_FDCWD, at, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return berth_err(err, errno, "cannot mount `%s` at `%s`", src, at);
	return 0;
}

/* A BIND row of the system directories: bound, or made as the host's link. */
static int sysdir(const char *staging, const struct berth_sysdir *d, struct berth_error *err)
{
	char at[PATH_MAX * 2], target[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (lstat(d->path, &st) < 0)
		return d->optional && errno == ENOENT ? 0
						      : berth_err(err, errno, "cannot share `%s`", d->path);
	if (!S_ISLNK(st.st_mode))
		return bind_at(staging, d->path, false, NULL, err);
	n = readlink(d->path, target, sizeof target - 1);
	if (n < 0)
		return berth_err(err, errno, "cannot read the link `%s`", d->path);
	target[n] = '\0';
	snprintf(at, sizeof at, "%s%s", staging, d->path);
	if (symlink(target, at) < 0 && errno != EEXIST)
		return berth_err(err, errno, "cannot make the link `%s`", at);
	return 0;
}

int berth_vm_build_staging(const struct berth_policy *p, const char *staging, const struct berth_ids *idmap,
			   struct berth_error *err)
{
	char at[PATH_MAX * 2];

	/* nothing of this namespace's mounts goes back to the host's */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return berth_err(err, errno, "cannot make the staging namespace's mounts private");
	if (mount("berth-vm", staging, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m,nr_inodes=4096") < 0)
		return berth_err(err, errno, "cannot mount the staging tmpfs at `%s`", staging);
	for (size_t i = 0; own_dirs[i] != NULL; i++) {
		snprintf(at, sizeof at, "%s/%s", staging, own_dirs[i]);
		if (mkdir(at, 0755) < 0)
			return berth_err(err, errno, "cannot make `%s`", at);
	}
	for (size_t i = 0; i < berth_n_sysdirs; i++)
		if (berth_sysdirs[i].mount == BERTH_SYSDIR_BIND &&
		    sysdir(staging, &berth_sysdirs[i], err) < 0)
			return -1;
	if (p->workspace != NULL && bind_at(staging, p->workspace, true, idmap, err) < 0)
		return -1;
	if (p->home_dir != NULL && bind_at(staging, p->home_dir, true, idmap, err) < 0)
		return -1;
	/* in the order given: a --ro below the workspace lands on its bind */
	for (size_t i = 0; i < p->n_mounts; i++)
		if (p->mounts[i].src != NULL &&
		    bind_at(staging, p->mounts[i].src, p->mounts[i].rw, idmap, err) < 0)
			return -1;
	if (p->evidence_dir != NULL && bind_at(staging, p->evidence_dir, false, NULL, err) < 0)
		return -1;
	/* the guest's uid owns the tmpfs's root (it was made by virtiofsd's
	 * uid): read-only, so that it cannot add to it */
	if (mount(NULL, staging, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
		return berth_err(err, errno, "cannot make the staging tmpfs read-only");
	return 0;
}
