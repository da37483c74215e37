/*
 * unshare_mnt - unshare(CLONE_NEWNS) and unshare(CLONE_NEWNET): need
 * CAP_SYS_ADMIN in the current user namespace, which the sandbox process
 * lacks (and seccomp denies namespace flags): EPERM.  Expected: EPERM.
 */
#define PROBE_NAME "unshare_mnt"
#include "probe.h"
#include <sched.h>

int main(void)
{
	int r = unshare(CLONE_NEWNS);
	int e = errno;
	expect_err("unshare(CLONE_NEWNS)", r, e, EPERM);
	r = unshare(CLONE_NEWNET);
	e = errno;
	expect_err("unshare(CLONE_NEWNET)", r, e, EPERM);
	pass("unshare(CLONE_NEWNS) and unshare(CLONE_NEWNET) refused with EPERM");
}
