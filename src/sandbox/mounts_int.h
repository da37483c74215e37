/* SPDX-License-Identifier: MIT */
/*
 * mounts_int.h - what mounts.c shares with review_layer.c (the --review
 * workspace): its mount helpers, all inside the sandbox's mount namespace
 * while the root is built.
 */
#ifndef BERTH_SANDBOX_MOUNTS_INT_H
#define BERTH_SANDBOX_MOUNTS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"
#include "mounts.h"

/* mount_setattr(2) of @set (MOUNT_ATTR_*) on @path, @recursive or not. */
int berth_mnt_set_attr(const char *path, uint64_t set, bool recursive, struct berth_error *err);
/* The path of the pinned target @fd (/proc/self/fd/N) in @buf. */
const char *berth_mnt_pinned_path(int fd, char *buf, size_t len);
/* move_mount(2) of the detached tree @tree onto the pinned target @tfd. */
int berth_mnt_attach_at(int tree, int tfd, const char *shown, struct berth_error *err);
/* A bind of the host's @path (@what, opened without following links below
 * @parent_fd when >= 0) onto the pinned target @tfd, with @attrs. */
int berth_mnt_bind_source(const char *what, const char *path, int parent_fd, int tfd, const char *shown,
			  uint64_t attrs, struct berth_error *err);

/* --review: /workspace (pinned as @tfd) as the overlay; review_layer.c. */
int berth_review_workspace(const struct berth_mount_plan *plan, int tfd, struct berth_error *err);

#endif
