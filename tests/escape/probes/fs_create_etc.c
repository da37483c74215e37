/*
 * fs_create_etc - create a new file in /etc.
 * /etc is a read-only bind mount: open(O_CREAT) of a name that does not exist
 * fails in lookup_open() with EROFS before any permission or LSM check
 * (fs/namei.c: !got_write -> create_error = -EROFS).  Expected: EROFS.
 */
#define PROBE_NAME "fs_create_etc"
#include "probe.h"
#include <fcntl.h>

int main(void)
{
	const char *p = "/etc/berth-escape-probe";
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	int e = errno;
	expect_err("open(/etc/berth-escape-probe, O_CREAT)", fd, e, EROFS);
	pass("creating %s refused with EROFS", p);
}
