/*
 * fs_rename_from_etc - steal /etc/hostname: rename("/etc/hostname",
 * "/workspace/h").  Different mounts: EXDEV (checked before the read-only
 * source mount and before permissions).  Expected: EXDEV.
 */
#define PROBE_NAME "fs_rename_from_etc"
#include "probe.h"

int main(void)
{
	int r = rename("/etc/hostname", "/workspace/berth-escape-hostname");
	int e = errno;
	expect_err("rename(/etc/hostname, /workspace/...)", r, e, EXDEV);
	pass("renaming /etc/hostname into the workspace refused with EXDEV");
}
