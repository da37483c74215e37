/* SPDX-License-Identifier: MIT */
/*
 * spawn_args.c - from `berth spawn` arguments to a running session.
 */
#include "spawn_args.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../audit/exposure.h"
#include "../policy/rules.h"
#include "../sandbox/sandbox.h"
#include "../supervisor/run.h"
#include "../policy/hostpat.h"
#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/crash.h"
#include "../util/rundir.h"
#include "session.h"

const char *const berth_clone_hosts[] = {"github.com", "codeload.github.com", "objects.githubusercontent.com",
					 NULL};

/* `berth run` options that take a value (the next argument). */
static const char *const run_value_opts[] = {
    "--workspace", "--tmp-size", "--memory",     "--cpus",        "--pids",    "--nofile",
    "--timeout",   "--network",  "--allow-host", "--dns",         "--env",     "--env-file",
    "--ro",        "--rw",       "--unprotect",  "--review-size", "--runtime", NULL};
static const char *const run_flag_opts[] = {"--allow-degraded", "--yes", "--review", NULL};

static bool in_list(const char *const *l, const char *s)
{
	for (; l != NULL && *l != NULL; l++) /* NULL: no list (no run options given) */
		if (strcmp(*l, s) == 0)
			return true;
	return false;
}

int berth_spawn_add_run_arg(struct berth_spawn_req *r, const char *arg, struct berth_error *err)
{
	return berth_strv_push(&r->run_args, &r->n_run_args, arg) < 0
		   ? berth_err(err, ENOMEM, "out of memory")
		   : 0;
}

static int set_once(char **dst, const char *opt, const char *val, struct berth_error *err)
{
	if (*dst != NULL)
		return berth_usage_err(err, "spawn: `%s` given twice", opt);
	*dst = strdup(val);
	return *dst != NULL ? 0 : berth_err(err, ENOMEM, "out of memory");
}

int berth_spawn_parse(int argc, char **argv, struct berth_spawn_req *r, struct berth_error *err)
{
	memset(r, 0, sizeof *r);
	r->persist_home = -1;
	if (argc < 2 || argv[1][0] == '-')
		return berth_usage_err(err, "spawn: which profile? (claude, codex, shell or your own)");
	if ((r->profile_name = strdup(argv[1])) == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		char **slot = strcmp(a, "--name") == 0        ? &r->name
			      : strcmp(a, "--repo") == 0      ? &r->repo
			      : strcmp(a, "--workspace") == 0 ? &r->workspace
			      : strcmp(a, "--prompt") == 0    ? &r->prompt
							      : NULL;
		if (slot != NULL) {
			if (v == NULL)
				return berth_usage_err(err, "spawn: `%s` needs a value", a);
			if (set_once(slot, a, v, err) < 0)
				return -1;
			i++;
		} else if (strcmp(a, "--size") == 0) {
			/* decimal digits only: sscanf's %d took a sign, blanks, and
			 * overflowed past INT_MAX (undefined behaviour) */
			char rs[16] = "";
			const char *x = v != NULL ? strchr(v, 'x') : NULL;
			uint64_t rows = 0, cols = 0;
			struct berth_error se = {0};
			if (x != NULL && (size_t)(x - v) < sizeof rs)
				memcpy(rs, v, (size_t)(x - v));
			if (x == NULL || berth_parse_count(rs, "rows", 2, 500, &rows, &se) < 0 ||
			    berth_parse_count(x + 1, "columns", 10, 1000, &cols, &se) < 0) {
				berth_usage_err(err, "spawn: invalid --size `%s`", v ? v : "");
				return berth_err_hint(
				    err, "give ROWSxCOLS, 2..500 rows and 10..1000 columns, e.g. 40x120");
			}
			r->rows = (int)rows;
			r->cols = (int)cols;
			i++;
		} else if (strcmp(a, "--seed-auth") == 0) {
			r->seed_auth = true;
		} else if (strcmp(a, "--persist-home") == 0 || strcmp(a, "--no-persist-home") == 0) {
			r->persist_home = a[2] == 'p';
		} else if (strcmp(a, "--") == 0) {
			for (i++; i < argc; i++)
				if (berth_strv_push(&r->extra, &r->n_extra, argv[i]) < 0)
					return berth_err(err, ENOMEM, "out of memory");
		} else if (in_list(run_value_opts, a)) {
			if (v == NULL)
				return berth_usage_err(err, "spawn: `%s` needs a value", a);
			if (berth_spawn_add_run_arg(r, a, err) < 0 || berth_spawn_add_run_arg(r, v, err) < 0)
				return -1;
			i++;
		} else if (in_list(run_flag_opts, a)) {
			if (berth_spawn_add_run_arg(r, a, err) < 0)
				return -1;
		} else if (strcmp(a, "--evidence") == 0 || strcmp(a, "--forensic") == 0) {
			berth_usage_err(
			    err, "spawn: %s is a `berth run` option only: a session copies no evidence", a);
			return berth_err_hint(err,
					      "triage files with `berth run --evidence PATH -- COMMAND`");
		} else if (strncmp(a, "--", 2) == 0 && strchr(a, '=') != NULL) {
			berth_usage_err(err, "spawn: write `%.*s VALUE`, not `%s`", (int)(strchr(a, '=') - a),
					a, a);
			return -1;
		} else {
			berth_usage_err(err, "spawn: unknown option or argument `%s`", a);
			return berth_err_hint(
			    err, "see `berth spawn --help`; the agent's own arguments go after `--`");
		}
	}
	if (r->repo != NULL && r->workspace != NULL)
		return berth_usage_err(err, "spawn: give --repo or --workspace, not both");
	return 0;
}

static void note(struct berth_spawn_req *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct berth_spawn_req *r, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	if (r->n_notes >= BERTH_SPAWN_NOTES_MAX)
		return;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) >= 0)
		r->notes[r->n_notes++] = s;
	va_end(ap);
}

bool berth_spawn_is_credential(const struct berth_profile *p, const char *name)
{
	static const char *const words[] = {"KEY",    "TOKEN",      "SECRET", "PASSWORD",
					    "PASSWD", "CREDENTIAL", "AUTH"};

	for (size_t i = 0; p != NULL && i < p->n_credentials; i++)
		if (strcmp(p->credentials[i], name) == 0)
			return true;
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(words); i++)
		if (strcasestr(name, words[i]) != NULL)
			return true;
	return false;
}

static void risk_line(struct berth_spawn_req *r, const char *var)
{
	note(r,
	     "risk: `%s` is forwarded into session `%s`: the agent and everything it runs can read it and "
	     "send it "
	     "to any host the sandbox may reach",
	     var, r->name);
}

/* The URL of --repo: https://HOST/..., or http:// (plain, said so). */
static int check_repo(struct berth_spawn_req *r, struct berth_error *err)
{
	const char *u = r->repo;

	if (strncmp(u, "https://", 8) != 0 && strncmp(u, "http://", 7) != 0) {
		berth_usage_err(err, "invalid --repo `%s`", u);
		return berth_err_hint(
		    err, "give an https:// URL (ssh, git:// and local paths are not cloned by berth)");
	}
	if (strpbrk(u, " \t\r\n") != NULL || strlen(u) > 2048)
		return berth_usage_err(err, "invalid --repo `%s`: spaces or too long", u);
	if (u[4] == ':')
		note(r, "warning: --repo `%s` is plain HTTP: the clone is neither private nor authenticated",
		     u);
	return 0;
}

static int check_rules(struct berth_spawn_req *r, const char *const *creds, size_t n_creds,
		       struct berth_error *err);

/*
 * Which of the profile's network settings the caller's options keep.
 * --allow-host adds to the profile's network (its preset and allow_hosts):
 * the union is what the agent may reach.  --network replaces it (said in
 * a note); so does --allow-host when the profile has no egress broker
 * (`none` or `host`): the patterns are then the whole list.
 * *@replace: the profile's network and allow_hosts are left out;
 * *@hosts: the caller gave --allow-host.
 */
static void network_plan(struct berth_spawn_req *r, bool *replace, bool *hosts)
{
	const char *given = NULL, *pnet = r->profile.network;

	for (size_t i = 0; i < r->n_run_args; i++) {
		if (strcmp(r->run_args[i], "--network") == 0 && i + 1 < r->n_run_args)
			given = r->run_args[i + 1];
		else if (strcmp(r->run_args[i], "--allow-host") == 0)
			*hosts = true;
	}
	if (given != NULL) {
		*replace = true;
		if ((pnet != NULL && strcmp(pnet, given) != 0) || r->profile.n_allow_hosts > 0)
			note(r, "network: --network %s replaces profile `%s`'s network (%s%s)", given,
			     r->profile.name, pnet != NULL ? pnet : "its allow_hosts",
			     pnet != NULL && r->profile.n_allow_hosts > 0 ? " and its allow_hosts" : "");
	} else if (*hosts && pnet != NULL && (strcmp(pnet, "none") == 0 || strcmp(pnet, "host") == 0)) {
		*replace = true;
		note(r,
		     "network: --allow-host replaces profile `%s`'s network `%s`: the egress broker, only "
		     "the hosts "
		     "you name",
		     r->profile.name, pnet);
	}
}

/*
 * The profile's `path:` (the agent's program on the host, `~/` for the
 * caller's home) resolved: symbolic links followed on the host (the native
 * installers' ~/.local/bin/claude -> ~/.local/share/claude/versions/X),
 * the target mounted read-only at /opt/berth/agent (its directory when it
 * is a `versions` directory; the outermost `node_modules` directory above
 * it, at /opt/berth/agent/node_modules, when it is in one: an npm install's
 * bin/NAME -> ../lib/node_modules/PKG/bin/x.js needs its package and the
 * packages beside it; else the file alone) and run from there.
 * *@exe: the program's path in the sandbox; *@mount: `SRC:DST` for --ro.
 * Returns 0, or -1 with @err (status 2: missing, not an executable file).
 */
static int agent_path(struct berth_spawn_req *r, char **exe, char **mount, struct berth_error *err)
{
	const char *given = r->profile.agent_path, *home = berth_home_dir();
	char host[PATH_MAX], dir[PATH_MAX];
	struct stat st;
	const char *base, *slash;

	if (strncmp(given, "~/", 2) == 0) {
		if (home == NULL)
			return berth_usage_err(
			    err, "profile `%s`: `path: %s` needs your home, and HOME is not set",
			    r->profile.name, given);
		if (snprintf(host, sizeof host, "%s/%s", strcmp(home, "/") == 0 ? "" : home, given + 2) >=
		    (int)sizeof host)
			return berth_usage_err(err, "profile `%s`: `path: %s` is too long", r->profile.name,
					       given);
	} else {
		snprintf(host, sizeof host, "%s", given);
	}
	if ((r->agent_src = realpath(host, NULL)) == NULL || stat(r->agent_src, &st) < 0 ||
	    !S_ISREG(st.st_mode) || access(r->agent_src, X_OK) < 0) {
		bool missing = r->agent_src == NULL;
		berth_usage_err(err, "profile `%s`: the agent `%s` (%s) %s", r->profile.name, given,
				missing ? host : r->agent_src,
				missing ? "does not exist" : "is not an executable file");
		return berth_err_hint(
		    err,
		    "install the agent there (Claude Code's native installer puts "
		    "~/.local/bin/claude), or fix or remove `path:` in %s (without it, `%s` is "
		    "looked up on the sandbox's PATH)",
		    r->profile.path, r->profile.command[0]);
	}
	if (strchr(r->agent_src, ':') != NULL)
		return berth_usage_err(
		    err,
		    "profile `%s`: the agent `%s` resolves to `%s`, whose `:` berth cannot "
		    "mount; move it",
		    r->profile.name, given, r->agent_src);
	const char *nm = strstr(r->agent_src, "/node_modules/");
	if (nm != NULL) {
		size_t top = (size_t)(nm - r->agent_src) + strlen("/node_modules");
		if (asprintf(mount, "%.*s:/opt/berth/agent/node_modules", (int)top, r->agent_src) < 0) {
			*mount = NULL;
			return berth_err(err, ENOMEM, "out of memory");
		}
		if (asprintf(exe, "/opt/berth/agent/node_modules%s", r->agent_src + top) < 0) {
			*exe = NULL;
			return berth_err(err, ENOMEM, "out of memory");
		}
		return 0;
	}
	slash = strrchr(r->agent_src, '/');
	base = slash + 1;
	snprintf(dir, sizeof dir, "%.*s", (int)(slash - r->agent_src), r->agent_src);
	bool versions = strlen(dir) >= 9 && strcmp(dir + strlen(dir) - 9, "/versions") == 0;
	if (versions ? asprintf(mount, "%s:/opt/berth/agent", dir) < 0
		     : asprintf(mount, "%s:/opt/berth/agent/%s", r->agent_src, base) < 0) {
		*mount = NULL;
		return berth_err(err, ENOMEM, "out of memory");
	}
	if (asprintf(exe, "/opt/berth/agent/%s", base) < 0) {
		*exe = NULL;
		return berth_err(err, ENOMEM, "out of memory");
	}
	return 0;
}

static void seed_note(void *arg, const char *line)
{
	note(arg, "%s", line);
}

/* The profile's seeded home and preamble for the compiled policy; for a
 * persistent home that exists, what seeding it would skip (launch seeds). */
static int prepare_seed(struct berth_spawn_req *r, struct berth_error *err)
{
	if (berth_home_seed_build(&r->profile, &r->run.policy, r->home_dir != NULL, &r->seed, err) < 0)
		return -1;
	if (r->home_dir != NULL &&
	    berth_home_seed_persist(&r->seed, r->home_dir, true, seed_note, r, err) < 0)
		return -1;
	return 0;
}

/* $XDG_STATE_HOME/berth/homes/PROFILE (else ~/.local/state/...). */
static int home_path(const char *profile, char **out, struct berth_error *err)
{
	char dir[PATH_MAX];

	*out = NULL;
	if (berth_state_path("homes", dir, sizeof dir) < 0) {
		if (errno == EINVAL)
			return berth_usage_err(err,
					       "cannot place the persistent home: neither XDG_STATE_HOME nor "
					       "HOME is an absolute path");
		return berth_err(err, ENAMETOOLONG, "the persistent home's path is too long");
	}
	if (asprintf(out, "%s/%s", dir, profile) < 0) {
		*out = NULL;
		return berth_err(err, ENOMEM, "out of memory");
	}
	return 0;
}

/* mkdir -p @path: 0700 for every directory made. */
static int make_private_dirs(const char *path, struct berth_error *err)
{
	char buf[PATH_MAX];
	struct stat st;

	if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
		return berth_usage_err(err, "path too long: `%s`", path);
	for (char *s = buf + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(buf, 0700) < 0 && errno != EEXIST)
			return berth_err(err, errno, "cannot create `%s`", buf);
		*s = c;
		if (c == '\0')
			break;
	}
	if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid())
		return berth_usage_err(err, "`%s` is not a directory of uid %u", path, (unsigned)getuid());
	return 0;
}

static size_t n_creds_forwarded(const char *const *creds)
{
	size_t n = 0;

	while (creds != NULL && creds[n] != NULL)
		n++;
	return n;
}

/* The persistent home (named now, made by launch, so that the digest and
 * the rules see the policy that will run), then the exposure check. */
static int settle_home(struct berth_spawn_req *r, struct berth_error *err)
{
	if (r->persist_home == 1 || (r->persist_home < 0 && r->profile.persist_home)) {
		/* Created by launch; named now so that the digest and the rules
		 * see the policy that will run. */
		if (home_path(r->profile.name, &r->home_dir, err) < 0)
			return -1;
		r->run.policy.home_dir = strdup(r->home_dir);
		if (r->run.policy.home_dir == NULL)
			return berth_err(err, ENOMEM, "out of memory");
		note(r,
		     "persistent home: %s is $HOME in the sandbox, kept for every session of profile `%s` "
		     "(what "
		     "the agent writes there, it finds again)",
		     r->home_dir, r->profile.name);
	}
	/* As for berth run: a workspace, a --ro/--rw source (a fleet file's,
	 * a profile's) or the persistent home that holds the audit log or the
	 * host key would hand them to the agent. */
	{
		/* The session's own workspace is only a stand-in here (/tmp):
		 * launch checks the real one again. */
		char *stand_in = r->managed_ws ? r->run.policy.workspace : NULL;
		if (r->managed_ws)
			r->run.policy.workspace = NULL;
		int exposed = berth_audit_exposure_check(&r->run.policy, NULL, 0, NULL, err);
		if (r->managed_ws)
			r->run.policy.workspace = stand_in;
		if (exposed < 0)
			return -1;
	}
	return 0;
}

/* Whether the profile's own `options:` are what berth_run_parse refused
 * (with the same workspace): then @err names the profile's file, as any
 * other bad field of a profile does, and says what was wrong with them. */
static bool profile_options_bad(struct berth_spawn_req *r, char *(*env_lookup)(const char *),
				struct berth_error *err)
{
	struct berth_run_opts trial;
	struct berth_error te = {0};
	char **av = NULL;
	size_t ac = 0;
	bool bad = false;

	if (berth_strv_push(&av, &ac, "run") < 0 || berth_strv_push(&av, &ac, "--workspace") < 0 ||
	    berth_strv_push(&av, &ac, r->workspace != NULL ? r->workspace : BERTH_SPAWN_STANDIN_WORKSPACE) <
		0)
		goto out;
	for (size_t i = 0; i < r->profile.n_options; i++)
		if (berth_strv_push(&av, &ac, r->profile.options[i]) < 0)
			goto out;
	if (berth_strv_push(&av, &ac, "--") < 0 || berth_strv_push(&av, &ac, "true") < 0)
		goto out;
	if (berth_run_parse((int)ac, av, env_lookup, &trial, &te) < 0) {
		bad = true;
		berth_usage_err(err, "%s: options: %s",
				r->profile.path != NULL ? r->profile.path : r->profile.name, te.msg);
		if (te.hint[0] != '\0')
			berth_err_hint(err, "%s", te.hint);
	}
	berth_run_opts_free(&trial);
out:
	berth_strv_free(av);
	return bad;
}

/*
 * The `berth run` arguments of @r's session, in order (berth_spawn_run_argv
 * in spawn_args.h): with the agent's program @exe and its mount @mount_arg
 * (`SRC:DST` for --ro; NULL: none) and the credentials @creds forwarded by
 * name (NULL-terminated; NULL: none).  @user_network: the caller's --network
 * replaces the profile's network and allow_hosts (network_plan).
 */
static int build_argv(const struct berth_spawn_req *r, bool user_network, const char *exe,
		      const char *mount_arg, const char *const *creds, char ***avp, size_t *acp,
		      struct berth_error *err)
{
	char **av = NULL;
	size_t ac = 0;

#define PUSH(s)                                                                                              \
	do {                                                                                                 \
		if (berth_strv_push(&av, &ac, (s)) < 0)                                                      \
			goto oom;                                                                            \
	} while (0)
	PUSH("run");
	/* The session's own workspace does not exist yet. */
	PUSH("--workspace");
	PUSH(r->workspace != NULL ? r->workspace : BERTH_SPAWN_STANDIN_WORKSPACE);
	if (r->profile.network != NULL && !user_network) {
		PUSH("--network");
		PUSH(r->profile.network);
	}
	for (size_t i = 0; !user_network && i < r->profile.n_allow_hosts; i++) {
		PUSH("--allow-host");
		PUSH(r->profile.allow_hosts[i]);
	}
	if (mount_arg != NULL) {
		PUSH("--ro");
		PUSH(mount_arg);
	}
	for (size_t i = 0; i < r->profile.n_options; i++)
		PUSH(r->profile.options[i]);
	for (size_t i = 0; i < r->profile.n_env; i++) {
		PUSH("--env");
		PUSH(r->profile.env[i]);
	}
	if (r->profile.git_name != NULL || r->profile.git_email != NULL) {
		static const char *const who[] = {"AUTHOR", "COMMITTER"};
		for (int k = 0; k < 2; k++) {
			char buf[300];
			if (r->profile.git_name != NULL) {
				snprintf(buf, sizeof buf, "GIT_%s_NAME=%s", who[k], r->profile.git_name);
				PUSH("--env");
				PUSH(buf);
			}
			if (r->profile.git_email != NULL) {
				snprintf(buf, sizeof buf, "GIT_%s_EMAIL=%s", who[k], r->profile.git_email);
				PUSH("--env");
				PUSH(buf);
			}
		}
	}
	for (size_t i = 0; creds != NULL && creds[i] != NULL; i++) {
		PUSH("--env");
		PUSH(creds[i]);
	}
	for (size_t i = 0; i < r->n_run_args; i++)
		PUSH(r->run_args[i]);
	PUSH("--");
	for (size_t i = 0; i < r->profile.n_command; i++)
		PUSH(i == 0 && exe != NULL ? exe : r->profile.command[i]);
	for (size_t i = 0; i < r->n_extra; i++)
		PUSH(r->extra[i]);
	if (r->prompt != NULL && r->profile.prompt == BERTH_PROMPT_ARGV)
		PUSH(r->prompt);
#undef PUSH
	*avp = av;
	*acp = ac;
	return 0;
oom:
	berth_strv_free(av);
	return berth_err(err, ENOMEM, "out of memory");
}

int berth_spawn_run_argv(struct berth_spawn_req *r, char ***av, size_t *ac, struct berth_error *err)
{
	bool user_network = false, user_hosts = false;

	*av = NULL;
	*ac = 0;
	network_plan(r, &user_network, &user_hosts);
	return build_argv(r, user_network, NULL, NULL, NULL, av, ac, err);
}

int berth_spawn_prepare(struct berth_spawn_req *r, char *(*env_lookup)(const char *), struct berth_error *err)
{
	char **av = NULL;
	size_t ac = 0;
	bool user_network = false, user_hosts = false;
	cleanup_free char *exe = NULL, *mount_arg = NULL;
	const char **creds = NULL;
	char name[BERTH_SESSION_NAME_MAX + 1];
	int rc = -1;

	if (berth_profile_load(r->profile_name, &r->profile, err) < 0)
		return -1;
	if (r->name == NULL) {
		/* PROFILE[-REPO]-HHMMSS, then -2, -3, ... when a session of
		 * that name is running (two spawns within one second). */
		char base[BERTH_SESSION_NAME_MAX + 1];
		berth_session_name_derive(r->profile_name, r->repo, base);
		snprintf(name, sizeof name, "%s", base);
		for (unsigned k = 2; k < 100 && berth_session_alive(name); k++) {
			size_t room = sizeof name - 4;
			snprintf(name, sizeof name, "%.*s-%u",
				 (int)(strlen(base) < room ? strlen(base) : room), base, k);
		}
		if ((r->name = strdup(name)) == NULL)
			return berth_err(err, ENOMEM, "out of memory");
	}
	if (berth_session_name_check(r->name, err) < 0)
		return -1;
	if (berth_session_alive(r->name)) {
		berth_usage_err(err, "a session named `%s` is running", r->name);
		return berth_err_hint(err, "pick another --name, or `berth stop %s` first", r->name);
	}
	if (r->repo != NULL && check_repo(r, err) < 0)
		return -1;
	if (r->prompt != NULL && r->profile.prompt == BERTH_PROMPT_NONE)
		return berth_usage_err(err, "profile `%s` takes no --prompt", r->profile.name);
	if (r->prompt != NULL && (strchr(r->prompt, '\r') != NULL || strlen(r->prompt) > 65536))
		return berth_usage_err(err, "--prompt: at most 64 KiB, no carriage return");
	network_plan(r, &user_network, &user_hosts);
	r->managed_ws = r->workspace == NULL;
	if (r->profile.agent_path != NULL && agent_path(r, &exe, &mount_arg, err) < 0)
		return -1;

	if (r->seed_auth) {
		size_t forwarded = 0;
		creds = calloc(r->profile.n_credentials + 1, sizeof *creds);
		if (creds == NULL)
			goto oom;
		for (size_t i = 0; i < r->profile.n_credentials; i++) {
			const char *var = r->profile.credentials[i];
			if (env_lookup(var) == NULL)
				continue;
			risk_line(r, var);
			creds[forwarded++] = var;
		}
		if (r->profile.n_credentials == 0)
			note(r, "warning: --seed-auth: profile `%s` names no credentials", r->profile.name);
		else if (forwarded == 0)
			note(r, "warning: --seed-auth: none of the profile's credentials is set in this "
				"environment");
	}
	for (size_t i = 0; i + 1 < r->n_run_args; i++) {
		if (strcmp(r->run_args[i], "--env") == 0) {
			char var[256];
			snprintf(var, sizeof var, "%.*s", (int)strcspn(r->run_args[i + 1], "="),
				 r->run_args[i + 1]);
			if (berth_spawn_is_credential(&r->profile, var))
				risk_line(r, var);
		}
	}
	if (build_argv(r, user_network, exe, mount_arg, creds, &av, &ac, err) < 0)
		goto out;
	if (berth_run_parse((int)ac, av, env_lookup, &r->run, err) < 0) {
		berth_run_opts_free(&r->run);
		if (r->profile.n_options > 0 && profile_options_bad(r, env_lookup, err))
			goto out;
		/* the `none` is the profile's, not the caller's: say so */
		if (!user_network && !user_hosts && r->profile.network != NULL &&
		    strcmp(r->profile.network, "none") == 0 &&
		    in_list((const char *const *)r->run_args, "--dns")) {
			berth_usage_err(err,
					"spawn: --dns: profile `%s`'s network is `none` (no egress broker to "
					"resolve for)",
					r->profile.name);
			berth_err_hint(
			    err,
			    "give the session hosts with --allow-host HOST (the broker uses your --dns)");
		}
		goto out;
	}
	r->have_run = true;
	/* root's `--workspace /etc` is a widening, as for berth run (the
	 * session's own workspace, and its stand-in /usr, are not). */
	if (!r->managed_ws && berth_run_system_workspace(&r->run, err) < 0)
		goto out;
	if (r->run.dry_run || r->run.help || r->run.json) {
		berth_usage_err(err, "spawn: --dry-run, --json and --help are `berth run` options only");
		goto out;
	}
	/* Injected credentials are read by cmd_run only (docs/credentials.md): refused, not ignored. */
	if (r->run.policy.n_credentials > 0) {
		berth_usage_err(err, "spawn: --credential is a `berth run` option only, for now");
		berth_err_hint(err, "run the agent with `berth run --credential ...` (docs/credentials.md)");
		goto out;
	}
	/* A session copies no evidence (that is cmd_run's): refused, not ignored. */
	if (r->run.n_evidence > 0 || r->run.forensic) {
		berth_usage_err(err, "spawn: %s is a `berth run` option only: a session copies no evidence",
				r->run.forensic ? "--forensic" : "--evidence");
		berth_err_hint(err, "triage files with `berth run --evidence PATH -- COMMAND`");
		goto out;
	}
	for (size_t i = 0; i < r->run.policy.n_env; i++)
		if (r->run.policy.env[i].from_file &&
		    berth_spawn_is_credential(&r->profile, r->run.policy.env[i].name))
			risk_line(r, r->run.policy.env[i].name);
	if (settle_home(r, err) < 0)
		goto out;
	if (check_rules(r, creds, n_creds_forwarded(creds), err) < 0)
		goto out;
	if (user_hosts && !user_network && r->run.policy.network == BERTH_NET_PROXY)
		note(r,
		     "network: profile `%s`'s %s list and your --allow-host patterns: %zu hosts (`berth ps "
		     "--json "
		     "%s` lists them)",
		     r->profile.name,
		     r->profile.network != NULL && strcmp(r->profile.network, "api-only") == 0
			 ? "api-only"
			 : "allow_hosts",
		     r->run.policy.n_allow_hosts, r->name);
	if (prepare_seed(r, err) < 0)
		goto out;
	/* --runtime: an unknown one refused; a known one never falls back to
	 * another, and says here, before anything is made, what it cannot do
	 * (the supervisor's start checks again, with the real workspace) */
	if ((r->runtime = berth_runtime_find(r->run.runtime, err)) == NULL)
		goto out;
	if (r->runtime != berth_runtime_default() && r->run.policy.review) {
		berth_usage_err(err, "the %s runtime cannot give `--review` yet (docs/review.md)",
				r->runtime->name);
		berth_err_hint(err, "drop `--runtime %s`, or drop `--review`", r->runtime->name);
		goto out;
	}
	if (r->runtime != berth_runtime_default()) {
		struct berth_runtime_opts ro = {0};
		if (r->home_dir == NULL) {
			ro.home_files = r->seed.view;
			ro.n_home_files = r->seed.n;
		}
		if (r->runtime->check(&r->run.policy, &ro, err) < 0)
			goto out;
	}
	rc = 0;
	goto out;
oom:
	berth_err(err, ENOMEM, "out of memory");
out:
	free(creds);
	berth_strv_free(av);
	return rc;
}

/* The sandbox that clones --repo: workspace @parent (the session's state
 * directory: the workspace guard puts its placeholders at the top of the
 * workspace, which `git clone .` would find not empty), the GitHub hosts and
 * the caller's own --allow-host patterns through the broker, the session's
 * limits.  Everything goes through the broker, the sandbox's loopback
 * exception (NO_PROXY) included: direct connections fail anyway, and an
 * explicitly allowed loopback address is reached through it.  The URL is an
 * argument, never shell text.  Release with clone_policy_free(). */
static int clone_policy(const struct berth_spawn_req *r, const char *parent, struct berth_policy *p,
			struct berth_error *err)
{
	static const char *const argv[] = {
	    "sh",
	    "-c",
	    "NO_PROXY= no_proxy= exec git -c advice.detachedHead=false clone --quiet -- \"$1\" workspace",
	    "sh",
	    NULL,
	    NULL};
	static struct berth_env genv[] = {{.name = "GIT_TERMINAL_PROMPT", .value = "0"}};
	size_t nh = 0;

	for (size_t i = 0; i < r->n_run_args; i++)
		nh += strcmp(r->run_args[i], "--allow-host") == 0;

	berth_policy_init(p);
	/* physical: the sandbox opens it with no link followed (a symlinked
	 * home must not fail the clone) */
	p->workspace = realpath(parent, NULL);
	if (p->workspace == NULL && errno != ENOMEM)
		p->workspace = strdup(parent);
	p->network = BERTH_NET_PROXY;
	p->argv = calloc(BERTH_ARRAY_SIZE(argv), sizeof *p->argv);
	p->allow_hosts = calloc(nh + 4, sizeof *p->allow_hosts);
	if (p->workspace == NULL || p->argv == NULL || p->allow_hosts == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	memcpy(p->argv, argv, sizeof argv);
	p->argv[4] = r->repo;
	p->argc = BERTH_ARRAY_SIZE(argv) - 1;
	p->memory = r->run.policy.memory;
	p->millicpus = r->run.policy.millicpus;
	p->pids = r->run.policy.pids;
	p->memory_set = r->run.policy.memory_set;
	p->cpus_set = r->run.policy.cpus_set;
	p->pids_set = r->run.policy.pids_set;
	p->tmp_size = r->run.policy.tmp_size;
	p->allow_degraded = r->run.policy.allow_degraded;
	if (r->run.policy.dns != NULL && (p->dns = strdup(r->run.policy.dns)) == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	for (size_t i = 0; berth_clone_hosts[i] != NULL; i++)
		if ((p->allow_hosts[p->n_allow_hosts++] = strdup(berth_clone_hosts[i])) == NULL)
			return berth_err(err, ENOMEM, "out of memory");
	/* The caller's own --allow-host patterns (checked already by berth
	 * run's parser), in their canonical spelling; not the profile's: the
	 * agent's API hosts are no business of the clone. */
	for (size_t i = 0; i + 1 < r->n_run_args; i++) {
		struct berth_host_pattern pat;
		char reason[256], canon[300];
		if (strcmp(r->run_args[i], "--allow-host") != 0 ||
		    berth_host_pattern_parse(r->run_args[i + 1], &pat, reason, sizeof reason) < 0 ||
		    berth_host_pattern_format(&pat, canon, sizeof canon) < 0)
			continue;
		bool dup = false;
		for (size_t k = 0; k < p->n_allow_hosts; k++)
			dup |= strcmp(p->allow_hosts[k], canon) == 0;
		if (!dup && (p->allow_hosts[p->n_allow_hosts++] = strdup(canon)) == NULL)
			return berth_err(err, ENOMEM, "out of memory");
	}
	p->env = genv;
	p->n_env = BERTH_ARRAY_SIZE(genv);
	return 0;
}

static void clone_policy_free(struct berth_policy *p)
{
	free(p->argv); /* the strings are static or the request's */
	p->argv = NULL;
	p->argc = 0;
	p->env = NULL;
	p->n_env = 0;
	berth_policy_free(p);
}

/* git clone @r->repo into @parent/workspace, in a sandbox of its own. */
static int clone_repo(struct berth_spawn_req *r, const char *parent, struct berth_error *err)
{
	struct berth_policy p;
	struct berth_runtime_opts ro = {0};
	int status = 0, devnull, rc = -1;

	if (clone_policy(r, parent, &p, err) < 0)
		goto out;
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ro.quiet = true;
	ro.has_stdio = true;
	ro.stdio_fd[0] = devnull;
	ro.stdio_fd[1] = STDERR_FILENO;
	ro.stdio_fd[2] = STDERR_FILENO;
	if (berth_parse_force_off(getenv("BERTH_TEST_FORCE_OFF"), &ro.force_off, err) < 0) {
		/* checked already by the caller */
	} else if (berth_run_unrecorded(&p, &ro, &status, err) < 0) {
		berth_err_wrap(err, "cannot clone `%s`", r->repo);
	} else if (status != 0) {
		berth_err(err, 0, "git clone of `%s` failed (exit status %d); no session was started",
			  r->repo, status);
		berth_err_hint(err, "check the URL; the clone reaches only github.com, codeload.github.com, "
				    "objects.githubusercontent.com and the hosts you pass with --allow-host");
	} else {
		rc = 0;
	}
	if (devnull >= 0)
		close(devnull);
out:
	clone_policy_free(&p);
	return rc;
}

/*
 * Every rules file (system, user, project: src/policy/rules.h) must allow
 * the agent's policy, and the clone's when there is a --repo; checked before
 * anything is created.  The credentials --seed-auth forwards are named to
 * the check.  Returns 0, or -1 with @err (status 2: refused or a malformed
 * rules file; 125: unreadable).
 */
static int check_rules(struct berth_spawn_req *r, const char *const *creds, size_t n_creds,
		       struct berth_error *err)
{
	struct berth_rules *rules = NULL;
	struct berth_widening_ctx ctx = {
	    .network_mode = r->run.network_mode, .credentials = creds, .n_credentials = n_creds};
	struct berth_widening_ctx cctx = {.network_mode = "proxy"};
	struct berth_policy cp;
	int rc = -1;

	if (berth_rules_load_all(NULL, r->run.policy.workspace, &rules, err) < 0)
		return -1;
	if (berth_rules_check(rules, &r->run.policy, &ctx, err) < 0 ||
	    berth_rules_guard(rules, &r->run.policy, err) < 0)
		goto out;
	if (r->repo != NULL) {
		/* the stand-in for the state directory, as for the agent */
		if (clone_policy(r, BERTH_SPAWN_STANDIN_WORKSPACE, &cp, err) == 0 &&
		    berth_rules_check(rules, &cp, &cctx, err) == 0)
			rc = 0;
		else
			berth_err_wrap(err, "the clone of --repo");
		clone_policy_free(&cp);
		goto out;
	}
	rc = 0;
out:
	berth_rules_free(rules);
	return rc;
}

int berth_spawn_launch(struct berth_spawn_req *r, pid_t *pid, struct berth_error *err)
{
	struct berth_session_spec spec = {0};
	char st[PATH_MAX], ws[PATH_MAX + 16], rt[PATH_MAX];
	cleanup_close int lock = -1;
	bool made_ws = false, made_st = false;

	/* As cmd_run does, last before anything is made: the workspace and
	 * every --ro/--rw source still resolve to what prepare checked (the
	 * person's confirmation, or the fleet's earlier agents, came between;
	 * issue 13, class 4).  The sandbox then opens each once, with no link
	 * followed (src/sandbox/mounts.h). */
	berth_test_pause("BERTH_TEST_PAUSE_BEFORE_LAUNCH");
	if (berth_run_recheck(&r->run, err) < 0)
		return -1;
	lock = berth_session_claim(r->name, err);
	if (lock < 0)
		return -1;
	berth_crash_point("session.claimed");
	/* A state directory made here goes again if the start fails (a reused
	 * name's keeps its old log). */
	made_st = berth_session_state_dir(r->name, false, st, sizeof st, &(struct berth_error){0}) == 0 &&
		  access(st, F_OK) < 0 && errno == ENOENT;
	if (berth_session_state_dir(r->name, true, st, sizeof st, err) < 0)
		goto fail;
	berth_crash_point("session.state_dir");
	if (r->managed_ws) {
		snprintf(ws, sizeof ws, "%s/workspace", st);
		if (r->repo != NULL && access(ws, F_OK) == 0) {
			berth_usage_err(err, "session `%s` already has a workspace `%s`", r->name, ws);
			berth_err_hint(err, "`berth rm --purge %s`, or another --name", r->name);
			goto fail;
		}
		if (r->repo != NULL) {
			made_ws = true;
			if (clone_repo(r, st, err) < 0)
				goto fail;
		} else if (mkdir(ws, 0700) == 0) {
			made_ws = true;
		} else if (errno != EEXIST) {
			berth_err(err, errno, "cannot create `%s`", ws);
			goto fail;
		}
		berth_crash_point("session.workspace");
		free(r->run.policy.workspace);
		if ((r->run.policy.workspace = realpath(ws, NULL)) == NULL) {
			berth_err(err, errno, "cannot resolve `%s`", ws);
			goto fail;
		}
	}
	if (r->home_dir != NULL) {
		if (make_private_dirs(r->home_dir, err) < 0)
			goto fail;
		free(r->run.policy.home_dir);
		if ((r->run.policy.home_dir = realpath(r->home_dir, NULL)) == NULL) {
			berth_err(err, errno, "cannot resolve `%s`", r->home_dir);
			goto fail;
		}
	}
	/* Again with the real workspace and home (prepare saw a stand-in). */
	if (berth_audit_exposure_check(&r->run.policy, NULL, 0, NULL, err) < 0)
		goto fail;
	/* The seed: a persistent home here, on the host (what the agent keeps
	 * there stays); a fresh one by the sandbox, once its tmpfs is up. */
	if (r->home_dir != NULL) {
		if (berth_home_seed_persist(&r->seed, r->run.policy.home_dir, false, NULL, NULL, err) < 0)
			goto fail;
	} else {
		spec.ro.home_files = r->seed.view;
		spec.ro.n_home_files = r->seed.n;
	}
	spec.name = r->name;
	spec.profile = r->profile.name;
	spec.agent = r->profile.agent;
	spec.repo = r->repo;
	spec.type_text = r->profile.prompt == BERTH_PROMPT_TYPE ? r->prompt : NULL;
	spec.managed_workspace = r->managed_ws;
	spec.policy = &r->run.policy;
	spec.runtime = r->runtime;
	spec.rows = r->rows > 0 ? r->rows : 40;
	spec.cols = r->cols > 0 ? r->cols : 120;
	spec.lock_fd = lock;
	if (berth_parse_force_off(getenv("BERTH_TEST_FORCE_OFF"), &spec.ro.force_off, err) < 0)
		goto fail;
	if (berth_session_start(&spec, pid, r->launch_notice, sizeof r->launch_notice, err) < 0) {
		char udir[PATH_MAX];
		if (err->status == BERTH_EXIT_NOTFOUND && r->profile.agent_path == NULL &&
		    strchr(r->profile.command[0], '/') == NULL)
			berth_err_hint(
			    err,
			    "`%s` is not on the sandbox's PATH (/usr/local/bin:/usr/bin:/bin:...; the host's "
			    "home is not visible inside): install it there, or copy the profile to "
			    "%s/%s.yml and name the program with `path:` (docs/sessions.md, \"The agent's "
			    "path\")",
			    r->profile.command[0],
			    berth_profile_user_dir(udir, sizeof udir) == 0 ? udir
									   : "~/.config/berth/profiles",
			    r->profile.name);
		goto fail;
	}
	return 0;
fail:
	if (made_ws) {
		struct berth_error e2 = {0};
		berth_rm_rf(ws, &e2);
	}
	if (made_st) {
		/* what the supervisor made before it failed: its (empty) log */
		char p[PATH_MAX + 16];
		snprintf(p, sizeof p, "%s/output.log", st);
		unlink(p);
		rmdir(st);
	} else if (made_ws) {
		rmdir(st);
	}
	if (berth_session_runtime_dir(r->name, false, rt, sizeof rt, &(struct berth_error){0}) == 0) {
		struct berth_error e2 = {0};
		berth_rm_rf(rt, &e2);
	}
	return -1;
}

void berth_spawn_req_free(struct berth_spawn_req *r)
{
	free(r->profile_name);
	free(r->name);
	free(r->repo);
	free(r->workspace);
	free(r->prompt);
	free(r->home_dir);
	free(r->agent_src);
	berth_home_seed_free(&r->seed);
	berth_strv_free(r->run_args);
	berth_strv_free(r->extra);
	berth_profile_free(&r->profile);
	if (r->have_run)
		berth_run_opts_free(&r->run);
	for (size_t i = 0; i < r->n_notes; i++)
		free(r->notes[i]);
	memset(r, 0, sizeof *r);
}
