/* SPDX-License-Identifier: MIT */
/*
 * devctl.c - a `berth dev` control request line into a method and checked
 * parameters (devctl.h): the checks dev.c's serve() made inline, in the
 * same order, without the app.
 */
#include "devctl.h"

#include <string.h>

#include "app.h"

int berth_devctl_parse(const char *line, size_t len, struct berth_devctl_req *req, int *code,
		       const char **message)
{
	const char *method;
	json_t *params, *jt;

	memset(req, 0, sizeof *req);
	/* jansson takes a NUL byte after a number for the number's end
	 * ({"id":1\0} loads): a request holds none. */
	req->msg =
	    memchr(line, '\0', len) == NULL ? json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL) : NULL;
	if (req->msg == NULL) {
		*code = BERTH_RPC_PARSE_ERROR;
		*message = "not JSON";
		return -1;
	}
	req->id = json_object_get(req->msg, "id");
	method = json_string_value(json_object_get(req->msg, "method"));
	params = json_object_get(req->msg, "params");
	if (method != NULL && strcmp(method, "info") == 0) {
		req->method = BERTH_DEVCTL_INFO;
		return 0;
	}
	if (method != NULL && strcmp(method, "watch") == 0) {
		req->method = BERTH_DEVCTL_WATCH;
		return 0;
	}
	if (method == NULL || strcmp(method, "call") != 0 ||
	    !json_is_string(json_object_get(params, "export"))) {
		*code = BERTH_RPC_METHOD_NOT_FOUND;
		*message = "berth dev knows `call`, `info` and `watch`";
		return -1;
	}
	req->method = BERTH_DEVCTL_CALL;
	req->export = json_string_value(json_object_get(params, "export"));
	req->app_dir = json_string_value(json_object_get(params, "app_dir"));
	jt = json_object_get(params, "timeout_ms");
	if (jt != NULL && !json_is_null(jt) &&
	    (!json_is_integer(jt) || json_integer_value(jt) < 0 ||
	     json_integer_value(jt) > BERTH_DEVCTL_TIMEOUT_MAX_MS)) {
		*code = BERTH_RPC_INVALID_PARAMS;
		*message = "timeout_ms must be an integer from 0 to 3600000";
		return -1;
	}
	req->timeout_ms = (unsigned)json_integer_value(jt);
	req->input = json_object_get(params, "input");
	if (json_is_null(req->input))
		req->input = NULL; /* no input: {} */
	if (req->input != NULL && !json_is_object(req->input)) {
		*code = BERTH_RPC_INVALID_PARAMS;
		*message = "input must be an object";
		return -1;
	}
	return 0;
}

void berth_devctl_req_free(struct berth_devctl_req *req)
{
	json_decref(req->msg);
	memset(req, 0, sizeof *req);
}
