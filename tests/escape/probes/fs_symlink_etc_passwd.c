/*
 * fs_symlink_etc_passwd - plant /workspace/pw -> /etc/passwd and open it for
 * writing (no O_TRUNC).  The link is followed inside the sandbox to the
 * read-only /etc/passwd owned by an unmapped uid, mode 0644: may_open() ->
 * inode_permission(MAY_WRITE) fails in DAC before the read-only mount is
 * checked in do_dentry_open().  Expected: EACCES.
 */
#define PROBE_NAME "fs_symlink_etc_passwd"
#include "probe.h"
#include <fcntl.h>

int main(void)
{
	const char *l = "/workspace/berth-escape-pw";
	if (symlink("/etc/passwd", l) != 0)
		fail("symlink in workspace failed: %s (precondition)", errname(errno));
	int fd = open(l, O_WRONLY | O_APPEND | O_CLOEXEC);
	int e = errno;
	unlink(l);
	expect_err("open(workspace symlink -> /etc/passwd, O_WRONLY)", fd, e, EACCES);
	pass("writing /etc/passwd through a workspace symlink refused with EACCES");
}
