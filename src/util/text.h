/* SPDX-License-Identifier: MIT */
/*
 * text.h - text from a sandboxed program, made safe for a terminal.
 */
#ifndef BERTH_TEXT_H
#define BERTH_TEXT_H

#include <stddef.h>
#include <stdint.h>

/*
 * berth_text_clean - copy @src into @dst (@len bytes, NUL-terminated,
 * truncated to fit) so that printing it cannot drive the reader's terminal:
 * C0 control characters but tab (ESC, CR, BEL, newline...), DEL, C1 controls
 * (U+0080-U+009F) and the Unicode bidirectional and line/paragraph
 * separator characters (U+2028-U+202E, U+2066-U+2069, U+200E, U+200F) become
 * `\xHH` or `\u{HHHH}`; bytes that are not UTF-8 become `\xHH`.
 * Returns @dst.
 */
char *berth_text_clean(char *dst, size_t len, const char *src);

/*
 * berth_utf8_fix - copy @src into @dst (@len bytes, NUL-terminated, cut at a
 * character boundary to fit) with every byte that is not part of a valid
 * UTF-8 sequence (RFC 3629) replaced by U+FFFD; everything else, newlines
 * included, is kept.  For text that must be valid JSON.  Returns @dst.
 */
char *berth_utf8_fix(char *dst, size_t len, const char *src);

/*
 * berth_json_text_safe - a copy of @json (JSON text as jansson writes it:
 * characters other than ASCII only inside strings) in which every character
 * that berth_text_clean shows as an escape and that JSON leaves as it is —
 * C1 controls (U+0080-U+009F: xterm reads U+009D as OSC and U+009C as ST),
 * and the bidirectional and line/paragraph separator characters — is
 * written as a `\uXXXX` escape (RFC 8259, section 7), so that the text
 * means the same JSON and cannot drive the terminal it is printed on.  Other
 * characters stay as they are (`"\u4e2d"` is not forced on readers).
 * Returns a malloc'd string, or NULL on ENOMEM.
 */
char *berth_json_text_safe(const char *json);

/*
 * berth_utf8_decode - the UTF-8 sequence at @s (at most @n bytes; a
 * NUL-terminated string may pass SIZE_MAX) into *@cp.  Returns its length
 * (1 to 4), or 0 when it is not a valid shortest-form sequence (RFC 3629:
 * no overlongs, no surrogates, at most U+10FFFF) or is cut short.
 */
int berth_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

#endif
