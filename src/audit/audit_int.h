/* SPDX-License-Identifier: MIT */
/*
 * audit_int.h - private to src/audit/audit*.c: the open log (struct
 * berth_audit), a record on its way to the log, and the helpers one concern
 * shares with another.  Nothing else includes it; the interface is audit.h.
 *
 * Files, one concern each (audit.c's header comment tells the write path):
 *   audit.c          open and close a log, its head and recovery notices
 *   audit_files.c    the log's files: names, listing, whole-buffer I/O
 *   audit_redact.c   secrets and sensitive keys scrubbed from payloads
 *   audit_record.c   one record: canonical pieces, line, hash; line check
 *   audit_head.c     the signed head (two slots)
 *   audit_recover.c  the tail: the last record, checked against the head
 *   audit_commit.c   writers' queue, the leader's group commit, rotation
 *   audit_verify.c   reading (berth_audit_each) and berth_audit_verify
 *
 * The helpers keep the contracts they had as static functions of one file:
 * a negative return with @err filled (berth_err), unless noted.
 */
#ifndef BERTH_AUDIT_INT_H
#define BERTH_AUDIT_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "audit.h"
#include "../util/buf.h"
#include "../util/sign.h"

#define HEAD_SLOT 512
#define HEAD_TYPE "berth.audit.head/1"
#define ZERO_HASH "0000000000000000000000000000000000000000000000000000000000000000"
#define FILE_PREFIX "audit-"
#define FILE_SUFFIX ".jsonl"
#define FILE_NAME_LEN (sizeof FILE_PREFIX - 1 + 16 + sizeof FILE_SUFFIX - 1)
/* Records moved out of the log: quarantine-<first>-<last>[-<n>].jsonl, <first>
 * and <last> 20 decimal digits; written as QUARANTINE_TMP, then renamed. */
#define QUARANTINE_PREFIX "quarantine-"
#define QUARANTINE_TMP "quarantine.tmp"
/* Exists while a quarantine's recovery record may not be signed yet: a
 * writer that finds it never takes its fast path (audit_recover.c). */
#define PENDING_FLAG "quarantine.pending"

/* A record whose canonical pieces are ready; seq, prev and hash are added by
 * the leader. */
struct prepared {
	char *actor, *kind, *run_id, *payload; /* JCS text of each value */
	uint64_t seq;
	char hash[65];
};

struct request {
	struct prepared *recs;
	size_t n;
	int rc;
	struct berth_error err;
	bool done;
	pthread_cond_t cv; /* this waiter's own: no thundering herd */
	struct request *next;
};

struct berth_audit {
	char dir[4096];
	int dfd, lockfd, headfd, logfd;
	char logname[FILE_NAME_LEN + 1];
	uint64_t logsize;
	uint64_t seq;
	char hash[65];
	int head_slot; /* slot holding the newest head, -1: none */
	char head_cache[2 * HEAD_SLOT];
	bool head_cached;
	uint64_t rotate;
	struct berth_hostkey key;
	char recovered[1024];
	char *torn; /* bytes of a torn last line, still in the file after logsize */
	size_t torn_len;
	bool pending_flag; /* PENDING_FLAG exists: removed once the head signs the recovery */
	bool tail_seen;    /* berth_aud_sync_tail() has looked at the directory once */

	pthread_rwlock_t secrets_lock;
	char **secrets;
	size_t nsecrets;

	pthread_mutex_t mu;
	struct request *queue, **queue_tail;
	bool leader;
};

struct line_fields {
	uint64_t seq;
	const char *prev, *hash; /* 64 hex digits each, not NUL-terminated */
	const char *kind;        /* the kind's canonical text with its quotes */
	size_t kindlen;
};

/* ---- audit_files.c */

/* The name of the log file whose first record is @first_seq. */
void berth_aud_file_name(uint64_t first_seq, char out[FILE_NAME_LEN + 1]);
/* The first seq a log file name claims, or 0 when it is not a log file name. */
uint64_t berth_aud_file_seq(const char *name);
/* Opens @name in @dfd to read it, never through a link and only a regular
 * file (O_NONBLOCK for the open: a FIFO does not block).  The descriptor, or
 * -1 with errno (EINVAL: not a regular file). */
int berth_aud_open_regular(int dfd, const char *name);
/* The error for a failed berth_aud_open_regular() of @dir/@name; -1. */
int berth_aud_open_failed(struct berth_error *err, const char *dir, const char *name);
/* The log files of @dfd, sorted (fixed-width names sort numerically);
 * free with berth_aud_free_names(). */
int berth_aud_list_files(int dfd, char ***names, size_t *n, struct berth_error *err);
void berth_aud_free_names(char **names, size_t n);
/* The first seq a quarantine file name claims, or 0 when it is not one. */
uint64_t berth_aud_quarantine_seq(const char *name);
/* The quarantine files of @dfd, sorted; free with berth_aud_free_names(). */
int berth_aud_list_quarantine(int dfd, char ***names, size_t *n, struct berth_error *err);
/* The hint for a log berth does not extend: where `berth audit verify`
 * says what is wrong, and the command that keeps the damaged log as evidence
 * and starts a new one (`mv DIR DIR.damaged-<UTC time>`); returns -1. */
int berth_aud_damage_hint(struct berth_error *err, const char *dir);
/* The `mv` command of berth_aud_damage_hint() into @buf. */
void berth_aud_damage_mv(char *buf, size_t size, const char *dir);
/* pwrite/pread of all @len bytes at @off; 0, or -1 with errno. */
int berth_aud_write_all_at(int fd, const char *buf, size_t len, off_t off);
int berth_aud_read_all_at(int fd, char *buf, size_t len, off_t off);
/* @s is exactly 64 lowercase hex digits. */
bool berth_aud_is_hex64(const char *s);

/* ---- audit_redact.c */

/* A string value as written: secrets scrubbed, then summarised when long;
 * NULL when out of memory. */
json_t *berth_aud_clean_string(struct berth_audit *a, const char *s, size_t len);

/* ---- audit_record.c */

void berth_aud_prepared_free(struct prepared *p);
/* The canonical pieces of one record (redacted payload) into @p. */
int berth_aud_prepare(struct berth_audit *a, const char *run_id, const char *kind, const char *actor,
		      json_t *payload, struct prepared *p, struct berth_error *err);
/* Appends the canonical line of @p (seq @seq, prev @prev, time @ts) and its
 * newline to @out; sets p->hash. */
int berth_aud_render(struct prepared *p, uint64_t seq, const char *prev, const char *ts,
		     struct berth_buf *out, struct berth_error *err);
/* The fast check of one line without a tree (canonical, the eight members,
 * the hash); fills @f.  0, or -1 with @err (EBADMSG). */
int berth_aud_check_line(const char *line, size_t len, struct line_fields *f, struct berth_error *err);

/* ---- audit_head.c */

/* The newest valid head in @buf (2 slots): 0 with *seq/hash/slot (seq 0,
 * slot -1: none), or -1 with @why set when a slot is signed wrongly or is
 * neither empty nor a head. */
int berth_aud_head_pick(const char *buf, const unsigned char *pub, const struct berth_hostkey *k,
			uint64_t *seq, char hash[65], int *slot, char *why, size_t whylen);
/* Reads both slots (zero-filled past the end of the file). */
int berth_aud_head_read(int fd, char buf[2 * HEAD_SLOT], struct berth_error *err);
/* Signs a->seq/hash and writes it into the slot that is not the newest. */
int berth_aud_head_write(struct berth_audit *a, struct berth_error *err);

/* ---- audit.c */

/* Opens a->headfd (under LOCK_EX): makes it only for a log without records;
 * a log without its head is refused (EBADMSG, the damage hint). */
int berth_aud_open_head(struct berth_audit *a, struct berth_error *err);

/* ---- audit_recover.c */

/* Opens (with @create: makes) log file @name as a->logfd; anything but a
 * regular file of this uid with mode 0600 is refused (EPERM). */
int berth_aud_open_log(struct berth_audit *a, const char *name, bool create, struct berth_error *err);
/* Brings a->seq/hash/logfd/logsize in line with the disk (under LOCK_EX),
 * moving records the signed head does not cover to a quarantine file;
 * *@recovery gets a JSON array of the payloads of the recovery records to
 * write first (one per thing found: a torn line, a quarantine made now, a
 * quarantine an earlier writer made and did not record), or NULL. */
int berth_aud_sync_tail(struct berth_audit *a, json_t **recovery, struct berth_error *err);

/* The active file of a log, for berth_aud_signed_end(). */
struct berth_tail {
	int dfd;         /* the log directory */
	const char *dir; /* its path, for messages */
	int fd;          /* the active file, open to read */
	uint64_t size;   /* its length */
	char **names;    /* the log files, sorted; the last is the active one */
	size_t n;        /* at least 1 */
};
/* Where the records the signed head (@hseq, @hhash) covers end in the
 * active file: 0 with *@off (everything after it was written after the last
 * signed head), or -1 with @err (EBADMSG: record @hseq is not at the tail,
 * the log is damaged; the message says what was found, the hint the way
 * out). */
int berth_aud_signed_end(const struct berth_tail *t, uint64_t hseq, const char *hhash, uint64_t *off,
			 struct berth_error *err);

/* ---- audit_commit.c */

/* Writes @n records (after the recovery records of the array @recovery when
 * not NULL) as one group; the caller holds LOCK_EX and has run
 * berth_aud_sync_tail(). */
int berth_aud_commit_locked(struct berth_audit *a, struct prepared **recs, size_t n, json_t *recovery,
			    struct berth_error *err);
/* flock(2) @op (LOCK_EX to write, LOCK_SH to read) on @fd, the lock file
 * of the log in @dir, waiting at most BERTH_AUDIT_LOCK_TIMEOUT_MS; 0, or -1
 * with @err filled: "cannot lock the audit log `DIR/lock`[ to read it]",
 * with the errno or, when the wait ran out, "another berth process holds it
 * and does not let go", and a hint to find the holder with fuser(1). */
int berth_aud_lock(int fd, int op, const char *dir, struct berth_error *err);
/* LOCK_EX on the log's lock file. */
int berth_aud_lock_ex(struct berth_audit *a, struct berth_error *err);

#endif
