/*
 * guard_git_rename - get around the .git/hooks and .git/config guards by
 * moving .git itself away and building a new one: rename(".git",
 * ".git-old").  berth pins .git with a bind mount, and a mount point cannot
 * be renamed (vfs_rename: is_local_mountpoint): EBUSY.  Renaming .git/hooks
 * (a guard mount) likewise: EBUSY.  Expected: EBUSY, EBUSY.
 */
#define PROBE_NAME "guard_git_rename"
#include "probe.h"

int main(void)
{
	int r = rename("/workspace/.git", "/workspace/berth-escape-git-old");
	int e = errno;
	if (r == 0)
		rename("/workspace/berth-escape-git-old", "/workspace/.git");
	expect_err("rename(.git, .git-old)", r, e, EBUSY);
	r = rename("/workspace/.git/hooks", "/workspace/.git/berth-escape-hooks-old");
	e = errno;
	if (r == 0)
		rename("/workspace/.git/berth-escape-hooks-old", "/workspace/.git/hooks");
	expect_err("rename(.git/hooks, .git/hooks-old)", r, e, EBUSY);
	pass("renaming .git and .git/hooks refused with EBUSY (pinned mount points)");
}
