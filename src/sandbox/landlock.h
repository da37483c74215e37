/* SPDX-License-Identifier: MIT */
/*
 * landlock.h - Landlock ruleset for the sandboxed command.
 *
 * The ABI is negotiated best-effort, as the kernel's samples/landlock/sandboxer.c
 * does: rights the running kernel does not know are removed from the handled
 * set and from every rule.  Source: Documentation/userspace-api/landlock.rst.
 */
#ifndef BERTH_LANDLOCK_H
#define BERTH_LANDLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "../util/error.h"

enum berth_ll_access {
	BERTH_LL_RO = 1,  /* read files and directories */
	BERTH_LL_RX = 2,  /* read and execute */
	BERTH_LL_RW = 3,  /* everything: read, write, create, remove, execute */
	BERTH_LL_DEV = 4, /* read, write existing files, device ioctls (for /dev) */
	BERTH_LL_DIR = 5, /* list the directory only */
	BERTH_LL_PROC = 6, /* read and write existing files (for /proc/self) */
};

struct berth_ll_rule {
	const char *path;            /* absolute path in the sandbox's view */
	enum berth_ll_access access;
};

/*
 * berth_landlock_abi - the kernel's Landlock ABI version, or a negative errno:
 * -ENOSYS (not built in), -EOPNOTSUPP (built in, disabled at boot).
 */
int berth_landlock_abi(void);

/*
 * berth_landlock_apply - create a ruleset handling every filesystem right of
 * @abi, add @rules (paths that do not exist are skipped), handle TCP bind and
 * connect when @deny_tcp and abi >= 4, allowing only TCP connect to the
 * @n_ports ports in @connect_ports (the egress broker's listeners), scope abstract unix
 * sockets and signals when abi >= 6, and restrict the calling thread.
 * NO_NEW_PRIVS must be set.  Allocation-free.
 * Returns 0, or -1 with @err filled.
 */
int berth_landlock_apply(int abi, const struct berth_ll_rule *rules, int n_rules, bool deny_tcp,
			 const uint16_t *connect_ports, int n_ports, struct berth_error *err);

#endif
