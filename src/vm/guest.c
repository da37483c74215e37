/* SPDX-License-Identifier: MIT */
/*
 * guest.c - where the installed guest is and the check before each boot
 * (install.h: berth_vm_dir, berth_vm_init_path, berth_vm_verify).
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/rundir.h"
#include "../util/sha256.h"
#include "install.h"
#include "install_int.h"
#include "pins.h"

#define HINT_INSTALL "run `berth vm install`"
#define GUEST_JSON_MAX (64u << 10) /* the one berth writes is under 2 KiB */

int berth_vm_check_path(const char *what, const char *path, bool absolute, struct berth_error *err)
{
	size_t len = strlen(path);

	/* room for the names berth puts under it: silently cut, it would be another path */
	if (len > BERTH_VM_PATH_MAX) {
		berth_err_status(err, ENAMETOOLONG, BERTH_EXIT_USAGE,
				 "%s `%.64s...` is too long: %zu bytes, at most %d", what, path, len,
				 BERTH_VM_PATH_MAX);
		return berth_err_hint(err, "give a shorter path");
	}
	if (absolute && path[0] != '/') {
		berth_usage_err(err, "%s `%s` is not an absolute path", what, path);
		return berth_err_hint(err, "give it from `/` (e.g. \"$PWD/%s\")", path);
	}
	for (const char *c = path; *c != '\0';) {
		const char *e = strchrnul(c, '/');
		size_t n = (size_t)(e - c);
		bool last = *e == '\0' || e[1] == '\0';
		if ((n == 0 && c != path && !last) || (n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.')) {
			berth_usage_err(err, "%s `%s` has an empty, `.` or `..` component", what, path);
			return berth_err_hint(err, "give the path without `//`, `/./` or `/../`");
		}
		c = *e == '\0' ? e : e + 1;
	}
	return 0;
}

int berth_vm_dir(char *buf, size_t len, struct berth_error *err)
{
	const char *env = getenv("BERTH_VM_DIR");

	if (env != NULL && *env != '\0') {
		if (berth_vm_check_path("BERTH_VM_DIR", env, true, err) < 0)
			return -1;
		if ((size_t)snprintf(buf, len, "%s", env) >= len)
			return berth_err(err, ENAMETOOLONG, "BERTH_VM_DIR `%s` is too long", env);
		return 0;
	}
	if (berth_state_path("vm", buf, len) < 0) {
		if (errno == ENAMETOOLONG)
			return berth_err(err, ENAMETOOLONG, "the VM directory's path is too long");
		berth_usage_err(err,
				"no directory for the VM guest: neither XDG_STATE_HOME nor a home is set");
		return berth_err_hint(err, "set BERTH_VM_DIR to an absolute path");
	}
	return 0;
}

int berth_vm_init_path(char *buf, size_t len, struct berth_error *err)
{
	const char *env = getenv("BERTH_VMINIT");
	char self[PATH_MAX];
	ssize_t n;

	if (env != NULL && *env != '\0') {
		if ((size_t)snprintf(buf, len, "%s", env) >= len)
			return berth_err(err, ENAMETOOLONG, "BERTH_VMINIT `%s` is too long", env);
		return 0;
	}
	n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n < 0)
		return berth_err(err, errno, "cannot read `/proc/self/exe`");
	self[n] = '\0';
	if ((size_t)snprintf(buf, len, "%s/berth-vminit", dirname(self)) >= len)
		return berth_err(err, ENAMETOOLONG, "the path of berth-vminit is too long");
	return 0;
}

int berth_vm_open_file(const char *path, uint64_t max, struct stat *st, struct berth_error *err)
{
	/*
	 * O_NONBLOCK so that a FIFO (or a device) put where a file belongs
	 * cannot block the open; O_NOFOLLOW so that no link is followed; the
	 * type and size are judged on the descriptor before a byte is read.
	 */
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	int fl;

	if (fd < 0 && errno == ELOOP) {
		berth_err(err, ELOOP, "`%s` is a symbolic link, not a regular file", path);
		return berth_err_hint(err, "remove it, then run `berth vm install` again");
	}
	if (fd < 0 || fstat(fd, st) < 0)
		return berth_err(err, errno, "cannot read `%s`", path);
	if (!S_ISREG(st->st_mode)) {
		berth_err(err, EINVAL, "`%s` is not a regular file", path);
		return berth_err_hint(err, "remove it, then run `berth vm install` again");
	}
	if ((uint64_t)st->st_size > max)
		return berth_err(err, EFBIG, "`%s` is too large: %llu bytes, at most %llu", path,
				 (unsigned long long)st->st_size, (unsigned long long)max);
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		return berth_err(err, errno, "cannot read `%s`", path);
	return steal_fd(&fd);
}

int vm_read_file(const char *path, size_t max, char **data, size_t *len, struct berth_error *err)
{
	struct stat st;
	cleanup_close int fd = berth_vm_open_file(path, max, &st, err);
	cleanup_free char *buf = NULL;
	size_t got = 0;

	if (fd < 0)
		return -1;
	buf = malloc((size_t)st.st_size + 1);
	if (buf == NULL)
		return berth_err(err, ENOMEM, "cannot read `%s`", path);
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return berth_err(err, errno, "cannot read `%s`", path);
		if (n == 0)
			break; /* shrank while read: what is there is what is hashed */
		got += (size_t)n;
	}
	buf[got] = '\0';
	*len = got;
	*data = steal_pointer(&buf);
	return 0;
}

int berth_vm_sha256_file(const char *path, char hex[65], size_t *size, struct berth_error *err)
{
	struct stat st;
	cleanup_close int fd = berth_vm_open_file(path, BERTH_VM_FILE_MAX, &st, err);
	struct berth_sha256 *c = NULL;
	char chunk[1 << 16];
	size_t total = 0;
	ssize_t n;

	if (fd < 0)
		return -1;
	c = berth_sha256_new(err);
	if (c == NULL)
		return -1;
	/* never more than fstat said: a file that grows while hashed is not read on */
	while (total < (size_t)st.st_size &&
	       (n = read(fd, chunk,
			 sizeof chunk < (size_t)st.st_size - total ? sizeof chunk
								   : (size_t)st.st_size - total)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			berth_sha256_final(c, hex, err);
			return berth_err(err, e, "cannot read `%s`", path);
		}
		if (berth_sha256_update(c, chunk, (size_t)n) < 0)
			break; /* the final call says why */
		total += (size_t)n;
	}
	if (berth_sha256_final(c, hex, err) < 0)
		return -1;
	if (size != NULL)
		*size = total;
	return 0;
}

/* The string member @key of the object @o, or NULL. */
static const char *str_at(json_t *o, const char *obj, const char *key)
{
	json_t *v = json_object_get(json_object_get(o, obj), key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* guest.json's kernel matches the compiled-in pin; -1 with @err naming the field. */
static int check_pin(const char *dir, json_t *root, struct berth_error *err)
{
	static const struct {
		const char *key, *want;
	} fields[] = {
	    {"package", BERTH_VM_KERNEL_PACKAGE},
	    {"version", BERTH_VM_KERNEL_VERSION},
	    {"deb_sha256", BERTH_VM_DEB_SHA256},
	    {"sha256", BERTH_VM_VMLINUZ_SHA256},
	};

	for (size_t i = 0; i < BERTH_ARRAY_SIZE(fields); i++) {
		const char *have = str_at(root, "kernel", fields[i].key);
		if (have == NULL) {
			berth_err(err, EINVAL, "`%s/guest.json` is not a guest description: no kernel.%s",
				  dir, fields[i].key);
			return berth_err_hint(err, HINT_INSTALL);
		}
		if (strcmp(have, fields[i].want) != 0) {
			berth_err(
			    err, EINVAL,
			    "the guest in `%s` is not the pinned one: kernel.%s is `%s`, berth pins `%s`",
			    dir, fields[i].key, have, fields[i].want);
			return berth_err_hint(err, HINT_INSTALL);
		}
	}
	return 0;
}

/* @path's sha256 is @want, else a "damaged" error naming it. */
static int check_file(const char *path, const char *want, struct berth_error *err)
{
	char have[65];

	if (berth_vm_sha256_file(path, have, NULL, err) < 0)
		return berth_err_hint(err, HINT_INSTALL);
	if (strcmp(have, want) != 0) {
		berth_err(err, EBADMSG, "`%s` is damaged: sha256 %s, want %s", path, have, want);
		return berth_err_hint(err, HINT_INSTALL);
	}
	return 0;
}

static json_t *read_guest_json(const char *dir, struct berth_error *err)
{
	char path[PATH_MAX];
	cleanup_free char *text = NULL;
	size_t len = 0;
	json_error_t je;
	json_t *root;

	if ((size_t)snprintf(path, sizeof path, "%s/guest.json", dir) >= sizeof path) {
		berth_err(err, ENAMETOOLONG, "the VM directory `%s` is too long", dir);
		return NULL;
	}
	if (vm_read_file(path, GUEST_JSON_MAX, &text, &len, err) < 0) {
		if (err->errnum == ENOENT)
			berth_err(err, ENOENT, "no guest installed in `%s`", dir);
		if (err->errnum == EACCES || err->errnum == EPERM)
			berth_err_hint(err, "check the permissions of `%s` (it is not yours to read?)", dir);
		if (err->hint[0] == '\0')
			berth_err_hint(err, HINT_INSTALL);
		return NULL;
	}
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (root != NULL && json_is_object(root))
		return root;
	json_decref(root);
	berth_err(err, EINVAL, "`%s` is not a guest description: %s", path,
		  root != NULL ? "not a JSON object" : je.text);
	berth_err_hint(err, HINT_INSTALL);
	return NULL;
}

int berth_vm_verify(const char *dir, struct berth_vm_guest *g, struct berth_error *err)
{
	struct berth_vm_guest local;
	json_t *root = NULL;
	const char *ir, *init, *init_path;
	int r = -1;

	if (g == NULL)
		g = &local;
	memset(g, 0, sizeof *g);
	if (dir == NULL ? berth_vm_dir(g->dir, sizeof g->dir, err) < 0
			: (size_t)snprintf(g->dir, sizeof g->dir, "%s", dir) >= sizeof g->dir)
		return dir == NULL ? -1
				   : berth_err(err, ENAMETOOLONG, "the VM directory `%s` is too long", dir);
	if ((size_t)snprintf(g->vmlinuz, sizeof g->vmlinuz, "%s/vmlinuz", g->dir) >= sizeof g->vmlinuz ||
	    (size_t)snprintf(g->initramfs, sizeof g->initramfs, "%s/initramfs.cpio", g->dir) >=
		sizeof g->initramfs)
		return berth_err(err, ENAMETOOLONG, "the VM directory `%s` is too long", g->dir);
	root = read_guest_json(g->dir, err);
	if (root == NULL)
		return -1;
	ir = str_at(root, "initramfs", "sha256");
	init = str_at(root, "init", "sha256");
	init_path = str_at(root, "init", "path");
	if (check_pin(g->dir, root, err) < 0)
		goto out;
	if (ir == NULL || strlen(ir) != 64) {
		berth_err(err, EINVAL, "`%s/guest.json` is not a guest description: no initramfs.sha256",
			  g->dir);
		berth_err_hint(err, HINT_INSTALL);
		goto out;
	}
	snprintf(g->kernel_sha256, sizeof g->kernel_sha256, "%s", BERTH_VM_VMLINUZ_SHA256);
	snprintf(g->initramfs_sha256, sizeof g->initramfs_sha256, "%s", ir);
	snprintf(g->init_sha256, sizeof g->init_sha256, "%s", init != NULL ? init : "");
	snprintf(g->init_path, sizeof g->init_path, "%s", init_path != NULL ? init_path : "");
	if (check_file(g->vmlinuz, BERTH_VM_VMLINUZ_SHA256, err) < 0 || check_file(g->initramfs, ir, err) < 0)
		goto out;
	r = 0;
out:
	json_decref(root);
	return r;
}
