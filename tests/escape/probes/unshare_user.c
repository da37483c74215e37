/*
 * unshare_user - unshare(CLONE_NEWUSER): a nested user namespace would give
 * the process a full capability set over new namespaces (the usual first
 * step of kernel exploits).  The kernel allows it to anyone, so only the
 * seccomp filter stands in the way: EPERM.  Expected: EPERM.
 */
#define PROBE_NAME "unshare_user"
#include "probe.h"
#include <sched.h>

int main(void)
{
	int r = unshare(CLONE_NEWUSER);
	int e = errno;
	expect_err("unshare(CLONE_NEWUSER)", r, e, EPERM);
	r = unshare(CLONE_NEWUSER | CLONE_NEWNS);
	e = errno;
	expect_err("unshare(CLONE_NEWUSER|CLONE_NEWNS)", r, e, EPERM);
	pass("unshare(CLONE_NEWUSER) refused with EPERM");
}
