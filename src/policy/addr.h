/* SPDX-License-Identifier: MIT */
/*
 * addr.h - IP addresses of a policy and its egress broker: parsing literals in every
 * spelling a resolver accepts, and the ranges a sandbox may never reach by
 * name or by wildcard.
 *
 * Pure functions: no allocation, no I/O, no DNS, no global state; safe to call
 * from any thread.
 *
 * Why the odd IPv4 spellings matter: inet_aton(3), and through it many
 * resolvers, HTTP clients and URL parsers, read `2130706433`, `0x7f.1`,
 * `0177.0.0.1` and `127.1` as 127.0.0.1.  A filter that compares strings, or
 * that only understands the dotted quad of inet_pton(3), lets them through.
 * berth_addr_parse_literal() accepts everything inet_aton(3) accepts (minus
 * its trailing-whitespace quirk), so the broker sees the address a client
 * library would connect to, and says which spelling it was.
 *
 * Why embedded IPv4 addresses are looked through: an IPv6 address can carry
 * an IPv4 address that a dual-stack kernel, a NAT64 translator, a 6to4 relay
 * or a Teredo relay turns back into an IPv4 destination (::ffff:127.0.0.1
 * reaches the loopback of the host on Linux).  The refused IPv4 ranges apply
 * to the embedded address too.
 *
 * The refused ranges, and where each rule comes from.  The IANA IPv4 and IPv6
 * Special-Purpose Address Registries (RFC 6890, updated by RFC 8190) are the
 * base; berth refuses every block of them that is not a public unicast
 * destination an agent needs, plus the cloud metadata endpoints.  `why`
 * strings are exactly the quoted texts.
 *
 * IPv4 (checked most specific first):
 *   0.0.0.0/32        "unspecified (0.0.0.0/32)"            RFC 1122 3.2.1.3, RFC 6890
 *                     (Linux connects 0.0.0.0 to the local host)
 *   0.0.0.0/8         "this network (0.0.0.0/8)"            RFC 791, RFC 1122 3.2.1.3, RFC 6890
 *   10.0.0.0/8        "private (10.0.0.0/8)"                RFC 1918
 *   100.100.100.200   "cloud metadata (100.100.100.200)"    Alibaba Cloud instance metadata
 *   100.64.0.0/10     "shared address space, CGNAT (100.64.0.0/10)"   RFC 6598
 *   127.0.0.0/8       "loopback (127.0.0.0/8)"              RFC 1122 3.2.1.3
 *   168.63.129.16     "cloud metadata (168.63.129.16)"      Azure WireServer (the VM agent's goal state:
 *                     extension settings, certificates), platform DNS and DHCP; a public address, so
 *                     no range above covers it (Microsoft Learn, "What is IP address 168.63.129.16?")
 *   169.254.169.254   "cloud metadata (169.254.169.254)"    AWS, GCP, Azure, OpenStack, DigitalOcean ...
 *   169.254.170.2     "cloud metadata (169.254.170.2)"      AWS ECS task metadata and credentials
 *   169.254.0.0/16    "link-local (169.254.0.0/16)"         RFC 3927
 *   172.16.0.0/12     "private (172.16.0.0/12)"             RFC 1918
 *   192.0.0.192       "cloud metadata (192.0.0.192)"        Oracle Cloud instance metadata
 *   192.0.0.0/24      "IETF protocol assignments (192.0.0.0/24)"   RFC 6890 2.2.2; the whole block,
 *                     although 192.0.0.9 and 192.0.0.10 (RFC 7723, RFC 8155 anycast) are marked
 *                     globally reachable: nothing an agent needs lives there
 *   192.0.2.0/24      "documentation TEST-NET-1 (192.0.2.0/24)"     RFC 5737
 *   192.88.99.0/24    "deprecated 6to4 relay anycast (192.88.99.0/24)"   RFC 3068, RFC 7526
 *   192.168.0.0/16    "private (192.168.0.0/16)"            RFC 1918
 *   198.18.0.0/15     "benchmarking (198.18.0.0/15)"        RFC 2544
 *   198.51.100.0/24   "documentation TEST-NET-2 (198.51.100.0/24)"  RFC 5737
 *   203.0.113.0/24    "documentation TEST-NET-3 (203.0.113.0/24)"   RFC 5737
 *   224.0.0.0/4       "multicast (224.0.0.0/4)"             RFC 5771
 *   255.255.255.255   "limited broadcast (255.255.255.255)" RFC 919, RFC 8190
 *   240.0.0.0/4       "reserved (240.0.0.0/4)"              RFC 1112 section 4, RFC 6890
 *
 * IPv6 (checked in this order; "look through" means the embedded IPv4 address
 * is checked against the table above, and a refusal's `why` is that IPv4 rule
 * followed by " via " and the embedding, e.g.
 * "loopback (127.0.0.0/8) via IPv4-mapped (::ffff:0:0/96)"):
 *   ::/128            "unspecified (::/128)"                RFC 4291 2.5.2 (Linux connects it to the local
 * host)
 *   ::1/128           "loopback (::1/128)"                  RFC 4291 2.5.3
 *   ::ffff:0:0/96     IPv4-mapped, look through (bytes 12-15); allowed when the IPv4 address is
 *                     RFC 4291 2.5.5.2
 *   ::/96             IPv4-compatible, look through; otherwise still refused as
 *                     "deprecated IPv4-compatible (::/96)"  RFC 4291 2.5.5.1
 *   ::ffff:0:0:0/96   IPv4-translated, look through; otherwise still refused as
 *                     "IPv4-translated (::ffff:0:0:0/96)"   RFC 2765 (obsoleted by RFC 6145)
 *   64:ff9b::/96      NAT64 well-known prefix, look through (bytes 12-15); allowed when the IPv4
 *                     address is.  RFC 6052 2.1 and 3.1 (the well-known prefix must not carry
 *                     non-global IPv4 addresses)
 *   64:ff9b:1::/48    NAT64 local-use prefix, RFC 8215.  The operator chooses a /48, /56, /64 or
 *                     /96 inside it, which puts the IPv4 address at different bytes (RFC 6052 2.2:
 *                     /48 bytes 6,7,9,10; /56 bytes 7,9,10,11; /64 bytes 9-12; /96 bytes 12-15).
 *                     berth cannot know which, so it reads the /96 layout always, and each shorter
 *                     layout whose RFC 6052 constraints hold (u octet, byte 8, zero and the bytes
 *                     after the IPv4 address zero), and refuses when any reading is a refused IPv4
 *                     address.  This refuses more than needed in one case: a /48 or /56 embedding
 *                     reads as 0.0.0.0 in the /96 layout, so it is always refused
 *   100::/64          "discard-only (100::/64)"             RFC 6666
 *   2001::/32         Teredo, RFC 4380 section 4: look through the server (bytes 4-7) and the client
 *                     (bytes 12-15, each inverted); allowed when both are
 *   2001:2::/48       "benchmarking (2001:2::/48)"          RFC 5180
 *   2001:10::/28      "deprecated ORCHID (2001:10::/28)"    RFC 4843 (identifiers, not locators)
 *   2001:20::/28      "ORCHIDv2 (2001:20::/28)"             RFC 7343 (identifiers, not locators)
 *   2001::/23         "IETF protocol assignments (2001::/23)"   RFC 2928, RFC 6890; the whole block
 *                     (the PCP, TURN, AMT and AS112 anycast blocks in it included)
 *   2001:db8::/32     "documentation (2001:db8::/32)"       RFC 3849
 *   2002::/16         6to4, RFC 3056: look through bytes 2-5; allowed when the IPv4 address is
 *   3fff::/20         "documentation (3fff::/20)"           RFC 9637
 *   fd00:ec2::254     "cloud metadata (fd00:ec2::254)"      AWS instance metadata over IPv6
 *   fc00::/7          "unique local (fc00::/7)"             RFC 4193
 *   fe80::/10         "link-local (fe80::/10)"              RFC 4291 2.5.6
 *   fec0::/10         "deprecated site-local (fec0::/10)"   RFC 3879
 *   ff00::/8          "multicast (ff00::/8)"                RFC 4291 2.7
 *   not in 2000::/3   "reserved (outside global unicast 2000::/3)"   RFC 4291 2.4 and the IANA IPv6
 *                     Address Space registry: only 2000::/3 is allocated for global unicast
 *                     (this also covers 5f00::/16 SRv6 SIDs, RFC 9602)
 *
 * Embeddings named in `why`: "IPv4-mapped (::ffff:0:0/96)", "IPv4-compatible (::/96)",
 * "IPv4-translated (::ffff:0:0:0/96)", "NAT64 (64:ff9b::/96)", "NAT64 local-use (64:ff9b:1::/48)",
 * "6to4 (2002::/16)", "Teredo server (2001::/32)", "Teredo client (2001::/32)".
 *
 * Not refused: the globally reachable anycast blocks AS112 (192.31.196.0/24,
 * 192.175.48.0/24, 2620:4f:8000::/48) and AMT 192.52.193.0/24; they are
 * public destinations like any other.  Subnet-directed broadcast addresses
 * cannot be known without the host's routes and are not refused here.
 */
#ifndef BERTH_POLICY_ADDR_H
#define BERTH_POLICY_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Room for the longest text berth_addr_format() writes, with its NUL (INET6_ADDRSTRLEN). */
#define BERTH_ADDR_STRLEN 46

/*
 * An IPv4 or IPv6 address.  @family is AF_INET or AF_INET6; @bytes holds the
 * address in network byte order: bytes[0..3] for AF_INET (the other twelve
 * are zero), all sixteen for AF_INET6.  A zeroed struct (family 0) is "no
 * address" and is refused by berth_addr_refused().
 */
struct berth_addr {
	int family;
	uint8_t bytes[16];
};

/*
 * How a literal was written: the value berth_addr_parse_literal() returns,
 * one of BERTH_ADDR_V4 or BERTH_ADDR_V6, or for an odd IPv4 spelling an OR of
 * the BERTH_ADDR_V4_* flags below that apply (never BERTH_ADDR_V4 with them).
 */
enum berth_addr_spelling {
	/* a.b.c.d: four decimal parts 0-255, no leading zeros; the only IPv4 text inet_pton(3) reads */
	BERTH_ADDR_V4 = 1 << 0,
	/* IPv6 text of RFC 4291 2.2 as inet_pton(3) reads it (`::1`, `::ffff:192.0.2.1`), no brackets or zone
	 */
	BERTH_ADDR_V6 = 1 << 1,
	/* one part: the whole address as a 32-bit number, `2130706433`, `0x7f000001` */
	BERTH_ADDR_V4_INTEGER = 1 << 2,
	/* two or three parts: `127.1` (a.b, b is 24 bits), `127.0.1` (a.b.c, c is 16 bits) */
	BERTH_ADDR_V4_SHORT = 1 << 3,
	/* a part in hexadecimal: `0x` or `0X` then one or more hex digits, `0x7f.1` */
	BERTH_ADDR_V4_HEX = 1 << 4,
	/* a part in octal: a leading `0` followed by more octal digits, `0177.0.0.1`, `00` */
	BERTH_ADDR_V4_OCTAL = 1 << 5,
};

/* Every odd IPv4 flag: (spelling & BERTH_ADDR_V4_ODD) != 0 means "not the canonical dotted quad". */
#define BERTH_ADDR_V4_ODD                                                                                    \
	(BERTH_ADDR_V4_INTEGER | BERTH_ADDR_V4_SHORT | BERTH_ADDR_V4_HEX | BERTH_ADDR_V4_OCTAL)

/*
 * berth_addr_parse_literal - read an IP address literal in any spelling.
 * @s: NUL-terminated text, without brackets, port or surrounding space
 * @a: filled with the address on success; untouched on failure
 *
 * IPv6: any text inet_pton(AF_INET6) accepts (a `%zone` is not accepted).
 * IPv4: exactly the texts glibc's inet_aton(3) accepts with nothing after
 * them (what getaddrinfo(3) reads as a numeric host since glibc 2.28):
 * one to four parts separated by `.`, each part a C integer constant
 * (decimal; `0x`/`0X` hexadecimal; leading `0` octal) that starts with a
 * digit; every part but the last is 0-255; the last part fills the
 * remaining bytes (32, 24, 16 or 8 bits for 1, 2, 3 or 4 parts) and must fit
 * them.  Unlike inet_aton(3), trailing white space is refused, and so is a
 * trailing `.` (strip it before: it is a DNS root, not part of the address).
 *
 * Returns the spelling (enum berth_addr_spelling, a positive value) on
 * success, or -1 when @s is not an address literal (including @s or @a NULL).
 * Never touches errno.
 */
int berth_addr_parse_literal(const char *s, struct berth_addr *a);

/*
 * berth_addr_spelling_describe - the spelling in words, for messages.
 * @spelling: a value returned by berth_addr_parse_literal()
 * @buf, @len: output, always NUL-terminated when @len > 0 (truncated if short;
 *             64 bytes are always enough)
 * Writes "dotted quad", "IPv6", or the odd IPv4 flags joined by ", " in the
 * order "single 32-bit number", "shortened", "hexadecimal", "octal".
 * Returns @buf.
 */
const char *berth_addr_spelling_describe(int spelling, char *buf, size_t len);

/*
 * berth_addr_refused - whether an address is in a range a sandbox may not
 * reach unless the user named that exact address (see the table above).
 * @a: the address; NULL or a family other than AF_INET/AF_INET6 is refused
 * @why: when not NULL, set to the rule's name (static storage) when refused,
 *       to NULL when not
 * Returns true when refused.
 */
bool berth_addr_refused(const struct berth_addr *a, const char **why);

/*
 * berth_addr_format - the canonical text of an address.
 * @a: the address
 * @buf, @len: output; BERTH_ADDR_STRLEN bytes are always enough
 * IPv4 as a dotted quad; IPv6 as inet_ntop(3) writes it (RFC 5952: lowercase,
 * the longest run of zero groups compressed; an IPv4-mapped address as
 * `::ffff:a.b.c.d`).  No brackets.
 * Returns 0, or -1 (buf set to "" when @len > 0) when @a is NULL, of another
 * family, or @buf is too short.
 */
int berth_addr_format(const struct berth_addr *a, char *buf, size_t len);

/*
 * berth_addr_equal - same family and same bytes.  ::ffff:a.b.c.d is not
 * equal to a.b.c.d here; see berth_addr_same_destination().
 * Returns false when either is NULL.
 */
bool berth_addr_equal(const struct berth_addr *a, const struct berth_addr *b);

/*
 * berth_addr_same_destination - equal after an IPv4-mapped IPv6 address
 * (::ffff:0:0/96) is taken as its IPv4 address: a dual-stack socket reaches
 * the same host either way.  No other embedding is unwrapped (a NAT64 or 6to4
 * address goes through a translator, which is a different path).
 * Returns false when either is NULL or of an unknown family.
 */
bool berth_addr_same_destination(const struct berth_addr *a, const struct berth_addr *b);

/*
 * berth_addr_from_sockaddr - take the address of a resolver answer.
 * @sa, @salen: a struct sockaddr_in or sockaddr_in6 (getaddrinfo(3), c-ares)
 * @a: filled on success (the port and IPv6 scope id are dropped)
 * Returns 0, or -1 when @sa is NULL, too short for its family, or of another family.
 */
int berth_addr_from_sockaddr(const struct sockaddr *sa, socklen_t salen, struct berth_addr *a);

/*
 * berth_addr_refused_prefix - the @i-th prefix of the refused ranges above,
 * for filters that can only match prefixes (the NetworkPolicy of `berth
 * export k8s`, src/export): the IPv4 rules, then the IPv6 rules that embed
 * no IPv4 address, each in the order of the tables above.  The embeddings
 * (looked through, not refused as a whole) and the "not in 2000::/3" rule
 * are not among them.  @net: the prefix's first address (its family
 * AF_INET or AF_INET6); *@bits: its length.  Returns true, or false when
 * @i is past the last (nothing written).  Pure.
 */
bool berth_addr_refused_prefix(size_t i, struct berth_addr *net, unsigned *bits);

#endif
