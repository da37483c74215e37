/* SPDX-License-Identifier: MIT */
/*
 * test_http.c - unit tests of src/broker/http.c: the proxy request parser,
 * the origin-form rewrite and the proxy's replies.
 *
 * Every request goes through parse(), which feeds it at once, one byte at a
 * time, and in pieces of 2, 3, 7 and 100 bytes, and fails unless the
 * verdict, status, reason, bytes consumed and the parsed request are the
 * same each time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/hostpat.h" /* the broker includes both: no name may clash */
#include "broker/http.h"

/* ---- helpers ------------------------------------------------------------- */

/* Everything a parse produced, as text, to compare two parses. */
static char *summary(const struct berth_http_parser *p, enum berth_http_verdict v, size_t consumed)
{
	size_t cap = BERTH_HTTP_MAX_HEAD * 2 + 1024, n = 0;
	char *s = malloc(cap);
	const struct berth_http_request *r = &p->req;

	assert_non_null(s);
	/* After a refusal, how far the parser read depends on the cuts (http.h). */
	n +=
	    (size_t)snprintf(s + n, cap - n, "v=%d consumed=%zu", (int)v, v == BERTH_HTTP_BAD ? 0 : consumed);
	if (v == BERTH_HTTP_BAD)
		n += (size_t)snprintf(s + n, cap - n, " status=%d reason=%s", p->err.status, p->err.reason);
	if (v == BERTH_HTTP_DONE) {
		n += (size_t)snprintf(s + n, cap - n,
				      " method=%.*s connect=%d minor=%d kind=%d host=%s port=%u",
				      (int)r->method_len, r->method, r->connect, r->minor, (int)r->host_kind,
				      r->host, (unsigned)r->port);
		n += (size_t)snprintf(s + n, cap - n, " path=%.*s body=%d cl=%llu", (int)r->path_len,
				      r->path != NULL ? r->path : "", (int)r->body,
				      (unsigned long long)r->content_length);
		for (size_t i = 0; i < r->n_headers; i++)
			n += (size_t)snprintf(s + n, cap - n, " [%s=%s%s]", r->headers[i].name,
					      r->headers[i].value, r->headers[i].hop_by_hop ? " hop" : "");
	}
	return s;
}

static enum berth_http_verdict feed_in_pieces(struct berth_http_parser *p, const char *in, size_t len,
					      size_t piece, size_t *consumed)
{
	enum berth_http_verdict v = BERTH_HTTP_NEED_MORE;
	size_t pos = 0;

	*consumed = 0;
	while (pos < len && v == BERTH_HTTP_NEED_MORE) {
		size_t n = len - pos < piece ? len - pos : piece, c = 0;

		v = berth_http_feed(p, in + pos, n, &c);
		assert_true(c <= n);
		if (v == BERTH_HTTP_NEED_MORE)
			assert_int_equal(c, n);
		*consumed += c;
		pos += n;
	}
	return v;
}

/* Parse @in into @p (initialised here, freed by the caller) and check that
 * every way of cutting it gives the same result. */
static enum berth_http_verdict parse_mode(struct berth_http_parser *p, enum berth_http_mode mode,
					  const char *in, size_t len)
{
	static const size_t pieces[] = {1, 2, 3, 7, 100};
	enum berth_http_verdict v;
	size_t consumed;
	char *want;

	berth_http_init(p, mode);
	v = feed_in_pieces(p, in, len, len > 0 ? len : 1, &consumed);
	want = summary(p, v, consumed);
	for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
		struct berth_http_parser *q = malloc(sizeof *q);
		enum berth_http_verdict w;
		size_t c;
		char *got;

		assert_non_null(q);
		berth_http_init(q, mode);
		w = feed_in_pieces(q, in, len, pieces[i], &c);
		got = summary(q, w, c);
		if (strcmp(want, got) != 0)
			fail_msg("pieces of %zu:\n%.300s\n  differs from one piece:\n%.300s", pieces[i], got,
				 want);
		free(got);
		berth_http_free(q);
		free(q);
	}
	free(want);
	return v;
}

static struct berth_http_parser *new_parser(void)
{
	struct berth_http_parser *p = calloc(1, sizeof *p);

	assert_non_null(p);
	return p;
}

static void drop(struct berth_http_parser *p)
{
	berth_http_free(p);
	free(p);
}

/* @in must be refused with @status and a reason containing @why. */
static void expect_bad_mode(enum berth_http_mode mode, const char *in, size_t len, int status,
			    const char *why)
{
	struct berth_http_parser *p = new_parser();

	if (parse_mode(p, mode, in, len) != BERTH_HTTP_BAD)
		fail_msg("accepted: %.200s", in);
	if (p->err.status != status || strstr(p->err.reason, why) == NULL)
		fail_msg("%.200s\n  got %d \"%s\", want %d \"...%s...\"", in, p->err.status, p->err.reason,
			 status, why);
	drop(p);
}

static void expect_bad(const char *in, int status, const char *why)
{
	expect_bad_mode(BERTH_HTTP_PROXY, in, strlen(in), status, why);
}

/* @in must parse; returns the parser for inspection. */
static struct berth_http_parser *expect_ok_mode(enum berth_http_mode mode, const char *in, size_t len)
{
	struct berth_http_parser *p = new_parser();

	if (parse_mode(p, mode, in, len) != BERTH_HTTP_DONE)
		fail_msg("not DONE (%d \"%s\"): %.200s", p->err.status, p->err.reason, in);
	return p;
}

static struct berth_http_parser *expect_ok(const char *in)
{
	return expect_ok_mode(BERTH_HTTP_PROXY, in, strlen(in));
}

static char *rewrite(const struct berth_http_request *r)
{
	struct berth_http_error e = {0};
	long n = berth_http_rewrite_origin(r, NULL, 0, &e);
	char *buf;

	if (n < 0)
		fail_msg("rewrite refused: %d %s", e.status, e.reason);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(berth_http_rewrite_origin(r, buf, (size_t)n + 1, &e), n);
	assert_int_equal(strlen(buf), (size_t)n);
	return buf;
}

/* A string of @n copies of @c, in a static buffer of one of four slots. */
static char *fill(char c, size_t n)
{
	static char slots[4][BERTH_HTTP_MAX_HEAD];
	static int next;
	char *s = slots[next++ % 4];

	assert_true(n < BERTH_HTTP_MAX_HEAD);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

/* A growing request text. */
struct text {
	char *s;
	size_t len, cap;
};

static void add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (t->len + (size_t)n + 1 > t->cap) {
		t->cap = (t->len + (size_t)n + 1) * 2;
		t->s = realloc(t->s, t->cap);
		assert_non_null(t->s);
	}
	va_start(ap, fmt);
	vsnprintf(t->s + t->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}

/* ---- CONNECT ------------------------------------------------------------- */

static void test_connect(void **state)
{
	const char *in = "CONNECT Api.Example.COM:443 HTTP/1.1\r\nHost: api.example.com:443\r\n"
			 "User-Agent: curl/8.5.0\r\n\r\n\x16\x03\x01";
	struct berth_http_parser *p = new_parser();
	size_t consumed;

	(void)state;
	berth_http_init(p, BERTH_HTTP_PROXY);
	assert_int_equal(berth_http_feed(p, in, strlen(in), &consumed), BERTH_HTTP_DONE);
	assert_int_equal(consumed, strlen(in) - 3); /* the TLS bytes are the caller's */
	assert_true(p->req.connect);
	assert_string_equal(p->req.method, "CONNECT");
	assert_int_equal(p->req.method_len, 7);
	assert_string_equal(p->req.host, "api.example.com");
	assert_int_equal(p->req.host_kind, BERTH_TARGET_NAME);
	assert_int_equal(p->req.port, 443);
	assert_null(p->req.path);
	assert_int_equal(p->req.minor, 1);
	assert_int_equal(p->req.body, BERTH_HTTP_BODY_NONE);
	assert_int_equal(p->req.n_headers, 2);
	assert_string_equal(p->req.headers[1].name, "User-Agent");
	assert_string_equal(p->req.headers[1].value, "curl/8.5.0");
	/* After DONE nothing more is taken. */
	assert_int_equal(berth_http_feed(p, "x", 1, &consumed), BERTH_HTTP_DONE);
	assert_int_equal(consumed, 0);
	drop(p);

	p = expect_ok("CONNECT [2001:DB8:0:0::1]:8443 HTTP/1.0\r\n\r\n");
	assert_string_equal(p->req.host, "2001:db8::1");
	assert_int_equal(p->req.host_kind, BERTH_TARGET_IPV6);
	assert_int_equal(p->req.port, 8443);
	assert_int_equal(p->req.minor, 0);
	drop(p);

	p = expect_ok("CONNECT 93.184.216.34:1 HTTP/1.1\r\n\r\n");
	assert_string_equal(p->req.host, "93.184.216.34");
	assert_int_equal(p->req.host_kind, BERTH_TARGET_IPV4);
	assert_int_equal(p->req.port, 1);
	drop(p);

	p = expect_ok("CONNECT h:65535 HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
	assert_int_equal(p->req.port, 65535);
	drop(p);

	/* A CONNECT's Host is checked for syntax only. */
	p = expect_ok("CONNECT a.example:443 HTTP/1.1\r\nHost: b.example\r\n\r\n");
	assert_string_equal(p->req.host, "a.example");
	drop(p);
	expect_bad("CONNECT a.example:443 HTTP/1.1\r\nHost: b example\r\n\r\n", 400, "invalid Host header");
}

static void test_connect_refused(void **state)
{
	(void)state;
	expect_bad("CONNECT example.com HTTP/1.1\r\n\r\n", 400, "a port is required");
	expect_bad("CONNECT example.com: HTTP/1.1\r\n\r\n", 400, "a port is required");
	expect_bad("CONNECT example.com:0 HTTP/1.1\r\n\r\n", 400, "1-65535");
	expect_bad("CONNECT example.com:65536 HTTP/1.1\r\n\r\n", 400, "1-65535");
	expect_bad("CONNECT example.com:44x HTTP/1.1\r\n\r\n", 400, "1-65535");
	expect_bad("CONNECT :443 HTTP/1.1\r\n\r\n", 400, "empty host");
	expect_bad("CONNECT user@example.com:443 HTTP/1.1\r\n\r\n", 400, "user information");
	expect_bad("CONNECT 2001:db8::1:443 HTTP/1.1\r\n\r\n", 400, "CONNECT needs a target");
	expect_bad("CONNECT [fe80::1%25eth0]:443 HTTP/1.1\r\n\r\n", 400, "zone");
	expect_bad("CONNECT [v1.x]:443 HTTP/1.1\r\n\r\n", 400, "invalid IPv6 address");
	expect_bad("CONNECT [::1:443 HTTP/1.1\r\n\r\n", 400, "without `]`");
	expect_bad("CONNECT [::1]x:443 HTTP/1.1\r\n\r\n", 400, "after `]`");
	expect_bad("CONNECT http://example.com:443/ HTTP/1.1\r\n\r\n", 400, "CONNECT needs a target");
	expect_bad("CONNECT example.com:443 HTTP/1.1\r\nContent-Length: 5\r\n\r\n", 400, "no content");
	expect_bad("CONNECT example.com:443 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
		   "no content");
	/* Methods are case-sensitive: lowercase connect is another method, and
	 * authority-form is for CONNECT only. */
	expect_bad("connect example.com:443 HTTP/1.1\r\n\r\n", 400, "neither an http:// URL nor host:port");
}

/* ---- absolute-form ------------------------------------------------------ */

static void test_absolute(void **state)
{
	struct berth_http_parser *p;

	(void)state;
	p = expect_ok("GET http://Example.COM/a/b?q=1&r HTTP/1.1\r\nHost: example.com\r\n\r\n");
	assert_false(p->req.connect);
	assert_string_equal(p->req.host, "example.com");
	assert_int_equal(p->req.port, 80);
	assert_string_equal(p->req.path, "/a/b?q=1&r");
	assert_int_equal(p->req.path_len, 10);
	drop(p);

	p = expect_ok("GET HTTP://example.com:8080 HTTP/1.1\r\n\r\n");
	assert_int_equal(p->req.port, 8080);
	assert_string_equal(p->req.path, "/");
	drop(p);

	p = expect_ok("GET http://example.com:/x HTTP/1.1\r\n\r\n");
	assert_int_equal(p->req.port, 80);
	assert_string_equal(p->req.path, "/x");
	drop(p);

	p = expect_ok("GET http://example.com?x=1 HTTP/1.1\r\n\r\n");
	assert_string_equal(p->req.path, "/?x=1");
	drop(p);

	p = expect_ok("GET http://[::1]:81?x HTTP/1.1\r\n\r\n");
	assert_string_equal(p->req.host, "::1");
	assert_int_equal(p->req.port, 81);
	assert_string_equal(p->req.path, "/?x");
	drop(p);

	/* RFC 9112 3.2.4: OPTIONS with an empty path goes upstream as `*`. */
	p = expect_ok("OPTIONS http://example.com HTTP/1.1\r\n\r\n");
	assert_string_equal(p->req.path, "*");
	drop(p);
	p = expect_ok("OPTIONS http://example.com/ HTTP/1.1\r\n\r\n");
	assert_string_equal(p->req.path, "/");
	drop(p);

	/* A minor version above 1 counts as 1 (RFC 9110 6.2). */
	p = expect_ok("GET http://e.com/ HTTP/1.7\r\n\r\n");
	assert_int_equal(p->req.minor, 1);
	drop(p);

	/* Lone LF line ends are accepted, and so are leading empty lines. */
	p = expect_ok("\r\n\nGET http://e.com/ HTTP/1.1\nHost: e.com\n\nbody");
	assert_string_equal(p->req.headers[0].value, "e.com");
	drop(p);

	/* Field values: OWS trimmed, obs-text kept, empty allowed. */
	p = expect_ok("GET http://e.com/ HTTP/1.1\r\nX-A: \t a \tb\t \r\nX-B:\r\nX-C: caf\xc3\xa9\r\n\r\n");
	assert_string_equal(p->req.headers[0].value, "a \tb");
	assert_int_equal(p->req.headers[0].value_len, 4);
	assert_string_equal(p->req.headers[1].value, "");
	assert_string_equal(p->req.headers[2].value, "caf\xc3\xa9");
	drop(p);
}

static void test_absolute_refused(void **state)
{
	(void)state;
	expect_bad("GET https://example.com/ HTTP/1.1\r\n\r\n", 400, "use CONNECT");
	expect_bad("GET HTTPS://example.com/ HTTP/1.1\r\n\r\n", 400, "use CONNECT");
	expect_bad("GET ftp://example.com/ HTTP/1.1\r\n\r\n", 400, "only http:// URLs");
	expect_bad("GET http:/example.com/ HTTP/1.1\r\n\r\n", 400, "neither an http:// URL");
	expect_bad("GET 1http://example.com/ HTTP/1.1\r\n\r\n", 400, "neither an http:// URL");
	expect_bad("GET http:// HTTP/1.1\r\n\r\n", 400, "empty host");
	expect_bad("GET http:///x HTTP/1.1\r\n\r\n", 400, "empty host");
	expect_bad("GET http://example.com/#frag HTTP/1.1\r\n\r\n", 400, "fragment");
	expect_bad("GET http://user:pw@example.com/ HTTP/1.1\r\n\r\n", 400, "user information");
	expect_bad("GET http://example.com:0/ HTTP/1.1\r\n\r\n", 400, "1-65535");
	expect_bad("GET /index.html HTTP/1.1\r\nHost: example.com\r\n\r\n", 400, "not a proxy request");
	expect_bad("OPTIONS * HTTP/1.1\r\nHost: example.com\r\n\r\n", 400, "not a proxy request");
	expect_bad("GET http://ex%61mple.com/ HTTP/1.1\r\n\r\n", 400, "invalid character in host name");
	expect_bad("GET http://0x7f.1/ HTTP/1.1\r\n\r\n", 400, "dotted-quad");
	expect_bad("TRACE http://example.com/ HTTP/1.1\r\n\r\n", 405, "TRACE");
}

/* ---- the request line ----------------------------------------------------- */

static void test_request_line_syntax(void **state)
{
	static const char nul[] = "GET http://e.com/\0 HTTP/1.1\r\n\r\n";

	(void)state;
	expect_bad("GET  http://e.com/ HTTP/1.1\r\n\r\n", 400, "malformed HTTP version");
	expect_bad("GET  HTTP/1.1\r\n\r\n", 400, "empty request target");
	expect_bad("GET http://e.com/  HTTP/1.1\r\n\r\n", 400, "malformed HTTP version");
	expect_bad("GET http://e.com/ HTTP/1.1 \r\n\r\n", 400, "malformed HTTP version");
	expect_bad("GET http://e.com/\r\n\r\n", 400, "malformed request line");
	expect_bad("GET\r\n\r\n", 400, "malformed request line");
	expect_bad("GET http://e.com/ http/1.1\r\n\r\n", 400, "malformed HTTP version");
	expect_bad("GET http://e.com/ HTTP/1.10\r\n\r\n", 400, "malformed HTTP version");
	expect_bad("GET http://e.com/ HTTP/2.0\r\n\r\n", 505, "HTTP/2.0");
	expect_bad("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505, "HTTP/2.0");
	expect_bad("GET http://e.com/ HTTP/0.9\r\n\r\n", 505, "HTTP/0.9");
	expect_bad("G(T http://e.com/ HTTP/1.1\r\n\r\n", 400, "invalid method");
	expect_bad("GET\thttp://e.com/ HTTP/1.1\r\n\r\n", 400, "malformed request line");
	expect_bad("GET\tx http://e.com/ HTTP/1.1\r\n\r\n", 400, "invalid method");
	expect_bad("GET http://e.com/\x7f HTTP/1.1\r\n\r\n", 400, "invalid character in the request target");
	expect_bad("GET http://e.com/\xc3\xa9 HTTP/1.1\r\n\r\n", 400,
		   "invalid character in the request target");
	expect_bad("GET http://e.com/\x01 HTTP/1.1\r\n\r\n", 400, "invalid character in the request target");
	expect_bad("GET http://e.com/\r HTTP/1.1\r\n\r\n", 400, "bare CR");
	expect_bad("GET http://e.com/ HTTP/1.1\r\r\n\r\n", 400, "bare CR");
	/* A NUL in the request line. */
	expect_bad_mode(BERTH_HTTP_PROXY, nul, sizeof nul - 1, 400, "NUL byte");
}

static void test_leading_empty_lines(void **state)
{
	struct text t = {0};

	(void)state;
	for (int i = 0; i < 16; i++)
		add(&t, "\r\n");
	add(&t, "GET http://e.com/ HTTP/1.1\r\n\r\n");
	drop(expect_ok(t.s));
	t.len = 0;
	for (int i = 0; i < 17; i++)
		add(&t, "\n");
	add(&t, "GET http://e.com/ HTTP/1.1\r\n\r\n");
	expect_bad(t.s, 400, "empty lines before the request line");
	free(t.s);
}

/* ---- limits ------------------------------------------------------------- */

static void test_limit_request_line(void **state)
{
	const char *pre = "GET http://a/", *post = " HTTP/1.1";
	size_t fixed = strlen(pre) + strlen(post);
	struct text t = {0};
	struct berth_http_parser *p;
	size_t consumed;

	(void)state;
	/* Exactly 8192 bytes, with CRLF and with LF. */
	add(&t, "%s%s%s\r\n\r\n", pre, fill('x', BERTH_HTTP_MAX_REQUEST_LINE - fixed), post);
	p = expect_ok(t.s);
	assert_int_equal(p->req.path_len, 1 + BERTH_HTTP_MAX_REQUEST_LINE - fixed);
	drop(p);
	t.len = 0;
	add(&t, "%s%s%s\n\n", pre, fill('x', BERTH_HTTP_MAX_REQUEST_LINE - fixed), post);
	drop(expect_ok(t.s));
	/* One over. */
	t.len = 0;
	add(&t, "%s%s%s\r\n\r\n", pre, fill('x', BERTH_HTTP_MAX_REQUEST_LINE - fixed + 1), post);
	expect_bad(t.s, 414, "request line is longer than 8192 bytes");

	/* Refused before the line ends: memory stays bounded. */
	p = new_parser();
	berth_http_init(p, BERTH_HTTP_PROXY);
	assert_int_equal(berth_http_feed(p, fill('G', BERTH_HTTP_MAX_REQUEST_LINE),
					 BERTH_HTTP_MAX_REQUEST_LINE, &consumed),
			 BERTH_HTTP_NEED_MORE);
	assert_int_equal(berth_http_feed(p, "\r", 1, &consumed), BERTH_HTTP_NEED_MORE);
	assert_int_equal(berth_http_feed(p, "G", 1, &consumed), BERTH_HTTP_BAD);
	assert_int_equal(p->err.status, 414);
	/* And stays refused. */
	assert_int_equal(berth_http_feed(p, "\r\n", 2, &consumed), BERTH_HTTP_BAD);
	assert_int_equal(consumed, 0);
	drop(p);
	free(t.s);
}

static void test_limit_field_line(void **state)
{
	struct text t = {0};
	struct berth_http_parser *p;
	size_t consumed;

	(void)state;
	/* "X: " + value = exactly 8192 bytes. */
	add(&t, "GET http://a/ HTTP/1.1\r\nX: %s\r\n\r\n", fill('v', BERTH_HTTP_MAX_FIELD_LINE - 3));
	p = expect_ok(t.s);
	assert_int_equal(p->req.headers[0].value_len, BERTH_HTTP_MAX_FIELD_LINE - 3);
	drop(p);
	t.len = 0;
	add(&t, "GET http://a/ HTTP/1.1\r\nX: %s\r\n\r\n", fill('v', BERTH_HTTP_MAX_FIELD_LINE - 2));
	expect_bad(t.s, 431, "header line is longer than 8192 bytes");
	/* Trailing white space counts: the limit is on the line as sent. */
	t.len = 0;
	add(&t, "GET http://a/ HTTP/1.1\r\nX: %s \r\n\r\n", fill('v', BERTH_HTTP_MAX_FIELD_LINE - 3));
	expect_bad(t.s, 431, "header line is longer");

	p = new_parser();
	berth_http_init(p, BERTH_HTTP_PROXY);
	assert_int_equal(berth_http_feed(p, "GET http://a/ HTTP/1.1\r\n", 24, &consumed),
			 BERTH_HTTP_NEED_MORE);
	assert_int_equal(
	    berth_http_feed(p, fill('h', BERTH_HTTP_MAX_FIELD_LINE), BERTH_HTTP_MAX_FIELD_LINE, &consumed),
	    BERTH_HTTP_NEED_MORE);
	assert_int_equal(berth_http_feed(p, "h", 1, &consumed), BERTH_HTTP_BAD);
	assert_int_equal(p->err.status, 431);
	drop(p);
	free(t.s);
}

static void test_limit_header_block(void **state)
{
	struct text t = {0};
	struct berth_http_parser *p;

	(void)state;
	/* 7 lines of 8192 + one of 8190 + "a:" = 65536 bytes exactly. */
	add(&t, "GET http://a/ HTTP/1.1\r\n");
	for (int i = 0; i < 7; i++)
		add(&t, "X%d: %s\r\n", i, fill('v', BERTH_HTTP_MAX_FIELD_LINE - 4));
	add(&t, "Y: %s\r\n", fill('v', BERTH_HTTP_MAX_FIELD_LINE - 5));
	add(&t, "a:\r\n\r\n");
	p = expect_ok(t.s);
	assert_int_equal(p->req.n_headers, 9);
	drop(p);
	/* One more byte. */
	t.len = 0;
	add(&t, "GET http://a/ HTTP/1.1\r\n");
	for (int i = 0; i < 7; i++)
		add(&t, "X%d: %s\r\n", i, fill('v', BERTH_HTTP_MAX_FIELD_LINE - 4));
	add(&t, "Y: %s\r\n", fill('v', BERTH_HTTP_MAX_FIELD_LINE - 5));
	add(&t, "ab:\r\n\r\n");
	expect_bad(t.s, 431, "header section is larger than 65536 bytes");
	/* Both limits crossed by one line: the one crossed first is named,
	 * whether the line arrives whole or byte by byte. */
	t.len = 0;
	add(&t, "GET http://a/ HTTP/1.1\r\n");
	for (int i = 0; i < 7; i++)
		add(&t, "X%d: %s\r\n", i, fill('v', BERTH_HTTP_MAX_FIELD_LINE - 4));
	add(&t, "Y: %s\r\n\r\n", fill('v', BERTH_HTTP_MAX_FIELD_LINE + 10));
	expect_bad(t.s, 431, "header line is longer"); /* a tie: both at byte 8193 */
	t.len = 0;
	add(&t, "GET http://a/ HTTP/1.1\r\n");
	for (int i = 0; i < 7; i++)
		add(&t, "X%d: %s\r\n", i, fill('v', BERTH_HTTP_MAX_FIELD_LINE - 4));
	add(&t, "Z: %s\r\n", fill('v', 97));
	add(&t, "Y: %s\r\n\r\n", fill('v', BERTH_HTTP_MAX_FIELD_LINE + 10));
	expect_bad(t.s, 431, "header section is larger"); /* crossed at byte 8093 */
	free(t.s);
}

static void test_limit_header_count(void **state)
{
	struct text t = {0};
	struct berth_http_parser *p;

	(void)state;
	add(&t, "GET http://a/ HTTP/1.1\r\n");
	for (int i = 0; i < BERTH_HTTP_MAX_HEADERS; i++)
		add(&t, "X-%d: %d\r\n", i, i);
	add(&t, "\r\n");
	p = expect_ok(t.s);
	assert_int_equal(p->req.n_headers, BERTH_HTTP_MAX_HEADERS);
	assert_string_equal(p->req.headers[99].name, "X-99");
	drop(p);
	t.len -= 2;
	add(&t, "X-100: 100\r\n\r\n");
	expect_bad(t.s, 431, "more than 100 header lines");
	free(t.s);
}

/* ---- field syntax --------------------------------------------------------- */

static void test_field_syntax(void **state)
{
	char in[80];
	size_t n;

	(void)state;
	expect_bad("GET http://e.com/ HTTP/1.1\r\nX-A: a\r\n b\r\n\r\n", 400, "obsolete line folding");
	expect_bad("GET http://e.com/ HTTP/1.1\r\nX-A: a\r\n\tb\r\n\r\n", 400, "obsolete line folding");
	expect_bad("GET http://e.com/ HTTP/1.1\r\n X-A: a\r\n\r\n", 400, "obsolete line folding");
	expect_bad("GET http://e.com/ HTTP/1.1\r\nX-A : a\r\n\r\n", 400, "white space between a header name");
	expect_bad("GET http://e.com/ HTTP/1.1\r\nX-A\t: a\r\n\r\n", 400,
		   "white space between a header name");
	expect_bad("GET http://e.com/ HTTP/1.1\r\nX(A): a\r\n\r\n", 400,
		   "invalid character in a header name");
	expect_bad("GET http://e.com/ HTTP/1.1\r\nX\xc3\xa9: a\r\n\r\n", 400,
		   "invalid character in a header name");
	expect_bad("GET http://e.com/ HTTP/1.1\r\n: a\r\n\r\n", 400, "empty header name");
	expect_bad("GET http://e.com/ HTTP/1.1\r\nX-A a\r\n\r\n", 400, "without a colon");
	expect_bad("GET http://e.com/ HTTP/1.1\r\nX-A: a\rb\r\n\r\n", 400, "bare CR");
	expect_bad("GET http://e.com/ HTTP/1.1\r\nX-A: a\r\r\n\r\n", 400, "bare CR");
	expect_bad("GET http://e.com/ HTTP/1.1\r\nX-A: a\r\n\r\r\n", 400, "bare CR");
	expect_bad("GET http://e.com/ HTTP/1.1\r\nX-A: a\x01\r\n\r\n", 400,
		   "control character in the value of `X-A`");
	expect_bad("GET http://e.com/ HTTP/1.1\r\nX-A: a\x7f\r\n\r\n", 400, "control character");
	n = (size_t)snprintf(in, sizeof in, "GET http://e.com/ HTTP/1.1\r\nX-A: a%cb\r\n\r\n", 0);
	expect_bad_mode(BERTH_HTTP_PROXY, in, n, 400, "NUL byte");
}

/* ---- request smuggling ---------------------------------------------------- */

static void test_content_length(void **state)
{
	struct berth_http_parser *p;
	char *out;

	(void)state;
	p = expect_ok("POST http://e.com/ HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello");
	assert_int_equal(p->req.body, BERTH_HTTP_BODY_LENGTH);
	assert_int_equal(p->req.content_length, 5);
	drop(p);
	p = expect_ok("POST http://e.com/ HTTP/1.1\r\nContent-Length: 9223372036854775807\r\n\r\n");
	assert_int_equal(p->req.content_length, UINT64_C(9223372036854775807));
	drop(p);
	p = expect_ok("POST http://e.com/ HTTP/1.1\r\nContent-Length: 007\r\n\r\n");
	assert_int_equal(p->req.content_length, 7);
	drop(p);
	/* The same value twice is one value (RFC 9110 8.6), forwarded once. */
	p = expect_ok("POST http://e.com/ HTTP/1.1\r\nContent-Length: 5, 5\r\ncontent-length: 5\r\n\r\n");
	assert_int_equal(p->req.content_length, 5);
	out = rewrite(&p->req);
	assert_string_equal(out, "POST / HTTP/1.1\r\nHost: e.com\r\nContent-Length: 5\r\nVia: 1.1 berth\r\n"
				 "Connection: close\r\n\r\n");
	free(out);
	drop(p);

	expect_bad("POST http://e.com/ HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", 400,
		   "different values");
	expect_bad("POST http://e.com/ HTTP/1.1\r\nContent-Length: 5, 6\r\n\r\n", 400, "different values");
	expect_bad("POST http://e.com/ HTTP/1.1\r\nContent-Length: 9223372036854775808\r\n\r\n", 400,
		   "too large");
	expect_bad("POST http://e.com/ HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", 400,
		   "too large");
	expect_bad("POST http://e.com/ HTTP/1.1\r\nContent-Length: +5\r\n\r\n", 400,
		   "invalid Content-Length");
	expect_bad("POST http://e.com/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400,
		   "invalid Content-Length");
	expect_bad("POST http://e.com/ HTTP/1.1\r\nContent-Length: 0x5\r\n\r\n", 400,
		   "invalid Content-Length");
	expect_bad("POST http://e.com/ HTTP/1.1\r\nContent-Length: 5 5\r\n\r\n", 400,
		   "invalid Content-Length");
	expect_bad("POST http://e.com/ HTTP/1.1\r\nContent-Length:\r\n\r\n", 400, "invalid Content-Length");
	expect_bad("POST http://e.com/ HTTP/1.1\r\nContent-Length: ,\r\n\r\n", 400, "invalid Content-Length");
}

static void test_transfer_encoding(void **state)
{
	struct berth_http_parser *p;
	char *out;

	(void)state;
	p = expect_ok(
	    "POST http://e.com/up HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
	assert_int_equal(p->req.body, BERTH_HTTP_BODY_CHUNKED);
	/* The body is forwarded as framed: the framing header stays. */
	out = rewrite(&p->req);
	assert_string_equal(
	    out, "POST /up HTTP/1.1\r\nHost: e.com\r\nTransfer-Encoding: Chunked\r\nVia: 1.1 berth\r\n"
		 "Connection: close\r\n\r\n");
	free(out);
	drop(p);

	expect_bad("POST http://e.com/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
		   400, "request smuggling");
	expect_bad("POST http://e.com/ HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
		   400, "request smuggling");
	expect_bad("POST http://e.com/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "HTTP/1.0");
	expect_bad("POST http://e.com/ HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 400,
		   "must end with chunked");
	expect_bad("POST http://e.com/ HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400,
		   "must end with chunked");
	expect_bad("POST http://e.com/ HTTP/1.1\r\nTransfer-Encoding: chunked;x=1\r\n\r\n", 400,
		   "must end with chunked");
	expect_bad("POST http://e.com/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501,
		   "transfer coding `gzip` is not supported");
	expect_bad(
	    "POST http://e.com/ HTTP/1.1\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n",
	    501, "`gzip`");
	expect_bad("POST http://e.com/ HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", 400,
		   "more than once");
	expect_bad(
	    "POST http://e.com/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
	    400, "more than once");
	expect_bad("POST http://e.com/ HTTP/1.1\r\nTransfer-Encoding: \"chunked\"\r\n\r\n", 400,
		   "invalid Transfer-Encoding");
	expect_bad("POST http://e.com/ HTTP/1.1\r\nTransfer-Encoding:\r\n\r\n", 400,
		   "empty Transfer-Encoding");
}

static void test_connection_cannot_name_framing(void **state)
{
	(void)state;
	expect_bad(
	    "POST http://e.com/ HTTP/1.1\r\nContent-Length: 5\r\nConnection: close, Content-Length\r\n\r\n",
	    400, "may not name `Content-Length`");
	expect_bad("POST http://e.com/ HTTP/1.1\r\nConnection: transfer-encoding\r\n\r\n", 400,
		   "may not name `transfer-encoding`");
	expect_bad("GET http://e.com/ HTTP/1.1\r\nHost: e.com\r\nConnection: HOST\r\n\r\n", 400,
		   "may not name `HOST`");
	expect_bad("GET http://e.com/ HTTP/1.1\r\nConnection: a b\r\n\r\n", 400, "invalid Connection header");
}

/* ---- Host ------------------------------------------------------------------ */

static void test_host_header(void **state)
{
	static const char *const same[] = {
	    "GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n",
	    "GET http://example.com/ HTTP/1.1\r\nHost: EXAMPLE.com\r\n\r\n",
	    "GET http://Example.com/ HTTP/1.1\r\nHost: example.COM\r\n\r\n",
	    "GET http://example.com/ HTTP/1.1\r\nHost: example.com:80\r\n\r\n",
	    "GET http://example.com/ HTTP/1.1\r\nHost: example.com:\r\n\r\n",
	    "GET http://example.com:80/ HTTP/1.1\r\nHost: example.com\r\n\r\n",
	    "GET http://example.com:8080/ HTTP/1.1\r\nHost: example.com:8080\r\n\r\n",
	    "GET http://example.com/ HTTP/1.1\r\nHost:   example.com  \r\n\r\n",
	    "GET http://[::1]/ HTTP/1.1\r\nHost: [0:0:0:0:0:0:0:1]\r\n\r\n",
	    "GET http://[2001:DB8::1]:8080/ HTTP/1.1\r\nHost: [2001:db8:0::1]:8080\r\n\r\n",
	    "GET http://192.0.2.1/ HTTP/1.1\r\nHost: 192.0.2.1:80\r\n\r\n",
	    "GET http://example.com/ HTTP/1.1\r\n\r\n", /* no Host: berth writes it */
	};
	static const char *const differ[] = {
	    "GET http://example.com/ HTTP/1.1\r\nHost: evil.example\r\n\r\n",
	    "GET http://example.com/ HTTP/1.1\r\nHost: example.com:8080\r\n\r\n",
	    "GET http://example.com:8080/ HTTP/1.1\r\nHost: example.com\r\n\r\n",
	    "GET http://example.com:8080/ HTTP/1.1\r\nHost: example.com:80\r\n\r\n",
	    "GET http://example.com/ HTTP/1.1\r\nHost: www.example.com\r\n\r\n",
	    "GET http://[::1]/ HTTP/1.1\r\nHost: [::2]\r\n\r\n",
	    "GET http://[::1]:8080/ HTTP/1.1\r\nHost: [::1]\r\n\r\n",
	    "GET http://[::ffff:192.0.2.1]/ HTTP/1.1\r\nHost: 192.0.2.1\r\n\r\n",
	    "GET http://192.0.2.1/ HTTP/1.1\r\nHost: 192.0.2.10\r\n\r\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof same / sizeof same[0]; i++)
		drop(expect_ok(same[i]));
	for (size_t i = 0; i < sizeof differ / sizeof differ[0]; i++)
		expect_bad(differ[i], 400, "Host header disagrees with the request target");
	expect_bad("GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\nhost: example.com\r\n\r\n", 400,
		   "more than one Host header");
	expect_bad("GET http://example.com/ HTTP/1.1\r\nHost: example.com, example.com\r\n\r\n", 400,
		   "invalid Host header");
	expect_bad("GET http://example.com/ HTTP/1.1\r\nHost:\r\n\r\n", 400, "invalid Host header");
	expect_bad("GET http://example.com/ HTTP/1.1\r\nHost: u@example.com\r\n\r\n", 400,
		   "invalid Host header");
	expect_bad("GET http://example.com/ HTTP/1.1\r\nHost: example.com:0\r\n\r\n", 400,
		   "invalid Host header");
}

static void test_host_matches(void **state)
{
	struct berth_http_parser *p = expect_ok("GET http://[2001:db8::1]:8080/ HTTP/1.1\r\n\r\n");

	(void)state;
	assert_int_equal(berth_http_host_matches(&p->req, "[2001:DB8::0:1]:8080", 20), 1);
	assert_int_equal(berth_http_host_matches(&p->req, "[2001:db8::1]", 13), 0);
	assert_int_equal(berth_http_host_matches(&p->req, "[2001:db8::2]:8080", 18), 0);
	assert_int_equal(berth_http_host_matches(&p->req, "2001:db8::1", 11), -1);
	assert_int_equal(berth_http_host_matches(&p->req, "", 0), -1);
	drop(p);
}

/* The rewrite refuses a request whose Host disagrees even if the parser was
 * bypassed (a request changed after parsing). */
static void test_rewrite_refuses_mismatch(void **state)
{
	struct berth_http_parser *p =
	    expect_ok("GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n");
	struct berth_http_request *r = malloc(sizeof *r);
	struct berth_http_error e = {0};

	(void)state;
	assert_non_null(r);
	*r = p->req;
	snprintf(r->host, sizeof r->host, "other.example");
	assert_int_equal(berth_http_rewrite_origin(r, NULL, 0, &e), -1);
	assert_int_equal(e.status, 400);
	assert_string_equal(e.reason, "Host header disagrees with the request target");
	*r = p->req;
	r->port = 81;
	memset(&e, 0, sizeof e);
	assert_int_equal(berth_http_rewrite_origin(r, NULL, 0, &e), -1);
	assert_string_equal(e.reason, "Host header disagrees with the request target");
	*r = p->req;
	assert_true(berth_http_rewrite_origin(r, NULL, 0, &e) > 0);
	free(r);
	drop(p);

	p = expect_ok("CONNECT example.com:443 HTTP/1.1\r\n\r\n");
	memset(&e, 0, sizeof e);
	assert_int_equal(berth_http_rewrite_origin(&p->req, NULL, 0, &e), -1);
	assert_int_equal(e.status, 400);
	drop(p);
}

/* ---- the rewrite ------------------------------------------------------------ */

static void test_rewrite_strips_hop_by_hop(void **state)
{
	const char *in = "GET http://Example.COM/p?q=1 HTTP/1.1\r\n"
			 "Host: example.com\r\n"
			 "Connection: keep-alive, X-Secret\r\n"
			 "X-Secret: 1\r\n"
			 "Keep-Alive: timeout=5\r\n"
			 "Proxy-Connection: keep-alive\r\n"
			 "Proxy-Authorization: Basic Zm9vOmJhcg==\r\n"
			 "Proxy-Authenticate: Basic\r\n"
			 "TE: trailers\r\n"
			 "Trailer: X-Checksum\r\n"
			 "Upgrade: websocket\r\n"
			 "Close: yes\r\n"
			 "Accept: */*\r\n"
			 "User-Agent:   curl/8.0  \r\n"
			 "x-secret: 2\r\n"
			 "Content-Length: 3\r\n"
			 "\r\n"
			 "abc";
	struct berth_http_parser *p = expect_ok(in);
	char *out;

	(void)state;
	assert_true(p->req.headers[1].hop_by_hop);   /* Connection */
	assert_true(p->req.headers[2].hop_by_hop);   /* X-Secret, named by Connection */
	assert_false(p->req.headers[0].hop_by_hop);  /* Host: replaced, not hop-by-hop */
	assert_false(p->req.headers[11].hop_by_hop); /* Accept */
	assert_true(p->req.headers[13].hop_by_hop);  /* x-secret: names compare without case */
	out = rewrite(&p->req);
	assert_string_equal(out, "GET /p?q=1 HTTP/1.1\r\n"
				 "Host: example.com\r\n"
				 "Accept: */*\r\n"
				 "User-Agent: curl/8.0\r\n"
				 "Content-Length: 3\r\n"
				 "Via: 1.1 berth\r\n"
				 "Connection: close\r\n"
				 "\r\n");
	free(out);
	drop(p);
}

static void test_rewrite_forms(void **state)
{
	struct berth_http_parser *p;
	char *out;

	(void)state;
	p = expect_ok("GET http://[2001:db8::1]:8080?x HTTP/1.0\r\n\r\n");
	out = rewrite(&p->req);
	assert_string_equal(out, "GET /?x HTTP/1.0\r\nHost: [2001:db8::1]:8080\r\nVia: 1.0 berth\r\n"
				 "Connection: close\r\n\r\n");
	free(out);
	drop(p);

	p = expect_ok("OPTIONS http://e.com:80 HTTP/1.1\r\nMax-Forwards: 3\r\n\r\n");
	out = rewrite(&p->req);
	assert_string_equal(out, "OPTIONS * HTTP/1.1\r\nHost: e.com\r\nMax-Forwards: 3\r\nVia: 1.1 berth\r\n"
				 "Connection: close\r\n\r\n");
	free(out);
	drop(p);

	p = expect_ok("DELETE http://1.2.3.4:81/x HTTP/1.1\r\nX-Empty:\r\nVia: 1.1 other\r\n\r\n");
	out = rewrite(&p->req);
	assert_string_equal(out, "DELETE /x HTTP/1.1\r\nHost: 1.2.3.4:81\r\nX-Empty:\r\nVia: 1.1 other\r\n"
				 "Via: 1.1 berth\r\nConnection: close\r\n\r\n");
	free(out);
	drop(p);
}

static void test_rewrite_buffer(void **state)
{
	struct berth_http_parser *p = expect_ok("GET http://e.com/abc HTTP/1.1\r\n\r\n");
	struct berth_http_error e = {0};
	const char *want = "GET /abc HTTP/1.1\r\nHost: e.com\r\nVia: 1.1 berth\r\nConnection: close\r\n\r\n";
	long n = berth_http_rewrite_origin(&p->req, NULL, 0, &e);
	char buf[128];

	(void)state;
	assert_int_equal(n, strlen(want));
	/* Too small: the same length, a truncated NUL-terminated text. */
	memset(buf, 'z', sizeof buf);
	assert_int_equal(berth_http_rewrite_origin(&p->req, buf, 10, &e), n);
	assert_string_equal(buf, "GET /abc ");
	assert_int_equal(buf[10], 'z');
	/* Exactly the length: no room for the NUL. */
	assert_int_equal(berth_http_rewrite_origin(&p->req, buf, (size_t)n, &e), n);
	assert_int_equal(strlen(buf), (size_t)n - 1);
	assert_int_equal(berth_http_rewrite_origin(&p->req, buf, (size_t)n + 1, &e), n);
	assert_string_equal(buf, want);
	drop(p);
}

/* The added Host, Via and Connection count against the limits. */
static void test_rewrite_limits(void **state)
{
	struct text t = {0};
	struct berth_http_parser *p;
	struct berth_http_error e = {0};
	char *out;

	(void)state;
	add(&t, "GET http://e.com/ HTTP/1.1\r\n");
	for (int i = 0; i < BERTH_HTTP_MAX_HEADERS - 3; i++)
		add(&t, "X-%d: %d\r\n", i, i);
	add(&t, "\r\n");
	p = expect_ok(t.s);
	out = rewrite(&p->req);
	free(out);
	drop(p);
	t.len -= 2;
	add(&t, "X-last: 1\r\n\r\n");
	p = expect_ok(t.s);
	assert_int_equal(berth_http_rewrite_origin(&p->req, NULL, 0, &e), -1);
	assert_int_equal(e.status, 431);
	drop(p);
	/* "Name:value" of 8192 bytes becomes "Name: value", one byte over. */
	t.len = 0;
	add(&t, "GET http://e.com/ HTTP/1.1\r\nX:%s\r\n\r\n", fill('v', BERTH_HTTP_MAX_FIELD_LINE - 2));
	p = expect_ok(t.s);
	memset(&e, 0, sizeof e);
	assert_int_equal(berth_http_rewrite_origin(&p->req, NULL, 0, &e), -1);
	assert_int_equal(e.status, 431);
	drop(p);
	t.len = 0;
	add(&t, "GET http://e.com/ HTTP/1.1\r\nX:%s\r\n\r\n", fill('v', BERTH_HTTP_MAX_FIELD_LINE - 3));
	p = expect_ok(t.s);
	out = rewrite(&p->req);
	free(out);
	drop(p);
	free(t.s);
}

/* What the upstream server reads from the rewrite names the same target. */
static void test_rewrite_reparses(void **state)
{
	static const char *const reqs[] = {
	    "GET http://Example.com:8080/a?b HTTP/1.1\r\nHost: example.com:8080\r\nAccept: */*\r\n\r\n",
	    "POST http://[::1]/ HTTP/1.0\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nhi",
	    "OPTIONS http://e.com HTTP/1.1\r\n\r\n",
	    "PUT http://e.com/x HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTE: trailers\r\n\r\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof reqs / sizeof reqs[0]; i++) {
		struct berth_http_parser *p = expect_ok(reqs[i]);
		char *out = rewrite(&p->req);
		struct berth_http_parser *q = expect_ok_mode(BERTH_HTTP_ORIGIN, out, strlen(out));

		assert_string_equal(q->req.method, p->req.method);
		assert_string_equal(q->req.host, p->req.host);
		assert_int_equal(q->req.host_kind, p->req.host_kind);
		assert_int_equal(q->req.port, p->req.port);
		assert_string_equal(q->req.path, p->req.path);
		assert_int_equal(q->req.minor, p->req.minor);
		assert_int_equal(q->req.body, p->req.body);
		assert_int_equal(q->req.content_length, p->req.content_length);
		/* Only berth's own Connection: close is hop-by-hop upstream. */
		for (size_t j = 0; j < q->req.n_headers; j++)
			if (q->req.headers[j].hop_by_hop)
				assert_string_equal(q->req.headers[j].name, "Connection");
		free(out);
		drop(q);
		drop(p);
	}
}

static void test_origin_mode(void **state)
{
	const char *in = "GET /x HTTP/1.1\r\nHost: Example.com:8080\r\n\r\n";
	struct berth_http_parser *p = expect_ok_mode(BERTH_HTTP_ORIGIN, in, strlen(in));

	(void)state;
	assert_string_equal(p->req.host, "example.com");
	assert_int_equal(p->req.port, 8080);
	assert_string_equal(p->req.path, "/x");
	drop(p);
	in = "OPTIONS * HTTP/1.1\r\nHost: e.com\r\n\r\n";
	p = expect_ok_mode(BERTH_HTTP_ORIGIN, in, strlen(in));
	assert_string_equal(p->req.path, "*");
	drop(p);
	in = "GET /x HTTP/1.1\r\n\r\n";
	expect_bad_mode(BERTH_HTTP_ORIGIN, in, strlen(in), 400, "missing Host header");
	in = "GET * HTTP/1.1\r\nHost: e.com\r\n\r\n";
	expect_bad_mode(BERTH_HTTP_ORIGIN, in, strlen(in), 400, "OPTIONS only");
	in = "GET /x HTTP/1.1\r\nHost: e..com\r\n\r\n";
	expect_bad_mode(BERTH_HTTP_ORIGIN, in, strlen(in), 400, "invalid Host header: empty label");
}

/* ---- hosts ------------------------------------------------------------------ */

static void test_normalize_host(void **state)
{
	static const struct {
		const char *in;
		bool bracketed;
		const char *out; /* NULL: refused */
		enum berth_target_kind kind;
	} cases[] = {
	    {"Example.COM", false, "example.com", BERTH_TARGET_NAME},
	    {"_srv.x-y.example", false, "_srv.x-y.example", BERTH_TARGET_NAME},
	    {"localhost", false, "localhost", BERTH_TARGET_NAME},
	    {"a1", false, "a1", BERTH_TARGET_NAME},
	    {"1a.example", false, "1a.example", BERTH_TARGET_NAME},
	    {"example.0x", false, NULL, 0},
	    {"example.123", false, NULL, 0},
	    {"1.2.3.4", false, "1.2.3.4", BERTH_TARGET_IPV4},
	    {"0.0.0.0", false, "0.0.0.0", BERTH_TARGET_IPV4},
	    {"255.255.255.255", false, "255.255.255.255", BERTH_TARGET_IPV4},
	    {"256.1.1.1", false, NULL, 0},
	    {"1.2.3.04", false, NULL, 0},
	    {"01.2.3.4", false, NULL, 0},
	    {"1.2.3", false, NULL, 0},
	    {"1.2.3.4.5", false, NULL, 0},
	    {"127.1", false, NULL, 0},
	    {"2130706433", false, NULL, 0},
	    {"0x7f.1", false, NULL, 0},
	    {"0x7f000001", false, NULL, 0},
	    {"0177.0.0.1", false, NULL, 0},
	    {"example.com.", false, NULL, 0},
	    {".example.com", false, NULL, 0},
	    {"a..b", false, NULL, 0},
	    {"-a.example", false, NULL, 0},
	    {"a-.example", false, NULL, 0},
	    {"a b", false, NULL, 0},
	    {"a\tb", false, NULL, 0},
	    {"ex%41mple", false, NULL, 0},
	    {"b\xc3\xbc"
	     "cher.example",
	     false, NULL, 0},
	    {"::1", false, NULL, 0},
	    {"", false, NULL, 0},
	    {"::1", true, "::1", BERTH_TARGET_IPV6},
	    {"2001:DB8:0:0:0:0:0:1", true, "2001:db8::1", BERTH_TARGET_IPV6},
	    {"::FFFF:192.0.2.1", true, "::ffff:192.0.2.1", BERTH_TARGET_IPV6},
	    {"fe80::1%eth0", true, NULL, 0},
	    {"1.2.3.4", true, NULL, 0},
	    {"example.com", true, NULL, 0},
	    {"", true, NULL, 0},
	};
	char out[BERTH_TARGET_HOST_MAX + 1], label[64], name[BERTH_TARGET_HOST_MAX + 2];
	enum berth_target_kind kind;
	const char *why;

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int rc = berth_http_normalize_host(cases[i].in, strlen(cases[i].in), cases[i].bracketed, out,
						   &kind, &why);

		if (cases[i].out == NULL) {
			if (rc != -1)
				fail_msg("`%s` accepted as `%s`", cases[i].in, out);
			assert_non_null(why);
			continue;
		}
		if (rc != 0)
			fail_msg("`%s` refused: %s", cases[i].in, why);
		assert_string_equal(out, cases[i].out);
		assert_int_equal(kind, cases[i].kind);
	}
	/* NUL inside is refused, in a name and in an IPv6 address. */
	assert_int_equal(berth_http_normalize_host("a\0b", 3, false, out, &kind, &why), -1);
	assert_int_equal(berth_http_normalize_host("::1\0x", 5, true, out, &kind, &why), -1);

	/* Labels of 63 bytes and names of 253 bytes, and one over. */
	memset(label, 'a', 63);
	label[63] = '\0';
	assert_int_equal(berth_http_normalize_host(label, 63, false, out, &kind, &why), 0);
	memset(label, 'a', sizeof label);
	assert_int_equal(berth_http_normalize_host(label, 64, false, out, &kind, &why), -1);
	assert_string_equal(why, "host name label longer than 63 bytes");
	snprintf(name, sizeof name, "%.63s.%.63s.%.63s.%.61s", fill('a', 63), fill('b', 63), fill('c', 63),
		 fill('d', 61));
	assert_int_equal(strlen(name), 253);
	assert_int_equal(berth_http_normalize_host(name, 253, false, out, &kind, &why), 0);
	assert_string_equal(out, name);
	snprintf(name, sizeof name, "%.63s.%.63s.%.63s.%.62s", fill('a', 63), fill('b', 63), fill('c', 63),
		 fill('d', 62));
	assert_int_equal(berth_http_normalize_host(name, 254, false, out, &kind, &why), -1);
	assert_string_equal(why, "host name longer than 253 bytes");
}

/* ---- truncated input ---------------------------------------------------------- */

static void test_truncated(void **state)
{
	const char *in = "POST http://e.com/ HTTP/1.1\r\nHost: e.com\r\nContent-Length: 1\r\n\r\n";
	size_t len = strlen(in);

	(void)state;
	/* Every proper prefix needs more; the whole is done. */
	for (size_t n = 0; n < len; n++) {
		struct berth_http_parser *p = new_parser();
		size_t consumed;

		berth_http_init(p, BERTH_HTTP_PROXY);
		assert_int_equal(berth_http_feed(p, in, n, &consumed), BERTH_HTTP_NEED_MORE);
		assert_int_equal(consumed, n);
		drop(p);
	}
	drop(expect_ok(in));
}

/* ---- replies ------------------------------------------------------------------ */

static void test_replies(void **state)
{
	static const struct {
		int status;
		const char *line;
	} statuses[] = {
	    {400, "HTTP/1.1 400 Bad Request\r\n"},
	    {403, "HTTP/1.1 403 Forbidden\r\n"},
	    {405, "HTTP/1.1 405 Method Not Allowed\r\n"},
	    {408, "HTTP/1.1 408 Request Timeout\r\n"},
	    {414, "HTTP/1.1 414 URI Too Long\r\n"},
	    {431, "HTTP/1.1 431 Request Header Fields Too Large\r\n"},
	    {500, "HTTP/1.1 500 Internal Server Error\r\n"},
	    {501, "HTTP/1.1 501 Not Implemented\r\n"},
	    {502, "HTTP/1.1 502 Bad Gateway\r\n"},
	    {503, "HTTP/1.1 503 Service Unavailable\r\n"},
	    {504, "HTTP/1.1 504 Gateway Timeout\r\n"},
	    {505, "HTTP/1.1 505 HTTP Version Not Supported\r\n"},
	};
	char buf[BERTH_HTTP_REPLY_MAX], want[BERTH_HTTP_REPLY_MAX];
	int n;

	(void)state;
	n = berth_http_format_established(buf, sizeof buf);
	assert_string_equal(buf, "HTTP/1.1 200 Connection established\r\n\r\n");
	assert_int_equal(n, strlen(buf));
	assert_int_equal(berth_http_format_established(buf, (size_t)n), -1);

	n = berth_http_format_forbidden(buf, sizeof buf, "evil.example:443 is not declared");
	assert_string_equal(buf, "HTTP/1.1 403 Forbidden\r\n"
				 "Content-Type: text/plain; charset=utf-8\r\n"
				 "Content-Length: 70\r\n"
				 "Connection: close\r\n"
				 "\r\n"
				 "berth: refused by the egress policy: evil.example:443 is not declared\n");
	assert_int_equal(n, strlen(buf));
	assert_int_equal(strlen(strstr(buf, "\r\n\r\n") + 4), 70);

	/* Text from a client cannot add header lines. */
	berth_http_format_forbidden(buf, sizeof buf, "a\r\nSet-Cookie: x\x1b[31m\xc3\xa9");
	assert_non_null(
	    strstr(buf, "\r\n\r\nberth: refused by the egress policy: a??Set-Cookie: x?[31m??\n"));
	/* A long rule is cut at 512 bytes, and the reply still fits. */
	n = berth_http_format_forbidden(buf, sizeof buf, fill('r', 5000));
	assert_true(n > 512 && n < BERTH_HTTP_REPLY_MAX);
	assert_non_null(strstr(buf, "Content-Length: 550\r\n"));

	for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
		n = berth_http_format_error(buf, sizeof buf, statuses[i].status, "why it failed");
		assert_true(n > 0);
		assert_int_equal(strncmp(buf, statuses[i].line, strlen(statuses[i].line)), 0);
		snprintf(want, sizeof want,
			 "Content-Length: 21\r\n%sConnection: close\r\n\r\nberth: why it failed\n",
			 statuses[i].status == 405
			     ? "Allow: GET, HEAD, POST, PUT, DELETE, CONNECT, OPTIONS, PATCH\r\n"
			     : "");
		assert_non_null(strstr(buf, want));
		assert_int_equal(strlen(buf), (size_t)n);
	}
	n = berth_http_format_error(buf, sizeof buf, 502, NULL);
	assert_non_null(strstr(buf, "\r\n\r\nberth: Bad Gateway\n"));
	assert_int_equal(berth_http_format_error(buf, sizeof buf, 200, "x"), -1);
	assert_int_equal(berth_http_format_error(buf, sizeof buf, 404, "x"), -1);
	assert_int_equal(berth_http_format_error(buf, 20, 400, "x"), -1);
	assert_int_equal(berth_http_format_error(NULL, 0, 400, "x"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_connect),
	    cmocka_unit_test(test_connect_refused),
	    cmocka_unit_test(test_absolute),
	    cmocka_unit_test(test_absolute_refused),
	    cmocka_unit_test(test_request_line_syntax),
	    cmocka_unit_test(test_leading_empty_lines),
	    cmocka_unit_test(test_limit_request_line),
	    cmocka_unit_test(test_limit_field_line),
	    cmocka_unit_test(test_limit_header_block),
	    cmocka_unit_test(test_limit_header_count),
	    cmocka_unit_test(test_field_syntax),
	    cmocka_unit_test(test_content_length),
	    cmocka_unit_test(test_transfer_encoding),
	    cmocka_unit_test(test_connection_cannot_name_framing),
	    cmocka_unit_test(test_host_header),
	    cmocka_unit_test(test_host_matches),
	    cmocka_unit_test(test_rewrite_refuses_mismatch),
	    cmocka_unit_test(test_rewrite_strips_hop_by_hop),
	    cmocka_unit_test(test_rewrite_forms),
	    cmocka_unit_test(test_rewrite_buffer),
	    cmocka_unit_test(test_rewrite_limits),
	    cmocka_unit_test(test_rewrite_reparses),
	    cmocka_unit_test(test_origin_mode),
	    cmocka_unit_test(test_normalize_host),
	    cmocka_unit_test(test_truncated),
	    cmocka_unit_test(test_replies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
