/* SPDX-License-Identifier: MIT */
/*
 * guard.h - the workspace guard: what the host's tools later run or trust
 * (a repository's config and hooks, agents' and editors' settings, shell and
 * package-manager files; src/policy/trust.h) is read-only in the sandbox
 * where it exists when the run starts, and what the sandbox made or changed
 * under such a name anywhere is set aside when the run ends (trustscan.h).
 *
 * Nothing is created or changed in the host's tree to build the guard: every
 * mount is made in the sandbox's own mount namespace, on a path that exists.
 * A *writable root* is the workspace or an `--rw` source that is a
 * directory; each one gets the guard, and a path the sandbox can reach
 * through several roots (the workspace inside an `--rw` parent) is
 * read-only under each of them.
 *
 * In each root, when the run starts:
 *  - its repository, by git's rules (gitrules.h): `.git` (a directory, or
 *    a `gitdir:` file, read-only, and the directory it names when that lies
 *    in a writable root) is pinned (bound onto itself, so it cannot be
 *    renamed, removed or replaced: EBUSY), with objects/ and refs/; its
 *    config, config.worktree, commondir and hooks/ are read-only; each
 *    worktrees/<id> the host made is read-only and worktrees/ pinned; each
 *    git directory under modules/ (submodules) is pinned with its config
 *    and hooks/ read-only; every file the config includes (include.path,
 *    includeIf.*.path) and its core.hooksPath directory, where they lie in
 *    a writable root, are read-only;
 *  - each trust name at its top (trust.h, BERTH_TRUST_READONLY) that
 *    exists is read-only, a directory as a whole.
 * A guarded path that is a symbolic link is refused (BERTH_EXIT_USAGE):
 * berth could not protect what it points to.
 */
#ifndef BERTH_GUARD_H
#define BERTH_GUARD_H

#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

#include "../policy/policy.h"
#include "../util/error.h"

/* Writable roots at most: the workspace and 32 `--rw` directories. */
#define BERTH_GUARD_ROOTS 33
/* Mounts the guard makes at most (pins and read-only binds, every root). */
#define BERTH_GUARD_MAX 512
/* Linked worktrees of one repository guarded at most. */
#define BERTH_GUARD_WORKTREES 64
/* Paths outside the usual layout watched at exit (include targets, hooksPath). */
#define BERTH_GUARD_WATCH 32
/* Bytes of a HEAD berth keeps to put back (gitrules.h). */
#define BERTH_GUARD_HEAD_MAX 512

struct berth_guard_root {
	char *host;       /* physical host path */
	char *inside;     /* the same directory in the sandbox ("/workspace", an --rw target) */
	bool nested;      /* inside another root's host path: walked with it at exit */
	char *head;       /* its repository's HEAD when the run started and valid, or NULL */
	char *gitdir;     /* that repository's git directory (host path), or NULL */
	unsigned missing; /* BERTH_GUARD_MISSING_* bits: names absent from @gitdir at the start */
	/* $XDG_STATE_HOME/berth/trust/known: the directories (device, inode)
	 * that were repositories or trust names when this user's earlier runs
	 * ended, under any root (trustscan.h); NULL when no state directory can
	 * be named.  The same for every root. */
	char *known;
};

/* Names in a repository's git directory that redirect git's config or
 * hooks and that git itself makes only in `git init` (hooks/, config) or
 * never in a main repository (commondir, config.worktree without
 * `git config --worktree`): when absent at the start, watched during the
 * run (trustscan.h, berth_trust_watch). */
#define BERTH_GUARD_MISSING_COMMONDIR 1u
#define BERTH_GUARD_MISSING_WORKTREE_CONFIG 2u
#define BERTH_GUARD_MISSING_CONFIG 4u
#define BERTH_GUARD_MISSING_HOOKS 8u /* recorded; not watched (trustscan.h) */

struct berth_guard_bind {
	int root;  /* index into roots */
	char *rel; /* relative to the root, never empty */
	bool ro;   /* read-only; false: pinned (bound read-write onto itself) */
};

struct berth_guard {
	struct berth_guard_root roots[BERTH_GUARD_ROOTS];
	int n_roots;
	struct berth_guard_bind binds[BERTH_GUARD_MAX]; /* pins first, shallower first */
	int n_binds;
	char *watch[BERTH_GUARD_WATCH]; /* host paths: include targets, hooksPath dirs */
	int n_watch;
	bool git_existed;        /* the workspace's `.git` existed when the run started */
	struct timespec started; /* CLOCK_REALTIME_COARSE when the guard was prepared */
};

/*
 * berth_guard_prepare - look at each writable root of @p and fill @g with
 * the mounts to make.  Creates nothing on the host.
 * Returns 0, or -1 with @err filled: BERTH_EXIT_USAGE for a guarded path
 * (or a directory on its way) that is a symbolic link, a repository with
 * more than BERTH_GUARD_WORKTREES linked worktrees, or more than
 * BERTH_GUARD_MAX mounts; an errno for a directory that cannot be read.
 * On failure @g holds nothing (berth_guard_free is still safe).
 */
int berth_guard_prepare(const struct berth_policy *p, struct berth_guard *g, struct berth_error *err);

/*
 * berth_guard_prepare_scan - berth_guard_prepare for the trust scan of a
 * run that has ended (trustrepair.c): what the run left on its roots (a
 * symlink at a trust name, too many worktrees or mounts) is not refused,
 * since the scan is what sets it aside; only a root that cannot be looked
 * at fails.  *@short_watch is set when a repository's guard was cut short
 * (its watch list may miss an include or hooks directory).
 */
int berth_guard_prepare_scan(const struct berth_policy *p, struct berth_guard *g, bool *short_watch,
			     struct berth_error *err);

/*
 * berth_guard_mount - in the sandbox's mount namespace, with the sandbox's
 * root being built at @newroot (e.g. "/newroot", the workspace and the
 * `--rw` mounts in place) and a procfs at @proc (e.g. "/oldroot/proc"),
 * make the mounts of @g.  Each path is opened with openat2(2)
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS from its root and bound through
 * /proc/self/fd.  Returns 0, or -1 with @err filled.
 */
int berth_guard_mount(const struct berth_guard *g, const char *newroot, const char *proc,
		      struct berth_error *err);

/* berth_guard_free - release @g.  Never fails. */
void berth_guard_free(struct berth_guard *g);

#endif
