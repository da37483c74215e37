/*
 * mount_remount_rw - remount read-only /etc and /usr read-write
 * (MS_REMOUNT|MS_BIND without MS_RDONLY).  No CAP_SYS_ADMIN, and mount(2)
 * is denied by seccomp: EPERM.  Expected: EPERM.
 */
#define PROBE_NAME "mount_remount_rw"
#include "probe.h"
#include <sys/mount.h>

int main(void)
{
	int r = mount(NULL, "/etc", NULL, MS_REMOUNT | MS_BIND, NULL);
	int e = errno;
	expect_err("mount(MS_REMOUNT|MS_BIND, /etc, rw)", r, e, EPERM);
	r = mount(NULL, "/usr", NULL, MS_REMOUNT | MS_BIND, NULL);
	e = errno;
	expect_err("mount(MS_REMOUNT|MS_BIND, /usr, rw)", r, e, EPERM);
	pass("remounting /etc and /usr read-write refused with EPERM");
}
