/* SPDX-License-Identifier: MIT */
/*
 * userns.h - user namespaces, uid/gid maps and idmapped mounts.
 * Sources: user_namespaces(7), mount_setattr(2),
 * Documentation/filesystems/idmappings.rst.
 */
#ifndef BERTH_USERNS_H
#define BERTH_USERNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../util/error.h"

/* Host identity of a sandbox started by root (never host root). */
#define BERTH_ROOT_HOST_UID 1610612736U
#define BERTH_ROOT_HOST_GID 1610612736U

struct berth_ids {
	uid_t in_uid; /* uid inside the sandbox */
	gid_t in_gid;
	uid_t host_uid; /* kuid the sandbox runs as on the host */
	gid_t host_gid;
	bool deny_setgroups; /* unprivileged: setgroups must be denied to write gid_map */
	/* A range instead of the single id (a container's id ranges, invoked by
	 * root): inside [map_in_*, + map_len) is host [map_host_*, + map_len),
	 * in_uid/host_uid one pair of it.  map_len 0: the single id. */
	uid_t map_in_uid, map_host_uid;
	gid_t map_in_gid, map_host_gid;
	uint32_t map_len;
};

/*
 * berth_userns_write_maps - write /proc/@pid/{setgroups,uid_map,gid_map}
 * with the single mapping in_uid -> host_uid (in_gid -> host_gid).
 * Returns 0 or -1 with @err filled.
 */
int berth_userns_write_maps(pid_t pid, const struct berth_ids *ids, struct berth_error *err);

/*
 * berth_idmapped_tree - open a detached copy of the mount tree at @fd (an
 * O_PATH descriptor berth opened once, docs/security.md "mount sources"), or
 * at @path when @fd is -1 (@path names it in messages either way)
 * (open_tree(OPEN_TREE_CLONE|AT_RECURSIVE)) in which files owned by
 * @owner_uid:@owner_gid appear owned by @ids->host_uid:@ids->host_gid (and files
 * the sandbox creates are stored as @owner_uid:@owner_gid), nosuid and nodev,
 * read-only when @ro.  Needs CAP_SYS_ADMIN in the initial user namespace.
 * Returns the mount fd, or -1 with @err filled (EINVAL/ENOTSUP: the filesystem
 * cannot be idmapped), or -2 with @err filled when no user namespace can be
 * created at all (clone(CLONE_NEWUSER) failed with EPERM, ENOSPC, EUSERS or
 * EINVAL: refused by a sysctl, a limit or a seccomp filter above berth).
 */
int berth_idmapped_tree(int fd, const char *path, uid_t owner_uid, gid_t owner_gid,
			const struct berth_ids *ids, bool ro, struct berth_error *err);

/*
 * berth_userns_probe - can this caller create a user namespace?  Forks a
 * child that calls unshare(CLONE_NEWUSER).  Returns 0, or the errno.
 */
int berth_userns_probe(void);

/*
 * berth_userns_inside_berth - does this process run inside a berth sandbox?
 * True when the kernel says new user namespaces are capped at 0
 * (/proc/sys/user/max_user_namespaces) and a seccomp filter is on
 * (/proc/self/status), as berth leaves every sandbox, and pid 1 is
 * berth's `berth-init`.  Only for messages: a process can fake none of the
 * kernel's answers, but the answer decides nothing that matters to
 * security (a refused user namespace stays refused either way).
 */
bool berth_userns_inside_berth(void);

/*
 * berth_userns_host_root - is this process root in the initial user
 * namespace (uid 0 with /proc/self/uid_map the identity "0 0 4294967295")?
 * Root inside another user namespace (rootless podman runs its runtime as
 * its namespace's uid 0) cannot map berth's own host ids nor make idmapped
 * mounts: it runs containers as an unprivileged caller does.
 */
bool berth_userns_host_root(void);

/*
 * berth_userns_outer_uid - @uid of this process's user namespace as its
 * parent namespace knows it (/proc/self/uid_map): the host's uid for a
 * process in one user namespace below the host's (rootless podman's
 * runtime, uid 0 there, is its user's uid outside); @uid itself in the
 * initial namespace.  An unmapped @uid gives the overflow uid 65534.
 */
unsigned berth_userns_outer_uid(unsigned uid);

/* What to do instead, for every command that would start a sandbox there. */
#define BERTH_NESTED_HINT                                                                                    \
	"run berth on the host: start `berth mcp` (or `berth run`, `rpc`, `spawn`, `test`) there and "       \
	"connect the "                                                                                       \
	"agent to it (an MCP server the agent's session connects to, or an app served by `berth dev` on "    \
	"the host)"

/* A step of the user-namespace setup that a security module may refuse. */
enum berth_userns_step {
	BERTH_STEP_MAPS,  /* writing /proc/PID/{setgroups,uid_map,gid_map} (the parent) */
	BERTH_STEP_MOUNT, /* mount, mount_setattr, pivot_root inside the new namespaces (the child) */
};

/*
 * What the host's security modules say about this process, for the message
 * of a refused step (never for a decision: berth refuses the run either way).
 */
struct berth_lsm_facts {
	int apparmor_restrict; /* /proc/sys/kernel/apparmor_restrict_unprivileged_userns: 1, 0, or -1 absent */
	char apparmor_label[128];  /* /proc/self/attr/apparmor/current (or attr/current): "" when none */
	bool selinux_enforcing;    /* /sys/fs/selinux/enforce is 1 */
	char selinux_context[128]; /* /proc/self/attr/current under SELinux, else "" */
	bool seccomp_filtered;     /* /proc/self/status Seccomp: 2 */
	bool landlock_active;      /* landlock is enabled in the kernel (ABI > 0) */
	int unshare_probe_errno; /* errno of unshare(CLONE_NEWUSER | CLONE_NEWNS) in a child, 0 it worked, -1 not probed */
	int mount_probe_errno;   /* then errno of a mount there, 0 when it worked, -1 not probed */
	bool root;               /* berth runs with euid 0 */
	int userns_clone_sysctl; /* /proc/sys/kernel/unprivileged_userns_clone (Debian): 1, 0, or -1 absent */
	long max_user_namespaces; /* /proc/sys/user/max_user_namespaces, or -1 unreadable */
	bool uid_unmapped;        /* /proc/self/uid_map is empty: a user namespace that maps no uid of ours */
};

/*
 * berth_lsm_facts_read - fill @f from /proc and /sys, and probe a mount in
 * a fresh user and mount namespace (a forked child, which is gone before
 * this returns).  Never fails: what cannot be read stays at its "absent"
 * value.
 */
void berth_lsm_facts_read(struct berth_lsm_facts *f);

/*
 * berth_lsm_refusal - the cause and fix of a refused @step that failed
 * with @errnum, given the facts @f: a message naming the security module
 * that refused it (AppArmor's unprivileged-userns restriction, a Landlock
 * domain above berth, SELinux, a seccomp filter above berth) and what to do
 * about it, as root and as a user, written into @buf (@len bytes).  A pure
 * function of its arguments.  Returns @buf, or NULL when @errnum is not
 * EPERM or EACCES or nothing in @f explains the refusal (a mount probe that
 * worked says it was not the environment; the caller keeps its own
 * message).
 */
const char *berth_lsm_refusal(enum berth_userns_step step, int errnum, const struct berth_lsm_facts *f,
			      char *buf, size_t len);

/*
 * berth_userns_clone_refusal - the cause and fix of clone(CLONE_NEWUSER)
 * failing with @errnum, given the facts @f: only the knob this kernel has
 * (Debian's kernel.unprivileged_userns_clone when it is 0, for users;
 * user.max_user_namespaces when it is 0 or @errnum is ENOSPC), a user
 * namespace around berth that maps no uid for it, or a seccomp filter
 * above berth.  A pure function; written into @buf (@len
 * bytes).  Returns @buf, or NULL when nothing in @f explains @errnum.
 */
const char *berth_userns_clone_refusal(int errnum, const struct berth_lsm_facts *f, char *buf, size_t len);

#endif
