/* SPDX-License-Identifier: MIT */
/*
 * dnsmsg.h - the DNS messages of the sandbox's resolver (docs/egress.md
 * "Clients that ignore the proxy"): one query in, one answer out.  Pure: no
 * I/O, no global state, so the parser is fuzzed (fuzz/fuzz_dnsmsg.c).
 *
 * Only what a stub resolver (glibc, musl, Go's, c-ares, Node's) sends is
 * read: a standard query (RFC 1035 4.1) with exactly one question, class IN,
 * and at most one additional record (an EDNS OPT, RFC 6891, which is ignored:
 * every answer fits in 512 bytes).  Anything else gets FORMERR or NOTIMP, so
 * that the client fails at once instead of waiting for a time-out.
 */
#ifndef BERTH_BROKER_DNSMSG_H
#define BERTH_BROKER_DNSMSG_H

#include <stddef.h>
#include <stdint.h>

#define BERTH_DNS_NAME_MAX 253   /* characters of a name in dotted text (RFC 1035 2.3.4) */
#define BERTH_DNS_ANSWER_MAX 512 /* bytes of any answer berth_dnsmsg_answer() writes (RFC 1035 4.2.1) */

/* RFC 1035 3.2.2 and RFC 3596 */
#define BERTH_DNS_TYPE_A 1
#define BERTH_DNS_TYPE_AAAA 28

/* RFC 1035 4.1.1 RCODE */
enum berth_dns_rcode {
	BERTH_DNS_NOERROR = 0,
	BERTH_DNS_FORMERR = 1,
	BERTH_DNS_SERVFAIL = 2,
	BERTH_DNS_NXDOMAIN = 3,
	BERTH_DNS_NOTIMP = 4,
	BERTH_DNS_REFUSED = 5,
};

struct berth_dns_query {
	uint16_t id;
	uint16_t flags;  /* as received; the answer copies RD */
	uint16_t qtype;  /* BERTH_DNS_TYPE_A, _AAAA or any other */
	uint16_t qclass; /* 1 (IN) when the query was valid */
	/* the question's name in dotted text, as the query spelt it (case kept,
	 * no trailing dot; "" for the root); only letters, digits, '-' and '_' */
	char name[BERTH_DNS_NAME_MAX + 1];
	/* the question section as received, echoed in the answer */
	size_t question_len;
	uint8_t question[BERTH_DNS_NAME_MAX + 2 + 4];
};

/*
 * berth_dnsmsg_parse - read the query in @buf (@len bytes, one UDP datagram).
 * @q: filled (the id and flags whenever @len >= 12, so that even a refusal
 *     can be answered)
 * Returns BERTH_DNS_NOERROR for a query to answer, BERTH_DNS_FORMERR for a
 * malformed one (no question, several, a compressed or over-long name, a
 * label with a byte other than a letter, digit, '-' or '_', trailing bytes
 * after the records), BERTH_DNS_NOTIMP for an opcode other than QUERY or a
 * class other than IN, and -1 when no answer may be sent at all (shorter than
 * a header, or a response: QR set, which answering would loop).
 */
int berth_dnsmsg_parse(const uint8_t *buf, size_t len, struct berth_dns_query *q);

/*
 * berth_dnsmsg_answer - write the answer to @q into @out (@cap bytes, at
 * least BERTH_DNS_ANSWER_MAX).
 * @rcode: the RCODE; with BERTH_DNS_NOERROR, @ipv4 (4 bytes, network order)
 *         gives one A record of @ttl seconds when @q asked for A, and no
 *         record at all (NODATA, RFC 2308 2.2) for any other type or when
 *         @ipv4 is NULL
 * The question is echoed when @q was parsed (question_len > 0).  Flags: QR,
 * AA and RA set, RD copied from the query.
 * Returns the answer's length, or -1 when @cap is too small.
 */
int berth_dnsmsg_answer(const struct berth_dns_query *q, enum berth_dns_rcode rcode, const uint8_t *ipv4,
			uint32_t ttl, uint8_t *out, size_t cap);

#endif
