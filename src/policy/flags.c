/* SPDX-License-Identifier: MIT */
/*
 * flags.c - `berth run` options.  Pure parsing and path validation: nothing
 * here touches the kernel's namespaces.  The option table and one handler
 * per option, --evidence and --forensic, and the checks across options
 * (berth_run_parse); the network options are in flags_net.c, the
 * environment in flags_env.c, the host paths in hostpath.c (flags_int.h).
 */
#include "flags_int.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "credential.h"
#include "hostpat.h"
#include "../util/text.h"
#include "../util/cleanup.h"
#include "envfile.h"
#include "hostpath.h"
#include "trust.h"

enum {
	OPT_WORKSPACE = 256,
	OPT_TMP_SIZE,
	OPT_MEMORY,
	OPT_CPUS,
	OPT_PIDS,
	OPT_NOFILE,
	OPT_TIMEOUT,
	OPT_NETWORK,
	OPT_ENV,
	OPT_RO,
	OPT_RW,
	OPT_UNPROTECT,
	OPT_ALLOW_DEGRADED,
	OPT_YES,
	OPT_DRY_RUN,
	OPT_EXPLAIN,
	OPT_ASK,
	OPT_ASK_TIMEOUT,
	OPT_JSON,
	OPT_HELP,
	OPT_ALLOW_HOST,
	OPT_DNS,
	OPT_ENV_FILE,
	OPT_EVIDENCE,
	OPT_FORENSIC,
	OPT_RUNTIME,
	OPT_REVIEW,
	OPT_REVIEW_SIZE,
	OPT_CREDENTIAL,
	OPT_SSH,
	OPT_SSH_KEY,
	OPT_SSH_HOST,
};

static const struct option run_options[] = {
    {"workspace", required_argument, NULL, OPT_WORKSPACE},
    {"tmp-size", required_argument, NULL, OPT_TMP_SIZE},
    {"memory", required_argument, NULL, OPT_MEMORY},
    {"cpus", required_argument, NULL, OPT_CPUS},
    {"pids", required_argument, NULL, OPT_PIDS},
    {"nofile", required_argument, NULL, OPT_NOFILE},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"network", required_argument, NULL, OPT_NETWORK},
    {"allow-host", required_argument, NULL, OPT_ALLOW_HOST},
    {"dns", required_argument, NULL, OPT_DNS},
    {"credential", required_argument, NULL, OPT_CREDENTIAL},
    {"ssh", required_argument, NULL, OPT_SSH},
    {"ssh-key", required_argument, NULL, OPT_SSH_KEY},
    {"ssh-host", required_argument, NULL, OPT_SSH_HOST},
    {"env", required_argument, NULL, OPT_ENV},
    {"env-file", required_argument, NULL, OPT_ENV_FILE},
    {"evidence", required_argument, NULL, OPT_EVIDENCE},
    {"forensic", no_argument, NULL, OPT_FORENSIC},
    {"runtime", required_argument, NULL, OPT_RUNTIME},
    {"review", no_argument, NULL, OPT_REVIEW},
    {"review-size", required_argument, NULL, OPT_REVIEW_SIZE},
    {"ro", required_argument, NULL, OPT_RO},
    {"rw", required_argument, NULL, OPT_RW},
    {"unprotect", required_argument, NULL, OPT_UNPROTECT},
    {"allow-degraded", no_argument, NULL, OPT_ALLOW_DEGRADED},
    {"yes", no_argument, NULL, OPT_YES},
    {"dry-run", no_argument, NULL, OPT_DRY_RUN},
    {"explain", no_argument, NULL, OPT_EXPLAIN},
    {"ask", no_argument, NULL, OPT_ASK},
    {"ask-timeout", required_argument, NULL, OPT_ASK_TIMEOUT},
    {"json", no_argument, NULL, OPT_JSON},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

int berth_run_option_arity(const char *arg)
{
	if (arg == NULL || strncmp(arg, "--", 2) != 0)
		return -1;
	for (size_t i = 0; run_options[i].name != NULL; i++)
		if (strcmp(arg + 2, run_options[i].name) == 0)
			return run_options[i].has_arg == required_argument ? 1 : 0;
	return -1;
}

int berth_fl_add_widening(struct berth_run_opts *o, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	/* one that does not fit would be in force without being named, nor
	 * confirmed: the parse refuses the run instead (berth_run_parse) */
	if (o->n_widenings >= (int)BERTH_ARRAY_SIZE(o->widenings) - 1) {
		o->widenings_full = true;
		return 0;
	}
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	o->widenings[o->n_widenings] = strdup(buf);
	if (o->widenings[o->n_widenings] == NULL)
		return -1;
	o->n_widenings++;
	return 0;
}

int berth_fl_strv_add(char ***v, size_t *n, const char *s, bool unique, struct berth_error *err)
{
	char **nv;

	for (size_t i = 0; unique && i < *n; i++)
		if (strcmp((*v)[i], s) == 0)
			return 0;
	nv = realloc(*v, (*n + 1) * sizeof *nv);
	if (nv == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	*v = nv;
	if ((nv[*n] = strdup(s)) == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	(*n)++;
	return 0;
}

static int add_unprotect(struct berth_policy *p, const char *arg, struct berth_error *err)
{
	char buf[2];
	const char *g = berth_trust_canonical(arg, false, buf, sizeof buf, err);

	if (g == NULL)
		return -1;
	return berth_fl_strv_add(&p->unprotect, &p->n_unprotect, g, true, err);
}

/* set_limit - parse @arg as limit @id into @out (uint64_t or uint32_t). */
static int set_limit64(enum berth_limit id, const char *arg, uint64_t *out, struct berth_error *err)
{
	return berth_limit_parse(id, NULL, arg, out, err);
}

static int set_limit32(enum berth_limit id, const char *arg, uint32_t *out, struct berth_error *err)
{
	uint64_t v = 0;

	if (berth_limit_parse(id, NULL, arg, &v, err) < 0)
		return -1;
	*out = (uint32_t)v; /* every 32-bit limit's maximum is below 2^32 */
	return 0;
}

/* --evidence PATH: checked here (exists, not the host root or home), read
 * and copied by the run (src/supervisor/evidence.c). */
static int add_evidence(struct berth_run_opts *o, const char *arg, struct berth_error *err)
{
	char real[PATH_MAX];
	char **v;

	if (realpath(arg, real) == NULL) {
		int e = errno;
		berth_usage_err(err, "cannot use `--evidence %s`: %s", arg, strerror(e));
		return berth_err_hint(err, "name an existing file or directory");
	}
	if (berth_hostpath_check("--evidence", arg, real, err) < 0)
		return -1;
	/* Each appears as /evidence/NAME: two of the same name would collide. */
	for (size_t i = 0; i < o->n_evidence; i++)
		if (strcmp(strrchr(o->evidence[i], '/') + 1, strrchr(real, '/') + 1) == 0) {
			berth_usage_err(err, "evidence name `%s` is given twice (`%s` and `%s`)",
					strrchr(real, '/') + 1, o->evidence[i], real);
			return berth_err_hint(
			    err, "each --evidence appears as /evidence/NAME: copy one of them under "
				 "another name first");
		}
	v = realloc(o->evidence_lex, (o->n_evidence + 1) * sizeof *v);
	if (v == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	o->evidence_lex = v;
	char lex[PATH_MAX];
	o->evidence_lex[o->n_evidence] = berth_path_lexical_abs(arg, lex) ? strdup(lex) : NULL;
	return berth_fl_strv_add(&o->evidence, &o->n_evidence, real, false, err);
}

/*
 * --forensic: static triage of untrusted files (docs/security.md).  The
 * evidence is the point, so it must be given; no value from berth's
 * environment or an --env-file reaches the sandbox (a literal --env
 * NAME=VALUE, already on the command line, is no secret and passes); the
 * workspace guard cannot be opted out of; the network is api-only unless
 * the user chose one.
 */
static int apply_forensic(struct berth_run_opts *o, struct berth_error *err)
{
	struct berth_policy *p = &o->policy;

	if (o->n_evidence == 0) {
		berth_usage_err(err, "--forensic needs the files to triage");
		return berth_err_hint(err, "add `--evidence PATH` (a file or a directory; repeatable)");
	}
	for (size_t i = 0; i < p->n_env; i++)
		if (p->env[i].from_host || p->env[i].from_file) {
			berth_usage_err(
			    err, "--forensic runs without secrets, and `%s` comes from %s", p->env[i].name,
			    p->env[i].from_file ? "an --env-file" : "berth's environment (`--env NAME`)");
			return berth_err_hint(
			    err, "drop it, give a non-secret value as `--env NAME=VALUE`, or drop "
				 "`--forensic`");
		}
	if (p->n_unprotect > 0) {
		berth_usage_err(
		    err, "--forensic keeps the workspace guard on, and `--unprotect %s` turns part of it off",
		    p->unprotect[0]);
		return berth_err_hint(err, "drop `--unprotect`, or drop `--forensic`");
	}
	p->forensic = true;
	if (!o->network_given) {
		p->network = BERTH_NET_PROXY;
		o->network_mode = "api-only";
		if (berth_fl_load_preset(p, "api-only", err) < 0)
			return -1;
	}
	return 0;
}

static int handle_opt(struct berth_run_opts *o, int c, const char *arg, char *(*env_lookup)(const char *),
		      struct berth_error *err)
{
	struct berth_policy *p = &o->policy;

	switch (c) {
	case OPT_WORKSPACE:
		return berth_hostpath_set_workspace(p, arg, err);
	case OPT_TMP_SIZE:
		return set_limit64(BERTH_LIMIT_TMP_SIZE, arg, &p->tmp_size, err);
	case OPT_REVIEW: /* docs/review.md */
		p->review = true;
		return 0;
	case OPT_REVIEW_SIZE:
		p->review = true;
		return set_limit64(BERTH_LIMIT_REVIEW_SIZE, arg, &p->review_size, err);
	case OPT_MEMORY:
		p->memory_set = true;
		/* Below 16M the sandbox's own start-up (its init, the dynamic
		 * loader of the command) fails: as a SIGSEGV or "the sandbox died
		 * during setup", not a message about --memory. */
		return set_limit64(BERTH_LIMIT_MEMORY, arg, &p->memory, err);
	case OPT_CPUS:
		p->cpus_set = true;
		return set_limit32(BERTH_LIMIT_CPUS, arg, &p->millicpus, err);
	case OPT_PIDS:
		p->pids_set = true;
		return set_limit32(BERTH_LIMIT_PIDS, arg, &p->pids, err);
	case OPT_NOFILE:
		return set_limit32(BERTH_LIMIT_NOFILE, arg, &p->nofile, err);
	case OPT_TIMEOUT:
		return set_limit64(BERTH_LIMIT_TIMEOUT, arg, &p->timeout_ms, err);
	case OPT_NETWORK:
		o->network_given = true;
		if (strcmp(arg, "none") == 0 || strcmp(arg, "host") == 0 || strcmp(arg, "proxy") == 0 ||
		    strcmp(arg, "api-only") == 0)
			o->network_mode = strcmp(arg, "none") == 0    ? "none"
					  : strcmp(arg, "host") == 0  ? "host"
					  : strcmp(arg, "proxy") == 0 ? "proxy"
								      : "api-only";
		if (strcmp(arg, "none") == 0) {
			p->network = BERTH_NET_NONE;
			return 0;
		}
		if (strcmp(arg, "host") == 0) {
			p->network = BERTH_NET_HOST;
			return berth_fl_add_widening(
			    o,
			    "--network host: the sandbox shares the host's network: it can reach "
			    "every host and port this machine can, including loopback services%s",
			    "");
		}
		if (strcmp(arg, "proxy") == 0) {
			p->network = BERTH_NET_PROXY;
			return 0;
		}
		if (strcmp(arg, "api-only") == 0) {
			p->network = BERTH_NET_PROXY;
			return berth_fl_load_preset(p, arg, err);
		}
		char clean[160];
		berth_usage_err(err, "invalid --network `%s`", berth_text_clean(clean, sizeof clean, arg));
		return berth_err_hint(
		    err, "use `none` (default), `proxy` (with --allow-host), `api-only` or `host`");
	case OPT_ALLOW_HOST:
		o->network_given = true;
		return berth_fl_add_allow_host(p, arg, err);
	case OPT_CREDENTIAL:
		o->network_given = true;
		return berth_fl_add_credential(o, arg, err);
	case OPT_SSH:
	case OPT_SSH_KEY:
		o->network_given = true;
		return berth_fl_add_ssh_key(o, arg, c == OPT_SSH_KEY, err);
	case OPT_SSH_HOST:
		o->network_given = true;
		return berth_fl_add_ssh_host(o, arg, err);
	case OPT_DNS: {
		/* checked here, not first when the broker starts: --dry-run showed
		 * any text, and a run had written its audit records by then */
		char csv[96], dclean[160];
		struct berth_error de = {0};
		if (berth_dns_server_parse(arg, csv, sizeof csv, &de) < 0) {
			if (de.errnum == EADDRNOTAVAIL) {
				berth_usage_err(err,
						"invalid --dns `%s`: not a unicast address (unspecified, "
						"multicast or broadcast)",
						berth_text_clean(dclean, sizeof dclean, arg));
				return berth_err_hint(
				    err, "name the DNS server's own address, such as `192.0.2.53`");
			}
			berth_usage_err(err, "invalid --dns `%s`: expected `IP`, `IP:PORT` or `[IPV6]:PORT`",
					berth_text_clean(dclean, sizeof dclean, arg));
			return berth_err_hint(err, "give the DNS server's address, such as `192.0.2.53`, "
						   "`192.0.2.53:5353` or `[2001:db8::53]:53`");
		}
		o->network_given = true;
		free(p->dns);
		p->dns = strdup(arg);
		return p->dns != NULL ? 0 : berth_err(err, ENOMEM, "out of memory");
	}
	case OPT_ENV:
		return berth_fl_add_env(p, arg, env_lookup, err);
	case OPT_ENV_FILE:
		return berth_envfile_load(arg, berth_fl_envfile_add, p, err);
	case OPT_EVIDENCE:
		return add_evidence(o, arg, err);
	case OPT_FORENSIC:
		o->forensic = true;
		return 0;
	case OPT_RO:
	case OPT_RW: {
		char sock[PATH_MAX] = "", sclean[PATH_MAX];
		bool rw = c == OPT_RW;
		if (berth_hostpath_add_mount(p, arg, rw, sock, err) < 0)
			return -1;
		/* A socket below a source the person named: shared on purpose (the
		 * MCP bridge to `berth dev`), or not; either way named and confirmed. */
		if (sock[0] != '\0' &&
		    berth_fl_add_widening(
			o,
			"--%s %s: the sandbox can connect to the unix socket `%s` below it, and Landlock "
			"does not govern connect(2) to a socket (a docker or podman socket is root on the "
			"host)",
			rw ? "rw" : "ro", arg, berth_text_clean(sclean, sizeof sclean, sock)) < 0)
			return -1;
		if (!rw)
			return 0;
		/* Name the directory the sandbox gets when the path given is not
		 * it: `--rw ./data` where data is a link (a sandbox may have
		 * planted it) to /etc. */
		const char *real = p->mounts[p->n_mounts - 1].src, *colon = strchr(arg, ':');
		size_t gl = colon != NULL ? (size_t)(colon - arg) : strlen(arg);
		if (strlen(real) != gl || strncmp(real, arg, gl) != 0)
			return berth_fl_add_widening(
			    o, "--rw %s: the sandbox can change and delete these host files, in `%s`", arg,
			    real);
		return berth_fl_add_widening(o, "--rw %s: the sandbox can change and delete these host files",
					     arg);
	}
	case OPT_UNPROTECT:
		if (add_unprotect(p, arg, err) < 0)
			return -1;
		return berth_fl_add_widening(
		    o, "--unprotect %s: the sandbox can write a file the host later runs or trusts", arg);
	case OPT_ALLOW_DEGRADED:
		p->allow_degraded = true;
		return berth_fl_add_widening(
		    o,
		    "--allow-degraded: berth runs even when the kernel cannot enforce part of the "
		    "policy%s",
		    "");
	case OPT_YES:
		o->yes = true;
		return 0;
	case OPT_DRY_RUN:
		o->dry_run = true;
		return 0;
	case OPT_EXPLAIN:
		o->explain = true;
		return 0;
	case OPT_ASK:
		o->ask = true;
		return 0;
	case OPT_ASK_TIMEOUT: {
		uint64_t ms;
		if (berth_parse_duration_ms(arg, "--ask-timeout", &ms, err) < 0)
			return -1;
		if (ms < 100 || ms > 3600000) {
			berth_usage_err(err, "--ask-timeout `%s` is out of range: 100ms to 1h", arg);
			return berth_err_hint(err, "a human needs time to answer, and a held call must not "
						   "wait for ever: e.g. `--ask-timeout 60s` (the default)");
		}
		o->ask_timeout_ms = (unsigned)ms;
		return 0;
	}
	case OPT_RUNTIME:
		/* found by the caller (berth_runtime_find, a layer above): a
		 * name it does not know is refused there, dry run or not */
		free(o->runtime);
		o->runtime = strdup(arg);
		return o->runtime != NULL ? 0 : berth_err(err, ENOMEM, "out of memory");
	case OPT_JSON:
		o->json = true;
		return 0;
	case OPT_HELP:
		o->help = true;
		return 0;
	default:
		return berth_usage_err(err, "unknown option");
	}
}

int berth_run_parse(int argc, char **argv, char *(*env_lookup)(const char *), struct berth_run_opts *o,
		    struct berth_error *err)
{
	int c;

	memset(o, 0, sizeof *o);
	berth_policy_init(&o->policy);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:h", run_options, NULL)) != -1) {
		if (c == '?' || c == ':') {
			const char *bad = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
			char clean[160];
			berth_usage_err(err, c == ':' ? "`%s` needs a value" : "unknown option `%s`",
					berth_text_clean(clean, sizeof clean, bad));
			return berth_err_hint(err, "see `berth run --help`");
		}
		if (c == 'h')
			c = OPT_HELP;
		if (handle_opt(o, c, optarg, env_lookup, err) < 0)
			return -1;
	}
	if (o->help)
		return 0;
	if (o->forensic && apply_forensic(o, err) < 0)
		return -1;
	/* a --credential's placeholder is its variable inside: no --env of that name */
	for (size_t i = 0; i < o->policy.n_credentials; i++)
		for (size_t k = 0; k < o->policy.n_env; k++)
			if (strcmp(o->policy.credentials[i].name, o->policy.env[k].name) == 0) {
				berth_usage_err(err,
						"--credential %s and --env %s: the variable would hold both",
						o->policy.env[k].name, o->policy.env[k].name);
				return berth_err_hint(err,
						      "drop the --env: inside, %s holds the credential's "
						      "placeholder",
						      o->policy.env[k].name);
			}
	/* --allow-host implies --network proxy; with --network host it means nothing. */
	/* --ssh's agent is served beside the broker: it implies it too */
	if (o->policy.n_allow_hosts > 0 || o->policy.dns != NULL || o->policy.n_ssh_keys > 0) {
		if (o->policy.network == BERTH_NET_HOST) {
			berth_usage_err(
			    err,
			    "--allow-host and --dns need the egress broker, and --network host has none");
			return berth_err_hint(
			    err, "drop `--network host`: --allow-host implies `--network proxy`");
		}
		if (o->network_mode != NULL && strcmp(o->network_mode, "none") == 0) {
			berth_usage_err(err, "--network none and --allow-host/--dns contradict each other: "
					     "--allow-host gives the sandbox the hosts it names");
			return berth_err_hint(
			    err, "drop `--network none` (--allow-host implies `--network proxy`), "
				 "or the --allow-host/--dns");
		}
		o->policy.network = BERTH_NET_PROXY;
		if (o->network_mode == NULL)
			o->network_mode = "proxy";
	}
	if (o->network_mode == NULL)
		o->network_mode = "none";
	/* Through the broker, berth sets the proxy variables itself
	 * (docs/egress.md): a value given with --env would be overridden in
	 * silence, so it is refused. */
	if (o->policy.network == BERTH_NET_PROXY) {
		static const char *const proxy_vars[] = {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
							 "NO_PROXY"};
		for (size_t i = 0; i < o->policy.n_env; i++)
			for (size_t k = 0; k < sizeof proxy_vars / sizeof proxy_vars[0]; k++)
				if (strcasecmp(o->policy.env[i].name, proxy_vars[k]) == 0) {
					berth_usage_err(
					    err,
					    "`--env %s` cannot be used with the egress broker: berth sets "
					    "the proxy variables to its own listeners",
					    o->policy.env[i].name);
					return berth_err_hint(
					    err,
					    "drop `--env %s`; the sandbox reaches only the declared "
					    "hosts, through the broker",
					    o->policy.env[i].name);
				}
	}
	if (o->policy.workspace == NULL && berth_hostpath_set_workspace(&o->policy, ".", err) < 0)
		return -1;
	if (o->widenings_full) {
		berth_usage_err(
		    err,
		    "more than %d widenings: berth names and confirms each one, and the rest would "
		    "be in force unnamed",
		    (int)BERTH_ARRAY_SIZE(o->widenings) - 1);
		return berth_err_hint(err, "give fewer (one --rw of a parent directory covers several)");
	}
	if (berth_hostpath_check_links(&o->policy, err) < 0)
		return -1;
	/* The same for --evidence: `--evidence ./report.txt`, a link a sandbox
	 * made to ~/.ssh/id_ed25519, copied the key into the sandbox. */
	for (size_t i = 0; i < o->n_evidence; i++) {
		const char *lex = o->evidence_lex != NULL ? o->evidence_lex[i] : NULL;
		if (lex != NULL && berth_path_ancestor_or_same(o->policy.workspace, lex) &&
		    !berth_path_ancestor_or_same(o->policy.workspace, o->evidence[i])) {
			char c1[PATH_MAX], c2[PATH_MAX];
			berth_usage_err(
			    err,
			    "--evidence `%s` leads out of the workspace, through a symbolic link, to `%s`",
			    berth_text_clean(c1, sizeof c1, lex),
			    berth_text_clean(c2, sizeof c2, o->evidence[i]));
			return berth_err_hint(
			    err,
			    "a sandbox may have made that link: if `%s` is what you mean, name it "
			    "directly",
			    c2);
		}
	}
	/* berth mounts the evidence at /evidence: nothing else may go there. */
	for (size_t i = 0; o->n_evidence > 0 && i < o->policy.n_mounts; i++)
		if (berth_path_ancestor_or_same("/evidence", o->policy.mounts[i].dst) ||
		    berth_path_ancestor_or_same(o->policy.mounts[i].dst, "/evidence")) {
			berth_usage_err(err,
					"mount target `%s` collides with /evidence, where --evidence goes",
					o->policy.mounts[i].dst);
			return berth_err_hint(err, "choose another target such as `/data`");
		}
	if (optind >= argc) {
		berth_usage_err(err, "no command given");
		return berth_err_hint(err, "write `berth run [OPTIONS] -- COMMAND [ARG...]`");
	}
	o->policy.argc = (size_t)(argc - optind);
	o->policy.argv = calloc(o->policy.argc + 1, sizeof(char *));
	if (o->policy.argv == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < o->policy.argc; i++) {
		o->policy.argv[i] = strdup(argv[optind + (int)i]);
		if (o->policy.argv[i] == NULL)
			return berth_err(err, ENOMEM, "out of memory");
	}
	if (o->policy.argv[0][0] == '\0') {
		berth_usage_err(err, "empty command name");
		return berth_err_hint(err, "write `berth run -- COMMAND [ARG...]`");
	}
	/* Every limit, here and not only in the runtime: --dry-run refuses
	 * what the run refuses, before anything is recorded. */
	return berth_policy_validate(&o->policy, err);
}

void berth_run_opts_free(struct berth_run_opts *o)
{
	for (size_t i = 0; i < o->n_evidence; i++) {
		free(o->evidence[i]);
		if (o->evidence_lex != NULL)
			free(o->evidence_lex[i]);
	}
	free(o->evidence);
	free(o->evidence_lex);
	o->evidence = NULL;
	o->evidence_lex = NULL;
	o->n_evidence = 0;
	berth_policy_free(&o->policy);
	free(o->runtime);
	o->runtime = NULL;
	for (int i = 0; i < o->n_widenings; i++)
		free(o->widenings[i]);
	o->n_widenings = 0;
}
