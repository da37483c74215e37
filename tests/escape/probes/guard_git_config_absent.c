/*
 * guard_git_config_absent - the workspace is a git repository whose .git has
 * no config file (git works without one: every setting defaults).  The
 * sandbox creates .git/config with core.fsmonitor / core.hooksPath pointing
 * into the workspace: the host user's next `git status` runs it.  The guard
 * list names .git/config, so it must stay uncreatable even when absent.
 * Expected: open(.git/config, O_CREAT) refused (EISDIR with a placeholder
 * directory like other absent guarded entries, or EROFS); the runner checks
 * that no .git/config exists on the host afterwards.
 */
#define PROBE_NAME "guard_git_config_absent"
#include "probe.h"
#include <fcntl.h>

int main(void)
{
	const char *p = "/workspace/.git/config";
	if (access("/workspace/.git/HEAD", F_OK) != 0)
		fail("no /workspace/.git/HEAD: the runner did not set up a repository (cannot test)");
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	int e = errno;
	if (fd >= 0) {
		(void)!write(fd, "[core]\n\tfsmonitor = /workspace/evil\n", 36);
		close(fd);
	}
	expect_err2("open(.git/config, O_CREAT) with no config in .git", fd, e, EISDIR, EROFS);
	pass("creating the absent .git/config refused with %s", errname(e));
}
