/* SPDX-License-Identifier: MIT */
/*
 * test_mcp.c - `berth mcp` at the protocol level: berth_mcp_handle() on a
 * server of no apps (framing, JSON-RPC validation, life cycle, version
 * negotiation, notifications, cursors, tools/call and logging/setLevel
 * errors), the same on a server of the first-party filesystem app (tool
 * pages, schema errors with data.path), berth_mcp_run() on a pipe (a line
 * over BERTH_MCP_MAX_LINE, a last line without a newline), and real calls
 * to the filesystem app through berth_mcp_run() (results, denials,
 * cancellation, calls in parallel, the 2024-11-05 result shape).
 *
 * Every message the server writes must be one line of JSON, an object with
 * "jsonrpc":"2.0"; the capture checks that for every test.
 *
 * Environment: BERTH_FILESYSTEM_APP, the absolute path of apps/filesystem
 * (build/apps/filesystem: meson makes the app directory there); tests/meson.build sets it.
 * XDG_STATE_HOME and XDG_RUNTIME_DIR are pointed at a temp dir here.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "supervisor/app.h"
#include "supervisor/mcp.h"
#include "supervisor/mcp_http.h"
#include "supervisor/mcp_int.h"

static const char *fs_app; /* BERTH_FILESYSTEM_APP */
static char tmp_root[] = "/tmp/berth-test-mcp.XXXXXX";

/* ---------------------------------------------------------- capture */

/* Output of berth_mcp_handle(): every write is checked to be exactly one
 * line (one message, newline included), as mcp.h promises. */
struct capture {
	char *buf;
	size_t len, cap;
	size_t writes;
	char bad[256]; /* the first framing problem, or "" */
};

static void cap_write(void *ctx, const char *line, size_t len)
{
	struct capture *c = ctx;
	const char *nl = memchr(line, '\n', len);

	c->writes++;
	if (c->bad[0] == '\0' && (len == 0 || nl != line + len - 1))
		snprintf(c->bad, sizeof c->bad, "write %zu is not one newline-terminated line (%zu bytes)",
			 c->writes, len);
	if (c->len + len + 1 > c->cap) {
		c->cap = (c->len + len + 1) * 2;
		c->buf = realloc(c->buf, c->cap);
		if (c->buf == NULL)
			abort();
	}
	memcpy(c->buf + c->len, line, len);
	c->len += len;
	c->buf[c->len] = '\0';
}

/* One output line: a JSON object with "jsonrpc":"2.0", a response (an id
 * and exactly one of result and error, an error with an integer code and a
 * string message) or a notification (a method, no id). */
static json_t *parse_message(const char *line, size_t len)
{
	json_error_t e;
	json_t *j = json_loadb(line, len, JSON_REJECT_DUPLICATES, &e), *err;

	if (j == NULL)
		fail_msg("server wrote invalid JSON (%s): %.*s", e.text, (int)(len > 300 ? 300 : len), line);
	if (!json_is_object(j))
		fail_msg("server wrote a non-object: %.*s", (int)len, line);
	if (!json_is_string(json_object_get(j, "jsonrpc")) ||
	    strcmp(json_string_value(json_object_get(j, "jsonrpc")), "2.0") != 0)
		fail_msg("server wrote a message without \"jsonrpc\":\"2.0\": %.*s", (int)len, line);
	if (json_object_get(j, "method") != NULL) {
		/* a notification, or a request of ours (elicitation/create: a string id) */
		if (!json_is_string(json_object_get(j, "method")) ||
		    (json_object_get(j, "id") != NULL && !json_is_string(json_object_get(j, "id"))))
			fail_msg("server wrote a bad notification or request: %.*s", (int)len, line);
		return j;
	}
	err = json_object_get(j, "error");
	if (json_object_get(j, "id") == NULL || (json_object_get(j, "result") != NULL) == (err != NULL))
		fail_msg("server wrote a bad response: %.*s", (int)len, line);
	if (err != NULL && (!json_is_integer(json_object_get(err, "code")) ||
			    !json_is_string(json_object_get(err, "message"))))
		fail_msg("server wrote a bad error object: %.*s", (int)len, line);
	return j;
}

/* The messages captured so far (checked), as an array; the capture is
 * emptied. */
static json_t *take(struct capture *c)
{
	json_t *v = json_array();
	size_t off = 0;

	if (c->bad[0] != '\0')
		fail_msg("%s", c->bad);
	while (off < c->len) {
		char *nl = memchr(c->buf + off, '\n', c->len - off);
		if (nl == NULL)
			fail_msg("server output ends without a newline");
		json_array_append_new(v, parse_message(c->buf + off, (size_t)(nl - (c->buf + off))));
		off = (size_t)(nl - c->buf) + 1;
	}
	c->len = 0;
	return v;
}

/* ---------------------------------------------------------- fixture */

struct fx {
	struct capture c;
	struct berth_mcp *m;
};

static struct berth_mcp *server(struct capture *c, size_t n_apps, unsigned page_size)
{
	const char *dirs[1] = {fs_app}, *names[1] = {"filesystem"};
	struct berth_mcp_opts o = {
	    .app_dirs = dirs,
	    .app_names = names,
	    .n_apps = n_apps,
	    .page_size = page_size,
	    .no_dev = true,
	    .write = cap_write,
	    .write_ctx = c,
	};
	struct berth_error err = {0};
	struct berth_mcp *m = berth_mcp_new(&o, &err);

	if (m == NULL)
		fail_msg("berth_mcp_new (%zu apps): %s", n_apps, err.msg);
	return m;
}

static int setup0(void **state)
{
	struct fx *f = calloc(1, sizeof *f);

	if (f == NULL)
		return -1;
	f->m = server(&f->c, 0, 0);
	*state = f;
	return 0;
}

static int setup_fs(void **state)
{
	struct fx *f = calloc(1, sizeof *f);

	if (f == NULL)
		return -1;
	f->m = server(&f->c, 1, 2);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	berth_mcp_free(f->m);
	free(f->c.buf);
	free(f);
	return 0;
}

/* ---------------------------------------------------------- helpers */

static json_t *J(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, JSON_DECODE_ANY, &e);

	if (j == NULL)
		fail_msg("bad test JSON `%s`: %s", text, e.text);
	return j;
}

/* Send one message; the answers it got right away. */
static json_t *say(struct fx *f, const char *msg)
{
	berth_mcp_handle(f->m, msg, strlen(msg));
	return take(&f->c);
}

/* Send one message that must get no answer. */
static void say_nothing(struct fx *f, const char *msg)
{
	json_t *v = say(f, msg);

	if (json_array_size(v) != 0) {
		char *s = json_dumps(v, JSON_COMPACT);
		fail_msg("`%s` got an answer: %s", msg, s);
	}
	json_decref(v);
}

/* Send one message that must get exactly one answer, with id @id_json. */
static json_t *say_one(struct fx *f, const char *msg, const char *id_json)
{
	json_t *v = say(f, msg), *r, *want = J(id_json);

	if (json_array_size(v) != 1) {
		char *s = json_dumps(v, JSON_COMPACT);
		fail_msg("`%.200s` got %zu answers, want 1: %.500s", msg, json_array_size(v), s);
	}
	r = json_incref(json_array_get(v, 0));
	json_decref(v);
	if (!json_equal(json_object_get(r, "id"), want)) {
		char *s = json_dumps(r, JSON_COMPACT);
		fail_msg("`%.200s`: answer's id is not %s: %.500s", msg, id_json, s);
	}
	json_decref(want);
	return r;
}

/* The result of a request that must succeed (a borrowed part of *@hold). */
static json_t *say_ok(struct fx *f, const char *msg, const char *id_json, json_t **hold)
{
	json_t *r = say_one(f, msg, id_json);

	if (json_object_get(r, "result") == NULL) {
		char *s = json_dumps(r, JSON_COMPACT);
		fail_msg("`%.200s` failed: %.500s", msg, s);
	}
	*hold = r;
	return json_object_get(r, "result");
}

/* A request that must fail with @code; returns the error object's data (a
 * borrowed part of *@hold; may be NULL). */
static json_t *say_err(struct fx *f, const char *msg, const char *id_json, int code, json_t **hold)
{
	json_t *r = say_one(f, msg, id_json), *e = json_object_get(r, "error");

	if (e == NULL || json_integer_value(json_object_get(e, "code")) != code) {
		char *s = json_dumps(r, JSON_COMPACT);
		fail_msg("`%.200s`: want error %d, got %.500s", msg, code, s);
	}
	if (json_string_length(json_object_get(e, "message")) == 0)
		fail_msg("`%.200s`: error %d without a message", msg, code);
	if (hold != NULL)
		*hold = r;
	else
		json_decref(r);
	return hold != NULL ? json_object_get(e, "data") : NULL;
}

static void want_err(struct fx *f, const char *msg, const char *id_json, int code)
{
	say_err(f, msg, id_json, code, NULL);
}

static void initialize(struct fx *f, const char *version, const char *want_version)
{
	char msg[512];
	json_t *hold, *r;

	snprintf(msg, sizeof msg,
		 "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
		 "\"%s\",\"capabilities\":{},\"clientInfo\":{\"name\":\"test_mcp\",\"version\":\"1\"}}}",
		 version);
	r = say_ok(f, msg, "0", &hold);
	assert_string_equal(json_string_value(json_object_get(r, "protocolVersion")), want_version);
	json_decref(hold);
	say_nothing(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
}

/* ---------------------------------------------------------- no apps */

static void test_parse_error(void **state)
{
	static const char *const bad[] = {
	    "{",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}}",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} {}",
	    "\xff",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xc3\"}",
	    "{'jsonrpc':'2.0'}",
	    "",
	    /* duplicate member names are refused, not resolved */
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"ping\"}",
	};
	struct fx *f = *state;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		want_err(f, bad[i], "null", -32700);
	/* Still serving. */
	json_t *hold;
	say_ok(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", "1", &hold);
	json_decref(hold);
}

static void test_not_an_object(void **state)
{
	struct fx *f = *state;

	/* A batch: refused whole (MCP 2025-06-18 has no batches). */
	want_err(f, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", "null", -32600);
	want_err(f, "[]", "null", -32600);
	/* JSON that is no object is an invalid request, not a parse error
	 * (JSON-RPC 2.0, section 7: `1` gets -32600). */
	want_err(f, "1", "null", -32600);
	want_err(f, "\"ping\"", "null", -32600);
	want_err(f, "null", "null", -32600);
	want_err(f, "true", "null", -32600);
}

static void test_invalid_request(void **state)
{
	struct fx *f = *state;

	want_err(f, "{}", "null", -32600);
	/* jsonrpc missing or not "2.0"; the id, being valid, is kept */
	want_err(f, "{\"id\":1,\"method\":\"ping\"}", "1", -32600);
	want_err(f, "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", "1", -32600);
	want_err(f, "{\"jsonrpc\":2.0,\"id\":1,\"method\":\"ping\"}", "1", -32600);
	want_err(f, "{\"jsonrpc\":\"2.0 \",\"id\":\"a\",\"method\":\"ping\"}", "\"a\"", -32600);
	/* no method, or not a string */
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":1}", "1", -32600);
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}", "1", -32600);
	/* an id that is not a string or an integer: answered with id null */
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", "null", -32600);
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"ping\"}", "null", -32600);
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", "null", -32600);
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"ping\"}", "null", -32600);
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}", "null", -32600);
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"ping\"}", "null", -32600);
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", "null", -32600);
	/* params not an object */
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\",\"params\":[]}", "4", -32600);
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\",\"params\":\"x\"}", "4", -32600);
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\",\"params\":null}", "4", -32600);
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":\"initialize\",\"params\":7}", "\"s\"",
		 -32600);
	/* A bad notification (no id) is still a bad request: id null. */
	want_err(f, "{\"jsonrpc\":\"1.0\",\"method\":\"notifications/initialized\"}", "null", -32600);
	/* None of that initialized anything. */
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/list\"}", "9", -32600);
}

static void test_before_initialize(void **state)
{
	struct fx *f = *state;
	json_t *hold, *r;

	r = say_ok(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", "1", &hold);
	assert_true(json_is_object(r) && json_object_size(r) == 0);
	json_decref(hold);
	r = say_ok(f, "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\",\"params\":{}}", "\"p\"", &hold);
	json_decref(hold);
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}", "2", -32600);
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}",
		 "3", -32600);
	want_err(
	    f,
	    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"info\"}}",
	    "4", -32600);
	/* initialize without a protocolVersion is refused and initializes nothing */
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"initialize\",\"params\":{}}", "5", -32602);
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"initialize\"}", "6", -32602);
	want_err(
	    f, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}",
	    "7", -32602);
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/list\"}", "8", -32600);
	initialize(f, "2025-06-18", "2025-06-18");
	r = say_ok(f, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/list\"}", "9", &hold);
	json_decref(hold);
}

static void test_initialize(void **state)
{
	struct fx *f = *state;
	json_t *hold, *r, *caps, *info;

	r = say_ok(
	    f,
	    "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
	    "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
	    "\"init\"", &hold);
	assert_string_equal(json_string_value(json_object_get(r, "protocolVersion")), "2025-06-18");
	caps = json_object_get(r, "capabilities");
	assert_true(json_is_true(json_object_get(json_object_get(caps, "tools"), "listChanged")));
	assert_true(json_is_object(json_object_get(caps, "logging")));
	info = json_object_get(r, "serverInfo");
	assert_string_equal(json_string_value(json_object_get(info, "name")), "berth");
	assert_true(json_string_length(json_object_get(info, "version")) > 0);
	json_decref(hold);
	/* twice: refused, and the negotiated version stays */
	want_err(f,
		 "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
		 "\"2024-11-05\"}}",
		 "2", -32600);
	r = say_ok(f, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}", "3", &hold);
	assert_true(json_is_array(json_object_get(r, "tools")));
	json_decref(hold);
}

static void test_versions(void **state)
{
	static const char *const cases[][2] = {
	    {"2025-06-18", "2025-06-18"}, {"2025-03-26", "2025-03-26"}, {"2024-11-05", "2024-11-05"},
	    {"2099-01-01", "2025-11-25"}, {"2024-10-07", "2025-11-25"}, {"", "2025-11-25"},
	    {"2025-11-25", "2025-11-25"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct fx f = {0};
		f.m = server(&f.c, 0, 0);
		initialize(&f, cases[i][0], cases[i][1]);
		berth_mcp_free(f.m);
		free(f.c.buf);
	}
}

/* The URL-mode elicitation hook (mcp.h): sent only to a 2025-11-25 client
 * that declared capabilities.elicitation.url; its answer reaches the
 * callback once; an error answer and a client gone are said too. */
struct elicit_seen {
	int calls;
	char action[16];
	char error[128];
};

static void elicit_cb(void *ctx, const char *action, const char *error)
{
	struct elicit_seen *e = ctx;
	e->calls++;
	snprintf(e->action, sizeof e->action, "%s", action != NULL ? action : "");
	snprintf(e->error, sizeof e->error, "%s", error != NULL ? error : "");
}

static void init_caps(struct fx *f, const char *version, const char *caps)
{
	char msg[512];
	json_t *hold;

	snprintf(msg, sizeof msg,
		 "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
		 "\"%s\",\"capabilities\":%s,\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
		 version, caps);
	say_ok(f, msg, "0", &hold);
	json_decref(hold);
	say_nothing(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
}

static void test_elicit_url(void **state)
{
	struct berth_error err = {0};
	struct elicit_seen e = {0};

	(void)state;
	{ /* before initialize; then a client without URL mode; then 2025-06-18 */
		struct fx f = {0};
		f.m = server(&f.c, 0, 0);
		assert_int_equal(
		    berth_mcp_elicit_url(f.m, "m", "https://x.example/", "e1", elicit_cb, &e, &err), -1);
		assert_non_null(strstr(err.msg, "has not initialized"));
		init_caps(&f, "2025-11-25", "{\"elicitation\":{}}");
		assert_int_equal(
		    berth_mcp_elicit_url(f.m, "m", "https://x.example/", "e1", elicit_cb, &e, &err), -1);
		assert_non_null(strstr(err.msg, "declared no capabilities.elicitation.url"));
		assert_int_equal(f.c.len, 0);
		berth_mcp_free(f.m);
		free(f.c.buf);
		f = (struct fx){0};
		f.m = server(&f.c, 0, 0);
		init_caps(&f, "2025-06-18", "{\"elicitation\":{\"url\":{}}}");
		assert_int_equal(
		    berth_mcp_elicit_url(f.m, "m", "https://x.example/", "e1", elicit_cb, &e, &err), -1);
		assert_non_null(strstr(err.msg, "it speaks 2025-06-18"));
		berth_mcp_free(f.m);
		free(f.c.buf);
		assert_int_equal(e.calls, 0);
	}
	struct fx f = {0};
	f.m = server(&f.c, 0, 0);
	init_caps(&f, "2025-11-25", "{\"elicitation\":{\"url\":{}}}");
	assert_int_equal(berth_mcp_elicit_url(f.m, "Approve the grant", "https://grant.example/a?b=1", "g-1",
					      elicit_cb, &e, &err),
			 0);
	json_t *out = take(&f.c), *req = json_array_get(out, 0), *p = json_object_get(req, "params");
	assert_int_equal(json_array_size(out), 1);
	assert_string_equal(json_string_value(json_object_get(req, "method")), "elicitation/create");
	assert_string_equal(json_string_value(json_object_get(p, "mode")), "url");
	assert_string_equal(json_string_value(json_object_get(p, "url")), "https://grant.example/a?b=1");
	assert_string_equal(json_string_value(json_object_get(p, "elicitationId")), "g-1");
	assert_string_equal(json_string_value(json_object_get(p, "message")), "Approve the grant");
	char answer[256];
	snprintf(answer, sizeof answer,
		 "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"result\":{\"action\":\"accept\"}}",
		 json_string_value(json_object_get(req, "id")));
	say_nothing(&f, "{\"jsonrpc\":\"2.0\",\"id\":\"berth-999\",\"result\":{\"action\":\"accept\"}}");
	assert_int_equal(e.calls, 0); /* not ours */
	say_nothing(&f, answer);
	assert_int_equal(e.calls, 1);
	assert_string_equal(e.action, "accept");
	say_nothing(&f, answer); /* answered twice: the second is dropped */
	assert_int_equal(e.calls, 1);
	json_decref(out);
	berth_mcp_elicit_complete(f.m, "g-1");
	out = take(&f.c);
	assert_string_equal(json_string_value(json_object_get(json_array_get(out, 0), "method")),
			    "notifications/elicitation/complete");
	json_decref(out);
	/* an error answer: the callback gets NULL and the message */
	assert_int_equal(berth_mcp_elicit_url(f.m, "m", "https://x.example/", "g-2", elicit_cb, &e, &err), 0);
	out = take(&f.c);
	snprintf(answer, sizeof answer,
		 "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"error\":{\"code\":-32601,\"message\":\"nope\"}}",
		 json_string_value(json_object_get(json_array_get(out, 0), "id")));
	json_decref(out);
	say_nothing(&f, answer);
	assert_int_equal(e.calls, 2);
	assert_string_equal(e.action, "");
	assert_string_equal(e.error, "nope");
	/* never answered: told at the end */
	assert_int_equal(berth_mcp_elicit_url(f.m, "m", "https://x.example/", "g-3", elicit_cb, &e, &err), 0);
	json_decref(take(&f.c));
	berth_mcp_free(f.m);
	assert_int_equal(e.calls, 3);
	assert_string_equal(e.error, "the client went away");
	free(f.c.buf);
}

/* The --listen Origin check (mcp_http.h): loopback origins only, in their
 * serialised form. */
static void test_http_origin(void **state)
{
	static const char *const good[] = {
	    "http://localhost", "http://localhost:5173", "https://127.0.0.1", "http://127.0.0.1:8931",
	    "http://127.1.2.3", "http://[::1]:80",       "HTTP://LOCALHOST",  "https://[::1]"};
	static const char *const bad[] = {"null",
					  "http://evil.example",
					  "http://127.0.0.1.evil.example",
					  "http://localhost.evil.example",
					  "http://localhost:80/",
					  "http://localhost:99999",
					  "http://localhost:",
					  "http://user@localhost",
					  "http://128.0.0.1",
					  "http://127.0.0.01",
					  "http://127.0.0",
					  "http://[::2]",
					  "http://[::1",
					  "ftp://localhost",
					  "localhost",
					  "http://",
					  ""};

	(void)state;
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
		if (!berth_mcp_http_origin_ok(good[i], strlen(good[i])))
			fail_msg("Origin `%s` refused", good[i]);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (berth_mcp_http_origin_ok(bad[i], strlen(bad[i])))
			fail_msg("Origin `%s` taken for loopback", bad[i]);
}

static void test_unknown_method(void **state)
{
	struct fx *f = *state;

	initialize(f, "2025-06-18", "2025-06-18");
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/list\"}", "1", -32601);
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"prompts/list\",\"params\":{}}", "\"x\"",
		 -32601);
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":-7,\"method\":\"\"}", "-7", -32601);
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"notifications/initialized\"}", "2", -32601);
}

/* Output members declared base64 of an image/ or audio/ type become content
 * blocks (and leave the text's copy); anything else stays text. */
static void test_media_blocks(void **state)
{
	(void)state;
	json_t *schema = json_loads(
	    "{\"type\":\"object\",\"properties\":{"
	    "\"png\":{\"type\":\"string\",\"contentEncoding\":\"base64\",\"contentMediaType\":\"image/png\"},"
	    "\"wav\":{\"type\":\"string\",\"contentEncoding\":\"base64\",\"contentMediaType\":\"audio/wav\"},"
	    "\"pdf\":{\"type\":\"string\",\"contentEncoding\":\"base64\",\"contentMediaType\":\"application/"
	    "pdf\"},"
	    "\"bad\":{\"type\":\"string\",\"contentEncoding\":\"base64\",\"contentMediaType\":\"image/gif\"},"
	    "\"short\":{\"type\":\"string\",\"contentEncoding\":\"base64\",\"contentMediaType\":\"image/"
	    "gif\"},"
	    "\"n\":{\"type\":\"integer\"}}}",
	    0, NULL);
	json_t *out = json_loads("{\"png\":\"iVBORw0KGgo=\",\"wav\":\"UklGRg==\",\"pdf\":\"JVBERi0=\","
				 "\"bad\":\"not base64!\",\"short\":\"abc\",\"n\":3}",
				 0, NULL);
	assert_non_null(schema);
	assert_non_null(out);
	for (int rev = 0; rev < 2; rev++) {
		json_t *content = json_array(), *text = json_copy(out);
		berth_mcpi_media_blocks(rev == 0 ? "2025-11-25" : "2024-11-05", schema, out, content, text);
		char *c = json_dumps(content, JSON_COMPACT | JSON_SORT_KEYS);
		char *t = json_dumps(text, JSON_COMPACT | JSON_SORT_KEYS);
		if (rev == 0) {
			assert_string_equal(
			    c, "[{\"data\":\"iVBORw0KGgo=\",\"mimeType\":\"image/png\",\"type\":\"image\"},"
			       "{\"data\":\"UklGRg==\",\"mimeType\":\"audio/wav\",\"type\":\"audio\"}]");
			assert_string_equal(
			    t, "{\"bad\":\"not base64!\",\"n\":3,\"pdf\":\"JVBERi0=\",\"short\":\"abc\"}");
		} else { /* 2024-11-05 has no audio content */
			assert_string_equal(
			    c, "[{\"data\":\"iVBORw0KGgo=\",\"mimeType\":\"image/png\",\"type\":\"image\"}]");
			assert_string_equal(
			    t, "{\"bad\":\"not base64!\",\"n\":3,\"pdf\":\"JVBERi0=\",\"short\":\"abc\","
			       "\"wav\":\"UklGRg==\"}");
		}
		free(c);
		free(t);
		json_decref(content);
		json_decref(text);
	}
	json_decref(schema);
	json_decref(out);
}

/* Every message gets its answer even when the server's own error text would
 * hold a partial UTF-8 sequence: a parse error whose text quotes part of a
 * multibyte character (found by fuzz_mcp), and an unknown name longer than
 * the server's message buffer, in characters of more than one byte. */
static void test_always_answered(void **state)
{
	struct fx *f = *state;
	char *msg, *name;
	size_t n = 700;

	want_err(f, "{\"jsonrpc\":\"2.\\u0\xd0\xa0\"}", "null", -32700);
	want_err(f, "{\"a\":\"\\u00\xe2\x82\xac\"}", "null", -32700);
	initialize(f, "2025-06-18", "2025-06-18");
	for (size_t width = 1; width <= 4; width++) {
		static const char *const ch[] = {"", "a", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
		for (size_t shift = 0; shift < width; shift++) {
			name = malloc(n * width + shift + 1);
			memset(name, 'b', shift);
			for (size_t i = 0; i < n; i++)
				memcpy(name + shift + i * width, ch[width], width);
			name[n * width + shift] = '\0';
			if (asprintf(&msg, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\"}", name) < 0)
				abort();
			want_err(f, msg, "1", -32601);
			free(msg);
			if (asprintf(&msg,
				     "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/"
				     "call\",\"params\":{\"name\":"
				     "\"%s\"}}",
				     name) < 0)
				abort();
			want_err(f, msg, "2", -32602);
			free(msg);
			free(name);
		}
	}
}

static void test_notifications(void **state)
{
	static const char *const quiet[] = {
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/no-such-thing\",\"params\":{\"x\":1}}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"no/such/method\"}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":99}}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"zz\","
	    "\"reason\":\"x\"}}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{}}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\"}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/roots/list_changed\"}",
	    /* known request methods sent as notifications: no answer either */
	    "{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"tools/list\"}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"nope\"}}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"logging/setLevel\",\"params\":{\"level\":\"loud\"}}",
	    /* responses from the client: this server sends no requests */
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
	    "{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"error\":{\"code\":-32601,\"message\":\"no\"}}",
	    "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"parse error\"}}",
	    "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"roots\":[]}}",
	};
	struct fx *f = *state;

	/* before initialize, and after */
	for (size_t i = 0; i < sizeof quiet / sizeof quiet[0]; i++)
		say_nothing(f, quiet[i]);
	initialize(f, "2025-06-18", "2025-06-18");
	for (size_t i = 0; i < sizeof quiet / sizeof quiet[0]; i++)
		say_nothing(f, quiet[i]);
	/* The ping of a notification did not take the place of a request. */
	json_t *hold;
	say_ok(f, "{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"ping\"}", "99", &hold);
	json_decref(hold);
}

static void test_tools_list_no_apps(void **state)
{
	static const char *const bad[] = {
	    "\"x\"",        "\"tools:\"",   "\"tools:abc\"", "\"tools:1\"",
	    "\"tools:1x\"", "\"tools:-1\"", "\"\"",          "7",
	    "{}",           "[]",           "true",          "\"tools:99999999999999999999999\"",
	};
	struct fx *f = *state;
	json_t *hold, *r;
	char msg[256];

	initialize(f, "2025-06-18", "2025-06-18");
	r = say_ok(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", "1", &hold);
	assert_int_equal(json_array_size(json_object_get(r, "tools")), 0);
	assert_true(json_is_array(json_object_get(r, "tools")));
	assert_null(json_object_get(r, "nextCursor"));
	json_decref(hold);
	r = say_ok(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{\"cursor\":null}}",
		   "2", &hold);
	assert_int_equal(json_array_size(json_object_get(r, "tools")), 0);
	json_decref(hold);
	r = say_ok(
	    f, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"params\":{\"cursor\":\"tools:0\"}}",
	    "3", &hold);
	json_decref(hold);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(
		    msg, sizeof msg,
		    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\",\"params\":{\"cursor\":%s}}",
		    bad[i]);
		want_err(f, msg, "4", -32602);
	}
}

static void test_tools_call_no_apps(void **state)
{
	struct fx *f = *state;

	initialize(f, "2025-06-18", "2025-06-18");
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}", "1", -32602);
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{}}", "2", -32602);
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":5}}", "3",
		 -32602);
	want_err(
	    f,
	    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"write_file\"}}",
	    "4", -32602);
	want_err(f,
		 "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"\","
		 "\"arguments\":{}}}",
		 "5", -32602);
}

static void test_set_level(void **state)
{
	static const char *const good[] = {"debug", "info",     "notice", "warning",
					   "error", "critical", "alert",  "emergency"};
	static const char *const bad[] = {
	    "{\"level\":\"loud\"}", "{\"level\":\"INFO\"}", "{\"level\":3}", "{\"level\":null}", "{}",
	    "{\"level\":\"warn\"}",
	};
	struct fx *f = *state;
	json_t *hold, *r;
	char msg[256];

	initialize(f, "2025-06-18", "2025-06-18");
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(msg, sizeof msg,
			 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"logging/setLevel\",\"params\":%s}",
			 bad[i]);
		want_err(f, msg, "1", -32602);
	}
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"logging/setLevel\"}", "2", -32602);
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		snprintf(
		    msg, sizeof msg,
		    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"logging/setLevel\",\"params\":{\"level\":"
		    "\"%s\"}}",
		    good[i]);
		r = say_ok(f, msg, "3", &hold);
		assert_true(json_is_object(r) && json_object_size(r) == 0);
		json_decref(hold);
	}
}

/* ---------------------------------------------------------- the filesystem app */

static const char *const fs_tools[] = {"write_file", "read_file", "list_files", "delete_file", "stat"};

/* Follow the nextCursor chain (pages of 2); the names in order. */
static void list_all(struct fx *f, bool want_output_schema)
{
	char msg[256], names[5][64];
	size_t n = 0;
	json_t *cursor = NULL;

	for (int page = 0; page < 10; page++) {
		json_t *hold, *r, *tools;
		if (cursor == NULL) {
			snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/list\"}",
				 page);
		} else {
			char *c = json_dumps(cursor, JSON_ENCODE_ANY);
			snprintf(msg, sizeof msg,
				 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/"
				 "list\",\"params\":{\"cursor\":%s}}",
				 page, c);
			free(c);
			json_decref(cursor);
		}
		char id[16];
		snprintf(id, sizeof id, "%d", page);
		r = say_ok(f, msg, id, &hold);
		tools = json_object_get(r, "tools");
		assert_true(json_array_size(tools) >= 1 && json_array_size(tools) <= 2);
		for (size_t i = 0; i < json_array_size(tools); i++) {
			json_t *t = json_array_get(tools, i), *in = json_object_get(t, "inputSchema");
			assert_true(n < 5);
			snprintf(names[n++], sizeof names[0], "%s",
				 json_string_value(json_object_get(t, "name")));
			assert_true(json_string_length(json_object_get(t, "description")) > 0);
			assert_string_equal(json_string_value(json_object_get(in, "type")), "object");
			if (want_output_schema)
				assert_string_equal(json_string_value(json_object_get(
							json_object_get(t, "outputSchema"), "type")),
						    "object");
			else
				assert_null(json_object_get(t, "outputSchema"));
		}
		cursor = json_incref(json_object_get(r, "nextCursor"));
		if (cursor != NULL)
			assert_true(json_is_string(cursor));
		/* a full page iff there is more: 2, 2, 1 */
		assert_int_equal(json_array_size(tools), cursor != NULL ? 2 : 1);
		json_decref(hold);
		if (cursor == NULL)
			break;
	}
	assert_null(cursor);
	assert_int_equal(n, 5);
	for (size_t i = 0; i < 5; i++)
		assert_string_equal(names[i], fs_tools[i]);
}

static void test_app_tools_pages(void **state)
{
	struct fx *f = *state;

	initialize(f, "2025-06-18", "2025-06-18");
	list_all(f, true);
	/* past the end, and garbage */
	want_err(
	    f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"cursor\":\"tools:6\"}}",
	    "1", -32602);
	want_err(f,
		 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"cursor\":\"nope\"}}",
		 "1", -32602);
	/* a cursor the server gave is good again; the end is an empty page */
	json_t *hold, *r = say_ok(f,
				  "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/"
				  "list\",\"params\":{\"cursor\":\"tools:4\"}}",
				  "2", &hold);
	assert_int_equal(json_array_size(json_object_get(r, "tools")), 1);
	assert_string_equal(
	    json_string_value(json_object_get(json_array_get(json_object_get(r, "tools"), 0), "name")),
	    "stat");
	assert_null(json_object_get(r, "nextCursor"));
	json_decref(hold);
	r = say_ok(
	    f, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"params\":{\"cursor\":\"tools:5\"}}",
	    "3", &hold);
	assert_int_equal(json_array_size(json_object_get(r, "tools")), 0);
	assert_null(json_object_get(r, "nextCursor"));
	json_decref(hold);
}

static void test_app_tools_older_version(void **state)
{
	struct fx *f = *state;

	/* 2025-03-26 has no outputSchema (nor structuredContent) */
	initialize(f, "2025-03-26", "2025-03-26");
	list_all(f, false);
}

static void test_app_call_refused(void **state)
{
	struct fx *f = *state;
	json_t *hold, *data;

	initialize(f, "2025-06-18", "2025-06-18");
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{}}", "1", -32602);
	want_err(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"nope\"}}",
		 "2", -32602);
	/* one app: tools are named for the export alone */
	want_err(f,
		 "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
		 "\"filesystem__read_file\",\"arguments\":{\"path\":\"x\"}}}",
		 "3", -32602);
	/* arguments that are no object: the message says so */
	static const char *const not_obj[] = {"\"x\"", "[\"x\"]", "3", "true"};
	for (size_t i = 0; i < sizeof not_obj / sizeof not_obj[0]; i++) {
		char msg[256];
		snprintf(msg, sizeof msg,
			 "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
			 "\"read_file\",\"arguments\":%s}}",
			 not_obj[i]);
		say_err(f, msg, "4", -32602, &hold);
		assert_non_null(
		    strstr(json_string_value(json_object_get(json_object_get(hold, "error"), "message")),
			   "arguments"));
		json_decref(hold);
	}
	/* against the schema, before the app sees them: data.path, data.reason */
	data = say_err(
	    f,
	    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"write_file\","
	    "\"arguments\":{\"path\":1,\"content\":\"x\"}}}",
	    "7", -32602, &hold);
	assert_non_null(data);
	assert_string_equal(json_string_value(json_object_get(data, "path")), "$.path");
	assert_string_equal(json_string_value(json_object_get(data, "reason")),
			    "expected string, got integer");
	json_decref(hold);
	data = say_err(
	    f,
	    "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"write_file\","
	    "\"arguments\":{\"path\":\"a\"}}}",
	    "8", -32602, &hold);
	assert_string_equal(json_string_value(json_object_get(data, "path")), "$");
	assert_non_null(strstr(json_string_value(json_object_get(data, "reason")), "content"));
	json_decref(hold);
	/* no arguments at all is {}: read_file needs a path */
	data = say_err(
	    f, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"read_file\"}}",
	    "9", -32602, &hold);
	assert_string_equal(json_string_value(json_object_get(data, "path")), "$");
	json_decref(hold);
}

/* ---------------------------------------------------------- berth_mcp_run on a pipe */

struct feeder {
	int fd;
	const char *data;
	size_t len;
};

static void *feed(void *arg)
{
	struct feeder *fe = arg;

	for (size_t off = 0; off < fe->len;) {
		ssize_t w = write(fe->fd, fe->data + off, fe->len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	close(fe->fd);
	return NULL;
}

/* A ping with id @id padded to exactly @len bytes (no newline). */
static size_t padded_ping(char *out, int id, size_t len)
{
	int head =
	    sprintf(out, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"ping\",\"params\":{\"pad\":\"", id);

	memset(out + head, 'x', len - (size_t)head - 3);
	memcpy(out + len - 3, "\"}}", 3);
	return len;
}

/* Feed @data through a pipe to berth_mcp_run() on a 0-app server; the
 * answers. */
static json_t *run_pipe(const char *data, size_t len)
{
	struct capture c = {0};
	struct berth_mcp *m = server(&c, 0, 0);
	struct berth_error err = {0};
	int p[2];
	pthread_t th;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	struct feeder fe = {p[1], data, len};
	assert_int_equal(pthread_create(&th, NULL, feed, &fe), 0);
	int r = berth_mcp_run(m, p[0], &err);
	pthread_join(th, NULL);
	close(p[0]);
	berth_mcp_free(m);
	if (r != 0)
		fail_msg("berth_mcp_run: %s", err.msg);
	json_t *v = take(&c);
	free(c.buf);
	return v;
}

static void want_ids(json_t *v, const char *const *ids, const int *codes, size_t n)
{
	if (json_array_size(v) != n) {
		char *s = json_dumps(v, JSON_COMPACT);
		fail_msg("want %zu answers, got %zu: %.800s", n, json_array_size(v), s);
	}
	for (size_t i = 0; i < n; i++) {
		json_t *a = json_array_get(v, i), *want = J(ids[i]);
		json_t *e = json_object_get(a, "error");
		if (!json_equal(json_object_get(a, "id"), want) ||
		    (codes[i] == 0 ? e != NULL
				   : json_integer_value(json_object_get(e, "code")) != codes[i])) {
			char *s = json_dumps(a, JSON_COMPACT);
			fail_msg("answer %zu: want id %s and %s %d, got %.300s", i, ids[i],
				 codes[i] ? "error" : "result", codes[i], s);
		}
		json_decref(want);
	}
}

static void test_run_oversized(void **state)
{
	const size_t max = BERTH_MCP_MAX_LINE;
	char *buf = malloc(4 * max);
	size_t n = 0;

	(void)state;
	/* exactly the bound, newline included: served */
	n += padded_ping(buf + n, 1, max - 1);
	buf[n++] = '\n';
	/* one byte over (a valid ping, so serving it would show): dropped with
	 * -32600, then the next line is served */
	n += padded_ping(buf + n, 2, max);
	buf[n++] = '\n';
	n += (size_t)sprintf(buf + n, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}\r\n");
	/* empty lines are no messages, nor is a lone CR */
	n += (size_t)sprintf(buf + n, "\n\n\r\n");
	/* far over, and CRLF-terminated */
	n += padded_ping(buf + n, 4, max + 100000);
	buf[n++] = '\r';
	buf[n++] = '\n';
	/* a last line without a newline at end of file */
	n += (size_t)sprintf(buf + n, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}");

	json_t *v = run_pipe(buf, n);
	static const char *const ids[] = {"1", "null", "3", "null", "5"};
	static const int codes[] = {0, -32600, 0, -32600, 0};
	want_ids(v, ids, codes, 5);
	json_decref(v);

	/* an oversized last line without a newline: dropped too */
	n = padded_ping(buf, 6, max + 10);
	v = run_pipe(buf, n);
	static const char *const ids2[] = {"null"};
	static const int codes2[] = {-32600};
	want_ids(v, ids2, codes2, 1);
	json_decref(v);
	free(buf);
}

static void test_run_lines(void **state)
{
	static const char input[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
				    "{\"protocolVersion\":\"2024-11-05\"}}\n"
				    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
				    "not json\n"
				    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n"
				    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"nope\"}";
	static const char *const ids[] = {"1", "null", "2", "3"};
	static const int codes[] = {0, -32700, 0, -32601};

	(void)state;
	json_t *v = run_pipe(input, sizeof input - 1);
	want_ids(v, ids, codes, 4);
	json_decref(v);
	/* nothing at all: no output */
	v = run_pipe("", 0);
	assert_int_equal(json_array_size(v), 0);
	json_decref(v);
}

/* ---------------------------------------------------------- real calls (berth_mcp_run, one app) */

struct live {
	struct berth_mcp *m;
	int to_srv[2], from_srv[2];
	pthread_t th;
	bool running;
	int rc;
	char *buf;
	size_t len, cap;
	bool eof;
};

static void live_write(void *ctx, const char *line, size_t len)
{
	struct live *l = ctx;
	const char *nl = memchr(line, '\n', len);

	/* one whole message per write: break the framing visibly if not */
	if (len == 0 || nl != line + len - 1)
		(void)!write(l->from_srv[1], "FRAMING\n", 8);
	for (size_t off = 0; off < len;) {
		ssize_t w = write(l->from_srv[1], line + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		off += (size_t)w;
	}
}

static void *live_serve(void *arg)
{
	struct live *l = arg;
	struct berth_error err = {0};

	l->rc = berth_mcp_run(l->m, l->to_srv[0], &err);
	close(l->from_srv[1]); /* the client sees the end */
	l->from_srv[1] = -1;
	return NULL;
}

static struct live *live_start(void)
{
	struct live *l = calloc(1, sizeof *l);
	const char *dirs[1] = {fs_app}, *names[1] = {"filesystem"};
	struct berth_mcp_opts o = {
	    .app_dirs = dirs,
	    .app_names = names,
	    .n_apps = 1,
	    .no_dev = true,
	    .timeout_ms = 20000,
	    .write = live_write,
	};
	struct berth_error err = {0};

	assert_non_null(l);
	o.write_ctx = l;
	assert_int_equal(pipe2(l->to_srv, O_CLOEXEC), 0);
	assert_int_equal(pipe2(l->from_srv, O_CLOEXEC), 0);
	l->m = berth_mcp_new(&o, &err);
	if (l->m == NULL)
		fail_msg("berth_mcp_new: %s", err.msg);
	assert_int_equal(pthread_create(&l->th, NULL, live_serve, l), 0);
	l->running = true;
	return l;
}

/* Close the server's input, read to its end, join it (also after a failed
 * check: teardown). */
static void live_stop(struct live *l)
{
	char junk[4096];

	if (l == NULL)
		return;
	if (l->to_srv[1] >= 0)
		close(l->to_srv[1]);
	l->to_srv[1] = -1;
	if (l->running) {
		while (read(l->from_srv[0], junk, sizeof junk) > 0)
			;
		pthread_join(l->th, NULL);
		l->running = false;
	}
	close(l->to_srv[0]);
	close(l->from_srv[0]);
	berth_mcp_free(l->m);
	free(l->buf);
	free(l);
}

static struct live *live_current; /* for teardown_live */

static int teardown_live(void **state)
{
	(void)state;
	live_stop(live_current);
	live_current = NULL;
	return 0;
}

static void live_send(struct live *l, const char *text)
{
	size_t n = strlen(text);

	assert_int_equal(write(l->to_srv[1], text, n), (ssize_t)n);
}

/* The next message from the server (checked), waiting at most 30 s. */
static json_t *live_next(struct live *l)
{
	for (;;) {
		char *nl = l->len > 0 ? memchr(l->buf, '\n', l->len) : NULL;
		if (nl != NULL) {
			size_t n = (size_t)(nl - l->buf);
			if (n == 7 && memcmp(l->buf, "FRAMING", 7) == 0)
				fail_msg("the server wrote a message that was not one line");
			json_t *j = parse_message(l->buf, n);
			memmove(l->buf, nl + 1, l->len - n - 1);
			l->len -= n + 1;
			return j;
		}
		if (l->eof)
			fail_msg("the server ended its output (%zu bytes left over)", l->len);
		struct pollfd p = {l->from_srv[0], POLLIN, 0};
		if (poll(&p, 1, 30000) != 1)
			fail_msg("no answer from the server in 30 s");
		if (l->len + 65536 > l->cap) {
			l->cap = l->len + 65536 * 2;
			l->buf = realloc(l->buf, l->cap);
			assert_non_null(l->buf);
		}
		ssize_t r = read(l->from_srv[0], l->buf + l->len, l->cap - l->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			l->eof = true;
		else
			l->len += (size_t)r;
	}
}

/* The answer to request @id (notifications in between are skipped; any
 * other response fails). */
static json_t *live_answer(struct live *l, json_int_t id)
{
	for (;;) {
		json_t *j = live_next(l), *jid = json_object_get(j, "id");
		if (jid == NULL) {
			json_decref(j); /* a notification (a log line) */
			continue;
		}
		if (!json_is_integer(jid) || json_integer_value(jid) != id) {
			char *s = json_dumps(j, JSON_COMPACT);
			fail_msg("want the answer to %lld, got %.500s", (long long)id, s);
		}
		return j;
	}
}

static void live_initialize(struct live *l, const char *version)
{
	char msg[256];

	snprintf(
	    msg, sizeof msg,
	    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"%s\","
	    "\"capabilities\":{},\"clientInfo\":{\"name\":\"test_mcp\",\"version\":\"1\"}}}\n"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n",
	    version);
	live_send(l, msg);
	json_t *r = live_answer(l, 0);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(r, "result"), "protocolVersion")), version);
	json_decref(r);
}

static void live_call(struct live *l, json_int_t id, const char *tool, const char *args)
{
	char msg[4096];

	snprintf(msg, sizeof msg,
		 "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
		 "\"arguments\":%s}}\n",
		 (long long)id, tool, args);
	live_send(l, msg);
}

/* A tool result (checked: content is one text block, isError a boolean);
 * the text in *@text (borrowed from the result). */
static json_t *tool_result(json_t *answer, bool want_error, const char **text)
{
	json_t *r = json_object_get(answer, "result"), *content = json_object_get(r, "content");
	char *s = json_dumps(answer, JSON_COMPACT);

	if (r == NULL || !json_is_array(content) || json_array_size(content) != 1 ||
	    !json_is_boolean(json_object_get(r, "isError")) ||
	    json_is_true(json_object_get(r, "isError")) != want_error)
		fail_msg("want a tool result with isError %s, got %.800s", want_error ? "true" : "false", s);
	free(s);
	assert_string_equal(json_string_value(json_object_get(json_array_get(content, 0), "type")), "text");
	*text = json_string_value(json_object_get(json_array_get(content, 0), "text"));
	assert_non_null(*text);
	return r;
}

static void test_live_calls(void **state)
{
	struct live *l = live_current = live_start();
	const char *text;
	json_t *a, *r, *want;

	(void)state;
	live_initialize(l, "2025-06-18");

	/* a result: the output as text and as structuredContent */
	live_call(l, 1, "write_file", "{\"path\":\"mcp.txt\",\"content\":\"hello mcp\"}");
	a = live_answer(l, 1);
	r = tool_result(a, false, &text);
	want = J("{\"path\":\"mcp.txt\",\"bytes\":9}");
	assert_true(json_equal(json_object_get(r, "structuredContent"), want));
	json_t *parsed = J(text);
	assert_true(json_equal(parsed, want));
	json_decref(parsed);
	json_decref(want);
	json_decref(a);

	live_call(l, 2, "read_file", "{\"path\":\"mcp.txt\"}");
	a = live_answer(l, 2);
	r = tool_result(a, false, &text);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(r, "structuredContent"), "content")),
	    "hello mcp");
	json_decref(a);

	/* a denial: isError, with the code, the data and the denial block */
	live_call(l, 3, "write_file", "{\"path\":\"/etc/berth-mcp-test\",\"content\":\"x\"}");
	a = live_answer(l, 3);
	r = tool_result(a, true, &text);
	assert_null(json_object_get(r, "structuredContent"));
	assert_non_null(strstr(text, "(error -32001)"));
	assert_non_null(strstr(text, "BERTH CAPABILITY DENIAL"));
	assert_non_null(strstr(text, "/etc/berth-mcp-test"));
	json_decref(a);

	/* the app's own error, no denial */
	live_call(l, 4, "read_file", "{\"path\":\"does-not-exist.txt\"}");
	a = live_answer(l, 4);
	tool_result(a, true, &text);
	assert_non_null(strstr(text, "ENOENT"));
	assert_null(strstr(text, "BERTH CAPABILITY DENIAL"));
	json_decref(a);

	/* schema errors stay protocol errors (-32602) with a booted app too */
	live_call(l, 5, "read_file", "{\"path\":false}");
	a = live_answer(l, 5);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(a, "error"), "code")), -32602);
	json_decref(a);

	/* cancellation: the cancelled call gets no answer, ever; the ones
	 * around it do */
	live_send(
	    l, "{\"jsonrpc\":\"2.0\",\"id\":50,\"method\":\"tools/call\",\"params\":{\"name\":\"read_file\","
	       "\"arguments\":{\"path\":\"mcp.txt\"}}}\n"
	       "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":50,"
	       "\"reason\":\"test\"}}\n"
	       "{\"jsonrpc\":\"2.0\",\"id\":51,\"method\":\"ping\"}\n");
	a = live_answer(l, 51);
	json_decref(a);
	live_call(l, 52, "read_file", "{\"path\":\"mcp.txt\"}");
	a = live_answer(l, 52); /* the app answers in order: 50's answer would have come first */
	json_decref(a);

	/* more calls at once than may be in flight (8): all answered, once */
	char batch[8192];
	size_t n = 0;
	bool seen[12] = {0};
	for (int i = 0; i < 12; i++)
		n += (size_t)snprintf(
		    batch + n, sizeof batch - n,
		    "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":"
		    "\"%s\",\"arguments\":{\"path\":\"mcp.txt\"}}}\n",
		    100 + i, i % 3 == 2 ? "stat" : "read_file");
	live_send(l, batch);
	for (int k = 0; k < 12; k++) {
		a = live_next(l);
		json_int_t id = json_integer_value(json_object_get(a, "id"));
		if (json_object_get(a, "id") == NULL) {
			json_decref(a);
			k--;
			continue;
		}
		assert_true(id >= 100 && id < 112);
		assert_false(seen[id - 100]);
		seen[id - 100] = true;
		tool_result(a, false, &text);
		json_decref(a);
	}

	/* end of input: the server stops the app and returns 0 */
	close(l->to_srv[1]);
	l->to_srv[1] = -1;
	a = NULL;
	while (!l->eof) {
		/* nothing more may come but notifications */
		char *nl;
		struct pollfd p = {l->from_srv[0], POLLIN, 0};
		assert_int_equal(poll(&p, 1, 30000), 1);
		if (l->len + 4096 > l->cap) {
			l->cap = l->len + 8192;
			l->buf = realloc(l->buf, l->cap);
		}
		ssize_t rd = read(l->from_srv[0], l->buf + l->len, l->cap - l->len);
		if (rd <= 0)
			l->eof = true;
		else
			l->len += (size_t)rd;
		while ((nl = memchr(l->buf, '\n', l->len)) != NULL) {
			json_t *j = parse_message(l->buf, (size_t)(nl - l->buf));
			if (json_object_get(j, "id") != NULL) {
				char *s = json_dumps(j, JSON_COMPACT);
				fail_msg("an answer after the last request: %s", s);
			}
			json_decref(j);
			memmove(l->buf, nl + 1, l->len - (size_t)(nl - l->buf) - 1);
			l->len -= (size_t)(nl - l->buf) + 1;
		}
	}
	pthread_join(l->th, NULL);
	l->running = false;
	assert_int_equal(l->rc, 0);
}

static void test_live_2024(void **state)
{
	struct live *l = live_current = live_start();
	const char *text;
	json_t *a, *r;

	(void)state;
	live_initialize(l, "2024-11-05");
	live_call(l, 1, "write_file", "{\"path\":\"old.txt\",\"content\":\"abc\"}");
	a = live_answer(l, 1);
	r = tool_result(a, false, &text);
	/* 2024-11-05 knows no structuredContent: the text carries the output */
	assert_null(json_object_get(r, "structuredContent"));
	json_t *want = J("{\"path\":\"old.txt\",\"bytes\":3}"), *got = J(text);
	assert_true(json_equal(got, want));
	json_decref(want);
	json_decref(got);
	json_decref(a);
}

/* ---------------------------------------------------------- main */

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

int main(void)
{
	char state_dir[PATH_MAX], run_dir[PATH_MAX];
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_media_blocks),
	    cmocka_unit_test_setup_teardown(test_parse_error, setup0, teardown),
	    cmocka_unit_test_setup_teardown(test_not_an_object, setup0, teardown),
	    cmocka_unit_test_setup_teardown(test_invalid_request, setup0, teardown),
	    cmocka_unit_test_setup_teardown(test_before_initialize, setup0, teardown),
	    cmocka_unit_test_setup_teardown(test_initialize, setup0, teardown),
	    cmocka_unit_test(test_versions),
	    cmocka_unit_test(test_elicit_url),
	    cmocka_unit_test(test_http_origin),
	    cmocka_unit_test_setup_teardown(test_unknown_method, setup0, teardown),
	    cmocka_unit_test_setup_teardown(test_always_answered, setup0, teardown),
	    cmocka_unit_test_setup_teardown(test_notifications, setup0, teardown),
	    cmocka_unit_test_setup_teardown(test_tools_list_no_apps, setup0, teardown),
	    cmocka_unit_test_setup_teardown(test_tools_call_no_apps, setup0, teardown),
	    cmocka_unit_test_setup_teardown(test_set_level, setup0, teardown),
	    cmocka_unit_test_setup_teardown(test_app_tools_pages, setup_fs, teardown),
	    cmocka_unit_test_setup_teardown(test_app_tools_older_version, setup_fs, teardown),
	    cmocka_unit_test_setup_teardown(test_app_call_refused, setup_fs, teardown),
	    cmocka_unit_test(test_run_oversized),
	    cmocka_unit_test(test_run_lines),
	    cmocka_unit_test_teardown(test_live_calls, teardown_live),
	    cmocka_unit_test_teardown(test_live_2024, teardown_live),
	};
	int r;

	fs_app = getenv("BERTH_FILESYSTEM_APP");
	if (fs_app == NULL || fs_app[0] != '/') {
		fprintf(stderr,
			"test_mcp: set BERTH_FILESYSTEM_APP to the absolute path of apps/filesystem\n");
		return 1;
	}
	if (mkdtemp(tmp_root) == NULL) {
		perror("test_mcp: mkdtemp");
		return 1;
	}
	snprintf(state_dir, sizeof state_dir, "%s/state", tmp_root);
	snprintf(run_dir, sizeof run_dir, "%s/run", tmp_root);
	if (mkdir(state_dir, 0700) < 0 || mkdir(run_dir, 0700) < 0) {
		perror("test_mcp: mkdir");
		return 1;
	}
	setenv("XDG_STATE_HOME", state_dir, 1);
	setenv("XDG_RUNTIME_DIR", run_dir, 1);
	r = cmocka_run_group_tests(tests, NULL, NULL);
	nftw(tmp_root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return r;
}
