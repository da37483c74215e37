/* SPDX-License-Identifier: MIT */
/*
 * denials.c - the denial stream of one run (denials.h, docs/denials.md).
 */
#include "denials.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../policy/policy.h"
#include "../util/sys.h"
#include "../util/text.h"

#define CANDIDATES 16
/* AUDIT_TRUSTED_APP (libaudit.h): a user message, "trusted app msg -
 * freestyle text"; berth's end-of-run barrier (berth_denials_stop). */
#define AUDIT_TRUSTED_APP_MSG 1121
/* How long the barrier may take (ms). */
#define BARRIER_MS 200

struct distinct {
	struct berth_denial d;
	struct berth_denial_fix f;
	unsigned long long n;
};

struct berth_denials {
	const struct berth_policy *p;
	int fd, stop_pipe[2];
	char why[200];
	bool seen, started;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct berth_audit_queue *(*queue)(void *);
	void *queue_arg;
	/* the join */
	struct {
		uint64_t domain;
		long pid;
	} cand[CANDIDATES];
	int n_cand;
	uint64_t ns_dev, ns_ino;
	bool have_ns, joined, ended;
	char nonce[40]; /* the barrier's text */
	bool barrier_seen;
	uint64_t domain;
	unsigned long long kernel_total;
	/* the tally */
	unsigned long long count, recorded, lost_nl;
	struct distinct dist[BERTH_DENIALS_DISTINCT];
	int n_dist;
	unsigned long long undistinct;
	struct {
		char kind[24];
		unsigned long long n;
	} kinds[16];
	int n_kinds;
};

static int audit_enabled(int fd)
{
	struct {
		struct nlmsghdr h;
		char b[512];
	} m = {.h = {.nlmsg_len = NLMSG_LENGTH(0),
		     .nlmsg_type = AUDIT_GET,
		     .nlmsg_flags = NLM_F_REQUEST,
		     .nlmsg_seq = 1}};
	struct sockaddr_nl k = {.nl_family = AF_NETLINK};
	struct pollfd pf = {.fd = fd, .events = POLLIN};

	if (sendto(fd, &m, m.h.nlmsg_len, 0, (struct sockaddr *)&k, sizeof k) < 0)
		return -errno;
	for (int tries = 0; tries < 4 && poll(&pf, 1, 200) == 1; tries++) {
		ssize_t n = recv(fd, &m, sizeof m, 0);
		if (n < (ssize_t)NLMSG_HDRLEN)
			return -EIO;
		if (m.h.nlmsg_type == AUDIT_GET && n >= (ssize_t)NLMSG_LENGTH(sizeof(uint32_t) * 2))
			return (int)((struct audit_status *)NLMSG_DATA(&m.h))->enabled;
		if (m.h.nlmsg_type == NLMSG_ERROR) {
			struct nlmsgerr *e = NLMSG_DATA(&m.h);
			if (e->error != 0)
				return e->error;
		}
	}
	return -ETIMEDOUT;
}

struct berth_denials *berth_denials_open(const struct berth_policy *p)
{
	struct berth_denials *dn = calloc(1, sizeof *dn);
	struct sockaddr_nl a = {.nl_family = AF_NETLINK, .nl_groups = 1u << (AUDIT_NLGRP_READLOG - 1)};
	int ctl, en, rcv = 4 << 20;

	if (dn == NULL)
		return NULL;
	dn->p = p;
	dn->fd = dn->stop_pipe[0] = dn->stop_pipe[1] = -1;
	pthread_mutex_init(&dn->mu, NULL);
	pthread_cond_init(&dn->cv, NULL);
	ctl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
	if (ctl < 0) {
		snprintf(dn->why, sizeof dn->why, "the kernel has no audit netlink socket (%s)",
			 strerror(errno));
		return dn;
	}
	en = audit_enabled(ctl);
	close(ctl);
	if (en == 0) {
		snprintf(dn->why, sizeof dn->why,
			 "the kernel's audit is off, so Landlock logs nothing (`auditctl -e 1`, or boot with "
			 "audit=1, turns it on)");
		return dn;
	}
	dn->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_AUDIT);
	/* Room for a burst: what overflows is counted (ENOBUFS), not seen. */
	if (dn->fd >= 0 && setsockopt(dn->fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof rcv) < 0)
		(void)setsockopt(dn->fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
	if (dn->fd < 0 || bind(dn->fd, (struct sockaddr *)&a, sizeof a) < 0) {
		int e = errno;
		if (e == EPERM || e == EACCES)
			snprintf(dn->why, sizeof dn->why,
				 "reading the kernel's audit records needs CAP_AUDIT_READ (root)");
		else
			snprintf(dn->why, sizeof dn->why, "cannot read the kernel's audit records (%s)",
				 strerror(e));
		if (dn->fd >= 0)
			close(dn->fd);
		dn->fd = -1;
		return dn;
	}
	if (pipe2(dn->stop_pipe, O_CLOEXEC) < 0) {
		snprintf(dn->why, sizeof dn->why, "pipe: %s", strerror(errno));
		close(dn->fd);
		dn->fd = -1;
		return dn;
	}
	dn->seen = true;
	return dn;
}

bool berth_denials_seen(const struct berth_denials *dn, char *why, size_t len)
{
	if (dn == NULL) {
		snprintf(why, len, "out of memory");
		return false;
	}
	/* Read, and joined to the run: anything less saw none of its records. */
	if (dn->seen && !dn->joined)
		snprintf(why, len, "%s",
			 dn->why[0] != '\0'
			     ? dn->why
			     : "the run's Landlock domain was not identified (no pid namespace of "
			       "its own, or no Landlock)");
	else
		snprintf(why, len, "%s", dn->why);
	return dn->seen && dn->joined;
}

/* ---------------------------------------------------------- the tally */

static void tally_kind(struct berth_denials *dn, const char *kind)
{
	for (int i = 0; i < dn->n_kinds; i++)
		if (strcmp(dn->kinds[i].kind, kind) == 0) {
			dn->kinds[i].n++;
			return;
		}
	if (dn->n_kinds < (int)(sizeof dn->kinds / sizeof dn->kinds[0])) {
		snprintf(dn->kinds[dn->n_kinds].kind, sizeof dn->kinds[0].kind, "%s", kind);
		dn->kinds[dn->n_kinds++].n = 1;
	}
}

static bool same(const struct distinct *x, const struct berth_denial *d, const struct berth_denial_fix *f)
{
	return strcmp(x->f.kind, f->kind) == 0 && strcmp(x->d.blockers, d->blockers) == 0 &&
	       strcmp(x->d.path, d->path) == 0 && strcmp(x->d.addr, d->addr) == 0 && x->d.port == d->port &&
	       strcmp(x->d.exe, d->exe) == 0;
}

static json_t *denial_json(const struct berth_denial *d, const struct berth_denial_fix *f)
{
	json_t *o =
	    json_pack("{s:s, s:s, s:s, s:s, s:s}", "source", "landlock", "kind", f->kind, "blockers",
		      d->blockers, "rule", f->rule, "fix", f->fix[0] != '\0' ? f->fix : "none available");

	if (o == NULL)
		return NULL;
	if (f->fix[0] == '\0')
		json_object_set_new(o, "why", json_string(f->none_why));
	if (d->path[0] != '\0') {
		char c[BERTH_DENIAL_TEXT * 4];
		json_object_set_new(o, "path", json_string(berth_utf8_fix(c, sizeof c, d->path)));
	}
	if (d->addr[0] != '\0')
		json_object_set_new(o, "address", json_string(d->addr));
	if (d->port >= 0)
		json_object_set_new(o, "port", json_integer(d->port));
	if (d->has_syscall) {
		char c[BERTH_DENIAL_TEXT * 4];
		json_object_set_new(o, "syscall", json_integer(d->syscall));
		json_object_set_new(o, "errno", json_integer(d->errnum));
		json_object_set_new(o, "pid", json_integer(d->pid));
		json_object_set_new(o, "exe", json_string(berth_utf8_fix(c, sizeof c, d->exe)));
	}
	return o;
}

static void on_denial(struct berth_denials *dn, const struct berth_denial *d)
{
	struct berth_denial_fix f;
	struct berth_audit_queue *q;
	bool record;

	berth_denial_explain(d, dn->p, &f);
	pthread_mutex_lock(&dn->mu);
	dn->count++;
	tally_kind(dn, f.kind);
	int i = 0;
	for (; i < dn->n_dist && !same(&dn->dist[i], d, &f); i++)
		;
	if (i < dn->n_dist)
		dn->dist[i].n++;
	else if (dn->n_dist < BERTH_DENIALS_DISTINCT)
		dn->dist[dn->n_dist++] = (struct distinct){.d = *d, .f = f, .n = 1};
	else
		dn->undistinct++;
	record = dn->recorded < BERTH_DENIALS_RECORDED;
	if (record)
		dn->recorded++;
	pthread_mutex_unlock(&dn->mu);
	if (record && dn->queue != NULL && (q = dn->queue(dn->queue_arg)) != NULL) {
		struct berth_error err = {0};
		json_t *o = denial_json(d, &f);
		if (o != NULL)
			berth_audit_queue_push_as(q, "kernel", "denial", o, false, &err);
	}
}

/* ---------------------------------------------------------- the reader */

static bool ns_matches(long pid, uint64_t dev, uint64_t ino)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof path, "/proc/%ld/ns/pid", pid);
	return pid > 0 && stat(path, &st) == 0 && (uint64_t)st.st_dev == dev && (uint64_t)st.st_ino == ino;
}

/* Under dn->mu: a candidate domain's creator in the measured namespace. */
static void try_join(struct berth_denials *dn)
{
	for (int i = 0; !dn->joined && dn->have_ns && i < dn->n_cand; i++)
		if (ns_matches(dn->cand[i].pid, dn->ns_dev, dn->ns_ino)) {
			dn->domain = dn->cand[i].domain;
			dn->joined = true;
			pthread_cond_broadcast(&dn->cv);
		}
}

static void on_event(struct berth_denials *dn, const struct berth_denial_event *ev)
{
	bool ours, probe = false;

	pthread_mutex_lock(&dn->mu);
	if (ev->has_domain && ev->dom.allocated && !dn->joined) {
		if (dn->n_cand < CANDIDATES)
			dn->cand[dn->n_cand++] = (typeof(dn->cand[0])){ev->dom.domain, ev->dom.pid};
		try_join(dn);
		probe = dn->joined && dn->domain == ev->dom.domain;
	}
	if (ev->has_domain && !ev->dom.allocated && dn->joined && ev->dom.domain == dn->domain) {
		/* the probe's is the first of the domain's (denials.h) */
		dn->kernel_total = ev->dom.denials > 0 ? ev->dom.denials - 1 : 0;
		dn->ended = true;
		pthread_cond_broadcast(&dn->cv);
	}
	ours = dn->joined && ev->has_access && ev->d.domain == dn->domain;
	pthread_mutex_unlock(&dn->mu);
	/* The event that names the domain is berth's own probe, before the
	 * command's execve (denials.h): not the command's. */
	if (ours && !probe)
		on_denial(dn, &ev->d);
}

static void *reader_main(void *arg)
{
	struct berth_denials *dn = arg;
	struct berth_denial_asm as = {0};
	struct berth_denial_event ev;
	static __thread char buf[8970 + NLMSG_HDRLEN + 64]; /* MAX_AUDIT_MESSAGE_LENGTH */
	struct pollfd pf[2] = {{.fd = dn->fd, .events = POLLIN}, {.fd = dn->stop_pipe[0], .events = POLLIN}};
	int64_t pending_since = 0;
	unsigned long long pending_serial = 0;

	for (;;) {
		if (poll(pf, 2, 50) < 0 && errno != EINTR)
			break;
		bool stopping = (pf[1].revents & POLLIN) != 0;
		for (;;) {
			ssize_t n = recv(dn->fd, buf, sizeof buf - 1, 0);
			if (n < 0 && errno == ENOBUFS) {
				pthread_mutex_lock(&dn->mu);
				dn->lost_nl++;
				pthread_mutex_unlock(&dn->mu);
				continue;
			}
			if (n < (ssize_t)NLMSG_HDRLEN)
				break;
			struct nlmsghdr *h = (struct nlmsghdr *)buf;
			size_t len = h->nlmsg_len <= (size_t)n ? h->nlmsg_len : (size_t)n;
			if (len < NLMSG_HDRLEN)
				continue;
			if (h->nlmsg_type == AUDIT_TRUSTED_APP_MSG && dn->nonce[0] != '\0' &&
			    memmem(NLMSG_DATA(h), len - NLMSG_HDRLEN, dn->nonce, strlen(dn->nonce)) != NULL) {
				pthread_mutex_lock(&dn->mu);
				dn->barrier_seen = true;
				pthread_cond_broadcast(&dn->cv);
				pthread_mutex_unlock(&dn->mu);
				continue;
			}
			if (berth_denial_feed(&as, h->nlmsg_type, (char *)NLMSG_DATA(h), len - NLMSG_HDRLEN,
					      &ev) == 1)
				on_event(dn, &ev);
		}
		/* The kernel's events without an EOE (no syscall context) end at
		 * the next event: one still pending after 100 ms of a quiet
		 * socket is complete (an event's records come together; flushing
		 * sooner would cut one from its SYSCALL record). */
		if (!as.pending) {
			pending_since = 0;
		} else if (pending_since == 0 || as.ev.serial != pending_serial) {
			pending_since = berth_now_ms();
			pending_serial = as.ev.serial;
		}
		if (as.pending && (stopping || berth_now_ms() - pending_since >= 100)) {
			if (berth_denial_flush(&as, &ev) == 1)
				on_event(dn, &ev);
			pending_since = 0;
		}
		if (stopping)
			break;
	}
	return NULL;
}

void berth_denials_start(struct berth_denials *dn, struct berth_audit_queue *(*queue)(void *), void *arg)
{
	if (dn == NULL || !dn->seen || dn->started)
		return;
	dn->queue = queue;
	dn->queue_arg = arg;
	if (pthread_create(&dn->th, NULL, reader_main, dn) != 0) {
		dn->seen = false;
		snprintf(dn->why, sizeof dn->why,
			 "cannot start the thread that reads the kernel's audit records");
		return;
	}
	dn->started = true;
}

static void deadline(struct timespec *ts, int ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

bool berth_denials_join(struct berth_denials *dn, uint64_t ns_dev, uint64_t ns_ino, bool probed)
{
	struct timespec ts;
	bool ok;

	if (dn == NULL || !dn->started)
		return false;
	deadline(&ts, BERTH_DENIALS_JOIN_MS);
	pthread_mutex_lock(&dn->mu);
	dn->ns_dev = ns_dev;
	dn->ns_ino = ns_ino;
	dn->have_ns = ns_ino != 0;
	try_join(dn);
	while (probed && dn->have_ns && !dn->joined)
		if (pthread_cond_timedwait(&dn->cv, &dn->mu, &ts) == ETIMEDOUT)
			break;
	ok = dn->joined;
	if (!ok && !probed)
		snprintf(dn->why, sizeof dn->why,
			 "Landlock is not in force for this run (its probe was not refused)");
	else if (!ok)
		snprintf(
		    dn->why, sizeof dn->why,
		    "no Landlock domain record of this run arrived within %d ms (the kernel's audit may be "
		    "losing records)",
		    BERTH_DENIALS_JOIN_MS);
	pthread_mutex_unlock(&dn->mu);
	return ok;
}

/*
 * The kernel queues each record when it is made, in order, and one thread
 * (kauditd) sends them: a message berth writes to the audit log now, after
 * the sandbox is gone, comes to the reader after every record the sandbox
 * caused.  One line per run in the host's audit log ("berth: end of the
 * denials of run ..."), against waiting for the domain's deallocation,
 * which the kernel makes after an RCU grace period (20-60 ms here).
 */
static bool barrier(struct berth_denials *dn, const char *run_id)
{
	struct {
		struct nlmsghdr h;
		char b[160];
	} m = {0};
	struct sockaddr_nl k = {.nl_family = AF_NETLINK};
	struct timespec ts;
	unsigned char rnd[8] = {0};
	bool seen;
	int n;

	if (getentropy(rnd, sizeof rnd) < 0)
		return false;
	pthread_mutex_lock(&dn->mu);
	snprintf(dn->nonce, sizeof dn->nonce, "%02x%02x%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2],
		 rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
	pthread_mutex_unlock(&dn->mu);
	n = snprintf(m.b, sizeof m.b, "berth: end of the denials of run %s (%s)", run_id, dn->nonce);
	m.h = (struct nlmsghdr){.nlmsg_len = NLMSG_LENGTH((size_t)n + 1),
				.nlmsg_type = AUDIT_TRUSTED_APP_MSG,
				.nlmsg_flags = NLM_F_REQUEST};
	if (sendto(dn->fd, &m, m.h.nlmsg_len, 0, (struct sockaddr *)&k, sizeof k) < 0)
		return false;
	deadline(&ts, BARRIER_MS);
	pthread_mutex_lock(&dn->mu);
	while (!dn->barrier_seen)
		if (pthread_cond_timedwait(&dn->cv, &dn->mu, &ts) == ETIMEDOUT)
			break;
	seen = dn->barrier_seen;
	pthread_mutex_unlock(&dn->mu);
	return seen;
}

void berth_denials_stop(struct berth_denials *dn, const char *run_id, bool wait_end)
{
	struct timespec ts;
	bool waited = false;

	if (dn == NULL || !dn->started)
		return;
	/* The barrier, or the domain's end when it is asked for (--explain:
	 * the kernel's own total) or the barrier could not be had. */
	if (dn->joined && (wait_end || !barrier(dn, run_id))) {
		deadline(&ts, BERTH_DENIALS_END_MS);
		waited = true;
	}
	pthread_mutex_lock(&dn->mu);
	while (waited && !dn->ended)
		if (pthread_cond_timedwait(&dn->cv, &dn->mu, &ts) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&dn->mu);
	if (write(dn->stop_pipe[1], "x", 1) < 0) {
		/* the thread ends at its next poll anyway: the pipe is closed below */
	}
	pthread_join(dn->th, NULL);
	dn->started = false;
	dn->queue = NULL;
}

/* ---------------------------------------------------------- the end */

json_t *berth_denials_summary(const struct berth_denials *dn, unsigned long long broker_refused)
{
	char why[256];
	bool seen = berth_denials_seen(dn, why, sizeof why);
	json_t *kinds = json_object(), *o;

	if (kinds == NULL || dn == NULL) {
		json_decref(kinds);
		return NULL;
	}
	for (int i = 0; i < dn->n_kinds; i++)
		json_object_set_new(kinds, dn->kinds[i].kind, json_integer((json_int_t)dn->kinds[i].n));
	o = json_pack("{s:s, s:I, s:I, s:I, s:o, s:o, s:I}", "landlock", seen ? "seen" : "not seen", "count",
		      (json_int_t)dn->count, "recorded", (json_int_t)dn->recorded, "not_recorded",
		      (json_int_t)(dn->count - dn->recorded), "kernel_total",
		      dn->ended ? json_integer((json_int_t)dn->kernel_total) : json_null(), "kinds", kinds,
		      "broker_refused", (json_int_t)broker_refused);
	if (o != NULL && !seen)
		json_object_set_new(o, "why", json_string(why));
	if (o != NULL && dn->lost_nl > 0)
		json_object_set_new(o, "lost", json_integer((json_int_t)dn->lost_nl));
	if (o != NULL && dn->ended && dn->kernel_total > dn->count)
		json_object_set_new(o, "not_logged",
				    json_integer((json_int_t)(dn->kernel_total - dn->count)));
	return o;
}

void berth_denials_explain(const struct berth_denials *dn, unsigned long long broker_refused,
			   void (*line)(void *arg, const char *text), void *arg)
{
	char why[256], t[2048], c1[BERTH_DENIAL_TEXT * 4], c2[BERTH_DENIAL_TEXT * 4], brk[64] = "";
	bool seen = berth_denials_seen(dn, why, sizeof why);

	if (dn == NULL)
		return;
	/* The broker's count only where there is a broker. */
	if (dn->p->network == BERTH_NET_PROXY)
		snprintf(brk, sizeof brk, "%llu by the egress broker", broker_refused);
	for (int i = 0; i < dn->n_dist; i++) {
		const struct distinct *x = &dn->dist[i];
		char what[320];
		if (x->d.path[0] != '\0')
			snprintf(what, sizeof what, "%s", berth_text_clean(c1, sizeof c1, x->d.path));
		else if (x->d.addr[0] != '\0' && x->d.port >= 0)
			snprintf(what, sizeof what, "%s port %d", x->d.addr, x->d.port);
		else if (x->d.opid > 0)
			snprintf(what, sizeof what, "pid %ld (%s)", x->d.opid,
				 berth_text_clean(c1, sizeof c1, x->d.ocomm));
		else
			snprintf(what, sizeof what, "-");
		snprintf(t, sizeof t, "denied (%llu): %s %s, by %s (%s%s%s)", x->n, x->f.kind, what,
			 x->f.blocker,
			 x->d.has_syscall ? berth_text_clean(c2, sizeof c2, x->d.exe) : "exe unknown",
			 x->d.errnum > 0 ? ": " : "", x->d.errnum > 0 ? strerrorname_np(x->d.errnum) : "");
		line(arg, t);
		snprintf(t, sizeof t, "  rule: %s", x->f.rule);
		line(arg, t);
		if (x->f.fix[0] != '\0')
			snprintf(t, sizeof t, "  fix: %s", x->f.fix);
		else
			snprintf(t, sizeof t, "  fix: none available: %s", x->f.none_why);
		line(arg, t);
	}
	if (dn->undistinct > 0) {
		snprintf(t, sizeof t, "denied: ... and %llu more of kinds not listed above", dn->undistinct);
		line(arg, t);
	}
	if (seen) {
		int o = snprintf(t, sizeof t, "denials: %llu by Landlock (", dn->count);
		for (int i = 0; i < dn->n_kinds && o < (int)sizeof t; i++)
			o += snprintf(t + o, sizeof t - (size_t)o, "%s%s %llu", i ? ", " : "",
				      dn->kinds[i].kind, dn->kinds[i].n);
		snprintf(t + o, o < (int)sizeof t ? sizeof t - (size_t)o : 0, "%s)%s%s",
			 dn->n_kinds == 0 ? "none" : "", brk[0] != '\0' ? ", " : "", brk);
	} else {
		snprintf(t, sizeof t, "denials: %s%sLandlock's not seen: %s", brk, brk[0] != '\0' ? "; " : "",
			 why);
	}
	line(arg, t);
	/* The domain's own count, from its end: what the kernel refused but
	 * did not log (its audit backlog full, or records lost on the way). */
	if (seen && dn->ended && dn->kernel_total > dn->count) {
		snprintf(
		    t, sizeof t,
		    "denials: the kernel counted %llu Landlock denials for this run: %llu of them were not "
		    "logged or not received (the kernel's audit backlog was full)",
		    dn->kernel_total, dn->kernel_total - dn->count);
		line(arg, t);
	}
	line(arg, "denials: not in this count: refusals of the mount view (EROFS of a read-only or guarded "
		  "path, ENOENT of a path outside the view) and seccomp's errno answers, which the kernel "
		  "does not report (docs/denials.md)");
}

void berth_denials_free(struct berth_denials *dn)
{
	if (dn == NULL)
		return;
	if (dn->fd >= 0)
		close(dn->fd);
	if (dn->stop_pipe[0] >= 0)
		close(dn->stop_pipe[0]);
	if (dn->stop_pipe[1] >= 0)
		close(dn->stop_pipe[1]);
	pthread_mutex_destroy(&dn->mu);
	pthread_cond_destroy(&dn->cv);
	free(dn);
}
