/* SPDX-License-Identifier: MIT */
/*
 * screen.c - libvterm behind the berth_screen interface.
 */
#include "screen.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vterm.h>

#include "../util/buf.h"

/* The escape-sequence filter in front of libvterm (see berth_screen_feed). */
enum vt_state { VT_GROUND, VT_ESC, VT_CSI, VT_STRING, VT_STRING_ESC };

#define VT_SEQ_MAX 64       /* bytes of one CSI sequence kept */
#define VT_CSI_SEPS_MAX 15  /* `;` and `:` in one CSI sequence (libvterm keeps 16 arguments) */
#define VT_CSI_DIGITS_MAX 6 /* digits of one CSI argument (libvterm's `long` overflows past 18) */
#define VT_STRING_MAX 4096  /* bytes of one OSC or DCS string */

struct berth_screen {
	VTerm *vt;
	VTermScreen *scr;
	void (*reply)(const char *buf, size_t len, void *user);
	void *user;
	enum vt_state st;
	bool drop; /* the sequence being read is dropped whole */
	int seps;
	int digits;              /* of the current CSI argument */
	bool cursor_visible;     /* DECTCEM, as libvterm reports it */
	bool probing, probe_out; /* berth_screen_bracketed_paste: libvterm's output is caught, not replied */
	unsigned char u8[4];     /* an incomplete UTF-8 sequence at the end of the last text */
	size_t u8_len, u8_need;
	char last[8]; /* the last graphic character of the text (UTF-8), for REP */
	size_t last_len, last_fill;
	size_t seq_len;
	char seq[VT_STRING_MAX + 4];
};

static void on_output(const char *s, size_t len, void *user)
{
	struct berth_screen *sc = user;

	if (sc->probing) {
		sc->probe_out = len > 0;
		return;
	}
	if (sc->reply != NULL)
		sc->reply(s, len, sc->user);
}

static int on_termprop(VTermProp prop, VTermValue *val, void *user)
{
	struct berth_screen *s = user;

	if (prop == VTERM_PROP_CURSORVISIBLE)
		s->cursor_visible = val->boolean;
	return 1;
}

static const VTermScreenCallbacks screen_cbs = {.settermprop = on_termprop};

/* A fresh VTerm of @rows x @cols. */
static int open_vt(struct berth_screen *s, int rows, int cols)
{
	VTerm *vt = vterm_new(rows, cols);

	if (vt == NULL)
		return -1;
	if (s->vt != NULL)
		vterm_free(s->vt);
	s->vt = vt;
	vterm_set_utf8(s->vt, 1);
	vterm_output_set_callback(s->vt, on_output, s);
	s->scr = vterm_obtain_screen(s->vt);
	vterm_screen_set_callbacks(s->scr, &screen_cbs, s);
	vterm_screen_enable_altscreen(s->scr, 1);
	s->cursor_visible = true;
	vterm_screen_reset(s->scr, 1);
	return 0;
}

struct berth_screen *berth_screen_new(int rows, int cols,
				      void (*reply)(const char *buf, size_t len, void *user), void *user,
				      struct berth_error *err)
{
	struct berth_screen *s;

	if (rows < 1 || rows > 1000 || cols < 1 || cols > 1000)
		return berth_err(err, EINVAL, "invalid screen size %dx%d", rows, cols), NULL;
	s = calloc(1, sizeof *s);
	if (s == NULL || open_vt(s, rows, cols) < 0) {
		free(s);
		return berth_err(err, ENOMEM, "out of memory"), NULL;
	}
	s->reply = reply;
	s->user = user;
	return s;
}

void berth_screen_free(struct berth_screen *s)
{
	if (s == NULL)
		return;
	vterm_free(s->vt);
	free(s);
}

/* Emit one character of plain text (@len bytes of valid UTF-8) and
 * remember it for REP when it is a graphic one. */
static void emit_char(struct berth_screen *s, const char *c, size_t len, char *out, size_t *n, size_t cap)
{
	if (*n + len > cap) {
		vterm_input_write(s->vt, out, *n);
		*n = 0;
	}
	memcpy(out + *n, c, len);
	*n += len;
	if (len > 1 || ((unsigned char)c[0] >= 0x20 && (unsigned char)c[0] != 0x7f)) {
		memcpy(s->last, c, len);
		s->last_len = s->last_fill = len;
	}
}

/*
 * Plain text reaches libvterm as valid UTF-8 of graphic characters and C0
 * controls only: malformed and overlong sequences, surrogates and C1
 * controls (U+0080..U+009F) become U+FFFD.  libvterm 0.1.4 crashes on a
 * few UTF-8-encoded C1 controls followed by an erase (fuzz/fuzz_session.c).
 * A sequence cut by the end of @buf is completed by the next call.
 */
static void text(struct berth_screen *s, const char *buf, size_t len)
{
	static const char fffd[] = "\xef\xbf\xbd";
	char out[4096];
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (s->u8_need > 0) {
			if ((c & 0xc0) == 0x80) {
				s->u8[s->u8_len++] = c;
				if (s->u8_len < s->u8_need)
					continue;
				uint32_t cp = s->u8_need == 2
						  ? (uint32_t)(s->u8[0] & 0x1f) << 6 | (s->u8[1] & 0x3f)
					      : s->u8_need == 3
						  ? (uint32_t)(s->u8[0] & 0x0f) << 12 |
							(uint32_t)(s->u8[1] & 0x3f) << 6 | (s->u8[2] & 0x3f)
						  : (uint32_t)(s->u8[0] & 0x07) << 18 |
							(uint32_t)(s->u8[1] & 0x3f) << 12 |
							(uint32_t)(s->u8[2] & 0x3f) << 6 | (s->u8[3] & 0x3f);
				static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
				bool ok = cp >= min[s->u8_need] && cp <= 0x10ffff &&
					  !(cp >= 0xd800 && cp < 0xe000) && !(cp >= 0x80 && cp < 0xa0);
				if (ok)
					emit_char(s, (const char *)s->u8, s->u8_len, out, &n, sizeof out);
				else
					emit_char(s, fffd, 3, out, &n, sizeof out);
				s->u8_need = s->u8_len = 0;
				continue;
			}
			/* cut short: a replacement, and this byte starts afresh */
			emit_char(s, fffd, 3, out, &n, sizeof out);
			s->u8_need = s->u8_len = 0;
		}
		if (c < 0x80) {
			emit_char(s, (const char *)&c, 1, out, &n, sizeof out);
		} else if (c >= 0xc2 && c <= 0xf4) {
			s->u8[0] = c;
			s->u8_len = 1;
			s->u8_need = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
		} else {
			emit_char(s, fffd, 3, out, &n, sizeof out);
		}
	}
	if (n > 0)
		vterm_input_write(s->vt, out, n);
}

/*
 * REP (CSI Pn b, ECMA-48 8.3.103) is done here, as the text it stands for:
 * libvterm 0.1.4 loops forever on a REP before any character was printed
 * and reads freed memory on a REP of a wide character after a resize (both
 * found by fuzz/fuzz_session.c).  At most a screenful.
 */
static void rep(struct berth_screen *s)
{
	int rows, cols;
	unsigned long n = 0;

	for (size_t i = 2; i + 1 < s->seq_len; i++) {
		if (s->seq[i] < '0' || s->seq[i] > '9')
			return; /* a private or multi-argument form: dropped */
		n = n * 10 + (unsigned long)(s->seq[i] - '0');
		if (n > 1000000)
			n = 1000000;
	}
	if (s->last_fill == 0 || s->last_fill != s->last_len)
		return;
	vterm_get_size(s->vt, &rows, &cols);
	if (n == 0)
		n = 1;
	if (n > (unsigned long)rows * (unsigned long)cols)
		n = (unsigned long)rows * (unsigned long)cols;
	char chunk[512];
	size_t k = 0;
	while (n > 0) {
		memcpy(chunk + k, s->last, s->last_len);
		k += s->last_len;
		n--;
		if (k + s->last_len > sizeof chunk || n == 0) {
			vterm_input_write(s->vt, chunk, k);
			k = 0;
		}
	}
}

/*
 * DECSET/DECRST with several modes (CSI ? 1049 ; 2004 h): libvterm 0.1.4
 * sets only the first, xterm all of them; each mode goes to libvterm as a
 * sequence of its own.  Returns false for any other sequence.
 */
static bool dec_modes(struct berth_screen *s)
{
	char one[16];
	size_t i = 3, start;
	char fin = s->seq[s->seq_len - 1];

	if (s->seq_len < 6 || s->seq[2] != '?' || (fin != 'h' && fin != 'l') ||
	    memchr(s->seq, ';', s->seq_len) == NULL)
		return false;
	for (size_t k = 3; k + 1 < s->seq_len; k++)
		if (!(s->seq[k] >= '0' && s->seq[k] <= '9') && s->seq[k] != ';')
			return false;
	while (i + 1 < s->seq_len) {
		for (start = i; i + 1 < s->seq_len && s->seq[i] != ';'; i++)
			;
		if (i > start) {
			/* at most VT_CSI_DIGITS_MAX digits: longer sequences were dropped */
			int n =
			    snprintf(one, sizeof one, "\033[?%.*s%c", (int)(i - start), s->seq + start, fin);
			if (n > 0 && (size_t)n < sizeof one)
				vterm_input_write(s->vt, one, (size_t)n);
		}
		i++; /* the `;` */
	}
	return true;
}

/* Hand a finished sequence to libvterm, unless it was dropped. */
static void seq_end(struct berth_screen *s)
{
	if (!s->drop && s->seq_len >= 3 && s->seq[1] == '[' && s->seq[s->seq_len - 1] == 'b')
		rep(s);
	else if (!s->drop && s->seq[1] == '[' && dec_modes(s))
		;
	else if (!s->drop)
		vterm_input_write(s->vt, s->seq, s->seq_len);
	s->seq_len = 0;
	s->drop = false;
	s->seps = 0;
	s->digits = 0;
	s->st = VT_GROUND;
}

static void seq_add(struct berth_screen *s, char c, size_t max)
{
	if (s->seq_len < max)
		s->seq[s->seq_len++] = c;
	else
		s->drop = true;
}

/*
 * Every byte of agent output reaches libvterm through this filter: plain
 * text and control characters as they come, escape sequences only whole and
 * only within bounds.  libvterm 0.1.4 (Debian 12) writes out of bounds on a
 * CSI sequence with many `:`/`;` separators (found by fuzz/fuzz_session.c):
 * the agent is on the other side of the sandbox boundary, the supervisor is
 * not, so a sequence with more separators than libvterm keeps arguments, an
 * argument of more than 6 digits (libvterm's arithmetic overflows), a CSI
 * longer than 64 bytes or a string longer than 4 KiB is dropped whole.
 */
void berth_screen_feed(struct berth_screen *s, const char *buf, size_t len)
{
	size_t run = 0; /* start of the pending plain text */

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (s->st != VT_GROUND && (c == 0x18 || c == 0x1a)) {
			/* CAN and SUB cancel a sequence (libvterm returns to its
			 * normal state): dropped whole, and the control too. */
			s->drop = true;
			seq_end(s);
			run = i + 1;
			continue;
		}
		switch (s->st) {
		case VT_GROUND:
			if (c != 0x1b)
				continue;
			if (i > run)
				text(s, buf + run, i - run);
			if (s->u8_need > 0) {
				s->u8_need = s->u8_len = 0;
				vterm_input_write(s->vt, "\xef\xbf\xbd", 3);
			}
			s->seq_len = 0;
			s->drop = false;
			s->seps = 0;
			s->digits = 0;
			s->seq[s->seq_len++] = (char)c;
			s->st = VT_ESC;
			break;
		case VT_ESC:
			if (c == 0x1b) { /* ESC ESC: the first one is dropped */
				s->seq_len = 1;
				s->drop = false;
				break;
			}
			if (c < 0x20 || c == 0x7f) {
				/* Controls inside an escape sequence act at once; the
				 * sequence goes on (ECMA-48).  libvterm has not seen the
				 * ESC yet: it runs the control, the filter keeps the ESC. */
				char cc = (char)c;
				vterm_input_write(s->vt, &cc, 1);
				break;
			}
			if (c >= 0x80) {
				/* Not an escape sequence: the ESC is dropped, the byte is
				 * text (libvterm would otherwise stay in its escape state
				 * and read what follows as a sequence the filter never saw). */
				s->seq_len = 0;
				s->st = VT_GROUND;
				run = i;
				continue;
			}
			if (c >= 0x20 && c <= 0x2f) {
				/* An intermediate (ESC ( B and the like); libvterm takes
				 * any number of them, the filter keeps 4 and drops longer
				 * sequences whole. */
				seq_add(s, (char)c, 6);
				break;
			}
			seq_add(s, (char)c, 7);
			/* libvterm starts a CSI or a string at these bytes also
			 * after intermediates; such a sequence is no standard one and
			 * is read to its end and dropped. */
			if (c == '[') {
				s->drop = s->drop || s->seq_len > 2;
				s->st = VT_CSI;
			} else if (c == ']' || c == 'P') {
				/* OSC and DCS: the only strings libvterm 0.1.4 knows */
				s->drop = s->drop || s->seq_len > 2;
				s->st = VT_STRING;
			} else if (c == 'X' || c == '^' || c == '_') {
				/* SOS, PM, APC: libvterm takes them for C1 controls and
				 * what follows for text; dropped, and what follows is
				 * text here too. */
				s->drop = true;
				seq_end(s);
			} else {
				seq_end(s);
			}
			break;
		case VT_CSI:
			if (c == 0x1b) { /* a new sequence cancels this one */
				s->drop = true;
				seq_end(s);
				s->seq[s->seq_len++] = (char)c;
				s->st = VT_ESC;
			} else if (c < 0x20 || c == 0x7f) {
				/* Controls inside a CSI act at once (ECMA-48); pass them on. */
				char cc = (char)c;
				vterm_input_write(s->vt, &cc, 1);
			} else {
				if (c == ';' || c == ':') {
					s->digits = 0;
					if (++s->seps > VT_CSI_SEPS_MAX)
						s->drop = true;
				} else if (c >= '0' && c <= '9' && ++s->digits > VT_CSI_DIGITS_MAX) {
					s->drop = true;
				}
				seq_add(s, (char)c, VT_SEQ_MAX);
				if (c >= 0x40 && c <= 0x7e)
					seq_end(s);
				else if (c > 0x7e)
					s->drop = true; /* not a CSI byte: drop until a final byte */
			}
			break;
		case VT_STRING:
			seq_add(s, (char)c, VT_STRING_MAX);
			if (c == 0x07)
				seq_end(s);
			else if (c == 0x1b)
				s->st = VT_STRING_ESC;
			break;
		case VT_STRING_ESC:
			seq_add(s, (char)c, VT_STRING_MAX + 2);
			if (c == '\\') {
				seq_end(s);
			} else {
				/* ESC not followed by `\`: the string ends (dropped), a
				 * new sequence starts with this ESC. */
				s->drop = true;
				seq_end(s);
				s->seq[s->seq_len++] = 0x1b;
				s->st = VT_ESC;
				i--;
				run = i + 1;
				continue;
			}
			break;
		default:
			s->st = VT_GROUND;
			break;
		}
		run = i + 1;
	}
	if (s->st == VT_GROUND && run < len)
		text(s, buf + run, len - run);
}

/*
 * A new size is a new, empty screen: libvterm 0.1.4's own resize reflows
 * wide characters into freed memory (fuzz/fuzz_session.c found several
 * ways), and a program redraws its whole screen on the SIGWINCH the new
 * window size brings anyway.  The filter's state carries over.
 */
void berth_screen_resize(struct berth_screen *s, int rows, int cols)
{
	int r0, c0;

	if (rows < 1 || cols < 1 || rows > 1000 || cols > 1000)
		return;
	vterm_get_size(s->vt, &r0, &c0);
	if (r0 == rows && c0 == cols)
		return;
	open_vt(s, rows, cols);
}

void berth_screen_size(const struct berth_screen *s, int *rows, int *cols)
{
	vterm_get_size(s->vt, rows, cols);
}

bool berth_screen_cursor_visible(const struct berth_screen *s)
{
	return s->cursor_visible;
}

/*
 * libvterm 0.1.4 keeps DECSET 2004 in its state but has no getter for it:
 * vterm_keyboard_start_paste() writes ESC [ 200 ~ through the output
 * callback exactly when the mode is on, so it is asked that way, with the
 * callback catching the bytes instead of sending them to the program.
 */
bool berth_screen_bracketed_paste(struct berth_screen *s)
{
	s->probing = true;
	s->probe_out = false;
	vterm_keyboard_start_paste(s->vt);
	vterm_keyboard_end_paste(s->vt);
	s->probing = false;
	return s->probe_out;
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

/*
 * Characters that must not reach the caller's terminal through `berth peek`
 * (or a classifier pattern): C0 and C1 controls and DEL, and the Unicode
 * bidirectional controls (U+061C, U+200E, U+200F, U+202A-U+202E,
 * U+2066-U+2069; Unicode UAX #9), with which an agent could make text on the
 * caller's screen read in another order than it is ("Trojan Source").
 */
static bool unsafe_char(uint32_t c)
{
	return c < 0x20 || (c >= 0x7f && c < 0xa0) || c == 0x061c || c == 0x200e || c == 0x200f ||
	       (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

uint64_t berth_screen_digest(const struct berth_screen *s)
{
	uint64_t h = 14695981039346656037ull; /* FNV-1a */
	int rows, cols;
	VTermPos cur;
	VTermRect all = {.start_row = 0, .start_col = 0};
	static char text[1000 * VTERM_MAX_CHARS_PER_CELL * 4 + 1];
	size_t n;

	vterm_get_size(s->vt, &rows, &cols);
	all.end_row = rows;
	all.end_col = cols;
	n = vterm_screen_get_text(s->scr, text, sizeof text - 1, all);
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)text[i]) * 1099511628211ull;
	vterm_state_get_cursorpos(vterm_obtain_state(s->vt), &cur);
	h = (h ^ (uint64_t)(unsigned)cur.row) * 1099511628211ull;
	h = (h ^ (uint64_t)(unsigned)cur.col) * 1099511628211ull;
	return h ^ (s->cursor_visible ? 1u : 0u);
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
				n += put_utf8(out + n, unsafe_char(cell.chars[i]) ? 0xfffd : cell.chars[i]);
		}
		if (cell.chars[0] != 0 && cell.chars[0] != ' ')
			keep = n;
	}
	out[keep] = '\0';
	return out;
}

static void put_color(struct berth_buf *b, const VTermColor *c, bool fg)
{
	if (fg ? VTERM_COLOR_IS_DEFAULT_FG(c) : VTERM_COLOR_IS_DEFAULT_BG(c))
		return;
	if (VTERM_COLOR_IS_INDEXED(c))
		berth_buf_putf(b, ";%d;5;%u", fg ? 38 : 48, (unsigned)c->indexed.idx);
	else if (VTERM_COLOR_IS_RGB(c))
		berth_buf_putf(b, ";%d;2;%u;%u;%u", fg ? 38 : 48, (unsigned)c->rgb.red,
			       (unsigned)c->rgb.green, (unsigned)c->rgb.blue);
}

/* The SGR sequence of @c's pen: a reset, its attributes, its colours. */
static void put_pen(struct berth_buf *b, const VTermScreenCell *c)
{
	const struct {
		bool on;
		const char *sgr;
	} attrs[] = {{c->attrs.bold, ";1"},  {c->attrs.italic, ";3"},  {c->attrs.underline != 0, ";4"},
		     {c->attrs.blink, ";5"}, {c->attrs.reverse, ";7"}, {c->attrs.strike, ";9"}};

	berth_buf_put(b, "\033[0", 3);
	for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
		if (attrs[i].on)
			berth_buf_put(b, attrs[i].sgr, 2);
	put_color(b, &c->fg, true);
	put_color(b, &c->bg, false);
	berth_buf_put(b, "m", 1);
}

static bool same_pen(const VTermScreenCell *a, const VTermScreenCell *b)
{
	return memcmp(&a->attrs, &b->attrs, sizeof a->attrs) == 0 && vterm_color_is_equal(&a->fg, &b->fg) &&
	       vterm_color_is_equal(&a->bg, &b->bg);
}

char *berth_screen_redraw(const struct berth_screen *s, size_t *len)
{
	struct berth_buf b = {0};
	int rows, cols, cr, cc;
	VTermScreenCell prev;
	bool have_prev = false;
	char u[VTERM_MAX_CHARS_PER_CELL * 4];

	vterm_get_size(s->vt, &rows, &cols);
	berth_buf_put(&b, "\033[0m\033[H\033[2J", 10);
	for (int r = 0; r < rows; r++) {
		berth_buf_putf(&b, "\033[%d;1H", r + 1);
		for (int c = 0; c < cols; c++) {
			VTermScreenCell cell;
			VTermPos pos = {r, c};
			size_t n = 0;

			if (!vterm_screen_get_cell(s->scr, pos, &cell) || cell.chars[0] == (uint32_t)-1)
				continue;
			if (!have_prev || !same_pen(&cell, &prev)) {
				put_pen(&b, &cell);
				prev = cell;
				have_prev = true;
			}
			if (cell.chars[0] == 0)
				u[n++] = ' ';
			for (int i = 0; i < VTERM_MAX_CHARS_PER_CELL && cell.chars[i] != 0; i++)
				n += put_utf8(u + n, cell.chars[i] < 0x20 ? 0xfffd : cell.chars[i]);
			berth_buf_put(&b, u, n);
		}
	}
	berth_screen_cursor(s, &cr, &cc);
	berth_buf_putf(&b, "\033[0m\033[%d;%dH", cr + 1, cc + 1);
	if (b.oom) {
		berth_buf_free(&b);
		return NULL;
	}
	*len = b.len;
	return b.p;
}
