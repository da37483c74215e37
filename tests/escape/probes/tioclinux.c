/*
 * tioclinux - ioctl(TIOCLINUX) (console selection paste, etc.) on stdin,
 * stdout and a pty.  berth's filter denies the TIOCLINUX request: EPERM
 * (without it: ENOTTY/EINVAL on non-VT ttys, but an injection primitive on a
 * VT).  Expected: EPERM.
 */
#define PROBE_NAME "tioclinux"
#include "probe.h"
#include <fcntl.h>
#include <sys/ioctl.h>

int main(void)
{
	char sub = 6; /* TIOCL_GETSHIFTSTATE: harmless */
	int r = ioctl(0, TIOCLINUX, &sub);
	int e = errno;
	expect_err("ioctl(stdin, TIOCLINUX)", r, e, EPERM);
	sub = 6;
	r = ioctl(1, TIOCLINUX, &sub);
	e = errno;
	expect_err("ioctl(stdout, TIOCLINUX)", r, e, EPERM);
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0)
		fail("posix_openpt: %s (precondition: /dev/ptmx)", errname(errno));
	sub = 6;
	r = ioctl(m, TIOCLINUX, &sub);
	e = errno;
	expect_err("ioctl(pty, TIOCLINUX)", r, e, EPERM);
	pass("TIOCLINUX refused with EPERM");
}
