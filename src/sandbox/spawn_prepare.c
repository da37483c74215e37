/* SPDX-License-Identifier: MIT */
/*
 * spawn_prepare.c - steps 1 and 2 of berth_sandbox_run() (spawn.c): detect the kernel
 * features and refuse what cannot be enforced, then compile everything the child
 * only applies (identity, limits, mounts, idmaps, evidence, guard, environment).
 */

#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "../util/cleanup.h"
#include "landlock.h"
#include "mounts.h"
#include "trustscan.h"

#include "spawn_int.h"

/* ---------------------------------------------------------- 1. features */

int berth_parse_force_off(const char *s, unsigned *bits, struct berth_error *err)
{
	static const struct {
		const char *name;
		unsigned bit;
	} tab[] = {{"userns", BERTH_FEAT_USERNS},
		   {"landlock", BERTH_FEAT_LANDLOCK},
		   {"seccomp", BERTH_FEAT_SECCOMP},
		   {"cgroup", BERTH_FEAT_CGROUP},
		   {"idmap", BERTH_FEAT_IDMAP}};
	char buf[256];
	char *save = NULL;

	*bits = 0;
	/* every entry point reads the test switches here, before any work */
	if (berth_limits_test_skew_check(err) < 0)
		return -1;
	if (s == NULL || *s == '\0')
		return 0;
	snprintf(buf, sizeof buf, "%s", s);
	for (char *w = strtok_r(buf, ",", &save); w != NULL; w = strtok_r(NULL, ",", &save)) {
		size_t i;
		for (i = 0; i < BERTH_ARRAY_SIZE(tab); i++)
			if (strcmp(w, tab[i].name) == 0)
				break;
		if (i == BERTH_ARRAY_SIZE(tab)) {
			berth_usage_err(err, "unknown feature `%s` in BERTH_TEST_FORCE_OFF", w);
			return berth_err_hint(err,
					      "use a comma list of userns, landlock, seccomp, cgroup, idmap");
		}
		*bits |= tab[i].bit;
	}
	return 0;
}

void berth_features_detect(unsigned force_off, struct berth_features *f)
{
	berth_features_detect_opts(force_off, true, f);
}

void berth_features_detect_opts(unsigned force_off, bool probe_userns, struct berth_features *f)
{
	memset(f, 0, sizeof *f);
	f->forced_off = force_off;
	f->userns_errno = (force_off & BERTH_FEAT_USERNS) ? EPERM : probe_userns ? berth_userns_probe() : 0;
	f->userns = f->userns_errno == 0;
	f->landlock_abi = (force_off & BERTH_FEAT_LANDLOCK) ? -EOPNOTSUPP : berth_landlock_abi();
	f->seccomp = !(force_off & BERTH_FEAT_SECCOMP) && berth_seccomp_available();
}

static int refuse(struct berth_error *err, const char *what, const char *hint)
{
	berth_err(err, 0, "%s: berth refuses to run without it", what);
	return berth_err_hint(err, "%s; see `berth doctor`, or pass `--allow-degraded` to run without it",
			      hint);
}

int berth_sb_check_features(struct sandbox *s, struct berth_error *err)
{
	const struct berth_features *f = &s->feat;
	bool forced;

	s->use_userns = f->userns;
	s->use_landlock = f->landlock_abi > 0;
	s->use_seccomp = f->seccomp;
	if (s->p->allow_degraded) {
		if (!s->use_userns)
			berth_sb_notice(
			    s,
			    "not enforced: user, mount, pid, ipc, uts, net and cgroup namespaces (no user "
			    "namespace: %s); the command sees the host's files, limited by Landlock only",
			    strerror(f->userns_errno));
		if (!s->use_landlock)
			berth_sb_notice(
			    s, "not enforced: landlock (file access and TCP rules beyond the mount view)");
		if (!s->use_seccomp)
			berth_sb_notice(s, "not enforced: seccomp (dangerous system calls are not filtered)");
		if (!s->use_userns && !s->use_landlock) {
			/* Not even --allow-degraded: do not suggest it. */
			berth_err(err, 0,
				  "neither user namespaces nor landlock are available: berth cannot confine "
				  "file access at all, and refuses to run even with --allow-degraded");
			return berth_err_hint(err, "see `berth doctor`: enable user namespaces or Landlock "
						   "(lsm=landlock on the kernel command line)");
		}
		return 0;
	}
	if (!s->use_userns && !(f->forced_off & BERTH_FEAT_USERNS) && berth_userns_inside_berth()) {
		/* Not the host's sysctl: the sandbox around this berth refuses
		 * namespaces (seccomp EPERM, nested user namespaces capped at 0). */
		berth_err(err, 0,
			  "cannot start a sandbox inside a berth sandbox: namespaces are refused here "
			  "(seccomp, and nested user namespaces are capped at 0)");
		return berth_err_hint(err, "%s", BERTH_NESTED_HINT);
	}
	if (!s->use_userns) {
		struct berth_lsm_facts lf;
		char why[512];
		forced = f->forced_off & BERTH_FEAT_USERNS;
		if (forced) /* stands for a kernel that refuses them, with EPERM */
			return refuse(err, "user namespaces are forced off",
				      "allow them: `sysctl kernel.unprivileged_userns_clone=1` (Debian) or "
				      "`sysctl kernel.apparmor_restrict_unprivileged_userns=0` (Ubuntu)");
		/* Only the knob this kernel has, or the filter above berth
		 * (AppArmor's restriction does not refuse the clone: it fails
		 * later, in the child's setup). */
		berth_lsm_facts_read(&lf);
		return refuse(err, "cannot create a user namespace",
			      berth_userns_clone_refusal(f->userns_errno, &lf, why, sizeof why) != NULL ? why
			      : f->userns_errno == EINVAL || f->userns_errno == ENOSYS
				  ? "enable CONFIG_USER_NS in the kernel"
				  : "see what refuses clone(CLONE_NEWUSER) on this host");
	}
	if (!s->use_landlock)
		return refuse(err, "landlock is not available",
			      f->landlock_abi == -ENOSYS
				  ? "the kernel was built without CONFIG_SECURITY_LANDLOCK"
				  : "landlock is disabled at boot: add `landlock` to the `lsm=` "
				    "kernel parameter");
	if (!s->use_seccomp)
		return refuse(err, "seccomp filters are not available",
			      "enable CONFIG_SECCOMP_FILTER in the kernel");
	return 0;
}

/* ---------------------------------------------------------- 2. compile */

int berth_sb_make_run_id(struct sandbox *s, struct berth_error *err)
{
	unsigned char r[8];

	if (s->o->run_id != NULL) {
		if (strlen(s->o->run_id) != 16 || strspn(s->o->run_id, "0123456789abcdef") != 16)
			return berth_err(err, EINVAL, "invalid run id `%s`", s->o->run_id);
		memcpy(s->run_id, s->o->run_id, 17);
		return 0;
	}
	if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
		return berth_err(err, errno, "getrandom");
	for (int i = 0; i < 8; i++)
		snprintf(s->run_id + 2 * i, 3, "%02x", r[i]);
	return 0;
}

static void set_user_name(struct sandbox *s, uid_t uid)
{
	struct passwd *pw = getpwuid(uid);

	snprintf(s->user, sizeof s->user, "%s", pw != NULL && pw->pw_name[0] != '\0' ? pw->pw_name : "berth");
	snprintf(s->home, sizeof s->home, "/home/%s", s->user);
}

/* Who the command is, inside and on the host (see docs/security.md). */
int berth_sb_resolve_identity(struct sandbox *s, struct berth_error *err)
{
	struct stat st;

	if (s->p->container != NULL) {
		/* A container's process.user, shown inside as given; on the host
		 * the caller's own id, or berth's unprivileged one for root. */
		const struct berth_container *c = s->p->container;
		bool root = berth_userns_host_root();
		s->ids =
		    (struct berth_ids){.in_uid = c->uid,
				       .in_gid = c->gid,
				       .host_uid = root ? BERTH_ROOT_HOST_UID + s->o->identity : getuid(),
				       .host_gid = root ? BERTH_ROOT_HOST_GID + s->o->identity : getgid(),
				       .deny_setgroups = !root};
		if (c->uid_range.size > 0) {
			if (!root)
				return berth_usage_err(err,
						       "a container's id ranges (linux.uidMappings) need "
						       "berth run by root");
			s->ids.map_in_uid = c->uid_range.inside;
			s->ids.map_host_uid = c->uid_range.host;
			s->ids.map_in_gid = c->gid_range.inside;
			s->ids.map_host_gid = c->gid_range.host;
			s->ids.map_len =
			    c->uid_range.size < c->gid_range.size ? c->uid_range.size : c->gid_range.size;
			s->ids.host_uid = c->uid_range.host + (c->uid - c->uid_range.inside);
			s->ids.host_gid = c->gid_range.host + (c->gid - c->gid_range.inside);
		}
		set_user_name(s, c->uid);
		return 0;
	}
	if (stat(s->p->workspace, &st) < 0)
		return berth_err(err, errno, "cannot stat workspace `%s`", s->p->workspace);
	if (geteuid() != 0) {
		s->ids = (struct berth_ids){.in_uid = getuid(),
					    .in_gid = getgid(),
					    .host_uid = getuid(),
					    .host_gid = getgid(),
					    .deny_setgroups = true};
	} else {
		/* Never host root: an unprivileged host id, shown inside as the
		 * workspace owner (or 1000 when root owns the workspace). */
		s->ids.in_uid = st.st_uid != 0 ? st.st_uid : 1000;
		s->ids.in_gid = st.st_gid != 0 ? st.st_gid : 1000;
		s->ids.host_uid = BERTH_ROOT_HOST_UID + s->o->identity;
		s->ids.host_gid = BERTH_ROOT_HOST_GID + s->o->identity;
		s->ids.deny_setgroups = false;
	}
	set_user_name(s, s->ids.in_uid);
	return 0;
}

int berth_sb_compile_seccomp(struct sandbox *s, struct berth_error *err)
{
	struct berth_seccomp_opts so = {.block_affinity = s->lim.cpus_affinity > 0};

	if (!s->use_seccomp)
		return 0;
	return berth_seccomp_compile(s->p, &so, &s->bpf, err);
}

int berth_sb_compile_container_seccomp(struct sandbox *s, struct berth_error *err)
{
	const struct berth_container *c = s->p->container;

	if (s->o->ask) {
		if (!s->use_seccomp)
			return berth_err_hint(
			    (berth_err(err, 0, "--ask cannot be given: this kernel has no seccomp filter"),
			     err),
			    "see `berth doctor`");
		if (berth_seccomp_compile_notify(&s->nbpf, err) < 0)
			return -1;
	}

	if (c == NULL || c->seccomp == NULL)
		return 0;
	if (!s->use_seccomp) {
		berth_err(err, 0, "the container's seccomp profile (linux.seccomp) cannot be enforced: %s",
			  "this kernel has no seccomp filter");
		return berth_err_hint(err, "see `berth doctor`");
	}
	return berth_seccomp_compile_oci(c->seccomp, &s->cbpf, err);
}

int berth_sb_prepare_limits(struct sandbox *s, struct berth_error *err)
{
	bool explicit_missing;

	if (berth_limits_prepare_noted(s->p, s->run_id, (s->o->force_off & BERTH_FEAT_CGROUP) != 0,
				       s->o->journal, &s->lim, err) < 0)
		return -1;
	explicit_missing = (s->p->memory_set && !s->lim.memory_enforced) ||
			   (s->p->cpus_set && !s->lim.cpus_enforced) ||
			   (s->p->pids_set && !s->lim.pids_enforced);
	if (s->lim.unenforced[0] != '\0' && explicit_missing && !s->p->allow_degraded) {
		berth_limits_refuse(&s->lim, err);
		berth_limits_destroy(&s->lim);
		return -1;
	}
	return 0;
}

/* What prepare_limits could not enforce, said once the child exists: not
 * for an attempt whose clone is refused (inside a berth sandbox, the
 * refusal alone is the message). */
void berth_sb_limits_notices(const struct sandbox *s)
{
	if (s->lim.mode == BERTH_LIMITS_RLIMITS)
		berth_sb_notice(s, "limits: %s (no writable cgroup for this caller)", s->lim.how);
	if (s->lim.unenforced[0] != '\0')
		berth_sb_notice(s, "not enforced: %s", s->lim.unenforced);
}

static int owner_of(const char *path, uid_t *uid, gid_t *gid, struct berth_error *err)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return berth_err(err, errno, "cannot stat `%s`", path);
	*uid = st.st_uid;
	*gid = st.st_gid;
	return 0;
}

/* Invoked by root: files in the workspace and --rw/--ro mounts keep their
 * host owner through idmapped mounts. */
/* The workspace and each --ro/--rw source, opened once here with no link
 * followed (issue 13, class 4: a source swapped for a symbolic link after
 * berth checked it was mounted by name, and the sandbox got the link's
 * target); every mount is made from these descriptors.  The kind of each
 * source is seen here too, with berth's own credentials: the child, already
 * the sandbox identity, may not be able to look (a source under a 0700
 * directory of root's, when root runs berth). */
/* The directory @path (in the container's root @rootfd) opened with every
 * link on the way followed inside that root (RESOLVE_IN_ROOT), or -1. */
static int open_in_root(int rootfd, const char *path)
{
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};

	return (int)syscall(SYS_openat2, rootfd, path[0] == '\0' ? "." : path, &how, sizeof how);
}

/*
 * Invoked by root: the mount point @dst (a directory when @dir, else a
 * file) made in the container's root @rootfd where it is missing, as runc
 * does: the sandbox identity may not be allowed to (the root is not
 * idmapped, an overlay, and its directories are root's).  Each directory
 * on the way is made 0755 below the one before, opened inside the root, so
 * a link in the image leads nowhere out of it (RESOLVE_IN_ROOT).  What is
 * already there, of whatever kind, is left alone: the child resolves and
 * checks it.  Returns 0, or -1 with @err.
 */
static int make_in_root(int rootfd, const char *dst, bool dir, struct berth_error *err)
{
	char parent[PATH_MAX] = "", name[NAME_MAX + 1];
	const char *c = dst;

	for (;;) {
		cleanup_close int pfd = -1;
		const char *next;
		size_t n, pl;
		bool last;
		int fd;

		while (*c == '/')
			c++;
		if (*c == '\0')
			return 0;
		n = strcspn(c, "/");
		for (next = c + n; *next == '/'; next++)
			;
		last = *next == '\0';
		pl = strlen(parent);
		if (n > NAME_MAX || pl + 1 + n >= sizeof parent)
			return berth_err(err, ENAMETOOLONG, "mount target `%s`", dst);
		memcpy(name, c, n);
		name[n] = '\0';
		pfd = open_in_root(rootfd, parent);
		if (pfd < 0)
			return berth_err(
			    err, errno,
			    "cannot open `/%s` in the container's root to make the mount point `%s`", parent,
			    dst);
		if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0) {
			if (!last || dir) {
				if (mkdirat(pfd, name, 0755) < 0 && errno != EEXIST)
					return berth_err(
					    err, errno,
					    "cannot make the mount point `%s` in the container's root", dst);
			} else {
				fd = openat(pfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
					    0644);
				if (fd < 0 && errno != EEXIST)
					return berth_err(
					    err, errno,
					    "cannot make the mount point `%s` in the container's root", dst);
				if (fd >= 0)
					close(fd);
			}
		}
		snprintf(parent + pl, sizeof parent - pl, "%s%s", pl > 0 ? "/" : "", name);
		c = next;
	}
}

/* Every mount point of a container's root berth will mount on. */
static int container_mountpoints(struct sandbox *s, struct berth_error *err)
{
	static const char *const own[] = {"/dev", "/proc", "/sys", "/tmp", NULL};
	const struct berth_container *c = s->p->container;
	cleanup_close int rootfd = -1;

	if (geteuid() != 0)
		return 0; /* the caller's own root: the sandbox identity may make them */
	rootfd = open_in_root(s->root_src, "");
	if (rootfd < 0)
		return berth_err(err, errno, "cannot open the container's root `%s`", c->root);
	for (int i = 0; own[i] != NULL; i++)
		if (make_in_root(rootfd, own[i], true, err) < 0)
			return -1;
	if (c->workspace_at != NULL && make_in_root(rootfd, c->workspace_at, true, err) < 0)
		return -1;
	for (size_t i = 0; i < s->p->n_mounts; i++)
		if (make_in_root(rootfd, s->p->mounts[i].dst, s->mount_is_dir[i], err) < 0)
			return -1;
	return 0;
}

/*
 * A container on a joined network namespace (a pod's, owned by the host's
 * user namespace, or the engine's): a sysfs of it, detached, read-only.
 * This process is in that namespace (the OCI supervisor joined it), and the
 * sandbox could not mount one (it does not own the namespace): without it
 * the sandbox would get the host's /sys, whose network is the host's.
 * Returns the descriptor, or -1 (the host's /sys, read-only, as before).
 */
static int pod_sysfs(void)
{
	cleanup_close int fs = (int)syscall(SYS_fsopen, "sysfs", FSOPEN_CLOEXEC);

	if (fs < 0 || syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return -1;
	return (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
			    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
}

int berth_sb_plan_mounts(struct sandbox *s, struct berth_error *err)
{
	struct stat st;

	if (s->p->n_mounts > BERTH_ARRAY_SIZE(s->mount_is_dir))
		return berth_usage_err(err, "too many --ro/--rw mounts (%zu, at most %zu)", s->p->n_mounts,
				       BERTH_ARRAY_SIZE(s->mount_is_dir));
	if (!s->use_userns)
		return 0; /* no mount namespace: nothing is mounted */
	if (s->p->container != NULL) {
		s->root_src = berth_source_open("the container's root", s->p->container->root, &st, err);
		if (s->root_src < 0)
			return -1;
		if (!S_ISDIR(st.st_mode))
			return berth_usage_err(err, "the container's root `%s` is not a directory",
					       s->p->container->root);
		if (s->p->network == BERTH_NET_HOST)
			s->sys_fd = pod_sysfs();
	}
	if (s->p->workspace != NULL) {
		s->ws_src = berth_source_open("the workspace", s->p->workspace, &st, err);
		if (s->ws_src < 0)
			return -1;
	}
	for (size_t i = 0; i < s->p->n_mounts; i++) {
		const struct berth_mount *m = &s->p->mounts[i];
		if (m->tmpfs) {
			s->mount_is_dir[i] = true;
			continue;
		}
		s->src_fds[i] =
		    berth_source_open(m->rw ? "the --rw source" : "the --ro source", m->src, &st, err);
		if (s->src_fds[i] < 0)
			return -1;
		s->mount_is_dir[i] = S_ISDIR(st.st_mode);
	}
	return s->p->container != NULL ? container_mountpoints(s, err) : 0;
}

static int fd_owner(int fd, const char *path, uid_t *uid, gid_t *gid, struct berth_error *err)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return berth_err(err, errno, "cannot stat `%s`", path);
	*uid = st.st_uid;
	*gid = st.st_gid;
	return 0;
}

/* sandbox.h */
void berth_test_pause(const char *var)
{
	const char *d = getenv(var);
	char path[PATH_MAX];
	struct stat st;
	int fd;

	if (d == NULL || d[0] != '/' || lstat(d, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid())
		return;
	snprintf(path, sizeof path, "%s/paused", d);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof path, "%s/go", d);
	for (int i = 0; i < 600 && access(path, F_OK) < 0; i++)
		usleep(100000);
}

int berth_sb_prepare_idmaps(struct sandbox *s, struct berth_error *err)
{
	uid_t u = 0;
	gid_t g = 0;
	bool no_userns;

	s->ws_fd = -1;
	s->home_fd = -1;
	if (s->root_fd >= 0)
		close(s->root_fd);
	s->root_fd = -1;
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(s->mount_fds); i++)
		s->mount_fds[i] = -1;
	if (geteuid() != 0 || !s->use_userns)
		return 0;
	/* A container under root of another user namespace (rootless podman):
	 * the unprivileged caller's binds, made by the child. */
	if (s->p->container != NULL && !berth_userns_host_root())
		return 0;
	if (s->p->n_mounts > BERTH_ARRAY_SIZE(s->mount_fds))
		return berth_usage_err(err, "too many mounts (%zu, at most %zu)", s->p->n_mounts,
				       BERTH_ARRAY_SIZE(s->mount_fds));
	if (s->o->force_off & BERTH_FEAT_IDMAP) {
		berth_err(err, EOPNOTSUPP, "idmapped mounts are forced off");
		goto degraded;
	}
	if (s->p->container != NULL) {
		/* The root's owner (root, for an engine's image) is the
		 * container's uid inside: what it may write is the mount's
		 * business (read-only unless root.readonly is false). */
		if (fd_owner(s->root_src, s->p->container->root, &u, &g, err) < 0)
			return -1;
		/* With id ranges the image's files are owned by host ids in them
		 * already (the engine made them so): no idmapping. */
		if (s->p->container->uid_range.size > 0)
			s->root_fd = berth_err(err, EOPNOTSUPP, "the container maps id ranges");
		else
			s->root_fd = berth_idmapped_tree(s->root_src, s->p->container->root, u, g, &s->ids,
							 false, err);
		if (s->root_fd == -1 && (err->errnum == EINVAL || err->errnum == EOPNOTSUPP)) {
			/* An overlay (an engine's image) cannot be idmapped: the root
			 * is a plain clone, its files shown inside as owned by nobody
			 * (the kernel's overflow id), written only where others may.
			 * No confinement is lost: the view differs, not the rights. */
			berth_err_clear(err);
			s->root_fd =
			    (int)syscall(SYS_open_tree, s->root_src, "",
					 OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
			if (s->root_fd < 0)
				return berth_err(err, errno, "cannot clone the container's root `%s`",
						 s->p->container->root);
		}
		if (s->root_fd < 0)
			goto degraded;
	}
	if (s->p->workspace != NULL) {
		if (fd_owner(s->ws_src, s->p->workspace, &u, &g, err) < 0)
			return -1;
		s->ws_fd = berth_idmapped_tree(s->ws_src, s->p->workspace, u, g, &s->ids, false, err);
		if (s->ws_fd < 0)
			goto degraded;
	}
	if (s->p->home_dir != NULL) {
		if (owner_of(s->p->home_dir, &u, &g, err) < 0)
			return -1;
		s->home_fd = berth_idmapped_tree(-1, s->p->home_dir, u, g, &s->ids, false, err);
		if (s->home_fd < 0)
			goto degraded;
	}
	for (size_t i = 0; i < s->p->n_mounts; i++) {
		const struct berth_mount *m = &s->p->mounts[i];
		if (m->tmpfs)
			continue;
		if (fd_owner(s->src_fds[i], m->src, &u, &g, err) < 0)
			return -1;
		s->mount_fds[i] = berth_idmapped_tree(s->src_fds[i], m->src, u, g, &s->ids, !m->rw, err);
		if (s->mount_fds[i] < 0)
			goto degraded;
	}
	return 0;
degraded:
	no_userns = s->ws_fd == -2 || s->home_fd == -2 || s->root_fd == -2;
	for (size_t i = 0; i < s->p->n_mounts; i++)
		no_userns |= s->mount_fds[i] == -2;
	if (no_userns) {
		/* No user namespace at all: not the filesystem's fault.  Reported
		 * (or retried without them) as the sandbox's own clone would be. */
		s->userns_errno = err->errnum;
		berth_err_clear(err);
		return -1;
	}
	if (!s->p->allow_degraded) {
		berth_err_wrap(err, "cannot keep workspace files owned by their host owner");
		return berth_err_hint(
		    err,
		    "use a filesystem that supports idmapped mounts (ext4, xfs, btrfs, tmpfs), "
		    "or pass `--allow-degraded` (files written will belong to uid %u)",
		    BERTH_ROOT_HOST_UID);
	}
	berth_sb_notice(s,
			"not enforced: idmapped mounts (%s); files the sandbox writes belong to host uid %u",
			err->msg, BERTH_ROOT_HOST_UID);
	berth_err_clear(err);
	if (s->ws_fd >= 0)
		close(s->ws_fd);
	s->ws_fd = -1;
	if (s->root_fd >= 0)
		close(s->root_fd);
	s->root_fd = -1;
	if (s->home_fd >= 0)
		close(s->home_fd);
	s->home_fd = -1;
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(s->mount_fds); i++)
		if (s->mount_fds[i] >= 0)
			close(s->mount_fds[i]);
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(s->mount_fds); i++)
		s->mount_fds[i] = -1;
	return 0;
}

/* --evidence lives in berth's state directory, which the sandbox identity
 * of a run invoked by root cannot enter: berth hands it over as a detached
 * read-only tree.  Without a mount namespace there is no /evidence. */
int berth_sb_prepare_evidence(struct sandbox *s, struct berth_error *err)
{
	if (s->p->evidence_dir == NULL)
		return 0;
	if (!s->use_userns) {
		berth_err(err, 0,
			  "--evidence needs the sandbox's own mount namespace, and user namespaces are not "
			  "available: berth refuses to run");
		return berth_err_hint(err, "see `berth doctor`");
	}
	if (geteuid() == 0) {
		s->evidence_fd = berth_ro_tree(s->p->evidence_dir, err);
		if (s->evidence_fd < 0)
			return -1;
	}
	return 0;
}

int berth_sb_prepare_guard(struct sandbox *s, struct berth_error *err)
{
	memset(&s->guard, 0, sizeof s->guard);
	if (s->p->app) {
		/* An app's workspace is its own state directory, which no host
		 * tool executes or trusts. */
		s->guard.git_existed = true;
		return 0;
	}
	if (s->p->workspace == NULL) {
		/* A container without a berth.dev/workspace mount: no workspace
		 * to guard (docs/oci.md). */
		s->guard.git_existed = true;
		return 0;
	}
	if (!s->use_userns) {
		berth_sb_notice(s, "not enforced: workspace guard (needs mount namespaces)");
		return 0;
	}
	if (berth_guard_prepare(s->p, &s->guard, err) < 0)
		return -1;
	s->guard_ready = true;
	/* So that the next berth scans if this one and its janitor are both
	 * killed (trustscan.h, berth_trust_repair). */
	if (berth_trust_journal(s->o->journal, s->p, &s->guard, err) < 0)
		return -1;
	return 0;
}

/* MAX_ARG_STRLEN (linux/binfmts.h): the longest string execve(2) takes,
 * NUL included; a longer NAME=VALUE would make it fail with E2BIG. */
#define ENV_ENTRY_MAX BERTH_POLICY_ENV_ENTRY_MAX
/* The egress broker's variables (append_env, step 8): HTTP_PROXY,
 * HTTPS_PROXY, ALL_PROXY, NO_PROXY and their lowercase forms. */
#define ENV_PROXY_VARS BERTH_POLICY_ENV_PROXY

/* Set NAME=VALUE in the command's environment (a later one of the same
 * name replaces it).  More variables than fit, or one longer than execve(2)
 * takes, is a usage error naming it: never a silently cut or dropped one. */
int berth_sb_add_env(struct sandbox *s, int *n, int reserve, const char *name, const char *value,
		     struct berth_error *err)
{
	size_t l = strlen(name), need;
	char *e;
	int i;

	if (value == NULL)
		return 0;
	need = l + 1 + strlen(value) + 1;
	if (need > ENV_ENTRY_MAX) {
		berth_usage_err(err,
				"environment variable `%s` is %zu bytes long (NAME=VALUE); the kernel passes "
				"at most %d to a command",
				name, need - 1, ENV_ENTRY_MAX - 1);
		return berth_err_hint(err, "pass a long value in a file in the workspace instead");
	}
	for (i = 0; i < *n; i++)
		if (strncmp(s->envp[i], name, l) == 0 && s->envp[i][l] == '=')
			break;
	if (i == *n && *n >= MAX_ENV - 1 - reserve) {
		berth_usage_err(
		    err,
		    "too many environment variables for the command: `%s` is one more than the %d "
		    "berth passes",
		    name, MAX_ENV - 1 - reserve);
		return berth_err_hint(err,
				      "count PATH HOME USER LOGNAME TERM LANG LC_*, every --env and every "
				      "--env-file line%s",
				      reserve > 0 ? ", and 8 for the egress broker's *_PROXY" : "");
	}
	e = malloc(need);
	if (e == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	snprintf(e, need, "%s=%s", name, value);
	if (s->env_store[i] != NULL) {
		explicit_bzero(s->env_store[i], strlen(s->env_store[i]));
		free(s->env_store[i]);
	}
	s->env_store[i] = e;
	s->envp[i] = e;
	if (i == *n)
		(*n)++;
	return 0;
}

int berth_sb_build_env(struct sandbox *s, struct berth_error *err)
{
	extern char **environ;
	int n = 0, reserve = s->p->network == BERTH_NET_PROXY ? ENV_PROXY_VARS : 0;

	if (s->p->container != NULL) {
		/* A container's environment is its process.env, as given. */
		for (size_t i = 0; i < s->p->n_env; i++)
			if (berth_sb_add_env(s, &n, reserve, s->p->env[i].name, s->p->env[i].value, err) < 0)
				return -1;
		s->envp[n] = NULL;
		return 0;
	}
	if (berth_sb_add_env(s, &n, reserve, "PATH", BERTH_SYSTEM_PATH, err) < 0 ||
	    berth_sb_add_env(s, &n, reserve, "HOME", s->use_userns ? s->home : s->p->workspace, err) < 0 ||
	    berth_sb_add_env(s, &n, reserve, "USER", s->user, err) < 0 ||
	    berth_sb_add_env(s, &n, reserve, "LOGNAME", s->user, err) < 0 ||
	    berth_sb_add_env(s, &n, reserve, "TERM", getenv("TERM"), err) < 0 ||
	    berth_sb_add_env(s, &n, reserve, "LANG", getenv("LANG"), err) < 0)
		return -1;
	for (char **e = environ; *e != NULL; e++) {
		if (strncmp(*e, "LC_", 3) == 0) {
			char name[128];
			const char *eq = strchr(*e, '=');
			if (eq == NULL || (size_t)(eq - *e) >= sizeof name)
				continue;
			snprintf(name, sizeof name, "%.*s", (int)(eq - *e), *e);
			if (berth_sb_add_env(s, &n, reserve, name, eq + 1, err) < 0)
				return -1;
		}
	}
	for (size_t i = 0; i < s->p->n_env; i++)
		if (berth_sb_add_env(s, &n, reserve, s->p->env[i].name, s->p->env[i].value, err) < 0)
			return -1;
	s->envp[n] = NULL;
	return 0;
}

/* The command's environment holds secrets: wipe it before it is freed. */
void berth_sb_free_env(struct sandbox *s)
{
	for (int i = 0; i < MAX_ENV; i++) {
		if (s->env_store[i] != NULL) {
			explicit_bzero(s->env_store[i], strlen(s->env_store[i]));
			free(s->env_store[i]);
		}
		s->env_store[i] = NULL;
		s->envp[i] = NULL;
	}
}
