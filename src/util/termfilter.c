/* SPDX-License-Identifier: MIT */
/*
 * termfilter.c - see termfilter.h.  A byte-at-a-time state machine that
 * reads the stream the way xterm's parser does (ECMA-48 with xterm's
 * strings), so that what it passes is read by the terminal as it was read
 * here: the terminal is in its ground state wherever the filter is.
 */

#include "termfilter.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define ESC 0x1b
#define BEL 0x07
#define CAN 0x18
#define SUB 0x1a

enum {
	GROUND,
	IN_ESC,       /* after ESC (held) */
	OSC_NUM,      /* ESC ] and digits (held) */
	CSI_P1,       /* ESC [ and the digits of its first parameter (held as a number) */
	CSI_PASS,     /* the rest of a CSI that is passed */
	CSI_DROP,     /* the rest of a CSI that is dropped */
	STR_KEEP,     /* inside a kept OSC or DCS string */
	STR_KEEP_ESC, /* ESC inside a kept string: ST or the string is broken off */
	STR_DROP,     /* inside a dropped string */
	STR_DROP_ESC,
};

void berth_termfilter_init(struct berth_termfilter *f)
{
	memset(f, 0, sizeof *f);
	f->state = GROUND;
}

/* OSC commands a terminal program may send to the person's terminal (see
 * termfilter.h; numbers from xterm's ctlseqs). */
static bool osc_kept(long n)
{
	return n == 0 || n == 1 || n == 2 || n == 4 || n == 8 || (n >= 10 && n <= 19) || n == 104 ||
	       (n >= 110 && n <= 119) || n == 133;
}

/* OSC commands whose parameter `?` asks the terminal for a report (a
 * colour) rather than setting something. */
static bool osc_can_query(long n)
{
	return n == 4 || (n >= 10 && n <= 19);
}

/* CSI with this first parameter and final byte `t` that make the terminal
 * answer with a string: 20 the icon label, 21 the window title (xterm's
 * window operations).  Anything the host's title holds (a path, a command
 * the person ran) would be typed back into the sandbox. */
static bool csi_report(long p1)
{
	return p1 == 20 || p1 == 21;
}

/* ESC [ and the first parameter held as f->csi_p1 (leading zeros dropped:
 * the terminal reads the number the same) written out. */
static void csi_flush(struct berth_termfilter *f, char *out, size_t *o)
{
	out[(*o)++] = ESC;
	out[(*o)++] = '[';
	if (f->csi_digits)
		*o += (size_t)snprintf(out + *o, 8, "%ld", f->csi_p1);
}

static long osc_number(const struct berth_termfilter *f)
{
	long n = 0;

	for (size_t i = 2; i < f->nheld; i++)
		n = n * 10 + (f->held[i] - '0');
	return f->nheld > 2 ? n : -1;
}

static void put(char *out, size_t *o, const void *p, size_t n)
{
	memcpy(out + *o, p, n);
	*o += n;
}

/*
 * One byte of a UTF-8 sequence (RFC 3629, table 3-7 of Unicode: shortest
 * form, no surrogates, at most U+10FFFF).  Returns true when @b was taken
 * (held, or the sequence it completes written out or dropped), false when
 * @b is not part of a sequence and must be read on its own (an unfinished
 * sequence before it is dropped).
 */
static bool utf8_byte(struct berth_termfilter *f, unsigned char b, char *out, size_t *o)
{
	if (f->n8 > 0) {
		if (b >= f->lo && b <= f->hi) {
			f->u8[f->n8++] = b;
			f->lo = 0x80;
			f->hi = 0xbf;
			if (f->n8 < f->need8)
				return true;
			/* U+0080-U+009F (C2 80 - C2 9F) are C1 controls. */
			if (!(f->u8[0] == 0xc2 && f->u8[1] <= 0x9f)) {
				put(out, o, f->u8, (size_t)f->n8);
				if (f->state == STR_KEEP)
					f->slen += (size_t)f->n8;
			}
			f->n8 = 0;
			return true;
		}
		f->n8 = 0; /* broken off: dropped */
	}
	if (b < 0x80)
		return false;
	f->lo = 0x80;
	f->hi = 0xbf;
	if (b >= 0xc2 && b <= 0xdf)
		f->need8 = 2;
	else if (b >= 0xe0 && b <= 0xef) {
		f->need8 = 3;
		if (b == 0xe0)
			f->lo = 0xa0;
		if (b == 0xed)
			f->hi = 0x9f;
	} else if (b >= 0xf0 && b <= 0xf4) {
		f->need8 = 4;
		if (b == 0xf0)
			f->lo = 0x90;
		if (b == 0xf4)
			f->hi = 0x8f;
	} else {
		return true; /* a stray continuation byte, a raw C1 control, C0, C1, F5-FF: dropped */
	}
	f->u8[0] = b;
	f->n8 = 1;
	return true;
}

static void enter_esc(struct berth_termfilter *f)
{
	f->state = IN_ESC;
	f->held[0] = ESC;
	f->nheld = 1;
}

size_t berth_termfilter_feed(struct berth_termfilter *f, const char *in, size_t len, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char b = (unsigned char)in[i];
	again:
		switch (f->state) {
		case GROUND:
			if (utf8_byte(f, b, out, &o))
				break;
			if (b == ESC)
				enter_esc(f);
			else
				out[o++] = (char)b;
			break;
		case IN_ESC:
			if (b == ']') {
				f->held[f->nheld++] = (char)b;
				f->state = OSC_NUM;
			} else if (b == '[') {
				f->csi_p1 = 0;
				f->csi_digits = false;
				f->state = CSI_P1;
			} else if (b == 'P' || b == 'X' || b == '^' || b == '_') {
				f->state = STR_DROP; /* DCS, SOS, PM, APC */
			} else if (b == ESC) {
				; /* the first ESC is dropped; this one starts again */
			} else if (b == CAN || b == SUB) {
				f->state = GROUND; /* cancels the sequence */
			} else if (b < 0x20) {
				out[o++] = (char)b; /* executed inside the sequence, which goes on */
			} else if (b == 0x7f) {
				; /* ignored there by the terminal */
			} else if (b >= 0x80) {
				f->state = GROUND; /* ESC dropped; the byte read on its own */
				goto again;
			} else {
				/* CSI and every other ESC sequence: what follows is read
				 * by the rules of the ground state, and no byte of a CSI
				 * or an ESC sequence with intermediates starts a string. */
				put(out, &o, f->held, f->nheld);
				out[o++] = (char)b;
				f->state = GROUND;
			}
			break;
		case OSC_NUM:
			if (b >= '0' && b <= '9' && f->nheld < 2 + 6) {
				f->held[f->nheld++] = (char)b;
			} else if ((b == ';' || b == BEL) && osc_kept(osc_number(f))) {
				put(out, &o, f->held, f->nheld);
				out[o++] = (char)b;
				f->osc = true;
				f->oscq = osc_can_query(osc_number(f));
				f->slen = 0;
				f->state = b == ';' ? STR_KEEP : GROUND;
			} else {
				f->state = STR_DROP;
				goto again;
			}
			break;
		case CSI_P1:
			if (b >= '0' && b <= '9') {
				f->csi_p1 = f->csi_p1 * 10 + (b - '0');
				if (f->csi_p1 > 99999)
					f->csi_p1 = 99999;
				f->csi_digits = true;
			} else if (b >= 0x40 && b <= 0x7e) {
				/* the final byte: a report request is dropped whole */
				if (!(b == 't' && f->csi_digits && csi_report(f->csi_p1))) {
					csi_flush(f, out, &o);
					out[o++] = (char)b;
				}
				f->state = GROUND;
			} else if (b >= 0x20 && b <= 0x3f) {
				/* more parameters, a private marker or intermediates:
				 * after 20 or 21 the sequence is dropped whatever its
				 * final byte (CSI 20;x h sets LNM, a mode no program
				 * needs) */
				if (f->csi_digits && csi_report(f->csi_p1)) {
					f->state = CSI_DROP;
				} else {
					csi_flush(f, out, &o);
					out[o++] = (char)b;
					f->state = CSI_PASS;
				}
			} else if (b < 0x20 && b != ESC && b != CAN && b != SUB) {
				out[o++] = (char)b; /* executed inside the sequence, which goes on */
			} else if (b == 0x7f) {
				; /* ignored there by the terminal, which goes on: CSI 2 DEL 1 t is CSI 21 t */
			} else {
				/* ESC, CAN, SUB or a byte >= 0x80 ends the CSI for the
				 * terminal, which drops it: so does the filter */
				f->state = GROUND;
				goto again;
			}
			break;
		case CSI_PASS:
		case CSI_DROP:
			if (b >= 0x20 && b <= 0x7e) {
				if (f->state == CSI_PASS)
					out[o++] = (char)b;
				if (b >= 0x40)
					f->state = GROUND;
			} else if (b < 0x20 && b != ESC && b != CAN && b != SUB) {
				out[o++] = (char)b;
			} else if (b == 0x7f) {
				; /* ignored by the terminal inside the sequence */
			} else {
				/* ESC or a byte >= 0x80 ends the sequence here: CAN
				 * makes sure the terminal ends the part it was sent
				 * too (a dropped ESC must not leave it open). */
				if (f->state == CSI_PASS && b != CAN && b != SUB)
					out[o++] = CAN;
				f->state = GROUND;
				goto again;
			}
			break;
		case STR_KEEP:
			if (f->n8 > 0 || b >= 0x80) {
				if (utf8_byte(f, b, out, &o))
					goto check_len;
			}
			if (b == ESC) {
				f->state = STR_KEEP_ESC;
			} else if (b == '?' && f->oscq) {
				/* a colour report request (OSC 10;? and the like):
				 * CAN makes the terminal drop what was passed of it */
				out[o++] = CAN;
				f->state = STR_DROP;
			} else if (b == BEL && f->osc) {
				out[o++] = (char)b;
				f->state = GROUND;
			} else if (b == CAN || b == SUB) {
				out[o++] = (char)b;
				f->state = GROUND;
			} else if (b >= 0x20 && b < 0x7f) {
				out[o++] = (char)b;
				f->slen++;
			}
		check_len:
			if (f->state == STR_KEEP && f->slen > BERTH_TERMFILTER_STRING_MAX) {
				out[o++] = CAN;
				f->n8 = 0;
				f->state = STR_DROP;
			}
			break;
		case STR_KEEP_ESC:
			if (b == '\\') {
				out[o++] = ESC;
				out[o++] = '\\';
				f->state = GROUND;
			} else {
				/* The terminal would end the string here without running
				 * it; CAN makes sure, and the new sequence is read. */
				out[o++] = CAN;
				enter_esc(f);
				goto again;
			}
			break;
		case STR_DROP:
			if (b == ESC)
				f->state = STR_DROP_ESC;
			else if (b == BEL || b == CAN || b == SUB)
				f->state = GROUND;
			break;
		case STR_DROP_ESC:
			if (b == '\\') {
				f->state = GROUND;
			} else {
				enter_esc(f);
				goto again;
			}
			break;
		default:
			berth_termfilter_init(f);
			break;
		}
	}
	return o;
}
