/* SPDX-License-Identifier: MIT */
/*
 * validate.c - every limit of a policy, checked in one place (policy.h,
 * berth_policy_validate), so that `berth run --dry-run` refuses what the
 * run refuses, with the same exit status and message, before any record of
 * the run is written.
 */
#include "policy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "hostpat.h"
#include "sysdirs.h"

/* Where the target of @m will be in the namespace runtime's root, what is
 * there on the host decides whether the mount can be made: a target in the
 * workspace must exist (berth makes no file there), one in a directory
 * bound read-only from the host (sysdirs.c) must exist too (the mount
 * point cannot be made), and an existing target must be of the source's
 * kind (a directory onto a directory, a file onto a file).  The run would
 * refuse the same after it started; --dry-run must refuse it first. */
static int check_target(const struct berth_policy *p, const struct berth_mount *m, struct berth_error *err)
{
	char host[4096];
	const char *ro = NULL;
	struct stat ss, ts;

	if (p->app || p->container != NULL || m->src == NULL || m->dst == NULL)
		return 0; /* a container's root is not the host's: its runtime looks */
	if (strncmp(m->dst, "/workspace/", 11) == 0 && p->workspace != NULL) {
		snprintf(host, sizeof host, "%s/%s", p->workspace, m->dst + 11);
	} else {
		for (size_t i = 0; i < berth_n_sysdirs && ro == NULL; i++) {
			size_t n = strlen(berth_sysdirs[i].path);
			if (berth_sysdirs[i].mount == BERTH_SYSDIR_BIND &&
			    strncmp(m->dst, berth_sysdirs[i].path, n) == 0 && m->dst[n] == '/')
				ro = berth_sysdirs[i].path;
		}
		if (ro == NULL)
			return 0; /* made by berth in its own tmpfs root */
		snprintf(host, sizeof host, "%s", m->dst);
	}
	if (lstat(host, &ts) < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			return 0; /* the runtime decides */
		if (ro == NULL) {
			berth_usage_err(err, "mount target `%s` does not exist in the workspace", m->dst);
			return berth_err_hint(
			    err, "create it first; berth does not create files in your workspace");
		}
		berth_usage_err(err, "mount target `%s` does not exist, and `%s` is read-only in the sandbox",
				m->dst, ro);
		return berth_err_hint(
		    err, "choose a target that exists there, or one outside the system directories "
			 "such as `/data`");
	}
	if (stat(m->src, &ss) == 0 && S_ISDIR(ss.st_mode) != S_ISDIR(ts.st_mode)) {
		berth_usage_err(err, "mount target `%s` is %s, and the source `%s` is %s", m->dst,
				S_ISDIR(ts.st_mode) ? "a directory" : "not a directory", m->src,
				S_ISDIR(ss.st_mode) ? "a directory" : "not a directory");
		return berth_err_hint(err, "mount a directory onto a directory and a file onto a file");
	}
	return 0;
}

static int check_mounts(const struct berth_policy *p, struct berth_error *err)
{
	if (p->n_mounts > BERTH_POLICY_MOUNTS_MAX) {
		berth_usage_err(err, "too many --ro/--rw mounts (%zu, at most %d)", p->n_mounts,
				BERTH_POLICY_MOUNTS_MAX);
		return berth_err_hint(
		    err, "mount a common parent directory once instead of each directory below it");
	}
	for (size_t i = 0; i < p->n_mounts; i++) {
		size_t len = strlen(p->mounts[i].dst);
		if (len > BERTH_MOUNT_TARGET_MAX) {
			berth_usage_err(err, "mount target `%.64s...` is too long (%zu bytes)",
					p->mounts[i].dst, len);
			return berth_err_hint(err, "a target is at most %d bytes", BERTH_MOUNT_TARGET_MAX);
		}
		if (check_target(p, &p->mounts[i], err) < 0)
			return -1;
	}
	return 0;
}

static void add_port(struct berth_policy_ports *out, unsigned port, bool *full)
{
	for (int i = 0; i < out->n; i++)
		if (out->port[i] == port)
			return;
	if (out->n >= BERTH_POLICY_PORTS_MAX) {
		*full = true;
		return;
	}
	out->port[out->n++] = (uint16_t)port;
}

int berth_policy_ports(const struct berth_policy *p, struct berth_policy_ports *out, struct berth_error *err)
{
	bool full = false;

	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < p->n_allow_hosts; i++) {
		struct berth_host_pattern pat;
		char reason[BERTH_HOST_REASON_MAX];
		if (berth_host_pattern_parse(p->allow_hosts[i], &pat, reason, sizeof reason) < 0)
			return berth_usage_err(err, "invalid allow-host `%s`: %s", p->allow_hosts[i], reason);
		if (pat.ports == BERTH_PORTS_DEFAULT) {
			add_port(out, 80, &full);
			add_port(out, 443, &full);
		} else if (pat.ports == BERTH_PORTS_ONE) {
			add_port(out, pat.port, &full);
		} else {
			out->any_port = true;
		}
	}
	if (full) {
		/* an app's policy comes from its manifest: name what the reader wrote */
		berth_usage_err(err, "%s declare more than %d distinct ports",
				p->app ? "the app's `network:host` capabilities" : "the allow-host patterns",
				BERTH_POLICY_PORTS_MAX);
		return berth_err_hint(
		    err,
		    "declare fewer ports, or %s for any port (then only clients that use the "
		    "proxy variables reach the ports not listed)",
		    p->app ? "`network:host:HOST:*`" : "`HOST:*`");
	}
	return 0;
}

static int check_hosts(const struct berth_policy *p, struct berth_error *err)
{
	struct berth_policy_ports ports;

	if (p->n_allow_hosts > BERTH_POLICY_ALLOW_HOSTS_MAX) {
		if (p->app)
			berth_usage_err(err,
					"the app `%s` declares %zu `network:host` capabilities, at most %d",
					p->app_name != NULL ? p->app_name : "?", p->n_allow_hosts,
					BERTH_POLICY_ALLOW_HOSTS_MAX);
		else
			berth_usage_err(err, "too many --allow-host patterns (%zu, at most %d)",
					p->n_allow_hosts, BERTH_POLICY_ALLOW_HOSTS_MAX);
		return berth_err_hint(
		    err, "one pattern with a wildcard (`*.example.com`) covers every name below it");
	}
	return berth_policy_ports(p, &ports, err);
}

/* Names the runtime always sets itself (build_env in src/sandbox/spawn.c):
 * a --env of one of them replaces berth's value and takes no entry more. */
static bool own_env(const char *name)
{
	static const char *const own[BERTH_POLICY_ENV_OWN] = {"PATH", "HOME", "USER", "LOGNAME"};

	for (size_t i = 0; i < BERTH_POLICY_ENV_OWN; i++)
		if (strcmp(name, own[i]) == 0)
			return true;
	return false;
}

static int check_env(const struct berth_policy *p, struct berth_error *err)
{
	int reserve = p->network == BERTH_NET_PROXY ? BERTH_POLICY_ENV_PROXY : 0;
	size_t n = 0;

	for (size_t i = 0; i < p->n_env; i++) {
		const struct berth_env *e = &p->env[i];
		size_t need = strlen(e->name) + 1 + (e->value != NULL ? strlen(e->value) : 0) + 1;

		if (need > BERTH_POLICY_ENV_ENTRY_MAX) {
			/* the same words as the runtime's (add_env): never the value */
			berth_usage_err(
			    err,
			    "environment variable `%s` is %zu bytes long (NAME=VALUE); the kernel passes "
			    "at most %d to a command",
			    e->name, need - 1, BERTH_POLICY_ENV_ENTRY_MAX - 1);
			return berth_err_hint(err, "pass a long value in a file in the workspace instead");
		}
		n += !own_env(e->name);
	}
	if (n + BERTH_POLICY_ENV_OWN + (size_t)reserve > BERTH_POLICY_ENV_MAX) {
		berth_usage_err(
		    err,
		    "too many environment variables for the command: %zu given, and berth passes at most "
		    "%d (%d of them its own%s)",
		    n, BERTH_POLICY_ENV_MAX, BERTH_POLICY_ENV_OWN,
		    reserve > 0 ? ", 8 the egress broker's" : "");
		return berth_err_hint(
		    err,
		    "count PATH HOME USER LOGNAME TERM LANG LC_*, every --env and every --env-file "
		    "line%s",
		    reserve > 0 ? ", and 8 for the egress broker's *_PROXY" : "");
	}
	return 0;
}

/* The rules the namespace runtime gives Landlock (landlock_rules in
 * src/sandbox/spawn.c): the default view's, then the run's own. */
static int check_landlock(const struct berth_policy *p, struct berth_error *err)
{
	size_t n = 0;

	if (p->app && p->n_grants > BERTH_POLICY_GRANTS_MAX) {
		berth_usage_err(err, "the app `%s` declares %zu filesystem grants, at most %d",
				p->app_name != NULL ? p->app_name : "?", p->n_grants,
				BERTH_POLICY_GRANTS_MAX);
		return berth_err_hint(err,
				      "grant a parent directory once: a grant covers every path below it");
	}
	for (size_t i = 0; i < berth_n_sysdirs; i++)
		n += (p->app ? berth_sysdirs[i].ll_app : berth_sysdirs[i].ll_run) != BERTH_LL_NONE;
	if (p->app) {
		for (size_t i = 0; i < p->n_mounts; i++)
			n += !p->mounts[i].rw;
		n += p->n_grants;
	} else {
		n += 3 + p->n_mounts; /* the workspace, $HOME, /evidence */
	}
	if (n > BERTH_POLICY_LANDLOCK_RULES_MAX) {
		berth_usage_err(err, "the sandbox needs %zu Landlock rules, at most %d", n,
				BERTH_POLICY_LANDLOCK_RULES_MAX);
		return berth_err_hint(err, "give fewer mounts or grants");
	}
	return 0;
}

const struct berth_limit_def berth_limit_defs[BERTH_LIMIT_COUNT] = {
    [BERTH_LIMIT_TMP_SIZE] = {"--tmp-size", BERTH_LIMIT_KIND_SIZE, BERTH_TMP_SIZE_MIN, BERTH_TMP_SIZE_MAX,
			      "1M to 1024T"},
    [BERTH_LIMIT_MEMORY] = {"--memory", BERTH_LIMIT_KIND_SIZE, BERTH_MIN_MEMORY, BERTH_MEMORY_MAX,
			    "16M to 1024T"},
    [BERTH_LIMIT_CPUS] = {"--cpus", BERTH_LIMIT_KIND_CPUS, BERTH_MILLICPUS_MIN, BERTH_MILLICPUS_MAX,
			  "0.01 to 1024"},
    [BERTH_LIMIT_PIDS] = {"--pids", BERTH_LIMIT_KIND_COUNT, BERTH_PIDS_MIN, BERTH_PIDS_MAX, "2 to 4194304"},
    [BERTH_LIMIT_NOFILE] = {"--nofile", BERTH_LIMIT_KIND_COUNT, BERTH_NOFILE_MIN, BERTH_NOFILE_MAX,
			    "16 to 1048576"},
    [BERTH_LIMIT_TIMEOUT] = {"--timeout", BERTH_LIMIT_KIND_DURATION, BERTH_TIMEOUT_MS_MIN,
			     BERTH_TIMEOUT_MS_MAX, "1ms to 8760h"},
    [BERTH_LIMIT_REVIEW_SIZE] = {"--review-size", BERTH_LIMIT_KIND_SIZE, BERTH_TMP_SIZE_MIN,
				 BERTH_TMP_SIZE_MAX, "1M to 1024T"},
};

_Static_assert(BERTH_TMP_SIZE_MAX < (1ULL << 62) && BERTH_MEMORY_MAX < (1ULL << 62) &&
		   BERTH_TIMEOUT_MS_MAX < (1ULL << 62),
	       "a limit must survive a signed 64-bit integer (the canonical JSON) and a page count");

int berth_limit_check(enum berth_limit id, const char *what, uint64_t v, const char *given,
		      struct berth_error *err)
{
	const struct berth_limit_def *d = &berth_limit_defs[id];
	char num[32];

	if (v >= d->min && v <= d->max)
		return 0;
	if (given == NULL) {
		/* as the user would have written it: CPUs, not thousandths */
		if (d->kind == BERTH_LIMIT_KIND_CPUS)
			snprintf(num, sizeof num, "%" PRIu64 ".%03" PRIu64, v / 1000, v % 1000);
		else if (d->kind == BERTH_LIMIT_KIND_DURATION)
			snprintf(num, sizeof num, "%" PRIu64 "ms", v);
		else
			snprintf(num, sizeof num, "%" PRIu64, v);
		given = num;
	}
	return berth_limit_refuse(what, given,
				  v == 0                     ? "zero"
				  : v > d->max               ? "too large"
				  : id == BERTH_LIMIT_MEMORY ? "too small for a sandbox to start"
							     : "too small",
				  id, err);
}

/* The limits of @p, whatever made it: an app's come from its berth.yml. */
static int check_limits(const struct berth_policy *p, struct berth_error *err)
{
	const char *app_mem = p->app ? "resources.memory" : NULL,
		   *app_cpus = p->app ? "resources.cpus" : NULL, *app_pids = p->app ? "resources.pids" : NULL;

	if (berth_limit_check(BERTH_LIMIT_TMP_SIZE, NULL, p->tmp_size, NULL, err) < 0 ||
	    berth_limit_check(BERTH_LIMIT_MEMORY, app_mem, p->memory, NULL, err) < 0 ||
	    berth_limit_check(BERTH_LIMIT_CPUS, app_cpus, p->millicpus, NULL, err) < 0 ||
	    berth_limit_check(BERTH_LIMIT_PIDS, app_pids, p->pids, NULL, err) < 0 ||
	    berth_limit_check(BERTH_LIMIT_NOFILE, NULL, p->nofile, NULL, err) < 0)
		return -1;
	/* The sandbox sets RLIMIT_NOFILE inside its user namespace, where no
	 * capability raises a hard limit: above berth's own it would fail
	 * after the run started (exit 125), and --dry-run would have passed. */
	{
		struct rlimit rl;
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY &&
		    (uint64_t)p->nofile > (uint64_t)rl.rlim_max) {
			char given[24];
			snprintf(given, sizeof given, "%u", p->nofile);
			berth_usage_err(
			    err,
			    "invalid --nofile `%s`: above berth's own hard limit %llu, expected 16 "
			    "to %llu here",
			    given, (unsigned long long)rl.rlim_max, (unsigned long long)rl.rlim_max);
			return berth_err_hint(
			    err, "give at most %llu, or raise the hard limit first (`ulimit -Hn`, as root)",
			    (unsigned long long)rl.rlim_max);
		}
	}
	/* 0: no --timeout */
	if (p->timeout_ms != 0 && berth_limit_check(BERTH_LIMIT_TIMEOUT, NULL, p->timeout_ms, NULL, err) < 0)
		return -1;
	return 0;
}

static bool absolute(const char *path)
{
	return path != NULL && path[0] == '/' && strlen(path) < BERTH_MOUNT_TARGET_MAX;
}

/* A container's part (src/oci made it from a bundle; the runtime relies on
 * these). */
static int check_container(const struct berth_policy *p, struct berth_error *err)
{
	const struct berth_container *c = p->container;

	if (c == NULL) {
		for (size_t i = 0; i < p->n_mounts; i++)
			if (p->mounts[i].tmpfs)
				return berth_usage_err(err,
						       "a tmpfs mount (`%s`) belongs to a container's policy",
						       p->mounts[i].dst);
		return 0;
	}
	if (!absolute(c->root) || !absolute(c->cwd))
		return berth_usage_err(err,
				       "a container's root and working directory must be absolute paths");
	if ((p->workspace == NULL) != (c->workspace_at == NULL) ||
	    (c->workspace_at != NULL && !absolute(c->workspace_at)))
		return berth_usage_err(
		    err, "a container's workspace needs both its source and an absolute target");
	if (c->hostname != NULL && (strlen(c->hostname) == 0 || strlen(c->hostname) > 64))
		return berth_usage_err(err, "the container's hostname `%s` is not 1 to 64 bytes",
				       c->hostname);
	{
		const char *const join[] = {c->netns, c->ipcns, c->utsns};
		for (size_t i = 0; i < 3; i++)
			if (join[i] != NULL && !absolute(join[i]))
				return berth_usage_err(
				    err, "a namespace a container joins must be an absolute path, not `%s`",
				    join[i]);
	}
	/* sethostname(2) needs a UTS namespace of the sandbox's own (runc's
	 * rule too): a joined one is the pod's, named by the engine */
	if (c->hostname != NULL && c->utsns != NULL)
		return berth_usage_err(err,
				       "the container's hostname `%s` needs a UTS namespace of its own, and "
				       "it joins `%s`",
				       c->hostname, c->utsns);
	if ((c->uid_range.size == 0) != (c->gid_range.size == 0))
		return berth_usage_err(err, "a container maps a range of uids and gids, or neither");
	for (int k = 0; k < 2 && c->uid_range.size > 0; k++) {
		const struct berth_idrange *r = k == 0 ? &c->uid_range : &c->gid_range;
		uint32_t id = k == 0 ? c->uid : c->gid;
		if (r->host == 0 || (uint64_t)r->host + r->size > UINT32_MAX ||
		    (uint64_t)r->inside + r->size > UINT32_MAX) {
			berth_usage_err(err, "the container's %s range %u:%u:%u would map host id 0 or wraps",
					k == 0 ? "uid" : "gid", r->inside, r->host, r->size);
			return berth_err_hint(
			    err, "a container never runs as the host's root: map it to ids above 0");
		}
		if (id < r->inside || id - r->inside >= r->size)
			return berth_usage_err(err,
					       "the container's %s %u is outside its mapped range %u:%u:%u",
					       k == 0 ? "uid" : "gid", id, r->inside, r->host, r->size);
	}
	if (c->n_rlimits > BERTH_CONTAINER_RLIMITS_MAX)
		return berth_usage_err(err, "too many rlimits for a container (%zu, at most %d)",
				       c->n_rlimits, BERTH_CONTAINER_RLIMITS_MAX);
	for (size_t i = 0; i < c->n_rlimits; i++)
		if (c->rlimits[i].resource < 0 || c->rlimits[i].resource >= BERTH_CONTAINER_RLIMITS_MAX ||
		    c->rlimits[i].soft > c->rlimits[i].hard)
			return berth_usage_err(
			    err, "the container's rlimit %d has soft %llu above hard %llu, or is unknown",
			    c->rlimits[i].resource, (unsigned long long)c->rlimits[i].soft,
			    (unsigned long long)c->rlimits[i].hard);
	if (c->n_masked > BERTH_CONTAINER_PATHS_MAX || c->n_readonly > BERTH_CONTAINER_PATHS_MAX)
		return berth_usage_err(err, "too many masked or read-only paths (at most %d each)",
				       BERTH_CONTAINER_PATHS_MAX);
	for (size_t i = 0; i < c->n_masked + c->n_readonly; i++) {
		const char *path = i < c->n_masked ? c->masked[i] : c->readonly[i - c->n_masked];
		if (!absolute(path))
			return berth_usage_err(err, "the masked or read-only path `%s` is not absolute",
					       path != NULL ? path : "");
	}
	return 0;
}

/* --review (docs/review.md): an overlay over the workspace, its upper layer
 * a tmpfs charged to the sandbox's memory. */
static int check_review(const struct berth_policy *p, struct berth_error *err)
{
	char given[32];

	if (!p->review)
		return 0;
	if (berth_limit_check(BERTH_LIMIT_REVIEW_SIZE, NULL, p->review_size, NULL, err) < 0)
		return -1;
	if (p->workspace == NULL) {
		berth_usage_err(err, "--review needs a workspace to review");
		return berth_err_hint(err, "give `--workspace DIR`");
	}
	if (p->container != NULL || p->app) {
		berth_usage_err(err, "--review is for `berth run`: %s have no reviewable workspace",
				p->app ? "resident apps" : "containers");
		return berth_err_hint(err, "drop `--review`");
	}
	if (p->review_size > p->memory) {
		snprintf(given, sizeof given, "%llu", (unsigned long long)p->review_size);
		berth_usage_err(
		    err,
		    "--review-size %s bytes is more than --memory (%llu bytes): the review layer is "
		    "memory (a tmpfs) charged to the sandbox",
		    given, (unsigned long long)p->memory);
		return berth_err_hint(err, "give a smaller `--review-size` or a larger `--memory`");
	}
	return 0;
}

int berth_policy_validate(const struct berth_policy *p, struct berth_error *err)
{
	if (check_limits(p, err) < 0 || check_mounts(p, err) < 0 || check_hosts(p, err) < 0 ||
	    check_env(p, err) < 0 || check_landlock(p, err) < 0 || check_container(p, err) < 0 ||
	    check_review(p, err) < 0)
		return -1;
	return 0;
}
