/* SPDX-License-Identifier: MIT */
/*
 * relay.c - step 6 of the vm runtime (vm_int.h): the command's stdio, its
 * RPC channel (chan BERTH_VM_RPC, stream.h), berth's signals and terminal
 * size, the --timeout and the command's EXIT, between berth and the
 * channel, until the guest powers off.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/sys.h"
#include "vm_int.h"

/* After EXIT the guest syncs and powers off; a guest that does not is
 * killed after this long (its status is known already). */
#define POWEROFF_GRACE_MS 10000
/* The relay's unwritten frames at most: the credit bounds them far below
 * (a window a chan), so more is a bug, failed closed rather than grown. */
#define OUTQ_MAX (64u << 20)
#define STDIN_READ 16384

/* ---------------------------------------------------------- the writer */

/* What the channel takes of the queue now (non-blocking); -1 with @err. */
static int outq_flush(struct vm_rt *vm, struct berth_error *err)
{
	while (vm->chan >= 0 && vm->outq_off < vm->outq_len) {
		ssize_t w = write(vm->chan, vm->outq + vm->outq_off, vm->outq_len - vm->outq_off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (w < 0)
			return berth_err(err, errno, "write the VM channel");
		vm->outq_off += (size_t)w;
	}
	if (vm->outq_off == vm->outq_len)
		vm->outq_off = vm->outq_len = 0;
	return 0;
}

/* One frame, queued and written as far as the channel takes it: the relay
 * never waits for the guest to read (which may wait for the relay). */
static int vm_send(void *arg, uint16_t type, uint16_t chan, const void *payload, size_t len,
		   struct berth_error *err)
{
	struct vm_rt *vm = arg;
	unsigned char hdr[BERTH_VM_HDR];

	if (vm->chan < 0)
		return 0; /* the guest is gone: nothing more reaches it */
	if (len > BERTH_VM_PAYLOAD_MAX || vm->outq_len + BERTH_VM_HDR + len > OUTQ_MAX)
		return berth_err(err, ENOBUFS, "the VM channel's queue is over %u bytes", OUTQ_MAX);
	if (vm->outq_off > 0 && vm->outq_off == vm->outq_len)
		vm->outq_off = vm->outq_len = 0;
	unsigned char *nq = realloc(vm->outq, vm->outq_len + BERTH_VM_HDR + len);
	if (nq == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	vm->outq = nq;
	berth_vm_put_u32(hdr, BERTH_VM_MAGIC);
	berth_vm_put_u32(hdr + 4, (uint32_t)len);
	berth_vm_put_u16(hdr + 8, type);
	berth_vm_put_u16(hdr + 10, chan);
	memcpy(vm->outq + vm->outq_len, hdr, BERTH_VM_HDR);
	if (len > 0)
		memcpy(vm->outq + vm->outq_len + BERTH_VM_HDR, payload, len);
	vm->outq_len += BERTH_VM_HDR + len;
	return outq_flush(vm, err);
}

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
	(void)vm_send(vm, BERTH_VM_EOF, chan, NULL, 0, &e);
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

/* The guest's command closed its stdin: berth's is not read any more. */
static void stdin_gone(struct vm_rt *vm)
{
	if (vm->io.in < 0)
		return;
	if (vm->io.in != vm->io.pty_slave)
		close(vm->io.in);
	vm->io.in = -1;
}

/* ---------------------------------------------------------- egress */

static void fd_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

int berth_vm_egress_start(struct vm_rt *vm, struct berth_error *err)
{
	const struct berth_run_hooks *hk = &vm->o->hooks;
	struct berth_egress_listeners l = {.http = -1, .socks5 = -1, .dns = -1};
	int hs[2] = {-1, -1}, ds[2] = {-1, -1};

	if (hk->on_egress == NULL)
		return berth_err(err, EINVAL, "--network proxy needs the supervisor's egress broker");
	vm->streams = malloc(sizeof *vm->streams);
	if (vm->streams == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	berth_vm_mux_init(vm->streams, vm_send, vm);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, hs) < 0 ||
	    socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, ds) < 0) {
		int e = errno;
		fd_close(&hs[0]);
		fd_close(&hs[1]);
		return berth_err(err, e, "cannot make the egress broker's sockets");
	}
	fcntl(hs[0], F_SETFL, O_NONBLOCK);
	fcntl(ds[0], F_SETFL, O_NONBLOCK);
	vm->handoff = hs[0];
	vm->dns = ds[0];
	l.streams = hs[1];
	l.dns_tagged = ds[1];
	/* the hook owns both from here on, whatever it returns */
	return hk->on_egress(hk->arg, &l, err);
}

/* OPEN's JSON: the kind, and a transparent one's claimed destination. */
static int parse_open(const struct berth_vm_frame *f, struct berth_egress_stream *m, struct berth_error *err)
{
	json_t *j =
	    f->len <= BERTH_VM_OPEN_MAX ? json_loadb((const char *)f->payload, f->len, 0, NULL) : NULL;
	const char *kind = json_string_value(json_object_get(j, "kind"));
	const char *dst = json_string_value(json_object_get(j, "dst"));
	json_t *port = json_object_get(j, "port");
	int rc = 0;

	memset(m, 0, sizeof *m);
	m->kind = kind == NULL                       ? 0
		  : strcmp(kind, "http") == 0        ? BERTH_EGRESS_HTTP
		  : strcmp(kind, "socks5") == 0      ? BERTH_EGRESS_SOCKS5
		  : strcmp(kind, "transparent") == 0 ? BERTH_EGRESS_TRANSPARENT
						     : 0;
	if (m->kind == 0 || dst == NULL || strlen(dst) >= sizeof m->dst || !json_is_integer(port) ||
	    json_integer_value(port) < 0 || json_integer_value(port) > 65535)
		rc = berth_err(err, 0, "the microVM guest sent a malformed OPEN on stream %u: `%.*s`",
			       f->chan, (int)(f->len < 200 ? f->len : 200), (const char *)f->payload);
	else {
		snprintf(m->dst, sizeof m->dst, "%s", dst);
		m->port = (uint32_t)json_integer_value(port);
	}
	json_decref(j);
	return rc;
}

/* OPEN: a socketpair, one end the stream's, the other the broker's with
 * the guest's claims (decided there as any connection's). */
static int on_open(struct vm_rt *vm, const struct berth_vm_frame *f)
{
	struct berth_egress_stream m;
	struct berth_vm_mux_stream *st;
	struct berth_error e = {0};
	int sp[2];

	if (vm->streams == NULL || vm->handoff < 0)
		return berth_err(&vm->relay_err, 0,
				 "the microVM guest opened a stream, and the run has no --network proxy");
	if (parse_open(f, &m, &vm->relay_err) < 0)
		return -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
		return vm_send(vm, BERTH_VM_CLOSE, f->chan, NULL, 0, &vm->relay_err);
	st = berth_vm_mux_add(vm->streams, sp[0], f->chan, &e);
	if (st == NULL) {
		close(sp[1]);
		if (e.errnum != EMFILE) {
			vm->relay_err = e;
			return -1;
		}
		return vm_send(vm, BERTH_VM_CLOSE, f->chan, NULL, 0, &vm->relay_err);
	}
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = &m, .iov_len = sizeof m};
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &sp[1], sizeof(int));
	ssize_t n = sendmsg(vm->handoff, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	close(sp[1]);
	if (n != (ssize_t)sizeof m) /* the broker is gone or behind: this one is reset */
		berth_vm_mux_abort(vm->streams, st, true);
	return 0;
}

/* DNS from the guest: to the broker's resolver, tag and all (a full
 * socket drops it, as a lost datagram: the client asks again). */
static int on_dns(struct vm_rt *vm, const struct berth_vm_frame *f)
{
	if (vm->streams == NULL || vm->dns < 0)
		return berth_err(&vm->relay_err, 0,
				 "the microVM guest sent a DNS query, and the run has no --network proxy");
	if (f->len < 4 || f->len > 4 + BERTH_VM_DNS_MAX)
		return berth_err(&vm->relay_err, 0, "the microVM guest sent a malformed DNS frame (%u bytes)",
				 f->len);
	(void)send(vm->dns, f->payload, f->len, MSG_DONTWAIT | MSG_NOSIGNAL);
	return 0;
}

/* The broker's answers, tagged as they came, to the guest. */
static int dns_answers(struct vm_rt *vm)
{
	unsigned char buf[4 + BERTH_VM_DNS_MAX];

	for (int i = 0; i < 64; i++) {
		ssize_t n = recv(vm->dns, buf, sizeof buf, MSG_DONTWAIT);
		if (n < 0)
			return 0;
		if (n >= 4 && vm_send(vm, BERTH_VM_DNS, 0, buf, (size_t)n, &vm->relay_err) < 0)
			return -1;
	}
	return 0;
}

/* ---------------------------------------------------------- frames */

static int on_frame(struct vm_rt *vm, const struct berth_vm_frame *f)
{
	if (vm->streams != NULL) {
		int k = berth_vm_mux_frame(vm->streams, f, &vm->relay_err);
		if (k != 0)
			return k < 0 ? -1 : 0;
	}
	switch (f->type) {
	case BERTH_VM_DATA:
		if (f->chan == BERTH_VM_RPC)
			return berth_vm_stream_data(&vm->rpc, f->payload, f->len, &vm->relay_err);
		berth_vm_data_out(vm, f->chan, f->payload, f->len);
		return 0;
	case BERTH_VM_EOF:
		if (f->chan == BERTH_VM_STDIN)
			stdin_gone(vm);
		else if (f->chan == BERTH_VM_RPC)
			berth_vm_stream_eof(&vm->rpc);
		else
			data_eof(vm, f->chan);
		return 0;
	case BERTH_VM_CREDIT:
		if (f->chan != BERTH_VM_STDIN)
			return berth_err(&vm->relay_err, 0, "the microVM guest sent CREDIT on channel %u",
					 f->chan);
		return berth_vm_credit_grant(&vm->stdin_cr, f->payload, f->len, &vm->relay_err);
	case BERTH_VM_OPEN:
		return on_open(vm, f);
	case BERTH_VM_DNS:
		return on_dns(vm, f);
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
	if ((revents & (POLLIN | POLLERR | POLLHUP)) && vm->chan >= 0 && vm->outq_len == vm->outq_off)
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

/* One read of the command's input, as DATA within the guest's credit (or
 * EOF at its end). */
static int pump_in(struct vm_rt *vm)
{
	unsigned char buf[STDIN_READ];
	size_t want = vm->stdin_cr.can_send < sizeof buf ? vm->stdin_cr.can_send : sizeof buf;
	ssize_t n = want > 0 ? read(vm->io.in, buf, want) : -1;

	if (want == 0 || (n < 0 && (errno == EINTR || errno == EAGAIN)))
		return 0;
	if (n > 0) {
		berth_vm_credit_sent(&vm->stdin_cr, (size_t)n);
		return vm_send(vm, BERTH_VM_DATA, BERTH_VM_STDIN, buf, (size_t)n, &vm->relay_err);
	}
	stdin_gone(vm);
	return vm_send(vm, BERTH_VM_EOF, BERTH_VM_STDIN, NULL, 0, &vm->relay_err);
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
	vm_send(vm, BERTH_VM_WINSZ, 0, b, sizeof b, &e);
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
			vm_send(vm, BERTH_VM_SIGNAL, 0, b, sizeof b, &e);
	}
}

/* start()'s pty (want_pty): its master is the caller's (a session's
 * supervisor), whose TIOCSWINSZ signals nobody here (the slave is no
 * process's controlling terminal), so its size is looked at every
 * PTY_SIZE_MS and a change sent as WINSZ. */
#define PTY_SIZE_MS 200

static void pty_resized(struct vm_rt *vm)
{
	struct winsize ws;
	unsigned char b[4];
	struct berth_error e = {0};

	if (vm->pty_master < 0 || vm->io.pty_slave < 0 || vm->chan < 0 ||
	    ioctl(vm->io.pty_slave, TIOCGWINSZ, &ws) < 0 || (ws.ws_row == vm->rows && ws.ws_col == vm->cols))
		return;
	vm->rows = ws.ws_row;
	vm->cols = ws.ws_col;
	berth_vm_put_u16(b, ws.ws_row);
	berth_vm_put_u16(b + 2, ws.ws_col);
	vm_send(vm, BERTH_VM_WINSZ, 0, b, sizeof b, &e);
}

static int relay_loop(struct vm_rt *vm, int sfd, int tfd)
{
	int64_t deadline = -1;
	bool qemu_done = vm->qemu_pidfd < 0; /* none: the channel's end is the end */

	while (!qemu_done || vm->chan >= 0) {
		/* the RPC stream's own frames go straight to the channel: only
		 * when no frame of the queue is half written */
		bool q_empty = vm->outq_len == vm->outq_off;
		short rpc_ev = berth_vm_stream_events(&vm->rpc) & (vm->chan >= 0 && q_empty ? ~0 : ~POLLIN);
		struct pollfd p[7 + BERTH_VM_MUX_MAX] = {
		    {vm->chan,
		     (short)((berth_vm_stream_full(&vm->rpc) ? 0 : POLLIN) | (q_empty ? 0 : POLLOUT)), 0},
		    {vm->chan >= 0 && vm->stdin_cr.can_send > 0 ? vm->io.in : -1, POLLIN, 0},
		    {sfd, POLLIN, 0},
		    {tfd, POLLIN, 0},
		    {qemu_done ? -1 : vm->qemu_pidfd, POLLIN, 0},
		    {rpc_ev != 0 ? vm->rpc.fd : -1, rpc_ev, 0},
		    {vm->chan >= 0 && vm->streams != NULL ? vm->dns : -1, POLLIN, 0}};
		size_t ns = vm->streams != NULL && vm->chan >= 0 ? berth_vm_mux_poll(vm->streams, p + 7) : 0;
		int ms = -1;
		if (vm->exited && deadline < 0)
			deadline = berth_now_ms() + POWEROFF_GRACE_MS;
		if (deadline >= 0)
			ms = (int)(deadline - berth_now_ms() > 0 ? deadline - berth_now_ms() : 0);
		if (qemu_done && vm->chan >= 0)
			ms = ms < 0 || ms > 1000 ? 1000 : ms; /* what qemu wrote before it ended, then done */
		bool pty_timer = vm->pty_master >= 0 && !qemu_done && (ms < 0 || ms > PTY_SIZE_MS);
		if (pty_timer)
			ms = PTY_SIZE_MS;
		int n = poll(p, (nfds_t)(7 + ns), ms);
		if (n < 0 && errno != EINTR)
			break;
		pty_resized(vm);
		if (n == 0 && pty_timer)
			continue;
		if (n == 0) {
			if (qemu_done || deadline >= 0) {
				berth_vm_kill_all(vm);
				break;
			}
			continue;
		}
		if (((p[0].revents & (POLLIN | POLLHUP | POLLERR)) && read_frames(vm) < 0) ||
		    ((p[0].revents & POLLOUT) && outq_flush(vm, &vm->relay_err) < 0) ||
		    ((p[1].revents & (POLLIN | POLLHUP | POLLERR)) && vm->io.in >= 0 && pump_in(vm) < 0) ||
		    ((p[6].revents & POLLIN) && dns_answers(vm) < 0) ||
		    (ns > 0 && berth_vm_mux_ready(vm->streams, p + 7, ns, &vm->relay_err) < 0)) {
			vm->failed = true;
			berth_vm_kill_all(vm);
			return -1;
		}
		if (p[5].revents != 0 && pump_rpc(vm, p[5].revents) < 0) {
			vm->failed = true;
			berth_vm_kill_all(vm);
			return -1;
		}
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
