/* SPDX-License-Identifier: MIT */
/*
 * broker_resolver.c - the sandbox's resolver, served by the egress broker (broker.c): a
 * declared name gets an address of its own (fakeaddr.h); anything else is refused.
 */

#include <string.h>

#include "dnsmsg.h"

#include "broker_int.h"

/* ---- the sandbox's resolver -------------------------------------------------- */

/* A name the resolver refused: the summary line and the audit trail, as
 * any refusal (port 0: no port is known before a connection). */
static void dns_refused(struct berth_broker *b, const char *name, const char *reason)
{
	char rule[BERTH_HOST_NAME_MAX + BERTH_HOST_REASON_MAX + 40];

	snprintf(rule, sizeof rule, "%s (name lookup: %s)", name[0] != '\0' ? name : ".", reason);
	berth_bk_remember_refusal(b, rule, true);
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

void berth_bk_dns_read(evutil_socket_t fd, short what, void *arg)
{
	struct listener *li = arg;
	uint8_t in[1500], out[BERTH_DNS_ANSWER_MAX];

	(void)what;
	/* a bounded number per callback: a flood cannot starve the tunnels */
	for (int i = 0; i < 64; i++) {
		struct sockaddr_storage from;
		socklen_t fl = sizeof from;
		ssize_t n =
		    recvfrom(fd, in, sizeof in, MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *)&from, &fl);
		if (n < 0)
			return;
		if ((size_t)n > sizeof in)
			continue; /* truncated: not a stub resolver's query */
		int m = dns_answer(li->b, in, (size_t)n, out, sizeof out);
		if (m > 0)
			(void)sendto(fd, out, (size_t)m, MSG_DONTWAIT | MSG_NOSIGNAL,
				     (struct sockaddr *)&from, fl);
	}
}

void berth_bk_dns_tagged_read(evutil_socket_t fd, short what, void *arg)
{
	struct listener *li = arg;
	uint8_t in[4 + 1500], out[4 + BERTH_DNS_ANSWER_MAX];

	(void)what;
	for (int i = 0; i < 64; i++) {
		ssize_t n = recv(fd, in, sizeof in, MSG_DONTWAIT | MSG_TRUNC);
		if (n < 0)
			return;
		if ((size_t)n > sizeof in || n < 4)
			continue; /* truncated, or no tag */
		int m = dns_answer(li->b, in + 4, (size_t)n - 4, out + 4, sizeof out - 4);
		if (m > 0) {
			memcpy(out, in, 4); /* the tag, as it came */
			(void)send(fd, out, (size_t)m + 4, MSG_DONTWAIT | MSG_NOSIGNAL);
		}
	}
}
