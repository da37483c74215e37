/* SPDX-License-Identifier: MIT */
/*
 * bundle_annotations.c - the annotations of a bundle's config.json that
 * berth reads (berth.dev/workspace, allow-hosts, audit-dir, writable-root,
 * profile; docs/oci.md, "Annotations berth reads"); every other berth.dev/
 * name is refused, the engine's own are kept for `state`.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../policy/hostpat.h"
#include "../util/cleanup.h"
#include "oci_int.h"

/* ---------------------------------------------------------- annotations */

#define BERTH_ANNOTATION_PREFIX "berth.dev/"

/* berth.dev/workspace: the bind mount at that destination is the
 * workspace (guarded, idmapped like `berth run`'s), not an extra mount. */
static int annotation_workspace(const char *dst, struct berth_oci_bundle *b, struct berth_error *err)
{
	struct berth_policy *p = &b->policy;
	cleanup_free char *canon = NULL;

	if (berth_oci_container_path(dst, "annotations.berth.dev/workspace", &canon, err) < 0)
		return -1;
	for (size_t i = 0; i < p->n_mounts; i++) {
		struct berth_mount *m = &p->mounts[i];
		if (m->tmpfs || strcmp(m->dst, canon) != 0)
			continue;
		if (!m->rw)
			return berth_oci_bad(
			    err, "annotations.berth.dev/workspace",
			    "names `%s`, a read-only mount: the workspace is read-write (mount it "
			    "rw, or drop the annotation)",
			    canon);
		if (strcmp(canon, "/") == 0)
			return berth_oci_bad(err, "annotations.berth.dev/workspace", "cannot be `/`");
		p->workspace = steal_pointer(&m->src);
		p->container->workspace_at = steal_pointer(&m->dst);
		free(m->given);
		memmove(m, m + 1, (p->n_mounts - i - 1) * sizeof *m);
		p->n_mounts--;
		return 0;
	}
	berth_usage_err(
	    err,
	    "config.json: `annotations.berth.dev/workspace` names `%s`, and no bind mount has that "
	    "destination",
	    canon);
	return berth_err_hint(err, "bind the workspace there (podman: -v DIR:%s) or fix the annotation",
			      canon);
}

/*
 * berth.dev/allow-hosts: patterns separated by commas or white space (a
 * pattern never holds either).  White space too because podman's
 * --annotation is a comma-separated list of its own: `--annotation
 * berth.dev/allow-hosts=a,b` is two annotations to podman, the second
 * refused ("annotations must be formatted KEY=VALUE"); `=a b` is one.
 */
int berth_oci_add_allow_host(struct berth_policy *p, const char *tok, const char *what,
			     struct berth_error *err)
{
	struct berth_host_pattern pat;
	char reason[BERTH_HOST_REASON_MAX], canon[BERTH_HOST_PATTERN_STRLEN];
	char **v;

	if (berth_host_pattern_parse(tok, &pat, reason, sizeof reason) < 0) {
		berth_usage_err(err, "config.json: `%s`: %s", what, reason);
		return berth_err_hint(err, "a list of host, *.domain, IP or [IPv6], each optionally :PORT "
					   "or :*, separated by commas or spaces (docs/egress.md)");
	}
	if (berth_host_pattern_format(&pat, canon, sizeof canon) < 0)
		return berth_err(err, EINVAL, "cannot format the allow-host `%.64s`", tok);
	for (size_t i = 0; i < p->n_allow_hosts; i++)
		if (strcmp(p->allow_hosts[i], canon) == 0)
			return 0;
	if ((v = realloc(p->allow_hosts, (p->n_allow_hosts + 1) * sizeof *v)) == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	p->allow_hosts = v;
	if ((v[p->n_allow_hosts] = berth_oci_strdup(canon, err)) == NULL)
		return -1;
	p->n_allow_hosts++;
	return 0;
}

int berth_oci_egress_on(struct berth_oci_bundle *b, const char *what, struct berth_error *err)
{
	struct berth_policy *p = &b->policy;

	if (p->network == BERTH_NET_PROXY)
		return 0;
	/* A pod's network (a Kubernetes Pod's, whose annotations reach every
	 * container): the supervisor still joins it, and the broker connects
	 * from there; the sandbox gets a namespace of its own whose only way
	 * out is the broker (it shares none of the pod's addresses). */
	if (p->container->netns != NULL &&
	    berth_oci_note(
		b, err,
		"%s with the pod's network `%s`: the container gets a network namespace of its own, "
		"whose only way out is berth's broker, which connects from the pod's network (the "
		"container does not share the pod's addresses or loopback)",
		what, p->container->netns) < 0)
		return -1;
	p->network = BERTH_NET_PROXY;
	return 0;
}

static int annotation_allow_hosts(const char *list, struct berth_oci_bundle *b, struct berth_error *err)
{
	static const char sep[] = ", \t\n\r\v\f";
	cleanup_free char *copy = berth_oci_strdup(list, err);
	char *save = NULL;
	size_t n = 0;

	if (copy == NULL)
		return -1;
	for (char *tok = strtok_r(copy, sep, &save); tok != NULL; tok = strtok_r(NULL, sep, &save), n++)
		if (berth_oci_add_allow_host(&b->policy, tok, "annotations.berth.dev/allow-hosts", err) < 0)
			return -1;
	if (n == 0)
		return berth_oci_bad(err, "annotations.berth.dev/allow-hosts",
				     "names no host (an empty list): drop the annotation for no network");
	return berth_oci_egress_on(b, "annotations.berth.dev/allow-hosts", err);
}

/* berth.dev/audit-dir: where the container's runs are recorded; checked
 * here, used by the supervisor (docs/oci.md says what is recorded). */
static int annotation_audit_dir(const char *dir, struct berth_oci_bundle *b, struct berth_error *err)
{
	struct stat st;
	char *canon;

	if (berth_oci_container_path(dir, "annotations.berth.dev/audit-dir", &canon, err) < 0)
		return -1;
	if (lstat(canon, &st) == 0 && !S_ISDIR(st.st_mode)) {
		berth_oci_bad(err, "annotations.berth.dev/audit-dir", "`%s` exists and is not a directory",
			      canon);
		free(canon);
		return -1;
	}
	b->audit_dir = canon;
	return 0;
}

/* The key after berth.dev/ (a Kubernetes name: [A-Za-z0-9_.-], at most 63,
 * alphanumeric at both ends). */
static bool k8s_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 63 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

int berth_oci_convert_annotations(const json_t *ann, struct berth_oci_bundle *b, struct berth_error *err)
{
	const char *key, *profile = NULL;
	json_t *v;

	if (ann == NULL)
		return 0;
	if (berth_oci_want_object(ann, "annotations", err) < 0)
		return -1;
	json_object_foreach((json_t *)ann, key, v) {
		char path[320];
		const char *s;

		snprintf(path, sizeof path, "annotations.%.256s", key);
		if (berth_oci_string(v, path, true, &s, err) < 0)
			return -1;
		if (strncmp(key, BERTH_ANNOTATION_PREFIX, strlen(BERTH_ANNOTATION_PREFIX)) != 0)
			continue; /* the engine's own */
		const char *name = key + strlen(BERTH_ANNOTATION_PREFIX);
		int r;
		if (strcmp(name, "workspace") == 0)
			r = annotation_workspace(s, b, err);
		else if (strcmp(name, "allow-hosts") == 0)
			r = annotation_allow_hosts(s, b, err);
		else if (strcmp(name, "audit-dir") == 0)
			r = annotation_audit_dir(s, b, err);
		else if (strcmp(name, "profile") == 0)
			r = (profile = s, 0); /* after the others: berth_oci_annotation_profile */
		else if (strcmp(name, "writable-root") == 0) {
			/* a widening, said as such: "true" or "false", nothing else */
			r = strcmp(s, "true") == 0 || strcmp(s, "false") == 0
				? (b->writable_root = strcmp(s, "true") == 0, 0)
				: berth_oci_bad(err, path, "must be `true` or `false`, not `%.64s`", s);
		} else {
			berth_usage_err(
			    err,
			    "config.json: `%s` is not an annotation berth reads%s: berth.dev/workspace, "
			    "berth.dev/allow-hosts, berth.dev/audit-dir, berth.dev/writable-root, "
			    "berth.dev/profile",
			    path, k8s_name(name) ? "" : " (nor a valid annotation name)");
			return berth_err_hint(err, "fix its spelling or drop it (docs/oci.md)");
		}
		if (r < 0)
			return -1;
	}
	if (profile != NULL && berth_oci_annotation_profile(profile, b, err) < 0)
		return -1;
	b->annotations = json_incref((json_t *)ann);
	return 0;
}
