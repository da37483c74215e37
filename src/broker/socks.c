/* SPDX-License-Identifier: MIT */
/*
 * socks.c - the SOCKS5 greeting and CONNECT request parser, and its replies
 * (see socks.h).  Each check is made at a fixed byte count of its message,
 * never at a chunk boundary, so the verdicts do not depend on chunking.
 */
#include "socks.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

enum { ST_GREETING, ST_REQUEST, ST_DONE, ST_BAD };

enum { ATYP_IPV4 = 1, ATYP_NAME = 3, ATYP_IPV6 = 4 };

void berth_socks_init(struct berth_socks_parser *p)
{
	memset(p, 0, sizeof *p);
	p->state = ST_GREETING;
	p->rep = -1;
}

static enum berth_socks_verdict bad(struct berth_socks_parser *p, const char *reason)
{
	p->state = ST_BAD;
	snprintf(p->reason, sizeof p->reason, "%s", reason);
	return BERTH_SOCKS_BAD;
}

/* A SOCKS5 failure reply, then BAD. */
static enum berth_socks_verdict fail(struct berth_socks_parser *p, enum berth_socks_rep rep,
				     const char *reason)
{
	p->reply_len = (size_t)berth_socks_format_reply(p->reply, sizeof p->reply, rep, NULL);
	p->rep = (int)rep;
	return bad(p, reason);
}

/* The bytes of the current message needed before the next decision. */
static size_t needed(const struct berth_socks_parser *p)
{
	if (p->state == ST_GREETING)
		return p->have < 2 ? p->have + 1 : 2 + (size_t)p->buf[1];
	if (p->have < 4)
		return 4;
	switch (p->buf[3]) {
	case ATYP_IPV4:
		return 4 + 4 + 2;
	case ATYP_IPV6:
		return 4 + 16 + 2;
	default: /* ATYP_NAME; other types are refused at 4 bytes */
		return p->have < 5 ? 5 : 5 + (size_t)p->buf[4] + 2;
	}
}

/* Returns NEED_MORE to go on reading, or the verdict. */
static enum berth_socks_verdict greeting(struct berth_socks_parser *p)
{
	if (p->buf[0] == 4) {
		/* SOCKS4: VN=0, CD=91 "request rejected or failed". */
		static const uint8_t v4[8] = {0, 91, 0, 0, 0, 0, 0, 0};

		memcpy(p->reply, v4, sizeof v4);
		p->reply_len = sizeof v4;
		return bad(p, "SOCKS4 is not supported: use socks5h://");
	}
	if (p->buf[0] != 5)
		return bad(p, "not a SOCKS5 greeting");
	if (p->have < 2)
		return BERTH_SOCKS_NEED_MORE;
	if (p->buf[1] != 0 && p->have < needed(p))
		return BERTH_SOCKS_NEED_MORE;
	p->reply[0] = 5;
	p->reply[1] = 0xff; /* no acceptable methods */
	p->reply_len = 2;
	if (p->buf[1] == 0)
		return bad(p, "the greeting offers no method");
	if (memchr(p->buf + 2, 0x00, p->buf[1]) == NULL)
		return bad(p,
			   "the client offers no method berth accepts (only \"no authentication required\")");
	p->reply[1] = 0x00;
	p->state = ST_REQUEST;
	p->have = 0;
	return BERTH_SOCKS_REPLY;
}

static enum berth_socks_verdict header_refusal(struct berth_socks_parser *p)
{
	if (p->buf[0] != 5)
		return fail(p, BERTH_SOCKS_GENERAL_FAILURE, "the request's version is not 5");
	if (p->buf[1] != 1)
		return fail(p, BERTH_SOCKS_COMMAND_NOT_SUPPORTED,
			    "only CONNECT is supported (not BIND or UDP ASSOCIATE)");
	if (p->buf[2] != 0)
		return fail(p, BERTH_SOCKS_GENERAL_FAILURE, "the request's reserved byte is not 0");
	return fail(p, BERTH_SOCKS_ADDRESS_TYPE_NOT_SUPPORTED, "unknown address type");
}

static enum berth_socks_verdict request(struct berth_socks_parser *p)
{
	struct berth_socks_request *r = &p->req;
	const uint8_t *a = p->buf + 4;
	const char *why;
	size_t plen;

	if (p->have == 4) {
		/* The length is unknown: refuse now. */
		if (p->buf[0] != 5 ||
		    (p->buf[3] != ATYP_IPV4 && p->buf[3] != ATYP_NAME && p->buf[3] != ATYP_IPV6))
			return header_refusal(p);
	}
	if (p->have < needed(p))
		return BERTH_SOCKS_NEED_MORE;
	if (p->buf[1] != 1 || p->buf[2] != 0)
		return header_refusal(p);
	memset(r, 0, sizeof *r);
	switch (p->buf[3]) {
	case ATYP_IPV4:
	case ATYP_IPV6: {
		bool v6 = p->buf[3] == ATYP_IPV6;

		r->kind = v6 ? BERTH_TARGET_IPV6 : BERTH_TARGET_IPV4;
		plen = v6 ? 16 : 4;
		memcpy(r->addr, a, plen);
		inet_ntop(v6 ? AF_INET6 : AF_INET, r->addr, r->host, sizeof r->host);
		break;
	}
	default: {
		size_t n = a[0];
		const char *name = (const char *)a + 1;

		plen = 1 + n;
		if (n == 0)
			return fail(p, BERTH_SOCKS_GENERAL_FAILURE, "empty domain name");
		if (berth_http_normalize_host(name, n, memchr(name, ':', n) != NULL, r->host, &r->kind,
					      &why) < 0) {
			char reason[sizeof p->reason];

			snprintf(reason, sizeof reason, "invalid domain name: %s", why);
			return fail(p, BERTH_SOCKS_GENERAL_FAILURE, reason);
		}
		if (r->kind == BERTH_TARGET_IPV4)
			inet_pton(AF_INET, r->host, r->addr);
		else if (r->kind == BERTH_TARGET_IPV6)
			inet_pton(AF_INET6, r->host, r->addr);
		break;
	}
	}
	r->port = (uint16_t)(a[plen] << 8 | a[plen + 1]);
	if (r->port == 0)
		return fail(p, BERTH_SOCKS_GENERAL_FAILURE, "port 0");
	p->state = ST_DONE;
	return BERTH_SOCKS_DONE;
}

enum berth_socks_verdict berth_socks_feed(struct berth_socks_parser *p, const void *data, size_t len,
					  size_t *consumed)
{
	const uint8_t *d = data;
	size_t pos = 0;
	enum berth_socks_verdict v = BERTH_SOCKS_NEED_MORE;

	if (p->state == ST_DONE || p->state == ST_BAD) {
		*consumed = 0;
		return p->state == ST_DONE ? BERTH_SOCKS_DONE : BERTH_SOCKS_BAD;
	}
	while (pos < len && v == BERTH_SOCKS_NEED_MORE) {
		size_t want = needed(p) - p->have, take = len - pos < want ? len - pos : want;

		memcpy(p->buf + p->have, d + pos, take);
		p->have += take;
		pos += take;
		v = p->state == ST_GREETING ? greeting(p) : request(p);
	}
	*consumed = pos;
	return v;
}

int berth_socks_format_reply(uint8_t *buf, size_t len, enum berth_socks_rep rep, const struct sockaddr *bound)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	struct sockaddr_in6 sin6;
	const void *addr, *port;
	size_t alen, n;
	uint8_t atyp;

	if ((unsigned)rep > BERTH_SOCKS_ADDRESS_TYPE_NOT_SUPPORTED)
		return -1;
	if (bound == NULL || bound->sa_family == AF_INET) {
		if (bound != NULL)
			memcpy(&sin, bound, sizeof sin);
		atyp = ATYP_IPV4;
		addr = &sin.sin_addr;
		alen = 4;
		port = &sin.sin_port;
	} else if (bound->sa_family == AF_INET6) {
		memcpy(&sin6, bound, sizeof sin6);
		atyp = ATYP_IPV6;
		addr = &sin6.sin6_addr;
		alen = 16;
		port = &sin6.sin6_port;
	} else {
		return -1;
	}
	/* VER REP RSV ATYP BND.ADDR BND.PORT (RFC 1928 6) */
	n = 4 + alen + 2;
	if (len < n)
		return -1;
	buf[0] = 5;
	buf[1] = (uint8_t)rep;
	buf[2] = 0;
	buf[3] = atyp;
	memcpy(buf + 4, addr, alen);
	memcpy(buf + 4 + alen, port, 2);
	return (int)n;
}
