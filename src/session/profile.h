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

struct berth_profile {
	char *name;          /* file name without .yml */
	char *path;          /* the file it came from */
	char *description;   /* or NULL */
	char *agent;         /* state-classifier patterns (default: the name) */
	char **command;      /* NULL-terminated, at least one word */
	size_t n_command;
	enum berth_prompt_mode prompt;
	char *network;       /* none, proxy, api-only, host; NULL: berth run's default */
	char **allow_hosts;  /* NULL-terminated */
	size_t n_allow_hosts;
	char **options;      /* further `berth run` options, NULL-terminated */
	size_t n_options;
	char **env;          /* NAME or NAME=VALUE, NULL-terminated */
	size_t n_env;
	char **credentials;  /* variable names --seed-auth may forward */
	size_t n_credentials;
	bool persist_home;   /* default of --persist-home */
	char *git_name, *git_email;
};

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
