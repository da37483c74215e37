/* SPDX-License-Identifier: MIT */
/*
 * fuzz_hosts.c - libFuzzer target for the egress broker's name and address
 * rules (src/broker/addr.c, src/broker/hosts.c).
 *
 * The input is split into lines (at most 32).  Every line is parsed as an
 * allow-host pattern (the valid ones, at most 16, are the declared set), as
 * an IP literal, and used as a requested host on a few ports; every decision
 * is then checked against every address the input spells, a fixed list of
 * refused addresses and addresses made of the raw input bytes.  Inputs are
 * capped at 64 KiB.
 *
 * Invariants (a violation aborts):
 *  - a refused pattern says why; an accepted one formats and reads back to
 *    the same pattern;
 *  - a literal formats and reads back to the same address; for IPv4 text
 *    without white space, berth accepts exactly what glibc's inet_aton(3)
 *    accepts and reads the same address;
 *  - a decision is allowed iff it returned 1, names a pattern of the set that
 *    matches the host and port as the grammar says (a `*.` pattern never
 *    matches its bare suffix), and always has a reason;
 *  - an address in a refused range is only ever allowed when the request
 *    named that address as a literal and the matched pattern declared that
 *    exact literal; a refused decision never allows any address.
 */
#include <arpa/inet.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/addr.h"
#include "policy/hostpat.h"
#include "util/cleanup.h"

#define MAX_LINES 32
#define MAX_PATS 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok)
{
	if (!ok)
		abort();
}

static bool has_space(const char *s)
{
	for (; *s != '\0'; s++)
		if (*s == ' ' || (*s >= '\t' && *s <= '\r'))
			return true;
	return false;
}

static void check_literal(const char *s)
{
	struct berth_addr a, b;
	char text[BERTH_ADDR_STRLEN];
	const char *why = NULL;
	int spelling = berth_addr_parse_literal(s, &a);

	if (strchr(s, ':') == NULL && !has_space(s)) {
		struct in_addr in;
		int theirs = inet_aton(s, &in);
		check((spelling > 0) == (theirs == 1));
		if (spelling > 0)
			check(memcmp(&in, a.bytes, 4) == 0);
	}
	if (spelling < 0)
		return;
	check(spelling == BERTH_ADDR_V4 || spelling == BERTH_ADDR_V6 ||
	      ((spelling & BERTH_ADDR_V4_ODD) != 0 && (spelling & ~BERTH_ADDR_V4_ODD) == 0));
	check(berth_addr_format(&a, text, sizeof text) == 0);
	check(berth_addr_parse_literal(text, &b) == (a.family == AF_INET ? BERTH_ADDR_V4 : BERTH_ADDR_V6));
	check(berth_addr_equal(&a, &b));
	check(berth_addr_refused(&a, &why) == (why != NULL));
	check(why == NULL || why[0] != '\0');
}

static void check_pattern(const char *s, struct berth_host_pattern *pats, size_t *n)
{
	struct berth_host_pattern p, again;
	char reason[BERTH_HOST_REASON_MAX], text[BERTH_HOST_PATTERN_STRLEN];

	reason[0] = '\0';
	if (berth_host_pattern_parse(s, &p, reason, sizeof reason) < 0) {
		check(reason[0] != '\0');
		return;
	}
	check(berth_host_pattern_format(&p, text, sizeof text) == 0);
	check(berth_host_pattern_parse(text, &again, reason, sizeof reason) == 0);
	check(memcmp(&p, &again, sizeof p) == 0);
	check(p.kind != BERTH_HOST_LITERAL || p.addr.family == AF_INET || p.addr.family == AF_INET6);
	if (*n < MAX_PATS)
		pats[(*n)++] = p;
}

static bool port_ok(const struct berth_host_pattern *p, unsigned port)
{
	return p->ports == BERTH_PORTS_ANY || (p->ports == BERTH_PORTS_ONE && p->port == port) ||
	       (p->ports == BERTH_PORTS_DEFAULT && (port == 80 || port == 443));
}

static void check_decision(const struct berth_host_pattern *pats, size_t n,
			   const struct berth_host_decision *d, int r, unsigned port)
{
	check(r == 0 || r == 1);
	check((r == 1) == d->allowed);
	check(d->reason[0] != '\0');
	check(!d->explicit_literal || (d->is_literal && d->allowed));
	if (!d->allowed) {
		check(d->matched == NULL);
		return;
	}
	check(d->matched >= pats && d->matched < pats + n);
	check(port >= 1 && port <= 65535 && port_ok(d->matched, port));
	if (d->is_literal) {
		check(d->explicit_literal);
		check(d->matched->kind == BERTH_HOST_LITERAL);
		check(berth_addr_same_destination(&d->matched->addr, &d->literal));
	} else if (d->matched->kind == BERTH_HOST_NAME) {
		check(strcmp(d->matched->name, d->host) == 0);
	} else {
		size_t hn = strlen(d->host), sn = strlen(d->matched->name);
		check(d->matched->kind == BERTH_HOST_SUFFIX);
		check(hn > sn + 1 && d->host[hn - sn - 1] == '.' &&
		      strcmp(d->host + hn - sn, d->matched->name) == 0);
	}
}

static void check_address(const struct berth_host_decision *d, const struct berth_addr *a)
{
	const char *why = NULL;
	bool ok = berth_host_addr_allowed(d, a, &why);

	check(ok == (why == NULL));
	if (!ok)
		return;
	check(d->allowed);
	if (berth_addr_refused(a, NULL)) {
		/* explicit beats ambient, and nothing else does */
		check(d->is_literal && d->explicit_literal);
		check(berth_addr_same_destination(a, &d->literal));
		check(d->matched->kind == BERTH_HOST_LITERAL &&
		      berth_addr_same_destination(&d->matched->addr, a));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const fixed[] = {"127.0.0.1",        "::1",
					    "169.254.169.254",  "fd00:ec2::254",
					    "10.0.0.5",         "::ffff:10.0.0.5",
					    "0.0.0.0",          "::",
					    "93.184.216.34",    "64:ff9b::7f00:1",
					    "2002:a9fe:a9fe::", "2001:0:4136:e378:8000:63bf:3fff:fdd2"};
	struct berth_host_pattern pats[MAX_PATS];
	struct berth_addr addrs[MAX_LINES + BERTH_ARRAY_SIZE(fixed) + 8];
	char *buf, *lines[MAX_LINES];
	size_t nlines = 0, npats = 0, naddrs = 0;
	unsigned extra_port;

	if (size > 65536)
		return 0;
	buf = malloc(size + 1);
	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	extra_port = size >= 2 ? (unsigned)data[0] << 8 | data[1] : 0;
	for (char *p = buf; nlines < MAX_LINES;) {
		char *nl = strchr(p, '\n');
		lines[nlines++] = p;
		if (nl == NULL)
			break;
		*nl = '\0';
		p = nl + 1;
	}
	for (size_t i = 0; i < nlines; i++) {
		check_literal(lines[i]);
		check_pattern(lines[i], pats, &npats);
		if (berth_addr_parse_literal(lines[i], &addrs[naddrs]) > 0)
			naddrs++;
	}
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(fixed); i++)
		check(berth_addr_parse_literal(fixed[i], &addrs[naddrs++]) > 0);
	/* raw bytes as addresses: the whole input, 16 bytes at a time */
	for (size_t off = 0; off + 16 <= size && naddrs < BERTH_ARRAY_SIZE(addrs) - 1; off += 16) {
		struct berth_addr *a = &addrs[naddrs++];
		memset(a, 0, sizeof *a);
		a->family = AF_INET6;
		memcpy(a->bytes, data + off, 16);
		a = &addrs[naddrs++];
		memset(a, 0, sizeof *a);
		a->family = AF_INET;
		memcpy(a->bytes, data + off, 4);
	}
	for (size_t i = 0; i < nlines; i++) {
		const unsigned ports[] = {80, 443, 5432, 8080, 0, extra_port};
		for (size_t k = 0; k < BERTH_ARRAY_SIZE(ports); k++) {
			struct berth_host_decision d;
			int r = berth_host_decide(pats, npats, lines[i], ports[k], &d);
			check_decision(pats, npats, &d, r, ports[k]);
			for (size_t a = 0; a < naddrs; a++)
				check_address(&d, &addrs[a]);
			if (d.is_literal)
				check_address(&d, &d.literal);
		}
	}
	free(buf);
	return 0;
}
