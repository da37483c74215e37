/* SPDX-License-Identifier: MIT */
/*
 * control.c - a session control socket's request line into an operation
 * (control.h).  The checks the supervisor made inline, in one pure function:
 * a size is taken only when both values are in range (an integer beyond
 * int is out of range, not truncated into it), the grace time is clamped,
 * and a line with a NUL byte is refused (json_loads read up to it).
 */
#include "control.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *name;
	enum berth_control_op op;
} ops[] = {
    {"info", BERTH_CONTROL_INFO},     {"peek", BERTH_CONTROL_PEEK},     {"send", BERTH_CONTROL_SEND},
    {"resize", BERTH_CONTROL_RESIZE}, {"attach", BERTH_CONTROL_ATTACH}, {"stop", BERTH_CONTROL_STOP},
};

static bool in_range(const json_t *v, json_int_t lo, json_int_t hi)
{
	return json_is_integer(v) && json_integer_value(v) >= lo && json_integer_value(v) <= hi;
}

static void parse_size(struct berth_control_req *req)
{
	const json_t *r = json_object_get(req->msg, "rows"), *c = json_object_get(req->msg, "cols");

	if (in_range(r, BERTH_CONTROL_ROWS_MIN, BERTH_CONTROL_ROWS_MAX) &&
	    in_range(c, BERTH_CONTROL_COLS_MIN, BERTH_CONTROL_COLS_MAX)) {
		req->rows = (int)json_integer_value(r);
		req->cols = (int)json_integer_value(c);
	}
}

static void parse_grace(struct berth_control_req *req)
{
	const json_t *g = json_object_get(req->msg, "grace_ms");
	json_int_t v = json_is_integer(g) ? json_integer_value(g) : BERTH_CONTROL_GRACE_DEFAULT_MS;

	req->grace_ms = v < 0                            ? 0
			: v > BERTH_CONTROL_GRACE_MAX_MS ? BERTH_CONTROL_GRACE_MAX_MS
							 : (long long)v;
}

int berth_control_parse(const char *line, size_t len, struct berth_control_req *req, char *why, size_t whylen)
{
	json_error_t je;
	const char *op;
	size_t i;

	memset(req, 0, sizeof *req);
	/* jansson takes a NUL byte after a number for the number's end
	 * ({"grace_ms":5\0} loads): a request holds none. */
	if (memchr(line, '\0', len) != NULL) {
		snprintf(why, whylen, "bad request: a NUL byte in the request");
		return -1;
	}
	/* {"op":"info","op":"stop"} is one request or the other to
	 * different readers: refused. */
	req->msg = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	if (req->msg == NULL) {
		snprintf(why, whylen, "bad request: %s", je.text);
		return -1;
	}
	op = json_string_value(json_object_get(req->msg, "op"));
	if (!json_is_object(req->msg) || op == NULL) {
		snprintf(why, whylen, "bad request: no `op`");
		goto fail;
	}
	for (i = 0; i < sizeof ops / sizeof ops[0] && strcmp(op, ops[i].name) != 0; i++)
		;
	if (i == sizeof ops / sizeof ops[0]) {
		snprintf(why, whylen, "unknown op `%s`", op);
		goto fail;
	}
	req->op = ops[i].op;
	switch (req->op) {
	case BERTH_CONTROL_SEND: {
		const json_t *d = json_object_get(req->msg, "data");
		if (!json_is_string(d)) {
			snprintf(why, whylen, "send needs a string `data`");
			goto fail;
		}
		req->data = json_string_value(d);
		req->data_len = json_string_length(d);
		req->paste = json_is_true(json_object_get(req->msg, "paste"));
		req->enter = json_is_true(json_object_get(req->msg, "enter"));
		break;
	}
	case BERTH_CONTROL_RESIZE:
	case BERTH_CONTROL_ATTACH:
		parse_size(req);
		break;
	case BERTH_CONTROL_STOP:
		parse_grace(req);
		break;
	case BERTH_CONTROL_INFO:
	case BERTH_CONTROL_PEEK:
	default:
		break;
	}
	return 0;
fail:
	berth_control_req_free(req);
	return -1;
}

void berth_control_req_free(struct berth_control_req *req)
{
	json_decref(req->msg);
	memset(req, 0, sizeof *req);
}
