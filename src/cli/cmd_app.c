/* SPDX-License-Identifier: MIT */
/*
 * cmd_app.c - resident apps at the command line: `berth policy`, `berth rpc`
 * and `berth test`.  The work is in src/supervisor/.
 *
 * Exit statuses (docs/cli-contract.md): 0 success; 1 a call or an example
 * failed; 2 usage error or invalid manifest; 125 berth could not boot the app.
 */
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../manifest/schema.h"
#include "../policy/policy.h"
#include "../supervisor/app.h"
#include "../supervisor/dev.h"
#include "../util/cleanup.h"
#include "cli.h"

static void print_diags(const struct berth_diags *d)
{
	for (size_t i = 0; i < d->n; i++)
		fprintf(stderr, "%s\n", CLI_SAFE(d->items[i].text)); /* they quote the app's files */
	if (d->dropped)
		fprintf(stderr, "berth: ... and %zu more problems\n", d->dropped);
}

static int force_off(unsigned *bits)
{
	struct berth_error err = {0};

	if (berth_parse_force_off(getenv("BERTH_TEST_FORCE_OFF"), bits, &err) < 0) {
		cli_print_error(&err);
		return -1;
	}
	return 0;
}

/* Open the app in @dir, printing what is wrong.  Returns the status to exit
 * with on failure (2 or 125), 0 on success. */
static int open_app(const char *dir, const struct berth_app_opts *o, struct berth_app **a)
{
	struct berth_diags d = {0};
	struct berth_error err = {0};

	if (berth_app_open(dir, o, a, &d, &err) < 0) {
		print_diags(&d);
		berth_diags_free(&d);
		cli_print_error(&err);
		return err.status == 2 ? 2 : 125;
	}
	return 0;
}

/* ---------------------------------------------------------- berth policy */

static const char policy_usage[] =
    "usage: berth policy APP-DIR [--json]\n"
    "  print the policy compiled from APP-DIR/berth.yml and its SHA-256 digest\n";

int cmd_policy(int argc, char **argv)
{
	struct berth_app_opts o = {.quiet = true, .dry = true};
	struct berth_app *a = NULL;
	struct berth_error err = {0};
	const char *dir = NULL;
	bool json = false;
	char digest[65];
	int r;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = true;
		else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(policy_usage, stdout);
			return 0;
		} else if (argv[i][0] == '-' || dir != NULL) {
			fprintf(stderr, "berth: policy: unexpected argument `%s`\n%s", argv[i], policy_usage);
			return 2;
		} else
			dir = argv[i];
	}
	if (dir == NULL) {
		fprintf(stderr, "berth: policy: missing APP-DIR\n%s", policy_usage);
		return 2;
	}
	r = open_app(dir, &o, &a);
	if (r != 0)
		return r;
	const struct berth_policy *p = berth_app_policy_of(a);
	cleanup_free char *text = berth_policy_to_json(p, !json, &err);
	if (text == NULL || berth_policy_digest(p, digest, &err) < 0) {
		cli_print_error(&err);
		berth_app_close(a);
		return 125;
	}
	if (json)
		printf("{\"digest\":\"sha256:%s\",\"policy\":%s}\n", digest, text);
	else
		printf("%s\ndigest: sha256:%s\n", text, digest);
	berth_app_close(a);
	return 0;
}

/* ---------------------------------------------------------- berth rpc */

static const char rpc_usage[] =
    "usage: berth rpc APP --export NAME [--input JSON] [--app-dir DIR] [--timeout MS|5s]\n"
    "                 [--runtime namespace|vm]\n"
    "  call one export of the app APP: through a running `berth dev` for it when there is one,\n"
    "  else in a sandbox booted for the call.  The app directory is DIR (default apps/APP, or APP).\n"
    "  --runtime vm: the sandbox is booted in a microVM (docs/vm.md), never `berth dev`'s.\n"
    "exit status: 0 the result is printed; 1 the call failed (the error is printed, a denial explained);\n"
    "2 usage error or invalid manifest; 125 the app could not be booted (also: the audit trail cannot\n"
    "record its run, error -32005)\n";

/* Print a failed call: the error object on stdout, the explanation on stderr. */
static void print_call_error(const struct berth_call_error *ce)
{
	json_t *e = json_pack("{s:{s:i, s:s, s:O*}}", "error", "code", ce->code, "message", ce->message,
			      "data", ce->data);
	char *s = e != NULL ? cli_json_dumps(e, JSON_COMPACT) : NULL;

	if (s != NULL)
		printf("%s\n", s);
	free(s);
	json_decref(e);
	fprintf(stderr, "berth: %s (JSON-RPC %d)\n", CLI_SAFE(ce->message), ce->code);
	/* several lines, quoting what the app asked for: each through the filter */
	for (const char *l = ce->denial; l != NULL && *l != '\0';) {
		size_t n = strcspn(l, "\n");
		char one[CLI_SAFE_MAX];
		snprintf(one, sizeof one, "%.*s", (int)(n < sizeof one ? n : sizeof one - 1), l);
		fprintf(stderr, "%s\n", CLI_SAFE(one));
		l += n + (l[n] == '\n');
	}
}

/* The exit status of a failed call: 2 when the caller asked for something
 * that cannot be (no such export, input against the schema), else 1. */
static int call_status(const struct berth_call_error *ce)
{
	return ce->refused_input ? 2 : 1;
}

static int print_result(json_t *result)
{
	char *s = cli_json_dumps(result, JSON_COMPACT);

	if (s == NULL)
		return 125;
	printf("%s\n", s);
	free(s);
	return 0;
}

/* The end of a call that returned @r: its @result printed (0; 125 when it
 * cannot be), or its error @ce (call_status()); both freed. */
static int finish_call(int r, json_t *result, struct berth_call_error *ce)
{
	if (r == 0) {
		r = print_result(result);
		json_decref(result);
		return r;
	}
	print_call_error(ce);
	berth_call_error_free(ce);
	return call_status(ce);
}

static const char *default_app_dir(const char *app, char *buf, size_t len)
{
	struct stat st;

	snprintf(buf, len, "apps/%s/berth.yml", app);
	if (stat(buf, &st) == 0) {
		snprintf(buf, len, "apps/%s", app);
		return buf;
	}
	snprintf(buf, len, "%s", app);
	return buf;
}

int cmd_rpc(int argc, char **argv)
{
	static const struct option opts[] = {{"export", required_argument, NULL, 'e'},
					     {"input", required_argument, NULL, 'i'},
					     {"app-dir", required_argument, NULL, 'd'},
					     {"timeout", required_argument, NULL, 't'},
					     {"runtime", required_argument, NULL, 'r'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *export = NULL, *input_text = NULL, *dir = NULL, *app;
	unsigned long timeout = 0;
	char dirbuf[4096];
	json_t *input = NULL, *result = NULL;
	struct berth_call_error ce = {0};
	struct berth_app_opts o = {0};
	struct berth_app *a = NULL;
	int c, r;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			export = optarg;
			break;
		case 'i':
			input_text = optarg;
			break;
		case 'd':
			dir = optarg;
			break;
		case 'r': {
			struct berth_error rerr = {0};
			if ((o.runtime = berth_runtime_find(optarg, &rerr)) == NULL) {
				cli_print_error(&rerr);
				return 2;
			}
			break;
		}
		case 't': {
			/* A bare number is milliseconds; with a unit (500ms, 5s,
			 * 2m) it reads as `berth run --timeout` does. */
			size_t len = strlen(optarg);
			struct berth_error terr = {0};
			uint64_t ms = 0;
			if (len > 0 && ((optarg[len - 1] >= 'a' && optarg[len - 1] <= 'z'))) {
				if (berth_parse_duration_ms(optarg, "--timeout", &ms, &terr) < 0)
					ms = 0;
			} else if (berth_parse_count(optarg, "--timeout", 1, 3600000, &ms, &terr) < 0) {
				ms = 0;
			}
			timeout = ms > 3600000 ? 0 : (unsigned long)ms;
			if (timeout == 0) {
				fprintf(
				    stderr,
				    "berth: rpc: bad --timeout `%s`: want milliseconds (1..3600000), or a "
				    "duration such as 500ms, 5s or 2m (at most 1h)\n",
				    CLI_SAFE(optarg));
				return 2;
			}
			break;
		}
		case 'h':
			fputs(rpc_usage, stdout);
			return 0;
		default:
			fprintf(stderr,
				c == ':' ? "berth: rpc: `%s` needs a value\n%s"
					 : "berth: rpc: unknown option `%s`\n%s",
				CLI_SAFE(argv[optind - 1]), rpc_usage);
			return 2;
		}
	}
	if (optind != argc - 1 || export == NULL) {
		fprintf(stderr, "berth: rpc: %s\n%s",
			export == NULL ? "missing --export NAME" : "want exactly one APP", rpc_usage);
		return 2;
	}
	app = argv[optind];
	if (input_text != NULL) {
		json_error_t je;
		input = json_loads(input_text, JSON_REJECT_DUPLICATES, &je);
		if (input == NULL || !json_is_object(input)) {
			fprintf(stderr, "berth: rpc: --input `%s` is not a JSON object%s%s\n", input_text,
				input == NULL ? ": " : "", input == NULL ? je.text : "");
			json_decref(input);
			return 2;
		}
	}
	/* A running `berth dev` for the app serves the call. */
	/* With --app-dir, only a berth dev serving that very directory will do. */
	char real[4096];
	/* ... and not for `--runtime X` but the default: such a call boots its
	 * own sandbox (a `berth dev --runtime vm` serves the calls without) */
	r = o.runtime != NULL && o.runtime != berth_runtime_default()
		? BERTH_DEV_NONE
		: berth_dev_call(app, dir != NULL && realpath(dir, real) != NULL ? real : NULL, export, input,
				 (unsigned)timeout, &result, &ce);
	if (r != BERTH_DEV_NONE) {
		json_decref(input);
		return finish_call(r, result, &ce);
	}
	if (dir == NULL)
		dir = default_app_dir(app, dirbuf, sizeof dirbuf);
	/* The boot and the call are in the audit trail (docs/audit.md). */
	char actor[64];
	snprintf(actor, sizeof actor, "rpc:uid:%u", (unsigned)getuid());
	o.audit = true;
	o.actor = actor;
	if (force_off(&o.force_off) < 0 || (r = open_app(dir, &o, &a)) != 0) {
		json_decref(input);
		return r ? r : 2;
	}
	if (strcmp(berth_app_manifest(a)->name, app) != 0) {
		fprintf(stderr, "berth: rpc: `%s` holds the app `%s`, not `%s`\n", CLI_SAFE(dir),
			CLI_SAFE(berth_app_manifest(a)->name), CLI_SAFE(app));
		berth_app_close(a);
		json_decref(input);
		return 2;
	}
	/* A call that cannot be valid costs no boot. */
	if (berth_app_check_input(a, export, input, &ce) < 0) {
		print_call_error(&ce);
		berth_call_error_free(&ce);
		berth_app_close(a);
		json_decref(input);
		return 2;
	}
	struct berth_error err = {0};
	if (berth_app_boot(a, NULL, &err) < 0) {
		if (berth_app_audit_refused(a)) {
			/* Fail closed, and say so the way a failed call does. */
			struct berth_call_error ae = {.code = BERTH_RPC_AUDIT};
			snprintf(
			    ae.message, sizeof ae.message,
			    "the audit trail cannot record a run of the app `%s`, so the call is refused "
			    "(fail closed)",
			    app);
			print_call_error(&ae);
		}
		cli_print_error(&err);
		berth_app_close(a);
		json_decref(input);
		return err.status == 2 ? 2 : 125;
	}
	r = berth_app_call(a, export, input, (unsigned)timeout, &result, &ce);
	json_decref(input);
	berth_app_close(a);
	return finish_call(r, result, &ce);
}

/* ---------------------------------------------------------- berth test */

static const char test_usage[] =
    "usage: berth test [--runtime namespace|vm] [APP-DIR]\n"
    "  boot the app (default: the current directory) in a throwaway state directory, check that it\n"
    "  serves exactly the exports of its berth.yml, call every export with its examples and check\n"
    "  each answer.  --runtime vm: the app is booted in a microVM (docs/vm.md).\n"
    "  exit status: 0 all passed; 1 a check failed; 2 usage error or invalid manifest (or an app the\n"
    "  runtime cannot run); 125 the app could not be booted\n";

/* `--runtime NAME` at @argv[*i] (its value after it): the runtime into *@rt.
 * Returns 1 when it was that option (*@i moved past its value), 0 when not,
 * -1 after saying why not (an unknown runtime, no value): status 2. */
static int runtime_opt(const char *cmd, int argc, char **argv, int *i, const struct berth_runtime_ops **rt)
{
	struct berth_error err = {0};

	if (strcmp(argv[*i], "--runtime") != 0)
		return 0;
	if (*i + 1 >= argc) {
		fprintf(stderr, "berth: %s: `--runtime` needs a value (namespace or vm)\n", cmd);
		return -1;
	}
	if ((*rt = berth_runtime_find(argv[++*i], &err)) == NULL) {
		cli_print_error(&err);
		return -1;
	}
	return 1;
}

/* Whether a call's outcome is what @ex expects; @why says why not. */
static bool example_ok(const struct berth_example *ex, int r, json_t *result,
		       const struct berth_call_error *ce, char *why, size_t len)
{
	char path[256], reason[256];

	switch (ex->expect) {
	case BERTH_EXPECT_OUTPUT:
		if (r != 0) {
			snprintf(why, len, "failed: %s (%d)", ce->message, ce->code);
			return false;
		}
		if (berth_example_match(ex->output, result, path, sizeof path, reason, sizeof reason) < 0) {
			snprintf(why, len, "output differs at %s: %s", path, reason);
			return false;
		}
		return true;
	case BERTH_EXPECT_ERRNO: {
		const char *got = r != 0 ? json_string_value(json_object_get(ce->data, "errno_name")) : NULL;
		if (r == 0 || got == NULL || strcmp(got, ex->error) != 0) {
			snprintf(why, len, "want error %s, got %s", ex->error,
				 r == 0        ? "success"
				 : got != NULL ? got
					       : ce->message);
			return false;
		}
		return true;
	}
	case BERTH_EXPECT_CODE:
		if (r == 0 || ce->code != ex->error_code) {
			snprintf(why, len, "want error code %lld, got %s%d", ex->error_code,
				 r == 0 ? "success " : "", r == 0 ? 0 : ce->code);
			return false;
		}
		return true;
	case BERTH_EXPECT_TEXT:
		if (r == 0 || strstr(ce->message, ex->error) == NULL) {
			snprintf(why, len, "want an error containing `%s`, got %s", ex->error,
				 r == 0 ? "success" : ce->message);
			return false;
		}
		return true;
	case BERTH_EXPECT_SUCCESS:
	default:
		if (r != 0) {
			snprintf(why, len, "failed: %s (%d)", ce->message, ce->code);
			return false;
		}
		return true;
	}
}

/* An app may leave directories it made unreadable (mode 0): open them up
 * first, so the removal below reaches everything. */
static int open_up(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)f;
	if (flag == FTW_D || flag == FTW_DNR)
		chmod(path, (st->st_mode & 07777) | S_IRWXU);
	return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

int cmd_test(int argc, char **argv)
{
	struct berth_app_opts o = {0};
	struct berth_app *a = NULL;
	struct berth_error err = {0};
	const char *dir = ".";
	char state[] = "/tmp/berth-test.XXXXXX";
	unsigned long boot_us = 0;
	int failed = 0, n = 0, r;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(test_usage, stdout);
			return 0;
		}
		int ro = runtime_opt("test", argc, argv, &i, &o.runtime);
		if (ro < 0)
			return 2;
		if (ro > 0)
			continue;
		if (argv[i][0] == '-' || i != argc - 1) {
			fprintf(stderr, "berth: test: unexpected argument `%s`\n%s", argv[i], test_usage);
			return 2;
		}
		dir = argv[i];
	}
	if (force_off(&o.force_off) < 0)
		return 2;
	/* Examples run against a fresh state directory: the app's real
	 * workspace is never touched by a test. */
	if (mkdtemp(state) == NULL) {
		fprintf(stderr, "berth: test: cannot create a temporary state directory: %s\n",
			strerror(errno));
		return 125;
	}
	o.state_root = state;
	r = open_app(dir, &o, &a);
	if (r != 0)
		goto out;
	/* What the runtime cannot run is a usage error, before a boot (as
	 * berth mcp --runtime says it), not the app failing its test. */
	if (o.runtime != NULL && o.runtime->check(berth_app_policy_of(a), NULL, &err) < 0) {
		cli_print_error(&err);
		r = err.status == 2 ? 2 : 125;
		goto out;
	}
	const struct berth_manifest *m = berth_app_manifest(a);
	printf("# app %s %s (%s)\n", m->name, m->version, berth_app_paths(a)->manifest);
	if (berth_app_boot(a, &boot_us, &err) < 0) {
		printf("not ok 1 - boot and export parity\n");
		cli_print_error(&err);
		/* A parity mismatch or a refused capability is the app failing its
		 * test; anything else is berth failing to run it. */
		r = err.status == 2 || err.errnum == EPROTO ? 1 : 125;
		goto out;
	}
	printf("ok %d - boot and export parity (%zu exports, ready in %.1f ms)\n", ++n, m->n_exports,
	       (double)boot_us / 1000.0);
	for (size_t i = 0; i < m->n_exports; i++) {
		const struct berth_export *ex = &m->exports[i];
		if (ex->n_examples == 0)
			printf("# export %s has no examples\n", ex->name);
		for (size_t k = 0; k < ex->n_examples; k++) {
			struct berth_call_error ce = {0};
			json_t *result = NULL;
			char why[1024] = "";
			int cr = berth_app_call(a, ex->name, ex->examples[k].input, 0, &result, &ce);
			bool ok = example_ok(&ex->examples[k], cr, result, &ce, why, sizeof why);
			printf("%s %d - %s example %zu (line %u)%s%s\n", ok ? "ok" : "not ok", ++n, ex->name,
			       k + 1, ex->examples[k].line, ok ? "" : ": ", why);
			failed += !ok;
			json_decref(result);
			berth_call_error_free(&ce);
		}
	}
	printf("1..%d\n", n);
	printf("# %s: %d passed, %d failed\n", m->name, n - failed, failed);
	r = failed ? 1 : 0;
out:
	berth_app_close(a);
	/* Each pass opens up one more level of unreadable directories. */
	for (int pass = 0; pass < 32 && nftw(state, remove_entry, 16, FTW_DEPTH | FTW_PHYS) < 0; pass++)
		nftw(state, open_up, 16, FTW_PHYS);
	if (access(state, F_OK) == 0)
		fprintf(stderr, "berth: test: could not remove `%s`\n", state);
	return r;
}

/* ---------------------------------------------------------- berth dev */

static const char dev_usage[] =
    "usage: berth dev [--runtime namespace|vm] [APP-DIR...]\n"
    "  boot the apps (default: the current directory), print how to call them, reboot an app when\n"
    "  its files change, and serve `berth rpc APP ...` through a control socket until ^C.\n"
    "  --runtime vm: each app is booted (and rebooted) in a microVM of its own (docs/vm.md)\n";

int cmd_dev(int argc, char **argv)
{
	struct berth_dev_opts o = {0};
	struct berth_error err = {0};
	char *dot[] = {(char *)"."};
	char **dirs = calloc((size_t)argc + 1, sizeof *dirs);
	size_t n = 0;

	if (dirs == NULL) {
		fprintf(stderr, "berth: dev: out of memory\n");
		return 125;
	}
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(dev_usage, stdout);
			free(dirs);
			return 0;
		}
		int ro = runtime_opt("dev", argc, argv, &i, &o.runtime);
		if (ro != 0) {
			if (ro < 0) {
				free(dirs);
				return 2;
			}
			continue;
		}
		if (argv[i][0] == '-') {
			fprintf(stderr, "berth: dev: unknown option `%s`\n%s", argv[i], dev_usage);
			free(dirs);
			return 2;
		}
		dirs[n++] = argv[i];
	}
	if (force_off(&o.force_off) < 0) {
		free(dirs);
		return 2;
	}
	int r = berth_dev_run(n > 0 ? dirs : dot, n > 0 ? n : 1, &o, &err);
	free(dirs);
	if (r < 0) {
		cli_print_error(&err);
		return err.status == 2 ? 2 : 125;
	}
	return 0;
}
