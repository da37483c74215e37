/* SPDX-License-Identifier: MIT */
/*
 * outq.c - a queue of protocol lines for a slow peer (outq.h).
 */
#include "outq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

#define OUTQ_FIRST_CAP 65536

/* Room for @need bytes in all: OUTQ_FIRST_CAP at first, then doubling. */
static int reserve(struct berth_outq *q, size_t need)
{
	size_t cap = q->cap ? q->cap : OUTQ_FIRST_CAP;
	char *b;

	while (cap < need)
		cap *= 2;
	if (cap == q->cap)
		return 0;
	b = realloc(q->buf, cap);
	if (b == NULL)
		return -1;
	q->buf = b;
	q->cap = cap;
	return 0;
}

int berth_outq_put(struct berth_outq *q, const char *s, size_t len)
{
	if (reserve(q, q->len + len) < 0)
		return -1;
	memcpy(q->buf + q->len, s, len);
	q->len += len;
	return 0;
}

int berth_outq_put_line(struct berth_outq *q, const char *s, size_t len)
{
	if (reserve(q, q->len + len + 1) < 0)
		return -1;
	memcpy(q->buf + q->len, s, len);
	q->buf[q->len + len] = '\n';
	q->len += len + 1;
	return 0;
}

void berth_outq_consume(struct berth_outq *q, size_t n)
{
	if (n > q->len)
		n = q->len;
	memmove(q->buf, q->buf + n, q->len - n);
	q->len -= n;
}

int berth_outq_send(struct berth_outq *q, int fd)
{
	while (q->len > 0) {
		ssize_t w = send(fd, q->buf, q->len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (w <= 0)
			return -1;
		berth_outq_consume(q, (size_t)w);
	}
	return 0;
}

void berth_outq_free(struct berth_outq *q)
{
	free(q->buf);
	q->buf = NULL;
	q->len = q->cap = 0;
}
