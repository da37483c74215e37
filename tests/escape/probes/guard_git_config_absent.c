/*
 * guard_git_config_absent - the workspace is a git repository whose .git has
 * no config file (git works without one: every setting defaults).  The
 * sandbox creates .git/config with core.fsmonitor pointing into the
 * workspace: the host user's next `git status` would run it.  berth makes no
 * placeholder on the host for a file that does not exist (src/sandbox/guard.h),
 * so the create works inside, and so does renaming a new file onto the name;
 * at exit berth sets aside a config the sandbox made that holds a key outside
 * git's inert list (here core.fsmonitor) as `config.berth-set-aside`.  The
 * runner checks on the host that no .git/config is left and that the
 * set-aside copy is there; run-trust.sh that the host's git runs nothing.
 * Expected: open(O_CREAT) and rename work.
 */
#define PROBE_NAME "guard_git_config_absent"
#include "probe.h"
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

static const char cfg[] = "[core]\n\tfsmonitor = /workspace/evil\n";

int main(void)
{
	const char *p = "/workspace/.git/config", *t = "/workspace/.git/berth-escape-config";
	struct stat st;
	if (access("/workspace/.git/HEAD", F_OK) != 0)
		fail("no /workspace/.git/HEAD: the runner did not set up a repository (cannot test)");
	if (lstat(p, &st) == 0)
		fail(".git/config exists inside (mode %o) though the host has none: a placeholder",
		     st.st_mode);
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		fail("open(.git/config, O_CREAT|O_EXCL) with no config in .git: %s", errname(errno));
	close(fd);
	fd = open(t, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		fail("cannot create %s: %s (precondition: .git is writable)", t, errname(errno));
	if (write(fd, cfg, strlen(cfg)) != (ssize_t)strlen(cfg))
		fail("write(%s): %s (precondition)", t, errname(errno));
	close(fd);
	if (rename(t, p) != 0)
		fail("rename(new file, .git/config): %s", errname(errno));
	pass(".git/config made inside with core.fsmonitor (no placeholder: create and rename work); "
	     "berth sets it aside at exit");
}
