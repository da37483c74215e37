/*
 * clone3_ns - clone3() with CLONE_NEWUSER.  Seccomp cannot inspect clone3's
 * flags (they are in memory), so berth makes clone3 fail with ENOSYS and libc
 * falls back to clone(2) whose flags are checked.  Expected: ENOSYS.
 */
#define PROBE_NAME "clone3_ns"
#include "probe.h"
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#ifndef SYS_clone3
#define SYS_clone3 435
#endif

struct b_clone_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

int main(void)
{
	struct b_clone_args a;
	memset(&a, 0, sizeof a);
	a.flags = CLONE_NEWUSER;
	a.exit_signal = SIGCHLD;
	long r = syscall(SYS_clone3, &a, sizeof a);
	int e = errno;
	if (r == 0)
		_exit(0);
	if (r > 0)
		waitpid((pid_t)r, NULL, 0);
	expect_err("clone3(CLONE_NEWUSER)", r, e, ENOSYS);
	memset(&a, 0, sizeof a);
	a.exit_signal = SIGCHLD;
	r = syscall(SYS_clone3, &a, sizeof a);
	e = errno;
	if (r == 0)
		_exit(0);
	if (r > 0)
		waitpid((pid_t)r, NULL, 0);
	expect_err("clone3(0)", r, e, ENOSYS);
	pass("clone3 refused with ENOSYS");
}
