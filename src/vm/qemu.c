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
#include <grp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/cleanup.h"
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

int berth_vm_qemu_argv(const struct vm_rt *vm, struct vm_qemu_argv *a)
{
	unsigned long mib = (unsigned long)(vm->mem_bytes >> 20);
	size_t k = 0;

	snprintf(a->mem, sizeof a->mem, "%luM", mib);
	snprintf(a->memobj, sizeof a->memobj, "memory-backend-memfd,id=mem,size=%luM,share=on", mib);
	snprintf(a->smp, sizeof a->smp, "%s", vm->smp);
	/* TCG: one thread for all the vCPUs (docs/vm.md, "The guest kernel's
	 * int3 panic").  With a thread a vCPU (MTTCG, qemu's default), a vCPU
	 * was seen to execute the int3 the guest kernel's live patching
	 * (text_poke_bp: a static key's jump) had already taken out again on
	 * another vCPU: "Oops: int3" in the int3 handler, so "Fatal exception
	 * in interrupt", now and then on a loaded host.  One thread runs one
	 * vCPU at a time: a write to the code is done before another vCPU runs
	 * on. */
	snprintf(a->accel, sizeof a->accel, "%s",
		 vm->accel != NULL && strcmp(vm->accel, "kvm") == 0 ? "kvm" : "tcg,thread=single");
	/* the sealed copies of what was verified, never the guest directory's
	 * files (guest_check.c) */
	snprintf(a->kernel, sizeof a->kernel, "/proc/self/fd/%d", VM_QEMU_FD_KERNEL);
	snprintf(a->initrd, sizeof a->initrd, "/proc/self/fd/%d", VM_QEMU_FD_INITRD);
	snprintf(a->fs, sizeof a->fs, "socket,id=fs0,fd=%d", VM_QEMU_FD_FS);
	snprintf(a->addfd, sizeof a->addfd, "fd=%d,set=1", VM_QEMU_FD_CONSOLE);
	snprintf(a->console, sizeof a->console, "file,id=c0,path=/dev/fdset/1");
	/* a label, not a file: which run this qemu is (ps, pgrep -f) */
	if (berth_vm_qemu_opt(a->name, sizeof a->name, "", vm->dir) < 0)
		return -1;
	const char *v[] = {QEMU,
			   "-name",
			   a->name,
			   "-nodefaults",
			   "-no-user-config",
			   "-M",
			   "q35,memory-backend=mem",
			   "-object",
			   a->memobj,
			   "-accel",
			   a->accel,
			   "-cpu",
			   strcmp(a->accel, "kvm") == 0 ? "host" : "max",
			   "-bios",
			   QBOOT,
			   "-m",
			   a->mem,
			   "-smp",
			   a->smp,
			   "-display",
			   "none",
			   "-kernel",
			   a->kernel,
			   "-initrd",
			   a->initrd,
			   "-append",
			   "console=hvc0 quiet panic=-1 berth.mode=run",
			   "-add-fd",
			   a->addfd,
			   "-chardev",
			   a->console,
			   "-device",
			   "virtio-serial-pci",
			   "-device",
			   "virtconsole,chardev=c0",
			   "-chardev",
			   "socket,id=ch,fd=3",
			   "-device",
			   "virtserialport,chardev=ch,name=berth.0",
			   "-chardev",
			   a->fs,
			   "-device",
			   "vhost-user-fs-pci,chardev=fs0,tag=root",
			   "-no-reboot",
			   "-sandbox",
			   "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny",
			   NULL};
	for (; v[k] != NULL; k++) {
		if (k + 1 >= sizeof a->argv / sizeof a->argv[0])
			return -1;
		a->argv[k] = (char *)v[k];
	}
	a->argv[k] = NULL;
	return 0;
}

/* Root's qemu: uid and gid @vm->qemu_uid, no capability (a change of every
 * uid from 0 clears them): it needs none, everything it opens is a
 * descriptor berth gave it, but /dev/kvm with KVM (qemu 7.2 opens it by
 * path): then the device's group is its one supplementary group. */
static int drop_root(const struct vm_rt *vm, pid_t parent)
{
	struct stat st;
	gid_t kvm[1];
	size_t n = 0;

	if (getuid() != 0)
		return 0;
	if (strcmp(vm->accel, "kvm") == 0 && stat("/dev/kvm", &st) == 0 && S_ISCHR(st.st_mode) &&
	    st.st_gid != 0 && (st.st_mode & 0060) == 0060)
		kvm[n++] = st.st_gid;
	if (setgroups(n, kvm) < 0 || setresgid(vm->qemu_uid, vm->qemu_uid, vm->qemu_uid) < 0 ||
	    setresuid(vm->qemu_uid, vm->qemu_uid, vm->qemu_uid) < 0)
		return -1;
	/* the id change cleared the parent-death signal */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
		return -1;
	return 0;
}

static _Noreturn void child(const struct vm_rt *vm, const struct vm_guest *g, int chan, int fs, int con,
			    pid_t parent)
{
	struct vm_qemu_argv a;
	char log[PATH_MAX + 32];
	const char *bin = berth_vm_qemu_path();
	int from[] = {chan, g->kernel_fd, g->initrd_fd, fs, con};
	int null, lfd;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent || bin == NULL ||
	    berth_vm_qemu_argv(vm, &a) < 0)
		_exit(125);
	snprintf(log, sizeof log, "%s/qemu.log", vm->dir);
	/* stdin /dev/null, stdout and stderr the log, then fds 3..7 (vm_int.h) */
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(from); i++)
		if ((from[i] = fcntl(from[i], F_DUPFD_CLOEXEC, 100)) < 0)
			_exit(125);
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (null < 0 || lfd < 0 || dup2(null, 0) < 0 || dup2(lfd, 1) < 0 || dup2(lfd, 2) < 0)
		_exit(125);
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(from); i++)
		if (dup2(from[i], VM_QEMU_FD_CHAN + (int)i) < 0)
			_exit(125);
	{
		int keep[] = {VM_QEMU_FD_CHAN, VM_QEMU_FD_KERNEL, VM_QEMU_FD_INITRD, VM_QEMU_FD_FS,
			      VM_QEMU_FD_CONSOLE};
		berth_close_all_except(keep, BERTH_ARRAY_SIZE(keep));
	}
	if (drop_root(vm, parent) < 0)
		_exit(125);
	char *envp[] = {NULL};
	execve(bin, a.argv, envp);
	_exit(127);
}

/* A connection to virtiofsd's listening socket (its backlog holds it until
 * virtiofsd accepts), for qemu's vhost-user-fs chardev. */
static int connect_fs(const struct vm_rt *vm, struct berth_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	cleanup_close int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return berth_err(err, errno, "socket");
	if (strlen(vm->fs_sock) >= sizeof sa.sun_path)
		return berth_err(err, ENAMETOOLONG, "the socket path `%s` is too long", vm->fs_sock);
	strcpy(sa.sun_path, vm->fs_sock);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
		return berth_err(err, errno, "cannot connect to virtiofsd's `%s`", vm->fs_sock);
	return steal_fd(&fd);
}

int berth_vm_start_qemu(struct vm_rt *vm, const struct vm_guest *g, int chan_fd, struct berth_error *err)
{
	pid_t parent = getpid();
	cleanup_close int fs = -1, con = -1;

	if (berth_vm_qemu_path() == NULL)
		return berth_err(err, ENOENT, "`" QEMU "` is not installed");
	if ((fs = connect_fs(vm, err)) < 0)
		return -1;
	/* made 0600 by make_run_dir: written through this descriptor only */
	if ((con = open(vm->console, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return berth_err(err, errno, "cannot open `%s`", vm->console);
	vm->qemu = fork();
	if (vm->qemu < 0)
		return berth_err(err, errno, "cannot fork qemu");
	if (vm->qemu == 0)
		child(vm, g, chan_fd, fs, con, parent);
	berth_vm_janitor_add(vm, vm->qemu);
	vm->qemu_pidfd = (int)syscall(SYS_pidfd_open, vm->qemu, 0);
	if (vm->qemu_pidfd < 0)
		return berth_err(err, errno, "pidfd_open");
	return 0;
}
