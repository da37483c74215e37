/* SPDX-License-Identifier: MIT */
/*
 * sys.c - see sys.h.
 */
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"

int64_t berth_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int64_t berth_now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

void berth_close_all_except(const int *keep_in, size_t n)
{
	int keep[8];
	unsigned from = 3;

	if (n > 8)
		n = 8;
	for (size_t i = 0; i < n; i++) { /* sorted, by insertion */
		size_t k = i;
		for (; k > 0 && keep[k - 1] > keep_in[i]; k--)
			keep[k] = keep[k - 1];
		keep[k] = keep_in[i];
	}
	for (size_t i = 0; i < n; i++) {
		if (keep[i] < (int)from)
			continue;
		if ((unsigned)keep[i] > from)
			syscall(SYS_close_range, from, (unsigned)keep[i] - 1, 0);
		from = (unsigned)keep[i] + 1;
	}
	syscall(SYS_close_range, from, ~0U, 0);
}

void berth_close_all_but(int a, int b)
{
	int keep[2] = {a, b};

	berth_close_all_except(keep, 2);
}

bool berth_lock_held(const char *path)
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0)
		return false;
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		flock(fd, LOCK_UN);
		return false;
	}
	return errno == EWOULDBLOCK;
}

#ifdef BERTH_CRASH_POINTS
/*
 * The test build's injected write error (sys.h): BERTH_TEST_WRITE_ERRNO=
 * NAME:ERRNO, ERRNO one of ENOSPC, EDQUOT, EIO, fails the write of every file
 * named NAME with it.  So the full-disk suite can show the EIO and EDQUOT
 * messages, which no tmpfs gives.
 */
static int injected_errno(const char *base)
{
	static const struct {
		const char *name;
		int e;
	} known[] = {{"ENOSPC", ENOSPC}, {"EDQUOT", EDQUOT}, {"EIO", EIO}};
	const char *v = getenv("BERTH_TEST_WRITE_ERRNO"), *colon;
	size_t n = strlen(base);

	if (v == NULL || (colon = strrchr(v, ':')) == NULL || (size_t)(colon - v) != n ||
	    strncmp(v, base, n) != 0)
		return 0;
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (strcmp(colon + 1, known[i].name) == 0)
			return known[i].e;
	return 0;
}
#else
static int injected_errno(const char *base)
{
	(void)base;
	return 0;
}
#endif

/* fsync(2) the directory that holds @name (relative to @dfd). */
static int sync_dir(int dfd, const char *name)
{
	const char *slash = strrchr(name, '/');
	char dir[PATH_MAX];
	cleanup_close int fd = -1;

	if (slash == NULL)
		fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	else {
		snprintf(dir, sizeof dir, "%.*s", slash == name ? 1 : (int)(slash - name), name);
		fd = openat(dfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (fd < 0)
		return -1;
	/* EINVAL: a file system whose directories cannot be synced (some FUSE
	 * ones): the rename is done, all that fsync could add is not there */
	if (fsync(fd) < 0 && errno != EINVAL)
		return -1;
	return 0;
}

static int write_all(int fd, const void *data, size_t len)
{
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, (const char *)data + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		off += (size_t)w;
	}
	return 0;
}

int berth_write_atomic_at(int dfd, const char *name, const char *shown, const void *data, size_t len,
			  mode_t mode, unsigned flags, struct berth_error *err)
{
	const char *slash = strrchr(name, '/'), *base = slash != NULL ? slash + 1 : name;
	char tmp[PATH_MAX + 64];
	cleanup_close int fd = -1;
	int n, e = 0;

	if (shown == NULL)
		shown = name;
	n = snprintf(tmp, sizeof tmp, "%.*s.%s.%d.tmp", (int)(base - name), name, base, (int)getpid());
	if (n < 0 || (size_t)n >= sizeof tmp)
		return berth_err(err, ENAMETOOLONG, "cannot write `%s`", shown);
	unlinkat(dfd, tmp, 0); /* left by a process of the same pid that died */
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0)
		return berth_err(err, errno, "cannot write `%s`", shown);
	if ((flags & BERTH_WRITE_MODE) && fchmod(fd, mode) < 0)
		e = errno;
	else if ((e = injected_errno(base)) != 0 || write_all(fd, data, len) < 0)
		e = e != 0 ? e : errno;
	else if ((flags & (BERTH_WRITE_SYNC | BERTH_WRITE_SYNC_DIR)) && fsync(fd) < 0)
		e = errno;
	/* close(2) reports what NFS and some others keep until then */
	else if (close(fd) < 0) {
		fd = -1;
		e = errno;
	} else
		fd = -1;
	if (e == 0 && (flags & BERTH_WRITE_EXCL)) {
		/* link(2), not rename(2): when two processes create @name at
		 * once, exactly one wins; the other hears EEXIST */
		if (linkat(dfd, tmp, dfd, name, 0) < 0)
			e = errno;
		unlinkat(dfd, tmp, 0);
		if (e == EEXIST)
			return 1;
	} else if (e == 0 && renameat(dfd, tmp, dfd, name) < 0)
		e = errno;
	if (e != 0) {
		unlinkat(dfd, tmp, 0);
		return berth_err(err, e, "cannot write `%s`", shown);
	}
	if ((flags & BERTH_WRITE_SYNC_DIR) && sync_dir(dfd, name) < 0)
		return berth_err(err, errno, "cannot write `%s` (syncing its directory)", shown);
	return 0;
}

int berth_write_atomic(const char *path, const void *data, size_t len, mode_t mode, unsigned flags,
		       struct berth_error *err)
{
	return berth_write_atomic_at(AT_FDCWD, path, path, data, len, mode, flags, err);
}

int berth_block_relay_signals(sigset_t *old, struct berth_error *err)
{
	sigset_t set;
	int fd;

	sigemptyset(&set);
	for (int sig = 1; sig < SIGRTMIN; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && sig != SIGSEGV && sig != SIGBUS && sig != SIGFPE &&
		    sig != SIGILL && sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU && sig != SIGPIPE)
			sigaddset(&set, sig);
	if (sigprocmask(SIG_BLOCK, &set, old) < 0)
		return berth_err(err, errno, "sigprocmask");
	fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		return berth_err(err, errno, "signalfd");
	return fd;
}
