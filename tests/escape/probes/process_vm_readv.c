/*
 * process_vm_readv - read another sandbox process's memory (a forked child
 * with the same credentials, which ptrace_may_access() would allow) and a
 * host process's (argv[1]).  berth's filter denies process_vm_readv/writev:
 * EPERM for both (without the filter: success for the child, ESRCH for the
 * host pid).  Expected: EPERM.
 */
#define PROBE_NAME "process_vm_readv"
#include "probe.h"
#include <signal.h>
#include <sys/uio.h>
#include <sys/wait.h>

static char secret[64] = "berth-escape-secret";

int main(int argc, char **argv)
{
	pid_t host = (pid_t)atoi(need_arg(argc, argv, 1, "host pid"));
	pid_t c = fork();
	if (c < 0)
		fail("fork: %s", errname(errno));
	if (c == 0) {
		pause();
		_exit(0);
	}
	char buf[64];
	struct iovec l = {buf, sizeof buf}, r = {secret, sizeof secret};
	ssize_t n = process_vm_readv(c, &l, 1, &r, 1, 0);
	int e = errno;
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	expect_err("process_vm_readv(sandbox child)", n, e, EPERM);
	n = process_vm_readv(host, &l, 1, &r, 1, 0);
	e = errno;
	expect_err("process_vm_readv(host pid)", n, e, EPERM);
	pass("process_vm_readv refused with EPERM (sandbox child and host pid %d)", (int)host);
}
