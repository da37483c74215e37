/*
 * fs_create_root - create a file in the sandbox's / .
 * The sandbox root is expected to be mounted read-only (only /workspace,
 * /tmp and $HOME are writable), so a new name fails with EROFS, checked
 * before permissions.  EACCES would mean a writable root refused only by
 * DAC (root dir owned by another uid), which is accepted too and reported.
 * Expected: EROFS (EACCES accepted).
 */
#define PROBE_NAME "fs_create_root"
#include "probe.h"
#include <fcntl.h>

int main(void)
{
	const char *p = "/berth-escape-probe";
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	int e = errno;
	expect_err2("open(/berth-escape-probe, O_CREAT)", fd, e, EROFS, EACCES);
	pass("creating %s refused with %s", p, errname(e));
}
