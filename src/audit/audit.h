/* SPDX-License-Identifier: MIT */
/*
 * audit.h - berth's append-only, hash-chained, signed audit trail.
 *
 * Layout (docs/audit.md is the normative description):
 *   DIR/                         0700; default $XDG_STATE_HOME/berth/audit
 *                                ($HOME/.local/state/berth/audit; HOME
 *                                falling back to the passwd entry), or
 *                                $BERTH_AUDIT_DIR when set (tests)
 *   DIR/audit-<SEQ>.jsonl        0600; JSON Lines, <SEQ> = the first record's
 *                                seq, 16 decimal digits; the highest is the
 *                                active file, older ones are rotated
 *   DIR/head                     0600; the signed head, two fixed 512-byte
 *                                slots (the newer valid one counts)
 *   DIR/lock                     0600; flock(2) LOCK_EX for writers,
 *                                LOCK_SH for readers
 *
 * A record is one line: the RFC 8785 canonical JSON (src/util/jcs.h) of
 *   {"actor","hash","kind","payload","prev","run_id","seq","ts"}
 * seq      1, 2, 3... across all files
 * ts       RFC 3339 UTC with milliseconds, "2026-11-29T09:14:00.123Z"
 * prev     the previous record's hash; 64 "0" for seq 1
 * hash     lowercase hex SHA-256 of JCS(the record without its "hash"
 *          member) -- prev is a member, so the hash covers prev and the
 *          record's canonical JSON
 *
 * The head is {"hash","pub","seq","sig","type":"berth.audit.head/1"}: sig is
 * the hex Ed25519 signature (host key, src/util/sign.h) over
 * JCS({"hash":H,"seq":N,"type":"berth.audit.head/1"}).  It is rewritten after
 * every group commit, after the log's fdatasync, so a truncated tail (head
 * seq beyond the log), a replaced file (hash mismatch) or a forged head (bad
 * signature) is detected by verification.
 */
#ifndef BERTH_AUDIT_H
#define BERTH_AUDIT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"

/* Default size above which the active file is rotated (bytes). */
#define BERTH_AUDIT_ROTATE_DEFAULT (64ULL << 20)
/* The most $BERTH_AUDIT_ROTATE_BYTES may ask for: 1 TiB (its least is 1). */
#define BERTH_AUDIT_ROTATE_MAX (1ULL << 40)
/* Strings in a payload longer than this are summarised (bytes). */
#define BERTH_AUDIT_STRING_MAX 4096
/* Kind of the record berth writes when it repairs a crash: a torn line cut
 * off, records after the signed head moved to a quarantine file, a
 * quarantine file an earlier writer did not record. */
#define BERTH_AUDIT_KIND_RECOVERY "audit.recovery"

struct berth_audit;

/*
 * berth_audit_dir - the default audit directory: $BERTH_AUDIT_DIR if set and
 * absolute, else $XDG_STATE_HOME/berth/audit, else
 * $HOME/.local/state/berth/audit, into @buf of @size bytes.
 * Returns 0, or -1 with @err filled (EINVAL: no absolute base path;
 * ENAMETOOLONG).
 */
int berth_audit_dir(char *buf, size_t size, struct berth_error *err);

/*
 * berth_audit_open - open (creating when missing) the audit log in @dir
 * (NULL: berth_audit_dir()) for appending, and load the host key (created on
 * first use, src/util/sign.h).
 * Under the exclusive lock it finds the record the signed head names at the
 * tail of the active file and repairs what a crash left after it, each
 * repair sealed with a BERTH_AUDIT_KIND_RECOVERY record (docs/audit.md,
 * Crashes): a torn last line alone is cut off (the payload: offset, length,
 * SHA-256, first bytes in hex); anything else after the head's record
 * (records of a group killed between the log's fdatasync and the head's,
 * lines that do not verify, a torn line after them) is moved byte for byte
 * to a quarantine file; a quarantine file an earlier writer made and did not
 * record is recorded.  Each is also reported through
 * berth_audit_recovered().
 * Returns the handle, or NULL with @err filled:
 *   EACCES/EPERM  the directory or a file cannot be created or opened, or is
 *                 not owned by the caller, or is group/other accessible;
 *   EBADMSG       the log is damaged at its tail (the head's record is
 *                 changed, cut short or missing, the head file is gone, a
 *                 head slot is damaged or does not verify): berth refuses to
 *                 extend it; the hint names `berth audit verify` and the
 *                 `mv` that keeps the log and starts a new one;
 *   ENOSPC/EIO    writing the recovery record failed (nothing half-written);
 *   errors of berth_hostkey_load().
 */
struct berth_audit *berth_audit_open(const char *dir, struct berth_error *err);

/*
 * berth_audit_recovered - a one-line description of what open() repaired,
 * or NULL when nothing was.  Valid until berth_audit_close().
 */
const char *berth_audit_recovered(const struct berth_audit *a);

/*
 * berth_audit_set_rotate - rotate the active file once it is at least @bytes
 * long (default BERTH_AUDIT_ROTATE_DEFAULT, or $BERTH_AUDIT_ROTATE_BYTES).
 * 0 means never.
 */
void berth_audit_set_rotate(struct berth_audit *a, uint64_t bytes);

/* How long an append or a reader waits for another process's lock on the
 * log before it fails (ETIMEDOUT), in ms; $BERTH_AUDIT_LOCK_TIMEOUT_MS
 * overrides it. */
#define BERTH_AUDIT_LOCK_TIMEOUT_MS 10000
/* The most $BERTH_AUDIT_LOCK_TIMEOUT_MS may ask for: an hour. */
#define BERTH_AUDIT_LOCK_TIMEOUT_MAX_MS 3600000

/* Declared secrets at least this long are replaced wherever they occur
 * inside a string; shorter ones only where a whole string equals them. */
#define BERTH_AUDIT_SECRET_SUBSTRING_MIN 6

/*
 * berth_audit_add_secret - declare a secret value: every occurrence of it in
 * any string of later records (run_id, kind, actor, payload keys and values)
 * is replaced with "[secret]" before the record is hashed or written; a
 * value shorter than BERTH_AUDIT_SECRET_SUBSTRING_MIN bytes only where it
 * is a whole string (a short value such as "1" would otherwise blank every
 * string holding that character; it is no secret worth the name).
 * Empty values are ignored.  Returns 0, or -1 with @err filled
 * (ENOMEM).  Thread-safe.
 */
int berth_audit_add_secret(struct berth_audit *a, const char *value, struct berth_error *err);

/*
 * berth_audit_redact - the payload as it would be written: a deep copy of
 * @payload with declared secrets replaced (also in member names), values of
 * members whose names look like credentials (containing token, passw,
 * secret, apikey, api_key, api-key, private_key, privatekey, private-key,
 * cookie, authoriz, credential, bearer, session or signature, ending in
 * "key" or "auth", or "pwd"; case-insensitive) replaced with "[redacted]",
 * strings longer than BERTH_AUDIT_STRING_MAX bytes summarised as
 * "<first 256 bytes>... [N bytes, sha256:HEX]", and numbers of magnitude
 * 2^53 or more turned into strings of their digits (a JSON number is a
 * double; RFC 7493 section 2.2).
 * Returns a new reference, or NULL with @err filled (ENOMEM).
 */
json_t *berth_audit_redact(struct berth_audit *a, const json_t *payload, struct berth_error *err);

/*
 * berth_audit_append - append one record, durably.
 * @run_id, @kind, @actor: non-empty UTF-8 strings (kind e.g. "run.start",
 *          "policy", "run.stop"; actor e.g. "berth", "user:1000")
 * @payload: a JSON object or NULL ({}); borrowed; redacted as
 *          berth_audit_redact() before it is hashed
 * @seq_out, @hash_out: the record's seq and hash (each may be NULL)
 * On return 0 the record and the signed head naming it are on stable storage
 * (fdatasync).  Concurrent appends from threads sharing @a are group-committed
 * (one write and one fdatasync for all records queued while the previous
 * group was syncing); other processes are serialised with flock(2).
 * Returns 0, or -1 with @err filled:
 *   EINVAL       an empty or non-UTF-8 field, or a payload that JCS refuses;
 *   ENOSPC, EIO, EDQUOT, EFBIG...  the write or fdatasync failed: the log is
 *                truncated back to its previous length and the head is left
 *                as it was, so nothing half-written remains (fail closed);
 *   EBADMSG      another writer left the log in a state that does not chain
 *                (the tail changed under the lock without a valid head).
 * Thread-safe.
 */
int berth_audit_append(struct berth_audit *a, const char *run_id, const char *kind, const char *actor,
		       json_t *payload, uint64_t *seq_out, char hash_out[65], struct berth_error *err);

/* One record of a batch for berth_audit_append_batch(). */
struct berth_audit_entry {
	const char *run_id, *kind, *actor; /* as for berth_audit_append */
	json_t *payload;                   /* borrowed, may be NULL */
	uint64_t seq;                      /* out */
	char hash[65];                     /* out */
};

/*
 * berth_audit_append_batch - append @n records in this order as one group
 * commit (one write, one fdatasync of the log, one of the head): all are
 * durable on return 0, or none was written (-1, errors as
 * berth_audit_append).  `berth run` writes run.start and policy this way.
 */
int berth_audit_append_batch(struct berth_audit *a, struct berth_audit_entry *e, size_t n,
			     struct berth_error *err);

/*
 * berth_audit_head - the last record's seq and hash as this handle last saw
 * them (after open or its last append; 0 and 64 "0" for an empty log).
 * Returns 0, or -1 with @err filled (the head file cannot be read).
 */
int berth_audit_head(struct berth_audit *a, uint64_t *seq, char hash[65], struct berth_error *err);

/* berth_audit_close - release the handle (and the key material); NULL is a no-op. */
void berth_audit_close(struct berth_audit *a);

/* ---- reading and verifying ---- */

/* One record as read back; pointers are valid during the callback only. */
struct berth_audit_record {
	uint64_t seq;
	const char *ts;
	const char *run_id;
	const char *kind;
	const char *actor;
	const json_t *payload;
	const char *prev;   /* 64 hex digits */
	const char *hash;   /* 64 hex digits */
	const json_t *json; /* the whole record object */
	const char *file;   /* path of the file it was read from */
	uint64_t line;      /* 1-based line number in that file */
};

/*
 * berth_audit_parse_line - parse one log line (without its newline) of @len
 * bytes and check its own hash (not its link to the previous record).
 * Returns the record object (new reference) with the fields of @r pointing
 * into it (file/line left as they were), or NULL with @err filled: EBADMSG
 * and a reason ("not canonical JSON (RFC 8785) at byte N: ...", "not a
 * record: an object with exactly the members ...", "member `seq` is not a
 * positive integer", "hash does not match the content ...").
 * Never crashes on any input (fuzzed: fuzz/fuzz_audit.c).
 */
json_t *berth_audit_parse_line(const char *line, size_t len, struct berth_audit_record *r,
			       struct berth_error *err);

/*
 * berth_audit_each - call @fn for every record in @dir (NULL: the default)
 * in order, oldest first, under a shared lock; stops when @fn returns
 * non-zero (that value is returned).  Lines of any length are read.
 * Returns 0 after the last record, @fn's non-zero value, or -1 with @err
 * filled (the directory or a file cannot be read, EBADMSG for a line that
 * does not parse: the message names file:line).  An absent directory is an
 * empty log.
 */
int berth_audit_each(const char *dir, int (*fn)(const struct berth_audit_record *r, void *ctx), void *ctx,
		     struct berth_error *err);

struct berth_audit_verdict {
	bool intact;
	uint64_t records;       /* records read and checked */
	char head[65];          /* hash of the last record (intact) */
	uint64_t broken_record; /* 1-based record number where it broke */
	char file[4096];        /* file and line where it broke */
	uint64_t line;
	char reason[512];    /* what is wrong there */
	uint64_t recoveries; /* BERTH_AUDIT_KIND_RECOVERY records seen */
	/* when not intact: what to do, and what the next writer does ("nothing
	 * by hand: the next berth write ...", or the command that keeps a
	 * damaged log and starts a new one) */
	char advice[8600];
};

/*
 * berth_audit_verify - check the whole chain in @dir (NULL: the default)
 * under a shared lock: every line parses, is canonical and matches its hash,
 * seq counts up by one from 1 across files in name order, each prev is the
 * previous hash, file names match their first seq (each file is mapped and
 * checked in one chunk per CPU, up to 4, joined in order), the signed head
 * (checked with @pub, NULL: the host key's public half) names the last
 * record's seq and hash, and every quarantine file is named by a recovery
 * record.  A break after the signed head's record (a torn line, records or
 * lines no head covers) is what a crash leaves and the next writer repairs;
 * one at or before it is damage: v->advice says which, and what to do.
 * Returns 0 with @v filled (v->intact tells the result), or -1 with @err
 * filled when verification could not run (directory unreadable, ENOMEM,
 * ELIBACC: libsodium or, after berth_sha256_prefer_bulk(), libcrypto
 * unusable).
 */
int berth_audit_verify(const char *dir, const unsigned char *pub, struct berth_audit_verdict *v,
		       struct berth_error *err);

/*
 * berth_audit_record_hash - the hash a record object (with or without a
 * "hash" member, which is ignored) must carry: lowercase hex SHA-256 of
 * JCS(record without "hash").  Returns 0, or -1 with @err filled.
 */
int berth_audit_record_hash(const json_t *record, char hash[65], struct berth_error *err);

/*
 * berth_audit_new_run_id - a fresh run id: 16 lowercase hex digits from
 * getrandom(2) (64 bits), and a NUL, into @out.
 */
void berth_audit_new_run_id(char out[17]);

/*
 * berth_audit_now_rfc3339 - the current time as RFC 3339 UTC with
 * milliseconds ("2026-11-29T09:14:00.123Z") into @buf.
 */
void berth_audit_now_rfc3339(char buf[32]);

#endif
