/* SPDX-License-Identifier: MIT */
/*
 * evidence.c - copy, hash and record evidence (evidence.h).
 */
#include "evidence.h"
#include "../util/rmtree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "../sandbox/mounts.h"
#include "../util/cleanup.h"
#include "../util/crash.h"
#include "../util/sha256.h"

#define CHUNK (1U << 20)

struct ingest {
	json_t *manifest;
	struct berth_evidence_stats *st;
	bool progress;
	uint64_t next_report;
	unsigned char *buf;
	const char *dest;
};

static const char *type_name(mode_t m)
{
	static const struct {
		mode_t type;
		const char *name;
	} types[] = {{S_IFLNK, "symlink"}, {S_IFDIR, "dir"},     {S_IFIFO, "fifo"},
		     {S_IFSOCK, "socket"}, {S_IFCHR, "chardev"}, {S_IFBLK, "blockdev"}};

	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		if ((m & S_IFMT) == types[i].type)
			return types[i].name;
	return "file";
}

static int add_entry(struct ingest *g, const char *rel, const struct stat *sb, const char *sha,
		     const char *target, struct berth_error *err)
{
	char mode[8];
	json_t *e;

	snprintf(mode, sizeof mode, "%04o", (unsigned)(sb->st_mode & 07777));
	e = json_pack("{s:s, s:s, s:s}", "path", rel, "type", type_name(sb->st_mode), "mode", mode);
	if (e == NULL)
		return berth_err(err, EINVAL, "cannot record `%s` (not UTF-8?)", rel);
	if (S_ISREG(sb->st_mode)) {
		json_object_set_new(e, "size", json_integer((json_int_t)sb->st_size));
		json_object_set_new(e, "sha256", json_string(sha));
	}
	if (target != NULL) {
		json_t *t = json_string(target);
		json_object_set_new(e, "target", t != NULL ? t : json_string("[not UTF-8]"));
	}
	if (json_array_append_new(g->manifest, e) < 0)
		return berth_err(err, ENOMEM, "out of memory");
	return 0;
}

/* "1.5 GiB": @bytes for a message. */
static void human_size(uint64_t bytes, char out[32])
{
	static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	double v = (double)bytes;
	unsigned u = 0;

	while (v >= 1024 && u + 1 < sizeof unit / sizeof unit[0]) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(out, 32, "%llu bytes", (unsigned long long)bytes);
	else
		snprintf(out, 32, "%.1f %s", v, unit[u]);
}

/*
 * Refuse a file that would not fit in the free space under @ddir, leaving
 * BERTH_EVIDENCE_RESERVE_BYTES free (the audit trail and the run's state live
 * on that filesystem too), before a byte of it is read: a sparse file of a
 * terabyte costs nothing to make and would otherwise be read and written
 * until the disk is full.
 */
static int check_room(int ddir, const struct stat *sb, const char *shown, const char *dest,
		      struct berth_error *err)
{
	struct statvfs vf;
	uint64_t avail, size = (uint64_t)sb->st_size;
	char want[32], have[32];

	if (fstatvfs(ddir, &vf) < 0)
		return berth_err(err, errno, "cannot see the free space under `%s`", dest);
	avail = (uint64_t)vf.f_bavail * (uint64_t)vf.f_frsize;
	if (size <= avail && avail - size >= BERTH_EVIDENCE_RESERVE_BYTES)
		return 0;
	human_size(size, want);
	human_size(avail, have);
	berth_err(err, ENOSPC,
		  "evidence `%s` is %s, and only %s are free under `%s` (berth keeps %u MiB free)", shown,
		  want, have, dest, (unsigned)(BERTH_EVIDENCE_RESERVE_BYTES >> 20));
	return berth_err_hint(
	    err, "free space there (or set XDG_STATE_HOME to a larger filesystem), or leave it out");
}

/* One regular file: read once, hash and write the same bytes. */
static int copy_file(struct ingest *g, int sfd, const struct stat *sb, int ddir, const char *name,
		     const char *rel, const char *shown, struct berth_error *err)
{
	if (check_room(ddir, sb, shown, g->dest, err) < 0)
		return -1;
	cleanup_close int dfd =
	    openat(ddir, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	struct berth_sha256 *h;
	char hex[65];
	uint64_t total = 0;

	if (dfd < 0)
		return berth_err(err, errno, "cannot create the evidence copy of `%s`", shown);
	h = berth_sha256_new(err);
	if (h == NULL)
		return -1;
	for (;;) {
		ssize_t n = read(sfd, g->buf, CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			berth_sha256_final(h, hex, err);
			berth_usage_err(err, "cannot read evidence `%s`: %s", shown, strerror(e));
			err->errnum = e;
			return berth_err_hint(err, "make it readable, or leave it out");
		}
		if (n == 0)
			break;
		if (berth_sha256_update(h, g->buf, (size_t)n) < 0) {
			berth_sha256_final(h, hex, err);
			return berth_err(err, EIO, "cannot hash `%s`", shown);
		}
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(dfd, g->buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				int e = w < 0 ? errno : EIO;
				berth_sha256_final(h, hex, err);
				return berth_err(err, e, "cannot write the evidence copy of `%s`", shown);
			}
			off += w;
		}
		total += (uint64_t)n;
		g->st->bytes += (uint64_t)n;
		if (g->progress && g->st->bytes >= g->next_report) {
			fprintf(stderr, "berth: evidence: %llu MiB copied and hashed (%llu files)\n",
				(unsigned long long)(g->st->bytes >> 20), (unsigned long long)g->st->files);
			g->next_report += BERTH_EVIDENCE_PROGRESS_BYTES;
		}
	}
	if (berth_sha256_final(h, hex, err) < 0)
		return -1;
	if (fchmod(dfd, 0444) < 0)
		return berth_err(err, errno, "chmod the evidence copy of `%s`", shown);
	g->st->files++;
	{
		struct stat copy = *sb;
		copy.st_size = (off_t)total; /* what was read is what the sandbox sees */
		return add_entry(g, rel, &copy, hex, NULL, err);
	}
}

static int walk(struct ingest *g, int sdir, const char *name, int ddir, const char *rel, const char *shown,
		int depth, struct berth_error *err);

static int walk_dir(struct ingest *g, int sfd, int ddir, const char *name, const char *rel, const char *shown,
		    int depth, struct berth_error *err)
{
	cleanup_close int nd = -1;
	DIR *d;
	struct dirent *de;
	int r = 0;

	if (depth > 256) {
		close(sfd);
		return berth_usage_err(err, "evidence `%s` is nested more than 256 directories deep", shown);
	}
	if (mkdirat(ddir, name, 0700) < 0) {
		close(sfd);
		return berth_err(err, errno, "cannot create the evidence directory for `%s`", shown);
	}
	nd = openat(ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	d = nd >= 0 ? fdopendir(sfd) : NULL;
	if (d == NULL) {
		close(sfd);
		return berth_err(err, errno, "cannot list `%s`", shown);
	}
	errno = 0;
	while (r == 0 && (de = readdir(d)) != NULL) {
		char crel[PATH_MAX], cshown[PATH_MAX];
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (snprintf(crel, sizeof crel, "%s/%s", rel, de->d_name) >= (int)sizeof crel ||
		    snprintf(cshown, sizeof cshown, "%s/%s", shown, de->d_name) >= (int)sizeof cshown) {
			r = berth_usage_err(err, "evidence path under `%s` is too long", shown);
			break;
		}
		r = walk(g, dirfd(d), de->d_name, nd, crel, cshown, depth + 1, err);
		errno = 0;
	}
	if (r == 0 && errno != 0) {
		int e = errno;
		berth_usage_err(err, "cannot list `%s`: %s", shown, strerror(e));
		r = -1;
	}
	closedir(d); /* closes sfd */
	if (r == 0 && fchmod(nd, 0555) < 0)
		r = berth_err(err, errno, "chmod the evidence directory for `%s`", shown);
	return r;
}

static int walk(struct ingest *g, int sdir, const char *name, int ddir, const char *rel, const char *shown,
		int depth, struct berth_error *err)
{
	struct stat sb;
	int fd;

	if (fstatat(sdir, name, &sb, AT_SYMLINK_NOFOLLOW) < 0) {
		int e = errno;
		berth_usage_err(err, "cannot read evidence `%s`: %s", shown, strerror(e));
		return berth_err_hint(err, "make it readable, or leave it out");
	}
	if (S_ISLNK(sb.st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlinkat(sdir, name, target, sizeof target - 1);
		target[n > 0 ? n : 0] = '\0';
		g->st->skipped++;
		return add_entry(g, rel, &sb, NULL, target, err);
	}
	if (!S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode)) {
		g->st->skipped++;
		return add_entry(g, rel, &sb, NULL, NULL, err);
	}
	/* O_NONBLOCK: a file swapped for a FIFO after fstatat must not hang us;
	 * the type is checked again on the descriptor. */
	fd = openat(sdir, name,
		    O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK |
			(S_ISDIR(sb.st_mode) ? O_DIRECTORY : 0));
	if (fd < 0 || fstat(fd, &sb) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		berth_usage_err(err, "cannot read evidence `%s`: %s", shown, strerror(e));
		err->errnum = e;
		return berth_err_hint(err, "make it readable, or leave it out");
	}
	if (S_ISDIR(sb.st_mode)) {
		if (add_entry(g, rel, &sb, NULL, NULL, err) < 0) {
			close(fd);
			return -1;
		}
		return walk_dir(g, fd, ddir, name, rel, shown, depth, err); /* takes fd */
	}
	if (!S_ISREG(sb.st_mode)) {
		close(fd);
		g->st->skipped++;
		return add_entry(g, rel, &sb, NULL, NULL, err);
	}
	/* Regular files are read blocking. */
	fcntl(fd, F_SETFL, O_RDONLY);
	int r = copy_file(g, fd, &sb, ddir, name, rel, shown, err);
	close(fd);
	berth_crash_point("evidence.file");
	return r;
}

static int by_path(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;

	return strcmp(json_string_value(json_object_get(x, "path")),
		      json_string_value(json_object_get(y, "path")));
}

static json_t *sorted(json_t *m)
{
	size_t n = json_array_size(m);
	json_t **v = calloc(n + 1, sizeof *v), *out = json_array();

	if (v == NULL || out == NULL) {
		free(v);
		json_decref(out);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = json_array_get(m, i);
	qsort(v, n, sizeof *v, by_path);
	for (size_t i = 0; i < n; i++)
		json_array_append(out, v[i]);
	free(v);
	return out;
}

json_t *berth_evidence_ingest(char *const *paths, size_t n, const char *dest, bool progress,
			      struct berth_evidence_stats *st, struct berth_error *err)
{
	struct ingest g = {
	    .st = st, .progress = progress, .next_report = BERTH_EVIDENCE_PROGRESS_BYTES, .dest = dest};
	cleanup_close int ddir = -1;
	json_t *out = NULL;
	int r = 0;

	memset(st, 0, sizeof *st);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++) {
			const char *a = strrchr(paths[i], '/'), *b = strrchr(paths[j], '/');
			a = a != NULL && a[1] != '\0' ? a + 1 : paths[i];
			b = b != NULL && b[1] != '\0' ? b + 1 : paths[j];
			if (strcmp(a, b) == 0) {
				berth_usage_err(err, "evidence name `%s` is given twice (`%s` and `%s`)", a,
						paths[j], paths[i]);
				berth_err_hint(
				    err, "each --evidence appears as /evidence/NAME: copy one of them under "
					 "another name first");
				return NULL;
			}
		}
	if (mkdir(dest, 0700) < 0) {
		berth_err(err, errno, "cannot create the evidence directory `%s`", dest);
		return NULL;
	}
	berth_crash_point("evidence.copy");
	ddir = open(dest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	g.manifest = json_array();
	g.buf = malloc(CHUNK);
	if (ddir < 0 || g.manifest == NULL || g.buf == NULL) {
		r = berth_err(err, ddir < 0 ? errno : ENOMEM, "cannot prepare the evidence directory `%s`",
			      dest);
		goto out;
	}
	for (size_t i = 0; r == 0 && i < n; i++) {
		char *slash = strrchr(paths[i], '/'), parent[PATH_MAX];
		const char *name = slash != NULL && slash[1] != '\0' ? slash + 1 : paths[i];
		cleanup_close int pfd = -1;
		if (strcmp(paths[i], "/") == 0) {
			r = berth_usage_err(err, "the host root cannot be evidence");
			break;
		}
		snprintf(parent, sizeof parent, "%.*s",
			 slash != NULL && slash != paths[i] ? (int)(slash - paths[i]) : 1,
			 slash != NULL ? paths[i] : ".");
		/* Every component fd-relative with no link followed: a directory
		 * on the path swapped for a symbolic link after berth checked it
		 * would have the copy read the link target's file of that name
		 * (issue 13, class 4).  The last component: walk's O_NOFOLLOW. */
		pfd = berth_open_nofollow(AT_FDCWD, parent, O_DIRECTORY);
		if (pfd < 0 && (errno == ELOOP || errno == EXDEV)) {
			r = berth_usage_err(
			    err,
			    "cannot read evidence `%s`: a directory on its path is now a symbolic "
			    "link (it changed after berth checked it)",
			    paths[i]);
			berth_err_hint(
			    err, "something (a sandbox in the same workspace?) replaced it: look at it, then "
				 "run again");
			break;
		}
		if (pfd < 0) {
			int e = errno;
			r = berth_usage_err(err, "cannot read evidence `%s`: %s", paths[i], strerror(e));
			break;
		}
		r = walk(&g, pfd, name, ddir, name, paths[i], 0, err);
	}
	if (r == 0)
		out = sorted(g.manifest);
	if (r == 0 && out == NULL)
		r = berth_err(err, ENOMEM, "out of memory");
	if (r == 0 && fchmod(ddir, 0555) < 0)
		r = berth_err(err, errno, "chmod `%s`", dest);
out:
	free(g.buf);
	json_decref(g.manifest);
	if (r < 0) {
		struct berth_error e2;
		json_decref(out);
		out = NULL;
		berth_evidence_remove(dest, &e2);
	}
	return out;
}

int berth_evidence_remove(const char *dest, struct berth_error *err)
{
	return berth_rmtree(dest, "the evidence copy", err);
}
