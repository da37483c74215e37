/* SPDX-License-Identifier: MIT */
/*
 * spawn_init.c - step 9 of berth_sandbox_run() (spawn.c): pid 1 inside the sandbox, and
 * its degraded-mode stand-in, which kills what the command left behind.
 */

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "../util/cleanup.h"
#include "../util/sys.h"
#include "caps.h"

#include "spawn_int.h"

/*
 * Degraded mode has no pid namespace whose end takes everything with it:
 * pid 1 there is a child subreaper (prctl(2) PR_SET_CHILD_SUBREAPER), so
 * whatever the command leaves behind (`setsid cmd &`, a double fork) is
 * re-parented to it, not to the host's init; once the command is gone, it
 * kills those with SIGKILL and reaps them, again until it has no child left
 * (a dying process's children come to it too).  The list of children is
 * read from /proc (the host's: no mount namespace here).
 */
static void kill_adopted(void)
{
	pid_t self = getpid();

	for (unsigned round = 0; round < 100000; round++) {
		DIR *d = opendir("/proc");
		struct dirent *de;
		unsigned killed = 0;

		while (d != NULL && (de = readdir(d)) != NULL) {
			char buf[512], *rp;
			long pid = strtol(de->d_name, &rp, 10);

			if (*rp != '\0' || pid <= 0)
				continue;
			/* "pid (comm) state ppid ...": rp at the `)` */
			rp = berth_sb_proc_stat(pid, buf, sizeof buf);
			if (rp != NULL && strtol(rp + 3, NULL, 10) == self && kill((pid_t)pid, SIGKILL) == 0)
				killed++;
		}
		if (d != NULL)
			closedir(d);
		/* Reap one (blocking: a killed child takes a moment), then look
		 * again: its own children are ours now. */
		if (waitpid(-1, NULL, killed > 0 ? 0 : WNOHANG) < 0 && errno == ECHILD)
			return;
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
}

/* Step 9: pid 1 inside; reap, forward signals, exit with the command's status. */
static __attribute__((noreturn)) void init_loop(pid_t cmd)
{
	sigset_t set;
	int status = BERTH_EXIT_INTERNAL;
	struct berth_error err;

	sigfillset(&set);
	sigprocmask(SIG_SETMASK, &set, NULL);
	/* pid 1 needs nothing more than wait and kill. */
	berth_caps_drop_all(&err);
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(&set, &si);
		if (sig < 0)
			continue;
		if (sig != SIGCHLD) {
			kill(cmd, sig);
			continue;
		}
		for (;;) {
			int st;
			pid_t w = waitpid(-1, &st, WNOHANG);
			if (w <= 0)
				break;
			if (w != cmd)
				continue;
			status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			/* Everything left in the sandbox dies with pid 1. */
			_exit(status);
		}
	}
}

/* Step 9, after the command's fork: pid 1 keeps no descriptor of berth's (the
 * caller's channels, an app's RPC socket, must follow the command's life, not
 * pid 1's), then reaps until the command's end. */
__attribute__((noreturn)) void berth_sb_pid1(struct sandbox *s, pid_t cmd)
{
	if (s->use_userns)
		berth_close_all_but(-1, -1);
	if (!s->use_userns) {
		/* Not pid 1 of anything: tell berth the command's pid (its process
		 * group, for --timeout), then wait for it. */
		struct msg pm = {.kind = 2};
		pm.err.errnum = cmd;
		berth_sb_send_msg(s->sock[1], &pm, NULL, 0);
		/* As pid 1 does: only the command keeps the socket (sync 3). */
		berth_close_all_but(-1, -1);
		int st = 0;
		for (;;) {
			int w_st;
			pid_t w = waitpid(-1, &w_st, 0);
			if (w == cmd) {
				st = w_st;
				break;
			}
			if (w < 0 && errno != EINTR) /* ECHILD: cannot be, the command is ours */
				break;
		}
		kill_adopted();
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	}
	init_loop(cmd);
}
