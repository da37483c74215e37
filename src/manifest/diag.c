/* SPDX-License-Identifier: MIT */
/*
 * diag.c - diagnostics of the manifest parser: one line per problem,
 * `DISPLAY:LINE:COL: FIELD.PATH: message`, values quoted so that a hostile
 * manifest cannot put escape sequences or line breaks on the user's terminal.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../util/cleanup.h"
#include "internal.h"

void berth_diags_free(struct berth_diags *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->items[i].text);
	free(d->items);
	memset(d, 0, sizeof *d);
}

bool diag_full(const struct mctx *c)
{
	return c->d->n >= BERTH_DIAGS_MAX;
}

void diag_drop(struct mctx *c)
{
	c->problems++;
	c->d->dropped++;
}

static void push(struct mctx *c, unsigned line, unsigned col, char *text)
{
	struct berth_diags *d = c->d;

	c->problems++;
	if (d->n >= BERTH_DIAGS_MAX) {
		d->dropped++;
		free(text);
		return;
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16;
		struct berth_diag *items = realloc(d->items, cap * sizeof *items);
		if (items == NULL) {
			c->oom = true;
			free(text);
			return;
		}
		d->items = items;
		d->cap = cap;
	}
	d->items[d->n].line = line;
	d->items[d->n].col = col;
	d->items[d->n].text = text;
	d->n++;
}

static void vdiag(struct mctx *c, unsigned line, unsigned col, bool with_path, const char *fmt, va_list ap)
{
	char msg[1024];
	char *text = NULL;

	vsnprintf(msg, sizeof msg, fmt, ap);
	if (with_path && c->plen > 0) {
		if (asprintf(&text, "%s:%u:%u: %s: %s", c->display, line, col, c->path, msg) < 0)
			text = NULL;
	} else {
		if (asprintf(&text, "%s:%u:%u: %s", c->display, line, col, msg) < 0)
			text = NULL;
	}
	if (text == NULL) {
		c->oom = true;
		c->problems++;
		return;
	}
	push(c, line, col, text);
}

void diag(struct mctx *c, const struct berth_ynode *at, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdiag(c, at != NULL ? at->line : 1, at != NULL ? at->col : 1, true, fmt, ap);
	va_end(ap);
}

void diag_pos(struct mctx *c, unsigned line, unsigned col, bool with_path, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdiag(c, line, col, with_path, fmt, ap);
	va_end(ap);
}

void diag_finish(struct mctx *c)
{
	struct berth_diags *d = c->d;

	/* Stable insertion sort of this parse's lines by position (at most BERTH_DIAGS_MAX). */
	for (size_t i = c->first + 1; i < d->n; i++) {
		struct berth_diag x = d->items[i];
		size_t j = i;
		while (j > c->first && (d->items[j - 1].line > x.line ||
					(d->items[j - 1].line == x.line && d->items[j - 1].col > x.col))) {
			d->items[j] = d->items[j - 1];
			j--;
		}
		d->items[j] = x;
	}
	if (d->dropped > 0) {
		char *text = NULL;
		if (asprintf(&text, "%s: %zu more problem%s not shown", c->display, d->dropped,
			     d->dropped == 1 ? "" : "s") < 0) {
			c->oom = true;
			return;
		}
		/* Past BERTH_DIAGS_MAX on purpose: this line is always last. */
		struct berth_diag *items = realloc(d->items, (d->n + 1) * sizeof *items);
		if (items == NULL) {
			free(text);
			c->oom = true;
			return;
		}
		d->items = items;
		d->cap = d->n + 1;
		d->items[d->n].line = 0;
		d->items[d->n].col = 0;
		d->items[d->n].text = text;
		d->n++;
	}
}

/* ---- paths ---- */

static void path_append(struct mctx *c, const char *s)
{
	size_t n = strlen(s);

	if (c->plen + n >= sizeof c->path) {
		n = sizeof c->path - 1 - c->plen;
		if (n > 3) {
			memcpy(c->path + c->plen, s, n - 3);
			memcpy(c->path + c->plen + n - 3, "...", 3);
		}
	} else {
		memcpy(c->path + c->plen, s, n);
	}
	c->plen += n;
	c->path[c->plen] = '\0';
}

size_t path_push_key(struct mctx *c, const char *key, size_t len)
{
	size_t old = c->plen;

	if (c->plen > 0)
		path_append(c, ".");
	path_append(c, quote(c, key, len));
	return old;
}

size_t path_push_index(struct mctx *c, size_t i)
{
	size_t old = c->plen;
	char buf[32];

	snprintf(buf, sizeof buf, "[%zu]", i);
	path_append(c, buf);
	return old;
}

void path_pop(struct mctx *c, size_t old)
{
	c->plen = old;
	c->path[old] = '\0';
}

/* ---- quoting ---- */

/* Decode one UTF-8 sequence; returns its length (1 for an invalid byte, *cp = 0xfffd). */
static size_t utf8_decode(const unsigned char *s, size_t len, unsigned *cp)
{
	unsigned c0 = s[0];
	size_t k;
	unsigned v;

	if (c0 < 0x80) {
		*cp = c0;
		return 1;
	} else if ((c0 & 0xe0) == 0xc0) {
		k = 2;
		v = c0 & 0x1f;
	} else if ((c0 & 0xf0) == 0xe0) {
		k = 3;
		v = c0 & 0x0f;
	} else if ((c0 & 0xf8) == 0xf0) {
		k = 4;
		v = c0 & 0x07;
	} else {
		*cp = 0xfffd;
		return 1;
	}
	if (k > len) {
		*cp = 0xfffd;
		return 1;
	}
	for (size_t i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80) {
			*cp = 0xfffd;
			return 1;
		}
		v = (v << 6) | (s[i] & 0x3f);
	}
	*cp = v;
	return k;
}

/* Characters that move the cursor, reorder text or hide: shown escaped. */
static bool invisible(unsigned cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x200b && cp <= 0x200f) ||
	       (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff ||
	       cp == 0xfffd;
}

const char *quote(struct mctx *c, const char *s, size_t len)
{
	char *out = c->qbuf[c->qnext++ % BERTH_ARRAY_SIZE(c->qbuf)];
	const size_t max = 240; /* leaves room in qbuf for got() */
	size_t o = 0, chars = 0;

	for (size_t i = 0; i < len;) {
		unsigned cp;
		size_t k = utf8_decode((const unsigned char *)s + i, len - i, &cp);
		char esc[16];

		if (chars >= 60 || o + 16 >= max) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		if (cp == '\n' || cp == '\t' || cp == '\r') {
			snprintf(esc, sizeof esc, "\\%c", cp == '\n' ? 'n' : cp == '\t' ? 't' : 'r');
		} else if (cp == 0xfffd && k == 1 && (unsigned char)s[i] >= 0x80) {
			snprintf(esc, sizeof esc, "\\x%02x", (unsigned char)s[i]);
		} else if (cp < 0x20 || cp == 0x7f) {
			snprintf(esc, sizeof esc, "\\x%02x", cp);
		} else if (invisible(cp)) {
			snprintf(esc, sizeof esc, "\\u%04x", cp);
		} else {
			memcpy(out + o, s + i, k);
			o += k;
			i += k;
			chars++;
			continue;
		}
		size_t el = strlen(esc);
		memcpy(out + o, esc, el);
		o += el;
		i += k;
		chars++;
	}
	out[o] = '\0';
	return out;
}

const char *got(struct mctx *c, const struct berth_ynode *n)
{
	char *out;
	const char *q;

	if (n->kind != BERTH_YN_SCALAR)
		return ynode_describe(n);
	if (n->plain && yscalar_type(n) == YT_NULL)
		return "null";
	q = quote(c, n->s, n->len);
	out = c->qbuf[c->qnext++ % BERTH_ARRAY_SIZE(c->qbuf)];
	snprintf(out, sizeof c->qbuf[0], "%s `%s`", ynode_describe(n), q);
	return out;
}
