/*
 * fs_create_usr_bin - drop a binary into /usr/bin.
 * /usr is a read-only bind mount; a new name fails with EROFS before DAC or
 * Landlock (lookup_open: !got_write).  Expected: EROFS.
 */
#define PROBE_NAME "fs_create_usr_bin"
#include "probe.h"
#include <fcntl.h>

int main(void)
{
	const char *p = "/usr/bin/berth-escape-probe";
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	int e = errno;
	expect_err("open(/usr/bin/berth-escape-probe, O_CREAT)", fd, e, EROFS);
	pass("creating %s refused with EROFS", p);
}
