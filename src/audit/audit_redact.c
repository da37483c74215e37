/* SPDX-License-Identifier: MIT */
/*
 * audit_redact.c - redaction of audit payloads (audit.c): registered secrets and
 * sensitive keys are scrubbed before a record is made.
 */

#include <math.h>
#include <string.h>

#include "../util/cleanup.h"
#include "../util/jcs.h"
#include "../util/sha256.h"

#include "audit_int.h"

/* ---- redaction ---- */

static bool key_is_sensitive(const char *key)
{
	static const char *const parts[] = {"token",      "passw",       "passwd",  "secret",
					    "apikey",     "api_key",     "api-key", "private_key",
					    "privatekey", "private-key", "cookie",  "authoriz",
					    "credential", "bearer",      "session", "signature"};
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
json_t *berth_aud_clean_string(struct berth_audit *a, const char *s, size_t len)
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
		return berth_aud_clean_string(a, json_string_value(v), json_string_length(v));
	case JSON_INTEGER:
		if (json_integer_value(v) > BERTH_JCS_MAX_SAFE_INT ||
		    json_integer_value(v) < -BERTH_JCS_MAX_SAFE_INT) {
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
		berth_err(err, ENOMEM,
			  "audit: cannot redact the payload (out of memory or nested deeper than 900)");
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
