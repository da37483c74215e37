/* SPDX-License-Identifier: MIT */
/*
 * socks.h - the SOCKS5 server side of the egress broker (RFC 1928), for
 * `socks5h://` clients: CONNECT only, and only the "no authentication
 * required" method.
 *
 * Pure code: no I/O, no DNS, no allocation, no global state.  The parser
 * takes bytes as they arrive, in pieces of any size, and its verdicts do not
 * depend on how the bytes were cut (the fuzzer checks this).
 *
 * The exchange (RFC 1928 sections 3, 4, 6):
 *   client  VER=5 NMETHODS METHODS...                     the greeting
 *   broker  VER=5 METHOD                                  BERTH_SOCKS_REPLY
 *   client  VER=5 CMD RSV=0 ATYP DST.ADDR DST.PORT        the request
 *   broker  VER=5 REP RSV=0 ATYP BND.ADDR BND.PORT        berth_socks_format_reply()
 *
 * What is refused, and how:
 *   - a first byte of 4 (SOCKS4 and SOCKS4a): the SOCKS4 "request rejected"
 *     reply (VN=0, CD=91, 8 bytes) so that the client reports a refusal, not
 *     a protocol error; any other first byte but 5: no reply;
 *   - a greeting with no methods, or without 0x00 "no authentication
 *     required": METHOD 0xFF "no acceptable methods" (RFC 1928 3).  berth
 *     asks a sandboxed program for no credentials: username/password (0x02,
 *     RFC 1929) and GSSAPI (0x01) are never chosen;
 *   - in the request, in this order: VER not 5 -> 0x01 general failure; CMD
 *     BIND (2), UDP ASSOCIATE (3) or unknown -> 0x07 command not supported;
 *     RSV not 0 -> 0x01; ATYP other than IPv4 (1), domain name (3), IPv6 (4)
 *     -> 0x08 address type not supported; a domain name that is not a valid
 *     host (1-255 bytes on the wire, but a name must be at most 253 bytes
 *     and pass berth_http_normalize_host(): no NUL, no control characters,
 *     no odd IPv4 spelling; IPv6 text without brackets is accepted) -> 0x01;
 *     port 0 -> 0x01.  RFC 1928 has no "malformed request" code; 0x01 is the
 *     closest.
 * A refused request is replied to only once all of it has arrived when its
 * length is known (VER and ATYP valid), so that closing the connection
 * right after the reply does not reset it with request bytes unread.  After
 * any refusal the server "MUST terminate the TCP connection shortly after
 * sending the reply" (RFC 1928 6); shut down the write side and read a
 * little before close(2), for the same reason.
 *
 * Decisions that belong to the broker, after BERTH_SOCKS_DONE: 0x02
 * "connection not allowed by ruleset" (the allowlist or the address rules),
 * 0x04 host unreachable (the name does not resolve), 0x05 connection
 * refused, 0x03/0x06 as the connect(2) error says, and 0x00 once connected.
 *
 * One port for HTTP and SOCKS: a SOCKS client's first byte is 4 or 5, which
 * is never the first byte of an HTTP method (a token of visible characters).
 */
#ifndef BERTH_BROKER_SOCKS_H
#define BERTH_BROKER_SOCKS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "http.h" /* enum berth_target_kind, BERTH_TARGET_HOST_MAX, berth_http_normalize_host() */

#define BERTH_SOCKS_REPLY_MAX 22 /* the longest reply: IPv6 bound address */

/* REP values of a reply (RFC 1928 6). */
enum berth_socks_rep {
	BERTH_SOCKS_SUCCEEDED = 0x00,
	BERTH_SOCKS_GENERAL_FAILURE = 0x01,
	BERTH_SOCKS_NOT_ALLOWED = 0x02, /* connection not allowed by ruleset */
	BERTH_SOCKS_NETWORK_UNREACHABLE = 0x03,
	BERTH_SOCKS_HOST_UNREACHABLE = 0x04,
	BERTH_SOCKS_CONNECTION_REFUSED = 0x05,
	BERTH_SOCKS_TTL_EXPIRED = 0x06,
	BERTH_SOCKS_COMMAND_NOT_SUPPORTED = 0x07,
	BERTH_SOCKS_ADDRESS_TYPE_NOT_SUPPORTED = 0x08,
};

enum berth_socks_verdict {
	BERTH_SOCKS_BAD = -1,      /* refused: send p->reply (p->reply_len may be 0), then close */
	BERTH_SOCKS_NEED_MORE = 0, /* everything given was consumed; feed more */
	BERTH_SOCKS_REPLY = 1,     /* greeting accepted: send p->reply (05 00), then feed the request */
	BERTH_SOCKS_DONE = 2,      /* the CONNECT request is in p->req */
};

/* A CONNECT request. */
struct berth_socks_request {
	enum berth_target_kind kind;          /* how the client named the destination (normalised) */
	char host[BERTH_TARGET_HOST_MAX + 1]; /* lowercase name, dotted quad, or RFC 5952 IPv6 text */
	uint8_t addr[16]; /* IPV4: bytes 0-3, IPV6: all 16, network order; zero for a NAME */
	uint16_t port;    /* 1-65535, host byte order */
};

/*
 * The parser.  Embed it; set it up with berth_socks_init().  `req` (after
 * DONE), `reply`/`reply_len` (after REPLY and BAD), `rep` and `reason`
 * (after BAD) are for callers; the rest is private.
 */
struct berth_socks_parser {
	struct berth_socks_request req;
	uint8_t reply[BERTH_SOCKS_REPLY_MAX];
	size_t reply_len;
	/* After BAD: the REP code of the SOCKS5 reply in `reply`, or -1 when
	 * `reply` is not one (greeting refused with 0xFF, SOCKS4 refusal, nothing). */
	int rep;
	char reason[96]; /* after BAD: why, in words */
	/* private */
	int state;
	uint8_t buf[4 + 1 + 255 + 2]; /* the longest message: a request with a 255-byte name */
	size_t have;
};

/* berth_socks_init - a parser waiting for the greeting.  Never fails. */
void berth_socks_init(struct berth_socks_parser *p);

/*
 * berth_socks_feed - give the parser the next bytes of the connection.
 * @p: an initialised parser
 * @data, @len: the bytes; @len may be 0
 * @consumed: set to how many bytes were taken; with REPLY and DONE, the
 *            bytes after it were not looked at (the request after the
 *            greeting, or tunnel data after the request): feed them again
 *            (REPLY) or relay them (DONE).  With NEED_MORE it is @len.
 * Returns BERTH_SOCKS_NEED_MORE, BERTH_SOCKS_REPLY (once, after the
 * greeting), BERTH_SOCKS_DONE, or BERTH_SOCKS_BAD.  After DONE or BAD,
 * further calls consume nothing and return the same verdict.
 */
enum berth_socks_verdict berth_socks_feed(struct berth_socks_parser *p, const void *data, size_t len,
					  size_t *consumed);

/*
 * berth_socks_format_reply - a reply to a request (RFC 1928 6).
 * @buf, @len: output; BERTH_SOCKS_REPLY_MAX bytes always suffice
 * @rep: the REP code (0x00-0x08)
 * @bound: the address and port the broker's outgoing socket is bound to
 *         (struct sockaddr_in or sockaddr_in6, from getsockname(2)), or NULL
 *         for 0.0.0.0:0, which is what a failure reply carries
 * Returns the bytes written (10 for IPv4, 22 for IPv6), or -1 when @rep is
 * out of range, @bound is of another family, or @len is too small.
 */
int berth_socks_format_reply(uint8_t *buf, size_t len, enum berth_socks_rep rep,
			     const struct sockaddr *bound);

#endif
