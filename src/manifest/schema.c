/* SPDX-License-Identifier: MIT */
/*
 * schema.c - the JSON Schema subset of berth exports: checking a schema,
 * validating an instance against it, matching an example's expected output.
 *
 * Recursion follows the schema (or, for berth_example_match, the expected
 * value), never the instance alone, and stops at BERTH_SCHEMA_MAX_DEPTH, so a
 * hostile instance cannot exhaust the stack.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../util/cleanup.h"
#include "schema.h"

#define BERTH_SCHEMA_MAX_DEPTH 128
#define REASON_MAX 512

const char *const berth_schema_keywords[] = {
    "type",    "properties",      "required",         "items", "enum", "description", "default", "minimum",
    "maximum", "contentEncoding", "contentMediaType", NULL,
};

const char *const berth_schema_types[] = {
    "string", "integer", "number", "boolean", "array", "object", "null", NULL,
};

#define KEYWORD_LIST                                                                                         \
	"type, properties, required, items, enum, description, default, minimum, maximum, contentEncoding, " \
	"contentMediaType"
#define TYPE_LIST "string, integer, number, boolean, array, object, null"

static size_t restricted_name(const char *s)
{
	size_t n = 0;

	if (!isalnum((unsigned char)s[0]))
		return 0;
	while (s[n] != '\0' && (isalnum((unsigned char)s[n]) || strchr("!#$&-^_.+", s[n]) != NULL))
		n++;
	return n <= 127 ? n : 0;
}

bool berth_schema_media_type_ok(const char *s)
{
	size_t t = restricted_name(s);

	if (t == 0 || s[t] != '/')
		return false;
	size_t st = restricted_name(s + t + 1);
	return st > 0 && s[t + 1 + st] == '\0';
}

bool berth_schema_is_type(const char *name)
{
	for (size_t i = 0; berth_schema_types[i] != NULL; i++)
		if (strcmp(name, berth_schema_types[i]) == 0)
			return true;
	return false;
}

static bool is_keyword(const char *name)
{
	for (size_t i = 0; berth_schema_keywords[i] != NULL; i++)
		if (strcmp(name, berth_schema_keywords[i]) == 0)
			return true;
	return false;
}

/* The JSON type of @v as the subset names it; reals are `number`. */
static const char *json_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "object";
	case JSON_ARRAY:
		return "array";
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
		return "integer";
	case JSON_REAL:
		return "number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "boolean";
	case JSON_NULL:
		return "null";
	default:
		return "unknown";
	}
}

static bool type_matches(const char *type, const json_t *v)
{
	if (strcmp(type, "string") == 0)
		return json_is_string(v);
	if (strcmp(type, "integer") == 0) {
		if (json_is_integer(v))
			return true;
		if (json_is_real(v)) {
			double d = json_real_value(v);
			return isfinite(d) && floor(d) == d;
		}
		return false;
	}
	if (strcmp(type, "number") == 0)
		return json_is_number(v);
	if (strcmp(type, "boolean") == 0)
		return json_is_boolean(v);
	if (strcmp(type, "array") == 0)
		return json_is_array(v);
	if (strcmp(type, "object") == 0)
		return json_is_object(v);
	if (strcmp(type, "null") == 0)
		return json_is_null(v);
	return false;
}

/* Deep equality; numbers compare by value (2 == 2.0).  Depth-bounded. */
static bool equal_depth(const json_t *a, const json_t *b, unsigned depth)
{
	if (depth > BERTH_SCHEMA_MAX_DEPTH)
		return false;
	if (json_is_number(a) && json_is_number(b)) {
		if (json_is_integer(a) && json_is_integer(b))
			return json_integer_value(a) == json_integer_value(b);
		return json_number_value(a) == json_number_value(b);
	}
	if (json_typeof(a) != json_typeof(b))
		return false;
	if (json_is_string(a))
		return json_string_length(a) == json_string_length(b) &&
		       memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0;
	if (json_is_array(a)) {
		if (json_array_size(a) != json_array_size(b))
			return false;
		for (size_t i = 0; i < json_array_size(a); i++)
			if (!equal_depth(json_array_get(a, i), json_array_get(b, i), depth + 1))
				return false;
		return true;
	}
	if (json_is_object(a)) {
		const char *k;
		json_t *va;

		if (json_object_size(a) != json_object_size(b))
			return false;
		for (void *it = json_object_iter((json_t *)a); it != NULL;
		     it = json_object_iter_next((json_t *)a, it)) {
			k = json_object_iter_key(it);
			va = json_object_iter_value(it);
			json_t *vb = json_object_get(b, k);
			if (vb == NULL || !equal_depth(va, vb, depth + 1))
				return false;
		}
		return true;
	}
	return true; /* true, false, null: same type is equal */
}

/*
 * Compact JSON of a value for a message, ASCII only (so nothing in it can
 * drive a terminal), cut at DUMP_MAX bytes with "...".  It stops as soon as
 * the buffer is full, so its cost does not grow with the value: a
 * validation can report many mismatches against a large enum.
 */
#define DUMP_MAX 120

struct dump {
	char *buf;
	size_t pos, max;
	bool full;
};

static void d_put(struct dump *d, const char *s, size_t n)
{
	if (d->full)
		return;
	if (d->pos + n > d->max) {
		n = d->max - d->pos;
		d->full = true;
	}
	memcpy(d->buf + d->pos, s, n);
	d->pos += n;
}

/* Numbers, booleans, null: no allocation, they are most of a large enum. */
static void d_scalar(struct dump *d, const json_t *v)
{
	char num[64];

	switch (json_typeof(v)) {
	case JSON_INTEGER:
		snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		break;
	case JSON_REAL:
		/* the shortest of 15 or 17 digits that reads back the same, and always a real */
		snprintf(num, sizeof num, "%.15g", json_real_value(v));
		if (strtod(num, NULL) != json_real_value(v))
			snprintf(num, sizeof num, "%.17g", json_real_value(v));
		if (strpbrk(num, ".eEn") == NULL)
			strcat(num, ".0");
		break;
	case JSON_TRUE:
		snprintf(num, sizeof num, "true");
		break;
	case JSON_FALSE:
		snprintf(num, sizeof num, "false");
		break;
	case JSON_NULL:
	case JSON_OBJECT:
	case JSON_ARRAY:
	case JSON_STRING:
	default:
		snprintf(num, sizeof num, "null");
		break;
	}
	d_put(d, num, strlen(num));
}

/* A JSON string, non-ASCII escaped as \uXXXX. */
static void d_string(struct dump *d, const char *s, size_t n)
{
	d_put(d, "\"", 1);
	for (size_t i = 0; i < n && !d->full;) {
		unsigned char ch = (unsigned char)s[i];
		char esc[16];
		unsigned cp;
		size_t k = 1;

		if (ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\') {
			d_put(d, s + i, 1);
			i++;
			continue;
		}
		if (ch == '"' || ch == '\\') {
			esc[0] = '\\';
			esc[1] = (char)ch;
			esc[2] = '\0';
		} else if (ch < 0x80) {
			if (ch == '\n')
				snprintf(esc, sizeof esc, "\\n");
			else if (ch == '\r')
				snprintf(esc, sizeof esc, "\\r");
			else if (ch == '\t')
				snprintf(esc, sizeof esc, "\\t");
			else
				snprintf(esc, sizeof esc, "\\u%04x", ch);
		} else {
			/* jansson strings are valid UTF-8 */
			k = ch >= 0xf0 ? 4 : ch >= 0xe0 ? 3 : 2;
			if (i + k > n)
				k = n - i;
			cp = ch & (k == 4 ? 0x07 : k == 3 ? 0x0f : 0x1f);
			for (size_t j = 1; j < k; j++)
				cp = (cp << 6) | ((unsigned char)s[i + j] & 0x3f);
			if (cp >= 0x10000)
				snprintf(esc, sizeof esc, "\\u%04x\\u%04x", 0xd800 + ((cp - 0x10000) >> 10),
					 0xdc00 + ((cp - 0x10000) & 0x3ff));
			else
				snprintf(esc, sizeof esc, "\\u%04x", cp);
		}
		d_put(d, esc, strlen(esc));
		i += k;
	}
	d_put(d, "\"", 1);
}

static void d_value(struct dump *d, const json_t *v)
{
	if (d->full)
		return;
	if (json_is_object(v)) {
		bool first = true;
		d_put(d, "{", 1);
		for (void *it = json_object_iter((json_t *)v); it != NULL && !d->full;
		     it = json_object_iter_next((json_t *)v, it)) {
			const char *k = json_object_iter_key(it);
			if (!first)
				d_put(d, ",", 1);
			first = false;
			d_string(d, k, strlen(k));
			d_put(d, ":", 1);
			d_value(d, json_object_iter_value(it));
		}
		d_put(d, "}", 1);
	} else if (json_is_array(v)) {
		d_put(d, "[", 1);
		for (size_t i = 0; i < json_array_size(v) && !d->full; i++) {
			if (i > 0)
				d_put(d, ",", 1);
			d_value(d, json_array_get(v, i));
		}
		d_put(d, "]", 1);
	} else if (json_is_string(v)) {
		d_string(d, json_string_value(v), json_string_length(v));
	} else {
		d_scalar(d, v);
	}
}

static void dump_short(const json_t *v, char *buf, size_t len)
{
	char tmp[DUMP_MAX + 1];
	struct dump d = {tmp, 0, DUMP_MAX, false};

	if (len == 0)
		return;
	d_value(&d, v);
	tmp[d.pos] = '\0';
	snprintf(buf, len, "%s%s", tmp, d.full ? "..." : "");
}

/* A name from a schema or an instance for a message in backticks: escaped like a JSON string, cut. */
#define NAME_MAX_OUT (DUMP_MAX + 8)
static const char *esc_name(char *buf, const char *s)
{
	char tmp[DUMP_MAX + 1];
	struct dump d = {tmp, 0, DUMP_MAX, false};

	d_string(&d, s, strlen(s));
	/* without the quotes d_string() put around it */
	if (!d.full && d.pos >= 2)
		snprintf(buf, NAME_MAX_OUT, "%.*s", (int)(d.pos - 2), tmp + 1);
	else
		snprintf(buf, NAME_MAX_OUT, "%.*s...", (int)(d.pos > 1 ? d.pos - 1 : 0), tmp + 1);
	return buf;
}

static bool is_identifier(const char *s)
{
	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return false;
	for (s++; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '_'))
			return false;
	return true;
}

struct sbuf {
	char *buf;
	size_t len, pos;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->pos + 1 >= b->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->buf + b->pos, b->len - b->pos, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	b->pos += (size_t)n;
	if (b->pos >= b->len)
		b->pos = b->len - 1;
}

void berth_schema_format_path(const struct berth_schema_seg *segs, size_t n, char *buf, size_t len)
{
	struct sbuf b = {buf, len, 0};

	if (len == 0)
		return;
	buf[0] = '\0';
	sb_printf(&b, "$");
	for (size_t i = 0; i < n; i++) {
		if (segs[i].key == NULL) {
			sb_printf(&b, "[%zu]", segs[i].index);
		} else if (is_identifier(segs[i].key)) {
			sb_printf(&b, ".%s", segs[i].key);
		} else {
			char tmp[DUMP_MAX + 1];
			struct dump d = {tmp, 0, DUMP_MAX, false};
			d_string(&d, segs[i].key, strlen(segs[i].key));
			tmp[d.pos] = '\0';
			sb_printf(&b, "[%s%s]", tmp, d.full ? "...\"" : "");
		}
	}
}

/* ---- instance validation ---- */

struct vstate {
	berth_schema_report_fn report;
	void *opaque;
	unsigned flags;
	struct berth_schema_seg segs[BERTH_SCHEMA_MAX_DEPTH];
	size_t n;
	size_t count;
	bool stop;
};

static void vreport(struct vstate *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void vreport(struct vstate *v, const char *fmt, ...)
{
	char reason[REASON_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof reason, fmt, ap);
	va_end(ap);
	v->count++;
	if (v->report(v->opaque, v->segs, v->n, reason) != 0)
		v->stop = true;
}

/* num_cmp - <0, 0, >0 as @a is below, equal to, above @b (two JSON numbers;
 * two integers compared exactly, not as doubles). */
static int num_cmp(const json_t *a, const json_t *b)
{
	if (json_is_integer(a) && json_is_integer(b)) {
		json_int_t x = json_integer_value(a), y = json_integer_value(b);
		return (x > y) - (x < y);
	}
	double x = json_number_value(a), y = json_number_value(b);
	return (x > y) - (x < y);
}

static void num_text(const json_t *n, char *buf, size_t len)
{
	if (json_is_integer(n))
		snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(n));
	else
		snprintf(buf, len, "%.17g", json_real_value(n));
}

/* bound_ok - whether the number @inst is within @bound (`minimum` when
 * @side is -1, `maximum` when 1; NULL or not a number: no bound); reports
 * "must be at least N"/"must be at most N" otherwise. */
static bool bound_ok(struct vstate *v, const json_t *bound, const json_t *inst, int side)
{
	char b[64];

	if (!json_is_number(bound) || num_cmp(inst, bound) * side <= 0)
		return true;
	num_text(bound, b, sizeof b);
	vreport(v, "must be at %s %s", side < 0 ? "least" : "most", b);
	return false;
}

static void validate(struct vstate *v, const json_t *schema, const json_t *inst)
{
	char nb[NAME_MAX_OUT];
	const json_t *type, *en, *props, *req, *items;
	bool top = v->n == 0;

	if (v->stop)
		return;
	if (!json_is_object(schema)) {
		vreport(v, "invalid schema: a schema must be an object");
		return;
	}
	type = json_object_get(schema, "type");
	if (type != NULL) {
		if (!json_is_string(type) || !berth_schema_is_type(json_string_value(type))) {
			vreport(v, "invalid schema: unknown `type`");
			return;
		}
		if (!type_matches(json_string_value(type), inst)) {
			vreport(v, "expected %s, got %s", json_string_value(type), json_type_name(inst));
			return;
		}
	}
	en = json_object_get(schema, "enum");
	if (en != NULL) {
		bool found = false;
		char dump[160];

		for (size_t i = 0; i < json_array_size(en) && !found; i++)
			found = equal_depth(json_array_get(en, i), inst, 0);
		if (!found) {
			dump_short(en, dump, sizeof dump);
			vreport(v, "value not in enum %s", dump);
			return;
		}
	}
	if (json_is_number(inst) && !bound_ok(v, json_object_get(schema, "minimum"), inst, -1))
		return;
	if (json_is_number(inst) && !bound_ok(v, json_object_get(schema, "maximum"), inst, 1))
		return;
	if (v->n >= BERTH_SCHEMA_MAX_DEPTH) {
		vreport(v, "invalid schema: nested deeper than %d levels", BERTH_SCHEMA_MAX_DEPTH);
		return;
	}
	if (json_is_object(inst)) {
		const char *k;
		json_t *val;

		props = json_object_get(schema, "properties");
		req = json_object_get(schema, "required");
		if (!(top && (v->flags & BERTH_SCHEMA_PARTIAL))) {
			for (size_t i = 0; i < json_array_size(req) && !v->stop; i++) {
				const char *name = json_string_value(json_array_get(req, i));
				if (name != NULL && json_object_get(inst, name) == NULL)
					vreport(v, "missing required property `%s`", esc_name(nb, name));
			}
		}
		if (!json_is_object(props))
			return;
		for (void *it = json_object_iter((json_t *)inst); it != NULL;
		     it = json_object_iter_next((json_t *)inst, it)) {
			k = json_object_iter_key(it);
			val = json_object_iter_value(it);
			const json_t *sub = json_object_get(props, k);
			if (sub == NULL)
				continue; /* additional properties are allowed */
			v->segs[v->n].key = k;
			v->n++;
			validate(v, sub, val);
			v->n--;
			if (v->stop)
				return;
		}
	} else if (json_is_array(inst)) {
		items = json_object_get(schema, "items");
		if (items == NULL)
			return;
		for (size_t i = 0; i < json_array_size(inst) && !v->stop; i++) {
			v->segs[v->n].key = NULL;
			v->segs[v->n].index = i;
			v->n++;
			validate(v, items, json_array_get(inst, i));
			v->n--;
		}
	}
}

size_t berth_schema_validate_all(const json_t *schema, const json_t *instance, unsigned flags,
				 berth_schema_report_fn report, void *opaque)
{
	struct vstate v = {.report = report, .opaque = opaque, .flags = flags};

	validate(&v, schema, instance);
	return v.count;
}

struct first {
	char *path;
	size_t path_len;
	char *reason;
	size_t reason_len;
};

static int keep_first(void *opaque, const struct berth_schema_seg *segs, size_t n, const char *reason)
{
	struct first *f = opaque;

	if (f->path != NULL && f->path_len > 0)
		berth_schema_format_path(segs, n, f->path, f->path_len);
	if (f->reason != NULL && f->reason_len > 0)
		snprintf(f->reason, f->reason_len, "%s", reason);
	return 1;
}

int berth_schema_validate(const json_t *schema, const json_t *instance, char *path, size_t path_len,
			  char *reason, size_t reason_len)
{
	struct first f = {path, path_len, reason, reason_len};

	if (path != NULL && path_len > 0)
		path[0] = '\0';
	if (reason != NULL && reason_len > 0)
		reason[0] = '\0';
	return berth_schema_validate_all(schema, instance, 0, keep_first, &f) == 0 ? 0 : -1;
}

/* ---- schema checking ---- */

struct cstate {
	struct berth_schema_seg segs[BERTH_SCHEMA_MAX_DEPTH * 2];
	size_t n;
	char reason[REASON_MAX];
	bool failed;
};

static void cfail(struct cstate *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void cfail(struct cstate *c, const char *fmt, ...)
{
	va_list ap;

	if (c->failed)
		return;
	va_start(ap, fmt);
	vsnprintf(c->reason, sizeof c->reason, fmt, ap);
	va_end(ap);
	c->failed = true;
}

static void cpush_key(struct cstate *c, const char *key)
{
	c->segs[c->n].key = key;
	c->n++;
}

static void cpush_index(struct cstate *c, size_t i)
{
	c->segs[c->n].key = NULL;
	c->segs[c->n].index = i;
	c->n++;
}

/* The first mismatch of a value inside the schema (enum, default), appended to the check's path. */
struct inner {
	struct cstate *c;
};

static int inner_first(void *opaque, const struct berth_schema_seg *segs, size_t n, const char *reason)
{
	struct cstate *c = opaque;

	for (size_t i = 0; i < n && c->n < BERTH_ARRAY_SIZE(c->segs); i++)
		c->segs[c->n++] = segs[i];
	cfail(c, "%s", reason);
	return 1;
}

/* Validate @value against @schema without its keywords @drop1 and @drop2. */
static void check_value(struct cstate *c, const json_t *schema, const char *drop1, const char *drop2,
			const json_t *value)
{
	json_t *s = json_copy((json_t *)schema); /* shallow: shares the members */

	if (s == NULL) {
		cfail(c, "out of memory");
		return;
	}
	json_object_del(s, drop1);
	if (drop2 != NULL)
		json_object_del(s, drop2);
	berth_schema_validate_all(s, value, 0, inner_first, c);
	json_decref(s);
}

/*
 * keyword - the value of keyword @kw of the schema @s, its key pushed on the
 * path; NULL when it is absent, or (c->failed) when it applies only to
 * `type: @only` (NULL: to any) and @tname is another type.
 */
static json_t *keyword(struct cstate *c, const json_t *s, const char *kw, const char *tname, const char *only)
{
	json_t *v = json_object_get(s, kw);

	if (v == NULL)
		return NULL;
	cpush_key(c, kw);
	if (only != NULL && strcmp(tname, only) != 0) {
		cfail(c, "`%s` applies only to `type: %s`", kw, only);
		return NULL;
	}
	return v;
}

/* `contentEncoding` and `contentMediaType`: a pair, on `type: string` only. */
static void check_content(struct cstate *c, const json_t *s, const char *tname)
{
	for (int k = 0; k < 2; k++) {
		const char *kw = k == 0 ? "contentEncoding" : "contentMediaType";
		const json_t *v = json_object_get(s, kw),
			     *other = json_object_get(s, k == 0 ? "contentMediaType" : "contentEncoding");
		if (v == NULL)
			continue;
		cpush_key(c, kw);
		if (strcmp(tname, "string") != 0)
			cfail(c, "`%s` applies only to `type: string`", kw);
		else if (!json_is_string(v))
			cfail(c, "`%s` must be a string, got %s", kw, json_type_name(v));
		else if (k == 0 && strcmp(json_string_value(v), "base64") != 0)
			cfail(c, "unsupported content encoding; the only one supported: base64");
		else if (k == 1 && !berth_schema_media_type_ok(json_string_value(v)))
			cfail(c, "`contentMediaType` is not a media type (TYPE/SUBTYPE)");
		else if (other == NULL)
			cfail(c, "`%s` without `%s`", kw, k == 0 ? "contentMediaType" : "contentEncoding");
		if (c->failed)
			return;
		c->n--;
	}
}

static void check(struct cstate *c, const json_t *s)
{
	char nb[NAME_MAX_OUT];
	const char *k, *tname = NULL;
	json_t *val, *type, *props, *req, *items, *en, *def, *desc;

	if (!json_is_object(s)) {
		cfail(c, "a schema must be an object, got %s", json_type_name(s));
		return;
	}
	if (c->n + 4 >= BERTH_ARRAY_SIZE(c->segs)) {
		cfail(c, "schema nested deeper than %d levels", BERTH_SCHEMA_MAX_DEPTH);
		return;
	}
	for (void *it = json_object_iter((json_t *)s); it != NULL;
	     it = json_object_iter_next((json_t *)s, it)) {
		k = json_object_iter_key(it);
		val = json_object_iter_value(it);
		if (!is_keyword(k)) {
			cpush_key(c, k);
			cfail(c, "unknown schema keyword `%s`; supported keywords: " KEYWORD_LIST,
			      esc_name(nb, k));
			return;
		}
	}
	type = json_object_get(s, "type");
	if (type == NULL) {
		cfail(c, "missing `type`; fix: add `type` with one of " TYPE_LIST);
		return;
	}
	cpush_key(c, "type");
	if (!json_is_string(type)) {
		cfail(c, "`type` must be a string, one of " TYPE_LIST);
		return;
	}
	tname = json_string_value(type);
	if (!berth_schema_is_type(tname)) {
		cfail(c, "unknown type `%s`; known types: " TYPE_LIST, esc_name(nb, tname));
		return;
	}
	c->n--;

	props = keyword(c, s, "properties", tname, "object");
	if (c->failed)
		return;
	if (props != NULL) {
		if (!json_is_object(props)) {
			cfail(c, "`properties` must be an object, got %s", json_type_name(props));
			return;
		}
		for (void *it = json_object_iter(props); it != NULL; it = json_object_iter_next(props, it)) {
			k = json_object_iter_key(it);
			val = json_object_iter_value(it);
			cpush_key(c, k);
			check(c, val);
			if (c->failed)
				return;
			c->n--;
		}
		c->n--;
	}
	req = keyword(c, s, "required", tname, "object");
	if (c->failed)
		return;
	if (req != NULL) {
		if (!json_is_array(req)) {
			cfail(c, "`required` must be an array of property names, got %s",
			      json_type_name(req));
			return;
		}
		json_t *seen = json_object();
		if (seen == NULL) {
			cfail(c, "out of memory");
			return;
		}
		for (size_t i = 0; i < json_array_size(req) && !c->failed; i++) {
			const char *name = json_string_value(json_array_get(req, i));
			cpush_index(c, i);
			if (name == NULL)
				cfail(c, "expected a property name, got %s",
				      json_type_name(json_array_get(req, i)));
			else if (json_object_get(props, name) == NULL)
				cfail(c, "required property `%s` is not in `properties`", esc_name(nb, name));
			else if (json_object_get(seen, name) != NULL)
				cfail(c, "property `%s` is listed twice", esc_name(nb, name));
			else if (json_object_set_new(seen, name, json_true()) < 0)
				cfail(c, "out of memory");
			else
				c->n--;
		}
		json_decref(seen);
		if (c->failed)
			return;
		c->n--;
	}
	items = keyword(c, s, "items", tname, "array");
	if (c->failed)
		return;
	if (items != NULL) {
		check(c, items);
		if (c->failed)
			return;
		c->n--;
	}
	for (int b = 0; b < 2; b++) {
		const char *kw = b == 0 ? "minimum" : "maximum";
		json_t *bv = json_object_get(s, kw);
		if (bv == NULL)
			continue;
		cpush_key(c, kw);
		if (strcmp(tname, "integer") != 0 && strcmp(tname, "number") != 0) {
			cfail(c, "`%s` applies only to `type: integer` or `type: number`", kw);
			return;
		}
		if (strcmp(tname, "integer") == 0 ? !json_is_integer(bv) : !json_is_number(bv)) {
			cfail(c, "`%s` must be %s, got %s", kw,
			      strcmp(tname, "integer") == 0 ? "an integer" : "a number", json_type_name(bv));
			return;
		}
		c->n--;
	}
	if (json_is_number(json_object_get(s, "minimum")) && json_is_number(json_object_get(s, "maximum")) &&
	    num_cmp(json_object_get(s, "minimum"), json_object_get(s, "maximum")) > 0) {
		cpush_key(c, "minimum");
		cfail(c, "`minimum` is above `maximum`");
		return;
	}
	check_content(c, s, tname);
	if (c->failed)
		return;
	desc = json_object_get(s, "description");
	if (desc != NULL && !json_is_string(desc)) {
		cpush_key(c, "description");
		cfail(c, "`description` must be a string, got %s", json_type_name(desc));
		return;
	}
	en = keyword(c, s, "enum", tname, NULL);
	if (en != NULL) {
		if (!json_is_array(en) || json_array_size(en) == 0) {
			cfail(c, "`enum` must be a non-empty array of values");
			return;
		}
		if (json_array_size(en) > BERTH_SCHEMA_ENUM_MAX) {
			cfail(c, "`enum` lists %zu values; at most %d are allowed", json_array_size(en),
			      BERTH_SCHEMA_ENUM_MAX);
			return;
		}
		for (size_t i = 0; i < json_array_size(en); i++) {
			cpush_index(c, i);
			check_value(c, s, "enum", "default", json_array_get(en, i));
			if (c->failed)
				return;
			c->n--;
		}
		c->n--;
	}
	def = keyword(c, s, "default", tname, NULL);
	if (def != NULL) {
		check_value(c, s, "default", NULL, def);
		if (c->failed)
			return;
		c->n--;
	}
}

int berth_schema_check(const json_t *schema, char *path, size_t path_len, char *reason, size_t reason_len)
{
	struct cstate *c = calloc(1, sizeof *c);

	if (path != NULL && path_len > 0)
		path[0] = '\0';
	if (reason != NULL && reason_len > 0)
		reason[0] = '\0';
	if (c == NULL) {
		if (reason != NULL && reason_len > 0)
			snprintf(reason, reason_len, "out of memory");
		return -1;
	}
	check(c, schema);
	if (c->failed)
		keep_first(&(struct first){path, path_len, reason, reason_len}, c->segs, c->n, c->reason);
	bool failed = c->failed;
	free(c);
	return failed ? -1 : 0;
}

/* ---- example output matching ---- */

struct mstate {
	struct berth_schema_seg segs[BERTH_SCHEMA_MAX_DEPTH];
	size_t n;
	char reason[REASON_MAX];
};

static bool diff(struct mstate *m, const json_t *exp, const json_t *act);

/* Whether each member of the object @exp is in the object @act with an equal value (diff). */
static bool diff_members(struct mstate *m, const json_t *exp, const json_t *act)
{
	char nb[NAME_MAX_OUT];

	for (void *it = json_object_iter((json_t *)exp); it != NULL;
	     it = json_object_iter_next((json_t *)exp, it)) {
		const char *k = json_object_iter_key(it);
		json_t *av = json_object_get(act, k);

		m->segs[m->n].key = k;
		m->n++;
		if (av == NULL) {
			snprintf(m->reason, sizeof m->reason, "missing property `%s`", esc_name(nb, k));
			return false;
		}
		if (!diff(m, json_object_iter_value(it), av))
			return false;
		m->n--;
	}
	return true;
}

/* Returns true when @exp equals @act; otherwise fills m->segs/reason with the first difference. */
static bool diff(struct mstate *m, const json_t *exp, const json_t *act)
{
	char nb[NAME_MAX_OUT];
	char a[160], b[160];

	if (m->n >= BERTH_ARRAY_SIZE(m->segs)) {
		if (equal_depth(exp, act, 0))
			return true;
		snprintf(m->reason, sizeof m->reason, "values differ");
		return false;
	}
	if (json_is_object(exp) && json_is_object(act)) {
		if (!diff_members(m, exp, act))
			return false;
		for (void *it = json_object_iter((json_t *)act); it != NULL;
		     it = json_object_iter_next((json_t *)act, it)) {
			const char *k = json_object_iter_key(it);
			if (json_object_get(exp, k) == NULL) {
				snprintf(m->reason, sizeof m->reason, "unexpected property `%s`",
					 esc_name(nb, k));
				return false;
			}
		}
		return true;
	}
	if (json_is_array(exp) && json_is_array(act) && json_array_size(exp) == json_array_size(act)) {
		for (size_t i = 0; i < json_array_size(exp); i++) {
			m->segs[m->n].key = NULL;
			m->segs[m->n].index = i;
			m->n++;
			if (!diff(m, json_array_get(exp, i), json_array_get(act, i)))
				return false;
			m->n--;
		}
		return true;
	}
	if (equal_depth(exp, act, 0))
		return true;
	dump_short(exp, a, sizeof a);
	dump_short(act, b, sizeof b);
	snprintf(m->reason, sizeof m->reason, "expected %s, got %s", a, b);
	return false;
}

int berth_example_match(const json_t *expected, const json_t *actual, char *path, size_t path_len,
			char *reason, size_t reason_len)
{
	struct mstate *m = calloc(1, sizeof *m);
	bool ok = true;

	if (path != NULL && path_len > 0)
		path[0] = '\0';
	if (reason != NULL && reason_len > 0)
		reason[0] = '\0';
	if (m == NULL) {
		if (reason != NULL && reason_len > 0)
			snprintf(reason, reason_len, "out of memory");
		return -1;
	}
	if (json_is_object(expected) && json_is_object(actual)) {
		/* Subset at the top level: members of @actual not in @expected are fine. */
		ok = diff_members(m, expected, actual);
	} else if (json_is_object(expected)) {
		snprintf(m->reason, sizeof m->reason, "expected object, got %s", json_type_name(actual));
		ok = false;
	} else {
		ok = diff(m, expected, actual);
	}
	if (!ok)
		keep_first(&(struct first){path, path_len, reason, reason_len}, m->segs, m->n, m->reason);
	free(m);
	return ok ? 0 : -1;
}
