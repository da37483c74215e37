/*
 * setuid_root - setresuid(0,0,0), setresgid(0,0,0) and setgroups([0]).
 * Without CAP_SETUID/CAP_SETGID: EPERM when 0 is mapped in the user
 * namespace, EINVAL when it is not (setres[ug]id check the mapping first).
 * setgroups: EPERM (no CAP_SETGID, or "deny" in /proc/self/setgroups).
 * Expected: per mapping EPERM/EINVAL; setgroups EPERM.
 */
#define PROBE_NAME "setuid_root"
#include "probe.h"
#include <grp.h>

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
	int wu = zero_mapped("/proc/self/uid_map") ? EPERM : EINVAL;
	int wg = zero_mapped("/proc/self/gid_map") ? EPERM : EINVAL;
	int r = setresuid(0, 0, 0);
	int e = errno;
	expect_err("setresuid(0,0,0)", r, e, wu);
	r = setresgid(0, 0, 0);
	e = errno;
	expect_err("setresgid(0,0,0)", r, e, wg);
	gid_t g = getgid();
	r = setgroups(1, &g);
	e = errno;
	expect_err("setgroups([own gid])", r, e, EPERM);
	pass("setresuid/setresgid to 0 refused with %s/%s, setgroups with EPERM", errname(wu), errname(wg));
}
