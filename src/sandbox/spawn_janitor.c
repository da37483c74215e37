/* SPDX-License-Identifier: MIT */
/*
 * spawn_janitor.c - step 3 of berth_sandbox_run() (spawn.c): the janitor, which cleans up
 * cgroups and sets aside what the sandbox planted if berth is killed; and the process hygiene the janitor
 * and pid 1 share (wiped environment and command line, closed descriptors).
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>

#include "../util/cleanup.h"
#include "../util/journal.h"
#include "../util/rmtree.h"
#include "../util/sys.h"
#include "trustscan.h"

#include "spawn_int.h"

/* ---------------------------------------------------------- 3. janitor */

/*
 * The janitor and pid 1 are copies of berth, not new programs: their
 * /proc/PID/environ (proc(5): the initial environment block, read from the
 * process's memory) would show berth's environment, values of `--env NAME`
 * included.  Neither needs it: wipe their copy (the command gets its own,
 * built in step 2).
 */
void berth_sb_wipe_environment(void)
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
void berth_sb_wipe_cmdline(const char *name)
{
	char buf[2048], *p = berth_sb_proc_stat(0, buf, sizeof buf);
	unsigned long start = 0, end = 0;

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

char *berth_sb_proc_stat(long pid, char *buf, size_t len)
{
	char path[64];
	int fd;
	ssize_t n;

	if (pid == 0)
		snprintf(path, sizeof path, "/proc/self/stat");
	else
		snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	return strrchr(buf, ')'); /* comm may hold spaces and parentheses */
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

/* berth_close_all_but with a third descriptor kept (each may be -1). */
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
	berth_sb_wipe_environment();
	berth_sb_wipe_cmdline("berth-janitor");
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	sigprocmask(SIG_SETMASK, &s->oldmask, NULL);
	/* Hold nothing but the pipes and the run journal (whose lock tells the
	 * next berth that the run is not over until the janitor is done,
	 * util/journal.h): a copy of one of the caller's channels (an app's RPC
	 * socket, either end) would hide an end of file from the app or from
	 * berth. */
	{
		int keep[3] = {rfd, wfd, s->o->journal != NULL ? s->o->journal->fd : -1};
		berth_close_all_except(keep, 3);
	}
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
		ssize_t n = got < sizeof child ? read(rfd, (char *)&child + got, sizeof child - got)
					       : read(rfd, &done, 1);
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
		if (berth_trust_scan(s->p, &s->guard, &r, &e) == 0) {
			berth_trust_report_free(&r);
			/* the next berth need not scan again (orphans.c) */
			berth_journal_note(s->o->journal, "trust-done", "1", &e);
		}
	}
	berth_guard_free(&s->guard);
	/* What lives as long as the run (remove_at_end: `berth run`'s copy
	 * of its evidence) goes with it, berth there or not. */
	for (size_t i = 0; i < s->o->n_remove_at_end; i++) {
		struct berth_error e = {0};
		if (s->o->remove_at_end[i] != NULL)
			berth_rmtree(s->o->remove_at_end[i], NULL, &e);
	}
	_exit(0);
}

ssize_t berth_sb_janitor_send(const struct sandbox *s, const void *buf, size_t n)
{
	sigset_t pipe_set, old;
	struct timespec zero = {0, 0};
	ssize_t w;
	int e;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	do
		w = write(s->janitor_fd, buf, n);
	while (w < 0 && errno == EINTR);
	e = errno;
	/* the SIGPIPE of an EPIPE is this thread's: taken before the mask
	 * comes back */
	if (w < 0 && e == EPIPE)
		while (sigtimedwait(&pipe_set, NULL, &zero) == SIGPIPE)
			;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return w;
}

int berth_sb_start_janitor(struct sandbox *s, struct berth_error *err)
{
	int pfd[2], lfd[2] = {-1, -1};

	s->janitor = -1;
	s->janitor_fd = -1;
	s->janitor_lines = -1;
	if (s->lim.n_dirs == 0 && !s->guard_ready && s->o->n_remove_at_end == 0)
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
