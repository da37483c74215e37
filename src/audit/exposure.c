/* SPDX-License-Identifier: MIT */

#include "exposure.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/sign.h"
#include "audit.h"

/* Is @a equal to @b or one of its ancestors (both absolute, no trailing '/')? */
static bool path_covers(const char *a, const char *b)
{
	size_t n = strlen(a);

	if (strcmp(a, "/") == 0)
		return true;
	return strncmp(a, b, n) == 0 && (b[n] == '\0' || b[n] == '/');
}

/* @path, physical when it exists (realpath), else as given. */
static void physical(const char *path, char out[PATH_MAX])
{
	if (realpath(path, out) == NULL)
		snprintf(out, PATH_MAX, "%s", path);
}

int berth_audit_exposure_check(const struct berth_policy *p, char *const *extra, size_t n_extra,
			       const char *extra_flag, struct berth_error *err)
{
	char audit[PATH_MAX], keys[PATH_MAX], tmp[PATH_MAX];
	const char *what[2] = {"the audit log", "berth's host key"};
	char *dirs[2] = {audit, keys};
	size_t n = 2 + p->n_mounts + n_extra;

	if (berth_audit_dir(tmp, sizeof tmp, err) < 0)
		return -1;
	physical(tmp, audit);
	if (berth_hostkey_dir(tmp, sizeof tmp, err) < 0)
		return -1;
	physical(tmp, keys);
	/* the workspace, the persistent home, every mount's source, every
	 * extra path (a copy of the key is the key) */
	for (size_t i = 0; i < n; i++) {
		char src[PATH_MAX];
		const char *path, *flag;

		if (i == 0) {
			path = p->workspace;
			flag = p->app ? "the app's workspace" : "--workspace";
		} else if (i == 1) {
			path = p->home_dir;
			flag = "the persistent home";
		} else if (i < 2 + p->n_mounts) {
			path = p->mounts[i - 2].src;
			flag = p->app ? "the app directory" : p->mounts[i - 2].rw ? "--rw" : "--ro";
		} else {
			path = extra[i - 2 - p->n_mounts];
			flag = extra_flag != NULL ? extra_flag : "a path";
		}
		if (path == NULL)
			continue;
		physical(path, src);
		for (int d = 0; d < 2; d++)
			if (path_covers(src, dirs[d]) || path_covers(dirs[d], src)) {
				berth_usage_err(err, "%s `%s` would give the sandbox %s (`%s`)", flag, src, what[d],
						dirs[d]);
				return berth_err_hint(err, "run from, or mount, a directory that does not contain `%s`",
						      dirs[d]);
			}
	}
	return 0;
}
