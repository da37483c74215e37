/* SPDX-License-Identifier: MIT */
/*
 * hostpat.h - the allow-host patterns of a policy (`--allow-host`, the manifest
 * capability `network:host:`), the decision on a requested destination that the
 * egress broker applies (src/broker), and the --dns server's syntax.  Part of
 * src/policy so that the flags, rules and manifest parsers check patterns
 * without reaching up into the broker (docs/architecture.md, "Layers").
 *
 * Pure functions: no allocation, no I/O, no DNS, no global state.
 *
 * A pattern is what `berth run --allow-host PATTERN` and the manifest
 * capability `network:host:PATTERN` give:
 *
 *   PATTERN  = HOST [ ":" PORTS ]
 *   HOST     = NAME                 one host, exactly
 *            | "*." NAME            every name with at least one more label in front of NAME;
 *                                   NOT NAME itself (`*.example.com` allows `a.example.com`
 *                                   and `a.b.example.com`, not `example.com`)
 *            | IPV4                 four decimal parts 0-255 without leading zeros
 *            | "[" IPV6 "]"         RFC 4291 2.2 text, no zone index
 *   PORTS    = 1-65535 (decimal, no leading zero) | "*" (every port)
 *   no PORTS means ports 80 and 443.
 *
 * NAME follows RFC 1035 2.3.1 as relaxed by RFC 1123 2.1 (a label may start
 * with a digit): labels of ASCII letters, digits and `-`, 1-63 characters,
 * not starting or ending with `-`, at most 253 characters in all (RFC 1035
 * 2.3.4: 255 octets on the wire), compared case-insensitively (RFC 4343) and
 * stored in lowercase.  One trailing `.` (the DNS root, `example.com.`) is
 * removed.  The last label may not be all digits (RFC 3696 2: a top-level
 * domain is never numeric; such a name would be read as an IPv4 address).
 * IDNA (RFC 5891) is out of scope: a name with a byte above 0x7f is refused
 * with a message saying to write its A-label (`xn--...`) form.  An `_` is
 * refused (not a host name character, RFC 952).  `localhost` and names under
 * it are refused: RFC 6761 6.3 makes them the loopback, which a name pattern
 * must never reach (name `127.0.0.1:PORT` to mean it).
 *
 * A wildcard is only a leading `*.`: a bare `*`, `*` inside a label, a second
 * `*` and `*.` before an IPv4 address are refused.
 *
 * A literal pattern must be written canonically: an IPv4 address in an odd
 * spelling (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`) is refused with the
 * dotted quad to write instead, so that a declaration says plainly what it
 * allows.  The unspecified addresses (`0.0.0.0`, `[::]`) are refused: they are
 * not destinations (Linux connects them to the local host).
 *
 * The decision (berth_host_decide) is made on the requested NAME before any
 * DNS query, so that a refused name is never resolved; the broker then
 * resolves an allowed name and checks each address with
 * berth_host_addr_allowed(), and connects to exactly an address it checked.
 *
 * Explicit beats ambient: an address in a refused range (addr.h: loopback,
 * private, link-local, cloud metadata, ...) is reachable only when the request
 * itself named that address as a literal and a literal pattern declared that
 * exact address for that port.  A name pattern or a wildcard never reaches a
 * refused address, whatever its DNS answers.  A request host written as an odd
 * IPv4 spelling (`2130706433`, `0x7f.1`) is that IPv4 address: it only
 * matches a literal pattern of that address, never a name pattern.
 */
#ifndef BERTH_POLICY_HOSTPAT_H
#define BERTH_POLICY_HOSTPAT_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/error.h"
#include "addr.h"

#define BERTH_HOST_NAME_MAX 253    /* characters of a host name, RFC 1035 2.3.4 */
#define BERTH_HOST_PATTERN_MAX 300 /* bytes of a pattern's text; longer ones are refused */
#define BERTH_HOST_REASON_MAX 512  /* room for any reason these functions write */
/* Room for berth_host_pattern_format()'s text with its NUL: "*." NAME ":65535" */
#define BERTH_HOST_PATTERN_STRLEN (BERTH_HOST_NAME_MAX + 2 + 6 + 1)

enum berth_host_kind {
	BERTH_HOST_NAME = 1, /* NAME: the host itself, nothing else */
	BERTH_HOST_SUFFIX,   /* "*." NAME: names ending in "." NAME, not NAME */
	BERTH_HOST_LITERAL,  /* an IPv4 or IPv6 address */
};

enum berth_host_ports {
	BERTH_PORTS_DEFAULT = 1, /* no port given: 80 and 443 */
	BERTH_PORTS_ONE,         /* `:PORT`: that port */
	BERTH_PORTS_ANY,         /* `:*`: 1-65535 */
};

/* One parsed pattern; plain data, copyable. */
struct berth_host_pattern {
	enum berth_host_kind kind;
	/*
	 * NAME: the name, lowercase, no trailing dot.  SUFFIX: NAME after the
	 * "*.".  LITERAL: the address as berth_addr_format() writes it (no brackets).
	 */
	char name[BERTH_HOST_NAME_MAX + 1];
	struct berth_addr addr; /* LITERAL only; zeroed otherwise */
	enum berth_host_ports ports;
	unsigned port; /* PORTS_ONE only; 0 otherwise */
};

/*
 * berth_host_pattern_parse - parse and normalise one allow-host pattern.
 * @s: the pattern text (NUL-terminated)
 * @p: filled on success; zeroed on failure
 * @reason, @len: on failure, a one-line message (lowercase, values in
 *                backticks, no trailing period, non-printable bytes shown as
 *                \xNN) naming the problem and the fix; untouched on success.
 *                May be NULL/0.  BERTH_HOST_REASON_MAX bytes are always enough.
 * Returns 0 on success, -1 when @s is not a valid pattern (or @s or @p is NULL).
 *
 * The reasons, `P` being the pattern as given:
 *   "empty network pattern"
 *   "network pattern is longer than 300 bytes"
 *   "a bare `*` would allow every host; name a host such as `api.example.com` or a domain such as
 *    `*.example.com`"
 *   "network pattern `P` has a `*` that is not a leading `*.`; a wildcard may only start a pattern,
 *    as in `*.example.com`"
 *   "network pattern `P` is not ASCII; internationalised names are not supported: write the
 *    A-label (punycode) form, such as `xn--bcher-kva.example`"
 *   "invalid host name in network pattern `P`: DETAIL; a host name is labels of letters, digits and
 *    `-` separated by `.`, such as `api.example.com`" with DETAIL one of "empty label",
 *    "label longer than 63 characters", "longer than 253 characters", "label starts with `-`",
 *    "label ends with `-`", "`C` is not allowed" (C the first bad character)
 *   "`H` in network pattern `P` is neither a host name nor an IPv4 address (the last label of a
 *    host name is never all digits); write an IPv4 address as four decimal numbers 0-255, such as
 *    `192.0.2.1`"
 *   "IPv4 address `H` in network pattern `P` is written in an unusual form (SPELLING); write it as
 *    `A.B.C.D`" (SPELLING from berth_addr_spelling_describe)
 *   "network pattern `P` has more than one `:`; write an IPv6 address in brackets, such as
 *    `[2001:db8::1]:443`"
 *   "invalid IPv6 pattern `P`; write it as `[2001:db8::1]` or `[2001:db8::1]:443`"  (no `]`)
 *   "invalid IPv6 address `A` in network pattern `P`" (with "; a zone index (`%...`) is not
 *    allowed" appended when A has a `%`, and "; brackets are only for IPv6 addresses, write `A`"
 *    instead when A is an IPv4 address)
 *   "unexpected `X` after the IPv6 address in `P`; a port is written `]:443`"
 *   "`*.` in network pattern `P` must be followed by a host name, not an IP address"
 *   "network pattern `P` has no host before `:`"
 *   "invalid port `X` in network pattern `P`; give 1 to 65535 (no leading zero) or `*`"
 *   "network pattern `P` names the unspecified address, which is not a destination; to reach a
 *    service on this machine's loopback name `127.0.0.1:PORT` or `[::1]:PORT`"
 *   "network pattern `P` names `localhost`, which always resolves to the loopback (RFC 6761); to
 *    reach a service on this machine's loopback name `127.0.0.1:PORT` or `[::1]:PORT`"
 */
int berth_host_pattern_parse(const char *s, struct berth_host_pattern *p, char *reason, size_t len);

/*
 * berth_host_pattern_format - the canonical text of a pattern, which
 * berth_host_pattern_parse() reads back to the same pattern: `api.example.com`,
 * `*.example.com:443`, `10.0.0.5:*`, `[2001:db8::1]:8443`.
 * @p: a parsed pattern
 * @buf, @len: output; BERTH_HOST_PATTERN_STRLEN bytes are always enough
 * Returns 0, or -1 (@buf set to "" when @len > 0) when @p is NULL or invalid
 * or @buf is too short.
 */
int berth_host_pattern_format(const struct berth_host_pattern *p, char *buf, size_t len);

/* The decision on one requested destination; plain data, copyable. */
struct berth_host_decision {
	bool allowed; /* a pattern declares this name (or literal) and port */
	/*
	 * The request named an IP literal (any spelling: `10.0.0.5`, `[::1]`,
	 * `2130706433`, `0x7f.1`); @literal is its address and @spelling its
	 * berth_addr_parse_literal() value.  The broker connects to @literal
	 * without any DNS query.
	 */
	bool is_literal;
	/*
	 * The request named an IP literal AND a literal pattern declared that
	 * exact address (berth_addr_same_destination) for this port: the only
	 * case in which a refused range may be reached.
	 */
	bool explicit_literal;
	int spelling;
	struct berth_addr literal;
	/*
	 * The requested host, normalised: a name in lowercase without trailing
	 * dot, a literal as berth_addr_format() writes it (no brackets).  Empty
	 * when the host was not a valid name or literal.
	 */
	char host[BERTH_HOST_NAME_MAX + 1];
	unsigned port;
	/* The first pattern that allowed it (a pointer into the caller's array), or NULL. */
	const struct berth_host_pattern *matched;
	/*
	 * Refused: the rule, for the 403 body and the summary line
	 * ("refused: HOST:PORT (REASON)"):
	 *   "not declared"
	 *   "not declared; `0x7f.1` is the IPv4 address 127.0.0.1 (hexadecimal, shortened)"
	 *       (a literal request in an odd spelling)
	 *   "port 8080 not declared for example.com" (a pattern allows the host on
	 *       other ports; named as the first such pattern's HOST part, so
	 *       `*.example.com` or `[2001:db8::1]`)
	 *   "port 0 is outside 1-65535"
	 *   "empty host name"
	 *   "host name `H` is not ASCII; internationalised names are not supported: use the A-label
	 *       (punycode) form, such as `xn--bcher-kva.example`"
	 *   "invalid host name `H`: DETAIL" (DETAIL as in berth_host_pattern_parse)
	 *   "`H` is neither a host name nor an IPv4 address"
	 *   "invalid IPv6 address `H`"
	 *   "`H` is the loopback name (RFC 6761)"
	 * Allowed: "declared by `PATTERN`" (PATTERN as berth_host_pattern_format writes it).
	 */
	char reason[BERTH_HOST_REASON_MAX];
};

/*
 * berth_host_decide - decide on a requested host and port, on the name only.
 * @pats, @n: the declared patterns (from berth_host_pattern_parse); @pats may
 *            be NULL when @n is 0
 * @host: the host of the request as the client sent it: a name (a trailing
 *        `.` is ignored, case is ignored), an IPv4 literal in any spelling
 *        inet_aton(3) reads, or an IPv6 literal with or without brackets
 * @port: the requested port
 * @d: filled with the decision (always, when not NULL)
 *
 * A NAME pattern matches the same name; a SUFFIX pattern matches a name that
 * ends with "." and its NAME; a LITERAL pattern matches a literal request of
 * the same destination (berth_addr_same_destination).  A name never matches a
 * literal pattern and a literal never matches a name or suffix pattern.  The
 * port must be one the matching pattern allows.
 *
 * Returns 1 when allowed, 0 when refused, -1 when @d is NULL (nothing decided).
 * An allowed NAME still has to pass berth_host_addr_allowed() for each
 * address it resolves to; so does an allowed literal, with its own address.
 */
int berth_host_decide(const struct berth_host_pattern *pats, size_t n, const char *host, unsigned port,
		      struct berth_host_decision *d);

/*
 * berth_host_name_declared - whether any pattern declares the NAME @host, on
 * any port: the question the sandbox's resolver answers (docs/egress.md
 * "Clients that ignore the proxy"), before a port is known.  The port is
 * decided later, with berth_host_decide(), when the client connects.
 * @pats, @n: as for berth_host_decide()
 * @host: a name as a DNS query carries it (a trailing `.` and case are ignored)
 * @d: filled as by berth_host_decide(), with @d->port 0; refused: "not
 *     declared", "an IP address, not a name" (a query for `1.2.3.4`), or one of
 *     berth_host_decide()'s reasons for an invalid name
 * Returns 1 when declared, 0 when not, -1 when @d is NULL.  A literal pattern
 * never declares a name.
 */
int berth_host_name_declared(const struct berth_host_pattern *pats, size_t n, const char *host,
			     struct berth_host_decision *d);

/*
 * berth_host_addr_allowed - whether the broker may connect to an address for
 * a decision.
 * @d: a decision from berth_host_decide()
 * @resolved: an address the name resolved to (or, for a literal request, the literal)
 * @why: when not NULL, set to the rule when refused: the refused range from
 *       berth_addr_refused() ("loopback (127.0.0.0/8)"), "not declared" when @d
 *       did not allow the request, "not the address the request named" when
 *       @d is a literal request and @resolved is another address, "no decision"
 *       when @d or @resolved is NULL; static storage.  Set to NULL when allowed.
 * Returns true when allowed: @d allowed the request, and either @resolved is
 * in no refused range, or @d->explicit_literal and @resolved is the declared
 * literal (same destination).
 */
bool berth_host_addr_allowed(const struct berth_host_decision *d, const struct berth_addr *resolved,
			     const char **why);

/*
 * berth_dns_server_parse - check a DNS server given as "IP" (IPv4 dotted quad,
 * or IPv6 without brackets), "IP:PORT" or "[IPV6]" / "[IPV6]:PORT" (port
 * 1-65535 in decimal, no leading zero; default 53; inet_pton(3) spellings
 * only, so `0x7f.1` is refused; the unspecified address, multicast and the
 * IPv4 broadcast address are refused, errnum EADDRNOTAVAIL: no one server
 * answers there) and write c-ares' server text for it
 * ("ip:port" or "[ipv6]:port", RFC 3986 3.2.2) into @out (@len bytes; 64 is
 * enough).  Returns 0; -1 with @err filled (BERTH_EXIT_USAGE, the value
 * shown with control characters escaped) when @s is not such a server.
 */
int berth_dns_server_parse(const char *s, char *out, size_t len, struct berth_error *err);

#endif
