/* SPDX-License-Identifier: MIT */
/*
 * audit_commit.c - appending to the audit log (audit.c): the queue of writers, the
 * leader's group commit under flock, rotation.
 */

#include <string.h>
#include <sys/file.h>

#include "../util/cleanup.h"
#include "../util/crash.h"
#include "../util/jcs.h"

#include "audit_int.h"

/* ---- committing ---- */

static int rotate_if_needed(struct berth_audit *a, struct berth_error *err)
{
	char name[FILE_NAME_LEN + 1];

	/* A torn tail is sealed in its own file first (the recovery record
	 * overwrites it); rotating now would leave it behind. */
	if (a->rotate == 0 || a->logsize < a->rotate || a->torn != NULL)
		return 0;
	berth_aud_file_name(a->seq + 1, name);
	if (berth_aud_open_log(a, name, true, err) < 0)
		return -1;
	if (fsync(a->dfd) < 0)
		return berth_err(err, errno, "cannot sync `%s`", a->dir);
	/* killed here: an empty active file, which the next writer extends */
	berth_crash_point("audit.rotate");
	return 0;
}

/*
 * Write @n records, after a recovery record for each payload of the array
 * @recovery when not NULL, as one group; the caller holds LOCK_EX and has
 * run berth_aud_sync_tail().  The steps: one pwrite of every line (over a
 * torn line, if any), the rest of a longer torn line cut off, fdatasync;
 * the head signed and synced; PENDING_FLAG removed.  Killed after the
 * pwrite or the log's sync, the group lies beyond the signed head, and the
 * next writer moves it to a quarantine file (its appends had not returned).
 */
int berth_aud_commit_locked(struct berth_audit *a, struct prepared **recs, size_t n, json_t *recovery,
			    struct berth_error *err)
{
	struct berth_buf out = {0};
	struct prepared rec = {0};
	size_t nrec = recovery != NULL ? json_array_size(recovery) : 0;
	uint64_t seq0, size0;
	char hash0[65], ts[32];
	int rc = -1, wrote;

	if (rotate_if_needed(a, err) < 0)
		return -1;
	seq0 = a->seq;
	size0 = a->logsize;
	strcpy(hash0, a->hash);
	berth_audit_now_rfc3339(ts);
	for (size_t i = 0; i < nrec; i++) {
		berth_aud_prepared_free(&rec);
		memset(&rec, 0, sizeof rec);
		rec.run_id = strdup("\"audit\"");
		rec.kind = strdup("\"" BERTH_AUDIT_KIND_RECOVERY "\"");
		rec.actor = strdup("\"berth\"");
		rec.payload = berth_jcs(json_array_get(recovery, i), err);
		if (rec.run_id == NULL || rec.kind == NULL || rec.actor == NULL || rec.payload == NULL) {
			berth_err(err, ENOMEM, "audit: cannot build the recovery record");
			goto restore;
		}
		if (berth_aud_render(&rec, a->seq + 1, a->hash, ts, &out, err) < 0)
			goto restore;
		a->seq = rec.seq;
		strcpy(a->hash, rec.hash);
	}
	for (size_t i = 0; i < n; i++) {
		if (berth_aud_render(recs[i], a->seq + 1, a->hash, ts, &out, err) < 0)
			goto restore;
		a->seq = recs[i]->seq;
		strcpy(a->hash, recs[i]->hash);
	}
	if (out.len == 0) {
		rc = 0;
		goto out;
	}
	wrote = berth_aud_write_all_at(a->logfd, out.p, out.len, (off_t)size0);
	if (wrote == 0)
		berth_crash_point("audit.append");
	if (wrote < 0 || (a->torn_len > out.len && ftruncate(a->logfd, (off_t)(size0 + out.len)) < 0) ||
	    fdatasync(a->logfd) < 0) {
		berth_err(err, errno, "cannot write the audit log `%s/%s`", a->dir, a->logname);
		berth_err_hint(
		    err,
		    "free space or fix the disk under `%s`; nothing was recorded, so berth refuses to go on",
		    a->dir);
		goto truncate;
	}
	a->logsize = size0 + out.len;
	berth_crash_point("audit.log_synced");
	if (berth_aud_head_write(a, err) < 0)
		goto truncate;
	berth_crash_point("audit.head_written");
	if (a->pending_flag) {
		/* the head signs every recovery record: nothing waits any more */
		unlinkat(a->dfd, PENDING_FLAG, 0);
		a->pending_flag = false;
	}
	free(a->torn);
	a->torn = NULL;
	a->torn_len = 0;
	rc = 0;
	goto out;
truncate:
	/* Fail closed: nothing half-written remains (a torn line that was
	 * there before goes back, for the next writer to seal). */
	if (ftruncate(a->logfd, (off_t)size0) == 0) {
		if (a->torn != NULL)
			(void)berth_aud_write_all_at(a->logfd, a->torn, a->torn_len, (off_t)size0);
		fdatasync(a->logfd);
	}
	a->logsize = size0;
restore:
	a->seq = seq0;
	strcpy(a->hash, hash0);
	a->head_cached = false;
out:
	berth_aud_prepared_free(&rec);
	berth_buf_free(&out);
	return rc;
}

/*
 * The wait for the lock in ms: BERTH_AUDIT_LOCK_TIMEOUT_MS, or
 * $BERTH_AUDIT_LOCK_TIMEOUT_MS in decimal digits from 0 to
 * BERTH_AUDIT_LOCK_TIMEOUT_MAX_MS.  Anything else (a sign, blank, hex, an
 * exponent, a value past the maximum: strtol(3) took "abc" for 0 and
 * 99999999999999999999 for LONG_MAX, a wait of ages) is refused.
 * Returns the wait, or -1 with @err filled (status 2).
 */
static long lock_limit(struct berth_error *err)
{
	const char *env = getenv("BERTH_AUDIT_LOCK_TIMEOUT_MS");
	long v = 0;

	if (env == NULL)
		return BERTH_AUDIT_LOCK_TIMEOUT_MS;
	for (const char *c = env; *c != '\0'; c++) {
		if (*c < '0' || *c > '9' || v > BERTH_AUDIT_LOCK_TIMEOUT_MAX_MS) {
			v = -1;
			break;
		}
		v = v * 10 + (*c - '0');
	}
	if (env[0] == '\0' || v < 0 || v > BERTH_AUDIT_LOCK_TIMEOUT_MAX_MS) {
		berth_usage_err(err,
				"invalid BERTH_AUDIT_LOCK_TIMEOUT_MS `%s`: expected 0 to %d (milliseconds)",
				env, BERTH_AUDIT_LOCK_TIMEOUT_MAX_MS);
		berth_err_hint(err, "write a number of milliseconds in decimal digits, or unset it for %d",
			       BERTH_AUDIT_LOCK_TIMEOUT_MS);
		return -1;
	}
	return v;
}

/*
 * flock(2) @op on @fd, waiting at most @limit ms: a writer that holds the
 * lock and is stopped (SIGSTOP, a debugger) must not hang every later
 * berth forever.  Returns 0, -1 with errno (ETIMEDOUT when the wait ran
 * out).
 */
static int lock_wait(int fd, int op, long limit)
{
	long waited = 0, step = 1;

	for (;;) {
		if (flock(fd, op | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		if (waited >= limit) {
			errno = ETIMEDOUT;
			return -1;
		}
		struct timespec ts = {.tv_sec = 0, .tv_nsec = step * 1000000L};
		nanosleep(&ts, NULL);
		waited += step;
		step = step < 50 ? step * 2 : 50;
	}
}

int berth_aud_lock(int fd, int op, const char *dir, struct berth_error *err)
{
	/* A reader says what it locks for; the writer's lock is the log's own. */
	const char *why = op == LOCK_SH ? " to read it" : "";
	long limit = lock_limit(err);

	if (limit < 0)
		return -1;
	if (lock_wait(fd, op, limit) < 0) {
		int e = errno;
		if (e == ETIMEDOUT)
			berth_err(err, 0,
				  "cannot lock the audit log `%s/lock`%s: another berth process holds it and "
				  "does not "
				  "let go",
				  dir, why);
		else
			berth_err(err, e, "cannot lock the audit log `%s/lock`%s", dir, why);
		return berth_err_hint(err,
				      "a berth process stopped while writing holds the lock: find it with "
				      "`fuser %s/lock`, and continue or end it",
				      dir);
	}
	return 0;
}

int berth_aud_lock_ex(struct berth_audit *a, struct berth_error *err)
{
	return berth_aud_lock(a->lockfd, LOCK_EX, a->dir, err);
}

/* Lock, bring the tail up to date (sealing a crash), write @n records. */
static int commit(struct berth_audit *a, struct prepared **recs, size_t n, struct berth_error *err)
{
	json_t *recovery = NULL;
	int rc;

	if (berth_aud_lock_ex(a, err) < 0)
		return -1;
	rc = berth_aud_sync_tail(a, &recovery, err);
	if (rc == 0)
		rc = berth_aud_commit_locked(a, recs, n, recovery, err);
	if (rc < 0)
		a->head_cached = false;
	flock(a->lockfd, LOCK_UN);
	json_decref(recovery);
	return rc;
}

/*
 * Group commit: queue the request; the first thread that finds no leader
 * takes the whole queue, commits it, wakes exactly the waiters of that group
 * and then the next queued thread, which leads the following group.
 */
static int submit(struct berth_audit *a, struct prepared *recs, size_t n, struct berth_error *err)
{
	struct request me = {.recs = recs, .n = n};

	pthread_cond_init(&me.cv, NULL);
	pthread_mutex_lock(&a->mu);
	*a->queue_tail = &me;
	a->queue_tail = &me.next;
	while (!me.done) {
		if (!a->leader) {
			struct request *batch = a->queue;
			struct prepared **ptrs;
			size_t total = 0, k = 0;
			int rc;

			a->leader = true;
			a->queue = NULL;
			a->queue_tail = &a->queue;
			pthread_mutex_unlock(&a->mu);
			for (struct request *r = batch; r != NULL; r = r->next)
				total += r->n;
			ptrs = calloc(total ? total : 1, sizeof *ptrs);
			if (ptrs == NULL) {
				rc = berth_err(&me.err, ENOMEM, "audit");
			} else {
				for (struct request *r = batch; r != NULL; r = r->next)
					for (size_t i = 0; i < r->n; i++)
						ptrs[k++] = &r->recs[i];
				rc = commit(a, ptrs, total, &me.err);
				free(ptrs);
			}
			pthread_mutex_lock(&a->mu);
			for (struct request *r = batch, *next; r != NULL; r = next) {
				next = r->next;
				r->rc = rc;
				if (r != &me)
					r->err = me.err;
				r->done = true;
				if (r != &me)
					pthread_cond_signal(&r->cv);
			}
			a->leader = false;
			if (a->queue != NULL)
				pthread_cond_signal(&a->queue->cv);
		} else {
			pthread_cond_wait(&me.cv, &a->mu);
		}
	}
	pthread_mutex_unlock(&a->mu);
	pthread_cond_destroy(&me.cv);
	if (me.rc < 0)
		*err = me.err;
	return me.rc;
}

int berth_audit_append_batch(struct berth_audit *a, struct berth_audit_entry *e, size_t n,
			     struct berth_error *err)
{
	struct prepared *p = calloc(n ? n : 1, sizeof *p);
	int rc = -1;
	size_t i;

	if (p == NULL)
		return berth_err(err, ENOMEM, "audit");
	for (i = 0; i < n; i++)
		if (berth_aud_prepare(a, e[i].run_id, e[i].kind, e[i].actor, e[i].payload, &p[i], err) < 0)
			goto out;
	rc = submit(a, p, n, err);
	for (i = 0; rc == 0 && i < n; i++) {
		e[i].seq = p[i].seq;
		strcpy(e[i].hash, p[i].hash);
	}
	i = n;
out:
	for (size_t j = 0; j < i; j++)
		berth_aud_prepared_free(&p[j]);
	free(p);
	return rc;
}

int berth_audit_append(struct berth_audit *a, const char *run_id, const char *kind, const char *actor,
		       json_t *payload, uint64_t *seq_out, char hash_out[65], struct berth_error *err)
{
	struct berth_audit_entry e = {.run_id = run_id, .kind = kind, .actor = actor, .payload = payload};

	if (berth_audit_append_batch(a, &e, 1, err) < 0)
		return -1;
	if (seq_out != NULL)
		*seq_out = e.seq;
	if (hash_out != NULL)
		strcpy(hash_out, e.hash);
	return 0;
}
