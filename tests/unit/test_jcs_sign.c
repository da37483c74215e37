/* SPDX-License-Identifier: MIT */
/*
 * test_jcs_sign.c - RFC 8785 canonical JSON against the RFC's own examples
 * (sections 3.2.2, 3.2.3, appendix B), Ed25519 host keys and signatures
 * against RFC 8032's test vector 1 and against openssl(1), and SHA-256 on
 * both of its paths (libsodium up to 64 KiB, libcrypto beyond) against
 * FIPS 180-2's examples.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/jcs.h"
#include "util/sha256.h"
#include "util/sign.h"

static void jcs_is(const char *input, const char *want)
{
	struct berth_error err = {0};
	json_error_t jerr;
	json_t *v = json_loads(input, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
	char *got;

	assert_non_null(v);
	got = berth_jcs(v, &err);
	if (got == NULL)
		fail_msg("berth_jcs: %s", err.msg);
	if (strcmp(got, want) != 0)
		fail_msg("jcs of %s\n got  %s\n want %s", input, got, want);
	free(got);
	json_decref(v);
}

/* RFC 8785 section 3.2.2, the example of all value types. */
static void test_rfc8785_values(void **state)
{
	(void)state;
	jcs_is("{\"numbers\": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],"
	       " \"string\": \"\\u20ac$\\u000F\\u000aA'\\u0042\\u0022\\u005c\\\\\\\"\\/\","
	       " \"literals\": [null, true, false]}",
	       "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],"
	       "\"string\":\"\xe2\x82\xac$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}");
}

/* RFC 8785 section 3.2.3: member names sorted by UTF-16 code units. */
static void test_rfc8785_sorting(void **state)
{
	(void)state;
	jcs_is("{\"\\u20ac\": \"Euro Sign\", \"\\r\": \"Carriage Return\","
	       " \"\\ufb33\": \"Hebrew Letter Dalet With Dagesh\", \"1\": \"One\","
	       " \"\\ud83d\\ude00\": \"Emoji: Grinning Face\", \"\\u0080\": \"Control\","
	       " \"\\u00f6\": \"Latin Small Letter O With Diaeresis\"}",
	       "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\xc2\x80\":\"Control\","
	       "\"\xc3\xb6\":\"Latin Small Letter O With Diaeresis\",\"\xe2\x82\xac\":\"Euro Sign\","
	       "\"\xf0\x9f\x98\x80\":\"Emoji: Grinning Face\",\"\xef\xac\xb3\":\"Hebrew Letter Dalet With "
	       "Dagesh\"}");
	jcs_is("{\"b\":{\"z\":1,\"a\":[{\"y\":2,\"x\":3}]},\"a\":\"\",\"aa\":0,\"\":null}",
	       "{\"\":null,\"a\":\"\",\"aa\":0,\"b\":{\"a\":[{\"x\":3,\"y\":2}],\"z\":1}}");
}

/* RFC 8785 appendix B: IEEE 754 bit patterns and their ES6 form. */
static void test_rfc8785_numbers(void **state)
{
	static const struct {
		uint64_t bits;
		const char *want;
	} cases[] = {
	    {0x0000000000000000ULL, "0"},
	    {0x8000000000000000ULL, "0"},
	    {0x0000000000000001ULL, "5e-324"},
	    {0x8000000000000001ULL, "-5e-324"},
	    {0x7fefffffffffffffULL, "1.7976931348623157e+308"},
	    {0xffefffffffffffffULL, "-1.7976931348623157e+308"},
	    {0x4340000000000000ULL, "9007199254740992"},
	    {0xc340000000000000ULL, "-9007199254740992"},
	    {0x4430000000000000ULL, "295147905179352830000"},
	    {0x44b52d02c7e14af5ULL, "9.999999999999997e+22"},
	    {0x44b52d02c7e14af6ULL, "1e+23"},
	    {0x44b52d02c7e14af7ULL, "1.0000000000000001e+23"},
	    {0x444b1ae4d6e2ef4eULL, "999999999999999700000"},
	    {0x444b1ae4d6e2ef4fULL, "999999999999999900000"},
	    {0x444b1ae4d6e2ef50ULL, "1e+21"},
	    {0x3eb0c6f7a0b5ed8cULL, "9.999999999999997e-7"},
	    {0x3eb0c6f7a0b5ed8dULL, "0.000001"},
	    {0x41b3de4355555553ULL, "333333333.3333332"},
	    {0x41b3de4355555554ULL, "333333333.33333325"},
	    {0x41b3de4355555555ULL, "333333333.3333333"},
	    {0x41b3de4355555556ULL, "333333333.3333334"},
	    {0x41b3de4355555557ULL, "333333333.33333343"},
	    {0xbecbf647612f3696ULL, "-0.0000033333333333333333"},
	    {0x43143ff3c1cb0959ULL, "1424953923781206.2"},
	};
	struct berth_error err = {0};
	char buf[32];

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		double d;

		memcpy(&d, &cases[i].bits, sizeof d);
		assert_int_equal(berth_jcs_number(d, buf, &err), 0);
		if (strcmp(buf, cases[i].want) != 0)
			fail_msg("%016llx: got %s want %s", (unsigned long long)cases[i].bits, buf,
				 cases[i].want);
	}
	/* NaN and infinities have no JSON form. */
	assert_int_equal(berth_jcs_number(NAN, buf, &err), -1);
	assert_int_equal(err.errnum, EINVAL);
	assert_int_equal(berth_jcs_number(-INFINITY, buf, &err), -1);
}

static void test_jcs_refusals(void **state)
{
	struct berth_error err = {0};
	json_t *v;
	char *s;

	(void)state;
	/* Beyond 2^53 an integer does not survive as a double. */
	v = json_integer(9007199254740993LL);
	assert_null(berth_jcs(v, &err));
	assert_int_equal(err.errnum, EINVAL);
	assert_non_null(strstr(err.msg, "9007199254740993"));
	json_decref(v);
	/* ...but 10^18 and -2^60 are doubles exactly: ES6 digits. */
	v = json_integer(1000000000000000000LL);
	s = berth_jcs(v, &err);
	assert_string_equal(s, "1000000000000000000");
	free(s);
	json_decref(v);
	v = json_integer(-(1LL << 60));
	s = berth_jcs(v, &err);
	assert_string_equal(s, "-1152921504606847000"); /* as (-(2**60)).toString() in JavaScript */
	free(s);
	json_decref(v);
	v = json_integer(-9007199254740992LL);
	s = berth_jcs(v, &err);
	assert_string_equal(s, "-9007199254740992");
	free(s);
	json_decref(v);
	/* Invalid UTF-8 (unchecked constructor) and U+0000 in a member name. */
	v = json_stringn_nocheck("a\xff", 2);
	assert_null(berth_jcs(v, &err));
	assert_int_equal(err.errnum, EINVAL);
	json_decref(v);
	v = json_object();
	json_object_setn_nocheck(v, "a\0b", 3, json_true());
	assert_null(berth_jcs(v, &err));
	assert_int_equal(err.errnum, EINVAL);
	json_decref(v);
	/* U+0000 in a string value is \u0000; other controls lowercase hex. */
	v = json_stringn("a\0\x1f\x7f", 4);
	s = berth_jcs(v, &err);
	assert_string_equal(s, "\"a\\u0000\\u001f\x7f\"");
	free(s);
	json_decref(v);
	/* Nesting deeper than 1000 is refused, not a stack overflow. */
	v = json_array();
	for (int i = 0; i < 1100; i++) {
		json_t *outer = json_array();
		json_array_append_new(outer, v);
		v = outer;
	}
	assert_null(berth_jcs(v, &err));
	assert_int_equal(err.errnum, ELOOP);
	json_decref(v);
}

/* The tree-less check: canonical texts pass, near misses do not. */
static void test_jcs_check(void **state)
{
	static const char *const good[] = {
	    "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],"
	    "\"string\":\"\xe2\x82\xac$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}",
	    "{\"\\r\":\"Carriage "
	    "Return\",\"1\":\"One\",\"\xc2\x80\":\"Control\",\"\xc3\xb6\":\"o\",\"\xe2\x82\xac\":\"Euro\","
	    "\"\xf0\x9f\x98\x80\":\"Emoji\",\"\xef\xac\xb3\":\"Dalet\"}",
	    "0",
	    "-1",
	    "9007199254740992",
	    "1e+21",
	    "0.000001",
	    "9.999999999999997e-7",
	    "\"\\u0000\"",
	    "[]",
	    "{}",
	    "[{\"\":[]}]",
	    "\"\\\\u0000\"",
	};
	static const char *const bad[] = {
	    "1.0",
	    "1E3",
	    "-0",
	    "01",
	    "1e21",
	    "9007199254740993",
	    " 1",
	    "1 ",
	    "{\"b\":1,\"a\":2}",
	    "{\"a\":1,\"a\":2}",
	    "\"\\u0041\"",
	    "\"\\/\"",
	    "\"\\u001F\"",
	    "\"\\u000a\"",
	    "[1,]",
	    "{\"a\":1,}",
	    "\"a",
	    "\"\xff\"",
	    "\"\xed\xa0\x80\"",
	    "tru",
	    "{\"\\u0000\":1}",
	    "\"\x01\"",
	    "",
	    /* U+FB33 sorts after U+1F600 in UTF-16 (surrogates are lower) */
	    "{\"\xef\xac\xb3\":1,\"\xf0\x9f\x98\x80\":2}",
	};
	struct berth_error err = {0};

	(void)state;
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
		if (berth_jcs_check(good[i], strlen(good[i]), NULL, 0, NULL, &err) < 0)
			fail_msg("refused canonical `%s`: %s", good[i], err.msg);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (berth_jcs_check(bad[i], strlen(bad[i]), NULL, 0, NULL, &err) == 0)
			fail_msg("accepted non-canonical `%s`", bad[i]);
		assert_int_equal(err.errnum, EBADMSG);
	}
}

/* RFC 8032 section 7.1, test 1 (empty message). */
static void test_ed25519_rfc8032(void **state)
{
	struct berth_hostkey k = {0};
	struct berth_error err = {0};
	unsigned char sig[64], want_sig[64], want_pub[32];
	char tmp[] = "/tmp/berth-key-XXXXXX", path[256];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(tmp));
	/* Write the vector's seed as a PKCS #8 key and load it. */
	snprintf(path, sizeof path, "%s/" BERTH_HOSTKEY_PRIV_FILE, tmp);
	f = fopen(path, "w");
	/* 302e020100300506032b657004220420 || 9d61b19d...7f60 in base64 */
	fputs(
	    "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9g\n"
	    "-----END PRIVATE KEY-----\n",
	    f);
	fclose(f);
	chmod(path, 0600);
	assert_int_equal(berth_hostkey_load_dir(&k, tmp, false, &err), 0);
	assert_int_equal(
	    berth_unhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", want_pub, 32), 0);
	assert_memory_equal(k.pub, want_pub, 32);
	assert_int_equal(berth_sign(&k, "", 0, sig, &err), 0);
	assert_int_equal(berth_unhex("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
				     "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
				     want_sig, 64),
			 0);
	assert_memory_equal(sig, want_sig, 64);
	assert_int_equal(berth_verify(k.pub, "", 0, sig, &err), 0);
	sig[10] ^= 1;
	assert_int_equal(berth_verify(k.pub, "", 0, sig, &err), -1);
	assert_int_equal(err.errnum, EBADMSG);
	/* The public file was written alongside, and it loads back. */
	snprintf(path, sizeof path, "%s/" BERTH_HOSTKEY_PUB_FILE, tmp);
	assert_int_equal(berth_pubkey_load_pem(path, want_pub, &err), 0);
	assert_memory_equal(k.pub, want_pub, 32);
	berth_hostkey_clear(&k);
	for (size_t i = 0; i < sizeof k.seed; i++)
		assert_int_equal(k.seed[i], 0);
	for (size_t i = 0; i < sizeof k.sk; i++)
		assert_int_equal(k.sk[i], 0);
	assert_int_equal(berth_sign(&k, "x", 1, sig, &err), -1);
	snprintf(path, sizeof path, "rm -rf '%s'", tmp);
	assert_int_equal(system(path), 0);
}

/* One digest of @buf (@len bytes) three ways: at once, incrementally in
 * @step-byte pieces, and incrementally in one piece. */
static void sha256_all_ways(const unsigned char *buf, size_t len, size_t step, const char *want)
{
	struct berth_error err = {0};
	struct berth_sha256 *c;
	char hex[65];

	assert_int_equal(berth_sha256_hex(buf, len, hex, &err), 0);
	assert_string_equal(hex, want);
	c = berth_sha256_new(&err);
	assert_non_null(c);
	for (size_t o = 0; o < len; o += step)
		assert_int_equal(berth_sha256_update(c, buf + o, len - o < step ? len - o : step), 0);
	assert_int_equal(berth_sha256_final(c, hex, &err), 0);
	assert_string_equal(hex, want);
	c = berth_sha256_new(&err);
	assert_non_null(c);
	assert_int_equal(berth_sha256_update(c, buf, len), 0);
	assert_int_equal(berth_sha256_final(c, hex, &err), 0);
	assert_string_equal(hex, want);
}

/* FIPS 180-2 appendix B.1 and B.3; 1,000,000 bytes cross from libsodium to
 * libcrypto mid-stream (at 64 KiB), and after berth_sha256_prefer_bulk()
 * every size goes through libcrypto with the same results. */
static void test_sha256_paths(void **state)
{
	static unsigned char big[1000000];
	char small_hex[65], bulk_hex[65];
	struct berth_error err = {0};

	(void)state;
	memset(big, 'a', sizeof big);
	for (int pass = 0; pass < 2; pass++) {
		sha256_all_ways((const unsigned char *)"abc", 3, 1,
				"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
		sha256_all_ways((const unsigned char *)"", 0, 1,
				"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
		sha256_all_ways(big, sizeof big, 1000,
				"cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
		sha256_all_ways(big, sizeof big, 65535,
				"cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
		/* Exactly the threshold (65536 bytes), and one byte past it
		 * (digests from Python's hashlib). */
		assert_int_equal(
		    berth_sha256_hex(big, BERTH_SHA256_SMALL_MAX, pass ? bulk_hex : small_hex, &err), 0);
		sha256_all_ways(big, BERTH_SHA256_SMALL_MAX, 4096,
				"bf718b6f653bebc184e1479f1935b8da974d701b893afcf49e701f3e2f9f9c5a");
		sha256_all_ways(big, BERTH_SHA256_SMALL_MAX + 1, BERTH_SHA256_SMALL_MAX,
				"008ffc88d3c96a9f307524eb361e47c5222a887fc45fa0c1fb8d429c5c23b430");
		if (pass == 0)
			berth_sha256_prefer_bulk();
	}
	assert_string_equal(small_hex, bulk_hex);
}

/* A generated key: modes, reload, mode checks, and openssl(1) verifies. */
static void test_hostkey_generate(void **state)
{
	struct berth_hostkey k = {0}, k2 = {0};
	struct berth_error err = {0};
	unsigned char sig[64];
	char tmp[] = "/tmp/berth-key-XXXXXX", dir[256], path[512], cmd[2048];
	struct stat st;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(tmp));
	snprintf(dir, sizeof dir, "%s/a/b/keys", tmp);
	assert_int_equal(berth_hostkey_load_dir(&k, dir, false, &err), -1);
	assert_int_equal(err.errnum, ENOENT);
	assert_int_equal(berth_hostkey_load_dir(&k, dir, true, &err), 0);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	snprintf(path, sizeof path, "%s/" BERTH_HOSTKEY_PRIV_FILE, dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(berth_hostkey_load_dir(&k2, dir, true, &err), 0);
	assert_memory_equal(k.pub, k2.pub, 32);
	assert_memory_equal(k.seed, k2.seed, 32);
	/* Sign a message and let openssl check it with the public PEM. */
	assert_int_equal(berth_sign(&k, "hello", 5, sig, &err), 0);
	snprintf(path, sizeof path, "%s/msg", tmp);
	f = fopen(path, "w");
	fputs("hello", f);
	fclose(f);
	snprintf(path, sizeof path, "%s/sig", tmp);
	f = fopen(path, "w");
	fwrite(sig, 1, 64, f);
	fclose(f);
	snprintf(cmd, sizeof cmd,
		 "openssl pkeyutl -verify -pubin -inkey %s/" BERTH_HOSTKEY_PUB_FILE
		 " -rawin -in %s/msg -sigfile %s/sig"
		 " >/dev/null 2>&1",
		 dir, tmp, tmp);
	assert_int_equal(system(cmd), 0);
	/* ...and openssl signs the same bytes with our private PEM. */
	snprintf(cmd, sizeof cmd,
		 "openssl pkeyutl -sign -inkey %s/" BERTH_HOSTKEY_PRIV_FILE
		 " -rawin -in %s/msg | cmp -s - %s/sig",
		 dir, tmp, tmp);
	assert_int_equal(system(cmd), 0);
	/* A group-readable private key is refused with EPERM. */
	snprintf(path, sizeof path, "%s/" BERTH_HOSTKEY_PRIV_FILE, dir);
	chmod(path, 0640);
	assert_int_equal(berth_hostkey_load_dir(&k2, dir, true, &err), -1);
	assert_int_equal(err.errnum, EPERM);
	assert_non_null(strstr(err.msg, "0640"));
	chmod(path, 0600);
	/* A public file naming another key is refused. */
	snprintf(path, sizeof path, "%s/" BERTH_HOSTKEY_PUB_FILE, dir);
	f = fopen(path, "w");
	fputs("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n"
	      "-----END PUBLIC KEY-----\n",
	      f);
	fclose(f);
	assert_int_equal(berth_hostkey_load_dir(&k2, dir, false, &err), -1);
	assert_int_equal(err.errnum, EINVAL);
	assert_non_null(strstr(err.msg, "does not match"));
	berth_hostkey_clear(&k);
	berth_hostkey_clear(&k2);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rfc8785_values),
	    cmocka_unit_test(test_rfc8785_sorting),
	    cmocka_unit_test(test_rfc8785_numbers),
	    cmocka_unit_test(test_jcs_refusals),
	    cmocka_unit_test(test_jcs_check),
	    cmocka_unit_test(test_ed25519_rfc8032),
	    cmocka_unit_test(test_hostkey_generate),
	    cmocka_unit_test(test_sha256_paths), /* last: it turns on berth_sha256_prefer_bulk() */
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
