/* SPDX-License-Identifier: MIT */
/*
 * body.h - where a request body ends, so that the broker forwards a plain
 * (absolute-form) HTTP request's body and nothing after it.
 *
 * A client of the HTTP proxy may send, on the connection of a plain request,
 * bytes after the request's body: a pipelined second request.  Relayed raw,
 * they would reach the declared destination without being parsed, decided
 * on or rewritten (a second request naming another Host on a shared front
 * end, for example).  The broker therefore forwards exactly the body the
 * head announced, found with this framer, and drops whatever follows; the
 * rewritten head says `Connection: close`, so the client learns to open a
 * new connection for its next request.
 *
 * Framing (RFC 9112 6.3): no body (no Content-Length, no Transfer-Encoding),
 * exactly N bytes (Content-Length: N), or the chunked coding (RFC 9112 7.1):
 *
 *   chunked-body   = *chunk last-chunk trailer-section CRLF
 *   chunk          = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
 *   chunk-size     = 1*HEXDIG
 *   last-chunk     = 1*("0") [ chunk-ext ] CRLF
 *   trailer-section = *( field-line CRLF )
 *
 * The framer is stricter than the grammar allows a recipient to be, on
 * purpose (request smuggling lives in lenient framing): line ends are CRLF
 * only (no bare LF, RFC 9112 2.2 allows but does not require accepting it),
 * a chunk size has at most 15 hex digits (no overflow), a chunk-size line
 * (with its extensions) is at most BERTH_BODY_LINE_MAX bytes and the trailer
 * section at most BERTH_BODY_TRAILER_MAX bytes; control characters other than
 * HTAB in a size line or a trailer line are refused.  Chunk data is not
 * looked at.
 */
#ifndef BERTH_BROKER_BODY_H
#define BERTH_BROKER_BODY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BERTH_BODY_LINE_MAX 4096     /* bytes of one chunk-size line, CRLF included */
#define BERTH_BODY_TRAILER_MAX 16384 /* bytes of the whole trailer section */

enum berth_body_kind {
	BERTH_BODY_NONE = 0,    /* no body */
	BERTH_BODY_LENGTH = 1,  /* exactly `length` bytes */
	BERTH_BODY_CHUNKED = 2, /* the chunked transfer coding */
};

/* The framer; set it up with berth_body_init().  Fields are private. */
struct berth_body {
	enum berth_body_kind kind;
	int state;
	uint64_t left;   /* LENGTH: bytes still to come; CHUNKED: bytes of chunk data left */
	unsigned digits; /* hex digits of the current chunk size */
	size_t line;     /* bytes of the current size or trailer line */
	size_t trailer;  /* bytes of the trailer section so far */
	bool done;
};

/*
 * berth_body_init - start framing a body of @kind; @length counts only for
 * BERTH_BODY_LENGTH (bytes).  A body of kind NONE, or of length 0, is done
 * at once.
 */
void berth_body_init(struct berth_body *f, enum berth_body_kind kind, uint64_t length);

/*
 * berth_body_feed - look at the next @n bytes the client sent after the
 * head (or after what earlier calls consumed).
 * Returns how many of them (0..@n) belong to the body, which the caller
 * forwards; when the body ends within them, berth_body_done() is true from
 * then on and the rest of @p is not the body's.  Returns -1 when the chunked
 * framing is malformed or beyond the limits above (the caller answers 400
 * and closes); nothing of @p is the body's then.
 */
long berth_body_feed(struct berth_body *f, const unsigned char *p, size_t n);

/* berth_body_done - whether the whole body has been seen. */
bool berth_body_done(const struct berth_body *f);

#endif
