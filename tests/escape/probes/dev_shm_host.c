/*
 * dev_shm_host - open a POSIX shared memory object the runner created in the
 * host's /dev/shm (argv[1]: the name) via /dev/shm and shm_open.  The
 * sandbox's /dev/shm is its own tmpfs: ENOENT.  Expected: ENOENT.
 */
#define PROBE_NAME "dev_shm_host"
#include "probe.h"
#include <fcntl.h>
#include <sys/mman.h>

int main(int argc, char **argv)
{
	const char *n = need_arg(argc, argv, 1, "shm name");
	char p[512];
	snprintf(p, sizeof p, "/dev/shm/%s", n);
	int fd = open(p, O_RDWR | O_CLOEXEC);
	int e = errno;
	expect_err("open(/dev/shm/<host object>)", fd, e, ENOENT);
	snprintf(p, sizeof p, "/%s", n);
	fd = shm_open(p, O_RDWR, 0);
	e = errno;
	expect_err("shm_open(host object)", fd, e, ENOENT);
	pass("host /dev/shm/%s invisible (ENOENT)", n);
}
