/* SPDX-License-Identifier: MIT */
/*
 * yamlw.c - YAML lines and double-quoted scalars (yamlw.h).
 */
#include "yamlw.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/text.h"

/* Whether a YAML reader takes @cp as it is inside a double-quoted scalar:
 * YAML 1.2's c-printable (5.1) less the characters YAML 1.1 reads as line
 * breaks (NEL, U+2028, U+2029) and the byte order mark. */
static bool printable(uint32_t cp)
{
	if (cp >= 0x20 && cp <= 0x7e)
		return true;
	if (cp == 0x85 || cp == 0x2028 || cp == 0x2029 || cp == 0xfeff)
		return false;
	return (cp >= 0xa0 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) ||
	       (cp >= 0x10000 && cp <= 0x10ffff);
}

int berth_yaml_quote(struct berth_buf *b, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s);
	uint32_t cp;

	for (size_t i = 0; i < n;) {
		int l = berth_utf8_decode(u + i, n - i, &cp);
		if (l <= 0)
			return -1;
		i += (size_t)l;
	}
	berth_buf_puts(b, "\"");
	for (size_t i = 0; i < n;) {
		int l = berth_utf8_decode(u + i, n - i, &cp);
		if (cp == '"' || cp == '\\')
			berth_buf_putf(b, "\\%c", (char)cp);
		else if (cp == '\n')
			berth_buf_puts(b, "\\n");
		else if (cp == '\t')
			berth_buf_puts(b, "\\t");
		else if (cp < 0x100 && !printable(cp))
			berth_buf_putf(b, "\\x%02X", (unsigned)cp);
		else if (!printable(cp))
			berth_buf_putf(b, "\\u%04X", (unsigned)cp);
		else
			berth_buf_put(b, u + i, (size_t)l);
		i += (size_t)l;
	}
	berth_buf_puts(b, "\"");
	return 0;
}

static void indent_by(struct berth_buf *b, int indent)
{
	for (int i = 0; i < indent; i++)
		berth_buf_puts(b, "  ");
}

void berth_yamlw_line(struct berth_yamlw *w, int indent, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	indent_by(&w->b, indent);
	berth_buf_puts(&w->b, line);
	berth_buf_puts(&w->b, "\n");
}

void berth_yamlw_str(struct berth_yamlw *w, int indent, bool item, const char *key, const char *value)
{
	indent_by(&w->b, indent);
	if (item || key == NULL)
		berth_buf_puts(&w->b, "- ");
	if (key != NULL)
		berth_buf_putf(&w->b, "%s: ", key);
	if (berth_yaml_quote(&w->b, value) < 0) {
		berth_buf_puts(&w->b, "\"\"");
		if (w->bad == NULL)
			w->bad = value;
	}
	berth_buf_puts(&w->b, "\n");
}

void berth_yamlw_comment(struct berth_yamlw *w, int indent, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	for (char *c = line; *c != '\0'; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = ' ';
	indent_by(&w->b, indent);
	berth_buf_puts(&w->b, "# ");
	berth_buf_puts(&w->b, line);
	berth_buf_puts(&w->b, "\n");
}
