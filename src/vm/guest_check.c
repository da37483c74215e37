/* SPDX-License-Identifier: MIT */
/*
 * guest_check.c - the installed guest, verified before every boot
 * (docs/vm.md, "What is verified, and when"): src/vm/install.h's
 * berth_vm_verify() on berth_vm_dir(), then each of the two files qemu
 * boots read once more into a sealed memfd whose bytes are hashed as they
 * are copied and must be the verified ones.  qemu is given those memfds
 * (/proc/self/fd/N), never the paths: a file replaced or rewritten in the
 * guest directory after the check is not what boots.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/sha256.h"
#include "install.h"
#include "vm_int.h"

/* The largest file copied: the pinned vmlinuz is 11 MiB, an initramfs a
 * few (the static init and three modules). */
#define GUEST_FILE_MAX (256ULL << 20)

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* @path's bytes in a new sealed memfd named @name, their sha256 @want.
 * Returns the memfd (close-on-exec), or -1 with @err (status 125). */
static int sealed_copy(const char *path, const char *name, const char *want, struct berth_error *err)
{
	cleanup_close int in = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	cleanup_close int mfd = -1;
	struct berth_sha256 *c;
	struct stat st;
	char buf[65536], got[65];
	ssize_t n;

	if (in < 0)
		return berth_err(err, errno, "cannot open `%s`", path);
	if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode) || (unsigned long long)st.st_size > GUEST_FILE_MAX) {
		berth_err(err, 0, "`%s` is not a regular file of at most %llu MiB", path,
			  GUEST_FILE_MAX >> 20);
		return berth_err_hint(err, "run `berth vm install` again");
	}
	if ((mfd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING)) < 0)
		return berth_err(err, errno, "memfd_create");
	if ((c = berth_sha256_new(err)) == NULL)
		return -1;
	while ((n = read(in, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || berth_sha256_update(c, buf, (size_t)n) < 0 ||
		    write_all(mfd, buf, (size_t)n) < 0) {
			int e = errno;
			berth_sha256_final(c, got, err);
			return berth_err(err, e, "cannot copy `%s` for the boot", path);
		}
	}
	if (berth_sha256_final(c, got, err) < 0)
		return -1;
	if (strcmp(got, want) != 0) {
		berth_err(err, 0, "`%s` changed after it was verified: its sha256 is %s, not %s", path, got,
			  want);
		return berth_err_hint(err, "run `berth vm install` again, and let nothing else write the VM "
					   "directory");
	}
	/* nothing may change them now: not this process, not qemu */
	if (fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		return berth_err(err, errno, "cannot seal the copy of `%s`", path);
	return steal_fd(&mfd);
}

int berth_vm_guest_find(struct vm_guest *g, struct berth_error *err)
{
	struct berth_vm_guest v;

	g->kernel_fd = g->initrd_fd = -1;
	if (berth_vm_verify(NULL, &v, err) < 0)
		return -1;
	snprintf(g->dir, sizeof g->dir, "%s", v.dir);
	snprintf(g->kernel, sizeof g->kernel, "%s", v.vmlinuz);
	snprintf(g->initrd, sizeof g->initrd, "%s", v.initramfs);
	snprintf(g->kernel_sha256, sizeof g->kernel_sha256, "%s", v.kernel_sha256);
	snprintf(g->initramfs_sha256, sizeof g->initramfs_sha256, "%s", v.initramfs_sha256);
	return 0;
}

int berth_vm_guest_open(struct vm_guest *g, struct berth_error *err)
{
	if ((g->kernel_fd = sealed_copy(g->kernel, "berth-vmlinuz", g->kernel_sha256, err)) < 0)
		return -1;
	if ((g->initrd_fd = sealed_copy(g->initrd, "berth-initramfs", g->initramfs_sha256, err)) < 0) {
		close(g->kernel_fd);
		g->kernel_fd = -1;
		return -1;
	}
	return 0;
}

void berth_vm_guest_close(struct vm_guest *g)
{
	if (g->kernel_fd >= 0)
		close(g->kernel_fd);
	if (g->initrd_fd >= 0)
		close(g->initrd_fd);
	g->kernel_fd = g->initrd_fd = -1;
}
