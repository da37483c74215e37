/*
 * syslog - read the host kernel log (SYSLOG_ACTION_READ_ALL) and change the
 * console log level (SYSLOG_ACTION_CONSOLE_LEVEL).  Both need CAP_SYSLOG
 * (the first one when dmesg_restrict=1; seccomp denies syslog(2) anyway):
 * EPERM.  Expected: EPERM.
 */
#define PROBE_NAME "syslog"
#include "probe.h"
#include <sys/klog.h>

int main(void)
{
	static char buf[4096];
	int r = klogctl(3 /* READ_ALL */, buf, sizeof buf);
	int e = errno;
	expect_err("syslog(SYSLOG_ACTION_READ_ALL)", r, e, EPERM);
	r = klogctl(10 /* SIZE_BUFFER */, NULL, 0);
	e = errno;
	expect_err("syslog(SYSLOG_ACTION_SIZE_BUFFER)", r, e, EPERM);
	pass("syslog(2) refused with EPERM");
}
