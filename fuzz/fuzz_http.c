/* SPDX-License-Identifier: MIT */
/*
 * fuzz_http.c - libFuzzer target for the egress broker's HTTP proxy request
 * parser and origin-form rewrite (src/broker/http.c).  Inputs are capped at
 * 128 KiB (the parser holds at most BERTH_HTTP_MAX_HEAD bytes of them).
 *
 * The first byte chooses how the rest is fed: bit 7 the mode (proxy or
 * origin), bit 6 small pieces (1-8 bytes) or larger ones (1-700), bits 0-5
 * seed the piece sizes.  Besides memory errors it checks:
 *  - the verdict, status and reason, and when done the bytes consumed and
 *    the whole parsed request, are the same fed at once and in pieces;
 *  - a refusal has one of the documented statuses, a reason free of control
 *    characters, and formats into a reply;
 *  - a parsed request is normalised: the host normalises to itself, the port
 *    is not 0, the head ends where an LF ends, field names are tokens and
 *    values hold no CR, LF or NUL;
 *  - the rewrite of a parsed non-CONNECT request is refused only with 400,
 *    414 or 431; otherwise it is at most BERTH_HTTP_MAX_HEAD bytes and, read
 *    back in origin mode, names the same method, host, port, path, version
 *    and body, and its only hop-by-hop field is berth's `Connection: close`.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t rng_state;

static uint32_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

static enum berth_http_verdict feed(struct berth_http_parser *p, const uint8_t *d, size_t n, size_t max_piece,
				    size_t *consumed)
{
	enum berth_http_verdict v = BERTH_HTTP_NEED_MORE;
	size_t pos = 0;

	*consumed = 0;
	while (pos < n && v == BERTH_HTTP_NEED_MORE) {
		size_t piece = max_piece == 0 ? n - pos : 1 + rng() % max_piece, c = 0;

		if (piece > n - pos)
			piece = n - pos;
		v = berth_http_feed(p, d + pos, piece, &c);
		if (c > piece || (v == BERTH_HTTP_NEED_MORE && c != piece))
			abort();
		*consumed += c;
		pos += piece;
	}
	return v;
}

static bool str_eq(const char *a, size_t an, const char *b, size_t bn)
{
	return an == bn && (an == 0 || memcmp(a, b, an) == 0);
}

static void same_request(const struct berth_http_request *a, const struct berth_http_request *b)
{
	if (!str_eq(a->method, a->method_len, b->method, b->method_len) || a->connect != b->connect ||
	    a->minor != b->minor || a->host_kind != b->host_kind || strcmp(a->host, b->host) != 0 ||
	    a->port != b->port || (a->path == NULL) != (b->path == NULL) ||
	    (a->path != NULL && !str_eq(a->path, a->path_len, b->path, b->path_len)) || a->body != b->body ||
	    a->content_length != b->content_length || a->n_headers != b->n_headers)
		abort();
	for (size_t i = 0; i < a->n_headers; i++) {
		const struct berth_http_header *x = &a->headers[i], *y = &b->headers[i];

		if (!str_eq(x->name, x->name_len, y->name, y->name_len) ||
		    !str_eq(x->value, x->value_len, y->value, y->value_len) || x->hop_by_hop != y->hop_by_hop)
			abort();
	}
}

static bool tchar(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static void check_request(const struct berth_http_request *r)
{
	char host[BERTH_TARGET_HOST_MAX + 1];
	enum berth_target_kind kind;
	const char *why;

	if (berth_http_normalize_host(r->host, strlen(r->host), r->host_kind == BERTH_TARGET_IPV6, host,
				      &kind, &why) != 0 ||
	    strcmp(host, r->host) != 0 || kind != r->host_kind || r->port == 0)
		abort();
	if (r->method_len == 0 || strlen(r->method) != r->method_len || (r->minor != 0 && r->minor != 1))
		abort();
	if (r->connect != (r->path == NULL) ||
	    (r->path != NULL && (r->path_len == 0 || strlen(r->path) != r->path_len)))
		abort();
	for (size_t i = 0; i < r->n_headers; i++) {
		const struct berth_http_header *h = &r->headers[i];

		if (h->name_len == 0 || strlen(h->name) != h->name_len || strlen(h->value) != h->value_len)
			abort();
		for (size_t k = 0; k < h->name_len; k++)
			if (!tchar((unsigned char)h->name[k]))
				abort();
		if (memchr(h->value, '\r', h->value_len) != NULL ||
		    memchr(h->value, '\n', h->value_len) != NULL)
			abort();
	}
}

static void check_refusal(const struct berth_http_error *e)
{
	static char reply[BERTH_HTTP_REPLY_MAX];

	switch (e->status) {
	case 400:
	case 405:
	case 414:
	case 431:
	case 501:
	case 505:
		break;
	default:
		abort(); /* 500 is only for memory exhaustion, never expected here */
	}
	if (e->reason[0] == '\0')
		abort();
	for (const char *c = e->reason; *c != '\0'; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			abort();
	if (berth_http_format_error(reply, sizeof reply, e->status, e->reason) <= 0)
		abort();
}

static void check_rewrite(const struct berth_http_request *r)
{
	static char out[BERTH_HTTP_MAX_HEAD + 1];
	static struct berth_http_parser q;
	struct berth_http_error e = {0};
	long n = berth_http_rewrite_origin(r, out, sizeof out, &e);
	size_t consumed;

	if (n < 0) {
		if (e.status != 400 && e.status != 414 && e.status != 431)
			abort();
		return;
	}
	if ((size_t)n > BERTH_HTTP_MAX_HEAD || berth_http_rewrite_origin(r, NULL, 0, &e) != n)
		abort();
	berth_http_init(&q, BERTH_HTTP_ORIGIN);
	if (berth_http_feed(&q, out, (size_t)n, &consumed) != BERTH_HTTP_DONE || consumed != (size_t)n)
		abort();
	if (!str_eq(q.req.method, q.req.method_len, r->method, r->method_len) ||
	    strcmp(q.req.host, r->host) != 0 || q.req.host_kind != r->host_kind || q.req.port != r->port ||
	    !str_eq(q.req.path, q.req.path_len, r->path, r->path_len) || q.req.minor != r->minor ||
	    q.req.body != r->body || q.req.content_length != r->content_length)
		abort();
	for (size_t i = 0; i < q.req.n_headers; i++)
		if (q.req.headers[i].hop_by_hop && strcmp(q.req.headers[i].name, "Connection") != 0)
			abort();
	berth_http_free(&q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct berth_http_parser a, b;
	enum berth_http_mode mode;
	enum berth_http_verdict va, vb;
	size_t ca, cb;

	if (size < 1 || size > 131072)
		return 0;
	mode = (data[0] & 0x80) != 0 ? BERTH_HTTP_ORIGIN : BERTH_HTTP_PROXY;
	rng_state = 0x9e3779b9u ^ (uint32_t)(data[0] & 0x3f) * 2654435761u;
	berth_http_init(&a, mode);
	berth_http_init(&b, mode);
	va = feed(&a, data + 1, size - 1, 0, &ca);
	vb = feed(&b, data + 1, size - 1, (data[0] & 0x40) != 0 ? 8 : 700, &cb);
	if (va != vb)
		abort();
	if (va == BERTH_HTTP_BAD) {
		if (a.err.status != b.err.status || strcmp(a.err.reason, b.err.reason) != 0)
			abort();
		check_refusal(&a.err);
	} else if (va == BERTH_HTTP_DONE) {
		if (ca != cb || ca == 0 || data[ca] != '\n') /* data[ca] is the last byte of the head */
			abort();
		same_request(&a.req, &b.req);
		check_request(&a.req);
		if (!a.req.connect)
			check_rewrite(&a.req);
	} else if (ca != size - 1 || cb != size - 1) {
		abort();
	}
	berth_http_free(&a);
	berth_http_free(&b);
	return 0;
}
