/* SPDX-License-Identifier: MIT */
/*
 * from_json.c - the policy read back from its canonical JSON: the inverse of
 * berth_policy_to_json() (policy.c), for the microVM guest, which runs the
 * very policy the host compiled (docs/vm.md, "The design").
 *
 * Each reader takes exactly what policy.c writes: the same keys, and for
 * each number the range its encoder can produce (a uint64_t written as a
 * json_int_t comes back through the same cast; RLIM_INFINITY is -1).  A key
 * written only when set (forensic, a mount's mode or noexec) is refused when
 * present with the value that would not be written, so that reading never
 * accepts two spellings of one policy.  What policy.c derives rather than
 * copies (the default view's rows, the guard's git paths and trust names) is
 * checked against this build's tables, and the rules files' guard additions
 * are recovered from behind the trust names.
 */
#include "policy.h"
#include "credential.h"
#include "sshkey.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"
#include "sysdirs.h"
#include "trust.h"

#define PATH_LEN 256 /* bytes of a JSON path in a message (truncated beyond) */

/* The ranges below are long long's: jansson's json_int_t on every target
 * berth builds for (JSON_INTEGER_IS_LONG_LONG). */
_Static_assert(sizeof(json_int_t) == sizeof(long long), "json_int_t is long long");

static int bad(struct berth_error *err, const char *path, const char *what)
{
	berth_err(err, 0, "policy JSON: `%s` %s", path, what);
	return berth_err_hint(err, "the policy must be the canonical JSON berth_policy_to_json() writes, "
				   "from a berth of the same version");
}

static void sub(char *out, const char *path, const char *key)
{
	snprintf(out, PATH_LEN, "%s%s%s", path, *path != '\0' ? "." : "", key);
}

static void idx(char *out, const char *path, size_t i)
{
	snprintf(out, PATH_LEN, "%s[%zu]", path, i);
}

/* Every key of the object @o at @path is one of @keys (NULL-terminated). */
static int only_keys(const json_t *o, const char *path, const char *const *keys, struct berth_error *err)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)o, k, v) {
		bool known = false;
		char p[PATH_LEN];

		for (size_t i = 0; keys[i] != NULL && !known; i++)
			known = strcmp(keys[i], k) == 0;
		if (!known) {
			sub(p, path, k);
			return bad(err, p, "is not a key of the policy");
		}
	}
	return 0;
}

/* The member @key of @o of type @type (JSON_TRUE stands for a boolean):
 * NULL with @err filled when it is missing or of another type. */
static json_t *member(const json_t *o, const char *path, const char *key, json_type type,
		      struct berth_error *err)
{
	static const char *const names[] = {
	    [JSON_OBJECT] = "an object",   [JSON_ARRAY] = "an array",  [JSON_STRING] = "a string",
	    [JSON_INTEGER] = "an integer", [JSON_REAL] = "an integer", [JSON_TRUE] = "a boolean",
	    [JSON_FALSE] = "a boolean",    [JSON_NULL] = "null"};
	json_t *v = json_object_get(o, key);
	char p[PATH_LEN], what[64];

	sub(p, path, key);
	if (v == NULL) {
		bad(err, p, "is missing");
		return NULL;
	}
	if (type == JSON_TRUE ? !json_is_boolean(v) : json_typeof(v) != type) {
		snprintf(what, sizeof what, "is not %s", names[type]);
		bad(err, p, what);
		return NULL;
	}
	return v;
}

/* A string member into *@out (malloc'd); JSON null is NULL when @nullable. */
static int get_str(const json_t *o, const char *path, const char *key, bool nullable, char **out,
		   struct berth_error *err)
{
	json_t *v = json_object_get(o, key);

	if (nullable && json_is_null(v)) {
		*out = NULL;
		return 0;
	}
	v = member(o, path, key, JSON_STRING, err);
	if (v == NULL)
		return -1;
	*out = strdup(json_string_value(v));
	return *out == NULL ? berth_err(err, ENOMEM, "cannot read the policy") : 0;
}

/* An integer member in [@min, @max]. */
static int get_int(const json_t *o, const char *path, const char *key, json_int_t min, json_int_t max,
		   json_int_t *out, struct berth_error *err)
{
	json_t *v = member(o, path, key, JSON_INTEGER, err);
	char p[PATH_LEN];

	if (v == NULL)
		return -1;
	*out = json_integer_value(v);
	if (*out < min || *out > max) {
		sub(p, path, key);
		return bad(err, p, "is out of range");
	}
	return 0;
}

/* The encoders' integers: a uint64_t was written as (json_int_t), a
 * uint32_t as json_int_t, an int32 id as int: each read back through the
 * inverse cast. */
static int get_u64(const json_t *o, const char *path, const char *key, uint64_t *out, struct berth_error *err)
{
	json_int_t v;

	if (get_int(o, path, key, LLONG_MIN, LLONG_MAX, &v, err) < 0)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

static int get_u32(const json_t *o, const char *path, const char *key, uint32_t *out, struct berth_error *err)
{
	json_int_t v;

	if (get_int(o, path, key, 0, UINT32_MAX, &v, err) < 0)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int get_id(const json_t *o, const char *path, const char *key, uint32_t *out, struct berth_error *err)
{
	json_int_t v;

	if (get_int(o, path, key, INT_MIN, INT_MAX, &v, err) < 0)
		return -1;
	*out = (uint32_t)(int)v;
	return 0;
}

static int get_bool(const json_t *o, const char *path, const char *key, bool *out, struct berth_error *err)
{
	json_t *v = member(o, path, key, JSON_TRUE, err);

	if (v == NULL)
		return -1;
	*out = json_is_true(v);
	return 0;
}

/* A key policy.c writes only as `true`: absent, or true. */
static int get_flag(const json_t *o, const char *path, const char *key, bool *out, struct berth_error *err)
{
	char p[PATH_LEN];

	*out = false;
	if (json_object_get(o, key) == NULL)
		return 0;
	if (get_bool(o, path, key, out, err) < 0)
		return -1;
	if (!*out) {
		sub(p, path, key);
		return bad(err, p, "is written only as true");
	}
	return 0;
}

/* An array of strings into a malloc'd vector with a NULL after its @n. */
static int get_strv(const json_t *o, const char *path, const char *key, char ***v, size_t *n,
		    struct berth_error *err)
{
	json_t *a = member(o, path, key, JSON_ARRAY, err), *s;
	char p[PATH_LEN], q[PATH_LEN];
	size_t i;

	if (a == NULL)
		return -1;
	sub(p, path, key);
	*v = calloc(json_array_size(a) + 1, sizeof **v);
	if (*v == NULL)
		return berth_err(err, ENOMEM, "cannot read the policy");
	json_array_foreach(a, i, s) {
		idx(q, p, i);
		if (!json_is_string(s))
			return bad(err, q, "is not a string");
		(*v)[i] = strdup(json_string_value(s));
		if ((*v)[i] == NULL)
			return berth_err(err, ENOMEM, "cannot read the policy");
		*n = i + 1;
	}
	return 0;
}

/* An array member whose strings must be exactly @want (@n_want of them). */
static int expect_strings(const json_t *o, const char *path, const char *key, const char *const *want,
			  size_t n_want, struct berth_error *err)
{
	json_t *a = member(o, path, key, JSON_ARRAY, err);
	char p[PATH_LEN];

	if (a == NULL)
		return -1;
	sub(p, path, key);
	if (json_array_size(a) != n_want)
		return bad(err, p, "differs from this build's");
	for (size_t i = 0; i < n_want; i++) {
		const char *s = json_string_value(json_array_get(a, i));
		if (s == NULL || strcmp(s, want[i]) != 0)
			return bad(err, p, "differs from this build's");
	}
	return 0;
}

/* ------------------------------------------------------------ filesystem */

/* filesystem.system_ro and filesystem.private_tmpfs: the default view's
 * attested rows (sysdirs.h), which this build must have as the host did. */
static int read_sysdirs(const json_t *fs, enum berth_sysdir_attest a, const char *key,
			struct berth_error *err)
{
	const char *want[32];
	size_t n = 0;

	for (size_t i = 0; i < berth_n_sysdirs && n < BERTH_ARRAY_SIZE(want); i++)
		if (berth_sysdirs[i].attest == a)
			want[n++] = berth_sysdirs[i].path;
	return expect_strings(fs, "filesystem", key, want, n, err);
}

static int read_mount(const json_t *m, const char *path, struct berth_mount *out, struct berth_error *err)
{
	static const char *const keys[] = {"source", "target", "access", "size",
					   "mode",   "inodes", "noexec", NULL};
	cleanup_free char *access = NULL;
	json_int_t v = 0;
	char p[PATH_LEN];

	if (!json_is_object(m))
		return bad(err, path, "is not an object");
	if (only_keys(m, path, keys, err) < 0 || get_str(m, path, "source", false, &out->src, err) < 0 ||
	    get_str(m, path, "target", false, &out->dst, err) < 0 ||
	    get_str(m, path, "access", false, &access, err) < 0)
		return -1;
	sub(p, path, "access");
	if (strcmp(access, "rw") != 0 && strcmp(access, "ro") != 0)
		return bad(err, p, "is neither `ro` nor `rw`");
	out->rw = strcmp(access, "rw") == 0;
	/* A container's tmpfs: its size, and "tmpfs" where a bind has its source. */
	if (json_object_get(m, "size") != NULL) {
		sub(p, path, "source");
		if (strcmp(out->src, "tmpfs") != 0 || !out->rw)
			return bad(err, p, "has a size but is not a read-write `tmpfs`");
		if (get_u64(m, path, "size", &out->tmpfs_size, err) < 0)
			return -1;
		free(steal_pointer(&out->src));
		out->tmpfs = true;
	}
	if (json_object_get(m, "mode") != NULL && get_int(m, path, "mode", 1, UINT32_MAX, &v, err) < 0)
		return -1;
	out->tmpfs_mode = json_object_get(m, "mode") != NULL ? (uint32_t)v : 0;
	if (json_object_get(m, "inodes") != NULL) {
		if (get_u64(m, path, "inodes", &out->tmpfs_inodes, err) < 0)
			return -1;
		if (out->tmpfs_inodes == 0) {
			sub(p, path, "inodes");
			return bad(err, p, "is written only when not 0");
		}
	}
	return get_flag(m, path, "noexec", &out->noexec, err);
}

static int read_mounts(const json_t *fs, struct berth_policy *p, struct berth_error *err)
{
	json_t *a = member(fs, "filesystem", "mounts", JSON_ARRAY, err), *m;
	char path[PATH_LEN];
	size_t i;

	if (a == NULL)
		return -1;
	p->mounts = calloc(json_array_size(a) + 1, sizeof *p->mounts);
	if (p->mounts == NULL)
		return berth_err(err, ENOMEM, "cannot read the policy");
	json_array_foreach(a, i, m) {
		idx(path, "filesystem.mounts", i);
		p->n_mounts = i + 1;
		if (read_mount(m, path, &p->mounts[i], err) < 0)
			return -1;
	}
	return 0;
}

static int read_grants(const json_t *fs, struct berth_policy *p, struct berth_error *err)
{
	static const char *const keys[] = {"path", "access", NULL};
	json_t *a = member(fs, "filesystem", "grants", JSON_ARRAY, err), *g;
	char path[PATH_LEN], q[PATH_LEN];
	size_t i;

	if (a == NULL)
		return -1;
	p->grants = calloc(json_array_size(a) + 1, sizeof *p->grants);
	if (p->grants == NULL)
		return berth_err(err, ENOMEM, "cannot read the policy");
	json_array_foreach(a, i, g) {
		cleanup_free char *access = NULL;

		idx(path, "filesystem.grants", i);
		if (!json_is_object(g))
			return bad(err, path, "is not an object");
		p->n_grants = i + 1;
		if (only_keys(g, path, keys, err) < 0 ||
		    get_str(g, path, "path", false, &p->grants[i].path, err) < 0 ||
		    get_str(g, path, "access", false, &access, err) < 0)
			return -1;
		sub(q, path, "access");
		if (strcmp(access, "rw") != 0 && strcmp(access, "ro") != 0)
			return bad(err, q, "is neither `ro` nor `rw`");
		p->grants[i].write = strcmp(access, "rw") == 0;
	}
	return 0;
}

/* Do the trust names, in table order, fill @ro[0..k) and @named[0..n_t - k)
 * as policy.c's guard_json() puts them under @p (its guard lists set to what
 * follows)? */
static bool guard_split_fits(const struct berth_policy *p, char *const *ro, size_t k, char *const *named,
			     size_t n_t)
{
	size_t r = 0, n = 0;

	for (size_t i = 0; berth_trust_names[i].name != NULL; i++) {
		const char *name = berth_trust_names[i].name;
		enum berth_trust t = berth_trust_lookup_path(p, "", name, NULL, NULL);

		if (t == BERTH_TRUST_READONLY ? r >= k || strcmp(ro[r++], name) != 0
					      : n >= n_t - k || strcmp(named[n++], name) != 0)
			return false;
	}
	return r == k && n == n_t - k;
}

/*
 * filesystem.guard: `git` is the git paths not opted out, `read-only` and
 * `named` each the trust names of that treatment (in table order) followed
 * by a rules file's guard.read-only / guard.named (an app's guard is empty:
 * its workspace is its own state directory).  Where the trust names end in
 * each list is found by trying every split and keeping the one guard_json()
 * reproduces: the treatments depend on the rules' names themselves, so they
 * cannot be read first.
 */
static int read_guard(const json_t *fs, struct berth_policy *p, struct berth_error *err)
{
	static const char *const keys[] = {"git", "read-only", "named", NULL};
	const char *git[16];
	size_t n_git = 0, n_t = 0, n_ro = 0, n_named = 0;
	char **ro = NULL, **named = NULL;
	json_t *g = member(fs, "filesystem", "guard", JSON_OBJECT, err);
	int rc = -1;

	if (g == NULL || only_keys(g, "filesystem.guard", keys, err) < 0)
		return -1;
	if (p->app)
		return expect_strings(g, "filesystem.guard", "git", NULL, 0, err) < 0 ||
			       expect_strings(g, "filesystem.guard", "read-only", NULL, 0, err) < 0 ||
			       expect_strings(g, "filesystem.guard", "named", NULL, 0, err) < 0
			   ? -1
			   : 0;
	for (size_t i = 0; berth_trust_git_paths[i] != NULL && n_git < BERTH_ARRAY_SIZE(git); i++)
		if (!berth_trust_git_unprotected(p, berth_trust_git_paths[i]))
			git[n_git++] = berth_trust_git_paths[i];
	while (berth_trust_names[n_t].name != NULL)
		n_t++;
	if (expect_strings(g, "filesystem.guard", "git", git, n_git, err) < 0 ||
	    get_strv(g, "filesystem.guard", "read-only", &ro, &n_ro, err) < 0 ||
	    get_strv(g, "filesystem.guard", "named", &named, &n_named, err) < 0)
		goto out;
	for (size_t k = n_t > n_named ? n_t - n_named : 0; k <= n_t && k <= n_ro; k++) {
		size_t kn = n_t - k; /* the trust names in `named` */

		p->guard_ro = ro + k;
		p->n_guard_ro = n_ro - k;
		p->guard_named = named + kn;
		p->n_guard_named = n_named - kn;
		if (!guard_split_fits(p, ro, k, named, n_t))
			continue;
		/* The trust names go; the rules' names keep their vectors. */
		for (size_t i = 0; i < k; i++)
			free(ro[i]);
		for (size_t i = 0; i < kn; i++)
			free(named[i]);
		memmove(ro, ro + k, (n_ro - k + 1) * sizeof *ro);
		memmove(named, named + kn, (n_named - kn + 1) * sizeof *named);
		p->guard_ro = steal_pointer(&ro);
		p->guard_named = steal_pointer(&named);
		return 0;
	}
	p->guard_ro = p->guard_named = NULL;
	p->n_guard_ro = p->n_guard_named = 0;
	bad(err, "filesystem.guard", "does not list this build's trust names as the policy treats them");
out:
	for (size_t i = 0; ro != NULL && i < n_ro; i++)
		free(ro[i]);
	free(ro);
	for (size_t i = 0; named != NULL && i < n_named; i++)
		free(named[i]);
	free(named);
	return rc;
}

/* filesystem.evidence: only that there is evidence, always the same. */
static int read_evidence(const json_t *fs, struct berth_error *err)
{
	json_t *e = json_object_get(fs, "evidence");
	json_t *want =
	    json_pack("{s:s, s:[ssss]}", "mount", "/evidence", "flags", "ro", "noexec", "nosuid", "nodev");
	bool same = want != NULL && json_equal(e, want);

	json_decref(want);
	if (want == NULL)
		return berth_err(err, ENOMEM, "cannot read the policy");
	return same ? 0
		    : bad(err, "filesystem.evidence", "is not /evidence read-only, noexec, nosuid, nodev");
}

/* filesystem.review: --review's layer and its size (docs/review.md). */
static int read_review(const json_t *fs, struct berth_policy *p, struct berth_error *err)
{
	static const char *const keys[] = {"layer", "size_bytes", NULL};
	json_t *r = member(fs, "filesystem", "review", JSON_OBJECT, err);
	const char *layer;

	if (r == NULL || only_keys(r, "filesystem.review", keys, err) < 0 ||
	    get_u64(r, "filesystem.review", "size_bytes", &p->review_size, err) < 0)
		return -1;
	layer = json_string_value(json_object_get(r, "layer"));
	if (layer == NULL || strcmp(layer, "overlay") != 0)
		return bad(err, "filesystem.review.layer", "is not \"overlay\"");
	p->review = true;
	return 0;
}

static int read_filesystem(const json_t *top, struct berth_policy *p, struct berth_error *err)
{
	static const char *const keys[] = {"workspace", "system_ro", "private_tmpfs", "mounts", "guard",
					   "unprotect", "evidence",  "home",          "grants", "review",
					   NULL};
	json_t *fs = member(top, "", "filesystem", JSON_OBJECT, err);

	if (fs == NULL || only_keys(fs, "filesystem", keys, err) < 0 ||
	    get_str(fs, "filesystem", "workspace", true, &p->workspace, err) < 0 ||
	    read_sysdirs(fs, BERTH_ATTEST_SYSTEM_RO, "system_ro", err) < 0 ||
	    read_sysdirs(fs, BERTH_ATTEST_PRIVATE_TMPFS, "private_tmpfs", err) < 0 ||
	    read_mounts(fs, p, err) < 0 ||
	    get_strv(fs, "filesystem", "unprotect", &p->unprotect, &p->n_unprotect, err) < 0 ||
	    read_guard(fs, p, err) < 0)
		return -1;
	/* The evidence directory's host path is the caller's to set (it is
	 * not in the JSON): left NULL. */
	if (json_object_get(fs, "evidence") != NULL && read_evidence(fs, err) < 0)
		return -1;
	if (json_object_get(fs, "home") != NULL &&
	    get_str(fs, "filesystem", "home", false, &p->home_dir, err) < 0)
		return -1;
	if (json_object_get(fs, "review") != NULL && read_review(fs, p, err) < 0)
		return -1;
	if (p->app)
		return read_grants(fs, p, err);
	if (json_object_get(fs, "grants") != NULL)
		return bad(err, "filesystem.grants", "is only in an app's policy");
	return 0;
}

/* ------------------------------------------------------- the other parts */

static int read_limits(const json_t *top, struct berth_policy *p, struct berth_error *err)
{
	static const char *const keys[] = {"memory_bytes", "millicpus",  "pids", "nofile",
					   "tmp_bytes",    "timeout_ms", NULL};
	json_t *l = member(top, "", "limits", JSON_OBJECT, err);

	if (l == NULL || only_keys(l, "limits", keys, err) < 0 ||
	    get_u64(l, "limits", "memory_bytes", &p->memory, err) < 0 ||
	    get_u32(l, "limits", "millicpus", &p->millicpus, err) < 0 ||
	    get_u32(l, "limits", "pids", &p->pids, err) < 0 ||
	    get_u32(l, "limits", "nofile", &p->nofile, err) < 0 ||
	    get_u64(l, "limits", "tmp_bytes", &p->tmp_size, err) < 0 ||
	    get_u64(l, "limits", "timeout_ms", &p->timeout_ms, err) < 0)
		return -1;
	return 0;
}

/* network.credentials: the bindings' canonical texts (credential.h). */
static int read_credentials(const json_t *n, struct berth_policy *p, struct berth_error *err)
{
	char **v = NULL;
	size_t nv = 0;
	int rc = 0;

	if (json_object_get(n, "credentials") == NULL)
		return 0;
	if (get_strv(n, "network", "credentials", &v, &nv, err) < 0)
		return -1;
	if (nv == 0 || nv > BERTH_CRED_MAX || (p->credentials = calloc(nv, sizeof *p->credentials)) == NULL)
		rc = nv == 0 || nv > BERTH_CRED_MAX
			 ? bad(err, "network.credentials", "holds 1 to 16 bindings")
			 : berth_err(err, ENOMEM, "out of memory");
	for (size_t i = 0; rc == 0 && i < nv; i++) {
		char why[512];
		int r = berth_credential_parse(v[i], &p->credentials[i], why, sizeof why);
		if (r < 0)
			rc = r == -2 ? berth_err(err, ENOMEM, "out of memory")
				     : bad(err, "network.credentials", "holds a binding that is not one");
		else
			p->n_credentials++;
	}
	for (size_t i = 0; i < nv; i++)
		free(v[i]);
	free(v);
	return rc;
}

/* network.ssh: the --ssh keys (fingerprints) and pinned known_hosts lines. */
static int read_ssh(const json_t *n, struct berth_policy *p, struct berth_error *err)
{
	static const char *const keys[] = {"keys", "known_hosts", NULL};
	json_t *s = json_object_get(n, "ssh");

	if (s == NULL)
		return 0;
	s = member(n, "network", "ssh", JSON_OBJECT, err);
	if (s == NULL || only_keys(s, "network.ssh", keys, err) < 0 ||
	    get_strv(s, "network.ssh", "keys", &p->ssh_keys, &p->n_ssh_keys, err) < 0 ||
	    get_strv(s, "network.ssh", "known_hosts", &p->ssh_known_hosts, &p->n_ssh_known_hosts, err) < 0)
		return -1;
	for (size_t i = 0; i < p->n_ssh_keys; i++)
		if (!berth_ssh_fp_valid(p->ssh_keys[i]))
			return bad(err, "network.ssh.keys", "holds a string that is no SHA256 fingerprint");
	if (p->n_ssh_keys == 0 && p->n_ssh_known_hosts == 0)
		return bad(err, "network.ssh", "holds no key and no host");
	return 0;
}

/* network: the mode, and in proxy mode only the broker's allow-hosts and
 * DNS server. */
static int read_network(const json_t *top, struct berth_policy *p, struct berth_error *err)
{
	static const char *const keys[] = {"mode", "allow_hosts", "dns", "credentials", "ssh", NULL};
	json_t *n = member(top, "", "network", JSON_OBJECT, err);
	cleanup_free char *mode = NULL;

	if (n == NULL || only_keys(n, "network", keys, err) < 0 ||
	    get_str(n, "network", "mode", false, &mode, err) < 0)
		return -1;
	if (strcmp(mode, "none") == 0)
		p->network = BERTH_NET_NONE;
	else if (strcmp(mode, "host") == 0)
		p->network = BERTH_NET_HOST;
	else if (strcmp(mode, "proxy") == 0)
		p->network = BERTH_NET_PROXY;
	else
		return bad(err, "network.mode", "is none of `none`, `host`, `proxy`");
	if (p->network != BERTH_NET_PROXY) {
		if (json_object_get(n, "allow_hosts") != NULL)
			return bad(err, "network.allow_hosts", "is only in proxy mode");
		if (json_object_get(n, "dns") != NULL)
			return bad(err, "network.dns", "is only in proxy mode");
		if (json_object_get(n, "credentials") != NULL)
			return bad(err, "network.credentials", "is only in proxy mode");
		if (json_object_get(n, "ssh") != NULL)
			return bad(err, "network.ssh", "is only in proxy mode");
		return 0;
	}
	if (get_strv(n, "network", "allow_hosts", &p->allow_hosts, &p->n_allow_hosts, err) < 0)
		return -1;
	if (json_object_get(n, "dns") != NULL && get_str(n, "network", "dns", false, &p->dns, err) < 0)
		return -1;
	return read_credentials(n, p, err) < 0 ? -1 : read_ssh(n, p, err);
}

/* env: each variable's name and origin; its value is the caller's to set
 * (the JSON never holds it): left NULL. */
static int read_env(const json_t *top, struct berth_policy *p, struct berth_error *err)
{
	static const char *const keys[] = {"name", "from", NULL};
	json_t *a = member(top, "", "env", JSON_ARRAY, err), *e;
	char path[PATH_LEN], q[PATH_LEN];
	size_t i;

	if (a == NULL)
		return -1;
	p->env = calloc(json_array_size(a) + 1, sizeof *p->env);
	if (p->env == NULL)
		return berth_err(err, ENOMEM, "cannot read the policy");
	json_array_foreach(a, i, e) {
		cleanup_free char *from = NULL;

		idx(path, "env", i);
		if (!json_is_object(e))
			return bad(err, path, "is not an object");
		p->n_env = i + 1;
		if (only_keys(e, path, keys, err) < 0 ||
		    get_str(e, path, "name", false, &p->env[i].name, err) < 0 ||
		    get_str(e, path, "from", false, &from, err) < 0)
			return -1;
		p->env[i].from_file = strcmp(from, "file") == 0;
		p->env[i].from_host = strcmp(from, "host") == 0;
		sub(q, path, "from");
		if (!p->env[i].from_file && !p->env[i].from_host && strcmp(from, "literal") != 0)
			return bad(err, q, "is none of `file`, `host`, `literal`");
	}
	return 0;
}

static int read_rlimits(const json_t *c, struct berth_container *out, struct berth_error *err)
{
	static const char *const keys[] = {"resource", "soft", "hard", NULL};
	json_t *a = member(c, "container", "rlimits", JSON_ARRAY, err), *r;
	char path[PATH_LEN];
	size_t i;

	if (a == NULL)
		return -1;
	if (json_array_size(a) > BERTH_CONTAINER_RLIMITS_MAX)
		return bad(err, "container.rlimits", "has more rlimits than a container can");
	json_array_foreach(a, i, r) {
		struct berth_rlimit *rl = &out->rlimits[i];
		uint32_t res;

		idx(path, "container.rlimits", i);
		if (!json_is_object(r))
			return bad(err, path, "is not an object");
		if (only_keys(r, path, keys, err) < 0 || get_id(r, path, "resource", &res, err) < 0 ||
		    get_u64(r, path, "soft", &rl->soft, err) < 0 ||
		    get_u64(r, path, "hard", &rl->hard, err) < 0)
			return -1;
		rl->resource = (int)res;
		out->n_rlimits = i + 1;
	}
	return 0;
}

/* container.id_ranges: written only when the uid range is not empty. */
static int read_id_ranges(const json_t *c, struct berth_container *out, struct berth_error *err)
{
	static const char *const keys[] = {"uid", "gid", NULL};
	static const char *const which[] = {"uid", "gid"};
	struct berth_idrange *r[] = {&out->uid_range, &out->gid_range};
	json_t *ranges = member(c, "container", "id_ranges", JSON_OBJECT, err);

	if (ranges == NULL || only_keys(ranges, "container.id_ranges", keys, err) < 0)
		return -1;
	for (size_t k = 0; k < 2; k++) {
		json_t *a = member(ranges, "container.id_ranges", which[k], JSON_ARRAY, err);
		uint32_t *v[] = {&r[k]->inside, &r[k]->host, &r[k]->size};
		char path[PATH_LEN];

		if (a == NULL)
			return -1;
		sub(path, "container.id_ranges", which[k]);
		if (json_array_size(a) != 3)
			return bad(err, path, "is not [inside, host, size]");
		for (size_t i = 0; i < 3; i++) {
			json_t *n = json_array_get(a, i);
			if (!json_is_integer(n) || json_integer_value(n) < 0 ||
			    json_integer_value(n) > UINT32_MAX)
				return bad(err, path, "is not three integers of 0 to 4294967295");
			*v[i] = (uint32_t)json_integer_value(n);
		}
	}
	return out->uid_range.size == 0
		   ? bad(err, "container.id_ranges.uid", "is written only when not empty")
		   : 0;
}

/* container: a container's policy (`berth oci`).  Its seccomp profile is
 * written as a digest only: the caller must set c->seccomp (left NULL). */
static int read_container(const json_t *top, struct berth_policy *p, struct berth_error *err)
{
	static const char *const keys[] = {
	    "id",    "root",     "root_rw", "workspace_at", "cwd",       "uid",
	    "gid",   "hostname", "rlimits", "masked",       "readonly",  "seccomp_sha256",
	    "netns", "ipcns",    "utsns",   "umask",        "id_ranges", NULL};
	json_t *c = member(top, "", "container", JSON_OBJECT, err);
	struct berth_container *o;
	char *digest = NULL;

	if (c == NULL || only_keys(c, "container", keys, err) < 0)
		return -1;
	o = p->container = calloc(1, sizeof *p->container);
	if (o == NULL)
		return berth_err(err, ENOMEM, "cannot read the policy");
	if (get_str(c, "container", "id", true, &o->id, err) < 0 ||
	    get_str(c, "container", "root", true, &o->root, err) < 0 ||
	    get_bool(c, "container", "root_rw", &o->root_rw, err) < 0 ||
	    get_str(c, "container", "workspace_at", true, &o->workspace_at, err) < 0 ||
	    get_str(c, "container", "cwd", true, &o->cwd, err) < 0 ||
	    get_id(c, "container", "uid", &o->uid, err) < 0 ||
	    get_id(c, "container", "gid", &o->gid, err) < 0 ||
	    get_str(c, "container", "hostname", true, &o->hostname, err) < 0 || read_rlimits(c, o, err) < 0 ||
	    get_strv(c, "container", "masked", &o->masked, &o->n_masked, err) < 0 ||
	    get_strv(c, "container", "readonly", &o->readonly, &o->n_readonly, err) < 0 ||
	    get_str(c, "container", "seccomp_sha256", true, &digest, err) < 0 ||
	    get_str(c, "container", "netns", true, &o->netns, err) < 0)
		return -1;
	free(digest);
	if ((json_object_get(c, "ipcns") != NULL &&
	     get_str(c, "container", "ipcns", false, &o->ipcns, err) < 0) ||
	    (json_object_get(c, "utsns") != NULL &&
	     get_str(c, "container", "utsns", false, &o->utsns, err) < 0) ||
	    (json_object_get(c, "id_ranges") != NULL && read_id_ranges(c, o, err) < 0))
		return -1;
	o->has_umask = json_object_get(c, "umask") != NULL;
	return o->has_umask ? get_u32(c, "container", "umask", &o->umask, err) : 0;
}

static int read_app(const json_t *top, struct berth_policy *p, struct berth_error *err)
{
	static const char *const keys[] = {"name", "version", "digest", NULL};
	json_t *a = member(top, "", "app", JSON_OBJECT, err);

	p->app = true;
	if (a == NULL || only_keys(a, "app", keys, err) < 0 ||
	    get_str(a, "app", "name", true, &p->app_name, err) < 0 ||
	    get_str(a, "app", "version", true, &p->app_version, err) < 0 ||
	    get_str(a, "app", "digest", true, &p->app_digest, err) < 0)
		return -1;
	return 0;
}

static int read_top(const json_t *top, struct berth_policy *p, struct berth_error *err)
{
	static const char *const keys[] = {"schema",  "filesystem",     "limits",   "network",   "env",
					   "command", "allow_degraded", "forensic", "container", "app",
					   NULL};
	json_int_t schema;

	if (!json_is_object(top))
		return bad(err, "", "is not an object");
	if (only_keys(top, "", keys, err) < 0 ||
	    get_int(top, "", "schema", LLONG_MIN, LLONG_MAX, &schema, err) < 0)
		return -1;
	if (schema != BERTH_POLICY_SCHEMA)
		return bad(err, "schema", "is not this build's (1)");
	if (get_strv(top, "", "command", &p->argv, &p->argc, err) < 0 ||
	    get_bool(top, "", "allow_degraded", &p->allow_degraded, err) < 0 ||
	    get_flag(top, "", "forensic", &p->forensic, err) < 0)
		return -1;
	return 0;
}

int berth_policy_from_json(const char *json, size_t len, struct berth_policy *p, struct berth_error *err)
{
	json_error_t je;
	json_t *top = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
	int rc;

	berth_policy_init(p);
	if (top == NULL) {
		berth_err(err, 0, "policy JSON: not JSON at line %d, column %d: %s", je.line, je.column,
			  je.text);
		return berth_err_hint(err,
				      "the policy must be the canonical JSON berth_policy_to_json() writes");
	}
	/* The app's part first: it decides the guard's and the grants'. */
	rc = read_top(top, p, err) < 0 ||
		     (json_object_get(top, "app") != NULL && read_app(top, p, err) < 0) ||
		     (json_object_get(top, "container") != NULL && read_container(top, p, err) < 0) ||
		     read_limits(top, p, err) < 0 || read_network(top, p, err) < 0 ||
		     read_env(top, p, err) < 0 || read_filesystem(top, p, err) < 0
		 ? -1
		 : 0;
	json_decref(top);
	if (rc < 0)
		berth_policy_free(p);
	return rc;
}
