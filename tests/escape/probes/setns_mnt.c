/*
 * setns_mnt - setns() into the mount namespace of /proc/self/ns/mnt and of
 * /proc/1/ns/mnt.  Joining a mount namespace needs CAP_SYS_ADMIN and
 * CAP_SYS_CHROOT (and seccomp denies setns): EPERM.  (The user namespace is
 * not used: joining one's own user namespace gives EINVAL by design.)
 * Expected: EPERM.
 */
#define PROBE_NAME "setns_mnt"
#include "probe.h"
#include <fcntl.h>
#include <sched.h>

int main(void)
{
	static const char *const ns[] = {"/proc/self/ns/mnt", "/proc/self/ns/net", NULL};
	for (int i = 0; ns[i]; i++) {
		int fd = open(ns[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			fail("open(%s): %s (precondition)", ns[i], errname(errno));
		int r = setns(fd, 0);
		int e = errno;
		char what[128];
		snprintf(what, sizeof what, "setns(%s)", ns[i]);
		expect_err(what, r, e, EPERM);
		close(fd);
	}
	pass("setns into mnt and net namespaces refused with EPERM");
}
