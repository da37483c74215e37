/* SPDX-License-Identifier: MIT */
/*
 * root.c - the guest's root file system and cgroups (guest.h): the host's
 * staging tree over virtiofs (tag `root`) made the root, and a cgroup v2
 * subtree delegated to uid U, so that the namespace runtime inside finds
 * its limits as an unprivileged caller with a delegated cgroup does
 * (src/sandbox/limits.c, "Delegated").
 */
#include "guest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../util/cleanup.h"

/* A mount point in the staging tree: the host makes them (the share may be
 * read-only); made here only when missing and writable. */
static int mount_point(const char *path, struct berth_error *err)
{
	struct stat st;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	if (mkdir(path, 0755) < 0)
		return berth_err(err, errno, "the root file system has no directory `%s`",
				 path + strlen(GUEST_NEWROOT));
	return 0;
}

/* Whether the directory @path has no entry. */
static bool empty_dir(const char *path)
{
	cleanup_closedir DIR *d = opendir(path);
	struct dirent *de;

	while (d != NULL && (de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			return false;
	return true;
}

/* A fresh tmpfs at @path, unless the host shares something below it (a
 * workspace under /tmp is at its host path too): the share's directory then
 * stays, as the namespace runtime makes the sandbox's own /tmp anyway. */
static int scratch(const char *path, const char *opts, struct berth_error *err)
{
	if (mount_point(path, err) < 0)
		return -1;
	if (!empty_dir(path))
		return 0;
	if (mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
		return berth_err(err, errno, "cannot mount a tmpfs at `%s`", path + strlen(GUEST_NEWROOT));
	return 0;
}

/*
 * The share at /newroot, the kernel's file systems moved into it, a fresh
 * /tmp and /run, and the root switched to it (switch_root(8): the
 * initramfs is the rootfs, which pivot_root cannot leave, so the new root
 * is moved over / and chrooted into).  The host's paths are the same paths
 * here (docs/vm.md, "The design"); so /tmp and /run are fresh only when
 * the host shares nothing below them.
 */
int guest_switch_root(struct berth_error *err)
{
	static const char *const moved[] = {"/dev", "/proc", "/sys"};
	char at[64];

	if (mount_point(GUEST_NEWROOT, err) < 0)
		return -1;
	if (mount(GUEST_ROOT_TAG, GUEST_NEWROOT, "virtiofs", MS_NOSUID | MS_NODEV, NULL) < 0) {
		berth_err(err, errno, "cannot mount the virtiofs share `%s`", GUEST_ROOT_TAG);
		return berth_err_hint(err, "qemu needs `-device vhost-user-fs-pci,chardev=...,tag=root` and "
					   "a running virtiofsd");
	}
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(moved); i++) {
		snprintf(at, sizeof at, GUEST_NEWROOT "%s", moved[i]);
		if (mount_point(at, err) < 0)
			return -1;
		if (mount(moved[i], at, NULL, MS_MOVE, NULL) < 0)
			return berth_err(err, errno, "cannot move `%s` into the new root", moved[i]);
	}
	if (scratch(GUEST_NEWROOT "/tmp", "mode=1777", err) < 0 ||
	    scratch(GUEST_NEWROOT "/run", "mode=0755", err) < 0)
		return -1;
	if (chdir(GUEST_NEWROOT) < 0 || mount(".", "/", NULL, MS_MOVE, NULL) < 0 || chroot(".") < 0 ||
	    chdir("/") < 0)
		return berth_err(err, errno, "cannot switch to the new root");
	return 0;
}

static int write_file(const char *path, const char *text)
{
	cleanup_close int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		return -1;
	return 0;
}

/* @dir and the files through which its owner manages it, made uid/gid's
 * (cgroup-v2.rst, "Delegation": the directory, cgroup.procs,
 * cgroup.threads and cgroup.subtree_control). */
static int delegate(const char *dir, uid_t uid, gid_t gid, struct berth_error *err)
{
	static const char *const files[] = {"", "/cgroup.procs", "/cgroup.threads",
					    "/cgroup.subtree_control"};
	char path[256];

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return berth_err(err, errno, "cannot make the cgroup `%s`", dir);
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof path, "%s%s", dir, files[i]);
		if (chown(path, uid, gid) < 0)
			return berth_err(err, errno, "cannot delegate `%s`", path);
	}
	return 0;
}

int guest_oom_protect(struct berth_error *err)
{
	if (write_file("/proc/self/oom_score_adj", "-1000") < 0)
		return berth_err(err, errno, "cannot write the guest init's oom_score_adj");
	return 0;
}

uint64_t guest_mem_budget(void)
{
	char buf[4096];
	cleanup_close int fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	unsigned long long kib = 0;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* a small guest (a resident app's 64 MiB budget boots 320 MiB of RAM)
	 * still leaves its command what it was sized for: only a guest with
	 * nothing past the reserve is unusable */
	if (sscanf(buf, "MemTotal: %llu kB", &kib) != 1 || kib * 1024 <= GUEST_MEM_RESERVE + (16ULL << 20))
		return 0;
	return kib * 1024 - GUEST_MEM_RESERVE;
}

/* /berth's memory.max: the guest's RAM less what berth's own processes and
 * the kernel keep (guest.h, GUEST_MEM_RESERVE).  The run's cgroup below it
 * has the policy's --memory; this one holds it and the relay to what the
 * guest can give, so that a command (its tmpfs pages included) exhausts
 * its cgroup, never the guest. */
static int cap_memory(struct berth_error *err)
{
	uint64_t budget = guest_mem_budget();
	char v[32];

	if (budget == 0)
		return berth_err(err, 0, "cannot read the guest's MemTotal from /proc/meminfo");
	snprintf(v, sizeof v, "%llu", (unsigned long long)budget);
	if (write_file(GUEST_CGROUP "/" GUEST_CGROUP_SUB "/memory.max", v) < 0)
		return berth_err(err, errno, "cannot write `%s/%s/memory.max`", GUEST_CGROUP,
				 GUEST_CGROUP_SUB);
	return 0;
}

/*
 * cgroup v2 at /sys/fs/cgroup with memory, pids and cpu given to its
 * children; /berth delegated to U, its memory.max the guest's budget
 * (cap_memory, not U's to raise: the file stays root's), and the worker's
 * own cgroup below it (/berth/worker, U's too).  The runtime, run by U in
 * /berth/worker, walks up to /berth (delegated, no member process) and
 * makes the run's cgroup there, as it does below a systemd user manager's
 * delegated cgroup.
 */
int guest_cgroup(uid_t uid, gid_t gid, struct berth_error *err)
{
	static const char *const ctl[] = {"+memory", "+pids", "+cpu"};

	if (mount("cgroup2", GUEST_CGROUP, "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC, "nsdelegate") < 0)
		return berth_err(err, errno, "cannot mount cgroup2 at `%s`", GUEST_CGROUP);
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(ctl); i++)
		if (write_file(GUEST_CGROUP "/cgroup.subtree_control", ctl[i]) < 0 && i < 2)
			return berth_err(err, errno, "cannot enable `%s` in the guest's cgroup root", ctl[i]);
	if (delegate(GUEST_CGROUP "/" GUEST_CGROUP_SUB, uid, gid, err) < 0 || cap_memory(err) < 0 ||
	    delegate(GUEST_CGROUP "/" GUEST_CGROUP_SUB "/" GUEST_CGROUP_WORKER, uid, gid, err) < 0)
		return -1;
	return 0;
}
