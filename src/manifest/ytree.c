/* SPDX-License-Identifier: MIT */
/*
 * ytree.c - a berth.yml as a tree of YAML nodes that remember their line and
 * column, built from libyaml's event API, and its conversion to JSON.
 *
 * The event API (rather than yaml_parser_load) lets the parser refuse what a
 * manifest never needs and an attacker would use: anchors and aliases (the
 * "billion laughs" expansion), tags, more than one document, nesting deeper
 * than BERTH_MANIFEST_MAX_DEPTH, more than BERTH_MANIFEST_MAX_NODES nodes.
 * The tree is therefore at most linear in the input, and recursion over it
 * is bounded.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "../util/cleanup.h"
#include "internal.h"

void ytree_free(struct ynode *n)
{
	if (n == NULL)
		return;
	for (size_t i = 0; i < n->n; i++)
		ytree_free(n->kids[i]);
	free(n->kids);
	free(n->s);
	free(n);
}

static struct ynode *node_new(struct mctx *c, enum ynode_kind kind, const yaml_mark_t *mark)
{
	struct ynode *n = calloc(1, sizeof *n);

	if (n == NULL) {
		c->oom = true;
		return NULL;
	}
	n->kind = kind;
	n->line = (unsigned)mark->line + 1;
	n->col = (unsigned)mark->column + 1;
	return n;
}

static int add_kid(struct mctx *c, struct ynode *parent, struct ynode *kid)
{
	if (parent->n == parent->cap) {
		size_t cap = parent->cap ? parent->cap * 2 : 4;
		struct ynode **kids = realloc(parent->kids, cap * sizeof *kids);
		if (kids == NULL) {
			c->oom = true;
			return -1;
		}
		parent->kids = kids;
		parent->cap = cap;
	}
	parent->kids[parent->n++] = kid;
	return 0;
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

static void parser_problem(struct mctx *c, const yaml_parser_t *p, const char *buf, size_t len)
{
	unsigned line, col;
	const char *problem = p->problem != NULL ? p->problem : "unknown problem";

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		c->oom = true;
		return;
	case YAML_READER_ERROR:
		offset_to_pos(buf, len, p->problem_offset, &line, &col);
		if (p->problem_value != -1)
			diag_pos(c, line, col, false, "invalid YAML: %s (0x%x)", problem,
				 (unsigned)p->problem_value);
		else
			diag_pos(c, line, col, false, "invalid YAML: %s", problem);
		return;
	case YAML_NO_ERROR:
	case YAML_SCANNER_ERROR:
	case YAML_PARSER_ERROR:
	case YAML_COMPOSER_ERROR:
	case YAML_WRITER_ERROR:
	case YAML_EMITTER_ERROR:
	default:
		line = (unsigned)p->problem_mark.line + 1;
		col = (unsigned)p->problem_mark.column + 1;
		if (p->context != NULL)
			diag_pos(c, line, col, false, "invalid YAML: %s (%s started at %u:%u)", problem,
				 p->context, (unsigned)p->context_mark.line + 1,
				 (unsigned)p->context_mark.column + 1);
		else
			diag_pos(c, line, col, false, "invalid YAML: %s", problem);
		return;
	}
}

/* Refuse anchors and tags; returns false when the node must be treated as broken. */
static bool check_props(struct mctx *c, const yaml_mark_t *mark, const yaml_char_t *anchor,
			const yaml_char_t *tag, const char *allowed_tag, bool *forced_str)
{
	bool ok = true;

	if (anchor != NULL) {
		diag_pos(c, (unsigned)mark->line + 1, (unsigned)mark->column + 1, false,
			 "anchors (`&%s`) are not allowed in a manifest; write the value out in full",
			 quote(c, (const char *)anchor, strlen((const char *)anchor)));
		ok = false;
	}
	if (tag != NULL) {
		const char *t = (const char *)tag;
		if (forced_str != NULL && (strcmp(t, "!") == 0 || strcmp(t, "tag:yaml.org,2002:str") == 0)) {
			*forced_str = true;
		} else if (strcmp(t, allowed_tag) != 0) {
			static const char core[] = "tag:yaml.org,2002:";
			bool is_core = strncmp(t, core, sizeof core - 1) == 0;
			if (is_core)
				t += sizeof core - 1;
			diag_pos(c, (unsigned)mark->line + 1, (unsigned)mark->column + 1, false,
				 "tag `%s%s` is not allowed in a manifest; only `!!str` (on a scalar) is; "
				 "fix: remove it",
				 is_core ? "!!" : "", quote(c, t, strlen(t)));
			ok = false;
		}
	}
	return ok;
}

struct ynode *ytree_parse(struct mctx *c, const char *buf, size_t len, bool *ok)
{
	yaml_parser_t p;
	yaml_event_t ev;
	struct ynode *root = NULL, *stack[BERTH_MANIFEST_MAX_DEPTH + 1];
	size_t depth = 0;
	unsigned docs = 0;
	bool done = false;

	*ok = true;
	if (len > BERTH_MANIFEST_MAX_SIZE) {
		diag_pos(c, 1, 1, false, "the file is %zu bytes; a manifest may be at most 1 MiB (%d bytes)",
			 len, BERTH_MANIFEST_MAX_SIZE);
		*ok = false;
		return NULL;
	}
	if (!yaml_parser_initialize(&p)) {
		c->oom = true;
		*ok = false;
		return NULL;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	while (!done) {
		struct ynode *n = NULL;
		bool push = false, forced_str = false;

		if (!yaml_parser_parse(&p, &ev)) {
			parser_problem(c, &p, buf, len);
			*ok = false;
			break;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (++docs > 1) {
				diag_pos(
				    c, (unsigned)ev.start_mark.line + 1, (unsigned)ev.start_mark.column + 1,
				    false,
				    "a manifest is a single YAML document; fix: remove the second document");
				*ok = false;
				done = true;
			}
			break;
		case YAML_SCALAR_EVENT:
			if (!check_props(c, &ev.start_mark, ev.data.scalar.anchor, ev.data.scalar.tag, "",
					 &forced_str))
				*ok = false;
			n = node_new(c, YN_SCALAR, &ev.start_mark);
			if (n == NULL)
				break;
			n->s = malloc(ev.data.scalar.length + 1);
			if (n->s == NULL) {
				c->oom = true;
				break;
			}
			memcpy(n->s, ev.data.scalar.value, ev.data.scalar.length);
			n->s[ev.data.scalar.length] = '\0';
			n->len = ev.data.scalar.length;
			n->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !forced_str;
			break;
		case YAML_ALIAS_EVENT:
			diag_pos(c, (unsigned)ev.start_mark.line + 1, (unsigned)ev.start_mark.column + 1,
				 false,
				 "aliases (`*%s`) are not allowed in a manifest; write the value out in full",
				 quote(c, (const char *)ev.data.alias.anchor,
				       strlen((const char *)ev.data.alias.anchor)));
			*ok = false;
			/* A placeholder keeps mappings in key/value pairs. */
			n = node_new(c, YN_SCALAR, &ev.start_mark);
			if (n != NULL && (n->s = strdup("")) == NULL)
				c->oom = true;
			break;
		case YAML_SEQUENCE_START_EVENT:
			if (!check_props(c, &ev.start_mark, ev.data.sequence_start.anchor,
					 ev.data.sequence_start.tag, "tag:yaml.org,2002:seq", NULL))
				*ok = false;
			n = node_new(c, YN_SEQ, &ev.start_mark);
			push = true;
			break;
		case YAML_MAPPING_START_EVENT:
			if (!check_props(c, &ev.start_mark, ev.data.mapping_start.anchor,
					 ev.data.mapping_start.tag, "tag:yaml.org,2002:map", NULL))
				*ok = false;
			n = node_new(c, YN_MAP, &ev.start_mark);
			push = true;
			break;
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
			if (++c->nodes > BERTH_MANIFEST_MAX_NODES) {
				diag_pos(c, n->line, n->col, false,
					 "the manifest has more than %d YAML nodes; it is not a plausible "
					 "manifest",
					 BERTH_MANIFEST_MAX_NODES);
				ytree_free(n);
				*ok = false;
				done = true;
			} else if (depth == 0 && root != NULL) {
				ytree_free(n); /* cannot happen with one document */
			} else if (depth == 0) {
				root = n;
			} else if (add_kid(c, stack[depth - 1], n) < 0) {
				ytree_free(n);
				n = NULL;
			}
			if (n != NULL && push) {
				if (depth >= BERTH_MANIFEST_MAX_DEPTH) {
					diag_pos(
					    c, n->line, n->col, false,
					    "nesting deeper than %d levels; a manifest never needs that much",
					    BERTH_MANIFEST_MAX_DEPTH);
					*ok = false;
					done = true;
				} else {
					stack[depth++] = n;
				}
			}
		}
		yaml_event_delete(&ev);
		if (c->oom) {
			*ok = false;
			break;
		}
	}
	yaml_parser_delete(&p);
	return root;
}

/* ---- scalars ---- */

bool yscalar_is(const struct ynode *n, const char *s)
{
	return n->kind == YN_SCALAR && n->len == strlen(s) && memcmp(n->s, s, n->len) == 0;
}

static bool all_in(const char *s, const char *set)
{
	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++)
		if (strchr(set, *s) == NULL)
			return false;
	return true;
}

#define DIGITS "0123456789"

static bool is_core_float(const char *s)
{
	const char *p = s;
	bool digits = false;

	if (*p == '+' || *p == '-')
		p++;
	if (strcmp(p, ".inf") == 0 || strcmp(p, ".Inf") == 0 || strcmp(p, ".INF") == 0)
		return true;
	if (p == s && (strcmp(p, ".nan") == 0 || strcmp(p, ".NaN") == 0 || strcmp(p, ".NAN") == 0))
		return true;
	/* [0-9]+ ( . [0-9]* )? | . [0-9]+ , then an optional exponent */
	while (*p >= '0' && *p <= '9') {
		p++;
		digits = true;
	}
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9') {
			p++;
			digits = true;
		}
	}
	if (!digits)
		return false;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return *p == '\0';
}

enum yscalar_type yscalar_type(const struct ynode *n)
{
	const char *s = n->s;

	if (n->kind != YN_SCALAR || !n->plain || strlen(s) != n->len)
		return YT_STR;
	if (*s == '\0' || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 || strcmp(s, "Null") == 0 ||
	    strcmp(s, "NULL") == 0)
		return YT_NULL;
	if (strcmp(s, "true") == 0 || strcmp(s, "True") == 0 || strcmp(s, "TRUE") == 0 ||
	    strcmp(s, "false") == 0 || strcmp(s, "False") == 0 || strcmp(s, "FALSE") == 0)
		return YT_BOOL;
	if (((s[0] == '+' || s[0] == '-') && all_in(s + 1, DIGITS)) || all_in(s, DIGITS))
		return YT_INT;
	if (strncmp(s, "0o", 2) == 0 && all_in(s + 2, "01234567"))
		return YT_INT;
	if (strncmp(s, "0x", 2) == 0 && all_in(s + 2, DIGITS "abcdefABCDEF"))
		return YT_INT;
	if (is_core_float(s))
		return YT_FLOAT;
	return YT_STR;
}

const char *ynode_describe(const struct ynode *n)
{
	switch (n->kind) {
	case YN_SEQ:
		return "a list";
	case YN_MAP:
		return "a mapping";
	case YN_SCALAR:
	default:
		break;
	}
	switch (yscalar_type(n)) {
	case YT_NULL:
		return "null";
	case YT_BOOL:
		return "a boolean";
	case YT_INT:
		return "an integer";
	case YT_FLOAT:
		return "a number";
	case YT_STR:
	default:
		return "a string";
	}
}

/* ---- conversion to JSON ---- */

static json_t *scalar_json(struct mctx *c, const struct ynode *n)
{
	const char *s = n->s;
	json_t *j = NULL;

	switch (yscalar_type(n)) {
	case YT_NULL:
		j = json_null();
		break;
	case YT_BOOL:
		j = json_boolean(s[0] == 't' || s[0] == 'T');
		break;
	case YT_INT: {
		const char *digits = s;
		int base = 10;
		bool neg = false;
		unsigned long long v;
		char *end = NULL;

		if (*digits == '+' || *digits == '-')
			neg = *digits++ == '-';
		if (strncmp(digits, "0o", 2) == 0) {
			base = 8;
			digits += 2;
		} else if (strncmp(digits, "0x", 2) == 0) {
			base = 16;
			digits += 2;
		}
		errno = 0;
		v = strtoull(digits, &end, base);
		if (errno != 0 || *end != '\0' ||
		    v > (neg ? (unsigned long long)INT64_MAX + 1 : (unsigned long long)INT64_MAX)) {
			diag(c, n, "integer `%s` is out of range; JSON integers here must fit in 64 bits",
			     quote(c, s, n->len));
			return NULL;
		}
		j = json_integer(neg ? (json_int_t)(0 - v) : (json_int_t)v);
		break;
	}
	case YT_FLOAT: {
		double d;
		if (strchr(s, 'n') != NULL || strchr(s, 'N') != NULL) { /* .inf, .nan */
			diag(c, n, "`%s` has no JSON form; fix: use a finite number", quote(c, s, n->len));
			return NULL;
		}
		errno = 0;
		d = strtod(s, NULL);
		if (!isfinite(d)) {
			diag(c, n, "number `%s` is out of range", quote(c, s, n->len));
			return NULL;
		}
		j = json_real(d);
		break;
	}
	case YT_STR:
	default:
		j = json_stringn(s, n->len);
		if (j == NULL) {
			/* libyaml hands out valid UTF-8, so this is memory */
			c->oom = true;
			return NULL;
		}
		return j;
	}
	if (j == NULL)
		c->oom = true;
	return j;
}

/*
 * Check the keys of a mapping for a conversion to a JSON object: each a
 * scalar without NUL, no duplicates.  Returns false when key @i is bad
 * (reported) and must be skipped.
 */
static bool json_key_ok(struct mctx *c, const struct ynode *m, size_t i, json_t *seen)
{
	const struct ynode *k = ymap_key(m, i);
	json_t *prev;

	if (k->kind != YN_SCALAR) {
		diag(c, k, "a mapping key must be a string, got %s", ynode_describe(k));
		return false;
	}
	if (strlen(k->s) != k->len) {
		diag(c, k, "a key must not contain a NUL byte");
		return false;
	}
	prev = json_object_get(seen, k->s);
	if (prev != NULL) {
		const struct ynode *first = ymap_key(m, (size_t)json_integer_value(prev));
		size_t old = path_push_key(c, k->s, k->len);
		diag(c, k, "duplicate key `%s` (first at %u:%u); fix: remove one of them",
		     quote(c, k->s, k->len), first->line, first->col);
		path_pop(c, old);
		return false;
	}
	if (json_object_set_new(seen, k->s, json_integer((json_int_t)i)) < 0)
		c->oom = true;
	return true;
}

json_t *yjson(struct mctx *c, const struct ynode *n)
{
	json_t *out = NULL;
	bool bad = false;

	switch (n->kind) {
	case YN_SCALAR:
		return scalar_json(c, n);
	case YN_SEQ:
		out = json_array();
		if (out == NULL) {
			c->oom = true;
			return NULL;
		}
		for (size_t i = 0; i < n->n; i++) {
			size_t old = path_push_index(c, i);
			json_t *v = yjson(c, n->kids[i]);
			path_pop(c, old);
			if (v == NULL || json_array_append_new(out, v) < 0)
				bad = true;
		}
		break;
	case YN_MAP: {
		json_t *seen = json_object();
		out = json_object();
		if (out == NULL || seen == NULL) {
			json_decref(seen);
			json_decref(out);
			c->oom = true;
			return NULL;
		}
		for (size_t i = 0; i < ymap_size(n); i++) {
			const struct ynode *k = ymap_key(n, i);
			if (!json_key_ok(c, n, i, seen)) {
				bad = true;
				continue;
			}
			size_t old = path_push_key(c, k->s, k->len);
			json_t *v = yjson(c, ymap_val(n, i));
			path_pop(c, old);
			if (v == NULL || json_object_set_new(out, k->s, v) < 0)
				bad = true;
		}
		json_decref(seen);
		break;
	}
	default:
		return NULL;
	}
	if (bad) {
		json_decref(out);
		return NULL;
	}
	return out;
}

/* ---- validation of converted values, with positions ---- */

struct yv {
	struct mctx *c;
	const struct ynode *root;
};

/* The YAML node that a path into a value converted by yjson() designates. */
static const struct ynode *ywalk(const struct ynode *n, const struct berth_schema_seg *segs, size_t nsegs,
				 size_t *used)
{
	*used = 0;
	for (size_t i = 0; i < nsegs; i++) {
		const struct ynode *next = NULL;
		if (segs[i].key == NULL && n->kind == YN_SEQ && segs[i].index < n->n) {
			next = n->kids[segs[i].index];
		} else if (segs[i].key != NULL && n->kind == YN_MAP) {
			for (size_t j = 0; j < ymap_size(n) && next == NULL; j++)
				if (yscalar_is(ymap_key(n, j), segs[i].key))
					next = ymap_val(n, j);
		}
		if (next == NULL)
			break;
		n = next;
		(*used)++;
	}
	return n;
}

static int yv_report(void *opaque, const struct berth_schema_seg *segs, size_t n, const char *reason)
{
	struct yv *v = opaque;
	struct mctx *c = v->c;
	size_t used, old = c->plen;
	const struct ynode *at;

	if (diag_full(c)) {
		/* ywalk() is linear in a mapping's size: skip it for lines nobody will see */
		diag_drop(c);
		return 0;
	}
	at = ywalk(v->root, segs, n, &used);

	for (size_t i = 0; i < used; i++) {
		if (segs[i].key == NULL)
			path_push_index(c, segs[i].index);
		else
			path_push_key(c, segs[i].key, strlen(segs[i].key));
	}
	diag(c, at, "%s", reason);
	path_pop(c, old);
	return 0;
}

size_t yvalidate(struct mctx *c, const json_t *schema, const json_t *inst, const struct ynode *yn,
		 unsigned flags)
{
	struct yv v = {c, yn};

	return berth_schema_validate_all(schema, inst, flags, yv_report, &v);
}
