/*
 * userfaultfd - userfaultfd(UFFD_USER_MODE_ONLY): allowed to any user by the
 * kernel (the flag bypasses vm.unprivileged_userfaultfd), a favourite race
 * widener for kernel exploits.  Only seccomp refuses it.  Expected: EPERM.
 */
#define PROBE_NAME "userfaultfd"
#include "probe.h"
#include <fcntl.h>
#include <sys/syscall.h>

#ifndef SYS_userfaultfd
#define SYS_userfaultfd 323
#endif
#define B_UFFD_USER_MODE_ONLY 1

int main(void)
{
	long r = syscall(SYS_userfaultfd, O_CLOEXEC | B_UFFD_USER_MODE_ONLY);
	int e = errno;
	if (r >= 0)
		close((int)r);
	expect_err("userfaultfd(UFFD_USER_MODE_ONLY)", r, e, EPERM);
	r = syscall(SYS_userfaultfd, O_CLOEXEC);
	e = errno;
	if (r >= 0)
		close((int)r);
	expect_err("userfaultfd(0)", r, e, EPERM);
	pass("userfaultfd refused with EPERM");
}
