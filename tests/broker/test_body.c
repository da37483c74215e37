/* SPDX-License-Identifier: MIT */
/*
 * test_body.c - request body framing (src/broker/body.c): where a
 * Content-Length or chunked body ends, and what is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "broker/body.h"

/* Feed @s at once, then byte by byte; both must agree.  Returns what the
 * body took (-1 on a refusal) and whether it ended. */
static long frame(enum berth_body_kind kind, uint64_t len, const char *s, bool *done)
{
	struct berth_body a, b;
	size_t n = strlen(s);
	long whole, took = 0;

	berth_body_init(&a, kind, len);
	whole = berth_body_feed(&a, (const unsigned char *)s, n);
	berth_body_init(&b, kind, len);
	for (size_t i = 0; i < n; i++) {
		long k = berth_body_feed(&b, (const unsigned char *)s + i, 1);
		if (k < 0) {
			took = -1;
			break;
		}
		took += k;
		if (k == 0)
			break; /* the body ended before this byte */
	}
	assert_int_equal(whole, took);
	assert_int_equal(berth_body_done(&a), berth_body_done(&b));
	*done = berth_body_done(&a);
	return whole;
}

static void test_none_and_length(void **state)
{
	bool done;

	(void)state;
	assert_int_equal(frame(BERTH_BODY_NONE, 0, "GET / HTTP/1.1\r\n\r\n", &done), 0);
	assert_true(done);
	assert_int_equal(frame(BERTH_BODY_LENGTH, 0, "x", &done), 0);
	assert_true(done);
	assert_int_equal(frame(BERTH_BODY_LENGTH, 5, "abcdeGET /", &done), 5);
	assert_true(done);
	assert_int_equal(frame(BERTH_BODY_LENGTH, 50, "abcde", &done), 5);
	assert_false(done);
}

static void test_chunked(void **state)
{
	bool done;
	static const char body[] = "5\r\nhello\r\n1A;name=\"v\" ;x\r\nabcdefghijklmnopqrstuvwxyz\r\n000\r\n"
				   "Trailer-A: 1\r\nB:\t2\r\n\r\n";

	(void)state;
	char in[256];
	snprintf(in, sizeof(in), "%sGET /next HTTP/1.1\r\n\r\n", body);
	assert_int_equal(frame(BERTH_BODY_CHUNKED, 0, in, &done), (long)strlen(body));
	assert_true(done);
	assert_int_equal(frame(BERTH_BODY_CHUNKED, 0, "0\r\n\r\nrest", &done), 5);
	assert_true(done);
	assert_int_equal(frame(BERTH_BODY_CHUNKED, 0, "a\r\n0123", &done), 7);
	assert_false(done);
	assert_int_equal(frame(BERTH_BODY_CHUNKED, 0, "5 ;ext\r\nhello\r\n0\r\n\r\n", &done), 20);
	assert_true(done);
}

static void test_chunked_refused(void **state)
{
	static const char *const bad[] = {
	    "zz\r\n",                  /* not a size */
	    "\r\n",                    /* no digits */
	    ";x\r\n",                  /* extension without a size */
	    "5\nhello\r\n",            /* bare LF */
	    "5\r\nhelloXY",            /* data not followed by CRLF */
	    "1000000000000000\r\n",    /* 16 hex digits */
	    "5;\x01\r\n",              /* control character in an extension */
	    "0\r\n folded: x\r\n\r\n", /* obsolete line folding in the trailer */
	    "0\r\nT: \x7f\r\n\r\n",    /* DEL in a trailer */
	    "0\r\nT: v\rX",            /* CR not followed by LF */
	    "-5\r\n",                  /* sign */
	    "0x5\r\n",                 /* prefix */
	};
	bool done;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (frame(BERTH_BODY_CHUNKED, 0, bad[i], &done) != -1)
			fail_msg("accepted: %s", bad[i]);
		assert_false(done);
	}
	/* 15 digits are fine (no overflow) */
	assert_int_equal(frame(BERTH_BODY_CHUNKED, 0, "fffffffffffffff\r\nab", &done), 19);
}

static void test_chunked_limits(void **state)
{
	static char line[BERTH_BODY_LINE_MAX + 16], trailer[BERTH_BODY_TRAILER_MAX + 64];
	bool done;

	(void)state;
	/* a size line of exactly the limit passes, one more byte does not */
	memset(line, 'a', sizeof(line));
	memcpy(line, "1;", 2);
	memcpy(line + BERTH_BODY_LINE_MAX - 2, "\r\n", 2);
	line[BERTH_BODY_LINE_MAX] = '\0';
	assert_int_equal(frame(BERTH_BODY_CHUNKED, 0, line, &done), BERTH_BODY_LINE_MAX);
	memset(line, 'a', sizeof(line));
	memcpy(line, "1;", 2);
	memcpy(line + BERTH_BODY_LINE_MAX - 1, "\r\n", 2);
	line[BERTH_BODY_LINE_MAX + 1] = '\0';
	assert_int_equal(frame(BERTH_BODY_CHUNKED, 0, line, &done), -1);
	/* an endless trailer section */
	memcpy(trailer, "0\r\n", 3);
	for (size_t i = 3; i + 1 < sizeof(trailer); i += 6)
		memcpy(trailer + i, "T: v\r\n", i + 7 < sizeof(trailer) ? 6 : sizeof(trailer) - 1 - i);
	trailer[sizeof(trailer) - 1] = '\0';
	assert_int_equal(frame(BERTH_BODY_CHUNKED, 0, trailer, &done), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_none_and_length),
	    cmocka_unit_test(test_chunked),
	    cmocka_unit_test(test_chunked_refused),
	    cmocka_unit_test(test_chunked_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
