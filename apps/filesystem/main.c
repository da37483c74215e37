/* SPDX-License-Identifier: MIT */
/*
 * filesystem - a resident app that reads and writes files in its workspace.
 *
 * Paths are used exactly as given: relative ones resolve against the working
 * directory, which berth makes /workspace.  The app checks no path itself;
 * the sandbox (mounts and Landlock) decides, and a denial comes back as
 * -32001 with the errno, the system call and the path, so that berth can say
 * which capability was missing.
 */
#ifndef _GNU_SOURCE /* meson passes -D_GNU_SOURCE for the whole project */
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

static json_t *write_file(berth_call *call, json_t *input, void *user_data)
{
	const char *path = input_string(call, input, "path", NULL);
	const char *content = path != NULL ? input_string(call, input, "content", NULL) : NULL;
	size_t len, done = 0;
	struct stat st;
	int fd;

	(void)user_data;
	if (content == NULL)
		return NULL;
	len = json_string_length(json_object_get(input, "content"));
	/* O_NONBLOCK: a FIFO without a reader fails with ENXIO instead of
	 * blocking the app, which serves one call at a time. */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0666);
	if (fd < 0)
		return berth_app_fail_errno(call, errno, "open", path);
	if (fstat(fd, &st) < 0) {
		int saved = errno;
		close(fd);
		return berth_app_fail_errno(call, saved, "fstat", path);
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return berth_app_fail(call, "`%s` is not a regular file", path);
	}
	while (done < len) {
		ssize_t k = write(fd, content + done, len - done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int saved = errno;
			close(fd);
			return berth_app_fail_errno(call, saved, "write", path);
		}
		done += (size_t)k;
	}
	if (close(fd) < 0)
		return berth_app_fail_errno(call, errno, "close", path);
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
