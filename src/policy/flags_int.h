/* SPDX-License-Identifier: MIT */
/*
 * flags_int.h - private to the files that parse `berth run`'s options: the
 * helpers one of them shares with another.  Nothing else includes it; the
 * interface is flags.h.
 *
 * Files, one concern each:
 *   flags.c      the option table, one handler per option, the checks across
 *                options (berth_run_parse), --evidence and --forensic
 *   flags_net.c  --allow-host patterns and the network presets
 *   flags_env.c  --env and --env-file values, berth_run_scrub
 *   hostpath.c   the workspace, the --ro/--rw sources and mount targets (hostpath.h)
 *
 * Every function here reports errors as it did as a static function of
 * flags.c: a negative return with @err filled (berth_err), unless noted.
 */
#ifndef BERTH_POLICY_FLAGS_INT_H
#define BERTH_POLICY_FLAGS_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "flags.h"

/*
 * berth_fl_add_widening - add one line to @o->widenings, formatted from
 * @fmt.  One more than fit sets @o->widenings_full instead (berth_run_parse
 * refuses the run).  Returns 0, or -1 when out of memory (@err not filled).
 */
int berth_fl_add_widening(struct berth_run_opts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * berth_fl_strv_add - append a copy of @s to the vector *@v of *@n strings;
 * with @unique, nothing when an equal string is there already.  Returns 0,
 * or -1 with @err ENOMEM (*@v stays valid, *@n unchanged).
 */
int berth_fl_strv_add(char ***v, size_t *n, const char *s, bool unique, struct berth_error *err);

/*
 * berth_fl_add_allow_host - --allow-host @arg, checked with the broker's
 * grammar and added to @p in its canonical spelling (once).  Returns 0, or
 * -1 with @err: a usage error (status 2) naming the pattern, or ENOMEM.
 */
int berth_fl_add_allow_host(struct berth_policy *p, const char *arg, struct berth_error *err);

/*
 * berth_fl_add_credential - --credential @arg (credential.h) into @o's
 * policy, its HOST:PORT declared as by --allow-host, and its widening line.
 * Returns 0, or -1 with @err: a usage error (status 2) naming the binding
 * and the fix (a bad binding, a NAME given twice, more than
 * BERTH_CRED_MAX), or ENOMEM.
 */
int berth_fl_add_credential(struct berth_run_opts *o, const char *arg, struct berth_error *err);

/*
 * berth_fl_add_ssh_key - --ssh FINGERPRINT (@file false) or --ssh-key FILE
 * (@file true: each key of a public key file) into @o's policy
 * (ssh_keys), each with its widening line.  Returns 0, or -1 with @err: a
 * usage error (status 2) naming the value and the fix, or ENOMEM.
 */
int berth_fl_add_ssh_key(struct berth_run_opts *o, const char *arg, bool file, struct berth_error *err);

/*
 * berth_fl_add_ssh_host - --ssh-host HOST[:PORT][=KEYFILE]: the host keys of
 * KEYFILE (known_hosts or .pub lines; without it, the ones berth ships in
 * data/ssh/HOST: github.com only) pinned in @o's policy (ssh_known_hosts),
 * and HOST:PORT (default 22) declared as by --allow-host.  Returns 0, or -1
 * with @err: a usage error (status 2) naming the value and the fix, or
 * ENOMEM.
 */
int berth_fl_add_ssh_host(struct berth_run_opts *o, const char *arg, struct berth_error *err);

/*
 * berth_fl_load_preset - add the allow-host patterns of the network preset
 * @name (flags_net.c says where it is looked for) to @p.  Returns 0, or -1
 * with @err: a usage error (status 2) for a preset that is missing, not a
 * regular file, too large, not text or holds a bad pattern (its line
 * named); errno from open(2)/read(2); ENOMEM.
 */
int berth_fl_load_preset(struct berth_policy *p, const char *name, struct berth_error *err);

/*
 * berth_fl_add_env - --env @arg (`NAME` or `NAME=VALUE`) into @p; NAME
 * alone takes its value from @env_lookup and is marked from_host.  A later
 * NAME replaces an earlier one.  Returns 0, or -1 with @err: a usage error
 * (status 2) for a bad name or an unset NAME (never echoing a value), ENOMEM.
 */
int berth_fl_add_env(struct berth_policy *p, const char *arg, char *(*env_lookup)(const char *),
		     struct berth_error *err);

/* berth_fl_envfile_add - berth_envfile_load's callback: NAME=VALUE from an
 * --env-file into the policy @ctx, marked from_file.  Returns 0 or -1 (ENOMEM). */
int berth_fl_envfile_add(void *ctx, const char *name, const char *value, struct berth_error *err);

#endif
