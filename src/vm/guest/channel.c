/* SPDX-License-Identifier: MIT */
/*
 * channel.c - the guest's side of the channel's first frames (src/vm/proto.h):
 * the port named berth.0, HELLO, POLICY and START, the checks that the
 * policy is the host's to the byte, and ERROR.
 */
#include "guest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../../util/cleanup.h"
#include "../../util/sha256.h"

/* The virtio-serial port whose name is berth.0: /sys/class/virtio-ports/
 * vportNpM/name, opened as /dev/vportNpM (devtmpfs names it so). */
int guest_open_port(struct berth_error *err)
{
	cleanup_closedir DIR *d = NULL;
	struct dirent *de;

	/* The port appears when virtio-serial has probed it, and its /dev node
	 * when devtmpfs's thread has made it (both asynchronous: on a loaded
	 * host under TCG, seconds after init starts): give them 30 s (the host
	 * waits 60 s for HELLO), retrying a node not there yet. */
	for (int tries = 0; tries < 300; tries++) {
		d = opendir("/sys/class/virtio-ports");
		while (d != NULL && (de = readdir(d)) != NULL) {
			char path[512], name[64] = "";
			cleanup_close int nfd = -1;
			ssize_t n;

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof path, "/sys/class/virtio-ports/%s/name", de->d_name);
			nfd = open(path, O_RDONLY | O_CLOEXEC);
			n = nfd >= 0 ? read(nfd, name, sizeof name - 1) : -1;
			if (n <= 0)
				continue;
			name[strcspn(name, "\n")] = '\0';
			if (strcmp(name, GUEST_PORT_NAME) != 0)
				continue;
			snprintf(path, sizeof path, "/dev/%s", de->d_name);
			int fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
			if (fd < 0 && errno == ENOENT && tries + 1 < 300)
				break; /* the node is not made yet */
			if (fd < 0)
				return berth_err(err, errno, "cannot open the channel `%s`", path);
			return fd;
		}
		if (d != NULL) {
			closedir(d);
			d = NULL;
		}
		usleep(100000);
	}
	berth_err(err, 0, "no virtio-serial port named `%s`", GUEST_PORT_NAME);
	return berth_err_hint(err, "qemu needs `-device virtserialport,chardev=...,name=berth.0`");
}

/* HELLO: written first, as it blocks until the host has the port open
 * (a read before that sees end of file). */
int guest_hello(int fd, struct berth_error *err)
{
	struct utsname u;
	cleanup_free char *s = NULL;
	json_t *j;

	if (uname(&u) < 0)
		return berth_err(err, errno, "uname");
	j = json_pack("{s:i, s:s, s:i}", "proto", BERTH_VM_PROTO_VERSION, "kernel", u.release, "landlock_abi",
		      guest_landlock_abi());
	s = j != NULL ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(j);
	if (s == NULL)
		return berth_err(err, ENOMEM, "cannot make HELLO");
	return berth_vm_write(fd, BERTH_VM_HELLO, 0, s, strlen(s), err);
}

static char **strv_add(char ***v, size_t n, const char *s)
{
	char **nv = realloc(*v, (n + 2) * sizeof *nv);

	if (nv == NULL)
		return NULL;
	*v = nv;
	nv[n] = strdup(s);
	nv[n + 1] = NULL;
	return nv[n] != NULL ? nv : NULL;
}

static int copy_str(const json_t *o, const char *key, char *out, size_t size, struct berth_error *err)
{
	const char *s = json_string_value(json_object_get(o, key));

	if (s == NULL || (size_t)snprintf(out, size, "%s", s) >= size)
		return berth_err(err, 0, "START: `%s` is missing, not a string or too long", key);
	return 0;
}

static int opt_str(const json_t *o, const char *key, char **out, struct berth_error *err)
{
	json_t *v = json_object_get(o, key);

	if (v == NULL)
		return 0;
	if (!json_is_string(v))
		return berth_err(err, 0, "START: `%s` is not a string", key);
	*out = strdup(json_string_value(v));
	return *out == NULL ? berth_err(err, ENOMEM, "START") : 0;
}

/* START's JSON (guest.h's struct guest_start). */
static int parse_start(const unsigned char *b, size_t len, struct guest_start *st, struct berth_error *err)
{
	json_error_t je;
	json_t *j = json_loadb((const char *)b, len, JSON_REJECT_DUPLICATES, &je), *env, *e;
	json_int_t uid, gid, rows, cols;
	size_t i;
	int rc = -1;

	if (j == NULL || !json_is_object(j)) {
		berth_err(err, 0, "START is not a JSON object: %s", j == NULL ? je.text : "another value");
		goto out;
	}
	if (copy_str(j, "digest", st->digest, sizeof st->digest, err) < 0 ||
	    copy_str(j, "run_id", st->run_id, sizeof st->run_id, err) < 0 ||
	    copy_str(j, "user", st->user, sizeof st->user, err) < 0 ||
	    copy_str(j, "home", st->home, sizeof st->home, err) < 0 ||
	    opt_str(j, "evidence_dir", &st->evidence_dir, err) < 0 ||
	    opt_str(j, "container_seccomp", &st->seccomp, err) < 0 ||
	    opt_str(j, "term", &st->term, err) < 0 || opt_str(j, "lang", &st->lang, err) < 0)
		goto out;
	uid = json_integer_value(json_object_get(j, "uid"));
	gid = json_integer_value(json_object_get(j, "gid"));
	rows = json_integer_value(json_object_get(j, "rows"));
	cols = json_integer_value(json_object_get(j, "cols"));
	/* U is never root: the runtime inside runs as an unprivileged caller */
	if (!json_is_integer(json_object_get(j, "uid")) || uid <= 0 || uid > 0x7fffffff || gid < 0 ||
	    gid > 0x7fffffff || rows < 0 || rows > 0xffff || cols < 0 || cols > 0xffff) {
		berth_err(err, 0, "START: `uid`, `gid`, `rows` or `cols` is out of range (uid 0 is refused)");
		goto out;
	}
	st->uid = (uint32_t)uid;
	st->gid = (uint32_t)gid;
	st->rows = (unsigned short)rows;
	st->cols = (unsigned short)cols;
	st->tty = json_is_true(json_object_get(j, "tty"));
	st->rpc = json_is_true(json_object_get(j, "rpc"));
	st->memory_set = json_is_true(json_object_get(j, "memory_set"));
	st->cpus_set = json_is_true(json_object_get(j, "cpus_set"));
	st->pids_set = json_is_true(json_object_get(j, "pids_set"));
	if (json_integer_value(json_object_get(j, "home_files")) != (json_int_t)st->n_home_files) {
		berth_err(err, 0, "START says %lld seeded home files, and %zu HOME frames came",
			  (long long)json_integer_value(json_object_get(j, "home_files")), st->n_home_files);
		goto out;
	}
	env = json_object_get(j, "env");
	if (env != NULL && !json_is_array(env)) {
		berth_err(err, 0, "START: `env` is not an array");
		goto out;
	}
	json_array_foreach(env, i, e) {
		const char *n = json_string_value(json_object_get(e, "name"));
		const char *v = json_string_value(json_object_get(e, "value"));
		if (n == NULL || v == NULL) {
			berth_err(err, 0, "START: `env[%zu]` is not {\"name\":..,\"value\":..}", i);
			goto out;
		}
		if (strv_add(&st->env_names, st->n_env, n) == NULL ||
		    strv_add(&st->env_values, st->n_env, v) == NULL) {
			berth_err(err, ENOMEM, "START");
			goto out;
		}
		st->n_env++;
	}
	rc = 0;
out:
	json_decref(j);
	return rc;
}

/* The next frame, which must be of @type. */
static int expect(int fd, struct berth_vm_reader *rd, uint16_t type, const char *what,
		  struct berth_vm_frame *f, struct berth_error *err)
{
	if (berth_vm_read(fd, rd, f, err) <= 0)
		return berth_err_wrap(err, "waiting for %s", what);
	if (f->type != type)
		return berth_err(err, 0, "the host sent a frame of type %u where %s was due", f->type, what);
	return 0;
}

/* A HOME path: relative, no empty, `.` or `..` component (the host's
 * profile checked it too; the namespace runtime opens each component
 * O_NOFOLLOW in the fresh home). */
static bool home_path_ok(const char *p, size_t n)
{
	if (n == 0 || n >= PATH_MAX || p[0] == '/')
		return false;
	for (const char *c = p; c < p + n;) {
		const char *e = memchr(c, '/', (size_t)(p + n - c));
		size_t k = e != NULL ? (size_t)(e - c) : (size_t)(p + n - c);
		if (k == 0 || (k == 1 && c[0] == '.') || (k == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c += k + 1;
		if (e != NULL && c == p + n)
			return false; /* a trailing slash */
	}
	return true;
}

/* One HOME frame (proto.h) into @st. */
static int add_home(const struct berth_vm_frame *f, struct guest_start *st, struct berth_error *err)
{
	const unsigned char *nul = memchr(f->payload, '\0', f->len);
	size_t pl = nul != NULL ? (size_t)(nul - f->payload) : 0;
	struct berth_home_file *more, *h;

	if (nul == NULL || !home_path_ok((const char *)f->payload, pl))
		return berth_err(err, 0,
				 "HOME: the path is missing, absolute or has an empty, `.` or `..` "
				 "component");
	if (st->n_home_files >= BERTH_VM_HOME_FILES_MAX)
		return berth_err(err, 0, "HOME: more than %d files", BERTH_VM_HOME_FILES_MAX);
	if ((more = realloc(st->home_files, (st->n_home_files + 1) * sizeof *more)) == NULL)
		return berth_err(err, ENOMEM, "HOME");
	st->home_files = more;
	h = &st->home_files[st->n_home_files];
	h->len = f->len - pl - 1;
	h->path = strndup((const char *)f->payload, pl);
	h->data = malloc(h->len + 1);
	if (h->path == NULL || h->data == NULL) {
		free((char *)h->path);
		free((char *)h->data);
		return berth_err(err, ENOMEM, "HOME");
	}
	memcpy((char *)h->data, nul + 1, h->len);
	st->n_home_files++;
	return 0;
}

int guest_receive(int fd, struct berth_vm_reader *rd, unsigned char **policy, size_t *policy_len,
		  struct guest_start *st, struct berth_error *err)
{
	struct berth_vm_frame f;

	if (expect(fd, rd, BERTH_VM_POLICY, "POLICY", &f, err) < 0)
		return -1;
	*policy = malloc(f.len + 1);
	if (*policy == NULL)
		return berth_err(err, ENOMEM, "POLICY");
	memcpy(*policy, f.payload, f.len);
	(*policy)[f.len] = '\0';
	*policy_len = f.len;
	for (;;) {
		if (berth_vm_read(fd, rd, &f, err) <= 0)
			return berth_err_wrap(err, "waiting for START");
		if (f.type == BERTH_VM_START)
			return parse_start(f.payload, f.len, st, err);
		if (f.type != BERTH_VM_HOME)
			return berth_err(
			    err, 0, "the host sent a frame of type %u where HOME or START was due", f.type);
		if (add_home(&f, st, err) < 0)
			return -1;
	}
}

/* The policy's env values from START, by name: each entry needs one. */
static int fill_env(struct berth_policy *p, const struct guest_start *st, struct berth_error *err)
{
	for (size_t i = 0; i < p->n_env; i++) {
		size_t k = 0;

		while (k < st->n_env && strcmp(st->env_names[k], p->env[i].name) != 0)
			k++;
		if (k == st->n_env)
			return berth_err(err, 0, "START holds no value for the policy's variable `%s`",
					 p->env[i].name);
		p->env[i].value = strdup(st->env_values[k]);
		if (p->env[i].value == NULL)
			return berth_err(err, ENOMEM, "START");
	}
	return 0;
}

/* The parts the canonical JSON does not hold, from START (policy.h,
 * berth_policy_from_json). */
static int fill_out_of_band(struct berth_policy *p, const struct guest_start *st, struct berth_error *err)
{
	if (fill_env(p, st, err) < 0)
		return -1;
	p->memory_set = st->memory_set;
	p->cpus_set = st->cpus_set;
	p->pids_set = st->pids_set;
	if (st->evidence_dir != NULL && (p->evidence_dir = strdup(st->evidence_dir)) == NULL)
		return berth_err(err, ENOMEM, "START");
	if (st->seccomp != NULL && p->container != NULL &&
	    (p->container->seccomp = strdup(st->seccomp)) == NULL)
		return berth_err(err, ENOMEM, "START");
	return 0;
}

int guest_policy(const unsigned char *bytes, size_t len, const struct guest_start *st, struct berth_policy *p,
		 struct berth_error *err)
{
	char hex[65];
	cleanup_free char *again = NULL;

	berth_policy_init(p);
	if (berth_sha256_hex(bytes, len, hex, err) < 0)
		return -1;
	if (strcmp(hex, st->digest) != 0) {
		berth_err(err, 0, "the policy's sha256 is `%s`, and START says `%s`", hex, st->digest);
		return berth_err_hint(err, "the channel corrupted the policy, or the host sent another one");
	}
	if (berth_policy_from_json((const char *)bytes, len, p, err) < 0 || fill_out_of_band(p, st, err) < 0)
		return -1;
	/* The very policy the host compiled: its serialisation here is the
	 * host's to the byte (and so is its digest), or nothing runs. */
	again = berth_policy_to_json(p, false, err);
	if (again == NULL)
		return -1;
	if (strlen(again) != len || memcmp(again, bytes, len) != 0) {
		berth_err(err, 0, "the policy read in the guest serialises to other bytes than the host's");
		return berth_err_hint(err,
				      "the host and the guest init must be the same berth build; a policy "
				      "with --evidence or a container's seccomp profile needs them in START");
	}
	/* berth_policy_validate is the runtime's, in the worker: it checks
	 * --nofile against the limits the worker has raised first. */
	return 0;
}

void guest_send_error(int fd, const struct berth_error *e)
{
	struct berth_error ignored = {0};
	json_t *j = json_pack("{s:i, s:s, s:s}", "status", e->status != 0 ? e->status : BERTH_EXIT_INTERNAL,
			      "message", e->msg, "hint", e->hint);
	char *s = j != NULL ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

	guest_log("error: %s%s%s", e->msg, e->hint[0] != '\0' ? "; hint: " : "", e->hint);
	if (fd >= 0 && s != NULL)
		berth_vm_write(fd, BERTH_VM_ERROR, 0, s, strlen(s), &ignored);
	free(s);
	json_decref(j);
}

void guest_start_free(struct guest_start *st)
{
	for (size_t i = 0; i < st->n_env; i++) {
		free(st->env_names[i]);
		if (st->env_values[i] != NULL)
			explicit_bzero(st->env_values[i], strlen(st->env_values[i]));
		free(st->env_values[i]);
	}
	free(st->env_names);
	free(st->env_values);
	free(st->evidence_dir);
	free(st->seccomp);
	free(st->term);
	free(st->lang);
	for (size_t i = 0; i < st->n_home_files; i++) {
		free((char *)st->home_files[i].path);
		free((char *)st->home_files[i].data);
	}
	free(st->home_files);
	memset(st, 0, sizeof *st);
}
