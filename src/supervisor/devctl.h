/* SPDX-License-Identifier: MIT */
/*
 * devctl.h - one request line of `berth dev`'s control socket (JSON-RPC
 * 2.0; man/berth.1, docs/mcp.md; served by src/supervisor/dev.c) parsed
 * into a method and its checked parameters, without the app: pure, so it is
 * fuzzed on its own (fuzz/fuzz_control.c).
 *   {"method":"info"}  {"method":"watch"}
 *   {"method":"call","params":{"export":NAME[,"input":{...}|null]
 *                              [,"timeout_ms":MS|null][,"app_dir":DIR]}}
 * "id" is whatever the client sent (echoed in the answer).
 */
#ifndef BERTH_SUPERVISOR_DEVCTL_H
#define BERTH_SUPERVISOR_DEVCTL_H

#include <jansson.h>

#define BERTH_DEVCTL_TIMEOUT_MAX_MS 3600000

enum berth_devctl_method {
	BERTH_DEVCTL_NONE, /* parse failed */
	BERTH_DEVCTL_INFO,
	BERTH_DEVCTL_WATCH,
	BERTH_DEVCTL_CALL,
};

struct berth_devctl_req {
	enum berth_devctl_method method;
	json_t *msg;         /* the request (owned); the pointers below point into it */
	json_t *id;          /* its "id", or NULL (answered as null) */
	const char *export;  /* call: the export's name */
	json_t *input;       /* call: the input object, or NULL (absent or null: {}) */
	unsigned timeout_ms; /* call: 0 (the default) to BERTH_DEVCTL_TIMEOUT_MAX_MS */
	const char *app_dir; /* call: the directory the caller means, or NULL */
};

/*
 * berth_devctl_parse - parse the request line @line of @len bytes (without
 * its newline) into @req.
 * Returns 0 with @req filled, or -1 with the JSON-RPC error to answer in
 * *@code and *@message (a static string):
 *   BERTH_RPC_PARSE_ERROR "not JSON" (req->id NULL), also for a line with a
 *     NUL byte (dev.c's json_loadb took one after a number);
 *   BERTH_RPC_METHOD_NOT_FOUND "berth dev knows `call`, `info` and `watch`"
 *     for JSON that is no object, another method, or a call without a
 *     string "export";
 *   BERTH_RPC_INVALID_PARAMS "timeout_ms must be an integer from 0 to
 *     3600000" or "input must be an object" -- then method, export and
 *     app_dir are set too, so the caller can refuse another app's directory
 *     first, as it always did.
 * Free @req with berth_devctl_req_free in both cases.
 */
int berth_devctl_parse(const char *line, size_t len, struct berth_devctl_req *req, int *code,
		       const char **message);

/* berth_devctl_req_free - release @req's request; @req is left empty. */
void berth_devctl_req_free(struct berth_devctl_req *req);

#endif
