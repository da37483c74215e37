/* SPDX-License-Identifier: MIT */
/*
 * mux.c - the channel's multiplexed streams (mux.h), on both sides of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mux.h"

#define READS_PER_READY 4 /* reads of one socket per poll round: one busy stream cannot starve the rest */

void berth_vm_mux_init(struct berth_vm_mux *ss, berth_vm_send_fn send, void *arg)
{
	memset(ss, 0, sizeof *ss);
	for (size_t i = 0; i < BERTH_VM_MUX_MAX; i++)
		ss->s[i].fd = -1;
	ss->next_id = BERTH_VM_STREAM_FIRST;
	ss->send = send;
	ss->arg = arg;
}

struct berth_vm_mux_stream *berth_vm_mux_find(struct berth_vm_mux *ss, uint16_t id)
{
	for (size_t i = 0; i < BERTH_VM_MUX_MAX; i++)
		if (ss->s[i].fd >= 0 && ss->s[i].id == id)
			return &ss->s[i];
	return NULL;
}

/* The next free id from @ss->next_id on, wrapping past 65535 to the first. */
static uint16_t new_id(struct berth_vm_mux *ss)
{
	for (;;) {
		uint16_t id = ss->next_id;
		ss->next_id = id == UINT16_MAX ? BERTH_VM_STREAM_FIRST : (uint16_t)(id + 1);
		if (berth_vm_mux_find(ss, id) == NULL)
			return id;
	}
}

struct berth_vm_mux_stream *berth_vm_mux_add(struct berth_vm_mux *ss, int fd, uint16_t id,
					     struct berth_error *err)
{
	struct berth_vm_mux_stream *st = NULL;

	if (id != 0 && id < BERTH_VM_STREAM_FIRST) {
		close(fd);
		berth_err(err, EINVAL, "a stream id of %u (the first is %u)", (unsigned)id,
			  (unsigned)BERTH_VM_STREAM_FIRST);
		return NULL;
	}
	if (id != 0 && berth_vm_mux_find(ss, id) != NULL) {
		close(fd);
		berth_err(err, EEXIST, "the VM channel opened stream %u, which is open", (unsigned)id);
		return NULL;
	}
	for (size_t i = 0; st == NULL && i < BERTH_VM_MUX_MAX; i++)
		if (ss->s[i].fd < 0)
			st = &ss->s[i];
	if (st == NULL) {
		close(fd);
		berth_err(err, EMFILE, "more than %d streams open on the VM channel", BERTH_VM_MUX_MAX);
		return NULL;
	}
	memset(st, 0, sizeof *st);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	st->fd = fd;
	st->id = id != 0 ? id : new_id(ss);
	berth_vm_credit_init(&st->cr);
	ss->n++;
	return st;
}

static void release(struct berth_vm_mux *ss, struct berth_vm_mux_stream *st)
{
	close(st->fd);
	st->fd = -1;
	free(st->out);
	st->out = NULL;
	st->out_len = st->out_off = 0;
	ss->n--;
}

void berth_vm_mux_abort(struct berth_vm_mux *ss, struct berth_vm_mux_stream *st, bool tell)
{
	struct linger lg = {.l_onoff = 1, .l_linger = 0};
	struct berth_error e = {0};

	/* a TCP client sees a reset, as a refusal of the namespace runtime's
	 * transparent listener gives it (AF_UNIX: no effect) */
	(void)setsockopt(st->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
	if (tell)
		(void)ss->send(ss->arg, BERTH_VM_CLOSE, st->id, NULL, 0, &e);
	release(ss, st);
}

/* Both directions ended: the stream is done (the peer's too, on its side). */
static void maybe_done(struct berth_vm_mux *ss, struct berth_vm_mux_stream *st)
{
	if (st->peer_eof && st->out_off == st->out_len && !st->wr_shut) {
		shutdown(st->fd, SHUT_WR);
		st->wr_shut = true;
	}
	if (st->local_eof && st->wr_shut)
		release(ss, st);
}

/* The peer's bytes to the socket, as far as it takes them; CREDIT back. */
static int flush_out(struct berth_vm_mux *ss, struct berth_vm_mux_stream *st, struct berth_error *err)
{
	while (st->out_off < st->out_len) {
		ssize_t w = send(st->fd, st->out + st->out_off, st->out_len - st->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (w < 0) {
			berth_vm_mux_abort(ss, st, true); /* the local end is gone */
			return 0;
		}
		st->out_off += (size_t)w;
		uint32_t g = berth_vm_credit_handed(&st->cr, (size_t)w);
		if (g > 0) {
			unsigned char b[4];
			berth_vm_put_u32(b, g);
			if (ss->send(ss->arg, BERTH_VM_CREDIT, st->id, b, sizeof b, err) < 0)
				return -1;
		}
	}
	if (st->out_off == st->out_len)
		st->out_off = st->out_len = 0;
	maybe_done(ss, st);
	return 0;
}

static int on_data(struct berth_vm_mux *ss, struct berth_vm_mux_stream *st, const struct berth_vm_frame *f,
		   struct berth_error *err)
{
	unsigned char *nb;

	if (st->peer_eof)
		return berth_err(err, 0, "the VM channel sent DATA on stream %u after its EOF", st->id);
	if (berth_vm_credit_recv(&st->cr, f->len, err) < 0)
		return -1;
	if (f->len == 0)
		return 0;
	if (st->out_off > 0) {
		memmove(st->out, st->out + st->out_off, st->out_len - st->out_off);
		st->out_len -= st->out_off;
		st->out_off = 0;
	}
	/* at most a window: the credit bounds it */
	nb = realloc(st->out, st->out_len + f->len);
	if (nb == NULL) {
		berth_vm_mux_abort(ss, st, true);
		return 0;
	}
	st->out = nb;
	memcpy(st->out + st->out_len, f->payload, f->len);
	st->out_len += f->len;
	return flush_out(ss, st, err);
}

int berth_vm_mux_frame(struct berth_vm_mux *ss, const struct berth_vm_frame *f, struct berth_error *err)
{
	struct berth_vm_mux_stream *st;

	if (f->chan < BERTH_VM_STREAM_FIRST || (f->type != BERTH_VM_DATA && f->type != BERTH_VM_EOF &&
						f->type != BERTH_VM_CREDIT && f->type != BERTH_VM_CLOSE))
		return 0;
	st = berth_vm_mux_find(ss, f->chan);
	if (st == NULL)
		return 1; /* crossed its CLOSE or its end: dropped */
	switch (f->type) {
	case BERTH_VM_DATA:
		return on_data(ss, st, f, err) < 0 ? -1 : 1;
	case BERTH_VM_EOF:
		if (f->len != 0)
			return berth_err(err, 0, "the VM channel sent an EOF frame with a payload");
		st->peer_eof = true;
		maybe_done(ss, st);
		return 1;
	case BERTH_VM_CREDIT:
		return berth_vm_credit_grant(&st->cr, f->payload, f->len, err) < 0 ? -1 : 1;
	default: /* CLOSE */
		berth_vm_mux_abort(ss, st, false);
		return 1;
	}
}

size_t berth_vm_mux_poll(struct berth_vm_mux *ss, struct pollfd *p)
{
	size_t n = 0;

	for (size_t i = 0; i < BERTH_VM_MUX_MAX; i++) {
		struct berth_vm_mux_stream *st = &ss->s[i];
		short ev = 0;
		if (st->fd < 0)
			continue;
		if (!st->local_eof && st->cr.can_send > 0)
			ev |= POLLIN;
		if (st->out_off < st->out_len)
			ev |= POLLOUT;
		/* nothing wanted: left out, or a hung-up socket would spin poll */
		p[n++] = (struct pollfd){.fd = ev != 0 ? st->fd : -1, .events = ev};
	}
	return n;
}

/* What the socket has, as DATA (up to the credit), or its EOF. */
static int pump_in(struct berth_vm_mux *ss, struct berth_vm_mux_stream *st, struct berth_error *err)
{
	static unsigned char buf[BERTH_VM_PAYLOAD_MAX];

	for (int k = 0; k < READS_PER_READY && !st->local_eof && st->cr.can_send > 0; k++) {
		size_t want = st->cr.can_send < sizeof buf ? st->cr.can_send : sizeof buf;
		ssize_t r = recv(st->fd, buf, want, MSG_DONTWAIT);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (r < 0) {
			berth_vm_mux_abort(ss, st, true); /* a reset: the peer's end too */
			return 0;
		}
		if (r == 0) {
			st->local_eof = true;
			if (ss->send(ss->arg, BERTH_VM_EOF, st->id, NULL, 0, err) < 0)
				return -1;
			maybe_done(ss, st);
			return 0;
		}
		berth_vm_credit_sent(&st->cr, (size_t)r);
		if (ss->send(ss->arg, BERTH_VM_DATA, st->id, buf, (size_t)r, err) < 0)
			return -1;
	}
	return 0;
}

int berth_vm_mux_ready(struct berth_vm_mux *ss, const struct pollfd *p, size_t n, struct berth_error *err)
{
	for (size_t i = 0; i < n; i++) {
		struct berth_vm_mux_stream *st = NULL;
		if (p[i].revents == 0)
			continue;
		/* found again by descriptor: frames read since the poll may
		 * have ended the stream (then there is nothing to do) */
		for (size_t k = 0; st == NULL && k < BERTH_VM_MUX_MAX; k++)
			if (ss->s[k].fd == p[i].fd)
				st = &ss->s[k];
		if (st == NULL)
			continue;
		if ((p[i].revents & (POLLOUT | POLLERR)) && st->out_off < st->out_len &&
		    flush_out(ss, st, err) < 0)
			return -1;
		if (st->fd != p[i].fd)
			continue; /* ended by the write */
		if ((p[i].revents & (POLLIN | POLLHUP | POLLERR)) && pump_in(ss, st, err) < 0)
			return -1;
	}
	return 0;
}

void berth_vm_mux_close_all(struct berth_vm_mux *ss)
{
	for (size_t i = 0; i < BERTH_VM_MUX_MAX; i++)
		if (ss->s[i].fd >= 0)
			release(ss, &ss->s[i]);
}
