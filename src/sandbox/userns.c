/* SPDX-License-Identifier: MIT */

#include "userns.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "landlock.h"

static int write_file(const char *path, const char *s, struct berth_error *err)
{
	cleanup_close int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t n = strlen(s);

	if (fd < 0)
		return berth_err(err, errno, "cannot open `%s`", path);
	if (write(fd, s, n) != (ssize_t)n)
		return berth_err(err, errno, "cannot write `%s` to `%s`", s, path);
	return 0;
}

static int write_maps(pid_t pid, uid_t in_uid, uid_t out_uid, gid_t in_gid, gid_t out_gid, uint32_t len,
		      bool deny, struct berth_error *err)
{
	char path[64], line[64];

	if (deny) {
		snprintf(path, sizeof path, "/proc/%d/setgroups", (int)pid);
		if (write_file(path, "deny", err) < 0)
			return -1;
	}
	snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
	snprintf(line, sizeof line, "%u %u %u\n", (unsigned)in_uid, (unsigned)out_uid, (unsigned)len);
	if (write_file(path, line, err) < 0)
		return -1;
	snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
	snprintf(line, sizeof line, "%u %u %u\n", (unsigned)in_gid, (unsigned)out_gid, (unsigned)len);
	return write_file(path, line, err);
}

int berth_userns_write_maps(pid_t pid, const struct berth_ids *ids, struct berth_error *err)
{
	if (ids->map_len > 0)
		return write_maps(pid, ids->map_in_uid, ids->map_host_uid, ids->map_in_gid, ids->map_host_gid,
				  ids->map_len, ids->deny_setgroups, err);
	return write_maps(pid, ids->in_uid, ids->host_uid, ids->in_gid, ids->host_gid, 1, ids->deny_setgroups,
			  err);
}

/* A throwaway user namespace whose only purpose is to describe an idmapping. */
static int idmap_userns_fd(uid_t owner_uid, gid_t owner_gid, const struct berth_ids *ids,
			   struct berth_error *err)
{
	int pfd[2];
	pid_t pid;
	char path[64];
	int fd, r;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return berth_err(err, errno, "pipe");
	pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, NULL);
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		int e = errno;
		berth_err(err, e, "cannot create the idmapping user namespace");
		/* The same refusal the sandbox's own clone would meet. */
		return e == EPERM || e == ENOSPC || e == EUSERS || e == EINVAL ? -2 : -1;
	}
	if (pid == 0) {
		char c;
		close(pfd[1]);
		(void)!read(pfd[0], &c, 1); /* wait until the parent is done, then go */
		_exit(0);
	}
	close(pfd[0]);
	/* On disk (inside) owner -> seen as (outside) the sandbox's host id. */
	r = write_maps(pid, owner_uid, ids->host_uid, owner_gid, ids->host_gid, 1, false, err);
	snprintf(path, sizeof path, "/proc/%d/ns/user", (int)pid);
	fd = r < 0 ? -1 : open(path, O_RDONLY | O_CLOEXEC);
	if (r == 0 && fd < 0)
		berth_err(err, errno, "cannot open `%s`", path);
	close(pfd[1]);
	waitpid(pid, NULL, 0);
	return fd;
}

int berth_idmapped_tree(int fd, const char *path, uid_t owner_uid, gid_t owner_gid,
			const struct berth_ids *ids, bool ro, struct berth_error *err)
{
	cleanup_close int ns = idmap_userns_fd(owner_uid, owner_gid, ids, err);
	cleanup_close int mfd = -1;
	struct mount_attr attr = {
	    .attr_set =
		MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (ro ? MOUNT_ATTR_RDONLY : 0),
	};

	if (ns < 0)
		return ns;
	attr.userns_fd = (uint64_t)ns;
	mfd =
	    (int)syscall(SYS_open_tree, fd >= 0 ? fd : AT_FDCWD, fd >= 0 ? "" : path,
			 OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | (fd >= 0 ? AT_EMPTY_PATH : 0));
	if (mfd < 0)
		return berth_err(err, errno, "cannot clone the mount tree of `%s`", path);
	if (syscall(SYS_mount_setattr, mfd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) < 0) {
		/* A submount whose filesystem cannot be idmapped: map the top only. */
		close(mfd);
		mfd = (int)syscall(SYS_open_tree, fd >= 0 ? fd : AT_FDCWD, fd >= 0 ? "" : path,
				   OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (fd >= 0 ? AT_EMPTY_PATH : 0));
		if (mfd < 0)
			return berth_err(err, errno, "cannot clone the mount of `%s`", path);
		if (syscall(SYS_mount_setattr, mfd, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0)
			return berth_err(err, errno, "cannot make an idmapped mount of `%s`", path);
	}
	return steal_fd(&mfd);
}

int berth_userns_probe(void)
{
	pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, NULL);
	int st;

	if (pid < 0)
		return errno;
	if (pid == 0)
		_exit(0);
	if (waitpid(pid, &st, 0) < 0)
		return errno;
	return 0;
}

/* The first line of @path, without its newline, into @buf ("" when unreadable). */
static void read_first_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (f == NULL)
		return;
	if (fgets(buf, (int)len, f) == NULL)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* Is a seccomp filter installed on this process (/proc/self/status, proc(5))? */
static bool seccomp_filtered(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	bool on = false;

	if (f == NULL)
		return false;
	while (fgets(line, sizeof line, f) != NULL)
		if (strncmp(line, "Seccomp:", 8) == 0) {
			on = atoi(line + 8) == 2; /* SECCOMP_MODE_FILTER */
			break;
		}
	fclose(f);
	return on;
}

bool berth_userns_host_root(void)
{
	char buf[64];
	unsigned a = 1, b = 1, c = 0;

	if (geteuid() != 0)
		return false;
	read_first_line("/proc/self/uid_map", buf, sizeof buf);
	return sscanf(buf, "%u %u %u", &a, &b, &c) == 3 && a == 0 && b == 0 && c == 4294967295U;
}

unsigned berth_userns_outer_uid(unsigned uid)
{
	cleanup_fclose FILE *f = fopen("/proc/self/uid_map", "re");
	unsigned in, out, n;

	if (f == NULL)
		return uid;
	while (fscanf(f, "%u %u %u", &in, &out, &n) == 3)
		if (uid >= in && uid - in < n)
			return out + (uid - in);
	return 65534;
}

bool berth_userns_inside_berth(void)
{
	char buf[64];
	size_t n = 0;
	FILE *f;

	/* The kernel's view: new user namespaces are capped at 0 here, and a
	 * seccomp filter is on, as berth leaves every sandbox (spawn_child.c,
	 * userns_limits and the seccomp table). */
	read_first_line("/proc/sys/user/max_user_namespaces", buf, sizeof buf);
	if (strcmp(buf, "0") != 0 || !seccomp_filtered())
		return false;
	/* And berth's mark: its pid 1 is `berth-init`. */
	f = fopen("/proc/1/cmdline", "re");
	if (f == NULL)
		return false;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strcmp(buf, "berth-init") == 0;
}

/* ---------------------------------------------------- refused by an LSM */

static int read_int(const char *path, int dflt)
{
	char buf[32];

	read_first_line(path, buf, sizeof buf);
	return buf[0] >= '0' && buf[0] <= '9' ? atoi(buf) : dflt;
}

/* A child in a new user and mount namespace tries what berth's child does
 * first (make the tree a slave); its errno is the answer. */
static void mount_probe(struct berth_lsm_facts *f)
{
	int pfd[2], e[2] = {-1, -1};
	pid_t pid;

	f->unshare_probe_errno = f->mount_probe_errno = -1;
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return;
	}
	if (pid == 0) {
		int r[2] = {0, -1};
		close(pfd[0]);
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
			r[0] = errno;
		else
			r[1] = mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0 ? errno : 0;
		(void)!write(pfd[1], r, sizeof r);
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], e, sizeof e) != (ssize_t)sizeof e)
		e[0] = e[1] = -1;
	close(pfd[0]);
	waitpid(pid, NULL, 0);
	f->unshare_probe_errno = e[0];
	f->mount_probe_errno = e[1];
}

void berth_lsm_facts_read(struct berth_lsm_facts *f)
{
	char sel[8];

	memset(f, 0, sizeof *f);
	f->root = geteuid() == 0;
	f->apparmor_restrict = read_int("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", -1);
	read_first_line("/proc/self/attr/apparmor/current", f->apparmor_label, sizeof f->apparmor_label);
	read_first_line("/sys/fs/selinux/enforce", sel, sizeof sel);
	f->selinux_enforcing = sel[0] == '1';
	if (f->selinux_enforcing)
		read_first_line("/proc/self/attr/current", f->selinux_context, sizeof f->selinux_context);
	else if (f->apparmor_label[0] == '\0')
		read_first_line("/proc/self/attr/current", f->apparmor_label, sizeof f->apparmor_label);
	f->seccomp_filtered = seccomp_filtered();
	f->userns_clone_sysctl = read_int("/proc/sys/kernel/unprivileged_userns_clone", -1);
	f->max_user_namespaces = read_int("/proc/sys/user/max_user_namespaces", -1);
	{
		char map[64];
		FILE *m = fopen("/proc/self/uid_map", "re");
		if (m != NULL) {
			f->uid_unmapped = fgets(map, sizeof map, m) == NULL;
			fclose(m);
		}
	}
	f->landlock_active = berth_landlock_abi() > 0;
	mount_probe(f);
}

/* The hint, formatted into @buf of @len bytes (cut to fit); returns @buf. */
static const char *hint(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static const char *hint(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return buf;
}

/* Confined by an AppArmor profile other than "unconfined". */
static bool apparmor_confined(const struct berth_lsm_facts *f)
{
	return f->apparmor_label[0] != '\0' && strncmp(f->apparmor_label, "unconfined", 10) != 0;
}

const char *berth_lsm_refusal(enum berth_userns_step step, int errnum, const struct berth_lsm_facts *f,
			      char *buf, size_t len)
{
	const char *what = step == BERTH_STEP_MAPS ? "writing the new user namespace's uid/gid maps"
						   : "mounting inside the new user namespace";

	if (errnum != EPERM && errnum != EACCES)
		return NULL;
	/* A plain mount in a fresh namespace works: not the environment. */
	if (f->mount_probe_errno == 0 && step == BERTH_STEP_MOUNT)
		return NULL;
	/* AppArmor's restriction applies to callers without CAP_SYS_ADMIN:
	 * the clone succeeds, the namespace gets no capabilities. */
	if (f->apparmor_restrict == 1 && !f->root)
		return hint(
		    buf, len,
		    "AppArmor refused %s: kernel.apparmor_restrict_unprivileged_userns=1 (Ubuntu 23.10 and "
		    "later) gives unprivileged user namespaces no capabilities unless a profile allows them; "
		    "have an administrator load a profile for berth (/etc/apparmor.d/berth: `abi <abi/4.0>, "
		    "include <tunables/global> profile berth /path/to/berth flags=(unconfined) { userns, }`, "
		    "then `apparmor_parser -r /etc/apparmor.d/berth`), or set the sysctl to 0 for every "
		    "program (`sysctl kernel.apparmor_restrict_unprivileged_userns=0`)",
		    what);
	if (apparmor_confined(f))
		return hint(
		    buf, len,
		    "AppArmor refused %s: berth runs confined by the profile `%.100s`; allow `userns,`, "
		    "`mount,`, `pivot_root,` and `capability sys_admin,` in that profile (%s), or start "
		    "berth "
		    "from an unconfined process",
		    what, f->apparmor_label,
		    f->root ? "`aa-complain` to confirm" : "an administrator's task");
	if (f->selinux_enforcing)
		return hint(
		    buf, len,
		    "SELinux refused %s: berth runs in the context `%.100s`, whose policy denies it (see "
		    "`ausearch -m avc -ts recent`); %s",
		    what, f->selinux_context[0] ? f->selinux_context : "?",
		    f->root ? "run berth from a domain allowed to create user namespaces and mount (e.g. "
			      "unconfined_t), or add a policy module allowing it"
			    : "ask an administrator for a policy module that allows it, or run berth from an "
			      "unconfined domain");
	/* Landlock refuses mount and pivot_root to a restricted process
	 * (security/landlock/fs.c) but not unshare: the namespace is made,
	 * the mount in it refused. */
	if (f->landlock_active && step == BERTH_STEP_MOUNT && f->unshare_probe_errno == 0 &&
	    f->mount_probe_errno == EPERM)
		return hint(
		    buf, len,
		    "a Landlock domain above berth refused %s (a process restricted by Landlock may not "
		    "mount or pivot_root, even as %s, and no process can leave the domain): start berth "
		    "from a process that is not Landlocked (the agent or tool that launched it sandboxed "
		    "itself)",
		    what, f->root ? "root" : "the owner of its own namespace");
	if (f->seccomp_filtered && (f->unshare_probe_errno > 0 || f->mount_probe_errno > 0))
		return hint(
		    buf, len,
		    "a seccomp filter above berth (a container runtime's, or the program that started "
		    "berth) refused %s; run berth on the host, or in a container started with "
		    "`--security-opt seccomp=unconfined`",
		    what);
	return NULL;
}

const char *berth_userns_clone_refusal(int errnum, const struct berth_lsm_facts *f, char *buf, size_t len)
{
	if (errnum == ENOSPC || f->max_user_namespaces == 0)
		return hint(
		    buf, len,
		    "user.max_user_namespaces is %ld: raise it (`sysctl user.max_user_namespaces=15000`, "
		    "as root)",
		    f->max_user_namespaces);
	if (errnum != EPERM)
		return NULL;
	if (f->uid_unmapped)
		return hint(
		    buf, len,
		    "berth runs in a user namespace that maps no uid for it (/proc/self/uid_map is "
		    "empty, as after `unshare -U`), where no user namespace can be created; run berth "
		    "outside it, or map its uid (`unshare -U --map-current-user`)");
	if (f->userns_clone_sysctl == 0 && !f->root)
		return hint(buf, len,
			    "kernel.unprivileged_userns_clone is 0 (Debian): users may not create user "
			    "namespaces; allow them (`sysctl kernel.unprivileged_userns_clone=1`, as root)");
	if (f->seccomp_filtered)
		return hint(
		    buf, len,
		    "a seccomp filter above berth (a container runtime's, or the program that started "
		    "berth) refuses new user namespaces; run berth on the host, or in a container "
		    "started with `--security-opt seccomp=unconfined`");
	return NULL;
}
