/*
 * fs_rename_to_etc - move a workspace file over /etc/profile.d/... :
 * rename("/workspace/f", "/etc/berth-escape-probe").  Different mounts:
 * do_renameat2() fails with EXDEV before mnt_want_write().  Expected: EXDEV.
 */
#define PROBE_NAME "fs_rename_to_etc"
#include "probe.h"
#include <fcntl.h>

int main(void)
{
	const char *s = "/workspace/berth-escape-mv";
	int fd = open(s, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		fail("cannot create %s: %s (precondition)", s, errname(errno));
	close(fd);
	int r = rename(s, "/etc/berth-escape-probe");
	int e = errno;
	unlink(s);
	expect_err("rename(/workspace/f, /etc/berth-escape-probe)", r, e, EXDEV);
	pass("renaming a workspace file into /etc refused with EXDEV");
}
