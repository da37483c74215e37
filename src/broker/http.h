/* SPDX-License-Identifier: MIT */
/*
 * http.h - the HTTP proxy request parser of the egress broker, the rewrite of
 * a plain-HTTP request into the request sent upstream, and the proxy's own
 * replies.
 *
 * Pure code: no I/O, no DNS, no global state, no clock; safe from any thread.
 * The parser takes bytes as they arrive, in pieces of any size, and says
 * "need more", "done" or "bad request" with an HTTP status and a reason.  The
 * verdict, the status, the reason and the parsed request do not depend on
 * how the bytes were cut into pieces (the fuzzer checks this).  It never
 * reads past the empty line that ends the head: what follows (a request body,
 * or the first bytes of a tunnel after CONNECT) is left to the caller.
 *
 * What a client sends to an HTTP proxy (RFC 9112 section 3.2):
 *   - authority-form, only with CONNECT (RFC 9112 3.2.3, RFC 9110 9.3.6):
 *       CONNECT host:port HTTP/1.1
 *     the port is required (1-65535); an IPv6 address is written in brackets,
 *     `CONNECT [2001:db8::1]:443 HTTP/1.1`;
 *   - absolute-form, any other method (RFC 9112 3.2.2):
 *       GET http://host[:port]/path?query HTTP/1.1
 *     the "http" scheme only (port 80 when absent).  An `https://` URL is
 *     refused with 400: a client reaches an https origin with a CONNECT
 *     tunnel, and berth never terminates TLS.
 * origin-form (`GET /path`) and asterisk-form (`OPTIONS *`) are what a server
 * receives, not a proxy: refused with 400 (BERTH_HTTP_PROXY), accepted only
 * in BERTH_HTTP_ORIGIN mode, which reads a request the way the upstream
 * server will read the output of berth_http_rewrite_origin() (tests and
 * fuzzers use it to check the rewrite).
 *
 * Limits (every one is checked as bytes arrive, so memory stays bounded;
 * lengths exclude the line's CRLF or LF):
 *   request line  <= BERTH_HTTP_MAX_REQUEST_LINE (8192) bytes, else
 *                    414 URI Too Long (RFC 9112 3: "a server that receives a
 *                    request-target longer than any URI it wishes to parse MUST
 *                    respond with a 414"; RFC 9110 15.5.15)
 *   a field line  <= BERTH_HTTP_MAX_FIELD_LINE (8192) bytes, else 431
 *   the field lines together <= BERTH_HTTP_MAX_HEADER_BLOCK (65536) bytes, else 431
 *   field lines   <= BERTH_HTTP_MAX_HEADERS (100), else 431
 *                    (431 Request Header Fields Too Large: RFC 6585 section 5;
 *                    RFC 9110 15.5.14 leaves header size to 4xx codes)
 *   leading empty lines before the request line: up to 16 are skipped (RFC
 *                    9112 2.2: "SHOULD ignore at least one empty line"), more is 400
 *
 * Refused with 400 Bad Request (RFC 9112 and RFC 9110 sections given):
 *   - a bare CR, not followed by LF, anywhere in the head (RFC 9112 2.2); a
 *     lone LF is accepted as a line end (RFC 9112 2.2 allows it; the head is
 *     written anew upstream with CRLF, so it cannot be read two ways);
 *   - a NUL or any other control character but HTAB in a field value, a CTL,
 *     space or non-ASCII byte in the request target (RFC 9110 5.5, RFC 3986);
 *   - a request line that is not exactly `token SP target SP HTTP/d.d` (RFC
 *     9112 3); a method or field name that is not a token (RFC 9110 5.6.2);
 *     white space between a field name and its colon (RFC 9112 5.1);
 *   - obs-fold, a field line starting with SP or HTAB (RFC 9112 5.2: a server
 *     "MUST either reject the message by sending a 400");
 *   - more than one Host field line, or a Host value that is not
 *     `uri-host [":" port]` (RFC 9112 3.2);
 *   - Content-Length that is not 1*DIGIT, above 2^63-1, or given twice (in two
 *     lines or one list) with different values (RFC 9110 8.6, RFC 9112 6.3
 *     item 5);
 *   - Transfer-Encoding together with Content-Length (RFC 9112 6.3 item 3:
 *     "might indicate an attempt to perform request smuggling ... ought to be
 *     handled as an error"; berth refuses rather than picking one), in an
 *     HTTP/1.0 request (RFC 9112 6.1), or whose last coding is not `chunked`,
 *     or with `chunked` twice (RFC 9112 6.1, 6.3 item 4);
 *   - a Connection option naming Host, Content-Length or Transfer-Encoding:
 *     removing those would change where or how long the request is upstream
 *     (RFC 9110 7.6.1: options are only for hop-by-hop fields);
 *   - a CONNECT request with content (Transfer-Encoding, or Content-Length
 *     other than 0; RFC 9110 9.3.6: "A CONNECT request message does not have
 *     content");
 *   - in an absolute-form request, a Host header that disagrees with the
 *     target: "Host header disagrees with the request target".  Host and port
 *     are compared after normalisation (lowercase; IPv6 in its RFC 5952 form;
 *     an absent or empty port is 80).  RFC 9112 3.2.2 lets a proxy ignore
 *     Host and replace it; berth refuses instead, so that a program cannot
 *     send one thing to the filter and another to a virtual host behind a
 *     shared address.  A missing Host is allowed (berth writes it).  A CONNECT
 *     request's Host is checked for syntax only: nothing of it is forwarded;
 *   - a target host that is not valid: see berth_http_normalize_host().
 * Other statuses: 405 for TRACE (berth does not implement Max-Forwards, RFC
 * 9110 7.6.2, and TRACE echoes the request, proxy credentials included, to
 * whoever answers), 501 for a transfer coding other than chunked (RFC 9112
 * 6.1 "SHOULD respond with 501"), 505 for an HTTP major version other than 1
 * (RFC 9110 15.6.6), 500 when memory runs out.
 */
#ifndef BERTH_BROKER_HTTP_H
#define BERTH_BROKER_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BERTH_HTTP_MAX_REQUEST_LINE 8192  /* bytes, without CRLF */
#define BERTH_HTTP_MAX_FIELD_LINE 8192    /* bytes of one field line, without CRLF */
#define BERTH_HTTP_MAX_HEADER_BLOCK 65536 /* bytes of all field lines, without their CRLFs */
#define BERTH_HTTP_MAX_HEADERS 100        /* field lines */
/* The largest head the parser holds and berth_http_rewrite_origin() writes: the
 * request line and every field line at their limits, with CRLFs and the empty line. */
#define BERTH_HTTP_MAX_HEAD                                                                                  \
	(BERTH_HTTP_MAX_REQUEST_LINE + 2 + BERTH_HTTP_MAX_HEADER_BLOCK + (BERTH_HTTP_MAX_HEADERS + 2) * 2)
/* The longest host name (RFC 1035 2.3.4, as text without the root dot). */
#define BERTH_TARGET_HOST_MAX 253
#define BERTH_HTTP_REASON_MAX 160 /* reason text, with its NUL */
#define BERTH_HTTP_REPLY_MAX 1024 /* the longest reply the format functions write, with its NUL */

/* What kind of host a target names; host text is always normalised.  (Not
 * ../policy/hostpat.h's enum berth_host_kind, which is the kind of an allow-host pattern.) */
enum berth_target_kind {
	BERTH_TARGET_NAME = 1, /* a DNS name, lowercase */
	BERTH_TARGET_IPV4 = 2, /* a dotted quad a.b.c.d, no leading zeros */
	BERTH_TARGET_IPV6 = 3, /* IPv6 text as inet_ntop(3) writes it (RFC 5952), no brackets */
};

enum berth_http_mode {
	BERTH_HTTP_PROXY = 0,  /* CONNECT authority-form and absolute-form: what the broker reads */
	BERTH_HTTP_ORIGIN = 1, /* origin-form (asterisk-form for OPTIONS) plus Host, and CONNECT */
};

enum berth_http_verdict {
	BERTH_HTTP_BAD = -1,      /* refused: see parser.err; send the reply, then close */
	BERTH_HTTP_NEED_MORE = 0, /* everything given was consumed; feed more */
	BERTH_HTTP_DONE = 1,      /* the head is complete: see parser.req */
};

enum berth_http_body {
	BERTH_HTTP_BODY_NONE = 0,    /* no content follows the head */
	BERTH_HTTP_BODY_LENGTH = 1,  /* content_length bytes follow (Content-Length) */
	BERTH_HTTP_BODY_CHUNKED = 2, /* a chunked body follows (Transfer-Encoding: chunked) */
};

/* A refusal: the HTTP status to answer with and why, in words (no CR/LF). */
struct berth_http_error {
	int status;                         /* 400, 405, 414, 431, 500, 501 or 505; 0 while not refused */
	char reason[BERTH_HTTP_REASON_MAX]; /* lowercase but for names (Host, CONNECT), no trailing period */
};

/* One field line.  The strings point into the parser and are NUL-terminated. */
struct berth_http_header {
	const char *name; /* as received (case kept) */
	size_t name_len;
	const char *value; /* leading and trailing SP/HTAB removed; may be empty */
	size_t value_len;
	bool hop_by_hop; /* removed by berth_http_rewrite_origin() (see there) */
};

/* A parsed request head.  Valid while the parser lives and is not reset. */
struct berth_http_request {
	const char *method; /* token, case-sensitive ("CONNECT", "GET", ...) */
	size_t method_len;
	bool connect; /* CONNECT with an authority-form target */
	int minor;    /* HTTP/1.minor: 0 or 1 (1.2 and above count as 1, RFC 9110 6.2) */
	enum berth_target_kind host_kind;
	char host[BERTH_TARGET_HOST_MAX + 1]; /* normalised target host (see berth_target_kind) */
	uint16_t port;                        /* 1-65535; 80 when an http:// URL names none */
	/* Absolute-form: the origin-form target to send upstream (path and query,
	 * "/" for an empty path, "*" for OPTIONS with an empty path and no query,
	 * RFC 9112 3.2.1 and 3.2.4).  Origin mode: the target as received.
	 * NULL for CONNECT. */
	const char *path;
	size_t path_len;
	size_t n_headers;
	struct berth_http_header headers[BERTH_HTTP_MAX_HEADERS];
	enum berth_http_body body;
	uint64_t content_length; /* when body is BERTH_HTTP_BODY_LENGTH */
};

/* private: where a field line's name and value are in the parser's buffer */
struct berth_http_span {
	uint32_t name_off, name_len, value_off, value_len;
};

/*
 * The parser.  Embed it or allocate it; set it up with berth_http_init().
 * Only `req` (after BERTH_HTTP_DONE) and `err` (after BERTH_HTTP_BAD) are for
 * callers; the other fields are private.  The struct itself is about 6 KiB;
 * the head is held in a buffer that grows with it, never beyond
 * BERTH_HTTP_MAX_HEAD bytes.
 */
struct berth_http_parser {
	struct berth_http_request req;
	struct berth_http_error err;
	/* private */
	enum berth_http_mode mode;
	int state;
	char *buf;
	size_t cap, len, line_start, total, skipped;
	uint32_t method_off, path_off, path_len;
	int path_static; /* 0: in buf, 1: "/", 2: "*" */
	struct berth_http_span spans[BERTH_HTTP_MAX_HEADERS];
};

/*
 * berth_http_init - an empty parser.
 * @p: the parser (any content; it is overwritten)
 * @mode: BERTH_HTTP_PROXY for what clients send to the broker
 * Allocates nothing (the buffer comes with the first bytes).  Never fails.
 */
void berth_http_init(struct berth_http_parser *p, enum berth_http_mode mode);

/* berth_http_free - release what @p holds; @p may be initialised again. */
void berth_http_free(struct berth_http_parser *p);

/*
 * berth_http_feed - give the parser the next bytes of the connection.
 * @p: an initialised parser
 * @data, @len: the bytes; @len may be 0
 * @consumed: set to how many of the bytes were taken.  With BERTH_HTTP_DONE,
 *            the bytes after *@consumed are not part of the head (content,
 *            or tunnel data after CONNECT) and belong to the caller.  With
 *            BERTH_HTTP_NEED_MORE it is always @len.  With BERTH_HTTP_BAD it
 *            is how far the parser read before refusing, which depends on
 *            how the bytes were cut (a limit trips as soon as it is crossed).
 * Returns BERTH_HTTP_NEED_MORE, BERTH_HTTP_DONE (p->req is filled), or
 * BERTH_HTTP_BAD (p->err says which status and why; answer with
 * berth_http_format_error() and close the connection: after a refusal the
 * parser stays in that state and the rest of the stream is not HTTP).  After
 * DONE or BAD, further calls consume nothing and return the same verdict.
 *
 * When closing after a refusal, shut down the write side and read a little
 * more before close(2): closing with unread bytes makes the kernel reset the
 * connection, and the client may never see the reply (RFC 9112 9.6).
 */
enum berth_http_verdict berth_http_feed(struct berth_http_parser *p, const void *data, size_t len,
					size_t *consumed);

/*
 * berth_http_normalize_host - check and normalise a host as it appears in an
 * authority (RFC 3986 3.2.2 uri-host, without brackets for IPv6: pass the
 * text between them with @bracketed true).
 * @s, @n: the host text (need not be NUL-terminated; may contain any byte)
 * @bracketed: the text was inside [ ]: it must be an IPv6 address (no zone
 *             identifier, no IPvFuture)
 * @out: BERTH_TARGET_HOST_MAX + 1 bytes; the normalised host on success
 * @kind: set on success
 * @reason: on failure, set to a static text saying why
 * A name must be 1-253 bytes of labels of 1-63 letters, digits, `-` and `_`,
 * separated by single dots, no label starting or ending with `-`, no trailing
 * dot; it is lowercased.  A name whose last label is all digits, or `0x`
 * followed by hex digits, must be a dotted quad of four decimal numbers
 * 0-255 without leading zeros (BERTH_TARGET_IPV4): other spellings
 * (`2130706433`, `0x7f.1`, `127.1`, `0177.0.0.1`) are refused, because
 * inet_aton(3) and many clients read them as addresses the allowlist would
 * not recognise.  Percent-encoding and non-ASCII bytes are refused (an
 * internationalised name must be sent as its A-label, RFC 5890).
 * Returns 0, or -1 with *@reason set.
 */
int berth_http_normalize_host(const char *s, size_t n, bool bracketed, char *out,
			      enum berth_target_kind *kind, const char **reason);

/*
 * berth_http_rewrite_origin - the head to send upstream for a parsed
 * absolute-form request (or a request parsed in BERTH_HTTP_ORIGIN mode).
 * @req: from berth_http_feed() (BERTH_HTTP_DONE); not a CONNECT request
 * @buf, @len: output; the head is written, with a NUL after it, when it
 *             fits (len > return value).  @buf may be NULL when @len is 0, to
 *             learn the size.  BERTH_HTTP_MAX_HEAD + 1 bytes always suffice.
 * @err: filled on refusal
 *
 * What is written:
 *   METHOD SP origin-form SP HTTP/1.<the client's minor version> CRLF
 *   Host: host[:port] CRLF            (from the target; the port only when not 80)
 *   every field line not removed, in order, as `Name: value` CRLF
 *   Content-Length: N CRLF            (when the request has one: a single value)
 *   Via: 1.<minor> berth CRLF         (RFC 9110 7.6.3: a proxy MUST send Via)
 *   Connection: close CRLF
 *   CRLF
 * The client's version is kept rather than raised to 1.1 because the broker
 * relays the response bytes unchanged: an HTTP/1.0 client cannot read a
 * chunked response an HTTP/1.1 request would allow.  `Connection: close`
 * makes the upstream end the response by closing, and "MUST NOT process any
 * further requests received on that connection" (RFC 9112 9.6): bytes a
 * client pipelines after the body reach nobody unchecked.
 *
 * Removed (hop-by-hop, RFC 9110 7.6.1 and the list of RFC 2616 13.5.1 that
 * RFC 7230 6.1 inherits): Connection and every field it names, Keep-Alive,
 * Proxy-Connection, Proxy-Authorization (berth asks for no proxy
 * credentials; they must not reach the origin), Proxy-Authenticate, TE,
 * Trailer, Upgrade (berth does not switch protocols on a plain request), and
 * a field named `close` (the added `Connection: close` names it).  Host and
 * Content-Length are replaced by the lines above.  Transfer-Encoding is kept:
 * the broker forwards the body exactly as the client framed it (chunked, the
 * only coding accepted), so the framing header travels with it; it is
 * hop-by-hop only for a proxy that re-frames the body, and berth does not.
 *
 * Refused: a Host header that disagrees with the target (400 "Host header
 * disagrees with the request target"), a CONNECT request (400), and a result
 * that would break the parser's own limits (431; possible only when the
 * request was close to them: the added lines count too).
 *
 * Returns the length of the head (the same for every @len), or -1 with @err
 * filled.
 */
long berth_http_rewrite_origin(const struct berth_http_request *req, char *buf, size_t len,
			       struct berth_http_error *err);

/*
 * berth_http_host_matches - whether a Host header value names the request's
 * target: same normalised host, same port (an absent or empty port is 80).
 * @req: a parsed request
 * @value, @len: the Host value, OWS already removed
 * Returns 1 when it matches, 0 when it does not, -1 when @value is not a
 * valid `uri-host [":" port]`.
 */
int berth_http_host_matches(const struct berth_http_request *req, const char *value, size_t len);

/*
 * berth_http_format_established - the reply to an allowed CONNECT, once the
 * upstream connection is up: "HTTP/1.1 200 Connection established" and an
 * empty line (RFC 9110 9.3.6: no content, no Content-Length).
 * @buf, @len: output, NUL-terminated
 * Returns the bytes written (without the NUL), or -1 when @len is too small.
 */
int berth_http_format_established(char *buf, size_t len);

/*
 * berth_http_format_forbidden - a 403 Forbidden reply naming the rule that
 * refused the request, as a short text/plain body:
 *   "berth: refused by the egress policy: <rule>\n"
 * with Content-Length and `Connection: close`.
 * @buf, @len: output, NUL-terminated; BERTH_HTTP_REPLY_MAX bytes always suffice
 * @rule: the rule in words, e.g. "evil.example:443 is not declared (--allow-host)";
 *        control characters and non-ASCII bytes become `?` and it is cut at
 *        512 bytes, so a host name from the client cannot shape the reply
 * Returns the bytes written (without the NUL), or -1 when @len is too small.
 */
int berth_http_format_forbidden(char *buf, size_t len, const char *rule);

/*
 * berth_http_format_error - a reply with a text/plain body "berth: <reason>\n",
 * Content-Length and `Connection: close`.
 * @buf, @len: output, NUL-terminated; BERTH_HTTP_REPLY_MAX bytes always suffice
 * @status: 400, 403, 405, 408, 414, 421, 431, 500, 501, 502, 503, 504 or 505 (405
 *          adds the Allow field RFC 9110 15.5.6 requires, listing the methods
 *          berth forwards)
 * @reason: in words (sanitised and cut like @rule above); NULL for none
 * Returns the bytes written (without the NUL), or -1 when @status is not one
 * of those or @len is too small.
 */
int berth_http_format_error(char *buf, size_t len, int status, const char *reason);

#endif
