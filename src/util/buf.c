/* SPDX-License-Identifier: MIT */
/*
 * buf.c - see buf.h.
 */
#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void berth_buf_put(struct berth_buf *b, const void *s, size_t n)
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
	if (n > 0)
		memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void berth_buf_puts(struct berth_buf *b, const char *s)
{
	berth_buf_put(b, s, strlen(s));
}

void berth_buf_putf(struct berth_buf *b, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	if ((size_t)n < sizeof small) {
		berth_buf_put(b, small, (size_t)n);
		return;
	}
	/* longer: make room, then print in place */
	berth_buf_put(b, "", 0);
	if (b->oom)
		return;
	if (b->len + (size_t)n + 1 > b->cap) {
		char *q = realloc(b->p, b->len + (size_t)n + 1);
		if (q == NULL) {
			b->oom = true;
			return;
		}
		b->p = q;
		b->cap = b->len + (size_t)n + 1;
	}
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void berth_buf_free(struct berth_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
	b->oom = false;
}

int berth_strv_push(char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 2) * sizeof **v);

	if (nv == NULL)
		return -1;
	*v = nv;
	if ((nv[*n] = strdup(s)) == NULL) {
		nv[*n] = NULL;
		return -1;
	}
	nv[++*n] = NULL;
	return 0;
}

void berth_strv_free(char **v)
{
	for (size_t i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}
