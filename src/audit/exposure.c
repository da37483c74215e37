/* SPDX-License-Identifier: MIT */

#include "exposure.h"

#include "../util/rundir.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/*
 * @path as the kernel will reach it: its longest existing prefix resolved
 * (realpath: every symbolic link in it), the components that do not exist
 * yet appended, `.` and `..` among them applied to that.  A directory berth
 * will create (the audit directory on the first run) below a link into the
 * workspace is where it will be, not where its name says.  A dangling
 * symbolic link among the missing components is followed (at most 40, as
 * the kernel does): it is where mkdir would go if its target appeared.
 */
static void physical_at(const char *path, char out[PATH_MAX], int hops)
{
	char pre[PATH_MAX], res[PATH_MAX];
	size_t n;

	if (realpath(path, out) != NULL)
		return;
	snprintf(pre, sizeof pre, "%s", path);
	n = strlen(pre);
	for (;;) {
		while (n > 1 && pre[n - 1] == '/')
			pre[--n] = '\0';
		char *slash = strrchr(pre, '/');
		if (slash == NULL) {
			snprintf(out, PATH_MAX, "%s", path);
			return;
		}
		*slash = '\0';
		n = (size_t)(slash - pre);
		if (realpath(n == 0 ? "/" : pre, res) != NULL)
			break;
	}
	/* res is the physical prefix; path + n is the rest ("/a/b/.."). */
	char rest[PATH_MAX];
	snprintf(rest, sizeof rest, "%s", path + n);
	for (char *save = NULL, *c = strtok_r(rest, "/", &save); c != NULL; c = strtok_r(NULL, "/", &save)) {
		size_t l = strlen(res);
		char link[PATH_MAX], next[PATH_MAX];
		struct stat st;
		ssize_t k;
		if (strcmp(c, ".") == 0)
			continue;
		if (hops < 40 &&
		    (size_t)snprintf(next, sizeof next, "%s/%s", strcmp(res, "/") == 0 ? "" : res, c) <
			sizeof next &&
		    lstat(next, &st) == 0 && S_ISLNK(st.st_mode) &&
		    (k = readlink(next, link, sizeof link - 1)) > 0) {
			/* the link's target, then what is left after it */
			char again[PATH_MAX];
			link[k] = '\0';
			const char *tail = save != NULL ? save : "";
			int m = link[0] == '/' ? snprintf(again, sizeof again, "%s/%s", link, tail)
					       : snprintf(again, sizeof again, "%s/%s/%s", res, link, tail);
			if (m > 0 && (size_t)m < sizeof again) {
				physical_at(again, out, hops + 1);
				return;
			}
		}
		if (strcmp(c, "..") == 0) {
			char *s = strrchr(res, '/');
			if (s != NULL)
				s == res ? (void)(res[1] = '\0') : (void)(*s = '\0');
			continue;
		}
		if (l + 1 + strlen(c) >= sizeof res) {
			snprintf(out, PATH_MAX, "%s", path);
			return;
		}
		snprintf(res + l, sizeof res - l, "%s%s", strcmp(res, "/") == 0 ? "" : "/", c);
	}
	snprintf(out, PATH_MAX, "%s", res);
}

static void physical(const char *path, char out[PATH_MAX])
{
	physical_at(path, out, 0);
}

/* A directory of berth's own that no sandbox may be given. */
struct guarded {
	const char *what;   /* "the audit log" */
	char dir[PATH_MAX]; /* physical */
	bool writable_only; /* refused only in a writable mount */
	bool cover_only;    /* refused only when the mount holds all of it (a part is a sandbox's own) */
};

/* berth's directories, most specific first (the message names the first). */
static int guarded_dirs(struct guarded *g, size_t *n, struct berth_error *err)
{
	char tmp[PATH_MAX];
	struct berth_error ignore = {0};

	*n = 0;
	if (berth_audit_dir(tmp, sizeof tmp, err) < 0)
		return -1;
	g[*n] = (struct guarded){.what = "the audit log"};
	physical(tmp, g[(*n)++].dir);
	if (berth_hostkey_dir(tmp, sizeof tmp, err) < 0)
		return -1;
	g[*n] = (struct guarded){.what = "berth's host key"};
	physical(tmp, g[(*n)++].dir);
	if (berth_trust_state_path(tmp, sizeof tmp) == 0) {
		*strrchr(tmp, '/') = '\0';
		g[*n] = (struct guarded){
		    .what = "berth's record of the directories it trusts (the trust scan's)"};
		physical(tmp, g[(*n)++].dir);
	}
	/* the run records and their evidence copies */
	if (berth_state_path("runs", tmp, sizeof tmp) == 0) {
		g[*n] = (struct guarded){.what = "berth's run records"};
		physical(tmp, g[(*n)++].dir);
	}
	/* the run journals: the next berth kills and removes what they name
	 * (supervisor/orphans.c), and a sandbox holding one's lock makes a dead
	 * run look alive */
	if (berth_state_path("live", tmp, sizeof tmp) == 0) {
		g[*n] = (struct guarded){.what = "berth's run journals"};
		physical(tmp, g[(*n)++].dir);
	}
	/* every session's and app's state at once (one's own part is its
	 * workspace or data: mounted by design) */
	if (berth_state_path("sessions", tmp, sizeof tmp) == 0) {
		g[*n] = (struct guarded){.what = "every agent session's files", .cover_only = true};
		physical(tmp, g[(*n)++].dir);
	}
	if (berth_state_path("apps", tmp, sizeof tmp) == 0) {
		g[*n] = (struct guarded){.what = "every resident app's state", .cover_only = true};
		physical(tmp, g[(*n)++].dir);
	}
	/* --persist-home: signed-in agents' credentials */
	if (berth_state_path("homes", tmp, sizeof tmp) == 0) {
		g[*n] = (struct guarded){.what = "every persistent agent home", .cover_only = true};
		physical(tmp, g[(*n)++].dir);
	}
	/* the control sockets of sessions and `berth dev`: a socket is
	 * connect(2)ed to through a read-only mount too */
	if (berth_runtime_dir(false, tmp, sizeof tmp, &ignore) == 0) {
		g[*n] = (struct guarded){.what = "the control sockets of berth's sessions"};
		physical(tmp, g[(*n)++].dir);
	}
	/* the rules files and profiles the next berth obeys */
	if (berth_config_path("", tmp, sizeof tmp) == 0) {
		g[*n] = (struct guarded){.what = "berth's rules files and profiles", .writable_only = true};
		physical(tmp, g[(*n)++].dir);
	}
	return 0;
}

int berth_audit_exposure_check(const struct berth_policy *p, char *const *extra, size_t n_extra,
			       const char *extra_flag, struct berth_error *err)
{
	struct guarded g[12];
	size_t n_dirs;
	size_t n = 2 + p->n_mounts + n_extra;

	/* berth's own executable: in a writable mount the sandbox would
	 * replace what the host runs as berth next (with root's rights, when
	 * root runs it) */
	char exe[PATH_MAX];
	bool have_exe = realpath("/proc/self/exe", exe) != NULL;

	if (guarded_dirs(g, &n_dirs, err) < 0)
		return -1;
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
		bool writable = i < 2 || (i < 2 + p->n_mounts && p->mounts[i - 2].rw);
		if (writable && have_exe && path_covers(src, exe)) {
			berth_usage_err(err,
					"%s `%s` would let the sandbox replace berth's own executable (`%s`)",
					flag, src, exe);
			return berth_err_hint(err,
					      "install berth outside it (`meson install`, or copy the binary "
					      "elsewhere), or run from a directory that does not contain it");
		}
		for (size_t d = 0; d < n_dirs; d++) {
			if (g[d].writable_only && !writable)
				continue;
			if (path_covers(src, g[d].dir) || (!g[d].cover_only && path_covers(g[d].dir, src))) {
				berth_usage_err(err, "%s `%s` would give the sandbox %s (`%s`)", flag, src,
						g[d].what, g[d].dir);
				return berth_err_hint(
				    err, "run from, or mount, a directory that does not contain `%s`",
				    g[d].dir);
			}
		}
	}
	return 0;
}
