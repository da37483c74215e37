/* SPDX-License-Identifier: MIT */
/*
 * journal.c - the run journal (journal.h).
 */
#include "journal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "crash.h"
#include "rundir.h"
#include "sys.h"

static bool id_valid(const char *id)
{
	return id != NULL && strlen(id) == 16 && strspn(id, "0123456789abcdef") == 16;
}

/* live/ into @buf (PATH_MAX bytes); errno EINVAL/ENAMETOOLONG/ENOENT as
 * berth_state_path. */
static int live_dir(char *buf)
{
	return berth_state_path("live", buf, PATH_MAX - 32);
}

/* @dir (live/) is a directory of this user that no other can write: a
 * journal there names what the next berth kills and removes.  Returns 0, or
 * -1 with @err filled (status 2). */
static int live_private(const char *dir, struct berth_error *err)
{
	struct stat st;

	if (lstat(dir, &st) < 0)
		return berth_err(err, errno, "cannot stat `%s`", dir);
	if (S_ISDIR(st.st_mode) && st.st_uid == getuid() && (st.st_mode & 0077) == 0)
		return 0;
	berth_usage_err(err, "`%s` is not a private directory of uid %u: refusing to use it", dir,
			(unsigned)getuid());
	return berth_err_hint(err,
			      "it holds berth's run journals, whose runs the next berth repairs: remove it "
			      "if it is yours, or set XDG_STATE_HOME to a directory of yours");
}

static int write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* @fd (just locked) is still the file at @path: not removed or replaced by
 * the berth that held the lock before us. */
static bool still_there(int fd, const char *path)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && lstat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino &&
	       a.st_nlink > 0;
}

int berth_journal_create(struct berth_journal *j, const char *run_id, const char *audit_dir,
			 struct berth_error *err)
{
	char dir[PATH_MAX], tmp[PATH_MAX + 32], head[PATH_MAX + 128];
	int n;

	j->fd = -1;
	j->path[0] = '\0';
	if (!id_valid(run_id))
		return berth_err(err, EINVAL, "invalid run id `%s`", run_id != NULL ? run_id : "");
	if (live_dir(dir) < 0) {
		if (errno == EINVAL)
			return berth_usage_err(
			    err,
			    "cannot place run state: neither XDG_STATE_HOME nor HOME is an absolute path");
		return berth_usage_err(err, "the state directory path is too long");
	}
	if (berth_mkdirs(dir, 0700, err) < 0 || live_private(dir, err) < 0)
		return -1;
	snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, run_id);
	snprintf(j->path, sizeof j->path, "%s/%s", dir, run_id);
	/* every message names the journal, never its temporary (cli-contract.md) */
	/* Another berth's sweep (sweep_tmp) may lock and remove the temporary
	 * between its open and our flock, taking it for a killed berth's: wait
	 * for that lock, and make the file again when it is gone. */
	int fd = -1;
	for (int tries = 0; fd < 0; tries++) {
		fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0)
			return berth_err(err, errno, "cannot create the run journal `%s`", j->path);
		if (flock(fd, LOCK_EX) < 0) {
			int e = errno;
			close(fd);
			unlink(tmp);
			return berth_err(err, e, "cannot lock the run journal `%s`", j->path);
		}
		if (!still_there(fd, tmp)) {
			close(fd);
			fd = -1;
			if (tries >= 8)
				return berth_err(
				    err, EAGAIN,
				    "cannot create the run journal `%s`: removed again and again "
				    "as it was made",
				    j->path);
		}
	}
	n = snprintf(head, sizeof head, "berth-run-journal 1\nrun %s\npid %ld\naudit %s\n", run_id,
		     (long)getpid(), audit_dir != NULL ? audit_dir : "");
	if (n < 0 || (size_t)n >= sizeof head || write_all(fd, head, (size_t)n) < 0) {
		int e = n < 0 || (size_t)n >= sizeof head ? ENAMETOOLONG : errno;
		unlink(tmp);
		close(fd);
		return berth_err(err, e, "cannot write the run journal `%s`", j->path);
	}
	berth_crash_point("run.journal_tmp");
	if (rename(tmp, j->path) < 0) {
		int e = errno;
		unlink(tmp);
		close(fd);
		return berth_err(err, e, "cannot create the run journal `%s`", j->path);
	}
	j->fd = fd;
	berth_crash_point("run.journal");
	return 0;
}

int berth_journal_note(const struct berth_journal *j, const char *kind, const char *path,
		       struct berth_error *err)
{
	char line[PATH_MAX + 32];
	int n;

	if (j == NULL || j->fd < 0)
		return 0;
	if (strchr(path, '\n') != NULL)
		return berth_err(err, EINVAL, "cannot note `%s` in the run journal: a newline in its name",
				 path);
	n = snprintf(line, sizeof line, "%s %s\n", kind, path);
	if (n < 0 || (size_t)n >= sizeof line)
		return berth_err(err, ENAMETOOLONG, "cannot note `%s` in the run journal", path);
	/* O_APPEND is not set: the journal is written by this process only,
	 * and every write goes to the end. */
	if (lseek(j->fd, 0, SEEK_END) < 0 || write_all(j->fd, line, (size_t)n) < 0)
		return berth_err(err, errno, "cannot write the run journal `%s`", j->path);
	return 0;
}

void berth_journal_done(struct berth_journal *j)
{
	if (j->fd < 0)
		return;
	unlink(j->path);
	close(j->fd);
	j->fd = -1;
}

bool berth_journal_live(const char *run_id)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];

	if (!id_valid(run_id) || live_dir(dir) < 0)
		return false;
	snprintf(path, sizeof path, "%s/%s", dir, run_id);
	return berth_lock_held(path);
}

/* Every open of a file in live/ is O_NONBLOCK: a FIFO there (live/ is
 * berth's, but not every writer of it is) would otherwise block the open, and
 * with it every later berth, for ever; a journal is a regular file, which
 * O_NONBLOCK does not change. */

/* A temporary journal (.ID.tmp): removed when nobody holds it. */
static void sweep_tmp(const char *path)
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 && still_there(fd, path))
		unlink(path);
}

static int sweep_one(const char *path, const char *run_id,
		     int (*repair)(const char *run_id, char *text, void *ctx), void *ctx)
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;
	char *text;
	ssize_t n;
	int r;

	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0 || !still_there(fd, path))
		return 0; /* live, or repaired by another berth just now */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid() ||
	    st.st_size > BERTH_JOURNAL_MAX)
		return 0;
	text = malloc((size_t)st.st_size + 1);
	if (text == NULL)
		return 0;
	n = read(fd, text, (size_t)st.st_size);
	if (n < 0) {
		free(text);
		return 0;
	}
	text[n] = '\0';
	r = repair(run_id, text, ctx);
	free(text);
	if (r < 0)
		return 0;
	berth_crash_point("sweep.repaired");
	unlink(path);
	return 1;
}

int berth_journal_sweep(int (*repair)(const char *run_id, char *text, void *ctx), void *ctx,
			struct berth_error *err)
{
	char dir[PATH_MAX], path[PATH_MAX + 300];
	struct dirent *e;
	int done = 0;

	if (live_dir(dir) < 0)
		return 0;
	/* a live/ that is not private is not read (the journal_create that
	 * follows in every caller refuses it, naming why) */
	struct berth_error ignored = {0};
	if (live_private(dir, &ignored) < 0)
		return 0;
	DIR *d = opendir(dir);
	if (d == NULL)
		return errno == ENOENT ? 0 : berth_err(err, errno, "cannot read `%s`", dir);
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (len == 21 && e->d_name[0] == '.' && strcmp(e->d_name + 17, ".tmp") == 0) {
			sweep_tmp(path);
			continue;
		}
		if (id_valid(e->d_name))
			done += sweep_one(path, e->d_name, repair, ctx);
	}
	closedir(d);
	return done;
}
