/* SPDX-License-Identifier: MIT */
/*
 * sys.c - see sys.h.
 */
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"

int64_t berth_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int64_t berth_now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

void berth_close_all_but(int a, int b)
{
	int keep[2] = {a < b ? a : b, a < b ? b : a};
	unsigned from = 3;

	for (int i = 0; i < 2; i++) {
		if (keep[i] < (int)from)
			continue;
		if ((unsigned)keep[i] > from)
			syscall(SYS_close_range, from, (unsigned)keep[i] - 1, 0);
		from = (unsigned)keep[i] + 1;
	}
	syscall(SYS_close_range, from, ~0U, 0);
}

int berth_write_atomic(const char *path, const void *data, size_t len, mode_t mode, unsigned flags,
		       struct berth_error *err)
{
	const char *slash = strrchr(path, '/'), *base = slash != NULL ? slash + 1 : path;
	char tmp[PATH_MAX + 64];
	cleanup_close int fd = -1;
	int n;

	n = snprintf(tmp, sizeof tmp, "%.*s.%s.%d.tmp", (int)(base - path), path, base, (int)getpid());
	if (n < 0 || (size_t)n >= sizeof tmp)
		return berth_err(err, ENAMETOOLONG, "cannot write `%s`", path);
	unlink(tmp); /* left by a process of the same pid that died */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0)
		return berth_err(err, errno, "cannot create `%s`", tmp);
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, (const char *)data + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = w < 0 ? errno : EIO;
			unlink(tmp);
			return berth_err(err, e, "cannot write `%s`", tmp);
		}
		off += (size_t)w;
	}
	if (((flags & BERTH_WRITE_SYNC) && fsync(fd) < 0) || rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		return berth_err(err, e, "cannot write `%s`", path);
	}
	return 0;
}
