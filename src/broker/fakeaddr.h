/* SPDX-License-Identifier: MIT */
/*
 * fakeaddr.h - the addresses the sandbox's resolver gives declared names
 * (docs/egress.md "Clients that ignore the proxy").
 *
 * A declared name is answered with an address of its own from
 * BERTH_FAKEADDR_NET (198.18.0.0/20, inside 198.18.0.0/15, which RFC 2544
 * sets aside for benchmarking and no public host uses), and the broker maps a
 * connection to that address back to the name.  The name is then resolved
 * and checked by the broker, outside the sandbox, exactly as a proxy request
 * for it would be: the sandbox never learns a real address, and a connection
 * can only ever mean a name the policy declared.  One address per name, kept
 * for the life of the map, so that a cached answer stays right.
 *
 * A `*.` pattern declares more names than there are addresses: a sandbox that
 * asks for 4094 names under it must not leave the names declared one by one
 * (an agent's API host, asked for later) without an address.  Each distinct
 * NAME pattern keeps one address in reserve until it is asked for; a name
 * declared by a wildcard only gets what is left beyond the reserve.
 */
#ifndef BERTH_BROKER_FAKEADDR_H
#define BERTH_BROKER_FAKEADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../policy/hostpat.h"

#define BERTH_FAKEADDR_NET 0xC6120000u /* 198.18.0.0 */
#define BERTH_FAKEADDR_BITS 20         /* /20: 4094 names */
#define BERTH_FAKEADDR_MAX ((1u << (32 - BERTH_FAKEADDR_BITS)) - 2)

struct berth_fakeaddr_map {
	char (*names)[BERTH_HOST_NAME_MAX + 1]; /* [i]: the name of 198.18.0.0 + 1 + i; "" unused */
	size_t n;                               /* addresses handed out or skipped */
	size_t reserved;                        /* NAME patterns' names not asked for yet */
	size_t skips_left;                      /* declared literals in the range beyond n */
	const struct berth_host_pattern *pats;  /* declared literals are never handed out */
	size_t npats;
};

/*
 * berth_fakeaddr_init - an empty map.  @pats (@npats) must outlive it: an
 * address that a literal pattern declares is skipped, so that it keeps
 * meaning itself.  Returns 0, or -1 when memory runs out (errno ENOMEM).
 */
int berth_fakeaddr_init(struct berth_fakeaddr_map *m, const struct berth_host_pattern *pats, size_t npats);

/* berth_fakeaddr_free - frees what init allocated; @m may be zeroed. */
void berth_fakeaddr_free(struct berth_fakeaddr_map *m);

/*
 * berth_fakeaddr_assign - the address of @name (a normalised name:
 * lowercase, no trailing dot, at most BERTH_HOST_NAME_MAX characters): the
 * one it had, or the next free one.  @out: 4 bytes, network order.
 * Returns 0, or -1 when all BERTH_FAKEADDR_MAX are taken (for a name that no
 * NAME pattern declares: when only the reserve of the NAME patterns' names not
 * asked for yet is left) or @name is empty or too long.
 */
int berth_fakeaddr_assign(struct berth_fakeaddr_map *m, const char *name, uint8_t out[4]);

/*
 * berth_fakeaddr_lookup - the name that @a (4 bytes, network order) was
 * given to, or NULL when it was not handed out (any other address, also in
 * the range).
 */
const char *berth_fakeaddr_lookup(const struct berth_fakeaddr_map *m, const uint8_t a[4]);

#endif
