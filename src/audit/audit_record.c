/* SPDX-License-Identifier: MIT */
/*
 * audit_record.c - one audit record (audit.c): its canonical pieces (JCS), its line and
 * hash, and the fast check and parse of a line.
 */

#include <inttypes.h>
#include <string.h>

#include "../util/cleanup.h"
#include "../util/jcs.h"
#include "../util/sha256.h"

#include "audit_int.h"

/* ---- records ---- */

void berth_aud_prepared_free(struct prepared *p)
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
	v = berth_aud_clean_string(a, value, strlen(value));
	pthread_rwlock_unlock(&a->secrets_lock);
	if (v == NULL) {
		berth_err(err, EINVAL, "audit: `%s` is not valid UTF-8", name);
		return NULL;
	}
	s = berth_jcs(v, err);
	json_decref(v);
	return s;
}

int berth_aud_prepare(struct berth_audit *a, const char *run_id, const char *kind, const char *actor,
		      json_t *payload, struct prepared *p, struct berth_error *err)
{
	json_t *clean;

	memset(p, 0, sizeof *p);
	if (payload != NULL && !json_is_object(payload))
		return berth_err(err, EINVAL, "audit: the payload of a `%s` record must be a JSON object",
				 kind);
	if ((p->run_id = jcs_field(a, "run_id", run_id, err)) == NULL ||
	    (p->kind = jcs_field(a, "kind", kind, err)) == NULL ||
	    (p->actor = jcs_field(a, "actor", actor, err)) == NULL) {
		berth_aud_prepared_free(p);
		return -1;
	}
	clean = berth_audit_redact(a, payload, err);
	if (clean == NULL) {
		berth_aud_prepared_free(p);
		return -1;
	}
	p->payload = berth_jcs(clean, err);
	json_decref(clean);
	if (p->payload == NULL) {
		berth_aud_prepared_free(p);
		return berth_err_wrap(err, "audit: payload of a `%s` record", kind);
	}
	return 0;
}

/*
 * Append the canonical line of @p (seq @seq, prev @prev, time @ts) and its
 * newline to @out; set p->hash.  The members in JCS order are actor, hash,
 * kind, payload, prev, run_id, seq, ts; the hash covers the same text
 * without `"hash":"...",`.
 */
int berth_aud_render(struct prepared *p, uint64_t seq, const char *prev, const char *ts,
		     struct berth_buf *out, struct berth_error *err)
{
	struct berth_sha256 *h;
	char num[32];
	size_t start = out->len, mid;

	snprintf(num, sizeof num, "%" PRIu64, seq);
	berth_buf_puts(out, "{\"actor\":");
	berth_buf_puts(out, p->actor);
	mid = out->len;
	{
		/* the members after the actor, in JCS order, less the hash */
		const char *rest[] = {",\"kind\":",   p->kind, ",\"payload\":",  p->payload,
				      ",\"prev\":\"", prev,    "\",\"run_id\":", p->run_id,
				      ",\"seq\":",    num,     ",\"ts\":\"",     ts,
				      "\"}"};
		for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++)
			berth_buf_puts(out, rest[i]);
	}
	if (out->oom)
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
		berth_buf_put(out, ins, 74);
		berth_buf_put(out, "\n", 1);
		if (out->oom)
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

/*
 * The fast check of one line, without a tree: canonical (berth_jcs_check),
 * exactly the eight members with values of the right form, and the hash.
 * Fills the span fields of @f.  Returns 0, or -1 with @err (EBADMSG).
 */
int berth_aud_check_line(const char *line, size_t len, struct line_fields *f, struct berth_error *err)
{
	static const char *const members[] = {"actor", "hash",   "kind", "payload",
					      "prev",  "run_id", "seq",  "ts"};
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
				 "not a record: an object with exactly the members actor, hash, kind, "
				 "payload, prev, run_id, seq, ts");
	for (size_t i = 0; i < n; i++)
		if (m[i].klen != strlen(members[i]) || memcmp(m[i].key, members[i], m[i].klen) != 0)
			return berth_err(err, EBADMSG,
					 "not a record: an object with exactly the members actor, hash, "
					 "kind, payload, prev, run_id, seq, ts");
	/* actor, kind, run_id: non-empty strings; payload an object. */
	if (m[0].value[0] != '"' || m[0].vlen < 3 || m[2].value[0] != '"' || m[2].vlen < 3 ||
	    m[5].value[0] != '"' || m[5].vlen < 3)
		return berth_err(err, EBADMSG,
				 "member `actor`, `kind` or `run_id` is not a non-empty string");
	if (m[3].value[0] != '{')
		return berth_err(err, EBADMSG, "member `payload` is not an object");
	if (!hex64_span(m[1].value, m[1].vlen) || !hex64_span(m[4].value, m[4].vlen))
		return berth_err(err, EBADMSG, "member `prev` or `hash` is not 64 lowercase hex digits");
	if (m[7].vlen != 26 || m[7].value[0] != '"' || m[7].value[11] != 'T' || m[7].value[20] != '.' ||
	    m[7].value[24] != 'Z')
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
		return berth_err(err, EBADMSG,
				 "hash does not match the content (recomputed %.16s..., stored %.16s...)",
				 hex, f->hash);
	return 0;
}

json_t *berth_audit_parse_line(const char *line, size_t len, struct berth_audit_record *r,
			       struct berth_error *err)
{
	struct line_fields f;
	json_error_t jerr;
	json_t *o;

	if (berth_aud_check_line(line, len, &f, err) < 0)
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
