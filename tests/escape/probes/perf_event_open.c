/*
 * perf_event_open - a user-space-only software counter on ourselves
 * (exclude_kernel, exclude_hv), which perf_event_paranoid<=2 allows to any
 * user: only the seccomp filter refuses it.  Expected: EPERM.
 */
#define PROBE_NAME "perf_event_open"
#include "probe.h"
#include <linux/perf_event.h>
#include <sys/syscall.h>

int main(void)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof a;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	long r = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	int e = errno;
	if (r >= 0)
		close((int)r);
	expect_err("perf_event_open(self, sw cpu clock, user only)", r, e, EPERM);
	pass("perf_event_open refused with EPERM");
}
