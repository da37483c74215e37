/* SPDX-License-Identifier: MIT */
/*
 * mcp_httpcheck.c - the checks of a `berth mcp --listen` request head
 * (mcp_http.h).
 */
#include "mcp_http.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <sodium.h>

const char *berth_mcp_http_header(const struct berth_http_request *req, const char *name, size_t *len)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < req->n_headers; i++)
		if (req->headers[i].name_len == n && strncasecmp(req->headers[i].name, name, n) == 0) {
			*len = req->headers[i].value_len;
			return req->headers[i].value;
		}
	return NULL;
}

static bool digits(const char *s, size_t n, unsigned max)
{
	unsigned long v = 0;
	if (n == 0 || n > 5 || (n > 1 && s[0] == '0'))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	return v <= max;
}

static bool loopback_v4(const char *s, size_t n)
{
	size_t part = 0, start = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i == n || s[i] == '.') {
			if (!digits(s + start, i - start, 255))
				return false;
			if (part == 0 && (i - start != 3 || memcmp(s, "127", 3) != 0))
				return false;
			part++;
			start = i + 1;
		}
	}
	return part == 4;
}

bool berth_mcp_http_origin_ok(const char *v, size_t n)
{
	size_t off;
	if (n > 7 && strncasecmp(v, "http://", 7) == 0)
		off = 7;
	else if (n > 8 && strncasecmp(v, "https://", 8) == 0)
		off = 8;
	else
		return false;
	const char *h = v + off, *end = v + n, *port = NULL;
	size_t hl;
	if (h < end && *h == '[') {
		const char *close = memchr(h, ']', (size_t)(end - h));
		if (close == NULL || (size_t)(close - h) != 4 || memcmp(h, "[::1", 4) != 0)
			return false;
		hl = 5;
		port = close + 1;
	} else {
		const char *colon = memchr(h, ':', (size_t)(end - h));
		hl = (size_t)((colon != NULL ? colon : end) - h);
		port = h + hl;
		if (!((hl == 9 && strncasecmp(h, "localhost", 9) == 0) || loopback_v4(h, hl)))
			return false;
	}
	if (port == end)
		return true;
	return *port == ':' && digits(port + 1, (size_t)(end - port - 1), 65535);
}

static void refuse(struct berth_mcp_http_verdict *v, int status, const char *reason)
{
	v->status = status;
	snprintf(v->reason, sizeof v->reason, "%s", reason);
}

static bool is(const char *s, size_t n, const char *want)
{
	return s != NULL && n == strlen(want) && memcmp(s, want, n) == 0;
}

void berth_mcp_http_check(const struct berth_http_request *req, const struct berth_mcp_http_state *s,
			  struct berth_mcp_http_verdict *v)
{
	size_t n = 0;
	const char *h;

	memset(v, 0, sizeof *v);
	v->close = req->minor == 0;
	if ((h = berth_mcp_http_header(req, "Connection", &n)) != NULL)
		v->close |= n == 5 && strncasecmp(h, "close", 5) == 0;
	/* the path, without a query */
	size_t pl = req->path != NULL ? req->path_len : 0;
	const char *q = pl ? memchr(req->path, '?', pl) : NULL;
	if (q != NULL)
		pl = (size_t)(q - req->path);
	if (!is(req->path, pl, BERTH_MCP_HTTP_PATH))
		return refuse(v, 404, "no such path: the MCP endpoint is /mcp");
	if (is(req->method, req->method_len, "POST"))
		v->method = MCP_HTTP_POST;
	else if (is(req->method, req->method_len, "GET"))
		v->method = MCP_HTTP_GET;
	else if (is(req->method, req->method_len, "DELETE"))
		v->method = MCP_HTTP_DELETE;
	else
		return refuse(v, 405, "method not allowed: use POST, GET or DELETE");
	/* a header that decides must be there once: which of two a proxy or
	 * client would take is not ours to guess */
	static const char *const once[] = {"Authorization", "Origin", "Host", "Mcp-Session-Id",
					   "MCP-Protocol-Version"};
	for (size_t k = 0; k < sizeof once / sizeof once[0]; k++) {
		size_t cnt = 0, nl = strlen(once[k]);
		for (size_t i = 0; i < req->n_headers; i++)
			cnt += req->headers[i].name_len == nl &&
			       strncasecmp(req->headers[i].name, once[k], nl) == 0;
		if (cnt > 1) {
			snprintf(v->reason, sizeof v->reason, "the %s header is given more than once",
				 once[k]);
			v->status = 400;
			return;
		}
	}
	h = berth_mcp_http_header(req, "Authorization", &n);
	size_t tl = strlen(s->token);
	if (h == NULL || n != 7 + tl || strncasecmp(h, "Bearer ", 7) != 0 ||
	    sodium_memcmp(h + 7, s->token, tl) != 0)
		return refuse(v, 401,
			      h == NULL
				  ? "missing Authorization: Bearer token (printed by berth mcp --listen, or "
				    "in its --token-file)"
				  : "wrong bearer token");
	if ((h = berth_mcp_http_header(req, "Origin", &n)) != NULL && !berth_mcp_http_origin_ok(h, n))
		return refuse(v, 403,
			      "Origin is not a loopback origin (http://localhost, 127.0.0.1 or [::1])");
	if ((h = berth_mcp_http_header(req, "MCP-Protocol-Version", &n)) != NULL) {
		bool known = false;
		for (size_t i = 0; s->versions[i] != NULL; i++)
			known |= is(h, n, s->versions[i]);
		if (!known)
			return refuse(v, 400, "unsupported MCP-Protocol-Version");
		if (s->version != NULL && !is(h, n, s->version))
			return refuse(v, 400,
				      "MCP-Protocol-Version is not the revision negotiated at initialize");
	}
	h = berth_mcp_http_header(req, "Mcp-Session-Id", &n);
	v->session_ok = h != NULL && s->session != NULL && is(h, n, s->session);
	if (v->method == MCP_HTTP_POST) {
		if (req->body == BERTH_HTTP_BODY_CHUNKED)
			return refuse(v, 411, "send the message with a Content-Length");
		if (req->body != BERTH_HTTP_BODY_LENGTH || req->content_length == 0)
			return refuse(v, 400, "a POST carries one JSON-RPC message");
		if (req->content_length > 8 * 1024 * 1024)
			return refuse(v, 413, "message over 8 MiB");
		if (h != NULL && !v->session_ok)
			return refuse(v, 404, "no such session: initialize again");
		return;
	}
	if (req->body != BERTH_HTTP_BODY_NONE &&
	    !(req->body == BERTH_HTTP_BODY_LENGTH && req->content_length == 0))
		return refuse(v, 400, "GET and DELETE carry no body");
	if (h == NULL && v->method == MCP_HTTP_GET)
		return refuse(
		    v, 405, "no stream without a session (initialize first; 2026-07-28 requests have none)");
	if (h == NULL)
		return refuse(v, 400, "missing Mcp-Session-Id");
	if (!v->session_ok)
		return refuse(v, 404, "no such session: initialize again");
	if (v->method == MCP_HTTP_GET) {
		h = berth_mcp_http_header(req, "Accept", &n);
		if (h == NULL || memmem(h, n, "text/event-stream", 17) == NULL)
			return refuse(v, 406, "GET opens an event stream: Accept: text/event-stream");
	}
}
