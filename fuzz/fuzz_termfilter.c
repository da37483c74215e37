/* SPDX-License-Identifier: MIT */
/*
 * fuzz_termfilter.c - libFuzzer target for the filter between an agent's
 * output and the person's terminal (src/util/termfilter.c: `berth attach`,
 * `berth logs` on a terminal).
 *
 * The first byte picks where the input is cut in two (a sequence split
 * between two reads); the rest is agent output.  Invariants (a violation
 * aborts):
 *  - a call writes at most its input's length + BERTH_TERMFILTER_SLACK bytes;
 *  - the output does not depend on where the input was cut (whole, in two
 *    parts, byte by byte);
 *  - the output is safe, as read by a model of xterm's parser written here
 *    independently of the filter: text is UTF-8 without C1 controls (raw or
 *    encoded), no SOS/PM/APC, every OSC has a kept number and holds only
 *    printable text, no DCS at all, a string is ended by ST, BEL (OSC) or
 *    CAN/SUB and by nothing else; no report request whose answer is a
 *    string: no CSI 20 t or 21 t (DEL ignored and C0 executed inside, as
 *    terminals do), no `?` in OSC 4 or 10-19;
 *  - filtering the output again changes nothing.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/termfilter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { G, E, EI, CSI, OSCN, OSCS, SESC };

static bool kept(long n)
{
	static const long ok[] = {0,  1,   2,   4,   8,   10,  11,  12,  13,  14,  15,  16,  17, 18,
				  19, 104, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 133};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		if (ok[i] == n)
			return true;
	return false;
}

/* Length of a valid UTF-8 sequence at @p (of @n bytes) that is not a C1
 * control, else 0. */
static size_t utf8_ok(const unsigned char *p, size_t n)
{
	uint32_t c;
	size_t len;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, c = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, c = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, c = p[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t k = 1; k < len; k++) {
		if ((p[k] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[k] & 0x3f);
	}
	if ((len == 2 && c < 0xa0) || (len == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
	    (len == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	return len;
}

static void check_safe(const unsigned char *p, size_t n)
{
	int st = G;
	long num = 0;
	size_t dcs = 0;
	long p1 = 0;
	bool p1_digits = false, p1_done = false;

	for (size_t i = 0; i < n; i++) {
		unsigned char b = p[i];
		if (b >= 0x80) {
			/* Non-ASCII: only as UTF-8 text without C1, in the ground
			 * state, inside a kept string, or ending a CSI or an ESC
			 * sequence with intermediates (the terminal drops it). */
			size_t l = utf8_ok(p + i, n - i);
			if (l == 0 || st == E || st == OSCN || st == SESC)
				abort();
			if (st == CSI || st == EI)
				st = G;
			i += l - 1;
			continue;
		}
		switch (st) {
		case G:
			if (b == 0x1b)
				st = E;
			break;
		case E:
			if (b == ']')
				st = OSCN, num = 0, dcs = 0;
			else if (b == 'P' || b == 'X' || b == '^' || b == '_')
				abort(); /* DCS, SOS, PM, APC */
			else if (b == '[')
				st = CSI, p1 = 0, p1_digits = false, p1_done = false;
			else if (b == 0x18 || b == 0x1a)
				st = G;
			else if (b == 0x1b || b < 0x20 || b == 0x7f)
				;
			else if (b < 0x30)
				st = EI;
			else
				st = G;
			break;
		case EI:
			if (b == 0x1b)
				st = E;
			else if (b == 0x18 || b == 0x1a || (b >= 0x30 && b < 0x7f))
				st = G;
			break;
		case CSI:
			if (b == 0x1b) {
				st = E;
			} else if (b >= '0' && b <= '9' && !p1_done) {
				if (p1 < 100000)
					p1 = p1 * 10 + (b - '0');
				p1_digits = true;
			} else if (b == 0x18 || b == 0x1a) {
				st = G;
			} else if (b >= 0x40 && b < 0x7f) {
				if (b == 't' && p1_digits && !p1_done && (p1 == 20 || p1 == 21))
					abort(); /* a title or icon label report request */
				st = G;
			} else if (b >= 0x20 && b < 0x40) {
				if (p1_digits && !p1_done && (p1 == 20 || p1 == 21))
					abort(); /* CSI 20;... or 21;... : dropped whole */
				p1_done = true;
			}
			break;
		case OSCN:
			if (b >= '0' && b <= '9' && dcs < 7) {
				num = num * 10 + (b - '0');
				dcs++;
			} else if ((b == ';' || b == 0x07) && dcs > 0 && kept(num)) {
				st = b == ';' ? OSCS : G;
				dcs = num == 4 || (num >= 10 && num <= 19); /* may be a colour query */
			} else {
				abort();
			}
			break;
		case OSCS:
			if (b == 0x1b)
				st = SESC;
			else if (b == 0x07 || b == 0x18 || b == 0x1a)
				st = G;
			else if (b < 0x20 || b == 0x7f || (b == '?' && dcs))
				abort();
			break;
		case SESC:
			if (b != '\\')
				abort(); /* a string broken off without CAN */
			st = G;
			break;
		default:
			abort();
		}
	}
}

static size_t run(const char *in, size_t len, char *out, size_t cut)
{
	struct berth_termfilter f;
	size_t n;

	berth_termfilter_init(&f);
	n = berth_termfilter_feed(&f, in, cut, out);
	if (n > cut + BERTH_TERMFILTER_SLACK)
		abort();
	size_t m = berth_termfilter_feed(&f, in + cut, len - cut, out + n);
	if (m > len - cut + BERTH_TERMFILTER_SLACK)
		abort();
	return n + m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 65536)
		return 0;
	const char *in = (const char *)data + 1;
	size_t len = size - 1, cut = len ? data[0] % (len + 1) : 0;
	char *a = malloc(len + 2 * BERTH_TERMFILTER_SLACK), *b = malloc(len + 2 * BERTH_TERMFILTER_SLACK);
	char *c = malloc(len + BERTH_TERMFILTER_SLACK), *again = malloc(len + 2 * BERTH_TERMFILTER_SLACK);
	if (a == NULL || b == NULL || c == NULL || again == NULL)
		abort();

	size_t na = run(in, len, a, len), nb = run(in, len, b, cut), nc = 0;
	if (na != nb || memcmp(a, b, na) != 0)
		abort();
	struct berth_termfilter f;
	berth_termfilter_init(&f);
	for (size_t i = 0; i < len; i++) {
		char one[1 + BERTH_TERMFILTER_SLACK];
		size_t k = berth_termfilter_feed(&f, in + i, 1, one);
		if (nc + k > na)
			abort();
		memcpy(c + nc, one, k);
		nc += k;
	}
	if (nc != na || memcmp(a, c, na) != 0)
		abort();
	check_safe((const unsigned char *)a, na);
	size_t n2 = run(a, na, again, na);
	if (n2 != na || memcmp(a, again, na) != 0)
		abort();
	free(a);
	free(b);
	free(c);
	free(again);
	return 0;
}
