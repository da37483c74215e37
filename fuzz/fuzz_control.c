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
 *  - differential: both agree with the checks supervise.c's
 *    handle_request() and dev.c's serve() make inline today (copied below
 *    as legacy_*), so the two can switch to the parsers without a change
 *    of behaviour, except where the parsers are stricter on purpose: a line
 *    with a NUL byte is refused (json_loads stopped at the NUL; jansson's
 *    json_loadb takes a NUL after a number for its end: {"a":1\0} loads),
 *    and a size beyond int is out of range (the cast to int truncated
 *    4294967346 to 50).
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

/* ---- supervise.c's handle_request() and set_size() today: the answer's
 * error message, or the op with the size it applies ---- */
struct legacy_sess {
	char why[512]; /* "" when accepted */
	int op;
	int rows, cols; /* 0, 0: size kept */
	long long grace;
};

static int get_size_arg(json_t *req, const char *key)
{
	json_t *v = json_object_get(req, key);

	return json_is_integer(v) ? (int)json_integer_value(v) : 0;
}

static void legacy_session(const char *cline, struct legacy_sess *o)
{
	json_error_t je;
	json_t *req = json_loads(cline, 0, &je);
	const char *op = json_string_value(json_object_get(req, "op"));

	memset(o, 0, sizeof *o);
	o->op = -1;
	if (!json_is_object(req) || op == NULL) {
		snprintf(o->why, sizeof o->why, "bad request: %s", req == NULL ? je.text : "no `op`");
	} else if (strcmp(op, "send") == 0 && !json_is_string(json_object_get(req, "data"))) {
		snprintf(o->why, sizeof o->why, "send needs a string `data`");
	} else {
		for (int i = 0; i < 6; i++)
			if (strcmp(op, op_names[i]) == 0)
				o->op = i;
		if (o->op < 0)
			snprintf(o->why, sizeof o->why, "unknown op `%s`", op);
		if (o->op == BERTH_CONTROL_RESIZE || o->op == BERTH_CONTROL_ATTACH) {
			int rows = get_size_arg(req, "rows"), cols = get_size_arg(req, "cols");
			if (!(rows < 2 || cols < 10 || rows > 500 || cols > 1000)) {
				o->rows = rows;
				o->cols = cols;
			}
		}
		if (o->op == BERTH_CONTROL_STOP) {
			json_t *g = json_object_get(req, "grace_ms");
			long long grace = json_is_integer(g) ? json_integer_value(g) : 5000;
			o->grace = grace < 0 ? 0 : grace > 600000 ? 600000 : grace;
		}
	}
	json_decref(req);
}

/* ---- dev.c's client_input() and serve() today, up to the app ---- */
struct legacy_dev {
	int code; /* 0: accepted */
	const char *message;
	int method;
	const char *app_dir; /* valid while req lives */
};

static json_t *legacy_dev(const char *line, size_t len, struct legacy_dev *o)
{
	json_t *req = json_loadb(line, len, 0, NULL), *params, *jt, *input;
	const char *method;

	memset(o, 0, sizeof *o);
	if (req == NULL) {
		o->code = BERTH_RPC_PARSE_ERROR;
		o->message = "not JSON";
		return NULL;
	}
	params = json_object_get(req, "params");
	method = json_string_value(json_object_get(req, "method"));
	if (method != NULL && strcmp(method, "info") == 0) {
		o->method = BERTH_DEVCTL_INFO;
		return req;
	}
	if (method != NULL && strcmp(method, "watch") == 0) {
		o->method = BERTH_DEVCTL_WATCH;
		return req;
	}
	if (method == NULL || strcmp(method, "call") != 0 || !json_is_string(json_object_get(params, "export"))) {
		o->code = BERTH_RPC_METHOD_NOT_FOUND;
		o->message = "berth dev knows `call`, `info` and `watch`";
		return req;
	}
	o->method = BERTH_DEVCTL_CALL;
	o->app_dir = json_string_value(json_object_get(params, "app_dir"));
	jt = json_object_get(params, "timeout_ms");
	input = json_object_get(params, "input");
	if (jt != NULL && !json_is_null(jt) &&
	    (!json_is_integer(jt) || json_integer_value(jt) < 0 || json_integer_value(jt) > 3600000)) {
		o->code = BERTH_RPC_INVALID_PARAMS;
		o->message = "timeout_ms must be an integer from 0 to 3600000";
		return req;
	}
	if (json_is_null(input))
		input = NULL;
	if (input != NULL && !json_is_object(input)) {
		o->code = BERTH_RPC_INVALID_PARAMS;
		o->message = "input must be an object";
	}
	return req;
}

/* The integer member @key of @msg is beyond int (where the cast truncated). */
static bool beyond_int(const json_t *msg, const char *key)
{
	const json_t *v = json_object_get(msg, key);

	return json_is_integer(v) && (json_integer_value(v) > INT32_MAX || json_integer_value(v) < INT32_MIN);
}

static void check_session(const char *line, size_t len)
{
	struct berth_control_req r, r2;
	struct legacy_sess old;
	char why[512] = "", why2[512];
	int rc = berth_control_parse(line, len, &r, why, sizeof why);
	bool has_nul = memchr(line, '\0', len) != NULL;

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

	/* What supervise.c does today, on the line as its buffer holds it. */
	char *cline = malloc(len + 1);
	memcpy(cline, line, len);
	cline[len] = '\0';
	legacy_session(cline, &old);
	free(cline);
	if (has_nul) {
		CHECK(rc < 0); /* stricter: the bytes after a NUL were never looked at */
	} else if (rc < 0) {
		CHECK(strcmp(why, old.why) == 0);
	} else {
		CHECK(old.why[0] == '\0' && old.op == (int)r.op);
		CHECK(old.grace == r.grace_ms);
		if (!beyond_int(r.msg, "rows") && !beyond_int(r.msg, "cols"))
			CHECK(old.rows == r.rows && old.cols == r.cols);
		else
			CHECK(r.rows == 0 && r.cols == 0);
	}
	berth_control_req_free(&r);
}

static void check_dev(const char *line, size_t len)
{
	struct berth_devctl_req r;
	struct legacy_dev old;
	int code = 0;
	const char *message = NULL;
	int rc = berth_devctl_parse(line, len, &r, &code, &message);
	json_t *oreq = legacy_dev(line, len, &old);

	if (rc < 0) {
		CHECK(message != NULL && message[0] != '\0');
		CHECK(code == BERTH_RPC_PARSE_ERROR || code == BERTH_RPC_METHOD_NOT_FOUND ||
		      code == BERTH_RPC_INVALID_PARAMS);
		CHECK((code == BERTH_RPC_PARSE_ERROR) == (r.msg == NULL));
		CHECK(code != BERTH_RPC_INVALID_PARAMS || (r.method == BERTH_DEVCTL_CALL && r.export != NULL));
	} else {
		CHECK(rc == 0 && r.msg != NULL);
		CHECK(r.method == BERTH_DEVCTL_INFO || r.method == BERTH_DEVCTL_WATCH || r.method == BERTH_DEVCTL_CALL);
		CHECK(r.id == json_object_get(r.msg, "id"));
		if (r.method == BERTH_DEVCTL_CALL) {
			json_t *params = json_object_get(r.msg, "params");
			CHECK(r.export != NULL && r.export == json_string_value(json_object_get(params, "export")));
			CHECK(r.input == NULL || (json_is_object(r.input) && r.input == json_object_get(params, "input")));
			CHECK(r.timeout_ms <= BERTH_DEVCTL_TIMEOUT_MAX_MS);
			CHECK(r.app_dir == json_string_value(json_object_get(params, "app_dir")));

			/* The canonical call rebuilt parses the same. */
			struct berth_devctl_req r2;
			int c2;
			const char *m2;
			json_t *c = json_pack("{s:s, s:{s:s, s:I}}", "method", "call", "params", "export", r.export,
					      "timeout_ms", (json_int_t)r.timeout_ms);
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
	/* Differential: the same answer as dev.c gives today (but for a NUL
	 * byte, which jansson can take for the end of a number). */
	if (memchr(line, '\0', len) != NULL) {
		CHECK(rc < 0 && code == BERTH_RPC_PARSE_ERROR);
		json_decref(oreq);
		berth_devctl_req_free(&r);
		return;
	}
	CHECK(old.code == (rc < 0 ? code : 0));
	CHECK(old.message == NULL ? message == NULL || rc == 0 : strcmp(old.message, message) == 0);
	CHECK(old.code != 0 && old.code != BERTH_RPC_INVALID_PARAMS ? true : old.method == (int)r.method);
	CHECK((old.app_dir == NULL) == (r.app_dir == NULL) && (old.app_dir == NULL || strcmp(old.app_dir, r.app_dir) == 0));
	json_decref(oreq);
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
