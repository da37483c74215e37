/* SPDX-License-Identifier: MIT */
/*
 * bundle.c - an OCI bundle's config.json (runtime-spec config.md) into a
 * berth policy: the top level, process, root, hostname and hooks.  Mounts
 * are bundle_mounts.c's, linux.* is bundle_linux.c's, linux.seccomp
 * bundle_seccomp.c's, the annotations bundle_annotations.c's (and
 * berth.dev/profile bundle_profile.c's).
 *
 * The rule everywhere: a key berth does not know, or a value it cannot
 * honour, is refused with the JSON path named; only what cannot change
 * what the container may do is accepted without being applied, and then
 * said in the log (struct berth_oci_bundle.notes).  berth's posture stays
 * on top of the bundle: no capabilities, NO_NEW_PRIVS, Landlock, berth's
 * own seccomp filter before the bundle's.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "oci_int.h"

/* ---------------------------------------------------------- helpers */

int berth_oci_unsupported(struct berth_error *err, const char *path, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	berth_usage_err(err, "config.json: `%s` is not supported by berth oci: %s", path, why);
	return berth_err_hint(err, "%s", BERTH_OCI_HINT_UNSUPPORTED);
}

int berth_oci_bad(struct berth_error *err, const char *path, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return berth_usage_err(err, "config.json: `%s` %s", path, what);
}

int berth_oci_keys(const json_t *obj, const char *path, const char *const *known, struct berth_error *err)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)obj, key, v) {
		bool ok = false;
		for (size_t i = 0; known[i] != NULL && !ok; i++)
			ok = strcmp(key, known[i]) == 0;
		if (!ok) {
			char full[512];
			snprintf(full, sizeof full, "%s%s%.200s", path, path[0] ? "." : "", key);
			return berth_oci_unsupported(
			    err, full, "berth does not know what it would change, so it refuses it");
		}
	}
	return 0;
}

int berth_oci_want_object(const json_t *v, const char *path, struct berth_error *err)
{
	if (v != NULL && !json_is_object(v))
		return berth_oci_bad(err, path, "must be an object");
	return 0;
}

int berth_oci_want_array(const json_t *v, const char *path, struct berth_error *err)
{
	if (v != NULL && !json_is_array(v))
		return berth_oci_bad(err, path, "must be an array");
	return 0;
}

int berth_oci_string(const json_t *v, const char *path, bool required, const char **out,
		     struct berth_error *err)
{
	*out = NULL;
	if (v == NULL) {
		if (required)
			return berth_oci_bad(err, path, "is missing");
		return 0;
	}
	if (!json_is_string(v))
		return berth_oci_bad(err, path, "must be a string");
	if (strlen(json_string_value(v)) != json_string_length(v))
		return berth_oci_bad(err, path, "must not hold a NUL character");
	*out = json_string_value(v);
	return 0;
}

int berth_oci_bool(const json_t *v, const char *path, bool *out, struct berth_error *err)
{
	*out = false;
	if (v == NULL)
		return 0;
	if (!json_is_boolean(v))
		return berth_oci_bad(err, path, "must be true or false");
	*out = json_is_true(v);
	return 0;
}

int berth_oci_int(const json_t *v, const char *path, bool required, long long min, long long max,
		  long long *out, bool *set, struct berth_error *err)
{
	*out = 0;
	if (set != NULL)
		*set = false;
	if (v == NULL) {
		if (required)
			return berth_oci_bad(err, path, "is missing");
		return 0;
	}
	if (!json_is_integer(v))
		return berth_oci_bad(err, path, "must be an integer");
	if (json_integer_value(v) < min || json_integer_value(v) > max)
		return berth_oci_bad(err, path, "must be %lld to %lld, not %lld", min, max,
				     (long long)json_integer_value(v));
	*out = json_integer_value(v);
	if (set != NULL)
		*set = true;
	return 0;
}

char *berth_oci_strdup(const char *s, struct berth_error *err)
{
	char *d = strdup(s);

	if (d == NULL)
		berth_err(err, ENOMEM, "out of memory");
	return d;
}

int berth_oci_note(struct berth_oci_bundle *b, struct berth_error *err, const char *fmt, ...)
{
	char line[1024];
	char **v;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	v = realloc(b->notes, (b->n_notes + 1) * sizeof *v);
	if (v == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	b->notes = v;
	if ((v[b->n_notes] = berth_oci_strdup(line, err)) == NULL)
		return -1;
	b->n_notes++;
	return 0;
}

int berth_oci_container_path(const char *s, const char *path, char **out, struct berth_error *err)
{
	char *d, *w;

	*out = NULL;
	if (s[0] != '/')
		return berth_oci_bad(err, path, "must be an absolute path, not `%.200s`", s);
	if (strlen(s) >= PATH_MAX)
		return berth_oci_bad(err, path, "is longer than %d bytes", PATH_MAX - 1);
	if ((d = berth_oci_strdup(s, err)) == NULL)
		return -1;
	w = d;
	for (const char *p = s; *p != '\0';) {
		const char *end;
		size_t len;
		while (*p == '/')
			p++;
		end = strchrnul(p, '/');
		len = (size_t)(end - p);
		if (len == 0)
			break;
		if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.')) {
			free(d);
			return berth_oci_bad(err, path, "must not have `.` or `..` components: `%.200s`", s);
		}
		*w++ = '/';
		memmove(w, p, len);
		w += len;
		p = end;
	}
	if (w == d)
		*w++ = '/';
	*w = '\0';
	*out = d;
	return 0;
}

void berth_oci_bundle_free(struct berth_oci_bundle *b)
{
	berth_policy_free(&b->policy);
	free(b->dir);
	free(b->audit_dir);
	free(b->cgroups_path);
	free(b->config);
	json_decref(b->annotations);
	for (size_t i = 0; i < b->n_notes; i++)
		free(b->notes[i]);
	free(b->notes);
	b->dir = b->audit_dir = b->cgroups_path = b->config = NULL;
	b->config_len = 0;
	b->annotations = NULL;
	b->notes = NULL;
	b->n_notes = 0;
}

/* ---------------------------------------------------------- ociVersion */

/* 1.0.x and 1.1.x, with an optional pre-release (`1.0.2-dev`). */
static int check_version(const json_t *cfg, struct berth_error *err)
{
	const char *v;
	size_t i = 4;

	if (berth_oci_string(json_object_get(cfg, "ociVersion"), "ociVersion", true, &v, err) < 0)
		return -1;
	if (strncmp(v, "1.0.", 4) == 0 || strncmp(v, "1.1.", 4) == 0) {
		while (isdigit((unsigned char)v[i]))
			i++;
		if (i > 4 && (v[i] == '\0' || v[i] == '-' || v[i] == '+'))
			return 0;
	}
	berth_usage_err(err, "config.json: `ociVersion` `%.64s` is not one berth oci reads (1.0.x, 1.1.x)",
			v);
	return berth_err_hint(err, "write the bundle for runtime-spec 1.0 or 1.1");
}

/* ---------------------------------------------------------- process */

static const struct {
	const char *name;
	int resource;
} rlimit_names[] = {
    {"RLIMIT_AS", RLIMIT_AS},
    {"RLIMIT_CORE", RLIMIT_CORE},
    {"RLIMIT_CPU", RLIMIT_CPU},
    {"RLIMIT_DATA", RLIMIT_DATA},
    {"RLIMIT_FSIZE", RLIMIT_FSIZE},
    {"RLIMIT_LOCKS", RLIMIT_LOCKS},
    {"RLIMIT_MEMLOCK", RLIMIT_MEMLOCK},
    {"RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE},
    {"RLIMIT_NICE", RLIMIT_NICE},
    {"RLIMIT_NOFILE", RLIMIT_NOFILE},
    {"RLIMIT_NPROC", RLIMIT_NPROC},
    {"RLIMIT_RSS", RLIMIT_RSS},
    {"RLIMIT_RTPRIO", RLIMIT_RTPRIO},
    {"RLIMIT_RTTIME", RLIMIT_RTTIME},
    {"RLIMIT_SIGPENDING", RLIMIT_SIGPENDING},
    {"RLIMIT_STACK", RLIMIT_STACK},
};

const char *berth_oci_rlimit_name(int resource)
{
	for (size_t k = 0; k < BERTH_ARRAY_SIZE(rlimit_names); k++)
		if (rlimit_names[k].resource == resource)
			return rlimit_names[k].name;
	return "RLIMIT_?";
}

/* A value the kernel reads as "no limit" past 2^63 cannot be written in
 * config.json as jansson reads it; within it, anything is a limit. */
static int rlimit_value(const json_t *v, const char *path, uint64_t *out, struct berth_error *err)
{
	long long n;

	if (berth_oci_int(v, path, true, 0, LLONG_MAX, &n, NULL, err) < 0)
		return -1;
	*out = (uint64_t)n;
	return 0;
}

static int convert_rlimits(const json_t *rl, struct berth_oci_bundle *b, struct berth_error *err)
{
	static const char *const keys[] = {"type", "soft", "hard", NULL};
	struct berth_container *c = b->policy.container;
	size_t i;
	json_t *e;

	if (berth_oci_want_array(rl, "process.rlimits", err) < 0)
		return -1;
	json_array_foreach((json_t *)rl, i, e) {
		char path[64], sub[96];
		const char *type;
		struct berth_rlimit r = {0};
		bool found = false;

		snprintf(path, sizeof path, "process.rlimits[%zu]", i);
		if (berth_oci_want_object(e, path, err) < 0 || e == NULL ||
		    berth_oci_keys(e, path, keys, err) < 0)
			return -1;
		snprintf(sub, sizeof sub, "%s.type", path);
		if (berth_oci_string(json_object_get(e, "type"), sub, true, &type, err) < 0)
			return -1;
		for (size_t k = 0; k < BERTH_ARRAY_SIZE(rlimit_names) && !found; k++)
			if (strcmp(type, rlimit_names[k].name) == 0) {
				r.resource = rlimit_names[k].resource;
				found = true;
			}
		if (!found)
			return berth_oci_bad(err, sub,
					     "`%.64s` is not an rlimit berth knows (RLIMIT_NOFILE...)", type);
		for (size_t k = 0; k < c->n_rlimits; k++)
			if (c->rlimits[k].resource == r.resource)
				return berth_oci_bad(err, sub, "`%s` is given twice", type);
		snprintf(sub, sizeof sub, "%s.soft", path);
		if (rlimit_value(json_object_get(e, "soft"), sub, &r.soft, err) < 0)
			return -1;
		snprintf(sub, sizeof sub, "%s.hard", path);
		if (rlimit_value(json_object_get(e, "hard"), sub, &r.hard, err) < 0)
			return -1;
		if (r.soft > r.hard)
			return berth_oci_bad(err, path, "has soft %llu above hard %llu",
					     (unsigned long long)r.soft, (unsigned long long)r.hard);
		if (c->n_rlimits >= BERTH_CONTAINER_RLIMITS_MAX)
			return berth_oci_bad(err, "process.rlimits", "has more than %d entries",
					     BERTH_CONTAINER_RLIMITS_MAX);
		c->rlimits[c->n_rlimits++] = r;
		if (r.resource == RLIMIT_NOFILE) {
			/* berth's own limit too (the runtime's default for the
			 * sandbox), within its range and below berth's hard limit,
			 * which a user namespace cannot raise: the container's own
			 * value, above, is what its command gets. */
			struct rlimit cur;
			uint64_t n = r.soft;
			if (n < BERTH_NOFILE_MIN)
				n = BERTH_NOFILE_MIN;
			if (n > BERTH_NOFILE_MAX)
				n = BERTH_NOFILE_MAX;
			if (getrlimit(RLIMIT_NOFILE, &cur) == 0 && cur.rlim_max != RLIM_INFINITY &&
			    n > cur.rlim_max && cur.rlim_max >= BERTH_NOFILE_MIN)
				n = cur.rlim_max;
			b->policy.nofile = (uint32_t)n;
		}
	}
	return 0;
}

static int convert_user(const json_t *u, struct berth_container *c, struct berth_error *err)
{
	static const char *const keys[] = {"uid", "gid", "umask", "additionalGids", NULL};
	const json_t *gids;
	long long n;
	bool set;
	size_t i;
	json_t *g;

	if (u == NULL)
		return 0; /* uid 0, gid 0 */
	if (berth_oci_want_object(u, "process.user", err) < 0 ||
	    berth_oci_keys(u, "process.user", keys, err) < 0)
		return -1;
	if (berth_oci_int(json_object_get(u, "uid"), "process.user.uid", true, 0, UINT32_MAX - 1, &n, NULL,
			  err) < 0)
		return -1;
	c->uid = (uint32_t)n;
	if (berth_oci_int(json_object_get(u, "gid"), "process.user.gid", true, 0, UINT32_MAX - 1, &n, NULL,
			  err) < 0)
		return -1;
	c->gid = (uint32_t)n;
	if (berth_oci_int(json_object_get(u, "umask"), "process.user.umask", false, 0, 0777, &n, &set, err) <
	    0)
		return -1;
	c->has_umask = set;
	c->umask = (uint32_t)n;
	gids = json_object_get(u, "additionalGids");
	if (berth_oci_want_array(gids, "process.user.additionalGids", err) < 0)
		return -1;
	json_array_foreach((json_t *)gids, i, g) {
		char path[64];
		snprintf(path, sizeof path, "process.user.additionalGids[%zu]", i);
		if (berth_oci_int(g, path, true, 0, UINT32_MAX - 1, &n, NULL, err) < 0)
			return -1;
		if ((uint32_t)n != c->gid)
			return berth_oci_unsupported(
			    err, path,
			    "supplementary group %lld: the sandbox maps one group, the process's gid %u", n,
			    (unsigned)c->gid);
	}
	return 0;
}

static int convert_env(const json_t *env, struct berth_policy *p, struct berth_error *err)
{
	size_t i, n = json_array_size(env);
	json_t *e;

	if (berth_oci_want_array(env, "process.env", err) < 0)
		return -1;
	if (n == 0)
		return 0;
	if ((p->env = calloc(n, sizeof *p->env)) == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	json_array_foreach((json_t *)env, i, e) {
		char path[64];
		const char *s, *eq;
		struct berth_env *v = &p->env[p->n_env];

		snprintf(path, sizeof path, "process.env[%zu]", i);
		if (berth_oci_string(e, path, true, &s, err) < 0)
			return -1;
		eq = strchr(s, '=');
		if (eq == NULL || eq == s)
			return berth_oci_bad(err, path, "must be NAME=VALUE (the name is `%.64s`)", s);
		if ((v->name = strndup(s, (size_t)(eq - s))) == NULL ||
		    (v->value = berth_oci_strdup(eq + 1, err)) == NULL) {
			free(v->name);
			v->name = NULL;
			return berth_err(err, ENOMEM, "out of memory");
		}
		p->n_env++;
	}
	return 0;
}

static int convert_args(const json_t *args, struct berth_policy *p, struct berth_error *err)
{
	size_t i, n;
	json_t *a;

	if (args == NULL)
		return berth_oci_bad(err, "process.args", "is missing: the container needs a command");
	if (berth_oci_want_array(args, "process.args", err) < 0)
		return -1;
	n = json_array_size(args);
	if (n == 0)
		return berth_oci_bad(err, "process.args", "is empty: the container needs a command");
	if ((p->argv = calloc(n + 1, sizeof *p->argv)) == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	json_array_foreach((json_t *)args, i, a) {
		char path[64];
		const char *s;
		snprintf(path, sizeof path, "process.args[%zu]", i);
		if (berth_oci_string(a, path, true, &s, err) < 0)
			return -1;
		if (i == 0 && s[0] == '\0')
			return berth_oci_bad(err, path, "is empty: it names the command");
		if ((p->argv[i] = berth_oci_strdup(s, err)) == NULL)
			return -1;
		p->argc++;
	}
	return 0;
}

/* process.capabilities: none is granted (berth's posture); said once. */
static int note_capabilities(const json_t *caps, struct berth_oci_bundle *b, struct berth_error *err)
{
	static const char *const keys[] = {"bounding",  "effective", "inheritable",
					   "permitted", "ambient",   NULL};
	json_auto_t *seen = json_object();
	char names[600] = "";
	size_t used = 0;
	const char *key;
	json_t *set;

	if (caps == NULL)
		return 0;
	if (seen == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	if (berth_oci_want_object(caps, "process.capabilities", err) < 0 ||
	    berth_oci_keys(caps, "process.capabilities", keys, err) < 0)
		return -1;
	json_object_foreach((json_t *)caps, key, set) {
		char path[64];
		size_t i;
		json_t *c;
		snprintf(path, sizeof path, "process.capabilities.%s", key);
		if (berth_oci_want_array(set, path, err) < 0)
			return -1;
		json_array_foreach(set, i, c) {
			const char *s;
			char sub[96];
			snprintf(sub, sizeof sub, "%s[%zu]", path, i);
			if (berth_oci_string(c, sub, true, &s, err) < 0)
				return -1;
			if (json_object_get(seen, s) != NULL)
				continue;
			json_object_set_new(seen, s, json_true());
			if (used < sizeof names)
				used += (size_t)snprintf(names + used, sizeof names - used, "%s%.64s",
							 json_object_size(seen) > 1 ? ", " : "", s);
		}
	}
	if (json_object_size(seen) == 0)
		return 0;
	return berth_oci_note(
	    b, err,
	    "process.capabilities: %zu capabilities were not granted (%s): berth runs containers "
	    "with none",
	    json_object_size(seen), names);
}

static int convert_process(const json_t *proc, struct berth_oci_bundle *b, struct berth_error *err)
{
	static const char *const keys[] = {"terminal",
					   "consoleSize",
					   "user",
					   "args",
					   "env",
					   "cwd",
					   "capabilities",
					   "rlimits",
					   "noNewPrivileges",
					   "oomScoreAdj",
					   "apparmorProfile",
					   "selinuxLabel",
					   NULL};
	struct berth_container *c = b->policy.container;
	const char *cwd, *s;
	bool nnp, set;
	long long n;

	if (proc == NULL)
		return berth_oci_bad(err, "process", "is missing: `create` needs the container's process");
	if (berth_oci_want_object(proc, "process", err) < 0 || berth_oci_keys(proc, "process", keys, err) < 0)
		return -1;
	if (berth_oci_bool(json_object_get(proc, "terminal"), "process.terminal", &b->terminal, err) < 0)
		return -1;
	{
		static const char *const ckeys[] = {"height", "width", NULL};
		const json_t *cs = json_object_get(proc, "consoleSize");
		if (berth_oci_want_object(cs, "process.consoleSize", err) < 0 ||
		    (cs != NULL && berth_oci_keys(cs, "process.consoleSize", ckeys, err) < 0))
			return -1;
		if (cs != NULL) {
			if (berth_oci_int(json_object_get(cs, "height"), "process.consoleSize.height", false,
					  0, 65535, &n, NULL, err) < 0)
				return -1;
			b->console_rows = (unsigned short)n;
			if (berth_oci_int(json_object_get(cs, "width"), "process.consoleSize.width", false, 0,
					  65535, &n, NULL, err) < 0)
				return -1;
			b->console_cols = (unsigned short)n;
		}
	}
	if (convert_user(json_object_get(proc, "user"), c, err) < 0 ||
	    convert_args(json_object_get(proc, "args"), &b->policy, err) < 0 ||
	    convert_env(json_object_get(proc, "env"), &b->policy, err) < 0)
		return -1;
	if (berth_oci_string(json_object_get(proc, "cwd"), "process.cwd", true, &cwd, err) < 0 ||
	    berth_oci_container_path(cwd, "process.cwd", &c->cwd, err) < 0)
		return -1;
	if (note_capabilities(json_object_get(proc, "capabilities"), b, err) < 0 ||
	    convert_rlimits(json_object_get(proc, "rlimits"), b, err) < 0)
		return -1;
	/* NO_NEW_PRIVS is always set: `false` asks for less than berth gives. */
	if (berth_oci_bool(json_object_get(proc, "noNewPrivileges"), "process.noNewPrivileges", &nnp, err) <
	    0)
		return -1;
	if (json_object_get(proc, "noNewPrivileges") != NULL && !nnp &&
	    berth_oci_note(b, err, "process.noNewPrivileges is false: berth sets no_new_privs anyway") < 0)
		return -1;
	if (berth_oci_int(json_object_get(proc, "oomScoreAdj"), "process.oomScoreAdj", false, -1000, 1000, &n,
			  &set, err) < 0)
		return -1;
	b->has_oom_score_adj = set;
	b->oom_score_adj = (int)n;
	if (berth_oci_string(json_object_get(proc, "apparmorProfile"), "process.apparmorProfile", false, &s,
			     err) < 0)
		return -1;
	if (s != NULL && s[0] != '\0') {
		berth_oci_unsupported(
		    err, "process.apparmorProfile",
		    "berth does not load AppArmor profiles (`%.64s`); its Landlock rules and "
		    "seccomp filter confine the container",
		    s);
		return berth_err_hint(err, "podman: --security-opt apparmor=unconfined; docs/oci.md");
	}
	if (berth_oci_string(json_object_get(proc, "selinuxLabel"), "process.selinuxLabel", false, &s, err) <
	    0)
		return -1;
	if (s != NULL && s[0] != '\0') {
		berth_oci_unsupported(err, "process.selinuxLabel",
				      "berth does not set SELinux labels (`%.64s`)", s);
		return berth_err_hint(err, "podman: --security-opt label=disable; docs/oci.md");
	}
	return 0;
}

/* ---------------------------------------------------------- root, hostname, hooks */

static int convert_root(const json_t *root, struct berth_oci_bundle *b, struct berth_error *err)
{
	static const char *const keys[] = {"path", "readonly", NULL};
	struct berth_container *c = b->policy.container;
	char joined[PATH_MAX], real[PATH_MAX];
	const char *path;
	bool ro;
	struct stat st;

	if (root == NULL)
		return berth_oci_bad(err, "root", "is missing: the container needs a root filesystem");
	if (berth_oci_want_object(root, "root", err) < 0 || berth_oci_keys(root, "root", keys, err) < 0 ||
	    berth_oci_string(json_object_get(root, "path"), "root.path", true, &path, err) < 0 ||
	    berth_oci_bool(json_object_get(root, "readonly"), "root.readonly", &ro, err) < 0)
		return -1;
	if (path[0] == '\0')
		return berth_oci_bad(err, "root.path", "is empty");
	if ((size_t)snprintf(joined, sizeof joined, "%s%s%s", path[0] == '/' ? "" : b->dir,
			     path[0] == '/' ? "" : "/", path) >= sizeof joined)
		return berth_oci_bad(err, "root.path", "is too long");
	if (realpath(joined, real) == NULL) {
		berth_err_status(err, errno, BERTH_EXIT_USAGE,
				 "config.json: `root.path` `%.200s` cannot be used", joined);
		return berth_err_hint(err, "the root filesystem must exist before `create`");
	}
	if (stat(real, &st) < 0 || !S_ISDIR(st.st_mode))
		return berth_oci_bad(err, "root.path", "`%.200s` is not a directory", real);
	if (strcmp(real, "/") == 0)
		return berth_oci_unsupported(err, "root.path",
					     "the host's own root `/` is not a container's root filesystem");
	if ((c->root = berth_oci_strdup(real, err)) == NULL)
		return -1;
	c->root_rw = !ro;
	return 0;
}

static int convert_hostname(const json_t *cfg, struct berth_oci_bundle *b, struct berth_error *err)
{
	const char *h;

	if (berth_oci_string(json_object_get(cfg, "hostname"), "hostname", false, &h, err) < 0)
		return -1;
	if (h != NULL && h[0] != '\0') {
		if (strlen(h) > 64) /* HOST_NAME_MAX */
			return berth_oci_bad(err, "hostname", "is longer than 64 bytes");
		if ((b->policy.container->hostname = berth_oci_strdup(h, err)) == NULL)
			return -1;
	}
	if (berth_oci_string(json_object_get(cfg, "domainname"), "domainname", false, &h, err) < 0)
		return -1;
	if (h != NULL && h[0] != '\0')
		return berth_oci_unsupported(err, "domainname",
					     "berth does not set the NIS domain name (`%.64s`)", h);
	return 0;
}

static int check_hooks(const json_t *hooks, struct berth_error *err)
{
	static const char *const keys[] = {
	    "prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop", NULL};
	const char *key;
	json_t *v;

	if (hooks == NULL)
		return 0;
	if (berth_oci_want_object(hooks, "hooks", err) < 0 || berth_oci_keys(hooks, "hooks", keys, err) < 0)
		return -1;
	json_object_foreach((json_t *)hooks, key, v) {
		char path[64];
		snprintf(path, sizeof path, "hooks.%s", key);
		if (berth_oci_want_array(v, path, err) < 0)
			return -1;
		if (json_array_size(v) > 0) {
			const char *p = json_string_value(json_object_get(json_array_get(v, 0), "path"));
			berth_usage_err(
			    err,
			    "config.json: `%s` has %zu hook%s (`%.200s`...): berth oci does not run OCI "
			    "hooks: each runs on the host with the runtime's privileges, outside the "
			    "sandbox",
			    path, json_array_size(v), json_array_size(v) == 1 ? "" : "s",
			    p != NULL ? p : "?");
			return berth_err_hint(
			    err, "remove the hooks from the bundle (podman: no OCI hooks "
				 "directory; containerd: no NRI or hook plugins for this runtime)");
		}
	}
	return 0;
}

/* ---------------------------------------------------------- the whole */

int berth_oci_bundle_convert(const json_t *cfg, const char *dir, const char *id, struct berth_oci_bundle *b,
			     struct berth_error *err)
{
	static const char *const keys[] = {"ociVersion", "process", "root",  "hostname",    "domainname",
					   "mounts",     "hooks",   "linux", "annotations", NULL};

	memset(b, 0, sizeof *b);
	berth_policy_init(&b->policy);
	if ((b->policy.container = calloc(1, sizeof *b->policy.container)) == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	if ((b->dir = berth_oci_strdup(dir, err)) == NULL ||
	    (b->policy.container->id = berth_oci_strdup(id, err)) == NULL)
		return -1;
	if (!json_is_object(cfg))
		return berth_usage_err(err, "config.json: the document must be an object");
	if (berth_oci_keys(cfg, "", keys, err) < 0 || check_version(cfg, err) < 0 ||
	    convert_process(json_object_get(cfg, "process"), b, err) < 0 ||
	    convert_root(json_object_get(cfg, "root"), b, err) < 0 || convert_hostname(cfg, b, err) < 0 ||
	    check_hooks(json_object_get(cfg, "hooks"), err) < 0 ||
	    berth_oci_convert_mounts(json_object_get(cfg, "mounts"), b, err) < 0 ||
	    berth_oci_convert_linux(json_object_get(cfg, "linux"), b, err) < 0 ||
	    berth_oci_convert_annotations(json_object_get(cfg, "annotations"), b, err) < 0)
		return -1;
	/* berth's posture: a read-only root (the engines' default is a
	 * writable one); berth.dev/writable-root widens it, where the bundle
	 * asks for a writable root too (docs/oci.md). */
	if (b->policy.container->root_rw && !b->writable_root) {
		b->policy.container->root_rw = false;
		if (berth_oci_note(
			b, err,
			"root.readonly is false, and the root stays read-only (berth's posture; the "
			"annotation berth.dev/writable-root=true widens it)") < 0)
			return -1;
	} else if (b->policy.container->root_rw &&
		   berth_oci_note(
		       b, err, "widening: the container's root is writable (berth.dev/writable-root)") < 0) {
		return -1;
	}
	if (berth_policy_validate(&b->policy, err) < 0)
		return berth_err_wrap(err, "config.json");
	return 0;
}

/* @name under @dfd (@shown in messages): a regular file of at most
 * BERTH_OCI_CONFIG_MAX bytes, not through a symbolic link, never a FIFO
 * to block on; its bytes (NUL-ended) into *@text, *@len. */
static int read_config(int dfd, const char *name, const char *shown, char **text, size_t *len,
		       struct berth_error *err)
{
	cleanup_close int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	cleanup_free char *t = NULL;
	struct stat st;
	size_t got = 0;

	if (fd < 0 || fstat(fd, &st) < 0)
		return berth_err_status(err, errno, BERTH_EXIT_USAGE,
					"cannot read the bundle's config.json `%s`", shown);
	if (!S_ISREG(st.st_mode))
		return berth_usage_err(err, "cannot read the bundle's config.json `%s`: not a regular file",
				       shown);
	if (st.st_size > BERTH_OCI_CONFIG_MAX)
		return berth_usage_err(err, "the bundle's config.json `%s` is larger than %d bytes", shown,
				       BERTH_OCI_CONFIG_MAX);
	if ((t = malloc((size_t)st.st_size + 1)) == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, t + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return berth_err(err, errno, "cannot read the bundle's config.json `%s`", shown);
		if (n == 0)
			break;
		got += (size_t)n;
	}
	t[got] = '\0';
	*text = steal_pointer(&t);
	*len = got;
	return 0;
}

/* @text (@len bytes, read from @shown) parsed and converted; @b keeps the
 * bytes (config, config_len). */
static int load_text(char *text, size_t len, const char *shown, const char *dir, const char *id,
		     struct berth_oci_bundle *b, struct berth_error *err)
{
	json_auto_t *cfg = NULL;
	json_error_t je;

	cfg = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (cfg == NULL) {
		free(text);
		return berth_usage_err(err, "`%s`: line %d column %d: %s", shown, je.line, je.column,
				       je.text);
	}
	if (berth_oci_bundle_convert(cfg, dir, id, b, err) < 0) {
		free(text);
		return -1;
	}
	b->config = text;
	b->config_len = len;
	return 0;
}

int berth_oci_bundle_load(const char *dir, const char *id, struct berth_oci_bundle *b,
			  struct berth_error *err)
{
	char real[PATH_MAX], path[PATH_MAX + 16];
	char *text = NULL;
	size_t len = 0;

	memset(b, 0, sizeof *b);
	berth_policy_init(&b->policy);
	if (realpath(dir, real) == NULL) {
		berth_err_status(err, errno, BERTH_EXIT_USAGE, "cannot use the bundle `%.200s`", dir);
		return berth_err_hint(err, "--bundle names the directory that holds config.json");
	}
	snprintf(path, sizeof path, "%s/config.json", real);
	if (read_config(AT_FDCWD, path, path, &text, &len, err) < 0)
		return -1;
	return load_text(text, len, path, real, id, b, err);
}

int berth_oci_bundle_load_saved(int dfd, const char *dir, const char *id, struct berth_oci_bundle *b,
				struct berth_error *err)
{
	char *text = NULL;
	size_t len = 0;

	memset(b, 0, sizeof *b);
	berth_policy_init(&b->policy);
	if (read_config(dfd, BERTH_OCI_SAVED_CONFIG, BERTH_OCI_SAVED_CONFIG, &text, &len, err) < 0) {
		if (err->errnum == ENOENT)
			berth_err(err, 0,
				  "container `%s` has no %s in its state: it was not created by this berth",
				  id, BERTH_OCI_SAVED_CONFIG);
		return -1;
	}
	return load_text(text, len, BERTH_OCI_SAVED_CONFIG, dir, id, b, err);
}
