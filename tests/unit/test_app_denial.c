/* SPDX-License-Identifier: MIT */
/*
 * test_app_denial.c - the BERTH CAPABILITY DENIAL block for a destination
 * berth's egress refused (berth_app_net_denial, src/supervisor/app.c): a
 * block only for what the app's own network:host patterns refuse, naming the
 * destination, the rule and the capability that would declare it.
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

#include "supervisor/app_int.h"

static char *pats[] = {"git.example.com", "127.0.0.1:8443", "*.forge.example:443", "[2001:db8::1]:9418"};

static struct berth_app *app(void)
{
	static struct berth_app a;
	memset(&a, 0, sizeof a);
	a.m.name = (char *)"git";
	snprintf(a.paths.manifest, sizeof a.paths.manifest, "/srv/apps/git/berth.yml");
	a.p.network = BERTH_NET_PROXY;
	a.p.allow_hosts = pats;
	a.p.n_allow_hosts = sizeof pats / sizeof pats[0];
	return &a;
}

static void expect(const char *host, long long port, const char *denied, const char *fix)
{
	char *b = berth_app_net_denial(app(), host, port);
	assert_non_null(b);
	assert_true(
	    strncmp(b, "BERTH CAPABILITY DENIAL\napp: git   manifest: /srv/apps/git/berth.yml\n", 69) == 0);
	if (strstr(b, denied) == NULL || strstr(b, fix) == NULL)
		fail_msg("block:\n%s\nwant: %s\nand: %s", b, denied, fix);
	assert_non_null(strstr(b, "denied-by: berth's egress policy compiled from \"git\"'s berth.yml"));
	free(b);
}

static void refused_destinations(void **state)
{
	(void)state;
	expect("other.example", 443, "denied: connect(2) to other.example:443 (not declared)\n",
	       "fix: add \"network:host:other.example\" to capabilities in /srv/apps/git/berth.yml\n");
	expect("git.example.com", 8080,
	       "denied: connect(2) to git.example.com:8080 (port 8080 not declared for git.example.com)",
	       "fix: add \"network:host:git.example.com:8080\"");
	expect("127.0.0.1", 9, "to 127.0.0.1:9 (port 9 not declared for 127.0.0.1)",
	       "\"network:host:127.0.0.1:9\"");
	expect("forge.example", 443, "to forge.example:443 (not declared)", "\"network:host:forge.example\"");
	expect("2001:db8::2", 9418, "to [2001:db8::2]:9418", "\"network:host:[2001:db8::2]:9418\"");
	expect("GIT.Example.COM.", 22, "to git.example.com:22", "\"network:host:git.example.com:22\"");
}

static void declared_destinations_get_no_block(void **state)
{
	(void)state;
	/* an app cannot have berth explain a refusal berth would not make */
	assert_null(berth_app_net_denial(app(), "git.example.com", 443));
	assert_null(berth_app_net_denial(app(), "git.example.com", 80));
	assert_null(berth_app_net_denial(app(), "127.0.0.1", 8443));
	assert_null(berth_app_net_denial(app(), "a.b.forge.example", 443));
	assert_null(berth_app_net_denial(app(), "[2001:db8::1]", 9418));
}

static void bad_reports_get_no_block(void **state)
{
	(void)state;
	assert_null(berth_app_net_denial(app(), NULL, 443));
	assert_null(berth_app_net_denial(app(), "other.example", 0));
	assert_null(berth_app_net_denial(app(), "other.example", 65536));
	assert_null(berth_app_net_denial(app(), "other.example", -1));
}

static void control_bytes_are_escaped(void **state)
{
	(void)state;
	/* the host comes from the app: never raw on a terminal */
	char *b = berth_app_net_denial(app(), "evil\x1b]0;x\x07.example", 443);
	if (b != NULL) {
		assert_null(strchr(b, '\x1b'));
		assert_null(strchr(b, '\x07'));
		free(b);
	}
}

static void no_network_at_all(void **state)
{
	(void)state;
	struct berth_app *a = app();
	a->p.network = BERTH_NET_NONE;
	a->p.n_allow_hosts = 0;
	char *b = berth_app_net_denial(a, "db.example", 5432);
	assert_non_null(b);
	assert_non_null(strstr(b, "fix: add \"network:host:db.example:5432\" to capabilities in "
				  "/srv/apps/git/berth.yml (the app then gets the egress broker)"));
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(refused_destinations),     cmocka_unit_test(declared_destinations_get_no_block),
	    cmocka_unit_test(bad_reports_get_no_block), cmocka_unit_test(control_bytes_are_escaped),
	    cmocka_unit_test(no_network_at_all),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
