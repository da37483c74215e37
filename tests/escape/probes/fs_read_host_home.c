/*
 * fs_read_host_home - read a file the runner put in the invoking user's host
 * $HOME (argv[1], absolute host path).  The host home is not mounted (the
 * sandbox $HOME is a fresh tmpfs, /root is absent), so the path does not
 * resolve.  Expected: ENOENT.
 */
#define PROBE_NAME "fs_read_host_home"
#include "probe.h"
#include <fcntl.h>

int main(int argc, char **argv)
{
	const char *p = need_arg(argc, argv, 1, "host home file");
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	int e = errno;
	expect_err("open(host home file)", fd, e, ENOENT);
	pass("host home file %s not visible (ENOENT)", p);
}
