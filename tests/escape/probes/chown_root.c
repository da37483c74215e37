/*
 * chown_root - chown a workspace file to uid/gid 0.  Without CAP_CHOWN:
 * EPERM when uid 0 is mapped in the sandbox's user namespace; EINVAL when it
 * is not mapped (make_kuid() fails before the permission check).  The probe
 * reads /proc/self/uid_map and expects exactly the one that applies.
 * Expected: EPERM if 0 is mapped, else EINVAL.
 */
#define PROBE_NAME "chown_root"
#include "probe.h"
#include <fcntl.h>

static int zero_mapped(const char *map)
{
	FILE *f = fopen(map, "re");
	if (!f)
		fail("cannot read %s: %s", map, errname(errno));
	unsigned long in, out, len;
	int mapped = 0;
	while (fscanf(f, "%lu %lu %lu", &in, &out, &len) == 3)
		if (in == 0 && len > 0)
			mapped = 1;
	fclose(f);
	return mapped;
}

int main(void)
{
	const char *p = "/workspace/berth-escape-chown";
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		fail("cannot create %s: %s (precondition)", p, errname(errno));
	close(fd);
	int want = zero_mapped("/proc/self/uid_map") ? EPERM : EINVAL;
	int r = chown(p, 0, (gid_t)-1);
	int e = errno;
	int wantg = zero_mapped("/proc/self/gid_map") ? EPERM : EINVAL;
	int r2 = chown(p, (uid_t)-1, 0);
	int e2 = errno;
	unlink(p);
	expect_err("chown(file, 0, -1)", r, e, want);
	expect_err("chown(file, -1, 0)", r2, e2, wantg);
	pass("chown to root refused with %s (uid) / %s (gid)", errname(e), errname(e2));
}
