/*
 * swapon - swapon/swapoff: CAP_SYS_ADMIN checked first (and seccomp
 * denies them): EPERM.  Expected: EPERM.
 */
#define PROBE_NAME "swapon"
#include "probe.h"
#include <fcntl.h>
#include <sys/swap.h>

int main(void)
{
	const char *p = "/workspace/berth-escape-swap";
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	int r = swapon(p, 0);
	int e = errno;
	unlink(p);
	expect_err("swapon(/workspace/file)", r, e, EPERM);
	r = swapoff("/workspace");
	e = errno;
	expect_err("swapoff(/workspace)", r, e, EPERM);
	pass("swapon and swapoff refused with EPERM");
}
