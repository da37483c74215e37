/* SPDX-License-Identifier: MIT */
/*
 * schema.h - the JSON Schema subset of berth exports, and an instance
 * validator for it.
 *
 * A schema is a JSON object with `type` (string, integer, number, boolean,
 * array, object, null), and optionally `properties` and `required` (objects
 * only), `items` (arrays only), `enum`, `description`, `default`.  Nothing
 * else.  Properties not listed in `properties` are allowed.  `integer`
 * accepts JSON integers and reals without a fraction; `number` accepts both.
 *
 * Paths name a place in an instance like JSONPath: `$` is the instance
 * itself, `$.items[2].name` a member of an element; a member whose name is
 * not an identifier is written `$["a b"]`.  Reasons are lowercase, such as
 * `expected string, got integer`.
 */
#ifndef BERTH_SCHEMA_H
#define BERTH_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* An `enum` lists at most this many values. */
#define BERTH_SCHEMA_ENUM_MAX 256

/* The keywords of the subset, NULL-terminated, in documentation order. */
extern const char *const berth_schema_keywords[];
/* The type names of the subset, NULL-terminated. */
extern const char *const berth_schema_types[];

/* berth_schema_is_type - true when @name (NUL-terminated) is a type of the subset. */
bool berth_schema_is_type(const char *name);

/*
 * berth_schema_media_type_ok - true when @s (NUL-terminated) is a media type
 * as `contentMediaType` takes it: `TYPE/SUBTYPE`, each 1 to 127 characters of
 * RFC 6838's restricted names (a letter or digit, then letters, digits and
 * `!#$&-^_.+`), no parameters.
 */
bool berth_schema_media_type_ok(const char *s);

/*
 * berth_schema_validate - check @instance against @schema.
 * @schema: a schema that passed berth_schema_check(); parts of a malformed
 *     schema are reported as `invalid schema: ...` rather than ignored
 * @instance: any JSON value
 * @path, @path_len: receive the path of the first mismatch (may be NULL/0)
 * @reason, @reason_len: receive why it does not match (may be NULL/0):
 *     `expected string, got integer`, `missing required property `path``,
 *     `value not in enum ["a","b"]`
 * Returns 0 if @instance is valid, -1 at the first mismatch.
 */
int berth_schema_validate(const json_t *schema, const json_t *instance, char *path, size_t path_len,
			  char *reason, size_t reason_len);

/*
 * berth_schema_check - check that @schema itself is in the subset: an
 * object, known keywords only, a known `type`, `properties` and `required`
 * only on objects (each required name listed in `properties`, none twice),
 * `items` only on arrays, a non-empty `enum` of at most BERTH_SCHEMA_ENUM_MAX
 * values that match the schema, a string `description`, a `default` that
 * matches the schema.  It does not require the top level to be
 * `type: object` (berth's exports do).
 * @path, @path_len: receive where the first problem is (`$.properties.a.type`)
 * @reason, @reason_len: receive what it is
 * Returns 0 if @schema is valid, -1 otherwise.
 */
int berth_schema_check(const json_t *schema, char *path, size_t path_len, char *reason, size_t reason_len);

/*
 * berth_example_match - compare an actual call output with an example's
 * expected output: every member of @expected must exist in @actual and be
 * equal to it (a subset match at the top level, exact equality below it;
 * numbers compare by value, so 2 equals 2.0).
 * @path, @reason: as for berth_schema_validate(), e.g. `$.bytes` and
 *     `expected 2, got 3` or `missing property `bytes``
 * Returns 0 on a match, -1 otherwise.
 */
int berth_example_match(const json_t *expected, const json_t *actual, char *path, size_t path_len,
			char *reason, size_t reason_len);

/* The full interface, for callers that want every mismatch with its place. */

/* One step of a path: a member name, or (key == NULL) an array index. */
struct berth_schema_seg {
	const char *key;
	size_t index;
};

/*
 * berth_schema_report_fn - called once per mismatch with the path (segs[0]
 * is the first step below the instance; n == 0 is the instance itself) and
 * the reason.  Return 0 to go on, non-zero to stop.
 */
typedef int (*berth_schema_report_fn)(void *opaque, const struct berth_schema_seg *segs, size_t n,
				      const char *reason);

enum {
	/* Do not check `required` at the top level: the instance is a partial
	 * object, like an example's expected output. */
	BERTH_SCHEMA_PARTIAL = 1 << 0,
};

/*
 * berth_schema_validate_all - as berth_schema_validate() but reports every
 * mismatch through @report (in instance order), flags BERTH_SCHEMA_*.
 * Returns the number of mismatches reported (0 = valid).
 */
size_t berth_schema_validate_all(const json_t *schema, const json_t *instance, unsigned flags,
				 berth_schema_report_fn report, void *opaque);

/*
 * berth_schema_format_path - write segs as `$.a[2]["b c"]` into @buf
 * (truncated to @len, always NUL-terminated when @len > 0).
 */
void berth_schema_format_path(const struct berth_schema_seg *segs, size_t n, char *buf, size_t len);

#endif
