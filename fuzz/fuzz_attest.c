/* SPDX-License-Identifier: MIT */
/*
 * fuzz_attest.c - libFuzzer target for `berth attest --verify`
 * (berth_attest_verify, src/supervisor/attest.c) on an arbitrary document,
 * read as the command reads it (jansson, duplicate members refused), with
 * the fixed key of fuzz_key.h as the trusted key.  Inputs are capped at
 * 64 KiB.  The seeds (fuzz/corpus-attest) are attestations `berth attest`
 * made of real runs, signed with that key (fuzz/make-seeds.sh), so the
 * mutations start from documents that verify.
 *
 * Invariants (a violation aborts):
 *  - verify answers VALID or INVALID (never the "could not run" -1 with
 *    libsodium present); VALID exactly when the problem list is empty; every
 *    problem is a non-empty string; the same document gets the same answer
 *    and the same problems twice;
 *  - a VALID document's signed bytes (the RFC 8785 form without
 *    "signature"), with any one byte changed at up to 16 places, are never
 *    accepted under the original signature, whenever the change still parses
 *    and is a different record (its canonical form differs): the answer
 *    names the signature; a signature value with one digit changed is
 *    refused too; and signing the document again with the key gives exactly
 *    the signature value it carries (Ed25519 is deterministic: RFC 8032
 *    5.1.6; the document may write hex digits in either case);
 *  - any object, signed afresh with the key, has no signature problem left,
 *    and its problems are the original's without the signature's (the
 *    content checks do not depend on the signature): so content problems
 *    are checked on signed documents too, which random bytes never are.
 */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "supervisor/attest.h"
#include "util/jcs.h"

#include "fuzz_key.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct berth_hostkey key;
static bool key_ready;

static void fail(const char *why, const json_t *problems) __attribute__((noreturn));
static void fail(const char *why, const json_t *problems)
{
	char *p = problems != NULL ? json_dumps(problems, 0) : NULL;

	fprintf(stderr, "fuzz_attest: %s (problems: %s)\n", why, p != NULL ? p : "-");
	abort();
}

#define CHECK(c, problems)                                                                                   \
	do {                                                                                                 \
		if (!(c))                                                                                    \
			fail(#c, problems);                                                                  \
	} while (0)

/* Verify @doc; checks the answer's shape and returns it (problems in *@out). */
static int verify(const json_t *doc, json_t **out)
{
	struct berth_error err = {0};
	json_t *problems = NULL, *v;
	size_t i;
	int r = berth_attest_verify(doc, key.pub, &problems, &err);

	CHECK(r == BERTH_ATTEST_VALID || r == BERTH_ATTEST_INVALID, problems);
	CHECK(json_is_array(problems), problems);
	CHECK((r == BERTH_ATTEST_VALID) == (json_array_size(problems) == 0), problems);
	json_array_foreach(problems, i, v)
		CHECK(json_is_string(v) && json_string_length(v) > 0, problems);
	*out = problems;
	return r;
}

/* The problem the signature check reports (always the first of the list). */
static bool sig_problem(const char *s)
{
	static const char *const prefixes[] = {
	    "no `signature` with",      "`signature.public_key` is not",  "signed with key ",
	    "`signature.value` is not", "cannot canonicalise the record", "the signature does not verify"};

	for (size_t i = 0; s != NULL && i < sizeof prefixes / sizeof prefixes[0]; i++)
		if (strncmp(s, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

static bool names_signature(const json_t *problems)
{
	size_t i;
	json_t *v;

	json_array_foreach(problems, i, v)
		if (sig_problem(json_string_value(v)))
			return true;
	return false;
}

/* JCS of @doc without "signature" (what is signed), or NULL. */
static char *signed_text(const json_t *doc, size_t *len)
{
	struct berth_error err = {0};
	json_t *copy = json_copy((json_t *)doc);
	char *s;

	json_object_del(copy, "signature");
	s = berth_jcs_len(copy, len, &err);
	json_decref(copy);
	return s;
}

/* The signed bytes with one byte changed at @pos never verify under the
 * original signature @sig, when they parse to a different record. */
static void tamper_at(const char *text, size_t len, size_t pos, unsigned char with, const json_t *sig)
{
	char *t = malloc(len);
	json_t *doc, *problems;
	size_t n2 = 0;
	char *canon;

	memcpy(t, text, len);
	t[pos] = (char)with;
	doc = json_loadb(t, len, JSON_REJECT_DUPLICATES, NULL);
	free(t);
	if (!json_is_object(doc) || json_object_get(doc, "signature") != NULL) {
		json_decref(doc);
		return;
	}
	canon = signed_text(doc, &n2);
	if (canon != NULL && !(n2 == len && memcmp(canon, text, len) == 0)) {
		json_object_set(doc, "signature", (json_t *)sig);
		CHECK(verify(doc, &problems) == BERTH_ATTEST_INVALID, problems);
		CHECK(names_signature(problems), problems);
		json_decref(problems);
	}
	free(canon);
	json_decref(doc);
}

static void check_valid(const json_t *doc, const uint8_t *data, size_t size)
{
	const json_t *sig = json_object_get(doc, "signature");
	size_t len = 0;
	char *text = signed_text(doc, &len);
	uint32_t h = 2166136261u; /* FNV-1a of the input: where to change bytes */
	json_t *copy, *problems;
	struct berth_error err = {0};

	CHECK(text != NULL && len > 0, NULL);
	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * 16777619u;
	for (int k = 0; k < 16; k++) {
		h = h * 1103515245u + 12345u;
		size_t pos = (h >> 8) % len;
		/* a neighbouring character, and one of a few structural ones */
		static const char subst[] = "0a\"\\{}[],:1 ";
		tamper_at(text, len, pos, (unsigned char)(text[pos] ^ (1u << (h % 7))), sig);
		tamper_at(text, len, pos, (unsigned char)subst[(h >> 3) % (sizeof subst - 1)], sig);
	}
	free(text);

	/* One digit of the signature value changed. */
	copy = json_deep_copy(doc);
	{
		json_t *s = json_object_get(copy, "signature");
		char v[129];

		snprintf(v, sizeof v, "%s", json_string_value(json_object_get(s, "value")));
		v[h % 128] = v[h % 128] == '0' ? '1' : '0';
		json_object_set_new(s, "value", json_string(v));
		CHECK(verify(copy, &problems) == BERTH_ATTEST_INVALID && names_signature(problems), problems);
		json_decref(problems);
	}
	json_decref(copy);

	/* Signing again gives the same signature. */
	copy = json_deep_copy(doc);
	CHECK(berth_attest_sign(copy, &key, &err) == 0, NULL);
	/* (the document may write its hex digits in either case) */
	CHECK(strcasecmp(json_string_value(json_object_get(json_object_get(copy, "signature"), "value")),
			 json_string_value(json_object_get(sig, "value"))) == 0,
	      NULL);
	json_decref(copy);
}

/* Signed afresh, only the content problems remain. */
static void check_resigned(const json_t *doc, const json_t *problems)
{
	struct berth_error err = {0};
	json_t *copy = json_deep_copy(doc), *p2 = NULL;
	size_t n = json_array_size(problems), i;

	if (berth_attest_sign(copy, &key, &err) < 0) {
		/* JCS refused the record: the verifier could not check it either */
		CHECK(err.msg[0] != '\0', problems);
		CHECK(names_signature(problems), problems);
		json_decref(copy);
		return;
	}
	verify(copy, &p2);
	CHECK(!names_signature(p2), p2);
	/* the original's problems, without the first when that was the signature's */
	CHECK(json_array_size(p2) == n || json_array_size(p2) + 1 == n, p2);
	for (i = 0; i < json_array_size(p2); i++)
		CHECK(json_equal(json_array_get(p2, i),
				 json_array_get(problems, i + (n - json_array_size(p2)))),
		      p2);
	if (json_array_size(p2) + 1 == n)
		CHECK(sig_problem(json_string_value(json_array_get(problems, 0))), problems);
	json_decref(p2);
	json_decref(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *doc, *p1 = NULL, *p2 = NULL;
	int r;

	if (size > 65536)
		return 0;
	if (!key_ready) {
		char home[4200];

		fuzz_key_setup(&key, home, sizeof home);
		key_ready = true;
	}
	doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	if (doc == NULL)
		return 0; /* `berth attest --verify`: exit 2 before any check */
	r = verify(doc, &p1);
	CHECK(verify(doc, &p2) == r && json_equal(p1, p2), p2);
	json_decref(p2);
	if (r == BERTH_ATTEST_VALID)
		check_valid(doc, data, size);
	else if (json_is_object(doc))
		check_resigned(doc, p1);
	json_decref(p1);
	json_decref(doc);
	return 0;
}
