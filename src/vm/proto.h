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
	BERTH_VM_TYPE_MAX = 12,
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

/* Little-endian helpers for the fixed payloads (SIGNAL, WINSZ, EXIT). */
void berth_vm_put_u32(unsigned char *p, uint32_t v);
uint32_t berth_vm_get_u32(const unsigned char *p);
void berth_vm_put_u16(unsigned char *p, uint16_t v);
uint16_t berth_vm_get_u16(const unsigned char *p);

#endif
