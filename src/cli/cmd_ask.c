/* SPDX-License-Identifier: MIT */
/*
 * cmd_ask.c - `berth approve RUN ID [--always]`, `berth deny RUN ID
 * [--always]` and `berth asks RUN`: answer, or list, the asks of a running
 * `berth run --ask` through its control socket (docs/ask.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../supervisor/ask.h"
#include "../supervisor/runs.h"
#include "cli.h"

static const char ask_usage[] =
    "usage: berth approve RUN ID [--always]\n"
    "       berth deny RUN ID [--always]\n"
    "       berth asks RUN\n"
    "\n"
    "  answer ask ID of run RUN (16 hex digits, as the ask's line names it), a `berth run --ask`\n"
    "  that still runs; --always: the same answer for that path for the rest of the run\n"
    "  (nothing is written to a rules file); `berth asks` lists the asks that wait:\n"
    "  ID ACCESS PID COMM MS-LEFT PATH\n"
    "\n"
    "exit status: 0 done; 1 the ask waits no more (answered, timed out); 2 usage error or no such\n"
    "running --ask run; 125 the control socket cannot be used\n";

static int usage(void)
{
	fputs(ask_usage, stderr);
	return 2;
}

static int request(const char *run, const char *line, bool print_all)
{
	struct berth_error err = {0};
	char dir[4096], reply[16384];

	if (!berth_run_id_valid(run)) {
		fprintf(stderr, "berth: `%s` is not a run id (16 lowercase hex digits)\n", CLI_SAFE(run));
		return 2;
	}
	if (berth_run_dir(run, false, dir, &err) < 0 ||
	    berth_ask_request(dir, line, reply, sizeof reply, &err) < 0) {
		cli_print_error(&err);
		return err.status ? err.status : 125;
	}
	if (print_all) {
		for (char *l = strtok(reply, "\n"); l != NULL; l = strtok(NULL, "\n"))
			printf("%s\n", CLI_SAFE(l));
		return strncmp(reply, "error:", 6) == 0 ? 1 : 0;
	}
	if (strcmp(reply, "ok\n") == 0)
		return 0;
	fprintf(stderr, "berth: %s",
		reply[0] != '\0' ? CLI_SAFE(reply) : "no answer from the run (it may have ended)\n");
	return strncmp(reply, "error: ask", 10) == 0 ? 1 : 125;
}

static int answer(int argc, char **argv, const char *verb)
{
	bool always = false;
	const char *pos[2] = {NULL, NULL};
	int np = 0;
	char line[64];

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--always") == 0)
			always = true;
		else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(ask_usage, stdout);
			return 0;
		} else if (argv[i][0] == '-' || np == 2)
			return usage();
		else
			pos[np++] = argv[i];
	}
	if (np != 2)
		return usage();
	char *end;
	unsigned long id = strtoul(pos[1], &end, 10);
	if (pos[1][0] < '1' || pos[1][0] > '9' || *end != '\0' || id > 999999999) {
		fprintf(stderr, "berth: `%s` is not an ask id (1 to 999999999)\n", CLI_SAFE(pos[1]));
		return 2;
	}
	snprintf(line, sizeof line, "%s %lu%s\n", verb, id, always ? " always" : "");
	return request(pos[0], line, false);
}

int cmd_approve(int argc, char **argv)
{
	return answer(argc, argv, "approve");
}

int cmd_deny(int argc, char **argv)
{
	return answer(argc, argv, "deny");
}

int cmd_asks(int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs(ask_usage, stdout);
		return 0;
	}
	if (argc != 2 || argv[1][0] == '-')
		return usage();
	return request(argv[1], "list\n", true);
}
