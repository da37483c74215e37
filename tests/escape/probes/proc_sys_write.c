/*
 * proc_sys_write - change the host name through /proc/sys/kernel/hostname
 * (O_WRONLY).  proc_sys_permission()/test_perm(): the file is 0644 owned by
 * the global root, which the sandbox uid is not, so the open fails with
 * EACCES before the read-only /proc/sys mount is even looked at.
 * Expected: EACCES.
 */
#define PROBE_NAME "proc_sys_write"
#include "probe.h"
#include <fcntl.h>

int main(void)
{
	int fd = open("/proc/sys/kernel/hostname", O_WRONLY | O_CLOEXEC);
	int e = errno;
	if (fd >= 0) {
		ssize_t w = write(fd, "pwned", 5);
		fail("open(/proc/sys/kernel/hostname, O_WRONLY) succeeded (write returned %zd)", w);
	}
	expect_err("open(/proc/sys/kernel/hostname, O_WRONLY)", fd, e, EACCES);
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	e = errno;
	expect_err("open(/proc/sys/vm/drop_caches, O_WRONLY)", fd, e, EACCES);
	pass("writing /proc/sys refused with EACCES");
}
