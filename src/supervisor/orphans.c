/* SPDX-License-Identifier: MIT */
/*
 * orphans.c - repair what a run whose supervisor died left (orphans.h).
 */
#include "orphans.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "../audit/audit.h"
#include "../sandbox/limits.h"
#include "../sandbox/trustscan.h"
#include "../util/crash.h"
#include "../util/journal.h"
#include "../util/rmtree.h"
#include "../util/rundir.h"

#define MAX_ITEMS 16

struct sweep {
	void (*notice)(void *arg, const char *line);
	void *arg;
};

struct items {
	const char *pid, *audit, *rundir;
	/* the end-of-run trust scan's (sandbox/trustscan.h): the arrays are
	 * as long as the journal has lines */
	struct berth_trust_journaled trust;
	const char *trust_start;
	bool trust_done, trust_overflow;
	char *cgroups[MAX_ITEMS];
	const char *trees[MAX_ITEMS];
	int n_cgroups, n_trees;
	bool untrusted_audit;
};

struct seen {
	const char *run_id;
	bool start, stop, ingest;
};

static void say(const struct sweep *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const struct sweep *s, const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	if (s->notice == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	s->notice(s->arg, line);
}

static void parse(char *text, struct items *it)
{
	char *save = NULL;
	size_t lines = 1;

	for (const char *c = text; *c; c++)
		lines += *c == '\n';
	it->trust.unprotect = calloc(lines, sizeof(char *));
	it->trust.guard_ro = calloc(lines, sizeof(char *));
	it->trust.guard_named = calloc(lines, sizeof(char *));

	for (char *l = strtok_r(text, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(l, ' ');
		if (sp == NULL)
			continue;
		*sp = '\0';
		const char *v = sp + 1;
		if (strcmp(l, "pid") == 0)
			it->pid = v;
		else if (strcmp(l, "audit") == 0)
			it->audit = v;
		else if (strcmp(l, "rundir") == 0)
			it->rundir = v;
		else if (strcmp(l, "cgroup") == 0 && it->n_cgroups < MAX_ITEMS)
			it->cgroups[it->n_cgroups++] = (char *)v;
		else if (strcmp(l, "tree") == 0 && it->n_trees < MAX_ITEMS)
			it->trees[it->n_trees++] = v;
		else if (strncmp(l, "trust-", 6) == 0 && strcmp(l, "trust-start") != 0 &&
			 strcmp(l, "trust-done") != 0 && berth_trust_unescape(sp + 1) < 0)
			it->trust_overflow = true; /* a value berth did not write: left out */
		else if (strcmp(l, "trust-root") == 0) {
			if (it->trust.n_roots < BERTH_GUARD_ROOTS)
				it->trust.roots[it->trust.n_roots++] = v;
			else
				it->trust_overflow = true;
		} else if (strcmp(l, "trust-head") == 0) {
			/* the HEAD of the trust-root before it */
			if (it->trust.n_roots > 0 && it->trust.heads[it->trust.n_roots - 1] == NULL)
				it->trust.heads[it->trust.n_roots - 1] = v;
		} else if (strcmp(l, "trust-start") == 0)
			it->trust_start = v;
		else if (strcmp(l, "trust-done") == 0)
			it->trust_done = true;
		else if (strcmp(l, "trust-unprotect") == 0 && it->trust.unprotect != NULL)
			it->trust.unprotect[it->trust.n_unprotect++] = (char *)v;
		else if (strcmp(l, "trust-ro") == 0 && it->trust.guard_ro != NULL)
			it->trust.guard_ro[it->trust.n_guard_ro++] = (char *)v;
		else if (strcmp(l, "trust-named") == 0 && it->trust.guard_named != NULL)
			it->trust.guard_named[it->trust.n_guard_named++] = (char *)v;
	}
}

static void items_free(struct items *it)
{
	free(it->trust.unprotect);
	free(it->trust.guard_ro);
	free(it->trust.guard_named);
}

/*
 * The trust scan the janitor did not do (it was killed with berth): the
 * journal's roots, trust lists and start, which berth_trust_journal wrote
 * before the sandbox was built.  A journal without "trust-start" (the run
 * died before its guard, or had none: an app's) or with "trust-done" (the
 * janitor scanned) needs none.  A root must be a directory named by its real
 * path; the scan only renames, in place, what changed since the start.
 */
static void trust_repair(const struct sweep *s, const char *run_id, struct items *it)
{
	struct berth_trust_report r;
	struct berth_error err = {0};
	char real[PATH_MAX];
	struct stat st;
	int n = 0;

	if (it->trust_done || it->trust_start == NULL)
		return;
	if (berth_trust_parse_start(it->trust_start, &it->trust.started) < 0 || it->trust.unprotect == NULL ||
	    it->trust.guard_ro == NULL || it->trust.guard_named == NULL) {
		say(s,
		    "run %s: its journal's trust-start `%s` is not SEC.NSEC: its workspace was not scanned",
		    run_id, it->trust_start);
		return;
	}
	for (int i = 0; i < it->trust.n_roots; i++) {
		const char *root = it->trust.roots[i];
		if (root[0] == '/' && realpath(root, real) != NULL && strcmp(real, root) == 0 &&
		    stat(root, &st) == 0 && S_ISDIR(st.st_mode))
			it->trust.roots[n++] = root;
		else
			say(s,
			    "run %s: its journal names `%s` as a writable root, which is not a directory "
			    "by its real path: not scanned",
			    run_id, root);
	}
	it->trust.n_roots = n;
	if (n == 0)
		return;
	if (berth_trust_repair(&it->trust, &r, &err) < 0) {
		say(s, "run %s: the trust-surface scan of its workspace failed: %s", run_id, err.msg);
		return;
	}
	for (int i = 0; i < r.n_lines; i++)
		say(s, "run %s: %s", run_id, r.lines[i]);
	if (r.n_more > 0)
		say(s, "run %s: ... and %d more on the trust surface", run_id, r.n_more);
	if (r.incomplete || it->trust_overflow)
		say(s,
		    "run %s: the trust-surface scan of its workspace is incomplete (a bound, or a "
		    "directory it could not open)",
		    run_id);
	berth_trust_report_free(&r);
}

/*
 * What a journal may name.  live/ is berth's, but a journal is a file that
 * something else may have written (a sandbox given live/ in a writable
 * mount, before the exposure check named it): the repair, which kills and
 * removes with the rights of whoever runs the next berth, takes only what
 * berth itself makes for run @run_id.  A cgroup is a directory
 * `berth-RUN_ID` (or the limits probe's `berth-check-PID-MS`, PID the
 * journal's) on a cgroup file system, named by its real path (no link on the
 * way); the run directory is runs/RUN_ID and the tree its evidence/; the
 * audit directory is this berth's or one that already holds an audit log.
 * Anything else is left alone and named.
 */
static bool cgroup_named(const char *base, const char *run_id, const char *pid)
{
	char want[64];
	size_t n;

	snprintf(want, sizeof want, "berth-%s", run_id);
	if (strcmp(base, want) == 0)
		return true;
	/* the limits probe's (berth_limits_check): berth-check-PID-MS */
	if (pid == NULL || pid[0] == '\0' || strspn(pid, "0123456789") != strlen(pid))
		return false;
	n = (size_t)snprintf(want, sizeof want, "berth-check-%s-", pid);
	return n < sizeof want && strncmp(base, want, n) == 0 && base[n] != '\0' &&
	       strspn(base + n, "0123456789") == strlen(base + n);
}

static bool cgroup_ok(const char *path, const char *run_id, const char *pid)
{
	char real[PATH_MAX];
	const char *base = strrchr(path, '/');
	struct statfs fs;

	if (path[0] != '/' || base == NULL || !cgroup_named(base + 1, run_id, pid))
		return false;
	if (realpath(path, real) == NULL)
		return errno == ENOENT; /* never made, or removed: nothing to do */
	return strcmp(real, path) == 0 && statfs(path, &fs) == 0 &&
	       (fs.f_type == CGROUP_SUPER_MAGIC || fs.f_type == CGROUP2_SUPER_MAGIC);
}

/* @path is runs/@run_id, followed by @suffix ("" or "/evidence"). */
static bool rundir_ok(const char *path, const char *run_id, const char *suffix)
{
	char want[PATH_MAX + 64];

	if (berth_state_path("runs", want, PATH_MAX) < 0)
		return false;
	size_t n = strlen(want);
	struct stat st;

	snprintf(want + n, sizeof want - n, "/%s", run_id);
	/* runs/RUN_ID itself a directory, never a link (that would take the
	 * repair elsewhere) */
	if (lstat(want, &st) == 0 ? !S_ISDIR(st.st_mode) : errno != ENOENT)
		return false;
	snprintf(want + n, sizeof want - n, "/%s%s", run_id, suffix);
	return strcmp(path, want) == 0;
}

/* The vm runtime's run directory (src/vm/runtime_vm.c): RUNTIME_DIR/vm-RUN_ID. */
static bool vm_rundir_ok(const char *path, const char *run_id)
{
	char want[PATH_MAX];
	struct berth_error ignored = {0};
	size_t n;

	if (berth_runtime_dir(false, want, sizeof want - 32, &ignored) < 0)
		return false;
	n = strlen(want);
	snprintf(want + n, sizeof want - n, "/vm-%s", run_id);
	return strcmp(path, want) == 0;
}

static bool audit_ok(const char *dir)
{
	char own[PATH_MAX], head[PATH_MAX + 8];
	struct berth_error ignored = {0};
	struct stat st;

	if (berth_audit_dir(own, sizeof own, &ignored) == 0 && strcmp(own, dir) == 0)
		return true;
	snprintf(head, sizeof head, "%s/head", dir);
	return dir[0] == '/' && lstat(head, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid();
}

/* Drops from @it what berth does not make for @run_id, naming each. */
static void vet(const struct sweep *s, const char *run_id, struct items *it)
{
	int n = 0;

	for (int i = 0; i < it->n_cgroups; i++) {
		if (cgroup_ok(it->cgroups[i], run_id, it->pid))
			it->cgroups[n++] = it->cgroups[i];
		else
			say(s,
			    "run %s: its journal names `%s` as a cgroup of the run, which berth does not "
			    "make: left alone",
			    run_id, it->cgroups[i]);
	}
	it->n_cgroups = n;
	n = 0;
	for (int i = 0; i < it->n_trees; i++) {
		if (rundir_ok(it->trees[i], run_id, "/evidence") || vm_rundir_ok(it->trees[i], run_id))
			it->trees[n++] = it->trees[i];
		else
			say(s,
			    "run %s: its journal names `%s` as a tree of the run, which berth does not make: "
			    "left alone",
			    run_id, it->trees[i]);
	}
	it->n_trees = n;
	if (it->rundir != NULL && !rundir_ok(it->rundir, run_id, "")) {
		say(s,
		    "run %s: its journal names `%s` as the run directory, which is not berth's: left alone",
		    run_id, it->rundir);
		it->rundir = NULL;
	}
	if (it->audit != NULL && it->audit[0] && !audit_ok(it->audit)) {
		say(s,
		    "run %s: its journal names `%s` as the audit directory, which holds no audit log of "
		    "berth's: its end is not recorded",
		    run_id, it->audit);
		it->audit = NULL;
		it->untrusted_audit = true;
	}
}

static int seen_cb(const struct berth_audit_record *r, void *ctx)
{
	struct seen *s = ctx;

	if (r->run_id == NULL || r->kind == NULL || strcmp(r->run_id, s->run_id) != 0)
		return 0;
	if (strcmp(r->kind, "run.start") == 0)
		s->start = true;
	else if (strcmp(r->kind, "run.stop") == 0)
		s->stop = true;
	else if (strcmp(r->kind, "evidence.ingest") == 0)
		s->ingest = true;
	return 0;
}

static bool exists(const char *dir, const char *name)
{
	char p[PATH_MAX + 64];
	struct stat st;

	snprintf(p, sizeof p, "%s/%s", dir, name);
	return lstat(p, &st) == 0;
}

/* The run directory of a run that never wrote run.json: what the run made
 * on its way there goes; an evidence.json the audit trail refers to stays
 * (runs.h). */
static void clean_rundir(const char *dir, bool keep_manifest)
{
	char p[PATH_MAX + 300];
	struct dirent *e;
	struct berth_error ignored = {0};
	bool has_run = exists(dir, "run.json");
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (d == NULL) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		if (e->d_name[0] == '.' && n > 4 && strcmp(e->d_name + n - 4, ".tmp") == 0)
			unlink(p); /* berth_write_atomic's, never renamed */
		else if (!has_run && strcmp(e->d_name, "evidence.json") == 0 && !keep_manifest)
			unlink(p);
	}
	closedir(d);
	snprintf(p, sizeof p, "%s/evidence", dir);
	berth_rmtree(p, NULL, &ignored);
	if (!has_run)
		rmdir(dir); /* ENOTEMPTY: the manifest the trail refers to */
}

static int repair(const char *run_id, char *text, void *ctx)
{
	const struct sweep *s = ctx;
	__attribute__((cleanup(items_free))) struct items it = {0};
	struct seen seen = {.run_id = run_id};
	struct berth_error err = {0};
	int left, kept = 0;

	parse(text, &it);
	vet(s, run_id, &it);
	left = berth_limits_cleanup_dirs(it.cgroups, it.n_cgroups);
	berth_crash_point("sweep.cgroups");
	/* the sandbox is gone (its cgroups, or PDEATHSIG): what it left on
	 * the host's trust surface can be looked at */
	trust_repair(s, run_id, &it);
	for (int i = 0; i < it.n_trees; i++) {
		struct berth_error e = {0};
		if (berth_rmtree(it.trees[i], NULL, &e) < 0) {
			say(s, "run %s: %s", run_id, e.msg);
			kept++;
		}
	}
	/* Opened before it is read: the open repairs what the killed writer
	 * left (records past the signed head go to quarantine, audit.h), and
	 * only what the log then holds counts. */
	const char *adir = it.audit != NULL && it.audit[0] ? it.audit : NULL;
	struct berth_audit *a = NULL;
	if (it.untrusted_audit) {
		/* not berth's journal: nothing to record, and no log to make */
		if (it.rundir != NULL)
			clean_rundir(it.rundir, true);
		return left > 0 || kept > 0 ? -1 : 0;
	}
	a = berth_audit_open(adir, &err);
	if (a == NULL || berth_audit_each(adir, seen_cb, &seen, &err) < 0) {
		say(s, "run %s ended without its supervisor (pid %s), and its audit log cannot be read: %s",
		    run_id, it.pid != NULL ? it.pid : "?", err.msg);
		berth_audit_close(a);
		return -1;
	}
	/* what the open repaired (the killed writer's records moved to
	 * quarantine) is said, as every other opener of the log says it */
	if (berth_audit_recovered(a) != NULL)
		say(s, "audit: %s", berth_audit_recovered(a));
	if (it.rundir != NULL)
		clean_rundir(it.rundir, seen.ingest);
	berth_crash_point("sweep.files");
	if (seen.start && !seen.stop) {
		json_t *stop = json_pack(
		    "{s:n, s:n, s:s, s:o}", "status", "duration_ms", "ended", BERTH_RUN_ENDED_SUPERVISOR_DIED,
		    "supervisor_pid", it.pid != NULL ? json_integer(strtoll(it.pid, NULL, 10)) : json_null());
		int r = stop == NULL
			    ? -1
			    : berth_audit_append(a, run_id, "run.stop", "berth", stop, NULL, NULL, &err);
		json_decref(stop);
		if (r < 0) {
			berth_audit_close(a);
			say(s,
			    "run %s ended without its supervisor (pid %s), and its end cannot be recorded in "
			    "the audit trail: %s",
			    run_id, it.pid != NULL ? it.pid : "?", err.msg[0] ? err.msg : "out of memory");
			return -1;
		}
		berth_crash_point("sweep.recorded");
	}
	berth_audit_close(a);
	if (left > 0 || kept > 0) {
		say(s, "run %s ended without its supervisor (pid %s): %d of its cgroups could not be removed",
		    run_id, it.pid != NULL ? it.pid : "?", left);
		return -1;
	}
	say(s, "run %s ended without its supervisor (pid %s): berth removed what it left%s", run_id,
	    it.pid != NULL ? it.pid : "?",
	    seen.start && !seen.stop ? " and recorded its end in the audit trail (run.stop, ended: "
				       "\"" BERTH_RUN_ENDED_SUPERVISOR_DIED "\")"
				     : "");
	return 0;
}

int berth_run_sweep(void (*notice)(void *arg, const char *line), void *arg, struct berth_error *err)
{
	struct sweep s = {.notice = notice, .arg = arg};

	return berth_journal_sweep(repair, &s, err);
}
