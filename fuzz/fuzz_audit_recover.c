/* SPDX-License-Identifier: MIT */
/*
 * fuzz_audit_recover.c - libFuzzer target for the audit log's recovery at
 * open (berth_audit_open: the tail checked against the signed head, a torn
 * last line sealed, records ahead of the head quarantined;
 * src/audit/audit_recover.c, audit_head.c).  fuzz_audit covers one line's
 * parser and canonical JSON; this one covers whole logs on disk.
 *
 * The input (at most 64 KiB) is a log and how to lay it out:
 *   byte 0   flags: bits 0-1 the head (0 none; 1 signed over record K;
 *            2 the bytes after the first 0xff of the input, raw; 3 signed
 *            over record K with another record's hash, or a seq past the
 *            log's end); bit 2 rechain: each complete line that is a JSON
 *            object gets seq, prev and hash made right, so that valid chains
 *            are reachable from mutated logs; bit 3 the head in slot 1 with
 *            an older signed head (record K-1) in slot 0; bit 4 rotate: the
 *            records after the S-th go into a second file; bit 5 a
 *            quarantine file named for the records after the head that no
 *            record names (a writer killed after it cut the log) is there
 *   byte 1   K (mod records + 1)
 *   byte 2   S
 *   rest     the log bytes (up to a first 0xff byte)
 * The head is signed with the fixed key of fuzz_key.h, which
 * berth_audit_open() loads as the host key.  The state directory is on
 * /dev/shm when it exists (fdatasync costs nothing there).  The seeds
 * (fuzz/corpus-audit-recover) are logs `berth run` wrote (fuzz/make-seeds.sh).
 *
 * Invariants (a violation aborts):
 *  - open succeeds, or fails with an errno and a message and leaves every
 *    file byte for byte as it was, and no quarantine file;
 *  - after a successful open the log holds the records it held (the same
 *    lines, a prefix of them) and at most one new record, an
 *    audit.recovery; nothing the input did not have enters the chain;
 *  - when the input's complete lines form a valid chain (each parses, seq
 *    1, 2, ..., each prev the previous hash, file names their first seq)
 *    and the head is one the fuzzer signed, the outcome is the documented
 *    one: a head past the log's end or naming another hash is refused
 *    (EBADMSG); records past the head are moved to the quarantine file
 *    (byte for byte, the torn tail with them) and sealed with one recovery
 *    record, or refused when they do not all lie in the active file; a torn
 *    last line alone is cut and sealed; a planted quarantine file (bit 5)
 *    gets a recovery record of its own and is kept as it was; otherwise
 *    nothing changes; and
 *    after every successful open of a valid chain `berth audit verify`
 *    accepts the log, an append succeeds, and it still verifies.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/audit.h"
#include "util/jcs.h"

#include "fuzz_key.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SLOT 512 /* docs/audit.md: the head's two fixed slots */
#define ZERO64 "0000000000000000000000000000000000000000000000000000000000000000"
#define MAX_FILES 8

static struct berth_hostkey key;
static char dir[4300];

static void fail(const char *why) __attribute__((noreturn));
static void fail(const char *why)
{
	fprintf(stderr, "fuzz_audit_recover: %s\n", why);
	abort();
}
#define CHECK(c)                                                                                             \
	do {                                                                                                 \
		if (!(c))                                                                                    \
			fail(#c);                                                                            \
	} while (0)

struct buf {
	char *p;
	size_t len, cap;
};

static void put(struct buf *b, const void *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = realloc(b->p, b->cap);
		CHECK(b->p != NULL);
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

/* One file of the directory, as written or as found. */
struct file {
	char name[256];
	struct buf data;
};

struct dirstate {
	struct file f[MAX_FILES + 4];
	size_t n;
};

static void state_free(struct dirstate *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->f[i].data.p);
	s->n = 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct file *)a)->name, ((const struct file *)b)->name);
}

/* Every file of the directory but the lock, sorted by name. */
static void snapshot(struct dirstate *s)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	s->n = 0;
	CHECK(d != NULL);
	while ((e = readdir(d)) != NULL) {
		char path[4600], chunk[65536];
		int fd;
		ssize_t n;

		if (e->d_name[0] == '.' || strcmp(e->d_name, "lock") == 0)
			continue;
		CHECK(s->n < sizeof s->f / sizeof s->f[0]);
		struct file *f = &s->f[s->n++];
		memset(f, 0, sizeof *f);
		snprintf(f->name, sizeof f->name, "%s", e->d_name);
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		CHECK(fd >= 0);
		put(&f->data, "", 0);
		while ((n = read(fd, chunk, sizeof chunk)) > 0)
			put(&f->data, chunk, (size_t)n);
		close(fd);
	}
	closedir(d);
	qsort(s->f, s->n, sizeof s->f[0], by_name);
}

static bool same_state(const struct dirstate *a, const struct dirstate *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->f[i].name, b->f[i].name) != 0 || a->f[i].data.len != b->f[i].data.len ||
		    memcmp(a->f[i].data.p, b->f[i].data.p, a->f[i].data.len) != 0)
			return false;
	return true;
}

static void write_file(const char *name, const char *p, size_t n)
{
	char path[4600];
	int fd;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	CHECK(n == 0 || write(fd, p, n) == (ssize_t)n);
	close(fd);
}

static void clear_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	CHECK(d != NULL);
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			CHECK(unlinkat(dirfd(d), e->d_name, 0) == 0);
	closedir(d);
}

/* A signed head slot for (@seq, @hash), as berth writes it (audit.h). */
static void head_slot(char slot[SLOT], uint64_t seq, const char *hash)
{
	char msg[256], sighex[129];
	unsigned char sig[64];
	struct berth_error err = {0};
	int n;

	snprintf(msg, sizeof msg, "{\"hash\":\"%s\",\"seq\":%" PRIu64 ",\"type\":\"berth.audit.head/1\"}",
		 hash, seq);
	CHECK(berth_sign(&key, msg, strlen(msg), sig, &err) == 0);
	berth_hex(sig, 64, sighex);
	memset(slot, ' ', SLOT);
	n = snprintf(slot, SLOT,
		     "{\"hash\":\"%s\",\"pub\":\"%s\",\"seq\":%" PRIu64
		     ",\"sig\":\"%s\",\"type\":\"berth.audit.head/1\"}",
		     hash, FUZZ_KEY_PUB_HEX, seq, sighex);
	slot[n] = ' ';
	slot[SLOT - 1] = '\n';
}

/* The complete lines of the log, in order across files. */
struct lines {
	char **p;
	size_t *len;
	size_t n;
};

static void lines_add(struct lines *l, const char *p, size_t len)
{
	l->p = realloc(l->p, (l->n + 1) * sizeof *l->p);
	l->len = realloc(l->len, (l->n + 1) * sizeof *l->len);
	CHECK(l->p != NULL && l->len != NULL);
	l->p[l->n] = malloc(len + 1);
	CHECK(l->p[l->n] != NULL);
	memcpy(l->p[l->n], p, len);
	l->p[l->n][len] = '\0';
	l->len[l->n++] = len;
}

static void lines_free(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->p[i]);
	free(l->p);
	free(l->len);
	memset(l, 0, sizeof *l);
}

/* Lines of @data, and the bytes after the last newline (*torn). */
static void split_lines(const char *data, size_t size, struct lines *l, size_t *torn)
{
	size_t i = 0;

	while (i < size) {
		const char *nl = memchr(data + i, '\n', size - i);
		if (nl == NULL)
			break;
		lines_add(l, data + i, (size_t)(nl - data - i));
		i = (size_t)(nl - data) + 1;
	}
	*torn = size - i;
}

/* Line @line with seq, prev and hash made right; NULL when it is no object
 * or its canonical form is refused. */
static char *rechain(const char *line, size_t len, uint64_t seq, const char *prev, char hash[65], size_t *out)
{
	struct berth_error err = {0};
	json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	char *s = NULL;

	if (json_is_object(o)) {
		json_object_set_new(o, "seq", json_integer((json_int_t)seq));
		json_object_set_new(o, "prev", json_string(prev));
		json_object_del(o, "hash");
		if (berth_audit_record_hash(o, hash, &err) == 0) {
			json_object_set_new(o, "hash", json_string(hash));
			s = berth_jcs_len(o, out, &err);
		}
	}
	json_decref(o);
	return s;
}

/* The hashes of a valid chain of @l (seq 1..n, prev links), or false. */
static bool chain_valid(const struct lines *l, char (*hashes)[65])
{
	const char *prev = ZERO64;

	for (size_t i = 0; i < l->n; i++) {
		struct berth_error err = {0};
		struct berth_audit_record r = {0};
		json_t *o = berth_audit_parse_line(l->p[i], l->len[i], &r, &err);
		bool ok = o != NULL && r.seq == i + 1 && strcmp(r.prev, prev) == 0;

		if (ok)
			strcpy(hashes[i], r.hash);
		json_decref(o);
		if (!ok)
			return false;
		prev = hashes[i];
	}
	return true;
}

static void verify_intact(const char *when)
{
	struct berth_audit_verdict v;
	struct berth_error err = {0};

	CHECK(berth_audit_verify(dir, key.pub, &v, &err) == 0);
	if (!v.intact) {
		fprintf(stderr,
			"fuzz_audit_recover: %s: verify says record %" PRIu64 " (%s:%" PRIu64 "): %s\n", when,
			v.broken_record, v.file, v.line, v.reason);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lines in = {0}, all = {0}, after = {0};
	struct dirstate before = {0}, now = {0};
	struct buf log = {0};
	const uint8_t *end;
	uint8_t flags, kbyte, sbyte;
	size_t torn = 0, logsize, n, k, split;
	char(*hashes)[65] = NULL;
	char prev[65] = ZERO64, first[32], second[32];
	char head[2 * SLOT];
	bool chain_ok;
	uint64_t hseq = 0;
	const char *hhash = ZERO64;
	struct berth_error err = {0};
	struct berth_audit *a;

	if (size < 3 || size > 65536)
		return 0;
	if (dir[0] == '\0') {
		char home[4200];
		const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

		fuzz_key_setup(&key, home, sizeof home);
		snprintf(dir, sizeof dir, "%s/berth-fuzz-audit.XXXXXX", base);
		CHECK(mkdtemp(dir) != NULL);
		fuzz_remove_at_exit(dir);
	}
	clear_dir();
	flags = data[0];
	kbyte = data[1];
	sbyte = data[2];
	data += 3;
	size -= 3;
	end = memchr(data, 0xff, size);
	logsize = end != NULL ? (size_t)(end - data) : size;

	/* The log: lines (rechained when asked), then a torn tail. */
	split_lines((const char *)data, logsize, &in, &torn);
	for (size_t i = 0; i < in.n; i++) {
		char hash[65];
		size_t len = 0;
		char *s = (flags & 4) ? rechain(in.p[i], in.len[i], i + 1, prev, hash, &len) : NULL;

		if (s != NULL) {
			lines_add(&all, s, len);
			strcpy(prev, hash);
			free(s);
		} else {
			lines_add(&all, in.p[i], in.len[i]);
		}
	}
	n = all.n;
	hashes = calloc(n + 1, sizeof *hashes);
	CHECK(hashes != NULL);
	chain_ok = chain_valid(&all, hashes);

	/* Files: one, or two split after record S (both non-empty). */
	split = (flags & 16) && n >= 2 ? 1 + sbyte % (n - 1) : 0;
	snprintf(first, sizeof first, "audit-%016d.jsonl", 1);
	snprintf(second, sizeof second, "audit-%016zu.jsonl", split + 1);
	for (size_t i = 0; i < n; i++) {
		if (split != 0 && i == split) {
			write_file(first, log.p, log.len);
			log.len = 0;
		}
		put(&log, all.p[i], all.len[i]);
		put(&log, "\n", 1);
	}
	put(&log, (const char *)data + logsize - torn, torn);
	write_file(split != 0 ? second : first, log.p, log.len);

	/* The head. */
	k = kbyte % (n + 1);
	memset(head, 0, sizeof head);
	switch (flags & 3) {
	case 0:
		break;
	case 1:
		hseq = k;
		hhash = k == 0 ? ZERO64 : hashes[k - 1];
		break;
	case 2:
		break;
	default:
		if (n > 0 && k > 0 && kbyte & 128) {
			hseq = k; /* another record's hash */
			hhash = hashes[k % n];
			if (k % n == k - 1)
				hhash = "1111111111111111111111111111111111111111111111111111111111111111";
		} else {
			hseq = n + 1 + (kbyte & 3); /* past the end */
			hhash = n > 0 ? hashes[n - 1] : ZERO64;
		}
		break;
	}
	if ((flags & 3) == 2) {
		size_t hl = end != NULL ? size - logsize - 1 : 0;
		write_file("head", end != NULL ? (const char *)end + 1 : "", hl > 2 * SLOT ? 2 * SLOT : hl);
	} else if ((flags & 3) != 0) {
		head_slot(head + ((flags & 8) ? SLOT : 0), hseq, hhash);
		if ((flags & 8) && hseq > 0)
			head_slot(head, hseq - 1,
				  hseq - 1 == 0 ? ZERO64 : hashes[hseq - 2 < n ? hseq - 2 : 0]);
		write_file("head", head, sizeof head);
	} else {
		write_file("head", "", 0); /* never signed: as a first open leaves it */
	}
	if (flags & 32) {
		char qn[96];

		snprintf(qn, sizeof qn, "quarantine-%020" PRIu64 "-%020" PRIu64 ".jsonl", hseq + 1, hseq + 1);
		write_file(qn, "planted\xff\n", 9); /* 0xff: never in a log */
	}
	snapshot(&before);
	a = berth_audit_open(dir, &err);
	snapshot(&now);
	if (a == NULL) {
		CHECK(err.errnum != 0 && err.msg[0] != '\0');
		if (!same_state(&before, &now))
			fail("a failed open changed the directory");
	} else {
		/* The records now: a prefix of the input's, then at most a recovery. */
		size_t t = 0, m;
		for (size_t i = 0; i < now.n; i++)
			if (strncmp(now.f[i].name, "audit-", 6) == 0)
				split_lines(now.f[i].data.p, now.f[i].data.len, &after, &t);
		CHECK(t == 0);
		m = after.n;
		/* new records: recovery records only, one per thing found (a
		 * planted quarantine file is one more) */
		for (int k2 = 0; k2 < ((flags & 32) ? 2 : 1) && m > 0; k2++) {
			struct berth_audit_record r = {0};
			json_t *o = berth_audit_parse_line(after.p[m - 1], after.len[m - 1], &r, &err);
			bool is_new = m > n || after.len[m - 1] != all.len[m - 1] ||
				      memcmp(after.p[m - 1], all.p[m - 1], all.len[m - 1]) != 0;
			if (is_new) {
				CHECK(o != NULL && strcmp(r.kind, BERTH_AUDIT_KIND_RECOVERY) == 0);
				CHECK(berth_audit_recovered(a) != NULL);
				m--;
			}
			json_decref(o);
			if (!is_new)
				break;
		}
		CHECK(m <= n);
		for (size_t i = 0; i < m; i++)
			CHECK(after.len[i] == all.len[i] && memcmp(after.p[i], all.p[i], all.len[i]) == 0);
		if (chain_ok) {
			verify_intact("after open");
			CHECK(berth_audit_append(a, "0123456789abcdef", "fuzz.check", "fuzz", NULL, NULL,
						 NULL, &err) == 0);
			verify_intact("after an append");
		}
	}
	if (chain_ok && (flags & 3) != 2) {
		/* The documented outcome. */
		bool refused = hseq > n || (hseq > 0 && strcmp(hhash, hashes[hseq - 1]) != 0) ||
			       (hseq < n && split != 0 && hseq < split);
		CHECK(refused == (a == NULL));
		if (a == NULL)
			CHECK(err.errnum == EBADMSG);
		else if (hseq < n || torn > 0)
			CHECK(after.n == hseq + 1 + ((flags & 32) ? 1 : 0) &&
			      berth_audit_recovered(a) != NULL);
		else if (flags & 32)
			CHECK(after.n == n + 1 && berth_audit_recovered(a) != NULL);
		else
			CHECK(after.n == n && berth_audit_recovered(a) == NULL);
		if (a != NULL && (flags & 32)) {
			/* the planted file is kept as it was */
			bool kept = false;
			for (size_t i = 0; i < now.n; i++)
				kept = kept || (now.f[i].data.len == 9 &&
						memcmp(now.f[i].data.p, "planted\xff\n", 9) == 0 &&
						strncmp(now.f[i].name, "quarantine-", 11) == 0);
			CHECK(kept);
		}
		if (a != NULL && hseq < n) {
			/* the quarantine holds exactly what was cut */
			struct buf q = {0};
			for (size_t i = hseq; i < n; i++) {
				put(&q, all.p[i], all.len[i]);
				put(&q, "\n", 1);
			}
			put(&q, (const char *)data + logsize - torn, torn);
			bool found = false;
			for (size_t i = 0; i < now.n; i++)
				if (strncmp(now.f[i].name, "quarantine-", 11) == 0)
					found = found || (now.f[i].data.len == q.len &&
							  memcmp(now.f[i].data.p, q.p, q.len) == 0);
			CHECK(found);
			free(q.p);
		}
	}
	berth_audit_close(a);
	state_free(&before);
	state_free(&now);
	lines_free(&in);
	lines_free(&all);
	lines_free(&after);
	free(log.p);
	free(hashes);
	return 0;
}
