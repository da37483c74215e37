/* SPDX-License-Identifier: MIT */
/*
 * hostpat.c - allow-host patterns, the decision on a requested destination, and
 * the --dns server.  The grammar, the rules and every message are documented
 * in hostpat.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <netinet/in.h>

#include "../util/cleanup.h"
#include "../util/text.h"
#include "hostpat.h"

#define LABEL_MAX 63
#define QUOTE_MAX 80 /* bytes of a value shown in a message */
#define FIX_HOST                                                                                             \
	"a host name is labels of letters, digits and `-` separated by `.`, such as `api.example.com`"
#define FIX_LOOPBACK "to reach a service on this machine's loopback name `127.0.0.1:PORT` or `[::1]:PORT`"

/* A value for a message: printable ASCII as is, anything else as \xNN, cut at QUOTE_MAX bytes. */
static const char *quote(char *buf, size_t len, const char *s, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (i >= QUOTE_MAX || o + 8 >= len) {
			snprintf(buf + o, len - o, "...");
			return buf;
		}
		if (ch >= 0x20 && ch < 0x7f)
			buf[o++] = (char)ch;
		else
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", ch);
	}
	buf[o] = '\0';
	return buf;
}

static const char *q(char *buf, size_t len, const char *s)
{
	return quote(buf, len, s, strlen(s));
}

static bool ascii(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] >= 0x80)
			return false;
	return true;
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool alnum(char c)
{
	c = lower(c);
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/*
 * RFC 1035 2.3.1 / RFC 1123 2.1 host name check of @h[0..n-1] (no trailing
 * dot).  On failure writes what is wrong to @detail and returns -1.
 */
static int check_name(const char *h, size_t n, char *detail, size_t dlen)
{
	size_t label = 0;

	if (n > BERTH_HOST_NAME_MAX)
		return berth_reasonf(detail, dlen, "longer than %d characters", BERTH_HOST_NAME_MAX);
	for (size_t i = 0; i <= n; i++) {
		char ch = i < n ? h[i] : '.';
		if (ch == '.') {
			if (label == 0)
				return berth_reasonf(detail, dlen, "empty label");
			if (h[i - 1] == '-')
				return berth_reasonf(detail, dlen, "label ends with `-`");
			label = 0;
			continue;
		}
		if (!alnum(ch) && ch != '-') {
			char qb[16];
			return berth_reasonf(detail, dlen, "`%s` is not allowed",
					     quote(qb, sizeof qb, h + i, 1));
		}
		if (label == 0 && ch == '-')
			return berth_reasonf(detail, dlen, "label starts with `-`");
		if (++label > LABEL_MAX)
			return berth_reasonf(detail, dlen, "label longer than %d characters", LABEL_MAX);
	}
	return 0;
}

/* The last label of @h[0..n-1] is all digits: meant as an IPv4 address, never a name (RFC 3696 2). */
static bool numeric_tld(const char *h, size_t n)
{
	size_t i = n;

	while (i > 0 && h[i - 1] != '.')
		i--;
	if (i == n)
		return false;
	for (; i < n; i++)
		if (h[i] < '0' || h[i] > '9')
			return false;
	return true;
}

/* RFC 6761 6.3: `localhost` and every name under it are the loopback. */
static bool localhost_name(const char *h)
{
	size_t n = strlen(h);

	return strcmp(h, "localhost") == 0 || (n > 10 && strcmp(h + n - 10, ".localhost") == 0);
}

static bool unspecified(const struct berth_addr *a)
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	static const uint8_t zero[16];

	if (a->family == AF_INET)
		return memcmp(a->bytes, zero, 4) == 0;
	return memcmp(a->bytes, zero, 16) == 0 ||
	       (memcmp(a->bytes, mapped, 12) == 0 && memcmp(a->bytes + 12, zero, 4) == 0);
}

/* `*`, or 1-65535 in decimal without a leading zero. */
static int parse_port(const char *s, struct berth_host_pattern *p)
{
	unsigned v = 0;
	size_t n = strlen(s);

	if (strcmp(s, "*") == 0) {
		p->ports = BERTH_PORTS_ANY;
		return 0;
	}
	if (n == 0 || n > 5 || s[0] == '0')
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v > 65535)
		return -1;
	p->ports = BERTH_PORTS_ONE;
	p->port = v;
	return 0;
}

/* The bracketed form `[v6]...`: fills p->addr/name, points *@rest after the `]`. */
static int parse_bracketed(const char *s, struct berth_host_pattern *p, const char **rest, char *reason,
			   size_t len)
{
	char qs[QUOTE_MAX * 4 + 8], qa[QUOTE_MAX * 4 + 8], text[64];
	const char *close = strchr(s, ']');
	size_t n;
	int spelling;

	if (close == NULL)
		return berth_reasonf(
		    reason, len,
		    "invalid IPv6 pattern `%s`; write it as `[2001:db8::1]` or `[2001:db8::1]:443`",
		    q(qs, sizeof qs, s));
	n = (size_t)(close - s - 1);
	quote(qa, sizeof qa, s + 1, n);
	if (n >= sizeof text)
		return berth_reasonf(reason, len, "invalid IPv6 address `%s` in network pattern `%s`", qa,
				     q(qs, sizeof qs, s));
	memcpy(text, s + 1, n);
	text[n] = '\0';
	spelling = berth_addr_parse_literal(text, &p->addr);
	if (spelling != BERTH_ADDR_V6) {
		char canon[BERTH_ADDR_STRLEN];
		if (memchr(text, '%', n) != NULL)
			return berth_reasonf(
			    reason, len,
			    "invalid IPv6 address `%s` in network pattern `%s`; a zone index "
			    "(`%%...`) is not "
			    "allowed",
			    qa, q(qs, sizeof qs, s));
		if (spelling > 0 && berth_addr_format(&p->addr, canon, sizeof canon) == 0)
			return berth_reasonf(
			    reason, len,
			    "invalid IPv6 address `%s` in network pattern `%s`; brackets are only for IPv6 "
			    "addresses, write `%s`",
			    qa, q(qs, sizeof qs, s), canon);
		return berth_reasonf(reason, len, "invalid IPv6 address `%s` in network pattern `%s`", qa,
				     q(qs, sizeof qs, s));
	}
	if (close[1] != '\0' && close[1] != ':')
		return berth_reasonf(
		    reason, len, "unexpected `%s` after the IPv6 address in `%s`; a port is written `]:443`",
		    q(qa, sizeof qa, close + 1), q(qs, sizeof qs, s));
	p->kind = BERTH_HOST_LITERAL;
	berth_addr_format(&p->addr, p->name, sizeof p->name);
	*rest = close + 1;
	return 0;
}

/* HOST without brackets, already split from its port, trailing dot removed, lowercase. */
static int parse_host(const char *s, const char *host, struct berth_host_pattern *p, char *reason, size_t len)
{
	char qs[QUOTE_MAX * 4 + 8], qh[QUOTE_MAX * 4 + 8], detail[64];
	const char *name = host;
	size_t n = strlen(host);
	struct berth_addr a;
	int spelling;

	if (strcmp(host, "*") == 0)
		return berth_reasonf(
		    reason, len,
		    "a bare `*` would allow every host; name a host such as `api.example.com` or a "
		    "domain such as `*.example.com`");
	if (host[0] == '*' && host[1] == '.') {
		name = host + 2;
		n -= 2;
		p->kind = BERTH_HOST_SUFFIX;
	} else {
		p->kind = BERTH_HOST_NAME;
	}
	if (strchr(name, '*') != NULL)
		return berth_reasonf(
		    reason, len,
		    "network pattern `%s` has a `*` that is not a leading `*.`; a wildcard may only start a "
		    "pattern, as in `*.example.com`",
		    q(qs, sizeof qs, s));
	spelling = berth_addr_parse_literal(name, &a);
	if (p->kind == BERTH_HOST_SUFFIX && (spelling > 0 || numeric_tld(name, n)))
		return berth_reasonf(
		    reason, len,
		    "`*.` in network pattern `%s` must be followed by a host name, not an IP address",
		    q(qs, sizeof qs, s));
	if (spelling > 0) {
		char canon[BERTH_ADDR_STRLEN], how[64];
		berth_addr_format(&a, canon, sizeof canon);
		if (spelling != BERTH_ADDR_V4)
			return berth_reasonf(
			    reason, len,
			    "IPv4 address `%s` in network pattern `%s` is written in an unusual form (%s); "
			    "write it as `%s`",
			    q(qh, sizeof qh, host), q(qs, sizeof qs, s),
			    berth_addr_spelling_describe(spelling, how, sizeof how), canon);
		p->kind = BERTH_HOST_LITERAL;
		p->addr = a;
		memcpy(p->name, canon, strlen(canon) + 1);
		return 0;
	}
	if (numeric_tld(name, n))
		return berth_reasonf(
		    reason, len,
		    "`%s` in network pattern `%s` is neither a host name nor an IPv4 address (the last "
		    "label of a host name is never all digits); write an IPv4 address as four decimal "
		    "numbers 0-255, such as `192.0.2.1`",
		    q(qh, sizeof qh, host), q(qs, sizeof qs, s));
	if (check_name(name, n, detail, sizeof detail) < 0)
		return berth_reasonf(reason, len, "invalid host name in network pattern `%s`: %s; " FIX_HOST,
				     q(qs, sizeof qs, s), detail);
	if (localhost_name(name))
		return berth_reasonf(
		    reason, len,
		    "network pattern `%s` names `localhost`, which always resolves to the loopback "
		    "(RFC 6761); "
		    "" FIX_LOOPBACK,
		    q(qs, sizeof qs, s));
	memcpy(p->name, name, n + 1);
	return 0;
}

int berth_host_pattern_parse(const char *s, struct berth_host_pattern *p, char *reason, size_t len)
{
	char qs[QUOTE_MAX * 4 + 8], qp[QUOTE_MAX * 4 + 8];
	char host[BERTH_HOST_PATTERN_MAX + 1];
	const char *port = NULL;
	struct berth_host_pattern r;
	size_t n;

	if (p != NULL)
		memset(p, 0, sizeof *p);
	if (p == NULL || s == NULL || s[0] == '\0')
		return berth_reasonf(reason, len, "empty network pattern");
	n = strlen(s);
	if (n > BERTH_HOST_PATTERN_MAX)
		return berth_reasonf(reason, len, "network pattern is longer than %d bytes",
				     BERTH_HOST_PATTERN_MAX);
	if (!ascii(s, n))
		return berth_reasonf(
		    reason, len,
		    "network pattern `%s` is not ASCII; internationalised names are not supported: write "
		    "the A-label (punycode) form, such as `xn--bcher-kva.example`",
		    q(qs, sizeof qs, s));
	memset(&r, 0, sizeof r);
	r.ports = BERTH_PORTS_DEFAULT;
	if (s[0] == '[') {
		const char *rest = "";
		if (parse_bracketed(s, &r, &rest, reason, len) < 0)
			return -1;
		if (rest[0] == ':')
			port = rest + 1;
	} else {
		const char *colon = strchr(s, ':');
		size_t hn = colon != NULL ? (size_t)(colon - s) : n;
		if (colon != NULL && strchr(colon + 1, ':') != NULL)
			return berth_reasonf(
			    reason, len,
			    "network pattern `%s` has more than one `:`; write an IPv6 address in brackets, "
			    "such as `[2001:db8::1]:443`",
			    q(qs, sizeof qs, s));
		if (colon != NULL)
			port = colon + 1;
		if (hn == 0)
			return berth_reasonf(reason, len, "network pattern `%s` has no host before `:`",
					     q(qs, sizeof qs, s));
		for (size_t i = 0; i < hn; i++)
			host[i] = lower(s[i]);
		/* one trailing dot is the DNS root, not part of the name */
		if (hn > 1 && host[hn - 1] == '.')
			hn--;
		host[hn] = '\0';
		if (parse_host(s, host, &r, reason, len) < 0)
			return -1;
	}
	if (port != NULL && parse_port(port, &r) < 0)
		return berth_reasonf(
		    reason, len,
		    "invalid port `%s` in network pattern `%s`; give 1 to 65535 (no leading zero) or `*`",
		    q(qp, sizeof qp, port), q(qs, sizeof qs, s));
	if (r.kind == BERTH_HOST_LITERAL && unspecified(&r.addr))
		return berth_reasonf(reason, len,
				     "network pattern `%s` names the unspecified address, which is not a "
				     "destination; " FIX_LOOPBACK,
				     q(qs, sizeof qs, s));
	*p = r;
	return 0;
}

/* The HOST part of a pattern as written canonically. */
static int host_part(const struct berth_host_pattern *p, char *buf, size_t len)
{
	int w;

	switch (p->kind) {
	case BERTH_HOST_NAME:
		w = snprintf(buf, len, "%s", p->name);
		break;
	case BERTH_HOST_SUFFIX:
		w = snprintf(buf, len, "*.%s", p->name);
		break;
	case BERTH_HOST_LITERAL:
		w = snprintf(buf, len, p->addr.family == AF_INET6 ? "[%s]" : "%s", p->name);
		break;
	default:
		w = -1;
		break;
	}
	if (w < 0 || (size_t)w >= len) {
		if (len > 0)
			buf[0] = '\0';
		return -1;
	}
	return w;
}

int berth_host_pattern_format(const struct berth_host_pattern *p, char *buf, size_t len)
{
	int h, w;

	if (buf == NULL || len == 0)
		return -1;
	buf[0] = '\0';
	if (p == NULL || memchr(p->name, '\0', sizeof p->name) == NULL)
		return -1;
	h = host_part(p, buf, len);
	if (h < 0)
		return -1;
	switch (p->ports) {
	case BERTH_PORTS_DEFAULT:
		w = 0;
		break;
	case BERTH_PORTS_ONE:
		w = p->port >= 1 && p->port <= 65535 ? snprintf(buf + h, len - (size_t)h, ":%u", p->port)
						     : -1;
		break;
	case BERTH_PORTS_ANY:
		w = snprintf(buf + h, len - (size_t)h, ":*");
		break;
	default:
		w = -1;
		break;
	}
	if (w < 0 || (size_t)w >= len - (size_t)h) {
		buf[0] = '\0';
		return -1;
	}
	return 0;
}

/* ---- the decision ---- */

static bool port_matches(const struct berth_host_pattern *p, unsigned port)
{
	switch (p->ports) {
	case BERTH_PORTS_DEFAULT:
		return port == 80 || port == 443;
	case BERTH_PORTS_ONE:
		return port == p->port;
	case BERTH_PORTS_ANY:
		return true;
	default:
		return false;
	}
}

static bool host_matches(const struct berth_host_pattern *p, const struct berth_host_decision *d)
{
	size_t hn, sn;

	if (d->is_literal)
		return p->kind == BERTH_HOST_LITERAL && berth_addr_same_destination(&p->addr, &d->literal);
	switch (p->kind) {
	case BERTH_HOST_NAME:
		return strcmp(p->name, d->host) == 0;
	case BERTH_HOST_SUFFIX:
		hn = strlen(d->host);
		sn = strnlen(p->name, sizeof p->name);
		/* at least one label in front: `*.example.com` never matches `example.com` */
		return sn > 0 && hn > sn + 1 && d->host[hn - sn - 1] == '.' &&
		       strncmp(d->host + hn - sn, p->name, sn) == 0 && p->name[sn] == '\0';
	case BERTH_HOST_LITERAL:
	default:
		return false;
	}
}

static int refuse(struct berth_host_decision *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int refuse(struct berth_host_decision *d, const char *fmt, ...)
{
	va_list ap;

	d->allowed = false;
	d->explicit_literal = false;
	d->matched = NULL;
	va_start(ap, fmt);
	vsnprintf(d->reason, sizeof d->reason, fmt, ap);
	va_end(ap);
	return 0;
}

static int bad(struct berth_host_decision *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A refusal of a host that is neither a valid name nor a literal: returns -1. */
static int bad(struct berth_host_decision *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->reason, sizeof d->reason, fmt, ap);
	va_end(ap);
	return -1;
}

/* Normalise the requested host into @d: a literal (is_literal, literal, host) or a valid name. */
static int normalise(const char *host, struct berth_host_decision *d)
{
	char qh[QUOTE_MAX * 4 + 8], detail[64], text[BERTH_HOST_NAME_MAX + 2];
	size_t n = host != NULL ? strlen(host) : 0;
	int spelling;

	if (n == 0)
		return bad(d, "empty host name");
	quote(qh, sizeof qh, host, n);
	if (!ascii(host, n))
		return bad(d,
			   "host name `%s` is not ASCII; internationalised names are not supported: use the "
			   "A-label (punycode) form, such as `xn--bcher-kva.example`",
			   qh);
	if (host[0] == '[' || strchr(host, ':') != NULL) {
		size_t from = host[0] == '[' ? 1 : 0, to = n;
		if (from == 1) {
			if (host[n - 1] != ']')
				return bad(d, "invalid IPv6 address `%s`", qh);
			to = n - 1;
		}
		if (to <= from || to - from >= 64)
			return bad(d, "invalid IPv6 address `%s`", qh);
		memcpy(text, host + from, to - from);
		text[to - from] = '\0';
		spelling = berth_addr_parse_literal(text, &d->literal);
		if (spelling != BERTH_ADDR_V6)
			return bad(d, "invalid IPv6 address `%s`", qh);
	} else {
		if (n > 1 && host[n - 1] == '.')
			n--; /* the DNS root */
		if (n > BERTH_HOST_NAME_MAX)
			return bad(d, "invalid host name `%s`: longer than %d characters", qh,
				   BERTH_HOST_NAME_MAX);
		for (size_t i = 0; i < n; i++)
			text[i] = lower(host[i]);
		text[n] = '\0';
		spelling = berth_addr_parse_literal(text, &d->literal);
		if (spelling < 0) {
			if (numeric_tld(text, n))
				return bad(d, "`%s` is neither a host name nor an IPv4 address", qh);
			if (check_name(text, n, detail, sizeof detail) < 0)
				return bad(d, "invalid host name `%s`: %s", qh, detail);
			if (localhost_name(text))
				return bad(d, "`%s` is the loopback name (RFC 6761)", qh);
			memcpy(d->host, text, n + 1);
			return 0;
		}
	}
	d->is_literal = true;
	d->spelling = spelling;
	berth_addr_format(&d->literal, d->host, sizeof d->host);
	return 0;
}

int berth_host_decide(const struct berth_host_pattern *pats, size_t n, const char *host, unsigned port,
		      struct berth_host_decision *d)
{
	const struct berth_host_pattern *port_miss = NULL;
	char fmt[BERTH_HOST_PATTERN_STRLEN];

	if (d == NULL)
		return -1;
	memset(d, 0, sizeof *d);
	d->port = port;
	if (normalise(host, d) < 0) {
		memset(&d->literal, 0, sizeof d->literal);
		d->is_literal = false;
		d->spelling = 0;
		return 0;
	}
	if (port == 0 || port > 65535)
		return refuse(d, "port %u is outside 1-65535", port);
	for (size_t i = 0; pats != NULL && i < n; i++) {
		if (!host_matches(&pats[i], d))
			continue;
		if (!port_matches(&pats[i], port)) {
			if (port_miss == NULL)
				port_miss = &pats[i];
			continue;
		}
		d->allowed = true;
		d->matched = &pats[i];
		d->explicit_literal = d->is_literal;
		berth_host_pattern_format(&pats[i], fmt, sizeof fmt);
		snprintf(d->reason, sizeof d->reason, "declared by `%s`", fmt);
		return 1;
	}
	if (port_miss != NULL) {
		host_part(port_miss, fmt, sizeof fmt);
		return refuse(d, "port %u not declared for %s", port, fmt);
	}
	if (d->is_literal && (d->spelling & BERTH_ADDR_V4_ODD) != 0) {
		char qh[QUOTE_MAX * 4 + 8], how[64];
		return refuse(d, "not declared; `%s` is the IPv4 address %s (%s)", q(qh, sizeof qh, host),
			      d->host, berth_addr_spelling_describe(d->spelling, how, sizeof how));
	}
	return refuse(d, "not declared");
}

int berth_host_name_declared(const struct berth_host_pattern *pats, size_t n, const char *host,
			     struct berth_host_decision *d)
{
	char fmt[BERTH_HOST_PATTERN_STRLEN];

	if (d == NULL)
		return -1;
	memset(d, 0, sizeof *d);
	if (normalise(host, d) < 0) {
		memset(&d->literal, 0, sizeof d->literal);
		d->is_literal = false;
		d->spelling = 0;
		return 0;
	}
	if (d->is_literal)
		return refuse(d, "an IP address, not a name");
	for (size_t i = 0; pats != NULL && i < n; i++) {
		if (!host_matches(&pats[i], d))
			continue;
		d->allowed = true;
		d->matched = &pats[i];
		berth_host_pattern_format(&pats[i], fmt, sizeof fmt);
		snprintf(d->reason, sizeof d->reason, "declared by `%s`", fmt);
		return 1;
	}
	return refuse(d, "not declared");
}

bool berth_host_addr_allowed(const struct berth_host_decision *d, const struct berth_addr *resolved,
			     const char **why)
{
	const char *w = NULL, *rule;

	if (d == NULL || resolved == NULL)
		w = "no decision";
	else if (!d->allowed)
		w = "not declared";
	else if (d->is_literal && !berth_addr_same_destination(resolved, &d->literal))
		w = "not the address the request named";
	else if (berth_addr_refused(resolved, &rule) && !d->explicit_literal)
		w = rule; /* explicit beats ambient: only a declared literal reaches a refused range */
	if (why != NULL)
		*why = w;
	return w == NULL;
}

/* ---- the --dns server ---- */

int berth_dns_server_parse(const char *s, char *out, size_t len, struct berth_error *err)
{
	char host[64], port[8] = "";
	const char *p;
	unsigned char buf[16];
	bool v6 = false;

	if (s[0] == '[') {
		p = strchr(s, ']');
		if (p == NULL || (size_t)(p - s - 1) >= sizeof(host))
			goto bad;
		memcpy(host, s + 1, (size_t)(p - s - 1));
		host[p - s - 1] = '\0';
		p++;
		v6 = true;
	} else {
		p = strchr(s, ':');
		if (p != NULL && strchr(p + 1, ':') != NULL) { /* bare IPv6 */
			p = s + strlen(s);
			v6 = true;
		} else if (p == NULL) {
			p = s + strlen(s);
		}
		if ((size_t)(p - s) >= sizeof(host))
			goto bad;
		memcpy(host, s, (size_t)(p - s));
		host[p - s] = '\0';
	}
	if (*p == ':') {
		char *end;
		errno = 0;
		unsigned long v = strtoul(p + 1, &end, 10);
		if (p[1] < '1' || p[1] > '9' || *end != '\0' || v > 65535 || errno != 0)
			goto bad;
		snprintf(port, sizeof(port), "%lu", v);
	} else if (*p != '\0') {
		goto bad;
	}
	if (inet_pton(v6 ? AF_INET6 : AF_INET, host, buf) != 1)
		goto bad;
	/* A server answers one client: not "any" (0.0.0.0, ::), nor a group
	 * (224.0.0.0/4, ff00::/8) or the broadcast address. */
	static const unsigned char zero[16];
	if (memcmp(buf, zero, v6 ? 16 : 4) == 0 || (v6 ? buf[0] == 0xff : (buf[0] & 0xf0) == 0xe0) ||
	    (!v6 && memcmp(buf, "\xff\xff\xff\xff", 4) == 0)) {
		char clean[128];
		return berth_err_status(
		    err, EADDRNOTAVAIL, BERTH_EXIT_USAGE,
		    "invalid DNS server `%s`: not a unicast address (unspecified, multicast "
		    "or broadcast)",
		    berth_text_clean(clean, sizeof clean, s));
	}
	if (port[0] == '\0')
		snprintf(out, len, v6 ? "[%s]:53" : "%s:53", host);
	else
		snprintf(out, len, v6 ? "[%s]:%s" : "%s:%s", host, port);
	return 0;
bad:;
	char clean[128];
	return berth_usage_err(err, "invalid DNS server `%s`: expected `IP`, `IP:PORT` or `[IPV6]:PORT`",
			       berth_text_clean(clean, sizeof clean, s));
}
