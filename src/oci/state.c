/* SPDX-License-Identifier: MIT */
/*
 * state.c - the state directory of `berth oci` (--root, default
 * /run/berth-oci): one private directory per container, ROOT/ID, holding
 *   state.json  what the supervisor recorded (status, its pid and start
 *               time, the bundle...), replaced whole (temporary file and
 *               rename(2)) at each change, never written through a link
 *   start.fifo  the FIFO `start` writes one byte into (supervisor.c)
 *   config.json the bundle's config.json as `create` read and checked it,
 *               0600: what `exec` confines its process by (exec.c)
 * and locked (flock(2)) by `create` while it runs, so that a directory with
 * no state.json yet is told apart from one a dead `create` left.
 *
 * A pid alone is no proof of life: the supervisor's start time (field 22 of
 * /proc/PID/stat) is recorded with it, and a pid whose start time differs is
 * another process - the container is stopped.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/sys.h"
#include "oci_int.h"

const char *berth_oci_status_name(enum berth_oci_status s)
{
	switch (s) {
	case BERTH_OCI_CREATING:
		return "creating";
	case BERTH_OCI_CREATED:
		return "created";
	case BERTH_OCI_RUNNING:
		return "running";
	case BERTH_OCI_STOPPED:
		return "stopped";
	default:
		return "stopped";
	}
}

int berth_oci_id_check(const char *id, struct berth_error *err)
{
	size_t n = strlen(id);

	if (n == 0)
		return berth_usage_err(err, "invalid container id ``: it is empty");
	if (n > BERTH_OCI_ID_MAX)
		return berth_usage_err(err, "invalid container id `%.64s...`: longer than %d bytes", id,
				       BERTH_OCI_ID_MAX);
	if (strcmp(id, ".") == 0 || strcmp(id, "..") == 0)
		return berth_usage_err(err, "invalid container id `%s`", id);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)id[i];
		if (!isalnum(c) && c != '_' && c != '+' && c != '-' && c != '.') {
			char shown[80];
			berth_usage_err(err,
					"invalid container id `%s`: `%s` is not one of A-Z a-z 0-9 _ + - .",
					n < 64 ? id : "...",
					isprint(c) ? (snprintf(shown, sizeof shown, "%c", c), shown)
						   : (snprintf(shown, sizeof shown, "\\x%02x", c), shown));
			return -1;
		}
	}
	return 0;
}

const char *berth_oci_default_root(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (geteuid() != 0 && xdg != NULL && xdg[0] == '/' &&
	    (size_t)snprintf(buf, len, "%s/berth-oci", xdg) < len)
		return buf;
	snprintf(buf, len, "%s", BERTH_OCI_ROOT_DEFAULT);
	return buf;
}

/* mkdir -p, each missing directory 0700. */
static int mkdir_parents(const char *path, struct berth_error *err)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof buf)
		return berth_err(err, ENAMETOOLONG, "cannot use the state directory `%.200s`", path);
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(buf, 0700) < 0 && errno != EEXIST)
			return berth_err(err, errno, "cannot make the state directory `%s`", buf);
		*p = c;
		if (c == '\0')
			return 0;
	}
}

int berth_oci_root_open(const char *root, bool create, struct berth_error *err)
{
	struct stat st;
	int fd;

	if (root == NULL)
		root = BERTH_OCI_ROOT_DEFAULT;
	if (root[0] != '/') {
		berth_usage_err(err, "the state directory `%.200s` is not an absolute path", root);
		return berth_err_hint(err, "give --root /ABSOLUTE/DIR");
	}
	if (create && mkdir_parents(root, err) < 0) {
		if (err->errnum == EACCES || err->errnum == EPERM || err->errnum == EROFS)
			berth_err_hint(err,
				       "give --root a directory you may write (as runc's rootless --root "
				       "$XDG_RUNTIME_DIR/...)");
		return -1;
	}
	fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return berth_err_status(
			    err, ENOENT, BERTH_EXIT_USAGE,
			    "the state directory `%.200s` does not exist (no container was created "
			    "there)",
			    root);
		berth_err(err, errno, "cannot use the state directory `%.200s`", root);
		return berth_err_hint(err,
				      "give --root a directory of yours (made 0700 when missing), such as "
				      "$XDG_RUNTIME_DIR/berth-oci");
	}
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022) != 0) {
		close(fd);
		berth_usage_err(
		    err,
		    "cannot use the state directory `%.200s`: it must belong to uid %u and be writable "
		    "by nobody else",
		    root, (unsigned)geteuid());
		return berth_err_hint(err, "give --root a private directory (made 0700 when missing)");
	}
	return fd;
}

int berth_oci_proc_start(pid_t pid, unsigned long long *start)
{
	char path[64], buf[1024], *p;
	cleanup_close int fd = -1;
	ssize_t n;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		errno = ESRCH;
		return -1;
	}
	n = read(fd, buf, sizeof buf - 1);
	if (n <= 0) {
		errno = ESRCH;
		return -1;
	}
	buf[n] = '\0';
	/* the command name may hold spaces and parentheses: fields count
	 * from the last `)` (field 2's end); field 22 is the 20th after it */
	p = strrchr(buf, ')');
	if (p == NULL)
		return errno = ESRCH, -1;
	p++;
	for (int field = 2; field < 22; field++) {
		p = strchr(p, ' ');
		if (p == NULL)
			return errno = ESRCH, -1;
		p++;
	}
	*start = strtoull(p, NULL, 10);
	return 0;
}

bool berth_oci_alive(pid_t pid, unsigned long long start)
{
	unsigned long long now;
	char path[64], buf[512], *p;
	cleanup_close int fd = -1;
	ssize_t n;

	if (pid <= 0 || berth_oci_proc_start(pid, &now) < 0 || now != start)
		return false;
	/* a zombie is gone too: its parent just has not reaped it yet */
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 || (n = read(fd, buf, sizeof buf - 1)) <= 0)
		return false;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p != NULL && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

int berth_oci_state_write(int dfd, const json_t *doc, struct berth_error *err)
{
	cleanup_free char *text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);

	if (text == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	return berth_write_atomic_at(dfd, "state.json", "state.json", text, strlen(text), 0600,
				     BERTH_WRITE_MODE, err);
}

json_t *berth_oci_state_doc(const char *id, const struct berth_oci_bundle *b, const char *created_at,
			    pid_t pid, unsigned long long start)
{
	json_t *ann = b->annotations != NULL ? json_deep_copy(b->annotations) : json_object();

	/* egress: the sandbox's network is berth's broker (berth.dev/allow-hosts),
	 * which connects from the supervisor's network (a pod's peer joins
	 * that one, src/oci/supervisor.c) */
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:s, s:i, s:I, s:i, s:I, s:b, s:s?}", "id", id,
			 "bundle", b->dir, "rootfs", b->policy.container->root, "created", created_at,
			 "owner", "", "annotations", ann, "status", "created", "pid", (int)pid, "pid_start",
			 (json_int_t)start, "sandbox_pid", 0, "sandbox_start", (json_int_t)0, "egress",
			 b->policy.network == BERTH_NET_PROXY, "cgroups_path", b->cgroups_path);
}

void berth_oci_state_free(struct berth_oci_state *s)
{
	json_decref(s->doc);
	s->doc = NULL;
}

static enum berth_oci_status status_of(const char *s)
{
	if (s != NULL && strcmp(s, "created") == 0)
		return BERTH_OCI_CREATED;
	if (s != NULL && strcmp(s, "running") == 0)
		return BERTH_OCI_RUNNING;
	return BERTH_OCI_STOPPED;
}

static int no_such(const char *id, struct berth_error *err)
{
	berth_err_status(err, 0, 1, "container `%s` does not exist", id);
	err->errnum = ENOENT; /* the message has no strerror: runc's words */
	return -1;
}

int berth_oci_state_read(int rootfd, const char *id, struct berth_oci_state *s, struct berth_error *err)
{
	cleanup_close int dfd = -1, fd = -1;
	json_error_t je;

	memset(s, 0, sizeof *s);
	s->exit_status = -1;
	if (berth_oci_id_check(id, err) < 0)
		return -1;
	snprintf(s->id, sizeof s->id, "%s", id);
	dfd = openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP)
			return no_such(id, err);
		return berth_err(err, errno, "cannot read the state of container `%s`", id);
	}
	fd = openat(dfd, "state.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 && errno == ENOENT) {
		/* no state yet: `create` still runs (it holds the lock), or
		 * died before the supervisor wrote any */
		bool held = flock(dfd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
		s->status = held ? BERTH_OCI_CREATING : BERTH_OCI_STOPPED;
		s->doc = json_pack("{s:s}", "id", id);
		return s->doc != NULL ? 0 : berth_err(err, ENOMEM, "out of memory");
	}
	if (fd < 0)
		return berth_err(err, errno, "cannot read the state of container `%s`", id);
	for (int pass = 0;; pass++) {
		s->doc = json_loadfd(fd, 0, &je);
		if (s->doc == NULL || !json_is_object(s->doc)) {
			json_decref(s->doc);
			s->doc = NULL;
			return berth_err(err, EBADMSG, "the state of container `%s` cannot be read: %s", id,
					 je.text);
		}
		s->status = status_of(json_string_value(json_object_get(s->doc, "status")));
		s->pid = (pid_t)json_integer_value(json_object_get(s->doc, "pid"));
		s->pid_start = (unsigned long long)json_integer_value(json_object_get(s->doc, "pid_start"));
		s->sandbox_pid = (pid_t)json_integer_value(json_object_get(s->doc, "sandbox_pid"));
		s->sandbox_start =
		    (unsigned long long)json_integer_value(json_object_get(s->doc, "sandbox_start"));
		s->egress = json_is_true(json_object_get(s->doc, "egress"));
		s->exit_status = -1;
		if (json_is_integer(json_object_get(s->doc, "exit_status")))
			s->exit_status = (int)json_integer_value(json_object_get(s->doc, "exit_status"));
		if (s->status == BERTH_OCI_STOPPED || berth_oci_alive(s->pid, s->pid_start))
			break;
		/* Gone: its last state (`stopped`, the error) may have replaced the
		 * file after it was opened here; read once more what it left. */
		close(fd);
		fd = -1;
		if (pass > 0 ||
		    (fd = openat(dfd, "state.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)) < 0) {
			s->status = BERTH_OCI_STOPPED; /* it died without saying so (SIGKILL) */
			break;
		}
		json_decref(s->doc);
		s->doc = NULL;
	}
	if (s->status == BERTH_OCI_STOPPED)
		s->pid = 0;
	return 0;
}

json_t *berth_oci_state_json(const struct berth_oci_state *s)
{
	const json_t *d = s->doc;
	const char *bundle = json_string_value(json_object_get(d, "bundle"));
	const char *rootfs = json_string_value(json_object_get(d, "rootfs"));
	const char *created = json_string_value(json_object_get(d, "created"));
	const json_t *ann = json_object_get(d, "annotations");
	json_t *o = json_pack("{s:s, s:s, s:i, s:s, s:s, s:s, s:s, s:s}", "ociVersion", BERTH_OCI_VERSION,
			      "id", s->id, "pid", (int)s->pid, "status", berth_oci_status_name(s->status),
			      "bundle", bundle != NULL ? bundle : "", "rootfs", rootfs != NULL ? rootfs : "",
			      "created", created != NULL ? created : "0001-01-01T00:00:00Z", "owner", "");

	if (o != NULL && json_is_object(ann) && json_object_size(ann) > 0)
		json_object_set_new(o, "annotations", json_deep_copy(ann));
	return o;
}
