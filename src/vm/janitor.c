/* SPDX-License-Identifier: MIT */
/*
 * janitor.c - step 2 of the vm runtime (vm_int.h): qemu and virtiofsd die
 * with berth, and the run directory goes, even when berth is killed with
 * SIGKILL.  PR_SET_PDEATHSIG alone does not promise it: it fires when the
 * THREAD that forked them ends, and berth's death is not the only end.
 *
 * As the namespace runtime's (src/sandbox/spawn_janitor.c): a copy of
 * berth, in a session of its own, holding only its pipe from berth and the
 * run journal's lock.  Berth sends it each child's pid as soon as it is
 * forked (the janitor opens a pidfd of it at once: the pid is berth's live,
 * unreaped child then, so the pidfd is that process), and 'D' once it has
 * cleaned up itself.  End of file without 'D': berth is gone; the janitor
 * SIGKILLs every process it holds a pidfd of, waits for them, and removes
 * the run directory and the run's remove_at_end paths.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/journal.h"
#include "../util/rmtree.h"
#include "../util/sys.h"
#include "vm_int.h"

#define JANITOR_PIDS 4

static _Noreturn void janitor_main(const struct vm_rt *vm, int rfd)
{
	int pfd[JANITOR_PIDS];
	size_t n = 0;

	setsid();
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	{
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		int keep[2] = {rfd, vm->o->journal != NULL ? vm->o->journal->fd : -1};
		berth_close_all_except(keep, 2);
	}
	for (;;) {
		char c;
		pid_t pid;
		ssize_t r = read(rfd, &c, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break; /* berth is gone */
		if (c == 'D')
			_exit(0);
		if (c != 'P' || read(rfd, &pid, sizeof pid) != (ssize_t)sizeof pid)
			break;
		if (n < JANITOR_PIDS && (pfd[n] = (int)syscall(SYS_pidfd_open, pid, 0)) >= 0)
			n++;
	}
	for (size_t i = 0; i < n; i++)
		syscall(SYS_pidfd_send_signal, pfd[i], SIGKILL, NULL, 0);
	for (size_t i = 0; i < n; i++) {
		struct pollfd p = {.fd = pfd[i], .events = POLLIN};
		poll(&p, 1, 5000);
	}
	if (vm->dir[0] != '\0') {
		struct berth_error e = {0};
		berth_rmtree(vm->dir, NULL, &e);
	}
	for (size_t i = 0; i < vm->o->n_remove_at_end; i++) {
		struct berth_error e = {0};
		if (vm->o->remove_at_end[i] != NULL)
			berth_rmtree(vm->o->remove_at_end[i], NULL, &e);
	}
	_exit(0);
}

int berth_vm_janitor_start(struct vm_rt *vm, struct berth_error *err)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return berth_err(err, errno, "pipe");
	vm->janitor = fork();
	if (vm->janitor < 0) {
		close(p[0]);
		close(p[1]);
		return berth_err(err, errno, "cannot fork the janitor");
	}
	if (vm->janitor == 0) {
		close(p[1]);
		janitor_main(vm, p[0]);
	}
	close(p[0]);
	vm->janitor_fd = p[1];
	return 0;
}

static void send_bytes(struct vm_rt *vm, const void *b, size_t n)
{
	sigset_t pipe_set, old;

	if (vm->janitor_fd < 0)
		return;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	ssize_t w;
	do
		w = write(vm->janitor_fd, b, n);
	while (w < 0 && errno == EINTR);
	/* the SIGPIPE of an EPIPE (the janitor gone) is this thread's: taken
	 * before the mask comes back */
	if (w < 0 && errno == EPIPE) {
		struct timespec zero = {0, 0};
		while (sigtimedwait(&pipe_set, NULL, &zero) == SIGPIPE)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void berth_vm_janitor_add(struct vm_rt *vm, pid_t pid)
{
	char b[1 + sizeof pid] = {'P'};

	memcpy(b + 1, &pid, sizeof pid);
	send_bytes(vm, b, sizeof b); /* one write, below PIPE_BUF: whole */
}

void berth_vm_janitor_done(struct vm_rt *vm)
{
	send_bytes(vm, "D", 1);
	if (vm->janitor_fd >= 0)
		close(vm->janitor_fd);
	vm->janitor_fd = -1;
	if (vm->janitor > 0)
		while (waitpid(vm->janitor, NULL, 0) < 0 && errno == EINTR)
			;
	vm->janitor = -1;
}
