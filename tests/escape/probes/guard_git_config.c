/*
 * guard_git_config - rewrite .git/config (core.fsmonitor / core.hooksPath run
 * commands on the host's next git invocation): open it O_WRONLY|O_APPEND.
 * The file belongs to the caller (DAC allows it), the guard mount is
 * read-only: do_dentry_open() -> mnt_get_write_access() = EROFS.  Renaming a
 * new file over it hits the mount point: EBUSY.
 * Expected: EROFS for the open, EBUSY for the rename.
 */
#define PROBE_NAME "guard_git_config"
#include "probe.h"
#include <fcntl.h>

int main(void)
{
	const char *p = "/workspace/.git/config";
	int fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC);
	int e = errno;
	if (fd >= 0) {
		(void)!write(fd, "[core]\n\tfsmonitor = /workspace/x\n", 33);
		close(fd);
	}
	expect_err("open(.git/config, O_WRONLY)", fd, e, EROFS);
	const char *t = "/workspace/.git/berth-escape-config";
	fd = open(t, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		fail("cannot create %s: %s (precondition: .git itself is writable)", t, errname(errno));
	(void)!write(fd, "[core]\n\tfsmonitor = /workspace/x\n", 33);
	close(fd);
	int r = rename(t, p);
	e = errno;
	unlink(t);
	expect_err("rename(new file, .git/config)", r, e, EBUSY);
	pass(".git/config write refused with EROFS, replacement with EBUSY");
}
