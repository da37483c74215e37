/* SPDX-License-Identifier: MIT */
/*
 * review_layer.c - --review's /workspace (docs/review.md, "The layer"): an
 * overlay, made in the sandbox's user namespace, over the workspace as a
 * normal run mounts it, its upper layer a tmpfs of --review-size whose
 * descriptor goes to berth at sync 2.  Split out of mounts.c, which calls
 * berth_review_workspace() from its workspace().
 */

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "mounts.h"
#include "mounts_int.h"

#define REVIEW_LOWER "/review/lower"
#define REVIEW_LAYER "/review/layer"

/* The review layer: a tmpfs of @size bytes and @size/1024 inodes, made in the sandbox's user
 * namespace, attached at REVIEW_LAYER, holding upper/ (the workspace's
 * root's mode and owner, as the overlay shows it) and work/.  Returns its
 * mount descriptor, or -1 with @err filled. */
static int review_layer(uint64_t size, const struct stat *root, struct berth_error *err)
{
	cleanup_close int fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	cleanup_close int mfd = -1;
	char bytes[32], inodes[32];

	snprintf(bytes, sizeof bytes, "%llu", (unsigned long long)size);
	/* inodes bounded too, one per KiB: empty files take no block, and
	 * kernel memory for each (the default is half of RAM's pages) */
	snprintf(inodes, sizeof inodes, "%llu", (unsigned long long)(size / 1024));
	if (fs < 0 || syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", bytes, 0) < 0 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "nr_inodes", inodes, 0) < 0 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "0700", 0) < 0 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return berth_err(err, errno, "--review: cannot make the review layer (a tmpfs of %s bytes)",
				 bytes);
	mfd = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (mfd < 0 || mkdir(REVIEW_LAYER, 0700) < 0 ||
	    syscall(SYS_move_mount, mfd, "", AT_FDCWD, REVIEW_LAYER, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return berth_err(err, errno, "--review: cannot mount the review layer");
	if (mkdir(REVIEW_LAYER "/upper", 0700) < 0 || mkdir(REVIEW_LAYER "/work", 0700) < 0 ||
	    chown(REVIEW_LAYER "/upper", root->st_uid, root->st_gid) < 0 ||
	    chmod(REVIEW_LAYER "/upper", root->st_mode & 07777) < 0)
		return berth_err(err, errno, "--review: cannot prepare the review layer");
	return steal_fd(&mfd);
}

/*
 * --review (docs/review.md): /workspace is an overlay.  Its lower layer is
 * the workspace as workspace() would mount it (the idmapped tree, or the
 * bind of berth's descriptor), read-only, at REVIEW_LOWER in the base
 * tmpfs, which the sandbox never sees after the pivot; its upper and work
 * directories are in the review layer (review_layer), whose descriptor
 * goes to berth at sync 2 (*plan->review_fd): berth reads the change set
 * from it once the run has ended.  Nothing of the host's tree is written
 * by the overlay: a lower layer is never changed by it.  userxattr: the
 * overlay's whiteouts and opaque directories are marked with user.overlay.*
 * (trusted.* is not writable from a user namespace).
 */
int berth_review_workspace(const struct berth_mount_plan *plan, int tfd, struct berth_error *err)
{
	cleanup_close int lfd = -1, mfd = -1;
	char at[64];
	struct stat st;

	if (mkdir("/review", 0700) < 0 || mkdir(REVIEW_LOWER, 0755) < 0 ||
	    (lfd = open(REVIEW_LOWER, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return berth_err(err, errno, "--review: cannot prepare the lower layer");
	if (plan->ws_fd >= 0
		? berth_mnt_attach_at(plan->ws_fd, lfd, "the lower layer", err) < 0 ||
		      berth_mnt_set_attr(REVIEW_LOWER,
					 MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, true,
					 err) < 0
		: berth_mnt_bind_source("the workspace", plan->policy->workspace, plan->ws_src_fd, lfd,
					"the lower layer", MOUNT_ATTR_RDONLY, err) < 0)
		return -1;
	if (stat(REVIEW_LOWER, &st) < 0)
		return berth_err(err, errno, "--review: cannot stat the workspace");
	if ((mfd = review_layer(plan->policy->review_size, &st, err)) < 0)
		return -1;
	if (mount("overlay", berth_mnt_pinned_path(tfd, at, sizeof at), "overlay", MS_NOSUID | MS_NODEV,
		  "lowerdir=" REVIEW_LOWER ",upperdir=" REVIEW_LAYER "/upper,workdir=" REVIEW_LAYER
		  "/work,userxattr") < 0) {
		berth_err(err, errno, "--review: the kernel refused an overlay over the workspace");
		return berth_err_hint(err,
				      "--review needs overlayfs in a user namespace (Linux 5.11 or later, "
				      "with user extended attributes on tmpfs: 6.6); berth does not fall "
				      "back to writing the host's tree");
	}
	*plan->review_fd = steal_fd(&mfd);
	return 0;
}
