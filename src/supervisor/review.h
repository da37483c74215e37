/* SPDX-License-Identifier: MIT */
/*
 * review.h - the change set of a `berth run --review` (docs/review.md).
 *
 * The run's /workspace was an overlay over the host's workspace; its upper
 * layer (a tmpfs the sandbox made, src/sandbox/mounts.c) reaches berth as a
 * descriptor at sync 2.  When the run has ended, berth_review_collect()
 * turns that layer into the run's change set, in RUN/review/ (0700, files
 * 0600; RUN is the run's directory, runs.h):
 *   changes.json   {"schema":1, "workspace", "started_ns", "digest",
 *                   "entries":[...]}: one entry per path the run created,
 *                   modified, deleted or chmodded, each with the host's
 *                   copy as the run ended ("base", or null: none) and
 *                   whether that copy changed while the run lasted
 *   blobs/SHA256   each new file's bytes, by content
 *   applied.json   the entries `berth apply` has landed, in order, each
 *                  "OP PATH" (a path can be deleted and created again)
 * The digest ("sha256:<hex>", over the JCS form of the entries) names the
 * change set in the audit trail (run.stop's "review" member; kinds "applied"
 * and "discarded").
 *
 * The host's copy "changed since the run started" when its ctime (which no
 * one can set back) is not before the run's start, or, for a path the host
 * did not have at the end, when its directory's entries changed after the
 * start; `berth apply` refuses such a path, and any path whose host copy is
 * no longer the one recorded (device, inode, size, mtime, ctime).
 */
#ifndef BERTH_SUPERVISOR_REVIEW_H
#define BERTH_SUPERVISOR_REVIEW_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include "../policy/policy.h"
#include "../util/error.h"

/* Exit status of `berth apply` when it refused or held back a path (each named). */
#define BERTH_REVIEW_EXIT_REFUSED 1

/*
 * berth_review_clock - the run's start for berth_review_collect(): the
 * coarse real-time clock (the one file times come from) right after it
 * ticked, waiting for that tick (at most one, 4 ms at HZ=250): a file
 * changed before the call has a ctime not after it, one changed after it a
 * ctime not before it.  Never fails.
 */
void berth_review_clock(struct timespec *t);

/* What berth_review_collect() found. */
struct berth_review_summary {
	size_t n_entries;           /* paths in the change set */
	size_t n_guarded;           /* of which under a guarded name */
	unsigned long long n_bytes; /* bytes of new file contents */
	char digest[72];            /* "sha256:<hex>" */
	bool full;                  /* the layer had no room left (ENOSPC in the sandbox) */
};

/*
 * berth_review_collect - read the review layer @layer_fd (a descriptor of
 * the tmpfs whose upper/ was the overlay's upper directory; the sandbox is
 * gone) and write RUN/review/ for run @run_id of policy @p (its workspace
 * and guard: paths under a guarded name are marked, trust.h).  @started:
 * CLOCK_REALTIME_COARSE taken before the sandbox was made.  Fills @sum.
 * Returns 0, or -1 with @err filled (ENOSPC on the state directory, a
 * layer that cannot be read); nothing half-written remains then (RUN/review
 * is removed, unless a session's checkpoints made it before: they stay).
 */
int berth_review_collect(const char *run_id, const struct berth_policy *p, int layer_fd,
			 const struct timespec *started, struct berth_review_summary *sum,
			 struct berth_error *err);

/*
 * berth_review_load - RUN/review/changes.json of @run_id, its directory in
 * @dir (PATH_MAX bytes) and, when @applied is not NULL, applied.json's
 * array (an empty one when nothing was applied) in *@applied.  Returns a
 * new reference, or NULL with @err filled: an invalid or unknown run, a run
 * that was not a --review run, a change set discarded (status 2).
 */
json_t *berth_review_load(const char *run_id, char dir[PATH_MAX], json_t **applied, struct berth_error *err);

/*
 * berth_review_selected - whether @path (an entry's, relative) is chosen by
 * @paths (@n of them; each relative to the workspace, or under /workspace/,
 * a leading "./" and trailing "/" ignored): equal to one or below one.
 * @n 0 chooses everything.
 */
bool berth_review_selected(const char *path, char *const *paths, size_t n);

/* The same choice made once for many entries: the PATHs as a set, each
 * entry then checked with its own path and the directories above it
 * (linear in the entries, not entries times PATHs). */
struct berth_review_sel {
	json_t *set; /* the PATHs, normalised, as an object's keys */
	bool all;    /* no PATH, or one that is the whole workspace */
};
/* berth_review_sel_init - @paths/@n as berth_review_selected.  Returns 0,
 * or -1 with @err filled (ENOMEM); berth_review_sel_free() either way. */
int berth_review_sel_init(struct berth_review_sel *sel, char *const *paths, size_t n,
			  struct berth_error *err);
/* berth_review_sel_has - berth_review_selected(@path, ...) of @sel's PATHs. */
bool berth_review_sel_has(const struct berth_review_sel *sel, const char *path);
void berth_review_sel_free(struct berth_review_sel *sel);

/*
 * berth_review_diff - write the change set of @run_id to @out: a unified
 * diff for text (3 lines of context, against the host's copy now), a line
 * for binaries (sizes and SHA-256), modes, symbolic links and deletions;
 * with @json the entries as one JSON object instead.  @paths/@n as
 * berth_review_selected.  Returns 0, or -1 with @err filled
 * (berth_review_load's errors; a blob missing: EIO).
 */
int berth_review_diff(const char *run_id, char *const *paths, size_t n, bool json, FILE *out,
		      struct berth_error *err);

/* Per path, what berth_review_apply() did (its line callback). */
enum berth_review_outcome {
	BERTH_REVIEW_APPLIED = 0,
	BERTH_REVIEW_APPLIED_GUARDED, /* with include_guarded: named */
	BERTH_REVIEW_HELD_BACK,       /* guarded, no include_guarded */
	BERTH_REVIEW_REFUSED,         /* the host's copy changed, or the write failed: @why */
	BERTH_REVIEW_ALREADY,         /* applied by an earlier `berth apply` */
};

struct berth_review_apply_opts {
	char *const *paths; /* as berth_review_selected */
	size_t n_paths;
	bool include_guarded;
	/* called once per chosen path; @why: the reason (refused, held back) or NULL */
	void (*line)(void *arg, enum berth_review_outcome o, const char *path, const char *why);
	void *arg;
};

struct berth_review_apply_result {
	size_t applied, held_back, refused, already;
	json_t *record; /* the "applied" audit payload (new reference), or NULL */
};

/*
 * berth_review_apply - land the chosen entries of @run_id's change set in
 * the host's workspace, each atomically (a file or link is written beside
 * its target under a temporary name, the file system synced once, then
 * renamed over it; a chmod, mkdir or removal is one call), never through a
 * symbolic link (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS from the
 * workspace).  A path whose host copy changed since the run started is
 * refused and named; a guarded one is held back unless include_guarded.
 * Invoked by root, a new file belongs to the workspace's owner and a
 * replaced one keeps its owner, as the run's own writes would; otherwise the
 * caller's.  Fills @res (res->record to append to the audit trail).
 * Returns 0 (some paths may be refused: see @res), or -1 with @err filled
 * (berth_review_load's errors, the workspace gone; a change set whose layer
 * was full when the run ended, status 2: nothing is applied).
 */
int berth_review_apply(const char *run_id, const struct berth_review_apply_opts *o,
		       struct berth_review_apply_result *res, struct berth_error *err);

/*
 * berth_review_discard - remove @run_id's change set (RUN/review); the host's
 * tree is not touched.  *@digest gets the change set's digest (72 bytes).
 * Returns 0, or -1 with @err filled (berth_review_load's errors).
 */
int berth_review_discard(const char *run_id, char digest[72], struct berth_error *err);

/*
 * berth_review_write_json - @v as @dir/@name (@name may hold one directory
 * below @dir), whole or not at all, also across a crash; 0600.  Returns 0,
 * or -1 with @err filled.
 */
int berth_review_write_json(const char *dir, const char *name, const json_t *v, struct berth_error *err);

/* ---- checkpoints: a session's change set after each agent turn */

/* What berth_review_checkpoint() recorded. */
struct berth_review_checkpoint {
	int id;         /* 1, 2, ...; 0 when nothing was recorded (the layer is as at the last one) */
	size_t changed; /* paths whose change differs from the checkpoint before (or the start) */
	struct berth_review_summary sum;
};

/*
 * berth_review_checkpoint - record the change set of the live review layer
 * @layer_fd (the overlay is still mounted: the layer is only read, never
 * changed) as RUN/review/checkpoints/ID.json (as changes.json, with
 * "checkpoint": ID and "time_ns"), its files' bytes in RUN/review/blobs/
 * by content, so that bytes an earlier checkpoint kept are not copied
 * again.  The blobs of all checkpoints together stay within the policy's
 * review_size (ENOSPC otherwise: the checkpoint is not recorded).  A layer
 * whose change set is the last checkpoint's (or, before the first, is
 * empty: the start, checkpoint 0) is not recorded (@cp->id 0).  @started as berth_review_collect.  Returns 0, or -1 with
 * @err filled (no checkpoint file is left then).
 */
int berth_review_checkpoint(const char *run_id, const struct berth_policy *p, int layer_fd,
			    const struct timespec *started, struct berth_review_checkpoint *cp,
			    struct berth_error *err);

/*
 * berth_review_checkpoints - the checkpoints of @run_id, oldest first: an
 * array of {"id", "time_ns", "entries", "changed", "bytes", "digest"}, and
 * in *@current (when not NULL) the digest of the change set as it stands
 * (RUN/review/changes.json; json null before the session ended) and the
 * checkpoint it was rolled back to, if any: {"digest", "checkpoint"}.
 * Returns a new reference, or NULL with @err filled (an unknown run, a
 * discarded change set: status 2).
 */
json_t *berth_review_checkpoints(const char *run_id, json_t **current, struct berth_error *err);

/*
 * berth_review_rollback - make checkpoint @id of @run_id (0: the start,
 * nothing changed) the change set: RUN/review/changes.json becomes that
 * checkpoint's, written whole.  The review layer itself is gone by then
 * (the session ended; the caller refuses a live one).  Refused (status 2)
 * for an unknown checkpoint, and for a change set of which something was
 * applied already (the host's tree holds it: a rollback could not take it
 * back).  *@from gets the digest it replaced ("" when there was none) and
 * *@to the new one (72 bytes each).  Returns 0, or -1 with @err filled.
 */
int berth_review_rollback(const char *run_id, int id, char from[72], char to[72], struct berth_error *err);

#endif
