/* SPDX-License-Identifier: MIT */
/*
 * addr.c - IP address literals in every spelling, and the refused ranges.
 * The rules and their sources are listed in addr.h; the tables below follow
 * that list line by line.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "../util/cleanup.h"
#include "../util/hex.h"
#include "addr.h"

/* ---- parsing ---- */

static bool dec_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * inet_aton(3) without its trailing-space quirk, rewritten rather than called
 * so that the spelling is known and so that no libc version difference (the
 * exactness check arrived in glibc 2.28) changes what berth accepts.  Each
 * part is what strtoul(3) with base 0 reads when it starts with a digit.
 */
static int parse_v4(const char *s, uint8_t out[4])
{
	static const uint32_t last_max[4] = {0xffffffffu, 0xffffffu, 0xffffu, 0xffu};
	uint32_t head[3] = {0, 0, 0};
	unsigned dots = 0;
	int flags = 0;
	uint64_t val;
	const char *p = s;

	for (;;) {
		unsigned base = 10;

		if (!dec_digit(*p))
			return -1;
		if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
			/* strtoul reads "0x" without a hex digit as 0 followed by junk */
			if (berth_hex_digit((unsigned char)p[2]) < 0)
				return -1;
			base = 16;
			flags |= BERTH_ADDR_V4_HEX;
			p += 2;
		} else if (p[0] == '0' && dec_digit(p[1])) {
			base = 8;
			flags |= BERTH_ADDR_V4_OCTAL;
			p++;
		}
		val = 0;
		for (;; p++) {
			int d = berth_hex_digit((unsigned char)*p);
			if (d < 0 || (unsigned)d >= base)
				break;
			val = val * base + (unsigned)d;
			if (val > 0xffffffffu) /* strtoul's ERANGE, or above 32 bits */
				return -1;
		}
		if (*p == '.') {
			if (dots >= 3 || val > 0xff)
				return -1;
			head[dots++] = (uint32_t)val;
			p++;
			continue;
		}
		if (*p != '\0') /* an 8 or 9 in an octal part, a letter, a space */
			return -1;
		break;
	}
	if (val > last_max[dots])
		return -1;
	{
		uint32_t w = (uint32_t)val;
		for (unsigned i = 0; i < dots; i++)
			w |= head[i] << (24 - 8 * i);
		out[0] = (uint8_t)(w >> 24);
		out[1] = (uint8_t)(w >> 16);
		out[2] = (uint8_t)(w >> 8);
		out[3] = (uint8_t)w;
	}
	if (dots == 0)
		flags |= BERTH_ADDR_V4_INTEGER;
	else if (dots < 3)
		flags |= BERTH_ADDR_V4_SHORT;
	return flags != 0 ? flags : BERTH_ADDR_V4;
}

int berth_addr_parse_literal(const char *s, struct berth_addr *a)
{
	struct berth_addr r;
	int spelling;

	if (s == NULL || a == NULL)
		return -1;
	memset(&r, 0, sizeof r);
	if (strchr(s, ':') != NULL) {
		if (inet_pton(AF_INET6, s, r.bytes) != 1)
			return -1;
		r.family = AF_INET6;
		spelling = BERTH_ADDR_V6;
	} else {
		spelling = parse_v4(s, r.bytes);
		if (spelling < 0)
			return -1;
		r.family = AF_INET;
	}
	*a = r;
	return spelling;
}

const char *berth_addr_spelling_describe(int spelling, char *buf, size_t len)
{
	static const struct {
		int flag;
		const char *name;
	} odd[] = {
	    {BERTH_ADDR_V4_INTEGER, "single 32-bit number"},
	    {BERTH_ADDR_V4_SHORT, "shortened"},
	    {BERTH_ADDR_V4_HEX, "hexadecimal"},
	    {BERTH_ADDR_V4_OCTAL, "octal"},
	};
	size_t o = 0;

	if (buf == NULL || len == 0)
		return buf;
	buf[0] = '\0';
	if (spelling == BERTH_ADDR_V4) {
		snprintf(buf, len, "dotted quad");
		return buf;
	}
	if (spelling == BERTH_ADDR_V6) {
		snprintf(buf, len, "IPv6");
		return buf;
	}
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(odd); i++) {
		int n;
		if (!(spelling & odd[i].flag))
			continue;
		n = snprintf(buf + o, len - o, "%s%s", o > 0 ? ", " : "", odd[i].name);
		if (n < 0 || (size_t)n >= len - o)
			return buf;
		o += (size_t)n;
	}
	return buf;
}

/* ---- the refused ranges ---- */

/* IPv4 rules, most specific first; the sources are in addr.h. */
#define V4_RULES(X)                                                                                          \
	X(0, 0, 0, 0, 32, "unspecified (0.0.0.0/32)")                                                        \
	X(0, 0, 0, 0, 8, "this network (0.0.0.0/8)")                                                         \
	X(10, 0, 0, 0, 8, "private (10.0.0.0/8)")                                                            \
	X(100, 100, 100, 200, 32, "cloud metadata (100.100.100.200)")                                        \
	X(100, 64, 0, 0, 10, "shared address space, CGNAT (100.64.0.0/10)")                                  \
	X(127, 0, 0, 0, 8, "loopback (127.0.0.0/8)")                                                         \
	X(168, 63, 129, 16, 32, "cloud metadata (168.63.129.16)")                                            \
	X(169, 254, 169, 254, 32, "cloud metadata (169.254.169.254)")                                        \
	X(169, 254, 170, 2, 32, "cloud metadata (169.254.170.2)")                                            \
	X(169, 254, 0, 0, 16, "link-local (169.254.0.0/16)")                                                 \
	X(172, 16, 0, 0, 12, "private (172.16.0.0/12)")                                                      \
	X(192, 0, 0, 192, 32, "cloud metadata (192.0.0.192)")                                                \
	X(192, 0, 0, 0, 24, "IETF protocol assignments (192.0.0.0/24)")                                      \
	X(192, 0, 2, 0, 24, "documentation TEST-NET-1 (192.0.2.0/24)")                                       \
	X(192, 88, 99, 0, 24, "deprecated 6to4 relay anycast (192.88.99.0/24)")                              \
	X(192, 168, 0, 0, 16, "private (192.168.0.0/16)")                                                    \
	X(198, 18, 0, 0, 15, "benchmarking (198.18.0.0/15)")                                                 \
	X(198, 51, 100, 0, 24, "documentation TEST-NET-2 (198.51.100.0/24)")                                 \
	X(203, 0, 113, 0, 24, "documentation TEST-NET-3 (203.0.113.0/24)")                                   \
	X(224, 0, 0, 0, 4, "multicast (224.0.0.0/4)")                                                        \
	X(255, 255, 255, 255, 32, "limited broadcast (255.255.255.255)")                                     \
	X(240, 0, 0, 0, 4, "reserved (240.0.0.0/4)")

struct prefix {
	uint8_t net[16];
	unsigned len; /* bits */
};

#define V4_PREFIX(a, b, c, d, l, why) {{a, b, c, d}, l},
#define V4_WHY(a, b, c, d, l, why) why,
#define V4_VIA(suffix) V4_RULES(V4_VIA_##suffix)
#define V4_VIA_MAPPED(a, b, c, d, l, why) why " via IPv4-mapped (::ffff:0:0/96)",
#define V4_VIA_COMPAT(a, b, c, d, l, why) why " via IPv4-compatible (::/96)",
#define V4_VIA_SIIT(a, b, c, d, l, why) why " via IPv4-translated (::ffff:0:0:0/96)",
#define V4_VIA_NAT64(a, b, c, d, l, why) why " via NAT64 (64:ff9b::/96)",
#define V4_VIA_NAT64_LOCAL(a, b, c, d, l, why) why " via NAT64 local-use (64:ff9b:1::/48)",
#define V4_VIA_6TO4(a, b, c, d, l, why) why " via 6to4 (2002::/16)",
#define V4_VIA_TEREDO_SERVER(a, b, c, d, l, why) why " via Teredo server (2001::/32)",
#define V4_VIA_TEREDO_CLIENT(a, b, c, d, l, why) why " via Teredo client (2001::/32)",

static const struct prefix v4_rules[] = {V4_RULES(V4_PREFIX)};
static const char *const v4_why[] = {V4_RULES(V4_WHY)};

enum embedding {
	EMB_MAPPED,
	EMB_COMPAT,
	EMB_SIIT,
	EMB_NAT64,
	EMB_NAT64_LOCAL,
	EMB_6TO4,
	EMB_TEREDO_SERVER,
	EMB_TEREDO_CLIENT,
	EMB_COUNT,
};

/* The `why` of an IPv4 rule met through an embedding, as static strings. */
static const char *const via_why[EMB_COUNT][BERTH_ARRAY_SIZE(v4_rules)] = {
    [EMB_MAPPED] = {V4_VIA(MAPPED)},
    [EMB_COMPAT] = {V4_VIA(COMPAT)},
    [EMB_SIIT] = {V4_VIA(SIIT)},
    [EMB_NAT64] = {V4_VIA(NAT64)},
    [EMB_NAT64_LOCAL] = {V4_VIA(NAT64_LOCAL)},
    [EMB_6TO4] = {V4_VIA(6TO4)},
    [EMB_TEREDO_SERVER] = {V4_VIA(TEREDO_SERVER)},
    [EMB_TEREDO_CLIENT] = {V4_VIA(TEREDO_CLIENT)},
};

_Static_assert(BERTH_ARRAY_SIZE(v4_why) == BERTH_ARRAY_SIZE(v4_rules), "one why per IPv4 rule");

/* IPv6 rules without an embedded IPv4 address, in the order of addr.h. */
static const struct {
	struct prefix p;
	const char *why;
} v6_rules[] = {
    {{{0x01, 0x00}, 64}, "discard-only (100::/64)"},
    {{{0x20, 0x01, 0x00, 0x02, 0x00, 0x00}, 48}, "benchmarking (2001:2::/48)"},
    {{{0x20, 0x01, 0x00, 0x10}, 28}, "deprecated ORCHID (2001:10::/28)"},
    {{{0x20, 0x01, 0x00, 0x20}, 28}, "ORCHIDv2 (2001:20::/28)"},
    {{{0x20, 0x01, 0x00}, 23}, "IETF protocol assignments (2001::/23)"},
    {{{0x20, 0x01, 0x0d, 0xb8}, 32}, "documentation (2001:db8::/32)"},
    {{{0x3f, 0xff, 0x00}, 20}, "documentation (3fff::/20)"},
    {{{0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54}, 128},
     "cloud metadata (fd00:ec2::254)"},
    {{{0xfc}, 7}, "unique local (fc00::/7)"},
    {{{0xfe, 0x80}, 10}, "link-local (fe80::/10)"},
    {{{0xfe, 0xc0}, 10}, "deprecated site-local (fec0::/10)"},
    {{{0xff}, 8}, "multicast (ff00::/8)"},
};

bool berth_addr_refused_prefix(size_t i, struct berth_addr *net, unsigned *bits)
{
	const struct prefix *p;

	if (i < BERTH_ARRAY_SIZE(v4_rules)) {
		p = &v4_rules[i];
		net->family = AF_INET;
	} else if (i - BERTH_ARRAY_SIZE(v4_rules) < BERTH_ARRAY_SIZE(v6_rules)) {
		p = &v6_rules[i - BERTH_ARRAY_SIZE(v4_rules)].p;
		net->family = AF_INET6;
	} else {
		return false;
	}
	memset(net->bytes, 0, sizeof net->bytes);
	memcpy(net->bytes, p->net, net->family == AF_INET ? 4 : 16);
	*bits = p->len;
	return true;
}

static bool in_prefix(const uint8_t *addr, const struct prefix *p)
{
	unsigned full = p->len / 8, rest = p->len % 8;
	uint8_t mask;

	if (memcmp(addr, p->net, full) != 0)
		return false;
	if (rest == 0)
		return true;
	mask = (uint8_t)(0xffu << (8 - rest));
	return (addr[full] & mask) == (p->net[full] & mask);
}

/* Index of the first IPv4 rule that holds @v4, or -1. */
static int v4_rule(const uint8_t v4[4])
{
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(v4_rules); i++)
		if (in_prefix(v4, &v4_rules[i]))
			return (int)i;
	return -1;
}

/* The refusal of the IPv4 address at bytes @at of @b through @emb, or NULL. */
static const char *via(enum embedding emb, const uint8_t *b, const unsigned at[4], uint8_t xor_mask)
{
	uint8_t v4[4];
	int r;

	for (int i = 0; i < 4; i++)
		v4[i] = b[at[i]] ^ xor_mask;
	r = v4_rule(v4);
	return r < 0 ? NULL : via_why[emb][r];
}

static const unsigned at2[4] = {2, 3, 4, 5}, at4[4] = {4, 5, 6, 7}, at12[4] = {12, 13, 14, 15};

/*
 * RFC 6052 2.2: where a /48, /56, /64 or /96 NAT64 prefix puts the IPv4
 * address, and from which byte on the suffix (which must be zero) starts.
 * Byte 8, the u octet, must be zero for the first three.  The /96 layout has
 * no such constraint and is always read.
 */
static const struct {
	unsigned at[4];
	unsigned suffix; /* first byte of the zero suffix; 16: none */
} nat64_layouts[] = {
    {{6, 7, 9, 10}, 11},
    {{7, 9, 10, 11}, 12},
    {{9, 10, 11, 12}, 13},
    {{12, 13, 14, 15}, 16},
};

static bool zero(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != 0)
			return false;
	return true;
}

/* Whether bytes 0..(n-1) of @b are exactly @p. */
static bool starts(const uint8_t *b, const uint8_t *p, size_t n)
{
	return memcmp(b, p, n) == 0;
}

static const char *v6_refused(const uint8_t b[16])
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	static const uint8_t siit[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0};
	static const uint8_t nat64[12] = {0x00, 0x64, 0xff, 0x9b};
	static const uint8_t nat64_local[6] = {0x00, 0x64, 0xff, 0x9b, 0x00, 0x01};
	static const uint8_t teredo[4] = {0x20, 0x01, 0x00, 0x00};
	static const uint8_t six_to_four[2] = {0x20, 0x02};
	const char *w;

	if (zero(b, 16))
		return "unspecified (::/128)";
	if (zero(b, 15) && b[15] == 1)
		return "loopback (::1/128)";
	if (starts(b, mapped, 12))
		return via(EMB_MAPPED, b, at12, 0);
	if (zero(b, 12)) {
		w = via(EMB_COMPAT, b, at12, 0);
		return w != NULL ? w : "deprecated IPv4-compatible (::/96)";
	}
	if (starts(b, siit, 12)) {
		w = via(EMB_SIIT, b, at12, 0);
		return w != NULL ? w : "IPv4-translated (::ffff:0:0:0/96)";
	}
	if (starts(b, nat64, 12))
		return via(EMB_NAT64, b, at12, 0);
	if (starts(b, nat64_local, 6)) {
		/*
		 * The operator's prefix length is unknown here: read every layout
		 * the address could be, and refuse if any of them is refused.
		 */
		for (size_t i = 0; i < BERTH_ARRAY_SIZE(nat64_layouts); i++) {
			unsigned from = nat64_layouts[i].suffix;
			if (from < 16 && (b[8] != 0 || !zero(b + from, 16 - from)))
				continue;
			w = via(EMB_NAT64_LOCAL, b, nat64_layouts[i].at, 0);
			if (w != NULL)
				return w;
		}
		return NULL;
	}
	if (starts(b, teredo, 4)) {
		/* RFC 4380 4: the client's address is stored with every bit inverted */
		w = via(EMB_TEREDO_SERVER, b, at4, 0);
		return w != NULL ? w : via(EMB_TEREDO_CLIENT, b, at12, 0xff);
	}
	if (starts(b, six_to_four, 2))
		return via(EMB_6TO4, b, at2, 0);
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(v6_rules); i++)
		if (in_prefix(b, &v6_rules[i].p))
			return v6_rules[i].why;
	if ((b[0] & 0xe0) != 0x20)
		return "reserved (outside global unicast 2000::/3)";
	return NULL;
}

bool berth_addr_refused(const struct berth_addr *a, const char **why)
{
	const char *w;

	if (a == NULL || (a->family != AF_INET && a->family != AF_INET6)) {
		w = "not an IP address";
	} else if (a->family == AF_INET) {
		int r = v4_rule(a->bytes);
		w = r < 0 ? NULL : v4_why[r];
	} else {
		w = v6_refused(a->bytes);
	}
	if (why != NULL)
		*why = w;
	return w != NULL;
}

/* ---- formatting and comparing ---- */

int berth_addr_format(const struct berth_addr *a, char *buf, size_t len)
{
	char tmp[BERTH_ADDR_STRLEN];

	if (buf != NULL && len > 0)
		buf[0] = '\0';
	if (a == NULL || buf == NULL || (a->family != AF_INET && a->family != AF_INET6))
		return -1;
	if (inet_ntop(a->family, a->bytes, tmp, sizeof tmp) == NULL || strlen(tmp) >= len)
		return -1;
	memcpy(buf, tmp, strlen(tmp) + 1);
	return 0;
}

bool berth_addr_equal(const struct berth_addr *a, const struct berth_addr *b)
{
	if (a == NULL || b == NULL || a->family != b->family)
		return false;
	return memcmp(a->bytes, b->bytes, a->family == AF_INET ? 4 : 16) == 0;
}

/* @a with an IPv4-mapped address replaced by its IPv4 address. */
static struct berth_addr unmapped(const struct berth_addr *a)
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	struct berth_addr r = *a;

	if (a->family == AF_INET6 && memcmp(a->bytes, mapped, 12) == 0) {
		memset(&r, 0, sizeof r);
		r.family = AF_INET;
		memcpy(r.bytes, a->bytes + 12, 4);
	}
	return r;
}

bool berth_addr_same_destination(const struct berth_addr *a, const struct berth_addr *b)
{
	struct berth_addr x, y;

	if (a == NULL || b == NULL || (a->family != AF_INET && a->family != AF_INET6) ||
	    (b->family != AF_INET && b->family != AF_INET6))
		return false;
	x = unmapped(a);
	y = unmapped(b);
	return berth_addr_equal(&x, &y);
}

int berth_addr_from_sockaddr(const struct sockaddr *sa, socklen_t salen, struct berth_addr *a)
{
	struct berth_addr r;

	if (sa == NULL || a == NULL || salen < (socklen_t)sizeof(sa_family_t))
		return -1;
	memset(&r, 0, sizeof r);
	if (sa->sa_family == AF_INET && salen >= (socklen_t)sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
		r.family = AF_INET;
		memcpy(r.bytes, &in->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6 && salen >= (socklen_t)sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;
		r.family = AF_INET6;
		memcpy(r.bytes, &in6->sin6_addr, 16);
	} else {
		return -1;
	}
	*a = r;
	return 0;
}
