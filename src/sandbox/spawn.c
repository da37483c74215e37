/* SPDX-License-Identifier: MIT */
/*
 * spawn.c - berth_sandbox_run(): the one linear setup function.
 *
 * Order, and why (parent = the berth supervisor, child = pid 1 of the sandbox,
 * command = pid 2):
 *   parent  1. detect kernel features; refuse what cannot be enforced (user
 *              namespaces are not probed: the clone in step 4 is the probe)
 *           2. compile the limits, guard and idmapped mounts (the child only
 *              applies finished artifacts)
 *           3. start the janitor (cleans cgroups/placeholders if berth is killed)
 *           4. clone(NEWUSER|NEWNS|NEWPID|NEWIPC|NEWUTS|NEWNET); if user
 *              namespaces are refused, refuse the run (or, with
 *              --allow-degraded, start again from step 1 without them)
 *           5. write uid/gid maps, move the child into the run's cgroup
 *           ---- sync 1: parent -> child "maps and cgroup ready" ----
 *   parent     then the caller's on_spawned hook: its threads start here,
 *              never before the raw clone (see berth_runtime_opts)
 *   child   6. take the sandbox identity, unshare the cgroup namespace
 *           7. hostname, loopback, build the root and pivot_root
 *   parent     meanwhile compiles the seccomp filter (libseccomp), the one
 *              artifact the child does not need before step 10: on two or
 *              more CPUs its cost hides behind step 7
 *   child   8. open the pty inside (new devpts); hand the master to the parent
 *           ---- sync 2: child -> parent "ready" (+ pty master fd);
 *                parent -> child the finished seccomp program (or one byte, "go",
 *                without seccomp), once the caller's before_release hook returned ----
 *           9. fork the command; pid 1 drops its capabilities and reaps
 *   command 10. session + controlling tty, rlimits
 *          11. drop capabilities (bounding, securebits, ambient, sets)
 *          12. NO_NEW_PRIVS, Landlock, close stray fds
 *          13. Landlock probe, seccomp last, measure what is enforced and
 *              send it to the parent (docs/attest.md), then execve
 *           ---- sync 3: execve closes the socket (CLOEXEC), or the command
 *                sends its error (126/127) ----
 *   parent 14. relay the pty, forward signals, enforce --timeout, collect status
 *          15. clean up: cgroups, placeholders; tell the janitor it is done
 */

#include "sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <grp.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "../broker/broker.h"
#include "../util/text.h"
#include "../supervisor/evidence.h"
#include "../util/termfilter.h"
#include "../broker/hosts.h"
#include "../util/cleanup.h"
#include "../util/sha256.h"
#include "caps.h"
#include "guard.h"
#include "trustscan.h"
#include "landlock.h"
#include "limits.h"
#include "measure.h"
#include "mounts.h"
#include "netns.h"
#include "seccomp.h"
#include "userns.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

#define MAX_ENV (BERTH_POLICY_ENV_MAX + 1) /* policy.h */
#define BERTH_RPC_FD_NUM 3 /* docs/protocol.md: BERTH_RPC_FD */
/* Descriptors one message carries: the pty master, the two proxies, the
 * resolver and the declared ports' listeners. */
#define MSG_FDS_MAX (4 + BERTH_TRANSPARENT_PORTS_MAX)

struct sandbox {
	const struct berth_policy *p;
	const struct berth_runtime_opts *o;
	struct berth_features feat;
	bool use_userns, use_landlock, use_seccomp;
	int pidfd;             /* library API: pidfd of pid 1 */
	bool guard_ready;      /* the guard was prepared (its .git state is known) */
	/* --network proxy: the broker's listeners (made in the sandbox's network
	 * namespace, handed to berth at sync 2) and the broker serving them. */
	int proxy_fd[2];
	uint16_t proxy_port[2];
	/* ... and, so that clients that ignore the proxy variables reach the
	 * declared destinations too (netns.h): a listener on each declared
	 * port, and the sandbox's resolver; also handed over at sync 2. */
	struct berth_netns_ports tports;
	int tfd[BERTH_TRANSPARENT_PORTS_MAX];
	int dns_fd;
	struct berth_broker *broker;
	pthread_t broker_thread;
	bool broker_running;
	int userns_errno;      /* set when the clone refused a user namespace */
	int feat_userns_errno; /* on the second attempt: why the first one could not */
	bool retry;            /* second attempt: the first one's clone was refused */
	char run_id[17];
	struct berth_ids ids;
	char user[64];
	char home[PATH_MAX];
	struct berth_bpf bpf;
	struct berth_limits lim;
	struct berth_guard guard;
	int ws_fd;
	int home_fd; /* idmapped tree of the persistent home (policy home_dir), or -1 */
	int evidence_fd;   /* --evidence, invoked by root: the detached read-only tree */
	int mount_fds[BERTH_POLICY_MOUNTS_MAX];
	/* The workspace and each --ro/--rw source, opened once with no link
	 * followed (berth_source_open): every mount is made from these. */
	int ws_src;
	int src_fds[BERTH_POLICY_MOUNTS_MAX];
	bool mount_is_dir[BERTH_POLICY_MOUNTS_MAX]; /* per policy mount: the source is a directory (stat by berth, not the sandbox) */
	bool want_pty;
	/* Output only: berth's stdout (bit 1) and/or stderr (bit 2) is a
	 * terminal but its stdin is not; the command gets a pty for those
	 * instead of the caller's terminal (docs/security.md "The
	 * pseudo-terminal"). */
	unsigned out_pty;
	int sock[2];       /* SOCK_SEQPACKET: [0] parent, [1] child */
	int janitor_fd;    /* write end; EOF tells the janitor berth is gone */
	int janitor_lines; /* read end of the janitor's watch lines, or -1 */
	pid_t janitor;
	pid_t child;
	pid_t cmd_pgid;    /* degraded mode only: the command's process group */
	int pty_master;
	char *envp[MAX_ENV];
	char *env_store[MAX_ENV]; /* malloc'd NAME=VALUE strings, wiped by cleanup() */
	sigset_t oldmask;
	struct berth_measure meas; /* the command's own measurement (docs/attest.md) */
	bool measured;
	bool measure_failed;       /* the caller could not record it: the run was killed */
	struct berth_error measure_err;
};

/* ---------------------------------------------------------------- helpers */

static void notice(const struct sandbox *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void notice(const struct sandbox *s, const char *fmt, ...)
{
	va_list ap;
	char raw[8192], safe[sizeof raw];

	if (s->o->quiet)
		return;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof raw, fmt, ap);
	va_end(ap);
	/* The arguments name what the sandbox chose (paths in the workspace,
	 * repositories, hosts it asked for): shown so that they cannot drive
	 * the person's terminal or forge a line (text.h). */
	fprintf(stderr, "berth: %s\n", berth_text_clean(safe, sizeof safe, raw));
}

/* When a security module above berth refused a step of the namespace
 * setup (EPERM, EACCES), the hint of @e names it and its fix instead of
 * its generic one (userns.h). */
static void lsm_hint(enum berth_userns_step step, struct berth_error *e)
{
	struct berth_lsm_facts f;
	char why[sizeof e->hint];

	if (e->errnum != EPERM && e->errnum != EACCES)
		return;
	berth_lsm_facts_read(&f);
	if (berth_lsm_refusal(step, e->errnum, &f, why, sizeof why) != NULL)
		snprintf(e->hint, sizeof e->hint, "%s", why);
}

/* An error the child or the measurement reported, printed as cli_print_error
 * does: its text may quote a path inside the workspace. */
static void print_err(const struct berth_error *e)
{
	char safe[sizeof e->msg > sizeof e->hint ? sizeof e->msg : sizeof e->hint];

	fprintf(stderr, "berth: %s\n", berth_text_clean(safe, sizeof safe, e->msg));
	if (e->hint[0] != '\0')
		fprintf(stderr, "berth: hint: %s\n", berth_text_clean(safe, sizeof safe, e->hint));
}

/* Child -> parent: an error object, or "ready" with an optional fd. */
struct msg {
	int kind; /* 0 ready, 1 error, 2 the command's pid (degraded), 3 measurement */
	struct berth_error err;
	/* kind 0: which descriptors ride along, in this order */
	bool has_pty;       /* the pty master */
	bool has_proxy;     /* the broker's HTTP and SOCKS5 listeners */
	uint16_t ports[2];  /* their ports on the sandbox's loopback */
	int n_transparent;  /* with has_proxy: the declared ports' listeners, then the resolver's socket */
	struct berth_measure meas; /* kind 3 */
};

static void send_msg(int sock, const struct msg *m, const int *fds, int nfds)
{
	struct iovec iov = {.iov_base = (void *)m, .iov_len = sizeof *m};
	char cbuf[CMSG_SPACE(MSG_FDS_MAX * sizeof(int))];
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	if (nfds > 0 && nfds <= MSG_FDS_MAX) {
		struct cmsghdr *c;
		memset(cbuf, 0, sizeof cbuf);
		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
	}
	(void)!sendmsg(sock, &mh, MSG_NOSIGNAL);
}

/* Returns 1 with a message (and up to MSG_FDS_MAX descriptors in @fds, their number in
 * *@nfds), 0 on EOF, -1 on error. */
static int recv_msg(int sock, struct msg *m, int *fds, int *nfds)
{
	struct iovec iov = {.iov_base = m, .iov_len = sizeof *m};
	char cbuf[CMSG_SPACE(MSG_FDS_MAX * sizeof(int))];
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
	ssize_t n;

	*nfds = 0;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return (int)n;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			for (int i = 0; i < k; i++) {
				int fd;
				memcpy(&fd, CMSG_DATA(c) + (size_t)i * sizeof(int), sizeof fd);
				if (*nfds < MSG_FDS_MAX)
					fds[(*nfds)++] = fd;
				else
					close(fd);
			}
		}
	if (n != (ssize_t)sizeof *m) {
		for (int i = 0; i < *nfds; i++)
			close(fds[i]);
		*nfds = 0;
		return -1;
	}
	return 1;
}

/* Parent -> child: the seccomp program, one datagram of whole instructions. */
static int send_program(int sock, const struct berth_bpf *bpf, struct berth_error *err)
{
	size_t len = (size_t)bpf->len * sizeof(struct sock_filter);

	if (send(sock, bpf->insns, len, MSG_NOSIGNAL) != (ssize_t)len)
		return berth_err(err, errno, "cannot hand the seccomp filter to the sandbox");
	return 0;
}

/* Child side; the program lands in static storage (pid 1 is single-threaded
 * and execs nothing but the command). */
static int recv_program(int sock, struct berth_bpf *bpf)
{
	static struct sock_filter prog[BPF_MAXINSNS];
	ssize_t n;

	do
		n = recv(sock, prog, sizeof prog, 0);
	while (n < 0 && errno == EINTR);
	if (n <= 0 || n % (ssize_t)sizeof prog[0] != 0)
		return -1;
	bpf->insns = prog;
	bpf->len = (unsigned short)(n / (ssize_t)sizeof prog[0]);
	return 0;
}

/* Parent -> child without a seccomp program: one byte, "go". */
static int send_go(int sock, struct berth_error *err)
{
	if (send(sock, "g", 1, MSG_NOSIGNAL) != 1)
		return berth_err(err, errno, "cannot let the sandbox's command start");
	return 0;
}

static int recv_go(int sock)
{
	char c;
	ssize_t n;

	do
		n = recv(sock, &c, 1, 0);
	while (n < 0 && errno == EINTR);
	return n == 1 && c == 'g' ? 0 : -1;
}

static __attribute__((noreturn)) void child_fail(int sock, struct berth_error *err, int status)
{
	struct msg m = {.kind = 1, .err = *err};

	m.err.status = status;
	send_msg(sock, &m, NULL, 0);
	_exit(status);
}

/* ---------------------------------------------------------- 1. features */

int berth_parse_force_off(const char *s, unsigned *bits, struct berth_error *err)
{
	static const struct {
		const char *name;
		unsigned bit;
	} tab[] = {{"userns", BERTH_FEAT_USERNS},   {"landlock", BERTH_FEAT_LANDLOCK}, {"seccomp", BERTH_FEAT_SECCOMP},
		   {"cgroup", BERTH_FEAT_CGROUP}, {"idmap", BERTH_FEAT_IDMAP}};
	char buf[256];
	char *save = NULL;

	*bits = 0;
	if (s == NULL || *s == '\0')
		return 0;
	snprintf(buf, sizeof buf, "%s", s);
	for (char *w = strtok_r(buf, ",", &save); w != NULL; w = strtok_r(NULL, ",", &save)) {
		size_t i;
		for (i = 0; i < BERTH_ARRAY_SIZE(tab); i++)
			if (strcmp(w, tab[i].name) == 0)
				break;
		if (i == BERTH_ARRAY_SIZE(tab)) {
			berth_usage_err(err, "unknown feature `%s` in BERTH_TEST_FORCE_OFF", w);
			return berth_err_hint(err, "use a comma list of userns, landlock, seccomp, cgroup, idmap");
		}
		*bits |= tab[i].bit;
	}
	return 0;
}

void berth_features_detect(unsigned force_off, struct berth_features *f)
{
	berth_features_detect_opts(force_off, true, f);
}

void berth_features_detect_opts(unsigned force_off, bool probe_userns, struct berth_features *f)
{
	memset(f, 0, sizeof *f);
	f->forced_off = force_off;
	f->userns_errno = (force_off & BERTH_FEAT_USERNS) ? EPERM : probe_userns ? berth_userns_probe() : 0;
	f->userns = f->userns_errno == 0;
	f->landlock_abi = (force_off & BERTH_FEAT_LANDLOCK) ? -EOPNOTSUPP : berth_landlock_abi();
	f->seccomp = !(force_off & BERTH_FEAT_SECCOMP) && berth_seccomp_available();
}

static int refuse(struct berth_error *err, const char *what, const char *hint)
{
	berth_err(err, 0, "%s: berth refuses to run without it", what);
	return berth_err_hint(err, "%s; see `berth doctor`, or pass `--allow-degraded` to run without it", hint);
}

static int check_features(struct sandbox *s, struct berth_error *err)
{
	const struct berth_features *f = &s->feat;
	bool forced;

	s->use_userns = f->userns;
	s->use_landlock = f->landlock_abi > 0;
	s->use_seccomp = f->seccomp;
	if (s->p->allow_degraded) {
		if (!s->use_userns)
			notice(s, "not enforced: user, mount, pid, ipc, uts, net and cgroup namespaces (no user "
				  "namespace: %s); the command sees the host's files, limited by Landlock only",
			       strerror(f->userns_errno));
		if (!s->use_landlock)
			notice(s, "not enforced: landlock (file access and TCP rules beyond the mount view)");
		if (!s->use_seccomp)
			notice(s, "not enforced: seccomp (dangerous system calls are not filtered)");
		if (!s->use_userns && !s->use_landlock) {
			/* Not even --allow-degraded: do not suggest it. */
			berth_err(err, 0, "neither user namespaces nor landlock are available: berth cannot confine "
					  "file access at all, and refuses to run even with --allow-degraded");
			return berth_err_hint(err, "see `berth doctor`: enable user namespaces or Landlock "
						   "(lsm=landlock on the kernel command line)");
		}
		return 0;
	}
	if (!s->use_userns && !(f->forced_off & BERTH_FEAT_USERNS) && berth_userns_inside_berth()) {
		/* Not the host's sysctl: the sandbox around this berth refuses
		 * namespaces (seccomp EPERM, nested user namespaces capped at 0). */
		berth_err(err, 0, "cannot start a sandbox inside a berth sandbox: namespaces are refused here "
				  "(seccomp, and nested user namespaces are capped at 0)");
		return berth_err_hint(err, "%s", BERTH_NESTED_HINT);
	}
	if (!s->use_userns) {
		struct berth_lsm_facts lf;
		char why[512];
		forced = f->forced_off & BERTH_FEAT_USERNS;
		if (forced) /* stands for a kernel that refuses them, with EPERM */
			return refuse(err, "user namespaces are forced off",
				      "allow them: `sysctl kernel.unprivileged_userns_clone=1` (Debian) or "
				      "`sysctl kernel.apparmor_restrict_unprivileged_userns=0` (Ubuntu)");
		/* Only the knob this kernel has, or the filter above berth
		 * (AppArmor's restriction does not refuse the clone: it fails
		 * later, in the child's setup). */
		berth_lsm_facts_read(&lf);
		return refuse(err, "cannot create a user namespace",
			      berth_userns_clone_refusal(f->userns_errno, &lf, why, sizeof why) != NULL ? why
			      : f->userns_errno == EINVAL || f->userns_errno == ENOSYS
				      ? "enable CONFIG_USER_NS in the kernel"
				      : "see what refuses clone(CLONE_NEWUSER) on this host");
	}
	if (!s->use_landlock)
		return refuse(err, "landlock is not available",
			      f->landlock_abi == -ENOSYS ? "the kernel was built without CONFIG_SECURITY_LANDLOCK"
							 : "landlock is disabled at boot: add `landlock` to the `lsm=` "
							   "kernel parameter");
	if (!s->use_seccomp)
		return refuse(err, "seccomp filters are not available", "enable CONFIG_SECCOMP_FILTER in the kernel");
	return 0;
}

/* ---------------------------------------------------------- 2. compile */

static int make_run_id(struct sandbox *s, struct berth_error *err)
{
	unsigned char r[8];

	if (s->o->run_id != NULL) {
		if (strlen(s->o->run_id) != 16 || strspn(s->o->run_id, "0123456789abcdef") != 16)
			return berth_err(err, EINVAL, "invalid run id `%s`", s->o->run_id);
		memcpy(s->run_id, s->o->run_id, 17);
		return 0;
	}
	if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
		return berth_err(err, errno, "getrandom");
	for (int i = 0; i < 8; i++)
		snprintf(s->run_id + 2 * i, 3, "%02x", r[i]);
	return 0;
}

static void set_user_name(struct sandbox *s, uid_t uid)
{
	struct passwd *pw = getpwuid(uid);

	snprintf(s->user, sizeof s->user, "%s", pw != NULL && pw->pw_name[0] != '\0' ? pw->pw_name : "berth");
	snprintf(s->home, sizeof s->home, "/home/%s", s->user);
}

/* Who the command is, inside and on the host (see docs/security.md). */
static int resolve_identity(struct sandbox *s, struct berth_error *err)
{
	struct stat st;

	if (stat(s->p->workspace, &st) < 0)
		return berth_err(err, errno, "cannot stat workspace `%s`", s->p->workspace);
	if (geteuid() != 0) {
		s->ids = (struct berth_ids){getuid(), getgid(), getuid(), getgid(), true};
	} else {
		/* Never host root: an unprivileged host id, shown inside as the
		 * workspace owner (or 1000 when root owns the workspace). */
		s->ids.in_uid = st.st_uid != 0 ? st.st_uid : 1000;
		s->ids.in_gid = st.st_gid != 0 ? st.st_gid : 1000;
		s->ids.host_uid = BERTH_ROOT_HOST_UID + s->o->identity;
		s->ids.host_gid = BERTH_ROOT_HOST_GID + s->o->identity;
		s->ids.deny_setgroups = false;
	}
	set_user_name(s, s->ids.in_uid);
	return 0;
}

static int compile_seccomp(struct sandbox *s, struct berth_error *err)
{
	struct berth_seccomp_opts so = {.block_affinity = s->lim.cpus_affinity > 0};

	if (!s->use_seccomp)
		return 0;
	return berth_seccomp_compile(s->p, &so, &s->bpf, err);
}

static int prepare_limits(struct sandbox *s, struct berth_error *err)
{
	bool explicit_missing;

	if (berth_limits_prepare(s->p, s->run_id, (s->o->force_off & BERTH_FEAT_CGROUP) != 0, &s->lim, err) < 0)
		return -1;
	explicit_missing = (s->p->memory_set && !s->lim.memory_enforced) || (s->p->cpus_set && !s->lim.cpus_enforced) ||
			   (s->p->pids_set && !s->lim.pids_enforced);
	if (s->lim.unenforced[0] != '\0' && explicit_missing && !s->p->allow_degraded) {
		berth_limits_destroy(&s->lim);
		berth_err(err, 0, "cannot enforce the requested limits: %s", s->lim.unenforced);
		return berth_err_hint(err, "run as root or in a delegated cgroup v2 subtree, or pass "
					   "`--allow-degraded`; see `berth doctor`");
	}
	return 0;
}

/* What prepare_limits could not enforce, said once the child exists: not
 * for an attempt whose clone is refused (inside a berth sandbox, the
 * refusal alone is the message). */
static void limits_notices(const struct sandbox *s)
{
	if (s->lim.mode == BERTH_LIMITS_RLIMITS)
		notice(s, "limits: %s (no writable cgroup for this caller)", s->lim.how);
	if (s->lim.unenforced[0] != '\0')
		notice(s, "not enforced: %s", s->lim.unenforced);
}

static int owner_of(const char *path, uid_t *uid, gid_t *gid, struct berth_error *err)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return berth_err(err, errno, "cannot stat `%s`", path);
	*uid = st.st_uid;
	*gid = st.st_gid;
	return 0;
}

/* Invoked by root: files in the workspace and --rw/--ro mounts keep their
 * host owner through idmapped mounts. */
/* The workspace and each --ro/--rw source, opened once here with no link
 * followed (issue 13, class 4: a source swapped for a symbolic link after
 * berth checked it was mounted by name, and the sandbox got the link's
 * target); every mount is made from these descriptors.  The kind of each
 * source is seen here too, with berth's own credentials: the child, already
 * the sandbox identity, may not be able to look (a source under a 0700
 * directory of root's, when root runs berth). */
static int plan_mounts(struct sandbox *s, struct berth_error *err)
{
	struct stat st;

	if (s->p->n_mounts > BERTH_ARRAY_SIZE(s->mount_is_dir))
		return berth_usage_err(err, "too many --ro/--rw mounts (%zu, at most %zu)", s->p->n_mounts,
				       BERTH_ARRAY_SIZE(s->mount_is_dir));
	if (!s->use_userns)
		return 0; /* no mount namespace: nothing is mounted */
	s->ws_src = berth_source_open("the workspace", s->p->workspace, &st, err);
	if (s->ws_src < 0)
		return -1;
	for (size_t i = 0; i < s->p->n_mounts; i++) {
		const struct berth_mount *m = &s->p->mounts[i];
		s->src_fds[i] = berth_source_open(m->rw ? "the --rw source" : "the --ro source", m->src, &st, err);
		if (s->src_fds[i] < 0)
			return -1;
		s->mount_is_dir[i] = S_ISDIR(st.st_mode);
	}
	return 0;
}

static int fd_owner(int fd, const char *path, uid_t *uid, gid_t *gid, struct berth_error *err)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return berth_err(err, errno, "cannot stat `%s`", path);
	*uid = st.st_uid;
	*gid = st.st_gid;
	return 0;
}

/* sandbox.h */
void berth_test_pause(const char *var)
{
	const char *d = getenv(var);
	char path[PATH_MAX];
	struct stat st;
	int fd;

	if (d == NULL || d[0] != '/' || lstat(d, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid())
		return;
	snprintf(path, sizeof path, "%s/paused", d);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof path, "%s/go", d);
	for (int i = 0; i < 600 && access(path, F_OK) < 0; i++)
		usleep(100000);
}

static int prepare_idmaps(struct sandbox *s, struct berth_error *err)
{
	uid_t u = 0;
	gid_t g = 0;

	s->ws_fd = -1;
	s->home_fd = -1;
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(s->mount_fds); i++)
		s->mount_fds[i] = -1;
	if (geteuid() != 0 || !s->use_userns)
		return 0;
	if (s->p->n_mounts > BERTH_ARRAY_SIZE(s->mount_fds))
		return berth_usage_err(err, "too many mounts (%zu, at most %zu)", s->p->n_mounts,
				       BERTH_ARRAY_SIZE(s->mount_fds));
	if (s->o->force_off & BERTH_FEAT_IDMAP) {
		berth_err(err, EOPNOTSUPP, "idmapped mounts are forced off");
		goto degraded;
	}
	if (fd_owner(s->ws_src, s->p->workspace, &u, &g, err) < 0)
		return -1;
	s->ws_fd = berth_idmapped_tree(s->ws_src, s->p->workspace, u, g, &s->ids, false, err);
	if (s->ws_fd < 0)
		goto degraded;
	if (s->p->home_dir != NULL) {
		if (owner_of(s->p->home_dir, &u, &g, err) < 0)
			return -1;
		s->home_fd = berth_idmapped_tree(-1, s->p->home_dir, u, g, &s->ids, false, err);
		if (s->home_fd < 0)
			goto degraded;
	}
	for (size_t i = 0; i < s->p->n_mounts; i++) {
		const struct berth_mount *m = &s->p->mounts[i];
		if (fd_owner(s->src_fds[i], m->src, &u, &g, err) < 0)
			return -1;
		s->mount_fds[i] = berth_idmapped_tree(s->src_fds[i], m->src, u, g, &s->ids, !m->rw, err);
		if (s->mount_fds[i] < 0)
			goto degraded;
	}
	return 0;
degraded:
	if (!s->p->allow_degraded) {
		berth_err_wrap(err, "cannot keep workspace files owned by their host owner");
		return berth_err_hint(err, "use a filesystem that supports idmapped mounts (ext4, xfs, btrfs, tmpfs), "
					   "or pass `--allow-degraded` (files written will belong to uid %u)",
				      BERTH_ROOT_HOST_UID);
	}
	notice(s, "not enforced: idmapped mounts (%s); files the sandbox writes belong to host uid %u", err->msg,
	       BERTH_ROOT_HOST_UID);
	berth_err_clear(err);
	if (s->ws_fd >= 0)
		close(s->ws_fd);
	s->ws_fd = -1;
	if (s->home_fd >= 0)
		close(s->home_fd);
	s->home_fd = -1;
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(s->mount_fds); i++)
		if (s->mount_fds[i] >= 0)
			close(s->mount_fds[i]);
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(s->mount_fds); i++)
		s->mount_fds[i] = -1;
	return 0;
}

/* --evidence lives in berth's state directory, which the sandbox identity
 * of a run invoked by root cannot enter: berth hands it over as a detached
 * read-only tree.  Without a mount namespace there is no /evidence. */
static int prepare_evidence(struct sandbox *s, struct berth_error *err)
{
	if (s->p->evidence_dir == NULL)
		return 0;
	if (!s->use_userns) {
		berth_err(err, 0, "--evidence needs the sandbox's own mount namespace, and user namespaces are not "
				  "available: berth refuses to run");
		return berth_err_hint(err, "see `berth doctor`");
	}
	if (geteuid() == 0) {
		s->evidence_fd = berth_ro_tree(s->p->evidence_dir, err);
		if (s->evidence_fd < 0)
			return -1;
	}
	return 0;
}

static int prepare_guard(struct sandbox *s, struct berth_error *err)
{
	memset(&s->guard, 0, sizeof s->guard);
	if (s->p->app) {
		/* An app's workspace is its own state directory, which no host
		 * tool executes or trusts. */
		s->guard.git_existed = true;
		return 0;
	}
	if (!s->use_userns) {
		notice(s, "not enforced: workspace guard (needs mount namespaces)");
		return 0;
	}
	if (berth_guard_prepare(s->p, &s->guard, err) < 0)
		return -1;
	s->guard_ready = true;
	return 0;
}

/* MAX_ARG_STRLEN (linux/binfmts.h): the longest string execve(2) takes,
 * NUL included; a longer NAME=VALUE would make it fail with E2BIG. */
#define ENV_ENTRY_MAX BERTH_POLICY_ENV_ENTRY_MAX
/* The egress broker's variables (append_env, step 8): HTTP_PROXY,
 * HTTPS_PROXY, ALL_PROXY, NO_PROXY and their lowercase forms. */
#define ENV_PROXY_VARS BERTH_POLICY_ENV_PROXY

/* Set NAME=VALUE in the command's environment (a later one of the same
 * name replaces it).  More variables than fit, or one longer than execve(2)
 * takes, is a usage error naming it: never a silently cut or dropped one. */
static int add_env(struct sandbox *s, int *n, int reserve, const char *name, const char *value,
		   struct berth_error *err)
{
	size_t l = strlen(name), need;
	char *e;
	int i;

	if (value == NULL)
		return 0;
	need = l + 1 + strlen(value) + 1;
	if (need > ENV_ENTRY_MAX) {
		berth_usage_err(err, "environment variable `%s` is %zu bytes long (NAME=VALUE); the kernel passes "
				     "at most %d to a command",
				name, need - 1, ENV_ENTRY_MAX - 1);
		return berth_err_hint(err, "pass a long value in a file in the workspace instead");
	}
	for (i = 0; i < *n; i++)
		if (strncmp(s->envp[i], name, l) == 0 && s->envp[i][l] == '=')
			break;
	if (i == *n && *n >= MAX_ENV - 1 - reserve) {
		berth_usage_err(err, "too many environment variables for the command: `%s` is one more than the %d "
				     "berth passes",
				name, MAX_ENV - 1 - reserve);
		return berth_err_hint(err, "count PATH HOME USER LOGNAME TERM LANG LC_*, every --env and every "
					   "--env-file line%s",
				      reserve > 0 ? ", and 8 for the egress broker's *_PROXY" : "");
	}
	e = malloc(need);
	if (e == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	snprintf(e, need, "%s=%s", name, value);
	if (s->env_store[i] != NULL) {
		explicit_bzero(s->env_store[i], strlen(s->env_store[i]));
		free(s->env_store[i]);
	}
	s->env_store[i] = e;
	s->envp[i] = e;
	if (i == *n)
		(*n)++;
	return 0;
}

static int build_env(struct sandbox *s, struct berth_error *err)
{
	extern char **environ;
	int n = 0, reserve = s->p->network == BERTH_NET_PROXY ? ENV_PROXY_VARS : 0;

	if (add_env(s, &n, reserve, "PATH", BERTH_SYSTEM_PATH, err) < 0 ||
	    add_env(s, &n, reserve, "HOME", s->use_userns ? s->home : s->p->workspace, err) < 0 ||
	    add_env(s, &n, reserve, "USER", s->user, err) < 0 || add_env(s, &n, reserve, "LOGNAME", s->user, err) < 0 ||
	    add_env(s, &n, reserve, "TERM", getenv("TERM"), err) < 0 ||
	    add_env(s, &n, reserve, "LANG", getenv("LANG"), err) < 0)
		return -1;
	for (char **e = environ; *e != NULL; e++) {
		if (strncmp(*e, "LC_", 3) == 0) {
			char name[128];
			const char *eq = strchr(*e, '=');
			if (eq == NULL || (size_t)(eq - *e) >= sizeof name)
				continue;
			snprintf(name, sizeof name, "%.*s", (int)(eq - *e), *e);
			if (add_env(s, &n, reserve, name, eq + 1, err) < 0)
				return -1;
		}
	}
	for (size_t i = 0; i < s->p->n_env; i++)
		if (add_env(s, &n, reserve, s->p->env[i].name, s->p->env[i].value, err) < 0)
			return -1;
	s->envp[n] = NULL;
	return 0;
}

/* The command's environment holds secrets: wipe it before it is freed. */
static void free_env(struct sandbox *s)
{
	for (int i = 0; i < MAX_ENV; i++) {
		if (s->env_store[i] != NULL) {
			explicit_bzero(s->env_store[i], strlen(s->env_store[i]));
			free(s->env_store[i]);
		}
		s->env_store[i] = NULL;
		s->envp[i] = NULL;
	}
}

/* ---------------------------------------------------------- 3. janitor */

/*
 * The janitor and pid 1 are copies of berth, not new programs: their
 * /proc/PID/environ (proc(5): the initial environment block, read from the
 * process's memory) would show berth's environment, values of `--env NAME`
 * included.  Neither needs it: wipe their copy (the command gets its own,
 * built in step 2).
 */
static void wipe_environment(void)
{
	extern char **environ;

	for (char **e = environ; e != NULL && *e != NULL; e++)
		explicit_bzero(*e, strlen(*e));
}

/*
 * Likewise /proc/PID/cmdline reads the process's own argv strings: inside
 * the sandbox, /proc/1/cmdline would show berth's command line (host paths,
 * `berth rpc --input JSON`).  Overwrite them with @name.  The bounds are
 * fields 48 and 49 of /proc/self/stat (arg_start, arg_end; proc(5)).
 */
static void wipe_cmdline(const char *name)
{
	char buf[2048], *p;
	unsigned long start = 0, end = 0;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* comm may hold spaces and parentheses */
	if (p == NULL)
		return;
	p++;
	for (int field = 3; field <= 49 && p != NULL; field++) { /* p is at the space before @field */
		p = strchr(p + 1, ' ') ? p + 1 : NULL;
		if (p == NULL)
			break;
		if (field == 48)
			start = strtoul(p, NULL, 10);
		else if (field == 49)
			end = strtoul(p, NULL, 10);
		p = strchr(p, ' ');
	}
	if (start == 0 || end <= start || end - start > (64UL << 20))
		return;
	explicit_bzero((void *)start, end - start);
	snprintf((char *)start, end - start, "%s", name);
}

/* Close every descriptor >= 3 except @a and @b (either may be -1). */
static void close_all_but(int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a;
	unsigned from = 3;

	for (int keep = 0; keep < 2; keep++) {
		int k = keep == 0 ? lo : hi;
		if (k < (int)from)
			continue;
		if ((unsigned)k > from)
			syscall(SYS_close_range, from, (unsigned)k - 1, 0);
		from = (unsigned)k + 1;
	}
	syscall(SYS_close_range, from, ~0U, 0);
}

/* Lines the janitor's watch made (berth_trust_watch_events), to @wfd
 * without ever blocking: berth reads them at its cleanup. */
static void janitor_lines(int wfd, struct berth_trust_report *r, int *sent)
{
	for (; *sent < r->n_lines; (*sent)++) {
		char line[8192];
		int n = snprintf(line, sizeof line, "%s\n", r->lines[*sent]);
		if (wfd >= 0 && n > 0)
			(void)!write(wfd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
	}
}

static void janitor_main(struct sandbox *s, int rfd, int wfd)
{
	pid_t child = 0;
	char done = 0;
	size_t got = 0;
	int ifd = -1, wds[BERTH_GUARD_ROOTS], sent = 0;
	struct berth_trust_report watch = {0};

	/* Survive the terminal's ^C, a kill of berth's process group and
	 * berth's own death; end when told. */
	setsid();
	wipe_environment();
	wipe_cmdline("berth-janitor");
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	sigprocmask(SIG_SETMASK, &s->oldmask, NULL);
	/* Hold nothing but the pipes: a copy of one of the caller's channels
	 * (an app's RPC socket, either end) would hide an end of file from the
	 * app or from berth. */
	close_all_but(rfd, wfd);
	/* During the run, the names of the repository's git directory that
	 * could not be bound because they did not exist (trustscan.h). */
	if (s->guard_ready)
		ifd = berth_trust_watch(&s->guard, wds);
	/* berth sends the child's pid, then 'F' (flush the watch's lines and
	 * close them) and 'D' (done), or dies (end of file). */
	for (;;) {
		struct pollfd p[2] = {{.fd = rfd, .events = POLLIN}, {.fd = ifd, .events = POLLIN}};
		if (poll(p, ifd >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (ifd >= 0 && (p[1].revents & POLLIN)) {
			berth_trust_watch_events(ifd, wds, s->p, &s->guard, &watch);
			janitor_lines(wfd, &watch, &sent);
		}
		if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		ssize_t n = got < sizeof child ? read(rfd, (char *)&child + got, sizeof child - got) : read(rfd, &done, 1);
		if (n <= 0)
			break; /* berth is gone */
		if (got < sizeof child) {
			got += (size_t)n;
			continue;
		}
		if (done == 'F') {
			if (ifd >= 0)
				berth_trust_watch_events(ifd, wds, s->p, &s->guard, &watch);
			janitor_lines(wfd, &watch, &sent);
			if (wfd >= 0)
				close(wfd);
			wfd = -1;
			continue;
		}
		if (done == 'D')
			_exit(0);
	}
	if (got < sizeof child)
		child = 0;
	/* berth is gone. Wait for the sandbox to die (PDEATHSIG), then clean. */
	if (child > 0) {
		int pfd = (int)syscall(SYS_pidfd_open, child, 0);
		if (pfd >= 0) {
			struct pollfd p = {.fd = pfd, .events = POLLIN};
			poll(&p, 1, 5000);
		}
	}
	berth_limits_cleanup_dirs(s->lim.dirs, s->lim.n_dirs);
	/* What the sandbox planted on the host's trust surface is set aside
	 * even when berth is not there to say so (trustscan.h). */
	if (s->guard_ready) {
		struct berth_trust_report r;
		struct berth_error e = {0};
		if (ifd >= 0)
			berth_trust_watch_events(ifd, wds, s->p, &s->guard, &watch);
		if (berth_trust_scan(s->p, &s->guard, &r, &e) == 0)
			berth_trust_report_free(&r);
	}
	berth_guard_free(&s->guard);
	/* The run's copy of its evidence lives as long as the run. */
	if (s->p->evidence_dir != NULL) {
		struct berth_error e = {0};
		berth_evidence_remove(s->p->evidence_dir, &e);
	}
	_exit(0);
}

static int start_janitor(struct sandbox *s, struct berth_error *err)
{
	int pfd[2], lfd[2] = {-1, -1};

	s->janitor = -1;
	s->janitor_fd = -1;
	s->janitor_lines = -1;
	if (s->lim.n_dirs == 0 && !s->guard_ready)
		return 0;
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return berth_err(err, errno, "pipe");
	/* The watch's lines, janitor to berth; never blocks the janitor. */
	if (s->guard_ready && pipe2(lfd, O_CLOEXEC | O_NONBLOCK) < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return berth_err(err, errno, "pipe");
	}
	s->janitor = fork();
	if (s->janitor < 0) {
		close(pfd[0]);
		close(pfd[1]);
		if (lfd[0] >= 0) {
			close(lfd[0]);
			close(lfd[1]);
		}
		return berth_err(err, errno, "cannot fork the janitor");
	}
	if (s->janitor == 0) {
		close(pfd[1]);
		if (lfd[0] >= 0)
			close(lfd[0]);
		janitor_main(s, pfd[0], lfd[1]);
	}
	close(pfd[0]);
	if (lfd[1] >= 0)
		close(lfd[1]);
	s->janitor_fd = pfd[1];
	s->janitor_lines = lfd[0];
	return 0;
}

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
		{"/proc/sys/user/max_inotify_instances", "32"},	/* host default: 128 per user */
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
		r[n++] = (struct berth_ll_rule){s->p->grants[i].path, s->p->grants[i].write ? BERTH_LL_RW : BERTH_LL_RO};
	return n;
}

static int landlock_rules(const struct sandbox *s, struct berth_ll_rule *r, int max)
{
	int n;

	if (s->p->app)
		return landlock_app_rules(s, r, max);
	n = berth_landlock_view_rules(false, r, max); /* the default view, src/policy/sysdirs.c */
	if (s->use_userns) {
		r[n++] = (struct berth_ll_rule){"/workspace", BERTH_LL_RW};
		if (s->p->evidence_dir != NULL)
			r[n++] = (struct berth_ll_rule){"/evidence", BERTH_LL_RO}; /* read, never execute */
		r[n++] = (struct berth_ll_rule){s->home, BERTH_LL_RW};
		for (size_t i = 0; i < s->p->n_mounts && n < max; i++)
			r[n++] = (struct berth_ll_rule){s->p->mounts[i].dst, s->p->mounts[i].rw ? BERTH_LL_RW : BERTH_LL_RX};
	} else {
		r[n++] = (struct berth_ll_rule){s->p->workspace, BERTH_LL_RW};
		for (size_t i = 0; i < s->p->n_mounts && n < max; i++)
			r[n++] = (struct berth_ll_rule){s->p->mounts[i].src, s->p->mounts[i].rw ? BERTH_LL_RW : BERTH_LL_RX};
	}
	return n;
}

static void reset_signals(const struct sandbox *s)
{
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigprocmask(SIG_SETMASK, &s->oldmask, NULL);
}

/* execvp(3) with the sandbox's PATH; returns the errno of the best failure. */
static int exec_search(const struct sandbox *s)
{
	const char *file = s->p->argv[0];
	char path[PATH_MAX];
	int best = ENOENT;

	if (strchr(file, '/') != NULL) {
		execve(file, s->p->argv, s->envp);
		return errno;
	}
	for (const char *dir = BERTH_SYSTEM_PATH; *dir != '\0';) {
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
		 (ioctl(slave, TIOCSCTTY, 0) < 0 || dup2(slave, 0) < 0 || dup2(slave, 1) < 0 || dup2(slave, 2) < 0))
		berth_err(&err, errno, "cannot attach the pseudo-terminal");
	/* Output only: not the controlling terminal (nothing types into it, so
	 * /dev/tty stays ENXIO as without a pty), only the descriptors that
	 * were the caller's terminal. */
	else if (slave >= 0 && !s->want_pty &&
		 (((s->out_pty & 1u) != 0 && dup2(slave, 1) < 0) || ((s->out_pty & 2u) != 0 && dup2(slave, 2) < 0)))
		berth_err(&err, errno, "cannot attach the pseudo-terminal");
	if (err.msg[0] != '\0')
		child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
	if (chdir(s->use_userns ? "/workspace" : s->p->workspace) < 0) {
		berth_err(&err, errno, "cannot enter the workspace");
		child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
	}
	if (berth_limits_apply_child(s->p, &s->lim, &err) < 0)
		child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
	if ((s->use_userns || !s->ids.deny_setgroups) && berth_caps_drop_all(&err) < 0)
		child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		berth_err(&err, errno, "cannot set NO_NEW_PRIVS");
		child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
	}
	n_rules = landlock_rules(s, rules, (int)BERTH_ARRAY_SIZE(rules));
	if (s->use_landlock &&
	    berth_landlock_apply(s->feat.landlock_abi, rules, n_rules, s->p->network != BERTH_NET_HOST,
				 connect_ports, n_connect, &err) < 0)
		child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
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
		child_fail(s->sock[1], (berth_err(&err, errno, "cannot keep the RPC channel open"), &err),
			   BERTH_EXIT_INTERNAL);
	if (s->use_seccomp && berth_seccomp_load(&s->bpf, &err) < 0)
		child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
	/* Everything is applied: measure it from here, the command's own
	 * process, and tell berth (docs/attest.md). */
	{
		static struct msg mm; /* large: not on the stack of a vfork-like path */
		mm.kind = 3;
		mm.meas = s->meas;
		berth_measure_self(&mm.meas);
		send_msg(s->sock[1], &mm, NULL, 0);
	}
	e = exec_search(s);
	berth_err(&err, e, "cannot run `%s`", s->p->argv[0]);
	if (e == ENOENT)
		berth_err_hint(&err, "no such command in the sandbox's PATH (%s) or file; the host's home and "
				     "other directories are not visible inside", BERTH_SYSTEM_PATH);
	child_fail(s->sock[1], &err, e == ENOENT ? BERTH_EXIT_NOTFOUND : BERTH_EXIT_NOEXEC);
}

/*
 * Degraded mode has no pid namespace whose end takes everything with it:
 * pid 1 there is a child subreaper (prctl(2) PR_SET_CHILD_SUBREAPER), so
 * whatever the command leaves behind (`setsid cmd &`, a double fork) is
 * re-parented to it, not to the host's init; once the command is gone, it
 * kills those with SIGKILL and reaps them, again until it has no child left
 * (a dying process's children come to it too).  The list of children is
 * read from /proc (the host's: no mount namespace here).
 */
static void kill_adopted(void)
{
	pid_t self = getpid();

	for (unsigned round = 0; round < 100000; round++) {
		DIR *d = opendir("/proc");
		struct dirent *de;
		unsigned killed = 0;

		while (d != NULL && (de = readdir(d)) != NULL) {
			char path[64], buf[512], *rp;
			long pid = strtol(de->d_name, &rp, 10);
			int fd;
			ssize_t n;

			if (*rp != '\0' || pid <= 0)
				continue;
			snprintf(path, sizeof path, "/proc/%ld/stat", pid);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			n = read(fd, buf, sizeof buf - 1);
			close(fd);
			if (n <= 0)
				continue;
			buf[n] = '\0';
			/* "pid (comm) state ppid ...": comm may hold spaces and ')' */
			rp = strrchr(buf, ')');
			if (rp != NULL && strtol(rp + 3, NULL, 10) == self && kill((pid_t)pid, SIGKILL) == 0)
				killed++;
		}
		if (d != NULL)
			closedir(d);
		/* Reap one (blocking: a killed child takes a moment), then look
		 * again: its own children are ours now. */
		if (waitpid(-1, NULL, killed > 0 ? 0 : WNOHANG) < 0 && errno == ECHILD)
			return;
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
}

/* Step 9: pid 1 inside; reap, forward signals, exit with the command's status. */
static __attribute__((noreturn)) void init_loop(pid_t cmd)
{
	sigset_t set;
	int status = BERTH_EXIT_INTERNAL;
	struct berth_error err;

	sigfillset(&set);
	sigprocmask(SIG_SETMASK, &set, NULL);
	/* pid 1 needs nothing more than wait and kill. */
	berth_caps_drop_all(&err);
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(&set, &si);
		if (sig < 0)
			continue;
		if (sig != SIGCHLD) {
			kill(cmd, sig);
			continue;
		}
		for (;;) {
			int st;
			pid_t w = waitpid(-1, &st, WNOHANG);
			if (w <= 0)
				break;
			if (w != cmd)
				continue;
			status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			/* Everything left in the sandbox dies with pid 1. */
			_exit(status);
		}
	}
}

/* berth's end of the socket is closed only when berth is gone. */
static bool parent_gone(int sock)
{
	struct pollfd p = {.fd = sock, .events = 0};

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR));
}

/* Append NAME=VALUE to the command's environment (the child's copy);
 * build_env() kept room for these (ENV_PROXY_VARS). */
static void append_env(struct sandbox *s, const char *name, const char *value)
{
	struct berth_error e = {0};
	int n = 0;

	while (n < MAX_ENV - 1 && s->envp[n] != NULL)
		n++;
	(void)add_env(s, &n, 0, name, value, &e);
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

static __attribute__((noreturn)) void child_main(struct sandbox *s)
{
	struct berth_error err = {0};
	struct berth_mount_plan plan = {.policy = s->p,
					.guard = &s->guard,
					.home = s->home,
					.ws_fd = s->ws_fd,
					.home_fd = s->home_fd,
					.mount_fds = s->mount_fds,
					.ws_src_fd = s->ws_src,
					.src_fds = s->src_fds,
					.mount_is_dir = s->mount_is_dir,
					.own_netns = s->p->network != BERTH_NET_HOST,
					.resolver = s->p->network == BERTH_NET_PROXY,
					.system_by_landlock = s->p->app && s->use_landlock,
					.evidence_fd = s->evidence_fd,
					.home_files = s->o->home_files,
					.n_home_files = s->o->n_home_files};
	struct msg ready = {.kind = 0};
	int master = -1, slave = -1;
	char c;
	pid_t cmd;

	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	wipe_environment();
	wipe_cmdline("berth-init");
	close(s->sock[0]);
	/* sync 1: the parent wrote our maps and moved us into the cgroup (or died). */
	if (read(s->sock[1], &c, 1) != 1)
		_exit(BERTH_EXIT_INTERNAL);
	if (s->use_userns) {
		if (become_identity(s, &err) < 0 || unshare(CLONE_NEWCGROUP) < 0 ||
		    sethostname("berth", 5) < 0)
			child_fail(s->sock[1], err.msg[0] ? &err : (berth_err(&err, errno, "namespace setup"), &err),
				   BERTH_EXIT_INTERNAL);
		/* Per-user-namespace limits on what the kernel charges to the
		 * invoking user on the host (ucounts are hierarchical): a sandbox
		 * may not use up the caller's inotify instances. */
		userns_limits();
		/* A credential change clears the parent-death signal: set it again,
		 * then make sure berth did not die in between. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || parent_gone(s->sock[1]))
			_exit(BERTH_EXIT_INTERNAL);
		if (s->p->network != BERTH_NET_HOST && loopback_up(&err) < 0)
			child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
		if (s->p->network == BERTH_NET_PROXY && berth_netns_local_routes(&err) < 0)
			child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
		if (berth_mounts_build(&plan, &err) < 0)
			child_fail(s->sock[1], &err, err.status ? err.status : BERTH_EXIT_INTERNAL);
	} else if (geteuid() == 0) {
		/* Degraded, invoked by root: still never host root. */
		if (raw_setgroups0() < 0 || prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 ||
		    raw_setresgid(s->ids.host_gid) < 0 || raw_setresuid(s->ids.host_uid) < 0 ||
		    prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0 || berth_caps_raise_effective(&err) < 0) {
			berth_err(&err, errno, "cannot drop to uid %u", (unsigned)s->ids.host_uid);
			child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
		}
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || parent_gone(s->sock[1]))
			_exit(BERTH_EXIT_INTERNAL);
	}
	if ((s->want_pty || s->out_pty != 0) && open_pty(&master, &slave, &err) < 0)
		child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
	if (slave >= 0 && !s->want_pty) {
		/* Output only: bytes pass as written; the caller's terminal does
		 * its own output processing (ONLCR) on the relayed copy. */
		struct termios t;
		if (tcgetattr(slave, &t) == 0) {
			t.c_oflag &= ~(tcflag_t)OPOST;
			t.c_lflag &= ~(tcflag_t)ECHO;
			tcsetattr(slave, TCSANOW, &t);
		}
	}
	if (master >= 0 && s->o->pty_rows > 0 && s->o->pty_cols > 0) {
		struct winsize ws = {.ws_row = s->o->pty_rows, .ws_col = s->o->pty_cols};
		ioctl(master, TIOCSWINSZ, &ws);
	}
	if (s->p->network == BERTH_NET_PROXY && proxy_listeners(s, &err) < 0)
		child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
	/* sync 2: ready, with the pty master for the parent's relay and the
	 * broker's listeners; the parent answers with the seccomp program. */
	{
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
		ready.has_pty = master >= 0;
		send_msg(s->sock[1], &ready, fds, nfds);
	}
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
	if (s->use_seccomp ? recv_program(s->sock[1], &s->bpf) < 0 : recv_go(s->sock[1]) < 0)
		_exit(BERTH_EXIT_INTERNAL);
	/* A raw clone, not fork(3): pid 1 is itself a raw clone of a berth
	 * that may have other threads (an app's egress broker, the audit
	 * trail's writer), and fork(3) would first take every malloc arena
	 * lock, some of which a thread of berth held at the moment of the
	 * clone and nobody in this copy will ever release. */
	if (!s->use_userns)
		prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); /* see kill_adopted */
	cmd = (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, NULL);
	if (cmd < 0) {
		berth_err(&err, errno, "cannot fork the command");
		child_fail(s->sock[1], &err, BERTH_EXIT_INTERNAL);
	}
	if (cmd == 0)
		command_main(s, slave);
	if (slave >= 0)
		close(slave);

	/* pid 1 keeps no descriptor of berth's: the caller's channels (an app's
	 * RPC socket) must follow the command's life, not pid 1's. */
	if (s->use_userns)
		close_all_but(-1, -1);
	if (!s->use_userns) {
		/* Not pid 1 of anything: tell berth the command's pid (its process
		 * group, for --timeout), then wait for it. */
		struct msg pm = {.kind = 2};
		pm.err.errnum = cmd;
		send_msg(s->sock[1], &pm, NULL, 0);
		/* As pid 1 does: only the command keeps the socket (sync 3). */
		close_all_but(-1, -1);
		int st = 0;
		for (;;) {
			int w_st;
			pid_t w = waitpid(-1, &w_st, 0);
			if (w == cmd) {
				st = w_st;
				break;
			}
			if (w < 0 && errno != EINTR) /* ECHILD: cannot be, the command is ours */
				break;
		}
		kill_adopted();
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	}
	init_loop(cmd);
}

/* ---------------------------------------------------------- 4-5 clone */

static int start_child(struct sandbox *s, struct berth_error *err)
{
	unsigned long flags = SIGCHLD;

	if (s->use_userns) {
		flags |= CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
		if (s->p->network != BERTH_NET_HOST)
			flags |= CLONE_NEWNET;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, s->sock) < 0)
		return berth_err(err, errno, "socketpair");
	s->child = (pid_t)syscall(SYS_clone, flags, NULL, NULL, NULL, NULL);
	if (s->child < 0 && s->use_userns && (errno == EPERM || errno == ENOSPC || errno == EUSERS || errno == EINVAL)) {
		/* Step 1 did not probe: this is where user namespaces turn out to
		 * be refused.  The caller refuses the run, or starts again without
		 * them under --allow-degraded. */
		s->userns_errno = errno;
		return -1;
	}
	if (s->child < 0) {
		int e = errno;
		berth_err(err, e, "cannot create the sandbox's namespaces");
		return berth_err_hint(err, e == ENOSPC ? "raise `sysctl user.max_user_namespaces`"
						       : "see `berth doctor`");
	}
	if (s->child == 0)
		child_main(s);
	close(s->sock[1]);
	s->sock[1] = -1;
	if (s->janitor_fd >= 0)
		(void)!write(s->janitor_fd, &s->child, sizeof s->child);
	if (s->use_userns && berth_userns_write_maps(s->child, &s->ids, err) < 0) {
		lsm_hint(BERTH_STEP_MAPS, err);
		return -1;
	}
	if (berth_limits_attach(&s->lim, s->child, err) < 0)
		return -1;
	/* sync 1 */
	if (write(s->sock[0], "1", 1) != 1)
		return berth_err(err, errno, "cannot release the sandbox");
	return 0;
}

static int wait_ready(struct sandbox *s, struct berth_error *err)
{
	struct msg m;
	int fds[MSG_FDS_MAX], nfds = 0, r = recv_msg(s->sock[0], &m, fds, &nfds);

	if (r == 1 && m.kind == 0 &&
	    nfds == (int)m.has_pty + (m.has_proxy ? 3 + s->tports.n : 0) &&
	    (!m.has_proxy || m.n_transparent == s->tports.n)) {
		int k = 0;
		if (m.has_pty)
			s->pty_master = fds[k++];
		if (m.has_proxy) {
			s->proxy_fd[0] = fds[k++];
			s->proxy_fd[1] = fds[k++];
			for (int i = 0; i < s->tports.n; i++)
				s->tfd[i] = fds[k++];
			s->dns_fd = fds[k++];
			s->proxy_port[0] = m.ports[0];
			s->proxy_port[1] = m.ports[1];
		}
		return 0;
	}
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	if (r == 1) {
		*err = m.err;
		lsm_hint(BERTH_STEP_MOUNT, err);
		return -1;
	}
	waitpid(s->child, NULL, 0);
	s->child = -1;
	return berth_err(err, 0, "the sandbox died during setup");
}

/* ---------------------------------------------------------- 14. supervise */

/* The command's measurement arrived (it is about to execve): add what only
 * berth can see — the cgroup limits read back and the digest of the seccomp
 * program it loaded — and hand it to the caller. */
static void measured(struct sandbox *s, const struct berth_measure *m)
{
	struct berth_error err;

	s->meas = *m;
	berth_measure_cgroups(&s->meas, s->lim.mode, s->lim.dirs, s->lim.n_dirs);
	s->meas.seccomp_digest[0] = '\0';
	if (s->use_seccomp && s->bpf.insns != NULL &&
	    berth_sha256_hex(s->bpf.insns, (size_t)s->bpf.len * sizeof(struct sock_filter), s->meas.seccomp_digest,
			     &err) < 0)
		s->meas.seccomp_digest[0] = '\0';
	s->measured = true;
	if (s->o->on_measured != NULL && s->o->on_measured(s->o->measured_arg, s->run_id, &s->meas, &err) < 0) {
		/* Fail closed: what could not be recorded does not run on. */
		s->measure_err = err;
		s->measure_failed = true;
		if (s->cmd_pgid > 0)
			kill(-s->cmd_pgid, SIGKILL);
		if (s->child > 0)
			kill(s->child, SIGKILL);
	}
}

struct relay {
	struct termios saved;
	bool raw;
};

static void tty_raw(struct relay *r)
{
	struct termios t;

	if (tcgetattr(STDIN_FILENO, &r->saved) < 0)
		return;
	t = r->saved;
	cfmakeraw(&t);
	if (tcsetattr(STDIN_FILENO, TCSADRAIN, &t) == 0)
		r->raw = true;
}

static void tty_restore(struct relay *r)
{
	if (r->raw)
		tcsetattr(STDIN_FILENO, TCSADRAIN, &r->saved);
	r->raw = false;
}

static void copy_winsize(int from, int master)
{
	struct winsize ws;

	if (ioctl(from, TIOCGWINSZ, &ws) == 0)
		ioctl(master, TIOCSWINSZ, &ws);
}

static bool pump(int from, int to)
{
	char buf[16384];
	ssize_t n = read(from, buf, sizeof buf);

	if (n <= 0)
		return n < 0 && (errno == EINTR || errno == EAGAIN);
	for (ssize_t off = 0; off < n;) {
		ssize_t w = write(to, buf + off, (size_t)(n - off));
		if (w < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return false;
		}
		off += w;
	}
	return true;
}

/* One read of the pty master, written to @to, the caller's terminal,
 * through @tf (termfilter.h: what would drive that terminal rather than draw
 * on it, such as an OSC 52 clipboard write, is dropped): false when the
 * master is done (end of file, or EIO: no slave is open any more). */
static bool relay_out(int master, int to, struct berth_termfilter *tf)
{
	char buf[16384], safe[sizeof buf + BERTH_TERMFILTER_SLACK];
	ssize_t n = read(master, buf, sizeof buf);

	if (n < 0)
		return errno == EINTR || errno == EAGAIN;
	if (n == 0)
		return false;
	n = (ssize_t)berth_termfilter_feed(tf, buf, (size_t)n, safe);
	for (ssize_t off = 0; off < n;) {
		ssize_t w = write(to, safe + off, (size_t)(n - off));
		if (w < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (w < 0)
			break;
		off += w;
	}
	return true;
}

static int supervise(struct sandbox *s, int sfd, int *status)
{
	cleanup_close int tfd = -1;
	struct relay r = {.raw = false};
	struct berth_termfilter tf;
	bool timed_out = false, stdin_open = s->pty_master >= 0 && s->want_pty, exited = false;
	/* The caller's terminal the pty is relayed to (and sized from). */
	int out = s->want_pty || (s->out_pty & 1u) != 0 ? STDOUT_FILENO : STDERR_FILENO;
	int tty = s->want_pty ? STDIN_FILENO : out;
	int master = s->pty_master;
	struct msg m;
	int wst = 0;

	if (s->p->timeout_ms > 0) {
		struct itimerspec its = {.it_value = {(time_t)(s->p->timeout_ms / 1000),
						      (long)(s->p->timeout_ms % 1000) * 1000000L}};
		tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		if (tfd >= 0)
			timerfd_settime(tfd, 0, &its, NULL);
	}
	berth_termfilter_init(&tf);
	if (s->pty_master >= 0) {
		copy_winsize(tty, s->pty_master);
		if (s->want_pty)
			tty_raw(&r);
	}
	while (!exited) {
		struct pollfd p[5] = {{sfd, POLLIN, 0}, {tfd, POLLIN, 0}, {s->sock[0], POLLIN, 0},
				      {stdin_open ? STDIN_FILENO : -1, POLLIN, 0}, {master, POLLIN, 0}};
		if (poll(p, 5, -1) < 0 && errno != EINTR)
			break;
		if (p[2].revents & (POLLIN | POLLHUP)) {
			int fds[MSG_FDS_MAX], nfds = 0;
			/* One message per turn; the socket is closed at end of file
			 * only, not at POLLHUP: messages may still be queued. */
			int got = recv_msg(s->sock[0], &m, fds, &nfds);
			if (got == 1 && m.kind == 2)
				s->cmd_pgid = m.err.errnum;
			if (got == 1 && m.kind == 3)
				measured(s, &m.meas);
			if (got == 1 && m.kind == 1) {
				tty_restore(&r);
				lsm_hint(BERTH_STEP_MOUNT, &m.err);
				print_err(&m.err);
			}
			for (int i = 0; i < nfds; i++)
				close(fds[i]);
			if (got <= 0) {
				close(s->sock[0]);
				s->sock[0] = -1;
			}
		}
		if (p[3].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (!pump(STDIN_FILENO, s->pty_master))
				stdin_open = false;
		}
		/* No slave left open (EIO, end of file): stop polling it, or a
		 * command that closed its terminal and runs on would spin this
		 * loop.  A failed write to the caller's terminal drops the bytes,
		 * as before, and keeps reading. */
		if ((p[4].revents & (POLLIN | POLLHUP | POLLERR)) && !relay_out(master, out, &tf))
			master = -1;
		if (p[1].revents & POLLIN) {
			timed_out = true;
			if (s->cmd_pgid > 0)
				kill(-s->cmd_pgid, SIGKILL);
			kill(s->child, SIGKILL);
			close(tfd);
			tfd = -1;
		}
		if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
				if (si.ssi_signo == SIGWINCH && s->pty_master >= 0)
					copy_winsize(tty, s->pty_master);
				else if (si.ssi_signo != SIGCHLD)
					kill(s->child, (int)si.ssi_signo);
			}
			if (waitpid(s->child, &wst, WNOHANG) == s->child)
				exited = true;
		}
	}
	/* Messages the loop had no turn for: the measurement may come in the
	 * same wakeup as the exit (one message is read per turn). */
	while (s->sock[0] >= 0) {
		struct pollfd sp = {s->sock[0], POLLIN, 0};
		int fds[MSG_FDS_MAX], nfds = 0;
		if (poll(&sp, 1, 0) <= 0 || !(sp.revents & POLLIN) || recv_msg(s->sock[0], &m, fds, &nfds) != 1)
			break;
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		if (m.kind == 3 && !s->measured)
			measured(s, &m.meas);
	}
	/* Drain what the command printed last. */
	if (s->pty_master >= 0) {
		struct pollfd p = {s->pty_master, POLLIN, 0};
		while (poll(&p, 1, 0) > 0 && (p.revents & POLLIN) && pump(s->pty_master, out))
			;
	}
	tty_restore(&r);
	s->child = -1;
	if (s->measure_failed) {
		*status = BERTH_EXIT_INTERNAL;
		print_err(&s->measure_err);
	} else if (timed_out) {
		*status = BERTH_EXIT_TIMEOUT;
		fprintf(stderr, "berth: --timeout of %llu ms expired; the sandbox was killed\n",
			(unsigned long long)s->p->timeout_ms);
	} else {
		*status = WIFEXITED(wst) ? WEXITSTATUS(wst) : 128 + WTERMSIG(wst);
		/* A SIGKILL from the kernel's OOM killer says nothing by itself. */
		if (*status == 128 + SIGKILL && s->p->memory != 0 && berth_limits_oom_kills(&s->lim) > 0)
			notice(s, "the command was killed by the kernel's OOM killer: the sandbox reached its memory "
				  "limit of %llu MiB (--memory)",
			       (unsigned long long)(s->p->memory >> 20));
	}
	return 0;
}

/* ---------------------------------------------------------- 15. cleanup */

static void stop_broker(struct sandbox *s);

/* What the sandbox made or changed on the host's trust surface: set aside,
 * restored or named (trustscan.h). */
/* The trust log of a session (berth_runtime_opts.trust_log), opened at
 * its first line only: a run that planted nothing leaves no file. */
struct trust_log {
	const char *path;
	FILE *f;
};

static void trust_line(const struct sandbox *s, struct trust_log *log, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void trust_line(const struct sandbox *s, struct trust_log *log, const char *fmt, ...)
{
	va_list ap;
	char raw[8192], safe[sizeof raw];

	va_start(ap, fmt);
	vsnprintf(raw, sizeof raw, fmt, ap);
	va_end(ap);
	notice(s, "%s", raw);
	if (log->path != NULL && log->f == NULL) {
		int fd = open(log->path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 && (log->f = fdopen(fd, "a")) == NULL)
			close(fd);
		if (log->f == NULL)
			log->path = NULL;
	}
	if (log->f != NULL)
		fprintf(log->f, "berth: %s\n", berth_text_clean(safe, sizeof safe, raw));
}

/* What the janitor's watch set aside during the run: it flushes them on
 * 'F' and closes its end. */
static void janitor_watch_lines(const struct sandbox *s, struct trust_log *log)
{
	char buf[16384];
	size_t have = 0;

	if (s->janitor_fd < 0 || s->janitor_lines < 0 || write(s->janitor_fd, "F", 1) != 1)
		return;
	for (;;) {
		struct pollfd p = {.fd = s->janitor_lines, .events = POLLIN};
		if (poll(&p, 1, 2000) <= 0)
			break;
		ssize_t n = read(s->janitor_lines, buf + have, sizeof buf - 1 - have);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		char *nl, *start = buf;
		while ((nl = strchr(start, '\n')) != NULL) {
			*nl = '\0';
			trust_line(s, log, "warning: %s", start);
			start = nl + 1;
		}
		have = strlen(start);
		memmove(buf, start, have);
		if (have == sizeof buf - 1)
			have = 0; /* a line longer than the buffer: dropped */
	}
}

static void trust_scan(const struct sandbox *s)
{
	struct berth_trust_report r;
	struct berth_error e = {0};
	struct trust_log tl = {.path = s->o->trust_log}, *log = &tl;

	janitor_watch_lines(s, log);
	if (berth_trust_scan(s->p, &s->guard, &r, &e) < 0) {
		trust_line(s, log, "warning: berth could not finish looking for what the sandbox planted on the host's "
				   "trust surface (%s): review `%s` before running git or an agent there",
			   e.msg, s->p->workspace);
	} else {
		for (int i = 0; i < r.n_lines; i++)
			trust_line(s, log, "warning: %s", r.lines[i]);
		if (r.n_more > 0)
			trust_line(s, log,
				   "warning: and %d more such lines (%d set aside in all: look for `*.berth-set-aside` "
				   "in `%s`)",
				   r.n_more, r.n_set_aside, s->p->workspace);
		if (r.incomplete)
			trust_line(s, log,
				   "warning: berth could not look into every directory of `%s` (and the --rw "
				   "directories) for what the sandbox planted (at most %ld entries, %d ms, %d levels; "
				   "unreadable or too long paths): review any `.git`, `.vscode`, `.claude`, `.envrc` or "
				   "`.npmrc` below it before running git or an agent there",
				   s->p->workspace, BERTH_TRUST_SCAN_ENTRIES, BERTH_TRUST_SCAN_MS, BERTH_TRUST_SCAN_DEPTH);
		berth_trust_report_free(&r);
	}
	if (tl.f != NULL)
		fclose(tl.f);
}

static void cleanup(struct sandbox *s)
{
	if (s->child > 0) {
		kill(s->child, SIGKILL);
		waitpid(s->child, NULL, 0);
	}
	free_env(s);
	stop_broker(s);
	for (int i = 0; i < 2; i++)
		if (s->proxy_fd[i] >= 0)
			close(s->proxy_fd[i]);
	for (int i = 0; i < BERTH_TRANSPARENT_PORTS_MAX; i++)
		if (s->tfd[i] >= 0)
			close(s->tfd[i]);
	if (s->dns_fd >= 0)
		close(s->dns_fd);
	berth_limits_destroy(&s->lim);
	if (s->guard_ready) {
		char path[PATH_MAX];
		struct stat st;
		snprintf(path, sizeof path, "%s/.git", s->p->workspace);
		if (!s->guard.git_existed && lstat(path, &st) == 0)
			notice(s, "warning: the sandbox created `%s`; its hooks and config were written inside the "
				  "sandbox (what would run was set aside): review them before running git there", path);
		trust_scan(s);
	}
	berth_guard_free(&s->guard);
	if (s->janitor_fd >= 0) {
		(void)!write(s->janitor_fd, "D", 1);
		close(s->janitor_fd);
	}
	if (s->janitor_lines >= 0)
		close(s->janitor_lines);
	if (s->janitor > 0)
		waitpid(s->janitor, NULL, 0);
	if (s->ws_fd >= 0)
		close(s->ws_fd);
	if (s->home_fd >= 0)
		close(s->home_fd);
	if (s->evidence_fd >= 0)
		close(s->evidence_fd);
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(s->mount_fds); i++)
		if (s->mount_fds[i] >= 0)
			close(s->mount_fds[i]);
	if (s->pty_master >= 0)
		close(s->pty_master);
	if (s->sock[0] >= 0)
		close(s->sock[0]);
	if (s->sock[1] >= 0)
		close(s->sock[1]);
	if (s->pidfd >= 0)
		close(s->pidfd);
	berth_bpf_free(&s->bpf);
}

/* ---------------------------------------------------------- egress broker */

static void *broker_main(void *arg)
{
	berth_broker_run(arg);
	return NULL;
}

/* --network proxy: the broker serves the sandbox's listeners from a thread
 * of berth (the supervisor), outside the sandbox, for the whole run. */
static int start_broker(struct sandbox *s, struct berth_error *err)
{
	struct berth_host_pattern pats[BERTH_POLICY_ALLOW_HOSTS_MAX];
	struct berth_broker_opts bo = {0};
	size_t n = 0;

	if (s->p->network != BERTH_NET_PROXY)
		return 0;
	if (s->p->n_allow_hosts > BERTH_ARRAY_SIZE(pats))
		return berth_usage_err(err, "at most %zu --allow-host patterns", BERTH_ARRAY_SIZE(pats));
	for (size_t i = 0; i < s->p->n_allow_hosts; i++) {
		char reason[512];
		if (berth_host_pattern_parse(s->p->allow_hosts[i], &pats[n++], reason, sizeof reason) < 0)
			return berth_usage_err(err, "invalid allow-host `%s`: %s", s->p->allow_hosts[i], reason);
	}
	bo.patterns = pats;
	bo.n_patterns = n;
	bo.dns_server = s->p->dns;
	bo.on_decision = s->o->on_net_decision;
	bo.data = s->o->net_decision_arg;
	s->broker = berth_broker_new(&bo, err);
	if (s->broker == NULL)
		return -1;
	if (berth_broker_add_listener(s->broker, s->proxy_fd[0], BERTH_BROKER_HTTP, err) < 0)
		return -1;
	s->proxy_fd[0] = -1; /* the broker's now */
	if (berth_broker_add_listener(s->broker, s->proxy_fd[1], BERTH_BROKER_SOCKS5, err) < 0)
		return -1;
	s->proxy_fd[1] = -1;
	for (int i = 0; i < s->tports.n; i++) {
		int fd = s->tfd[i];
		s->tfd[i] = -1;
		if (berth_broker_add_listener(s->broker, fd, BERTH_BROKER_TRANSPARENT, err) < 0)
			return -1;
	}
	{
		int fd = s->dns_fd;
		s->dns_fd = -1;
		if (berth_broker_add_listener(s->broker, fd, BERTH_BROKER_DNS, err) < 0)
			return -1;
	}
	if (pthread_create(&s->broker_thread, NULL, broker_main, s->broker) != 0)
		return berth_err(err, EAGAIN, "cannot start the egress broker");
	s->broker_running = true;
	return 0;
}

static void stop_broker(struct sandbox *s)
{
	char line[600];

	if (s->broker == NULL)
		return;
	if (s->broker_running) {
		berth_broker_stop(s->broker);
		pthread_join(s->broker_thread, NULL);
		s->broker_running = false;
	}
	/* What the sandbox tried and did not get, once each. */
	for (size_t i = 0; i < berth_broker_refused_count(s->broker); i++)
		if (berth_broker_refused(s->broker, i, line, sizeof line) == 0)
			notice(s, "refused: %s", line);
	/* A flood of harmless refusals must not hide the ones that follow. */
	size_t more = berth_broker_refused_unlisted(s->broker);
	if (more > 0)
		notice(s, "refused: ... and %zu more attempts to destinations not listed above", more);
	berth_broker_free(s->broker);
	s->broker = NULL;
}

/* Blocks the signals berth relays; @old receives the previous mask. */
static int block_signals(sigset_t *old, struct berth_error *err)
{
	sigset_t set;
	int fd;

	sigemptyset(&set);
	for (int sig = 1; sig < SIGRTMIN; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && sig != SIGSEGV && sig != SIGBUS && sig != SIGFPE &&
		    sig != SIGILL && sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU && sig != SIGPIPE)
			sigaddset(&set, sig);
	if (sigprocmask(SIG_BLOCK, &set, old) < 0)
		return berth_err(err, errno, "sigprocmask");
	fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		return berth_err(err, errno, "signalfd");
	return fd;
}

/* One attempt at steps 1-13 (up to sync 2 and the seccomp program).
 * Returns 0, or -1 with @err filled, or -1 with s->userns_errno set when the
 * clone showed that user namespaces are refused (and @err empty). */
static int start_once(struct sandbox *s, unsigned force_off, struct berth_error *err)
{
	berth_features_detect_opts(force_off, false, &s->feat);
	if (s->feat_userns_errno != 0) {
		/* Report the real reason, not a forced-off switch. */
		s->feat.userns_errno = s->feat_userns_errno;
		s->feat.forced_off &= ~(unsigned)BERTH_FEAT_USERNS;
	}
	if (check_features(s, err) < 0 || make_run_id(s, err) < 0 || resolve_identity(s, err) < 0)
		return -1;
	if (s->p->network == BERTH_NET_PROXY && !s->use_userns) {
		berth_err(err, 0, "the egress broker needs the sandbox's own network namespace, and user namespaces "
				  "are not available: berth refuses to run with --allow-host");
		return berth_err_hint(err, "see `berth doctor`");
	}
	if (s->p->network == BERTH_NET_PROXY && berth_netns_ports(s->p, &s->tports, err) < 0)
		return -1;
	if (prepare_evidence(s, err) < 0 || prepare_limits(s, err) < 0)
		return -1;
	if (plan_mounts(s, err) < 0 || prepare_guard(s, err) < 0)
		return -1;
	berth_test_pause("BERTH_TEST_PAUSE_BEFORE_MOUNT");
	if (prepare_idmaps(s, err) < 0)
		return -1;
	if (build_env(s, err) < 0)
		return -1;
	/* What the command compares its namespaces with, and the ruleset it
	 * will get (the child inherits both). */
	berth_measure_parent_ns(&s->meas);
	s->meas.landlock_ruleset_abi = s->use_landlock ? s->feat.landlock_abi : 0;
	s->meas.idmap_asked = geteuid() == 0 && s->use_userns && !s->p->app;
	if (start_janitor(s, err) < 0 || start_child(s, err) < 0)
		return -1;
	limits_notices(s);
	/* No process is cloned from berth after this point of the run: the
	 * caller may start threads now (see on_spawned). */
	if (s->o->on_spawned != NULL)
		s->o->on_spawned(s->o->spawned_arg);
	if (compile_seccomp(s, err) < 0)
		return -1;
	if (wait_ready(s, err) < 0)
		return -1;
	if (s->o->before_release != NULL && s->o->before_release(s->o->release_arg, err) < 0)
		return -1; /* the command never starts: cleanup() kills the sandbox */
	if (s->use_seccomp ? send_program(s->sock[0], &s->bpf, err) < 0 : send_go(s->sock[0], err) < 0)
		return -1;
	return start_broker(s, err);
}

static struct sandbox *sandbox_new(const struct berth_policy *p, const struct berth_runtime_opts *o,
				   const sigset_t *mask)
{
	struct sandbox *s = calloc(1, sizeof *s);

	if (s == NULL)
		return NULL;
	s->p = p;
	s->o = o;
	s->sock[0] = s->sock[1] = -1;
	s->janitor_fd = -1;
	s->janitor_lines = -1;
	s->pty_master = -1;
	s->ws_fd = -1;
	s->home_fd = -1;
	s->evidence_fd = -1;
	s->pidfd = -1;
	s->proxy_fd[0] = s->proxy_fd[1] = -1;
	for (int i = 0; i < BERTH_TRANSPARENT_PORTS_MAX; i++)
		s->tfd[i] = -1;
	s->dns_fd = -1;
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(s->mount_fds); i++)
		s->mount_fds[i] = -1;
	s->ws_src = -1;
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(s->src_fds); i++)
		s->src_fds[i] = -1;
	s->want_pty = !o->has_stdio && (o->want_pty || isatty(STDIN_FILENO) == 1);
	if (!o->has_stdio && !s->want_pty)
		s->out_pty = (isatty(STDOUT_FILENO) == 1 ? 1u : 0u) | (isatty(STDERR_FILENO) == 1 ? 2u : 0u);
	s->oldmask = *mask;
	return s;
}

/* start_once, and when the clone refused a user namespace (nothing ran
 * yet) once more without: check_features then refuses, or, under
 * --allow-degraded, the run goes on degraded.  Returns the sandbox, or NULL
 * with @err filled. */
/* berth's descriptors of the sources (plan_mounts): the idmapped trees are
 * made and the child, which holds its own copies, has mounted from them
 * once start_once returns, whatever it returned. */
static void close_sources(struct sandbox *s)
{
	if (s->ws_src >= 0)
		close(s->ws_src);
	s->ws_src = -1;
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(s->src_fds); i++) {
		if (s->src_fds[i] >= 0)
			close(s->src_fds[i]);
		s->src_fds[i] = -1;
	}
}

static struct sandbox *start(const struct berth_policy *p, const struct berth_runtime_opts *o, const sigset_t *mask,
			     struct berth_error *err)
{
	struct sandbox *s;
	int userns_errno;

	if (berth_policy_validate(p, err) < 0)
		return NULL; /* refused before anything is created (policy.h) */
	s = sandbox_new(p, o, mask);
	if (s == NULL)
		return berth_err(err, ENOMEM, "out of memory"), NULL;
	int r = start_once(s, o->force_off, err);
	close_sources(s);
	if (r == 0)
		return s;
	cleanup(s);
	userns_errno = s->userns_errno;
	free(s);
	if (userns_errno == 0)
		return NULL;
	s = sandbox_new(p, o, mask);
	if (s == NULL)
		return berth_err(err, ENOMEM, "out of memory"), NULL;
	s->feat_userns_errno = userns_errno;
	s->retry = true;
	r = start_once(s, o->force_off | BERTH_FEAT_USERNS, err);
	close_sources(s);
	if (r == 0)
		return s;
	cleanup(s);
	free(s);
	return NULL;
}

int berth_sandbox_run(const struct berth_policy *p, const struct berth_runtime_opts *o, int *status,
		      struct berth_error *err)
{
	sigset_t old;
	cleanup_close int sfd = block_signals(&old, err);
	struct sandbox *s;
	int r = -1;

	if (sfd < 0)
		return -1;
	s = start(p, o, &old, err);
	if (s != NULL) {
		r = supervise(s, sfd, status);
		cleanup(s);
		free(s);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return r;
}

/* ---------------------------------------------------------- library API */

int berth_sandbox_start(const struct berth_policy *p, const struct berth_runtime_opts *o,
			struct berth_sandbox **out, struct berth_error *err)
{
	sigset_t cur;
	struct sandbox *s;

	*out = NULL;
	sigprocmask(SIG_SETMASK, NULL, &cur);
	s = start(p, o, &cur, err);
	if (s == NULL)
		return -1;
	s->pidfd = (int)syscall(SYS_pidfd_open, s->child, 0);
	if (s->pidfd < 0) {
		berth_err(err, errno, "pidfd_open");
		goto fail;
	}
	/* sync 3: end of file once the command's execve closed the socket, or
	 * its error (126/127). */
	for (;;) {
		struct msg m;
		int fds[MSG_FDS_MAX], nfds = 0, r = recv_msg(s->sock[0], &m, fds, &nfds);
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		if (r <= 0)
			break;
		if (m.kind == 2)
			s->cmd_pgid = m.err.errnum;
		if (m.kind == 3) {
			measured(s, &m.meas);
			if (s->measure_failed) {
				*err = s->measure_err;
				goto fail;
			}
		}
		if (m.kind == 1) {
			*err = m.err;
			goto fail;
		}
	}
	close(s->sock[0]);
	s->sock[0] = -1;
	*out = (struct berth_sandbox *)s;
	return 0;
fail:
	cleanup(s);
	free(s);
	return -1;
}

int berth_sandbox_pidfd(const struct berth_sandbox *sb)
{
	return ((const struct sandbox *)sb)->pidfd;
}

void berth_sandbox_enforced(const struct berth_sandbox *sb, struct berth_enforced *e)
{
	const struct sandbox *s = (const struct sandbox *)sb;

	e->namespaces = s->use_userns;
	e->landlock_abi = s->use_landlock ? s->feat.landlock_abi : 0;
	e->seccomp = s->use_seccomp;
}

int berth_sandbox_pty_master(const struct berth_sandbox *sb)
{
	return ((const struct sandbox *)sb)->pty_master;
}

const struct berth_measure *berth_sandbox_measure(const struct berth_sandbox *sb)
{
	const struct sandbox *s = (const struct sandbox *)sb;

	return s->measured ? &s->meas : NULL;
}

const char *berth_sandbox_run_id(const struct berth_sandbox *sb)
{
	return ((const struct sandbox *)sb)->run_id;
}

int berth_sandbox_wait(struct berth_sandbox *sb, int *status)
{
	struct sandbox *s = (struct sandbox *)sb;
	int st;

	if (s->child <= 0)
		return -1;
	while (waitpid(s->child, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	s->child = -1;
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return 0;
}

void berth_sandbox_kill(struct berth_sandbox *sb)
{
	struct sandbox *s = (struct sandbox *)sb;

	if (s->cmd_pgid > 0)
		kill(-s->cmd_pgid, SIGKILL);
	if (s->child > 0)
		kill(s->child, SIGKILL);
}

void berth_sandbox_free(struct berth_sandbox *sb)
{
	struct sandbox *s = (struct sandbox *)sb;

	if (s == NULL)
		return;
	berth_sandbox_kill(sb);
	cleanup(s);
	free(s);
}
