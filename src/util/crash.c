/* SPDX-License-Identifier: MIT */
/*
 * crash.c - the crash points of a `-Dcrash_points=true` build (crash.h).
 */
#include "crash.h"

#ifdef BERTH_CRASH_POINTS
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Append "NAME PID\n" to @path with one write(2) (O_APPEND: lines from
 * several processes never interleave).  Errors are ignored: a test that
 * cannot write its log fails on the missing line. */
static void log_point(const char *path, const char *name)
{
	char line[256], digits[16];
	size_t n = 0, nd = 0;
	pid_t pid = getpid();

	for (const char *p = name; *p != '\0' && n < sizeof(line) - 20; p++)
		line[n++] = *p;
	line[n++] = ' ';
	do {
		digits[nd++] = (char)('0' + pid % 10);
		pid /= 10;
	} while (pid > 0 && nd < sizeof(digits));
	while (nd > 0)
		line[n++] = digits[--nd];
	line[n++] = '\n';
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return;
	ssize_t w = write(fd, line, n);
	(void)w;
	close(fd);
}

void berth_crash_point(const char *name)
{
	static atomic_uint hits;
	const char *trace = getenv("BERTH_TEST_CRASH_TRACE");
	const char *at = getenv("BERTH_TEST_CRASH_AT");

	if (trace != NULL && *trace != '\0')
		log_point(trace, name);
	if (at == NULL)
		return;
	size_t len = strlen(name);
	if (strncmp(at, name, len) != 0 || (at[len] != '\0' && at[len] != ':'))
		return;
	unsigned want = 1;
	if (at[len] == ':') {
		want = 0;
		for (const char *p = at + len + 1; *p >= '0' && *p <= '9' && want < 100000; p++)
			want = want * 10 + (unsigned)(*p - '0');
	}
	/* one counter for the process: only the named point is ever counted */
	if (atomic_fetch_add(&hits, 1) + 1 != want)
		return;
	const char *log = getenv("BERTH_TEST_CRASH_LOG");
	if (log != NULL && *log != '\0')
		log_point(log, name);
	kill(getpid(), SIGKILL);
	for (;;)
		pause();
}
#endif
