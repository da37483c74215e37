/* SPDX-License-Identifier: MIT */
/*
 * sys.h - small system-call helpers written once: monotonic clocks, closing
 * every descriptor but two, writing a file whole or not at all.
 */
#ifndef BERTH_SYS_H
#define BERTH_SYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <signal.h>

#include "error.h"

/*
 * berth_block_relay_signals - block the signals a runtime relays to its
 * command (every signal below SIGRTMIN but SIGKILL, SIGSTOP, the faults
 * SIGSEGV/SIGBUS/SIGFPE/SIGILL, the job-control stops SIGTSTP/SIGTTIN/SIGTTOU
 * and SIGPIPE) and return a non-blocking, close-on-exec signalfd(2) of
 * them; the mask before is stored in *@old.  Returns the descriptor, or -1
 * with @err filled (errno of sigprocmask(2) or signalfd(2)).
 */
int berth_block_relay_signals(sigset_t *old, struct berth_error *err);

/* berth_now_ms, berth_now_us - CLOCK_MONOTONIC in milliseconds, microseconds. */
int64_t berth_now_ms(void);
int64_t berth_now_us(void);

/*
 * berth_close_all_but - close every descriptor >= 3 except @a and @b (either
 * may be -1), with close_range(2).  For a child about to run other code;
 * errors are ignored (a kernel without close_range leaves them open).
 */
void berth_close_all_but(int a, int b);

/*
 * berth_close_all_except - close every descriptor >= 3 except the @n ones in
 * @keep (any may be -1; @n at most 8), as berth_close_all_but().
 */
void berth_close_all_except(const int *keep, size_t n);

/*
 * berth_lock_held - whether another open file description holds a flock(2)
 * lock on @path (a lock file whose holder is alive: a run's journal, a
 * session's lock).  Opened read-only, never through a symbolic link, and
 * O_NONBLOCK (a FIFO put there must not block the caller).  Returns false
 * when @path cannot be opened or nobody holds it.
 */
bool berth_lock_held(const char *path);

/* berth_write_atomic flags */
#define BERTH_WRITE_SYNC 0x1 /* fsync(2) the file before the rename: its bytes are durable */
#define BERTH_WRITE_SYNC_DIR                                                                                 \
	0x2                  /* also fsync(2) the file, and its directory after the rename:
				    the new name is durable too (state files) */
#define BERTH_WRITE_EXCL 0x4 /* create @path only if no such name exists (link(2), not rename(2)) */
#define BERTH_WRITE_MODE 0x8 /* fchmod(2) to @mode: exactly @mode, not less the umask */
#define BERTH_WRITE_DURABLE (BERTH_WRITE_SYNC | BERTH_WRITE_SYNC_DIR)

/*
 * berth_write_atomic_at - write @len bytes at @data as @name (relative to
 * the directory @dfd, or AT_FDCWD), mode @mode (less the umask unless
 * BERTH_WRITE_MODE): into a temporary `.NAME.PID.tmp` beside it (O_EXCL,
 * O_NOFOLLOW), then rename(2) (or with BERTH_WRITE_EXCL link(2)) onto
 * @name, so that readers see the old file or the new one, never a part, and
 * no empty file stands while it is written.  @flags: the BERTH_WRITE_* above.
 * @shown is how messages name the file (NULL: @name), e.g. `~/.bashrc`.
 * Returns 0; 1 with BERTH_WRITE_EXCL when @name exists (nothing written,
 * @err untouched); or -1 with @err filled as "cannot write `SHOWN`" and the
 * errno of the step that failed (ENOSPC, EDQUOT, EIO: the file system's own
 * word; the temporary file's name is never shown) - "cannot write `SHOWN`
 * (syncing its directory)" when only the directory's fsync(2) failed, the
 * file being in place by then.  Apart from that last case no temporary file
 * remains and @name is as it was.
 *
 * In a `-Dcrash_points=true` build, BERTH_TEST_WRITE_ERRNO=NAME:ERRNO
 * (ERRNO one of ENOSPC, EDQUOT, EIO) fails the write of every file whose
 * last component is NAME with that errno, after the temporary file is made:
 * the tests show the messages no tmpfs gives.
 */
int berth_write_atomic_at(int dfd, const char *name, const char *shown, const void *data, size_t len,
			  mode_t mode, unsigned flags, struct berth_error *err);

/* berth_write_atomic - berth_write_atomic_at(AT_FDCWD, @path, @path, ...). */
int berth_write_atomic(const char *path, const void *data, size_t len, mode_t mode, unsigned flags,
		       struct berth_error *err);

#endif
