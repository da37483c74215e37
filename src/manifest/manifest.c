/* SPDX-License-Identifier: MIT */
/*
 * manifest.c - reading and validating berth.yml (docs/manifest.md).
 *
 * The file is parsed into a YAML tree with positions (ytree.c), then every
 * field is checked here; a problem is reported and checking goes on, so the
 * user sees every problem at once.  Only when no problem was found is the
 * manifest handed out.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../policy/credential.h"
#include "../policy/policy.h"
#include "../util/cleanup.h"
#include "internal.h"

/* ---- small helpers ---- */

static char *dup_str(struct mctx *c, const char *s, size_t len)
{
	char *p = strndup(s, len);

	if (p == NULL)
		c->oom = true;
	return p;
}

struct keyspec {
	const char *name;
	bool required;
	const char *fix; /* for a missing required key */
};

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[41];

	if (la > 40 || lb > 40)
		return (size_t)-1;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cur = row[j];
			size_t best = prev + (a[i - 1] == b[j - 1] ? 0 : 1);
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	return row[lb];
}

/*
 * check_keys - the keys of mapping @m against @keys: unknown and duplicate
 * keys are reported, as are missing required ones (at @m's position).
 * vals[i] receives the value of keys[i], or NULL.
 */
static void check_keys(struct mctx *c, const struct berth_ynode *m, const struct keyspec *keys, size_t nkeys,
		       const struct berth_ynode **vals)
{
	json_t *seen = json_object(); /* every key, known or not: name -> index */
	char known[512];
	size_t o = 0;

	if (seen == NULL)
		c->oom = true;

	known[0] = '\0';
	for (size_t i = 0; i < nkeys; i++) {
		vals[i] = NULL;
		o += (size_t)snprintf(known + o, sizeof known - o, "%s%s", i ? ", " : "", keys[i].name);
	}
	for (size_t p = 0; p < berth_ymap_size(m); p++) {
		const struct berth_ynode *k = berth_ymap_key(m, p);
		size_t idx = nkeys, old;

		if (k->kind != BERTH_YN_SCALAR) {
			diag(c, k, "a key must be a string, got %s", ynode_describe(k));
			continue;
		}
		for (size_t i = 0; i < nkeys && idx == nkeys; i++)
			if (yscalar_is(k, keys[i].name))
				idx = i;
		old = path_push_key(c, k->s, k->len);
		json_t *prev = strlen(k->s) == k->len ? json_object_get(seen, k->s) : NULL;
		if (prev != NULL) {
			const struct berth_ynode *first = berth_ymap_key(m, (size_t)json_integer_value(prev));
			diag(c, k, "duplicate key `%s` (first at %u:%u); fix: remove one of them",
			     quote(c, k->s, k->len), first->line, first->col);
			path_pop(c, old);
			continue;
		}
		if (seen != NULL && json_object_set_new(seen, k->s, json_integer((json_int_t)p)) < 0)
			c->oom = true;
		if (idx == nkeys) {
			const char *best = NULL;
			size_t bestd = 3;
			for (size_t i = 0; i < nkeys && strlen(k->s) == k->len && !diag_full(c); i++) {
				size_t dist = edit_distance(k->s, keys[i].name);
				if (dist < bestd) {
					bestd = dist;
					best = keys[i].name;
				}
			}
			if (best != NULL)
				diag(c, k, "unknown key `%s`; known keys: %s; fix: rename it to `%s`",
				     quote(c, k->s, k->len), known, best);
			else
				diag(c, k, "unknown key `%s`; known keys: %s", quote(c, k->s, k->len), known);
		} else {
			vals[idx] = berth_ymap_val(m, p);
		}
		path_pop(c, old);
	}
	json_decref(seen);
	for (size_t i = 0; i < nkeys; i++) {
		if (keys[i].required && vals[i] == NULL) {
			size_t old = path_push_key(c, keys[i].name, strlen(keys[i].name));
			diag(c, m, "missing required key; fix: %s", keys[i].fix);
			path_pop(c, old);
		}
	}
}

/*
 * get_str - the text of a string scalar, or NULL after reporting.  A plain
 * scalar that YAML reads as a number, boolean or null is not a string.
 */
static const char *get_str(struct mctx *c, const struct berth_ynode *v, const char *what)
{
	if (v->kind != BERTH_YN_SCALAR) {
		diag(c, v, "expected %s, got %s", what, got(c, v));
		return NULL;
	}
	if (yscalar_type(v) != YT_STR) {
		if (yscalar_type(v) == YT_NULL)
			diag(c, v, "expected %s, got null", what);
		else
			diag(c, v, "expected %s, got %s; fix: quote it (`\"%s\"`)", what, got(c, v),
			     quote(c, v->s, v->len));
		return NULL;
	}
	if (strlen(v->s) != v->len) {
		diag(c, v, "must not contain a NUL byte");
		return NULL;
	}
	return v->s;
}

static bool blank(const char *s)
{
	for (; *s != '\0'; s++)
		if (!isspace((unsigned char)*s))
			return false;
	return true;
}

static const struct berth_ynode *expect_kind(struct mctx *c, const struct berth_ynode *v,
					     enum berth_ynode_kind kind, const char *what)
{
	if (v->kind != kind) {
		diag(c, v, "expected %s, got %s", what, got(c, v));
		return NULL;
	}
	return v;
}

/* ---- top-level fields ---- */

static void f_schema_version(struct mctx *c, const struct berth_ynode *v, struct berth_manifest *m)
{
	if (v->kind != BERTH_YN_SCALAR || yscalar_type(v) != YT_INT) {
		diag(c, v, "expected the integer %d, got %s", BERTH_MANIFEST_SCHEMA, got(c, v));
		return;
	}
	if (strcmp(v->s, "1") != 0 && strcmp(v->s, "+1") != 0) {
		diag(c, v, "unsupported schema_version `%s`; this berth knows only schema_version %d",
		     quote(c, v->s, v->len), BERTH_MANIFEST_SCHEMA);
		return;
	}
	m->schema_version = BERTH_MANIFEST_SCHEMA;
}

static void f_name(struct mctx *c, const struct berth_ynode *v, struct berth_manifest *m)
{
	const char *s = get_str(c, v, "a name");
	size_t n;

	if (s == NULL)
		return;
	n = strlen(s);
	bool ok = n >= 1 && n <= 63;
	for (size_t i = 0; i < n && ok; i++)
		ok = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-';
	if (!ok) {
		diag(c, v, "invalid name `%s`; a name is 1 to 63 lowercase letters, digits and `-`",
		     quote(c, s, n));
		return;
	}
	m->name = dup_str(c, s, n);
}

/* A numeric semver identifier: digits, no leading zero except "0". */
static const char *semver_num(const char *p)
{
	if (*p == '0')
		return isdigit((unsigned char)p[1]) ? NULL : p + 1;
	if (!isdigit((unsigned char)*p))
		return NULL;
	while (isdigit((unsigned char)*p))
		p++;
	return p;
}

/* Dot-separated identifiers of [0-9A-Za-z-]; numeric ones without leading zeros when @strict_num. */
static const char *semver_idents(const char *p, bool strict_num)
{
	for (;;) {
		const char *start = p;
		bool digits_only = true;
		while (isalnum((unsigned char)*p) || *p == '-') {
			if (!isdigit((unsigned char)*p))
				digits_only = false;
			p++;
		}
		if (p == start)
			return NULL;
		if (strict_num && digits_only && *start == '0' && p - start > 1)
			return NULL;
		if (*p != '.')
			return p;
		p++;
	}
}

static bool semver_ok(const char *s)
{
	const char *p = s;

	if (strlen(s) > 128)
		return false;
	for (int i = 0; i < 3; i++) {
		p = semver_num(p);
		if (p == NULL)
			return false;
		if (i < 2 && *p++ != '.')
			return false;
	}
	if (*p == '-' && (p = semver_idents(p + 1, true)) == NULL)
		return false;
	if (*p == '+' && (p = semver_idents(p + 1, false)) == NULL)
		return false;
	return *p == '\0';
}

static void f_version(struct mctx *c, const struct berth_ynode *v, struct berth_manifest *m)
{
	/* The text counts, whatever YAML makes of it: `1.0` is a number, and the semver message says more. */
	if (v->kind != BERTH_YN_SCALAR) {
		diag(c, v, "expected a version such as `0.1.0`, got %s", got(c, v));
		return;
	}
	if (strlen(v->s) != v->len || !semver_ok(v->s)) {
		diag(c, v,
		     "invalid version `%s`; a version is MAJOR.MINOR.PATCH, numbers without leading zeros, "
		     "such as `0.1.0` or `1.2.3-rc.1`",
		     quote(c, v->s, v->len));
		return;
	}
	m->version = dup_str(c, v->s, v->len);
}

static char *description(struct mctx *c, const struct berth_ynode *v)
{
	const char *s = get_str(c, v, "a description");

	if (s == NULL)
		return NULL;
	if (blank(s)) {
		diag(c, v, "must not be empty; fix: say in one line what it does");
		return NULL;
	}
	return dup_str(c, s, v->len);
}

static void f_description(struct mctx *c, const struct berth_ynode *v, struct berth_manifest *m)
{
	m->description = description(c, v);
}

static void f_runtime(struct mctx *c, const struct berth_ynode *v, struct berth_manifest *m)
{
	const char *s = get_str(c, v, "a runtime");

	if (s == NULL)
		return;
	if (strcmp(s, "native") == 0)
		m->runtime = BERTH_RUNTIME_NATIVE;
	else if (strcmp(s, "python") == 0)
		m->runtime = BERTH_RUNTIME_PYTHON;
	else if (strcmp(s, "node") == 0)
		m->runtime = BERTH_RUNTIME_NODE;
	else
		diag(c, v, "unknown runtime `%s`; known runtimes: native, python, node", quote(c, s, v->len));
}

static void f_entry(struct mctx *c, const struct berth_ynode *v, struct berth_manifest *m)
{
	const char *s = get_str(c, v, "a path relative to the app directory");
	bool empty = false, dotdot = false;

	if (s == NULL)
		return;
	if (s[0] == '\0') {
		diag(c, v,
		     "must not be empty; fix: name the program to start, relative to the app directory");
		return;
	}
	if (s[0] == '/') {
		diag(c, v,
		     "entry `%s` is absolute; it must be a path relative to the app directory, such as "
		     "`bin/app`",
		     quote(c, s, v->len));
		return;
	}
	for (const char *p = s;; p++) {
		const char *e = strchrnul(p, '/');
		if (e == p)
			empty = true;
		else if (e - p == 2 && p[0] == '.' && p[1] == '.')
			dotdot = true;
		if (*e == '\0')
			break;
		p = e;
	}
	if (dotdot)
		diag(c, v, "entry `%s` has a `..` component; it must stay inside the app directory",
		     quote(c, s, v->len));
	else if (empty)
		diag(c, v,
		     "entry `%s` has an empty component (`//` or a trailing `/`); name a file such as "
		     "`bin/app`",
		     quote(c, s, v->len));
	else
		m->entry = dup_str(c, s, v->len);
}

/*
 * A list field: @v must be a list (else reported as not @what); each item a
 * string (else reported as not @item), handed to @fn with its index, the
 * set of what was seen (for duplicates) and the array returned, with room
 * for every item (@size bytes each).  Returns that array (owned by the
 * manifest), or NULL when @v is not a list or out of memory.
 */
static void *list_read(struct mctx *c, const struct berth_ynode *v, const char *what, size_t size,
		       const char *item,
		       void (*fn)(struct mctx *, const struct berth_ynode *, size_t, const char *, json_t *,
				  void *, struct berth_manifest *),
		       struct berth_manifest *m)
{
	json_t *seen;
	void *arr;

	if (expect_kind(c, v, BERTH_YN_SEQ, what) == NULL)
		return NULL;
	arr = calloc(v->n ? v->n : 1, size);
	seen = json_object();
	if (arr == NULL || seen == NULL) {
		json_decref(seen);
		c->oom = true;
		return arr;
	}
	for (size_t i = 0; i < v->n; i++) {
		size_t old = path_push_index(c, i);
		const char *s = get_str(c, v->kids[i], item);

		if (s != NULL)
			fn(c, v, i, s, seen, arr, m);
		path_pop(c, old);
	}
	json_decref(seen);
	return arr;
}

static void cap_item(struct mctx *c, const struct berth_ynode *v, size_t i, const char *s, json_t *seen,
		     void *arr, struct berth_manifest *m)
{
	struct berth_cap cap, *caps = arr;
	char reason[1024], key[8];
	cleanup_free char *k = NULL;

	if (berth_capability_parse(s, &cap, reason, sizeof reason) < 0) {
		diag(c, v->kids[i], "%s", reason);
		return;
	}
	snprintf(key, sizeof key, "%d:", (int)cap.kind);
	if (asprintf(&k, "%s%s", key, cap.scope) < 0) {
		k = NULL;
		c->oom = true;
	}
	if (k != NULL && json_object_get(seen, k) == NULL) {
		/* a duplicate is harmless: stored once */
		if (json_object_set_new(seen, k, json_true()) < 0)
			c->oom = true;
		caps[m->n_caps++] = cap;
		cap.scope = NULL;
	}
	free(cap.scope);
}

static void f_capabilities(struct mctx *c, const struct berth_ynode *v, struct berth_manifest *m)
{
	m->caps = list_read(c, v, "a list of capabilities such as `- filesystem:write:/workspace`",
			    sizeof *m->caps, "a capability `namespace:action:scope`", cap_item, m);
}

static bool env_name_ok(const char *s)
{
	if (!(isalpha((unsigned char)*s) || *s == '_'))
		return false;
	for (s++; *s != '\0'; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_'))
			return false;
	return true;
}

static void secret_item(struct mctx *c, const struct berth_ynode *v, size_t i, const char *s, json_t *seen,
			void *arr, struct berth_manifest *m)
{
	const struct berth_ynode *it = v->kids[i];
	char **secrets = arr;
	json_t *prev;

	if (!env_name_ok(s)) {
		diag(c, it,
		     "invalid secret name `%s`; a secret is an environment variable name: letters, "
		     "digits and `_`, not starting with a digit",
		     quote(c, s, it->len));
	} else if ((prev = json_object_get(seen, s)) != NULL) {
		const struct berth_ynode *first = v->kids[json_integer_value(prev)];
		diag(c, it, "secret `%s` is listed twice (first at %u:%u); fix: remove one of them", s,
		     first->line, first->col);
	} else {
		if (json_object_set_new(seen, s, json_integer((json_int_t)i)) < 0)
			c->oom = true;
		secrets[m->n_secrets] = dup_str(c, s, it->len);
		if (secrets[m->n_secrets] != NULL)
			m->n_secrets++;
	}
}

static void f_secrets(struct mctx *c, const struct berth_ynode *v, struct berth_manifest *m)
{
	m->secrets = list_read(c, v, "a list of environment variable names such as `[API_TOKEN]`",
			       sizeof *m->secrets, "an environment variable name", secret_item, m);
}

/* credentials: each a binding as `berth run --credential` takes it
 * (docs/credentials.md), its NAME once */
static void cred_item(struct mctx *c, const struct berth_ynode *v, size_t i, const char *s, json_t *seen,
		      void *arr, struct berth_manifest *m)
{
	const struct berth_ynode *it = v->kids[i];
	char **creds = arr, why[512];
	struct berth_credential cr;
	json_t *prev;
	int r = berth_credential_parse(s, &cr, why, sizeof why);

	if (r == -2) {
		c->oom = true;
		return;
	}
	if (r < 0) {
		diag(c, it,
		     "invalid credential binding: %s; a binding is "
		     "`NAME=SOURCE@HOST[:PORT][/PREFIX][#HEADER]`, "
		     "e.g. `GH_TOKEN=env:GH_TOKEN@api.github.com` (docs/credentials.md)",
		     why);
		return;
	}
	if ((prev = json_object_get(seen, cr.name)) != NULL) {
		const struct berth_ynode *first = v->kids[json_integer_value(prev)];
		diag(c, it, "credential `%s` is bound twice (first at %u:%u); fix: remove one of them",
		     cr.name, first->line, first->col);
	} else if (json_object_set_new(seen, cr.name, json_integer((json_int_t)i)) < 0) {
		c->oom = true;
	} else {
		creds[m->n_credentials] = dup_str(c, s, it->len);
		if (creds[m->n_credentials] != NULL)
			m->n_credentials++;
	}
	berth_credential_clear(&cr);
}

static void f_credentials(struct mctx *c, const struct berth_ynode *v, struct berth_manifest *m)
{
	m->credentials =
	    list_read(c, v, "a list of credential bindings such as `[GH_TOKEN=env:GH_TOKEN@api.github.com]`",
		      sizeof *m->credentials, "a credential binding", cred_item, m);
}

/* The text of a scalar meant as a number or size; NULL (reported) for null, booleans, collections. */
static const char *number_text(struct mctx *c, const struct berth_ynode *v, const char *what)
{
	enum yscalar_type t = yscalar_type(v);

	if (v->kind != BERTH_YN_SCALAR || t == YT_NULL || t == YT_BOOL || strlen(v->s) != v->len) {
		diag(c, v, "expected %s, got %s", what, got(c, v));
		return NULL;
	}
	return v->s;
}

static void f_resources(struct mctx *c, const struct berth_ynode *v, struct berth_manifest *m)
{
	static const struct keyspec keys[] = {
	    {"memory", false, NULL},
	    {"cpus", false, NULL},
	    {"pids", false, NULL},
	};
	const struct berth_ynode *vals[3];
	struct berth_resources *r = &m->resources;
	struct berth_error e;
	const char *s;
	size_t old;
	uint64_t cpus = 0;

	if (expect_kind(c, v, BERTH_YN_MAP, "a mapping with `memory`, `cpus` and/or `pids`") == NULL)
		return;
	check_keys(c, v, keys, BERTH_ARRAY_SIZE(keys), vals);
	if (vals[0] != NULL) {
		old = path_push_key(c, "memory", 6);
		s = number_text(c, vals[0], "a size such as `256M`");
		if (s != NULL && berth_limit_parse(BERTH_LIMIT_MEMORY, "memory size", s, &r->memory, &e) < 0)
			diag(c, vals[0], "%s; %s", e.msg, e.hint);
		else if (s != NULL)
			r->has_memory = true;
		path_pop(c, old);
	}
	if (vals[1] != NULL) {
		old = path_push_key(c, "cpus", 4);
		s = number_text(c, vals[1], "a number of CPUs such as `1` or `0.5`");
		if (s != NULL && berth_limit_parse(BERTH_LIMIT_CPUS, "number of CPUs", s, &cpus, &e) < 0)
			diag(c, vals[1], "%s; %s", e.msg, e.hint);
		else if (s != NULL) {
			r->millicpus = (uint32_t)cpus; /* at most BERTH_MILLICPUS_MAX */
			r->has_millicpus = true;
		}
		path_pop(c, old);
	}
	if (vals[2] != NULL) {
		const struct berth_ynode *p = vals[2];
		unsigned long long n = 0;
		bool ok = p->kind == BERTH_YN_SCALAR && yscalar_type(p) == YT_INT && p->len <= 8;

		old = path_push_key(c, "pids", 4);
		for (size_t i = 0; ok && i < p->len; i++) {
			ok = isdigit((unsigned char)p->s[i]);
			n = n * 10 + (unsigned)(p->s[i] - '0');
		}
		if (!ok || n < BERTH_PIDS_MIN || n > BERTH_PIDS_MAX) {
			diag(c, p, "expected a whole number from %u to %u, got %s", BERTH_PIDS_MIN,
			     BERTH_PIDS_MAX, got(c, p));
		} else {
			r->pids = (uint32_t)n;
			r->has_pids = true;
		}
		path_pop(c, old);
	}
}

/* ---- exports ---- */

static int errno_from_name(const char *name)
{
	static const struct {
		const char *name;
		int value;
	} aliases[] = {
	    {"EWOULDBLOCK", EWOULDBLOCK},
	    {"EDEADLOCK", EDEADLOCK},
	    {"ENOTSUP", ENOTSUP},
	};

	for (int e = 1; e < 512; e++) {
		const char *n = strerrorname_np(e);
		if (n != NULL && strcmp(n, name) == 0)
			return e;
	}
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(aliases); i++)
		if (strcmp(aliases[i].name, name) == 0)
			return aliases[i].value;
	return 0;
}

static bool errno_shaped(const char *s)
{
	if (s[0] != 'E' || s[1] == '\0')
		return false;
	for (s++; *s != '\0'; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

static void example_error(struct mctx *c, const struct berth_ynode *v, struct berth_example *ex)
{
	enum yscalar_type t = yscalar_type(v);

	if (v->kind == BERTH_YN_SCALAR && t == YT_INT) {
		json_t *j = yjson(c, v);
		if (j == NULL)
			return;
		ex->expect = BERTH_EXPECT_CODE;
		ex->error_code = json_integer_value(j);
		json_decref(j);
		ex->error = dup_str(c, v->s, v->len);
		return;
	}
	if (v->kind != BERTH_YN_SCALAR || t != YT_STR || strlen(v->s) != v->len || blank(v->s)) {
		diag(c, v,
		     "expected an errno name such as `EACCES`, a JSON-RPC error code such as `-32000`, or a "
		     "text the error message must contain, got %s",
		     got(c, v));
		return;
	}
	if (errno_shaped(v->s)) {
		int e = errno_from_name(v->s);
		if (e == 0) {
			diag(c, v,
			     "unknown errno name `%s`; fix: use a name such as `EACCES`, `EPERM`, `EROFS` or "
			     "`ENOENT`",
			     quote(c, v->s, v->len));
			return;
		}
		ex->expect = BERTH_EXPECT_ERRNO;
		ex->error_errno = e;
	} else {
		ex->expect = BERTH_EXPECT_TEXT;
	}
	ex->error = dup_str(c, v->s, v->len);
}

static void example(struct mctx *c, const struct berth_ynode *v, struct berth_export *x,
		    struct berth_example *ex)
{
	static const struct keyspec keys[] = {
	    {"input", true, "add `input: {...}`, the call's parameters"},
	    {"output", false, NULL},
	    {"error", false, NULL},
	};
	const struct berth_ynode *vals[3];
	size_t old;

	ex->line = v->line;
	if (expect_kind(c, v, BERTH_YN_MAP, "an example, a mapping with `input` and `output` or `error`") ==
	    NULL)
		return;
	check_keys(c, v, keys, BERTH_ARRAY_SIZE(keys), vals);
	if (vals[1] != NULL && vals[2] != NULL)
		diag(c, v, "an example gives either `output` or `error`, not both; fix: remove one of them");
	if (vals[0] != NULL) {
		old = path_push_key(c, "input", 5);
		ex->input = yjson(c, vals[0]);
		if (ex->input != NULL && x->input != NULL)
			yvalidate(c, x->input, ex->input, vals[0], 0);
		path_pop(c, old);
	}
	if (vals[1] != NULL) {
		old = path_push_key(c, "output", 6);
		if (expect_kind(c, vals[1], BERTH_YN_MAP, "a mapping of the output's expected members") !=
		    NULL) {
			ex->output = yjson(c, vals[1]);
			/* Partial: only the members given must match, so `required` is not checked here. */
			if (ex->output != NULL && x->output != NULL)
				yvalidate(c, x->output, ex->output, vals[1], BERTH_SCHEMA_PARTIAL);
			ex->expect = BERTH_EXPECT_OUTPUT;
		}
		path_pop(c, old);
	}
	if (vals[2] != NULL) {
		old = path_push_key(c, "error", 5);
		example_error(c, vals[2], ex);
		path_pop(c, old);
	}
}

/* An expanded schema must pass the generic check too; a failure is a bug in yschema.c. */
static void cross_check(struct mctx *c, const struct berth_ynode *at, const json_t *schema)
{
	char path[256], reason[512];

	if (schema != NULL && berth_schema_check(schema, path, sizeof path, reason, sizeof reason) < 0)
		diag(c, at, "internal error: the expanded schema fails at `%s`: %s", path, reason);
}

static json_t *export_schema(struct mctx *c, const struct berth_ynode *v, const char *key, const char *dflt)
{
	size_t old;
	json_t *s;

	if (v == NULL) {
		s = json_loads(dflt, 0, NULL);
		if (s == NULL)
			c->oom = true;
		return s;
	}
	old = path_push_key(c, key, strlen(key));
	s = yschema(c, v);
	cross_check(c, v, s);
	path_pop(c, old);
	return s;
}

static void export(struct mctx *c, const struct berth_ynode *v, struct berth_export *x, json_t *names,
		   size_t idx, const struct berth_ynode *list)
{
	static const struct keyspec keys[] = {
	    {"name", true, "add `name: my_export` (lowercase letters, digits and `_`)"},
	    {"description", true, "add `description: what the export does, in one line`"},
	    {"input", false, NULL},
	    {"output", false, NULL},
	    {"examples", false, NULL},
	};
	const struct berth_ynode *vals[5];
	size_t old;

	if (expect_kind(c, v, BERTH_YN_MAP,
			"an export, a mapping with `name`, `description`, `input`, `output`") == NULL)
		return;
	check_keys(c, v, keys, BERTH_ARRAY_SIZE(keys), vals);
	if (vals[0] != NULL) {
		const char *s;
		old = path_push_key(c, "name", 4);
		s = get_str(c, vals[0], "an export name");
		if (s != NULL) {
			/* At most 64 characters: tool names of MCP clients and of the
			 * OpenAI and Anthropic tool APIs stop there (berth mcp adds
			 * `<app>__` when it serves several apps). */
			bool ok = *s >= 'a' && *s <= 'z' && strlen(s) <= 64;
			for (const char *p = s; *p != '\0' && ok; p++)
				ok = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_';
			json_t *prev = ok ? json_object_get(names, s) : NULL;
			if (!ok) {
				diag(c, vals[0],
				     "invalid export name `%s`; an export name is 1 to 64 lowercase letters, "
				     "digits "
				     "and `_`, starting with a letter",
				     quote(c, s, vals[0]->len));
			} else if (prev != NULL) {
				const struct berth_ynode *first = list->kids[json_integer_value(prev)];
				diag(c, vals[0],
				     "export `%s` is defined twice (first at %u:%u); fix: rename one of them",
				     s, first->line, first->col);
			} else {
				if (json_object_set_new(names, s, json_integer((json_int_t)idx)) < 0)
					c->oom = true;
				x->name = dup_str(c, s, vals[0]->len);
			}
		}
		path_pop(c, old);
	}
	if (vals[1] != NULL) {
		old = path_push_key(c, "description", 11);
		x->description = description(c, vals[1]);
		path_pop(c, old);
	}
	x->input = export_schema(c, vals[2], "input", "{\"type\":\"object\",\"properties\":{}}");
	x->output = export_schema(c, vals[3], "output", "{\"type\":\"object\"}");
	if (vals[4] != NULL) {
		const struct berth_ynode *ev = vals[4];
		old = path_push_key(c, "examples", 8);
		if (expect_kind(c, ev, BERTH_YN_SEQ, "a list of examples") != NULL && ev->n > 0) {
			x->examples = calloc(ev->n, sizeof *x->examples);
			if (x->examples == NULL) {
				c->oom = true;
			} else {
				x->n_examples = ev->n;
				for (size_t i = 0; i < ev->n; i++) {
					size_t o2 = path_push_index(c, i);
					example(c, ev->kids[i], x, &x->examples[i]);
					path_pop(c, o2);
				}
			}
		}
		path_pop(c, old);
	}
}

static void f_exports(struct mctx *c, const struct berth_ynode *v, struct berth_manifest *m)
{
	json_t *names;

	if (expect_kind(c, v, BERTH_YN_SEQ, "a list of exports (`- name: ...`)") == NULL)
		return;
	if (v->n == 0) {
		diag(c, v,
		     "at least one export is required; fix: add `- name: my_export` with a `description`");
		return;
	}
	m->exports = calloc(v->n, sizeof *m->exports);
	names = json_object();
	if (m->exports == NULL || names == NULL) {
		json_decref(names);
		c->oom = true;
		return;
	}
	m->n_exports = v->n;
	for (size_t i = 0; i < v->n; i++) {
		size_t old = path_push_index(c, i);
		export(c, v->kids[i], &m->exports[i], names, i, v);
		path_pop(c, old);
	}
	json_decref(names);
}

static void read_manifest(struct mctx *c, const struct berth_ynode *root, struct berth_manifest *m)
{
	static const struct keyspec keys[] = {
	    {"schema_version", true, "add `schema_version: 1`"},
	    {"name", true, "add `name: my-app` (lowercase letters, digits and `-`)"},
	    {"version", true, "add `version: 0.1.0`"},
	    {"description", true, "add `description: what the app does, in one line`"},
	    {"runtime", true, "add `runtime: native` or `runtime: python`"},
	    {"entry", true, "add `entry: PATH`, the program to start, relative to the app directory"},
	    {"capabilities", false, NULL},
	    {"secrets", false, NULL},
	    {"credentials", false, NULL},
	    {"resources", false, NULL},
	    {"exports", true, "add `exports:` with at least one export (`- name: my_export`)"},
	};
	static void (*const fields[])(struct mctx *, const struct berth_ynode *, struct berth_manifest *) = {
	    f_schema_version, f_name,    f_version,     f_description, f_runtime, f_entry,
	    f_capabilities,   f_secrets, f_credentials, f_resources,   f_exports,
	};
	const struct berth_ynode *vals[BERTH_ARRAY_SIZE(keys)];

	check_keys(c, root, keys, BERTH_ARRAY_SIZE(keys), vals);
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(keys); i++) {
		if (vals[i] == NULL)
			continue;
		size_t old = path_push_key(c, keys[i].name, strlen(keys[i].name));
		fields[i](c, vals[i], m);
		path_pop(c, old);
	}
}

/* ---- entry points ---- */

static struct mctx *mctx_new(const char *display, struct berth_diags *d)
{
	struct mctx *c = calloc(1, sizeof *c);

	if (c == NULL)
		return NULL;
	c->display = display != NULL ? display : "berth.yml";
	c->d = d;
	c->first = d->n;
	return c;
}

/* Sort the diagnostics and turn the count into @err. */
static int finish(struct mctx *c, struct berth_manifest *m, struct berth_error *err)
{
	int r = 0;

	diag_finish(c);
	if (c->oom) {
		berth_manifest_free(m);
		r = berth_err(err, ENOMEM, "read manifest `%s`", c->display);
	} else if (c->problems > 0) {
		berth_manifest_free(m);
		berth_usage_err(err, "%zu problem%s in `%s`", c->problems, c->problems == 1 ? "" : "s",
				c->display);
		r = berth_err_hint(err, "each problem is listed with its line and column; docs/manifest.md "
					"describes the format");
	}
	free(c);
	return r;
}

int berth_manifest_parse(const char *buf, size_t len, const char *display_name, struct berth_manifest *m,
			 struct berth_diags *d, struct berth_error *err)
{
	struct mctx *c;
	struct berth_ynode *root;
	bool ok;

	memset(m, 0, sizeof *m);
	c = mctx_new(display_name, d);
	if (c == NULL)
		return berth_err(err, ENOMEM, "read manifest `%s`",
				 display_name != NULL ? display_name : "berth.yml");
	root = ytree_parse(c, buf, len, &ok);
	if (ok && !c->oom) {
		if (root == NULL)
			diag_pos(c, 1, 1, false,
				 "the manifest is empty; fix: `berth init NAME` writes one, docs/manifest.md "
				 "describes the format");
		else if (root->kind != BERTH_YN_MAP)
			diag(c, root,
			     "a manifest is a mapping of keys such as `name:` and `exports:`, got %s",
			     got(c, root));
		else
			read_manifest(c, root, m);
	}
	berth_ynode_free(root);
	return finish(c, m, err);
}

int berth_manifest_load(const char *app_dir, const char *display_dir, struct berth_manifest *m,
			struct berth_diags *d, struct berth_error *err)
{
	cleanup_free char *path = NULL, *display = NULL, *buf = NULL;
	cleanup_close int fd = -1;
	struct stat st;
	size_t len = 0;

	memset(m, 0, sizeof *m);
	if (asprintf(&path, "%s/berth.yml", app_dir) < 0) {
		path = NULL;
		return berth_err(err, ENOMEM, "read manifest");
	}
	if (asprintf(&display, "%s/berth.yml", display_dir != NULL ? display_dir : app_dir) < 0) {
		display = NULL;
		return berth_err(err, ENOMEM, "read manifest");
	}
	/* O_NONBLOCK: a FIFO planted in place of the file must not hang us. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		int e = errno;
		if (e == ENOENT) {
			berth_err(err, e, "no manifest at `%s`", display);
			err->status = BERTH_EXIT_USAGE;
			return berth_err_hint(err, "`berth init NAME` creates one");
		}
		return berth_err(err, e, "open `%s`", display);
	}
	if (fstat(fd, &st) < 0)
		return berth_err(err, errno, "stat `%s`", display);
	if (!S_ISREG(st.st_mode))
		return berth_usage_err(err, "`%s` is not a regular file", display);
	buf = malloc(BERTH_MANIFEST_MAX_SIZE + 1);
	if (buf == NULL)
		return berth_err(err, ENOMEM, "read `%s`", display);
	while (len <= BERTH_MANIFEST_MAX_SIZE) {
		ssize_t n = read(fd, buf + len, BERTH_MANIFEST_MAX_SIZE + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return berth_err(err, errno, "read `%s`", display);
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > BERTH_MANIFEST_MAX_SIZE) {
		struct mctx *c = mctx_new(display, d);
		if (c == NULL)
			return berth_err(err, ENOMEM, "read `%s`", display);
		diag_pos(c, 1, 1, false, "the file is %lld bytes; a manifest may be at most 1 MiB (%d bytes)",
			 (long long)(st.st_size > (off_t)len ? st.st_size : (off_t)len),
			 BERTH_MANIFEST_MAX_SIZE);
		return finish(c, m, err);
	}
	return berth_manifest_parse(buf, len, display, m, d, err);
}

void berth_manifest_free(struct berth_manifest *m)
{
	free(m->name);
	free(m->version);
	free(m->description);
	free(m->entry);
	for (size_t i = 0; i < m->n_caps; i++)
		free(m->caps[i].scope);
	free(m->caps);
	for (size_t i = 0; i < m->n_secrets; i++)
		free(m->secrets[i]);
	free(m->secrets);
	for (size_t i = 0; i < m->n_credentials; i++)
		free(m->credentials[i]);
	free(m->credentials);
	for (size_t i = 0; i < m->n_exports; i++) {
		struct berth_export *x = &m->exports[i];
		free(x->name);
		free(x->description);
		json_decref(x->input);
		json_decref(x->output);
		for (size_t j = 0; j < x->n_examples; j++) {
			json_decref(x->examples[j].input);
			json_decref(x->examples[j].output);
			free(x->examples[j].error);
		}
		free(x->examples);
	}
	free(m->exports);
	memset(m, 0, sizeof *m);
}

const char *berth_runtime_name(enum berth_runtime rt)
{
	switch (rt) {
	case BERTH_RUNTIME_PYTHON:
		return "python";
	case BERTH_RUNTIME_NODE:
		return "node";
	case BERTH_RUNTIME_NATIVE:
	default:
		return "native";
	}
}
