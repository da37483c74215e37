/*
 * proc_sysrq_trigger - open /proc/sysrq-trigger for writing (a write of 'b'
 * would reboot the host).  The file is 0200 owned by the global root; the
 * sandbox uid is someone else and has no CAP_DAC_OVERRIDE, so may_open()
 * fails with EACCES (before the read-only bind is checked).
 * argv[1] is "present" or "absent": whether the host kernel has the file
 * (CONFIG_MAGIC_SYSRQ); when absent, the open fails with ENOENT.
 * Expected: EACCES (ENOENT when the host has no sysrq-trigger).  The probe
 * never writes anything.
 */
#define PROBE_NAME "proc_sysrq_trigger"
#include "probe.h"
#include <fcntl.h>

int main(int argc, char **argv)
{
	const char *host = need_arg(argc, argv, 1, "present|absent");
	int want = strcmp(host, "absent") == 0 ? ENOENT : EACCES;
	int fd = open("/proc/sysrq-trigger", O_WRONLY | O_CLOEXEC);
	int e = errno;
	if (fd >= 0)
		fail("open(/proc/sysrq-trigger, O_WRONLY) succeeded (nothing written)");
	expect_err("open(/proc/sysrq-trigger, O_WRONLY)", fd, e, want);
	pass("opening /proc/sysrq-trigger for writing refused with %s (host: %s)", errname(e), host);
}
