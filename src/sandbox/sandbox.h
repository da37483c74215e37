/* SPDX-License-Identifier: MIT */
/*
 * sandbox.h - the namespace runtime: enforce a berth policy on one command.
 */
#ifndef BERTH_SANDBOX_H
#define BERTH_SANDBOX_H

#include <stdbool.h>

#include "../broker/broker.h"
#include "../policy/policy.h"
#include "home_files.h"
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
	bool userns;        /* a user namespace can be created */
	int userns_errno;   /* why not */
	int landlock_abi;   /* > 0, or -ENOSYS / -EOPNOTSUPP */
	bool seccomp;
	unsigned forced_off; /* enum berth_feature bits from BERTH_TEST_FORCE_OFF */
};

struct berth_runtime_opts {
	unsigned force_off;  /* enum berth_feature bits (test-only switch) */
	bool quiet;          /* do not print the one-line notices */
	/* When not NULL: a file (made 0600, never through a link) the
	 * trust-surface lines of the run's end are appended to, one
	 * `berth: warning: ...` line each, also when @quiet (agent sessions:
	 * `berth stop` shows them; trustscan.h). */
	const char *trust_log;
	/* The command's stdin, stdout and stderr (no pty then); when false it
	 * inherits berth's (and gets a pty when stdin is a terminal). */
	bool has_stdio;
	int stdio_fd[3];
	/* A connected socket given to the command as fd 3 (docs/protocol.md);
	 * the only descriptor beyond stdio that crosses execve. */
	bool has_rpc;
	int rpc_fd;
	/* Give the command a pseudo-terminal (opened inside the sandbox's own
	 * devpts, step 8) even when berth's stdin is not a terminal; with the
	 * library API the caller reads and writes its master through
	 * berth_sandbox_pty_master() (agent sessions).  Ignored with has_stdio. */
	bool want_pty;
	/* With want_pty: the pty's window size before the command starts
	 * (0: left as the kernel makes it, 0x0). */
	unsigned short pty_rows, pty_cols;
	/* Invoked by root: the sandbox runs as host uid/gid
	 * BERTH_ROOT_HOST_UID + identity (0 for `berth run`; each resident app
	 * has its own, see berth_app_identity()). */
	unsigned identity;
	/* The run's id (16 lowercase hex digits), or NULL: berth makes one.
	 * A caller that keeps state for the run (evidence, the run record)
	 * names it first. */
	const char *run_id;
	/* Called in the supervisor once the command measured what is enforced,
	 * right before its execve (docs/attest.md); may be NULL.  @m is valid
	 * during the call only.  Returning -1 (with @err filled) fails the run
	 * closed: the sandbox is killed and the run ends with @err (status 125)
	 * — for a record that could not be written. */
	int (*on_measured)(void *arg, const char *run_id, const struct berth_measure *m, struct berth_error *err);
	void *measured_arg;
	/* Called in the supervisor right after the sandbox's processes were
	 * cloned (the janitor and pid 1), before they are built; may be NULL.
	 * The place to start a thread whose work should overlap the set-up:
	 * a thread running while berth clones would leave its locks (malloc
	 * arenas, stdio, the dynamic loader) held for ever in the clone.  It
	 * may be called twice when the first attempt found user namespaces
	 * refused and berth retries degraded. */
	void (*on_spawned)(void *arg);
	void *spawned_arg;
	/* Called in the supervisor once the sandbox is built (sync 2) and
	 * before the command is let go to execve; may be NULL.  Work the
	 * caller must finish before the command's first instruction (records
	 * made durable in the audit trail) runs meanwhile on another thread
	 * and is joined here, so that it overlaps the sandbox's set-up.
	 * Returning -1 (with @err filled) fails the run closed: the command
	 * never starts, the sandbox is torn down, the run ends with @err. */
	int (*before_release)(void *arg, struct berth_error *err);
	void *release_arg;
	/* --network proxy: every decision of the egress broker (for the audit
	 * trail), called on the broker's thread (src/broker/broker.h: a
	 * refusal at once, before the client gets its 403; an allowed
	 * connection when it ends); may be NULL.  The broker has stopped when
	 * berth_sandbox_run() returns or berth_sandbox_free() is done. */
	berth_broker_decision_fn on_net_decision;
	void *net_decision_arg;
	/* Written into the fresh tmpfs $HOME once it is mounted, before the
	 * command starts: each file created (mode 0600, its directories 0700)
	 * by the sandbox identity, never through a symbolic link.  Ignored with
	 * a persistent home (policy home_dir: the caller seeds that one) and
	 * without a mount namespace (degraded: $HOME is the workspace).  Must
	 * stay valid until berth_sandbox_start()/run() returns. */
	const struct berth_home_file *home_files;
	size_t n_home_files;
};

/*
 * berth_parse_force_off - parse the test-only switch, a comma list of
 * `userns`, `landlock`, `seccomp`, `cgroup`, `idmap`.  Returns the bits, or -1
 * with @err naming the bad word.
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
 * Nothing created for the run (mounts, cgroups, processes, placeholders)
 * survives the return, nor berth's own death (see docs/security.md).
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

/* What the kernel enforces for a started sandbox (as decided at start:
 * a feature missing here was refused unless --allow-degraded). */
struct berth_enforced {
	bool namespaces;  /* user, mount, pid, ipc, uts (and net) namespaces */
	int landlock_abi; /* the ABI the ruleset was built for; 0: no Landlock */
	bool seccomp;     /* the seccomp filter */
};

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
