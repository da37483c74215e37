/*
 * add_key - add_key("user", ...) into the user keyring and request_key():
 * the keyring is shared with the host user.  Denied by seccomp.
 * Expected: EPERM.
 */
#define PROBE_NAME "add_key"
#include "probe.h"
#include <sys/syscall.h>

#define B_KEY_SPEC_USER_KEYRING (-4)

int main(void)
{
	long r = syscall(SYS_add_key, "user", "berth-escape", "x", 1, B_KEY_SPEC_USER_KEYRING);
	int e = errno;
	expect_err("add_key(user, user keyring)", r, e, EPERM);
	r = syscall(SYS_request_key, "user", "berth-escape", NULL, 0);
	e = errno;
	expect_err("request_key(user)", r, e, EPERM);
	pass("add_key and request_key refused with EPERM");
}
