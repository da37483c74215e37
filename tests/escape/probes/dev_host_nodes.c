/*
 * dev_host_nodes - open host device nodes that must not exist in the
 * sandbox's minimal /dev: disks (sda, vda, nvme0n1), mem, kmem, port, kmsg,
 * console, tty0, tty1, loop-control, fuse, kvm, net/tun, vsock, mapper/control,
 * watchdog, cpu/0/msr.  Expected: ENOENT for each.
 */
#define PROBE_NAME "dev_host_nodes"
#include "probe.h"
#include <fcntl.h>

int main(void)
{
	static const char *const n[] = {
	    "/dev/sda",
	    "/dev/vda",
	    "/dev/nvme0n1",
	    "/dev/mem",
	    "/dev/kmem",
	    "/dev/port",
	    "/dev/kmsg",
	    "/dev/console",
	    "/dev/tty0",
	    "/dev/tty1",
	    "/dev/loop-control",
	    "/dev/loop0",
	    "/dev/fuse",
	    "/dev/kvm",
	    "/dev/net/tun",
	    "/dev/vsock",
	    "/dev/mapper/control",
	    "/dev/watchdog",
	    "/dev/cpu/0/msr",
	    "/dev/vhost-vsock",
	    "/dev/userfaultfd",
	    NULL,
	};
	for (int i = 0; n[i]; i++) {
		int fd = open(n[i], O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		int e = errno;
		char what[96];
		snprintf(what, sizeof what, "open(%s)", n[i]);
		expect_err(what, fd, e, ENOENT);
	}
	pass("no host device node present (ENOENT for disks, mem, kmsg, console, kvm, tun, ...)");
}
