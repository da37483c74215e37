/*
 * ptrace_parent - PTRACE_ATTACH to the process that started us inside the
 * sandbox (our parent, or pid 1 when the parent is outside the pid
 * namespace and we are not pid 1 ourselves).  berth's seccomp filter denies
 * ptrace(2); the target also has other credentials / no shared Landlock
 * domain.  Expected: EPERM.  When the probe is itself pid 1 and has no
 * visible parent, it attaches to a forked sibling-to-be instead (a child
 * that ptrace would otherwise allow) so that EPERM can only come from the
 * filter.
 */
#define PROBE_NAME "ptrace_parent"
#include "probe.h"
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

int main(void)
{
	pid_t target = getppid(), child = 0;
	const char *who = "parent";
	if (target <= 0 && getpid() != 1) {
		target = 1;
		who = "pid 1";
	}
	if (target <= 0) {
		child = fork();
		if (child < 0)
			fail("fork: %s", errname(errno));
		if (child == 0) {
			pause();
			_exit(0);
		}
		target = child;
		who = "a process of the sandbox (we are pid 1, no parent visible)";
	}
	long r = ptrace(PTRACE_ATTACH, target, 0, 0);
	int e = errno;
	if (r == 0)
		ptrace(PTRACE_DETACH, target, 0, 0);
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	char what[160];
	snprintf(what, sizeof what, "ptrace(PTRACE_ATTACH, %s %d)", who, (int)target);
	expect_err(what, r, e, EPERM);
	pass("PTRACE_ATTACH to %s (pid %d) refused with EPERM", who, (int)target);
}
