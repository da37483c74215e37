/*
 * keyctl - the kernel keyring is not namespaced (a classic cross-container
 * leak): keyctl(KEYCTL_JOIN_SESSION_KEYRING) and keyctl(KEYCTL_GET_KEYRING_ID,
 * user keyring).  Denied by seccomp.  Expected: EPERM.
 */
#define PROBE_NAME "keyctl"
#include "probe.h"
#include <sys/syscall.h>

#define B_KEYCTL_GET_KEYRING_ID 0
#define B_KEYCTL_JOIN_SESSION_KEYRING 1
#define B_KEY_SPEC_USER_KEYRING (-4)

int main(void)
{
	long r = syscall(SYS_keyctl, B_KEYCTL_JOIN_SESSION_KEYRING, "berth-escape");
	int e = errno;
	expect_err("keyctl(KEYCTL_JOIN_SESSION_KEYRING)", r, e, EPERM);
	r = syscall(SYS_keyctl, B_KEYCTL_GET_KEYRING_ID, B_KEY_SPEC_USER_KEYRING, 0);
	e = errno;
	expect_err("keyctl(KEYCTL_GET_KEYRING_ID, user keyring)", r, e, EPERM);
	pass("keyctl refused with EPERM");
}
