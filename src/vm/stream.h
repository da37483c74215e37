/* SPDX-License-Identifier: MIT */
/*
 * stream.h - one byte stream between a local socket and a channel of the
 * microVM protocol (src/vm/proto.h), as DATA and EOF frames on one chan:
 * the resident app's RPC channel (BERTH_VM_RPC), on both sides of it.  On
 * the host the local socket is the app supervisor's end (the runtime's
 * opts.rpc_fd, src/runtime/runtime.h); in the guest (berth-vminit) it is
 * one end of the socketpair whose other end is the command's fd 3.
 *
 * Both directions:
 *   local -> channel  berth_vm_stream_pump(): one read(2) of the socket, one
 *                     DATA frame (at most BERTH_VM_PAYLOAD_MAX bytes); at
 *                     its end of file one EOF frame, once.
 *   channel -> local  berth_vm_stream_data() queues a DATA frame's bytes,
 *                     berth_vm_stream_flush() writes what the socket takes
 *                     (never blocking); after the channel's EOF
 *                     (berth_vm_stream_eof()) and the last byte, the
 *                     socket's write side is shut (the reader's end of file).
 *
 * The bytes queued for the socket are the only buffer, and it is bounded:
 * the side that reads the channel stops reading it while
 * berth_vm_stream_full() (so a frame is taken only when it fits), and the
 * channel's own back-pressure does the rest.  A per-channel credit scheme,
 * if the protocol gets one, replaces berth_vm_stream_full() and nothing else.
 * A socket whose reader is gone (EPIPE, ECONNRESET) drops what is queued and
 * what comes later, as a closed pipe would.
 */
#ifndef BERTH_VM_STREAM_H
#define BERTH_VM_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"

/* Bytes queued for the socket above which the channel is not read: one
 * whole app message (docs/protocol.md: 1 MiB) fits. */
#define BERTH_VM_STREAM_HIGH (1u << 20)
/* At most this many are ever queued: the high mark and one frame. */
#define BERTH_VM_STREAM_MAX (BERTH_VM_STREAM_HIGH + 65536u)

struct berth_vm_stream {
	int fd;             /* the local socket, owned (read and written MSG_DONTWAIT); -1 none or closed */
	uint16_t chan;      /* its channel (enum berth_vm_chan) */
	bool rd_eof;        /* the socket's read side ended: EOF was sent on the channel */
	bool peer_eof;      /* the channel's EOF came: shut the write side once flushed */
	bool wr_shut;       /* the write side is shut (or its reader gone) */
	bool wr_gone;       /* its reader is gone: bytes are dropped */
	unsigned char *buf; /* queued for the socket: buf[off..len) */
	size_t len, off;
};

/* berth_vm_stream_init - @s for @fd (owned from now on; -1: none) on @chan. */
void berth_vm_stream_init(struct berth_vm_stream *s, int fd, uint16_t chan);

/* berth_vm_stream_active - whether @s has a socket. */
bool berth_vm_stream_active(const struct berth_vm_stream *s);

/* berth_vm_stream_pending - the bytes queued for the socket. */
size_t berth_vm_stream_pending(const struct berth_vm_stream *s);

/* berth_vm_stream_full - whether the channel must not be read now. */
bool berth_vm_stream_full(const struct berth_vm_stream *s);

/* berth_vm_stream_events - the poll(2) events to wait for on @s->fd
 * (POLLIN until its end of file, POLLOUT while bytes are queued); 0 none. */
short berth_vm_stream_events(const struct berth_vm_stream *s);

/*
 * berth_vm_stream_data - @n bytes of a DATA frame for the socket: queued,
 * then flushed as far as it takes them.  Returns 0 (the bytes dropped when
 * the socket's reader is gone or there is no socket), or -1 with @err
 * filled (status 125): DATA after the channel's EOF, or more than
 * BERTH_VM_STREAM_MAX bytes queued (a peer that ignored the back-pressure,
 * ENOBUFS), or out of memory.
 */
int berth_vm_stream_data(struct berth_vm_stream *s, const void *p, size_t n, struct berth_error *err);

/* berth_vm_stream_eof - the channel's EOF: the socket's write side is shut
 * once what is queued is written (now, when nothing is). */
void berth_vm_stream_eof(struct berth_vm_stream *s);

/*
 * berth_vm_stream_flush - write what is queued, as far as the socket takes
 * it without blocking; shut its write side after the channel's EOF and the
 * last byte.  Returns 0, or -1 with @err filled on a write error other than
 * EAGAIN, EPIPE and ECONNRESET (the last two: the reader is gone, the bytes
 * dropped).
 */
int berth_vm_stream_flush(struct berth_vm_stream *s, struct berth_error *err);

/*
 * berth_vm_stream_pump - one read(2) of the socket, sent on @chan_fd as
 * DATA; at its end of file (or a read error: ECONNRESET...) EOF, once.
 * Returns 0 (also when the read would block), or -1 with @err filled when
 * the channel cannot be written (berth_vm_write).
 */
int berth_vm_stream_pump(struct berth_vm_stream *s, int chan_fd, struct berth_error *err);

/* berth_vm_stream_close - close the socket (its peer sees its end) and
 * free what is queued.  Safe twice. */
void berth_vm_stream_close(struct berth_vm_stream *s);

#endif
