/* SPDX-License-Identifier: MIT */
/*
 * stream.c - one byte stream between a local socket and a channel of the
 * microVM protocol (stream.h): the resident app's RPC channel, on the host
 * and in the guest alike.
 */
#include "stream.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto.h"

void berth_vm_stream_init(struct berth_vm_stream *s, int fd, uint16_t chan)
{
	memset(s, 0, sizeof *s);
	s->fd = fd;
	s->chan = chan;
}

bool berth_vm_stream_active(const struct berth_vm_stream *s)
{
	return s->fd >= 0;
}

size_t berth_vm_stream_pending(const struct berth_vm_stream *s)
{
	return s->len - s->off;
}

bool berth_vm_stream_full(const struct berth_vm_stream *s)
{
	return berth_vm_stream_pending(s) >= BERTH_VM_STREAM_HIGH;
}

short berth_vm_stream_events(const struct berth_vm_stream *s)
{
	short ev = 0;

	if (s->fd < 0)
		return 0;
	if (!s->rd_eof)
		ev |= POLLIN;
	if (berth_vm_stream_pending(s) > 0)
		ev |= POLLOUT;
	return ev;
}

/* The reader is gone: what is queued and what comes is dropped. */
static void reader_gone(struct berth_vm_stream *s)
{
	s->wr_gone = s->wr_shut = true;
	s->len = s->off = 0;
}

int berth_vm_stream_flush(struct berth_vm_stream *s, struct berth_error *err)
{
	while (s->fd >= 0 && !s->wr_gone && s->off < s->len) {
		/* MSG_NOSIGNAL: a reader gone is EPIPE here, never SIGPIPE */
		ssize_t n = send(s->fd, s->buf + s->off, s->len - s->off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) {
			reader_gone(s);
			break;
		}
		if (n < 0)
			return berth_err(err, errno, "write the RPC channel's socket");
		s->off += (size_t)n;
	}
	if (s->off == s->len)
		s->off = s->len = 0;
	if (s->fd >= 0 && s->peer_eof && s->len == 0 && !s->wr_shut) {
		shutdown(s->fd, SHUT_WR);
		s->wr_shut = true;
	}
	return 0;
}

int berth_vm_stream_data(struct berth_vm_stream *s, const void *p, size_t n, struct berth_error *err)
{
	unsigned char *nb;

	if (s->peer_eof)
		return berth_err(err, 0, "the VM channel sent data on channel %u after its end", s->chan);
	if (s->fd < 0 || s->wr_gone || n == 0)
		return 0;
	if (berth_vm_stream_pending(s) + n > BERTH_VM_STREAM_MAX)
		return berth_err(
		    err, ENOBUFS,
		    "the VM channel sent more than %u bytes on channel %u that its reader did not take",
		    BERTH_VM_STREAM_MAX, s->chan);
	/* what was written already goes first: the buffer holds one live span */
	if (s->off > 0) {
		memmove(s->buf, s->buf + s->off, s->len - s->off);
		s->len -= s->off;
		s->off = 0;
	}
	nb = realloc(s->buf, s->len + n);
	if (nb == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	s->buf = nb;
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	return berth_vm_stream_flush(s, err);
}

void berth_vm_stream_eof(struct berth_vm_stream *s)
{
	struct berth_error ignored = {0};

	s->peer_eof = true;
	berth_vm_stream_flush(s, &ignored);
}

int berth_vm_stream_pump(struct berth_vm_stream *s, int chan_fd, struct berth_error *err)
{
	unsigned char buf[BERTH_VM_PAYLOAD_MAX];
	ssize_t n;

	if (s->fd < 0 || s->rd_eof)
		return 0;
	n = recv(s->fd, buf, sizeof buf, MSG_DONTWAIT);
	if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	if (n > 0)
		return berth_vm_write(chan_fd, BERTH_VM_DATA, s->chan, buf, (size_t)n, err);
	/* its end, or a read that fails: the same to the peer, said once */
	s->rd_eof = true;
	return berth_vm_write(chan_fd, BERTH_VM_EOF, s->chan, NULL, 0, err);
}

void berth_vm_stream_close(struct berth_vm_stream *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	free(s->buf);
	s->buf = NULL;
	s->len = s->off = 0;
}
