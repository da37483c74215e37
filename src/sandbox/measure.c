/* SPDX-License-Identifier: MIT */
/*
 * measure.c - what the kernel enforces, measured from inside (measure.h,
 * docs/attest.md).  The command-side functions run between Landlock and
 * execve: no allocation, no stdio.
 */
#include "measure.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/json.h"
#include "limits.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#define LL_CREATE_RULESET_VERSION (1U << 0)
/* The highest Landlock ABI whose rights berth asks for (scoping, ABI 6). */
#define LL_ABI_FULL 6
#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

const char *const berth_ns_names[BERTH_NS_COUNT] = {"user", "mnt", "pid", "ipc", "uts", "net", "cgroup"};

const char *berth_verdict_name(enum berth_verdict v)
{
	static const char *const names[] = {[BERTH_VERDICT_ENFORCED] = "ENFORCED",
					    [BERTH_VERDICT_PARTIAL] = "PARTIAL",
					    [BERTH_VERDICT_NOT_ENFORCED] = "NOT_ENFORCED"};

	return (unsigned)v < BERTH_ARRAY_SIZE(names) ? names[v] : "NOT_ENFORCED";
}

static void read_ns(uint64_t dev[BERTH_NS_COUNT], uint64_t ino[BERTH_NS_COUNT])
{
	char path[32];

	for (int i = 0; i < BERTH_NS_COUNT; i++) {
		struct stat st;
		snprintf(path, sizeof path, "/proc/self/ns/%s", berth_ns_names[i]);
		if (stat(path, &st) == 0) {
			dev[i] = (uint64_t)st.st_dev;
			ino[i] = (uint64_t)st.st_ino;
		} else {
			dev[i] = ino[i] = 0;
		}
	}
}

void berth_measure_parent_ns(struct berth_measure *m)
{
	read_ns(m->parent_ns_dev, m->parent_ns_ino);
}

void berth_measure_landlock_probe(struct berth_measure *m, const char *dir)
{
	char path[64];
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);

	m->landlock_abi = abi < 0 ? -errno : (int)abi;
	m->landlock_probe = BERTH_LL_UNKNOWN;
	m->landlock_probe_errno = 0;
	if (access(dir, W_OK | X_OK) < 0) {
		m->landlock_probe_errno = errno;
		return;
	}
	snprintf(path, sizeof path, "%s/.berth-landlock-probe-%d", dir, (int)getpid());
	if (mknodat(AT_FDCWD, path, S_IFCHR | 0600, makedev(1, 3)) == 0) {
		/* Only a process with CAP_MKNOD gets here: not a confined one. */
		unlink(path);
		m->landlock_probe = BERTH_LL_NOT_IN_FORCE;
		return;
	}
	m->landlock_probe_errno = errno;
	if (errno == EACCES)
		m->landlock_probe = BERTH_LL_IN_FORCE;
	else if (errno == EPERM)
		m->landlock_probe = BERTH_LL_NOT_IN_FORCE;
}

/* Parse "Name:\tvalue" lines of /proc/self/status held in @buf. */
static const char *status_field(const char *buf, const char *name)
{
	size_t n = strlen(name);

	for (const char *l = buf; l != NULL && *l != '\0';) {
		if (strncmp(l, name, n) == 0 && l[n] == ':') {
			l += n + 1;
			while (*l == ' ' || *l == '\t')
				l++;
			return l;
		}
		l = strchr(l, '\n');
		if (l != NULL)
			l++;
	}
	return NULL;
}

static uint64_t rlim(int which)
{
	struct rlimit r;

	if (getrlimit(which, &r) < 0 || r.rlim_cur == RLIM_INFINITY)
		return UINT64_MAX;
	return (uint64_t)r.rlim_cur;
}

/* 1 when the mount at /workspace carries the "idmapped" mount option
 * (mountinfo field 6), 0 when not, -1 when it cannot be read.  Reads with a
 * fixed buffer: a line longer than it is skipped. */
static int workspace_idmapped(void)
{
	char buf[16384];
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC), found = -1;
	size_t have = 0;
	ssize_t r;

	if (fd < 0)
		return -1;
	while ((r = read(fd, buf + have, sizeof buf - 1 - have)) > 0 || have > 0) {
		char *nl;
		have += r > 0 ? (size_t)r : 0;
		buf[have] = '\0';
		while ((nl = strchr(buf, '\n')) != NULL) {
			char *f[7] = {0}, *save = NULL, *t;
			int k = 0;
			*nl = '\0';
			for (t = strtok_r(buf, " ", &save); t != NULL && k < 7;
			     t = strtok_r(NULL, " ", &save))
				f[k++] = t;
			if (k >= 6 && strcmp(f[4], "/workspace") == 0) {
				/* the last mount at /workspace wins (mounted over) */
				found = 0;
				for (char *o = strtok_r(f[5], ",", &save); o != NULL;
				     o = strtok_r(NULL, ",", &save))
					if (strcmp(o, "idmapped") == 0)
						found = 1;
			}
			have -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, have);
			buf[have] = '\0';
		}
		if (r <= 0 || have == sizeof buf - 1)
			break;
	}
	close(fd);
	return found;
}

void berth_measure_self(struct berth_measure *m)
{
	char buf[8192];
	ssize_t n = 0;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	const char *v;
	cpu_set_t cpus;

	read_ns(m->ns_dev, m->ns_ino);
	m->seccomp_mode = m->seccomp_filters = m->no_new_privs = -1;
	if (fd >= 0) {
		for (ssize_t r;
		     (size_t)n < sizeof buf - 1 && (r = read(fd, buf + n, sizeof buf - 1 - (size_t)n)) > 0;)
			n += r;
		close(fd);
	}
	buf[n > 0 ? n : 0] = '\0';
	if ((v = status_field(buf, "Seccomp")) != NULL)
		m->seccomp_mode = atoi(v);
	if ((v = status_field(buf, "Seccomp_filters")) != NULL)
		m->seccomp_filters = atoi(v);
	if ((v = status_field(buf, "NoNewPrivs")) != NULL)
		m->no_new_privs = atoi(v);
	{
		static const char *const names[] = {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"};
		uint64_t *dst[] = {&m->cap_inh, &m->cap_prm, &m->cap_eff, &m->cap_bnd, &m->cap_amb};
		m->caps_read = true;
		for (size_t i = 0; i < BERTH_ARRAY_SIZE(names); i++) {
			if ((v = status_field(buf, names[i])) == NULL) {
				m->caps_read = false;
				continue;
			}
			*dst[i] = strtoull(v, NULL, 16);
		}
	}
	m->rlim_nofile = rlim(RLIMIT_NOFILE);
	m->rlim_as = rlim(RLIMIT_AS);
	m->rlim_nproc = rlim(RLIMIT_NPROC);
	m->rlim_core = rlim(RLIMIT_CORE);
	m->workspace_idmapped = m->idmap_asked ? workspace_idmapped() : -1;
	CPU_ZERO(&cpus);
	m->cpus_affinity = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 0;
	{
		struct statfs sf;
		m->tmp_bytes = 0;
		if (statfs("/tmp", &sf) == 0 && sf.f_type == TMPFS_MAGIC && sf.f_bsize > 0 &&
		    sf.f_blocks <= UINT64_MAX / (uint64_t)sf.f_bsize)
			m->tmp_bytes = (uint64_t)sf.f_blocks * (uint64_t)sf.f_bsize;
	}
	{
		long ps = sysconf(_SC_PAGESIZE);
		m->page_size = ps > 0 ? (uint64_t)ps : 0;
	}
	m->valid = true;
}

/* ---------------------------------------------------------- supervisor */

/* Read the first line of DIR/NAME into @buf; false if unreadable. */
static bool read_cg(const char *dir, const char *name, char *buf, size_t size)
{
	char path[4200];
	cleanup_close int fd = -1;
	ssize_t n;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, size - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return true;
}

static uint64_t cg_value(const char *s)
{
	return strncmp(s, "max", 3) == 0 ? UINT64_MAX : strtoull(s, NULL, 10);
}

void berth_measure_cgroups(struct berth_measure *m, int mode, char *const dirs[], int n_dirs)
{
	char v[128];

	m->limits_mode = mode;
	for (int i = 0; i < n_dirs; i++) {
		const char *d = dirs[i];
		if (d == NULL)
			continue;
		if (!m->cg_memory_read && (read_cg(d, "memory.max", v, sizeof v) ||
					   read_cg(d, "memory.limit_in_bytes", v, sizeof v))) {
			m->cg_memory = cg_value(v);
			/* cgroup v1 spells "no limit" as a huge page-aligned number. */
			if (m->cg_memory >= (UINT64_MAX >> 2))
				m->cg_memory = UINT64_MAX;
			m->cg_memory_read = true;
		}
		if (!m->cg_pids_read && read_cg(d, "pids.max", v, sizeof v)) {
			m->cg_pids = cg_value(v);
			m->cg_pids_read = true;
		}
		if (!m->cg_cpu_read && read_cg(d, "cpu.max", v, sizeof v)) {
			char *sp = strchr(v, ' ');
			m->cg_cpu_quota_us = cg_value(v);
			m->cg_cpu_period_us = sp != NULL ? strtoull(sp + 1, NULL, 10) : 0;
			m->cg_cpu_read = true;
		} else if (!m->cg_cpu_read && read_cg(d, "cpu.cfs_quota_us", v, sizeof v)) {
			long long q = strtoll(v, NULL, 10);
			m->cg_cpu_quota_us = q < 0 ? UINT64_MAX : (uint64_t)q;
			if (read_cg(d, "cpu.cfs_period_us", v, sizeof v)) {
				m->cg_cpu_period_us = strtoull(v, NULL, 10);
				m->cg_cpu_read = true;
			}
		}
	}
}

/* ---------------------------------------------------------- JSON */

static json_t *u64_or_null(bool have, uint64_t v)
{
	if (!have || v == UINT64_MAX)
		return json_null();
	return json_integer((json_int_t)(v > (uint64_t)INT64_MAX ? INT64_MAX : v));
}

static const char *ll_status(const struct berth_measure *m)
{
	if (m->landlock_probe == BERTH_LL_IN_FORCE)
		return m->landlock_ruleset_abi >= LL_ABI_FULL ? "full" : "partial";
	if (m->landlock_probe == BERTH_LL_NOT_IN_FORCE)
		return "none";
	return "unknown";
}

static const char *limits_mode_name(int mode)
{
	static const char *const names[] = {[BERTH_LIMITS_NONE] = "none",
					    [BERTH_LIMITS_CGROUP2] = "cgroup2",
					    [BERTH_LIMITS_CGROUP1] = "cgroup1",
					    [BERTH_LIMITS_RLIMITS] = "rlimits"};

	return (unsigned)mode < BERTH_ARRAY_SIZE(names) ? names[mode] : "none";
}

static json_t *asked_json(const struct berth_policy *p, bool idmap)
{
	json_t *ns = json_array();

	const struct berth_container *c = p->container;

	/* the namespaces the sandbox makes: not a joined one (the host's
	 * network under --network host, a pod's network, IPC or UTS) */
	for (int i = 0; i < BERTH_NS_COUNT; i++)
		if ((i != BERTH_NS_NET || p->network != BERTH_NET_HOST) &&
		    (i != BERTH_NS_IPC || c == NULL || c->ipcns == NULL) &&
		    (i != BERTH_NS_UTS || c == NULL || c->utsns == NULL))
			json_array_append_new(ns, json_string(berth_ns_names[i]));
	/* Every limit is at most 2^50 (policy.h, berth_limit_defs): it fits json_int_t. */
	return json_pack("{s:b, s:o, s:b, s:b, s:I, s:I, s:I, s:I, s:I, s:b}", "workspace_idmapped", idmap,
			 "namespaces", ns, "landlock", 1, "seccomp", 1, "memory", (json_int_t)p->memory,
			 "pids", (json_int_t)p->pids, "millicpus", (json_int_t)p->millicpus, "nofile",
			 (json_int_t)p->nofile, "tmp_bytes", (json_int_t)p->tmp_size, "allow_degraded",
			 p->allow_degraded);
}

/* Which runtime enforced (docs/attest.md, `runtime`): the namespace runtime's
 * record is {"name":"namespace"}; a microVM's names the guest it booted. */
static json_t *runtime_json(const struct berth_measure *m)
{
	const char *name = m->runtime[0] != '\0' ? m->runtime : "namespace";

	if (strcmp(name, "vm") != 0)
		return json_pack("{s:s}", "name", name);
	return json_pack("{s:s, s:s, s:s, s:s, s:s}", "name", name, "kernel_sha256", m->vm_kernel_sha256,
			 "initramfs_sha256", m->vm_initramfs_sha256, "accelerator", m->vm_accel,
			 "guest_kernel", m->vm_guest_kernel);
}

static json_t *measure_json(const struct berth_measure *m, const struct berth_policy *p)
{
	json_t *ns = json_object(), *caps, *lim, *cpu;
	char hex[5][17];
	const uint64_t cv[5] = {m->cap_inh, m->cap_prm, m->cap_eff, m->cap_bnd, m->cap_amb};

	for (int i = 0; i < BERTH_NS_COUNT; i++) {
		const char *state = "unknown";
		if (m->ns_ino[i] != 0 && m->parent_ns_ino[i] != 0)
			state = m->ns_ino[i] != m->parent_ns_ino[i] || m->ns_dev[i] != m->parent_ns_dev[i]
				    ? "separate"
				    : "shared";
		json_object_set_new(ns, berth_ns_names[i], json_string(state));
	}
	for (int i = 0; i < 5; i++)
		snprintf(hex[i], sizeof hex[i], "%016" PRIx64, cv[i]);
	caps = m->caps_read ? json_pack("{s:s, s:s, s:s, s:s, s:s}", "inheritable", hex[0], "permitted",
					hex[1], "effective", hex[2], "bounding", hex[3], "ambient", hex[4])
			    : json_null();
	cpu = m->cg_cpu_read ? json_pack("{s:o, s:I}", "quota_us", u64_or_null(true, m->cg_cpu_quota_us),
					 "period_us", (json_int_t)m->cg_cpu_period_us)
			     : json_null();
	/* memory_enforced: a cgroup memory limit was read back.  rlimit mode
	 * sets none (src/sandbox/limits.c: RLIMIT_AS breaks runtimes). */
	lim = json_pack("{s:s, s:o, s:b, s:o, s:o, s:{s:o, s:o, s:o, s:o}, s:i}", "mode",
			limits_mode_name(m->limits_mode), "memory",
			u64_or_null(m->cg_memory_read, m->cg_memory), "memory_enforced",
			m->cg_memory_read && m->cg_memory != UINT64_MAX, "pids",
			u64_or_null(m->cg_pids_read, m->cg_pids), "cpu", cpu, "rlimits", "nofile",
			u64_or_null(true, m->rlim_nofile), "as", u64_or_null(true, m->rlim_as), "nproc",
			u64_or_null(true, m->rlim_nproc), "core", u64_or_null(true, m->rlim_core),
			"cpus_affinity", m->cpus_affinity);
	if (lim != NULL) {
		json_object_set_new(lim, "tmp", u64_or_null(m->tmp_bytes != 0, m->tmp_bytes));
		json_object_set_new(lim, "page_size", u64_or_null(m->page_size != 0, m->page_size));
	}
	return json_pack(
	    "{s:o, s:o, s:b, s:o, s:o, s:{s:i, s:i, s:s, s:s?}, s:{s:i, s:i, s:s?}, s:o, s:i, s:o}",
	    "runtime", runtime_json(m), "workspace_idmapped",
	    m->workspace_idmapped < 0 ? json_null() : json_boolean(m->workspace_idmapped), "measured",
	    m->valid, "asked", asked_json(p, m->idmap_asked), "namespaces", ns, "landlock", "abi",
	    m->landlock_abi, "ruleset_abi", m->landlock_ruleset_abi, "status", ll_status(m), "probe",
	    m->landlock_probe_errno != 0 ? strerrorname_np(m->landlock_probe_errno) : NULL, "seccomp", "mode",
	    m->seccomp_mode, "filters", m->seccomp_filters, "filter_sha256",
	    m->seccomp_digest[0] != '\0' ? m->seccomp_digest : NULL, "capabilities", caps, "no_new_privs",
	    m->no_new_privs, "limits", lim);
}

static json_int_t int_at(const json_t *o, const char *path1, const char *path2, json_int_t dflt)
{
	const json_t *v = json_object_get(o, path1);

	if (path2 != NULL)
		v = json_object_get(v, path2);
	return json_is_integer(v) ? json_integer_value(v) : dflt;
}

static const char *str_at(const json_t *o, const char *path1, const char *path2)
{
	const json_t *v = json_object_get(o, path1);

	if (path2 != NULL)
		v = json_object_get(v, path2);
	return json_is_string(v) ? json_string_value(v) : "";
}

/* u64_at - the non-negative integer at @o.@key; false when absent, null
 * (no limit, or not read) or negative. */
static bool u64_at(const json_t *o, const char *key, uint64_t *v)
{
	const json_t *j = json_object_get(o, key);

	if (!json_is_integer(j) || json_integer_value(j) < 0)
		return false;
	*v = (uint64_t)json_integer_value(j);
	return true;
}

/* read_text - the value read back at @o.@key, for a message. */
static const char *read_text(const json_t *o, const char *key, char *buf, size_t n)
{
	uint64_t v;

	if (!u64_at(o, key, &v))
		return "none (no limit, or unreadable)";
	snprintf(buf, n, "%" PRIu64, v);
	return buf;
}

/*
 * What the kernel keeps of a limit berth asked for @want, so that its own
 * rounding is no mismatch.  @page: the page size of the run's host (from
 * the record; 1, an exact comparison, in a record without one).
 *   ROUND_DOWN  memory.max and memory.limit_in_bytes: the kernel keeps a
 *               count of pages, bytes / PAGE_SIZE rounded down
 *               (page_counter_memparse(), mm/page_counter.c), and reads
 *               back pages * PAGE_SIZE;
 *   ROUND_UP    a tmpfs's size=: DIV_ROUND_UP(size, PAGE_SIZE) blocks
 *               (shmem_parse_one(), mm/shmem.c; tmpfs(5): "rounded up to
 *               entire pages"), statfs(2) gives f_blocks of f_bsize =
 *               PAGE_SIZE;
 *   EXACT       pids.max and rlimits keep the number written.
 * No overflow: every limit is at most 2^50 (policy.h) and a page at most
 * 2^30 here (a larger one counts as none: an exact comparison).
 */
enum rounding { EXACT, ROUND_DOWN, ROUND_UP };

static uint64_t kernel_keeps(uint64_t want, uint64_t page, enum rounding r)
{
	if (page == 0 || page > (1ULL << 30) || want > (1ULL << 62))
		page = 1;
	if (r == ROUND_DOWN)
		return want - want % page;
	if (r == ROUND_UP && want % page != 0)
		return want + (page - want % page);
	return want;
}

/* limit_matches - whether @lim.@key (or in rlimit mode @lim.rlimits.@rl)
 * holds what the kernel keeps of @want. */
static bool limit_matches(const json_t *lim, const char *key, const char *rl, uint64_t want, enum rounding r)
{
	uint64_t page = 1, got;

	(void)u64_at(lim, "page_size", &page);
	if (u64_at(lim, key, &got) && got == kernel_keeps(want, page, r))
		return true;
	return rl != NULL && strcmp(str_at(lim, "mode", NULL), "rlimits") == 0 &&
	       u64_at(json_object_get(lim, "rlimits"), rl, &got) && got == want;
}

/* shortfall - "NAME limit: asked WANT UNIT, read back GOT (WHERE)". */
static void shortfall(json_t *reasons, const json_t *from, const char *key, const char *name, uint64_t want,
		      const char *unit, const char *where)
{
	char buf[24];

	berth_json_append_printf(reasons, "%s limit: asked %" PRIu64 "%s, read back %s (%s)", name, want,
				 unit, read_text(from, key, buf, sizeof buf), where);
}

/* asked_negative - a limit asked as a negative number: a record of a
 * berth that stored a value past 2^63 - 1 as one, and applied no limit. */
static void asked_negative(const json_t *asked, json_t *reasons)
{
	static const char *const keys[] = {"memory", "pids", "millicpus", "nofile", "tmp_bytes"};

	for (size_t i = 0; i < BERTH_ARRAY_SIZE(keys); i++) {
		const json_t *j = json_object_get(asked, keys[i]);
		if (json_is_integer(j) && json_integer_value(j) < 0)
			berth_json_append_printf(reasons,
						 "%s limit: asked %lld, which is no limit the kernel can "
						 "hold (a value past 2^63 - 1)",
						 keys[i], (long long)json_integer_value(j));
	}
}

/* The memory limit, the first shortfall of the limits. */
static void check_memory(const json_t *asked, const json_t *lim, json_t *reasons)
{
	uint64_t want = 0, as = 0;

	if (!u64_at(asked, "memory", &want) || want == 0 ||
	    limit_matches(lim, "memory", NULL, want, ROUND_DOWN))
		return;
	/* The first: a record from a berth that still set RLIMIT_AS. */
	if (u64_at(json_object_get(lim, "rlimits"), "as", &as) && as == want)
		berth_json_append_printf(
		    reasons,
		    "memory: RLIMIT_AS of %" PRIu64 " bytes per process, not a total for the sandbox", want);
	else if (strcmp(str_at(lim, "mode", NULL), "rlimits") == 0)
		berth_json_append_printf(reasons,
					 "memory: not enforced (%" PRIu64
					 " bytes asked): rlimit mode has no cgroup, and berth sets no "
					 "RLIMIT_AS, which counts reserved address space and breaks runtimes",
					 want);
	else
		shortfall(reasons, lim, "memory", "memory", want, " bytes",
			  "memory.max or memory.limit_in_bytes, rounded down to pages");
}

/* pids, nofile and the /tmp tmpfs. */
static void check_counts(const json_t *asked, const json_t *lim, json_t *reasons)
{
	const json_t *rl = json_object_get(lim, "rlimits");
	uint64_t want = 0;

	if (u64_at(asked, "pids", &want) && want != 0 && !limit_matches(lim, "pids", "nproc", want, EXACT)) {
		if (strcmp(str_at(lim, "mode", NULL), "rlimits") == 0)
			shortfall(reasons, rl, "nproc", "pids", want, "", "RLIMIT_NPROC");
		else
			shortfall(reasons, lim, "pids", "pids", want, "", "pids.max");
	}
	want = 0;
	(void)u64_at(asked, "nofile", &want);
	{
		uint64_t got;
		if (!u64_at(rl, "nofile", &got) || got != want)
			shortfall(reasons, rl, "nofile", "nofile", want, "", "RLIMIT_NOFILE");
	}
	/* a record from before berth measured /tmp asks for none */
	if (u64_at(asked, "tmp_bytes", &want) && want != 0 &&
	    !limit_matches(lim, "tmp", NULL, want, ROUND_UP))
		shortfall(reasons, lim, "tmp", "tmp", want, " bytes",
			  "statfs of the /tmp tmpfs, rounded up to pages");
}

static void check_cpu(const json_t *asked, const json_t *lim, json_t *reasons)
{
	json_int_t want = int_at(asked, "millicpus", NULL, 0);
	const json_t *cpu = json_object_get(lim, "cpu");
	json_int_t q = int_at(cpu, "quota_us", NULL, -1), per = int_at(cpu, "period_us", NULL, 0);
	/* berth writes quota = millicpus * period / 1000 (limits_cgroup.c), so
	 * the quotient is exact but for the integer division */
	bool ok = want <= 0 || (q > 0 && per > 0 && q <= INT64_MAX / 1000 && q * 1000 / per >= want - 1 &&
				q * 1000 / per <= want + 1);
	json_int_t aff = int_at(lim, "cpus_affinity", NULL, 0);

	if (!ok && strcmp(str_at(lim, "mode", NULL), "rlimits") == 0 && aff > 0 && aff <= INT64_MAX / 1000 &&
	    aff * 1000 <= want + 999) {
		/* An affinity mask has whole CPUs only: --cpus 0.5 gets one. */
		if (aff * 1000 > want)
			berth_json_append_printf(reasons,
						 "cpu: %lld millicpus asked, an affinity of %lld "
						 "whole CPU%s given (no cgroup "
						 "cpu limit in rlimit mode)",
						 (long long)want, (long long)aff, aff == 1 ? "" : "s");
		ok = true;
	}
	if (ok)
		return;
	if (q > 0 && per > 0)
		berth_json_append_printf(reasons,
					 "cpu limit: asked %lld millicpus, read back %lld us per %lld us "
					 "(cpu.max or cpu.cfs_quota_us)",
					 (long long)want, (long long)q, (long long)per);
	else
		berth_json_append_printf(reasons,
					 "cpu limit: asked %lld millicpus, read back none (no limit, or "
					 "unreadable) (cpu.max or cpu.cfs_quota_us)",
					 (long long)want);
}

int berth_measure_verdict_json(const json_t *e, json_t **reasons_out, struct berth_error *err)
{
	const json_t *asked = json_object_get(e, "asked"), *ns = json_object_get(e, "namespaces"),
		     *lim = json_object_get(e, "limits"), *caps = json_object_get(e, "capabilities"), *v;
	json_t *reasons = json_array();
	bool fs_confined, privileged = false;
	size_t i;
	int verdict;

	if (!json_is_object(asked) || !json_is_object(ns) || !json_is_object(lim) ||
	    !json_is_object(json_object_get(e, "landlock")) ||
	    !json_is_object(json_object_get(e, "seccomp"))) {
		json_decref(reasons);
		return berth_err(
		    err, EINVAL,
		    "the enforcement record lacks `asked`, `namespaces`, `landlock`, `seccomp` or `limits`");
	}
	if (!json_is_true(json_object_get(e, "measured"))) {
		berth_json_append_printf(reasons, "no measurement from inside the sandbox");
		verdict = BERTH_VERDICT_NOT_ENFORCED;
		goto out;
	}
	json_array_foreach(json_object_get(asked, "namespaces"), i, v) {
		const char *name = json_string_value(v);
		if (name != NULL && strcmp(str_at(ns, name, NULL), "separate") != 0)
			berth_json_append_printf(reasons, "%s namespace: %s", name, str_at(ns, name, NULL));
	}
	if (strcmp(str_at(e, "landlock", "status"), "full") != 0)
		berth_json_append_printf(reasons, "landlock: %s (ruleset ABI %d)",
					 str_at(e, "landlock", "status"),
					 (int)int_at(e, "landlock", "ruleset_abi", 0));
	if (int_at(e, "seccomp", "mode", -1) != 2 || int_at(e, "seccomp", "filters", 0) < 1)
		berth_json_append_printf(reasons, "seccomp: mode %d, %d filters",
					 (int)int_at(e, "seccomp", "mode", -1),
					 (int)int_at(e, "seccomp", "filters", 0));
	else if (!json_is_string(json_object_get(json_object_get(e, "seccomp"), "filter_sha256")))
		/* The filters in force are not berth's: a container runtime's, or a shim's above berth. */
		berth_json_append_printf(reasons,
					 "seccomp: berth loaded no filter (the %d in force are not berth's)",
					 (int)int_at(e, "seccomp", "filters", 0));
	if (int_at(e, "no_new_privs", NULL, -1) != 1)
		berth_json_append_printf(reasons, "no_new_privs: %d",
					 (int)int_at(e, "no_new_privs", NULL, -1));
	if (!json_is_object(caps)) {
		berth_json_append_printf(reasons, "capabilities: not measured");
		privileged = true;
	} else {
		static const char *const sets[] = {"inheritable", "permitted", "effective", "bounding",
						   "ambient"};
		for (size_t k = 0; k < BERTH_ARRAY_SIZE(sets); k++)
			if (strcmp(str_at(caps, sets[k], NULL), "0000000000000000") != 0) {
				berth_json_append_printf(reasons, "capabilities: %s set %s", sets[k],
							 str_at(caps, sets[k], NULL));
				if (k == 1 || k == 2)
					privileged = true;
			}
	}
	asked_negative(asked, reasons);
	check_memory(asked, lim, reasons);
	if (json_is_true(json_object_get(asked, "workspace_idmapped")) &&
	    !json_is_true(json_object_get(e, "workspace_idmapped")))
		berth_json_append_printf(
		    reasons,
		    "workspace is not an idmapped mount: files the sandbox writes do not keep their owner");
	check_counts(asked, lim, reasons);
	check_cpu(asked, lim, reasons);
	/* The file-access boundary: mount namespace (the constructed root) or
	 * Landlock.  Without either, or with privilege, nothing is confined. */
	fs_confined = strcmp(str_at(ns, "mnt", NULL), "separate") == 0 ||
		      strcmp(str_at(e, "landlock", "status"), "full") == 0 ||
		      strcmp(str_at(e, "landlock", "status"), "partial") == 0;
	if (!fs_confined || privileged)
		verdict = BERTH_VERDICT_NOT_ENFORCED;
	else
		verdict = json_array_size(reasons) == 0 ? BERTH_VERDICT_ENFORCED : BERTH_VERDICT_PARTIAL;
out:
	if (reasons_out != NULL)
		*reasons_out = reasons;
	else
		json_decref(reasons);
	return verdict;
}

json_t *berth_measure_to_json(const struct berth_measure *m, const struct berth_policy *p,
			      struct berth_error *err)
{
	json_t *o = measure_json(m, p), *reasons = NULL;
	int v;

	if (o == NULL)
		return berth_err(err, ENOMEM, "cannot build the enforcement record"), NULL;
	v = berth_measure_verdict_json(o, &reasons, err);
	if (v < 0) {
		json_decref(o);
		return NULL;
	}
	json_object_set_new(o, "verdict", json_string(berth_verdict_name((enum berth_verdict)v)));
	json_object_set_new(o, "shortfalls", reasons);
	return o;
}

enum berth_verdict berth_measure_verdict(const struct berth_measure *m, const struct berth_policy *p,
					 json_t **reasons)
{
	struct berth_error err;
	json_t *o = measure_json(m, p);
	int v = o != NULL ? berth_measure_verdict_json(o, reasons, &err) : -1;

	json_decref(o);
	return v < 0 ? BERTH_VERDICT_NOT_ENFORCED : (enum berth_verdict)v;
}
