/*
 * leaked_fds - the runner starts berth with extra descriptors open on host
 * objects (fd 7 on the host canary directory, fd 8 on the canary file);
 * a leaked directory fd lets fchdir()/openat() walk the host tree (runc
 * CVE-2024-21626).  berth must close everything above 2 before exec: only
 * 0, 1 and 2 may be open, and none of them may be a directory.
 * Expected: exactly fds 0, 1, 2.
 */
#define PROBE_NAME "leaked_fds"
#include "probe.h"
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

int main(void)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		fail("opendir(/proc/self/fd): %s", errname(errno));
	int self = dirfd(d);
	char extra[2048] = "";
	size_t el = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		int fd = atoi(de->d_name);
		if (fd == self || fd <= 2)
			continue;
		char lp[64], tgt[512];
		snprintf(lp, sizeof lp, "/proc/self/fd/%d", fd);
		ssize_t n = readlink(lp, tgt, sizeof tgt - 1);
		tgt[n > 0 ? n : 0] = 0;
		int k = snprintf(extra + el, sizeof extra - el, " %d->%s", fd, tgt);
		if (k > 0 && (size_t)k < sizeof extra - el)
			el += (size_t)k;
	}
	closedir(d);
	if (el)
		fail("descriptors leaked into the sandbox:%s", extra);
	for (int fd = 0; fd <= 2; fd++) {
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
			fail("fd %d is a directory", fd);
	}
	for (int fd = 3; fd < 64; fd++)
		if (fcntl(fd, F_GETFD) != -1)
			fail("fd %d is open", fd);
	pass("only fds 0, 1, 2 open (fds 7 and 8 of the runner not inherited)");
}
