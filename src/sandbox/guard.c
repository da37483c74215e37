/* SPDX-License-Identifier: MIT */

#include "guard.h"

#include <dirent.h>
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
#include <sys/file.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "../util/cleanup.h"

#define PLACEHOLDER_XATTR "user.berth.placeholder"

static bool unprotected(const struct berth_policy *p, const char *g)
{
	for (size_t i = 0; i < p->n_unprotect; i++)
		if (strcmp(p->unprotect[i], g) == 0)
			return true;
	return false;
}

static int push(char **v, int *n, const char *s)
{
	for (int i = 0; i < *n; i++)
		if (strcmp(v[i], s) == 0)
			return 0;
	if (*n >= BERTH_GUARD_MAX)
		return -1;
	v[*n] = strdup(s);
	if (v[*n] == NULL)
		return -1;
	(*n)++;
	return 0;
}

/*
 * What stands in for a missing guarded path (guard.h):
 *  - PH_SOCK: a mode-0000 socket inode (mknod(2) S_IFSOCK, bound to
 *    nothing): open(2) of it fails at once with ENXIO, even for root (a
 *    FIFO would block a root reader on the host until a writer came);
 *  - PH_DIR: an empty 0555 directory with the xattr, for the project
 *    configuration directories the agents berth runs read inside the
 *    sandbox (.claude/, .codex/): a path below it is ENOENT, the normal
 *    "not configured", where below a socket it is ENOTDIR, which Claude Code
 *    reports as a settings file it could not read;
 *  - PH_EMPTY: an empty 0444 file, for a config git must be able to read;
 *  - PH_DOT: a 0444 file holding ".\n", for a `commondir`: git would die on an
 *    empty one, and "." names the directory that holds it, which is where
 *    git looks when there is no `commondir` at all (gitrepository-layout(5)).
 */
enum placeholder { PH_SOCK, PH_DIR, PH_EMPTY, PH_DOT };

#define DOT_CONTENT ".\n"

static enum placeholder placeholder_kind(const char *rel)
{
	const char *base = strrchr(rel, '/');

	base = base != NULL ? base + 1 : rel;
	if (strcmp(base, "commondir") == 0)
		return PH_DOT;
	if (strchr(rel, '/') != NULL && (strcmp(base, "config") == 0 || strcmp(base, "config.worktree") == 0))
		return PH_EMPTY;
	if (strcmp(rel, ".claude") == 0 || strcmp(rel, ".codex") == 0)
		return PH_DIR;
	return PH_SOCK;
}

/* Is the regular file at @path exactly the ".\n" of a PH_DOT placeholder? */
static bool holds_dot(const char *path, const struct stat *st)
{
	char buf[sizeof DOT_CONTENT];
	cleanup_close int fd = -1;

	if (!S_ISREG(st->st_mode) || st->st_size != (off_t)(sizeof DOT_CONTENT - 1))
		return false;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || read(fd, buf, sizeof buf) != (ssize_t)(sizeof DOT_CONTENT - 1))
		return false;
	return memcmp(buf, DOT_CONTENT, sizeof DOT_CONTENT - 1) == 0;
}

/* Is @path an empty directory? */
static bool empty_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	bool empty = true;

	if (d == NULL)
		return false;
	while (empty && (de = readdir(d)) != NULL)
		empty = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
	closedir(d);
	return empty;
}

/* A placeholder of ours: a mode-0000 socket (or FIFO, from a berth before
 * sockets), an empty 0555 directory with our xattr, or a regular file with
 * our xattr. */
static bool is_placeholder(const char *path, const struct stat *st)
{
	if (S_ISSOCK(st->st_mode) || S_ISFIFO(st->st_mode))
		return (st->st_mode & 07777) == 0;
	if (S_ISDIR(st->st_mode))
		return (st->st_mode & 07777) == 0555 && lgetxattr(path, PLACEHOLDER_XATTR, NULL, 0) >= 0 &&
		       empty_dir(path);
	return S_ISREG(st->st_mode) && (st->st_size == 0 || holds_dot(path, st)) &&
	       lgetxattr(path, PLACEHOLDER_XATTR, NULL, 0) >= 0;
}

static int refuse_symlink(const char *ws, const char *rel, struct berth_error *err)
{
	berth_usage_err(err, "guarded path `%s/%s` is a symlink, which berth cannot protect", ws, rel);
	return berth_err_hint(err, "replace it with the file it points to, or pass `--unprotect %s`", rel);
}

static int push_or_full(char **v, int *n, const char *s, struct berth_error *err)
{
	if (push(v, n, s) == 0)
		return 0;
	if (*n >= BERTH_GUARD_MAX)
		return berth_err(err, E2BIG, "the workspace guard holds at most %d paths; `%s` is one too many",
				 BERTH_GUARD_MAX, s);
	return berth_err(err, ENOMEM, "guard");
}

/* Make the placeholder @kind at @path (absent), owned by @owner:@group. */
static int make_placeholder(const char *path, enum placeholder kind, uid_t owner, gid_t group,
			    struct berth_guard *g, struct berth_error *err)
{
	if (kind == PH_SOCK) {
		if (mknod(path, S_IFSOCK, 0) < 0)
			return berth_err(err, errno, "cannot create the guard placeholder `%s`", path);
	} else if (kind == PH_DIR) {
		if (mkdir(path, 0555) < 0)
			return berth_err(err, errno, "cannot create the guard placeholder `%s`", path);
		(void)lsetxattr(path, PLACEHOLDER_XATTR, "1", 1, 0);
	} else {
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
		bool ok;

		if (fd < 0)
			return berth_err(err, errno, "cannot create the guard placeholder `%s`", path);
		ok = kind != PH_DOT ||
		     write(fd, DOT_CONTENT, sizeof DOT_CONTENT - 1) == (ssize_t)(sizeof DOT_CONTENT - 1);
		if (!ok) {
			int e = errno != 0 ? errno : EIO;
			close(fd);
			unlink(path);
			return berth_err(err, e, "cannot write the guard placeholder `%s`", path);
		}
		close(fd);
		/* Best effort: lets a concurrent run recognise the placeholder. */
		(void)lsetxattr(path, PLACEHOLDER_XATTR, "1", 1, 0);
	}
	if (push_or_full(g->created, &g->n_created, path, err) < 0) {
		unlink(path);
		return -1;
	}
	if (geteuid() == 0 && lchown(path, owner, group) < 0)
		return berth_err(err, errno, "cannot chown the guard placeholder `%s`", path);
	return 0;
}

/* Make the workspace-relative @rel read-only in the sandbox: as it is, or
 * through a placeholder when it does not exist. */
static int guard_path(const struct berth_policy *p, const char *rel, uid_t owner, gid_t group,
		      struct berth_guard *g, struct berth_error *err)
{
	char path[PATH_MAX];
	struct stat st;

	if ((size_t)snprintf(path, sizeof path, "%s/%s", p->workspace, rel) >= sizeof path)
		return berth_err(err, ENAMETOOLONG, "guarded path `%s/%s`", p->workspace, rel);
	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode))
			return refuse_symlink(p->workspace, rel, err);
		/* A placeholder of a run still going on: ours to remove too. */
		if (is_placeholder(path, &st) && push_or_full(g->created, &g->n_created, path, err) < 0)
			return -1;
	} else if (errno == ENOENT) {
		if (make_placeholder(path, placeholder_kind(rel), owner, group, g, err) < 0)
			return -1;
	} else {
		return berth_err(err, errno, "cannot inspect guarded path `%s`", path);
	}
	return push_or_full(g->ro, &g->n_ro, rel, err);
}

/*
 * .git/worktrees/: the administrative directories of the repository's linked
 * worktrees.  Each one's `commondir` tells git in that worktree where the
 * config and hooks are, so a sandbox that rewrote it (or renamed the
 * directory and made another) would choose the config the host's git reads
 * there; and `git worktree prune` inside, where the host's worktrees do not
 * exist, would delete their files.  When the directory exists it is pinned,
 * and the directory of each worktree the host made is read-only as a whole.
 * Worktrees the sandbox adds are its own (like a repository it makes with
 * git init): their `gitdir` file names a /workspace path, which the host's
 * git cannot use.
 */
static bool sandbox_made_worktree(const char *admin)
{
	char path[PATH_MAX], buf[64];
	cleanup_close int fd = -1;
	ssize_t n;

	snprintf(path, sizeof path, "%s/gitdir", admin);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || (n = read(fd, buf, sizeof buf - 1)) <= 0)
		return false;
	buf[n] = '\0';
	return strncmp(buf, "/workspace/", 11) == 0;
}

static int guard_worktrees(const struct berth_policy *p, struct berth_guard *g, struct berth_error *err)
{
	static const char rel[] = ".git/worktrees";
	char path[PATH_MAX], sub[PATH_MAX];
	struct stat st;
	DIR *d;
	struct dirent *e;
	int rc = 0, n = 0;

	snprintf(path, sizeof path, "%s/%s", p->workspace, rel);
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : berth_err(err, errno, "cannot inspect guarded path `%s`", path);
	if (S_ISLNK(st.st_mode))
		return refuse_symlink(p->workspace, rel, err);
	if (!S_ISDIR(st.st_mode))
		return 0; /* git ignores it */
	if (push_or_full(g->pins, &g->n_pins, rel, err) < 0)
		return -1;
	d = opendir(path);
	if (d == NULL)
		return berth_err(err, errno, "cannot read guarded directory `%s`", path);
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(sub, sizeof sub, "%s/%s", rel, e->d_name);
		snprintf(path, sizeof path, "%s/%s", p->workspace, sub);
		if (lstat(path, &st) < 0)
			continue; /* gone meanwhile: git's own pruning */
		if (S_ISLNK(st.st_mode)) {
			rc = refuse_symlink(p->workspace, sub, err);
			break;
		}
		if (!S_ISDIR(st.st_mode) || sandbox_made_worktree(path))
			continue;
		if (++n > BERTH_GUARD_WORKTREES) {
			berth_usage_err(err, "`%s/%s` has more than %d linked worktrees, which berth cannot all guard",
					p->workspace, rel, BERTH_GUARD_WORKTREES);
			rc = berth_err_hint(err, "remove stale ones (`git worktree prune`), or pass "
						 "`--unprotect .git/worktrees`");
			break;
		}
		rc = push_or_full(g->ro, &g->n_ro, sub, err);
	}
	closedir(d);
	return rc;
}

/* One guarded entry such as ".git/hooks/" or ".bashrc". */
static int prepare_one(const struct berth_policy *p, const char *entry, uid_t owner, gid_t group,
		       struct berth_guard *g, struct berth_error *err)
{
	char rel[PATH_MAX], path[PATH_MAX], parent_rel[PATH_MAX];
	size_t n = strlen(entry);
	struct stat st;
	char *slash;

	snprintf(rel, sizeof rel, "%.*s", (int)(entry[n - 1] == '/' ? n - 1 : n), entry);
	snprintf(parent_rel, sizeof parent_rel, "%s", rel);
	slash = strchr(parent_rel, '/');
	if (slash != NULL) {
		/* Nested (".git/hooks"): only when the parent exists as a real directory. */
		*slash = '\0';
		snprintf(path, sizeof path, "%s/%s", p->workspace, parent_rel);
		if (lstat(path, &st) < 0)
			return 0; /* no .git: a repository made inside is the sandbox's own */
		if (S_ISLNK(st.st_mode))
			return refuse_symlink(p->workspace, parent_rel, err);
		if (!S_ISDIR(st.st_mode)) {
			/* A linked worktree's `.git` file: protect the pointer itself. */
			return push_or_full(g->ro, &g->n_ro, parent_rel, err);
		}
		if (push_or_full(g->pins, &g->n_pins, parent_rel, err) < 0)
			return -1;
	}
	if (strcmp(rel, ".git/worktrees") == 0)
		return guard_worktrees(p, g, err);
	return guard_path(p, rel, owner, group, g, err);
}

int berth_guard_prepare(const struct berth_policy *p, uid_t owner, gid_t group, struct berth_guard *g,
			struct berth_error *err)
{
	char path[PATH_MAX];
	struct stat st;

	memset(g, 0, sizeof *g);
	clock_gettime(CLOCK_REALTIME_COARSE, &g->started);
	/* Every run on this workspace holds a shared lock for its whole life;
	 * placeholders are removed only by a run that can take it exclusively,
	 * i.e. the last one (removing a mount point from the host would drop a
	 * concurrent run's read-only mount on it). */
	g->lock_fd = open(p->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (g->lock_fd < 0 || flock(g->lock_fd, LOCK_SH) < 0)
		return berth_err(err, errno, "cannot lock workspace `%s`", p->workspace);
	snprintf(path, sizeof path, "%s/.git", p->workspace);
	g->git_existed = lstat(path, &st) == 0;
	for (size_t i = 0; berth_guard_paths[i] != NULL; i++) {
		if (unprotected(p, berth_guard_paths[i]))
			continue;
		if (prepare_one(p, berth_guard_paths[i], owner, group, g, err) < 0) {
			berth_guard_cleanup(g);
			return -1;
		}
	}
	return 0;
}

static int bind_self(const char *ws_root, const char *proc, const char *rel, bool ro, struct berth_error *err)
{
	char path[PATH_MAX];
	struct open_how how = {.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
			       .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH};
	cleanup_close int dfd = open(ws_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cleanup_close int fd = -1;
	char fdpath[64];
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (ro ? MOUNT_ATTR_RDONLY : 0)};

	if (dfd < 0)
		return berth_err(err, errno, "cannot open `%s`", ws_root);
	/* The path must not pass through a symlink: the sandbox may have made one
	 * in an earlier run. */
	fd = (int)syscall(SYS_openat2, dfd, rel, &how, sizeof how);
	if (fd < 0)
		return berth_err(err, errno, "cannot open guarded path `/workspace/%s`", rel);
	snprintf(fdpath, sizeof fdpath, "%s/self/fd/%d", proc, fd);
	if (mount(fdpath, fdpath, NULL, MS_BIND, NULL) < 0)
		return berth_err(err, errno, "cannot bind guarded path `/workspace/%s`", rel);
	snprintf(path, sizeof path, "%s/%s", ws_root, rel);
	if (syscall(SYS_mount_setattr, AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, &attr, sizeof attr) < 0)
		return berth_err(err, errno, "cannot make guarded path `/workspace/%s` read-only", rel);
	return 0;
}

int berth_guard_mount(const struct berth_guard *g, const char *ws_root, const char *proc, struct berth_error *err)
{
	for (int i = 0; i < g->n_pins; i++)
		if (bind_self(ws_root, proc, g->pins[i], false, err) < 0)
			return -1;
	for (int i = 0; i < g->n_ro; i++)
		if (bind_self(ws_root, proc, g->ro[i], true, err) < 0)
			return -1;
	return 0;
}

void berth_guard_remove_paths(char *const paths[], int n)
{
	/* Reverse order: a nested placeholder before its parent. */
	for (int i = n - 1; i >= 0; i--)
	{
		struct stat st;
		if (paths[i] == NULL || lstat(paths[i], &st) < 0)
			continue;
		/* Only what is still a placeholder; anything else stays (a
		 * mode-0000 socket or FIFO is never made by git or an editor
		 * under a guarded name, and rmdir(2) takes only an empty
		 * directory). */
		if ((S_ISSOCK(st.st_mode) || S_ISFIFO(st.st_mode)) && (st.st_mode & 07777) == 0)
			unlink(paths[i]);
		else if (S_ISDIR(st.st_mode))
			rmdir(paths[i]);
		else if (S_ISREG(st.st_mode) && (st.st_size == 0 || holds_dot(paths[i], &st)))
			unlink(paths[i]);
	}
}

void berth_guard_cleanup(struct berth_guard *g)
{
	if (g->lock_fd > 0 && flock(g->lock_fd, LOCK_EX | LOCK_NB) == 0)
		berth_guard_remove_paths(g->created, g->n_created);
	if (g->lock_fd > 0)
		close(g->lock_fd);
	for (int i = 0; i < g->n_pins; i++)
		free(g->pins[i]);
	for (int i = 0; i < g->n_ro; i++)
		free(g->ro[i]);
	for (int i = 0; i < g->n_created; i++)
		free(g->created[i]);
	memset(g, 0, sizeof *g);
}

/* ------------------------------------------- repositories made or changed */

/*
 * Git reads a repository's config and hooks wherever a `.git` is: in a
 * directory below the workspace's top, and from `git status` at the top too,
 * which recurses into every gitlink of the index (submodules) that has one.
 * The guard keeps only the top-level repository's files read-only; the scan
 * below finds what the sandbox wrote elsewhere, by change time: ctime is set
 * by the kernel on every change (utimensat(2) cannot set it back), so a file
 * the sandbox made or changed has a ctime at or after the run's start.
 */
struct scan {
	struct timespec since;
	struct timespec deadline; /* CLOCK_MONOTONIC */
	long entries;
	bool stopped; /* an entry or time budget ran out: the walk ends */
	struct berth_guard_repos *out;
};

static bool changed_since(const struct stat *st, const struct timespec *t)
{
	return st->st_ctim.tv_sec > t->tv_sec || (st->st_ctim.tv_sec == t->tv_sec && st->st_ctim.tv_nsec >= t->tv_nsec);
}

static bool over_budget(struct scan *sc)
{
	struct timespec now;

	if (sc->stopped)
		return true;
	if (++sc->entries > BERTH_GUARD_SCAN_ENTRIES) {
		sc->stopped = true;
	} else if ((sc->entries & 1023) == 0) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > sc->deadline.tv_sec ||
		    (now.tv_sec == sc->deadline.tv_sec && now.tv_nsec > sc->deadline.tv_nsec))
			sc->stopped = true;
	}
	if (sc->stopped)
		sc->out->incomplete = true;
	return sc->stopped;
}

/*
 * A directory the walk could not enter, or stops at (depth, a path longer
 * than PATH_MAX): the scan is incomplete when the run changed it (a sandbox
 * hides a repository with chmod 000, or deep or long names it makes).  One
 * that was like that before the run is not reported on every run: what the
 * caller cannot open, the sandbox (the same uid, or one owning nothing more)
 * could not write into either without changing it.  One that vanished or is
 * not a directory (a race, a link) is not a miss.
 */
static void missed_at(struct scan *sc, int e, int pfd, const char *name)
{
	struct stat st;

	if (e == ENOENT || e == ENOTDIR || e == ELOOP)
		return;
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || changed_since(&st, &sc->since))
		sc->out->incomplete = true;
}

static void missed_fd(struct scan *sc, int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0 || changed_since(&st, &sc->since))
		sc->out->incomplete = true;
}

static void walk_modules(struct scan *sc, int dfd, const char *rel, int depth);

static void report(struct scan *sc, const char *rel)
{
	struct berth_guard_repos *o = sc->out;

	o->n++;
	if (o->n_paths < BERTH_GUARD_SCAN_LIST) {
		o->paths[o->n_paths] = strdup(rel);
		if (o->paths[o->n_paths] != NULL)
			o->n_paths++;
	}
}

/* Was anything git executes or trusts in the git directory @dfd changed? */
static bool gitdir_changed(struct scan *sc, int dfd)
{
	static const char *const files[] = {"config", "commondir", "config.worktree", "hooks", NULL};
	struct stat st;
	cleanup_close int hfd = -1;
	DIR *d;
	struct dirent *e;
	bool changed = false;

	for (size_t i = 0; files[i] != NULL; i++)
		if (fstatat(dfd, files[i], &st, AT_SYMLINK_NOFOLLOW) == 0 && changed_since(&st, &sc->since))
			return true;
	hfd = openat(dfd, "hooks", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (hfd < 0)
		return false;
	d = fdopendir(hfd);
	if (d == NULL)
		return false;
	hfd = -1; /* owned by d */
	while (!changed && (e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' && fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    changed_since(&st, &sc->since))
			changed = true;
	closedir(d);
	return changed;
}

/* The `.git` entry in the directory @pfd (workspace-relative @rel, "" for the
 * top): a directory, a `gitdir:` file (a submodule or worktree), or a link. */
static void check_dotgit(struct scan *sc, const char *ws, int pfd, const char *rel)
{
	char path[PATH_MAX], real[PATH_MAX], buf[PATH_MAX];
	struct stat st;
	cleanup_close int fd = -1;
	cleanup_close int gfd = -1;
	ssize_t n;
	size_t wl = strlen(ws);

	snprintf(path, sizeof path, "%s%s.git", rel, *rel != '\0' ? "/" : "");
	if (fstatat(pfd, ".git", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	if (changed_since(&st, &sc->since)) {
		report(sc, path);
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		gfd = openat(pfd, ".git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (gfd < 0) {
			missed_at(sc, errno, pfd, ".git");
			return;
		}
		if (gitdir_changed(sc, gfd))
			report(sc, path);
		/* Its own submodules: `git status` there recurses into them. */
		int mfd = openat(gfd, "modules", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (mfd >= 0) {
			char mrel[PATH_MAX];
			if ((size_t)snprintf(mrel, sizeof mrel, "%s/modules", path) >= sizeof mrel) {
				missed_fd(sc, mfd);
				close(mfd);
			} else {
				walk_modules(sc, mfd, mrel, 0);
			}
		}
		return;
	}
	if (!S_ISREG(st.st_mode))
		return;
	/* "gitdir: DIR": check DIR when it lies in the workspace (a submodule's
	 * is usually ../.git/modules/NAME), where the sandbox could write. */
	fd = openat(pfd, ".git", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || (n = read(fd, buf, sizeof buf - 1)) <= 8 || strncmp(buf, "gitdir: ", 8) != 0)
		return;
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (buf[8] == '/')
		snprintf(path, sizeof path, "%s", buf + 8);
	else if ((size_t)snprintf(path, sizeof path, "%s/%s%s%s", ws, rel, *rel != '\0' ? "/" : "", buf + 8) >=
		 sizeof path)
		return;
	if (realpath(path, real) == NULL || strncmp(real, ws, wl) != 0 || real[wl] != '/')
		return;
	gfd = open(real, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (gfd >= 0 && gitdir_changed(sc, gfd)) {
		snprintf(path, sizeof path, "%s%s.git", rel, *rel != '\0' ? "/" : "");
		report(sc, path);
	}
}

/* .git/modules/...: every directory with a `config` is a submodule's git
 * directory (names may hold slashes: modules/a/b). */
static void walk_modules(struct scan *sc, int dfd, const char *rel, int depth)
{
	static const char *const skip[] = {"objects", "refs", "logs", "hooks", "info", "lfs", NULL};
	DIR *d;
	struct dirent *e;
	struct stat st;

	if (depth > 16) {
		missed_fd(sc, dfd);
		close(dfd);
		return;
	}
	if (fstatat(dfd, "config", &st, AT_SYMLINK_NOFOLLOW) == 0 && gitdir_changed(sc, dfd))
		report(sc, rel);
	d = fdopendir(dfd);
	if (d == NULL) {
		missed_fd(sc, dfd);
		close(dfd);
		return;
	}
	while ((e = readdir(d)) != NULL && !over_budget(sc)) {
		char sub[PATH_MAX];
		bool skipped = false;
		int cfd;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		for (size_t i = 0; skip[i] != NULL; i++)
			skipped = skipped || strcmp(e->d_name, skip[i]) == 0;
		if (skipped || (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN))
			continue;
		cfd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0) {
			missed_at(sc, errno, dirfd(d), e->d_name);
			continue;
		}
		if ((size_t)snprintf(sub, sizeof sub, "%s/%s", rel, e->d_name) >= sizeof sub) {
			missed_fd(sc, cfd);
			close(cfd);
			continue;
		}
		walk_modules(sc, cfd, sub, depth + 1);
	}
	closedir(d);
}

/* Every directory of the workspace below @dfd (workspace-relative @rel). */
static void walk(struct scan *sc, const char *ws, int dfd, const char *rel, int depth)
{
	DIR *d;
	struct dirent *e;

	if (depth > 0)
		check_dotgit(sc, ws, dfd, rel);
	if (depth > BERTH_GUARD_SCAN_DEPTH) {
		missed_fd(sc, dfd);
		close(dfd);
		return;
	}
	d = fdopendir(dfd);
	if (d == NULL) {
		missed_fd(sc, dfd);
		close(dfd);
		return;
	}
	while ((e = readdir(d)) != NULL && !over_budget(sc)) {
		char sub[PATH_MAX];
		int cfd;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 || strcmp(e->d_name, ".git") == 0)
			continue;
		if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
			continue;
		cfd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (cfd < 0) {
			missed_at(sc, errno, dirfd(d), e->d_name);
			continue;
		}
		if ((size_t)snprintf(sub, sizeof sub, "%s%s%s", rel, *rel != '\0' ? "/" : "", e->d_name) >=
		    sizeof sub) {
			missed_fd(sc, cfd);
			close(cfd);
			continue;
		}
		walk(sc, ws, cfd, sub, depth + 1);
	}
	closedir(d);
}

int berth_guard_scan_repos(const char *ws, const struct timespec *since, struct berth_guard_repos *out,
			   struct berth_error *err)
{
	struct scan sc = {.since = *since, .out = out};
	int fd;

	memset(out, 0, sizeof *out);
	clock_gettime(CLOCK_MONOTONIC, &sc.deadline);
	sc.deadline.tv_nsec += (long)BERTH_GUARD_SCAN_MS % 1000 * 1000000L;
	sc.deadline.tv_sec += BERTH_GUARD_SCAN_MS / 1000 + sc.deadline.tv_nsec / 1000000000L;
	sc.deadline.tv_nsec %= 1000000000L;
	fd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return berth_err(err, errno, "cannot open workspace `%s`", ws);
	walk(&sc, ws, fd, "", 0);
	/* The top-level repository's own submodules. */
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/.git/modules", ws);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		walk_modules(&sc, fd, ".git/modules", 0);
	return 0;
}

void berth_guard_repos_free(struct berth_guard_repos *r)
{
	for (int i = 0; i < r->n_paths; i++)
		free(r->paths[i]);
	memset(r, 0, sizeof *r);
}
