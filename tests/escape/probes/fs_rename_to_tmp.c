/*
 * fs_rename_to_tmp - rename a workspace file to /tmp (a separate tmpfs):
 * EXDEV.  /tmp inside is private; the runner checks the host /tmp did not get
 * the file.  Expected: EXDEV.
 */
#define PROBE_NAME "fs_rename_to_tmp"
#include "probe.h"
#include <fcntl.h>

int main(void)
{
	const char *s = "/workspace/berth-escape-mv";
	int fd = open(s, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		fail("cannot create %s: %s (precondition)", s, errname(errno));
	close(fd);
	int r = rename(s, "/tmp/berth-escape-probe");
	int e = errno;
	unlink(s);
	expect_err("rename(/workspace/f, /tmp/berth-escape-probe)", r, e, EXDEV);
	pass("renaming a workspace file to /tmp refused with EXDEV");
}
