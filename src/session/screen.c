/* SPDX-License-Identifier: MIT */
/*
 * screen.c - libvterm behind the berth_screen interface.
 */
#include "screen.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vterm.h>

struct berth_screen {
	VTerm *vt;
	VTermScreen *scr;
	void (*reply)(const char *buf, size_t len, void *user);
	void *user;
};

static void on_output(const char *s, size_t len, void *user)
{
	struct berth_screen *sc = user;

	if (sc->reply != NULL)
		sc->reply(s, len, sc->user);
}

struct berth_screen *berth_screen_new(int rows, int cols, void (*reply)(const char *buf, size_t len, void *user),
				      void *user, struct berth_error *err)
{
	struct berth_screen *s;

	if (rows < 1 || rows > 1000 || cols < 1 || cols > 1000)
		return berth_err(err, EINVAL, "invalid screen size %dx%d", rows, cols), NULL;
	s = calloc(1, sizeof *s);
	if (s == NULL || (s->vt = vterm_new(rows, cols)) == NULL) {
		free(s);
		return berth_err(err, ENOMEM, "out of memory"), NULL;
	}
	s->reply = reply;
	s->user = user;
	vterm_set_utf8(s->vt, 1);
	vterm_output_set_callback(s->vt, on_output, s);
	s->scr = vterm_obtain_screen(s->vt);
	vterm_screen_enable_altscreen(s->scr, 1);
	vterm_screen_reset(s->scr, 1);
	return s;
}

void berth_screen_free(struct berth_screen *s)
{
	if (s == NULL)
		return;
	vterm_free(s->vt);
	free(s);
}

void berth_screen_feed(struct berth_screen *s, const char *buf, size_t len)
{
	vterm_input_write(s->vt, buf, len);
}

void berth_screen_resize(struct berth_screen *s, int rows, int cols)
{
	if (rows < 1 || cols < 1 || rows > 1000 || cols > 1000)
		return;
	vterm_set_size(s->vt, rows, cols);
}

void berth_screen_size(const struct berth_screen *s, int *rows, int *cols)
{
	vterm_get_size(s->vt, rows, cols);
}

void berth_screen_cursor(const struct berth_screen *s, int *row, int *col)
{
	VTermPos p;

	vterm_state_get_cursorpos(vterm_obtain_state(s->vt), &p);
	*row = p.row;
	*col = p.col;
}

/* Append the UTF-8 encoding of @c. */
static size_t put_utf8(char *o, uint32_t c)
{
	if (c < 0x80) {
		o[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (char)(0xc0 | (c >> 6));
		o[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		if (c >= 0xd800 && c < 0xe000)
			c = 0xfffd;
		o[0] = (char)(0xe0 | (c >> 12));
		o[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		o[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	if (c > 0x10ffff)
		return put_utf8(o, 0xfffd);
	o[0] = (char)(0xf0 | (c >> 18));
	o[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	o[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

char *berth_screen_line(const struct berth_screen *s, int row)
{
	int rows, cols;
	char *out;
	size_t n = 0, keep = 0;

	vterm_get_size(s->vt, &rows, &cols);
	if (row < 0 || row >= rows)
		return NULL;
	out = malloc((size_t)cols * VTERM_MAX_CHARS_PER_CELL * 4 + 1);
	if (out == NULL)
		return NULL;
	for (int c = 0; c < cols; c++) {
		VTermScreenCell cell;
		VTermPos pos = {row, c};

		if (!vterm_screen_get_cell(s->scr, pos, &cell))
			break;
		if (cell.chars[0] == (uint32_t)-1) /* right half of a wide character */
			continue;
		if (cell.chars[0] == 0) {
			out[n++] = ' ';
		} else {
			for (int i = 0; i < VTERM_MAX_CHARS_PER_CELL && cell.chars[i] != 0; i++)
				n += put_utf8(out + n, cell.chars[i] < 0x20 ? 0xfffd : cell.chars[i]);
		}
		if (cell.chars[0] != 0 && cell.chars[0] != ' ')
			keep = n;
	}
	out[keep] = '\0';
	return out;
}

/* A growing byte buffer; @oom set once an allocation failed. */
struct buf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void put(struct buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->cap ? b->cap * 2 : 4096) + n;
		char *p = realloc(b->p, cap);
		if (p == NULL) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void putf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct buf *b, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n > 0)
		put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void put_color(struct buf *b, const VTermColor *c, bool fg)
{
	if (fg ? VTERM_COLOR_IS_DEFAULT_FG(c) : VTERM_COLOR_IS_DEFAULT_BG(c))
		return;
	if (VTERM_COLOR_IS_INDEXED(c))
		putf(b, ";%d;5;%u", fg ? 38 : 48, (unsigned)c->indexed.idx);
	else if (VTERM_COLOR_IS_RGB(c))
		putf(b, ";%d;2;%u;%u;%u", fg ? 38 : 48, (unsigned)c->rgb.red, (unsigned)c->rgb.green,
		     (unsigned)c->rgb.blue);
}

static bool same_pen(const VTermScreenCell *a, const VTermScreenCell *b)
{
	return memcmp(&a->attrs, &b->attrs, sizeof a->attrs) == 0 && vterm_color_is_equal(&a->fg, &b->fg) &&
	       vterm_color_is_equal(&a->bg, &b->bg);
}

char *berth_screen_redraw(const struct berth_screen *s, size_t *len)
{
	struct buf b = {0};
	int rows, cols, cr, cc;
	VTermScreenCell prev;
	bool have_prev = false;
	char u[VTERM_MAX_CHARS_PER_CELL * 4];

	vterm_get_size(s->vt, &rows, &cols);
	put(&b, "\033[0m\033[H\033[2J", 10);
	for (int r = 0; r < rows; r++) {
		putf(&b, "\033[%d;1H", r + 1);
		for (int c = 0; c < cols; c++) {
			VTermScreenCell cell;
			VTermPos pos = {r, c};
			size_t n = 0;

			if (!vterm_screen_get_cell(s->scr, pos, &cell) || cell.chars[0] == (uint32_t)-1)
				continue;
			if (!have_prev || !same_pen(&cell, &prev)) {
				put(&b, "\033[0", 3);
				if (cell.attrs.bold)
					put(&b, ";1", 2);
				if (cell.attrs.italic)
					put(&b, ";3", 2);
				if (cell.attrs.underline)
					put(&b, ";4", 2);
				if (cell.attrs.blink)
					put(&b, ";5", 2);
				if (cell.attrs.reverse)
					put(&b, ";7", 2);
				if (cell.attrs.strike)
					put(&b, ";9", 2);
				put_color(&b, &cell.fg, true);
				put_color(&b, &cell.bg, false);
				put(&b, "m", 1);
				prev = cell;
				have_prev = true;
			}
			if (cell.chars[0] == 0)
				u[n++] = ' ';
			for (int i = 0; i < VTERM_MAX_CHARS_PER_CELL && cell.chars[i] != 0; i++)
				n += put_utf8(u + n, cell.chars[i] < 0x20 ? 0xfffd : cell.chars[i]);
			put(&b, u, n);
		}
	}
	berth_screen_cursor(s, &cr, &cc);
	putf(&b, "\033[0m\033[%d;%dH", cr + 1, cc + 1);
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	*len = b.len;
	return b.p;
}
