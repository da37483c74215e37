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

int berth_ynode_err(struct berth_error *err, const char *origin, const struct berth_ynode *at, const char *fmt, ...)
{
	char msg[BERTH_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return berth_usage_err(err, "%s:%u:%u: %s", origin, at != NULL ? at->line : 1, at != NULL ? at->col : 1,
			       msg);
}

static int pos_err(struct berth_error *err, const char *origin, const yaml_mark_t *m, const char *what)
{
	return berth_usage_err(err, "%s:%u:%u: %s", origin, (unsigned)m->line + 1, (unsigned)m->column + 1, what);
}

void berth_ynode_free(struct berth_ynode *n)
{
	if (n == NULL)
		return;
	for (size_t i = 0; i < n->n; i++)
		berth_ynode_free(n->kids[i]);
	free(n->kids);
	free(n->s);
	free(n);
}

static int add_kid(struct berth_ynode *parent, struct berth_ynode *kid)
{
	if (parent->n == parent->cap) {
		size_t cap = parent->cap ? parent->cap * 2 : 4;
		struct berth_ynode **kids = realloc(parent->kids, cap * sizeof *kids);
		if (kids == NULL)
			return -1;
		parent->kids = kids;
		parent->cap = cap;
	}
	parent->kids[parent->n++] = kid;
	return 0;
}

/* Anchors and tags are refused: a configuration file never needs them. */
static int check_props(const yaml_event_t *ev, const yaml_char_t *anchor, const yaml_char_t *tag,
		       const char *origin, struct berth_error *err)
{
	char what[256];

	if (anchor != NULL) {
		snprintf(what, sizeof what, "anchors (`&%.40s`) are not allowed; write the value out in full",
			 (const char *)anchor);
		return pos_err(err, origin, &ev->start_mark, what);
	}
	if (tag != NULL) {
		snprintf(what, sizeof what, "tags (`%.60s`) are not allowed; remove it", (const char *)tag);
		return pos_err(err, origin, &ev->start_mark, what);
	}
	return 0;
}

static int parser_err(const yaml_parser_t *p, const char *origin, struct berth_error *err)
{
	char what[512];
	yaml_mark_t m = p->problem_mark;

	if (p->error == YAML_MEMORY_ERROR)
		return berth_err(err, ENOMEM, "%s: parse YAML", origin);
	if (p->error == YAML_READER_ERROR) {
		/* Reader errors carry only a byte offset. */
		snprintf(what, sizeof what, "invalid YAML: %s at byte %zu", p->problem ? p->problem : "bad input",
			 p->problem_offset);
		m.line = 0;
		m.column = 0;
		return pos_err(err, origin, &m, what);
	}
	snprintf(what, sizeof what, "invalid YAML: %s", p->problem != NULL ? p->problem : "unknown problem");
	return pos_err(err, origin, &m, what);
}

int berth_ynode_parse(const char *buf, size_t len, const char *origin, struct berth_ynode **root,
		      struct berth_error *err)
{
	yaml_parser_t p;
	yaml_event_t ev;
	struct berth_ynode *stack[BERTH_YNODE_MAX_DEPTH + 1], *top = NULL;
	size_t depth = 0, nodes = 0;
	unsigned docs = 0;
	int r = 0;
	bool done = false;

	*root = NULL;
	if (len > BERTH_YNODE_MAX_SIZE)
		return berth_usage_err(err, "%s: the file is %zu bytes; at most %d are accepted", origin, len,
				       BERTH_YNODE_MAX_SIZE);
	if (!yaml_parser_initialize(&p))
		return berth_err(err, ENOMEM, "%s: parse YAML", origin);
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	while (!done && r == 0) {
		struct berth_ynode *n = NULL;
		bool push = false;

		if (!yaml_parser_parse(&p, &ev)) {
			r = parser_err(&p, origin, err);
			break;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (++docs > 1)
				r = pos_err(err, origin, &ev.start_mark,
					    "only one YAML document is allowed; remove the second `---`");
			break;
		case YAML_ALIAS_EVENT:
			r = pos_err(err, origin, &ev.start_mark, "aliases are not allowed; write the value out in full");
			break;
		case YAML_SCALAR_EVENT:
			r = check_props(&ev, ev.data.scalar.anchor, ev.data.scalar.tag, origin, err);
			if (r < 0)
				break;
			if (memchr(ev.data.scalar.value, '\0', ev.data.scalar.length) != NULL) {
				r = pos_err(err, origin, &ev.start_mark, "a value contains a NUL character");
				break;
			}
			n = calloc(1, sizeof *n);
			if (n == NULL || (n->s = strndup((const char *)ev.data.scalar.value,
							 ev.data.scalar.length)) == NULL) {
				free(n);
				n = NULL;
				r = berth_err(err, ENOMEM, "%s: parse YAML", origin);
				break;
			}
			n->kind = BERTH_YN_SCALAR;
			n->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT: {
			bool seq = ev.type == YAML_SEQUENCE_START_EVENT;
			r = check_props(&ev, seq ? ev.data.sequence_start.anchor : ev.data.mapping_start.anchor,
					seq ? ev.data.sequence_start.tag : ev.data.mapping_start.tag, origin, err);
			if (r < 0)
				break;
			n = calloc(1, sizeof *n);
			if (n == NULL) {
				r = berth_err(err, ENOMEM, "%s: parse YAML", origin);
				break;
			}
			n->kind = seq ? BERTH_YN_SEQ : BERTH_YN_MAP;
			push = true;
			break;
		}
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			if (depth > 0)
				depth--;
			break;
		case YAML_NO_EVENT:
		case YAML_STREAM_START_EVENT:
		case YAML_DOCUMENT_END_EVENT:
		default:
			break;
		}
		if (n != NULL) {
			n->line = (unsigned)ev.start_mark.line + 1;
			n->col = (unsigned)ev.start_mark.column + 1;
			if (++nodes > BERTH_YNODE_MAX_NODES) {
				char what[128];
				berth_ynode_free(n);
				snprintf(what, sizeof what, "more than %d YAML nodes; not a plausible configuration file",
					 BERTH_YNODE_MAX_NODES);
				r = pos_err(err, origin, &ev.start_mark, what);
			} else if (depth == 0) {
				if (top == NULL)
					top = n;
				else
					berth_ynode_free(n); /* cannot happen with one document */
			} else if (add_kid(stack[depth - 1], n) < 0) {
				berth_ynode_free(n);
				r = berth_err(err, ENOMEM, "%s: parse YAML", origin);
			}
			if (r == 0 && push) {
				if (depth >= BERTH_YNODE_MAX_DEPTH)
					r = pos_err(err, origin, &ev.start_mark,
						    "nested deeper than 16 levels; a configuration file never is");
				else
					stack[depth++] = n;
			}
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	if (r < 0) {
		berth_ynode_free(top);
		return -1;
	}
	*root = top;
	return 0;
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

int berth_ynode_uint(const struct berth_ynode *n, const char *origin, const char *key, uint64_t min, uint64_t max,
		     uint64_t *out, struct berth_error *err)
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
		return berth_ynode_err(err, origin, n, "`%s` must be a string, got %s", key, berth_ynode_describe(n));
	if (is_null(n))
		return berth_ynode_err(err, origin, n, "`%s` must be a string, got nothing (null)", key);
	*out = n->s;
	return 0;
}
