/*
 * pivot_root - pivot_root("/workspace", "/workspace/old").
 * Needs CAP_SYS_ADMIN in the mount namespace's user namespace (and is denied
 * by seccomp): EPERM.  Expected: EPERM.
 */
#define PROBE_NAME "pivot_root"
#include "probe.h"
#include <sys/stat.h>
#include <sys/syscall.h>

int main(void)
{
	mkdir("/workspace/berth-escape-old", 0755);
	long r = syscall(SYS_pivot_root, "/workspace", "/workspace/berth-escape-old");
	int e = errno;
	rmdir("/workspace/berth-escape-old");
	expect_err("pivot_root(/workspace, /workspace/old)", r, e, EPERM);
	pass("pivot_root refused with EPERM");
}
