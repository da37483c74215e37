/* SPDX-License-Identifier: MIT */
/*
 * test_runtime.c - the runtime interface (src/runtime/runtime.h): the table
 * of runtimes, the namespace runtime's ops, and what a runtime refuses before
 * anything is made when the supervisor did not attach what the policy needs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "sandbox/sandbox.h"
#include "supervisor/run.h"

static void test_find(void **state)
{
	struct berth_error err = {0};
	const struct berth_runtime_ops *rt;

	(void)state;
	rt = berth_runtime_find(NULL, &err);
	assert_non_null(rt);
	assert_ptr_equal(rt, berth_runtime_default());
	assert_ptr_equal(rt, &berth_runtime_namespace);
	assert_string_equal(rt->name, "namespace");
	/* `--runtime ''` is refused as an unknown name is, not the default */
	assert_null(berth_runtime_find("", &err));
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	assert_string_equal(err.msg, "empty runtime name; this berth has: namespace, vm");
	err = (struct berth_error){0};
	assert_ptr_equal(berth_runtime_find("namespace", &err), rt);
	assert_null(berth_runtime_find("oci", &err));
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	assert_string_equal(err.msg, "unknown runtime `oci`; this berth has: namespace, vm");
	assert_ptr_equal(berth_runtime_find("vm", &err), &berth_runtime_vm);
}

/* Every op is there: a caller never checks for NULL. */
static void test_ops_complete(void **state)
{
	const struct berth_runtime_ops *rt = &berth_runtime_namespace;

	(void)state;
	assert_non_null(rt->check);
	assert_non_null(rt->run);
	assert_non_null(rt->start);
	assert_non_null(rt->pidfd);
	assert_non_null(rt->wait);
	assert_non_null(rt->kill);
	assert_non_null(rt->free);
	assert_non_null(rt->enforced);
	assert_non_null(rt->measure);
	assert_non_null(rt->pty_master);
	assert_non_null(rt->run_id);
}

static void proxy_policy(struct berth_policy *p)
{
	berth_policy_init(p);
	p->workspace = strdup("/usr");
	p->argv = calloc(2, sizeof *p->argv);
	p->argv[0] = strdup("true");
	p->argc = 1;
	p->network = BERTH_NET_PROXY;
	p->allow_hosts = calloc(1, sizeof *p->allow_hosts);
	p->allow_hosts[0] = strdup("example.com");
	p->n_allow_hosts = 1;
}

/* --network proxy with no broker attached: the listeners would be served by
 * nobody, so the runtime refuses before it makes anything. */
static void test_proxy_needs_egress_hook(void **state)
{
	struct berth_policy p;
	struct berth_runtime_opts ro = {0};
	struct berth_sandbox *sb = (struct berth_sandbox *)&ro; /* must be reset to NULL */
	struct berth_error err = {0};
	int status = -7;

	(void)state;
	proxy_policy(&p);
	assert_int_equal(berth_sandbox_start(&p, &ro, &sb, &err), -1);
	assert_null(sb);
	assert_string_equal(err.msg,
			    "--network proxy needs the supervisor's egress broker (hooks.on_egress), and "
			    "none is attached");
	memset(&err, 0, sizeof err);
	assert_int_equal(berth_sandbox_run(&p, &ro, &status, &err), -1);
	assert_int_equal(status, -7);
	assert_string_equal(err.msg,
			    "--network proxy needs the supervisor's egress broker (hooks.on_egress), and "
			    "none is attached");
	berth_policy_free(&p);
}

/* berth_run_attach fills the hooks that every runtime calls: the broker's
 * among them, so a proxy run through the lifecycle is never refused so. */
static void test_attach_fills_hooks(void **state)
{
	struct berth_policy p;
	struct berth_runtime_opts ro = {0};
	struct berth_run r;
	struct berth_error err = {0};
	const char *rm[1] = {"/nonexistent/berth-test"};

	(void)state;
	proxy_policy(&p);
	assert_int_equal(
	    berth_run_init(&r,
			   &(struct berth_run_spec){.policy = &p, .remove_at_end = rm, .n_remove_at_end = 1},
			   NULL, &err),
	    0);
	assert_int_equal(strlen(berth_run_id(&r)), 16);
	berth_run_attach(&r, &ro);
	assert_ptr_equal(ro.run_id, berth_run_id(&r));
	assert_ptr_equal(ro.hooks.arg, &r);
	assert_non_null(ro.hooks.on_spawned);
	assert_non_null(ro.hooks.before_release);
	assert_non_null(ro.hooks.on_egress);
	assert_non_null(ro.hooks.on_measured);
	assert_ptr_equal(ro.remove_at_end, rm);
	assert_int_equal(ro.n_remove_at_end, 1);
	/* not recorded: joining is a no-op, there is no log and no queue */
	assert_int_equal(berth_run_join(&r, &err), 0);
	assert_null(berth_run_audit(&r));
	assert_null(berth_run_queue(&r));
	berth_run_end(&r, 0, NULL);
	berth_policy_free(&p);
}

/* The run's records as one string (the first audit file of @dir). */
static char *read_log(const char *dir)
{
	char path[256], *buf = calloc(1, 1 << 16);
	FILE *f;

	snprintf(path, sizeof path, "%s/audit-0000000000000001.jsonl", dir);
	f = fopen(path, "re");
	assert_non_null(f);
	assert_true(fread(buf, 1, (1 << 16) - 1, f) > 0);
	fclose(f);
	return buf;
}

/* run.start and policy of a run whose env is all declared secrets (berth
 * oci's), recorded in @dir; with or without @public_env. */
static char *record_run(const char *dir, const char *const *public_env)
{
	struct berth_policy p;
	struct berth_run r;
	struct berth_error err = {0};
	json_t *extra = json_pack("{s:s}", "container", "0123456789abcdef0123");

	berth_policy_init(&p);
	p.argv = calloc(4, sizeof *p.argv);
	p.argv[0] = strdup("echo");
	p.argv[1] = strdup("0123456789ab");
	p.argv[2] = strdup("s3cr3t-value");
	p.argc = 3;
	p.env = calloc(2, sizeof *p.env);
	p.env[0] = (struct berth_env){.name = strdup("HOSTNAME"), .value = strdup("0123456789ab")};
	p.env[1] = (struct berth_env){.name = strdup("TOKEN"), .value = strdup("s3cr3t-value")};
	p.n_env = 2;
	setenv("BERTH_AUDIT_DIR", dir, 1);
	assert_int_equal(
	    berth_run_init(&r,
			   &(struct berth_run_spec){
			       .policy = &p, .audit = true, .start_extra = extra, .public_env = public_env},
			   NULL, &err),
	    0);
	assert_int_equal(berth_run_record_now(&r, &err), 0);
	berth_run_end(&r, 0, NULL);
	unsetenv("BERTH_AUDIT_DIR");
	json_decref(extra);
	berth_policy_free(&p);
	return read_log(dir);
}

/* spec.public_env: those variables' values are not secrets of the log (berth
 * oci: podman's HOSTNAME is the container id's first 12 digits, and blanked
 * it in run.start); every other value still is. */
static void test_public_env(void **state)
{
	static const char *const pub[] = {"HOSTNAME", NULL};
	char base[] = "/tmp/berth-test-runtime-XXXXXX", d1[64], d2[64], cmd[96];
	char *log;

	(void)state;
	assert_non_null(mkdtemp(base));
	snprintf(d1, sizeof d1, "%s/state", base);
	setenv("XDG_STATE_HOME", d1, 1);
	snprintf(d1, sizeof d1, "%s/cfg", base);
	setenv("XDG_CONFIG_HOME", d1, 1);
	snprintf(d1, sizeof d1, "%s/a1", base);
	snprintf(d2, sizeof d2, "%s/a2", base);

	log = record_run(d1, NULL);
	assert_non_null(strstr(log, "\"container\":\"[secret]cdef0123\""));
	assert_non_null(strstr(log, "\"argv\":[\"echo\",\"[secret]\",\"[secret]\"]"));
	assert_null(strstr(log, "s3cr3t-value"));
	free(log);

	log = record_run(d2, pub);
	assert_non_null(strstr(log, "\"container\":\"0123456789abcdef0123\""));
	assert_non_null(strstr(log, "\"argv\":[\"echo\",\"0123456789ab\",\"[secret]\"]"));
	assert_null(strstr(log, "s3cr3t-value"));
	free(log);

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_find),
	    cmocka_unit_test(test_ops_complete),
	    cmocka_unit_test(test_proxy_needs_egress_hook),
	    cmocka_unit_test(test_attach_fills_hooks),
	    cmocka_unit_test(test_public_env),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
