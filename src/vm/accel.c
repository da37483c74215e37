/* SPDX-License-Identifier: MIT */
/*
 * accel.c - the accelerator probe: a test boot of the installed guest
 * (accel.h).
 */
#include "accel.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "../util/cleanup.h"
#include "../util/error.h"
#include "../util/rmtree.h"
#include "../util/sys.h"
#include "exec.h"
#include "install.h"

#define QEMU "qemu-system-x86_64"
#define QBOOT "/usr/share/qemu/qboot.rom"

const char *berth_vm_accel_name(enum berth_vm_accel accel)
{
	return accel == BERTH_VM_ACCEL_KVM ? "kvm" : "tcg";
}

bool berth_vm_probe_kvm_device(char *reason, size_t len)
{
	cleanup_close int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	cleanup_close int vm = -1;
	int api;

	if (fd < 0) {
		int e = errno;
		if (e == ENOENT)
			berth_reasonf(
			    reason, len,
			    "no /dev/kvm (no KVM in this kernel, or no virtualisation for this machine)");
		else if (e == EACCES || e == EPERM)
			berth_reasonf(reason, len,
				      "cannot open /dev/kvm: %s (uid %ld is not in the group that owns it)",
				      strerror(e), (long)getuid());
		else
			berth_reasonf(reason, len, "cannot open /dev/kvm: %s", strerror(e));
		return false;
	}
	api = ioctl(fd, KVM_GET_API_VERSION, 0);
	if (api != KVM_API_VERSION) {
		berth_reasonf(reason, len, "/dev/kvm speaks KVM API %d, not %d", api, KVM_API_VERSION);
		return false;
	}
	vm = ioctl(fd, KVM_CREATE_VM, 0);
	if (vm < 0) {
		berth_reasonf(reason, len, "KVM_CREATE_VM failed: %s", strerror(errno));
		return false;
	}
	return true;
}

/* The probe line in the console log @fd: the guest's Landlock ABI, or -2 when absent. */
static int probe_line(int fd)
{
	char text[65536];
	ssize_t n = pread(fd, text, sizeof text - 1, 0);
	const char *p;

	if (n <= 0)
		return -2;
	text[n] = '\0';
	for (p = text; (p = strstr(p, BERTH_VM_PROBE_LINE " landlock_abi=")) != NULL; p++) {
		int abi;
		char end;
		/* At a line's start, and the whole line. */
		if ((p == text || p[-1] == '\n') &&
		    sscanf(p + sizeof BERTH_VM_PROBE_LINE " landlock_abi=" - 1, "%d%c", &abi, &end) == 2 &&
		    (end == '\n' || end == '\r'))
			return abi;
	}
	return -2;
}

/* One boot of VMLINUZ and INITRAMFS in @tmp; fills @p. */
static void test_boot(enum berth_vm_accel accel, const struct berth_vm_guest *g, const char *tmp,
		      int timeout_ms, struct berth_vm_probe *p)
{
	char log[PATH_MAX + 16], errlog[PATH_MAX + 16], chardev[2 * PATH_MAX + 64], first[512], st[64];
	cleanup_close int efd = -1, lfd = -1;
	bool kvm = accel == BERTH_VM_ACCEL_KVM, qboot = access(QBOOT, R_OK) == 0;
	struct berth_error err = {0};
	const char *argv[48];
	int k = 0, ws = 0, r, abi;

	snprintf(log, sizeof log, "%s/console.log", tmp);
	snprintf(errlog, sizeof errlog, "%s/qemu.err", tmp);
	berth_vm_qemu_opt(chardev, sizeof chardev, "file,id=c0,path=", log); /* commas doubled: qemu's list */
	efd = open(errlog, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (efd < 0) {
		berth_reasonf(p->reason, sizeof p->reason, "cannot write `%s`: %s", errlog, strerror(errno));
		return;
	}
	const char *fixed[] = {QEMU,
			       "-nodefaults",
			       "-no-user-config",
			       "-M",
			       "q35",
			       "-accel",
			       kvm ? "kvm" : "tcg",
			       "-cpu",
			       kvm ? "host" : "max",
			       "-m",
			       "256",
			       "-smp",
			       "1",
			       "-display",
			       "none"};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(fixed); i++)
		argv[k++] = fixed[i];
	if (qboot) {
		argv[k++] = "-bios";
		argv[k++] = QBOOT;
	}
	const char *rest[] = {"-kernel",
			      g->vmlinuz,
			      "-initrd",
			      g->initramfs,
			      "-append",
			      "console=hvc0 quiet panic=-1 berth.mode=probe",
			      "-chardev",
			      chardev,
			      "-device",
			      "virtio-serial-pci",
			      "-device",
			      "virtconsole,chardev=c0",
			      "-no-reboot",
			      "-sandbox",
			      "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny"};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(rest); i++)
		argv[k++] = rest[i];
	argv[k] = NULL;
	struct berth_vm_cmd c = {.argv = argv, .out_fd = efd, .err_fd = efd, .timeout_ms = timeout_ms};
	p->booted = true;
	r = berth_vm_exec(&c, &ws, &p->elapsed_ms, &err);
	if (r < 0) {
		berth_reasonf(p->reason, sizeof p->reason, "%s", err.msg);
		return;
	}
	lfd = open(log, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	abi = lfd >= 0 ? probe_line(lfd) : -2;
	if (abi != -2) {
		p->usable = true;
		p->landlock_abi = abi;
		berth_reasonf(
		    p->reason, sizeof p->reason,
		    "a test boot under %s reached the guest init in %.1f s (Landlock ABI %d in the guest)",
		    kvm ? "KVM" : "TCG", (double)p->elapsed_ms / 1000, abi);
		return;
	}
	if (r == 1 && kvm)
		berth_reasonf(p->reason, sizeof p->reason,
			      "a test boot did not reach the guest init in %d s: the host's KVM cannot run "
			      "the pinned kernel "
			      "(e.g. a nested software hypervisor)",
			      timeout_ms / 1000);
	else if (r == 1)
		berth_reasonf(p->reason, sizeof p->reason,
			      "a test boot under TCG did not reach the guest init in %d s",
			      timeout_ms / 1000);
	else
		berth_reasonf(p->reason, sizeof p->reason, "%s ended (%s) before the guest init ran%s%s%s",
			      QEMU, berth_vm_status_text(ws, st, sizeof st),
			      berth_vm_log_line(efd, true, first, sizeof first)[0] ? ": " : "", first,
			      kvm ? " (the host's KVM cannot run the pinned kernel)" : "");
}

/*
 * Remove the probe directories of killed probes: TMP/berth-probe.PID.*
 * of the caller whose PID no longer runs (a SIGKILL'ed `berth vm probe` or
 * doctor cannot remove its own).  A live probe's is left alone.
 */
static void sweep_probes(const char *base)
{
	cleanup_closedir DIR *d = opendir(base);
	struct dirent *de;

	while (d != NULL && (de = readdir(d)) != NULL) {
		struct berth_error ignored = {0};
		char path[PATH_MAX + 300], *end;
		struct stat st;
		long pid;

		if (strncmp(de->d_name, "berth-probe.", 12) != 0)
			continue;
		pid = strtol(de->d_name + 12, &end, 10);
		if (end == de->d_name + 12 || *end != '.' || pid <= 0 ||
		    (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
			continue;
		snprintf(path, sizeof path, "%s/%s", base, de->d_name);
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid())
			berth_rmtree(path, NULL, &ignored);
	}
}

static void record_kvm(const struct berth_vm_guest *g, const struct berth_vm_probe *p);

void berth_vm_probe(enum berth_vm_accel accel, const char *dir, int timeout_ms, struct berth_vm_probe *p)
{
	struct berth_vm_guest g;
	struct berth_error err = {0};
	char qemu[PATH_MAX], tmp[PATH_MAX], devwhy[512];
	const char *tmpdir = getenv("TMPDIR");

	memset(p, 0, sizeof *p);
	p->landlock_abi = -1;
	p->timeout_ms = timeout_ms > 0                ? timeout_ms
			: accel == BERTH_VM_ACCEL_KVM ? BERTH_VM_PROBE_KVM_MS
						      : BERTH_VM_PROBE_TCG_MS;
	if (accel == BERTH_VM_ACCEL_KVM && !berth_vm_probe_kvm_device(p->reason, sizeof p->reason))
		return;
	if (!berth_vm_find_tool(QEMU, qemu, sizeof qemu)) {
		berth_reasonf(p->reason, sizeof p->reason,
			      "%s not found (apt-get install --no-install-recommends qemu-system-x86)", QEMU);
		return;
	}
	if (berth_vm_verify(dir, &g, &err) < 0) {
		snprintf(devwhy, sizeof devwhy, "%s",
			 accel == BERTH_VM_ACCEL_KVM ? "/dev/kvm can make a VM, but " : "");
		berth_reasonf(p->reason, sizeof p->reason,
			      "%swhether the pinned kernel runs needs a test boot of the guest, and it needs "
			      "`berth vm install`: %s",
			      devwhy, err.msg);
		return;
	}
	if (tmpdir == NULL || tmpdir[0] != '/')
		tmpdir = "/tmp";
	sweep_probes(tmpdir);
	snprintf(tmp, sizeof tmp, "%s/berth-probe.%ld.XXXXXX", tmpdir, (long)getpid());
	if (mkdtemp(tmp) == NULL) {
		berth_reasonf(p->reason, sizeof p->reason, "cannot create a temporary directory in `%s`: %s",
			      tmpdir, strerror(errno));
		return;
	}
	test_boot(accel, &g, tmp, p->timeout_ms, p);
	berth_rmtree(tmp, NULL, &err);
	if (accel == BERTH_VM_ACCEL_KVM && p->booted)
		record_kvm(&g, p);
}

/* This boot of the host: /proc/sys/kernel/random/boot_id, or "". */
static void host_boot_id(char *buf, size_t len)
{
	cleanup_close int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;

	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

static void record_kvm(const struct berth_vm_guest *g, const struct berth_vm_probe *p)
{
	char boot[64], path[PATH_MAX + 32];
	struct berth_error err = {0};
	json_auto_t *r = NULL;
	char *s;

	host_boot_id(boot, sizeof boot);
	r = json_pack("{s:s, s:b, s:s, s:s, s:s, s:I, s:s}", "accel", "kvm", "usable", p->usable, "boot_id",
		      boot, "kernel_sha256", g->kernel_sha256, "initramfs_sha256", g->initramfs_sha256,
		      "elapsed_ms", (json_int_t)p->elapsed_ms, "reason", p->reason);
	if (r == NULL || (s = json_dumps(r, JSON_SORT_KEYS | JSON_INDENT(2))) == NULL)
		return;
	snprintf(path, sizeof path, "%s/" BERTH_VM_KVM_RECORD, g->dir);
	size_t n = strlen(s);
	char *line = realloc(s, n + 2);
	if (line == NULL) {
		free(s);
		return;
	}
	line[n] = '\n';
	line[n + 1] = '\0';
	berth_write_atomic(path, line, n + 1, 0600, BERTH_WRITE_MODE, &err);
	free(line);
}

enum berth_vm_accel berth_vm_accel_choose(const char *dir, const char *kernel_sha256,
					  const char *initramfs_sha256, char *why, size_t len)
{
	char base[PATH_MAX], path[PATH_MAX + 32], boot[64], dev[512];
	struct berth_error err = {0};
	json_error_t je;
	json_auto_t *r = NULL;
	struct stat st;

	if (dir == NULL) {
		if (berth_vm_dir(base, sizeof base, &err) < 0) {
			berth_reasonf(why, len, "%s", err.msg);
			return BERTH_VM_ACCEL_TCG;
		}
		dir = base;
	}
	snprintf(path, sizeof path, "%s/" BERTH_VM_KVM_RECORD, dir);
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		berth_reasonf(why, len, "no KVM test boot on record (`berth vm probe`)");
		return BERTH_VM_ACCEL_TCG;
	}
	/* the caller's own file, written by no one else */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) != 0 ||
	    (r = json_loadfd(fd, JSON_REJECT_DUPLICATES, &je)) == NULL) {
		berth_reasonf(why, len, "`%s` is not a record berth wrote", path);
		return BERTH_VM_ACCEL_TCG;
	}
	host_boot_id(boot, sizeof boot);
	const char *rb = json_string_value(json_object_get(r, "boot_id"));
	const char *rk = json_string_value(json_object_get(r, "kernel_sha256"));
	const char *ri = json_string_value(json_object_get(r, "initramfs_sha256"));
	if (!json_is_true(json_object_get(r, "usable"))) {
		berth_reasonf(why, len, "the last KVM test boot did not reach the guest init");
		return BERTH_VM_ACCEL_TCG;
	}
	if (boot[0] == '\0' || rb == NULL || strcmp(rb, boot) != 0) {
		berth_reasonf(why, len,
			      "the KVM test boot on record is of an earlier boot of this host "
			      "(`berth vm probe`)");
		return BERTH_VM_ACCEL_TCG;
	}
	if (rk == NULL || ri == NULL || strcmp(rk, kernel_sha256) != 0 || strcmp(ri, initramfs_sha256) != 0) {
		berth_reasonf(why, len,
			      "the KVM test boot on record booted another guest (`berth vm probe`)");
		return BERTH_VM_ACCEL_TCG;
	}
	if (!berth_vm_probe_kvm_device(dev, sizeof dev)) {
		berth_reasonf(why, len, "%s", dev);
		return BERTH_VM_ACCEL_TCG;
	}
	berth_reasonf(why, len, "a test boot under KVM on this boot of the host reached the guest init");
	return BERTH_VM_ACCEL_KVM;
}

bool berth_vm_qemu(char *path, size_t plen, char *version, size_t vlen)
{
	const char *argv[] = {QEMU, "--version", NULL};
	cleanup_close int out = memfd_create("qemu-version", MFD_CLOEXEC);
	struct berth_error err = {0};
	int ws = 0;

	if (vlen > 0)
		version[0] = '\0';
	if (!berth_vm_find_tool(QEMU, path, plen))
		return false;
	struct berth_vm_cmd c = {.argv = argv, .out_fd = out, .err_fd = -1, .timeout_ms = 5000};
	if (out >= 0 && berth_vm_exec(&c, &ws, NULL, &err) == 0)
		berth_vm_log_line(out, true, version, vlen);
	return true;
}

bool berth_vm_virtiofsd(char *path, size_t len)
{
	static const char debian12[] = "/usr/lib/qemu/virtiofsd";
	struct stat st;

	if (stat(debian12, &st) == 0 && S_ISREG(st.st_mode) && access(debian12, X_OK) == 0) {
		snprintf(path, len, "%s", debian12);
		return true;
	}
	return berth_vm_find_tool("virtiofsd", path, len);
}
