/* SPDX-License-Identifier: MIT */
/*
 * profile.h - agent profiles (docs/sessions.md): what `berth spawn PROFILE`
 * runs and with which defaults.  Built-in profiles are shipped as
 * data/profiles/NAME.yml; a user's $XDG_CONFIG_HOME/berth/profiles/NAME.yml
 * of the same name takes their place.
 */
#ifndef BERTH_SESSION_PROFILE_H
#define BERTH_SESSION_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/error.h"

enum berth_prompt_mode {
	BERTH_PROMPT_ARGV, /* --prompt is the command's last argument */
	BERTH_PROMPT_TYPE, /* --prompt is typed into the terminal, then Enter */
	BERTH_PROMPT_NONE, /* the profile takes no prompt */
};

/* Bounds of a profile's seeded home (`home:`). */
#define BERTH_PROFILE_HOME_FILES 16             /* files */
#define BERTH_PROFILE_HOME_FILE_MAX (64 * 1024) /* bytes of one file */
#define BERTH_PROFILE_HOME_PATH_MAX 200         /* bytes of one relative path */

/* One file of the seeded home: `home: {PATH: CONTENT}`. */
struct berth_profile_file {
	char *path; /* relative to $HOME, checked by berth_profile_home_path_ok */
	char *data;
	size_t len;
};

struct berth_profile {
	char *name;        /* file name without .yml */
	char *path;        /* the file it came from */
	char *description; /* or NULL */
	char *agent;       /* state-classifier patterns (default: the name) */
	char **command;    /* NULL-terminated, at least one word */
	size_t n_command;
	enum berth_prompt_mode prompt;
	char *network;      /* none, proxy, api-only, host; NULL: berth run's default */
	char **allow_hosts; /* NULL-terminated */
	size_t n_allow_hosts;
	char **options; /* further `berth run` options, NULL-terminated */
	size_t n_options;
	char **env; /* NAME or NAME=VALUE, NULL-terminated */
	size_t n_env;
	char **credentials; /* variable names --seed-auth may forward */
	size_t n_credentials;
	bool persist_home; /* default of --persist-home */
	char *git_name, *git_email;
	/* `home:` files written into the agent's $HOME before it starts
	 * (docs/sessions.md, "Seeded home"); a PATH ending in .json holds a
	 * JSON object. */
	struct berth_profile_file *home;
	size_t n_home;
	char *instructions; /* `instructions:` home-relative file for berth's preamble, or NULL */
	char *agent_path;   /* `path:` the agent's program on the host (`~/...` or absolute), or NULL */
};

/*
 * berth_profile_home_path_ok - is @s a path berth may write under $HOME:
 * relative, at most BERTH_PROFILE_HOME_PATH_MAX bytes, its components not
 * empty, `.` or `..`, of printable ASCII but `\`.  Returns true, or false
 * with the reason in @why (@n bytes).
 */
bool berth_profile_home_path_ok(const char *s, char *why, size_t n);

/*
 * berth_profile_parse - read a profile from @buf (@len bytes).  @display
 * names the file in messages (`FILE:LINE:COL: KEY: message`); @name is the
 * profile's name.  Unknown keys, wrong types and bad values are errors.
 * Returns 0 with @p filled (release with berth_profile_free), or -1 with @err
 * (status 2).
 */
int berth_profile_parse(const char *name, const char *display, const char *buf, size_t len,
			struct berth_profile *p, struct berth_error *err);

/*
 * berth_profile_load - find and read profile @name: the user's file, else
 * the shipped one (../data/profiles next to the berth binary, or
 * ../share/berth/profiles).  Returns 0, or -1 with @err (status 2: no such
 * profile, with the places looked at; or the file's first problem).
 */
int berth_profile_load(const char *name, struct berth_profile *p, struct berth_error *err);

/* berth_profile_free - release what @p holds. */
void berth_profile_free(struct berth_profile *p);

/* berth_profile_user_dir - $XDG_CONFIG_HOME/berth/profiles (else
 * ~/.config/berth/profiles) into @buf.  Returns 0 or -1 (no HOME). */
int berth_profile_user_dir(char *buf, size_t len);

#endif
