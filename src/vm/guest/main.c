/* SPDX-License-Identifier: MIT */
/*
 * main.c - berth-vminit, pid 1 of a berth microVM (guest.h; docs/vm.md,
 * "The guest").  One setup function, one call per step, in the order the
 * contract gives; any failure before the command ran is one ERROR frame to
 * the host, then the power goes off.
 */
#include "guest.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* Refused before the command ran: said on the channel (when there is one)
 * and the console, and the VM goes. */
static __attribute__((noreturn)) void fail(int chan, const struct berth_error *err)
{
	guest_send_error(chan, err);
	guest_poweroff();
}

/* pid 1's own work once the worker runs: reap every process that ends
 * (orphans come to pid 1), until the worker is gone; then end whatever is
 * left. */
static void reap(pid_t worker)
{
	int st;
	pid_t w;

	for (;;) {
		w = waitpid(-1, &st, 0);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 || w == worker)
			break;
	}
	if (w == worker && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
		guest_log("the worker ended with status %d",
			  WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	kill(-1, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
}

int main(void)
{
	static struct berth_vm_reader rd;
	struct berth_error err = {0};
	struct guest g = {.chan = -1, .rd = &rd, .stdin_w = -1, .pty = -1};
	unsigned char *policy = NULL;
	size_t policy_len = 0;
	pid_t worker;

	if (getpid() != 1) {
		fprintf(stderr, "berth-vminit: runs only as pid 1 of a berth microVM\n");
		return BERTH_EXIT_USAGE;
	}
	if (guest_early_mounts(&err) < 0 || guest_oom_protect(&err) < 0)
		fail(-1, &err);
	if (guest_probe_mode())
		guest_probe();
	berth_vm_reader_init(&rd);
	if ((g.chan = guest_open_port(&err)) < 0)
		fail(-1, &err);
	if (guest_hello(g.chan, &err) < 0 ||
	    guest_receive(g.chan, &rd, &policy, &policy_len, &g.start, &err) < 0 ||
	    guest_policy(policy, policy_len, &g.start, &g.policy, &err) < 0 || guest_switch_root(&err) < 0 ||
	    guest_cgroup(g.start.uid, g.start.gid, &err) < 0)
		fail(g.chan, &err);
	free(policy);
	worker = fork();
	if (worker < 0) {
		berth_err(&err, errno, "fork");
		fail(g.chan, &err);
	}
	if (worker == 0)
		guest_worker(&g);
	reap(worker);
	guest_poweroff();
}
