/*
 * guard_envrc_create - create .envrc (direnv runs it on the host when the
 * user enters the directory) in a workspace that has none, directly and by
 * renaming a prepared file onto the name, and creating a file inside the
 * name.  berth guards an absent entry with a placeholder: an empty 0555
 * directory bind-mounted read-only.  open(O_CREAT) of an existing directory
 * is EISDIR (do_open), rename of a file onto a directory is EISDIR
 * (may_delete, before the mount point's EBUSY), and a new name inside the
 * read-only placeholder is EROFS.  The runner checks that no .envrc is left
 * on the host.  Expected: EISDIR, EISDIR, EROFS.
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
	expect_err("open(.envrc, O_CREAT)", fd, e, EISDIR);
	fd = open(t, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		fail("cannot create %s: %s (precondition)", t, errname(errno));
	close(fd);
	int r = rename(t, p);
	e = errno;
	unlink(t);
	expect_err("rename(file, .envrc)", r, e, EISDIR);
	fd = open("/workspace/.envrc/x", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	e = errno;
	if (fd >= 0)
		close(fd);
	expect_err("open(.envrc/x, O_CREAT)", fd, e, EROFS);
	pass(".envrc creation refused with EISDIR (read-only placeholder directory), rename onto it with EISDIR, inside it with EROFS");
}
