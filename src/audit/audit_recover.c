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

/*
 * The log is ahead of its signed head: records @hseq+1.. of the active file
 * were written but no head signed them -- a crash between the log's sync and
 * the head's (their appends never returned), or lines someone appended by
 * hand.  They are not taken into the chain: they are moved, byte for byte,
 * to `quarantine-<first>-<last>.jsonl` (0600) beside the log, the log is cut
 * back to the end of record @hseq, and @recovery says where they went.  When
 * they do not all lie in the active file, or record @hseq (in the active
 * file, or the last of @prev_name, the file before it) is not the one the
 * head signed (@hhash), berth refuses to extend the log.
 */
static int quarantine_tail(struct berth_audit *a, uint64_t hseq, const char *hhash, const char *prev_name,
			   uint64_t lseq, json_t **recovery, struct berth_error *err)
{
	uint64_t size = a->logsize, off = 0, first = 0;
	char *buf = NULL, qname[96], hex[65], hash[65] = "";
	int qfd = -1, rc = -1;

	if (fstat(a->logfd, &(struct stat){0}) < 0 || size > (1ULL << 31))
		return berth_err(err, EFBIG, "the audit log `%s/%s` is too large to repair", a->dir,
				 a->logname);
	buf = malloc(size ? size : 1);
	if (buf == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	if (size > 0 && berth_aud_read_all_at(a->logfd, buf, size, 0) < 0) {
		berth_err(err, errno, "cannot read `%s`", a->logname);
		goto out;
	}
	/* the end of the line whose seq is @hseq (0 when it is in an earlier file) */
	for (uint64_t i = 0; i < size;) {
		char *nl = memchr(buf + i, '\n', size - i);
		uint64_t end = nl != NULL ? (uint64_t)(nl - buf) + 1 : size;
		json_t *rec = json_loadb(buf + i, end - i, 0, NULL);
		uint64_t seq = rec != NULL ? (uint64_t)json_integer_value(json_object_get(rec, "seq")) : 0;
		json_decref(rec);
		if (first == 0)
			first = seq;
		/* seq 0 is a line that does not parse (a torn tail): never the
		 * head's record, even when no head was signed (@hseq 0) */
		if (seq != 0 && seq == hseq) {
			struct berth_audit_record r = {0};
			struct berth_error e2 = {0};
			json_t *o = berth_audit_parse_line(buf + i, end - i - (nl != NULL), &r, &e2);

			snprintf(hash, sizeof hash, "%s", o != NULL ? r.hash : "");
			json_decref(o);
			off = end;
		}
		i = end;
	}
	if (off == 0 && hseq > 0 && first == hseq + 1) {
		uint64_t pseq = 0;

		if (prev_name == NULL || last_record(a->dfd, prev_name, -1, 0, &pseq, hash, err) < 0 ||
		    pseq != hseq)
			hash[0] = '\0';
	}
	if ((off != 0 || (hseq > 0 && first == hseq + 1)) && strcmp(hash, hhash) != 0) {
		berth_err(err, EBADMSG,
			  "the audit log in `%s` holds another record %" PRIu64
			  " than its signed head names: records were"
			  " removed or the file was replaced",
			  a->dir, hseq);
		berth_err_hint(err, "run `berth audit verify`; berth does not extend a broken log");
		goto out;
	}
	if (off == 0 && first != hseq + 1) {
		berth_err(err, EBADMSG,
			  "records %" PRIu64 "..%" PRIu64
			  " of the audit log in `%s` are not covered by its signed head and"
			  " do not all lie in the active file",
			  hseq + 1, lseq, a->dir);
		berth_err_hint(err, "run `berth audit verify`; berth does not extend such a log");
		goto out;
	}
	snprintf(qname, sizeof qname, "quarantine-%020" PRIu64 "-%020" PRIu64 ".jsonl", hseq + 1, lseq);
	qfd = openat(a->dfd, qname, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (qfd < 0 || berth_aud_write_all_at(qfd, buf + off, (size_t)(size - off), 0) < 0 ||
	    fdatasync(qfd) < 0) {
		berth_err(err, errno, "cannot move unsigned records of the audit log to `%s/%s`", a->dir,
			  qname);
		if (qfd >= 0)
			unlinkat(a->dfd, qname, 0);
		goto out;
	}
	if (ftruncate(a->logfd, (off_t)off) < 0 || fdatasync(a->logfd) < 0 || fsync(a->dfd) < 0) {
		berth_err(err, errno, "cannot cut the audit log `%s/%s` back to its signed head", a->dir,
			  a->logname);
		goto out;
	}
	if (berth_sha256_hex(buf + off, (size_t)(size - off), hex, err) < 0)
		goto out;
	*recovery = json_pack("{s:s, s:I, s:I, s:s, s:I, s:s}", "reason", "log ahead of the signed head",
			      "head_seq", (json_int_t)hseq, "log_seq", (json_int_t)lseq, "quarantined", qname,
			      "bytes", (json_int_t)(size - off), "sha256", hex);
	snprintf(a->recovered + strlen(a->recovered), sizeof a->recovered - strlen(a->recovered),
		 "%srecords %" PRIu64 "..%" PRIu64
		 " of `%s` were written after the last signed head (a crash between "
		 "the two syncs, or lines added by hand): moved to `%s`, not taken into the chain",
		 a->recovered[0] ? "; " : "", hseq + 1, lseq, a->dir, qname);
	a->logsize = off;
	rc = 0;
out:
	if (qfd >= 0)
		close(qfd);
	free(buf);
	return rc;
}

/*
 * Bring a->seq/hash/logfd/logsize in line with the disk (under LOCK_EX).
 * A torn last line (kept in a->torn, overwritten by the next group) and a
 * log ahead of the head are noted: @recovery
 * gets a (JSON object) description for a recovery record, else NULL.
 */
int berth_aud_sync_tail(struct berth_audit *a, json_t **recovery, struct berth_error *err)
{
	char buf[2 * HEAD_SLOT], why[256], next[FILE_NAME_LEN + 1];
	char hhash[65], lhash[65];
	uint64_t hseq = 0, lseq = 0;
	char **names = NULL;
	size_t n = 0;
	struct stat st;
	int slot, rc = -1;

	*recovery = NULL;
	strcpy(lhash, ZERO_HASH);
	if (berth_aud_head_read(a->headfd, buf, err) < 0)
		return -1;
	/* Fast path: nothing changed since our own last write. */
	berth_aud_file_name(a->seq + 1, next);
	if (a->head_cached && a->logfd >= 0 && memcmp(buf, a->head_cache, sizeof buf) == 0 &&
	    fstat(a->logfd, &st) == 0 && (uint64_t)st.st_size == a->logsize &&
	    faccessat(a->dfd, next, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (berth_aud_head_pick(buf, a->key.pub, &a->key, &hseq, hhash, &slot, why, sizeof why) < 0) {
		berth_err(err, EBADMSG, "the audit head in `%s` is forged or damaged: %s", a->dir, why);
		if (strstr(why, "made by another key") != NULL)
			return berth_err_hint(err,
					      "the host key in `%s` did not sign this log: if "
					      "XDG_CONFIG_HOME changed, set it back;"
					      " for a separate log set BERTH_AUDIT_DIR; `berth audit verify "
					      "--key PUB.pem` checks it",
					      a->key.dir);
		return berth_err_hint(err, "run `berth audit verify`; the log cannot be extended");
	}
	if (berth_aud_list_files(a->dfd, &names, &n, err) < 0)
		return -1;
	if (n == 0) {
		berth_aud_file_name(1, next);
		if (berth_aud_open_log(a, next, true, err) < 0)
			goto out;
	} else if (strcmp(a->logname, names[n - 1]) != 0 || a->logfd < 0) {
		if (berth_aud_open_log(a, names[n - 1], false, err) < 0)
			goto out;
	}
	if (fstat(a->logfd, &st) < 0) {
		berth_err(err, errno, "cannot stat `%s`", a->logname);
		goto out;
	}
	a->logsize = (uint64_t)st.st_size;
	if (a->logsize > 0) {
		char last;

		if (berth_aud_read_all_at(a->logfd, &last, 1, (off_t)a->logsize - 1) < 0) {
			berth_err(err, errno, "cannot read `%s`", a->logname);
			goto out;
		}
		if (last != '\n') {
			uint64_t start;
			char *torn = read_line_before(a->logfd, a->logsize, &start, err), hex[65],
			     prefix[129];
			size_t tl = (size_t)(a->logsize - start);

			if (torn == NULL)
				goto out;
			if (berth_sha256_hex(torn, tl, hex, err) < 0) {
				free(torn);
				goto out;
			}
			berth_hex((unsigned char *)torn, tl < 64 ? tl : 64, prefix);
			free(a->torn);
			a->torn = torn;
			a->torn_len = tl;
			*recovery = json_pack("{s:s, s:s, s:I, s:I, s:s, s:s}", "reason", "torn last line",
					      "file", a->logname, "offset", (json_int_t)start, "length",
					      (json_int_t)tl, "sha256", hex, "prefix_hex", prefix);
			snprintf(
			    a->recovered, sizeof a->recovered,
			    "the last line of `%s/%s` was torn (%zu bytes at offset %" PRIu64
			    ", an append a crash interrupted): cut off and sealed with a recovery record",
			    a->dir, a->logname, tl, start);
			/* The next group overwrites it, starting with the recovery
			 * record; if that fails, the torn bytes are put back. */
			a->logsize = start;
		}
	}
	/* The tail record: the active file's last, or the previous file's. */
	for (size_t i = n;; i--) {
		const char *name = i == 0 ? NULL : names[i - 1];

		if (name == NULL)
			break;
		if (last_record(a->dfd, name, strcmp(name, a->logname) == 0 ? a->logfd : -1, a->logsize,
				&lseq, lhash, err) < 0)
			goto out;
		if (lseq != 0)
			break;
	}
	if (lseq < hseq || (lseq == hseq && strcmp(lhash, hhash) != 0)) {
		berth_err(err, EBADMSG,
			  "the audit log in `%s` ends at record %" PRIu64
			  " but its signed head names record %" PRIu64
			  ": records were removed or the file was replaced",
			  a->dir, lseq, hseq);
		berth_err_hint(err, "run `berth audit verify`; berth does not extend a broken log");
		goto out;
	}
	if (lseq > hseq) {
		/* A torn line after them goes to the quarantine too. */
		if (a->torn != NULL) {
			a->logsize += a->torn_len;
			free(a->torn);
			a->torn = NULL;
			a->torn_len = 0;
			json_decref(*recovery);
			*recovery = NULL;
			a->recovered[0] = '\0';
		}
		if (quarantine_tail(a, hseq, hhash, n >= 2 ? names[n - 2] : NULL, lseq, recovery, err) < 0)
			goto out;
		lseq = hseq;
		strcpy(lhash, hhash);
	}
	a->seq = lseq;
	strcpy(a->hash, lhash);
	a->head_slot = slot;
	memcpy(a->head_cache, buf, sizeof buf);
	a->head_cached = true;
	rc = 0;
out:
	berth_aud_free_names(names, n);
	return rc;
}
