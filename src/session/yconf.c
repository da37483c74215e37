/* SPDX-License-Identifier: MIT */
/*
 * yconf.c - YAML configuration files for sessions (profiles, fleets).
 */
#include "yconf.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/cleanup.h"

int berth_yconf_err(struct berth_error *err, const char *display, const struct berth_ynode *n,
		    const char *key, const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return berth_usage_err(err, "%s:%u:%u: %s%s%s", display, n ? n->line : 1U, n ? n->col : 1U,
			       key ? key : "", key ? ": " : "", msg);
}

struct yconf_ctx {
	const char *display;
	struct berth_error *err;
	char **anchors; /* seen so far */
	size_t n_anchors;
	unsigned dup_line, dup_col; /* the first anchor given twice, or 0 */
	bool oom;
};

/*
 * These files have always been read as libyaml documents, after one pass
 * that refused aliases (a few lines could stand for millions of nodes) and
 * a second document; their messages keep its wording: the bare problem of a
 * syntax error, and "second occurrence" for a repeated anchor, which the
 * document loader only reported once the stream had passed.  Anchors are
 * allowed, tags ignored.  A NUL byte can only come from a `"\0"` escape (raw
 * ones are refused first); it is refused too: every value is used as a C
 * string, and `command: ["bash\0 -c x"]` or `path: "/bin/sh\0junk"` would
 * otherwise run what the reader of the file does not see.
 */
static int yconf_problem(void *opaque, const struct berth_yproblem *p)
{
	struct yconf_ctx *c = opaque;
	const char *d = c->display;

	switch (p->kind) {
	case BERTH_YP_ANCHOR: {
		char **v;
		for (size_t i = 0; i < c->n_anchors; i++)
			if (strcmp(c->anchors[i], p->text) == 0) {
				if (c->dup_line == 0) {
					c->dup_line = p->line;
					c->dup_col = p->col;
				}
				return 1;
			}
		v = realloc(c->anchors, (c->n_anchors + 1) * sizeof *v);
		if (v == NULL || (v[c->n_anchors] = strdup(p->text)) == NULL) {
			if (v != NULL)
				c->anchors = v;
			c->oom = true;
			return -1;
		}
		c->anchors = v;
		c->n_anchors++;
		return 1;
	}
	case BERTH_YP_ALIAS:
		return berth_usage_err(c->err, "%s:%u:%u: aliases are not allowed here", d, p->line, p->col);
	case BERTH_YP_DOCUMENT:
		return berth_usage_err(c->err, "%s:%u:%u: only one YAML document is allowed", d, p->line,
				       p->col);
	case BERTH_YP_NUL:
		return berth_usage_err(c->err,
				       "%s:%u:%u: a value contains a NUL byte (a `\\0` escape); remove it", d,
				       p->line, p->col);
	case BERTH_YP_READER: /* libyaml gives these no position */
		return berth_usage_err(c->err, "%s:1:1: %s", d, p->text ? p->text : "invalid YAML");
	case BERTH_YP_NODES:
		return berth_usage_err(
		    c->err, "%s:%u:%u: more than %d YAML nodes; not a plausible configuration file", d,
		    p->line, p->col, BERTH_YCONF_MAX_NODES);
	case BERTH_YP_DEPTH:
		return berth_usage_err(
		    c->err, "%s:%u:%u: nesting deeper than %d levels; a profile never needs that much", d,
		    p->line, p->col, BERTH_YCONF_MAX_DEPTH);
	case BERTH_YP_SYNTAX:
	case BERTH_YP_TAG:
	default:
		return berth_usage_err(c->err, "%s:%u:%u: %s", d, p->line, p->col,
				       p->text ? p->text : "invalid YAML");
	}
}

int berth_yconf_load(const char *display, const char *buf, size_t len, struct berth_ynode **root,
		     struct berth_error *err)
{
	struct yconf_ctx c = {.display = display, .err = err};
	struct berth_yopts o = {.flags = BERTH_YB_TAGS_ANY,
				.max_depth = BERTH_YCONF_MAX_DEPTH,
				.max_nodes = BERTH_YCONF_MAX_NODES,
				.problem = yconf_problem,
				.opaque = &c};
	int r;

	*root = NULL;
	if (len > BERTH_YCONF_MAX)
		return berth_usage_err(err, "%s: larger than %d bytes", display, BERTH_YCONF_MAX);
	if (memchr(buf, '\0', len) != NULL)
		return berth_usage_err(err, "%s: contains a NUL byte", display);
	r = berth_ynode_build(buf, len, &o, root);
	for (size_t i = 0; i < c.n_anchors; i++)
		free(c.anchors[i]);
	free(c.anchors);
	if (r < 0 || c.oom)
		r = berth_err(err, ENOMEM, "out of memory");
	else if (r == 0 && c.dup_line != 0)
		r = berth_usage_err(err, "%s:%u:%u: second occurrence", display, c.dup_line, c.dup_col);
	else if (r == 0 && (*root == NULL || (*root)->kind != BERTH_YN_MAP))
		r = berth_yconf_err(err, display, *root, NULL, "expected a mapping of keys to values");
	if (r == 0)
		return 0;
	berth_ynode_free(*root);
	*root = NULL;
	return -1;
}

char *berth_yconf_read_file(const char *path, size_t *len, struct berth_error *err)
{
	/* O_NONBLOCK and a regular file only: a FIFO must not hang berth */
	cleanup_close int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	char *buf;
	size_t n = 0;

	if (fd < 0)
		return berth_err(err, errno, "cannot open `%s`", path), err->status = BERTH_EXIT_USAGE, NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		berth_usage_err(err, "`%s` is not a regular file", path);
		berth_err_hint(err, "name a YAML file");
		return NULL;
	}
	buf = malloc(BERTH_YCONF_MAX + 2);
	if (buf == NULL)
		return berth_err(err, ENOMEM, "out of memory"), NULL;
	for (;;) {
		ssize_t r = read(fd, buf + n, BERTH_YCONF_MAX + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			berth_err(err, errno, "cannot read `%s`", path);
			err->status = BERTH_EXIT_USAGE;
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > BERTH_YCONF_MAX) {
			free(buf);
			berth_usage_err(err, "%s: larger than %d bytes", path, BERTH_YCONF_MAX);
			return NULL;
		}
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

const char *berth_yconf_str(const struct berth_ynode *n)
{
	return n != NULL && n->kind == BERTH_YN_SCALAR ? n->s : NULL;
}

int berth_yconf_bool(const struct berth_ynode *n, bool *out)
{
	const char *s = berth_yconf_str(n);

	if (s == NULL)
		return -1;
	if (strcmp(s, "true") == 0)
		*out = true;
	else if (strcmp(s, "false") == 0)
		*out = false;
	else
		return -1;
	return 0;
}

int berth_yconf_strv(const char *display, const char *key, const struct berth_ynode *n, char ***out,
		     size_t *count, struct berth_error *err)
{
	char **v = NULL;
	size_t c = 0;

	*out = NULL;
	*count = 0;
	if (n->kind == BERTH_YN_SCALAR) {
		const char *s = berth_yconf_str(n);
		if (s[0] == '\0' || strchr(s, '\n') != NULL)
			return berth_yconf_err(err, display, n, key, "expected a non-empty one-line string");
		if (berth_strv_push(&v, &c, s) < 0)
			return berth_strv_free(v), berth_err(err, ENOMEM, "out of memory");
	} else if (n->kind == BERTH_YN_SEQ) {
		for (size_t i = 0; i < n->n; i++) {
			const struct berth_ynode *e = n->kids[i];
			const char *s = berth_yconf_str(e);
			if (s == NULL || s[0] == '\0' || strchr(s, '\n') != NULL) {
				berth_strv_free(v);
				return berth_yconf_err(err, display, e, key,
						       "expected a non-empty one-line string");
			}
			if (berth_strv_push(&v, &c, s) < 0)
				return berth_strv_free(v), berth_err(err, ENOMEM, "out of memory");
		}
		if (v == NULL && (v = calloc(1, sizeof *v)) == NULL)
			return berth_err(err, ENOMEM, "out of memory");
	} else {
		return berth_yconf_err(err, display, n, key, "expected a string or a list of strings");
	}
	*out = v;
	*count = c;
	return 0;
}
