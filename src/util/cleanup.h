/* SPDX-License-Identifier: MIT */
/*
 * cleanup.h - scope-bound cleanup, used the same way everywhere.
 *
 * Variables with a cleanup attribute must be initialised (NULL, -1).
 * steal_pointer()/steal_fd()/steal_pid() hand ownership out of the scope.
 * (jansson's own json_auto_t releases a json_t * the same way.)
 */
#ifndef BERTH_CLEANUP_H
#define BERTH_CLEANUP_H

#include <errno.h>
#include <signal.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static inline void cleanup_freep(void *p)
{
	free(*(void **)p);
}

static inline void cleanup_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

static inline void cleanup_fclosep(FILE **f)
{
	if (*f != NULL)
		fclose(*f);
}

/* A child that must not outlive the scope: SIGKILLed and reaped (crun's cleanup_pid). */
static inline void cleanup_pidp(pid_t *pid)
{
	if (*pid > 0) {
		int saved = errno;
		kill(*pid, SIGKILL);
		while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
			;
		errno = saved;
	}
}

static inline void cleanup_closedirp(DIR **d)
{
	if (*d != NULL)
		closedir(*d);
}

#define cleanup_free __attribute__((cleanup(cleanup_freep)))
#define cleanup_closedir __attribute__((cleanup(cleanup_closedirp)))
#define cleanup_close __attribute__((cleanup(cleanup_closep)))
#define cleanup_fclose __attribute__((cleanup(cleanup_fclosep)))
#define cleanup_pid __attribute__((cleanup(cleanup_pidp)))

#define steal_pointer(pp)                                                                                    \
	({                                                                                                   \
		__typeof__(*(pp)) _tmp = *(pp);                                                              \
		*(pp) = NULL;                                                                                \
		_tmp;                                                                                        \
	})

static inline int steal_fd(int *fd)
{
	int r = *fd;
	*fd = -1;
	return r;
}

static inline pid_t steal_pid(pid_t *pid)
{
	pid_t r = *pid;
	*pid = -1;
	return r;
}

#define BERTH_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
