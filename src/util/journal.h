/* SPDX-License-Identifier: MIT */
/*
 * journal.h - the run journal (issue 15, crash consistency): before `berth
 * run` makes anything on the host for a run, it names it in
 * berth_state_path("live")/RUN_ID, a file it holds locked (flock(2),
 * LOCK_EX) for as long as the run lives.  The next berth that finds a
 * journal it can lock knows the run's supervisor is gone and repairs what the
 * journal names (src/supervisor/orphans.c; docs/security.md "When berth is
 * killed").
 *
 * The file is text, one item a line, each line appended with one write(2)
 * before the step it names:
 *   berth-run-journal 1        the format
 *   run RUN_ID                 the run
 *   pid PID                    the supervisor (for the record only: the
 *                              lock, not the pid, says whether it lives)
 *   audit DIR                  the audit log the run's records go to
 *   cgroup PATH                a cgroup directory, before its mkdir(2)
 *   tree PATH                  a tree that lives as long as the run (the
 *                              --evidence copy), before it is made
 *   rundir PATH                the run directory runs/RUN_ID, before its
 *                              mkdir(2)
 *   trust-root PATH, trust-unprotect NAME, trust-ro NAME, trust-named NAME,
 *   trust-start SEC.NSEC       the end-of-run trust scan's input, before
 *                              the sandbox is built (sandbox/trustscan.h,
 *                              berth_trust_journal)
 *   trust-done 1               that scan was done (by berth or its janitor)
 * Not fsync'd: the journal is for a killed process, whose writes the page
 * cache keeps; a power cut also ends every cgroup and process of the run.
 */
#ifndef BERTH_JOURNAL_H
#define BERTH_JOURNAL_H

#include <limits.h>
#include <stdbool.h>

#include "error.h"

struct berth_journal {
	int fd; /* the locked journal, or -1: none (nothing is noted) */
	char path[PATH_MAX];
};

#define BERTH_JOURNAL_NONE                                                                                   \
	{                                                                                                    \
		.fd = -1                                                                                     \
	}

/* The largest journal the sweep reads (bytes); a longer one is left alone. */
#define BERTH_JOURNAL_MAX (64 * 1024)

/*
 * berth_journal_create - make live/@run_id (the directory 0700, the file
 * 0600) for the supervisor of this process, locked, with its first four
 * lines (@audit_dir: the run's audit directory).  It is made as
 * live/.@run_id.tmp, locked, then renamed into place: no other berth sees
 * the journal unlocked.  The temporary is unlocked between its open(2) and
 * flock(2), where a concurrent berth_journal_sweep may take it for a killed
 * berth's and remove it: then it is made again (at most 8 times, then
 * EAGAIN).  Every message names live/@run_id, never the temporary.
 * Returns 0, or -1 with @err filled (no state directory, or a live/ that is
 * not a private directory of this user: status 2; the
 * mkdir(2), open(2), write(2) error); then @j->fd is -1 and nothing is left.
 */
int berth_journal_create(struct berth_journal *j, const char *run_id, const char *audit_dir,
			 struct berth_error *err);

/*
 * berth_journal_note - append "@kind @path\n" to @j with one write(2), before
 * the step that makes @path.  @j NULL or without a file: nothing, 0.
 * Returns 0, or -1 with @err filled (the step must then not be taken).
 */
int berth_journal_note(const struct berth_journal *j, const char *kind, const char *path,
		       struct berth_error *err);

/*
 * berth_journal_done - the run ended and cleaned up after itself: remove
 * the journal, then release its lock.  Safe on a journal never made.
 */
void berth_journal_done(struct berth_journal *j);

/*
 * berth_journal_live - whether live/@run_id exists and its lock is held (the
 * run's supervisor, or its janitor, is alive).  False when there is no such
 * journal or it can be locked (its supervisor is gone).
 */
bool berth_journal_live(const char *run_id);

/*
 * berth_journal_sweep - for each journal in live/ whose lock can be taken
 * (its supervisor is gone), call @repair with the run id and the journal's
 * text (NUL-terminated, at most BERTH_JOURNAL_MAX bytes), the lock held; when
 * @repair returns 0 the journal is removed, else it stays for a later berth.
 * A journal another berth is repairing (locked) or has just removed is
 * skipped, so two berths never repair one run.  Temporary journals
 * (.RUN_ID.tmp) of a supervisor killed while making them are removed.
 * Only a live/ that is a private directory of this user (mode 0700) is
 * read, and in it only journals this user owns: the others are left alone.
 * Returns the number of journals repaired, or -1 with @err filled (live/
 * cannot be read); no live/ at all, or one that is not private, is 0.
 */
int berth_journal_sweep(int (*repair)(const char *run_id, char *text, void *ctx), void *ctx,
			struct berth_error *err);

#endif
