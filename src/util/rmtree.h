/* SPDX-License-Identifier: MIT */
/*
 * rmtree.h - remove a directory tree that berth made (a run's evidence copy,
 * src/runtime/runtime.h remove_at_end): rm -rf that makes each directory
 * writable first (the copies' read-only modes are restored to let it go) and
 * never follows a symbolic link.
 */
#ifndef BERTH_UTIL_RMTREE_H
#define BERTH_UTIL_RMTREE_H

#include "error.h"

/*
 * berth_rmtree - remove the directory @path and everything below it (at most
 * 300 levels deep).  @path itself is not followed if it is a link.
 * Returns 0 (also when @path does not exist), or -1 with @err filled:
 * "cannot remove `PATH`: ERRNO" when it cannot be opened, "cannot remove
 * `PATH` (N entries left)" when something stayed.  @what names the tree in
 * the message instead of "`PATH`" when not NULL ("the evidence copy").
 * Async-signal-safe apart from its use of readdir(3): safe in a process
 * forked from a multi-threaded one only if no other thread held the heap.
 */
int berth_rmtree(const char *path, const char *what, struct berth_error *err);

#endif
