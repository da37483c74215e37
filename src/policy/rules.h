/* SPDX-License-Identifier: MIT */
/*
 * rules.h - non-negotiable limits: rules files that every `berth run` (and
 * every session spawn) must satisfy before anything is created.
 *
 * Files, all of them enforced (docs/rules.md):
 *   /etc/berth/rules.yml                            the machine's (system)
 *   $XDG_CONFIG_HOME/berth/rules.yml (~/.config/...) the user's
 *   the nearest .berth/rules.yml from the current directory up to `/`
 *                                                   the project's (walking up
 *                                                   does not stop at a
 *                                                   repository root)
 * A file can only narrow: each is checked on its own against the policy, so
 * a project file can never allow what a user or system file refuses.  A key
 * a file does not name leaves that aspect to the other files.
 *
 * Format: a mapping with `allow:` (the keys networks, hosts, rw, unprotect,
 * env, credentials, degraded, memory, cpus, pids) and `guard:` (read-only,
 * named) (docs/rules.md).  Unknown
 * keys and malformed values are errors naming file:line:col.
 */
#ifndef BERTH_RULES_H
#define BERTH_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/error.h"
#include "policy.h"

#define BERTH_RULES_SYSTEM_PATH "/etc/berth/rules.yml"

/*
 * What the policy alone does not say about a request.
 */
struct berth_widening_ctx {
	/* The network mode as asked for: "none", "proxy", "api-only" or "host".
	 * NULL: derived from the policy (BERTH_NET_PROXY reads as "proxy"). */
	const char *network_mode;
	/* Credentials forwarded besides `--env NAME` (the session code's
	 * `--seed-auth` items, by name such as "ANTHROPIC_API_KEY" or
	 * "claude-auth"); may be NULL when @n_credentials is 0. */
	const char *const *credentials;
	size_t n_credentials;
};

struct berth_rules;

/*
 * berth_rules_load_all - read every rules file that applies: the system
 * file, the user's, and every .berth/rules.yml from @cwd up to `/` and from
 * @workspace up to `/` (each file can only narrow, so all of them are read,
 * not only the nearest: a permissive file planted below the project's cannot
 * lift it).
 * @cwd: where one walk starts (NULL: getcwd(3)).
 * @workspace: where the other starts (the run's workspace; NULL: none).
 * A file that does not exist is skipped; one that is not a regular file (a
 * directory, a FIFO, a dangling symbolic link) is refused (BERTH_EXIT_USAGE).  The environment variable
 * BERTH_TEST_SYSTEM_RULES=PATH (for tests that must not write /etc) names
 * one more system file, read in addition to /etc/berth/rules.yml, never
 * instead of it: it can only add limits.
 * Returns 0 and sets *@out (release with berth_rules_free; no file found is
 * an empty set), or -1 with @err filled: BERTH_EXIT_USAGE for a malformed
 * file ("FILE:LINE:COL: ..."); BERTH_EXIT_INTERNAL with errno for a file
 * that exists but cannot be read, or ENOMEM.
 */
int berth_rules_load_all(const char *cwd, const char *workspace, struct berth_rules **out,
			 struct berth_error *err);

/*
 * berth_rules_new / berth_rules_add - an empty set, and one more file parsed
 * from memory into it (for tests and the fuzzer).  @origin names the file in
 * messages.  berth_rules_add returns 0, or -1 with @err filled as for
 * berth_rules_load_all; @r is unchanged on failure.
 */
struct berth_rules *berth_rules_new(struct berth_error *err);
int berth_rules_add(struct berth_rules *r, const char *text, size_t len, const char *origin,
		    struct berth_error *err);

/* berth_rules_free - release @r (NULL is fine). */
void berth_rules_free(struct berth_rules *r);

/* berth_rules_count / berth_rules_origin - the files in @r, in load order. */
size_t berth_rules_count(const struct berth_rules *r);
const char *berth_rules_origin(const struct berth_rules *r, size_t i);

/*
 * berth_rules_check - does policy @p satisfy every file of @r?
 * Files are checked in load order (system, user, project), keys in the
 * order networks, hosts, rw, unprotect, env, credentials, degraded, memory,
 * cpus, pids; the first denial is reported:
 *   "refused by rules (FILE:LINE): networks does not allow host"
 * with LINE that of the key that refuses and a hint saying what the file
 * allows.  The limits compare the effective values: a run that sets no
 * --memory/--cpus/--pids has the defaults (8G, 4, 512), and those count.
 * @p is first checked with berth_policy_validate (its errors, exit status
 * 2, come before any rule's).
 * Returns 0 when allowed, -1 with @err filled (BERTH_EXIT_USAGE) when denied.
 */
int berth_rules_check(const struct berth_rules *r, const struct berth_policy *p,
		      const struct berth_widening_ctx *ctx, struct berth_error *err);

/*
 * berth_rules_guard - add every file's `guard.read-only` and `guard.named`
 * names (trust names, fnmatch(3) patterns or classes; trust.h) to @p's
 * guard_ro and guard_named, once each.  They can only make the guard
 * stricter: `--unprotect` still loosens only what `allow.unprotect` allows.
 * Returns 0, or -1 with @err filled (ENOMEM).
 */
int berth_rules_guard(const struct berth_rules *r, struct berth_policy *p, struct berth_error *err);

#endif
