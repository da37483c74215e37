/*
 * securebits - the securebits are set and locked (contract: "securebits
 * locked"): SECBIT_NOROOT with all four *_LOCKED bits
 * (NOROOT_LOCKED, NO_SETUID_FIXUP_LOCKED, KEEP_CAPS_LOCKED,
 * NO_CAP_AMBIENT_RAISE_LOCKED), and clearing them with
 * prctl(PR_SET_SECUREBITS, 0) fails: EPERM (no CAP_SETPCAP; locked bits).
 * Expected: bits present; EPERM.
 */
#define PROBE_NAME "securebits"
#include "probe.h"
#include <sys/prctl.h>

#define B_NOROOT 0x01
#define B_LOCKS (0x02 | 0x08 | 0x20 | 0x80)

int main(void)
{
	int b = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
	if (b < 0)
		fail("PR_GET_SECUREBITS: %s", errname(errno));
	if (!(b & B_NOROOT) || (b & B_LOCKS) != B_LOCKS)
		fail("securebits are %#x, expected NOROOT (0x1) and all locks (0xaa)", b);
	int r = prctl(PR_SET_SECUREBITS, 0, 0, 0, 0);
	int e = errno;
	expect_err("prctl(PR_SET_SECUREBITS, 0)", r, e, EPERM);
	pass("securebits %#x locked; clearing refused with EPERM", b);
}
