/* SPDX-License-Identifier: MIT */
/*
 * broker.h - the egress broker's engine: an event loop (libevent) that
 * accepts HTTP-proxy and SOCKS5 clients on listening sockets it is given,
 * decides on each requested destination with ../policy/hostpat.h, resolves allowed names
 * with c-ares, checks every address, connects to exactly the address it
 * checked and relays bytes both ways.
 *
 * The order of one request, and why:
 *   1. read the head with berth_http_feed() / berth_socks_feed(), bounded by
 *      the parsers' size limits and the header read timeout (408);
 *   2. decide on the NAME with berth_host_decide(): a refused name is never
 *      resolved, so a sandbox cannot leak data through DNS queries (403 /
 *      SOCKS 0x02);
 *   3. take a tunnel slot (503 / SOCKS 0x01 beyond the cap);
 *   4. resolve with ares_getaddrinfo() (an IP literal is not resolved) and
 *      check EVERY address with berth_host_addr_allowed(): when any address is
 *      refused the request is refused, so that an answer mixing a public and a
 *      private address cannot be used to reach the private one;
 *   5. connect to the checked addresses in order, never looking the name up
 *      again (no rebinding window) (502 / 504, SOCKS 0x03-0x06);
 *   6. CONNECT: "200 Connection established", SOCKS: reply 0x00, plain HTTP:
 *      the head from berth_http_rewrite_origin() (Connection: close); then
 *      relay both ways with bounded buffers until both sides are done or the
 *      idle timeout.
 *
 * Threads: everything but berth_broker_stop() and berth_broker_stats() must
 * be called from one thread at a time: berth_broker_new(), _add_listener()
 * and _free() before and after berth_broker_run(), which runs the loop on
 * the calling thread (the supervisor's main loop, or a thread of its own).
 * berth_broker_stop() may be called from any thread and from a signal
 * handler (it writes to an eventfd).  berth_broker_stats() may be called
 * from any thread at any time.  The decision callback runs on the loop's
 * thread.
 */
#ifndef BERTH_BROKER_BROKER_H
#define BERTH_BROKER_BROKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../policy/credential.h"
#include "../policy/hostpat.h"
#include "../util/error.h"

#define BERTH_BROKER_DEFAULT_MAX_TUNNELS 1024
#define BERTH_BROKER_DEFAULT_HEADER_TIMEOUT_MS 10000
#define BERTH_BROKER_DEFAULT_IDLE_TIMEOUT_MS 300000
#define BERTH_BROKER_DEFAULT_CONNECT_TIMEOUT_MS 30000 /* DNS and connect together */
#define BERTH_BROKER_DEFAULT_BUFFER 262144            /* bytes buffered per direction before reading stops */
#define BERTH_BROKER_REFUSED_MAX 64                   /* distinct refusals kept for the summary */
#define BERTH_BROKER_LISTENERS_MAX 48                 /* listening sockets of one broker */

enum berth_broker_kind {
	BERTH_BROKER_HTTP = 1,   /* HTTP proxy: CONNECT and absolute-form http:// */
	BERTH_BROKER_SOCKS5 = 2, /* SOCKS5 (socks5h://), CONNECT only */
	/* A connection that meant its destination: the listening socket is
	 * reached through the sandbox's "local" route for every address
	 * (docs/egress.md "Clients that ignore the proxy"), and the address
	 * and port the client connected to are the accepted socket's own
	 * (getsockname(2)).  An address the sandbox's resolver gave a
	 * declared name is that name; any other is an IP literal request.
	 * Nothing is read first: the bytes are the client's (a TLS
	 * ClientHello, an HTTP request) and pass untouched.  A refusal resets
	 * the connection (the client sees ECONNRESET). */
	BERTH_BROKER_TRANSPARENT = 3,
	/* The sandbox's resolver: a UDP socket; a declared name is answered
	 * with an address from fakeaddr.h, any other with NXDOMAIN (a refusal,
	 * reported with port 0), AAAA and other types of a declared name with
	 * no record, so that clients use the IPv4 one. */
	BERTH_BROKER_DNS = 4,
	/* Connections made elsewhere (a microVM's, relayed over its channel):
	 * an AF_UNIX SOCK_SEQPACKET socket on which each message is one
	 * struct berth_broker_handoff with exactly one descriptor (SCM_RIGHTS),
	 * a connected stream socket served as a connection accepted by a
	 * listener of the message's kind (HTTP, SOCKS5 or TRANSPARENT, then
	 * decided, refused and reported exactly as one); for TRANSPARENT the
	 * destination is the message's, not getsockname(2)'s: a claim, decided
	 * as a request for that address and port.  A malformed message (its
	 * size, kind, address or port, or no single descriptor) is dropped
	 * with its descriptors.  Decisions report the message's kind. */
	BERTH_BROKER_HANDOFF = 5,
	/* The sandbox's resolver over an AF_UNIX SOCK_DGRAM socket: each
	 * datagram a 4-byte tag then one query, answered (as BERTH_BROKER_DNS
	 * answers, and reported with that kind) by the same tag then the
	 * answer, with send(2). */
	BERTH_BROKER_DNS_TAGGED = 6,
};

/* One message of a BERTH_BROKER_HANDOFF socket (the layout of
 * src/runtime/runtime.h's struct berth_egress_stream). */
struct berth_broker_handoff {
	uint32_t kind; /* BERTH_BROKER_HTTP, _SOCKS5 or _TRANSPARENT */
	uint32_t port; /* TRANSPARENT: 1..65535; else ignored */
	char dst[64];  /* TRANSPARENT: an IPv4 or IPv6 address's text (inet_pton(3)'s), NUL-terminated */
};

enum berth_broker_outcome {
	BERTH_BROKER_ALLOWED = 1, /* connected and relayed; reported when the connection ends */
	BERTH_BROKER_REFUSED = 2, /* refused by the policy (name, port or address); reported at once */
	BERTH_BROKER_FAILED = 3,  /* allowed, but DNS, connect or the cap failed; reported at once */
};

/* One decision, for the audit trail.  The strings live only during the callback. */
struct berth_broker_decision {
	enum berth_broker_kind kind;
	enum berth_broker_outcome outcome;
	const char *host;    /* normalised requested host (name, dotted quad or IPv6 text) */
	unsigned port;       /* 0 for a BERTH_BROKER_DNS refusal (no port is known yet) */
	const char *address; /* the address connected to (or refused); "" when none */
	const char *reason;  /* "declared by `PATTERN`", the refusal rule, or the failure */
	uint64_t bytes_up;   /* client to destination: after the head of a tunnel; for a plain
			      * request the rewritten head and the body (the head carries the
			      * client's URL and headers, up to 72 KiB a request) */
	uint64_t bytes_down; /* destination to client */
	uint64_t duration_ms;
};

typedef void (*berth_broker_decision_fn)(const struct berth_broker_decision *d, void *data);

/* One injected credential (docs/credentials.md) as the broker applies it:
 * a CONNECT, SOCKS5 or transparent connection to @host:@port has its TLS
 * terminated and each request's header rewritten (src/broker/cred.h). */
struct berth_broker_cred {
	const char *name; /* the binding's NAME, for the audit trail */
	const char *host; /* lowercase DNS name */
	unsigned port;
	const char *prefix;
	enum berth_cred_header header;
	const char *field;
	const char *placeholder;
	const char *secret; /* locked memory of the caller's, valid while the broker lives */
	size_t secret_len;
};

/* A connection that used credential @name for @host:@port @count times
 * (requests whose header got the value), reported when it ends. */
typedef void (*berth_broker_cred_fn)(const char *name, const char *host, unsigned port, uint64_t count,
				     void *data);

struct berth_tls_ca;

/*
 * `berth run --ask` (docs/ask.md): a request for a host no pattern
 * declares ("not declared", "port N not declared") is offered here, on the
 * loop's thread, with a token.  Return 1 to hold it (then answer with
 * berth_broker_answer(), from any thread), 0 to refuse it now.
 */
typedef int (*berth_broker_ask_fn)(void *data, const char *host, unsigned port, uint64_t token);

struct berth_broker_opts {
	const struct berth_host_pattern *patterns; /* copied by berth_broker_new() */
	size_t n_patterns;
	/* "ip", "ip:port" or "[ipv6]:port"; NULL: the host's resolvers from /etc/resolv.conf */
	const char *dns_server;
	unsigned max_tunnels;                 /* 0: BERTH_BROKER_DEFAULT_MAX_TUNNELS */
	unsigned header_timeout_ms;           /* 0: default */
	unsigned idle_timeout_ms;             /* 0: default */
	unsigned connect_timeout_ms;          /* 0: default */
	size_t buffer_max;                    /* 0: BERTH_BROKER_DEFAULT_BUFFER; at least 16 KiB */
	berth_broker_decision_fn on_decision; /* may be NULL */
	void *data;
	/* Injected credentials: not copied (they must outlive the broker);
	 * with any, @ca is the run's CA (tls.h), and @on_credential may be NULL. */
	const struct berth_broker_cred *creds;
	size_t n_creds;
	struct berth_tls_ca *ca;
	berth_broker_cred_fn on_credential;
	/* --ask: may be NULL (every undeclared host refused at once); a held
	 * request waits at most @ask_timeout_ms (plus a margin) */
	berth_broker_ask_fn on_ask;
	unsigned ask_timeout_ms;
};

struct berth_broker_stats {
	uint64_t connections; /* accepted */
	uint64_t allowed, refused, failed, bad_requests;
	uint64_t bytes_up, bytes_down;
	unsigned tunnels, tunnels_peak; /* open now, most at once */
};

struct berth_broker;

/*
 * berth_broker_new - a broker with no listeners.
 * Fails (NULL, @err filled) when c-ares cannot be initialised, @o->dns_server
 * is not an address, the TLS contexts of @o->creds cannot be made (EIO), or
 * memory runs out.
 */
struct berth_broker *berth_broker_new(const struct berth_broker_opts *o, struct berth_error *err);

/*
 * berth_broker_answer - the answer to held request @token (opts.on_ask).
 * @grant: HOST:PORT is declared from then on, for this broker's life (the
 * request goes on and is decided like any, its addresses checked as
 * always); else the request is refused ("denied by a human").  Any thread;
 * a token no request waits on any more is ignored.  Returns 0, or -1 when
 * more than 64 answers wait for the loop.
 */
int berth_broker_answer(struct berth_broker *b, uint64_t token, bool grant);

/*
 * berth_broker_add_listener - accept clients of @kind on @fd, a listening
 * TCP socket (made non-blocking here), for BERTH_BROKER_DNS a bound UDP
 * socket, for BERTH_BROKER_HANDOFF and BERTH_BROKER_DNS_TAGGED the AF_UNIX
 * socket of their kind.  The broker owns @fd from then on, also on failure, and closes it
 * in berth_broker_free().  At most BERTH_BROKER_LISTENERS_MAX listeners.
 * Returns 0, or -1 with @err filled (EINVAL: an unknown kind; EMFILE: too
 * many listeners; ENOMEM).
 */
int berth_broker_add_listener(struct berth_broker *b, int fd, enum berth_broker_kind kind,
			      struct berth_error *err);

/*
 * berth_broker_run - run the loop on the calling thread until
 * berth_broker_stop().  Open connections stay open (the loop can be run
 * again); berth_broker_free() closes them.
 * Returns 0, or -1 when the loop failed.
 */
int berth_broker_run(struct berth_broker *b);

/* berth_broker_stop - make berth_broker_run() return soon.  Any thread, async-signal-safe. */
void berth_broker_stop(struct berth_broker *b);

/* berth_broker_free - close every connection and listener (reporting open ones) and free. */
void berth_broker_free(struct berth_broker *b);

/* berth_broker_stats - a copy of the counters; any thread. */
void berth_broker_stats(struct berth_broker *b, struct berth_broker_stats *s);

/* berth_broker_refused_unlisted - refusals of destinations not in the list
 * of BERTH_BROKER_REFUSED_MAX distinct ones (each attempt counts).  Any
 * thread. */
size_t berth_broker_refused_unlisted(struct berth_broker *b);

/*
 * berth_broker_refused - the distinct refusals, in the order they happened,
 * as "host:port (reason)" ("[v6]:port" for IPv6), for the summary line.
 * @i: 0 .. count-1 where count is what berth_broker_refused_count() returns
 * The text is copied into @buf (@len bytes, truncated).  Any thread.
 * Returns 0, or -1 when @i is out of range.
 */
size_t berth_broker_refused_count(struct berth_broker *b);
int berth_broker_refused(struct berth_broker *b, size_t i, char *buf, size_t len);

#endif
