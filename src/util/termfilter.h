/* SPDX-License-Identifier: MIT */
/*
 * termfilter.h - a sandboxed program's output made safe for the person's own
 * terminal (`berth attach`, `berth logs` on a terminal, `berth run`'s pty
 * relay).
 *
 * The agent runs in the sandbox and is not trusted; so is its output.  Passed
 * through raw, it talks to the terminal emulator of the person who attaches,
 * outside the sandbox: OSC 52 writes the host's clipboard (a command waiting
 * to be pasted into a host shell), a DCS `tmux;` string is handed by tmux to
 * the terminal around it, kitty's graphics APC with `t=f` makes the terminal
 * open a host file by name (and answer whether it exists), OSC 1337 and
 * OSC 5113 transfer files, OSC 9/99/777 raise desktop notifications, OSC 7
 * names a host directory where the terminal opens its next tab.
 *
 * The filter keeps what a terminal program needs to draw: text, C0 controls,
 * CSI and the other ESC sequences, and these OSC commands (numbers from
 * xterm's ctlseqs): 0-2 (title), 4 and 104 (palette), 8 (hyperlink), 10-19
 * and 110-119 (dynamic colours), 133 (prompt marks).
 * It drops the requests that make the terminal answer with a string, since
 * the answer is typed into the sandbox and may carry what the host put
 * there (a title naming a host path or command, the clipboard, a colour
 * scheme that fingerprints the person): CSI 20 t and CSI 21 t (icon label
 * and title reports), a `?` in OSC 4 and 10-19 (colour reports; the string
 * is ended with CAN there), and every DCS (DECRQSS `$q`, XTGETTCAP `+q`,
 * tmux passthrough, sixel).  Reports of numbers the sandbox drew itself pass:
 * CSI 6 n (cursor position), CSI c (device attributes), DECRQM.
 * It drops every other OSC, SOS, PM and
 * APC strings, and C1 controls in either form (a raw byte 0x80-0x9f that is
 * not inside a UTF-8 sequence, or U+0080-U+009F encoded as UTF-8): xterm in
 * UTF-8 mode reads U+009D as OSC and U+009B as CSI.  Bytes that are not
 * UTF-8 (RFC 3629: shortest form, no surrogates) are dropped.  Inside a kept
 * OSC or DCS string only printable text passes; a string longer than
 * BERTH_TERMFILTER_STRING_MAX bytes, or one broken off by another ESC
 * sequence, is ended with CAN so that the terminal discards it.  C0 controls
 * inside an escape sequence are passed (a terminal executes them there and
 * goes on with the sequence, ECMA-48 and xterm alike).
 *
 * The state carries over from one call to the next: a sequence may be split
 * anywhere between reads.
 */
#ifndef BERTH_UTIL_TERMFILTER_H
#define BERTH_UTIL_TERMFILTER_H

#include <stdbool.h>
#include <stddef.h>

#define BERTH_TERMFILTER_STRING_MAX 4096 /* bytes of one kept OSC or DCS string */
/* Bytes a call may write beyond its input's length: what it held back from
 * the previous call (at most an OSC number or a DCS head, or a UTF-8
 * sequence) and a CAN. */
#define BERTH_TERMFILTER_SLACK 32

struct berth_termfilter {
	int state;
	char held[12]; /* the start of an escape sequence not yet decided */
	size_t nheld;
	unsigned char u8[4];  /* a UTF-8 sequence not yet complete */
	int n8, need8;        /* its bytes so far, and in all */
	unsigned char lo, hi; /* the range of its next byte */
	size_t slen;          /* bytes of the kept OSC or DCS string so far */
	bool osc;             /* the kept string is an OSC (else a DCS) */
	bool oscq;            /* the kept OSC may be a colour query (4, 10-19) */
	long csi_p1;          /* the first parameter of a CSI being read */
	bool csi_digits;      /* ... and whether it had any digit */
};

/* berth_termfilter_init - the state at the start of a stream (ground). */
void berth_termfilter_init(struct berth_termfilter *f);

/*
 * berth_termfilter_feed - filter @len bytes of output @in into @out, which
 * must hold @len + BERTH_TERMFILTER_SLACK bytes (@in and @out must not
 * overlap).  Returns the number of bytes written to @out (possibly 0: the
 * bytes were dropped or are held until a later call decides them).
 */
size_t berth_termfilter_feed(struct berth_termfilter *f, const char *in, size_t len, char *out);

#endif
