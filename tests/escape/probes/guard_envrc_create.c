/*
 * guard_envrc_create - create .envrc (direnv runs it on the host when the
 * user enters the directory) in a workspace that has none, directly, by
 * renaming a prepared file onto the name, and by creating a file below the
 * name.  berth guards an absent entry with a placeholder: a mode-0000 FIFO
 * bind-mounted read-only onto itself (src/sandbox/guard.h).  open(O_CREAT) of
 * the existing FIFO fails in DAC with EACCES (may_open: no write bit, no
 * CAP_DAC_OVERRIDE), rename onto a mount point is EBUSY, and a name below a
 * FIFO is ENOTDIR.  The runner checks that no .envrc is left on the host.
 * Expected: EACCES, EBUSY, ENOTDIR.
 */
#define PROBE_NAME "guard_envrc_create"
#include "probe.h"
#include <fcntl.h>

int main(void)
{
	const char *p = "/workspace/.envrc", *t = "/workspace/berth-escape-envrc";
	int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	int e = errno;
	if (fd >= 0)
		close(fd);
	expect_err("open(.envrc, O_CREAT)", fd, e, EACCES);
	fd = open(t, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		fail("cannot create %s: %s (precondition)", t, errname(errno));
	close(fd);
	int r = rename(t, p);
	e = errno;
	unlink(t);
	expect_err("rename(file, .envrc)", r, e, EBUSY);
	fd = open("/workspace/.envrc/x", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	e = errno;
	if (fd >= 0)
		close(fd);
	expect_err("open(.envrc/x, O_CREAT)", fd, e, ENOTDIR);
	pass(".envrc creation refused with EACCES (mode-0000 placeholder), rename onto it with EBUSY, below it with ENOTDIR");
}
