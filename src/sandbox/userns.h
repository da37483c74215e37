/* SPDX-License-Identifier: MIT */
/*
 * userns.h - user namespaces, uid/gid maps and idmapped mounts.
 * Sources: user_namespaces(7), mount_setattr(2),
 * Documentation/filesystems/idmappings.rst.
 */
#ifndef BERTH_USERNS_H
#define BERTH_USERNS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../util/error.h"

/* Host identity of a sandbox started by root (never host root). */
#define BERTH_ROOT_HOST_UID 1610612736U
#define BERTH_ROOT_HOST_GID 1610612736U

struct berth_ids {
	uid_t in_uid;   /* uid inside the sandbox */
	gid_t in_gid;
	uid_t host_uid; /* kuid the sandbox runs as on the host */
	gid_t host_gid;
	bool deny_setgroups; /* unprivileged: setgroups must be denied to write gid_map */
};

/*
 * berth_userns_write_maps - write /proc/@pid/{setgroups,uid_map,gid_map}
 * with the single mapping in_uid -> host_uid (in_gid -> host_gid).
 * Returns 0 or -1 with @err filled.
 */
int berth_userns_write_maps(pid_t pid, const struct berth_ids *ids, struct berth_error *err);

/*
 * berth_idmapped_tree - open a detached copy of the mount tree at @path
 * (open_tree(OPEN_TREE_CLONE|AT_RECURSIVE)) in which files owned by
 * @owner_uid:@owner_gid appear owned by @ids->host_uid:@ids->host_gid (and files
 * the sandbox creates are stored as @owner_uid:@owner_gid), nosuid and nodev,
 * read-only when @ro.  Needs CAP_SYS_ADMIN in the initial user namespace.
 * Returns the mount fd, or -1 with @err filled (EINVAL/ENOTSUP: the filesystem
 * cannot be idmapped).
 */
int berth_idmapped_tree(const char *path, uid_t owner_uid, gid_t owner_gid, const struct berth_ids *ids,
			bool ro, struct berth_error *err);

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

/* What to do instead, for every command that would start a sandbox there. */
#define BERTH_NESTED_HINT                                                                                        \
	"run berth on the host: start `berth mcp` (or `berth run`, `rpc`, `spawn`, `test`) there and connect the " \
	"agent to it (an MCP server the agent's session connects to, or an app served by `berth dev` on the host)"

#endif
