/* SPDX-License-Identifier: MIT */
/*
 * mux.h - the multiplexed streams of the channel (src/vm/proto.h, --network proxy):
 * one local socket per stream id, its bytes relayed as DATA/EOF under the
 * chan's credit, CREDIT returned as they are written, CLOSE when it breaks.
 * The same code on both sides: the guest's end is the connection its
 * sandbox's client made, the host's a socket whose other end the egress
 * broker serves.  Who opens a stream (OPEN, the guest) is the caller's.
 *
 * Single-threaded: every call on one set from one thread (the relay's).
 */
#ifndef BERTH_VM_MUX_H
#define BERTH_VM_MUX_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"
#include "proto.h"

#define BERTH_VM_MUX_MAX 128 /* open at once on one channel */

/* Sends one frame on the channel (the side's writer); 0, or -1 with @err. */
typedef int (*berth_vm_send_fn)(void *arg, uint16_t type, uint16_t chan, const void *p, size_t len,
				struct berth_error *err);

struct berth_vm_mux_stream {
	int fd; /* the local socket, non-blocking; -1: the slot is free */
	uint16_t id;
	struct berth_vm_credit cr;
	unsigned char *out; /* the peer's bytes not written to @fd yet (at most a window) */
	size_t out_len, out_off;
	bool peer_eof;  /* the peer's EOF: @fd is shut for writing once @out is written */
	bool wr_shut;   /* ... and it is */
	bool local_eof; /* @fd's end of file was read, and EOF sent */
};

struct berth_vm_mux {
	struct berth_vm_mux_stream s[BERTH_VM_MUX_MAX];
	size_t n;         /* open */
	uint16_t next_id; /* the next id berth_vm_mux_add() gives */
	berth_vm_send_fn send;
	void *arg;
};

/* berth_vm_mux_init - none open; frames go out through @send(@arg, ...). */
void berth_vm_mux_init(struct berth_vm_mux *ss, berth_vm_send_fn send, void *arg);

/*
 * berth_vm_mux_add - a stream on @fd (owned from here on, also on
 * failure: closed then), made non-blocking.  @id: the peer's (the host, on
 * OPEN), or 0 for a new one (the guest: the next id >= BERTH_VM_STREAM_FIRST
 * not open).  Returns the stream, or NULL with @err: EMFILE (the set is
 * full), EEXIST (@id is open: a malformed OPEN), EINVAL (@id below
 * BERTH_VM_STREAM_FIRST).
 */
struct berth_vm_mux_stream *berth_vm_mux_add(struct berth_vm_mux *ss, int fd, uint16_t id,
					     struct berth_error *err);

/* berth_vm_mux_find - the open stream @id, or NULL. */
struct berth_vm_mux_stream *berth_vm_mux_find(struct berth_vm_mux *ss, uint16_t id);

/* berth_vm_mux_abort - close @st at once (its socket sees a reset when
 * bytes were unread), and tell the peer with CLOSE when @tell. */
void berth_vm_mux_abort(struct berth_vm_mux *ss, struct berth_vm_mux_stream *st, bool tell);

/*
 * berth_vm_mux_frame - @f when it is a stream's (DATA, EOF, CREDIT or
 * CLOSE on a chan >= BERTH_VM_STREAM_FIRST).  A frame of a stream no longer
 * open is dropped (it crossed the CLOSE or the end).  Returns 1 (taken), 0
 * (not a stream's frame), or -1 with @err: the peer broke the protocol
 * (DATA past the credit, a malformed CREDIT, DATA after EOF).
 */
int berth_vm_mux_frame(struct berth_vm_mux *ss, const struct berth_vm_frame *f, struct berth_error *err);

/*
 * berth_vm_mux_poll - one pollfd per open stream into @p (room for
 * BERTH_VM_MUX_MAX), for what it waits for: POLLIN while it has credit
 * and no EOF yet, POLLOUT while the peer's bytes wait.  Returns the count.
 */
size_t berth_vm_mux_poll(struct berth_vm_mux *ss, struct pollfd *p);

/*
 * berth_vm_mux_ready - @n pollfds as berth_vm_mux_poll() filled and
 * poll(2) returned: reads (DATA, EOF), writes (CREDIT), the ends.  Returns
 * 0, or -1 with @err when the channel's writer failed.
 */
int berth_vm_mux_ready(struct berth_vm_mux *ss, const struct pollfd *p, size_t n, struct berth_error *err);

/* berth_vm_mux_close_all - every stream closed (the run's end), no frame sent. */
void berth_vm_mux_close_all(struct berth_vm_mux *ss);

#endif
