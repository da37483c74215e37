/* SPDX-License-Identifier: MIT */
#ifndef BERTH_CLI_H
#define BERTH_CLI_H

#include <jansson.h>

#include "../util/error.h"
#include "../util/text.h"

/* Print `berth: MSG` and `berth: hint: HINT` for @err, each through
 * CLI_SAFE (messages quote values from files a repository may bring). */
void cli_print_error(const struct berth_error *err);

/*
 * CLI_SAFE - @s (a NUL-terminated string, NULL read as "") as text that
 * cannot drive the reader's terminal: escape sequences, control characters,
 * C1 controls, bidirectional controls and bytes that are not UTF-8 are
 * shown as `\xHH` / `\u{HHHH}` (berth_text_clean, src/util/text.h); cut to
 * CLI_SAFE_MAX bytes.  The result lives until the end of the enclosing
 * block: use it as an argument of the printf that prints it.
 */
#define CLI_SAFE_MAX 4096

/*
 * cli_json_dumps - json_dumps(@v, @flags) through berth_json_text_safe: for
 * JSON whose strings come from a sandbox, an app, a repository or an MCP
 * client and that goes to a terminal.  Returns a malloc'd string, or NULL
 * on ENOMEM.
 */
char *cli_json_dumps(const json_t *v, size_t flags);

/*
 * cli_json_str - a JSON string of @s (NULL read as ""), never NULL but on
 * ENOMEM: bytes that are not UTF-8 (a path's) would make json_string()
 * and json_pack() fail and the field vanish, so such a string is stored as
 * CLI_SAFE shows it (`\xHH`).  For json_pack's "o".
 */
json_t *cli_json_str(const char *s);

struct berth_run_opts;
/*
 * cli_confirm_widenings - print `berth: widening: ...` for each widening of
 * @o; when there is one, no --yes and a person at the terminal (stdin and
 * stderr are ttys), ask `berth: VERB with these widenings? [y/N] `.
 * Returns 0 to go on, or -1 after `berth: not confirmed; nothing was DONE`
 * when the answer is not y or Y.
 */
int cli_confirm_widenings(const struct berth_run_opts *o, const char *verb, const char *done);
#define CLI_SAFE(s) berth_text_clean((char[CLI_SAFE_MAX]){0}, CLI_SAFE_MAX, (s) != NULL ? (s) : "")

int cmd_run(int argc, char **argv);
int cmd_approve(int argc, char **argv);
int cmd_deny(int argc, char **argv);
int cmd_asks(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_rpc(int argc, char **argv);
int cmd_test(int argc, char **argv);
int cmd_dev(int argc, char **argv);
int cmd_init(int argc, char **argv);
int cmd_mcp(int argc, char **argv);
int cmd_tools(int argc, char **argv);
int cmd_spawn(int argc, char **argv);
int cmd_ps(int argc, char **argv);
int cmd_peek(int argc, char **argv);
int cmd_send(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_fleet(int argc, char **argv);

/* Stop the sessions @names (grace @grace_ms milliseconds, then killed) and
 * wait until each has ended.  Returns 0, or an exit status. */
int berth_cli_stop_many(char **names, int n, unsigned grace_ms);
int cmd_attest(int argc, char **argv);
/* cmd_review.c: a --review run's change set (docs/review.md) */
int cmd_diff(int argc, char **argv);
int cmd_apply(int argc, char **argv);
int cmd_discard(int argc, char **argv);
int cmd_checkpoints(int argc, char **argv);
int cmd_rollback(int argc, char **argv);
int cmd_audit(int argc, char **argv);
/* `berth watch RUN|SESSION` (cmd_watch.c): a run's denial records, live (docs/denials.md). */
int cmd_watch(int argc, char **argv);
int cmd_oci(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_vm(int argc, char **argv);

#endif
