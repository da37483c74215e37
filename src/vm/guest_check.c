/* SPDX-License-Identifier: MIT */
/*
 * guest_check.c - the installed guest, verified before every boot
 * (docs/vm.md, "What is verified, and when"): src/vm/install.h's
 * berth_vm_verify() on berth_vm_dir(), giving the runtime the two files qemu
 * boots.
 */
#include <stdio.h>

#include "install.h"
#include "vm_int.h"

int berth_vm_guest_find(struct vm_guest *g, struct berth_error *err)
{
	struct berth_vm_guest v;

	if (berth_vm_verify(NULL, &v, err) < 0)
		return -1;
	snprintf(g->dir, sizeof g->dir, "%s", v.dir);
	snprintf(g->kernel, sizeof g->kernel, "%s", v.vmlinuz);
	snprintf(g->initrd, sizeof g->initrd, "%s", v.initramfs);
	snprintf(g->kernel_sha256, sizeof g->kernel_sha256, "%s", v.kernel_sha256);
	snprintf(g->initramfs_sha256, sizeof g->initramfs_sha256, "%s", v.initramfs_sha256);
	return 0;
}
