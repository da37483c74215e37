/*
 * fs_read_shadow - read /etc/shadow.
 * /etc/shadow is 0640 root:shadow on the host; inside the user namespace its
 * owner is unmapped and the sandbox uid is never 0 and holds no
 * CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH, so generic_permission() says EACCES.
 * Expected: EACCES.  (ENOENT would mean /etc is not the host's /etc: FAIL,
 * the runner checks that /etc/shadow exists on the host.)
 */
#define PROBE_NAME "fs_read_shadow"
#include "probe.h"
#include <fcntl.h>

int main(void)
{
	int fd = open("/etc/shadow", O_RDONLY | O_CLOEXEC);
	int e = errno;
	expect_err("open(/etc/shadow, O_RDONLY)", fd, e, EACCES);
	pass("reading /etc/shadow refused with EACCES");
}
