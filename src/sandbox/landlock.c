/* SPDX-License-Identifier: MIT */
/*
 * landlock.c - Landlock, with our own copies of the UAPI definitions newer
 * than Debian 12's 6.1 headers (ABI 3..7).
 */
#include "landlock.h"

#include <errno.h>
#include <linux/openat2.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../util/cleanup.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_RULE_NET_PORT 2

/* Filesystem rights (include/uapi/linux/landlock.h). */
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13)     /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14)  /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#define LL_NET_BIND_TCP (1ULL << 0)  /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)
/* landlock_restrict_self() flags (ABI 7). */
#define LL_RESTRICT_SELF_LOG_SAME_EXEC_OFF (1U << 0)
#define LL_RESTRICT_SELF_LOG_NEW_EXEC_ON (1U << 1)
#define LL_RESTRICT_SELF_LOG_SUBDOMAINS_OFF (1U << 2)

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

struct ll_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
};

#define LL_FS_READ (LL_FS_READ_FILE | LL_FS_READ_DIR)
#define LL_FS_ALL_V1                                                                                         \
	(LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_REMOVE_DIR |            \
	 LL_FS_REMOVE_FILE | LL_FS_MAKE_CHAR | LL_FS_MAKE_DIR | LL_FS_MAKE_REG | LL_FS_MAKE_SOCK |           \
	 LL_FS_MAKE_FIFO | LL_FS_MAKE_BLOCK | LL_FS_MAKE_SYM)

int berth_landlock_view_rules(bool app, struct berth_ll_rule *r, int max)
{
	int n = 0;

	for (size_t i = 0; i < berth_n_sysdirs && n < max; i++) {
		enum berth_ll_access a = app ? berth_sysdirs[i].ll_app : berth_sysdirs[i].ll_run;
		if (a != BERTH_LL_NONE)
			r[n++] = (struct berth_ll_rule){berth_sysdirs[i].path, a};
	}
	return n;
}

int berth_landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);

	return abi < 0 ? -errno : (int)abi;
}

static uint64_t handled_fs(int abi)
{
	uint64_t fs = LL_FS_ALL_V1;

	if (abi >= 2)
		fs |= LL_FS_REFER;
	if (abi >= 3)
		fs |= LL_FS_TRUNCATE;
	if (abi >= 5)
		fs |= LL_FS_IOCTL_DEV;
	return fs;
}

static uint64_t rights_for(enum berth_ll_access a, uint64_t handled)
{
	uint64_t r;

	switch (a) {
	case BERTH_LL_NONE:
		r = 0; /* never the default's everything */
		break;
	case BERTH_LL_RO:
		r = LL_FS_READ;
		break;
	case BERTH_LL_RX:
		r = LL_FS_READ | LL_FS_EXECUTE;
		break;
	case BERTH_LL_DEV:
		r = LL_FS_READ | LL_FS_WRITE_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV;
		break;
	case BERTH_LL_PROC:
		r = LL_FS_READ | LL_FS_WRITE_FILE | LL_FS_TRUNCATE;
		break;
	case BERTH_LL_DIR:
		r = LL_FS_READ_DIR;
		break;
	case BERTH_LL_RW:
	default:
		/* Device nodes cannot be made (nodev mounts, no CAP_MKNOD) and are
		 * not granted either. */
		r = handled & ~(LL_FS_MAKE_CHAR | LL_FS_MAKE_BLOCK | LL_FS_IOCTL_DEV);
		break;
	}
	return r & handled;
}

unsigned berth_landlock_log_flags(int abi)
{
	/* The kernel logs a domain's denials only before the execve that
	 * follows landlock_restrict_self() by default: the command's own
	 * denials are what berth reports (docs/denials.md), so they are logged
	 * after it (NEW_EXEC_ON).  Those of berth's own code before the execve
	 * stay logged: the one it makes, the Landlock probe's, names the
	 * domain to the supervisor before the command's first instruction.  A
	 * ruleset the command stacks on ours logs nothing (SUBDOMAINS_OFF): the
	 * host's audit log gets the sandbox's refusals by berth's policy, not
	 * those of a policy the sandbox wrote.  Nothing is logged while the
	 * kernel's audit is off (audit_enabled). */
	return abi >= 7 ? LL_RESTRICT_SELF_LOG_NEW_EXEC_ON | LL_RESTRICT_SELF_LOG_SUBDOMAINS_OFF : 0;
}

static unsigned landlock_log_flags(int abi)
{
	return berth_landlock_log_flags(abi);
}

int berth_landlock_apply(int abi, const struct berth_ll_rule *rules, int n_rules, bool deny_tcp,
			 const uint16_t *connect_ports, int n_ports, struct berth_error *err)
{
	struct ll_ruleset_attr attr = {.handled_access_fs = handled_fs(abi)};
	cleanup_close int rfd = -1;

	if (abi < 1)
		return berth_err(err, ENOSYS, "landlock is not available");
	if (abi >= 4 && deny_tcp)
		attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
	if (abi >= 6)
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
	/* Kernels before ABI 4 only know the first field; ours is larger but the
	 * trailing fields are zero there, which the kernel accepts. */
	rfd = (int)syscall(SYS_landlock_create_ruleset, &attr,
			   abi >= 6   ? sizeof attr
			   : abi >= 4 ? offsetof(struct ll_ruleset_attr, scoped)
				      : sizeof attr.handled_access_fs,
			   0);
	if (rfd < 0)
		return berth_err(err, errno, "cannot create the landlock ruleset (abi %d)", abi);
	for (int i = 0; i < n_rules; i++) {
		struct ll_path_beneath_attr pb = {.allowed_access =
						      rights_for(rules[i].access, attr.handled_access_fs)};
		/* Never through a symlink: a rule names the path berth means, not
		 * whatever a link planted there (by an earlier run of an app in
		 * its own workspace) points to.  A symlink on the way (/bin ->
		 * usr/bin) or a missing path gets no rule. */
		struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
		cleanup_close int fd = (int)syscall(SYS_openat2, AT_FDCWD, rules[i].path, &how, sizeof how);

		if (fd < 0) {
			if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR)
				continue;
			return berth_err(err, errno, "landlock rule for `%s`", rules[i].path);
		}
		pb.parent_fd = fd;
		/* Rights that only make sense on directories are refused on files. */
		if (syscall(SYS_landlock_add_rule, rfd, LL_RULE_PATH_BENEATH, &pb, 0) < 0) {
			if (errno == EINVAL) {
				pb.allowed_access &= LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE |
						     LL_FS_TRUNCATE | LL_FS_IOCTL_DEV;
				if (syscall(SYS_landlock_add_rule, rfd, LL_RULE_PATH_BENEATH, &pb, 0) == 0)
					continue;
			}
			return berth_err(err, errno, "cannot add the landlock rule for `%s`", rules[i].path);
		}
	}
	/* The only TCP a proxied sandbox may open: to its own broker listeners
	 * (LANDLOCK_RULE_NET_PORT, ABI 4). */
	for (int i = 0; deny_tcp && abi >= 4 && i < n_ports; i++) {
		struct ll_net_port_attr np = {.allowed_access = LL_NET_CONNECT_TCP, .port = connect_ports[i]};
		if (syscall(SYS_landlock_add_rule, rfd, LL_RULE_NET_PORT, &np, 0) < 0)
			return berth_err(err, errno, "cannot add the landlock rule for TCP port %u",
					 connect_ports[i]);
	}
	if (syscall(SYS_landlock_restrict_self, rfd, landlock_log_flags(abi)) < 0)
		return berth_err(err, errno, "cannot enforce the landlock ruleset");
	return 0;
}
