/* SPDX-License-Identifier: MIT */
/*
 * screen.h - a session's rendered terminal screen: the agent's output fed
 * into libvterm (the terminal emulation is libvterm's; berth only asks it for
 * the cells).
 */
#ifndef BERTH_SESSION_SCREEN_H
#define BERTH_SESSION_SCREEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"

struct berth_screen;

/*
 * berth_screen_new - an empty @rows x @cols screen (1..1000 each).
 * @reply: called with the bytes the terminal answers to queries (cursor
 * position reports, device attributes) so the program can be answered
 * through its pty; may be NULL.
 * Returns the screen, or NULL with @err filled (ENOMEM, EINVAL).
 */
struct berth_screen *berth_screen_new(int rows, int cols,
				      void (*reply)(const char *buf, size_t len, void *user), void *user,
				      struct berth_error *err);

/* berth_screen_free - release @s.  Safe on NULL. */
void berth_screen_free(struct berth_screen *s);

/* berth_screen_feed - interpret @len bytes of program output. */
void berth_screen_feed(struct berth_screen *s, const char *buf, size_t len);

/* berth_screen_resize - change the size (content reflowed by libvterm). */
void berth_screen_resize(struct berth_screen *s, int rows, int cols);

/* berth_screen_size - the current size. */
void berth_screen_size(const struct berth_screen *s, int *rows, int *cols);

/* berth_screen_cursor - the cursor's row and column (0-based). */
void berth_screen_cursor(const struct berth_screen *s, int *row, int *col);

/* berth_screen_cursor_visible - false while the program hides the cursor
 * (DECTCEM, CSI ? 25 l). */
bool berth_screen_cursor_visible(const struct berth_screen *s);

/*
 * berth_screen_bracketed_paste - whether the program switched bracketed
 * paste on (DECSET 2004, CSI ? 2004 h) and not off again (or reset the
 * terminal since): then text it is sent as a paste should come between
 * ESC [ 200 ~ and ESC [ 201 ~.  Writes nothing to the program.
 */
bool berth_screen_bracketed_paste(struct berth_screen *s);

/*
 * berth_screen_digest - a 64-bit digest (FNV-1a) of what the screen shows:
 * its text, the cursor's place and whether it is visible; colours and
 * attributes are left out.  Equal digests: nothing a reader can see changed
 * (a program that repaints the same frame, or only animates colours, has not
 * changed its screen).  Not thread-safe (one static buffer).
 */
uint64_t berth_screen_digest(const struct berth_screen *s);

/*
 * berth_screen_line - row @row (0-based) as UTF-8 plain text, trailing
 * blanks removed, no escape codes.  Returns a malloc'd string, or NULL on
 * ENOMEM or a row out of range.
 */
char *berth_screen_line(const struct berth_screen *s, int row);

/*
 * berth_screen_redraw - the whole screen as a byte string that draws it on
 * an ANSI/xterm terminal of the same size: clear, every cell with its
 * colours and attributes, then the cursor.  Returns a malloc'd buffer (its
 * length in *@len), or NULL on ENOMEM.
 */
char *berth_screen_redraw(const struct berth_screen *s, size_t *len);

#endif
