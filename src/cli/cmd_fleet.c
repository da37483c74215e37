/* SPDX-License-Identifier: MIT */
/*
 * cmd_fleet.c - `berth fleet up|ps|stop FILE` (docs/sessions.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../session/fleet.h"
#include "../session/session.h"
#include "cli.h"

static const char fleet_usage[] =
    "usage: berth fleet up FILE [--yes]   start every agent of FILE, or none\n"
    "       berth fleet ps FILE [--json]  berth ps for FILE's agents\n"
    "       berth fleet stop FILE         stop FILE's agents\n"
    "exit status: 0; 2 usage or an invalid file (FILE:LINE:COL: message); 125 an agent failed to start\n"
    "(the ones already started are stopped and removed)\n";

static int up(struct berth_fleet *f, bool yes)
{
	int rc = 0;
	size_t started = 0;
	pid_t pid;

	/* Everything is checked before anything is created. */
	for (size_t i = 0; i < f->n; i++) {
		struct berth_error err = {0};
		f->agents[i].rows = 40;
		f->agents[i].cols = 120;
		if (berth_spawn_prepare(&f->agents[i], getenv, &err) < 0) {
			fprintf(stderr, "berth: %s:%lu: agent `%s`: %s\n", CLI_SAFE(f->path), f->lines[i],
				CLI_SAFE(f->agents[i].name), CLI_SAFE(err.msg));
			if (err.hint[0])
				fprintf(stderr, "berth: hint: %s\n", CLI_SAFE(err.hint));
			return err.status ? err.status : BERTH_EXIT_USAGE;
		}
		for (size_t k = 0; k < f->agents[i].n_notes; k++)
			fprintf(stderr, "berth: %s: %s\n", CLI_SAFE(f->agents[i].name),
				CLI_SAFE(f->agents[i].notes[k]));
		for (int k = 0; k < f->agents[i].run.n_widenings; k++)
			fprintf(stderr, "berth: %s: widening: %s\n", CLI_SAFE(f->agents[i].name),
				CLI_SAFE(f->agents[i].run.widenings[k]));
		/* What the file takes from the host beyond the profile: a fleet
		 * file may come with a repository (berth_fleet_asks). */
		char **asks = NULL;
		int n_asks = berth_fleet_asks(f, i, getenv, &asks, &err);
		if (n_asks < 0) {
			fprintf(stderr, "berth: %s:%lu: agent `%s`: %s\n", CLI_SAFE(f->path), f->lines[i],
				CLI_SAFE(f->agents[i].name), CLI_SAFE(err.msg));
			return err.status ? err.status : BERTH_EXIT_USAGE;
		}
		for (int k = 0; k < n_asks; k++)
			fprintf(stderr, "berth: %s: from the fleet file: %s\n", CLI_SAFE(f->agents[i].name),
				CLI_SAFE(asks[k]));
		berth_fleet_asks_free(asks, (size_t)n_asks);
		/* Only the person's --yes counts: a `--yes` among the file's own
		 * options would let the file approve itself. */
		if ((f->agents[i].run.n_widenings > 0 || n_asks > 0) && !yes) {
			fprintf(
			    stderr,
			    "berth: %s:%lu: agent `%s` asks for %s: read the lines above, then pass --yes to "
			    "`berth fleet up` (nothing was started)\n",
			    CLI_SAFE(f->path), f->lines[i], CLI_SAFE(f->agents[i].name),
			    f->agents[i].run.n_widenings > 0 && n_asks > 0 ? "widenings and host resources"
			    : n_asks > 0                                   ? "host resources"
									   : "widenings");
			return BERTH_EXIT_USAGE;
		}
	}
	for (size_t i = 0; i < f->n; i++) {
		struct berth_error err = {0};
		int lr = berth_spawn_launch(&f->agents[i], &pid, &err);
		if (f->agents[i].launch_notice[0] != '\0')
			fprintf(stderr, "berth: %s\n", CLI_SAFE(f->agents[i].launch_notice));
		if (lr < 0) {
			fprintf(stderr, "berth: %s:%lu: agent `%s`: %s\n", CLI_SAFE(f->path), f->lines[i],
				CLI_SAFE(f->agents[i].name), CLI_SAFE(err.msg));
			rc = err.status ? err.status : BERTH_EXIT_INTERNAL;
			break;
		}
		started++;
		printf("%s\n", f->agents[i].name);
	}
	fflush(stdout);
	if (rc == 0)
		return 0;
	/* All or none: take back the ones started. */
	if (started > 0) {
		char **names = calloc(started, sizeof *names);
		for (size_t i = 0; names != NULL && i < started; i++)
			names[i] = f->agents[i].name;
		fprintf(stderr, "berth: rolling back %zu started session(s)\n", started);
		if (names != NULL)
			berth_cli_stop_many(names, (int)started, 1000);
		for (size_t i = 0; i < started; i++) {
			struct berth_error err = {0};
			if (berth_session_remove(f->agents[i].name, true, &err) < 0)
				cli_print_error(&err);
		}
		free(names);
	}
	return rc;
}

int cmd_fleet(int argc, char **argv)
{
	struct berth_fleet f;
	struct berth_error err = {0};
	bool yes = false, json = false;
	int rc;

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0)) {
		fputs(fleet_usage, stdout);
		return 0;
	}
	if (argc < 3 ||
	    (strcmp(argv[1], "up") != 0 && strcmp(argv[1], "ps") != 0 && strcmp(argv[1], "stop") != 0)) {
		fputs(fleet_usage, stderr);
		return BERTH_EXIT_USAGE;
	}
	for (int i = 3; i < argc; i++) {
		if (strcmp(argv[i], "--yes") == 0 && strcmp(argv[1], "up") == 0)
			yes = true;
		else if (strcmp(argv[i], "--json") == 0 && strcmp(argv[1], "ps") == 0)
			json = true;
		else {
			fprintf(stderr, "berth: fleet %s: unexpected argument `%s`\n", CLI_SAFE(argv[1]),
				CLI_SAFE(argv[i]));
			fputs(fleet_usage, stderr);
			return BERTH_EXIT_USAGE;
		}
	}
	if (berth_fleet_load(argv[2], &f, &err) < 0) {
		cli_print_error(&err);
		berth_fleet_free(&f);
		return err.status ? err.status : BERTH_EXIT_USAGE;
	}
	if (strcmp(argv[1], "up") == 0) {
		rc = up(&f, yes);
	} else {
		char **av = calloc(f.n + 3, sizeof *av);
		int ac = 0;
		av[ac++] = argv[1];
		if (json)
			av[ac++] = "--json";
		for (size_t i = 0; i < f.n; i++)
			if (strcmp(argv[1], "ps") == 0 || berth_session_alive(f.agents[i].name))
				av[ac++] = f.agents[i].name;
		if (strcmp(argv[1], "ps") == 0)
			rc = cmd_ps(ac, av);
		else
			rc = ac > 1 ? berth_cli_stop_many(av + 1, ac - 1, 5000) : 0;
		free(av);
	}
	berth_fleet_free(&f);
	return rc;
}
