/* SPDX-License-Identifier: MIT */
/*
 * fuzz_mcp_http.c - libFuzzer target for `berth mcp --listen`'s checks of a
 * request head (src/supervisor/mcp_http.h): the head as the transport reads
 * it (the broker's parser in origin mode), then berth_mcp_http_check()
 * against a fixed token, session and revision, and berth_mcp_http_origin_ok()
 * on every Origin-like value.  Besides memory errors it checks:
 *  - a refusal has one of the documented statuses and a reason free of
 *    control bytes; a pass names POST, GET or DELETE;
 *  - a pass carried `Bearer <the token>` and the /mcp path, an Origin only
 *    when loopback, an MCP-Protocol-Version only when the negotiated one;
 *  - the verdict is the same twice (no hidden state), and the same when the
 *    server has no session (then GET and DELETE never pass);
 *  - an Origin found loopback starts with http:// or https:// and has no
 *    path, user or query (no '/', '@', '?', '#' after the scheme).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "supervisor/mcp_http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const versions[] = {"2026-07-28", "2025-11-25", "2025-06-18",
				       "2025-03-26", "2024-11-05", NULL};
#define TOKEN "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
#define SESSION "0123456789abcdef0123456789abcdef"

static void check_origin(const char *v, size_t n)
{
	if (!berth_mcp_http_origin_ok(v, n))
		return;
	size_t off = n > 7 && strncasecmp(v, "http://", 7) == 0 ? 7 : 8;
	if (!(n > 8 && strncasecmp(v, "https://", 8) == 0) && off == 8)
		abort();
	for (size_t i = off; i < n; i++)
		if (v[i] == '/' || v[i] == '@' || v[i] == '?' || v[i] == '#' || (unsigned char)v[i] < 0x21)
			abort();
}

static void check(const struct berth_http_request *req, const struct berth_mcp_http_state *s)
{
	struct berth_mcp_http_verdict v, w;
	size_t n = 0;

	berth_mcp_http_check(req, s, &v);
	berth_mcp_http_check(req, s, &w);
	if (v.status != w.status || strcmp(v.reason, w.reason) != 0 || v.method != w.method)
		abort();
	for (const char *p = v.reason; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			abort();
	if (v.status != 0) {
		static const int ok[] = {400, 401, 403, 404, 405, 406, 411, 413};
		bool known = false;
		for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
			known |= v.status == ok[i];
		if (!known || v.reason[0] == '\0')
			abort();
		return;
	}
	if (v.method != MCP_HTTP_POST && v.method != MCP_HTTP_GET && v.method != MCP_HTTP_DELETE)
		abort();
	if (req->path == NULL || req->path_len < 4 || memcmp(req->path, "/mcp", 4) != 0 ||
	    (req->path_len > 4 && req->path[4] != '?'))
		abort();
	const char *a = berth_mcp_http_header(req, "Authorization", &n);
	if (a == NULL || n != 7 + strlen(TOKEN) || memcmp(a + 7, TOKEN, strlen(TOKEN)) != 0)
		abort();
	const char *o = berth_mcp_http_header(req, "Origin", &n);
	if (o != NULL && !berth_mcp_http_origin_ok(o, n))
		abort();
	const char *pv = berth_mcp_http_header(req, "MCP-Protocol-Version", &n);
	if (pv != NULL && s->version != NULL && (n != strlen(s->version) || memcmp(pv, s->version, n) != 0))
		abort();
	if (v.method != MCP_HTTP_POST && (s->session == NULL || !v.session_ok))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct berth_http_parser p;
	size_t used = 0;

	if (size > 131072)
		return 0;
	/* the whole input as an Origin value too */
	check_origin((const char *)data, size);
	berth_http_init(&p, BERTH_HTTP_ORIGIN);
	if (berth_http_feed(&p, data, size, &used) == BERTH_HTTP_DONE) {
		struct berth_mcp_http_state live = {TOKEN, SESSION, "2025-11-25", versions};
		struct berth_mcp_http_state fresh = {TOKEN, NULL, NULL, versions};
		check(&p.req, &live);
		check(&p.req, &fresh);
		for (size_t i = 0; i < p.req.n_headers; i++)
			check_origin(p.req.headers[i].value, p.req.headers[i].value_len);
	}
	berth_http_free(&p);
	return 0;
}
