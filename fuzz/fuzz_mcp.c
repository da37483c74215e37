/* SPDX-License-Identifier: MIT */
/*
 * fuzz_mcp.c - libFuzzer target for `berth mcp`'s message handling
 * (berth_mcp_handle) on a server of no apps, as tests and fuzzing may make
 * it.  The input (at most 64 KiB) is split on newlines, as the stdio
 * transport frames it; each line is one client message, so a run can
 * initialize, negotiate, page, set levels and cancel in any order.
 *
 * Besides memory errors it checks what a client relies on:
 *  - every write is exactly one line, and every line is a JSON object with
 *    "jsonrpc":"2.0" that is a response (an id that is a string, an integer
 *    or null, and exactly one of result and error; an error has an integer
 *    code and a string message);
 *  - a line that is no JSON, or JSON that is no object, gets exactly one
 *    error, with id null;
 *  - a request (an object with an id that is a string or an integer, and
 *    not a response) gets exactly one answer, carrying that id: a client
 *    waits for it;
 *  - an id of another type gets one error with id null; a well-formed
 *    notification and a response from the client get nothing.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "supervisor/mcp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Say which property broke, and on which line, before the crash report. */
static void fail(const char *why, const char *line, size_t len) __attribute__((noreturn));
static void fail(const char *why, const char *line, size_t len)
{
	fprintf(stderr, "fuzz_mcp: %s: %.*s\n", why, (int)(len > 300 ? 300 : len), line);
	abort();
}

struct out {
	json_t *msgs; /* what one berth_mcp_handle() call wrote */
};

static bool check_response(json_t *j)
{
	json_t *id = json_object_get(j, "id"), *err = json_object_get(j, "error");
	const char *jv = json_string_value(json_object_get(j, "jsonrpc"));

	if (jv == NULL || strcmp(jv, "2.0") != 0)
		return false;
	/* A server of no apps sends no notifications: only responses. */
	if (json_object_get(j, "method") != NULL)
		return false;
	if (id == NULL || !(json_is_string(id) || json_is_integer(id) || json_is_null(id)))
		return false;
	if ((json_object_get(j, "result") != NULL) == (err != NULL))
		return false;
	return err == NULL || (json_is_integer(json_object_get(err, "code")) &&
			       json_is_string(json_object_get(err, "message")));
}

static void on_write(void *ctx, const char *line, size_t len)
{
	struct out *o = ctx;
	json_t *j;

	/* One whole message per write, newline included, no newline inside. */
	if (len == 0 || line[len - 1] != '\n' || memchr(line, '\n', len - 1) != NULL)
		fail("a write that is not one line", line, len);
	j = json_loadb(line, len - 1, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(j))
		fail("output that is no JSON object", line, len);
	if (!check_response(j))
		fail("output that is no JSON-RPC 2.0 response", line, len);
	json_array_append_new(o->msgs, j);
}

/* How many answers @line must get, and with which id (NULL: id null). */
static int expected(const char *line, size_t len, json_t **want_id)
{
	json_t *j = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL), *id, *params;
	const char *method, *jv;
	int n;

	*want_id = NULL;
	if (!json_is_object(j)) {
		json_decref(j);
		return 1; /* -32700 or -32600, id null */
	}
	id = json_object_get(j, "id");
	params = json_object_get(j, "params");
	method = json_string_value(json_object_get(j, "method"));
	jv = json_string_value(json_object_get(j, "jsonrpc"));
	if (method == NULL && (json_object_get(j, "result") != NULL || json_object_get(j, "error") != NULL)) {
		n = 0; /* a response */
	} else if (id != NULL && (json_is_string(id) || json_is_integer(id))) {
		*want_id = json_incref(id);
		n = 1;
	} else if (id != NULL) {
		n = 1; /* an id of another type: id null */
	} else {
		/* no id: a notification if well-formed, else one error */
		bool ok = jv != NULL && strcmp(jv, "2.0") == 0 && method != NULL &&
			  (params == NULL || json_is_object(params));
		n = ok ? 0 : 1;
	}
	json_decref(j);
	return n;
}

static void one_line(struct berth_mcp *m, struct out *o, const char *line, size_t len)
{
	json_t *want_id;
	int n = expected(line, len, &want_id);

	berth_mcp_handle(m, line, len);
	if (json_array_size(o->msgs) != (size_t)n)
		fail(n == 0 ? "a notification or a response got an answer"
			    : "a message got no answer, or two",
		     line, len);
	if (n == 1) {
		json_t *got = json_object_get(json_array_get(o->msgs, 0), "id");
		if (want_id != NULL ? !json_equal(got, want_id) : !json_is_null(got))
			fail("the answer does not carry the request's id", line, len);
		/* without a usable id, the answer can only be an error */
		if (want_id == NULL && json_object_get(json_array_get(o->msgs, 0), "error") == NULL)
			fail("a message without a usable id got a result", line, len);
	}
	json_decref(want_id);
	json_array_clear(o->msgs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct out o = {json_array()};
	struct berth_mcp_opts opts = {
	    .n_apps = 0, .no_dev = true, .page_size = 1, .write = on_write, .write_ctx = &o};
	struct berth_error err = {0};
	struct berth_mcp *m;
	const char *p = (const char *)data, *end = p + size;

	if (size > 65536)
		return 0;
	m = berth_mcp_new(&opts, &err);
	if (m == NULL)
		fail("berth_mcp_new", err.msg, strlen(err.msg));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)((nl != NULL ? nl : end) - p);
		/* The transport skips empty lines; the handler must cope anyway. */
		one_line(m, &o, p, len);
		p += len + 1;
	}
	berth_mcp_free(m);
	json_decref(o.msgs);
	return 0;
}
