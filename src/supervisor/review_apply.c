/* SPDX-License-Identifier: MIT */
/*
 * review_apply.c - `berth apply` and `berth discard` of a --review run's
 * change set (review.h).
 *
 * Apply in three passes over the chosen entries: removals, deepest first;
 * directories made or chmodded, shallowest first; then files and links,
 * each first written beside its target under a temporary name.  The file
 * system is synced once (syncfs(2)) and every temporary file renamed over
 * its target, each after its host copy is checked once more: a file is
 * replaced whole or not at all, also across a crash.
 */
#include "review.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/rmtree.h"
#include "../util/text.h"

struct apply {
	const struct berth_review_apply_opts *o;
	struct berth_review_apply_result *res;
	char dir[PATH_MAX]; /* RUN/review */
	int ws;             /* the host's workspace */
	struct stat ws_st;
	bool root;
	json_t *applied;             /* applied.json */
	json_t *applied_set;         /* the same entries as an object's keys */
	json_t *needed;              /* the directories above a chosen entry, as an object's keys */
	struct berth_review_sel sel; /* the PATHs given */
	json_t *done, *refused, *held;
	/* pass 3: temporary files written, renamed after the sync */
	struct pending {
		json_t *e;
		char name[256], tmp[64];
	} * pend;
	size_t n_pend;
	unsigned long seq; /* temporary names: .berth-apply.PID.SEQ */
};

/* An entry as applied.json names it: "OP PATH" (a path can be in the change
 * set twice: deleted as a directory, created as a file). */
static const char *entry_key(const json_t *e, char key[PATH_MAX + 16])
{
	snprintf(key, PATH_MAX + 16, "%s %s", json_string_value(json_object_get(e, "op")),
		 json_string_value(json_object_get(e, "path")));
	return key;
}

static long long ns_of(const struct timespec *t)
{
	return (long long)t->tv_sec * 1000000000LL + t->tv_nsec;
}

static const char *ent_path(const json_t *e)
{
	return json_string_value(json_object_get(e, "path"));
}

/* An integer member, or one written as a decimal string (review.c). */
static long long jint(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	return json_is_string(v) ? strtoll(json_string_value(v), NULL, 10) : (long long)json_integer_value(v);
}

static int depth(const char *p)
{
	int d = 0;

	for (; *p != '\0'; p++)
		d += *p == '/';
	return d;
}

static int cmp_deep_first(const void *x, const void *y)
{
	return depth(ent_path(*(json_t *const *)y)) - depth(ent_path(*(json_t *const *)x));
}

static int cmp_shallow_first(const void *x, const void *y)
{
	return -cmp_deep_first(x, y);
}

/* The directory holding @path in the workspace, opened with no link
 * followed and nothing outside it reached; its last component in @name. */
static int open_parent(struct apply *a, const char *path, char name[256])
{
	struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
			       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];

	snprintf(name, 256, "%s", slash != NULL ? slash + 1 : path);
	if (slash == NULL)
		return fcntl(a->ws, F_DUPFD_CLOEXEC, 3);
	snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
	int fd = (int)syscall(SYS_openat2, a->ws, dir, &how, sizeof how);
	if (fd >= 0 || errno != ENOSYS)
		return fd;
	/* no openat2 (an old kernel, a seccomp filter): one component at a
	 * time below the last, none a link, none ".." */
	fd = fcntl(a->ws, F_DUPFD_CLOEXEC, 3);
	for (char *c = dir, *next; fd >= 0 && c != NULL; c = next) {
		int sub;
		next = strchr(c, '/');
		if (next != NULL)
			*next++ = '\0';
		if (c[0] == '\0' || strcmp(c, ".") == 0 || strcmp(c, "..") == 0) {
			close(fd);
			errno = EXDEV;
			return -1;
		}
		sub = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = sub;
	}
	return fd;
}

/* Is the host's copy of @name below @pfd still the one the run ended with
 * (and not changed while the run lasted)?  NULL, or why not. */
static const char *host_moved(struct apply *a, const json_t *e, int pfd, const char *name)
{
	const json_t *b = json_object_get(e, "base");
	struct stat st;
	bool there = fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;

	(void)a;
	if (json_is_true(json_object_get(e, "host_changed")))
		return "changed on the host while the run lasted";
	if (json_is_null(b) || b == NULL)
		return there ? "made on the host since the run ended" : NULL;
	if (!there)
		return "removed on the host since the run ended";
	/* a directory's times and size follow its entries (an earlier pass
	 * here changes them): it is the same directory, with the same mode */
	if (S_ISDIR(st.st_mode) && strcmp(json_string_value(json_object_get(b, "type")), "dir") == 0)
		return (long long)st.st_dev != jint(b, "dev") || (long long)st.st_ino != jint(b, "ino") ||
			       (long long)(st.st_mode & 07777) != jint(b, "mode")
			   ? "changed on the host since the run ended"
			   : NULL;
	if ((long long)st.st_dev != jint(b, "dev") || (long long)st.st_ino != jint(b, "ino") ||
	    (long long)st.st_size != jint(b, "size") || ns_of(&st.st_mtim) != jint(b, "mtime_ns") ||
	    ns_of(&st.st_ctim) != jint(b, "ctime_ns") || (long long)(st.st_mode & 07777) != jint(b, "mode"))
		return "changed on the host since the run ended";
	return NULL;
}

static void outcome(struct apply *a, enum berth_review_outcome o, const json_t *e, const char *why)
{
	const char *path = ent_path(e);
	json_t *list = o == BERTH_REVIEW_REFUSED     ? a->refused
		       : o == BERTH_REVIEW_HELD_BACK ? a->held
						     : a->done;

	if (o == BERTH_REVIEW_APPLIED || o == BERTH_REVIEW_APPLIED_GUARDED) {
		a->res->applied++;
		char key[PATH_MAX + 16];
		json_array_append_new(a->applied, json_string(entry_key(e, key)));
		json_object_set_new(a->applied_set, key, json_true());
	} else if (o == BERTH_REVIEW_REFUSED) {
		a->res->refused++;
	} else if (o == BERTH_REVIEW_HELD_BACK) {
		a->res->held_back++;
	} else {
		a->res->already++;
	}
	if (o != BERTH_REVIEW_ALREADY)
		json_array_append_new(list, json_string(path));
	if (a->o->line != NULL)
		a->o->line(a->o->arg, o, path, why);
}

/* The owner a new (@fresh) or replacing inode gets: invoked by root, the
 * workspace's owner or the replaced copy's, as the run's idmapped writes
 * would have had; otherwise the caller's (-1: unchanged). */
static void owner_for(const struct apply *a, const json_t *e, uid_t *u, gid_t *g)
{
	const json_t *b = json_object_get(e, "base");

	*u = (uid_t)-1;
	*g = (gid_t)-1;
	if (!a->root)
		return;
	if (json_is_object(b)) {
		*u = (uid_t)jint(b, "uid");
		*g = (gid_t)jint(b, "gid");
	} else {
		*u = a->ws_st.st_uid;
		*g = a->ws_st.st_gid;
	}
}

/* Pass 1: a removal (its children came before it). */
static int remove_one(const json_t *e, int pfd, const char *name, const char **why)
{
	const char *t = json_string_value(json_object_get(json_object_get(e, "base"), "type"));

	if (unlinkat(pfd, name, t != NULL && strcmp(t, "dir") == 0 ? AT_REMOVEDIR : 0) < 0) {
		*why = errno == ENOTEMPTY ? "the host's directory holds files the run did not see"
					  : strerror(errno);
		return -1;
	}
	return 0;
}

/* Pass 2: a directory made (0700 until pass 4 gives it its mode, so that
 * what goes in it can), or nothing yet for a mode (pass 4). */
static int dir_one(struct apply *a, const json_t *e, int pfd, const char *name, const char **why)
{
	uid_t u;
	gid_t g;

	owner_for(a, e, &u, &g);
	if (strcmp(json_string_value(json_object_get(e, "op")), "create") == 0) {
		if (mkdirat(pfd, name, 0700) < 0 ||
		    (a->root && fchownat(pfd, name, u, g, AT_SYMLINK_NOFOLLOW) < 0)) {
			*why = strerror(errno);
			return -1;
		}
	}
	return 0;
}

/* Pass 4: the directories of pass 2 get their modes, deepest first. */
static void dir_modes(struct apply *a, json_t **dirs, size_t n)
{
	qsort(dirs, n, sizeof *dirs, cmp_deep_first);
	for (size_t i = 0; i < n; i++) {
		const char *path = ent_path(dirs[i]);
		char name[256];
		int pfd;
		char key[PATH_MAX + 16];
		if (json_object_get(a->applied_set, entry_key(dirs[i], key)) == NULL ||
		    (pfd = open_parent(a, path, name)) < 0)
			continue;
		if (fchmodat(pfd, name, (mode_t)jint(dirs[i], "mode"), 0) < 0 && a->o->line != NULL)
			a->o->line(a->o->arg, BERTH_REVIEW_REFUSED, path, "its mode could not be set");
		close(pfd);
	}
}

/* Pass 3, first half: the new file or link written beside its target. */
static int write_one(struct apply *a, const json_t *e, int pfd, char tmp[64], const char **why)
{
	const char *type = json_string_value(json_object_get(e, "type"));
	uid_t u;
	gid_t g;

	owner_for(a, e, &u, &g);
	for (int i = 0;; i++) {
		snprintf(tmp, 64, ".berth-apply.%ld.%lu", (long)getpid(), a->seq++);
		if (strcmp(type, "symlink") == 0) {
			const char *target = json_string_value(json_object_get(e, "target"));
			if (symlinkat(target != NULL ? target : "", pfd, tmp) == 0)
				break;
		} else {
			char blob[PATH_MAX];
			cleanup_close int in = -1, out = -1;
			char buf[65536];
			ssize_t n;
			snprintf(blob, sizeof blob, "%s/blobs/%s", a->dir,
				 json_string_value(json_object_get(e, "sha256")));
			out = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
			if (out < 0 && errno == EEXIST && i < 100)
				continue;
			if (out < 0) {
				*why = strerror(errno);
				return -1;
			}
			if ((in = open(blob, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
				*why = "its bytes are missing from the change set";
				unlinkat(pfd, tmp, 0);
				return -1;
			}
			while ((n = read(in, buf, sizeof buf)) > 0)
				if (write(out, buf, (size_t)n) != n) {
					n = -1;
					break;
				}
			if (n < 0 || (a->root && fchown(out, u, g) < 0) ||
			    fchmod(out, (mode_t)jint(e, "mode")) < 0) {
				*why = strerror(errno != 0 ? errno : EIO);
				unlinkat(pfd, tmp, 0);
				return -1;
			}
			return 0;
		}
		if (errno != EEXIST || i >= 100) {
			*why = strerror(errno);
			return -1;
		}
	}
	if (a->root && fchownat(pfd, tmp, u, g, AT_SYMLINK_NOFOLLOW) < 0) {
		*why = strerror(errno);
		unlinkat(pfd, tmp, 0);
		return -1;
	}
	return 0;
}

enum pass { PASS_REMOVE = 1, PASS_DIRS, PASS_FILES };

static enum pass pass_of(const json_t *e)
{
	const char *op = json_string_value(json_object_get(e, "op"));
	const char *type = json_string_value(json_object_get(e, "type"));

	if (strcmp(op, "delete") == 0)
		return PASS_REMOVE;
	if (type != NULL && strcmp(type, "dir") == 0)
		return PASS_DIRS;
	return PASS_FILES;
}

/* a->needed: every directory above a chosen entry (PATHs given), once:
 * a chosen file's new parents come with it.  A set, so that choosing is
 * linear in the entries (it was a scan of all of them per new directory). */
static int need_parents(struct apply *a, const json_t *entries)
{
	char buf[PATH_MAX];
	size_t i;
	json_t *x;

	if ((a->needed = json_object()) == NULL)
		return -1;
	if (a->o->n_paths == 0)
		return 0; /* everything is chosen */
	json_array_foreach(entries, i, x) {
		const char *p = ent_path(x);
		if (p == NULL || !berth_review_sel_has(&a->sel, p))
			continue;
		snprintf(buf, sizeof buf, "%s", p);
		for (char *slash = strrchr(buf, '/'); slash != NULL; slash = strrchr(buf, '/')) {
			*slash = '\0';
			if (json_object_get(a->needed, buf) != NULL)
				break; /* and the ones above it */
			if (json_object_set_new(a->needed, buf, json_true()) < 0)
				return -1;
		}
	}
	return 0;
}

/* Whether an entry is chosen, or needed by one (the directory a chosen file
 * goes in, made by the run). */
static bool chosen(const struct apply *a, const json_t *e)
{
	const char *path = ent_path(e);

	if (berth_review_sel_has(&a->sel, path))
		return true;
	if (pass_of(e) != PASS_DIRS || strcmp(json_string_value(json_object_get(e, "op")), "create") != 0)
		return false;
	return json_object_get(a->needed, path) != NULL;
}

static void do_entry(struct apply *a, json_t *e, enum pass pass)
{
	const char *path = ent_path(e), *why = NULL,
		   *guard = json_string_value(json_object_get(e, "guarded"));
	const char *type = json_string_value(json_object_get(e, "type"));
	char name[256];
	int pfd;

	char key[PATH_MAX + 16];

	if (json_object_get(a->applied_set, entry_key(e, key)) != NULL) {
		outcome(a, BERTH_REVIEW_ALREADY, e, NULL);
		return;
	}
	if (guard != NULL && !a->o->include_guarded) {
		outcome(a, BERTH_REVIEW_HELD_BACK, e, guard);
		return;
	}
	if (type != NULL && strcmp(type, "other") == 0) {
		outcome(a, BERTH_REVIEW_REFUSED, e, "not a file, directory or link: never applied");
		return;
	}
	if ((pfd = open_parent(a, path, name)) < 0) {
		outcome(a, BERTH_REVIEW_REFUSED, e,
			errno == ELOOP || errno == EXDEV ? "a symbolic link on its way in the host's tree"
							 : "its directory is not in the host's tree");
		return;
	}
	if ((why = host_moved(a, e, pfd, name)) == NULL) {
		if (pass == PASS_REMOVE && remove_one(e, pfd, name, &why) == 0)
			outcome(a, guard != NULL ? BERTH_REVIEW_APPLIED_GUARDED : BERTH_REVIEW_APPLIED, e,
				guard);
		else if (pass == PASS_DIRS && dir_one(a, e, pfd, name, &why) == 0)
			outcome(a, guard != NULL ? BERTH_REVIEW_APPLIED_GUARDED : BERTH_REVIEW_APPLIED, e,
				guard);
		else if (pass == PASS_FILES) {
			struct pending *p = &a->pend[a->n_pend];
			if (strcmp(json_string_value(json_object_get(e, "op")), "mode") == 0 &&
			    strcmp(type, "file") == 0) {
				if (fchmodat(pfd, name, (mode_t)jint(e, "mode"), 0) == 0)
					outcome(a,
						guard != NULL ? BERTH_REVIEW_APPLIED_GUARDED
							      : BERTH_REVIEW_APPLIED,
						e, guard);
				else
					outcome(a, BERTH_REVIEW_REFUSED, e, strerror(errno));
				close(pfd);
				return;
			}
			if (write_one(a, e, pfd, p->tmp, &why) == 0) {
				p->e = e;
				snprintf(p->name, sizeof p->name, "%s", name);
				a->n_pend++;
				close(
				    pfd); /* opened again to rename: thousands of files, not of descriptors */
				return;   /* renamed after the sync */
			}
		}
	}
	if (why != NULL)
		outcome(a, BERTH_REVIEW_REFUSED, e, why);
	close(pfd);
}

/* Pass 3's second half: each file renamed over its target, its host copy
 * checked once more right before. */
static void land(struct apply *a)
{
	if (a->n_pend > 0)
		syncfs(a->ws);
	for (size_t i = 0; i < a->n_pend; i++) {
		struct pending *p = &a->pend[i];
		char name[256];
		int pfd = open_parent(a, ent_path(p->e), name);
		const char *why = pfd < 0 ? "its directory changed on the host while berth applied"
					  : host_moved(a, p->e, pfd, p->name);
		const char *guard = json_string_value(json_object_get(p->e, "guarded"));
		if (why == NULL && renameat(pfd, p->tmp, pfd, p->name) < 0)
			why = strerror(errno);
		if (why != NULL) {
			if (pfd >= 0)
				unlinkat(pfd, p->tmp, 0);
			outcome(a, BERTH_REVIEW_REFUSED, p->e, why);
		} else {
			outcome(a, guard != NULL ? BERTH_REVIEW_APPLIED_GUARDED : BERTH_REVIEW_APPLIED, p->e,
				guard);
		}
		if (pfd >= 0)
			close(pfd);
	}
	if (a->n_pend > 0)
		syncfs(a->ws);
}

static int save_applied(struct apply *a, struct berth_error *err)
{
	char tmp[PATH_MAX], path[PATH_MAX];

	snprintf(tmp, sizeof tmp, "%s/.applied.json.tmp", a->dir);
	snprintf(path, sizeof path, "%s/applied.json", a->dir);
	unlink(tmp);
	if (json_dump_file(a->applied, tmp, JSON_COMPACT) < 0 || chmod(tmp, 0600) < 0 ||
	    rename(tmp, path) < 0) {
		unlink(tmp);
		return berth_err(err, errno != 0 ? errno : EIO,
				 "apply: cannot record what was applied in `%s`", path);
	}
	return 0;
}

int berth_review_apply(const char *run_id, const struct berth_review_apply_opts *o,
		       struct berth_review_apply_result *res, struct berth_error *err)
{
	struct apply a = {.o = o, .res = res, .ws = -1, .root = geteuid() == 0};
	json_t *cs, *entries, *e;
	json_t **order = NULL;
	size_t n, i, k;
	const char *ws;
	int rc = -1;

	*res = (struct berth_review_apply_result){0};
	if ((cs = berth_review_load(run_id, a.dir, &a.applied, err)) == NULL)
		return -1;
	entries = json_object_get(cs, "entries");
	if (json_is_true(json_object_get(cs, "layer_full"))) {
		berth_usage_err(
		    err,
		    "apply: run %s's review layer was full when it ended (a write met ENOSPC in the "
		    "sandbox): a file may be cut short, so nothing is applied",
		    run_id);
		berth_err_hint(err,
			       "see it with `berth diff %s`, drop it with `berth discard %s`, and run "
			       "again with a larger --review-size",
			       run_id, run_id);
		json_decref(cs);
		json_decref(a.applied);
		return -1;
	}
	ws = json_string_value(json_object_get(cs, "workspace"));
	n = json_array_size(entries);
	a.applied_set = json_object();
	json_array_foreach(a.applied, i, e)
		if (json_is_string(e))
			json_object_set(a.applied_set, json_string_value(e), json_true());
	a.done = json_array();
	a.refused = json_array();
	a.held = json_array();
	order = calloc(n + 1, sizeof *order);
	a.pend = calloc(n + 1, sizeof *a.pend);
	if (a.applied_set == NULL || a.done == NULL || a.refused == NULL || a.held == NULL || order == NULL ||
	    a.pend == NULL || berth_review_sel_init(&a.sel, o->paths, o->n_paths, err) < 0 ||
	    need_parents(&a, entries) < 0) {
		if (err->msg[0] != '\0')
			goto out;
		berth_err(err, ENOMEM, "out of memory");
		goto out;
	}
	if (ws == NULL || (a.ws = open(ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    fstat(a.ws, &a.ws_st) < 0) {
		berth_usage_err(err, "apply: cannot open the workspace `%s`: %s", ws != NULL ? ws : "?",
				strerror(errno));
		goto out;
	}
	for (enum pass pass = PASS_REMOVE; pass <= PASS_FILES; pass++) {
		k = 0;
		json_array_foreach(entries, i, e)
			if (pass_of(e) == pass && chosen(&a, e))
				order[k++] = e;
		qsort(order, k, sizeof *order, pass == PASS_REMOVE ? cmp_deep_first : cmp_shallow_first);
		for (i = 0; i < k; i++)
			do_entry(&a, order[i], pass);
	}
	land(&a);
	k = 0;
	json_array_foreach(entries, i, e)
		if (pass_of(e) == PASS_DIRS && chosen(&a, e))
			order[k++] = e;
	dir_modes(&a, order, k);
	res->record =
	    json_pack("{s:O, s:O, s:O, s:O, s:b}", "digest", json_object_get(cs, "digest"), "applied", a.done,
		      "refused", a.refused, "held_back", a.held, "include_guarded", o->include_guarded);
	rc = save_applied(&a, err);
out:
	if (a.ws >= 0)
		close(a.ws);
	free(order);
	free(a.pend);
	json_decref(a.done);
	json_decref(a.refused);
	json_decref(a.held);
	json_decref(a.applied);
	json_decref(a.applied_set);
	json_decref(a.needed);
	berth_review_sel_free(&a.sel);
	json_decref(cs);
	return rc;
}

int berth_review_discard(const char *run_id, char digest[72], struct berth_error *err)
{
	char dir[PATH_MAX], mark[PATH_MAX];
	json_t *cs = berth_review_load(run_id, dir, NULL, err);
	int fd;

	if (cs == NULL)
		return -1;
	snprintf(digest, 72, "%s", json_string_value(json_object_get(cs, "digest")) ?: "");
	json_decref(cs);
	if (berth_rmtree(dir, "the change set", err) < 0)
		return -1;
	/* RUN/discarded: later commands say so instead of "no change set" */
	snprintf(mark, sizeof mark, "%.*s/discarded", (int)(strlen(dir) - strlen("/review")), dir);
	fd = open(mark, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	return 0;
}
