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
 *   4..7  the channel's frames (src/vm/proto.h) read from the rest one after
 *      another, each one parsed handed to a stream set (src/vm/mux.h)
 *      with streams 16 and 17 open on socketpairs whose far ends never
 *      read: a frame lies within the input, its payload within its length;
 *      a stream never holds more than a window of the peer's bytes nor
 *      more credit than a window, and a breach of the credit is refused,
 *      never taken.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/buf.h"
#include "vm/aptsrc.h"
#include "vm/cpio.h"
#include "vm/proto.h"
#include "vm/mux.h"

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

static int discard(void *arg, uint16_t type, uint16_t chan, const void *p, size_t len,
		   struct berth_error *err)
{
	(void)arg, (void)type, (void)chan, (void)p, (void)len, (void)err;
	return 0;
}

static void check_stream(struct berth_vm_mux *ss, uint16_t id)
{
	struct berth_vm_mux_stream *st = berth_vm_mux_find(ss, id);

	if (st == NULL)
		return;
	if (st->out_off > st->out_len || st->out_len - st->out_off > BERTH_VM_WINDOW ||
	    st->cr.can_send > BERTH_VM_WINDOW ||
	    (uint64_t)st->cr.may_recv + st->cr.handed + (st->out_len - st->out_off) > BERTH_VM_WINDOW)
		abort();
}

static void mode_frames(const uint8_t *data, size_t size)
{
	static struct berth_vm_mux ss;
	int far[2] = {-1, -1};
	size_t off = 0;

	berth_vm_mux_init(&ss, discard, NULL);
	for (int i = 0; i < 2; i++) {
		int sp[2];
		struct berth_error err = {0};
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
			abort();
		far[i] = sp[1];
		if (berth_vm_mux_add(&ss, sp[0], (uint16_t)(16 + i), &err) == NULL)
			abort();
	}
	while (off < size) {
		struct berth_vm_frame f;
		struct berth_error err = {0};
		size_t used = 0;
		int r = berth_vm_parse(data + off, size - off, &f, &used, &err);
		if (r <= 0)
			break;
		if (used < BERTH_VM_HDR || used > size - off || f.payload != data + off + BERTH_VM_HDR ||
		    f.len != used - BERTH_VM_HDR)
			abort();
		struct berth_vm_mux_stream *st = berth_vm_mux_find(&ss, f.chan);
		uint32_t may = st != NULL ? st->cr.may_recv : 0;
		bool eof = st != NULL && st->peer_eof;
		r = berth_vm_mux_frame(&ss, &f, &err);
		/* DATA beyond the credit (or after EOF) of an open stream: refused */
		if (st != NULL && f.type == BERTH_VM_DATA && (f.len > may || eof) && r != -1)
			abort();
		if (r < 0 && err.msg[0] == '\0')
			abort();
		check_stream(&ss, 16);
		check_stream(&ss, 17);
		off += used;
	}
	berth_vm_mux_close_all(&ss);
	close(far[0]);
	close(far[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 4) {
		mode_frames(data + 1, size - 1);
		return 0;
	}
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
