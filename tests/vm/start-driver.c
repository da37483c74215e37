/* SPDX-License-Identifier: MIT */
/*
 * start-driver.c - the vm runtime's library calls (start, pidfd, wait,
 * measure, pty_master, free: src/runtime/runtime.h) as an app or a session
 * makes them, for tests/integration/run-vm.sh.
 *
 * usage: vm-start-driver stdio WORKSPACE COMMAND  (has_stdio: pipes; "typed"
 *                                                  on stdin, then its end)
 *        vm-start-driver pty WORKSPACE COMMAND    (want_pty 30x100; `q`
 *                                                  typed once the guest wrote)
 * Prints `started`, `pidfd ok`, `measured abi=N`, the command's output
 * (`out: ...`, `err: ...`), `status=N`, then exits 0; or the error and 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/policy/flags.h"
#include "../../src/runtime/runtime.h"
#include "../../src/sandbox/measure.h"

static void drain(int fd, const char *tag, int ms)
{
	char buf[4096];
	struct pollfd p = {fd, POLLIN, 0};

	while (poll(&p, 1, ms) > 0) {
		ssize_t n = read(fd, buf, sizeof buf - 1);
		if (n <= 0)
			break;
		buf[n] = '\0';
		for (char *l = strtok(buf, "\r\n"); l != NULL; l = strtok(NULL, "\r\n"))
			printf("%s: %s\n", tag, l);
	}
}

int main(int argc, char **argv)
{
	struct berth_run_opts o;
	struct berth_runtime_opts ro = {0};
	struct berth_error err = {0};
	struct berth_rt *rt = NULL;
	int in[2], out[2], errp[2], status = -1;
	char *rargv[] = {(char *)"run",
			 (char *)"--workspace",
			 argc > 2 ? argv[2] : (char *)".",
			 (char *)"--",
			 argc > 3 ? argv[3] : (char *)"true",
			 NULL};
	bool pty = argc > 1 && strcmp(argv[1], "pty") == 0;

	if (argc != 4 || berth_run_parse(5, rargv, getenv, &o, &err) < 0) {
		fprintf(stderr, "usage: %s stdio|pty WORKSPACE COMMAND (%s)\n", argv[0], err.msg);
		return 2;
	}
	if (pipe(in) < 0 || pipe(out) < 0 || pipe(errp) < 0)
		return 1;
	if (pty) {
		ro.want_pty = true;
		ro.pty_rows = 30;
		ro.pty_cols = 100;
	} else {
		ro.has_stdio = true;
		ro.stdio_fd[0] = in[0];
		ro.stdio_fd[1] = out[1];
		ro.stdio_fd[2] = errp[1];
	}
	ro.quiet = true;
	if (berth_runtime_vm.start(&o.policy, &ro, &rt, &err) < 0) {
		fprintf(stderr, "start: %s (%s)\n", err.msg, err.hint);
		return 1;
	}
	/* the caller closes its copies (runtime.h) */
	close(in[0]);
	close(out[1]);
	close(errp[1]);
	puts("started");
	if (berth_rt_pidfd(rt) >= 0)
		puts("pidfd ok");
	if (berth_rt_measure(rt) != NULL)
		printf("measured abi=%d\n", berth_rt_measure(rt)->landlock_ruleset_abi);
	if (pty) {
		int m = berth_rt_pty_master(rt);
		drain(m, "out", 3000);
		(void)!write(m, "q", 1);
	} else {
		(void)!write(in[1], "typed", 5);
		close(in[1]);
		drain(out[0], "out", 5000);
		drain(errp[0], "err", 1000);
	}
	struct pollfd p = {berth_rt_pidfd(rt), POLLIN, 0};
	poll(&p, 1, 30000);
	if (berth_rt_wait(rt, &status) < 0)
		puts("wait failed");
	printf("status=%d\n", status);
	berth_rt_free(rt);
	berth_run_opts_free(&o);
	return 0;
}
