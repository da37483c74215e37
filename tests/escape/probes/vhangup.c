/*
 * vhangup - hang up the controlling terminal (shared with the host user's
 * session when berth passes its terminal through).  Needs CAP_SYS_TTY_CONFIG
 * (and seccomp denies it): EPERM.  Expected: EPERM.
 */
#define PROBE_NAME "vhangup"
#include "probe.h"

int main(void)
{
	int r = vhangup();
	int e = errno;
	expect_err("vhangup()", r, e, EPERM);
	pass("vhangup refused with EPERM");
}
