/*
 * chroot_escape - the classic chroot breakout (chroot into a subdirectory
 * while keeping a cwd outside it, then chdir("..") repeatedly).  chroot(2)
 * needs CAP_SYS_CHROOT (and is denied by seccomp): EPERM.  Expected: EPERM.
 */
#define PROBE_NAME "chroot_escape"
#include "probe.h"
#include <sys/stat.h>

int main(void)
{
	mkdir("/workspace/berth-escape-chroot", 0755);
	int r = chroot("/workspace/berth-escape-chroot");
	int e = errno;
	rmdir("/workspace/berth-escape-chroot");
	expect_err("chroot(/workspace/sub)", r, e, EPERM);
	pass("chroot refused with EPERM");
}
