/* SPDX-License-Identifier: MIT */
/*
 * fuzz_session.c - libFuzzer target for the agent-session parsers and the
 * screen (src/session/profile.c, fleet.c, yconf.c, screen.c).
 *
 * The first byte picks the mode, the rest is the input (capped at 64 KiB):
 *   0  a profile file            1  a fleet file
 *   2  agent output fed into a 24x80 screen, resized, read back, redrawn
 * Invariants (a violation aborts):
 *  - a refused file gets a message that starts with the file's name and a
 *    position (`fuzz.yml:LINE:COL: ...` or `fuzz.yml: ...`), exit status 2;
 *  - an accepted profile has a command of at least one non-empty word and an
 *    agent name; an accepted fleet has 1..256 agents, each with a valid,
 *    unique session name and a profile;
 *  - a screen line is valid UTF-8 without control characters (no escape
 *    codes ever reach `berth peek`), no longer than its cells allow, without
 *    trailing blanks; the redraw is never NULL.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "session/fleet.h"
#include "session/profile.h"
#include "session/screen.h"
#include "session/session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_refusal(const struct berth_error *err)
{
	if (strncmp(err->msg, "fuzz.yml:", 9) != 0 || err->status != BERTH_EXIT_USAGE)
		abort();
}

static bool valid_line(const char *s, size_t max_bytes)
{
	size_t n = strlen(s);
	const unsigned char *p = (const unsigned char *)s;

	if (n > max_bytes || (n > 0 && s[n - 1] == ' '))
		return false;
	for (size_t i = 0; i < n;) {
		unsigned c = p[i];
		size_t len = c < 0x80             ? 1
			     : (c & 0xe0) == 0xc0 ? 2
			     : (c & 0xf0) == 0xe0 ? 3
			     : (c & 0xf8) == 0xf0 ? 4
						  : 0;
		if (len == 0 || i + len > n || (len == 1 && (c < 0x20 || c == 0x7f)))
			return false;
		for (size_t k = 1; k < len; k++)
			if ((p[i + k] & 0xc0) != 0x80)
				return false;
		i += len;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct berth_error err = {0};

	if (size < 1 || size > 65536)
		return 0;
	const char *buf = (const char *)data + 1;
	size_t len = size - 1;

	if (data[0] % 3 == 0) {
		struct berth_profile p;
		if (berth_profile_parse("fuzz", "fuzz.yml", buf, len, &p, &err) == 0) {
			if (p.n_command < 1 || p.command == NULL || p.command[0] == NULL ||
			    p.command[0][0] == '\0' || p.agent == NULL)
				abort();
			berth_profile_free(&p);
		} else {
			check_refusal(&err);
		}
	} else if (data[0] % 3 == 1) {
		struct berth_fleet f;
		if (berth_fleet_parse("fuzz.yml", "/tmp", buf, len, &f, &err) == 0) {
			if (f.n < 1 || f.n > BERTH_FLEET_MAX_AGENTS)
				abort();
			for (size_t i = 0; i < f.n; i++) {
				struct berth_error e2 = {0};
				if (f.agents[i].profile_name == NULL || f.agents[i].name == NULL ||
				    berth_session_name_check(f.agents[i].name, &e2) < 0)
					abort();
				for (size_t k = 0; k < i; k++)
					if (strcmp(f.agents[k].name, f.agents[i].name) == 0)
						abort();
			}
		} else {
			check_refusal(&err);
		}
		berth_fleet_free(&f);
	} else {
		struct berth_screen *s = berth_screen_new(24, 80, NULL, NULL, &err);
		size_t half = len / 2, n = 0;
		int rows, cols;
		if (s == NULL)
			abort();
		berth_screen_feed(s, buf, half);
		berth_screen_resize(s, 10 + (int)(len % 30), 20 + (int)(len % 100));
		berth_screen_feed(s, buf + half, len - half);
		berth_screen_size(s, &rows, &cols);
		for (int r = 0; r < rows; r++) {
			char *l = berth_screen_line(s, r);
			if (l == NULL || !valid_line(l, (size_t)cols * 6 * 4))
				abort();
			free(l);
		}
		char *d = berth_screen_redraw(s, &n);
		if (d == NULL)
			abort();
		free(d);
		berth_screen_free(s);
	}
	return 0;
}
