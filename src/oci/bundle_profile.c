/* SPDX-License-Identifier: MIT */
/*
 * bundle_profile.c - the annotation berth.dev/profile NAME: an agent
 * profile (docs/sessions.md, "Profiles": the user's, then berth's own)
 * gives a container what of it is the sandbox's business:
 *   - its egress: `network:` and `allow_hosts:` read exactly as `berth run`
 *     reads them (berth_run_parse: `api-only` is the api-only preset), so a
 *     Pod annotated `berth.dev/profile: claude` reaches what `berth spawn
 *     claude` reaches; with berth.dev/allow-hosts too, both lists;
 *   - its environment: each NAME=VALUE of `env:` that process.env does not
 *     set (the engine's, a Pod's, win);
 * and says what it does not take: the command (the image's), the seeded
 * home and instructions, credentials (a Pod's secrets), further options
 * (the engine's limits).  `network: host` is refused: a widening no
 * annotation carries.  `network: none` with berth.dev/allow-hosts is a
 * contradiction, refused; with a pod's network it gives the container a
 * network namespace of its own with loopback only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../policy/flags.h"
#include "../session/profile.h"
#include "../session/spawn_args.h"
#include "../util/cleanup.h"
#include "oci_int.h"

#define WHAT "annotations.berth.dev/profile"

/* The profile's egress as `berth run` compiles it, into @o. */
static int profile_network(const struct berth_profile *prof, struct berth_run_opts *o,
			   struct berth_error *err)
{
	char *argv[8 + 2 * 64];
	int argc = 0;

	argv[argc++] = "run";
	argv[argc++] = "--workspace";
	argv[argc++] = BERTH_SPAWN_STANDIN_WORKSPACE;
	argv[argc++] = "--network";
	argv[argc++] = prof->network;
	if (prof->n_allow_hosts > 64)
		return berth_usage_err(err, "config.json: `%s`: profile `%s` names more than 64 hosts", WHAT,
				       prof->name);
	for (size_t i = 0; i < prof->n_allow_hosts; i++) {
		argv[argc++] = "--allow-host";
		argv[argc++] = prof->allow_hosts[i];
	}
	argv[argc++] = "--";
	argv[argc++] = "true";
	argv[argc] = NULL;
	if (berth_run_parse(argc, argv, getenv, o, err) < 0)
		return berth_err_wrap(err, "config.json: `%s`: profile `%s`'s network", WHAT, prof->name);
	return 0;
}

/* NAME=VALUE of the profile where process.env has no NAME. */
static int profile_env(const struct berth_profile *prof, struct berth_policy *p, struct berth_error *err)
{
	for (size_t i = 0; i < prof->n_env; i++) {
		const char *eq = strchr(prof->env[i], '=');
		size_t len = eq != NULL ? (size_t)(eq - prof->env[i]) : 0;
		bool set = false;
		struct berth_env *v;

		if (eq == NULL)
			continue; /* NAME alone: the host's value, which a container never gets */
		for (size_t k = 0; k < p->n_env && !set; k++)
			set =
			    strlen(p->env[k].name) == len && strncmp(p->env[k].name, prof->env[i], len) == 0;
		if (set)
			continue;
		if ((v = realloc(p->env, (p->n_env + 1) * sizeof *v)) == NULL)
			return berth_err(err, ENOMEM, "out of memory");
		p->env = v;
		v = &p->env[p->n_env];
		memset(v, 0, sizeof *v);
		if ((v->name = strndup(prof->env[i], len)) == NULL || (v->value = strdup(eq + 1)) == NULL) {
			free(v->name);
			return berth_err(err, ENOMEM, "out of memory");
		}
		p->n_env++;
	}
	return 0;
}

int berth_oci_annotation_profile(const char *name, struct berth_oci_bundle *b, struct berth_error *err)
{
	struct berth_profile prof;
	struct berth_run_opts o;
	struct berth_policy *p = &b->policy;
	int rc = -1;

	memset(&prof, 0, sizeof prof);
	memset(&o, 0, sizeof o);
	if (berth_profile_load(name, &prof, err) < 0) {
		berth_err_wrap(err, "config.json: `%s`", WHAT);
		return berth_err_hint(err,
				      "`berth spawn --list` names the profiles of this machine; the node "
				      "running the container must have it");
	}
	if (prof.network != NULL && strcmp(prof.network, "host") == 0) {
		berth_usage_err(err,
				"config.json: `%s`: profile `%s` has `network: host`, a widening an "
				"annotation does not carry",
				WHAT, name);
		berth_err_hint(err, "name the hosts in the profile (`network: proxy`, `allow_hosts:`)");
		goto out;
	}
	if (prof.network != NULL && strcmp(prof.network, "none") == 0) {
		if (p->network == BERTH_NET_PROXY) {
			berth_usage_err(err,
					"config.json: `%s`: profile `%s` has `network: none`, and "
					"`annotations.berth.dev/allow-hosts` names hosts",
					WHAT, name);
			berth_err_hint(err, "drop one of the two");
			goto out;
		}
		if (p->container->netns != NULL &&
		    berth_oci_note(
			b, err,
			"%s `%s` has `network: none`: the container gets a network namespace of its "
			"own with loopback only, not the pod's `%s`",
			WHAT, name, p->container->netns) < 0)
			goto out;
		p->network = BERTH_NET_NONE;
	} else if (prof.network != NULL) {
		if (profile_network(&prof, &o, err) < 0)
			goto out;
		for (size_t i = 0; i < o.policy.n_allow_hosts; i++)
			if (berth_oci_add_allow_host(p, o.policy.allow_hosts[i], WHAT, err) < 0)
				goto out;
		if (o.policy.network == BERTH_NET_PROXY && berth_oci_egress_on(b, WHAT, err) < 0)
			goto out;
	}
	if (profile_env(&prof, p, err) < 0)
		goto out;
	if (berth_oci_note(b, err,
			   "%s `%s`: its network and env are applied; its command, home, instructions, "
			   "credentials and options are not (the image's command runs, the engine's limits "
			   "hold)",
			   WHAT, name) < 0)
		goto out;
	rc = 0;
out:
	berth_run_opts_free(&o); /* zeroed, or berth_run_parse's */
	berth_profile_free(&prof);
	return rc;
}
