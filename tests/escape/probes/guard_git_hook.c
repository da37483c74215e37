/*
 * guard_git_hook - plant a git hook: create .git/hooks/pre-commit in a
 * workspace that has a .git directory (the runner makes one, with a hooks/
 * directory).  The guard bind-mounts .git/hooks read-only: EROFS for a new
 * name.  The runner checks the host file does not exist afterwards.
 * Expected: EROFS.
 */
#define PROBE_NAME "guard_git_hook"
#include "probe.h"
#include <fcntl.h>

int main(void)
{
	const char *p = "/workspace/.git/hooks/pre-commit";
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	int e = errno;
	if (fd >= 0) {
		(void)!write(fd, "#!/bin/sh\necho pwned\n", 21);
		close(fd);
	}
	expect_err("open(.git/hooks/pre-commit, O_CREAT)", fd, e, EROFS);
	pass(".git/hooks/pre-commit creation refused with EROFS");
}
