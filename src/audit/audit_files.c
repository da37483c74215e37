/* SPDX-License-Identifier: MIT */
/*
 * audit_files.c - the audit log's files (audit.c): names, listing, whole-buffer I/O;
 * and the small public helpers (time stamps, run ids, the log directory).
 */

#include <dirent.h>
#include <inttypes.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "../util/cleanup.h"
#include "../util/rundir.h"

#include "audit_int.h"

/* ---- small helpers ---- */

void berth_audit_now_rfc3339(char buf[32])
{
	struct timespec ts;
	struct tm tm;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(buf, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, 32 - n, ".%03ldZ", ts.tv_nsec / 1000000);
}

void berth_audit_new_run_id(char out[17])
{
	unsigned char b[8];
	size_t got = 0;

	while (got < sizeof b) {
		ssize_t r = getrandom(b + got, sizeof b - got, 0);

		if (r > 0)
			got += (size_t)r;
		else if (errno != EINTR)
			break;
	}
	if (got < sizeof b) { /* no getrandom: time and pid, still unique enough for a name */
		struct timespec ts;
		uint64_t v;

		clock_gettime(CLOCK_REALTIME, &ts);
		v = ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec) ^ ((uint64_t)getpid() << 48);
		memcpy(b, &v, sizeof b);
	}
	berth_hex(b, sizeof b, out);
}

int berth_audit_dir(char *buf, size_t size, struct berth_error *err)
{
	const char *over = getenv("BERTH_AUDIT_DIR");

	if (over != NULL && over[0] != '\0') {
		if (over[0] != '/')
			return berth_usage_err(err, "BERTH_AUDIT_DIR `%s` is not an absolute path", over);
		if ((size_t)snprintf(buf, size, "%s", over) >= size)
			return berth_err(err, ENAMETOOLONG, "audit directory path is too long");
		return 0;
	}
	if (berth_state_path("audit", buf, size) < 0) {
		if (errno == ENAMETOOLONG)
			return berth_err(err, ENAMETOOLONG, "audit directory path is too long");
		return berth_err(
		    err, EINVAL,
		    "cannot place the audit log: neither XDG_STATE_HOME nor HOME is an absolute path");
	}
	return 0;
}

void berth_aud_file_name(uint64_t first_seq, char out[FILE_NAME_LEN + 1])
{
	snprintf(out, FILE_NAME_LEN + 1, FILE_PREFIX "%016" PRIu64 FILE_SUFFIX, first_seq);
}

/* The first seq a log file name claims, or 0 when it is not a log file name. */
uint64_t berth_aud_file_seq(const char *name)
{
	uint64_t v = 0;

	if (strlen(name) != FILE_NAME_LEN || strncmp(name, FILE_PREFIX, sizeof FILE_PREFIX - 1) != 0 ||
	    strcmp(name + FILE_NAME_LEN - (sizeof FILE_SUFFIX - 1), FILE_SUFFIX) != 0)
		return 0;
	for (size_t i = sizeof FILE_PREFIX - 1; i < sizeof FILE_PREFIX - 1 + 16; i++) {
		if (name[i] < '0' || name[i] > '9')
			return 0;
		v = v * 10 + (uint64_t)(name[i] - '0');
	}
	return v;
}

static int name_filter(const struct dirent *d)
{
	return berth_aud_file_seq(d->d_name) != 0;
}

uint64_t berth_aud_quarantine_seq(const char *name)
{
	size_t pl = sizeof QUARANTINE_PREFIX - 1, len = strlen(name);
	uint64_t v = 0;

	if (len < pl + 20 + 1 + 20 + sizeof FILE_SUFFIX - 1 || strncmp(name, QUARANTINE_PREFIX, pl) != 0 ||
	    strcmp(name + len - (sizeof FILE_SUFFIX - 1), FILE_SUFFIX) != 0 || name[pl + 20] != '-')
		return 0;
	for (size_t i = pl; i < pl + 20; i++) {
		if (name[i] < '0' || name[i] > '9' || v > UINT64_MAX / 10)
			return 0;
		v = v * 10 + (uint64_t)(name[i] - '0');
	}
	return v;
}

static int quarantine_filter(const struct dirent *d)
{
	return berth_aud_quarantine_seq(d->d_name) != 0;
}

void berth_aud_damage_mv(char *buf, size_t size, const char *dir)
{
	struct timespec ts;
	struct tm tm;
	char when[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof when, "%Y%m%dT%H%M%SZ", &tm);
	snprintf(buf, size, "mv %s %s.damaged-%s", dir, dir, when);
}

int berth_aud_damage_hint(struct berth_error *err, const char *dir)
{
	char mv[8300];

	berth_aud_damage_mv(mv, sizeof mv, dir);
	return berth_err_hint(
	    err,
	    "`berth audit verify` says where; berth does not extend a damaged log: keep it as "
	    "evidence and start a new one with `%s`",
	    mv);
}

/*
 * Open @name in @dfd to read it: never through a symbolic link, and only a
 * regular file.  O_NONBLOCK for the open itself: a FIFO put in the log's
 * place would otherwise block the reader (berth audit verify, list) for
 * ever, waiting for a writer.  Returns the descriptor (blocking again), or
 * -1 with errno set (EINVAL: not a regular file).
 */
int berth_aud_open_regular(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || fcntl(fd, F_SETFL, 0) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

/* The error for a failed berth_aud_open_regular() of @dir/@name. */
int berth_aud_open_failed(struct berth_error *err, const char *dir, const char *name)
{
	if (errno == EINVAL)
		return berth_err(err, 0, "`%s/%s` is not a regular file: the audit log cannot be read", dir,
				 name);
	return berth_err(err, errno, "cannot open `%s/%s`", dir, name);
}

static int list_matching(int dfd, int (*filter)(const struct dirent *), char ***names, size_t *n,
			 struct berth_error *err)
{
	struct dirent **ents = NULL;
	char path[64];
	int k;

	snprintf(path, sizeof path, "/proc/self/fd/%d", dfd);
	k = scandir(path, &ents, filter, alphasort);
	if (k < 0)
		return berth_err(err, errno, "cannot list the audit directory");
	*names = calloc((size_t)k + 1, sizeof **names);
	if (*names == NULL) {
		for (int i = 0; i < k; i++)
			free(ents[i]);
		free(ents);
		return berth_err(err, ENOMEM, "audit");
	}
	for (int i = 0; i < k; i++) {
		(*names)[i] = strdup(ents[i]->d_name);
		free(ents[i]);
	}
	free(ents);
	*n = (size_t)k;
	return 0;
}

/* The log files of @dfd, sorted (fixed-width names sort numerically). */
int berth_aud_list_files(int dfd, char ***names, size_t *n, struct berth_error *err)
{
	return list_matching(dfd, name_filter, names, n, err);
}

int berth_aud_list_quarantine(int dfd, char ***names, size_t *n, struct berth_error *err)
{
	return list_matching(dfd, quarantine_filter, names, n, err);
}

void berth_aud_free_names(char **names, size_t n)
{
	if (names == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* All @len bytes at @off, written (@out) or read, through EINTR and short
 * transfers; a transfer of nothing is EIO (a read past the end). */
static int transfer_all_at(int fd, char *buf, size_t len, off_t off, bool out)
{
	while (len > 0) {
		ssize_t n = out ? pwrite(fd, buf, len, off) : pread(fd, buf, len, off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

int berth_aud_write_all_at(int fd, const char *buf, size_t len, off_t off)
{
	return transfer_all_at(fd, (char *)buf, len, off, true);
}

int berth_aud_read_all_at(int fd, char *buf, size_t len, off_t off)
{
	return transfer_all_at(fd, buf, len, off, false);
}

bool berth_aud_is_hex64(const char *s)
{
	if (s == NULL || strlen(s) != 64)
		return false;
	for (int i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}
