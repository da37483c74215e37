/*
 * umount_workspace - unmount the guard mounts / the workspace / /etc to
 * uncover what is below.  umount2() needs CAP_SYS_ADMIN (and is denied by
 * seccomp): EPERM.  Expected: EPERM for each.
 */
#define PROBE_NAME "umount_workspace"
#include "probe.h"
#include <sys/mount.h>

int main(void)
{
	static const char *const t[] = {
	    "/workspace/.git/hooks", "/workspace", "/etc", "/proc/sys", "/", NULL};
	for (int i = 0; t[i]; i++) {
		int r = umount2(t[i], MNT_DETACH);
		int e = errno;
		char what[256];
		snprintf(what, sizeof what, "umount2(%s, MNT_DETACH)", t[i]);
		expect_err(what, r, e, EPERM);
	}
	pass("umount2 refused with EPERM (guards, /workspace, /etc, /proc/sys, /)");
}
