/* SPDX-License-Identifier: MIT */
/*
 * audit_recover.c - the tail of the audit log (audit.c): find the last record, check it
 * against the head, and recover (quarantine a torn or unsigned tail).
 */

#include <inttypes.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "../util/cleanup.h"
#include "../util/crash.h"
#include "../util/sha256.h"

#include "audit_int.h"

/* ---- the tail ---- */

/* Read the line that ends at @end (exclusive, the byte before is '\n'... or
 * not) of @fd: the bytes after the previous '\n'.  *start gets its offset. */
static char *read_line_before(int fd, uint64_t end, uint64_t *start, struct berth_error *err)
{
	char chunk[65536];
	uint64_t pos = end, s = 0;
	char *line;

	while (pos > 0) {
		size_t n = pos > sizeof chunk ? sizeof chunk : (size_t)pos;
		bool found = false;

		if (berth_aud_read_all_at(fd, chunk, n, (off_t)(pos - n)) < 0) {
			berth_err(err, errno, "cannot read the audit log");
			return NULL;
		}
		for (size_t i = n; i > 0; i--)
			if (chunk[i - 1] == '\n') {
				s = pos - n + i;
				found = true;
				break;
			}
		if (found)
			break;
		pos -= n;
	}
	*start = s;
	line = malloc((size_t)(end - s) + 1);
	if (line == NULL) {
		berth_err(err, ENOMEM, "audit");
		return NULL;
	}
	if (berth_aud_read_all_at(fd, line, (size_t)(end - s), (off_t)s) < 0) {
		free(line);
		berth_err(err, errno, "cannot read the audit log");
		return NULL;
	}
	line[end - s] = '\0';
	return line;
}

/* The seq and hash of the last record of the file @name (of its first
 * @size_in bytes when @fd_in is given); seq 0 if empty. */
static int last_record(int dfd, const char *name, int fd_in, uint64_t size_in, uint64_t *seq, char hash[65],
		       struct berth_error *err)
{
	cleanup_close int own = -1;
	int fd = fd_in;
	struct stat st;
	uint64_t start;
	struct berth_audit_record r = {0};
	char *line;
	json_t *o;

	if (fd < 0) {
		own = berth_aud_open_regular(dfd, name);
		if (own < 0)
			return berth_err(err, errno, "cannot open `%s`", name);
		fd = own;
	}
	if (fstat(fd, &st) < 0)
		return berth_err(err, errno, "cannot stat `%s`", name);
	if (fd_in >= 0)
		st.st_size = (off_t)size_in;
	*seq = 0;
	strcpy(hash, ZERO_HASH);
	if (st.st_size == 0)
		return 0;
	line = read_line_before(fd, (uint64_t)st.st_size - 1, &start, err);
	if (line == NULL)
		return -1;
	o = berth_audit_parse_line(line, (size_t)st.st_size - 1 - start, &r, err);
	free(line);
	if (o == NULL) {
		berth_err_wrap(err, "last record of `%s`", name);
		err->errnum = EBADMSG;
		return -1;
	}
	*seq = r.seq;
	strcpy(hash, r.hash);
	json_decref(o);
	return 0;
}

int berth_aud_open_log(struct berth_audit *a, const char *name, bool create, struct berth_error *err)
{
	int fd = openat(a->dfd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT : 0), 0600);
	struct stat st;

	if (fd < 0)
		return berth_err(err, errno, "cannot open `%s/%s`", a->dir, name);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
		close(fd);
		berth_err(err, EPERM, "`%s/%s` is not a regular file owned by uid %u with mode 0600", a->dir,
			  name, (unsigned)geteuid());
		return berth_err_hint(err, "`chmod 600 %s/%s`", a->dir, name);
	}
	if (a->logfd >= 0)
		close(a->logfd);
	a->logfd = fd;
	a->logsize = (uint64_t)st.st_size;
	snprintf(a->logname, sizeof a->logname, "%s", name);
	return 0;
}

/* Reads all of the regular file @name of @dfd (at most 2 GiB) into *@buf. */
static int read_whole(int dfd, const char *dir, const char *name, char **buf, size_t *len,
		      struct berth_error *err)
{
	cleanup_close int fd = berth_aud_open_regular(dfd, name);
	struct stat st;

	*buf = NULL;
	*len = 0;
	if (fd < 0)
		return berth_aud_open_failed(err, dir, name);
	if (fstat(fd, &st) < 0)
		return berth_err(err, errno, "cannot stat `%s/%s`", dir, name);
	if ((uint64_t)st.st_size > (1ULL << 31))
		return berth_err(err, EFBIG, "`%s/%s` is too large to read", dir, name);
	*buf = malloc((size_t)st.st_size + 1);
	if (*buf == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	if (st.st_size > 0 && berth_aud_read_all_at(fd, *buf, (size_t)st.st_size, 0) < 0) {
		free(*buf);
		*buf = NULL;
		return berth_err(err, errno, "cannot read `%s/%s`", dir, name);
	}
	*len = (size_t)st.st_size;
	return 0;
}

/* The seq a line claims, read leniently (a line that does not verify still
 * names the records it held), or 0. */
static uint64_t claimed_seq(const char *line, size_t len)
{
	json_t *rec = json_loadb(line, len, 0, NULL);
	json_int_t v = json_integer_value(json_object_get(rec, "seq"));

	json_decref(rec);
	return v > 0 ? (uint64_t)v : 0;
}

/*
 * Where the records the signed head covers end in the active file: *@off
 * is the end of the line of record @hseq (hash @hhash), 0 when the active
 * file starts with record @hseq + 1 (the previous file ends with record
 * @hseq) or when the head signs nothing (@hseq 0) and the active file is the
 * first.  Everything after *@off was written after the last signed head.
 * The lines are read back from the end; lines that do not verify or name a
 * later record are part of that unsigned tail.  When record @hseq is not
 * there (a record the head covers was changed, removed or cut short, or the
 * log replaced), the log is damaged: EBADMSG with what was found and the
 * way out.
 */
int berth_aud_signed_end(const struct berth_tail *t, uint64_t hseq, const char *hhash, uint64_t *off,
			 struct berth_error *err)
{
	uint64_t end = t->size, start, found_seq = 0, fs = berth_aud_file_seq(t->names[t->n - 1]);
	char **names = t->names;
	size_t n = t->n;
	bool other = false;
	char *line;

	/* the bytes after the last newline are a torn line, never a record */
	if (end > 0) {
		char lastc;

		if (berth_aud_read_all_at(t->fd, &lastc, 1, (off_t)end - 1) < 0)
			return berth_err(err, errno, "cannot read `%s/%s`", t->dir, t->names[t->n - 1]);
		if (lastc == '\n')
			goto lines;
		line = read_line_before(t->fd, end, &start, err);
		if (line == NULL)
			return -1;
		free(line);
		end = start;
	}
lines:
	/* seq counts from 1: a head over nothing (@hseq 0) matches no line */
	while (end > 0 && hseq > 0) {
		struct berth_audit_record r = {0};
		struct berth_error e2 = {0};
		json_t *o;

		line = read_line_before(t->fd, end - 1, &start, err);
		if (line == NULL)
			return -1;
		o = berth_audit_parse_line(line, (size_t)(end - 1 - start), &r, &e2);
		free(line);
		if (o != NULL && r.seq == hseq && strcmp(r.hash, hhash) == 0) {
			json_decref(o);
			*off = end;
			return 0;
		}
		if (o != NULL && r.seq <= hseq) {
			found_seq = r.seq;
			other = r.seq == hseq;
			json_decref(o);
			break;
		}
		json_decref(o);
		end = start;
	}
	if (end == 0 || hseq == 0) {
		uint64_t pseq = 0;
		char phash[65];

		if (hseq == 0 && n <= 1 && fs == 1) {
			*off = 0;
			return 0;
		}
		if (hseq > 0 && fs == hseq + 1 && n >= 2 &&
		    last_record(t->dfd, names[n - 2], -1, 0, &pseq, phash, err) == 0 && pseq == hseq &&
		    strcmp(phash, hhash) == 0) {
			*off = 0;
			return 0;
		}
		if (hseq > 0 && fs == hseq + 1 && n >= 2) {
			other = pseq == hseq;
			found_seq = pseq;
		}
	}
	if (hseq == 0)
		berth_err(
		    err, 0,
		    "the audit log in `%s` holds records in rotated files or a file that does not start "
		    "at record 1, but its head signs no record: the head was emptied or deleted",
		    t->dir);
	else if (other)
		berth_err(err, 0,
			  "the audit log in `%s` holds another record %" PRIu64
			  " than its signed head names: the log was replaced or edited",
			  t->dir, hseq);
	else if (found_seq > 0 || end > 0)
		berth_err(err, 0,
			  "the audit log in `%s` ends at record %" PRIu64
			  " but its signed head names record %" PRIu64
			  ": records the head covers were removed, cut short or damaged",
			  t->dir, found_seq, hseq);
	else
		berth_err(
		    err, 0,
		    "the audit log in `%s` does not hold record %" PRIu64
		    " that its signed head names: records the head covers were removed or damaged, or the "
		    "file was replaced",
		    t->dir, hseq);
	err->errnum = EBADMSG; /* the message says it all */
	return berth_aud_damage_hint(err, t->dir);
}

/* Appends a sentence to the notice of what was repaired. */
static void note(struct berth_audit *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct berth_audit *a, const char *fmt, ...)
{
	size_t used = strlen(a->recovered);
	va_list ap;

	if (used > 0 && used + 2 < sizeof a->recovered) {
		strcpy(a->recovered + used, "; ");
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(a->recovered + used, sizeof a->recovered - used, fmt, ap);
	va_end(ap);
}

/* Is the regular file @name of @dfd exactly @len bytes @p? */
static bool same_content(int dfd, const char *name, const char *p, size_t len)
{
	cleanup_close int fd = berth_aud_open_regular(dfd, name);
	struct stat st;
	char *got;
	bool same;

	if (fd < 0 || fstat(fd, &st) < 0 || (uint64_t)st.st_size != len)
		return false;
	got = malloc(len ? len : 1);
	if (got == NULL)
		return false;
	same = len == 0 || (berth_aud_read_all_at(fd, got, len, 0) == 0 && memcmp(got, p, len) == 0);
	free(got);
	return same;
}

/* renameat2(RENAME_NOREPLACE), or link and unlink where it is missing. */
static int rename_noreplace(int dfd, const char *from, const char *to)
{
	if (renameat2(dfd, from, dfd, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	if (linkat(dfd, from, dfd, to, 0) < 0)
		return -1;
	return unlinkat(dfd, from, 0);
}

/* Creates the flag that keeps every writer off its fast path. */
static int raise_flag(struct berth_audit *a, struct berth_error *err)
{
	int fd = openat(a->dfd, PENDING_FLAG, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0)
		return berth_err(err, errno, "cannot create `%s/%s`", a->dir, PENDING_FLAG);
	close(fd);
	a->pending_flag = true;
	return 0;
}

/*
 * The log is ahead of its signed head: the bytes from @off to the end of the
 * active file were written after the last signed head -- records whose
 * appends never returned (a crash between the log's sync and the head's),
 * lines that do not verify after them, or lines someone appended by hand.
 * They are never taken into the chain: they are moved, byte for byte, to
 * `quarantine-<first>-<last>.jsonl` (0600) beside the log, and @items gets
 * the recovery record's payload.  The steps, each safe to be killed after:
 *   1. the bytes go to QUARANTINE_TMP, synced (the log still holds them; the
 *      next writer overwrites the copy);
 *   2. it is renamed to a name no file has (a name an earlier writer's copy
 *      of the same bytes holds is reused, another file of that name is kept
 *      and the name gets a -2, -3... suffix), the directory synced;
 *   3. PENDING_FLAG is created;
 *   4. the log is cut back to @off, synced: from here until the head signs
 *      the recovery record, the quarantine file is the only copy, and the
 *      next writer finds it by its first seq (the head's + 1) and records it.
 * @made gets the quarantine file's name.
 */
static int quarantine_tail(struct berth_audit *a, uint64_t hseq, uint64_t off, json_t *items, char made[96],
			   struct berth_error *err)
{
	uint64_t size = a->logsize, last = 0;
	size_t len = (size_t)(size - off);
	char *buf = NULL, hex[65], base[96];
	bool reuse = false;
	int qfd = -1, rc = -1;
	json_t *item;
	unsigned k;

	if (size - off > (1ULL << 31))
		return berth_err(err, EFBIG, "the audit log `%s/%s` is too large to repair", a->dir,
				 a->logname);
	buf = malloc(len ? len : 1);
	if (buf == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	if (len > 0 && berth_aud_read_all_at(a->logfd, buf, len, (off_t)off) < 0) {
		berth_err(err, errno, "cannot read `%s/%s`", a->dir, a->logname);
		goto out;
	}
	for (size_t i = 0; i < len;) {
		char *nl = memchr(buf + i, '\n', len - i);
		size_t e = nl != NULL ? (size_t)(nl - buf) : len;
		uint64_t seq = claimed_seq(buf + i, e - i);

		if (seq > hseq && seq > last)
			last = seq;
		i = e + 1;
	}
	if (last == 0)
		last = hseq + 1;
	snprintf(base, sizeof base, QUARANTINE_PREFIX "%020" PRIu64 "-%020" PRIu64, hseq + 1, last);
	for (k = 1; k <= 1000; k++) {
		if (k == 1)
			snprintf(made, 96, "%s" FILE_SUFFIX, base);
		else
			snprintf(made, 96, "%s-%u" FILE_SUFFIX, base, k);
		if (faccessat(a->dfd, made, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
			break;
		if (same_content(a->dfd, made, buf, len)) {
			reuse = true;
			break;
		}
	}
	if (k > 1000) {
		berth_err(err, EEXIST,
			  "cannot move unsigned records of the audit log: 1000 files named `%s/%s*` exist",
			  a->dir, base);
		goto out;
	}
	if (!reuse) {
		/* an earlier writer's copy (or anything else of that name) goes:
		 * the log still holds these bytes */
		unlinkat(a->dfd, QUARANTINE_TMP, 0);
		qfd = openat(a->dfd, QUARANTINE_TMP, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
			     0600);
		if (qfd < 0 || berth_aud_write_all_at(qfd, buf, len, 0) < 0 || fdatasync(qfd) < 0) {
			berth_err(err, errno, "cannot move unsigned records of the audit log to `%s/%s`",
				  a->dir, QUARANTINE_TMP);
			if (qfd >= 0)
				unlinkat(a->dfd, QUARANTINE_TMP, 0);
			goto out;
		}
		berth_crash_point("audit.quarantine_copy");
		if (rename_noreplace(a->dfd, QUARANTINE_TMP, made) < 0 || fsync(a->dfd) < 0) {
			berth_err(err, errno, "cannot move unsigned records of the audit log to `%s/%s`",
				  a->dir, made);
			unlinkat(a->dfd, QUARANTINE_TMP, 0);
			goto out;
		}
		berth_crash_point("audit.quarantine_name");
	}
	if (raise_flag(a, err) < 0)
		goto out;
	berth_crash_point("audit.quarantine_flag");
	if (ftruncate(a->logfd, (off_t)off) < 0 || fdatasync(a->logfd) < 0) {
		berth_err(err, errno, "cannot cut the audit log `%s/%s` back to its signed head", a->dir,
			  a->logname);
		goto out;
	}
	a->logsize = off;
	berth_crash_point("audit.quarantine_cut");
	if (berth_sha256_hex(buf, len, hex, err) < 0)
		goto out;
	item = json_pack("{s:s, s:I, s:I, s:s, s:I, s:s}", "reason", "log ahead of the signed head",
			 "head_seq", (json_int_t)hseq, "log_seq", (json_int_t)last, "quarantined", made,
			 "bytes", (json_int_t)len, "sha256", hex);
	if (item == NULL || json_array_append_new(items, item) < 0) {
		berth_err(err, ENOMEM, "out of memory");
		goto out;
	}
	if (reuse)
		json_object_set_new(
		    item, "copy",
		    json_string("made by an earlier writer that was killed before it cut the log"));
	note(a,
	     "records %" PRIu64 "..%" PRIu64
	     " of `%s` were written after the last signed head (a crash between "
	     "the two syncs, or lines added by hand): moved to `%s`, not taken into the chain",
	     hseq + 1, last, a->dir, made);
	rc = 0;
out:
	if (qfd >= 0)
		close(qfd);
	free(buf);
	return rc;
}

/*
 * Quarantine files whose first seq is the head's + 1 were made since the head
 * reached @hseq and are not recorded yet (their writer was killed, or failed,
 * between cutting the log and the head over its recovery record): each gets
 * a recovery record now.  @made (may be "") was made by this writer.
 */
static int record_pending(struct berth_audit *a, uint64_t hseq, const char *made, json_t *items,
			  struct berth_error *err)
{
	char **q = NULL;
	size_t nq = 0;
	int rc = -1;

	if (berth_aud_list_quarantine(a->dfd, &q, &nq, err) < 0)
		return -1;
	for (size_t i = 0; i < nq; i++) {
		char *buf, hex[65];
		size_t len;
		json_t *item;

		if (berth_aud_quarantine_seq(q[i]) != hseq + 1 || strcmp(q[i], made) == 0)
			continue;
		if (read_whole(a->dfd, a->dir, q[i], &buf, &len, err) < 0) {
			berth_err_hint(
			    err,
			    "berth records what it finds there; move `%s/%s` out of the audit directory "
			    "if it is not berth's",
			    a->dir, q[i]);
			goto out;
		}
		if (berth_sha256_hex(buf, len, hex, err) < 0) {
			free(buf);
			goto out;
		}
		free(buf);
		item =
		    json_pack("{s:s, s:I, s:s, s:I, s:s}", "reason", "unrecorded quarantine", "head_seq",
			      (json_int_t)hseq, "quarantined", q[i], "bytes", (json_int_t)len, "sha256", hex);
		if (item == NULL || json_array_append_new(items, item) < 0) {
			berth_err(err, ENOMEM, "out of memory");
			goto out;
		}
		note(a,
		     "`%s/%s` was already there, named for the records after the signed record %" PRIu64
		     ", and no recovery record named it (its writer was killed before it recorded the move):"
		     " recorded now",
		     a->dir, q[i], hseq);
	}
	rc = 0;
out:
	berth_aud_free_names(q, nq);
	return rc;
}

/*
 * Bring a->seq/hash/logfd/logsize in line with the disk (under LOCK_EX).
 * A torn last line (kept in a->torn, overwritten by the next group), a log
 * ahead of the head and quarantine files nobody recorded are noted:
 * @recovery gets a JSON array of recovery payloads, else NULL.
 */
int berth_aud_sync_tail(struct berth_audit *a, json_t **recovery, struct berth_error *err)
{
	char buf[2 * HEAD_SLOT], why[256], next[FILE_NAME_LEN + 1], made[96] = "";
	char hhash[65];
	uint64_t hseq = 0, off = 0;
	char **names = NULL;
	size_t n = 0;
	struct stat st;
	json_t *items = NULL;
	int slot, rc = -1;

	*recovery = NULL;
	if (berth_aud_open_head(a, err) < 0 || berth_aud_head_read(a->headfd, buf, err) < 0)
		return -1;
	/* Fast path: nothing changed since our own last write, and no
	 * quarantine waits for its record (PENDING_FLAG). */
	berth_aud_file_name(a->seq + 1, next);
	if (a->head_cached && a->logfd >= 0 && memcmp(buf, a->head_cache, sizeof buf) == 0 &&
	    fstat(a->logfd, &st) == 0 && (uint64_t)st.st_size == a->logsize &&
	    faccessat(a->dfd, next, F_OK, AT_SYMLINK_NOFOLLOW) < 0 &&
	    faccessat(a->dfd, PENDING_FLAG, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (berth_aud_head_pick(buf, a->key.pub, &a->key, &hseq, hhash, &slot, why, sizeof why) < 0) {
		berth_err(err, 0, "the audit head in `%s` is forged or damaged: %s", a->dir, why);
		err->errnum = EBADMSG;
		if (strstr(why, "made by another key") != NULL)
			return berth_err_hint(err,
					      "the host key in `%s` did not sign this log: if "
					      "XDG_CONFIG_HOME changed, set it back;"
					      " for a separate log set BERTH_AUDIT_DIR; `berth audit verify "
					      "--key PUB.pem` checks it",
					      a->key.dir);
		return berth_aud_damage_hint(err, a->dir);
	}
	a->pending_flag = faccessat(a->dfd, PENDING_FLAG, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
	if (berth_aud_list_files(a->dfd, &names, &n, err) < 0)
		return -1;
	if (n == 0) {
		berth_aud_file_name(1, next);
		if (berth_aud_open_log(a, next, true, err) < 0)
			goto out;
		berth_aud_free_names(names, n);
		names = NULL;
		if (berth_aud_list_files(a->dfd, &names, &n, err) < 0)
			return -1;
		if (n == 0) {
			berth_err(err, ENOENT, "`%s/%s` vanished", a->dir, next);
			goto out;
		}
	} else if (strcmp(a->logname, names[n - 1]) != 0 || a->logfd < 0) {
		if (berth_aud_open_log(a, names[n - 1], false, err) < 0)
			goto out;
	}
	if (fstat(a->logfd, &st) < 0) {
		berth_err(err, errno, "cannot stat `%s`", a->logname);
		goto out;
	}
	a->logsize = (uint64_t)st.st_size;
	free(a->torn);
	a->torn = NULL;
	a->torn_len = 0;
	if (berth_aud_signed_end(
		&(struct berth_tail){
		    .dfd = a->dfd, .dir = a->dir, .fd = a->logfd, .size = a->logsize, .names = names, .n = n},
		hseq, hhash, &off, err) < 0)
		goto out;
	items = json_array();
	if (items == NULL) {
		berth_err(err, ENOMEM, "out of memory");
		goto out;
	}
	if (off < a->logsize) {
		char *tail = NULL;
		size_t tl = (size_t)(a->logsize - off);
		uint64_t start = off;

		if (tl <= (1U << 31) && (tail = malloc(tl)) != NULL &&
		    berth_aud_read_all_at(a->logfd, tail, tl, (off_t)off) == 0 &&
		    memchr(tail, '\n', tl) == NULL) {
			/* One torn line alone: cut off; the next group overwrites it,
			 * starting with the recovery record (if that fails, the torn
			 * bytes are put back). */
			char hex[65], prefix[129];
			json_t *item;

			if (berth_sha256_hex(tail, tl, hex, err) < 0) {
				free(tail);
				goto out;
			}
			berth_hex((unsigned char *)tail, tl < 64 ? tl : 64, prefix);
			a->torn = tail;
			a->torn_len = tl;
			item = json_pack("{s:s, s:s, s:I, s:I, s:s, s:s}", "reason", "torn last line", "file",
					 a->logname, "offset", (json_int_t)start, "length", (json_int_t)tl,
					 "sha256", hex, "prefix_hex", prefix);
			if (item == NULL || json_array_append_new(items, item) < 0) {
				berth_err(err, ENOMEM, "out of memory");
				goto out;
			}
			note(a,
			     "the last line of `%s/%s` was torn (%zu bytes at offset %" PRIu64
			     ", an append a crash interrupted): cut off and sealed with a recovery record",
			     a->dir, a->logname, tl, start);
			a->logsize = start;
		} else {
			free(tail);
			if (quarantine_tail(a, hseq, off, items, made, err) < 0)
				goto out;
		}
	}
	/* Pending quarantine files: a writer raises PENDING_FLAG before it cuts
	 * the log, so only a flag, or this handle's first look (what an older
	 * berth left), makes it worth listing the directory. */
	if ((a->pending_flag || !a->tail_seen) && record_pending(a, hseq, made, items, err) < 0)
		goto out;
	if (json_array_size(items) == 0 && a->pending_flag) {
		/* a writer was killed after its head signed the recovery */
		unlinkat(a->dfd, PENDING_FLAG, 0);
		a->pending_flag = false;
	} else if (json_array_size(items) > (a->torn != NULL ? 1U : 0U) && !a->pending_flag &&
		   raise_flag(a, err) < 0) {
		goto out;
	}
	a->tail_seen = true;
	a->seq = hseq;
	strcpy(a->hash, hhash);
	a->head_slot = slot;
	memcpy(a->head_cache, buf, sizeof buf);
	a->head_cached = true;
	if (json_array_size(items) > 0) {
		*recovery = items;
		items = NULL;
	}
	rc = 0;
out:
	json_decref(items);
	berth_aud_free_names(names, n);
	return rc;
}
