/*
 * iopl - raw I/O port access: iopl(3) and ioperm(0x80, 1, 1).  Need
 * CAP_SYS_RAWIO (and are denied by seccomp): EPERM.  Expected: EPERM.
 */
#define PROBE_NAME "iopl"
#include "probe.h"
#include <sys/io.h>

int main(void)
{
	int r = iopl(3);
	int e = errno;
	expect_err("iopl(3)", r, e, EPERM);
	r = ioperm(0x80, 1, 1);
	e = errno;
	expect_err("ioperm(0x80)", r, e, EPERM);
	pass("iopl and ioperm refused with EPERM");
}
