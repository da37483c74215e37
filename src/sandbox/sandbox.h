/* SPDX-License-Identifier: MIT */
/*
 * sandbox.h - the namespace runtime: enforce a berth policy on one command.
 */
#ifndef BERTH_SANDBOX_H
#define BERTH_SANDBOX_H

#include <stdbool.h>

#include "../policy/policy.h"
#include "../util/error.h"

/* Kernel features the runtime uses; each can be forced off for tests. */
enum berth_feature {
	BERTH_FEAT_USERNS = 1 << 0,
	BERTH_FEAT_LANDLOCK = 1 << 1,
	BERTH_FEAT_SECCOMP = 1 << 2,
	BERTH_FEAT_CGROUP = 1 << 3,
	BERTH_FEAT_IDMAP = 1 << 4,
};

struct berth_features {
	bool userns;        /* a user namespace can be created */
	int userns_errno;   /* why not */
	int landlock_abi;   /* > 0, or -ENOSYS / -EOPNOTSUPP */
	bool seccomp;
	unsigned forced_off; /* enum berth_feature bits from BERTH_TEST_FORCE_OFF */
};

struct berth_runtime_opts {
	unsigned force_off;  /* enum berth_feature bits (test-only switch) */
	bool quiet;          /* do not print the one-line notices */
};

/*
 * berth_parse_force_off - parse the test-only switch, a comma list of
 * `userns`, `landlock`, `seccomp`, `cgroup`, `idmap`.  Returns the bits, or -1
 * with @err naming the bad word.
 */
int berth_parse_force_off(const char *s, unsigned *bits, struct berth_error *err);

/*
 * berth_features_detect - what this kernel and caller can enforce, with the
 * @force_off bits reported as missing.
 */
void berth_features_detect(unsigned force_off, struct berth_features *f);

/*
 * berth_features_detect_opts - as berth_features_detect(); with
 * @probe_userns false, user namespaces are assumed available unless forced
 * off (no probe child is cloned: the caller's own clone is the probe, see
 * berth_sandbox_run()).
 */
void berth_features_detect_opts(unsigned force_off, bool probe_userns, struct berth_features *f);

/*
 * berth_sandbox_run - run @p->argv confined by @p and wait for it.
 * Prints one line per notice on stderr (what limits are applied and how,
 * what is not enforced in degraded mode) unless @o->quiet.
 * @status: receives the exit status berth should exit with: the command's,
 * 128+N when it was killed by signal N, 124 on --timeout, 126/127 when it could
 * not be executed / was not found.
 * Returns 0 when the command ran (whatever its status), or -1 with @err filled
 * when berth failed or refused before the command ran (err->status 125, or 2).
 * Nothing created for the run (mounts, cgroups, processes, placeholders)
 * survives the return, nor berth's own death (see docs/security.md).
 */
int berth_sandbox_run(const struct berth_policy *p, const struct berth_runtime_opts *o, int *status,
		      struct berth_error *err);

#endif
