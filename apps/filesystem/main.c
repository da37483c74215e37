/* SPDX-License-Identifier: MIT */
/*
 * filesystem - a resident app that reads and writes files in its workspace.
 *
 * Paths are used exactly as given: relative ones resolve against the working
 * directory, which berth makes /workspace.  The app checks no path itself;
 * the sandbox (mounts and Landlock) decides, and a denial comes back as
 * -32001 with the errno, the system call and the path, so that berth can say
 * which capability was missing.  write_file replaces a file atomically
 * (temporary file, fsync, rename, fsync of the directory; apps/README.md).
 */
#ifndef _GNU_SOURCE /* meson passes -D_GNU_SOURCE for the whole project */
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <berth-app.h>

/* A whole message is at most 1 MiB; JSON escaping can grow text, so half. */
#define READ_MAX (512 * 1024)
#define LIST_MAX 10000

/* The string input `key`, or NULL after failing the call (-32602). */
static const char *input_string(berth_call *call, json_t *input, const char *key, const char *dflt)
{
	json_t *v = json_object_get(input, key);
	char where[64];

	if (v == NULL && dflt != NULL)
		return dflt;
	if (json_is_string(v))
		return json_string_value(v);
	snprintf(where, sizeof where, "$.%s", key);
	berth_app_fail_params(call, where, v == NULL ? "required property is missing" : "expected string");
	return NULL;
}

static const char *type_name(mode_t mode)
{
	if (S_ISREG(mode))
		return "file";
	if (S_ISDIR(mode))
		return "dir";
	return "other";
}

/*
 * Open a new temporary file beside @base in @dfd, for write_file: O_EXCL
 * and O_NOFOLLOW, so whatever already stands at the name (a symlink planted
 * there, a file another instance is writing) is never opened; the next name
 * is tried instead.  The first name is `.BASE.PID.tmp`, the others add a
 * random part (each `berth rpc` runs its own instance, often with the same
 * pid in its own pid namespace).  Long names are cut to fit NAME_MAX.
 * Returns the descriptor with the name in @tmp, or -1 with errno.
 */
static int open_temporary(int dfd, const char *base, mode_t mode, char *tmp, size_t size)
{
	int cut = (int)strnlen(base, NAME_MAX - 40);

	for (unsigned i = 0; i < 32; i++) {
		uint32_t r = 0;
		int fd;

		if (i == 0)
			snprintf(tmp, size, ".%.*s.%d.tmp", cut, base, (int)getpid());
		else {
			struct timespec t;
			if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
				clock_gettime(CLOCK_MONOTONIC, &t);
				r = (uint32_t)t.tv_nsec * 2654435761u + i;
			}
			snprintf(tmp, size, ".%.*s.%d.%08x.tmp", cut, base, (int)getpid(), r);
		}
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, mode);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

static int write_all(int fd, const char *data, size_t len)
{
	for (size_t done = 0; done < len;) {
		ssize_t k = write(fd, data + done, len - done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k == 0)
				errno = EIO;
			return -1;
		}
		done += (size_t)k;
	}
	return 0;
}

/*
 * write_file replaces the file atomically: the content goes into a temporary
 * file in the same directory, which is synced and then renamed onto the
 * name, and the directory is synced.  A crash, a full disk or any error
 * leaves the old file (or none) as it was, never a part; on an error the
 * temporary file is removed.  An existing file keeps its permission bits
 * (and, where the app may, its owner); a new one gets 0666 less the umask.
 * An existing file the app may not write is refused, as writing it was.
 * The last component is never followed: a symlink there is replaced, not
 * written through.  The directory is found as before, by the kernel, and
 * the sandbox decides.
 */
static json_t *write_file(berth_call *call, json_t *input, void *user_data)
{
	const char *path = input_string(call, input, "path", NULL);
	const char *content = path != NULL ? input_string(call, input, "content", NULL) : NULL;
	const char *slash, *base, *step = NULL;
	char dir[PATH_MAX], tmp[NAME_MAX + 1];
	bool existing = false;
	struct stat st;
	size_t len;
	int dfd, fd, e = 0;

	(void)user_data;
	if (content == NULL)
		return NULL;
	len = json_string_length(json_object_get(input, "content"));
	slash = strrchr(path, '/');
	base = slash != NULL ? slash + 1 : path;
	if (*base == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return berth_app_fail_errno(call, EISDIR, "open", path);
	if (slash == NULL)
		snprintf(dir, sizeof dir, ".");
	else if ((size_t)snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path) >=
		 sizeof dir)
		return berth_app_fail_errno(call, ENAMETOOLONG, "open", path);
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return berth_app_fail_errno(call, errno, "open", path);
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISDIR(st.st_mode)) {
			close(dfd);
			return berth_app_fail_errno(call, EISDIR, "open", path);
		}
		if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
			close(dfd);
			return berth_app_fail(call, "`%s` is not a regular file", path);
		}
		existing = S_ISREG(st.st_mode);
		/* Replacing by rename needs only the directory's permission: a
		 * file the app may not write (mode 0444, another's 0644) must
		 * stay as refused as writing it in place was.  The kernel (and
		 * the sandbox) judges this open; the descriptor writes nothing. */
		if (existing) {
			fd = openat(dfd, base, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
			if (fd < 0) {
				e = errno;
				close(dfd);
				return berth_app_fail_errno(call, e, "open", path);
			}
			close(fd);
		}
	} else if (errno != ENOENT) {
		e = errno;
		close(dfd);
		return berth_app_fail_errno(call, e, "stat", path);
	}
	fd = open_temporary(dfd, base, existing ? 0600 : 0666, tmp, sizeof tmp);
	if (fd < 0) {
		e = errno;
		close(dfd);
		return berth_app_fail_errno(call, e, "open", path);
	}
	/* The owner first: fchown(2) clears the set-id bits fchmod(2) sets.  An
	 * app that may not (EPERM) makes the new file its own. */
	if (existing && (st.st_uid != geteuid() || st.st_gid != getegid()) &&
	    fchown(fd, st.st_uid, st.st_gid) < 0 && errno != EPERM)
		e = errno, step = "fchown";
	else if (existing && fchmod(fd, st.st_mode & 07777) < 0)
		e = errno, step = "fchmod";
	else if (write_all(fd, content, len) < 0)
		e = errno, step = "write";
	else if (fsync(fd) < 0)
		e = errno, step = "fsync";
	if (close(fd) < 0 && e == 0)
		e = errno, step = "close";
	if (e == 0 && renameat(dfd, tmp, dfd, base) < 0)
		e = errno, step = "rename";
	if (e != 0) {
		unlinkat(dfd, tmp, 0);
		close(dfd);
		return berth_app_fail_errno(call, e, step, path);
	}
	/* The new name is durable only once its directory is.  EINVAL: a file
	 * system whose directories cannot be synced. */
	fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || (fsync(fd) < 0 && errno != EINVAL))
		e = errno;
	if (fd >= 0)
		close(fd);
	close(dfd);
	if (e != 0)
		return berth_app_fail(call, "`%s` was replaced, but syncing its directory failed: %s", path,
				      strerror(e));
	return json_pack("{s:s, s:I}", "path", path, "bytes", (json_int_t)len);
}

static json_t *read_file(berth_call *call, json_t *input, void *user_data)
{
	const char *path = input_string(call, input, "path", NULL);
	size_t len = 0;
	struct stat st;
	char *buf;
	json_t *content;
	int fd;

	(void)user_data;
	if (path == NULL)
		return NULL;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return berth_app_fail_errno(call, errno, "open", path);
	if (fstat(fd, &st) < 0) {
		int saved = errno;
		close(fd);
		return berth_app_fail_errno(call, saved, "fstat", path);
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return berth_app_fail_errno(call, EISDIR, "read", path);
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return berth_app_fail(call, "`%s` is not a regular file", path);
	}
	buf = malloc(READ_MAX + 1);
	if (buf == NULL) {
		close(fd);
		return berth_app_fail_errno(call, ENOMEM, NULL, NULL);
	}
	/* Read one byte past the cap to tell "exactly the cap" from "more". */
	while (len < READ_MAX + 1) {
		ssize_t k = read(fd, buf + len, READ_MAX + 1 - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int saved = errno;
			close(fd);
			free(buf);
			return berth_app_fail_errno(call, saved, "read", path);
		}
		if (k == 0)
			break;
		len += (size_t)k;
	}
	close(fd);
	if (len > READ_MAX) {
		free(buf);
		return berth_app_fail(call, "`%s` is larger than %d bytes, the most read_file returns", path,
				      READ_MAX);
	}
	content = memchr(buf, '\0', len) == NULL ? json_stringn(buf, len) : NULL;
	free(buf);
	if (content == NULL)
		return berth_app_fail(call, "`%s` is not UTF-8 text", path);
	return json_pack("{s:o}", "content", content);
}

struct entry {
	char *name;
	const char *type;
	off_t size;
};

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

static void free_entries(struct entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(e[i].name);
	free(e);
}

static json_t *list_files(berth_call *call, json_t *input, void *user_data)
{
	const char *path = input_string(call, input, "path", ".");
	struct entry *entries = NULL;
	size_t n = 0, skipped = 0;
	bool truncated = false;
	struct dirent *de;
	json_t *files;
	DIR *d;

	(void)user_data;
	if (path == NULL)
		return NULL;
	d = opendir(path);
	if (d == NULL)
		return berth_app_fail_errno(call, errno, "open", path);
	entries = calloc(LIST_MAX, sizeof *entries);
	if (entries == NULL) {
		closedir(d);
		return berth_app_fail_errno(call, ENOMEM, NULL, NULL);
	}
	for (errno = 0; (de = readdir(d)) != NULL; errno = 0) {
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (n == LIST_MAX) {
			truncated = true;
			break;
		}
		/* Follow symlinks as read_file would; a dangling one is "other". */
		if (fstatat(dirfd(d), de->d_name, &st, 0) < 0 &&
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			skipped++; /* removed meanwhile */
			continue;
		}
		entries[n].name = strdup(de->d_name);
		if (entries[n].name == NULL)
			break;
		entries[n].type = type_name(st.st_mode);
		entries[n].size = st.st_size;
		n++;
	}
	if (errno != 0) {
		int saved = errno;
		closedir(d);
		free_entries(entries, n);
		return berth_app_fail_errno(call, saved, "getdents64", path);
	}
	closedir(d);
	qsort(entries, n, sizeof *entries, entry_cmp);
	files = json_array();
	for (size_t i = 0; files != NULL && i < n; i++) {
		json_t *name = json_string(entries[i].name);
		if (name == NULL) {
			skipped++; /* not UTF-8: JSON cannot carry it */
			continue;
		}
		json_array_append_new(files, json_pack("{s:o, s:s, s:I}", "name", name, "type",
						       entries[i].type, "size", (json_int_t)entries[i].size));
	}
	free_entries(entries, n);
	if (skipped > 0)
		berth_app_log(berth_call_app(call), "notice", "list_files `%s`: %zu entries left out", path,
			      skipped);
	return json_pack("{s:o, s:b}", "files", files, "truncated", truncated);
}

static json_t *delete_file(berth_call *call, json_t *input, void *user_data)
{
	const char *path = input_string(call, input, "path", NULL);

	(void)user_data;
	if (path == NULL)
		return NULL;
	if (unlink(path) < 0)
		return berth_app_fail_errno(call, errno, "unlink", path);
	return json_pack("{s:b}", "deleted", 1);
}

static json_t *stat_file(berth_call *call, json_t *input, void *user_data)
{
	const char *path = input_string(call, input, "path", NULL);
	struct stat st;
	char mode[8];

	(void)user_data;
	if (path == NULL)
		return NULL;
	if (stat(path, &st) < 0)
		return berth_app_fail_errno(call, errno, "stat", path);
	snprintf(mode, sizeof mode, "%04o", (unsigned)(st.st_mode & 07777));
	return json_pack("{s:s, s:s, s:I, s:s, s:I}", "path", path, "type", type_name(st.st_mode), "size",
			 (json_int_t)st.st_size, "mode", mode, "mtime", (json_int_t)st.st_mtim.tv_sec);
}

int main(void)
{
	static const struct {
		const char *name;
		berth_app_handler fn;
	} exports[] = {
	    {"write_file", write_file},   {"read_file", read_file}, {"list_files", list_files},
	    {"delete_file", delete_file}, {"stat", stat_file},
	};
	berth_app *app = berth_app_new();
	int r;

	if (app == NULL) {
		fprintf(stderr, "filesystem: out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < sizeof exports / sizeof exports[0]; i++) {
		if (berth_app_export(app, exports[i].name, exports[i].fn, NULL) < 0) {
			fprintf(stderr, "filesystem: export `%s`: %s\n", exports[i].name, strerror(errno));
			berth_app_free(app);
			return 1;
		}
	}
	r = berth_app_run(app);
	berth_app_free(app);
	return r < 0 ? 1 : 0;
}
