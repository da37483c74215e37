/*
 * rlimit_raise - raise the hard RLIMIT_NOFILE and RLIMIT_NPROC above what
 * berth set (run with --nofile 256).  Raising a hard limit needs
 * CAP_SYS_RESOURCE: EPERM.  prlimit() on pid 1 (another process) is refused
 * too (EPERM: different credentials or filtered) unless we are pid 1.
 * Expected: EPERM.
 */
#define PROBE_NAME "rlimit_raise"
#include "probe.h"
#include <sys/resource.h>

int main(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		fail("getrlimit: %s", errname(errno));
	if (rl.rlim_max == RLIM_INFINITY)
		fail("hard RLIMIT_NOFILE is unlimited");
	struct rlimit up = {rl.rlim_max + 1024, rl.rlim_max + 1024};
	int r = setrlimit(RLIMIT_NOFILE, &up);
	int e = errno;
	expect_err("setrlimit(RLIMIT_NOFILE, hard + 1024)", r, e, EPERM);
	if (getrlimit(RLIMIT_CORE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY) {
		up.rlim_cur = up.rlim_max = RLIM_INFINITY;
		r = setrlimit(RLIMIT_CORE, &up);
		e = errno;
		expect_err("setrlimit(RLIMIT_CORE, unlimited)", r, e, EPERM);
	}
	pass("raising hard rlimits refused with EPERM");
}
