/* SPDX-License-Identifier: MIT */
/*
 * hex.h - hexadecimal digits, the one copy (digests, keys, signatures,
 * chunk sizes, address literals).
 */
#ifndef BERTH_HEX_H
#define BERTH_HEX_H

#include <stddef.h>

/* berth_hex - @n bytes at @in as 2n lowercase hex digits and a NUL in @out. */
void berth_hex(const unsigned char *in, size_t n, char *out);

/*
 * berth_unhex - exactly 2n hex digits (either case) at @hex into @n bytes at
 * @out.  Returns 0, or -1 (wrong length or a non-hex digit).
 */
int berth_unhex(const char *hex, unsigned char *out, size_t n);

/* berth_hex_digit - the value of hex digit @c (either case), or -1. */
int berth_hex_digit(int c);

#endif
