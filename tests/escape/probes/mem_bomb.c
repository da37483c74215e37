/*
 * mem_bomb - allocate and touch memory 1 MiB at a time (run with
 * --memory 128M).  With a cgroup memory limit (swap off) the sandbox is
 * OOM-killed: SIGKILL, berth exits 137, and this probe prints nothing.
 * Without a cgroup berth refuses --memory (exit 2) and this probe does not
 * run; were it run with an RLIMIT_AS, malloc would return NULL (ENOMEM)
 * first, and the probe passes if that happened at or below argv[1] MiB.
 * Reaching 1 GiB means no limit: FAIL.
 * Expected: killed (137); ENOMEM at <= the limit is also a pass.
 */
#define PROBE_NAME "mem_bomb"
#include "probe.h"

int main(int argc, char **argv)
{
	long limit = argc > 1 ? atol(argv[1]) : 128;
	long mib = 0;
	for (; mib < 1024; mib++) {
		char *p = malloc(1 << 20);
		if (!p) {
			int e = errno;
			if (e != ENOMEM)
				fail("malloc failed with %s after %ld MiB", errname(e), mib);
			if (mib > limit)
				fail("ENOMEM only after %ld MiB, limit %ld MiB", mib, limit);
			pass("malloc failed with ENOMEM after %ld MiB (limit %ld MiB)", mib, limit);
		}
		memset(p, 0x5a, 1 << 20);
	}
	fail("allocated and touched %ld MiB without being stopped (limit %ld MiB)", mib, limit);
}
