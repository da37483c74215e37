/* SPDX-License-Identifier: MIT */
/*
 * ynode.c - see ynode.h.
 */
#include "ynode.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

/* Along the chain of every node, not down the tree: a session file may nest without limit. */
void berth_ynode_free(struct berth_ynode *root)
{
	while (root != NULL) {
		struct berth_ynode *next = root->next;
		free(root->kids);
		free(root->s);
		free(root);
		root = next;
	}
}

/* ---- the builder ---- */

struct build {
	const struct berth_yopts *o;
	const char *buf;
	size_t len;
	struct berth_ynode *root, *last; /* the chain of every node, for berth_ynode_free */
	struct berth_ynode **stack;      /* the open collections */
	size_t depth, stack_cap, nodes;
	unsigned docs;
	bool problems, stop, oom;
};

/* Hand a problem at @mark to the caller; @fatal problems stop whatever it says. */
static void problem_at(struct build *b, enum berth_yproblem_kind kind, const yaml_mark_t *mark,
		       const char *text, bool fatal)
{
	struct berth_yproblem p = {.kind = kind,
				   .line = (unsigned)mark->line + 1,
				   .col = (unsigned)mark->column + 1,
				   .text = text,
				   .value = -1};

	int r = b->o->problem(b->o->opaque, &p);

	if (r > 0 && !fatal)
		return; /* accepted by the caller */
	b->problems = true;
	if (r < 0 || fatal)
		b->stop = true;
}

/* Line and column of byte @off, for reader errors, which carry only an offset. */
static void offset_to_pos(const char *buf, size_t len, size_t off, unsigned *line, unsigned *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off && i < len; i++) {
		if (buf[i] == '\n') {
			(*line)++;
			*col = 1;
		} else if (((unsigned char)buf[i] & 0xc0) != 0x80) {
			(*col)++;
		}
	}
}

static void parser_problem(struct build *b, const yaml_parser_t *p)
{
	struct berth_yproblem pr = {.kind = BERTH_YP_SYNTAX, .text = p->problem, .value = -1};

	if (p->error == YAML_MEMORY_ERROR) {
		b->oom = true;
		return;
	}
	if (p->error == YAML_READER_ERROR) {
		pr.kind = BERTH_YP_READER;
		pr.offset = p->problem_offset;
		pr.value = p->problem_value;
		offset_to_pos(b->buf, b->len, p->problem_offset, &pr.line, &pr.col);
	} else {
		pr.line = (unsigned)p->problem_mark.line + 1;
		pr.col = (unsigned)p->problem_mark.column + 1;
		pr.context = p->context;
		pr.context_line = (unsigned)p->context_mark.line + 1;
		pr.context_col = (unsigned)p->context_mark.column + 1;
	}
	b->problems = true;
	b->stop = true;
	(void)b->o->problem(b->o->opaque, &pr);
}

/*
 * Anchors and tags.  Returns true when a scalar's tag forces it to a string
 * (BERTH_YB_TAGS_CORE); @core_tag is the one tag a collection may carry.
 */
static bool check_props(struct build *b, const yaml_mark_t *mark, const yaml_char_t *anchor,
			const yaml_char_t *tag, const char *core_tag)
{
	const char *t = (const char *)tag;
	unsigned flags = b->o->flags;

	if (anchor != NULL)
		problem_at(b, BERTH_YP_ANCHOR, mark, (const char *)anchor, false);
	if (b->stop || t == NULL || (flags & BERTH_YB_TAGS_ANY))
		return false;
	if (flags & BERTH_YB_TAGS_CORE) {
		if (core_tag == NULL && (strcmp(t, "!") == 0 || strcmp(t, "tag:yaml.org,2002:str") == 0))
			return true;
		if (core_tag != NULL && strcmp(t, core_tag) == 0)
			return false;
	}
	problem_at(b, BERTH_YP_TAG, mark, t, false);
	return false;
}

static struct berth_ynode *node_new(struct build *b, enum berth_ynode_kind kind, const yaml_mark_t *mark)
{
	struct berth_ynode *n = calloc(1, sizeof *n);

	if (n == NULL) {
		b->oom = true;
		return NULL;
	}
	n->kind = kind;
	n->line = (unsigned)mark->line + 1;
	n->col = (unsigned)mark->column + 1;
	return n;
}

static struct berth_ynode *scalar_new(struct build *b, const yaml_mark_t *mark, const void *s, size_t len)
{
	struct berth_ynode *n = node_new(b, BERTH_YN_SCALAR, mark);

	if (n == NULL)
		return NULL;
	n->s = malloc(len + 1);
	if (n->s == NULL) {
		free(n);
		b->oom = true;
		return NULL;
	}
	memcpy(n->s, s, len);
	n->s[len] = '\0';
	n->len = len;
	return n;
}

static int add_kid(struct build *b, struct berth_ynode *parent, struct berth_ynode *kid)
{
	if (parent->n == parent->cap) {
		size_t cap = parent->cap ? parent->cap * 2 : 4;
		struct berth_ynode **kids = realloc(parent->kids, cap * sizeof *kids);
		if (kids == NULL) {
			b->oom = true;
			return -1;
		}
		parent->kids = kids;
		parent->cap = cap;
	}
	parent->kids[parent->n++] = kid;
	return 0;
}

/* Count @n, hang it in the tree and, for a collection, descend into it. */
static void place(struct build *b, struct berth_ynode *n, const yaml_mark_t *mark, bool push)
{
	if (b->o->max_nodes != 0 && ++b->nodes > b->o->max_nodes) {
		berth_ynode_free(n);
		problem_at(b, BERTH_YP_NODES, mark, NULL, true);
		return;
	}
	if (b->depth == 0 && b->root != NULL) {
		berth_ynode_free(n); /* cannot happen with one document */
		return;
	}
	if (b->depth == 0) {
		b->root = n;
	} else if (add_kid(b, b->stack[b->depth - 1], n) < 0) {
		berth_ynode_free(n);
		return;
	} else {
		b->last->next = n;
	}
	b->last = n;
	if (!push)
		return;
	if (b->o->max_depth != 0 && b->depth >= b->o->max_depth) {
		problem_at(b, BERTH_YP_DEPTH, mark, NULL, true);
		return;
	}
	if (b->depth == b->stack_cap) {
		size_t cap = b->stack_cap ? b->stack_cap * 2 : 16;
		struct berth_ynode **st = realloc(b->stack, cap * sizeof *st);
		if (st == NULL) {
			b->oom = true;
			return;
		}
		b->stack = st;
		b->stack_cap = cap;
	}
	b->stack[b->depth++] = n;
}

static void scalar_event(struct build *b, const yaml_event_t *ev)
{
	const yaml_mark_t *mark = &ev->start_mark;
	bool forced_str = check_props(b, mark, ev->data.scalar.anchor, ev->data.scalar.tag, NULL);
	struct berth_ynode *n;

	if (b->stop)
		return;
	if (!(b->o->flags & BERTH_YB_NUL) &&
	    memchr(ev->data.scalar.value, '\0', ev->data.scalar.length) != NULL) {
		problem_at(b, BERTH_YP_NUL, mark, NULL, false);
		if (b->stop)
			return;
	}
	n = scalar_new(b, mark, ev->data.scalar.value, ev->data.scalar.length);
	if (n == NULL)
		return;
	n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !forced_str;
	place(b, n, mark, false);
}

static void collection_event(struct build *b, const yaml_event_t *ev)
{
	bool seq = ev->type == YAML_SEQUENCE_START_EVENT;
	struct berth_ynode *n;

	check_props(b, &ev->start_mark, seq ? ev->data.sequence_start.anchor : ev->data.mapping_start.anchor,
		    seq ? ev->data.sequence_start.tag : ev->data.mapping_start.tag,
		    seq ? "tag:yaml.org,2002:seq" : "tag:yaml.org,2002:map");
	if (!b->stop && (n = node_new(b, seq ? BERTH_YN_SEQ : BERTH_YN_MAP, &ev->start_mark)) != NULL)
		place(b, n, &ev->start_mark, true);
}

static void event(struct build *b, const yaml_event_t *ev)
{
	const yaml_mark_t *mark = &ev->start_mark;
	struct berth_ynode *n;

	switch (ev->type) {
	case YAML_STREAM_END_EVENT:
		b->stop = true;
		break;
	case YAML_DOCUMENT_START_EVENT:
		if (++b->docs > 1)
			problem_at(b, BERTH_YP_DOCUMENT, mark, NULL, true);
		break;
	case YAML_ALIAS_EVENT:
		problem_at(b, BERTH_YP_ALIAS, mark, (const char *)ev->data.alias.anchor, false);
		/* going on: a placeholder keeps mappings in key/value pairs */
		if (!b->stop && (n = scalar_new(b, mark, "", 0)) != NULL)
			place(b, n, mark, false);
		break;
	case YAML_SCALAR_EVENT:
		scalar_event(b, ev);
		break;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		collection_event(b, ev);
		break;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		if (b->depth > 0)
			b->depth--;
		break;
	case YAML_NO_EVENT:
	case YAML_STREAM_START_EVENT:
	case YAML_DOCUMENT_END_EVENT:
	default:
		break;
	}
}

int berth_ynode_build(const char *buf, size_t len, const struct berth_yopts *o, struct berth_ynode **root)
{
	struct build b = {.o = o, .buf = buf, .len = len};
	yaml_parser_t p;
	yaml_event_t ev;

	*root = NULL;
	if (!yaml_parser_initialize(&p)) {
		errno = ENOMEM;
		return -1;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	while (!b.stop && !b.oom) {
		if (!yaml_parser_parse(&p, &ev)) {
			parser_problem(&b, &p);
			break;
		}
		event(&b, &ev);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	free(b.stack);
	*root = b.root;
	if (b.oom) {
		errno = ENOMEM;
		return -1;
	}
	return b.problems ? 1 : 0;
}

/* ---- configuration files: the first problem is the error ---- */

struct strict {
	const char *origin;
	struct berth_error *err;
};

static int strict_problem(void *opaque, const struct berth_yproblem *p)
{
	struct strict *s = opaque;
	const char *o = s->origin;
	struct berth_error *err = s->err;
	unsigned line = p->line, col = p->col;

	switch (p->kind) {
	case BERTH_YP_SYNTAX:
		return berth_usage_err(err, "%s:%u:%u: invalid YAML: %s", o, line, col,
				       p->text != NULL ? p->text : "unknown problem");
	case BERTH_YP_READER:
		/* reader errors carry only a byte offset */
		return berth_usage_err(err, "%s:1:1: invalid YAML: %s at byte %zu", o,
				       p->text != NULL ? p->text : "bad input", p->offset);
	case BERTH_YP_DOCUMENT:
		return berth_usage_err(err,
				       "%s:%u:%u: only one YAML document is allowed; remove the second `---`",
				       o, line, col);
	case BERTH_YP_ALIAS:
		return berth_usage_err(err, "%s:%u:%u: aliases are not allowed; write the value out in full",
				       o, line, col);
	case BERTH_YP_ANCHOR:
		return berth_usage_err(
		    err, "%s:%u:%u: anchors (`&%.40s`) are not allowed; write the value out in full", o, line,
		    col, p->text);
	case BERTH_YP_TAG:
		return berth_usage_err(err, "%s:%u:%u: tags (`%.60s`) are not allowed; remove it", o, line,
				       col, p->text);
	case BERTH_YP_NUL:
		return berth_usage_err(err, "%s:%u:%u: a value contains a NUL character", o, line, col);
	case BERTH_YP_NODES:
		return berth_usage_err(
		    err, "%s:%u:%u: more than %d YAML nodes; not a plausible configuration file", o, line,
		    col, BERTH_YNODE_MAX_NODES);
	case BERTH_YP_DEPTH:
	default:
		return berth_usage_err(
		    err, "%s:%u:%u: nested deeper than %d levels; a configuration file never is", o, line,
		    col, BERTH_YNODE_MAX_DEPTH);
	}
}

int berth_ynode_parse(const char *buf, size_t len, const char *origin, struct berth_ynode **root,
		      struct berth_error *err)
{
	struct strict s = {origin, err};
	struct berth_yopts o = {.max_depth = BERTH_YNODE_MAX_DEPTH,
				.max_nodes = BERTH_YNODE_MAX_NODES,
				.problem = strict_problem,
				.opaque = &s};
	int r;

	*root = NULL;
	if (len > BERTH_YNODE_MAX_SIZE)
		return berth_usage_err(err, "%s: the file is %zu bytes; at most %d are accepted", origin, len,
				       BERTH_YNODE_MAX_SIZE);
	r = berth_ynode_build(buf, len, &o, root);
	if (r == 0)
		return 0;
	berth_ynode_free(*root);
	*root = NULL;
	if (r < 0)
		return berth_err(err, ENOMEM, "%s: parse YAML", origin);
	return -1;
}

/* ---- reading values ---- */

int berth_ynode_err(struct berth_error *err, const char *origin, const struct berth_ynode *at,
		    const char *fmt, ...)
{
	char msg[BERTH_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return berth_usage_err(err, "%s:%u:%u: %s", origin, at != NULL ? at->line : 1,
			       at != NULL ? at->col : 1, msg);
}

const char *berth_ynode_describe(const struct berth_ynode *n)
{
	switch (n->kind) {
	case BERTH_YN_SEQ:
		return "a list";
	case BERTH_YN_MAP:
		return "a mapping";
	case BERTH_YN_SCALAR:
	default:
		return "a scalar";
	}
}

static bool is_null(const struct berth_ynode *n)
{
	return n->plain && (n->s[0] == '\0' || strcmp(n->s, "~") == 0 || strcmp(n->s, "null") == 0 ||
			    strcmp(n->s, "Null") == 0 || strcmp(n->s, "NULL") == 0);
}

int berth_ynode_bool(const struct berth_ynode *n, const char *origin, const char *key, bool *out,
		     struct berth_error *err)
{
	if (n->kind == BERTH_YN_SCALAR && n->plain) {
		if (strcmp(n->s, "true") == 0 || strcmp(n->s, "True") == 0 || strcmp(n->s, "TRUE") == 0) {
			*out = true;
			return 0;
		}
		if (strcmp(n->s, "false") == 0 || strcmp(n->s, "False") == 0 || strcmp(n->s, "FALSE") == 0) {
			*out = false;
			return 0;
		}
	}
	if (n->kind != BERTH_YN_SCALAR)
		return berth_ynode_err(err, origin, n, "`%s` must be true or false, got %s", key,
				       berth_ynode_describe(n));
	return berth_ynode_err(err, origin, n, "`%s` must be true or false, got `%.60s`", key, n->s);
}

int berth_ynode_uint(const struct berth_ynode *n, const char *origin, const char *key, uint64_t min,
		     uint64_t max, uint64_t *out, struct berth_error *err)
{
	uint64_t v = 0;
	const char *s;

	if (n->kind != BERTH_YN_SCALAR)
		return berth_ynode_err(err, origin, n, "`%s` must be an integer, got %s", key,
				       berth_ynode_describe(n));
	s = n->s;
	if (*s == '\0' || !n->plain)
		goto bad;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
			goto bad;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (v < min || v > max)
		return berth_ynode_err(err, origin, n, "`%s` must be between %llu and %llu, got `%.60s`", key,
				       (unsigned long long)min, (unsigned long long)max, n->s);
	*out = v;
	return 0;
bad:
	return berth_ynode_err(err, origin, n, "`%s` must be a decimal integer, got `%.60s`", key, n->s);
}

int berth_ynode_str(const struct berth_ynode *n, const char *origin, const char *key, const char **out,
		    struct berth_error *err)
{
	if (n->kind != BERTH_YN_SCALAR)
		return berth_ynode_err(err, origin, n, "`%s` must be a string, got %s", key,
				       berth_ynode_describe(n));
	if (is_null(n))
		return berth_ynode_err(err, origin, n, "`%s` must be a string, got nothing (null)", key);
	*out = n->s;
	return 0;
}
