/* SPDX-License-Identifier: MIT */
/*
 * trustscan.c - set aside or name what the sandbox made or changed on the
 * host's trust surface (trustscan.h).
 */
#include "trustscan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../policy/trust.h"
#include "../util/cleanup.h"
#include "gitrules.h"
#include "../util/rundir.h"

#define SET_ASIDE ".berth-set-aside"

struct scan {
	const struct berth_policy *p;
	const struct berth_guard *g;
	struct timespec since;
	struct timespec deadline; /* CLOCK_MONOTONIC */
	long entries;
	bool stopped;
	bool oom;
	struct berth_trust_report *out;
	const char *root; /* host path of the root being walked */
	/* Directories that were repositories or trust names when the last run
	 * on this root ended (guard.h, `known`), sorted; and those seen now. */
	struct devino *known;
	size_t n_known;
	bool have_known;
	struct devino *seen;
	size_t n_seen, cap_seen;
	/* Known directories found now under a name that is not a repository
	 * nor a trust name: no longer trusted where they go next. */
	struct devino *demoted;
	size_t n_demoted, cap_demoted;
	/* Below a directory that became a repository or a trust name during
	 * this run (a rename of what an earlier run wrote): every entry counts
	 * as changed. */
	bool force;
};

struct devino {
	unsigned long long dev, ino;
};

#define KNOWN_MAX 200000

static int devino_cmp(const void *a, const void *b)
{
	const struct devino *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static bool changed_since(const struct stat *st, const struct timespec *t)
{
	return st->st_ctim.tv_sec > t->tv_sec || (st->st_ctim.tv_sec == t->tv_sec && st->st_ctim.tv_nsec >= t->tv_nsec);
}

static bool changed_at(struct scan *sc, int dfd, const char *name)
{
	struct stat st;

	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && (sc->force || changed_since(&st, &sc->since));
}

static void push_devino(struct scan *sc, struct devino **v, size_t *n, size_t *cap, struct devino k)
{
	if (*n >= KNOWN_MAX)
		return;
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 256;
		struct devino *nv = realloc(*v, c * sizeof *nv);
		if (nv == NULL) {
			sc->oom = true;
			return;
		}
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = k;
}

/* The directory @st is neither a repository nor a trust name here: if it
 * was one when an earlier run ended, it is not any more (what it holds may
 * change under this harmless name, and come back). */
static void demote(struct scan *sc, const struct stat *st)
{
	struct devino k = {(unsigned long long)st->st_dev, (unsigned long long)st->st_ino};

	if (sc->n_known > 0 && bsearch(&k, sc->known, sc->n_known, sizeof k, devino_cmp) != NULL)
		push_devino(sc, &sc->demoted, &sc->n_demoted, &sc->cap_demoted, k);
}

/* Record the directory @st as a repository or trust name seen now; true
 * when it was not one when the last run here ended and changed since: it
 * was renamed into place (or made) in this run, so what it holds, however
 * old, is new under this name. */
static bool appeared(struct scan *sc, const struct stat *st)
{
	struct devino k = {(unsigned long long)st->st_dev, (unsigned long long)st->st_ino};

	if (sc->n_seen < KNOWN_MAX) {
		if (sc->n_seen == sc->cap_seen) {
			size_t cap = sc->cap_seen ? sc->cap_seen * 2 : 256;
			struct devino *v = realloc(sc->seen, cap * sizeof *v);
			if (v == NULL) {
				sc->oom = true;
				return true;
			}
			sc->seen = v;
			sc->cap_seen = cap;
		}
		sc->seen[sc->n_seen++] = k;
	}
	if (!sc->have_known || !changed_since(st, &sc->since))
		return false;
	return sc->n_known == 0 || bsearch(&k, sc->known, sc->n_known, sizeof k, devino_cmp) == NULL;
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

__attribute__((format(printf, 2, 3))) static void line(struct scan *sc, const char *fmt, ...)
{
	struct berth_trust_report *o = sc->out;
	va_list ap;
	char *s = NULL;

	if (o->n_lines >= BERTH_TRUST_REPORT_LINES) {
		o->n_more++;
		return;
	}
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s == NULL) {
		sc->oom = true;
		return;
	}
	o->lines[o->n_lines++] = s;
}

/* "ROOT/REL/NAME" for messages. */
static void shown(const struct scan *sc, const char *rel, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s%s", sc->root, *rel != '\0' ? "/" : "", rel, name != NULL ? "/" : "",
		 name != NULL ? name : "");
}

/* @path quoted for a POSIX shell into @out: '...' with each ' as '\'',
 * or bash's $'...' with \xHH for a byte that is not printable ASCII, so
 * that the restore command berth prints is exactly the two paths, whatever
 * the sandbox named them. */
static void shq(const char *path, char *out, size_t len)
{
	bool plain = true;
	size_t o = 0;

	for (const unsigned char *c = (const unsigned char *)path; *c != '\0'; c++)
		plain = plain && *c >= 0x20 && *c < 0x7f;
#define PUT(ch)                                                                                                        \
	do {                                                                                                           \
		if (o + 1 < len)                                                                                       \
			out[o++] = (ch);                                                                               \
	} while (0)
	if (plain) {
		PUT('\'');
		for (const char *c = path; *c != '\0'; c++) {
			if (*c == '\'') {
				PUT('\'');
				PUT('\\');
				PUT('\'');
				PUT('\'');
			} else {
				PUT(*c);
			}
		}
		PUT('\'');
	} else {
		PUT('$');
		PUT('\'');
		for (const unsigned char *c = (const unsigned char *)path; *c != '\0'; c++) {
			if (*c >= 0x20 && *c < 0x7f && *c != '\'' && *c != '\\') {
				PUT((char)*c);
			} else {
				char hx[5];
				snprintf(hx, sizeof hx, "\\x%02x", *c);
				for (int k = 0; k < 4; k++)
					PUT(hx[k]);
			}
		}
		PUT('\'');
	}
#undef PUT
	out[o < len ? o : len - 1] = '\0';
}

/* The name berth renames @name to when NAME.berth-set-aside is taken:
 * NAME.berth-set-aside-XXXXXXXX, eight hex digits from getrandom(2), so
 * that the sandbox cannot take every name in advance and leave what it
 * planted in place. */
static void aside_name(const char *name, char *to, size_t len)
{
	unsigned int r = 0;

	if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		r = (unsigned int)(t.tv_nsec ^ (t.tv_sec << 20) ^ getpid());
	}
	snprintf(to, len, "%.200s" SET_ASIDE "-%08x", name, r);
}

/* Rename @name in @dfd aside (aside_name).  A directory the sandbox made
 * unwritable (chmod 0555; the same uid as berth, when berth is not root) is
 * made writable for the rename and given its mode back. */
static void set_aside(struct scan *sc, int dfd, const char *rel, const char *name, const char *why)
{
	char to[NAME_MAX + 1], path[PATH_MAX], dir[PATH_MAX], newpath[PATH_MAX + NAME_MAX + 2];
	char q_old[2 * PATH_MAX], q_new[2 * PATH_MAX + 2 * NAME_MAX];
	struct stat ds;
	bool chmodded = false;
	int e = 0;

	shown(sc, rel, name, path, sizeof path);
	shown(sc, rel, NULL, dir, sizeof dir);
	for (int n = 0; n < 9; n++) {
		/* NAME.berth-set-aside when it is free; when the sandbox took it,
		 * a name it cannot have guessed */
		if (n == 0 || (n == 1 && chmodded && e == EACCES))
			snprintf(to, sizeof to, "%.200s" SET_ASIDE, name);
		else
			aside_name(name, to, sizeof to);
		if (syscall(SYS_renameat2, dfd, name, dfd, to, RENAME_NOREPLACE) == 0) {
			e = 0;
			break;
		}
		e = errno;
		if (e == EACCES && !chmodded && fstat(dfd, &ds) == 0 && fchmod(dfd, (ds.st_mode & 07777) | 0300) == 0) {
			chmodded = true;
			continue;
		}
		if (e != EEXIST)
			break;
	}
	if (chmodded)
		(void)fchmod(dfd, ds.st_mode & 07777);
	if (e == 0) {
		sc->out->n_set_aside++;
		snprintf(newpath, sizeof newpath, "%s/%s", dir, to);
		shq(newpath, q_new, sizeof q_new);
		shq(path, q_old, sizeof q_old);
		line(sc, "set aside `%s` as `%s`: the sandbox made or changed it, and %s; restore: mv %s %s", path, to,
		     why, q_new, q_old);
		return;
	}
	sc->out->n_failed++;
	line(sc, "could not set aside `%s` (%s), and %s: it is still there and live; remove it before you run "
		 "anything there",
	     path, strerror(e), why);
}

/* ------------------------------------------------------- git directories */

static bool is_sample(const char *name)
{
	size_t n = strlen(name);

	return n > 7 && strcmp(name + n - 7, ".sample") == 0;
}

/* A name berth set aside: NAME.berth-set-aside-XXXXXXXX (or, from berth
 * before that, NAME.berth-set-aside[.N]).  No host tool reads such a name;
 * only files are skipped (a directory is walked whatever its name). */
static bool set_aside_name(const char *name)
{
	const char *m = strstr(name, SET_ASIDE);

	while (m != NULL) {
		const char *t = m + strlen(SET_ASIDE);
		if (*t == '\0' || (t[0] == '-' && strlen(t) == 9 && strspn(t + 1, "0123456789abcdef") == 8) ||
		    (t[0] == '.' && t[1] != '\0' && strspn(t + 1, "0123456789") == strlen(t + 1)))
			return true;
		m = strstr(m + 1, SET_ASIDE);
	}
	return false;
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
		    set_aside_name(e->d_name))
			continue;
		if (changed_at(sc, dirfd(d), e->d_name)) {
			changed = true;
			set_aside(sc, dirfd(d), rel, e->d_name, why);
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
		if (skipped || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
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
			sc->force = appeared(sc, &st) || sc->force;
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
	if (strcmp(section, "core") == 0 && subsection == NULL && strcmp(key, "worktree") == 0 && value != NULL) {
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
static void check_config(struct scan *sc, int gfd, const char *rel, const char *name, bool *changed)
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
	shown(sc, rel, NULL, gitdir, sizeof gitdir);
	r = berth_git_config_read(gfd, name, first_active, &a, &e);
	if (r == 0 || (r < 0 && e.errnum == ENOENT))
		return;
	if (r > 0)
		snprintf(why, sizeof why, "its `%s` would make the host's git run a program or read another file",
			 a.key);
	else
		snprintf(why, sizeof why, "the host's git could not read it as before (%s)", e.msg);
	set_aside(sc, gfd, rel, name, why);
}

/* The kept HEAD of a root's repository, when git would no longer take it. */
static void check_head(struct scan *sc, int gfd, const char *rel)
{
	char path[PATH_MAX];
	const struct berth_guard_root *r = NULL;
	struct stat st;

	shown(sc, rel, NULL, path, sizeof path);
	for (int i = 0; i < sc->g->n_roots && r == NULL; i++)
		if (sc->g->roots[i].gitdir != NULL && strcmp(sc->g->roots[i].gitdir, path) == 0)
			r = &sc->g->roots[i];
	if (r == NULL || r->head == NULL || berth_git_head_valid(gfd))
		return;
	if (fstatat(gfd, "HEAD", &st, AT_SYMLINK_NOFOLLOW) == 0)
		set_aside(sc, gfd, rel, "HEAD", "git would no longer take this directory as the repository");
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
		line(sc, "restored `%s/HEAD` to what it was when the run started", path);
	else
		line(sc, "could not restore `%s/HEAD` (%s): put back what it held (`%.*s`)", path, strerror(errno),
		     (int)strcspn(r->head, "\n"), r->head);
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
	snprintf(here, sizeof here, "%s%s%s", rel, strcmp(sub, ".") != 0 ? "/" : "", strcmp(sub, ".") != 0 ? sub : "");
	while ((e = readdir(d)) != NULL)
		if ((e->d_type == DT_FIFO || e->d_type == DT_UNKNOWN) &&
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISFIFO(st.st_mode) &&
		    changed_since(&st, &sc->since))
			set_aside(sc, dirfd(d), here, e->d_name, FIFO_WHY);
	closedir(d);
}

static void check_gitdir(struct scan *sc, int gfd, const char *rel, int depth, bool *changed)
{
	struct stat st;

	check_config(sc, gfd, rel, "config", changed);
	check_config(sc, gfd, rel, "config.worktree", changed);
	if (changed_at(sc, gfd, "commondir")) {
		*changed = true;
		if (!berth_trust_git_unprotected(sc->p, ".git/commondir") && !berth_git_commondir_ok(gfd))
			set_aside(sc, gfd, rel, "commondir",
				  "it would send the host's git to the config and hooks of another directory");
	}
	if (fstatat(gfd, "hooks", &st, AT_SYMLINK_NOFOLLOW) == 0) {
		char hrel[PATH_MAX];
		snprintf(hrel, sizeof hrel, "%s/hooks", rel);
		if (S_ISLNK(st.st_mode)) {
			if (sc->force || changed_since(&st, &sc->since)) {
				*changed = true;
				if (!berth_trust_git_unprotected(sc->p, ".git/hooks"))
					set_aside(sc, gfd, rel, "hooks", "the host's git would run the hooks it points to");
			}
		} else if (S_ISDIR(st.st_mode)) {
			cleanup_close int hfd = openat(gfd, "hooks", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (hfd >= 0 && !berth_trust_git_unprotected(sc->p, ".git/hooks"))
				*changed = hooks_dir(sc, hfd, hrel, "the host's git would run it as a hook") || *changed;
			else if (hfd >= 0 && changed_since(&st, &sc->since))
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

	shown(sc, rel, NULL, path, sizeof path);
	line(sc, "the sandbox made or changed the git repository `%s`%s: git run there, or `git status` in a "
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
		if (changed_since(&st, &sc->since))
			set_aside(sc, pfd, rel, ".git", "the host's git would take the repository it points to");
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		gfd = openat(pfd, ".git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (gfd < 0) {
			if (changed_since(&st, &sc->since))
				sc->out->incomplete = true;
			return;
		}
		bool saved = sc->force;
		sc->force = appeared(sc, &st) || sc->force;
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
	changed = changed_since(&st, &sc->since);
	fd = openat(pfd, ".git", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || (n = read(fd, buf, sizeof buf - 1)) < 0)
		return;
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (strncmp(buf, "gitdir: ", 8) != 0)
		return; /* git refuses such a file: no repository */
	shown(sc, rel, NULL, here, sizeof here);
	if (buf[8] == '/')
		snprintf(target, sizeof target, "%s", buf + 8);
	else if ((size_t)snprintf(target, sizeof target, "%s/%s", here, buf + 8) >= sizeof target)
		return;
	if (realpath(target, real) == NULL) {
		if (changed && buf[8] == '/' && !in_roots(sc, target) && strncmp(target, "/workspace/", 11) != 0)
			set_aside(sc, pfd, rel, ".git", "it sends the host's git to a repository outside the workspace");
		return;
	}
	if (!in_roots(sc, real)) {
		if (changed)
			set_aside(sc, pfd, rel, ".git", "it sends the host's git to a repository outside the workspace");
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
	if (fstat(gfd, &gst) == 0 && (appeared(sc, &gst) || changed))
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
	if (fstat(dfd, &st) == 0 && appeared(sc, &st))
		sc->force = true;
	changed = changed_at(sc, dfd, "HEAD") || changed_at(sc, dfd, "config");
	check_gitdir(sc, dfd, rel, 0, &changed);
	sc->force = saved;
	if (changed)
		report_repo(sc, rel,
			    " (a bare repository: git takes a directory holding HEAD, objects/ and refs/ as one)",
			    sc->out->n_failed > f0);
}

/* ------------------------------------------------------------ the walk */

static void named(struct scan *sc, const char *rel, const char *name, const char *cls, const char *why)
{
	char path[PATH_MAX];

	shown(sc, rel, name, path, sizeof path);
	line(sc, "the sandbox changed `%s` (%s): %s; review it", path, cls, why);
}

static void walk(struct scan *sc, int dfd, const char *rel, int depth, enum berth_trust treat, const char *why,
		 const char *cls);
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

	shown(sc, rel, NULL, dir, sizeof dir);
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
		if (set_aside_name(name))
			return;
		if (dtype == DT_FIFO && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISFIFO(st.st_mode) &&
		    changed_since(&st, &sc->since)) {
			set_aside(sc, dfd, rel, name, FIFO_WHY);
			return;
		}
		if (t != BERTH_TRUST_NONE && c != NULL && strcmp(c, "home") == 0 &&
		    (strcmp(name, ".gitconfig") == 0 || (strcmp(name, "config") == 0 && strstr(rel, ".config/git") != NULL)))
			home_git_includes(sc, rel, name);
		if (t != BERTH_TRUST_NONE && changed_at(sc, dfd, name)) {
			if (t == BERTH_TRUST_READONLY)
				set_aside(sc, dfd, rel, name, w);
			else
				named(sc, rel, name, c, w);
		} else if (t == BERTH_TRUST_NONE && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			   S_ISLNK(st.st_mode) && (sc->force || changed_since(&st, &sc->since)) &&
			   berth_trust_path_prefix(rel, name)) {
			set_aside(sc, dfd, rel, name,
				  "a tool on the host would follow it to a config file the sandbox chose (such as "
				  ".hg/hgrc or .config/git/config)");
		}
		return;
	}
	int cfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (cfd < 0) {
		if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP &&
		    (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || changed_since(&st, &sc->since)))
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
		if ((treat == BERTH_TRUST_NONE && t != BERTH_TRUST_NONE) || berth_trust_path_prefix(rel, name)) {
			if (appeared(sc, &st))
				sc->force = true;
		} else if (t == BERTH_TRUST_NONE || treat != BERTH_TRUST_NONE) {
			demote(sc, &st);
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

static void walk(struct scan *sc, int dfd, const char *rel, int depth, enum berth_trust treat, const char *why,
		 const char *cls)
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
	} else if (changed_since(&st, &sc->since)) {
		set_aside(sc, dfd, "", name, "the repository's config names it, so the host's git would read it");
	}
	sc->root = saved;
}

/* The known set of @path into @sc (absent: none, and nothing is forced). */
static void load_known(struct scan *sc, const char *path)
{
	struct open_how how = {.flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
	int fd;
	FILE *f;
	unsigned long long d, i;

	free(sc->known);
	sc->known = NULL;
	sc->n_known = 0;
	sc->have_known = false;
	if (path == NULL)
		return;
	fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
	if (fd < 0 || (f = fdopen(fd, "r")) == NULL) {
		if (fd >= 0)
			close(fd);
		return;
	}
	sc->have_known = true;
	while (sc->n_known < KNOWN_MAX && fscanf(f, "%llu %llu\n", &d, &i) == 2) {
		if ((sc->n_known & (sc->n_known - 1)) == 0) {
			struct devino *v = realloc(sc->known, (sc->n_known ? sc->n_known * 2 : 1) * sizeof *v);
			if (v == NULL)
				break;
			sc->known = v;
		}
		sc->known[sc->n_known++] = (struct devino){d, i};
	}
	fclose(f);
	if (sc->n_known > 0)
		qsort(sc->known, sc->n_known, sizeof *sc->known, devino_cmp);
}

/* Add what was seen to @path, under an flock(2) of PATH.lock so that two
 * runs ending together both land: the file as it is now, plus what this
 * scan saw, into a temporary file renamed over it.  The set only grows
 * (to KNOWN_MAX): a directory that is gone costs a line; one that is
 * missing from it is only ever treated as new, the safe side.  The
 * directories on the way are made 0700. */
static void save_known(struct scan *sc, const char *path)
{
	char dir[PATH_MAX], tmp[PATH_MAX + 16], lock[PATH_MAX + 8];
	cleanup_close int lfd = -1;
	FILE *f;
	int fd;

	if (path == NULL || sc->oom)
		return;
	snprintf(dir, sizeof dir, "%s", path);
	for (char *q = dir + 1; *q != '\0'; q++) {
		if (*q != '/')
			continue;
		*q = '\0';
		(void)mkdir(dir, 0700);
		*q = '/';
	}
	snprintf(lock, sizeof lock, "%s.lock", path);
	lfd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lfd < 0 || flock(lfd, LOCK_EX) < 0)
		return;
	if (sc->n_seen > 0)
		qsort(sc->seen, sc->n_seen, sizeof *sc->seen, devino_cmp);
	size_t u = 0;
	for (size_t i = 0; i < sc->n_seen; i++)
		if (u == 0 || devino_cmp(&sc->seen[i], &sc->seen[u - 1]) != 0)
			sc->seen[u++] = sc->seen[i];
	sc->n_seen = u;
	load_known(sc, path); /* as it is now, with what others added */
	bool news = !sc->have_known || sc->n_demoted > 0;
	for (size_t i = 0; i < sc->n_seen && !news; i++)
		news = sc->n_known == 0 || bsearch(&sc->seen[i], sc->known, sc->n_known, sizeof *sc->known, devino_cmp) == NULL;
	if (!news)
		return; /* the usual end of a run: nothing berth has not seen before */
	snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || (f = fdopen(fd, "w")) == NULL) {
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		return;
	}
	if (sc->n_demoted > 0)
		qsort(sc->demoted, sc->n_demoted, sizeof *sc->demoted, devino_cmp);
	size_t n = 0;
	for (size_t i = 0; i < sc->n_seen && n < KNOWN_MAX; i++, n++)
		fprintf(f, "%llu %llu\n", sc->seen[i].dev, sc->seen[i].ino);
	for (size_t i = 0; i < sc->n_known && n < KNOWN_MAX; i++)
		if ((sc->n_seen == 0 || bsearch(&sc->known[i], sc->seen, sc->n_seen, sizeof *sc->seen, devino_cmp) == NULL) &&
		    (sc->n_demoted == 0 ||
		     bsearch(&sc->known[i], sc->demoted, sc->n_demoted, sizeof *sc->demoted, devino_cmp) == NULL)) {
			fprintf(f, "%llu %llu\n", sc->known[i].dev, sc->known[i].ino);
			n++;
		}
	/* No fsync(2): a set lost to a crash only makes the next run treat
	 * these directories as berth's first sight of them. */
	if (fclose(f) != 0) {
		unlink(tmp);
		return;
	}
	if (rename(tmp, path) < 0)
		unlink(tmp);
}

int berth_trust_scan(const struct berth_policy *p, const struct berth_guard *g, struct berth_trust_report *out,
		     struct berth_error *err)
{
	struct scan sc = {.p = p, .g = g, .since = g->started, .out = out};

	memset(out, 0, sizeof *out);
	clock_gettime(CLOCK_MONOTONIC, &sc.deadline);
	sc.deadline.tv_nsec += (long)BERTH_TRUST_SCAN_MS % 1000 * 1000000L;
	sc.deadline.tv_sec += BERTH_TRUST_SCAN_MS / 1000 + sc.deadline.tv_nsec / 1000000000L;
	sc.deadline.tv_nsec %= 1000000000L;
	load_known(&sc, g->n_roots > 0 ? g->roots[0].known : NULL);
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
		enum berth_trust rt = base != NULL && base[1] != '\0' ? berth_trust_lookup_class(p, base + 1, &rw, &rc)
								       : BERTH_TRUST_NONE;
		if (rt == BERTH_TRUST_NONE)
			top_first(&sc, fd);
		walk(&sc, fd, "", 0, rt, rw, rc);
	}
	save_known(&sc, g->n_roots > 0 ? g->roots[0].known : NULL);
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

/* ------------------------------------------------------ during the run */

/* What appears in a watched git directory: set aside when git would take
 * it (a commondir naming another repository, a config with a key that runs
 * a program), the way the exit scan decides.  hooks/ is not watched: a
 * hooks directory holds nothing until a hook is written, and the exit scan
 * sets aside each hook in it. */
static const struct {
	const char *name;
	unsigned bit;
} watched[] = {
	{"commondir", BERTH_GUARD_MISSING_COMMONDIR},
	{"config.worktree", BERTH_GUARD_MISSING_WORKTREE_CONFIG},
	{"config", BERTH_GUARD_MISSING_CONFIG},
};

int berth_trust_watch(const struct berth_guard *g, int wds[BERTH_GUARD_ROOTS])
{
	int fd = -1, n = 0;

	for (int i = 0; i < BERTH_GUARD_ROOTS; i++)
		wds[i] = -1;
	for (int i = 0; i < g->n_roots; i++) {
		if (g->roots[i].gitdir == NULL ||
		    (g->roots[i].missing & (BERTH_GUARD_MISSING_COMMONDIR | BERTH_GUARD_MISSING_WORKTREE_CONFIG |
					    BERTH_GUARD_MISSING_CONFIG)) == 0)
			continue;
		if (fd < 0 && (fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0)
			return -1;
		wds[i] = inotify_add_watch(fd, g->roots[i].gitdir,
					   IN_CREATE | IN_MOVED_TO | IN_MODIFY | IN_CLOSE_WRITE | IN_ONLYDIR | IN_DONT_FOLLOW);
		if (wds[i] >= 0)
			n++;
	}
	if (fd >= 0 && n == 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

void berth_trust_watch_events(int fd, const int wds[BERTH_GUARD_ROOTS], const struct berth_policy *p,
			      const struct berth_guard *g, struct berth_trust_report *out)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	struct scan sc = {.p = p, .g = g, .out = out};
	ssize_t n;

	while ((n = read(fd, buf, sizeof buf)) > 0) {
		for (char *q = buf; q < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)q;
			q += sizeof *ev + ev->len;
			if (ev->len == 0)
				continue;
			for (int i = 0; i < g->n_roots; i++) {
				if (wds[i] != ev->wd)
					continue;
				for (size_t k = 0; k < sizeof watched / sizeof watched[0]; k++) {
					if (!(g->roots[i].missing & watched[k].bit) || strcmp(ev->name, watched[k].name) != 0)
						continue;
					struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
							       .resolve = RESOLVE_NO_SYMLINKS};
					cleanup_close int dfd = (int)syscall(SYS_openat2, AT_FDCWD, g->roots[i].gitdir, &how,
									    sizeof how);
					if (dfd < 0)
						continue;
					sc.root = g->roots[i].gitdir;
					if (watched[k].bit == BERTH_GUARD_MISSING_COMMONDIR) {
						if (!berth_git_commondir_ok(dfd))
							set_aside(&sc, dfd, "", ev->name,
								  "it would send the host's git to the config and "
								  "hooks of another directory");
					} else {
						bool changed = false;
						sc.force = true; /* absent at the start: all of it is new */
						check_config(&sc, dfd, "", ev->name, &changed);
						sc.force = false;
					}
				}
				break; /* one git directory may be the repository of two roots */
			}
		}
	}
}
