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
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy/envfile.h"
#include "policy/flags.h"
#include "policy/policy.h"
#include "policy/rules.h"
#include "policy/sysdirs.h"
#include "sandbox/landlock.h"
#include "sandbox/sandbox.h"

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
	assert_int_equal(parse(&o, &err, "--workspace", "/usr", "--memory", "512M", "--cpus", "0.5", "--pids",
			       "64", "--nofile", "256", "--timeout", "1500ms", "--tmp-size", "2G", "--", "x",
			       NULL),
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
	expect_usage("`99999999999999999999T`", "--workspace", "/usr", "--memory", "99999999999999999999T",
		     "--", "x", NULL);
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
	expect_usage("invalid --memory `1K`: too small for a sandbox to start, expected 16M to 1024T",
		     "--workspace", "/usr", "--memory", "1K", "--", "x", NULL);
	expect_usage("`1`", "--workspace", "/usr", "--pids", "1", "--", "x", NULL);
	expect_usage("`/data` is given twice", "--workspace", "/usr", "--ro", "/usr:/data", "--ro",
		     "/etc:/data", "--", "x", NULL);
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
	assert_int_equal(parse(&o, &err, "--workspace", "/usr", "--env", "SECRET_TOKEN", "--env", "A=1",
			       "--env", "A=2", "--", "x", NULL),
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
	assert_null(strstr(
	    json, "d4735e3a265e16eee03f59718b9b5d03019c07d8b6c51f90da3a666eec13ab35")); /* sha256("2") */
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
	assert_int_equal(
	    parse(&a, &err, "--workspace", "/usr", "--memory", "1G", "--", "sh", "-c", "x", NULL), 0);
	assert_int_equal(
	    parse(&b, &err, "--memory", "1024M", "--workspace", "/usr/.", "--", "sh", "-c", "x", NULL), 0);
	assert_int_equal(
	    parse(&c, &err, "--workspace", "/usr", "--memory", "2G", "--", "sh", "-c", "x", NULL), 0);
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
	assert_int_equal(parse(&o, &err, "--workspace", "/usr", "--unprotect", ".bashrc", "--", "x", NULL),
			 0);
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

/* ------------------------------------------------ the default view's table */

static void test_sysdirs_table(void **state)
{
	struct berth_ll_rule r[BERTH_POLICY_LANDLOCK_RULES_MAX];
	/* What the runtimes did before the table (spawn.c's two lists): the
	 * table must reproduce them, right for right. */
	static const struct berth_ll_rule run[] = {
	    {"/", BERTH_LL_DIR},     {"/usr", BERTH_LL_RX},     {"/bin", BERTH_LL_RX},
	    {"/sbin", BERTH_LL_RX},  {"/lib", BERTH_LL_RX},     {"/lib64", BERTH_LL_RX},
	    {"/lib32", BERTH_LL_RX}, {"/libx32", BERTH_LL_RX},  {"/etc", BERTH_LL_RO},
	    {"/sys", BERTH_LL_RO},   {"/proc", BERTH_LL_PROC},  {"/dev", BERTH_LL_DEV},
	    {"/tmp", BERTH_LL_RW},   {"/dev/shm", BERTH_LL_RW},
	};
	struct berth_policy p;
	struct berth_error err = {0};
	char *json;
	int n;

	(void)state;
	n = berth_landlock_view_rules(false, r, (int)(sizeof r / sizeof r[0]));
	assert_int_equal(n, 14);
	for (int i = 0; i < n; i++) {
		assert_string_equal(r[i].path, run[i].path);
		assert_int_equal(r[i].access, run[i].access);
	}
	/* An app: the same but /tmp and /dev/shm (reached through grants only). */
	n = berth_landlock_view_rules(true, r, (int)(sizeof r / sizeof r[0]));
	assert_int_equal(n, 12);
	for (int i = 0; i < n; i++) {
		assert_string_equal(r[i].path, run[i].path);
		assert_int_equal(r[i].access, run[i].access);
	}
	/* Cut at @max, never past it. */
	assert_int_equal(berth_landlock_view_rules(false, r, 3), 3);
	assert_string_equal(r[2].path, "/bin");
	/* The attested lists keep their form (and every digest): /libx32 is
	 * mounted and granted but not in system_ro. */
	berth_policy_init(&p);
	json = berth_policy_to_json(&p, false, &err);
	assert_non_null(json);
	assert_non_null(strstr(
	    json, "\"system_ro\":[\"/usr\",\"/bin\",\"/sbin\",\"/lib\",\"/lib64\",\"/lib32\",\"/etc\"]"));
	assert_non_null(strstr(json, "\"private_tmpfs\":[\"/tmp\",\"/home\",\"/dev/shm\"]"));
	assert_null(strstr(json, "libx32"));
	free(json);
	/* Every row says why; only the system rows are bound from the host. */
	for (size_t i = 0; i < berth_n_sysdirs; i++) {
		assert_true(berth_sysdirs[i].why != NULL && berth_sysdirs[i].why[0] != '\0');
		assert_int_equal(berth_sysdirs[i].path[0], '/');
		if (berth_sysdirs[i].mount == BERTH_SYSDIR_BIND)
			assert_true(berth_sysdirs[i].ll_run == BERTH_LL_RX ||
				    berth_sysdirs[i].ll_run == BERTH_LL_RO);
		/* nothing of the system is writable */
		if (berth_sysdirs[i].attest == BERTH_ATTEST_SYSTEM_RO)
			assert_int_not_equal(berth_sysdirs[i].ll_run, BERTH_LL_RW);
	}
}

/* --------------------------------------------------------------- the limits */

/* berth_policy_validate on @p: 0, or the status and message of its refusal. */
static int validate(const struct berth_policy *p, struct berth_error *err)
{
	memset(err, 0, sizeof *err);
	return berth_policy_validate(p, err);
}

static void refused(const struct berth_policy *p, const char *msg)
{
	struct berth_error err;

	assert_int_equal(validate(p, &err), -1);
	assert_int_equal(err.status, 2);
	assert_string_equal(err.msg, msg);
	assert_true(err.hint[0] != '\0');
}

static void accepted(const struct berth_policy *p)
{
	struct berth_error err;

	if (validate(p, &err) != 0)
		fail_msg("refused: %s", err.msg);
}

static void add_mounts(struct berth_policy *p, size_t n, bool rw)
{
	p->mounts = realloc(p->mounts, (p->n_mounts + n) * sizeof *p->mounts);
	assert_non_null(p->mounts);
	for (size_t i = 0; i < n; i++, p->n_mounts++) {
		char dst[64];
		snprintf(dst, sizeof dst, "/m%zu", p->n_mounts);
		p->mounts[p->n_mounts] =
		    (struct berth_mount){.src = strdup("/usr"), .dst = strdup(dst), .rw = rw};
	}
}

enum host_kind { ANY_PORT, ONE_PORT, NO_PORT, BAD };

static void add_hosts(struct berth_policy *p, size_t n, enum host_kind k)
{
	p->network = BERTH_NET_PROXY;
	p->allow_hosts = realloc(p->allow_hosts, (p->n_allow_hosts + n) * sizeof *p->allow_hosts);
	assert_non_null(p->allow_hosts);
	for (size_t i = 0; i < n; i++, p->n_allow_hosts++) {
		char h[64];
		size_t i1 = p->n_allow_hosts + 1;
		if (k == ANY_PORT)
			snprintf(h, sizeof h, "h%zu.example.com:*", i1);
		else if (k == ONE_PORT)
			snprintf(h, sizeof h, "h.example.com:%zu", i1);
		else if (k == NO_PORT)
			snprintf(h, sizeof h, "plain%zu.example.com", i1);
		else
			snprintf(h, sizeof h, "bad..name%zu", i1);
		p->allow_hosts[p->n_allow_hosts] = strdup(h);
	}
}

static void add_envs(struct berth_policy *p, size_t n)
{
	p->env = realloc(p->env, (p->n_env + n) * sizeof *p->env);
	assert_non_null(p->env);
	for (size_t i = 0; i < n; i++, p->n_env++) {
		char name[32];
		snprintf(name, sizeof name, "V%zu", p->n_env + 1);
		p->env[p->n_env] = (struct berth_env){strdup(name), strdup("x"), false, false};
	}
}

static void test_limit_mounts(void **state)
{
	struct berth_policy p;
	char dst[BERTH_MOUNT_TARGET_MAX + 2];

	(void)state;
	berth_policy_init(&p);
	add_mounts(&p, 64, false);
	accepted(&p);
	add_mounts(&p, 1, true);
	refused(&p, "too many --ro/--rw mounts (65, at most 64)");
	berth_policy_free(&p);
	/* A target of 1024 bytes, and one more. */
	berth_policy_init(&p);
	add_mounts(&p, 1, false);
	memset(dst, 'a', sizeof dst - 1);
	dst[0] = '/';
	dst[BERTH_MOUNT_TARGET_MAX] = '\0';
	free(p.mounts[0].dst);
	p.mounts[0].dst = strdup(dst);
	accepted(&p);
	dst[BERTH_MOUNT_TARGET_MAX] = 'a';
	dst[BERTH_MOUNT_TARGET_MAX + 1] = '\0';
	free(p.mounts[0].dst);
	p.mounts[0].dst = strdup(dst);
	refused(
	    &p,
	    "mount target `/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...` is too long "
	    "(1025 bytes)");
	berth_policy_free(&p);
}

static void test_limit_allow_hosts(void **state)
{
	struct berth_policy p;

	(void)state;
	/* any port (`:*`): no listener each, so only the pattern count binds */
	berth_policy_init(&p);
	add_hosts(&p, 64, ANY_PORT);
	accepted(&p);
	add_hosts(&p, 1, ANY_PORT);
	refused(&p, "too many --allow-host patterns (65, at most 64)");
	p.app = true;
	p.app_name = strdup("web");
	refused(&p, "the app `web` declares 65 `network:host` capabilities, at most 64");
	berth_policy_free(&p);
	/* the broker's grammar */
	berth_policy_init(&p);
	add_hosts(&p, 1, BAD);
	assert_int_equal(validate(&p, &(struct berth_error){0}), -1);
	berth_policy_free(&p);
}

static void test_limit_ports(void **state)
{
	struct berth_policy p;

	(void)state;
	berth_policy_init(&p);
	add_hosts(&p, 32, ONE_PORT);
	accepted(&p);
	add_hosts(&p, 1, ONE_PORT);
	refused(&p, "the allow-host patterns declare more than 32 distinct ports");
	p.app = true;
	refused(&p, "the app's `network:host` capabilities declare more than 32 distinct ports");
	berth_policy_free(&p);
	/* a pattern without a port declares 80 and 443: 30 + 2 fit, 31 + 2 do not */
	berth_policy_init(&p);
	add_hosts(&p, 30, ONE_PORT);
	add_hosts(&p, 1, NO_PORT);
	accepted(&p);
	add_hosts(&p, 1, ONE_PORT);
	refused(&p, "the allow-host patterns declare more than 32 distinct ports");
	berth_policy_free(&p);
}

static void test_limit_env(void **state)
{
	struct berth_policy p;
	char *big;

	(void)state;
	/* 255 entries: PATH HOME USER LOGNAME and 251 given */
	berth_policy_init(&p);
	add_envs(&p, 251);
	accepted(&p);
	add_envs(&p, 1);
	refused(
	    &p,
	    "too many environment variables for the command: 252 given, and berth passes at most 255 (4 of "
	    "them its own)");
	/* berth's own names take no entry more */
	free(p.env[251].name);
	p.env[251].name = strdup("PATH");
	accepted(&p);
	berth_policy_free(&p);
	/* the broker's 8 */
	berth_policy_init(&p);
	add_hosts(&p, 1, NO_PORT);
	add_envs(&p, 243);
	accepted(&p);
	add_envs(&p, 1);
	refused(
	    &p,
	    "too many environment variables for the command: 244 given, and berth passes at most 255 (4 of "
	    "them its own, 8 the egress broker's)");
	berth_policy_free(&p);
	/* NAME=VALUE and its NUL: 131072 bytes, and one more */
	berth_policy_init(&p);
	add_envs(&p, 1); /* V1 */
	big = malloc(BERTH_POLICY_ENV_ENTRY_MAX);
	assert_non_null(big);
	memset(big, 'x', BERTH_POLICY_ENV_ENTRY_MAX - 4);
	big[BERTH_POLICY_ENV_ENTRY_MAX - 4] = '\0'; /* "V1=" + 131068 + NUL = 131072 */
	free(p.env[0].value);
	p.env[0].value = strdup(big);
	accepted(&p);
	big[BERTH_POLICY_ENV_ENTRY_MAX - 4] = 'x';
	big[BERTH_POLICY_ENV_ENTRY_MAX - 3] = '\0';
	free(p.env[0].value);
	p.env[0].value = big;
	refused(
	    &p,
	    "environment variable `V1` is 131072 bytes long (NAME=VALUE); the kernel passes at most 131071 "
	    "to a command");
	berth_policy_free(&p);
}

static void add_grants(struct berth_policy *p, size_t n)
{
	p->grants = realloc(p->grants, (p->n_grants + n) * sizeof *p->grants);
	assert_non_null(p->grants);
	for (size_t i = 0; i < n; i++, p->n_grants++) {
		char path[64];
		snprintf(path, sizeof path, "/workspace/g%zu", p->n_grants);
		p->grants[p->n_grants] = (struct berth_grant){strdup(path), false};
	}
}

static void test_limit_grants_landlock(void **state)
{
	struct berth_policy p;

	(void)state;
	berth_policy_init(&p);
	p.app = true;
	p.app_name = strdup("fs");
	add_grants(&p, 64);
	accepted(&p);
	add_grants(&p, 1);
	refused(&p, "the app `fs` declares 65 filesystem grants, at most 64");
	berth_policy_free(&p);
	/* 12 rules of the default view + 20 read-only mounts + 64 grants = 96 */
	berth_policy_init(&p);
	p.app = true;
	add_grants(&p, 64);
	add_mounts(&p, 20, false);
	add_mounts(&p, 30, true); /* an app's read-write mounts take no rule of their own */
	accepted(&p);
	add_mounts(&p, 1, false);
	refused(&p, "the sandbox needs 97 Landlock rules, at most 96");
	berth_policy_free(&p);
	/* `berth run`: 14 + the workspace, $HOME, /evidence + 64 mounts fit */
	berth_policy_init(&p);
	add_mounts(&p, 64, true);
	accepted(&p);
	berth_policy_free(&p);
}

/* The same refusals through the parser, the rules check and the runtime. */
static void test_limit_callers(void **state)
{
	char *argv[160];
	char hosts[70][32];
	int argc = 0;
	struct berth_run_opts o;
	struct berth_error err = {0};
	struct berth_policy p;
	struct berth_sandbox *sb = NULL;
	struct berth_runtime_opts ro = {0};

	(void)state;
	argv[argc++] = "run";
	argv[argc++] = "--workspace";
	argv[argc++] = "/usr";
	for (int i = 0; i < 65; i++) {
		snprintf(hosts[i], sizeof hosts[i], "h%d.example.com:*", i);
		argv[argc++] = "--allow-host";
		argv[argc++] = hosts[i];
	}
	argv[argc++] = "--";
	argv[argc++] = "true";
	argv[argc] = NULL;
	assert_int_equal(berth_run_parse(argc, argv, fake_env, &o, &err), -1);
	assert_int_equal(err.status, 2);
	assert_string_equal(err.msg, "too many --allow-host patterns (65, at most 64)");
	berth_run_opts_free(&o);
	/* 64 parse */
	argv[argc - 4] = "--";
	argv[argc - 3] = "true";
	argv[argc - 2] = NULL;
	memset(&err, 0, sizeof err);
	assert_int_equal(berth_run_parse(argc - 2, argv, fake_env, &o, &err), 0);
	assert_int_equal(o.policy.n_allow_hosts, 64);
	berth_run_opts_free(&o);

	berth_policy_init(&p);
	add_mounts(&p, 65, false);
	p.workspace = strdup("/usr");
	p.argv = calloc(2, sizeof *p.argv);
	p.argv[0] = strdup("true");
	p.argc = 1;
	/* rules: refused before any rule (no rules file at all) */
	memset(&err, 0, sizeof err);
	assert_int_equal(
	    berth_rules_check(NULL, &p, &(struct berth_widening_ctx){.network_mode = "none"}, &err), -1);
	assert_string_equal(err.msg, "too many --ro/--rw mounts (65, at most 64)");
	/* the runtime: refused before anything is created */
	memset(&err, 0, sizeof err);
	assert_int_equal(berth_sandbox_start(&p, &ro, &sb, &err), -1);
	assert_null(sb);
	assert_int_equal(err.status, 2);
	assert_string_equal(err.msg, "too many --ro/--rw mounts (65, at most 64)");
	berth_policy_free(&p);
}

/* The one NAME rule of --env, --env-file, rules files and profiles; and the
 * policy JSON's network names. */
static void test_env_name_and_network_name(void **state)
{
	(void)state;
	assert_true(berth_env_name_valid("PATH", 4));
	assert_true(berth_env_name_valid("_x9", 3));
	assert_true(berth_env_name_valid("A=B", 1)); /* only the @n bytes count */
	assert_false(berth_env_name_valid("", 0));
	assert_false(berth_env_name_valid("9A", 2));
	assert_false(berth_env_name_valid("A-B", 3));
	assert_false(berth_env_name_valid("A B", 3));
	assert_false(berth_env_name_valid("\xc3\xa9", 2));
	assert_string_equal(berth_network_name(BERTH_NET_NONE), "none");
	assert_string_equal(berth_network_name(BERTH_NET_HOST), "host");
	assert_string_equal(berth_network_name(BERTH_NET_PROXY), "proxy");
	assert_string_equal(berth_network_name((enum berth_network)42), "none");
}

/* ---------------------------------------------------------- numeric ranges */

/* One value of one option: NULL @msg, accepted and stored as @want; else
 * refused (exit 2) with exactly @msg. */
struct extreme {
	const char *opt, *val;
	uint64_t want;
	const char *msg;
};

#define TMP_R ", expected 1M to 1024T"
#define MEM_R ", expected 16M to 1024T"
#define CPU_R ", expected 0.01 to 1024"
#define PID_R ", expected 2 to 4194304"
#define NOF_R ", expected 16 to 1048576"
#define TMO_R ", expected 1ms to 8760h"

/* The values every numeric option is tried with: 0, 1, max, max + 1,
 * 2^63 - 1, 2^63, 2^64 - 1, 2^64, -1, a suffix product past 2^64, a
 * leading +, blanks, hex, an exponent, empty, junk. */
static const struct extreme extremes[] = {
    {"--tmp-size", "0", 0, "invalid --tmp-size `0`: zero" TMP_R},
    {"--tmp-size", "1", 0, "invalid --tmp-size `1`: too small" TMP_R},
    {"--tmp-size", "1048575", 0, "invalid --tmp-size `1048575`: too small" TMP_R},
    {"--tmp-size", "1M", 1ULL << 20, NULL},
    {"--tmp-size", "1024T", 1ULL << 50, NULL},
    {"--tmp-size", "1125899906842624", 1ULL << 50, NULL},
    {"--tmp-size", "1125899906842625", 0, "invalid --tmp-size `1125899906842625`: too large" TMP_R},
    {"--tmp-size", "1025T", 0, "invalid --tmp-size `1025T`: too large" TMP_R},
    {"--tmp-size", "9223372036854775807", 0, "invalid --tmp-size `9223372036854775807`: too large" TMP_R},
    {"--tmp-size", "9223372036854775808", 0, "invalid --tmp-size `9223372036854775808`: too large" TMP_R},
    {"--tmp-size", "18446744073709551615", 0, "invalid --tmp-size `18446744073709551615`: too large" TMP_R},
    {"--tmp-size", "18446744073709551616", 0, "invalid --tmp-size `18446744073709551616`: too large" TMP_R},
    {"--tmp-size", "17179869184G", 0, "invalid --tmp-size `17179869184G`: too large" TMP_R},
    {"--tmp-size", "16777216T", 0, "invalid --tmp-size `16777216T`: too large" TMP_R},
    {"--tmp-size", "-1", 0, "invalid --tmp-size `-1`: not a size" TMP_R},
    {"--tmp-size", "+1G", 0, "invalid --tmp-size `+1G`: not a size" TMP_R},
    {"--tmp-size", " 1G", 0, "invalid --tmp-size ` 1G`: not a size" TMP_R},
    {"--tmp-size", "1G ", 0, "invalid --tmp-size `1G `: not a size" TMP_R},
    {"--tmp-size", "0x100000", 0, "invalid --tmp-size `0x100000`: not a size" TMP_R},
    {"--tmp-size", "1e9", 0, "invalid --tmp-size `1e9`: not a size" TMP_R},
    {"--tmp-size", "1.5G", 0, "invalid --tmp-size `1.5G`: not a size" TMP_R},
    {"--tmp-size", "", 0, "invalid --tmp-size ``: not a size" TMP_R},
    {"--tmp-size", "1P", 0, "invalid --tmp-size `1P`: not a size" TMP_R},

    {"--memory", "0", 0, "invalid --memory `0`: zero" MEM_R},
    {"--memory", "1", 0, "invalid --memory `1`: too small for a sandbox to start" MEM_R},
    {"--memory", "16777215", 0, "invalid --memory `16777215`: too small for a sandbox to start" MEM_R},
    {"--memory", "16M", 16ULL << 20, NULL},
    {"--memory", "16777217", (16ULL << 20) + 1, NULL},
    {"--memory", "1024TiB", 1ULL << 50, NULL},
    {"--memory", "1125899906842625", 0, "invalid --memory `1125899906842625`: too large" MEM_R},
    {"--memory", "9223372036854775807", 0, "invalid --memory `9223372036854775807`: too large" MEM_R},
    {"--memory", "9223372036854775808", 0, "invalid --memory `9223372036854775808`: too large" MEM_R},
    {"--memory", "18446744073709551615", 0, "invalid --memory `18446744073709551615`: too large" MEM_R},
    {"--memory", "18446744073709551616", 0, "invalid --memory `18446744073709551616`: too large" MEM_R},
    {"--memory", "99999999999999999999999", 0, "invalid --memory `99999999999999999999999`: too large" MEM_R},
    {"--memory", "17179869184G", 0, "invalid --memory `17179869184G`: too large" MEM_R},
    {"--memory", "8589934592g", 0, "invalid --memory `8589934592g`: too large" MEM_R},
    {"--memory", "-1", 0, "invalid --memory `-1`: not a size" MEM_R},
    {"--memory", "+1G", 0, "invalid --memory `+1G`: not a size" MEM_R},
    {"--memory", "\t1G", 0, "invalid --memory `\t1G`: not a size" MEM_R},
    {"--memory", "0x40000000", 0, "invalid --memory `0x40000000`: not a size" MEM_R},
    {"--memory", "", 0, "invalid --memory ``: not a size" MEM_R},
    {"--memory", "1G1", 0, "invalid --memory `1G1`: not a size" MEM_R},

    {"--cpus", "0", 0, "invalid --cpus `0`: zero" CPU_R},
    {"--cpus", "0.009", 0, "invalid --cpus `0.009`: too small" CPU_R},
    {"--cpus", "0.01", 10, NULL},
    {"--cpus", "1", 1000, NULL},
    {"--cpus", "0.125", 125, NULL},
    {"--cpus", "1024", 1024000, NULL},
    {"--cpus", "1024.000", 1024000, NULL},
    {"--cpus", "1024.001", 0, "invalid --cpus `1024.001`: too large" CPU_R},
    {"--cpus", "1025", 0, "invalid --cpus `1025`: too large" CPU_R},
    {"--cpus", "9223372036854775807", 0, "invalid --cpus `9223372036854775807`: too large" CPU_R},
    {"--cpus", "9223372036854775808", 0, "invalid --cpus `9223372036854775808`: too large" CPU_R},
    {"--cpus", "18446744073709551615", 0, "invalid --cpus `18446744073709551615`: too large" CPU_R},
    {"--cpus", "18446744073709551616", 0, "invalid --cpus `18446744073709551616`: too large" CPU_R},
    {"--cpus", "0.0005", 0, "invalid --cpus `0.0005`: finer than 0.001 CPU" CPU_R},
    {"--cpus", "5.0000", 0, "invalid --cpus `5.0000`: more than 3 decimals" CPU_R},
    {"--cpus", "0.5000000000", 0, "invalid --cpus `0.5000000000`: more than 3 decimals" CPU_R},
    {"--cpus", "1.0000x", 0, "invalid --cpus `1.0000x`: not a number of CPUs" CPU_R},
    {"--cpus", "0.1250", 0, "invalid --cpus `0.1250`: more than 3 decimals" CPU_R},
    {"--cpus", "-1", 0, "invalid --cpus `-1`: not a number of CPUs" CPU_R},
    {"--cpus", "+1", 0, "invalid --cpus `+1`: not a number of CPUs" CPU_R},
    {"--cpus", " 1", 0, "invalid --cpus ` 1`: not a number of CPUs" CPU_R},
    {"--cpus", "0x1", 0, "invalid --cpus `0x1`: not a number of CPUs" CPU_R},
    {"--cpus", "1e2", 0, "invalid --cpus `1e2`: not a number of CPUs" CPU_R},
    {"--cpus", "inf", 0, "invalid --cpus `inf`: not a number of CPUs" CPU_R},
    {"--cpus", "nan", 0, "invalid --cpus `nan`: not a number of CPUs" CPU_R},
    {"--cpus", "1.", 0, "invalid --cpus `1.`: not a number of CPUs" CPU_R},
    {"--cpus", ".5", 0, "invalid --cpus `.5`: not a number of CPUs" CPU_R},
    {"--cpus", "", 0, "invalid --cpus ``: not a number of CPUs" CPU_R},

    {"--pids", "0", 0, "invalid --pids `0`: zero" PID_R},
    {"--pids", "1", 0, "invalid --pids `1`: too small" PID_R},
    {"--pids", "2", 2, NULL},
    {"--pids", "4194304", 4194304, NULL},
    {"--pids", "4194305", 0, "invalid --pids `4194305`: too large" PID_R},
    {"--pids", "4294967297", 0, "invalid --pids `4294967297`: too large" PID_R}, /* 2^32 + 1 */
    {"--pids", "9223372036854775807", 0, "invalid --pids `9223372036854775807`: too large" PID_R},
    {"--pids", "9223372036854775808", 0, "invalid --pids `9223372036854775808`: too large" PID_R},
    {"--pids", "18446744073709551615", 0, "invalid --pids `18446744073709551615`: too large" PID_R},
    {"--pids", "18446744073709551616", 0, "invalid --pids `18446744073709551616`: too large" PID_R},
    {"--pids", "-1", 0, "invalid --pids `-1`: not a whole number" PID_R},
    {"--pids", "+5", 0, "invalid --pids `+5`: not a whole number" PID_R},
    {"--pids", " 5", 0, "invalid --pids ` 5`: not a whole number" PID_R},
    {"--pids", "5 ", 0, "invalid --pids `5 `: not a whole number" PID_R},
    {"--pids", "0x10", 0, "invalid --pids `0x10`: not a whole number" PID_R},
    {"--pids", "1e3", 0, "invalid --pids `1e3`: not a whole number" PID_R},
    {"--pids", "1K", 0, "invalid --pids `1K`: not a whole number" PID_R},
    {"--pids", "", 0, "invalid --pids ``: not a whole number" PID_R},

    {"--nofile", "0", 0, "invalid --nofile `0`: zero" NOF_R},
    {"--nofile", "1", 0, "invalid --nofile `1`: too small" NOF_R},
    {"--nofile", "15", 0, "invalid --nofile `15`: too small" NOF_R},
    {"--nofile", "16", 16, NULL},
    {"--nofile", "1048577", 0, "invalid --nofile `1048577`: too large" NOF_R},
    {"--nofile", "9223372036854775807", 0, "invalid --nofile `9223372036854775807`: too large" NOF_R},
    {"--nofile", "9223372036854775808", 0, "invalid --nofile `9223372036854775808`: too large" NOF_R},
    {"--nofile", "18446744073709551615", 0, "invalid --nofile `18446744073709551615`: too large" NOF_R},
    {"--nofile", "18446744073709551616", 0, "invalid --nofile `18446744073709551616`: too large" NOF_R},
    {"--nofile", "-1", 0, "invalid --nofile `-1`: not a whole number" NOF_R},
    {"--nofile", "+64", 0, "invalid --nofile `+64`: not a whole number" NOF_R},
    {"--nofile", "0x40", 0, "invalid --nofile `0x40`: not a whole number" NOF_R},
    {"--nofile", "", 0, "invalid --nofile ``: not a whole number" NOF_R},

    {"--timeout", "0", 0, "invalid --timeout `0`: zero" TMO_R},
    {"--timeout", "0ms", 0, "invalid --timeout `0ms`: zero" TMO_R},
    {"--timeout", "1ms", 1, NULL},
    {"--timeout", "1", 1000, NULL},
    {"--timeout", "1.5m", 90000, NULL},
    {"--timeout", "0.001", 1, NULL},
    {"--timeout", "8760h", 31536000000ULL, NULL},
    {"--timeout", "31536000", 31536000000ULL, NULL},
    {"--timeout", "31536000001ms", 0, "invalid --timeout `31536000001ms`: too large" TMO_R},
    {"--timeout", "8761h", 0, "invalid --timeout `8761h`: too large" TMO_R},
    {"--timeout", "9223372036854775807", 0, "invalid --timeout `9223372036854775807`: too large" TMO_R},
    {"--timeout", "9223372036854775808ms", 0, "invalid --timeout `9223372036854775808ms`: too large" TMO_R},
    {"--timeout", "18446744073709551615ms", 0, "invalid --timeout `18446744073709551615ms`: too large" TMO_R},
    {"--timeout", "18446744073709551616", 0, "invalid --timeout `18446744073709551616`: too large" TMO_R},
    {"--timeout", "5124095576030432h", 0, "invalid --timeout `5124095576030432h`: too large" TMO_R},
    {"--timeout", "0.0001", 0, "invalid --timeout `0.0001`: finer than a millisecond" TMO_R},
    {"--timeout", "1.5ms", 0, "invalid --timeout `1.5ms`: finer than a millisecond" TMO_R},
    {"--timeout", "-1", 0, "invalid --timeout `-1`: not a duration" TMO_R},
    {"--timeout", "+1s", 0, "invalid --timeout `+1s`: not a duration" TMO_R},
    {"--timeout", " 1s", 0, "invalid --timeout ` 1s`: not a duration" TMO_R},
    {"--timeout", "0x10", 0, "invalid --timeout `0x10`: not a duration" TMO_R},
    {"--timeout", "1e3", 0, "invalid --timeout `1e3`: not a duration" TMO_R},
    {"--timeout", "1h30m", 0, "invalid --timeout `1h30m`: not a duration" TMO_R},
    {"--timeout", "inf", 0, "invalid --timeout `inf`: not a duration" TMO_R},
    {"--timeout", "", 0, "invalid --timeout ``: not a duration" TMO_R},
};

static uint64_t stored(const struct berth_policy *p, const char *opt)
{
	if (strcmp(opt, "--tmp-size") == 0)
		return p->tmp_size;
	if (strcmp(opt, "--memory") == 0)
		return p->memory;
	if (strcmp(opt, "--cpus") == 0)
		return p->millicpus;
	if (strcmp(opt, "--pids") == 0)
		return p->pids;
	if (strcmp(opt, "--nofile") == 0)
		return p->nofile;
	return p->timeout_ms;
}

static void test_limit_extremes(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof extremes / sizeof extremes[0]; i++) {
		const struct extreme *x = &extremes[i];
		struct berth_run_opts o;
		struct berth_error err;
		int r = parse(&o, &err, "--workspace", "/usr", x->opt, x->val, "--", "x", NULL);

		if (x->msg == NULL) {
			if (r != 0)
				fail_msg("%s `%s`: refused: %s", x->opt, x->val, err.msg);
			if (stored(&o.policy, x->opt) != x->want)
				fail_msg("%s `%s`: stored %llu, want %llu", x->opt, x->val,
					 (unsigned long long)stored(&o.policy, x->opt),
					 (unsigned long long)x->want);
		} else {
			if (r != -1 || err.status != BERTH_EXIT_USAGE)
				fail_msg("%s `%s`: accepted (r %d, status %d)", x->opt, x->val, r,
					 err.status);
			if (strcmp(err.msg, x->msg) != 0)
				fail_msg("%s `%s`:\n got `%s`\nwant `%s`", x->opt, x->val, err.msg, x->msg);
			assert_true(err.hint[0] != '\0');
		}
		berth_run_opts_free(&o);
	}
	/* --nofile's maximum, where berth's own hard limit allows it */
	{
		struct berth_run_opts o;
		struct berth_error err;
		struct rlimit rl;
		assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
		if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= 1048576) {
			assert_int_equal(
			    parse(&o, &err, "--workspace", "/usr", "--nofile", "1048576", "--", "x", NULL),
			    0);
			assert_int_equal(o.policy.nofile, 1048576);
		} else {
			char want[200], val[24];
			snprintf(val, sizeof val, "%llu", (unsigned long long)rl.rlim_max + 1);
			snprintf(want, sizeof want,
				 "invalid --nofile `%s`: above berth's own hard limit %llu, expected 16 to "
				 "%llu here",
				 val, (unsigned long long)rl.rlim_max, (unsigned long long)rl.rlim_max);
			assert_int_equal(
			    parse(&o, &err, "--workspace", "/usr", "--nofile", val, "--", "x", NULL), -1);
			assert_int_equal(err.status, BERTH_EXIT_USAGE);
			assert_string_equal(err.msg, want);
			berth_run_opts_free(&o);
			snprintf(val, sizeof val, "%llu", (unsigned long long)rl.rlim_max);
			assert_int_equal(
			    parse(&o, &err, "--workspace", "/usr", "--nofile", val, "--", "x", NULL), 0);
		}
		berth_run_opts_free(&o);
	}
	/* the hints name how each kind is written */
	{
		struct berth_run_opts o;
		struct berth_error err;
		assert_int_equal(parse(&o, &err, "--workspace", "/usr", "--memory", "1Q", "--", "x", NULL),
				 -1);
		assert_string_equal(err.hint,
				    "write a size in bytes, or with a suffix K, M, G or T (powers of "
				    "1024), such as `512M` or `8G`");
		berth_run_opts_free(&o);
		assert_int_equal(parse(&o, &err, "--workspace", "/usr", "--timeout", "1d", "--", "x", NULL),
				 -1);
		assert_string_equal(err.hint,
				    "write a duration with a unit ms, s (the default), m or h, such as "
				    "`30s`, `500ms`, `1.5m` or `2h`");
		berth_run_opts_free(&o);
	}
}

/* A policy made another way than from flags (a session, an app, a test)
 * with a value past a maximum: refused by the validator and the runtime,
 * never applied as no limit. */
static void test_limit_validate_values(void **state)
{
	static const struct {
		size_t off;
		bool wide;
		uint64_t v;
		const char *msg;
	} cases[] = {
	    {offsetof(struct berth_policy, memory), true, 1ULL << 63,
	     "invalid --memory `9223372036854775808`: too large" MEM_R},
	    {offsetof(struct berth_policy, memory), true, UINT64_MAX,
	     "invalid --memory `18446744073709551615`: too large" MEM_R},
	    {offsetof(struct berth_policy, memory), true, 0, "invalid --memory `0`: zero" MEM_R},
	    {offsetof(struct berth_policy, tmp_size), true, 1ULL << 63,
	     "invalid --tmp-size `9223372036854775808`: too large" TMP_R},
	    {offsetof(struct berth_policy, tmp_size), true, 0, "invalid --tmp-size `0`: zero" TMP_R},
	    {offsetof(struct berth_policy, timeout_ms), true, UINT64_MAX,
	     "invalid --timeout `18446744073709551615ms`: too large" TMO_R},
	    {offsetof(struct berth_policy, millicpus), false, UINT32_MAX,
	     "invalid --cpus `4294967.295`: too large" CPU_R},
	    {offsetof(struct berth_policy, pids), false, 0, "invalid --pids `0`: zero" PID_R},
	    {offsetof(struct berth_policy, pids), false, UINT32_MAX,
	     "invalid --pids `4294967295`: too large" PID_R},
	    {offsetof(struct berth_policy, nofile), false, 0, "invalid --nofile `0`: zero" NOF_R},
	};

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct berth_policy p;
		struct berth_error err = {0};
		struct berth_sandbox *sb = NULL;
		struct berth_runtime_opts ro = {0};

		berth_policy_init(&p);
		p.workspace = strdup("/usr");
		p.argv = calloc(2, sizeof *p.argv);
		p.argv[0] = strdup("true");
		p.argc = 1;
		if (cases[i].wide)
			*(uint64_t *)((char *)&p + cases[i].off) = cases[i].v;
		else
			*(uint32_t *)((char *)&p + cases[i].off) = (uint32_t)cases[i].v;
		assert_int_equal(berth_policy_validate(&p, &err), -1);
		assert_int_equal(err.status, BERTH_EXIT_USAGE);
		assert_string_equal(err.msg, cases[i].msg);
		memset(&err, 0, sizeof err);
		assert_int_equal(berth_sandbox_start(&p, &ro, &sb, &err), -1);
		assert_null(sb);
		assert_string_equal(err.msg, cases[i].msg);
		berth_policy_free(&p);
	}
	/* an app's names its berth.yml field */
	{
		struct berth_policy p;
		struct berth_error err = {0};
		berth_policy_init(&p);
		p.app = true;
		p.memory = 1ULL << 63;
		assert_int_equal(berth_policy_validate(&p, &err), -1);
		assert_string_equal(err.msg,
				    "invalid resources.memory `9223372036854775808`: too large" MEM_R);
		berth_policy_free(&p);
	}
	/* the numbers of commands that are no policy limit */
	{
		struct berth_error err = {0};
		uint64_t v = 7;
		static const char *const bad[][2] = {
		    {" 5", "invalid --lines ` 5`: not a whole number, expected 1 to 10000"},
		    {"+5", "invalid --lines `+5`: not a whole number, expected 1 to 10000"},
		    {"-1", "invalid --lines `-1`: not a whole number, expected 1 to 10000"},
		    {"0x10", "invalid --lines `0x10`: not a whole number, expected 1 to 10000"},
		    {"", "invalid --lines ``: not a whole number, expected 1 to 10000"},
		    {"0", "invalid --lines `0`: zero, expected 1 to 10000"},
		    {"10001", "invalid --lines `10001`: too large, expected 1 to 10000"},
		    {"18446744073709551615",
		     "invalid --lines `18446744073709551615`: too large, expected 1 to 10000"},
		    {"18446744073709551616",
		     "invalid --lines `18446744073709551616`: too large, expected 1 to 10000"},
		};
		for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
			assert_int_equal(berth_parse_count(bad[i][0], "--lines", 1, 10000, &v, &err), -1);
			assert_int_equal(err.status, BERTH_EXIT_USAGE);
			assert_string_equal(err.msg, bad[i][1]);
			assert_int_equal(v, 7);
		}
		assert_int_equal(berth_parse_count("10000", "--lines", 1, 10000, &v, &err), 0);
		assert_int_equal(v, 10000);
		assert_int_equal(berth_parse_count("0", "BERTH_RUNS_KEEP", 0, 100000000, &v, &err), 0);
		assert_int_equal(v, 0);
	}
	/* the ranges as the parsers of berth.yml and rules files see them */
	{
		struct berth_error err = {0};
		uint64_t v = 7;
		assert_int_equal(
		    berth_limit_parse(BERTH_LIMIT_MEMORY, "memory size", "17179869184G", &v, &err), -1);
		assert_string_equal(err.msg, "invalid memory size `17179869184G`: too large" MEM_R);
		assert_int_equal(v, 7); /* nothing stored */
		assert_int_equal(berth_limit_parse(BERTH_LIMIT_NOFILE, NULL, "1048576", &v, &err), 0);
		assert_int_equal(v, 1048576);
		assert_int_equal(berth_limit_parse(BERTH_LIMIT_TMP_SIZE, NULL, "1024T", &v, &err), 0);
		assert_int_equal(v, 1ULL << 50);
	}
}

/* A container's policy: its part is in the canonical form (the engine's
 * seccomp profile by digest only), other policies keep theirs, and the
 * validator refuses what the runtime could not use. */
static void test_container_policy(void **state)
{
	struct berth_policy p;
	struct berth_error err = {0};
	char before[65], after[65];
	char *j;

	(void)state;
	berth_policy_init(&p);
	p.argv = calloc(2, sizeof *p.argv);
	p.argv[0] = strdup("/bin/sh");
	p.argc = 1;
	assert_int_equal(berth_policy_digest(&p, before, &err), 0);
	j = berth_policy_to_json(&p, false, &err);
	assert_null(strstr(j, "\"container\""));
	free(j);
	p.container = calloc(1, sizeof *p.container);
	p.container->id = strdup("c1");
	p.container->root = strdup("/var/lib/x/rootfs");
	p.container->cwd = strdup("/");
	p.container->seccomp = strdup("{\"defaultAction\":\"SCMP_ACT_ALLOW\"}");
	assert_int_equal(berth_policy_validate(&p, &err), 0);
	j = berth_policy_to_json(&p, false, &err);
	assert_non_null(strstr(j, "\"container\":{"));
	assert_non_null(strstr(j, "\"root\":\"/var/lib/x/rootfs\""));
	assert_non_null(strstr(j, "\"seccomp_sha256\":\""));
	assert_null(strstr(j, "SCMP_ACT_ALLOW"));
	free(j);
	assert_int_equal(berth_policy_digest(&p, after, &err), 0);
	assert_string_not_equal(before, after);
	/* a relative working directory, a 65-byte hostname, a workspace
	 * without its target: each refused with status 2 */
	free(p.container->cwd);
	p.container->cwd = strdup("work");
	assert_int_equal(berth_policy_validate(&p, &err), -1);
	assert_int_equal(err.status, 2);
	free(p.container->cwd);
	p.container->cwd = strdup("/");
	p.container->hostname = strdup("h2345678901234567890123456789012345678901234567890123456789012345");
	assert_int_equal(berth_policy_validate(&p, &err), -1);
	assert_non_null(strstr(err.msg, "hostname"));
	free(p.container->hostname);
	p.container->hostname = NULL;
	/* id ranges: never host id 0, the process's ids inside them */
	p.container->uid_range = (struct berth_idrange){0, 100000, 65536};
	p.container->gid_range = p.container->uid_range;
	assert_int_equal(berth_policy_validate(&p, &err), 0);
	p.container->uid = 70000;
	assert_int_equal(berth_policy_validate(&p, &err), -1);
	assert_non_null(strstr(err.msg, "uid 70000 is outside its mapped range 0:100000:65536"));
	p.container->uid = 0;
	p.container->gid_range.host = 0;
	assert_int_equal(berth_policy_validate(&p, &err), -1);
	assert_non_null(strstr(err.msg, "gid range 0:0:65536 would map host id 0"));
	p.container->gid_range = (struct berth_idrange){0};
	assert_int_equal(berth_policy_validate(&p, &err), -1);
	assert_non_null(strstr(err.msg, "uids and gids, or neither"));
	p.container->uid_range = (struct berth_idrange){0};
	p.workspace = strdup("/tmp");
	assert_int_equal(berth_policy_validate(&p, &err), -1);
	assert_non_null(strstr(err.msg, "workspace"));
	berth_policy_free(&p);
	assert_null(p.container);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_container_policy),
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_limits_parsing),
	    cmocka_unit_test(test_bad_input),
	    cmocka_unit_test(test_home_refused),
	    cmocka_unit_test(test_widenings),
	    cmocka_unit_test(test_env),
	    cmocka_unit_test(test_canonical_digest),
	    cmocka_unit_test(test_unprotect_removes_guard),
	    cmocka_unit_test(test_sysdirs_table),
	    cmocka_unit_test(test_limit_mounts),
	    cmocka_unit_test(test_limit_allow_hosts),
	    cmocka_unit_test(test_limit_ports),
	    cmocka_unit_test(test_limit_env),
	    cmocka_unit_test(test_limit_grants_landlock),
	    cmocka_unit_test(test_limit_callers),
	    cmocka_unit_test(test_env_name_and_network_name),
	    cmocka_unit_test(test_limit_extremes),
	    cmocka_unit_test(test_limit_validate_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
