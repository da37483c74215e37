/*
 * ptrace_sibling - PTRACE_ATTACH / PTRACE_SEIZE between two sibling
 * processes of the sandbox with the same credentials.  The kernel would
 * allow it (same uid, dumpable, same Landlock domain, no Yama restriction
 * relied upon), so only the seccomp filter denies ptrace: EPERM.
 * Expected: EPERM.
 */
#define PROBE_NAME "ptrace_sibling"
#include "probe.h"
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

int main(void)
{
	pid_t victim = fork();
	if (victim < 0)
		fail("fork: %s", errname(errno));
	if (victim == 0) {
		pause();
		_exit(0);
	}
	int pfd[2];
	if (pipe(pfd) != 0)
		fail("pipe: %s", errname(errno));
	pid_t attacker = fork();
	if (attacker < 0)
		fail("fork: %s", errname(errno));
	if (attacker == 0) {
		long r = ptrace(PTRACE_ATTACH, victim, 0, 0);
		int res[2] = {(int)r, errno};
		if (r == 0)
			ptrace(PTRACE_DETACH, victim, 0, 0);
		if (write(pfd[1], res, sizeof res) != sizeof res)
			_exit(2);
		r = ptrace(PTRACE_SEIZE, victim, 0, 0);
		res[0] = (int)r;
		res[1] = errno;
		if (write(pfd[1], res, sizeof res) != sizeof res)
			_exit(2);
		_exit(0);
	}
	close(pfd[1]);
	int a[2] = {0, 0}, s[2] = {0, 0};
	ssize_t n1 = read(pfd[0], a, sizeof a), n2 = read(pfd[0], s, sizeof s);
	waitpid(attacker, NULL, 0);
	kill(victim, SIGKILL);
	waitpid(victim, NULL, 0);
	if (n1 != sizeof a || n2 != sizeof s)
		fail("attacker did not report");
	expect_err("ptrace(PTRACE_ATTACH, sibling)", a[0], a[1], EPERM);
	expect_err("ptrace(PTRACE_SEIZE, sibling)", s[0], s[1], EPERM);
	pass("PTRACE_ATTACH and PTRACE_SEIZE of a sibling refused with EPERM");
}
