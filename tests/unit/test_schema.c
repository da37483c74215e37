/* SPDX-License-Identifier: MIT */
/*
 * test_schema.c - the JSON Schema subset: instance validation (paths and
 * reasons), schema checking, example output matching.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "manifest/schema.h"

static json_t *J(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, JSON_DECODE_ANY, &e);

	if (j == NULL)
		fail_msg("bad test JSON `%s`: %s", text, e.text);
	return j;
}

/* Validate and compare the first mismatch; NULL expectations = valid. */
static void want_valid(const char *schema, const char *inst, const char *path, const char *reason)
{
	json_t *s = J(schema), *i = J(inst);
	char p[256], r[256];
	int rc = berth_schema_validate(s, i, p, sizeof p, r, sizeof r);

	if (path == NULL) {
		if (rc != 0)
			fail_msg("%s against %s: unexpected %s: %s", inst, schema, p, r);
	} else {
		assert_int_equal(rc, -1);
		assert_string_equal(p, path);
		assert_string_equal(r, reason);
	}
	json_decref(s);
	json_decref(i);
}

static void test_types(void **state)
{
	(void)state;
	want_valid("{\"type\":\"string\"}", "\"x\"", NULL, NULL);
	want_valid("{\"type\":\"string\"}", "1", "$", "expected string, got integer");
	want_valid("{\"type\":\"integer\"}", "7", NULL, NULL);
	want_valid("{\"type\":\"integer\"}", "2.0", NULL, NULL);
	want_valid("{\"type\":\"integer\"}", "2.5", "$", "expected integer, got number");
	want_valid("{\"type\":\"integer\"}", "\"7\"", "$", "expected integer, got string");
	want_valid("{\"type\":\"number\"}", "2.5", NULL, NULL);
	want_valid("{\"type\":\"number\"}", "-3", NULL, NULL);
	want_valid("{\"type\":\"number\"}", "true", "$", "expected number, got boolean");
	want_valid("{\"type\":\"boolean\"}", "false", NULL, NULL);
	want_valid("{\"type\":\"boolean\"}", "null", "$", "expected boolean, got null");
	want_valid("{\"type\":\"null\"}", "null", NULL, NULL);
	want_valid("{\"type\":\"null\"}", "0", "$", "expected null, got integer");
	want_valid("{\"type\":\"array\"}", "[]", NULL, NULL);
	want_valid("{\"type\":\"array\"}", "{}", "$", "expected array, got object");
	want_valid("{\"type\":\"object\"}", "{}", NULL, NULL);
	want_valid("{\"type\":\"object\"}", "[1]", "$", "expected object, got array");
	/* no type: anything */
	want_valid("{\"description\":\"x\"}", "[1]", NULL, NULL);
}

static void test_paths(void **state)
{
	const char *s = "{\"type\":\"object\",\"properties\":{\"items\":{\"type\":\"array\",\"items\":"
			"{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},\"required\":["
			"\"name\"]}}}}";

	(void)state;
	want_valid(s, "{\"items\":[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":3}]}", "$.items[2].name",
		   "expected string, got integer");
	want_valid(s, "{\"items\":[{\"name\":\"a\"},{}]}", "$.items[1]", "missing required property `name`");
	want_valid(s, "{\"items\":[{\"name\":\"a\",\"extra\":1}],\"other\":true}", NULL, NULL);
	want_valid("{\"type\":\"object\",\"properties\":{\"a b\":{\"type\":\"string\"}}}", "{\"a b\":1}",
		   "$[\"a b\"]", "expected string, got integer");
	want_valid("{\"type\":\"object\",\"properties\":{\"q\\\"\":{\"type\":\"string\"}}}", "{\"q\\\"\":1}",
		   "$[\"q\\\"\"]", "expected string, got integer");
	want_valid(
	    "{\"type\":\"object\",\"required\":[\"path\"],\"properties\":{\"path\":{\"type\":\"string\"}}}",
	    "{}", "$", "missing required property `path`");
}

static void want_check(const char *schema, const char *path, const char *reason);

static void test_bounds(void **state)
{
	(void)state;
	want_valid("{\"type\":\"integer\",\"minimum\":1,\"maximum\":60000}", "1", NULL, NULL);
	want_valid("{\"type\":\"integer\",\"minimum\":1,\"maximum\":60000}", "60000", NULL, NULL);
	want_valid("{\"type\":\"integer\",\"minimum\":1,\"maximum\":60000}", "0", "$", "must be at least 1");
	want_valid("{\"type\":\"integer\",\"minimum\":1,\"maximum\":60000}", "60001", "$",
		   "must be at most 60000");
	want_valid("{\"type\":\"integer\",\"maximum\":9007199254740993}", "9007199254740994", "$",
		   "must be at most 9007199254740993");
	want_valid("{\"type\":\"number\",\"minimum\":0.5}", "0.25", "$", "must be at least 0.5");
	want_valid("{\"type\":\"number\",\"minimum\":0.5}", "1", NULL, NULL);
	want_check("{\"type\":\"string\",\"minimum\":1}", "$.minimum",
		   "`minimum` applies only to `type: integer` or `type: number`");
	want_check("{\"type\":\"integer\",\"maximum\":1.5}", "$.maximum",
		   "`maximum` must be an integer, got number");
	want_check("{\"type\":\"number\",\"maximum\":\"9\"}", "$.maximum",
		   "`maximum` must be a number, got string");
	want_check("{\"type\":\"integer\",\"minimum\":5,\"maximum\":4}", "$.minimum",
		   "`minimum` is above `maximum`");
	want_check("{\"type\":\"integer\",\"minimum\":5,\"default\":4}", "$.default", "must be at least 5");
}

static void test_enum(void **state)
{
	(void)state;
	want_valid("{\"type\":\"string\",\"enum\":[\"a\",\"b\"]}", "\"b\"", NULL, NULL);
	want_valid("{\"type\":\"string\",\"enum\":[\"a\",\"b\"]}", "\"c\"", "$",
		   "value not in enum [\"a\",\"b\"]");
	/* numbers compare by value */
	want_valid("{\"type\":\"number\",\"enum\":[1,2.5]}", "1.0", NULL, NULL);
	want_valid("{\"enum\":[[1,{\"a\":null}]]}", "[1,{\"a\":null}]", NULL, NULL);
	want_valid("{\"enum\":[[1,{\"a\":null}]]}", "[1,{\"a\":0}]", "$",
		   "value not in enum [[1,{\"a\":null}]]");
}

struct collected {
	char lines[8][320];
	size_t n;
};

static int collect(void *opaque, const struct berth_schema_seg *segs, size_t n, const char *reason)
{
	struct collected *c = opaque;
	char path[256];

	berth_schema_format_path(segs, n, path, sizeof path);
	if (c->n < 8)
		snprintf(c->lines[c->n++], sizeof c->lines[0], "%s: %s", path, reason);
	return 0;
}

static void test_validate_all(void **state)
{
	json_t *s =
	    J("{\"type\":\"object\",\"required\":[\"a\",\"b\"],\"properties\":{\"a\":{\"type\":\"string\"},"
	      "\"b\":{\"type\":\"object\",\"required\":[\"x\"]},\"c\":{\"type\":\"array\",\"items\":"
	      "{\"type\":\"integer\"}}}}");
	json_t *i = J("{\"a\":1,\"c\":[1,\"two\",3,4.5]}");
	json_t *partial = J("{\"b\":{}}");
	struct collected c = {0};

	(void)state;
	assert_int_equal(berth_schema_validate_all(s, i, 0, collect, &c), 4);
	assert_string_equal(c.lines[0], "$: missing required property `b`");
	assert_string_equal(c.lines[1], "$.a: expected string, got integer");
	assert_string_equal(c.lines[2], "$.c[1]: expected integer, got string");
	assert_string_equal(c.lines[3], "$.c[3]: expected integer, got number");
	/* partial: top-level `required` is skipped, nested ones are not */
	memset(&c, 0, sizeof c);
	assert_int_equal(berth_schema_validate_all(s, partial, BERTH_SCHEMA_PARTIAL, collect, &c), 1);
	assert_string_equal(c.lines[0], "$.b: missing required property `x`");
	json_decref(s);
	json_decref(i);
	json_decref(partial);
}

static void test_validate_null_buffers(void **state)
{
	json_t *s = J("{\"type\":\"string\"}"), *i = J("1");

	(void)state;
	assert_int_equal(berth_schema_validate(s, i, NULL, 0, NULL, 0), -1);
	json_decref(s);
	json_decref(i);
}

static void want_check(const char *schema, const char *path, const char *reason)
{
	json_t *s = J(schema);
	char p[256], r[512];
	int rc = berth_schema_check(s, p, sizeof p, r, sizeof r);

	if (path == NULL) {
		if (rc != 0)
			fail_msg("%s: unexpected %s: %s", schema, p, r);
	} else {
		if (rc != -1)
			fail_msg("%s: accepted", schema);
		assert_string_equal(p, path);
		assert_string_equal(r, reason);
	}
	json_decref(s);
}

static void test_check(void **state)
{
	(void)state;
	want_check(
	    "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\",\"description\":\"d\"},"
	    "\"n\":{\"type\":\"integer\",\"enum\":[1,2],\"default\":2},\"l\":{\"type\":\"array\",\"items\":"
	    "{\"type\":\"string\"}}},\"required\":[\"path\"]}",
	    NULL, NULL);
	want_check("[]", "$", "a schema must be an object, got array");
	want_check("{\"type\":\"string\",\"minLength\":1}", "$.minLength",
		   "unknown schema keyword `minLength`; supported keywords: type, properties, required, "
		   "items, enum, "
		   "description, default, minimum, maximum, contentEncoding, contentMediaType");
	/* contentEncoding and contentMediaType: a pair on type string, base64, TYPE/SUBTYPE */
	want_check("{\"type\":\"string\",\"contentEncoding\":\"base64\",\"contentMediaType\":"
		   "\"image/png\"}",
		   NULL, NULL);
	want_check("{\"type\":\"integer\",\"contentEncoding\":\"base64\",\"contentMediaType\":"
		   "\"image/png\"}",
		   "$.contentEncoding", "`contentEncoding` applies only to `type: string`");
	want_check("{\"type\":\"string\",\"contentEncoding\":\"base32\",\"contentMediaType\":"
		   "\"image/png\"}",
		   "$.contentEncoding", "unsupported content encoding; the only one supported: base64");
	want_check("{\"type\":\"string\",\"contentEncoding\":\"base64\",\"contentMediaType\":"
		   "\"image/png; q=1\"}",
		   "$.contentMediaType", "`contentMediaType` is not a media type (TYPE/SUBTYPE)");
	want_check("{\"type\":\"string\",\"contentMediaType\":\"image/png\"}", "$.contentMediaType",
		   "`contentMediaType` without `contentEncoding`");
	want_check("{}", "$",
		   "missing `type`; fix: add `type` with one of string, integer, number, boolean, array, "
		   "object, null");
	want_check("{\"type\":\"str\"}", "$.type",
		   "unknown type `str`; known types: string, integer, number, boolean, array, object, null");
	want_check("{\"type\":[\"string\"]}", "$.type",
		   "`type` must be a string, one of string, integer, number, boolean, array, object, null");
	want_check("{\"type\":\"string\",\"properties\":{}}", "$.properties",
		   "`properties` applies only to `type: object`");
	want_check("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"nope\"}}}", "$.properties.a.type",
		   "unknown type `nope`; known types: string, integer, number, boolean, array, object, null");
	want_check("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}},\"required\":[\"b\"]}",
		   "$.required[0]", "required property `b` is not in `properties`");
	want_check(
	    "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}},\"required\":[\"a\",\"a\"]}",
	    "$.required[1]", "property `a` is listed twice");
	want_check("{\"type\":\"object\",\"required\":[1]}", "$.required[0]",
		   "expected a property name, got integer");
	want_check("{\"type\":\"string\",\"items\":{\"type\":\"string\"}}", "$.items",
		   "`items` applies only to `type: array`");
	want_check("{\"type\":\"array\",\"items\":{\"type\":\"array\",\"items\":{\"type\":\"x\"}}}",
		   "$.items.items.type",
		   "unknown type `x`; known types: string, integer, number, boolean, array, object, null");
	want_check("{\"type\":\"string\",\"enum\":[]}", "$.enum",
		   "`enum` must be a non-empty array of values");
	want_check("{\"type\":\"string\",\"enum\":[\"a\",1]}", "$.enum[1]", "expected string, got integer");
	want_check("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\",\"enum\":[\"x\"],"
		   "\"default\":\"y\"}}}",
		   "$.properties.a.default", "value not in enum [\"x\"]");
	want_check(
	    "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"}},\"default\":{\"a\":\"s\"}}",
	    "$.default.a", "expected integer, got string");
	want_check("{\"type\":\"string\",\"description\":5}", "$.description",
		   "`description` must be a string, got integer");
}

static void want_match(const char *exp, const char *act, const char *path, const char *reason)
{
	json_t *e = J(exp), *a = J(act);
	char p[256], r[512];
	int rc = berth_example_match(e, a, p, sizeof p, r, sizeof r);

	if (path == NULL) {
		if (rc != 0)
			fail_msg("%s vs %s: unexpected %s: %s", exp, act, p, r);
	} else {
		assert_int_equal(rc, -1);
		assert_string_equal(p, path);
		assert_string_equal(r, reason);
	}
	json_decref(e);
	json_decref(a);
}

static void test_example_match(void **state)
{
	(void)state;
	want_match("{\"bytes\":2}", "{\"bytes\":2,\"path\":\"x\"}", NULL, NULL);
	want_match("{\"bytes\":2}", "{\"bytes\":2.0}", NULL, NULL);
	want_match("{}", "{\"a\":1}", NULL, NULL);
	want_match("{\"bytes\":2}", "{\"bytes\":3}", "$.bytes", "expected 2, got 3");
	want_match("{\"bytes\":2}", "{}", "$.bytes", "missing property `bytes`");
	want_match("{\"bytes\":2}", "[]", "$", "expected object, got array");
	/* exact below the top level */
	want_match("{\"o\":{\"a\":1}}", "{\"o\":{\"a\":1,\"b\":2}}", "$.o", "unexpected property `b`");
	want_match("{\"o\":{\"a\":[1,2]}}", "{\"o\":{\"a\":[1,3]}}", "$.o.a[1]", "expected 2, got 3");
	want_match("{\"o\":{\"a\":[1,2]}}", "{\"o\":{\"a\":[1]}}", "$.o.a", "expected [1,2], got [1]");
	want_match("{\"s\":\"x\"}", "{\"s\":null}", "$.s", "expected \"x\", got null");
}

static void test_hostile_names(void **state)
{
	char big[4096], want[256];
	size_t o;

	(void)state;
	/* names from schemas and instances are escaped in reasons and paths */
	want_valid(
	    "{\"type\":\"object\",\"required\":[\"a\\u001b[2J\"],\"properties\":{\"a\\u001b[2J\":{\"type\":"
	    "\"string\"}}}",
	    "{}", "$", "missing required property `a\\u001b[2J`");
	want_valid("{\"type\":\"object\",\"properties\":{\"\u00e9\\u202e\":{\"type\":\"string\"}}}",
		   "{\"\u00e9\\u202e\":1}", "$[\"\\u00e9\\u202e\"]", "expected string, got integer");
	want_match("{\"o\":{}}", "{\"o\":{\"\\n\":1}}", "$.o", "unexpected property `\\n`");
	want_match("{\"r\":0.1}", "{\"r\":2.0}", "$.r", "expected 0.1, got 2.0");
	want_match("{\"s\":\"\\u202e\"}", "{\"s\":\"\\ud83d\\ude00\"}", "$.s",
		   "expected \"\\u202e\", got \"\\ud83d\\ude00\"");
	/* a long value is cut: at most 120 bytes of JSON, then "..." */
	o = (size_t)snprintf(big, sizeof big, "{\"enum\":[\"");
	memset(big + o, 'a', 200);
	snprintf(big + o + 200, sizeof big - o - 200, "\"]}");
	snprintf(want, sizeof want, "value not in enum [\"%.118s...", big + o);
	want_valid(big, "1", "$", want);
	/* an enum has at most BERTH_SCHEMA_ENUM_MAX values */
	o = (size_t)snprintf(big, sizeof big, "{\"type\":\"integer\",\"enum\":[0");
	for (int i = 1; i <= BERTH_SCHEMA_ENUM_MAX; i++)
		o += (size_t)snprintf(big + o, sizeof big - o, ",%d", i);
	snprintf(big + o, sizeof big - o, "]}");
	want_check(big, "$.enum", "`enum` lists 257 values; at most 256 are allowed");
}

static void test_is_type(void **state)
{
	(void)state;
	for (size_t i = 0; berth_schema_types[i] != NULL; i++)
		assert_true(berth_schema_is_type(berth_schema_types[i]));
	assert_false(berth_schema_is_type("str"));
	assert_false(berth_schema_is_type(""));
	assert_string_equal(berth_schema_keywords[0], "type");
	assert_true(berth_schema_media_type_ok("image/png"));
	assert_true(berth_schema_media_type_ok("image/svg+xml"));
	assert_true(berth_schema_media_type_ok("audio/x-wav"));
	assert_false(berth_schema_media_type_ok("image"));
	assert_false(berth_schema_media_type_ok("image/"));
	assert_false(berth_schema_media_type_ok("/png"));
	assert_false(berth_schema_media_type_ok("image/png/x"));
	assert_false(berth_schema_media_type_ok("image/png;charset=x"));
	assert_false(berth_schema_media_type_ok("-image/png"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_types),         cmocka_unit_test(test_paths),
	    cmocka_unit_test(test_enum),          cmocka_unit_test(test_bounds),
	    cmocka_unit_test(test_validate_all),  cmocka_unit_test(test_validate_null_buffers),
	    cmocka_unit_test(test_check),         cmocka_unit_test(test_example_match),
	    cmocka_unit_test(test_hostile_names), cmocka_unit_test(test_is_type),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
