/* SPDX-License-Identifier: MIT */
/*
 * guest_check.c - the installed guest, verified before every boot (docs/vm.md,
 * "Installed guest"): vmlinuz's and initramfs.cpio's sha256 must match
 * guest.json, and guest.json's kernel the pin compiled into berth.
 *
 * A stand-in, written against the shared contract, for src/vm/install.h's
 * berth_vm_dir() and berth_vm_verify() (the vm-install branch; not its
 * guest.c): once that is merged, berth_vm_guest_find() calls them and this
 * file's own checks go.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/rundir.h"
#include "../util/sha256.h"
#include "vm_int.h"

/* The kernel pin (src/vm/pins.h on the vm-install branch). */
#define PIN_KERNEL_PACKAGE "linux-image-6.12.117+deb13-cloud-amd64"
#define PIN_KERNEL_VERSION "6.12.117-1"
#define PIN_KERNEL_SHA256 "ed8f0dbdbefe3994093937f5ee934818ae902b88cb0b6bc423811c10d55b87b0"

static const char install_hint[] = "run `berth vm install` (it fetches and verifies the pinned guest)";

int berth_vm_dir_path(char *buf, size_t len, struct berth_error *err)
{
	const char *d = getenv("BERTH_VM_DIR"), *x = getenv("XDG_STATE_HOME"), *h = berth_home_dir();
	int n;

	if (d != NULL && d[0] == '/')
		n = snprintf(buf, len, "%s", d);
	else if (x != NULL && x[0] == '/')
		n = snprintf(buf, len, "%s/berth/vm", x);
	else if (h != NULL)
		n = snprintf(buf, len, "%s/.local/state/berth/vm", h);
	else
		return berth_err(err, 0,
				 "no VM directory: neither BERTH_VM_DIR, XDG_STATE_HOME nor a home is set");
	if (n < 0 || (size_t)n >= len)
		return berth_err(err, ENAMETOOLONG, "the VM directory's path is too long");
	return 0;
}

/* sha256 of the regular file @path (opened without following a link). */
static int file_sha256(const char *path, char hex[65], struct berth_error *err)
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct berth_sha256 *c;
	struct stat st;
	char buf[65536];
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		berth_err(err, fd < 0 ? errno : EINVAL,
			  "the guest file `%s` is missing or not a regular file", path);
		return berth_err_hint(err, "%s", install_hint);
	}
	if ((c = berth_sha256_new(err)) == NULL)
		return -1;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		berth_sha256_update(c, buf, (size_t)n);
	if (n < 0) {
		berth_sha256_final(c, hex, &(struct berth_error){0});
		return berth_err(err, errno, "cannot read `%s`", path);
	}
	return berth_sha256_final(c, hex, err);
}

static const char *jstr(json_t *o, const char *a, const char *b)
{
	return json_string_value(json_object_get(json_object_get(o, a), b));
}

static int check_file(const char *path, const char *want, struct berth_error *err)
{
	char hex[65];

	if (file_sha256(path, hex, err) < 0)
		return -1;
	if (want == NULL || strcmp(hex, want) != 0) {
		berth_err(err, 0, "the guest file `%s` does not match its guest.json (sha256 %s)", path, hex);
		return berth_err_hint(err, "%s", install_hint);
	}
	return 0;
}

int berth_vm_guest_find(struct vm_guest *g, struct berth_error *err)
{
	char path[PATH_MAX + 16];
	json_error_t je;
	json_t *j;
	int r = -1;

	if (berth_vm_dir_path(g->dir, sizeof g->dir, err) < 0)
		return -1;
	snprintf(path, sizeof path, "%s/guest.json", g->dir);
	j = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (j == NULL) {
		berth_err(err, 0, "no microVM guest is installed: `%s` cannot be read (%s)", path, je.text);
		return berth_err_hint(err, "%s", install_hint);
	}
	snprintf(g->kernel, sizeof g->kernel, "%s/vmlinuz", g->dir);
	snprintf(g->initrd, sizeof g->initrd, "%s/initramfs.cpio", g->dir);
	if (!json_is_object(j) || jstr(j, "kernel", "package") == NULL ||
	    strcmp(jstr(j, "kernel", "package"), PIN_KERNEL_PACKAGE) != 0 ||
	    jstr(j, "kernel", "version") == NULL ||
	    strcmp(jstr(j, "kernel", "version"), PIN_KERNEL_VERSION) != 0 ||
	    jstr(j, "kernel", "sha256") == NULL ||
	    strcmp(jstr(j, "kernel", "sha256"), PIN_KERNEL_SHA256) != 0) {
		berth_err(err, 0,
			  "the installed guest's kernel (`%s`) is not the one this berth pins (`%s` %s)",
			  path, PIN_KERNEL_PACKAGE, PIN_KERNEL_VERSION);
		berth_err_hint(err, "%s", install_hint);
	} else if (check_file(g->kernel, jstr(j, "kernel", "sha256"), err) == 0 &&
		   check_file(g->initrd, jstr(j, "initramfs", "sha256"), err) == 0) {
		r = 0;
	}
	json_decref(j);
	return r;
}
