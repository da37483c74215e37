/* SPDX-License-Identifier: MIT */
/*
 * http.c - the HTTP proxy request parser, the origin-form rewrite and the
 * proxy's replies (see http.h for the rules and the RFC sections).
 *
 * Why the verdict does not depend on how bytes arrive: the head is cut into
 * lines at LF; a line is judged only when its LF has arrived, except for the
 * length limits, which are checked on every partial line too (that is what
 * keeps memory bounded).  A partial line is never longer than the complete
 * line it becomes, and when two limits could trip, the one a growing line
 * crosses first is reported, so a line fed one byte at a time fails with the
 * same status and reason as the same line fed at once.
 */
#include "http.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ST_REQUEST_LINE, ST_HEADERS, ST_DONE, ST_BAD };

#define MAX_LEADING_EMPTY 16
#define INITIAL_CAP 1024
#define BODY_TEXT_MAX 512

/* The methods berth forwards by name (every token but TRACE is forwarded; an
 * Allow field can only list names). */
#define ALLOW_METHODS "GET, HEAD, POST, PUT, DELETE, CONNECT, OPTIONS, PATCH"

static int set_err(struct berth_http_error *e, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int set_err(struct berth_http_error *e, int status, const char *fmt, ...)
{
	va_list ap;

	e->status = status;
	va_start(ap, fmt);
	vsnprintf(e->reason, sizeof e->reason, fmt, ap);
	va_end(ap);
	return -1;
}

#define refuse(p, status, ...) ((p)->state = ST_BAD, set_err(&(p)->err, (status), __VA_ARGS__))

/* Whether @ok holds for each of the @n chars at @s (true when @n is 0). */
static bool each_is(const char *s, size_t n, bool (*ok)(char))
{
	for (size_t i = 0; i < n; i++)
		if (!ok(s[i]))
			return false;
	return true;
}

/* RFC 9110 5.6.2: tchar. */
static bool is_tchar(char ch)
{
	unsigned char c = (unsigned char)ch;

	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return true;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static bool is_token(const char *s, size_t n)
{
	return n > 0 && each_is(s, n, is_tchar);
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Case-insensitive comparison of @s (@n bytes) with the lowercase literal @lit. */
static bool ieq(const char *s, size_t n, const char *lit)
{
	if (strlen(lit) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (lower(s[i]) != lit[i])
			return false;
	return true;
}

static bool ieqn(const char *a, size_t an, const char *b, size_t bn)
{
	if (an != bn)
		return false;
	for (size_t i = 0; i < an; i++)
		if (lower(a[i]) != lower(b[i]))
			return false;
	return true;
}

static bool is_ows(char c)
{
	return c == ' ' || c == '\t';
}

/* The next non-empty element of a comma-separated list (RFC 9110 5.6.1:
 * empty elements are ignored), OWS trimmed.  Returns false at the end. */
static bool list_next(const char **cur, const char *end, const char **elem, size_t *elen)
{
	const char *p = *cur;

	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *s = p, *t = comma != NULL ? comma : end;

		p = comma != NULL ? comma + 1 : end;
		while (s < t && is_ows(*s))
			s++;
		while (t > s && is_ows(t[-1]))
			t--;
		if (t > s) {
			*cur = p;
			*elem = s;
			*elen = (size_t)(t - s);
			return true;
		}
	}
	*cur = end;
	return false;
}

/* The elements of the lists of every field named @name, in order. */
struct field_list {
	const struct berth_http_request *r;
	const char *name;
	size_t next;           /* the field after the one read */
	const char *cur, *end; /* what is left of its value */
};

static bool field_next(struct field_list *l, const char **elem, size_t *elen)
{
	while (!list_next(&l->cur, l->end, elem, elen)) {
		const struct berth_http_header *h;

		do {
			if (l->next >= l->r->n_headers)
				return false;
			h = &l->r->headers[l->next++];
		} while (!ieq(h->name, h->name_len, l->name));
		l->cur = h->value;
		l->end = h->value + h->value_len;
	}
	return true;
}

/* ---- hosts and authorities ------------------------------------------- */

static bool all_digits(const char *s, size_t n)
{
	return n > 0 && each_is(s, n, is_digit);
}

/* WHATWG URL "ends in a number": the last label would be read as an IPv4
 * part (decimal, or 0x and hex digits, none at all included). */
static bool numeric_label(const char *s, size_t n)
{
	if (all_digits(s, n))
		return true;
	return n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && each_is(s + 2, n - 2, is_hex);
}

/* a.b.c.d, each 0-255 in decimal without leading zeros (RFC 3986 dec-octet). */
static bool dotted_quad(const char *s, size_t n)
{
	size_t parts = 0, i = 0;

	while (i <= n) {
		size_t j = i;
		unsigned v = 0;

		while (j < n && s[j] != '.')
			j++;
		if (j - i == 0 || j - i > 3 || !all_digits(s + i, j - i) || (j - i > 1 && s[i] == '0'))
			return false;
		for (size_t k = i; k < j; k++)
			v = v * 10 + (unsigned)(s[k] - '0');
		if (v > 255)
			return false;
		parts++;
		i = j + 1;
	}
	return parts == 4;
}

int berth_http_normalize_host(const char *s, size_t n, bool bracketed, char *out,
			      enum berth_target_kind *kind, const char **reason)
{
	size_t label = 0, last_start = 0;

	if (bracketed) {
		char tmp[64];
		struct in6_addr a;

		if (n == 0 || n >= sizeof tmp || memchr(s, '\0', n) != NULL) {
			*reason = "invalid IPv6 address";
			return -1;
		}
		if (memchr(s, '%', n) != NULL) {
			*reason = "IPv6 zone identifiers are not accepted";
			return -1;
		}
		memcpy(tmp, s, n);
		tmp[n] = '\0';
		if (inet_pton(AF_INET6, tmp, &a) != 1 ||
		    inet_ntop(AF_INET6, &a, out, BERTH_TARGET_HOST_MAX + 1) == NULL) {
			*reason = "invalid IPv6 address";
			return -1;
		}
		*kind = BERTH_TARGET_IPV6;
		return 0;
	}
	if (n == 0) {
		*reason = "empty host";
		return -1;
	}
	if (n > BERTH_TARGET_HOST_MAX) {
		*reason = "host name longer than 253 bytes";
		return -1;
	}
	for (size_t i = 0; i <= n; i++) {
		char c = i < n ? s[i] : '.';

		if (c == '.') {
			if (label == 0) {
				*reason = "empty label in host name (leading, trailing or double dot)";
				return -1;
			}
			if (label > 63) {
				*reason = "host name label longer than 63 bytes";
				return -1;
			}
			if (s[i - label] == '-' || s[i - 1] == '-') {
				*reason = "host name label starts or ends with `-`";
				return -1;
			}
			last_start = i - label;
			label = 0;
			if (i < n)
				out[i] = '.';
			continue;
		}
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      c == '-' || c == '_')) {
			*reason = "invalid character in host name (letters, digits, `-`, `_` and `.` only)";
			return -1;
		}
		out[i] = lower(c);
		label++;
	}
	out[n] = '\0';
	*kind = BERTH_TARGET_NAME;
	if (numeric_label(s + last_start, n - last_start)) {
		if (!dotted_quad(s, n)) {
			*reason = "not an IPv4 address in dotted-quad form (four decimal numbers 0-255, no "
				  "leading zeros)";
			return -1;
		}
		*kind = BERTH_TARGET_IPV4;
	}
	return 0;
}

/*
 * An authority: uri-host [":" port] (RFC 3986 3.2, no userinfo).  An empty or
 * absent port is 80 unless @port_required.
 */
static int parse_authority(const char *a, size_t n, bool port_required, char *host,
			   enum berth_target_kind *kind, uint16_t *port, const char **reason)
{
	const char *h = a, *hend, *pstart = NULL, *end = a + n;
	bool bracketed = false;
	unsigned v = 0;

	if (n == 0) {
		*reason = "empty host";
		return -1;
	}
	if (memchr(a, '@', n) != NULL) {
		*reason = "user information (user@) in the authority is not accepted";
		return -1;
	}
	if (a[0] == '[') {
		const char *close = memchr(a, ']', n);

		if (close == NULL) {
			*reason = "`[` without `]` in the host";
			return -1;
		}
		h = a + 1;
		hend = close;
		bracketed = true;
		if (close + 1 < end) {
			if (close[1] != ':') {
				*reason = "unexpected text after `]`";
				return -1;
			}
			pstart = close + 2;
		}
	} else {
		const char *colon = memchr(a, ':', n);

		hend = colon != NULL ? colon : end;
		if (colon != NULL)
			pstart = colon + 1;
	}
	if (berth_http_normalize_host(h, (size_t)(hend - h), bracketed, host, kind, reason) < 0)
		return -1;
	if (pstart == NULL || pstart == end) {
		if (port_required) {
			*reason = "a port is required (host:port)";
			return -1;
		}
		*port = 80;
		return 0;
	}
	if (end - pstart > 5 || !all_digits(pstart, (size_t)(end - pstart))) {
		*reason = "the port must be a number 1-65535";
		return -1;
	}
	for (const char *c = pstart; c < end; c++)
		v = v * 10 + (unsigned)(*c - '0');
	if (v == 0 || v > 65535) {
		*reason = "the port must be a number 1-65535";
		return -1;
	}
	*port = (uint16_t)v;
	return 0;
}

int berth_http_host_matches(const struct berth_http_request *req, const char *value, size_t len)
{
	char host[BERTH_TARGET_HOST_MAX + 1];
	enum berth_target_kind kind;
	uint16_t port;
	const char *reason;

	if (parse_authority(value, len, false, host, &kind, &port, &reason) < 0)
		return -1;
	return strcmp(host, req->host) == 0 && port == req->port;
}

/* ---- the parser --------------------------------------------------------- */

void berth_http_init(struct berth_http_parser *p, enum berth_http_mode mode)
{
	memset(p, 0, sizeof *p);
	p->mode = mode;
	p->state = ST_REQUEST_LINE;
}

void berth_http_free(struct berth_http_parser *p)
{
	free(p->buf);
	p->buf = NULL;
	p->cap = p->len = 0;
}

static int append(struct berth_http_parser *p, const char *d, size_t n)
{
	size_t need = p->len + n;

	if (need > p->cap) {
		size_t cap = p->cap > 0 ? p->cap : INITIAL_CAP;
		char *b;

		/* The limits are checked before bytes are kept: this is a bug guard. */
		if (need > BERTH_HTTP_MAX_HEAD)
			return refuse(p, 500, "internal error: the head outgrew its bound");
		while (cap < need)
			cap *= 2;
		if (cap > BERTH_HTTP_MAX_HEAD)
			cap = BERTH_HTTP_MAX_HEAD;
		b = realloc(p->buf, cap);
		if (b == NULL)
			return refuse(p, 500, "the proxy is out of memory");
		p->buf = b;
		p->cap = cap;
	}
	memcpy(p->buf + p->len, d, n);
	p->len = need;
	return 0;
}

/* The limits, on a line of @content bytes (partial or complete, without CRLF). */
static int check_length(struct berth_http_parser *p, size_t content)
{
	if (p->state == ST_REQUEST_LINE) {
		if (content > BERTH_HTTP_MAX_REQUEST_LINE)
			return refuse(p, 414, "the request line is longer than %d bytes",
				      BERTH_HTTP_MAX_REQUEST_LINE);
		return 0;
	}
	if (content <= BERTH_HTTP_MAX_FIELD_LINE && p->total + content <= BERTH_HTTP_MAX_HEADER_BLOCK)
		return 0;
	/* Report the limit a growing line crosses first. */
	if (BERTH_HTTP_MAX_FIELD_LINE <= BERTH_HTTP_MAX_HEADER_BLOCK - p->total)
		return refuse(p, 431, "a header line is longer than %d bytes", BERTH_HTTP_MAX_FIELD_LINE);
	return refuse(p, 431, "the header section is larger than %d bytes", BERTH_HTTP_MAX_HEADER_BLOCK);
}

static int check_bytes(struct berth_http_parser *p, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\r')
			return refuse(p, 400, "bare CR in the request head");
		if (s[i] == '\0')
			return refuse(p, 400, "NUL byte in the request head");
	}
	return 0;
}

static int parse_absolute(struct berth_http_parser *p, char *t, size_t tlen)
{
	struct berth_http_request *r = &p->req;
	char *colon = memchr(t, ':', tlen), *auth, *aend, *end = t + tlen;
	const char *reason;

	if (colon == NULL || colon == t || (size_t)(end - colon) < 3 || colon[1] != '/' || colon[2] != '/')
		return refuse(p, 400, "the request target is neither an http:// URL nor host:port");
	for (char *c = t; c < colon; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (c > t && (is_digit(*c) || *c == '+' || *c == '-' || *c == '.'))))
			return refuse(p, 400, "the request target is neither an http:// URL nor host:port");
	if (ieq(t, (size_t)(colon - t), "https"))
		return refuse(p, 400,
			      "https:// URLs are not accepted in a request: use CONNECT host:443 (the proxy "
			      "tunnels TLS, it never sees inside)");
	if (!ieq(t, (size_t)(colon - t), "http"))
		return refuse(p, 400,
			      "only http:// URLs are forwarded; use CONNECT host:port for other protocols");
	if (memchr(t, '#', tlen) != NULL)
		return refuse(p, 400, "a request target may not carry a fragment (`#`)");
	auth = colon + 3;
	for (aend = auth; aend < end && *aend != '/' && *aend != '?'; aend++)
		;
	if (parse_authority(auth, (size_t)(aend - auth), false, r->host, &r->host_kind, &r->port, &reason) <
	    0)
		return refuse(p, 400, "bad target host: %s", reason);
	if (aend == end) {
		/* RFC 9112 3.2.1 and 3.2.4. */
		p->path_static = r->method_len == 7 && memcmp(r->method, "OPTIONS", 7) == 0 ? 2 : 1;
	} else if (*aend == '?') {
		/* "/" before the query: the last byte of the authority, already read. */
		aend[-1] = '/';
		p->path_off = (uint32_t)(aend - 1 - p->buf);
		p->path_len = (uint32_t)(end - aend + 1);
	} else {
		p->path_off = (uint32_t)(aend - p->buf);
		p->path_len = (uint32_t)(end - aend);
	}
	return 0;
}

static int parse_request_line(struct berth_http_parser *p, char *line, size_t n)
{
	struct berth_http_request *r = &p->req;
	char *sp1 = memchr(line, ' ', n), *t, *sp2, *v;
	size_t tlen;
	const char *reason;

	if (sp1 == NULL)
		return refuse(p, 400, "malformed request line (expected METHOD target HTTP/1.1)");
	t = sp1 + 1;
	sp2 = memchr(t, ' ', (size_t)(line + n - t));
	if (sp2 == NULL)
		return refuse(p, 400, "malformed request line (expected METHOD target HTTP/1.1)");
	v = sp2 + 1;
	if (line + n - v != 8 || memcmp(v, "HTTP/", 5) != 0 || !is_digit(v[5]) || v[6] != '.' ||
	    !is_digit(v[7]))
		return refuse(p, 400, "malformed HTTP version (expected HTTP/1.1)");
	if (v[5] != '1')
		return refuse(p, 505, "HTTP/%c.%c is not supported: the proxy speaks HTTP/1.1", v[5], v[7]);
	r->minor = v[7] == '0' ? 0 : 1;
	if (!is_token(line, (size_t)(sp1 - line)))
		return refuse(p, 400, "invalid method");
	tlen = (size_t)(sp2 - t);
	if (tlen == 0)
		return refuse(p, 400, "empty request target");
	for (size_t i = 0; i < tlen; i++)
		if ((unsigned char)t[i] <= 0x20 || (unsigned char)t[i] >= 0x7f)
			return refuse(p, 400, "invalid character in the request target");
	p->method_off = (uint32_t)(line - p->buf);
	r->method = line;
	r->method_len = (size_t)(sp1 - line);
	if (r->method_len == 5 && memcmp(line, "TRACE", 5) == 0)
		return refuse(p, 405, "TRACE is not forwarded");
	if (r->method_len == 7 && memcmp(line, "CONNECT", 7) == 0) {
		if (parse_authority(t, tlen, true, r->host, &r->host_kind, &r->port, &reason) < 0)
			return refuse(p, 400, "CONNECT needs a target of the form host:port: %s", reason);
		r->connect = true;
	} else if (t[0] == '/' || (tlen == 1 && t[0] == '*')) {
		if (p->mode == BERTH_HTTP_PROXY)
			return refuse(
			    p, 400,
			    "not a proxy request: the target must be an http:// URL, or CONNECT host:port");
		if (t[0] == '*' && !(r->method_len == 7 && memcmp(line, "OPTIONS", 7) == 0))
			return refuse(p, 400, "`*` is a target for OPTIONS only");
		if (memchr(t, '#', tlen) != NULL)
			return refuse(p, 400, "a request target may not carry a fragment (`#`)");
		p->path_off = (uint32_t)(t - p->buf);
		p->path_len = (uint32_t)tlen;
	} else if (parse_absolute(p, t, tlen) < 0) {
		return -1;
	}
	*sp1 = '\0';
	*sp2 = '\0';
	return 0;
}

static int parse_field_line(struct berth_http_parser *p, char *line, size_t n)
{
	char *colon, *v, *vend = line + n;
	struct berth_http_span *s = &p->spans[p->req.n_headers];

	if (is_ows(line[0]))
		return refuse(p, 400, "obsolete line folding (a header line starting with white space)");
	colon = memchr(line, ':', n);
	if (colon == NULL)
		return refuse(p, 400, "header line without a colon");
	if (colon == line)
		return refuse(p, 400, "empty header name");
	if (is_ows(colon[-1]))
		return refuse(p, 400, "white space between a header name and its colon");
	if (!is_token(line, (size_t)(colon - line)))
		return refuse(p, 400, "invalid character in a header name");
	for (v = colon + 1; v < vend && is_ows(*v); v++)
		;
	while (vend > v && is_ows(vend[-1]))
		vend--;
	for (char *c = v; c < vend; c++)
		if (((unsigned char)*c < 0x20 && *c != '\t') || *c == 0x7f)
			return refuse(p, 400, "control character in the value of `%.*s`",
				      (int)((colon - line) > 40 ? 40 : (colon - line)), line);
	s->name_off = (uint32_t)(line - p->buf);
	s->name_len = (uint32_t)(colon - line);
	s->value_off = (uint32_t)(v - p->buf);
	s->value_len = (uint32_t)(vend - v);
	p->req.n_headers++;
	return 0;
}

static bool hop_by_hop_name(const char *s, size_t n)
{
	static const char *const names[] = {
	    "connection",
	    "keep-alive",
	    "proxy-connection",
	    "proxy-authorization",
	    "proxy-authenticate",
	    "te",
	    "trailer",
	    "upgrade",
	    "close",
	};

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (ieq(s, n, names[i]))
			return true;
	return false;
}

static int check_content_length(struct berth_http_parser *p, const struct berth_http_header *h, bool *have,
				uint64_t *cl)
{
	const char *cur = h->value, *end = h->value + h->value_len, *e;
	size_t elen;
	bool any = false;

	while (list_next(&cur, end, &e, &elen)) {
		uint64_t v = 0;

		if (!all_digits(e, elen))
			return refuse(p, 400, "invalid Content-Length");
		for (size_t i = 0; i < elen; i++) {
			if (v > (UINT64_C(0x7fffffffffffffff) - (uint64_t)(e[i] - '0')) / 10)
				return refuse(p, 400, "invalid Content-Length (too large)");
			v = v * 10 + (uint64_t)(e[i] - '0');
		}
		if (*have && v != *cl)
			return refuse(p, 400,
				      "Content-Length given twice with different values (request smuggling)");
		*have = true;
		*cl = v;
		any = true;
	}
	if (!any)
		return refuse(p, 400, "invalid Content-Length");
	return 0;
}

static int check_transfer_encoding(struct berth_http_parser *p)
{
	struct field_list l = {.r = &p->req, .name = "transfer-encoding"};
	size_t n = 0, chunked = 0, elen, unknown_len = 0;
	bool last_chunked = false;
	const char *e, *unknown = NULL;

	while (field_next(&l, &e, &elen)) {
		const char *semi = memchr(e, ';', elen);
		size_t nlen = semi != NULL ? (size_t)(semi - e) : elen;

		while (nlen > 0 && is_ows(e[nlen - 1]))
			nlen--;
		if (!is_token(e, nlen))
			return refuse(p, 400, "invalid Transfer-Encoding");
		n++;
		last_chunked = semi == NULL && ieq(e, nlen, "chunked");
		if (ieq(e, nlen, "chunked")) {
			chunked++;
		} else if (unknown == NULL) {
			unknown = e;
			unknown_len = nlen;
		}
	}
	if (n == 0)
		return refuse(p, 400, "empty Transfer-Encoding");
	if (!last_chunked)
		return refuse(p, 400, "Transfer-Encoding must end with chunked");
	if (chunked > 1)
		return refuse(p, 400, "Transfer-Encoding applies chunked more than once");
	if (unknown != NULL)
		return refuse(p, 501, "transfer coding `%.*s` is not supported (only chunked)",
			      (int)(unknown_len > 32 ? 32 : unknown_len), unknown);
	return 0;
}

/* Connection options (RFC 9110 7.6.1): each names a field to remove. */
static int check_connection(struct berth_http_parser *p)
{
	struct berth_http_request *r = &p->req;

	struct field_list l = {.r = r, .name = "connection"};
	const char *e;
	size_t elen;

	while (field_next(&l, &e, &elen)) {
		if (!is_token(e, elen))
			return refuse(p, 400, "invalid Connection header");
		if (ieq(e, elen, "host") || ieq(e, elen, "content-length") ||
		    ieq(e, elen, "transfer-encoding"))
			return refuse(p, 400, "the Connection header may not name `%.*s`", (int)elen, e);
		for (size_t j = 0; j < r->n_headers; j++)
			if (ieqn(r->headers[j].name, r->headers[j].name_len, e, elen))
				r->headers[j].hop_by_hop = true;
	}
	return 0;
}

static int finish(struct berth_http_parser *p)
{
	struct berth_http_request *r = &p->req;
	const struct berth_http_header *host = NULL;
	size_t n_host = 0;
	bool have_cl = false, have_te = false;
	uint64_t cl = 0;
	int m;

	if (p->path_static == 1) {
		r->path = "/";
		r->path_len = 1;
	} else if (p->path_static == 2) {
		r->path = "*";
		r->path_len = 1;
	} else if (!r->connect) {
		r->path = p->buf + p->path_off;
		r->path_len = p->path_len;
	}
	r->method = p->buf + p->method_off;
	for (size_t i = 0; i < r->n_headers; i++) {
		struct berth_http_header *h = &r->headers[i];
		const struct berth_http_span *s = &p->spans[i];

		h->name = p->buf + s->name_off;
		h->name_len = s->name_len;
		h->value = p->buf + s->value_off;
		h->value_len = s->value_len;
		p->buf[s->name_off + s->name_len] = '\0';
		p->buf[s->value_off + s->value_len] = '\0';
		h->hop_by_hop = hop_by_hop_name(h->name, h->name_len);
	}
	for (size_t i = 0; i < r->n_headers; i++) {
		const struct berth_http_header *h = &r->headers[i];

		if (ieq(h->name, h->name_len, "host")) {
			n_host++;
			host = h;
		} else if (ieq(h->name, h->name_len, "content-length")) {
			if (check_content_length(p, h, &have_cl, &cl) < 0)
				return -1;
		} else if (ieq(h->name, h->name_len, "transfer-encoding")) {
			have_te = true;
		}
	}
	if (n_host > 1)
		return refuse(p, 400, "more than one Host header");
	if (have_te && have_cl)
		return refuse(p, 400, "Transfer-Encoding and Content-Length together (request smuggling)");
	if (have_te && r->minor == 0)
		return refuse(p, 400, "Transfer-Encoding in an HTTP/1.0 request");
	if (have_te && check_transfer_encoding(p) < 0)
		return -1;
	if (r->connect && (have_te || cl != 0))
		return refuse(p, 400, "a CONNECT request has no content");
	if (check_connection(p) < 0)
		return -1;
	if (p->mode == BERTH_HTTP_ORIGIN && !r->connect) {
		const char *reason;

		if (host == NULL)
			return refuse(p, 400, "missing Host header");
		if (parse_authority(host->value, host->value_len, false, r->host, &r->host_kind, &r->port,
				    &reason) < 0)
			return refuse(p, 400, "invalid Host header: %s", reason);
	}
	if (host != NULL) {
		m = berth_http_host_matches(r, host->value, host->value_len);
		if (m < 0)
			return refuse(p, 400, "invalid Host header");
		if (m == 0 && !r->connect)
			return refuse(p, 400, "Host header disagrees with the request target");
	}
	r->body = have_te ? BERTH_HTTP_BODY_CHUNKED : have_cl ? BERTH_HTTP_BODY_LENGTH : BERTH_HTTP_BODY_NONE;
	r->content_length = cl;
	p->state = ST_DONE;
	return 0;
}

static int process_line(struct berth_http_parser *p, size_t content)
{
	char *line = p->buf + p->line_start;

	if (p->state == ST_REQUEST_LINE) {
		if (content == 0) {
			if (++p->skipped > MAX_LEADING_EMPTY)
				return refuse(p, 400, "more than %d empty lines before the request line",
					      MAX_LEADING_EMPTY);
			p->len = p->line_start;
			return 0;
		}
		if (check_bytes(p, line, content) < 0 || parse_request_line(p, line, content) < 0)
			return -1;
		p->state = ST_HEADERS;
	} else {
		if (content == 0)
			return finish(p);
		if (p->req.n_headers == BERTH_HTTP_MAX_HEADERS)
			return refuse(p, 431, "more than %d header lines", BERTH_HTTP_MAX_HEADERS);
		p->total += content;
		if (check_bytes(p, line, content) < 0 || parse_field_line(p, line, content) < 0)
			return -1;
	}
	p->line_start = p->len;
	return 0;
}

static enum berth_http_verdict verdict(const struct berth_http_parser *p)
{
	return p->state == ST_DONE  ? BERTH_HTTP_DONE
	       : p->state == ST_BAD ? BERTH_HTTP_BAD
				    : BERTH_HTTP_NEED_MORE;
}

enum berth_http_verdict berth_http_feed(struct berth_http_parser *p, const void *data, size_t len,
					size_t *consumed)
{
	const char *d = data;
	size_t pos = 0;

	while ((p->state == ST_REQUEST_LINE || p->state == ST_HEADERS) && pos < len) {
		const char *nl = memchr(d + pos, '\n', len - pos);
		size_t take = nl != NULL ? (size_t)(nl - (d + pos)) + 1 : len - pos;
		size_t held = p->len - p->line_start;
		size_t bytes = held + take - (nl != NULL ? 1 : 0); /* the line so far, without LF */
		char last = '\0';
		size_t content;

		if (bytes > held)
			last = d[pos + (bytes - held) - 1];
		else if (bytes > 0)
			last = p->buf[p->line_start + bytes - 1];
		content = bytes - (last == '\r' ? 1 : 0);
		pos += take;
		if (check_length(p, content) < 0 || append(p, d + pos - take, take) < 0)
			break;
		if (nl != NULL)
			process_line(p, content);
	}
	*consumed = pos;
	return verdict(p);
}

/* ---- the rewrite -------------------------------------------------------- */

struct out {
	char *buf;
	size_t len, pos;
	size_t fields, total;
	struct berth_http_error *err;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->pos < o->len) {
		size_t room = o->len - o->pos;
		memcpy(o->buf + o->pos, s, n < room ? n : room);
	}
	o->pos += n;
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static int put_field(struct out *o, const char *name, size_t nlen, const char *value, size_t vlen)
{
	size_t line = nlen + 1 + (vlen > 0 ? 1 + vlen : 0);

	if (o->fields == BERTH_HTTP_MAX_HEADERS || line > BERTH_HTTP_MAX_FIELD_LINE ||
	    o->total + line > BERTH_HTTP_MAX_HEADER_BLOCK)
		return set_err(o->err, 431, "the request is too close to the header limits to be forwarded");
	o->fields++;
	o->total += line;
	put(o, name, nlen);
	put(o, ":", 1);
	if (vlen > 0) {
		put(o, " ", 1);
		put(o, value, vlen);
	}
	put(o, "\r\n", 2);
	return 0;
}

long berth_http_rewrite_origin(const struct berth_http_request *req, char *buf, size_t len,
			       struct berth_http_error *err)
{
	struct out o = {.buf = buf, .len = len, .err = err};
	char hv[BERTH_TARGET_HOST_MAX + 16], num[32];
	int n;

	if (req->connect || req->path == NULL)
		return set_err(err, 400, "a CONNECT request is tunnelled, not rewritten");
	for (size_t i = 0; i < req->n_headers; i++) {
		const struct berth_http_header *h = &req->headers[i];

		if (!ieq(h->name, h->name_len, "host"))
			continue;
		n = berth_http_host_matches(req, h->value, h->value_len);
		if (n < 0)
			return set_err(err, 400, "invalid Host header");
		if (n == 0)
			return set_err(err, 400, "Host header disagrees with the request target");
	}
	if (req->method_len + req->path_len + 10 > BERTH_HTTP_MAX_REQUEST_LINE)
		return set_err(err, 414, "the request line is longer than %d bytes",
			       BERTH_HTTP_MAX_REQUEST_LINE);
	put(&o, req->method, req->method_len);
	put(&o, " ", 1);
	put(&o, req->path, req->path_len);
	puts_(&o, req->minor == 0 ? " HTTP/1.0\r\n" : " HTTP/1.1\r\n");

	if (req->host_kind == BERTH_TARGET_IPV6)
		n = snprintf(hv, sizeof hv, "[%s]", req->host);
	else
		n = snprintf(hv, sizeof hv, "%s", req->host);
	if (req->port != 80)
		n += snprintf(hv + n, sizeof hv - (size_t)n, ":%u", (unsigned)req->port);
	if (put_field(&o, "Host", 4, hv, (size_t)n) < 0)
		return -1;
	for (size_t i = 0; i < req->n_headers; i++) {
		const struct berth_http_header *h = &req->headers[i];

		if (h->hop_by_hop || ieq(h->name, h->name_len, "host") ||
		    ieq(h->name, h->name_len, "content-length"))
			continue;
		if (put_field(&o, h->name, h->name_len, h->value, h->value_len) < 0)
			return -1;
	}
	if (req->body == BERTH_HTTP_BODY_LENGTH) {
		n = snprintf(num, sizeof num, "%llu", (unsigned long long)req->content_length);
		if (put_field(&o, "Content-Length", 14, num, (size_t)n) < 0)
			return -1;
	}
	if (put_field(&o, "Via", 3, req->minor == 0 ? "1.0 berth" : "1.1 berth", 9) < 0 ||
	    put_field(&o, "Connection", 10, "close", 5) < 0)
		return -1;
	put(&o, "\r\n", 2);
	if (len > 0)
		buf[o.pos < len ? o.pos : len - 1] = '\0';
	return (long)o.pos;
}

/* ---- replies ------------------------------------------------------------ */

static const char *phrase(int status)
{
	switch (status) {
	case 400:
		return "Bad Request";
	case 403:
		return "Forbidden";
	case 405:
		return "Method Not Allowed";
	case 408:
		return "Request Timeout";
	case 414:
		return "URI Too Long";
	case 421: /* RFC 9110 15.5.20: a credential's tunnel asked for another host */
		return "Misdirected Request";
	case 431:
		return "Request Header Fields Too Large";
	case 500:
		return "Internal Server Error";
	case 501:
		return "Not Implemented";
	case 502:
		return "Bad Gateway";
	case 503:
		return "Service Unavailable";
	case 504:
		return "Gateway Timeout";
	case 505:
		return "HTTP Version Not Supported";
	default:
		return NULL;
	}
}

/* Printable ASCII only, at most BODY_TEXT_MAX bytes: text from a client
 * (a host name in a rule) cannot add lines or drive a terminal. */
static void sanitize(char *dst, const char *src)
{
	size_t i = 0;

	for (; src != NULL && src[i] != '\0' && i < BODY_TEXT_MAX; i++)
		dst[i] = ((unsigned char)src[i] < 0x20 || (unsigned char)src[i] >= 0x7f) ? '?' : src[i];
	dst[i] = '\0';
}

static int reply(char *buf, size_t len, int status, const char *prefix, const char *text)
{
	char clean[BODY_TEXT_MAX + 1], body[BODY_TEXT_MAX + 128];
	const char *ph = phrase(status);
	int blen, n;

	if (ph == NULL)
		return -1;
	sanitize(clean, text);
	blen = snprintf(body, sizeof body, "berth: %s%s\n", prefix, clean[0] != '\0' ? clean : ph);
	n = snprintf(buf, len,
		     "HTTP/1.1 %d %s\r\n"
		     "Content-Type: text/plain; charset=utf-8\r\n"
		     "Content-Length: %d\r\n"
		     "%s"
		     "Connection: close\r\n"
		     "\r\n"
		     "%s",
		     status, ph, blen, status == 405 ? "Allow: " ALLOW_METHODS "\r\n" : "", body);
	if (n < 0 || (size_t)n >= len)
		return -1;
	return n;
}

int berth_http_format_established(char *buf, size_t len)
{
	int n = snprintf(buf, len, "HTTP/1.1 200 Connection established\r\n\r\n");

	if (n < 0 || (size_t)n >= len)
		return -1;
	return n;
}

int berth_http_format_forbidden(char *buf, size_t len, const char *rule)
{
	return reply(buf, len, 403, "refused by the egress policy: ", rule);
}

int berth_http_format_error(char *buf, size_t len, int status, const char *reason)
{
	return reply(buf, len, status, "", reason);
}
