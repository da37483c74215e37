/*
 * nnp_seccomp - NO_NEW_PRIVS is set and a seccomp filter is active:
 * /proc/self/status says NoNewPrivs: 1 and Seccomp: 2 (filter), and
 * prctl(PR_GET_NO_NEW_PRIVS) = 1, prctl(PR_GET_SECCOMP) = 2.  NO_NEW_PRIVS
 * cannot be cleared (prctl(PR_SET_NO_NEW_PRIVS, 0) = EINVAL by design).
 * Expected: as stated.
 */
#define PROBE_NAME "nnp_seccomp"
#include "probe.h"
#include <sys/prctl.h>

int main(void)
{
	char v[64];
	if (status_field("/proc/self/status", "NoNewPrivs", v, sizeof v) != 0 || strcmp(v, "1") != 0)
		fail("NoNewPrivs is '%s', expected 1", v);
	if (status_field("/proc/self/status", "Seccomp", v, sizeof v) != 0 || strcmp(v, "2") != 0)
		fail("Seccomp is '%s', expected 2", v);
	int r = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	if (r != 1)
		fail("PR_GET_NO_NEW_PRIVS = %d", r);
	r = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
	if (r != 2)
		fail("PR_GET_SECCOMP = %d (%s)", r, errname(errno));
	r = prctl(PR_SET_NO_NEW_PRIVS, 0, 0, 0, 0);
	int e = errno;
	expect_err("prctl(PR_SET_NO_NEW_PRIVS, 0)", r, e, EINVAL);
	pass("NoNewPrivs 1, Seccomp 2 (filter); clearing NNP refused with EINVAL");
}
