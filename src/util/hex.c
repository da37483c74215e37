/* SPDX-License-Identifier: MIT */
/*
 * hex.c - see hex.h.
 */
#include "hex.h"

#include <string.h>

void berth_hex(const unsigned char *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 0xf];
	}
	out[2 * n] = '\0';
}

int berth_hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int berth_unhex(const char *hex, unsigned char *out, size_t n)
{
	if (hex == NULL || strlen(hex) != 2 * n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int hi = berth_hex_digit((unsigned char)hex[2 * i]),
		    lo = berth_hex_digit((unsigned char)hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}
