/* SPDX-License-Identifier: MIT */
/*
 * cpio.h - the initramfs's archive format: uncompressed "newc" cpio
 * (magic 070701, the format the kernel unpacks into its rootfs,
 * Documentation/driver-api/early-userspace/buffer-format.rst), written so
 * that the same entries always give the same bytes.
 *
 * A header is the 6-byte magic and 13 fields of 8 hex digits (ino, mode,
 * uid, gid, nlink, mtime, filesize, devmajor, devminor, rdevmajor,
 * rdevminor, namesize with its NUL, check), then the name and a NUL padded
 * with NULs so that header and name end on a multiple of 4, then the data
 * padded to a multiple of 4.  The last entry is named `TRAILER!!!`.
 *
 * Reproducible (docs/vm.md, "The initramfs"): the writer sorts the entries
 * by path (strcmp(3) order, so a directory comes before what it holds),
 * owns them 0:0, sets mtime 0, numbers the inodes 1, 2, ... in that order,
 * nlink 1 for a file and 2 for a directory, every device number 0.
 * Nothing of the machine that builds it (owners, times, the order of
 * readdir(3)) reaches the bytes.
 */
#ifndef BERTH_VM_CPIO_H
#define BERTH_VM_CPIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../util/buf.h"
#include "../util/error.h"

/* The largest file a newc header can describe (its filesize is 32 bits). */
#define BERTH_CPIO_FILE_MAX 0xffffffffu
/* The longest path the writer accepts (PATH_MAX less the NUL). */
#define BERTH_CPIO_PATH_MAX 4095

struct berth_cpio_entry {
	const char *path; /* relative to the archive's root: "init", "lib/modules" */
	mode_t mode;      /* S_IFREG or S_IFDIR, and permission bits (at most 07777) */
	const void *data; /* a file's bytes (NULL when @len is 0; ignored for a directory) */
	size_t len;       /* a file's length in bytes, at most BERTH_CPIO_FILE_MAX */
};

/*
 * berth_cpio_path_ok - whether @path may name an entry: not empty, at most
 * BERTH_CPIO_PATH_MAX bytes, no leading or trailing `/`, no empty, `.` or
 * `..` component, no byte below 0x20 nor 0x7f (the archive is unpacked by
 * the guest kernel: a path must not climb out of its root or hide).
 * Returns true or false.  Pure.
 */
bool berth_cpio_path_ok(const char *path);

/*
 * berth_cpio_build - the archive of the @n entries at @in, appended to @out
 * (a struct berth_buf, src/util/buf.h; its earlier bytes are kept).  The
 * entries may come in any order; @in is not changed.  Every entry's parent
 * directory must be an entry of its own (the kernel does not make missing
 * directories).
 * Returns 0, or -1 with @err filled (status BERTH_EXIT_INTERNAL) and @out's
 * length as it was: EINVAL "bad cpio entry path `P`" (berth_cpio_path_ok)
 * or "cpio entry `P` is neither a file nor a directory (mode 0NNN)"; EEXIST
 * "cpio entry `P` appears twice"; ENOENT "the parent directory of cpio
 * entry `P` is not in the archive"; EFBIG "cpio entry `P` is too large
 * (N bytes)"; ENOMEM.
 * Pure apart from allocation.
 */
int berth_cpio_build(const struct berth_cpio_entry *in, size_t n, struct berth_buf *out,
		     struct berth_error *err);

/*
 * An entry as berth_cpio_read() found it: @path points into a copy owned by
 * the reader (valid during the callback only), @data into the archive.
 */
struct berth_cpio_seen {
	const char *path;
	uint32_t ino, mode, uid, gid, nlink, mtime;
	const void *data;
	size_t len;
};

/*
 * berth_cpio_read - walk the newc archive of @len bytes at @buf, calling
 * @fn(@ctx, entry) for each entry before the trailer (the callback returns
 * 0 to go on, or -1 to stop with its own @err).  Strict: every header must
 * have the magic 070701, hex fields, a NUL-terminated name of namesize
 * bytes, zero padding, and the archive must end with the trailer followed
 * only by NUL bytes.  It checks nothing of berth's own rules (order,
 * owners): callers compare what they read.
 * Returns the number of entries, or -1 with @err filled: EINVAL "bad cpio
 * archive at byte N: WHAT", or the callback's error.  Pure.
 */
long berth_cpio_read(const void *buf, size_t len, int (*fn)(void *ctx, const struct berth_cpio_seen *e),
		     void *ctx, struct berth_error *err);

#endif
