/* SPDX-License-Identifier: MIT */
/*
 * spawn_relay.c - step 14 of berth_sandbox_run() (spawn.c): relay the pty, forward
 * signals, enforce --timeout, take the command's measurement, collect its status.
 */

#include <poll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <termios.h>

#include "../util/termfilter.h"
#include "../util/cleanup.h"
#include "../util/sha256.h"

#include "spawn_int.h"

/* ---------------------------------------------------------- 14. supervise */

/* The command's measurement arrived (it is about to execve): add what only
 * berth can see — the cgroup limits read back and the digest of the seccomp
 * program it loaded — and hand it to the caller. */
void berth_sb_measured(struct sandbox *s, const struct msg *msg, int *fds, int nfds)
{
	struct berth_error err;

	s->meas = msg->meas;
	berth_measure_cgroups(&s->meas, s->lim.mode, s->lim.dirs, s->lim.n_dirs);
	s->meas.seccomp_digest[0] = '\0';
	if (s->use_seccomp && s->bpf.insns != NULL &&
	    berth_sha256_hex(s->bpf.insns, (size_t)s->bpf.len * sizeof(struct sock_filter),
			     s->meas.seccomp_digest, &err) < 0)
		s->meas.seccomp_digest[0] = '\0';
	s->measured = true;
	/* --ask: the listener to the supervisor before the go; without it
	 * (the hook refused it, or it never came) the command's first open
	 * would wait for ever: the run fails closed. */
	if (s->o->ask) {
		int listener = msg->has_listener && nfds > 0 ? fds[0] : -1;
		if (listener >= 0)
			fds[0] = -1; /* the hook's from here on */
		if (listener < 0)
			berth_err(&err, EPROTO, "the sandbox sent no --ask listener");
		if (listener < 0 || s->o->hooks.on_notify(s->o->hooks.arg, listener, &s->meas, &err) < 0) {
			s->measure_err = err;
			s->measure_failed = true;
			if (s->cmd_pgid > 0)
				kill(-s->cmd_pgid, SIGKILL);
			if (s->child > 0)
				kill(s->child, SIGKILL);
			return;
		}
	}
	if (s->o->hooks.on_measured != NULL &&
	    s->o->hooks.on_measured(s->o->hooks.arg, s->run_id, &s->meas, &err) < 0) {
		/* Fail closed: what could not be recorded does not run on. */
		s->measure_err = err;
		s->measure_failed = true;
		if (s->cmd_pgid > 0)
			kill(-s->cmd_pgid, SIGKILL);
		if (s->child > 0)
			kill(s->child, SIGKILL);
		return;
	}
	/* Recorded: the command may execve (sync 3's go, spawn_child.c).  A
	 * command already gone makes this fail, which is its business. */
	if (s->sock[0] >= 0)
		(void)send(s->sock[0], "r", 1, MSG_NOSIGNAL);
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

int berth_sb_supervise(struct sandbox *s, int sfd, int *status)
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
		struct pollfd p[5] = {{sfd, POLLIN, 0},
				      {tfd, POLLIN, 0},
				      {s->sock[0], POLLIN, 0},
				      {stdin_open ? STDIN_FILENO : -1, POLLIN, 0},
				      {master, POLLIN, 0}};
		if (poll(p, 5, -1) < 0 && errno != EINTR)
			break;
		if (p[2].revents & (POLLIN | POLLHUP)) {
			int fds[MSG_FDS_MAX], nfds = 0;
			/* One message per turn; the socket is closed at end of file
			 * only, not at POLLHUP: messages may still be queued. */
			int got = berth_sb_recv_msg(s->sock[0], &m, fds, &nfds);
			if (got == 1 && m.kind == 2)
				s->cmd_pgid = m.err.errnum;
			if (got == 1 && m.kind == 3)
				berth_sb_measured(s, &m, fds, nfds);
			if (got == 1 && m.kind == 1) {
				tty_restore(&r);
				berth_sb_lsm_hint(BERTH_STEP_MOUNT, &m.err);
				berth_sb_print_err(&m.err);
			}
			for (int i = 0; i < nfds; i++)
				if (fds[i] >= 0)
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
		if (poll(&sp, 1, 0) <= 0 || !(sp.revents & POLLIN) ||
		    berth_sb_recv_msg(s->sock[0], &m, fds, &nfds) != 1)
			break;
		if (m.kind == 3 && !s->measured)
			berth_sb_measured(s, &m, fds, nfds);
		for (int i = 0; i < nfds; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		/* The command could not be run (126, 127): its message comes in
		 * the same wakeup as the exit, and must not be lost. */
		if (m.kind == 1) {
			tty_restore(&r);
			berth_sb_lsm_hint(BERTH_STEP_MOUNT, &m.err);
			berth_sb_print_err(&m.err);
		}
	}
	/* Drain what the command printed last -- through the filter like the
	 * rest: a command that prints and exits at once (or a loaded machine)
	 * has all of its output read here, after its exit. */
	if (s->pty_master >= 0) {
		struct pollfd p = {s->pty_master, POLLIN, 0};
		while (poll(&p, 1, 0) > 0 && (p.revents & POLLIN) && relay_out(s->pty_master, out, &tf))
			;
	}
	tty_restore(&r);
	s->child = -1;
	if (s->measure_failed) {
		*status = BERTH_EXIT_INTERNAL;
		berth_sb_print_err(&s->measure_err);
	} else if (timed_out) {
		*status = BERTH_EXIT_TIMEOUT;
		fprintf(stderr, "berth: --timeout of %llu ms expired; the sandbox was killed\n",
			(unsigned long long)s->p->timeout_ms);
	} else {
		*status = WIFEXITED(wst) ? WEXITSTATUS(wst) : 128 + WTERMSIG(wst);
		/* A SIGKILL from the kernel's OOM killer says nothing by itself. */
		if (*status == 128 + SIGKILL && s->p->memory != 0 && berth_limits_oom_kills(&s->lim) > 0)
			berth_sb_notice(s,
					"the command was killed by the kernel's OOM killer: the sandbox "
					"reached its memory limit of %llu MiB (--memory)",
					(unsigned long long)(s->p->memory >> 20));
	}
	return 0;
}
