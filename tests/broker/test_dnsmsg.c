/* SPDX-License-Identifier: MIT */
/*
 * test_dnsmsg.c - the sandbox resolver's pure parts: DNS query parsing and
 * answers (dnsmsg.h), the addresses given to declared names (fakeaddr.h), and
 * berth_host_name_declared() (hosts.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "broker/dnsmsg.h"
#include "broker/fakeaddr.h"
#include "policy/hostpat.h"

/* A query for @name (dotted) of @qtype, id 0x1234, RD set; @edns adds an OPT
 * record.  Returns its length. */
static size_t query(uint8_t *b, const char *name, unsigned qtype, int edns)
{
	size_t o = 12;
	const char *p = name;

	memset(b, 0, 12);
	b[0] = 0x12, b[1] = 0x34, b[2] = 0x01; /* RD */
	b[5] = 1;
	b[11] = (uint8_t)(edns != 0);
	while (*p != '\0') {
		const char *dot = strchr(p, '.');
		size_t l = dot != NULL ? (size_t)(dot - p) : strlen(p);
		b[o++] = (uint8_t)l;
		memcpy(b + o, p, l);
		o += l;
		p += l + (dot != NULL);
	}
	b[o++] = 0;
	b[o++] = (uint8_t)(qtype >> 8), b[o++] = (uint8_t)qtype;
	b[o++] = 0, b[o++] = 1;
	if (edns) {
		static const uint8_t opt[] = {0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 0};
		memcpy(b + o, opt, sizeof opt);
		o += sizeof opt;
	}
	return o;
}

static void test_parse_valid(void **state)
{
	uint8_t b[512];
	struct berth_dns_query q;

	(void)state;
	size_t n = query(b, "Api.Example.com", BERTH_DNS_TYPE_A, 0);
	assert_int_equal(berth_dnsmsg_parse(b, n, &q), BERTH_DNS_NOERROR);
	assert_int_equal(q.id, 0x1234);
	assert_int_equal(q.qtype, BERTH_DNS_TYPE_A);
	assert_string_equal(q.name, "Api.Example.com");
	assert_int_equal(q.question_len, n - 12);
	/* glibc and Go send an EDNS OPT record */
	n = query(b, "a.b", BERTH_DNS_TYPE_AAAA, 1);
	assert_int_equal(berth_dnsmsg_parse(b, n, &q), BERTH_DNS_NOERROR);
	assert_int_equal(q.qtype, BERTH_DNS_TYPE_AAAA);
	assert_string_equal(q.name, "a.b");
	/* the root */
	n = query(b, "", 2, 0);
	assert_int_equal(berth_dnsmsg_parse(b, n, &q), BERTH_DNS_NOERROR);
	assert_string_equal(q.name, "");
}

static void test_parse_refused(void **state)
{
	uint8_t b[600];
	struct berth_dns_query q;
	size_t n;

	(void)state;
	memset(b, 0, sizeof b);
	assert_int_equal(berth_dnsmsg_parse(b, 11, &q), -1); /* shorter than a header */
	n = query(b, "x.test", 1, 0);
	b[2] |= 0x80; /* a response: never answered (it would loop) */
	assert_int_equal(berth_dnsmsg_parse(b, n, &q), -1);
	n = query(b, "x.test", 1, 0);
	b[2] |= 0x10; /* opcode 2, STATUS */
	assert_int_equal(berth_dnsmsg_parse(b, n, &q), BERTH_DNS_NOTIMP);
	assert_int_equal(q.id, 0x1234); /* still answerable */
	n = query(b, "x.test", 1, 0);
	b[5] = 2; /* two questions */
	assert_int_equal(berth_dnsmsg_parse(b, n, &q), BERTH_DNS_FORMERR);
	n = query(b, "x.test", 1, 0);
	b[n - 1] = 3; /* class CH */
	assert_int_equal(berth_dnsmsg_parse(b, n, &q), BERTH_DNS_NOTIMP);
	n = query(b, "x.test", 1, 0);
	b[n++] = 0; /* a trailing byte */
	assert_int_equal(berth_dnsmsg_parse(b, n, &q), BERTH_DNS_FORMERR);
	n = query(b, "x.test", 1, 0);
	b[12] = 0xC0; /* a compression pointer in the question */
	assert_int_equal(berth_dnsmsg_parse(b, n, &q), BERTH_DNS_FORMERR);
	/* a dot, a NUL, a space or a non-ASCII byte inside a label: the name
	 * would mean something else in text */
	static const char bad[] = {'.', '\0', ' ', (char)0xC3, '/', '*'};
	for (size_t i = 0; i < sizeof bad; i++) {
		n = query(b, "abc.test", 1, 0);
		b[14] = (uint8_t)bad[i];
		assert_int_equal(berth_dnsmsg_parse(b, n, &q), BERTH_DNS_FORMERR);
	}
	/* over-long names: a 64-byte label, and 254 characters in all */
	char name[300];
	memset(name, 'a', 64);
	name[64] = '\0';
	n = query(b, name, 1, 0);
	assert_int_equal(berth_dnsmsg_parse(b, n, &q), BERTH_DNS_FORMERR);
	for (int i = 0; i < 4; i++)
		memcpy(name + i * 64, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.", 64);
	name[254] = '\0';
	n = query(b, name, 1, 0);
	assert_int_equal(berth_dnsmsg_parse(b, n, &q), BERTH_DNS_FORMERR);
	name[253] = '\0'; /* 253 characters: the most RFC 1035 allows */
	n = query(b, name, 1, 0);
	assert_int_equal(berth_dnsmsg_parse(b, n, &q), BERTH_DNS_NOERROR);
	/* cut anywhere: never read past the end */
	size_t full = query(b, "abc.example.test", 1, 1);
	for (size_t k = 12; k < full; k++)
		assert_int_equal(berth_dnsmsg_parse(b, k, &q), BERTH_DNS_FORMERR);
}

static void test_answer(void **state)
{
	uint8_t b[512], out[BERTH_DNS_ANSWER_MAX];
	struct berth_dns_query q;
	static const uint8_t ip[4] = {198, 18, 0, 7};

	(void)state;
	size_t n = query(b, "web.test", BERTH_DNS_TYPE_A, 1);
	assert_int_equal(berth_dnsmsg_parse(b, n, &q), BERTH_DNS_NOERROR);
	int m = berth_dnsmsg_answer(&q, BERTH_DNS_NOERROR, ip, 300, out, sizeof out);
	assert_int_equal(m, 12 + (int)q.question_len + 16);
	assert_int_equal(out[0], 0x12);
	assert_int_equal(out[1], 0x34);
	assert_int_equal(out[2], 0x85); /* QR AA RD */
	assert_int_equal(out[3], 0x80); /* RA, NOERROR */
	assert_int_equal(out[5], 1);    /* one question */
	assert_int_equal(out[7], 1);    /* one answer */
	assert_int_equal(out[11], 0);   /* the OPT is not echoed */
	assert_memory_equal(out + 12, b + 12, q.question_len);
	const uint8_t *rr = out + 12 + q.question_len;
	static const uint8_t want[] = {0xC0, 12, 0, 1, 0, 1, 0, 0, 1, 44, 0, 4, 198, 18, 0, 7};
	assert_memory_equal(rr, want, sizeof want);
	/* AAAA of a declared name: NOERROR with no record (NODATA) */
	n = query(b, "web.test", BERTH_DNS_TYPE_AAAA, 0);
	assert_int_equal(berth_dnsmsg_parse(b, n, &q), BERTH_DNS_NOERROR);
	m = berth_dnsmsg_answer(&q, BERTH_DNS_NOERROR, ip, 300, out, sizeof out);
	assert_int_equal(m, 12 + (int)q.question_len);
	assert_int_equal(out[3], 0x80);
	assert_int_equal(out[7], 0);
	/* NXDOMAIN */
	m = berth_dnsmsg_answer(&q, BERTH_DNS_NXDOMAIN, NULL, 0, out, sizeof out);
	assert_int_equal(out[3], 0x83);
	assert_int_equal(out[7], 0);
	/* a FORMERR to a query whose question could not be read: the header only */
	memset(&q, 0, sizeof q);
	q.id = 9;
	m = berth_dnsmsg_answer(&q, BERTH_DNS_FORMERR, NULL, 0, out, sizeof out);
	assert_int_equal(m, 12);
	assert_int_equal(out[3], 0x81);
	assert_int_equal(out[5], 0);
	/* too small an output buffer */
	assert_int_equal(berth_dnsmsg_answer(&q, BERTH_DNS_FORMERR, NULL, 0, out, 100), -1);
}

static void pattern(struct berth_host_pattern *p, const char *text)
{
	char reason[BERTH_HOST_REASON_MAX];

	assert_int_equal(berth_host_pattern_parse(text, p, reason, sizeof reason), 0);
}

static void test_name_declared(void **state)
{
	struct berth_host_pattern p[4];
	struct berth_host_decision d;

	(void)state;
	pattern(&p[0], "api.example.com:8443");
	pattern(&p[1], "*.cdn.test");
	pattern(&p[2], "10.0.0.5:5432");
	assert_int_equal(berth_host_name_declared(p, 3, "API.example.com.", &d), 1);
	assert_string_equal(d.host, "api.example.com");
	assert_ptr_equal(d.matched, &p[0]);
	assert_string_equal(d.reason, "declared by `api.example.com:8443`");
	assert_int_equal(berth_host_name_declared(p, 3, "a.b.cdn.test", &d), 1);
	assert_int_equal(berth_host_name_declared(p, 3, "cdn.test", &d), 0);
	assert_string_equal(d.reason, "not declared");
	assert_int_equal(berth_host_name_declared(p, 3, "example.com", &d), 0);
	/* a literal pattern never declares a name, and an address is not a name */
	assert_int_equal(berth_host_name_declared(p, 3, "10.0.0.5", &d), 0);
	assert_true(d.is_literal);
	assert_string_equal(d.reason, "an IP address, not a name");
	assert_int_equal(berth_host_name_declared(p, 3, "localhost", &d), 0);
	assert_int_equal(berth_host_name_declared(p, 3, "bad_name.cdn.test", &d), 0);
	assert_int_equal(berth_host_name_declared(p, 3, "", &d), 0);
	assert_int_equal(berth_host_name_declared(NULL, 0, "x.test", &d), 0);
	assert_int_equal(berth_host_name_declared(p, 3, "x.test", NULL), -1);
}

static void test_fakeaddr(void **state)
{
	struct berth_host_pattern p[2];
	struct berth_fakeaddr_map m;
	uint8_t a[4], b[4], c[4];

	(void)state;
	/* 198.18.0.2 is declared as a literal: it is never handed out */
	pattern(&p[0], "198.18.0.2:80");
	pattern(&p[1], "x.test");
	assert_int_equal(berth_fakeaddr_init(&m, p, 2), 0);
	assert_int_equal(berth_fakeaddr_assign(&m, "one.test", a), 0);
	assert_memory_equal(a, ((uint8_t[]){198, 18, 0, 1}), 4);
	assert_int_equal(berth_fakeaddr_assign(&m, "two.test", b), 0);
	assert_memory_equal(b, ((uint8_t[]){198, 18, 0, 3}), 4);
	assert_int_equal(berth_fakeaddr_assign(&m, "one.test", c), 0); /* stable */
	assert_memory_equal(a, c, 4);
	assert_string_equal(berth_fakeaddr_lookup(&m, a), "one.test");
	assert_string_equal(berth_fakeaddr_lookup(&m, b), "two.test");
	assert_null(berth_fakeaddr_lookup(&m, ((uint8_t[]){198, 18, 0, 2})));
	assert_null(berth_fakeaddr_lookup(&m, ((uint8_t[]){198, 18, 0, 4})));
	assert_null(berth_fakeaddr_lookup(&m, ((uint8_t[]){198, 18, 0, 0})));
	assert_null(berth_fakeaddr_lookup(&m, ((uint8_t[]){1, 2, 3, 4})));
	assert_int_equal(berth_fakeaddr_assign(&m, "", a), -1);
	/* full: every address of the /20 but the skipped one, then a refusal
	 * (the last one is x.test's: its pattern kept it in reserve) */
	char name[32];
	for (unsigned i = 3; i < BERTH_FAKEADDR_MAX - 1; i++) {
		snprintf(name, sizeof name, "n%u.test", i);
		assert_int_equal(berth_fakeaddr_assign(&m, name, a), 0);
	}
	assert_int_equal(berth_fakeaddr_assign(&m, "n0.test", a), -1);
	assert_int_equal(berth_fakeaddr_assign(&m, "x.test", a), 0);
	assert_memory_equal(a, ((uint8_t[]){198, 18, 15, 254}), 4);
	assert_int_equal(berth_fakeaddr_assign(&m, "more.test", a), -1);
	assert_int_equal(berth_fakeaddr_assign(&m, "two.test", a), 0); /* the old ones still answer */
	berth_fakeaddr_free(&m);
}

/* A wildcard's names cannot use up the addresses: each exactly declared name
 * keeps one, however many names under the wildcard were asked for first. */
static void test_fakeaddr_reserve(void **state)
{
	struct berth_host_pattern p[5];
	struct berth_fakeaddr_map m;
	uint8_t a[4], first[4];
	char name[32];
	unsigned i;

	(void)state;
	pattern(&p[0], "*.wild.test:*");
	pattern(&p[1], "api.test");
	pattern(&p[2], "api.test:8443"); /* the same name again: one address */
	pattern(&p[3], "late.test:7");
	pattern(&p[4], "198.18.0.7:80"); /* skipped: never handed out */
	assert_int_equal(berth_fakeaddr_init(&m, p, 5), 0);
	assert_int_equal(berth_fakeaddr_assign(&m, "api.test", first), 0);
	/* the wildcard gets every address but the skipped one and late.test's */
	for (i = 0;; i++) {
		snprintf(name, sizeof name, "n%u.wild.test", i);
		if (berth_fakeaddr_assign(&m, name, a) < 0)
			break;
	}
	assert_int_equal(i, BERTH_FAKEADDR_MAX - 3);
	assert_int_equal(berth_fakeaddr_assign(&m, "more.wild.test", a), -1);
	/* the exactly declared names still get theirs; the first one kept its own */
	assert_int_equal(berth_fakeaddr_assign(&m, "late.test", a), 0);
	assert_string_equal(berth_fakeaddr_lookup(&m, a), "late.test");
	assert_int_equal(berth_fakeaddr_assign(&m, "api.test", a), 0);
	assert_memory_equal(a, first, 4);
	/* now the range is full for every name */
	assert_int_equal(berth_fakeaddr_assign(&m, "other.test", a), -1);
	assert_null(berth_fakeaddr_lookup(&m, ((uint8_t[]){198, 18, 0, 7})));
	berth_fakeaddr_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_valid), cmocka_unit_test(test_parse_refused),
	    cmocka_unit_test(test_answer),      cmocka_unit_test(test_name_declared),
	    cmocka_unit_test(test_fakeaddr),    cmocka_unit_test(test_fakeaddr_reserve),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
