/* SPDX-License-Identifier: MIT */
/*
 * test_rules.c - rules files (src/policy/rules.c): every key allows and
 * denies, a later (project) file cannot widen an earlier (user) one,
 * malformed files are refused with file:line:col, and the lookup finds the
 * system, user and nearest project file.  Policies come from the real
 * `berth run` option parser.
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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/flags.h"
#include "policy/rules.h"
#include "policy/trust.h"

static char workdir[PATH_MAX]; /* a real directory: the workspace and --rw sources live here */

static char *fake_env(const char *name)
{
	if (strcmp(name, "ANTHROPIC_API_KEY") == 0 || strcmp(name, "GH_TOKEN") == 0)
		return (char *)"secret";
	return NULL;
}

/* Parse `berth run ARGS -- true` with the workspace in workdir. */
static void opts(struct berth_run_opts *o, const char *args)
{
	char *argv[64], buf[2048];
	int argc = 0;
	struct berth_error err = {0};

	argv[argc++] = (char *)"run";
	argv[argc++] = (char *)"--workspace";
	argv[argc++] = workdir;
	snprintf(buf, sizeof buf, "%s", args);
	for (char *t = strtok(buf, " "); t != NULL && argc < 60; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc++] = (char *)"--";
	argv[argc++] = (char *)"true";
	argv[argc] = NULL;
	if (berth_run_parse(argc, argv, fake_env, o, &err) < 0)
		fail_msg("berth run %s: %s", args, err.msg);
}

/* Check @args against the rules texts (NULL-terminated, named f0.yml, f1.yml...).
 * @want NULL: allowed; else the message must contain it. */
static void expect(const char *const *files, const char *args, const char *want)
{
	struct berth_error err = {0};
	struct berth_rules *r = berth_rules_new(&err);
	struct berth_run_opts o;
	struct berth_widening_ctx ctx = {0};
	int rc;

	assert_non_null(r);
	for (int i = 0; files[i] != NULL; i++) {
		char name[32];
		snprintf(name, sizeof name, "f%d.yml", i);
		if (berth_rules_add(r, files[i], strlen(files[i]), name, &err) < 0)
			fail_msg("rules %s: %s", name, err.msg);
	}
	opts(&o, args);
	ctx.network_mode = o.network_mode;
	rc = berth_rules_check(r, &o.policy, &ctx, &err);
	berth_run_opts_free(&o);
	berth_rules_free(r);
	if (want == NULL && rc != 0)
		fail_msg("`%s` was refused: %s", args, err.msg);
	if (want != NULL && (rc != -1 || err.status != BERTH_EXIT_USAGE || strstr(err.msg, want) == NULL))
		fail_msg("`%s`: want a refusal with `%s`, got %s `%s`", args, want,
			 rc == 0 ? "allowed" : "refused", rc == 0 ? "" : err.msg);
}

#define ONE(text) ((const char *const[]){(text), NULL})

static void test_networks(void **state)
{
	const char *f = "# a comment\nallow:\n  networks: [none, api-only]\n";

	(void)state;
	expect(ONE(f), "", NULL);
	expect(ONE(f), "--network api-only", NULL);
	expect(ONE(f), "--network host", "refused by rules (f0.yml:3): networks does not allow host");
	expect(ONE(f), "--network proxy --allow-host example.com", "networks does not allow proxy");
	expect(ONE(f), "--allow-host example.com", "networks does not allow proxy");
	expect(ONE("allow:\n  networks: []\n"), "", "networks does not allow none");
	expect(ONE("allow:\n  networks: [host]\n"), "--network host", NULL);
	/* api-only's preset hosts are declared hosts too (the test preset has one). */
	expect(ONE("allow:\n  hosts: [api.anthropic.com]\n"), "--network api-only", NULL);
	expect(ONE("allow:\n  hosts: ['*.openai.com']\n"), "--network api-only",
	       "hosts does not allow `api.anthropic.com`");
}

static void test_hosts(void **state)
{
	const char *f = "allow:\n  hosts: ['*.example.com', 'api.openai.com:443', '10.0.0.5:*']\n";

	(void)state;
	expect(ONE(f), "--allow-host a.example.com", NULL);
	expect(ONE(f), "--allow-host *.b.example.com:443", NULL);
	expect(ONE(f), "--allow-host *.example.com", NULL);
	expect(ONE(f), "--allow-host api.openai.com:443", NULL);
	expect(ONE(f), "--allow-host 10.0.0.5:8080", NULL);
	expect(ONE(f), "--allow-host example.com", "(f0.yml:2): hosts does not allow `example.com`");
	expect(ONE(f), "--allow-host a.example.com:8080", "hosts does not allow `a.example.com:8080`");
	expect(ONE(f), "--allow-host api.openai.com", "hosts does not allow `api.openai.com`");
	expect(ONE(f), "--allow-host evil.com", "hosts does not allow `evil.com`");
	expect(ONE(f), "--allow-host 10.0.0.6:80", "hosts does not allow `10.0.0.6:80`");
	expect(ONE(f), "--allow-host a.example.com --allow-host x.org", "hosts does not allow `x.org`");
	expect(ONE("allow:\n  hosts: []\n"), "--allow-host a.example.com", "hosts does not allow");
}

static void test_rw(void **state)
{
	char f[PATH_MAX + 64], other[PATH_MAX + 64], args[PATH_MAX * 2];

	(void)state;
	snprintf(f, sizeof f, "allow:\n  rw: [%s/]\n", workdir);
	snprintf(other, sizeof other, "allow:\n  rw: [%s/elsewhere]\n", workdir);
	expect(ONE(f), "", NULL);
	snprintf(args, sizeof args, "--rw %s/sub:/mnt/sub", workdir);
	expect(ONE(f), args, NULL);
	expect(ONE(other), "", "(f0.yml:2): rw does not allow the workspace");
	expect(ONE("allow:\n  rw: []\n"), "", "rw does not allow the workspace");
	/* --rw outside the prefixes, the workspace inside */
	snprintf(f, sizeof f, "allow:\n  rw: [%s]\n", workdir);
	expect(ONE(f), "--rw /usr/share:/mnt/t", "rw does not allow --rw `/usr/share`");
	/* A prefix is component-wise: /x/work does not cover /x/workshop. */
	snprintf(f, sizeof f, "allow:\n  rw: [%.*s]\n", (int)strlen(workdir) - 1, workdir);
	expect(ONE(f), "", "rw does not allow the workspace");
	/* `..` in a prefix is resolved. */
	snprintf(f, sizeof f, "allow:\n  rw: [%s/sub/..]\n", workdir);
	expect(ONE(f), "", NULL);
}

static void test_unprotect(void **state)
{
	const char *f = "allow:\n  unprotect: [.vscode, .envrc]\n";

	(void)state;
	expect(ONE(f), "--unprotect .vscode --unprotect .envrc", NULL);
	expect(ONE(f), "--unprotect .git/hooks", "(f0.yml:2): unprotect does not allow `.git/hooks`");
	/* a class is allowed as spelt, not its members, and the other way round */
	expect(ONE("allow:\n  unprotect: [editors]\n"), "--unprotect editors", NULL);
	expect(ONE("allow:\n  unprotect: [editors]\n"), "--unprotect .vscode",
	       "unprotect does not allow `.vscode`");
	expect(ONE(f), "--unprotect editors", "unprotect does not allow `editors`");
	expect(ONE("allow:\n  unprotect: []\n"), "--unprotect .envrc", "unprotect does not allow `.envrc`");
	expect(ONE("allow:\n  unprotect: []\n"), "", NULL);
}

/* guard.read-only / guard.named: added to the policy, only ever stricter. */
static void guard_from(const char *const *files, const char *args, struct berth_run_opts *o)
{
	struct berth_error err = {0};
	struct berth_rules *r = berth_rules_new(&err);

	assert_non_null(r);
	for (int i = 0; files[i] != NULL; i++)
		if (berth_rules_add(r, files[i], strlen(files[i]), "g.yml", &err) < 0)
			fail_msg("rules: %s", err.msg);
	opts(o, args);
	assert_int_equal(berth_rules_guard(r, &o->policy, &err), 0);
	berth_rules_free(r);
}

static void test_guard(void **state)
{
	struct berth_run_opts o;
	const char *why = NULL;
	struct berth_error err = {0};
	struct berth_rules *r;

	(void)state;
	/* defaults: classes and patterns, at any name */
	opts(&o, "");
	assert_int_equal(berth_trust_lookup(&o.policy, ".vscode", &why), BERTH_TRUST_READONLY);
	assert_non_null(strstr(why, "VS Code"));
	assert_int_equal(berth_trust_lookup(&o.policy, "team.code-workspace", NULL), BERTH_TRUST_READONLY);
	assert_int_equal(berth_trust_lookup(&o.policy, "CLAUDE.md", NULL), BERTH_TRUST_NAMED);
	assert_int_equal(berth_trust_lookup(&o.policy, "Makefile", NULL), BERTH_TRUST_NONE);
	assert_int_equal(berth_trust_lookup(&o.policy, ".vscodex", NULL), BERTH_TRUST_NONE);
	/* path endings: only where they end a path */
	const char *cls = NULL;
	assert_int_equal(berth_trust_lookup_path(&o.policy, "a/.hg", "hgrc", NULL, &cls),
			 BERTH_TRUST_READONLY);
	assert_string_equal(cls, "vcs");
	assert_int_equal(berth_trust_lookup_path(&o.policy, ".hg", "hgrc", NULL, NULL), BERTH_TRUST_READONLY);
	assert_int_equal(berth_trust_lookup_path(&o.policy, "a/x.hg", "hgrc", NULL, NULL), BERTH_TRUST_NONE);
	assert_int_equal(berth_trust_lookup_path(&o.policy, "a", "hgrc", NULL, NULL), BERTH_TRUST_NONE);
	assert_int_equal(berth_trust_lookup(&o.policy, ".hg/hgrc", NULL), BERTH_TRUST_NONE);
	assert_int_equal(berth_trust_lookup_path(&o.policy, "dot/.config/git", "config", NULL, &cls),
			 BERTH_TRUST_READONLY);
	assert_string_equal(cls, "home");
	berth_run_opts_free(&o);

	/* --unprotect: a name or a class becomes named, not read-only */
	opts(&o, "--unprotect .vscode --unprotect shell --yes");
	assert_int_equal(berth_trust_lookup(&o.policy, ".vscode", NULL), BERTH_TRUST_NAMED);
	assert_int_equal(berth_trust_lookup(&o.policy, ".envrc", NULL), BERTH_TRUST_NAMED);
	assert_int_equal(berth_trust_lookup(&o.policy, ".idea", NULL), BERTH_TRUST_READONLY);
	berth_run_opts_free(&o);

	/* guard: adds names, patterns and classes; read-only beats named */
	guard_from(
	    ONE("guard:\n  read-only: [Makefile, '*.sh', instructions]\n  named: [package.json, Makefile]\n"),
	    "", &o);
	assert_int_equal(berth_trust_lookup(&o.policy, "Makefile", NULL), BERTH_TRUST_READONLY);
	assert_int_equal(berth_trust_lookup(&o.policy, "build.sh", NULL), BERTH_TRUST_READONLY);
	assert_int_equal(berth_trust_lookup(&o.policy, "AGENTS.md", NULL), BERTH_TRUST_READONLY);
	assert_int_equal(berth_trust_lookup(&o.policy, "package.json", NULL), BERTH_TRUST_NAMED);
	/* in the policy, hence in its digest */
	char *json = berth_policy_to_json(&o.policy, false, &err);
	assert_non_null(json);
	assert_non_null(strstr(json, "\"Makefile\""));
	assert_non_null(strstr(json, "\"package.json\""));
	free(json);
	berth_run_opts_free(&o);

	/* a file cannot loosen what a default or another file guards */
	guard_from(
	    ((const char *const[]){"guard:\n  named: [.vscode]\n", "guard:\n  read-only: [x.txt]\n", NULL}),
	    "", &o);
	assert_int_equal(berth_trust_lookup(&o.policy, ".vscode", NULL), BERTH_TRUST_READONLY);
	assert_int_equal(berth_trust_lookup(&o.policy, "x.txt", NULL), BERTH_TRUST_READONLY);
	berth_run_opts_free(&o);

	/* malformed: a path, a git path, an unknown key, a scalar, twice */
	static const struct {
		const char *text, *want;
	} bad[] = {
	    {"guard:\n  read-only: [a/b]\n", "g.yml:2:15: `guard.read-only`: `a/b` is not a file name"},
	    {"guard:\n  read-only: [.git/hooks]\n", "`.git/hooks` is not a file name"},
	    {"guard:\n  writable: [x]\n", "unknown key `guard.writable`; known: read-only, named"},
	    {"guard: [x]\n", "`guard` must be a mapping"},
	    {"guard:\n  named: [x]\nguard:\n  named: [y]\n", "`guard` is given twice"},
	    {"guard:\n  named: ['..']\n", "`..` is not a file name"},
	    {"guard:\n  named: ['.git']\n", "`.git` is not a file name"},
	    {"guard:\n  named: ['*.berth-set-aside']\n", "`*.berth-set-aside` is not a file name"},
	    {"guard:\n  named: ['[a-']\n", "`[a-` is not a file name"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		r = berth_rules_new(&err);
		assert_int_equal(berth_rules_add(r, bad[i].text, strlen(bad[i].text), "g.yml", &err), -1);
		assert_int_equal(err.status, BERTH_EXIT_USAGE);
		if (strstr(err.msg, bad[i].want) == NULL)
			fail_msg("rules `%s`: want `%s`, got `%s`", bad[i].text, bad[i].want, err.msg);
		berth_rules_free(r);
	}
}

static void test_env_and_credentials(void **state)
{
	const char *env = "allow:\n  env: [LANG, 'GIT_*', ANTHROPIC_API_KEY]\n";
	const char *cred = "allow:\n  credentials: [ANTHROPIC_API_KEY]\n";

	(void)state;
	expect(ONE(env), "--env LANG=C --env GIT_AUTHOR_NAME=x", NULL);
	expect(ONE(env), "--env DEBUG=1", "(f0.yml:2): env does not allow `DEBUG`");
	expect(ONE(env), "--env GI=1", "env does not allow `GI`");
	/* credentials: forwarding a host value */
	expect(ONE(cred), "--env ANTHROPIC_API_KEY", NULL);
	expect(ONE(cred), "--env GH_TOKEN", "(f0.yml:2): credentials does not allow forwarding `GH_TOKEN`");
	expect(ONE(cred), "--env GH_TOKEN=fake", NULL); /* a given value forwards nothing */
	expect(ONE("allow:\n  credentials: []\n"), "--env ANTHROPIC_API_KEY", "does not allow forwarding");

	/* credentials named by the caller (a session's --seed-auth) */
	struct berth_error err = {0};
	struct berth_rules *r = berth_rules_new(&err);
	struct berth_run_opts o;
	const char *items[] = {"claude-auth"};
	struct berth_widening_ctx ctx = {.credentials = items, .n_credentials = 1};
	assert_int_equal(berth_rules_add(r, cred, strlen(cred), "c.yml", &err), 0);
	opts(&o, "");
	assert_int_equal(berth_rules_check(r, &o.policy, &ctx, &err), -1);
	assert_non_null(strstr(err.msg, "credentials does not allow forwarding `claude-auth`"));
	const char *ok = "allow:\n  credentials: [claude-auth]\n";
	berth_rules_free(r);
	r = berth_rules_new(&err);
	assert_int_equal(berth_rules_add(r, ok, strlen(ok), "c.yml", &err), 0);
	assert_int_equal(berth_rules_check(r, &o.policy, &ctx, &err), 0);
	berth_rules_free(r);
	berth_run_opts_free(&o);
}

static void test_degraded(void **state)
{
	(void)state;
	expect(ONE("allow:\n  degraded: false\n"), "--allow-degraded",
	       "(f0.yml:2): degraded is false: --allow-degraded is refused");
	expect(ONE("allow:\n  degraded: false\n"), "", NULL);
	expect(ONE("allow:\n  degraded: true\n"), "--allow-degraded", NULL);
}

static void test_limits(void **state)
{
	(void)state;
	/* The defaults (8G, 4 CPUs, 512 pids) count. */
	expect(ONE("allow:\n  memory: 4G\n"), "",
	       "(f0.yml:2): memory is at most 4G, and this run has 8G (the default)");
	expect(ONE("allow:\n  memory: 4G\n"), "--memory 4G", NULL);
	expect(ONE("allow:\n  memory: 4G\n"), "--memory 5G", "memory is at most 4G, and this run has 5G");
	expect(ONE("allow:\n  memory: 16G\n"), "", NULL);
	expect(ONE("allow:\n  cpus: 2\n"), "", "cpus is at most 2, and this run has 4 (the default)");
	expect(ONE("allow:\n  cpus: 2\n"), "--cpus 1.5", NULL);
	expect(ONE("allow:\n  cpus: 0.5\n"), "--cpus 1", "cpus is at most 0.5, and this run has 1");
	expect(ONE("allow:\n  pids: 100\n"), "", "pids is at most 100, and this run has 512 (the default)");
	expect(ONE("allow:\n  pids: 100\n"), "--pids 100", NULL);
	expect(ONE("allow:\n  pids: 100\n"), "--pids 101", "pids is at most 100, and this run has 101");
}

/* Every file is enforced: a later, wider file changes nothing. */
static void test_cannot_widen(void **state)
{
	const char *user = "allow:\n  networks: [none]\n  memory: 2G\n";
	const char *project = "allow:\n  networks: [none, host]\n  memory: 64G\n  degraded: true\n";
	const char *const both[] = {user, project, NULL};
	const char *const reversed[] = {project, user, NULL};

	(void)state;
	expect(both, "--network host --memory 1G",
	       "refused by rules (f0.yml:2): networks does not allow host");
	expect(reversed, "--network host --memory 1G",
	       "refused by rules (f1.yml:2): networks does not allow host");
	expect(both, "--memory 8G", "(f0.yml:3): memory is at most 2G");
	expect(both, "--memory 1G", NULL);
	/* The project narrows further: refused by the project file. */
	const char *narrow = "allow:\n  pids: 10\n";
	const char *const three[] = {user, narrow, NULL};
	expect(three, "--memory 1G", "(f1.yml:2): pids is at most 10");
}

static void test_malformed(void **state)
{
	static const struct {
		const char *yaml, *msg;
	} cases[] = {
	    {"allow:\n  network: [none]\n", "r.yml:2:3: unknown key `allow.network`; known: networks"},
	    {"deny:\n  networks: [none]\n", "r.yml:1:1: unknown key `deny`"},
	    {"allow:\n  networks: none\n", "r.yml:2:13: `allow.networks` must be a list, got a scalar"},
	    {"allow:\n  networks: [none, wifi]\n", "r.yml:2:20: `allow.networks`: unknown network `wifi`"},
	    {"allow:\n  hosts: ['*']\n", "r.yml:2:11: `allow.hosts`: a bare `*` would allow every host"},
	    {"allow:\n  hosts: [localhost]\n",
	     "r.yml:2:11: `allow.hosts`: network pattern `localhost` names"},
	    {"allow:\n  rw: [relative/path]\n",
	     "r.yml:2:8: `allow.rw`: `relative/path` is not an absolute path"},
	    {"allow:\n  unprotect: [/etc/passwd]\n",
	     "r.yml:2:15: `allow.unprotect`: `/etc/passwd` is not a guarded"},
	    {"allow:\n  env: [BAD-NAME]\n", "r.yml:2:9: `allow.env`: `BAD-NAME` is not a variable name"},
	    {"allow:\n  env: [1ABC]\n", "r.yml:2:9: `allow.env`: `1ABC` is not a variable name"},
	    {"allow:\n  degraded: yes\n", "r.yml:2:13: `allow.degraded` must be true or false, got `yes`"},
	    {"allow:\n  memory: lots\n",
	     "r.yml:2:11: `allow.memory` must be a size such as `4G`, got `lots` (expected 16M to 1024T)"},
	    {"allow:\n  memory: 0\n", "r.yml:2:11: `allow.memory` must be a size"},
	    {"allow:\n  memory: [4G]\n",
	     "r.yml:2:11: `allow.memory` must be a size such as `4G`, got a list"},
	    {"allow:\n  cpus: -1\n", "r.yml:2:9: `allow.cpus` must be a CPU count"},
	    {"allow:\n  cpus: 0\n", "r.yml:2:9: `allow.cpus` must be a CPU count"},
	    {"allow:\n  memory: 18446744073709551616\n",
	     "r.yml:2:11: `allow.memory` must be a size such as `4G`, got `18446744073709551616` (expected "
	     "16M to 1024T)"},
	    {"allow:\n  memory: 17179869184G\n",
	     "r.yml:2:11: `allow.memory` must be a size such as `4G`, got `17179869184G` (expected 16M to "
	     "1024T)"},
	    {"allow:\n  cpus: 1e3\n",
	     "r.yml:2:9: `allow.cpus` must be a CPU count such as `2` or `0.5`, got `1e3` (expected 0.01 to "
	     "1024)"},
	    {"allow:\n  pids: 4194305\n",
	     "r.yml:2:9: `allow.pids` must be between 1 and 4194304, got `4194305`"},
	    {"allow:\n  pids: 0\n", "r.yml:2:9: `allow.pids` must be between 1 and 4194304, got `0`"},
	    {"allow:\n  pids: 1e3\n", "r.yml:2:9: `allow.pids` must be a decimal integer, got `1e3`"},
	    {"allow:\n  pids: 5\n  pids: 6\n", "r.yml:3:3: `allow.pids` is given twice"},
	    {"allow: [networks]\n", "r.yml:1:8: `allow` must be a mapping of limits, got a list"},
	    {"allow:\n  networks: [none\n", "r.yml:3:1: invalid YAML"},
	    {"- allow\n", "r.yml:1:1: a rules file is a mapping with the keys `allow:` and `guard:`"},
	    {"allow: &x\n  pids: 5\n", "r.yml:1:8: anchors (`&x`) are not allowed"},
	    {"allow:\n  env: [~]\n", "r.yml:2:9: `env` must be a string, got nothing (null)"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct berth_error err = {0};
		struct berth_rules *r = berth_rules_new(&err);
		int rc = berth_rules_add(r, cases[i].yaml, strlen(cases[i].yaml), "r.yml", &err);
		if (rc != -1 || err.status != BERTH_EXIT_USAGE || strstr(err.msg, cases[i].msg) == NULL)
			fail_msg("case %zu: got %s `%s`, want `%s`", i, rc == 0 ? "success" : "error",
				 err.msg, cases[i].msg);
		/* A refused file is not added. */
		assert_int_equal(berth_rules_count(r), 0);
		berth_rules_free(r);
	}
	/* Empty files and an empty `allow:` narrow nothing. */
	struct berth_error err = {0};
	struct berth_rules *r = berth_rules_new(&err);
	assert_int_equal(berth_rules_add(r, "", 0, "e.yml", &err), 0);
	assert_int_equal(berth_rules_add(r, "allow: {}\n", 10, "e2.yml", &err), 0);
	assert_int_equal(berth_rules_count(r), 2);
	berth_rules_free(r);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	if (f == NULL)
		fail_msg("write %s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
}

/* The lookup: system (+ the test override), user, and every project file from the
 * directory up (nearest first); a farther one narrows too. */
static void test_load_all(void **state)
{
	char p[PATH_MAX + 64], deep[PATH_MAX + 64], xdg[PATH_MAX + 64], sys[PATH_MAX + 64];
	struct berth_error err = {0};
	struct berth_rules *r = NULL;
	const char *old_xdg = getenv("XDG_CONFIG_HOME");
	char *saved = old_xdg != NULL ? strdup(old_xdg) : NULL;
	struct berth_run_opts o;

	(void)state;
	snprintf(p, sizeof p, "%s/a", workdir);
	mkdir(p, 0755);
	snprintf(p, sizeof p, "%s/a/.berth", workdir);
	mkdir(p, 0755);
	snprintf(p, sizeof p, "%s/a/b", workdir);
	mkdir(p, 0755);
	snprintf(p, sizeof p, "%s/a/b/.berth", workdir);
	mkdir(p, 0755);
	snprintf(deep, sizeof deep, "%s/a/b/c", workdir);
	mkdir(deep, 0755);
	snprintf(p, sizeof p, "%s/a/.berth/rules.yml", workdir);
	write_file(p, "allow:\n  pids: 1\n"); /* farther: read too, and it narrows */
	snprintf(p, sizeof p, "%s/a/b/.berth/rules.yml", workdir);
	write_file(p, "allow:\n  networks: [none]\n");
	snprintf(xdg, sizeof xdg, "%s/xdg", workdir);
	mkdir(xdg, 0755);
	snprintf(p, sizeof p, "%s/xdg/berth", workdir);
	mkdir(p, 0755);
	snprintf(p, sizeof p, "%s/xdg/berth/rules.yml", workdir);
	write_file(p, "allow:\n  memory: 16G\n");
	snprintf(sys, sizeof sys, "%s/system.yml", workdir);
	write_file(sys, "allow:\n  degraded: false\n");
	setenv("XDG_CONFIG_HOME", xdg, 1);
	setenv("BERTH_TEST_SYSTEM_RULES", sys, 1);

	assert_int_equal(berth_rules_load_all(deep, NULL, &r, &err), 0);
	size_t n = berth_rules_count(r), base = access(BERTH_RULES_SYSTEM_PATH, F_OK) == 0 ? 1 : 0;
	assert_int_equal(n, base + 4);
	assert_string_equal(berth_rules_origin(r, base), sys);
	assert_string_equal(berth_rules_origin(r, base + 1), p);
	snprintf(p, sizeof p, "%s/a/b/.berth/rules.yml", workdir);
	assert_string_equal(berth_rules_origin(r, base + 2), p);
	snprintf(p, sizeof p, "%s/a/.berth/rules.yml", workdir);
	assert_string_equal(berth_rules_origin(r, base + 3), p);
	opts(&o, "--pids 2");
	assert_int_equal(berth_rules_check(r, &o.policy, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "a/.berth/rules.yml:2)"));
	berth_run_opts_free(&o);
	opts(&o, "--network host");
	assert_int_equal(berth_rules_check(r, &o.policy, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "a/b/.berth/rules.yml:2): networks does not allow host"));
	berth_run_opts_free(&o);
	opts(&o, "--allow-degraded");
	assert_int_equal(berth_rules_check(r, &o.policy, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "system.yml:2): degraded is false"));
	berth_run_opts_free(&o);
	berth_rules_free(r);

	/* From the directory that holds .berth/, the file is shown relative. */
	snprintf(p, sizeof p, "%s/a/b", workdir);
	assert_int_equal(berth_rules_load_all(p, NULL, &r, &err), 0);
	assert_string_equal(berth_rules_origin(r, berth_rules_count(r) - 2), ".berth/rules.yml");
	berth_rules_free(r);

	/* A malformed file anywhere stops the load with file:line:col. */
	snprintf(p, sizeof p, "%s/a/b/.berth/rules.yml", workdir);
	write_file(p, "allow:\n  networks: [none]\n  netwrks: [host]\n");
	assert_int_equal(berth_rules_load_all(deep, NULL, &r, &err), -1);
	assert_null(r);
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	assert_non_null(strstr(err.msg, "a/b/.berth/rules.yml:3:3: unknown key `allow.netwrks`"));

	unsetenv("BERTH_TEST_SYSTEM_RULES");
	if (saved != NULL)
		setenv("XDG_CONFIG_HOME", saved, 1);
	else
		unsetenv("XDG_CONFIG_HOME");
	free(saved);
}

static int setup(void **state)
{
	char tmpl[] = "/tmp/berth-rules-XXXXXX", p[PATH_MAX + 64];
	FILE *f;

	(void)state;
	if (mkdtemp(tmpl) == NULL || realpath(tmpl, workdir) == NULL)
		return -1;
	/* The user's config: a network preset `api-only` of one host, no rules file. */
	snprintf(p, sizeof p, "%s/cfg", workdir);
	mkdir(p, 0755);
	snprintf(p, sizeof p, "%s/cfg/berth", workdir);
	mkdir(p, 0755);
	snprintf(p, sizeof p, "%s/cfg/berth/network", workdir);
	mkdir(p, 0755);
	snprintf(p, sizeof p, "%s/cfg/berth/network/api-only", workdir);
	if ((f = fopen(p, "we")) == NULL)
		return -1;
	fputs("api.anthropic.com\n", f);
	fclose(f);
	snprintf(p, sizeof p, "%s/cfg", workdir);
	setenv("XDG_CONFIG_HOME", p, 1);
	snprintf(p, sizeof p, "%s/sub", workdir);
	return mkdir(p, 0755);
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", workdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_networks),     cmocka_unit_test(test_hosts),
	    cmocka_unit_test(test_rw),           cmocka_unit_test(test_unprotect),
	    cmocka_unit_test(test_guard),        cmocka_unit_test(test_env_and_credentials),
	    cmocka_unit_test(test_degraded),     cmocka_unit_test(test_limits),
	    cmocka_unit_test(test_cannot_widen), cmocka_unit_test(test_malformed),
	    cmocka_unit_test(test_load_all),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
