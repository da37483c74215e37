/* SPDX-License-Identifier: MIT */
/*
 * qemu.c - step 4 of the vm runtime (vm_int.h): qemu, executed directly
 * (no shell), with no network device, no user configuration, no default
 * devices, and its own sandbox (-sandbox: no spawn, no privileges, no
 * obsolete calls); the guest's RAM a shared memfd (vhost-user-fs needs
 * it), the channel a socketpair end given as a descriptor.
 *
 * The accelerator is TCG unless KVM was shown to work by a test boot of
 * this guest on this boot of the host (accel.h, berth_vm_accel_choose):
 * /dev/kvm may be there and broken (a nested hypervisor), and a VM that
 * hangs in KVM is worse than a slow one.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/sys.h"
#include "exec.h"
#include "vm_int.h"

#define QEMU "qemu-system-x86_64"
#define QBOOT "/usr/share/qemu/qboot.rom"

const char *berth_vm_qemu_path(void);
const char *berth_vm_qemu_path(void)
{
	static char found[PATH_MAX];
	const char *path = getenv("PATH");

	for (const char *p = path != NULL ? path : "/usr/bin:/bin"; p != NULL && *p != '\0';) {
		const char *c = strchr(p, ':');
		size_t n = c != NULL ? (size_t)(c - p) : strlen(p);
		if (n > 0 && n < sizeof found - sizeof QEMU - 2 && p[0] == '/') {
			snprintf(found, sizeof found, "%.*s/" QEMU, (int)n, p);
			if (access(found, X_OK) == 0)
				return found;
		}
		p = c != NULL ? c + 1 : NULL;
	}
	return NULL;
}

const char *berth_vm_qboot_path(void);
const char *berth_vm_qboot_path(void)
{
	return access(QBOOT, R_OK) == 0 ? QBOOT : NULL;
}

void berth_vm_console_tail(const struct vm_rt *vm, char *buf, size_t len)
{
	static const char *const logs[] = {"console.log", "qemu.log", "virtiofsd.log"};
	char tail[4096];

	buf[0] = '\0';
	for (size_t i = 0; i < 3 && buf[0] == '\0'; i++) {
		char path[PATH_MAX + 32];
		int fd;
		off_t end;
		ssize_t n;
		snprintf(path, sizeof path, "%s/%s", vm->dir, logs[i]);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
			continue;
		end = lseek(fd, 0, SEEK_END);
		n = pread(fd, tail, sizeof tail - 1,
			  end > (off_t)sizeof tail - 1 ? end - (off_t)sizeof tail + 1 : 0);
		close(fd);
		if (n <= 0)
			continue;
		tail[n] = '\0';
		/* A panic's reason (its trace and "Kernel Offset" follow it), else
		 * the guest init's own last word, else the last line with a
		 * printable character; control bytes dropped. */
		const char *mark = NULL;
		for (const char *const *w = (const char *const[]){"Kernel panic - ", "berth-vminit: ", NULL};
		     *w != NULL && mark == NULL; w++)
			for (const char *f = tail; (f = strstr(f, *w)) != NULL; f++)
				mark = f;
		if (mark != NULL) {
			size_t k = 0;
			for (const char *c = mark; *c != '\0' && *c != '\n' && k + 1 < len; c++)
				if ((unsigned char)*c >= 0x20 && *c != 0x7f)
					buf[k++] = *c;
			buf[k] = '\0';
			continue;
		}
		for (char *e = tail + n; e > tail;) {
			char *s = e;
			while (s > tail && s[-1] != '\n')
				s--;
			size_t k = 0;
			for (char *c = s; c < e && k + 1 < len; c++)
				if ((unsigned char)*c >= 0x20 && *c != 0x7f)
					buf[k++] = *c;
			buf[k] = '\0';
			while (k > 0 && buf[k - 1] == ' ')
				buf[--k] = '\0';
			if (k > 0)
				break;
			e = s > tail ? s - 1 : tail;
		}
	}
}

int berth_vm_logs_hint(const struct vm_rt *vm, struct berth_error *err)
{
	if (getenv("BERTH_VM_KEEP_RUNDIR") != NULL)
		return berth_err_hint(err, "the logs are in `%s` (console.log, qemu.log, virtiofsd.log)",
				      vm->dir);
	return berth_err_hint(
	    err, "BERTH_VM_KEEP_RUNDIR=1 keeps the run directory and its logs (console.log, qemu.log, "
		 "virtiofsd.log) for a look");
}

static _Noreturn void child(const struct vm_rt *vm, const struct vm_guest *g, int chan, pid_t parent)
{
	char mem[64], memobj[128], smp[16], console[2 * PATH_MAX + 64], fs[2 * PATH_MAX + 64],
	    log[PATH_MAX + 32];
	const char *bin = berth_vm_qemu_path();
	unsigned long mib = (unsigned long)(vm->mem_bytes >> 20);
	int null, lfd;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent || bin == NULL)
		_exit(125);
	snprintf(mem, sizeof mem, "%luM", mib);
	snprintf(memobj, sizeof memobj, "memory-backend-memfd,id=mem,size=%luM,share=on", mib);
	snprintf(smp, sizeof smp, "%s", vm->smp);
	/* commas doubled: a path with one (TMPDIR=/tmp/a,b) must not add qemu options */
	if (berth_vm_qemu_opt(console, sizeof console, "file,id=c0,path=", vm->console) < 0 ||
	    berth_vm_qemu_opt(fs, sizeof fs, "socket,id=fs0,path=", vm->fs_sock) < 0)
		_exit(125);
	snprintf(log, sizeof log, "%s/qemu.log", vm->dir);
	/* the channel as fd 3; stdin /dev/null, stdout and stderr the log */
	chan = fcntl(chan, F_DUPFD_CLOEXEC, 100);
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (chan < 0 || null < 0 || lfd < 0 || dup2(null, 0) < 0 || dup2(lfd, 1) < 0 || dup2(lfd, 2) < 0 ||
	    dup2(chan, 3) < 0)
		_exit(125);
	berth_close_all_but(3, -1);
	char accel[16];
	snprintf(accel, sizeof accel, "%s", vm->accel);
	char *argv[] = {(char *)QEMU,
			(char *)"-nodefaults",
			(char *)"-no-user-config",
			(char *)"-M",
			(char *)"q35,memory-backend=mem",
			(char *)"-object",
			memobj,
			(char *)"-accel",
			accel,
			(char *)"-cpu",
			(char *)(strcmp(accel, "kvm") == 0 ? "host" : "qemu64"),
			(char *)"-bios",
			(char *)QBOOT,
			(char *)"-m",
			mem,
			(char *)"-smp",
			smp,
			(char *)"-display",
			(char *)"none",
			(char *)"-kernel",
			(char *)g->kernel,
			(char *)"-initrd",
			(char *)g->initrd,
			(char *)"-append",
			(char *)"console=hvc0 quiet panic=-1 berth.mode=run",
			(char *)"-chardev",
			console,
			(char *)"-device",
			(char *)"virtio-serial-pci",
			(char *)"-device",
			(char *)"virtconsole,chardev=c0",
			(char *)"-chardev",
			(char *)"socket,id=ch,fd=3",
			(char *)"-device",
			(char *)"virtserialport,chardev=ch,name=berth.0",
			(char *)"-chardev",
			fs,
			(char *)"-device",
			(char *)"vhost-user-fs-pci,chardev=fs0,tag=root",
			(char *)"-no-reboot",
			(char *)"-sandbox",
			(char *)"on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny",
			NULL};
	char *envp[] = {NULL};
	execve(bin, argv, envp);
	_exit(127);
}

int berth_vm_start_qemu(struct vm_rt *vm, const struct vm_guest *g, int chan_fd, struct berth_error *err)
{
	pid_t parent = getpid();

	if (berth_vm_qemu_path() == NULL)
		return berth_err(err, ENOENT, "`" QEMU "` is not installed");
	vm->qemu = fork();
	if (vm->qemu < 0)
		return berth_err(err, errno, "cannot fork qemu");
	if (vm->qemu == 0)
		child(vm, g, chan_fd, parent);
	berth_vm_janitor_add(vm, vm->qemu);
	vm->qemu_pidfd = (int)syscall(SYS_pidfd_open, vm->qemu, 0);
	if (vm->qemu_pidfd < 0)
		return berth_err(err, errno, "pidfd_open");
	return 0;
}
