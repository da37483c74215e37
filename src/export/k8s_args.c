/* SPDX-License-Identifier: MIT */
/*
 * k8s_args.c - `berth export k8s` arguments into a checked policy and spec
 * (k8s.h): berth_k8s_parse, berth_k8s_prepare.
 */
#include "k8s.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../session/profile.h"
#include "../session/spawn_args.h"
#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/text.h"

/* `berth run` options a Pod cannot carry: refused by name. */
static const struct {
	const char *opt;
	const char *why;  /* after "export k8s: `OPT`" */
	const char *hint; /* how to do without it */
} refused[] = {
    {"--workspace", "names a directory of this machine, which a Pod does not have",
     "the Pod's workspace is an emptyDir at /workspace; `--workspace-claim CLAIM` mounts a "
     "PersistentVolumeClaim there instead"},
    {"--ro", "binds a path of this machine, which a Pod does not have",
     "add the volume to the Pod yourself (spec.volumes and the container's volumeMounts)"},
    {"--rw", "binds a path of this machine, which a Pod does not have",
     "add the volume to the Pod yourself (spec.volumes and the container's volumeMounts)"},
    {"--env-file",
     "reads values from a file of this machine, which would be written into the manifest in the "
     "clear",
     "give secrets to the Pod from a Secret (env valueFrom.secretKeyRef); `--env NAME=VALUE` for a value "
     "that "
     "is no secret"},
    {"--evidence", "copies files of this machine: a Pod gets no evidence",
     "triage files with `berth run --evidence PATH -- COMMAND` on this machine"},
    {"--forensic", "needs --evidence: a Pod gets no evidence",
     "triage files with `berth run --forensic --evidence PATH -- COMMAND` on this machine"},
    {"--dns", "has no annotation: berth's runtime on the node is not told which DNS server its broker uses",
     "drop --dns: the broker in the Pod resolves through the Pod's DNS"},
    {"--credential", "has no annotation: the secret is berth's to inject on this machine, not the node's",
     "give the Pod the secret from a Secret (env valueFrom.secretKeyRef), or run `berth run --credential` "
     "here"},
    {"--unprotect", "has no annotation: berth's runtime on the node keeps the workspace guard on",
     "drop --unprotect"},
    {"--allow-degraded",
     "has no annotation: berth's runtime on the node refuses what its kernel cannot enforce",
     "drop --allow-degraded (`berth doctor` on a node says what it enforces)"},
    {"--dry-run", "is `berth run`'s: `berth export k8s` prints and runs nothing", "drop it"},
    {"--json", "is `berth run`'s: `berth export k8s` prints YAML", "drop it"},
    {"--runtime", "has no annotation: berth's runtime on the node is the namespace runtime", "drop it"},
};

static int refuse(const char *opt, const char *from, struct berth_error *err)
{
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(refused); i++)
		if (strcmp(refused[i].opt, opt) == 0) {
			berth_usage_err(err, "export k8s: `%s`%s %s", opt, from, refused[i].why);
			return berth_err_hint(err, "%s", refused[i].hint);
		}
	return 0;
}

static int refuse_env_from_host(const char *name, const char *from, struct berth_error *err)
{
	berth_usage_err(err,
			"export k8s: `--env %s`%s takes the value of `%s` from this machine's environment, "
			"which would be written into the manifest in the clear",
			name, from, name);
	return berth_err_hint(err, "give secrets to the Pod from a Secret (env valueFrom.secretKeyRef); "
				   "`--env NAME=VALUE` for a value that is no secret");
}

static int set_once(char **dst, const char *opt, const char *val, struct berth_error *err)
{
	if (*dst != NULL)
		return berth_usage_err(err, "export k8s: `%s` given twice", opt);
	*dst = strdup(val);
	return *dst != NULL ? 0 : berth_err(err, ENOMEM, "out of memory");
}

static int push(char ***v, size_t *n, const char *s, struct berth_error *err)
{
	return berth_strv_push(v, n, s) < 0 ? berth_err(err, ENOMEM, "out of memory") : 0;
}

/* --user UID[:GID] */
static int parse_user(struct berth_k8s_req *r, const char *v, struct berth_error *err)
{
	char uid[16] = "";
	const char *colon = strchr(v, ':');
	size_t ul = colon != NULL ? (size_t)(colon - v) : strlen(v);
	uint64_t u = 0, g = 0;
	struct berth_error pe = {0};

	if (ul < sizeof uid)
		memcpy(uid, v, ul);
	if (ul >= sizeof uid || berth_parse_count(uid, "--user UID", 1, BERTH_K8S_ID_MAX, &u, &pe) < 0 ||
	    (colon != NULL && berth_parse_count(colon + 1, "--user GID", 0, BERTH_K8S_ID_MAX, &g, &pe) < 0)) {
		char clean[64];
		berth_usage_err(err, "export k8s: invalid --user `%s`",
				berth_text_clean(clean, sizeof clean, v));
		return berth_err_hint(
		    err,
		    "give UID[:GID]: UID 1 to %u (the Pod runs as non-root: runAsNonRoot), GID 0 "
		    "to %u (default: the UID)",
		    BERTH_K8S_ID_MAX, BERTH_K8S_ID_MAX);
	}
	r->spec.uid = (uint32_t)u;
	r->spec.gid = colon != NULL ? (uint32_t)g : (uint32_t)u;
	r->user_given = true;
	return 0;
}

/* One of export's own options that takes a value: @opt with @val. */
static int own_value(struct berth_k8s_req *r, const char *opt, const char *val, struct berth_error *err)
{
	char **slot = strcmp(opt, "--name") == 0              ? &r->spec.name
		      : strcmp(opt, "--namespace") == 0       ? &r->spec.ns
		      : strcmp(opt, "--image") == 0           ? &r->spec.image
		      : strcmp(opt, "--profile") == 0         ? &r->profile
		      : strcmp(opt, "--workspace-claim") == 0 ? &r->spec.workspace_claim
		      : strcmp(opt, "--audit-dir") == 0       ? &r->spec.audit_dir
							      : NULL;
	if (slot != NULL)
		return set_once(slot, opt, val, err);
	if (r->user_given)
		return berth_usage_err(err, "export k8s: `--user` given twice");
	return parse_user(r, val, err);
}

static bool own_takes_value(const char *opt)
{
	static const char *const opts[] = {"--name", "--namespace",       "--image",     "--profile",
					   "--user", "--workspace-claim", "--audit-dir", NULL};
	for (size_t i = 0; opts[i] != NULL; i++)
		if (strcmp(opts[i], opt) == 0)
			return true;
	return false;
}

/* A `berth run` option @opt (with @val when it takes one), kept for its parser. */
static int run_option(struct berth_k8s_req *r, const char *opt, const char *val, const char *given,
		      struct berth_error *err)
{
	if (refuse(opt, "", err) < 0)
		return -1;
	if (strcmp(opt, "--env") == 0 && strchr(val, '=') == NULL)
		return refuse_env_from_host(val, "", err);
	if (push(&r->run_args, &r->n_run_args, given != NULL ? given : opt, err) < 0)
		return -1;
	return given == NULL && val != NULL ? push(&r->run_args, &r->n_run_args, val, err) : 0;
}

int berth_k8s_parse(int argc, char **argv, struct berth_k8s_req *r, struct berth_error *err)
{
	memset(r, 0, sizeof *r);
	r->spec.uid = r->spec.gid = BERTH_K8S_DEFAULT_ID;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq = strchr(a, '=');
		char opt[64];
		const char *val;
		int arity;

		if (strcmp(a, "--") == 0) {
			for (i++; i < argc; i++)
				if (push(&r->command, &r->n_command, argv[i], err) < 0)
					return -1;
			break;
		}
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			r->help = true;
			return 0;
		}
		if (strcmp(a, "--tty") == 0) {
			r->spec.tty = true;
			continue;
		}
		/* --OPT=VALUE is --OPT VALUE */
		snprintf(opt, sizeof opt, "%.*s", eq != NULL && strncmp(a, "--", 2) == 0 ? (int)(eq - a) : 63,
			 a);
		val = eq != NULL && strncmp(a, "--", 2) == 0 ? eq + 1 : (i + 1 < argc ? argv[i + 1] : NULL);
		bool inline_val = eq != NULL && strncmp(a, "--", 2) == 0;
		arity = own_takes_value(opt) ? 1 : berth_run_option_arity(opt);
		if (arity < 0 && strcmp(opt, "--tty") == 0)
			return berth_usage_err(err, "export k8s: `--tty` takes no value");
		if (arity < 0) {
			char clean[160];
			berth_usage_err(err, "export k8s: unknown option or argument `%s`",
					berth_text_clean(clean, sizeof clean, a));
			return berth_err_hint(err,
					      "see `berth export k8s --help`; the command goes after `--`");
		}
		if (arity == 0 && inline_val)
			return berth_usage_err(err, "export k8s: `%s` takes no value", opt);
		if (arity == 1 && val == NULL)
			return berth_usage_err(err, "export k8s: `%s` needs a value", opt);
		if (arity == 1 && !inline_val)
			i++;
		if (own_takes_value(opt)) {
			if (own_value(r, opt, val, err) < 0)
				return -1;
		} else if (run_option(r, opt, arity == 1 ? val : NULL, inline_val ? a : NULL, err) < 0) {
			return -1;
		}
	}
	return 0;
}

static void note(struct berth_k8s_req *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct berth_k8s_req *r, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	if (r->n_notes >= BERTH_K8S_NOTES_MAX)
		return;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) >= 0)
		r->notes[r->n_notes++] = s;
	va_end(ap);
}

/* RFC 1123 label (a Kubernetes name of a Pod's label value and most
 * objects): 1-63 of [a-z0-9-], starting and ending alphanumeric. */
static bool rfc1123_label(const char *s, size_t n)
{
	if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return true;
}

/* RFC 1123 subdomain (a PersistentVolumeClaim's name): labels joined by
 * `.`, at most 253 characters. */
static bool rfc1123_subdomain(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 253)
		return false;
	for (const char *c = s;;) {
		size_t l = strcspn(c, ".");
		if (!rfc1123_label(c, l))
			return false;
		if (c[l] == '\0')
			return true;
		c += l + 1;
	}
}

static int bad_value(struct berth_error *err, const char *opt, const char *v, const char *hint)
{
	char clean[300];

	berth_usage_err(err, "export k8s: invalid %s `%s`", opt, berth_text_clean(clean, sizeof clean, v));
	return berth_err_hint(err, "%s", hint);
}

/* The spec's own values (the name once it is settled). */
static int check_spec(const struct berth_k8s_spec *s, struct berth_error *err)
{
	static const char label_hint[] =
	    "a Kubernetes name here is 1 to 63 lowercase letters, digits and `-`, starting and ending with a "
	    "letter or digit (an RFC 1123 label), such as `claude-1`";

	if (s->image == NULL) {
		berth_usage_err(err, "export k8s: no --image given");
		return berth_err_hint(err, "name the container image that holds the command, such as "
					   "`--image ghcr.io/you/agent:1.0`");
	}
	size_t il = strlen(s->image);
	bool ok = il > 0 && il <= 4096 &&
		  strspn(s->image, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				   "0123456789._/:@-") == il &&
		  s->image[0] != '-' && s->image[0] != '.' && s->image[0] != '/' && s->image[0] != ':';
	if (!ok)
		return bad_value(err, "--image", s->image,
				 "an image reference is 1 to 4096 letters, digits and `._/:@-`, such as "
				 "`registry.example/agent:1.0` or `agent@sha256:...`");
	if (!rfc1123_label(s->name, strlen(s->name)))
		return bad_value(err, "--name", s->name, label_hint);
	if (s->ns != NULL && !rfc1123_label(s->ns, strlen(s->ns)))
		return bad_value(err, "--namespace", s->ns, label_hint);
	if (s->workspace_claim != NULL && !rfc1123_subdomain(s->workspace_claim))
		return bad_value(
		    err, "--workspace-claim", s->workspace_claim,
		    "a PersistentVolumeClaim's name is lowercase letters, digits, `-` and `.`, at most "
		    "253 (an RFC 1123 subdomain), such as `agent-workspace`");
	if (s->audit_dir != NULL) {
		const char *d = s->audit_dir;
		bool good = d[0] == '/' && strlen(d) < PATH_MAX;
		for (const char *c = d + 1; good && *c != '\0';) {
			size_t l = strcspn(c, "/");
			good = l > 0 && !(l == 1 && c[0] == '.') && !(l == 2 && c[0] == '.' && c[1] == '.');
			c += l + (c[l] == '/');
		}
		for (const char *c = d; good && *c != '\0'; c++)
			good = (unsigned char)*c >= 0x20 && *c != 0x7f && *c != ',';
		if (!good || strcmp(d, "/") == 0)
			return bad_value(
			    err, "--audit-dir", d,
			    "name a directory of the node by its absolute path, without `.`, `..`, "
			    "empty components, commas or control characters, such as `/var/log/berth`");
	}
	return 0;
}

/* berth_run_parse's --env NAME lookup: never this machine's environment
 * (refused before for the caller's options; the profile's are refused
 * after the parse, by their from_host mark). */
static char *no_env(const char *name)
{
	(void)name;
	return (char *)"";
}

/* What of profile @p a Pod does not get, said once each. */
static void profile_notes(struct berth_k8s_req *r, const struct berth_profile *p)
{
	if (p->agent_path != NULL)
		note(r,
		     "note: profile `%s`'s `path: %s` is a path of this machine: the image must have `%s` on "
		     "its "
		     "PATH",
		     p->name, p->agent_path, p->command[0]);
	if (p->n_home > 0 || p->instructions != NULL)
		note(r,
		     "note: profile `%s` seeds the agent's home (`home:`, `instructions:`) when berth spawns "
		     "it; the "
		     "Pod's $HOME (%s) starts empty",
		     p->name, BERTH_K8S_HOME);
	if (p->persist_home)
		note(r,
		     "note: profile `%s` keeps a persistent home; the Pod's $HOME is an emptyDir, gone with "
		     "the "
		     "Pod",
		     p->name);
	if (p->n_credentials > 0) {
		struct berth_buf b = {0};
		for (size_t i = 0; i < p->n_credentials; i++)
			berth_buf_putf(&b, "%s%s", i > 0 ? ", " : "", p->credentials[i]);
		if (!b.oom)
			note(r,
			     "note: profile `%s`'s credentials (%s) are not exported: give them to the Pod "
			     "from a "
			     "Secret (env valueFrom.secretKeyRef)",
			     p->name, b.p);
		berth_buf_free(&b);
	}
}

/* The `berth run` arguments: the profile's through berth_spawn_run_argv,
 * else ours with the stand-in workspace. */
static int run_argv(struct berth_k8s_req *r, char ***av, size_t *ac, struct berth_error *err)
{
	struct berth_spawn_req s;
	int rc = -1;

	*av = NULL;
	*ac = 0;
	if (r->profile == NULL) {
		if (r->n_command == 0) {
			berth_usage_err(err, "export k8s: no command given");
			return berth_err_hint(err,
					      "write `berth export k8s --image IMAGE [OPTIONS] -- COMMAND "
					      "[ARG...]`, or give an agent profile with --profile NAME");
		}
		if (push(av, ac, "run", err) < 0 || push(av, ac, "--workspace", err) < 0 ||
		    push(av, ac, BERTH_SPAWN_STANDIN_WORKSPACE, err) < 0)
			return -1;
		for (size_t i = 0; i < r->n_run_args; i++)
			if (push(av, ac, r->run_args[i], err) < 0)
				return -1;
		if (push(av, ac, "--", err) < 0)
			return -1;
		for (size_t i = 0; i < r->n_command; i++)
			if (push(av, ac, r->command[i], err) < 0)
				return -1;
		return 0;
	}
	memset(&s, 0, sizeof s);
	s.persist_home = -1;
	if ((s.profile_name = strdup(r->profile)) == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	if (berth_profile_load(r->profile, &s.profile, err) < 0)
		goto out;
	for (size_t i = 0; i < r->n_run_args; i++)
		if (berth_spawn_add_run_arg(&s, r->run_args[i], err) < 0)
			goto out;
	for (size_t i = 0; i < r->n_command; i++)
		if (berth_strv_push(&s.extra, &s.n_extra, r->command[i]) < 0) {
			berth_err(err, ENOMEM, "out of memory");
			goto out;
		}
	if (berth_spawn_run_argv(&s, av, ac, err) < 0)
		goto out;
	for (size_t i = 0; i < s.n_notes; i++)
		note(r, "%s", s.notes[i]);
	profile_notes(r, &s.profile);
	if (r->spec.name == NULL && rfc1123_label(s.profile.name, strlen(s.profile.name)) &&
	    (r->spec.name = strdup(s.profile.name)) == NULL) {
		berth_err(err, ENOMEM, "out of memory");
		goto out;
	}
	rc = 0;
out:
	berth_spawn_req_free(&s);
	return rc;
}

/* What only berth_run_parse knows (a profile's own options): refused as
 * berth_k8s_parse refuses the caller's. */
static int check_policy(const struct berth_k8s_req *r, struct berth_error *err)
{
	const struct berth_run_opts *o = &r->run;
	const struct berth_policy *p = &o->policy;
	char from[160] = "", stand_in[PATH_MAX];

	if (r->profile != NULL)
		snprintf(from, sizeof from, " (from profile `%s`)", r->profile);
	if (realpath(BERTH_SPAWN_STANDIN_WORKSPACE, stand_in) == NULL || strcmp(p->workspace, stand_in) != 0)
		return refuse("--workspace", from, err);
	if (p->n_mounts > 0)
		return refuse(p->mounts[0].rw ? "--rw" : "--ro", from, err);
	if (o->n_evidence > 0 || o->forensic)
		return refuse(o->forensic ? "--forensic" : "--evidence", from, err);
	for (size_t i = 0; i < p->n_env; i++) {
		if (p->env[i].from_file)
			return refuse("--env-file", from, err);
		if (p->env[i].from_host)
			return refuse_env_from_host(p->env[i].name, from, err);
	}
	if (p->dns != NULL)
		return refuse("--dns", from, err);
	if (p->n_credentials > 0) /* the injection is berth's broker's (docs/credentials.md) */
		return refuse("--credential", from, err);
	if (p->n_unprotect > 0)
		return refuse("--unprotect", from, err);
	if (p->allow_degraded)
		return refuse("--allow-degraded", from, err);
	if (o->dry_run || o->json)
		return refuse(o->dry_run ? "--dry-run" : "--json", from, err);
	if (o->runtime != NULL)
		return refuse("--runtime", from, err);
	if (p->network == BERTH_NET_HOST) {
		berth_usage_err(err, "export k8s: `--network host`%s is a widening a Pod cannot carry", from);
		return berth_err_hint(err,
				      "name the hosts with --allow-host: berth's broker in the Pod reaches "
				      "them, and the NetworkPolicy opens their ports");
	}
	return 0;
}

int berth_k8s_prepare(struct berth_k8s_req *r, struct berth_error *err)
{
	char **av = NULL;
	size_t ac = 0;
	int rc = -1;

	if (r->help)
		return 0;
	if (run_argv(r, &av, &ac, err) < 0)
		goto out;
	/* an agent's session has a terminal (berth spawn): so has its Pod */
	if (r->profile != NULL)
		r->spec.tty = true;
	if (r->spec.name == NULL && (r->spec.name = strdup(BERTH_K8S_DEFAULT_NAME)) == NULL) {
		berth_err(err, ENOMEM, "out of memory");
		goto out;
	}
	if (check_spec(&r->spec, err) < 0)
		goto out;
	r->have_run = true;
	if (berth_run_parse((int)ac, av, no_env, &r->run, err) < 0 || check_policy(r, err) < 0)
		goto out;
	if (r->run.policy.pids_set)
		note(r,
		     "note: --pids %u: a Pod has no field for a process limit (the YAML says what bounds it)",
		     r->run.policy.pids);
	if (r->run.policy.nofile != BERTH_DEFAULT_NOFILE)
		note(r,
		     "note: --nofile %u: a Pod has no field for an open-file limit (the YAML says what sets "
		     "it)",
		     r->run.policy.nofile);
	for (size_t i = 0; i < r->run.policy.n_env; i++)
		if (berth_spawn_is_credential(NULL, r->run.policy.env[i].name))
			note(r,
			     "note: `%s` looks like a credential, and its value is written into the manifest "
			     "in the "
			     "clear: a Secret keeps it out (env valueFrom.secretKeyRef)",
			     r->run.policy.env[i].name);
	rc = 0;
out:
	berth_strv_free(av);
	return rc;
}

void berth_k8s_req_free(struct berth_k8s_req *r)
{
	free(r->spec.name);
	free(r->spec.ns);
	free(r->spec.image);
	free(r->spec.workspace_claim);
	free(r->spec.audit_dir);
	free(r->profile);
	berth_strv_free(r->run_args);
	berth_strv_free(r->command);
	if (r->have_run)
		berth_run_opts_free(&r->run);
	for (size_t i = 0; i < r->n_notes; i++)
		free(r->notes[i]);
	memset(r, 0, sizeof *r);
}
