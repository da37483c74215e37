/*
 * fs_root_home_absent - list /root.
 * The contract says /root is absent inside the sandbox.  Expected: ENOENT.
 */
#define PROBE_NAME "fs_root_home_absent"
#include "probe.h"
#include <fcntl.h>

int main(void)
{
	int fd = open("/root", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int e = errno;
	expect_err("open(/root, O_DIRECTORY)", fd, e, ENOENT);
	pass("/root is absent (ENOENT)");
}
