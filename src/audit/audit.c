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
 */
#include "audit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/jcs.h"
#include "../util/rundir.h"
#include "../util/sha256.h"
#include "../util/sign.h"

#define HEAD_SLOT 512
#define HEAD_TYPE "berth.audit.head/1"
#define ZERO_HASH "0000000000000000000000000000000000000000000000000000000000000000"
#define FILE_PREFIX "audit-"
#define FILE_SUFFIX ".jsonl"
#define FILE_NAME_LEN (sizeof FILE_PREFIX - 1 + 16 + sizeof FILE_SUFFIX - 1)

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
	pthread_cond_t cv;       /* this waiter's own: no thundering herd */
	struct request *next;
};

struct berth_audit {
	char dir[4096];
	int dfd, lockfd, headfd, logfd;
	char logname[FILE_NAME_LEN + 1];
	uint64_t logsize;
	uint64_t seq;
	char hash[65];
	int head_slot;            /* slot holding the newest head, -1: none */
	char head_cache[2 * HEAD_SLOT];
	bool head_cached;
	uint64_t rotate;
	struct berth_hostkey key;
	char recovered[1024];
	char *torn;              /* bytes of a torn last line, still in the file after logsize */
	size_t torn_len;

	pthread_rwlock_t secrets_lock;
	char **secrets;
	size_t nsecrets;

	pthread_mutex_t mu;
	struct request *queue, **queue_tail;
	bool leader;
};

/* ---- small helpers ---- */

void berth_audit_now_rfc3339(char buf[32])
{
	struct timespec ts;
	struct tm tm;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(buf, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, 32 - n, ".%03ldZ", ts.tv_nsec / 1000000);
}

void berth_audit_new_run_id(char out[17])
{
	unsigned char b[8];
	size_t got = 0;

	while (got < sizeof b) {
		ssize_t r = getrandom(b + got, sizeof b - got, 0);

		if (r > 0)
			got += (size_t)r;
		else if (errno != EINTR)
			break;
	}
	if (got < sizeof b) { /* no getrandom: time and pid, still unique enough for a name */
		struct timespec ts;
		uint64_t v;

		clock_gettime(CLOCK_REALTIME, &ts);
		v = ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec) ^ ((uint64_t)getpid() << 48);
		memcpy(b, &v, sizeof b);
	}
	berth_hex(b, sizeof b, out);
}

int berth_audit_dir(char *buf, size_t size, struct berth_error *err)
{
	const char *over = getenv("BERTH_AUDIT_DIR"), *xdg = getenv("XDG_STATE_HOME"), *home = berth_home_dir();
	int n;

	if (over != NULL && over[0] != '\0') {
		if (over[0] != '/')
			return berth_usage_err(err, "BERTH_AUDIT_DIR `%s` is not an absolute path", over);
		n = snprintf(buf, size, "%s", over);
	} else if (xdg != NULL && xdg[0] == '/') {
		n = snprintf(buf, size, "%s/berth/audit", xdg);
	} else if (home != NULL && home[0] == '/') {
		n = snprintf(buf, size, "%s/.local/state/berth/audit", home);
	} else {
		return berth_err(err, EINVAL, "cannot place the audit log: neither XDG_STATE_HOME nor HOME is an absolute path");
	}
	if (n < 0 || (size_t)n >= size)
		return berth_err(err, ENAMETOOLONG, "audit directory path is too long");
	return 0;
}

static void file_name(uint64_t first_seq, char out[FILE_NAME_LEN + 1])
{
	snprintf(out, FILE_NAME_LEN + 1, FILE_PREFIX "%016" PRIu64 FILE_SUFFIX, first_seq);
}

/* The first seq a log file name claims, or 0 when it is not a log file name. */
static uint64_t file_seq(const char *name)
{
	uint64_t v = 0;

	if (strlen(name) != FILE_NAME_LEN || strncmp(name, FILE_PREFIX, sizeof FILE_PREFIX - 1) != 0 ||
	    strcmp(name + FILE_NAME_LEN - (sizeof FILE_SUFFIX - 1), FILE_SUFFIX) != 0)
		return 0;
	for (size_t i = sizeof FILE_PREFIX - 1; i < sizeof FILE_PREFIX - 1 + 16; i++) {
		if (name[i] < '0' || name[i] > '9')
			return 0;
		v = v * 10 + (uint64_t)(name[i] - '0');
	}
	return v;
}

static int name_filter(const struct dirent *d)
{
	return file_seq(d->d_name) != 0;
}

/*
 * Open @name in @dfd to read it: never through a symbolic link, and only a
 * regular file.  O_NONBLOCK for the open itself: a FIFO put in the log's
 * place would otherwise block the reader (berth audit verify, list) for
 * ever, waiting for a writer.  Returns the descriptor (blocking again), or
 * -1 with errno set (EINVAL: not a regular file).
 */
static int open_regular(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || fcntl(fd, F_SETFL, 0) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

/* The error for a failed open_regular() of @dir/@name. */
static int open_failed(struct berth_error *err, const char *dir, const char *name)
{
	if (errno == EINVAL)
		return berth_err(err, 0, "`%s/%s` is not a regular file: the audit log cannot be read", dir, name);
	return berth_err(err, errno, "cannot open `%s/%s`", dir, name);
}

/* The log files of @dfd, sorted (fixed-width names sort numerically). */
static int list_files(int dfd, char ***names, size_t *n, struct berth_error *err)
{
	struct dirent **ents = NULL;
	char path[64];
	int k;

	snprintf(path, sizeof path, "/proc/self/fd/%d", dfd);
	k = scandir(path, &ents, name_filter, alphasort);
	if (k < 0)
		return berth_err(err, errno, "cannot list the audit directory");
	*names = calloc((size_t)k + 1, sizeof **names);
	if (*names == NULL) {
		for (int i = 0; i < k; i++)
			free(ents[i]);
		free(ents);
		return berth_err(err, ENOMEM, "audit");
	}
	for (int i = 0; i < k; i++) {
		(*names)[i] = strdup(ents[i]->d_name);
		free(ents[i]);
	}
	free(ents);
	*n = (size_t)k;
	return 0;
}

static void free_names(char **names, size_t n)
{
	if (names == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static int write_all_at(int fd, const char *buf, size_t len, off_t off)
{
	while (len > 0) {
		ssize_t w = pwrite(fd, buf, len, off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (w == 0) {
			errno = EIO;
			return -1;
		}
		buf += w;
		len -= (size_t)w;
		off += w;
	}
	return 0;
}

static int read_all_at(int fd, char *buf, size_t len, off_t off)
{
	while (len > 0) {
		ssize_t r = pread(fd, buf, len, off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0) {
			errno = EIO;
			return -1;
		}
		buf += r;
		len -= (size_t)r;
		off += r;
	}
	return 0;
}

static bool is_hex64(const char *s)
{
	if (s == NULL || strlen(s) != 64)
		return false;
	for (int i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* ---- redaction ---- */

static bool key_is_sensitive(const char *key)
{
	static const char *const parts[] = {"token", "passw", "passwd", "secret", "apikey", "api_key", "api-key",
					    "private_key", "privatekey", "private-key", "cookie", "authoriz",
					    "credential", "bearer", "session", "signature"};
	char low[128];
	size_t n = strlen(key);

	if (n >= sizeof low)
		n = sizeof low - 1;
	for (size_t i = 0; i < n; i++)
		low[i] = (char)(key[i] >= 'A' && key[i] <= 'Z' ? key[i] + 32 : key[i]);
	low[n] = '\0';
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(parts); i++)
		if (strstr(low, parts[i]) != NULL)
			return true;
	/* "key", "ssh_key", "accessKey"; "auth", "x-auth"; "pwd" */
	return (n >= 3 && strcmp(low + n - 3, "key") == 0) || (n >= 4 && strcmp(low + n - 4, "auth") == 0) ||
	       strcmp(low, "pwd") == 0;
}

/* @s with every declared secret replaced by "[secret]"; malloc'd. */
static char *scrub(struct berth_audit *a, const char *s, size_t len, size_t *outlen)
{
	char *cur = malloc(len + 1);

	if (cur == NULL)
		return NULL;
	memcpy(cur, s, len);
	cur[len] = '\0';
	for (size_t i = 0; a != NULL && i < a->nsecrets; i++) {
		const char *sec = a->secrets[i];
		size_t sl = strlen(sec), count = 0;
		char *p = cur, *out, *o;

		/* A short value ("1", "yes") would blank every string holding
		 * it: it is replaced only where a whole string is that value. */
		if (sl < BERTH_AUDIT_SECRET_SUBSTRING_MIN) {
			if (len == sl && memcmp(cur, sec, sl) == 0) {
				free(cur);
				cur = strdup("[secret]");
				if (cur == NULL)
					return NULL;
				len = 8;
			}
			continue;
		}

		while ((p = memmem(p, len - (size_t)(p - cur), sec, sl)) != NULL) {
			count++;
			p += sl;
		}
		if (count == 0)
			continue;
		out = malloc(len - count * sl + count * 8 + 1);
		if (out == NULL) {
			free(cur);
			return NULL;
		}
		o = out;
		p = cur;
		for (char *q; (q = memmem(p, len - (size_t)(p - cur), sec, sl)) != NULL; p = q + sl) {
			memcpy(o, p, (size_t)(q - p));
			o += q - p;
			memcpy(o, "[secret]", 8);
			o += 8;
		}
		memcpy(o, p, len - (size_t)(p - cur));
		o += len - (size_t)(p - cur);
		*o = '\0';
		len = (size_t)(o - out);
		free(cur);
		cur = out;
	}
	*outlen = len;
	return cur;
}

/* A string value as written: secrets scrubbed, then summarised when long. */
static json_t *clean_string(struct berth_audit *a, const char *s, size_t len)
{
	size_t n = 0;
	cleanup_free char *c = scrub(a, s, len, &n);
	struct berth_error err = {0};
	char hex[65], *out;
	size_t keep = 256;
	json_t *v;

	if (c == NULL)
		return NULL;
	if (n <= BERTH_AUDIT_STRING_MAX)
		return json_stringn_nocheck(c, n);
	if (berth_sha256_hex(c, n, hex, &err) < 0)
		return NULL;
	/* Cut at a UTF-8 character boundary. */
	while (keep > 0 && ((unsigned char)c[keep] & 0xc0) == 0x80)
		keep--;
	if (asprintf(&out, "%.*s\xe2\x80\xa6 [%zu bytes, sha256:%s]", (int)keep, c, n, hex) < 0)
		return NULL;
	v = json_string_nocheck(out);
	free(out);
	return v;
}

static json_t *redact(struct berth_audit *a, const json_t *v, int depth)
{
	json_t *out;

	if (depth > 900)
		return NULL; /* JCS refuses beyond 1000 anyway */
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *key;
		json_t *val;

		out = json_object();
		if (out == NULL)
			return NULL;
		json_object_foreach((json_t *)v, key, val) {
			size_t klen = json_object_iter_key_len(json_object_key_to_iter(key)), n = 0;
			cleanup_free char *k = scrub(a, key, klen, &n);
			json_t *c;

			if (k == NULL) {
				json_decref(out);
				return NULL;
			}
			if (key_is_sensitive(k))
				c = json_string("[redacted]");
			else
				c = redact(a, val, depth + 1);
			if (c == NULL || json_object_setn_new_nocheck(out, k, n, c) < 0) {
				json_decref(out);
				return NULL;
			}
		}
		return out;
	}
	case JSON_ARRAY:
		out = json_array();
		for (size_t i = 0; out != NULL && i < json_array_size(v); i++) {
			json_t *c = redact(a, json_array_get(v, i), depth + 1);

			if (c == NULL || json_array_append_new(out, c) < 0) {
				json_decref(out);
				return NULL;
			}
		}
		return out;
	case JSON_STRING:
		return clean_string(a, json_string_value(v), json_string_length(v));
	case JSON_INTEGER:
		if (json_integer_value(v) > BERTH_JCS_MAX_SAFE_INT || json_integer_value(v) < -BERTH_JCS_MAX_SAFE_INT) {
			char num[32];

			/* Beyond 2^53 a JSON number is not exact (RFC 7493 2.2). */
			snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
			return json_string(num);
		}
		return json_deep_copy(v);
	case JSON_REAL:
		if (fabs(json_real_value(v)) >= 9007199254740992.0) {
			char num[32];
			struct berth_error e = {0};

			/* Written without an exponent below 1e21, these read back
			 * as integers beyond 64 bits; keep their ES6 text. */
			if (berth_jcs_number(json_real_value(v), num, &e) < 0)
				return NULL;
			return json_string(num);
		}
		return json_deep_copy(v);
	default:
		return json_deep_copy(v);
	}
}

json_t *berth_audit_redact(struct berth_audit *a, const json_t *payload, struct berth_error *err)
{
	json_t *out;

	if (a != NULL)
		pthread_rwlock_rdlock(&a->secrets_lock);
	out = payload == NULL ? json_object() : redact(a, payload, 0);
	if (a != NULL)
		pthread_rwlock_unlock(&a->secrets_lock);
	if (out == NULL)
		berth_err(err, ENOMEM, "audit: cannot redact the payload (out of memory or nested deeper than 900)");
	return out;
}

int berth_audit_add_secret(struct berth_audit *a, const char *value, struct berth_error *err)
{
	char **s, *copy;

	if (value == NULL || value[0] == '\0')
		return 0;
	copy = strdup(value);
	if (copy == NULL)
		return berth_err(err, ENOMEM, "audit: cannot keep a secret");
	pthread_rwlock_wrlock(&a->secrets_lock);
	s = realloc(a->secrets, (a->nsecrets + 1) * sizeof *s);
	if (s == NULL) {
		pthread_rwlock_unlock(&a->secrets_lock);
		explicit_bzero(copy, strlen(copy));
		free(copy);
		return berth_err(err, ENOMEM, "audit: cannot keep a secret");
	}
	a->secrets = s;
	a->secrets[a->nsecrets++] = copy;
	/* Longest first, so that a secret containing another is replaced whole. */
	for (size_t i = a->nsecrets - 1; i > 0 && strlen(a->secrets[i]) > strlen(a->secrets[i - 1]); i--) {
		char *t = a->secrets[i];

		a->secrets[i] = a->secrets[i - 1];
		a->secrets[i - 1] = t;
	}
	pthread_rwlock_unlock(&a->secrets_lock);
	return 0;
}

/* ---- records ---- */

static void prepared_free(struct prepared *p)
{
	free(p->actor);
	free(p->kind);
	free(p->run_id);
	free(p->payload);
	memset(p, 0, sizeof *p);
}

static char *jcs_field(struct berth_audit *a, const char *name, const char *value, struct berth_error *err)
{
	json_t *v;
	char *s;

	if (value == NULL || value[0] == '\0') {
		berth_err(err, EINVAL, "audit: `%s` must be a non-empty string", name);
		return NULL;
	}
	pthread_rwlock_rdlock(&a->secrets_lock);
	v = clean_string(a, value, strlen(value));
	pthread_rwlock_unlock(&a->secrets_lock);
	if (v == NULL) {
		berth_err(err, EINVAL, "audit: `%s` is not valid UTF-8", name);
		return NULL;
	}
	s = berth_jcs(v, err);
	json_decref(v);
	return s;
}

static int prepare(struct berth_audit *a, const char *run_id, const char *kind, const char *actor, json_t *payload,
		   struct prepared *p, struct berth_error *err)
{
	json_t *clean;

	memset(p, 0, sizeof *p);
	if (payload != NULL && !json_is_object(payload))
		return berth_err(err, EINVAL, "audit: the payload of a `%s` record must be a JSON object", kind);
	if ((p->run_id = jcs_field(a, "run_id", run_id, err)) == NULL || (p->kind = jcs_field(a, "kind", kind, err)) == NULL ||
	    (p->actor = jcs_field(a, "actor", actor, err)) == NULL) {
		prepared_free(p);
		return -1;
	}
	clean = berth_audit_redact(a, payload, err);
	if (clean == NULL) {
		prepared_free(p);
		return -1;
	}
	p->payload = berth_jcs(clean, err);
	json_decref(clean);
	if (p->payload == NULL) {
		prepared_free(p);
		return berth_err_wrap(err, "audit: payload of a `%s` record", kind);
	}
	return 0;
}

struct line {
	char *p;
	size_t len, cap;
};

static int line_put(struct line *l, const char *s, size_t n)
{
	if (l->len + n + 1 > l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 4096;
		char *q;

		while (cap < l->len + n + 1)
			cap *= 2;
		q = realloc(l->p, cap);
		if (q == NULL)
			return -1;
		l->p = q;
		l->cap = cap;
	}
	memcpy(l->p + l->len, s, n);
	l->len += n;
	l->p[l->len] = '\0';
	return 0;
}

#define PUTS(l, s) line_put((l), (s), strlen(s))

/*
 * Append the canonical line of @p (seq @seq, prev @prev, time @ts) and its
 * newline to @out; set p->hash.  The members in JCS order are actor, hash,
 * kind, payload, prev, run_id, seq, ts; the hash covers the same text
 * without `"hash":"...",`.
 */
static int render(struct prepared *p, uint64_t seq, const char *prev, const char *ts, struct line *out,
		  struct berth_error *err)
{
	struct berth_sha256 *h;
	char num[32];
	size_t start = out->len, mid;
	int bad = 0;

	snprintf(num, sizeof num, "%" PRIu64, seq);
	bad |= PUTS(out, "{\"actor\":") | PUTS(out, p->actor);
	mid = out->len;
	bad |= PUTS(out, ",\"kind\":") | PUTS(out, p->kind) | PUTS(out, ",\"payload\":") | PUTS(out, p->payload) |
	       PUTS(out, ",\"prev\":\"") | PUTS(out, prev) | PUTS(out, "\",\"run_id\":") | PUTS(out, p->run_id) |
	       PUTS(out, ",\"seq\":") | PUTS(out, num) | PUTS(out, ",\"ts\":\"") | PUTS(out, ts) | PUTS(out, "\"}");
	if (bad)
		return berth_err(err, ENOMEM, "audit: cannot build a record");
	h = berth_sha256_new(err);
	if (h == NULL)
		return -1;
	berth_sha256_update(h, out->p + start, out->len - start);
	if (berth_sha256_final(h, p->hash, err) < 0)
		return -1;
	p->seq = seq;
	/* Insert ,"hash":"H" after the actor value. */
	{
		char ins[76];
		size_t tail = out->len - mid;

		snprintf(ins, sizeof ins, ",\"hash\":\"%s\"", p->hash);
		if (line_put(out, ins, 74) < 0 || line_put(out, "\n", 1) < 0)
			return berth_err(err, ENOMEM, "audit: cannot build a record");
		memmove(out->p + mid + 74, out->p + mid, tail);
		memcpy(out->p + mid, ins, 74);
		out->p[out->len - 1] = '\n';
	}
	return 0;
}

int berth_audit_record_hash(const json_t *record, char hash[65], struct berth_error *err)
{
	json_t *copy = json_copy((json_t *)record);
	char *s;
	size_t n = 0;
	int rc;

	if (copy == NULL)
		return berth_err(err, ENOMEM, "audit");
	json_object_del(copy, "hash");
	s = berth_jcs_len(copy, &n, err);
	json_decref(copy);
	if (s == NULL)
		return -1;
	rc = berth_sha256_hex(s, n, hash, err);
	free(s);
	return rc;
}

/*
 * The fast check of one line, without a tree: canonical (berth_jcs_check),
 * exactly the eight members with values of the right form, and the hash.
 * Fills the span fields of @f.  Returns 0, or -1 with @err (EBADMSG).
 */
struct line_fields {
	uint64_t seq;
	const char *prev, *hash; /* 64 hex digits each, not NUL-terminated */
	const char *kind;        /* the kind's canonical text with its quotes */
	size_t kindlen;
};

static const bool hexdigit[256] = {
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
	['8'] = 1, ['9'] = 1, ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
};

static bool hex64_span(const char *v, size_t n)
{
	if (n != 66 || v[0] != '"' || v[65] != '"')
		return false;
	for (size_t i = 1; i < 65; i++)
		if (!hexdigit[(unsigned char)v[i]])
			return false;
	return true;
}

static int check_line(const char *line, size_t len, struct line_fields *f, struct berth_error *err)
{
	static const char *const members[] = {"actor", "hash", "kind", "payload", "prev", "run_id", "seq", "ts"};
	struct berth_jcs_member m[9];
	size_t n = 0;
	char hex[65];
	struct berth_sha256 *h;
	const char *hashpos;

	if (len == 0 || line[0] != '{')
		return berth_err(err, EBADMSG, "not a record: a JSON object expected");
	if (berth_jcs_check(line, len, m, BERTH_ARRAY_SIZE(m), &n, err) < 0)
		return -1;
	if (n != BERTH_ARRAY_SIZE(members))
		return berth_err(err, EBADMSG,
				 "not a record: an object with exactly the members actor, hash, kind, payload, prev, run_id, seq, ts");
	for (size_t i = 0; i < n; i++)
		if (m[i].klen != strlen(members[i]) || memcmp(m[i].key, members[i], m[i].klen) != 0)
			return berth_err(err, EBADMSG,
					 "not a record: an object with exactly the members actor, hash, kind, payload, prev, run_id, seq, ts");
	/* actor, kind, run_id: non-empty strings; payload an object. */
	if (m[0].value[0] != '"' || m[0].vlen < 3 || m[2].value[0] != '"' || m[2].vlen < 3 || m[5].value[0] != '"' ||
	    m[5].vlen < 3)
		return berth_err(err, EBADMSG, "member `actor`, `kind` or `run_id` is not a non-empty string");
	if (m[3].value[0] != '{')
		return berth_err(err, EBADMSG, "member `payload` is not an object");
	if (!hex64_span(m[1].value, m[1].vlen) || !hex64_span(m[4].value, m[4].vlen))
		return berth_err(err, EBADMSG, "member `prev` or `hash` is not 64 lowercase hex digits");
	if (m[7].vlen != 26 || m[7].value[0] != '"' || m[7].value[11] != 'T' || m[7].value[20] != '.' || m[7].value[24] != 'Z')
		return berth_err(err, EBADMSG, "member `ts` is not an RFC 3339 UTC time with milliseconds");
	f->seq = 0;
	for (size_t i = 0; i < m[6].vlen; i++) {
		char ch = m[6].value[i];

		if (ch < '0' || ch > '9' || f->seq > (uint64_t)BERTH_JCS_MAX_SAFE_INT / 10) {
			f->seq = 0;
			break;
		}
		f->seq = f->seq * 10 + (uint64_t)(ch - '0');
	}
	if (f->seq == 0 || f->seq > (uint64_t)BERTH_JCS_MAX_SAFE_INT)
		return berth_err(err, EBADMSG, "member `seq` is not a positive integer");
	f->hash = m[1].value + 1;
	f->prev = m[4].value + 1;
	f->kind = m[2].value;
	f->kindlen = m[2].vlen;
	/* hash = SHA-256(JCS(record without hash)) = the line without
	 * `,"hash":"..."`, which follows the actor value. */
	hashpos = m[1].key - 2;
	h = berth_sha256_new(err);
	if (h == NULL)
		return -1;
	berth_sha256_update(h, line, (size_t)(hashpos - line));
	berth_sha256_update(h, hashpos + 74, len - (size_t)(hashpos - line) - 74);
	if (berth_sha256_final(h, hex, err) < 0)
		return -1;
	if (memcmp(hex, f->hash, 64) != 0)
		return berth_err(err, EBADMSG, "hash does not match the content (recomputed %.16s..., stored %.16s...)", hex,
				 f->hash);
	return 0;
}

json_t *berth_audit_parse_line(const char *line, size_t len, struct berth_audit_record *r, struct berth_error *err)
{
	struct line_fields f;
	json_error_t jerr;
	json_t *o;

	if (check_line(line, len, &f, err) < 0)
		return NULL;
	/* berth never writes a number jansson cannot read (berth_audit_redact
	 * turns those into strings); a line that has one is refused here. */
	o = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
	if (o == NULL) {
		berth_err(err, EBADMSG, "not JSON berth can read: %s", jerr.text);
		return NULL;
	}
	r->seq = f.seq;
	r->ts = json_string_value(json_object_get(o, "ts"));
	r->run_id = json_string_value(json_object_get(o, "run_id"));
	r->kind = json_string_value(json_object_get(o, "kind"));
	r->actor = json_string_value(json_object_get(o, "actor"));
	r->prev = json_string_value(json_object_get(o, "prev"));
	r->hash = json_string_value(json_object_get(o, "hash"));
	r->payload = json_object_get(o, "payload");
	r->json = o;
	return o;
}

/* ---- the head ---- */

static int head_message(uint64_t seq, const char *hash, char *buf, size_t size)
{
	return snprintf(buf, size, "{\"hash\":\"%s\",\"seq\":%" PRIu64 ",\"type\":\"" HEAD_TYPE "\"}", hash, seq);
}

/* Parse and check one slot.  Returns 1 valid, 0 empty, -1 malformed, -2 bad
 * signature. */
/*
 * @k, when not NULL, is the loaded host key whose public half is @pub: a
 * slot that holds exactly the signature @k makes over its message is valid
 * without the verification.  Ed25519 signing is deterministic (RFC 8032
 * 5.1.6: the nonce is a hash of the key and the message), so equal bytes
 * prove the signature is the key's own; a slot that differs in any bit is
 * still verified in full, and refused unless it verifies.  With libsodium a
 * signature costs about a third of a verification (0.24 M against 0.64 M
 * instructions), on every `berth run`.
 */
static int head_slot_parse(const char *slot, const unsigned char *pub, const struct berth_hostkey *k, uint64_t *seq,
			   char hash[65], char *why, size_t whylen)
{
	unsigned char mine_sig[64];
	size_t n = HEAD_SLOT;
	json_t *o, *s;
	const char *h, *sig, *type;
	unsigned char sigb[64];
	char msg[256];
	struct berth_error err = {0};
	int rc = -1;

	while (n > 0 && (slot[n - 1] == ' ' || slot[n - 1] == '\n' || slot[n - 1] == '\0'))
		n--;
	if (n == 0)
		return 0;
	o = json_loadb(slot, n, JSON_REJECT_DUPLICATES, NULL);
	s = json_object_get(o, "seq");
	h = json_string_value(json_object_get(o, "hash"));
	sig = json_string_value(json_object_get(o, "sig"));
	type = json_string_value(json_object_get(o, "type"));
	if (!json_is_integer(s) || json_integer_value(s) < 0 || !is_hex64(h) || sig == NULL || type == NULL ||
	    strcmp(type, HEAD_TYPE) != 0 || berth_unhex(sig, sigb, 64) < 0) {
		snprintf(why, whylen, "malformed");
		goto out;
	}
	*seq = (uint64_t)json_integer_value(s);
	strcpy(hash, h);
	head_message(*seq, h, msg, sizeof msg);
	if (k != NULL && k->loaded && memcmp(k->pub, pub, 32) == 0 &&
	    berth_sign(k, msg, strlen(msg), mine_sig, &err) == 0 && memcmp(mine_sig, sigb, 64) == 0) {
		rc = 1;
		goto out;
	}
	if (berth_verify(pub, msg, strlen(msg), sigb, &err) < 0) {
		const char *other = json_string_value(json_object_get(o, "pub"));
		unsigned char op[32];
		char mine[65];

		berth_hex(pub, 32, mine);
		/* Say whether another key made a valid signature (XDG_CONFIG_HOME
		 * changed, or a log copied from elsewhere) or none did. */
		if (other != NULL && berth_unhex(other, op, 32) == 0 && memcmp(op, pub, 32) != 0 &&
		    berth_verify(op, msg, strlen(msg), sigb, &err) == 0)
			snprintf(why, whylen,
				 "the signature over seq %" PRIu64 " does not verify with the host key (pub %.16s...):"
				 " it was made by another key (pub %.16s...)",
				 *seq, mine, other);
		else
			snprintf(why, whylen, "the signature over seq %" PRIu64 " does not verify with the host key (pub %.16s...)",
				 *seq, mine);
		rc = -2;
		goto out;
	}
	rc = 1;
out:
	json_decref(o);
	return rc;
}

/*
 * The newest valid head in @buf (2 slots).  Returns 0 with *seq/hash/slot
 * (seq 0, slot -1: none), or -1 with @why set when a slot is signed wrongly.
 */
static int head_pick(const char *buf, const unsigned char *pub, const struct berth_hostkey *k, uint64_t *seq,
		     char hash[65], int *slot, char *why, size_t whylen)
{
	*seq = 0;
	strcpy(hash, ZERO_HASH);
	*slot = -1;
	for (int i = 0; i < 2; i++) {
		uint64_t s = 0;
		char h[65];
		int rc = head_slot_parse(buf + i * HEAD_SLOT, pub, k, &s, h, why, whylen);

		if (rc == -2)
			return -1;
		if (rc == 1 && (*slot < 0 || s > *seq)) {
			*seq = s;
			strcpy(hash, h);
			*slot = i;
		}
	}
	return 0;
}

static int head_read(int fd, char buf[2 * HEAD_SLOT], struct berth_error *err)
{
	ssize_t n;

	memset(buf, 0, 2 * HEAD_SLOT);
	n = pread(fd, buf, 2 * HEAD_SLOT, 0);
	if (n < 0)
		return berth_err(err, errno, "cannot read the audit head");
	return 0;
}

static int head_write(struct berth_audit *a, struct berth_error *err)
{
	char msg[256], slot[HEAD_SLOT], sighex[129], pubhex[65];
	unsigned char sig[64];
	int target = a->head_slot == 0 ? 1 : 0, n;

	head_message(a->seq, a->hash, msg, sizeof msg);
	if (berth_sign(&a->key, msg, strlen(msg), sig, err) < 0)
		return -1;
	berth_hex(sig, 64, sighex);
	berth_hex(a->key.pub, 32, pubhex);
	memset(slot, ' ', sizeof slot);
	n = snprintf(slot, sizeof slot, "{\"hash\":\"%s\",\"pub\":\"%s\",\"seq\":%" PRIu64 ",\"sig\":\"%s\",\"type\":\"" HEAD_TYPE "\"}",
		     a->hash, pubhex, a->seq, sighex);
	slot[n] = ' ';
	slot[HEAD_SLOT - 1] = '\n';
	if (write_all_at(a->headfd, slot, sizeof slot, (off_t)target * HEAD_SLOT) < 0 || fdatasync(a->headfd) < 0) {
		int e = errno;

		/* Leave no signed head for records about to be truncated away. */
		memset(slot, ' ', sizeof slot);
		slot[HEAD_SLOT - 1] = '\n';
		if (write_all_at(a->headfd, slot, sizeof slot, (off_t)target * HEAD_SLOT) == 0)
			fdatasync(a->headfd);
		return berth_err(err, e, "cannot write the audit head in `%s`", a->dir);
	}
	a->head_slot = target;
	memcpy(a->head_cache + target * HEAD_SLOT, slot, HEAD_SLOT);
	a->head_cached = true;
	return 0;
}

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

		if (read_all_at(fd, chunk, n, (off_t)(pos - n)) < 0) {
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
	if (read_all_at(fd, line, (size_t)(end - s), (off_t)s) < 0) {
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
		own = open_regular(dfd, name);
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

static int open_log(struct berth_audit *a, const char *name, bool create, struct berth_error *err)
{
	int fd = openat(a->dfd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT : 0), 0600);
	struct stat st;

	if (fd < 0)
		return berth_err(err, errno, "cannot open `%s/%s`", a->dir, name);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
		close(fd);
		berth_err(err, EPERM, "`%s/%s` is not a regular file owned by uid %u with mode 0600", a->dir, name,
			  (unsigned)geteuid());
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
 * they do not all lie in the active file, berth refuses to extend the log.
 */
static int quarantine_tail(struct berth_audit *a, uint64_t hseq, uint64_t lseq, json_t **recovery,
			   struct berth_error *err)
{
	uint64_t size = a->logsize, off = 0, first = 0;
	char *buf = NULL, qname[96], hex[65];
	int qfd = -1, rc = -1;

	if (fstat(a->logfd, &(struct stat){0}) < 0 || size > (1ULL << 31))
		return berth_err(err, EFBIG, "the audit log `%s/%s` is too large to repair", a->dir, a->logname);
	buf = malloc(size ? size : 1);
	if (buf == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	if (size > 0 && read_all_at(a->logfd, buf, size, 0) < 0) {
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
		if (seq == hseq)
			off = end;
		i = end;
	}
	if (off == 0 && first != hseq + 1) {
		berth_err(err, EBADMSG,
			  "records %" PRIu64 "..%" PRIu64 " of the audit log in `%s` are not covered by its signed head and"
			  " do not all lie in the active file",
			  hseq + 1, lseq, a->dir);
		berth_err_hint(err, "run `berth audit verify`; berth does not extend such a log");
		goto out;
	}
	snprintf(qname, sizeof qname, "quarantine-%020" PRIu64 "-%020" PRIu64 ".jsonl", hseq + 1, lseq);
	qfd = openat(a->dfd, qname, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (qfd < 0 || write_all_at(qfd, buf + off, (size_t)(size - off), 0) < 0 || fdatasync(qfd) < 0) {
		berth_err(err, errno, "cannot move unsigned records of the audit log to `%s/%s`", a->dir, qname);
		if (qfd >= 0)
			unlinkat(a->dfd, qname, 0);
		goto out;
	}
	if (ftruncate(a->logfd, (off_t)off) < 0 || fdatasync(a->logfd) < 0 || fsync(a->dfd) < 0) {
		berth_err(err, errno, "cannot cut the audit log `%s/%s` back to its signed head", a->dir, a->logname);
		goto out;
	}
	if (berth_sha256_hex(buf + off, (size_t)(size - off), hex, err) < 0)
		goto out;
	*recovery = json_pack("{s:s, s:I, s:I, s:s, s:I, s:s}", "reason", "log ahead of the signed head", "head_seq",
			      (json_int_t)hseq, "log_seq", (json_int_t)lseq, "quarantined", qname, "bytes",
			      (json_int_t)(size - off), "sha256", hex);
	snprintf(a->recovered + strlen(a->recovered), sizeof a->recovered - strlen(a->recovered),
		 "%srecords %" PRIu64 "..%" PRIu64 " of `%s` were written after the last signed head (a crash between "
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
static int sync_tail(struct berth_audit *a, json_t **recovery, struct berth_error *err)
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
	if (head_read(a->headfd, buf, err) < 0)
		return -1;
	/* Fast path: nothing changed since our own last write. */
	file_name(a->seq + 1, next);
	if (a->head_cached && a->logfd >= 0 && memcmp(buf, a->head_cache, sizeof buf) == 0 &&
	    fstat(a->logfd, &st) == 0 && (uint64_t)st.st_size == a->logsize &&
	    faccessat(a->dfd, next, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (head_pick(buf, a->key.pub, &a->key, &hseq, hhash, &slot, why, sizeof why) < 0) {
		berth_err(err, EBADMSG, "the audit head in `%s` is forged or damaged: %s", a->dir, why);
		if (strstr(why, "made by another key") != NULL)
			return berth_err_hint(err,
					      "the host key in `%s` did not sign this log: if XDG_CONFIG_HOME changed, set it back;"
					      " for a separate log set BERTH_AUDIT_DIR; `berth audit verify --key PUB.pem` checks it",
					      a->key.dir);
		return berth_err_hint(err, "run `berth audit verify`; the log cannot be extended");
	}
	if (list_files(a->dfd, &names, &n, err) < 0)
		return -1;
	if (n == 0) {
		file_name(1, next);
		if (open_log(a, next, true, err) < 0)
			goto out;
	} else if (strcmp(a->logname, names[n - 1]) != 0 || a->logfd < 0) {
		if (open_log(a, names[n - 1], false, err) < 0)
			goto out;
	}
	if (fstat(a->logfd, &st) < 0) {
		berth_err(err, errno, "cannot stat `%s`", a->logname);
		goto out;
	}
	a->logsize = (uint64_t)st.st_size;
	if (a->logsize > 0) {
		char last;

		if (read_all_at(a->logfd, &last, 1, (off_t)a->logsize - 1) < 0) {
			berth_err(err, errno, "cannot read `%s`", a->logname);
			goto out;
		}
		if (last != '\n') {
			uint64_t start;
			char *torn = read_line_before(a->logfd, a->logsize, &start, err), hex[65], prefix[129];
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
			*recovery = json_pack("{s:s, s:s, s:I, s:I, s:s, s:s}", "reason", "torn last line", "file", a->logname,
					      "offset", (json_int_t)start, "length", (json_int_t)tl, "sha256", hex,
					      "prefix_hex", prefix);
			snprintf(a->recovered, sizeof a->recovered,
				 "the last line of `%s/%s` was torn (%zu bytes at offset %" PRIu64
				 ", an append a crash interrupted): cut off and sealed with a recovery record",
				 a->dir, a->logname, tl, start);
			/* The next group overwrites it, starting with the recovery
			 * record; if that fails, the torn bytes are put back. */
			a->logsize = start;
		}
	}
	/* The tail record: the active file's last, or the previous file's. */
	for (size_t i = n; ; i--) {
		const char *name = i == 0 ? NULL : names[i - 1];

		if (name == NULL)
			break;
		if (last_record(a->dfd, name, strcmp(name, a->logname) == 0 ? a->logfd : -1, a->logsize, &lseq, lhash, err) < 0)
			goto out;
		if (lseq != 0)
			break;
	}
	if (lseq < hseq || (lseq == hseq && strcmp(lhash, hhash) != 0)) {
		berth_err(err, EBADMSG,
			  "the audit log in `%s` ends at record %" PRIu64 " but its signed head names record %" PRIu64
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
		if (quarantine_tail(a, hseq, lseq, recovery, err) < 0)
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
	free_names(names, n);
	return rc;
}

/* ---- committing ---- */

static int rotate_if_needed(struct berth_audit *a, struct berth_error *err)
{
	char name[FILE_NAME_LEN + 1];

	/* A torn tail is sealed in its own file first (the recovery record
	 * overwrites it); rotating now would leave it behind. */
	if (a->rotate == 0 || a->logsize < a->rotate || a->torn != NULL)
		return 0;
	file_name(a->seq + 1, name);
	if (open_log(a, name, true, err) < 0)
		return -1;
	if (fsync(a->dfd) < 0)
		return berth_err(err, errno, "cannot sync `%s`", a->dir);
	return 0;
}

/* Write @n records, after the recovery record @recovery when not NULL, as
 * one group; the caller holds LOCK_EX and has run sync_tail(). */
static int commit_locked(struct berth_audit *a, struct prepared **recs, size_t n, json_t *recovery,
			 struct berth_error *err)
{
	struct line out = {0};
	struct prepared rec = {0};
	uint64_t seq0, size0;
	char hash0[65], ts[32];
	int rc = -1;

	if (rotate_if_needed(a, err) < 0)
		return -1;
	seq0 = a->seq;
	size0 = a->logsize;
	strcpy(hash0, a->hash);
	berth_audit_now_rfc3339(ts);
	if (recovery != NULL) {
		rec.run_id = strdup("\"audit\"");
		rec.kind = strdup("\"" BERTH_AUDIT_KIND_RECOVERY "\"");
		rec.actor = strdup("\"berth\"");
		rec.payload = berth_jcs(recovery, err);
		if (rec.run_id == NULL || rec.kind == NULL || rec.actor == NULL || rec.payload == NULL) {
			berth_err(err, ENOMEM, "audit: cannot build the recovery record");
			goto out;
		}
		if (render(&rec, a->seq + 1, a->hash, ts, &out, err) < 0)
			goto out;
		a->seq = rec.seq;
		strcpy(a->hash, rec.hash);
	}
	for (size_t i = 0; i < n; i++) {
		if (render(recs[i], a->seq + 1, a->hash, ts, &out, err) < 0)
			goto restore;
		a->seq = recs[i]->seq;
		strcpy(a->hash, recs[i]->hash);
	}
	if (out.len == 0) {
		rc = 0;
		goto out;
	}
	if (write_all_at(a->logfd, out.p, out.len, (off_t)size0) < 0 ||
	    (a->torn_len > out.len && ftruncate(a->logfd, (off_t)(size0 + out.len)) < 0) || fdatasync(a->logfd) < 0) {
		berth_err(err, errno, "cannot write the audit log `%s/%s`", a->dir, a->logname);
		berth_err_hint(err, "free space or fix the disk under `%s`; nothing was recorded, so berth refuses to go on",
			       a->dir);
		goto truncate;
	}
	a->logsize = size0 + out.len;
	if (head_write(a, err) < 0)
		goto truncate;
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
			(void)write_all_at(a->logfd, a->torn, a->torn_len, (off_t)size0);
		fdatasync(a->logfd);
	}
	a->logsize = size0;
restore:
	a->seq = seq0;
	strcpy(a->hash, hash0);
	a->head_cached = false;
out:
	prepared_free(&rec);
	free(out.p);
	return rc;
}

/*
 * flock(2) @op on @fd, waiting at most BERTH_AUDIT_LOCK_TIMEOUT_MS (or
 * $BERTH_AUDIT_LOCK_TIMEOUT_MS): a writer that holds the lock and is
 * stopped (SIGSTOP, a debugger) must not hang every later berth forever.
 * Returns 0, -1 with errno (ETIMEDOUT when the wait ran out).
 */
static int lock_wait(int fd, int op)
{
	const char *env = getenv("BERTH_AUDIT_LOCK_TIMEOUT_MS");
	long limit = env != NULL ? strtol(env, NULL, 10) : BERTH_AUDIT_LOCK_TIMEOUT_MS;
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

static int lock_ex(struct berth_audit *a, struct berth_error *err)
{
	if (lock_wait(a->lockfd, LOCK_EX) < 0) {
		int e = errno;
		if (e == ETIMEDOUT)
			berth_err(err, 0, "cannot lock the audit log `%s/lock`: another berth process holds it and "
					  "does not let go",
				  a->dir);
		else
			berth_err(err, e, "cannot lock the audit log `%s/lock`", a->dir);
		return berth_err_hint(err, "a berth process stopped while writing holds the lock: find it with "
					   "`fuser %s/lock`, and continue or end it",
				      a->dir);
	}
	return 0;
}

/* Lock, bring the tail up to date (sealing a crash), write @n records. */
static int commit(struct berth_audit *a, struct prepared **recs, size_t n, struct berth_error *err)
{
	json_t *recovery = NULL;
	int rc;

	if (lock_ex(a, err) < 0)
		return -1;
	rc = sync_tail(a, &recovery, err);
	if (rc == 0)
		rc = commit_locked(a, recs, n, recovery, err);
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

int berth_audit_append_batch(struct berth_audit *a, struct berth_audit_entry *e, size_t n, struct berth_error *err)
{
	struct prepared *p = calloc(n ? n : 1, sizeof *p);
	int rc = -1;
	size_t i;

	if (p == NULL)
		return berth_err(err, ENOMEM, "audit");
	for (i = 0; i < n; i++)
		if (prepare(a, e[i].run_id, e[i].kind, e[i].actor, e[i].payload, &p[i], err) < 0)
			goto out;
	rc = submit(a, p, n, err);
	for (i = 0; rc == 0 && i < n; i++) {
		e[i].seq = p[i].seq;
		strcpy(e[i].hash, p[i].hash);
	}
	i = n;
out:
	for (size_t j = 0; j < i; j++)
		prepared_free(&p[j]);
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

/* ---- open / close ---- */

static int check_dir(int dfd, const char *dir, struct berth_error *err)
{
	struct stat st;

	if (fstat(dfd, &st) < 0)
		return berth_err(err, errno, "cannot stat `%s`", dir);
	if (st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
		berth_err(err, EPERM, "audit directory `%s` is not owned by uid %u with mode 0700 (mode %04o, owner %u)",
			  dir, (unsigned)geteuid(), (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
		return berth_err_hint(err, "`chmod 700 %s`", dir);
	}
	return 0;
}

static int open_file_0600(int dfd, const char *dir, const char *name, struct berth_error *err)
{
	int fd = openat(dfd, name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	struct stat st;

	if (fd < 0)
		return berth_err(err, errno, "cannot open `%s/%s`", dir, name);
	if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
		close(fd);
		berth_err(err, EPERM, "`%s/%s` is not a regular file", dir, name);
		return berth_err_hint(err, "something replaced berth's file: look at `ls -l %s` before you remove it",
				      dir);
	}
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
		close(fd);
		berth_err(err, EPERM, "`%s/%s` is not a regular file owned by uid %u with mode 0600", dir, name,
			  (unsigned)geteuid());
		return berth_err_hint(err, "`chmod 600 %s/%s`", dir, name);
	}
	return fd;
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
		char *end;
		unsigned long long v = strtoull(rot, &end, 10);

		if (*end != '\0' || rot[0] == '-') {
			berth_usage_err(err, "BERTH_AUDIT_ROTATE_BYTES `%s` is not a number of bytes", rot);
			goto fail;
		}
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
	if ((a->lockfd = open_file_0600(a->dfd, a->dir, "lock", err)) < 0 ||
	    (a->headfd = open_file_0600(a->dfd, a->dir, "head", err)) < 0)
		goto fail;
	if (berth_hostkey_load(&a->key, true, err) < 0) {
		berth_err_wrap(err, "audit");
		goto fail;
	}
	if (lock_ex(a, err) < 0)
		goto fail;
	if (sync_tail(a, &recovery, err) < 0 || (recovery != NULL && commit_locked(a, NULL, 0, recovery, err) < 0)) {
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
	if (a->dfd >= 0)
		close(a->dfd);
	if (a->lockfd >= 0)
		close(a->lockfd);
	if (a->headfd >= 0)
		close(a->headfd);
	if (a->logfd >= 0)
		close(a->logfd);
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
	free_names(r->names, r->n);
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
	r->lockfd = open_regular(r->dfd, "lock");
	if (r->lockfd < 0 && errno == EINVAL)
		return open_failed(err, r->dir, "lock");
	if (r->lockfd >= 0 && lock_wait(r->lockfd, LOCK_SH) < 0) {
		int e = errno;
		if (e == ETIMEDOUT)
			berth_err(err, 0, "cannot lock the audit log `%s/lock` to read it: another berth process "
					  "holds it and does not let go",
				  r->dir);
		else
			berth_err(err, e, "cannot lock the audit log `%s/lock` to read it", r->dir);
		return berth_err_hint(err, "a berth process stopped while writing holds the lock: find it with "
					   "`fuser %s/lock`, and continue or end it",
				      r->dir);
	}
	if (list_files(r->dfd, &r->names, &r->n, err) < 0)
		return -1;
	return 1;
}

/*
 * Walk every line of every file.  @fn gets the raw line (without '\n'), its
 * length, whether it ended in '\n', the file name and line number; a
 * non-zero return stops the walk and is returned.
 */
static int walk(struct reader *r, int (*fn)(const char *line, size_t len, bool nl, const char *file, uint64_t lineno,
					    void *ctx),
		void *ctx, struct berth_error *err)
{
	char *buf = NULL;
	size_t cap = 0;
	int rc = 0;

	for (size_t i = 0; i < r->n && rc == 0; i++) {
		int fd = open_regular(r->dfd, r->names[i]);
		FILE *f;
		uint64_t lineno = 0;
		ssize_t len;

		if (fd < 0) {
			free(buf);
			return open_failed(err, r->dir, r->names[i]);
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
		berth_err(c->err, EBADMSG, "`%s:%" PRIu64 "`: torn last line (an interrupted append)", c->path, lineno);
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
	char last_hash[65];
	char last_file[FILE_NAME_LEN + 1];
	uint64_t last_line;
	const char *cur_file;
};

static int broken(struct berth_audit_verdict *v, const char *dir, const char *file, uint64_t line, uint64_t record,
		  const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int broken(struct berth_audit_verdict *v, const char *dir, const char *file, uint64_t line, uint64_t record,
		  const char *fmt, ...)
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
	bool whole_file_start;  /* the chunk starts the file (line 1) */
	/* results */
	uint64_t lines, records, recoveries;
	uint64_t first_seq, last_seq;
	char first_prev[64], last_hash[64];
	bool broken;
	uint64_t broken_line;   /* 0-based line index in the chunk */
	uint64_t broken_want;   /* record number expected there, relative: records before it in the chunk */
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
			chunk_fail(k,
				   "torn last line of %zu bytes (an append a crash interrupted; the next berth write to this log"
				   " cuts it off and seals it with a recovery record)",
				   (size_t)(end - p));
			return NULL;
		}
		if (check_line(p, (size_t)(nl - p), &f, &err) < 0) {
			chunk_fail(k, "%s", err.msg);
			return NULL;
		}
		if (k->records == 0) {
			k->first_seq = f.seq;
			memcpy(k->first_prev, f.prev, 64);
		} else if (f.seq != k->last_seq + 1) {
			chunk_fail(k, "seq %" PRIu64 " where %" PRIu64 " was expected: records were deleted, reordered or inserted",
				   f.seq, k->last_seq + 1);
			return NULL;
		} else if (memcmp(f.prev, k->last_hash, 64) != 0) {
			chunk_fail(k, "prev does not name the previous record's hash: records were removed, reordered or replaced");
			return NULL;
		}
		if (f.kindlen == sizeof BERTH_AUDIT_KIND_RECOVERY + 1 &&
		    memcmp(f.kind + 1, BERTH_AUDIT_KIND_RECOVERY, sizeof BERTH_AUDIT_KIND_RECOVERY - 1) == 0)
			k->recoveries++;
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
				      "seq %" PRIu64 " where %" PRIu64 " was expected: records were deleted, reordered or inserted",
				      k->first_seq, want);
		if (memcmp(k->first_prev, c->last_hash, 64) != 0)
			return broken(v, c->dir, file, line0 + 1, want,
				      "prev does not name the previous record's hash: records were removed, reordered or replaced");
		if (k->whole_file_start && file_seq(file) != k->first_seq)
			return broken(v, c->dir, file, 1, want,
				      "the file name says its first record is %" PRIu64 ", it is %" PRIu64, file_seq(file),
				      k->first_seq);
	}
	if (k->broken)
		return broken(v, c->dir, file, line0 + k->broken_line + 1, v->records + k->broken_want + 1, "%s", k->reason);
	if (k->records > 0) {
		memcpy(c->last_hash, k->last_hash, 64);
		c->last_hash[64] = '\0';
		snprintf(c->last_file, sizeof c->last_file, "%s", file);
		c->last_line = line0 + k->lines;
	}
	v->records += k->records;
	v->recoveries += k->recoveries;
	return 0;
}

static int verify_file(struct reader *r, const char *name, struct verify_ctx *c, struct berth_error *err)
{
	cleanup_close int fd = open_regular(r->dfd, name);
	struct chunk k[4];
	pthread_t tid[4];
	size_t nk, len;
	struct stat st;
	long cpus;
	char *map;
	int rc = 0;
	uint64_t line0 = 0;

	if (fd < 0)
		return open_failed(err, r->dir, name);
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

int berth_audit_verify(const char *dir, const unsigned char *pub, struct berth_audit_verdict *v,
		       struct berth_error *err)
{
	struct reader r;
	struct verify_ctx c = {.v = v};
	struct berth_hostkey key = {0};
	char buf[2 * HEAD_SLOT], hhash[65], why[256];
	uint64_t hseq = 0;
	int slot, rc, hfd;
	bool have_head;

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
	rc = verify_files(&r, &c, err);
	if (rc < 0)
		goto out;
	rc = 0;
	if (!v->intact)
		goto out;
	strcpy(v->head, c.last_hash);
	/* The signed head. */
	hfd = open_regular(r.dfd, "head");
	have_head = hfd >= 0;
	if (have_head) {
		rc = head_read(hfd, buf, err);
		close(hfd);
		if (rc < 0)
			goto out;
	} else if (errno != ENOENT) {
		rc = open_failed(err, r.dir, "head");
		goto out;
	}
	if (!have_head) {
		if (v->records > 0)
			broken(v, r.dir, c.last_file, c.last_line, v->records,
			       "there is no signed head (`head` was deleted): the tail cannot be checked");
		goto out;
	}
	if (pub == NULL) {
		if (berth_hostkey_load(&key, false, err) < 0) {
			rc = berth_err_wrap(err, "cannot check the signed head");
			goto out;
		}
		pub = key.pub;
	}
	if (head_pick(buf, pub, NULL, &hseq, hhash, &slot, why, sizeof why) < 0) {
		broken(v, r.dir, "head", 0, v->records, "the signed head is forged or damaged: %s", why);
		goto out;
	}
	if (hseq > v->records)
		broken(v, r.dir, c.last_file, c.last_line, v->records,
		       "the signed head names record %" PRIu64 " but the log ends at record %" PRIu64
		       ": records were removed from the tail",
		       hseq, v->records);
	else if (hseq < v->records)
		broken(v, r.dir, c.last_file, c.last_line, v->records,
		       "records %" PRIu64 "..%" PRIu64 " are not covered by the signed head (appended without the host key,"
		       " or a crash between the log's and the head's sync that the next berth write seals)",
		       hseq + 1, v->records);
	else if (strcmp(hhash, c.last_hash) != 0)
		broken(v, r.dir, c.last_file, c.last_line, v->records,
		       "the last record's hash differs from the signed head: the log was replaced");
out:
	berth_hostkey_clear(&key);
	reader_close(&r);
	return rc;
}
