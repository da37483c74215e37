/*
 * sys_write - open an existing writable-by-root sysfs attribute for writing.
 * Tries, in order, the first that exists in the sandbox:
 * /sys/kernel/mm/transparent_hugepage/enabled, /sys/power/state,
 * /sys/kernel/profiling, /sys/kernel/mm/ksm/run.  Which refusal comes first
 * depends on how /sys is mounted, and the probe reads /proc/self/mountinfo
 * to know: a fresh sysfs mounted read-only has a read-only superblock, and
 * inode_permission() -> sb_permission() says EROFS before any DAC check; a
 * read-only bind of the host's sysfs keeps a writable superblock, so DAC on
 * the root-owned 0644 attribute says EACCES first.
 * Expected: EROFS (fresh ro sysfs) or EACCES (ro bind), exactly per mount.
 * If no candidate exists the probe fails (no silent skip).
 */
#define PROBE_NAME "sys_write"
#include "probe.h"
#include <fcntl.h>

/* Whether the superblock of the mount at /sys is read-only. */
static int sys_sb_ro(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		fail("cannot read /proc/self/mountinfo: %s", errname(errno));
	char line[4096];
	int ro = -1;
	while (fgets(line, sizeof line, f)) {
		char mp[1024], super[1024] = "";
		char *sep = strstr(line, " - ");
		if (!sep || sscanf(line, "%*s %*s %*s %*s %1023s", mp) != 1)
			continue;
		if (strcmp(mp, "/sys") != 0)
			continue;
		if (sscanf(sep + 3, "%*s %*s %1023s", super) != 1)
			continue;
		ro = strncmp(super, "ro", 2) == 0 && (super[2] == ',' || super[2] == 0);
	}
	fclose(f);
	if (ro < 0)
		fail("/sys is not a mount point in the sandbox");
	return ro;
}

int main(void)
{
	int want = sys_sb_ro() ? EROFS : EACCES;
	static const char *const c[] = {
	    "/sys/kernel/mm/transparent_hugepage/enabled",
	    "/sys/power/state",
	    "/sys/kernel/profiling",
	    "/sys/kernel/mm/ksm/run",
	    NULL,
	};
	for (int i = 0; c[i]; i++) {
		if (access(c[i], F_OK) != 0)
			continue;
		int fd = open(c[i], O_WRONLY | O_CLOEXEC);
		int e = errno;
		if (fd >= 0)
			fail("open(%s, O_WRONLY) succeeded (nothing written)", c[i]);
		expect_err("open(sysfs attribute, O_WRONLY)", fd, e, want);
		pass("opening %s for writing refused with %s", c[i], errname(e));
	}
	fail("none of the candidate sysfs attributes exists inside (is /sys mounted?)");
}
