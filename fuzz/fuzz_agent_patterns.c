/* SPDX-License-Identifier: MIT */
/*
 * fuzz_agent_patterns.c - libFuzzer target for the agent pattern files and
 * the classifier (src/session/agent_state.c, src/util/ynode.c).
 *
 * The input is a pattern file, optionally followed by a NUL byte and a
 * screen (rows separated by newlines, at most 64).  The file is parsed; when
 * it is accepted, the screen is classified with the cursor on each row, no
 * cursor, and three idle times, alive and exited.  Inputs are capped at
 * 64 KiB.
 *
 * Invariants (a violation aborts):
 *  - a refused file says why, with the origin and a position first
 *    ("fuzz.yml:LINE:COL: ..."), and status BERTH_EXIT_USAGE or (out of
 *    memory) BERTH_EXIT_INTERNAL;
 *  - the state is one of the six, its reason starts with its name;
 *  - an exited process is always `exited`; a live one never is;
 *  - the classifier only says `blocked` when the screen has a non-blank row.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session/agent_state.h"

#define MAX_ROWS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_at(bool ok, int line)
{
	if (!ok) {
		fprintf(stderr, "%s: invariant at line %d broken\n", __FILE__, line);
		abort();
	}
}
#define check(ok) check_at((ok), __LINE__)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct berth_error err = {0};
	const uint8_t *nul;
	size_t ylen;
	struct berth_agent_patterns *p;
	char *screen = NULL;
	const char *rows[MAX_ROWS];
	int n = 0;
	bool any = false;

	if (size > 65536)
		return 0;
	nul = memchr(data, '\0', size);
	ylen = nul != NULL ? (size_t)(nul - data) : size;
	p = berth_agent_patterns_parse((const char *)data, ylen, "fuzz.yml", &err);
	if (p == NULL) {
		check(err.msg[0] != '\0');
		check(strncmp(err.msg, "fuzz.yml:", 9) == 0 || err.status == BERTH_EXIT_INTERNAL);
		check(err.status == BERTH_EXIT_USAGE || err.status == BERTH_EXIT_INTERNAL);
		return 0;
	}
	check(strcmp(berth_agent_patterns_origin(p), "fuzz.yml") == 0);
	if (nul != NULL) {
		size_t slen = size - ylen - 1;
		screen = malloc(slen + 1);
		check(screen != NULL);
		memcpy(screen, nul + 1, slen);
		screen[slen] = '\0';
		for (char *s = screen; n < MAX_ROWS;) {
			char *e = strchr(s, '\n');
			rows[n++] = s;
			if (e == NULL)
				break;
			*e = '\0';
			s = e + 1;
		}
	}
	for (int i = 0; i < n; i++)
		for (const char *c = rows[i]; *c != '\0' && !any; c++)
			any = *c != ' ' && *c != '\t';
	static const long long idles[] = {-1, 0, 100000};
	for (int cur = -1; cur <= n; cur++) {
		for (size_t k = 0; k < sizeof idles / sizeof idles[0]; k++) {
			for (int alive = 0; alive <= 1; alive++) {
				struct berth_screen_view v = {.lines = rows,
							      .n_lines = n,
							      .cursor_row = cur,
							      .cursor_col = 0,
							      .alive = alive,
							      .exit_status = 1,
							      .idle_ms = idles[k]};
				const char *why = NULL;
				enum berth_agent_state s = berth_agent_classify(p, &v, &why);
				const char *name = berth_agent_state_name(s);
				check(s >= BERTH_AGENT_WORKING && s <= BERTH_AGENT_ERROR);
				check(why != NULL && strncmp(why, name, strlen(name)) == 0);
				check((s == BERTH_AGENT_EXITED) == !alive);
				check(s != BERTH_AGENT_BLOCKED || any);
			}
		}
	}
	free(screen);
	berth_agent_patterns_free(p);
	return 0;
}
