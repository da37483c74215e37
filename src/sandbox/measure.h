/* SPDX-License-Identifier: MIT */
/*
 * measure.h - what the kernel enforces on the command, measured by the
 * command's own process after every restriction is applied and right before
 * execve(2) (docs/attest.md).
 *
 * The measurement is plain data (no pointers) so that it crosses the sync
 * socket in one datagram.  The command fills the namespace, Landlock,
 * seccomp, capability, NO_NEW_PRIVS and rlimit fields; the supervisor adds
 * the cgroup limits it reads back from the run's cgroup directories (the
 * command cannot see them: its cgroup namespace and /sys hide them).
 *
 * Sources: namespaces(7) (/proc/PID/ns/NAME identity is device + inode),
 * Documentation/userspace-api/landlock.rst (LANDLOCK_CREATE_RULESET_VERSION),
 * proc(5) (/proc/PID/status: Seccomp, Seccomp_filters, Cap*, NoNewPrivs),
 * getrlimit(2), Documentation/admin-guide/cgroup-v2.rst and cgroup-v1/.
 */
#ifndef BERTH_MEASURE_H
#define BERTH_MEASURE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "../policy/policy.h"
#include "../util/error.h"

/* The namespaces berth measures, in this order. */
enum berth_ns {
	BERTH_NS_USER = 0,
	BERTH_NS_MNT,
	BERTH_NS_PID,
	BERTH_NS_IPC,
	BERTH_NS_UTS,
	BERTH_NS_NET,
	BERTH_NS_CGROUP,
	BERTH_NS_COUNT,
};

/* berth_ns_names[i] - "user", "mnt", ... as in /proc/self/ns/. */
extern const char *const berth_ns_names[BERTH_NS_COUNT];

/* Landlock as measured by the probe (see berth_measure_landlock_probe). */
enum berth_ll_status {
	BERTH_LL_UNKNOWN = 0, /* the probe could not decide */
	BERTH_LL_IN_FORCE,    /* the probe was refused with EACCES: a ruleset is in force */
	BERTH_LL_NOT_IN_FORCE /* the probe reached the capability check (EPERM): no ruleset */
};

struct berth_measure {
	bool valid; /* filled by the command */
	/* namespaces: device and inode of /proc/self/ns/NAME; 0 = unreadable */
	uint64_t ns_dev[BERTH_NS_COUNT], ns_ino[BERTH_NS_COUNT];
	uint64_t parent_ns_dev[BERTH_NS_COUNT], parent_ns_ino[BERTH_NS_COUNT]; /* berth's, before clone */
	/* Landlock */
	int landlock_abi;   /* LANDLOCK_CREATE_RULESET_VERSION in the command, or -errno */
	int landlock_probe; /* enum berth_ll_status */
	int landlock_probe_errno;
	int landlock_ruleset_abi; /* the ABI berth built its ruleset for (0: none), from berth */
	/* seccomp, from /proc/self/status; -1 = line absent */
	int seccomp_mode;
	int seccomp_filters;
	char seccomp_digest[65]; /* SHA-256 of the BPF program berth loaded, from berth; "" none */
	/* capabilities and NO_NEW_PRIVS, from /proc/self/status */
	uint64_t cap_inh, cap_prm, cap_eff, cap_bnd, cap_amb;
	bool caps_read;
	int no_new_privs; /* -1 = line absent */
	/* rlimits of the command (RLIM_INFINITY as UINT64_MAX) */
	uint64_t rlim_nofile, rlim_as, rlim_nproc, rlim_core;
	/* limits read back by the supervisor */
	int limits_mode; /* enum berth_limits_mode */
	bool cg_memory_read, cg_pids_read, cg_cpu_read;
	uint64_t cg_memory;                         /* bytes; UINT64_MAX = "max" */
	uint64_t cg_pids;                           /* UINT64_MAX = "max" */
	uint64_t cg_cpu_quota_us, cg_cpu_period_us; /* quota UINT64_MAX = "max" */
	int cpus_affinity; /* CPUs in the command's affinity mask (0 = not measured) */
	/* the /tmp tmpfs, statfs(2) in the command: f_blocks * f_bsize bytes;
	 * 0 = not measured (not a tmpfs, or unreadable) */
	uint64_t tmp_bytes;
	uint64_t page_size; /* sysconf(_SC_PAGESIZE): the unit the kernel rounds limits to */
	/* Invoked by root: the workspace is an idmapped mount, so files keep
	 * their host owner (from /proc/self/mountinfo, option "idmapped"). */
	bool idmap_asked;       /* from berth: root with user namespaces */
	int workspace_idmapped; /* 1 yes, 0 no, -1 not measured */
	/* The runtime that enforced, set by berth on the host side of the
	 * sync socket or channel (never taken from the sandbox's bytes):
	 * "namespace", or "vm" with the guest as it was booted. */
	char runtime[16];
	char vm_kernel_sha256[65];    /* vmlinuz as verified before the boot */
	char vm_initramfs_sha256[65]; /* initramfs.cpio as verified before the boot */
	char vm_accel[8];             /* "tcg" or "kvm" */
	char vm_guest_kernel[65];     /* uname -r in the guest (its HELLO) */
};

/* The verdict (docs/attest.md has the exact rules). */
enum berth_verdict {
	BERTH_VERDICT_ENFORCED = 0,
	BERTH_VERDICT_PARTIAL,
	BERTH_VERDICT_NOT_ENFORCED,
};

/* berth_verdict_name - "ENFORCED", "PARTIAL" or "NOT_ENFORCED". */
const char *berth_verdict_name(enum berth_verdict v);

/*
 * berth_measure_parent_ns - fill the parent_ns_* fields with berth's own
 * namespaces (stat(2) of /proc/self/ns/NAME).  Never fails: an unreadable
 * link stays 0 and the namespace then counts as not separated.
 */
void berth_measure_parent_ns(struct berth_measure *m);

/*
 * berth_measure_landlock_probe - in the command, after Landlock and before
 * seccomp: mknodat(2) of a character device (1:3) in @dir (a directory the
 * mount allows writing, e.g. /tmp).  berth's rulesets never grant
 * LANDLOCK_ACCESS_FS_MAKE_CHAR, and Landlock's path hook runs before the
 * CAP_MKNOD check of vfs_mknod(): EACCES means a ruleset refused it, EPERM
 * that the call got past any ruleset to the capability check.  Nothing is
 * ever created (the command has no CAP_MKNOD).  When @dir is not writable
 * by the caller (access(2), which Landlock does not hook) the result would
 * be ambiguous and is UNKNOWN.  Fills landlock_abi, landlock_probe and
 * landlock_probe_errno.  Allocation-free.
 */
void berth_measure_landlock_probe(struct berth_measure *m, const char *dir);

/*
 * berth_measure_self - in the command, after seccomp and right before
 * execve: namespaces, seccomp mode and filter count, capability sets,
 * NO_NEW_PRIVS (one read of /proc/self/status), rlimits, the CPU affinity
 * mask, the size of the /tmp tmpfs (statfs(2)) and the page size, and when m->idmap_asked whether /workspace is an idmapped mount
 * (/proc/self/mountinfo, proc(5)).
 * Allocation-free; sets m->valid.
 */
void berth_measure_self(struct berth_measure *m);

/*
 * berth_measure_cgroups - in the supervisor: read the limits back from the
 * run's cgroup directories @dirs (memory.max or memory.limit_in_bytes,
 * pids.max, cpu.max or cpu.cfs_quota_us + cpu.cfs_period_us).  Fields it
 * cannot read stay unset (cg_*_read false).
 */
void berth_measure_cgroups(struct berth_measure *m, int mode, char *const dirs[], int n_dirs);

/*
 * berth_measure_verdict - compare @m with what @p asked for.
 * @reasons: if not NULL, receives a new JSON array of one string per
 * shortfall (empty for ENFORCED).
 * Returns the verdict (docs/attest.md, "Verdict").
 */
enum berth_verdict berth_measure_verdict(const struct berth_measure *m, const struct berth_policy *p,
					 json_t **reasons);

/*
 * berth_measure_to_json - the measurement as a JSON object (docs/attest.md,
 * "enforced"), with the verdict and its reasons for @p.
 * Returns a new reference, or NULL with @err filled (ENOMEM).
 */
json_t *berth_measure_to_json(const struct berth_measure *m, const struct berth_policy *p,
			      struct berth_error *err);

/*
 * berth_measure_verdict_json - recompute the verdict from an "enforced"
 * object (as written by berth_measure_to_json) and the policy facts it
 * records (`asked`), so that a verifier needs only the record.
 * Returns the verdict, or -1 when @enforced lacks a field (@err names it).
 */
int berth_measure_verdict_json(const json_t *enforced, json_t **reasons, struct berth_error *err);

#endif
