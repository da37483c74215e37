/* SPDX-License-Identifier: MIT */

#include "dev.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/rundir.h"
#include "../util/sys.h"
#include "devctl.h"
#include "lines.h"
#include "outq.h"

#define MAX_APPS 16
#define MAX_CLIENTS 32
#define MAX_WATCHES 256
#define RELOAD_SETTLE_MS 15 /* let a burst of writes (an editor's save) finish */

int berth_dev_socket_path(const char *name, bool create, char *buf, size_t len, struct berth_error *err)
{
	char sub[PATH_MAX];

	/* Private, as the sessions' directory: another user's directory there
	 * could route our control connections. */
	if (berth_runtime_subdir("dev", create, sub, sizeof sub, err) < 0)
		return -1;
	if (snprintf(buf, len, "%s/%s.sock", sub, name) >= (int)len ||
	    strlen(buf) >= sizeof((struct sockaddr_un){0}).sun_path)
		return berth_usage_err(err, "the control socket path for `%s` is too long", name);
	return 0;
}

static int connect_to(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	struct ucred cred;
	socklen_t cl = sizeof cred;

	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	/* Only a berth dev of this very user: a socket someone else made (in
	 * /tmp, when there is no XDG_RUNTIME_DIR) must not get our calls. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 || cred.uid != getuid()) {
		close(fd);
		return -1;
	}
	return fd;
}

/* ---------------------------------------------------------- client */

int berth_dev_call(const char *name, const char *app_dir, const char *export, json_t *input,
		   unsigned timeout_ms, json_t **result, struct berth_call_error *ce)
{
	char path[PATH_MAX];
	struct berth_error err = {0};
	cleanup_close int fd = -1;
	cleanup_free char *line = NULL;
	struct berth_lines in;
	json_t *req, *msg = NULL;
	char *got = NULL;
	size_t len = 0;
	int r = 0;
	long long deadline;

	*result = NULL;
	memset(ce, 0, sizeof *ce);
	if (berth_dev_socket_path(name, false, path, sizeof path, &err) < 0)
		return BERTH_DEV_NONE;
	fd = connect_to(path);
	if (fd < 0)
		return BERTH_DEV_NONE;
	req = json_pack("{s:s, s:i, s:s, s:{s:s, s:O*, s:i, s:s*}}", "jsonrpc", "2.0", "id", 1, "method",
			"call", "params", "export", export, "input", input, "timeout_ms", (int)timeout_ms,
			"app_dir", app_dir);
	line = req != NULL ? json_dumps(req, JSON_COMPACT) : NULL;
	json_decref(req);
	if (line == NULL || berth_lines_init(&in, BERTH_RPC_MAX_LINE + 65536) < 0) {
		ce->code = BERTH_RPC_INTERNAL;
		snprintf(ce->message, sizeof ce->message, "out of memory");
		return -1;
	}
	len = strlen(line);
	if (send(fd, line, len, MSG_NOSIGNAL) != (ssize_t)len || send(fd, "\n", 1, MSG_NOSIGNAL) != 1) {
		berth_lines_free(&in);
		return BERTH_DEV_NONE;
	}
	deadline = berth_now_us() / 1000 + (timeout_ms ? timeout_ms : BERTH_APP_CALL_TIMEOUT_MS) + 5000;
	for (;;) {
		r = berth_lines_next(&in, &got, &len);
		if (r != 0 || in.eof)
			break;
		long long left = deadline - berth_now_us() / 1000;
		struct pollfd p = {fd, POLLIN, 0};
		if (left <= 0 || poll(&p, 1, (int)left) <= 0) {
			berth_lines_free(&in);
			ce->code = BERTH_RPC_TIMEOUT;
			snprintf(ce->message, sizeof ce->message,
				 "`berth dev` for `%s` did not answer in time", name);
			return -1;
		}
		if (berth_lines_fill(&in, fd) < 0 && errno != EAGAIN && errno != EINTR)
			break;
	}
	if (r == 1)
		msg = json_loadb(got, len, 0, NULL);
	berth_lines_free(&in);
	if (msg == NULL) {
		ce->code = BERTH_RPC_CRASHED;
		snprintf(ce->message, sizeof ce->message, "`berth dev` for `%s` closed the connection", name);
		return -1;
	}
	json_t *res = json_object_get(msg, "result"), *e = json_object_get(msg, "error");
	if (json_is_object(res) && json_is_object(json_object_get(res, "output"))) {
		*result = json_incref(json_object_get(res, "output"));
		json_decref(msg);
		return 0;
	}
	if (json_integer_value(json_object_get(e, "code")) == BERTH_DEV_OTHER_DIR) {
		json_decref(msg);
		return BERTH_DEV_NONE;
	}
	json_t *data = json_object_get(e, "data");
	const char *message = json_string_value(json_object_get(e, "message"));
	ce->code = (int)json_integer_value(json_object_get(e, "code"));
	ce->refused_input = json_is_string(json_object_get(msg, "stage"));
	snprintf(ce->message, sizeof ce->message, "%s", message != NULL ? message : "error");
	const char *denial = json_string_value(json_object_get(data, "denial"));
	if (denial != NULL)
		ce->denial = strdup(denial);
	if (json_is_object(data)) {
		ce->data = json_deep_copy(data);
		json_object_del(ce->data, "denial");
		if (json_object_size(ce->data) == 0) {
			json_decref(ce->data);
			ce->data = NULL;
		}
	}
	json_decref(msg);
	return -1;
}

/* ---------------------------------------------------------- server */

struct dev_app {
	char dir[PATH_MAX];
	struct berth_app *app;
	char name[64];
	char sock_path[PATH_MAX];
	int listen_fd;
	bool dirty;
	long long dirty_at; /* µs */
};

struct client {
	int fd; /* non-blocking */
	struct dev_app *app;
	struct berth_lines in;
	struct berth_outq out; /* answers not written yet */
	bool watch;            /* asked (`watch`) to hear of reloads: a `changed` notification */
};

#define CLIENT_OUT_MAX (8 * 1024 * 1024) /* a client this far behind is dropped */

struct dev {
	const struct berth_dev_opts *o;
	struct dev_app apps[MAX_APPS];
	size_t n_apps;
	struct client clients[MAX_CLIENTS];
	int ino;
	struct {
		int wd;
		struct dev_app *app;
		char *dir; /* the watched directory */
	} watches[MAX_WATCHES];
	size_t n_watches;
};

static void print_log(void *ctx, const char *app, const char *level, const char *line)
{
	(void)ctx;
	fprintf(stderr, "[%s]%s%s %s\n", app, strcmp(level, "info") ? " " : "",
		strcmp(level, "info") ? level : "", line);
}

/* The app in @da's directory into *@out, its diagnostics printed when it
 * does not load. */
static int load_app(const struct dev *d, const struct dev_app *da, struct berth_app **out,
		    struct berth_error *err)
{
	char actor[64];
	snprintf(actor, sizeof actor, "dev:uid:%u",
		 (unsigned)getuid()); /* callers are this uid (SO_PEERCRED) */
	struct berth_app_opts ao = {.force_off = d->o->force_off,
				    .log = print_log,
				    .audit = true,
				    .actor = actor,
				    .runtime = d->o->runtime};
	struct berth_diags diags = {0};

	if (berth_app_open(da->dir, &ao, out, &diags, err) < 0) {
		for (size_t i = 0; i < diags.n; i++)
			fprintf(stderr, "%s\n", diags.items[i].text);
		berth_diags_free(&diags);
		return -1;
	}
	return 0;
}

static int open_app(struct dev *d, struct dev_app *da, struct berth_error *err)
{
	if (load_app(d, da, &da->app, err) < 0)
		return -1;
	snprintf(da->name, sizeof da->name, "%s", berth_app_manifest(da->app)->name);
	return 0;
}

static void add_watches(struct dev *d, struct dev_app *da, const char *dir, int depth)
{
	DIR *dh;
	struct dirent *e;
	int wd;

	if (depth > 8 || d->n_watches >= MAX_WATCHES)
		return;
	wd = inotify_add_watch(d->ino, dir,
			       IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO |
				   IN_ATTRIB | IN_DELETE_SELF | IN_ONLYDIR);
	if (wd < 0)
		return;
	d->watches[d->n_watches].wd = wd;
	d->watches[d->n_watches].app = da;
	d->watches[d->n_watches].dir = strdup(dir);
	d->n_watches++;
	dh = opendir(dir);
	if (dh == NULL)
		return;
	while ((e = readdir(dh)) != NULL) {
		char sub[PATH_MAX];
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
		add_watches(d, da, sub, depth + 1);
	}
	closedir(dh);
}

static int listen_on(struct dev_app *da, struct berth_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (berth_dev_socket_path(da->name, true, da->sock_path, sizeof da->sock_path, err) < 0)
		return -1;
	fd = connect_to(da->sock_path);
	if (fd >= 0) {
		close(fd);
		berth_usage_err(err, "another `berth dev` already serves `%s` (%s)", da->name, da->sock_path);
		return berth_err_hint(err, "stop it first, or call it: berth rpc %s --export NAME", da->name);
	}
	unlink(da->sock_path); /* stale, from a berth dev that was killed */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", da->sock_path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 16) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return berth_err(err, e, "cannot listen on `%s`", da->sock_path);
	}
	da->listen_fd = fd;
	return 0;
}

static void how_to_call(const struct dev_app *da, unsigned long boot_us)
{
	const struct berth_manifest *m = berth_app_manifest(da->app);

	fprintf(stderr, "berth: dev: `%s` %s is ready in %.1f ms (policy %s)\n", m->name, m->version,
		(double)boot_us / 1000.0, berth_app_policy_of(da->app)->app_digest);
	for (size_t i = 0; i < m->n_exports; i++)
		fprintf(stderr, "berth: dev:   berth rpc %s --export %s --input '%s'\n", m->name,
			m->exports[i].name, m->exports[i].n_examples > 0 ? "<json>" : "{}");
}

static void reply(struct client *c, json_t *msg);

static void reload(struct dev *d, struct dev_app *da)
{
	struct berth_error err = {0};
	struct berth_app *old = da->app, *fresh = NULL;
	long long t0 = berth_now_us();
	unsigned long boot_us = 0;

	da->dirty = false;
	if (load_app(d, da, &fresh, &err) < 0) {
		fprintf(stderr,
			"berth: dev: `%s` changed but cannot be reloaded: %s; the previous version keeps "
			"running\n",
			da->name, err.msg);
		return;
	}
	if (strcmp(berth_app_manifest(fresh)->name, da->name) != 0) {
		fprintf(stderr,
			"berth: dev: the app in `%s` was renamed to `%s`; restart berth dev to serve it\n",
			da->dir, berth_app_manifest(fresh)->name);
		berth_app_close(fresh);
		return;
	}
	berth_app_stop(old);
	if (berth_app_boot(fresh, &boot_us, &err) < 0) {
		fprintf(stderr, "berth: dev: `%s` changed and does not boot: %s%s%s; fix it and save again\n",
			da->name, err.msg, err.hint[0] ? "; " : "", err.hint);
		berth_app_close(old);
		da->app = fresh; /* the next call tries again */
		return;
	}
	berth_app_close(old);
	da->app = fresh;
	for (size_t i = 0; i < MAX_CLIENTS; i++) {
		struct client *c = &d->clients[i];
		if (c->fd >= 0 && c->watch && c->app == da)
			reply(c, json_pack("{s:s, s:s, s:{s:s, s:s?}}", "jsonrpc", "2.0", "method", "changed",
					   "params", "name", da->name, "digest",
					   berth_app_policy_of(fresh)->app_digest));
	}
	fprintf(stderr, "berth: dev: reloaded `%s` in %.1f ms (digest %s)\n", da->name,
		(double)(berth_now_us() - t0) / 1000.0, berth_app_policy_of(fresh)->app_digest);
}

static void client_close(struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	berth_lines_free(&c->in);
	berth_outq_free(&c->out);
}

/* Write what the client will take now; never block on a slow reader. */
static void client_flush(struct client *c)
{
	if (c->fd >= 0 && berth_outq_send(&c->out, c->fd) < 0)
		client_close(c);
}

static void reply(struct client *c, json_t *msg)
{
	cleanup_free char *s = json_dumps(msg, JSON_COMPACT);
	size_t len = s != NULL ? strlen(s) : 0;

	json_decref(msg);
	if (s == NULL || c->fd < 0)
		return;
	/* Too far behind, it does not read its answers: drop it rather than
	 * stall. */
	if (c->out.len + len + 1 > CLIENT_OUT_MAX || berth_outq_put_line(&c->out, s, len) < 0) {
		client_close(c);
		return;
	}
	client_flush(c);
}

static void reply_error(struct client *c, json_t *id, int code, const char *message)
{
	reply(c, json_pack("{s:s, s:O?, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id, "error", "code", code,
			   "message", message));
}

/* A call berth_devctl_parse accepted, made on the client's app. */
static void serve_call(struct client *c, const struct berth_devctl_req *r)
{
	struct berth_app *a = c->app->app;
	struct berth_call_error ce = {0};
	json_t *result = NULL;

	if (berth_app_check_input(a, r->export, r->input, &ce) < 0) {
		/* Refused before the app saw it: the caller's mistake ("stage"). */
		reply(c, json_pack("{s:s, s:O?, s:s, s:{s:i, s:s, s:O*}}", "jsonrpc", "2.0", "id", r->id,
				   "stage", "input", "error", "code", ce.code, "message", ce.message, "data",
				   ce.data));
		berth_call_error_free(&ce);
		return;
	}
	if (berth_app_call(a, r->export, r->input, r->timeout_ms, &result, &ce) == 0) {
		reply(c, json_pack("{s:s, s:O?, s:{s:o}}", "jsonrpc", "2.0", "id", r->id, "result", "output",
				   result));
		return;
	}
	json_t *data = ce.data != NULL ? json_deep_copy(ce.data) : json_object();
	if (ce.denial != NULL)
		json_object_set_new(data, "denial", json_string(ce.denial));
	reply(c, json_pack("{s:s, s:O?, s:{s:i, s:s, s:o}}", "jsonrpc", "2.0", "id", r->id, "error", "code",
			   ce.code, "message", ce.message, "data", data));
	berth_call_error_free(&ce);
}

/* One request line (@len bytes): parsed by berth_devctl_parse (devctl.h,
 * fuzzed on its own), answered here. */
static void serve(struct client *c, const char *line, size_t len)
{
	struct berth_app *a = c->app->app;
	struct berth_devctl_req r;
	const char *message;
	int code, rc = berth_devctl_parse(line, len, &r, &code, &message);

	/* A call that means an app of the same name elsewhere is refused as
	 * not ours before its parameters are judged. */
	if ((rc == 0 || code == BERTH_RPC_INVALID_PARAMS) && r.method == BERTH_DEVCTL_CALL &&
	    r.app_dir != NULL && strcmp(r.app_dir, berth_app_paths(a)->app_dir) != 0)
		reply_error(c, r.id, BERTH_DEV_OTHER_DIR, "berth dev serves this app from another directory");
	else if (rc < 0)
		reply_error(c, r.id, code, message);
	else if (r.method == BERTH_DEVCTL_INFO) {
		const struct berth_manifest *m = berth_app_manifest(a);
		json_t *ex = json_array();
		for (size_t i = 0; i < m->n_exports; i++)
			json_array_append_new(ex, json_string(m->exports[i].name));
		reply(c, json_pack("{s:s, s:O?, s:{s:s, s:s, s:s?, s:o}}", "jsonrpc", "2.0", "id", r.id,
				   "result", "name", m->name, "version", m->version, "digest",
				   berth_app_policy_of(a)->app_digest, "exports", ex));
	} else if (r.method == BERTH_DEVCTL_WATCH) {
		c->watch = true;
		reply(c, json_pack("{s:s, s:O?, s:{}}", "jsonrpc", "2.0", "id", r.id, "result"));
	} else {
		serve_call(c, &r);
	}
	berth_devctl_req_free(&r);
}

static void client_input(struct client *c)
{
	char *line;
	size_t len;
	int r;
	long n = berth_lines_fill(&c->in, c->fd);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		client_close(c);
		return;
	}
	while (c->fd >= 0 && c->out.len < BERTH_RPC_MAX_LINE &&
	       (r = berth_lines_next(&c->in, &line, &len)) != 0) {
		if (r == 1)
			serve(c, line, len);
		else
			reply_error(c, NULL, BERTH_RPC_INVALID_REQUEST, "message over the size limit");
	}
	if (c->fd >= 0 && c->in.eof)
		client_close(c);
}

static void accept_client(struct dev *d, struct dev_app *da)
{
	int fd = accept4(da->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	struct ucred cred;
	socklen_t cl = sizeof cred;

	if (fd < 0)
		return;
	/* Only the user who runs berth dev may call through it. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 || cred.uid != getuid()) {
		close(fd);
		return;
	}
	for (size_t i = 0; i < MAX_CLIENTS; i++) {
		struct client *c = &d->clients[i];
		if (c->fd >= 0)
			continue;
		if (berth_lines_init(&c->in, BERTH_RPC_MAX_LINE + 65536) < 0)
			break;
		c->fd = fd;
		c->app = da;
		return;
	}
	static const char busy[] = "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32000,\"message\":"
				   "\"berth dev is serving too many clients; try again\"}}\n";
	(void)!send(fd, busy, sizeof busy - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	close(fd);
}

static void inotify_input(struct dev *d)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n = read(d->ino, buf, sizeof buf);

	for (char *p = buf; n > 0 && p < buf + n;) {
		struct inotify_event *ev = (struct inotify_event *)p;
		for (size_t i = 0; i < d->n_watches; i++) {
			if (d->watches[i].wd != ev->wd)
				continue;
			struct dev_app *da = d->watches[i].app;
			if (!da->dirty)
				da->dirty_at = berth_now_us();
			da->dirty = true;
			/* A new directory inside the app is watched too. */
			if ((ev->mask & IN_CREATE) && (ev->mask & IN_ISDIR) && ev->len > 0 &&
			    ev->name[0] != '.') {
				char sub[PATH_MAX];
				if (d->watches[i].dir == NULL)
					continue;
				snprintf(sub, sizeof sub, "%s/%s", d->watches[i].dir, ev->name);
				add_watches(d, da, sub, 1);
			}
		}
		p += sizeof *ev + ev->len;
	}
}

static void dev_free(struct dev *d)
{
	for (size_t i = 0; i < MAX_CLIENTS; i++)
		client_close(&d->clients[i]);
	for (size_t i = 0; i < d->n_apps; i++) {
		struct dev_app *da = &d->apps[i];
		if (da->listen_fd >= 0) {
			close(da->listen_fd);
			unlink(da->sock_path);
		}
		berth_app_close(da->app);
	}
	if (d->ino >= 0)
		close(d->ino);
	for (size_t i = 0; i < d->n_watches; i++)
		free(d->watches[i].dir);
}

int berth_dev_run(char *const dirs[], size_t n, const struct berth_dev_opts *o, struct berth_error *err)
{
	struct dev d = {.o = o, .ino = -1};
	sigset_t set, old;
	cleanup_close int sfd = -1;
	int r = -1;

	if (n == 0 || n > MAX_APPS)
		return berth_usage_err(err, "berth dev serves 1 to %d apps, not %zu", MAX_APPS, n);
	for (size_t i = 0; i < MAX_CLIENTS; i++)
		d.clients[i].fd = -1;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, &old);
	sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	d.ino = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (sfd < 0 || d.ino < 0) {
		berth_err(err, errno, "cannot set up signals or inotify");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct dev_app *da = &d.apps[d.n_apps++];
		unsigned long boot_us = 0;
		da->listen_fd = -1;
		snprintf(da->dir, sizeof da->dir, "%s", dirs[i]);
		if (open_app(&d, da, err) < 0)
			goto out;
		for (size_t k = 0; k < i; k++)
			if (strcmp(d.apps[k].name, da->name) == 0) {
				berth_usage_err(err, "two app directories hold the app `%s`", da->name);
				goto out;
			}
		/* Watch first: an edit made while the app boots, or as soon as
		 * the control socket appears, is not missed. */
		add_watches(&d, da, berth_app_paths(da->app)->app_dir, 0);
		if (listen_on(da, err) < 0 || berth_app_boot(da->app, &boot_us, err) < 0)
			goto out;
		how_to_call(da, boot_us);
	}
	fprintf(stderr, "berth: dev: watching for changes; ^C stops\n");
	r = 0;
	while (!o->once) {
		struct pollfd p[2 + MAX_APPS * 4 + MAX_CLIENTS];
		size_t np = 0;
		int timeout = -1;

		p[np++] = (struct pollfd){sfd, POLLIN, 0};
		p[np++] = (struct pollfd){d.ino, POLLIN, 0};
		for (size_t i = 0; i < d.n_apps; i++) {
			p[np++] = (struct pollfd){d.apps[i].listen_fd, POLLIN, 0};
			berth_app_poll_fds(d.apps[i].app, &p[np]);
			np += 3;
			if (d.apps[i].dirty) {
				long long left =
				    (d.apps[i].dirty_at + RELOAD_SETTLE_MS * 1000 - berth_now_us()) / 1000;
				timeout = left < 0 ? 0 : (int)left;
			}
		}
		for (size_t i = 0; i < MAX_CLIENTS; i++)
			p[np++] = (struct pollfd){d.clients[i].fd,
						  (short)(POLLIN | (d.clients[i].out.len ? POLLOUT : 0)), 0};
		if (poll(p, np, timeout) < 0 && errno != EINTR)
			break;
		if (p[0].revents & POLLIN) {
			/* Consume it: unblocked at the end, it would kill us. */
			struct signalfd_siginfo si;
			(void)!read(sfd, &si, sizeof si);
			break;
		}
		if (p[1].revents & POLLIN)
			inotify_input(&d);
		for (size_t i = 0; i < d.n_apps; i++) {
			struct pollfd *q = &p[2 + i * 4];
			if ((q[1].revents | q[2].revents | q[3].revents) & (POLLIN | POLLHUP | POLLERR))
				berth_app_idle(d.apps[i].app);
			if (q[0].revents & POLLIN)
				accept_client(&d, &d.apps[i]);
			if (d.apps[i].dirty && berth_now_us() - d.apps[i].dirty_at >= RELOAD_SETTLE_MS * 1000)
				reload(&d, &d.apps[i]);
		}
		for (size_t i = 0; i < MAX_CLIENTS; i++) {
			struct client *c = &d.clients[i];
			short re = p[2 + d.n_apps * 4 + i].revents;
			if (c->fd >= 0 && (re & POLLOUT))
				client_flush(c);
			if (c->fd >= 0 && (re & (POLLIN | POLLHUP | POLLERR)))
				client_input(c);
		}
	}
	fprintf(stderr, "berth: dev: stopping\n");
out:
	dev_free(&d);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return r;
}
