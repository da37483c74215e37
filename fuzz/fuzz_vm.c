/* SPDX-License-Identifier: MIT */
/*
 * fuzz_vm.c - libFuzzer target for the pinned guest's parsers and writer
 * (src/vm/cpio.c, src/vm/aptsrc.c).  The first byte picks the mode:
 *   0  berth_cpio_read on the rest: never reads outside the input; every
 *      entry's data lies within it; a second read gives the same count.
 *   1  entries made from the rest (records `PATH\0` MODE-BYTE LEN-BYTE
 *      DATA) through berth_cpio_build: when it accepts them, the archive's
 *      length is a multiple of 4, berth_cpio_read gives them back sorted,
 *      with inodes 1..n, owner 0:0, mtime 0, the same modes and bytes, and
 *      the same entries in the reverse order give the same bytes; when it
 *      refuses, the buffer is as it was.
 *   2, 3  berth_apt_debian_uris on the rest, one-line and deb822: every URI
 *      occurs in the input, holds no blank, `[`, `]` nor control character,
 *      starts with http://, https://, file: or mirror+, and none repeats.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/buf.h"
#include "vm/aptsrc.h"
#include "vm/cpio.h"

#define MAX_ENTRIES 32

struct bounds {
	const uint8_t *lo, *hi;
	size_t n;
	const struct berth_cpio_entry *want[MAX_ENTRIES];
};

static int in_bounds(void *ctx, const struct berth_cpio_seen *e)
{
	struct bounds *b = ctx;
	const uint8_t *d = e->data;

	if (d < b->lo || d > b->hi || e->len > (size_t)(b->hi - d))
		abort();
	b->n++;
	return 0;
}

static void mode_read(const uint8_t *data, size_t size)
{
	struct berth_error err = {0};
	struct bounds b = {data, data + size, 0, {0}}, c = b;
	long n1 = berth_cpio_read(data, size, in_bounds, &b, &err);
	long n2 = berth_cpio_read(data, size, in_bounds, &c, &err);

	if (n1 != n2 || (n1 >= 0 && (size_t)n1 != b.n))
		abort();
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp((*(const struct berth_cpio_entry *const *)a)->path,
		      (*(const struct berth_cpio_entry *const *)b)->path);
}

static int same_entry(void *ctx, const struct berth_cpio_seen *e)
{
	struct bounds *b = ctx;
	const struct berth_cpio_entry *w;

	if (b->n >= MAX_ENTRIES)
		abort();
	w = b->want[b->n];
	if (strcmp(e->path, w->path) != 0 || e->mode != (uint32_t)w->mode || e->ino != b->n + 1 ||
	    e->uid != 0 || e->gid != 0 || e->mtime != 0 || e->nlink != (S_ISDIR(w->mode) ? 2u : 1u))
		abort();
	if (S_ISREG(w->mode) && (e->len != w->len || (w->len > 0 && memcmp(e->data, w->data, w->len) != 0)))
		abort();
	b->n++;
	return 0;
}

static void mode_build(const uint8_t *data, size_t size)
{
	struct berth_cpio_entry e[MAX_ENTRIES], r[MAX_ENTRIES];
	struct berth_buf a = {0}, rb = {0};
	struct berth_error err = {0};
	char *copy = malloc(size + 1);
	size_t n = 0, off = 0;

	if (copy == NULL)
		return;
	memcpy(copy, data, size);
	copy[size] = '\0';
	while (off < size && n < MAX_ENTRIES) {
		size_t plen = strnlen(copy + off, size - off);
		unsigned m, len;

		if (off + plen + 3 > size)
			break;
		m = (unsigned char)copy[off + plen + 1];
		len = (unsigned char)copy[off + plen + 2];
		if (len > size - (off + plen + 3))
			len = (unsigned)(size - (off + plen + 3));
		e[n] = (struct berth_cpio_entry){.path = copy + off,
						 .mode = (m & 1   ? S_IFDIR
							  : m & 2 ? S_IFLNK
								  : S_IFREG) |
							 (m & 0755),
						 .data = copy + off + plen + 3,
						 .len = len};
		n++;
		off += plen + 3 + len;
	}
	berth_buf_puts(&a, "ab");
	if (berth_cpio_build(e, n, &a, &err) < 0) {
		if (a.len != 2 || memcmp(a.p, "ab", 2) != 0)
			abort();
	} else {
		struct bounds b = {0};
		if ((a.len - 2) % 4 != 0)
			abort();
		for (size_t i = 0; i < n; i++)
			b.want[i] = &e[i];
		qsort(b.want, n, sizeof b.want[0], cmp_path);
		if (berth_cpio_read(a.p + 2, a.len - 2, same_entry, &b, &err) != (long)n || b.n != n)
			abort();
		for (size_t i = 0; i < n; i++)
			r[i] = e[n - 1 - i];
		berth_buf_puts(&rb, "ab");
		if (berth_cpio_build(r, n, &rb, &err) < 0 || rb.len != a.len || memcmp(rb.p, a.p, a.len) != 0)
			abort();
	}
	berth_buf_free(&a);
	berth_buf_free(&rb);
	free(copy);
}

static void mode_apt(const uint8_t *data, size_t size, enum berth_apt_format fmt)
{
	struct berth_error err = {0};
	char *text = malloc(size + 1), **u = NULL;
	size_t n = 0;

	if (text == NULL)
		return;
	memcpy(text, data, size);
	text[size] = '\0';
	if (berth_apt_debian_uris(text, fmt, &u, &n, &err) >= 0) {
		for (size_t i = 0; i < n; i++) {
			const char *s = u[i];
			bool fetchable = strncmp(s, "http://", 7) == 0 || strncmp(s, "https://", 8) == 0 ||
					 strncmp(s, "file:", 5) == 0 || strncmp(s, "mirror+", 7) == 0;
			if (strstr(text, s) == NULL || !fetchable)
				abort();
			for (const char *c = s; *c; c++)
				if ((unsigned char)*c <= 0x20 || *c == 0x7f || *c == '[' || *c == ']')
					abort();
			for (size_t k = 0; k < i; k++)
				if (strcmp(u[k], s) == 0)
					abort();
		}
	}
	berth_strv_free(u);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	switch (data[0] & 3) {
	case 0:
		mode_read(data + 1, size - 1);
		break;
	case 1:
		mode_build(data + 1, size - 1);
		break;
	case 2:
		mode_apt(data + 1, size - 1, BERTH_APT_ONE_LINE);
		break;
	default:
		mode_apt(data + 1, size - 1, BERTH_APT_DEB822);
		break;
	}
	return 0;
}
