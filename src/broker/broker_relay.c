/* SPDX-License-Identifier: MIT */
/*
 * broker_relay.c - the RELAY state of the egress broker (broker.c): bytes both ways through
 * libevent buffers for plain requests, and spliced tunnels (splice(2), zero copy).
 */

#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "../util/sys.h"
#include "broker_int.h"

/* ---- RELAY --------------------------------------------------------------- */

static void count(struct conn *c, bool up, size_t n)
{
	if (n == 0)
		return;
	if (up) {
		c->bytes_up += n;
		berth_bk_stat_add(c->b, &c->b->st.bytes_up, n);
	} else {
		c->bytes_down += n;
		berth_bk_stat_add(c->b, &c->b->st.bytes_down, n);
	}
	c->last_ms = berth_now_ms();
}

static bool relay_done(const struct conn *c)
{
	if (c->spliced && !c->connect && c->kind == BERTH_BROKER_HTTP)
		return c->d[1].shut; /* a plain request: the response ended and reached the client */
	if (c->spliced)
		return c->d[0].shut && c->d[1].shut;
	if (!c->connect && c->kind == BERTH_BROKER_HTTP && c->up_eof && c->cl_shut)
		return true; /* a plain request: the response ended and reached the client */
	return c->cl_shut && c->up_shut && c->cl_eof && c->up_eof;
}

/*
 * Move what @src read to @dst's output; stop reading @src while @dst holds
 * bufmax bytes.  From the client of a plain request, only the body the head
 * announced moves; what follows it is dropped (body.h).
 * Returns false when the connection must end (malformed chunked body, or
 * too much sent after the body); the caller frees it.
 */
static bool relay(struct conn *c, struct bufferevent *src, struct bufferevent *dst)
{
	struct evbuffer *in = bufferevent_get_input(src), *out = bufferevent_get_output(dst);
	size_t n = evbuffer_get_length(in);

	if (n == 0)
		return true;
	if (src == c->cl && !c->connect && c->kind == BERTH_BROKER_HTTP) {
		while ((n = evbuffer_get_length(in)) > 0) {
			if (berth_body_done(&c->body)) {
				c->dropped += n;
				evbuffer_drain(in, n);
				return c->dropped <= CLOSING_READ_MAX;
			}
			struct evbuffer_iovec v;
			if (evbuffer_peek(in, -1, NULL, &v, 1) < 1)
				return true;
			long k = berth_body_feed(&c->body, v.iov_base, v.iov_len);
			if (k < 0)
				return false;
			evbuffer_remove_buffer(in, out, (size_t)k);
			count(c, true, (size_t)k);
		}
	} else {
		evbuffer_remove_buffer(in, out, n);
		count(c, src == c->cl, n);
	}
	if (evbuffer_get_length(out) >= c->b->bufmax) {
		bufferevent_disable(src, EV_READ);
		bufferevent_setwatermark(dst, EV_WRITE, c->b->bufmax / 2, 0);
	}
	return true;
}

static void relay_read(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	if (!relay(c, bev, bev == c->cl ? c->up : c->cl))
		berth_bk_conn_free(c);
}

/* @dst drained: resume its source, and shut its write side once the source ended. */
static void relay_write(struct bufferevent *dst, void *arg)
{
	struct conn *c = arg;
	bool to_client = dst == c->cl;
	struct bufferevent *src = to_client ? c->up : c->cl;
	bool src_eof = to_client ? c->up_eof : c->cl_eof;
	bool *shut = to_client ? &c->cl_shut : &c->up_shut;
	size_t left = evbuffer_get_length(bufferevent_get_output(dst));

	if (!src_eof && left <= c->b->bufmax / 2 && !(bufferevent_get_enabled(src) & EV_READ)) {
		bufferevent_setwatermark(dst, EV_WRITE, 0, 0);
		bufferevent_enable(src, EV_READ);
	}
	if (src_eof && left == 0 && !*shut) {
		shutdown(bufferevent_getfd(dst), SHUT_WR);
		*shut = true;
	}
	if (relay_done(c))
		berth_bk_conn_free(c);
}

static void relay_event(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;
	bool from_client = bev == c->cl;
	struct bufferevent *dst = from_client ? c->up : c->cl;

	if (!(what & BEV_EVENT_EOF)) { /* an error on either side ends both */
		berth_bk_conn_free(c);
		return;
	}
	if (!relay(c, bev, dst)) {
		berth_bk_conn_free(c);
		return;
	}
	*(from_client ? &c->cl_eof : &c->up_eof) = true;
	bufferevent_setwatermark(dst, EV_WRITE, 0, 0);
	bool *shut = from_client ? &c->up_shut : &c->cl_shut;
	if (evbuffer_get_length(bufferevent_get_output(dst)) == 0 && !*shut) {
		shutdown(bufferevent_getfd(dst), SHUT_WR);
		*shut = true;
	}
	if (relay_done(c))
		berth_bk_conn_free(c);
}

/* ---- RELAY, spliced (tunnels) --------------------------------------------- */

/* @ev added or deleted to be as @want says; *@on is whether it is added. */
static void event_want(struct event *ev, bool *on, bool want)
{
	if (want == *on)
		return;
	if (want)
		event_add(ev, NULL);
	else
		event_del(ev);
	*on = want;
}

static void sdir_events(struct sdir *d)
{
	bool want_rd = !d->eof && d->pending_off == d->pending_len && d->queued < d->cap && !d->slots_full;
	bool want_wr = d->queued > 0 || d->pending_off < d->pending_len;

	event_want(d->rd, &d->rd_on, want_rd);
	event_want(d->wr, &d->wr_on, want_wr);
}

static bool again(int e)
{
	return e == EAGAIN || e == EWOULDBLOCK || e == EINTR;
}

/* Bytes waiting in socket @fd's receive queue (SIOCINQ, tcp(7)); 0 when unknown. */
static int inq(int fd)
{
	int n = 0;

	return ioctl(fd, SIOCINQ, &n) == 0 ? n : 0;
}

/*
 * Move what can move in direction @d without blocking, at most PUMP_ROUNDS
 * times through the pipe; shut the destination's write side once the source
 * ended and everything reached it.  Returns false when the connection must
 * end (a socket error: reset, broken pipe); the caller frees it.
 *
 * A full destination does not stop the reading: the pipe fills up to its
 * capacity meanwhile, and only then does the source's read event go off.
 * (Stopping at the full destination while the read event stayed on made the
 * loop spin: epoll reports the unread source again at once.)  A pipe counts
 * its capacity in slots, one per piece of a socket buffer, so a source of
 * small pieces can fill it below @cap bytes; a read that finds it so
 * (EAGAIN with bytes still waiting in the socket) turns the read event off
 * until a write to the destination frees slots.
 */
static bool pump(struct conn *c, struct sdir *d)
{
	int src = c->fd[d->i], dst = c->fd[1 - d->i];
	bool dst_full = false;

	for (int round = 0; round < PUMP_ROUNDS; round++) {
		if (d->pending_off < d->pending_len) {
			ssize_t n = write(dst, d->pending + d->pending_off, d->pending_len - d->pending_off);
			if (n < 0) {
				if (again(errno))
					break;
				return false;
			}
			d->pending_off += (size_t)n;
			if (d->pending_off < d->pending_len)
				break;
			free(d->pending);
			d->pending = NULL;
			d->pending_len = d->pending_off = 0;
			continue;
		}
		if (d->queued > 0 && !dst_full) {
			unsigned fl = SPLICE_F_MOVE | SPLICE_F_NONBLOCK;
			if (!d->eof && !(d->limited && d->budget == 0) && inq(src) > 0)
				fl |= SPLICE_F_MORE; /* more follows at once: no short segment now */
			ssize_t n = splice(d->p[0], NULL, dst, NULL, d->queued, fl);
			if (n < 0 && !again(errno))
				return false;
			if (n > 0) {
				d->queued -= (size_t)n;
				d->slots_full = false;
				count(c, d->i == 0, (size_t)n);
			}
			if (d->queued > 0)
				dst_full = true; /* it took what it could: wait for it, read meanwhile */
		}
		if (d->eof || d->slots_full || d->queued >= d->cap)
			break;
		if (d->limited && d->budget == 0) { /* after a plain request's body */
			char sink[4096];
			ssize_t n = read(src, sink, sizeof(sink));
			if (n == 0)
				d->eof = true;
			else if (n < 0 && !again(errno))
				return false;
			if (n <= 0)
				break;
			c->dropped += (size_t)n;
			if (c->dropped > CLOSING_READ_MAX)
				return false;
			continue;
		}
		size_t want = d->cap - d->queued;
		if (d->limited && d->budget < want)
			want = (size_t)d->budget;
		ssize_t n = splice(src, NULL, d->p[1], NULL, want, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n == 0) {
			d->eof = true;
			continue; /* flush what the pipe holds */
		}
		if (n < 0) {
			if (!again(errno))
				return false;
			if (d->queued > 0 && inq(src) > 0)
				d->slots_full = true;
			break;
		}
		d->queued += (size_t)n;
		if (d->limited)
			d->budget -= (size_t)n;
	}
	if (d->eof && d->queued == 0 && d->pending_off == d->pending_len && !d->shut) {
		shutdown(dst, SHUT_WR);
		d->shut = true;
	}
	sdir_events(d);
	return true;
}

static void splice_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sdir *d = arg;
	struct conn *c = d->c;

	(void)fd;
	(void)what;
	if (!pump(c, d) || relay_done(c))
		berth_bk_conn_free(c);
}

/*
 * Hand the two sockets from their bufferevents to the splice relay.
 * @up_prefix: bytes to send upstream first (a plain request's rewritten
 *   head), then what the client sent after its head;
 * @reply: bytes to send the client first (after what is still queued for it);
 * @limited, @budget: a plain request: only @budget more bytes (its body) go
 *   upstream; what the client sends after them is read and dropped.
 * Returns 1 when the connection is spliced, 0 when it cannot be (out of file
 * descriptors or memory: nothing was taken from the bufferevents and the
 * caller keeps the bufferevent relay), -1 when the connection must end.
 */
static int splice_start(struct conn *c, const void *up_prefix, size_t up_len, const void *reply,
			size_t reply_len, bool limited, uint64_t budget)
{
	struct berth_broker *b = c->b;
	struct evbuffer *in = bufferevent_get_input(c->cl), *out = bufferevent_get_output(c->cl);
	size_t early = evbuffer_get_length(in), queued = evbuffer_get_length(out);
	size_t body = limited && budget < early ? (size_t)budget : early;

	c->fd[0] = c->fd[1] = -1;
	for (int i = 0; i < 2; i++)
		c->d[i] = (struct sdir){.c = c, .i = i, .p = {-1, -1}};
	c->d[0].pending_len = up_len + body;
	c->d[1].pending_len = queued + reply_len;
	for (int i = 0; i < 2; i++) {
		struct sdir *d = &c->d[i];
		if (d->pending_len > 0 && (d->pending = malloc(d->pending_len)) == NULL)
			goto fallback;
		if (pipe2(d->p, O_NONBLOCK | O_CLOEXEC) < 0)
			goto fallback;
		int cap = fcntl(d->p[0], F_GETPIPE_SZ);
		d->cap = cap > 0 ? (size_t)cap : 4096;
		c->fd[i] = fcntl(bufferevent_getfd(i == 0 ? c->cl : c->up), F_DUPFD_CLOEXEC, 0);
		if (c->fd[i] < 0)
			goto fallback;
	}
	for (int i = 0; i < 2; i++) {
		struct sdir *d = &c->d[i];
		d->rd = event_new(b->base, c->fd[i], EV_READ | EV_PERSIST, splice_cb, d);
		d->wr = event_new(b->base, c->fd[1 - i], EV_WRITE | EV_PERSIST, splice_cb, d);
		if (d->rd == NULL || d->wr == NULL)
			goto fallback;
	}
	/* nothing can fail from here on */
	if (up_len > 0)
		memcpy(c->d[0].pending, up_prefix, up_len);
	evbuffer_remove(in, c->d[0].pending + up_len, body);
	c->dropped = evbuffer_get_length(in);
	evbuffer_drain(in, c->dropped);
	evbuffer_remove(out, c->d[1].pending, queued);
	if (reply_len > 0)
		memcpy(c->d[1].pending + queued, reply, reply_len);
	count(c, true, up_len + body); /* a plain request's head counts: it carries the client's data too */
	c->d[0].limited = limited;
	c->d[0].budget = limited ? budget - body : 0;
	bufferevent_free(c->cl);
	bufferevent_free(c->up);
	c->cl = c->up = NULL;
	c->spliced = true;
	/* The relay keeps the segments it is given: without Nagle's delay a small
	 * write that follows an unacknowledged one (a request's body after its
	 * head, the second half of a message) waits for no delayed ACK (up to
	 * 40 ms).  pump() corks with SPLICE_F_MORE while more bytes wait, so bulk
	 * transfers still go in full segments.  Best effort: without it the relay
	 * is slower, not wrong. */
	for (int i = 0; i < 2; i++)
		(void)setsockopt(c->fd[i], IPPROTO_TCP, TCP_NODELAY, &(int){1}, sizeof(int));
	return pump(c, &c->d[0]) && pump(c, &c->d[1]) ? 1 : -1;
fallback:
	berth_bk_splice_release(c);
	return 0;
}

/* Connected to the checked address: answer the client and relay.  Returns
 * -1 when the connection must end (the caller frees it). */
int berth_bk_established(struct conn *c)
{
	struct berth_broker *b = c->b;
	char buf[BERTH_SOCKS_REPLY_MAX > 128 ? BERTH_SOCKS_REPLY_MAX : 128];
	size_t rlen = 0;

	c->st = C_RELAY;
	c->established = true;
	c->last_ms = berth_now_ms();
	berth_addr_format(&c->addrs[c->next_addr - 1], c->addr_txt, sizeof(c->addr_txt));
	if (c->kind == BERTH_BROKER_SOCKS5) {
		/* BND.ADDR 0.0.0.0:0, not the outgoing socket's address: that is
		 * the host's own address on its network (a private or VPC address
		 * the sandbox has no business learning); clients ignore it for
		 * CONNECT (RFC 1928 6) */
		int n = berth_socks_format_reply((uint8_t *)buf, sizeof(buf), BERTH_SOCKS_SUCCEEDED, NULL);
		rlen = n > 0 ? (size_t)n : 0;
	} else if (c->connect && c->kind == BERTH_BROKER_HTTP) {
		int n = berth_http_format_established(buf, sizeof(buf));
		rlen = n > 0 ? (size_t)n : 0;
	}
	berth_bk_timer_in(c, b->idle_ms);
	if ((c->kind == BERTH_BROKER_SOCKS5 || c->connect) && berth_bk_mitm_wanted(c))
		return berth_bk_mitm_start(c, buf, rlen);   /* a credential's host (docs/credentials.md) */
	if (c->kind == BERTH_BROKER_SOCKS5 || c->connect) { /* a transparent one has c->connect, no reply */
		int r = splice_start(c, NULL, 0, buf, rlen, false, 0);
		if (r != 0)
			return r;
		bufferevent_write(c->cl, buf, rlen); /* the bufferevent relay, as a fallback */
	} else if (c->body_kind != BERTH_BODY_CHUNKED) {
		/* a plain request whose body length is known: spliced, with a budget */
		int r = splice_start(c, c->head_out, c->head_len, NULL, 0, true,
				     c->body_kind == BERTH_BODY_LENGTH ? c->body_length : 0);
		if (r != 0) {
			free(c->head_out);
			c->head_out = NULL;
			return r;
		}
	}
	if (!c->spliced && !(c->kind == BERTH_BROKER_SOCKS5 || c->connect)) {
		bufferevent_write(c->up, c->head_out, c->head_len);
		count(c, true, c->head_len);
		free(c->head_out);
		c->head_out = NULL;
		berth_body_init(&c->body, c->body_kind, c->body_length);
	}
	bufferevent_setcb(c->cl, relay_read, relay_write, relay_event, c);
	bufferevent_setcb(c->up, relay_read, relay_write, relay_event, c);
	bufferevent_setwatermark(c->cl, EV_READ, 0, b->bufmax);
	bufferevent_setwatermark(c->up, EV_READ, 0, b->bufmax);
	if (!relay(c, c->cl, c->up)) /* bytes the client sent after the head */
		return -1;
	bufferevent_enable(c->cl, EV_READ | EV_WRITE);
	bufferevent_enable(c->up, EV_READ | EV_WRITE);
	return 0;
}
