/* SPDX-License-Identifier: MIT */
/*
 * test_audit.c - unit tests of src/audit/audit.c: record format and hash,
 * redaction and secrets, the line parser's refusals, group commit from
 * threads, rotation, head checks and fail-closed appends (RLIMIT_FSIZE).
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
#include <fcntl.h>
#include <glob.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/audit.h"
#include "audit/queue.h"
#include "supervisor/run.h"
#include "util/jcs.h"
#include "util/sha256.h"

static char base[64];

static int setup(void **state)
{
	char cfg[128];

	(void)state;
	strcpy(base, "/tmp/berth-test-audit-XXXXXX");
	if (mkdtemp(base) == NULL)
		return -1;
	snprintf(cfg, sizeof cfg, "%s/cfg", base);
	setenv("XDG_CONFIG_HOME", cfg, 1);
	unsetenv("BERTH_AUDIT_DIR");
	unsetenv("BERTH_AUDIT_ROTATE_BYTES");
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
	return system(cmd) == 0 ? 0 : -1;
}

static void dir_for(const char *name, char *out, size_t size)
{
	snprintf(out, size, "%s/%s", base, name);
}

/* Read the whole active file (there is one in these tests). */
static char *slurp_log(const char *dir)
{
	char path[512], *buf;
	FILE *f;
	long n;

	snprintf(path, sizeof path, "%s/audit-0000000000000001.jsonl", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

static void test_record_format_and_hash(void **state)
{
	struct berth_error err = {0};
	char dir[256], hash[65], recomputed[65];
	struct berth_audit *a;
	uint64_t seq = 0;
	json_t *p = json_pack("{s:s, s:i, s:b}", "zeta", "last", "alpha", 1, "flag", 1), *rec;
	char *text, *nl;
	struct berth_audit_record r = {0};

	(void)state;
	dir_for("format", dir, sizeof dir);
	a = berth_audit_open(dir, &err);
	assert_non_null(a);
	assert_int_equal(berth_audit_append(a, "run1", "run.start", "uid:0", p, &seq, hash, &err), 0);
	assert_int_equal(seq, 1);
	assert_int_equal(berth_audit_append(a, "run1", "run.stop", "uid:0", NULL, &seq, NULL, &err), 0);
	assert_int_equal(seq, 2);
	berth_audit_close(a);
	text = slurp_log(dir);
	nl = strchr(text, '\n');
	assert_non_null(nl);
	/* The line is the JCS of the record; members sorted; prev of seq 1 is zeros. */
	rec = berth_audit_parse_line(text, (size_t)(nl - text), &r, &err);
	if (rec == NULL)
		fail_msg("%s", err.msg);
	assert_int_equal(strncmp(text, "{\"actor\":\"uid:0\",\"hash\":\"", 25), 0);
	assert_non_null(strstr(
	    text, "\"payload\":{\"alpha\":1,\"flag\":true,\"zeta\":\"last\"},\"prev\":\"0000000000000000"));
	assert_string_equal(r.hash, hash);
	assert_string_equal(r.kind, "run.start");
	assert_int_equal(strlen(r.ts), 24);
	/* hash = SHA-256(JCS(record without hash)), recomputed independently. */
	assert_int_equal(berth_audit_record_hash(rec, recomputed, &err), 0);
	assert_string_equal(recomputed, hash);
	json_decref(rec);
	/* The second record's prev is the first's hash. */
	rec = berth_audit_parse_line(nl + 1, strlen(nl + 1) - 1, &r, &err);
	assert_non_null(rec);
	assert_string_equal(r.prev, hash);
	assert_int_equal(json_object_size(r.payload), 0);
	json_decref(rec);
	free(text);
	json_decref(p);
}

static void test_redaction(void **state)
{
	struct berth_error err = {0};
	char dir[256];
	struct berth_audit *a;
	char big[6000];
	json_t *p, *out;
	const char *s;

	(void)state;
	dir_for("redact", dir, sizeof dir);
	a = berth_audit_open(dir, &err);
	assert_non_null(a);
	assert_int_equal(berth_audit_add_secret(a, "hunter2-TOPSECRET", &err), 0);
	assert_int_equal(berth_audit_add_secret(a, "TOPSECRET", &err), 0);
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	p = json_pack("{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:s}, s:[s], s:s, s:s, s:s}", "password", "p",
		      "GitHub_Token", "t", "Cookie", "c", "ssh_key", "k", "argv",
		      "x hunter2-TOPSECRET y TOPSECRET", "nested", "Authorization", "Bearer abc", "name",
		      "keep", "list", "has hunter2-TOPSECRET", "long", big, "monkeys", "not a key",
		      "hunter2-TOPSECRET", "v");
	out = berth_audit_redact(a, p, &err);
	assert_non_null(out);
	assert_string_equal(json_string_value(json_object_get(out, "password")), "[redacted]");
	assert_string_equal(json_string_value(json_object_get(out, "GitHub_Token")), "[redacted]");
	assert_string_equal(json_string_value(json_object_get(out, "Cookie")), "[redacted]");
	assert_string_equal(json_string_value(json_object_get(out, "ssh_key")), "[redacted]");
	assert_string_equal(json_string_value(json_object_get(out, "argv")), "x [secret] y [secret]");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(out, "nested"), "Authorization")),
	    "[redacted]");
	assert_string_equal(json_string_value(json_object_get(json_object_get(out, "nested"), "name")),
			    "keep");
	assert_string_equal(json_string_value(json_array_get(json_object_get(out, "list"), 0)),
			    "has [secret]");
	assert_string_equal(json_string_value(json_object_get(out, "monkeys")), "not a key");
	/* A secret in a member name is replaced too. */
	assert_non_null(json_object_get(out, "[secret]"));
	/* Long strings: the first 256 bytes, an ellipsis, length and digest. */
	s = json_string_value(json_object_get(out, "long"));
	assert_non_null(strstr(s, "\xe2\x80\xa6 [5999 bytes, sha256:"));
	assert_true(strlen(s) < 400);
	/* Written records never hold the secret, also in run_id and actor. */
	assert_int_equal(berth_audit_append(a, "run-TOPSECRET", "tool.call", "actor hunter2-TOPSECRET", p,
					    NULL, NULL, &err),
			 0);
	berth_audit_close(a);
	{
		char *text = slurp_log(dir);

		assert_null(strstr(text, "TOPSECRET"));
		assert_null(strstr(text, "hunter2"));
		assert_non_null(strstr(text, "\"run_id\":\"run-[secret]\""));
		free(text);
	}
	json_decref(p);
	json_decref(out);

	/* A short value (`--env DEBUG=1`) is replaced only as a whole string. */
	a = berth_audit_open(dir, &err);
	assert_non_null(a);
	assert_int_equal(berth_audit_add_secret(a, "1", &err), 0);
	p = json_pack("{s:s, s:s, s:[s, s]}", "whole", "1", "inside", "run 1 of 10", "argv", "1", "x1");
	out = berth_audit_redact(a, p, &err);
	assert_non_null(out);
	assert_string_equal(json_string_value(json_object_get(out, "whole")), "[secret]");
	assert_string_equal(json_string_value(json_object_get(out, "inside")), "run 1 of 10");
	assert_string_equal(json_string_value(json_array_get(json_object_get(out, "argv"), 0)), "[secret]");
	assert_string_equal(json_string_value(json_array_get(json_object_get(out, "argv"), 1)), "x1");
	json_decref(p);
	json_decref(out);
	berth_audit_close(a);
}

static void test_append_refusals(void **state)
{
	struct berth_error err = {0};
	char dir[256];
	struct berth_audit *a;
	json_t *arr = json_array(), *big = json_pack("{s:I}", "n", ((json_int_t)1 << 53) + 1);
	uint64_t seq = 9;

	(void)state;
	dir_for("refuse", dir, sizeof dir);
	a = berth_audit_open(dir, &err);
	assert_non_null(a);
	assert_int_equal(berth_audit_append(a, "", "k", "a", NULL, NULL, NULL, &err), -1);
	assert_int_equal(err.errnum, EINVAL);
	assert_non_null(strstr(err.msg, "run_id"));
	assert_int_equal(berth_audit_append(a, "r", "k", "a", arr, NULL, NULL, &err), -1);
	assert_int_equal(err.errnum, EINVAL);
	/* Nothing was written by the refusals. */
	assert_int_equal(berth_audit_head(a, &seq, NULL, &err), 0);
	assert_int_equal(seq, 0);
	/* A number beyond 2^53 is not exact in JSON: it is kept as its digits. */
	{
		json_t *out = berth_audit_redact(a, big, &err), *r2 = json_pack("{s:f}", "x", 1e20);
		json_t *out2 = berth_audit_redact(a, r2, &err);

		assert_string_equal(json_string_value(json_object_get(out, "n")), "9007199254740993");
		assert_string_equal(json_string_value(json_object_get(out2, "x")), "100000000000000000000");
		assert_int_equal(berth_audit_append(a, "r", "k", "a", r2, &seq, NULL, &err), 0);
		assert_int_equal(seq, 1);
		json_decref(out);
		json_decref(out2);
		json_decref(r2);
	}
	berth_audit_close(a);
	json_decref(arr);
	json_decref(big);
}

static void test_parse_line_refusals(void **state)
{
	static const char *const bad[] = {
	    "",
	    "[]",
	    "{}",
	    "not json",
	    "{\"actor\":\"a\",\"hash\":\"x\",\"kind\":\"k\",\"payload\":{},\"prev\":\"y\",\"run_id\":\"r\","
	    "\"seq\":1,\"ts\":\"t\"}",
	    /* not canonical: a space */
	    "{\"actor\": "
	    "\"a\",\"hash\":\"0000000000000000000000000000000000000000000000000000000000000000\",\"kind\":"
	    "\"k\","
	    "\"payload\":{},\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\","
	    "\"run_id\":\"r\","
	    "\"seq\":1,\"ts\":\"2026-11-29T09:14:00.123Z\"}",
	    /* canonical, wrong hash */
	    "{\"actor\":\"a\",\"hash\":\"0000000000000000000000000000000000000000000000000000000000000000\","
	    "\"kind\":\"k\","
	    "\"payload\":{},\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\","
	    "\"run_id\":\"r\","
	    "\"seq\":1,\"ts\":\"2026-11-29T09:14:00.123Z\"}",
	    /* seq 0 */
	    "{\"actor\":\"a\",\"hash\":\"0000000000000000000000000000000000000000000000000000000000000000\","
	    "\"kind\":\"k\","
	    "\"payload\":{},\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\","
	    "\"run_id\":\"r\","
	    "\"seq\":0,\"ts\":\"2026-11-29T09:14:00.123Z\"}",
	    /* an extra member */
	    "{\"actor\":\"a\",\"extra\":1,\"hash\":"
	    "\"0000000000000000000000000000000000000000000000000000000000000000\","
	    "\"kind\":\"k\",\"payload\":{},\"prev\":"
	    "\"0000000000000000000000000000000000000000000000000000000000000000\","
	    "\"run_id\":\"r\",\"seq\":1,\"ts\":\"2026-11-29T09:14:00.123Z\"}",
	};
	struct berth_error err = {0};

	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct berth_audit_record r = {0};
		json_t *o = berth_audit_parse_line(bad[i], strlen(bad[i]), &r, &err);

		if (o != NULL)
			fail_msg("accepted bad line %zu", i);
		assert_int_equal(err.errnum, EBADMSG);
	}
	assert_non_null(strstr(err.msg, "members"));
}

struct thr {
	struct berth_audit *a;
	int n;
};

static void *thread_main(void *p)
{
	struct thr *t = p;
	struct berth_error err = {0};

	for (int i = 0; i < t->n; i++) {
		json_t *pl = json_pack("{s:i}", "i", i);

		if (berth_audit_append(t->a, "thr", "test", "t", pl, NULL, NULL, &err) < 0)
			return (void *)1;
		json_decref(pl);
	}
	return NULL;
}

static void test_group_commit_threads_and_rotation(void **state)
{
	struct berth_error err = {0};
	struct berth_audit_verdict v;
	char dir[256], hash[65];
	struct berth_audit *a;
	pthread_t tid[8];
	struct thr t = {0};
	uint64_t seq;

	(void)state;
	dir_for("threads", dir, sizeof dir);
	a = berth_audit_open(dir, &err);
	assert_non_null(a);
	berth_audit_set_rotate(a, 20000);
	t.a = a;
	t.n = 250;
	for (int i = 0; i < 8; i++)
		pthread_create(&tid[i], NULL, thread_main, &t);
	for (int i = 0; i < 8; i++) {
		void *rv;

		pthread_join(tid[i], &rv);
		assert_null(rv);
	}
	assert_int_equal(berth_audit_head(a, &seq, hash, &err), 0);
	assert_int_equal(seq, 2000);
	berth_audit_close(a);
	assert_int_equal(berth_audit_verify(dir, NULL, &v, &err), 0);
	if (!v.intact)
		fail_msg("%s:%llu %s", v.file, (unsigned long long)v.line, v.reason);
	assert_int_equal(v.records, 2000);
	assert_string_equal(v.head, hash);
	{
		char pattern[512];
		glob_t g;

		/* 2000 records of ~250 bytes at 20000 bytes a file: rotated into
		 * more than 10 files, named by their first seq. */
		snprintf(pattern, sizeof pattern, "%s/audit-*.jsonl", dir);
		assert_int_equal(glob(pattern, 0, NULL, &g), 0);
		assert_true(g.gl_pathc > 10);
		assert_non_null(strstr(g.gl_pathv[0], "audit-0000000000000001.jsonl"));
		globfree(&g);
	}
}

/* With RLIMIT_FSIZE just above the log, an append fails with EFBIG and the
 * file is exactly as before. */
static void test_fail_closed_efbig(void **state)
{
	struct berth_error err = {0};
	struct berth_audit_verdict v;
	char dir[256], *before, *after;
	struct berth_audit *a;
	struct rlimit old, lim;
	json_t *p = json_object();
	char filler[3000];
	struct stat st;
	char path[512];

	(void)state;
	dir_for("efbig", dir, sizeof dir);
	a = berth_audit_open(dir, &err);
	assert_non_null(a);
	assert_int_equal(berth_audit_append(a, "r", "k", "a", NULL, NULL, NULL, &err), 0);
	snprintf(path, sizeof path, "%s/audit-0000000000000001.jsonl", dir);
	assert_int_equal(stat(path, &st), 0);
	before = slurp_log(dir);
	memset(filler, 'f', sizeof filler - 1);
	filler[sizeof filler - 1] = '\0';
	json_object_set_new(p, "filler", json_string(filler));
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = (rlim_t)st.st_size + 1000;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	assert_int_equal(berth_audit_append(a, "r", "k", "a", p, NULL, NULL, &err), -1);
	setrlimit(RLIMIT_FSIZE, &old);
	assert_int_equal(err.errnum, EFBIG);
	after = slurp_log(dir);
	assert_string_equal(before, after);
	/* The handle goes on working once the limit is gone. */
	assert_int_equal(berth_audit_append(a, "r", "k", "a", p, NULL, NULL, &err), 0);
	berth_audit_close(a);
	assert_int_equal(berth_audit_verify(dir, NULL, &v, &err), 0);
	assert_true(v.intact);
	assert_int_equal(v.records, 2);
	free(before);
	free(after);
	json_decref(p);
}

static void test_modes_and_ownership(void **state)
{
	struct berth_error err = {0};
	char dir[256];
	struct berth_audit *a;
	struct stat st;

	(void)state;
	dir_for("modes/deep/audit", dir, sizeof dir);
	a = berth_audit_open(dir, &err);
	assert_non_null(a);
	berth_audit_close(a);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	chmod(dir, 0750);
	a = berth_audit_open(dir, &err);
	assert_null(a);
	assert_int_equal(err.errnum, EPERM);
	assert_non_null(strstr(err.hint, "chmod 700"));
	chmod(dir, 0700);
}

/* The queue: records of several actors, pushed without waiting, are all
 * durable after one sync; a failed group fails the sync and every later
 * push (resident apps, docs/audit.md). */
static int count_actor(const struct berth_audit_record *r, void *ctx)
{
	int *n = ctx;

	if (strcmp(r->actor, "mcp:client:x") == 0 && strcmp(r->kind, "tool.result") == 0)
		n[0]++;
	if (strcmp(r->actor, "q-actor") == 0)
		n[1]++;
	return 0;
}

static void test_queue_push_as_and_sync(void **state)
{
	struct berth_error err = {0};
	struct berth_audit_verdict v;
	struct berth_audit *a;
	struct berth_audit_queue *q;
	struct rlimit old, lim;
	struct stat st;
	char dir[256], path[512], filler[3000];
	int n[2] = {0, 0};

	(void)state;
	dir_for("queue", dir, sizeof dir);
	a = berth_audit_open(dir, &err);
	assert_non_null(a);
	q = berth_audit_queue_new(a, "0123456789abcdef", "q-actor", &err);
	assert_non_null(q);
	assert_int_equal(berth_audit_queue_sync(q, &err), 0); /* nothing pushed: at once */
	assert_int_equal(berth_audit_queue_push(q, "run.start", json_object(), false, &err), 0);
	for (int i = 0; i < 50; i++)
		assert_int_equal(berth_audit_queue_push_as(q, "mcp:client:x", "tool.result",
							   json_pack("{s:i}", "call_id", i), false, &err),
				 0);
	assert_int_equal(berth_audit_queue_sync(q, &err), 0);
	/* durable: another reader sees all 51 now, before the queue closes */
	assert_int_equal(berth_audit_each(dir, count_actor, n, &err), 0);
	assert_int_equal(n[0], 50);
	assert_int_equal(n[1], 1);

	/* A group that cannot be written (EFBIG) fails the sync, then every push. */
	snprintf(path, sizeof path, "%s/audit-0000000000000001.jsonl", dir);
	assert_int_equal(stat(path, &st), 0);
	memset(filler, 'f', sizeof filler - 1);
	filler[sizeof filler - 1] = '\0';
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = (rlim_t)st.st_size + 1000;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	assert_int_equal(
	    berth_audit_queue_push_as(q, "x", "tool.call", json_pack("{s:s}", "f", filler), false, &err), 0);
	assert_int_equal(berth_audit_queue_sync(q, &err), -1);
	setrlimit(RLIMIT_FSIZE, &old);
	assert_int_equal(err.errnum, EFBIG);
	err = (struct berth_error){0};
	assert_int_equal(berth_audit_queue_push_as(q, "x", "tool.result", json_object(), false, &err), -1);
	assert_int_equal(err.errnum, EFBIG);
	assert_int_equal(berth_audit_queue_sync(q, &err), -1);
	assert_int_equal(berth_audit_queue_close(q, &err), -1);
	assert_non_null(strstr(err.msg, "2 records could not be written"));
	berth_audit_close(a);
	assert_int_equal(berth_audit_verify(dir, NULL, &v, &err), 0);
	assert_true(v.intact);
	assert_int_equal(v.records, 51);
}

/* The cap on net.decision records that `berth run`, sessions and resident
 * apps share (docs/audit.md): 1000 per outcome, then counted. */
static void test_net_cap(void **state)
{
	(void)state;
	struct berth_audit_net_cap c = {0};
	struct berth_broker_decision refused = {
	    .outcome = BERTH_BROKER_REFUSED, .host = "h", .address = "", .reason = "not declared"};
	struct berth_broker_decision allowed = refused, failed = refused;
	allowed.outcome = BERTH_BROKER_ALLOWED;
	failed.outcome = BERTH_BROKER_FAILED;

	assert_null(berth_audit_net_summary(&c)); /* nothing left out: no summary record */
	for (int i = 0; i < BERTH_AUDIT_NET_MAX_PER_OUTCOME; i++)
		assert_true(berth_audit_net_admit(&c, &refused));
	assert_null(berth_audit_net_summary(&c));
	for (int i = 0; i < 100; i++)
		assert_false(berth_audit_net_admit(&c, &refused));
	/* each outcome has its own 1000 */
	assert_true(berth_audit_net_admit(&c, &allowed));
	for (int i = 0; i < BERTH_AUDIT_NET_MAX_PER_OUTCOME - 1; i++)
		assert_true(berth_audit_net_admit(&c, &failed));
	assert_true(berth_audit_net_admit(&c, &failed));
	assert_false(berth_audit_net_admit(&c, &failed));
	json_t *sum = berth_audit_net_summary(&c);
	assert_non_null(sum);
	char *text = json_dumps(sum, JSON_SORT_KEYS | JSON_COMPACT);
	assert_string_equal(text,
			    "{\"allowed_not_recorded\":0,\"decision\":\"summary\",\"failed_not_recorded\":1,"
			    "\"recorded_each\":1000,\"refused_not_recorded\":100}");
	free(text);
	json_decref(sum);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_record_format_and_hash),
	    cmocka_unit_test(test_redaction),
	    cmocka_unit_test(test_append_refusals),
	    cmocka_unit_test(test_parse_line_refusals),
	    cmocka_unit_test(test_group_commit_threads_and_rotation),
	    cmocka_unit_test(test_fail_closed_efbig),
	    cmocka_unit_test(test_modes_and_ownership),
	    cmocka_unit_test(test_queue_push_as_and_sync),
	    cmocka_unit_test(test_net_cap),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
