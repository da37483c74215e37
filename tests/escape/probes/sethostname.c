/*
 * sethostname - sethostname/setdomainname.  The sandbox has its own UTS
 * namespace, but the process has no CAP_SYS_ADMIN in it: EPERM.  The runner
 * also checks that the host name did not change.  Expected: EPERM.
 */
#define PROBE_NAME "sethostname"
#include "probe.h"

int main(void)
{
	int r = sethostname("berth-escape-pwned", 18);
	int e = errno;
	expect_err("sethostname", r, e, EPERM);
	r = setdomainname("berth-escape-pwned", 18);
	e = errno;
	expect_err("setdomainname", r, e, EPERM);
	pass("sethostname and setdomainname refused with EPERM");
}
