/* SPDX-License-Identifier: MIT */
/*
 * nofeature.c - run a command on a kernel that lacks one feature berth uses,
 * the way an old or restricted kernel lacks it (tests/shim/run-nofeature.sh).
 *
 *   nofeature FEATURE COMMAND [ARG...]
 *
 * Unlike BERTH_TEST_FORCE_OFF, nothing in berth is told: berth's own
 * detection must find the feature missing (crun reruns its suite with
 * openat2 made ENOSYS the same way).  FEATURE is one of
 *
 *   landlock-enosys      landlock_*(2) fail with ENOSYS: a kernel built without
 *                        CONFIG_SECURITY_LANDLOCK
 *   landlock-eopnotsupp  landlock_*(2) fail with EOPNOTSUPP: Landlock built in
 *                        but not in the `lsm=` list at boot
 *   userns               clone(2) and unshare(2) with CLONE_NEWUSER fail with
 *                        EPERM, clone3(2) with ENOSYS (its flags are in memory a
 *                        filter cannot read; libc falls back to clone): a
 *                        container runtime's seccomp profile (Docker's default
 *                        does exactly this)
 *   seccomp              seccomp(2) and prctl(PR_SET_SECCOMP) fail with EINVAL:
 *                        a kernel without CONFIG_SECCOMP_FILTER
 *   idmap-enosys         mount_setattr(2) fails with ENOSYS: a kernel before
 *                        5.12, without idmapped mounts (nor mount_setattr)
 *   idmap-einval         mount_setattr(2) on a detached tree (AT_EMPTY_PATH,
 *                        how berth makes its idmapped mounts) fails with EINVAL:
 *                        a filesystem that cannot be idmapped; attributes set on
 *                        a path (berth's read-only remounts) still work
 *   cgroup               (root only) a private mount namespace whose
 *                        /sys/fs/cgroup is an empty tmpfs: no cgroup
 *                        hierarchy mounted, as in a bare container
 *
 * The filters allow everything else and are inherited by the command and all
 * it starts, across execve.  As root no NO_NEW_PRIVS is set (root may load a
 * filter without it), so berth starts as it would on such a host; a user's
 * filter needs it.  Exit status: the command's (this program execs it), 2 for
 * a usage error, 77 (skip) when FEATURE needs root and the caller is not, 99
 * when the shim itself cannot be set up.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <unistd.h>

#define SHIM_SETUP_FAILED 99
#define SHIM_SKIP 77

static int die(const char *what, int errnum)
{
	fprintf(stderr, "nofeature: %s: %s\n", what, strerror(errnum));
	return SHIM_SETUP_FAILED;
}

/* Make the named system call fail with @errnum (under conditions @arg, when
 * @n_arg is 1).  libseccomp returns -errno. */
static int fail_call(scmp_filter_ctx ctx, const char *name, int errnum, unsigned n_arg,
		     const struct scmp_arg_cmp *arg)
{
	int nr = seccomp_syscall_resolve_name(name);
	int r;

	if (nr == __NR_SCMP_ERROR) {
		fprintf(stderr, "nofeature: libseccomp does not know the system call `%s`\n", name);
		return -1;
	}
	r = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO((unsigned)errnum), nr, n_arg, arg);
	if (r < 0) {
		fprintf(stderr, "nofeature: cannot add the rule for `%s`: %s\n", name, strerror(-r));
		return -1;
	}
	return 0;
}

static int landlock_rules(scmp_filter_ctx ctx, int errnum)
{
	static const char *const calls[] = {"landlock_create_ruleset", "landlock_add_rule",
					    "landlock_restrict_self"};

	for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
		if (fail_call(ctx, calls[i], errnum, 0, NULL) < 0)
			return -1;
	return 0;
}

static int userns_rules(scmp_filter_ctx ctx)
{
	/* (flags & CLONE_NEWUSER) == CLONE_NEWUSER; the flags are clone's first
	 * argument on x86 and arm (the second on s390, not handled here). */
	const struct scmp_arg_cmp newuser = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER);

	if (fail_call(ctx, "clone", EPERM, 1, &newuser) < 0 ||
	    fail_call(ctx, "unshare", EPERM, 1, &newuser) < 0)
		return -1;
	return fail_call(ctx, "clone3", ENOSYS, 0, NULL);
}

static int seccomp_rules(scmp_filter_ctx ctx)
{
	const struct scmp_arg_cmp set = SCMP_A0(SCMP_CMP_EQ, PR_SET_SECCOMP);

	if (fail_call(ctx, "seccomp", EINVAL, 0, NULL) < 0)
		return -1;
	return fail_call(ctx, "prctl", EINVAL, 1, &set);
}

static int load_filter(const char *feature)
{
	const struct scmp_arg_cmp empty_path = SCMP_A2(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH);
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int r = -1;

	if (ctx == NULL)
		return die("seccomp_init", ENOMEM);
	/* Root loads the filter without NO_NEW_PRIVS (CAP_SYS_ADMIN suffices);
	 * other ABIs (i386, x32) are left alone, not killed. */
	r = geteuid() == 0 ? seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) : 0;
	if (r == 0)
		r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW);
	if (r < 0) {
		die("seccomp_attr_set", -r);
		goto out;
	}
	r = -1;
	if (strcmp(feature, "landlock-enosys") == 0)
		r = landlock_rules(ctx, ENOSYS);
	else if (strcmp(feature, "landlock-eopnotsupp") == 0)
		r = landlock_rules(ctx, EOPNOTSUPP);
	else if (strcmp(feature, "userns") == 0)
		r = userns_rules(ctx);
	else if (strcmp(feature, "seccomp") == 0)
		r = seccomp_rules(ctx);
	else if (strcmp(feature, "idmap-enosys") == 0)
		r = fail_call(ctx, "mount_setattr", ENOSYS, 0, NULL);
	else if (strcmp(feature, "idmap-einval") == 0)
		r = fail_call(ctx, "mount_setattr", EINVAL, 1, &empty_path);
	if (r == 0) {
		r = seccomp_load(ctx);
		if (r < 0)
			die("seccomp_load", -r);
	}
out:
	seccomp_release(ctx);
	return r < 0 ? SHIM_SETUP_FAILED : 0;
}

static int no_cgroup_mount(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "nofeature: cgroup needs root (a private mount namespace)\n");
		return SHIM_SKIP;
	}
	if (unshare(CLONE_NEWNS) < 0)
		return die("unshare(CLONE_NEWNS)", errno);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return die("making / private", errno);
	/* Every cgroup mount (v2, or v1's tmpfs with its hierarchies below):
	 * gone from this namespace's mountinfo, not only hidden. */
	while (umount2("/sys/fs/cgroup", MNT_DETACH) == 0)
		;
	if (errno != EINVAL)
		return die("umount /sys/fs/cgroup", errno);
	if (mount("tmpfs", "/sys/fs/cgroup", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755") < 0)
		return die("mounting a tmpfs on /sys/fs/cgroup", errno);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const features[] = {"landlock-enosys", "landlock-eopnotsupp", "userns", "seccomp",
					       "idmap-enosys",    "idmap-einval",        "cgroup"};
	size_t i;
	int r;

	if (argc < 3) {
		fprintf(stderr, "usage: nofeature landlock-enosys|landlock-eopnotsupp|userns|seccomp|"
				"idmap-enosys|idmap-einval|cgroup COMMAND [ARG...]\n");
		return 2;
	}
	for (i = 0; i < sizeof features / sizeof features[0]; i++)
		if (strcmp(argv[1], features[i]) == 0)
			break;
	if (i == sizeof features / sizeof features[0]) {
		fprintf(stderr, "nofeature: unknown feature `%s`\n", argv[1]);
		return 2;
	}
	r = strcmp(argv[1], "cgroup") == 0 ? no_cgroup_mount() : load_filter(argv[1]);
	if (r != 0)
		return r;
	execvp(argv[2], argv + 2);
	return die(argv[2], errno);
}
