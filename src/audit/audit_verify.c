/* SPDX-License-Identifier: MIT */
/*
 * audit_verify.c - reading and verifying the audit log (audit.c): berth_audit_each and
 * berth_audit_verify, the chain checked in parallel chunks.
 */

#include <inttypes.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "../util/cleanup.h"

#include "audit_int.h"

/* ---- reading and verifying ---- */

struct reader {
	int dfd, lockfd;
	char dir[4096];
	char **names;
	size_t n;
};

static void reader_close(struct reader *r)
{
	if (r->lockfd >= 0) {
		flock(r->lockfd, LOCK_UN);
		close(r->lockfd);
	}
	if (r->dfd >= 0)
		close(r->dfd);
	berth_aud_free_names(r->names, r->n);
}

/* Returns 1 open, 0 no log directory, -1 error. */
static int reader_open(struct reader *r, const char *dir, struct berth_error *err)
{
	memset(r, 0, sizeof *r);
	r->dfd = r->lockfd = -1;
	if (dir != NULL)
		snprintf(r->dir, sizeof r->dir, "%s", dir);
	else if (berth_audit_dir(r->dir, sizeof r->dir, err) < 0)
		return -1;
	r->dfd = open(r->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r->dfd < 0) {
		if (errno == ENOENT)
			return 0;
		return berth_err(err, errno, "cannot open the audit directory `%s`", r->dir);
	}
	r->lockfd = berth_aud_open_regular(r->dfd, "lock");
	if (r->lockfd < 0 && errno == EINVAL)
		return berth_aud_open_failed(err, r->dir, "lock");
	if (r->lockfd >= 0 && berth_aud_lock(r->lockfd, LOCK_SH, r->dir, err) < 0)
		return -1;
	if (berth_aud_list_files(r->dfd, &r->names, &r->n, err) < 0)
		return -1;
	return 1;
}

/*
 * Walk every line of every file.  @fn gets the raw line (without '\n'), its
 * length, whether it ended in '\n', the file name and line number; a
 * non-zero return stops the walk and is returned.
 */
static int walk(struct reader *r,
		int (*fn)(const char *line, size_t len, bool nl, const char *file, uint64_t lineno,
			  void *ctx),
		void *ctx, struct berth_error *err)
{
	char *buf = NULL;
	size_t cap = 0;
	int rc = 0;

	for (size_t i = 0; i < r->n && rc == 0; i++) {
		int fd = berth_aud_open_regular(r->dfd, r->names[i]);
		FILE *f;
		uint64_t lineno = 0;
		ssize_t len;

		if (fd < 0) {
			free(buf);
			return berth_aud_open_failed(err, r->dir, r->names[i]);
		}
		f = fdopen(fd, "r");
		if (f == NULL) {
			close(fd);
			free(buf);
			return berth_err(err, errno, "cannot read `%s/%s`", r->dir, r->names[i]);
		}
		while (rc == 0 && (len = getdelim(&buf, &cap, '\n', f)) > 0) {
			bool nl = buf[len - 1] == '\n';

			rc = fn(buf, (size_t)len - (nl ? 1 : 0), nl, r->names[i], ++lineno, ctx);
		}
		if (rc == 0 && ferror(f)) {
			rc = -1;
			berth_err(err, errno ? errno : EIO, "cannot read `%s/%s`", r->dir, r->names[i]);
		}
		fclose(f);
	}
	free(buf);
	return rc;
}

struct each_ctx {
	int (*fn)(const struct berth_audit_record *r, void *ctx);
	void *ctx;
	const char *dir;
	char path[4200];
	struct berth_error *err;
};

static int each_line(const char *line, size_t len, bool nl, const char *file, uint64_t lineno, void *p)
{
	struct each_ctx *c = p;
	struct berth_audit_record r = {0};
	json_t *o;
	int rc;

	snprintf(c->path, sizeof c->path, "%s/%s", c->dir, file);
	if (!nl) {
		berth_err(c->err, EBADMSG, "`%s:%" PRIu64 "`: torn last line (an interrupted append)",
			  c->path, lineno);
		return -1;
	}
	o = berth_audit_parse_line(line, len, &r, c->err);
	if (o == NULL) {
		berth_err_wrap(c->err, "`%s:%" PRIu64 "`", c->path, lineno);
		return -1;
	}
	r.file = c->path;
	r.line = lineno;
	rc = c->fn(&r, c->ctx);
	json_decref(o);
	return rc;
}

int berth_audit_each(const char *dir, int (*fn)(const struct berth_audit_record *r, void *ctx), void *ctx,
		     struct berth_error *err)
{
	struct reader r;
	struct each_ctx c = {.fn = fn, .ctx = ctx, .err = err};
	int rc = reader_open(&r, dir, err);

	if (rc <= 0) {
		reader_close(&r);
		return rc;
	}
	c.dir = r.dir;
	rc = walk(&r, each_line, &c, err);
	reader_close(&r);
	return rc;
}

struct verify_ctx {
	struct berth_audit_verdict *v;
	const char *dir;
	char **qnames; /* quarantine files the recovery records name */
	size_t nq;
	char last_hash[65];
	char last_file[FILE_NAME_LEN + 1];
	uint64_t last_line;
	const char *cur_file;
};

static int broken(struct berth_audit_verdict *v, const char *dir, const char *file, uint64_t line,
		  uint64_t record, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int broken(struct berth_audit_verdict *v, const char *dir, const char *file, uint64_t line,
		  uint64_t record, const char *fmt, ...)
{
	va_list ap;

	v->intact = false;
	v->broken_record = record;
	snprintf(v->file, sizeof v->file, "%s/%s", dir, file);
	v->line = line;
	va_start(ap, fmt);
	vsnprintf(v->reason, sizeof v->reason, fmt, ap);
	va_end(ap);
	return 1;
}

/*
 * Verification of one file runs over an mmap(2) of it, split at line
 * boundaries into one chunk per CPU (at most 4; files under 1 MiB: one).
 * Each chunk checks its lines and the chain inside it; the chunks are then
 * joined in order, so the verdict and its message are those of a
 * line-by-line walk.
 */
struct chunk {
	const char *p;
	size_t len;
	bool whole_file_start; /* the chunk starts the file (line 1) */
	/* results */
	uint64_t lines, records, recoveries;
	uint64_t first_seq, last_seq;
	char first_prev[64], last_hash[64];
	char **qnames; /* "quarantined" of the recovery records */
	size_t nq;
	bool broken;
	uint64_t broken_line; /* 0-based line index in the chunk */
	uint64_t broken_want; /* record number expected there, relative: records before it in the chunk */
	char reason[512];
};

static void chunk_fail(struct chunk *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void chunk_fail(struct chunk *k, const char *fmt, ...)
{
	va_list ap;

	k->broken = true;
	k->broken_line = k->lines;
	k->broken_want = k->records;
	va_start(ap, fmt);
	vsnprintf(k->reason, sizeof k->reason, fmt, ap);
	va_end(ap);
}

static void *chunk_check(void *arg)
{
	struct chunk *k = arg;
	const char *p = k->p, *end = k->p + k->len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		struct berth_error err = {0};
		struct line_fields f;

		if (nl == NULL) {
			chunk_fail(k, "torn last line of %zu bytes", (size_t)(end - p));
			return NULL;
		}
		if (berth_aud_check_line(p, (size_t)(nl - p), &f, &err) < 0) {
			/* a verdict, not an error: without ": Bad message" */
			size_t ml = strlen(err.msg), sl = strlen(strerror(EBADMSG)) + 2;

			if (ml > sl && strcmp(err.msg + ml - sl + 2, strerror(EBADMSG)) == 0)
				err.msg[ml - sl] = '\0';
			chunk_fail(k, "%s", err.msg);
			return NULL;
		}
		if (k->records == 0) {
			k->first_seq = f.seq;
			memcpy(k->first_prev, f.prev, 64);
		} else if (f.seq != k->last_seq + 1) {
			chunk_fail(k,
				   "seq %" PRIu64 " where %" PRIu64
				   " was expected: records were deleted, reordered or inserted",
				   f.seq, k->last_seq + 1);
			return NULL;
		} else if (memcmp(f.prev, k->last_hash, 64) != 0) {
			chunk_fail(k, "prev does not name the previous record's hash: records were removed, "
				      "reordered or replaced");
			return NULL;
		}
		if (f.kindlen == sizeof BERTH_AUDIT_KIND_RECOVERY + 1 &&
		    memcmp(f.kind + 1, BERTH_AUDIT_KIND_RECOVERY, sizeof BERTH_AUDIT_KIND_RECOVERY - 1) ==
			0) {
			json_t *o = json_loadb(p, (size_t)(nl - p), 0, NULL);
			const char *q =
			    json_string_value(json_object_get(json_object_get(o, "payload"), "quarantined"));
			char **more = q != NULL ? realloc(k->qnames, (k->nq + 1) * sizeof *more) : NULL;

			if (more != NULL) {
				k->qnames = more;
				if ((k->qnames[k->nq] = strdup(q)) != NULL)
					k->nq++;
			}
			json_decref(o);
			k->recoveries++;
		}
		k->last_seq = f.seq;
		memcpy(k->last_hash, f.hash, 64);
		k->records++;
		k->lines++;
		p = nl + 1;
	}
	return NULL;
}

/* Join chunk @k to the verdict so far.  Returns 1 when broken. */
static int chunk_join(struct verify_ctx *c, const char *file, uint64_t line0, struct chunk *k)
{
	struct berth_audit_verdict *v = c->v;
	uint64_t want = v->records + 1;

	if (k->records > 0 || (k->broken && k->broken_line > 0)) {
		if (k->first_seq != want)
			return broken(v, c->dir, file, line0 + 1, want,
				      "seq %" PRIu64 " where %" PRIu64
				      " was expected: records were deleted, reordered or inserted",
				      k->first_seq, want);
		if (memcmp(k->first_prev, c->last_hash, 64) != 0)
			return broken(v, c->dir, file, line0 + 1, want,
				      "prev does not name the previous record's hash: records were removed, "
				      "reordered or replaced");
		if (k->whole_file_start && berth_aud_file_seq(file) != k->first_seq)
			return broken(v, c->dir, file, 1, want,
				      "the file name says its first record is %" PRIu64 ", it is %" PRIu64,
				      berth_aud_file_seq(file), k->first_seq);
	}
	if (k->broken)
		return broken(v, c->dir, file, line0 + k->broken_line + 1, v->records + k->broken_want + 1,
			      "%s", k->reason);
	if (k->records > 0) {
		memcpy(c->last_hash, k->last_hash, 64);
		c->last_hash[64] = '\0';
		snprintf(c->last_file, sizeof c->last_file, "%s", file);
		c->last_line = line0 + k->lines;
	}
	v->records += k->records;
	v->recoveries += k->recoveries;
	for (size_t i = 0; i < k->nq; i++) {
		char **more = realloc(c->qnames, (c->nq + 1) * sizeof *more);

		if (more == NULL)
			break;
		c->qnames = more;
		c->qnames[c->nq++] = k->qnames[i];
		k->qnames[i] = NULL;
	}
	return 0;
}

static int verify_file(struct reader *r, const char *name, struct verify_ctx *c, struct berth_error *err)
{
	cleanup_close int fd = berth_aud_open_regular(r->dfd, name);
	struct chunk k[4];
	pthread_t tid[4];
	size_t nk, len;
	struct stat st;
	long cpus;
	char *map;
	int rc = 0;
	uint64_t line0 = 0;

	if (fd < 0)
		return berth_aud_open_failed(err, r->dir, name);
	if (fstat(fd, &st) < 0)
		return berth_err(err, errno, "cannot stat `%s/%s`", r->dir, name);
	len = (size_t)st.st_size;
	if (len == 0)
		return 0;
	map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return berth_err(err, errno, "cannot map `%s/%s`", r->dir, name);
	madvise(map, len, MADV_SEQUENTIAL);
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	nk = len < (1u << 20) || cpus < 2 ? 1 : cpus > 4 ? 4 : (size_t)cpus;
	/* Chunk boundaries just after a newline. */
	{
		size_t start = 0;

		for (size_t i = 0; i < nk; i++) {
			size_t end = i + 1 == nk ? len : len / nk * (i + 1);
			const char *nl;

			if (end < start)
				end = start;
			if (i + 1 < nk) {
				nl = memchr(map + end, '\n', len - end);
				end = nl == NULL ? len : (size_t)(nl - map) + 1;
			}
			memset(&k[i], 0, sizeof k[i]);
			k[i].p = map + start;
			k[i].len = end - start;
			k[i].whole_file_start = i == 0;
			start = end;
		}
	}
	for (size_t i = 1; i < nk; i++)
		if (pthread_create(&tid[i], NULL, chunk_check, &k[i]) != 0)
			chunk_check(&k[i]), tid[i] = 0;
	chunk_check(&k[0]);
	for (size_t i = 1; i < nk; i++)
		if (tid[i] != 0)
			pthread_join(tid[i], NULL);
	for (size_t i = 0; i < nk && rc == 0; i++) {
		rc = chunk_join(c, name, line0, &k[i]);
		line0 += k[i].lines;
	}
	for (size_t i = 0; i < nk; i++) {
		for (size_t j = 0; j < k[i].nq; j++)
			free(k[i].qnames[j]);
		free(k[i].qnames);
	}
	munmap(map, len);
	return rc;
}

static int verify_files(struct reader *r, struct verify_ctx *c, struct berth_error *err)
{
	for (size_t i = 0; i < r->n; i++) {
		int rc = verify_file(r, r->names[i], c, err);

		if (rc != 0)
			return rc;
	}
	return 0;
}

#define ADVICE_TORN "nothing by hand: the next berth write cuts it off and seals it with a recovery record"
#define ADVICE_QUARANTINE                                                                                    \
	"nothing by hand: the next berth write moves what follows the signed record %" PRIu64                \
	" to a quarantine file beside the log and records it"
#define ADVICE_PENDING "nothing by hand: the next berth write records it"

/* The advice for a log berth refuses to extend. */
static void advise_damaged(struct berth_audit_verdict *v, const char *dir)
{
	char mv[8300];

	berth_aud_damage_mv(mv, sizeof mv, dir);
	snprintf(v->advice, sizeof v->advice,
		 "berth refuses to extend this log; keep it as evidence and start a new one: `%s`", mv);
}

/* Verdict for a break the chain walk found (v->broken_record), now that the
 * head is known: @head_ok with @hseq, and whether the writer finds the head's
 * record at the tail (@tail_ok). */
static void classify_break(struct berth_audit_verdict *v, const char *dir, bool head_ok, uint64_t hseq,
			   bool tail_ok, bool last_file)
{
	bool torn = strncmp(v->reason, "torn last line", 14) == 0;
	char r[512];

	if (head_ok && tail_ok && last_file && v->broken_record > hseq) {
		snprintf(r, sizeof r, "%s", v->reason);
		if (torn && v->broken_record == hseq + 1) {
			snprintf(v->reason, sizeof v->reason, "%s (an append a crash interrupted)", r);
			snprintf(v->advice, sizeof v->advice, ADVICE_TORN);
			return;
		}
		snprintf(v->reason, sizeof v->reason,
			 "%s%s; it follows record %" PRIu64 ", the last the head signs", r,
			 torn ? " (an append a crash interrupted)" : "", hseq);
		snprintf(v->advice, sizeof v->advice, ADVICE_QUARANTINE, hseq);
		return;
	}
	if (head_ok && tail_ok) {
		snprintf(
		    v->advice, sizeof v->advice,
		    "the damage lies before record %" PRIu64
		    ", the last the head signs: berth goes on appending (a writer checks the tail only) and "
		    "verify goes on reporting it; to keep this log as evidence and start a new one: ",
		    hseq);
		char mv[8300];
		berth_aud_damage_mv(mv, sizeof mv, dir);
		size_t used = strlen(v->advice);
		snprintf(v->advice + used, sizeof v->advice - used, "`%s`", mv);
		return;
	}
	if (head_ok && torn && last_file && v->broken_record == hseq) {
		int cut = 0;

		sscanf(v->reason, "torn last line of %d", &cut);
		snprintf(v->reason, sizeof v->reason,
			 "the last record, %" PRIu64
			 ", which the signed head covers, is cut short: %d bytes of it remain (the file was "
			 "truncated or damaged; a crash never leaves this)",
			 hseq, cut);
	}
	advise_damaged(v, dir);
}

int berth_audit_verify(const char *dir, const unsigned char *pub, struct berth_audit_verdict *v,
		       struct berth_error *err)
{
	struct reader r;
	struct verify_ctx c = {.v = v};
	struct berth_hostkey key = {0};
	struct berth_error kerr = {0};
	char buf[2 * HEAD_SLOT], hhash[65] = ZERO_HASH, why[256] = "";
	uint64_t hseq = 0, off = 0;
	int slot, rc, hfd;
	bool have_head, head_ok = false, tail_ok = false, key_ok = true;
	char **q = NULL;
	size_t nq = 0;

	memset(v, 0, sizeof *v);
	v->intact = true;
	strcpy(v->head, ZERO_HASH);
	strcpy(c.last_hash, ZERO_HASH);
	rc = reader_open(&r, dir, err);
	if (rc <= 0) {
		reader_close(&r);
		return rc;
	}
	c.dir = r.dir;
	/* The signed head first: where its record lies tells a crash's leftovers
	 * (after it) from damage (at or before it). */
	hfd = berth_aud_open_regular(r.dfd, "head");
	have_head = hfd >= 0;
	if (have_head) {
		rc = berth_aud_head_read(hfd, buf, err);
		close(hfd);
		if (rc < 0)
			goto out;
	} else if (errno != ENOENT) {
		rc = berth_aud_open_failed(err, r.dir, "head");
		goto out;
	}
	if (have_head && pub == NULL) {
		if (berth_hostkey_load(&key, false, &kerr) < 0)
			key_ok = false;
		else
			pub = key.pub;
	}
	if (have_head && key_ok)
		head_ok = berth_aud_head_pick(buf, pub, NULL, &hseq, hhash, &slot, why, sizeof why) == 0;
	if (head_ok && r.n > 0) {
		cleanup_close int fd = berth_aud_open_regular(r.dfd, r.names[r.n - 1]);
		struct stat st;
		struct berth_error e2 = {0};

		if (fd >= 0 && fstat(fd, &st) == 0)
			tail_ok = berth_aud_signed_end(&(struct berth_tail){.dfd = r.dfd,
									    .dir = r.dir,
									    .fd = fd,
									    .size = (uint64_t)st.st_size,
									    .names = r.names,
									    .n = r.n},
						       hseq, hhash, &off, &e2) == 0;
	}
	rc = verify_files(&r, &c, err);
	if (rc < 0)
		goto out;
	rc = 0;
	if (!v->intact) {
		char last[4200];

		snprintf(last, sizeof last, "%s/%s", r.dir, r.n > 0 ? r.names[r.n - 1] : "");
		classify_break(v, r.dir, head_ok, hseq, tail_ok, strcmp(v->file, last) == 0);
		goto out;
	}
	strcpy(v->head, c.last_hash);
	if (!have_head) {
		if (v->records > 0) {
			broken(v, r.dir, c.last_file, c.last_line, v->records,
			       "there is no signed head (`head` was deleted): the tail cannot be checked");
			advise_damaged(v, r.dir);
		}
		goto out;
	}
	if (!key_ok) {
		*err = kerr;
		rc = berth_err_wrap(err, "cannot check the signed head");
		goto out;
	}
	if (!head_ok) {
		broken(v, r.dir, "head", 0, v->records, "the signed head is forged or damaged: %s", why);
		if (strstr(why, "made by another key") != NULL)
			snprintf(v->advice, sizeof v->advice,
				 "if XDG_CONFIG_HOME changed, set it back; `berth audit verify --key "
				 "PUB.pem` checks "
				 "the log with another key");
		else
			advise_damaged(v, r.dir);
		goto out;
	}
	if (hseq > v->records) {
		broken(v, r.dir, c.last_file, c.last_line, v->records,
		       "the signed head names record %" PRIu64 " but the log ends at record %" PRIu64
		       ": records were removed from the tail",
		       hseq, v->records);
		advise_damaged(v, r.dir);
	} else if (hseq < v->records) {
		broken(v, r.dir, c.last_file, c.last_line, v->records,
		       "records %" PRIu64 "..%" PRIu64
		       " are not covered by the signed head (a crash between the log's and the head's sync,"
		       " or lines appended without the host key)",
		       hseq + 1, v->records);
		if (tail_ok)
			snprintf(v->advice, sizeof v->advice, ADVICE_QUARANTINE, hseq);
		else
			advise_damaged(v, r.dir);
	} else if (strcmp(hhash, c.last_hash) != 0) {
		broken(v, r.dir, c.last_file, c.last_line, v->records,
		       "the last record's hash differs from the signed head: the log was replaced");
		advise_damaged(v, r.dir);
	}
	if (!v->intact)
		goto out;
	/* Every quarantine file is named by a recovery record. */
	if (berth_aud_list_quarantine(r.dfd, &q, &nq, err) < 0) {
		rc = -1;
		goto out;
	}
	for (size_t i = 0; i < nq && v->intact; i++) {
		bool named = false;
		uint64_t first = berth_aud_quarantine_seq(q[i]);

		for (size_t j = 0; j < c.nq && !named; j++)
			named = strcmp(c.qnames[j], q[i]) == 0;
		if (named)
			continue;
		if (first == hseq + 1) {
			broken(v, r.dir, q[i], 0, first,
			       "records moved out of the log after record %" PRIu64
			       ", the last the head signs, by a writer that was killed before it recorded "
			       "the move",
			       hseq);
			snprintf(v->advice, sizeof v->advice, ADVICE_PENDING);
		} else {
			char parent[4096], *slash;

			snprintf(parent, sizeof parent, "%s", r.dir);
			slash = strrchr(parent, '/');
			if (slash != NULL && slash != parent)
				*slash = '\0';
			broken(v, r.dir, q[i], 0, first,
			       "no recovery record names this quarantine file: records were moved out of the "
			       "log "
			       "without a record (by hand, or by an older berth killed while it recovered)");
			snprintf(v->advice, sizeof v->advice,
				 "look at it; to keep it outside the audit directory: `mv %s/%s %s/`", r.dir,
				 q[i], parent);
		}
	}
out:
	berth_aud_free_names(q, nq);
	for (size_t i = 0; i < c.nq; i++)
		free(c.qnames[i]);
	free(c.qnames);
	berth_hostkey_clear(&key);
	reader_close(&r);
	return rc;
}
