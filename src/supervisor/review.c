/* SPDX-License-Identifier: MIT */
/*
 * review.c - the change set of a --review run (review.h): collected from the
 * review layer when the run has ended, and loaded for diff, apply, discard.
 */
#include "review.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "../policy/trust.h"
#include "../util/cleanup.h"
#include "../util/jcs.h"
#include "../util/rmtree.h"
#include "../util/sha256.h"
#include "../util/sys.h"
#include "review_int.h"
#include "runs.h"

struct collect {
	const struct berth_policy *p;
	char dir[PATH_MAX]; /* RUN/review */
	int blobs;          /* RUN/review/blobs */
	long long t0_ns;
	bool live;                    /* the overlay is mounted: the layer is only read */
	unsigned long long budget;    /* bytes new blobs may take; 0: no bound */
	unsigned long long new_bytes; /* bytes of new blobs written */
	json_t *entries;
	struct berth_review_summary *sum;
	struct berth_error *err;
};

static long long ns_of(const struct timespec *t)
{
	return (long long)t->tv_sec * 1000000000LL + t->tv_nsec;
}

static const char *type_of(mode_t m)
{
	return S_ISREG(m) ? "file" : S_ISDIR(m) ? "dir" : S_ISLNK(m) ? "symlink" : "other";
}

/* The name @name in directory @dir ("" at the top) under a guarded name:
 * a `.git` at any depth, or a trust name (trust.h) of any treatment. */
static const char *guarded_why(const struct berth_policy *p, const char *rel)
{
	char buf[PATH_MAX];
	char *c, *slash;
	const char *why = NULL, *cls = NULL;

	snprintf(buf, sizeof buf, "%s", rel);
	for (c = buf;; c = slash + 1) {
		slash = strchr(c, '/');
		if (slash != NULL)
			*slash = '\0';
		if (strcmp(c, ".git") == 0)
			return "git's own directory (config, hooks)";
		{
			char dir[PATH_MAX];
			snprintf(dir, sizeof dir, "%.*s", c == buf ? 0 : (int)(c - buf - 1), buf);
			if (berth_trust_lookup_path(p, dir, c, &why, &cls) != BERTH_TRUST_NONE)
				return why;
		}
		if (slash == NULL)
			return NULL;
		*slash = '/';
	}
}

/* sha256 of what @fd reads, copied to @copy (>= 0) as it is read. */
static int hash_fd(int fd, int copy, char hex[65], unsigned long long *len, struct berth_error *err)
{
	struct berth_sha256 *c = berth_sha256_new(err);
	char buf[65536];
	ssize_t n;

	*len = 0;
	if (c == NULL)
		return -1;
	while ((n = read(fd, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (copy >= 0 && write(copy, buf, (size_t)n) != n)) {
			berth_err(err, errno != 0 ? errno : EIO, "review: cannot %s a file's bytes",
				  n < 0 ? "read" : "keep");
			berth_sha256_final(c, hex, NULL);
			return -1;
		}
		berth_sha256_update(c, buf, (size_t)n);
		*len += (unsigned long long)n;
	}
	return berth_sha256_final(c, hex, err);
}

/* The host's copy of @name below @dirfd: its state, or json null when there is none. */
static json_t *base_of(int dirfd, const char *name, struct stat *st, struct berth_error *err)
{
	char hex[65] = "";
	json_t *b;

	if (dirfd < 0 || fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) < 0) {
		st->st_mode = 0;
		return json_null();
	}
	if (S_ISREG(st->st_mode)) {
		cleanup_close int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		unsigned long long n;
		if (fd < 0 || hash_fd(fd, -1, hex, &n, err) < 0)
			hex[0] = '\0'; /* unreadable for this caller: compared by its state alone */
		berth_err_clear(err);
	}
	/* times, device and inode as decimal strings: past 2^53, where JCS
	 * (the digest's form) carries no integer exactly */
	char mt[24], ct[24], dev[24], ino[24];
	snprintf(mt, sizeof mt, "%lld", ns_of(&st->st_mtim));
	snprintf(ct, sizeof ct, "%lld", ns_of(&st->st_ctim));
	snprintf(dev, sizeof dev, "%llu", (unsigned long long)st->st_dev);
	snprintf(ino, sizeof ino, "%llu", (unsigned long long)st->st_ino);
	b = json_pack("{s:s, s:I, s:I, s:s, s:s, s:s, s:s, s:I, s:I}", "type", type_of(st->st_mode), "mode",
		      (json_int_t)(st->st_mode & 07777), "size", (json_int_t)st->st_size, "mtime_ns", mt,
		      "ctime_ns", ct, "dev", dev, "ino", ino, "uid", (json_int_t)st->st_uid, "gid",
		      (json_int_t)st->st_gid);
	if (b != NULL && hex[0] != '\0')
		json_object_set_new(b, "sha256", json_string(hex));
	return b;
}

/* One entry: @op on @rel, the host's copy @base (stolen); @changed: that
 * copy changed while the run lasted. */
static json_t *add(struct collect *c, const char *op, const char *rel, json_t *base, bool changed)
{
	const char *why = guarded_why(c->p, rel);
	json_t *e =
	    json_pack("{s:s, s:s, s:o, s:b}", "op", op, "path", rel, "base", base, "host_changed", changed);

	if (e == NULL || json_array_append_new(c->entries, e) < 0) {
		berth_err(c->err, ENOMEM, "out of memory");
		return NULL;
	}
	if (why != NULL) {
		json_object_set_new(e, "guarded", json_string(why));
		c->sum->n_guarded++;
	}
	c->sum->n_entries++;
	return e;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in the directory @fd (not . and ..), sorted; NULL-terminated. */
static char **names_of(int fd, struct berth_error *err)
{
	int dfd = dup(fd);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	char **v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;

	if (d == NULL) {
		if (dfd >= 0)
			close(dfd);
		berth_err(err, errno, "review: cannot read a directory");
		return NULL;
	}
	rewinddir(d);
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (n + 2 > cap) {
			char **nv = realloc(v, (cap = cap * 2 + 16) * sizeof *nv);
			if (nv == NULL)
				goto oom;
			v = nv;
		}
		if ((v[n] = strdup(de->d_name)) == NULL)
			goto oom;
		n++;
	}
	closedir(d);
	if (v == NULL && (v = calloc(1, sizeof *v)) == NULL) {
		berth_err(err, ENOMEM, "out of memory");
		return NULL;
	}
	v[n] = NULL;
	qsort(v, n, sizeof *v, cmp_names);
	return v;
oom:
	closedir(d);
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	berth_err(err, ENOMEM, "out of memory");
	return NULL;
}

static void free_names(char **v)
{
	for (size_t i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/* @rel/@name into @out (PATH_MAX bytes, heap: the walk recurses once a
 * level, so its frames stay small); a path that does not fit is refused,
 * never cut short (a shorter name would be another path). */
static int join(struct collect *c, char *out, const char *rel, const char *name)
{
	int n = snprintf(out, PATH_MAX, "%s%s%s", rel, rel[0] != '\0' ? "/" : "", name);

	if (n < 0 || n >= PATH_MAX)
		return berth_err(c->err, ENAMETOOLONG,
				 "review: a path below `%.80s` is longer than PATH_MAX (%d bytes): the "
				 "change set cannot name it",
				 rel, PATH_MAX);
	return 0;
}

/* The host's @name below @dirfd, deleted by the run: its tree, children
 * first (an entry each). */
static int add_deleted(struct collect *c, int dirfd, const char *rel, const char *name)
{
	cleanup_free char *path = malloc(PATH_MAX);
	struct stat st;
	json_t *base;

	if (path == NULL)
		return berth_err(c->err, ENOMEM, "out of memory");
	if ((base = base_of(dirfd, name, &st, c->err)) == NULL)
		return berth_err(c->err, ENOMEM, "out of memory");
	if (json_is_null(base))
		return 0; /* gone from the host too */
	if (join(c, path, rel, name) < 0) {
		json_decref(base);
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		cleanup_close int sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		char **v = sub >= 0 ? names_of(sub, c->err) : NULL;
		if (v == NULL) {
			json_decref(base);
			return sub < 0 ? berth_err(c->err, errno, "review: cannot read the host's `%s`", path)
				       : -1;
		}
		for (size_t i = 0; v[i] != NULL; i++)
			if (add_deleted(c, sub, path, v[i]) < 0) {
				free_names(v);
				json_decref(base);
				return -1;
			}
		free_names(v);
	}
	/* a directory's ctime follows its entries: its own change is its mode */
	return add(c, "delete", path, base, !S_ISDIR(st.st_mode) && ns_of(&st.st_ctim) >= c->t0_ns) != NULL
		   ? 0
		   : -1;
}

/* The file @name of the upper directory @ufd: its bytes into blobs/, by
 * content.  Bytes already there (an earlier checkpoint's) are not copied
 * again: the file is hashed first, and copied only when blobs/ lacks it. */
static int keep_blob(struct collect *c, int ufd, const char *name, const char *path, char hex[65],
		     unsigned long long *len)
{
	char tmp[64];
	cleanup_close int fd = openat(ufd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	cleanup_close int out = -1;
	struct stat bs;

	if (fd < 0 && errno == EACCES && !c->live && fchmodat(ufd, name, 0600, 0) == 0)
		fd = openat(ufd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC); /* the layer is berth's now */
	if (fd < 0)
		return berth_err(c->err, errno, "review: cannot read `%s` in the review layer", path);
	if (hash_fd(fd, -1, hex, len, c->err) < 0)
		return berth_err_wrap(c->err, "review: `%s`", path);
	c->sum->n_bytes += *len;
	if (fstatat(c->blobs, hex, &bs, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(bs.st_mode) &&
	    (unsigned long long)bs.st_size == *len)
		return 0;
	if (c->budget > 0 && c->new_bytes + *len > c->budget)
		return berth_err(c->err, ENOSPC,
				 "review: the checkpoints would take more than --review-size (%llu bytes) "
				 "with `%s`",
				 c->budget, path);
	if (lseek(fd, 0, SEEK_SET) < 0)
		return berth_err(c->err, errno, "review: cannot read `%s` in the review layer", path);
	snprintf(tmp, sizeof tmp, ".tmp.%ld", (long)getpid());
	out = openat(c->blobs, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return berth_err(c->err, errno, "review: cannot keep `%s`", path);
	c->sum->n_bytes -= *len;
	/* hashed again as copied: what is kept is named by what was read */
	if (hash_fd(fd, out, hex, len, c->err) < 0) {
		unlinkat(c->blobs, tmp, 0);
		return berth_err_wrap(c->err, "review: `%s`", path);
	}
	if (renameat(c->blobs, tmp, c->blobs, hex) < 0)
		return berth_err(c->err, errno, "review: cannot keep `%s`", path);
	c->sum->n_bytes += *len;
	c->new_bytes += *len;
	return 0;
}

static bool is_opaque(int ufd, const char *name)
{
	char proc[PATH_MAX], v[4] = "";
	cleanup_close int fd = openat(ufd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return false;
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	return getxattr(proc, "user.overlay.opaque", v, sizeof v - 1) > 0 && v[0] == 'y';
}

static int walk(struct collect *c, int ufd, int hfd, const struct stat *hdir, const char *rel);

/* One name of the upper directory @ufd (the host's directory @hfd, -1:
 * none or hidden by an opaque directory; @hdir its state). */
static int one(struct collect *c, int ufd, int hfd, const struct stat *hdir, const char *rel,
	       const char *name)
{
	cleanup_free char *path = malloc(PATH_MAX);
	char hex[65];
	struct stat us, hs;
	json_t *base, *e;
	bool changed;

	if (path == NULL)
		return berth_err(c->err, ENOMEM, "out of memory");
	if (join(c, path, rel, name) < 0)
		return -1;
	if (fstatat(ufd, name, &us, AT_SYMLINK_NOFOLLOW) < 0)
		return berth_err(c->err, errno, "review: cannot stat `%s` in the review layer", path);
	/* a whiteout: the run deleted the host's @name */
	if (S_ISCHR(us.st_mode) && us.st_rdev == 0)
		return hfd < 0 ? 0 : add_deleted(c, hfd, rel, name);
	if ((base = base_of(hfd, name, &hs, c->err)) == NULL)
		return berth_err(c->err, ENOMEM, "out of memory");
	changed = json_is_null(base) ? hdir != NULL && ns_of(&hdir->st_mtim) >= c->t0_ns
				     : ns_of(&hs.st_ctim) >= c->t0_ns;
	/* another type: the host's goes first (a directory with its tree) */
	if (!json_is_null(base) && (hs.st_mode & S_IFMT) != (us.st_mode & S_IFMT)) {
		json_decref(base);
		if (add_deleted(c, hfd, rel, name) < 0)
			return -1;
		base = json_null();
		changed = changed || ns_of(&hs.st_ctim) >= c->t0_ns;
	}
	if (S_ISDIR(us.st_mode)) {
		bool op = is_opaque(ufd, name);
		cleanup_close int sub = openat(ufd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		cleanup_close int hsub = -1;
		if (sub < 0 && errno == EACCES && !c->live && fchmodat(ufd, name, 0700, 0) == 0)
			sub = openat(ufd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			json_decref(base);
			return berth_err(c->err, errno, "review: cannot read `%s` in the review layer", path);
		}
		if (json_is_null(base) || (hs.st_mode & 07777) != (us.st_mode & 07777)) {
			e = add(c, json_is_null(base) ? "create" : "mode", path, base,
				json_is_null(base) && changed);
			if (e == NULL)
				return -1;
			json_object_set_new(e, "type", json_string("dir"));
			json_object_set_new(e, "mode", json_integer(us.st_mode & 07777));
		} else {
			json_decref(base);
		}
		if (hfd >= 0 && S_ISDIR(hs.st_mode))
			hsub = openat(hfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (walk(c, sub, op ? -1 : hsub, hsub >= 0 ? &hs : NULL, path) < 0)
			return -1;
		/* an opaque directory hides the host's: what it had, deleted */
		if (op && hsub >= 0) {
			char **v = names_of(hsub, c->err);
			int rc = 0;
			for (size_t i = 0; v != NULL && v[i] != NULL && rc == 0; i++)
				rc = add_deleted(c, hsub, path, v[i]);
			free_names(v);
			return v == NULL ? -1 : rc;
		}
		return 0;
	}
	if (S_ISREG(us.st_mode)) {
		unsigned long long len;
		const char *hsha = json_string_value(json_object_get(base, "sha256"));
		if (keep_blob(c, ufd, name, path, hex, &len) < 0) {
			json_decref(base);
			return -1;
		}
		bool same = hsha != NULL && strcmp(hsha, hex) == 0;
		if (same && (hs.st_mode & 07777) == (us.st_mode & 07777)) {
			json_decref(base); /* copied up, not changed */
			return 0;
		}
		e = add(c, json_is_null(base) ? "create" : same ? "mode" : "modify", path, base, changed);
		if (e == NULL)
			return -1;
		json_object_set_new(e, "type", json_string("file"));
		json_object_set_new(e, "mode", json_integer(us.st_mode & 07777));
		json_object_set_new(e, "size", json_integer((json_int_t)len));
		json_object_set_new(e, "sha256", json_string(hex));
		return 0;
	}
	if (S_ISLNK(us.st_mode)) {
		cleanup_free char *target = malloc(2 * PATH_MAX);
		char *htarget = target != NULL ? target + PATH_MAX : NULL;
		ssize_t n = target != NULL ? readlinkat(ufd, name, target, PATH_MAX - 1) : -1;
		ssize_t hn;
		if (n < 0) {
			json_decref(base);
			return berth_err(c->err, errno, "review: cannot read the link `%s`", path);
		}
		target[n] = '\0';
		if (!json_is_null(base) && (hn = readlinkat(hfd, name, htarget, PATH_MAX - 1)) == n &&
		    memcmp(htarget, target, (size_t)n) == 0) {
			json_decref(base);
			return 0;
		}
		e = add(c, json_is_null(base) ? "create" : "modify", path, base, changed);
		if (e == NULL)
			return -1;
		json_object_set_new(e, "type", json_string("symlink"));
		json_object_set_new(e, "target", json_string(target));
		return 0;
	}
	/* a fifo or a socket: shown, never applied */
	e = add(c, "create", path, base, changed);
	if (e == NULL)
		return -1;
	json_object_set_new(e, "type", json_string("other"));
	json_object_set_new(e, "mode", json_integer(us.st_mode & 07777));
	return 0;
}

static int walk(struct collect *c, int ufd, int hfd, const struct stat *hdir, const char *rel)
{
	char **v = names_of(ufd, c->err);
	int rc = 0;

	if (v == NULL)
		return -1;
	for (size_t i = 0; v[i] != NULL && rc == 0; i++)
		rc = one(c, ufd, hfd, hdir, rel, v[i]);
	free_names(v);
	return rc;
}

int berth_review_write_json(const char *dir, const char *name, const json_t *v, struct berth_error *err)
{
	char path[PATH_MAX];
	char *text = json_dumps(v, JSON_COMPACT);
	int rc;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (text == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	/* whole or not at all, also across a crash (temporary file, fsync, rename) */
	rc = berth_write_atomic(path, text, strlen(text), 0600, BERTH_WRITE_DURABLE | BERTH_WRITE_MODE, err);
	free(text);
	return rc < 0 ? berth_err_wrap(err, "review: cannot write `%s`", path) : 0;
}

int berth_review_digest(const json_t *entries, char out[72], struct berth_error *err)
{
	char *j = berth_jcs(entries, err);
	char hex[65];
	int rc;

	if (j == NULL)
		return -1;
	rc = berth_sha256_hex(j, strlen(j), hex, err);
	free(j);
	if (rc == 0)
		snprintf(out, 72, "sha256:%s", hex);
	return rc;
}

void berth_review_clock(struct timespec *t)
{
	struct timespec c0, pause = {0, 250000};

	clock_gettime(CLOCK_REALTIME_COARSE, &c0);
	for (int i = 0; i < 400; i++) {
		nanosleep(&pause, NULL);
		clock_gettime(CLOCK_REALTIME_COARSE, t);
		if (t->tv_sec != c0.tv_sec || t->tv_nsec != c0.tv_nsec)
			return;
	}
}

/* Returns 0 written, 1 the same change set as @o->same_as (nothing
 * written), -1 with @err filled. */
static int collect_layer(const char *run_id, const struct berth_policy *p, int layer_fd,
			 const struct timespec *started, const struct collect_opts *o,
			 struct berth_review_summary *sum, struct berth_error *err)
{
	struct collect c = {.p = p,
			    .blobs = -1,
			    .t0_ns = ns_of(started),
			    .live = o->live,
			    .budget = o->budget,
			    .sum = sum,
			    .err = err};
	char run[PATH_MAX], blobs[PATH_MAX], cps[PATH_MAX + 16];
	cleanup_close int upper = -1, host = -1;
	struct stat hs;
	json_t *cs = NULL;
	bool made = false;
	int rc = -1;

	*sum = (struct berth_review_summary){0};
	if (berth_run_dir(run_id, true, run, err) < 0)
		return -1;
	snprintf(c.dir, sizeof c.dir, "%s/review", run);
	snprintf(blobs, sizeof blobs, "%s/blobs", c.dir);
	snprintf(cps, sizeof cps, "%s/checkpoints", c.dir);
	if (mkdir(c.dir, 0700) == 0)
		made = true;
	else if (errno != EEXIST)
		return berth_err(err, errno, "review: cannot create `%s`", c.dir);
	if ((mkdir(blobs, 0700) < 0 && errno != EEXIST) ||
	    (strncmp(o->name, "checkpoints/", 12) == 0 && mkdir(cps, 0700) < 0 && errno != EEXIST)) {
		berth_err(err, errno, "review: cannot create a directory in `%s`", c.dir);
		goto out;
	}
	c.blobs = open(blobs, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	upper = openat(layer_fd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	host = open(p->workspace, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	c.entries = json_array();
	if (c.blobs < 0 || upper < 0 || host < 0 || fstat(host, &hs) < 0) {
		berth_err(err, errno, "review: cannot open the %s",
			  c.blobs < 0 ? "change set"
			  : upper < 0 ? "review layer"
				      : "workspace");
		goto out;
	}
	if (c.entries == NULL || walk(&c, upper, host, &hs, "") < 0 ||
	    berth_review_digest(c.entries, sum->digest, err) < 0)
		goto out;
	if (o->entries != NULL)
		*o->entries = json_incref(c.entries);
	if (o->same_as != NULL && strcmp(o->same_as, sum->digest) == 0) {
		rc = 1;
		goto out;
	}
	/* A layer with no block or inode left: a write in the sandbox met ENOSPC, and a
	 * file may be cut short; apply refuses such a change set whole. */
	struct statfs sf;
	sum->full = fstatfs(upper, &sf) == 0 && (sf.f_bavail == 0 || sf.f_ffree == 0);
	cs = json_pack("{s:i, s:s, s:I, s:s, s:O, s:b}", "schema", 1, "workspace", p->workspace, "started_ns",
		       (json_int_t)c.t0_ns, "digest", sum->digest, "entries", c.entries, "layer_full",
		       sum->full);
	if (cs == NULL || (o->extra != NULL && json_object_update(cs, o->extra) < 0)) {
		berth_err(err, ENOMEM, "out of memory");
		goto out;
	}
	rc = berth_review_write_json(c.dir, o->name, cs, err);
out:
	json_decref(cs);
	json_decref(c.entries);
	if (c.blobs >= 0)
		close(c.blobs);
	if (rc < 0 && made) {
		struct berth_error ignore = {0};
		berth_rmtree(c.dir, NULL, &ignore);
	}
	return rc;
}

/* As RLIMIT_NOFILE's soft limit raised to the hard one: the walk holds a
 * descriptor or two a level (PATH_MAX bounds the depth to 2048), and a
 * user's soft limit is often 1024. */
int berth_review_collect_opts(const char *run_id, const struct berth_policy *p, int layer_fd,
			      const struct timespec *started, const struct collect_opts *o,
			      struct berth_review_summary *sum, struct berth_error *err)
{
	struct rlimit saved, all;
	bool raised = getrlimit(RLIMIT_NOFILE, &saved) == 0 && saved.rlim_cur < saved.rlim_max;
	int rc;

	if (raised) {
		all = (struct rlimit){.rlim_cur = saved.rlim_max, .rlim_max = saved.rlim_max};
		raised = setrlimit(RLIMIT_NOFILE, &all) == 0;
	}
	rc = collect_layer(run_id, p, layer_fd, started, o, sum, err);
	if (raised)
		setrlimit(RLIMIT_NOFILE, &saved);
	return rc;
}

int berth_review_collect(const char *run_id, const struct berth_policy *p, int layer_fd,
			 const struct timespec *started, struct berth_review_summary *sum,
			 struct berth_error *err)
{
	struct collect_opts o = {.name = "changes.json"};

	return berth_review_collect_opts(run_id, p, layer_fd, started, &o, sum, err) < 0 ? -1 : 0;
}

json_t *berth_review_load(const char *run_id, char dir[PATH_MAX], json_t **applied, struct berth_error *err)
{
	char run[PATH_MAX], path[PATH_MAX];
	json_error_t je;
	json_t *cs;
	struct stat st;

	if (berth_run_dir(run_id, false, run, err) < 0)
		return NULL;
	snprintf(dir, PATH_MAX, "%s/review", run);
	snprintf(path, sizeof path, "%s/changes.json", dir);
	if (lstat(path, &st) < 0) {
		snprintf(path, sizeof path, "%s/discarded", run);
		if (access(path, F_OK) == 0)
			berth_usage_err(err, "run %s's change set was discarded", run_id);
		else
			berth_usage_err(err,
					"run %s has no change set: it was not a `berth run --review`, or it "
					"did not end",
					run_id);
		return NULL;
	}
	cs = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_array(json_object_get(cs, "entries"))) {
		json_decref(cs);
		berth_err(err, EBADMSG, "review: `%s` is damaged (line %d: %s)", path, je.line, je.text);
		return NULL;
	}
	if (applied != NULL) {
		snprintf(path, sizeof path, "%s/applied.json", dir);
		*applied = json_load_file(path, 0, &je);
		if (!json_is_array(*applied)) {
			json_decref(*applied);
			*applied = json_array();
		}
	}
	return cs;
}

/* A PATH as the change set names paths: relative, no "./" in front, no "/"
 * behind; its length in *@len, 0 for the whole workspace. */
static const char *norm_path(const char *s, size_t *len)
{
	if (strncmp(s, "/workspace/", 11) == 0)
		s += 11;
	else if (strcmp(s, "/workspace") == 0 || strcmp(s, ".") == 0 || strcmp(s, "./") == 0) {
		*len = 0;
		return s;
	}
	while (strncmp(s, "./", 2) == 0)
		s += 2;
	*len = strlen(s);
	while (*len > 0 && s[*len - 1] == '/')
		(*len)--;
	return s;
}

bool berth_review_selected(const char *path, char *const *paths, size_t n)
{
	if (n == 0)
		return true;
	for (size_t i = 0; i < n; i++) {
		size_t l;
		const char *s = norm_path(paths[i], &l);
		if (l == 0)
			return true;
		if (strncmp(path, s, l) == 0 && (path[l] == '\0' || path[l] == '/'))
			return true;
	}
	return false;
}

int berth_review_sel_init(struct berth_review_sel *sel, char *const *paths, size_t n, struct berth_error *err)
{
	*sel = (struct berth_review_sel){.all = n == 0, .set = json_object()};
	if (sel->set == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < n && !sel->all; i++) {
		size_t l;
		const char *s = norm_path(paths[i], &l);
		char *k = l > 0 ? strndup(s, l) : NULL;
		if (l == 0) {
			sel->all = true;
			break;
		}
		if (k == NULL || json_object_set_new(sel->set, k, json_true()) < 0) {
			free(k);
			return berth_err(err, ENOMEM, "out of memory");
		}
		free(k);
	}
	return 0;
}

bool berth_review_sel_has(const struct berth_review_sel *sel, const char *path)
{
	char buf[PATH_MAX];

	if (sel->all)
		return true;
	if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
		return false;
	for (char *slash;; *slash = '\0') {
		if (json_object_get(sel->set, buf) != NULL)
			return true;
		if ((slash = strrchr(buf, '/')) == NULL)
			return false;
	}
}

void berth_review_sel_free(struct berth_review_sel *sel)
{
	json_decref(sel->set);
	sel->set = NULL;
}
