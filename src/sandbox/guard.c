/* SPDX-License-Identifier: MIT */
/*
 * guard.c - the workspace guard's mounts (guard.h).
 */
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
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../policy/hostpath.h"
#include "../policy/trust.h"
#include "../util/cleanup.h"
#include "gitrules.h"
#include "../util/rundir.h"

/* ------------------------------------------------------------- roots */

/* Where the trust scan keeps what it saw at the end of the runs of this
 * user (trustscan.h): one file for every root, since a directory staged
 * under one root can be renamed into place through another.  Computed now:
 * the janitor has no environment. */
static void known_path(struct berth_guard_root *r)
{
	char path[PATH_MAX];

	if (berth_trust_state_path(path, sizeof path) == 0)
		r->known = strdup(path);
}

static int add_root(struct berth_guard *g, const char *host, const char *inside, struct berth_error *err)
{
	struct berth_guard_root *r;

	for (int i = 0; i < g->n_roots; i++)
		if (strcmp(g->roots[i].host, host) == 0 && strcmp(g->roots[i].inside, inside) == 0)
			return 0;
	if (g->n_roots >= BERTH_GUARD_ROOTS)
		return berth_err(err, E2BIG, "the guard takes at most %d writable roots", BERTH_GUARD_ROOTS);
	r = &g->roots[g->n_roots];
	r->host = strdup(host);
	r->inside = strdup(inside);
	known_path(r);
	if (r->host == NULL || r->inside == NULL) {
		free(r->host);
		free(r->inside);
		free(r->known);
		r->known = NULL;
		return berth_err(err, ENOMEM, "guard");
	}
	g->n_roots++;
	return 0;
}

/* Is @path @root or below it?  Sets *@rel to the rest ("" for @root). */
static bool below(const char *path, const char *root, const char **rel)
{
	size_t n = strlen(root);

	if (strcmp(root, "/") == 0) {
		*rel = path + 1;
		return true;
	}
	if (strncmp(path, root, n) != 0 || (path[n] != '\0' && path[n] != '/'))
		return false;
	*rel = path[n] == '/' ? path + n + 1 : path + n;
	return true;
}

static void mark_nested(struct berth_guard *g)
{
	for (int i = 0; i < g->n_roots; i++) {
		const char *rel;
		for (int j = 0; j < g->n_roots && !g->roots[i].nested; j++)
			if (j != i && below(g->roots[i].host, g->roots[j].host, &rel) &&
			    (*rel != '\0' || j < i))
				g->roots[i].nested = true;
	}
}

/* ------------------------------------------------------------- binds */

static int depth_of(const char *s)
{
	int d = 0;
	for (; *s; s++)
		d += *s == '/';
	return d;
}

static int push_bind(struct berth_guard *g, int root, const char *rel, bool ro, struct berth_error *err)
{
	for (int i = 0; i < g->n_binds; i++)
		if (g->binds[i].root == root && strcmp(g->binds[i].rel, rel) == 0) {
			g->binds[i].ro = g->binds[i].ro || ro;
			return 0;
		}
	if (g->n_binds >= BERTH_GUARD_MAX)
		return berth_usage_err(err,
				       "the workspace guard makes at most %d mounts; `%s/%s` is one too many",
				       BERTH_GUARD_MAX, g->roots[root].host, rel);
	g->binds[g->n_binds].rel = strdup(rel);
	if (g->binds[g->n_binds].rel == NULL)
		return berth_err(err, ENOMEM, "guard");
	g->binds[g->n_binds].root = root;
	g->binds[g->n_binds].ro = ro;
	g->n_binds++;
	return 0;
}

/* Guard the host path @path (absolute, physical) under every root that
 * holds it: the same file is reachable through each of them. */
static int guard_host(struct berth_guard *g, const char *path, bool ro, struct berth_error *err)
{
	for (int i = 0; i < g->n_roots; i++) {
		const char *rel;
		if (below(path, g->roots[i].host, &rel) && *rel != '\0' && push_bind(g, i, rel, ro, err) < 0)
			return -1;
		/* An --rw source that is this guarded path, or lies in it, would
		 * give the sandbox what the guard keeps read-only elsewhere. */
		if (ro && i > 0 && below(g->roots[i].host, path, &rel)) {
			berth_usage_err(
			    err,
			    "`--rw %s` is, or is inside, `%s`, which the workspace guard keeps read-only",
			    g->roots[i].host, path);
			return berth_err_hint(
			    err, "the host's tools run or trust what is there; pass `--unprotect` for "
				 "its name if the sandbox must write it (docs/security.md, \"The "
				 "host's trust surface\")");
		}
	}
	return 0;
}

static bool in_roots(const struct berth_guard *g, const char *path)
{
	const char *rel;

	for (int i = 0; i < g->n_roots; i++)
		if (below(path, g->roots[i].host, &rel))
			return true;
	return false;
}

static int refuse_symlink(const char *path, const char *what, struct berth_error *err)
{
	berth_usage_err(err, "guarded path `%s` is a symlink, which berth cannot protect", path);
	return berth_err_hint(err, "replace it with the file it points to, or pass `--unprotect %s`", what);
}

/* lstat @path: 1 exists (not a link), 0 absent, -1 refused or failed. */
static int exists(const char *path, const char *what, struct stat *st, struct berth_error *err)
{
	if (lstat(path, st) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return berth_err(err, errno, "cannot inspect guarded path `%s`", path);
	}
	if (S_ISLNK(st->st_mode))
		return refuse_symlink(path, what, err);
	return 1;
}

/* Guard @dir/@name when it exists: read-only, or pinned. */
static int guard_entry(struct berth_guard *g, const char *dir, const char *name, const char *what, bool ro,
		       struct berth_error *err)
{
	char path[PATH_MAX];
	struct stat st;
	int r;

	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
		return berth_err(err, ENAMETOOLONG, "guarded path `%s/%s`", dir, name);
	r = exists(path, what, &st, err);
	if (r <= 0)
		return r;
	if (!ro && !S_ISDIR(st.st_mode))
		return 0;
	return guard_host(g, path, ro, err);
}

/* ---------------------------------------------------------- repository */

/* Lexically normalise the absolute @in into @out (no ".", "..", "//"). */
static int normalise(const char *in, char out[PATH_MAX])
{
	return in[0] == '/' && berth_path_lexical_abs(in, out) ? 0 : -1;
}

static int watch(struct berth_guard *g, const char *path, struct berth_error *err)
{
	for (int i = 0; i < g->n_watch; i++)
		if (strcmp(g->watch[i], path) == 0)
			return 0;
	if (g->n_watch >= BERTH_GUARD_WATCH)
		return berth_usage_err(err,
				       "the repository's config includes more than %d files in writable "
				       "directories, which berth cannot all guard",
				       BERTH_GUARD_WATCH);
	if ((g->watch[g->n_watch] = strdup(path)) == NULL)
		return berth_err(err, ENOMEM, "guard");
	g->n_watch++;
	return 0;
}

/* A file the config points at (an include, the hooks directory): read-only
 * when it lies in a writable root and exists; watched at exit either way. */
static int guard_pointed(struct berth_guard *g, const char *path, struct berth_error *err)
{
	char norm[PATH_MAX];
	struct stat st;
	int r;

	if (normalise(path, norm) < 0 || !in_roots(g, norm))
		return 0;
	if (watch(g, norm, err) < 0)
		return -1;
	r = exists(norm, ".git/config", &st, err);
	if (r <= 0)
		return r;
	return guard_host(g, norm, true, err);
}

/* The files @gitdir's config at @dir/@name points at, recursively. */
static int guard_config_refs(struct berth_guard *g, const char *dir, const char *name, const char *top,
			     int depth, struct berth_error *err)
{
	struct berth_git_refs refs = {0};
	struct berth_error e = {0};
	cleanup_close int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char path[PATH_MAX];
	int rc = 0;

	if (fd < 0 || depth > BERTH_GIT_INCLUDE_DEPTH)
		return 0;
	/* A config git cannot parse stops git too; nothing to follow. */
	if (berth_git_config_refs(fd, name, dir, getenv("HOME"), &refs, &e) < 0)
		return 0;
	for (size_t i = 0; rc == 0 && i < refs.n_includes; i++) {
		char *slash, inc[PATH_MAX];
		rc = guard_pointed(g, refs.includes[i], err);
		if (rc < 0 || normalise(refs.includes[i], inc) < 0)
			break;
		slash = strrchr(inc, '/');
		if (slash == NULL || slash == inc)
			continue;
		*slash = '\0';
		rc = guard_config_refs(g, inc, slash + 1, top, depth + 1, err);
	}
	if (rc == 0 && refs.hooks_path != NULL && top != NULL) {
		if (refs.hooks_path[0] == '/')
			snprintf(path, sizeof path, "%s", refs.hooks_path);
		else
			snprintf(path, sizeof path, "%s/%s", top, refs.hooks_path);
		rc = guard_pointed(g, path, err);
	}
	berth_git_refs_free(&refs);
	return rc;
}

/* A git directory that was not made by the sandbox in an earlier run:
 * .git/worktrees/<id>'s `gitdir` names a host path, not /workspace. */
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

static int guard_worktrees(const struct berth_policy *p, struct berth_guard *g, const char *gitdir,
			   struct berth_error *err)
{
	char path[PATH_MAX], sub[PATH_MAX];
	struct stat st;
	DIR *d;
	struct dirent *e;
	int rc = 0, n = 0;

	if (berth_trust_git_unprotected(p, ".git/worktrees"))
		return 0;
	snprintf(path, sizeof path, "%s/worktrees", gitdir);
	rc = exists(path, ".git/worktrees", &st, err);
	if (rc <= 0 || !S_ISDIR(st.st_mode))
		return rc < 0 ? -1 : 0;
	rc = 0;
	if (guard_host(g, path, false, err) < 0)
		return -1;
	d = opendir(path);
	if (d == NULL)
		return berth_err(err, errno, "cannot read guarded directory `%s`", path);
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
		if (lstat(sub, &st) < 0)
			continue; /* gone meanwhile: git's own pruning */
		if (S_ISLNK(st.st_mode)) {
			rc = refuse_symlink(sub, ".git/worktrees", err);
			break;
		}
		if (!S_ISDIR(st.st_mode) || sandbox_made_worktree(sub))
			continue;
		if (++n > BERTH_GUARD_WORKTREES) {
			berth_usage_err(
			    err, "`%s` has more than %d linked worktrees, which berth cannot all guard", path,
			    BERTH_GUARD_WORKTREES);
			rc = berth_err_hint(err, "remove stale ones (`git worktree prune`), or pass "
						 "`--unprotect .git/worktrees`");
			break;
		}
		rc = guard_host(g, sub, true, err);
	}
	closedir(d);
	return rc;
}

static int guard_gitdir(const struct berth_policy *p, struct berth_guard *g, const char *gitdir,
			const char *top, int depth, struct berth_error *err);

/* modules/: every directory holding a HEAD or a config is a submodule's git
 * directory (names may hold slashes: modules/a/b). */
static int guard_modules(const struct berth_policy *p, struct berth_guard *g, const char *dir, int depth,
			 struct berth_error *err)
{
	static const char *const skip[] = {"objects", "refs", "logs",      "hooks",
					   "info",    "lfs",  "worktrees", NULL};
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (depth > 8)
		return 0;
	d = opendir(dir);
	if (d == NULL)
		return 0;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		char sub[PATH_MAX], probe[PATH_MAX];
		struct stat st;
		bool skipped = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;

		for (size_t i = 0; skip[i] != NULL; i++)
			skipped = skipped || strcmp(e->d_name, skip[i]) == 0;
		if (skipped)
			continue;
		if ((size_t)snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name) >= sizeof sub ||
		    lstat(sub, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		snprintf(probe, sizeof probe, "%s/config", sub);
		if (lstat(probe, &st) == 0)
			rc = guard_gitdir(p, g, sub, NULL, depth + 1, err);
		else
			rc = guard_modules(p, g, sub, depth + 1, err);
	}
	closedir(d);
	return rc;
}

/* The root's repository: its git directory, the names absent from it,
 * and its HEAD to put back if the sandbox breaks it. */
static int keep_head(const struct berth_policy *p, struct berth_guard_root *r, const char *gitdir)
{
	static const struct {
		const char *name, *what;
		unsigned bit;
	} names[] = {{"commondir", ".git/commondir", BERTH_GUARD_MISSING_COMMONDIR},
		     {"config.worktree", ".git/config.worktree", BERTH_GUARD_MISSING_WORKTREE_CONFIG},
		     {"config", ".git/config", BERTH_GUARD_MISSING_CONFIG},
		     {"hooks", ".git/hooks", BERTH_GUARD_MISSING_HOOKS}};
	struct stat st;
	char path[PATH_MAX];

	free(r->gitdir);
	r->gitdir = strdup(gitdir);
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", gitdir, names[i].name);
		if (!berth_trust_git_unprotected(p, names[i].what) && lstat(path, &st) < 0 && errno == ENOENT)
			r->missing |= names[i].bit;
	}
	cleanup_close int dfd = open(gitdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	cleanup_close int fd = -1;
	char buf[BERTH_GUARD_HEAD_MAX + 1];
	ssize_t n;

	if (dfd < 0 || !berth_git_head_valid(dfd))
		return 0;
	fd = openat(dfd, "HEAD", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || (n = read(fd, buf, sizeof buf - 1)) <= 0 || n >= BERTH_GUARD_HEAD_MAX)
		return 0; /* a symbolic-link HEAD, or too long: nothing to put back */
	buf[n] = '\0';
	r->head = strdup(buf);
	return 0;
}

/* The git directory @gitdir; @top is its worktree's top (for a relative
 * core.hooksPath), NULL for a submodule's. */
static int guard_gitdir(const struct berth_policy *p, struct berth_guard *g, const char *gitdir,
			const char *top, int depth, struct berth_error *err)
{
	static const struct {
		const char *name, *what;
	} files[] = {{"config", ".git/config"},
		     {"config.worktree", ".git/config.worktree"},
		     {"commondir", ".git/commondir"},
		     {"hooks", ".git/hooks"}};
	char path[PATH_MAX];

	if (guard_host(g, gitdir, false, err) < 0 ||
	    guard_entry(g, gitdir, "objects", ".git", false, err) < 0 ||
	    guard_entry(g, gitdir, "refs", ".git", false, err) < 0)
		return -1;
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
		if (!berth_trust_git_unprotected(p, files[i].what) &&
		    guard_entry(g, gitdir, files[i].name, files[i].what, true, err) < 0)
			return -1;
	if (guard_worktrees(p, g, gitdir, err) < 0)
		return -1;
	if (!berth_trust_git_unprotected(p, ".git/config") &&
	    (guard_config_refs(g, gitdir, "config", top, 0, err) < 0 ||
	     guard_config_refs(g, gitdir, "config.worktree", top, 0, err) < 0))
		return -1;
	struct stat st;
	int r;
	snprintf(path, sizeof path, "%s/modules", gitdir);
	r = exists(path, ".git", &st, err);
	if (r <= 0 || !S_ISDIR(st.st_mode))
		return r < 0 ? -1 : 0;
	if (guard_host(g, path, false, err) < 0)
		return -1;
	return guard_modules(p, g, path, depth, err);
}

/* The repository at the top of root @i. */
static int guard_repository(const struct berth_policy *p, struct berth_guard *g, int i,
			    struct berth_error *err)
{
	struct berth_guard_root *r = &g->roots[i];
	char path[PATH_MAX], buf[PATH_MAX], target[PATH_MAX];
	cleanup_close int fd = -1;
	struct stat st;
	ssize_t n;
	int e;

	snprintf(path, sizeof path, "%s/.git", r->host);
	e = exists(path, ".git", &st, err);
	if (e <= 0)
		return e;
	if (i == 0)
		g->git_existed = true;
	if (S_ISDIR(st.st_mode)) {
		keep_head(p, r, path);
		return guard_gitdir(p, g, path, r->host, 0, err);
	}
	if (!S_ISREG(st.st_mode))
		return 0; /* git ignores it */
	/* A linked worktree's or a submodule's `gitdir:` file: the pointer is
	 * read-only, and the directory it names is guarded where the sandbox
	 * could reach it. */
	if (guard_host(g, path, true, err) < 0)
		return -1;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || (n = read(fd, buf, sizeof buf - 1)) <= 8 || strncmp(buf, "gitdir: ", 8) != 0)
		return 0;
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (buf[8] == '/')
		snprintf(target, sizeof target, "%s", buf + 8);
	else if ((size_t)snprintf(target, sizeof target, "%s/%s", r->host, buf + 8) >= sizeof target)
		return 0;
	if (normalise(target, path) < 0 || !in_roots(g, path))
		return 0;
	keep_head(p, r, path);
	return guard_gitdir(p, g, path, r->host, 0, err);
}

/* The trust names at the top of root @i that exist. */
static int guard_top_names(const struct berth_policy *p, struct berth_guard *g, int i,
			   struct berth_error *err)
{
	DIR *d = opendir(g->roots[i].host);
	struct dirent *e;
	int rc = 0;

	if (d == NULL)
		return berth_err(err, errno, "cannot read `%s`", g->roots[i].host);
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (berth_trust_lookup(p, e->d_name, NULL) == BERTH_TRUST_READONLY)
			rc = guard_entry(g, g->roots[i].host, e->d_name, e->d_name, true, err);
	}
	closedir(d);
	/* The names that are path endings (".hg/hgrc"), at the top. */
	for (size_t k = 0; rc == 0 && berth_trust_names[k].name != NULL; k++) {
		const char *n = berth_trust_names[k].name, *slash = strrchr(n, '/');
		char dir[PATH_MAX];
		if (slash == NULL || berth_trust_lookup_path(p, "", n, NULL, NULL) != BERTH_TRUST_READONLY)
			continue;
		snprintf(dir, sizeof dir, "%s/%.*s", g->roots[i].host, (int)(slash - n), n);
		struct stat st;
		if (lstat(dir, &st) == 0 && S_ISDIR(st.st_mode))
			rc = guard_entry(g, dir, slash + 1, n, true, err);
	}
	return rc;
}

static int bind_cmp(const void *a, const void *b)
{
	const struct berth_guard_bind *x = a, *y = b;

	if (x->ro != y->ro)
		return x->ro ? 1 : -1;
	return depth_of(x->rel) - depth_of(y->rel);
}

/* berth_guard_prepare, or for the repair's scan (@lenient, guard.h) */
static int prepare(const struct berth_policy *p, struct berth_guard *g, bool *lenient,
		   struct berth_error *err)
{
	memset(g, 0, sizeof *g);
	clock_gettime(CLOCK_REALTIME_COARSE, &g->started);
	/* --review: the run writes a layer, not the workspace; what it changes
	 * under a guarded name is held back by `berth apply` (docs/review.md). */
	if (p->workspace != NULL && !p->review &&
	    add_root(g, p->workspace, p->container != NULL ? p->container->workspace_at : "/workspace", err) <
		0)
		goto fail;
	for (size_t i = 0; i < p->n_mounts; i++) {
		struct stat st;
		if (p->mounts[i].rw && !p->mounts[i].tmpfs && stat(p->mounts[i].src, &st) == 0 &&
		    S_ISDIR(st.st_mode) && add_root(g, p->mounts[i].src, p->mounts[i].dst, err) < 0)
			goto fail;
	}
	mark_nested(g);
	for (int i = 0; i < g->n_roots; i++) {
		struct berth_error ignore = {0};
		if (lenient == NULL) {
			if (guard_repository(p, g, i, err) < 0 || guard_top_names(p, g, i, err) < 0)
				goto fail;
			continue;
		}
		/* What a finished run left (a link at a trust name, too many
		 * worktrees) is what the scan is for: each refusal only ends
		 * that root's look for mounts; the repository's refusal may
		 * leave its watch list short, which makes the scan incomplete. */
		if (guard_repository(p, g, i, &ignore) < 0)
			*lenient = true;
		(void)guard_top_names(p, g, i, &ignore);
	}
	qsort(g->binds, (size_t)g->n_binds, sizeof g->binds[0], bind_cmp);
	return 0;
fail:
	berth_guard_free(g);
	return -1;
}

int berth_guard_prepare(const struct berth_policy *p, struct berth_guard *g, struct berth_error *err)
{
	return prepare(p, g, NULL, err);
}

int berth_guard_prepare_scan(const struct berth_policy *p, struct berth_guard *g, bool *short_watch,
			     struct berth_error *err)
{
	*short_watch = false;
	return prepare(p, g, short_watch, err);
}

/* ------------------------------------------------------------- mounts */

/* Bind @root/@rel onto itself; @shown is @root as the sandbox sees it. */
static int bind_self(const char *root, const char *shown, const char *proc, const char *rel, bool ro,
		     struct berth_error *err)
{
	char path[PATH_MAX];
	struct open_how how = {.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
			       .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH};
	cleanup_close int dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cleanup_close int fd = -1;
	char fdpath[64];
	struct mount_attr attr = {.attr_set =
				      MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (ro ? MOUNT_ATTR_RDONLY : 0)};

	if (dfd < 0)
		return berth_err(err, errno, "cannot open `%s`", shown);
	/* The path must not pass through a symlink: the sandbox may have made one
	 * in an earlier run. */
	fd = (int)syscall(SYS_openat2, dfd, rel, &how, sizeof how);
	if (fd < 0)
		return berth_err(err, errno, "cannot open guarded path `%s/%s`", shown, rel);
	/* O_PATH | O_NOFOLLOW opens a last component that is a link as the
	 * link: refuse it rather than bind over what it names. */
	struct stat st;
	if (fstat(fd, &st) < 0 || S_ISLNK(st.st_mode)) {
		berth_usage_err(err, "guarded path `%s/%s` became a symlink, which berth cannot protect",
				shown, rel);
		return berth_err_hint(
		    err, "something changed the workspace while berth set the sandbox up; run again");
	}
	snprintf(fdpath, sizeof fdpath, "%s/self/fd/%d", proc, fd);
	if (mount(fdpath, fdpath, NULL, MS_BIND, NULL) < 0)
		return berth_err(err, errno, "cannot bind guarded path `%s/%s`", shown, rel);
	snprintf(path, sizeof path, "%s/%s", root, rel);
	if (syscall(SYS_mount_setattr, AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, &attr, sizeof attr) < 0)
		return berth_err(err, errno, "cannot make guarded path `%s/%s` read-only", shown, rel);
	return 0;
}

int berth_guard_mount(const struct berth_guard *g, const char *newroot, const char *proc,
		      struct berth_error *err)
{
	for (int i = 0; i < g->n_binds; i++) {
		const struct berth_guard_bind *b = &g->binds[i];
		char root[PATH_MAX];

		snprintf(root, sizeof root, "%s%s", newroot, g->roots[b->root].inside);
		if (bind_self(root, g->roots[b->root].inside, proc, b->rel, b->ro, err) < 0)
			return -1;
	}
	return 0;
}

void berth_guard_free(struct berth_guard *g)
{
	for (int i = 0; i < g->n_roots; i++) {
		free(g->roots[i].host);
		free(g->roots[i].inside);
		free(g->roots[i].head);
		free(g->roots[i].gitdir);
		free(g->roots[i].known);
	}
	for (int i = 0; i < g->n_binds; i++)
		free(g->binds[i].rel);
	for (int i = 0; i < g->n_watch; i++)
		free(g->watch[i]);
	memset(g, 0, sizeof *g);
}
