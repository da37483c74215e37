/* SPDX-License-Identifier: MIT */
/*
 * trustscan.c - set aside or name what the sandbox made or changed on the
 * host's trust surface (trustscan.h): the walk at the end of a run, git
 * directories first.  What it sets aside and how it reports is in
 * trustaside.c, the known set in trustknown.c, the watch during the run in
 * trustwatch.c.
 */
#include "trustscan_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../policy/trust.h"
#include "../util/cleanup.h"
#include "gitrules.h"
#include "../util/rundir.h"

bool berth_ts_changed_since(const struct stat *st, const struct timespec *t)
{
	return st->st_ctim.tv_sec > t->tv_sec ||
	       (st->st_ctim.tv_sec == t->tv_sec && st->st_ctim.tv_nsec >= t->tv_nsec);
}

static bool changed_at(struct scan *sc, int dfd, const char *name)
{
	struct stat st;

	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       (sc->force || berth_ts_changed_since(&st, &sc->since));
}

static bool over_budget(struct scan *sc)
{
	struct timespec now;

	if (sc->stopped)
		return true;
	if (++sc->entries > BERTH_TRUST_SCAN_ENTRIES) {
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

/* ------------------------------------------------------- git directories */

static bool is_sample(const char *name)
{
	size_t n = strlen(name);

	return n > 7 && strcmp(name + n - 7, ".sample") == 0;
}

/* Each changed file in the directory @dfd (a hooks directory). */
static bool hooks_dir(struct scan *sc, int dfd, const char *rel, const char *why)
{
	cleanup_close int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;
	struct dirent *e;
	bool changed = false;

	if (fd < 0 || (d = fdopendir(fd)) == NULL)
		return false;
	fd = -1;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 || is_sample(e->d_name) ||
		    berth_ts_set_aside_name(e->d_name))
			continue;
		if (changed_at(sc, dirfd(d), e->d_name)) {
			changed = true;
			berth_ts_set_aside(sc, dirfd(d), rel, e->d_name, why);
		}
	}
	closedir(d);
	return changed;
}

static void check_gitdir(struct scan *sc, int gfd, const char *rel, int depth, bool *changed);
static void report_repo(struct scan *sc, const char *rel, const char *kind, bool failed);
static bool in_roots(const struct scan *sc, const char *path);

/* modules/ and worktrees/ below a git directory. */
static void sub_gitdirs(struct scan *sc, int gfd, const char *rel, const char *sub, int depth, bool *changed)
{
	static const char *const skip[] = {"objects", "refs", "logs", "hooks", "info", "lfs", NULL};
	cleanup_close int fd = openat(gfd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;
	struct dirent *e;
	char here[PATH_MAX];

	if (depth > 16 || fd < 0 || (d = fdopendir(fd)) == NULL)
		return;
	fd = -1;
	snprintf(here, sizeof here, "%s/%s", rel, sub);
	while ((e = readdir(d)) != NULL && !over_budget(sc)) {
		bool skipped = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
		struct stat st;
		char srel[PATH_MAX];

		for (size_t i = 0; skip[i] != NULL; i++)
			skipped = skipped || strcmp(e->d_name, skip[i]) == 0;
		if (skipped || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode))
			continue;
		int cfd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0)
			continue;
		snprintf(srel, sizeof srel, "%s/%s", here, e->d_name);
		if (faccessat(cfd, "config", F_OK, AT_SYMLINK_NOFOLLOW) == 0 ||
		    faccessat(cfd, "HEAD", F_OK, AT_SYMLINK_NOFOLLOW) == 0 ||
		    faccessat(cfd, "commondir", F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
			bool here_changed = false, saved = sc->force;
			int f0 = sc->out->n_failed;
			sc->force = berth_ts_appeared(sc, &st) || sc->force;
			check_gitdir(sc, cfd, srel, depth + 1, &here_changed);
			sc->force = saved;
			if (here_changed && strcmp(sub, "worktrees") != 0)
				report_repo(sc, srel, "", sc->out->n_failed > f0);
			*changed = *changed || here_changed;
		} else if (strcmp(sub, "worktrees") != 0) {
			/* modules/a/b: a submodule's name may hold slashes */
			sub_gitdirs(sc, dirfd(d), here, e->d_name, depth + 1, changed);
		}
		close(cfd);
	}
	closedir(d);
}

struct active {
	struct scan *sc;
	const char *gitdir; /* host path of the git directory */
	char key[128];
};

/* The first key that is not inert.  core.worktree is git's own for a
 * submodule's git directory (`../../../sub`): inert while it names a
 * directory in a writable root. */
static int first_active(const char *section, const char *subsection, const char *key, const char *value,
			unsigned line_no, void *arg)
{
	struct active *a = arg;
	char path[PATH_MAX], real[PATH_MAX];

	(void)line_no;
	if (berth_git_key_inert(section, subsection, key))
		return 0;
	if (strcmp(section, "core") == 0 && subsection == NULL && strcmp(key, "worktree") == 0 &&
	    value != NULL) {
		if (value[0] == '/')
			snprintf(path, sizeof path, "%s", value);
		else
			snprintf(path, sizeof path, "%s/%s", a->gitdir, value);
		if (realpath(path, real) != NULL && in_roots(a->sc, real))
			return 0;
	}
	snprintf(a->key, sizeof a->key, "%s%s%s.%s", section, subsection != NULL ? "." : "",
		 subsection != NULL ? subsection : "", key);
	return 1;
}

/* A config file @name in @gfd that the sandbox made or changed. */
void berth_ts_check_config(struct scan *sc, int gfd, const char *rel, const char *name, bool *changed)
{
	char why[256], gitdir[PATH_MAX];
	struct berth_error e = {0};
	struct active a = {.sc = sc, .gitdir = gitdir};
	int r;

	if (!changed_at(sc, gfd, name))
		return;
	*changed = true;
	if (berth_trust_git_unprotected(sc->p, ".git/config"))
		return;
	berth_ts_shown(sc, rel, NULL, gitdir, sizeof gitdir);
	r = berth_git_config_read(gfd, name, first_active, &a, &e);
	if (r == 0 || (r < 0 && e.errnum == ENOENT))
		return;
	if (r > 0)
		snprintf(why, sizeof why,
			 "its `%s` would make the host's git run a program or read another file", a.key);
	else
		snprintf(why, sizeof why, "the host's git could not read it as before (%s)", e.msg);
	berth_ts_set_aside(sc, gfd, rel, name, why);
}

/* The kept HEAD of a root's repository, when git would no longer take it. */
static void check_head(struct scan *sc, int gfd, const char *rel)
{
	char path[PATH_MAX];
	const struct berth_guard_root *r = NULL;
	struct stat st;

	berth_ts_shown(sc, rel, NULL, path, sizeof path);
	for (int i = 0; i < sc->g->n_roots && r == NULL; i++)
		if (sc->g->roots[i].gitdir != NULL && strcmp(sc->g->roots[i].gitdir, path) == 0)
			r = &sc->g->roots[i];
	if (r == NULL || r->head == NULL || berth_git_head_valid(gfd))
		return;
	if (fstatat(gfd, "HEAD", &st, AT_SYMLINK_NOFOLLOW) == 0)
		berth_ts_set_aside(sc, gfd, rel, "HEAD",
				   "git would no longer take this directory as the repository");
	if (fstatat(gfd, "HEAD", &st, AT_SYMLINK_NOFOLLOW) == 0)
		return; /* could not move it: named by set_aside */
	int fd = openat(gfd, "HEAD", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	size_t n = strlen(r->head);
	bool ok = fd >= 0 && write(fd, r->head, n) == (ssize_t)n;
	if (fd >= 0) {
		struct stat gs;
		if (geteuid() == 0 && fstat(gfd, &gs) == 0)
			(void)!fchown(fd, gs.st_uid, gs.st_gid);
		close(fd);
	}
	if (ok)
		berth_ts_line(sc, "restored `%s/HEAD` to what it was when the run started", path);
	else
		berth_ts_line(sc, "could not restore `%s/HEAD` (%s): put back what it held (`%.*s`)", path,
			      strerror(errno), (int)strcspn(r->head, "\n"), r->head);
}

#define FIFO_WHY "git and other tools on the host would block for ever opening it (a FIFO)"

/* FIFOs the sandbox made in the directory @dfd (a git directory, its info/). */
static void fifos_in(struct scan *sc, int dfd, const char *sub, const char *rel)
{
	cleanup_close int fd = openat(dfd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char here[PATH_MAX];
	DIR *d;
	struct dirent *e;
	struct stat st;

	if (fd < 0 || (d = fdopendir(fd)) == NULL)
		return;
	fd = -1;
	snprintf(here, sizeof here, "%s%s%s", rel, strcmp(sub, ".") != 0 ? "/" : "",
		 strcmp(sub, ".") != 0 ? sub : "");
	while ((e = readdir(d)) != NULL)
		if ((e->d_type == DT_FIFO || e->d_type == DT_UNKNOWN) &&
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISFIFO(st.st_mode) &&
		    berth_ts_changed_since(&st, &sc->since))
			berth_ts_set_aside(sc, dirfd(d), here, e->d_name, FIFO_WHY);
	closedir(d);
}

static void check_gitdir(struct scan *sc, int gfd, const char *rel, int depth, bool *changed)
{
	struct stat st;

	berth_ts_check_config(sc, gfd, rel, "config", changed);
	berth_ts_check_config(sc, gfd, rel, "config.worktree", changed);
	if (changed_at(sc, gfd, "commondir")) {
		*changed = true;
		if (!berth_trust_git_unprotected(sc->p, ".git/commondir") && !berth_git_commondir_ok(gfd))
			berth_ts_set_aside(
			    sc, gfd, rel, "commondir",
			    "it would send the host's git to the config and hooks of another directory");
	}
	if (fstatat(gfd, "hooks", &st, AT_SYMLINK_NOFOLLOW) == 0) {
		char hrel[PATH_MAX];
		snprintf(hrel, sizeof hrel, "%s/hooks", rel);
		if (S_ISLNK(st.st_mode)) {
			if (sc->force || berth_ts_changed_since(&st, &sc->since)) {
				*changed = true;
				if (!berth_trust_git_unprotected(sc->p, ".git/hooks"))
					berth_ts_set_aside(sc, gfd, rel, "hooks",
							   "the host's git would run the hooks it points to");
			}
		} else if (S_ISDIR(st.st_mode)) {
			cleanup_close int hfd =
			    openat(gfd, "hooks", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (hfd >= 0 && !berth_trust_git_unprotected(sc->p, ".git/hooks"))
				*changed =
				    hooks_dir(sc, hfd, hrel, "the host's git would run it as a hook") ||
				    *changed;
			else if (hfd >= 0 && berth_ts_changed_since(&st, &sc->since))
				*changed = true;
		}
	}
	check_head(sc, gfd, rel);
	fifos_in(sc, gfd, ".", rel);
	fifos_in(sc, gfd, "info", rel);
	sub_gitdirs(sc, gfd, rel, "modules", depth, changed);
	sub_gitdirs(sc, gfd, rel, "worktrees", depth, changed);
}

/* Is the absolute @path inside a writable root? */
static bool in_roots(const struct scan *sc, const char *path)
{
	for (int i = 0; i < sc->g->n_roots; i++) {
		size_t n = strlen(sc->g->roots[i].host);
		if (strncmp(path, sc->g->roots[i].host, n) == 0 && (path[n] == '/' || path[n] == '\0'))
			return true;
	}
	return false;
}

static void report_repo(struct scan *sc, const char *rel, const char *kind, bool failed)
{
	char path[PATH_MAX];

	berth_ts_shown(sc, rel, NULL, path, sizeof path);
	berth_ts_line(
	    sc,
	    "the sandbox made or changed the git repository `%s`%s: git run there, or `git status` in a "
	    "repository holding it as a submodule, reads what the sandbox wrote (%s): review it first",
	    path, kind,
	    failed ? "NOT all that would run a program could be set aside: see above"
		   : "what would run a program was set aside");
}

/* The `.git` entry in the directory @pfd (root-relative @rel). */
static void check_dotgit(struct scan *sc, int pfd, const char *rel)
{
	char grel[PATH_MAX], buf[PATH_MAX], target[PATH_MAX], real[PATH_MAX], here[PATH_MAX];
	struct stat st;
	cleanup_close int fd = -1;
	cleanup_close int gfd = -1;
	bool changed = false;
	ssize_t n;
	int f0 = sc->out->n_failed;

	snprintf(grel, sizeof grel, "%s%s.git", rel, *rel != '\0' ? "/" : "");
	if (fstatat(pfd, ".git", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	if (S_ISLNK(st.st_mode)) {
		if (berth_ts_changed_since(&st, &sc->since))
			berth_ts_set_aside(sc, pfd, rel, ".git",
					   "the host's git would take the repository it points to");
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		gfd = openat(pfd, ".git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (gfd < 0) {
			if (berth_ts_changed_since(&st, &sc->since))
				sc->out->incomplete = true;
			return;
		}
		bool saved = sc->force;
		sc->force = berth_ts_appeared(sc, &st) || sc->force;
		check_gitdir(sc, gfd, grel, 0, &changed);
		sc->force = saved;
		if (changed)
			report_repo(sc, grel, "", sc->out->n_failed > f0);
		return;
	}
	if (!S_ISREG(st.st_mode))
		return;
	/* "gitdir: DIR" (a submodule, a linked worktree); its bytes changed
	 * when its ctime did (a directory's ctime moves with every entry git
	 * writes in it, so it says nothing). */
	changed = berth_ts_changed_since(&st, &sc->since);
	fd = openat(pfd, ".git", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || (n = read(fd, buf, sizeof buf - 1)) < 0)
		return;
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (strncmp(buf, "gitdir: ", 8) != 0)
		return; /* git refuses such a file: no repository */
	berth_ts_shown(sc, rel, NULL, here, sizeof here);
	if (buf[8] == '/')
		snprintf(target, sizeof target, "%s", buf + 8);
	else if ((size_t)snprintf(target, sizeof target, "%s/%s", here, buf + 8) >= sizeof target)
		return;
	if (realpath(target, real) == NULL) {
		if (changed && buf[8] == '/' && !in_roots(sc, target) &&
		    strncmp(target, "/workspace/", 11) != 0)
			berth_ts_set_aside(sc, pfd, rel, ".git",
					   "it sends the host's git to a repository outside the workspace");
		return;
	}
	if (!in_roots(sc, real)) {
		if (changed)
			berth_ts_set_aside(sc, pfd, rel, ".git",
					   "it sends the host's git to a repository outside the workspace");
		return;
	}
	struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
	gfd = (int)syscall(SYS_openat2, AT_FDCWD, real, &how, sizeof how);
	if (gfd < 0)
		return;
	/* Its git directory lies in a root: walked here; named by this `.git`. */
	const char *saved = sc->root;
	bool saved_force = sc->force;
	char groot[PATH_MAX];
	struct stat gst;
	snprintf(groot, sizeof groot, "%s", real);
	sc->root = groot;
	/* A pointer made or changed now makes its git directory new to git
	 * here, however old its files are. */
	if (fstat(gfd, &gst) == 0 && (berth_ts_appeared(sc, &gst) || changed))
		sc->force = true;
	check_gitdir(sc, gfd, "", 0, &changed);
	sc->force = saved_force;
	sc->root = saved;
	if (changed)
		report_repo(sc, grel, "", sc->out->n_failed > f0);
}

/* A directory git would take as a bare repository (gitrules.h), changed. */
static void check_bare(struct scan *sc, int dfd, const char *rel)
{
	bool changed, saved = sc->force;
	struct stat st;
	int f0 = sc->out->n_failed;

	if (!berth_git_is_gitdir(dfd))
		return;
	if (fstat(dfd, &st) == 0 && berth_ts_appeared(sc, &st))
		sc->force = true;
	changed = changed_at(sc, dfd, "HEAD") || changed_at(sc, dfd, "config");
	check_gitdir(sc, dfd, rel, 0, &changed);
	sc->force = saved;
	if (changed)
		report_repo(
		    sc, rel,
		    " (a bare repository: git takes a directory holding HEAD, objects/ and refs/ as one)",
		    sc->out->n_failed > f0);
}

/* ------------------------------------------------------------ the walk */

static void named(struct scan *sc, const char *rel, const char *name, const char *cls, const char *why)
{
	char path[PATH_MAX];

	berth_ts_shown(sc, rel, name, path, sizeof path);
	berth_ts_line(sc, "the sandbox changed `%s` (%s): %s; review it", path, cls, why);
}

static void walk(struct scan *sc, int dfd, const char *rel, int depth, enum berth_trust treat,
		 const char *why, const char *cls);
static void check_watch(struct scan *sc, const char *path);

/* A git user config in a root (`.gitconfig`, `.config/git/config`: the
 * `home` class, for a workspace that is a home or a dotfiles repository):
 * the files it includes are read as config too, so those in a root that
 * the sandbox made or changed are set aside like the repository's own
 * includes (the guard's watch list). */
static void home_git_includes(struct scan *sc, const char *rel, const char *name)
{
	char dir[PATH_MAX];
	struct berth_git_refs refs = {0};
	struct berth_error e = {0};
	struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
	cleanup_close int dfd = -1;

	berth_ts_shown(sc, rel, NULL, dir, sizeof dir);
	dfd = (int)syscall(SYS_openat2, AT_FDCWD, dir, &how, sizeof how);
	if (dfd < 0 || berth_git_config_refs(dfd, name, dir, berth_home_dir(), &refs, &e) < 0)
		return;
	for (size_t i = 0; i < refs.n_includes; i++)
		if (in_roots(sc, refs.includes[i]))
			check_watch(sc, refs.includes[i]);
	berth_git_refs_free(&refs);
}

/* One entry @name (readdir's @dtype, DT_UNKNOWN when not known) of the
 * directory @dfd (root-relative @rel, at @depth). */
static void entry(struct scan *sc, int dfd, const char *rel, int depth, const char *name, unsigned char dtype,
		  enum berth_trust treat, const char *why, const char *cls, bool *has_head)
{
	const char *w = why, *c = cls;
	enum berth_trust t = treat;
	bool isdir = dtype == DT_DIR;
	char sub[PATH_MAX];
	struct stat st;

	if (treat == BERTH_TRUST_NONE && strcmp(name, ".git") == 0) {
		check_dotgit(sc, dfd, rel);
		return;
	}
	if (strcmp(name, "HEAD") == 0)
		*has_head = true;
	if (t == BERTH_TRUST_NONE)
		t = berth_trust_lookup_path(sc->p, rel, name, &w, &c);
	if (dtype == DT_UNKNOWN) {
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return;
		isdir = S_ISDIR(st.st_mode);
		dtype = S_ISFIFO(st.st_mode) ? DT_FIFO : DT_REG;
	}
	if (!isdir) {
		/* What berth set aside is not set aside again; a directory with
		 * that name is walked like any other (a repository in it is
		 * still one). */
		if (berth_ts_set_aside_name(name))
			return;
		if (dtype == DT_FIFO && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISFIFO(st.st_mode) && berth_ts_changed_since(&st, &sc->since)) {
			berth_ts_set_aside(sc, dfd, rel, name, FIFO_WHY);
			return;
		}
		if (t != BERTH_TRUST_NONE && c != NULL && strcmp(c, "home") == 0 &&
		    (strcmp(name, ".gitconfig") == 0 ||
		     (strcmp(name, "config") == 0 && strstr(rel, ".config/git") != NULL)))
			home_git_includes(sc, rel, name);
		if (t != BERTH_TRUST_NONE && changed_at(sc, dfd, name)) {
			if (t == BERTH_TRUST_READONLY)
				berth_ts_set_aside(sc, dfd, rel, name, w);
			else
				named(sc, rel, name, c, w);
		} else if (t == BERTH_TRUST_NONE && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			   S_ISLNK(st.st_mode) && (sc->force || berth_ts_changed_since(&st, &sc->since)) &&
			   berth_trust_path_prefix(rel, name)) {
			berth_ts_set_aside(
			    sc, dfd, rel, name,
			    "a tool on the host would follow it to a config file the sandbox chose (such as "
			    ".hg/hgrc or .config/git/config)");
		}
		return;
	}
	int cfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (cfd < 0) {
		if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP &&
		    (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		     berth_ts_changed_since(&st, &sc->since)))
			sc->out->incomplete = true;
		return;
	}
	if ((size_t)snprintf(sub, sizeof sub, "%s%s%s", rel, *rel != '\0' ? "/" : "", name) >= sizeof sub) {
		sc->out->incomplete = true;
		close(cfd);
		return;
	}
	bool saved = sc->force;
	if (fstat(cfd, &st) == 0) {
		if ((treat == BERTH_TRUST_NONE && t != BERTH_TRUST_NONE) ||
		    berth_trust_path_prefix(rel, name)) {
			if (berth_ts_appeared(sc, &st))
				sc->force = true;
		} else if (t == BERTH_TRUST_NONE || treat != BERTH_TRUST_NONE) {
			berth_ts_demote(sc, &st);
		}
	}
	walk(sc, cfd, sub, depth + 1, t, w, c);
	sc->force = saved;
}

/* Looked at first, by name, at the top of each root (top_first): not again
 * in the walk. */
static bool top_name(const char *name)
{
	if (strcmp(name, ".git") == 0)
		return true;
	for (size_t i = 0; berth_trust_names[i].name != NULL; i++)
		if (strcmp(berth_trust_names[i].name, name) == 0)
			return true;
	return false;
}

static void walk(struct scan *sc, int dfd, const char *rel, int depth, enum berth_trust treat,
		 const char *why, const char *cls)
{
	DIR *d;
	struct dirent *e;
	bool has_head = false;

	if (depth > BERTH_TRUST_SCAN_DEPTH) {
		sc->out->incomplete = true;
		close(dfd);
		return;
	}
	d = fdopendir(dfd);
	if (d == NULL) {
		close(dfd);
		sc->out->incomplete = true;
		return;
	}
	while ((e = readdir(d)) != NULL && !over_budget(sc)) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (depth == 0 && treat == BERTH_TRUST_NONE && top_name(e->d_name))
			continue;
		entry(sc, dirfd(d), rel, depth, e->d_name, e->d_type, treat, why, cls, &has_head);
	}
	if (has_head && treat == BERTH_TRUST_NONE)
		check_bare(sc, dirfd(d), rel);
	closedir(d);
}

/* The top of a root first, by name and not by reading the directory: the
 * repository and the trust names there are what the host's tools read
 * first, and a sandbox that fills the root with a million files to spend
 * the walk's budget must not hide them. */
static void top_first(struct scan *sc, int fd)
{
	bool has_head = false;
	struct stat st;

	if (fstatat(fd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0)
		entry(sc, fd, "", 0, ".git", DT_UNKNOWN, BERTH_TRUST_NONE, NULL, NULL, &has_head);
	for (size_t i = 0; berth_trust_names[i].name != NULL; i++) {
		const char *n = berth_trust_names[i].name;
		if (strchr(n, '/') == NULL && fstatat(fd, n, &st, AT_SYMLINK_NOFOLLOW) == 0)
			entry(sc, fd, "", 0, n, DT_UNKNOWN, BERTH_TRUST_NONE, NULL, NULL, &has_head);
	}
}

/* A watched path (an include target, a hooks directory) that changed. */
static void check_watch(struct scan *sc, const char *path)
{
	char dir[PATH_MAX];
	const char *name;
	struct stat st;
	struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
	cleanup_close int dfd = -1;

	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash == NULL || slash == dir)
		return;
	*slash = '\0';
	name = slash + 1;
	dfd = (int)syscall(SYS_openat2, AT_FDCWD, dir, &how, sizeof how);
	if (dfd < 0 || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	const char *saved = sc->root;
	sc->root = dir;
	if (S_ISDIR(st.st_mode)) {
		cleanup_close int hfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (hfd >= 0)
			hooks_dir(sc, hfd, name, "the host's git runs it as a hook (core.hooksPath)");
	} else if (berth_ts_changed_since(&st, &sc->since)) {
		berth_ts_set_aside(sc, dfd, "", name,
				   "the repository's config names it, so the host's git would read it");
	}
	sc->root = saved;
}

int berth_trust_scan(const struct berth_policy *p, const struct berth_guard *g,
		     struct berth_trust_report *out, struct berth_error *err)
{
	struct scan sc = {.p = p, .g = g, .since = g->started, .out = out};

	memset(out, 0, sizeof *out);
	clock_gettime(CLOCK_MONOTONIC, &sc.deadline);
	sc.deadline.tv_nsec += (long)BERTH_TRUST_SCAN_MS % 1000 * 1000000L;
	sc.deadline.tv_sec += BERTH_TRUST_SCAN_MS / 1000 + sc.deadline.tv_nsec / 1000000000L;
	sc.deadline.tv_nsec %= 1000000000L;
	berth_ts_load_known(&sc, g->n_roots > 0 ? g->roots[0].known : NULL);
	for (int i = 0; i < g->n_watch; i++)
		check_watch(&sc, g->watch[i]);
	for (int i = 0; i < g->n_roots; i++) {
		if (g->roots[i].nested)
			continue;
		int fd = open(g->roots[i].host, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			out->incomplete = true;
			continue;
		}
		sc.root = g->roots[i].host;
		/* A root that is itself a trust name (`--rw proj/.vscode`): what
		 * the sandbox wrote in it is set aside like anywhere else. */
		const char *base = strrchr(g->roots[i].host, '/'), *rw = NULL, *rc = NULL;
		enum berth_trust rt = base != NULL && base[1] != '\0'
					  ? berth_trust_lookup_class(p, base + 1, &rw, &rc)
					  : BERTH_TRUST_NONE;
		if (rt == BERTH_TRUST_NONE)
			top_first(&sc, fd);
		walk(&sc, fd, "", 0, rt, rw, rc);
	}
	berth_ts_save_known(&sc, g->n_roots > 0 ? g->roots[0].known : NULL);
	free(sc.known);
	free(sc.seen);
	free(sc.demoted);
	if (sc.oom)
		return berth_err(err, ENOMEM, "out of memory");
	return 0;
}

void berth_trust_report_free(struct berth_trust_report *r)
{
	for (int i = 0; i < r->n_lines; i++)
		free(r->lines[i]);
	memset(r, 0, sizeof *r);
}
