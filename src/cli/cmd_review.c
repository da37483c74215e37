/* SPDX-License-Identifier: MIT */
/*
 * cmd_review.c - `berth diff`, `berth apply` and `berth discard`: the change
 * set of a `berth run --review` (docs/review.md, src/supervisor/review.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../audit/audit.h"
#include "../supervisor/review.h"
#include "../supervisor/runs.h"
#include "cli.h"

static const char diff_usage[] =
    "usage: berth diff [--json] RUN|--last [PATH...]\n"
    "  the changes a `berth run --review` made, against the host's tree: a unified\n"
    "  diff for text, a line for binaries, modes, links and deletions\n";
static const char apply_usage[] =
    "usage: berth apply [--include-guarded] RUN|--last [PATH...]\n"
    "  land a --review run's changes (all, or those at or below each PATH) in the host's\n"
    "  tree, each file atomically; a file whose host copy changed since the run started is\n"
    "  refused and named; a guarded path (git's directory, agent and editor settings...)\n"
    "  is held back unless --include-guarded, and named either way\n"
    "  exit status: 0 all applied; 1 something refused or held back; 2 usage; 125 failed\n";
static const char discard_usage[] = "usage: berth discard RUN|--last\n"
				    "  drop a --review run's change set; the host's tree is not touched\n";

struct args {
	bool json, include_guarded, help;
	char run_id[17];
	char **paths;
	size_t n_paths;
};

/* RUN or --last, then the paths; a session's name is refused, said why. */
static int parse(int argc, char **argv, bool paths_ok, struct args *a, const char *usage)
{
	struct berth_error err = {0};
	const char *run = NULL;
	int i;

	*a = (struct args){0};
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0 && strcmp(argv[0], "diff") == 0)
			a->json = true;
		else if (strcmp(argv[i], "--include-guarded") == 0 && strcmp(argv[0], "apply") == 0)
			a->include_guarded = true;
		else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			a->help = true;
		else if (strcmp(argv[i], "--last") == 0 && run == NULL)
			run = "--last";
		else if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "berth: %s: unknown option `%s`\n%s", argv[0], CLI_SAFE(argv[i]),
				usage);
			return 2;
		} else if (run == NULL)
			run = argv[i];
		else
			break;
	}
	if (a->help) {
		fputs(usage, stdout);
		return 0;
	}
	if (run == NULL) {
		fprintf(stderr, "berth: %s: which run? give its id or --last\n%s", argv[0], usage);
		return 2;
	}
	if (strcmp(run, "--last") == 0 || strcmp(run, "last") == 0) {
		if (berth_run_get_last(a->run_id, &err) < 0) {
			cli_print_error(&err);
			return err.status ? err.status : 2;
		}
	} else if (berth_run_id_valid(run)) {
		snprintf(a->run_id, sizeof a->run_id, "%s", run);
	} else {
		fprintf(
		    stderr,
		    "berth: %s: `%s` is not a run id (16 lowercase hex digits)\n"
		    "berth: hint: sessions have no reviewable workspace yet (docs/review.md); give the id "
		    "of a `berth run --review`, or --last\n",
		    argv[0], CLI_SAFE(run));
		return 2;
	}
	if (i < argc && !paths_ok) {
		fprintf(stderr, "berth: %s: takes no paths (`%s`)\n%s", argv[0], CLI_SAFE(argv[i]), usage);
		return 2;
	}
	a->paths = argv + i;
	a->n_paths = (size_t)(argc - i);
	return -1;
}

/* One record in the audit trail, actor the caller; a failure is said, and
 * is the command's failure (what was done is done: the message says so). */
static int record(const char *run_id, const char *kind, json_t *payload)
{
	struct berth_error err = {0};
	struct berth_audit *au = berth_audit_open(NULL, &err);
	char actor[32];
	int rc;

	snprintf(actor, sizeof actor, "uid:%u", (unsigned)getuid());
	rc = au != NULL ? berth_audit_append(au, run_id, kind, actor, payload, NULL, NULL, &err) : -1;
	berth_audit_close(au);
	if (rc < 0) {
		cli_print_error(&err);
		fprintf(stderr, "berth: the audit trail could not record `%s` for run %s\n", kind, run_id);
	}
	return rc;
}

int cmd_diff(int argc, char **argv)
{
	struct berth_error err = {0};
	struct args a;
	int rc = parse(argc, argv, true, &a, diff_usage);

	if (rc >= 0)
		return rc;
	if (berth_review_diff(a.run_id, a.paths, a.n_paths, a.json, stdout, &err) < 0) {
		cli_print_error(&err);
		return err.status ? err.status : 125;
	}
	return fflush(stdout) == 0 ? 0 : 125;
}

static void apply_line(void *arg, enum berth_review_outcome o, const char *path, const char *why)
{
	(void)arg;
	switch (o) {
	case BERTH_REVIEW_APPLIED:
		printf("applied: %s\n", CLI_SAFE(path));
		break;
	case BERTH_REVIEW_APPLIED_GUARDED:
		printf("applied: %s\n", CLI_SAFE(path));
		fprintf(stderr, "berth: warning: applied the guarded path `%s` (%s)\n", CLI_SAFE(path),
			CLI_SAFE(why));
		break;
	case BERTH_REVIEW_HELD_BACK:
		fprintf(stderr, "berth: held back: `%s` is guarded (%s); apply it with --include-guarded\n",
			CLI_SAFE(path), CLI_SAFE(why));
		break;
	case BERTH_REVIEW_REFUSED:
		fprintf(stderr, "berth: refused: `%s`: %s\n", CLI_SAFE(path), CLI_SAFE(why));
		break;
	case BERTH_REVIEW_ALREADY:
	default:
		break;
	}
}

int cmd_apply(int argc, char **argv)
{
	struct berth_error err = {0};
	struct berth_review_apply_result res;
	struct args a;
	int rc = parse(argc, argv, true, &a, apply_usage);
	struct berth_review_apply_opts o;

	if (rc >= 0)
		return rc;
	o = (struct berth_review_apply_opts){
	    .paths = a.paths, .n_paths = a.n_paths, .include_guarded = a.include_guarded, .line = apply_line};
	rc = berth_review_apply(a.run_id, &o, &res, &err);
	if (res.record != NULL && (res.applied > 0 || res.refused > 0 || res.held_back > 0) &&
	    record(a.run_id, "applied", res.record) < 0)
		rc = -1;
	json_decref(res.record);
	if (rc < 0) {
		if (err.msg[0] != '\0')
			cli_print_error(&err);
		return err.status ? err.status : 125;
	}
	if (res.applied + res.refused + res.held_back + res.already == 0 && a.n_paths > 0) {
		fprintf(stderr, "berth: apply: no change of run %s is at or below the paths given\n",
			a.run_id);
		return 2;
	}
	fprintf(stderr, "berth: %zu applied, %zu refused, %zu held back%s\n", res.applied, res.refused,
		res.held_back, res.already > 0 ? " (the rest applied before)" : "");
	return res.refused + res.held_back > 0 ? BERTH_REVIEW_EXIT_REFUSED : 0;
}

int cmd_discard(int argc, char **argv)
{
	struct berth_error err = {0};
	struct args a;
	char digest[72];
	int rc = parse(argc, argv, false, &a, discard_usage);

	if (rc >= 0)
		return rc;
	if (berth_review_discard(a.run_id, digest, &err) < 0) {
		cli_print_error(&err);
		return err.status ? err.status : 125;
	}
	json_t *p = json_pack("{s:s}", "digest", digest);
	rc = record(a.run_id, "discarded", p);
	json_decref(p);
	fprintf(stderr, "berth: discarded the change set of run %s; the host's tree is as it was\n",
		a.run_id);
	return rc < 0 ? 125 : 0;
}
