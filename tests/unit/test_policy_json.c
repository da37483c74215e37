/* SPDX-License-Identifier: MIT */
/*
 * test_policy_json.c - berth_policy_from_json(), the canonical JSON read
 * back (the microVM guest runs the policy the host compiled): for policies
 * made by the flags parser, a rules file's guard, the OCI converter (on the
 * podman config.json of test_oci) and by hand (an app's, a container's,
 * the extremes), to_json(from_json(to_json(P))) is to_json(P) byte for
 * byte; and each refusal names the JSON path.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci/oci.h"
#include "policy/flags.h"
#include "policy/policy.h"
#include "policy/rules.h"
#include "util/cleanup.h"
#include "util/rmtree.h"

static char tmp[PATH_MAX]; /* the test's directory */

static char *fake_env(const char *name)
{
	if (strcmp(name, "SECRET_TOKEN") == 0)
		return "s3cr3t-value";
	return NULL;
}

/* `berth run` flags, NULL-terminated, into @o (as test_policy.c parses). */
static void parse_ok(struct berth_run_opts *o, ...)
{
	char *argv[48];
	int argc = 0;
	va_list ap;
	struct berth_error err = {0};

	argv[argc++] = "run";
	va_start(ap, o);
	for (char *a = va_arg(ap, char *); a != NULL && argc < 47; a = va_arg(ap, char *))
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	if (berth_run_parse(argc, argv, fake_env, o, &err) < 0)
		fail_msg("flags refused: %s", err.msg);
}

/*
 * The property: @p's canonical JSON read back and written again is the
 * same bytes (with the out-of-band parts, which the JSON does not hold, set
 * from @p as the guest sets them from START); the digest too.  Returns the
 * policy read, for the caller's own checks (berth_policy_free it).
 */
static struct berth_policy round_trip(const struct berth_policy *p)
{
	struct berth_error err = {0};
	struct berth_policy q;
	char *a = berth_policy_to_json(p, false, &err), *b;
	char da[65], db[65];

	assert_non_null(a);
	if (berth_policy_from_json(a, strlen(a), &q, &err) < 0)
		fail_msg("read back refused: %s\n%s", err.msg, a);
	/* values, the evidence directory and a container's seccomp text are
	 * the caller's: left empty */
	for (size_t i = 0; i < q.n_env; i++)
		assert_null(q.env[i].value);
	assert_null(q.evidence_dir);
	assert_true(q.container == NULL || q.container->seccomp == NULL);
	if (p->evidence_dir != NULL)
		q.evidence_dir = strdup(p->evidence_dir);
	if (p->container != NULL && p->container->seccomp != NULL)
		q.container->seccomp = strdup(p->container->seccomp);
	b = berth_policy_to_json(&q, false, &err);
	assert_non_null(b);
	if (strcmp(a, b) != 0)
		fail_msg("not the same bytes:\n%s\n%s", a, b);
	assert_int_equal(berth_policy_digest(p, da, &err), 0);
	assert_int_equal(berth_policy_digest(&q, db, &err), 0);
	assert_string_equal(da, db);
	/* the pretty form reads back to the same policy as well */
	free(b);
	b = berth_policy_to_json(p, true, &err);
	struct berth_policy r;
	if (berth_policy_from_json(b, strlen(b), &r, &err) < 0)
		fail_msg("pretty form refused: %s", err.msg);
	berth_policy_free(&r);
	free(a);
	free(b);
	return q;
}

static void flags_round_trip(struct berth_run_opts *o)
{
	struct berth_policy q = round_trip(&o->policy);

	berth_policy_free(&q);
	berth_run_opts_free(o);
}

/* --------------------------------------------------------- from flags */

static void test_flags(void **state)
{
	struct berth_run_opts o;
	struct berth_policy q;
	char envfile[PATH_MAX + 16];
	FILE *f;

	(void)state;
	parse_ok(&o, "--workspace", "/usr", "--", "true", NULL);
	flags_round_trip(&o);
	parse_ok(&o, "--workspace", "/usr", "--memory", "512M", "--cpus", "0.5", "--pids", "64", "--nofile",
		 "256", "--timeout", "1500ms", "--tmp-size", "2G", "--", "sh", "-c", "echo hi; exit 3", NULL);
	flags_round_trip(&o);
	/* the egress broker's allow-hosts and DNS server */
	parse_ok(&o, "--workspace", "/usr", "--network", "proxy", "--allow-host", "example.com",
		 "--allow-host", "*.pypi.org:8443", "--allow-host", "api.github.com:*", "--dns", "192.0.2.53",
		 "--", "curl", "https://example.com", NULL);
	assert_int_equal(o.policy.network, BERTH_NET_PROXY);
	q = round_trip(&o.policy);
	assert_int_equal(q.n_allow_hosts, o.policy.n_allow_hosts);
	assert_string_equal(q.dns, o.policy.dns);
	berth_policy_free(&q);
	berth_run_opts_free(&o);
	parse_ok(&o, "--workspace", "/usr", "--network", "host", "--yes", "--", "true", NULL);
	flags_round_trip(&o);
	/* mounts: read-only and read-write, and the workspace's own */
	parse_ok(&o, "--workspace", "/usr", "--ro", "/etc:/data/etc", "--ro", "/usr/share", "--rw",
		 "/usr/lib:/data/lib", "--", "ls", "/data", NULL);
	q = round_trip(&o.policy);
	assert_int_equal(q.n_mounts, 3);
	assert_string_equal(q.mounts[0].src, "/etc");
	assert_string_equal(q.mounts[0].dst, "/data/etc");
	assert_false(q.mounts[0].rw);
	assert_true(q.mounts[2].rw);
	assert_false(q.mounts[2].tmpfs);
	assert_null(q.mounts[2].given);
	berth_policy_free(&q);
	berth_run_opts_free(&o);
	/* env from berth's environment, a file and the command line */
	snprintf(envfile, sizeof envfile, "%s/env", tmp);
	f = fopen(envfile, "w");
	assert_non_null(f);
	fputs("FROM_FILE=v1\nOTHER=v2\n", f);
	fclose(f);
	parse_ok(&o, "--workspace", "/usr", "--env", "SECRET_TOKEN", "--env-file", envfile, "--env", "A=1",
		 "--", "env", NULL);
	q = round_trip(&o.policy);
	assert_int_equal(q.n_env, 4);
	for (size_t i = 0; i < q.n_env; i++) {
		assert_string_equal(q.env[i].name, o.policy.env[i].name);
		assert_int_equal(q.env[i].from_host, o.policy.env[i].from_host);
		assert_int_equal(q.env[i].from_file, o.policy.env[i].from_file);
	}
	assert_true(q.env[0].from_host);
	berth_policy_free(&q);
	berth_run_opts_free(&o);
	/* the guard opted out of by name, class and git path */
	parse_ok(&o, "--workspace", "/usr", "--unprotect", ".vscode", "--unprotect", "shell", "--unprotect",
		 ".git/hooks", "--unprotect", ".hg/hgrc", "--yes", "--allow-degraded", "--", "true", NULL);
	q = round_trip(&o.policy);
	assert_int_equal(q.n_unprotect, 4);
	assert_true(q.allow_degraded);
	assert_int_equal(q.n_guard_ro, 0);
	assert_int_equal(q.n_guard_named, 0);
	berth_policy_free(&q);
	berth_run_opts_free(&o);
	/* forensic, with its evidence (the run sets evidence_dir) */
	parse_ok(&o, "--workspace", "/usr", "--forensic", "--network", "none", "--evidence", "/etc/hostname",
		 "--", "file", "/evidence/hostname", NULL);
	o.policy.evidence_dir = strdup("/var/lib/berth/evidence/run1");
	q = round_trip(&o.policy);
	assert_true(q.forensic);
	berth_policy_free(&q);
	berth_run_opts_free(&o);
}

/* A persistent home and a rules file's guard (berth_rules_guard). */
static void test_home_and_rules_guard(void **state)
{
	static const char *const files[] = {
	    "guard:\n  read-only: [Makefile, '*.sh', instructions]\n  named: [package.json, Makefile]\n",
	    "guard:\n  named: [.vscode, CLAUDE.md, '*.lock']\n  read-only: [.gdbinit, editors]\n", NULL};
	struct berth_error err = {0};
	struct berth_run_opts o;
	struct berth_policy q;

	(void)state;
	for (int i = 0; files[i] != NULL; i++) {
		struct berth_rules *r = berth_rules_new(&err);

		assert_non_null(r);
		assert_int_equal(berth_rules_add(r, files[i], strlen(files[i]), "g.yml", &err), 0);
		parse_ok(&o, "--workspace", "/usr", "--unprotect", "CLAUDE.md", "--", "true", NULL);
		assert_int_equal(berth_rules_guard(r, &o.policy, &err), 0);
		berth_rules_free(r);
		o.policy.home_dir = strdup("/var/lib/berth/homes/p1");
		q = round_trip(&o.policy);
		assert_string_equal(q.home_dir, "/var/lib/berth/homes/p1");
		/* the rules' names, recovered from behind the trust names */
		assert_int_equal(q.n_guard_ro, o.policy.n_guard_ro);
		assert_int_equal(q.n_guard_named, o.policy.n_guard_named);
		for (size_t k = 0; k < q.n_guard_ro; k++)
			assert_string_equal(q.guard_ro[k], o.policy.guard_ro[k]);
		for (size_t k = 0; k < q.n_guard_named; k++)
			assert_string_equal(q.guard_named[k], o.policy.guard_named[k]);
		berth_policy_free(&q);
		berth_run_opts_free(&o);
	}
}

/* ------------------------------------------------------------ by hand */

static char **strv(size_t n, ...)
{
	char **v = calloc(n + 1, sizeof *v);
	va_list ap;

	assert_non_null(v);
	va_start(ap, n);
	for (size_t i = 0; i < n; i++)
		v[i] = strdup(va_arg(ap, const char *));
	va_end(ap);
	return v;
}

/* Guard lists that name the trust names themselves, in every
 * combination of treatment: where the trust names end must still be found. */
static void test_guard_edges(void **state)
{
	static const char *const names[] = {".gdbinit", "CLAUDE.md", ".claude",  "AGENTS.md",   ".clinerules",
					    "*",        "home",      ".hg/hgrc", "instructions"};
	struct berth_policy p, q;

	(void)state;
	for (size_t a = 0; a < BERTH_ARRAY_SIZE(names); a++)
		for (size_t b = 0; b < BERTH_ARRAY_SIZE(names); b++)
			for (int u = 0; u < 3; u++) {
				berth_policy_init(&p);
				p.argv = strv(1, "true");
				p.argc = 1;
				p.guard_ro = strv(1, names[a]);
				p.n_guard_ro = 1;
				p.guard_named = strv(2, names[b], names[a]);
				p.n_guard_named = 2;
				if (u > 0) {
					p.unprotect = strv(1, u == 1 ? names[a] : names[b]);
					p.n_unprotect = 1;
				}
				q = round_trip(&p);
				assert_int_equal(q.n_guard_ro, 1);
				assert_int_equal(q.n_guard_named, 2);
				assert_string_equal(q.guard_ro[0], names[a]);
				assert_string_equal(q.guard_named[0], names[b]);
				berth_policy_free(&q);
				berth_policy_free(&p);
			}
}

static void test_app(void **state)
{
	struct berth_policy p, q;

	(void)state;
	berth_policy_init(&p);
	p.app = true;
	p.app_name = strdup("fs");
	p.app_version = strdup("1.2.0");
	p.app_digest = strdup("sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	p.workspace = strdup("/var/lib/berth/apps/fs");
	p.grants = calloc(2, sizeof *p.grants);
	p.grants[0] = (struct berth_grant){strdup("/workspace/data"), true};
	p.grants[1] = (struct berth_grant){strdup("/context"), false};
	p.n_grants = 2;
	p.network = BERTH_NET_PROXY;
	p.allow_hosts = strv(1, "api.example.com:443");
	p.n_allow_hosts = 1;
	p.guard_ro = strv(1, "lost.txt"); /* an app's guard is not in its JSON */
	p.n_guard_ro = 1;
	p.argv = strv(2, "/usr/bin/python3", "/app/main.py");
	p.argc = 2;
	p.memory_set = true;
	q = round_trip(&p);
	assert_true(q.app);
	assert_int_equal(q.n_grants, 2);
	assert_true(q.grants[0].write);
	assert_false(q.grants[1].write);
	assert_string_equal(q.app_digest, p.app_digest);
	assert_int_equal(q.n_guard_ro, 0);
	assert_false(q.memory_set); /* not in the JSON: the caller's */
	berth_policy_free(&q);
	/* an app without a name or version: nulls */
	free(p.app_name);
	free(p.app_version);
	p.app_name = p.app_version = NULL;
	q = round_trip(&p);
	assert_null(q.app_name);
	berth_policy_free(&q);
	berth_policy_free(&p);
}

/* A container by hand: every optional key, and the values whose encoding
 * is a cast (RLIM_INFINITY is -1, a uid past INT_MAX is negative). */
static void test_container_by_hand(void **state)
{
	struct berth_policy p, q;
	struct berth_container *c;

	(void)state;
	berth_policy_init(&p);
	p.argv = strv(1, "/bin/sh");
	p.argc = 1;
	p.memory = UINT64_MAX;
	p.timeout_ms = BERTH_TIMEOUT_MS_MAX;
	p.millicpus = UINT32_MAX;
	p.workspace = strdup("/srv/ws");
	c = p.container = calloc(1, sizeof *p.container);
	c->id = strdup("c1");
	c->root = strdup("/var/lib/x/rootfs");
	c->root_rw = true;
	c->workspace_at = strdup("/work");
	c->cwd = strdup("/work");
	c->uid = 4294967294u;
	c->gid = 100000;
	c->hostname = strdup("box");
	c->has_umask = true;
	c->umask = 027;
	c->uid_range = (struct berth_idrange){0, 100000, 65536};
	c->gid_range = (struct berth_idrange){0, 200000, 0};
	c->rlimits[0] = (struct berth_rlimit){RLIMIT_NOFILE, 1024, RLIM_INFINITY};
	c->rlimits[1] = (struct berth_rlimit){RLIMIT_CORE, 0, 0};
	c->n_rlimits = 2;
	c->masked = strv(2, "/proc/kcore", "/sys/firmware");
	c->n_masked = 2;
	c->readonly = strv(1, "/proc/sys");
	c->n_readonly = 1;
	c->seccomp = strdup("{\"defaultAction\":\"SCMP_ACT_ALLOW\"}");
	c->netns = strdup("/run/netns/pod");
	c->ipcns = strdup("/proc/1/ns/ipc");
	c->utsns = strdup("/proc/1/ns/uts");
	p.mounts = calloc(2, sizeof *p.mounts);
	p.mounts[0] = (struct berth_mount){.dst = strdup("/scratch"),
					   .rw = true,
					   .tmpfs = true,
					   .tmpfs_size = 10 << 20,
					   .tmpfs_mode = 01770,
					   .tmpfs_inodes = 100,
					   .noexec = true};
	p.mounts[1] = (struct berth_mount){.src = strdup("tmpfs"), .dst = strdup("/d"), .noexec = true};
	p.n_mounts = 2;
	p.network = BERTH_NET_HOST;
	q = round_trip(&p);
	assert_non_null(q.container);
	assert_int_equal(q.container->uid, 4294967294u);
	assert_int_equal(q.container->rlimits[0].hard, RLIM_INFINITY);
	assert_int_equal(q.memory, UINT64_MAX);
	assert_true(q.mounts[0].tmpfs);
	assert_null(q.mounts[0].src);
	assert_false(q.mounts[1].tmpfs);
	assert_string_equal(q.mounts[1].src, "tmpfs");
	assert_string_equal(q.container->ipcns, "/proc/1/ns/ipc");
	berth_policy_free(&q);
	/* the same with every optional part absent and every nullable null */
	berth_container_free(p.container);
	p.container = calloc(1, sizeof *p.container);
	q = round_trip(&p);
	assert_null(q.container->id);
	assert_false(q.container->has_umask);
	berth_policy_free(&q);
	berth_policy_free(&p);
}

/* ------------------------------------------------- the OCI converter */

static void touch(const char *rel, bool dir)
{
	char path[PATH_MAX + 64];
	int fd;

	snprintf(path, sizeof path, "%s/%s", tmp, rel);
	if (dir) {
		assert_int_equal(mkdir(path, 0755), 0);
		return;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	close(fd);
}

/* tests/unit/oci/podman-config.json with @TMP@ replaced, as test_oci.c does */
static json_t *podman(void)
{
	const char *dir = getenv("BERTH_OCI_FIXTURES");
	char path[PATH_MAX + 32];
	json_error_t je;
	FILE *f;
	char *raw, *out;
	long n;
	size_t k = 0, t = strlen(tmp);
	json_t *cfg;

	snprintf(path, sizeof path, "%s/podman-config.json", dir != NULL ? dir : "tests/unit/oci");
	f = fopen(path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	raw = calloc(1, (size_t)n + 1);
	assert_non_null(raw);
	assert_int_equal(fread(raw, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	out = malloc((size_t)n * 2 + t * 64 + 1);
	assert_non_null(out);
	for (const char *p = raw; *p != '\0';) {
		if (strncmp(p, "@TMP@", 5) == 0) {
			memcpy(out + k, tmp, t);
			k += t;
			p += 5;
		} else
			out[k++] = *p++;
	}
	out[k] = '\0';
	cfg = json_loads(out, 0, &je);
	assert_non_null(cfg);
	free(raw);
	free(out);
	return cfg;
}

static void test_oci_bundles(void **state)
{
	struct berth_oci_bundle b;
	struct berth_error err = {0};
	struct berth_policy q;
	char bundle[PATH_MAX + 16];
	json_t *cfg;

	(void)state;
	snprintf(bundle, sizeof bundle, "%s/bundle", tmp);
	cfg = podman();
	if (berth_oci_bundle_convert(cfg, bundle, "c1", &b, &err) < 0)
		fail_msg("podman's config.json refused: %s", err.msg);
	assert_non_null(b.policy.container->seccomp);
	q = round_trip(&b.policy);
	assert_int_equal(q.container->n_masked, 11);
	assert_int_equal(q.container->n_rlimits, 2);
	berth_policy_free(&q);
	berth_oci_bundle_free(&b);
	/* podman run -u 1000:1000 --tmpfs /scratch:size=10m,mode=1770 --network none */
	json_object_set_new(json_object_get(json_object_get(cfg, "process"), "user"), "uid",
			    json_integer(1000));
	json_array_append_new(json_object_get(cfg, "mounts"),
			      json_pack("{s:s, s:s, s:s, s:[sss]}", "destination", "/scratch", "type",
					"tmpfs", "source", "tmpfs", "options", "size=10m", "mode=1770",
					"nr_inodes=64"));
	json_object_del(json_object_get(cfg, "linux"), "seccomp");
	if (berth_oci_bundle_convert(cfg, bundle, "c2", &b, &err) < 0)
		fail_msg("podman's config.json with a tmpfs refused: %s", err.msg);
	q = round_trip(&b.policy);
	assert_null(q.container->seccomp);
	assert_int_equal(q.container->uid, 1000);
	bool tmpfs = false;
	for (size_t i = 0; i < q.n_mounts; i++)
		tmpfs |=
		    q.mounts[i].tmpfs && q.mounts[i].tmpfs_mode == 01770 && q.mounts[i].tmpfs_inodes == 64;
	assert_true(tmpfs);
	berth_policy_free(&q);
	berth_oci_bundle_free(&b);
	json_decref(cfg);
}

/* ------------------------------------------------------------ refusals */

/* @json (single quotes for double) refused, the message holding @want. */
static void refused(const char *json, const char *want)
{
	struct berth_error err = {0};
	struct berth_policy q;
	char *s = strdup(json);

	for (char *c = s; *c != '\0'; c++)
		if (*c == '\'')
			*c = '"';
	assert_int_equal(berth_policy_from_json(s, strlen(s), &q, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_INTERNAL);
	if (strstr(err.msg, want) == NULL)
		fail_msg("want `%s`, got `%s`", want, err.msg);
	assert_null(q.workspace); /* released */
	free(s);
}

/* The canonical JSON of the default policy with @from replaced by @to. */
static char *edited(const char *from, const char *to)
{
	struct berth_error err = {0};
	struct berth_policy p;
	char *j, *at, *out;

	berth_policy_init(&p);
	p.workspace = strdup("/srv/ws");
	p.argv = strv(1, "true");
	p.argc = 1;
	j = berth_policy_to_json(&p, false, &err);
	berth_policy_free(&p);
	at = strstr(j, from);
	if (at == NULL)
		fail_msg("`%s` not in %s", from, j);
	out = malloc(strlen(j) + strlen(to) + 1);
	sprintf(out, "%.*s%s%s", (int)(at - j), j, to, at + strlen(from));
	free(j);
	for (char *c = out; *c != '\0'; c++)
		if (*c == '"')
			*c = '\'';
	return out;
}

static void refused_edit(const char *from, const char *to, const char *want)
{
	char *j = edited(from, to);

	refused(j, want);
	free(j);
}

static void test_refusals(void **state)
{
	(void)state;
	refused("", "not JSON");
	refused("[]", "`` is not an object");
	refused("{'schema':1,'schema':1}", "not JSON");
	refused_edit("{", "{\"extra\":1,", "`extra` is not a key of the policy");
	refused_edit("\"schema\":1", "\"schema\":2", "`schema` is not this build's (1)");
	refused_edit("\"schema\":1", "\"schema\":1.0", "`schema` is not an integer");
	refused_edit("\"allow_degraded\":false", "\"allow_degraded\":0", "`allow_degraded` is not a boolean");
	refused_edit("\"allow_degraded\":false", "\"allow_degraded\":false,\"forensic\":false",
		     "`forensic` is written only as true");
	refused_edit("\"command\":[\"true\"]", "\"command\":[\"true\",7]", "`command[1]` is not a string");
	refused_edit("\"pids\":512", "\"pids\":-1", "`limits.pids` is out of range");
	refused_edit("\"pids\":512", "\"pids\":4294967296", "`limits.pids` is out of range");
	refused_edit("\"pids\":512,", "", "`limits.pids` is missing");
	refused_edit("\"pids\":512", "\"pids\":512,\"swap\":0", "`limits.swap` is not a key of the policy");
	refused_edit("\"mode\":\"none\"", "\"mode\":\"wifi\"", "`network.mode` is none of");
	refused_edit("\"mode\":\"none\"", "\"mode\":\"none\",\"allow_hosts\":[]",
		     "`network.allow_hosts` is only in proxy mode");
	refused_edit("\"mode\":\"none\"", "\"mode\":\"proxy\"", "`network.allow_hosts` is missing");
	refused_edit("\"env\":[]", "\"env\":[{\"name\":\"A\",\"from\":\"moon\"}]",
		     "`env[0].from` is none of");
	refused_edit("\"env\":[]", "\"env\":[{\"name\":\"A\",\"from\":\"literal\",\"value\":\"x\"}]",
		     "`env[0].value` is not a key of the policy");
	refused_edit("\"mounts\":[]", "\"mounts\":[{\"source\":\"/a\",\"target\":\"/b\",\"access\":\"rx\"}]",
		     "`filesystem.mounts[0].access` is neither `ro` nor `rw`");
	refused_edit("\"mounts\":[]",
		     "\"mounts\":[{\"source\":\"/a\",\"target\":\"/b\",\"access\":\"rw\",\"mode\":0}]",
		     "`filesystem.mounts[0].mode` is out of range");
	refused_edit("\"mounts\":[]",
		     "\"mounts\":[{\"source\":\"/a\",\"target\":\"/b\",\"access\":\"rw\",\"size\":1}]",
		     "`filesystem.mounts[0].source` has a size but is not a read-write `tmpfs`");
	refused_edit("\"mounts\":[]",
		     "\"mounts\":[{\"source\":\"/a\",\"target\":\"/b\",\"access\":\"ro\",\"noexec\":false}]",
		     "`filesystem.mounts[0].noexec` is written only as true");
	refused_edit("\"system_ro\":[\"/usr\"", "\"system_ro\":[\"/opt\"",
		     "`filesystem.system_ro` differs from this build's");
	refused_edit("\"git\":[\".git/hooks\",", "\"git\":[",
		     "`filesystem.guard.git` differs from this build's");
	refused_edit("\"read-only\":[\".claude\",", "\"read-only\":[",
		     "`filesystem.guard` does not list this build's trust names");
	refused_edit("\"named\":[\"CLAUDE.md\",", "\"named\":[\"AGENTS.md\",\"CLAUDE.md\",",
		     "`filesystem.guard` does not list this build's trust names");
	refused_edit("\"workspace\":\"/srv/ws\"", "\"workspace\":\"/srv/ws\",\"grants\":[]",
		     "`filesystem.grants` is only in an app's policy");
	refused_edit("\"workspace\":\"/srv/ws\"", "\"workspace\":7",
		     "`filesystem.workspace` is not a string");
	refused_edit("\"workspace\":\"/srv/ws\"", "\"workspace\":\"/srv/ws\",\"evidence\":{}",
		     "`filesystem.evidence` is not /evidence read-only");
	refused_edit("\"schema\":1", "\"schema\":1,\"container\":{}", "`container.id` is missing");
	refused_edit("\"schema\":1", "\"schema\":1,\"app\":{\"name\":null,\"version\":null,\"digest\":null}",
		     "`filesystem.guard.git` differs from this build's"); /* an app's guard is empty */
	refused_edit("\"schema\":1",
		     "\"schema\":1,\"app\":{\"name\":null,\"version\":null,\"digest\":null,\"x\":1}",
		     "`app.x` is not a key of the policy");
}

/* ------------------------------------------------------------- set-up */

static int setup(void **state)
{
	(void)state;
	snprintf(tmp, sizeof tmp, "/tmp/berth-test-pjson-XXXXXX");
	assert_non_null(mkdtemp(tmp));
	touch("bundle", true);
	touch("bundle/rootfs", true);
	touch("userdata", true);
	touch("userdata/hosts", false);
	touch("userdata/hostname", false);
	touch("userdata/resolv.conf", false);
	touch("userdata/.containerenv", false);
	touch("userdata/shm", true);
	touch("work", true);
	return 0;
}

static int teardown(void **state)
{
	struct berth_error err = {0};

	(void)state;
	berth_rmtree(tmp, NULL, &err);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_flags),
	    cmocka_unit_test(test_home_and_rules_guard),
	    cmocka_unit_test(test_guard_edges),
	    cmocka_unit_test(test_app),
	    cmocka_unit_test(test_container_by_hand),
	    cmocka_unit_test(test_oci_bundles),
	    cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
