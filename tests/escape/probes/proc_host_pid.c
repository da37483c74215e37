/*
 * proc_host_pid - look at a host process through /proc/<host pid> (argv[1])
 * and count the processes visible in /proc.  The sandbox's /proc belongs to
 * its own pid namespace: ENOENT, and only a handful of pids are listed.
 * Expected: ENOENT.
 */
#define PROBE_NAME "proc_host_pid"
#include "probe.h"
#include <ctype.h>
#include <dirent.h>
#include <sys/stat.h>

int main(int argc, char **argv)
{
	const char *p = need_arg(argc, argv, 1, "host pid");
	char path[64];
	snprintf(path, sizeof path, "/proc/%s/cmdline", p);
	struct stat st;
	int r = stat(path, &st);
	int e = errno;
	expect_err("stat(/proc/<host pid>/cmdline)", r, e, ENOENT);
	DIR *d = opendir("/proc");
	if (!d)
		fail("opendir(/proc): %s", errname(errno));
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		if (isdigit((unsigned char)de->d_name[0]))
			n++;
	closedir(d);
	if (n > 8)
		fail("%d processes visible in /proc (expected only the sandbox's few)", n);
	pass("/proc/%s absent (ENOENT); %d processes visible", p, n);
}
