/* SPDX-License-Identifier: MIT */
/*
 * agent_state.h - what a coding agent in a session is doing, read from its
 * rendered screen.
 *
 * The session supervisor renders the agent's terminal (libvterm or tmux) into
 * plain text lines and asks berth_agent_classify() which of six states the
 * agent is in.  What each agent's screens look like is data, not code: one
 * pattern file per agent (data/agents/<agent>.yml, format in docs/agents.md),
 * loaded once with berth_agent_patterns_load().
 *
 * The rules, in the order they are tried (docs/agents.md has the details):
 *   exited   the process is gone (view->alive is false).
 *   blocked  waiting for the user to choose: a `blocked` rule's question
 *            matches in the active region AND (unless the rule needs none) at
 *            least `min-options` option lines (numbered or selectable) follow
 *            it, with no input-box line below the question.  A question in
 *            prose without options is not blocked; a prompt scrolled above
 *            an idle input box is not blocked (it is outside the region, or
 *            an input box follows it).
 *   working  a `working` marker (spinner line, "esc to interrupt") matches in
 *            the active region, or the agent wrote output less than
 *            `quiet-ms` milliseconds ago.
 *   error    an input-box line matches in the region and an `error` marker
 *            (an API error, a refused connection, a rate limit: the turn
 *            failed) appears above it on screen, in the latest turn: no
 *            `done` marker below it, or only the same turn's summary (no
 *            input-pattern row, an echoed new prompt, between the error and
 *            that marker).  The agent waits at its prompt; retrying is up to
 *            the user.
 *   done     an input-box line matches in the region and a `done` marker
 *            (the agent's answer / turn summary) appears above it on screen:
 *            the agent finished a turn and waits at its prompt.
 *   idle     an input-box line matches and nothing says a turn finished, or
 *            no rule matched and the screen has been quiet.
 *
 * The active region: the bottom `region-rows` rows of the screen ending at
 * the lower of the last non-blank row and the cursor row.  Only it counts
 * for `blocked`, `working` and the input box; `done` and `error` markers
 * are searched on the whole screen above the input box.
 *
 * False `blocked` is worse than a missed one (the user is told to look, and
 * learns to ignore it), so every `blocked` rule needs its question and its
 * options, and the tests under tests/fixtures/screens/ include the traps.
 */
#ifndef BERTH_AGENT_STATE_H
#define BERTH_AGENT_STATE_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/error.h"

enum berth_agent_state {
	BERTH_AGENT_WORKING = 0, /* busy: spinner, "esc to interrupt", output just now */
	BERTH_AGENT_BLOCKED,     /* waiting for the user: trust/permission/login choice */
	BERTH_AGENT_IDLE,        /* at its prompt, nothing done yet (or nothing recognised, quiet) */
	BERTH_AGENT_DONE,        /* finished a turn, waits at its prompt for the next one */
	BERTH_AGENT_EXITED,      /* the process is gone */
	BERTH_AGENT_ERROR,       /* its last turn failed (API error, no connection), waits at its prompt */
};

/*
 * The rendered screen of a session, as the supervisor sees it.  Nothing here
 * is owned by the classifier; it only reads it during the call.
 */
struct berth_screen_view {
	const char *const *lines; /* rows top to bottom: UTF-8 text, no escape codes,
				   * no newline; trailing blanks allowed; NULL rows
				   * are read as empty */
	int n_lines;              /* number of rows in @lines (>= 0) */
	int cursor_row;           /* 0-based row of the cursor, -1 if unknown or hidden */
	int cursor_col;           /* 0-based column (in cells), -1 if unknown */
	bool alive;               /* the agent's process is still running */
	int exit_status;          /* when !alive: its exit status as berth reports it
				   * (0-255, 128+N for signal N), -1 if unknown */
	long long idle_ms;        /* milliseconds since the agent last wrote output,
				   * -1 if unknown (then recent output is not used) */
};

struct berth_agent_patterns;

/*
 * berth_agent_patterns_load - load the pattern file of an agent.
 * @agent: "claude", "codex", "shell" or a user-defined name; letters, digits,
 *         '-', '_' and '.' only, not starting with '.'.
 * The file is the first of:
 *   $XDG_CONFIG_HOME/berth/agents/<agent>.yml (or ~/.config/... when unset),
 *   <dir of the berth binary>/../data/agents/<agent>.yml (the build tree),
 *   <dir of the berth binary>/../share/berth/agents/<agent>.yml (installed).
 * Returns the patterns (release with berth_agent_patterns_free), or NULL with
 * @err filled: BERTH_EXIT_USAGE for a bad name, a missing file, or a
 * malformed file (the message names file:line:col and the bad value);
 * BERTH_EXIT_INTERNAL with errno for an unreadable file or ENOMEM.
 */
struct berth_agent_patterns *berth_agent_patterns_load(const char *agent, struct berth_error *err);

/*
 * berth_agent_patterns_parse - parse a pattern file from memory.
 * @text, @len: the YAML document (need not be NUL-terminated).
 * @origin: the name used in messages (a path), not opened.
 * Returns the patterns, or NULL with @err filled (BERTH_EXIT_USAGE,
 * "ORIGIN:LINE:COL: ..." for unknown keys, wrong types, bad regular
 * expressions (POSIX extended, regcomp(3)), out-of-range numbers; ENOMEM as
 * BERTH_EXIT_INTERNAL).  Format: docs/agents.md.
 */
struct berth_agent_patterns *berth_agent_patterns_parse(const char *text, size_t len, const char *origin,
							struct berth_error *err);

/* berth_agent_patterns_free - release @p (NULL is fine). */
void berth_agent_patterns_free(struct berth_agent_patterns *p);

/* berth_agent_patterns_origin - the file @p was loaded from (owned by @p). */
const char *berth_agent_patterns_origin(const struct berth_agent_patterns *p);

/*
 * berth_agent_classify - the state of the agent showing screen @v.
 * @p: its patterns; NULL classifies with no patterns (only exited, recent
 *     output = working, else idle).
 * @why: if not NULL, receives a short human reason ("blocked: trust prompt
 *       (row 7)"); the string stays valid until the next call on the same
 *       thread (thread-local buffer).
 * Never fails; a screen nothing matches is `idle` when quiet, `working` when
 * output is recent.
 */
enum berth_agent_state berth_agent_classify(const struct berth_agent_patterns *p,
					    const struct berth_screen_view *v, const char **why);

/* berth_agent_state_name - "working", "blocked", "idle", "done", "exited",
 * "error"; "unknown" for a value outside the enum. */
const char *berth_agent_state_name(enum berth_agent_state s);

/*
 * berth_agent_state_parse - the state named @name (as printed by
 * berth_agent_state_name, case-sensitive).  Returns 0 and sets @out, or -1
 * with @err filled (BERTH_EXIT_USAGE, naming the value and the valid names).
 */
int berth_agent_state_parse(const char *name, enum berth_agent_state *out, struct berth_error *err);

#endif
