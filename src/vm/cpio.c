/* SPDX-License-Identifier: MIT */
/*
 * cpio.c - the newc writer and a strict reader (cpio.h).
 */
#include "cpio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../util/cleanup.h"

#define MAGIC "070701"
#define HDR_LEN 110 /* the magic and 13 fields of 8 hex digits */
#define TRAILER "TRAILER!!!"

static size_t pad4(size_t n)
{
	return (4 - (n & 3)) & 3;
}

bool berth_cpio_path_ok(const char *path)
{
	size_t len = strlen(path);
	const char *c = path;

	if (len == 0 || len > BERTH_CPIO_PATH_MAX || path[0] == '/' || path[len - 1] == '/')
		return false;
	for (const char *p = path; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
	/* Every component: not empty, not "." nor "..". */
	while (*c != '\0') {
		const char *end = strchrnul(c, '/');
		size_t n = (size_t)(end - c);

		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c = *end == '/' ? end + 1 : end;
	}
	/* The trailer's name would end the archive early. */
	return strcmp(path, TRAILER) != 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct berth_cpio_entry *x = *(const struct berth_cpio_entry *const *)a;
	const struct berth_cpio_entry *y = *(const struct berth_cpio_entry *const *)b;

	return strcmp(x->path, y->path);
}

/* One header, its name and padding; the caller adds the data. */
static void put_header(struct berth_buf *out, uint32_t ino, uint32_t mode, uint32_t nlink, uint32_t size,
		       const char *name)
{
	char hdr[HDR_LEN + 1];
	size_t namesize = strlen(name) + 1;
	static const char zeros[4];

	snprintf(hdr, sizeof hdr, MAGIC "%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X", ino, mode,
		 0u /* uid */, 0u /* gid */, nlink, 0u /* mtime */, size, 0u, 0u, 0u, 0u, (uint32_t)namesize,
		 0u /* check: unused by newc */);
	berth_buf_put(out, hdr, HDR_LEN);
	berth_buf_put(out, name, namesize);
	berth_buf_put(out, zeros, pad4(HDR_LEN + namesize));
}

/* Whether the parent directory of sorted[i] is among sorted[0..i-1]. */
static bool parent_present(struct berth_cpio_entry *const *sorted, size_t i)
{
	const char *slash = strrchr(sorted[i]->path, '/');
	size_t plen;

	if (slash == NULL)
		return true; /* in the root */
	plen = (size_t)(slash - sorted[i]->path);
	/* Sorted: the parent, a prefix, comes before; a binary search would do,
	 * a walk back is enough for an initramfs's dozen entries. */
	for (size_t k = i; k-- > 0;)
		if (strlen(sorted[k]->path) == plen && strncmp(sorted[k]->path, sorted[i]->path, plen) == 0)
			return S_ISDIR(sorted[k]->mode);
	return false;
}

static int check_entries(struct berth_cpio_entry *const *sorted, size_t n, struct berth_error *err)
{
	for (size_t i = 0; i < n; i++) {
		const struct berth_cpio_entry *e = sorted[i];

		if (!berth_cpio_path_ok(e->path))
			return berth_err(err, EINVAL, "bad cpio entry path `%s`", e->path);
		if ((!S_ISREG(e->mode) && !S_ISDIR(e->mode)) || (e->mode & ~(mode_t)(S_IFMT | 07777)) != 0)
			return berth_err(err, EINVAL,
					 "cpio entry `%s` is neither a file nor a directory (mode 0%o)",
					 e->path, (unsigned)e->mode);
		if (i > 0 && strcmp(sorted[i - 1]->path, e->path) == 0)
			return berth_err(err, EEXIST, "cpio entry `%s` appears twice", e->path);
		if (!parent_present(sorted, i))
			return berth_err(err, ENOENT,
					 "the parent directory of cpio entry `%s` is not in the archive",
					 e->path);
		if (S_ISREG(e->mode) && e->len > BERTH_CPIO_FILE_MAX)
			return berth_err(err, EFBIG, "cpio entry `%s` is too large (%zu bytes)", e->path,
					 e->len);
	}
	return 0;
}

int berth_cpio_build(const struct berth_cpio_entry *in, size_t n, struct berth_buf *out,
		     struct berth_error *err)
{
	cleanup_free struct berth_cpio_entry **sorted = NULL;
	size_t start = out->len;
	static const char zeros[4];

	if (n > 0xfffffffeu)
		return berth_err(err, EFBIG, "too many cpio entries (%zu)", n);
	sorted = calloc(n + 1, sizeof *sorted);
	if (sorted == NULL)
		return berth_err(err, ENOMEM, "cannot build the cpio archive");
	for (size_t i = 0; i < n; i++)
		sorted[i] = (struct berth_cpio_entry *)&in[i];
	qsort(sorted, n, sizeof *sorted, cmp_entry);
	if (check_entries(sorted, n, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct berth_cpio_entry *e = sorted[i];
		bool dir = S_ISDIR(e->mode);
		uint32_t size = dir ? 0 : (uint32_t)e->len;

		put_header(out, (uint32_t)(i + 1), (uint32_t)e->mode, dir ? 2 : 1, size, e->path);
		if (size > 0) {
			berth_buf_put(out, e->data, size);
			berth_buf_put(out, zeros, pad4(size));
		}
	}
	/* The trailer as GNU cpio writes it: inode 0, mode 0, one link. */
	put_header(out, 0, 0, 1, 0, TRAILER);
	if (out->oom) {
		out->len = start;
		return berth_err(err, ENOMEM, "cannot build the cpio archive");
	}
	return 0;
}

/* The 8 hex digits at @p as a number; -1 when one is not a hex digit. */
static int64_t hex8(const char *p)
{
	int64_t v = 0;

	for (int i = 0; i < 8; i++) {
		char c = p[i];
		int d = c >= '0' && c <= '9'   ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10
					       : -1;
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

static bool all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != 0)
			return false;
	return true;
}

#define BAD(at, what) berth_err(err, EINVAL, "bad cpio archive at byte %zu: %s", (size_t)(at), (what))

/* The header at @off: its fields into @f[13]; 0, or -1 with @err filled. */
static int read_header(const unsigned char *b, size_t len, size_t off, uint32_t f[13],
		       struct berth_error *err)
{
	if (len - off < HDR_LEN)
		return BAD(off, "a truncated header");
	if (memcmp(b + off, MAGIC, 6) != 0)
		return BAD(off, "not the newc magic 070701");
	for (int i = 0; i < 13; i++) {
		int64_t v = hex8((const char *)b + off + 6 + 8 * i);
		if (v < 0)
			return BAD(off + 6 + 8 * (size_t)i, "a header field that is not 8 hex digits");
		f[i] = (uint32_t)v;
	}
	return 0;
}

long berth_cpio_read(const void *buf, size_t len, int (*fn)(void *ctx, const struct berth_cpio_seen *e),
		     void *ctx, struct berth_error *err)
{
	const unsigned char *b = buf;
	size_t off = 0;
	long count = 0;

	for (;;) {
		uint32_t f[13] = {0};
		size_t namesize, name_end, data_end;
		cleanup_free char *name = NULL;

		if (read_header(b, len, off, f, err) < 0)
			return -1;
		namesize = f[11];
		if (namesize == 0 || namesize > len - off - HDR_LEN)
			return BAD(off, "a name that does not fit");
		name_end = off + HDR_LEN + namesize;
		if (b[name_end - 1] != '\0' || memchr(b + off + HDR_LEN, '\0', namesize - 1) != NULL)
			return BAD(off + HDR_LEN, "a name that is not one NUL-terminated string");
		if (pad4(HDR_LEN + namesize) > len - name_end ||
		    !all_zero(b + name_end, pad4(HDR_LEN + namesize)))
			return BAD(name_end, "bad padding after a name");
		name_end += pad4(HDR_LEN + namesize);
		if (f[6] > len - name_end || pad4(f[6]) > len - name_end - f[6])
			return BAD(off, "file data that does not fit");
		data_end = name_end + f[6];
		if (!all_zero(b + data_end, pad4(f[6])))
			return BAD(data_end, "bad padding after file data");
		if (strcmp((const char *)b + off + HDR_LEN, TRAILER) == 0)
			return all_zero(b + data_end, len - data_end)
				   ? count
				   : BAD(data_end, "bytes after the trailer");
		name = strdup((const char *)b + off + HDR_LEN);
		if (name == NULL)
			return berth_err(err, ENOMEM, "cannot read the cpio archive");
		struct berth_cpio_seen e = {.path = name,
					    .ino = f[0],
					    .mode = f[1],
					    .uid = f[2],
					    .gid = f[3],
					    .nlink = f[4],
					    .mtime = f[5],
					    .data = b + name_end,
					    .len = f[6]};
		if (fn != NULL && fn(ctx, &e) < 0)
			return -1;
		count++;
		off = data_end + pad4(f[6]);
	}
}
