/* SPDX-License-Identifier: MIT */
/*
 * test_agent_state.c - the agent-state classifier (src/session/agent_state.c)
 * against the screen fixtures under tests/fixtures/screens/<agent>/ and the
 * shipped pattern files under data/agents/, plus its pattern-file parser on
 * malformed files and its file lookup.
 *
 * BERTH_SCREEN_FIXTURES and BERTH_AGENT_DATA point at the two directories
 * (meson sets them; tests/run passes its staged copies).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "session/agent_state.h"
#include "util/cleanup.h"

#define SCREEN_ROWS 24 /* fixtures shorter than a terminal are padded with blank rows */
#define MAX_ROWS 200

static const char *env_or_fail(const char *name)
{
	const char *v = getenv(name);

	if (v == NULL || v[0] == '\0')
		fail_msg("%s is not set", name);
	return v;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0;

	if (f == NULL)
		fail_msg("open %s: %s", path, strerror(errno));
	*len = 0;
	for (;;) {
		if (*len + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		size_t n = fread(buf + *len, 1, cap - *len - 1, f);
		if (n == 0)
			break;
		*len += n;
	}
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

static struct berth_agent_patterns *load_shipped(const char *agent)
{
	char path[4096];
	size_t len;
	struct berth_error err = {0};
	struct berth_agent_patterns *p;
	cleanup_free char *text = NULL;

	snprintf(path, sizeof path, "%s/%s.yml", env_or_fail("BERTH_AGENT_DATA"), agent);
	text = read_all(path, &len);
	p = berth_agent_patterns_parse(text, len, path, &err);
	if (p == NULL)
		fail_msg("%s: %s", path, err.msg);
	return p;
}

struct fixture {
	char *text; /* owns the rows */
	const char *rows[MAX_ROWS];
	struct berth_screen_view v;
	enum berth_agent_state expect;
	const char *why;
	bool trap;
};

/* Parse a fixture file (format: tests/fixtures/screens/README.md). */
static void fixture_parse(const char *path, struct fixture *fx)
{
	size_t len;
	char *s, *nl;
	bool have_expect = false, cursor_given = false, body = false;
	int n = 0;
	struct berth_error err = {0};

	memset(fx, 0, sizeof *fx);
	fx->text = read_all(path, &len);
	fx->v.alive = true;
	fx->v.exit_status = -1;
	fx->v.idle_ms = 10000;
	fx->trap = strstr(path, "/trap-") != NULL;
	/* A file's last newline does not start a row. */
	if (len > 0 && fx->text[len - 1] == '\n')
		fx->text[len - 1] = '\0';
	for (s = fx->text;; s = nl + 1) {
		nl = strchr(s, '\n');
		if (nl == NULL)
			nl = s + strlen(s);
		bool last = *nl == '\0';
		*nl = '\0';
		if (body) {
			if (n >= MAX_ROWS)
				fail_msg("%s: more than %d rows", path, MAX_ROWS);
			fx->rows[n++] = s;
		} else if (strcmp(s, "---") == 0) {
			body = true;
		} else if (strncmp(s, "expect: ", 8) == 0) {
			if (berth_agent_state_parse(s + 8, &fx->expect, &err) < 0)
				fail_msg("%s: %s", path, err.msg);
			have_expect = true;
		} else if (strncmp(s, "why: ", 5) == 0) {
			fx->why = s + 5;
		} else if (strcmp(s, "cursor: hidden") == 0) {
			cursor_given = true;
			fx->v.cursor_row = fx->v.cursor_col = -1;
		} else if (strncmp(s, "cursor: ", 8) == 0) {
			int r, c;
			if (sscanf(s + 8, "%d,%d", &r, &c) != 2 || r < 1 || c < 1)
				fail_msg("%s: bad cursor line `%s`", path, s);
			fx->v.cursor_row = r - 1;
			fx->v.cursor_col = c - 1;
			cursor_given = true;
		} else if (strncmp(s, "idle-ms: ", 9) == 0) {
			fx->v.idle_ms = atoll(s + 9);
		} else if (strcmp(s, "alive: yes") == 0) {
			fx->v.alive = true;
		} else if (strncmp(s, "alive: no ", 10) == 0) {
			fx->v.alive = false;
			fx->v.exit_status = atoi(s + 10);
		} else if (strncmp(s, "note: ", 6) == 0) {
			/* for the reader */
		} else {
			fail_msg("%s: unknown header line `%s`", path, s);
		}
		if (last)
			break;
	}
	if (!have_expect || !body)
		fail_msg("%s: needs an `expect:` line and a `---` line", path);
	if (!cursor_given) {
		int r = n - 1;
		while (r > 0 && fx->rows[r][0] == '\0')
			r--;
		fx->v.cursor_row = r;
		fx->v.cursor_col = r >= 0 ? (int)strlen(fx->rows[r]) : 0;
	}
	while (n < SCREEN_ROWS)
		fx->rows[n++] = "";
	fx->v.lines = fx->rows;
	fx->v.n_lines = n;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Classify every fixture of @agent; every state must be covered, and a trap. */
static void run_agent(const char *agent, bool expect_done, bool expect_error)
{
	char dir[4096];
	struct berth_agent_patterns *p = load_shipped(agent);
	DIR *d;
	struct dirent *e;
	char *names[256];
	size_t nn = 0;
	int failures = 0, seen[BERTH_AGENT_ERROR + 1] = {0}, traps = 0;

	snprintf(dir, sizeof dir, "%s/%s", env_or_fail("BERTH_SCREEN_FIXTURES"), agent);
	d = opendir(dir);
	if (d == NULL)
		fail_msg("open %s: %s", dir, strerror(errno));
	while ((e = readdir(d)) != NULL && nn < 256) {
		size_t l = strlen(e->d_name);
		if (l > 4 && strcmp(e->d_name + l - 4, ".txt") == 0)
			names[nn++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, nn, sizeof *names, cmp_str);
	for (size_t i = 0; i < nn; i++) {
		char path[8192];
		struct fixture fx;
		const char *why = NULL;
		enum berth_agent_state got;

		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		fixture_parse(path, &fx);
		got = berth_agent_classify(p, &fx.v, &why);
		assert_non_null(why);
		bool ok = got == fx.expect && (fx.why == NULL || strstr(why, fx.why) != NULL);
		/* A trap must never come out blocked, whatever its header says. */
		if (fx.trap && got == BERTH_AGENT_BLOCKED)
			ok = false;
		printf("%s %s/%s: %s (%s)\n", ok ? "ok" : "FAIL", agent, names[i],
		       berth_agent_state_name(got), why);
		if (!ok) {
			printf("     expected %s%s%s\n", berth_agent_state_name(fx.expect),
			       fx.why ? ", reason with " : "", fx.why ? fx.why : "");
			failures++;
		}
		seen[fx.expect]++;
		traps += fx.trap;
		free(fx.text);
		free(names[i]);
	}
	berth_agent_patterns_free(p);
	assert_int_equal(failures, 0);
	assert_true(seen[BERTH_AGENT_WORKING] > 0);
	assert_true(seen[BERTH_AGENT_BLOCKED] > 0);
	assert_true(seen[BERTH_AGENT_IDLE] > 0);
	assert_true(seen[BERTH_AGENT_EXITED] > 0);
	if (expect_done)
		assert_true(seen[BERTH_AGENT_DONE] > 0);
	if (expect_error)
		assert_true(seen[BERTH_AGENT_ERROR] > 0);
	assert_true(traps > 0);
}

static void test_fixtures_claude(void **state)
{
	(void)state;
	run_agent("claude", true, true);
}

static void test_fixtures_codex(void **state)
{
	(void)state;
	run_agent("codex", true, true);
}

static void test_fixtures_shell(void **state)
{
	(void)state;
	run_agent("shell", false, false);
}

static void test_state_names(void **state)
{
	struct berth_error err = {0};
	enum berth_agent_state s;

	(void)state;
	for (int i = BERTH_AGENT_WORKING; i <= BERTH_AGENT_ERROR; i++) {
		assert_int_equal(
		    berth_agent_state_parse(berth_agent_state_name((enum berth_agent_state)i), &s, &err), 0);
		assert_int_equal(s, i);
	}
	assert_string_equal(berth_agent_state_name((enum berth_agent_state)99), "unknown");
	assert_int_equal(berth_agent_state_parse("Blocked", &s, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	assert_non_null(strstr(err.msg, "`Blocked`"));
	assert_non_null(strstr(err.hint, "working, blocked, idle, done, error, exited"));
	assert_string_equal(berth_agent_state_name(BERTH_AGENT_ERROR), "error");
	assert_int_equal(berth_agent_state_parse(NULL, &s, &err), -1);
}

/* Malformed pattern files: each is refused with file:line:col and the bad value. */
static void test_bad_pattern_files(void **state)
{
	static const struct {
		const char *yaml, *msg;
	} cases[] = {
	    {"agent: x\nbogus: 1\n", "t.yml:2:1: unknown key `bogus`"},
	    {"region-rows: 0\n", "t.yml:1:14: `region-rows` must be between 1 and 500, got `0`"},
	    {"region-rows: twelve\n", "t.yml:1:14: `region-rows` must be a decimal integer, got `twelve`"},
	    {"quiet-ms: -5\n", "t.yml:1:11: `quiet-ms` must be a decimal integer"},
	    {"otherwise: done\n", "t.yml:1:12: `otherwise` must be `idle` or `working`, got `done`"},
	    {"working: esc\n", "t.yml:1:10: `working` must be a list of regular expressions, got a scalar"},
	    {"working:\n  - '(unclosed'\n", "t.yml:2:5: `working`: bad regular expression `(unclosed`"},
	    {"input:\n  - ''\n", "t.yml:2:5: `input` is an empty pattern"},
	    {"done:\n  - [a]\n", "t.yml:2:5: `done` must be a string, got a list"},
	    {"error: 'API Error'\n",
	     "t.yml:1:8: `error` must be a list of regular expressions, got a scalar"},
	    {"error:\n  - '[x'\n", "t.yml:2:5: `error`: bad regular expression `[x`"},
	    {"blocked:\n  - name: x\n", "t.yml:2:5: a `blocked` rule needs `name` and `question`"},
	    {"blocked:\n  - name: x\n    question: 'Q\\?'\n",
	     "t.yml:2:5: the `blocked` rule `x` needs options (min-options >= 1) or `at-cursor: true`"},
	    {"blocked:\n  - name: x\n    question: q\n    min-options: 2\n",
	     "t.yml:4:18: `min-options` is 2 but the rule has no `options` pattern"},
	    {"blocked:\n  - name: x\n    question: q\n    options: o\n    colour: red\n",
	     "t.yml:5:5: unknown key `colour` in a `blocked` rule"},
	    {"blocked:\n  - name: x\n    question: q\n    at-cursor: maybe\n",
	     "t.yml:4:16: `at-cursor` must be true or false, got `maybe`"},
	    {"blocked: {}\n", "t.yml:1:10: `blocked` must be a list of rules, got a mapping"},
	    {"blocked:\n  - name: x\n    question: q\n    at-cursor: true\n    at-cursor: false\n",
	     "t.yml:5:5: `at-cursor` is given twice"},
	    {"- a\n- b\n", "t.yml:1:1: a pattern file is a mapping"},
	    {"working: &a ['x']\n", "t.yml:1:10: anchors (`&a`) are not allowed"},
	    {"working: !!seq ['x']\n", "tags (`tag:yaml.org,2002:seq`) are not allowed"},
	    {"a: 1\n---\nb: 2\n", "t.yml:2:1: only one YAML document is allowed"},
	    {"working: [\n", "t.yml:2:1: invalid YAML"},
	    {"agent: [[[[[[[[[[[[[[[[[[[[x]]]]]]]]]]]]]]]]]]]]\n", "nested deeper than 16 levels"},
	    {"working:\n  - x\nworking:\n  - y\n", "t.yml:3:1: `working` is given twice"},
	    {"working:\n  - 'Pr++++++++++++++++++++++++oceed'\n",
	     "t.yml:2:5: `working`: the regular expression"},
	    {"working:\n  - '((a{50}){50}){50}'\n", "repeats too much"},
	    {"working:\n  - '((((((((((((((((((x))))))))))))))))))'\n", "repeats too much"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct berth_error err = {0};
		struct berth_agent_patterns *p =
		    berth_agent_patterns_parse(cases[i].yaml, strlen(cases[i].yaml), "t.yml", &err);
		if (p != NULL || strstr(err.msg, cases[i].msg) == NULL || err.status != BERTH_EXIT_USAGE)
			fail_msg("case %zu: got %s `%s`, want `%s`", i, p ? "success" : "error", err.msg,
				 cases[i].msg);
	}
}

/* The blocked rule honours the region and the input box, built row by row. */
static void test_region(void **state)
{
	const char *yaml = "region-rows: 5\nblocked:\n  - name: q\n    question: '^Proceed\\?'\n"
			   "    options: '^ *[0-9]+\\. '\ninput:\n  - '^> '\n";
	struct berth_error err = {0};
	struct berth_agent_patterns *p = berth_agent_patterns_parse(yaml, strlen(yaml), "t.yml", &err);
	const char *rows[10] = {"", "", "", "", "", "", "", "", "", ""};
	struct berth_screen_view v = {
	    .lines = rows, .n_lines = 10, .cursor_row = -1, .alive = true, .idle_ms = 5000};
	const char *why;

	(void)state;
	assert_non_null(p);
	/* Question and two options in the bottom 5 rows: blocked. */
	rows[5] = "Proceed?";
	rows[6] = " 1. yes";
	rows[7] = " 2. no";
	assert_int_equal(berth_agent_classify(p, &v, &why), BERTH_AGENT_BLOCKED);
	assert_string_equal(why, "blocked: q (row 6)");
	/* One option only: not blocked. */
	rows[7] = "";
	assert_int_equal(berth_agent_classify(p, &v, NULL), BERTH_AGENT_IDLE);
	/* The question 6 rows above the bottom: outside the region. */
	rows[7] = " 2. no";
	rows[9] = "x";
	rows[5] = "";
	rows[4] = "Proceed?";
	rows[5] = " 1. yes";
	rows[6] = " 2. no";
	rows[7] = "";
	assert_int_not_equal(berth_agent_classify(p, &v, NULL), BERTH_AGENT_BLOCKED);
	rows[9] = "";
	/* An input box below the options: history, not a prompt. */
	rows[8] = "> ";
	assert_int_equal(berth_agent_classify(p, &v, &why), BERTH_AGENT_IDLE);
	assert_non_null(strstr(why, "prompt at row 9"));
	/* The cursor below the last text extends the region downwards. */
	rows[8] = "";
	v.cursor_row = 9;
	assert_int_not_equal(berth_agent_classify(p, &v, NULL), BERTH_AGENT_BLOCKED);
	v.cursor_row = 7;
	assert_int_equal(berth_agent_classify(p, &v, NULL), BERTH_AGENT_BLOCKED);
	/* NULL rows read as blank; an all-blank screen is `otherwise`. */
	const char *nulls[3] = {NULL, NULL, NULL};
	struct berth_screen_view blank = {
	    .lines = nulls, .n_lines = 3, .cursor_row = -1, .alive = true, .idle_ms = -1};
	assert_int_equal(berth_agent_classify(p, &blank, &why), BERTH_AGENT_IDLE);
	assert_string_equal(why, "idle: blank screen");
	berth_agent_patterns_free(p);

	/* A question pattern that matches blank rows never makes a blank row a prompt. */
	const char *any =
	    "blocked:\n  - name: any\n    question: '.*'\n    at-cursor: true\n    min-options: 0\n";
	p = berth_agent_patterns_parse(any, strlen(any), "t.yml", &err);
	assert_non_null(p);
	const char *rows2[3] = {"$ sleep 9", "", ""};
	struct berth_screen_view v2 = {
	    .lines = rows2, .n_lines = 3, .cursor_row = 1, .alive = true, .idle_ms = 5000};
	assert_int_not_equal(berth_agent_classify(p, &v2, NULL), BERTH_AGENT_BLOCKED);
	v2.cursor_row = 0;
	assert_int_equal(berth_agent_classify(p, &v2, NULL), BERTH_AGENT_BLOCKED);
	berth_agent_patterns_free(p);
}

/*
 * The error state, row by row: an error marker above the input box counts
 * while nothing of a later turn is below it.  A failed turn's own summary
 * below the error keeps it an error; a new prompt (an input-pattern row)
 * answered below it makes the screen `done`; a busy marker wins over both.
 */
static void test_error_turn(void **state)
{
	const char *yaml = "region-rows: 4\nworking:\n  - 'esc to interrupt'\ninput:\n  - '^> '\n"
			   "done:\n  - '^\\* '\n  - '^Took [0-9]'\nerror:\n  - '^\\* API Error'\n";
	struct berth_error err = {0};
	struct berth_agent_patterns *p = berth_agent_patterns_parse(yaml, strlen(yaml), "t.yml", &err);
	const char *rows[10] = {"> first", "* answer", "Took 2s", "> second", "* API Error: 500",
				"",        "",         "",        "> ",       ""};
	struct berth_screen_view v = {
	    .lines = rows, .n_lines = 10, .cursor_row = 8, .alive = true, .idle_ms = 5000};
	const char *why;

	(void)state;
	assert_non_null(p);
	/* The error row is also a `done` row: it is the error that counts. */
	assert_int_equal(berth_agent_classify(p, &v, &why), BERTH_AGENT_ERROR);
	assert_string_equal(why, "error: the turn failed (row 5), prompt at row 9");
	/* The failed turn's summary below it: still an error. */
	rows[5] = "Took 0s";
	assert_int_equal(berth_agent_classify(p, &v, &why), BERTH_AGENT_ERROR);
	/* A new prompt, answered: done. */
	rows[6] = "> third";
	rows[7] = "* fine";
	assert_int_equal(berth_agent_classify(p, &v, &why), BERTH_AGENT_DONE);
	assert_non_null(strstr(why, "turn finished (row 8)"));
	/* A new prompt, still running: working. */
	rows[7] = "esc to interrupt";
	assert_int_equal(berth_agent_classify(p, &v, &why), BERTH_AGENT_WORKING);
	/* Recent output is working, even below an error. */
	rows[6] = rows[7] = "";
	v.idle_ms = 10;
	assert_int_equal(berth_agent_classify(p, &v, &why), BERTH_AGENT_WORKING);
	v.idle_ms = 5000;
	assert_int_equal(berth_agent_classify(p, &v, &why), BERTH_AGENT_ERROR);
	/* An error marker below the input box is not this turn's: the input
	 * box is the lowest input row, markers count above it only. */
	rows[4] = "* earlier";
	rows[9] = "* API Error: later";
	v.cursor_row = -1;
	assert_int_equal(berth_agent_classify(p, &v, &why), BERTH_AGENT_DONE);
	/* Without an error list nothing is an error. */
	berth_agent_patterns_free(p);
	yaml = "input:\n  - '^> '\ndone:\n  - '^\\* '\n";
	p = berth_agent_patterns_parse(yaml, strlen(yaml), "t.yml", &err);
	assert_non_null(p);
	rows[4] = "* API Error: 500";
	rows[9] = "";
	assert_int_equal(berth_agent_classify(p, &v, &why), BERTH_AGENT_DONE);
	berth_agent_patterns_free(p);
}

static void test_null_patterns(void **state)
{
	const char *rows[1] = {"x"};
	struct berth_screen_view v = {
	    .lines = rows, .n_lines = 1, .cursor_row = 0, .alive = true, .idle_ms = 10};
	const char *why;

	(void)state;
	assert_int_equal(berth_agent_classify(NULL, &v, &why), BERTH_AGENT_WORKING);
	v.idle_ms = 60000;
	assert_int_equal(berth_agent_classify(NULL, &v, &why), BERTH_AGENT_IDLE);
	v.alive = false;
	v.exit_status = 3;
	assert_int_equal(berth_agent_classify(NULL, &v, &why), BERTH_AGENT_EXITED);
	assert_string_equal(why, "exited: the process ended with status 3");
}

/* Lookup: $XDG_CONFIG_HOME/berth/agents/NAME.yml first; bad names refused. */
static void test_load(void **state)
{
	char tmpl[] = "/tmp/berth-agents-XXXXXX", path[4096];
	const char *dir = mkdtemp(tmpl);
	const char *old = getenv("XDG_CONFIG_HOME");
	cleanup_free char *saved = old != NULL ? strdup(old) : NULL;
	struct berth_error err = {0};
	struct berth_agent_patterns *p;
	FILE *f;

	(void)state;
	assert_non_null(dir);
	snprintf(path, sizeof path, "%s/berth", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof path, "%s/berth/agents", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof path, "%s/berth/agents/mine.yml", dir);
	f = fopen(path, "we");
	assert_non_null(f);
	fputs("agent: mine\ninput:\n  - '^mine> '\n", f);
	fclose(f);
	setenv("XDG_CONFIG_HOME", dir, 1);

	p = berth_agent_patterns_load("mine", &err);
	assert_non_null(p);
	assert_string_equal(berth_agent_patterns_origin(p), path);
	berth_agent_patterns_free(p);

	assert_null(berth_agent_patterns_load("no-such-agent", &err));
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	assert_non_null(strstr(err.msg, "no pattern file for the agent `no-such-agent`"));
	assert_non_null(strstr(err.hint, "$XDG_CONFIG_HOME/berth/agents/no-such-agent.yml"));
	static const char *const bad[] = {"../etc/passwd", ".hidden", "", "a/b", "a b"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_null(berth_agent_patterns_load(bad[i], &err));
		assert_int_equal(err.status, BERTH_EXIT_USAGE);
		assert_non_null(strstr(err.msg, "bad agent name"));
	}
	/* A malformed override is an error, not a silent fall-back to the shipped file. */
	f = fopen(path, "we");
	assert_non_null(f);
	fputs("agent: mine\nspinner: x\n", f);
	fclose(f);
	assert_null(berth_agent_patterns_load("mine", &err));
	assert_non_null(strstr(err.msg, "mine.yml:2:1: unknown key `spinner`"));

	unlink(path);
	snprintf(path, sizeof path, "%s/berth/agents", dir);
	rmdir(path);
	snprintf(path, sizeof path, "%s/berth", dir);
	rmdir(path);
	rmdir(dir);
	if (saved != NULL)
		setenv("XDG_CONFIG_HOME", saved, 1);
	else
		unsetenv("XDG_CONFIG_HOME");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_state_names),    cmocka_unit_test(test_bad_pattern_files),
	    cmocka_unit_test(test_region),         cmocka_unit_test(test_null_patterns),
	    cmocka_unit_test(test_load),           cmocka_unit_test(test_fixtures_claude),
	    cmocka_unit_test(test_fixtures_codex), cmocka_unit_test(test_fixtures_shell),
	    cmocka_unit_test(test_error_turn),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
