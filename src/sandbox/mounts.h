/* SPDX-License-Identifier: MIT */
/*
 * mounts.h - the sandbox's constructed root.
 */
#ifndef BERTH_MOUNTS_H
#define BERTH_MOUNTS_H

/* Pseudo-terminals one sandbox may hold at once (its devpts instance's
 * max=; the pty berth gives the command is one of them). */
#define BERTH_PTY_MAX 128

#include <stdbool.h>
#include <sys/stat.h>

#include "../policy/policy.h"
#include "../util/error.h"
#include "guard.h"
#include "../runtime/home_files.h"

struct berth_mount_plan {
	const struct berth_policy *policy;
	const struct berth_guard *guard;
	const char *home; /* $HOME inside, e.g. "/home/alice" */
	int ws_fd;        /* detached idmapped tree of the workspace, or -1 to bind */
	/* A container (policy->container): the detached idmapped tree of its
	 * root, or -1 to bind it from @root_src_fd (berth_source_open) */
	int root_fd;
	int root_src_fd;
	int home_fd;          /* detached idmapped tree of policy->home_dir, or -1 to bind it */
	const int *mount_fds; /* per policy->mounts: detached idmapped tree or -1 */
	/* The workspace and each --ro/--rw source as berth opened them once
	 * (berth_source_open): a bind is made from the child's own descriptor
	 * of the same inode, never from whatever the name leads to later. */
	int ws_src_fd;
	const int *src_fds;       /* per policy->mounts */
	const bool *mount_is_dir; /* per policy->mounts: the source is a directory */
	bool own_netns;           /* a new network namespace (sysfs may be mounted) */
	int sys_fd;               /* !own_netns, a container: the parent's sysfs of the joined one, or -1 */
	/* --network proxy: /etc/resolv.conf names the sandbox's resolver
	 * (netns.h), bound read-only over the host's file or its link's target */
	bool resolver;
	/* Resident apps under Landlock: the system directories are bound
	 * without the read-only mount flag, because Landlock (which allows them
	 * read and execute only) then answers a write with EACCES, a denial
	 * berth can explain, instead of the mount's EROFS; ownership (DAC)
	 * refuses too.  Never set when Landlock is not enforced. */
	bool system_by_landlock;
	/* --evidence: a detached read-only tree made by berth (invoked by root,
	 * which the sandbox identity cannot follow into), or -1 to bind
	 * policy->evidence_dir from the host. */
	int evidence_fd;
	/* Files written into a fresh tmpfs home (berth_runtime_opts.home_files). */
	const struct berth_home_file *home_files;
	size_t n_home_files;
	/* policy->review: where the review layer's mount descriptor is stored
	 * (docs/review.md; sent to berth at sync 2). */
	int *review_fd;
};

/*
 * berth_mounts_build - in the child, inside its new user and mount
 * namespaces, build the root described in docs/security.md and pivot_root(2)
 * into it.  On return the host's tree is unreachable, the cwd is "/".
 * Order: make every mount a slave; tmpfs base on /tmp; pivot into it keeping
 * the old root at /oldroot; build /newroot (system dirs read-only, workspace,
 * extra mounts, guard, /tmp, home, /dev, /proc, /sys); make /newroot
 * read-only; detach /oldroot; pivot into /newroot.
 * Returns 0, or -1 with @err filled.
 */
int berth_mounts_build(const struct berth_mount_plan *plan, struct berth_error *err);

/*
 * berth_open_nofollow - open @path (below @dirfd when relative) O_PATH |
 * O_CLOEXEC | @flags (O_DIRECTORY is the one that matters) with no symbolic
 * link followed at any component: openat2(2) RESOLVE_NO_SYMLINKS, or, where
 * that is ENOSYS (an old kernel, a seccomp filter such as berth's own), one
 * openat(2) O_NOFOLLOW per component below the previous descriptor.
 * Returns the descriptor, or -1 with errno (ELOOP: a link on the way).
 */
int berth_open_nofollow(int dirfd, const char *path, int flags);

/*
 * berth_source_open - in berth (the parent), last before the sandbox is
 * built: open @path (a physical path from realpath(3)), @what in messages
 * ("the workspace", "the --ro source"), once, O_PATH, with openat2(2)
 * RESOLVE_NO_SYMLINKS: a symbolic link at any component, planted since berth
 * resolved it, is refused, not followed.  The sandbox's mount is made from
 * this descriptor (idmapped trees) or from the child's own descriptor of the
 * same inode (binds).  @st gets its fstat(2).  Returns the descriptor
 * (O_CLOEXEC), or -1 with @err: status 2 when the path changed (a link, gone,
 * a workspace that is no directory), naming it; errno otherwise.
 */
int berth_source_open(const char *what, const char *path, struct stat *st, struct berth_error *err);

/*
 * berth_ro_tree - in berth (the parent): a detached copy of the mount tree
 * at @path (open_tree(2) OPEN_TREE_CLONE|AT_RECURSIVE) made read-only,
 * noexec, nosuid and nodev (mount_setattr(2)), for the child to attach
 * with move_mount(2).  Needs CAP_SYS_ADMIN (berth invoked by root).
 * Returns the mount fd, or -1 with @err filled.
 */
int berth_ro_tree(const char *path, struct berth_error *err);

#endif
