/*
 * guard_envrc_create - create .envrc (direnv runs it on the host when the
 * user enters the directory) in a workspace that has none: directly, then by
 * renaming a prepared file onto the name.  berth makes no placeholder on the
 * host for a name that does not exist (src/sandbox/guard.h: the host user's
 * own tools keep working during a run), so both work inside; at exit berth
 * sets the file aside as `.envrc.berth-set-aside`.  The runner checks on the
 * host that no `.envrc` is left and that the set-aside copy is there (and
 * run-trust.sh that direnv's start runs nothing of it).  A name below the
 * file is ENOTDIR, as for any file.
 * Expected: open(O_CREAT) and rename work; open(.envrc/x, O_CREAT) ENOTDIR.
 */
#define PROBE_NAME "guard_envrc_create"
#include "probe.h"
#include <fcntl.h>
#include <string.h>

static const char payload[] = "touch /tmp/berth-escape-probe\n";

int main(void)
{
	const char *p = "/workspace/.envrc", *t = "/workspace/berth-escape-envrc";
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		fail("open(.envrc, O_CREAT|O_EXCL) in a workspace without one: %s (a placeholder on the "
		     "host?)",
		     errname(errno));
	close(fd);
	fd = open(t, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		fail("cannot create %s: %s (precondition)", t, errname(errno));
	if (write(fd, payload, strlen(payload)) != (ssize_t)strlen(payload))
		fail("write(%s): %s (precondition)", t, errname(errno));
	close(fd);
	if (rename(t, p) != 0)
		fail("rename(file, .envrc): %s", errname(errno));
	fd = open("/workspace/.envrc/x", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	int e = errno;
	if (fd >= 0)
		close(fd);
	expect_err("open(.envrc/x, O_CREAT)", fd, e, ENOTDIR);
	pass(".envrc made inside (no placeholder: create and rename onto it work, below it ENOTDIR); "
	     "berth sets it aside at exit");
}
