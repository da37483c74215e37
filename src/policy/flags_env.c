/* SPDX-License-Identifier: MIT */
/*
 * flags_env.c - the environment side of `berth run`'s options: --env NAME
 * and NAME=VALUE, --env-file assignments (their origin kept for --forensic),
 * and berth_run_scrub, which overwrites the secret values in berth's own
 * command line and environment once the policy holds copies.
 */
#include "flags_int.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "envfile.h"

/* Set NAME (valid) to @value (taken over) with its origin; a later
 * assignment of NAME replaces an earlier one. */
static int set_env(struct berth_policy *p, char *name, char *value, bool from_host, bool from_file,
		   struct berth_error *err)
{
	struct berth_env *e;

	e = realloc(p->env, (p->n_env + 1) * sizeof *e);
	if (name == NULL || value == NULL || e == NULL) {
		free(name);
		if (value != NULL)
			explicit_bzero(value, strlen(value));
		free(value);
		if (e != NULL)
			p->env = e;
		return berth_err(err, ENOMEM, "out of memory");
	}
	p->env = e;
	for (size_t i = 0; i < p->n_env; i++) {
		if (strcmp(p->env[i].name, name) == 0) {
			free(p->env[i].name);
			explicit_bzero(p->env[i].value, strlen(p->env[i].value));
			free(p->env[i].value);
			p->env[i] = (struct berth_env){name, value, from_host, from_file};
			return 0;
		}
	}
	p->env[p->n_env++] = (struct berth_env){name, value, from_host, from_file};
	return 0;
}

int berth_fl_add_env(struct berth_policy *p, const char *arg, char *(*env_lookup)(const char *),
		     struct berth_error *err)
{
	const char *eq = strchr(arg, '=');
	size_t n = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
	char *name, *value;

	if (!berth_env_name_valid(arg, n)) {
		/* Never echo a value: only the part before `=`. */
		berth_usage_err(err, "invalid environment variable name `%.*s` in `--env`",
				(int)(n > 64 ? 64 : n), arg);
		return berth_err_hint(
		    err, "use `--env NAME` or `--env NAME=VALUE` with NAME made of A-Z, a-z, 0-9, _");
	}
	name = strndup(arg, n);
	if (eq != NULL) {
		value = strdup(eq + 1);
	} else {
		const char *v = env_lookup(name);
		if (v == NULL) {
			berth_usage_err(err, "`--env %s`: `%s` is not set in berth's environment", arg, name);
			free(name);
			return berth_err_hint(
			    err, "set it, or give a value with `--env %.*s=VALUE` or `--env-file`", (int)n,
			    arg);
		}
		value = strdup(v);
	}
	return set_env(p, name, value, eq == NULL, false, err);
}

int berth_fl_envfile_add(void *ctx, const char *name, const char *value, struct berth_error *err)
{
	return set_env(ctx, strdup(name), strdup(value), false, true, err);
}

static bool berth_reads(const char *name, size_t n)
{
	static const char *const own[] = {"HOME", "PATH", "TERM", "LANG", "USER", "LOGNAME", NULL};

	for (size_t i = 0; own[i] != NULL; i++)
		if (strlen(own[i]) == n && strncmp(name, own[i], n) == 0)
			return true;
	return strncmp(name, "LC_", 3) == 0 || strncmp(name, "XDG_", 4) == 0 ||
	       strncmp(name, "BERTH_", 6) == 0;
}

void berth_run_scrub(int argc, char **argv, const struct berth_run_opts *o)
{
	extern char **environ;

	for (int i = 1; i < argc; i++) {
		char *v = NULL;
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--env") == 0 && i + 1 < argc) {
			v = strchr(argv[++i], '=');
		} else if (strncmp(argv[i], "--env=", 6) == 0) {
			v = strchr(argv[i] + 6, '=');
		} else if (i + 1 < argc && argv[i][0] == '-' && argv[i][1] == '-' &&
			   strchr(argv[i], '=') == NULL) {
			/* an option with a separate value: skip the value */
			static const char *const with_value[] = {
			    "--workspace",  "--tmp-size", "--memory",  "--cpus",       "--pids",
			    "--nofile",     "--timeout",  "--network", "--allow-host", "--dns",
			    "--env-file",   "--evidence", "--ro",      "--rw",         "--unprotect",
			    "--credential", "--ssh",      "--ssh-key", "--ssh-host",   NULL};
			for (size_t k = 0; with_value[k] != NULL; k++)
				if (strcmp(argv[i], with_value[k]) == 0) {
					i++;
					break;
				}
			continue;
		}
		if (v != NULL)
			memset(v + 1, '*', strlen(v + 1));
	}
	for (size_t i = 0; i < o->policy.n_env; i++) {
		const char *name = o->policy.env[i].name;
		size_t n = strlen(name);
		if (!o->policy.env[i].from_host || berth_reads(name, n))
			continue;
		for (char **e = environ; e != NULL && *e != NULL; e++)
			if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
				explicit_bzero(*e + n + 1, strlen(*e + n + 1));
	}
}
