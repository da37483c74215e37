/* SPDX-License-Identifier: MIT */
/*
 * profile.c - agent profiles: YAML (util/ynode.h, through yconf.h) into struct berth_profile.
 */
#include "profile.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "../policy/envfile.h"
#include "../util/cleanup.h"
#include "../util/buf.h"
#include "yconf.h"

static const char keys[] = "description, agent, command, prompt, network, allow_hosts, options, env, "
			   "credentials, persist_home, git, home, instructions, path";

bool berth_profile_home_path_ok(const char *s, char *why, size_t n)
{
	size_t len = strlen(s);

	if (len == 0 || len > BERTH_PROFILE_HOME_PATH_MAX) {
		snprintf(why, n, "a path of 1 to %d bytes", BERTH_PROFILE_HOME_PATH_MAX);
		return false;
	}
	if (s[0] == '/' || s[0] == '~') {
		snprintf(why, n, "a path relative to $HOME, such as `.config/tool/settings.json`");
		return false;
	}
	for (size_t i = 0; i < len; i++)
		if (s[i] < 0x21 || s[i] > 0x7e || s[i] == '\\') {
			snprintf(why, n, "printable ASCII without spaces or `\\`");
			return false;
		}
	for (const char *c = s;;) {
		size_t cl = strcspn(c, "/");
		if (cl == 0 || (cl == 1 && c[0] == '.') || (cl == 2 && c[0] == '.' && c[1] == '.')) {
			snprintf(why, n, "no empty, `.` or `..` component");
			return false;
		}
		if (c[cl] == '\0')
			break;
		c += cl + 1;
	}
	return true;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* `home: {PATH: CONTENT, ...}` */
static int parse_home(const char *display, const struct berth_ynode *v, struct berth_profile *p,
		      struct berth_error *err)
{
	size_t n = 0;

	if (v->kind != BERTH_YN_MAP)
		return berth_yconf_err(err, display, v, "home",
				       "expected a mapping of PATH (relative to $HOME) to "
				       "the file's content");
	n = berth_ymap_size(v);
	if (n > BERTH_PROFILE_HOME_FILES)
		return berth_yconf_err(err, display, v, "home", "at most %d files", BERTH_PROFILE_HOME_FILES);
	p->home = calloc(n + 1, sizeof *p->home);
	if (p->home == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	for (size_t pair = 0; pair < n; pair++) {
		const struct berth_ynode *k = berth_ymap_key(v, pair), *val = berth_ymap_val(v, pair);
		const char *ks = berth_yconf_str(k), *vs = berth_yconf_str(val);
		char why[128];

		if (ks == NULL || !berth_profile_home_path_ok(ks, why, sizeof why))
			return berth_yconf_err(err, display, k, "home", "`%s` is not a home file: %s",
					       ks ? ks : "?", ks ? why : "expected a string");
		for (size_t i = 0; i < p->n_home; i++)
			if (strcmp(p->home[i].path, ks) == 0)
				return berth_yconf_err(err, display, k, "home", "`%s` given twice", ks);
		if (vs == NULL || val->len > BERTH_PROFILE_HOME_FILE_MAX ||
		    memchr(vs, '\0', val->len) != NULL)
			return berth_yconf_err(err, display, val, ks,
					       "expected the file's text, at most %d bytes",
					       BERTH_PROFILE_HOME_FILE_MAX);
		if (ends_with(ks, ".json")) {
			json_error_t je;
			json_t *j = json_loadb(vs, val->len, JSON_REJECT_DUPLICATES, &je);
			bool obj = json_is_object(j);
			json_decref(j);
			if (!obj)
				return berth_yconf_err(err, display, val, ks,
						       "a .json file must hold one JSON object%s%s",
						       j == NULL ? ": " : "", j == NULL ? je.text : "");
		}
		struct berth_profile_file *f = &p->home[p->n_home++];
		f->path = strdup(ks);
		f->data = malloc(val->len + 1);
		if (f->path == NULL || f->data == NULL)
			return berth_err(err, ENOMEM, "out of memory");
		memcpy(f->data, vs, val->len);
		f->data[val->len] = '\0';
		f->len = val->len;
	}
	return 0;
}

static int dup_str(char **dst, const char *s, struct berth_error *err)
{
	free(*dst);
	*dst = strdup(s);
	return *dst != NULL ? 0 : berth_err(err, ENOMEM, "out of memory");
}

static int parse_git(const char *display, const struct berth_ynode *v, struct berth_profile *p,
		     struct berth_error *err)
{
	if (v->kind != BERTH_YN_MAP)
		return berth_yconf_err(err, display, v, "git", "expected a mapping with `name` and `email`");
	for (size_t j = 0; j < berth_ymap_size(v); j++) {
		const struct berth_ynode *k = berth_ymap_key(v, j), *val = berth_ymap_val(v, j);
		const char *ks = berth_yconf_str(k), *vs = berth_yconf_str(val);
		if (ks == NULL || (strcmp(ks, "name") != 0 && strcmp(ks, "email") != 0))
			return berth_yconf_err(err, display, k, "git",
					       "unknown key `%s` (known: name, email)", ks ? ks : "?");
		if (vs == NULL || vs[0] == '\0' || strpbrk(vs, "\n\r") != NULL || strlen(vs) > 200)
			return berth_yconf_err(err, display, val, ks,
					       "expected a one-line string of at most 200 bytes");
		if (dup_str(strcmp(ks, "name") == 0 ? &p->git_name : &p->git_email, vs, err) < 0)
			return -1;
	}
	return 0;
}

static int parse_pair(const char *display, const struct berth_ynode *k, const struct berth_ynode *v,
		      struct berth_profile *p, bool *seen_command, struct berth_error *err)
{
	const char *key = berth_yconf_str(k), *s = berth_yconf_str(v);

	if (key == NULL)
		return berth_yconf_err(err, display, k, NULL, "keys must be strings");
	if (strcmp(key, "description") == 0 || strcmp(key, "agent") == 0) {
		if (s == NULL || strchr(s, '\n') != NULL)
			return berth_yconf_err(err, display, v, key, "expected a one-line string");
		if (strcmp(key, "agent") == 0 &&
		    (s[0] == '\0' || strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-_") != strlen(s)))
			return berth_yconf_err(err, display, v, key,
					       "`%s` is not a pattern-set name (a-z, 0-9, -, _)", s);
		return dup_str(strcmp(key, "agent") == 0 ? &p->agent : &p->description, s, err);
	}
	if (strcmp(key, "command") == 0) {
		*seen_command = true;
		if (berth_yconf_strv(display, key, v, &p->command, &p->n_command, err) < 0)
			return -1;
		if (p->n_command == 0)
			return berth_yconf_err(err, display, v, key, "expected at least the program to run");
		return 0;
	}
	if (strcmp(key, "prompt") == 0) {
		if (s != NULL && strcmp(s, "argv") == 0)
			p->prompt = BERTH_PROMPT_ARGV;
		else if (s != NULL && strcmp(s, "type") == 0)
			p->prompt = BERTH_PROMPT_TYPE;
		else if (s != NULL && strcmp(s, "none") == 0)
			p->prompt = BERTH_PROMPT_NONE;
		else
			return berth_yconf_err(err, display, v, key, "expected `argv`, `type` or `none`");
		return 0;
	}
	if (strcmp(key, "network") == 0) {
		if (s == NULL || (strcmp(s, "none") != 0 && strcmp(s, "proxy") != 0 &&
				  strcmp(s, "api-only") != 0 && strcmp(s, "host") != 0))
			return berth_yconf_err(err, display, v, key,
					       "expected `none`, `proxy`, `api-only` or `host`");
		return dup_str(&p->network, s, err);
	}
	if (strcmp(key, "allow_hosts") == 0)
		return berth_yconf_strv(display, key, v, &p->allow_hosts, &p->n_allow_hosts, err);
	if (strcmp(key, "options") == 0)
		return berth_yconf_strv(display, key, v, &p->options, &p->n_options, err);
	if (strcmp(key, "env") == 0 || strcmp(key, "credentials") == 0) {
		bool cred = key[0] == 'c';
		char ***vec = cred ? &p->credentials : &p->env;
		size_t *n = cred ? &p->n_credentials : &p->n_env;
		if (berth_yconf_strv(display, key, v, vec, n, err) < 0)
			return -1;
		for (size_t i = 0; i < *n; i++) {
			const char *e = (*vec)[i];
			size_t nl = cred ? strlen(e) : strcspn(e, "=");
			if (!berth_env_name_valid(e, nl))
				return berth_yconf_err(err, display, v, key, "`%s` is not a variable name%s",
						       e, cred ? "" : " (NAME or NAME=VALUE)");
		}
		return 0;
	}
	if (strcmp(key, "persist_home") == 0) {
		if (berth_yconf_bool(v, &p->persist_home) < 0)
			return berth_yconf_err(err, display, v, key, "expected true or false");
		return 0;
	}
	if (strcmp(key, "git") == 0)
		return parse_git(display, v, p, err);
	if (strcmp(key, "home") == 0)
		return parse_home(display, v, p, err);
	if (strcmp(key, "instructions") == 0) {
		char why[128];
		if (s == NULL || !berth_profile_home_path_ok(s, why, sizeof why))
			return berth_yconf_err(err, display, v, key, "`%s` is not a home file: %s",
					       s ? s : "?", s ? why : "expected a string");
		return dup_str(&p->instructions, s, err);
	}
	if (strcmp(key, "path") == 0) {
		if (s == NULL || (s[0] != '/' && strncmp(s, "~/", 2) != 0) || strlen(s) > 1024 ||
		    strpbrk(s, ":\n") != NULL)
			return berth_yconf_err(err, display, v, key,
					       "expected the agent's program on this machine: "
					       "`~/PATH` (your home) or `/PATH`, without `:`");
		return dup_str(&p->agent_path, s, err);
	}
	return berth_yconf_err(err, display, k, NULL, "unknown key `%s` (known: %s)", key, keys);
}

int berth_profile_parse(const char *name, const char *display, const char *buf, size_t len,
			struct berth_profile *p, struct berth_error *err)
{
	struct berth_ynode *root;
	bool seen_command = false;
	int r = 0;

	memset(p, 0, sizeof *p);
	if (berth_yconf_load(display, buf, len, &root, err) < 0)
		return -1;
	if (dup_str(&p->name, name, err) < 0 || dup_str(&p->path, display, err) < 0)
		r = -1;
	for (size_t i = 0; r == 0 && i < berth_ymap_size(root); i++) {
		const struct berth_ynode *k = berth_ymap_key(root, i), *v = berth_ymap_val(root, i);
		for (size_t q = 0; q < i; q++) {
			const char *a = berth_yconf_str(berth_ymap_key(root, q)), *b = berth_yconf_str(k);
			if (a != NULL && b != NULL && strcmp(a, b) == 0)
				r = berth_yconf_err(err, display, k, NULL, "duplicate key `%s`", b);
		}
		if (r == 0)
			r = parse_pair(display, k, v, p, &seen_command, err);
	}
	if (r == 0 && !seen_command)
		r = berth_yconf_err(err, display, root, NULL,
				    "`command` is missing (the agent's command line)");
	if (r == 0 && p->agent == NULL)
		r = dup_str(&p->agent, name, err);
	berth_ynode_free(root);
	if (r < 0)
		berth_profile_free(p);
	return r;
}

void berth_profile_free(struct berth_profile *p)
{
	free(p->name);
	free(p->path);
	free(p->description);
	free(p->agent);
	free(p->network);
	free(p->git_name);
	free(p->git_email);
	free(p->instructions);
	free(p->agent_path);
	for (size_t i = 0; p->home != NULL && i < p->n_home; i++) {
		free(p->home[i].path);
		free(p->home[i].data);
	}
	free(p->home);
	berth_strv_free(p->command);
	berth_strv_free(p->allow_hosts);
	berth_strv_free(p->options);
	berth_strv_free(p->env);
	berth_strv_free(p->credentials);
	memset(p, 0, sizeof *p);
}

int berth_profile_user_dir(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");

	if (xdg != NULL && xdg[0] == '/')
		return snprintf(buf, len, "%s/berth/profiles", xdg) < (int)len ? 0 : -1;
	if (home != NULL && home[0] == '/')
		return snprintf(buf, len, "%s/.config/berth/profiles", home) < (int)len ? 0 : -1;
	return -1;
}

int berth_profile_load(const char *name, struct berth_profile *p, struct berth_error *err)
{
	char user[PATH_MAX], exe[PATH_MAX], cand[3][PATH_MAX + 64];
	int nc = 0;
	ssize_t n;

	memset(p, 0, sizeof *p);
	if (name[0] == '\0' || strlen(name) > 64 ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-_") != strlen(name)) {
		berth_usage_err(err, "invalid profile name `%s`", name);
		return berth_err_hint(
		    err, "profile names are a-z, 0-9, `-` and `_` (built in: claude, codex, shell)");
	}
	if (berth_profile_user_dir(user, sizeof user) == 0)
		snprintf(cand[nc++], sizeof cand[0], "%s/%s.yml", user, name);
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		*strrchr(exe, '/') = '\0';
		snprintf(cand[nc++], sizeof cand[0], "%s/../data/profiles/%s.yml", exe, name);
		snprintf(cand[nc++], sizeof cand[0], "%s/../share/berth/profiles/%s.yml", exe, name);
	}
	for (int i = 0; i < nc; i++) {
		size_t len = 0;
		if (access(cand[i], F_OK) < 0)
			continue;
		cleanup_free char *buf = berth_yconf_read_file(cand[i], &len, err);
		if (buf == NULL)
			return -1;
		return berth_profile_parse(name, cand[i], buf, len, p, err);
	}
	if (n > 0 &&
	    (strcmp(name, "claude") == 0 || strcmp(name, "codex") == 0 || strcmp(name, "shell") == 0)) {
		/* a built-in name: the data files are missing, not the profile */
		berth_usage_err(
		    err,
		    "no profile `%s`: berth's built-in profiles are not installed beside this binary "
		    "(no `%s` nor `%s`)",
		    name, cand[nc - 2], cand[nc - 1]);
		return berth_err_hint(err,
				      "run the berth of a build tree or an installation (data/profiles or "
				      "share/berth/profiles next to its bin directory), or write %s/%s.yml",
				      nc > 2 ? user : "~/.config/berth/profiles", name);
	}
	berth_usage_err(err, "no profile `%s`", name);
	return berth_err_hint(err, "built in: claude, codex, shell; or write %s/%s.yml",
			      nc > 0 ? user : "~/.config/berth/profiles", name);
}
