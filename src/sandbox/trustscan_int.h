/* SPDX-License-Identifier: MIT */
/*
 * trustscan_int.h - private to src/sandbox/trust*.c: the state of one scan
 * (struct scan) and the helpers one file shares with another.  Nothing else
 * includes it; the interface is trustscan.h.
 *
 * Files, one concern each:
 *   trustscan.c   the exit walk: git directories, trust names, the roots
 *   trustaside.c  setting an entry aside and the report's lines
 *   trustknown.c  the known set: directories that were repositories or
 *                 trust names when an earlier run ended
 *   trustwatch.c  the inotify watch the janitor keeps during the run
 *
 * None of them fails: what cannot be done is said in the report (a line,
 * n_failed, incomplete), running out of memory in @sc->oom.
 */
#ifndef BERTH_SANDBOX_TRUSTSCAN_INT_H
#define BERTH_SANDBOX_TRUSTSCAN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <time.h>

#include "trustscan.h"

#define SET_ASIDE ".berth-set-aside"

struct devino {
	unsigned long long dev, ino;
};

struct scan {
	const struct berth_policy *p;
	const struct berth_guard *g;
	struct timespec since;
	struct timespec deadline; /* CLOCK_MONOTONIC */
	long entries;
	bool stopped;
	bool oom;
	struct berth_trust_report *out;
	const char *root; /* host path of the root being walked */
	/* Directories that were repositories or trust names when the last run
	 * on this root ended (guard.h, `known`), sorted; and those seen now. */
	struct devino *known;
	size_t n_known;
	bool have_known;
	struct devino *seen;
	size_t n_seen, cap_seen;
	/* Known directories found now under a name that is not a repository
	 * nor a trust name: no longer trusted where they go next. */
	struct devino *demoted;
	size_t n_demoted, cap_demoted;
	/* Below a directory that became a repository or a trust name during
	 * this run (a rename of what an earlier run wrote): every entry counts
	 * as changed. */
	bool force;
};

/* berth_ts_changed_since - whether @st changed (its ctime) at or after @t. */
bool berth_ts_changed_since(const struct stat *st, const struct timespec *t);

/* berth_ts_line - add one sentence to the report (counted in n_more past
 * BERTH_TRUST_REPORT_LINES). */
void berth_ts_line(struct scan *sc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* berth_ts_shown - "ROOT/REL/NAME" (@name may be NULL) for messages. */
void berth_ts_shown(const struct scan *sc, const char *rel, const char *name, char *buf, size_t len);

/*
 * berth_ts_set_aside - rename @name in the directory @dfd (root-relative
 * @rel) to NAME.berth-set-aside, or NAME.berth-set-aside-XXXXXXXX when that
 * is taken, and say so with @why and the command that restores it; or say
 * it could not be done (n_failed).
 */
void berth_ts_set_aside(struct scan *sc, int dfd, const char *rel, const char *name, const char *why);

/* berth_ts_set_aside_name - whether @name is one berth_ts_set_aside gives
 * (or an older berth gave). */
bool berth_ts_set_aside_name(const char *name);

/* berth_ts_check_config - the git config file @name in the git directory
 * @gfd, when changed (*@changed set): set aside when it holds a key that
 * would run a program, or one git could not read as before. */
void berth_ts_check_config(struct scan *sc, int gfd, const char *rel, const char *name, bool *changed);

/* berth_ts_demote - the directory @st is neither a repository nor a trust
 * name here: if it was one when an earlier run ended, it is not any more. */
void berth_ts_demote(struct scan *sc, const struct stat *st);

/* berth_ts_appeared - record the directory @st as a repository or trust
 * name seen now; true when it was not one when the last run here ended and
 * changed since (renamed into place in this run). */
bool berth_ts_appeared(struct scan *sc, const struct stat *st);

/* berth_ts_load_known - the known set at @path (NULL or absent: none, and
 * nothing is forced) into @sc. */
void berth_ts_load_known(struct scan *sc, const char *path);

/* berth_ts_save_known - add what @sc saw to the known set at @path. */
void berth_ts_save_known(struct scan *sc, const char *path);

#endif
