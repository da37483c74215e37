/* SPDX-License-Identifier: MIT */
/*
 * proto.c - the frames of the host/guest channel (proto.h).  Shared by the
 * host runtime and the guest init: no allocation, no global state.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "proto.h"

void berth_vm_put_u32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

uint32_t berth_vm_get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void berth_vm_put_u16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

uint16_t berth_vm_get_u16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

int berth_vm_parse(const unsigned char *buf, size_t len, struct berth_vm_frame *f, size_t *used,
		   struct berth_error *err)
{
	uint32_t magic, plen;
	uint16_t type;

	/* the magic is checked as soon as its bytes are in: garbage is an
	 * error at once, not after waiting for a length it made up */
	for (size_t i = 0; i < len && i < 4; i++) {
		static const unsigned char m[4] = {'B', 'V', 'M', '1'};
		if (buf[i] != m[i])
			return berth_err(err, 0,
					 "the VM channel is out of step: a frame without the `BVM1` mark");
	}
	if (len < BERTH_VM_HDR)
		return 0;
	magic = berth_vm_get_u32(buf);
	plen = berth_vm_get_u32(buf + 4);
	type = berth_vm_get_u16(buf + 8);
	if (magic != BERTH_VM_MAGIC)
		return berth_err(err, 0, "the VM channel is out of step: a frame without the `BVM1` mark");
	if (plen > BERTH_VM_PAYLOAD_MAX)
		return berth_err(err, 0, "the VM channel sent a frame of %u bytes (at most %u)",
				 (unsigned)plen, (unsigned)BERTH_VM_PAYLOAD_MAX);
	if (type < 1 || type > BERTH_VM_TYPE_MAX)
		return berth_err(err, 0, "the VM channel sent a frame of unknown type %u", (unsigned)type);
	if (len - BERTH_VM_HDR < plen)
		return 0;
	f->type = type;
	f->chan = berth_vm_get_u16(buf + 10);
	f->len = plen;
	f->payload = buf + BERTH_VM_HDR;
	*used = BERTH_VM_HDR + plen;
	return 1;
}

void berth_vm_reader_init(struct berth_vm_reader *r)
{
	r->have = 0;
	r->consumed = 0;
}

int berth_vm_read(int fd, struct berth_vm_reader *r, struct berth_vm_frame *f, struct berth_error *err)
{
	/* drop the frame returned last time */
	if (r->consumed > 0) {
		memmove(r->buf, r->buf + r->consumed, r->have - r->consumed);
		r->have -= r->consumed;
		r->consumed = 0;
	}
	for (;;) {
		size_t used = 0;
		ssize_t n;
		int k = berth_vm_parse(r->buf, r->have, f, &used, err);
		if (k != 0) {
			if (k > 0)
				r->consumed = used;
			return k;
		}
		n = read(fd, r->buf + r->have, sizeof r->buf - r->have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0)
			return berth_err(err, errno, "read the VM channel");
		if (n == 0)
			return berth_err(err, 0, "the guest closed the channel%s",
					 r->have > 0 ? " in the middle of a frame" : "");
		r->have += (size_t)n;
	}
}

int berth_vm_write(int fd, uint16_t type, uint16_t chan, const void *payload, size_t len,
		   struct berth_error *err)
{
	unsigned char hdr[BERTH_VM_HDR];
	struct iovec iov[2];
	size_t total = BERTH_VM_HDR + len, done = 0;

	if (len > BERTH_VM_PAYLOAD_MAX)
		return berth_err(err, EMSGSIZE, "a VM channel frame of %zu bytes (at most %u)", len,
				 (unsigned)BERTH_VM_PAYLOAD_MAX);
	berth_vm_put_u32(hdr, BERTH_VM_MAGIC);
	berth_vm_put_u32(hdr + 4, (uint32_t)len);
	berth_vm_put_u16(hdr + 8, type);
	berth_vm_put_u16(hdr + 10, chan);
	while (done < total) {
		int cnt = 0;
		ssize_t n;
		if (done < BERTH_VM_HDR) {
			iov[cnt].iov_base = hdr + done;
			iov[cnt++].iov_len = BERTH_VM_HDR - done;
			iov[cnt].iov_base = (void *)payload;
			iov[cnt++].iov_len = len;
		} else {
			iov[cnt].iov_base = (unsigned char *)payload + (done - BERTH_VM_HDR);
			iov[cnt++].iov_len = total - done;
		}
		n = writev(fd, iov, len == 0 && cnt == 2 ? 1 : cnt);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd p = {.fd = fd, .events = POLLOUT};
			if (poll(&p, 1, -1) < 0 && errno != EINTR)
				return berth_err(err, errno, "wait for the VM channel");
			continue;
		}
		if (n < 0)
			return berth_err(err, errno, "write the VM channel");
		done += (size_t)n;
	}
	return 0;
}

void berth_vm_credit_init(struct berth_vm_credit *c)
{
	c->can_send = BERTH_VM_WINDOW;
	c->may_recv = BERTH_VM_WINDOW;
	c->handed = 0;
}

void berth_vm_credit_sent(struct berth_vm_credit *c, size_t n)
{
	c->can_send = n >= c->can_send ? 0 : c->can_send - (uint32_t)n;
}

int berth_vm_credit_grant(struct berth_vm_credit *c, const unsigned char *p, size_t len,
			  struct berth_error *err)
{
	uint32_t n;

	if (len != 4)
		return berth_err(err, 0, "the VM channel sent a CREDIT frame of %zu bytes (4 are due)", len);
	n = berth_vm_get_u32(p);
	if (n > BERTH_VM_WINDOW - c->can_send)
		return berth_err(err, 0, "the VM channel granted %u bytes of credit over the %u it may hold",
				 (unsigned)n, (unsigned)BERTH_VM_WINDOW);
	c->can_send += n;
	return 0;
}

int berth_vm_credit_recv(struct berth_vm_credit *c, size_t n, struct berth_error *err)
{
	if (n > c->may_recv)
		return berth_err(err, 0, "the VM channel sent %zu bytes of DATA past its credit of %u", n,
				 (unsigned)c->may_recv);
	c->may_recv -= (uint32_t)n;
	return 0;
}

uint32_t berth_vm_credit_handed(struct berth_vm_credit *c, size_t n)
{
	uint32_t g;

	/* never more back than was taken: a caller's error cannot widen the window */
	if (n > BERTH_VM_WINDOW - c->may_recv - c->handed)
		n = BERTH_VM_WINDOW - c->may_recv - c->handed;
	c->handed += (uint32_t)n;
	if (c->handed < BERTH_VM_WINDOW / 4)
		return 0;
	g = c->handed;
	c->may_recv += g;
	c->handed = 0;
	return g;
}
