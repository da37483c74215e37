/* SPDX-License-Identifier: MIT */
/*
 * cmd_run.c - `berth run`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../policy/flags.h"
#include "../policy/rules.h"
#include "../sandbox/sandbox.h"
#include "cli.h"

static const char run_usage[] =
	"usage: berth run [OPTIONS] -- COMMAND [ARG...]\n"
	"\n"
	"  --workspace DIR      host directory mounted read-write at /workspace (default: .)\n"
	"  --tmp-size SIZE      size of the private /tmp and home tmpfs (default 1G)\n"
	"  --memory SIZE        memory limit, swap off (default 8G)\n"
	"  --cpus N             CPU limit (default 4)\n"
	"  --pids N             process limit (default 512)\n"
	"  --nofile N           open file limit (default 8192)\n"
	"  --timeout DUR        kill the whole sandbox after DUR (30s, 500ms, 5m), exit 124\n"
	"  --network none|proxy|host\n"
	"                       none: loopback only (default); proxy: loopback and berth's egress broker\n"
	"                       for the --allow-host hosts; host: share the host network (widening)\n"
	"  --allow-host PATTERN reach PATTERN through the broker: host, *.domain, IP or [IPv6],\n"
	"                       optionally :PORT or :* (default ports 80 and 443); implies --network proxy\n"
	"  --dns SERVER         the broker's DNS server (ip[:port]; default: the host's resolver)\n"
	"  --env NAME[=VALUE]   pass a variable (from berth's environment, or VALUE)\n"
	"  --ro SRC[:DST]       bind a host path read-only\n"
	"  --rw SRC[:DST]       bind a host path read-write (widening)\n"
	"  --unprotect PATH     let the sandbox write a guarded workspace path (widening)\n"
	"  --allow-degraded     run even when the kernel cannot enforce everything (widening)\n"
	"  --yes                do not ask to confirm widenings\n"
	"  --dry-run [--json]   print the compiled policy and its digest, do not run\n"
	"\n"
	"exit status: the command's; 128+N if killed by signal N; 124 timeout; 125 berth failed;\n"
	"126 command not executable; 127 command not found; 2 usage error or refused by a rules file\n"
	"(/etc/berth/rules.yml, $XDG_CONFIG_HOME/berth/rules.yml, the nearest .berth/rules.yml)\n";

/* One line per widening; ask when a person is at the terminal. */
static int confirm_widenings(const struct berth_run_opts *o)
{
	char answer[16];

	for (int i = 0; i < o->n_widenings; i++)
		fprintf(stderr, "berth: widening: %s\n", o->widenings[i]);
	if (o->n_widenings == 0 || o->yes || !isatty(STDIN_FILENO) || !isatty(STDERR_FILENO))
		return 0;
	fputs("berth: run with these widenings? [y/N] ", stderr);
	if (fgets(answer, sizeof answer, stdin) == NULL || (answer[0] != 'y' && answer[0] != 'Y')) {
		fputs("berth: not confirmed; nothing was run\n", stderr);
		return -1;
	}
	return 0;
}

static int dry_run(const struct berth_run_opts *o)
{
	struct berth_error err = {0};
	char *json = berth_policy_to_json(&o->policy, !o->json, &err);
	char digest[65];

	if (json == NULL || berth_policy_digest(&o->policy, digest, &err) < 0) {
		free(json);
		cli_print_error(&err);
		return 125;
	}
	if (o->json)
		printf("{\"digest\":\"sha256:%s\",\"policy\":%s}\n", digest, json);
	else
		printf("%s\ndigest: sha256:%s\n", json, digest);
	free(json);
	return 0;
}

/*
 * Every rules file (system, user, project) must allow the policy; checked
 * before anything is created or a widening is confirmed.  Returns 0, or the
 * exit status (2: refused or a malformed rules file; 125: unreadable).
 */
static int check_rules(const struct berth_run_opts *o)
{
	struct berth_error err = {0};
	struct berth_rules *r = NULL;
	struct berth_widening_ctx ctx = {.network_mode = o->network_mode};
	int status = 0;

	if (berth_rules_load_all(NULL, &r, &err) < 0 || berth_rules_check(r, &o->policy, &ctx, &err) < 0) {
		cli_print_error(&err);
		status = err.status ? err.status : 2;
	}
	berth_rules_free(r);
	return status;
}

int cmd_run(int argc, char **argv)
{
	struct berth_run_opts o;
	struct berth_runtime_opts ro = {0};
	struct berth_error err = {0};
	int status = 0;

	if (berth_run_parse(argc, argv, getenv, &o, &err) < 0) {
		cli_print_error(&err);
		berth_run_opts_free(&o);
		return err.status ? err.status : 2;
	}
	if (o.help) {
		fputs(run_usage, stdout);
		berth_run_opts_free(&o);
		return 0;
	}
	if (berth_parse_force_off(getenv("BERTH_TEST_FORCE_OFF"), &ro.force_off, &err) < 0) {
		cli_print_error(&err);
		berth_run_opts_free(&o);
		return 2;
	}
	status = check_rules(&o);
	if (status != 0) {
		berth_run_opts_free(&o);
		return status;
	}
	if (o.dry_run) {
		status = dry_run(&o);
		berth_run_opts_free(&o);
		return status;
	}
	if (confirm_widenings(&o) < 0) {
		berth_run_opts_free(&o);
		return 125;
	}
	if (berth_sandbox_run(&o.policy, &ro, &status, &err) < 0) {
		cli_print_error(&err);
		status = err.status ? err.status : 125;
	}
	berth_run_opts_free(&o);
	return status;
}
