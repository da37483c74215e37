/* SPDX-License-Identifier: MIT */
/*
 * hostpath.h - the host paths `berth run` hands the sandbox (hostpath.c):
 * the workspace, the --ro/--rw sources and their targets, checked when they
 * are named; and two path helpers the session layer shares (fleet files).
 */
#ifndef BERTH_POLICY_HOSTPATH_H
#define BERTH_POLICY_HOSTPATH_H

#include <limits.h>
#include <stdbool.h>

#include "policy.h"

/* berth_path_ancestor_or_same - whether the absolute path @a is @b or an
 * ancestor of it, component by component (`/` is every path's). */
bool berth_path_ancestor_or_same(const char *a, const char *b);

/*
 * berth_path_lexical_abs - @given made absolute from the current directory
 * (physical: getcwd(3)), with `.`, `..` and empty components removed as
 * written, without resolving symbolic links, into @out.  Returns false when
 * the current directory cannot be read or the result is too long.
 */
bool berth_path_lexical_abs(const char *given, char out[PATH_MAX]);

/*
 * berth_hostpath_check - refuse a host path @real (physical; @given as the
 * caller wrote it, named by @what in the message) that is the host root,
 * the caller's home or an ancestor of it, or below /proc, /sys or /dev.
 * Returns 0, or -1 with @err (status 2).
 */
int berth_hostpath_check(const char *what, const char *given, const char *real, struct berth_error *err);

/*
 * berth_hostpath_set_workspace - the workspace @dir: an existing directory
 * the caller can read, passing berth_hostpath_check, not a shared
 * (sticky, world-writable) or runtime directory, holding no unix socket; its
 * physical path into @p->workspace.  Returns 0, or -1 with @err (status 2;
 * ENOMEM).
 */
int berth_hostpath_set_workspace(struct berth_policy *p, const char *dir, struct berth_error *err);

/*
 * berth_hostpath_add_mount - `--ro`/`--rw` (@rw) @arg, `SRC[:/target]`: the
 * source checked like the workspace, the target canonical, not over what
 * berth builds (/proc, /sys, /dev, /workspace, /tmp, /home, `/`) and given
 * once; added to @p->mounts.  @sock (PATH_MAX bytes) gets a unix socket
 * below the source ("" when none): shared on purpose or not, the caller
 * names it as a widening.  Returns 0, or -1 with @err (status 2; ENOMEM).
 */
int berth_hostpath_add_mount(struct berth_policy *p, const char *arg, bool rw, char *sock,
			     struct berth_error *err);

/*
 * berth_hostpath_check_links - refuse a --ro/--rw source of @p named through
 * the workspace that resolves outside it (through a symbolic link in the
 * workspace, which a sandbox may have made).  Call once the workspace is
 * set.  Returns 0, or -1 with @err (status 2) naming the source and target.
 */
int berth_hostpath_check_links(const struct berth_policy *p, struct berth_error *err);

#endif
