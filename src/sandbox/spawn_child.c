/* SPDX-License-Identifier: MIT */
/*
 * spawn_child.c - steps 6-13 of berth_sandbox_run() (spawn.c): the child side, from
 * sync 1 to the command's execve (berth_sb_child_main, command_main).
 */

#include <fcntl.h>
#include <linux/openat2.h>
#include <net/if.h>
#include <poll.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>

#include "../policy/sysdirs.h"
#include "../util/cleanup.h"
#include "../util/sys.h"
#include "caps.h"
#include "landlock.h"
#include "mounts.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

#include "spawn_int.h"

/* ---------------------------------------------------------- child side */

/*
 * The child comes from a raw clone(2) (step 4), so glibc still believes the
 * parent's threads exist in it (the audit trail's writer threads of
 * resident apps, berth mcp's other apps): its setgroups/setresuid/setresgid
 * wrappers would signal those threads (nptl's setxid broadcast, so that all
 * threads share credentials) and wait for them forever.  The child has one
 * thread: the system calls themselves are right (credentials(7): the kernel
 * call is per thread).
 */
static int raw_setgroups0(void)
{
	return (int)syscall(SYS_setgroups, 0, NULL);
}

static int raw_setresgid(gid_t g)
{
	return (int)syscall(SYS_setresgid, g, g, g);
}

static int raw_setresuid(uid_t u)
{
	return (int)syscall(SYS_setresuid, u, u, u);
}

int berth_sb_check_ids(uid_t uid, gid_t gid)
{
	uid_t r = 0, e = 0, sv = 0;
	gid_t rg = 0, eg = 0, sg = 0;

	/* (uid_t)-1 is "leave it as it is" to setresuid(2): asked for, it
	 * would keep the host's id of the process that asks */
	if (uid == (uid_t)-1 || gid == (gid_t)-1)
		return errno = EINVAL, -1;
	if (syscall(SYS_getresuid, &r, &e, &sv) < 0 || syscall(SYS_getresgid, &rg, &eg, &sg) < 0)
		return -1;
	if (r != uid || e != uid || sv != uid || rg != gid || eg != gid || sg != gid)
		return errno = EPERM, -1;
	return 0;
}

int berth_sb_enter_cwd(const char *dir)
{
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
	char cwd[PATH_MAX];
	int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), fd = -1, e;

	if (root < 0)
		return -1;
	/* EAGAIN: a rename somewhere on the way while the kernel resolved */
	for (int i = 0; i < 16; i++) {
		fd = (int)syscall(SYS_openat2, root, dir, &how, sizeof how);
		if (fd >= 0 || errno != EAGAIN)
			break;
	}
	e = errno;
	close(root);
	if (fd < 0 && e != ENOSYS)
		return errno = e, -1;
	if (fd < 0 ? chdir(dir) < 0 : fchdir(fd) < 0) {
		e = errno;
		if (fd >= 0)
			close(fd);
		return errno = e, -1;
	}
	if (fd >= 0)
		close(fd);
	/* The kernel's getcwd(2) starts with "(unreachable)" for a directory
	 * that is not below the process's root. */
	if (syscall(SYS_getcwd, cwd, sizeof cwd) < 0)
		return -1;
	if (cwd[0] != '/')
		return errno = EXDEV, -1;
	return 0;
}

static int become_identity(const struct sandbox *s, struct berth_error *err)
{
	if (!s->ids.deny_setgroups && raw_setgroups0() < 0)
		return berth_err(err, errno, "cannot drop supplementary groups");
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		return berth_err(err, errno, "PR_SET_KEEPCAPS");
	if (raw_setresgid(s->ids.in_gid) < 0)
		return berth_err(err, errno, "cannot set gid %u", (unsigned)s->ids.in_gid);
	if (raw_setresuid(s->ids.in_uid) < 0)
		return berth_err(err, errno, "cannot set uid %u", (unsigned)s->ids.in_uid);
	if (berth_sb_check_ids(s->ids.in_uid, s->ids.in_gid) < 0)
		return berth_err(err, errno, "the sandbox is not uid %u gid %u", (unsigned)s->ids.in_uid,
				 (unsigned)s->ids.in_gid);
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
		return berth_err(err, errno, "PR_SET_KEEPCAPS");
	return berth_caps_raise_effective(err);
}

/*
 * Limits of the sandbox's own user namespace (user_namespaces(7),
 * /proc/sys/user/: each namespace's limits apply on top of its parents',
 * and its usage is charged to the parents too).  Best effort: a kernel
 * without one of them still runs the sandbox.
 */
static void userns_limits(void)
{
	static const struct {
		const char *knob, *value;
	} lim[] = {
	    {"/proc/sys/user/max_inotify_instances", "32"}, /* host default: 128 per user */
	    {"/proc/sys/user/max_inotify_watches", "65536"},
	    {"/proc/sys/user/max_fanotify_groups", "8"},
	    {"/proc/sys/user/max_user_namespaces", "0"}, /* seccomp refuses them too */
	};

	for (size_t i = 0; i < BERTH_ARRAY_SIZE(lim); i++) {
		int fd = open(lim[i].knob, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		(void)!write(fd, lim[i].value, strlen(lim[i].value));
		close(fd);
	}
}

static int loopback_up(struct berth_error *err)
{
	struct ifreq ifr = {0};
	cleanup_close int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return berth_err(err, errno, "socket");
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		return berth_err(err, errno, "SIOCGIFFLAGS lo");
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		return berth_err(err, errno, "cannot bring up the loopback interface");
	return 0;
}

static int open_pty(int *master, int *slave, struct berth_error *err)
{
	int n = 0, unlock = 0;
	char name[64];

	*master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*master < 0)
		return berth_err(err, errno, "cannot open /dev/ptmx");
	if (ioctl(*master, TIOCSPTLCK, &unlock) < 0 || ioctl(*master, TIOCGPTN, &n) < 0)
		return berth_err(err, errno, "cannot unlock the pseudo-terminal");
	snprintf(name, sizeof name, "/dev/pts/%d", n);
	*slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*slave < 0)
		return berth_err(err, errno, "cannot open `%s`", name);
	return 0;
}

/* A resident app: the system directories the runtime needs, its own code
 * and the read-only mounts berth made for it (/app, the SDK), then exactly
 * the grants of its manifest (docs/manifest.md). */
static int landlock_app_rules(const struct sandbox *s, struct berth_ll_rule *r, int max)
{
	int n = berth_landlock_view_rules(true, r, max); /* the default view, src/policy/sysdirs.c */

	for (size_t i = 0; i < s->p->n_mounts && n < max; i++)
		if (!s->p->mounts[i].rw)
			r[n++] = (struct berth_ll_rule){s->p->mounts[i].dst, BERTH_LL_RX};
	for (size_t i = 0; i < s->p->n_grants && n < max; i++)
		r[n++] = (struct berth_ll_rule){s->p->grants[i].path,
						s->p->grants[i].write ? BERTH_LL_RW : BERTH_LL_RO};
	return n;
}

/* A container: its own root, read and execute (write too when the bundle
 * asks for a writable root), the kernel's interfaces as in the default
 * view, berth's /tmp and /dev/shm, the workspace and the bundle's mounts. */
int berth_sb_container_rules(const struct berth_policy *p, struct berth_ll_rule *r, int max)
{
	const struct berth_container *c = p->container;
	int n = 0;

	r[n++] = (struct berth_ll_rule){"/", c->root_rw ? BERTH_LL_RW : BERTH_LL_RX};
	for (size_t i = 0; i < berth_n_sysdirs && n < max; i++)
		if (berth_sysdirs[i].mount == BERTH_SYSDIR_OWN ||
		    berth_sysdirs[i].mount == BERTH_SYSDIR_TMPFS)
			r[n++] = (struct berth_ll_rule){berth_sysdirs[i].path, berth_sysdirs[i].ll_run};
	if (c->workspace_at != NULL && n < max)
		r[n++] = (struct berth_ll_rule){c->workspace_at, BERTH_LL_RW};
	for (size_t i = 0; i < p->n_mounts && n < max; i++)
		r[n++] =
		    (struct berth_ll_rule){p->mounts[i].dst, p->mounts[i].rw ? BERTH_LL_RW : BERTH_LL_RX};
	return n;
}

static int landlock_rules(const struct sandbox *s, struct berth_ll_rule *r, int max)
{
	int n;

	if (s->p->container != NULL)
		return berth_sb_container_rules(s->p, r, max);
	if (s->p->app)
		return landlock_app_rules(s, r, max);
	n = berth_landlock_view_rules(false, r, max); /* the default view, src/policy/sysdirs.c */
	if (s->use_userns) {
		r[n++] = (struct berth_ll_rule){"/workspace", BERTH_LL_RW};
		if (s->p->evidence_dir != NULL)
			r[n++] = (struct berth_ll_rule){"/evidence", BERTH_LL_RO}; /* read, never execute */
		r[n++] = (struct berth_ll_rule){s->home, BERTH_LL_RW};
		for (size_t i = 0; i < s->p->n_mounts && n < max; i++)
			r[n++] = (struct berth_ll_rule){s->p->mounts[i].dst,
							s->p->mounts[i].rw ? BERTH_LL_RW : BERTH_LL_RX};
	} else {
		r[n++] = (struct berth_ll_rule){s->p->workspace, BERTH_LL_RW};
		for (size_t i = 0; i < s->p->n_mounts && n < max; i++)
			r[n++] = (struct berth_ll_rule){s->p->mounts[i].src,
							s->p->mounts[i].rw ? BERTH_LL_RW : BERTH_LL_RX};
	}
	return n;
}

static void reset_signals(const struct sandbox *s)
{
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigprocmask(SIG_SETMASK, &s->oldmask, NULL);
}

/* The PATH commands are found on: berth's, or a container's own
 * (process.env), as runc does; a container without one gets berth's. */
static const char *exec_path(const struct sandbox *s)
{
	for (int i = 0; s->p->container != NULL && s->envp[i] != NULL; i++)
		if (strncmp(s->envp[i], "PATH=", 5) == 0)
			return s->envp[i] + 5;
	return BERTH_SYSTEM_PATH;
}

/* execvp(3) with the sandbox's PATH; returns the errno of the best failure. */
static int exec_search(const struct sandbox *s)
{
	const char *file = s->p->argv[0];
	const char *search;
	char path[PATH_MAX];
	int best = ENOENT;

	if (strchr(file, '/') != NULL) {
		execve(file, s->p->argv, s->envp);
		return errno;
	}
	search = exec_path(s);
	for (const char *dir = search; *dir != '\0';) {
		const char *end = strchrnul(dir, ':');
		snprintf(path, sizeof path, "%.*s/%s", (int)(end - dir), dir, file);
		execve(path, s->p->argv, s->envp);
		if (errno != ENOENT && errno != ENOTDIR)
			best = errno;
		dir = *end == ':' ? end + 1 : end;
	}
	return best;
}

/* Move the caller's stdio and RPC descriptors into place: 0-2 and 3.  The
 * sync socket is lifted above them first so no dup2 lands on it. */
static int place_fds(struct sandbox *s)
{
	if (!s->o->has_stdio && !s->o->has_rpc)
		return 0;
	s->sock[1] = fcntl(s->sock[1], F_DUPFD_CLOEXEC, 10);
	if (s->sock[1] < 0)
		return -1;
	int rpc = s->o->has_rpc ? fcntl(s->o->rpc_fd, F_DUPFD_CLOEXEC, 10) : -1;
	if (s->o->has_rpc && rpc < 0)
		return -1;
	for (int i = 0; s->o->has_stdio && i < 3; i++)
		if (s->o->stdio_fd[i] != i && dup2(s->o->stdio_fd[i], i) < 0)
			return -1;
	if (rpc >= 0 && dup2(rpc, BERTH_RPC_FD_NUM) < 0)
		return -1;
	return 0;
}

/* A container's process: its rlimits (RLIMIT_NOFILE is the policy's,
 * applied with the other limits) and umask.  No limit is raised above the
 * hard limit the command already has: one berth set (RLIMIT_NPROC for
 * --pids without a cgroup) or the host's, which a process in a user
 * namespace cannot raise (`berth oci`'s supervisor raises its own first
 * where it can, and logs what it could not): a lower limit is the stricter
 * side, never a widening (docs/oci.md). */
static int container_process(const struct berth_container *c, struct berth_error *err)
{
	for (size_t i = 0; i < c->n_rlimits; i++) {
		struct rlimit rl = {.rlim_cur = c->rlimits[i].soft, .rlim_max = c->rlimits[i].hard}, now;
		if (c->rlimits[i].resource == RLIMIT_NOFILE)
			continue;
		if (getrlimit(c->rlimits[i].resource, &now) == 0) {
			if (rl.rlim_max > now.rlim_max)
				rl.rlim_max = now.rlim_max;
			if (rl.rlim_cur > rl.rlim_max)
				rl.rlim_cur = rl.rlim_max;
		}
		if (setrlimit(c->rlimits[i].resource, &rl) < 0)
			return berth_err(err, errno, "cannot set the container's rlimit %d to %llu/%llu",
					 c->rlimits[i].resource, (unsigned long long)rl.rlim_cur,
					 (unsigned long long)rl.rlim_max);
	}
	if (c->has_umask)
		umask((mode_t)(c->umask & 0777));
	return 0;
}

/* Steps 10-13: pid 2, from privileged setup to execve. */
static __attribute__((noreturn)) void command_main(struct sandbox *s, int slave)
{
	struct berth_error err = {0};
	struct berth_ll_rule rules[BERTH_POLICY_LANDLOCK_RULES_MAX];
	/* TCP connect: the two proxies and the declared ports, whose
	 * listeners are all berth's (netns.h); nothing else on the sandbox's
	 * loopback, and no other interface. */
	uint16_t connect_ports[2 + BERTH_TRANSPARENT_PORTS_MAX];
	int n_rules, e, n_connect = 0;

	reset_signals(s);
	if (s->p->network == BERTH_NET_PROXY) {
		connect_ports[n_connect++] = s->proxy_port[0];
		connect_ports[n_connect++] = s->proxy_port[1];
		for (int i = 0; i < s->tports.n; i++)
			connect_ports[n_connect++] = s->tports.port[i];
	}
	if (place_fds(s) < 0)
		berth_err(&err, errno, "cannot place the command's file descriptors");
	else if (setsid() < 0)
		berth_err(&err, errno, "setsid");
	else if (slave >= 0 && s->want_pty &&
		 (ioctl(slave, TIOCSCTTY, 0) < 0 || dup2(slave, 0) < 0 || dup2(slave, 1) < 0 ||
		  dup2(slave, 2) < 0))
		berth_err(&err, errno, "cannot attach the pseudo-terminal");
	/* Output only: not the controlling terminal (nothing types into it, so
	 * /dev/tty stays ENXIO as without a pty), only the descriptors that
	 * were the caller's terminal. */
	else if (slave >= 0 && !s->want_pty &&
		 (((s->out_pty & 1u) != 0 && dup2(slave, 1) < 0) ||
		  ((s->out_pty & 2u) != 0 && dup2(slave, 2) < 0)))
		berth_err(&err, errno, "cannot attach the pseudo-terminal");
	if (err.msg[0] != '\0')
		berth_sb_child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
	/* From here on no descriptor of the host's is open, not even one that
	 * would close at execve: a path the bundle names (process.cwd, args[0],
	 * PATH) could otherwise reach the host's tree through /proc/self/fd/N
	 * (runc CVE-2024-21626).  What stays: stdio, the sync socket, the RPC
	 * channel. */
	{
		int keep[2] = {s->sock[1], s->o->has_rpc ? BERTH_RPC_FD_NUM : -1};
		berth_close_all_except(keep, 2);
	}
	if (s->p->container != NULL) {
		if (berth_sb_enter_cwd(s->p->container->cwd) < 0) {
			int why = errno;
			berth_err(&err, why, "cannot enter the container's working directory `%s`",
				  s->p->container->cwd);
			if (why == ELOOP || why == EXDEV)
				berth_err_hint(&err, "%s", BERTH_CWD_HINT);
			berth_sb_child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
		}
	} else if (chdir(s->use_userns ? "/workspace" : s->p->workspace) < 0) {
		berth_err(&err, errno, "cannot enter the workspace");
		berth_sb_child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
	}
	if (berth_limits_apply_child(s->p, &s->lim, &err) < 0)
		berth_sb_child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
	if (s->p->container != NULL && container_process(s->p->container, &err) < 0)
		berth_sb_child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
	if ((s->use_userns || !s->ids.deny_setgroups) && berth_caps_drop_all(&err) < 0)
		berth_sb_child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		berth_err(&err, errno, "cannot set NO_NEW_PRIVS");
		berth_sb_child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
	}
	n_rules = landlock_rules(s, rules, (int)BERTH_ARRAY_SIZE(rules));
	if (s->use_landlock &&
	    berth_landlock_apply(s->feat.landlock_abi, rules, n_rules, s->p->network != BERTH_NET_HOST,
				 connect_ports, n_connect, &err) < 0)
		berth_sb_child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
	/* Measure Landlock now: seccomp, loaded next, may answer the probe first. */
	berth_measure_landlock_probe(&s->meas, "/tmp");
	/* No host fd other than stdio crosses execve (an inherited directory fd
	 * would be a way out of the mount namespace). */
	if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) < 0) {
		for (int fd = 3; fd < 65536; fd++)
			if (fd != s->sock[1])
				fcntl(fd, F_SETFD, FD_CLOEXEC);
	}
	/* ... but the RPC channel, which is the point (docs/protocol.md). */
	if (s->o->has_rpc && fcntl(BERTH_RPC_FD_NUM, F_SETFD, 0) < 0)
		berth_sb_child_fail(s->sock[1],
				    (berth_err(&err, errno, "cannot keep the RPC channel open"), &err),
				    BERTH_EXIT_INTERNAL);
	/* A container's own profile between two copies of berth's filter
	 * (berth_seccomp_load_stacked): nothing the profile does lifts what
	 * berth denies, and berth's errno answers what both deny.  A profile
	 * that denies seccomp(2) itself fails the run closed. */
	if (s->use_seccomp && berth_seccomp_load_stacked(&s->bpf, &s->cbpf, &err) < 0)
		berth_sb_child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
	/* Everything is applied: measure it from here, the command's own
	 * process, and tell berth (docs/attest.md). */
	{
		static struct msg mm; /* large: not on the stack of a vfork-like path */
		int listener = -1;
		mm.kind = 3;
		mm.meas = s->meas;
		berth_measure_self(&mm.meas);
		/* --ask: the notify filter last, after the measurement (whose
		 * own reads must not wait on a listener no one serves yet);
		 * its listener goes to berth with the measurement (docs/ask.md). */
		if (s->o->ask && (listener = berth_seccomp_load_listener(&s->nbpf, &err)) < 0)
			berth_sb_child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
		mm.has_listener = listener >= 0;
		berth_sb_send_msg(s->sock[1], &mm, listener >= 0 ? &listener : NULL, listener >= 0 ? 1 : 0);
		if (listener >= 0)
			close(listener);
	}
	/* ... and wait until berth has recorded it (sync 3's go): what the
	 * supervisor could not record must not run (docs/attest.md).  End of
	 * file (berth is gone, or killed us for a failed record) ends here,
	 * before the command's first instruction. */
	{
		char go;
		ssize_t n;
		do
			n = read(s->sock[1], &go, 1);
		while (n < 0 && errno == EINTR);
		if (n != 1)
			_exit(BERTH_EXIT_INTERNAL);
	}
	e = exec_search(s);
	berth_err(&err, e, "cannot run `%s`", s->p->argv[0]);
	if (e == ENOENT && s->p->container != NULL)
		berth_err_hint(&err, "no such command in the container's PATH (%s) or file in its root",
			       exec_path(s));
	else if (e == ENOENT)
		berth_err_hint(&err,
			       "no such command in the sandbox's PATH (%s) or file; the host's home and "
			       "other directories are not visible inside",
			       BERTH_SYSTEM_PATH);
	berth_sb_child_fail(s->sock[1], &err, e == ENOENT ? BERTH_EXIT_NOTFOUND : BERTH_EXIT_NOEXEC);
}
/* berth's end of the socket is closed only when berth is gone. */
static bool parent_gone(int sock)
{
	struct pollfd p = {.fd = sock, .events = 0};

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR));
}

/* Append NAME=VALUE to the command's environment (the child's copy);
 * berth_sb_build_env() kept room for these (ENV_PROXY_VARS). */
static void append_env(struct sandbox *s, const char *name, const char *value)
{
	struct berth_error e = {0};
	int n = 0;

	while (n < MAX_ENV - 1 && s->envp[n] != NULL)
		n++;
	(void)berth_sb_add_env(s, &n, 0, name, value, &e);
	s->envp[n] = NULL;
}

/*
 * --network proxy: two listening sockets on the sandbox's own loopback, made
 * here, in its network namespace, and handed to berth, whose broker serves
 * them: HTTP proxy and SOCKS5.  Nothing inside can reach anything else: the
 * namespace has only loopback, and Landlock (ABI >= 4) allows TCP connect to
 * these two ports only.  The environment tells clients where they are.
 */
static int proxy_listeners(struct sandbox *s, struct berth_error *err)
{
	char url[64], list[64];

	/* First the declared ports, so that the proxies' ports (any free one)
	 * cannot take one of them. */
	if (berth_netns_listeners(&s->tports, s->tfd, &s->dns_fd, err) < 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		socklen_t len = sizeof sa;
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 512) < 0 ||
		    getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
			return berth_err(err, errno, "cannot make the egress broker's listener");
		s->proxy_fd[i] = fd;
		s->proxy_port[i] = ntohs(sa.sin_port);
	}
	snprintf(url, sizeof url, "http://127.0.0.1:%u", s->proxy_port[0]);
	append_env(s, "HTTP_PROXY", url);
	append_env(s, "HTTPS_PROXY", url);
	append_env(s, "http_proxy", url);
	append_env(s, "https_proxy", url);
	snprintf(url, sizeof url, "socks5h://127.0.0.1:%u", s->proxy_port[1]);
	append_env(s, "ALL_PROXY", url);
	append_env(s, "all_proxy", url);
	/* Only the sandbox's own loopback goes direct. */
	snprintf(list, sizeof list, "localhost,127.0.0.1,::1");
	append_env(s, "NO_PROXY", list);
	append_env(s, "no_proxy", list);
	return 0;
}

/* The sandbox never keeps an OOM protection its supervisor has (the
 * microVM guest's init and relay run at -1000, docs/vm.md; a service's
 * OOMScoreAdjust=): inherited, it would make the command the one process
 * the OOM killer may not choose, its memory cgroup's OOM unable to end.
 * A negative oom_score_adj goes back to 0 (raising it needs no
 * privilege); a positive one stays. */
static void oom_default(void)
{
	char b[16] = "";
	int fd = open("/proc/self/oom_score_adj", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return;
	if (read(fd, b, sizeof b - 1) > 0 && atoi(b) < 0 && lseek(fd, 0, SEEK_SET) == 0)
		(void)!write(fd, "0", 1);
	close(fd);
}

/* Before step 6: nothing of berth's in this copy but what the child needs,
 * then sync 1: the parent wrote our maps and moved us into the cgroup (or died). */
static void child_sync1(struct sandbox *s)
{
	char c;

	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	oom_default();
	berth_sb_wipe_environment();
	berth_sb_wipe_cmdline("berth-init");
	close(s->sock[0]);
	if (read(s->sock[1], &c, 1) != 1)
		_exit(BERTH_EXIT_INTERNAL);
}

/* Step 6: the sandbox's identity and its own cgroup namespace. */
static void child_identity(struct sandbox *s)
{
	struct berth_error err = {0};

	if (become_identity(s, &err) < 0 || unshare(CLONE_NEWCGROUP) < 0)
		berth_sb_child_fail(s->sock[1],
				    err.msg[0] ? &err : (berth_err(&err, errno, "namespace setup"), &err),
				    BERTH_EXIT_INTERNAL);
	/* Per-user-namespace limits on what the kernel charges to the
	 * invoking user on the host (ucounts are hierarchical): a sandbox
	 * may not use up the caller's inotify instances. */
	userns_limits();
	/* A credential change clears the parent-death signal: set it again,
	 * then make sure berth did not die in between. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || parent_gone(s->sock[1]))
		_exit(BERTH_EXIT_INTERNAL);
}

/* Step 6, degraded (no user namespace), invoked by root: still never host root. */
static void child_identity_degraded(struct sandbox *s)
{
	struct berth_error err = {0};

	if (raw_setgroups0() < 0 || prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 ||
	    raw_setresgid(s->ids.host_gid) < 0 || raw_setresuid(s->ids.host_uid) < 0 ||
	    berth_sb_check_ids(s->ids.host_uid, s->ids.host_gid) < 0 ||
	    prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0 || berth_caps_raise_effective(&err) < 0) {
		berth_err(&err, errno, "cannot drop to uid %u", (unsigned)s->ids.host_uid);
		berth_sb_child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
	}
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || parent_gone(s->sock[1]))
		_exit(BERTH_EXIT_INTERNAL);
}

/* Step 7: hostname, loopback (and the resolver's routes), the root and
 * pivot_root (mounts.h), all from the artifacts of step 2. */
static void child_root(struct sandbox *s)
{
	struct berth_error err = {0};
	struct berth_mount_plan plan = {.policy = s->p,
					.guard = &s->guard,
					.home = s->home,
					.ws_fd = s->ws_fd,
					.root_fd = s->root_fd,
					.root_src_fd = s->root_src,
					.home_fd = s->home_fd,
					.mount_fds = s->mount_fds,
					.ws_src_fd = s->ws_src,
					.src_fds = s->src_fds,
					.mount_is_dir = s->mount_is_dir,
					.own_netns = s->p->network != BERTH_NET_HOST,
					.sys_fd = s->sys_fd,
					.resolver = s->p->network == BERTH_NET_PROXY,
					.system_by_landlock = s->p->app && s->use_landlock,
					.evidence_fd = s->evidence_fd,
					.home_files = s->o->home_files,
					.n_home_files = s->o->n_home_files,
					.review_fd = &s->review_fd};

	const char *hn = s->p->container != NULL && s->p->container->hostname != NULL
			     ? s->p->container->hostname
			     : "berth";

	if ((s->p->container == NULL || s->p->container->utsns == NULL) && sethostname(hn, strlen(hn)) < 0)
		berth_sb_child_fail(s->sock[1], (berth_err(&err, errno, "namespace setup"), &err),
				    BERTH_EXIT_INTERNAL);
	if (s->p->network != BERTH_NET_HOST && loopback_up(&err) < 0)
		berth_sb_child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
	if (s->p->network == BERTH_NET_PROXY && berth_netns_local_routes(&err) < 0)
		berth_sb_child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
	if (berth_mounts_build(&plan, &err) < 0)
		berth_sb_child_fail(s->sock[1], &err, err.status ? err.status : BERTH_EXIT_INTERNAL);
}

/* Step 8: the pty, opened inside (the sandbox's own devpts). */
static void child_pty(struct sandbox *s, int *master, int *slave)
{
	struct berth_error err = {0};

	if ((s->want_pty || s->out_pty != 0) && open_pty(master, slave, &err) < 0)
		berth_sb_child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
	if (*slave >= 0 && !s->want_pty) {
		/* Output only: bytes pass as written; the caller's terminal does
		 * its own output processing (ONLCR) on the relayed copy. */
		struct termios t;
		if (tcgetattr(*slave, &t) == 0) {
			t.c_oflag &= ~(tcflag_t)OPOST;
			t.c_lflag &= ~(tcflag_t)ECHO;
			tcsetattr(*slave, TCSANOW, &t);
		}
	}
	if (*master >= 0 && s->o->pty_rows > 0 && s->o->pty_cols > 0) {
		struct winsize ws = {.ws_row = s->o->pty_rows, .ws_col = s->o->pty_cols};
		ioctl(*master, TIOCSWINSZ, &ws);
	}
}

/* Step 8, --network proxy: the broker's listeners, made in this namespace. */
static void child_listeners(struct sandbox *s)
{
	struct berth_error err = {0};

	if (s->p->network == BERTH_NET_PROXY && proxy_listeners(s, &err) < 0)
		berth_sb_child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
}

/* Sync 2: ready, with the pty master for the parent's relay and the
 * broker's listeners; the parent answers with the seccomp program (or the
 * "go" without one). */
static void child_sync2(struct sandbox *s, int master)
{
	struct msg ready = {.kind = 0};
	int fds[MSG_FDS_MAX], nfds = 0;

	if (master >= 0)
		fds[nfds++] = master;
	if (s->p->network == BERTH_NET_PROXY) {
		fds[nfds++] = s->proxy_fd[0];
		fds[nfds++] = s->proxy_fd[1];
		for (int i = 0; i < s->tports.n; i++)
			fds[nfds++] = s->tfd[i];
		fds[nfds++] = s->dns_fd;
		ready.n_transparent = s->tports.n;
		ready.has_proxy = true;
		ready.ports[0] = s->proxy_port[0];
		ready.ports[1] = s->proxy_port[1];
	}
	if (s->review_fd >= 0) {
		fds[nfds++] = s->review_fd;
		ready.has_review = true;
	}
	ready.has_pty = master >= 0;
	berth_sb_send_msg(s->sock[1], &ready, fds, nfds);
	if (s->review_fd >= 0)
		close(s->review_fd); /* berth's alone: nothing in the sandbox reaches the layer */
	if (master >= 0)
		close(master);
	if (s->p->network == BERTH_NET_PROXY) {
		/* Only berth serves them: nothing in the sandbox may accept on them. */
		close(s->proxy_fd[0]);
		close(s->proxy_fd[1]);
		for (int i = 0; i < s->tports.n; i++)
			close(s->tfd[i]);
		close(s->dns_fd);
	}
	/* the go: the seccomp program, or one byte when there is none */
	if (s->use_seccomp ? berth_sb_recv_program(s->sock[1], &s->bpf) < 0
			   : berth_sb_recv_go(s->sock[1]) < 0)
		_exit(BERTH_EXIT_INTERNAL);
}

/* Step 9: fork the command (it runs steps 10-13 in command_main); returns
 * its pid in pid 1. */
static pid_t child_fork_command(struct sandbox *s, int slave)
{
	struct berth_error err = {0};
	pid_t cmd;

	/* A raw clone, not fork(3): pid 1 is itself a raw clone of a berth
	 * that may have other threads (an app's egress broker, the audit
	 * trail's writer), and fork(3) would first take every malloc arena
	 * lock, some of which a thread of berth held at the moment of the
	 * clone and nobody in this copy will ever release. */
	if (!s->use_userns)
		prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); /* see spawn_init.c */
	cmd = (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, NULL);
	if (cmd < 0) {
		berth_err(&err, errno, "cannot fork the command");
		berth_sb_child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
	}
	if (cmd == 0)
		command_main(s, slave);
	if (slave >= 0)
		close(slave);
	return cmd;
}

/* The child, pid 1 of the sandbox: one call per step of spawn.c's list. */
__attribute__((noreturn)) void berth_sb_child_main(struct sandbox *s)
{
	int master = -1, slave = -1;
	pid_t cmd;

	child_sync1(s); /* sync 1 */
	if (s->use_userns) {
		child_identity(s); /* 6 */
		child_root(s);     /* 7 */
	} else if (geteuid() == 0) {
		child_identity_degraded(s); /* 6, degraded */
	}
	child_pty(s, &master, &slave);      /* 8 */
	child_listeners(s);                 /* 8, --network proxy */
	child_sync2(s, master);             /* sync 2 */
	cmd = child_fork_command(s, slave); /* 9; the command: 10-13 */
	berth_sb_pid1(s, cmd);              /* 9, pid 1 until the command's end */
}
