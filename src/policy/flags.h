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
	bool dry_run; /* print the compiled policy, do not run */
	bool explain; /* --explain: the run's denials at exit (docs/denials.md); not policy */
	bool ask;     /* --ask: opens outside the view are put to a human (docs/ask.md); not policy */
	unsigned ask_timeout_ms;  /* --ask-timeout; 0: not given (the default, 60 s) */
	bool json;                /* --dry-run output as canonical JSON */
	bool yes;                 /* do not ask to confirm widenings */
	bool help;                /* --help was given */
	const char *network_mode; /* as asked: "none", "proxy", "api-only" or "host" (static) */
	char *widenings[BERTH_POLICY_WIDENINGS_MAX + 1]; /* one human line per widening, NULL-terminated */
	int n_widenings;
	bool widenings_full; /* one more did not fit: berth_run_parse refuses the run */
	char **evidence;     /* --evidence: physical host paths, in order given */
	size_t n_evidence;
	char **evidence_lex; /* the same, as written (absolute, links not resolved) */
	bool forensic;       /* --forensic preset (docs/security.md) */
	bool network_given;  /* --network, --allow-host or --dns was given */
	/* --runtime NAME as given (not part of the policy: the same policy,
	 * digest and all, whichever runtime enforces it), or NULL: the default */
	char *runtime;
};

/*
 * berth_run_system_workspace - when root runs berth, the workspace is
 * idmapped so that its owner's files are the sandbox's own: a workspace that
 * is or is below a system directory (/etc, /usr, /var, /boot, /opt, /srv,
 * /root, /bin, /sbin, /lib*, /efi; not below the caller's home) lets the
 * sandbox rewrite what the host runs or trusts.  Adds that widening to @o
 * (after berth_run_parse, for `berth run`, and for `berth spawn` and each
 * agent of a fleet given a workspace; not for the stand-in workspace a
 * session's own is parsed on).  Returns 0 (nothing for a user), or -1
 * with @err: ENOMEM (125), or more than 31 widenings (status 2).
 */
int berth_run_system_workspace(struct berth_run_opts *o, struct berth_error *err);

/*
 * berth_run_recheck - the workspace, every --ro/--rw source and every
 * --evidence of @o still resolve to the physical path berth_run_parse
 * checked (realpath(3)): none of their components became a symbolic link
 * while berth waited (a widening's confirmation, or a sandbox racing in the
 * same workspace).  Call it last before the sandbox is built (`berth run`;
 * berth_spawn_launch for spawn and each fleet agent); the sandbox then opens
 * each source once with no link followed (berth_source_open).  Returns 0, or
 * -1 with @err (status 2) naming the path and what it leads to now.
 */
int berth_run_recheck(const struct berth_run_opts *o, struct berth_error *err);

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

/*
 * berth_run_option_arity - whether @arg is exactly one of `berth run`'s long
 * options (`--memory`; no abbreviation, no `=VALUE`), for the commands that
 * pass such options through to berth_run_parse (berth export k8s).  Returns
 * 1 for an option that takes a value (the next argument), 0 for a flag, -1
 * for anything else.  Never fails.
 */
int berth_run_option_arity(const char *arg);

/* berth_run_opts_free - release what berth_run_parse() allocated. */
void berth_run_opts_free(struct berth_run_opts *o);

/*
 * berth_run_scrub - after berth_run_parse(): overwrite, in berth's own
 * memory as /proc/PID/cmdline and /proc/PID/environ show it (proc(5)), the
 * VALUE of every `--env NAME=VALUE` / `--env=NAME=VALUE` in @argv with `*`,
 * and the value of every `--env NAME` variable in berth's environment with
 * NUL bytes (the policy holds copies).  Variables berth itself reads (HOME,
 * PATH, TERM, LANG, LC_*, USER, LOGNAME, XDG_*, BERTH_*) are left alone.
 * Processes berth forks later inherit the scrubbed memory.  Never fails.
 */
void berth_run_scrub(int argc, char **argv, const struct berth_run_opts *o);

/* berth_caller_home - the caller's home directory (passwd entry), or NULL. */
const char *berth_caller_home(void);

#endif
