/* SPDX-License-Identifier: MIT */
/*
 * runs.c - per-run state directories (runs.h).
 */
#include "runs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"

bool berth_run_id_valid(const char *id)
{
	return id != NULL && strlen(id) == 16 && strspn(id, "0123456789abcdef") == 16;
}

int berth_run_new_id(char id[17], struct berth_error *err)
{
	unsigned char r[8];

	if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
		return berth_err(err, errno, "getrandom");
	for (int i = 0; i < 8; i++)
		snprintf(id + 2 * i, 3, "%02x", r[i]);
	return 0;
}

static int runs_root(char out[PATH_MAX], bool create, struct berth_error *err)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	char base[PATH_MAX];
	int n;

	if (xdg != NULL && xdg[0] == '/')
		n = snprintf(base, PATH_MAX, "%s", xdg);
	else if (home != NULL && home[0] == '/')
		n = snprintf(base, PATH_MAX, "%s/.local/state", home);
	else
		return berth_usage_err(err, "cannot place run state: neither XDG_STATE_HOME nor HOME is an absolute path");
	if (n < 0 || n >= PATH_MAX - 32)
		return berth_usage_err(err, "the state directory path is too long");
	snprintf(out, PATH_MAX, "%s/berth/runs", base);
	if (!create)
		return 0;
	/* mkdir -p; what berth makes on the way is 0700. */
	for (char *s = out + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(out, 0700) < 0 && errno != EEXIST) {
			int e = errno;
			*s = '/';
			return berth_err(err, e, "cannot create `%s`", out);
		}
		*s = '/';
	}
	if (mkdir(out, 0700) < 0 && errno != EEXIST)
		return berth_err(err, errno, "cannot create `%s`", out);
	return 0;
}

int berth_run_dir(const char *run_id, bool create, char out[PATH_MAX], struct berth_error *err)
{
	char root[PATH_MAX];
	struct stat st;

	if (!berth_run_id_valid(run_id)) {
		berth_usage_err(err, "invalid run id `%s`", run_id != NULL ? run_id : "");
		return berth_err_hint(err, "a run id is 16 lowercase hex digits, as `berth run` prints with --json "
					   "or `berth attest --last` uses");
	}
	if (runs_root(root, create, err) < 0)
		return -1;
	snprintf(out, PATH_MAX, "%s/%s", root, run_id);
	if (create) {
		if (mkdir(out, 0700) < 0 && errno != EEXIST)
			return berth_err(err, errno, "cannot create `%s`", out);
		return 0;
	}
	if (lstat(out, &st) < 0 || !S_ISDIR(st.st_mode)) {
		berth_usage_err(err, "no run `%s` in `%s`", run_id, root);
		err->errnum = ENOENT;
		return berth_err_hint(err, "list the runs there, or use `--last`");
	}
	return 0;
}

static int write_file_atomic(const char *dir, const char *name, const char *data, size_t len, struct berth_error *err)
{
	char tmp[PATH_MAX + 64], dst[PATH_MAX + 64];
	cleanup_close int fd = -1;
	cleanup_close int dfd = -1;

	snprintf(dst, sizeof dst, "%s/%s", dir, name);
	snprintf(tmp, sizeof tmp, "%s/.%s.%d.tmp", dir, name, (int)getpid());
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return berth_err(err, errno, "cannot create `%s`", tmp);
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, data + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = w < 0 ? errno : EIO;
			unlink(tmp);
			return berth_err(err, e, "cannot write `%s`", tmp);
		}
		off += (size_t)w;
	}
	if (fsync(fd) < 0 || rename(tmp, dst) < 0) {
		int e = errno;
		unlink(tmp);
		return berth_err(err, e, "cannot write `%s`", dst);
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		fsync(dfd);
	return 0;
}

int berth_run_write_json(const char *run_id, const char *name, const json_t *v, struct berth_error *err)
{
	char dir[PATH_MAX];
	cleanup_free char *s = NULL;

	if (berth_run_dir(run_id, true, dir, err) < 0)
		return -1;
	s = json_dumps(v, JSON_SORT_KEYS | JSON_INDENT(2));
	if (s == NULL)
		return berth_err(err, ENOMEM, "cannot encode `%s`", name);
	size_t n = strlen(s);
	s[n] = '\n';
	int r = write_file_atomic(dir, name, s, n + 1, err);
	s[n] = '\0';
	return r;
}

json_t *berth_run_read_json(const char *run_id, const char *name, struct berth_error *err)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	json_error_t je;
	json_t *v;

	if (berth_run_dir(run_id, false, dir, err) < 0)
		return NULL;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	v = json_load_file(path, 0, &je);
	if (v == NULL) {
		if (access(path, F_OK) < 0) {
			berth_usage_err(err, "run `%s` has no `%s`", run_id, name);
			berth_err_hint(err, "the run did not get that far (it failed before its command started)");
			return NULL;
		}
		berth_err(err, EINVAL, "`%s`:%d:%d: %s", path, je.line, je.column, je.text);
		return NULL;
	}
	return v;
}

int berth_run_set_last(const char *run_id, struct berth_error *err)
{
	char root[PATH_MAX], line[32];

	if (runs_root(root, true, err) < 0)
		return -1;
	snprintf(line, sizeof line, "%s\n", run_id);
	return write_file_atomic(root, "last", line, strlen(line), err);
}

int berth_run_get_last(char id[17], struct berth_error *err)
{
	char root[PATH_MAX], path[PATH_MAX + 8], line[64] = "";
	cleanup_fclose FILE *f = NULL;

	if (runs_root(root, false, err) < 0)
		return -1;
	snprintf(path, sizeof path, "%s/last", root);
	f = fopen(path, "re");
	if (f == NULL || fgets(line, sizeof line, f) == NULL) {
		berth_usage_err(err, "no run recorded in `%s`", root);
		return berth_err_hint(err, "run something with `berth run` first");
	}
	line[strcspn(line, "\n")] = '\0';
	if (!berth_run_id_valid(line))
		return berth_err(err, EINVAL, "`%s` does not hold a run id", path);
	memcpy(id, line, 17);
	return 0;
}
