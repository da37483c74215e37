/* SPDX-License-Identifier: MIT */
/*
 * sys.h - small system-call helpers written once: monotonic clocks, closing
 * every descriptor but two, writing a file whole or not at all.
 */
#ifndef BERTH_SYS_H
#define BERTH_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

/* berth_now_ms, berth_now_us - CLOCK_MONOTONIC in milliseconds, microseconds. */
int64_t berth_now_ms(void);
int64_t berth_now_us(void);

/*
 * berth_close_all_but - close every descriptor >= 3 except @a and @b (either
 * may be -1), with close_range(2).  For a child about to run other code;
 * errors are ignored (a kernel without close_range leaves them open).
 */
void berth_close_all_but(int a, int b);

/* berth_write_atomic flags */
#define BERTH_WRITE_SYNC 0x1 /* fsync(2) before the rename: durable, not only whole */

/*
 * berth_write_atomic - write @len bytes at @data as @path, mode @mode: into
 * a temporary `.NAME.PID.tmp` beside it (O_EXCL, O_NOFOLLOW), then
 * rename(2), so that readers see the old file or the new one, never a part.
 * Returns 0, or -1 with @err filled ("cannot create/write `PATH`" with the
 * errno); no temporary file remains.
 */
int berth_write_atomic(const char *path, const void *data, size_t len, mode_t mode, unsigned flags,
		       struct berth_error *err);

#endif
