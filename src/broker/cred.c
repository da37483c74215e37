/* SPDX-License-Identifier: MIT */
/*
 * cred.c - the header rewrite of injected credentials (cred.h).
 */
#include "cred.h"
#include "../policy/credential.h"

#include <string.h>
#include <strings.h>

#define BASIC_MAX 65536 /* bytes of a decoded Basic value after the replacement */

struct w {
	char *out;
	size_t cap, len;
};

static void put(struct w *w, const void *p, size_t n)
{
	if (w->out != NULL && w->len + n <= w->cap && n > 0)
		memcpy(w->out + w->len, p, n);
	w->len += n;
}

static const char *find(const char *s, size_t n, const char *pat, size_t pn)
{
	if (pn == 0 || n < pn)
		return NULL;
	for (size_t i = 0; i + pn <= n; i++)
		if (s[i] == pat[0] && memcmp(s + i, pat, pn) == 0)
			return s + i;
	return NULL;
}

/* @s with every placeholder of @in replaced by the secret; true when one was */
static bool put_replaced(struct w *w, const char *s, size_t n, const struct berth_cred_inject *in)
{
	size_t pn = strlen(in->placeholder);
	bool hit = false;
	const char *p;

	while ((p = find(s, n, in->placeholder, pn)) != NULL) {
		put(w, s, (size_t)(p - s));
		put(w, in->secret, in->secret_len);
		n -= (size_t)(p - s) + pn;
		s = p + pn;
		hit = true;
	}
	put(w, s, n);
	return hit;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int b64_val(char c)
{
	const char *p = c != '\0' ? strchr(b64, c) : NULL;
	return p != NULL ? (int)(p - b64) : -1;
}

/* RFC 4648 section 4 with padding; -1 when @s is not that */
static long b64_decode(const char *s, size_t n, unsigned char *out, size_t cap)
{
	size_t o = 0;

	if (n % 4 != 0)
		return -1;
	for (size_t i = 0; i < n; i += 4) {
		int v[4];
		size_t pad = 0;
		for (int k = 0; k < 4; k++) {
			if (s[i + k] == '=' && i + 4 == n && k >= 2) {
				v[k] = 0;
				pad++;
				continue;
			}
			if (pad > 0 || (v[k] = b64_val(s[i + k])) < 0)
				return -1;
		}
		unsigned long t = (unsigned long)v[0] << 18 | (unsigned long)v[1] << 12 |
				  (unsigned long)v[2] << 6 | (unsigned long)v[3];
		unsigned char bytes[3] = {(unsigned char)(t >> 16), (unsigned char)(t >> 8),
					  (unsigned char)t};
		if (o + 3 - pad > cap)
			return -1;
		memcpy(out + o, bytes, 3 - pad);
		o += 3 - pad;
	}
	return (long)o;
}

static void put_b64(struct w *w, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i += 3) {
		unsigned long t = (unsigned long)p[i] << 16;
		if (i + 1 < n)
			t |= (unsigned long)p[i + 1] << 8;
		if (i + 2 < n)
			t |= p[i + 2];
		char q[4] = {b64[(t >> 18) & 63], b64[(t >> 12) & 63], i + 1 < n ? b64[(t >> 6) & 63] : '=',
			     i + 2 < n ? b64[t & 63] : '='};
		put(w, q, 4);
	}
}

/* The value @v (@n bytes) of the binding's field, rewritten into @w.
 * Returns 1 when something was replaced, 0 when not, -1 on a bad Basic value. */
static int put_value(struct w *w, const char *v, size_t n, const struct berth_cred_inject *in)
{
	if (in->header == BERTH_CRED_BEARER || in->header == BERTH_CRED_BASIC) {
		const char *scheme = in->header == BERTH_CRED_BEARER ? "Bearer " : "Basic ";
		size_t sl = strlen(scheme);
		if (n < sl || strncasecmp(v, scheme, sl) != 0) {
			put(w, v, n);
			return 0;
		}
		put(w, v, sl);
		v += sl;
		n -= sl;
		if (in->header == BERTH_CRED_BEARER)
			return put_replaced(w, v, n, in) ? 1 : 0;
		unsigned char dec[BASIC_MAX / 4], rep[BASIC_MAX];
		long dn = b64_decode(v, n, dec, sizeof dec);
		if (dn < 0)
			return -1;
		struct w r = {.out = (char *)rep, .cap = sizeof rep};
		if (!put_replaced(&r, (const char *)dec, (size_t)dn, in)) {
			put(w, v, n);
			return 0;
		}
		if (r.len > r.cap)
			return -1;
		put_b64(w, rep, r.len);
		explicit_bzero(rep, r.len);
		return 1;
	}
	return put_replaced(w, v, n, in) ? 1 : 0;
}

/* A path a server may resolve to another (RFC 3986 5.2.4, or a slash
 * that is encoded or backward): out of every prefix but `/`. */
static bool path_escapes(const char *path, size_t n)
{
	const char *q = memchr(path, '?', n), *seg = path;

	if (q != NULL)
		n = (size_t)(q - path);
	for (size_t i = 0; i < n; i++)
		if (path[i] == '\\' || (n - i >= 3 && path[i] == '%' &&
					((path[i + 1] == '2' && (path[i + 2] == 'f' || path[i + 2] == 'F')) ||
					 (path[i + 1] == '5' && (path[i + 2] == 'c' || path[i + 2] == 'C')))))
			return true;
	for (size_t i = 0; i <= n; i++)
		if (i == n || path[i] == '/') {
			if (berth_cred_dot_segment(seg, (size_t)(path + i - seg)))
				return true;
			seg = path + i + 1;
		}
	return false;
}

static bool prefix_matches(const char *path, size_t path_len, const char *prefix)
{
	size_t pl = strlen(prefix);
	if (path_len < pl || memcmp(path, prefix, pl) != 0)
		return false;
	return (pl == 1 && prefix[0] == '/') || !path_escapes(path, path_len);
}

long berth_cred_rewrite(const char *head, size_t len, const char *path, size_t path_len,
			const struct berth_cred_inject *inj, size_t n, char *out, size_t cap, uint32_t *used)
{
	struct w w = {.out = out, .cap = cap};
	const char *p = head, *end = head + len;
	bool first = true;

	*used = 0;
	if (n > 32)
		return -1;
	for (;;) {
		const char *eol = find(p, (size_t)(end - p), "\r\n", 2);
		if (eol == NULL)
			return -1;
		size_t ll = (size_t)(eol - p);
		if (ll == 0) { /* the empty line: the end of the head */
			if (first || eol + 2 != end)
				return -1;
			put(&w, "\r\n", 2);
			break;
		}
		const char *colon = first ? NULL : memchr(p, ':', ll);
		if (!first && colon == NULL)
			return -1;
		bool done = false;
		for (size_t i = 0; colon != NULL && i < n && !done; i++) {
			size_t fl = strlen(inj[i].field);
			if ((size_t)(colon - p) != fl || strncasecmp(p, inj[i].field, fl) != 0 ||
			    !prefix_matches(path, path_len, inj[i].prefix))
				continue;
			const char *v = colon + 1;
			while (v < eol && (*v == ' ' || *v == '\t'))
				v++;
			size_t mark = w.len;
			put(&w, p, (size_t)(v - p));
			int r = put_value(&w, v, (size_t)(eol - v), &inj[i]);
			if (r < 0)
				return -1;
			if (r == 0) {
				w.len = mark; /* not this binding's: try the next one on the line as it was */
				continue;
			}
			*used |= 1u << i;
			done = true;
		}
		if (!done)
			put(&w, p, ll);
		put(&w, "\r\n", 2);
		first = false;
		p = eol + 2;
	}
	if (w.out != NULL && w.len < w.cap)
		w.out[w.len] = '\0';
	return (long)w.len;
}

bool berth_cred_host_matches(const char *v, size_t n, const char *host, unsigned port)
{
	size_t hl = strlen(host);
	const char *colon = memchr(v, ':', n);
	size_t name_len = colon != NULL ? (size_t)(colon - v) : n;

	if (name_len == hl + 1 && v[hl] == '.')
		name_len = hl;
	if (name_len != hl || strncasecmp(v, host, hl) != 0)
		return false;
	if (colon == NULL)
		return port == 443;
	const char *d = colon + 1;
	size_t dn = n - (size_t)(d - v);
	unsigned long val = 0;
	if (dn == 0 || dn > 5 ||
	    d[0] == '0') /* RFC 3986 port, written as berth compares it: no leading zero */
		return false;
	for (size_t i = 0; i < dn; i++) {
		if (d[i] < '0' || d[i] > '9')
			return false;
		val = val * 10 + (unsigned long)(d[i] - '0');
	}
	return val == port;
}
