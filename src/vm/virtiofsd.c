/* SPDX-License-Identifier: MIT */
/*
 * virtiofsd.c - step 3 of the vm runtime (vm_int.h): the process that
 * serves the guest's root, virtiofsd, in a user namespace of its own whose
 * only mapping is the guest's uid U -> the caller's uid (and G -> the
 * caller's gid), so that what the guest's U creates is the caller's on the
 * host and nothing else of the host's ids can be taken (docs/vm.md).
 *
 * The child, in order (one call per step):
 *   1. PR_SET_PDEATHSIG (it dies with the thread that forked it; the
 *      janitor, janitor.c, covers berth's SIGKILL)
 *   2. unshare(CLONE_NEWUSER | CLONE_NEWNS), setgroups deny, the maps
 *      "U CALLER 1" and "G CALLER_GID 1", written by itself (an
 *      unprivileged caller may map its own ids; no subordinate ids needed)
 *   3. the staging tree (staging.c), in that mount namespace only
 *   4. stdio: /dev/null in, DIR/virtiofsd.log out; the listening socket as
 *      fd 3; no other descriptor
 *   5. its capabilities in that namespace kept across execve as ambient
 *      ones (it is uid U there, not 0: without them execve clears them)
 *   6. execve virtiofsd --fd=3 -o source=STAGING -o sandbox=namespace
 * Its error before the execve reaches berth on a close-on-exec pipe.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../sandbox/userns.h"
#include "../util/cleanup.h"
#include "../util/sys.h"
#include "vm_int.h"

/* Where virtiofsd may be (the C one of qemu 7.2 first, as Debian ships it). */
const char *berth_vm_virtiofsd_path(void);
const char *berth_vm_virtiofsd_path(void)
{
	static const char *const fixed[] = {"/usr/lib/qemu/virtiofsd", "/usr/libexec/virtiofsd", NULL};
	static char found[PATH_MAX];
	const char *path = getenv("PATH");

	for (size_t i = 0; fixed[i] != NULL; i++)
		if (access(fixed[i], X_OK) == 0)
			return fixed[i];
	for (const char *p = path; p != NULL && *p != '\0';) {
		const char *c = strchr(p, ':');
		size_t n = c != NULL ? (size_t)(c - p) : strlen(p);
		if (n > 0 && n < sizeof found - 12) {
			snprintf(found, sizeof found, "%.*s/virtiofsd", (int)n, p);
			if (found[0] == '/' && access(found, X_OK) == 0)
				return found;
		}
		p = c != NULL ? c + 1 : NULL;
	}
	return NULL;
}

static int write_file(const char *path, const char *s, struct berth_error *err)
{
	cleanup_close int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t n = strlen(s);

	if (fd < 0 || write(fd, s, n) != (ssize_t)n)
		return berth_err(err, errno, "cannot write `%s` for virtiofsd's user namespace", path);
	return 0;
}

/* Step 2. */
static int enter_userns(uint32_t u, uint32_t g, uid_t caller, gid_t caller_gid, struct berth_error *err)
{
	char map[64];

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
		berth_err(err, errno, "cannot make virtiofsd's user and mount namespaces");
		return berth_err_hint(err,
				      "the vm runtime needs user namespaces (sysctl "
				      "kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0)");
	}
	if (write_file("/proc/self/setgroups", "deny", err) < 0)
		return -1;
	snprintf(map, sizeof map, "%u %u 1", u, (unsigned)caller);
	if (write_file("/proc/self/uid_map", map, err) < 0)
		return -1;
	snprintf(map, sizeof map, "%u %u 1", g, (unsigned)caller_gid);
	return write_file("/proc/self/gid_map", map, err);
}

/* Step 5: every permitted capability inheritable, then ambient. */
static int keep_caps(struct berth_error *err)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct d[2];
	int last = CAP_LAST_CAP;
	char buf[16] = "";
	cleanup_close int fd = open("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC);

	if (fd >= 0 && read(fd, buf, sizeof buf - 1) > 0)
		last = atoi(buf);
	if (syscall(SYS_capget, &h, d) < 0)
		return berth_err(err, errno, "capget");
	d[0].inheritable = d[0].permitted;
	d[1].inheritable = d[1].permitted;
	if (syscall(SYS_capset, &h, d) < 0)
		return berth_err(err, errno, "capset");
	for (int c = 0; c <= last && c < 64; c++)
		if ((c < 32 ? d[0].permitted >> c : d[1].permitted >> (c - 32)) & 1u)
			if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0) < 0)
				return berth_err(err, errno, "cannot keep capability %d for virtiofsd", c);
	return 0;
}

/*
 * Step 5b: virtiofsd drops its supplementary groups (setgroups(0, NULL))
 * and exits when it cannot.  An unprivileged caller's cannot be dropped: a
 * user namespace it maps itself must deny setgroups(2) (user_namespaces(7)).
 * They are the caller's own, which the namespace runtime's sandbox keeps
 * as well, and the staging tree holds only what the policy shares: for
 * virtiofsd, setgroups succeeds without doing anything (a filter of its
 * own, seccomp SECCOMP_RET_ERRNO with 0, under virtiofsd's own filter).
 * Root drops them for real before the namespace is made.
 */
static int setgroups_noop(struct berth_error *err)
{
	struct sock_filter f[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_setgroups, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};

	if (getgroups(0, NULL) == 0)
		return 0;
	/* CAP_SYS_ADMIN in its own user namespace: no NO_NEW_PRIVS needed */
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		return berth_err(err, errno, "cannot load virtiofsd's setgroups filter");
	return 0;
}

/* Step 4: fd 3 the socket, fd 4 the error pipe (close-on-exec), @lfd the
 * log as stdout and stderr, nothing else.  Returns the error pipe's new
 * number, 4, or -1 with @err. */
static int child_stdio(int sock, int efd, int lfd, struct berth_error *err)
{
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

	/* out of the way of 0..4 first */
	sock = fcntl(sock, F_DUPFD_CLOEXEC, 100);
	efd = fcntl(efd, F_DUPFD_CLOEXEC, 100);
	lfd = fcntl(lfd, F_DUPFD_CLOEXEC, 100);
	if (sock < 0 || efd < 0 || null < 0 || lfd < 0)
		return berth_err(err, errno, "cannot open virtiofsd's stdio");
	if (dup2(null, 0) < 0 || dup2(lfd, 1) < 0 || dup2(lfd, 2) < 0 || dup2(sock, 3) < 0 ||
	    dup3(efd, 4, O_CLOEXEC) < 0)
		return berth_err(err, errno, "dup2");
	berth_close_all_but(3, 4);
	return 4;
}

/*
 * Steps 2 and 3 for root.  Mapping U to host uid 0 would hand the guest
 * every root-owned file of the shared system directories as its own
 * (/etc/shadow, host keys): root's guest is berth's unprivileged host id
 * instead (BERTH_ROOT_HOST_UID, as the namespace runtime's sandbox), and
 * its writable shares are idmapped so that what it writes there is owned
 * by their owner (userns.h, berth_idmapped_tree).  So the staging tree is
 * built first, as root, in a mount namespace of its own; then the child
 * becomes that id and maps U to it in a user namespace it makes itself
 * (whose copy of the mounts locks them: read-only stays read-only).
 */
/* Where root's virtiofsd finds the tree: a directory every id may pass
 * through on every host, covered in virtiofsd's mount namespace only. */
#define ROOT_SOURCE "/tmp"

static int root_staging(const struct vm_rt *vm, struct berth_error *err)
{
	struct berth_ids ids = {.host_uid = vm->host_uid, .host_gid = vm->host_gid};

	if (setgroups(0, NULL) < 0)
		return berth_err(err, errno, "cannot drop the supplementary groups for virtiofsd");
	if (unshare(CLONE_NEWNS) < 0)
		return berth_err(err, errno, "cannot make virtiofsd's mount namespace");
	if (berth_vm_build_staging(vm->p, vm->staging, &ids, err) < 0)
		return -1;
	/* that id cannot pass through berth's runtime directory (root's,
	 * 0700): the tree moves to ROOT_SOURCE, of this namespace only */
	if (mount(vm->staging, ROOT_SOURCE, NULL, MS_MOVE, NULL) < 0)
		return berth_err(err, errno, "cannot move the staging tree to `%s`", ROOT_SOURCE);
	if (setresgid(vm->host_gid, vm->host_gid, vm->host_gid) < 0 ||
	    setresuid(vm->host_uid, vm->host_uid, vm->host_uid) < 0)
		return berth_err(err, errno, "cannot become uid %u for virtiofsd", vm->host_uid);
	/* the id change made it undumpable: its /proc/self files root's, its
	 * own maps unwritable.  Its execve makes it dumpable again anyway. */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
		return berth_err(err, errno, "prctl PR_SET_DUMPABLE");
	return enter_userns(vm->uid, vm->gid, vm->host_uid, vm->host_gid, err);
}

/* @prefix then @value with `,` and `\` escaped by a `\` (fuse_opt_parse's rule); -1 when too long. */
static int fuse_opt_escape(char *buf, size_t len, const char *prefix, const char *value)
{
	size_t k = (size_t)snprintf(buf, len, "%s", prefix);

	for (const char *c = value; k + 2 < len && *c != '\0'; c++) {
		if (*c == ',' || *c == '\\')
			buf[k++] = '\\';
		buf[k++] = *c;
	}
	if (k + 2 >= len)
		return -1;
	buf[k] = '\0';
	return 0;
}

static _Noreturn void child(const struct vm_rt *vm, int sock, int efd, pid_t parent)
{
	struct berth_error err = {0};
	char src[2 * PATH_MAX + 16], log[PATH_MAX + 32];
	const char *bin = berth_vm_virtiofsd_path();
	int e, lfd;
	bool root = getuid() == 0;

	/* step 1 */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
		_exit(125);
	/* fuse's option list splits at `,` and unescapes `\`: a path with either must stay one value */
	if (fuse_opt_escape(src, sizeof src, "source=", root ? ROOT_SOURCE : vm->staging) < 0)
		_exit(125);
	snprintf(log, sizeof log, "%s/virtiofsd.log", vm->dir);
	lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (bin == NULL) {
		berth_err(&err, ENOENT, "virtiofsd is not installed");
	} else if (lfd < 0) {
		berth_err(&err, errno, "cannot open `%s`", log);
	} else if ((root
			? root_staging(vm, &err)
			: enter_userns(vm->uid, vm->gid, vm->host_uid, vm->host_gid, &err) ||
			      berth_vm_build_staging(vm->p, vm->staging, NULL, &err)) == 0 && /* steps 2, 3 */
		   (e = child_stdio(sock, efd, lfd, &err)) >= 0) {                            /* step 4 */
		efd = e;
		if (keep_caps(&err) == 0 && setgroups_noop(&err) == 0) { /* step 5 */
			char *argv[] = {(char *)"virtiofsd",
					(char *)"--fd=3",
					(char *)"-o",
					src,
					(char *)"-o",
					(char *)"sandbox=namespace",
					(char *)"-o",
					(char *)"cache=auto",
					(char *)"--rlimit-nofile=0",
					NULL};
			char *envp[] = {NULL};
			execve(bin, argv, envp); /* step 6 */
			berth_err(&err, errno, "cannot execute `%s`", bin);
		}
	}
	(void)!write(efd, &err, sizeof err);
	_exit(125);
}

int berth_vm_start_virtiofsd(struct vm_rt *vm, struct berth_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	cleanup_close int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int ep[2];
	pid_t parent = getpid();
	struct berth_error ce;
	ssize_t n;

	if (sock < 0)
		return berth_err(err, errno, "socket");
	if (strlen(vm->fs_sock) >= sizeof sa.sun_path)
		return berth_err(err, ENAMETOOLONG, "the socket path `%s` is too long", vm->fs_sock);
	strcpy(sa.sun_path, vm->fs_sock);
	/* in the run directory (0700): only the caller reaches it */
	if (bind(sock, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(sock, 1) < 0)
		return berth_err(err, errno, "cannot listen on `%s`", vm->fs_sock);
	if (mkdir(vm->staging, 0700) < 0)
		return berth_err(err, errno, "cannot make `%s`", vm->staging);
	if (pipe2(ep, O_CLOEXEC) < 0)
		return berth_err(err, errno, "pipe");
	vm->virtiofsd = fork();
	if (vm->virtiofsd < 0) {
		close(ep[0]);
		close(ep[1]);
		return berth_err(err, errno, "cannot fork virtiofsd");
	}
	if (vm->virtiofsd == 0) {
		close(ep[0]);
		child(vm, sock, ep[1], parent);
	}
	close(ep[1]);
	berth_vm_janitor_add(vm, vm->virtiofsd);
	/* end of file: its execve succeeded; else its error */
	do
		n = read(ep[0], &ce, sizeof ce);
	while (n < 0 && errno == EINTR);
	close(ep[0]);
	if (n == (ssize_t)sizeof ce) {
		*err = ce;
		return berth_err_wrap(err, "virtiofsd");
	}
	if (n != 0) {
		int st = 0;
		waitpid(vm->virtiofsd, &st, 0);
		vm->virtiofsd = -1;
		return berth_err(err, 0, "virtiofsd died while it was set up");
	}
	return 0;
}
