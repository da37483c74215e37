/* SPDX-License-Identifier: MIT */
/*
 * sysdirs.h - the sandbox's default view of the filesystem, in one table.
 *
 * Every fixed directory of the sandbox's view is one row of berth_sysdirs:
 * how the namespace runtime makes it (mounts.c), the Landlock rights it gets
 * under `berth run` and for a resident app (landlock.c), and whether the
 * policy's canonical JSON attests it (policy.c: filesystem.system_ro and
 * filesystem.private_tmpfs, part of the digest).  Those four lists used to be
 * written out four times; where they differed, the difference is a column
 * here (docs/security.md, "The default view").
 *
 * Paths that depend on the run (the workspace, $HOME, --ro/--rw targets,
 * /evidence, an app's grants) are not rows: the runtime adds them.
 */
#ifndef BERTH_POLICY_SYSDIRS_H
#define BERTH_POLICY_SYSDIRS_H

#include <stdbool.h>
#include <stddef.h>

/* Access classes of the sandbox's view; the Landlock rights of each are in
 * src/sandbox/landlock.c (rights_for). */
enum berth_ll_access {
	BERTH_LL_NONE = 0, /* no rule (the path is reachable only through another rule, or not at all) */
	BERTH_LL_RO = 1,   /* read files and directories */
	BERTH_LL_RX = 2,   /* read and execute */
	BERTH_LL_RW = 3,   /* everything: read, write, create, remove, execute */
	BERTH_LL_DEV = 4,  /* read, write existing files, device ioctls (for /dev) */
	BERTH_LL_DIR = 5,  /* list the directory only */
	BERTH_LL_PROC = 6, /* read and write existing files (for /proc/self) */
};

/* How the namespace runtime makes a row's directory (src/sandbox/mounts.c). */
enum berth_sysdir_mount {
	BERTH_SYSDIR_ROOT, /* the sandbox root: a tmpfs, made read-only after the mounts */
	BERTH_SYSDIR_BIND, /* bound from the host, recursive, nosuid, nodev, read-only (system_tree; read-write
			     * only for an app under Landlock, which then denies every write); a symbolic link on
			     * the host (/bin -> usr/bin) is copied as that link */
	BERTH_SYSDIR_OWN,  /* an instance of its own made by its own step: proc_tree, sys_tree, dev_tree */
	BERTH_SYSDIR_TMPFS, /* a private tmpfs of the policy's tmp_size (private_dirs, dev_tree) */
	BERTH_SYSDIR_HOME,  /* a private tmpfs (or --persist-home) at the sandbox's $HOME, /home/USER: the
			     * runtime mounts it and adds its Landlock rule by that path, not by this row's */
};

/* Where the canonical JSON lists a row (policy.c). */
enum berth_sysdir_attest {
	BERTH_ATTEST_NONE,          /* not listed */
	BERTH_ATTEST_SYSTEM_RO,     /* filesystem.system_ro */
	BERTH_ATTEST_PRIVATE_TMPFS, /* filesystem.private_tmpfs */
};

struct berth_sysdir {
	const char *path; /* absolute, in the sandbox's view */
	enum berth_sysdir_mount mount;
	enum berth_ll_access ll_run;     /* Landlock rule under `berth run`, BERTH_LL_NONE: none */
	enum berth_ll_access ll_app;     /* Landlock rule of a resident app (berth.yml) */
	enum berth_sysdir_attest attest; /* in the policy's canonical JSON, in table order */
	bool optional;                   /* missing on some hosts (the runtimes skip any missing row) */
	const char *why;                 /* where the rule comes from */
};

/* The table, in the order the runtime mounts the BIND rows and the policy
 * lists the attested ones (that order is part of the digest). */
extern const struct berth_sysdir berth_sysdirs[];
extern const size_t berth_n_sysdirs;

#endif
