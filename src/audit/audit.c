/* SPDX-License-Identifier: MIT */
/*
 * audit.c - the append-only, hash-chained, signed audit log (audit.h,
 * docs/audit.md).
 *
 * Writers: a thread that appends prepares its records' canonical pieces
 * (redaction and JCS run in parallel), queues them, and either waits or
 * becomes the leader: the leader takes everything queued, locks the log
 * against other processes (flock LOCK_EX), checks the tail, writes all lines
 * with one pwrite and one fdatasync, signs and writes the head into the slot
 * that does not hold the current head, fdatasyncs it, unlocks and wakes the
 * waiters.  A failure truncates the log back to where the group started.
 *
 * This file opens and closes a log; each step above lives in a file named
 * for it (audit_int.h lists them).
 */

#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "../policy/policy.h"
#include "../util/cleanup.h"

#include "audit_int.h"

/* ---- open / close ---- */

static int check_dir(int dfd, const char *dir, struct berth_error *err)
{
	struct stat st;

	if (fstat(dfd, &st) < 0)
		return berth_err(err, errno, "cannot stat `%s`", dir);
	if (st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
		berth_err(err, EPERM,
			  "audit directory `%s` is not owned by uid %u with mode 0700 (mode %04o, owner %u)",
			  dir, (unsigned)geteuid(), (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
		return berth_err_hint(err, "`chmod 700 %s`", dir);
	}
	return 0;
}

/* Opens (with @create: makes) @name in @dfd; -1 with @err, errnum ENOENT
 * when it does not exist and @create is false. */
static int open_0600(int dfd, const char *dir, const char *name, bool create, struct berth_error *err)
{
	int fd = openat(dfd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT : 0), 0600);
	struct stat st;

	if (fd < 0)
		return berth_err(err, errno, "cannot open `%s/%s`", dir, name);
	if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
		close(fd);
		berth_err(err, EPERM, "`%s/%s` is not a regular file", dir, name);
		return berth_err_hint(
		    err, "something replaced berth's file: look at `ls -l %s` before you remove it", dir);
	}
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
		close(fd);
		berth_err(err, EPERM, "`%s/%s` is not a regular file owned by uid %u with mode 0600", dir,
			  name, (unsigned)geteuid());
		return berth_err_hint(err, "`chmod 600 %s/%s`", dir, name);
	}
	return fd;
}

static int open_file_0600(int dfd, const char *dir, const char *name, struct berth_error *err)
{
	return open_0600(dfd, dir, name, true, err);
}

/*
 * The head file, under LOCK_EX.  The first writer makes it, before the first
 * record: a log without one is damage (the head was deleted), refused, and
 * no empty head is made for it (that would change what verify reports).
 * Made under the lock, so that a writer opening a new log never sees
 * another's first records before its head.
 */
int berth_aud_open_head(struct berth_audit *a, struct berth_error *err)
{
	char **names = NULL;
	size_t n = 0;

	struct berth_error herr = {0};

	if (a->headfd >= 0)
		return 0;
	a->headfd = open_0600(a->dfd, a->dir, "head", false, &herr);
	if (a->headfd >= 0)
		return 0;
	if (herr.errnum != ENOENT) {
		*err = herr;
		return -1;
	}
	if (berth_aud_list_files(a->dfd, &names, &n, err) < 0)
		return -1;
	berth_aud_free_names(names, n);
	if (n > 0) {
		berth_err(err, 0,
			  "the audit log in `%s` has no signed head (`head` was deleted): its tail cannot be "
			  "checked",
			  a->dir);
		err->errnum = EBADMSG;
		return berth_aud_damage_hint(err, a->dir);
	}
	a->headfd = open_file_0600(a->dfd, a->dir, "head", err);
	return a->headfd >= 0 ? 0 : -1;
}

struct berth_audit *berth_audit_open(const char *dir, struct berth_error *err)
{
	struct berth_audit *a = calloc(1, sizeof *a);
	const char *rot = getenv("BERTH_AUDIT_ROTATE_BYTES");
	json_t *recovery = NULL;

	if (a == NULL) {
		berth_err(err, ENOMEM, "audit");
		return NULL;
	}
	a->dfd = a->lockfd = a->headfd = a->logfd = -1;
	a->head_slot = -1;
	a->rotate = BERTH_AUDIT_ROTATE_DEFAULT;
	a->queue_tail = &a->queue;
	pthread_mutex_init(&a->mu, NULL);
	pthread_rwlock_init(&a->secrets_lock, NULL);
	if (rot != NULL && rot[0] != '\0') {
		/* decimal digits, 1 to BERTH_AUDIT_ROTATE_MAX: strtoull once
		 * took a sign or blanks, and turned a value past 2^64 - 1 into
		 * ULLONG_MAX, a log that never rotates */
		uint64_t v = 0;

		if (berth_parse_count(rot, "BERTH_AUDIT_ROTATE_BYTES", 1, BERTH_AUDIT_ROTATE_MAX, &v, err) <
		    0)
			goto fail;
		a->rotate = v;
	}
	if (dir != NULL) {
		if (strlen(dir) >= sizeof a->dir) {
			berth_err(err, ENAMETOOLONG, "audit directory path is too long");
			goto fail;
		}
		strcpy(a->dir, dir);
	} else if (berth_audit_dir(a->dir, sizeof a->dir, err) < 0) {
		goto fail;
	}
	if (berth_mkdirs_private(a->dir, err) < 0)
		goto fail;
	a->dfd = open(a->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (a->dfd < 0) {
		berth_err(err, errno, "cannot open the audit directory `%s`", a->dir);
		goto fail;
	}
	if (check_dir(a->dfd, a->dir, err) < 0)
		goto fail;
	if ((a->lockfd = open_file_0600(a->dfd, a->dir, "lock", err)) < 0)
		goto fail;
	/* the head: opened now if it exists, else made under the lock */
	{
		struct berth_error herr = {0};

		a->headfd = open_0600(a->dfd, a->dir, "head", false, &herr);
		if (a->headfd < 0 && herr.errnum != ENOENT) {
			*err = herr;
			goto fail;
		}
	}
	if (berth_hostkey_load(&a->key, true, err) < 0) {
		berth_err_wrap(err, "audit");
		goto fail;
	}
	if (berth_aud_lock_ex(a, err) < 0)
		goto fail;
	if (berth_aud_sync_tail(a, &recovery, err) < 0 ||
	    (recovery != NULL && berth_aud_commit_locked(a, NULL, 0, recovery, err) < 0)) {
		flock(a->lockfd, LOCK_UN);
		json_decref(recovery);
		goto fail;
	}
	flock(a->lockfd, LOCK_UN);
	json_decref(recovery);
	return a;
fail:
	berth_audit_close(a);
	return NULL;
}

const char *berth_audit_recovered(const struct berth_audit *a)
{
	return a->recovered[0] ? a->recovered : NULL;
}

void berth_audit_set_rotate(struct berth_audit *a, uint64_t bytes)
{
	a->rotate = bytes;
}

int berth_audit_head(struct berth_audit *a, uint64_t *seq, char hash[65], struct berth_error *err)
{
	(void)err;
	pthread_mutex_lock(&a->mu);
	if (seq != NULL)
		*seq = a->seq;
	if (hash != NULL)
		strcpy(hash, a->seq ? a->hash : ZERO_HASH);
	pthread_mutex_unlock(&a->mu);
	return 0;
}

void berth_audit_close(struct berth_audit *a)
{
	if (a == NULL)
		return;
	/* closed when open (-1 when not) */
	cleanup_closep(&a->dfd);
	cleanup_closep(&a->lockfd);
	cleanup_closep(&a->headfd);
	cleanup_closep(&a->logfd);
	for (size_t i = 0; i < a->nsecrets; i++) {
		explicit_bzero(a->secrets[i], strlen(a->secrets[i]));
		free(a->secrets[i]);
	}
	free(a->secrets);
	free(a->torn);
	berth_hostkey_clear(&a->key);
	pthread_mutex_destroy(&a->mu);
	pthread_rwlock_destroy(&a->secrets_lock);
	free(a);
}
