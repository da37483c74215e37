/*
 * cgroup_write - the cgroup escapes: open for writing release_agent,
 * cgroup.procs, notify_on_release and cgroup.subtree_control at the top of
 * every cgroup hierarchy visible under /sys/fs/cgroup (v1 and v2 layouts).
 * Each open must fail: EROFS (read-only mount), EACCES (owned by the unmapped
 * root) or ENOENT (not visible).  Any success is an escape path.
 * Expected: every attempt fails with one of EROFS/EACCES/ENOENT.
 */
#define PROBE_NAME "cgroup_write"
#include "probe.h"
#include <dirent.h>
#include <fcntl.h>

static int tried, seen;

static void try(const char *path)
{
	tried++;
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int e = errno;
	if (fd >= 0)
		fail("open(%s, O_WRONLY) succeeded", path);
	if (e != EROFS && e != EACCES && e != ENOENT)
		fail("open(%s, O_WRONLY) failed with %s, expected EROFS/EACCES/ENOENT", path, errname(e));
	if (e != ENOENT)
		seen++;
}

int main(void)
{
	static const char *const files[] = {"release_agent",          "cgroup.procs", "notify_on_release",
					    "cgroup.subtree_control", "tasks",        NULL};
	char p[1024];
	for (int i = 0; files[i]; i++) {
		snprintf(p, sizeof p, "/sys/fs/cgroup/%s", files[i]);
		try(p);
	}
	DIR *d = opendir("/sys/fs/cgroup");
	if (d) {
		struct dirent *de;
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			for (int i = 0; files[i]; i++) {
				snprintf(p, sizeof p, "/sys/fs/cgroup/%s/%s", de->d_name, files[i]);
				try(p);
			}
		}
		closedir(d);
	}
	pass("%d cgroup control files refused (%d existed, EROFS/EACCES; the rest ENOENT)", tried, seen);
}
