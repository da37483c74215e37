/* SPDX-License-Identifier: MIT */
/*
 * guard.h - the workspace guard: paths a host later executes or trusts
 * (.git/hooks, .git/config, .bashrc, .vscode/, ...) are read-only inside the
 * otherwise writable workspace.
 *
 * Existing guarded paths are bind-mounted read-only onto themselves; the
 * directory that holds them inside the workspace (.git) is pinned with a bind
 * mount onto itself, so none of them can be renamed, removed or replaced by a
 * symlink (rename(2)/unlink(2) of a mount point fail with EBUSY).  A guarded
 * path that does not exist yet gets a placeholder for the run, mounted
 * read-only, so nothing can be created under that name:
 *  - a socket inode with mode 0000 (mknod(2) S_IFSOCK, bound to nothing):
 *    git ignores it (status, add -A), open(2) of it fails at once for
 *    everyone: EACCES, or ENXIO for root (a FIFO would block a root
 *    reader), a path below it is ENOTDIR, and it has no data block, so
 *    making and removing one costs a fraction of an empty directory on ext4
 *    (rmdir(2) journals the freed block and the orphan list);
 *  - for .claude/ and .codex/, which the agents berth runs read inside the
 *    sandbox, an empty 0555 directory with the xattr user.berth.placeholder
 *    (a file below it is ENOENT, not ENOTDIR);
 *  - for .git/config and .git/config.worktree, which git must read, an empty
 *    0444 regular file with the xattr user.berth.placeholder;
 *  - for .git/commondir, a 0444 regular file holding ".\n" with the same
 *    xattr: git dies on an empty `commondir`, and "." names the directory
 *    git uses when there is none.
 * .git/worktrees/ is guarded only when it exists: it is pinned, and the
 * directory of each linked worktree the host made is read-only.
 * berth removes the placeholders when the run ends (or its janitor does, when
 * berth itself was killed), unless another run on the same workspace is
 * still going: each run holds a shared flock(2) on the workspace directory, a
 * concurrent run adopts placeholders it recognises (mode-0000 socket, or the
 * xattr), and only the last run removes them.
 */
#ifndef BERTH_GUARD_H
#define BERTH_GUARD_H

#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

#include "../policy/policy.h"
#include "../util/error.h"

/* Linked worktrees of the workspace's repository guarded at most
 * (.git/worktrees/<id>, read-only each). */
#define BERTH_GUARD_WORKTREES 64
#define BERTH_GUARD_MAX (32 + BERTH_GUARD_WORKTREES)

struct berth_guard {
	char *pins[BERTH_GUARD_MAX];    /* workspace-relative dirs bound rw onto themselves */
	int n_pins;
	char *ro[BERTH_GUARD_MAX];      /* workspace-relative paths bound read-only */
	int n_ro;
	char *created[BERTH_GUARD_MAX]; /* absolute host paths of placeholders we made */
	int n_created;
	bool git_existed;               /* .git existed when the run started */
	struct timespec started;        /* CLOCK_REALTIME_COARSE when the guard was prepared */
	int lock_fd;                    /* workspace fd holding a shared flock(2) for the run */
};

/*
 * berth_guard_prepare - inspect the workspace of @p, create placeholders
 * owned by @owner:@group for missing guarded paths whose parent exists, and
 * fill @g.  Refuses (EXIT_USAGE) a guarded path, or a directory on its way,
 * that is a symlink: berth could not protect it; and a repository with more
 * than BERTH_GUARD_WORKTREES linked worktrees (EXIT_USAGE).
 * Returns 0, or -1 with @err filled; on failure no placeholder is left.
 */
int berth_guard_prepare(const struct berth_policy *p, uid_t owner, gid_t group, struct berth_guard *g,
			struct berth_error *err);

/*
 * berth_guard_mount - in the sandbox's mount namespace, with the workspace
 * mounted at @ws_root (e.g. "/newroot/workspace") and a procfs at @proc
 * (e.g. "/oldroot/proc"), make the mounts of @g.
 * Returns 0, or -1 with @err filled.
 */
int berth_guard_mount(const struct berth_guard *g, const char *ws_root, const char *proc,
		      struct berth_error *err);

/*
 * berth_guard_cleanup - when no other run holds the workspace lock, remove
 * the placeholders that are still placeholders (a mode-0000 socket or FIFO,
 * an empty directory, an empty regular file, a regular file holding ".\n"),
 * then free @g.  Never fails.
 */
void berth_guard_cleanup(struct berth_guard *g);

/* berth_guard_remove_paths - remove each path that is still an empty
 * placeholder (janitor use: it calls berth_guard_cleanup's lock check first). */
void berth_guard_remove_paths(char *const paths[], int n);

/* The scan for repositories the sandbox made or changed: at most this many
 * directory entries, this many milliseconds, this deep; paths listed. */
#define BERTH_GUARD_SCAN_ENTRIES 1000000L
#define BERTH_GUARD_SCAN_MS 1000
#define BERTH_GUARD_SCAN_DEPTH 64
#define BERTH_GUARD_SCAN_LIST 8

struct berth_guard_repos {
	int n;                              /* repositories found */
	char *paths[BERTH_GUARD_SCAN_LIST]; /* the first ones, workspace-relative (`sub/.git`, `.git/modules/x`) */
	int n_paths;
	bool incomplete;                    /* some directory was not looked at: a budget, the depth, a path
					     * longer than PATH_MAX, or one berth could not open (EACCES) */
};

/*
 * berth_guard_scan_repos - after a run, find the git repositories in the
 * workspace @ws, other than the top-level `.git` itself, whose `.git` entry
 * or whose config, commondir, config.worktree, hooks directory or hooks were
 * made or changed at or after @since (CLOCK_REALTIME_COARSE, the clock of
 * inode times; the ctime, which no system call can set back): `.git`
 * directories, `gitdir:` files (submodules, worktrees) with their git
 * directory when it lies in the workspace, symlinks named `.git`, and the
 * top-level repository's `.git/modules/...`.  The host's git, and `git status`
 * in the top-level repository (it recurses into submodules), reads their
 * config and runs their hooks.  Symlinks are never followed while walking.
 * Bounded by BERTH_GUARD_SCAN_ENTRIES, _MS and _DEPTH; @out->incomplete
 * says when a directory was not looked at (a bound, a path too long, or one
 * that cannot be opened, which a sandbox can make with chmod 000).
 * Returns 0 with @out filled (free it with berth_guard_repos_free), or -1
 * with @err filled when @ws cannot be opened.
 */
int berth_guard_scan_repos(const char *ws, const struct timespec *since, struct berth_guard_repos *out,
			   struct berth_error *err);

void berth_guard_repos_free(struct berth_guard_repos *r);

#endif
