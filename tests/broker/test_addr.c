/* SPDX-License-Identifier: MIT */
/*
 * test_addr.c - unit tests of src/broker/addr.c: every refused range at its
 * edges (first, last, one outside on each side) for IPv4 and IPv6, every
 * IPv4 range seen through each IPv6 embedding (IPv4-mapped, IPv4-compatible,
 * IPv4-translated, NAT64 well-known and local-use in each RFC 6052 layout,
 * 6to4, Teredo server and client), every odd IPv4 spelling with glibc's
 * inet_aton(3) as the oracle (a table and a seeded differential run), and
 * formatting, comparison and sockaddr conversion.
 *
 * The expected `why` texts are written out here, not taken from the code, so
 * that a changed rule or a changed text fails a test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/addr.h"
#include "util/cleanup.h"

struct range_case {
	const char *addr;
	const char *why; /* NULL: not refused */
};

/* Every IPv4 rule at its edges; "below"/"above" are the addresses just outside. */
static const struct range_case v4_cases[] = {
    {"0.0.0.0", "unspecified (0.0.0.0/32)"},
    {"0.0.0.1", "this network (0.0.0.0/8)"},
    {"0.255.255.255", "this network (0.0.0.0/8)"},
    {"1.0.0.0", NULL},
    {"9.255.255.255", NULL},
    {"10.0.0.0", "private (10.0.0.0/8)"},
    {"10.0.0.5", "private (10.0.0.0/8)"},
    {"10.255.255.255", "private (10.0.0.0/8)"},
    {"11.0.0.0", NULL},
    {"100.63.255.255", NULL},
    {"100.64.0.0", "shared address space, CGNAT (100.64.0.0/10)"},
    {"100.100.100.199", "shared address space, CGNAT (100.64.0.0/10)"},
    {"100.100.100.200", "cloud metadata (100.100.100.200)"},
    {"100.100.100.201", "shared address space, CGNAT (100.64.0.0/10)"},
    {"100.127.255.255", "shared address space, CGNAT (100.64.0.0/10)"},
    {"100.128.0.0", NULL},
    {"126.255.255.255", NULL},
    {"127.0.0.0", "loopback (127.0.0.0/8)"},
    {"127.0.0.1", "loopback (127.0.0.0/8)"},
    {"127.255.255.255", "loopback (127.0.0.0/8)"},
    {"128.0.0.0", NULL},
    {"168.63.129.15", NULL},
    {"168.63.129.16", "cloud metadata (168.63.129.16)"},
    {"168.63.129.17", NULL},
    {"169.253.255.255", NULL},
    {"169.254.0.0", "link-local (169.254.0.0/16)"},
    {"169.254.169.253", "link-local (169.254.0.0/16)"},
    {"169.254.169.254", "cloud metadata (169.254.169.254)"},
    {"169.254.169.255", "link-local (169.254.0.0/16)"},
    {"169.254.170.1", "link-local (169.254.0.0/16)"},
    {"169.254.170.2", "cloud metadata (169.254.170.2)"},
    {"169.254.170.3", "link-local (169.254.0.0/16)"},
    {"169.254.255.255", "link-local (169.254.0.0/16)"},
    {"169.255.0.0", NULL},
    {"172.15.255.255", NULL},
    {"172.16.0.0", "private (172.16.0.0/12)"},
    {"172.31.255.255", "private (172.16.0.0/12)"},
    {"172.32.0.0", NULL},
    {"191.255.255.255", NULL},
    {"192.0.0.0", "IETF protocol assignments (192.0.0.0/24)"},
    {"192.0.0.191", "IETF protocol assignments (192.0.0.0/24)"},
    {"192.0.0.192", "cloud metadata (192.0.0.192)"},
    {"192.0.0.193", "IETF protocol assignments (192.0.0.0/24)"},
    {"192.0.0.255", "IETF protocol assignments (192.0.0.0/24)"},
    {"192.0.1.0", NULL},
    {"192.0.1.255", NULL},
    {"192.0.2.0", "documentation TEST-NET-1 (192.0.2.0/24)"},
    {"192.0.2.255", "documentation TEST-NET-1 (192.0.2.0/24)"},
    {"192.0.3.0", NULL},
    {"192.31.196.1", NULL}, /* AS112-v4, globally reachable */
    {"192.52.193.1", NULL}, /* AMT, globally reachable */
    {"192.175.48.1", NULL}, /* AS112 direct delegation, globally reachable */
    {"192.88.98.255", NULL},
    {"192.88.99.0", "deprecated 6to4 relay anycast (192.88.99.0/24)"},
    {"192.88.99.255", "deprecated 6to4 relay anycast (192.88.99.0/24)"},
    {"192.88.100.0", NULL},
    {"192.167.255.255", NULL},
    {"192.168.0.0", "private (192.168.0.0/16)"},
    {"192.168.255.255", "private (192.168.0.0/16)"},
    {"192.169.0.0", NULL},
    {"198.17.255.255", NULL},
    {"198.18.0.0", "benchmarking (198.18.0.0/15)"},
    {"198.19.255.255", "benchmarking (198.18.0.0/15)"},
    {"198.20.0.0", NULL},
    {"198.51.99.255", NULL},
    {"198.51.100.0", "documentation TEST-NET-2 (198.51.100.0/24)"},
    {"198.51.100.255", "documentation TEST-NET-2 (198.51.100.0/24)"},
    {"198.51.101.0", NULL},
    {"203.0.112.255", NULL},
    {"203.0.113.0", "documentation TEST-NET-3 (203.0.113.0/24)"},
    {"203.0.113.255", "documentation TEST-NET-3 (203.0.113.0/24)"},
    {"203.0.114.0", NULL},
    {"223.255.255.255", NULL},
    {"224.0.0.0", "multicast (224.0.0.0/4)"},
    {"239.255.255.255", "multicast (224.0.0.0/4)"},
    {"240.0.0.0", "reserved (240.0.0.0/4)"},
    {"255.255.255.254", "reserved (240.0.0.0/4)"},
    {"255.255.255.255", "limited broadcast (255.255.255.255)"},
    {"1.1.1.1", NULL},
    {"8.8.8.8", NULL},
    {"93.184.216.34", NULL},
};

#define V6_RESERVED "reserved (outside global unicast 2000::/3)"
#define V6_IETF "IETF protocol assignments (2001::/23)"

/* IPv6 rules without an embedding, at their edges. */
static const struct range_case v6_cases[] = {
    {"::", "unspecified (::/128)"},
    {"::1", "loopback (::1/128)"},
    {"::2", "this network (0.0.0.0/8) via IPv4-compatible (::/96)"},
    {"::1:0:0:0", V6_RESERVED},
    {"ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", V6_RESERVED},
    {"100::", "discard-only (100::/64)"},
    {"100::ffff:ffff:ffff:ffff", "discard-only (100::/64)"},
    {"100:0:0:1::", V6_RESERVED},
    {"1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", V6_RESERVED},
    {"2000::", NULL},
    {"2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NULL},
    {"2001:1::1", V6_IETF},
    {"2001:1:ffff:ffff:ffff:ffff:ffff:ffff", V6_IETF},
    {"2001:2::", "benchmarking (2001:2::/48)"},
    {"2001:2:0:ffff:ffff:ffff:ffff:ffff", "benchmarking (2001:2::/48)"},
    {"2001:2:1::", V6_IETF},
    {"2001:3::1", V6_IETF},
    {"2001:f:ffff:ffff:ffff:ffff:ffff:ffff", V6_IETF},
    {"2001:10::", "deprecated ORCHID (2001:10::/28)"},
    {"2001:1f:ffff:ffff:ffff:ffff:ffff:ffff", "deprecated ORCHID (2001:10::/28)"},
    {"2001:20::", "ORCHIDv2 (2001:20::/28)"},
    {"2001:2f:ffff:ffff:ffff:ffff:ffff:ffff", "ORCHIDv2 (2001:20::/28)"},
    {"2001:30::", V6_IETF},
    {"2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", V6_IETF},
    {"2001:200::", NULL},
    {"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", NULL},
    {"2001:db8::", "documentation (2001:db8::/32)"},
    {"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "documentation (2001:db8::/32)"},
    {"2001:db9::", NULL},
    {"2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NULL},
    {"2003::", NULL},
    {"3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NULL},
    {"3fff::", "documentation (3fff::/20)"},
    {"3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", "documentation (3fff::/20)"},
    {"3fff:1000::", NULL},
    {"3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NULL},
    {"4000::", V6_RESERVED},
    {"5f00::1", V6_RESERVED},
    {"fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", V6_RESERVED},
    {"fc00::", "unique local (fc00::/7)"},
    {"fd00:ec2::253", "unique local (fc00::/7)"},
    {"fd00:ec2::254", "cloud metadata (fd00:ec2::254)"},
    {"fd00:ec2::255", "unique local (fc00::/7)"},
    {"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "unique local (fc00::/7)"},
    {"fe00::", V6_RESERVED},
    {"fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", V6_RESERVED},
    {"fe80::", "link-local (fe80::/10)"},
    {"fe80::1", "link-local (fe80::/10)"},
    {"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "link-local (fe80::/10)"},
    {"fec0::", "deprecated site-local (fec0::/10)"},
    {"feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "deprecated site-local (fec0::/10)"},
    {"ff00::", "multicast (ff00::/8)"},
    {"ff02::1", "multicast (ff00::/8)"},
    {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "multicast (ff00::/8)"},
    /* embeddings at their edges */
    {"::ffff:0:0", "unspecified (0.0.0.0/32) via IPv4-mapped (::ffff:0:0/96)"},
    {"::ffff:8.8.8.8", NULL},
    {"::ffff:127.0.0.1", "loopback (127.0.0.0/8) via IPv4-mapped (::ffff:0:0/96)"},
    {"::ffff:169.254.169.254", "cloud metadata (169.254.169.254) via IPv4-mapped (::ffff:0:0/96)"},
    {"::fffe:808:808", V6_RESERVED},
    {"::1:ffff:808:808", V6_RESERVED},
    {"::8.8.8.8", "deprecated IPv4-compatible (::/96)"},
    {"::127.0.0.1", "loopback (127.0.0.0/8) via IPv4-compatible (::/96)"},
    {"::ffff:0:8.8.8.8", "IPv4-translated (::ffff:0:0:0/96)"},
    {"::ffff:0:10.1.2.3", "private (10.0.0.0/8) via IPv4-translated (::ffff:0:0:0/96)"},
    {"64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", V6_RESERVED},
    {"64:ff9b::", "unspecified (0.0.0.0/32) via NAT64 (64:ff9b::/96)"},
    {"64:ff9b::8.8.8.8", NULL},
    {"64:ff9b::127.0.0.1", "loopback (127.0.0.0/8) via NAT64 (64:ff9b::/96)"},
    {"64:ff9b::169.254.169.254", "cloud metadata (169.254.169.254) via NAT64 (64:ff9b::/96)"},
    {"64:ff9b::ffff:ffff", "limited broadcast (255.255.255.255) via NAT64 (64:ff9b::/96)"},
    {"64:ff9b::1:0:0", V6_RESERVED},
    {"64:ff9b:0:0:0:1::", V6_RESERVED},
    {"64:ff9b:1::8.8.8.8", NULL},
    {"64:ff9b:1::10.0.0.5", "private (10.0.0.0/8) via NAT64 local-use (64:ff9b:1::/48)"},
    {"64:ff9b:1:ffff:ffff:ffff:ffff:ffff",
     "limited broadcast (255.255.255.255) via NAT64 local-use (64:ff9b:1::/48)"},
    /* /48 layout of 127.0.0.1: bytes 6,7,9,10 */
    {"64:ff9b:1:7f00:0:100::", "loopback (127.0.0.0/8) via NAT64 local-use (64:ff9b:1::/48)"},
    /* /56 layout of 10.1.2.3: bytes 7,9,10,11 */
    {"64:ff9b:1:120a:1:203::", "private (10.0.0.0/8) via NAT64 local-use (64:ff9b:1::/48)"},
    /* /64 layout of 169.254.169.254: bytes 9-12 */
    {"64:ff9b:1:1234:a9:fea9:fe00:0",
     "cloud metadata (169.254.169.254) via NAT64 local-use (64:ff9b:1::/48)"},
    /* /64 layout of 8.8.8.8: the /96 reading is 8.0.0.0, public too */
    {"64:ff9b:1:1234:8:808:800:0", NULL},
    /* /64 layout of 10.0.0.8 (the /96 reading, 8.0.0.0, is public) ... */
    {"64:ff9b:1:1234:a:0:800:0", "private (10.0.0.0/8) via NAT64 local-use (64:ff9b:1::/48)"},
    /* ... and the same bytes with the u octet set are no /64 layout: only the /96 reading */
    {"64:ff9b:1:1234:400a:0:800:0", NULL},
    /* not a /64 layout (u octet set): only the /96 reading, 8.8.8.8 */
    {"64:ff9b:1:1234:ff08:808:808:808", NULL},
    {"64:ff9b:2::", V6_RESERVED},
    {"2002::", "unspecified (0.0.0.0/32) via 6to4 (2002::/16)"},
    {"2002:808:808::", NULL},
    {"2002:7f00:1::", "loopback (127.0.0.0/8) via 6to4 (2002::/16)"},
    {"2002:a9fe:a9fe::1", "cloud metadata (169.254.169.254) via 6to4 (2002::/16)"},
    {"2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "limited broadcast (255.255.255.255) via 6to4 (2002::/16)"},
    /* RFC 4380 section 4's example: server 65.54.227.120, client 192.0.2.45 */
    {"2001:0:4136:e378:8000:63bf:3fff:fdd2",
     "documentation TEST-NET-1 (192.0.2.0/24) via Teredo client (2001::/32)"},
    {"2001:0:4136:e378:8000:63bf:f7f7:f7f7", NULL},
    {"2001:0:7f00:1:0:0:f7f7:f7f7", "loopback (127.0.0.0/8) via Teredo server (2001::/32)"},
    {"2001:0:808:808::", "limited broadcast (255.255.255.255) via Teredo client (2001::/32)"},
    {"2001:0:808:808:0:0:80ff:fefe", "loopback (127.0.0.0/8) via Teredo client (2001::/32)"},
    {"2001:0:ffff:ffff:ffff:ffff:ffff:ffff",
     "limited broadcast (255.255.255.255) via Teredo server (2001::/32)"},
    {"2001:0:808:808:ffff:ffff:ffff:ffff", "unspecified (0.0.0.0/32) via Teredo client (2001::/32)"},
    {"2001:1::", V6_IETF},
    {"2606:4700:4700::1111", NULL},
    {"2a00:1450:4001:80b::200e", NULL},
};

static void check_case(const struct range_case *c, int family)
{
	struct berth_addr a;
	const char *why = "untouched";
	bool refused;

	memset(&a, 0, sizeof a);
	a.family = family;
	if (inet_pton(family, c->addr, a.bytes) != 1)
		fail_msg("test table: `%s` is not an address", c->addr);
	refused = berth_addr_refused(&a, &why);
	if (c->why == NULL) {
		if (refused || why != NULL)
			fail_msg("`%s`: refused as `%s`, expected allowed", c->addr,
				 why != NULL ? why : "(null)");
	} else {
		if (!refused || why == NULL)
			fail_msg("`%s`: allowed, expected refused as `%s`", c->addr, c->why);
		if (strcmp(why, c->why) != 0)
			fail_msg("`%s`: refused as `%s`, expected `%s`", c->addr, why, c->why);
	}
	/* the answer does not depend on asking for `why` */
	assert_int_equal(berth_addr_refused(&a, NULL), c->why != NULL);
}

static void test_v4_ranges(void **state)
{
	(void)state;
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(v4_cases); i++)
		check_case(&v4_cases[i], AF_INET);
}

static void test_v6_ranges(void **state)
{
	(void)state;
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(v6_cases); i++)
		check_case(&v6_cases[i], AF_INET6);
}

/* An IPv6 address: @prefix (bytes), then @v4 (xored with @x) at @at. */
static struct berth_addr embed(const uint8_t prefix[16], const uint8_t v4[4], const unsigned at[4], uint8_t x)
{
	struct berth_addr a;

	memset(&a, 0, sizeof a);
	a.family = AF_INET6;
	memcpy(a.bytes, prefix, 16);
	for (int i = 0; i < 4; i++)
		a.bytes[at[i]] = v4[i] ^ x;
	return a;
}

static void expect(const struct berth_addr *a, const char *v4text, const char *what, const char *want)
{
	const char *why = NULL;
	char text[BERTH_ADDR_STRLEN];
	bool refused = berth_addr_refused(a, &why);

	assert_int_equal(berth_addr_format(a, text, sizeof text), 0);
	if (want == NULL && refused)
		fail_msg("%s of %s (%s): refused as `%s`, expected allowed", what, v4text, text, why);
	if (want != NULL && !refused)
		fail_msg("%s of %s (%s): allowed, expected `%s`", what, v4text, text, want);
	if (want != NULL && strcmp(why, want) != 0)
		fail_msg("%s of %s (%s): refused as `%s`, expected `%s`", what, v4text, text, why, want);
}

/* "@why via @emb", or @otherwise when @why is NULL. */
static const char *via(char *buf, size_t len, const char *why, const char *emb, const char *otherwise)
{
	if (why == NULL)
		return otherwise;
	snprintf(buf, len, "%s via %s", why, emb);
	return buf;
}

/* Every IPv4 case through every embedding. */
static void test_embeddings(void **state)
{
	static const uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	static const uint8_t compat[16] = {0};
	static const uint8_t siit[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0};
	static const uint8_t nat64[16] = {0x00, 0x64, 0xff, 0x9b};
	/* 64:ff9b:1:abcd:12:3456::/96: the /56 and /64 readings of it are public addresses */
	static const uint8_t nat64_local[16] = {0x00, 0x64, 0xff, 0x9b, 0x00, 0x01,
						0xab, 0xcd, 0x00, 0x12, 0x34, 0x56};
	static const uint8_t six_to_four[16] = {0x20, 0x02, 0, 0, 0, 0, 0x12, 0x34};
	/* Teredo with the other end 8.8.8.8 (client stored inverted) */
	static const uint8_t teredo_srv[16] = {0x20, 0x01, 0,    0,    0,    0,    0,    0,
					       0x80, 0x00, 0x63, 0xbf, 0xf7, 0xf7, 0xf7, 0xf7};
	static const uint8_t teredo_cli[16] = {0x20, 0x01, 0,    0,    0x08, 0x08,
					       0x08, 0x08, 0x80, 0x00, 0x63, 0xbf};
	static const unsigned at12[4] = {12, 13, 14, 15}, at2[4] = {2, 3, 4, 5}, at4[4] = {4, 5, 6, 7};
	char b[256];
	(void)state;

	for (size_t i = 0; i < BERTH_ARRAY_SIZE(v4_cases); i++) {
		const struct range_case *c = &v4_cases[i];
		struct berth_addr a;
		uint8_t v4[4];

		assert_int_equal(inet_pton(AF_INET, c->addr, v4), 1);
		a = embed(mapped, v4, at12, 0);
		expect(&a, c->addr, "IPv4-mapped",
		       via(b, sizeof b, c->why, "IPv4-mapped (::ffff:0:0/96)", NULL));
		a = embed(compat, v4, at12, 0);
		if (strcmp(c->addr, "0.0.0.0") == 0)
			expect(&a, c->addr, "IPv4-compatible", "unspecified (::/128)");
		else if (strcmp(c->addr, "0.0.0.1") == 0)
			expect(&a, c->addr, "IPv4-compatible", "loopback (::1/128)");
		else
			expect(&a, c->addr, "IPv4-compatible",
			       via(b, sizeof b, c->why, "IPv4-compatible (::/96)",
				   "deprecated IPv4-compatible (::/96)"));
		a = embed(siit, v4, at12, 0);
		expect(&a, c->addr, "IPv4-translated",
		       via(b, sizeof b, c->why, "IPv4-translated (::ffff:0:0:0/96)",
			   "IPv4-translated (::ffff:0:0:0/96)"));
		a = embed(nat64, v4, at12, 0);
		expect(&a, c->addr, "NAT64", via(b, sizeof b, c->why, "NAT64 (64:ff9b::/96)", NULL));
		a = embed(nat64_local, v4, at12, 0);
		expect(&a, c->addr, "NAT64 local-use /96",
		       via(b, sizeof b, c->why, "NAT64 local-use (64:ff9b:1::/48)", NULL));
		a = embed(six_to_four, v4, at2, 0);
		expect(&a, c->addr, "6to4", via(b, sizeof b, c->why, "6to4 (2002::/16)", NULL));
		a = embed(teredo_srv, v4, at4, 0);
		expect(&a, c->addr, "Teredo server",
		       via(b, sizeof b, c->why, "Teredo server (2001::/32)", NULL));
		a = embed(teredo_cli, v4, at12, 0xff);
		expect(&a, c->addr, "Teredo client",
		       via(b, sizeof b, c->why, "Teredo client (2001::/32)", NULL));
	}
}

/* The NAT64 local-use layouts of RFC 6052 2.2, each with a refused and a public IPv4 address. */
static void test_nat64_local_layouts(void **state)
{
	static const struct {
		unsigned at[4];
		unsigned suffix;
	} layouts[] = {{{6, 7, 9, 10}, 11}, {{7, 9, 10, 11}, 12}, {{9, 10, 11, 12}, 13}};
	static const uint8_t prefix[16] = {0x00, 0x64, 0xff, 0x9b, 0x00, 0x01, 0x12, 0x34};
	static const uint8_t refused[][4] = {
	    {127, 0, 0, 1}, {10, 9, 8, 7}, {169, 254, 169, 254}, {192, 168, 1, 1}};
	(void)state;

	for (size_t l = 0; l < BERTH_ARRAY_SIZE(layouts); l++) {
		for (size_t r = 0; r < BERTH_ARRAY_SIZE(refused); r++) {
			struct berth_addr a = embed(prefix, refused[r], layouts[l].at, 0);
			const char *why = NULL;
			if (!berth_addr_refused(&a, &why))
				fail_msg("layout %zu: %u.%u.%u.%u not refused", l, refused[r][0],
					 refused[r][1], refused[r][2], refused[r][3]);
			assert_non_null(strstr(why, " via NAT64 local-use (64:ff9b:1::/48)"));
			/* with the u octet set it is no such layout: only the /96 reading, 8.8.8.8 */
			a.bytes[8] = 0x40;
			memset(a.bytes + 12, 0x08, 4);
			if (berth_addr_refused(&a, &why))
				fail_msg("layout %zu with the u octet set: refused as `%s`", l, why);
		}
	}
}

/* ---- odd spellings ---- */

struct spelling_case {
	const char *text;
	const char *addr; /* NULL: not a literal */
	int spelling;
};

static const struct spelling_case spellings[] = {
    {"127.0.0.1", "127.0.0.1", BERTH_ADDR_V4},
    {"0.0.0.0", "0.0.0.0", BERTH_ADDR_V4},
    {"255.255.255.255", "255.255.255.255", BERTH_ADDR_V4},
    {"2130706433", "127.0.0.1", BERTH_ADDR_V4_INTEGER},
    {"0", "0.0.0.0", BERTH_ADDR_V4_INTEGER},
    {"4294967295", "255.255.255.255", BERTH_ADDR_V4_INTEGER},
    {"3232235777", "192.168.1.1", BERTH_ADDR_V4_INTEGER},
    {"2852039166", "169.254.169.254", BERTH_ADDR_V4_INTEGER},
    {"0x7f000001", "127.0.0.1", BERTH_ADDR_V4_INTEGER | BERTH_ADDR_V4_HEX},
    {"0X7F000001", "127.0.0.1", BERTH_ADDR_V4_INTEGER | BERTH_ADDR_V4_HEX},
    {"0xA9FEA9FE", "169.254.169.254", BERTH_ADDR_V4_INTEGER | BERTH_ADDR_V4_HEX},
    {"0xffffffff", "255.255.255.255", BERTH_ADDR_V4_INTEGER | BERTH_ADDR_V4_HEX},
    {"017700000001", "127.0.0.1", BERTH_ADDR_V4_INTEGER | BERTH_ADDR_V4_OCTAL},
    {"00", "0.0.0.0", BERTH_ADDR_V4_INTEGER | BERTH_ADDR_V4_OCTAL},
    {"0x0", "0.0.0.0", BERTH_ADDR_V4_INTEGER | BERTH_ADDR_V4_HEX},
    {"0x7f.1", "127.0.0.1", BERTH_ADDR_V4_SHORT | BERTH_ADDR_V4_HEX},
    {"0x7F.0x1", "127.0.0.1", BERTH_ADDR_V4_SHORT | BERTH_ADDR_V4_HEX},
    {"0x7f.0.0.1", "127.0.0.1", BERTH_ADDR_V4_HEX},
    {"0x7f.0x0.0x0.0x1", "127.0.0.1", BERTH_ADDR_V4_HEX},
    {"0x0000000000000000000000007f.1", "127.0.0.1", BERTH_ADDR_V4_SHORT | BERTH_ADDR_V4_HEX},
    {"0177.0.0.1", "127.0.0.1", BERTH_ADDR_V4_OCTAL},
    {"0177.0.0.01", "127.0.0.1", BERTH_ADDR_V4_OCTAL},
    {"127.0.0.01", "127.0.0.1", BERTH_ADDR_V4_OCTAL},
    {"0177.1", "127.0.0.1", BERTH_ADDR_V4_SHORT | BERTH_ADDR_V4_OCTAL},
    {"000000000000000000000000177.1", "127.0.0.1", BERTH_ADDR_V4_SHORT | BERTH_ADDR_V4_OCTAL},
    {"010.0.0.1", "8.0.0.1", BERTH_ADDR_V4_OCTAL},
    {"0127.0.0.1", "87.0.0.1", BERTH_ADDR_V4_OCTAL},
    {"127.1", "127.0.0.1", BERTH_ADDR_V4_SHORT},
    {"127.0.1", "127.0.0.1", BERTH_ADDR_V4_SHORT},
    {"10.1", "10.0.0.1", BERTH_ADDR_V4_SHORT},
    {"169.254.43518", "169.254.169.254", BERTH_ADDR_V4_SHORT},
    {"169.16689662", "169.254.169.254", BERTH_ADDR_V4_SHORT},
    {"1.16777215", "1.255.255.255", BERTH_ADDR_V4_SHORT},
    {"1.2.65535", "1.2.255.255", BERTH_ADDR_V4_SHORT},
    {"0xa9.0376.0xa9fe", "169.254.169.254", BERTH_ADDR_V4_SHORT | BERTH_ADDR_V4_HEX | BERTH_ADDR_V4_OCTAL},
    {"0251.0xfe.0251.0376", "169.254.169.254", BERTH_ADDR_V4_HEX | BERTH_ADDR_V4_OCTAL},
    {"::1", "::1", BERTH_ADDR_V6},
    {"::", "::", BERTH_ADDR_V6},
    {"::ffff:127.0.0.1", "::ffff:127.0.0.1", BERTH_ADDR_V6},
    {"2001:DB8::1", "2001:db8::1", BERTH_ADDR_V6},
    {"0:0:0:0:0:0:0:1", "::1", BERTH_ADDR_V6},
    /* not literals */
    {"", NULL, 0},
    {".", NULL, 0},
    {"1.", NULL, 0},
    {"127.0.0.1.", NULL, 0},
    {".1", NULL, 0},
    {"1..1", NULL, 0},
    {"1.2.3.4.5", NULL, 0},
    {"256.0.0.1", NULL, 0},
    {"1.256.0.1", NULL, 0},
    {"1.2.256.1", NULL, 0},
    {"1.2.3.256", NULL, 0},
    {"1.2.65536", NULL, 0},
    {"1.16777216", NULL, 0},
    {"4294967296", NULL, 0},
    {"0x100000000", NULL, 0},
    {"99999999999999999999999999", NULL, 0},
    {"0x", NULL, 0},
    {"0x.1", NULL, 0},
    {"0xg", NULL, 0},
    {"08", NULL, 0},
    {"09.0.0.1", NULL, 0},
    {"1.2.3.08", NULL, 0},
    {"-1", NULL, 0},
    {"+1", NULL, 0},
    {" 127.0.0.1", NULL, 0},
    {"127.0.0.1 ", NULL, 0},
    {"127.0.0.1\n", NULL, 0},
    {"127.0.0.1x", NULL, 0},
    {"1e1", NULL, 0},
    {"localhost", NULL, 0},
    {"example.com", NULL, 0},
    {"[::1]", NULL, 0},
    {"fe80::1%eth0", NULL, 0},
    {":::", NULL, 0},
    {"1:2:3:4:5:6:7:8:9", NULL, 0},
    {"::ffff:0177.0.0.1", NULL, 0},
    {"\xd9\xa1.\xd9\xa1", NULL, 0},
};

static void test_spellings(void **state)
{
	(void)state;
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(spellings); i++) {
		const struct spelling_case *c = &spellings[i];
		struct berth_addr a, before;
		char text[BERTH_ADDR_STRLEN];
		int r;

		memset(&a, 0xa5, sizeof a);
		before = a;
		r = berth_addr_parse_literal(c->text, &a);
		if (c->addr == NULL) {
			if (r != -1)
				fail_msg("`%s` parsed (spelling %d), expected not a literal", c->text, r);
			assert_memory_equal(&a, &before, sizeof a); /* untouched */
			continue;
		}
		if (r != c->spelling)
			fail_msg("`%s`: spelling %d, expected %d", c->text, r, c->spelling);
		assert_int_equal(berth_addr_format(&a, text, sizeof text), 0);
		if (strcmp(text, c->addr) != 0)
			fail_msg("`%s`: read as %s, expected %s", c->text, text, c->addr);
		/* the oracle: glibc reads the same address */
		if (r != BERTH_ADDR_V6) {
			struct in_addr in;
			assert_int_equal(inet_aton(c->text, &in), 1);
			assert_memory_equal(&in, a.bytes, 4);
			assert_int_equal(a.family, AF_INET);
			for (int b = 4; b < 16; b++)
				assert_int_equal(a.bytes[b], 0);
		} else {
			assert_int_equal(a.family, AF_INET6);
		}
	}
	assert_int_equal(berth_addr_parse_literal(NULL, NULL), -1);
	{
		struct berth_addr a;
		assert_int_equal(berth_addr_parse_literal(NULL, &a), -1);
		assert_int_equal(berth_addr_parse_literal("1.2.3.4", NULL), -1);
	}
}

/* Every refused spelling of the metadata and loopback addresses is refused once parsed. */
static void test_spellings_refused(void **state)
{
	static const struct {
		const char *text;
		const char *why;
	} cases[] = {
	    {"2130706433", "loopback (127.0.0.0/8)"},
	    {"0x7f.1", "loopback (127.0.0.0/8)"},
	    {"0177.0.0.1", "loopback (127.0.0.0/8)"},
	    {"127.1", "loopback (127.0.0.0/8)"},
	    {"0", "unspecified (0.0.0.0/32)"},
	    {"2852039166", "cloud metadata (169.254.169.254)"},
	    {"0xa9.0376.0xa9fe", "cloud metadata (169.254.169.254)"},
	    {"10.1", "private (10.0.0.0/8)"},
	    {"0xc0a80101", "private (192.168.0.0/16)"},
	    {"::ffff:7f00:1", "loopback (127.0.0.0/8) via IPv4-mapped (::ffff:0:0/96)"},
	};
	(void)state;

	for (size_t i = 0; i < BERTH_ARRAY_SIZE(cases); i++) {
		struct berth_addr a;
		const char *why = NULL;
		assert_true(berth_addr_parse_literal(cases[i].text, &a) > 0);
		assert_true(berth_addr_refused(&a, &why));
		assert_string_equal(why, cases[i].why);
	}
}

/*
 * Differential run against inet_aton(3): strings over the characters that
 * make IPv4 literals.  With no white space in the alphabet, glibc's
 * inet_aton accepts exactly what berth must (its trailing-space quirk
 * cannot arise).
 */
static void test_spellings_differential(void **state)
{
	static const char alphabet[] = "0123456789abcdefxX.";
	unsigned seed = 20240601;
	unsigned accepted = 0;
	(void)state;

	for (int i = 0; i < 300000; i++) {
		char s[24];
		size_t n;
		struct berth_addr a;
		struct in_addr in;
		int mine, theirs;

		seed = seed * 1103515245u + 12345u;
		n = 1 + (seed >> 16) % 18;
		for (size_t k = 0; k < n; k++) {
			seed = seed * 1103515245u + 12345u;
			/* mostly digits and dots, so that many strings are addresses */
			unsigned pick = (seed >> 16) % 32;
			s[k] = pick < 10   ? (char)('0' + pick)
			       : pick < 16 ? '.'
					   : alphabet[pick % (sizeof alphabet - 1)];
		}
		s[n] = '\0';
		mine = berth_addr_parse_literal(s, &a);
		theirs = inet_aton(s, &in);
		if ((mine > 0) != (theirs == 1))
			fail_msg("`%s`: berth %s, inet_aton %s", s, mine > 0 ? "accepts" : "refuses",
				 theirs == 1 ? "accepts" : "refuses");
		if (mine > 0) {
			accepted++;
			if (memcmp(&in, a.bytes, 4) != 0)
				fail_msg("`%s`: berth and inet_aton read different addresses", s);
		}
	}
	/* the run is only a test if it met many addresses */
	assert_true(accepted > 10000);
}

static void test_spelling_describe(void **state)
{
	char buf[64], small[8];
	(void)state;

	assert_string_equal(berth_addr_spelling_describe(BERTH_ADDR_V4, buf, sizeof buf), "dotted quad");
	assert_string_equal(berth_addr_spelling_describe(BERTH_ADDR_V6, buf, sizeof buf), "IPv6");
	assert_string_equal(berth_addr_spelling_describe(BERTH_ADDR_V4_INTEGER, buf, sizeof buf),
			    "single 32-bit number");
	assert_string_equal(
	    berth_addr_spelling_describe(BERTH_ADDR_V4_SHORT | BERTH_ADDR_V4_HEX, buf, sizeof buf),
	    "shortened, hexadecimal");
	assert_string_equal(berth_addr_spelling_describe(BERTH_ADDR_V4_ODD, buf, sizeof buf),
			    "single 32-bit number, shortened, hexadecimal, octal");
	assert_string_equal(berth_addr_spelling_describe(BERTH_ADDR_V4_OCTAL, buf, sizeof buf), "octal");
	/* a short buffer is still a string */
	berth_addr_spelling_describe(BERTH_ADDR_V4_ODD, small, sizeof small);
	assert_true(strlen(small) < sizeof small);
}

static void test_format_compare(void **state)
{
	struct berth_addr a, b, none;
	char buf[BERTH_ADDR_STRLEN], tiny[8];
	(void)state;

	memset(&none, 0, sizeof none);
	assert_int_equal(berth_addr_parse_literal("192.0.2.1", &a), BERTH_ADDR_V4);
	assert_int_equal(berth_addr_format(&a, buf, sizeof buf), 0);
	assert_string_equal(buf, "192.0.2.1");
	assert_int_equal(berth_addr_format(&a, tiny, sizeof tiny), -1);
	assert_string_equal(tiny, "");
	assert_int_equal(berth_addr_format(&none, buf, sizeof buf), -1);
	assert_int_equal(berth_addr_format(NULL, buf, sizeof buf), -1);
	assert_int_equal(berth_addr_parse_literal("2001:0DB8:0000:0000:0000:0000:0000:0001", &a),
			 BERTH_ADDR_V6);
	assert_int_equal(berth_addr_format(&a, buf, sizeof buf), 0);
	assert_string_equal(buf, "2001:db8::1");
	assert_int_equal(berth_addr_parse_literal("ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255", &a),
			 BERTH_ADDR_V6);
	assert_int_equal(berth_addr_format(&a, buf, sizeof buf), 0);
	assert_true(strlen(buf) < BERTH_ADDR_STRLEN);

	assert_int_equal(berth_addr_parse_literal("10.0.0.5", &a), BERTH_ADDR_V4);
	assert_int_equal(berth_addr_parse_literal("::ffff:10.0.0.5", &b), BERTH_ADDR_V6);
	assert_false(berth_addr_equal(&a, &b));
	assert_true(berth_addr_same_destination(&a, &b));
	assert_true(berth_addr_same_destination(&b, &a));
	assert_true(berth_addr_equal(&a, &a));
	assert_int_equal(berth_addr_parse_literal("64:ff9b::10.0.0.5", &b), BERTH_ADDR_V6);
	assert_false(berth_addr_same_destination(&a, &b)); /* through a translator: another path */
	assert_int_equal(berth_addr_parse_literal("::10.0.0.5", &b), BERTH_ADDR_V6);
	assert_false(berth_addr_same_destination(&a, &b));
	assert_int_equal(berth_addr_parse_literal("10.0.0.6", &b), BERTH_ADDR_V4);
	assert_false(berth_addr_equal(&a, &b));
	assert_false(berth_addr_same_destination(&a, &b));
	assert_false(berth_addr_equal(&a, NULL));
	assert_false(berth_addr_same_destination(NULL, &a));
	assert_false(berth_addr_same_destination(&none, &none));

	/* no address at all is refused */
	{
		const char *why = NULL;
		assert_true(berth_addr_refused(&none, &why));
		assert_string_equal(why, "not an IP address");
		assert_true(berth_addr_refused(NULL, &why));
		assert_string_equal(why, "not an IP address");
	}
}

static void test_from_sockaddr(void **state)
{
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
	struct sockaddr sa;
	struct berth_addr a;
	char buf[BERTH_ADDR_STRLEN];
	(void)state;

	memset(&in, 0, sizeof in);
	in.sin_family = AF_INET;
	in.sin_port = htons(443);
	assert_int_equal(inet_pton(AF_INET, "169.254.169.254", &in.sin_addr), 1);
	assert_int_equal(berth_addr_from_sockaddr((struct sockaddr *)&in, sizeof in, &a), 0);
	assert_int_equal(a.family, AF_INET);
	assert_int_equal(berth_addr_format(&a, buf, sizeof buf), 0);
	assert_string_equal(buf, "169.254.169.254");
	assert_true(berth_addr_refused(&a, NULL));
	assert_int_equal(berth_addr_from_sockaddr((struct sockaddr *)&in, sizeof in - 1, &a), -1);

	memset(&in6, 0, sizeof in6);
	in6.sin6_family = AF_INET6;
	in6.sin6_scope_id = 7;
	assert_int_equal(inet_pton(AF_INET6, "fd00:ec2::254", &in6.sin6_addr), 1);
	assert_int_equal(berth_addr_from_sockaddr((struct sockaddr *)&in6, sizeof in6, &a), 0);
	assert_int_equal(a.family, AF_INET6);
	assert_int_equal(berth_addr_format(&a, buf, sizeof buf), 0);
	assert_string_equal(buf, "fd00:ec2::254");
	assert_int_equal(berth_addr_from_sockaddr((struct sockaddr *)&in6, sizeof in6 - 1, &a), -1);

	memset(&sa, 0, sizeof sa);
	sa.sa_family = AF_UNIX;
	assert_int_equal(berth_addr_from_sockaddr(&sa, sizeof sa, &a), -1);
	assert_int_equal(berth_addr_from_sockaddr(NULL, sizeof sa, &a), -1);
	assert_int_equal(berth_addr_from_sockaddr((struct sockaddr *)&in, sizeof in, NULL), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_v4_ranges),
	    cmocka_unit_test(test_v6_ranges),
	    cmocka_unit_test(test_embeddings),
	    cmocka_unit_test(test_nat64_local_layouts),
	    cmocka_unit_test(test_spellings),
	    cmocka_unit_test(test_spellings_refused),
	    cmocka_unit_test(test_spellings_differential),
	    cmocka_unit_test(test_spelling_describe),
	    cmocka_unit_test(test_format_compare),
	    cmocka_unit_test(test_from_sockaddr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
