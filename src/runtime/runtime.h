/* SPDX-License-Identifier: MIT */
/*
 * runtime.h - the interface between berth's supervisor and a runtime: the
 * thing that enforces one policy on one command (docs/architecture.md).
 *
 * The policy (src/policy/policy.h: plain data, canonical JSON, digest) is a
 * runtime's only input about what to enforce; struct berth_runtime_opts says
 * how the command is wired (stdio, pty, RPC channel, run id) and carries the
 * hooks through which the supervisor's services (audit trail, egress broker,
 * run record) attach.  A runtime calls every hook at the same point of its
 * lifecycle, listed in order in struct berth_run_hooks; it never calls up
 * into the supervisor in any other way, and includes nothing from
 * src/supervisor, src/session, src/audit or src/broker (tests/unit/layers.sh).
 *
 * Runtimes: "namespace" (src/sandbox: user, mount, pid, net... namespaces,
 * Landlock, seccomp, cgroups) is the first.  Another one is a new directory
 * of files that defines a `const struct berth_runtime_ops` and one line in
 * src/runtime/runtimes.def.
 */
#ifndef BERTH_RUNTIME_H
#define BERTH_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../policy/policy.h"
#include "../util/error.h"
#include "home_files.h"

/* The command's own measurement of what is enforced (docs/attest.md);
 * defined by src/sandbox/measure.h, which the supervisor includes to read it. */
struct berth_measure;
struct berth_journal;

/* At most this many "transparent" listeners (one per declared port, see
 * src/sandbox/netns.h) a runtime hands over. */
#define BERTH_EGRESS_TRANSPARENT_MAX BERTH_POLICY_PORTS_MAX

/*
 * --network proxy: the listening sockets a runtime made inside the
 * sandbox's network (reachable from the command, served from outside it).
 * The supervisor's egress broker serves them (src/supervisor/run_egress.c);
 * the runtime only makes them and publishes their addresses to the command
 * (HTTP_PROXY, resolv.conf...).  Each descriptor is valid (>= 0) or -1
 * (none of that kind).
 *
 * A runtime whose command's connections do not reach a socket of this
 * host's (the vm runtime: its sandbox is in the guest, its connections
 * cross the channel) gives -1 for the listeners and instead:
 *   streams     an AF_UNIX SOCK_SEQPACKET socket; each message is one
 *               struct berth_egress_stream with exactly one descriptor
 *               (SCM_RIGHTS), a connected stream socket carrying that
 *               connection's bytes as the listener of its kind would have
 *               accepted them;
 *   dns_tagged  an AF_UNIX SOCK_DGRAM socket; each datagram is a 4-byte
 *               tag then one DNS query, each answer the same tag then the
 *               answer (the resolver's, as on @dns).
 * The broker decides on these exactly as on the listeners' connections.
 */
struct berth_egress_listeners {
	int http;   /* TCP, an HTTP proxy (CONNECT, absolute-form http://) */
	int socks5; /* TCP, SOCKS5 (socks5h://) */
	/* TCP, one per declared port: a connection that meant its destination
	 * (the sandbox's route for every non-local address leads here) */
	int transparent[BERTH_EGRESS_TRANSPARENT_MAX];
	size_t n_transparent;
	int dns;        /* UDP, the sandbox's resolver */
	int streams;    /* see above; -1 none */
	int dns_tagged; /* see above; -1 none */
};

/* The kinds of struct berth_egress_stream (src/broker/broker.h's kinds
 * have the same values; run_egress.c checks it at build time). */
enum berth_egress_kind {
	BERTH_EGRESS_HTTP = 1,
	BERTH_EGRESS_SOCKS5 = 2,
	BERTH_EGRESS_TRANSPARENT = 3,
};

/* One connection handed over on berth_egress_listeners.streams. */
struct berth_egress_stream {
	uint32_t kind; /* enum berth_egress_kind */
	/* BERTH_EGRESS_TRANSPARENT: the destination the connection was made
	 * to, as the runtime was told it (the vm runtime: the guest's claim,
	 * decided by the broker as any request for it); 0 and "" otherwise */
	uint32_t port; /* 1..65535 */
	char dst[64];  /* an IPv4 or IPv6 address's text, NUL-terminated */
};

/*
 * The supervisor's attach points.  Each hook may be NULL; each gets @arg.
 * A runtime calls them in this order, on the thread that called
 * berth_runtime_ops.start() or .run() (the supervisor's), never from inside
 * the sandbox:
 *
 *   1. on_spawned      after the sandbox's processes were cloned, before they
 *                      are built.  The place to start a thread whose work
 *                      overlaps the set-up: a thread running while a runtime
 *                      clones would leave its locks (malloc arenas, stdio,
 *                      the dynamic loader) held for ever in the clone.  It may
 *                      be called twice when a first attempt found user
 *                      namespaces refused and the runtime retries degraded
 *                      (the hook must start its work once).
 *   1b. on_terminal    sync 2, with want_pty only, right before
 *                      before_release: @master is the command's pty master
 *                      (the runtime's: valid until free(); dup it to keep
 *                      it), for a caller that hands it on before the command
 *                      starts (`berth oci create --console-socket`).
 *   2. before_release  sync 2: the sandbox is built, the command waits for
 *                      the go.  Work the supervisor must finish before the
 *                      command's first instruction (run.start and policy made
 *                      durable) is joined here.  -1 (with @err) fails the run
 *                      closed: the command never starts, the sandbox is torn
 *                      down, start()/run() fail with @err.
 *   3. on_egress       sync 2, --network proxy only, after before_release
 *                      and before the go: the listeners of struct
 *                      berth_egress_listeners.  The hook owns every
 *                      descriptor from then on, whatever it returns.  -1
 *                      (with @err) fails the run closed: the command never
 *                      starts, start()/run() fail with @err.  A
 *                      --network proxy policy with no on_egress hook is
 *                      refused before anything is made (nothing would serve
 *                      the listeners).
 *   3b. on_notify      sync 3, with the ask option only, right before
 *                      on_measured: @listener is the seccomp user
 *                      notification listener of the command's open calls
 *                      (docs/ask.md), which the hook owns from then on,
 *                      whatever it returns; @m as for on_measured.  No
 *                      open(2) of the command's completes until the
 *                      listener is served.  -1 (with @err) fails the run
 *                      closed, as on_measured.  The ask option with no
 *                      on_notify hook is refused before anything is made.
 *   4. on_measured     sync 3: the command measured what is enforced, right
 *                      before its execve; @m is valid during the call only.
 *                      -1 (with @err) fails the run closed: the sandbox is
 *                      killed and the run ends with @err (status 125).
 *
 * The egress broker's decisions, the audit queue and the run's end are the
 * supervisor's business (src/supervisor/run.h): after start()/run() returns
 * (or free() for a started sandbox) no hook is called again.
 */
struct berth_run_hooks {
	void *arg;
	void (*on_spawned)(void *arg);
	void (*on_terminal)(void *arg, int master);
	int (*before_release)(void *arg, struct berth_error *err);
	int (*on_egress)(void *arg, const struct berth_egress_listeners *l, struct berth_error *err);
	int (*on_notify)(void *arg, int listener, const struct berth_measure *m, struct berth_error *err);
	int (*on_measured)(void *arg, const char *run_id, const struct berth_measure *m,
			   struct berth_error *err);
};

/* How the command is wired and what the supervisor attaches. */
struct berth_runtime_opts {
	unsigned force_off; /* namespace runtime: enum berth_feature bits (test-only switch) */
	bool quiet;         /* do not print the one-line notices */
	/* When not NULL: a file (made 0600, never through a link) the
	 * trust-surface lines of the run's end are appended to, one
	 * `berth: warning: ...` line each, also when @quiet (agent sessions:
	 * `berth stop` shows them; src/sandbox/trustscan.h). */
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
	 * devpts) even when berth's stdin is not a terminal; the caller reads
	 * and writes its master through berth_rt_pty_master() (agent
	 * sessions).  Ignored with has_stdio. */
	bool want_pty;
	/* With want_pty: the pty's window size before the command starts
	 * (0: left as the kernel makes it, 0x0). */
	unsigned short pty_rows, pty_cols;
	/* Invoked by root: the sandbox runs as host uid/gid
	 * BERTH_ROOT_HOST_UID + identity (0 for `berth run`; each resident app
	 * has its own, see berth_app_identity()). */
	unsigned identity;
	/* The run's id (16 lowercase hex digits), or NULL: the runtime makes
	 * one.  A caller that keeps state for the run (evidence, the run
	 * record, the audit trail) names it first. */
	const char *run_id;
	/* The run's journal (util/journal.h), or NULL: the runtime names in it
	 * every host-side thing it makes (cgroup directories) before making it,
	 * and its janitor holds the journal's lock until it has cleaned up, so
	 * that the next berth repairs what a SIGKILL left (`berth run`). */
	const struct berth_journal *journal;
	struct berth_run_hooks hooks;
	/* `berth run --ask` (docs/ask.md): the command's open(2), openat(2),
	 * openat2(2) and creat(2) wait on a seccomp user notification
	 * listener handed to hooks.on_notify (a filter after berth's own, with
	 * SECCOMP_FILTER_FLAG_NEW_LISTENER).  false: no listener, no cost. */
	bool ask;
	/* Written into the fresh tmpfs $HOME once it is mounted, before the
	 * command starts: each file created (mode 0600, its directories 0700)
	 * by the sandbox identity, never through a symbolic link.  Ignored with
	 * a persistent home (policy home_dir: the caller seeds that one) and
	 * without a mount namespace (degraded: $HOME is the workspace).  Must
	 * stay valid until start()/run() returns. */
	const struct berth_home_file *home_files;
	size_t n_home_files;
	/* Host paths (absolute; directory trees, removed with everything in
	 * them, src/util/rmtree.h) that live as long as the run: the runtime
	 * removes them when the run ends, and also when berth itself was killed
	 * (SIGKILL) before it could (the namespace runtime's janitor).  `berth
	 * run --evidence`: the run's copy of the evidence.  Must stay valid
	 * until free()/run() returns. */
	const char *const *remove_at_end;
	size_t n_remove_at_end;
	/* Policy review (docs/review.md): where the runtime stores, at sync 2,
	 * a descriptor of the review layer's tmpfs (its root holds upper/, the
	 * overlay's upper directory), which the caller then owns and reads
	 * once the run has ended (src/supervisor/review.h); -1 stays when
	 * none was made.  A runtime that cannot make the layer refuses the
	 * policy in check().  NULL: the caller takes no change set (refused
	 * with review). */
	int *review_fd;
};

/* What the kernel enforces for a started sandbox (as decided at start: a
 * feature missing here was refused unless --allow-degraded). */
struct berth_enforced {
	bool namespaces;  /* user, mount, pid, ipc, uts (and net) namespaces */
	int landlock_abi; /* the ABI the ruleset was built for; 0: no Landlock */
	bool seccomp;     /* the seccomp filter */
};

struct berth_runtime_ops;

/*
 * A started sandbox of any runtime.  Each runtime's own state begins with
 * this member, so that the berth_rt_*() calls below reach its ops.
 */
struct berth_rt {
	const struct berth_runtime_ops *ops;
};

/*
 * A runtime.  Every function is required (none may be NULL); the errors
 * are those documented for the namespace runtime in src/sandbox/sandbox.h
 * (berth_sandbox_*), which a new runtime follows.
 */
struct berth_runtime_ops {
	const char *name; /* "namespace"; what --runtime and messages name */
	/*
	 * check - whether this runtime can run @p (already valid:
	 * berth_policy_validate) on this host, before anything is made or
	 * recorded: `berth run` and `--dry-run` call it after the rules.
	 * @o: the options the run will have (the test-only force_off bits),
	 * or NULL.  Returns 0, or -1 with @err filled naming what cannot be
	 * enforced (status 2 when the policy asks for more than this runtime
	 * can give, 125 when this host lacks it).  A runtime other than the
	 * default names itself in the message ("the oci runtime cannot ...").
	 */
	int (*check)(const struct berth_policy *p, const struct berth_runtime_opts *o,
		     struct berth_error *err);
	/* run - start @p->argv, relay its terminal and signals, wait for it,
	 * tear it all down (`berth run`); *@status as berth_sandbox_run(). */
	int (*run)(const struct berth_policy *p, const struct berth_runtime_opts *o, int *status,
		   struct berth_error *err);
	/* start - start @p->argv and return once it runs (sync 3); the caller
	 * owns signals.  *@out on success; nothing left behind on failure. */
	int (*start)(const struct berth_policy *p, const struct berth_runtime_opts *o, struct berth_rt **out,
		     struct berth_error *err);
	int (*pidfd)(const struct berth_rt *rt);
	int (*wait)(struct berth_rt *rt, int *status);
	void (*kill)(struct berth_rt *rt);
	void (*free)(struct berth_rt *rt);
	void (*enforced)(const struct berth_rt *rt, struct berth_enforced *e);
	const struct berth_measure *(*measure)(const struct berth_rt *rt);
	int (*pty_master)(const struct berth_rt *rt);
	const char *(*run_id)(const struct berth_rt *rt);
};

/* The runtimes of this build (src/runtime/runtimes.def). */
#define BERTH_RUNTIME(id) extern const struct berth_runtime_ops berth_runtime_##id;
#include "runtimes.def"
#undef BERTH_RUNTIME

/*
 * berth_runtime_find - the runtime called @name, or, when @name is NULL,
 * the default one ("namespace").  Returns NULL with @err filled (status 2)
 * when there is no such runtime ("unknown runtime `NAME`; this berth has:
 * namespace, vm") or @name is empty ("empty runtime name; this berth has:
 * namespace, vm", never the default in its place).
 */
const struct berth_runtime_ops *berth_runtime_find(const char *name, struct berth_error *err);

/* berth_runtime_default - the runtime berth uses when none is named. */
const struct berth_runtime_ops *berth_runtime_default(void);

/*
 * The calls on a started sandbox, through its runtime (the semantics of
 * berth_sandbox_pidfd(), _wait(), _kill(), _free(), _enforced(), _measure(),
 * _pty_master() and _run_id() of src/sandbox/sandbox.h).  berth_rt_free()
 * is safe on NULL.
 */
int berth_rt_pidfd(const struct berth_rt *rt);
int berth_rt_wait(struct berth_rt *rt, int *status);
void berth_rt_kill(struct berth_rt *rt);
void berth_rt_free(struct berth_rt *rt);
void berth_rt_enforced(const struct berth_rt *rt, struct berth_enforced *e);
const struct berth_measure *berth_rt_measure(const struct berth_rt *rt);
int berth_rt_pty_master(const struct berth_rt *rt);
const char *berth_rt_run_id(const struct berth_rt *rt);

#endif
