/* SPDX-License-Identifier: MIT */
/*
 * exec.c - OCI `exec` (runc's command line, as conmon and containerd's
 * shim call it): one more process in a running container, confined as the
 * container's own command is (berth_sandbox_enter, src/sandbox/sandbox.h).
 *
 * With --detach (what conmon and the shim pass) `exec` forks the process's
 * own supervisor, which enters the container and then waits for the
 * process, forwarding signals, and exits with its status; `exec` writes
 * that supervisor's pid to --pid-file and returns once the process runs.
 * The engines are child subreapers: the supervisor becomes their child
 * when `exec` returns, as a container's does (lifecycle.c).  Without
 * --detach `exec` itself waits and exits with the process's status.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../sandbox/sandbox.h"
#include "../util/cleanup.h"
#include "oci_int.h"

/* A process.json (config.md's `process`), what berth takes of it. */
struct exec_process {
	char **argv, **envp; /* NULL-ended, owned */
	char *cwd;           /* NULL: the container's */
	uint32_t uid, gid;
	bool terminal;
};

static void process_free(struct exec_process *p)
{
	for (size_t i = 0; p->argv != NULL && p->argv[i] != NULL; i++)
		free(p->argv[i]);
	for (size_t i = 0; p->envp != NULL && p->envp[i] != NULL; i++) {
		explicit_bzero(p->envp[i], strlen(p->envp[i]));
		free(p->envp[i]);
	}
	free(p->argv);
	free(p->envp);
	free(p->cwd);
	memset(p, 0, sizeof *p);
}

/* @a (a JSON array of strings, at @path) as a NULL-ended vector. */
static int strv(const json_t *a, const char *path, bool nonempty, char ***out, struct berth_error *err)
{
	size_t i, n = json_is_array(a) ? json_array_size(a) : 0;
	json_t *v;

	if (a != NULL && !json_is_array(a))
		return berth_oci_bad(err, path, "must be a list of strings");
	if (nonempty && n == 0)
		return berth_oci_bad(err, path, "must name the command to run");
	*out = calloc(n + 1, sizeof **out);
	if (*out == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	json_array_foreach(a, i, v) {
		if (!json_is_string(v))
			return berth_oci_bad(err, path, "must be a list of strings");
		(*out)[i] = strdup(json_string_value(v));
		if ((*out)[i] == NULL)
			return berth_err(err, ENOMEM, "out of memory");
	}
	return 0;
}

/* What an exec'd process may ask, and what it may not: the container's
 * posture is not widened for one process (capabilities are dropped as the
 * container's are, and said so in the log). */
static int process_read(const json_t *j, const struct berth_oci_bundle *b, struct exec_process *p,
			const struct berth_oci_log *log, struct berth_error *err)
{
	static const char *const known[] = {"args",
					    "env",
					    "cwd",
					    "user",
					    "terminal",
					    "consoleSize",
					    "capabilities",
					    "rlimits",
					    "noNewPrivileges",
					    "apparmorProfile",
					    "selinuxLabel",
					    "oomScoreAdj",
					    NULL};
	const json_t *user = json_object_get(j, "user"), *v;
	const char *s = NULL;
	long long n;
	bool set;

	if (berth_oci_want_object(j, "process", err) < 0 || berth_oci_keys(j, "process", known, err) < 0)
		return -1;
	if (strv(json_object_get(j, "args"), "process.args", true, &p->argv, err) < 0)
		return -1;
	if (json_object_get(j, "env") != NULL) {
		if (strv(json_object_get(j, "env"), "process.env", false, &p->envp, err) < 0)
			return -1;
	} else {
		/* the container's own environment */
		p->envp = calloc(b->policy.n_env + 1, sizeof *p->envp);
		if (p->envp == NULL)
			return berth_err(err, ENOMEM, "out of memory");
		for (size_t i = 0; i < b->policy.n_env; i++)
			if (asprintf(&p->envp[i], "%s=%s", b->policy.env[i].name, b->policy.env[i].value) <
			    0) {
				p->envp[i] = NULL;
				return berth_err(err, ENOMEM, "out of memory");
			}
	}
	if (berth_oci_string(json_object_get(j, "cwd"), "process.cwd", false, &s, err) < 0)
		return -1;
	if (s != NULL && berth_oci_container_path(s, "process.cwd", &p->cwd, err) < 0)
		return -1;
	p->uid = b->policy.container->uid;
	p->gid = b->policy.container->gid;
	if (user != NULL) {
		static const char *const ukeys[] = {"uid", "gid", "umask", "additionalGids", NULL};
		/* at most 4294967294, as config.json's: (uid_t)-1 is "unchanged"
		 * to setresuid(2), and would leave the process the host's root */
		if (berth_oci_want_object(user, "process.user", err) < 0 ||
		    berth_oci_keys(user, "process.user", ukeys, err) < 0 ||
		    berth_oci_int(json_object_get(user, "uid"), "process.user.uid", false, 0, UINT32_MAX - 1,
				  &n, &set, err) < 0)
			return -1;
		if (set)
			p->uid = (uint32_t)n;
		if (berth_oci_int(json_object_get(user, "gid"), "process.user.gid", false, 0, UINT32_MAX - 1,
				  &n, &set, err) < 0)
			return -1;
		if (set)
			p->gid = (uint32_t)n;
		/* as create's (bundle.c): the process's own gid again is what
		 * it has (ctr's exec names root's group 0 so) */
		v = json_object_get(user, "additionalGids");
		if (berth_oci_want_array(v, "process.user.additionalGids", err) < 0)
			return -1;
		for (size_t i = 0; i < json_array_size(v); i++) {
			char path[64];
			snprintf(path, sizeof path, "process.user.additionalGids[%zu]", i);
			if (berth_oci_int(json_array_get(v, i), path, true, 0, UINT32_MAX - 1, &n, NULL,
					  err) < 0)
				return -1;
			if ((uint32_t)n != p->gid)
				return berth_oci_unsupported(err, path,
							     "supplementary group %lld: the sandbox maps one "
							     "group, the process's gid %u",
							     n, (unsigned)p->gid);
		}
	}
	if (berth_oci_bool(json_object_get(j, "terminal"), "process.terminal", &p->terminal, err) < 0)
		return -1;
	if (berth_oci_string(json_object_get(j, "selinuxLabel"), "process.selinuxLabel", false, &s, err) < 0)
		return -1;
	if (s != NULL && s[0] != '\0')
		return berth_oci_unsupported(err, "process.selinuxLabel",
					     "berth does not apply SELinux labels");
	if (berth_oci_string(json_object_get(j, "apparmorProfile"), "process.apparmorProfile", false, &s,
			     err) < 0)
		return -1;
	if (s != NULL && s[0] != '\0')
		return berth_oci_unsupported(err, "process.apparmorProfile",
					     "berth does not apply AppArmor profiles");
	if (json_object_get(j, "capabilities") != NULL)
		berth_oci_logf(log, BERTH_OCI_WARNING,
			       "exec in container %s: process.capabilities not granted (berth keeps none)",
			       b->policy.container->id);
	return 0;
}

/* The supervisor of an exec'd process: signals to it, its status as ours. */
static __attribute__((noreturn)) void wait_forwarding(pid_t pid)
{
	sigset_t set;
	int sfd, st = 0;

	sigfillset(&set);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0) {
		kill(pid, SIGKILL);
		_exit(BERTH_EXIT_INTERNAL);
	}
	for (;;) {
		struct signalfd_siginfo si;
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			_exit(BERTH_EXIT_INTERNAL);
		if (read(sfd, &si, sizeof si) == sizeof si && si.ssi_signo != SIGCHLD)
			kill(pid, (int)si.ssi_signo);
	}
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

struct exec_ready {
	bool ok;
	struct berth_error err;
};

/* Enter, hand the terminal over, report to @notify (-1: none); the pid. */
static pid_t enter(const struct berth_oci_bundle *b, pid_t init, const struct exec_process *p, int console,
		   struct berth_error *err)
{
	struct berth_enter e = {.argv = p->argv,
				.envp = p->envp,
				.cwd = p->cwd,
				.uid = p->uid,
				.gid = p->gid,
				.want_pty = p->terminal,
				.pty_sock = -1};
	int sp[2] = {-1, -1};
	pid_t pid;

	if (p->terminal) {
		if (console < 0)
			return berth_usage_err(err, "process.terminal needs --console-socket"), -1;
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
			return berth_err(err, errno, "socketpair"), -1;
		e.pty_sock = sp[1];
	}
	pid = berth_sandbox_enter(&b->policy, init, &e, err);
	if (sp[1] >= 0)
		close(sp[1]);
	if (pid > 0 && p->terminal) {
		char byte;
		struct iovec iov = {&byte, 1};
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(sizeof(int))];
		} u;
		struct msghdr mh = {
		    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
		struct cmsghdr *c;
		int master = -1;
		if (recvmsg(sp[0], &mh, MSG_CMSG_CLOEXEC) == 1 && (c = CMSG_FIRSTHDR(&mh)) != NULL &&
		    c->cmsg_type == SCM_RIGHTS)
			memcpy(&master, CMSG_DATA(c), sizeof master);
		if (master < 0 || berth_oci_send_fd(console, master, err) < 0) {
			if (master < 0)
				berth_err(err, EIO, "the exec'd process's terminal did not arrive");
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			pid = -1;
		}
		if (master >= 0)
			close(master);
	}
	if (sp[0] >= 0)
		close(sp[0]);
	return pid;
}

int berth_oci_exec(const struct berth_oci_ctx *c, const struct berth_oci_exec_opts *o, int *status,
		   struct berth_error *err)
{
	struct berth_oci_state st = {0};
	struct berth_oci_bundle b = {0};
	struct exec_process p = {0};
	cleanup_close int rootfd = -1, dfd = -1, console = -1;
	const char *bundle;
	json_error_t je;
	json_t *pj = NULL;
	int rc = -1, pipefd[2];
	pid_t sup, pid;

	if (berth_oci_id_check(o->id, err) < 0 || (rootfd = berth_oci_root_open(c->root, false, err)) < 0 ||
	    berth_oci_state_read(rootfd, o->id, &st, err) < 0)
		return -1;
	if (st.status != BERTH_OCI_RUNNING || st.sandbox_pid <= 0 ||
	    !berth_oci_alive(st.sandbox_pid, st.sandbox_start)) {
		berth_usage_err(err, "cannot exec in container `%s`: it is %s, not running", o->id,
				berth_oci_status_name(st.status));
		goto out;
	}
	/* the container's config.json as `create` checked it (its copy in
	 * the state directory), not the bundle's as it is now */
	bundle = json_string_value(json_object_get(st.doc, "bundle"));
	if (bundle == NULL) {
		berth_err(err, 0, "the state of container `%s` names no bundle", o->id);
		goto out;
	}
	dfd = openat(rootfd, o->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		berth_err(err, errno, "cannot read the state of container `%s`", o->id);
		goto out;
	}
	if (berth_oci_bundle_load_saved(dfd, bundle, o->id, &b, err) < 0)
		goto out;
	if (o->process != NULL) {
		pj = json_load_file(o->process, JSON_REJECT_DUPLICATES, &je);
		if (pj == NULL) {
			berth_usage_err(err, "cannot read the process file `%s`: %s", o->process, je.text);
			goto out;
		}
	} else {
		/* runc's: the command given, the rest the container's process */
		json_t *args = json_array();
		for (size_t i = 0; args != NULL && o->args != NULL && o->args[i] != NULL; i++)
			json_array_append_new(args, json_string(o->args[i]));
		pj = args != NULL ? json_pack("{s:o, s:b}", "args", args, "terminal", o->tty) : NULL;
	}
	if (pj == NULL || process_read(pj, &b, &p, &c->log, err) < 0)
		goto out;
	if (o->console_socket != NULL && (console = berth_oci_console_connect(o->console_socket, err)) < 0)
		goto out;
	/* the engine's cgroup, as the container's supervisor (and then
	 * berth's own below it, berth_sandbox_enter) */
	if (b.cgroups_path != NULL && berth_oci_cgroup_join(b.cgroups_path, &c->log, o->id, err) < 0)
		goto out;
	if (!o->detach) {
		pid = enter(&b, st.sandbox_pid, &p, console, err);
		if (pid < 0)
			goto out;
		if (o->pid_file != NULL && berth_oci_write_pid_file(o->pid_file, pid, err) < 0) {
			kill(pid, SIGKILL);
			goto out;
		}
		{
			int ws = 0;
			while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
				;
			*status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
		}
		rc = 0;
		goto out;
	}
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		berth_err(err, errno, "pipe");
		goto out;
	}
	fflush(NULL);
	sup = fork();
	if (sup < 0) {
		berth_err(err, errno, "fork");
		close(pipefd[0]);
		close(pipefd[1]);
		goto out;
	}
	if (sup == 0) {
		struct exec_ready r = {0};
		close(pipefd[0]);
		pid = enter(&b, st.sandbox_pid, &p, console, &r.err);
		r.ok = pid > 0;
		(void)!write(pipefd[1], &r, sizeof r);
		close(pipefd[1]);
		if (!r.ok)
			_exit(1);
		if (console >= 0)
			close(console);
		wait_forwarding(pid);
	}
	close(pipefd[1]);
	{
		struct exec_ready r = {0};
		ssize_t n;
		do
			n = read(pipefd[0], &r, sizeof r);
		while (n < 0 && errno == EINTR);
		close(pipefd[0]);
		if (n != (ssize_t)sizeof r || !r.ok) {
			waitpid(sup, NULL, 0);
			if (n == (ssize_t)sizeof r)
				*err = r.err;
			else
				berth_err(err, 0, "the exec supervisor of container `%s` died", o->id);
			goto out;
		}
	}
	if (o->pid_file != NULL && berth_oci_write_pid_file(o->pid_file, sup, err) < 0) {
		kill(sup, SIGKILL);
		waitpid(sup, NULL, 0);
		goto out;
	}
	*status = 0;
	rc = 0;
out:
	json_decref(pj);
	process_free(&p);
	berth_oci_bundle_free(&b);
	berth_oci_state_free(&st);
	return rc;
}
