/* SPDX-License-Identifier: MIT */
/*
 * main.c - the berth command line: parse, dispatch, print.  All the work is
 * in the core library (src/policy, src/sandbox).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../policy/flags.h"
#include "../util/rundir.h"
#include "cli.h"

#ifndef BERTH_VERSION
#define BERTH_VERSION "0.0.0"
#endif

static const char usage[] =
    "usage: berth COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  run [OPTIONS] -- COMMAND [ARG...]   run a command in a sandbox (see `berth run --help`)\n"
    "  doctor [--json]                     what this machine can enforce\n"
    "  init NAME [--runtime R]             scaffold a resident app (native, python or node)\n"
    "  dev [APP-DIR...]                    run apps, reload them on change, serve `berth rpc`\n"
    "  rpc APP --export NAME [--input J]   call an app's export\n"
    "  test [APP-DIR]                      check an app against its manifest's examples\n"
    "  policy APP-DIR [--json]             print the policy compiled from an app's berth.yml\n"
    "  mcp --app NAME --app-dir DIR ...    serve apps' exports as MCP tools over stdio\n"
    "  tools APP-DIR... [--format F]       print apps' exports as tool definitions\n"
    "  spawn PROFILE [OPTIONS]             start an agent session, detached (see `berth spawn --help`)\n"
    "  ps [--json]                         list sessions: state, uptime, network, policy\n"
    "  attach NAME                         the session's terminal (detach: Ctrl-])\n"
    "  peek NAME [--lines N]               the session's screen as text\n"
    "  send NAME TEXT [--enter]            type into the session\n"
    "  logs NAME [-f]                      the session's output\n"
    "  stop NAME... | --all                stop sessions\n"
    "  rm NAME... [--purge]                remove stopped sessions (--purge: their workspace too)\n"
    "  fleet up|ps|stop FILE               start, list or stop the agents of a fleet file\n"
    "  attest RUN_ID|--last [--out FILE]   a signed record of what a run enforced (--verify FILE)\n"
    "  audit [list|verify] [OPTIONS]       the audit trail: list records, verify the chain\n"
    "  watch RUN|SESSION [--json]          follow a run's denials as they are recorded\n"
    "  approve|deny RUN ID [--always]      answer an ask of a `berth run --ask` (docs/ask.md)\n"
    "  asks RUN                            the asks of a `berth run --ask` that wait\n"
    "  diff [--json] RUN|SESSION [PATH...] what a `--review` run or session changed (RUN: or --last)\n"
    "  apply RUN|SESSION [PATH...]         land those changes in the host's tree (--include-guarded)\n"
    "  discard RUN|SESSION                 drop them; the host's tree stays as it is\n"
    "  checkpoints [--json] SESSION        a --review session's checkpoints, one per agent turn\n"
    "  rollback SESSION CHECKPOINT         make a checkpoint the (ended) session's change set\n"
    "  export k8s --image IMAGE [OPTIONS]  a RuntimeClass, Pod and NetworkPolicy for Kubernetes\n"
    "  oci [GLOBAL] COMMAND ...            the OCI runtime for podman and containerd (`berth oci --help`)\n"
    "  vm install|status|probe             the microVM runtime's pinned guest (`berth vm --help`)\n"
    "  version                             print the version\n"
    "\n"
    "see berth(1)\n";

void cli_print_error(const struct berth_error *err)
{
	fprintf(stderr, "berth: %s\n", err->msg[0] ? CLI_SAFE(err->msg) : "unknown error");
	if (err->hint[0])
		fprintf(stderr, "berth: hint: %s\n", CLI_SAFE(err->hint));
}

char *cli_json_dumps(const json_t *v, size_t flags)
{
	char *raw = json_dumps(v, flags), *safe;

	if (raw == NULL)
		return NULL;
	safe = berth_json_text_safe(raw);
	free(raw);
	return safe;
}

json_t *cli_json_str(const char *s)
{
	json_t *v = json_string(s != NULL ? s : "");
	char *clean;

	if (v != NULL)
		return v;
	clean = malloc(CLI_SAFE_MAX);
	if (clean == NULL)
		return json_string("");
	v = json_string(berth_text_clean(clean, CLI_SAFE_MAX, s));
	free(clean);
	return v != NULL ? v : json_string("");
}

int cli_confirm_widenings(const struct berth_run_opts *o, const char *verb, const char *done)
{
	char answer[16];

	for (int i = 0; i < o->n_widenings; i++)
		fprintf(stderr, "berth: widening: %s\n", CLI_SAFE(o->widenings[i]));
	if (o->n_widenings == 0 || o->yes || !isatty(STDIN_FILENO) || !isatty(STDERR_FILENO))
		return 0;
	fprintf(stderr, "berth: %s with these widenings? [y/N] ", verb);
	if (fgets(answer, sizeof answer, stdin) == NULL || (answer[0] != 'y' && answer[0] != 'Y')) {
		fprintf(stderr, "berth: not confirmed; nothing was %s\n", done);
		return -1;
	}
	return 0;
}

/* Every command, by the name it is called with. */
static const struct {
	const char *name;
	int (*fn)(int, char **);
} commands[] = {
    {"run", cmd_run},
    {"doctor", cmd_doctor},
    {"policy", cmd_policy},
    {"rpc", cmd_rpc},
    {"test", cmd_test},
    {"dev", cmd_dev},
    {"init", cmd_init},
    {"mcp", cmd_mcp},
    {"tools", cmd_tools},
    {"spawn", cmd_spawn},
    {"ps", cmd_ps},
    {"peek", cmd_peek},
    {"send", cmd_send},
    {"logs", cmd_logs},
    {"attach", cmd_attach},
    {"stop", cmd_stop},
    {"rm", cmd_rm},
    {"fleet", cmd_fleet},
    {"attest", cmd_attest},
    {"audit", cmd_audit},
    {"export", cmd_export},
    {"oci", cmd_oci},
    {"vm", cmd_vm},
    {"watch", cmd_watch},
    {"diff", cmd_diff},
    {"apply", cmd_apply},
    {"discard", cmd_discard},
    {"checkpoints", cmd_checkpoints},
    {"rollback", cmd_rollback},
    {"approve", cmd_approve},
    {"deny", cmd_deny},
    {"asks", cmd_asks},
};

int main(int argc, char **argv)
{
	/* Called as `berth-oci` (a link to berth): the OCI runtime's command
	 * line itself, for engines that run a runtime binary with runc's
	 * arguments (podman --runtime, containerd's BinaryName). */
	const char *base = argc > 0 ? strrchr(argv[0], '/') : NULL;
	if (argc > 0 && strcmp(base != NULL ? base + 1 : argv[0], "berth-oci") == 0)
		return cmd_oci(argc, argv);
	if (argc < 2) {
		fputs(usage, stderr);
		return 2;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
		if (strcmp(argv[1], commands[i].name) != 0)
			continue;
		/* Every command but doctor and oci (its state is under --root)
		 * keeps or reads state under the home: never made up
		 * (util/rundir.h). */
		struct berth_error err = {0};
		bool help = false;
		for (int k = 2; k < argc; k++)
			help = help || strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0;
		if (strcmp(argv[1], "doctor") != 0 && strcmp(argv[1], "oci") != 0 && !help &&
		    berth_home_check(&err) < 0) {
			cli_print_error(&err);
			return BERTH_EXIT_USAGE;
		}
		return commands[i].fn(argc - 1, argv + 1);
	}
	if (strcmp(argv[1], "version") == 0 || strcmp(argv[1], "--version") == 0) {
		printf("berth %s\n", BERTH_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(usage, stdout);
		return 0;
	}
	fprintf(stderr, "berth: unknown command `%s`\nberth: hint: see `berth --help`\n", argv[1]);
	return 2;
}
