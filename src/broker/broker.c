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

#include <ifaddrs.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/resource.h>

#include <event2/buffer.h>

#include "../util/cleanup.h"
#include "../util/sys.h"
#include "broker_int.h"

void berth_bk_timer_in(struct conn *c, uint64_t ms)
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

	b->local_ms = berth_now_ms();
	if (getifaddrs(&ifa) < 0)
		return;
	for (struct ifaddrs *i = ifa; i != NULL; i = i->ifa_next)
		if (i->ifa_addr != NULL &&
		    (i->ifa_addr->sa_family == AF_INET || i->ifa_addr->sa_family == AF_INET6))
			n++;
	list = calloc(n ? n : 1, sizeof *list);
	for (struct ifaddrs *i = ifa; list != NULL && i != NULL; i = i->ifa_next) {
		if (i->ifa_addr == NULL)
			continue;
		socklen_t sl = i->ifa_addr->sa_family == AF_INET    ? sizeof(struct sockaddr_in)
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
bool berth_bk_addr_allowed(struct berth_broker *b, const struct berth_host_decision *d,
			   const struct berth_addr *a, const char **why)
{
	if (!berth_host_addr_allowed(d, a, why))
		return false;
	if (d->explicit_literal)
		return true;
	if (berth_now_ms() - b->local_ms >= LOCAL_ADDRS_MAX_AGE_MS)
		load_local_addrs(b);
	for (size_t i = 0; i < b->nlocal; i++)
		if (berth_addr_same_destination(&b->local[i], a)) {
			*why = "an address of this machine (declare that exact IP literal to reach it)";
			return false;
		}
	return true;
}

/* ---- stats and the audit callback ---------------------------------------- */

void berth_bk_stat_add(struct berth_broker *b, uint64_t *field, uint64_t n)
{
	pthread_mutex_lock(&b->mu);
	*field += n;
	pthread_mutex_unlock(&b->mu);
}

/* "host:port" with IPv6 in brackets. */
void berth_bk_host_port(const struct conn *c, char *buf, size_t len)
{
	bool v6 = strchr(c->dec.host, ':') != NULL;

	snprintf(buf, len, "%s%s%s:%u", v6 ? "[" : "", c->dec.host, v6 ? "]" : "", c->dec.port);
}

/* Lookups cost the sandbox nothing (no connection, no time-out), so that a
 * flood of made-up names cannot fill the list and hide the connections
 * refused after it, they get at most half of it. */
#define REFUSED_LOOKUPS_MAX (BERTH_BROKER_REFUSED_MAX / 2)

void berth_bk_remember_refusal(struct berth_broker *b, const char *text, bool lookup)
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

/* *@field, read under the broker's lock. */
static size_t locked_size(struct berth_broker *b, const size_t *field)
{
	pthread_mutex_lock(&b->mu);
	size_t n = *field;
	pthread_mutex_unlock(&b->mu);
	return n;
}

size_t berth_broker_refused_unlisted(struct berth_broker *b)
{
	return locked_size(b, &b->refused_unlisted);
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
	    .duration_ms = berth_now_ms() - c->t0_ms,
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
void berth_bk_splice_release(struct conn *c)
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

void berth_bk_conn_free(struct conn *c)
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
		berth_bk_splice_release(c);
	if (c->mitm != NULL)
		berth_bk_mitm_free(c);
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
void berth_bk_close_with(struct conn *c, const void *reply, size_t len)
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
	berth_bk_timer_in(c, CLOSING_LINGER_MS);
}

void berth_bk_close_http(struct conn *c, int status, const char *reason)
{
	char buf[BERTH_HTTP_REPLY_MAX];
	int n = berth_http_format_error(buf, sizeof(buf), status, reason);

	berth_bk_close_with(c, buf, n > 0 ? (size_t)n : 0);
}

static void close_socks(struct conn *c, enum berth_socks_rep rep)
{
	uint8_t buf[BERTH_SOCKS_REPLY_MAX];
	int n = berth_socks_format_reply(buf, sizeof(buf), rep, NULL);

	berth_bk_close_with(c, buf, n > 0 ? (size_t)n : 0);
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
	berth_bk_timer_in(c, 0);
}

/* Refused by the policy: 403 naming the rule, or SOCKS 0x02. */
void berth_bk_refuse(struct conn *c, const char *reason)
{
	char hp[BERTH_HOST_NAME_MAX + 16], rule[BERTH_HOST_REASON_MAX + 300];

	berth_bk_host_port(c, hp, sizeof(hp));
	snprintf(rule, sizeof(rule), "%s (%s)", hp, reason);
	report(c, BERTH_BROKER_REFUSED, reason);
	berth_bk_remember_refusal(c->b, rule, false);
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
	berth_bk_close_with(c, buf, n > 0 ? (size_t)n : 0);
}

/* Allowed, but the destination could not be reached. */
void berth_bk_fail(struct conn *c, int status, enum berth_socks_rep rep, const char *reason)
{
	report(c, BERTH_BROKER_FAILED, reason);
	if (c->kind == BERTH_BROKER_TRANSPARENT)
		reset(c);
	else if (c->kind == BERTH_BROKER_SOCKS5)
		close_socks(c, rep);
	else
		berth_bk_close_http(c, status, reason);
}

void berth_bk_fail_errno(struct conn *c, int e)
{
	char hp[BERTH_HOST_NAME_MAX + 16], why[BERTH_HOST_NAME_MAX + 128];
	enum berth_socks_rep rep = BERTH_SOCKS_HOST_UNREACHABLE;
	int status = 502;

	berth_bk_host_port(c, hp, sizeof(hp));
	snprintf(why, sizeof(why), "cannot connect to %s: %s", hp, strerror(e));
	if (e == ECONNREFUSED)
		rep = BERTH_SOCKS_CONNECTION_REFUSED;
	else if (e == ENETUNREACH)
		rep = BERTH_SOCKS_NETWORK_UNREACHABLE;
	else if (e == ETIMEDOUT) {
		rep = BERTH_SOCKS_TTL_EXPIRED;
		status = 504;
	}
	berth_bk_fail(c, status, rep, why);
}

/* ---- CLOSING ------------------------------------------------------------- */

static void closing_read(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);

	c->closing_read += evbuffer_get_length(in);
	evbuffer_drain(in, evbuffer_get_length(in));
	if (c->closing_read > CLOSING_READ_MAX)
		berth_bk_conn_free(c);
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
	berth_bk_conn_free(arg);
}

/* ---- the broker ---------------------------------------------------------- */

static void ask_cb(evutil_socket_t fd, short what, void *arg)
{
	struct berth_broker *b = arg;
	uint64_t v;

	(void)what;
	while (read(fd, &v, sizeof(v)) > 0)
		;
	for (;;) {
		uint64_t token;
		bool grant;
		pthread_mutex_lock(&b->mu);
		if (b->nanswers == 0) {
			pthread_mutex_unlock(&b->mu);
			break;
		}
		token = b->answers[0].token;
		grant = b->answers[0].grant;
		memmove(&b->answers[0], &b->answers[1], (b->nanswers - 1) * sizeof(b->answers[0]));
		b->nanswers--;
		pthread_mutex_unlock(&b->mu);
		berth_bk_ask_answered(b, token, grant);
	}
}

int berth_broker_answer(struct berth_broker *b, uint64_t token, bool grant)
{
	uint64_t one = 1;
	int rc = -1;

	pthread_mutex_lock(&b->mu);
	if (b->nanswers < sizeof(b->answers) / sizeof(b->answers[0])) {
		b->answers[b->nanswers].token = token;
		b->answers[b->nanswers].grant = grant;
		b->nanswers++;
		rc = 0;
	}
	pthread_mutex_unlock(&b->mu);
	if (rc == 0 && b->ask_fd >= 0)
		(void)!write(b->ask_fd, &one, sizeof(one));
	return rc;
}

static void stop_cb(evutil_socket_t fd, short what, void *arg)
{
	struct berth_broker *b = arg;
	uint64_t v;

	(void)what;
	while (read(fd, &v, sizeof(v)) > 0)
		;
	event_base_loopbreak(b->base);
}

/* cleanup attribute: what berth_broker_new() made, freed when it fails. */
static void broker_freep(struct berth_broker **p)
{
	berth_broker_free(*p);
}

struct berth_broker *berth_broker_new(const struct berth_broker_opts *o, struct berth_error *err)
{
	struct berth_broker *b __attribute__((cleanup(broker_freep))) = calloc(1, sizeof(*b));

	if (b == NULL) {
		berth_err(err, ENOMEM, "broker");
		return NULL;
	}
	pthread_mutex_init(&b->mu, NULL);
	b->stop_fd = -1;
	b->ask_fd = -1;
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
	b->creds = o->creds;
	b->ncreds = o->n_creds;
	b->ca = o->ca;
	b->on_cred = o->on_credential;
	if (berth_bk_mitm_init(b, err) < 0)
		return NULL;
	load_local_addrs(b);
	if (o->n_patterns > 0) {
		b->pats = calloc(o->n_patterns, sizeof(*b->pats));
		if (b->pats == NULL) {
			berth_err(err, ENOMEM, "broker");
			return NULL;
		}
		memcpy(b->pats, o->patterns, o->n_patterns * sizeof(*b->pats));
		b->npats = o->n_patterns;
	}
	if (berth_fakeaddr_init(&b->fake, b->pats, b->npats) < 0) {
		berth_err(err, ENOMEM, "broker");
		return NULL;
	}
	b->base = event_base_new();
	if (b->base == NULL) {
		berth_err(err, errno, "broker: cannot create the event loop");
		return NULL;
	}
	b->dns = berth_dns_new(b->base, o->dns_server, err);
	if (b->dns == NULL)
		return NULL;
	b->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (b->stop_fd < 0) {
		berth_err(err, errno, "broker: eventfd");
		return NULL;
	}
	b->stop_ev = event_new(b->base, b->stop_fd, EV_READ | EV_PERSIST, stop_cb, b);
	if (b->stop_ev == NULL || event_add(b->stop_ev, NULL) < 0) {
		berth_err(err, ENOMEM, "broker: stop event");
		return NULL;
	}
	if (o->on_ask != NULL) {
		b->on_ask = o->on_ask;
		b->ask_ms = o->ask_timeout_ms;
		b->ask_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		b->ask_ev =
		    b->ask_fd >= 0 ? event_new(b->base, b->ask_fd, EV_READ | EV_PERSIST, ask_cb, b) : NULL;
		if (b->ask_ev == NULL || event_add(b->ask_ev, NULL) < 0) {
			berth_err(err, ENOMEM, "broker: ask event");
			return NULL;
		}
	}
	return steal_pointer(&b);
}

int berth_broker_add_listener(struct berth_broker *b, int fd, enum berth_broker_kind kind,
			      struct berth_error *err)
{
	if (kind != BERTH_BROKER_HTTP && kind != BERTH_BROKER_SOCKS5 && kind != BERTH_BROKER_TRANSPARENT &&
	    kind != BERTH_BROKER_DNS && kind != BERTH_BROKER_HANDOFF && kind != BERTH_BROKER_DNS_TAGGED) {
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
	if (kind == BERTH_BROKER_DNS || kind == BERTH_BROKER_HANDOFF || kind == BERTH_BROKER_DNS_TAGGED) {
		event_callback_fn cb = kind == BERTH_BROKER_DNS       ? berth_bk_dns_read
				       : kind == BERTH_BROKER_HANDOFF ? berth_bk_handoff_read
								      : berth_bk_dns_tagged_read;
		li->udp = event_new(b->base, fd, EV_READ | EV_PERSIST, cb, li);
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
	li->l = evconnlistener_new(b->base, berth_bk_accept_cb, li,
				   LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd);
	if (li->l == NULL) {
		close(fd);
		return berth_err(err, errno, "broker: cannot listen on fd %d", fd);
	}
	li->retry = evtimer_new(b->base, berth_bk_accept_retry, li);
	if (li->retry == NULL) {
		evconnlistener_free(li->l);
		return berth_err(err, ENOMEM, "broker: listener");
	}
	evconnlistener_set_error_cb(li->l, berth_bk_accept_error);
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
		berth_bk_conn_free(b->conns);
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
	if (b->ask_ev != NULL)
		event_free(b->ask_ev);
	if (b->ask_fd >= 0)
		close(b->ask_fd);
	if (b->stop_fd >= 0)
		close(b->stop_fd);
	if (b->base != NULL)
		event_base_free(b->base);
	for (size_t i = 0; i < b->nrefused; i++)
		free(b->refused[i]);
	free(b->pats);
	free(b->local);
	berth_bk_mitm_fini(b);
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
	return locked_size(b, &b->nrefused);
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
