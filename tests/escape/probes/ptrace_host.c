/*
 * ptrace_host - PTRACE_ATTACH to a host process (argv[1], a `sleep` the
 * runner started outside).  The pid does not exist in the sandbox's pid
 * namespace (ESRCH); if the seccomp filter denies ptrace(2) first, EPERM.
 * Both mean refused; any other outcome fails.  The runner checks that the
 * host process is still alive and not traced.
 * Expected: ESRCH or EPERM (EPERM when ptrace is filtered).
 */
#define PROBE_NAME "ptrace_host"
#include "probe.h"
#include <sys/ptrace.h>

int main(int argc, char **argv)
{
	pid_t p = (pid_t)atoi(need_arg(argc, argv, 1, "host pid"));
	long r = ptrace(PTRACE_ATTACH, p, 0, 0);
	int e = errno;
	if (r == 0)
		ptrace(PTRACE_DETACH, p, 0, 0);
	expect_err2("ptrace(PTRACE_ATTACH, host pid)", r, e, ESRCH, EPERM);
	pass("PTRACE_ATTACH to host pid %d refused with %s", (int)p, errname(e));
}
