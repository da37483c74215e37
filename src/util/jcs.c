/* SPDX-License-Identifier: MIT */

#include "jcs.h"

#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JCS_MAX_DEPTH 1000

struct buf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void put(struct buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *q;

		while (cap < b->len + n + 1)
			cap *= 2;
		q = realloc(b->p, cap);
		if (q == NULL) {
			b->oom = true;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

/*
 * Decode one UTF-8 sequence at s[*i] (RFC 3629: no overlongs, no surrogates,
 * at most U+10FFFF).  Returns the code point, or -1.
 */
static int32_t utf8_next(const unsigned char *s, size_t n, size_t *i)
{
	unsigned char c = s[*i];
	int32_t cp;
	size_t k;

	if (c < 0x80) {
		(*i)++;
		return c;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		k = 1;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		k = 2;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		k = 3;
		cp = c & 0x07;
	} else {
		return -1;
	}
	for (size_t j = 1; j <= k; j++) {
		if (*i + j >= n || (s[*i + j] & 0xc0) != 0x80)
			return -1;
		cp = (cp << 6) | (s[*i + j] & 0x3f);
	}
	if ((k == 2 && cp < 0x800) || (k == 3 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
		return -1;
	*i += k + 1;
	return cp;
}

static bool utf8_valid(const char *s, size_t n)
{
	for (size_t i = 0; i < n;)
		if (utf8_next((const unsigned char *)s, n, &i) < 0)
			return false;
	return true;
}

/* Next UTF-16 code unit of a UTF-8 string (input already validated). */
struct u16it {
	const unsigned char *s;
	size_t n, i;
	uint16_t pending; /* low surrogate still to deliver */
};

static int u16_next(struct u16it *it)
{
	int32_t cp;

	if (it->pending) {
		uint16_t u = it->pending;

		it->pending = 0;
		return u;
	}
	if (it->i >= it->n)
		return -1;
	cp = utf8_next(it->s, it->n, &it->i);
	if (cp < 0)
		return -1;
	if (cp >= 0x10000) {
		cp -= 0x10000;
		it->pending = (uint16_t)(0xdc00 | (cp & 0x3ff));
		return 0xd800 | (cp >> 10);
	}
	return cp;
}

/* RFC 8785 section 3.2.3: compare member names as UTF-16 code unit arrays. */
static int cmp_utf16(const char *a, size_t an, const char *b, size_t bn)
{
	struct u16it x = {(const unsigned char *)a, an, 0, 0}, y = {(const unsigned char *)b, bn, 0, 0};

	for (;;) {
		int u = u16_next(&x), v = u16_next(&y);

		if (u != v)
			return u < v ? -1 : 1; /* -1 (end) sorts first */
		if (u < 0)
			return 0;
	}
}

struct member {
	const char *key;
	size_t klen;
	json_t *value;
};

static int member_cmp(const void *pa, const void *pb)
{
	const struct member *a = pa, *b = pb;

	return cmp_utf16(a->key, a->klen, b->key, b->klen);
}

static int put_string(struct buf *b, const char *s, size_t n, struct berth_error *err)
{
	static const char hex[] = "0123456789abcdef";
	size_t run = 0;

	if (!utf8_valid(s, n))
		return berth_err(err, EINVAL, "canonical JSON: a string is not valid UTF-8");
	put(b, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[7];

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		put(b, s + run, i - run);
		run = i + 1;
		switch (c) {
		case '"': put(b, "\\\"", 2); break;
		case '\\': put(b, "\\\\", 2); break;
		case '\b': put(b, "\\b", 2); break;
		case '\t': put(b, "\\t", 2); break;
		case '\n': put(b, "\\n", 2); break;
		case '\f': put(b, "\\f", 2); break;
		case '\r': put(b, "\\r", 2); break;
		default:
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 0xf];
			put(b, esc, 6);
			break;
		}
	}
	put(b, s + run, n - run);
	put(b, "\"", 1);
	return 0;
}

int berth_jcs_number(double d, char buf[32], struct berth_error *err)
{
	char tmp[40], digits[20];
	int k = 0, n, e, pos = 0;
	char *ep;

	if (!isfinite(d))
		return berth_err(err, EINVAL, "canonical JSON: a number is not finite");
	if (d == 0) {
		strcpy(buf, "0");
		return 0;
	}
	if (d < 0) {
		buf[pos++] = '-';
		d = -d;
	}
	/* The shortest precision whose correctly rounded digits read back as d. */
	for (int p = 1; p <= 17; p++) {
		snprintf(tmp, sizeof tmp, "%.*e", p - 1, d);
		if (strtod(tmp, NULL) == d)
			break;
	}
	/* tmp is D[.DDD]e[+-]XX */
	for (const char *q = tmp; *q != 'e'; q++)
		if (*q != '.')
			digits[k++] = *q;
	while (k > 1 && digits[k - 1] == '0')
		k--;
	digits[k] = '\0';
	e = (int)strtol(strchr(tmp, 'e') + 1, &ep, 10);
	n = e + 1; /* value = 0.DIGITS x 10^n */
	if (k <= n && n <= 21) {
		memcpy(buf + pos, digits, (size_t)k);
		pos += k;
		for (int i = 0; i < n - k; i++)
			buf[pos++] = '0';
	} else if (0 < n && n <= 21) {
		memcpy(buf + pos, digits, (size_t)n);
		pos += n;
		buf[pos++] = '.';
		memcpy(buf + pos, digits + n, (size_t)(k - n));
		pos += k - n;
	} else if (-6 < n && n <= 0) {
		buf[pos++] = '0';
		buf[pos++] = '.';
		for (int i = 0; i < -n; i++)
			buf[pos++] = '0';
		memcpy(buf + pos, digits, (size_t)k);
		pos += k;
	} else {
		buf[pos++] = digits[0];
		if (k > 1) {
			buf[pos++] = '.';
			memcpy(buf + pos, digits + 1, (size_t)(k - 1));
			pos += k - 1;
		}
		pos += snprintf(buf + pos, 32 - (size_t)pos, "e%c%d", n - 1 < 0 ? '-' : '+', abs(n - 1));
	}
	buf[pos] = '\0';
	return 0;
}

static int emit(struct buf *b, const json_t *v, int depth, struct berth_error *err)
{
	char num[32];

	if (depth > JCS_MAX_DEPTH)
		return berth_err(err, ELOOP, "canonical JSON: nesting deeper than %d", JCS_MAX_DEPTH);
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		size_t n = json_object_size(v), i = 0;
		struct member *m = n ? calloc(n, sizeof *m) : NULL;
		const char *key;
		json_t *val;
		int rc = 0;

		if (n && m == NULL)
			return berth_err(err, ENOMEM, "canonical JSON");
		json_object_foreach((json_t *)v, key, val) {
			m[i].key = key;
			m[i].klen = json_object_iter_key_len(json_object_key_to_iter(key));
			m[i].value = val;
			if (memchr(key, '\0', m[i].klen) != NULL || !utf8_valid(key, m[i].klen)) {
				free(m);
				return berth_err(err, EINVAL, "canonical JSON: a member name is not valid UTF-8 or holds U+0000");
			}
			i++;
		}
		if (n > 1)
			qsort(m, n, sizeof *m, member_cmp);
		put(b, "{", 1);
		for (i = 0; i < n && rc == 0; i++) {
			if (i)
				put(b, ",", 1);
			rc = put_string(b, m[i].key, m[i].klen, err);
			put(b, ":", 1);
			if (rc == 0)
				rc = emit(b, m[i].value, depth + 1, err);
		}
		free(m);
		if (rc < 0)
			return -1;
		put(b, "}", 1);
		return 0;
	}
	case JSON_ARRAY:
		put(b, "[", 1);
		for (size_t i = 0; i < json_array_size(v); i++) {
			if (i)
				put(b, ",", 1);
			if (emit(b, json_array_get(v, i), depth + 1, err) < 0)
				return -1;
		}
		put(b, "]", 1);
		return 0;
	case JSON_STRING:
		return put_string(b, json_string_value(v), json_string_length(v), err);
	case JSON_INTEGER: {
		json_int_t i = json_integer_value(v);

		if (i > BERTH_JCS_MAX_SAFE_INT || i < -BERTH_JCS_MAX_SAFE_INT) {
			/* Beyond 2^53 only the integers a double holds exactly
			 * (1e18, 2^60) have a JCS form; the ES6 digits are then
			 * the same as the integer's below 1e21. */
			double d = (double)i;

			if (d >= 9223372036854775808.0 || (json_int_t)d != i)
				return berth_err(err, EINVAL,
						 "canonical JSON: integer `%lld` is beyond 2^53 and is not an IEEE 754 double;"
						 " JCS cannot carry it exactly",
						 (long long)i);
			if (berth_jcs_number(d, num, err) < 0)
				return -1;
			puts_(b, num);
			return 0;
		}
		snprintf(num, sizeof num, "%lld", (long long)i);
		puts_(b, num);
		return 0;
	}
	case JSON_REAL:
		if (berth_jcs_number(json_real_value(v), num, err) < 0)
			return -1;
		puts_(b, num);
		return 0;
	case JSON_TRUE:
		puts_(b, "true");
		return 0;
	case JSON_FALSE:
		puts_(b, "false");
		return 0;
	case JSON_NULL:
		puts_(b, "null");
		return 0;
	default:
		return berth_err(err, EINVAL, "canonical JSON: unknown value type");
	}
}

char *berth_jcs_len(const json_t *v, size_t *len, struct berth_error *err)
{
	struct buf b = {0};

	if (v == NULL) {
		berth_err(err, EINVAL, "canonical JSON: no value");
		return NULL;
	}
	if (emit(&b, v, 0, err) < 0) {
		free(b.p);
		return NULL;
	}
	if (b.oom) {
		free(b.p);
		berth_err(err, ENOMEM, "canonical JSON");
		return NULL;
	}
	if (len != NULL)
		*len = b.len;
	return b.p;
}

char *berth_jcs(const json_t *v, struct berth_error *err)
{
	return berth_jcs_len(v, NULL, err);
}
