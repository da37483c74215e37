/* SPDX-License-Identifier: MIT */
/*
 * enter.c - one more process in a running container (`berth oci exec`,
 * sandbox.h berth_sandbox_enter): it joins the sandbox's cgroups and
 * namespaces and is confined as the container's own command is (no
 * capabilities, NO_NEW_PRIVS, the container's Landlock rules, berth's
 * seccomp filter and the container's profile) before its execve.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/sys.h"
#include "caps.h"
#include "landlock.h"
#include "sandbox.h"
#include "seccomp.h"
#include "spawn_int.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

#define ENTER_CGROUPS_MAX 16

/* The cgroup.procs files of @init's cgroups berth made (every hierarchy
 * whose path is not the root), read from /proc/PID/cgroup. */
struct enter_cgroups {
	char procs[ENTER_CGROUPS_MAX][PATH_MAX];
	int n;
};

static void read_cgroups(pid_t init, struct enter_cgroups *cg)
{
	char path[64], line[PATH_MAX];
	FILE *f;

	cg->n = 0;
	snprintf(path, sizeof path, "/proc/%d/cgroup", (int)init);
	f = fopen(path, "re");
	while (f != NULL && cg->n < ENTER_CGROUPS_MAX && fgets(line, sizeof line, f) != NULL) {
		char *ctl = strchr(line, ':'), *rel, *nl;
		struct stat st;
		if (ctl == NULL || (rel = strchr(ctl + 1, ':')) == NULL)
			continue;
		*rel++ = '\0';
		ctl++;
		if ((nl = strchr(rel, '\n')) != NULL)
			*nl = '\0';
		/* only the run's own (limits_cgroup.c: PARENT/berth-RUNID):
		 * without them (no writable cgroup) berth made none to join */
		{
			const char *base = strrchr(rel, '/');
			if (base == NULL || strncmp(base + 1, "berth-", 6) != 0)
				continue;
		}
		if (strncmp(ctl, "name=", 5) == 0)
			ctl += 5;
		/* v2 ("0::/path") at /sys/fs/cgroup or, on a hybrid host,
		 * /sys/fs/cgroup/unified; v1 at /sys/fs/cgroup/CONTROLLERS */
		if (ctl[0] == '\0') {
			snprintf(cg->procs[cg->n], sizeof cg->procs[0], "/sys/fs/cgroup%s/cgroup.procs", rel);
			if (stat(cg->procs[cg->n], &st) < 0)
				snprintf(cg->procs[cg->n], sizeof cg->procs[0],
					 "/sys/fs/cgroup/unified%s/cgroup.procs", rel);
		} else {
			snprintf(cg->procs[cg->n], sizeof cg->procs[0], "/sys/fs/cgroup/%s%s/cgroup.procs",
				 ctl, rel);
		}
		if (stat(cg->procs[cg->n], &st) == 0)
			cg->n++;
	}
	if (f != NULL)
		fclose(f);
}

/* The child's failure, to the caller through @fd; then exit. */
static __attribute__((noreturn)) void enter_fail(int fd, struct berth_error *err, int status)
{
	err->status = status;
	(void)!write(fd, err, sizeof *err);
	_exit(status);
}

static const char *env_path(char *const *envp)
{
	for (int i = 0; envp != NULL && envp[i] != NULL; i++)
		if (strncmp(envp[i], "PATH=", 5) == 0)
			return envp[i] + 5;
	return BERTH_SYSTEM_PATH;
}

/* execvp(3) on the container's PATH; the errno of the best failure. */
static int exec_search(char *const *argv, char *const *envp)
{
	char path[PATH_MAX];
	int best = ENOENT;

	if (strchr(argv[0], '/') != NULL) {
		execve(argv[0], argv, envp);
		return errno;
	}
	for (const char *dir = env_path(envp); *dir != '\0';) {
		const char *end = strchrnul(dir, ':');
		snprintf(path, sizeof path, "%.*s/%s", (int)(end - dir), dir, argv[0]);
		execve(path, argv, envp);
		if (errno != ENOENT && errno != ENOTDIR)
			best = errno;
		dir = *end == ':' ? end + 1 : end;
	}
	return best;
}

/* A pseudo-terminal of the container's own devpts: the master to the
 * caller over @sock, the slave as the controlling terminal and stdio. */
static int enter_pty(int sock, struct berth_error *err)
{
	cleanup_close int master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	char name[64];
	int slave;
	char byte = 't';
	struct iovec iov = {&byte, 1};
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u = {0};
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0 ||
	    ptsname_r(master, name, sizeof name) != 0)
		return berth_err(err, errno, "cannot open a pseudo-terminal in the container");
	slave = open(name, O_RDWR | O_NOCTTY);
	if (slave < 0)
		return berth_err(err, errno, "cannot open `%s` in the container", name);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &master, sizeof master);
	if (sendmsg(sock, &mh, MSG_NOSIGNAL) < 0)
		return berth_err(err, errno, "cannot hand the terminal over");
	if (setsid() < 0 || ioctl(slave, TIOCSCTTY, 0) < 0 || dup2(slave, 0) < 0 || dup2(slave, 1) < 0 ||
	    dup2(slave, 2) < 0)
		return berth_err(err, errno, "cannot attach the pseudo-terminal");
	if (slave > 2)
		close(slave);
	return 0;
}

/* In the child: everything from the cgroups to the execve. */
static __attribute__((noreturn)) void enter_child(const struct berth_policy *p, int pidfd,
						  const struct berth_enter *e, const struct enter_cgroups *cg,
						  const struct berth_bpf *bpf, const struct berth_bpf *cbpf,
						  int errfd)
{
	const struct berth_container *c = p->container;
	struct berth_ll_rule rules[BERTH_POLICY_LANDLOCK_RULES_MAX];
	struct berth_error err = {0};
	struct rlimit rl = {p->nofile, p->nofile};
	int n_rules, abi = berth_landlock_abi(), ex;

	/* Not dumpable until its execve: what runs in the container cannot
	 * reach this process (ptrace, /proc/PID/fd) while it still holds the
	 * host's descriptors (runc's CVE-2016-9962 class).  Landlock's scoping
	 * keeps the container's processes from tracing it too. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	{
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
	}
	/* The container's cgroups (limits, accounting), from the host's view:
	 * "0" is the writer itself. */
	for (int i = 0; i < cg->n; i++) {
		int fd = open(cg->procs[i], O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "0", 1) != 1) {
			berth_err(&err, errno, "cannot join the container's cgroup `%s`", cg->procs[i]);
			enter_fail(errfd, &err, BERTH_EXIT_INTERNAL);
		}
		close(fd);
	}
	/* The namespaces the sandbox's pid 1 is in, the user namespace last:
	 * joining the others needs the host's capabilities over them.  The
	 * cgroup one after the cgroups above (its root is the container's
	 * cgroup): in the host's, the process would see the host's paths. */
	if (setns(pidfd, CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP) < 0 ||
	    setns(pidfd, CLONE_NEWNS) < 0 || setns(pidfd, CLONE_NEWUSER) < 0) {
		berth_err(&err, errno, "cannot enter the container's namespaces");
		enter_fail(errfd, &err, BERTH_EXIT_INTERNAL);
	}
	if (setgroups(0, NULL) < 0 && errno != EPERM) {
		berth_err(&err, errno, "setgroups");
		enter_fail(errfd, &err, BERTH_EXIT_INTERNAL);
	}
	if (setresgid(e->gid, e->gid, e->gid) < 0 || setresuid(e->uid, e->uid, e->uid) < 0 ||
	    berth_sb_check_ids(e->uid, e->gid) < 0) {
		berth_err(&err, errno,
			  "cannot become uid %u gid %u in the container (only the container's own "
			  "process.user is mapped)",
			  e->uid, e->gid);
		enter_fail(errfd, &err, BERTH_EXIT_INTERNAL);
	}
	if (e->want_pty && enter_pty(e->pty_sock, &err) < 0)
		enter_fail(errfd, &err, BERTH_EXIT_INTERNAL);
	/* Nothing of the host's stays open from here on (the caller's
	 * descriptors, the pidfd, the state directory `exec` read): a path of
	 * the process file (cwd, args[0]) could reach the host's tree through
	 * /proc/self/fd/N (runc CVE-2024-21626).  Only stdio and @errfd. */
	berth_close_all_except(&errfd, 1);
	if (berth_sb_enter_cwd(e->cwd != NULL ? e->cwd : c->cwd) < 0) {
		int en = errno;
		berth_err(&err, en, "cannot enter the working directory `%s`",
			  e->cwd != NULL ? e->cwd : c->cwd);
		if (en == ELOOP || en == EXDEV)
			berth_err_hint(&err, "%s", BERTH_CWD_HINT);
		enter_fail(errfd, &err, BERTH_EXIT_INTERNAL);
	}
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
		berth_err(&err, errno, "cannot set RLIMIT_NOFILE to %u", (unsigned)p->nofile);
		enter_fail(errfd, &err, BERTH_EXIT_INTERNAL);
	}
	for (size_t i = 0; i < c->n_rlimits; i++) {
		struct rlimit r = {c->rlimits[i].soft, c->rlimits[i].hard}, now;
		if (c->rlimits[i].resource == RLIMIT_NOFILE || getrlimit(c->rlimits[i].resource, &now) < 0)
			continue;
		/* never above what the process has: as the container's command */
		if (r.rlim_max > now.rlim_max)
			r.rlim_max = now.rlim_max;
		if (r.rlim_cur > r.rlim_max)
			r.rlim_cur = r.rlim_max;
		(void)setrlimit(c->rlimits[i].resource, &r);
	}
	if (c->has_umask)
		umask((mode_t)(c->umask & 0777));
	if (berth_caps_drop_all(&err) < 0)
		enter_fail(errfd, &err, BERTH_EXIT_INTERNAL);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		berth_err(&err, errno, "cannot set NO_NEW_PRIVS");
		enter_fail(errfd, &err, BERTH_EXIT_INTERNAL);
	}
	n_rules = berth_sb_container_rules(p, rules, (int)BERTH_ARRAY_SIZE(rules));
	/* TCP: what the container's own command may (no broker port is known
	 * here: a proxied container's exec reaches none, the stricter side) */
	if (abi > 0 &&
	    berth_landlock_apply(abi, rules, n_rules, p->network != BERTH_NET_HOST, NULL, 0, &err) < 0)
		enter_fail(errfd, &err, BERTH_EXIT_INTERNAL);
	if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		for (int fd = 3; fd < 65536; fd++)
			if (fd != errfd)
				fcntl(fd, F_SETFD, FD_CLOEXEC);
	/* the container's profile between two copies of berth's filter, as
	 * for the container's own command (spawn_child.c) */
	if (bpf->insns != NULL && berth_seccomp_load_stacked(bpf, cbpf, &err) < 0)
		enter_fail(errfd, &err, BERTH_EXIT_INTERNAL);
	ex = exec_search(e->argv, e->envp);
	berth_err(&err, ex, "cannot run `%s`", e->argv[0]);
	if (ex == ENOENT)
		berth_err_hint(&err, "no such command in the container's PATH (%s) or file in its root",
			       env_path(e->envp));
	enter_fail(errfd, &err, ex == ENOENT ? BERTH_EXIT_NOTFOUND : BERTH_EXIT_NOEXEC);
}

pid_t berth_sandbox_enter(const struct berth_policy *p, pid_t init, const struct berth_enter *e,
			  struct berth_error *err)
{
	struct berth_seccomp_opts so = {0};
	struct berth_bpf bpf = {0}, cbpf = {0};
	struct enter_cgroups cg;
	struct berth_error cerr;
	cleanup_close int pidfd = -1;
	int pipefd[2];
	pid_t pid;
	ssize_t n;

	if (p->container == NULL || e->argv == NULL || e->argv[0] == NULL)
		return berth_usage_err(err, "nothing to run in the container"), -1;
	if (geteuid() != 0)
		return berth_err(err, EPERM, "entering a running container needs root (the host's)"), -1;
	if (e->uid == (uint32_t)-1 || e->gid == (uint32_t)-1) {
		/* "unchanged" to setresuid(2): the process would stay the host's root */
		berth_usage_err(err, "cannot run a process as %s 4294967295 in the container",
				e->uid == (uint32_t)-1 ? "uid" : "gid");
		return berth_err_hint(err, "(uid_t)-1 is no id; give one the container maps"), -1;
	}
	pidfd = (int)syscall(SYS_pidfd_open, init, 0);
	if (pidfd < 0)
		return berth_err(err, errno, "the container's pid 1 (%d) is gone", (int)init), -1;
	read_cgroups(init, &cg);
	if (berth_seccomp_available() &&
	    (berth_seccomp_compile(p, &so, &bpf, err) < 0 ||
	     (p->container->seccomp != NULL &&
	      berth_seccomp_compile_oci(p->container->seccomp, &cbpf, err) < 0))) {
		berth_bpf_free(&bpf);
		return -1;
	}
	/* Its children (the one below) are born in the container's pid
	 * namespace: a pid namespace is entered by forking. */
	if (setns(pidfd, CLONE_NEWPID) < 0 || pipe2(pipefd, O_CLOEXEC) < 0) {
		berth_err(err, errno, "cannot enter the container's pid namespace");
		goto fail;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		berth_err(err, errno, "fork");
		close(pipefd[0]);
		close(pipefd[1]);
		goto fail;
	}
	if (pid == 0) {
		close(pipefd[0]);
		enter_child(p, pidfd, e, &cg, &bpf, &cbpf, pipefd[1]);
	}
	close(pipefd[1]);
	berth_bpf_free(&bpf);
	berth_bpf_free(&cbpf);
	do
		n = read(pipefd[0], &cerr, sizeof cerr);
	while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	if (n == (ssize_t)sizeof cerr) {
		/* it failed before its execve: reaped here, reported as its own */
		waitpid(pid, NULL, 0);
		*err = cerr;
		return -1;
	}
	return pid; /* end of file: the execve succeeded */
fail:
	berth_bpf_free(&bpf);
	berth_bpf_free(&cbpf);
	return -1;
}
