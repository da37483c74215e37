/*
 * sys_mkdir - create a directory under /sys/fs/cgroup (creating a cgroup is
 * the first step of the release_agent escape) and under /sys.  /sys is
 * mounted read-only (recursively): filename_create() reports EROFS for a new
 * name.  If /sys/fs/cgroup is not visible at all, ENOENT.
 * Expected: EROFS for /sys/berth-escape-probe; EROFS or ENOENT for the cgroup
 * directory.
 */
#define PROBE_NAME "sys_mkdir"
#include "probe.h"
#include <sys/stat.h>

int main(void)
{
	int r = mkdir("/sys/berth-escape-probe", 0755);
	int e = errno;
	expect_err("mkdir(/sys/berth-escape-probe)", r, e, EROFS);
	r = mkdir("/sys/fs/cgroup/berth-escape-probe", 0755);
	e = errno;
	expect_err2("mkdir(/sys/fs/cgroup/berth-escape-probe)", r, e, EROFS, ENOENT);
	pass("mkdir in /sys refused with EROFS, in /sys/fs/cgroup with %s", errname(e));
}
