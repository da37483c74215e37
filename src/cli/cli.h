/* SPDX-License-Identifier: MIT */
#ifndef BERTH_CLI_H
#define BERTH_CLI_H

#include "../util/error.h"

/* Print `berth: MSG` and `berth: hint: HINT` for @err. */
void cli_print_error(const struct berth_error *err);

int cmd_run(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_rpc(int argc, char **argv);
int cmd_test(int argc, char **argv);
int cmd_dev(int argc, char **argv);
int cmd_init(int argc, char **argv);
int cmd_mcp(int argc, char **argv);
int cmd_tools(int argc, char **argv);
int cmd_attest(int argc, char **argv);
int cmd_audit(int argc, char **argv);

#endif
