/* SPDX-License-Identifier: MIT */
/*
 * dnsmsg.c - the sandbox resolver's DNS messages (see dnsmsg.h).
 */
#include "dnsmsg.h"

#include <stdbool.h>
#include <string.h>

#define HEADER 12
#define QR 0x8000u
#define AA 0x0400u
#define RD 0x0100u
#define RA 0x0080u

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static bool label_byte(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
	       c == '_';
}

/* The question's name at @buf[*off]: uncompressed labels (a query has
 * nothing to point back to), into dotted text.  Returns 0 or -1. */
static int read_name(const uint8_t *buf, size_t len, size_t *off, char *name)
{
	size_t o = *off, n = 0, wire = 0;

	for (;;) {
		if (o >= len)
			return -1;
		uint8_t l = buf[o++];
		wire++;
		if (l == 0)
			break;
		if (l > 63 || o + l > len) /* 0xC0: a pointer; 0x40, 0x80: reserved */
			return -1;
		wire += l;
		if (wire > 255 || n + (n > 0) + l > BERTH_DNS_NAME_MAX)
			return -1;
		if (n > 0)
			name[n++] = '.';
		for (uint8_t i = 0; i < l; i++) {
			if (!label_byte(buf[o + i]))
				return -1;
			name[n++] = (char)buf[o + i];
		}
		o += l;
	}
	name[n] = '\0';
	*off = o;
	return 0;
}

/* An additional record (only EDNS OPT is expected): skipped.  Returns 0 or -1. */
static int skip_rr(const uint8_t *buf, size_t len, size_t *off)
{
	size_t o = *off;

	if (o >= len || buf[o] != 0) /* OPT's owner is the root */
		return -1;
	o++;
	if (o + 10 > len)
		return -1;
	size_t rdlen = get16(buf + o + 8);
	o += 10;
	if (o + rdlen > len)
		return -1;
	*off = o + rdlen;
	return 0;
}

int berth_dnsmsg_parse(const uint8_t *buf, size_t len, struct berth_dns_query *q)
{
	size_t off = HEADER;

	memset(q, 0, sizeof *q);
	if (buf == NULL || len < HEADER)
		return -1;
	q->id = get16(buf);
	q->flags = get16(buf + 2);
	if (q->flags & QR)
		return -1;
	if (((q->flags >> 11) & 0xF) != 0)
		return BERTH_DNS_NOTIMP;
	unsigned qd = get16(buf + 4), an = get16(buf + 6), ns = get16(buf + 8), ar = get16(buf + 10);
	if (qd != 1 || an != 0 || ns != 0 || ar > 1)
		return BERTH_DNS_FORMERR;
	if (read_name(buf, len, &off, q->name) < 0 || off + 4 > len) {
		q->name[0] = '\0'; /* nothing half read is left for a caller to use */
		return BERTH_DNS_FORMERR;
	}
	q->qtype = get16(buf + off);
	q->qclass = get16(buf + off + 2);
	off += 4;
	q->question_len = off - HEADER;
	memcpy(q->question, buf + HEADER, q->question_len);
	if ((ar == 1 && skip_rr(buf, len, &off) < 0) || off != len) {
		q->name[0] = '\0';
		q->question_len = 0;
		return BERTH_DNS_FORMERR;
	}
	if (q->qclass != 1)
		return BERTH_DNS_NOTIMP;
	return BERTH_DNS_NOERROR;
}

int berth_dnsmsg_answer(const struct berth_dns_query *q, enum berth_dns_rcode rcode, const uint8_t *ipv4,
			uint32_t ttl, uint8_t *out, size_t cap)
{
	bool a =
	    rcode == BERTH_DNS_NOERROR && ipv4 != NULL && q->qtype == BERTH_DNS_TYPE_A && q->question_len > 0;
	size_t n = HEADER + q->question_len + (a ? 16 : 0);

	if (cap < BERTH_DNS_ANSWER_MAX || n > cap)
		return -1;
	memset(out, 0, n);
	put16(out, q->id);
	put16(out + 2, QR | AA | RA | (q->flags & RD) | ((unsigned)rcode & 0xF));
	put16(out + 4, q->question_len > 0);
	put16(out + 6, a);
	memcpy(out + HEADER, q->question, q->question_len);
	if (a) {
		uint8_t *r = out + HEADER + q->question_len;
		put16(r, 0xC000 | HEADER); /* the name: a pointer to the question's */
		put16(r + 2, BERTH_DNS_TYPE_A);
		put16(r + 4, 1);
		put16(r + 6, ttl >> 16);
		put16(r + 8, ttl & 0xFFFF);
		put16(r + 10, 4);
		memcpy(r + 12, ipv4, 4);
	}
	return (int)n;
}
