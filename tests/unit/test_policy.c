/* SPDX-License-Identifier: MIT */
/*
 * test_policy.c - option parsing, policy compilation and the canonical digest.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy/flags.h"
#include "policy/policy.h"

static char *fake_env(const char *name)
{
	if (strcmp(name, "SECRET_TOKEN") == 0)
		return "s3cr3t-value";
	return NULL;
}

static int parse(struct berth_run_opts *o, struct berth_error *err, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;

	argv[argc++] = "run";
	va_start(ap, err);
	for (char *a = va_arg(ap, char *); a != NULL && argc < 31; a = va_arg(ap, char *))
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	memset(err, 0, sizeof *err);
	return berth_run_parse(argc, argv, fake_env, o, err);
}

static void test_defaults(void **state)
{
	struct berth_run_opts o;
	struct berth_error err;
	char cwd[4096];

	(void)state;
	assert_int_equal(parse(&o, &err, "--workspace", "/usr", "--", "true", NULL), 0);
	assert_string_equal(o.policy.workspace, "/usr");
	assert_int_equal(o.policy.tmp_size, 1ULL << 30);
	assert_int_equal(o.policy.memory, 8ULL << 30);
	assert_int_equal(o.policy.millicpus, 4000);
	assert_int_equal(o.policy.pids, 512);
	assert_int_equal(o.policy.nofile, 8192);
	assert_int_equal(o.policy.timeout_ms, 0);
	assert_int_equal(o.policy.network, BERTH_NET_NONE);
	assert_int_equal(o.policy.argc, 1);
	assert_string_equal(o.policy.argv[0], "true");
	assert_null(o.policy.argv[1]);
	assert_int_equal(o.n_widenings, 0);
	berth_run_opts_free(&o);
	/* Default workspace: the current directory, resolved. */
	assert_non_null(getcwd(cwd, sizeof cwd));
	assert_int_equal(chdir("/usr"), 0);
	assert_int_equal(parse(&o, &err, "--", "true", NULL), 0);
	assert_string_equal(o.policy.workspace, "/usr");
	berth_run_opts_free(&o);
	/* Best effort: a test user may not be able to re-enter a 0700 checkout. */
	(void)!chdir(cwd);
}

static void test_limits_parsing(void **state)
{
	struct berth_run_opts o;
	struct berth_error err;

	(void)state;
	assert_int_equal(parse(&o, &err, "--workspace", "/usr", "--memory", "512M", "--cpus", "0.5", "--pids", "64",
			       "--nofile", "256", "--timeout", "1500ms", "--tmp-size", "2G", "--", "x", NULL),
			 0);
	assert_int_equal(o.policy.memory, 512ULL << 20);
	assert_true(o.policy.memory_set);
	assert_int_equal(o.policy.millicpus, 500);
	assert_int_equal(o.policy.pids, 64);
	assert_int_equal(o.policy.nofile, 256);
	assert_int_equal(o.policy.timeout_ms, 1500);
	assert_int_equal(o.policy.tmp_size, 2ULL << 30);
	berth_run_opts_free(&o);
}

static void expect_usage(const char *needle, ...)
{
	struct berth_run_opts o;
	struct berth_error err;
	char *argv[16];
	int argc = 0;
	va_list ap;

	argv[argc++] = "run";
	va_start(ap, needle);
	for (char *a = va_arg(ap, char *); a != NULL; a = va_arg(ap, char *))
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	memset(&err, 0, sizeof err);
	assert_int_equal(berth_run_parse(argc, argv, fake_env, &o, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	if (strstr(err.msg, needle) == NULL)
		fail_msg("message `%s` does not name `%s`", err.msg, needle);
	berth_run_opts_free(&o);
}

static void test_bad_input(void **state)
{
	(void)state;
	expect_usage("`abc`", "--workspace", "/usr", "--memory", "abc", "--", "x", NULL);
	expect_usage("`0`", "--workspace", "/usr", "--memory", "0", "--", "x", NULL);
	expect_usage("`99999999999999999999T`", "--workspace", "/usr", "--memory", "99999999999999999999T", "--", "x", NULL);
	expect_usage("`-1`", "--workspace", "/usr", "--cpus", "-1", "--", "x", NULL);
	expect_usage("`0`", "--workspace", "/usr", "--pids", "0", "--", "x", NULL);
	expect_usage("`5x`", "--workspace", "/usr", "--timeout", "5x", "--", "x", NULL);
	expect_usage("`wifi`", "--workspace", "/usr", "--network", "wifi", "--", "x", NULL);
	expect_usage("no command", "--workspace", "/usr", NULL);
	expect_usage("`--frobnicate`", "--workspace", "/usr", "--frobnicate", "--", "x", NULL);
	expect_usage("`/nonexistent-berth`", "--workspace", "/nonexistent-berth", "--", "x", NULL);
	expect_usage("`/`", "--workspace", "/", "--", "x", NULL);
	expect_usage("host root", "--workspace", "/usr", "--rw", "/", "--", "x", NULL);
	expect_usage("kernel interface", "--workspace", "/usr", "--ro", "/proc", "--", "x", NULL);
	expect_usage("`/proc/x`", "--workspace", "/usr", "--ro", "/usr:/proc/x", "--", "x", NULL);
	expect_usage("`/`", "--workspace", "/usr", "--ro", "/usr:/", "--", "x", NULL);
	expect_usage("canonical", "--workspace", "/usr", "--ro", "/usr:/a/../b", "--", "x", NULL);
	expect_usage("canonical", "--workspace", "/usr", "--ro", "/usr:relative", "--", "x", NULL);
	expect_usage("NOPE_UNSET", "--workspace", "/usr", "--env", "NOPE_UNSET", "--", "x", NULL);
	expect_usage("`1BAD`", "--workspace", "/usr", "--env", "1BAD=x", "--", "x", NULL);
	expect_usage("`.notguarded`", "--workspace", "/usr", "--unprotect", ".notguarded", "--", "x", NULL);
	/* shared directories and runtime directories (their sockets) */
	expect_usage("`/tmp` is a shared directory", "--workspace", "/tmp", "--", "x", NULL);
	expect_usage("is a shared directory", "--workspace", "/usr", "--ro", "/tmp:/data", "--", "x", NULL);
	expect_usage("would expose `/run`", "--workspace", "/usr", "--rw", "/run:/data", "--", "x", NULL);
	expect_usage("would expose `/var/tmp`", "--workspace", "/var", "--", "x", NULL);
	/* limits a sandbox cannot start with; one target twice; odd targets */
	expect_usage("`1K` is less than the 16 MiB", "--workspace", "/usr", "--memory", "1K", "--", "x", NULL);
	expect_usage("`1`", "--workspace", "/usr", "--pids", "1", "--", "x", NULL);
	expect_usage("`/data` is given twice", "--workspace", "/usr", "--ro", "/usr:/data", "--ro", "/etc:/data", "--", "x",
		     NULL);
	expect_usage("control character 0x0a", "--workspace", "/usr", "--ro", "/usr:/a\nb", "--", "x", NULL);
}

static void test_home_refused(void **state)
{
	const char *home = berth_caller_home();

	(void)state;
	assert_non_null(home);
	if (access(home, F_OK) == 0)
		expect_usage("home", "--workspace", home, "--", "x", NULL);
	expect_usage("home", "--workspace", "/usr", "--rw", home, "--", "x", NULL);
}

static void test_widenings(void **state)
{
	struct berth_run_opts o;
	struct berth_error err;

	(void)state;
	assert_int_equal(parse(&o, &err, "--workspace", "/usr", "--network", "host", "--rw", "/usr:/data",
			       "--unprotect", "/workspace/.vscode/", "--allow-degraded", "--", "x", NULL),
			 0);
	assert_int_equal(o.n_widenings, 4);
	assert_non_null(strstr(o.widenings[0], "--network host"));
	assert_non_null(strstr(o.widenings[1], "--rw /usr:/data"));
	assert_non_null(strstr(o.widenings[2], "--unprotect"));
	assert_non_null(strstr(o.widenings[3], "--allow-degraded"));
	assert_int_equal(o.policy.n_unprotect, 1);
	assert_string_equal(o.policy.unprotect[0], ".vscode");
	assert_int_equal(o.policy.n_mounts, 1);
	assert_string_equal(o.policy.mounts[0].src, "/usr");
	assert_string_equal(o.policy.mounts[0].dst, "/data");
	assert_true(o.policy.mounts[0].rw);
	berth_run_opts_free(&o);
}

static void test_env(void **state)
{
	struct berth_run_opts o;
	struct berth_error err;
	char *json;

	(void)state;
	assert_int_equal(parse(&o, &err, "--workspace", "/usr", "--env", "SECRET_TOKEN", "--env", "A=1", "--env",
			       "A=2", "--", "x", NULL),
			 0);
	assert_int_equal(o.policy.n_env, 2);
	assert_string_equal(o.policy.env[0].value, "s3cr3t-value");
	assert_true(o.policy.env[0].from_host);
	assert_string_equal(o.policy.env[1].value, "2");
	json = berth_policy_to_json(&o.policy, false, &err);
	assert_non_null(json);
	/* The policy never carries a value, nor its digest: names and where
	 * the value comes from only. */
	assert_null(strstr(json, "s3cr3t-value"));
	assert_non_null(strstr(json, "{\"from\":\"host\",\"name\":\"SECRET_TOKEN\"}"));
	assert_non_null(strstr(json, "{\"from\":\"literal\",\"name\":\"A\"}"));
	assert_null(strstr(json, "d4735e3a265e16eee03f59718b9b5d03019c07d8b6c51f90da3a666eec13ab35")); /* sha256("2") */
	free(json);
	berth_run_opts_free(&o);
}

static void test_canonical_digest(void **state)
{
	struct berth_run_opts a, b, c;
	struct berth_error err;
	char da[65], db[65], dc[65];
	char *json;

	(void)state;
	assert_int_equal(parse(&a, &err, "--workspace", "/usr", "--memory", "1G", "--", "sh", "-c", "x", NULL), 0);
	assert_int_equal(parse(&b, &err, "--memory", "1024M", "--workspace", "/usr/.", "--", "sh", "-c", "x", NULL), 0);
	assert_int_equal(parse(&c, &err, "--workspace", "/usr", "--memory", "2G", "--", "sh", "-c", "x", NULL), 0);
	assert_int_equal(berth_policy_digest(&a.policy, da, &err), 0);
	assert_int_equal(berth_policy_digest(&b.policy, db, &err), 0);
	assert_int_equal(berth_policy_digest(&c.policy, dc, &err), 0);
	assert_int_equal(strlen(da), 64);
	assert_int_equal(strspn(da, "0123456789abcdef"), 64);
	/* Same policy spelled differently: same digest; another limit: another. */
	assert_string_equal(da, db);
	assert_string_not_equal(da, dc);
	json = berth_policy_to_json(&a.policy, false, &err);
	assert_non_null(json);
	/* Canonical: compact, sorted keys, integers. */
	assert_null(strchr(json, '\n'));
	assert_null(strstr(json, ": "));
	assert_true(strstr(json, "\"allow_degraded\"") < strstr(json, "\"command\""));
	assert_true(strstr(json, "\"command\"") < strstr(json, "\"env\""));
	assert_non_null(strstr(json, "\"memory_bytes\":1073741824"));
	assert_non_null(strstr(json, "\"mode\":\"none\""));
	assert_non_null(strstr(json, "\"git\":[\".git/hooks\",\".git/config\""));
	free(json);
	berth_run_opts_free(&a);
	berth_run_opts_free(&b);
	berth_run_opts_free(&c);
}

static void test_unprotect_removes_guard(void **state)
{
	struct berth_run_opts o;
	struct berth_error err;
	char *json;

	(void)state;
	assert_int_equal(parse(&o, &err, "--workspace", "/usr", "--unprotect", ".bashrc", "--", "x", NULL), 0);
	json = berth_policy_to_json(&o.policy, false, &err);
	assert_non_null(json);
	/* Listed as unprotected, moved from the read-only names to the named. */
	assert_non_null(strstr(json, "\"unprotect\":[\".bashrc\"]"));
	char *ro = strstr(json, "\"read-only\":["), *named = strstr(json, "\"named\":[");
	assert_non_null(ro);
	assert_non_null(named);
	assert_non_null(strstr(named, "\".bashrc\""));
	assert_true(strstr(ro, "\".bashrc\"") == NULL || strstr(ro, "\".bashrc\"") > strchr(ro, ']'));
	free(json);
	berth_run_opts_free(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),       cmocka_unit_test(test_limits_parsing),
		cmocka_unit_test(test_bad_input),      cmocka_unit_test(test_home_refused),
		cmocka_unit_test(test_widenings),      cmocka_unit_test(test_env),
		cmocka_unit_test(test_canonical_digest), cmocka_unit_test(test_unprotect_removes_guard),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
