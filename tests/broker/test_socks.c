/* SPDX-License-Identifier: MIT */
/*
 * test_socks.c - unit tests of src/broker/socks.c: the SOCKS5 greeting and
 * CONNECT request parser and its replies.
 *
 * Every input goes through run(), which feeds it at once, one byte at a
 * time, and in pieces of 2, 3 and 7 bytes, and fails unless the sequence of
 * verdicts, the bytes consumed at each, the replies and the request are the
 * same each time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "broker/socks.h"

#define GREETING "\x05\x01\x00"
#define S(lit) lit, sizeof(lit) - 1

/* ---- helpers ------------------------------------------------------------- */

static size_t hex(char *out, size_t cap, const uint8_t *b, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n && k + 3 < cap; i++)
		k += (size_t)snprintf(out + k, cap - k, "%02x", b[i]);
	return k;
}

/* Feed @in in pieces of @piece; the trace of verdicts, offsets and replies. */
static enum berth_socks_verdict run_pieces(struct berth_socks_parser *p, const uint8_t *in, size_t len,
					   size_t piece, char *trace, size_t cap)
{
	size_t pos = 0, k = 0, off = 0;
	enum berth_socks_verdict v = BERTH_SOCKS_NEED_MORE;

	berth_socks_init(p);
	trace[0] = '\0';
	while (pos < len) {
		size_t n = len - pos < piece ? len - pos : piece, c = 0;

		v = berth_socks_feed(p, in + pos, n, &c);
		assert_true(c <= n);
		if (v == BERTH_SOCKS_NEED_MORE)
			assert_int_equal(c, n);
		off += c;
		pos += c;
		if (v == BERTH_SOCKS_NEED_MORE)
			continue;
		k += (size_t)snprintf(trace + k, cap - k, "%d@%zu reply=", (int)v, off);
		k += hex(trace + k, cap - k, p->reply, p->reply_len);
		if (v == BERTH_SOCKS_REPLY) {
			k += (size_t)snprintf(trace + k, cap - k, "; ");
			continue;
		}
		break;
	}
	if (v == BERTH_SOCKS_DONE)
		k += (size_t)snprintf(trace + k, cap - k, " kind=%d host=%s port=%u addr=", (int)p->req.kind,
				      p->req.host, (unsigned)p->req.port);
	if (v == BERTH_SOCKS_DONE)
		k += hex(trace + k, cap - k, p->req.addr, sizeof p->req.addr);
	if (v == BERTH_SOCKS_BAD)
		snprintf(trace + k, cap - k, " rep=%d reason=%s", p->rep, p->reason);
	if (v == BERTH_SOCKS_NEED_MORE)
		snprintf(trace + k, cap - k, "need-more@%zu", off);
	return v;
}

/* Run @in every way into @p (the one-piece result stays in @p); returns the
 * last verdict of the one-piece run. */
static enum berth_socks_verdict run(struct berth_socks_parser *p, const void *in, size_t len)
{
	static const size_t pieces[] = {1, 2, 3, 7};
	char want[2048], got[2048];
	struct berth_socks_parser q;
	enum berth_socks_verdict v;
	size_t consumed;

	for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
		run_pieces(&q, in, len, pieces[i], got, sizeof got);
		if (i == 0)
			memcpy(want, got, sizeof want);
		else if (strcmp(want, got) != 0)
			fail_msg("pieces of %zu: %s\n  pieces of 1: %s", pieces[i], got, want);
	}
	v = run_pieces(p, in, len, len > 0 ? len : 1, got, sizeof got);
	if (strcmp(want, got) != 0)
		fail_msg("one piece: %s\n  pieces of 1: %s", got, want);
	/* Once decided, the parser stays decided. */
	if (v == BERTH_SOCKS_DONE || v == BERTH_SOCKS_BAD) {
		assert_int_equal(berth_socks_feed(p, "\x05", 1, &consumed), v);
		assert_int_equal(consumed, 0);
	}
	return v;
}

/* Greeting + @req: the request must be refused with @rep, the reply sent
 * after @at bytes of the request. */
static void expect_refused(const void *req, size_t len, int rep, size_t at, const char *why)
{
	uint8_t in[600], want[10] = {5, (uint8_t)rep, 0, 1, 0, 0, 0, 0, 0, 0};
	struct berth_socks_parser p;
	char trace[2048];

	assert_true(len + 3 <= sizeof in);
	memcpy(in, GREETING, 3);
	memcpy(in + 3, req, len);
	if (run(&p, in, len + 3) != BERTH_SOCKS_BAD)
		fail_msg("not refused: %s", p.req.host);
	assert_int_equal(p.rep, rep);
	assert_int_equal(p.reply_len, 10);
	assert_memory_equal(p.reply, want, 10);
	if (strstr(p.reason, why) == NULL)
		fail_msg("reason `%s` does not say `%s`", p.reason, why);
	run_pieces(&p, in, len + 3, 1, trace, sizeof trace);
	snprintf((char *)in, sizeof in, "-1@%zu ", 3 + at);
	if (strstr(trace, (char *)in) == NULL)
		fail_msg("trace `%s` has no `%s`", trace, (char *)in);
}

/* Greeting + a domain-name request for @name (@n bytes) to port 443. */
static enum berth_socks_verdict connect_name(struct berth_socks_parser *p, const char *name, size_t n)
{
	uint8_t in[3 + 5 + 255 + 2];

	assert_true(n <= 255);
	memcpy(in, GREETING "\x05\x01\x00\x03", 7);
	in[7] = (uint8_t)n;
	memcpy(in + 8, name, n);
	in[8 + n] = 0x01;
	in[9 + n] = 0xbb;
	return run(p, in, 10 + n);
}

/* ---- the greeting ---------------------------------------------------------- */

static void test_greeting(void **state)
{
	struct berth_socks_parser p;
	size_t consumed;

	(void)state;
	berth_socks_init(&p);
	assert_int_equal(berth_socks_feed(&p, S("\x05\x01\x00\x05\x01"), &consumed), BERTH_SOCKS_REPLY);
	assert_int_equal(consumed, 3); /* the request that follows is not taken */
	assert_int_equal(p.reply_len, 2);
	assert_memory_equal(p.reply, "\x05\x00", 2);
	assert_int_equal(berth_socks_feed(&p, NULL, 0, &consumed), BERTH_SOCKS_NEED_MORE);
	assert_int_equal(consumed, 0);

	/* "No authentication" is chosen among others. */
	assert_int_equal(run(&p, S("\x05\x03\x02\x01\x00")), BERTH_SOCKS_REPLY);
	assert_memory_equal(p.reply, "\x05\x00", 2);
	assert_int_equal(run(&p, S("\x05\xff\x00")), BERTH_SOCKS_NEED_MORE); /* 255 methods announced */
}

static void test_greeting_refused(void **state)
{
	struct berth_socks_parser p;

	(void)state;
	/* Username/password only (RFC 1929): berth asks for no credentials. */
	assert_int_equal(run(&p, S("\x05\x01\x02")), BERTH_SOCKS_BAD);
	assert_int_equal(p.reply_len, 2);
	assert_memory_equal(p.reply, "\x05\xff", 2);
	assert_int_equal(p.rep, -1);
	assert_non_null(strstr(p.reason, "no authentication required"));
	assert_int_equal(run(&p, S("\x05\x02\x01\x02")), BERTH_SOCKS_BAD);
	assert_memory_equal(p.reply, "\x05\xff", 2);
	/* No methods at all. */
	assert_int_equal(run(&p, S("\x05\x00\x00")), BERTH_SOCKS_BAD);
	assert_memory_equal(p.reply, "\x05\xff", 2);
	assert_string_equal(p.reason, "the greeting offers no method");
}

static void test_other_versions(void **state)
{
	static const uint8_t v4[8] = {0, 91, 0, 0, 0, 0, 0, 0};
	struct berth_socks_parser p;
	size_t consumed;

	(void)state;
	/* SOCKS4 and SOCKS4a get SOCKS4's "request rejected". */
	assert_int_equal(run(&p, S("\x04\x01\x00\x50\x7f\x00\x00\x01user\0")), BERTH_SOCKS_BAD);
	assert_int_equal(p.reply_len, 8);
	assert_memory_equal(p.reply, v4, 8);
	assert_int_equal(p.rep, -1);
	assert_non_null(strstr(p.reason, "SOCKS4"));
	assert_int_equal(run(&p, S("\x04\x01\x00\x50\x00\x00\x00\x01\0example.com\0")), BERTH_SOCKS_BAD);
	assert_memory_equal(p.reply, v4, 8);
	/* Anything else gets no reply. */
	assert_int_equal(run(&p, S("GET http://e.com/ HTTP/1.1\r\n")), BERTH_SOCKS_BAD);
	assert_int_equal(p.reply_len, 0);
	assert_string_equal(p.reason, "not a SOCKS5 greeting");
	assert_int_equal(run(&p, S("\x00")), BERTH_SOCKS_BAD);
	assert_int_equal(run(&p, S("\x06\x01\x00")), BERTH_SOCKS_BAD);
	assert_int_equal(p.reply_len, 0);
	/* Refused at the first byte. */
	berth_socks_init(&p);
	assert_int_equal(berth_socks_feed(&p, S("\x04\x01\x00\x50"), &consumed), BERTH_SOCKS_BAD);
	assert_int_equal(consumed, 1);
}

/* ---- requests -------------------------------------------------------------- */

static void test_connect_ipv4(void **state)
{
	static const uint8_t in[] = {5, 1, 0, 5, 1, 0, 1, 93, 184, 216, 34, 0x01, 0xbb, 'd', 'a', 't', 'a'};
	struct berth_socks_parser p;
	size_t consumed;

	(void)state;
	assert_int_equal(run(&p, in, sizeof in), BERTH_SOCKS_DONE);
	assert_int_equal(p.req.kind, BERTH_TARGET_IPV4);
	assert_string_equal(p.req.host, "93.184.216.34");
	assert_memory_equal(p.req.addr, "\x5d\xb8\xd8\x22", 4);
	assert_int_equal(p.req.port, 443);
	/* Tunnel data after the request is not taken. */
	berth_socks_init(&p);
	assert_int_equal(berth_socks_feed(&p, in, sizeof in, &consumed), BERTH_SOCKS_REPLY);
	assert_int_equal(consumed, 3);
	assert_int_equal(berth_socks_feed(&p, in + 3, sizeof in - 3, &consumed), BERTH_SOCKS_DONE);
	assert_int_equal(consumed, 10);
	assert_int_equal(berth_socks_feed(&p, in + 13, 4, &consumed), BERTH_SOCKS_DONE);
	assert_int_equal(consumed, 0);
}

static void test_connect_ipv6(void **state)
{
	struct berth_socks_parser p;
	struct in6_addr a;

	(void)state;
	assert_int_equal(run(&p, S(GREETING "\x05\x01\x00\x04"
					    "\x20\x01\x0d\xb8\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01"
					    "\x00\x50")),
			 BERTH_SOCKS_DONE);
	assert_int_equal(p.req.kind, BERTH_TARGET_IPV6);
	assert_string_equal(p.req.host, "2001:db8::1");
	assert_int_equal(inet_pton(AF_INET6, "2001:db8::1", &a), 1);
	assert_memory_equal(p.req.addr, &a, 16);
	assert_int_equal(p.req.port, 80);
}

static void test_connect_name(void **state)
{
	struct berth_socks_parser p;
	char name[256];
	static const uint8_t zero[16];

	(void)state;
	assert_int_equal(connect_name(&p, S("Api.Example.COM")), BERTH_SOCKS_DONE);
	assert_int_equal(p.req.kind, BERTH_TARGET_NAME);
	assert_string_equal(p.req.host, "api.example.com");
	assert_memory_equal(p.req.addr, zero, 16);
	assert_int_equal(p.req.port, 443);
	/* Literals sent as names are recognised. */
	assert_int_equal(connect_name(&p, S("192.0.2.1")), BERTH_SOCKS_DONE);
	assert_int_equal(p.req.kind, BERTH_TARGET_IPV4);
	assert_memory_equal(p.req.addr, "\xc0\x00\x02\x01", 4);
	assert_int_equal(connect_name(&p, S("::FFFF:192.0.2.1")), BERTH_SOCKS_DONE);
	assert_int_equal(p.req.kind, BERTH_TARGET_IPV6);
	assert_string_equal(p.req.host, "::ffff:192.0.2.1");
	assert_memory_equal(p.req.addr, "\0\0\0\0\0\0\0\0\0\0\xff\xff\xc0\x00\x02\x01", 16);
	/* 1 and 253 bytes are accepted. */
	assert_int_equal(connect_name(&p, S("a")), BERTH_SOCKS_DONE);
	snprintf(name, sizeof name, "%s.%s.%s.%s",
		 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		 "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
		 "ccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc",
		 "ddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd");
	assert_int_equal(strlen(name), 253);
	assert_int_equal(connect_name(&p, name, 253), BERTH_SOCKS_DONE);
	assert_string_equal(p.req.host, name);
}

static void test_name_refused(void **state)
{
	static const struct {
		const char *name;
		size_t len;
		const char *why;
	} cases[] = {
	    {"", 0, "empty domain name"},
	    {"a\0b.example", 11, "invalid character"},
	    {"a\x1b[31m.example", 14, "invalid character"},
	    {"a\r\nb", 4, "invalid character"},
	    {"a b", 3, "invalid character"},
	    {"b\xc3\xbc"
	     "cher.example",
	     15, "invalid character"},
	    {"example.com.", 12, "empty label"},
	    {"0x7f.1", 6, "dotted-quad"},
	    {"2130706433", 10, "dotted-quad"},
	    {"fe80::1%eth0", 12, "zone"},
	    {"[::1]", 5, "invalid IPv6 address"},
	};
	uint8_t req[4 + 1 + 255 + 2];
	char name[256];

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t n = cases[i].len;

		memcpy(req, "\x05\x01\x00\x03", 4);
		req[4] = (uint8_t)n;
		memcpy(req + 5, cases[i].name, n);
		req[5 + n] = 0;
		req[6 + n] = 80;
		expect_refused(req, 7 + n, BERTH_SOCKS_GENERAL_FAILURE, 7 + n, cases[i].why);
	}
	/* 254 and 255 bytes: valid on the wire, too long for a host name. */
	for (size_t n = 254; n <= 255; n++) {
		memset(name, 'a', sizeof name);
		for (size_t k = 60; k < n; k += 61)
			name[k] = '.';
		memcpy(req, "\x05\x01\x00\x03", 4);
		req[4] = (uint8_t)n;
		memcpy(req + 5, name, n);
		req[5 + n] = 0;
		req[6 + n] = 80;
		expect_refused(req, 7 + n, BERTH_SOCKS_GENERAL_FAILURE, 7 + n, "longer than 253 bytes");
	}
}

static void test_request_refused(void **state)
{
	(void)state;
	/* BIND and UDP ASSOCIATE: 0x07, after the whole request. */
	expect_refused(S("\x05\x02\x00\x01\x7f\x00\x00\x01\x00\x50"), BERTH_SOCKS_COMMAND_NOT_SUPPORTED, 10,
		       "only CONNECT");
	expect_refused(S("\x05\x03\x00\x01\x00\x00\x00\x00\x00\x00"), BERTH_SOCKS_COMMAND_NOT_SUPPORTED, 10,
		       "only CONNECT");
	expect_refused(S("\x05\x09\x00\x03\x01x\x00\x50"), BERTH_SOCKS_COMMAND_NOT_SUPPORTED, 8,
		       "only CONNECT");
	/* Unknown address types: 0x08 at once (the length is unknown). */
	expect_refused(S("\x05\x01\x00\x02\x00\x00"), BERTH_SOCKS_ADDRESS_TYPE_NOT_SUPPORTED, 4,
		       "address type");
	expect_refused(S("\x05\x01\x00\x00"), BERTH_SOCKS_ADDRESS_TYPE_NOT_SUPPORTED, 4, "address type");
	expect_refused(S("\x05\x01\x00\x05"), BERTH_SOCKS_ADDRESS_TYPE_NOT_SUPPORTED, 4, "address type");
	/* The command is judged before the address type. */
	expect_refused(S("\x05\x02\x00\x09"), BERTH_SOCKS_COMMAND_NOT_SUPPORTED, 4, "only CONNECT");
	/* A request that is not version 5: 0x01 at once. */
	expect_refused(S("\x04\x01\x00\x01"), BERTH_SOCKS_GENERAL_FAILURE, 4, "version is not 5");
	expect_refused(S("\x04\x02\x00\x09"), BERTH_SOCKS_GENERAL_FAILURE, 4, "version is not 5");
	/* Reserved byte not 0. */
	expect_refused(S("\x05\x01\x01\x01\x7f\x00\x00\x01\x00\x50"), BERTH_SOCKS_GENERAL_FAILURE, 10,
		       "reserved");
	/* Port 0. */
	expect_refused(S("\x05\x01\x00\x01\x5d\xb8\xd8\x22\x00\x00"), BERTH_SOCKS_GENERAL_FAILURE, 10,
		       "port 0");
	expect_refused(S("\x05\x01\x00\x03\x01x\x00\x00"), BERTH_SOCKS_GENERAL_FAILURE, 8, "port 0");
}

static void test_truncated(void **state)
{
	static const uint8_t in[] = {5, 2, 0, 2, 5, 1, 0, 3, 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0, 80};
	struct berth_socks_parser p;
	size_t consumed;

	(void)state;
	for (size_t n = 0; n < sizeof in; n++) {
		enum berth_socks_verdict v;

		berth_socks_init(&p);
		v = berth_socks_feed(&p, in, n, &consumed);
		if (n < 4) {
			assert_int_equal(v, BERTH_SOCKS_NEED_MORE);
			assert_int_equal(consumed, n);
			continue;
		}
		assert_int_equal(v, BERTH_SOCKS_REPLY);
		assert_int_equal(consumed, 4);
		assert_int_equal(berth_socks_feed(&p, in + 4, n - 4, &consumed), BERTH_SOCKS_NEED_MORE);
		assert_int_equal(consumed, n - 4);
	}
	assert_int_equal(run(&p, in, sizeof in), BERTH_SOCKS_DONE);
	assert_string_equal(p.req.host, "example");
	assert_int_equal(p.req.port, 80);
}

/* ---- replies ------------------------------------------------------------------ */

static void test_format_reply(void **state)
{
	static const enum berth_socks_rep codes[] = {
	    BERTH_SOCKS_SUCCEEDED,
	    BERTH_SOCKS_GENERAL_FAILURE,
	    BERTH_SOCKS_NOT_ALLOWED,
	    BERTH_SOCKS_NETWORK_UNREACHABLE,
	    BERTH_SOCKS_HOST_UNREACHABLE,
	    BERTH_SOCKS_CONNECTION_REFUSED,
	    BERTH_SOCKS_TTL_EXPIRED,
	    BERTH_SOCKS_COMMAND_NOT_SUPPORTED,
	    BERTH_SOCKS_ADDRESS_TYPE_NOT_SUPPORTED,
	};
	uint8_t buf[BERTH_SOCKS_REPLY_MAX], want[BERTH_SOCKS_REPLY_MAX];
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(1080)};
	struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6, .sin6_port = htons(40000)};
	struct sockaddr_un sun = {.sun_family = AF_UNIX};

	(void)state;
	assert_int_equal(BERTH_SOCKS_NOT_ALLOWED, 0x02);
	assert_int_equal(BERTH_SOCKS_HOST_UNREACHABLE, 0x04);
	assert_int_equal(BERTH_SOCKS_CONNECTION_REFUSED, 0x05);
	assert_int_equal(BERTH_SOCKS_COMMAND_NOT_SUPPORTED, 0x07);
	assert_int_equal(BERTH_SOCKS_ADDRESS_TYPE_NOT_SUPPORTED, 0x08);
	for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
		uint8_t w[10] = {5, (uint8_t)codes[i], 0, 1, 0, 0, 0, 0, 0, 0};

		memset(buf, 0xaa, sizeof buf);
		assert_int_equal(berth_socks_format_reply(buf, sizeof buf, codes[i], NULL), 10);
		assert_memory_equal(buf, w, 10);
		assert_int_equal(buf[10], 0xaa);
	}
	inet_pton(AF_INET, "198.51.100.7", &sin.sin_addr);
	assert_int_equal(berth_socks_format_reply(buf, 10, BERTH_SOCKS_SUCCEEDED, (struct sockaddr *)&sin),
			 10);
	memcpy(want, "\x05\x00\x00\x01\xc6\x33\x64\x07\x04\x38", 10);
	assert_memory_equal(buf, want, 10);
	assert_int_equal(berth_socks_format_reply(buf, 9, BERTH_SOCKS_SUCCEEDED, (struct sockaddr *)&sin),
			 -1);

	inet_pton(AF_INET6, "2001:db8::7", &sin6.sin6_addr);
	assert_int_equal(berth_socks_format_reply(buf, 22, BERTH_SOCKS_SUCCEEDED, (struct sockaddr *)&sin6),
			 22);
	memcpy(want, "\x05\x00\x00\x04\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x07\x9c\x40", 22);
	assert_memory_equal(buf, want, 22);
	assert_int_equal(berth_socks_format_reply(buf, 21, BERTH_SOCKS_SUCCEEDED, (struct sockaddr *)&sin6),
			 -1);

	assert_int_equal(berth_socks_format_reply(buf, sizeof buf, (enum berth_socks_rep)9, NULL), -1);
	assert_int_equal(
	    berth_socks_format_reply(buf, sizeof buf, BERTH_SOCKS_SUCCEEDED, (struct sockaddr *)&sun), -1);
	assert_int_equal(berth_socks_format_reply(buf, 9, BERTH_SOCKS_NOT_ALLOWED, NULL), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_greeting),       cmocka_unit_test(test_greeting_refused),
	    cmocka_unit_test(test_other_versions), cmocka_unit_test(test_connect_ipv4),
	    cmocka_unit_test(test_connect_ipv6),   cmocka_unit_test(test_connect_name),
	    cmocka_unit_test(test_name_refused),   cmocka_unit_test(test_request_refused),
	    cmocka_unit_test(test_truncated),      cmocka_unit_test(test_format_reply),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
