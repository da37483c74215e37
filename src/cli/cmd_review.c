/* SPDX-License-Identifier: MIT */
/*
 * cmd_review.c - `berth diff`, `berth apply` and `berth discard`: the change
 * set of a `berth run --review` (docs/review.md, src/supervisor/review.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../audit/audit.h"
#include "../session/session.h"
#include "../supervisor/review.h"
#include "../supervisor/runs.h"
#include "cli.h"

static const char diff_usage[] =
    "usage: berth diff [--json] RUN|SESSION|--last [PATH...]\n"
    "  the changes a `berth run --review` made, against the host's tree: a unified\n"
    "  diff for text, a line for binaries, modes, links and deletions\n";
static const char apply_usage[] =
    "usage: berth apply [--include-guarded] RUN|SESSION|--last [PATH...]\n"
    "  land a --review run's changes (all, or those at or below each PATH) in the host's\n"
    "  tree, each file atomically; a file whose host copy changed since the run started is\n"
    "  refused and named; a guarded path (git's directory, agent and editor settings...)\n"
    "  is held back unless --include-guarded, and named either way\n"
    "  exit status: 0 all applied; 1 something refused or held back; 2 usage; 125 failed\n";
static const char discard_usage[] = "usage: berth discard RUN|SESSION|--last\n"
				    "  drop a --review run's change set; the host's tree is not touched\n";

static const char checkpoints_usage[] =
    "usage: berth checkpoints [--json] SESSION|RUN\n"
    "  the checkpoints of a `berth spawn --review` session, one per agent turn: id, time,\n"
    "  paths changed since the checkpoint before, and the change set's digest\n";
static const char rollback_usage[] =
    "usage: berth rollback SESSION|RUN CHECKPOINT\n"
    "  make a checkpoint (0: the start) the session's change set, after the session ended;\n"
    "  the host's tree is not touched (land it with `berth apply`)\n"
    "  exit status: 0 rolled back; 2 usage, a running session, an unknown checkpoint,\n"
    "  a change set partly applied; 125 failed\n";

struct args {
	bool json, include_guarded, help;
	bool session_alive;
	char session[64]; /* "" unless a session was named */
	char run_id[17];
	char **paths;
	size_t n_paths;
};

/* RUN, SESSION or --last as a run id in @a (a session's is its run's, from
 * its session.json).  Returns -1, or an exit status after saying why. */
static int resolve(const char *cmd, const char *run, struct args *a)
{
	struct berth_error err = {0};
	json_t *meta;

	if (strcmp(run, "--last") == 0 || strcmp(run, "last") == 0) {
		if (berth_run_get_last_own(a->run_id, &err) < 0) {
			cli_print_error(&err);
			return err.status ? err.status : 2;
		}
		return -1;
	}
	/* a session of that name first: a name can be 16 hex digits too */
	if (berth_session_name_check(run, &err) == 0 && (meta = berth_session_meta_read(run, &err)) != NULL) {
		const char *id = json_string_value(json_object_get(meta, "run_id"));
		if (id == NULL || !berth_run_id_valid(id)) {
			fprintf(stderr, "berth: %s: session `%s` names no run in its session.json\n", cmd,
				CLI_SAFE(run));
			json_decref(meta);
			return 2;
		}
		snprintf(a->run_id, sizeof a->run_id, "%s", id);
		snprintf(a->session, sizeof a->session, "%s", run);
		a->session_alive = berth_session_alive(run);
		json_decref(meta);
		return -1;
	}
	if (berth_run_id_valid(run)) {
		snprintf(a->run_id, sizeof a->run_id, "%s", run);
		return -1;
	}
	fprintf(stderr,
		"berth: %s: `%s` is neither a run id (16 lowercase hex digits) nor a session\n"
		"berth: hint: `berth ps` lists the sessions; --last is the last run\n",
		cmd, CLI_SAFE(run));
	return 2;
}

/* RUN, SESSION or --last, then the paths (a live session refused, said why). */
static int parse(int argc, char **argv, bool paths_ok, struct args *a, const char *usage)
{
	const char *run = NULL;
	int i;

	*a = (struct args){0};
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0 &&
		    (strcmp(argv[0], "diff") == 0 || strcmp(argv[0], "checkpoints") == 0))
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
		fprintf(stderr, "berth: %s: which run? give its id, a session's name or --last\n%s", argv[0],
			usage);
		return 2;
	}
	int r = resolve(argv[0], run, a);
	if (r >= 0)
		return r;
	/* A live session's layer is still the agent's: its change set is made
	 * when it ends (its checkpoints are there before). */
	if (a->session_alive && strcmp(argv[0], "rollback") == 0) {
		/* overlayfs may not see its upper directory changed under a live
		 * mount: the rollback waits for the session's end */
		fprintf(stderr,
			"berth: rollback: session `%s` is running: its layer is mounted under the agent, and "
			"a rollback changes it only after the session ended\n"
			"berth: hint: `berth stop %s`, then `berth rollback %s CHECKPOINT` (the checkpoints "
			"stay)\n",
			a->session, a->session, a->session);
		return 2;
	}
	if (a->session_alive && strcmp(argv[0], "checkpoints") != 0) {
		fprintf(stderr,
			"berth: %s: session `%s` is running: its change set is made when it ends\n"
			"berth: hint: `berth stop %s` first; `berth checkpoints %s` lists its turns so far\n",
			argv[0], a->session, a->session, a->session);
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
	/* "name", not "session": a member whose name holds "session" is redacted (docs/audit.md) */
	if (res.record != NULL && a.session[0] != '\0')
		json_object_set_new(res.record, "name", json_string(a.session));
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
	json_t *p =
	    json_pack("{s:s, s:s?}", "digest", digest, "name", a.session[0] != '\0' ? a.session : NULL);
	rc = record(a.run_id, "discarded", p);
	json_decref(p);
	fprintf(stderr, "berth: discarded the change set of run %s; the host's tree is as it was\n",
		a.run_id);
	return rc < 0 ? 125 : 0;
}

/* A time in ns since the epoch as UTC, "2026-12-04T01:50:07Z". */
static void utc(json_int_t ns, char out[32])
{
	time_t t = (time_t)(ns / 1000000000LL);
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL || strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(out, 32, "?");
}

int cmd_checkpoints(int argc, char **argv)
{
	struct berth_error err = {0};
	struct args a;
	json_t *list, *cur = NULL, *c;
	size_t i;
	int rc = parse(argc, argv, false, &a, checkpoints_usage);

	if (rc >= 0)
		return rc;
	list = berth_review_checkpoints(a.run_id, &cur, &err);
	if (list == NULL && a.session[0] != '\0' && err.errnum == ENOENT) {
		/* a session whose run has kept nothing yet */
		list = json_array();
		cur = json_null();
	}
	if (list == NULL) {
		cli_print_error(&err);
		return err.status ? err.status : 125;
	}
	if (a.json) {
		json_t *o = json_pack("{s:s, s:s?, s:b, s:O, s:O}", "run_id", a.run_id, "name",
				      a.session[0] != '\0' ? a.session : NULL, "alive", a.session_alive,
				      "checkpoints", list, "current", cur);
		char *text = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;
		if (text != NULL)
			puts(text);
		free(text);
		json_decref(o);
		rc = text != NULL ? 0 : 125;
	} else {
		if (json_array_size(list) == 0)
			fprintf(stderr, "berth: run %s has no checkpoints%s\n", a.run_id,
				a.session_alive ? " yet (one is taken when the agent finishes a turn)" : "");
		else
			printf("%-4s %-20s %7s %7s %10s  %s\n", "ID", "TIME", "CHANGED", "ENTRIES", "BYTES",
			       "DIGEST");
		json_array_foreach(list, i, c) {
			char t[32];
			utc(json_integer_value(json_object_get(c, "time_ns")), t);
			printf("%-4lld %-20s %7lld %7lld %10lld  %s\n",
			       (long long)json_integer_value(json_object_get(c, "id")), t,
			       (long long)json_integer_value(json_object_get(c, "changed")),
			       (long long)json_integer_value(json_object_get(c, "entries")),
			       (long long)json_integer_value(json_object_get(c, "bytes")),
			       json_string_value(json_object_get(c, "digest")));
		}
		if (json_is_object(cur) && json_is_integer(json_object_get(cur, "checkpoint")))
			printf("change set: %s (rolled back to checkpoint %lld)\n",
			       json_string_value(json_object_get(cur, "digest")),
			       (long long)json_integer_value(json_object_get(cur, "checkpoint")));
		else if (json_is_object(cur))
			printf("change set: %s (the session's end)\n",
			       json_string_value(json_object_get(cur, "digest")));
		else
			printf("change set: none yet (%s)\n", a.session_alive
								  ? "it is made when the session ends"
								  : "the session's end kept none");
		rc = fflush(stdout) == 0 ? 0 : 125;
	}
	json_decref(list);
	json_decref(cur);
	return rc;
}

int cmd_rollback(int argc, char **argv)
{
	struct berth_error err = {0};
	struct args a;
	char from[72], to[72], *end;
	long id;
	int rc = parse(argc, argv, true, &a, rollback_usage);

	if (rc >= 0)
		return rc;
	if (a.n_paths != 1) {
		fprintf(stderr, "berth: rollback: which checkpoint? (`berth checkpoints %s` lists them)\n%s",
			a.session[0] != '\0' ? a.session : a.run_id, rollback_usage);
		return 2;
	}
	errno = 0;
	id = strtol(a.paths[0], &end, 10);
	if (a.paths[0][0] < '0' || a.paths[0][0] > '9' || *end != '\0' || errno != 0 || id > 1000000) {
		fprintf(stderr, "berth: rollback: `%s` is not a checkpoint id (a number: 0 is the start)\n",
			CLI_SAFE(a.paths[0]));
		return 2;
	}
	if (berth_review_rollback(a.run_id, (int)id, from, to, &err) < 0) {
		cli_print_error(&err);
		return err.status ? err.status : 125;
	}
	json_t *p = json_pack("{s:i, s:s, s:s, s:s?}", "checkpoint", (int)id, "digest", to, "replaced", from,
			      "name", a.session[0] != '\0' ? a.session : NULL);
	rc = record(a.run_id, "rollback", p);
	json_decref(p);
	fprintf(stderr,
		"berth: the change set of %s is checkpoint %ld's now (%s); the host's tree is as it was: "
		"`berth diff %s`, `berth apply %s`\n",
		a.session[0] != '\0' ? a.session : a.run_id, id, to,
		a.session[0] != '\0' ? a.session : a.run_id, a.session[0] != '\0' ? a.session : a.run_id);
	return rc < 0 ? 125 : 0;
}
