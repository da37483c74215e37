/*
 * fs_symlink_host_canary - plant /workspace/c -> <host canary path> (argv[1],
 * a file in a host temp dir outside the workspace) and open it read-write,
 * with O_CREAT.  Symlinks are resolved in the sandbox's mount namespace where
 * that directory does not exist.  Expected: ENOENT.
 */
#define PROBE_NAME "fs_symlink_host_canary"
#include "probe.h"
#include <fcntl.h>

int main(int argc, char **argv)
{
	const char *t = need_arg(argc, argv, 1, "host canary path");
	const char *l = "/workspace/berth-escape-canary-link";
	if (symlink(t, l) != 0)
		fail("symlink in workspace failed: %s (precondition)", errname(errno));
	int fd = open(l, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	int e = errno;
	unlink(l);
	expect_err("open(workspace symlink -> host canary, O_RDWR|O_CREAT)", fd, e, ENOENT);
	pass("host canary %s unreachable through a symlink (ENOENT)", t);
}
