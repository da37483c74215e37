/* SPDX-License-Identifier: MIT */
/*
 * rmtree.c - rm -rf of a tree berth made (rmtree.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rmtree.h"

/* rm -rf below @dfd, making directories writable first; @dfd is consumed.
 * Returns how many entries stayed. */
static int rm_below(int dfd, int depth)
{
	DIR *d;
	struct dirent *de;
	int bad = 0;

	if (depth > 300) {
		close(dfd);
		return 1;
	}
	fchmod(dfd, 0700);
	d = fdopendir(dfd);
	if (d == NULL) {
		close(dfd);
		return 1;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == 0)
			continue;
		if (errno == EISDIR || errno == EPERM) {
			int sub =
			    openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0) {
				bad += rm_below(sub, depth + 1);
				if (unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) == 0)
					continue;
			}
		}
		bad++;
	}
	closedir(d);
	return bad;
}

int berth_rmtree(const char *path, const char *what, struct berth_error *err)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int bad;

	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return what != NULL ? berth_err(err, errno, "cannot remove %s `%s`", what, path)
				    : berth_err(err, errno, "cannot remove `%s`", path);
	}
	bad = rm_below(fd, 0);
	if (rmdir(path) < 0 || bad > 0)
		return what != NULL
			   ? berth_err(err, errno, "cannot remove %s `%s` (%d entries left)", what, path, bad)
			   : berth_err(err, errno, "cannot remove `%s` (%d entries left)", path, bad);
	return 0;
}
