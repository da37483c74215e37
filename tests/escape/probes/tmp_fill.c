/*
 * tmp_fill - fill /tmp (run with --tmp-size 16M): /tmp is a private tmpfs of
 * that size, so write() fails with ENOSPC after about argv[1] MiB (default
 * 16); the host's /tmp is untouched (runner checks).  Writing 256 MiB
 * without error means no size limit: FAIL.
 * Expected: ENOSPC at <= the size.
 */
#define PROBE_NAME "tmp_fill"
#include "probe.h"
#include <fcntl.h>

int main(int argc, char **argv)
{
	long limit = argc > 1 ? atol(argv[1]) : 16;
	static char buf[1 << 20];
	memset(buf, 0xa5, sizeof buf);
	const char *p = "/tmp/berth-escape-probe-fill";
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		fail("open(%s): %s (precondition)", p, errname(errno));
	long long total = 0;
	while (total < (256LL << 20)) {
		ssize_t w = write(fd, buf, sizeof buf);
		if (w < 0) {
			int e = errno;
			close(fd);
			unlink(p);
			if (e != ENOSPC)
				fail("write failed with %s after %lld bytes, expected ENOSPC", errname(e),
				     total);
			if (total > (long long)limit << 20)
				fail("ENOSPC only after %lld bytes, limit %ld MiB", total, limit);
			pass("write to /tmp failed with ENOSPC after %lld bytes (tmpfs %ld MiB)", total,
			     limit);
		}
		total += w;
	}
	close(fd);
	unlink(p);
	fail("wrote %lld bytes to /tmp without ENOSPC (limit %ld MiB)", total, limit);
}
