/* SPDX-License-Identifier: MIT */
/*
 * buf.h - growing buffers, the one copy: bytes (struct berth_buf) and
 * NULL-terminated string vectors (berth_strv_*).
 */
#ifndef BERTH_BUF_H
#define BERTH_BUF_H

#include <stdbool.h>
#include <stddef.h>

/*
 * A growing byte buffer.  Initialise to all zeros (`= {0}`).  The text is
 * kept NUL-terminated (when @p is not NULL); once an allocation fails @oom
 * is set and every later put is a no-op, so a caller checks once at the end.
 */
struct berth_buf {
	char *p;
	size_t len, cap;
	bool oom;
};

/* berth_buf_put - append @n bytes at @s. */
void berth_buf_put(struct berth_buf *b, const void *s, size_t n);
/* berth_buf_puts - append the string @s. */
void berth_buf_puts(struct berth_buf *b, const char *s);
/* berth_buf_putf - append printf(3) output. */
void berth_buf_putf(struct berth_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* berth_buf_free - release @b's bytes and reset it to empty (reusable). */
void berth_buf_free(struct berth_buf *b);

/*
 * berth_strv_push - append a copy of @s to the NULL-terminated vector *@v
 * of *@n strings (*@v may be NULL with *@n 0).  Returns 0, or -1 (ENOMEM;
 * the vector is unchanged and still valid).
 */
int berth_strv_push(char ***v, size_t *n, const char *s);
/* berth_strv_free - release a NULL-terminated vector and its strings (NULL is fine). */
void berth_strv_free(char **v);

#endif
