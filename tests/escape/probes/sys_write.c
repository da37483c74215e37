/*
 * sys_write - open an existing writable-by-root sysfs attribute for writing.
 * Tries, in order, the first that exists in the sandbox:
 * /sys/kernel/mm/transparent_hugepage/enabled, /sys/power/state,
 * /sys/kernel/profiling, /sys/kernel/mm/ksm/run.  The attribute is 0644 (or
 * 0644-like) owned by the unmapped global root, so DAC fails with EACCES
 * before the read-only mount check.  Expected: EACCES.  If none exists the
 * probe fails (no silent skip).
 */
#define PROBE_NAME "sys_write"
#include "probe.h"
#include <fcntl.h>

int main(void)
{
	static const char *const c[] = {
		"/sys/kernel/mm/transparent_hugepage/enabled", "/sys/power/state",
		"/sys/kernel/profiling", "/sys/kernel/mm/ksm/run", NULL,
	};
	for (int i = 0; c[i]; i++) {
		if (access(c[i], F_OK) != 0)
			continue;
		int fd = open(c[i], O_WRONLY | O_CLOEXEC);
		int e = errno;
		if (fd >= 0)
			fail("open(%s, O_WRONLY) succeeded (nothing written)", c[i]);
		expect_err("open(sysfs attribute, O_WRONLY)", fd, e, EACCES);
		pass("opening %s for writing refused with EACCES", c[i]);
	}
	fail("none of the candidate sysfs attributes exists inside (is /sys mounted?)");
}
