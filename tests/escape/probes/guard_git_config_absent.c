/*
 * guard_git_config_absent - the workspace is a git repository whose .git has
 * no config file (git works without one: every setting defaults).  The
 * sandbox creates .git/config with core.fsmonitor / core.hooksPath pointing
 * into the workspace: the host user's next `git status` runs it.  The guard
 * list names .git/config, so it must stay uncreatable even when absent.
 * berth covers it with a read-only placeholder; the exact errno follows from
 * what the placeholder is, which the probe looks at first:
 *  - a directory: open(O_CREAT) says EISDIR (do_open), rename onto it EISDIR;
 *  - a regular file without write permission for us (e.g. an empty 0444
 *    file): may_open() fails in DAC with EACCES before the read-only mount;
 *  - a regular file we may write: the read-only mount says EROFS;
 *  and rename of a new file onto a file placeholder hits the mount point:
 *  EBUSY.  Nothing there at all means no guard: the create would succeed.
 * The runner checks that no .git/config is left on the host afterwards.
 * Expected: refused, with the errno that matches the placeholder.
 */
#define PROBE_NAME "guard_git_config_absent"
#include "probe.h"
#include <fcntl.h>
#include <sys/stat.h>

int main(void)
{
	const char *p = "/workspace/.git/config", *t = "/workspace/.git/berth-escape-config";
	if (access("/workspace/.git/HEAD", F_OK) != 0)
		fail("no /workspace/.git/HEAD: the runner did not set up a repository (cannot test)");
	struct stat st;
	int want_open, want_rename;
	const char *kind;
	if (lstat(p, &st) != 0) {
		kind = "nothing (no guard)";
		want_open = want_rename = EROFS; /* anything but success would do; success is FAIL */
	} else if (S_ISDIR(st.st_mode)) {
		kind = "directory placeholder";
		want_open = want_rename = EISDIR;
	} else if (S_ISREG(st.st_mode)) {
		int w = st.st_uid == getuid() ? (st.st_mode & S_IWUSR) : (st.st_mode & S_IWOTH);
		kind = w ? "writable-mode file placeholder" : "read-only-mode file placeholder";
		want_open = w ? EROFS : EACCES;
		want_rename = EBUSY;
	} else {
		fail(".git/config is neither a file nor a directory (mode %o)", st.st_mode);
	}
	int fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	int e = errno;
	if (fd >= 0) {
		(void)!write(fd, "[core]\n\tfsmonitor = /workspace/evil\n", 36);
		close(fd);
	}
	expect_err("open(.git/config, O_WRONLY|O_CREAT) with no config in .git", fd, e, want_open);
	fd = open(t, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		fail("cannot create %s: %s (precondition: .git is writable)", t, errname(errno));
	(void)!write(fd, "[core]\n\tfsmonitor = /workspace/evil\n", 36);
	close(fd);
	int r = rename(t, p);
	int e2 = errno;
	unlink(t);
	expect_err("rename(new file, .git/config)", r, e2, want_rename);
	pass("absent .git/config guarded by a %s: create refused with %s, rename with %s", kind,
	     errname(e), errname(e2));
}
