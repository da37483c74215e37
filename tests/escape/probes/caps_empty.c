/*
 * caps_empty - the sandbox process holds no capability at all: CapInh,
 * CapPrm, CapEff, CapBnd and CapAmb are zero in /proc/self/status and
 * capget(2) (v3) returns empty sets.  Expected: all zero.
 */
#define PROBE_NAME "caps_empty"
#include "probe.h"
#include <linux/capability.h>
#include <sys/syscall.h>

int main(void)
{
	static const char *const k[] = {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", NULL};
	for (int i = 0; k[i]; i++) {
		char v[64];
		if (status_field("/proc/self/status", k[i], v, sizeof v) != 0)
			fail("no %s in /proc/self/status", k[i]);
		if (strspn(v, "0") != strlen(v) || !*v)
			fail("%s is %s, expected 0", k[i], v);
	}
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	memset(d, 0xff, sizeof d);
	if (syscall(SYS_capget, &h, d) != 0)
		fail("capget: %s", errname(errno));
	for (int i = 0; i < 2; i++)
		if (d[i].effective || d[i].permitted || d[i].inheritable)
			fail("capget: eff %#x prm %#x inh %#x in word %d", d[i].effective, d[i].permitted,
			     d[i].inheritable, i);
	pass("all capability sets empty (status and capget)");
}
