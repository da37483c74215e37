/* SPDX-License-Identifier: MIT */
/*
 * cmd_session.c - `berth spawn`, `ps`, `peek`, `send`, `logs`, `attach`,
 * `stop`, `rm`: agent sessions (docs/sessions.md).  The work is in
 * src/session/; this file parses and prints.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "../policy/flags.h"
#include "../sandbox/sandbox.h"
#include "../session/profile.h"
#include "../session/session.h"
#include "../session/spawn_args.h"
#include "../util/termfilter.h"
#include "../util/cleanup.h"
#include "../util/sys.h"
#include "cli.h"

#define REQUEST_TIMEOUT_MS 3000
#define DETACH_KEY 0x1d /* Ctrl-] */

static int fail(const struct berth_error *err)
{
	cli_print_error(err);
	return err->status ? err->status : BERTH_EXIT_INTERNAL;
}

static int usage_fail(const char *usage, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage_fail(const char *usage, const char *fmt, ...)
{
	va_list ap;

	fputs("berth: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fputs(usage, stderr);
	return BERTH_EXIT_USAGE;
}

/* --json: @v on one line (@empty when it cannot be written), released; 0. */
static int print_json(json_t *v, const char *empty)
{
	char *t = cli_json_dumps(v, JSON_COMPACT);

	printf("%s\n", t ? t : empty);
	free(t);
	json_decref(v);
	return 0;
}

/* The options of a command whose one option is the flag @flag (*@set when
 * given) besides --help (@usage on stdout); the operands are the arguments
 * that do not start with `-`.  Returns -1 to go on, else the exit status:
 * 0 after --help, BERTH_EXIT_USAGE for any other option. */
static int flag_only(int argc, char **argv, const char *flag, bool *set, const char *usage)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], flag) == 0)
			*set = true;
		else if (strcmp(argv[i], "--help") == 0) {
			fputs(usage, stdout);
			return 0;
		} else if (argv[i][0] == '-')
			return usage_fail(usage, "unknown option `%s`", argv[i]);
	return -1;
}

/* ------------------------------------------------------------ spawn */

static const char spawn_usage[] =
    "usage: berth spawn PROFILE [--name NAME] [--repo URL | --workspace DIR] [--prompt TEXT]\n"
    "                   [--seed-auth] [--persist-home] [--size ROWSxCOLS] [RUN OPTIONS] [-- AGENT ARGS...]\n"
    "\n"
    "  PROFILE           claude, codex, shell, or ~/.config/berth/profiles/PROFILE.yml\n"
    "  --name NAME       the session's name (a-z 0-9 -, at most 48; default PROFILE-REPO-HHMMSS)\n"
    "  --repo URL        clone URL (https://; http:// warns) through the egress broker into the session's "
    "own workspace\n"
    "  --workspace DIR   the workspace (default: the session's own, empty)\n"
    "  --prompt TEXT     the first instruction (an argument, or typed, as the profile says)\n"
    "  --seed-auth       forward the profile's credentials (a widening: the agent can read them)\n"
    "  --persist-home    $HOME is ~/.local/state/berth/homes/PROFILE, kept across sessions (default: the\n"
    "                    profile's persist_home, else a fresh tmpfs); --no-persist-home: the tmpfs\n"
    "  --size ROWSxCOLS  the terminal size (default: this terminal's, else 40x120)\n"
    "  RUN OPTIONS       as `berth run`: --memory --cpus --pids --timeout --network --allow-host --env\n"
    "                    --ro --rw --unprotect --allow-degraded --yes ...; --runtime vm: the agent in a\n"
    "                    microVM (docs/vm.md), its supervisor and `berth attach` on the host\n"
    "\n"
    "exit status: 0 started; 2 usage, bad profile, name in use; 125 berth failed (a failed clone\n"
    "included); 126 the agent is not executable; 127 the agent was not found\n";

/* The caller's terminal size, else 40x120. */
static void term_size(int *rows, int *cols)
{
	struct winsize ws;

	*rows = 40;
	*cols = 120;
	for (int fd = 0; fd <= 2; fd++)
		if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row >= 2 && ws.ws_col >= 10) {
			*rows = ws.ws_row;
			*cols = ws.ws_col;
			return;
		}
}

int cmd_spawn(int argc, char **argv)
{
	struct berth_spawn_req req;
	struct berth_error err = {0};
	char name[BERTH_SESSION_NAME_MAX + 1];
	pid_t pid = 0;
	int r;

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs(spawn_usage, stdout);
		return 0;
	}
	if (berth_spawn_parse(argc, argv, &req, &err) < 0) {
		cli_print_error(&err);
		if (err.status == BERTH_EXIT_USAGE && strstr(err.msg, "spawn") != NULL)
			fputs(spawn_usage, stderr);
		berth_spawn_req_free(&req);
		return err.status ? err.status : BERTH_EXIT_USAGE;
	}
	if (req.rows == 0)
		term_size(&req.rows, &req.cols);
	r = berth_spawn_prepare(&req, getenv, &err);
	/* Values are in the request now: off berth's command line and
	 * environment, which the detached supervisor (a fork of this process)
	 * keeps for the session's whole life (docs/security.md, "Secrets"). */
	if (r == 0 && req.have_run)
		berth_run_scrub(argc, argv, &req.run);
	for (size_t i = 0; i < req.n_notes; i++)
		fprintf(stderr, "berth: %s\n", CLI_SAFE(req.notes[i]));
	if (r < 0 || cli_confirm_widenings(&req.run, "spawn", "started") < 0) {
		if (r < 0)
			cli_print_error(&err);
		berth_spawn_req_free(&req);
		return r < 0 ? (err.status ? err.status : BERTH_EXIT_INTERNAL) : BERTH_EXIT_INTERNAL;
	}
	snprintf(name, sizeof name, "%s", req.name);
	r = berth_spawn_launch(&req, &pid, &err);
	if (req.launch_notice[0] != '\0')
		fprintf(stderr, "berth: %s\n", CLI_SAFE(req.launch_notice));
	berth_spawn_req_free(&req);
	if (r < 0)
		return fail(&err);
	printf("%s\n", name);
	fprintf(stderr,
		"berth: session `%s` started (supervisor pid %d); `berth attach %s` (detach: Ctrl-])\n", name,
		(int)pid, name);
	return 0;
}

/* ------------------------------------------------------------ ps */

static void format_uptime(long long s, char *buf, size_t len)
{
	if (s < 0)
		s = 0;
	if (s < 120)
		snprintf(buf, len, "%llds", s);
	else if (s < 7200)
		snprintf(buf, len, "%lldm", s / 60);
	else if (s < 172800)
		snprintf(buf, len, "%lldh%02lldm", s / 3600, (s / 60) % 60);
	else
		snprintf(buf, len, "%lldd", s / 86400);
}

int cmd_ps(int argc, char **argv)
{
	static const char ps_usage[] = "usage: berth ps [--json] [NAME...]\n";
	bool json = false;
	struct berth_error err = {0};
	char **names = NULL, **only = NULL;
	int n, n_only = 0;
	json_t *all;

	if ((n = flag_only(argc, argv, "--json", &json, ps_usage)) >= 0)
		return n;
	all = json_array();
	only = calloc((size_t)argc + 1, sizeof *only);
	for (int i = 1; i < argc; i++)
		if (argv[i][0] != '-')
			only[n_only++] = argv[i];
	n = berth_session_list(&names, &err);
	if (n < 0)
		return fail(&err);
	for (int i = 0; i < n; i++) {
		bool want = n_only == 0;
		for (int k = 0; k < n_only; k++)
			want = want || strcmp(only[k], names[i]) == 0;
		if (want) {
			json_t *row = berth_session_status(names[i], REQUEST_TIMEOUT_MS);
			if (row != NULL)
				json_array_append_new(all, row);
		}
		free(names[i]);
	}
	free(names);
	free(only);
	if (json)
		return print_json(all, "[]");
	printf("%-24s %-12s %-9s %-8s %-9s %-14s %s\n", "NAME", "PROFILE", "STATE", "UPTIME", "NETWORK",
	       "POLICY", "WORKSPACE");
	size_t i;
	json_t *row;
	json_array_foreach(all, i, row) {
		char up[32];
		const char *digest = json_string_value(json_object_get(row, "policy_digest"));
		format_uptime((long long)json_integer_value(json_object_get(row, "uptime_s")), up, sizeof up);
		/* session.json is the supervisor's, but a workspace path is the
		 * name of a directory a repository may have made */
		printf("%-24s %-12s %-9s %-8s %-9s %-14.14s %s\n",
		       CLI_SAFE(json_string_value(json_object_get(row, "name"))),
		       CLI_SAFE(json_string_value(json_object_get(row, "profile")) ?: "?"),
		       CLI_SAFE(json_string_value(json_object_get(row, "state")) ?: "?"), up,
		       CLI_SAFE(json_string_value(json_object_get(row, "network")) ?: "?"),
		       digest && strncmp(digest, "sha256:", 7) == 0 ? CLI_SAFE(digest + 7) : "?",
		       CLI_SAFE(json_string_value(json_object_get(row, "workspace")) ?: "?"));
	}
	json_decref(all);
	return 0;
}

/* ------------------------------------------------------------ peek */

int cmd_peek(int argc, char **argv)
{
	static const char peek_usage[] = "usage: berth peek NAME [--lines N] [--json]\n";
	const char *name = NULL;
	long lines = 0;
	bool json = false;
	struct berth_error err = {0};
	json_t *scr;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--lines") == 0 && i + 1 == argc) {
			return usage_fail(peek_usage, "%s", "--lines needs a value: give 1 to 10000");
		} else if (strcmp(argv[i], "--lines") == 0) {
			uint64_t n = 0;
			struct berth_error le = {0};
			if (berth_parse_count(argv[++i], "--lines", 1, 10000, &n, &le) < 0)
				return usage_fail(peek_usage, "invalid --lines `%s`: give 1 to 10000",
						  CLI_SAFE(argv[i]));
			lines = (long)n;
		} else if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--help") == 0) {
			fputs(peek_usage, stdout);
			return 0;
		} else if (argv[i][0] == '-' || name != NULL) {
			return usage_fail(peek_usage, "unexpected argument `%s`", argv[i]);
		} else {
			name = argv[i];
		}
	}
	if (name == NULL)
		return usage_fail(peek_usage, "%s", "which session? give its NAME");
	scr = berth_session_screen(name, REQUEST_TIMEOUT_MS, &err);
	if (scr == NULL)
		return fail(&err);
	if (json)
		return print_json(scr, "{}");
	json_t *arr = json_object_get(scr, "lines");
	size_t n = json_array_size(arr), first = 0;
	while (n > 0 && json_string_length(json_array_get(arr, n - 1)) == 0)
		n--;
	if (lines > 0 && n > (size_t)lines)
		first = n - (size_t)lines;
	for (size_t i = first; i < n; i++)
		printf("%s\n", json_string_value(json_array_get(arr, i)));
	json_decref(scr);
	return 0;
}

/* ------------------------------------------------------------ send */

static const struct {
	const char *name, *bytes;
} key_table[] = {
    {"enter", "\r"},    {"tab", "\t"},       {"esc", "\033"},    {"up", "\033[A"},
    {"down", "\033[B"}, {"right", "\033[C"}, {"left", "\033[D"}, {"backspace", "\177"},
    {"ctrl-c", "\003"}, {"ctrl-d", "\004"},  {"space", " "},     {"shift-tab", "\033[Z"},
};

int cmd_send(int argc, char **argv)
{
	static const char send_usage[] =
	    "usage: berth send NAME [TEXT...] [--key KEY...] [--enter]\n"
	    "  TEXT is typed as given (arguments joined by spaces); --key types one key:\n"
	    "  enter tab esc up down left right backspace space shift-tab ctrl-c ctrl-d;\n"
	    "  --enter presses Enter at the end, as a keystroke of its own after a short pause\n"
	    "  (so that agents that detect pastes submit the line); text of several lines\n"
	    "  without --key goes as a bracketed paste when the agent asked for that\n";
	const char *name = NULL;
	bool enter = false, had_text = false, had_key = false;
	char *data = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&data, &len);
	struct berth_error err = {0};
	json_t *reply = NULL;

	if (m == NULL)
		return BERTH_EXIT_INTERNAL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--enter") == 0) {
			enter = true;
		} else if (strcmp(argv[i], "--key") == 0 && i + 1 < argc) {
			size_t k;
			for (k = 0; k < BERTH_ARRAY_SIZE(key_table); k++)
				if (strcmp(argv[i + 1], key_table[k].name) == 0)
					break;
			if (k == BERTH_ARRAY_SIZE(key_table)) {
				fclose(m);
				free(data);
				return usage_fail(send_usage, "unknown --key `%s`", argv[i + 1]);
			}
			fputs(key_table[k].bytes, m);
			had_key = true;
			i++;
		} else if (strcmp(argv[i], "--help") == 0) {
			fclose(m);
			free(data);
			fputs(send_usage, stdout);
			return 0;
		} else if (strcmp(argv[i], "--") == 0 && name != NULL) {
			for (i++; i < argc; i++) {
				fprintf(m, "%s%s", had_text ? " " : "", argv[i]);
				had_text = true;
			}
		} else if (argv[i][0] == '-' && argv[i][1] != '\0' && name == NULL) {
			fclose(m);
			free(data);
			return usage_fail(send_usage, "unknown option `%s`", argv[i]);
		} else if (name == NULL) {
			name = argv[i];
		} else {
			fprintf(m, "%s%s", had_text ? " " : "", argv[i]);
			had_text = true;
		}
	}
	fclose(m);
	if (name == NULL || (len == 0 && !enter)) {
		free(data);
		return usage_fail(send_usage, "%s",
				  name == NULL ? "which session? give its NAME" : "nothing to send");
	}
	/* The Enter is the supervisor's to type, after the text reached the
	 * agent and a pause (docs/sessions.md, "Typing into an agent"). */
	json_t *req = json_pack("{ssss%sbsb}", "op", "send", "data", data, len, "enter", enter, "paste",
				had_text && !had_key);
	free(data);
	if (req == NULL) {
		fputs("berth: the text to send is not valid UTF-8\n", stderr);
		return BERTH_EXIT_USAGE;
	}
	int r = berth_session_request(name, req, REQUEST_TIMEOUT_MS, &reply, &err);
	json_decref(req);
	json_decref(reply);
	return r < 0 ? fail(&err) : 0;
}

/* ------------------------------------------------------------ logs */

/* @n bytes of the output log to standard output, through @tf when it is
 * not NULL.  Returns 0, or -1 when standard output fails. */
static int write_out(struct berth_termfilter *tf, const char *buf, size_t n)
{
	static char safe[65536 + BERTH_TERMFILTER_SLACK];

	if (tf != NULL) {
		n = berth_termfilter_feed(tf, buf, n, safe);
		buf = safe;
	}
	return fwrite(buf, 1, n, stdout) == n ? 0 : -1;
}

int cmd_logs(int argc, char **argv)
{
	static const char logs_usage[] = "usage: berth logs NAME [-f]\n";
	const char *name = NULL;
	bool follow = false;
	char dir[PATH_MAX], path[PATH_MAX + 16], buf[65536];
	struct berth_error err = {0};
	struct berth_termfilter tfs, *tf = NULL;
	cleanup_close int fd = -1;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-f") == 0 || strcmp(argv[i], "--follow") == 0)
			follow = true;
		else if (strcmp(argv[i], "--help") == 0) {
			fputs(logs_usage, stdout);
			return 0;
		} else if (argv[i][0] == '-' || name != NULL)
			return usage_fail(logs_usage, "unexpected argument `%s`", argv[i]);
		else
			name = argv[i];
	}
	if (name == NULL)
		return usage_fail(logs_usage, "%s", "which session? give its NAME");
	if (berth_session_name_check(name, &err) < 0 ||
	    berth_session_state_dir(name, false, dir, sizeof dir, &err) < 0)
		return fail(&err);
	snprintf(path, sizeof path, "%s/output.log", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		fprintf(stderr, "berth: no output log for session `%s` (%s)\nberth: hint: see `berth ps`\n",
			name, strerror(errno));
		return BERTH_EXIT_USAGE;
	}
	signal(SIGPIPE, SIG_DFL);
	/* On a terminal, the agent's output may not drive it (termfilter.h);
	 * into a pipe or a file it goes as it was written. */
	if (isatty(STDOUT_FILENO)) {
		tf = &tfs;
		berth_termfilter_init(tf);
	}
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "berth: cannot read `%s`: %s\n", path, strerror(errno));
			return BERTH_EXIT_INTERNAL;
		}
		if (n > 0) {
			if (write_out(tf, buf, (size_t)n) < 0)
				return 1;
			continue;
		}
		fflush(stdout);
		if (!follow)
			break;
		if (!berth_session_alive(name)) {
			/* One last read after the end: nothing comes later. */
			while ((n = read(fd, buf, sizeof buf)) > 0)
				write_out(tf, buf, (size_t)n);
			break;
		}
		usleep(200 * 1000);
	}
	fflush(stdout);
	return 0;
}

/* ------------------------------------------------------------ attach */

static volatile sig_atomic_t winch = 0;

/* What the agent may have switched on in the person's terminal and must not
 * outlive the attachment (mouse reports would be typed into the shell, a
 * hidden cursor or the line-drawing character set stay): mouse tracking
 * modes 1000, 1002, 1003, 1005, 1006, 1015, focus events (1004), bracketed
 * paste (2004), application cursor keys (1) and keypad (ESC >), the
 * alternate screen (1049), kitty's keyboard flags (CSI < u), the scroll
 * region (inside DECSC/DECRC: DECSTBM homes the cursor), the G0 character
 * set, the cursor shown, attributes off (xterm's ctlseqs). */
#define TERMINAL_RESET                                                                                       \
	"\033[?1000l\033[?1002l\033[?1003l\033[?1005l\033[?1006l\033[?1015l\033[?1004l\033[?2004l\033[?"     \
	"1l\033>"                                                                                            \
	"\033[?1049l\033[<u\0337\033[r\0338\033(B\033[?25h\033[0m"
static void on_winch(int sig)
{
	(void)sig;
	winch = 1;
}

int cmd_attach(int argc, char **argv)
{
	static const char attach_usage[] = "usage: berth attach NAME   (detach: Ctrl-])\n";
	struct berth_error err = {0};
	struct termios saved, raw;
	struct winsize ws = {.ws_row = 40, .ws_col = 120};
	cleanup_close int fd = -1;
	char line[512];
	size_t got = 0;
	int ended = 0;

	if (argc != 2 || argv[1][0] == '-') {
		if (argc == 2 && strcmp(argv[1], "--help") == 0) {
			fputs(attach_usage, stdout);
			return 0;
		}
		fputs(attach_usage, stderr);
		return BERTH_EXIT_USAGE;
	}
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fputs("berth: attach needs a terminal on stdin and stdout\nberth: hint: `berth peek` and "
		      "`berth send` "
		      "work without one\n",
		      stderr);
		return BERTH_EXIT_USAGE;
	}
	ioctl(STDIN_FILENO, TIOCGWINSZ, &ws);
	fd = berth_session_connect(argv[1], &err);
	if (fd < 0)
		return fail(&err);
	dprintf(fd, "{\"op\":\"attach\",\"rows\":%u,\"cols\":%u}\n", ws.ws_row, ws.ws_col);
	/* The answer line, then raw output. */
	while (got < sizeof line - 1) {
		ssize_t n = read(fd, line + got, 1);
		if (n <= 0) {
			fprintf(stderr, "berth: session `%s` closed the connection\n", CLI_SAFE(argv[1]));
			return BERTH_EXIT_USAGE;
		}
		if (line[got++] == '\n')
			break;
	}
	line[got] = '\0';
	if (strstr(line, "\"ok\"") == NULL) {
		/* the answer quotes what the session holds (a name, an error
		 * text a sandbox could have chosen): through the filter */
		line[strcspn(line, "\n")] = '\0';
		fprintf(stderr, "berth: session `%s` refused to attach: %s\n", CLI_SAFE(argv[1]),
			CLI_SAFE(line));
		return BERTH_EXIT_USAGE;
	}
	tcgetattr(STDIN_FILENO, &saved);
	raw = saved;
	cfmakeraw(&raw);
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw);
	signal(SIGWINCH, on_winch);
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		struct pollfd p[2] = {{STDIN_FILENO, POLLIN, 0}, {fd, POLLIN, 0}};
		char buf[65536];

		if (winch) {
			winch = 0;
			if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0) {
				json_t *req = json_pack("{sssisi}", "op", "resize", "rows", ws.ws_row, "cols",
							ws.ws_col),
				       *reply = NULL;
				struct berth_error e2 = {0};
				berth_session_request(argv[1], req, REQUEST_TIMEOUT_MS, &reply, &e2);
				json_decref(req);
				json_decref(reply);
			}
		}
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents) {
			ssize_t n = read(fd, buf, sizeof buf);
			if (n <= 0) {
				ended = 1;
				break;
			}
			for (ssize_t off = 0; off < n;) {
				ssize_t w = write(STDOUT_FILENO, buf + off, (size_t)(n - off));
				if (w <= 0 && errno != EINTR)
					break;
				off += w > 0 ? w : 0;
			}
		}
		if (p[0].revents) {
			ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
			if (n <= 0)
				break;
			char *det = memchr(buf, DETACH_KEY, (size_t)n);
			size_t len = det ? (size_t)(det - buf) : (size_t)n;
			if (len > 0 && send(fd, buf, len, MSG_NOSIGNAL) < 0) {
				ended = 1;
				break;
			}
			if (det != NULL)
				break;
		}
	}
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
	fputs(TERMINAL_RESET "\r\n", stdout);
	fflush(stdout);
	if (ended)
		fprintf(stderr, "berth: session `%s` ended\n", CLI_SAFE(argv[1]));
	else
		fprintf(stderr, "berth: detached from `%s`; it keeps running\n", CLI_SAFE(argv[1]));
	return 0;
}

/* ------------------------------------------------------------ stop */

/* The trust-surface lines of session @name's end (trustscan.h), written
 * cleaned by its supervisor. */
static void show_trust_log(const char *name)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], line[8192], safe[sizeof line];
	struct berth_error err = {0};
	FILE *f;
	int fd;

	if (berth_session_state_dir(name, false, dir, sizeof dir, &err) < 0)
		return;
	snprintf(path, sizeof path, "%s/trust.log", dir);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || (f = fdopen(fd, "r")) == NULL) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while (fgets(line, sizeof line, f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "berth: ", 7) == 0)
			fprintf(stderr, "berth: `%s`: %s\n", CLI_SAFE(name),
				berth_text_clean(safe, sizeof safe, line + 7));
	}
	fclose(f);
}

/* The supervisor's last line to a stop request (supervise.c end_session):
 * its connection closing without it means the supervisor died. */
#define ENDED_LINE "{\"ended\":true"

/*
 * A connection that closed without ENDED_LINE: did the supervisor die, or
 * did the session end by itself before the supervisor read the stop (it
 * leaves its loop when the sandbox ends, and closes what it has not read,
 * and the connections it has not accepted)?  The supervisor unlinks its
 * ctl.sock only after the end is recorded (supervise.c end_session), so no
 * socket and the meta's "exited" mean it finished; one that died leaves
 * the socket (and a session started afresh under the name has a new one).
 */
static bool ended_by_itself(const char *name)
{
	char dir[PATH_MAX], path[PATH_MAX + 16];
	struct berth_error err = {0};
	struct stat st;
	json_t *meta;
	bool exited;

	if (berth_session_runtime_dir(name, false, dir, sizeof dir, &err) < 0)
		return false;
	snprintf(path, sizeof path, "%s/ctl.sock", dir);
	if (lstat(path, &st) == 0 || errno != ENOENT)
		return false;
	meta = berth_session_meta_read(name, &err);
	exited = meta != NULL && json_is_string(json_object_get(meta, "state")) &&
		 strcmp(json_string_value(json_object_get(meta, "state")), "exited") == 0;
	json_decref(meta);
	return exited;
}

int berth_cli_stop_many(char **names, int n, unsigned grace_ms)
{
	int *fds = calloc((size_t)n + 1, sizeof *fds), rc = 0, open_n = 0;
	/* per connection: the start of its current line, to find ENDED_LINE
	 * however the reads split it */
	char(*line)[sizeof ENDED_LINE] = calloc((size_t)n + 1, sizeof *line);
	size_t *line_len = calloc((size_t)n + 1, sizeof *line_len);
	bool *ended = calloc((size_t)n + 1, sizeof *ended);
	int64_t deadline;

	if (fds == NULL || line == NULL || line_len == NULL || ended == NULL) {
		free(fds);
		free(line);
		free(line_len);
		free(ended);
		return BERTH_EXIT_INTERNAL;
	}
	for (int i = 0; i < n; i++) {
		struct berth_error err = {0};
		fds[i] = berth_session_connect(names[i], &err);
		if (fds[i] < 0) {
			rc = fail(&err);
			continue;
		}
		if (dprintf(fds[i], "{\"op\":\"stop\",\"grace_ms\":%u}\n", grace_ms) < 0) {
			close(fds[i]);
			fds[i] = -1;
			continue;
		}
		open_n++;
	}
	/* Each connection closes when its session has ended. */
	deadline = berth_now_ms() + (int64_t)grace_ms + 10000;
	while (open_n > 0) {
		long long left = deadline - berth_now_ms();
		if (left <= 0)
			break;
		struct pollfd *p = calloc((size_t)n, sizeof *p);
		if (p == NULL)
			break;
		for (int i = 0; i < n; i++)
			p[i] = (struct pollfd){fds[i], POLLIN, 0};
		int r = poll(p, (nfds_t)n, (int)left);
		for (int i = 0; r > 0 && i < n; i++) {
			char buf[4096];
			if (fds[i] < 0 || p[i].revents == 0)
				continue;
			ssize_t got = read(fds[i], buf, sizeof buf);
			for (ssize_t k = 0; k < got; k++) {
				if (buf[k] == '\n') {
					line_len[i] = 0;
					continue;
				}
				if (line_len[i] < sizeof ENDED_LINE - 1)
					line[i][line_len[i]++] = buf[k];
				if (line_len[i] == sizeof ENDED_LINE - 1 &&
				    memcmp(line[i], ENDED_LINE, sizeof ENDED_LINE - 1) == 0)
					ended[i] = true;
			}
			if (got > 0)
				continue;
			close(fds[i]);
			fds[i] = -1;
			open_n--;
			if (!ended[i] && !ended_by_itself(names[i])) {
				/* Not "stopped": what the supervisor did not finish
				 * (the session's end, its record) is not done. */
				fprintf(stderr,
					"berth: the session supervisor of `%s` died while stopping it\n"
					"berth: hint: its sandbox dies with it and the next berth records "
					"the run's end; `berth ps` shows the session as stale or exited, "
					"`berth rm %s` clears it\n",
					CLI_SAFE(names[i]), CLI_SAFE(names[i]));
				rc = BERTH_EXIT_INTERNAL;
				continue;
			}
			fprintf(stderr, "berth: stopped `%s`\n", CLI_SAFE(names[i]));
			show_trust_log(names[i]);
		}
		free(p);
		if (r < 0 && errno != EINTR)
			break;
	}
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0) {
			fprintf(stderr, "berth: session `%s` did not end in time\n", CLI_SAFE(names[i]));
			close(fds[i]);
			rc = BERTH_EXIT_INTERNAL;
		}
	free(fds);
	free(line);
	free(line_len);
	free(ended);
	return rc;
}

int cmd_stop(int argc, char **argv)
{
	static const char stop_usage[] =
	    "usage: berth stop NAME... | --all [--grace DURATION]\n"
	    "  SIGHUP and SIGTERM to the agent, then the whole sandbox is killed after the grace time (5s)\n";
	bool all = false;
	uint64_t grace = 5000;
	char **names = NULL;
	int n = 0, rc = 0;
	struct berth_error err = {0};

	names = calloc((size_t)argc + 1, sizeof *names);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--all") == 0) {
			all = true;
		} else if (strcmp(argv[i], "--grace") == 0 && i + 1 == argc) {
			free(names);
			return usage_fail(stop_usage, "%s",
					  "--grace needs a value: give 0, or 1ms to 10m (a duration)");
		} else if (strcmp(argv[i], "--grace") == 0) {
			if (strcmp(argv[++i], "0") == 0)
				grace = 0;
			else if (berth_parse_duration_ms(argv[i], "--grace", &grace, &err) < 0 ||
				 grace > 600000) {
				free(names);
				return usage_fail(stop_usage,
						  "invalid --grace `%s`: give 0, or 1ms to 10m (a duration "
						  "such as 500ms, 5s or 2m)",
						  CLI_SAFE(argv[i]));
			}
		} else if (strcmp(argv[i], "--help") == 0) {
			free(names);
			fputs(stop_usage, stdout);
			return 0;
		} else if (argv[i][0] == '-') {
			free(names);
			return usage_fail(stop_usage, "unknown option `%s`", argv[i]);
		} else {
			names[n++] = strdup(argv[i]);
		}
	}
	if (all == (n > 0)) {
		for (int i = 0; i < n; i++)
			free(names[i]);
		free(names);
		return usage_fail(stop_usage, "%s",
				  all ? "give NAMEs or --all, not both"
				      : "which session? give NAME or --all");
	}
	if (all) {
		char **list = NULL;
		int c = berth_session_list(&list, &err);
		free(names);
		if (c < 0)
			return fail(&err);
		names = calloc((size_t)c + 1, sizeof *names);
		for (int i = 0; i < c; i++) {
			if (berth_session_alive(list[i]))
				names[n++] = list[i];
			else
				free(list[i]);
		}
		free(list);
	}
	rc = n == 0 ? 0 : berth_cli_stop_many(names, n, (unsigned)grace);
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

/* ------------------------------------------------------------ rm */

int cmd_rm(int argc, char **argv)
{
	static const char rm_usage[] =
	    "usage: berth rm NAME... [--purge]\n"
	    "  removes a stopped session's files; --purge also its own workspace\n";
	bool purge = false;
	int rc, n = 0;

	if ((rc = flag_only(argc, argv, "--purge", &purge, rm_usage)) >= 0)
		return rc;
	rc = 0;
	for (int i = 1; i < argc; i++) {
		struct berth_error err = {0};
		if (argv[i][0] == '-')
			continue;
		n++;
		if (berth_session_remove(argv[i], purge, &err) < 0)
			rc = fail(&err);
	}
	if (n == 0)
		return usage_fail(rm_usage, "%s", "which session? give its NAME");
	return rc;
}
