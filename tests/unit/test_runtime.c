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
	assert_ptr_equal(berth_runtime_find("", &err), rt);
	assert_ptr_equal(berth_runtime_find("namespace", &err), rt);
	assert_null(berth_runtime_find("oci", &err));
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	assert_string_equal(err.msg, "unknown runtime `oci`; this berth has: namespace");
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_find),
	    cmocka_unit_test(test_ops_complete),
	    cmocka_unit_test(test_proxy_needs_egress_hook),
	    cmocka_unit_test(test_attach_fills_hooks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
