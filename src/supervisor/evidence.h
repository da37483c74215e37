/* SPDX-License-Identifier: MIT */
/*
 * evidence.h - `berth run --evidence PATH`: copy files the sandbox may read
 * but never change or run (docs/security.md, "Evidence").
 *
 * Each PATH (a file or a directory) is copied to DEST/<basename of PATH>.
 * Every regular file is read exactly once: the bytes read are hashed
 * (SHA-256) and written to the copy from the same buffer, so the manifest
 * and the bytes the sandbox sees cannot diverge.  Symbolic links, FIFOs,
 * sockets and device nodes are recorded (type, mode, link target) and
 * skipped; nothing is followed (the directory that holds each PATH is
 * opened with openat2(2) RESOLVE_NO_SYMLINKS, then O_NOFOLLOW, openat(2)
 * below each directory fd).  Copies are 0444, directories 0555 once filled.
 */
#ifndef BERTH_EVIDENCE_H
#define BERTH_EVIDENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "../util/error.h"

/* A file is copied only if this many bytes stay free after it. */
#define BERTH_EVIDENCE_RESERVE_BYTES (64ULL << 20)

/* Above this many bytes, progress lines go to stderr (every this many). */
#define BERTH_EVIDENCE_PROGRESS_BYTES (256ULL << 20)

struct berth_evidence_stats {
	uint64_t files;   /* regular files copied */
	uint64_t bytes;   /* their total size */
	uint64_t skipped; /* symlinks and special files recorded, not copied */
};

/*
 * berth_evidence_ingest - copy @paths[0..n) into @dest (created, 0700; must
 * not exist).  @progress: print `berth: evidence: ...` lines on stderr for
 * large inputs.
 * Returns the manifest: a JSON array sorted by "path" (bytewise) of
 *   {"path":"NAME/sub/file","type":"file","size":N,"mode":"0644","sha256":HEX}
 *   {"path":...,"type":"symlink","mode":"0777","target":"..."}
 *   {"path":...,"type":"dir"|"fifo"|"socket"|"chardev"|"blockdev","mode":...}
 * and fills @st; or NULL with @err filled, and then @dest is removed again:
 *   status 2  two PATHs with the same name (`berth: evidence name `x` is
 *             given twice`), a file that cannot be opened or read (EACCES,
 *             EIO...: the message names it), a PATH with a symbolic link
 *             on the way to it;
 *   125       @dest cannot be created or written (EIO...), or ENOSPC: a
 *             file larger than the free space under @dest less
 *             BERTH_EVIDENCE_RESERVE_BYTES, refused before it is read (the
 *             message names the file, its size and the free space).
 */
json_t *berth_evidence_ingest(char *const *paths, size_t n, const char *dest, bool progress,
			      struct berth_evidence_stats *st, struct berth_error *err);

/*
 * berth_evidence_remove - remove the tree @dest (what ingest made; the
 * copies' modes are restored to let it go).  Returns 0, or -1 with @err
 * filled (what could not be removed).
 */
int berth_evidence_remove(const char *dest, struct berth_error *err);

#endif
