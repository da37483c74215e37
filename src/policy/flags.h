/* SPDX-License-Identifier: MIT */
/*
 * flags.h - `berth run` command-line options into a policy.
 */
#ifndef BERTH_FLAGS_H
#define BERTH_FLAGS_H

#include <stdbool.h>

#include "policy.h"

struct berth_run_opts {
	struct berth_policy policy;
	bool dry_run;  /* print the compiled policy, do not run */
	bool json;     /* --dry-run output as canonical JSON */
	bool yes;      /* do not ask to confirm widenings */
	bool help;     /* --help was given */
	const char *network_mode; /* as asked: "none", "proxy", "api-only" or "host" (static) */
	char *widenings[32]; /* one human line per widening, NULL-terminated */
	int n_widenings;
};

/*
 * berth_run_parse - parse `berth run` arguments (argv[0] is "run").
 * @env_lookup: getenv-like function used for --env NAME (tests pass their own).
 * Resolves the workspace and mount sources to physical paths (realpath(3)) and
 * refuses `/`, the caller's home (and its ancestors) and /proc, /sys, /dev
 * targets.  Returns 0, or -1 with @err filled (status BERTH_EXIT_USAGE for bad
 * input).  Release with berth_run_opts_free().
 */
int berth_run_parse(int argc, char **argv, char *(*env_lookup)(const char *), struct berth_run_opts *o,
		    struct berth_error *err);

/* berth_run_opts_free - release what berth_run_parse() allocated. */
void berth_run_opts_free(struct berth_run_opts *o);

/* berth_caller_home - the caller's home directory (passwd entry), or NULL. */
const char *berth_caller_home(void);

#endif
