/* SPDX-License-Identifier: MIT */
/*
 * test_control.c - the pure request and message parsers: a session control
 * socket's request (src/session/control.c), `berth dev`'s
 * (src/supervisor/devctl.c) and a resident app's message on its channel
 * (src/supervisor/appchan.c).  fuzz/fuzz_control.c and fuzz/fuzz_appchan.c
 * check their properties on any input; these tests pin the exact answers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "session/control.h"
#include "supervisor/appchan.h"
#include "supervisor/devctl.h"

static int sess(const char *line, struct berth_control_req *r, char *why)
{
	return berth_control_parse(line, strlen(line), r, why, 512);
}

static void test_session_ops(void **state)
{
	struct berth_control_req r;
	char why[512];

	(void)state;
	assert_int_equal(sess("{\"op\":\"info\"}", &r, why), 0);
	assert_int_equal(r.op, BERTH_CONTROL_INFO);
	berth_control_req_free(&r);
	assert_int_equal(sess("{\"op\":\"send\",\"data\":\"ls\\u001b\",\"enter\":true}", &r, why), 0);
	assert_int_equal(r.op, BERTH_CONTROL_SEND);
	assert_int_equal(r.data_len, 3);
	assert_memory_equal(r.data, "ls\033", 3);
	assert_true(r.enter);
	assert_false(r.paste);
	berth_control_req_free(&r);
	assert_int_equal(sess("{\"op\":\"attach\",\"rows\":24,\"cols\":80}", &r, why), 0);
	assert_int_equal(r.rows, 24);
	assert_int_equal(r.cols, 80);
	berth_control_req_free(&r);
	/* out of range, one of them, or beyond int (4294967346 is 50 as an int): kept size */
	assert_int_equal(sess("{\"op\":\"resize\",\"rows\":1,\"cols\":80}", &r, why), 0);
	assert_int_equal(r.rows, 0);
	assert_int_equal(r.cols, 0);
	berth_control_req_free(&r);
	assert_int_equal(sess("{\"op\":\"resize\",\"rows\":4294967346,\"cols\":80}", &r, why), 0);
	assert_int_equal(r.rows, 0);
	berth_control_req_free(&r);
	assert_int_equal(sess("{\"op\":\"stop\"}", &r, why), 0);
	assert_int_equal(r.grace_ms, 5000);
	berth_control_req_free(&r);
	assert_int_equal(sess("{\"op\":\"stop\",\"grace_ms\":-5}", &r, why), 0);
	assert_int_equal(r.grace_ms, 0);
	berth_control_req_free(&r);
	assert_int_equal(sess("{\"op\":\"stop\",\"grace_ms\":9999999999}", &r, why), 0);
	assert_int_equal(r.grace_ms, 600000);
	berth_control_req_free(&r);
}

static void test_session_refusals(void **state)
{
	struct berth_control_req r;
	char why[512];

	(void)state;
	assert_int_equal(sess("{\"op\":\"send\",\"data\":1}", &r, why), -1);
	assert_string_equal(why, "send needs a string `data`");
	assert_null(r.msg);
	assert_int_equal(sess("{\"op\":\"fly\"}", &r, why), -1);
	assert_string_equal(why, "unknown op `fly`");
	assert_int_equal(sess("[1]", &r, why), -1);
	assert_string_equal(why, "bad request: no `op`");
	assert_int_equal(sess("{\"op\":3}", &r, why), -1);
	assert_string_equal(why, "bad request: no `op`");
	assert_int_equal(sess("{\"op\":", &r, why), -1);
	assert_int_equal(strncmp(why, "bad request: ", 13), 0);
	assert_true(strlen(why) > 13);
	/* jansson would take {"op":"stop","grace_ms":5\0} */
	assert_int_equal(berth_control_parse("{\"op\":\"stop\",\"grace_ms\":5\0}", 27, &r, why, sizeof why),
			 -1);
	assert_string_equal(why, "bad request: a NUL byte in the request");
	/* a key twice is two requests to two readers: refused */
	assert_int_equal(sess("{\"op\":\"info\",\"op\":\"stop\"}", &r, why), -1);
	assert_string_equal(why, "bad request: duplicate object key near '\"op\"'");
}

static void test_devctl(void **state)
{
	struct berth_devctl_req r;
	int code = 0;
	const char *msg = NULL;
	const char *call =
	    "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"call\",\"params\":{\"export\":\"read_file\","
	    "\"input\":{\"path\":\"a\"},\"timeout_ms\":100,\"app_dir\":\"/d\"}}";

	(void)state;
	assert_int_equal(berth_devctl_parse(call, strlen(call), &r, &code, &msg), 0);
	assert_int_equal(r.method, BERTH_DEVCTL_CALL);
	assert_string_equal(r.export, "read_file");
	assert_string_equal(json_string_value(json_object_get(r.input, "path")), "a");
	assert_int_equal(r.timeout_ms, 100);
	assert_string_equal(r.app_dir, "/d");
	assert_string_equal(json_string_value(r.id), "x");
	berth_devctl_req_free(&r);
#define REFUSED(line, c, m)                                                                                  \
	do {                                                                                                 \
		assert_int_equal(berth_devctl_parse(line, strlen(line), &r, &code, &msg), -1);               \
		assert_int_equal(code, c);                                                                   \
		assert_string_equal(msg, m);                                                                 \
		berth_devctl_req_free(&r);                                                                   \
	} while (0)
	REFUSED("nope", BERTH_RPC_PARSE_ERROR, "not JSON");
	REFUSED("{\"id\":1,\"method\":\"info\",\"method\":\"call\"}", BERTH_RPC_PARSE_ERROR, "not JSON");
	/* jansson would take {"id":1\0,"method":"info"} for {"id":1,"method":"info"}: refused whole */
	assert_int_equal(berth_devctl_parse("{\"id\":1\0,\"method\":\"info\"}", 25, &r, &code, &msg), -1);
	assert_int_equal(code, BERTH_RPC_PARSE_ERROR);
	assert_string_equal(msg, "not JSON");
	assert_null(r.id);
	berth_devctl_req_free(&r);
	REFUSED("{\"method\":\"call\",\"params\":{}}", BERTH_RPC_METHOD_NOT_FOUND,
		"berth dev knows `call`, `info` and `watch`");
	REFUSED("{\"method\":\"call\",\"params\":{\"export\":\"x\",\"timeout_ms\":3600001}}",
		BERTH_RPC_INVALID_PARAMS, "timeout_ms must be an integer from 0 to 3600000");
	REFUSED("{\"method\":\"call\",\"params\":{\"export\":\"x\",\"input\":[]}}", BERTH_RPC_INVALID_PARAMS,
		"input must be an object");
	/* the app directory is known even then: the caller refuses another one first */
	const char *other =
	    "{\"method\":\"call\",\"params\":{\"export\":\"x\",\"input\":1,\"app_dir\":\"/o\"}}";
	assert_int_equal(berth_devctl_parse(other, strlen(other), &r, &code, &msg), -1);
	assert_string_equal(r.app_dir, "/o");
	berth_devctl_req_free(&r);
	const char *watch = "{\"method\":\"watch\",\"id\":0}";
	assert_int_equal(berth_devctl_parse(watch, strlen(watch), &r, &code, &msg), 0);
	assert_int_equal(r.method, BERTH_DEVCTL_WATCH);
	berth_devctl_req_free(&r);
}

static void test_appmsg(void **state)
{
	struct berth_appmsg m;
	struct berth_export ex = {.name = "read_file"};
	struct berth_call_error ce;
	json_t *res;
	char missing[64], extra[64];
	const struct berth_export two[] = {{.name = "a"}, {.name = "b"}};

	(void)state;
	ex.output = json_loads("{\"type\":\"object\",\"properties\":{\"content\":{\"type\":\"string\"}},"
			       "\"required\":[\"content\"]}",
			       0, NULL);
#define PARSE(s) berth_appmsg_parse(s, strlen(s), &m)
	PARSE("{\"a\":1,\"a\":2}");
	assert_int_equal(m.kind, BERTH_APPMSG_BAD);
	berth_appmsg_free(&m);
	/* the warning's reason (docs/protocol.md): "not an object" for an array, jansson's otherwise */
	PARSE("[1,2]");
	assert_int_equal(m.kind, BERTH_APPMSG_BAD);
	assert_string_equal(m.bad, "not an object");
	assert_null(m.msg);
	berth_appmsg_free(&m);
	PARSE("5");
	assert_int_equal(m.kind, BERTH_APPMSG_BAD);
	assert_string_equal(m.bad, "'[' or '{' expected near '5'");
	berth_appmsg_free(&m);
	PARSE("{\"jsonrpc\":\"2.0\",\"method\":\"berth/log\",\"params\":{\"message\":\"hi\"}}");
	assert_int_equal(m.kind, BERTH_APPMSG_LOG);
	assert_string_equal(m.level, "info");
	assert_string_equal(m.text, "hi");
	berth_appmsg_free(&m);
	PARSE("{\"method\":\"tools/list\"}");
	assert_int_equal(m.kind, BERTH_APPMSG_OTHER);
	berth_appmsg_free(&m);
	PARSE("{\"result\":{}}");
	assert_int_equal(m.kind, BERTH_APPMSG_NONE);
	berth_appmsg_free(&m);

	PARSE("{\"id\":3,\"result\":{\"content\":\"x\"}}");
	assert_int_equal(m.kind, BERTH_APPMSG_ANSWER);
	assert_true(m.id_ok);
	assert_int_equal(m.id, 3);
	assert_int_equal(berth_appmsg_outcome(&m, &ex, &res, &ce), 0);
	assert_string_equal(json_string_value(json_object_get(res, "content")), "x");
	berth_appmsg_free(&m);
	PARSE("{\"id\":3,\"result\":{\"content\":1}}");
	assert_int_equal(berth_appmsg_outcome(&m, &ex, &res, &ce), -1);
	assert_int_equal(ce.code, BERTH_RPC_BAD_OUTPUT);
	assert_string_equal(ce.message, "invalid output: $.content: expected string, got integer");
	berth_call_error_free(&ce);
	berth_appmsg_free(&m);
	PARSE("{\"id\":\"3\",\"result\":[]}");
	assert_false(m.id_ok);
	assert_int_equal(berth_appmsg_outcome(&m, &ex, &res, &ce), -1);
	assert_string_equal(ce.message, "the app answered `read_file` without a result object");
	berth_call_error_free(&ce);
	berth_appmsg_free(&m);
	/* berth's own codes are not the app's to give; a code beyond 32 bits is none */
	PARSE("{\"id\":1,\"error\":{\"code\":-32003,\"message\":\"\\u001b[2Jgone\",\"data\":{\"errno\":2}}}");
	assert_int_equal(berth_appmsg_outcome(&m, &ex, &res, &ce), -1);
	assert_int_equal(ce.code, BERTH_RPC_APP_ERROR);
	assert_string_equal(ce.message, "\\x1b[2Jgone");
	assert_int_equal(json_integer_value(json_object_get(ce.data, "errno")), 2);
	berth_call_error_free(&ce);
	berth_appmsg_free(&m);
	PARSE("{\"id\":1,\"error\":{\"code\":4294967296}}");
	assert_int_equal(berth_appmsg_outcome(&m, &ex, &res, &ce), -1);
	assert_int_equal(ce.code, BERTH_RPC_INTERNAL);
	assert_string_equal(ce.message, "the app failed");
	berth_call_error_free(&ce);
	berth_appmsg_free(&m);

	PARSE("{\"method\":\"berth/ready\",\"params\":{\"exports\":[\"a\",\"c\",5]}}");
	assert_int_equal(m.kind, BERTH_APPMSG_READY);
	assert_int_equal(berth_appmsg_parity(m.exports, two, 2, missing, extra, sizeof missing), 1);
	assert_string_equal(missing, "`b`");
	assert_string_equal(extra, "`c`, `(not a string)`");
	berth_appmsg_free(&m);
	PARSE("{\"method\":\"berth/ready\",\"params\":{\"exports\":[\"b\",\"a\"]}}");
	assert_int_equal(berth_appmsg_parity(m.exports, two, 2, missing, extra, sizeof missing), 0);
	berth_appmsg_free(&m);
	PARSE("{\"method\":\"berth/ready\",\"params\":{}}");
	assert_int_equal(berth_appmsg_parity(m.exports, two, 2, missing, extra, sizeof missing), -1);
	berth_appmsg_free(&m);
	json_decref(ex.output);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_session_ops),
	    cmocka_unit_test(test_session_refusals),
	    cmocka_unit_test(test_devctl),
	    cmocka_unit_test(test_appmsg),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
