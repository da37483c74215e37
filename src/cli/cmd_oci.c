/* SPDX-License-Identifier: MIT */
/*
 * cmd_oci.c - `berth oci`: the OCI runtime command line (runc's syntax, the
 * subset conmon and containerd's runc shim call).  Parses and prints; the
 * work is src/oci's.  Every error goes to stderr and to the --log file,
 * exit status 1 (runc's).
 */
#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../oci/oci.h"
#include "../sandbox/sandbox.h"
#include "cli.h"

static const char oci_usage[] =
    "usage: berth oci [GLOBAL OPTIONS] COMMAND [OPTIONS] ARGS\n"
    "\n"
    "berth as an OCI runtime (runc's command line) for podman/conmon and containerd:\n"
    "  create [--bundle DIR] [--pid-file F] [--console-socket S] [--no-pivot] [--no-new-keyring] ID\n"
    "                          build the container from DIR/config.json, its command waiting\n"
    "  start ID                let a created container's command run\n"
    "  state ID                the OCI state (JSON)\n"
    "  kill [--all] ID [SIGNAL]  signal the container (default TERM; 15, TERM or SIGTERM)\n"
    "  delete [--force] ID     remove a stopped container (--force: kill it first)\n"
    "  list [--format table|json] [--quiet]   every container\n"
    "  ps [--format table|json] ID            the container's host pids\n"
    "  features                what berth oci accepts (JSON)\n"
    "\n"
    "global options:\n"
    "  --root DIR              state directory (default /run/berth-oci, for a user other than root\n"
    "                          $XDG_RUNTIME_DIR/berth-oci; made 0700)\n"
    "  --log FILE              append messages to FILE\n"
    "  --log-format text|json  format of --log (default text)\n"
    "  --debug                 debug lines in the log too\n"
    "  --version               berth's version and the runtime-spec version\n"
    "\n"
    "  exec [--process F] [--pid-file F] [--console-socket S] [-d] [-t] ID [COMMAND...]\n"
    "                          one more process in a running container, confined as its command\n"
    "\n"
    "not supported: run, pause, resume, update, events, checkpoint, restore, spec,\n"
    "--systemd-cgroup; see docs/oci.md for what a bundle may ask\n"
    "\n"
    "exit status: 0; 1 on any error (a refused bundle too)\n";

#ifdef BERTH_VERSION
#define BERTH_VERSION_TEXT BERTH_VERSION
#else
#define BERTH_VERSION_TEXT "0.0.0"
#endif

struct global {
	struct berth_oci_ctx ctx;
	const char *log_path, *log_format;
	bool debug;
};

/* The error at the edge: stderr, and the log. */
static int fail(const struct global *g, const struct berth_error *err)
{
	cli_print_error(err);
	berth_oci_log_error(&g->ctx.log, err);
	return 1;
}

static int fail_msg(const struct global *g, const char *msg, const char *hint)
{
	struct berth_error err = {0};

	berth_usage_err(&err, "%s", msg);
	if (hint != NULL)
		berth_err_hint(&err, "%s", hint);
	return fail(g, &err);
}

/*
 * One option as runc's command line (urfave/cli) takes it: `--name VALUE`,
 * `--name=VALUE`, `-name VALUE`, and a short `-x`.  Returns 1 when argv[*i]
 * is @name (with *@val set when @takes), 0 when not, -1 when its value is
 * missing.
 */
static int opt(int argc, char **argv, int *i, const char *name, char shortc, bool takes, const char **val)
{
	const char *a = argv[*i], *n = a;
	size_t len = strlen(name);

	if (a[0] != '-')
		return 0;
	n = a[1] == '-' ? a + 2 : a + 1;
	if (shortc != 0 && a[1] == shortc && a[2] == '\0')
		n = name;
	else if (strncmp(n, name, len) != 0 || (n[len] != '\0' && n[len] != '='))
		return 0;
	if (!takes)
		return n[len] == '\0' || strcmp(n + len, "=true") == 0 ? 1 : 0;
	if (n != name && n[len] == '=') {
		*val = n + len + 1;
		return 1;
	}
	if (*i + 1 >= argc)
		return -1;
	*val = argv[++*i];
	return 1;
}

/* Positional arguments left of @argv from @i, options refused. */
static int positional(const struct global *g, int argc, char **argv, int i, const char *cmd, int min, int max,
		      char **out)
{
	int n = 0;
	bool dashdash = false;

	for (; i < argc; i++) {
		if (!dashdash && strcmp(argv[i], "--") == 0) {
			dashdash = true;
			continue;
		}
		if (!dashdash && argv[i][0] == '-' && argv[i][1] != '\0') {
			char msg[256];
			snprintf(msg, sizeof msg, "unknown option `%s` for `berth oci %s`", argv[i], cmd);
			return fail_msg(g, msg, "see `berth oci --help`"), -1;
		}
		if (n == max) {
			char msg[256];
			snprintf(msg, sizeof msg,
				 "`berth oci %s` takes at most %d argument%s (`%s` is one more)", cmd, max,
				 max == 1 ? "" : "s", argv[i]);
			return fail_msg(g, msg, "see `berth oci --help`"), -1;
		}
		out[n++] = argv[i];
	}
	if (n < min) {
		char msg[128];
		snprintf(msg, sizeof msg, "`berth oci %s` needs the container id", cmd);
		return fail_msg(g, msg, "see `berth oci --help`"), -1;
	}
	return n;
}

static void print_json(const json_t *v)
{
	char *s = json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	if (s != NULL)
		puts(s);
	free(s);
}

/* ---------------------------------------------------------- commands */

static int do_create(struct global *g, int argc, char **argv)
{
	struct berth_oci_create_opts o = {0};
	struct berth_error err = {0};
	char *rest[8];
	int n = 0, r;
	const char *fds = NULL;

	for (int i = 1; i < argc; i++) {
		const char *v = NULL;
		if ((r = opt(argc, argv, &i, "bundle", 'b', true, &o.bundle)) != 0 ||
		    (r = opt(argc, argv, &i, "pid-file", 0, true, &o.pid_file)) != 0 ||
		    (r = opt(argc, argv, &i, "console-socket", 0, true, &o.console_socket)) != 0 ||
		    (r = opt(argc, argv, &i, "preserve-fds", 0, true, &fds)) != 0) {
			if (r < 0)
				return fail_msg(g, "an option of `berth oci create` lacks its value", NULL);
			continue;
		}
		if ((r = opt(argc, argv, &i, "no-pivot", 0, false, &v)) == 1) {
			o.no_pivot = true;
			continue;
		}
		if ((r = opt(argc, argv, &i, "no-new-keyring", 0, false, &v)) == 1) {
			o.no_new_keyring = true;
			continue;
		}
		if (n < 8)
			rest[n++] = argv[i];
	}
	if (positional(g, n, rest, 0, "create", 1, 1, rest) < 0)
		return 1;
	if (fds != NULL && strcmp(fds, "0") != 0)
		return fail_msg(
		    g, "berth oci does not pass extra descriptors to a container (--preserve-fds)",
		    "drop --preserve-fds (podman: no socket activation or --preserve-fds for this runtime)");
	o.id = rest[0];
	if (berth_oci_create(&g->ctx, &o, &err) < 0)
		return fail(g, &err);
	return 0;
}

/* `exec [--process F] [--pid-file F] [--console-socket S] [-d] [-t] ID
 * [COMMAND...]`: without --detach berth exits with the process's status. */
static int do_exec(struct global *g, int argc, char **argv)
{
	struct berth_oci_exec_opts o = {0};
	struct berth_error err = {0};
	const char *fds = NULL;
	int i, r, status = 0;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *v = NULL;
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if ((r = opt(argc, argv, &i, "process", 'p', true, &o.process)) != 0 ||
		    (r = opt(argc, argv, &i, "pid-file", 0, true, &o.pid_file)) != 0 ||
		    (r = opt(argc, argv, &i, "console-socket", 0, true, &o.console_socket)) != 0 ||
		    (r = opt(argc, argv, &i, "preserve-fds", 0, true, &fds)) != 0) {
			if (r < 0)
				return fail_msg(g, "an option of `berth oci exec` lacks its value", NULL);
			continue;
		}
		if (opt(argc, argv, &i, "detach", 'd', false, &v) == 1) {
			o.detach = true;
			continue;
		}
		if (opt(argc, argv, &i, "tty", 't', false, &v) == 1) {
			o.tty = true;
			continue;
		}
		{
			char msg[256];
			snprintf(msg, sizeof msg, "berth oci exec does not take `%.200s`", argv[i]);
			return fail_msg(g, msg,
					"it takes --process, --pid-file, --console-socket, --detach, --tty");
		}
	}
	if (fds != NULL && strcmp(fds, "0") != 0)
		return fail_msg(g, "berth oci does not pass extra descriptors to a process (--preserve-fds)",
				NULL);
	if (i >= argc)
		return fail_msg(g, "berth oci exec needs the container's id",
				"berth oci exec [OPTIONS] ID [COMMAND...]");
	o.id = argv[i++];
	o.args = i < argc ? argv + i : NULL;
	if (o.process == NULL && o.args == NULL)
		return fail_msg(g, "berth oci exec needs --process FILE or a command", NULL);
	if (berth_oci_exec(&g->ctx, &o, &status, &err) < 0)
		return fail(g, &err);
	return status;
}

/* The commands that take the id and, for some, one option. */
static int do_simple(struct global *g, const char *cmd, int argc, char **argv)
{
	struct berth_error err = {0};
	char *rest[2];
	bool flag = false;
	const char *format = NULL;
	int n, k = 0;
	char *args[64];

	/* options first, wherever they are: --force (delete), --all (kill),
	 * --quiet (list), --format (list, ps) */
	for (int i = 1; i < argc && k < 64; i++) {
		const char *v = NULL;
		const char *name = strcmp(cmd, "delete") == 0 ? "force"
				   : strcmp(cmd, "kill") == 0 ? "all"
				   : strcmp(cmd, "list") == 0 ? "quiet"
							      : NULL;
		int r = name != NULL ? opt(argc, argv, &i, name, name[0], false, &v) : 0;
		if (r == 1) {
			flag = true;
			continue;
		}
		if ((strcmp(cmd, "list") == 0 || strcmp(cmd, "ps") == 0) &&
		    (r = opt(argc, argv, &i, "format", 'f', true, &format)) != 0) {
			if (r < 0)
				return fail_msg(g, "--format needs table or json", NULL);
			continue;
		}
		args[k++] = argv[i];
	}
	if (format != NULL && strcmp(format, "table") != 0 && strcmp(format, "json") != 0)
		return fail_msg(g, "--format takes table or json", NULL);
	if (strcmp(cmd, "list") == 0) {
		json_t *all = NULL;
		if (positional(g, k, args, 0, cmd, 0, 0, rest) < 0)
			return 1;
		if (berth_oci_list(&g->ctx, &all, &err) < 0)
			return fail(g, &err);
		if (format != NULL && strcmp(format, "json") == 0)
			print_json(all);
		else {
			size_t i;
			json_t *s;
			const struct passwd *pw = getpwuid(geteuid());
			const char *owner = pw != NULL ? pw->pw_name : "?";
			if (!flag)
				printf("ID\tPID\tSTATUS\tBUNDLE\tCREATED\tOWNER\n");
			json_array_foreach(all, i, s) {
				if (flag)
					printf("%s\n", CLI_SAFE(json_string_value(json_object_get(s, "id"))));
				else
					printf("%s\t%d\t%s\t%s\t%s\t%s\n",
					       CLI_SAFE(json_string_value(json_object_get(s, "id"))),
					       (int)json_integer_value(json_object_get(s, "pid")),
					       json_string_value(json_object_get(s, "status")),
					       CLI_SAFE(json_string_value(json_object_get(s, "bundle"))),
					       json_string_value(json_object_get(s, "created")), owner);
			}
		}
		json_decref(all);
		return 0;
	}
	n = positional(g, k, args, 0, cmd, 1, strcmp(cmd, "kill") == 0 ? 2 : 1, rest);
	if (n < 0)
		return 1;
	if (strcmp(cmd, "start") == 0) {
		if (berth_oci_start(&g->ctx, rest[0], &err) < 0)
			return fail(g, &err);
	} else if (strcmp(cmd, "state") == 0 || strcmp(cmd, "ps") == 0) {
		json_t *out = NULL;
		if ((cmd[0] == 's' ? berth_oci_state(&g->ctx, rest[0], &out, &err)
				   : berth_oci_ps(&g->ctx, rest[0], &out, &err)) < 0)
			return fail(g, &err);
		if (cmd[0] == 'p' && (format == NULL || strcmp(format, "table") == 0)) {
			size_t i;
			json_t *p;
			printf("PID\n");
			json_array_foreach(out, i, p)
				printf("%d\n", (int)json_integer_value(p));
		} else if (cmd[0] == 'p') {
			char *s = json_dumps(out, JSON_COMPACT);
			if (s != NULL)
				puts(s);
			free(s);
		} else
			print_json(out);
		json_decref(out);
	} else if (strcmp(cmd, "kill") == 0) {
		int sig = SIGTERM;
		if (n == 2 && berth_oci_signal_parse(rest[1], &sig, &err) < 0)
			return fail(g, &err);
		if (berth_oci_kill(&g->ctx, rest[0], sig, flag, &err) < 0)
			return fail(g, &err);
	} else if (berth_oci_delete(&g->ctx, rest[0], flag, &err) < 0)
		return fail(g, &err);
	return 0;
}

/* ---------------------------------------------------------- globals */

static int parse_globals(struct global *g, int argc, char **argv, int *i)
{
	for (*i = 1; *i < argc && argv[*i][0] == '-'; (*i)++) {
		const char *v = NULL;
		int r;
		if (strcmp(argv[*i], "--help") == 0 || strcmp(argv[*i], "-h") == 0)
			return 2;
		if (strcmp(argv[*i], "--version") == 0 || strcmp(argv[*i], "-v") == 0)
			return 3;
		if ((r = opt(argc, argv, i, "root", 0, true, &g->ctx.root)) != 0 ||
		    (r = opt(argc, argv, i, "log", 0, true, &g->log_path)) != 0 ||
		    (r = opt(argc, argv, i, "log-format", 0, true, &g->log_format)) != 0) {
			if (r < 0)
				return fail_msg(g, "a global option of `berth oci` lacks its value", NULL),
				       -1;
			continue;
		}
		if (opt(argc, argv, i, "debug", 0, false, &v) == 1) {
			g->debug = true;
			continue;
		}
		if (opt(argc, argv, i, "systemd-cgroup", 0, false, &v) == 1)
			return fail_msg(
				   g,
				   "berth oci does not support --systemd-cgroup: berth makes and limits the "
				   "container's cgroup itself, in its own tree",
				   "configure the engine for cgroupfs (podman: cgroup_manager = \"cgroupfs\" "
				   "in "
				   "containers.conf; containerd: SystemdCgroup = false for this runtime)"),
			       -1;
		char msg[256];
		snprintf(msg, sizeof msg, "unknown global option `%s` of `berth oci`", argv[*i]);
		return fail_msg(g, msg, "see `berth oci --help`"), -1;
	}
	return 0;
}

int cmd_oci(int argc, char **argv)
{
	struct global g = {.ctx.log.fd = -1};
	char root[4096];
	struct berth_error err = {0};
	const char *cmd;
	int i, r = parse_globals(&g, argc, argv, &i);

	if (r == 2) {
		fputs(oci_usage, stdout);
		return 0;
	}
	if (r == 3) {
		/* runc's form: engines read the first line and `spec:` */
		printf("berth-oci version %s\nspec: %s\n", BERTH_VERSION_TEXT, BERTH_OCI_VERSION);
		return 0;
	}
	if (r < 0)
		return 1;
	if (g.log_format != NULL && strcmp(g.log_format, "text") != 0 && strcmp(g.log_format, "json") != 0)
		return fail_msg(&g, "--log-format takes text or json", NULL);
	if (berth_oci_log_open(&g.ctx.log, g.log_path,
			       g.log_format != NULL && strcmp(g.log_format, "json") == 0, g.debug, &err) < 0)
		return fail(&g, &err);
	if (berth_parse_force_off(getenv("BERTH_TEST_FORCE_OFF"), &g.ctx.force_off, &err) < 0)
		return fail(&g, &err);
	if (g.ctx.root == NULL)
		g.ctx.root = berth_oci_default_root(root, sizeof root);
	if (i >= argc) {
		fputs(oci_usage, stderr);
		return 1;
	}
	cmd = argv[i];
	argc -= i;
	argv += i;
	for (int k = 1; k < argc; k++)
		if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0) {
			fputs(oci_usage, stdout);
			return 0;
		}
	if (strcmp(cmd, "create") == 0)
		return do_create(&g, argc, argv);
	if (strcmp(cmd, "start") == 0 || strcmp(cmd, "state") == 0 || strcmp(cmd, "kill") == 0 ||
	    strcmp(cmd, "delete") == 0 || strcmp(cmd, "list") == 0 || strcmp(cmd, "ps") == 0)
		return do_simple(&g, cmd, argc, argv);
	if (strcmp(cmd, "features") == 0) {
		json_t *f = berth_oci_features();
		if (f == NULL) {
			berth_err(&err, ENOMEM, "out of memory");
			return fail(&g, &err);
		}
		print_json(f);
		json_decref(f);
		return 0;
	}
	if (strcmp(cmd, "exec") == 0)
		return do_exec(&g, argc, argv);
	{
		static const char *const known[] = {"run",        "pause",   "resume", "update", "events",
						    "checkpoint", "restore", "spec",   "init",   NULL};
		char msg[256];
		for (size_t k = 0; known[k] != NULL; k++)
			if (strcmp(cmd, known[k]) == 0) {
				snprintf(msg, sizeof msg, "berth oci does not support `%s`", cmd);
				return fail_msg(&g, msg,
						strcmp(cmd, "run") == 0 ? "use `create` then `start`"
									: "see docs/oci.md");
			}
		snprintf(msg, sizeof msg, "unknown command `berth oci %s`", cmd);
		return fail_msg(&g, msg, "see `berth oci --help`");
	}
}
