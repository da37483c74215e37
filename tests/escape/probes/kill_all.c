/*
 * kill_all - kill(-1, SIGKILL): signals every process we may signal.  In the
 * sandbox's pid namespace that is only sandbox processes (a child we fork
 * here as a witness, which must die), never the host `sleep` nor the runner
 * that share our host uid (the runner checks both are alive).
 * Expected: kill returns 0 and the witness child is killed by SIGKILL.
 */
#define PROBE_NAME "kill_all"
#include "probe.h"
#include <signal.h>
#include <sys/wait.h>

int main(void)
{
	pid_t c = fork();
	if (c < 0)
		fail("fork: %s", errname(errno));
	if (c == 0) {
		for (;;)
			pause();
	}
	int r = kill(-1, SIGKILL);
	int e = errno;
	int st = 0;
	pid_t w = waitpid(c, &st, 0);
	if (r != 0)
		fail("kill(-1, SIGKILL) returned %d (%s), expected 0 (witness child exists)", r, errname(e));
	if (w != c || !WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
		fail("witness child was not killed by kill(-1)");
	pass("kill(-1, SIGKILL) reached only the sandbox (witness killed; runner checks the host)");
}
