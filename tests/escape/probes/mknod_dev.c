/*
 * mknod_dev - create device nodes for the host disk (block 8:0, 253:0) and
 * /dev/mem (char 1:1) in the workspace and in /tmp.  do_mknodat() calls
 * security_path_mknod() before vfs_mknod() checks CAP_MKNOD: berth's Landlock
 * ruleset handles LANDLOCK_ACCESS_FS_MAKE_BLOCK/MAKE_CHAR and grants them
 * nowhere, so the refusal is EACCES (without Landlock it would be EPERM from
 * the capability check; the mounts are nodev anyway).
 * Expected: EACCES.
 */
#define PROBE_NAME "mknod_dev"
#include "probe.h"
#include <sys/stat.h>
#include <sys/sysmacros.h>

int main(void)
{
	struct {
		const char *p;
		mode_t m;
		dev_t d;
	} t[] = {
	    {"/workspace/berth-escape-sda", S_IFBLK | 0600, makedev(8, 0)},
	    {"/workspace/berth-escape-vda", S_IFBLK | 0600, makedev(253, 0)},
	    {"/tmp/berth-escape-mem", S_IFCHR | 0600, makedev(1, 1)},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		int r = mknod(t[i].p, t[i].m, t[i].d);
		int e = errno;
		if (r == 0)
			unlink(t[i].p);
		char what[128];
		snprintf(what, sizeof what, "mknod(%s)", t[i].p);
		expect_err(what, r, e, EACCES);
	}
	pass("mknod of block and char devices refused with EACCES (Landlock)");
}
