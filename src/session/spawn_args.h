/* SPDX-License-Identifier: MIT */
/*
 * spawn_args.h - `berth spawn` (and each agent of a fleet): arguments into a
 * checked plan (berth_spawn_prepare, which creates nothing), then the
 * session (berth_spawn_launch).
 */
#ifndef BERTH_SESSION_SPAWN_ARGS_H
#define BERTH_SESSION_SPAWN_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../policy/flags.h"
#include "../util/error.h"
#include "home_seed.h"
#include "profile.h"

#define BERTH_SPAWN_NOTES_MAX 32

/*
 * The workspace that stands in while a session's options are parsed and
 * checked against the rules, before its own directory exists (launch puts
 * the real one in its place).  Not /tmp: a shared directory is refused as a
 * workspace, and its `.berth/rules.yml` could be anyone's.
 */
#define BERTH_SPAWN_STANDIN_WORKSPACE "/usr"

struct berth_spawn_req {
	/* from the command line (or a fleet file) */
	char *profile_name;
	char *name;      /* NULL: derived */
	char *repo;      /* NULL: none */
	char *workspace; /* NULL: the session's own */
	char *prompt;    /* NULL: none */
	bool seed_auth;
	int persist_home; /* --persist-home 1, --no-persist-home 0, -1: the profile's persist_home */
	char **run_args;  /* `berth run` options, in order */
	size_t n_run_args;
	char **extra; /* after `--`: appended to the profile's command */
	size_t n_extra;
	int rows, cols; /* terminal size */
	/* filled by berth_spawn_prepare */
	struct berth_profile profile;
	struct berth_run_opts run;
	bool have_run;
	bool managed_ws;
	char *home_dir;              /* the persistent home, $XDG_STATE_HOME/berth/homes/PROFILE, or NULL */
	struct berth_home_seed seed; /* the profile's seeded home and preamble (home_seed.h) */
	char *agent_src;             /* profile `path:` resolved on the host (mounted read-only), or NULL */
	const struct berth_runtime_ops *runtime; /* --runtime (berth_runtime_find), the default without */
	char *notes[BERTH_SPAWN_NOTES_MAX];      /* risk lines and warnings, for the CLI to print */
	size_t n_notes;
	/* filled by berth_spawn_launch, for the CLI to print after it: the audit
	 * log's recovery by the supervisor ("audit: ..."), or "" */
	char launch_notice[1024];
};

/*
 * berth_spawn_parse - `spawn PROFILE [OPTIONS] [-- ARGS]` (@argv[0] is
 * "spawn").  Spawn's own options are taken out; everything else is kept
 * for `berth run`'s parser.  Returns 0, or -1 with @err (status 2).  Release
 * @r with berth_spawn_req_free() in both cases.
 */
int berth_spawn_parse(int argc, char **argv, struct berth_spawn_req *r, struct berth_error *err);

/*
 * berth_spawn_add_run_arg - append one `berth run` argument (fleet files).
 * Returns 0 or -1 (ENOMEM).
 */
int berth_spawn_add_run_arg(struct berth_spawn_req *r, const char *arg, struct berth_error *err);

/*
 * berth_spawn_prepare - load the profile, settle the name, compile the
 * policy exactly as `berth run` would (profile defaults first, the caller's
 * options after them) and check that the name is free.  Creates nothing.
 * @env_lookup: getenv-like, for --env NAME and --seed-auth.
 * Returns 0, or -1 with @err (status 2 for bad input).
 */
int berth_spawn_prepare(struct berth_spawn_req *r, char *(*env_lookup)(const char *),
			struct berth_error *err);

/*
 * berth_spawn_run_argv - the `berth run` arguments (argv[0] "run") that
 * berth_spawn_prepare compiles a session of @r's loaded profile (@r->profile)
 * from, without what only this machine has: no agent `path:` mount and no
 * --seed-auth credentials (berth export k8s, src/export).  In order:
 * --workspace (@r's, else BERTH_SPAWN_STANDIN_WORKSPACE), the profile's
 * network and allow_hosts (unless @r's --network replaces them; the note
 * saying so goes to @r->notes), its options, env and git identity, @r's
 * options, `--`, the profile's command, @r's extra arguments and an ARGV
 * prompt.  Returns 0 with *@av (NULL-terminated; release with
 * berth_strv_free) and *@ac, or -1 with @err (ENOMEM).
 */
int berth_spawn_run_argv(struct berth_spawn_req *r, char ***av, size_t *ac, struct berth_error *err);

/*
 * berth_spawn_launch - after berth_spawn_prepare: check again that the
 * workspace and every --ro/--rw source still resolve to what prepare checked
 * (berth_run_recheck, as `berth run` does), take the name, make the
 * session's own workspace, clone --repo into it (git, in a berth sandbox
 * that reaches only the GitHub hosts and the caller's --allow-host
 * patterns), and start the supervisor.  On failure nothing is left: no
 * supervisor, no session directory, no workspace berth made.
 * Returns 0 with *@pid the supervisor's pid, or -1 with @err (2 when a
 * source changed since prepare, naming it; 125 for a failed clone; 126/127
 * when the agent could not be executed or found).
 */
int berth_spawn_launch(struct berth_spawn_req *r, pid_t *pid, struct berth_error *err);

/*
 * berth_spawn_is_credential - whether the variable @name looks like a
 * credential (KEY, TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL or AUTH in
 * it, in any case) or is one of profile @p's `credentials` (@p may be
 * NULL): such a value gets a risk line.  Never fails.
 */
bool berth_spawn_is_credential(const struct berth_profile *p, const char *name);

/* berth_spawn_req_free - release @r. */
void berth_spawn_req_free(struct berth_spawn_req *r);

/* The hosts a --repo clone may always reach. */
extern const char *const berth_clone_hosts[];

#endif
