/* SPDX-License-Identifier: MIT */
/*
 * fuzz_audit.c - libFuzzer target for the audit log's line parser
 * (berth_audit_parse_line, src/audit/audit.c) and RFC 8785 canonical JSON
 * (berth_jcs, src/util/jcs.c).  Inputs are capped at 64 KiB.
 *
 * Invariants (a violation aborts):
 *  - a line the parser accepts is its own JCS form, and its hash equals
 *    berth_audit_record_hash() of the parsed record (the two independent
 *    ways to compute it agree); a refused line always says why (EBADMSG);
 *  - berth_jcs_check (the verifier's tree-less check) accepts exactly the
 *    texts that are JCS of their own parse (jansson may refuse only
 *    integer-looking numbers beyond 64 bits, which the check can accept);
 *  - for any JSON text jansson accepts, berth_jcs either refuses with a
 *    message or returns text that jansson parses back to an equal value and
 *    whose own JCS is byte-identical (canonical form is a fixed point);
 *    jansson may only fail to read it back for an integer-looking number
 *    beyond its 64-bit integers (ES6 prints 1e20 without an exponent), and
 *    the second JCS may only refuse an integer beyond 2^53 that is no
 *    double (jansson reads ES6 digits of a large double as an integer).
 */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"
#include "util/jcs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                                             \
	do {                                                                                                 \
		if (!(c)) {                                                                                  \
			fprintf(stderr, "fuzz_audit: %s failed\n", #c);                                      \
			abort();                                                                             \
		}                                                                                            \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct berth_error err = {0};
	struct berth_audit_record r = {0};
	json_t *o, *v;

	if (size > 65536)
		return 0;
	o = berth_audit_parse_line((const char *)data, size, &r, &err);
	if (o == NULL) {
		CHECK(err.errnum == EBADMSG && err.msg[0] != '\0');
	} else {
		char hash[65];
		size_t n = 0;
		char *canon = berth_jcs_len(o, &n, &err);

		CHECK(canon != NULL && n == size && memcmp(canon, data, size) == 0);
		CHECK(berth_audit_record_hash(o, hash, &err) == 0);
		CHECK(strcmp(hash, r.hash) == 0);
		free(canon);
		json_decref(o);
	}
	{
		/* Differential: the tree-less check agrees with "JCS of the
		 * parsed value equals the text". */
		json_error_t jerr;
		bool chk_ok = berth_jcs_check((const char *)data, size, NULL, 0, NULL, &err) == 0;

		if (!chk_ok)
			CHECK(err.errnum == EBADMSG && err.msg[0] != '\0');
		v = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
		if (v == NULL) {
			CHECK(!chk_ok || strstr(jerr.text, "too big") != NULL);
		} else {
			size_t n0 = 0;
			char *c0 = berth_jcs_len(v, &n0, &err);
			bool slow_ok = c0 != NULL && n0 == size && memcmp(c0, data, size) == 0;

			/* 2222000000622270000: canonical for a double (ES6 prints
			 * it back the same), but jansson reads an integer that no
			 * double holds exactly, which berth_jcs refuses. */
			if (chk_ok && !slow_ok && c0 == NULL && strstr(err.msg, "beyond 2^53") != NULL)
				slow_ok = true;
			if (chk_ok != slow_ok) {
				fprintf(stderr,
					"fuzz_audit: berth_jcs_check says %d, JCS round trip says %d\n",
					chk_ok, slow_ok);
				abort();
			}
			free(c0);
			json_decref(v);
		}
	}
	v = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	if (v != NULL) {
		size_t n1 = 0, n2 = 0;
		char *c1 = berth_jcs_len(v, &n1, &err);

		if (c1 == NULL) {
			CHECK(err.msg[0] != '\0');
		} else {
			json_error_t jerr;
			json_t *back = json_loadb(c1, n1, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
			char *c2;

			if (back == NULL) {
				/* ES6 writes 1e20 as 100000000000000000000, which
				 * jansson reads as an integer beyond json_int_t. */
				CHECK(strstr(jerr.text, "too big") != NULL);
				free(c1);
				json_decref(v);
				return 0;
			}
			/* Equal, except where JSON numbers are doubles: reals, and
			 * integers beyond 2^53 (ES6 prints 22222200178692968 as
			 * 22222200178692970, the same double). */
			CHECK(json_equal(back, v) || json_is_real(v) || json_is_array(v) ||
			      json_is_object(v) ||
			      (json_is_integer(v) && (json_integer_value(v) > BERTH_JCS_MAX_SAFE_INT ||
						      json_integer_value(v) < -BERTH_JCS_MAX_SAFE_INT)));
			c2 = berth_jcs_len(back, &n2, &err);
			/* ES6 prints the double 33000000000000008 as
			 * 33000000000000010, which jansson reads as an integer
			 * that is no double: refused, with that reason. */
			CHECK((c2 == NULL && strstr(err.msg, "beyond 2^53") != NULL) ||
			      (c2 != NULL && n1 == n2 && memcmp(c1, c2, n1) == 0));
			free(c2);
			json_decref(back);
			free(c1);
		}
		json_decref(v);
	}
	return 0;
}
