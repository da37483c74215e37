/* SPDX-License-Identifier: MIT */
/*
 * test_oci.c - `berth oci` without a running container: the config.json
 * converter on a real podman config.json (tests/unit/oci/podman-config.json,
 * captured from podman 4 with --rootfs; its host paths replaced by @TMP@),
 * one test per refusal asserting the message names the JSON path, and the
 * pieces of the lifecycle that need no sandbox (ids, signals, the state
 * file and liveness, the log formats, the console socket's SCM_RIGHTS).
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
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oci/oci.h"
#include "policy/policy.h"
#include "util/rmtree.h"

static char tmp[PATH_MAX];    /* the test's directory */
static char bundle[PATH_MAX]; /* TMP/bundle, with rootfs/ */
static char *fixture;         /* podman-config.json with @TMP@ replaced */

/* ---------------------------------------------------------- set-up */

static void touch(const char *rel, bool dir)
{
	char p[PATH_MAX + 64];
	int fd;

	snprintf(p, sizeof p, "%s/%s", tmp, rel);
	if (dir) {
		assert_int_equal(mkdir(p, 0755), 0);
		return;
	}
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	close(fd);
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	s = malloc((size_t)n + 1);
	assert_non_null(s);
	assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = '\0';
	fclose(f);
	return s;
}

/* @text with every @TMP@ replaced by the test's directory */
static char *substitute(const char *text)
{
	size_t n = strlen(text), t = strlen(tmp), k = 0;
	char *out = malloc(n * 2 + t * 64 + 1);

	assert_non_null(out);
	for (const char *p = text; *p != '\0';) {
		if (strncmp(p, "@TMP@", 5) == 0) {
			memcpy(out + k, tmp, t);
			k += t;
			p += 5;
		} else
			out[k++] = *p++;
	}
	out[k] = '\0';
	return out;
}

static int setup(void **state)
{
	const char *dir = getenv("BERTH_OCI_FIXTURES");
	char path[PATH_MAX + 32];
	char *raw;

	(void)state;
	snprintf(tmp, sizeof tmp, "/tmp/berth-test-oci-XXXXXX");
	assert_non_null(mkdtemp(tmp));
	snprintf(bundle, sizeof bundle, "%s/bundle", tmp);
	touch("bundle", true);
	touch("bundle/rootfs", true);
	touch("userdata", true);
	touch("userdata/hosts", false);
	touch("userdata/hostname", false);
	touch("userdata/resolv.conf", false);
	touch("userdata/.containerenv", false);
	touch("userdata/shm", true);
	touch("work", true);
	snprintf(path, sizeof path, "%s/podman-config.json", dir != NULL ? dir : "tests/unit/oci");
	raw = read_all(path);
	fixture = substitute(raw);
	free(raw);
	return 0;
}

static int teardown(void **state)
{
	struct berth_error err = {0};

	(void)state;
	berth_rmtree(tmp, NULL, &err);
	free(fixture);
	return 0;
}

static json_t *podman(void)
{
	json_error_t je;
	json_t *c = json_loads(fixture, 0, &je);

	assert_non_null(c);
	return c;
}

/*
 * Set (or with @v NULL remove) the member at @path, segments split by `|`
 * (keys hold dots: `net.ipv4.ping_group_range`); a number is an array
 * index, `+` appends.  Objects on the way are made when missing.
 */
static void jset(json_t *root, const char *path, json_t *v)
{
	char buf[256], *save = NULL, *seg, *next;
	json_t *cur = root;

	snprintf(buf, sizeof buf, "%s", path);
	seg = strtok_r(buf, "|", &save);
	while (seg != NULL) {
		next = strtok_r(NULL, "|", &save);
		bool idx = seg[0] >= '0' && seg[0] <= '9';
		if (next == NULL) {
			if (strcmp(seg, "+") == 0)
				json_array_append_new(cur, v);
			else if (idx && v != NULL)
				json_array_set_new(cur, (size_t)atoi(seg), v);
			else if (idx)
				json_array_remove(cur, (size_t)atoi(seg));
			else if (v != NULL)
				json_object_set_new(cur, seg, v);
			else
				json_object_del(cur, seg);
			return;
		}
		json_t *child = idx ? json_array_get(cur, (size_t)atoi(seg)) : json_object_get(cur, seg);
		if (child == NULL) {
			child = json_object();
			json_object_set_new(cur, seg, child);
		}
		cur = child;
		seg = next;
	}
}

static json_t *J(const char *text)
{
	json_error_t je;
	json_t *v = json_loads(text, JSON_DECODE_ANY, &je);

	if (v == NULL)
		fail_msg("bad JSON in the test: %s: %s", text, je.text);
	return v;
}

static int convert(const json_t *cfg, struct berth_oci_bundle *b, struct berth_error *err)
{
	return berth_oci_bundle_convert(cfg, bundle, "c1", b, err);
}

static bool has_note(const struct berth_oci_bundle *b, const char *part)
{
	for (size_t i = 0; i < b->n_notes; i++)
		if (strstr(b->notes[i], part) != NULL)
			return true;
	return false;
}

static const struct berth_mount *mount_at(const struct berth_policy *p, const char *dst)
{
	for (size_t i = 0; i < p->n_mounts; i++)
		if (strcmp(p->mounts[i].dst, dst) == 0)
			return &p->mounts[i];
	return NULL;
}

/* ---------------------------------------------------------- podman's config */

static void test_podman_config(void **state)
{
	struct berth_oci_bundle b;
	struct berth_error err = {0};
	json_t *cfg = podman();
	const struct berth_policy *p = &b.policy;
	const struct berth_container *c;
	char real[PATH_MAX], src[PATH_MAX + 32];
	struct rlimit cur;
	uint64_t nofile = 1048576;
	char *json;

	(void)state;
	if (convert(cfg, &b, &err) < 0)
		fail_msg("podman's config.json refused: %s", err.msg);
	c = p->container;
	assert_non_null(c);
	assert_string_equal(c->id, "c1");
	snprintf(src, sizeof src, "%s/rootfs", bundle);
	assert_non_null(realpath(src, real));
	assert_string_equal(c->root, real);
	/* podman's root.readonly false: berth's read-only root stands, said */
	assert_false(c->root_rw);
	assert_true(has_note(&b, "the root stays read-only"));
	/* process */
	assert_int_equal(p->argc, 3);
	assert_string_equal(p->argv[0], "/bin/sh");
	assert_string_equal(p->argv[2], "id");
	assert_null(p->argv[3]);
	assert_int_equal(p->n_env, 3);
	assert_string_equal(p->env[0].name, "PATH");
	assert_string_equal(p->env[0].value, "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	assert_false(p->env[0].from_host);
	assert_string_equal(p->env[2].name, "HOSTNAME");
	assert_string_equal(c->cwd, "/");
	assert_int_equal(c->uid, 0);
	assert_int_equal(c->gid, 0);
	assert_true(c->has_umask);
	assert_int_equal(c->umask, 022);
	assert_false(b.terminal);
	assert_int_equal(c->n_rlimits, 2);
	assert_int_equal(c->rlimits[0].resource, RLIMIT_NOFILE);
	assert_int_equal(c->rlimits[0].soft, 1048576);
	assert_int_equal(c->rlimits[0].hard, 1048576);
	assert_int_equal(c->rlimits[1].resource, RLIMIT_NPROC);
	assert_int_equal(c->rlimits[1].hard, 32768);
	/* berth's own RLIMIT_NOFILE: the soft value, below berth's hard limit */
	if (getrlimit(RLIMIT_NOFILE, &cur) == 0 && cur.rlim_max != RLIM_INFINITY && cur.rlim_max < nofile)
		nofile = cur.rlim_max;
	assert_int_equal(p->nofile, nofile);
	assert_string_equal(c->hostname, json_string_value(json_object_get(cfg, "hostname")));
	/* mounts: the four binds, not the standard ones (/dev/shm included) */
	assert_int_equal(p->n_mounts, 4);
	assert_non_null(mount_at(p, "/etc/hosts"));
	assert_non_null(mount_at(p, "/etc/hostname"));
	assert_non_null(mount_at(p, "/etc/resolv.conf"));
	assert_non_null(mount_at(p, "/run/.containerenv"));
	assert_null(mount_at(p, "/dev/shm"));
	assert_true(mount_at(p, "/etc/hosts")->rw);
	assert_false(mount_at(p, "/etc/hosts")->tmpfs);
	snprintf(src, sizeof src, "%s/userdata/hosts", tmp);
	assert_non_null(realpath(src, real));
	assert_string_equal(mount_at(p, "/etc/hosts")->src, real);
	assert_null(p->workspace);
	assert_null(c->workspace_at);
	/* the pod's network namespace, joined */
	assert_int_equal(p->network, BERTH_NET_HOST);
	assert_non_null(c->netns);
	assert_int_equal(strncmp(c->netns, "/run/netns/netns-", 17), 0);
	/* resources */
	assert_true(p->pids_set);
	assert_int_equal(p->pids, 2048);
	assert_false(p->memory_set);
	assert_false(p->cpus_set);
	/* seccomp: kept whole, compact */
	assert_non_null(c->seccomp);
	assert_non_null(strstr(c->seccomp, "\"defaultErrnoRet\":38"));
	assert_null(strchr(c->seccomp, '\n'));
	assert_int_equal(c->n_masked, 11);
	assert_string_equal(c->masked[0], "/proc/acpi");
	assert_int_equal(c->n_readonly, 6);
	assert_string_equal(c->readonly[4], "/proc/sys");
	/* said in the log, not refused */
	assert_true(has_note(&b, "11 capabilities were not granted (CAP_CHOWN, CAP_DAC_OVERRIDE"));
	assert_true(has_note(&b, "net.ipv4.ping_group_range `0 0` is not applied"));
	/* the engine's cgroup, joined by the supervisor */
	assert_non_null(b.cgroups_path);
	assert_int_equal(strncmp(b.cgroups_path, "/libpod_parent/libpod-3030e7449f1e", 34), 0);
	assert_false(has_note(&b, "cgroupsPath"));
	assert_true(has_note(&b, "/dev/mqueue is not mounted"));
	assert_true(has_note(&b, "/sys/fs/cgroup is not mounted"));
	assert_true(has_note(&b, "has no `user`") == false);
	/* the annotations are kept for `state` */
	assert_string_equal(json_string_value(json_object_get(b.annotations, "io.container.manager")),
			    "libpod");
	/* a policy like any other: canonical JSON with the container's part */
	json = berth_policy_to_json(p, false, &err);
	assert_non_null(json);
	assert_non_null(strstr(json, "\"container\":{"));
	free(json);
	berth_oci_bundle_free(&b);
	berth_oci_bundle_free(&b); /* safe twice */
	json_decref(cfg);
}

/* podman run -t -u 1000:1000 --memory 64m --cpus 0.5 --tmpfs /scratch:size=10m --network none */
/* berth.dev/writable-root: "true" honours root.readonly false (a widening,
 * named in the log); it cannot make a read-only bundle writable; any other
 * value is refused, named. */
static void test_writable_root(void **state)
{
	struct berth_oci_bundle b;
	struct berth_error err = {0};
	json_t *cfg = podman();

	(void)state;
	jset(cfg, "annotations|berth.dev/writable-root", json_string("true"));
	if (convert(cfg, &b, &err) < 0)
		fail_msg("refused: %s", err.msg);
	assert_true(b.policy.container->root_rw);
	assert_true(has_note(&b, "widening: the container's root is writable"));
	berth_oci_bundle_free(&b);
	jset(cfg, "root|readonly", json_true());
	if (convert(cfg, &b, &err) < 0)
		fail_msg("refused: %s", err.msg);
	assert_false(b.policy.container->root_rw);
	berth_oci_bundle_free(&b);
	jset(cfg, "annotations|berth.dev/writable-root", json_string("yes"));
	assert_int_equal(convert(cfg, &b, &err), -1);
	assert_int_equal(err.status, 2);
	assert_non_null(
	    strstr(err.msg, "`annotations.berth.dev/writable-root` must be `true` or `false`, not `yes`"));
	berth_oci_bundle_free(&b);
	json_decref(cfg);
}

static void test_podman_variants(void **state)
{
	struct berth_oci_bundle b;
	struct berth_error err = {0};
	json_t *cfg = podman();
	const struct berth_mount *m;

	(void)state;
	jset(cfg, "process|terminal", json_true());
	jset(cfg, "process|consoleSize", J("{\"height\": 40, \"width\": 120}"));
	jset(cfg, "process|user",
	     J("{\"uid\": 1000, \"gid\": 1000, \"umask\": 18, \"additionalGids\": [1000]}"));
	jset(cfg, "linux|resources|memory", J("{\"limit\": 67108864, \"swap\": 134217728}"));
	jset(cfg, "linux|resources|cpu", J("{\"quota\": 50000, \"period\": 100000, \"shares\": 1024}"));
	jset(cfg, "linux|namespaces|1", J("{\"type\": \"network\"}"));
	jset(cfg, "mounts|+",
	     J("{\"destination\": \"/scratch\", \"type\": \"tmpfs\", \"source\": \"tmpfs\", \"options\": "
	       "[\"size=10m\", \"rw\", \"rprivate\", \"nosuid\", \"nodev\", \"tmpcopyup\", \"mode=0750\", "
	       "\"nr_inodes=4k\", \"noexec\"]}"));
	{
		char src[PATH_MAX + 16];
		snprintf(src, sizeof src, "%s/work", tmp);
		jset(cfg, "mounts|+",
		     json_pack("{s:s, s:s, s:s, s:[s, s, s]}", "destination", "/data/", "type", "bind",
			       "source", src, "options", "ro", "rprivate", "rbind"));
	}
	jset(cfg, "process|noNewPrivileges", json_false());
	jset(cfg, "process|oomScoreAdj", json_integer(100));
	if (convert(cfg, &b, &err) < 0)
		fail_msg("refused: %s", err.msg);
	assert_true(b.terminal);
	assert_int_equal(b.console_rows, 40);
	assert_int_equal(b.console_cols, 120);
	assert_int_equal(b.policy.container->uid, 1000);
	assert_int_equal(b.policy.container->gid, 1000);
	assert_true(b.policy.memory_set);
	assert_int_equal(b.policy.memory, 67108864);
	assert_true(b.policy.cpus_set);
	assert_int_equal(b.policy.millicpus, 500);
	assert_int_equal(b.policy.network, BERTH_NET_NONE);
	assert_null(b.policy.container->netns);
	m = mount_at(&b.policy, "/scratch");
	assert_non_null(m);
	assert_true(m->tmpfs);
	assert_null(m->src);
	assert_int_equal(m->tmpfs_size, 10 << 20);
	assert_int_equal(m->tmpfs_mode, 0750);
	assert_int_equal(m->tmpfs_inodes, 4096);
	assert_true(m->noexec);
	assert_false(has_note(&b, "mode= "));
	assert_false(has_note(&b, "noexec "));
	assert_true(has_note(&b, "tmpcopyup is not done"));
	assert_false(mount_at(&b.policy, "/data")->rw);
	assert_true(has_note(&b, "process.noNewPrivileges is false: berth sets no_new_privs anyway"));
	assert_true(b.has_oom_score_adj);
	assert_int_equal(b.oom_score_adj, 100);
	berth_oci_bundle_free(&b);
	json_decref(cfg);
}

/* A container of a pod (podman run --pod, the CRI's): the infra's network,
 * IPC and UTS namespaces, joined by path; its own pid and mount ones. */
static void test_pod_namespaces(void **state)
{
	struct berth_oci_bundle b;
	struct berth_error err = {0};
	json_t *cfg = podman();
	const struct berth_container *c;

	(void)state;
	jset(cfg, "linux|namespaces",
	     J("[{\"type\": \"pid\"}, {\"type\": \"network\", \"path\": \"/proc/42/ns/net\"}, "
	       "{\"type\": \"ipc\", \"path\": \"/proc/42/ns/ipc\"}, {\"type\": \"uts\", \"path\": "
	       "\"/proc/42/ns/uts\"}, {\"type\": \"mount\"}]"));
	jset(cfg, "hostname", NULL);
	if (convert(cfg, &b, &err) < 0)
		fail_msg("refused: %s", err.msg);
	c = b.policy.container;
	assert_string_equal(c->netns, "/proc/42/ns/net");
	assert_string_equal(c->ipcns, "/proc/42/ns/ipc");
	assert_string_equal(c->utsns, "/proc/42/ns/uts");
	assert_null(c->hostname);
	assert_int_equal(b.policy.network, BERTH_NET_HOST);
	/* in the canonical policy, and so in its digest */
	{
		char *canon = berth_policy_to_json(&b.policy, false, &err);
		assert_non_null(canon);
		assert_non_null(strstr(canon, "\"ipcns\":\"/proc/42/ns/ipc\""));
		assert_non_null(strstr(canon, "\"utsns\":\"/proc/42/ns/uts\""));
		free(canon);
	}
	berth_oci_bundle_free(&b);
	/* only ipc: the sandbox's own UTS namespace, with the bundle's hostname */
	json_decref(cfg);
	cfg = podman();
	jset(cfg, "linux|namespaces|2|path", J("\"/proc/42/ns/ipc\""));
	if (convert(cfg, &b, &err) < 0)
		fail_msg("refused: %s", err.msg);
	assert_string_equal(b.policy.container->ipcns, "/proc/42/ns/ipc");
	assert_null(b.policy.container->utsns);
	berth_oci_bundle_free(&b);
	/* cgroupsPath: one slash between components */
	jset(cfg, "linux|cgroupsPath", J("\"//kubepods//pod1/c1/\""));
	if (convert(cfg, &b, &err) < 0)
		fail_msg("refused: %s", err.msg);
	assert_string_equal(b.cgroups_path, "/kubepods/pod1/c1");
	assert_non_null(b.policy.container->hostname);
	berth_oci_bundle_free(&b);
	json_decref(cfg);
}

static void test_bind_read_only_and_normalised(void **state)
{
	struct berth_oci_bundle b;
	struct berth_error err = {0};
	json_t *cfg = podman();
	char src[PATH_MAX + 16], real[PATH_MAX];
	const struct berth_mount *m;

	(void)state;
	snprintf(src, sizeof src, "%s/work", tmp);
	jset(cfg, "mounts|+",
	     json_pack("{s:s, s:s, s:s, s:[s, s]}", "destination", "//data//set/", "type", "bind", "source",
		       src, "options", "rbind", "ro"));
	jset(cfg, "mounts|+",
	     json_pack("{s:s, s:s, s:[s, s]}", "destination", "/typeless", "source", src, "options", "bind",
		       "noexec"));
	if (convert(cfg, &b, &err) < 0)
		fail_msg("refused: %s", err.msg);
	m = mount_at(&b.policy, "/data/set");
	assert_non_null(m);
	assert_false(m->rw);
	assert_non_null(realpath(src, real));
	assert_string_equal(m->src, real);
	m = mount_at(&b.policy, "/typeless");
	assert_non_null(m);
	assert_true(m->rw);
	/* noexec is applied, and in the canonical policy */
	assert_true(m->noexec);
	assert_false(mount_at(&b.policy, "/data/set")->noexec);
	assert_false(has_note(&b, "noexec"));
	berth_oci_bundle_free(&b);
	json_decref(cfg);
}

static void test_workspace_annotation(void **state)
{
	struct berth_oci_bundle b;
	struct berth_error err = {0};
	json_t *cfg = podman();
	char src[PATH_MAX + 16], real[PATH_MAX];

	(void)state;
	snprintf(src, sizeof src, "%s/work", tmp);
	jset(cfg, "mounts|+",
	     json_pack("{s:s, s:s, s:s, s:[s, s]}", "destination", "/work", "type", "bind", "source", src,
		       "options", "rbind", "rw"));
	jset(cfg, "annotations|berth.dev/workspace", json_string("/work"));
	if (convert(cfg, &b, &err) < 0)
		fail_msg("refused: %s", err.msg);
	assert_non_null(realpath(src, real));
	assert_string_equal(b.policy.workspace, real);
	assert_string_equal(b.policy.container->workspace_at, "/work");
	assert_null(mount_at(&b.policy, "/work"));
	assert_int_equal(b.policy.n_mounts, 4);
	berth_oci_bundle_free(&b);
	json_decref(cfg);
}

static void test_allow_hosts_annotation(void **state)
{
	struct berth_oci_bundle b;
	struct berth_error err = {0};
	json_t *cfg = podman();

	(void)state;
	jset(cfg, "linux|namespaces|1", J("{\"type\": \"network\"}"));
	jset(cfg, "annotations|berth.dev/allow-hosts",
	     json_string(" API.example.com ,*.github.com:443,api.example.com"));
	jset(cfg, "annotations|berth.dev/audit-dir", json_string("/var/lib//berth-audit/"));
	if (convert(cfg, &b, &err) < 0)
		fail_msg("refused: %s", err.msg);
	assert_int_equal(b.policy.network, BERTH_NET_PROXY);
	assert_int_equal(b.policy.n_allow_hosts, 2);
	assert_string_equal(b.policy.allow_hosts[0], "api.example.com");
	assert_string_equal(b.policy.allow_hosts[1], "*.github.com:443");
	assert_string_equal(b.audit_dir, "/var/lib/berth-audit");
	berth_oci_bundle_free(&b);
	/* white space separates too: podman's --annotation splits its value at
	 * commas, so `berth.dev/allow-hosts=a b` is how podman passes two */
	jset(cfg, "annotations|berth.dev/allow-hosts",
	     json_string("1.2.3.10:80 web.berth.test:80\t[2001:db8::1]:443,\n x.example.com "));
	if (convert(cfg, &b, &err) < 0)
		fail_msg("refused: %s", err.msg);
	assert_int_equal(b.policy.n_allow_hosts, 4);
	assert_string_equal(b.policy.allow_hosts[0], "1.2.3.10:80");
	assert_string_equal(b.policy.allow_hosts[1], "web.berth.test:80");
	assert_string_equal(b.policy.allow_hosts[2], "[2001:db8::1]:443");
	assert_string_equal(b.policy.allow_hosts[3], "x.example.com");
	berth_oci_bundle_free(&b);
	json_decref(cfg);
	/* with a pod's network (a Kubernetes Pod's annotations reach each of its
	 * containers): joined by the supervisor, the broker connecting from it;
	 * the sandbox's own namespace, and the note says so */
	cfg = podman();
	jset(cfg, "annotations|berth.dev/allow-hosts", json_string("example.com"));
	if (convert(cfg, &b, &err) < 0)
		fail_msg("refused: %s", err.msg);
	assert_int_equal(b.policy.network, BERTH_NET_PROXY);
	assert_non_null(b.policy.container->netns);
	assert_int_equal(strncmp(b.policy.container->netns, "/run/netns/netns-", 17), 0);
	assert_true(
	    has_note(&b, "whose only way out is berth's broker, which connects from the pod's network"));
	berth_oci_bundle_free(&b);
	json_decref(cfg);
}

/* berth.dev/profile: a profile's egress and env (a user's profile here,
 * under XDG_CONFIG_HOME: the test binary has no data directory) */
static void write_profile(const char *name, const char *text)
{
	char path[PATH_MAX + 64];
	FILE *f;

	static const char *const dirs[] = {"config", "config/berth", "config/berth/profiles"};

	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof path, "%s/%s", tmp, dirs[i]);
		if (mkdir(path, 0755) < 0)
			assert_int_equal(errno, EEXIST);
	}
	snprintf(path, sizeof path, "%s/config/berth/profiles/%s.yml", tmp, name);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

static bool has_env(const struct berth_policy *p, const char *name, const char *value)
{
	for (size_t i = 0; i < p->n_env; i++)
		if (strcmp(p->env[i].name, name) == 0)
			return strcmp(p->env[i].value, value) == 0;
	return false;
}

static void test_profile_annotation(void **state)
{
	struct berth_oci_bundle b;
	struct berth_error err = {0};
	char xdg[PATH_MAX + 16];
	json_t *cfg;

	(void)state;
	snprintf(xdg, sizeof xdg, "%s/config", tmp);
	setenv("XDG_CONFIG_HOME", xdg, 1);
	write_profile("agent", "command: [agent]\nnetwork: proxy\nallow_hosts: [api.example.com, "
			       "\"*.example.org:443\"]\nenv: [AGENT_QUIET=1, PATH=/nope, TOKEN]\n");
	cfg = podman();
	jset(cfg, "linux|namespaces|1", J("{\"type\": \"network\"}"));
	jset(cfg, "annotations|berth.dev/profile", json_string("agent"));
	jset(cfg, "annotations|berth.dev/allow-hosts", json_string("extra.example.net"));
	if (convert(cfg, &b, &err) < 0)
		fail_msg("refused: %s", err.msg);
	assert_int_equal(b.policy.network, BERTH_NET_PROXY);
	assert_int_equal(b.policy.n_allow_hosts, 3);
	assert_string_equal(b.policy.allow_hosts[0], "extra.example.net");
	assert_string_equal(b.policy.allow_hosts[1], "api.example.com");
	assert_string_equal(b.policy.allow_hosts[2], "*.example.org:443");
	/* its NAME=VALUE env where the bundle sets none; the bundle's PATH wins;
	 * a bare NAME (the host's value) is never taken */
	assert_true(has_env(&b.policy, "AGENT_QUIET", "1"));
	assert_false(has_env(&b.policy, "PATH", "/nope"));
	for (size_t i = 0; i < b.policy.n_env; i++)
		assert_string_not_equal(b.policy.env[i].name, "TOKEN");
	assert_true(has_note(&b, "its network and env are applied; its command, home"));
	berth_oci_bundle_free(&b);
	json_decref(cfg);

	/* with a pod's network: the broker connects from it (noted) */
	cfg = podman();
	jset(cfg, "annotations|berth.dev/profile", json_string("agent"));
	if (convert(cfg, &b, &err) < 0)
		fail_msg("refused: %s", err.msg);
	assert_int_equal(b.policy.network, BERTH_NET_PROXY);
	assert_non_null(b.policy.container->netns);
	assert_true(has_note(&b, "whose only way out is berth's broker"));
	berth_oci_bundle_free(&b);
	json_decref(cfg);

	/* network: none with a pod's network: loopback only, said */
	write_profile("quiet", "command: [agent]\nnetwork: none\n");
	cfg = podman();
	jset(cfg, "annotations|berth.dev/profile", json_string("quiet"));
	if (convert(cfg, &b, &err) < 0)
		fail_msg("refused: %s", err.msg);
	assert_int_equal(b.policy.network, BERTH_NET_NONE);
	assert_true(has_note(&b, "has `network: none`: the container gets a network namespace of its own"));
	berth_oci_bundle_free(&b);
	/* ... and with allow-hosts: a contradiction */
	jset(cfg, "annotations|berth.dev/allow-hosts", json_string("api.example.com"));
	assert_int_equal(convert(cfg, &b, &err), -1);
	assert_non_null(strstr(err.msg, "profile `quiet` has `network: none`, and "
					"`annotations.berth.dev/allow-hosts` names hosts"));
	berth_oci_bundle_free(&b);
	json_decref(cfg);

	/* network: host: refused; an unknown profile: named */
	write_profile("wide", "command: [agent]\nnetwork: host\n");
	cfg = podman();
	jset(cfg, "annotations|berth.dev/profile", json_string("wide"));
	memset(&err, 0, sizeof err);
	assert_int_equal(convert(cfg, &b, &err), -1);
	assert_int_equal(err.status, 2);
	assert_non_null(strstr(err.msg, "profile `wide` has `network: host`, a widening"));
	berth_oci_bundle_free(&b);
	jset(cfg, "annotations|berth.dev/profile", json_string("no-such-profile"));
	memset(&err, 0, sizeof err);
	assert_int_equal(convert(cfg, &b, &err), -1);
	assert_non_null(strstr(err.msg, "config.json: `annotations.berth.dev/profile`: "));
	assert_non_null(strstr(err.msg, "no-such-profile"));
	berth_oci_bundle_free(&b);
	json_decref(cfg);
	unsetenv("XDG_CONFIG_HOME");
}

/* podman --userns=auto: one range of ids each */
static void test_id_ranges(void **state)
{
	struct berth_oci_bundle b;
	struct berth_error err = {0};
	json_t *cfg = podman();

	(void)state;
	jset(cfg, "linux|uidMappings", J("[{\"containerID\": 0, \"hostID\": 100000, \"size\": 65536}]"));
	jset(cfg, "linux|gidMappings", J("[{\"containerID\": 0, \"hostID\": 200000, \"size\": 1024}]"));
	if (convert(cfg, &b, &err) < 0)
		fail_msg("refused: %s", err.msg);
	assert_int_equal(b.policy.container->uid_range.inside, 0);
	assert_int_equal(b.policy.container->uid_range.host, 100000);
	assert_int_equal(b.policy.container->uid_range.size, 65536);
	assert_int_equal(b.policy.container->gid_range.host, 200000);
	assert_int_equal(b.policy.container->gid_range.size, 1024);
	berth_oci_bundle_free(&b);
	json_decref(cfg);
}

/* The file: read from the bundle directory, not through a link. */
static void test_load(void **state)
{
	struct berth_oci_bundle b;
	struct berth_error err = {0};
	char path[PATH_MAX + 32];
	FILE *f;

	(void)state;
	snprintf(path, sizeof path, "%s/config.json", bundle);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(fixture, f);
	fclose(f);
	assert_int_equal(berth_oci_bundle_load(bundle, "c1", &b, &err), 0);
	assert_int_equal(b.policy.argc, 3);
	berth_oci_bundle_free(&b);
	/* not JSON: the line and column */
	f = fopen(path, "w");
	fputs("{\n  \"ociVersion\": \"1.0.2\",\n  oops\n}\n", f);
	fclose(f);
	assert_int_equal(berth_oci_bundle_load(bundle, "c1", &b, &err), -1);
	assert_non_null(strstr(err.msg, "config.json`: line 3"));
	berth_oci_bundle_free(&b);
	/* a link is not followed */
	unlink(path);
	snprintf(path + strlen(path) - strlen("config.json"), 32, "real.json");
	f = fopen(path, "w");
	fputs(fixture, f);
	fclose(f);
	{
		char link[PATH_MAX + 32];
		snprintf(link, sizeof link, "%s/config.json", bundle);
		assert_int_equal(symlink("real.json", link), 0);
		assert_int_equal(berth_oci_bundle_load(bundle, "c1", &b, &err), -1);
		assert_int_equal(err.errnum, ELOOP);
		assert_non_null(strstr(err.msg, "cannot read the bundle's config.json"));
		berth_oci_bundle_free(&b);
		unlink(link);
	}
	unlink(path);
	assert_int_equal(berth_oci_bundle_load("/nonexistent/bundle", "c1", &b, &err), -1);
	assert_non_null(strstr(err.msg, "cannot use the bundle `/nonexistent/bundle`"));
	berth_oci_bundle_free(&b);
}

/* `exec`'s copy: the bytes `create` read, converted again whatever the
 * bundle's config.json says by now, or with it gone. */
static void test_load_saved(void **state)
{
	struct berth_oci_bundle b, again;
	struct berth_error err = {0};
	char path[PATH_MAX + 32], state_dir[PATH_MAX + 32];
	int dfd;
	FILE *f;

	(void)state;
	snprintf(path, sizeof path, "%s/config.json", bundle);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(fixture, f);
	fclose(f);
	assert_int_equal(berth_oci_bundle_load(bundle, "c1", &b, &err), 0);
	assert_int_equal(b.config_len, strlen(fixture));
	assert_memory_equal(b.config, fixture, b.config_len);
	snprintf(state_dir, sizeof state_dir, "%s/state", tmp);
	assert_int_equal(mkdir(state_dir, 0700), 0);
	dfd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	/* none yet: said so */
	assert_int_equal(berth_oci_bundle_load_saved(dfd, bundle, "c1", &again, &err), -1);
	assert_non_null(strstr(err.msg, "container `c1` has no config.json in its state"));
	berth_oci_bundle_free(&again);
	f = fopen(strcat(state_dir, "/" BERTH_OCI_SAVED_CONFIG), "w");
	assert_non_null(f);
	assert_int_equal(fwrite(b.config, 1, b.config_len, f), b.config_len);
	fclose(f);
	/* the bundle's rewritten (another command), then gone */
	f = fopen(path, "w");
	fputs("{\"ociVersion\": \"1.0.2\"}", f);
	fclose(f);
	assert_int_equal(berth_oci_bundle_load_saved(dfd, bundle, "c1", &again, &err), 0);
	assert_int_equal(again.policy.argc, b.policy.argc);
	assert_string_equal(again.policy.argv[0], b.policy.argv[0]);
	berth_oci_bundle_free(&again);
	unlink(path);
	assert_int_equal(berth_oci_bundle_load_saved(dfd, bundle, "c1", &again, &err), 0);
	assert_int_equal(again.policy.argc, 3);
	berth_oci_bundle_free(&again);
	berth_oci_bundle_free(&b);
	unlink(state_dir);
	close(dfd);
	state_dir[strlen(state_dir) - strlen("/" BERTH_OCI_SAVED_CONFIG)] = '\0';
	assert_int_equal(rmdir(state_dir), 0);
}

/* ---------------------------------------------------------- refusals */

struct refusal {
	const char *name;
	const char *set[3];   /* paths (`|`-separated) ... */
	const char *value[3]; /* ... and the JSON each gets (NULL: removed) */
	const char *expect;   /* a part of the message */
};

static const struct refusal refusals[] = {
    {"unknown top-level key", {"vm"}, {"{}"}, "config.json: `vm` is not supported by berth oci"},
    {"unknown linux key",
     {"linux|intelRdt"},
     {"{\"closID\": \"x\"}"},
     "config.json: `linux.intelRdt` is not supported by berth oci"},
    {"unknown process key",
     {"process|ioPriority"},
     {"{\"class\": \"IOPRIO_CLASS_IDLE\"}"},
     "`process.ioPriority` is not supported"},
    {"unknown mount key", {"mounts|0|extra"}, {"1"}, "`mounts[0].extra` is not supported"},
    {"ociVersion 2", {"ociVersion"}, {"\"2.0.0\""}, "`ociVersion` `2.0.0` is not one berth oci reads"},
    {"no ociVersion", {"ociVersion"}, {NULL}, "`ociVersion` is missing"},
    {"supplementary group",
     {"process|user|additionalGids"},
     {"[0, 10]"},
     "`process.user.additionalGids[1]` is not supported by berth oci: supplementary group 10"},
    {"apparmor",
     {"process|apparmorProfile"},
     {"\"containers-default-0.50.1\""},
     "`process.apparmorProfile` is not supported"},
    {"selinux",
     {"process|selinuxLabel"},
     {"\"system_u:system_r:container_t:s0\""},
     "`process.selinuxLabel` is not supported"},
    {"no args", {"process|args"}, {NULL}, "`process.args` is missing"},
    {"empty args", {"process|args"}, {"[]"}, "`process.args` is empty"},
    {"env without =", {"process|env|1"}, {"\"JUSTANAME\""}, "`process.env[1]` must be NAME=VALUE"},
    {"relative cwd", {"process|cwd"}, {"\"work\""}, "`process.cwd` must be an absolute path, not `work`"},
    {"cwd with ..", {"process|cwd"}, {"\"/a/../b\""}, "`process.cwd` must not have `.` or `..` components"},
    {"uid not a number", {"process|user|uid"}, {"\"0\""}, "`process.user.uid` must be an integer"},
    {"rlimit unknown",
     {"process|rlimits|0|type"},
     {"\"RLIMIT_BOGUS\""},
     "`process.rlimits[0].type` `RLIMIT_BOGUS` is not an rlimit"},
    {"rlimit twice",
     {"process|rlimits|1|type"},
     {"\"RLIMIT_NOFILE\""},
     "`process.rlimits[1].type` `RLIMIT_NOFILE` is given twice"},
    {"rlimit soft above hard",
     {"process|rlimits|1|soft"},
     {"40000"},
     "`process.rlimits[1]` has soft 40000 above hard 32768"},
    {"oomScoreAdj range",
     {"process|oomScoreAdj"},
     {"2000"},
     "`process.oomScoreAdj` must be -1000 to 1000, not 2000"},
    {"hook",
     {"hooks"},
     {"{\"prestart\": [{\"path\": \"/usr/bin/nvidia-hook\"}]}"},
     "config.json: `hooks.prestart` has 1 hook (`/usr/bin/nvidia-hook`...): berth oci does not run OCI "
     "hooks"},
    {"hook createRuntime",
     {"hooks"},
     {"{\"poststart\": [], \"createRuntime\": [{\"path\": \"/x\"}, {\"path\": \"/y\"}]}"},
     "`hooks.createRuntime` has 2 hooks"},
    {"hook unknown", {"hooks"}, {"{\"preboot\": []}"}, "`hooks.preboot` is not supported"},
    {"domainname", {"domainname"}, {"\"corp\""}, "`domainname` is not supported"},
    {"root missing", {"root|path"}, {"\"nope\""}, "`root.path`"},
    {"root is /", {"root|path"}, {"\"/\""}, "`root.path` is not supported by berth oci: the host's own root"},
    {"root readonly not bool", {"root|readonly"}, {"\"yes\""}, "`root.readonly` must be true or false"},
    {"overlay mount",
     {"mounts|+"},
     {"{\"destination\": \"/data\", \"type\": \"overlay\", \"source\": \"overlay\"}"},
     "config.json: `mounts[11]` (destination `/data`) is not supported by berth oci: type `overlay`"},
    {"nfs mount",
     {"mounts|+"},
     {"{\"destination\": \"/nfs\", \"type\": \"nfs\", \"source\": \"h:/x\"}"},
     "`mounts[11]` (destination `/nfs`) is not supported by berth oci: type `nfs`"},
    {"shared propagation",
     {"mounts|5|options|+"},
     {"\"rshared\""},
     "`mounts[5]` (destination `/etc/hosts`) is not supported by berth oci: option `rshared`"},
    {"unknown bind option", {"mounts|5|options|+"}, {"\"idmap\""}, "option `idmap` is not one berth honours"},
    {"suid bind",
     {"mounts|5|options|+"},
     {"\"suid\""},
     "option `suid`: berth's mounts are always nosuid and nodev"},
    {"mount under /proc",
     {"mounts|+"},
     {"{\"destination\": \"/proc/sys/kernel\", \"type\": \"bind\", \"source\": \"/proc\", \"options\": "
      "[\"bind\"]}"},
     "`mounts[11]` (destination `/proc/sys/kernel`) is not supported by berth oci: berth builds /dev, /proc "
     "and /sys itself"},
    {"proc elsewhere",
     {"mounts|+"},
     {"{\"destination\": \"/hostproc\", \"type\": \"proc\", \"source\": \"proc\"}"},
     "a `proc` mount is only accepted at its standard place"},
    {"bind over /proc",
     {"mounts|0|type"},
     {"\"bind\""},
     "`mounts[0]` (destination `/proc`) is not supported by berth oci: berth builds `/proc` itself"},
    {"mount over /",
     {"mounts|+"},
     {"{\"destination\": \"/\", \"type\": \"tmpfs\"}"},
     "(destination `/`) is not supported"},
    {"mount ..",
     {"mounts|+"},
     {"{\"destination\": \"/x/../proc\", \"type\": \"tmpfs\"}"},
     "`mounts[11].destination` must not have `.` or `..` components"},
    {"mount twice",
     {"mounts|+"},
     {"{\"destination\": \"/etc/hosts\", \"type\": \"tmpfs\"}"},
     "mounts over an earlier mount at the same destination"},
    {"bind source missing",
     {"mounts|5|source"},
     {"\"/nonexistent/hosts\""},
     "`mounts[5].source` `/nonexistent/hosts` cannot be used"},
    {"bind of /", {"mounts|5|source"}, {"\"/\""}, "binding the host's root"},
    {"ro tmpfs",
     {"mounts|+"},
     {"{\"destination\": \"/t\", \"type\": \"tmpfs\", \"options\": [\"ro\"]}"},
     "a read-only tmpfs"},
    {"tmpfs share of memory",
     {"mounts|+"},
     {"{\"destination\": \"/t\", \"type\": \"tmpfs\", \"options\": [\"size=50%\"]}"},
     "has `size=50%`"},
    {"tmpfs size 0",
     {"mounts|+"},
     {"{\"destination\": \"/t\", \"type\": \"tmpfs\", \"options\": [\"size=0\"]}"},
     "has `size=0`, which tmpfs reads as no limit"},
    {"tmpfs uid",
     {"mounts|+"},
     {"{\"destination\": \"/t\", \"type\": \"tmpfs\", \"options\": [\"uid=1000\"]}"},
     "option `uid=1000` is not one berth honours"},
    {"idmapped mount",
     {"mounts|5|uidMappings"},
     {"[{\"containerID\": 0, \"hostID\": 1000, \"size\": 1}]"},
     "`mounts[5].uidMappings` is not supported"},
    {"no network namespace",
     {"linux|namespaces|1"},
     {NULL},
     "config.json: `linux.namespaces` has no `network`: the container would share the host's network; berth "
     "refuses"},
    {"no linux", {"linux"}, {NULL}, "`linux` is missing"},
    {"pid path",
     {"linux|namespaces|0|path"},
     {"\"/proc/1/ns/pid\""},
     "`linux.namespaces[0].path` is not supported by berth oci: joining the pid namespace `/proc/1/ns/pid`: "
     "berth makes the container's own (only a pod's network, IPC and UTS namespaces may be joined)"},
    {"ipc path relative",
     {"linux|namespaces|2|path"},
     {"\"proc/1/ns/ipc\""},
     "`linux.namespaces[2].path` must be an absolute path, not `proc/1/ns/ipc`"},
    {"hostname with a pod's uts",
     {"linux|namespaces|3|path"},
     {"\"/proc/42/ns/uts\""},
     "config.json: `hostname` `"},
    {"time namespace",
     {"linux|namespaces|+"},
     {"{\"type\": \"time\"}"},
     "`linux.namespaces[5]` is not supported by berth oci: berth does not make a time namespace"},
    {"namespace twice",
     {"linux|namespaces|+"},
     {"{\"type\": \"pid\"}"},
     "`linux.namespaces[5].type` `pid` is given twice"},
    {"netns relative",
     {"linux|namespaces|1|path"},
     {"\"netns/x\""},
     "`linux.namespaces[1].path` must be an absolute path"},
    {"two uid ranges",
     {"linux|uidMappings", "linux|gidMappings"},
     {"[{\"containerID\": 0, \"hostID\": 100000, \"size\": 1}, {\"containerID\": 1, \"hostID\": 200000, "
      "\"size\": 10}]",
      "[{\"containerID\": 0, \"hostID\": 100000, \"size\": 65536}]"},
     "`linux.uidMappings` is not supported by berth oci: 2 ranges: berth maps one range of ids"},
    {"uid range only",
     {"linux|uidMappings"},
     {"[{\"containerID\": 0, \"hostID\": 100000, \"size\": 65536}]"},
     "a container maps a range of uids and gids, or neither"},
    {"id range over host root",
     {"linux|uidMappings", "linux|gidMappings"},
     {"[{\"containerID\": 0, \"hostID\": 0, \"size\": 65536}]",
      "[{\"containerID\": 0, \"hostID\": 100000, \"size\": 65536}]"},
     "the container's uid range 0:0:65536 would map host id 0"},
    {"user outside its range",
     {"linux|uidMappings", "linux|gidMappings", "process|user|uid"},
     {"[{\"containerID\": 0, \"hostID\": 100000, \"size\": 1000}]",
      "[{\"containerID\": 0, \"hostID\": 100000, \"size\": 65536}]", "5000"},
     "the container's uid 5000 is outside its mapped range 0:100000:1000"},
    {"id range of size 0",
     {"linux|uidMappings"},
     {"[{\"containerID\": 0, \"hostID\": 100000, \"size\": 0}]"},
     "`linux.uidMappings[0].size` must be 1 to 4294967295, not 0"},
    {"devices",
     {"linux|devices"},
     {"[{\"path\": \"/dev/fuse\", \"type\": \"c\", \"major\": 10, \"minor\": 229}]"},
     "`linux.devices` is not supported by berth oci"},
    {"device allow rule",
     {"linux|resources|devices|+"},
     {"{\"allow\": true, \"type\": \"c\", \"major\": 10, \"minor\": 229, \"access\": \"rwm\"}"},
     "`linux.resources.devices[1]` is not supported by berth oci: an allow rule for device c 10:229"},
    {"allow every device",
     {"linux|resources|devices|+"},
     {"{\"allow\": true, \"access\": \"rwm\"}"},
     "an allow rule for device a -1:-1"},
    {"blockIO",
     {"linux|resources|blockIO"},
     {"{\"weight\": 10}"},
     "`linux.resources.blockIO` is not supported"},
    {"hugepages",
     {"linux|resources|hugepageLimits"},
     {"[{\"pageSize\": \"2MB\", \"limit\": 1}]"},
     "`linux.resources.hugepageLimits` is not supported"},
    {"unified",
     {"linux|resources|unified"},
     {"{\"io.max\": \"8:0 rbps=1\"}"},
     "`linux.resources.unified` is not supported"},
    {"rdma",
     {"linux|resources|rdma"},
     {"{\"mlx5_1\": {\"hcaHandles\": 3}}"},
     "`linux.resources.rdma` is not supported"},
    {"net cls",
     {"linux|resources|network"},
     {"{\"classID\": 1}"},
     "`linux.resources.network` is not supported"},
    {"unknown resource", {"linux|resources|gpu"}, {"{}"}, "`linux.resources.gpu` is not supported"},
    {"memory too small",
     {"linux|resources|memory|limit"},
     {"1048576"},
     "invalid linux.resources.memory.limit `1048576`: too small"},
    {"kernel memory",
     {"linux|resources|memory|kernel"},
     {"1048576"},
     "`linux.resources.memory.kernel` is not supported"},
    {"no oom killer",
     {"linux|resources|memory|disableOOMKiller"},
     {"true"},
     "`linux.resources.memory.disableOOMKiller` is not supported"},
    {"cpuset", {"linux|resources|cpu|cpus"}, {"\"0-1\""}, "`linux.resources.cpu.cpus` is not supported"},
    {"realtime",
     {"linux|resources|cpu|realtimeRuntime"},
     {"950000"},
     "`linux.resources.cpu.realtimeRuntime` is not supported"},
    {"cpu too little",
     {"linux|resources|cpu"},
     {"{\"quota\": 500, \"period\": 100000}"},
     "invalid linux.resources.cpu.quota `0.005`: too small"},
    {"pids too few",
     {"linux|resources|pids|limit"},
     {"1"},
     "invalid linux.resources.pids.limit `1`: too small"},
    {"sysctl",
     {"linux|sysctl|net.core.somaxconn"},
     {"\"1024\""},
     "config.json: `linux.sysctl.net.core.somaxconn` is not supported by berth oci: berth sets no sysctl "
     "(`1024`)"},
    {"mountLabel",
     {"linux|mountLabel"},
     {"\"system_u:object_r:container_file_t:s0\""},
     "`linux.mountLabel` is not supported"},
    {"personality",
     {"linux|personality"},
     {"{\"domain\": \"LINUX32\"}"},
     "`linux.personality` is not supported"},
    {"shared rootfs",
     {"linux|rootfsPropagation"},
     {"\"rshared\""},
     "`linux.rootfsPropagation` is not supported by berth oci: `rshared`"},
    {"masked relative",
     {"linux|maskedPaths|0"},
     {"\"proc/kcore\""},
     "`linux.maskedPaths[0]` must be an absolute path"},
    {"seccomp notify",
     {"linux|seccomp|syscalls|0|action"},
     {"\"SCMP_ACT_NOTIFY\""},
     "`linux.seccomp.syscalls[0].action` is not supported by berth oci: `SCMP_ACT_NOTIFY`"},
    {"seccomp listener",
     {"linux|seccomp|listenerPath"},
     {"\"/run/agent.sock\""},
     "`linux.seccomp.listenerPath` is not supported"},
    {"seccomp spec allow",
     {"linux|seccomp|flags"},
     {"[\"SECCOMP_FILTER_FLAG_SPEC_ALLOW\"]"},
     "`linux.seccomp.flags[0]` is not supported by berth oci: `SECCOMP_FILTER_FLAG_SPEC_ALLOW`"},
    {"seccomp arch",
     {"linux|seccomp|architectures|+"},
     {"\"SCMP_ARCH_VAX\""},
     "`linux.seccomp.architectures[3]` `SCMP_ARCH_VAX` is not an architecture"},
    {"seccomp action",
     {"linux|seccomp|defaultAction"},
     {"\"SCMP_ACT_MAYBE\""},
     "`linux.seccomp.defaultAction` `SCMP_ACT_MAYBE` is not a seccomp action"},
    {"seccomp op",
     {"linux|seccomp|syscalls|2|args|0|op"},
     {"\"SCMP_CMP_ALMOST\""},
     "`linux.seccomp.syscalls[2].args[0].op` `SCMP_CMP_ALMOST`"},
    {"seccomp arg index",
     {"linux|seccomp|syscalls|2|args|0|index"},
     {"6"},
     "`linux.seccomp.syscalls[2].args[0].index` must be 0 to 5, not 6"},
    {"seccomp unknown key",
     {"linux|seccomp|syscalls|0|includes"},
     {"{}"},
     "`linux.seccomp.syscalls[0].includes` is not supported"},
    {"unknown berth annotation",
     {"annotations|berth.dev/network"},
     {"\"host\""},
     "config.json: `annotations.berth.dev/network` is not an annotation berth reads: berth.dev/workspace"},
    {"invalid berth annotation", {"annotations|berth.dev/-x"}, {"\"1\""}, "(nor a valid annotation name)"},
    {"annotation not a string",
     {"annotations|io.example"},
     {"1"},
     "`annotations.io.example` must be a string"},
    {"workspace without mount",
     {"annotations|berth.dev/workspace"},
     {"\"/workspace\""},
     "`annotations.berth.dev/workspace` names `/workspace`, and no bind mount has that destination"},
    {"allow-hosts bad",
     {"linux|namespaces|1", "annotations|berth.dev/allow-hosts"},
     {"{\"type\": \"network\"}", "\"*\""},
     "config.json: `annotations.berth.dev/allow-hosts`: a bare `*` would allow every host"},
    {"allow-hosts empty",
     {"linux|namespaces|1", "annotations|berth.dev/allow-hosts"},
     {"{\"type\": \"network\"}", "\" , \\t \""},
     "`annotations.berth.dev/allow-hosts`"},
    {"tmpfs mode not octal",
     {"mounts|+"},
     {"{\"destination\": \"/t\", \"type\": \"tmpfs\", \"source\": \"tmpfs\", \"options\": [\"mode=1778\"]}"},
     "has `mode=1778`: not an octal mode of at most 07777"},
    {"tmpfs mode 0",
     {"mounts|+"},
     {"{\"destination\": \"/t\", \"type\": \"tmpfs\", \"source\": \"tmpfs\", \"options\": [\"mode=0\"]}"},
     "has `mode=0`: a tmpfs nobody in the container could use"},
    {"tmpfs nr_inodes 0",
     {"mounts|+"},
     {"{\"destination\": \"/t\", \"type\": \"tmpfs\", \"source\": \"tmpfs\", \"options\": "
      "[\"nr_inodes=0\"]}"},
     "has `nr_inodes=0`: not a count of at least 1"},
    {"cgroupsPath relative",
     {"linux|cgroupsPath"},
     {"\"libpod_parent/x\""},
     "config.json: `linux.cgroupsPath` `libpod_parent/x` must be an absolute cgroup path"},
    {"cgroupsPath dot-dot",
     {"linux|cgroupsPath"},
     {"\"/kubepods/../../x\""},
     "`linux.cgroupsPath` `/kubepods/../../x` has a `.` or `..` component"},
    {"cgroupsPath the root",
     {"linux|cgroupsPath"},
     {"\"//\""},
     "`linux.cgroupsPath` `//` is the hierarchy's root"},
    {"cgroupsPath systemd",
     {"linux|cgroupsPath"},
     {"\"machine.slice:libpod:abc\""},
     "config.json: `linux.cgroupsPath` `machine.slice:libpod:abc` is systemd's form"},
    {"audit-dir relative",
     {"annotations|berth.dev/audit-dir"},
     {"\"audit\""},
     "`annotations.berth.dev/audit-dir` must be an absolute path"},
    {"audit-dir a file",
     {"annotations|berth.dev/audit-dir"},
     {"\"/etc/passwd\""},
     "`annotations.berth.dev/audit-dir` `/etc/passwd` exists and is not a directory"},
    {"not an object", {"process"}, {"[]"}, "`process` must be an object"},
};

static void test_refusal(void **state)
{
	const struct refusal *r = *state;
	struct berth_oci_bundle b;
	struct berth_error err = {0};
	json_t *cfg = podman();

	for (int i = 0; i < 3 && r->set[i] != NULL; i++)
		jset(cfg, r->set[i], r->value[i] != NULL ? J(r->value[i]) : NULL);
	if (convert(cfg, &b, &err) == 0)
		fail_msg("%s: accepted", r->name);
	if (getenv("BERTH_TEST_SHOW") != NULL) /* to read every message at once */
		print_message("%s\n    hint: %s\n", err.msg, err.hint);
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	if (r->expect != NULL && strstr(err.msg, r->expect) == NULL)
		fail_msg("%s: the message `%s` does not say `%s`", r->name, err.msg, r->expect);
	berth_oci_bundle_free(&b);
	json_decref(cfg);
}

/* A typeless mount without `bind`: what it is cannot be told. */
static void test_typeless_mount(void **state)
{
	struct berth_oci_bundle b;
	struct berth_error err = {0};
	json_t *cfg = podman();

	(void)state;
	jset(cfg, "mounts|5|type", NULL);
	jset(cfg, "mounts|5|options", J("[\"rprivate\"]"));
	assert_int_equal(convert(cfg, &b, &err), -1);
	assert_string_equal(
	    err.msg,
	    "config.json: `mounts[5]` (destination `/etc/hosts`) has no type and is no bind mount (no "
	    "`bind` option)");
	berth_oci_bundle_free(&b);
	json_decref(cfg);
}

/* The hint of a refusal says what to do. */
static void test_refusal_hint(void **state)
{
	struct berth_oci_bundle b;
	struct berth_error err = {0};
	json_t *cfg = podman();

	(void)state;
	jset(cfg, "linux|netDevices", J("{\"eth1\": {}}"));
	assert_int_equal(convert(cfg, &b, &err), -1);
	assert_string_equal(err.msg,
			    "config.json: `linux.netDevices` is not supported by berth oci: berth does not "
			    "know what it would change, so it refuses it");
	assert_non_null(strstr(err.hint, "docs/oci.md"));
	berth_oci_bundle_free(&b);
	json_decref(cfg);
}

/* An empty intelRdt, hooks or devices is no request. */
static void test_empty_is_nothing(void **state)
{
	struct berth_oci_bundle b;
	struct berth_error err = {0};
	json_t *cfg = podman();

	(void)state;
	jset(cfg, "hooks", J("{\"prestart\": [], \"poststop\": []}"));
	jset(cfg, "linux|devices", J("[]"));
	jset(cfg, "linux|mountLabel", J("\"\""));
	jset(cfg, "linux|resources|blockIO", J("{}"));
	jset(cfg, "linux|rootfsPropagation", J("\"rslave\""));
	jset(cfg, "linux|resources|devices|+",
	     J("{\"allow\": true, \"type\": \"c\", \"major\": 1, \"minor\": 3, "
	       "\"access\": \"rwm\"}"));
	jset(cfg, "linux|resources|devices|+",
	     J("{\"allow\": true, \"type\": \"c\", \"major\": 136, \"access\": "
	       "\"rwm\"}"));
	jset(cfg, "process|apparmorProfile", J("\"\""));
	if (convert(cfg, &b, &err) < 0)
		fail_msg("refused: %s", err.msg);
	berth_oci_bundle_free(&b);
	json_decref(cfg);
}

static void test_ociversions(void **state)
{
	static const char *const ok[] = {"1.0.0", "1.0.2-dev", "1.1.0", "1.1.0-rc.1", "1.0.12"};
	static const char *const bad[] = {"1.2.0", "1.0", "1.", "0.9.0", "1.0.x", "1.1.0 "};

	(void)state;
	for (size_t i = 0; i < sizeof ok / sizeof ok[0] + sizeof bad / sizeof bad[0]; i++) {
		bool good = i < sizeof ok / sizeof ok[0];
		const char *v = good ? ok[i] : bad[i - sizeof ok / sizeof ok[0]];
		struct berth_oci_bundle b;
		struct berth_error err = {0};
		json_t *cfg = podman();
		jset(cfg, "ociVersion", json_string(v));
		if ((convert(cfg, &b, &err) == 0) != good)
			fail_msg("ociVersion `%s`: %s", v, good ? err.msg : "accepted");
		berth_oci_bundle_free(&b);
		json_decref(cfg);
	}
}

/* ---------------------------------------------------------- the rest */

static void test_id(void **state)
{
	struct berth_error err = {0};
	char longid[300];

	(void)state;
	assert_int_equal(berth_oci_id_check("9ddfa3a2fa29", &err), 0);
	assert_int_equal(berth_oci_id_check("a_b+c-d.e", &err), 0);
	assert_int_equal(berth_oci_id_check("..a", &err), 0);
	assert_int_equal(berth_oci_id_check(".", &err), -1);
	assert_int_equal(berth_oci_id_check("..", &err), -1);
	assert_int_equal(berth_oci_id_check("", &err), -1);
	assert_int_equal(berth_oci_id_check("a/b", &err), -1);
	assert_string_equal(err.msg, "invalid container id `a/b`: `/` is not one of A-Z a-z 0-9 _ + - .");
	assert_int_equal(berth_oci_id_check("a\nb", &err), -1);
	assert_non_null(strstr(err.msg, "`\\x0a`"));
	memset(longid, 'a', sizeof longid - 1);
	longid[sizeof longid - 1] = '\0';
	assert_int_equal(berth_oci_id_check(longid, &err), -1);
	assert_non_null(strstr(err.msg, "longer than 255 bytes"));
	longid[255] = '\0';
	assert_int_equal(berth_oci_id_check(longid, &err), 0);
}

static void test_signals(void **state)
{
	struct berth_error err = {0};
	int sig = 0;

	(void)state;
	assert_int_equal(berth_oci_signal_parse("15", &sig, &err), 0);
	assert_int_equal(sig, SIGTERM);
	assert_int_equal(berth_oci_signal_parse("TERM", &sig, &err), 0);
	assert_int_equal(sig, SIGTERM);
	assert_int_equal(berth_oci_signal_parse("SIGKILL", &sig, &err), 0);
	assert_int_equal(sig, SIGKILL);
	assert_int_equal(berth_oci_signal_parse("sigusr1", &sig, &err), 0);
	assert_int_equal(sig, SIGUSR1);
	assert_int_equal(berth_oci_signal_parse("RTMIN+2", &sig, &err), 0);
	assert_int_equal(sig, SIGRTMIN + 2);
	assert_int_equal(berth_oci_signal_parse("SIGRTMAX", &sig, &err), 0);
	assert_int_equal(sig, SIGRTMAX);
	assert_int_equal(berth_oci_signal_parse("0", &sig, &err), -1);
	assert_int_equal(berth_oci_signal_parse("65", &sig, &err), -1);
	assert_int_equal(berth_oci_signal_parse("15x", &sig, &err), -1);
	assert_int_equal(berth_oci_signal_parse("SIGFOO", &sig, &err), -1);
	assert_string_equal(err.msg, "invalid signal `SIGFOO`");
	assert_int_equal(berth_oci_signal_parse("RTMIN-1", &sig, &err), -1);
}

static void test_features(void **state)
{
	json_t *f = berth_oci_features();
	const json_t *l;
	char *s;

	(void)state;
	assert_non_null(f);
	assert_string_equal(json_string_value(json_object_get(f, "ociVersionMin")), "1.0.0");
	assert_string_equal(json_string_value(json_object_get(f, "ociVersionMax")), BERTH_OCI_VERSION);
	assert_int_equal(json_array_size(json_object_get(f, "hooks")), 0);
	l = json_object_get(f, "linux");
	assert_int_equal(json_array_size(json_object_get(l, "capabilities")), 0);
	assert_true(json_is_false(json_object_get(json_object_get(l, "cgroup"), "systemd")));
	s = json_dumps(json_object_get(json_object_get(l, "seccomp"), "archs"), JSON_COMPACT);
	assert_non_null(strstr(s, "\"SCMP_ARCH_X86_64\""));
	free(s);
	s = json_dumps(json_object_get(json_object_get(l, "seccomp"), "actions"), JSON_COMPACT);
	assert_null(strstr(s, "NOTIFY"));
	free(s);
	assert_non_null(json_object_get(json_object_get(f, "annotations"), "berth.dev/workspace"));
	assert_non_null(json_object_get(json_object_get(f, "annotations"), "berth.dev/profile"));
	json_decref(f);
}

static void test_state_file(void **state)
{
	struct berth_oci_bundle b;
	struct berth_error err = {0};
	struct berth_oci_state s;
	unsigned long long start;
	char root[PATH_MAX + 16];
	json_t *cfg = podman(), *doc, *out;
	int rootfd, dfd;

	(void)state;
	assert_int_equal(convert(cfg, &b, &err), 0);
	snprintf(root, sizeof root, "%s/state/deeper", tmp);
	assert_int_equal(berth_oci_root_open(root, false, &err), -1);
	assert_int_equal(err.errnum, ENOENT);
	rootfd = berth_oci_root_open(root, true, &err);
	assert_true(rootfd >= 0);
	{
		struct stat st;
		assert_int_equal(stat(root, &st), 0);
		assert_int_equal(st.st_mode & 0777, 0700);
	}
	assert_int_equal(berth_oci_state_read(rootfd, "c1", &s, &err), -1);
	assert_string_equal(err.msg, "container `c1` does not exist");
	assert_int_equal(err.errnum, ENOENT);
	assert_int_equal(mkdirat(rootfd, "c1", 0700), 0);
	dfd = openat(rootfd, "c1", O_RDONLY | O_DIRECTORY);
	/* no state.json and no `create` holding the lock: a dead create */
	assert_int_equal(berth_oci_state_read(rootfd, "c1", &s, &err), 0);
	assert_int_equal(s.status, BERTH_OCI_STOPPED);
	berth_oci_state_free(&s);
	/* this process as the supervisor: alive */
	assert_int_equal(berth_oci_proc_start(getpid(), &start), 0);
	doc = berth_oci_state_doc("c1", &b, "2026-12-02T00:00:00.000000001Z", getpid(), start);
	assert_non_null(doc);
	json_object_set_new(doc, "status", json_string("running"));
	assert_int_equal(berth_oci_state_write(dfd, doc, &err), 0);
	assert_int_equal(berth_oci_state_read(rootfd, "c1", &s, &err), 0);
	assert_int_equal(s.status, BERTH_OCI_RUNNING);
	assert_int_equal(s.pid, getpid());
	out = berth_oci_state_json(&s);
	assert_string_equal(json_string_value(json_object_get(out, "status")), "running");
	assert_string_equal(json_string_value(json_object_get(out, "id")), "c1");
	assert_string_equal(json_string_value(json_object_get(out, "bundle")), bundle);
	assert_string_equal(json_string_value(json_object_get(out, "rootfs")), b.policy.container->root);
	assert_string_equal(json_string_value(json_object_get(out, "owner")), "");
	assert_string_equal(json_string_value(json_object_get(out, "created")),
			    "2026-12-02T00:00:00.000000001Z");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(out, "annotations"), "io.container.manager")),
	    "libpod");
	json_decref(out);
	berth_oci_state_free(&s);
	/* the same pid with another start time: another process */
	json_object_set_new(doc, "pid_start", json_integer((json_int_t)start + 1));
	assert_int_equal(berth_oci_state_write(dfd, doc, &err), 0);
	assert_int_equal(berth_oci_state_read(rootfd, "c1", &s, &err), 0);
	assert_int_equal(s.status, BERTH_OCI_STOPPED);
	assert_int_equal(s.pid, 0);
	berth_oci_state_free(&s);
	/* a child that exited (reaped): gone */
	{
		pid_t c = fork();
		unsigned long long cs = 0;
		if (c == 0)
			_exit(0);
		assert_int_equal(berth_oci_proc_start(c, &cs), 0);
		/* a zombie is gone too: waitid(WNOWAIT) returns once the child
		 * exited and leaves it unreaped (a sleep here raced a loaded
		 * machine: the child had not run yet) */
		{
			siginfo_t si;
			assert_int_equal(waitid(P_PID, (id_t)c, &si, WEXITED | WNOWAIT), 0);
		}
		assert_false(berth_oci_alive(c, cs));
		waitpid(c, NULL, 0);
		assert_false(berth_oci_alive(c, cs));
	}
	/* never through a link */
	assert_int_equal(unlinkat(dfd, "state.json", 0), 0);
	assert_int_equal(symlinkat("/etc/passwd", dfd, "state.json"), 0);
	assert_int_equal(berth_oci_state_read(rootfd, "c1", &s, &err), -1);
	assert_int_equal(err.errnum, ELOOP);
	assert_int_equal(berth_oci_state_write(dfd, doc, &err), 0); /* replaces the link, not its target */
	{
		struct stat st;
		assert_int_equal(fstatat(dfd, "state.json", &st, AT_SYMLINK_NOFOLLOW), 0);
		assert_true(S_ISREG(st.st_mode));
	}
	close(dfd);
	close(rootfd);
	json_decref(doc);
	berth_oci_bundle_free(&b);
	json_decref(cfg);
	/* not private: refused */
	assert_int_equal(chmod(root, 0755), 0); /* readable is fine (runc makes 0711) */
	rootfd = berth_oci_root_open(root, true, &err);
	assert_true(rootfd >= 0);
	close(rootfd);
	assert_int_equal(chmod(root, 0775), 0);
	assert_int_equal(berth_oci_root_open(root, true, &err), -1);
	assert_non_null(strstr(err.msg, "writable by nobody else"));
	assert_int_equal(chmod(root, 0777), 0);
	assert_int_equal(berth_oci_root_open(root, true, &err), -1);
	assert_non_null(strstr(err.msg, "must belong to uid"));
	assert_int_equal(berth_oci_root_open("relative/root", true, &err), -1);
	assert_non_null(strstr(err.msg, "is not an absolute path"));
}

static void test_log(void **state)
{
	struct berth_oci_log l;
	struct berth_error err = {0}, e = {0};
	char path[PATH_MAX + 16], *text;

	(void)state;
	snprintf(path, sizeof path, "%s/log.json", tmp);
	assert_int_equal(berth_oci_log_open(&l, path, true, false, &err), 0);
	berth_usage_err(&e, "config.json: `vm` is \"bad\"\x01");
	berth_err_hint(&e, "fix it");
	berth_oci_log_error(&l, &e);
	berth_oci_logf(&l, BERTH_OCI_DEBUG, "not written without --debug");
	berth_oci_logf(&l, BERTH_OCI_WARNING, "w");
	close(l.fd);
	text = read_all(path);
	{
		json_error_t je;
		char *nl = strchr(text, '\n');
		assert_non_null(nl);
		*nl = '\0';
		json_t *line = json_loads(text, 0, &je);
		assert_non_null(line);
		assert_string_equal(json_string_value(json_object_get(line, "level")), "error");
		assert_string_equal(json_string_value(json_object_get(line, "msg")),
				    "config.json: `vm` is \"bad\"\x01 (hint: fix it)");
		assert_int_equal(strlen(json_string_value(json_object_get(line, "time"))), 20);
		json_decref(line);
		assert_non_null(strstr(nl + 1, "\"level\":\"warning\""));
		assert_null(strstr(nl + 1, "debug"));
	}
	free(text);
	snprintf(path, sizeof path, "%s/log.txt", tmp);
	assert_int_equal(berth_oci_log_open(&l, path, false, true, &err), 0);
	berth_oci_logf(&l, BERTH_OCI_ERROR, "say \"hi\"");
	berth_oci_logf(&l, BERTH_OCI_DEBUG, "d");
	close(l.fd);
	text = read_all(path);
	assert_non_null(strstr(text, " level=error msg=\"say \\\"hi\\\"\"\n"));
	assert_int_equal(strncmp(text, "time=\"", 6), 0);
	assert_non_null(strstr(text, "level=debug msg=\"d\""));
	free(text);
	/* never through a link */
	snprintf(path, sizeof path, "%s/log.link", tmp);
	assert_int_equal(symlink("log.txt", path), 0);
	assert_int_equal(berth_oci_log_open(&l, path, false, false, &err), -1);
	assert_int_equal(err.errnum, ELOOP);
}

static void test_console_fd(void **state)
{
	struct berth_error err = {0};
	int sv[2], p[2], got = -1;
	char buf[16], cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {.iov_base = buf, .iov_len = sizeof buf};
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
	ssize_t n;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(berth_oci_send_fd(sv[0], p[1], &err), 0);
	n = recvmsg(sv[1], &mh, 0);
	assert_int_equal(n, 7);
	assert_memory_equal(buf, "console", 7);
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	assert_non_null(c);
	assert_int_equal(c->cmsg_type, SCM_RIGHTS);
	memcpy(&got, CMSG_DATA(c), sizeof got);
	assert_true(got >= 0);
	assert_int_equal(write(got, "x", 1), 1); /* the same pipe */
	assert_int_equal(read(p[0], buf, 1), 1);
	assert_int_equal(buf[0], 'x');
	close(got);
	close(p[0]);
	close(p[1]);
	close(sv[1]);
	/* the peer is gone: an error, not a SIGPIPE */
	assert_int_equal(berth_oci_send_fd(sv[0], sv[0], &err), -1);
	assert_int_equal(err.errnum, EPIPE);
	close(sv[0]);
	assert_int_equal(berth_oci_console_connect("/nonexistent/console.sock", &err), -1);
	assert_int_equal(err.errnum, ENOENT);
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
	    cmocka_unit_test(test_podman_config),
	    cmocka_unit_test(test_podman_variants),
	    cmocka_unit_test(test_pod_namespaces),
	    cmocka_unit_test(test_writable_root),
	    cmocka_unit_test(test_bind_read_only_and_normalised),
	    cmocka_unit_test(test_workspace_annotation),
	    cmocka_unit_test(test_allow_hosts_annotation),
	    cmocka_unit_test(test_profile_annotation),
	    cmocka_unit_test(test_id_ranges),
	    cmocka_unit_test(test_load),
	    cmocka_unit_test(test_load_saved),
	    cmocka_unit_test(test_typeless_mount),
	    cmocka_unit_test(test_refusal_hint),
	    cmocka_unit_test(test_empty_is_nothing),
	    cmocka_unit_test(test_ociversions),
	    cmocka_unit_test(test_id),
	    cmocka_unit_test(test_signals),
	    cmocka_unit_test(test_features),
	    cmocka_unit_test(test_state_file),
	    cmocka_unit_test(test_log),
	    cmocka_unit_test(test_console_fd),
	};
	size_t nf = sizeof fixed / sizeof fixed[0], nr = sizeof refusals / sizeof refusals[0];
	struct CMUnitTest *tests = calloc(nf + nr, sizeof *tests);

	memcpy(tests, fixed, sizeof fixed);
	for (size_t i = 0; i < nr; i++)
		tests[nf + i] = (struct CMUnitTest){.name = refusals[i].name,
						    .test_func = test_refusal,
						    .initial_state = (void *)&refusals[i]};
	return _cmocka_run_group_tests("oci", tests, nf + nr, setup, teardown);
}
