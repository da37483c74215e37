/* SPDX-License-Identifier: MIT */
/*
 * lines.h - newline-delimited messages read from a file descriptor, with a
 * bound on the length of one line (docs/protocol.md: 1 MiB).  A longer line
 * is dropped whole (reported once) and reading goes on after its newline:
 * memory never grows beyond the bound.
 */
#ifndef BERTH_LINES_H
#define BERTH_LINES_H

#include <stdbool.h>
#include <stddef.h>

#define BERTH_RPC_MAX_LINE (1024 * 1024) /* bytes, including the newline */

struct berth_lines {
	char *buf;     /* malloc'd, max + 1 bytes */
	size_t len;    /* bytes held */
	size_t max;    /* longest line kept, newline included */
	size_t start;  /* where the next line starts */
	bool dropping; /* inside a line that was too long */
	bool eof;
};

/* berth_lines_init - an empty reader for lines of at most @max bytes.
 * Returns 0, or -1 (ENOMEM). */
int berth_lines_init(struct berth_lines *l, size_t max);

/* berth_lines_free - release @l. */
void berth_lines_free(struct berth_lines *l);

/*
 * berth_lines_fill - one read(2) from @fd into @l.
 * Returns the bytes read (> 0), 0 at end of file (l->eof is set), or -1 with
 * errno (EAGAIN on an empty non-blocking descriptor).
 */
long berth_lines_fill(struct berth_lines *l, int fd);

/*
 * berth_lines_next - the next complete line, without its newline and
 * NUL-terminated, in *@line (valid until the next fill); at end of file a
 * last line without a newline counts too.
 * Returns 1 with a line, 2 when a line longer than the bound was dropped (no
 * line), 0 when no complete line is held.
 */
int berth_lines_next(struct berth_lines *l, char **line, size_t *len);

#endif
