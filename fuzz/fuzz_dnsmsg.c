/* SPDX-License-Identifier: MIT */
/*
 * fuzz_dnsmsg.c - the sandbox resolver's DNS parser and answers
 * (src/broker/dnsmsg.c), with properties:
 *   - a parsed name has only letters, digits, '-', '_' and single dots, at most
 *     253 characters, and the echoed question is what the input held;
 *   - every answer fits BERTH_DNS_ANSWER_MAX, carries the query's id, has QR
 *     set (so that it is never answered in turn: parsing it gives -1), and
 *     holds exactly one A record only when one was asked for and given.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/dnsmsg.h"

#define CHECK(c)                                                                                             \
	do {                                                                                                 \
		if (!(c)) {                                                                                  \
			fprintf(stderr, "fuzz_dnsmsg: property failed: %s\n", #c);                           \
			abort();                                                                             \
		}                                                                                            \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct berth_dns_query q, again;
	uint8_t out[BERTH_DNS_ANSWER_MAX];
	static const uint8_t ip[4] = {198, 18, 0, 1};
	int rc = berth_dnsmsg_parse(data, size, &q);

	if (rc < 0)
		return 0;
	size_t nl = strlen(q.name);
	CHECK(nl <= BERTH_DNS_NAME_MAX);
	for (size_t i = 0; i < nl; i++) {
		char c = q.name[i];
		CHECK((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_' || (c == '.' && i > 0 && i + 1 < nl && q.name[i + 1] != '.'));
	}
	if (q.question_len > 0)
		CHECK(q.question_len <= size - 12 && memcmp(q.question, data + 12, q.question_len) == 0);
	for (int give = 0; give < 2; give++) {
		int n = berth_dnsmsg_answer(&q, rc == 0 ? BERTH_DNS_NOERROR : (enum berth_dns_rcode)rc,
					    give ? ip : NULL, 300, out, sizeof out);
		CHECK(n >= 12 && n <= BERTH_DNS_ANSWER_MAX);
		CHECK(out[0] == (q.id >> 8) && out[1] == (q.id & 0xFF));
		CHECK((out[2] & 0x80) != 0);
		CHECK(berth_dnsmsg_parse(out, (size_t)n, &again) == -1);
		int an = out[7];
		CHECK(an == (give && rc == 0 && q.qtype == BERTH_DNS_TYPE_A && q.question_len > 0));
		CHECK((size_t)n == 12 + q.question_len + (an ? 16u : 0u));
	}
	return 0;
}
