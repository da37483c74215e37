/* SPDX-License-Identifier: MIT */
/*
 * envfile.h - `--env-file FILE`: environment variables for the sandbox,
 * one per line, so that their values never appear on a command line
 * (docs/security.md, "Secrets").
 *
 * Format (a subset of docker's --env-file and of POSIX sh assignments):
 *   - lines end with LF; a CR before it is dropped;
 *   - empty lines, lines of blanks and lines whose first non-blank is `#`
 *     are skipped;
 *   - otherwise `[export ]NAME=VALUE`: blanks before NAME are skipped; NAME
 *     is [A-Za-z_][A-Za-z0-9_]*, immediately followed by `=`; VALUE is the
 *     rest of the line, verbatim; when it starts and ends with the same
 *     quote (`"` or `'`), the two quotes are removed (nothing inside is
 *     interpreted: no escapes, no expansion);
 *   - a NUL byte anywhere, a line without `=`, a bad name, a line longer
 *     than BERTH_ENVFILE_LINE_MAX or a file longer than BERTH_ENVFILE_MAX
 *     is an error naming FILE:LINE.
 * A later assignment of the same NAME replaces an earlier one (as --env).
 */
#ifndef BERTH_ENVFILE_H
#define BERTH_ENVFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/error.h"

#define BERTH_ENVFILE_MAX (1U << 20)       /* bytes */
#define BERTH_ENVFILE_LINE_MAX (64U << 10) /* bytes, without the newline */

/*
 * berth_env_name_valid - whether the @n bytes at @s (not NUL-terminated)
 * are an environment variable's NAME: [A-Za-z_][A-Za-z0-9_]*, not empty.
 * Never fails.
 */
bool berth_env_name_valid(const char *s, size_t n);

/*
 * berth_envfile_parse - parse the @len bytes at @buf (not NUL-terminated)
 * read from @fname (used in messages only), calling @add for each
 * assignment with NUL-terminated copies that are wiped after the call.
 * @add returns 0, or -1 with @err filled (parsing stops).
 * Returns 0, or -1 with @err filled (status 2: "FILE:LINE: what is wrong";
 * the message never contains a value).
 */
int berth_envfile_parse(const char *buf, size_t len, const char *fname,
			int (*add)(void *ctx, const char *name, const char *value, struct berth_error *err),
			void *ctx, struct berth_error *err);

/*
 * berth_envfile_load - read @path (at most BERTH_ENVFILE_MAX bytes; a
 * regular file or a pipe such as <(...)) and parse it as above.  The buffer
 * is wiped before it is freed.  Returns 0, or -1 with @err filled (status
 * 2 for an unreadable file, with the reason).
 */
int berth_envfile_load(const char *path,
		       int (*add)(void *ctx, const char *name, const char *value, struct berth_error *err),
		       void *ctx, struct berth_error *err);

#endif
