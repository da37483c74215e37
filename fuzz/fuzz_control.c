/* SPDX-License-Identifier: MIT */
/*
 * fuzz_control.c - libFuzzer target for the request parsers of the two
 * control sockets: a session's (berth_control_parse, src/session/control.c)
 * and `berth dev`'s (berth_devctl_parse, src/supervisor/devctl.c).  The
 * input (at most 64 KiB) is split on newlines, as both sockets frame it;
 * every line goes through both parsers.
 *
 * Invariants (a violation aborts):
 *  - session: a refused line has an empty request and a message; an
 *    accepted one has an op of the table, a send's text is the "data"
 *    string (its length, no NUL), a size is both values within the bounds
 *    or both 0, a grace time within 0..600000;
 *  - dev: a refused line has one of the documented code/message pairs, a
 *    call's export is a string, its input an object or NULL, its timeout
 *    within 0..3600000; "id" is the request's own;
 *  - the canonical request rebuilt from what was parsed parses to the same
 *    operation (nothing is read that the request did not say);
 *  - documented behaviour (docs/sessions.md "Control protocol", the
 *    control socket of `berth dev` in docs/mcp.md), judged on the line as
 *    JSON independently of the parsers: the session's answer for each kind
 *    of bad line ("bad request: a NUL byte in the request", "bad request:
 *    ..." for no JSON, "bad request: no `op`", "unknown op `OP`", "send
 *    needs a string `data`"), the op named, a size applied only when both
 *    values are integers in 2-500 rows and 10-1000 columns (compared as
 *    the JSON integers they are: none beyond int is truncated into range),
 *    the grace time 5000 by default and clamped to 0..600000; dev's code
 *    and message for each refusal in the order dev.c answers them (not
 *    JSON or a NUL byte: -32700; no object, another method, a call without
 *    a string export: -32601; then timeout_ms, then input: -32602), and
 *    app_dir known for every call that got as far as its parameters.
 * (supervise.c and dev.c act on these parsers' results: no copy of the
 * inline checks they once made is needed to compare against.)
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session/control.h"
#include "supervisor/app.h"
#include "supervisor/devctl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_NAME "fuzz_control"
#include "fuzz_line_check.h"

static const char *const op_names[] = {"info", "peek", "send", "resize", "attach", "stop"};

static int op_index(const char *op)
{
	for (int i = 0; op != NULL && i < (int)(sizeof op_names / sizeof op_names[0]); i++)
		if (strcmp(op, op_names[i]) == 0)
			return i;
	return -1;
}

static bool int_in(const json_t *v, json_int_t lo, json_int_t hi)
{
	return json_is_integer(v) && json_integer_value(v) >= lo && json_integer_value(v) <= hi;
}

/* docs/sessions.md: what the session answers the line (@rc, @r, @why); a key
 * named twice is not JSON to it. */
static void documented_session(const char *line, size_t len, int rc, const struct berth_control_req *r,
			       const char *why)
{
	bool nul = memchr(line, '\0', len) != NULL;
	json_t *j = nul ? NULL : json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	const char *op = json_string_value(json_object_get(j, "op"));
	int k = op_index(op);
	char want[512];

	if (nul) {
		CHECK(rc < 0 && strcmp(why, "bad request: a NUL byte in the request") == 0);
	} else if (j == NULL) {
		CHECK(rc < 0 && strncmp(why, "bad request: ", 13) == 0 &&
		      strcmp(why, "bad request: no `op`") != 0);
	} else if (!json_is_object(j) || op == NULL) {
		CHECK(rc < 0 && strcmp(why, "bad request: no `op`") == 0);
	} else if (k < 0) {
		snprintf(want, sizeof want, "unknown op `%s`", op);
		CHECK(rc < 0 && strcmp(why, want) == 0);
	} else if (k == BERTH_CONTROL_SEND && !json_is_string(json_object_get(j, "data"))) {
		CHECK(rc < 0 && strcmp(why, "send needs a string `data`") == 0);
	} else {
		CHECK(rc == 0 && (int)r->op == k);
		if (k == BERTH_CONTROL_RESIZE || k == BERTH_CONTROL_ATTACH) {
			const json_t *rows = json_object_get(j, "rows"), *cols = json_object_get(j, "cols");
			if (int_in(rows, 2, 500) && int_in(cols, 10, 1000))
				CHECK(r->rows == json_integer_value(rows) &&
				      r->cols == json_integer_value(cols));
			else
				CHECK(r->rows == 0 && r->cols == 0);
		}
		if (k == BERTH_CONTROL_STOP) {
			const json_t *g = json_object_get(j, "grace_ms");
			json_int_t v = json_is_integer(g) ? json_integer_value(g) : 5000;
			CHECK(r->grace_ms == (v < 0 ? 0 : v > 600000 ? 600000 : v));
		}
	}
	json_decref(j);
}

/* docs/mcp.md (berth dev's control socket): the answer dev.c gives the line, up to the app. */
static void documented_dev(const char *line, size_t len, int rc, const struct berth_devctl_req *r, int code,
			   const char *message)
{
	json_t *j =
	    memchr(line, '\0', len) != NULL ? NULL : json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	const char *method = json_string_value(json_object_get(j, "method"));
	json_t *params = json_object_get(j, "params"), *t = json_object_get(params, "timeout_ms"),
	       *in = json_object_get(params, "input");
	bool info = method != NULL && strcmp(method, "info") == 0,
	     watch = method != NULL && strcmp(method, "watch") == 0;

	if (j == NULL) {
		CHECK(rc < 0 && code == BERTH_RPC_PARSE_ERROR && strcmp(message, "not JSON") == 0 &&
		      r->id == NULL);
		return;
	}
	/* the answer carries the request's own id (null when it has none) */
	CHECK(r->id == NULL ? json_object_get(j, "id") == NULL : json_equal(r->id, json_object_get(j, "id")));
	if (info || watch) {
		CHECK(rc == 0 && r->method == (info ? BERTH_DEVCTL_INFO : BERTH_DEVCTL_WATCH));
	} else if (method == NULL || strcmp(method, "call") != 0 ||
		   !json_is_string(json_object_get(params, "export"))) {
		CHECK(rc < 0 && code == BERTH_RPC_METHOD_NOT_FOUND &&
		      strcmp(message, "berth dev knows `call`, `info` and `watch`") == 0);
	} else {
		const char *dir = json_string_value(json_object_get(params, "app_dir"));
		CHECK(r->method == BERTH_DEVCTL_CALL);
		CHECK(dir == NULL ? r->app_dir == NULL : r->app_dir != NULL && strcmp(dir, r->app_dir) == 0);
		if (t != NULL && !json_is_null(t) && !int_in(t, 0, 3600000))
			CHECK(rc < 0 && code == BERTH_RPC_INVALID_PARAMS &&
			      strcmp(message, "timeout_ms must be an integer from 0 to 3600000") == 0);
		else if (in != NULL && !json_is_null(in) && !json_is_object(in))
			CHECK(rc < 0 && code == BERTH_RPC_INVALID_PARAMS &&
			      strcmp(message, "input must be an object") == 0);
		else
			CHECK(rc == 0 && r->timeout_ms == (unsigned)json_integer_value(t) &&
			      (in == NULL || json_is_null(in) ? r->input == NULL : json_equal(r->input, in)));
	}
	json_decref(j);
}

static void check_session(const char *line, size_t len)
{
	struct berth_control_req r, r2;
	char why[512] = "", why2[512];
	int rc = berth_control_parse(line, len, &r, why, sizeof why);

	if (rc < 0) {
		CHECK(r.msg == NULL && why[0] != '\0');
	} else {
		CHECK(rc == 0 && json_is_object(r.msg));
		CHECK((unsigned)r.op < sizeof op_names / sizeof op_names[0]);
		CHECK(strcmp(json_string_value(json_object_get(r.msg, "op")), op_names[r.op]) == 0);
		if (r.op == BERTH_CONTROL_SEND) {
			json_t *d = json_object_get(r.msg, "data");
			CHECK(r.data == json_string_value(d) && r.data_len == json_string_length(d));
			CHECK(memchr(r.data, '\0', r.data_len) == NULL);
			CHECK(r.paste == json_is_true(json_object_get(r.msg, "paste")));
			CHECK(r.enter == json_is_true(json_object_get(r.msg, "enter")));
		} else {
			CHECK(r.data == NULL && !r.paste && !r.enter);
		}
		CHECK((r.rows == 0 && r.cols == 0) ||
		      (r.rows >= BERTH_CONTROL_ROWS_MIN && r.rows <= BERTH_CONTROL_ROWS_MAX &&
		       r.cols >= BERTH_CONTROL_COLS_MIN && r.cols <= BERTH_CONTROL_COLS_MAX));
		CHECK(r.op == BERTH_CONTROL_RESIZE || r.op == BERTH_CONTROL_ATTACH || r.rows == 0);
		CHECK(r.op == BERTH_CONTROL_STOP ? r.grace_ms >= 0 && r.grace_ms <= BERTH_CONTROL_GRACE_MAX_MS
						 : r.grace_ms == 0);

		/* The canonical request of what was parsed parses the same. */
		json_t *c = json_pack("{s:s}", "op", op_names[r.op]);
		if (r.op == BERTH_CONTROL_SEND) {
			json_object_set_new(c, "data", json_stringn(r.data, r.data_len));
			json_object_set_new(c, "paste", json_boolean(r.paste));
			json_object_set_new(c, "enter", json_boolean(r.enter));
		}
		if (r.rows != 0) {
			json_object_set_new(c, "rows", json_integer(r.rows));
			json_object_set_new(c, "cols", json_integer(r.cols));
		}
		if (r.op == BERTH_CONTROL_STOP)
			json_object_set_new(c, "grace_ms", json_integer(r.grace_ms));
		char *text = json_dumps(c, JSON_COMPACT);
		CHECK(berth_control_parse(text, strlen(text), &r2, why2, sizeof why2) == 0);
		CHECK(r2.op == r.op && r2.rows == r.rows && r2.cols == r.cols && r2.grace_ms == r.grace_ms &&
		      r2.paste == r.paste && r2.enter == r.enter && r2.data_len == r.data_len &&
		      (r.data == NULL || memcmp(r2.data, r.data, r.data_len) == 0));
		berth_control_req_free(&r2);
		free(text);
		json_decref(c);
	}

	documented_session(line, len, rc, &r, why);
	berth_control_req_free(&r);
}

static void check_dev(const char *line, size_t len)
{
	struct berth_devctl_req r;
	int code = 0;
	const char *message = NULL;
	int rc = berth_devctl_parse(line, len, &r, &code, &message);

	if (rc < 0) {
		CHECK(message != NULL && message[0] != '\0');
		CHECK(code == BERTH_RPC_PARSE_ERROR || code == BERTH_RPC_METHOD_NOT_FOUND ||
		      code == BERTH_RPC_INVALID_PARAMS);
		CHECK((code == BERTH_RPC_PARSE_ERROR) == (r.msg == NULL));
		CHECK(code != BERTH_RPC_INVALID_PARAMS ||
		      (r.method == BERTH_DEVCTL_CALL && r.export != NULL));
	} else {
		CHECK(rc == 0 && r.msg != NULL);
		CHECK(r.method == BERTH_DEVCTL_INFO || r.method == BERTH_DEVCTL_WATCH ||
		      r.method == BERTH_DEVCTL_CALL);
		CHECK(r.id == json_object_get(r.msg, "id"));
		if (r.method == BERTH_DEVCTL_CALL) {
			json_t *params = json_object_get(r.msg, "params");
			CHECK(r.export != NULL &&
			      r.export == json_string_value(json_object_get(params, "export")));
			CHECK(r.input == NULL ||
			      (json_is_object(r.input) && r.input == json_object_get(params, "input")));
			CHECK(r.timeout_ms <= BERTH_DEVCTL_TIMEOUT_MAX_MS);
			CHECK(r.app_dir == json_string_value(json_object_get(params, "app_dir")));

			/* The canonical call rebuilt parses the same. */
			struct berth_devctl_req r2;
			int c2;
			const char *m2;
			json_t *c = json_pack("{s:s, s:{s:s, s:I}}", "method", "call", "params", "export",
					      r.export, "timeout_ms", (json_int_t)r.timeout_ms);
			json_t *p = json_object_get(c, "params");
			if (r.input != NULL)
				json_object_set(p, "input", r.input);
			if (r.app_dir != NULL)
				json_object_set_new(p, "app_dir", json_string(r.app_dir));
			char *text = json_dumps(c, JSON_COMPACT);
			CHECK(text != NULL && berth_devctl_parse(text, strlen(text), &r2, &c2, &m2) == 0);
			CHECK(r2.method == BERTH_DEVCTL_CALL && strcmp(r2.export, r.export) == 0 &&
			      r2.timeout_ms == r.timeout_ms &&
			      (r.input == NULL ? r2.input == NULL : json_equal(r2.input, r.input)) &&
			      (r.app_dir == NULL ? r2.app_dir == NULL : strcmp(r2.app_dir, r.app_dir) == 0));
			berth_devctl_req_free(&r2);
			free(text);
			json_decref(c);
		} else {
			CHECK(r.export == NULL && r.input == NULL && r.timeout_ms == 0);
		}
	}
	documented_dev(line, len, rc, &r, code, message);
	berth_devctl_req_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;

	if (size > 65536)
		return 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);

		check_session(p, len);
		check_dev(p, len);
		p += len + 1;
	}
	return 0;
}
