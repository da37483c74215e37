/* SPDX-License-Identifier: MIT */
/*
 * yschema.c - reading an export's input or output schema from berth.yml,
 * with a position for every problem.
 *
 * Two forms are accepted:
 *   full       {type: object, properties: {path: {type: string}}, required: [path]}
 *   shorthand  {path: string, "limit?": integer}   (a mapping without `type`
 *              whose values are type names; `?` marks an optional property)
 * The result is the full form as JSON.  The rules are those of
 * berth_schema_check() (schema.c), applied to the YAML so that each problem
 * names its line and column.
 */
#include <string.h>

#include "../util/cleanup.h"
#include "internal.h"

enum kw {
	KW_TYPE,
	KW_PROPERTIES,
	KW_REQUIRED,
	KW_ITEMS,
	KW_ENUM,
	KW_DESCRIPTION,
	KW_DEFAULT,
	KW_MINIMUM,
	KW_MAXIMUM,
	KW_CONTENT_ENCODING,
	KW_CONTENT_MEDIA_TYPE,
	KW_N
};

static json_t *schema_node(struct mctx *c, const struct berth_ynode *n, bool top);

static int kw_index(const struct berth_ynode *k)
{
	for (int i = 0; i < KW_N; i++)
		if (yscalar_is(k, berth_schema_keywords[i]))
			return i;
	return -1;
}

/*
 * Enter keyword @kw of a schema (given: its key in @kk, value in @kv): its
 * path is pushed (the old length in *@old), and when it applies only to
 * schemas of type @only (NULL: any) and the schema's @type is another, that
 * is reported.  Returns its value.
 */
static const struct berth_ynode *kw_enter(struct mctx *c, const struct berth_ynode *const *kk,
					  const struct berth_ynode *const *kv, enum kw kw, const char *type,
					  const char *only, size_t *old)
{
	const char *name = berth_schema_keywords[kw];

	*old = path_push_key(c, name, strlen(name));
	if (only != NULL && type != NULL && strcmp(type, only) != 0)
		diag(c, kk[kw], "`%s` applies only to `type: %s`", name, only);
	return kv[kw];
}

/* A type name given as a scalar; `null` counts although YAML types it as null. */
static const char *type_name(struct mctx *c, const struct berth_ynode *v)
{
	if (v->kind != BERTH_YN_SCALAR || strlen(v->s) != v->len) {
		diag(c, v, "expected a type name (" SCHEMA_TYPE_LIST "), got %s", got(c, v));
		return NULL;
	}
	if (!berth_schema_is_type(v->s)) {
		diag(c, v, "unknown type `%s`; known types: " SCHEMA_TYPE_LIST, quote(c, v->s, v->len));
		return NULL;
	}
	return v->s;
}

/* A property name: a scalar key without NUL bytes. */
static bool prop_key_ok(struct mctx *c, const struct berth_ynode *k)
{
	if (k->kind != BERTH_YN_SCALAR) {
		diag(c, k, "a property name must be a string, got %s", ynode_describe(k));
		return false;
	}
	if (strlen(k->s) != k->len || k->len == 0) {
		diag(c, k, "a property name must be non-empty and must not contain a NUL byte");
		return false;
	}
	return true;
}

/* Report key @k as a duplicate of an earlier one recorded in @seen (name -> index in @m). */
static bool dup_key(struct mctx *c, const struct berth_ynode *m, const struct berth_ynode *k,
		    const char *name, json_t *seen, size_t i)
{
	json_t *prev = json_object_get(seen, name);

	if (prev != NULL) {
		const struct berth_ynode *first = berth_ymap_key(m, (size_t)json_integer_value(prev));
		diag(c, k, "property `%s` is given twice (first at %u:%u); fix: remove one of them",
		     quote(c, name, strlen(name)), first->line, first->col);
		return true;
	}
	if (json_object_set_new(seen, name, json_integer((json_int_t)i)) < 0)
		c->oom = true;
	return false;
}

static json_t *shorthand(struct mctx *c, const struct berth_ynode *n)
{
	json_t *props = json_object(), *req = json_array(), *seen = json_object(), *out = NULL;

	if (props == NULL || req == NULL || seen == NULL) {
		c->oom = true;
		goto done;
	}
	for (size_t i = 0; i < berth_ymap_size(n); i++) {
		const struct berth_ynode *k = berth_ymap_key(n, i), *v = berth_ymap_val(n, i);
		if (!prop_key_ok(c, k))
			continue;
		size_t old = path_push_key(c, k->s, k->len);
		cleanup_free char *name = strdup(k->s);
		if (name == NULL) {
			c->oom = true;
			path_pop(c, old);
			continue;
		}
		bool optional = k->len > 0 && name[k->len - 1] == '?';
		if (optional)
			name[k->len - 1] = '\0';
		if (name[0] == '\0') {
			diag(c, k, "a property name must not be empty; `?` alone names nothing");
		} else if (!dup_key(c, n, k, name, seen, i)) {
			const char *t = NULL;
			if (v->kind != BERTH_YN_SCALAR)
				diag(c, v,
				     "expected a type name (" SCHEMA_TYPE_LIST
				     "), got %s; fix: for a nested schema write the full form `{type: "
				     "object, properties: {...}}`",
				     ynode_describe(v));
			else
				t = type_name(c, v);
			if (t != NULL) {
				json_t *sub = json_pack("{s:s}", "type", t);
				if (sub == NULL || json_object_set_new(props, name, sub) < 0)
					c->oom = true;
				if (!optional && json_array_append_new(req, json_string(name)) < 0)
					c->oom = true;
			}
		}
		path_pop(c, old);
	}
	out = json_pack("{s:s,s:O}", "type", "object", "properties", props);
	if (out == NULL)
		c->oom = true;
	else if (json_array_size(req) > 0 && json_object_set(out, "required", req) < 0)
		c->oom = true;
done:
	json_decref(props);
	json_decref(req);
	json_decref(seen);
	return out;
}

/*
 * A mapping without `type` is a full schema missing its type, not the
 * shorthand, when it uses a schema keyword with a collection value
 * (`properties: {...}`), or when all its keys are schema keywords and not all
 * its values are type names (`{description: a path}`; but `{description:
 * string}` is the shorthand for one property named `description`).
 */
static bool looks_full(const struct berth_ynode *n)
{
	bool all_keywords = berth_ymap_size(n) > 0, all_types = true;

	for (size_t i = 0; i < berth_ymap_size(n); i++) {
		const struct berth_ynode *v = berth_ymap_val(n, i);
		int kw = kw_index(berth_ymap_key(n, i));
		if ((kw == KW_PROPERTIES || kw == KW_REQUIRED || kw == KW_ITEMS || kw == KW_ENUM ||
		     kw == KW_DEFAULT) &&
		    v->kind != BERTH_YN_SCALAR)
			return true;
		if (kw < 0)
			all_keywords = false;
		if (v->kind != BERTH_YN_SCALAR || strlen(v->s) != v->len || !berth_schema_is_type(v->s))
			all_types = false;
	}
	return all_keywords && !all_types;
}

static json_t *properties(struct mctx *c, const struct berth_ynode *v)
{
	json_t *props = json_object(), *seen = json_object();

	if (props == NULL || seen == NULL) {
		c->oom = true;
		json_decref(seen);
		return props;
	}
	for (size_t i = 0; i < berth_ymap_size(v); i++) {
		const struct berth_ynode *k = berth_ymap_key(v, i);
		if (!prop_key_ok(c, k))
			continue;
		size_t old = path_push_key(c, k->s, k->len);
		if (!dup_key(c, v, k, k->s, seen, i)) {
			json_t *sub = schema_node(c, berth_ymap_val(v, i), false);
			if (sub != NULL && json_object_set_new(props, k->s, sub) < 0)
				c->oom = true;
		}
		path_pop(c, old);
	}
	json_decref(seen);
	return props;
}

static json_t *required(struct mctx *c, const struct berth_ynode *v, const json_t *names)
{
	json_t *req = json_array(), *seen = json_object();

	if (req == NULL || seen == NULL) {
		json_decref(req);
		json_decref(seen);
		c->oom = true;
		return NULL;
	}
	for (size_t i = 0; i < v->n; i++) {
		const struct berth_ynode *it = v->kids[i];
		size_t old = path_push_index(c, i);
		if (it->kind != BERTH_YN_SCALAR || yscalar_type(it) != YT_STR || strlen(it->s) != it->len) {
			diag(c, it, "expected a property name, got %s", got(c, it));
		} else if (names != NULL && json_object_get(names, it->s) == NULL) {
			diag(c, it,
			     "required property `%s` is not in `properties`; fix: add it there or remove it "
			     "here",
			     quote(c, it->s, it->len));
		} else if (json_object_get(seen, it->s) != NULL) {
			diag(c, it, "property `%s` is listed twice", quote(c, it->s, it->len));
		} else if (json_object_set_new(seen, it->s, json_true()) < 0 ||
			   json_array_append_new(req, json_string(it->s)) < 0) {
			c->oom = true;
		}
		path_pop(c, old);
	}
	json_decref(seen);
	return req;
}

/*
 * `contentEncoding` and `contentMediaType` (JSON Schema 2020-12, section 8):
 * on `type: string` only, as a pair, `base64` the only encoding and the media
 * type `TYPE/SUBTYPE`.  berth mcp returns such an output member as image or
 * audio content (docs/mcp.md, "Images").
 */
static void content_keywords(struct mctx *c, const struct berth_ynode *const *kk,
			     const struct berth_ynode *const *kv, const char *type)
{
	for (int k = KW_CONTENT_ENCODING; k <= KW_CONTENT_MEDIA_TYPE; k++) {
		const struct berth_ynode *v = kv[k];
		const char *name = berth_schema_keywords[k];
		size_t old;
		if (v == NULL)
			continue;
		old = path_push_key(c, name, strlen(name));
		if (type != NULL && strcmp(type, "string") != 0)
			diag(c, kk[k], "`%s` applies only to `type: string`", name);
		else if (v->kind != BERTH_YN_SCALAR || yscalar_type(v) != YT_STR || strlen(v->s) != v->len)
			diag(c, v, "expected a string, got %s", got(c, v));
		else if (k == KW_CONTENT_ENCODING && strcmp(v->s, "base64") != 0)
			diag(c, v, "unsupported content encoding `%s`; the only one supported: base64",
			     quote(c, v->s, v->len));
		else if (k == KW_CONTENT_MEDIA_TYPE && !berth_schema_media_type_ok(v->s))
			diag(c, v, "`%s` is not a media type; fix: write TYPE/SUBTYPE, e.g. image/png",
			     quote(c, v->s, v->len));
		else if (kv[KW_CONTENT_ENCODING + KW_CONTENT_MEDIA_TYPE - k] == NULL)
			diag(c, kk[k], "`%s` without `%s`; fix: give both (contentEncoding: base64)", name,
			     berth_schema_keywords[KW_CONTENT_ENCODING + KW_CONTENT_MEDIA_TYPE - k]);
		path_pop(c, old);
	}
}

static json_t *full(struct mctx *c, const struct berth_ynode *n, bool top)
{
	const struct berth_ynode *kv[KW_N] = {0}, *kk[KW_N] = {0};
	const char *type = NULL;
	json_t *s = NULL, *props = NULL, *req = NULL, *items = NULL, *en = NULL, *def = NULL, *names = NULL;
	json_t *bounds[2] = {NULL, NULL}; /* minimum, maximum */
	size_t before = c->problems, old;

	for (size_t i = 0; i < berth_ymap_size(n); i++) {
		const struct berth_ynode *k = berth_ymap_key(n, i);
		int kw;
		if (k->kind != BERTH_YN_SCALAR) {
			diag(c, k, "a schema keyword must be a string, got %s", ynode_describe(k));
			continue;
		}
		old = path_push_key(c, k->s, k->len);
		kw = kw_index(k);
		if (kw < 0) {
			diag(c, k, "unknown schema keyword `%s`; supported keywords: " SCHEMA_KEYWORD_LIST,
			     quote(c, k->s, k->len));
		} else if (kv[kw] != NULL) {
			diag(c, k, "duplicate key `%s` (first at %u:%u); fix: remove one of them", k->s,
			     kk[kw]->line, kk[kw]->col);
		} else {
			kv[kw] = berth_ymap_val(n, i);
			kk[kw] = k;
		}
		path_pop(c, old);
	}

	old = path_push_key(c, "type", 4);
	if (kv[KW_TYPE] == NULL)
		diag(c, n, "missing required key; fix: add `type:` with one of " SCHEMA_TYPE_LIST);
	else
		type = type_name(c, kv[KW_TYPE]);
	if (top && type != NULL && strcmp(type, "object") != 0)
		diag(c, kv[KW_TYPE],
		     "the top level of an export's input and output must be `type: object`, not `%s`", type);
	path_pop(c, old);

	if (kv[KW_PROPERTIES] != NULL) {
		const struct berth_ynode *v = kw_enter(c, kk, kv, KW_PROPERTIES, type, "object", &old);
		if (v->kind != BERTH_YN_MAP) {
			diag(c, v, "expected a mapping of property names to schemas, got %s", got(c, v));
		} else {
			props = properties(c, v);
			/* The names given, even where their schemas have problems, for `required`. */
			names = json_object();
			for (size_t i = 0; names != NULL && i < berth_ymap_size(v); i++) {
				const struct berth_ynode *k = berth_ymap_key(v, i);
				if (k->kind == BERTH_YN_SCALAR && strlen(k->s) == k->len &&
				    json_object_set_new(names, k->s, json_true()) < 0)
					c->oom = true;
			}
			if (names == NULL)
				c->oom = true;
		}
		path_pop(c, old);
	}
	if (kv[KW_REQUIRED] != NULL) {
		const struct berth_ynode *v = kw_enter(c, kk, kv, KW_REQUIRED, type, "object", &old);
		if (v->kind != BERTH_YN_SEQ)
			diag(c, v, "expected a list of property names, got %s", got(c, v));
		else if (kv[KW_PROPERTIES] == NULL && v->n > 0)
			diag(c, v,
			     "`required` names properties but there is no `properties`; fix: add them there");
		else
			req = required(c, v, names);
		path_pop(c, old);
	}
	if (kv[KW_ITEMS] != NULL) {
		items = schema_node(c, kw_enter(c, kk, kv, KW_ITEMS, type, "array", &old), false);
		path_pop(c, old);
	}
	if (kv[KW_DESCRIPTION] != NULL) {
		const struct berth_ynode *v = kv[KW_DESCRIPTION];
		old = path_push_key(c, "description", 11);
		if (v->kind != BERTH_YN_SCALAR || yscalar_type(v) != YT_STR)
			diag(c, v, "expected a string, got %s", got(c, v));
		path_pop(c, old);
	}

	content_keywords(c, kk, kv, type);

	for (int b = 0; b < 2; b++) {
		enum kw kw = b == 0 ? KW_MINIMUM : KW_MAXIMUM;
		const struct berth_ynode *v = kv[kw];
		const char *name = berth_schema_keywords[kw];
		bool integer = type != NULL && strcmp(type, "integer") == 0;
		enum yscalar_type t;
		if (v == NULL)
			continue;
		old = path_push_key(c, name, strlen(name));
		t = v->kind == BERTH_YN_SCALAR ? yscalar_type(v) : YT_STR;
		if (type != NULL && !integer && strcmp(type, "number") != 0)
			diag(c, kk[kw], "`%s` applies only to `type: integer` or `type: number`", name);
		else if (t != YT_INT && (integer || t != YT_FLOAT))
			diag(c, v, "expected %s, got %s", integer ? "an integer" : "a number", got(c, v));
		else if ((bounds[b] = yjson(c, v)) == NULL)
			c->oom = true;
		path_pop(c, old);
	}
	if (bounds[0] != NULL && bounds[1] != NULL &&
	    (json_is_integer(bounds[0]) && json_is_integer(bounds[1])
		 ? json_integer_value(bounds[0]) > json_integer_value(bounds[1])
		 : json_number_value(bounds[0]) > json_number_value(bounds[1]))) {
		old = path_push_key(c, "minimum", 7);
		diag(c, kv[KW_MINIMUM], "`minimum` is above `maximum`");
		path_pop(c, old);
	}

	/* The schema so far, to check enum values and the default against. */
	if (c->problems == before && type != NULL) {
		s = json_pack("{s:s}", "type", type);
		if (s == NULL || (props != NULL && json_object_set(s, "properties", props) < 0) ||
		    (req != NULL && json_object_set(s, "required", req) < 0) ||
		    (items != NULL && json_object_set(s, "items", items) < 0) ||
		    (bounds[0] != NULL && json_object_set(s, "minimum", bounds[0]) < 0) ||
		    (bounds[1] != NULL && json_object_set(s, "maximum", bounds[1]) < 0))
			c->oom = true;
	}
	if (kv[KW_ENUM] != NULL) {
		const struct berth_ynode *v = kv[KW_ENUM];
		old = path_push_key(c, "enum", 4);
		if (v->kind == BERTH_YN_SEQ && v->n == 0) {
			diag(c, v, "`enum` must list at least one value");
		} else if (v->kind != BERTH_YN_SEQ) {
			diag(c, v, "expected a list of the allowed values, got %s", got(c, v));
		} else if (v->n > BERTH_SCHEMA_ENUM_MAX) {
			diag(c, v,
			     "`enum` lists %zu values; at most %d are allowed; fix: use `type: string` and "
			     "check the value in the app",
			     v->n, BERTH_SCHEMA_ENUM_MAX);
		} else {
			en = yjson(c, v);
			for (size_t i = 0; en != NULL && s != NULL && i < v->n; i++) {
				size_t o2 = path_push_index(c, i);
				yvalidate(c, s, json_array_get(en, i), v->kids[i], 0);
				path_pop(c, o2);
			}
		}
		path_pop(c, old);
		if (s != NULL && en != NULL && json_object_set(s, "enum", en) < 0)
			c->oom = true;
	}
	for (int k = KW_CONTENT_ENCODING; s != NULL && k <= KW_CONTENT_MEDIA_TYPE; k++)
		if (kv[k] != NULL &&
		    json_object_set_new(s, berth_schema_keywords[k], json_stringn(kv[k]->s, kv[k]->len)) < 0)
			c->oom = true;
	if (s != NULL && kv[KW_DESCRIPTION] != NULL) {
		const struct berth_ynode *v = kv[KW_DESCRIPTION];
		if (json_object_set_new(s, "description", json_stringn(v->s, v->len)) < 0)
			c->oom = true;
	}
	if (kv[KW_DEFAULT] != NULL) {
		old = path_push_key(c, "default", 7);
		def = yjson(c, kv[KW_DEFAULT]);
		if (def != NULL && s != NULL && c->problems == before)
			yvalidate(c, s, def, kv[KW_DEFAULT], 0);
		path_pop(c, old);
		if (s != NULL && def != NULL && json_object_set(s, "default", def) < 0)
			c->oom = true;
	}
	json_decref(props);
	json_decref(names);
	json_decref(req);
	json_decref(items);
	json_decref(en);
	json_decref(def);
	json_decref(bounds[0]);
	json_decref(bounds[1]);
	if (c->problems != before || c->oom) {
		json_decref(s);
		return NULL;
	}
	return s;
}

static json_t *schema_node(struct mctx *c, const struct berth_ynode *n, bool top)
{
	bool has_type = false;

	if (n->kind != BERTH_YN_MAP) {
		if (top)
			diag(c, n,
			     "expected a schema (a mapping with `type: object`) or the shorthand `{name: "
			     "type, ...}`, got %s",
			     got(c, n));
		else if (n->kind == BERTH_YN_SEQ)
			diag(c, n,
			     "expected a schema (a mapping with `type`) or the shorthand `{name: type, "
			     "...}`, got a list; fix: for a list write `{type: array, items: {type: ...}}`");
		else
			diag(c, n,
			     "expected a schema (a mapping with `type`) or the shorthand `{name: type, "
			     "...}`, got %s; fix: write `{type: %s}`",
			     got(c, n),
			     n->kind == BERTH_YN_SCALAR && berth_schema_is_type(n->s) ? n->s : "string");
		return NULL;
	}
	for (size_t i = 0; i < berth_ymap_size(n) && !has_type; i++)
		has_type = yscalar_is(berth_ymap_key(n, i), "type");
	if (has_type || looks_full(n))
		return full(c, n, top);
	size_t before = c->problems;
	json_t *s = shorthand(c, n);
	if (c->problems != before) {
		json_decref(s);
		return NULL;
	}
	return s;
}

json_t *yschema(struct mctx *c, const struct berth_ynode *n)
{
	return schema_node(c, n, true);
}
