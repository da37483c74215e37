/* SPDX-License-Identifier: MIT */
/*
 * home_seed.c - an agent profile's seeded home and berth's preamble
 * (home_seed.h, docs/sessions.md "Seeded home").
 */
#include "home_seed.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/sys.h"

char *berth_home_seed_preamble(const struct berth_policy *pol, bool persistent)
{
	char *buf = NULL, *hosts = NULL;
	size_t hlen = 0;
	FILE *h = open_memstream(&hosts, &hlen);
	const char *net;
	int n;

	if (h == NULL)
		return NULL;
	if (pol->network == BERTH_NET_NONE) {
		net = "none: there is no network at all (no name resolves, no connection is made).";
	} else if (pol->network == BERTH_NET_HOST) {
		net = "the host's own network (not filtered by berth).";
	} else if (pol->n_allow_hosts == 0) {
		net = "only through berth's egress proxy, and it allows no host: every request is refused.";
	} else {
		net =
		    "only through berth's egress broker, which lets you reach these hosts and no other, "
		    "through the proxy ($HTTPS_PROXY, $HTTP_PROXY, $ALL_PROXY) or directly (only these names "
		    "resolve):";
		for (size_t i = 0; i < pol->n_allow_hosts && i < BERTH_PREAMBLE_HOSTS; i++)
			fprintf(h, "  - %s\n", pol->allow_hosts[i]);
		if (pol->n_allow_hosts > BERTH_PREAMBLE_HOSTS)
			fprintf(h, "  - and %zu more\n", pol->n_allow_hosts - BERTH_PREAMBLE_HOSTS);
	}
	if (fclose(h) != 0) {
		free(hosts);
		return NULL;
	}
	n = asprintf(
	    &buf,
	    BERTH_PREAMBLE_BEGIN
	    "\n"
	    "# You are running in a berth sandbox\n"
	    "\n"
	    "- /workspace is your writable folder: the project. Work there.\n"
	    "- $HOME is yours too (%s); /tmp is a private scratch space. Everything else is read-only or "
	    "absent, and the host's own home directory and files are not visible.\n"
	    "- Network: %s\n%s"
	    "- A refusal is the sandbox's, not a bug to work around: EACCES or EROFS on a write outside "
	    "/workspace, $HOME and /tmp; HTTP 403 from the proxy, or a connection reset or refused, for a "
	    "host not "
	    "listed above; a host name that does not resolve; a process limit. Do not try to get around it "
	    "(other hosts, other "
	    "tools, other paths): say what you needed and why, and go on with what you can "
	    "do.\n" BERTH_PREAMBLE_END "\n",
	    persistent ? "kept from one session of this profile to the next"
		       : "a fresh one, gone when the session ends",
	    net, hosts != NULL ? hosts : "");
	free(hosts);
	return n < 0 ? NULL : buf;
}

static int add_file(struct berth_home_seed *s, const char *path, const char *data, size_t len,
		    const char *block, enum berth_seed_kind kind)
{
	struct berth_seed_file *f = &s->files[s->n++];

	f->kind = kind;
	f->path = strdup(path);
	f->block = block != NULL ? strdup(block) : NULL;
	f->len = len + (block != NULL ? strlen(block) + (len > 0 ? 1 : 0) : 0);
	f->data = malloc(f->len + 1);
	if (f->path == NULL || f->data == NULL || (block != NULL && f->block == NULL))
		return -1;
	if (block != NULL)
		snprintf(f->data, f->len + 1, "%s%s%.*s", block, len > 0 ? "\n" : "", (int)len, data);
	else
		memcpy(f->data, data, len);
	f->data[f->len] = '\0';
	return 0;
}

static bool is_json_path(const char *p)
{
	size_t n = strlen(p);
	return n >= 5 && strcmp(p + n - 5, ".json") == 0;
}

int berth_home_seed_build(const struct berth_profile *p, const struct berth_policy *pol, bool persistent,
			  struct berth_home_seed *out, struct berth_error *err)
{
	cleanup_free char *block = NULL;
	bool placed = p->instructions == NULL;

	memset(out, 0, sizeof *out);
	if (p->n_home == 0 && p->instructions == NULL)
		return 0;
	if (p->instructions != NULL && (block = berth_home_seed_preamble(pol, persistent)) == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	out->files = calloc(p->n_home + 1, sizeof *out->files);
	out->view = calloc(p->n_home + 1, sizeof *out->view);
	if (out->files == NULL || out->view == NULL)
		goto oom;
	for (size_t i = 0; i < p->n_home; i++) {
		const struct berth_profile_file *pf = &p->home[i];
		bool instr = p->instructions != NULL && strcmp(pf->path, p->instructions) == 0;
		if (add_file(out, pf->path, pf->data, pf->len, instr ? block : NULL,
			     instr                    ? BERTH_SEED_BLOCK
			     : is_json_path(pf->path) ? BERTH_SEED_JSON
						      : BERTH_SEED_CREATE) < 0)
			goto oom;
		placed |= instr;
	}
	if (!placed && add_file(out, p->instructions, "", 0, block, BERTH_SEED_BLOCK) < 0)
		goto oom;
	for (size_t i = 0; i < out->n; i++)
		out->view[i] =
		    (struct berth_home_file){out->files[i].path, out->files[i].data, out->files[i].len};
	return 0;
oom:
	berth_home_seed_free(out);
	return berth_err(err, ENOMEM, "out of memory");
}

void berth_home_seed_free(struct berth_home_seed *s)
{
	for (size_t i = 0; s->files != NULL && i < s->n; i++) {
		free(s->files[i].path);
		free(s->files[i].data);
		free(s->files[i].block);
	}
	free(s->files);
	free(s->view);
	memset(s, 0, sizeof *s);
}

/* ------------------------------------------------ the persistent home */

struct pass {
	bool dry;
	berth_seed_note_fn note;
	void *arg;
};

static void say(const struct pass *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const struct pass *ps, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (ps->note != NULL)
		ps->note(ps->arg, line);
}

/*
 * The directory holding @rel's last component, opened one component at a
 * time from @home_fd, never through a symbolic link; missing directories
 * made 0700 (unless dry).  Returns its fd; -2 when (dry) a directory is
 * missing, so the file would be new; -3 after a note (skip the file); -1
 * with @err (a failed mkdir).
 */
static int open_parent(int home_fd, const char *rel, const struct pass *ps, struct berth_error *err)
{
	char buf[PATH_MAX], *comp = buf, *slash;
	int dfd = dup(home_fd);

	if (dfd < 0)
		return berth_err(err, errno, "dup");
	snprintf(buf, sizeof buf, "%s", rel);
	while ((slash = strchr(comp, '/')) != NULL) {
		*slash = '\0';
		int next = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT) {
			if (ps->dry) {
				close(dfd);
				return -2;
			}
			if (mkdirat(dfd, comp, 0700) < 0 && errno != EEXIST) {
				int e = errno;
				close(dfd);
				return berth_err(err, e, "cannot create `~/%s` in the persistent home", buf);
			}
			next = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (next < 0) {
			int e = errno;
			close(dfd);
			say(ps, "persistent home: `~/%s` is %s: not followed; `~/%s` not seeded", buf,
			    e == ELOOP || e == ENOTDIR ? "a symbolic link or not a directory" : strerror(e),
			    rel);
			return -3;
		}
		close(dfd);
		dfd = next;
		*slash = '/';
		comp = slash + 1;
	}
	return dfd;
}

static int write_all(int fd, const char *data, size_t len)
{
	for (size_t off = 0; off < len;) {
		ssize_t n = write(fd, data + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		off += (size_t)n;
	}
	return 0;
}

/* A new file @leaf in @dfd: never an existing name, nor a link; whole or not
 * at all (berth_write_atomic_at: temporary file, fsync, link(2)). */
static int create_file(int dfd, const char *leaf, const char *rel, const char *data, size_t len,
		       struct berth_error *err)
{
	char shown[PATH_MAX];

	snprintf(shown, sizeof shown, "~/%s", rel);
	int r = berth_write_atomic_at(dfd, leaf, shown, data, len, 0600,
				      BERTH_WRITE_DURABLE | BERTH_WRITE_EXCL, err);
	if (r == 1)
		berth_err(err, EEXIST, "cannot write `%s`", shown);
	if (r != 0)
		return berth_err_wrap(err, "persistent home");
	return 0;
}

/* @leaf replaced by @data: written beside it and renamed over it, so that
 * the old inode (and any hard link to it) is left as it was. */
static int replace_file(int dfd, const char *leaf, const char *rel, const struct stat *old, const char *data,
			size_t len, struct berth_error *err)
{
	char tmp[64];
	int fd, e;

	snprintf(tmp, sizeof tmp, ".berth-seed.%ld", (long)getpid());
	unlinkat(dfd, tmp, 0);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, old->st_mode & 0777);
	if (fd < 0)
		return berth_err(err, errno, "cannot write beside `~/%s` in the persistent home", rel);
	if (fchown(fd, old->st_uid, old->st_gid) < 0) {
		/* not ours to give away: the caller's own then */
	}
	if (write_all(fd, data, len) < 0 || fsync(fd) < 0 || renameat(dfd, tmp, dfd, leaf) < 0) {
		e = errno ? errno : EIO;
		close(fd);
		unlinkat(dfd, tmp, 0);
		return berth_err(err, e, "cannot update `~/%s` in the persistent home", rel);
	}
	close(fd);
	return 0;
}

/* Read @fd (a regular file of @st) whole, at most @max bytes. */
static char *read_small(int fd, const struct stat *st, size_t max, size_t *len)
{
	char *buf;
	size_t n = 0;

	if ((uint64_t)st->st_size > max)
		return NULL;
	buf = malloc((size_t)st->st_size + 1);
	if (buf == NULL)
		return NULL;
	for (;;) {
		ssize_t r = read(fd, buf + n, (size_t)st->st_size - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n == (size_t)st->st_size)
			break;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* Add to @dst what @src has and @dst lacks, objects key by key. */
static bool merge_missing(json_t *dst, json_t *src)
{
	const char *k;
	json_t *v;
	bool changed = false;

	json_object_foreach(src, k, v) {
		json_t *have = json_object_get(dst, k);
		if (have == NULL) {
			json_object_set_new(dst, k, json_deep_copy(v));
			changed = true;
		} else if (json_is_object(have) && json_is_object(v)) {
			changed |= merge_missing(have, v);
		}
	}
	return changed;
}

/* The merged text of an existing file, NULL when nothing changes (or it is
 * not what the seed can merge into: said in a note). */
static char *merged(const struct berth_seed_file *f, const char *old, size_t old_len, const struct pass *ps,
		    size_t *len)
{
	if (f->kind == BERTH_SEED_JSON) {
		json_error_t je;
		json_t *have = json_loadb(old, old_len, 0, &je), *want = json_loadb(f->data, f->len, 0, &je);
		char *out = NULL;
		if (!json_is_object(have)) {
			say(ps, "persistent home: `~/%s` is not a JSON object: left as it is, not seeded",
			    f->path);
		} else if (json_is_object(want) && merge_missing(have, want)) {
			out = json_dumps(have, JSON_INDENT(2));
			if (out != NULL) {
				size_t n = strlen(out);
				char *nl = realloc(out, n + 2);
				if (nl != NULL) {
					out = nl;
					out[n] = '\n';
					out[n + 1] = '\0';
				}
				*len = strlen(out);
			}
		}
		json_decref(have);
		json_decref(want);
		return out;
	}
	/* BERTH_SEED_BLOCK: berth's block replaced where it is, else first. */
	const char *b = strstr(old, BERTH_PREAMBLE_BEGIN),
		   *e = b != NULL ? strstr(b, BERTH_PREAMBLE_END) : NULL;
	size_t blen = strlen(f->block), pre = 0;
	char *out = NULL;
	if (b != NULL && e != NULL) {
		e += strlen(BERTH_PREAMBLE_END);
		if (*e == '\n')
			e++;
		if ((size_t)(e - b) == blen && memcmp(b, f->block, blen) == 0)
			return NULL; /* the same block: nothing to write */
		pre = (size_t)(b - old);
	} else {
		b = NULL;
		e = old;
	}
	size_t post = old_len - (size_t)(e - old);
	if (asprintf(&out, "%.*s%s%s%.*s", (int)pre, old, f->block, b == NULL && post > 0 ? "\n" : "",
		     (int)post, e) < 0)
		return NULL;
	*len = strlen(out);
	return out;
}

static int seed_one(int home_fd, const struct berth_seed_file *f, const struct pass *ps,
		    struct berth_error *err)
{
	const char *leaf = strrchr(f->path, '/') ? strrchr(f->path, '/') + 1 : f->path;
	int dfd = open_parent(home_fd, f->path, ps, err), fd, rc = 0;
	struct stat st;

	if (dfd == -2 || dfd == -3)
		return 0; /* dry: a directory on the way is missing (the file would be new); or skipped */
	if (dfd < 0)
		return -1;
	fd = openat(dfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		if (!ps->dry)
			rc = create_file(dfd, leaf, f->path, f->data, f->len, err);
	} else if (fd < 0) {
		say(ps, "persistent home: `~/%s` is %s: not followed, not seeded", f->path,
		    errno == ELOOP ? "a symbolic link" : strerror(errno));
	} else if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		say(ps, "persistent home: `~/%s` is not a regular file: left as it is, not seeded", f->path);
	} else if (f->kind != BERTH_SEED_CREATE) {
		size_t max = f->kind == BERTH_SEED_JSON ? BERTH_SEED_JSON_MAX : BERTH_SEED_TEXT_MAX, len = 0,
		       nlen = 0;
		cleanup_free char *old = read_small(fd, &st, max, &len);
		cleanup_free char *text = NULL;
		if (old == NULL)
			say(ps,
			    "persistent home: `~/%s` is larger than %zu bytes (or unreadable): left as it "
			    "is, not seeded",
			    f->path, max);
		else if ((text = merged(f, old, len, ps, &nlen)) != NULL && !ps->dry)
			rc = replace_file(dfd, leaf, f->path, &st, text, nlen, err);
	}
	if (fd >= 0)
		close(fd);
	close(dfd);
	return rc;
}

int berth_home_seed_persist(const struct berth_home_seed *s, const char *home_dir, bool dry,
			    berth_seed_note_fn note, void *arg, struct berth_error *err)
{
	struct pass ps = {.dry = dry, .note = note, .arg = arg};
	cleanup_close int home_fd = -1;

	if (s->n == 0)
		return 0;
	home_fd = open(home_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (home_fd < 0) {
		if (dry && errno == ENOENT)
			return 0; /* made by launch: every file will be new */
		return berth_err(err, errno, "cannot open the persistent home `%s`", home_dir);
	}
	for (size_t i = 0; i < s->n; i++)
		if (seed_one(home_fd, &s->files[i], &ps, err) < 0)
			return -1;
	return 0;
}
