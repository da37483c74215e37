/*
 * x32_syscall - make a system call through the x32 ABI (number | 0x40000000)
 * to dodge a filter written for x86_64 numbers.  berth's filter kills the
 * process for any foreign ABI: SIGSYS, berth exits 128+31 = 159 and nothing
 * is printed.  If the call returns (e.g. ENOSYS because the kernel lacks x32
 * and the filter let it through), the probe prints FAIL.
 * Expected: killed by SIGSYS (berth status 159).
 */
#define PROBE_NAME "x32_syscall"
#include "probe.h"
#include <sys/syscall.h>

int main(void)
{
	long r = syscall(0x40000000L | 39 /* getpid */);
	int e = errno;
	fail("x32 getpid returned %ld (%s) instead of the process being killed", r, errname(e));
}
