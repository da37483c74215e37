/*
 * io_uring_setup - io_uring bypasses seccomp for the operations it performs
 * and is a large attack surface; berth denies io_uring_setup (EPERM).
 * io_uring_enter/register on a non-ring fd must fail too (EPERM if also
 * filtered, else EOPNOTSUPP/EBADF: harmless without a ring).
 * Raw syscall numbers (x86_64: 425, 426, 427).  Expected: EPERM for setup.
 */
#define PROBE_NAME "io_uring_setup"
#include "probe.h"
#include <sys/syscall.h>

int main(void)
{
	unsigned char params[120]; /* struct io_uring_params */
	memset(params, 0, sizeof params);
	long r = syscall(425, 8, params);
	int e = errno;
	if (r >= 0)
		close((int)r);
	expect_err("io_uring_setup(8)", r, e, EPERM);
	r = syscall(426, 0, 0, 0, 0, NULL, 0);
	int e2 = errno;
	if (r != -1 || (e2 != EPERM && e2 != EOPNOTSUPP && e2 != EBADF))
		fail("io_uring_enter(0) returned %ld (%s)", r, errname(e2));
	r = syscall(427, 0, 0, NULL, 0);
	int e3 = errno;
	if (r != -1 || (e3 != EPERM && e3 != EOPNOTSUPP && e3 != EBADF))
		fail("io_uring_register(0) returned %ld (%s)", r, errname(e3));
	pass("io_uring_setup refused with EPERM (enter: %s, register: %s)", errname(e2), errname(e3));
}
