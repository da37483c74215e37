/* SPDX-License-Identifier: MIT */
/*
 * sandbox.h - the namespace runtime: enforce a berth policy on one command
 * with user, mount, pid, ipc, uts, net and cgroup namespaces, Landlock,
 * seccomp and cgroups.  Its struct berth_runtime_ops is
 * berth_runtime_namespace (src/runtime/runtime.h, runtime_ns.c); the
 * berth_sandbox_*() calls are the same runtime called directly.  The options
 * and hooks (struct berth_runtime_opts) are the runtime interface's.
 */
#ifndef BERTH_SANDBOX_H
#define BERTH_SANDBOX_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../policy/policy.h"
#include "../runtime/runtime.h"
#include "measure.h"
#include "../util/error.h"

/* Kernel features the runtime uses; each can be forced off for tests. */
enum berth_feature {
	BERTH_FEAT_USERNS = 1 << 0,
	BERTH_FEAT_LANDLOCK = 1 << 1,
	BERTH_FEAT_SECCOMP = 1 << 2,
	BERTH_FEAT_CGROUP = 1 << 3,
	BERTH_FEAT_IDMAP = 1 << 4,
};

struct berth_features {
	bool userns;      /* a user namespace can be created */
	int userns_errno; /* why not */
	int landlock_abi; /* > 0, or -ENOSYS / -EOPNOTSUPP */
	bool seccomp;
	unsigned forced_off; /* enum berth_feature bits from BERTH_TEST_FORCE_OFF */
};

/*
 * berth_parse_force_off - parse the test-only switch, a comma list of
 * `userns`, `landlock`, `seccomp`, `cgroup`, `idmap`.  Returns the bits, or -1
 * with @err naming the bad word.  It checks the test build's
 * BERTH_TEST_LIMIT_SKEW too (berth_limits_test_skew_check), so that every
 * command refuses an unknown value before it starts.
 */
int berth_parse_force_off(const char *s, unsigned *bits, struct berth_error *err);

/*
 * berth_features_detect - what this kernel and caller can enforce, with the
 * @force_off bits reported as missing.
 */
void berth_features_detect(unsigned force_off, struct berth_features *f);

/*
 * berth_features_detect_opts - as berth_features_detect(); with
 * @probe_userns false, user namespaces are assumed available unless forced
 * off (no probe child is cloned: the caller's own clone is the probe, see
 * berth_sandbox_run()).
 */
void berth_features_detect_opts(unsigned force_off, bool probe_userns, struct berth_features *f);

/*
 * berth_sandbox_run - run @p->argv confined by @p and wait for it.
 * Prints one line per notice on stderr (what limits are applied and how,
 * what is not enforced in degraded mode) unless @o->quiet.
 * @status: receives the exit status berth should exit with: the command's,
 * 128+N when it was killed by signal N, 124 on --timeout, 126/127 when it could
 * not be executed / was not found.
 * Returns 0 when the command ran (whatever its status), or -1 with @err filled
 * when berth failed or refused before the command ran (err->status 125, or 2).
 * Nothing created for the run (mounts, cgroups, processes, placeholders,
 * @o->remove_at_end) survives the return, nor berth's own death (see
 * docs/security.md).  --network proxy needs @o->hooks.on_egress (the
 * supervisor's broker serves the listeners): without it the run is refused
 * (status 125) before anything is made.
 */
int berth_sandbox_run(const struct berth_policy *p, const struct berth_runtime_opts *o, int *status,
		      struct berth_error *err);

/*
 * The library API: the same sandbox, started and left running while the
 * caller talks to the command (resident apps).  berth's signal mask and
 * handlers are not touched: the caller owns them.
 */
struct berth_sandbox;

/*
 * berth_sandbox_start - steps 1-13 of docs/security.md for @p->argv, and
 * return once the command's execve(2) succeeded (sync 3).
 * @o must stay valid until berth_sandbox_free().  The caller closes its own
 * copies of @o->stdio_fd and @o->rpc_fd afterwards.
 * Returns 0 with *@out set, or -1 with @err filled: a refusal (status 125 or
 * 2) or the command could not be executed (126) or found (127).  On failure
 * nothing is left behind.
 */
int berth_sandbox_start(const struct berth_policy *p, const struct berth_runtime_opts *o,
			struct berth_sandbox **out, struct berth_error *err);

/* berth_sandbox_pidfd - a pidfd(2) of the sandbox's pid 1: readable (POLLIN)
 * once the sandbox has ended.  Owned by @sb. */
int berth_sandbox_pidfd(const struct berth_sandbox *sb);

/* berth_sandbox_enforced - fill @e for @sb. */
void berth_sandbox_enforced(const struct berth_sandbox *sb, struct berth_enforced *e);

/* berth_sandbox_pty_master - the master side of the command's
 * pseudo-terminal (runtime option want_pty), or -1.  Owned by @sb: closed by
 * berth_sandbox_free(); the caller may make it non-blocking and set its
 * window size (TIOCSWINSZ). */
int berth_sandbox_pty_master(const struct berth_sandbox *sb);
/* berth_sandbox_measure - the command's measurement of what is enforced
 * (docs/attest.md), or NULL when it sent none (it failed before). */
const struct berth_measure *berth_sandbox_measure(const struct berth_sandbox *sb);

/* berth_sandbox_run_id - the run's id (16 hex digits; names its cgroups). */
const char *berth_sandbox_run_id(const struct berth_sandbox *sb);

/*
 * berth_sandbox_wait - wait for the sandbox to end.  @status: the command's
 * exit status, or 128+N when it (or pid 1) was killed by signal N.
 * Returns 0, or -1 when it was already reaped.
 */
int berth_sandbox_wait(struct berth_sandbox *sb, int *status);

/* berth_sandbox_kill - SIGKILL the sandbox: everything in it dies. */
void berth_sandbox_kill(struct berth_sandbox *sb);

/* berth_sandbox_free - kill the sandbox if it still runs, reap it, remove its
 * cgroups and release @sb.  Safe on NULL. */
void berth_sandbox_free(struct berth_sandbox *sb);

/* One more process in a running container (berth_sandbox_enter). */
struct berth_enter {
	char *const *argv; /* NULL-terminated; argv[0] found on @envp's PATH */
	char *const *envp; /* the process's whole environment */
	const char *cwd;   /* in the container; NULL: the container's own */
	uint32_t uid, gid; /* inside: only the container's process.user is mapped */
	/* A pseudo-terminal of the container's devpts: its master is sent
	 * (SCM_RIGHTS, one byte) on @pty_sock before the execve, the slave is
	 * the process's controlling terminal and stdio.  Else the process has
	 * the caller's stdio. */
	bool want_pty;
	int pty_sock;
};

/*
 * berth_sandbox_enter - run @e->argv in the running container whose
 * sandbox pid 1 is @init (a host pid; the caller's knowledge, e.g. `berth
 * oci` state), confined as the container's command is: it joins the
 * cgroups berth made for the sandbox (from /proc/INIT/cgroup) and its
 * network, ipc, uts, mount, pid and user namespaces, becomes @e->uid:gid,
 * and gets no capabilities, NO_NEW_PRIVS, the container's Landlock rules
 * (TCP: no broker port, the stricter side for a proxied container), the
 * container's rlimits and umask, berth's seccomp filter and the
 * container's profile, then its execve.  No descriptor of the caller's but
 * stdio is open in it once it resolves @e->cwd (inside the container's
 * root, never through a /proc magic link) and @e->argv[0].  @p is the container's policy (with
 * ->container); invoked by root only.  The calling process is left in the
 * container's pid namespace for its children (setns(CLONE_NEWPID)): call
 * it from a process of its own (`berth oci exec`'s).
 * Returns the process's host pid once its execve succeeded (the caller
 * waits for it), or -1 with @err filled: EPERM not root (125), uid or gid
 * 4294967295 (2: "unchanged" to setresuid(2)), the pid 1 is gone (125), a
 * namespace or cgroup that cannot be joined, a working directory outside
 * the root (ELOOP, EXDEV) (125), the
 * command could not be run (126) or found (127; the hint names the PATH).
 */
pid_t berth_sandbox_enter(const struct berth_policy *p, pid_t init, const struct berth_enter *e,
			  struct berth_error *err);

/*
 * berth_test_pause - test-only (docs/security.md, "Mount sources"): when
 * the environment variable @var names a directory DIR of the caller's own
 * (absolute path), make DIR/paused, then wait (at most 60 s) for DIR/go.
 * Called where a racing sandbox has its window:
 *   BERTH_TEST_PAUSE_BEFORE_MOUNT     the sandbox, after berth's last check
 *                                     of the sources, before any mount;
 *   BERTH_TEST_PAUSE_BEFORE_LAUNCH    `berth spawn` / `berth fleet up`, as a
 *                                     session is launched, before its recheck;
 *   BERTH_TEST_PAUSE_BEFORE_EVIDENCE  `berth run`, after its last check,
 *                                     before the --evidence copy.
 * Only delays, takes no check away; once DIR/go exists it returns at once.
 * Never fails.
 */
void berth_test_pause(const char *var);

#endif
