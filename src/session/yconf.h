/* SPDX-License-Identifier: MIT */
/*
 * yconf.h - small YAML configuration files (profiles, fleets) read into
 * util/ynode.h's tree, every error as FILE:LINE:COL: KEY: message.
 */
#ifndef BERTH_SESSION_YCONF_H
#define BERTH_SESSION_YCONF_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/error.h"
#include "../util/ynode.h"

#define BERTH_YCONF_MAX (256 * 1024) /* bytes of one file */
/* Nested collections and nodes of one file: libyaml's scanner is quadratic in
 * the nesting of flow collections (100000 levels take about 30 s), so a file
 * is stopped at the first node past either bound. */
#define BERTH_YCONF_MAX_DEPTH 64
#define BERTH_YCONF_MAX_NODES 20000

/*
 * berth_yconf_load - parse @buf (@len bytes; @display names it in
 * messages) as one YAML document whose root is a mapping.  Aliases, an
 * anchor given twice, NUL bytes, more than one document, files over
 * BERTH_YCONF_MAX bytes, nesting deeper than BERTH_YCONF_MAX_DEPTH and more
 * than BERTH_YCONF_MAX_NODES nodes are refused; tags are ignored.  Returns 0 with *@root
 * set (release with berth_ynode_free), or -1 with @err (status 2; ENOMEM
 * as status 125).
 */
int berth_yconf_load(const char *display, const char *buf, size_t len, struct berth_ynode **root,
		     struct berth_error *err);

/* berth_yconf_read_file - read @path (at most BERTH_YCONF_MAX bytes) into a
 * malloc'd buffer.  Returns it (length in *@len), or NULL with @err. */
char *berth_yconf_read_file(const char *path, size_t *len, struct berth_error *err);

/* berth_yconf_err - fill @err (status 2) with `DISPLAY:LINE:COL: KEY: MSG`
 * at @n (1-based position).  Returns -1. */
int berth_yconf_err(struct berth_error *err, const char *display, const struct berth_ynode *n,
		    const char *key, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* berth_yconf_str - the text of scalar @n, or NULL when it is not a scalar. */
const char *berth_yconf_str(const struct berth_ynode *n);

/* berth_yconf_bool - a `true`/`false` scalar into *@out.  Returns 0 or -1. */
int berth_yconf_bool(const struct berth_ynode *n, bool *out);

/*
 * berth_yconf_strv - a scalar or a list of scalars (each non-empty, no NUL,
 * no newline) into a malloc'd NULL-terminated vector (*@n entries).
 * Returns 0, or -1 with @err at the offending node.  Release with
 * berth_strv_free (util/buf.h).
 */
int berth_yconf_strv(const char *display, const char *key, const struct berth_ynode *n, char ***out,
		     size_t *count, struct berth_error *err);

#endif
