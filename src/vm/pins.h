/* SPDX-License-Identifier: MIT */
/*
 * pins.h - the guest berth's microVM runtime boots: one Debian kernel
 * package, pinned by the sha256 and size of its .deb and by the sha256 of
 * every file berth takes from it (docs/vm.md, "The pinned guest").
 *
 * Where the values come from: the package is Debian trixie's cloud kernel
 * (main, amd64), the smallest Debian kernel with virtio-serial
 * (VIRTIO_CONSOLE=y), virtiofs (VIRTIO_FS=y) and Landlock built in.  The
 * .deb's sha256 and size are those of the archive's Packages index for that
 * version (the `SHA256:` and `Size:` fields, signed through the Release file
 * by Debian's archive key); the file digests are sha256sum(1) of the files
 * `dpkg-deb -x` makes of that .deb.  Moving the pin means changing every
 * value here at once, as docs/vm.md says; `berth vm install` refuses any
 * .deb or file that does not match, so a half-moved pin installs nothing.
 *
 * No mirror is named: `berth vm install` downloads from the Debian mirrors
 * the machine's own apt sources name.
 */
#ifndef BERTH_VM_PINS_H
#define BERTH_VM_PINS_H

#include <stddef.h>
#include <stdint.h>

/* The kernel's release (uname -r in the guest): its modules' directory. */
#define BERTH_VM_KERNEL_RELEASE "6.12.117+deb13-cloud-amd64"

#define BERTH_VM_KERNEL_PACKAGE "linux-image-" BERTH_VM_KERNEL_RELEASE
#define BERTH_VM_KERNEL_VERSION "6.12.117-1"
#define BERTH_VM_SUITE "trixie"
#define BERTH_VM_COMPONENT "main"
#define BERTH_VM_ARCH "amd64"
/* The keyring apt checks the suite's Release file with (debian-archive-keyring). */
#define BERTH_VM_KEYRING "/usr/share/keyrings/debian-archive-keyring.gpg"

/* The .deb as the archive serves it. */
#define BERTH_VM_DEB_SHA256 "e9893e5295d0549b8852611f12a4b8b5f6cc4b8128dcc2086b9847793b904ab7"
#define BERTH_VM_DEB_SIZE 34671208

/* The kernel image inside the .deb (a path relative to its root). */
#define BERTH_VM_VMLINUZ_PATH "boot/vmlinuz-" BERTH_VM_KERNEL_RELEASE
#define BERTH_VM_VMLINUZ_SHA256 "ed8f0dbdbefe3994093937f5ee934818ae902b88cb0b6bc423811c10d55b87b0"

/* Where the modules below are in the .deb, and in the initramfs. */
#define BERTH_VM_MODULE_SRC_DIR "usr/lib/modules/" BERTH_VM_KERNEL_RELEASE "/kernel/net/vmw_vsock"
#define BERTH_VM_MODULE_DST_DIR "lib/modules/" BERTH_VM_KERNEL_RELEASE

/* A module the initramfs carries: its file name and sha256. */
struct berth_vm_module_pin {
	const char *name;   /* "vsock.ko.xz": in BERTH_VM_MODULE_SRC_DIR and BERTH_VM_MODULE_DST_DIR */
	const char *sha256; /* of the file as the .deb holds it (xz-compressed) */
};

/*
 * berth_vm_modules - the modules of the initramfs, in the order they must
 * be loaded (each depends only on those before it: vsock, the virtio
 * transport's common part, the virtio transport).  @n is set to their count.
 * None of virtio-serial, virtiofs or Landlock needs one: they are built in.
 */
const struct berth_vm_module_pin *berth_vm_modules(size_t *n);

#endif
