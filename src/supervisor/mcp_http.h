/* SPDX-License-Identifier: MIT */
/*
 * mcp_http.h - the checks of `berth mcp --listen` (the Streamable HTTP
 * transport, mcp_http.c) on a request head, as pure functions: no I/O, no
 * state, so that the fuzzer (fuzz/fuzz_mcp_http.c) reaches them.  The head
 * itself is parsed by the broker's parser (src/broker/http.h) in
 * BERTH_HTTP_ORIGIN mode.
 */
#ifndef BERTH_SUPERVISOR_MCP_HTTP_H
#define BERTH_SUPERVISOR_MCP_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "../broker/http.h"

#define BERTH_MCP_HTTP_PATH "/mcp"
#define BERTH_MCP_HTTP_REASON_MAX 200

enum berth_mcp_http_method { MCP_HTTP_POST = 1, MCP_HTTP_GET, MCP_HTTP_DELETE };

/* What the checks need to know of the server. */
struct berth_mcp_http_state {
	const char *token;           /* the bearer token */
	const char *session;         /* the live session's id, or NULL */
	const char *version;         /* the negotiated revision, or NULL before initialize */
	const char *const *versions; /* every revision served, NULL-terminated */
};

/* The verdict on a request head. */
struct berth_mcp_http_verdict {
	int status;                             /* 0: go on; else the HTTP status to answer */
	char reason[BERTH_MCP_HTTP_REASON_MAX]; /* why, in words (no control bytes) */
	enum berth_mcp_http_method method;      /* when status is 0 */
	bool session_ok;                        /* Mcp-Session-Id names the live session */
	bool close;                             /* the client asked for Connection: close, or HTTP/1.0 */
};

/*
 * berth_mcp_http_origin_ok - whether an Origin value names a loopback
 * origin: http or https, host localhost, 127.0.0.0/8 as a dotted quad, or
 * [::1], an optional port, nothing else (RFC 6454 serialisation).  "null"
 * and everything else are not.
 */
bool berth_mcp_http_origin_ok(const char *v, size_t n);

/*
 * berth_mcp_http_check - check a parsed request head against @s, in this
 * order: the path is /mcp (else 404); the method is POST, GET or DELETE
 * (else 405); Authorization is `Bearer <token>` (else 401); an Origin, when
 * present, is loopback (else 403); MCP-Protocol-Version, when present, is a
 * revision served and, once initialized, the negotiated one (else 400); a
 * POST has a Content-Length body (chunked: 411); GET and DELETE need the
 * live session (no Mcp-Session-Id: GET 405, DELETE 400; another: 404).  Whether a POST needs the session
 * depends on its body: the caller checks that with @v->session_ok.
 */
void berth_mcp_http_check(const struct berth_http_request *req, const struct berth_mcp_http_state *s,
			  struct berth_mcp_http_verdict *v);

/* berth_mcp_http_header - the value of header @name (case-insensitive) in
 * @req, its length in *@len, or NULL when absent. */
const char *berth_mcp_http_header(const struct berth_http_request *req, const char *name, size_t *len);

#endif
