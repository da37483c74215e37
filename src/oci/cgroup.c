/* SPDX-License-Identifier: MIT */
/*
 * cgroup.c - the engine's cgroup for a container (`linux.cgroupsPath`):
 * the supervisor joins it in every mounted hierarchy before it makes the
 * sandbox, so the sandbox's own cgroups (src/sandbox/limits_cgroup.c, made
 * below the caller's) are inside it, and what the engine reads there (podman
 * stats, containerd's metrics, a kubelet's pod cgroup and its limits)
 * counts the container; `delete` removes it again (runc's rule).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../sandbox/limits.h"
#include "../util/cleanup.h"
#include "../util/sys.h"
#include "oci_int.h"

#define CG_HIERARCHIES_MAX 32

/*
 * cgroup v1's cpuset: a new cgroup has no CPUs or memory nodes, and joining
 * it fails with ENOSPC; it gets its parent's (runc's rule).  Elsewhere the
 * file does not exist and nothing is done.
 */
static int inherit_cpuset(const char *dir)
{
	static const char *const files[] = {"cpuset.cpus", "cpuset.mems"};

	for (size_t i = 0; i < 2; i++) {
		char path[PATH_MAX + 16], parent[PATH_MAX + 16], val[4096];
		const char *slash = strrchr(dir, '/');
		ssize_t n;
		int fd;

		snprintf(path, sizeof path, "%s/%s", dir, files[i]);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			return errno == ENOENT ? 0 : -1;
		n = read(fd, val, sizeof val - 1);
		close(fd);
		if (n < 0)
			return -1;
		if (n > 0 && val[0] != '\n')
			continue; /* it has its own */
		snprintf(parent, sizeof parent, "%.*s/%s", (int)(slash - dir), dir, files[i]);
		if ((fd = open(parent, O_RDONLY | O_CLOEXEC)) < 0)
			return -1;
		n = read(fd, val, sizeof val - 1);
		close(fd);
		if (n <= 0 || (fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
			return -1;
		if (write(fd, val, (size_t)n) != n) {
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		close(fd);
	}
	return 0;
}

/* every directory of @cgpath from its first component down, made 0755 */
static int make_path(const char *dir, size_t top)
{
	char buf[PATH_MAX];

	if ((size_t)snprintf(buf, sizeof buf, "%s", dir) >= sizeof buf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (char *p = buf + top + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if ((mkdir(buf, 0755) < 0 && errno != EEXIST) || inherit_cpuset(buf) < 0)
			return -1;
		*p = '/';
	}
	return (mkdir(buf, 0755) < 0 && errno != EEXIST) || inherit_cpuset(buf) < 0 ? -1 : 0;
}

int berth_oci_cgroup_join(const char *cgpath, const struct berth_oci_log *log, const char *id,
			  struct berth_error *err)
{
	char *dirs[CG_HIERARCHIES_MAX];
	int n = berth_limits_placement_dirs(cgpath, dirs, CG_HIERARCHIES_MAX), rc = 0;
	size_t skipped = 0;

	if (n < 0)
		return berth_err(err, errno, "cannot read the cgroup hierarchies (/proc/self/mountinfo)");
	for (int i = 0; i < n && rc == 0; i++) {
		char procs[PATH_MAX + 16], pid[24];
		size_t top = strlen(dirs[i]) - strlen(cgpath);
		int fd = -1, len = snprintf(pid, sizeof pid, "%d", (int)getpid());

		snprintf(procs, sizeof procs, "%s/cgroup.procs", dirs[i]);
		if (make_path(dirs[i], top) < 0 || (fd = open(procs, O_WRONLY | O_CLOEXEC)) < 0 ||
		    write(fd, pid, (size_t)len) != len) {
			int e = errno;
			if (geteuid() != 0 && (e == EACCES || e == EPERM || e == EROFS)) {
				skipped++; /* not delegated to this user: as runc's rootless */
			} else {
				berth_err(
				    err, e,
				    "cannot place container `%s` in its cgroup `%s` (linux.cgroupsPath)", id,
				    dirs[i]);
				berth_err_hint(
				    err,
				    "the engine's cgroup parent must be writable by the runtime (cgroupfs)");
				rc = -1;
			}
		}
		if (fd >= 0)
			close(fd);
	}
	if (rc == 0 && skipped > 0)
		berth_oci_logf(
		    log, BERTH_OCI_WARNING,
		    "container %s: linux.cgroupsPath `%s` not used in %zu of %d cgroup hierarchies: "
		    "not writable by uid %u",
		    id, cgpath, skipped, n, (unsigned)geteuid());
	while (n > 0)
		free(dirs[--n]);
	return rc;
}

/*
 * The container's processes are still leaving its cgroup when `delete`
 * (or a failed `create`) gets here: the supervisor is gone, but the
 * processes it started die of its death (PDEATHSIG) a moment later, and
 * berth's own cgroups below are removed as they go.  rmdir(2) says EBUSY
 * until then: it is tried again for a while (runc's RemovePaths retries
 * too); a cgroup another container still uses stays, with a warning.
 */
#define CG_REMOVE_WAIT_MS 2000

void berth_oci_cgroup_remove(const char *cgpath, const struct berth_oci_log *log, const char *id)
{
	char *dirs[CG_HIERARCHIES_MAX];
	int n = berth_limits_placement_dirs(cgpath, dirs, CG_HIERARCHIES_MAX);
	int64_t deadline = berth_now_ms() + CG_REMOVE_WAIT_MS;

	for (int i = 0; i < n; i++) {
		int r;
		while ((r = rmdir(dirs[i])) < 0 && errno == EBUSY && berth_now_ms() < deadline)
			nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
		if (r < 0 && errno != ENOENT && !(geteuid() != 0 && errno == EACCES))
			berth_oci_logf(log, BERTH_OCI_WARNING,
				       "container %s: cannot remove its cgroup `%s`: %s", id, dirs[i],
				       strerror(errno));
		free(dirs[i]);
	}
}
