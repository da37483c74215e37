/* SPDX-License-Identifier: MIT */
/*
 * rules.c - rules files (rules.h; docs/rules.md).
 */
#include "rules.h"

#include <errno.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../policy/hostpat.h"
#include "../util/cleanup.h"
#include "../util/ynode.h"
#include "envfile.h"
#include "flags.h"
#include "trust.h"

#define MAX_RULES_FILE (256 * 1024)

enum { NET_NONE = 1, NET_PROXY = 2, NET_API_ONLY = 4, NET_HOST = 8 };

static const char *const net_names[] = {"none", "proxy", "api-only", "host"};

struct name_list {
	char **v; /* names; a trailing `*` is a prefix match */
	size_t n;
};

struct rules_file {
	char *origin;
	/* Each `line_*` is the key's line; 0 = the file does not name the key. */
	unsigned line_networks, line_hosts, line_rw, line_unprotect, line_env, line_credentials,
	    line_degraded, line_memory, line_cpus, line_pids;
	unsigned networks; /* NET_* bits */
	struct berth_host_pattern *hosts;
	size_t n_hosts;
	struct name_list rw;                    /* absolute physical prefixes */
	struct name_list unprotect;             /* canonical trust names, classes, git paths (trust.h) */
	struct name_list guard_ro, guard_named; /* guard.read-only, guard.named */
	struct name_list env, credentials;
	bool degraded;
	uint64_t memory;
	uint32_t millicpus, pids;
	char *memory_text, *cpus_text; /* as written, for messages */
};

struct berth_rules {
	struct rules_file *files;
	size_t n;
};

static void names_free(struct name_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static void file_free(struct rules_file *f)
{
	free(f->origin);
	free(f->hosts);
	names_free(&f->rw);
	names_free(&f->unprotect);
	names_free(&f->guard_ro);
	names_free(&f->guard_named);
	names_free(&f->env);
	names_free(&f->credentials);
	free(f->memory_text);
	free(f->cpus_text);
}

void berth_rules_free(struct berth_rules *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->n; i++)
		file_free(&r->files[i]);
	free(r->files);
	free(r);
}

struct berth_rules *berth_rules_new(struct berth_error *err)
{
	struct berth_rules *r = calloc(1, sizeof *r);

	if (r == NULL)
		berth_err(err, ENOMEM, "rules");
	return r;
}

size_t berth_rules_count(const struct berth_rules *r)
{
	return r->n;
}

const char *berth_rules_origin(const struct berth_rules *r, size_t i)
{
	return i < r->n ? r->files[i].origin : NULL;
}

/* ---- parsing ---- */

static int list_of(const struct berth_ynode *v, const char *o, const char *key, struct berth_error *err)
{
	if (v->kind != BERTH_YN_SEQ)
		return berth_ynode_err(err, o, v,
				       "`allow.%s` must be a list, got %s (write `%s: []` to allow none)",
				       key, berth_ynode_describe(v), key);
	return 0;
}

static int push_name(struct name_list *l, const char *s, const char *o, struct berth_error *err)
{
	char **v = realloc(l->v, (l->n + 1) * sizeof *v);

	if (v == NULL)
		return berth_err(err, ENOMEM, "%s", o);
	l->v = v;
	if ((l->v[l->n] = strdup(s)) == NULL)
		return berth_err(err, ENOMEM, "%s", o);
	l->n++;
	return 0;
}

/* One string @s of the list @key, at @node; @ctx is each_string()'s. */
typedef int item_fn(struct rules_file *f, const struct berth_ynode *node, const char *key, const char *s,
		    void *ctx, struct berth_error *err);

/* Each item of the list @v (`allow.KEY`, `guard.KEY`), a string, through
 * @item; the first failure stops. */
static int each_string(struct rules_file *f, const struct berth_ynode *v, const char *key, item_fn *item,
		       void *ctx, struct berth_error *err)
{
	if (list_of(v, f->origin, key, err) < 0)
		return -1;
	for (size_t i = 0; i < v->n; i++) {
		const char *s;
		if (berth_ynode_str(v->kids[i], f->origin, key, &s, err) < 0 ||
		    item(f, v->kids[i], key, s, ctx, err) < 0)
			return -1;
	}
	return 0;
}

/* NAME or PREFIX* with NAME of A-Z a-z 0-9 _ (not starting with a digit). */
static bool valid_env_pattern(const char *s)
{
	size_t n = strlen(s);

	if (n > 0 && s[n - 1] == '*')
		n--;
	if (n == 0 && s[0] == '*')
		return true; /* `*`: every name */
	return berth_env_name_valid(s, n);
}

/* `allow.env` and `allow.credentials` (@l, f->env or f->credentials). */
static int name_item(struct rules_file *f, const struct berth_ynode *node, const char *key, const char *s,
		     void *l, struct berth_error *err)
{
	bool credential = l == &f->credentials;

	/* Credentials may also be named items (`claude-auth`) of a profile. */
	if (!valid_env_pattern(s) &&
	    !(credential && s[0] != '\0' &&
	      strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") == strlen(s)))
		return berth_ynode_err(err, f->origin, node,
				       "`allow.%s`: `%.60s` is not a variable name (A-Z, a-z, 0-9, _) or a "
				       "prefix ending in `*`",
				       key, s);
	return push_name(l, s, f->origin, err);
}

static int network_item(struct rules_file *f, const struct berth_ynode *node, const char *key, const char *s,
			void *ctx, struct berth_error *err)
{
	(void)key;
	(void)ctx;
	for (size_t j = 0; j < BERTH_ARRAY_SIZE(net_names); j++)
		if (strcmp(s, net_names[j]) == 0) {
			f->networks |= 1u << j;
			return 0;
		}
	return berth_ynode_err(err, f->origin, node,
			       "`allow.networks`: unknown network `%.60s`; use none, proxy, api-only or host",
			       s);
}

static int host_item(struct rules_file *f, const struct berth_ynode *node, const char *key, const char *s,
		     void *ctx, struct berth_error *err)
{
	char reason[BERTH_HOST_REASON_MAX];

	(void)key;
	(void)ctx;
	if (berth_host_pattern_parse(s, &f->hosts[f->n_hosts], reason, sizeof reason) < 0)
		return berth_ynode_err(err, f->origin, node, "`allow.hosts`: %s", reason);
	f->n_hosts++;
	return 0;
}

static int parse_hosts(struct rules_file *f, const struct berth_ynode *v, struct berth_error *err)
{
	if (list_of(v, f->origin, "hosts", err) < 0)
		return -1;
	f->hosts = calloc(v->n + 1, sizeof *f->hosts);
	if (f->hosts == NULL)
		return berth_err(err, ENOMEM, "%s", f->origin);
	return each_string(f, v, "hosts", host_item, NULL, err);
}

/* Remove `.` and `..` components and repeated or trailing slashes from absolute @s. */
static void lexical_clean(char *s)
{
	char *out = s, *p = s;

	while (*p != '\0') {
		while (*p == '/')
			p++;
		char *e = p + strcspn(p, "/");
		size_t n = (size_t)(e - p);
		if (n == 0)
			break;
		if (n == 1 && p[0] == '.') {
			/* skip */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (out > s && *--out != '/')
				;
		} else {
			*out++ = '/';
			memmove(out, p, n);
			out += n;
		}
		p = e;
	}
	if (out == s)
		*out++ = '/';
	*out = '\0';
}

static int rw_item(struct rules_file *f, const struct berth_ynode *node, const char *key, const char *s,
		   void *ctx, struct berth_error *err)
{
	char buf[PATH_MAX], real[PATH_MAX];
	const char *home = berth_caller_home();

	(void)key;
	(void)ctx;
	if (s[0] == '~' && (s[1] == '/' || s[1] == '\0')) {
		if (home == NULL)
			return berth_ynode_err(
			    err, f->origin, node,
			    "`allow.rw`: `%.60s` starts with `~` but the caller has no home directory", s);
		snprintf(buf, sizeof buf, "%s%s", home, s + 1);
	} else if (s[0] == '/') {
		snprintf(buf, sizeof buf, "%s", s);
	} else {
		return berth_ynode_err(
		    err, f->origin, node,
		    "`allow.rw`: `%.60s` is not an absolute path; write it from `/` (or `~/`)", s);
	}
	lexical_clean(buf);
	/* Compare physical paths, as the policy holds them (realpath); a
	 * prefix that does not exist yet is kept as written. */
	if (realpath(buf, real) != NULL)
		snprintf(buf, sizeof buf, "%s", real);
	return push_name(&f->rw, buf, f->origin, err);
}

static int unprotect_item(struct rules_file *f, const struct berth_ynode *node, const char *key,
			  const char *s, void *ctx, struct berth_error *err)
{
	char buf[2];
	struct berth_error ignored = {0};
	const char *g = berth_trust_canonical(s, false, buf, sizeof buf, &ignored);

	(void)key;
	(void)ctx;
	if (g == NULL)
		return berth_ynode_err(
		    err, f->origin, node,
		    "`allow.unprotect`: `%.60s` is not a guarded name; guarded: a class "
		    "(agents, instructions, editors, shell, packages, vcs, home), a name such as .vscode, "
		    ".claude, .envrc, .npmrc (docs/security.md), or .git/hooks, .git/config, "
		    ".git/commondir, .git/config.worktree, .git/worktrees",
		    s);
	return push_name(&f->unprotect, g, f->origin, err);
}

/* An item of `guard.read-only` or `guard.named` (@l, the list it adds to). */
static int guard_item(struct rules_file *f, const struct berth_ynode *node, const char *key, const char *s,
		      void *l, struct berth_error *err)
{
	char buf[256];
	struct berth_error ignored = {0};
	const char *g = berth_trust_canonical(s, true, buf, sizeof buf, &ignored);
	/* `.git` is git's rules' (not a name); what berth sets aside
	 * is never set aside again; `[` must close (fnmatch(3)). */
	const char *lb = g != NULL ? strchr(g, '[') : NULL;

	if (g != NULL && (strcmp(g, ".git") == 0 || strstr(g, "berth-set-aside") != NULL ||
			  (lb != NULL && strchr(lb, ']') == NULL)))
		g = NULL;
	if (g == NULL || strncmp(g, ".git/", 5) == 0)
		return berth_ynode_err(
		    err, f->origin, node,
		    "`guard.%s`: `%.60s` is not a file name, a pattern such as "
		    "`*.code-workspace`, or a class (agents, instructions, editors, vcs, home, "
		    "shell, packages)",
		    key, s);
	return push_name(l, g, f->origin, err);
}

/* guard.read-only / guard.named: trust names, patterns or classes this file
 * adds (trust.h); each can only make the guard stricter. */
static int parse_guard(struct rules_file *f, const struct berth_ynode *m, struct berth_error *err)
{
	const char *o = f->origin;

	if (m->kind != BERTH_YN_MAP)
		return berth_ynode_err(err, o, m,
				       "`guard` must be a mapping with `read-only:` and/or `named:`, got %s",
				       berth_ynode_describe(m));
	for (size_t i = 0; i < berth_ymap_size(m); i++) {
		const struct berth_ynode *k = berth_ymap_key(m, i), *v = berth_ymap_val(m, i);
		const char *key = k->kind == BERTH_YN_SCALAR ? k->s : "";
		struct name_list *l;

		if (strcmp(key, "read-only") == 0)
			l = &f->guard_ro;
		else if (strcmp(key, "named") == 0)
			l = &f->guard_named;
		else
			return berth_ynode_err(err, o, k,
					       "unknown key `guard.%.60s`; known: read-only, named", key);
		if (l->n > 0)
			return berth_ynode_err(err, o, k, "`guard.%.60s` is given twice", key);
		if (each_string(f, v, key, guard_item, l, err) < 0)
			return -1;
	}
	return 0;
}

static int parse_limit(struct rules_file *f, const char *key, const struct berth_ynode *v,
		       struct berth_error *err)
{
	const char *s;
	uint64_t u;

	/* A maximum, so the ranges are the limits' own (policy.h), except that
	 * a cap of one task is no error (no run fits under it). */
	if (strcmp(key, "pids") == 0)
		return berth_ynode_uint(v, f->origin, "allow.pids", 1, BERTH_PIDS_MAX, &u, err) < 0
			   ? -1
			   : (f->pids = (uint32_t)u, 0);
	if (v->kind != BERTH_YN_SCALAR || berth_ynode_str(v, f->origin, key, &s, err) < 0)
		return berth_ynode_err(
		    err, f->origin, v, "`allow.%s` must be a %s, got %s", key,
		    strcmp(key, "memory") == 0 ? "size such as `4G`" : "CPU count such as `2`",
		    v->kind == BERTH_YN_SCALAR ? "nothing (null)" : berth_ynode_describe(v));
	if (strcmp(key, "memory") == 0) {
		if (berth_limit_parse(BERTH_LIMIT_MEMORY, "allow.memory", s, &f->memory, err) < 0) {
			berth_ynode_err(
			    err, f->origin, v,
			    "`allow.memory` must be a size such as `4G`, got `%.60s` (expected %s)", s,
			    berth_limit_defs[BERTH_LIMIT_MEMORY].range);
			return -1;
		}
		return (f->memory_text = strdup(s)) != NULL ? 0 : berth_err(err, ENOMEM, "%s", f->origin);
	}
	if (berth_parse_millicpus(s, &f->millicpus, err) < 0) {
		berth_ynode_err(
		    err, f->origin, v,
		    "`allow.cpus` must be a CPU count such as `2` or `0.5`, got `%.60s` (expected %s)", s,
		    berth_limit_defs[BERTH_LIMIT_CPUS].range);
		return -1;
	}
	return (f->cpus_text = strdup(s)) != NULL ? 0 : berth_err(err, ENOMEM, "%s", f->origin);
}

static int parse_allow(struct rules_file *f, const struct berth_ynode *m, struct berth_error *err)
{
	const char *o = f->origin;

	if (m->kind != BERTH_YN_MAP)
		return berth_ynode_err(err, o, m, "`allow` must be a mapping of limits, got %s",
				       berth_ynode_describe(m));
	for (size_t i = 0; i < berth_ymap_size(m); i++) {
		const struct berth_ynode *k = berth_ymap_key(m, i), *v = berth_ymap_val(m, i);
		const char *key = k->kind == BERTH_YN_SCALAR ? k->s : "";
		unsigned *line = NULL;
		int r;

		for (size_t j = 0; j < i; j++) {
			const struct berth_ynode *kj = berth_ymap_key(m, j);
			if (kj->kind == BERTH_YN_SCALAR && strcmp(kj->s, key) == 0)
				return berth_ynode_err(err, o, k, "`allow.%.60s` is given twice", key);
		}
		if (strcmp(key, "networks") == 0) {
			line = &f->line_networks;
			r = each_string(f, v, "networks", network_item, NULL, err);
		} else if (strcmp(key, "hosts") == 0) {
			line = &f->line_hosts;
			r = parse_hosts(f, v, err);
		} else if (strcmp(key, "rw") == 0) {
			line = &f->line_rw;
			r = each_string(f, v, "rw", rw_item, NULL, err);
		} else if (strcmp(key, "unprotect") == 0) {
			line = &f->line_unprotect;
			r = each_string(f, v, "unprotect", unprotect_item, NULL, err);
		} else if (strcmp(key, "env") == 0) {
			line = &f->line_env;
			r = each_string(f, v, "env", name_item, &f->env, err);
		} else if (strcmp(key, "credentials") == 0) {
			line = &f->line_credentials;
			r = each_string(f, v, "credentials", name_item, &f->credentials, err);
		} else if (strcmp(key, "degraded") == 0) {
			line = &f->line_degraded;
			r = berth_ynode_bool(v, o, "allow.degraded", &f->degraded, err);
		} else if (strcmp(key, "memory") == 0) {
			line = &f->line_memory;
			r = parse_limit(f, key, v, err);
		} else if (strcmp(key, "cpus") == 0) {
			line = &f->line_cpus;
			r = parse_limit(f, key, v, err);
		} else if (strcmp(key, "pids") == 0) {
			line = &f->line_pids;
			r = parse_limit(f, key, v, err);
		} else {
			return berth_ynode_err(
			    err, o, k,
			    "unknown key `allow.%.60s`; known: networks, hosts, rw, unprotect, env, "
			    "credentials, degraded, memory, cpus, pids",
			    key);
		}
		if (r < 0)
			return -1;
		*line = k->line;
	}
	return 0;
}

static int parse_file(struct rules_file *f, const char *text, size_t len, struct berth_error *err)
{
	struct berth_ynode *root = NULL;
	int r = 0;

	if (berth_ynode_parse(text, len, f->origin, &root, err) < 0)
		return -1;
	if (root == NULL)
		return 0; /* an empty file narrows nothing */
	if (root->kind != BERTH_YN_MAP) {
		r = berth_ynode_err(err, f->origin, root,
				    "a rules file is a mapping with the keys `allow:` and `guard:`");
	} else {
		for (size_t i = 0; i < berth_ymap_size(root) && r == 0; i++) {
			const struct berth_ynode *k = berth_ymap_key(root, i);
			const char *key = k->kind == BERTH_YN_SCALAR ? k->s : "";
			bool twice = false;
			for (size_t j = 0; j < i; j++) {
				const struct berth_ynode *kj = berth_ymap_key(root, j);
				twice = twice || (kj->kind == BERTH_YN_SCALAR && strcmp(kj->s, key) == 0);
			}
			if (twice)
				r = berth_ynode_err(err, f->origin, k, "`%.60s` is given twice", key);
			else if (strcmp(key, "allow") == 0)
				r = parse_allow(f, berth_ymap_val(root, i), err);
			else if (strcmp(key, "guard") == 0)
				r = parse_guard(f, berth_ymap_val(root, i), err);
			else
				r = berth_ynode_err(
				    err, f->origin, k,
				    "unknown key `%.60s`; a rules file has the keys `allow:` and `guard:`",
				    key);
		}
	}
	berth_ynode_free(root);
	return r;
}

int berth_rules_add(struct berth_rules *r, const char *text, size_t len, const char *origin,
		    struct berth_error *err)
{
	struct rules_file f = {0};
	struct rules_file *v;

	if ((f.origin = strdup(origin)) == NULL)
		return berth_err(err, ENOMEM, "%s", origin);
	if (parse_file(&f, text, len, err) < 0) {
		file_free(&f);
		return -1;
	}
	v = realloc(r->files, (r->n + 1) * sizeof *v);
	if (v == NULL) {
		file_free(&f);
		return berth_err(err, ENOMEM, "%s", origin);
	}
	r->files = v;
	r->files[r->n++] = f;
	return 0;
}

/*
 * Open a project's rules file without following a symbolic link anywhere on
 * @path (which is physical: getcwd(3), realpath(3)).  A sandbox may have made
 * `sub/.berth/rules.yml` a link to another file (/etc/shadow, ~/.netrc),
 * and berth, perhaps as root, would read that and quote its first line in
 * its parse error, to whoever reads berth's stderr.
 */
static int open_nofollow(const char *path)
{
	struct open_how how = {.flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);

	if (fd < 0 && (errno == ENOSYS || errno == EPERM)) /* before Linux 5.6, or a seccomp filter */
		fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	return fd;
}

/* Read and add @path; a missing file is skipped.  @shown names it in
 * messages.  @project: a `.berth/rules.yml` found by walking up, where a
 * sandbox may have written (no symbolic link is followed). */
static int add_path(struct berth_rules *r, const char *path, const char *shown, bool project,
		    struct berth_error *err)
{
	cleanup_free char *buf = NULL;
	cleanup_fclose FILE *f = NULL;
	struct stat st;
	size_t n = 0, got;
	/* O_NONBLOCK: a FIFO planted where a rules file belongs must not hang
	 * berth; it is refused below like anything but a regular file. */
	int fd = project ? open_nofollow(path) : open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		int e = errno;
		if (project && e == ELOOP &&
		    !(lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && stat(path, &st) < 0)) {
			berth_usage_err(err, "the rules file `%s` is, or is reached through, a symbolic link",
					path);
			return berth_err_hint(
			    err, "replace the link with the file itself: berth does not follow links "
				 "to a project's rules file (a sandbox could have made one to a "
				 "secret file)");
		}
		if ((e == ENOENT || e == ENOTDIR || e == ELOOP) && lstat(path, &st) == 0 &&
		    S_ISLNK(st.st_mode)) {
			berth_usage_err(err, "the rules file `%s` is a symbolic link to nothing", path);
			return berth_err_hint(err, "remove it, or make it a regular file: a rules file that "
						   "vanishes must not lift its limits in silence");
		}
		if (e == ENOENT || e == ENOTDIR)
			return 0;
		/* A directory on the way this caller may not search (a 0700
		 * parent of the current directory): no file can be seen there,
		 * as if none existed.  A file that is there but unreadable is
		 * an error. */
		if (e == EACCES && stat(path, &st) < 0 && errno == EACCES)
			return 0;
		return berth_err(err, e, "read the rules file `%s`", path);
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		bool dir = S_ISDIR(st.st_mode);
		close(fd);
		berth_usage_err(err, "the rules file `%s` is %s, not a regular file", path,
				dir ? "a directory" : "a special file");
		return berth_err_hint(err, "remove it, or make it a regular YAML file (docs/rules.md)");
	}
	f = fdopen(fd, "re");
	if (f == NULL) {
		close(fd);
		return berth_err(err, errno, "read the rules file `%s`", path);
	}
	buf = malloc(MAX_RULES_FILE + 1);
	if (buf == NULL)
		return berth_err(err, ENOMEM, "read the rules file `%s`", path);
	while ((got = fread(buf + n, 1, MAX_RULES_FILE + 1 - n, f)) > 0)
		n += got;
	if (ferror(f))
		return berth_err(err, EIO, "read the rules file `%s`", path);
	if (n > MAX_RULES_FILE)
		return berth_usage_err(err, "the rules file `%s` is larger than %d bytes", path,
				       MAX_RULES_FILE);
	return berth_rules_add(r, buf, n, shown, err);
}

/*
 * Every .berth/rules.yml from @start up to `/` (each can only narrow, so
 * reading them all is never wider than reading the nearest: a permissive file
 * a sandbox planted in a subdirectory of its workspace cannot lift the
 * project's limits).  @seen: paths already read, @nseen their count.
 */
static int walk_up(struct berth_rules *r, const char *start, const char *cwd, char (*seen)[PATH_MAX],
		   size_t *nseen, size_t max_seen, struct berth_error *err)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];

	snprintf(dir, sizeof dir, "%s", start);
	for (;;) {
		char *slash;
		bool dup = false;

		snprintf(path, sizeof path, "%s%s.berth/rules.yml", dir, strcmp(dir, "/") == 0 ? "" : "/");
		for (size_t i = 0; i < *nseen && !dup; i++)
			dup = strcmp(seen[i], path) == 0;
		if (!dup && *nseen < max_seen) {
			snprintf(seen[(*nseen)++], PATH_MAX, "%s", path);
			if (add_path(r, path, strcmp(dir, cwd) == 0 ? ".berth/rules.yml" : path, true, err) <
			    0)
				return -1;
		}
		if (strcmp(dir, "/") == 0)
			break;
		slash = strrchr(dir, '/');
		if (slash == NULL)
			break;
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	return 0;
}

int berth_rules_load_all(const char *cwd, const char *workspace, struct berth_rules **out,
			 struct berth_error *err)
{
	struct berth_rules *r = berth_rules_new(err);
	char path[PATH_MAX], dir[PATH_MAX];
	static char seen[128][PATH_MAX];
	size_t nseen = 0;
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME"),
		   *test = getenv("BERTH_TEST_SYSTEM_RULES");

	*out = NULL;
	if (r == NULL)
		return -1;
	if (add_path(r, BERTH_RULES_SYSTEM_PATH, BERTH_RULES_SYSTEM_PATH, false, err) < 0)
		goto fail;
	if (test != NULL && test[0] != '\0' && add_path(r, test, test, false, err) < 0)
		goto fail;
	if (xdg != NULL && xdg[0] == '/')
		snprintf(path, sizeof path, "%s/berth/rules.yml", xdg);
	else if (home != NULL && home[0] == '/')
		snprintf(path, sizeof path, "%s/.config/berth/rules.yml", home);
	else
		path[0] = '\0';
	if (path[0] != '\0' && add_path(r, path, path, false, err) < 0)
		goto fail;
	/* Every .berth/rules.yml from @cwd up to `/`, and from the workspace up. */
	if (cwd != NULL)
		snprintf(dir, sizeof dir, "%s", cwd);
	else if (getcwd(dir, sizeof dir) == NULL) {
		berth_err(err, errno, "find the current directory for .berth/rules.yml");
		goto fail;
	}
	if (walk_up(r, dir, dir, seen, &nseen, sizeof seen / sizeof seen[0], err) < 0)
		goto fail;
	if (workspace != NULL && workspace[0] == '/' &&
	    walk_up(r, workspace, dir, seen, &nseen, sizeof seen / sizeof seen[0], err) < 0)
		goto fail;
	*out = r;
	return 0;
fail:
	berth_rules_free(r);
	return -1;
}

/* ---- checking ---- */

/* "8G", "512M", "1536K" or bytes: the largest unit that divides @v. */
static const char *fmt_size(char *buf, size_t len, uint64_t v)
{
	static const char units[] = "TGMK";
	for (int i = 0; i < 4; i++) {
		uint64_t u = 1ULL << (10 * (4 - i));
		if (v >= u && v % u == 0) {
			snprintf(buf, len, "%llu%c", (unsigned long long)(v / u), units[i]);
			return buf;
		}
	}
	snprintf(buf, len, "%llu bytes", (unsigned long long)v);
	return buf;
}

static const char *fmt_cpus(char *buf, size_t len, uint32_t m)
{
	if (m % 1000 == 0)
		snprintf(buf, len, "%u", m / 1000);
	else
		snprintf(buf, len, "%u.%03u", m / 1000, m % 1000);
	return buf;
}

static bool name_allowed(const struct name_list *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++) {
		size_t n = strlen(l->v[i]);
		if (n > 0 && l->v[i][n - 1] == '*' ? strncmp(l->v[i], name, n - 1) == 0
						   : strcmp(l->v[i], name) == 0)
			return true;
	}
	return false;
}

static void join(char *buf, size_t len, const struct name_list *l)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < l->n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", l->v[i]);
	if (l->n == 0)
		snprintf(buf, len, "nothing");
}

/* Is @in equal to or below @dir (component-wise)? */
static bool under(const char *dir, const char *in)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return in[0] == '/';
	return strncmp(dir, in, n) == 0 && (in[n] == '\0' || in[n] == '/');
}

/* Does allowed pattern @a cover declared pattern @d (every host and port @d allows, @a allows)? */
static bool host_covers(const struct berth_host_pattern *a, const struct berth_host_pattern *d)
{
	size_t an = strlen(a->name), dn = strlen(d->name);
	bool host;

	switch (a->kind) {
	case BERTH_HOST_NAME:
		host = d->kind == BERTH_HOST_NAME && strcmp(a->name, d->name) == 0;
		break;
	case BERTH_HOST_SUFFIX:
		/* `*.x` covers `a.x`, `*.x` and `*.a.x`, never `x`. */
		host =
		    d->kind != BERTH_HOST_LITERAL &&
		    ((d->kind == BERTH_HOST_SUFFIX && strcmp(a->name, d->name) == 0) ||
		     (dn > an + 1 && d->name[dn - an - 1] == '.' && strcmp(d->name + dn - an, a->name) == 0));
		break;
	case BERTH_HOST_LITERAL:
		host = d->kind == BERTH_HOST_LITERAL && strcmp(a->name, d->name) == 0;
		break;
	default:
		host = false;
		break;
	}
	if (!host)
		return false;
	switch (a->ports) {
	case BERTH_PORTS_ANY:
		return true;
	case BERTH_PORTS_DEFAULT:
		return d->ports == BERTH_PORTS_DEFAULT ||
		       (d->ports == BERTH_PORTS_ONE && (d->port == 80 || d->port == 443));
	case BERTH_PORTS_ONE:
		return d->ports == BERTH_PORTS_ONE && d->port == a->port;
	default:
		return false;
	}
}

static const char *mode_of(const struct berth_policy *p, const struct berth_widening_ctx *ctx)
{
	if (ctx != NULL && ctx->network_mode != NULL)
		return ctx->network_mode;
	return berth_network_name(p->network);
}

__attribute__((format(printf, 4, 5))) static int deny(struct berth_error *err, const struct rules_file *f,
						      unsigned line, const char *fmt, ...)
{
	char msg[BERTH_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return berth_usage_err(err, "refused by rules (%s:%u): %s", f->origin, line, msg);
}

static int check_file(const struct rules_file *f, const struct berth_policy *p,
		      const struct berth_widening_ctx *ctx, struct berth_error *err)
{
	char list[512];

	if (f->line_networks) {
		const char *mode = mode_of(p, ctx);
		unsigned bit = 0;
		for (size_t j = 0; j < BERTH_ARRAY_SIZE(net_names); j++)
			if (strcmp(mode, net_names[j]) == 0)
				bit = 1u << j;
		if ((f->networks & bit) == 0) {
			size_t off = 0;
			list[0] = '\0';
			for (size_t j = 0; j < BERTH_ARRAY_SIZE(net_names); j++)
				if (f->networks & (1u << j))
					off += (size_t)snprintf(list + off, sizeof list - off, "%s%s",
								off ? ", " : "", net_names[j]);
			deny(err, f, f->line_networks, "networks does not allow %s", mode);
			return berth_err_hint(err, "this file allows the networks: %s",
					      off ? list : "none at all");
		}
	}
	if (f->line_hosts) {
		for (size_t i = 0; i < p->n_allow_hosts; i++) {
			struct berth_host_pattern d;
			bool ok = false;
			if (berth_host_pattern_parse(p->allow_hosts[i], &d, NULL, 0) < 0)
				return deny(err, f, f->line_hosts, "hosts cannot read the declared host `%s`",
					    p->allow_hosts[i]);
			for (size_t j = 0; j < f->n_hosts && !ok; j++)
				ok = host_covers(&f->hosts[j], &d);
			if (!ok) {
				size_t off = 0;
				list[0] = '\0';
				for (size_t j = 0; j < f->n_hosts && off < sizeof list; j++) {
					char t[BERTH_HOST_PATTERN_STRLEN];
					berth_host_pattern_format(&f->hosts[j], t, sizeof t);
					off += (size_t)snprintf(list + off, sizeof list - off, "%s%s",
								j ? ", " : "", t);
				}
				deny(err, f, f->line_hosts, "hosts does not allow `%s`", p->allow_hosts[i]);
				return berth_err_hint(err, "this file allows the hosts: %s",
						      f->n_hosts ? list : "none at all");
			}
		}
	}
	if (f->line_rw) {
		const char *what = NULL, *path = NULL;
		bool ok = true;
		if (p->workspace != NULL && !p->app) {
			ok = false;
			for (size_t j = 0; j < f->rw.n && !ok; j++)
				ok = under(f->rw.v[j], p->workspace);
			what = "the workspace";
			path = p->workspace;
		}
		for (size_t i = 0; i < p->n_mounts && ok; i++) {
			if (!p->mounts[i].rw)
				continue;
			ok = false;
			for (size_t j = 0; j < f->rw.n && !ok; j++)
				ok = under(f->rw.v[j], p->mounts[i].src);
			what = "--rw";
			path = p->mounts[i].src;
		}
		if (!ok) {
			join(list, sizeof list, &f->rw);
			deny(err, f, f->line_rw, "rw does not allow %s `%s`", what, path);
			return berth_err_hint(err, "this file allows writing under: %s", list);
		}
	}
	if (f->line_unprotect) {
		for (size_t i = 0; i < p->n_unprotect; i++) {
			if (!name_allowed(&f->unprotect, p->unprotect[i])) {
				join(list, sizeof list, &f->unprotect);
				deny(err, f, f->line_unprotect, "unprotect does not allow `%s`",
				     p->unprotect[i]);
				return berth_err_hint(err, "this file allows unprotecting: %s", list);
			}
		}
	}
	if (f->line_env) {
		for (size_t i = 0; i < p->n_env; i++) {
			if (!name_allowed(&f->env, p->env[i].name)) {
				join(list, sizeof list, &f->env);
				deny(err, f, f->line_env, "env does not allow `%s`", p->env[i].name);
				return berth_err_hint(err, "this file allows the variables: %s", list);
			}
		}
	}
	if (f->line_credentials) {
		const char *bad = NULL;
		for (size_t i = 0; i < p->n_env && bad == NULL; i++)
			if (p->env[i].from_host && !name_allowed(&f->credentials, p->env[i].name))
				bad = p->env[i].name;
		for (size_t i = 0; ctx != NULL && i < ctx->n_credentials && bad == NULL; i++)
			if (!name_allowed(&f->credentials, ctx->credentials[i]))
				bad = ctx->credentials[i];
		if (bad != NULL) {
			join(list, sizeof list, &f->credentials);
			deny(err, f, f->line_credentials, "credentials does not allow forwarding `%s`", bad);
			return berth_err_hint(
			    err,
			    "this file allows forwarding: %s (`--env NAME=VALUE` sets a value "
			    "without forwarding the host's)",
			    list);
		}
	}
	if (f->line_degraded && p->allow_degraded && !f->degraded)
		return deny(err, f, f->line_degraded, "degraded is false: --allow-degraded is refused");
	if (f->line_memory && p->memory > f->memory) {
		char b[64];
		deny(err, f, f->line_memory, "memory is at most %s, and this run has %s%s", f->memory_text,
		     fmt_size(b, sizeof b, p->memory), p->memory_set ? "" : " (the default)");
		return berth_err_hint(err, "pass `--memory %s` or less", f->memory_text);
	}
	if (f->line_cpus && p->millicpus > f->millicpus) {
		char b[32];
		deny(err, f, f->line_cpus, "cpus is at most %s, and this run has %s%s", f->cpus_text,
		     fmt_cpus(b, sizeof b, p->millicpus), p->cpus_set ? "" : " (the default)");
		return berth_err_hint(err, "pass `--cpus %s` or less", f->cpus_text);
	}
	if (f->line_pids && p->pids > f->pids) {
		deny(err, f, f->line_pids, "pids is at most %u, and this run has %u%s", f->pids, p->pids,
		     p->pids_set ? "" : " (the default)");
		return berth_err_hint(err, "pass `--pids %u` or less", f->pids);
	}
	return 0;
}

static int append_names(char ***v, size_t *n, const struct name_list *l, struct berth_error *err)
{
	for (size_t i = 0; i < l->n; i++) {
		bool have = false;
		for (size_t j = 0; j < *n; j++)
			have = have || strcmp((*v)[j], l->v[i]) == 0;
		if (have)
			continue;
		char **nv = realloc(*v, (*n + 1) * sizeof *nv);
		if (nv == NULL)
			return berth_err(err, ENOMEM, "out of memory");
		*v = nv;
		if ((nv[*n] = strdup(l->v[i])) == NULL)
			return berth_err(err, ENOMEM, "out of memory");
		(*n)++;
	}
	return 0;
}

int berth_rules_guard(const struct berth_rules *r, struct berth_policy *p, struct berth_error *err)
{
	for (size_t i = 0; r != NULL && i < r->n; i++)
		if (append_names(&p->guard_ro, &p->n_guard_ro, &r->files[i].guard_ro, err) < 0 ||
		    append_names(&p->guard_named, &p->n_guard_named, &r->files[i].guard_named, err) < 0)
			return -1;
	return 0;
}

int berth_rules_check(const struct berth_rules *r, const struct berth_policy *p,
		      const struct berth_widening_ctx *ctx, struct berth_error *err)
{
	/* Rules judge only a policy a runtime can run. */
	if (berth_policy_validate(p, err) < 0)
		return -1;
	for (size_t i = 0; r != NULL && i < r->n; i++)
		if (check_file(&r->files[i], p, ctx, err) < 0)
			return -1;
	return 0;
}
