/* SPDX-License-Identifier: MIT */
/*
 * install_int.h - the steps of berth_vm_install() that live in their own
 * files (install.c holds the linear function that calls them).
 */
#ifndef BERTH_VM_INSTALL_INT_H
#define BERTH_VM_INSTALL_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "../util/error.h"

/* The resolved options of one install. */
struct vm_install {
	char dir[PATH_MAX];     /* the VM directory */
	char parent[PATH_MAX];  /* the directory that holds it */
	char work[PATH_MAX];    /* PARENT/.vm-install.XXXXXX, private, removed at the end */
	char init[PATH_MAX];    /* the guest init */
	char cache[PATH_MAX];   /* the .deb cache directory, "" for none */
	char apt_dir[PATH_MAX]; /* where the apt sources are read */
	char deb[PATH_MAX];     /* WORK/kernel.deb once fetched and verified */
	bool from_cache;
	void (*progress)(void *ctx, const char *line);
	void *progress_ctx;
};

/* vm_say - a progress line (printf format) through @vi->progress. */
void vm_say(const struct vm_install *vi, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * vm_fetch_deb - the pinned .deb into @vi->deb (WORK/kernel.deb), its size
 * and sha256 checked against the pin: from @vi->cache when it holds
 * SHA256.deb (a bad one is refused, EBADMSG), else downloaded with apt-get
 * through a private configuration in WORK/apt (and then stored in the
 * cache).  Returns 0, or -1 with @err filled (install.h's errors of steps
 * 2 and 3).
 */
int vm_fetch_deb(struct vm_install *vi, struct berth_error *err);

/*
 * vm_read_file - the whole regular file @path (not followed if a link), at
 * most @max bytes, into a malloc'd *@data (*@len bytes).  Returns 0, or -1
 * with @err filled ("cannot read `PATH`", EFBIG when larger than @max).
 */
int vm_read_file(const char *path, size_t max, char **data, size_t *len, struct berth_error *err);

#endif
