/* SPDX-License-Identifier: MIT */
/*
 * dns.h - the broker's resolver: c-ares driven by the broker's libevent loop.
 *
 * Only names the policy allowed reach berth_dns_resolve() (broker_request.c
 * decides first).  Searching is off (ARES_FLAG_NOSEARCH): the name asked is the name
 * resolved, never a name with a search domain of /etc/resolv.conf appended.
 * Answers are not sorted (ARES_AI_NOSORT): the broker checks every address
 * itself and connects in the order of the answer.
 */
#ifndef BERTH_BROKER_DNS_H
#define BERTH_BROKER_DNS_H

#include <stddef.h>

#include "../policy/addr.h"
#include "../policy/hostpat.h"
#include "../util/error.h"

struct event_base;
struct berth_dns;
struct berth_dns_query;

/*
 * The result: @status 0 with @n >= 0 addresses (IPv4 and IPv6, as answered),
 * or an errno value (ETIMEDOUT: no answer in time; ENOENT: no such name or no
 * address; ENOMEM; EIO: anything else) with @errtext saying it in words.
 */
typedef void (*berth_dns_cb)(void *arg, int status, const char *errtext, const struct berth_addr *addrs,
			     size_t n);

/*
 * berth_dns_new - a resolver on @base.
 * @server: "ip", "ip:port", "[ipv6]" or "[ipv6]:port" (dotted quads and
 *          RFC 4291 text only); NULL for the servers of /etc/resolv.conf
 * Returns NULL with @err filled when c-ares fails or @server is not an address.
 */
struct berth_dns *berth_dns_new(struct event_base *base, const char *server, struct berth_error *err);

/* berth_dns_server_parse() checks the --dns server: ../policy/hostpat.h. */

/*
 * berth_dns_resolve - resolve @name (A and AAAA).  @cb runs once, on the
 * loop's thread, possibly before this returns (then NULL is returned).
 * A request for a name (compared case-insensitively) that is being resolved
 * already joins that lookup and gets its answer: no second query is sent.
 * Nothing is cached: once a lookup is answered, the next request for the
 * name asks the server again.
 * Returns a handle for berth_dns_cancel(), valid until @cb has run.
 */
struct berth_dns_query *berth_dns_resolve(struct berth_dns *d, const char *name, berth_dns_cb cb, void *arg);

/* berth_dns_cancel - @cb will not be called; the lookup itself runs to its end
 * (other requests may be waiting for it).  Not after @cb has run. */
void berth_dns_cancel(struct berth_dns_query *q);

/* berth_dns_free - destroy the resolver; running queries' callbacks are not called. */
void berth_dns_free(struct berth_dns *d);

#endif
