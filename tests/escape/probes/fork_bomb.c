/*
 * fork_bomb - fork until fork fails (run with --pids 64).  The pids limit
 * (cgroup pids.max, or RLIMIT_NPROC in rlimit mode) makes fork fail with
 * EAGAIN; the probe then kills its children and exits, so the sandbox stays
 * killable.  Limit accepted: at most the --pids value given in argv[1]
 * (default 64), never more than 512.  Children that escaped the limit would
 * show as a count above it.  Expected: EAGAIN after <= argv[1] processes.
 */
#define PROBE_NAME "fork_bomb"
#include "probe.h"
#include <signal.h>
#include <sys/wait.h>

#define MAXKIDS 4096

static pid_t kids[MAXKIDS];

int main(int argc, char **argv)
{
	int limit = argc > 1 ? atoi(argv[1]) : 64;
	if (limit <= 0 || limit > 512)
		limit = 512;
	int n = 0, e = 0;
	for (;;) {
		if (n >= MAXKIDS) {
			e = 0;
			break;
		}
		pid_t p = fork();
		if (p < 0) {
			e = errno;
			break;
		}
		if (p == 0) {
			for (;;)
				pause();
		}
		kids[n++] = p;
	}
	for (int i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	for (int i = 0; i < n; i++)
		waitpid(kids[i], NULL, 0);
	if (e == 0)
		fail("forked %d processes without hitting a limit", n);
	if (e != EAGAIN)
		fail("fork failed after %d processes with %s, expected EAGAIN", n, errname(e));
	if (n + 1 > limit)
		fail("forked %d processes (+ self) before EAGAIN, limit is %d", n, limit);
	pass("fork failed with EAGAIN after %d children (limit %d)", n, limit);
}
