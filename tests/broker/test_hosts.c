/* SPDX-License-Identifier: MIT */
/*
 * test_hosts.c - unit tests of src/broker/hosts.c: the allow-host pattern
 * grammar (every accepted form with its canonical text and a round trip,
 * every refusal with its exact reason), and the decisions: names against
 * names and wildcards (subdomains only, never the bare suffix), ports (the
 * 80/443 default, one port, `*`), IP literals in every spelling, explicit
 * literals reaching refused ranges, wildcards never reaching them (the
 * metadata addresses under a `*.` pattern), and the invariant "a refused
 * address is only ever allowed when the request named exactly that declared
 * literal" over a grid of requests and answers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/hostpat.h"
#include "util/cleanup.h"

/* ---- the grammar ---- */

struct good_case {
	const char *text;
	enum berth_host_kind kind;
	const char *name;
	enum berth_host_ports ports;
	unsigned port;
	const char *canonical;
};

#define L63 "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk"
#define L64 L63 "l"
/* 4 * 63 + 3 dots = 255 characters; cut to 253 and 254 below */
#define N255 L63 "." L63 "." L63 "." L63

static const struct good_case good[] = {
    {"api.example.com", BERTH_HOST_NAME, "api.example.com", BERTH_PORTS_DEFAULT, 0, "api.example.com"},
    {"API.Example.COM.", BERTH_HOST_NAME, "api.example.com", BERTH_PORTS_DEFAULT, 0, "api.example.com"},
    {"example.com:443", BERTH_HOST_NAME, "example.com", BERTH_PORTS_ONE, 443, "example.com:443"},
    {"example.com.:1", BERTH_HOST_NAME, "example.com", BERTH_PORTS_ONE, 1, "example.com:1"},
    {"example.com:65535", BERTH_HOST_NAME, "example.com", BERTH_PORTS_ONE, 65535, "example.com:65535"},
    {"example.com:*", BERTH_HOST_NAME, "example.com", BERTH_PORTS_ANY, 0, "example.com:*"},
    {"db", BERTH_HOST_NAME, "db", BERTH_PORTS_DEFAULT, 0, "db"},
    {"1.example.com", BERTH_HOST_NAME, "1.example.com", BERTH_PORTS_DEFAULT, 0, "1.example.com"},
    {"123abc", BERTH_HOST_NAME, "123abc", BERTH_PORTS_DEFAULT, 0, "123abc"},
    {"0x7f.example.com", BERTH_HOST_NAME, "0x7f.example.com", BERTH_PORTS_DEFAULT, 0, "0x7f.example.com"},
    {"a-b.c-d", BERTH_HOST_NAME, "a-b.c-d", BERTH_PORTS_DEFAULT, 0, "a-b.c-d"},
    {"xn--bcher-kva.example", BERTH_HOST_NAME, "xn--bcher-kva.example", BERTH_PORTS_DEFAULT, 0,
     "xn--bcher-kva.example"},
    {"localhost.example.com", BERTH_HOST_NAME, "localhost.example.com", BERTH_PORTS_DEFAULT, 0,
     "localhost.example.com"},
    {L63 ".com", BERTH_HOST_NAME, L63 ".com", BERTH_PORTS_DEFAULT, 0, L63 ".com"},
    {"*.example.com", BERTH_HOST_SUFFIX, "example.com", BERTH_PORTS_DEFAULT, 0, "*.example.com"},
    {"*.Example.com.:8443", BERTH_HOST_SUFFIX, "example.com", BERTH_PORTS_ONE, 8443, "*.example.com:8443"},
    {"*.co:*", BERTH_HOST_SUFFIX, "co", BERTH_PORTS_ANY, 0, "*.co:*"},
    {"10.0.0.5", BERTH_HOST_LITERAL, "10.0.0.5", BERTH_PORTS_DEFAULT, 0, "10.0.0.5"},
    {"10.0.0.5:5432", BERTH_HOST_LITERAL, "10.0.0.5", BERTH_PORTS_ONE, 5432, "10.0.0.5:5432"},
    {"10.0.0.5.", BERTH_HOST_LITERAL, "10.0.0.5", BERTH_PORTS_DEFAULT, 0, "10.0.0.5"},
    {"127.0.0.1:8080", BERTH_HOST_LITERAL, "127.0.0.1", BERTH_PORTS_ONE, 8080, "127.0.0.1:8080"},
    {"169.254.169.254", BERTH_HOST_LITERAL, "169.254.169.254", BERTH_PORTS_DEFAULT, 0, "169.254.169.254"},
    {"[2001:db8::1]", BERTH_HOST_LITERAL, "2001:db8::1", BERTH_PORTS_DEFAULT, 0, "[2001:db8::1]"},
    {"[2001:DB8:0::1]:443", BERTH_HOST_LITERAL, "2001:db8::1", BERTH_PORTS_ONE, 443, "[2001:db8::1]:443"},
    {"[::1]:8080", BERTH_HOST_LITERAL, "::1", BERTH_PORTS_ONE, 8080, "[::1]:8080"},
    {"[::ffff:10.0.0.5]:*", BERTH_HOST_LITERAL, "::ffff:10.0.0.5", BERTH_PORTS_ANY, 0, "[::ffff:10.0.0.5]:*"},
};

static void test_pattern_good(void **state)
{
	char name253[254];
	(void)state;

	for (size_t i = 0; i < BERTH_ARRAY_SIZE(good); i++) {
		const struct good_case *c = &good[i];
		struct berth_host_pattern p, again;
		char reason[BERTH_HOST_REASON_MAX] = "untouched", text[BERTH_HOST_PATTERN_STRLEN];

		if (berth_host_pattern_parse(c->text, &p, reason, sizeof reason) != 0)
			fail_msg("`%s` refused: %s", c->text, reason);
		assert_string_equal(reason, "untouched");
		if (p.kind != c->kind || p.ports != c->ports || p.port != c->port ||
		    strcmp(p.name, c->name) != 0)
			fail_msg("`%s`: kind %d name `%s` ports %d port %u", c->text, p.kind, p.name, p.ports,
				 p.port);
		assert_int_equal(p.addr.family, c->kind == BERTH_HOST_LITERAL
						    ? (strchr(c->name, ':') ? AF_INET6 : AF_INET)
						    : 0);
		assert_int_equal(berth_host_pattern_format(&p, text, sizeof text), 0);
		assert_string_equal(text, c->canonical);
		/* the canonical text reads back to the same pattern */
		assert_int_equal(berth_host_pattern_parse(text, &again, NULL, 0), 0);
		assert_memory_equal(&p, &again, sizeof p);
	}
	/* exactly 253 characters is a name, 254 is not */
	memcpy(name253, N255, 253);
	name253[253] = '\0';
	if (name253[252] == '.')
		name253[252] = 'x';
	{
		struct berth_host_pattern p;
		char reason[BERTH_HOST_REASON_MAX];
		assert_int_equal(berth_host_pattern_parse(name253, &p, reason, sizeof reason), 0);
		assert_int_equal(strlen(p.name), 253);
	}
}

struct bad_case {
	const char *text;
	const char *reason;
};

#define FIX_HOST                                                                                             \
	"a host name is labels of letters, digits and `-` separated by `.`, such as `api.example.com`"
#define FIX_LOOPBACK "to reach a service on this machine's loopback name `127.0.0.1:PORT` or `[::1]:PORT`"
#define BARE_STAR                                                                                            \
	"a bare `*` would allow every host; name a host such as `api.example.com` or a domain such as "      \
	"`*.example.com`"
#define STAR(p)                                                                                              \
	"network pattern `" p                                                                                \
	"` has a `*` that is not a leading `*.`; a wildcard may only start a pattern, as "                   \
	"in `*.example.com`"
#define BADNAME(p, detail) "invalid host name in network pattern `" p "`: " detail "; " FIX_HOST
#define NEITHER(h, p)                                                                                        \
	"`" h "` in network pattern `" p                                                                     \
	"` is neither a host name nor an IPv4 address (the last label of a "                                 \
	"host name is never all digits); write an IPv4 address as four decimal numbers 0-255, such as "      \
	"`192.0.2.1`"
#define ODD(h, p, how, canon)                                                                                \
	"IPv4 address `" h "` in network pattern `" p "` is written in an unusual form (" how                \
	"); write it as `" canon "`"
#define BADPORT(port, p)                                                                                     \
	"invalid port `" port "` in network pattern `" p "`; give 1 to 65535 (no leading zero) or `*`"
#define SUFFIX_IP(p) "`*.` in network pattern `" p "` must be followed by a host name, not an IP address"
#define UNSPEC(p)                                                                                            \
	"network pattern `" p "` names the unspecified address, which is not a destination; " FIX_LOOPBACK
#define LOCALHOST(p)                                                                                         \
	"network pattern `" p                                                                                \
	"` names `localhost`, which always resolves to the loopback (RFC 6761); " FIX_LOOPBACK

static const struct bad_case bad[] = {
    {"", "empty network pattern"},
    {"*", BARE_STAR},
    {"*:443", BARE_STAR},
    {"*.", BARE_STAR},
    {"*.*.example.com", STAR("*.*.example.com")},
    {"a*.example.com", STAR("a*.example.com")},
    {"example.*", STAR("example.*")},
    {"**.example.com", STAR("**.example.com")},
    {"*example.com", STAR("*example.com")},
    {"api.*.example.com:443", STAR("api.*.example.com:443")},
    {"b\xc3\xbc"
     "cher.example",
     "network pattern `b\\xc3\\xbccher.example` is not ASCII; internationalised names are not supported: "
     "write the "
     "A-label (punycode) form, such as `xn--bcher-kva.example`"},
    {"exa_mple.com", BADNAME("exa_mple.com", "`_` is not allowed")},
    {"exa mple.com", BADNAME("exa mple.com", "` ` is not allowed")},
    {"a\x01"
     "b",
     BADNAME("a\\x01b", "`\\x01` is not allowed")},
    {"exa%2emple.com", BADNAME("exa%2emple.com", "`%` is not allowed")},
    {"-a.example.com", BADNAME("-a.example.com", "label starts with `-`")},
    {"a-.example.com", BADNAME("a-.example.com", "label ends with `-`")},
    {"example-", BADNAME("example-", "label ends with `-`")},
    {"a..b", BADNAME("a..b", "empty label")},
    {"example.com..", BADNAME("example.com..", "empty label")},
    {".example.com", BADNAME(".example.com", "empty label")},
    {".", BADNAME(".", "empty label")},
    {"*..example.com", BADNAME("*..example.com", "empty label")},
    {L64 ".com", BADNAME(L64 ".com", "label longer than 63 characters")},
    {"1.2.3.999", NEITHER("1.2.3.999", "1.2.3.999")},
    {"example.123:443", NEITHER("example.123", "example.123:443")},
    {"1.2.3.4.5", NEITHER("1.2.3.4.5", "1.2.3.4.5")},
    {"08", NEITHER("08", "08")},
    {"2130706433", ODD("2130706433", "2130706433", "single 32-bit number", "127.0.0.1")},
    {"0x7f.1", ODD("0x7f.1", "0x7f.1", "shortened, hexadecimal", "127.0.0.1")},
    {"0X7F.1:80", ODD("0x7f.1", "0X7F.1:80", "shortened, hexadecimal", "127.0.0.1")},
    {"0177.0.0.1", ODD("0177.0.0.1", "0177.0.0.1", "octal", "127.0.0.1")},
    {"127.1", ODD("127.1", "127.1", "shortened", "127.0.0.1")},
    {"010.0.0.5:5432", ODD("010.0.0.5", "010.0.0.5:5432", "octal", "8.0.0.5")},
    {"0xa9fea9fe", ODD("0xa9fea9fe", "0xa9fea9fe", "single 32-bit number, hexadecimal", "169.254.169.254")},
    {"::1", "network pattern `::1` has more than one `:`; write an IPv6 address in brackets, such as "
	    "`[2001:db8::1]:443`"},
    {"2001:db8::1:443", "network pattern `2001:db8::1:443` has more than one `:`; write an IPv6 address in "
			"brackets, such as `[2001:db8::1]:443`"},
    {"example.com:443:80",
     "network pattern `example.com:443:80` has more than one `:`; write an IPv6 address in "
     "brackets, such as `[2001:db8::1]:443`"},
    {"[::1", "invalid IPv6 pattern `[::1`; write it as `[2001:db8::1]` or `[2001:db8::1]:443`"},
    {"[::1]x", "unexpected `x` after the IPv6 address in `[::1]x`; a port is written `]:443`"},
    {"[::1]443", "unexpected `443` after the IPv6 address in `[::1]443`; a port is written `]:443`"},
    {"[::1]]", "unexpected `]` after the IPv6 address in `[::1]]`; a port is written `]:443`"},
    {"[fe80::1%eth0]",
     "invalid IPv6 address `fe80::1%eth0` in network pattern `[fe80::1%eth0]`; a zone index "
     "(`%...`) is not allowed"},
    {"[10.0.0.1]",
     "invalid IPv6 address `10.0.0.1` in network pattern `[10.0.0.1]`; brackets are only for IPv6 "
     "addresses, write `10.0.0.1`"},
    {"[0x7f.1]:80",
     "invalid IPv6 address `0x7f.1` in network pattern `[0x7f.1]:80`; brackets are only for IPv6 "
     "addresses, write `127.0.0.1`"},
    {"[example.com]", "invalid IPv6 address `example.com` in network pattern `[example.com]`"},
    {"[]", "invalid IPv6 address `` in network pattern `[]`"},
    {"[2001:db8::1::2]", "invalid IPv6 address `2001:db8::1::2` in network pattern `[2001:db8::1::2]`"},
    {"*.10.0.0.1", SUFFIX_IP("*.10.0.0.1")},
    {"*.0x7f.1", SUFFIX_IP("*.0x7f.1")},
    {"*.1.2.3.999", SUFFIX_IP("*.1.2.3.999")},
    {"*.2130706433:443", SUFFIX_IP("*.2130706433:443")},
    {"example.com:", BADPORT("", "example.com:")},
    {"example.com:0", BADPORT("0", "example.com:0")},
    {"example.com:080", BADPORT("080", "example.com:080")},
    {"example.com:65536", BADPORT("65536", "example.com:65536")},
    {"example.com:123456", BADPORT("123456", "example.com:123456")},
    {"example.com:-1", BADPORT("-1", "example.com:-1")},
    {"example.com:+1", BADPORT("+1", "example.com:+1")},
    {"example.com:abc", BADPORT("abc", "example.com:abc")},
    {"example.com:**", BADPORT("**", "example.com:**")},
    {"example.com: 443", BADPORT(" 443", "example.com: 443")},
    {"[::1]:", BADPORT("", "[::1]:")},
    {"[::1]:0", BADPORT("0", "[::1]:0")},
    {":443", "network pattern `:443` has no host before `:`"},
    {"0.0.0.0", UNSPEC("0.0.0.0")},
    {"0.0.0.0:80", UNSPEC("0.0.0.0:80")},
    {"[::]", UNSPEC("[::]")},
    {"[::ffff:0.0.0.0]:443", UNSPEC("[::ffff:0.0.0.0]:443")},
    {"localhost", LOCALHOST("localhost")},
    {"LOCALHOST:8080", LOCALHOST("LOCALHOST:8080")},
    {"localhost.", LOCALHOST("localhost.")},
    {"*.localhost", LOCALHOST("*.localhost")},
    {"app.localhost:3000", LOCALHOST("app.localhost:3000")},
};

static void test_pattern_bad(void **state)
{
	(void)state;
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(bad); i++) {
		struct berth_host_pattern p;
		char reason[BERTH_HOST_REASON_MAX] = "";

		memset(&p, 0x5a, sizeof p);
		if (berth_host_pattern_parse(bad[i].text, &p, reason, sizeof reason) != -1)
			fail_msg("`%s` accepted", bad[i].text);
		if (strcmp(reason, bad[i].reason) != 0)
			fail_msg("`%s`:\n got  %s\n want %s", bad[i].text, reason, bad[i].reason);
		/* a refused pattern is zeroed: nothing half-parsed can be used */
		for (size_t b = 0; b < sizeof p; b++)
			assert_int_equal(((unsigned char *)&p)[b], 0);
		/* no reason buffer: still refused */
		assert_int_equal(berth_host_pattern_parse(bad[i].text, &p, NULL, 0), -1);
	}
}

static void test_pattern_limits(void **state)
{
	char long_pattern[400], name254[255], reason[BERTH_HOST_REASON_MAX], tiny[16];
	struct berth_host_pattern p;
	(void)state;

	memset(long_pattern, 'a', 301);
	long_pattern[301] = '\0';
	assert_int_equal(berth_host_pattern_parse(long_pattern, &p, reason, sizeof reason), -1);
	assert_string_equal(reason, "network pattern is longer than 300 bytes");
	long_pattern[300] = '\0'; /* 300 bytes: the pattern's length is fine, the name's is not */
	assert_int_equal(berth_host_pattern_parse(long_pattern, &p, reason, sizeof reason), -1);
	assert_non_null(strstr(reason, ": longer than 253 characters; "));
	/* a value in a message is cut at 80 bytes */
	assert_non_null(strstr(
	    reason, "`aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...`"));

	memcpy(name254, N255, 254);
	name254[254] = '\0';
	assert_int_equal(berth_host_pattern_parse(name254, &p, reason, sizeof reason), -1);
	assert_non_null(strstr(reason, ": longer than 253 characters; "));

	assert_int_equal(berth_host_pattern_parse(NULL, &p, reason, sizeof reason), -1);
	assert_string_equal(reason, "empty network pattern");
	assert_int_equal(berth_host_pattern_parse("example.com", NULL, reason, sizeof reason), -1);

	/* a short reason buffer is cut, still a string */
	assert_int_equal(berth_host_pattern_parse("*", &p, tiny, sizeof tiny), -1);
	assert_int_equal(strlen(tiny), sizeof tiny - 1);

	/* format refuses what it cannot write */
	assert_int_equal(berth_host_pattern_parse("*.example.com:8443", &p, NULL, 0), 0);
	assert_int_equal(berth_host_pattern_format(&p, tiny, 10), -1);
	assert_string_equal(tiny, "");
	assert_int_equal(berth_host_pattern_format(&p, tiny, 0), -1);
	assert_int_equal(berth_host_pattern_format(NULL, tiny, sizeof tiny), -1);
	p.kind = (enum berth_host_kind)0;
	assert_int_equal(berth_host_pattern_format(&p, reason, sizeof reason), -1);
}

/* ---- decisions ---- */

static struct berth_host_pattern *parse_all(const char *const *texts, size_t n)
{
	struct berth_host_pattern *pats = calloc(n, sizeof *pats);

	assert_non_null(pats);
	for (size_t i = 0; i < n; i++) {
		char reason[BERTH_HOST_REASON_MAX];
		if (berth_host_pattern_parse(texts[i], &pats[i], reason, sizeof reason) != 0)
			fail_msg("test pattern `%s`: %s", texts[i], reason);
	}
	return pats;
}

struct decide_case {
	const char *host;
	unsigned port;
	int allowed;      /* 1 or 0 */
	int matched;      /* index of the pattern, -1 for none */
	bool literal;     /* is_literal */
	bool explicit;    /* explicit_literal */
	const char *norm; /* d.host */
	const char *reason;
};

static const char *const decide_pats[] = {
    "example.com",          /* 0 */
    "*.example.org",        /* 1 */
    "api.example.net:8443", /* 2 */
    "10.0.0.5:5432",        /* 3 */
    "[2001:db8::5]:*",      /* 4 */
    "*.wild.test:*",        /* 5 */
    "[::1]:8080",           /* 6 */
    "169.254.169.254:80",   /* 7 */
    "db.internal:5432",     /* 8 */
    "db.internal:6432",     /* 9 */
};

static const struct decide_case decide_cases[] = {
    /* exact names and the default ports */
    {"example.com", 443, 1, 0, false, false, "example.com", "declared by `example.com`"},
    {"example.com", 80, 1, 0, false, false, "example.com", "declared by `example.com`"},
    {"EXAMPLE.com.", 443, 1, 0, false, false, "example.com", "declared by `example.com`"},
    {"example.com", 8080, 0, -1, false, false, "example.com", "port 8080 not declared for example.com"},
    {"example.com", 22, 0, -1, false, false, "example.com", "port 22 not declared for example.com"},
    {"www.example.com", 443, 0, -1, false, false, "www.example.com", "not declared"},
    {"example.com.evil", 443, 0, -1, false, false, "example.com.evil", "not declared"},
    {"evil.example", 443, 0, -1, false, false, "evil.example", "not declared"},
    /* wildcards: subdomains only, never the bare suffix */
    {"a.example.org", 443, 1, 1, false, false, "a.example.org", "declared by `*.example.org`"},
    {"a.b.example.org", 80, 1, 1, false, false, "a.b.example.org", "declared by `*.example.org`"},
    {"A.Example.ORG.", 80, 1, 1, false, false, "a.example.org", "declared by `*.example.org`"},
    {"example.org", 443, 0, -1, false, false, "example.org", "not declared"},
    {"xexample.org", 443, 0, -1, false, false, "xexample.org", "not declared"},
    {"a.example.org.evil", 443, 0, -1, false, false, "a.example.org.evil", "not declared"},
    {"a.example.org", 8080, 0, -1, false, false, "a.example.org", "port 8080 not declared for *.example.org"},
    {"x.wild.test", 1, 1, 5, false, false, "x.wild.test", "declared by `*.wild.test:*`"},
    {"x.wild.test", 65535, 1, 5, false, false, "x.wild.test", "declared by `*.wild.test:*`"},
    {"wild.test", 443, 0, -1, false, false, "wild.test", "not declared"},
    /* one port */
    {"api.example.net", 8443, 1, 2, false, false, "api.example.net", "declared by `api.example.net:8443`"},
    {"api.example.net", 443, 0, -1, false, false, "api.example.net",
     "port 443 not declared for api.example.net"},
    {"db.internal", 6432, 1, 9, false, false, "db.internal", "declared by `db.internal:6432`"},
    {"db.internal", 5433, 0, -1, false, false, "db.internal", "port 5433 not declared for db.internal"},
    /* literals: only literal patterns, explicit */
    {"10.0.0.5", 5432, 1, 3, true, true, "10.0.0.5", "declared by `10.0.0.5:5432`"},
    {"0xa.5", 5432, 1, 3, true, true, "10.0.0.5", "declared by `10.0.0.5:5432`"},
    {"167772165", 5432, 1, 3, true, true, "10.0.0.5", "declared by `10.0.0.5:5432`"},
    {"012.0.0.05", 5432, 1, 3, true, true, "10.0.0.5", "declared by `10.0.0.5:5432`"},
    {"10.0.0.5.", 5432, 1, 3, true, true, "10.0.0.5", "declared by `10.0.0.5:5432`"},
    {"[::ffff:10.0.0.5]", 5432, 1, 3, true, true, "::ffff:10.0.0.5", "declared by `10.0.0.5:5432`"},
    {"10.0.0.5", 80, 0, -1, true, false, "10.0.0.5", "port 80 not declared for 10.0.0.5"},
    {"10.0.0.6", 5432, 0, -1, true, false, "10.0.0.6", "not declared"},
    {"64:ff9b::10.0.0.5", 5432, 0, -1, true, false, "64:ff9b::a00:5", "not declared"},
    {"[2001:db8::5]", 1234, 1, 4, true, true, "2001:db8::5", "declared by `[2001:db8::5]:*`"},
    {"2001:db8::5", 443, 1, 4, true, true, "2001:db8::5", "declared by `[2001:db8::5]:*`"},
    {"[2001:DB8:0:0::5]", 443, 1, 4, true, true, "2001:db8::5", "declared by `[2001:db8::5]:*`"},
    {"[2001:db8::6]", 443, 0, -1, true, false, "2001:db8::6", "not declared"},
    {"[::1]", 8080, 1, 6, true, true, "::1", "declared by `[::1]:8080`"},
    {"[::1]", 8081, 0, -1, true, false, "::1", "port 8081 not declared for [::1]"},
    {"127.0.0.1", 8080, 0, -1, true, false, "127.0.0.1", "not declared"},
    {"169.254.169.254", 80, 1, 7, true, true, "169.254.169.254", "declared by `169.254.169.254:80`"},
    {"2852039166", 80, 1, 7, true, true, "169.254.169.254", "declared by `169.254.169.254:80`"},
    {"169.254.169.254", 443, 0, -1, true, false, "169.254.169.254",
     "port 443 not declared for 169.254.169.254"},
    /* odd spellings are the address they spell */
    {"2130706433", 80, 0, -1, true, false, "127.0.0.1",
     "not declared; `2130706433` is the IPv4 address 127.0.0.1 (single 32-bit number)"},
    {"0x7f.1", 80, 0, -1, true, false, "127.0.0.1",
     "not declared; `0x7f.1` is the IPv4 address 127.0.0.1 (shortened, hexadecimal)"},
    {"0X7F.1.", 443, 0, -1, true, false, "127.0.0.1",
     "not declared; `0X7F.1.` is the IPv4 address 127.0.0.1 (shortened, hexadecimal)"},
    {"0177.0.0.1", 80, 0, -1, true, false, "127.0.0.1",
     "not declared; `0177.0.0.1` is the IPv4 address 127.0.0.1 (octal)"},
    {"127.1", 80, 0, -1, true, false, "127.0.0.1",
     "not declared; `127.1` is the IPv4 address 127.0.0.1 (shortened)"},
    {"0", 80, 0, -1, true, false, "0.0.0.0",
     "not declared; `0` is the IPv4 address 0.0.0.0 (single 32-bit number)"},
    {"127.0.0.1", 80, 0, -1, true, false, "127.0.0.1", "not declared"},
    {"[::]", 80, 0, -1, true, false, "::", "not declared"},
    /* bad hosts and ports */
    {"example.com", 0, 0, -1, false, false, "example.com", "port 0 is outside 1-65535"},
    {"example.com", 65536, 0, -1, false, false, "example.com", "port 65536 is outside 1-65535"},
    {"", 443, 0, -1, false, false, "", "empty host name"},
    {"b\xc3\xbc"
     "cher.example",
     443, 0, -1, false, false, "",
     "host name `b\\xc3\\xbccher.example` is not ASCII; internationalised names are not supported: use the "
     "A-label (punycode) form, such as `xn--bcher-kva.example`"},
    {"exa_mple.com", 443, 0, -1, false, false, "", "invalid host name `exa_mple.com`: `_` is not allowed"},
    {"*.example.org", 443, 0, -1, false, false, "", "invalid host name `*.example.org`: `*` is not allowed"},
    {"a..example.org", 443, 0, -1, false, false, "", "invalid host name `a..example.org`: empty label"},
    {".", 443, 0, -1, false, false, "", "invalid host name `.`: empty label"},
    {"example.com ", 443, 0, -1, false, false, "", "invalid host name `example.com `: ` ` is not allowed"},
    {"1.2.3.999", 443, 0, -1, false, false, "", "`1.2.3.999` is neither a host name nor an IPv4 address"},
    {"127.0.0.1 ", 80, 0, -1, false, false, "", "invalid host name `127.0.0.1 `: ` ` is not allowed"},
    {"localhost", 80, 0, -1, false, false, "", "`localhost` is the loopback name (RFC 6761)"},
    {"a.LOCALHOST.", 80, 0, -1, false, false, "", "`a.LOCALHOST.` is the loopback name (RFC 6761)"},
    {"example.com:443", 443, 0, -1, false, false, "", "invalid IPv6 address `example.com:443`"},
    {"[::1", 8080, 0, -1, false, false, "", "invalid IPv6 address `[::1`"},
    {"[::1]:8080", 8080, 0, -1, false, false, "", "invalid IPv6 address `[::1]:8080`"},
    {"[10.0.0.5]", 5432, 0, -1, false, false, "", "invalid IPv6 address `[10.0.0.5]`"},
    {"[fe80::1%25eth0]", 80, 0, -1, false, false, "", "invalid IPv6 address `[fe80::1%25eth0]`"},
};

static void test_decide(void **state)
{
	size_t n = BERTH_ARRAY_SIZE(decide_pats);
	struct berth_host_pattern *pats = parse_all(decide_pats, n);
	(void)state;

	for (size_t i = 0; i < BERTH_ARRAY_SIZE(decide_cases); i++) {
		const struct decide_case *c = &decide_cases[i];
		struct berth_host_decision d;
		int r = berth_host_decide(pats, n, c->host, c->port, &d);

		if (r != c->allowed || d.allowed != (c->allowed == 1))
			fail_msg("`%s` port %u: returned %d (%s), expected %d", c->host, c->port, r, d.reason,
				 c->allowed);
		if (strcmp(d.reason, c->reason) != 0)
			fail_msg("`%s` port %u:\n got  %s\n want %s", c->host, c->port, d.reason, c->reason);
		if (c->matched < 0)
			assert_null(d.matched);
		else
			assert_ptr_equal(d.matched, &pats[c->matched]);
		if (d.is_literal != c->literal || d.explicit_literal != c->explicit)
			fail_msg("`%s` port %u: is_literal %d explicit %d", c->host, c->port, d.is_literal,
				 d.explicit_literal);
		assert_string_equal(d.host, c->norm);
		assert_int_equal(d.port, c->port);
		if (!d.is_literal)
			assert_int_equal(d.literal.family, 0);
	}
	free(pats);
}

static void test_decide_edges(void **state)
{
	struct berth_host_pattern p;
	struct berth_host_decision d;
	char host[400];
	(void)state;

	/* nothing declared: nothing allowed */
	assert_int_equal(berth_host_decide(NULL, 0, "example.com", 443, &d), 0);
	assert_string_equal(d.reason, "not declared");
	assert_int_equal(berth_host_decide(NULL, 5, "example.com", 443, &d), 0);
	assert_int_equal(berth_host_decide(NULL, 0, NULL, 443, &d), 0);
	assert_string_equal(d.reason, "empty host name");
	assert_int_equal(berth_host_decide(NULL, 0, "example.com", 443, NULL), -1);

	/* a long host is named in the reason, cut at 80 bytes */
	memset(host, 'a', 300);
	host[300] = '\0';
	assert_int_equal(berth_host_pattern_parse("example.com", &p, NULL, 0), 0);
	assert_int_equal(berth_host_decide(&p, 1, host, 443, &d), 0);
	{
		char want[200] = "invalid host name `";
		memset(want + strlen(want), 'a', 80);
		strcpy(want + 19 + 80, "...`: longer than 253 characters");
		assert_string_equal(d.reason, want);
	}
	assert_string_equal(d.host, "");

	/* the first matching pattern is the one named */
	{
		static const char *const two[] = {"*.example.com:443", "api.example.com"};
		struct berth_host_pattern *pats = parse_all(two, 2);
		assert_int_equal(berth_host_decide(pats, 2, "api.example.com", 443, &d), 1);
		assert_ptr_equal(d.matched, &pats[0]);
		assert_int_equal(berth_host_decide(pats, 2, "api.example.com", 80, &d), 1);
		assert_ptr_equal(d.matched, &pats[1]);
		assert_int_equal(berth_host_decide(pats, 2, "www.example.com", 80, &d), 0);
		assert_string_equal(d.reason, "port 80 not declared for *.example.com");
		free(pats);
	}
}

static struct berth_addr addr(const char *text)
{
	struct berth_addr a;

	if (berth_addr_parse_literal(text, &a) < 0)
		fail_msg("test address `%s`", text);
	return a;
}

static void expect_addr(const struct berth_host_decision *d, const char *text, const char *want_why)
{
	struct berth_addr a = addr(text);
	const char *why = "untouched";
	bool ok = berth_host_addr_allowed(d, &a, &why);

	if (want_why == NULL && (!ok || why != NULL))
		fail_msg("%s for `%s`: refused (%s), expected allowed", text, d->host,
			 why != NULL ? why : "(null)");
	if (want_why != NULL && (ok || why == NULL))
		fail_msg("%s for `%s`: allowed, expected refused (%s)", text, d->host, want_why);
	if (want_why != NULL && strcmp(why, want_why) != 0)
		fail_msg("%s for `%s`: refused as `%s`, expected `%s`", text, d->host, why, want_why);
}

/* A wildcard (or any name) never reaches a refused address, metadata above all. */
static void test_wildcard_never_refused_ranges(void **state)
{
	static const char *const pats_text[] = {"*.example.com:*", "10.0.0.5:*", "169.254.169.254:80",
						"[fd00:ec2::254]:80", "metadata.google.internal"};
	struct berth_host_pattern *pats = parse_all(pats_text, BERTH_ARRAY_SIZE(pats_text));
	struct berth_host_decision d;
	(void)state;

	assert_int_equal(berth_host_decide(pats, BERTH_ARRAY_SIZE(pats_text), "metadata.example.com", 80, &d),
			 1);
	assert_false(d.is_literal);
	assert_false(d.explicit_literal);
	expect_addr(&d, "93.184.216.34", NULL);
	expect_addr(&d, "2606:4700:4700::1111", NULL);
	expect_addr(&d, "::ffff:93.184.216.34", NULL);
	expect_addr(&d, "169.254.169.254", "cloud metadata (169.254.169.254)");
	expect_addr(&d, "2852039166", "cloud metadata (169.254.169.254)");
	expect_addr(&d, "169.254.170.2", "cloud metadata (169.254.170.2)");
	expect_addr(&d, "100.100.100.200", "cloud metadata (100.100.100.200)");
	expect_addr(&d, "192.0.0.192", "cloud metadata (192.0.0.192)");
	expect_addr(&d, "fd00:ec2::254", "cloud metadata (fd00:ec2::254)");
	expect_addr(&d, "::ffff:169.254.169.254",
		    "cloud metadata (169.254.169.254) via IPv4-mapped (::ffff:0:0/96)");
	expect_addr(&d, "64:ff9b::169.254.169.254",
		    "cloud metadata (169.254.169.254) via NAT64 (64:ff9b::/96)");
	expect_addr(&d, "2002:a9fe:a9fe::", "cloud metadata (169.254.169.254) via 6to4 (2002::/16)");
	/* declared as literals, but the request named a name: still refused */
	expect_addr(&d, "10.0.0.5", "private (10.0.0.0/8)");
	expect_addr(&d, "127.0.0.1", "loopback (127.0.0.0/8)");
	expect_addr(&d, "::1", "loopback (::1/128)");
	expect_addr(&d, "0.0.0.0", "unspecified (0.0.0.0/32)");
	expect_addr(&d, "::", "unspecified (::/128)");
	expect_addr(&d, "fe80::1", "link-local (fe80::/10)");
	expect_addr(&d, "100.64.0.1", "shared address space, CGNAT (100.64.0.0/10)");
	expect_addr(&d, "224.0.0.1", "multicast (224.0.0.0/4)");

	/* an exact name declared: same rule, its DNS answer is not trusted with a refused range */
	assert_int_equal(
	    berth_host_decide(pats, BERTH_ARRAY_SIZE(pats_text), "metadata.google.internal", 80, &d), 1);
	expect_addr(&d, "169.254.169.254", "cloud metadata (169.254.169.254)");

	/* the metadata literal is refused unless declared for that port */
	assert_int_equal(berth_host_decide(pats, BERTH_ARRAY_SIZE(pats_text), "169.254.169.254", 443, &d), 0);
	assert_string_equal(d.reason, "port 443 not declared for 169.254.169.254");
	expect_addr(&d, "169.254.169.254", "not declared");
	assert_int_equal(berth_host_decide(pats, BERTH_ARRAY_SIZE(pats_text), "[fd00:ec2::254]", 80, &d), 1);
	assert_true(d.explicit_literal);
	expect_addr(&d, "fd00:ec2::254", NULL);
	free(pats);
}

/* Explicit beats ambient: the declared literal, and only it. */
static void test_explicit_literal(void **state)
{
	static const char *const pats_text[] = {"10.0.0.5:5432", "93.184.216.34", "[::1]:8080",
						"*.example.com"};
	struct berth_host_pattern *pats = parse_all(pats_text, BERTH_ARRAY_SIZE(pats_text));
	struct berth_host_decision d;
	const char *why = "untouched";
	(void)state;

	assert_int_equal(berth_host_decide(pats, 4, "10.0.0.5", 5432, &d), 1);
	assert_true(d.explicit_literal);
	expect_addr(&d, "10.0.0.5", NULL);
	expect_addr(&d, "::ffff:10.0.0.5", NULL); /* the same destination */
	expect_addr(&d, "10.0.0.6", "not the address the request named");
	expect_addr(&d, "93.184.216.34", "not the address the request named");
	expect_addr(&d, "64:ff9b::10.0.0.5", "not the address the request named");

	/* an odd spelling of the declared address is that address */
	assert_int_equal(berth_host_decide(pats, 4, "0xa000005", 5432, &d), 1);
	assert_true(d.explicit_literal);
	assert_int_equal(d.spelling, BERTH_ADDR_V4_INTEGER | BERTH_ADDR_V4_HEX);
	expect_addr(&d, "10.0.0.5", NULL);

	/* a public literal, declared with the default ports */
	assert_int_equal(berth_host_decide(pats, 4, "93.184.216.34", 443, &d), 1);
	assert_true(d.explicit_literal);
	expect_addr(&d, "93.184.216.34", NULL);
	expect_addr(&d, "93.184.216.35", "not the address the request named");

	assert_int_equal(berth_host_decide(pats, 4, "[0:0::1]", 8080, &d), 1);
	expect_addr(&d, "::1", NULL);
	expect_addr(&d, "127.0.0.1", "not the address the request named");

	/* an undeclared literal: nothing */
	assert_int_equal(berth_host_decide(pats, 4, "8.8.8.8", 443, &d), 0);
	assert_false(d.explicit_literal);
	assert_true(d.is_literal);
	expect_addr(&d, "8.8.8.8", "not declared");

	/* a refused decision never allows an address, public or not */
	assert_int_equal(berth_host_decide(pats, 4, "evil.example", 443, &d), 0);
	expect_addr(&d, "93.184.216.34", "not declared");

	/* no decision */
	{
		struct berth_addr a = addr("93.184.216.34");
		assert_false(berth_host_addr_allowed(NULL, &a, &why));
		assert_string_equal(why, "no decision");
		assert_false(berth_host_addr_allowed(&d, NULL, &why));
		assert_string_equal(why, "no decision");
		assert_false(berth_host_addr_allowed(NULL, NULL, NULL));
	}
	free(pats);
}

/*
 * The invariant, over every request x every answer: an allowed address in a
 * refused range means the request named that address as a literal and a
 * literal pattern declared it for that port.
 */
static void test_invariant_grid(void **state)
{
	static const char *const pats_text[] = {"*.example.com:*", "10.0.0.5:5432",      "[::1]:8080",
						"api.example.net", "169.254.169.254:80", "[fd00:ec2::254]",
						"93.184.216.34:*"};
	static const char *const hosts[] = {"a.example.com",
					    "example.com",
					    "api.example.net",
					    "10.0.0.5",
					    "0xa.5",
					    "[::1]",
					    "::1",
					    "127.0.0.1",
					    "2130706433",
					    "169.254.169.254",
					    "2852039166",
					    "[fd00:ec2::254]",
					    "[::ffff:169.254.169.254]",
					    "93.184.216.34",
					    "1572395042",
					    "evil.example",
					    "localhost"};
	static const unsigned ports[] = {80, 443, 5432, 8080, 22};
	static const char *const answers[] = {
	    "93.184.216.34",        "10.0.0.5",      "::ffff:10.0.0.5", "127.0.0.1", "::1",
	    "169.254.169.254",      "fd00:ec2::254", "0.0.0.0",         "::",        "64:ff9b::7f00:1",
	    "2606:4700:4700::1111", "192.168.1.1"};
	size_t np = BERTH_ARRAY_SIZE(pats_text);
	struct berth_host_pattern *pats = parse_all(pats_text, np);
	unsigned overrides = 0, allowed_public = 0;
	(void)state;

	for (size_t h = 0; h < BERTH_ARRAY_SIZE(hosts); h++)
		for (size_t p = 0; p < BERTH_ARRAY_SIZE(ports); p++) {
			struct berth_host_decision d;
			berth_host_decide(pats, np, hosts[h], ports[p], &d);
			for (size_t a = 0; a < BERTH_ARRAY_SIZE(answers); a++) {
				struct berth_addr ad = addr(answers[a]);
				bool declared = false;
				if (!berth_host_addr_allowed(&d, &ad, NULL))
					continue;
				assert_true(d.allowed);
				if (!berth_addr_refused(&ad, NULL)) {
					allowed_public++;
					continue;
				}
				for (size_t k = 0; k < np; k++)
					declared |= pats[k].kind == BERTH_HOST_LITERAL &&
						    berth_addr_same_destination(&pats[k].addr, &ad) &&
						    d.matched == &pats[k];
				if (!d.is_literal || !d.explicit_literal ||
				    !berth_addr_same_destination(&ad, &d.literal) || !declared)
					fail_msg("%s:%u reached %s", hosts[h], ports[p], answers[a]);
				overrides++;
			}
		}
	/* the grid exercised both sides */
	assert_true(overrides >= 5);
	assert_true(allowed_public >= 5);
	free(pats);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pattern_good),     cmocka_unit_test(test_pattern_bad),
	    cmocka_unit_test(test_pattern_limits),   cmocka_unit_test(test_decide),
	    cmocka_unit_test(test_decide_edges),     cmocka_unit_test(test_wildcard_never_refused_ranges),
	    cmocka_unit_test(test_explicit_literal), cmocka_unit_test(test_invariant_grid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
