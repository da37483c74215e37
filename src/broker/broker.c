/* SPDX-License-Identifier: MIT */
/*
 * broker.c - the egress broker's event loop: connections, decisions, relay.
 * See broker.h for the order of one request and the threading rules; the
 * c-ares glue is in dns.c.
 *
 * A connection goes through these states, one per struct conn:
 *   HEAD     reading the request head (header read timeout: 408)
 *   DNS      the name is allowed and being resolved (connect timeout: 504)
 *   CONNECT  connecting to a checked address (connect timeout: 504)
 *   RELAY    bytes flow both ways (idle timeout: close)
 *   CLOSING  a reply was sent; the write side is shut once it is flushed and
 *            what the client still sends is read and dropped for a moment, so
 *            that close(2) does not reset the connection before the client
 *            read the reply (RFC 9112 9.6)
 * A connection is freed only at the end of a libevent callback, never in a
 * function that its caller continues after.
 */
#include "broker.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "body.h"
#include "dns.h"
#include "dnsmsg.h"
#include "fakeaddr.h"
#include "http.h"
#include "socks.h"

#define MAX_ADDRS 16
#define CLOSING_LINGER_MS 2000
#define CLOSING_READ_MAX 65536
#define MAX_LISTENERS BERTH_BROKER_LISTENERS_MAX
#define DNS_TTL 300 /* seconds: an assigned address never changes while the broker runs */
#define PUMP_ROUNDS 16 /* splice rounds per callback, so one busy tunnel cannot starve the others */
#define FDS_PER_TUNNEL 6 /* client, upstream, two pipes */
#define LOCAL_ADDRS_MAX_AGE_MS 1000 /* the host's own addresses are read again after this */

enum cstate { C_HEAD, C_DNS, C_CONNECT, C_RELAY, C_CLOSING };

struct listener {
	struct berth_broker *b;
	struct evconnlistener *l; /* TCP kinds */
	struct event *udp;	  /* BERTH_BROKER_DNS */
	struct event *retry;
	enum berth_broker_kind kind;
};

/*
 * One direction of a spliced tunnel: bytes read from the source socket go
 * into a pipe with splice(2) and from the pipe to the destination socket, so
 * they never reach user space (zero copy).  @pending holds the bytes that
 * come before the pipe's: the client's bytes read with the head, or the
 * reply to the client.
 */
struct sdir {
	struct conn *c;
	int i;	  /* 0: client to upstream, 1: upstream to client */
	int p[2]; /* the pipe */
	size_t queued, cap;
	bool slots_full; /* a read found the pipe out of slots: wait for a write */
	unsigned char *pending;
	size_t pending_len, pending_off;
	bool eof, shut, rd_on, wr_on;
	bool limited;	 /* a plain request: only @budget more bytes go upstream */
	uint64_t budget; /* then what the client sends is read and dropped */
	struct event *rd, *wr;
};

struct conn {
	struct berth_broker *b;
	struct conn *prev, *next;
	enum berth_broker_kind kind;
	enum cstate st;
	struct bufferevent *cl, *up;
	struct event *timer;
	struct berth_http_parser *http; /* HTTP, until the head is read */
	struct berth_socks_parser socks;
	bool connect;	/* HTTP CONNECT (a tunnel) rather than absolute-form */
	char *head_out; /* absolute-form: the rewritten head to send upstream */
	size_t head_len;
	struct berth_host_decision dec;
	bool slot, established, reported;
	struct berth_addr addrs[MAX_ADDRS];
	size_t naddrs, next_addr;
	char addr_txt[BERTH_ADDR_STRLEN];
	struct berth_dns_query *dns;
	uint64_t bytes_up, bytes_down, t0_ms, last_ms;
	bool cl_eof, up_eof, cl_shut, up_shut;
	size_t closing_read;
	/* a plain request: where its body ends (nothing after it is forwarded) */
	enum berth_body_kind body_kind;
	uint64_t body_length;
	struct berth_body body;
	size_t dropped;
	/* a tunnel relayed with splice(2): fd[0] the client, fd[1] the upstream */
	bool spliced;
	int fd[2];
	struct sdir d[2];
};

struct berth_broker {
	struct event_base *base;
	struct berth_host_pattern *pats;
	size_t npats;
	unsigned max_tunnels, max_conns, header_ms, idle_ms, connect_ms;
	size_t bufmax;
	berth_broker_decision_fn on_decision;
	void *data;
	struct berth_dns *dns;
	int stop_fd;
	struct event *stop_ev;
	struct listener ls[MAX_LISTENERS];
	size_t nls;
	/* The addresses the sandbox's resolver gave declared names; touched
	 * on the loop's thread only. */
	struct berth_fakeaddr_map fake;
	struct conn *conns;
	unsigned nconns, ntunnels;

	/* This machine's own interface addresses: refused like loopback
	 * unless the exact literal was declared (a declared name whose DNS
	 * answers the host's public address would otherwise reach services
	 * bound to 0.0.0.0 on it).  Read at start and again when a check
	 * finds the list older than LOCAL_ADDRS_MAX_AGE_MS: a session runs
	 * for days, and the host gains addresses (DHCP, a VPN, SLAAC
	 * temporary addresses).  Touched on the loop's thread only. */
	struct berth_addr *local;
	size_t nlocal;
	uint64_t local_ms;

	pthread_mutex_t mu; /* guards st and refused */
	struct berth_broker_stats st;
	char *refused[BERTH_BROKER_REFUSED_MAX];
	size_t refused_unlisted; /* refusals beyond the list (not told apart: any repeat counts) */
	size_t nrefused;
	size_t nrefused_lookups; /* of them, the resolver's: at most REFUSED_LOOKUPS_MAX */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void timer_in(struct conn *c, uint64_t ms)
{
	struct timeval tv = {.tv_sec = (time_t)(ms / 1000), .tv_usec = (suseconds_t)(ms % 1000) * 1000};

	evtimer_add(c->timer, &tv);
}

/* Read the host's interface addresses (getifaddrs(3)) into b->local; best
 * effort: when they cannot be read, the previous list stays. */
static void load_local_addrs(struct berth_broker *b)
{
	struct ifaddrs *ifa = NULL;
	struct berth_addr *list;
	size_t n = 0, got = 0;

	b->local_ms = now_ms();
	if (getifaddrs(&ifa) < 0)
		return;
	for (struct ifaddrs *i = ifa; i != NULL; i = i->ifa_next)
		if (i->ifa_addr != NULL && (i->ifa_addr->sa_family == AF_INET || i->ifa_addr->sa_family == AF_INET6))
			n++;
	list = calloc(n ? n : 1, sizeof *list);
	for (struct ifaddrs *i = ifa; list != NULL && i != NULL; i = i->ifa_next) {
		if (i->ifa_addr == NULL)
			continue;
		socklen_t sl = i->ifa_addr->sa_family == AF_INET ? sizeof(struct sockaddr_in)
			     : i->ifa_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
								   : 0;
		if (sl != 0 && berth_addr_from_sockaddr(i->ifa_addr, sl, &list[got]) == 0)
			got++;
	}
	freeifaddrs(ifa);
	if (list == NULL)
		return;
	free(b->local);
	b->local = list;
	b->nlocal = got;
}

/* berth_host_addr_allowed(), and not an address of this machine unless
 * that exact literal was declared.  @why: the rule when refused. */
static bool addr_allowed(struct berth_broker *b, const struct berth_host_decision *d,
			 const struct berth_addr *a, const char **why)
{
	if (!berth_host_addr_allowed(d, a, why))
		return false;
	if (d->explicit_literal)
		return true;
	if (now_ms() - b->local_ms >= LOCAL_ADDRS_MAX_AGE_MS)
		load_local_addrs(b);
	for (size_t i = 0; i < b->nlocal; i++)
		if (berth_addr_same_destination(&b->local[i], a)) {
			*why = "an address of this machine (declare that exact IP literal to reach it)";
			return false;
		}
	return true;
}

/* ---- stats and the audit callback ---------------------------------------- */

static void stat_add(struct berth_broker *b, uint64_t *field, uint64_t n)
{
	pthread_mutex_lock(&b->mu);
	*field += n;
	pthread_mutex_unlock(&b->mu);
}

/* "host:port" with IPv6 in brackets. */
static void host_port(const struct conn *c, char *buf, size_t len)
{
	bool v6 = strchr(c->dec.host, ':') != NULL;

	snprintf(buf, len, "%s%s%s:%u", v6 ? "[" : "", c->dec.host, v6 ? "]" : "", c->dec.port);
}

/* Lookups cost the sandbox nothing (no connection, no time-out), so that a
 * flood of made-up names cannot fill the list and hide the connections
 * refused after it, they get at most half of it. */
#define REFUSED_LOOKUPS_MAX (BERTH_BROKER_REFUSED_MAX / 2)

static void remember_refusal(struct berth_broker *b, const char *text, bool lookup)
{
	pthread_mutex_lock(&b->mu);
	bool seen = false;
	for (size_t i = 0; i < b->nrefused && !seen; i++)
		seen = strcmp(b->refused[i], text) == 0;
	if (!seen && b->nrefused < BERTH_BROKER_REFUSED_MAX &&
	    (!lookup || b->nrefused_lookups < REFUSED_LOOKUPS_MAX)) {
		char *dup = strdup(text);
		if (dup != NULL) {
			b->refused[b->nrefused++] = dup;
			b->nrefused_lookups += lookup;
		}
	} else if (!seen) {
		b->refused_unlisted++; /* the summary says how many it leaves out */
	}
	pthread_mutex_unlock(&b->mu);
}

size_t berth_broker_refused_unlisted(struct berth_broker *b)
{
	pthread_mutex_lock(&b->mu);
	size_t n = b->refused_unlisted;
	pthread_mutex_unlock(&b->mu);
	return n;
}

static void report(struct conn *c, enum berth_broker_outcome outcome, const char *reason)
{
	struct berth_broker *b = c->b;

	if (c->reported)
		return;
	c->reported = true;
	pthread_mutex_lock(&b->mu);
	if (outcome == BERTH_BROKER_ALLOWED)
		b->st.allowed++;
	else if (outcome == BERTH_BROKER_REFUSED)
		b->st.refused++;
	else
		b->st.failed++;
	pthread_mutex_unlock(&b->mu);
	if (b->on_decision == NULL)
		return;
	struct berth_broker_decision d = {
	    .kind = c->kind,
	    .outcome = outcome,
	    .host = c->dec.host,
	    .port = c->dec.port,
	    .address = c->addr_txt,
	    .reason = reason,
	    .bytes_up = c->bytes_up,
	    .bytes_down = c->bytes_down,
	    .duration_ms = now_ms() - c->t0_ms,
	};
	b->on_decision(&d, b->data);
}

/* ---- connection life ----------------------------------------------------- */

static void release_slot(struct conn *c)
{
	if (!c->slot)
		return;
	c->slot = false;
	c->b->ntunnels--;
	pthread_mutex_lock(&c->b->mu);
	c->b->st.tunnels = c->b->ntunnels;
	pthread_mutex_unlock(&c->b->mu);
}

/* Free the splice relay's events, pipes, descriptors and pending bytes
 * (each part only if made); the directions are left empty. */
static void splice_release(struct conn *c)
{
	for (int i = 0; i < 2; i++) {
		struct sdir *d = &c->d[i];
		if (d->rd != NULL)
			event_free(d->rd);
		if (d->wr != NULL)
			event_free(d->wr);
		if (d->p[0] >= 0)
			close(d->p[0]);
		if (d->p[1] >= 0)
			close(d->p[1]);
		if (c->fd[i] >= 0)
			close(c->fd[i]);
		free(d->pending);
		c->d[i] = (struct sdir){.p = {-1, -1}};
		c->fd[i] = -1;
	}
}

static void conn_free(struct conn *c)
{
	struct berth_broker *b = c->b;

	if (c->established)
		report(c, BERTH_BROKER_ALLOWED, c->dec.reason);
	if (c->dns != NULL)
		berth_dns_cancel(c->dns);
	release_slot(c);
	if (c->cl != NULL)
		bufferevent_free(c->cl);
	if (c->up != NULL)
		bufferevent_free(c->up);
	if (c->spliced)
		splice_release(c);
	if (c->timer != NULL)
		event_free(c->timer);
	if (c->http != NULL) {
		berth_http_free(c->http);
		free(c->http);
	}
	free(c->head_out);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		b->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	b->nconns--;
	free(c);
}

static void closing_read(struct bufferevent *bev, void *arg);
static void closing_write(struct bufferevent *bev, void *arg);
static void closing_event(struct bufferevent *bev, short what, void *arg);

/* Send @reply (may be empty), then close gracefully (state CLOSING). */
static void close_with(struct conn *c, const void *reply, size_t len)
{
	release_slot(c);
	if (c->up != NULL) {
		bufferevent_free(c->up);
		c->up = NULL;
	}
	c->st = C_CLOSING;
	bufferevent_setcb(c->cl, closing_read, closing_write, closing_event, c);
	bufferevent_setwatermark(c->cl, EV_READ | EV_WRITE, 0, 0);
	if (len > 0)
		bufferevent_write(c->cl, reply, len);
	if (evbuffer_get_length(bufferevent_get_output(c->cl)) == 0) {
		shutdown(bufferevent_getfd(c->cl), SHUT_WR);
		c->cl_shut = true;
	}
	evbuffer_drain(bufferevent_get_input(c->cl), evbuffer_get_length(bufferevent_get_input(c->cl)));
	bufferevent_enable(c->cl, EV_READ | EV_WRITE);
	timer_in(c, CLOSING_LINGER_MS);
}

static void close_http(struct conn *c, int status, const char *reason)
{
	char buf[BERTH_HTTP_REPLY_MAX];
	int n = berth_http_format_error(buf, sizeof(buf), status, reason);

	close_with(c, buf, n > 0 ? (size_t)n : 0);
}

static void close_socks(struct conn *c, enum berth_socks_rep rep)
{
	uint8_t buf[BERTH_SOCKS_REPLY_MAX];
	int n = berth_socks_format_reply(buf, sizeof(buf), rep, NULL);

	close_with(c, buf, n > 0 ? (size_t)n : 0);
}

/* A transparent connection has no protocol of berth's to answer in: it is
 * reset (SO_LINGER 0; the client sees ECONNRESET), at the end of this
 * callback (state CLOSING, timer 0). */
static void reset(struct conn *c)
{
	struct linger lg = {.l_onoff = 1, .l_linger = 0};

	release_slot(c);
	if (c->up != NULL) {
		bufferevent_free(c->up);
		c->up = NULL;
	}
	setsockopt(bufferevent_getfd(c->cl), SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
	bufferevent_disable(c->cl, EV_READ | EV_WRITE);
	c->st = C_CLOSING;
	timer_in(c, 0);
}

/* Refused by the policy: 403 naming the rule, or SOCKS 0x02. */
static void refuse(struct conn *c, const char *reason)
{
	char hp[BERTH_HOST_NAME_MAX + 16], rule[BERTH_HOST_REASON_MAX + 300];

	host_port(c, hp, sizeof(hp));
	snprintf(rule, sizeof(rule), "%s (%s)", hp, reason);
	report(c, BERTH_BROKER_REFUSED, reason);
	remember_refusal(c->b, rule, false);
	if (c->kind == BERTH_BROKER_TRANSPARENT) {
		reset(c);
		return;
	}
	if (c->kind == BERTH_BROKER_SOCKS5) {
		close_socks(c, BERTH_SOCKS_NOT_ALLOWED);
		return;
	}
	char buf[BERTH_HTTP_REPLY_MAX];
	int n = berth_http_format_forbidden(buf, sizeof(buf), rule);
	close_with(c, buf, n > 0 ? (size_t)n : 0);
}

/* Allowed, but the destination could not be reached. */
static void fail(struct conn *c, int status, enum berth_socks_rep rep, const char *reason)
{
	report(c, BERTH_BROKER_FAILED, reason);
	if (c->kind == BERTH_BROKER_TRANSPARENT)
		reset(c);
	else if (c->kind == BERTH_BROKER_SOCKS5)
		close_socks(c, rep);
	else
		close_http(c, status, reason);
}

static void fail_errno(struct conn *c, int e)
{
	char hp[BERTH_HOST_NAME_MAX + 16], why[BERTH_HOST_NAME_MAX + 128];
	enum berth_socks_rep rep = BERTH_SOCKS_HOST_UNREACHABLE;
	int status = 502;

	host_port(c, hp, sizeof(hp));
	snprintf(why, sizeof(why), "cannot connect to %s: %s", hp, strerror(e));
	if (e == ECONNREFUSED)
		rep = BERTH_SOCKS_CONNECTION_REFUSED;
	else if (e == ENETUNREACH)
		rep = BERTH_SOCKS_NETWORK_UNREACHABLE;
	else if (e == ETIMEDOUT) {
		rep = BERTH_SOCKS_TTL_EXPIRED;
		status = 504;
	}
	fail(c, status, rep, why);
}

/* ---- CLOSING ------------------------------------------------------------- */

static void closing_read(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);

	c->closing_read += evbuffer_get_length(in);
	evbuffer_drain(in, evbuffer_get_length(in));
	if (c->closing_read > CLOSING_READ_MAX)
		conn_free(c);
}

static void closing_write(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	if (!c->cl_shut && evbuffer_get_length(bufferevent_get_output(bev)) == 0) {
		shutdown(bufferevent_getfd(bev), SHUT_WR);
		c->cl_shut = true;
	}
}

static void closing_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)what; /* EOF or error: the client is gone */
	conn_free(arg);
}

/* ---- RELAY --------------------------------------------------------------- */

static void count(struct conn *c, bool up, size_t n)
{
	if (n == 0)
		return;
	if (up) {
		c->bytes_up += n;
		stat_add(c->b, &c->b->st.bytes_up, n);
	} else {
		c->bytes_down += n;
		stat_add(c->b, &c->b->st.bytes_down, n);
	}
	c->last_ms = now_ms();
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
		conn_free(c);
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
		conn_free(c);
}

static void relay_event(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;
	bool from_client = bev == c->cl;
	struct bufferevent *dst = from_client ? c->up : c->cl;

	if (!(what & BEV_EVENT_EOF)) { /* an error on either side ends both */
		conn_free(c);
		return;
	}
	if (!relay(c, bev, dst)) {
		conn_free(c);
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
		conn_free(c);
}

/* ---- RELAY, spliced (tunnels) --------------------------------------------- */

static void sdir_events(struct sdir *d)
{
	bool want_rd = !d->eof && d->pending_off == d->pending_len && d->queued < d->cap && !d->slots_full;
	bool want_wr = d->queued > 0 || d->pending_off < d->pending_len;

	if (want_rd != d->rd_on) {
		if (want_rd)
			event_add(d->rd, NULL);
		else
			event_del(d->rd);
		d->rd_on = want_rd;
	}
	if (want_wr != d->wr_on) {
		if (want_wr)
			event_add(d->wr, NULL);
		else
			event_del(d->wr);
		d->wr_on = want_wr;
	}
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
		conn_free(c);
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
	splice_release(c);
	return 0;
}

/* Connected to the checked address: answer the client and relay.  Returns
 * -1 when the connection must end (the caller frees it). */
static int established(struct conn *c)
{
	struct berth_broker *b = c->b;
	char buf[BERTH_SOCKS_REPLY_MAX > 128 ? BERTH_SOCKS_REPLY_MAX : 128];
	size_t rlen = 0;

	c->st = C_RELAY;
	c->established = true;
	c->last_ms = now_ms();
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
	timer_in(c, b->idle_ms);
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

/* ---- CONNECT ------------------------------------------------------------- */

static void connect_next(struct conn *c, int last_errno);

static void up_event(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;
	int e = EVUTIL_SOCKET_ERROR();

	(void)bev;
	if (what & BEV_EVENT_CONNECTED) {
		if (established(c) < 0)
			conn_free(c);
		return;
	}
	bufferevent_free(c->up);
	c->up = NULL;
	connect_next(c, e != 0 ? e : ECONNREFUSED);
}

static void connect_next(struct conn *c, int last_errno)
{
	while (c->next_addr < c->naddrs) {
		const struct berth_addr *a = &c->addrs[c->next_addr++];
		struct sockaddr_storage ss;
		socklen_t sl;

		memset(&ss, 0, sizeof(ss));
		if (a->family == AF_INET) {
			struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
			s4->sin_family = AF_INET;
			s4->sin_port = htons((uint16_t)c->dec.port);
			memcpy(&s4->sin_addr, a->bytes, 4);
			sl = sizeof(*s4);
		} else {
			struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
			s6->sin6_family = AF_INET6;
			s6->sin6_port = htons((uint16_t)c->dec.port);
			memcpy(&s6->sin6_addr, a->bytes, 16);
			sl = sizeof(*s6);
		}
		c->up = bufferevent_socket_new(c->b->base, -1, BEV_OPT_CLOSE_ON_FREE);
		if (c->up == NULL) {
			last_errno = ENOMEM;
			break;
		}
		bufferevent_setcb(c->up, NULL, NULL, up_event, c);
		c->st = C_CONNECT;
		if (bufferevent_socket_connect(c->up, (struct sockaddr *)&ss, (int)sl) == 0)
			return;
		last_errno = errno != 0 ? errno : ECONNREFUSED;
		bufferevent_free(c->up);
		c->up = NULL;
	}
	fail_errno(c, last_errno);
}

/* ---- DNS ------------------------------------------------------------------ */

static void resolved(void *arg, int status, const char *errtext, const struct berth_addr *addrs, size_t n)
{
	struct conn *c = arg;
	char hp[BERTH_HOST_NAME_MAX + 16], why[BERTH_HOST_REASON_MAX];

	c->dns = NULL;
	host_port(c, hp, sizeof(hp));
	if (status != 0) {
		snprintf(why, sizeof(why), "cannot resolve `%s`: %s", c->dec.host, errtext);
		fail(c, status == ETIMEDOUT ? 504 : 502, BERTH_SOCKS_HOST_UNREACHABLE, why);
		return;
	}
	/* Every address is checked: one refused address refuses the name. */
	for (size_t i = 0; i < n; i++) {
		const char *rule = NULL;
		if (!addr_allowed(c->b, &c->dec, &addrs[i], &rule)) {
			berth_addr_format(&addrs[i], c->addr_txt, sizeof(c->addr_txt));
			snprintf(why, sizeof(why), "`%s` resolves to %s: %s", c->dec.host, c->addr_txt, rule);
			refuse(c, why);
			return;
		}
		bool dup = false;
		for (size_t j = 0; j < c->naddrs && !dup; j++)
			dup = berth_addr_equal(&c->addrs[j], &addrs[i]);
		if (!dup && c->naddrs < MAX_ADDRS)
			c->addrs[c->naddrs++] = addrs[i];
	}
	if (c->naddrs == 0) {
		snprintf(why, sizeof(why), "cannot resolve `%s`: no address", c->dec.host);
		fail(c, 502, BERTH_SOCKS_HOST_UNREACHABLE, why);
		return;
	}
	connect_next(c, ECONNREFUSED);
}

/* ---- HEAD ---------------------------------------------------------------- */

/* The first 12 bytes of an IPv4-mapped IPv6 address (RFC 4291 2.5.5.2). */
static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

/* A complete request for dec.host:dec.port: decide, take a slot, resolve or connect. */
static void request(struct conn *c, const char *host, unsigned port)
{
	struct berth_broker *b = c->b;
	struct berth_addr fa;
	const char *name;

	/* An address the sandbox's resolver gave a name means that name, in
	 * a transparent connection and in a proxy request alike (a SOCKS
	 * client that resolved the name itself, a CONNECT to the address),
	 * also as an IPv4-mapped IPv6 address (a dual-stack client's spelling,
	 * `[::ffff:198.18.0.1]`, as transparent_request() reads it too). */
	int spelling = berth_addr_parse_literal(host, &fa);
	if (spelling == BERTH_ADDR_V6 && memcmp(fa.bytes, v4_mapped, sizeof v4_mapped) == 0) {
		memmove(fa.bytes, fa.bytes + 12, 4);
		spelling = BERTH_ADDR_V4;
	}
	if (spelling == BERTH_ADDR_V4 && (name = berth_fakeaddr_lookup(&b->fake, fa.bytes)) != NULL)
		host = name;

	bufferevent_disable(c->cl, EV_READ); /* what follows the head waits for the upstream */
	if (berth_host_decide(b->pats, b->npats, host, port, &c->dec) != 1) {
		if (c->dec.host[0] == '\0')
			snprintf(c->dec.host, sizeof(c->dec.host), "%s", host);
		refuse(c, c->dec.reason);
		return;
	}
	if (b->ntunnels >= b->max_tunnels) {
		char why[96];
		snprintf(why, sizeof(why), "too many open connections (limit %u)", b->max_tunnels);
		fail(c, 503, BERTH_SOCKS_GENERAL_FAILURE, why);
		return;
	}
	c->slot = true;
	b->ntunnels++;
	pthread_mutex_lock(&b->mu);
	b->st.tunnels = b->ntunnels;
	if (b->ntunnels > b->st.tunnels_peak)
		b->st.tunnels_peak = b->ntunnels;
	pthread_mutex_unlock(&b->mu);
	timer_in(c, b->connect_ms);
	if (c->dec.is_literal) {
		const char *rule = NULL;
		if (!addr_allowed(b, &c->dec, &c->dec.literal, &rule)) {
			refuse(c, rule);
			return;
		}
		c->addrs[0] = c->dec.literal;
		c->naddrs = 1;
		connect_next(c, ECONNREFUSED);
		return;
	}
	c->st = C_DNS;
	/* may call resolved() before it returns */
	struct berth_dns_query *q = berth_dns_resolve(b->dns, c->dec.host, resolved, c);
	if (c->st == C_DNS)
		c->dns = q;
}

static void head_http(struct conn *c)
{
	struct berth_http_request *req = &c->http->req;

	c->connect = req->connect;
	c->body_kind = req->body == BERTH_HTTP_BODY_CHUNKED  ? BERTH_BODY_CHUNKED
		       : req->body == BERTH_HTTP_BODY_LENGTH ? BERTH_BODY_LENGTH
							     : BERTH_BODY_NONE;
	c->body_length = req->content_length;
	if (!req->connect) {
		struct berth_http_error e;
		long n = berth_http_rewrite_origin(req, NULL, 0, &e);
		if (n >= 0 && (c->head_out = malloc((size_t)n + 1)) == NULL) {
			close_http(c, 500, "out of memory");
			return;
		}
		if (n < 0 || berth_http_rewrite_origin(req, c->head_out, (size_t)n + 1, &e) != n) {
			stat_add(c->b, &c->b->st.bad_requests, 1);
			close_http(c, e.status != 0 ? e.status : 400, e.reason);
			return;
		}
		c->head_len = (size_t)n;
	}
	char host[BERTH_TARGET_HOST_MAX + 1];
	unsigned port = req->port;
	memcpy(host, req->host, sizeof(host));
	berth_http_free(c->http);
	free(c->http);
	c->http = NULL;
	request(c, host, port);
}

static void head_read(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);

	while (c->st == C_HEAD && evbuffer_get_length(in) > 0) {
		struct evbuffer_iovec v;
		size_t used = 0;

		if (evbuffer_peek(in, -1, NULL, &v, 1) < 1)
			break;
		if (c->kind == BERTH_BROKER_HTTP) {
			enum berth_http_verdict r = berth_http_feed(c->http, v.iov_base, v.iov_len, &used);
			evbuffer_drain(in, used);
			if (r == BERTH_HTTP_BAD) {
				stat_add(c->b, &c->b->st.bad_requests, 1);
				close_http(c, c->http->err.status, c->http->err.reason);
			} else if (r == BERTH_HTTP_DONE) {
				head_http(c);
			}
			continue;
		}
		enum berth_socks_verdict r = berth_socks_feed(&c->socks, v.iov_base, v.iov_len, &used);
		evbuffer_drain(in, used);
		if (r == BERTH_SOCKS_REPLY) {
			bufferevent_write(bev, c->socks.reply, c->socks.reply_len);
		} else if (r == BERTH_SOCKS_BAD) {
			stat_add(c->b, &c->b->st.bad_requests, 1);
			close_with(c, c->socks.reply, c->socks.reply_len);
		} else if (r == BERTH_SOCKS_DONE) {
			request(c, c->socks.req.host, c->socks.req.port);
		}
	}
}

static void head_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)what; /* EOF or error before a complete request */
	conn_free(arg);
}

/* The one timer of a connection; what it means depends on the state. */
static void conn_timer(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	char why[BERTH_HOST_NAME_MAX + 64], hp[BERTH_HOST_NAME_MAX + 16];

	(void)fd;
	(void)what;
	switch (c->st) {
	case C_HEAD:
		stat_add(c->b, &c->b->st.bad_requests, 1);
		if (c->kind == BERTH_BROKER_HTTP)
			close_http(c, 408, "request head not received in time");
		else
			close_with(c, NULL, 0);
		return;
	case C_DNS:
	case C_CONNECT:
		host_port(c, hp, sizeof(hp));
		snprintf(why, sizeof(why), "connecting to %s timed out", hp);
		fail(c, 504, BERTH_SOCKS_TTL_EXPIRED, why);
		return;
	case C_RELAY: {
		uint64_t idle = now_ms() - c->last_ms;
		if (idle >= c->b->idle_ms)
			conn_free(c);
		else
			timer_in(c, c->b->idle_ms - idle);
		return;
	}
	case C_CLOSING:
		conn_free(c);
		return;
	default:
		return;
	}
}

/*
 * A transparent connection: its destination is the accepted socket's own
 * address.  One the resolver gave a name is a request for that name; any
 * other is a request for the IP literal (decided as a proxy request for it
 * would be: only a declared literal, on a declared port, is reached).
 */
static void transparent_request(struct conn *c, int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	struct berth_addr a;
	char host[BERTH_ADDR_STRLEN];
	unsigned port;

	c->connect = true;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0 ||
	    berth_addr_from_sockaddr((struct sockaddr *)&ss, sl, &a) < 0) {
		snprintf(c->dec.host, sizeof c->dec.host, "?");
		refuse(c, "the destination of the connection is unknown");
		return;
	}
	port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
					: ntohs(((struct sockaddr_in *)&ss)->sin_port);
	/* a dual-stack listener sees IPv4 clients as ::ffff:a.b.c.d */
	if (a.family == AF_INET6 && memcmp(a.bytes, v4_mapped, sizeof v4_mapped) == 0) {
		a.family = AF_INET;
		memmove(a.bytes, a.bytes + 12, 4);
		memset(a.bytes + 4, 0, 12);
	}
	berth_addr_format(&a, host, sizeof host);
	request(c, host, port); /* which maps the resolver's addresses back to their names */
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen, void *arg)
{
	struct listener *li = arg;
	struct berth_broker *b = li->b;
	struct conn *c = NULL;

	(void)l;
	(void)sa;
	(void)salen;
	stat_add(b, &b->st.connections, 1);
	if (b->nconns >= b->max_conns || (c = calloc(1, sizeof(*c))) == NULL) {
		close(fd);
		return;
	}
	c->b = b;
	c->kind = li->kind;
	c->st = C_HEAD;
	c->t0_ms = now_ms();
	c->cl = bufferevent_socket_new(b->base, fd, BEV_OPT_CLOSE_ON_FREE);
	c->timer = evtimer_new(b->base, conn_timer, c);
	if (c->kind == BERTH_BROKER_HTTP && (c->http = malloc(sizeof(*c->http))) != NULL)
		berth_http_init(c->http, BERTH_HTTP_PROXY);
	else
		berth_socks_init(&c->socks);
	c->next = b->conns;
	if (b->conns != NULL)
		b->conns->prev = c;
	b->conns = c;
	b->nconns++;
	if (c->cl == NULL || c->timer == NULL || (c->kind == BERTH_BROKER_HTTP && c->http == NULL)) {
		if (c->cl == NULL)
			close(fd);
		conn_free(c);
		return;
	}
	if (c->kind == BERTH_BROKER_TRANSPARENT) {
		transparent_request(c, fd);
		return;
	}
	bufferevent_setcb(c->cl, head_read, NULL, head_event, c);
	bufferevent_enable(c->cl, EV_READ | EV_WRITE);
	timer_in(c, b->header_ms);
}

/*
 * accept(2) failed (EMFILE, ENFILE, ENOBUFS ...): the pending connection stays
 * in the backlog and the listener would be called again at once; pause it for
 * a moment instead of spinning.
 */
static void accept_error(struct evconnlistener *l, void *arg)
{
	struct listener *li = arg;
	struct timeval tv = {.tv_sec = 0, .tv_usec = 100000};

	evconnlistener_disable(l);
	evtimer_add(li->retry, &tv);
}

static void accept_retry(evutil_socket_t fd, short what, void *arg)
{
	struct listener *li = arg;

	(void)fd;
	(void)what;
	evconnlistener_enable(li->l);
}

/* ---- the sandbox's resolver -------------------------------------------------- */

/* A name the resolver refused: the summary line and the audit trail, as
 * any refusal (port 0: no port is known before a connection). */
static void dns_refused(struct berth_broker *b, const char *name, const char *reason)
{
	char rule[BERTH_HOST_NAME_MAX + BERTH_HOST_REASON_MAX + 40];

	snprintf(rule, sizeof rule, "%s (name lookup: %s)", name[0] != '\0' ? name : ".", reason);
	remember_refusal(b, rule, true);
	pthread_mutex_lock(&b->mu);
	b->st.refused++;
	pthread_mutex_unlock(&b->mu);
	if (b->on_decision == NULL)
		return;
	struct berth_broker_decision d = {
	    .kind = BERTH_BROKER_DNS,
	    .outcome = BERTH_BROKER_REFUSED,
	    .host = name,
	    .port = 0,
	    .address = "",
	    .reason = reason,
	};
	b->on_decision(&d, b->data);
}

/* The answer to one query (see BERTH_BROKER_DNS in broker.h). */
static int dns_answer(struct berth_broker *b, const uint8_t *in, size_t len, uint8_t *out, size_t cap)
{
	struct berth_dns_query q;
	struct berth_host_decision d;
	uint8_t a[4];
	int rc = berth_dnsmsg_parse(in, len, &q);

	if (rc < 0)
		return -1;
	if (rc != BERTH_DNS_NOERROR)
		return berth_dnsmsg_answer(&q, (enum berth_dns_rcode)rc, NULL, 0, out, cap);
	if (berth_host_name_declared(b->pats, b->npats, q.name, &d) != 1) {
		/* A name that is an address (`1.2.3.4`) is not refused: resolvers
		 * never ask for one, and a client that does gets no record. */
		if (d.is_literal)
			return berth_dnsmsg_answer(&q, BERTH_DNS_NOERROR, NULL, 0, out, cap);
		dns_refused(b, d.host[0] != '\0' ? d.host : q.name, d.reason);
		return berth_dnsmsg_answer(&q, BERTH_DNS_NXDOMAIN, NULL, 0, out, cap);
	}
	if (berth_fakeaddr_assign(&b->fake, d.host, a) < 0) {
		dns_refused(b, d.host, "more declared names asked for than the resolver has addresses");
		return berth_dnsmsg_answer(&q, BERTH_DNS_SERVFAIL, NULL, 0, out, cap);
	}
	return berth_dnsmsg_answer(&q, BERTH_DNS_NOERROR, a, DNS_TTL, out, cap);
}

static void dns_read(evutil_socket_t fd, short what, void *arg)
{
	struct listener *li = arg;
	uint8_t in[1500], out[BERTH_DNS_ANSWER_MAX];

	(void)what;
	/* a bounded number per callback: a flood cannot starve the tunnels */
	for (int i = 0; i < 64; i++) {
		struct sockaddr_storage from;
		socklen_t fl = sizeof from;
		ssize_t n = recvfrom(fd, in, sizeof in, MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *)&from, &fl);
		if (n < 0)
			return;
		if ((size_t)n > sizeof in)
			continue; /* truncated: not a stub resolver's query */
		int m = dns_answer(li->b, in, (size_t)n, out, sizeof out);
		if (m > 0)
			(void)sendto(fd, out, (size_t)m, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&from, fl);
	}
}

/* ---- the broker ---------------------------------------------------------- */

static void stop_cb(evutil_socket_t fd, short what, void *arg)
{
	struct berth_broker *b = arg;
	uint64_t v;

	(void)what;
	while (read(fd, &v, sizeof(v)) > 0)
		;
	event_base_loopbreak(b->base);
}

struct berth_broker *berth_broker_new(const struct berth_broker_opts *o, struct berth_error *err)
{
	struct berth_broker *b = calloc(1, sizeof(*b));

	if (b == NULL) {
		berth_err(err, ENOMEM, "broker");
		return NULL;
	}
	pthread_mutex_init(&b->mu, NULL);
	b->stop_fd = -1;
	b->max_tunnels = o->max_tunnels ? o->max_tunnels : BERTH_BROKER_DEFAULT_MAX_TUNNELS;
	/* connections still sending their head count too, up to twice the tunnels */
	b->max_conns = 2 * b->max_tunnels + 64;
	/* Each spliced tunnel holds six descriptors: raise the soft
	 * RLIMIT_NOFILE of this process toward the hard one so that the cap,
	 * not EMFILE, is what limits tunnels (a tunnel that cannot get its
	 * pipes falls back to two descriptors and copies). */
	struct rlimit rl;
	rlim_t want = (rlim_t)b->max_conns * FDS_PER_TUNNEL + 256;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	b->header_ms = o->header_timeout_ms ? o->header_timeout_ms : BERTH_BROKER_DEFAULT_HEADER_TIMEOUT_MS;
	b->idle_ms = o->idle_timeout_ms ? o->idle_timeout_ms : BERTH_BROKER_DEFAULT_IDLE_TIMEOUT_MS;
	b->connect_ms =
	    o->connect_timeout_ms ? o->connect_timeout_ms : BERTH_BROKER_DEFAULT_CONNECT_TIMEOUT_MS;
	b->bufmax = o->buffer_max ? o->buffer_max : BERTH_BROKER_DEFAULT_BUFFER;
	if (b->bufmax < 16384)
		b->bufmax = 16384;
	b->on_decision = o->on_decision;
	b->data = o->data;
	load_local_addrs(b);
	if (o->n_patterns > 0) {
		b->pats = calloc(o->n_patterns, sizeof(*b->pats));
		if (b->pats == NULL) {
			berth_err(err, ENOMEM, "broker");
			goto fail;
		}
		memcpy(b->pats, o->patterns, o->n_patterns * sizeof(*b->pats));
		b->npats = o->n_patterns;
	}
	if (berth_fakeaddr_init(&b->fake, b->pats, b->npats) < 0) {
		berth_err(err, ENOMEM, "broker");
		goto fail;
	}
	b->base = event_base_new();
	if (b->base == NULL) {
		berth_err(err, errno, "broker: cannot create the event loop");
		goto fail;
	}
	b->dns = berth_dns_new(b->base, o->dns_server, err);
	if (b->dns == NULL)
		goto fail;
	b->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (b->stop_fd < 0) {
		berth_err(err, errno, "broker: eventfd");
		goto fail;
	}
	b->stop_ev = event_new(b->base, b->stop_fd, EV_READ | EV_PERSIST, stop_cb, b);
	if (b->stop_ev == NULL || event_add(b->stop_ev, NULL) < 0) {
		berth_err(err, ENOMEM, "broker: stop event");
		goto fail;
	}
	return b;
fail:
	berth_broker_free(b);
	return NULL;
}

int berth_broker_add_listener(struct berth_broker *b, int fd, enum berth_broker_kind kind,
			      struct berth_error *err)
{
	if (kind != BERTH_BROKER_HTTP && kind != BERTH_BROKER_SOCKS5 && kind != BERTH_BROKER_TRANSPARENT &&
	    kind != BERTH_BROKER_DNS) {
		close(fd);
		return berth_err(err, EINVAL, "broker: unknown listener kind %d", (int)kind);
	}
	if (b->nls >= MAX_LISTENERS) {
		close(fd);
		return berth_err(err, EMFILE, "broker: more than %d listeners", MAX_LISTENERS);
	}
	struct listener *li = &b->ls[b->nls];
	li->b = b;
	li->kind = kind;
	evutil_make_socket_nonblocking(fd);
	if (kind == BERTH_BROKER_DNS) {
		li->udp = event_new(b->base, fd, EV_READ | EV_PERSIST, dns_read, li);
		if (li->udp == NULL || event_add(li->udp, NULL) < 0) {
			if (li->udp != NULL)
				event_free(li->udp);
			li->udp = NULL;
			close(fd);
			return berth_err(err, ENOMEM, "broker: resolver");
		}
		b->nls++;
		return 0;
	}
	/* backlog 0: the socket is already listening (it may come from another namespace) */
	li->l =
	    evconnlistener_new(b->base, accept_cb, li, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd);
	if (li->l == NULL) {
		close(fd);
		return berth_err(err, errno, "broker: cannot listen on fd %d", fd);
	}
	li->retry = evtimer_new(b->base, accept_retry, li);
	if (li->retry == NULL) {
		evconnlistener_free(li->l);
		return berth_err(err, ENOMEM, "broker: listener");
	}
	evconnlistener_set_error_cb(li->l, accept_error);
	b->nls++;
	return 0;
}

int berth_broker_run(struct berth_broker *b)
{
	sigset_t pipe_set, old;
	struct timespec zero = {0, 0};
	int r;

	/* A write to a socket the peer closed raises SIGPIPE in the writing
	 * thread; the loop wants EPIPE instead.  Blocked while it runs, and a
	 * pending one is taken before the old mask comes back. */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	r = event_base_dispatch(b->base) < 0 ? -1 : 0;
	while (sigtimedwait(&pipe_set, NULL, &zero) == SIGPIPE)
		;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

void berth_broker_stop(struct berth_broker *b)
{
	uint64_t one = 1;
	ssize_t r = write(b->stop_fd, &one, sizeof(one));

	(void)r;
}

void berth_broker_free(struct berth_broker *b)
{
	if (b == NULL)
		return;
	while (b->conns != NULL)
		conn_free(b->conns);
	for (size_t i = 0; i < b->nls; i++) {
		if (b->ls[i].udp != NULL) {
			close(event_get_fd(b->ls[i].udp));
			event_free(b->ls[i].udp);
			continue;
		}
		evconnlistener_free(b->ls[i].l);
		event_free(b->ls[i].retry);
	}
	berth_fakeaddr_free(&b->fake);
	berth_dns_free(b->dns);
	if (b->stop_ev != NULL)
		event_free(b->stop_ev);
	if (b->stop_fd >= 0)
		close(b->stop_fd);
	if (b->base != NULL)
		event_base_free(b->base);
	for (size_t i = 0; i < b->nrefused; i++)
		free(b->refused[i]);
	free(b->pats);
	free(b->local);
	pthread_mutex_destroy(&b->mu);
	free(b);
}

void berth_broker_stats(struct berth_broker *b, struct berth_broker_stats *s)
{
	pthread_mutex_lock(&b->mu);
	*s = b->st;
	pthread_mutex_unlock(&b->mu);
}

size_t berth_broker_refused_count(struct berth_broker *b)
{
	pthread_mutex_lock(&b->mu);
	size_t n = b->nrefused;
	pthread_mutex_unlock(&b->mu);
	return n;
}

int berth_broker_refused(struct berth_broker *b, size_t i, char *buf, size_t len)
{
	int r = -1;

	pthread_mutex_lock(&b->mu);
	if (i < b->nrefused) {
		snprintf(buf, len, "%s", b->refused[i]);
		r = 0;
	}
	pthread_mutex_unlock(&b->mu);
	return r;
}
