/* SPDX-License-Identifier: MIT */
/*
 * ytree.c - a berth.yml as a tree of YAML nodes (util/ynode.h's builder, with
 * the manifest's limits and wording), the core-schema typing of its scalars,
 * and its conversion to JSON.
 *
 * The builder refuses what a manifest never needs and an attacker would use:
 * anchors and aliases (the "billion laughs" expansion), tags but `!!str`, more
 * than one document, nesting deeper than BERTH_MANIFEST_MAX_DEPTH, more than
 * BERTH_MANIFEST_MAX_NODES nodes.  The tree is therefore at most linear in the
 * input, and recursion over it is bounded.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"
#include "internal.h"

/* The manifest's wording of each YAML-level problem; all but the refused properties stop the parse. */
static int ytree_problem(void *opaque, const struct berth_yproblem *p)
{
	struct mctx *c = opaque;
	const char *problem = p->text != NULL ? p->text : "unknown problem";
	const char *t = p->text;

	switch (p->kind) {
	case BERTH_YP_READER:
		if (p->value != -1)
			diag_pos(c, p->line, p->col, false, "invalid YAML: %s (0x%x)", problem,
				 (unsigned)p->value);
		else
			diag_pos(c, p->line, p->col, false, "invalid YAML: %s", problem);
		return -1;
	case BERTH_YP_SYNTAX:
		if (p->context != NULL)
			diag_pos(c, p->line, p->col, false, "invalid YAML: %s (%s started at %u:%u)", problem,
				 p->context, p->context_line, p->context_col);
		else
			diag_pos(c, p->line, p->col, false, "invalid YAML: %s", problem);
		return -1;
	case BERTH_YP_DOCUMENT:
		diag_pos(c, p->line, p->col, false,
			 "a manifest is a single YAML document; fix: remove the second document");
		return -1;
	case BERTH_YP_ALIAS:
		diag_pos(c, p->line, p->col, false,
			 "aliases (`*%s`) are not allowed in a manifest; write the value out in full",
			 quote(c, t, strlen(t)));
		return 0;
	case BERTH_YP_ANCHOR:
		diag_pos(c, p->line, p->col, false,
			 "anchors (`&%s`) are not allowed in a manifest; write the value out in full",
			 quote(c, t, strlen(t)));
		return 0;
	case BERTH_YP_TAG: {
		static const char core[] = "tag:yaml.org,2002:";
		bool is_core = strncmp(t, core, sizeof core - 1) == 0;
		if (is_core)
			t += sizeof core - 1;
		diag_pos(
		    c, p->line, p->col, false,
		    "tag `%s%s` is not allowed in a manifest; only `!!str` (on a scalar) is; fix: remove it",
		    is_core ? "!!" : "", quote(c, t, strlen(t)));
		return 0;
	}
	case BERTH_YP_NODES:
		diag_pos(c, p->line, p->col, false,
			 "the manifest has more than %d YAML nodes; it is not a plausible manifest",
			 BERTH_MANIFEST_MAX_NODES);
		return -1;
	case BERTH_YP_DEPTH:
		diag_pos(c, p->line, p->col, false,
			 "nesting deeper than %d levels; a manifest never needs that much",
			 BERTH_MANIFEST_MAX_DEPTH);
		return -1;
	case BERTH_YP_NUL: /* allowed: BERTH_YB_NUL */
	default:
		return -1;
	}
}

struct berth_ynode *ytree_parse(struct mctx *c, const char *buf, size_t len, bool *ok)
{
	struct berth_yopts o = {.max_depth = BERTH_MANIFEST_MAX_DEPTH,
				.max_nodes = BERTH_MANIFEST_MAX_NODES,
				.flags = BERTH_YB_TAGS_CORE | BERTH_YB_NUL,
				.problem = ytree_problem,
				.opaque = c};
	struct berth_ynode *root;
	int r;

	*ok = true;
	if (len > BERTH_MANIFEST_MAX_SIZE) {
		diag_pos(c, 1, 1, false, "the file is %zu bytes; a manifest may be at most 1 MiB (%d bytes)",
			 len, BERTH_MANIFEST_MAX_SIZE);
		*ok = false;
		return NULL;
	}
	r = berth_ynode_build(buf, len, &o, &root);
	if (r < 0)
		c->oom = true;
	if (r != 0)
		*ok = false;
	return root;
}

/* ---- scalars ---- */

bool yscalar_is(const struct berth_ynode *n, const char *s)
{
	return n->kind == BERTH_YN_SCALAR && n->len == strlen(s) && memcmp(n->s, s, n->len) == 0;
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

enum yscalar_type yscalar_type(const struct berth_ynode *n)
{
	const char *s = n->s;

	if (n->kind != BERTH_YN_SCALAR || !n->plain || strlen(s) != n->len)
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

const char *ynode_describe(const struct berth_ynode *n)
{
	if (n->kind != BERTH_YN_SCALAR)
		return berth_ynode_describe(n); /* "a list", "a mapping" */
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

static json_t *scalar_json(struct mctx *c, const struct berth_ynode *n)
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
static bool json_key_ok(struct mctx *c, const struct berth_ynode *m, size_t i, json_t *seen)
{
	const struct berth_ynode *k = berth_ymap_key(m, i);
	json_t *prev;

	if (k->kind != BERTH_YN_SCALAR) {
		diag(c, k, "a mapping key must be a string, got %s", ynode_describe(k));
		return false;
	}
	if (strlen(k->s) != k->len) {
		diag(c, k, "a key must not contain a NUL byte");
		return false;
	}
	prev = json_object_get(seen, k->s);
	if (prev != NULL) {
		const struct berth_ynode *first = berth_ymap_key(m, (size_t)json_integer_value(prev));
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

json_t *yjson(struct mctx *c, const struct berth_ynode *n)
{
	json_t *out = NULL;
	bool bad = false;

	switch (n->kind) {
	case BERTH_YN_SCALAR:
		return scalar_json(c, n);
	case BERTH_YN_SEQ:
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
	case BERTH_YN_MAP: {
		json_t *seen = json_object();
		out = json_object();
		if (out == NULL || seen == NULL) {
			json_decref(seen);
			json_decref(out);
			c->oom = true;
			return NULL;
		}
		for (size_t i = 0; i < berth_ymap_size(n); i++) {
			const struct berth_ynode *k = berth_ymap_key(n, i);
			if (!json_key_ok(c, n, i, seen)) {
				bad = true;
				continue;
			}
			size_t old = path_push_key(c, k->s, k->len);
			json_t *v = yjson(c, berth_ymap_val(n, i));
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
	const struct berth_ynode *root;
};

/* The YAML node that a path into a value converted by yjson() designates. */
static const struct berth_ynode *ywalk(const struct berth_ynode *n, const struct berth_schema_seg *segs,
				       size_t nsegs, size_t *used)
{
	*used = 0;
	for (size_t i = 0; i < nsegs; i++) {
		const struct berth_ynode *next = NULL;
		if (segs[i].key == NULL && n->kind == BERTH_YN_SEQ && segs[i].index < n->n) {
			next = n->kids[segs[i].index];
		} else if (segs[i].key != NULL && n->kind == BERTH_YN_MAP) {
			for (size_t j = 0; j < berth_ymap_size(n) && next == NULL; j++)
				if (yscalar_is(berth_ymap_key(n, j), segs[i].key))
					next = berth_ymap_val(n, j);
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
	const struct berth_ynode *at;

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

size_t yvalidate(struct mctx *c, const json_t *schema, const json_t *inst, const struct berth_ynode *yn,
		 unsigned flags)
{
	struct yv v = {c, yn};

	return berth_schema_validate_all(schema, inst, flags, yv_report, &v);
}
