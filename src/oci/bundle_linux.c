/* SPDX-License-Identifier: MIT */
/*
 * bundle_linux.c - config.json `linux` into the policy: namespaces (the
 * network decides berth's --network), resources (memory, CPU, pids; the
 * device rules), sysctl, masked and read-only paths, and the keys that are
 * accepted without effect (rootfsPropagation); cgroupsPath, which the
 * supervisor joins.  linux.seccomp is bundle_seccomp.c's.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"
#include "oci_int.h"

/* ---------------------------------------------------------- namespaces */

static int convert_namespaces(const json_t *ns, struct berth_oci_bundle *b, struct berth_error *err)
{
	static const char *const keys[] = {"type", "path", NULL};
	static const char *const known[] = {"pid", "network", "mount",  "ipc",
					    "uts", "user",    "cgroup", "time"};
	unsigned seen = 0;
	size_t i;
	json_t *e;

	if (berth_oci_want_array(ns, "linux.namespaces", err) < 0)
		return -1;
	json_array_foreach((json_t *)ns, i, e) {
		char path[64], sub[96];
		const char *type, *nspath;
		size_t k = 0;

		snprintf(path, sizeof path, "linux.namespaces[%zu]", i);
		if (berth_oci_want_object(e, path, err) < 0 || e == NULL ||
		    berth_oci_keys(e, path, keys, err) < 0)
			return -1;
		snprintf(sub, sizeof sub, "%s.type", path);
		if (berth_oci_string(json_object_get(e, "type"), sub, true, &type, err) < 0)
			return -1;
		while (k < BERTH_ARRAY_SIZE(known) && strcmp(type, known[k]) != 0)
			k++;
		if (k == BERTH_ARRAY_SIZE(known))
			return berth_oci_bad(err, sub, "`%.64s` is not a namespace type", type);
		if (seen & (1u << k))
			return berth_oci_bad(err, sub, "`%s` is given twice", type);
		seen |= 1u << k;
		snprintf(sub, sizeof sub, "%s.path", path);
		if (berth_oci_string(json_object_get(e, "path"), sub, false, &nspath, err) < 0)
			return -1;
		if (strcmp(type, "time") == 0)
			return berth_oci_unsupported(err, path, "berth does not make a time namespace");
		if (nspath != NULL && nspath[0] != '\0' && strcmp(type, "network") != 0 &&
		    strcmp(type, "ipc") != 0 && strcmp(type, "uts") != 0)
			return berth_oci_unsupported(err, sub,
						     "joining the %s namespace `%.200s`: berth makes the "
						     "container's own (only a pod's network, IPC and UTS "
						     "namespaces may be joined)",
						     type, nspath);
		if (nspath != NULL && nspath[0] != '\0') {
			struct berth_container *c = b->policy.container;
			char **slot = strcmp(type, "network") == 0 ? &c->netns
				      : strcmp(type, "ipc") == 0   ? &c->ipcns
								   : &c->utsns;
			if (nspath[0] != '/')
				return berth_oci_bad(err, sub, "must be an absolute path, not `%.200s`",
						     nspath);
			if ((*slot = berth_oci_strdup(nspath, err)) == NULL)
				return -1;
			/* the sandbox shares the joined one (a pod's network) */
			if (slot == &c->netns)
				b->policy.network = BERTH_NET_HOST;
		}
	}
	if (b->policy.container->utsns != NULL && b->policy.container->hostname != NULL)
		return berth_oci_bad(err, "hostname",
				     "`%.64s` needs a UTS namespace of the container's own, and "
				     "`linux.namespaces` joins `%.200s` (runc's rule too)",
				     b->policy.container->hostname, b->policy.container->utsns);
	if (!(seen & (1u << 1))) {
		berth_usage_err(err,
				"config.json: `linux.namespaces` has no `network`: the container would share "
				"the host's network; berth refuses");
		return berth_err_hint(err,
				      "give the container a network namespace (podman: not --network host; "
				      "a pod's: `path`), or none for no network");
	}
	if (b->policy.container->netns == NULL)
		b->policy.network = BERTH_NET_NONE; /* a new one with loopback only, like runc's */
	/* pid, mount, ipc, uts: berth always makes its own, also when the
	 * bundle would share the host's. */
	for (size_t k = 0; k < 4; k++) {
		static const unsigned own[] = {0, 2, 3, 4};
		if (!(seen & (1u << own[k])) &&
		    berth_oci_note(
			b, err,
			"linux.namespaces has no `%s`: the container gets its own anyway (berth never "
			"shares the host's)",
			known[own[k]]) < 0)
			return -1;
	}
	return 0;
}

/* ---------------------------------------------------------- cgroupsPath */

/*
 * linux.cgroupsPath: the engine's cgroup, which the supervisor joins
 * (src/oci/cgroup.c).  Absolute (podman's and the kubelet's cgroupfs
 * paths), each component a plain name: `.` and `..` would leave the
 * hierarchy's tree, and `slice:prefix:name` is systemd's form, for which
 * berth has no driver.
 */
static int convert_cgroups_path(const char *s, struct berth_oci_bundle *b, struct berth_error *err)
{
	size_t n = strlen(s);

	if (strchr(s, ':') != NULL && s[0] != '/') {
		berth_usage_err(
		    err,
		    "config.json: `linux.cgroupsPath` `%.200s` is systemd's form (slice:prefix:name): "
		    "berth oci has no systemd cgroup driver",
		    s);
		return berth_err_hint(err, "use the engine's cgroupfs manager (podman: cgroup_manager = "
					   "\"cgroupfs\"; containerd: SystemdCgroup = false)");
	}
	if (s[0] != '/')
		return berth_oci_bad(err, "linux.cgroupsPath",
				     "`%.200s` must be an absolute cgroup path (cgroupfs: `/parent/name`)",
				     s);
	if (n >= PATH_MAX / 2)
		return berth_oci_bad(err, "linux.cgroupsPath", "is longer than %d bytes", PATH_MAX / 2);
	for (const char *c = s; *c != '\0';) {
		size_t len;
		while (*c == '/')
			c++;
		len = strcspn(c, "/");
		if ((len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return berth_oci_bad(err, "linux.cgroupsPath",
					     "`%.200s` has a `.` or `..` component: a cgroup path names one "
					     "cgroup below the hierarchy's root",
					     s);
		c += len;
	}
	if (strcmp(s + strspn(s, "/"), "") == 0)
		return berth_oci_bad(err, "linux.cgroupsPath", "`%.200s` is the hierarchy's root", s);
	if ((b->cgroups_path = berth_oci_strdup(s, err)) == NULL)
		return -1;
	/* one slash between components, none at the end */
	{
		char *w = b->cgroups_path;
		for (const char *r = s; *r != '\0'; r++)
			if (!(*r == '/' && (r[1] == '/' || r[1] == '\0')))
				*w++ = *r;
		*w = '\0';
	}
	return 0;
}

/* ---------------------------------------------------------- resources */

/* The device nodes berth makes in /dev (bound from the host), by type,
 * major, minor: an allow rule for one of them is what berth gives anyway. */
static bool standard_device(const char *type, long long major, long long minor)
{
	static const struct {
		long long major, minor; /* minor -1: any */
	} nodes[] = {
	    {1, 3},
	    {1, 5},
	    {1, 7},
	    {1, 8},
	    {1, 9}, /* null zero full random urandom */
	    {5, 0}, /* tty */
	    {5, 2}, /* ptmx */
	    /* /dev/console, in containerd's default rules: berth makes no such
	     * node and nothing can make one (no mknod in the user namespace),
	     * so allowing it grants nothing */
	    {5, 1},
	    {136, -1}, /* the pts slaves */
	};

	if (strcmp(type, "c") != 0)
		return false;
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(nodes); i++)
		if (nodes[i].major == major && (nodes[i].minor == -1 || nodes[i].minor == minor))
			return true;
	return false;
}

static int convert_devices(const json_t *devs, struct berth_error *err)
{
	static const char *const keys[] = {"allow", "type", "major", "minor", "access", NULL};
	size_t i;
	json_t *e;

	if (berth_oci_want_array(devs, "linux.resources.devices", err) < 0)
		return -1;
	json_array_foreach((json_t *)devs, i, e) {
		char path[64], sub[96];
		const char *type, *access;
		long long major, minor;
		bool allow, has_major, has_minor;

		snprintf(path, sizeof path, "linux.resources.devices[%zu]", i);
		if (berth_oci_want_object(e, path, err) < 0 || e == NULL ||
		    berth_oci_keys(e, path, keys, err) < 0)
			return -1;
		snprintf(sub, sizeof sub, "%s.allow", path);
		if (json_object_get(e, "allow") == NULL)
			return berth_oci_bad(err, sub, "is missing");
		if (berth_oci_bool(json_object_get(e, "allow"), sub, &allow, err) < 0)
			return -1;
		snprintf(sub, sizeof sub, "%s.type", path);
		if (berth_oci_string(json_object_get(e, "type"), sub, false, &type, err) < 0)
			return -1;
		snprintf(sub, sizeof sub, "%s.access", path);
		if (berth_oci_string(json_object_get(e, "access"), sub, false, &access, err) < 0)
			return -1;
		snprintf(sub, sizeof sub, "%s.major", path);
		if (berth_oci_int(json_object_get(e, "major"), sub, false, -1, 1LL << 32, &major, &has_major,
				  err) < 0)
			return -1;
		snprintf(sub, sizeof sub, "%s.minor", path);
		if (berth_oci_int(json_object_get(e, "minor"), sub, false, -1, 1LL << 32, &minor, &has_minor,
				  err) < 0)
			return -1;
		if (!has_major)
			major = -1;
		if (!has_minor)
			minor = -1;
		if (!allow)
			continue; /* a deny rule: berth's /dev has only its own nodes and no mknod */
		if (type != NULL && major >= 0 && standard_device(type, major, minor))
			continue;
		return berth_oci_unsupported(
		    err, path,
		    "an allow rule for device %s %lld:%lld: the container's /dev holds only "
		    "null, zero, full, random, urandom, tty and its own ptmx and pts",
		    type != NULL ? type : "a", major, minor);
	}
	return 0;
}

/* An object or array given with content: what berth cannot enforce. */
static int refuse_nonempty(const json_t *r, const char *key, const char *why, struct berth_error *err)
{
	const json_t *v = json_object_get(r, key);
	char path[64];

	snprintf(path, sizeof path, "linux.resources.%s", key);
	if (v == NULL || json_is_null(v) || (json_is_object(v) && json_object_size(v) == 0) ||
	    (json_is_array(v) && json_array_size(v) == 0))
		return 0;
	return berth_oci_unsupported(err, path, "%s", why);
}

/* berth's limit check, its message as config.json's and its hint as JSON
 * writes the value.  Returns -1. */
static int limit_refused(struct berth_error *err, const char *what)
{
	berth_err_wrap(err, "config.json");
	return berth_err_hint(err, "give %s (-1 or no value: berth's default)", what);
}

static int convert_memory(const json_t *m, struct berth_oci_bundle *b, struct berth_error *err)
{
	static const char *const keys[] = {"limit",
					   "reservation",
					   "swap",
					   "kernel",
					   "kernelTCP",
					   "swappiness",
					   "disableOOMKiller",
					   "useHierarchy",
					   "checkBeforeUpdate",
					   NULL};
	long long n;
	bool set, off;

	if (m == NULL)
		return 0;
	if (berth_oci_want_object(m, "linux.resources.memory", err) < 0 ||
	    berth_oci_keys(m, "linux.resources.memory", keys, err) < 0)
		return -1;
	if (berth_oci_int(json_object_get(m, "limit"), "linux.resources.memory.limit", false, -1, LLONG_MAX,
			  &n, &set, err) < 0)
		return -1;
	if (set && n > 0) {
		if (berth_limit_check(BERTH_LIMIT_MEMORY, "linux.resources.memory.limit", (uint64_t)n, NULL,
				      err) < 0)
			return limit_refused(err, "a number of bytes, 16777216 (16M) or more");
		b->policy.memory = (uint64_t)n;
		b->policy.memory_set = true;
	}
	/* reservation (a soft floor), swap (berth turns swap off: less than
	 * any limit), swappiness, useHierarchy: no access changes */
	if (berth_oci_int(json_object_get(m, "reservation"), "linux.resources.memory.reservation", false, -1,
			  LLONG_MAX, &n, NULL, err) < 0 ||
	    berth_oci_int(json_object_get(m, "swap"), "linux.resources.memory.swap", false, -1, LLONG_MAX, &n,
			  NULL, err) < 0)
		return -1;
	for (int k = 0; k < 2; k++) {
		const char *key = k ? "kernelTCP" : "kernel";
		char path[64];
		snprintf(path, sizeof path, "linux.resources.memory.%s", key);
		if (berth_oci_int(json_object_get(m, key), path, false, -1, LLONG_MAX, &n, &set, err) < 0)
			return -1;
		if (set && n > 0)
			return berth_oci_unsupported(err, path, "berth does not limit kernel memory apart");
	}
	if (berth_oci_bool(json_object_get(m, "disableOOMKiller"), "linux.resources.memory.disableOOMKiller",
			   &off, err) < 0)
		return -1;
	if (off)
		return berth_oci_unsupported(err, "linux.resources.memory.disableOOMKiller",
					     "a container at its memory limit is killed");
	return 0;
}

static int convert_cpu(const json_t *c, struct berth_oci_bundle *b, struct berth_error *err)
{
	static const char *const keys[] = {"shares",         "quota", "burst", "period", "realtimeRuntime",
					   "realtimePeriod", "cpus",  "mems",  "idle",   NULL};
	long long quota, period, n;
	bool has_quota, has_period, set;
	const char *s;

	if (c == NULL)
		return 0;
	if (berth_oci_want_object(c, "linux.resources.cpu", err) < 0 ||
	    berth_oci_keys(c, "linux.resources.cpu", keys, err) < 0)
		return -1;
	if (berth_oci_int(json_object_get(c, "quota"), "linux.resources.cpu.quota", false, -1, LLONG_MAX,
			  &quota, &has_quota, err) < 0 ||
	    berth_oci_int(json_object_get(c, "period"), "linux.resources.cpu.period", false, 0, 1000000,
			  &period, &has_period, err) < 0)
		return -1;
	if (!has_period || period == 0)
		period = 100000; /* the kernel's default */
	if (has_quota && quota > 0) {
		unsigned long long m = (unsigned long long)quota * 1000ULL / (unsigned long long)period;
		if (berth_limit_check(BERTH_LIMIT_CPUS, "linux.resources.cpu.quota",
				      m > UINT32_MAX ? UINT32_MAX : m, NULL, err) < 0)
			return limit_refused(err, "quota/period at least 0.01 CPU (1000 per period 100000)");
		b->policy.millicpus = (uint32_t)m;
		b->policy.cpus_set = true;
	}
	/* shares and burst weigh, they do not widen */
	if (berth_oci_int(json_object_get(c, "shares"), "linux.resources.cpu.shares", false, 0, LLONG_MAX, &n,
			  NULL, err) < 0 ||
	    berth_oci_int(json_object_get(c, "burst"), "linux.resources.cpu.burst", false, 0, LLONG_MAX, &n,
			  NULL, err) < 0)
		return -1;
	for (int k = 0; k < 3; k++) {
		static const char *const rt[] = {"realtimeRuntime", "realtimePeriod", "idle"};
		char path[64];
		snprintf(path, sizeof path, "linux.resources.cpu.%s", rt[k]);
		if (berth_oci_int(json_object_get(c, rt[k]), path, false, LLONG_MIN, LLONG_MAX, &n, &set,
				  err) < 0)
			return -1;
		if (set && n != 0)
			return berth_oci_unsupported(err, path,
						     "berth does not set real-time or idle CPU scheduling");
	}
	for (int k = 0; k < 2; k++) {
		const char *key = k ? "mems" : "cpus";
		char path[64];
		snprintf(path, sizeof path, "linux.resources.cpu.%s", key);
		if (berth_oci_string(json_object_get(c, key), path, false, &s, err) < 0)
			return -1;
		if (s != NULL && s[0] != '\0')
			return berth_oci_unsupported(err, path,
						     "berth does not pin containers to CPUs or memory nodes "
						     "(`%.64s`)",
						     s);
	}
	return 0;
}

static int convert_resources(const json_t *r, struct berth_oci_bundle *b, struct berth_error *err)
{
	static const char *const keys[] = {"devices",        "memory",  "cpu",  "pids",    "blockIO",
					   "hugepageLimits", "network", "rdma", "unified", NULL};
	const json_t *pids;
	long long n;
	bool set;

	if (r == NULL)
		return 0;
	if (berth_oci_want_object(r, "linux.resources", err) < 0 ||
	    berth_oci_keys(r, "linux.resources", keys, err) < 0)
		return -1;
	if (convert_devices(json_object_get(r, "devices"), err) < 0 ||
	    convert_memory(json_object_get(r, "memory"), b, err) < 0 ||
	    convert_cpu(json_object_get(r, "cpu"), b, err) < 0)
		return -1;
	pids = json_object_get(r, "pids");
	if (berth_oci_want_object(pids, "linux.resources.pids", err) < 0 ||
	    (pids != NULL &&
	     berth_oci_keys(pids, "linux.resources.pids", (const char *const[]){"limit", NULL}, err) < 0))
		return -1;
	if (pids != NULL && berth_oci_int(json_object_get(pids, "limit"), "linux.resources.pids.limit", false,
					  -1, LLONG_MAX, &n, &set, err) < 0)
		return -1;
	if (pids != NULL && set && n > 0) {
		if (berth_limit_check(BERTH_LIMIT_PIDS, "linux.resources.pids.limit", (uint64_t)n, NULL,
				      err) < 0)
			return limit_refused(err, "a number of tasks, 2 to 4194304");
		b->policy.pids = (uint32_t)n;
		b->policy.pids_set = true;
	}
	if (refuse_nonempty(r, "blockIO", "berth does not weigh or limit block I/O", err) < 0 ||
	    refuse_nonempty(r, "hugepageLimits", "berth does not limit huge pages", err) < 0 ||
	    refuse_nonempty(r, "network", "berth does not classify or prioritise network traffic", err) < 0 ||
	    refuse_nonempty(r, "rdma", "berth does not limit RDMA resources", err) < 0 ||
	    refuse_nonempty(r, "unified", "berth does not write cgroup v2 files it was not told about", err) <
		0)
		return -1;
	return 0;
}

/* ---------------------------------------------------------- the rest */

/* Decided: every sysctl is refused but net.ipv4.ping_group_range, which
 * podman always sets; it is not applied (the sandbox's network namespace
 * keeps the kernel's default, no ICMP sockets for any group). */
static int convert_sysctl(const json_t *s, struct berth_oci_bundle *b, struct berth_error *err)
{
	const char *key;
	json_t *v;

	if (berth_oci_want_object(s, "linux.sysctl", err) < 0)
		return -1;
	json_object_foreach((json_t *)s, key, v) {
		char path[160];
		const char *val;
		snprintf(path, sizeof path, "linux.sysctl.%.128s", key);
		if (berth_oci_string(v, path, true, &val, err) < 0)
			return -1;
		if (strcmp(key, "net.ipv4.ping_group_range") == 0) {
			if (berth_oci_note(b, err,
					   "linux.sysctl: net.ipv4.ping_group_range `%.64s` is not applied",
					   val) < 0)
				return -1;
			continue;
		}
		return berth_oci_unsupported(err, path, "berth sets no sysctl (`%.64s`)", val);
	}
	return 0;
}

static int path_list(const json_t *a, const char *key, char ***out, size_t *n, struct berth_error *err)
{
	char path[64];
	size_t i;
	json_t *e;

	snprintf(path, sizeof path, "linux.%s", key);
	if (berth_oci_want_array(a, path, err) < 0)
		return -1;
	if (json_array_size(a) > BERTH_CONTAINER_PATHS_MAX)
		return berth_oci_bad(err, path, "has %zu paths, berth takes at most %d", json_array_size(a),
				     BERTH_CONTAINER_PATHS_MAX);
	if (json_array_size(a) == 0)
		return 0;
	if ((*out = calloc(json_array_size(a), sizeof **out)) == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	json_array_foreach((json_t *)a, i, e) {
		char sub[96];
		const char *s;
		snprintf(sub, sizeof sub, "%s[%zu]", path, i);
		if (berth_oci_string(e, sub, true, &s, err) < 0 ||
		    berth_oci_container_path(s, sub, &(*out)[*n], err) < 0)
			return -1;
		(*n)++;
	}
	return 0;
}

/* An array or string that must be empty. */
static int refuse_given(const json_t *l, const char *key, const char *why, struct berth_error *err)
{
	const json_t *v = json_object_get(l, key);
	char path[64];

	snprintf(path, sizeof path, "linux.%s", key);
	if (v == NULL || json_is_null(v) || (json_is_array(v) && json_array_size(v) == 0) ||
	    (json_is_string(v) && json_string_length(v) == 0) ||
	    (json_is_object(v) && json_object_size(v) == 0))
		return 0;
	return berth_oci_unsupported(err, path, "%s", why);
}

/*
 * linux.uidMappings, gidMappings: the engine's range of ids for the
 * container (podman --userns=auto, Kubernetes hostUsers: false).  One range
 * each; the validator requires both or neither, host id 0 outside them and
 * process.user inside; the runtime, root (the caller must own the ids).
 */
static int convert_idrange(const json_t *l, const char *key, struct berth_idrange *out,
			   struct berth_error *err)
{
	static const char *const keys[] = {"containerID", "hostID", "size", NULL};
	const json_t *v = json_object_get(l, key), *e;
	char path[64], sub[96];
	long long inside, host, size;

	snprintf(path, sizeof path, "linux.%s", key);
	if (berth_oci_want_array(v, path, err) < 0)
		return -1;
	if (json_array_size(v) == 0)
		return 0;
	if (json_array_size(v) > 1)
		return berth_oci_unsupported(
		    err, path, "%zu ranges: berth maps one range of ids (podman --userns=auto gives one)",
		    json_array_size(v));
	e = json_array_get(v, 0);
	snprintf(path, sizeof path, "linux.%s[0]", key);
	if (berth_oci_want_object(e, path, err) < 0 || berth_oci_keys(e, path, keys, err) < 0)
		return -1;
	snprintf(sub, sizeof sub, "%s.containerID", path);
	if (berth_oci_int(json_object_get(e, "containerID"), sub, true, 0, UINT32_MAX - 1, &inside, NULL,
			  err) < 0)
		return -1;
	snprintf(sub, sizeof sub, "%s.hostID", path);
	if (berth_oci_int(json_object_get(e, "hostID"), sub, true, 0, UINT32_MAX - 1, &host, NULL, err) < 0)
		return -1;
	snprintf(sub, sizeof sub, "%s.size", path);
	if (berth_oci_int(json_object_get(e, "size"), sub, true, 1, UINT32_MAX, &size, NULL, err) < 0)
		return -1;
	*out = (struct berth_idrange){(uint32_t)inside, (uint32_t)host, (uint32_t)size};
	return 0;
}

int berth_oci_convert_linux(const json_t *l, struct berth_oci_bundle *b, struct berth_error *err)
{
	static const char *const keys[] = {"namespaces",  "uidMappings", "gidMappings",       "devices",
					   "cgroupsPath", "resources",   "rootfsPropagation", "seccomp",
					   "sysctl",      "maskedPaths", "readonlyPaths",     "mountLabel",
					   "intelRdt",    "personality", "timeOffsets",       NULL};
	struct berth_container *c = b->policy.container;
	const char *s;

	if (l == NULL) {
		berth_usage_err(err,
				"config.json: `linux` is missing: the container would share every namespace "
				"of the host, its network too; berth refuses");
		return berth_err_hint(err,
				      "give the container its namespaces (runtime-spec config-linux.md)");
	}
	if (berth_oci_want_object(l, "linux", err) < 0 || berth_oci_keys(l, "linux", keys, err) < 0)
		return -1;
	if (convert_namespaces(json_object_get(l, "namespaces"), b, err) < 0 ||
	    convert_idrange(l, "uidMappings", &c->uid_range, err) < 0 ||
	    convert_idrange(l, "gidMappings", &c->gid_range, err) < 0 ||
	    refuse_given(l, "devices", "berth's /dev holds only its own nodes; no device is added", err) <
		0 ||
	    refuse_given(l, "mountLabel", "berth does not set SELinux labels", err) < 0 ||
	    refuse_given(l, "intelRdt", "berth does not set Intel RDT classes", err) < 0 ||
	    refuse_given(l, "personality", "berth does not set an execution domain", err) < 0 ||
	    refuse_given(l, "timeOffsets", "berth does not make a time namespace", err) < 0)
		return -1;
	if (berth_oci_string(json_object_get(l, "cgroupsPath"), "linux.cgroupsPath", false, &s, err) < 0)
		return -1;
	if (s != NULL && s[0] != '\0' && convert_cgroups_path(s, b, err) < 0)
		return -1;
	if (berth_oci_string(json_object_get(l, "rootfsPropagation"), "linux.rootfsPropagation", false, &s,
			     err) < 0)
		return -1;
	if (s != NULL && s[0] != '\0' && strcmp(s, "private") != 0 && strcmp(s, "rprivate") != 0 &&
	    strcmp(s, "slave") != 0 && strcmp(s, "rslave") != 0)
		return berth_oci_unsupported(
		    err, "linux.rootfsPropagation",
		    "`%.64s`: the container's mounts are private (no propagation to or from "
		    "the host)",
		    s);
	if (convert_resources(json_object_get(l, "resources"), b, err) < 0 ||
	    convert_sysctl(json_object_get(l, "sysctl"), b, err) < 0 ||
	    path_list(json_object_get(l, "maskedPaths"), "maskedPaths", &c->masked, &c->n_masked, err) < 0 ||
	    path_list(json_object_get(l, "readonlyPaths"), "readonlyPaths", &c->readonly, &c->n_readonly,
		      err) < 0)
		return -1;
	return berth_oci_convert_seccomp(json_object_get(l, "seccomp"), b, err);
}
