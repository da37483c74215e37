/*
 * mount_tmpfs - mount a tmpfs over /etc (to replace its contents) and on
 * /tmp/x.  The sandbox process has no capabilities in any user namespace
 * (and seccomp denies mount(2)): EPERM.  Expected: EPERM.
 */
#define PROBE_NAME "mount_tmpfs"
#include "probe.h"
#include <sys/mount.h>
#include <sys/stat.h>

int main(void)
{
	int r = mount("none", "/etc", "tmpfs", 0, "size=1m");
	int e = errno;
	expect_err("mount(tmpfs, /etc)", r, e, EPERM);
	mkdir("/tmp/berth-escape-mnt", 0700);
	r = mount("none", "/tmp/berth-escape-mnt", "tmpfs", 0, "size=1m");
	e = errno;
	expect_err("mount(tmpfs, /tmp/berth-escape-mnt)", r, e, EPERM);
	r = mount("/workspace", "/workspace", NULL, MS_REMOUNT | MS_BIND, NULL);
	e = errno;
	expect_err("mount(MS_REMOUNT|MS_BIND, /workspace)", r, e, EPERM);
	pass("mount(2) refused with EPERM");
}
