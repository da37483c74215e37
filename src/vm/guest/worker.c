/* SPDX-License-Identifier: MIT */
/*
 * worker.c - the guest's worker (guest.h): uid U running the namespace
 * runtime on the host's policy, and the channel's relay until EXIT.
 *
 * The sync points are the namespace runtime's (src/runtime/runtime.h):
 *   sync 2  before_release: READY, then the host's GO 2
 *   sync 3  on_measured:    MEASURE (struct berth_measure as it is), GO 3
 * Frames the host sends meanwhile (stdin, a window size, a signal) are kept
 * for the command, which has not run yet.  Any failure before the command
 * ran is one ERROR frame; a channel that breaks kills the sandbox: the VM
 * then powers off (main.c), so nothing outlives the host's side.
 */
#include "guest.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "../../runtime/runtime.h"
#include "../../sandbox/measure.h"
#include "../../util/cleanup.h"

#define PIPE_SIZE (1 << 20) /* the stdin pipe's: fs.pipe-max-size's default */

static int in_fd(const struct guest *g)
{
	return g->start.tty ? g->pty : g->stdin_w;
}

/* @n bytes of stdin handed on: the host's credit back, in batches. */
static int stdin_handed(struct guest *g, size_t n, struct berth_error *err)
{
	uint32_t grant = berth_vm_credit_handed(&g->stdin_cr, n);
	unsigned char b[4];

	if (grant == 0 || g->stdin_gone)
		return 0;
	berth_vm_put_u32(b, grant);
	return berth_vm_write(g->chan, BERTH_VM_CREDIT, BERTH_VM_STDIN, b, sizeof b, err);
}

/* Write what is pending to the command's stdin, as far as it takes it. */
static int flush_stdin(struct guest *g, struct berth_error *err)
{
	int fd = in_fd(g);

	while (fd >= 0 && g->pend_off < g->pend_len) {
		ssize_t n = write(fd, g->pend + g->pend_off, g->pend_len - g->pend_off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n < 0 && errno == EPIPE) {
			/* the command closed its stdin: the rest is dropped, and
			 * the host told to stop sending (EOF on stdin, its way) */
			g->pend_off = g->pend_len;
			if (!g->stdin_gone) {
				g->stdin_gone = true;
				if (berth_vm_write(g->chan, BERTH_VM_EOF, BERTH_VM_STDIN, NULL, 0, err) < 0)
					return -1;
			}
			break;
		}
		if (n < 0)
			return berth_err(err, errno, "write the command's stdin");
		g->pend_off += (size_t)n;
		if (stdin_handed(g, (size_t)n, err) < 0)
			return -1;
	}
	if (g->pend_off == g->pend_len)
		g->pend_off = g->pend_len = 0;
	if (g->pend_len == 0 && g->stdin_eof && g->stdin_w >= 0) {
		close(g->stdin_w);
		g->stdin_w = -1;
	}
	return 0;
}

static int queue_stdin(struct guest *g, const unsigned char *b, size_t n, struct berth_error *err)
{
	unsigned char *nb;

	if (g->stdin_eof)
		return berth_err(err, 0, "the host sent stdin after its end");
	/* the host sends no more than the window it was given: the pending
	 * bytes stay below it, whatever the command reads */
	if (berth_vm_credit_recv(&g->stdin_cr, n, err) < 0)
		return -1;
	if (g->stdin_gone)
		return 0; /* crossed the EOF that told the host */
	if (g->pend_off > 0) {
		memmove(g->pend, g->pend + g->pend_off, g->pend_len - g->pend_off);
		g->pend_len -= g->pend_off;
		g->pend_off = 0;
	}
	nb = realloc(g->pend, g->pend_len + n + 1);
	if (nb == NULL)
		return berth_err(err, ENOMEM, "stdin");
	g->pend = nb;
	memcpy(g->pend + g->pend_len, b, n);
	g->pend_len += n;
	return flush_stdin(g, err);
}

static void set_winsize(struct guest *g)
{
	struct winsize ws = {.ws_row = g->rows, .ws_col = g->cols};

	if (g->pty >= 0 && (g->rows != 0 || g->cols != 0))
		ioctl(g->pty, TIOCSWINSZ, &ws);
}

/* A frame of the host's during the run: stdin, its end, a signal, a window
 * size.  @rt NULL: the command has not run yet (the signal is kept). */
static int host_frame(struct guest *g, struct berth_rt *rt, const struct berth_vm_frame *f,
		      struct berth_error *err)
{
	int k = guest_egress_frame(g, f, err);

	if (k != 0)
		return k < 0 ? -1 : 0;
	switch (f->type) {
	case BERTH_VM_DATA:
		if (f->chan == BERTH_VM_RPC && berth_vm_stream_active(&g->rpc))
			return berth_vm_stream_data(&g->rpc, f->payload, f->len, err);
		if (f->chan != BERTH_VM_STDIN)
			return berth_err(err, 0, "the host sent data on channel %u", f->chan);
		return queue_stdin(g, f->payload, f->len, err);
	case BERTH_VM_EOF:
		if (f->chan == BERTH_VM_RPC) {
			berth_vm_stream_eof(&g->rpc);
			return 0;
		}
		if (f->chan == BERTH_VM_STDOUT || f->chan == BERTH_VM_STDERR) {
			g->reader_gone[f->chan] = true;
			return 0;
		}
		g->stdin_eof = true;
		return flush_stdin(g, err);
	case BERTH_VM_SIGNAL:
		if (f->len != 4 || berth_vm_get_u32(f->payload) == 0 || berth_vm_get_u32(f->payload) >= 65)
			return berth_err(err, 0, "the host sent a malformed SIGNAL");
		g->pending_sig = (int)berth_vm_get_u32(f->payload);
		if (rt != NULL) {
			/* the sandbox's pid 1 passes it on to the command (spawn_init.c) */
			syscall(SYS_pidfd_send_signal, berth_rt_pidfd(rt), g->pending_sig, NULL, 0);
			g->pending_sig = 0;
		}
		return 0;
	case BERTH_VM_WINSZ:
		if (f->len != 4)
			return berth_err(err, 0, "the host sent a malformed WINSZ");
		g->rows = berth_vm_get_u16(f->payload);
		g->cols = berth_vm_get_u16(f->payload + 2);
		set_winsize(g);
		return 0;
	default:
		return berth_err(err, 0, "the host sent a frame of type %u during the run", f->type);
	}
}

/* Frames until the host's GO @n (sync 2 or 3). */
static int wait_go(struct guest *g, uint32_t n, struct berth_error *err)
{
	struct berth_vm_frame f;

	for (;;) {
		if (berth_vm_read(g->chan, g->rd, &f, err) <= 0)
			return berth_err_wrap(err, "waiting for the host's GO %u", n);
		if (f.type == BERTH_VM_GO) {
			if (f.len != 4 || berth_vm_get_u32(f.payload) != n)
				return berth_err(err, 0, "the host sent another GO where GO %u was due", n);
			return 0;
		}
		if (host_frame(g, NULL, &f, err) < 0)
			return -1;
	}
}

static void hook_terminal(void *arg, int master)
{
	struct guest *g = arg;

	g->pty = master; /* the runtime's, valid until berth_rt_free */
	set_winsize(g);
}

static int hook_ready(void *arg, struct berth_error *err)
{
	struct guest *g = arg;

	if (berth_vm_write(g->chan, BERTH_VM_READY, 0, NULL, 0, err) < 0)
		return -1;
	return wait_go(g, 2, err);
}

static int hook_measured(void *arg, const char *run_id, const struct berth_measure *m,
			 struct berth_error *err)
{
	struct guest *g = arg;

	(void)run_id;
	if (berth_vm_write(g->chan, BERTH_VM_MEASURE, 0, m, sizeof *m, err) < 0)
		return -1;
	return wait_go(g, 3, err);
}

/* The environment the namespace runtime reads for its caller. */
static int set_env(const struct guest *g, struct berth_error *err)
{
	const struct guest_start *st = &g->start;

	if (clearenv() != 0 || setenv("HOME", st->home, 1) < 0 || setenv("USER", st->user, 1) < 0 ||
	    setenv("LOGNAME", st->user, 1) < 0 || setenv("PATH", BERTH_SYSTEM_PATH, 1) < 0 ||
	    (st->term != NULL && setenv("TERM", st->term, 1) < 0) ||
	    (st->lang != NULL && setenv("LANG", st->lang, 1) < 0))
		return berth_err(err, errno, "cannot set the environment");
	return 0;
}

/* The kernel starts pid 1 with a hard RLIMIT_NOFILE of 4096, where a host
 * login has far more: the runtime, unprivileged, cannot raise what the
 * policy asks above it, so it is raised here while root (to the policy's
 * --nofile, and a container's own hard rlimits). */
static int raise_rlimits(const struct berth_policy *p, struct berth_error *err)
{
	struct rlimit rl;
	size_t n = p->container != NULL ? p->container->n_rlimits : 0;

	for (size_t i = 0; i <= n; i++) {
		int res = i < n ? p->container->rlimits[i].resource : RLIMIT_NOFILE;
		rlim_t want = i < n ? p->container->rlimits[i].hard : p->nofile;

		if (getrlimit(res, &rl) < 0)
			return berth_err(err, errno, "getrlimit %d", res);
		if (rl.rlim_max != RLIM_INFINITY && (want == RLIM_INFINITY || rl.rlim_max < want)) {
			rl.rlim_max = want;
			if (setrlimit(res, &rl) < 0)
				return berth_err(err, errno,
						 "cannot raise the hard limit of rlimit %d to %llu", res,
						 (unsigned long long)want);
		}
	}
	return 0;
}

/* Into the delegated cgroup, then uid/gid U with no capability left (a
 * change of every uid from 0 clears them, capabilities(7)). */
static int become_user(const struct guest *g, struct berth_error *err)
{
	cleanup_close int fd = open(GUEST_CGROUP "/" GUEST_CGROUP_SUB "/" GUEST_CGROUP_WORKER "/cgroup.procs",
				    O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, "0", 1) != 1)
		return berth_err(err, errno, "cannot join the guest's delegated cgroup");
	if (raise_rlimits(&g->policy, err) < 0)
		return -1;
	if (setgroups(0, NULL) < 0 || setresgid(g->start.gid, g->start.gid, g->start.gid) < 0 ||
	    setresuid(g->start.uid, g->start.uid, g->start.uid) < 0)
		return berth_err(err, errno, "cannot become uid %u", g->start.uid);
	/* A changed uid makes the process undumpable, its /proc files root's:
	 * the runtime writes its child's uid_map through them. */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0 || chdir("/") < 0)
		return berth_err(err, errno, "prctl PR_SET_DUMPABLE");
	return 0;
}

struct stdio {
	int out, err; /* what the command writes: pipe read ends (or out = the pty master) */
};

static int start_command(struct guest *g, const struct berth_runtime_opts *o, struct berth_rt **rt,
			 struct stdio *io, struct berth_error *err)
{
	int in[2] = {-1, -1}, out[2] = {-1, -1}, er[2] = {-1, -1}, rpc[2] = {-1, -1};
	struct berth_runtime_opts run = *o;
	int r;

	/* the command's fd 3 (docs/protocol.md): a stream socket, as the
	 * namespace runtime's on the host; ours relayed as chan BERTH_VM_RPC */
	if (g->start.rpc) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, rpc) < 0)
			return berth_err(err, errno, "socketpair");
		fcntl(rpc[0], F_SETFL, O_NONBLOCK);
		berth_vm_stream_init(&g->rpc, rpc[0], BERTH_VM_RPC);
		run.has_rpc = true;
		run.rpc_fd = rpc[1];
	}
	if (!g->start.tty) {
		if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(er, O_CLOEXEC) < 0)
			return berth_err(err, errno, "pipe");
		fcntl(in[1], F_SETPIPE_SZ, PIPE_SIZE);
		fcntl(in[1], F_SETFL, O_NONBLOCK);
		run.has_stdio = true;
		run.stdio_fd[0] = in[0];
		run.stdio_fd[1] = out[1];
		run.stdio_fd[2] = er[1];
		g->stdin_w = in[1];
	}
	r = berth_runtime_namespace.start(&g->policy, &run, rt, err);
	if (rpc[1] >= 0)
		close(rpc[1]); /* the command's copy is its own: its end is the command's end */
	if (!g->start.tty) {
		/* the sandbox's ends: the command holds its own copies */
		close(in[0]);
		close(out[1]);
		close(er[1]);
	}
	io->out = g->start.tty ? (r == 0 ? berth_rt_pty_master(*rt) : -1) : out[0];
	io->err = g->start.tty ? -1 : er[0];
	if (r < 0)
		return -1;
	if (g->start.tty) {
		g->pty = io->out;
		fcntl(g->pty, F_SETFL, fcntl(g->pty, F_GETFL) | O_NONBLOCK);
	}
	return 0;
}

/* stderr's EOF, held until the run's end: the OOM notice (report_oom)
 * goes there after the command's last byte. */
static bool stderr_eof_held;

/* One read of the command's output @fd as DATA on @chan; at its end (or
 * EIO: a pty with no slave left), EOF (stderr's held), and *@fd becomes -1. */
static int pump_out(struct guest *g, int *fd, uint16_t chan, struct berth_error *err)
{
	static unsigned char buf[BERTH_VM_PAYLOAD_MAX];
	ssize_t n = read(*fd, buf, sizeof buf);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n > 0)
		return berth_vm_write(g->chan, BERTH_VM_DATA, chan, buf, (size_t)n, err);
	close(*fd);
	*fd = -1;
	if (chan == BERTH_VM_STDERR) {
		stderr_eof_held = true;
		return 0;
	}
	return berth_vm_write(g->chan, BERTH_VM_EOF, chan, NULL, 0, err);
}

/* The host's frames waiting on the (non-blocking) channel. */
static int pump_in(struct guest *g, struct berth_rt *rt, struct berth_error *err)
{
	struct berth_vm_frame f;
	int r = 0;

	/* not while the RPC channel's socket has a frame's worth queued
	 * (src/vm/stream.h): the next frames wait in the channel */
	while (!berth_vm_stream_full(&g->rpc) && (r = berth_vm_read(g->chan, g->rd, &f, err)) == 1)
		if (host_frame(g, rt, &f, err) < 0)
			return -1;
	return r < 0 ? -1 : 0;
}

/* The RPC channel's socket: what the host sent, written as far as the
 * command takes it (then the frames that waited for room); one read of
 * what the command wrote, as DATA (EOF at its end). */
static int pump_rpc(struct guest *g, struct berth_rt *rt, short revents, struct berth_error *err)
{
	if (revents & (POLLOUT | POLLERR | POLLHUP)) {
		bool was_full = berth_vm_stream_full(&g->rpc);
		if (berth_vm_stream_flush(&g->rpc, err) < 0)
			return -1;
		if (was_full && !berth_vm_stream_full(&g->rpc) && pump_in(g, rt, err) < 0)
			return -1;
	}
	if (revents & (POLLIN | POLLERR | POLLHUP))
		return berth_vm_stream_pump(&g->rpc, g->chan, err);
	return 0;
}

/* The host's reader of the command's stdout or stderr closed (`| head`):
 * close that pipe's read end, so the command's next write gets SIGPIPE
 * (or EPIPE) as under the namespace runtime, instead of running on into a
 * relay that drops its bytes.  Not a pty: it carries both ways. */
static void drop_gone_readers(struct guest *g, struct stdio *io)
{
	int *fd[3] = {NULL, &io->out, &io->err};

	for (int c = BERTH_VM_STDOUT; c <= BERTH_VM_STDERR; c++)
		if (g->reader_gone[c] && *fd[c] >= 0 && *fd[c] != g->pty) {
			close(*fd[c]);
			*fd[c] = -1;
		}
}

/* --timeout, as the namespace runtime's own relay enforces it. */
static int timeout_fd(const struct berth_policy *p)
{
	struct itimerspec its = {.it_value = {.tv_sec = (time_t)(p->timeout_ms / 1000),
					      .tv_nsec = (long)(p->timeout_ms % 1000) * 1000000}};
	int fd;

	if (p->timeout_ms == 0)
		return -1;
	fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (fd >= 0)
		timerfd_settime(fd, 0, &its, NULL);
	return fd;
}

/*
 * The run: stdin from the host, stdout and stderr to it, signals and window
 * sizes, until the sandbox's end; then what it printed last.  Returns the
 * status for EXIT, or -1 with @err when the channel broke (the sandbox is
 * killed).
 */
static int relay(struct guest *g, struct berth_rt *rt, struct stdio *io, struct berth_error *err)
{
	cleanup_close int tfd = timeout_fd(&g->policy);
	bool done = false, timed_out = false;
	int status = BERTH_EXIT_INTERNAL;

	fcntl(g->chan, F_SETFL, fcntl(g->chan, F_GETFL) | O_NONBLOCK);
	if (g->pending_sig != 0)
		syscall(SYS_pidfd_send_signal, berth_rt_pidfd(rt), g->pending_sig, NULL, 0);
	/* bytes already read with the frames of the sync points */
	if (pump_in(g, rt, err) < 0)
		goto broken;
	while (!done || io->out >= 0 || io->err >= 0 || (berth_vm_stream_active(&g->rpc) && !g->rpc.rd_eof)) {
		/* the channel is read unless the RPC socket's buffer is full:
		 * stdin's credit and the streams' bound what waits */
		short rpc_ev = berth_vm_stream_events(&g->rpc);
		struct pollfd p[7 + 4 + BERTH_EGRESS_TRANSPARENT_MAX + BERTH_VM_MUX_MAX] = {
		    {!berth_vm_stream_full(&g->rpc) ? g->chan : -1, POLLIN, 0},
		    {io->out, POLLIN, 0},
		    {io->err, POLLIN, 0},
		    {done ? -1 : berth_rt_pidfd(rt), POLLIN, 0},
		    {g->pend_len > g->pend_off ? in_fd(g) : -1, POLLOUT, 0},
		    {tfd, POLLIN, 0},
		    {rpc_ev != 0 ? g->rpc.fd : -1, rpc_ev, 0}};
		size_t ne = done ? 0 : guest_egress_poll(g, p + 7);
		/* once the sandbox is gone, what is left to read is there already */
		if (poll(p, (nfds_t)(7 + ne), done ? 1000 : -1) == 0)
			break;
		if ((p[0].revents & (POLLIN | POLLHUP | POLLERR)) && pump_in(g, rt, err) < 0)
			goto broken;
		drop_gone_readers(g, io);
		if ((p[1].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    pump_out(g, &io->out, BERTH_VM_STDOUT, err) < 0)
			goto broken;
		if ((p[2].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    pump_out(g, &io->err, BERTH_VM_STDERR, err) < 0)
			goto broken;
		if ((p[4].revents & (POLLOUT | POLLERR)) && flush_stdin(g, err) < 0)
			goto broken;
		if (p[6].revents != 0 && pump_rpc(g, rt, p[6].revents, err) < 0)
			goto broken;
		if (ne > 0 && guest_egress_ready(g, p + 7, ne, err) < 0)
			goto broken;
		if (p[5].revents & POLLIN) {
			timed_out = true;
			berth_rt_kill(rt);
			close(steal_fd(&tfd));
		}
		if (p[3].revents & POLLIN)
			done = true;
	}
	if (berth_rt_wait(rt, &status) < 0)
		status = BERTH_EXIT_INTERNAL;
	return timed_out ? BERTH_EXIT_TIMEOUT : status;
broken:
	berth_rt_kill(rt);
	return -1;
}

/* A counter @key of the cgroup events file @path (0 when absent). */
static unsigned long long cg_event(const char *path, const char *key)
{
	char buf[1024];
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	size_t k = strlen(key);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	for (char *l = buf; l != NULL && *l != '\0'; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, key, k) == 0 && l[k] == ' ')
			return strtoull(l + k + 1, NULL, 10);
	return 0;
}

/*
 * The run's end, when the OOM killer took a process of the command: said
 * on its stderr (the status alone, 137, does not say why), naming the limit
 * it met: the policy's --memory (the run's cgroup), or the guest's budget
 * (/berth's own memory.max, when the policy allows more than the guest
 * holds).  /berth's memory.events counts the run's cgroup's kills too.
 */
static void report_oom(struct guest *g)
{
	unsigned long long kills = cg_event(GUEST_CGROUP "/" GUEST_CGROUP_SUB "/memory.events", "oom_kill");
	bool guest_limit = cg_event(GUEST_CGROUP "/" GUEST_CGROUP_SUB "/memory.events.local", "oom") > 0;
	struct berth_error err = {0};
	char msg[512];
	int n;

	if (kills == 0)
		return;
	if (guest_limit)
		n = snprintf(
		    msg, sizeof msg,
		    "berth: the command ran out of memory: the OOM killer ended %llu of its processes "
		    "at the microVM's limit, %llu MiB (the policy's --memory is %llu MiB)\n"
		    "berth: hint: give `--memory` for what the command needs: the microVM's RAM "
		    "follows it (docs/vm.md, \"Memory\")\n",
		    kills, (unsigned long long)(guest_mem_budget() >> 20),
		    (unsigned long long)(g->policy.memory >> 20));
	else
		n = snprintf(
		    msg, sizeof msg,
		    "berth: the command ran out of memory: the OOM killer ended %llu of its processes "
		    "at its --memory limit, %llu MiB\n"
		    "berth: hint: give a larger --memory\n",
		    kills, (unsigned long long)(g->policy.memory >> 20));
	if (n > 0 && berth_vm_write(g->chan, BERTH_VM_DATA, BERTH_VM_STDERR, msg,
				    (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1, &err) < 0)
		guest_log("cannot send the OOM notice: %s", err.msg);
}

/* The run's end on stderr: the OOM notice, if any, then its EOF. */
static void end_stderr(struct guest *g)
{
	struct berth_error err = {0};

	report_oom(g);
	if (stderr_eof_held && berth_vm_write(g->chan, BERTH_VM_EOF, BERTH_VM_STDERR, NULL, 0, &err) < 0)
		guest_log("cannot send stderr's EOF: %s", err.msg);
}

void guest_worker(struct guest *g)
{
	struct berth_error err = {0};
	struct berth_runtime_opts o = {
	    .want_pty = g->start.tty,
	    .pty_rows = g->start.rows,
	    .pty_cols = g->start.cols,
	    .run_id = g->start.run_id,
	    .home_files = g->start.home_files,
	    .n_home_files = g->start.n_home_files,
	    .hooks = {.arg = g,
		      .on_terminal = hook_terminal,
		      .before_release = hook_ready,
		      .on_egress = guest_egress_hook,
		      .on_measured = hook_measured},
	};
	struct berth_rt *rt = NULL;
	struct stdio io = {-1, -1};
	unsigned char st[4];
	int status;

	berth_vm_stream_init(&g->rpc, -1, BERTH_VM_RPC);
	g->rows = g->start.rows;
	g->cols = g->start.cols;
	berth_vm_credit_init(&g->stdin_cr);
	/* a command that closes its stdin is EPIPE here, not this process's
	 * end (the command's own signals are reset to their defaults) */
	signal(SIGPIPE, SIG_IGN);
	if (set_env(g, &err) < 0 || become_user(g, &err) < 0 || start_command(g, &o, &rt, &io, &err) < 0) {
		guest_send_error(g->chan, &err);
		_exit(1);
	}
	status = relay(g, rt, &io, &err);
	guest_egress_close(g);
	if (status < 0) {
		guest_log("the channel broke, the sandbox was killed: %s", err.msg);
		berth_rt_free(rt);
		_exit(1);
	}
	end_stderr(g);
	berth_vm_put_u32(st, (uint32_t)status);
	if (berth_vm_write(g->chan, BERTH_VM_EXIT, 0, st, sizeof st, &err) < 0)
		guest_log("cannot send EXIT: %s", err.msg);
	berth_rt_free(rt);
	_exit(0);
}
