/* SPDX-License-Identifier: MIT */
/*
 * cmd_run.c - `berth run`.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../audit/audit.h"
#include "../audit/exposure.h"
#include "../util/sign.h"

#include "../policy/flags.h"
#include "../policy/rules.h"
#include "../sandbox/sandbox.h"
#include "../supervisor/evidence.h"
#include "../supervisor/run.h"
#include "../supervisor/runs.h"
#include "../supervisor/orphans.h"
#include "../supervisor/review.h"
#include "../util/crash.h"
#include "../util/journal.h"
#include "../util/rundir.h"
#include "../supervisor/credentials.h"
#include "../supervisor/sshagent.h"
#include "../util/sha256.h"
#include "cli.h"

static const char run_usage[] =
    "usage: berth run [OPTIONS] -- COMMAND [ARG...]\n"
    "\n"
    "  --workspace DIR      host directory mounted read-write at /workspace (default: .)\n"
    "  --tmp-size SIZE      size of the private /tmp and home tmpfs, 1M..1024T (default 1G)\n"
    "  --memory SIZE        memory limit, swap off, 16M..1024T (default 8G)\n"
    "  --cpus N             CPU limit, 0.01..1024 (default 4)\n"
    "  --pids N             process limit, 2..4194304 (default 512)\n"
    "  --nofile N           open file limit, 16..1048576 (default 8192)\n"
    "  --timeout DUR        kill the whole sandbox after DUR (30s, 500ms, 5m), 1ms..8760h, exit 124\n"
    "                       (SIZE: bytes or K M G T, powers of 1024; decimal digits only)\n"
    "  --network none|proxy|api-only|host\n"
    "                       none: loopback only (default); proxy: loopback and berth's egress broker\n"
    "                       for the --allow-host hosts; host: share the host network (widening)\n"
    "  --allow-host PATTERN reach PATTERN through the broker: host, *.domain, IP or [IPv6],\n"
    "                       optionally :PORT or :* (default ports 80 and 443); implies --network proxy\n"
    "  --dns SERVER         the broker's DNS server (ip[:port]; default: the host's resolver)\n"
    "  --credential NAME=SOURCE@HOST[:PORT][/PREFIX][#HEADER]\n"
    "                       the secret of SOURCE (env:VAR, file:/PATH, cmd:COMMAND) goes to HOST in\n"
    "                       HEADER (bearer, x-api-key, basic, header:FIELD) by the broker; inside,\n"
    "                       NAME holds a placeholder (widening; docs/credentials.md)\n"
    "  --ssh FINGERPRINT    the sandbox's ssh-agent (SSH_AUTH_SOCK inside) lists and signs with\n"
    "                       this key of your agent's only (SHA256:...; widening; docs/credentials.md)\n"
    "  --ssh-key FILE.pub   the same, for the keys of a public key file\n"
    "  --ssh-host HOST[:PORT][=KEYFILE]\n"
    "                       reach HOST's SSH port (22) through the broker, its host keys (KEYFILE;\n"
    "                       github.com: those berth ships) pinned with StrictHostKeyChecking yes\n"
    "  --env NAME[=VALUE]   pass a variable (from berth's environment, or VALUE)\n"
    "  --env-file FILE      pass the NAME=VALUE lines of FILE (values stay off command lines)\n"
    "  --evidence PATH      copy PATH (file or directory; repeatable) and mount it at /evidence:\n"
    "                       read-only, noexec; its manifest goes to the audit trail first\n"
    "  --forensic           static triage preset: needs --evidence; network api-only unless given;\n"
    "                       no values from berth's environment or --env-file; workspace guard on\n"
    "  --ro SRC[:DST]       bind a host path read-only\n"
    "  --rw SRC[:DST]       bind a host path read-write (widening)\n"
    "  --unprotect PATH     let the sandbox write a guarded workspace path (widening)\n"
    "  --review             the run writes a copy-on-write layer, not the workspace; see the\n"
    "                       changes with `berth diff`, land them with `berth apply` (docs/review.md)\n"
    "  --review-size SIZE   that layer's size, 1M..1024T (default 1G; memory: at most --memory)\n"
    "  --allow-degraded     run even when the kernel cannot enforce everything (widening)\n"
    "  --runtime NAME       what enforces the policy: namespace (default) or vm (a microVM;\n"
    "                       needs `berth vm install`)\n"
    "  --yes                do not ask to confirm widenings\n"
    "  --dry-run [--json]   print the compiled policy and its digest, do not run\n"
    "  --explain            at exit, each denial the kernel reported: what refused it, the rule and\n"
    "                       the fix (docs/denials.md)\n"
    "  --ask                an open of a host file outside the sandbox's view waits for a human: at\n"
    "                       the terminal, or `berth approve|deny RUN ID` (docs/ask.md)\n"
    "  --ask-timeout DUR    deny an ask not answered in DUR, 100ms..1h (default 60s)\n"
    "\n"
    "every run is recorded in the audit trail (`berth audit`); when the record cannot be written\n"
    "durably, nothing runs (exit 125)\n"
    "\n"
    "exit status: the command's; 128+N if killed by signal N; 124 timeout; 125 berth failed;\n"
    "126 command not executable; 127 command not found; 2 usage error or refused by a rules file\n"
    "(/etc/berth/rules.yml, $XDG_CONFIG_HOME/berth/rules.yml, every .berth/rules.yml up from here and from "
    "the workspace)\n";

/* The policy, its digest and the runtime that would enforce it (not part
 * of the policy: the same JSON and digest for either). */
static int dry_run(const struct berth_run_opts *o, const struct berth_runtime_ops *rt)
{
	struct berth_error err = {0};
	char digest[65];
	char *json;

	/* What the run would refuse, refused here with its status and words
	 * (berth_run_parse validated too; the evidence was added since). */
	if (berth_policy_validate(&o->policy, &err) < 0) {
		cli_print_error(&err);
		return err.status ? err.status : 2;
	}
	json = berth_policy_to_json(&o->policy, !o->json, &err);
	if (json == NULL || berth_policy_digest(&o->policy, digest, &err) < 0) {
		free(json);
		cli_print_error(&err);
		return 125;
	}
	unsigned ask_ms = o->ask_timeout_ms != 0 ? o->ask_timeout_ms : BERTH_ASK_TIMEOUT_MS;
	if (o->json && o->ask)
		printf("{\"digest\":\"sha256:%s\",\"runtime\":\"%s\",\"ask\":{\"timeout_ms\":%u},\"policy\":%"
		       "s}\n",
		       digest, rt->name, ask_ms, json);
	else if (o->json)
		printf("{\"digest\":\"sha256:%s\",\"runtime\":\"%s\",\"policy\":%s}\n", digest, rt->name,
		       json);
	else if (o->ask)
		printf("%s\nruntime: %s\nask: on, each ask denied after %u ms\ndigest: sha256:%s\n", json,
		       rt->name, ask_ms, digest);
	else
		printf("%s\nruntime: %s\ndigest: sha256:%s\n", json, rt->name, digest);
	free(json);
	return 0;
}

/* The run lifecycle's notices (src/supervisor/run.h), at the CLI's edge. */
static void print_notice(void *arg, const char *line)
{
	(void)arg;
	fprintf(stderr, "berth: %s\n", CLI_SAFE(line));
}

/* Manifests with more entries than this go to the audit trail as a file
 * referenced by its SHA-256. */
#define EVIDENCE_INLINE_MAX 256

/* The run directory runs/@run_id, named in the journal before it is made. */
static int note_run_dir(const struct berth_journal *j, const char *run_id, struct berth_error *err)
{
	char dir[PATH_MAX];

	if (berth_state_path("runs", dir, sizeof dir - 20) < 0)
		return 0; /* berth_run_dir says why */
	strcat(dir, "/");
	strcat(dir, run_id);
	return berth_journal_note(j, "rundir", dir, err);
}

/*
 * --evidence: copy and hash into the run's directory, then record the
 * manifest (RUN/evidence.json; its hash and summary, and for small ones the
 * entries, in the audit trail) before the command starts.  Returns the
 * summary for run.json, or NULL with @err filled (nothing left behind).
 */
static json_t *ingest_evidence(struct berth_run_opts *o, const char *run_id, struct berth_audit *audit,
			       const struct berth_journal *j, struct berth_error *err)
{
	char dir[PATH_MAX], dest[PATH_MAX + 16], hex[65];
	struct berth_evidence_stats st;
	json_t *manifest, *summary, *payload;
	char *text;

	if (note_run_dir(j, run_id, err) < 0 || berth_run_dir(run_id, true, dir, err) < 0)
		return NULL;
	berth_crash_point("evidence.dir");
	snprintf(dest, sizeof dest, "%s/evidence", dir);
	if (berth_journal_note(j, "tree", dest, err) < 0) {
		rmdir(dir);
		return NULL;
	}
	manifest = berth_evidence_ingest(o->evidence, o->n_evidence, dest, true, &st, err);
	if (manifest == NULL) {
		rmdir(dir); /* nothing of the refused run stays (the audit trail keeps its start) */
		return NULL;
	}
	text = json_dumps(manifest, JSON_COMPACT | JSON_SORT_KEYS);
	if (text == NULL || berth_sha256_hex(text, strlen(text), hex, err) < 0 ||
	    berth_run_write_json(run_id, "evidence.json", manifest, err) < 0) {
		free(text);
		json_decref(manifest);
		berth_evidence_remove(dest, &(struct berth_error){0});
		return NULL;
	}
	free(text);
	berth_crash_point("evidence.manifest");
	summary = json_pack("{s:s, s:I, s:I, s:I, s:s, s:s}", "mount", "/evidence", "files",
			    (json_int_t)st.files, "bytes", (json_int_t)st.bytes, "skipped",
			    (json_int_t)st.skipped, "manifest_file", "evidence.json", "manifest_sha256", hex);
	payload = json_deep_copy(summary);
	if (json_array_size(manifest) <= EVIDENCE_INLINE_MAX)
		json_object_set(payload, "entries", manifest);
	json_decref(manifest);
	if (berth_audit_append(audit, run_id, "evidence.ingest", "berth", payload, NULL, NULL, err) < 0) {
		berth_err_wrap(err, "cannot record the evidence manifest in the audit trail");
		json_decref(payload);
		json_decref(summary);
		berth_evidence_remove(dest, &(struct berth_error){0});
		return NULL;
	}
	json_decref(payload);
	berth_crash_point("evidence.recorded");
	free(o->policy.evidence_dir);
	o->policy.evidence_dir = strdup(dest);
	if (o->policy.evidence_dir == NULL) {
		json_decref(summary);
		berth_evidence_remove(dest, &(struct berth_error){0});
		return berth_err(err, ENOMEM, "out of memory"), NULL;
	}
	return summary;
}

/*
 * Every rules file (system, user, project) must allow the policy; checked
 * before anything is created or a widening is confirmed.  Returns 0, or the
 * exit status (2: refused or a malformed rules file; 125: unreadable).
 */
/*
 * A run the rules refused is a `denial` record in the audit trail: what was
 * asked (argv, the policy's digest) and the rule's message, which names the
 * file and line.  Nothing else of the run is created; when the record cannot
 * be written berth says so (the run is refused either way).
 */
static void record_denial(const struct berth_run_opts *o, const struct berth_error *why)
{
	struct berth_error err = {0};
	struct berth_audit *a = berth_audit_open(NULL, &err);
	char run_id[17], actor[32], digest[65] = "", d[80] = "";
	json_t *argv = json_array(), *payload;

	if (a == NULL) {
		cli_print_error(&err);
		fputs("berth: the refusal could not be recorded in the audit trail\n", stderr);
		json_decref(argv);
		return;
	}
	for (size_t i = 0; i < o->policy.n_env; i++)
		if (o->policy.env[i].value != NULL)
			berth_audit_add_secret(a, o->policy.env[i].value, &err);
	for (size_t i = 0; i < o->policy.argc; i++)
		json_array_append_new(argv, json_string(o->policy.argv[i]));
	if (berth_policy_digest(&o->policy, digest, &err) == 0)
		snprintf(d, sizeof d, "sha256:%s", digest);
	berth_audit_new_run_id(run_id);
	snprintf(actor, sizeof actor, "uid:%u", (unsigned)getuid());
	payload = json_pack("{s:s, s:s, s:o, s:s}", "by", "rules", "message", why->msg, "argv", argv,
			    "policy_digest", d);
	if (payload == NULL ||
	    berth_audit_append(a, run_id, "denial", actor, payload, NULL, NULL, &err) < 0) {
		cli_print_error(&err);
		fputs("berth: the refusal could not be recorded in the audit trail\n", stderr);
	}
	json_decref(payload);
	berth_audit_close(a);
}

static int check_rules(struct berth_run_opts *o)
{
	struct berth_error err = {0};
	struct berth_rules *r = NULL;
	struct berth_widening_ctx ctx = {.network_mode = o->network_mode};
	const char *creds[BERTH_CRED_MAX + 1];
	int status = 0;

	/* a --credential forwards a secret of the host's: `allow.credentials` governs it */
	for (size_t i = 0; i < o->policy.n_credentials && i < BERTH_CRED_MAX; i++)
		creds[i] = o->policy.credentials[i].name;
	ctx.credentials = creds;
	ctx.n_credentials =
	    o->policy.n_credentials < BERTH_CRED_MAX ? o->policy.n_credentials : BERTH_CRED_MAX;
	/* --ssh lends the caller's ssh-agent: `allow.credentials` must list `ssh-agent` */
	if (o->policy.n_ssh_keys > 0)
		creds[ctx.n_credentials++] = "ssh-agent";

	if (berth_rules_load_all(NULL, o->policy.workspace, &r, &err) < 0) {
		cli_print_error(&err);
		status = err.status ? err.status : 2;
	} else if (berth_rules_check(r, &o->policy, &ctx, &err) < 0) {
		cli_print_error(&err);
		status = err.status ? err.status : 2;
		record_denial(o, &err);
	} else if (berth_rules_guard(r, &o->policy, &err) < 0) {
		cli_print_error(&err);
		status = err.status ? err.status : 125;
	}
	berth_rules_free(r);
	return status;
}

static bool rw_mounts(const struct berth_policy *p)
{
	for (size_t i = 0; i < p->n_mounts; i++)
		if (p->mounts[i].rw && !p->mounts[i].tmpfs)
			return true;
	return false;
}

/* --review: the change set from the layer, and a line saying what to do
 * with it.  Returns run.stop's "review" member (its digest in the audit
 * trail, in the run's last record: no commit of its own), or NULL. */
static json_t *review_end(const struct berth_run_opts *o, const char *run_id, int fd,
			  const struct timespec *started)
{
	struct berth_error err = {0};
	struct berth_review_summary sum;
	json_t *rec;

	if (berth_review_collect(run_id, &o->policy, fd, started, &sum, &err) < 0) {
		close(fd);
		cli_print_error(&err);
		fprintf(stderr,
			"berth: the run's changes could not be kept; the host's tree was not changed\n");
		return NULL;
	}
	close(fd);
	rec = json_pack("{s:{s:s, s:I, s:I, s:I, s:b, s:b}}", "review", "digest", sum.digest, "entries",
			(json_int_t)sum.n_entries, "guarded", (json_int_t)sum.n_guarded, "bytes",
			(json_int_t)sum.n_bytes, "layer_full", sum.full, "host_modified", 0);
	if (sum.full)
		fprintf(
		    stderr,
		    "berth: review: the review layer of run %s filled up (--review-size %llu bytes): a write "
		    "met ENOSPC, and `berth apply` refuses this change set\n",
		    run_id, (unsigned long long)o->policy.review_size);
	if (sum.n_entries == 0) {
		fprintf(stderr, "berth: review: run %s changed nothing in the workspace\n", run_id);
		return rec;
	}
	fprintf(
	    stderr,
	    "berth: review: run %s changed %zu path%s (%zu guarded); the host's workspace is untouched%s: "
	    "`berth diff %s`, `berth apply %s`, `berth discard %s`\n",
	    run_id, sum.n_entries, sum.n_entries == 1 ? "" : "s", sum.n_guarded,
	    rw_mounts(&o->policy) ? " (--rw directories are written as in any run)" : "", run_id, run_id,
	    run_id);
	return rec;
}

static const char fail_closed[] =
    "berth: the audit trail cannot record this run, so it does not start (fail closed)\n";

/*
 * The run itself (src/supervisor/run.h): run.start and policy are recorded
 * on a thread while the sandbox is built and are durable before the command
 * starts; --evidence is copied, hashed and its manifest recorded (after
 * run.start and policy, so those are written first, on this thread) before
 * the command starts; then the run record (docs/attest.md).
 */
static int run(struct berth_run_opts *o, const struct berth_runtime_ops *rt, struct berth_runtime_opts *ro,
	       const char *run_id, const struct berth_cred_run *creds, struct berth_ssh_run *ssh)
{
	struct berth_run r;
	struct berth_error err = {0}, je = {0};
	char actor[32], cwd[4096];
	const char *rm[1] = {NULL}; /* the evidence copy, once made */
	json_t *evidence = NULL;
	int status = 0, review_fd = -1;
	json_t *review = NULL; /* run.stop's "review" member */
	bool recorded = false, record_failed = false;
	char prev_last[17] = "";
	struct timespec started;

	snprintf(actor, sizeof actor, "uid:%u", (unsigned)getuid());
	json_t *start_extra = json_pack("{s:s?, s:s}", "workspace", o->policy.workspace, "cwd",
					getcwd(cwd, sizeof cwd) ? cwd : "?");
	struct berth_run_spec spec = {.policy = &o->policy,
				      .creds = creds,
				      .ssh = ssh,
				      .actor = actor,
				      .audit = true,
				      .start_extra = start_extra,
				      .record_enforced = true,
				      .explain = o->explain,
				      .ask = o->ask,
				      .ask_timeout_ms = o->ask_timeout_ms,
				      .ask_terminal = o->ask,
				      .notice = print_notice,
				      .remove_at_end = rm,
				      .n_remove_at_end = o->n_evidence > 0 ? 1 : 0,
				      .journal = ro->journal,
				      .runtime = rt};
	berth_run_init(&r, &spec, run_id, &err);
	if (o->n_evidence > 0 && berth_run_record_now(&r, &err) < 0) {
		cli_print_error(&err);
		fputs(fail_closed, stderr);
		berth_run_end(&r, 125, NULL);
		json_decref(start_extra);
		return 125;
	}
	if (o->n_evidence > 0 && (evidence = ingest_evidence(o, berth_run_id(&r), berth_run_audit(&r),
							     ro->journal, &err)) == NULL) {
		status = -1;
	} else {
		/* the copy exists from here on: removed at the end of the run,
		 * also when the run record below cannot be written */
		rm[0] = o->policy.evidence_dir;
		if (berth_run_get_last(prev_last, &je) < 0)
			prev_last[0] = '\0';
		berth_err_clear(&je);
		if ((o->n_evidence == 0 && note_run_dir(ro->journal, berth_run_id(&r), &err) < 0) ||
		    berth_run_record_start(berth_run_id(&r), &o->policy, evidence, &err) < 0) {
			status = -1;
			record_failed = true;
		} else {
			recorded = true;
			berth_crash_point("run.record");
			berth_run_attach(&r, ro);
			if (o->policy.review)
				berth_review_clock(&started);
			ro->review_fd = o->policy.review ? &review_fd : NULL;
			if (berth_run_exec(&r, ro, &status, &err) < 0)
				status = -1;
			/* a command that never started changed nothing */
			if (review_fd >= 0 && status >= 0)
				review = review_end(o, berth_run_id(&r), review_fd, &started);
			else if (review_fd >= 0)
				close(review_fd);
		}
	}
	json_decref(evidence);
	if (berth_run_join(&r, &je) < 0) {
		/* The command did not start: the audit trail could not record it.
		 * That is the cause, so it comes first (on a full disk the run
		 * record's write, on this thread, often fails too: said after);
		 * when the sandbox refused it at release, @err already is @je. */
		cli_print_error(&je);
		if (status < 0 && (record_failed || strcmp(err.msg, je.msg) != 0))
			cli_print_error(&err);
		if (recorded)
			berth_run_record_discard(berth_run_id(&r), prev_last);
		fputs(fail_closed, stderr);
		berth_run_end(&r, 125, NULL);
		json_decref(review);
		json_decref(start_extra);
		return 125;
	}
	if (status < 0) {
		cli_print_error(&err);
		status = err.status ? err.status : 125;
	}
	if (berth_run_record_end(berth_run_id(&r), status, &err) < 0 && err.status != BERTH_EXIT_USAGE)
		cli_print_error(&err);
	berth_crash_point("run.ended");
	berth_run_end(&r, status, review);
	json_decref(review);
	json_decref(start_extra);
	return status;
}

int cmd_run(int argc, char **argv)
{
	struct berth_run_opts o;
	struct berth_runtime_opts ro = {0};
	const struct berth_runtime_ops *rt = berth_runtime_default();
	struct berth_error err = {0};
	struct berth_journal journal = BERTH_JOURNAL_NONE;
	char run_id[17] = "";
	int status = 0;

	if (berth_run_parse(argc, argv, getenv, &o, &err) < 0 || berth_run_system_workspace(&o, &err) < 0) {
		cli_print_error(&err);
		berth_run_opts_free(&o);
		return err.status ? err.status : 2;
	}
	if (o.help) {
		fputs(run_usage, stdout);
		berth_run_opts_free(&o);
		return 0;
	}
	/* An unknown runtime is refused first, dry run or not; a known one
	 * never falls back to another (its check says what it cannot do). */
	if ((rt = berth_runtime_find(o.runtime, &err)) == NULL) {
		cli_print_error(&err);
		berth_run_opts_free(&o);
		return err.status ? err.status : 2;
	}
	if (o.policy.review && strcmp(rt->name, "namespace") != 0) {
		fprintf(stderr, "berth: the %s runtime cannot give `--review` yet (docs/review.md)\n",
			rt->name);
		fprintf(stderr, "berth: hint: drop `--runtime %s`, or drop `--review`\n", rt->name);
		berth_run_opts_free(&o);
		return 2;
	}
	/* the agent is a unix socket in the sandbox's view: the guest's has none */
	if ((o.policy.n_ssh_keys > 0 || o.policy.n_ssh_known_hosts > 0) &&
	    strcmp(rt->name, "namespace") != 0) {
		fprintf(
		    stderr,
		    "berth: the %s runtime cannot give `--ssh` or `--ssh-host` yet (docs/credentials.md)\n",
		    rt->name);
		fprintf(stderr, "berth: hint: drop `--runtime %s`, or the --ssh options\n", rt->name);
		berth_run_opts_free(&o);
		return 2;
	}
	if (o.ask_timeout_ms != 0 && !o.ask) {
		fprintf(stderr, "berth: --ask-timeout is the deadline of --ask, which is not given\n");
		fprintf(stderr, "berth: hint: add `--ask`, or drop `--ask-timeout`\n");
		berth_run_opts_free(&o);
		return 2;
	}
	ro.ask = o.ask;
	if (berth_parse_force_off(getenv("BERTH_TEST_FORCE_OFF"), &ro.force_off, &err) < 0) {
		cli_print_error(&err);
		berth_run_opts_free(&o);
		return 2;
	}
	/* Values are in the policy now: off berth's command line and
	 * environment (docs/security.md, "Secrets"). */
	berth_run_scrub(argc, argv, &o);
	status = check_rules(&o);
	if (status != 0) {
		berth_run_opts_free(&o);
		return status;
	}
	if (!o.dry_run) {
		/* What runs whose berth was killed left, repaired and their end
		 * recorded (src/supervisor/orphans.h); then this run's journal,
		 * before anything of it is made on the host (util/journal.h). */
		char adir[PATH_MAX] = "";
		struct berth_error ae = {0};
		/* Not in a state directory the sandbox would reach: checked
		 * before the journal is made there (and again after the
		 * confirmation, below). */
		if (berth_audit_exposure_check(&o.policy, o.evidence, o.n_evidence, "--evidence", &err) < 0) {
			cli_print_error(&err);
			berth_run_opts_free(&o);
			return err.status ? err.status : 125;
		}
		if (berth_run_sweep(print_notice, NULL, &err) < 0) {
			cli_print_error(&err);
			err = (struct berth_error){0};
		}
		berth_crash_point("run.swept");
		berth_audit_new_run_id(run_id);
		(void)berth_audit_dir(adir, sizeof adir, &ae); /* unnamed: the sweep uses the default */
		if (berth_journal_create(&journal, run_id, adir, &err) < 0) {
			/* Without it a berth killed later would leave what the run
			 * made and no end in the audit trail: nothing starts. */
			cli_print_error(&err);
			fputs("berth: the run journal cannot be written, so the run does not start (fail "
			      "closed)\n",
			      stderr);
			berth_run_opts_free(&o);
			return err.status ? err.status : 125;
		}
		ro.journal = &journal;
	}
	/* What the runtime cannot enforce here (a --memory without a writable
	 * cgroup) is refused before the dry run prints and before the run
	 * records anything (src/runtime/runtime.h, check). */
	if (rt->check(&o.policy, &ro, &err) < 0) {
		cli_print_error(&err);
		berth_journal_done(&journal);
		berth_run_opts_free(&o);
		return err.status ? err.status : 125;
	}
	berth_crash_point("run.checked");
	if (o.dry_run) {
		if (o.n_evidence > 0)
			o.policy.evidence_dir = strdup("(copied when the run starts)");
		status = dry_run(&o, rt);
		berth_run_opts_free(&o);
		return status;
	}
	if (cli_confirm_widenings(&o, "run", "run") < 0) {
		berth_journal_done(&journal);
		berth_run_opts_free(&o);
		return 125;
	}
	if (berth_run_recheck(&o, &err) < 0 ||
	    berth_audit_exposure_check(&o.policy, o.evidence, o.n_evidence, "--evidence", &err) < 0) {
		cli_print_error(&err);
		berth_journal_done(&journal);
		berth_run_opts_free(&o);
		return err.status ? err.status : 125; /* 2: exposes the log or key; 125: no place for them */
	}
	if (o.n_evidence > 0)
		berth_test_pause("BERTH_TEST_PAUSE_BEFORE_EVIDENCE");
	/* --credential: secrets read (after the confirmation: a cmd: source
	 * runs a command), placeholders and the run's CA in the policy */
	struct berth_cred_run *creds = NULL;
	if (berth_cred_prepare(&o.policy, run_id, &creds, &err) < 0) {
		cli_print_error(&err);
		berth_journal_done(&journal);
		berth_run_opts_free(&o);
		return err.status ? err.status : 125;
	}
	/* --ssh: the caller's agent checked, the socket, known_hosts and
	 * ssh config in the sandbox's view */
	struct berth_ssh_run *ssh = NULL;
	if (berth_ssh_prepare(&o.policy, run_id, &ssh, &err) < 0) {
		cli_print_error(&err);
		berth_cred_run_free(creds);
		berth_journal_done(&journal);
		berth_run_opts_free(&o);
		return err.status ? err.status : 125;
	}
	status = run(&o, rt, &ro, run_id, creds, ssh);
	berth_ssh_run_free(ssh);
	berth_cred_run_free(creds);
	/* The run cleaned up after itself and its run.stop is written. */
	berth_journal_done(&journal);
	{
		/* Old run directories go; the audit trail keeps their records. */
		const char *k = getenv("BERTH_RUNS_KEEP");
		struct berth_error pe = {0};
		uint64_t keep = BERTH_RUNS_KEEP;
		/* 0 keeps all; a value that is no count keeps the default, said once */
		if (k != NULL && berth_parse_count(k, "BERTH_RUNS_KEEP", 0, 100000000, &keep, &pe) < 0) {
			fprintf(stderr, "berth: warning: %s; keeping the newest %d run directories\n", pe.msg,
				BERTH_RUNS_KEEP);
			keep = BERTH_RUNS_KEEP;
		}
		berth_run_prune((unsigned long)keep, &pe);
	}
	berth_run_opts_free(&o);
	return status;
}
