/* SPDX-License-Identifier: MIT */
/*
 * proto.h - the one framed protocol between berth (the host supervisor) and
 * berth-vminit (pid 1 of a microVM guest), over one virtio-serial port (a
 * vsock stream where the host has one): the run's configuration, the
 * command's stdio, signals, its measurement and its exit (docs/vm.md,
 * "The channel").
 *
 * A frame is a 12-byte header and a payload:
 *
 *   u32 magic   BERTH_VM_MAGIC ("BVM1"), little-endian
 *   u32 len     payload bytes, <= BERTH_VM_PAYLOAD_MAX, little-endian
 *   u16 type    enum berth_vm_type, little-endian
 *   u16 chan    the channel (enum berth_vm_chan for DATA/EOF; 0 otherwise)
 *
 * The magic makes a desynchronised stream (a guest kernel message on the
 * wrong port, a short write) an error, never a frame read from the middle
 * of another.  Both sides treat any malformed frame as fatal to the run:
 * the host kills the VM and the run fails closed (status 125).
 *
 * The order of a run (sync points as the namespace runtime numbers them):
 *   guest  HELLO     {"proto":1,"kernel":"6.12...","landlock_abi":N}
 *   host   POLICY    the policy's canonical JSON, byte for byte as
 *                    berth_policy_to_json() made it on the host
 *   host   HOME      one file of a seeded home (berth_runtime_opts.home_files,
 *                    a session's: docs/sessions.md), one frame a file, 0 or
 *                    more of them: its path relative to $HOME, a NUL byte,
 *                    then its bytes (so a file of BERTH_VM_PAYLOAD_MAX less
 *                    the path and the NUL at most); START "home_files" says
 *                    how many came, at most BERTH_VM_HOME_FILES_MAX
 *   host   START     {"digest":HEX,"run_id":...,"shares":[...],...}
 *   guest            parses POLICY, serialises it again and refuses (ERROR)
 *                    unless the bytes, and so the digest, are the same;
 *                    starts the namespace runtime on that policy inside
 *                    the guest, which builds the sandbox
 *   guest  READY     sync 2: the sandbox is built, the command waits
 *   host   GO        u32 2: the supervisor's before_release (and on_egress)
 *                    passed; the command may go on to its measurement
 *   guest  MEASURE   sync 3: struct berth_measure (src/sandbox/measure.h)
 *                    as the command filled it right before execve, its
 *                    bytes as they are (both ends are one build: the host
 *                    refuses a payload whose size is not its sizeof)
 *   host   GO        u32 3: the supervisor's on_measured passed; execve
 *   both   DATA/EOF  stdin (host to guest), stdout and stderr (guest to host);
 *                    with START "rpc" the command's RPC channel (its fd 3, a
 *                    SOCK_STREAM socket; docs/protocol.md) both ways on
 *                    chan 3: DATA its bytes, EOF the end of one direction
 *                    (the host: its supervisor shut its end's write side;
 *                    the guest: the command's end was closed)
 *   host   EOF       on chan 1 or 2: berth's reader of that stream is gone
 *   host   SIGNAL    u32 signal number, to the command
 *   host   WINSZ     u16 rows, u16 cols (the pty's)
 *   guest  EXIT      i32: the status `berth run` returns, as the namespace
 *                    runtime's wait() in the guest gave it (the command's
 *                    exit code, 128+N after signal N, 124 at --timeout)
 *   guest  ERROR     {"status":N,"message":"...","hint":"..."} instead of
 *                    READY or MEASURE: the command never ran
 * A host that does not send GO (its hook failed) kills the VM: the command
 * never passes the sync point it waits at.
 *
 * Flow control (every DATA chan: stdin, stdout, stderr, the streams, and
 * any chan added later): the receiver of a chan's DATA holds at most
 * BERTH_VM_WINDOW bytes of it.  Each side starts with that credit for every
 * chan it sends on (a stream's at its OPEN), subtracts what it sends and
 * sends no more than it has; the receiver returns credit with CREDIT as it
 * hands bytes on (to the command's stdin, to a socket, to berth's stdout).
 * DATA beyond the credit is a malformed frame.  So a reader that does not
 * read (a command that never reads its stdin, a slow client) stops its
 * sender, not the channel, and neither side's memory grows past a window a
 * chan.  struct berth_vm_credit below is that accounting, for both sides.
 *
 * --network proxy (the command's connections, decided by the host's egress
 * broker, never by the guest):
 *   guest  OPEN      chan = a new stream id (>= BERTH_VM_STREAM_FIRST),
 *                    {"kind":"http"|"socks5"|"transparent","dst":"A","port":N}:
 *                    a connection the guest's sandbox made to its listener
 *                    of that kind; for "transparent" A:N is the address the
 *                    connection was made to (getsockname(2) in the guest).
 *                    The host takes all of it as the guest's claim: the
 *                    broker decides on it as on any request for A:N.
 *   both   DATA/EOF  the stream's bytes and half-close, under credit
 *   both   CREDIT    u32: more bytes the sender of CREDIT takes on @chan
 *   both   CLOSE     the stream is gone (a refused OPEN, a reset, an
 *                    error): the other side closes its end at once; frames
 *                    of a chan no longer open are dropped
 *   guest  DNS       u32 tag, then one DNS query a client of the sandbox's
 *                    resolver sent;
 *   host   DNS       u32 the same tag, then the broker's answer
 * A stream ends when both sides sent EOF and the bytes were handed on;
 * stream ids are not reused while open.  EOF on stdin from the guest: the
 * command closed its stdin; the host stops reading berth's.
 */
#ifndef BERTH_VM_PROTO_H
#define BERTH_VM_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"

#define BERTH_VM_MAGIC 0x314d5642u /* "BVM1" as little-endian bytes */
#define BERTH_VM_HDR 12
#define BERTH_VM_PAYLOAD_MAX 65536
#define BERTH_VM_PROTO_VERSION 1
#define BERTH_VM_WINDOW (256u << 10) /* bytes of one chan's DATA a receiver holds at most */
#define BERTH_VM_STREAM_FIRST 16     /* the first stream id; chans below are fixed (stdio, RPC) */
#define BERTH_VM_OPEN_MAX 512        /* an OPEN payload's bytes at most */
#define BERTH_VM_DNS_MAX 1500        /* a DNS frame's message bytes at most (after the tag) */
#define BERTH_VM_HOME_FILES_MAX 256  /* HOME frames of one run at most */

enum berth_vm_type {
	BERTH_VM_HELLO = 1,
	BERTH_VM_POLICY = 2,
	BERTH_VM_START = 3,
	BERTH_VM_DATA = 4,
	BERTH_VM_EOF = 5,
	BERTH_VM_SIGNAL = 6,
	BERTH_VM_WINSZ = 7,
	BERTH_VM_MEASURE = 8,
	BERTH_VM_EXIT = 9,
	BERTH_VM_ERROR = 10,
	BERTH_VM_READY = 11,
	BERTH_VM_GO = 12,
	BERTH_VM_OPEN = 13,
	BERTH_VM_CREDIT = 14,
	BERTH_VM_CLOSE = 15,
	BERTH_VM_DNS = 16,
	BERTH_VM_HOME = 17,
	BERTH_VM_TYPE_MAX = 17,
};

enum berth_vm_chan {
	BERTH_VM_STDIN = 0,
	BERTH_VM_STDOUT = 1,
	BERTH_VM_STDERR = 2,
	/* The command's fd 3 (START "rpc": true only), both ways; src/vm/stream.h */
	BERTH_VM_RPC = 3,
};

/* One parsed frame; @payload points into the reader's buffer and is valid
 * until the next berth_vm_read() on that reader. */
struct berth_vm_frame {
	uint16_t type;
	uint16_t chan;
	uint32_t len;
	const unsigned char *payload;
};

/* A frame reader's buffer: one whole frame at most, kept between reads. */
struct berth_vm_reader {
	unsigned char buf[BERTH_VM_HDR + BERTH_VM_PAYLOAD_MAX];
	size_t have;     /* bytes in buf */
	size_t consumed; /* bytes of buf the last frame returned used */
};

/*
 * berth_vm_parse - one frame from the @len bytes at @buf (pure: no I/O).
 * Returns 1 with *@f filled and *@used the frame's bytes, 0 when @buf holds
 * only part of a frame (read more), or -1 with @err filled (status 125) when
 * the bytes are not a frame: a wrong magic, a payload over
 * BERTH_VM_PAYLOAD_MAX, a type outside 1..BERTH_VM_TYPE_MAX.
 */
int berth_vm_parse(const unsigned char *buf, size_t len, struct berth_vm_frame *f, size_t *used,
		   struct berth_error *err);

/* berth_vm_reader_init - an empty reader. */
void berth_vm_reader_init(struct berth_vm_reader *r);

/*
 * berth_vm_read - the next frame from @fd (blocking or not).  Returns 1 with
 * *@f filled, 0 when @fd is non-blocking and has no whole frame yet (EAGAIN;
 * call again when it is readable), or -1 with @err filled: the peer closed
 * the stream (errnum 0, "the guest closed the channel"), a read error
 * (errno), or a malformed frame (berth_vm_parse).
 */
int berth_vm_read(int fd, struct berth_vm_reader *r, struct berth_vm_frame *f, struct berth_error *err);

/*
 * berth_vm_write - one frame to @fd, whole: retried on EINTR, on a short
 * write, and (for a non-blocking @fd) after poll(2) says it is writable.
 * @len must be <= BERTH_VM_PAYLOAD_MAX.  Returns 0, or -1 with @err filled
 * (errno: EPIPE when the peer is gone).
 */
int berth_vm_write(int fd, uint16_t type, uint16_t chan, const void *payload, size_t len,
		   struct berth_error *err);

/* One chan's flow control, as one side keeps it (pure: no I/O). */
struct berth_vm_credit {
	uint32_t can_send; /* bytes the peer still takes from this side */
	uint32_t may_recv; /* bytes the peer may still send before a grant */
	uint32_t handed;   /* bytes received and handed on, not granted back yet */
};

/* berth_vm_credit_init - a chan at its start: a window each way. */
void berth_vm_credit_init(struct berth_vm_credit *c);

/* berth_vm_credit_sent - @n bytes sent as DATA (@n <= can_send). */
void berth_vm_credit_sent(struct berth_vm_credit *c, size_t n);

/*
 * berth_vm_credit_grant - a CREDIT frame's payload (@len bytes at @p)
 * received.  Returns 0 with can_send raised, or -1 with @err (status 125)
 * when the payload is not a u32 or the credit would pass BERTH_VM_WINDOW
 * (the peer grants more than it can hold).
 */
int berth_vm_credit_grant(struct berth_vm_credit *c, const unsigned char *p, size_t len,
			  struct berth_error *err);

/*
 * berth_vm_credit_recv - @n bytes of DATA received.  Returns 0, or -1 with
 * @err (status 125) when the peer sent past the credit it was given.
 */
int berth_vm_credit_recv(struct berth_vm_credit *c, size_t n, struct berth_error *err);

/*
 * berth_vm_credit_handed - @n of the received bytes were handed on (written
 * to their reader, or dropped).  Returns the bytes to grant back with a
 * CREDIT frame now (0: not yet: grants are batched to a quarter window,
 * which cannot stall a sender: one without credit left means the receiver
 * holds the whole window, and handing a quarter of it on grants it), and
 * counts them as granted.  Never more than was received and not granted.
 */
uint32_t berth_vm_credit_handed(struct berth_vm_credit *c, size_t n);

/* Little-endian helpers for the fixed payloads (SIGNAL, WINSZ, EXIT). */
void berth_vm_put_u32(unsigned char *p, uint32_t v);
uint32_t berth_vm_get_u32(const unsigned char *p);
void berth_vm_put_u16(unsigned char *p, uint16_t v);
uint16_t berth_vm_get_u16(const unsigned char *p);

#endif
