/* SPDX-License-Identifier: MIT */
/*
 * relay.c - step 6 of the vm runtime (vm_int.h): the command's stdio, its
 * RPC channel (chan BERTH_VM_RPC, stream.h), berth's signals and terminal
 * size, the --timeout and the command's EXIT, between berth and the
 * channel, until the guest powers off.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/sys.h"
#include "vm_int.h"

/* After EXIT the guest syncs and powers off; a guest that does not is
 * killed after this long (its status is known already). */
#define POWEROFF_GRACE_MS 10000

/* Returns false when the reader is gone (EPIPE, or another write error). */
static bool write_all(int fd, const unsigned char *p, size_t n)
{
	while (fd >= 0 && n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			struct pollfd pf = {fd, POLLOUT, 0};
			poll(&pf, 1, 1000);
			continue;
		}
		if (w < 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* berth's reader of @chan is gone (`berth run ... | head -1`): the guest
 * is told (EOF on that channel), closes the command's end and the command
 * gets SIGPIPE, as under the namespace runtime; later bytes are dropped. */
static void reader_gone(struct vm_rt *vm, uint16_t chan)
{
	int *fd = chan == BERTH_VM_STDERR ? &vm->io.err : &vm->io.out;
	struct berth_error e;

	if (*fd < 0 || *fd == vm->io.pty_slave)
		return;
	if (!(vm->io.out == vm->io.err))
		close(*fd);
	*fd = -1;
	(void)berth_vm_write(vm->chan, BERTH_VM_EOF, chan, NULL, 0, &e);
}

void berth_vm_data_out(struct vm_rt *vm, uint16_t chan, const unsigned char *p, size_t n)
{
	int fd = chan == BERTH_VM_STDERR ? vm->io.err : vm->io.out;

	if (chan != BERTH_VM_STDOUT && chan != BERTH_VM_STDERR)
		return;
	bool filter = chan == BERTH_VM_STDOUT ? vm->io.filter_out : vm->io.filter_err;
	struct berth_termfilter *tf = chan == BERTH_VM_STDOUT ? &vm->io.tf_out : &vm->io.tf_err;
	if (!filter) {
		if (!write_all(fd, p, n))
			reader_gone(vm, chan);
		return;
	}
	/* a terminal: what would drive it rather than draw on it is dropped
	 * (termfilter.h), as for the namespace runtime's pty */
	for (size_t off = 0; off < n;) {
		char safe[16384 + BERTH_TERMFILTER_SLACK];
		size_t k = n - off < 16384 ? n - off : 16384;
		size_t m = berth_termfilter_feed(tf, (const char *)p + off, k, safe);
		if (!write_all(fd, (const unsigned char *)safe, m)) {
			reader_gone(vm, chan);
			return;
		}
		off += k;
	}
}

/* The end of one of the guest's output streams: the reader sees its end
 * of file (not the pty's slave, which carries both ways). */
static void data_eof(struct vm_rt *vm, uint16_t chan)
{
	int *fd = chan == BERTH_VM_STDOUT ? &vm->io.out : chan == BERTH_VM_STDERR ? &vm->io.err : NULL;

	if (fd == NULL || *fd < 0 || *fd == vm->io.pty_slave)
		return;
	if (!(vm->io.out == vm->io.err && *fd == vm->io.out))
		close(*fd);
	*fd = -1;
}

static int on_frame(struct vm_rt *vm, const struct berth_vm_frame *f)
{
	switch (f->type) {
	case BERTH_VM_DATA:
		if (f->chan == BERTH_VM_RPC)
			return berth_vm_stream_data(&vm->rpc, f->payload, f->len, &vm->relay_err);
		berth_vm_data_out(vm, f->chan, f->payload, f->len);
		return 0;
	case BERTH_VM_EOF:
		if (f->chan == BERTH_VM_RPC)
			berth_vm_stream_eof(&vm->rpc);
		else
			data_eof(vm, f->chan);
		return 0;
	case BERTH_VM_EXIT:
		if (f->len != 4)
			return berth_err(&vm->relay_err, 0, "the microVM guest sent a malformed EXIT frame");
		vm->wst = (int)berth_vm_get_u32(f->payload);
		vm->exited = true;
		return 0;
	case BERTH_VM_ERROR:
		return berth_err(&vm->relay_err, 0,
				 "the microVM guest failed after the command started: %.*s",
				 (int)(f->len < 400 ? f->len : 400), (const char *)f->payload);
	default:
		return berth_err(&vm->relay_err, 0,
				 "the microVM guest sent frame type %u while the command ran", f->type);
	}
}

/* Every whole frame the channel holds (while the RPC channel's socket
 * takes what it is sent: stream.h); 0, 1 at the channel's end, or -1. */
static int read_frames(struct vm_rt *vm)
{
	while (vm->chan >= 0 && !berth_vm_stream_full(&vm->rpc)) {
		struct berth_vm_frame f;
		struct berth_error e = {0};
		int r = berth_vm_read(vm->chan, vm->rd, &f, &e);
		if (r == 0)
			return 0;
		if (r < 0) {
			close(vm->chan);
			vm->chan = -1;
			if (e.errnum == 0 && strstr(e.msg, "closed") != NULL)
				return 1;
			vm->relay_err = e;
			return -1;
		}
		if (on_frame(vm, &f) < 0)
			return -1;
	}
	return 0;
}

/* The RPC channel's socket (opts.has_rpc, stream.h): what the guest sent
 * written as far as it takes it (then the frames that waited for room),
 * and one read of it sent to the guest.  -1 when the channel broke. */
static int pump_rpc(struct vm_rt *vm, short revents)
{
	struct berth_error e = {0};

	if (revents & (POLLOUT | POLLERR | POLLHUP)) {
		bool was_full = berth_vm_stream_full(&vm->rpc);
		if (berth_vm_stream_flush(&vm->rpc, &e) < 0)
			berth_vm_stream_close(&vm->rpc); /* its reader sees its end */
		if (was_full && !berth_vm_stream_full(&vm->rpc) && read_frames(vm) < 0)
			return -1;
	}
	if ((revents & (POLLIN | POLLERR | POLLHUP)) && vm->chan >= 0)
		berth_vm_stream_pump(&vm->rpc, vm->chan, &e); /* a broken channel is the next read's */
	return 0;
}

/* The relay's end: what the guest sent on the RPC channel, written within
 * a second, then the socket closed: its peer (the app supervisor) sees the
 * command gone with the VM (stream.h). */
static void rpc_end(struct vm_rt *vm)
{
	int64_t until = berth_now_ms() + 1000;
	struct berth_error e = {0};

	while (berth_vm_stream_active(&vm->rpc) && berth_vm_stream_pending(&vm->rpc) > 0 &&
	       !vm->rpc.wr_gone && berth_now_ms() < until) {
		struct pollfd p = {vm->rpc.fd, POLLOUT, 0};
		if (poll(&p, 1, (int)(until - berth_now_ms())) <= 0 ||
		    berth_vm_stream_flush(&vm->rpc, &e) < 0)
			break;
	}
	berth_vm_stream_close(&vm->rpc);
}

/* One read of the command's input, as DATA (or EOF at its end). */
static void pump_in(struct vm_rt *vm)
{
	unsigned char buf[16384];
	ssize_t n = read(vm->io.in, buf, sizeof buf);
	struct berth_error e = {0};

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n > 0) {
		berth_vm_write(vm->chan, BERTH_VM_DATA, BERTH_VM_STDIN, buf, (size_t)n, &e);
		return;
	}
	berth_vm_write(vm->chan, BERTH_VM_EOF, BERTH_VM_STDIN, NULL, 0, &e);
	if (vm->io.in != vm->io.pty_slave)
		close(vm->io.in);
	vm->io.in = -1;
}

static void send_winsz(struct vm_rt *vm)
{
	struct winsize ws;
	unsigned char b[4];
	struct berth_error e = {0};

	if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) < 0)
		return;
	berth_vm_put_u16(b, ws.ws_row);
	berth_vm_put_u16(b + 2, ws.ws_col);
	berth_vm_write(vm->chan, BERTH_VM_WINSZ, 0, b, sizeof b, &e);
}

static void on_signals(struct vm_rt *vm, int sfd)
{
	struct signalfd_siginfo si;

	while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
		unsigned char b[4];
		struct berth_error e = {0};
		if (si.ssi_signo == SIGCHLD)
			continue;
		if (si.ssi_signo == SIGWINCH) {
			if (vm->io.tty && vm->chan >= 0)
				send_winsz(vm);
			continue;
		}
		berth_vm_put_u32(b, si.ssi_signo);
		if (vm->chan >= 0)
			berth_vm_write(vm->chan, BERTH_VM_SIGNAL, 0, b, sizeof b, &e);
	}
}

static int relay_loop(struct vm_rt *vm, int sfd, int tfd)
{
	int64_t deadline = -1;
	bool qemu_done = vm->qemu_pidfd < 0; /* none: the channel's end is the end */

	while (!qemu_done || vm->chan >= 0) {
		short rpc_ev = berth_vm_stream_events(&vm->rpc) & (vm->chan >= 0 ? ~0 : ~POLLIN);
		struct pollfd p[6] = {{berth_vm_stream_full(&vm->rpc) ? -1 : vm->chan, POLLIN, 0},
				      {vm->chan >= 0 ? vm->io.in : -1, POLLIN, 0},
				      {sfd, POLLIN, 0},
				      {tfd, POLLIN, 0},
				      {qemu_done ? -1 : vm->qemu_pidfd, POLLIN, 0},
				      {rpc_ev != 0 ? vm->rpc.fd : -1, rpc_ev, 0}};
		int ms = -1;
		if (vm->exited && deadline < 0)
			deadline = berth_now_ms() + POWEROFF_GRACE_MS;
		if (deadline >= 0)
			ms = (int)(deadline - berth_now_ms() > 0 ? deadline - berth_now_ms() : 0);
		if (qemu_done && vm->chan >= 0)
			ms = ms < 0 || ms > 1000 ? 1000 : ms; /* what qemu wrote before it ended, then done */
		int n = poll(p, 6, ms);
		if (n < 0 && errno != EINTR)
			break;
		if (n == 0) {
			if (qemu_done || deadline >= 0) {
				berth_vm_kill_all(vm);
				break;
			}
			continue;
		}
		if ((p[0].revents & (POLLIN | POLLHUP | POLLERR)) && read_frames(vm) < 0) {
			vm->failed = true;
			berth_vm_kill_all(vm);
			return -1;
		}
		if (p[5].revents != 0 && pump_rpc(vm, p[5].revents) < 0) {
			vm->failed = true;
			berth_vm_kill_all(vm);
			return -1;
		}
		if (p[1].revents & (POLLIN | POLLHUP | POLLERR))
			pump_in(vm);
		if (sfd >= 0 && (p[2].revents & POLLIN))
			on_signals(vm, sfd);
		if (tfd >= 0 && (p[3].revents & POLLIN)) {
			vm->timed_out = true;
			berth_vm_kill_all(vm);
			tfd = -1; /* once: it stays readable */
		}
		if (p[4].revents & POLLIN)
			qemu_done = true;
	}
	return 0;
}

int berth_vm_relay(struct vm_rt *vm, int sfd, int tfd)
{
	int r = relay_loop(vm, sfd, tfd);

	rpc_end(vm);
	return r;
}

int berth_vm_status(const struct vm_rt *vm, int *status, struct berth_error *err)
{
	if (vm->failed) {
		*err = vm->relay_err;
		return -1;
	}
	if (vm->timed_out) {
		*status = BERTH_EXIT_TIMEOUT;
		return 0;
	}
	if (!vm->exited) {
		char tail[256];
		berth_vm_console_tail(vm, tail, sizeof tail);
		berth_err(
		    err, 0,
		    "the microVM ended without the command's exit status; its console's last line: `%s`",
		    tail[0] ? tail : "(empty)");
		return berth_vm_logs_hint(vm, err);
	}
	/* the status as the guest's namespace runtime's wait() gave it, the
	 * one `berth run` returns (docs/vm.md, EXIT); a value past 255 can
	 * only be a waitpid(2) encoding (proto.h's wording), decoded */
	if (vm->wst >= 0 && vm->wst <= 255)
		*status = vm->wst;
	else
		*status = WIFEXITED(vm->wst) ? WEXITSTATUS(vm->wst) : BERTH_EXIT_INTERNAL;
	return 0;
}
