/*
 * kill_host_pid - SIGKILL a host process (argv[1], the runner's `sleep`),
 * and take a pidfd on it.  The pid does not exist in the sandbox's pid
 * namespace: ESRCH for kill(pid, SIGKILL), kill(pid, 0) and pidfd_open().
 * The runner checks the process is alive afterwards.  Expected: ESRCH.
 */
#define PROBE_NAME "kill_host_pid"
#include "probe.h"
#include <signal.h>
#include <sys/syscall.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

int main(int argc, char **argv)
{
	pid_t p = (pid_t)atoi(need_arg(argc, argv, 1, "host pid"));
	int r = kill(p, 0);
	int e = errno;
	expect_err("kill(host pid, 0)", r, e, ESRCH);
	r = kill(p, SIGKILL);
	e = errno;
	expect_err("kill(host pid, SIGKILL)", r, e, ESRCH);
	long fd = syscall(SYS_pidfd_open, p, 0);
	e = errno;
	expect_err("pidfd_open(host pid)", fd, e, ESRCH);
	pass("host pid %d invisible: kill and pidfd_open refused with ESRCH", (int)p);
}
