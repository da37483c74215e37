/*
 * reboot - reboot(2) with a deliberately wrong magic number: the kernel
 * checks CAP_SYS_BOOT before the magic, so an unprivileged caller gets EPERM
 * and a privileged one would get EINVAL (nothing happens either way).
 * Expected: EPERM.
 */
#define PROBE_NAME "reboot"
#include "probe.h"
#include <linux/reboot.h>
#include <sys/syscall.h>

int main(void)
{
	long r = syscall(SYS_reboot, 0x12345678, 0x87654321, LINUX_REBOOT_CMD_POWER_OFF, NULL);
	int e = errno;
	expect_err("reboot(bad magic, POWER_OFF)", r, e, EPERM);
	pass("reboot refused with EPERM (CAP_SYS_BOOT checked before the magic)");
}
