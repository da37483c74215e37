/* SPDX-License-Identifier: MIT */
/*
 * supervisor.c - the supervisor of one container: the process `create`
 * forks, whose pid goes to the pid file (as runsc's).  conmon and the
 * containerd shim are child subreapers: once `create` exits this process
 * becomes their child, they waitpid() it, and it exits with the
 * container's status (the namespace runtime's: 128+N for signal N).
 *
 * In order (the runtime's sync points are src/sandbox/spawn.c's):
 *   1. a session of its own; every descriptor closed but the container's
 *      stdio (create's 0, 1, 2; /dev/null with a terminal), the pipe to
 *      `create`, the state directory, the --console-socket and the log
 *   2. the bundle's settings that are the process's (oomScoreAdj, hard
 *      rlimits the command needs: a user namespace cannot raise them), and
 *      the joined network, IPC and UTS namespaces (setns: the sandbox then
 *      shares them; a pod's infra container is named by its supervisor's
 *      pid, which stands for its sandbox's: join_pod())
 *   3. the namespace runtime's start() through the run lifecycle
 *      (src/supervisor/run.h: the egress broker for berth.dev/allow-hosts,
 *      the audit trail for berth.dev/audit-dir), with hooks wrapped:
 *        on_spawned      the signals are blocked here, after the clone (the
 *                        sandbox resets the mask start() found) and before
 *                        any thread of the lifecycle starts
 *        on_terminal     the pty master over --console-socket (SCM_RIGHTS)
 *        before_release  sync 2: state.json `created`, `create` told, then
 *                        wait for one byte on start.fifo (`berth oci start`);
 *                        a terminating signal meanwhile ends the container
 *                        before its command ever runs
 *   4. state.json `running`; signals forwarded to the sandbox's pid 1
 *      (pidfd_send_signal), which forwards them to the command
 *   5. the status collected, state.json `stopped`, the run ended; exit with
 *      the status
 * Nothing is ever written to the container's stdout or stderr: messages go
 * to the --log file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "../runtime/runtime.h"
#include "../sandbox/userns.h"
#include "../supervisor/run.h"
#include "../util/cleanup.h"
#include "../util/sys.h"
#include "oci_int.h"

struct sup {
	const struct berth_oci_sup_args *a;
	struct berth_run run;
	struct berth_run_hooks inner; /* the run lifecycle's own hooks */
	struct berth_runtime_opts ro;
	json_t *doc;   /* state.json */
	int sfd;       /* signalfd of the blocked signals, -1 */
	int fifo;      /* start.fifo, read end, -1 */
	bool notified; /* `create` was told "created" */
	sigset_t blocked;
};

/* ---------------------------------------------------------- console */

int berth_oci_console_connect(const char *path, struct berth_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof sa.sun_path)
		return berth_usage_err(err, "the --console-socket path `%.200s` is too long for a socket",
				       path);
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return berth_err(err, errno, "socket");
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		berth_err(err, errno, "cannot connect to the --console-socket `%.200s`", path);
		close(fd);
		return -1;
	}
	return fd;
}

int berth_oci_send_fd(int sock, int fd, struct berth_error *err)
{
	char name[] = "console";
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = name, .iov_len = sizeof name - 1};
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
	struct cmsghdr *c;
	ssize_t n;

	memset(&u, 0, sizeof u);
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof fd);
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return berth_err(err, errno, "cannot send the terminal over the --console-socket");
	return 0;
}

/* ---------------------------------------------------------- state */

static void record(struct sup *s, const char *status)
{
	struct berth_error err = {0};

	json_object_set_new(s->doc, "status", json_string(status));
	if (berth_oci_state_write(s->a->dfd, s->doc, &err) < 0)
		berth_oci_logf(&s->a->ctx->log, BERTH_OCI_WARNING, "container %s: %s", s->a->id, err.msg);
}

static void tell_create(struct sup *s, const struct berth_error *why)
{
	struct berth_oci_notice n = {.ok = why == NULL};

	if (why != NULL)
		n.err = *why;
	(void)!write(s->a->notify, &n, sizeof n);
	close(s->a->notify);
	s->notified = true;
}

/* Before the sandbox is made: fails `create`, nothing was started. */
static __attribute__((noreturn)) void fail_early(struct sup *s, const struct berth_error *err)
{
	tell_create(s, err);
	_exit(1);
}

/* ---------------------------------------------------------- signals */

/* Every signal a process can catch but those the kernel sends about this
 * process itself (faults), SIGCHLD (the sandbox's end is seen on its pidfd)
 * and SIGPIPE (ignored: a closed log reader is an EPIPE). */
static void block_signals(struct sup *s)
{
	sigemptyset(&s->blocked);
	for (int sig = 1; sig <= SIGRTMAX; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && sig != SIGSEGV && sig != SIGBUS && sig != SIGFPE &&
		    sig != SIGILL && sig != SIGTRAP && sig != SIGSYS && sig != SIGCHLD && sig != SIGPIPE &&
		    (sig < 32 || sig >= SIGRTMIN))
			sigaddset(&s->blocked, sig);
	sigprocmask(SIG_BLOCK, &s->blocked, NULL);
	s->sfd = signalfd(-1, &s->blocked, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* Signals whose default action does not end a process. */
static bool harmless(int sig)
{
	return sig == SIGCONT || sig == SIGURG || sig == SIGWINCH || sig == SIGTSTP || sig == SIGTTIN ||
	       sig == SIGTTOU;
}

/* ---------------------------------------------------------- hooks */

static void on_spawned(void *arg)
{
	struct sup *s = arg;

	if (s->sfd < 0)
		block_signals(s);
	if (s->inner.on_spawned != NULL)
		s->inner.on_spawned(s->inner.arg);
}

/* sync 2, once the lifecycle's own hook returned: `created`, then wait. */
static int wait_for_start(struct sup *s, struct berth_error *err)
{
	if (s->sfd < 0)
		return berth_err(err, errno, "cannot watch the container's signals (signalfd)");
	s->fifo = openat(s->a->dfd, "start.fifo", O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (s->fifo < 0)
		return berth_err(err, errno, "cannot open the container's start.fifo");
	record(s, "created");
	tell_create(s, NULL);
	berth_oci_logf(&s->a->ctx->log, BERTH_OCI_DEBUG, "container %s: created, supervisor %d", s->a->id,
		       (int)getpid());
	for (;;) {
		struct pollfd p[2] = {{.fd = s->fifo, .events = POLLIN}, {.fd = s->sfd, .events = POLLIN}};
		struct signalfd_siginfo si;
		char c;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return berth_err(err, errno, "poll");
		}
		if ((p[0].revents & POLLIN) && read(s->fifo, &c, 1) == 1)
			return 0;
		if ((p[1].revents & POLLIN) && read(s->sfd, &si, sizeof si) == (ssize_t)sizeof si &&
		    !harmless((int)si.ssi_signo)) {
			berth_err_status(err, 0, 128 + (int)si.ssi_signo,
					 "container `%s` was killed by signal %u before it started", s->a->id,
					 si.ssi_signo);
			return -1;
		}
	}
}

static int before_release(void *arg, struct berth_error *err)
{
	struct sup *s = arg;

	if (s->inner.before_release != NULL && s->inner.before_release(s->inner.arg, err) < 0)
		return -1;
	return wait_for_start(s, err);
}

static int on_egress(void *arg, const struct berth_egress_listeners *l, struct berth_error *err)
{
	struct sup *s = arg;

	return s->inner.on_egress(s->inner.arg, l, err);
}

static int on_measured(void *arg, const char *run_id, const struct berth_measure *m, struct berth_error *err)
{
	struct sup *s = arg;

	if (s->inner.on_measured == NULL)
		return 0;
	return s->inner.on_measured(s->inner.arg, run_id, m, err);
}

static void on_terminal(void *arg, int master)
{
	struct sup *s = arg;
	struct berth_error err = {0};

	if (s->a->console >= 0 && berth_oci_send_fd(s->a->console, master, &err) < 0)
		berth_oci_logf(&s->a->ctx->log, BERTH_OCI_ERROR, "container %s: %s", s->a->id, err.msg);
	if (s->a->console >= 0)
		close(s->a->console);
}

static void notice(void *arg, const char *line)
{
	struct sup *s = arg;

	berth_oci_logf(&s->a->ctx->log, BERTH_OCI_WARNING, "container %s: %s", s->a->id, line);
}

/* ---------------------------------------------------------- set-up */

/*
 * A pod's namespaces.  An engine names the namespaces of a pod's infra
 * (pause) container as /proc/PID/ns/TYPE, PID being the pid it read from the
 * infra's pid file (podman's pods; the CRI's for every container of a
 * Pod).  Under berth that pid is the infra's supervisor, which is in the
 * host's namespaces: the infra's own are its sandbox's.  So a /proc/PID/ns
 * path whose PID is the supervisor of a container under this --root names
 * that container's sandbox (its pid 1), checked to be the same process
 * after the namespace is open.  Any other path is joined as given.
 */
struct peer {
	char path[64];                 /* /proc/SANDBOXPID/ns/TYPE */
	char id[BERTH_OCI_ID_MAX + 1]; /* the infra container */
	pid_t pid;
	unsigned long long start;
};

/* 1 with @out filled when @path is /proc/PID/ns/@name and PID a supervisor
 * under @rootfd; 0 when not; -1 with @err filled.  @upstream: the network
 * a broker connects from, which for a peer with a broker of its own is its
 * supervisor's (the pod's), not its sandbox's (the peer's broker only). */
static int pod_peer(int rootfd, const char *path, const char *name, bool upstream, struct peer *out,
		    struct berth_error *err)
{
	char tail[16] = "";
	int pid = 0, n = 0, found = 0;
	cleanup_closedir DIR *d = NULL;
	struct dirent *de;
	int dfd;

	if (sscanf(path, "/proc/%d/ns/%15s%n", &pid, tail, &n) != 2 || (size_t)n != strlen(path) ||
	    pid <= 0 || strcmp(tail, name) != 0)
		return 0;
	if ((dfd = dup(rootfd)) < 0 || (d = fdopendir(dfd)) == NULL) {
		if (dfd >= 0)
			close(dfd);
		return berth_err(err, errno, "cannot read the containers' state directory");
	}
	rewinddir(d); /* the offset is @rootfd's: an earlier call read it all */
	while (found == 0 && (de = readdir(d)) != NULL) {
		struct berth_oci_state st;
		struct berth_error ignored = {0};
		if (de->d_name[0] == '.' || berth_oci_state_read(rootfd, de->d_name, &st, &ignored) < 0)
			continue;
		if (st.status != BERTH_OCI_STOPPED && st.pid == (pid_t)pid) {
			found = 1;
			if (upstream && st.egress) {
				snprintf(out->path, sizeof out->path, "%s", path);
				snprintf(out->id, sizeof out->id, "%s", st.id);
				out->pid = st.pid;
				out->start = st.pid_start;
			} else if (st.sandbox_pid <= 0) {
				berth_usage_err(err,
						"config.json: `linux.namespaces` joins `%s`, of container "
						"`%s`, which is not running yet",
						path, st.id);
				berth_err_hint(err, "start the pod's infra container first");
				found = -1;
			} else {
				snprintf(out->path, sizeof out->path, "/proc/%d/ns/%s", (int)st.sandbox_pid,
					 name);
				snprintf(out->id, sizeof out->id, "%s", st.id);
				out->pid = st.sandbox_pid;
				out->start = st.sandbox_start;
			}
		}
		berth_oci_state_free(&st);
	}
	return found;
}

/* Whether the namespace open at @fd is the one at @path (same inode). */
static bool same_ns(int fd, const char *path)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/*
 * The namespace file at @path (@shown: the bundle's path) open for
 * setns(2), or -1 with @err filled.  It is checked to be one (nsfs, and of
 * the kind asked) before anything is opened for reading: the path is the
 * bundle's, and open(2) of a FIFO waits for a writer (the supervisor, and
 * `create` with it, would hang for good), of a device does what the device
 * does on open (a watchdog starts counting down).  O_PATH opens nothing;
 * the file it came to is opened again through /proc/self/fd, never the
 * path a second time.
 */
static int open_ns(const char *path, const char *shown, const char *name, int nstype, const char *what,
		   struct berth_error *err)
{
	cleanup_close int pfd = open(path, O_PATH | O_CLOEXEC);
	struct statfs sf;
	char fdpath[32];
	int fd, kind;

	if (pfd < 0 || fstatfs(pfd, &sf) < 0)
		return berth_err(err, errno, "cannot join the %s namespace `%s` (linux.namespaces)", what,
				 shown);
	if (sf.f_type != NSFS_MAGIC) {
		berth_usage_err(err,
				"config.json: `linux.namespaces` joins `%s` as the %s namespace, and it is "
				"not a namespace",
				shown, what);
		return berth_err_hint(err, "name a /proc/PID/ns/%s file, or a bind mount of one", name);
	}
	snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", pfd);
	if ((fd = open(fdpath, O_RDONLY | O_CLOEXEC)) < 0)
		return berth_err(err, errno, "cannot join the %s namespace `%s` (linux.namespaces)", what,
				 shown);
	/* NS_GET_NSTYPE is Linux 4.11's: before it, setns(2) tells (EINVAL) */
	kind = ioctl(fd, NS_GET_NSTYPE);
	if (kind >= 0 && kind != nstype) {
		close(fd);
		berth_usage_err(err,
				"config.json: `linux.namespaces` joins `%s` as the %s namespace, and it is "
				"a namespace of another kind",
				shown, what);
		return berth_err_hint(err, "name a /proc/PID/ns/%s file", name);
	}
	return fd;
}

/*
 * linux.namespaces path= (network, ipc, uts): joined before the sandbox is
 * made, which shares it.  Never the host's own (this process's before the
 * join, or pid 1's): the container would share the host's network, IPC
 * objects or hostname, which berth refuses without a namespace too.
 * @upstream (network, with berth.dev/allow-hosts): the sandbox makes its
 * own and only the broker, here, connects from the one joined, which may
 * then be any (the host's, as for a container of no pod).
 */
static int join_ns(int rootfd, const char *path, const char *name, int nstype, const char *what,
		   bool upstream, struct berth_error *err)
{
	struct peer peer = {0};
	char self[32], init[32];
	int found = pod_peer(rootfd, path, name, upstream, &peer, err), fd;

	if (found < 0)
		return -1;
	if ((fd = open_ns(found ? peer.path : path, path, name, nstype, what, err)) < 0)
		return -1;
	/* the sandbox whose pid was read is the one whose namespace is open */
	if (found && !berth_oci_alive(peer.pid, peer.start)) {
		close(fd);
		berth_usage_err(err,
				"config.json: `linux.namespaces` joins `%s`, of container `%s`, which "
				"has stopped",
				path, peer.id);
		return berth_err_hint(err, "start the pod's infra container again");
	}
	snprintf(self, sizeof self, "/proc/self/ns/%s", name);
	snprintf(init, sizeof init, "/proc/1/ns/%s", name);
	if (!upstream && (same_ns(fd, self) || same_ns(fd, init))) {
		close(fd);
		berth_usage_err(err,
				"config.json: `linux.namespaces` joins `%s`, the host's own %s namespace: "
				"the container would share the host's %s; berth refuses",
				path, what,
				nstype == CLONE_NEWNET   ? "network"
				: nstype == CLONE_NEWIPC ? "IPC objects"
							 : "hostname");
		return berth_err_hint(err,
				      "give the container a namespace of its own, or a pod's (made by the "
				      "engine or its infra container)");
	}
	if (setns(fd, nstype) < 0) {
		int e = errno;
		berth_err(err, e, "cannot join the %s namespace `%s` (linux.namespaces)", what, path);
		close(fd);
		if (e == EPERM)
			berth_err_hint(
			    err, "joining needs CAP_SYS_ADMIN over the namespace's user namespace: as a "
				 "user, run berth oci from the engine that made it (rootless podman runs its "
				 "runtime in its own user namespace), or as root");
		return -1;
	}
	close(fd);
	return 0;
}

/* The pod's namespaces the bundle names, joined (none: nothing opened). */
static int join_pod(const struct berth_oci_sup_args *a, struct berth_error *err)
{
	const struct berth_container *c = a->b->policy.container;
	cleanup_close int rootfd = -1;

	if (c->netns == NULL && c->ipcns == NULL && c->utsns == NULL)
		return 0;
	if ((rootfd = berth_oci_root_open(a->ctx->root, false, err)) < 0)
		return -1;
	if ((c->netns != NULL && join_ns(rootfd, c->netns, "net", CLONE_NEWNET, "network",
					 a->b->policy.network == BERTH_NET_PROXY, err) < 0) ||
	    (c->ipcns != NULL && join_ns(rootfd, c->ipcns, "ipc", CLONE_NEWIPC, "IPC", false, err) < 0) ||
	    (c->utsns != NULL && join_ns(rootfd, c->utsns, "uts", CLONE_NEWUTS, "UTS", false, err) < 0))
		return -1;
	return 0;
}

/* The process's own settings of the bundle, inherited by the sandbox. */
static int process_settings(struct sup *s, struct berth_error *err)
{
	const struct berth_oci_bundle *b = s->a->b;
	const struct berth_container *c = b->policy.container;

	if (b->has_oom_score_adj) {
		char v[16];
		int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
		int n = snprintf(v, sizeof v, "%d", b->oom_score_adj);
		if (fd < 0 || write(fd, v, (size_t)n) != n) {
			berth_err(err, errno, "cannot apply `process.oomScoreAdj` %d", b->oom_score_adj);
			if (fd >= 0)
				close(fd);
			return berth_err_hint(err,
					      "lowering it needs CAP_SYS_RESOURCE: give at least the current "
					      "value (/proc/self/oom_score_adj)");
		}
		close(fd);
	}
	/* The sandbox sets each rlimit in the command; inside its user
	 * namespace no capability raises a hard limit above what it inherits,
	 * so a higher one is raised here first (needs CAP_SYS_RESOURCE). */
	for (size_t i = 0; i < c->n_rlimits; i++) {
		const struct berth_rlimit *r = &c->rlimits[i];
		struct rlimit cur, want;
		if (getrlimit(r->resource, &cur) < 0 || cur.rlim_max == RLIM_INFINITY ||
		    r->hard <= cur.rlim_max)
			continue;
		want = (struct rlimit){.rlim_cur = cur.rlim_cur, .rlim_max = r->hard};
		if (setrlimit(r->resource, &want) < 0) {
			berth_err(err, errno,
				  "cannot apply `process.rlimits` %s: its hard limit %llu is above berth's "
				  "own %llu",
				  berth_oci_rlimit_name(r->resource), (unsigned long long)r->hard,
				  (unsigned long long)cur.rlim_max);
			return berth_err_hint(err,
					      "raising a hard limit needs CAP_SYS_RESOURCE; give at most the "
					      "current one (`ulimit -H`; podman: --ulimit)");
		}
		/* the sandbox sets RLIMIT_NOFILE from the policy, which the
		 * converter kept below the hard limit it found then */
		if (r->resource == RLIMIT_NOFILE)
			s->a->b->policy.nofile = (uint32_t)(r->soft < BERTH_NOFILE_MIN   ? BERTH_NOFILE_MIN
							    : r->soft > BERTH_NOFILE_MAX ? BERTH_NOFILE_MAX
											 : r->soft);
	}
	/* the engine's cgroup, before the sandbox's own are made below it */
	if (b->cgroups_path != NULL &&
	    berth_oci_cgroup_join(b->cgroups_path, &s->a->ctx->log, s->a->id, err) < 0)
		return -1;
	return join_pod(s->a, err);
}

/* The sandbox's pid 1 as the host sees it (its pidfd's fdinfo). */
static pid_t pidfd_pid(int pidfd)
{
	char path[64], line[128];
	cleanup_fclose FILE *f = NULL;
	pid_t pid = 0;

	snprintf(path, sizeof path, "/proc/self/fdinfo/%d", pidfd);
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "Pid: %d", &pid) == 1)
			break;
	return pid;
}

/*
 * Every value of process.env is a declared secret of the audit trail (an
 * engine passes its users' -e TOKEN=... there, and a Pod's secretKeyRef),
 * but these, which the engines set themselves with nothing secret in them:
 * podman's HOSTNAME is the first 12 digits of the container's id (a Pod's
 * is its name), so as a secret it blanked the container's id in run.start,
 * its hostname and every path holding the id; `container` is the engine's
 * name (systemd's container interface: "podman" blanked every path through
 * a directory of that name); PATH, HOME and TERM are the image's defaults.
 */
static const char *const engine_env[] = {"HOSTNAME", "container", "PATH", "HOME", "TERM", NULL};

/* ---------------------------------------------------------- running */

static int supervise(struct sup *s, struct berth_rt *rt)
{
	int pidfd = berth_rt_pidfd(rt), status = BERTH_EXIT_INTERNAL;
	pid_t pid1 = pidfd_pid(pidfd);
	unsigned long long start = 0;

	if (pid1 > 0)
		berth_oci_proc_start(pid1, &start);
	json_object_set_new(s->doc, "sandbox_pid", json_integer(pid1));
	json_object_set_new(s->doc, "sandbox_start", json_integer((json_int_t)start));
	record(s, "running");
	for (;;) {
		struct pollfd p[2] = {{.fd = pidfd, .events = POLLIN}, {.fd = s->sfd, .events = POLLIN}};
		struct signalfd_siginfo si;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[0].revents & (POLLIN | POLLHUP))
			break;
		while ((p[1].revents & POLLIN) && read(s->sfd, &si, sizeof si) == (ssize_t)sizeof si)
			if (syscall(SYS_pidfd_send_signal, pidfd, (int)si.ssi_signo, NULL, 0) < 0 &&
			    errno != ESRCH)
				berth_oci_logf(&s->a->ctx->log, BERTH_OCI_WARNING,
					       "container %s: cannot forward signal %u: %s", s->a->id,
					       si.ssi_signo, strerror(errno));
	}
	if (berth_rt_wait(rt, &status) < 0)
		status = BERTH_EXIT_INTERNAL;
	return status;
}

static void attach(struct sup *s)
{
	const struct berth_oci_bundle *b = s->a->b;

	s->ro.quiet = true; /* stderr is the container's */
	s->ro.force_off = s->a->ctx->force_off;
	s->ro.identity = s->a->identity;
	if (b->terminal) {
		s->ro.want_pty = true;
		s->ro.pty_rows = b->console_rows;
		s->ro.pty_cols = b->console_cols;
	} else {
		s->ro.has_stdio = true;
		s->ro.stdio_fd[0] = STDIN_FILENO;
		s->ro.stdio_fd[1] = STDOUT_FILENO;
		s->ro.stdio_fd[2] = STDERR_FILENO;
	}
	berth_run_attach(&s->run, &s->ro);
	s->inner = s->ro.hooks;
	s->ro.hooks = (struct berth_run_hooks){.arg = s,
					       .on_spawned = on_spawned,
					       .before_release = before_release,
					       .on_egress = s->inner.on_egress != NULL ? on_egress : NULL,
					       .on_measured = on_measured};
	s->ro.hooks.on_terminal = on_terminal;
}

void berth_oci_supervise(const struct berth_oci_sup_args *a)
{
	struct sup s = {.a = a, .sfd = -1, .fifo = -1};
	struct berth_error err = {0};
	struct berth_rt *rt = NULL;
	char actor[64];
	int status;

	setsid();
	/* no hold on the directory `create` ran in (a bundle the engine
	 * unmounts): every path the supervisor uses is absolute */
	if (chdir("/") < 0)
		berth_oci_logf(&a->ctx->log, BERTH_OCI_WARNING, "container %s: chdir /: %s", a->id,
			       strerror(errno));
	{
		int keep[4] = {a->notify, a->dfd, a->console, a->ctx->log.fd};
		berth_close_all_except(keep, 4);
	}
	signal(SIGPIPE, SIG_IGN);
	/* With a terminal the command's stdio is the pty: create's own 0, 1
	 * and 2 must not stay open here (go-runc, under the containerd shim,
	 * reads create's output until every writer has closed it). */
	if (a->b->terminal) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		for (int fd = 0; null >= 0 && fd < 3; fd++)
			dup3(null, fd, 0);
		if (null > 2)
			close(null);
	}
	s.doc = berth_oci_state_doc(a->id, a->b, a->created_at, getpid(), 0);
	if (s.doc == NULL) {
		berth_err(&err, ENOMEM, "out of memory");
		fail_early(&s, &err);
	}
	{
		unsigned long long st = 0;
		berth_oci_proc_start(getpid(), &st);
		json_object_set_new(s.doc, "pid_start", json_integer((json_int_t)st));
	}
	if (process_settings(&s, &err) < 0)
		fail_early(&s, &err);
	if (a->b->audit_dir != NULL)
		setenv("BERTH_AUDIT_DIR", a->b->audit_dir, 1);
	/* the user outside rootless podman's user namespace, not its uid 0 */
	snprintf(actor, sizeof actor, "uid:%u", berth_userns_outer_uid((unsigned)getuid()));
	json_t *extra = json_pack("{s:s, s:s}", "container", a->id, "bundle", a->b->dir);
	struct berth_run_spec spec = {.policy = &a->b->policy,
				      .actor = actor,
				      .audit = a->b->audit_dir != NULL,
				      .public_env = engine_env,
				      .start_extra = extra,
				      .notice = notice,
				      .notice_arg = &s,
				      .refuse_what = "this container"};
	berth_run_init(&s.run, &spec, NULL, &err);
	attach(&s);
	if (berth_run_start(&s.run, &s.ro, &rt, &err) < 0) {
		struct berth_error je = {0};
		if (berth_run_join(&s.run, &je) < 0 && !s.notified)
			err = je;
		berth_run_end(&s.run, -1, NULL);
		json_decref(extra);
		if (!s.notified)
			fail_early(&s, &err);
		/* `start` came, or a signal: `start` (or `state`) reads why */
		status = err.status >= 126 ? err.status : BERTH_EXIT_INTERNAL;
		json_object_set_new(s.doc, "error", json_string(err.msg));
		json_object_set_new(s.doc, "exit_status", json_integer(status));
		json_object_set_new(s.doc, "pid", json_integer(0));
		record(&s, "stopped");
		berth_oci_logf(&a->ctx->log, BERTH_OCI_ERROR, "container %s: %s", a->id, err.msg);
		_exit(status);
	}
	status = supervise(&s, rt);
	json_object_set_new(s.doc, "exit_status", json_integer(status));
	json_object_set_new(s.doc, "pid", json_integer(0));
	record(&s, "stopped");
	berth_rt_free(rt);
	berth_run_end(&s.run, status, NULL);
	json_decref(extra);
	berth_oci_logf(&a->ctx->log, BERTH_OCI_DEBUG, "container %s: exited with status %d", a->id, status);
	_exit(status);
}
