/* SPDX-License-Identifier: MIT */
/*
 * test_session.c - agent sessions without processes: names, profile and
 * fleet files, spawn arguments, the rendered screen and its filter.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "session/fleet.h"
#include "session/home_seed.h"
#include "session/profile.h"
#include "session/screen.h"
#include "session/session.h"
#include "session/spawn_args.h"
#include "session/yconf.h"
#include "util/termfilter.h"
#include "util/text.h"

static void test_names(void **state)
{
	struct berth_error err = {0};
	char name[BERTH_SESSION_NAME_MAX + 1];
	char long49[50];

	(void)state;
	assert_int_equal(berth_session_name_check("claude-api-1", &err), 0);
	assert_int_equal(berth_session_name_check("a", &err), 0);
	assert_int_equal(berth_session_name_check("", &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	assert_int_equal(berth_session_name_check("-x", &err), -1);
	assert_int_equal(berth_session_name_check("Caps", &err), -1);
	assert_non_null(strstr(err.msg, "`Caps`"));
	assert_int_equal(berth_session_name_check("a/b", &err), -1);
	assert_int_equal(berth_session_name_check("a_b", &err), -1);
	memset(long49, 'a', 49);
	long49[49] = '\0';
	assert_int_equal(berth_session_name_check(long49, &err), -1);
	long49[48] = '\0';
	assert_int_equal(berth_session_name_check(long49, &err), 0);

	berth_session_name_derive("claude", "https://github.com/o/My_Repo.git", name);
	assert_int_equal(strncmp(name, "claude-my-repo-", 15), 0);
	assert_int_equal(strlen(name), 21);
	assert_int_equal(berth_session_name_check(name, &err), 0);
	berth_session_name_derive("shell", NULL, name);
	assert_int_equal(strncmp(name, "shell-", 6), 0);
	assert_int_equal(berth_session_name_check(name, &err), 0);
	berth_session_name_derive("p",
				  "https://x/"
				  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/",
				  name);
	assert_true(strlen(name) <= BERTH_SESSION_NAME_MAX);
	assert_int_equal(berth_session_name_check(name, &err), 0);
	berth_session_name_derive("p", "https://x/---.git", name);
	assert_int_equal(berth_session_name_check(name, &err), 0);
}

static int parse_profile(const char *text, struct berth_profile *p, struct berth_error *err)
{
	return berth_profile_parse("t", "t.yml", text, strlen(text), p, err);
}

static void test_profile(void **state)
{
	struct berth_profile p;
	struct berth_error err = {0};

	(void)state;
	assert_int_equal(
	    parse_profile("command: [claude, --dangerously-skip-permissions]\n"
			  "network: api-only\nprompt: argv\npersist_home: true\n"
			  "git: {name: A B, email: a@b}\ncredentials: [ANTHROPIC_API_KEY]\n"
			  "env: [EDITOR=vi, LANG]\noptions: [--memory, 2G]\nallow_hosts: pypi.org\n",
			  &p, &err),
	    0);
	assert_int_equal(p.n_command, 2);
	assert_string_equal(p.command[1], "--dangerously-skip-permissions");
	assert_null(p.command[2]);
	assert_string_equal(p.network, "api-only");
	assert_string_equal(p.agent, "t");
	assert_true(p.persist_home);
	assert_string_equal(p.git_email, "a@b");
	assert_int_equal(p.n_allow_hosts, 1);
	assert_int_equal(p.n_env, 2);
	assert_int_equal(p.prompt, BERTH_PROMPT_ARGV);
	berth_profile_free(&p);

	assert_int_equal(parse_profile("command: sh\nnetwork: everywhere\n", &p, &err), -1);
	assert_string_equal(err.msg, "t.yml:2:10: network: expected `none`, `proxy`, `api-only` or `host`");
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	assert_int_equal(parse_profile("command: sh\ncolour: blue\n", &p, &err), -1);
	assert_non_null(strstr(err.msg, "t.yml:2:1: unknown key `colour`"));
	assert_int_equal(parse_profile("network: none\n", &p, &err), -1);
	assert_non_null(strstr(err.msg, "`command` is missing"));
	assert_int_equal(parse_profile("command: []\n", &p, &err), -1);
	assert_non_null(strstr(err.msg, "t.yml:1:10: command: expected at least"));
	assert_int_equal(parse_profile("command: sh\ncommand: bash\n", &p, &err), -1);
	assert_non_null(strstr(err.msg, "t.yml:2:1: duplicate key `command`"));
	assert_int_equal(parse_profile("command: sh\ncredentials: [BAD-NAME]\n", &p, &err), -1);
	assert_non_null(strstr(err.msg, "`BAD-NAME` is not a variable name"));
	assert_int_equal(parse_profile("command: sh\npersist_home: yes please\n", &p, &err), -1);
	assert_non_null(strstr(err.msg, "t.yml:2:15: persist_home: expected true or false"));
	assert_int_equal(parse_profile("command: sh\nprompt: shout\n", &p, &err), -1);
	assert_int_equal(parse_profile("a: &x [1]\nb: *x\n", &p, &err), -1);
	assert_non_null(strstr(err.msg, "aliases are not allowed"));
	assert_int_equal(parse_profile("- a\n- b\n", &p, &err), -1);
	assert_non_null(strstr(err.msg, "expected a mapping"));
	assert_int_equal(parse_profile("command: [sh\n", &p, &err), -1);
	assert_int_equal(strncmp(err.msg, "t.yml:", 6), 0);
	assert_int_equal(parse_profile("command: sh\n---\ncommand: sh\n", &p, &err), -1);
	assert_non_null(strstr(err.msg, "only one YAML document"));
	assert_int_equal(parse_profile("command: sh\ngit: {name: a, phone: 1}\n", &p, &err), -1);
	assert_non_null(strstr(err.msg, "unknown key `phone`"));
	/* a NUL byte from a `\0` escape is refused, not cut where C reads the string (which ran `ba` for
	 * `ba\0sh`, and /bin/sh for "/bin/sh\0junk") */
	assert_int_equal(parse_profile("command: [\"ba\\0sh\"]\n", &p, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	assert_string_equal(err.msg, "t.yml:1:11: a value contains a NUL byte (a `\\0` escape); remove it");
	assert_int_equal(parse_profile("command: [sh]\npath: \"/bin/sh\\0junk\"\n", &p, &err), -1);
	assert_string_equal(err.msg, "t.yml:2:7: a value contains a NUL byte (a `\\0` escape); remove it");
	assert_int_equal(parse_profile("command: [sh]\nhome: {\"a\\0b\": x}\n", &p, &err), -1);
	assert_string_equal(err.msg, "t.yml:2:8: a value contains a NUL byte (a `\\0` escape); remove it");

	/* the bounds: libyaml's scanner is quadratic in flow nesting, so a file as deep as
	 * BERTH_YCONF_MAX allows (131072 levels) would take minutes; it stops at the 65th level
	 * (the root mapping is the first) */
	static char deep[BERTH_YCONF_MAX];
	size_t lv = (sizeof(deep) - 16) / 2, n = 0;
	n += (size_t)snprintf(deep, sizeof(deep), "command: ");
	memset(deep + n, '[', lv);
	memset(deep + n + lv, ']', lv);
	deep[n + 2 * lv] = '\0';
	assert_int_equal(parse_profile(deep, &p, &err), -1);
	assert_string_equal(err.msg,
			    "t.yml:1:73: nesting deeper than 64 levels; a profile never needs that much");
	static char wide[BERTH_YCONF_MAX];
	n = (size_t)snprintf(wide, sizeof(wide), "command: [");
	for (int i = 0; i < 20001; i++)
		n += (size_t)snprintf(wide + n, sizeof(wide) - n, "a,");
	snprintf(wide + n, sizeof(wide) - n, "a]\n");
	assert_int_equal(parse_profile(wide, &p, &err), -1);
	assert_non_null(strstr(err.msg, "more than 20000 YAML nodes; not a plausible configuration file"));
}

static int parse_fleet(const char *text, struct berth_fleet *f, struct berth_error *err)
{
	return berth_fleet_parse("f.yml", "/base", text, strlen(text), f, err);
}

static void test_fleet(void **state)
{
	struct berth_fleet f;
	struct berth_error err = {0};

	(void)state;
	assert_int_equal(
	    parse_fleet("defaults:\n  profile: shell\n  options: [--memory, 1G]\n  prompt: hi\n"
			"agents:\n  - name: a1\n  - name: a2\n    profile: claude\n    workspace: ws\n"
			"    options: [--cpus, '2']\n    args: [--model, m]\n    seed_auth: true\n",
			&f, &err),
	    0);
	assert_int_equal(f.n, 2);
	assert_string_equal(f.agents[0].profile_name, "shell");
	assert_string_equal(f.agents[0].prompt, "hi");
	assert_int_equal(f.agents[0].n_run_args, 2);
	assert_string_equal(f.agents[1].profile_name, "claude");
	assert_string_equal(f.agents[1].workspace, "/base/ws");
	assert_int_equal(f.agents[1].n_run_args, 4);
	assert_string_equal(f.agents[1].run_args[3], "2");
	assert_int_equal(f.agents[1].n_extra, 2);
	assert_true(f.agents[1].seed_auth);
	assert_false(f.agents[0].seed_auth);
	assert_int_equal(f.lines[1], 7);
	berth_fleet_free(&f);

	assert_int_equal(parse_fleet("agents: []\n", &f, &err), -1);
	assert_non_null(strstr(err.msg, "f.yml:1:9: agents: expected a list of at least one agent"));
	berth_fleet_free(&f);
	assert_int_equal(parse_fleet("agents:\n  - profile: shell\n", &f, &err), -1);
	assert_non_null(strstr(err.msg, "every agent needs a `name`"));
	berth_fleet_free(&f);
	assert_int_equal(parse_fleet("agents:\n  - name: a\n", &f, &err), -1);
	assert_non_null(strstr(err.msg, "f.yml:2:5: profile: no profile here nor in `defaults`"));
	berth_fleet_free(&f);
	assert_int_equal(
	    parse_fleet("agents:\n  - {name: a, profile: s}\n  - {name: a, profile: s}\n", &f, &err), -1);
	assert_non_null(strstr(err.msg, "is the name of another agent (line 2)"));
	berth_fleet_free(&f);
	assert_int_equal(parse_fleet("agents:\n  - {name: Bad, profile: s}\n", &f, &err), -1);
	assert_non_null(strstr(err.msg, "invalid session name `Bad`"));
	berth_fleet_free(&f);
	assert_int_equal(parse_fleet("agents:\n  - {name: a, profile: s, repo: r, workspace: w}\n", &f, &err),
			 -1);
	assert_non_null(strstr(err.msg, "not both"));
	berth_fleet_free(&f);
	assert_int_equal(parse_fleet("defaults: {name: x}\nagents:\n  - {name: a, profile: s}\n", &f, &err),
			 -1);
	assert_non_null(strstr(err.msg, "f.yml:1:12: unknown key `name`"));
	berth_fleet_free(&f);
	assert_int_equal(parse_fleet("agents:\n  - {name: a, profile: s}\nextra: 1\n", &f, &err), -1);
	assert_non_null(strstr(err.msg, "f.yml:3:1: unknown key `extra`"));
	berth_fleet_free(&f);
	assert_int_equal(parse_fleet("agents:\n  - {name: a, profile: s, options: --x}\n", &f, &err), -1);
	assert_non_null(strstr(err.msg, "options: expected a list of strings"));
	berth_fleet_free(&f);
	assert_int_equal(parse_fleet("agents:\n  - {name: \"a\\0-hidden\", profile: s}\n", &f, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	assert_string_equal(err.msg, "f.yml:2:12: a value contains a NUL byte (a `\\0` escape); remove it");
	berth_fleet_free(&f);
}

static void test_spawn_args(void **state)
{
	struct berth_spawn_req r;
	struct berth_error err = {0};
	char *ok[] = {"spawn", "claude", "--name", "n1", "--memory", "2G", "--prompt", "do it",
		      "--yes", "--size", "30x100", "--", "--model",  "x",  NULL};
	char *twice[] = {"spawn", "claude", "--name", "a", "--name", "b", NULL};
	char *eq[] = {"spawn", "claude", "--memory=2G", NULL};
	char *unk[] = {"spawn", "claude", "--frobnicate", NULL};
	char *both[] = {"spawn", "claude", "--repo", "https://x/y", "--workspace", "/tmp", NULL};
	char *size[] = {"spawn", "claude", "--size", "3000x1", NULL};
	char *none[] = {"spawn", NULL};

	(void)state;
	assert_int_equal(berth_spawn_parse(14, ok, &r, &err), 0);
	assert_string_equal(r.profile_name, "claude");
	assert_string_equal(r.name, "n1");
	assert_string_equal(r.prompt, "do it");
	assert_int_equal(r.n_run_args, 3);
	assert_string_equal(r.run_args[0], "--memory");
	assert_string_equal(r.run_args[2], "--yes");
	assert_int_equal(r.n_extra, 2);
	assert_int_equal(r.rows, 30);
	assert_int_equal(r.cols, 100);
	berth_spawn_req_free(&r);
	assert_int_equal(berth_spawn_parse(6, twice, &r, &err), -1);
	assert_non_null(strstr(err.msg, "`--name` given twice"));
	berth_spawn_req_free(&r);
	assert_int_equal(berth_spawn_parse(3, eq, &r, &err), -1);
	assert_non_null(strstr(err.msg, "write `--memory VALUE`"));
	berth_spawn_req_free(&r);
	assert_int_equal(berth_spawn_parse(3, unk, &r, &err), -1);
	assert_non_null(strstr(err.msg, "`--frobnicate`"));
	berth_spawn_req_free(&r);
	assert_int_equal(berth_spawn_parse(6, both, &r, &err), -1);
	berth_spawn_req_free(&r);
	assert_int_equal(berth_spawn_parse(4, size, &r, &err), -1);
	assert_non_null(strstr(err.msg, "invalid --size `3000x1`"));
	berth_spawn_req_free(&r);
	{
		/* digits only, each in its range; once sscanf's %d took these */
		static const char *const bad[] = {"+30x100",         " 30x100",       "30x 100", "30x+100",
						  "99999999999x100", "30x4294967396", "-30x100", "30x100x",
						  "30X100",          "x100",          "30x",     "0x1e",
						  "1x100",           "30x9",          "501x100"};
		for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
			char *sz[] = {"spawn", "claude", "--size", (char *)bad[i], NULL};
			char want[64];
			memset(&err, 0, sizeof err);
			assert_int_equal(berth_spawn_parse(4, sz, &r, &err), -1);
			snprintf(want, sizeof want, "spawn: invalid --size `%s`", bad[i]);
			assert_string_equal(err.msg, want);
			assert_int_equal(err.status, BERTH_EXIT_USAGE);
			berth_spawn_req_free(&r);
		}
		char *edge[] = {"spawn", "claude", "--size", "500x1000", NULL};
		assert_int_equal(berth_spawn_parse(4, edge, &r, &err), 0);
		assert_int_equal(r.rows, 500);
		assert_int_equal(r.cols, 1000);
		berth_spawn_req_free(&r);
	}
	assert_int_equal(berth_spawn_parse(1, none, &r, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	berth_spawn_req_free(&r);
}

static char *line(struct berth_screen *s, int row)
{
	static char buf[4096];
	char *l = berth_screen_line(s, row);

	assert_non_null(l);
	snprintf(buf, sizeof buf, "%s", l);
	free(l);
	return buf;
}

static void feed(struct berth_screen *s, const char *text)
{
	berth_screen_feed(s, text, strlen(text));
}

static void test_screen(void **state)
{
	struct berth_error err = {0};
	struct berth_screen *s = berth_screen_new(10, 40, NULL, NULL, &err);
	int r, c;
	size_t n = 0;

	(void)state;
	assert_non_null(s);
	assert_null(berth_screen_new(0, 40, NULL, NULL, &err));
	feed(s, "hello\r\n\033[1;31mworld\033[0m   ");
	assert_string_equal(line(s, 0), "hello");
	assert_string_equal(line(s, 1), "world");
	berth_screen_cursor(s, &r, &c);
	assert_int_equal(r, 1);
	assert_int_equal(c, 8);
	/* Cursor addressing, erase, wide characters, box drawing */
	feed(s, "\033[5;3H\xe4\xb8\xad\xe6\x96\x87 \xe2\x94\x80x\033[5;9H\033[K");
	assert_string_equal(line(s, 4), "  \xe4\xb8\xad\xe6\x96\x87 \xe2\x94\x80");
	/* A sequence cut across two writes */
	feed(s, "\033[6");
	feed(s, ";1Hcut");
	assert_string_equal(line(s, 5), "cut");
	/* UTF-8 cut across two writes */
	feed(s, "\r\n\xe2\x94");
	feed(s, "\x80!");
	assert_string_equal(line(s, 6), "\xe2\x94\x80!");
	/* The filter: no escape codes reach the text; what libvterm 0.1.4
	 * cannot take is dropped or replaced */
	feed(s, "\033[8;1H\033[?::::::::::::::::::::::::::::::10e"
		"a\033]0;title\007b\xc2\x87"
		"c\xc0\xafz\033[K");
	assert_string_equal(line(s, 7), "ab\xef\xbf\xbd"
					"c\xef\xbf\xbd\xef\xbf\xbdz");
	/* Bidirectional controls (U+202E, U+2066) never reach the caller's terminal as such */
	feed(s, "\033[4;1Hx\xe2\x80\xaey\xe2\x81\xa6z\033[K");
	assert_string_equal(line(s, 3), "x\xef\xbf\xbdy\xef\xbf\xbdz");
	/* REP: the last character again, as text */
	feed(s, "\033[9;1Hq\033[3b");
	assert_string_equal(line(s, 8), "qqqq");
	/* An over-long OSC string is dropped whole */
	char big[6000];
	memset(big, 'A', sizeof big);
	memcpy(big, "\033]0;", 4);
	big[sizeof big - 1] = '\0';
	feed(s, "\033[10;1H");
	feed(s, big);
	feed(s, "\007tail");
	assert_string_equal(line(s, 9), "tail");
	char *d = berth_screen_redraw(s, &n);
	assert_non_null(d);
	assert_non_null(memmem(d, n, "hello", 5));
	free(d);
	/* A new size is a new, empty screen */
	berth_screen_resize(s, 20, 60);
	berth_screen_size(s, &r, &c);
	assert_int_equal(r, 20);
	assert_int_equal(c, 60);
	assert_string_equal(line(s, 0), "");
	assert_null(berth_screen_line(s, 20));
	/* REP before any character on a fresh screen: nothing (libvterm 0.1.4 hangs on it) */
	struct berth_screen *s2 = berth_screen_new(5, 20, NULL, NULL, &err);
	feed(s2, "\033[b\033[5b\xe4\xb8\xad");
	berth_screen_resize(s2, 6, 21);
	feed(s2, "\xe4\xb8\xad\033[3b\033[K");
	assert_string_equal(line(s2, 0), "\xe4\xb8\xad\xe4\xb8\xad\xe4\xb8\xad\xe4\xb8\xad");
	berth_screen_free(s2);
	berth_screen_free(s);
}

static void count_reply(const char *buf, size_t len, void *user)
{
	(void)buf;
	*(size_t *)user += len;
}

/* DECSET 2004 as the program sets it; asking writes nothing to the program. */
static void test_screen_bracketed_paste(void **state)
{
	struct berth_error err = {0};
	size_t replied = 0;
	struct berth_screen *s = berth_screen_new(5, 20, count_reply, &replied, &err);

	(void)state;
	assert_non_null(s);
	assert_false(berth_screen_bracketed_paste(s));
	feed(s, "\033[?2004h");
	assert_true(berth_screen_bracketed_paste(s));
	assert_true(berth_screen_bracketed_paste(s));
	/* Off again; then set with another mode in one sequence (libvterm 0.1.4
	 * alone would set only the first; the screen hands it each mode) */
	feed(s, "\033[?2004l");
	assert_false(berth_screen_bracketed_paste(s));
	feed(s, "\033[?1049;2004h");
	assert_true(berth_screen_bracketed_paste(s));
	feed(s, "\033[?25;2004l");
	assert_false(berth_screen_bracketed_paste(s));
	assert_false(berth_screen_cursor_visible(s));
	feed(s, "\033[?2004;25h");
	assert_true(berth_screen_bracketed_paste(s));
	assert_true(berth_screen_cursor_visible(s));
	/* A terminal reset (RIS) clears it */
	feed(s, "\033c");
	assert_false(berth_screen_bracketed_paste(s));
	assert_int_equal(replied, 0);
	/* The program's queries are still answered through the callback */
	feed(s, "\033[6n");
	assert_true(replied > 0);
	berth_screen_free(s);
}

/* @in through a fresh filter, whole and again one byte at a time (a
 * sequence may be cut anywhere between reads): both must give @want. */
static void filtered(const char *in, size_t len, const char *want, size_t want_len)
{
	struct berth_termfilter f;
	char *out = malloc(len + BERTH_TERMFILTER_SLACK), one[1 + BERTH_TERMFILTER_SLACK];
	char *acc = malloc(len + BERTH_TERMFILTER_SLACK);
	size_t n, m = 0;

	assert_non_null(out);
	assert_non_null(acc);
	berth_termfilter_init(&f);
	n = berth_termfilter_feed(&f, in, len, out);
	if (n != want_len || memcmp(out, want, n) != 0)
		fail_msg("filtered %zu bytes to %zu bytes, want %zu", len, n, want_len);
	berth_termfilter_init(&f);
	for (size_t i = 0; i < len; i++) {
		size_t k = berth_termfilter_feed(&f, in + i, 1, one);
		assert_true(m + k <= len + BERTH_TERMFILTER_SLACK);
		memcpy(acc + m, one, k);
		m += k;
	}
	if (m != want_len || memcmp(acc, want, m) != 0)
		fail_msg("byte by byte: %zu bytes, want %zu", m, want_len);
	free(out);
	free(acc);
}
#define FILTERED(in, want) filtered(in, sizeof in - 1, want, sizeof want - 1)

static void test_termfilter(void **state)
{
	(void)state;
	/* What draws passes unchanged: text, UTF-8, C0, CSI, ESC sequences,
	 * titles, hyperlinks, colour settings, reports of numbers (CSI 6 n, DA) */
	FILTERED("a\r\n\t\b\x07\033[1;31mred\033[0m \xe4\xb8\xad\xe2\x9c\xb3\xf0\x9f\x98\x80 "
		 "\033(B\033#8\0337\0338",
		 "a\r\n\t\b\x07\033[1;31mred\033[0m \xe4\xb8\xad\xe2\x9c\xb3\xf0\x9f\x98\x80 "
		 "\033(B\033#8\0337\0338");
	FILTERED("\033]0;\xe2\x9c\xb3 Claude\007\033]2;t\033\\\033]8;;https://x.test/\033\\l\033]8;;\033\\",
		 "\033]0;\xe2\x9c\xb3 Claude\007\033]2;t\033\\\033]8;;https://x.test/\033\\l\033]8;;\033\\");
	FILTERED("\033]11;rgb:00/00/"
		 "00\007\033]104\007\033]133;A\007\033[6n\033[>c\033[?2026$p\033[8;24;80t\033[0020h",
		 "\033]11;rgb:00/00/"
		 "00\007\033]104\007\033]133;A\007\033[6n\033[>c\033[?2026$p\033[8;24;80t\033[20h");
	/* Report requests whose answer is a string typed into the sandbox:
	 * title and icon label (CSI 21 t, 20 t, also with leading zeros or
	 * more parameters), colour queries (ended with CAN), every DCS
	 * (DECRQSS, XTGETTCAP) */
	FILTERED("a\033[21tb\033[20tc\033[0021td\033[21;0te\033[20;1hf\033[?21tg", "abcdef\033[?21tg");
	FILTERED("\033]11;?\007h\033]4;1;?\033\\i\033]10;?\007j\033P$qm\033\\k\033P+q544e\033\\l",
		 "\033]11;\x18h\033]4;1;\x18i\033]10;\x18j"
		 "k"
		 "l");
	/* DEL and C0 inside a CSI: ignored or executed by the terminal, which
	 * goes on with the sequence (CSI 2 DEL 1 t is CSI 21 t) */
	FILTERED("\033[2\x7f"
		 "1tm\033[2\n1tn\033[1\x7f;2Ho",
		 "m\nn\033[1;2Ho");
	/* a CSI cut by ESC, CAN or a UTF-8 byte: the terminal drops it, so
	 * does the filter (what follows is read on its own) */
	FILTERED("\033[2\033[21tm\033[21\x18n\033[1\xe4\xb8\xad", "m\x18n\xe4\xb8\xad");
	FILTERED("\033[0+\xc2\x9e\x7f@", "\033[0+\x18\x7f@"); /* a passed part: ended with CAN */
	FILTERED("\033[?1\033[0m", "\033[?1\x18\033[0m");
	/* The clipboard (OSC 52), file transfer (1337, 5113), notifications,
	 * fonts: dropped whole, BEL or ST ended, the text around kept */
	FILTERED("a\033]52;c;ZWNobyBwd25lZA==\007b\033]52;p;eA==\033\\c", "abc");
	FILTERED("\033]1337;File=name=eA==;inline=0:eA==\007\033]5113;ac=send\033\\\033]9;hi\007\033]777;"
		 "notify;a;b\007"
		 "\033]99;;x\033\\\033]7;file:///home/u/"
		 ".ssh\007\033]50;?\007\033];x\007\033]x\007\033]1234567;x\007d",
		 "d");
	/* DCS other than the two queries (tmux passthrough, sixel, DECUDK),
	 * SOS, PM and APC (kitty graphics that open a host file) */
	FILTERED("\033Ptmux;\033\033]52;c;eA==\007\033\\e", "\033\\e"); /* a lone ST is harmless */
	FILTERED(
	    "\033P0;1|17/"
	    "61\033\\\033Pq#0;2;0;0;0~\033\\\033_Gf=100,t=f;L2V0Yy9wYXNzd2Q=\033\\\033X1\033\\\033^2\033\\f",
	    "f");
	/* C1 controls, raw and as UTF-8: U+009D is OSC, U+009B CSI to xterm in
	 * UTF-8 mode; raw 0x9d and 0x90 outside a UTF-8 sequence likewise */
	FILTERED("g\xc2\x9d"
		 "52;c;eA==\x07h\xc2\x9b"
		 "31mi\x9d"
		 "52;c;eA==\x07\x90q\x9cj",
		 "g52;c;eA==\x07h31mi52;c;eA==\x07qj");
	/* Not UTF-8: overlong forms (an overlong U+009B too), surrogates,
	 * stray continuation bytes, a cut sequence: dropped */
	FILTERED("k\xc0\xaf\xe0\x82\x9b\xed\xa0\x80\x80\xbf\xe2\x94l\xf5\x80\x80\x80m", "klm");
	/* A C0 control inside an escape sequence is executed there and the
	 * sequence goes on: ESC LF ] 52 is still an OSC 52 */
	FILTERED("n\033\n]52;c;eA==\007o", "n\no");
	FILTERED("\033\033]52;c;eA==\007\033\x18]52\007p", "]52\007p");
	/* A kept string broken off by another sequence, or too long: CAN, so
	 * the terminal drops it; controls inside it dropped */
	FILTERED("\033]0;ab\033]52;c;eA==\007q", "\033]0;ab\x18q");
	FILTERED("\033]0;a\nb\x9c\xc2\x9c"
		 "c\033\\",
		 "\033]0;abc\033\\");
	FILTERED("\033]0;a\x18"
		 "b",
		 "\033]0;a\x18"
		 "b");
	char big[BERTH_TERMFILTER_STRING_MAX + 100], want[BERTH_TERMFILTER_STRING_MAX + 20];
	memset(big, 'x', sizeof big);
	memcpy(big, "\033]0;", 4);
	memcpy(big + sizeof big - 3, "\007r", 2);
	memcpy(want, "\033]0;", 4);
	memset(want + 4, 'x', BERTH_TERMFILTER_STRING_MAX + 1);
	memcpy(want + 4 + BERTH_TERMFILTER_STRING_MAX + 1, "\x18r", 2);
	filtered(big, sizeof big - 1, want, 4 + BERTH_TERMFILTER_STRING_MAX + 1 + 2);
}

/* Text berth prints for people: berth_text_clean (messages, tables) and
 * berth_json_text_safe (JSON: C1, DEL and bidirectional characters as
 * \u escapes, the JSON unchanged in meaning, other characters kept). */
static void test_text_safe(void **state)
{
	char buf[256];
	char *j;

	(void)state;
	assert_string_equal(berth_text_clean(buf, sizeof buf,
					     "a\033]52;c;eA==\007b\xc2\x9d"
					     "c\xe2\x80\xae"
					     "d\xff\t\xe4\xb8\xad"),
			    "a\\x1b]52;c;eA==\\x07b\\x9dc\\u{202e}d\\xff\t\xe4\xb8\xad");
	j = berth_json_text_safe("{\n  \"s\": \"a\xc2\x9d"
				 "52\xc2\x9c\xe2\x80\xae\x7f\xe4\xb8\xad\xe2\x81\xa6\"\n}");
	assert_non_null(j);
	assert_string_equal(j, "{\n  \"s\": \"a\\u009d52\\u009c\\u202e\\u007f\xe4\xb8\xad\\u2066\"\n}");
	free(j);
	j = berth_json_text_safe("");
	assert_non_null(j);
	assert_string_equal(j, "");
	free(j);
}

static void collect(void *arg, const char *line)
{
	char *buf = arg;
	strncat(buf, line, 2047 - strlen(buf));
	strncat(buf, "\n", 2047 - strlen(buf));
}

static char *slurp(const char *path)
{
	static char buf[8192];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Profiles' home:, instructions: and path:, the preamble, and the seed of a
 * persistent home (docs/sessions.md, "Seeded home"). */
static void test_home_seed(void **state)
{
	struct berth_error err = {0};
	struct berth_profile p;
	struct berth_policy pol;
	struct berth_home_seed seed;
	char dir[] = "/tmp/test-home-seed.XXXXXX", path[256], notes[2048] = "";
	static const char good[] = "command: [x]\ninstructions: .a/AGENTS.md\npath: ~/.local/bin/x\nhome:\n"
				   "  .a.json: '{\"o\": {\"k\": true, \"n\": 2}, \"b\": true}'\n"
				   "  .a/AGENTS.md: \"mine\\n\"\n"
				   "  .a/plain.toml: \"x = 1\\n\"\n";
	char *pre;
	struct stat st1, st2;

	(void)state;
	assert_int_equal(berth_profile_parse("t", "t.yml", good, strlen(good), &p, &err), 0);
	assert_int_equal(p.n_home, 3);
	assert_string_equal(p.instructions, ".a/AGENTS.md");
	assert_string_equal(p.agent_path, "~/.local/bin/x");
	/* bad values, each named */
	static const struct {
		const char *yaml, *msg;
	} bad[] = {
	    {"command: [x]\nhome: {/etc/passwd: x}\n",
	     "`/etc/passwd` is not a home file: a path relative to $HOME"},
	    {"command: [x]\nhome: {a//b: x}\n", "no empty, `.` or `..` component"},
	    {"command: [x]\nhome: {a/../../b: x}\n", "no empty, `.` or `..` component"},
	    {"command: [x]\nhome: {a.json: '[1]'}\n", "a .json file must hold one JSON object"},
	    {"command: [x]\nhome: [a]\n", "expected a mapping of PATH"},
	    {"command: [x]\ninstructions: ../x.md\n", "`../x.md` is not a home file"},
	    {"command: [x]\npath: bin/claude\n", "`~/PATH` (your home) or `/PATH`"},
	    {"command: [x]\npath: '/a:b'\n", "without `:`"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct berth_profile q;
		assert_int_equal(
		    berth_profile_parse("t", "t.yml", bad[i].yaml, strlen(bad[i].yaml), &q, &err), -1);
		assert_int_equal(err.status, BERTH_EXIT_USAGE);
		if (strstr(err.msg, bad[i].msg) == NULL)
			fail_msg("%s: got `%s`", bad[i].yaml, err.msg);
	}

	/* the preamble names the policy's hosts, or says there is no network */
	berth_policy_init(&pol);
	pol.network = BERTH_NET_PROXY;
	char *hosts[] = {"api.anthropic.com", "*.example.org:8443", NULL};
	pol.allow_hosts = hosts;
	pol.n_allow_hosts = 2;
	pre = berth_home_seed_preamble(&pol, false);
	assert_non_null(strstr(pre, "  - api.anthropic.com\n  - *.example.org:8443\n"));
	assert_non_null(strstr(pre, "/workspace is your writable folder"));
	assert_non_null(strstr(pre, "a fresh one, gone when the session ends"));
	assert_int_equal(strncmp(pre, BERTH_PREAMBLE_BEGIN "\n", strlen(BERTH_PREAMBLE_BEGIN) + 1), 0);
	free(pre);

	/* one file per path: the instructions file is the preamble, then the profile's text */
	assert_int_equal(berth_home_seed_build(&p, &pol, true, &seed, &err), 0);
	assert_int_equal(seed.n, 3);
	assert_int_equal(seed.files[0].kind, BERTH_SEED_JSON);
	assert_int_equal(seed.files[1].kind, BERTH_SEED_BLOCK);
	assert_int_equal(seed.files[2].kind, BERTH_SEED_CREATE);
	assert_non_null(strstr(seed.view[1].data, BERTH_PREAMBLE_END "\n\nmine\n"));
	assert_int_equal(seed.view[1].len, strlen(seed.view[1].data));

	/* a persistent home: missing files made, JSON keys added, the agent's own kept */
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/.a.json", dir);
	put(path, "{\"o\": {\"k\": false}, \"token\": \"kept\"}");
	assert_int_equal(berth_home_seed_persist(&seed, dir, true, collect, notes, &err), 0);
	assert_string_equal(slurp(path), "{\"o\": {\"k\": false}, \"token\": \"kept\"}"); /* dry: nothing */
	snprintf(path, sizeof path, "%s/.a", dir);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(berth_home_seed_persist(&seed, dir, false, collect, notes, &err), 0);
	assert_string_equal(notes, "");
	snprintf(path, sizeof path, "%s/.a.json", dir);
	assert_string_equal(slurp(path),
			    "{\n  \"o\": {\n    \"k\": false,\n    \"n\": 2\n  },\n  \"token\": \"kept\",\n"
			    "  \"b\": true\n}\n");
	snprintf(path, sizeof path, "%s/.a/plain.toml", dir);
	assert_string_equal(slurp(path), "x = 1\n");
	put(path, "x = 2\n");
	snprintf(path, sizeof path, "%s/.a/AGENTS.md", dir);
	assert_string_equal(slurp(path), seed.view[1].data);
	put(path, "notes first\n");
	assert_int_equal(berth_home_seed_persist(&seed, dir, false, collect, notes, &err), 0);
	pre = strdup(slurp(path));
	assert_non_null(strstr(pre, BERTH_PREAMBLE_END "\n\nnotes first\n"));
	assert_int_equal(strncmp(pre, BERTH_PREAMBLE_BEGIN, strlen(BERTH_PREAMBLE_BEGIN)), 0);
	stat(path, &st1);
	assert_int_equal(berth_home_seed_persist(&seed, dir, false, collect, notes, &err), 0);
	stat(path, &st2);
	assert_int_equal(st1.st_ino, st2.st_ino); /* the same block: not rewritten */
	assert_string_equal(slurp(path), pre);
	free(pre);
	snprintf(path, sizeof path, "%s/.a/plain.toml", dir);
	assert_string_equal(slurp(path), "x = 2\n");

	/* a symbolic link is not followed: the file outside stays as it was */
	char outside[300], link[300];
	snprintf(outside, sizeof outside, "%s/outside", dir);
	put(outside, "{\"outside\": true}");
	snprintf(link, sizeof link, "%s/.a.json", dir);
	unlink(link);
	assert_int_equal(symlink(outside, link), 0);
	assert_int_equal(berth_home_seed_persist(&seed, dir, false, collect, notes, &err), 0);
	assert_string_equal(slurp(outside), "{\"outside\": true}");
	assert_non_null(strstr(notes, "`~/.a.json` is a symbolic link: not followed, not seeded"));
	assert_int_equal(lstat(link, &st1), 0);
	assert_true(S_ISLNK(st1.st_mode));
	/* nor a directory link on the way */
	notes[0] = '\0';
	snprintf(path, sizeof path, "rm -rf '%s/.a' && mkdir '%s/od' && ln -s od '%s/.a'", dir, dir, dir);
	assert_int_equal(system(path), 0);
	assert_int_equal(berth_home_seed_persist(&seed, dir, false, collect, notes, &err), 0);
	assert_non_null(strstr(notes, "`~/.a` is a symbolic link or not a directory: not followed"));
	snprintf(path, sizeof path, "%s/od/AGENTS.md", dir);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof path, "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
	berth_home_seed_free(&seed);
	berth_profile_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_profile),
	    cmocka_unit_test(test_home_seed),
	    cmocka_unit_test(test_fleet),
	    cmocka_unit_test(test_spawn_args),
	    cmocka_unit_test(test_screen),
	    cmocka_unit_test(test_screen_bracketed_paste),
	    cmocka_unit_test(test_termfilter),
	    cmocka_unit_test(test_text_safe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
