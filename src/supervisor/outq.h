/* SPDX-License-Identifier: MIT */
/*
 * outq.h - a queue of protocol lines for a peer that may read slowly: the
 * JSON-RPC answers `berth dev` owes its clients, what `berth mcp` owes its
 * client (stdout) and sends a `berth dev`, and the requests berth sends a
 * resident app (app_call.c).  Lines are queued whole and
 * written as the peer takes them, so that a peer that stops reading never
 * stalls the loop.
 */
#ifndef BERTH_SUPERVISOR_OUTQ_H
#define BERTH_SUPERVISOR_OUTQ_H

#include <stddef.h>

struct berth_outq {
	char *buf; /* bytes not written yet */
	size_t len, cap;
};

/*
 * berth_outq_put - append @len bytes of @s to @q as they are (its buffer
 * grows from 64 KiB, doubling).  Returns 0, or -1 when out of memory (@q
 * unchanged).
 */
int berth_outq_put(struct berth_outq *q, const char *s, size_t len);

/*
 * berth_outq_put_line - append @len bytes of @s and a newline to @q (its
 * buffer grows from 64 KiB, doubling).  Returns 0, or -1 when out of memory
 * (@q unchanged).
 */
int berth_outq_put_line(struct berth_outq *q, const char *s, size_t len);

/* berth_outq_consume - drop the first @n (at most @q->len) bytes, written. */
void berth_outq_consume(struct berth_outq *q, size_t n);

/*
 * berth_outq_send - send(2) to the socket @fd what it takes now, never
 * blocking and never raising SIGPIPE.  Returns 0 when the queue is empty or
 * the socket would block (EAGAIN, EINTR: the rest waits), -1 when the peer is
 * gone (another error, or nothing written).
 */
int berth_outq_send(struct berth_outq *q, int fd);

/* berth_outq_free - release @q's buffer; @q is an empty queue again. */
void berth_outq_free(struct berth_outq *q);

#endif
