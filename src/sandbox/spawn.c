/* SPDX-License-Identifier: MIT */
/*
 * spawn.c - berth_sandbox_run(): the one linear setup function.  Each step
 * below is a function in a file of its own, named for it (spawn_int.h lists
 * them); this file keeps steps 4-5 and the library API.
 *
 * Order, and why (parent = the berth supervisor, child = pid 1 of the sandbox,
 * command = pid 2):
 *   parent  1. detect kernel features; refuse what cannot be enforced (user
 *              namespaces are not probed: the clone in step 4 is the probe)
 *           2. compile the limits, guard and idmapped mounts (the child only
 *              applies finished artifacts)
 *              (each cgroup directory is named in the run journal before it
 *              is made, util/journal.h: the next berth removes what a berth
 *              killed before step 3 made)
 *           3. start the janitor (cleans cgroups, sets aside what the sandbox
 *              planted, if berth is killed; holds the journal's lock until done)
 *           4. clone(NEWUSER|NEWNS|NEWPID|NEWIPC|NEWUTS|NEWNET); if user
 *              namespaces are refused, refuse the run (or, with
 *              --allow-degraded, start again from step 1 without them)
 *           5. write uid/gid maps, move the child into the run's cgroup
 *           ---- sync 1: parent -> child "maps and cgroup ready" ----
 *   parent     then the caller's on_spawned hook: its threads start here,
 *              never before the raw clone (struct berth_run_hooks, runtime.h)
 *   child   6. take the sandbox identity, unshare the cgroup namespace
 *           7. hostname, loopback, build the root and pivot_root
 *   parent     meanwhile compiles the seccomp filter (libseccomp), the one
 *              artifact the child does not need before step 10: on two or
 *              more CPUs its cost hides behind step 7
 *   child   8. open the pty inside (new devpts); hand the master to the parent
 *           ---- sync 2: child -> parent "ready" (+ pty master fd);
 *                once the caller's before_release hook returned and (--network
 *                proxy) its on_egress hook took the listeners (the supervisor's
 *                broker serves them, runtime.h): parent -> child the finished
 *                seccomp program (or one byte, "go", without seccomp) ----
 *           9. fork the command; pid 1 drops its capabilities and reaps
 *   command 10. session + controlling tty, rlimits
 *          11. drop capabilities (bounding, securebits, ambient, sets)
 *          12. NO_NEW_PRIVS, Landlock, close stray fds
 *          13. Landlock probe, seccomp last, measure what is enforced and
 *              send it to the parent (docs/attest.md)
 *   parent     the caller's on_measured hook records it; then one byte, "go"
 *              (a failed record kills the sandbox instead)
 *   command    execve
 *           ---- sync 3: execve closes the socket (CLOEXEC), or the command
 *                sends its error (126/127) ----
 *   parent 14. relay the pty, forward signals, enforce --timeout, collect status
 *          15. clean up: cgroups, the trust scan; tell the janitor it is done
 */

#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "../util/cleanup.h"
#include "../util/crash.h"
#include "../util/sys.h"

#include "spawn_int.h"

/* ---------------------------------------------------------- 4-5 clone */

static int start_child(struct sandbox *s, struct berth_error *err)
{
	unsigned long flags = SIGCHLD;

	if (s->use_userns) {
		const struct berth_container *c = s->p->container;
		flags |= CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID;
		/* a container's pod namespaces were joined by the supervisor
		 * (src/oci/supervisor.c): the sandbox shares them */
		if (c == NULL || c->ipcns == NULL)
			flags |= CLONE_NEWIPC;
		if (c == NULL || c->utsns == NULL)
			flags |= CLONE_NEWUTS;
		if (s->p->network != BERTH_NET_HOST)
			flags |= CLONE_NEWNET;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, s->sock) < 0)
		return berth_err(err, errno, "socketpair");
	s->child = (pid_t)syscall(SYS_clone, flags, NULL, NULL, NULL, NULL);
	if (s->child < 0 && s->use_userns &&
	    (errno == EPERM || errno == ENOSPC || errno == EUSERS || errno == EINVAL)) {
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
		berth_sb_child_main(s);
	berth_crash_point("run.clone");
	close(s->sock[1]);
	s->sock[1] = -1;
	if (s->janitor_fd >= 0)
		(void)berth_sb_janitor_send(s, &s->child, sizeof s->child);
	if (s->use_userns && berth_userns_write_maps(s->child, &s->ids, err) < 0) {
		berth_sb_lsm_hint(BERTH_STEP_MAPS, err);
		return -1;
	}
	if (berth_limits_attach(&s->lim, s->child, err) < 0)
		return -1;
	berth_crash_point("run.attach");
	/* sync 1 */
	if (write(s->sock[0], "1", 1) != 1)
		return berth_err(err, errno, "cannot release the sandbox");
	return 0;
}

static int wait_ready(struct sandbox *s, struct berth_error *err)
{
	struct msg m;
	int fds[MSG_FDS_MAX], nfds = 0, r = berth_sb_recv_msg(s->sock[0], &m, fds, &nfds);

	if (r == 1 && m.kind == 0 &&
	    nfds == (int)m.has_pty + (m.has_proxy ? 3 + s->tports.n : 0) + (int)m.has_review &&
	    (!m.has_proxy || m.n_transparent == s->tports.n) && m.has_review == s->p->review) {
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
		if (m.has_review) /* the caller's from here on (runtime.h) */
			*s->o->review_fd = fds[k++];
		return 0;
	}
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	if (r == 1) {
		*err = m.err;
		berth_sb_lsm_hint(BERTH_STEP_MOUNT, err);
		return -1;
	}
	waitpid(s->child, NULL, 0);
	s->child = -1;
	return berth_err(err, 0, "the sandbox died during setup");
}

/* One attempt at steps 1-13 (up to sync 2 and the seccomp program).
 * Returns 0, or -1 with @err filled, or -1 with s->userns_errno set when the
 * clone showed that user namespaces are refused (and @err empty). */
static int start_once(struct sandbox *s, unsigned force_off, struct berth_error *err)
{
	/* Nothing would serve the listeners: refused before anything is made. */
	if (s->p->network == BERTH_NET_PROXY && s->o->hooks.on_egress == NULL)
		return berth_err(
		    err, 0,
		    "--network proxy needs the supervisor's egress broker (hooks.on_egress), and "
		    "none is attached");
	if (s->o->ask && s->o->hooks.on_notify == NULL)
		return berth_err(
		    err, 0, "--ask needs the supervisor's listener (hooks.on_notify), and none is attached");
	/* step 1: features */
	berth_features_detect_opts(force_off, false, &s->feat);
	if (s->feat_userns_errno != 0) {
		/* Report the real reason, not a forced-off switch. */
		s->feat.userns_errno = s->feat_userns_errno;
		s->feat.forced_off &= ~(unsigned)BERTH_FEAT_USERNS;
	}
	if (berth_sb_check_features(s, err) < 0 || berth_sb_make_run_id(s, err) < 0 ||
	    berth_sb_resolve_identity(s, err) < 0)
		return -1;
	if (s->p->container != NULL && !s->use_userns) {
		berth_err(err, 0,
			  "a container needs the sandbox's own user and mount namespaces, and user "
			  "namespaces are not available: berth refuses to run it");
		return berth_err_hint(err, "see `berth doctor`");
	}
	if (s->p->review && (!s->use_userns || s->o->review_fd == NULL)) {
		berth_err(err, 0,
			  s->use_userns
			      ? "--review needs a caller that takes the change set, and this one does not"
			      : "--review needs the sandbox's own user and mount namespaces (an overlay "
				"made inside them), and user namespaces are not available: berth "
				"refuses to run it");
		return berth_err_hint(err, "see `berth doctor`, or drop `--review`");
	}
	if (s->p->network == BERTH_NET_PROXY && !s->use_userns) {
		berth_err(err, 0,
			  "the egress broker needs the sandbox's own network namespace, and user namespaces "
			  "are not available: berth refuses to run with --allow-host");
		return berth_err_hint(err, "see `berth doctor`");
	}
	/* step 2: compile what the child only applies */
	if (s->p->network == BERTH_NET_PROXY && berth_policy_ports(s->p, &s->tports, err) < 0)
		return -1;
	if (berth_sb_prepare_evidence(s, err) < 0 || berth_sb_prepare_limits(s, err) < 0)
		return -1;
	berth_crash_point("run.limits");
	if (berth_sb_plan_mounts(s, err) < 0 || berth_sb_prepare_guard(s, err) < 0)
		return -1;
	berth_crash_point("run.guard");
	berth_test_pause("BERTH_TEST_PAUSE_BEFORE_MOUNT");
	if (berth_sb_prepare_idmaps(s, err) < 0)
		return -1;
	if (berth_sb_build_env(s, err) < 0 || berth_sb_compile_container_seccomp(s, err) < 0)
		return -1;
	/* What the command compares its namespaces with, and the ruleset it
	 * will get (the child inherits both). */
	berth_measure_parent_ns(&s->meas);
	s->meas.landlock_ruleset_abi = s->use_landlock ? s->feat.landlock_abi : 0;
	snprintf(s->meas.runtime, sizeof s->meas.runtime, "namespace");
	s->meas.idmap_asked = geteuid() == 0 && s->use_userns && !s->p->app;
	if (berth_sb_start_janitor(s, err) < 0) /* step 3 */
		return -1;
	berth_crash_point("run.janitor");
	if (start_child(s, err) < 0) /* steps 4-5, sync 1 */
		return -1;
	berth_sb_limits_notices(s);
	/* No process is cloned from berth after this point of the run: the
	 * caller may start threads now (see on_spawned). */
	if (s->o->hooks.on_spawned != NULL)
		s->o->hooks.on_spawned(s->o->hooks.arg);
	if (berth_sb_compile_seccomp(s, err) < 0) /* while the child runs step 7 */
		return -1;
	if (wait_ready(s, err) < 0) /* sync 2: the child is ready (step 8) */
		return -1;
	berth_crash_point("run.ready");
	if (s->pty_master >= 0 && s->o->hooks.on_terminal != NULL)
		s->o->hooks.on_terminal(s->o->hooks.arg, s->pty_master);
	if (s->o->hooks.before_release != NULL && s->o->hooks.before_release(s->o->hooks.arg, err) < 0)
		return -1; /* the command never starts: berth_sb_cleanup() kills the sandbox */
	berth_crash_point("run.recorded");
	/* --network proxy: the supervisor's broker serves from here on; one
	 * that cannot start fails the run before the command is let go. */
	if (berth_sb_hand_egress(s, err) < 0)
		return -1;
	if (s->p->network == BERTH_NET_PROXY)
		berth_crash_point("run.egress");
	/* sync 2: the go; the child runs steps 9-13 */
	return s->use_seccomp ? berth_sb_send_program(s->sock[0], &s->bpf, err)
			      : berth_sb_send_go(s->sock[0], err);
}

static struct sandbox *sandbox_new(const struct berth_policy *p, const struct berth_runtime_opts *o,
				   const sigset_t *mask)
{
	struct sandbox *s = calloc(1, sizeof *s);

	if (s == NULL)
		return NULL;
	s->base.ops = &berth_runtime_namespace;
	s->p = p;
	s->o = o;
	s->sock[0] = s->sock[1] = -1;
	s->janitor_fd = -1;
	s->janitor_lines = -1;
	s->pty_master = -1;
	s->ws_fd = -1;
	s->review_fd = -1;
	s->root_src = -1;
	s->root_fd = -1;
	s->home_fd = -1;
	s->sys_fd = -1;
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
	if (s->root_src >= 0)
		close(s->root_src);
	s->root_src = -1;
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(s->src_fds); i++) {
		if (s->src_fds[i] >= 0)
			close(s->src_fds[i]);
		s->src_fds[i] = -1;
	}
}

static struct sandbox *start(const struct berth_policy *p, const struct berth_runtime_opts *o,
			     const sigset_t *mask, struct berth_error *err)
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
	berth_sb_cleanup(s);
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
	berth_sb_cleanup(s);
	free(s);
	return NULL;
}

int berth_sandbox_run(const struct berth_policy *p, const struct berth_runtime_opts *o, int *status,
		      struct berth_error *err)
{
	sigset_t old;
	cleanup_close int sfd = berth_block_relay_signals(&old, err);
	struct sandbox *s;
	int r = -1;

	if (sfd < 0)
		return -1;
	s = start(p, o, &old, err); /* steps 1-13 */
	if (s != NULL) {
		berth_crash_point("run.released");
		r = berth_sb_supervise(s, sfd, status); /* step 14 */
		berth_crash_point("run.exited");
		berth_sb_cleanup(s); /* step 15 */
		berth_crash_point("run.cleaned");
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
		int fds[MSG_FDS_MAX], nfds = 0, r = berth_sb_recv_msg(s->sock[0], &m, fds, &nfds);
		if (r == 1 && m.kind == 3)
			berth_sb_measured(s, &m, fds, nfds);
		for (int i = 0; i < nfds; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		if (r <= 0)
			break;
		if (m.kind == 2)
			s->cmd_pgid = m.err.errnum;
		if (m.kind == 3) {
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
	berth_sb_cleanup(s);
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
	berth_sb_cleanup(s);
	free(s);
}
