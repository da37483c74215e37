/* SPDX-License-Identifier: MIT */
/*
 * runs.c - per-run state directories (runs.h).
 */
#include "runs.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../audit/audit.h"
#include "../policy/policy.h"
#include "../sandbox/measure.h"
#include "../util/cleanup.h"
#include "../util/rundir.h"
#include "../util/sys.h"
#include "evidence.h"

#ifndef BERTH_VERSION
#define BERTH_VERSION "0.0.0"
#endif

bool berth_run_id_valid(const char *id)
{
	return id != NULL && strlen(id) == 16 && strspn(id, "0123456789abcdef") == 16;
}

static int runs_root(char out[PATH_MAX], bool create, struct berth_error *err)
{
	/* room for "/" and the run id after it */
	if (berth_state_path("runs", out, PATH_MAX - 21) < 0) {
		if (errno == EINVAL)
			return berth_usage_err(
			    err,
			    "cannot place run state: neither XDG_STATE_HOME nor HOME is an absolute path");
		return berth_usage_err(err, "the state directory path is too long");
	}
	return create ? berth_mkdirs(out, 0700, err) : 0;
}

int berth_run_dir(const char *run_id, bool create, char out[PATH_MAX], struct berth_error *err)
{
	char root[PATH_MAX];
	struct stat st;

	if (!berth_run_id_valid(run_id)) {
		berth_usage_err(err, "invalid run id `%s`", run_id != NULL ? run_id : "");
		return berth_err_hint(
		    err, "a run id is 16 lowercase hex digits, as `berth run` prints with --json "
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

/* Not fsync'd: the audit trail is the durable record (docs/attest.md);
 * rename(2) still makes the file appear whole or not at all. */
static int write_file_atomic(const char *dir, const char *name, const char *data, size_t len,
			     struct berth_error *err)
{
	char dst[PATH_MAX + 64];

	snprintf(dst, sizeof dst, "%s/%s", dir, name);
	return berth_write_atomic(dst, data, len, 0600, 0, err);
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
			berth_err_hint(err,
				       "the run did not get that far (it failed before its command started)");
			return NULL;
		}
		berth_err(err, EINVAL, "`%s`:%d:%d: %s", path, je.line, je.column, je.text);
		return NULL;
	}
	return v;
}

/* The caller's login uid (/proc/self/loginuid: set at login, kept across
 * sudo and su), or -1 when it is unset (4294967295) or unknown. */
static long long login_uid(void)
{
	cleanup_fclose FILE *f = fopen("/proc/self/loginuid", "re");
	unsigned long long v;

	if (f == NULL || fscanf(f, "%llu", &v) != 1 || v >= 4294967295ULL)
		return -1;
	return (long long)v;
}

/* runs/last.login-UID of the caller's login, in @name (-1: no login uid). */
static int own_last_name(char name[40])
{
	long long lu = login_uid();

	if (lu < 0)
		return -1;
	snprintf(name, 40, "last.login-%lld", lu);
	return 0;
}

static int set_last_global(const char *run_id, struct berth_error *err)
{
	char root[PATH_MAX], line[32];

	if (runs_root(root, true, err) < 0)
		return -1;
	snprintf(line, sizeof line, "%s\n", run_id);
	return write_file_atomic(root, "last", line, strlen(line), err);
}

int berth_run_set_last(const char *run_id, struct berth_error *err)
{
	char root[PATH_MAX], line[32], own[40];

	if (set_last_global(run_id, err) < 0)
		return -1;
	if (own_last_name(own) < 0 || runs_root(root, true, err) < 0)
		return 0;
	snprintf(line, sizeof line, "%s\n", run_id);
	return write_file_atomic(root, own, line, strlen(line), err);
}

static int read_last(const char *root, const char *name, char id[17], struct berth_error *err)
{
	char path[PATH_MAX + 48], line[64] = "";
	cleanup_fclose FILE *f = NULL;

	snprintf(path, sizeof path, "%s/%s", root, name);
	f = fopen(path, "re");
	if (f == NULL || fgets(line, sizeof line, f) == NULL) {
		berth_usage_err(err, "no run recorded in `%s`", path);
		return berth_err_hint(err, "run something with `berth run` first");
	}
	line[strcspn(line, "\n")] = '\0';
	if (!berth_run_id_valid(line))
		return berth_err(err, EINVAL, "`%s` does not hold a run id", path);
	memcpy(id, line, 17);
	return 0;
}

int berth_run_get_last(char id[17], struct berth_error *err)
{
	char root[PATH_MAX];

	if (runs_root(root, false, err) < 0)
		return -1;
	return read_last(root, "last", id, err);
}

int berth_run_get_last_own(char id[17], struct berth_error *err)
{
	char root[PATH_MAX], own[40];

	if (own_last_name(own) < 0)
		return berth_run_get_last(id, err);
	if (runs_root(root, false, err) < 0)
		return -1;
	if (read_last(root, own, id, err) < 0) {
		berth_err_clear(err);
		berth_usage_err(err, "no run started from your login (login uid %lld) is recorded in `%s`",
				login_uid(), root);
		return berth_err_hint(err,
				      "--last is the last run of your own login (other logins of this user "
				      "share the runs); give the run's id (`berth audit list`)");
	}
	return 0;
}

/* ---------------------------------------------------------- run record */

int berth_run_record_start(const char *run_id, const struct berth_policy *p, const json_t *evidence,
			   struct berth_error *err)
{
	struct utsname u;
	char now[32], digest[65], dig[80];
	cleanup_free char *pj = berth_policy_to_json(p, false, err);
	json_t *policy;
	json_auto_t *run = NULL;
	json_error_t je;
	int r;

	if (pj == NULL || berth_policy_digest(p, digest, err) < 0)
		return -1;
	policy = json_loads(pj, 0, &je);
	if (policy == NULL)
		return berth_err(err, EINVAL, "cannot re-read the policy: %s", je.text);
	uname(&u);
	berth_audit_now_rfc3339(now);
	snprintf(dig, sizeof dig, "sha256:%s", digest);
	run = json_pack("{s:s, s:s, s:s, s:{s:s, s:s}, s:s, s:o, s:s?, s:O?}", "run_id", run_id,
			"berth_version", BERTH_VERSION, "started", now, "host", "kernel", u.release, "arch",
			u.machine, "policy_digest", dig, "policy", policy, "app_digest", p->app_digest,
			"evidence", evidence);
	if (run == NULL)
		return berth_err(err, ENOMEM, "cannot build the run record");
	r = berth_run_write_json(run_id, "run.json", run, err);
	if (r == 0)
		r = berth_run_set_last(run_id, err);
	if (r < 0) {
		/* The command does not start: leave no run directory behind (one
		 * that holds the evidence manifest stays, with its audit record). */
		char dir[PATH_MAX], path[PATH_MAX + 16];
		struct berth_error e = {0};
		if (berth_run_dir(run_id, false, dir, &e) == 0) {
			snprintf(path, sizeof path, "%s/run.json", dir);
			unlink(path);
			rmdir(dir);
		}
	}
	return r;
}

void berth_run_record_discard(const char *run_id, const char *prev_last)
{
	char dir[PATH_MAX], path[PATH_MAX + 32], last[17];
	struct berth_error e = {0};

	if (berth_run_dir(run_id, false, dir, &e) < 0)
		return;
	snprintf(path, sizeof path, "%s/run.json", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/enforced.json", dir);
	unlink(path);
	rmdir(dir);
	/* the login's own `last` names no older run it knows: none beats a wrong one */
	char own[40];
	if (own_last_name(own) == 0 && runs_root(dir, false, &e) == 0 && read_last(dir, own, last, &e) == 0 &&
	    strcmp(last, run_id) == 0) {
		snprintf(path, sizeof path, "%s/%s", dir, own);
		unlink(path);
	}
	berth_err_clear(&e);
	if (berth_run_get_last(last, &e) < 0 || strcmp(last, run_id) != 0)
		return;
	if (prev_last == NULL || !berth_run_id_valid(prev_last) || set_last_global(prev_last, &e) < 0) {
		/* no older run, or no room to name it: no `last` beats a wrong one */
		if (runs_root(dir, false, &e) == 0) {
			snprintf(path, sizeof path, "%s/last", dir);
			unlink(path);
		}
	}
}

int berth_run_record_enforced(const char *run_id, const struct berth_policy *p, const struct berth_measure *m,
			      struct berth_audit *audit, struct berth_error *err)
{
	json_auto_t *e = berth_measure_to_json(m, p, err);
	int r;

	if (e == NULL)
		return -1;
	r = berth_run_write_json(run_id, "enforced.json", e, err);
	if (r == 0 && audit != NULL) {
		r = berth_audit_append(audit, run_id, "enforced", "berth", e, NULL, NULL, err);
		if (r < 0)
			berth_err_wrap(err, "cannot record what is enforced in the audit trail");
	}
	return r;
}

int berth_run_record_end(const char *run_id, int status, struct berth_error *err)
{
	json_auto_t *run = berth_run_read_json(run_id, "run.json", err);
	char now[32];

	if (run == NULL)
		return -1;
	berth_audit_now_rfc3339(now);
	json_object_set_new(run, "ended", json_string(now));
	json_object_set_new(run, "exit_status", json_integer(status));
	return berth_run_write_json(run_id, "run.json", run, err);
}

struct aged {
	char id[17];
	struct timespec t;
};

static int older_first(const void *a, const void *b)
{
	const struct aged *x = a, *y = b;

	if (x->t.tv_sec != y->t.tv_sec)
		return x->t.tv_sec < y->t.tv_sec ? -1 : 1;
	if (x->t.tv_nsec != y->t.tv_nsec)
		return x->t.tv_nsec < y->t.tv_nsec ? -1 : 1;
	return strcmp(x->id, y->id);
}

int berth_run_prune(unsigned long keep, struct berth_error *err)
{
	char root[PATH_MAX];
	struct stat st;
	struct aged *v = NULL;
	size_t n = 0, cap = 0;
	DIR *d;
	struct dirent *de;
	int removed = 0;

	if (keep == 0 || runs_root(root, false, err) < 0)
		return keep == 0 ? 0 : -1;
	if (stat(root, &st) < 0)
		return 0;
	/* ext4, xfs, tmpfs: 2 + subdirectories; btrfs keeps 1: always look. */
	if (st.st_nlink > 1 && st.st_nlink - 2 <= keep)
		return 0;
	d = opendir(root);
	if (d == NULL)
		return berth_err(err, errno, "cannot list `%s`", root);
	while ((de = readdir(d)) != NULL) {
		char p[PATH_MAX + 32];
		struct stat rs;
		if (!berth_run_id_valid(de->d_name))
			continue;
		snprintf(p, sizeof p, "%s/%s/run.json", root, de->d_name);
		if (stat(p, &rs) < 0) {
			snprintf(p, sizeof p, "%s/%s", root, de->d_name);
			if (stat(p, &rs) < 0)
				continue;
		}
		if (n == cap) {
			struct aged *nv = realloc(v, (cap = cap ? cap * 2 : 256) * sizeof *v);
			if (nv == NULL) {
				free(v);
				closedir(d);
				return berth_err(err, ENOMEM, "out of memory");
			}
			v = nv;
		}
		memcpy(v[n].id, de->d_name, 17);
		v[n].t = rs.st_mtim;
		n++;
	}
	closedir(d);
	if (n > keep) {
		qsort(v, n, sizeof *v, older_first);
		for (size_t i = 0; i < n - keep; i++) {
			char p[PATH_MAX + 32];
			struct berth_error e2 = {0};
			snprintf(p, sizeof p, "%s/%s", root, v[i].id);
			if (berth_evidence_remove(p, &e2) == 0)
				removed++;
		}
	}
	free(v);
	return removed;
}
