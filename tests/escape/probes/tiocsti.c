/*
 * tiocsti - inject keystrokes with ioctl(TIOCSTI): on stdin and stdout
 * (whatever the runner gave us) and on a pty the probe makes its controlling
 * terminal (where the kernel would allow it to the owner when
 * dev.tty.legacy_tiocsti=1).  berth's seccomp filter denies the TIOCSTI
 * request: EPERM in all three cases (a pipe would otherwise say ENOTTY).
 * Expected: EPERM.
 */
#define PROBE_NAME "tiocsti"
#include "probe.h"
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

int main(void)
{
	char c = 'x';
	int r = ioctl(0, TIOCSTI, &c);
	int e = errno;
	expect_err("ioctl(stdin, TIOCSTI)", r, e, EPERM);
	r = ioctl(1, TIOCSTI, &c);
	e = errno;
	expect_err("ioctl(stdout, TIOCSTI)", r, e, EPERM);
	pid_t p = fork();
	if (p < 0)
		fail("fork: %s", errname(errno));
	if (p == 0) {
		if (setsid() < 0)
			fail("setsid: %s", errname(errno));
		int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (m < 0)
			fail("posix_openpt: %s (precondition: /dev/ptmx)", errname(errno));
		if (grantpt(m) != 0 || unlockpt(m) != 0)
			fail("grantpt/unlockpt: %s", errname(errno));
		const char *sn = ptsname(m);
		int s = sn ? open(sn, O_RDWR | O_CLOEXEC) : -1;
		if (s < 0)
			fail("open(%s): %s", sn ? sn : "?", errname(errno));
		ioctl(s, TIOCSCTTY, 0);
		r = ioctl(s, TIOCSTI, &c);
		e = errno;
		expect_err("ioctl(own controlling pty, TIOCSTI)", r, e, EPERM);
		pass("TIOCSTI refused with EPERM (stdin, stdout, controlling pty %s)", sn);
	}
	int st;
	waitpid(p, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
