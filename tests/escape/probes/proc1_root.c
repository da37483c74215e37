/*
 * proc1_root - reach the host through /proc/1/root: open
 * /proc/1/root/<host canary path> (argv[1]).  Pid 1 of the sandbox's pid
 * namespace has the sandbox's root, so the host temp dir is not there.
 * Also checks that /proc/1 is not a host process (its root resolves inside).
 * Expected: ENOENT.
 */
#define PROBE_NAME "proc1_root"
#include "probe.h"
#include <fcntl.h>

int main(int argc, char **argv)
{
	const char *t = need_arg(argc, argv, 1, "host canary path");
	char p[4096];
	snprintf(p, sizeof p, "/proc/1/root%s", t);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	int e = errno;
	if (fd < 0 && e == EACCES) {
		/* pid 1 not ptrace-readable by us: the link is refused outright,
		 * which is also not an escape, but say so precisely. */
		pass("%s refused with EACCES (pid 1 root not accessible)", p);
	}
	expect_err("open(/proc/1/root/<host canary>)", fd, e, ENOENT);
	pass("%s does not exist (ENOENT): pid 1 sees the sandbox root", p);
}
