/* SPDX-License-Identifier: MIT */
/*
 * policy.c - the policy's defaults, canonical JSON form and digest.
 */
#include "policy.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"
#include "../util/sha256.h"
#include "credential.h"
#include "sysdirs.h"
#include "trust.h"

void berth_policy_init(struct berth_policy *p)
{
	memset(p, 0, sizeof *p);
	p->tmp_size = BERTH_DEFAULT_TMP_SIZE;
	p->review_size = BERTH_DEFAULT_REVIEW_SIZE;
	p->memory = BERTH_DEFAULT_MEMORY;
	p->millicpus = BERTH_DEFAULT_MILLICPUS;
	p->pids = BERTH_DEFAULT_PIDS;
	p->nofile = BERTH_DEFAULT_NOFILE;
	p->network = BERTH_NET_NONE;
}

/* The @n strings of @v, and @v. */
static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void berth_container_free(struct berth_container *c)
{
	if (c == NULL)
		return;
	free(c->id);
	free(c->root);
	free(c->workspace_at);
	free(c->cwd);
	free(c->hostname);
	free_strv(c->masked, c->n_masked);
	free_strv(c->readonly, c->n_readonly);
	free(c->seccomp);
	free(c->netns);
	free(c->ipcns);
	free(c->utsns);
	free(c);
}

static json_t *strv_json(char *const *v, size_t n);

/* The container's part of the canonical JSON: what is enforced from the
 * bundle (the engine's seccomp profile by its SHA-256). */
static json_t *container_json(const struct berth_container *c)
{
	json_t *rl = json_array(), *j;
	char hex[65] = "";
	struct berth_error ignored = {0};

	if (rl == NULL)
		return NULL;
	for (size_t i = 0; i < c->n_rlimits; i++)
		if (json_array_append_new(rl, json_pack("{s:i, s:I, s:I}", "resource", c->rlimits[i].resource,
							"soft", (json_int_t)c->rlimits[i].soft, "hard",
							(json_int_t)c->rlimits[i].hard)) < 0) {
			json_decref(rl);
			return NULL;
		}
	if (c->seccomp != NULL && berth_sha256_hex(c->seccomp, strlen(c->seccomp), hex, &ignored) < 0) {
		json_decref(rl);
		return NULL;
	}
	j = json_pack("{s:s?, s:s?, s:b, s:s?, s:s?, s:i, s:i, s:s?, s:o, s:o*, s:o*, s:s?, s:s?}", "id",
		      c->id, "root", c->root, "root_rw", c->root_rw, "workspace_at", c->workspace_at, "cwd",
		      c->cwd, "uid", (int)c->uid, "gid", (int)c->gid, "hostname", c->hostname, "rlimits", rl,
		      "masked", strv_json(c->masked, c->n_masked), "readonly",
		      strv_json(c->readonly, c->n_readonly), "seccomp_sha256",
		      c->seccomp != NULL ? hex : NULL, "netns", c->netns);
	if (j != NULL && c->ipcns != NULL)
		json_object_set_new(j, "ipcns", json_string(c->ipcns));
	if (j != NULL && c->utsns != NULL)
		json_object_set_new(j, "utsns", json_string(c->utsns));
	if (j != NULL && c->has_umask)
		json_object_set_new(j, "umask", json_integer(c->umask));
	if (j != NULL && c->uid_range.size > 0)
		json_object_set_new(j, "id_ranges",
				    json_pack("{s:[I,I,I], s:[I,I,I]}", "uid",
					      (json_int_t)c->uid_range.inside, (json_int_t)c->uid_range.host,
					      (json_int_t)c->uid_range.size, "gid",
					      (json_int_t)c->gid_range.inside, (json_int_t)c->gid_range.host,
					      (json_int_t)c->gid_range.size));
	return j;
}

void berth_policy_free(struct berth_policy *p)
{
	free(p->workspace);
	free(p->home_dir);
	for (size_t i = 0; i < p->n_mounts; i++) {
		free(p->mounts[i].src);
		free(p->mounts[i].dst);
		free(p->mounts[i].given);
	}
	free(p->mounts);
	free_strv(p->allow_hosts, p->n_allow_hosts);
	for (size_t i = 0; i < p->n_credentials; i++)
		berth_credential_clear(&p->credentials[i]);
	free(p->credentials);
	free_strv(p->ssh_keys, p->n_ssh_keys);
	free_strv(p->ssh_known_hosts, p->n_ssh_known_hosts);
	free(p->dns);
	free(p->evidence_dir);
	free(p->app_name);
	free(p->app_version);
	free(p->app_digest);
	for (size_t i = 0; i < p->n_grants; i++)
		free(p->grants[i].path);
	free(p->grants);
	free_strv(p->unprotect, p->n_unprotect);
	free_strv(p->guard_ro, p->n_guard_ro);
	free_strv(p->guard_named, p->n_guard_named);
	for (size_t i = 0; i < p->n_env; i++) {
		free(p->env[i].name);
		if (p->env[i].value != NULL)
			explicit_bzero(p->env[i].value, strlen(p->env[i].value));
		free(p->env[i].value);
	}
	free(p->env);
	free_strv(p->argv, p->argc);
	berth_container_free(p->container);
	berth_policy_init(p);
}

const char *berth_network_name(enum berth_network n)
{
	static const char *const names[] = {
	    [BERTH_NET_NONE] = "none", [BERTH_NET_HOST] = "host", [BERTH_NET_PROXY] = "proxy"};

	return (unsigned)n < BERTH_ARRAY_SIZE(names) ? names[n] : "none";
}

/* json_pack with "I" takes json_int_t; all our integers fit. */
static json_t *limits_json(const struct berth_policy *p)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "memory_bytes", (json_int_t)p->memory, "millicpus",
			 (json_int_t)p->millicpus, "pids", (json_int_t)p->pids, "nofile",
			 (json_int_t)p->nofile, "tmp_bytes", (json_int_t)p->tmp_size, "timeout_ms",
			 (json_int_t)p->timeout_ms);
}

static json_t *mounts_json(const struct berth_policy *p)
{
	json_t *a = json_array();

	if (a == NULL)
		return NULL;
	/* Fixed entries of the namespace runtime's root, then the user's. */
	for (size_t i = 0; i < p->n_mounts; i++) {
		json_t *m =
		    p->mounts[i].tmpfs
			? json_pack("{s:s, s:s, s:s, s:I}", "source", "tmpfs", "target", p->mounts[i].dst,
				    "access", "rw", "size", (json_int_t)p->mounts[i].tmpfs_size)
			: json_pack("{s:s, s:s, s:s}", "source", p->mounts[i].src, "target", p->mounts[i].dst,
				    "access", p->mounts[i].rw ? "rw" : "ro");
		if (m != NULL && p->mounts[i].tmpfs_mode != 0)
			json_object_set_new(m, "mode", json_integer(p->mounts[i].tmpfs_mode));
		if (m != NULL && p->mounts[i].tmpfs_inodes != 0)
			json_object_set_new(m, "inodes", json_integer((json_int_t)p->mounts[i].tmpfs_inodes));
		if (m != NULL && p->mounts[i].noexec)
			json_object_set_new(m, "noexec", json_true());
		if (m == NULL || json_array_append_new(a, m) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *env_json(const struct berth_policy *p)
{
	json_t *a = json_array();

	if (a == NULL)
		return NULL;
	for (size_t i = 0; i < p->n_env; i++) {
		json_t *e;

		/* Every value may be a secret (a literal on the command line
		 * too: issue 6 asks for names only in the audit trail, which
		 * records the policy): the policy names each variable and where
		 * its value comes from, never the value nor its digest, which
		 * would let a short secret be guessed offline. */
		e = json_pack("{s:s, s:s}", "name", p->env[i].name, "from",
			      p->env[i].from_file   ? "file"
			      : p->env[i].from_host ? "host"
						    : "literal");
		if (e == NULL || json_array_append_new(a, e) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *strv_json(char *const *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a != NULL && i < n; i++) {
		if (json_array_append_new(a, json_string(v[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *grants_json(const struct berth_policy *p)
{
	json_t *a = json_array();

	for (size_t i = 0; a != NULL && i < p->n_grants; i++) {
		json_t *g = json_pack("{s:s, s:s}", "path", p->grants[i].path, "access",
				      p->grants[i].write ? "rw" : "ro");
		if (g == NULL || json_array_append_new(a, g) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* The guard as the policy records it: git's rules (minus the git paths
 * opted out) and the trust names by treatment (trust.h). */
static json_t *guard_json(const struct berth_policy *p)
{
	json_t *g = json_object(), *git = json_array(), *ro = json_array(), *named = json_array();

	if (g == NULL || git == NULL || ro == NULL || named == NULL ||
	    json_object_set_new(g, "git", git) < 0 || json_object_set_new(g, "read-only", ro) < 0 ||
	    json_object_set_new(g, "named", named) < 0) {
		json_decref(g);
		return NULL;
	}
	if (p->app)
		return g; /* an app's workspace is its own state directory */
	for (size_t i = 0; berth_trust_git_paths[i] != NULL; i++)
		if (!berth_trust_git_unprotected(p, berth_trust_git_paths[i]) &&
		    json_array_append_new(git, json_string(berth_trust_git_paths[i])) < 0)
			goto fail;
	for (size_t i = 0; berth_trust_names[i].name != NULL; i++) {
		enum berth_trust t = berth_trust_lookup_path(p, "", berth_trust_names[i].name, NULL, NULL);
		if (json_array_append_new(t == BERTH_TRUST_READONLY ? ro : named,
					  json_string(berth_trust_names[i].name)) < 0)
			goto fail;
	}
	for (size_t i = 0; i < p->n_guard_ro; i++)
		if (json_array_append_new(ro, json_string(p->guard_ro[i])) < 0)
			goto fail;
	for (size_t i = 0; i < p->n_guard_named; i++)
		if (json_array_append_new(named, json_string(p->guard_named[i])) < 0)
			goto fail;
	return g;
fail:
	json_decref(g);
	return NULL;
}

/* The default view's rows attested as @a, in table order (sysdirs.h). */
static json_t *sysdirs_json(enum berth_sysdir_attest a)
{
	json_t *v = json_array();

	for (size_t i = 0; v != NULL && i < berth_n_sysdirs; i++)
		if (berth_sysdirs[i].attest == a &&
		    json_array_append_new(v, json_string(berth_sysdirs[i].path)) < 0) {
			json_decref(v);
			return NULL;
		}
	return v;
}

static json_t *policy_json(const struct berth_policy *p)
{
	json_t *fs = json_pack("{s:s?, s:o*, s:o*, s:o*, s:o*, s:o*}", "workspace", p->workspace, "system_ro",
			       sysdirs_json(BERTH_ATTEST_SYSTEM_RO), "private_tmpfs",
			       sysdirs_json(BERTH_ATTEST_PRIVATE_TMPFS), "mounts", mounts_json(p), "guard",
			       guard_json(p), "unprotect", strv_json(p->unprotect, p->n_unprotect));

	json_t *j = json_pack("{s:i, s:o*, s:o*, s:{s:s}, s:o*, s:o*, s:b}", "schema", BERTH_POLICY_SCHEMA,
			      "filesystem", fs, "limits", limits_json(p), "network", "mode",
			      berth_network_name(p->network), "env", env_json(p), "command",
			      strv_json(p->argv, p->argc), "allow_degraded", p->allow_degraded);

	/* Evidence and the forensic preset, only when asked for (other
	 * policies keep their form and digest). */
	if (j != NULL && p->evidence_dir != NULL)
		json_object_set_new(json_object_get(j, "filesystem"), "evidence",
				    json_pack("{s:s, s:[ssss]}", "mount", "/evidence", "flags", "ro",
					      "noexec", "nosuid", "nodev"));
	if (j != NULL && p->forensic)
		json_object_set_new(j, "forensic", json_true());
	/* --review, only when asked for (other policies keep their form and
	 * digest): the workspace is a copy-on-write layer (docs/review.md). */
	if (j != NULL && p->review)
		json_object_set_new(
		    json_object_get(j, "filesystem"), "review",
		    json_pack("{s:s, s:I}", "layer", "overlay", "size_bytes", (json_int_t)p->review_size));

	/* The broker's rules, only in proxy mode (other policies keep their
	 * form and digest). */
	if (j != NULL && p->network == BERTH_NET_PROXY) {
		json_t *net = json_object_get(j, "network");
		if (json_object_set_new(net, "allow_hosts", strv_json(p->allow_hosts, p->n_allow_hosts)) <
			0 ||
		    (p->dns != NULL && json_object_set_new(net, "dns", json_string(p->dns)) < 0)) {
			json_decref(j);
			return NULL;
		}
		/* only with --credential: other policies keep their form and digest */
		json_t *cv = p->n_credentials > 0 ? json_array() : NULL;
		for (size_t i = 0; cv != NULL && i < p->n_credentials; i++) {
			char text[BERTH_CRED_TEXT_MAX];
			if (berth_credential_format(&p->credentials[i], text, sizeof text) < 0 ||
			    json_array_append_new(cv, json_string(text)) < 0) {
				json_decref(cv);
				cv = NULL;
				break;
			}
		}
		if (p->n_credentials > 0 && (cv == NULL || json_object_set_new(net, "credentials", cv) < 0)) {
			json_decref(j);
			return NULL;
		}
		/* only with --ssh or --ssh-host: other policies keep their form and digest */
		if ((p->n_ssh_keys > 0 || p->n_ssh_known_hosts > 0) &&
		    json_object_set_new(net, "ssh",
					json_pack("{s:o*, s:o*}", "keys",
						  strv_json(p->ssh_keys, p->n_ssh_keys), "known_hosts",
						  strv_json(p->ssh_known_hosts, p->n_ssh_known_hosts))) < 0) {
			json_decref(j);
			return NULL;
		}
	}
	/* Only with a persistent home (other policies keep their form and
	 * digest). */
	if (j != NULL && p->home_dir != NULL &&
	    json_object_set_new(json_object_get(j, "filesystem"), "home", json_string(p->home_dir)) < 0) {
		json_decref(j);
		return NULL;
	}
	/* Only a container's policy has this key. */
	if (j != NULL && p->container != NULL &&
	    json_object_set_new(j, "container", container_json(p->container)) < 0) {
		json_decref(j);
		return NULL;
	}
	/* Only an app's policy has these keys: a `berth run` policy keeps its
	 * form (and digest). */
	if (j != NULL && p->app) {
		json_t *fsj = json_object_get(j, "filesystem");
		if (json_object_set_new(fsj, "grants", grants_json(p)) < 0 ||
		    json_object_set_new(j, "app",
					json_pack("{s:s?, s:s?, s:s?}", "name", p->app_name, "version",
						  p->app_version, "digest", p->app_digest)) < 0) {
			json_decref(j);
			return NULL;
		}
	}
	return j;
}

char *berth_policy_to_json(const struct berth_policy *p, bool pretty, struct berth_error *err)
{
	json_t *j = policy_json(p);
	char *s;

	if (j == NULL) {
		berth_err(err, ENOMEM, "cannot build the policy's JSON form");
		return NULL;
	}
	s = json_dumps(j, JSON_SORT_KEYS | (pretty ? JSON_INDENT(2) : JSON_COMPACT));
	json_decref(j);
	if (s == NULL)
		berth_err(err, ENOMEM, "cannot serialise the policy");
	return s;
}

int berth_policy_digest(const struct berth_policy *p, char hex[65], struct berth_error *err)
{
	cleanup_free char *s = berth_policy_to_json(p, false, err);

	if (s == NULL)
		return -1;
	return berth_sha256_hex(s, strlen(s), hex, err);
}
