/* SPDX-License-Identifier: MIT */
/*
 * rundir.c - berth's per-user runtime directory (rundir.h).
 */
#include "rundir.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *berth_home_dir(void)
{
	static __thread char buf[4096];
	const char *home = getenv("HOME");
	struct passwd pw, *res = NULL;
	char tmp[4096];

	if (home != NULL && home[0] == '/')
		return home;
	if (getpwuid_r(getuid(), &pw, tmp, sizeof tmp, &res) != 0 || res == NULL || pw.pw_dir == NULL ||
	    pw.pw_dir[0] != '/')
		return NULL;
	snprintf(buf, sizeof buf, "%s", pw.pw_dir);
	return buf;
}

int berth_home_check(struct berth_error *err)
{
	const char *st = getenv("XDG_STATE_HOME"), *cf = getenv("XDG_CONFIG_HOME");
	const char *env = getenv("HOME"), *home;
	struct stat sb;

	if (st != NULL && st[0] == '/' && cf != NULL && cf[0] == '/')
		return 0;
	home = berth_home_dir();
	if (home == NULL || (stat(home, &sb) == 0 && S_ISDIR(sb.st_mode)))
		return 0;
	if (env != NULL && env[0] == '/')
		berth_usage_err(
		    err,
		    "HOME `%s` is not an existing directory: berth keeps its state and keys under "
		    "the home (~/.local/state/berth, ~/.config/berth) and does not create one",
		    home);
	else
		berth_usage_err(err,
				"the home of uid %u, `%s` (HOME is not set), is not an existing directory: "
				"berth keeps its state and keys under the home and does not create one",
				(unsigned)getuid(), home);
	return berth_err_hint(err, "set HOME to an existing directory, or set both XDG_STATE_HOME and "
				   "XDG_CONFIG_HOME to absolute paths");
}

static bool private_dir_of(const struct stat *st, uid_t uid)
{
	return S_ISDIR(st->st_mode) && st->st_uid == uid && (st->st_mode & 0077) == 0;
}

int berth_runtime_dir(bool create, char *buf, size_t len, struct berth_error *err)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");
	uid_t uid = getuid();
	char logind[64];
	struct stat st;
	int n;

	snprintf(logind, sizeof logind, "/run/user/%u", (unsigned)uid);
	if (rt != NULL && rt[0] == '/')
		n = snprintf(buf, len, "%s/berth", rt);
	else if (lstat(logind, &st) == 0 && private_dir_of(&st, uid))
		n = snprintf(buf, len, "%s/berth", logind);
	else if (uid == 0)
		n = snprintf(buf, len, "/run/berth");
	else
		n = snprintf(buf, len, "/tmp/berth-%u", (unsigned)uid);
	if (n < 0 || (size_t)n >= len)
		return berth_err(err, ENAMETOOLONG, "the runtime directory under `%s` is too long",
				 rt ? rt : "/tmp");
	if (create && mkdir(buf, 0700) < 0 && errno != EEXIST)
		return berth_err(err, errno, "cannot create the runtime directory `%s`", buf);
	if (lstat(buf, &st) < 0) {
		if (errno == ENOENT && !create)
			return 0;
		return berth_err(err, errno, "cannot stat the runtime directory `%s`", buf);
	}
	if (!private_dir_of(&st, uid)) {
		berth_usage_err(err, "`%s` is not a private directory of uid %u: refusing to use it", buf,
				(unsigned)uid);
		return berth_err_hint(
		    err,
		    "remove it if it is yours, or set XDG_RUNTIME_DIR to a directory of yours (mode 0700)");
	}
	return 0;
}

int berth_mkdir_private(const char *path, struct berth_error *err)
{
	struct stat st;

	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return berth_err(err, errno, "cannot create `%s`", path);
	if (lstat(path, &st) < 0)
		return berth_err(err, errno, "cannot stat `%s`", path);
	if (!private_dir_of(&st, getuid()))
		return berth_usage_err(err, "`%s` is not a private directory of uid %u: refusing to use it",
				       path, (unsigned)getuid());
	return 0;
}

int berth_runtime_subdir(const char *sub, bool create, char *buf, size_t len, struct berth_error *err)
{
	char top[PATH_MAX];

	if (berth_runtime_dir(create, top, sizeof top, err) < 0)
		return -1;
	if (snprintf(buf, len, "%s/%s", top, sub) >= (int)len)
		return berth_usage_err(err, "the directory `%s` under `%s` is too long", sub, top);
	return create ? berth_mkdir_private(buf, err) : 0;
}

/* $VAR/berth/SUB when VAR is absolute, else HOME/HOME_REL/berth/SUB (XDG Base Directory Specification). */
static int xdg_path(const char *var, const char *home_rel, const char *sub, char *buf, size_t len)
{
	const char *xdg = getenv(var), *home = berth_home_dir();
	int n;

	if (xdg != NULL && xdg[0] == '/')
		n = snprintf(buf, len, "%s/berth%s%s", xdg, sub[0] ? "/" : "", sub);
	else if (home != NULL)
		n = snprintf(buf, len, "%s/%s/berth%s%s", home, home_rel, sub[0] ? "/" : "", sub);
	else
		return errno = EINVAL, -1;
	if (n < 0 || (size_t)n >= len)
		return errno = ENAMETOOLONG, -1;
	return 0;
}

int berth_state_path(const char *sub, char *buf, size_t len)
{
	return xdg_path("XDG_STATE_HOME", ".local/state", sub, buf, len);
}

int berth_config_path(const char *sub, char *buf, size_t len)
{
	return xdg_path("XDG_CONFIG_HOME", ".config", sub, buf, len);
}

int berth_trust_state_path(char *buf, size_t len)
{
	return berth_state_path("trust/known", buf, len);
}

int berth_mkdir_parents(const char *path, mode_t mode, struct berth_error *err)
{
	char tmp[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof tmp)
		return berth_err(err, ENAMETOOLONG, "path `%s` is too long", path);
	memcpy(tmp, path, n + 1);
	for (char *p = strchr(tmp + 1, '/'); p != NULL; p = strchr(p + 1, '/')) {
		*p = '\0';
		int r = mkdir(tmp, mode);
		if (r < 0 && errno != EEXIST)
			return berth_err(err, errno, "cannot create `%s`", tmp);
		*p = '/';
	}
	return 0;
}

int berth_mkdirs(const char *path, mode_t mode, struct berth_error *err)
{
	struct stat st;

	if (berth_mkdir_parents(path, 0700, err) < 0)
		return -1;
	if (mkdir(path, mode) < 0 && errno != EEXIST)
		return berth_err(err, errno, "cannot create `%s`", path);
	if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return berth_usage_err(err, "`%s` is not a directory", path);
	if ((st.st_mode & 07777) != mode && chmod(path, mode) < 0)
		return berth_err(err, errno, "cannot chmod `%s`", path);
	return 0;
}
