/*
 * clone_newuser - raw clone(CLONE_NEWUSER|SIGCHLD) (fork-like, no stack):
 * the namespace flags of clone(2) are in a register, and berth's seccomp
 * filter denies them: EPERM.  Also CLONE_NEWNS|CLONE_NEWPID (no CAP_SYS_ADMIN:
 * EPERM).  Expected: EPERM.
 */
#define PROBE_NAME "clone_newuser"
#include "probe.h"
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static void try(unsigned long flags, const char *what)
{
	long r = syscall(SYS_clone, flags | SIGCHLD, 0L, 0L, 0L, 0L);
	int e = errno;
	if (r == 0)
		_exit(0);
	if (r > 0)
		waitpid((pid_t)r, NULL, 0);
	expect_err(what, r, e, EPERM);
}

int main(void)
{
	try(CLONE_NEWUSER, "clone(CLONE_NEWUSER)");
	try(CLONE_NEWUSER | CLONE_NEWNS, "clone(CLONE_NEWUSER|CLONE_NEWNS)");
	try(CLONE_NEWNS | CLONE_NEWPID, "clone(CLONE_NEWNS|CLONE_NEWPID)");
	pass("clone with namespace flags refused with EPERM");
}
