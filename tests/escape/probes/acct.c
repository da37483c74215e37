/*
 * acct - switch on process accounting into a workspace file.  Needs
 * CAP_SYS_PACCT (checked first; seccomp also denies acct): EPERM.
 * Expected: EPERM.
 */
#define PROBE_NAME "acct"
#include "probe.h"
#include <fcntl.h>

int main(void)
{
	const char *p = "/workspace/berth-escape-acct";
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	int r = acct(p);
	int e = errno;
	if (r == 0)
		acct(NULL);
	unlink(p);
	expect_err("acct(/workspace/file)", r, e, EPERM);
	pass("acct refused with EPERM");
}
