/* SPDX-License-Identifier: MIT */
/*
 * broker_int.h - private to src/broker/broker*.c: the egress broker's state
 * (struct berth_broker), one connection (struct conn) and the helpers its
 * states share.  Nothing else includes it; the interface is broker.h.
 *
 * Files, one concern each (broker.c's header comment lists the states):
 *   broker.c           the loop, connection life (refuse, fail, CLOSING,
 *                      free), statistics and the audit callback, the API
 *   broker_request.c   HEAD, DNS and CONNECT: one request decided and
 *                      connected (proxy and transparent); accept callbacks
 *   broker_relay.c     RELAY: buffered, or spliced for tunnels
 *   broker_resolver.c  the sandbox's resolver (UDP)
 *
 * Everything here runs on the loop's thread, except where noted.
 */
#ifndef BERTH_BROKER_INT_H
#define BERTH_BROKER_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "broker.h"
#include "body.h"
#include "dns.h"
#include "fakeaddr.h"
#include "http.h"
#include "socks.h"

#define MAX_ADDRS 16
#define CLOSING_LINGER_MS 2000
#define CLOSING_READ_MAX 65536
#define MAX_LISTENERS BERTH_BROKER_LISTENERS_MAX
#define DNS_TTL 300      /* seconds: an assigned address never changes while the broker runs */
#define PUMP_ROUNDS 16   /* splice rounds per callback, so one busy tunnel cannot starve the others */
#define FDS_PER_TUNNEL 6 /* client, upstream, two pipes */
#define LOCAL_ADDRS_MAX_AGE_MS 1000 /* the host's own addresses are read again after this */

enum cstate { C_HEAD, C_DNS, C_CONNECT, C_RELAY, C_CLOSING };

struct listener {
	struct berth_broker *b;
	struct evconnlistener *l; /* TCP kinds */
	struct event *udp;        /* BERTH_BROKER_DNS, _DNS_TAGGED, _HANDOFF */
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
	int i;    /* 0: client to upstream, 1: upstream to client */
	int p[2]; /* the pipe */
	size_t queued, cap;
	bool slots_full; /* a read found the pipe out of slots: wait for a write */
	unsigned char *pending;
	size_t pending_len, pending_off;
	bool eof, shut, rd_on, wr_on;
	bool limited;    /* a plain request: only @budget more bytes go upstream */
	uint64_t budget; /* then what the client sends is read and dropped */
	struct event *rd, *wr;
};

struct conn {
	struct berth_broker *b;
	struct conn *prev, *next;
	/* --ask: the token of the held request (0: none), and what it asked */
	uint64_t ask_token;
	char ask_host[BERTH_HOST_NAME_MAX + 1];
	unsigned ask_port;
	enum berth_broker_kind kind;
	enum cstate st;
	struct bufferevent *cl, *up;
	struct event *timer;
	struct berth_http_parser *http; /* HTTP, until the head is read */
	struct berth_socks_parser socks;
	bool connect;   /* HTTP CONNECT (a tunnel) rather than absolute-form */
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
	/* a bound credential's host: TLS terminated (broker_mitm.c) */
	struct mitm *mitm;
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

	/* injected credentials (broker_mitm.c); the TLS contexts with any */
	const struct berth_broker_cred *creds;
	size_t ncreds;
	struct berth_tls_ca *ca;
	berth_broker_cred_fn on_cred;
	struct ssl_ctx_st *srv_ctx, *cli_ctx;

	/* --ask (berth_broker_answer): answers queued under @mu, the loop
	 * woken by @ask_fd (an eventfd) */
	berth_broker_ask_fn on_ask;
	unsigned ask_ms;
	uint64_t ask_next; /* loop's thread */
	int ask_fd;
	struct event *ask_ev;
	struct {
		uint64_t token;
		bool grant;
	} answers[64];
	size_t nanswers;
};

/* ---- broker.c */

/* (Re)arms the connection's timer to fire in @ms. */
void berth_bk_timer_in(struct conn *c, uint64_t ms);
/* berth_host_addr_allowed(), and not an address of this machine unless that
 * exact literal was declared; @why: the rule when refused. */
bool berth_bk_addr_allowed(struct berth_broker *b, const struct berth_host_decision *d,
			   const struct berth_addr *a, const char **why);
/* Adds @n to a counter of b->st (any thread: under b->mu). */
void berth_bk_stat_add(struct berth_broker *b, uint64_t *field, uint64_t n);
/* "host:port" of the connection's decision, IPv6 in brackets. */
void berth_bk_host_port(const struct conn *c, char *buf, size_t len);
/* Keeps @text in the list of refusals for the summary (@lookup: a name the
 * resolver refused, at most half of the list). */
void berth_bk_remember_refusal(struct berth_broker *b, const char *text, bool lookup);
/* Frees the splice relay's events, pipes, descriptors and pending bytes. */
void berth_bk_splice_release(struct conn *c);
/* Reports an established connection, then frees it and everything it holds. */
void berth_bk_conn_free(struct conn *c);
/* Sends @reply (may be empty), then closes gracefully (state CLOSING). */
void berth_bk_close_with(struct conn *c, const void *reply, size_t len);
/* An HTTP error reply @status with @reason, then CLOSING. */
void berth_bk_close_http(struct conn *c, int status, const char *reason);
/* Refused by the policy: 403 naming the rule, or SOCKS 0x02. */
void berth_bk_refuse(struct conn *c, const char *reason);
/* Allowed, but the destination could not be reached. */
void berth_bk_fail(struct conn *c, int status, enum berth_socks_rep rep, const char *reason);
/* berth_bk_fail() for connect(2)'s errno @e (502, or 504 on ETIMEDOUT). */
void berth_bk_fail_errno(struct conn *c, int e);

/* The loop's side of berth_broker_answer (broker_request.c). */
void berth_bk_ask_answered(struct berth_broker *b, uint64_t token, bool grant);

/* ---- broker_relay.c */

/* Connected to the checked address: answers the client and relays.
 * Returns -1 when the connection must end (the caller frees it). */
int berth_bk_established(struct conn *c);

/* ---- broker_request.c: the listeners' callbacks (struct listener) */

void berth_bk_accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
			void *arg);
/* accept(2) failed (EMFILE ...): pauses the listener for a moment. */
void berth_bk_accept_error(struct evconnlistener *l, void *arg);
void berth_bk_accept_retry(evutil_socket_t fd, short what, void *arg);
/* Messages on a BERTH_BROKER_HANDOFF socket: each a connection begun. */
void berth_bk_handoff_read(evutil_socket_t fd, short what, void *arg);

/* ---- broker_mitm.c */

/* Whether @c's destination is a bound credential's host and port. */
bool berth_bk_mitm_wanted(const struct conn *c);
/* Sends @reply in the clear, then terminates TLS on both sides and relays
 * with the rewrite.  Returns -1 when the connection must end. */
int berth_bk_mitm_start(struct conn *c, const void *reply, size_t len);
/* Reports the connection's credential uses and frees its TLS state. */
void berth_bk_mitm_free(struct conn *c);
/* The TLS contexts for b->creds (broker_new).  Returns 0 or -1 with @err. */
int berth_bk_mitm_init(struct berth_broker *b, struct berth_error *err);
/* Frees them (broker_free). */
void berth_bk_mitm_fini(struct berth_broker *b);

/* ---- broker_resolver.c */

/* A datagram on the resolver's socket: answered, or refused. */
void berth_bk_dns_read(evutil_socket_t fd, short what, void *arg);
/* A datagram on a BERTH_BROKER_DNS_TAGGED socket: the same, tagged. */
void berth_bk_dns_tagged_read(evutil_socket_t fd, short what, void *arg);

#endif
