/* SPDX-License-Identifier: MIT */
/*
 * test_attest.c - the --env-file parser, the verdict rules of
 * docs/attest.md, and attestation signatures (valid, edited, wrong key).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/envfile.h"
#include "policy/policy.h"
#include "sandbox/limits.h"
#include "sandbox/measure.h"
#include "supervisor/attest.h"
#include "util/sign.h"

/* ---------------------------------------------------------- env-file */

struct kv {
	char text[1024];
	int n;
};

static int collect(void *ctx, const char *name, const char *value, struct berth_error *err)
{
	struct kv *k = ctx;

	(void)err;
	k->n++;
	snprintf(k->text + strlen(k->text), sizeof k->text - strlen(k->text), "%s=[%s];", name, value);
	return 0;
}

static int parse(const char *s, struct kv *k, struct berth_error *err)
{
	memset(k, 0, sizeof *k);
	memset(err, 0, sizeof *err);
	return berth_envfile_parse(s, strlen(s), "f.env", collect, k, err);
}

static void test_envfile_ok(void **state)
{
	struct kv k;
	struct berth_error err;

	(void)state;
	assert_int_equal(parse("# comment\n\n  \t\nA=1\r\nexport B=two words\n  C='quoted # not a comment'\n"
			       "D=\"x\"\nE=\nF==x=\nG=\"unbalanced\n",
			       &k, &err),
			 0);
	assert_string_equal(
	    k.text, "A=[1];B=[two words];C=[quoted # not a comment];D=[x];E=[];F=[=x=];G=[\"unbalanced];");
	assert_int_equal(parse("", &k, &err), 0);
	assert_int_equal(k.n, 0);
	/* no final newline */
	assert_int_equal(parse("LAST=v", &k, &err), 0);
	assert_string_equal(k.text, "LAST=[v];");
}

static void test_envfile_errors(void **state)
{
	struct kv k;
	struct berth_error err;
	char nul[] = "A=1\nB=s3cr3t\0x\n";

	(void)state;
	assert_int_equal(parse("A=1\nno equals sign s3cr3t\n", &k, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	assert_string_equal(err.msg, "f.env:2: expected NAME=VALUE");
	assert_int_equal(parse("A=1\n\n1BAD=s3cr3t\n", &k, &err), -1);
	assert_string_equal(err.msg, "f.env:3: invalid variable name `1BAD`");
	assert_int_equal(parse("=s3cr3t\n", &k, &err), -1);
	assert_string_equal(err.msg, "f.env:1: invalid variable name ``");
	assert_int_equal(parse("A-B=s3cr3t\n", &k, &err), -1);
	assert_null(strstr(err.msg, "s3cr3t"));
	memset(&err, 0, sizeof err);
	assert_int_equal(berth_envfile_parse(nul, sizeof nul - 1, "f.env", collect, &k, &err), -1);
	assert_string_equal(err.msg, "f.env:2: a NUL byte");
	assert_null(strstr(err.msg, "s3cr3t"));
	/* Nothing is passed on before an error in a NUL file. */
	assert_int_equal(k.n, 0);
	{
		size_t n = BERTH_ENVFILE_LINE_MAX + 10;
		char *big = malloc(n + 1);
		memcpy(big, "A=", 2);
		memset(big + 2, 'x', n - 2);
		big[n] = '\0';
		assert_int_equal(parse(big, &k, &err), -1);
		assert_non_null(strstr(err.msg, "f.env:1: line longer than"));
		free(big);
	}
}

/* ---------------------------------------------------------- verdict */

static void enforced_measure(struct berth_measure *m)
{
	memset(m, 0, sizeof *m);
	m->valid = true;
	for (int i = 0; i < BERTH_NS_COUNT; i++) {
		m->ns_dev[i] = m->parent_ns_dev[i] = 4;
		m->ns_ino[i] = 100 + (uint64_t)i;
		m->parent_ns_ino[i] = 200 + (uint64_t)i;
	}
	m->landlock_abi = 7;
	m->landlock_ruleset_abi = 7;
	m->landlock_probe = BERTH_LL_IN_FORCE;
	m->landlock_probe_errno = 13;
	m->seccomp_mode = 2;
	m->seccomp_filters = 1;
	snprintf(m->seccomp_digest, sizeof m->seccomp_digest, "%064d", 0);
	m->caps_read = true;
	m->no_new_privs = 1;
	m->rlim_nofile = BERTH_DEFAULT_NOFILE;
	m->rlim_as = m->rlim_nproc = UINT64_MAX;
	m->limits_mode = BERTH_LIMITS_CGROUP2;
	m->cg_memory_read = m->cg_pids_read = m->cg_cpu_read = true;
	m->cg_memory = BERTH_DEFAULT_MEMORY;
	m->cg_pids = BERTH_DEFAULT_PIDS;
	m->cg_cpu_quota_us = 400000;
	m->cg_cpu_period_us = 100000;
	m->cpus_affinity = 2;
	m->tmp_bytes = BERTH_DEFAULT_TMP_SIZE;
	m->page_size = 4096;
	m->workspace_idmapped = -1;
}

static enum berth_verdict verdict_of(const struct berth_measure *m, const struct berth_policy *p, char *why,
				     size_t n)
{
	json_t *reasons = NULL;
	enum berth_verdict v = berth_measure_verdict(m, p, &reasons);
	char *s = json_dumps(reasons, JSON_COMPACT);

	snprintf(why, n, "%s", s != NULL ? s : "");
	free(s);
	json_decref(reasons);
	return v;
}

static void test_verdict(void **state)
{
	struct berth_policy p;
	struct berth_measure m;
	char why[1024];

	(void)state;
	berth_policy_init(&p);
	enforced_measure(&m);
	assert_int_equal(verdict_of(&m, &p, why, sizeof why), BERTH_VERDICT_ENFORCED);
	assert_string_equal(why, "[]");

	/* Each shortfall alone: PARTIAL, never ENFORCED. */
	enforced_measure(&m);
	m.landlock_probe = BERTH_LL_NOT_IN_FORCE;
	assert_int_equal(verdict_of(&m, &p, why, sizeof why), BERTH_VERDICT_PARTIAL);
	assert_non_null(strstr(why, "landlock: none"));
	enforced_measure(&m);
	m.landlock_ruleset_abi = 4; /* in force, but older than the rights berth asks for */
	assert_int_equal(verdict_of(&m, &p, why, sizeof why), BERTH_VERDICT_PARTIAL);
	assert_non_null(strstr(why, "landlock: partial"));
	enforced_measure(&m);
	m.seccomp_mode = 0;
	m.seccomp_filters = 0;
	assert_int_equal(verdict_of(&m, &p, why, sizeof why), BERTH_VERDICT_PARTIAL);
	enforced_measure(&m);
	m.seccomp_digest[0] = '\0'; /* a filter in force, but not the one berth loaded */
	assert_int_equal(verdict_of(&m, &p, why, sizeof why), BERTH_VERDICT_PARTIAL);
	assert_non_null(strstr(why, "seccomp: berth loaded no filter (the 1 in force are not berth's)"));
	enforced_measure(&m);
	m.ns_ino[BERTH_NS_NET] = m.parent_ns_ino[BERTH_NS_NET];
	assert_int_equal(verdict_of(&m, &p, why, sizeof why), BERTH_VERDICT_PARTIAL);
	assert_non_null(strstr(why, "net namespace: shared"));
	/* ... unless the policy shares the network on purpose. */
	p.network = BERTH_NET_HOST;
	assert_int_equal(verdict_of(&m, &p, why, sizeof why), BERTH_VERDICT_ENFORCED);
	p.network = BERTH_NET_NONE;
	enforced_measure(&m);
	m.no_new_privs = 0;
	assert_int_equal(verdict_of(&m, &p, why, sizeof why), BERTH_VERDICT_PARTIAL);
	enforced_measure(&m);
	m.cg_memory = UINT64_MAX;
	assert_int_equal(verdict_of(&m, &p, why, sizeof why), BERTH_VERDICT_PARTIAL);
	enforced_measure(&m);
	m.limits_mode = BERTH_LIMITS_RLIMITS;
	m.cg_memory_read = m.cg_pids_read = m.cg_cpu_read = false;
	m.rlim_as = BERTH_DEFAULT_MEMORY;
	m.rlim_nproc = BERTH_DEFAULT_PIDS;
	assert_int_equal(verdict_of(&m, &p, why, sizeof why), BERTH_VERDICT_PARTIAL);
	assert_non_null(strstr(why, "RLIMIT_AS"));
	/* today's rlimit mode sets no memory limit at all: named as not enforced */
	m.rlim_as = UINT64_MAX;
	assert_int_equal(verdict_of(&m, &p, why, sizeof why), BERTH_VERDICT_PARTIAL);
	assert_non_null(strstr(why, "memory: not enforced"));
	enforced_measure(&m);
	m.idmap_asked = true;
	m.workspace_idmapped = 0;
	assert_int_equal(verdict_of(&m, &p, why, sizeof why), BERTH_VERDICT_PARTIAL);
	enforced_measure(&m);
	m.cap_bnd = 1;
	assert_int_equal(verdict_of(&m, &p, why, sizeof why), BERTH_VERDICT_PARTIAL);

	/* No confinement of files, privilege, or no measurement: NOT_ENFORCED. */
	enforced_measure(&m);
	for (int i = 0; i < BERTH_NS_COUNT; i++)
		m.ns_ino[i] = m.parent_ns_ino[i];
	m.landlock_probe = BERTH_LL_NOT_IN_FORCE;
	assert_int_equal(verdict_of(&m, &p, why, sizeof why), BERTH_VERDICT_NOT_ENFORCED);
	enforced_measure(&m);
	m.cap_eff = 0x200000;
	assert_int_equal(verdict_of(&m, &p, why, sizeof why), BERTH_VERDICT_NOT_ENFORCED);
	enforced_measure(&m);
	m.valid = false;
	assert_int_equal(verdict_of(&m, &p, why, sizeof why), BERTH_VERDICT_NOT_ENFORCED);
	enforced_measure(&m);
	m.landlock_probe = BERTH_LL_UNKNOWN;
	assert_int_equal(verdict_of(&m, &p, why, sizeof why), BERTH_VERDICT_PARTIAL);
	berth_policy_free(&p);
}

/* ---------------------------------------------------------- signatures */

static json_t *record(void)
{
	struct berth_policy p;
	struct berth_measure m;
	struct berth_error err = {0};
	json_t *enf, *rec;

	berth_policy_init(&p);
	enforced_measure(&m);
	enf = berth_measure_to_json(&m, &p, &err);
	assert_non_null(enf);
	rec = json_pack(
	    "{s:s, s:s, s:s, s:s, s:{s:s, s:s}, s:[s], s:[], s:o, s:s, s:n, s:i, s:{s:i, s:i, s:i, s:s}}",
	    "type", BERTH_ATTEST_TYPE, "run_id", "0123456789abcdef", "created", "2026-11-29T09:00:00.000Z",
	    "berth_version", "0.1.0", "host", "kernel", "6.1.0", "arch", "x86_64", "policy_digests",
	    "sha256:00", "app_digests", "enforced", enf, "verdict", "ENFORCED", "evidence", "exit_status", 0,
	    "audit", "first_seq", 3, "last_seq", 5, "head_seq", 9, "head_hash",
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	assert_non_null(rec);
	berth_policy_free(&p);
	return rec;
}

static int verify(const json_t *doc, const unsigned char pub[32], char *why, size_t n)
{
	struct berth_error err = {0};
	json_t *problems = NULL;
	int r = berth_attest_verify(doc, pub, &problems, &err);
	char *s = json_dumps(problems, JSON_COMPACT);

	snprintf(why, n, "%s", s != NULL ? s : err.msg);
	free(s);
	json_decref(problems);
	return r;
}

/* Each limit against a fake read-back: the kernel's documented rounding is
 * no mismatch, anything else is PARTIAL naming the limit, the value asked
 * and the value read. */
static void expect_partial(const struct berth_measure *m, const struct berth_policy *p, const char *reason)
{
	char why[1024], want[600];

	assert_int_equal(verdict_of(m, p, why, sizeof why), BERTH_VERDICT_PARTIAL);
	snprintf(want, sizeof want, "[\"%s\"]", reason);
	assert_string_equal(why, want);
}

static void test_verdict_limits(void **state)
{
	struct berth_policy p;
	struct berth_measure m;
	char why[1024];

	(void)state;
	berth_policy_init(&p);
	/* memory.max keeps whole pages, rounded down */
	p.memory = (16ULL << 20) + 1;
	enforced_measure(&m);
	m.cg_memory = 16ULL << 20;
	assert_int_equal(verdict_of(&m, &p, why, sizeof why), BERTH_VERDICT_ENFORCED);
	m.cg_memory = (16ULL << 20) + 4096;
	expect_partial(&m, &p,
		       "memory limit: asked 16777217 bytes, read back 16781312 (memory.max or "
		       "memory.limit_in_bytes, rounded down to pages)");
	m.cg_memory = (16ULL << 20) + 1; /* not what a kernel with 4 KiB pages keeps */
	m.page_size = 65536;             /* ... nor one with 64 KiB pages */
	expect_partial(&m, &p,
		       "memory limit: asked 16777217 bytes, read back 16777217 (memory.max or "
		       "memory.limit_in_bytes, rounded down to pages)");
	m.page_size = 0; /* a record without a page size: exact */
	m.cg_memory = 16ULL << 20;
	expect_partial(&m, &p,
		       "memory limit: asked 16777217 bytes, read back 16777216 (memory.max or "
		       "memory.limit_in_bytes, rounded down to pages)");
	/* "max" read back: no limit, named */
	enforced_measure(&m);
	p.memory = BERTH_DEFAULT_MEMORY;
	m.cg_memory = UINT64_MAX;
	expect_partial(&m, &p,
		       "memory limit: asked 8589934592 bytes, read back none (no limit, or unreadable) "
		       "(memory.max or memory.limit_in_bytes, rounded down to pages)");
	/* the largest valid limits, read back */
	p.memory = p.tmp_size = 1ULL << 50;
	p.pids = 4194304;
	p.millicpus = 1024000;
	p.nofile = 1048576;
	enforced_measure(&m);
	m.cg_memory = m.tmp_bytes = 1ULL << 50;
	m.cg_pids = 4194304;
	m.cg_cpu_quota_us = 102400000;
	m.rlim_nofile = 1048576;
	assert_int_equal(verdict_of(&m, &p, why, sizeof why), BERTH_VERDICT_ENFORCED);
	assert_string_equal(why, "[]");
	berth_policy_init(&p);

	/* the /tmp tmpfs keeps whole pages, rounded up */
	p.tmp_size = (1ULL << 20) + 1;
	enforced_measure(&m);
	m.tmp_bytes = (1ULL << 20) + 4096;
	assert_int_equal(verdict_of(&m, &p, why, sizeof why), BERTH_VERDICT_ENFORCED);
	m.tmp_bytes = 1ULL << 20;
	expect_partial(
	    &m, &p,
	    "tmp limit: asked 1048577 bytes, read back 1048576 (statfs of the /tmp tmpfs, rounded up "
	    "to pages)");
	m.tmp_bytes = 0;
	expect_partial(&m, &p,
		       "tmp limit: asked 1048577 bytes, read back none (no limit, or unreadable) (statfs of "
		       "the /tmp tmpfs, rounded up to pages)");
	berth_policy_init(&p);

	/* pids.max and rlimits: exact */
	enforced_measure(&m);
	m.cg_pids = BERTH_DEFAULT_PIDS + 1;
	expect_partial(&m, &p, "pids limit: asked 512, read back 513 (pids.max)");
	m.cg_pids = UINT64_MAX;
	expect_partial(&m, &p, "pids limit: asked 512, read back none (no limit, or unreadable) (pids.max)");
	enforced_measure(&m);
	m.limits_mode = BERTH_LIMITS_RLIMITS;
	m.cg_memory_read = m.cg_pids_read = m.cg_cpu_read = false;
	m.rlim_nproc = BERTH_DEFAULT_PIDS - 1;
	assert_int_equal(verdict_of(&m, &p, why, sizeof why), BERTH_VERDICT_PARTIAL);
	assert_non_null(strstr(why, "\"pids limit: asked 512, read back 511 (RLIMIT_NPROC)\""));
	enforced_measure(&m);
	m.rlim_nofile = BERTH_DEFAULT_NOFILE - 1;
	expect_partial(&m, &p, "nofile limit: asked 8192, read back 8191 (RLIMIT_NOFILE)");
	m.rlim_nofile = UINT64_MAX;
	expect_partial(&m, &p,
		       "nofile limit: asked 8192, read back none (no limit, or unreadable) (RLIMIT_NOFILE)");
	/* cpu.max: the quotient of quota and period, within one millicpu */
	enforced_measure(&m);
	m.cg_cpu_quota_us = 400099; /* 4000.99 millicpus: the integer division's */
	assert_int_equal(verdict_of(&m, &p, why, sizeof why), BERTH_VERDICT_ENFORCED);
	m.cg_cpu_quota_us = 401000;
	expect_partial(&m, &p,
		       "cpu limit: asked 4000 millicpus, read back 401000 us per 100000 us (cpu.max or "
		       "cpu.cfs_quota_us)");
	m.cg_cpu_quota_us = UINT64_MAX;
	expect_partial(
	    &m, &p,
	    "cpu limit: asked 4000 millicpus, read back none (no limit, or unreadable) (cpu.max or "
	    "cpu.cfs_quota_us)");
	berth_policy_free(&p);
}

/* A record of a berth that stored --memory 2^64 - 1 as -1 and wrote it to
 * memory.max as "max": the read-back (null) once compared equal to the
 * asked -1 and the verdict was ENFORCED. */
static void test_verdict_negative_asked(void **state)
{
	struct berth_policy p;
	struct berth_measure m;
	struct berth_error err;
	json_t *o, *reasons = NULL;
	char *s;

	(void)state;
	berth_policy_init(&p);
	enforced_measure(&m);
	m.cg_memory = UINT64_MAX;
	o = berth_measure_to_json(&m, &p, &err);
	assert_non_null(o);
	json_object_set_new(json_object_get(o, "asked"), "memory", json_integer(-1));
	assert_int_equal(berth_measure_verdict_json(o, &reasons, &err), BERTH_VERDICT_PARTIAL);
	s = json_dumps(reasons, JSON_COMPACT);
	assert_string_equal(s, "[\"memory limit: asked -1, which is no limit the kernel can hold (a value "
			       "past 2^63 - 1)\"]");
	free(s);
	json_decref(reasons);
	json_decref(o);
	berth_policy_free(&p);
}

static void test_sign_verify(void **state)
{
	char dir[] = "/tmp/berth-test-attest-XXXXXX", dir2[] = "/tmp/berth-test-attest2-XXXXXX", why[2048];
	struct berth_hostkey k = {0}, other = {0};
	struct berth_error err = {0};
	json_t *rec, *bad;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_non_null(mkdtemp(dir2));
	if (berth_hostkey_load_dir(&k, dir, true, &err) < 0 ||
	    berth_hostkey_load_dir(&other, dir2, true, &err) < 0)
		fail_msg("host key: %s", err.msg);
	rec = record();
	assert_int_equal(berth_attest_sign(rec, &k, &err), 0);
	assert_int_equal(verify(rec, k.pub, why, sizeof why), BERTH_ATTEST_VALID);
	assert_string_equal(why, "[]");

	/* an edited field */
	bad = json_deep_copy(rec);
	json_object_set_new(bad, "exit_status", json_integer(1));
	assert_int_equal(verify(bad, k.pub, why, sizeof why), BERTH_ATTEST_INVALID);
	assert_non_null(strstr(why, "the signature does not verify"));
	json_decref(bad);
	/* an edited measurement: the signature and the verdict both fail */
	bad = json_deep_copy(rec);
	json_object_set_new(json_object_get(json_object_get(bad, "enforced"), "seccomp"), "mode",
			    json_integer(0));
	assert_int_equal(verify(bad, k.pub, why, sizeof why), BERTH_ATTEST_INVALID);
	assert_non_null(strstr(why, "the verdict stated is not the one the measurement gives (PARTIAL)"));
	json_decref(bad);
	/* re-signed by another key, verified against the trusted one */
	bad = json_deep_copy(rec);
	assert_int_equal(berth_attest_sign(bad, &other, &err), 0);
	assert_int_equal(verify(bad, k.pub, why, sizeof why), BERTH_ATTEST_INVALID);
	assert_non_null(strstr(why, "not the trusted key"));
	/* ... and a record that is self-consistent but lies about the verdict,
	 * re-signed by its author: content check still fails */
	json_object_set_new(bad, "verdict", json_string("PARTIAL"));
	assert_int_equal(berth_attest_sign(bad, &other, &err), 0);
	assert_int_equal(verify(bad, other.pub, why, sizeof why), BERTH_ATTEST_INVALID);
	assert_non_null(strstr(why, "verdict"));
	json_decref(bad);
	/* a signature bit flipped */
	bad = json_deep_copy(rec);
	{
		char v[129];
		snprintf(v, sizeof v, "%s",
			 json_string_value(json_object_get(json_object_get(bad, "signature"), "value")));
		v[0] = v[0] == '0' ? '1' : '0';
		json_object_set_new(json_object_get(bad, "signature"), "value", json_string(v));
	}
	assert_int_equal(verify(bad, k.pub, why, sizeof why), BERTH_ATTEST_INVALID);
	json_decref(bad);
	/* an inconsistent audit range */
	bad = json_deep_copy(rec);
	json_object_set_new(json_object_get(bad, "audit"), "last_seq", json_integer(10));
	assert_int_equal(berth_attest_sign(bad, &k, &err), 0);
	assert_int_equal(verify(bad, k.pub, why, sizeof why), BERTH_ATTEST_INVALID);
	assert_non_null(strstr(why, "audit range is inconsistent"));
	json_decref(bad);
	/* enforced.runtime: the namespace runtime's record names it; a
	 * microVM's must name its guest well-formed, whoever signed it */
	assert_string_equal(json_string_value(json_object_get(
				json_object_get(json_object_get(rec, "enforced"), "runtime"), "name")),
			    "namespace");
	{
		static const char h64[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
		struct {
			json_t *rt;
			const char *want; /* NULL: valid */
		} cases[] = {
		    {json_pack("{s:s, s:s, s:s, s:s, s:s}", "name", "vm", "kernel_sha256", h64,
			       "initramfs_sha256", h64, "accelerator", "tcg", "guest_kernel", "6.12"),
		     NULL},
		    {json_pack("{s:s}", "name", "gvisor"),
		     "`enforced.runtime.name` is not `namespace` or `vm`"},
		    {json_pack("{s:s, s:s, s:s, s:s}", "name", "vm", "kernel_sha256", "abc",
			       "initramfs_sha256", h64, "accelerator", "kvm"),
		     "kernel_sha256 and initramfs_sha256 must be 64 lowercase hex digits"},
		    {json_pack("{s:s, s:s, s:s, s:s}", "name", "vm", "kernel_sha256", h64, "initramfs_sha256",
			       h64, "accelerator", "hvf"),
		     "`enforced.runtime.accelerator` is not `tcg` or `kvm`"},
		};
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
			bad = json_deep_copy(rec);
			json_object_set_new(json_object_get(bad, "enforced"), "runtime", cases[i].rt);
			assert_int_equal(berth_attest_sign(bad, &k, &err), 0);
			if (cases[i].want == NULL) {
				assert_int_equal(verify(bad, k.pub, why, sizeof why), BERTH_ATTEST_VALID);
			} else {
				assert_int_equal(verify(bad, k.pub, why, sizeof why), BERTH_ATTEST_INVALID);
				assert_non_null(strstr(why, cases[i].want));
			}
			json_decref(bad);
		}
		/* a record of a berth before the field: still valid */
		bad = json_deep_copy(rec);
		json_object_del(json_object_get(bad, "enforced"), "runtime");
		assert_int_equal(berth_attest_sign(bad, &k, &err), 0);
		assert_int_equal(verify(bad, k.pub, why, sizeof why), BERTH_ATTEST_VALID);
		json_decref(bad);
	}
	/* no signature at all */
	bad = json_deep_copy(rec);
	json_object_del(bad, "signature");
	assert_int_equal(verify(bad, k.pub, why, sizeof why), BERTH_ATTEST_INVALID);
	json_decref(bad);
	json_decref(rec);
	berth_hostkey_clear(&k);
	berth_hostkey_clear(&other);
	{
		char cmd[200];
		snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", dir, dir2);
		assert_int_equal(system(cmd), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_envfile_ok),
	    cmocka_unit_test(test_envfile_errors),
	    cmocka_unit_test(test_verdict),
	    cmocka_unit_test(test_verdict_limits),
	    cmocka_unit_test(test_verdict_negative_asked),
	    cmocka_unit_test(test_sign_verify),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
