/* SPDX-License-Identifier: MIT */
/*
 * landlock.h - Landlock ruleset for the sandboxed command.
 *
 * The ABI is negotiated best-effort, as the kernel's samples/landlock/sandboxer.c
 * does: rights the running kernel does not know are removed from the handled
 * set and from every rule.  Source: Documentation/userspace-api/landlock.rst.
 */
#ifndef BERTH_LANDLOCK_H
#define BERTH_LANDLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "../policy/sysdirs.h"
#include "../util/error.h"

struct berth_ll_rule {
	const char *path; /* absolute path in the sandbox's view */
	enum berth_ll_access access;
};

/*
 * berth_landlock_view_rules - the rules of the default view (the rows of
 * berth_sysdirs with a Landlock right: ll_app for a resident app when @app,
 * ll_run otherwise), in table order, into @r (room for @max).  Returns the
 * number written; a table longer than @max is cut at @max (the policy
 * refuses a run that would not fit: BERTH_POLICY_LANDLOCK_RULES_MAX).
 */
int berth_landlock_view_rules(bool app, struct berth_ll_rule *r, int max);

/*
 * berth_landlock_abi - the kernel's Landlock ABI version, or a negative errno:
 * -ENOSYS (not built in), -EOPNOTSUPP (built in, disabled at boot).
 */
int berth_landlock_abi(void);

/*
 * berth_landlock_log_flags - the landlock_restrict_self() flags berth sets
 * for @abi: LOG_NEW_EXEC_ON | LOG_SUBDOMAINS_OFF from ABI 7 (the command's
 * denials are logged to the kernel's audit, when it is on; a ruleset the
 * command stacks logs nothing), 0 before (the flags are EINVAL there).
 * docs/denials.md.
 */
unsigned berth_landlock_log_flags(int abi);

/*
 * berth_landlock_apply - create a ruleset handling every filesystem right of
 * @abi, add @rules (paths that do not exist are skipped), handle TCP bind and
 * connect when @deny_tcp and abi >= 4, allowing only TCP connect to the
 * @n_ports ports in @connect_ports (the egress broker's listeners), scope abstract unix
 * sockets and signals when abi >= 6, and restrict the calling thread (with
 * berth_landlock_log_flags(@abi)).
 * NO_NEW_PRIVS must be set.  Allocation-free.
 * Returns 0, or -1 with @err filled.
 */
int berth_landlock_apply(int abi, const struct berth_ll_rule *rules, int n_rules, bool deny_tcp,
			 const uint16_t *connect_ports, int n_ports, struct berth_error *err);

#endif
