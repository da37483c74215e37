/*
 * guard_envrc_create - create .envrc (direnv runs it on the host when the
 * user enters the directory) in a workspace that has none, directly and by
 * renaming a prepared file onto the name.  The guard must cover the absent
 * file: expected EROFS for the open(O_CREAT) and EBUSY or EROFS for the
 * rename (placeholder mount).  The runner checks no .envrc appears on the
 * host.  Expected: both refused (EROFS; rename EBUSY/EROFS).
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
	expect_err("open(.envrc, O_CREAT)", fd, e, EROFS);
	fd = open(t, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		fail("cannot create %s: %s (precondition)", t, errname(errno));
	close(fd);
	int r = rename(t, p);
	e = errno;
	unlink(t);
	expect_err2("rename(file, .envrc)", r, e, EBUSY, EROFS);
	pass(".envrc creation refused with EROFS, rename onto it with %s", errname(e));
}
