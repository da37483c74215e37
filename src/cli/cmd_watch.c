/* SPDX-License-Identifier: MIT */
/*
 * cmd_watch.c - `berth watch RUN|SESSION [--json] [--dir DIR]`: follow the
 * denial records of a run in the audit trail as they are written, until its
 * run.stop (docs/denials.md).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../audit/audit.h"
#include "../session/session.h"
#include "../supervisor/runs.h"
#include "cli.h"

static const char watch_usage[] =
    "usage: berth watch RUN|SESSION [--json] [--dir DIR]\n"
    "\n"
    "  follow the denials of run RUN (16 hex digits) or of session SESSION's run, as the\n"
    "  audit trail records them: one line each (blocker, what was tried, the fix), then the\n"
    "  run's summary; ends when the run's run.stop is recorded\n"
    "  --json     the records themselves, one JSON object a line\n"
    "  --dir DIR  the audit directory (default $BERTH_AUDIT_DIR, $XDG_STATE_HOME/berth/audit,\n"
    "             ~/.local/state/berth/audit)\n"
    "\n"
    "exit status: 0 the run ended; 2 usage error or no such run or session; 125 the log cannot\n"
    "be read\n";

struct watch_ctx {
	const char *run;
	bool json;
	uint64_t last; /* the last seq shown */
	bool started, stopped;
};

static const char *str(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s != NULL ? s : "";
}

static void show_denial(const json_t *p)
{
	char what[512];
	const json_t *port = json_object_get(p, "port");

	if (str(p, "path")[0] != '\0')
		snprintf(what, sizeof what, "%s", str(p, "path"));
	else if (str(p, "address")[0] != '\0' && json_is_integer(port))
		snprintf(what, sizeof what, "%s port %lld", str(p, "address"),
			 (long long)json_integer_value(port));
	else
		snprintf(what, sizeof what, "-");
	printf("denied: %s %s, by %s %s (%s)\n", CLI_SAFE(str(p, "kind")), CLI_SAFE(what),
	       CLI_SAFE(str(p, "source")), CLI_SAFE(str(p, "blockers")), CLI_SAFE(str(p, "exe")));
	printf("  rule: %s\n", CLI_SAFE(str(p, "rule")));
	if (strcmp(str(p, "fix"), "none available") == 0)
		printf("  fix: none available: %s\n", CLI_SAFE(str(p, "why")));
	else
		printf("  fix: %s\n", CLI_SAFE(str(p, "fix")));
}

static void show_summary(const json_t *p)
{
	char *kinds = json_dumps(json_object_get(p, "kinds"), JSON_COMPACT | JSON_SORT_KEYS);

	if (strcmp(str(p, "landlock"), "seen") == 0)
		printf("denials: %lld by Landlock %s, %lld recorded one by one\n",
		       (long long)json_integer_value(json_object_get(p, "count")),
		       CLI_SAFE(kinds != NULL ? kinds : "{}"),
		       (long long)json_integer_value(json_object_get(p, "recorded")));
	else
		printf("denials: Landlock's not seen: %s\n", CLI_SAFE(str(p, "why")));
	free(kinds);
}

static int one(const struct berth_audit_record *r, void *arg)
{
	struct watch_ctx *c = arg;

	if (strcmp(r->run_id, c->run) != 0)
		return 0;
	c->started = true;
	if (r->seq <= c->last)
		return 0;
	c->last = r->seq;
	if (strcmp(r->kind, "run.stop") == 0)
		c->stopped = true;
	if (strcmp(r->kind, "denial") != 0 && strcmp(r->kind, "denial.summary") != 0 &&
	    strcmp(r->kind, "run.stop") != 0)
		return 0;
	if (c->json) {
		char *s = json_dumps(r->json, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
		if (s != NULL)
			puts(s);
		free(s);
	} else if (strcmp(r->kind, "denial") == 0 && json_object_get(r->payload, "source") != NULL) {
		show_denial(r->payload);
	} else if (strcmp(r->kind, "denial") == 0) {
		/* the rules' refusal of a whole run (docs/rules.md) */
		printf("denied: the run, by %s: %s\n", CLI_SAFE(str(r->payload, "by")),
		       CLI_SAFE(str(r->payload, "message")));
	} else if (strcmp(r->kind, "denial.summary") == 0) {
		show_summary(r->payload);
	}
	fflush(stdout);
	return 0;
}

/* RUN, or SESSION's run (its meta's run_id), into @run. */
static int resolve(const char *arg, char run[17])
{
	struct berth_error err = {0};

	if (berth_run_id_valid(arg)) {
		snprintf(run, 17, "%s", arg);
		return 0;
	}
	if (berth_session_name_check(arg, &err) == 0) {
		json_t *m = berth_session_meta_read(arg, &err);
		const char *id = json_string_value(json_object_get(m, "run_id"));
		if (id != NULL && berth_run_id_valid(id)) {
			snprintf(run, 17, "%s", id);
			json_decref(m);
			return 0;
		}
		json_decref(m);
	}
	fprintf(stderr,
		"berth: `%s` is neither a run id (16 lowercase hex digits) nor a session with a run\n",
		CLI_SAFE(arg));
	fputs("berth: hint: `berth audit --kind run.start` lists the runs, `berth ps` the sessions\n",
	      stderr);
	return -1;
}

int cmd_watch(int argc, char **argv)
{
	static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
					     {"dir", required_argument, NULL, 'd'},
					     {"help", no_argument, NULL, 'h'},
					     {0}};
	struct watch_ctx c = {0};
	const char *dir = NULL;
	char run[17];
	int o;

	optind = 1;
	while ((o = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		if (o == 'j')
			c.json = true;
		else if (o == 'd')
			dir = optarg;
		else if (o == 'h') {
			fputs(watch_usage, stdout);
			return 0;
		} else {
			fputs(watch_usage, stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fputs(watch_usage, stderr);
		return 2;
	}
	if (resolve(argv[optind], run) < 0)
		return 2;
	c.run = run;
	/* A poll of the whole log, a few times a second: the log has no
	 * change notification, and a run's records are few. */
	for (;;) {
		struct berth_error err = {0};
		if (berth_audit_each(dir, one, &c, &err) < 0) {
			cli_print_error(&err);
			return 125;
		}
		if (c.stopped)
			return 0;
		nanosleep(&(struct timespec){.tv_nsec = 200 * 1000 * 1000}, NULL);
	}
}
