/*
 * settimeofday - change the host clock/timezone: settimeofday(NULL, current
 * tz) and clock_settime(CLOCK_REALTIME, now) (values chosen to be harmless).
 * security_settime64() needs CAP_SYS_TIME in the initial namespace (and
 * seccomp denies them): EPERM.  Expected: EPERM.
 */
#define PROBE_NAME "settimeofday"
#include "probe.h"
#include <sys/time.h>
#include <time.h>

int main(void)
{
	struct timeval tv;
	struct timezone tz;
	memset(&tz, 0, sizeof tz);
	gettimeofday(&tv, &tz);
	int r = settimeofday(NULL, &tz);
	int e = errno;
	expect_err("settimeofday(NULL, tz)", r, e, EPERM);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	r = clock_settime(CLOCK_REALTIME, &ts);
	e = errno;
	expect_err("clock_settime(CLOCK_REALTIME)", r, e, EPERM);
	pass("settimeofday and clock_settime refused with EPERM");
}
