/* SPDX-License-Identifier: MIT */
/*
 * spawn_channel.c - the parent/child channel of berth_sandbox_run() (spawn.c): notices,
 * the error and "ready" messages, the seccomp program and the "go" (sync 1-3).
 */

#include <string.h>

#include "../util/text.h"
#include "../util/cleanup.h"

#include "spawn_int.h"

void berth_sb_notice(const struct sandbox *s, const char *fmt, ...)
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
void berth_sb_lsm_hint(enum berth_userns_step step, struct berth_error *e)
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
void berth_sb_print_err(const struct berth_error *e)
{
	char safe[sizeof e->msg > sizeof e->hint ? sizeof e->msg : sizeof e->hint];

	fprintf(stderr, "berth: %s\n", berth_text_clean(safe, sizeof safe, e->msg));
	if (e->hint[0] != '\0')
		fprintf(stderr, "berth: hint: %s\n", berth_text_clean(safe, sizeof safe, e->hint));
}

void berth_sb_send_msg(int sock, const struct msg *m, const int *fds, int nfds)
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
int berth_sb_recv_msg(int sock, struct msg *m, int *fds, int *nfds)
{
	struct iovec iov = {.iov_base = m, .iov_len = sizeof *m};
	char cbuf[CMSG_SPACE(MSG_FDS_MAX * sizeof(int))];
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
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
int berth_sb_send_program(int sock, const struct berth_bpf *bpf, struct berth_error *err)
{
	size_t len = (size_t)bpf->len * sizeof(struct sock_filter);

	if (send(sock, bpf->insns, len, MSG_NOSIGNAL) != (ssize_t)len)
		return berth_err(err, errno, "cannot hand the seccomp filter to the sandbox");
	return 0;
}

/* Child side; the program lands in static storage (pid 1 is single-threaded
 * and execs nothing but the command). */
int berth_sb_recv_program(int sock, struct berth_bpf *bpf)
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
int berth_sb_send_go(int sock, struct berth_error *err)
{
	if (send(sock, "g", 1, MSG_NOSIGNAL) != 1)
		return berth_err(err, errno, "cannot let the sandbox's command start");
	return 0;
}

int berth_sb_recv_go(int sock)
{
	char c;
	ssize_t n;

	do
		n = recv(sock, &c, 1, 0);
	while (n < 0 && errno == EINTR);
	return n == 1 && c == 'g' ? 0 : -1;
}

__attribute__((noreturn)) void berth_sb_child_fail(int sock, struct berth_error *err, int status)
{
	struct msg m = {.kind = 1, .err = *err};

	m.err.status = status;
	berth_sb_send_msg(sock, &m, NULL, 0);
	_exit(status);
}

/* sync 2, --network proxy: the listeners the child made in the sandbox's
 * network go to the supervisor (hooks.on_egress), whose broker serves them
 * from outside the sandbox for the whole run.  The hook owns them from here
 * on, whatever it returns. */
int berth_sb_hand_egress(struct sandbox *s, struct berth_error *err)
{
	struct berth_egress_listeners l = {.http = s->proxy_fd[0],
					   .socks5 = s->proxy_fd[1],
					   .dns = s->dns_fd,
					   .streams = -1,
					   .dns_tagged = -1};

	if (s->p->network != BERTH_NET_PROXY)
		return 0;
	for (int i = 0; i < s->tports.n; i++) {
		l.transparent[i] = s->tfd[i];
		s->tfd[i] = -1;
	}
	l.n_transparent = (size_t)s->tports.n;
	s->proxy_fd[0] = s->proxy_fd[1] = s->dns_fd = -1;
	return s->o->hooks.on_egress(s->o->hooks.arg, &l, err);
}
