/*
 * fs_hardlink_passwd - link("/etc/passwd", "/workspace/passwd").
 * Source and target are on different mounts: do_linkat() returns EXDEV
 * before may_linkat() (protected_hardlinks).  Expected: EXDEV.
 */
#define PROBE_NAME "fs_hardlink_passwd"
#include "probe.h"

int main(void)
{
	int r = link("/etc/passwd", "/workspace/berth-escape-passwd");
	int e = errno;
	if (r == 0)
		unlink("/workspace/berth-escape-passwd");
	expect_err("link(/etc/passwd, /workspace/...)", r, e, EXDEV);
	pass("hard-linking /etc/passwd into the workspace refused with EXDEV");
}
