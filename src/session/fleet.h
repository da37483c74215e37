/* SPDX-License-Identifier: MIT */
/*
 * fleet.h - fleet files (docs/sessions.md): several sessions described in one
 * YAML file, started all or none.
 *
 *   defaults:            # optional: profile, prompt, options, args, seed_auth
 *     profile: shell
 *     options: [--memory, 2G]
 *   agents:              # required, at least one
 *     - name: api        # required, unique, a session name
 *       profile: claude
 *       repo: https://github.com/o/r
 *       workspace: ./dir # relative to the fleet file's directory
 *       prompt: "..."
 *       options: [--allow-host, pypi.org]
 *       args: [--model, x]
 *       seed_auth: false
 */
#ifndef BERTH_SESSION_FLEET_H
#define BERTH_SESSION_FLEET_H

#include <stddef.h>

#include "spawn_args.h"

#define BERTH_FLEET_MAX_AGENTS 256

struct berth_fleet {
	struct berth_spawn_req *agents;
	unsigned long *lines; /* the line of each agent's entry */
	size_t n;
	char *path; /* the file, for messages */
	char *dir;  /* the directory relative workspaces are taken from (physical for a loaded file) */
};

/*
 * berth_fleet_parse - read a fleet from @buf (@len bytes).  @display names
 * the file in messages; relative workspaces are taken from @base_dir.
 * Every problem is `FILE:LINE:COL: KEY: message`.  Returns 0 with @f filled
 * (each agent a spawn request ready for berth_spawn_prepare), or -1 with
 * @err (status 2).  Release with berth_fleet_free in both cases.
 */
int berth_fleet_parse(const char *display, const char *base_dir, const char *buf, size_t len,
		      struct berth_fleet *f, struct berth_error *err);

/* berth_fleet_load - berth_fleet_parse of the file @path. */
int berth_fleet_load(const char *path, struct berth_fleet *f, struct berth_error *err);

/*
 * berth_fleet_asks - what agent @i of @f, already prepared
 * (berth_spawn_prepare), takes from the host because the fleet file says so,
 * beyond its profile: a fleet file may come with a repository, and these
 * need the person's --yes as widenings do (docs/sessions.md, "Fleets").
 * One line each, for people:
 *  - `seed_auth: true`: the profile's credentials are forwarded;
 *  - in `options`: `--env NAME` (a value from the caller's environment),
 *    `--env-file` (values from a host file), `--ro`/`--rw` (a host
 *    directory mounted), `--evidence` (a host file copied in);
 *  - a workspace (`workspace:`, or `--workspace` in `options`) that is not
 *    the fleet file's directory or inside it, compared physically.
 * @env_lookup is the getenv-like function the agent was prepared with.
 * Returns the number of lines put in *@lines (a malloc'd vector of malloc'd
 * strings; free with berth_fleet_asks_free), or -1 with @err (ENOMEM, or an
 * error of the options' parse).
 */
int berth_fleet_asks(const struct berth_fleet *f, size_t i, char *(*env_lookup)(const char *), char ***lines,
		     struct berth_error *err);

/* berth_fleet_asks_free - release @n lines from berth_fleet_asks. */
void berth_fleet_asks_free(char **lines, size_t n);

/* berth_fleet_free - release @f. */
void berth_fleet_free(struct berth_fleet *f);

#endif
