/* SPDX-License-Identifier: MIT */
/*
 * trustscan.h - when a run ends: what the sandbox made or changed that a
 * tool on the host would run or trust, set aside or named
 * (docs/security.md, "The host's trust surface").
 *
 * berth walks every writable root of the guard (guard.h) without following
 * a symbolic link, and looks at each entry whose change time is at or after
 * the run's start (the kernel sets ctime on every change, a rename and a
 * new hard link included; no system call sets it back):
 *  - a file or link at, or below, a read-only trust name (trust.h), at any
 *    depth, is set aside;
 *  - in every git directory (a `.git` directory, the one a `gitdir:` file
 *    names in a writable root, a bare repository by git's rules, modules/
 *    and worktrees/ below them): a hook (but `*.sample`), a config or
 *    config.worktree holding a key outside git's inert list
 *    (berth_git_key_inert), and a commondir naming another repository are
 *    set aside; so are a `.git` link, and a `gitdir:` file naming a
 *    directory outside every writable root;
 *  - the files the repository's config includes and its hooks directory
 *    (the guard's watch list), when changed, are set aside;
 *  - the HEAD of a root's repository that git would no longer accept is set
 *    aside and the HEAD read at the start put back (git would otherwise
 *    stop taking `.git` as the repository and could take a directory the
 *    sandbox shaped as a bare one);
 *  - a named trust name changed, and each repository the sandbox made or
 *    changed, is named.
 * To set aside is to rename in place, in the same directory, to
 * NAME.berth-set-aside (NAME.berth-set-aside.2, ... when taken), with
 * renameat2(2) RENAME_NOREPLACE on an open directory: the host's tools
 * ignore that name, nothing is lost, and `mv` puts it back.
 * Bounded by BERTH_TRUST_SCAN_ENTRIES, _MS and _DEPTH; the report says
 * when a directory was not looked at.
 */
#ifndef BERTH_TRUSTSCAN_H
#define BERTH_TRUSTSCAN_H

#include <stdbool.h>

#include "../policy/policy.h"
#include "../util/error.h"
#include "guard.h"

#define BERTH_TRUST_SCAN_ENTRIES 1000000L
#define BERTH_TRUST_SCAN_MS 1000
#define BERTH_TRUST_SCAN_DEPTH 64
/* Lines of a report kept; the rest are counted. */
#define BERTH_TRUST_REPORT_LINES 32

struct berth_trust_report {
	char *lines[BERTH_TRUST_REPORT_LINES]; /* what was set aside, restored or named, one sentence each */
	int n_lines;
	int n_more;      /* lines past BERTH_TRUST_REPORT_LINES */
	int n_set_aside; /* entries renamed */
	int n_failed;    /* entries berth could not set aside (they stay, and are named) */
	bool
	    incomplete; /* some directory was not looked at: a bound, a path too long, one that cannot be opened */
};

/*
 * berth_trust_scan - after the run of policy @p guarded by @g (its roots,
 * watch list, kept HEADs and start time), set aside and name as above.
 * Safe to call from the janitor after berth died.  Never follows a link;
 * every rename is relative to an open directory.
 * Returns 0 with @out filled (free it with berth_trust_report_free), or -1
 * with @err filled (ENOMEM).
 */
int berth_trust_scan(const struct berth_policy *p, const struct berth_guard *g,
		     struct berth_trust_report *out, struct berth_error *err);

void berth_trust_report_free(struct berth_trust_report *r);

struct berth_journal;

/*
 * berth_trust_journal - name in the run journal @j (util/journal.h; NULL or
 * without a file: nothing) what berth_trust_repair needs when berth and its
 * janitor are both killed before the end-of-run scan: the policy @p's trust
 * lists ("trust-unprotect", "trust-ro", "trust-named" NAME), each root of
 * @g ("trust-root HOST-PATH"; in each value '%' and newline written %25 and
 * %0a) and, last, @g's start ("trust-start
 * SEC.NSEC", CLOCK_REALTIME).  Before the sandbox is built.  Returns 0, or
 * -1 with @err filled (the journal's write error: the run must not start).
 */
int berth_trust_journal(const struct berth_journal *j, const struct berth_policy *p,
			const struct berth_guard *g, struct berth_error *err);

/* What a journal named (the caller's arrays, pointing into its text). */
struct berth_trust_journaled {
	const char *roots[BERTH_GUARD_ROOTS];
	const char *heads[BERTH_GUARD_ROOTS]; /* each root's trust-head (its HEAD at the start), or NULL */
	int n_roots;
	struct timespec started;
	char **unprotect, **guard_ro, **guard_named;
	size_t n_unprotect, n_guard_ro, n_guard_named;
};

/* berth_trust_unescape - a value berth_trust_journal wrote (each '%' and
 * newline as %25 and %0a) back, in place; 0, or -1 for another '%'. */
int berth_trust_unescape(char *s);

/* berth_trust_parse_start - "SEC.NSEC" (NSEC 9 digits, SEC > 0) into @out;
 * 0, or -1 for anything else. */
int berth_trust_parse_start(const char *text, struct timespec *out);

/*
 * berth_trust_repair - the end-of-run scan of a run whose janitor never
 * made it: the guard of @in's roots read again (berth_guard_prepare_scan:
 * what the run left is not refused), its start @in->started and each
 * root's start HEAD @in->heads, then berth_trust_scan.  Returns as that does (and -1,
 * status 2, for no root or more than BERTH_GUARD_ROOTS).
 */
int berth_trust_repair(const struct berth_trust_journaled *in, struct berth_trust_report *out,
		       struct berth_error *err);

/*
 * berth_trust_watch - during the run: an inotify(7) descriptor (IN_CREATE,
 * IN_MOVED_TO) on the git directory of each root's repository that lacked
 * one of the names BERTH_GUARD_MISSING_* covers when the run started:
 * those cannot be bound read-only before they exist, and a host tool that
 * runs git there while the run goes on (an editor's git integration polls
 * `git status`) would take a `commondir` or `config.worktree` the sandbox
 * made at once.  Returns the descriptor (O_NONBLOCK, O_CLOEXEC), or -1
 * when there is nothing to watch or inotify is not available.  @wds
 * receives each root's watch descriptor (-1: none).
 */
int berth_trust_watch(const struct berth_guard *g, int wds[BERTH_GUARD_ROOTS]);

/*
 * berth_trust_watch_events - read what is pending on @fd (from
 * berth_trust_watch) and set aside, at once, each watched name that
 * appeared or changed and that git would take: a commondir naming another
 * repository, a config or config.worktree with a key outside the inert
 * list (the exit scan's rules; the host's git makes none of them in a main
 * repository while it works).  @p: the run's policy (its --unprotect).
 * Lines are added to @out, which must be zeroed before the first call.
 * Never blocks.
 */
void berth_trust_watch_events(int fd, const int wds[BERTH_GUARD_ROOTS], const struct berth_policy *p,
			      const struct berth_guard *g, struct berth_trust_report *out);

#endif
