/* SPDX-License-Identifier: MIT */
/*
 * session.c - session names, directories, metadata and the client side of
 * the control socket (the supervisor is supervise.c).
 */
#include "session.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/sys.h"
#include "../util/rundir.h"
#ifdef BERTH_HAVE_CLASSIFIER
#include "agent_state.h"
#endif

int berth_session_name_check(const char *name, struct berth_error *err)
{
	size_t n = strlen(name);

	if (n == 0 || n > BERTH_SESSION_NAME_MAX || name[0] == '-' ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-") != n) {
		berth_usage_err(err, "invalid session name `%s`", name);
		return berth_err_hint(err, "use 1 to %d of a-z, 0-9 and `-`, not starting with `-`",
				      BERTH_SESSION_NAME_MAX);
	}
	return 0;
}

static void sanitize_into(char *out, size_t cap, const char *s, size_t n)
{
	size_t o = strlen(out);

	for (size_t i = 0; i < n && o + 1 < cap; i++) {
		char c = s[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
			c = '-';
		if (c == '-' && (o == 0 || out[o - 1] == '-'))
			continue;
		out[o++] = c;
	}
	out[o] = '\0';
}

void berth_session_name_derive(const char *profile, const char *repo, char out[BERTH_SESSION_NAME_MAX + 1])
{
	char stamp[16];
	time_t now = time(NULL);
	struct tm tm;
	size_t room;

	out[0] = '\0';
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof stamp, "%H%M%S", &tm);
	room = BERTH_SESSION_NAME_MAX + 1 - strlen(stamp) - 1;
	sanitize_into(out, room > 24 ? 24 : room, profile, strlen(profile));
	if (repo != NULL) {
		size_t len = strlen(repo);
		while (len > 0 && repo[len - 1] == '/')
			len--;
		size_t start = len;
		while (start > 0 && repo[start - 1] != '/' && repo[start - 1] != ':')
			start--;
		if (len - start > 4 && strncmp(repo + len - 4, ".git", 4) == 0)
			len -= 4;
		if (len > start && strlen(out) + 2 < room) {
			strcat(out, "-");
			sanitize_into(out, room, repo + start, len - start);
		}
	}
	while (out[0] != '\0' && out[strlen(out) - 1] == '-')
		out[strlen(out) - 1] = '\0';
	if (out[0] != '\0')
		strcat(out, "-");
	strcat(out, stamp);
}

int berth_session_runtime_dir(const char *name, bool create, char *buf, size_t len, struct berth_error *err)
{
	char sub[PATH_MAX];

	if (berth_runtime_subdir("sessions", create, sub, sizeof sub, err) < 0)
		return -1;
	if ((name == NULL ? snprintf(buf, len, "%s", sub) : snprintf(buf, len, "%s/%s", sub, name)) >=
		(int)len ||
	    strlen(buf) + sizeof "/ctl.sock" > sizeof((struct sockaddr_un){0}).sun_path)
		return berth_usage_err(err, "the session directory `%s/%s` is too long for a socket path",
				       sub, name ? name : "");
	if (create && name != NULL && berth_mkdir_private(buf, err) < 0)
		return -1;
	return 0;
}

int berth_session_state_dir(const char *name, bool create, char *buf, size_t len, struct berth_error *err)
{
	char top[PATH_MAX];

	if (berth_state_path("sessions", top, sizeof top) < 0) {
		if (errno == ENAMETOOLONG)
			return berth_usage_err(err, "the session state directory path is too long");
		return berth_usage_err(
		    err, "cannot place session state: neither XDG_STATE_HOME nor HOME is an absolute path");
	}
	if (create) {
		if (berth_mkdir_parents(top, 0700, err) < 0)
			return -1;
		if (berth_mkdir_private(top, err) < 0)
			return -1;
	}
	if ((name == NULL ? snprintf(buf, len, "%s", top) : snprintf(buf, len, "%s/%s", top, name)) >=
	    (int)len)
		return berth_usage_err(err, "the session state directory path is too long");
	if (create && name != NULL && berth_mkdir_private(buf, err) < 0)
		return -1;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int berth_session_list(char ***names, struct berth_error *err)
{
	char dir[PATH_MAX];
	DIR *d;
	struct dirent *e;
	char **v = NULL;
	int n = 0;

	*names = NULL;
	if (berth_session_runtime_dir(NULL, false, dir, sizeof dir, err) < 0)
		return -1;
	d = opendir(dir);
	if (d == NULL)
		return errno == ENOENT ? 0 : berth_err(err, errno, "cannot list `%s`", dir);
	while ((e = readdir(d)) != NULL) {
		struct berth_error ignore = {0};
		if (e->d_name[0] == '.' || berth_session_name_check(e->d_name, &ignore) < 0)
			continue;
		char **nv = realloc(v, (size_t)(n + 1) * sizeof *v);
		if (nv == NULL || (nv[n] = strdup(e->d_name)) == NULL) {
			v = nv != NULL ? nv : v;
			for (int i = 0; i < n; i++)
				free(v[i]);
			free(v);
			closedir(d);
			return berth_err(err, ENOMEM, "out of memory");
		}
		v = nv;
		n++;
	}
	closedir(d);
	if (n > 0)
		qsort(v, (size_t)n, sizeof *v, cmp_str);
	*names = v;
	return n;
}

static int session_file(const char *name, const char *file, char *buf, size_t len, struct berth_error *err)
{
	char dir[PATH_MAX];

	if (berth_session_runtime_dir(name, false, dir, sizeof dir, err) < 0)
		return -1;
	if (snprintf(buf, len, "%s/%s", dir, file) >= (int)len)
		return berth_usage_err(err, "path too long");
	return 0;
}

json_t *berth_session_meta_read(const char *name, struct berth_error *err)
{
	char path[PATH_MAX];
	json_error_t je;
	json_t *j;

	if (berth_session_name_check(name, err) < 0 ||
	    session_file(name, "session.json", path, sizeof path, err) < 0)
		return NULL;
	j = json_load_file(path, 0, &je);
	if (j == NULL) {
		if (access(path, F_OK) < 0) {
			berth_usage_err(err, "no session `%s`", name);
			berth_err_hint(err, "see `berth ps`");
		} else {
			berth_err(err, 0, "cannot read `%s`: %s", path, je.text);
		}
		return NULL;
	}
	if (!json_is_object(j)) {
		json_decref(j);
		berth_err(err, 0, "`%s` is not a JSON object", path);
		return NULL;
	}
	return j;
}

int berth_session_meta_write(const char *name, json_t *meta, struct berth_error *err)
{
	char path[PATH_MAX];
	cleanup_free char *text = NULL;

	if (session_file(name, "session.json", path, sizeof path, err) < 0)
		return -1;
	text = json_dumps(meta, JSON_COMPACT | JSON_SORT_KEYS);
	if (text == NULL)
		return berth_err(err, ENOMEM, "cannot write `%s`", path);
	/* 0666 less the umask, as fopen(3) made it */
	return berth_write_atomic(path, text, strlen(text), 0666, BERTH_WRITE_DURABLE, err);
}

bool berth_session_alive(const char *name)
{
	char path[PATH_MAX];
	struct berth_error err = {0};

	if (session_file(name, "lock", path, sizeof path, &err) < 0)
		return false;
	return berth_lock_held(path);
}

int berth_session_claim(const char *name, struct berth_error *err)
{
	char dir[PATH_MAX], path[PATH_MAX + 16];
	cleanup_close int fd = -1;

	if (berth_session_name_check(name, err) < 0 ||
	    berth_session_runtime_dir(name, true, dir, sizeof dir, err) < 0)
		return -1;
	snprintf(path, sizeof path, "%s/lock", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return berth_err(err, errno, "cannot open `%s`", path);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK) {
			berth_usage_err(err, "a session named `%s` is running", name);
			return berth_err_hint(err, "pick another --name, or `berth stop %s` first", name);
		}
		return berth_err(err, errno, "cannot lock `%s`", path);
	}
	/* A stale session of that name (its supervisor is gone): start afresh. */
	static const char *const stale[] = {"ctl.sock", "session.json", "screen.txt", "session.json.tmp"};
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(stale); i++) {
		snprintf(path, sizeof path, "%s/%s", dir, stale[i]);
		unlink(path);
	}
	return steal_fd(&fd);
}

int berth_session_connect(const char *name, struct berth_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char path[PATH_MAX];
	struct ucred cred;
	socklen_t cl = sizeof cred;
	cleanup_close int fd = -1;

	if (berth_session_name_check(name, err) < 0 ||
	    session_file(name, "ctl.sock", path, sizeof path, err) < 0)
		return -1;
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return berth_err(err, errno, "socket");
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		int e = errno;
		if (access(path, F_OK) < 0 && berth_session_meta_read(name, err) == NULL)
			return -1;
		/* no socket: the agent ended and its supervisor removed it */
		if (e == ENOENT)
			berth_usage_err(err, "session `%s` is not running: it has ended", name);
		else
			berth_usage_err(err, "session `%s` is not running (%s)", name, strerror(e));
		return berth_err_hint(err, "see `berth ps`; `berth logs %s` shows its output", name);
	}
	/* Only a supervisor of this very user: a socket someone else made must
	 * not get our keystrokes. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 || cred.uid != getuid())
		return berth_usage_err(err, "the control socket of `%s` belongs to another user: refusing it",
				       name);
	return steal_fd(&fd);
}

int berth_session_request(const char *name, json_t *req, unsigned timeout_ms, json_t **reply,
			  struct berth_error *err)
{
	cleanup_close int fd = berth_session_connect(name, err);
	cleanup_free char *text = NULL;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	long long deadline = berth_now_ms() + timeout_ms;
	json_error_t je;
	json_t *j;

	*reply = NULL;
	if (fd < 0)
		return -1;
	text = json_dumps(req, JSON_COMPACT);
	if (text == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	size_t tl = strlen(text);
	text[tl] = '\n';
	if (send(fd, text, tl + 1, MSG_NOSIGNAL) != (ssize_t)(tl + 1))
		return berth_err(err, errno, "cannot talk to session `%s`", name);
	text[tl] = '\0';
	for (;;) {
		long long left = deadline - berth_now_ms();
		struct pollfd p = {fd, POLLIN, 0};
		if (left <= 0 || poll(&p, 1, (int)left) == 0) {
			free(buf);
			return berth_err(err, ETIMEDOUT, "session `%s` did not answer within %u ms", name,
					 timeout_ms);
		}
		if (len + 4096 > cap) {
			if (cap > (16u << 20)) {
				free(buf);
				return berth_err(err, E2BIG, "the answer of session `%s` is too long", name);
			}
			char *nb = realloc(buf, cap = cap * 2 + 8192);
			if (nb == NULL) {
				free(buf);
				return berth_err(err, ENOMEM, "out of memory");
			}
			buf = nb;
		}
		ssize_t n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(buf);
			return berth_err(err, n < 0 ? errno : EPIPE, "session `%s` closed the connection",
					 name);
		}
		len += (size_t)n;
		if (memchr(buf + len - n, '\n', (size_t)n) != NULL)
			break;
	}
	buf[len] = '\0';
	j = json_loads(buf, JSON_DISABLE_EOF_CHECK, &je);
	free(buf);
	if (!json_is_object(j)) {
		json_decref(j);
		return berth_err(err, 0, "session `%s` sent a broken answer", name);
	}
	if (json_is_string(json_object_get(j, "error"))) {
		berth_err(err, 0, "session `%s`: %s", name, json_string_value(json_object_get(j, "error")));
		err->status = BERTH_EXIT_USAGE;
		json_decref(j);
		return -1;
	}
	*reply = j;
	return 0;
}

/* Remove the entries of directory @dfd (which it closes), recursively. */
static int rm_children(int dfd, const char *path, struct berth_error *err)
{
	DIR *d = fdopendir(dfd);
	struct dirent *e;
	int r = 0;

	if (d == NULL) {
		close(dfd);
		return berth_err(err, errno, "cannot list `%s`", path);
	}
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) == 0 || errno == ENOENT)
			continue;
		if (errno != EISDIR && errno != EPERM) {
			r = berth_err(err, errno, "cannot remove `%s/%s`", path, e->d_name);
			continue;
		}
		int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		char p2[PATH_MAX];
		snprintf(p2, sizeof p2, "%s/%s", path, e->d_name);
		if (sub < 0) {
			r = berth_err(err, errno, "cannot remove `%s`", p2);
			continue;
		}
		/* A read-only directory (a sandbox may leave one) is made
		 * writable by its owner first. */
		fchmod(sub, 0700);
		if (rm_children(sub, p2, err) < 0)
			r = -1;
		else if (unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) < 0)
			r = berth_err(err, errno, "cannot remove `%s`", p2);
	}
	closedir(d);
	return r;
}

int berth_rm_rf(const char *path, struct berth_error *err)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		if (unlink(path) == 0)
			return 0;
		return berth_err(err, errno, "cannot remove `%s`", path);
	}
	fchmod(fd, 0700);
	if (rm_children(fd, path, err) < 0)
		return -1;
	if (rmdir(path) < 0 && errno != ENOENT)
		return berth_err(err, errno, "cannot remove `%s`", path);
	return 0;
}

int berth_session_remove(const char *name, bool purge, struct berth_error *err)
{
	char rt[PATH_MAX], st[PATH_MAX];
	DIR *d;
	struct dirent *e;

	if (berth_session_name_check(name, err) < 0 ||
	    berth_session_runtime_dir(name, false, rt, sizeof rt, err) < 0 ||
	    berth_session_state_dir(name, false, st, sizeof st, err) < 0)
		return -1;
	if (access(rt, F_OK) < 0 && access(st, F_OK) < 0) {
		berth_usage_err(err, "no session `%s`", name);
		return berth_err_hint(err, "see `berth ps`");
	}
	if (berth_session_alive(name)) {
		berth_usage_err(err, "session `%s` is running", name);
		return berth_err_hint(err, "`berth stop %s` first", name);
	}
	if (berth_rm_rf(rt, err) < 0)
		return -1;
	if (purge)
		return berth_rm_rf(st, err);
	d = opendir(st);
	if (d == NULL)
		return 0;
	int r = 0;
	while ((e = readdir(d)) != NULL) {
		char p[PATH_MAX + 300];
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    strcmp(e->d_name, "workspace") == 0)
			continue;
		snprintf(p, sizeof p, "%s/%s", st, e->d_name);
		if (berth_rm_rf(p, err) < 0)
			r = -1;
	}
	closedir(d);
	if (r == 0)
		rmdir(st); /* only when it held no workspace */
	return r;
}

json_t *berth_session_screen(const char *name, unsigned timeout_ms, struct berth_error *err)
{
	char path[PATH_MAX];
	json_t *req, *reply = NULL;
	json_error_t je;

	if (berth_session_name_check(name, err) < 0)
		return NULL;
	if (berth_session_alive(name)) {
		req = json_pack("{ss}", "op", "peek");
		int r = berth_session_request(name, req, timeout_ms, &reply, err);
		json_decref(req);
		if (r == 0)
			return reply;
		if (berth_session_alive(name))
			return NULL;
		berth_err_clear(err);
	}
	if (session_file(name, "screen.json", path, sizeof path, err) < 0)
		return NULL;
	reply = json_load_file(path, 0, &je);
	if (!json_is_object(reply)) {
		json_decref(reply);
		if (berth_session_meta_read(name, err) == NULL)
			return NULL;
		berth_usage_err(err, "session `%s` ended without a screen to show", name);
		berth_err_hint(err, "`berth logs %s` has its output", name);
		return NULL;
	}
	return reply;
}

/* The state of a live session from its screen: the agent-state
 * classifier with the profile's pattern set (src/session/agent_state.h). */
static const char *classify(const json_t *meta, const json_t *scr, char *why, size_t why_len)
{
#ifdef BERTH_HAVE_CLASSIFIER
	struct berth_error err = {0};
	const char *agent = json_string_value(json_object_get(meta, "agent"));
	struct berth_agent_patterns *pat = agent != NULL ? berth_agent_patterns_load(agent, &err) : NULL;
	json_t *arr = json_object_get(scr, "lines"), *cur = json_object_get(scr, "cursor");
	size_t n = json_array_size(arr);
	const char **lines = calloc(n + 1, sizeof *lines);
	const char *w = NULL;

	if (lines == NULL)
		return "unknown";
	for (size_t i = 0; i < n; i++)
		lines[i] = json_string_value(json_array_get(arr, i));
	struct berth_screen_view v = {
	    .lines = lines,
	    .n_lines = (int)n,
	    /* A hidden cursor says nothing about where the agent waits. */
	    .cursor_row = json_is_array(cur) && !json_is_false(json_object_get(scr, "cursor_visible"))
			      ? (int)json_integer_value(json_array_get(cur, 0))
			      : -1,
	    .cursor_col = json_is_array(cur) ? (int)json_integer_value(json_array_get(cur, 1)) : -1,
	    .alive = json_is_true(json_object_get(scr, "alive")),
	    .exit_status = json_is_integer(json_object_get(scr, "exit"))
			       ? (int)json_integer_value(json_object_get(scr, "exit"))
			       : -1,
	    .idle_ms = json_is_integer(json_object_get(scr, "idle_ms"))
			   ? json_integer_value(json_object_get(scr, "idle_ms"))
			   : -1,
	};
	enum berth_agent_state st = berth_agent_classify(pat, &v, &w);
	if (pat == NULL && agent != NULL)
		snprintf(why, why_len, "%s (no patterns: %s)", w ? w : "", err.msg);
	else
		snprintf(why, why_len, "%s", w ? w : "");
	berth_agent_patterns_free(pat);
	free(lines);
	return berth_agent_state_name(st);
#else
	(void)meta;
	(void)scr;
	snprintf(why, why_len, "the supervisor runs (no state classifier in this build)");
	return "running";
#endif
}

json_t *berth_session_status(const char *name, unsigned timeout_ms)
{
	char whybuf[512];
	struct berth_error err = {0};
	json_t *meta = berth_session_meta_read(name, &err);
	bool alive = berth_session_alive(name);
	const char *state, *why = "";
	json_int_t started, ended;

	if (meta == NULL)
		return NULL;
	state = json_string_value(json_object_get(meta, "state"));
	started = json_integer_value(json_object_get(meta, "started"));
	ended = json_integer_value(json_object_get(meta, "ended"));
	json_object_set_new(meta, "alive", json_boolean(alive));
	if (!alive) {
		if (state == NULL || strcmp(state, "exited") != 0) {
			state = "stale";
			why = "the session's supervisor is gone";
		} else {
			state = "exited";
			why = "the agent ended";
		}
		json_object_set_new(meta, "uptime_s", json_integer(ended > started ? ended - started : 0));
	} else {
		json_object_set_new(meta, "uptime_s", json_integer((json_int_t)time(NULL) - started));
		if (state == NULL || strcmp(state, "stopping") != 0) {
			json_t *scr = berth_session_screen(name, timeout_ms, &err);
			if (scr == NULL) {
				state = "unresponsive";
				why = err.msg;
			} else {
				state = classify(meta, scr, whybuf, sizeof whybuf);
				why = whybuf;
				json_decref(scr);
			}
		}
	}
	json_object_set_new(meta, "state", json_string(state));
	json_object_set_new(meta, "why", json_string(why));
	return meta;
}
