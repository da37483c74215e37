/* SPDX-License-Identifier: MIT */
/*
 * dns.c - c-ares on a libevent loop: c-ares says which sockets it wants
 * watched (ARES_OPT_SOCK_STATE_CB), libevent watches them and calls
 * ares_process_fd(); one timer follows ares_timeout().
 *
 * Requests for a name that is being resolved already join that lookup (a
 * struct lookup with a list of waiters) instead of sending their own
 * queries: a burst of connections to one host (1000 CONNECTs at once) would
 * otherwise send 2000 datagrams at once, overflow the socket receive
 * buffers of the resolver and of c-ares, and leave some requests waiting
 * for retransmissions past the connect timeout.  A lookup is forgotten the
 * moment it is answered, so nothing is cached: the next request for the name
 * asks again, and every answer is checked by each request on its own.
 */
#include "dns.h"
#include "../util/cleanup.h"
#include "../util/text.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ares.h>
#include <event2/event.h>

struct dns_sock {
	ares_socket_t fd;
	struct event *ev;
	struct dns_sock *next;
};

struct lookup;

struct berth_dns {
	struct event_base *base;
	ares_channel ch;
	bool ch_ok;
	struct event *timer;
	struct dns_sock *socks;
	struct lookup *lookups; /* in flight, one per name */
};

/* One request's wait for a lookup. */
struct berth_dns_query {
	berth_dns_cb cb;
	void *arg;
	bool cancelled;
	struct berth_dns_query *next;
};

/* One ares_getaddrinfo() in flight and the requests waiting for it. */
struct lookup {
	struct berth_dns *d;
	struct lookup *next;
	struct berth_dns_query *waiters, **tail;
	bool starting; /* inside ares_getaddrinfo(): berth_dns_resolve() frees it if answered */
	bool answered;
	char name[256];
};

static void reschedule(struct berth_dns *d)
{
	struct timeval tv, *tvp = ares_timeout(d->ch, NULL, &tv);

	if (tvp != NULL)
		evtimer_add(d->timer, tvp);
	else
		evtimer_del(d->timer);
}

static void sock_cb(evutil_socket_t fd, short what, void *arg)
{
	struct berth_dns *d = arg;

	ares_process_fd(d->ch, (what & EV_READ) ? fd : ARES_SOCKET_BAD,
			(what & EV_WRITE) ? fd : ARES_SOCKET_BAD);
	reschedule(d);
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct berth_dns *d = arg;

	(void)fd;
	(void)what;
	ares_process_fd(d->ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
	reschedule(d);
}

/* c-ares: watch @fd for reading and/or writing, or no more. */
static void sock_state(void *data, ares_socket_t fd, int readable, int writable)
{
	struct berth_dns *d = data;
	struct dns_sock **pp = &d->socks, *s;

	while (*pp != NULL && (*pp)->fd != fd)
		pp = &(*pp)->next;
	s = *pp;
	if (s != NULL) {
		event_free(s->ev);
		s->ev = NULL;
	}
	if (!readable && !writable) {
		if (s != NULL) {
			*pp = s->next;
			free(s);
		}
		return;
	}
	if (s == NULL) {
		s = calloc(1, sizeof(*s));
		if (s == NULL)
			return; /* the query times out */
		s->fd = fd;
		s->next = d->socks;
		d->socks = s;
	}
	short ev = (short)(EV_PERSIST | (readable ? EV_READ : 0) | (writable ? EV_WRITE : 0));
	s->ev = event_new(d->base, fd, ev, sock_cb, d);
	if (s->ev != NULL)
		event_add(s->ev, NULL);
}

/* cleanup attribute: what berth_dns_new() made, freed when it fails. */
static void dns_freep(struct berth_dns **p)
{
	berth_dns_free(*p);
}

struct berth_dns *berth_dns_new(struct event_base *base, const char *server, struct berth_error *err)
{
	struct berth_dns *d __attribute__((cleanup(dns_freep))) = calloc(1, sizeof(*d));
	struct ares_options opts;
	char csv[96];
	int r;

	if (d == NULL) {
		berth_err(err, ENOMEM, "dns");
		return NULL;
	}
	d->base = base;
	if (server != NULL && berth_dns_server_parse(server, csv, sizeof(csv), err) < 0)
		return NULL;
	r = ares_library_init(ARES_LIB_INIT_ALL);
	if (r != ARES_SUCCESS) {
		berth_err(err, 0, "c-ares: %s", ares_strerror(r));
		return NULL;
	}
	memset(&opts, 0, sizeof(opts));
	opts.flags = ARES_FLAG_NOSEARCH;
	opts.sock_state_cb = sock_state;
	opts.sock_state_cb_data = d;
	r = ares_init_options(&d->ch, &opts, ARES_OPT_FLAGS | ARES_OPT_SOCK_STATE_CB);
	if (r != ARES_SUCCESS) {
		berth_err(err, 0, "c-ares: cannot initialise the resolver: %s", ares_strerror(r));
		ares_library_cleanup();
		return NULL;
	}
	d->ch_ok = true;
	if (server != NULL && (r = ares_set_servers_ports_csv(d->ch, csv)) != ARES_SUCCESS) {
		berth_err(err, 0, "c-ares: cannot use DNS server `%s`: %s", server, ares_strerror(r));
		return NULL;
	}
	d->timer = evtimer_new(base, timer_cb, d);
	if (d->timer == NULL) {
		berth_err(err, ENOMEM, "dns");
		return NULL;
	}
	return steal_pointer(&d);
}

static void lookup_unlink(struct lookup *l)
{
	struct lookup **pp = &l->d->lookups;

	while (*pp != NULL && *pp != l)
		pp = &(*pp)->next;
	if (*pp == l)
		*pp = l->next;
}

static void lookup_free(struct lookup *l)
{
	while (l->waiters != NULL) {
		struct berth_dns_query *q = l->waiters;
		l->waiters = q->next;
		free(q);
	}
	free(l);
}

static void ai_cb(void *arg, int status, int timeouts, struct ares_addrinfo *res)
{
	struct lookup *l = arg;
	struct berth_addr addrs[32];
	size_t n = 0;
	int e = 0;

	(void)timeouts;
	if (status == ARES_SUCCESS && res != NULL) {
		for (struct ares_addrinfo_node *ai = res->nodes;
		     ai != NULL && n < sizeof(addrs) / sizeof(addrs[0]); ai = ai->ai_next)
			if (berth_addr_from_sockaddr(ai->ai_addr, (socklen_t)ai->ai_addrlen, &addrs[n]) == 0)
				n++;
	} else if (status == ARES_ETIMEOUT) {
		e = ETIMEDOUT;
	} else if (status == ARES_ENOTFOUND || status == ARES_ENODATA || status == ARES_ENONAME) {
		e = ENOENT;
	} else if (status == ARES_ENOMEM) {
		e = ENOMEM;
	} else {
		e = EIO;
	}
	if (res != NULL)
		ares_freeaddrinfo(res);
	/* Forgotten before any callback runs: a request made from a callback asks again. */
	lookup_unlink(l);
	l->answered = true;
	bool call = status != ARES_EDESTRUCTION && status != ARES_ECANCELLED;
	/* A callback may cancel a waiter further down (it is then skipped) but
	 * never frees one: waiters are freed here, after the loop. */
	for (struct berth_dns_query *q = l->waiters; q != NULL && call; q = q->next) {
		if (q->cancelled)
			continue;
		q->cancelled = true; /* answered: called once */
		q->cb(q->arg, e, e != 0 ? ares_strerror(status) : "", addrs, n);
	}
	if (!l->starting)
		lookup_free(l);
}

struct berth_dns_query *berth_dns_resolve(struct berth_dns *d, const char *name, berth_dns_cb cb, void *arg)
{
	struct berth_dns_query *q = calloc(1, sizeof(*q));
	struct ares_addrinfo_hints hints;
	struct lookup *l;

	if (q == NULL) {
		cb(arg, ENOMEM, "out of memory", NULL, 0);
		return NULL;
	}
	q->cb = cb;
	q->arg = arg;
	for (l = d->lookups; l != NULL; l = l->next)
		if (strcasecmp(l->name, name) == 0) { /* join the lookup in flight */
			*l->tail = q;
			l->tail = &q->next;
			return q;
		}
	l = calloc(1, sizeof(*l));
	if (l == NULL || strlen(name) >= sizeof(l->name)) {
		bool nomem = l == NULL;
		free(l);
		free(q);
		cb(arg, nomem ? ENOMEM : ENOENT, nomem ? "out of memory" : "name too long", NULL, 0);
		return NULL;
	}
	l->d = d;
	snprintf(l->name, sizeof(l->name), "%s", name);
	l->waiters = q;
	l->tail = &q->next;
	l->next = d->lookups;
	d->lookups = l;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_flags = ARES_AI_NOSORT;
	l->starting = true;
	ares_getaddrinfo(d->ch, name, NULL, &hints, ai_cb, l);
	l->starting = false;
	reschedule(d);
	if (l->answered) { /* answered already (or failed at once): @cb has run */
		lookup_free(l);
		return NULL;
	}
	return q;
}

void berth_dns_cancel(struct berth_dns_query *q)
{
	if (q != NULL)
		q->cancelled = true;
}

void berth_dns_free(struct berth_dns *d)
{
	if (d == NULL)
		return;
	if (d->ch_ok) {
		ares_destroy(d->ch); /* calls every pending ai_cb with ARES_EDESTRUCTION */
		ares_library_cleanup();
	}
	while (d->socks != NULL) {
		struct dns_sock *s = d->socks;
		d->socks = s->next;
		if (s->ev != NULL)
			event_free(s->ev);
		free(s);
	}
	if (d->timer != NULL)
		event_free(d->timer);
	free(d);
}
