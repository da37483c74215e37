/*
 * fd_exhaust - open /dev/null until open fails (run with --nofile 256).
 * RLIMIT_NOFILE makes it fail with EMFILE once argv[1] (default 256)
 * descriptors are open.  Expected: EMFILE at exactly the limit.
 */
#define PROBE_NAME "fd_exhaust"
#include "probe.h"
#include <fcntl.h>
#include <sys/resource.h>

int main(int argc, char **argv)
{
	long limit = argc > 1 ? atol(argv[1]) : 256;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		fail("getrlimit: %s", errname(errno));
	if ((long)rl.rlim_cur != limit || (long)rl.rlim_max != limit)
		fail("RLIMIT_NOFILE is %lu/%lu, expected %ld/%ld", (unsigned long)rl.rlim_cur,
		     (unsigned long)rl.rlim_max, limit, limit);
	int maxfd = -1, e = 0;
	for (long i = 0; i < 1000000; i++) {
		int fd = open("/dev/null", O_RDONLY);
		if (fd < 0) {
			e = errno;
			break;
		}
		maxfd = fd;
	}
	if (e != EMFILE)
		fail("open stopped with %s (highest fd %d), expected EMFILE", errname(e), maxfd);
	if (maxfd + 1 != limit)
		fail("EMFILE with highest fd %d, expected %ld", maxfd, limit - 1);
	pass("open failed with EMFILE at fd %d (RLIMIT_NOFILE %ld)", maxfd + 1, limit);
}
