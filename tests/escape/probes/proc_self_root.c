/*
 * proc_self_root - climb out through /proc/self/root/../../ and through
 * repeated ".." from a directory fd of "/", then open the host canary path
 * (argv[1]).  ".." at the root of the namespace stays there.  Expected: ENOENT.
 */
#define PROBE_NAME "proc_self_root"
#include "probe.h"
#include <fcntl.h>

int main(int argc, char **argv)
{
	const char *t = need_arg(argc, argv, 1, "host canary path");
	char p[4096];
	snprintf(p, sizeof p, "/proc/self/root/../../../..%s", t);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	int e = errno;
	expect_err("open(/proc/self/root/../../../../<host canary>)", fd, e, ENOENT);
	int dfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		fail("open(/): %s", errname(errno));
	for (int i = 0; i < 64; i++) {
		int n = openat(dfd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (n < 0)
			fail("openat(..): %s", errname(errno));
		close(dfd);
		dfd = n;
	}
	fd = openat(dfd, t + (t[0] == '/'), O_RDONLY | O_CLOEXEC);
	e = errno;
	expect_err("openat(64 x .., <host canary>)", fd, e, ENOENT);
	pass("host canary unreachable through /proc/self/root and ..-climbing (ENOENT)");
}
