/* SPDX-License-Identifier: MIT */
/*
 * netns.h - the sandbox's network namespace under --network proxy: what
 * makes a connection to a declared destination reach berth's egress broker
 * whatever the client does (docs/egress.md "Clients that ignore the proxy").
 *
 *   - a "local" route for every IPv4 and IPv6 address on the loopback
 *     (RTN_LOCAL 0.0.0.0/0 and ::/0 in the local table): a connect(2) to any
 *     address stays in the namespace and is accepted by a listener bound to
 *     the wildcard address on that port, which then reads the destination
 *     with getsockname(2).  No packet can leave: the namespace has no other
 *     interface.  No netfilter, no TUN device and no user-space TCP stack.
 *   - one such listener per port a pattern declares (80 and 443 for a
 *     pattern without a port), served by the broker (BERTH_BROKER_TRANSPARENT);
 *   - the resolver: a UDP socket on port 53 of every address, served by the
 *     broker (BERTH_BROKER_DNS), named by the sandbox's /etc/resolv.conf.
 * The sandbox (pid 1, with its namespace's capabilities, before the command
 * starts) makes them; it keeps none of them.
 */
#ifndef BERTH_SANDBOX_NETNS_H
#define BERTH_SANDBOX_NETNS_H

#include <stdbool.h>
#include <stdint.h>

#include "../policy/policy.h"
#include "../util/error.h"

/* Declared ports served transparently; more is a usage error. */
#define BERTH_TRANSPARENT_PORTS_MAX BERTH_POLICY_PORTS_MAX /* policy.h */

/* The sandbox's resolver's address, in its /etc/resolv.conf. */
#define BERTH_RESOLVER_ADDR "127.0.0.1"

/*
 * berth_netns_local_routes - in the sandbox's own network namespace (with
 * CAP_NET_ADMIN there), add RTN_LOCAL routes for 0.0.0.0/0 and ::/0 on the
 * loopback (the loopback must be up).  The IPv6 one is skipped when the
 * namespace has IPv6 turned off (EAFNOSUPPORT, EACCES).
 * Returns 0, or -1 with @err filled (the netlink error's errno).
 */
int berth_netns_local_routes(struct berth_error *err);

/*
 * berth_netns_listeners - a listening TCP socket on the wildcard address of
 * each port in @ports (IPv6 dual-stack, or IPv4 alone when the namespace has
 * no IPv6) into @fds (@ports->n of them), and the resolver's UDP socket on
 * port 53 into *@dns_fd.  Non-blocking, close-on-exec.  Needs the namespace's
 * CAP_NET_BIND_SERVICE for ports below 1024.  On failure nothing stays open.
 * Returns 0, or -1 with @err filled (naming the port).
 */
int berth_netns_listeners(const struct berth_policy_ports *ports, int *fds, int *dns_fd,
			  struct berth_error *err);

#endif
