/* SPDX-License-Identifier: MIT */

#include "lines.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int berth_lines_init(struct berth_lines *l, size_t max)
{
	memset(l, 0, sizeof *l);
	l->max = max;
	l->buf = malloc(max + 1);
	return l->buf == NULL ? -1 : 0;
}

void berth_lines_free(struct berth_lines *l)
{
	free(l->buf);
	memset(l, 0, sizeof *l);
}

long berth_lines_fill(struct berth_lines *l, int fd)
{
	ssize_t n;

	/* Drop what was consumed. */
	if (l->start > 0) {
		memmove(l->buf, l->buf + l->start, l->len - l->start);
		l->len -= l->start;
		l->start = 0;
	}
	if (l->len == l->max) {
		/* A full buffer without a newline: the line is too long. */
		l->dropping = true;
		l->len = 0;
	}
	do
		n = read(fd, l->buf + l->len, l->max - l->len);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		l->eof = true;
	if (n > 0)
		l->len += (size_t)n;
	return (long)n;
}

int berth_lines_next(struct berth_lines *l, char **line, size_t *len)
{
	for (;;) {
		char *p = l->buf + l->start;
		size_t avail = l->len - l->start;
		char *nl = memchr(p, '\n', avail);

		if (nl == NULL) {
			if (l->dropping && l->eof) {
				l->dropping = false;
				l->start = l->len;
				return 2;
			}
			if (l->eof && avail > 0 && !l->dropping) {
				p[avail] = '\0';
				*line = p;
				*len = avail;
				l->start = l->len;
				return 1;
			}
			return 0;
		}
		l->start += (size_t)(nl - p) + 1;
		if (l->dropping) {
			/* The end of a line too long to keep. */
			l->dropping = false;
			return 2;
		}
		*nl = '\0';
		*line = p;
		*len = (size_t)(nl - p);
		return 1;
	}
}
