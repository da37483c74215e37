/* SPDX-License-Identifier: MIT */
/*
 * fuzz_line_check.h - CHECK(cond) for the fuzzers that work line by line
 * (fuzz_control, fuzz_appchan): a broken property is named with the line
 * it broke on (variables `line` and `len` in scope), then the run aborts.
 * Define FUZZ_NAME before including it.
 */
#ifndef BERTH_FUZZ_LINE_CHECK_H
#define BERTH_FUZZ_LINE_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static void fail(const char *why, const char *line, size_t len) __attribute__((noreturn));
static void fail(const char *why, const char *line, size_t len)
{
	fprintf(stderr, FUZZ_NAME ": %s: %.*s\n", why, (int)(len > 300 ? 300 : len),
		line != NULL ? line : "");
	abort();
}

#define CHECK(c)                                                                                             \
	do {                                                                                                 \
		if (!(c))                                                                                    \
			fail(#c, line, len);                                                                 \
	} while (0)

#endif
