/* SPDX-License-Identifier: MIT */
/*
 * ask.c - the --ask engine (ask.h): one thread serves the seccomp listener,
 * the control socket, the terminal and the deadlines.  Nothing is decided
 * on memory the sandbox can change after it was read: the path is copied
 * once, the notification checked valid after the copy, and a grant opens
 * that copy.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "../audit/queue.h"
#include "../policy/policy.h"
#include "../util/sys.h"
#include "../util/text.h"
#include "ask.h"

#define NOTIFS_PER_ASK 32
#define REMEMBERED_MAX 64

struct held {
	uint64_t id; /* the notification */
	long pid;
	int flags;
	unsigned mode;
};

struct ask {
	bool used;
	unsigned id;
	struct berth_ask_req req;
	long pid;
	char comm[64];
	int64_t t_ms, deadline_ms;
	bool prompted_tty;
	struct held held[NOTIFS_PER_ASK];
	int n_held;
};

struct remembered {
	char path[BERTH_ASK_PATH_MAX];
	bool write, grant;
};

struct answer {
	unsigned id;
	bool grant, always;
	char by[40];
};

struct net_offer {
	char host[256];
	unsigned port;
	uint64_t token;
};

struct berth_ask {
	struct berth_ask_opts o;
	struct net_offer netq[16]; /* under mu */
	int n_netq;
	char run_id[17];
	int listener, root_fd, ro_root_fd, ctl_fd, tty_fd, wake[2];
	char ctl_path[PATH_MAX];
	pthread_t th;
	bool running;
	pthread_mutex_t mu; /* answers from other threads */
	struct answer answers[16];
	int n_answers;
	bool stopping;
	struct ask asks[BERTH_ASK_PENDING_MAX];
	struct remembered *mem;
	int n_mem;
	unsigned next_id;
	struct ask *tty_current; /* the ask the terminal's prompt is about */
	int64_t window_ms;
	int window_count;
	/* counts for ask.summary */
	unsigned long long passed, asked, prompted, granted, denied, timed_out, limited, remembered_n,
	    coalesced, ended, grant_failed, reads, writes, nets, recorded, not_recorded;
};

/* ---------------------------------------------------------- records */

static void notice(struct berth_ask *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void notice(struct berth_ask *a, const char *fmt, ...)
{
	char line[BERTH_ASK_PATH_MAX + 512];
	va_list ap;

	if (a->o.notice == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	a->o.notice(a->o.notice_arg, line);
}

static void record(struct berth_ask *a, const char *kind, json_t *payload)
{
	struct berth_audit_queue *q = a->o.queue != NULL ? a->o.queue(a->o.queue_arg) : NULL;
	struct berth_error err = {0};

	if (payload == NULL)
		return;
	if (q == NULL) {
		json_decref(payload);
		return;
	}
	json_object_set_new(payload, "run", json_string(a->run_id));
	berth_audit_queue_push_as(q, "berth", kind, payload, false, &err);
}

static json_t *req_json(const struct ask *k)
{
	char path[BERTH_ASK_PATH_MAX];

	berth_utf8_fix(path, sizeof path, k->req.path);
	if (k->req.net)
		return json_pack("{s:I, s:s, s:s, s:s}", "id", (json_int_t)k->id, "syscall", "connect",
				 "address", path, "access", "connect");
	return json_pack("{s:I, s:s, s:s, s:s, s:b, s:I, s:s}", "id", (json_int_t)k->id, "syscall",
			 k->req.syscall, "path", path, "access", k->req.write ? "write" : "read", "create",
			 k->req.create, "pid", (json_int_t)k->pid, "comm", k->comm);
}

/* ---------------------------------------------------------- the caller */

/* Copies the NUL-terminated string at @addr of @pid (at most @size bytes,
 * page by page: a string may end just before an unmapped page). */
static ssize_t read_string(long pid, uint64_t addr, char *buf, size_t size)
{
	size_t got = 0;

	while (got < size) {
		size_t page = 4096 - (size_t)((addr + got) % 4096);
		size_t want = page < size - got ? page : size - got;
		struct iovec l = {buf + got, want}, r = {(void *)(uintptr_t)(addr + got), want};
		ssize_t n = process_vm_readv((pid_t)pid, &l, 1, &r, 1, 0);
		if (n <= 0)
			return got > 0 ? (ssize_t)got : -1;
		if (memchr(buf + got, '\0', (size_t)n) != NULL)
			return (ssize_t)(got + (size_t)n);
		got += (size_t)n;
	}
	return (ssize_t)got;
}

static void read_comm(long pid, char *out, size_t size)
{
	char p[64], raw[64] = "";
	int fd;
	ssize_t n;

	snprintf(p, sizeof p, "/proc/%ld/comm", pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, raw, sizeof raw - 1) : -1;
	if (fd >= 0)
		close(fd);
	raw[n > 0 ? n : 0] = '\0';
	raw[strcspn(raw, "\n")] = '\0';
	berth_text_clean(out, size, raw[0] != '\0' ? raw : "?");
}

static void respond(struct berth_ask *a, uint64_t id, int error, bool cont)
{
	struct seccomp_notif_resp resp = {.id = id};

	if (cont)
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	else
		resp.error = -error;
	/* ENOENT: the caller is gone, or a signal interrupted it */
	(void)ioctl(a->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

/* The block on the stderr of @pid, still the caller of notification @id
 * and in the run's pid namespace; best effort, never blocking. */
static void write_block(struct berth_ask *a, const struct ask *k, const struct held *h, int errnum,
			const char *by)
{
	char block[BERTH_ASK_PATH_MAX + 2048], nsp[64];
	struct stat st;
	int pidfd, fd;

	pidfd = (int)syscall(SYS_pidfd_open, (pid_t)h->pid, 0);
	if (pidfd < 0)
		return;
	/* The pidfd names the caller only while the notification is valid
	 * (a pid reused after the caller died would be another process). */
	snprintf(nsp, sizeof nsp, "/proc/%ld/ns/pid", h->pid);
	if (ioctl(a->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &h->id) < 0 || stat(nsp, &st) < 0 ||
	    (uint64_t)st.st_dev != a->o.pidns_dev || (uint64_t)st.st_ino != a->o.pidns_ino) {
		close(pidfd);
		return;
	}
	fd = (int)syscall(SYS_pidfd_getfd, pidfd, 2, 0);
	close(pidfd);
	if (fd < 0)
		return;
	size_t n = berth_ask_block(block, sizeof block, a->run_id, k->id, &k->req, errnum, by, a->o.policy);
	struct pollfd p = {fd, POLLOUT, 0};
	/* a full pipe, or a terminal on hold: the block is dropped, the
	 * engine never waits on the sandbox's stderr */
	if (poll(&p, 1, 0) == 1 && (p.revents & POLLOUT))
		(void)!write(fd, block, n < 4096 ? n : 4096);
	close(fd);
}

/* The host's / again, read-only: a detached copy of the mount tree
 * (open_tree OPEN_TREE_CLONE, AT_RECURSIVE) with MOUNT_ATTR_RDONLY, made by a
 * child in a user and mount namespace of its own (which a user may make)
 * and sent back.  A read grant is opened through it: what the sandbox gets
 * is then read-only to the inode too (fchmod, fchown, utimes, setxattr on
 * it are EROFS), not only to its access mode.  -1 where it cannot be made. */
static int ro_root_make(void)
{
	int sv[2], fd = -1;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} u = {0};
		char c = 'r';
		struct iovec iov = {&c, 1};
		struct msghdr m = {
		    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
		int t;

		close(sv[0]);
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
			_exit(1);
		t = (int)syscall(SYS_open_tree, AT_FDCWD, "/",
				 OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
		if (t < 0 ||
		    syscall(SYS_mount_setattr, t, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) < 0)
			_exit(1);
		struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &t, sizeof t);
		_exit(sendmsg(sv[1], &m, 0) == 1 ? 0 : 1);
	}
	close(sv[1]);
	if (pid > 0) {
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} u;
		char c;
		struct iovec iov = {&c, 1};
		struct msghdr m = {
		    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
		int st;

		if (recvmsg(sv[0], &m, MSG_CMSG_CLOEXEC) == 1) {
			struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
			if (cm != NULL && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
			    cm->cmsg_len == CMSG_LEN(sizeof(int)))
				memcpy(&fd, CMSG_DATA(cm), sizeof fd);
		}
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	close(sv[0]);
	return fd;
}

/* Opens the approved copy of the path, outside the sandbox: no link
 * followed anywhere on the way, a regular file only.  What is there is
 * looked up first with O_PATH, which opens nothing: a FIFO or a device is
 * refused before any open of it (an open has effects: a FIFO's writer goes
 * on, a device's driver acts), and the regular file found is the one opened
 * (through its O_PATH descriptor, the same inode).  A path not there is
 * created only with O_CREAT, and then O_EXCL: a file that appears meanwhile
 * is looked up again, never opened blind. */
static int grant_open(struct berth_ask *a, const struct berth_ask_req *r, const struct held *h)
{
	const int keep = O_ACCMODE | O_CREAT | O_EXCL | O_TRUNC | O_APPEND | O_NONBLOCK | O_DSYNC | O_SYNC |
			 O_LARGEFILE | O_NOATIME;
	const int flags = (h->flags & keep) | O_NOCTTY | O_CLOEXEC | O_NONBLOCK;
	const struct open_how look = {
	    .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
	    .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH,
	};
	const char *rel = r->path + strspn(r->path, "/");
	struct stat st = {0};
	int fd = -1;

	/* a read: through the read-only tree, where there is one */
	bool ro =
	    (h->flags & O_ACCMODE) == O_RDONLY && !(h->flags & (O_CREAT | O_TRUNC)) && a->ro_root_fd >= 0;
	int root = ro ? a->ro_root_fd : a->root_fd;

	for (int tries = 0; fd < 0 && tries < 3; tries++) {
		int pfd = (int)syscall(SYS_openat2, root, rel, &look, sizeof look);
		if (pfd >= 0) {
			char self[64];
			if ((h->flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) {
				close(pfd);
				return -EEXIST;
			}
			/* O_PATH | O_NOFOLLOW opens a trailing link itself */
			if (fstat(pfd, &st) < 0 || !S_ISREG(st.st_mode)) {
				close(pfd);
				return S_ISLNK(st.st_mode) ? -ELOOP : -ENXIO;
			}
			/* the inode found, reopened with the call's access
			 * (permission checked again, as berth) */
			snprintf(self, sizeof self, "/proc/self/fd/%d", pfd);
			fd = open(self, flags & ~(O_CREAT | O_EXCL));
			int e = errno;
			close(pfd);
			if (fd < 0)
				return -e;
			break;
		}
		if (errno != ENOENT || !(h->flags & O_CREAT))
			return -errno;
		struct open_how how = {
		    .flags = (uint64_t)(flags | O_CREAT | O_EXCL | O_NOFOLLOW),
		    .mode = h->mode & 07777,
		    .resolve = look.resolve,
		};
		fd = (int)syscall(SYS_openat2, root, rel, &how, sizeof how);
		if (fd < 0 && errno != EEXIST)
			return -errno;
		if (fd < 0 && (h->flags & O_EXCL))
			return -EEXIST;
	}
	if (fd < 0)
		return -EAGAIN;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ENXIO;
	}
	/* O_NONBLOCK was only so that nothing held berth */
	if (!(h->flags & O_NONBLOCK)) {
		int fl = fcntl(fd, F_GETFL);
		if (fl >= 0)
			(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	}
	return fd;
}

static const char *by_phrase(const char *by, char *buf, size_t size, unsigned timeout_ms)
{
	if (strcmp(by, "timeout") == 0)
		snprintf(buf, size, "no answer in %u ms (--ask-timeout): an ask not answered is denied",
			 timeout_ms);
	else if (strcmp(by, "limit") == 0)
		snprintf(buf, size,
			 "the ask limit (%d asks a minute, %d waiting at once): denied without asking",
			 BERTH_ASK_PER_MINUTE, BERTH_ASK_PENDING_MAX);
	else if (strcmp(by, "end") == 0)
		snprintf(buf, size, "the run ended before an answer");
	else if (strcmp(by, "remembered") == 0)
		snprintf(buf, size, "a human, earlier in this run (\"deny always\")");
	else
		snprintf(buf, size, "a human (%s)", by);
	return buf;
}

/* Answers every call held by @k and frees it. */
static void decide(struct berth_ask *a, struct ask *k, bool grant, bool always, const char *by)
{
	char phrase[200];
	int64_t waited = berth_now_ms() - k->t_ms;
	int granted = 0, failed_errno = 0;

	for (int i = 0; i < k->n_held; i++) {
		struct held *h = &k->held[i];
		if (k->req.net) {
			/* the broker goes on with the request, or refuses it (403) */
			if (a->o.net_answer != NULL)
				a->o.net_answer(a->o.net_arg, h->id, grant);
			continue;
		}
		if (grant) {
			int fd = grant_open(a, &k->req, h);
			if (fd >= 0) {
				struct seccomp_notif_addfd add = {
				    .id = h->id,
				    .flags = SECCOMP_ADDFD_FLAG_SEND,
				    .srcfd = (uint32_t)fd,
				    .newfd_flags = (h->flags & O_CLOEXEC) ? O_CLOEXEC : 0,
				};
				if (ioctl(a->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &h->id) == 0 &&
				    ioctl(a->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add) >= 0)
					granted++;
				close(fd);
				continue;
			}
			failed_errno = -fd;
			char why[300];
			snprintf(why, sizeof why,
				 "berth could not open the approved path outside the sandbox (%s): a "
				 "symbolic link, not a regular file, or gone; nothing else was opened",
				 strerrorname_np(-fd) ? strerrorname_np(-fd) : "?");
			write_block(a, k, h, -fd, why);
			respond(a, h->id, -fd, false);
			continue;
		}
		by_phrase(by, phrase, sizeof phrase, a->o.timeout_ms);
		write_block(a, k, h, k->req.errnum, phrase);
		respond(a, h->id, k->req.errnum, false);
	}
	if (grant && failed_errno == 0)
		a->granted++;
	else if (grant)
		a->grant_failed++;
	else if (strcmp(by, "timeout") == 0)
		a->timed_out++;
	else if (strcmp(by, "end") == 0)
		a->ended++;
	else
		a->denied++;
	if (always && a->n_mem < REMEMBERED_MAX) {
		if (a->mem == NULL)
			a->mem = calloc(REMEMBERED_MAX, sizeof *a->mem);
		if (a->mem != NULL) {
			struct remembered *m = &a->mem[a->n_mem++];
			snprintf(m->path, sizeof m->path, "%s", k->req.path);
			m->write = k->req.write;
			m->grant = grant;
		}
	}
	if (k->id <= BERTH_ASK_RECORDED) {
		json_t *d = req_json(k);
		if (d != NULL) {
			json_object_set_new(d, "decision",
					    json_string(grant && failed_errno == 0 ? "granted"
							: grant                    ? "grant failed"
										   : "denied"));
			json_object_set_new(d, "by", json_string(by));
			json_object_set_new(d, "always", json_boolean(always));
			json_object_set_new(d, "calls", json_integer(k->n_held));
			json_object_set_new(d, "waited_ms", json_integer((json_int_t)waited));
			if (!grant || failed_errno != 0)
				json_object_set_new(
				    d, "errno",
				    json_string(strerrorname_np(grant ? failed_errno : k->req.errnum)));
		}
		record(a, "ask.decision", d);
	}
	char path[BERTH_ASK_PATH_MAX];
	berth_text_clean(path, sizeof path, k->req.path);
	notice(a, "ask %u: %s %s %s%s (%s)", k->id,
	       grant && failed_errno == 0 ? "granted"
	       : grant                    ? "granted, but could not open"
					  : "denied",
	       k->req.net     ? "connecting to"
	       : k->req.write ? "writing"
			      : "reading",
	       path, always ? ", for the rest of the run" : "", by);
	if (a->tty_current == k)
		a->tty_current = NULL;
	k->used = false;
}

/* ---------------------------------------------------------- the terminal */

/* Whether berth is the terminal's foreground job: a read from it in the
 * background would stop all of berth (SIGTTIN), and the answer belongs to
 * whoever is in front. */
static bool tty_ours(const struct berth_ask *a)
{
	return a->tty_fd >= 0 && tcgetpgrp(a->tty_fd) == getpgrp();
}

static const char *verb(const struct berth_ask_req *r)
{
	return r->net ? "connect to" : r->create ? "create or write" : r->write ? "write" : "read";
}

static void tty_prompt(struct berth_ask *a)
{
	char line[BERTH_ASK_PATH_MAX + 400], path[BERTH_ASK_PATH_MAX];
	struct ask *k = NULL;

	if (a->tty_fd < 0 || a->tty_current != NULL || !tty_ours(a))
		return;
	for (int i = 0; i < BERTH_ASK_PENDING_MAX; i++)
		if (a->asks[i].used && !a->asks[i].prompted_tty && (k == NULL || a->asks[i].id < k->id))
			k = &a->asks[i];
	if (k == NULL)
		return;
	k->prompted_tty = true;
	a->tty_current = k;
	berth_text_clean(path, sizeof path, k->req.path);
	int n =
	    snprintf(line, sizeof line,
		     "berth: ask %u: %s (pid %ld) wants to %s %s, %s\r\n"
		     "berth: [y] once  [a] always (this run)  [n] deny  [d] deny always — denied in %u s: ",
		     k->id, k->comm, k->pid, verb(&k->req), path,
		     k->req.net ? "not declared (--allow-host)" : "outside the sandbox's view",
		     (unsigned)((k->deadline_ms - berth_now_ms() + 999) / 1000));
	(void)!write(a->tty_fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

static void tty_answer(struct berth_ask *a)
{
	char buf[64];
	struct ask *k = a->tty_current;
	ssize_t n;

	if (!tty_ours(a)) {
		/* input for the job in front: not read; stop polling the
		 * terminal (asks go to the control socket from here on) */
		close(a->tty_fd);
		a->tty_fd = -1;
		return;
	}
	n = read(a->tty_fd, buf, sizeof buf);

	if (n <= 0) {
		close(a->tty_fd);
		a->tty_fd = -1;
		return;
	}
	if (k == NULL)
		return;
	char c = buf[strspn(buf, " \t")];
	if (c == 'y' || c == 'Y' || c == 'a' || c == 'A')
		decide(a, k, true, c == 'a' || c == 'A', "terminal");
	else if (c == 'n' || c == 'N' || c == 'd' || c == 'D')
		decide(a, k, false, c == 'd' || c == 'D', "terminal");
	else {
		(void)!write(a->tty_fd, "berth: y, a, n or d: ", 21);
		return;
	}
	tty_prompt(a);
}

/* ---------------------------------------------------------- a new call */

static struct ask *find_pending(struct berth_ask *a, const struct berth_ask_req *r)
{
	for (int i = 0; i < BERTH_ASK_PENDING_MAX; i++)
		if (a->asks[i].used && a->asks[i].req.write == r->write &&
		    strcmp(a->asks[i].req.path, r->path) == 0)
			return &a->asks[i];
	return NULL;
}

static const struct remembered *find_remembered(const struct berth_ask *a, const struct berth_ask_req *r)
{
	for (int i = 0; i < a->n_mem; i++)
		if (strcmp(a->mem[i].path, r->path) == 0 && (a->mem[i].write == r->write || !r->write))
			return &a->mem[i];
	return NULL;
}

/* Whether one more prompt fits this minute. */
static bool admit(struct berth_ask *a)
{
	int64_t now = berth_now_ms();

	if (now - a->window_ms >= 60000) {
		a->window_ms = now;
		a->window_count = 0;
	}
	if (a->window_count >= BERTH_ASK_PER_MINUTE)
		return false;
	a->window_count++;
	return true;
}

/* Whether a new ask @r would be denied by the limit (not coalesced with a
 * waiting one, not remembered, and no room: all 8 waiting, or this minute's
 * prompts spent); counts nothing. */
static bool limited_now(const struct berth_ask *a, const struct berth_ask_req *r)
{
	bool room = false;

	if (find_pending((struct berth_ask *)a, r) != NULL || find_remembered(a, r) != NULL)
		return false;
	for (int i = 0; i < BERTH_ASK_PENDING_MAX && !room; i++)
		room = !a->asks[i].used;
	if (!room)
		return true;
	return berth_now_ms() - a->window_ms < 60000 && a->window_count >= BERTH_ASK_PER_MINUTE;
}

static void new_ask(struct berth_ask *a, const struct berth_ask_req *r, const struct held *h)
{
	struct ask tmp, *k = NULL;
	const struct remembered *m;

	if ((k = find_pending(a, r)) != NULL && k->n_held < NOTIFS_PER_ASK) {
		k->held[k->n_held++] = *h; /* the same ask, coalesced */
		a->coalesced++;
		return;
	}
	a->asked++;
	if (r->net)
		a->nets++;
	else if (r->write)
		a->writes++;
	else
		a->reads++;
	k = NULL;
	for (int i = 0; i < BERTH_ASK_PENDING_MAX && k == NULL; i++)
		if (!a->asks[i].used)
			k = &a->asks[i];
	m = find_remembered(a, r);
	bool limited = m == NULL && (k == NULL || !admit(a));
	if (k == NULL)
		k = &tmp; /* answered at once, never stored */
	memset(k, 0, sizeof *k);
	k->used = true;
	k->id = ++a->next_id;
	k->req = *r;
	k->pid = h->pid;
	k->t_ms = berth_now_ms();
	k->deadline_ms = k->t_ms + a->o.timeout_ms;
	k->held[0] = *h;
	k->n_held = 1;
	if (r->net)
		snprintf(k->comm, sizeof k->comm, "%s", "the egress broker");
	else
		read_comm(h->pid, k->comm, sizeof k->comm);
	if (k->id <= BERTH_ASK_RECORDED) {
		a->recorded++;
		record(a, "ask", req_json(k));
	} else {
		a->not_recorded++;
	}
	if (m != NULL) {
		a->remembered_n++;
		decide(a, k, m->grant, false, "remembered");
		return;
	}
	if (limited) {
		a->limited++;
		decide(a, k, false, false, "limit");
		return;
	}
	a->prompted++;
	char path[BERTH_ASK_PATH_MAX];
	berth_text_clean(path, sizeof path, r->path);
	char who[96];
	if (r->net)
		snprintf(who, sizeof who, "a client of the egress broker");
	else
		snprintf(who, sizeof who, "%s (pid %ld)", k->comm, k->pid);
	notice(a,
	       "ask %u of run %s: %s wants to %s %s: `berth approve %s %u [--always]` or `berth deny %s %u`; "
	       "denied in %u ms",
	       k->id, a->run_id, who, verb(r), path, a->run_id, k->id, a->run_id, k->id, a->o.timeout_ms);
	if (a->o.decider.ask != NULL) {
		struct berth_ask_prompt q = {.id = k->id,
					     .run_id = a->run_id,
					     .syscall = r->syscall,
					     .path = path,
					     .write = r->write,
					     .create = r->create,
					     .pid = k->pid,
					     .comm = k->comm,
					     .timeout_ms = a->o.timeout_ms};
		a->o.decider.ask(a->o.decider.arg, &q);
	}
	tty_prompt(a);
}

static void on_notification(struct berth_ask *a, struct seccomp_notif *req)
{
	struct berth_ask_call c;
	struct berth_ask_req r;
	char path[BERTH_ASK_PATH_MAX];
	ssize_t n;

	uint64_t args[6];
	for (int i = 0; i < 6; i++)
		args[i] = req->data.args[i];
	if (berth_ask_decode(req->data.nr, args, &c) < 0) {
		respond(a, req->id, 0, true);
		return;
	}
	if (c.how_addr != 0) {
		struct open_how how;
		struct iovec l = {&how, sizeof how}, rv = {(void *)(uintptr_t)c.how_addr, sizeof how};
		ssize_t hn =
		    c.how_size >= sizeof how ? process_vm_readv((pid_t)req->pid, &l, 1, &rv, 1, 0) : -1;
		if (hn != (ssize_t)sizeof how || berth_ask_decode_how(&c, &how, sizeof how) < 0) {
			respond(a, req->id, 0, true); /* the kernel's own EINVAL/EFAULT */
			return;
		}
	}
	n = read_string(req->pid, c.path_addr, path, sizeof path);
	/* The copy is the caller's only if the caller still waits on this
	 * notification (else the pid may be another process by now). */
	if (ioctl(a->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) < 0)
		return;
	if (n <= 0 || berth_ask_classify(a->o.policy, &c, path, (size_t)n, &r) == BERTH_ASK_PASS) {
		a->passed++;
		respond(a, req->id, 0, true);
		return;
	}
	/* Nothing on the host by that name, and nothing to create: the
	 * sandbox's own answer, with no one asked. */
	/* An ask the limit would deny at once is denied whether or not the
	 * host has the path: else the block's presence would tell the sandbox,
	 * silently and without bound, which host paths exist. */
	struct stat st;
	if (!r.create && !limited_now(a, &r) &&
	    fstatat(a->root_fd, r.path + strspn(r.path, "/"), &st, AT_SYMLINK_NOFOLLOW) < 0) {
		a->passed++;
		respond(a, req->id, 0, true);
		return;
	}
	struct held h = {.id = req->id, .pid = req->pid, .flags = c.flags, .mode = c.mode};
	new_ask(a, &r, &h);
}

/* ---------------------------------------------------------- control socket */

static struct ask *find_id(struct berth_ask *a, unsigned id)
{
	for (int i = 0; i < BERTH_ASK_PENDING_MAX; i++)
		if (a->asks[i].used && a->asks[i].id == id)
			return &a->asks[i];
	return NULL;
}

static void ctl_list(struct berth_ask *a, int fd)
{
	char line[BERTH_ASK_PATH_MAX + 200], path[BERTH_ASK_PATH_MAX];
	int64_t now = berth_now_ms();

	for (int i = 0; i < BERTH_ASK_PENDING_MAX; i++) {
		struct ask *k = &a->asks[i];
		if (!k->used)
			continue;
		berth_text_clean(path, sizeof path, k->req.path);
		int n = snprintf(line, sizeof line, "%u %s %ld %s %lld %s\n", k->id,
				 k->req.write ? "write" : "read", k->pid, k->comm,
				 (long long)(k->deadline_ms - now), path);
		(void)!write(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
	}
}

static void ctl_serve(struct berth_ask *a)
{
	int fd = accept4(a->ctl_fd, NULL, NULL, SOCK_CLOEXEC);
	struct ucred uc;
	socklen_t ul = sizeof uc;
	struct timeval tv = {1, 0};
	char buf[80];
	struct berth_ask_cmd cmd;
	ssize_t n;

	if (fd < 0)
		return;
	/* Only berth's own user (root's approvals stay root's). */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &ul) < 0 || uc.uid != geteuid()) {
		(void)!write(fd, "error: not the run's owner\n", 27);
		close(fd);
		return;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	n = read(fd, buf, sizeof buf);
	if (n <= 0 || berth_ask_parse_command(buf, (size_t)n, &cmd) < 0) {
		(void)!write(fd, "error: not a request (list, approve ID [always], deny ID [always])\n", 67);
		close(fd);
		return;
	}
	if (cmd.op == BERTH_ASK_OP_LIST) {
		ctl_list(a, fd);
		close(fd);
		return;
	}
	struct ask *k = find_id(a, cmd.id);
	if (k == NULL) {
		char line[96];
		int ln =
		    snprintf(line, sizeof line,
			     "error: ask %u waits no more (answered, timed out, or never made)\n", cmd.id);
		(void)!write(fd, line, (size_t)ln);
		close(fd);
		return;
	}
	decide(a, k, cmd.op == BERTH_ASK_OP_APPROVE, cmd.always,
	       cmd.op == BERTH_ASK_OP_APPROVE ? "berth approve" : "berth deny");
	(void)!write(fd, "ok\n", 3);
	close(fd);
	tty_prompt(a);
}

static int ctl_make(struct berth_ask *a, struct berth_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int n = snprintf(a->ctl_path, sizeof a->ctl_path, "%s/%s", a->o.ctl_dir, BERTH_ASK_SOCKET);

	if (n < 0 || (size_t)n >= sizeof sa.sun_path)
		return berth_err(err, ENAMETOOLONG, "the --ask control socket's path `%s` is too long",
				 a->ctl_path);
	memcpy(sa.sun_path, a->ctl_path, (size_t)n + 1);
	a->ctl_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (a->ctl_fd < 0)
		return berth_err(err, errno, "socket");
	(void)unlink(a->ctl_path);
	if (bind(a->ctl_fd, (struct sockaddr *)&sa, sizeof sa) < 0 || chmod(a->ctl_path, 0600) < 0 ||
	    listen(a->ctl_fd, 8) < 0) {
		berth_err(err, errno, "cannot make the --ask control socket `%s`", a->ctl_path);
		close(a->ctl_fd);
		a->ctl_fd = -1;
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------- the loop */

static void take_answers(struct berth_ask *a)
{
	struct answer got[16];
	struct net_offer offers[16];
	int n, no;
	char c[16];

	while (read(a->wake[0], c, sizeof c) > 0)
		;
	pthread_mutex_lock(&a->mu);
	n = a->n_answers;
	memcpy(got, a->answers, sizeof got);
	a->n_answers = 0;
	no = a->n_netq;
	memcpy(offers, a->netq, sizeof offers);
	a->n_netq = 0;
	pthread_mutex_unlock(&a->mu);
	for (int i = 0; i < no; i++) {
		struct berth_ask_req r = {.syscall = "connect", .net = true, .errnum = ECONNREFUSED};
		struct held h = {.id = offers[i].token};
		snprintf(r.path, sizeof r.path, strchr(offers[i].host, ':') != NULL ? "[%s]:%u" : "%s:%u",
			 offers[i].host, offers[i].port);
		new_ask(a, &r, &h);
	}
	for (int i = 0; i < n; i++) {
		struct ask *k = find_id(a, got[i].id);
		if (k != NULL)
			decide(a, k, got[i].grant, got[i].always, got[i].by);
	}
	tty_prompt(a);
}

static int next_timeout(struct berth_ask *a)
{
	int64_t now = berth_now_ms(), best = -1;

	for (int i = 0; i < BERTH_ASK_PENDING_MAX; i++) {
		if (!a->asks[i].used)
			continue;
		int64_t left = a->asks[i].deadline_ms - now;
		if (left < 0)
			left = 0;
		if (best < 0 || left < best)
			best = left;
	}
	return (int)best;
}

static void expire(struct berth_ask *a)
{
	int64_t now = berth_now_ms();

	for (int i = 0; i < BERTH_ASK_PENDING_MAX; i++)
		if (a->asks[i].used && a->asks[i].deadline_ms <= now) {
			if (a->tty_current == &a->asks[i] && a->tty_fd >= 0)
				(void)!write(a->tty_fd, "(timed out: denied)\r\n", 21);
			decide(a, &a->asks[i], false, false, "timeout");
		}
	tty_prompt(a);
}

static void *loop(void *arg)
{
	struct berth_ask *a = arg;
	struct seccomp_notif *req = NULL;
	struct seccomp_notif_resp *resp = NULL;
	bool stop = false;

	if (seccomp_notify_alloc(&req, &resp) < 0)
		return NULL;
	while (!stop) {
		struct pollfd p[4] = {{a->listener, POLLIN, 0},
				      {a->wake[0], POLLIN, 0},
				      {a->ctl_fd, POLLIN, 0},
				      {a->tty_fd, POLLIN, 0}};
		int r = poll(p, 4, next_timeout(a));
		if (r < 0 && errno != EINTR)
			break;
		if (p[0].revents & POLLIN) {
			memset(req, 0, sizeof *req);
			if (seccomp_notify_receive(a->listener, req) == 0)
				on_notification(a, req);
		} else if (p[0].revents & (POLLHUP | POLLERR)) {
			stop = true; /* no process of the sandbox holds the filter any more */
		}
		if (p[1].revents & POLLIN) {
			take_answers(a);
			pthread_mutex_lock(&a->mu);
			stop = stop || a->stopping;
			pthread_mutex_unlock(&a->mu);
		}
		if (p[2].revents & POLLIN)
			ctl_serve(a);
		if (p[3].revents & (POLLIN | POLLHUP | POLLERR))
			tty_answer(a);
		expire(a);
	}
	for (int i = 0; i < BERTH_ASK_PENDING_MAX; i++)
		if (a->asks[i].used)
			decide(a, &a->asks[i], false, false, "end");
	seccomp_notify_free(req, resp);
	return NULL;
}

/* ---------------------------------------------------------- public */

struct berth_ask *berth_ask_start(int listener, const struct berth_ask_opts *o, struct berth_error *err)
{
	struct berth_ask *a = calloc(1, sizeof *a);

	if (a == NULL) {
		close(listener);
		berth_err(err, ENOMEM, "out of memory");
		return NULL;
	}
	a->o = *o;
	if (a->o.timeout_ms == 0)
		a->o.timeout_ms = BERTH_ASK_TIMEOUT_MS;
	snprintf(a->run_id, sizeof a->run_id, "%s", o->run_id != NULL ? o->run_id : "");
	a->listener = listener;
	a->ctl_fd = a->tty_fd = a->ro_root_fd = a->wake[0] = a->wake[1] = -1;
	a->window_ms = berth_now_ms();
	pthread_mutex_init(&a->mu, NULL);
	a->root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	a->ro_root_fd = ro_root_make();
	if (a->root_fd < 0 || pipe2(a->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		berth_err(err, errno, "--ask: cannot set up");
		goto fail;
	}
	if (o->ctl_dir != NULL && ctl_make(a, err) < 0)
		goto fail;
	if (o->terminal) {
		/* berth's stdin on its controlling terminal is the command's
		 * input (its pty relay): the terminal would answer both
		 * (docs/ask.md), so no prompt there */
		bool own = isatty(STDIN_FILENO) && tcgetsid(STDIN_FILENO) == getsid(0);
		a->tty_fd = own ? -1 : open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	}
	if (pthread_create(&a->th, NULL, loop, a) != 0) {
		berth_err(err, EAGAIN, "--ask: cannot start its thread");
		goto fail;
	}
	a->running = true;
	return a;
fail:
	if (a->ctl_fd >= 0) {
		close(a->ctl_fd);
		unlink(a->ctl_path);
	}
	if (a->root_fd >= 0)
		close(a->root_fd);
	if (a->ro_root_fd >= 0)
		close(a->ro_root_fd);
	if (a->wake[0] >= 0) {
		close(a->wake[0]);
		close(a->wake[1]);
	}
	if (a->tty_fd >= 0)
		close(a->tty_fd);
	close(listener);
	pthread_mutex_destroy(&a->mu);
	free(a);
	return NULL;
}

int berth_ask_hold_net(struct berth_ask *a, const char *host, unsigned port, uint64_t token)
{
	int rc = 0;

	if (a == NULL || a->o.net_answer == NULL)
		return 0;
	pthread_mutex_lock(&a->mu);
	if (!a->stopping && a->n_netq < (int)(sizeof a->netq / sizeof a->netq[0])) {
		struct net_offer *x = &a->netq[a->n_netq++];
		snprintf(x->host, sizeof x->host, "%s", host);
		x->port = port;
		x->token = token;
		rc = 1;
	}
	pthread_mutex_unlock(&a->mu);
	if (rc == 1)
		(void)!write(a->wake[1], "n", 1);
	return rc;
}

int berth_ask_answer(struct berth_ask *a, unsigned id, bool grant, bool always, const char *by)
{
	int rc = -1;

	if (a == NULL)
		return -1;
	pthread_mutex_lock(&a->mu);
	if (!a->stopping && a->n_answers < (int)(sizeof a->answers / sizeof a->answers[0])) {
		struct answer *x = &a->answers[a->n_answers++];
		x->id = id;
		x->grant = grant;
		x->always = always;
		snprintf(x->by, sizeof x->by, "%s", by != NULL ? by : "decider");
		rc = 0;
	}
	pthread_mutex_unlock(&a->mu);
	if (rc == 0)
		(void)!write(a->wake[1], "a", 1);
	return rc;
}

void berth_ask_stop(struct berth_ask *a)
{
	if (a == NULL || !a->running)
		return;
	pthread_mutex_lock(&a->mu);
	a->stopping = true;
	pthread_mutex_unlock(&a->mu);
	(void)!write(a->wake[1], "s", 1);
	pthread_join(a->th, NULL);
	a->running = false;
	if (a->ctl_fd >= 0) {
		close(a->ctl_fd);
		a->ctl_fd = -1;
		unlink(a->ctl_path);
	}
	if (a->tty_fd >= 0) {
		close(a->tty_fd);
		a->tty_fd = -1;
	}
	close(a->listener);
	a->listener = -1;
}

json_t *berth_ask_summary(const struct berth_ask *a)
{
	if (a == NULL)
		return NULL;
	return json_pack(
	    "{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:{s:I, s:I, s:I}, s:I, s:I}",
	    "asks", (json_int_t)a->asked, "prompted", (json_int_t)a->prompted, "granted",
	    (json_int_t)a->granted, "denied", (json_int_t)a->denied, "timed_out", (json_int_t)a->timed_out,
	    "limited", (json_int_t)a->limited, "remembered", (json_int_t)a->remembered_n, "coalesced",
	    (json_int_t)a->coalesced, "grant_failed", (json_int_t)a->grant_failed, "ended",
	    (json_int_t)a->ended, "recorded", (json_int_t)a->recorded, "not_recorded",
	    (json_int_t)a->not_recorded, "kinds", "fs.read", (json_int_t)a->reads, "fs.write",
	    (json_int_t)a->writes, "net.connect", (json_int_t)a->nets, "passed", (json_int_t)a->passed,
	    "timeout_ms", (json_int_t)a->o.timeout_ms);
}

void berth_ask_free(struct berth_ask *a)
{
	if (a == NULL)
		return;
	berth_ask_stop(a);
	if (a->root_fd >= 0)
		close(a->root_fd);
	if (a->ro_root_fd >= 0)
		close(a->ro_root_fd);
	if (a->wake[0] >= 0) {
		close(a->wake[0]);
		close(a->wake[1]);
	}
	pthread_mutex_destroy(&a->mu);
	free(a->mem);
	free(a);
}

int berth_ask_request(const char *ctl_dir, const char *request, char *reply, size_t size,
		      struct berth_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {5, 0};
	struct stat st;
	char path[PATH_MAX];
	size_t got = 0;
	int fd, n = snprintf(path, sizeof path, "%s/%s", ctl_dir, BERTH_ASK_SOCKET);

	if (size > 0)
		reply[0] = '\0';
	if (n < 0 || (size_t)n >= sizeof sa.sun_path)
		return berth_err(err, ENAMETOOLONG, "the control socket's path `%s` is too long", path);
	if (lstat(path, &st) < 0) {
		int e = errno;
		berth_err_status(err, e, e == ENOENT ? 2 : 125, "no --ask control socket `%s`", path);
		return berth_err_hint(err, "the run must be running, started with `berth run --ask`");
	}
	if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid())
		return berth_err(err, EPERM, "`%s` is not a socket of this user's (uid %u): not used", path,
				 (unsigned)geteuid());
	memcpy(sa.sun_path, path, (size_t)n + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return berth_err(err, errno, "socket");
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		int e = errno;
		close(fd);
		berth_err_status(err, e, e == ECONNREFUSED ? 2 : 125, "cannot reach `%s`", path);
		return berth_err_hint(err, "the run has ended");
	}
	if (write(fd, request, strlen(request)) != (ssize_t)strlen(request)) {
		int e = errno;
		close(fd);
		return berth_err(err, e, "cannot send to `%s`", path);
	}
	shutdown(fd, SHUT_WR);
	while (got + 1 < size) {
		ssize_t r = read(fd, reply + got, size - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (size > 0)
		reply[got] = '\0';
	close(fd);
	return 0;
}
