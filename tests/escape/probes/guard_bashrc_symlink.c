/*
 * guard_bashrc_symlink - replace the workspace's .bashrc (the runner creates
 * one) with a symlink, by rename(2) over it and by unlink + symlink.  The
 * guard is a read-only bind mount on the file: rename onto or unlink of a
 * mount point fails with EBUSY (vfs_rename/vfs_unlink: is_local_mountpoint),
 * and writing it gives EROFS.  Expected: EBUSY, EBUSY, EROFS.
 */
#define PROBE_NAME "guard_bashrc_symlink"
#include "probe.h"
#include <fcntl.h>

int main(void)
{
	const char *p = "/workspace/.bashrc", *t = "/workspace/berth-escape-bashrc-link";
	if (symlink("/workspace/evil", t) != 0)
		fail("symlink: %s (precondition)", errname(errno));
	int r = rename(t, p);
	int e = errno;
	unlink(t);
	expect_err("rename(symlink, .bashrc)", r, e, EBUSY);
	r = unlink(p);
	e = errno;
	expect_err("unlink(.bashrc)", r, e, EBUSY);
	int fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC);
	e = errno;
	expect_err("open(.bashrc, O_WRONLY)", fd, e, EROFS);
	pass(".bashrc replacement refused with EBUSY, write with EROFS");
}
