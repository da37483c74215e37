/* SPDX-License-Identifier: MIT */

#include "text.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int berth_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	uint32_t c;
	size_t k;

	if (n == 0)
		return 0;
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		k = 2;
		c = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		k = 3;
		c = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		k = 4;
		c = s[0] & 0x07;
	} else {
		return 0;
	}
	/* byte by byte: a NUL (or any non-continuation byte) ends the sequence before the next is read */
	for (size_t j = 1; j < k; j++) {
		if (j >= n || (s[j] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[j] & 0x3f);
	}
	if ((k == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
	    (k == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	*cp = c;
	return (int)k;
}

/* Of a NUL-terminated string: berth_utf8_decode stops at the NUL. */
static int utf8_decode(const unsigned char *s, uint32_t *cp)
{
	return berth_utf8_decode(s, SIZE_MAX, cp);
}

static bool unsafe(uint32_t cp)
{
	return (cp < 0x20 && cp != '\t') || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || cp == 0x200e ||
	       cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/*
 * Copy @src into @dst (@len bytes, NUL-terminated, cut at a character): with
 * @escape, bytes that are not UTF-8 and unsafe characters become `\xHH` or
 * `\u{HHHH}`; without, only bytes that are not UTF-8 change, each to U+FFFD.
 */
static char *copy_text(char *dst, size_t len, const char *src, bool escape)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t o = 0;

	if (len == 0)
		return dst;
	while (*s != '\0') {
		uint32_t cp;
		int n = utf8_decode(s, &cp);
		char esc[16];
		const char *out = (const char *)s;
		size_t olen = (size_t)n;

		if (n == 0 && !escape) {
			out = "\xef\xbf\xbd"; /* U+FFFD */
			olen = 3;
		} else if (n == 0) {
			olen = (size_t)snprintf(esc, sizeof esc, "\\x%02x", *s);
			out = esc;
		} else if (escape && unsafe(cp)) {
			olen = cp < 0x100 ? (size_t)snprintf(esc, sizeof esc, "\\x%02x", (unsigned)cp)
					  : (size_t)snprintf(esc, sizeof esc, "\\u{%04x}", (unsigned)cp);
			out = esc;
		}
		if (n == 0)
			n = 1;
		if (o + olen >= len)
			break;
		memcpy(dst + o, out, olen);
		o += olen;
		s += n;
	}
	dst[o] = '\0';
	return dst;
}

char *berth_text_clean(char *dst, size_t len, const char *src)
{
	return copy_text(dst, len, src, true);
}

char *berth_utf8_fix(char *dst, size_t len, const char *src)
{
	return copy_text(dst, len, src, false);
}

char *berth_json_text_safe(const char *json)
{
	const unsigned char *s = (const unsigned char *)json;
	size_t len = strlen(json), o = 0;
	/* Each unsafe character (2 or 3 bytes) becomes 6: at most 3 times. */
	char *out = malloc(3 * len + 1);

	if (out == NULL)
		return NULL;
	while (*s != '\0') {
		uint32_t cp;
		int n = utf8_decode(s, &cp);

		if ((n > 1 && unsafe(cp)) || (n == 1 && cp == 0x7f)) {
			o += (size_t)sprintf(out + o, "\\u%04x", (unsigned)cp);
		} else {
			if (n == 0)
				n = 1; /* not UTF-8: jansson never writes it; kept as it is */
			memcpy(out + o, s, (size_t)n);
			o += (size_t)n;
		}
		s += n;
	}
	out[o] = '\0';
	return out;
}
