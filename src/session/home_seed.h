/* SPDX-License-Identifier: MIT */
/*
 * home_seed.h - what an agent profile writes into the agent's $HOME before
 * it starts (docs/sessions.md, "Seeded home"): the profile's `home:` files
 * (settings, onboarding done, trust for /workspace; never a credential) and
 * berth's preamble in the agent's own instructions file (`instructions:`).
 *
 * A fresh tmpfs home gets every file as it is, written by the sandbox
 * (berth_runtime_opts.home_files).  A persistent home (--persist-home) is
 * seeded by berth on the host before the sandbox starts, without clobbering
 * what the agent keeps there: a missing file is created; an existing JSON
 * file gets only the seed's keys it lacks (objects merged key by key, every
 * value already there kept); the instructions file gets berth's block
 * replaced (or put first), the rest of it left alone; any other existing
 * file is left alone.  Nothing is followed through a symbolic link.
 */
#ifndef BERTH_SESSION_HOME_SEED_H
#define BERTH_SESSION_HOME_SEED_H

#include <stdbool.h>
#include <stddef.h>

#include "../policy/policy.h"
#include "../runtime/home_files.h"
#include "../util/error.h"
#include "profile.h"

/* Bounds of an existing file a persistent-home seed reads to merge into. */
#define BERTH_SEED_JSON_MAX (4 * 1024 * 1024)
#define BERTH_SEED_TEXT_MAX (256 * 1024)
/* berth's block in the instructions file. */
#define BERTH_PREAMBLE_BEGIN                                                                                 \
	"<!-- berth:begin (written by berth at every start; edits inside are replaced) -->"
#define BERTH_PREAMBLE_END "<!-- berth:end -->"
/* Allowed hosts the preamble names one by one; more are counted. */
#define BERTH_PREAMBLE_HOSTS 48

enum berth_seed_kind {
	BERTH_SEED_CREATE, /* created when missing, else left alone */
	BERTH_SEED_JSON,   /* created when missing, else missing keys added */
	BERTH_SEED_BLOCK,  /* the instructions file: berth's block replaced or put first */
};

struct berth_seed_file {
	char *path; /* relative to $HOME */
	char *data; /* the whole file, as a fresh home gets it */
	size_t len;
	char *block; /* BERTH_SEED_BLOCK: berth's block alone (with its markers) */
	enum berth_seed_kind kind;
};

struct berth_home_seed {
	struct berth_seed_file *files;
	size_t n;
	struct berth_home_file *view; /* the same files for berth_runtime_opts.home_files */
};

/*
 * berth_home_seed_build - the seed of profile @p for a sandbox of policy
 * @pol (the preamble names its network and allowed hosts; @persistent says
 * whether $HOME is kept).  Returns 0 with @out filled (empty when the
 * profile seeds nothing; release with berth_home_seed_free), or -1 with
 * @err (ENOMEM).
 */
int berth_home_seed_build(const struct berth_profile *p, const struct berth_policy *pol, bool persistent,
			  struct berth_home_seed *out, struct berth_error *err);

/*
 * berth_home_seed_preamble - the preamble block for @pol into a malloc'd
 * string (with its markers and a final newline), or NULL (ENOMEM).
 */
char *berth_home_seed_preamble(const struct berth_policy *pol, bool persistent);

/* A line for the caller to show ("~/.claude.json is a symbolic link ..."). */
typedef void (*berth_seed_note_fn)(void *arg, const char *line);

/*
 * berth_home_seed_persist - seed the persistent home @home_dir (a directory
 * of the caller's) with @s as described above.  Every path is opened one
 * component at a time from @home_dir with O_NOFOLLOW: a symbolic link (or
 * anything but a directory on the way, or a file that is not a regular
 * one, or one too large to merge) is not followed nor changed: that file
 * is skipped and @note told why.  A changed file is written beside itself
 * and renamed over (its mode and owner kept), so a hard link's other names
 * never see the change.  With @dry nothing is written: the notes are those
 * a real pass would give (for berth_spawn_prepare, which creates nothing).
 * Returns 0, or -1 with @err when @home_dir cannot be opened or a write
 * fails (ENOSPC, EIO; status 125).
 */
int berth_home_seed_persist(const struct berth_home_seed *s, const char *home_dir, bool dry,
			    berth_seed_note_fn note, void *arg, struct berth_error *err);

/* berth_home_seed_free - release @s (safe on a zeroed one). */
void berth_home_seed_free(struct berth_home_seed *s);

#endif
