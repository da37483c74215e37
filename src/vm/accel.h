/* SPDX-License-Identifier: MIT */
/*
 * accel.h - whether an accelerator can run the pinned guest here, proved by
 * a test boot (docs/vm.md, "doctor").  /dev/kvm existing is not KVM
 * working: a nested software hypervisor can give a /dev/kvm whose VMs
 * never reach the guest's init, so the only answer that counts is a boot
 * of the installed guest in probe mode (berth.mode=probe: berth-vminit
 * writes `berth-vminit: probe ok landlock_abi=N` to its console and powers
 * off).  TCG (qemu's software emulation) is the fallback wherever qemu is.
 */
#ifndef BERTH_VM_ACCEL_H
#define BERTH_VM_ACCEL_H

#include <stdbool.h>
#include <stddef.h>

enum berth_vm_accel {
	BERTH_VM_ACCEL_KVM,
	BERTH_VM_ACCEL_TCG,
};

/* The test boot's deadlines: the pinned kernel reaches its init in ~0.3 s under KVM, 3 to 8 s under TCG here. */
#define BERTH_VM_PROBE_KVM_MS 10000
#define BERTH_VM_PROBE_TCG_MS 60000

/* The line the guest init writes in probe mode (before ` landlock_abi=N`). */
#define BERTH_VM_PROBE_LINE "berth-vminit: probe ok"

struct berth_vm_probe {
	bool usable;       /* the test boot reached the guest init */
	bool booted;       /* a test boot was started */
	int landlock_abi;  /* the guest's, from its probe line; -1 when not known */
	long elapsed_ms;   /* the test boot's, in milliseconds */
	int timeout_ms;    /* its deadline */
	char reason[1024]; /* why not usable, or what the boot showed */
};

/*
 * berth_vm_probe_kvm_device - whether /dev/kvm can make a VM: open(2) it
 * read-write, KVM_GET_API_VERSION is 12, KVM_CREATE_VM succeeds.  Returns
 * true, or false with the reason in @reason (@len bytes): "no /dev/kvm",
 * "cannot open /dev/kvm: permission denied (...)", "KVM_CREATE_VM failed:
 * ERRNO".
 */
bool berth_vm_probe_kvm_device(char *reason, size_t len);

/*
 * berth_vm_probe - boot the guest installed in @dir (NULL: berth_vm_dir())
 * once with @accel (for KVM, after berth_vm_probe_kvm_device()), qemu with
 * `-sandbox on,...`, no network, no disk, its console in a temporary file;
 * SIGKILL after @timeout_ms (0: BERTH_VM_PROBE_KVM_MS or _TCG_MS).  Never
 * through a shell.  @p: usable iff the console holds the probe line; else
 * @p->reason says why: the device check's reason, the guest not installed
 * or not verified (berth_vm_verify's message: the probe needs `berth vm
 * install`), qemu-system-x86_64 not found, qemu ending first (its status
 * and first stderr line), or the deadline passing ("a test boot did not
 * reach the guest init in N s").  Temporary files are removed.  A KVM test
 * boot's outcome (usable or not) is written to DIR/kvm-probe.json
 * (BERTH_VM_KVM_RECORD, 0600, atomically), which berth_vm_accel_choose()
 * reads; a failure to write it leaves the runtime on TCG.
 */
void berth_vm_probe(enum berth_vm_accel accel, const char *dir, int timeout_ms, struct berth_vm_probe *p);

/*
 * berth_vm_qemu - whether qemu-system-x86_64 is in PATH: its path into
 * @path (@plen bytes) and the first line of its `--version` into @version
 * (@vlen bytes; "" when it printed none in 5 s).  Never through a shell.
 */
bool berth_vm_qemu(char *path, size_t plen, char *version, size_t vlen);

/*
 * berth_vm_virtiofsd - the virtiofs daemon: /usr/lib/qemu/virtiofsd (Debian
 * 12's qemu-system-common) or `virtiofsd` in PATH (its own package in
 * Debian 13), into @path (@len bytes).  Returns whether one was found.
 */
bool berth_vm_virtiofsd(char *path, size_t len);

/* The record of the last KVM test boot, in the VM directory (accel.c). */
#define BERTH_VM_KVM_RECORD "kvm-probe.json"

/*
 * berth_vm_accel_choose - the accelerator the microVM runtime boots the
 * guest in @dir (NULL: berth_vm_dir()) with, whose vmlinuz and
 * initramfs.cpio were just verified as @kernel_sha256 and
 * @initramfs_sha256: KVM only when DIR/kvm-probe.json (written by every
 * KVM test boot: `berth vm probe`, `berth doctor`) says a test boot of
 * these same two files under KVM reached the guest init since the host
 * last booted (/proc/sys/kernel/random/boot_id) and /dev/kvm can make a VM
 * now (berth_vm_probe_kvm_device); TCG otherwise, the reason in @why
 * (@len bytes; e.g. "no KVM test boot on record: `berth vm probe`").
 * The record is the caller's own file in its own VM directory: it can only
 * choose for the caller's own VMs, and a wrong one gives a boot that fails
 * its deadline, never a weaker sandbox.
 */
enum berth_vm_accel berth_vm_accel_choose(const char *dir, const char *kernel_sha256,
					  const char *initramfs_sha256, char *why, size_t len);

/* berth_vm_accel_name - "kvm" or "tcg". */
const char *berth_vm_accel_name(enum berth_vm_accel accel);

#endif
