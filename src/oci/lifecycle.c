/* SPDX-License-Identifier: MIT */
/*
 * lifecycle.c - the OCI lifecycle (runtime-spec runtime.md) over the state
 * directory and the supervisor: create, start, state, kill, delete, list,
 * ps.  Each command is a short process; the container lives in its
 * supervisor (supervisor.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../runtime/runtime.h"
#include "../supervisor/app_policy.h"
#include "../util/cleanup.h"
#include "../util/rmtree.h"
#include "../util/sys.h"
#include "oci_int.h"

/* How long `start` waits for the command's execve, `delete --force` for
 * the supervisor and the sandbox to be gone. */
#define START_WAIT_MS 60000
#define GONE_WAIT_MS 10000

static int container_dir(const struct berth_oci_ctx *c, int rootfd, const char *id, char *buf, size_t len)
{
	(void)rootfd;
	return (size_t)snprintf(buf, len, "%s/%s", c->root != NULL ? c->root : BERTH_OCI_ROOT_DEFAULT, id) >=
		       len
		   ? -1
		   : 0;
}

static void remove_dir(const struct berth_oci_ctx *c, int rootfd, const char *id)
{
	char path[PATH_MAX];
	struct berth_error e = {0};

	if (container_dir(c, rootfd, id, path, sizeof path) == 0 && berth_rmtree(path, NULL, &e) < 0)
		berth_oci_log_error(&c->log, &e);
}

/* ---------------------------------------------------------- create */

/* What `create` checks before anything is made (runc's rules). */
static int check_create_opts(const struct berth_oci_create_opts *o, const struct berth_oci_bundle *b,
			     struct berth_error *err)
{
	if (b->terminal && o->console_socket == NULL) {
		berth_usage_err(err,
				"`process.terminal` is true and no --console-socket was given: nothing would "
				"receive the container's terminal");
		return berth_err_hint(err, "give --console-socket PATH, or set process.terminal false");
	}
	if (!b->terminal && o->console_socket != NULL) {
		berth_usage_err(
		    err, "--console-socket was given and `process.terminal` is false: the container has "
			 "no terminal to send");
		return berth_err_hint(err, "drop --console-socket, or set process.terminal true");
	}
	return 0;
}

/* The container's own sandbox identity under root (its own host uid),
 * keyed by its state directory. */
static unsigned identity_of(const struct berth_oci_ctx *c, const char *id)
{
	char key[PATH_MAX + 8];

	snprintf(key, sizeof key, "oci:%s/%s", c->root != NULL ? c->root : BERTH_OCI_ROOT_DEFAULT, id);
	return berth_app_identity(key);
}

int berth_oci_write_pid_file(const char *path, pid_t pid, struct berth_error *err)
{
	char text[24];
	int n = snprintf(text, sizeof text, "%d", (int)pid);

	return berth_write_atomic(path, text, (size_t)n, 0644, BERTH_WRITE_MODE, err);
}

/* Everything of `create` after the claim on ROOT/ID; on failure the caller
 * removes the directory. */
static int create_in(const struct berth_oci_ctx *c, const struct berth_oci_create_opts *o, int dfd,
		     struct berth_error *err)
{
	struct berth_oci_bundle b;
	struct berth_runtime_opts ro = {.force_off = c->force_off, .quiet = true};
	cleanup_close int console = -1, rfd = -1, wfd = -1;
	cleanup_pid pid_t child = -1;
	struct berth_oci_notice n = {0};
	char created[48];
	int p[2];
	ssize_t got = 0;

	if (berth_oci_bundle_load(o->bundle != NULL ? o->bundle : ".", o->id, &b, err) < 0)
		goto fail;
	for (size_t i = 0; i < b.n_notes; i++)
		berth_oci_logf(&c->log, BERTH_OCI_WARNING, "container %s: %s", o->id, b.notes[i]);
	if (check_create_opts(o, &b, err) < 0)
		goto fail;
	/* what `exec` confines its processes by: the bundle as checked now,
	 * whatever becomes of it on disk */
	if (berth_write_atomic_at(dfd, BERTH_OCI_SAVED_CONFIG, BERTH_OCI_SAVED_CONFIG, b.config, b.config_len,
				  0600, BERTH_WRITE_MODE, err) < 0)
		goto fail;
	ro.identity = identity_of(c, o->id);
	/* what the runtime cannot enforce here, refused before the sandbox */
	if (berth_runtime_default()->check(&b.policy, &ro, err) < 0)
		goto fail;
	if (o->console_socket != NULL && (console = berth_oci_console_connect(o->console_socket, err)) < 0)
		goto fail;
	if (mkfifoat(dfd, "start.fifo", 0600) < 0) {
		berth_err(err, errno, "cannot make the container's start.fifo");
		goto fail;
	}
	if (pipe2(p, O_CLOEXEC) < 0) {
		berth_err(err, errno, "pipe");
		goto fail;
	}
	rfd = p[0];
	wfd = p[1];
	berth_oci_now_rfc3339(created, sizeof created, true);
	fflush(NULL);
	child = fork();
	if (child < 0) {
		berth_err(err, errno, "cannot start the container's supervisor (fork)");
		goto fail;
	}
	if (child == 0) {
		/* its own open file description of the directory: the lock on
		 * `create`'s ends with `create` */
		int own = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		struct berth_oci_sup_args a = {.ctx = c,
					       .id = o->id,
					       .b = &b,
					       .notify = wfd,
					       .dfd = own,
					       .console = console,
					       .identity = ro.identity,
					       .created_at = created};
		close(rfd);
		berth_oci_supervise(&a);
	}
	close(wfd);
	wfd = -1;
	while (got < (ssize_t)sizeof n) {
		ssize_t r = read(rfd, (char *)&n + got, sizeof n - (size_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += r;
	}
	if (got != (ssize_t)sizeof n) {
		int st = 0;
		waitpid(child, &st, 0);
		child = -1;
		berth_err(err, 0, "the supervisor of container `%s` died while the sandbox was made (%s %d)",
			  o->id, WIFSIGNALED(st) ? "signal" : "status",
			  WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		goto fail;
	}
	if (!n.ok) {
		*err = n.err;
		/* reaped first: it may have joined the engine's cgroup */
		if (b.cgroups_path != NULL) {
			kill(child, SIGKILL);
			while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
				;
			child = -1;
			berth_oci_cgroup_remove(b.cgroups_path, &c->log, o->id);
		}
		goto fail; /* the supervisor exits; cleanup_pid reaps it */
	}
	if (o->pid_file != NULL && berth_oci_write_pid_file(o->pid_file, child, err) < 0) {
		berth_err_wrap(err, "--pid-file");
		goto fail;
	}
	berth_oci_logf(&c->log, BERTH_OCI_DEBUG, "container %s: created (supervisor %d)", o->id, (int)child);
	child = -1; /* the supervisor stays; `create` returns */
	berth_oci_bundle_free(&b);
	return 0;
fail:
	berth_oci_bundle_free(&b);
	return -1;
}

int berth_oci_create(const struct berth_oci_ctx *c, const struct berth_oci_create_opts *o,
		     struct berth_error *err)
{
	cleanup_close int rootfd = -1, dfd = -1;

	if (berth_oci_id_check(o->id, err) < 0)
		return -1;
	if (o->no_pivot)
		berth_oci_logf(&c->log, BERTH_OCI_DEBUG, "--no-pivot: berth always uses pivot_root");
	if ((rootfd = berth_oci_root_open(c->root, true, err)) < 0)
		return -1;
	if (mkdirat(rootfd, o->id, 0700) < 0) {
		if (errno == EEXIST)
			return berth_usage_err(err, "container `%s` already exists", o->id);
		return berth_err(err, errno, "cannot make the state of container `%s`", o->id);
	}
	/* held until `create` returns: `state` says `creating` meanwhile */
	dfd = openat(rootfd, o->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 || flock(dfd, LOCK_EX) < 0) {
		berth_err(err, errno, "cannot open the state of container `%s`", o->id);
		unlinkat(rootfd, o->id, AT_REMOVEDIR);
		return -1;
	}
	if (create_in(c, o, dfd, err) < 0) {
		remove_dir(c, rootfd, o->id);
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------- start */

static int open_state(const struct berth_oci_ctx *c, const char *id, int *rootfd, struct berth_oci_state *s,
		      struct berth_error *err)
{
	*rootfd = berth_oci_root_open(c->root, false, err);
	if (*rootfd < 0) {
		/* no state directory: no container either (runc's words) */
		if (err->errnum == ENOENT) {
			berth_err_status(err, 0, 1, "container `%s` does not exist", id);
			err->errnum = ENOENT;
		}
		return -1;
	}
	return berth_oci_state_read(*rootfd, id, s, err);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int berth_oci_start(const struct berth_oci_ctx *c, const char *id, struct berth_error *err)
{
	cleanup_close int rootfd = -1, dfd = -1, fifo = -1;
	struct berth_oci_state s;
	int64_t deadline;

	if (open_state(c, id, &rootfd, &s, err) < 0)
		return -1;
	switch (s.status) {
	case BERTH_OCI_CREATED:
		break;
	case BERTH_OCI_RUNNING:
		berth_oci_state_free(&s);
		return berth_usage_err(err, "cannot start an already running container `%s`", id);
	case BERTH_OCI_CREATING:
		berth_oci_state_free(&s);
		return berth_usage_err(err, "cannot start container `%s`: it is still being created", id);
	case BERTH_OCI_STOPPED:
	default:
		berth_oci_state_free(&s);
		return berth_usage_err(err, "cannot start a container that has stopped (`%s`)", id);
	}
	berth_oci_state_free(&s);
	dfd = openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd >= 0)
		fifo = openat(dfd, "start.fifo", O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fifo < 0) {
		if (errno == ENXIO)
			return berth_err(err, 0, "cannot start container `%s`: its supervisor is gone", id);
		return berth_err(err, errno, "cannot start container `%s`", id);
	}
	if (write(fifo, "1", 1) != 1)
		return berth_err(err, errno, "cannot start container `%s`", id);
	/* until the command runs (state.json `running`) or failed to */
	deadline = berth_now_ms() + START_WAIT_MS;
	for (;;) {
		if (berth_oci_state_read(rootfd, id, &s, err) < 0)
			return -1;
		if (s.status == BERTH_OCI_RUNNING) {
			berth_oci_state_free(&s);
			return 0;
		}
		if (s.status == BERTH_OCI_STOPPED) {
			const char *why = json_string_value(json_object_get(s.doc, "error"));
			int st = s.exit_status;
			/* a command that ran and ended at once has no error */
			if (why == NULL && st >= 0) {
				berth_oci_state_free(&s);
				return 0;
			}
			berth_err(err, 0, "container `%s` did not start: %s", id,
				  why != NULL ? why : "its supervisor died");
			berth_oci_state_free(&s);
			return -1;
		}
		berth_oci_state_free(&s);
		if (berth_now_ms() > deadline)
			return berth_err(err, ETIMEDOUT, "container `%s` did not start within %d s", id,
					 START_WAIT_MS / 1000);
		sleep_ms(2);
	}
}

/* ---------------------------------------------------------- state, list */

int berth_oci_state(const struct berth_oci_ctx *c, const char *id, json_t **out, struct berth_error *err)
{
	cleanup_close int rootfd = -1;
	struct berth_oci_state s;

	if (open_state(c, id, &rootfd, &s, err) < 0)
		return -1;
	*out = berth_oci_state_json(&s);
	berth_oci_state_free(&s);
	return *out != NULL ? 0 : berth_err(err, ENOMEM, "out of memory");
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int berth_oci_list(const struct berth_oci_ctx *c, json_t **out, struct berth_error *err)
{
	cleanup_close int rootfd = berth_oci_root_open(c->root, false, err);
	DIR *d;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;

	*out = json_array();
	if (*out == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	if (rootfd < 0) {
		if (err->errnum == ENOENT) {
			berth_err_clear(err);
			return 0; /* nothing created yet */
		}
		return -1;
	}
	if ((d = fdopendir(dup(rootfd))) == NULL)
		return berth_err(err, errno, "cannot list the state directory");
	while ((e = readdir(d)) != NULL) {
		char **v;
		if (berth_oci_id_check(e->d_name, &(struct berth_error){0}) < 0 || e->d_type != DT_DIR)
			continue;
		if ((v = realloc(names, (n + 1) * sizeof *v)) == NULL || (v[n] = strdup(e->d_name)) == NULL) {
			if (v != NULL)
				names = v;
			break;
		}
		names = v;
		n++;
	}
	closedir(d);
	if (n > 0)
		qsort(names, n, sizeof *names, by_name);
	for (size_t i = 0; i < n; i++) {
		struct berth_oci_state s;
		if (berth_oci_state_read(rootfd, names[i], &s, &(struct berth_error){0}) == 0) {
			json_array_append_new(*out, berth_oci_state_json(&s));
			berth_oci_state_free(&s);
		}
		free(names[i]);
	}
	free(names);
	return 0;
}

/* ---------------------------------------------------------- kill, delete */

/* A pidfd of @pid, only if it is still the process that started at
 * @start (no pid reuse between the check and the signal). */
static int pidfd_of(pid_t pid, unsigned long long start)
{
	int fd;

	if (pid <= 0)
		return -1;
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		return -1;
	if (!berth_oci_alive(pid, start)) {
		close(fd);
		errno = ESRCH;
		return -1;
	}
	return fd;
}

static json_t *descendants(pid_t top);

/* @sig to the sandbox's pid 1 (started at @start) and every process below it. */
static int signal_all(const char *id, pid_t pid1, unsigned long long start, int sig, struct berth_error *err)
{
	json_t *all, *p;
	size_t i;

	if (!berth_oci_alive(pid1, start))
		return berth_err_status(err, 0, 1, "container not running: `%s` has not started its command",
					id);
	all = descendants(pid1);
	json_array_foreach(all, i, p) {
		int fd = (int)syscall(SYS_pidfd_open, (pid_t)json_integer_value(p), 0);
		if (fd >= 0) {
			syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
			close(fd);
		}
	}
	json_decref(all);
	return 0;
}

int berth_oci_kill(const struct berth_oci_ctx *c, const char *id, int sig, bool all, struct berth_error *err)
{
	cleanup_close int rootfd = -1, pfd = -1;
	struct berth_oci_state s;

	(void)all; /* the sandbox's pid 1 takes every process down with it */
	if (open_state(c, id, &rootfd, &s, err) < 0)
		return -1;
	if (s.status == BERTH_OCI_STOPPED || s.status == BERTH_OCI_CREATING) {
		bool creating = s.status == BERTH_OCI_CREATING;
		berth_oci_state_free(&s);
		return berth_err_status(err, 0, 1, "container not running: `%s` %s", id,
					creating ? "is being created" : "has stopped");
	}
	if (sig == SIGSTOP || sig == SIGCONT) {
		/* SIGSTOP cannot be caught, so not forwarded: it would stop the
		 * supervisor.  Both go to every process of the container. */
		pid_t pid1 = s.sandbox_pid;
		unsigned long long start1 = s.sandbox_start;
		berth_oci_state_free(&s);
		return signal_all(id, pid1, start1, sig, err);
	}
	pfd = pidfd_of(s.pid, s.pid_start);
	berth_oci_state_free(&s);
	if (pfd < 0 || syscall(SYS_pidfd_send_signal, pfd, sig, NULL, 0) < 0) {
		if (errno == ESRCH)
			return berth_err_status(err, 0, 1, "container not running: `%s` has stopped", id);
		return berth_err(err, errno, "cannot signal container `%s`", id);
	}
	return 0;
}

/* Wait until @pid (started at @start) is gone, at most @ms. */
static void wait_gone(pid_t pid, unsigned long long start, int ms)
{
	cleanup_close int fd = pidfd_of(pid, start);
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int64_t deadline = berth_now_ms() + ms;

	if (fd < 0)
		return;
	/* readable once it exited; a zombie its parent has not reaped yet is
	 * gone as far as the container goes */
	while (berth_oci_alive(pid, start) && berth_now_ms() < deadline)
		if (poll(&p, 1, 50) < 0 && errno != EINTR)
			break;
}

int berth_oci_delete(const struct berth_oci_ctx *c, const char *id, bool force, struct berth_error *err)
{
	cleanup_close int rootfd = -1, dfd = -1;
	struct berth_oci_state s;

	if (open_state(c, id, &rootfd, &s, err) < 0) {
		if (force && err->errnum == ENOENT) {
			berth_err_clear(err);
			return 0;
		}
		return -1;
	}
	/* one delete at a time; a `create` still running is waited for */
	dfd = openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd >= 0 && flock(dfd, LOCK_EX) == 0 && s.status == BERTH_OCI_CREATING) {
		berth_oci_state_free(&s);
		if (berth_oci_state_read(rootfd, id, &s, err) < 0) {
			if (!force || err->errnum != ENOENT)
				return -1;
			berth_err_clear(err); /* the `create` failed and took its directory */
			return 0;
		}
	}
	if (s.status == BERTH_OCI_RUNNING && !force) {
		berth_oci_state_free(&s);
		berth_err_status(err, 0, 1, "cannot delete container `%s` that is not stopped: running", id);
		return berth_err_hint(err, "stop it first (`berth oci kill %s KILL`), or give --force", id);
	}
	if (s.status == BERTH_OCI_RUNNING || s.status == BERTH_OCI_CREATED) {
		/* a created container has not run: it goes without --force, as
		 * runc's does */
		cleanup_close int pfd = pidfd_of(s.pid, s.pid_start);
		if (pfd >= 0)
			syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0);
		wait_gone(s.pid, s.pid_start, GONE_WAIT_MS);
	}
	/* the sandbox dies with its supervisor (PDEATHSIG): gone before the
	 * state is */
	wait_gone(s.sandbox_pid, s.sandbox_start, GONE_WAIT_MS);
	/* the engine's cgroup the supervisor joined (runc removes it here too) */
	if (json_is_string(json_object_get(s.doc, "cgroups_path")))
		berth_oci_cgroup_remove(json_string_value(json_object_get(s.doc, "cgroups_path")), &c->log,
					id);
	berth_oci_state_free(&s);
	{
		char path[PATH_MAX];
		if (container_dir(c, rootfd, id, path, sizeof path) < 0)
			return berth_err(err, ENAMETOOLONG, "cannot remove container `%s`", id);
		if (berth_rmtree(path, NULL, err) < 0)
			return -1;
	}
	return 0;
}

/* ---------------------------------------------------------- ps */

/* Every process whose parent chain reaches @top (and @top itself). */
static json_t *descendants(pid_t top)
{
	json_t *out = json_array();
	size_t cap = 256, n = 0;
	pid_t(*pp)[2] = malloc(cap * sizeof *pp); /* pid, ppid */
	DIR *d = opendir("/proc");
	struct dirent *e;

	if (out == NULL || pp == NULL || d == NULL) {
		free(pp);
		if (d != NULL)
			closedir(d);
		return out;
	}
	while ((e = readdir(d)) != NULL) {
		char path[64], buf[512], *p;
		int fd;
		ssize_t r;
		pid_t pid = (pid_t)atoi(e->d_name), ppid;
		if (pid <= 0)
			continue;
		snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		r = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (r <= 0)
			continue;
		buf[r] = '\0';
		p = strrchr(buf, ')');
		if (p == NULL || sscanf(p + 2, "%*c %d", &ppid) != 1)
			continue;
		if (n == cap) {
			pid_t(*v)[2] = realloc(pp, 2 * cap * sizeof *pp);
			if (v == NULL)
				break;
			pp = v;
			cap *= 2;
		}
		pp[n][0] = pid;
		pp[n][1] = ppid;
		n++;
	}
	closedir(d);
	/* breadth first from @top; /proc lists in ascending order */
	json_array_append_new(out, json_integer(top));
	for (size_t k = 0; k < json_array_size(out); k++) {
		pid_t parent = (pid_t)json_integer_value(json_array_get(out, k));
		for (size_t i = 0; i < n; i++)
			if (pp[i][1] == parent)
				json_array_append_new(out, json_integer(pp[i][0]));
	}
	free(pp);
	return out;
}

static int by_pid(const void *a, const void *b)
{
	json_int_t x = json_integer_value(*(json_t *const *)a), y = json_integer_value(*(json_t *const *)b);

	return x < y ? -1 : x > y;
}

int berth_oci_ps(const struct berth_oci_ctx *c, const char *id, json_t **out, struct berth_error *err)
{
	cleanup_close int rootfd = -1;
	struct berth_oci_state s;
	json_t *all = NULL;
	json_t **v;
	size_t n;

	if (open_state(c, id, &rootfd, &s, err) < 0)
		return -1;
	*out = json_array();
	if (*out == NULL) {
		berth_oci_state_free(&s);
		return berth_err(err, ENOMEM, "out of memory");
	}
	/* the supervisor first: the pid the engine knows the task by */
	if (s.status == BERTH_OCI_CREATED || s.status == BERTH_OCI_RUNNING)
		json_array_append_new(*out, json_integer(s.pid));
	if (s.status == BERTH_OCI_RUNNING && berth_oci_alive(s.sandbox_pid, s.sandbox_start))
		all = descendants(s.sandbox_pid);
	berth_oci_state_free(&s);
	n = json_array_size(all);
	if (n == 0) {
		json_decref(all);
		return 0;
	}
	if ((v = calloc(n, sizeof *v)) == NULL) {
		json_decref(all);
		json_decref(*out);
		*out = NULL;
		return berth_err(err, ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		v[i] = json_array_get(all, i);
	qsort(v, n, sizeof *v, by_pid);
	for (size_t i = 0; i < n; i++)
		json_array_append(*out, v[i]);
	free(v);
	json_decref(all);
	return 0;
}
