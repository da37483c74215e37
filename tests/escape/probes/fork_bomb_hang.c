/*
 * fork_bomb_hang - a fork bomb that does not clean up: fork until the pids
 * limit (run with --pids 64 --timeout 3s), every process ignores SIGTERM,
 * SIGHUP and SIGINT, starts its own session, and sleeps forever.  The
 * sandbox must remain killable: berth's --timeout kills the whole tree and
 * exits 124, and the runner checks that no process of the probe is left on
 * the host.  The probe prints nothing unless fork never fails (FAIL).
 * Expected: berth exits 124, nothing left running.
 */
#define PROBE_NAME "fork_bomb_hang"
#include "probe.h"
#include <signal.h>

int main(void)
{
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	int n = 0;
	for (; n < 4096; n++) {
		pid_t p = fork();
		if (p < 0)
			break;
		if (p == 0) {
			setsid();
			for (;;)
				pause();
		}
	}
	if (n >= 4096)
		fail("forked %d processes without hitting a limit", n);
	for (;;)
		pause();
}
