/* SPDX-License-Identifier: MIT */

#include "jcs.h"

#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "hex.h"
#include "text.h"

#define JCS_MAX_DEPTH 1000

/* One UTF-8 sequence at s[*i] (util/text.h: RFC 3629).  Returns the code point, or -1. */
static int32_t utf8_next(const unsigned char *s, size_t n, size_t *i)
{
	uint32_t cp;
	int k = berth_utf8_decode(s + *i, n - *i, &cp);

	if (k == 0)
		return -1;
	*i += (size_t)k;
	return (int32_t)cp;
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

static int put_string(struct berth_buf *b, const char *s, size_t n, struct berth_error *err)
{
	static const char hex[] = "0123456789abcdef";
	size_t run = 0;

	if (!utf8_valid(s, n))
		return berth_err(err, EINVAL, "canonical JSON: a string is not valid UTF-8");
	berth_buf_put(b, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[7];

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		berth_buf_put(b, s + run, i - run);
		run = i + 1;
		switch (c) {
		case '"':
			berth_buf_put(b, "\\\"", 2);
			break;
		case '\\':
			berth_buf_put(b, "\\\\", 2);
			break;
		case '\b':
			berth_buf_put(b, "\\b", 2);
			break;
		case '\t':
			berth_buf_put(b, "\\t", 2);
			break;
		case '\n':
			berth_buf_put(b, "\\n", 2);
			break;
		case '\f':
			berth_buf_put(b, "\\f", 2);
			break;
		case '\r':
			berth_buf_put(b, "\\r", 2);
			break;
		default:
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 0xf];
			berth_buf_put(b, esc, 6);
			break;
		}
	}
	berth_buf_put(b, s + run, n - run);
	berth_buf_put(b, "\"", 1);
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

static int emit(struct berth_buf *b, const json_t *v, int depth, struct berth_error *err)
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
				return berth_err(
				    err, EINVAL,
				    "canonical JSON: a member name is not valid UTF-8 or holds U+0000");
			}
			i++;
		}
		if (n > 1)
			qsort(m, n, sizeof *m, member_cmp);
		berth_buf_put(b, "{", 1);
		for (i = 0; i < n && rc == 0; i++) {
			if (i)
				berth_buf_put(b, ",", 1);
			rc = put_string(b, m[i].key, m[i].klen, err);
			berth_buf_put(b, ":", 1);
			if (rc == 0)
				rc = emit(b, m[i].value, depth + 1, err);
		}
		free(m);
		if (rc < 0)
			return -1;
		berth_buf_put(b, "}", 1);
		return 0;
	}
	case JSON_ARRAY:
		berth_buf_put(b, "[", 1);
		for (size_t i = 0; i < json_array_size(v); i++) {
			if (i)
				berth_buf_put(b, ",", 1);
			if (emit(b, json_array_get(v, i), depth + 1, err) < 0)
				return -1;
		}
		berth_buf_put(b, "]", 1);
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
						 "canonical JSON: integer `%lld` is beyond 2^53 and is not "
						 "an IEEE 754 double;"
						 " JCS cannot carry it exactly",
						 (long long)i);
			if (berth_jcs_number(d, num, err) < 0)
				return -1;
			berth_buf_puts(b, num);
			return 0;
		}
		snprintf(num, sizeof num, "%lld", (long long)i);
		berth_buf_puts(b, num);
		return 0;
	}
	case JSON_REAL:
		if (berth_jcs_number(json_real_value(v), num, err) < 0)
			return -1;
		berth_buf_puts(b, num);
		return 0;
	case JSON_TRUE:
		berth_buf_puts(b, "true");
		return 0;
	case JSON_FALSE:
		berth_buf_puts(b, "false");
		return 0;
	case JSON_NULL:
		berth_buf_puts(b, "null");
		return 0;
	default:
		return berth_err(err, EINVAL, "canonical JSON: unknown value type");
	}
}

char *berth_jcs_len(const json_t *v, size_t *len, struct berth_error *err)
{
	struct berth_buf b = {0};

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

/* ---- checking canonical text without a tree ---- */

struct chk {
	const char *s;
	size_t n, i;
	struct berth_error *err;
};

static int chk_fail(struct chk *c, const char *what)
{
	return berth_err(c->err, EBADMSG, "not canonical JSON (RFC 8785) at byte %zu: %s", c->i, what);
}

/* A string at c->i (the opening quote); its content goes to raw and rawlen. */
static int chk_string(struct chk *c, const char **raw, size_t *rawlen)
{
	const unsigned char *s = (const unsigned char *)c->s;
	size_t i = c->i + 1;

	for (;;) {
		unsigned char ch;

		/* Plain ASCII runs first, eight bytes at a time (a word has no
		 * byte that is '"', '\\', below 0x20 or above 0x7f). */
		while (i + 8 <= c->n) {
			uint64_t w, ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL, q, b;

			memcpy(&w, s + i, 8);
			q = w ^ (ones * '"');
			b = w ^ (ones * '\\');
			if ((((w - ones * 0x20) | (q - ones) | (b - ones)) & ~w & high) != 0 ||
			    (w & high) != 0)
				break;
			i += 8;
		}
		while (i < c->n && s[i] >= 0x20 && s[i] < 0x80 && s[i] != '"' && s[i] != '\\')
			i++;
		if (i >= c->n) {
			c->i = i;
			return chk_fail(c, "unterminated string");
		}
		ch = s[i];
		if (ch == '"')
			break;
		if (ch < 0x20) {
			c->i = i;
			return chk_fail(c, "a raw control character in a string");
		}
		if (ch == '\\') {
			unsigned char e = i + 1 < c->n ? s[i + 1] : 0;

			if (e == '"' || e == '\\' || e == 'b' || e == 't' || e == 'n' || e == 'f' ||
			    e == 'r') {
				i += 2;
				continue;
			}
			if (e == 'u' && i + 5 < c->n && s[i + 2] == '0' && s[i + 3] == '0' &&
			    (s[i + 4] == '0' || s[i + 4] == '1') &&
			    ((s[i + 5] >= '0' && s[i + 5] <= '9') || (s[i + 5] >= 'a' && s[i + 5] <= 'f'))) {
				unsigned v =
				    (unsigned)(s[i + 4] - '0') * 16 + (unsigned)berth_hex_digit(s[i + 5]);

				if (v != 8 && v != 9 && v != 10 && v != 12 && v != 13) {
					i += 6;
					continue;
				}
			}
			c->i = i;
			return chk_fail(c, "an escape JCS does not write");
		}
		if (utf8_next(s, c->n, &i) < 0) {
			c->i = i;
			return chk_fail(c, "invalid UTF-8 in a string");
		}
	}
	*raw = c->s + c->i + 1;
	*rawlen = i - c->i - 1;
	c->i = i + 1;
	return 0;
}

/* Decode a canonical string's content (escapes are all ASCII) into @out. */
static size_t unescape(const char *raw, size_t n, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		if (raw[i] != '\\') {
			out[o++] = raw[i];
			continue;
		}
		switch (raw[++i]) {
		case 'b':
			out[o++] = '\b';
			break;
		case 't':
			out[o++] = '\t';
			break;
		case 'n':
			out[o++] = '\n';
			break;
		case 'f':
			out[o++] = '\f';
			break;
		case 'r':
			out[o++] = '\r';
			break;
		case 'u':
			out[o++] =
			    (char)((raw[i + 3] - '0') * 16 + berth_hex_digit((unsigned char)raw[i + 4]));
			i += 4;
			break;
		default:
			out[o++] = raw[i];
			break;
		}
	}
	return o;
}

/* Does canonical string content hold an escaped U+0000 (\\u0000)? */
static bool has_nul_escape(const char *raw, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (raw[i] != '\\')
			continue;
		if (raw[i + 1] == 'u' && memcmp(raw + i + 2, "0000", 4) == 0)
			return true;
		i += raw[i + 1] == 'u' ? 5 : 1;
	}
	return false;
}

/* Compare two canonical member names by UTF-16 code units. */
static int key_cmp(const char *a, size_t an, const char *b, size_t bn)
{
	char sa[256], sb[256];
	char *pa = an <= sizeof sa ? sa : malloc(an), *pb = bn <= sizeof sb ? sb : malloc(bn);
	int r = 2;

	if (pa != NULL && pb != NULL) {
		size_t la = unescape(a, an, pa), lb = unescape(b, bn, pb);

		r = cmp_utf16(pa, la, pb, lb);
	}
	if (pa != sa)
		free(pa);
	if (pb != sb)
		free(pb);
	return r;
}

static int chk_number(struct chk *c)
{
	const char *s = c->s + c->i;
	size_t k = 0, digits = 0;
	char tok[40], canon[32];
	bool plain = true;

	while (c->i + k < c->n && (s[k] == '-' || s[k] == '+' || s[k] == '.' || s[k] == 'e' || s[k] == 'E' ||
				   (s[k] >= '0' && s[k] <= '9'))) {
		if (s[k] >= '0' && s[k] <= '9')
			digits++;
		else if (s[k] != '-' || k != 0)
			plain = false;
		k++;
	}
	if (k == 0 || digits == 0)
		return chk_fail(c, "not a value");
	/* The common case: a plain integer below 10^15 (a double exactly). */
	if (plain && digits < 16) {
		const char *d = s[0] == '-' ? s + 1 : s;

		if ((d[0] == '0' && digits > 1) || (s[0] == '-' && d[0] == '0'))
			return chk_fail(c, "a number that is not in its ES6 form");
		c->i += k;
		return 0;
	}
	if (k >= sizeof tok)
		return chk_fail(c, "a number that is not in its ES6 form");
	memcpy(tok, s, k);
	tok[k] = '\0';
	{
		char *end;
		double d = strtod(tok, &end);
		struct berth_error e2 = {0};

		if (*end != '\0' || berth_jcs_number(d, canon, &e2) < 0 || strcmp(canon, tok) != 0)
			return chk_fail(c, "a number that is not in its ES6 form");
	}
	c->i += k;
	return 0;
}

static int chk_value(struct chk *c, int depth, struct berth_jcs_member *top, size_t max, size_t *ntop)
{
	if (depth > JCS_MAX_DEPTH)
		return chk_fail(c, "nested deeper than 1000");
	if (c->i >= c->n)
		return chk_fail(c, "a value is missing");
	switch (c->s[c->i]) {
	case '{': {
		const char *prev = NULL, *key;
		size_t prevlen = 0, klen, count = 0;

		c->i++;
		if (c->i < c->n && c->s[c->i] == '}') {
			c->i++;
			return 0;
		}
		for (;;) {
			const char *vstart;

			if (c->i >= c->n || c->s[c->i] != '"')
				return chk_fail(c, "a member name is missing");
			if (chk_string(c, &key, &klen) < 0)
				return -1;
			if (prev != NULL && key_cmp(prev, prevlen, key, klen) >= 0)
				return chk_fail(
				    c, "member names are not in increasing UTF-16 order (or repeat)");
			if (has_nul_escape(key, klen))
				return chk_fail(c, "U+0000 in a member name");
			prev = key;
			prevlen = klen;
			if (c->i >= c->n || c->s[c->i] != ':')
				return chk_fail(c, "`:` expected");
			c->i++;
			vstart = c->s + c->i;
			if (chk_value(c, depth + 1, NULL, 0, NULL) < 0)
				return -1;
			if (top != NULL && count < max)
				top[count] = (struct berth_jcs_member){key, klen, vstart,
								       (size_t)(c->s + c->i - vstart)};
			count++;
			if (c->i < c->n && c->s[c->i] == ',') {
				c->i++;
				continue;
			}
			if (c->i < c->n && c->s[c->i] == '}') {
				c->i++;
				if (ntop != NULL)
					*ntop = count;
				return 0;
			}
			return chk_fail(c, "`,` or `}` expected");
		}
	}
	case '[':
		c->i++;
		if (c->i < c->n && c->s[c->i] == ']') {
			c->i++;
			return 0;
		}
		for (;;) {
			if (chk_value(c, depth + 1, NULL, 0, NULL) < 0)
				return -1;
			if (c->i < c->n && c->s[c->i] == ',') {
				c->i++;
				continue;
			}
			if (c->i < c->n && c->s[c->i] == ']') {
				c->i++;
				return 0;
			}
			return chk_fail(c, "`,` or `]` expected");
		}
	case '"': {
		const char *raw;
		size_t rl;

		return chk_string(c, &raw, &rl);
	}
	case 't':
	case 'f':
	case 'n': {
		const char *lit = c->s[c->i] == 't' ? "true" : c->s[c->i] == 'f' ? "false" : "null";
		size_t l = strlen(lit);

		if (c->n - c->i < l || memcmp(c->s + c->i, lit, l) != 0)
			return chk_fail(c, "not a value");
		c->i += l;
		return 0;
	}
	default:
		return chk_number(c);
	}
}

int berth_jcs_check(const char *s, size_t len, struct berth_jcs_member *top, size_t max, size_t *ntop,
		    struct berth_error *err)
{
	struct chk c = {s, len, 0, err};

	if (ntop != NULL)
		*ntop = 0;
	if (chk_value(&c, 0, top, max, ntop) < 0)
		return -1;
	if (c.i != len)
		return chk_fail(&c, "text after the value");
	return 0;
}
