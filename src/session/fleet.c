/* SPDX-License-Identifier: MIT */
/*
 * fleet.c - fleet files into spawn requests.
 */
#include "fleet.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../policy/flags.h"
#include "../policy/hostpath.h"
#include "../util/cleanup.h"
#include "session.h"
#include "../util/buf.h"
#include "yconf.h"

struct entry {
	const char *profile, *repo, *workspace, *prompt, *name;
	const struct berth_ynode *options, *args;
	int seed_auth; /* -1 unset */
};

static int read_entry(const char *display, const struct berth_ynode *m, bool is_default, struct entry *e,
		      struct berth_error *err)
{
	static const char agent_keys[] = "name, profile, repo, workspace, prompt, options, args, seed_auth";
	static const char default_keys[] = "profile, prompt, options, args, seed_auth";

	if (m->kind != BERTH_YN_MAP)
		return berth_yconf_err(err, display, m, is_default ? "defaults" : "agents",
				       "expected a mapping (%s)", is_default ? default_keys : agent_keys);
	for (size_t i = 0; i < berth_ymap_size(m); i++) {
		const struct berth_ynode *k = berth_ymap_key(m, i), *v = berth_ymap_val(m, i);
		const char *key = berth_yconf_str(k), *s = berth_yconf_str(v);
		const char **slot = NULL;

		if (key == NULL)
			return berth_yconf_err(err, display, k, NULL, "keys must be strings");
		for (size_t q = 0; q < i; q++) {
			const char *o = berth_yconf_str(berth_ymap_key(m, q));
			if (o != NULL && strcmp(o, key) == 0)
				return berth_yconf_err(err, display, k, NULL, "duplicate key `%s`", key);
		}
		if (strcmp(key, "profile") == 0)
			slot = &e->profile;
		else if (strcmp(key, "prompt") == 0)
			slot = &e->prompt;
		else if (!is_default && strcmp(key, "name") == 0)
			slot = &e->name;
		else if (!is_default && strcmp(key, "repo") == 0)
			slot = &e->repo;
		else if (!is_default && strcmp(key, "workspace") == 0)
			slot = &e->workspace;
		if (slot != NULL) {
			if (s == NULL || s[0] == '\0')
				return berth_yconf_err(err, display, v, key, "expected a non-empty string");
			*slot = s;
		} else if (strcmp(key, "options") == 0 || strcmp(key, "args") == 0) {
			if (v->kind != BERTH_YN_SEQ)
				return berth_yconf_err(err, display, v, key, "expected a list of strings");
			*(key[0] == 'o' ? &e->options : &e->args) = v;
		} else if (strcmp(key, "seed_auth") == 0) {
			bool b;
			if (berth_yconf_bool(v, &b) < 0)
				return berth_yconf_err(err, display, v, key, "expected true or false");
			e->seed_auth = b;
		} else {
			return berth_yconf_err(err, display, k, NULL, "unknown key `%s` (known: %s)", key,
					       is_default ? default_keys : agent_keys);
		}
	}
	return 0;
}

static int dup_opt(char **dst, const char *s, struct berth_error *err)
{
	if (s == NULL)
		return 0;
	*dst = strdup(s);
	return *dst != NULL ? 0 : berth_err(err, ENOMEM, "out of memory");
}

static int add_list(const char *display, const char *key, const struct berth_ynode *seq,
		    struct berth_spawn_req *r, bool extra, struct berth_error *err)
{
	char **v = NULL;
	size_t n = 0;

	if (seq == NULL)
		return 0;
	if (berth_yconf_strv(display, key, seq, &v, &n, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int r2;
		if (extra) {
			char **nv = realloc(r->extra, (r->n_extra + 2) * sizeof *nv);
			r2 = nv == NULL ? -1 : 0;
			if (nv != NULL) {
				r->extra = nv;
				nv[r->n_extra] = strdup(v[i]);
				r2 = nv[r->n_extra] == NULL ? -1 : 0;
				if (r2 == 0)
					nv[++r->n_extra] = NULL;
			}
			if (r2 < 0)
				berth_err(err, ENOMEM, "out of memory");
		} else {
			r2 = berth_spawn_add_run_arg(r, v[i], err);
		}
		if (r2 < 0) {
			berth_strv_free(v);
			return -1;
		}
	}
	berth_strv_free(v);
	return 0;
}

int berth_fleet_parse(const char *display, const char *base_dir, const char *buf, size_t len,
		      struct berth_fleet *f, struct berth_error *err)
{
	struct berth_ynode *root;
	const struct berth_ynode *agents = NULL, *defaults_node = NULL;
	struct entry def = {.seed_auth = -1};
	int rc = -1;

	memset(f, 0, sizeof *f);
	if ((f->path = strdup(display)) == NULL || (f->dir = strdup(base_dir)) == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	if (berth_yconf_load(display, buf, len, &root, err) < 0)
		return -1;
	for (size_t i = 0; i < berth_ymap_size(root); i++) {
		const struct berth_ynode *k = berth_ymap_key(root, i), *v = berth_ymap_val(root, i);
		const char *key = berth_yconf_str(k);
		if (key != NULL && strcmp(key, "agents") == 0 && agents == NULL)
			agents = v;
		else if (key != NULL && strcmp(key, "defaults") == 0 && defaults_node == NULL)
			defaults_node = v;
		else {
			berth_yconf_err(err, display, k, NULL, "%s `%s` (known: defaults, agents)",
					key != NULL &&
						(strcmp(key, "agents") == 0 || strcmp(key, "defaults") == 0)
					    ? "duplicate key"
					    : "unknown key",
					key ? key : "?");
			goto out;
		}
	}
	if (defaults_node != NULL && read_entry(display, defaults_node, true, &def, err) < 0)
		goto out;
	if (agents == NULL || agents->kind != BERTH_YN_SEQ || agents->n == 0) {
		berth_yconf_err(err, display, agents ? agents : root, "agents",
				"expected a list of at least one agent");
		goto out;
	}
	size_t count = agents->n;
	if (count > BERTH_FLEET_MAX_AGENTS) {
		berth_yconf_err(err, display, agents, "agents", "at most %d agents", BERTH_FLEET_MAX_AGENTS);
		goto out;
	}
	f->agents = calloc(count, sizeof *f->agents);
	f->lines = calloc(count, sizeof *f->lines);
	if (f->agents == NULL || f->lines == NULL) {
		berth_err(err, ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < count; i++) {
		const struct berth_ynode *an = agents->kids[i];
		struct entry e = {.seed_auth = -1};
		struct berth_spawn_req *r = &f->agents[f->n++];
		struct berth_error e2 = {0};
		char ws[PATH_MAX];

		f->lines[i] = an->line;
		if (read_entry(display, an, false, &e, err) < 0)
			goto out;
		if (e.name == NULL) {
			berth_yconf_err(err, display, an, "name",
					"every agent needs a `name` (fleet ps and stop find it by it)");
			goto out;
		}
		if (berth_session_name_check(e.name, &e2) < 0) {
			berth_yconf_err(err, display, an, "name", "%s", e2.msg);
			goto out;
		}
		for (size_t k = 0; k + 1 < f->n; k++)
			if (strcmp(f->agents[k].name, e.name) == 0) {
				berth_yconf_err(err, display, an, "name",
						"`%s` is the name of another agent (line %lu)", e.name,
						f->lines[k]);
				goto out;
			}
		if (e.profile == NULL && def.profile == NULL) {
			berth_yconf_err(err, display, an, "profile", "no profile here nor in `defaults`");
			goto out;
		}
		if (e.repo != NULL && e.workspace != NULL) {
			berth_yconf_err(err, display, an, "repo", "give `repo` or `workspace`, not both");
			goto out;
		}
		if (e.workspace != NULL && e.workspace[0] != '/')
			snprintf(ws, sizeof ws, "%s/%s", base_dir, e.workspace);
		else
			snprintf(ws, sizeof ws, "%s", e.workspace ? e.workspace : "");
		if (dup_opt(&r->profile_name, e.profile ? e.profile : def.profile, err) < 0 ||
		    dup_opt(&r->name, e.name, err) < 0 || dup_opt(&r->repo, e.repo, err) < 0 ||
		    dup_opt(&r->workspace, e.workspace ? ws : NULL, err) < 0 ||
		    dup_opt(&r->prompt, e.prompt ? e.prompt : def.prompt, err) < 0 ||
		    add_list(display, "options", def.options, r, false, err) < 0 ||
		    add_list(display, "options", e.options, r, false, err) < 0 ||
		    add_list(display, "args", e.args ? e.args : def.args, r, true, err) < 0)
			goto out;
		r->seed_auth = e.seed_auth >= 0 ? e.seed_auth == 1 : def.seed_auth == 1;
	}
	rc = 0;
out:
	berth_ynode_free(root);
	return rc;
}

int berth_fleet_load(const char *path, struct berth_fleet *f, struct berth_error *err)
{
	size_t len = 0;
	char dir[PATH_MAX], lex[PATH_MAX], *slash;
	cleanup_free char *buf = NULL;

	memset(f, 0, sizeof *f);
	/* A fleet file is often in a repository a sandbox has written to: a
	 * symbolic link there (fleet.yml -> ~/.ssh/id_ed25519, or another
	 * fleet) made berth read, and quote in its messages, a file the
	 * caller did not name.  Like a project rules file, it must be the
	 * file named, not reached through a link at any component. */
	if (realpath(path, dir) != NULL && berth_path_lexical_abs(path, lex) && strcmp(lex, dir) != 0) {
		berth_usage_err(err,
				"the fleet file `%s` is, or is reached through, a symbolic link (to `%s`)",
				path, dir);
		return berth_err_hint(err,
				      "a sandbox may have made that link: if `%s` is what you mean, name it "
				      "directly",
				      dir);
	}
	buf = berth_yconf_read_file(path, &len, err);
	if (buf == NULL)
		return -1;
	if (realpath(path, dir) == NULL)
		return berth_err(err, errno, "cannot resolve `%s`", path);
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	return berth_fleet_parse(path, dir, buf, len, f, err);
}

void berth_fleet_free(struct berth_fleet *f)
{
	for (size_t i = 0; i < f->n; i++)
		berth_spawn_req_free(&f->agents[i]);
	free(f->agents);
	free(f->lines);
	free(f->path);
	free(f->dir);
	memset(f, 0, sizeof *f);
}

static int ask(char ***v, size_t *n, struct berth_error *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int ask(char ***v, size_t *n, struct berth_error *err, const char *fmt, ...)
{
	va_list ap;
	char *line = NULL, **nv;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (r < 0 || (nv = realloc(*v, (*n + 1) * sizeof *nv)) == NULL) {
		if (r >= 0)
			free(line);
		return berth_err(err, ENOMEM, "out of memory");
	}
	nv[(*n)++] = line;
	*v = nv;
	return 0;
}

/* Is @a equal to @b or one of its ancestors (both absolute, physical)? */
static bool covers(const char *a, const char *b)
{
	size_t n = strlen(a);

	if (strcmp(a, "/") == 0)
		return true;
	return strncmp(a, b, n) == 0 && (b[n] == '\0' || b[n] == '/');
}

void berth_fleet_asks_free(char **lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
}

int berth_fleet_asks(const struct berth_fleet *f, size_t i, char *(*env_lookup)(const char *), char ***lines,
		     struct berth_error *err)
{
	const struct berth_spawn_req *r = &f->agents[i];
	struct berth_run_opts o;
	char **av = NULL, **v = NULL, dir[PATH_MAX];
	size_t n = 0;
	int rc = -1;

	*lines = NULL;
	if (r->seed_auth &&
	    ask(&v, &n, err, "seed_auth: forwards the profile's credentials from your environment") < 0)
		goto out;
	/* The file's options alone, parsed as berth run parses them (abbreviations
	 * and --opt=value included), on a stand-in workspace and command. */
	av = calloc(r->n_run_args + 6, sizeof *av);
	if (av == NULL) {
		berth_err(err, ENOMEM, "out of memory");
		goto out;
	}
	size_t ac = 0;
	av[ac++] = "run";
	av[ac++] = "--workspace";
	av[ac++] = BERTH_SPAWN_STANDIN_WORKSPACE;
	for (size_t k = 0; k < r->n_run_args; k++)
		av[ac++] = r->run_args[k];
	av[ac++] = "--";
	av[ac++] = "true";
	memset(&o, 0, sizeof o);
	if (berth_run_parse((int)ac, av, env_lookup, &o, err) < 0) {
		berth_run_opts_free(&o);
		goto out;
	}
	for (size_t k = 0; k < o.policy.n_env; k++) {
		const struct berth_env *e = &o.policy.env[k];
		if ((e->from_host && ask(&v, &n, err, "options: --env %s forwards `%s` from your environment",
					 e->name, e->name) < 0) ||
		    (e->from_file &&
		     ask(&v, &n, err, "options: --env-file sets `%s` from a file of yours", e->name) < 0))
			goto out_opts;
	}
	for (size_t k = 0; k < o.policy.n_mounts; k++)
		if (ask(&v, &n, err, "options: --%s mounts your `%s` at `%s`%s",
			o.policy.mounts[k].rw ? "rw" : "ro", o.policy.mounts[k].src, o.policy.mounts[k].dst,
			o.policy.mounts[k].rw ? ", writable" : "") < 0)
			goto out_opts;
	for (size_t k = 0; k < o.n_evidence; k++)
		if (ask(&v, &n, err, "options: --evidence copies your `%s` into the sandbox", o.evidence[k]) <
		    0)
			goto out_opts;
	/* The workspace the agent gets (the session's own when managed: launch
	 * puts it in place of any other). */
	if (!r->managed_ws && r->have_run && r->run.policy.workspace != NULL) {
		if (realpath(f->dir != NULL ? f->dir : "/", dir) == NULL)
			snprintf(dir, sizeof dir, "%s", f->dir != NULL ? f->dir : "/");
		if (!covers(dir, r->run.policy.workspace) &&
		    ask(&v, &n, err,
			"workspace: `%s` is outside the fleet file's directory `%s` (the agent may write "
			"there)",
			r->run.policy.workspace, dir) < 0)
			goto out_opts;
	}
	rc = (int)n;
	*lines = v;
	v = NULL;
	n = 0;
out_opts:
	berth_run_opts_free(&o);
out:
	free(av);
	berth_fleet_asks_free(v, n);
	return rc;
}
