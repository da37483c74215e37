/* SPDX-License-Identifier: MIT */
/*
 * broker_request.c - one request of the egress broker (broker.c), states HEAD, DNS and
 * CONNECT: the head read and decided (proxy or transparent), the name resolved,
 * the checked addresses connected; and the listeners' accept callbacks.
 */

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "../util/sys.h"
#include "broker_int.h"

/* ---- CONNECT ------------------------------------------------------------- */

static void connect_next(struct conn *c, int last_errno);

static void up_event(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;
	int e = EVUTIL_SOCKET_ERROR();

	(void)bev;
	if (what & BEV_EVENT_CONNECTED) {
		if (berth_bk_established(c) < 0)
			berth_bk_conn_free(c);
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
	berth_bk_fail_errno(c, last_errno);
}

/* ---- DNS ------------------------------------------------------------------ */

static void resolved(void *arg, int status, const char *errtext, const struct berth_addr *addrs, size_t n)
{
	struct conn *c = arg;
	char hp[BERTH_HOST_NAME_MAX + 16], why[BERTH_HOST_REASON_MAX];

	c->dns = NULL;
	berth_bk_host_port(c, hp, sizeof(hp));
	if (status != 0) {
		snprintf(why, sizeof(why), "cannot resolve `%s`: %s", c->dec.host, errtext);
		berth_bk_fail(c, status == ETIMEDOUT ? 504 : 502, BERTH_SOCKS_HOST_UNREACHABLE, why);
		return;
	}
	/* Every address is checked: one refused address refuses the name. */
	for (size_t i = 0; i < n; i++) {
		const char *rule = NULL;
		if (!berth_bk_addr_allowed(c->b, &c->dec, &addrs[i], &rule)) {
			berth_addr_format(&addrs[i], c->addr_txt, sizeof(c->addr_txt));
			snprintf(why, sizeof(why), "`%s` resolves to %s: %s", c->dec.host, c->addr_txt, rule);
			berth_bk_refuse(c, why);
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
		berth_bk_fail(c, 502, BERTH_SOCKS_HOST_UNREACHABLE, why);
		return;
	}
	connect_next(c, ECONNREFUSED);
}

/* ---- HEAD ---------------------------------------------------------------- */

/* The first 12 bytes of an IPv4-mapped IPv6 address (RFC 4291 2.5.5.2). */
static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

/* --ask: a host no pattern declares is held for a human (opts.on_ask);
 * true when it waits. */
static bool hold(struct conn *c, const char *host, unsigned port)
{
	struct berth_broker *b = c->b;

	if (b->on_ask == NULL ||
	    (strncmp(c->dec.reason, "not declared", 12) != 0 && strncmp(c->dec.reason, "port ", 5) != 0))
		return false;
	c->ask_token = ++b->ask_next;
	snprintf(c->ask_host, sizeof(c->ask_host), "%s", host);
	c->ask_port = port;
	/* the head's timer would end it first: the ask's deadline and a margin */
	berth_bk_timer_in(c, (uint64_t)b->ask_ms + 5000);
	if (b->on_ask(b->data, host, port, c->ask_token) == 1)
		return true;
	c->ask_token = 0;
	return false;
}

static void request(struct conn *c, const char *host, unsigned port);

void berth_bk_ask_answered(struct berth_broker *b, uint64_t token, bool grant)
{
	struct berth_host_pattern *np, p;
	char text[BERTH_HOST_NAME_MAX + 16], reason[BERTH_HOST_REASON_MAX];
	struct conn *c;

	for (c = b->conns; c != NULL && c->ask_token != token; c = c->next)
		;
	if (c == NULL || token == 0)
		return; /* the client is gone */
	c->ask_token = 0;
	if (!grant) {
		berth_bk_refuse(c, "not declared; not granted (berth run --ask)");
		return;
	}
	snprintf(text, sizeof(text), strchr(c->ask_host, ':') != NULL ? "[%s]:%u" : "%s:%u", c->ask_host,
		 c->ask_port);
	if (berth_host_pattern_parse(text, &p, reason, sizeof(reason)) < 0 ||
	    (np = realloc(b->pats, (b->npats + 1) * sizeof(*b->pats))) == NULL) {
		berth_bk_refuse(c, "granted, but not a pattern berth can declare");
		return;
	}
	np[b->npats++] = p;
	b->pats = np;
	request(c, c->ask_host, c->ask_port);
}

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
		if (hold(c, host, port))
			return;
		berth_bk_refuse(c, c->dec.reason);
		return;
	}
	if (b->ntunnels >= b->max_tunnels) {
		char why[96];
		snprintf(why, sizeof(why), "too many open connections (limit %u)", b->max_tunnels);
		berth_bk_fail(c, 503, BERTH_SOCKS_GENERAL_FAILURE, why);
		return;
	}
	c->slot = true;
	b->ntunnels++;
	pthread_mutex_lock(&b->mu);
	b->st.tunnels = b->ntunnels;
	if (b->ntunnels > b->st.tunnels_peak)
		b->st.tunnels_peak = b->ntunnels;
	pthread_mutex_unlock(&b->mu);
	berth_bk_timer_in(c, b->connect_ms);
	if (c->dec.is_literal) {
		const char *rule = NULL;
		if (!berth_bk_addr_allowed(b, &c->dec, &c->dec.literal, &rule)) {
			berth_bk_refuse(c, rule);
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
			berth_bk_close_http(c, 500, "out of memory");
			return;
		}
		if (n < 0 || berth_http_rewrite_origin(req, c->head_out, (size_t)n + 1, &e) != n) {
			berth_bk_stat_add(c->b, &c->b->st.bad_requests, 1);
			berth_bk_close_http(c, e.status != 0 ? e.status : 400, e.reason);
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
				berth_bk_stat_add(c->b, &c->b->st.bad_requests, 1);
				berth_bk_close_http(c, c->http->err.status, c->http->err.reason);
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
			berth_bk_stat_add(c->b, &c->b->st.bad_requests, 1);
			berth_bk_close_with(c, c->socks.reply, c->socks.reply_len);
		} else if (r == BERTH_SOCKS_DONE) {
			request(c, c->socks.req.host, c->socks.req.port);
		}
	}
}

static void head_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)what; /* EOF or error before a complete request */
	berth_bk_conn_free(arg);
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
		berth_bk_stat_add(c->b, &c->b->st.bad_requests, 1);
		if (c->kind == BERTH_BROKER_HTTP)
			berth_bk_close_http(c, 408, "request head not received in time");
		else
			berth_bk_close_with(c, NULL, 0);
		return;
	case C_DNS:
	case C_CONNECT:
		berth_bk_host_port(c, hp, sizeof(hp));
		snprintf(why, sizeof(why), "connecting to %s timed out", hp);
		berth_bk_fail(c, 504, BERTH_SOCKS_TTL_EXPIRED, why);
		return;
	case C_RELAY: {
		uint64_t idle = berth_now_ms() - c->last_ms;
		if (idle >= c->b->idle_ms)
			berth_bk_conn_free(c);
		else
			berth_bk_timer_in(c, c->b->idle_ms - idle);
		return;
	}
	case C_CLOSING:
		berth_bk_conn_free(c);
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
static void transparent_request(struct conn *c, int fd, const struct sockaddr_storage *claimed)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	struct berth_addr a;
	char host[BERTH_ADDR_STRLEN];
	unsigned port;

	c->connect = true;
	if (claimed != NULL) {
		ss = *claimed;
		sl = ss.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	}
	if ((claimed == NULL && getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) ||
	    berth_addr_from_sockaddr((struct sockaddr *)&ss, sl, &a) < 0) {
		snprintf(c->dec.host, sizeof c->dec.host, "?");
		berth_bk_refuse(c, "the destination of the connection is unknown");
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

/* A connection of @kind on @fd begins; @claimed: a transparent one's
 * destination when it is not @fd's own (a handed-over stream's). */
static void conn_begin(struct berth_broker *b, int fd, enum berth_broker_kind kind,
		       const struct sockaddr_storage *claimed)
{
	struct conn *c = NULL;

	berth_bk_stat_add(b, &b->st.connections, 1);
	if (b->nconns >= b->max_conns || (c = calloc(1, sizeof(*c))) == NULL) {
		close(fd);
		return;
	}
	c->b = b;
	c->kind = kind;
	c->st = C_HEAD;
	c->t0_ms = berth_now_ms();
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
		berth_bk_conn_free(c);
		return;
	}
	if (c->kind == BERTH_BROKER_TRANSPARENT) {
		transparent_request(c, fd, claimed);
		return;
	}
	bufferevent_setcb(c->cl, head_read, NULL, head_event, c);
	bufferevent_enable(c->cl, EV_READ | EV_WRITE);
	berth_bk_timer_in(c, b->header_ms);
}

void berth_bk_accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
			void *arg)
{
	struct listener *li = arg;

	(void)l;
	(void)sa;
	(void)salen;
	conn_begin(li->b, fd, li->kind, NULL);
}

/* A handed-over message's destination, strictly: a canonical address
 * (inet_pton) and a port; false when it is not one. */
static bool handoff_dst(const struct berth_broker_handoff *h, struct sockaddr_storage *ss)
{
	struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof *ss);
	if (memchr(h->dst, '\0', sizeof h->dst) == NULL || h->port < 1 || h->port > 65535)
		return false;
	if (inet_pton(AF_INET, h->dst, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)h->port);
		return true;
	}
	if (inet_pton(AF_INET6, h->dst, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)h->port);
		return true;
	}
	return false;
}

/* The descriptors of a message that is not one connection, closed. */
static void close_rights(struct msghdr *mh)
{
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm != NULL; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof fd);
			close(fd);
		}
	}
}

void berth_bk_handoff_read(evutil_socket_t sock, short what, void *arg)
{
	struct listener *li = arg;

	(void)what;
	/* a bounded number per callback, as the resolver's */
	for (int i = 0; i < 64; i++) {
		struct berth_broker_handoff h;
		union {
			char buf[CMSG_SPACE(4 * sizeof(int))];
			struct cmsghdr align;
		} u;
		struct iovec iov = {.iov_base = &h, .iov_len = sizeof h};
		struct msghdr mh = {
		    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
		struct sockaddr_storage ss;
		struct cmsghdr *cm;
		int fd = -1;
		ssize_t n = recvmsg(sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

		if (n < 0)
			return;
		cm = CMSG_FIRSTHDR(&mh);
		if (cm != NULL && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
		    cm->cmsg_len == CMSG_LEN(sizeof(int)) && CMSG_NXTHDR(&mh, cm) == NULL)
			memcpy(&fd, CMSG_DATA(cm), sizeof fd);
		if (fd < 0 || n != (ssize_t)sizeof h || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
		    (h.kind != BERTH_BROKER_HTTP && h.kind != BERTH_BROKER_SOCKS5 &&
		     h.kind != BERTH_BROKER_TRANSPARENT)) {
			close_rights(&mh);
			continue;
		}
		/* the loop never blocks: as accepted sockets are (libevent's) */
		evutil_make_socket_nonblocking(fd);
		if (h.kind == BERTH_BROKER_TRANSPARENT && !handoff_dst(&h, &ss)) {
			/* refused as a transparent connection whose destination
			 * is unknown: reported, the client reset */
			conn_begin(li->b, fd, BERTH_BROKER_TRANSPARENT, NULL);
			continue;
		}
		conn_begin(li->b, fd, (enum berth_broker_kind)h.kind,
			   h.kind == BERTH_BROKER_TRANSPARENT ? &ss : NULL);
	}
}

/*
 * accept(2) failed (EMFILE, ENFILE, ENOBUFS ...): the pending connection stays
 * in the backlog and the listener would be called again at once; pause it for
 * a moment instead of spinning.
 */
void berth_bk_accept_error(struct evconnlistener *l, void *arg)
{
	struct listener *li = arg;
	struct timeval tv = {.tv_sec = 0, .tv_usec = 100000};

	evconnlistener_disable(l);
	evtimer_add(li->retry, &tv);
}

void berth_bk_accept_retry(evutil_socket_t fd, short what, void *arg)
{
	struct listener *li = arg;

	(void)fd;
	(void)what;
	evconnlistener_enable(li->l);
}
