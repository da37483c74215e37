/*
 * proc1_exe_write - the runc CVE-2019-5736 shape: open /proc/<pid>/exe of a
 * process whose executable lives on the host (berth's own init or supervisor,
 * if visible in the sandbox) for writing, to overwrite the host binary.
 * Targets: pid 1 and our parent, when they are not ourselves.  Access to a
 * more privileged process's exe link is refused by ptrace_may_access
 * (EACCES); a same-credential process's exe opens only as a read-only
 * binary in use (ETXTBSY) or on a read-only mount (EROFS) - all refusals.
 * When no other process is visible (the probe is pid 1) the probe says so
 * and checks that /proc has no other pid.  The runner checks the berth
 * binary's hash did not change.
 * Expected: EACCES (ETXTBSY/EROFS/ENOENT accepted) for each visible target.
 */
#define PROBE_NAME "proc1_exe_write"
#include "probe.h"
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>

static char seen[256];

static void try(pid_t p, const char *who)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/exe", (int)p);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int e = errno;
	if (fd >= 0)
		fail("open(%s [%s], O_WRONLY) succeeded", path, who);
	if (e != EACCES && e != ETXTBSY && e != EROFS && e != ENOENT)
		fail("open(%s [%s], O_WRONLY) failed with %s", path, who, errname(e));
	size_t l = strlen(seen);
	snprintf(seen + l, sizeof seen - l, "%s%s: %s", l ? ", " : "", who, errname(e));
}

int main(void)
{
	pid_t me = getpid(), pp = getppid();
	int tried = 0;
	if (me != 1) {
		try(1, "pid 1");
		tried++;
	}
	if (pp > 1) {
		try(pp, "parent");
		tried++;
	}
	if (!tried) {
		DIR *d = opendir("/proc");
		if (!d)
			fail("opendir(/proc): %s", errname(errno));
		struct dirent *de;
		while ((de = readdir(d)))
			if (isdigit((unsigned char)de->d_name[0]) && atoi(de->d_name) != me)
				fail("process %s visible but not our parent", de->d_name);
		closedir(d);
		pass("probe is pid 1 and no other process is visible: no host executable reachable");
	}
	pass("/proc/<pid>/exe of %d supervisor process(es) not writable (%s)", tried, seen);
}
