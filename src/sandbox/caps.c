/* SPDX-License-Identifier: MIT */
#include "caps.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int last_cap(void)
{
	/* Probe the bounding set: PR_CAPBSET_READ fails with EINVAL past the last. */
	int c = 40;

	while (c < 64 && prctl(PR_CAPBSET_READ, c + 1, 0, 0, 0) >= 0)
		c++;
	while (c > 0 && prctl(PR_CAPBSET_READ, c, 0, 0, 0) < 0)
		c--;
	return c;
}

int berth_caps_drop_all(struct berth_error *err)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct data[2] = {{0, 0, 0}, {0, 0, 0}};
	int last = last_cap();
	unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
			     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
			     SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;

	for (int c = 0; c <= last; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
			return berth_err(err, errno, "cannot drop capability %d from the bounding set", c);
	if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) < 0)
		return berth_err(err, errno, "cannot lock the securebits");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return berth_err(err, errno, "cannot clear the ambient capability set");
	if (syscall(SYS_capset, &hdr, data) < 0)
		return berth_err(err, errno, "cannot clear the capability sets");
	return 0;
}

int berth_caps_raise_effective(struct berth_error *err)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data) < 0)
		return berth_err(err, errno, "capget");
	data[0].effective = data[0].permitted;
	data[1].effective = data[1].permitted;
	if (syscall(SYS_capset, &hdr, data) < 0)
		return berth_err(err, errno, "cannot raise the effective capabilities");
	return 0;
}
