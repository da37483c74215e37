/* SPDX-License-Identifier: MIT */
/*
 * review_diff.c - `berth diff` of a --review run's change set (review.h):
 * a unified diff of text (Myers' O(ND) algorithm, "An O(ND) Difference
 * Algorithm and Its Variations", 1986), a summary of binaries, modes, links
 * and deletions; or the entries as JSON.
 */
#include "review.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"

/* a quoted name: each byte at most 4 (\\ooo), the quotes and a prefix */
#define QLEN (4 * PATH_MAX + 8)

/* Files larger than this, or holding a NUL byte in it, are summarised. */
#define DIFF_TEXT_MAX (8u << 20)
/* Edits past this many make the diff "every line replaced". */
#define DIFF_D_MAX 1024

struct text {
	char *buf;
	size_t len;
	const char **line; /* starts of lines */
	size_t *llen;      /* with their '\n', if any */
	size_t n;
	bool binary, big, missing;
};

static void text_free(struct text *t)
{
	free(t->buf);
	free(t->line);
	free(t->llen);
}

/* Read @fd (-1: an empty file) into @t, split into lines. */
static int text_read(int fd, struct text *t)
{
	struct stat st;
	size_t cap = 0;
	ssize_t r;

	*t = (struct text){0};
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) == 0 && (unsigned long long)st.st_size > DIFF_TEXT_MAX) {
		t->big = true;
		return 0;
	}
	for (;;) {
		if (t->len + 65536 > cap) {
			char *nb = realloc(t->buf, cap = cap * 2 + 65536);
			if (nb == NULL)
				return -1;
			t->buf = nb;
		}
		r = read(fd, t->buf + t->len, cap - t->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		t->len += (size_t)r;
		if (t->len > DIFF_TEXT_MAX) {
			t->big = true;
			return 0;
		}
	}
	if (memchr(t->buf, '\0', t->len) != NULL) {
		t->binary = true;
		return 0;
	}
	for (size_t i = 0; i < t->len; i++)
		t->n += t->buf[i] == '\n';
	t->n += t->len > 0 && t->buf[t->len - 1] != '\n';
	t->line = calloc(t->n + 1, sizeof *t->line);
	t->llen = calloc(t->n + 1, sizeof *t->llen);
	if (t->line == NULL || t->llen == NULL)
		return -1;
	for (size_t i = 0, k = 0, s = 0; i < t->len; i++)
		if (t->buf[i] == '\n' || i + 1 == t->len) {
			t->line[k] = t->buf + s;
			t->llen[k++] = i + 1 - s;
			s = i + 1;
		}
	return 0;
}

static bool same(const struct text *a, size_t i, const struct text *b, size_t j)
{
	return a->llen[i] == b->llen[j] && memcmp(a->line[i], b->line[j], a->llen[i]) == 0;
}

/*
 * The edit script from @a to @b in @ops ('=', '-', '+'; *@n of them, at most
 * a->n + b->n): Myers' greedy forward search, keeping each round's V to
 * walk back.  More than DIFF_D_MAX edits: every line of @a removed, every
 * line of @b added.
 */
static int edits(const struct text *a, const struct text *b, char *ops, size_t *n)
{
	long N = (long)a->n, M = (long)b->n, max = N + M, dmax = max < DIFF_D_MAX ? max : DIFF_D_MAX;
	long off = dmax + 1, w = 2 * dmax + 3, d, k, x, y;
	long *trace = calloc((size_t)(dmax + 1) * (size_t)w, sizeof *trace), *v;
	size_t o = 0;

	if (trace == NULL)
		return -1;
	v = calloc((size_t)w, sizeof *v);
	if (v == NULL) {
		free(trace);
		return -1;
	}
	for (d = 0; d <= dmax; d++) {
		for (k = -d; k <= d; k += 2) {
			x = k == -d || (k != d && v[off + k - 1] < v[off + k + 1]) ? v[off + k + 1]
										   : v[off + k - 1] + 1;
			y = x - k;
			while (x < N && y < M && same(a, (size_t)x, b, (size_t)y))
				x++, y++;
			v[off + k] = x;
			if (x >= N && y >= M)
				goto found;
		}
		memcpy(trace + d * w, v, (size_t)w * sizeof *v);
	}
	/* too many edits: replace everything */
	free(trace);
	free(v);
	for (long i = 0; i < N; i++)
		ops[o++] = '-';
	for (long j = 0; j < M; j++)
		ops[o++] = '+';
	*n = o;
	return 0;
found:
	memcpy(trace + d * w, v, (size_t)w * sizeof *v);
	/* walk back from (N, M), the script reversed into the end of @ops */
	{
		size_t total = (size_t)(N + M), pos = total;
		char *rev = ops;
		x = N;
		y = M;
		for (; d > 0; d--) {
			long *pv = trace + (d - 1) * w, pk, px, py;
			k = x - y;
			pk = k == -d || (k != d && pv[off + k - 1] < pv[off + k + 1]) ? k + 1 : k - 1;
			px = pv[off + pk];
			py = px - pk;
			while (x > px && y > py) {
				rev[--pos] = '=';
				x--, y--;
			}
			rev[--pos] = x == px ? '+' : '-';
			x = px;
			y = py;
		}
		while (x > 0 && y > 0) {
			rev[--pos] = '=';
			x--, y--;
		}
		memmove(ops, ops + pos, total - pos);
		*n = total - pos;
	}
	free(trace);
	free(v);
	return 0;
}

static void put_line(FILE *out, char c, const char *s, size_t l)
{
	fputc(c, out);
	fwrite(s, 1, l, out);
	if (l == 0 || s[l - 1] != '\n')
		fputs("\n\\ No newline at end of file\n", out);
}

/* Hunks of @ops, three lines of context. */
static void hunks(FILE *out, const struct text *a, const struct text *b, const char *ops, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t s, e, ai = 0, bi = 0, last;
		while (i < n && ops[i] == '=')
			i++;
		if (i >= n)
			break;
		/* the hunk: from 3 before this change to 3 after the last change
		 * that is no more than 6 unchanged lines from the next */
		s = i >= 3 ? i - 3 : 0;
		last = i;
		for (e = i; e < n; e++) {
			if (ops[e] != '=')
				last = e;
			else if (e - last > 6)
				break;
		}
		e = last + 4 < n ? last + 4 : n;
		for (size_t j = 0; j < s; j++) {
			ai += ops[j] != '+';
			bi += ops[j] != '-';
		}
		size_t ac = 0, bc = 0;
		for (size_t j = s; j < e; j++) {
			ac += ops[j] != '+';
			bc += ops[j] != '-';
		}
		fprintf(out, "@@ -%zu,%zu +%zu,%zu @@\n", ac > 0 ? ai + 1 : ai, ac, bc > 0 ? bi + 1 : bi, bc);
		for (size_t j = s; j < e; j++) {
			if (ops[j] == '=') {
				put_line(out, ' ', a->line[ai], a->llen[ai]);
				ai++, bi++;
			} else if (ops[j] == '-') {
				put_line(out, '-', a->line[ai], a->llen[ai]);
				ai++;
			} else {
				put_line(out, '+', b->line[bi], b->llen[bi]);
				bi++;
			}
		}
		i = e;
	}
}

static long long jint(const json_t *o, const char *k)
{
	return (long long)json_integer_value(json_object_get(o, k));
}

/* @pre@s as a diff names it (in @buf, @len bytes): as it is, or, when it
 * holds a control byte, a quote or a backslash, quoted as git does
 * ("a/x\nb"), so that a name the agent chose cannot forge a line of the
 * diff or drive the reader's terminal. */
static const char *quoted(char *buf, size_t len, const char *pre, const char *s)
{
	size_t o = 0;
	bool plain = true;

	for (const unsigned char *c = (const unsigned char *)s; *c != '\0' && plain; c++)
		plain = *c >= 0x20 && *c != 0x7f && *c != '"' && *c != '\\';
	if (plain) {
		snprintf(buf, len, "%s%s", pre, s);
		return buf;
	}
	o = (size_t)snprintf(buf, len, "\"%s", pre);
	for (const unsigned char *c = (const unsigned char *)s; *c != '\0' && o + 6 < len; c++) {
		const char *esc = *c == '\n'   ? "\\n"
				  : *c == '\t' ? "\\t"
				  : *c == '"'  ? "\\\""
				  : *c == '\\' ? "\\\\"
					       : NULL;
		if (esc != NULL)
			o += (size_t)snprintf(buf + o, len - o, "%s", esc);
		else if (*c < 0x20 || *c == 0x7f)
			o += (size_t)snprintf(buf + o, len - o, "\\%03o", *c);
		else
			buf[o++] = (char)*c;
	}
	snprintf(buf + o, len - o, "\"");
	return buf;
}

/* The unified diff of @e, its new bytes in @blob (-1: none) against the
 * host's copy @host (-1: none). */
static int text_diff(FILE *out, const char *path, int host, int blob, const json_t *e)
{
	struct text a = {0}, b = {0};
	char *ops = NULL;
	cleanup_free char *qa = NULL;
	char *qb = NULL;
	size_t n = 0;
	int rc = -1;

	if (text_read(host, &a) < 0 || text_read(blob, &b) < 0)
		goto out;
	if ((qa = malloc(2 * QLEN)) == NULL)
		goto out;
	qb = qa + QLEN;
	if (host >= 0)
		quoted(qa, QLEN, "a/", path);
	else
		snprintf(qa, QLEN, "/dev/null");
	if (blob >= 0)
		quoted(qb, QLEN, "b/", path);
	else
		snprintf(qb, QLEN, "/dev/null");
	if (a.binary || b.binary || a.big || b.big) {
		const json_t *base = json_object_get(e, "base");
		fprintf(out, "%s %s and %s differ (%lld -> %lld bytes, sha256 %s)\n",
			a.binary || b.binary ? "Binary files" : "Files too large to show", qa, qb,
			json_is_object(base) ? jint(base, "size") : 0, blob >= 0 ? jint(e, "size") : 0,
			blob >= 0 ? json_string_value(json_object_get(e, "sha256")) : "-");
		rc = 0;
		goto out;
	}
	if ((ops = malloc(a.n + b.n + 1)) == NULL || edits(&a, &b, ops, &n) < 0)
		goto out;
	fprintf(out, "--- %s\n+++ %s\n", qa, qb);
	hunks(out, &a, &b, ops, n);
	rc = 0;
out:
	free(ops);
	text_free(&a);
	text_free(&b);
	return rc;
}

static unsigned long kind_bits(const char *type)
{
	return type == NULL                   ? 0100000
	       : strcmp(type, "dir") == 0     ? 040000
	       : strcmp(type, "symlink") == 0 ? 0120000
					      : 0100000;
}

/* A created file with the bytes of a deleted one: the overlay shows a
 * rename as both (review.h); said, both entries stay. */
static void rename_of(FILE *out, const json_t *e, const json_t *gone)
{
	const char *sha = json_string_value(json_object_get(e, "sha256"));
	const char *from = sha != NULL ? json_string_value(json_object_get(gone, sha)) : NULL;

	if (from != NULL && strcmp(json_string_value(json_object_get(e, "op")), "create") == 0) {
		cleanup_free char *q = malloc(2 * QLEN);
		if (q != NULL)
			fprintf(out, "rename from %s\nrename to %s\n", quoted(q, QLEN, "", from),
				quoted(q + QLEN, QLEN, "", json_string_value(json_object_get(e, "path"))));
	}
}

static int one(FILE *out, const char *dir, int ws, const json_t *e, const json_t *applied, const json_t *gone)
{
	const char *path = json_string_value(json_object_get(e, "path"));
	const char *op = json_string_value(json_object_get(e, "op"));
	const char *type = json_string_value(json_object_get(e, "type"));
	const json_t *base = json_object_get(e, "base");
	const char *btype = json_string_value(json_object_get(base, "type"));
	const char *guard = json_string_value(json_object_get(e, "guarded"));
	cleanup_close int host = -1, blob = -1;
	size_t i;
	json_t *v;

	{
		cleanup_free char *q = malloc(2 * QLEN);
		if (q == NULL)
			return -1;
		fprintf(out, "diff --berth %s %s\n", quoted(q, QLEN, "a/", path),
			quoted(q + QLEN, QLEN, "b/", path));
	}
	if (guard != NULL)
		fprintf(out, "guarded: %s (applied only with --include-guarded)\n", guard);
	if (json_is_true(json_object_get(e, "host_changed")))
		fprintf(out,
			"host changed: the host's copy changed while the run lasted (apply refuses it)\n");
	json_array_foreach(applied, i, v) {
		size_t ol = strlen(op);
		const char *k = json_string_value(v);
		if (k != NULL && strncmp(k, op, ol) == 0 && k[ol] == ' ' && strcmp(k + ol + 1, path) == 0)
			fprintf(out, "applied\n");
	}
	if (strcmp(op, "delete") == 0) {
		fprintf(out, "deleted %s mode %lo\n", btype != NULL ? btype : "file",
			kind_bits(btype) | (unsigned long)jint(base, "mode"));
		if (btype == NULL || strcmp(btype, "file") != 0)
			return 0;
		host = openat(ws, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		return host < 0 ? 0 : text_diff(out, path, host, -1, e);
	}
	if (strcmp(op, "create") == 0) {
		fprintf(out, "new %s mode %lo\n", type, kind_bits(type) | (unsigned long)jint(e, "mode"));
		rename_of(out, e, gone);
	} else if (strcmp(op, "mode") == 0 ||
		   (json_is_object(base) && jint(base, "mode") != jint(e, "mode") && type != NULL &&
		    strcmp(type, "symlink") != 0))
		fprintf(out, "old mode %lo\nnew mode %lo\n",
			kind_bits(btype) | (unsigned long)jint(base, "mode"),
			kind_bits(type) | (unsigned long)jint(e, "mode"));
	if (type != NULL && strcmp(type, "symlink") == 0) {
		cleanup_free char *q = malloc(QLEN);
		if (q == NULL)
			return -1;
		fprintf(out, "symbolic link -> %s\n",
			quoted(q, QLEN, "", json_string_value(json_object_get(e, "target"))));
		return 0;
	}
	if (type == NULL || strcmp(type, "file") != 0 || strcmp(op, "mode") == 0)
		return 0;
	{
		char b[PATH_MAX];
		snprintf(b, sizeof b, "%s/blobs/%s", dir, json_string_value(json_object_get(e, "sha256")));
		if ((blob = open(b, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			return -1;
	}
	if (btype != NULL && strcmp(btype, "file") == 0)
		host = openat(ws, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	return text_diff(out, path, host, blob, e);
}

int berth_review_diff(const char *run_id, char *const *paths, size_t n, bool json, FILE *out,
		      struct berth_error *err)
{
	char dir[PATH_MAX];
	json_t *applied = NULL, *cs = berth_review_load(run_id, dir, &applied, err), *e;
	cleanup_close int ws = -1;
	struct berth_review_sel chosen;
	size_t i;
	int rc = 0;

	if (cs == NULL)
		return -1;
	if (berth_review_sel_init(&chosen, paths, n, err) < 0) {
		berth_review_sel_free(&chosen);
		json_decref(applied);
		json_decref(cs);
		return -1;
	}
	if (json) {
		json_t *sel = json_array();
		json_array_foreach(json_object_get(cs, "entries"), i, e)
			if (berth_review_sel_has(&chosen, json_string_value(json_object_get(e, "path"))))
				json_array_append(sel, e);
		json_t *o = json_pack("{s:s, s:O, s:O, s:o, s:O}", "run_id", run_id, "workspace",
				      json_object_get(cs, "workspace"), "digest",
				      json_object_get(cs, "digest"), "entries", sel, "applied", applied);
		if (o == NULL || json_dumpf(o, out, JSON_INDENT(2) | JSON_SORT_KEYS) < 0)
			rc = berth_err(err, ENOMEM, "diff: cannot print the change set");
		else
			fputc('\n', out);
		json_decref(o);
		json_decref(applied);
		json_decref(cs);
		berth_review_sel_free(&chosen);
		return rc;
	}
	ws = open(json_string_value(json_object_get(cs, "workspace")), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* the deleted files by their bytes, for renames */
	json_t *gone = json_object();
	json_array_foreach(json_object_get(cs, "entries"), i, e) {
		const json_t *b = json_object_get(e, "base");
		const char *sha = json_string_value(json_object_get(b, "sha256"));
		if (sha != NULL && json_integer_value(json_object_get(b, "size")) > 0 &&
		    strcmp(json_string_value(json_object_get(e, "op")), "delete") == 0)
			json_object_set(gone, sha, json_object_get(e, "path"));
	}
	json_array_foreach(json_object_get(cs, "entries"), i, e) {
		const char *path = json_string_value(json_object_get(e, "path"));
		if (!berth_review_sel_has(&chosen, path))
			continue;
		if (one(out, dir, ws, e, applied, gone) < 0) {
			rc = berth_err(err, EIO,
				       "diff: the bytes of `%s` are missing from the change set in `%s`",
				       path, dir);
			break;
		}
	}
	json_decref(gone);
	json_decref(applied);
	json_decref(cs);
	berth_review_sel_free(&chosen);
	return rc;
}
