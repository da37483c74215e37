/* SPDX-License-Identifier: MIT */
/*
 * spawn_int.h - private to src/sandbox/spawn*.c: the state of one sandbox
 * (struct sandbox), the child -> parent message, and the helpers one step of
 * berth_sandbox_run() shares with another.  Nothing outside src/sandbox/spawn*.c
 * includes it; the public interface is sandbox.h.
 *
 * Files, in the order of the steps (spawn.c's header comment numbers them):
 *   spawn_channel.c  the parent/child channel (sync 1-3) and notices
 *   spawn_prepare.c  1 features, 2 compile (identity, limits, mounts, env)
 *   spawn_janitor.c  3 the janitor; environment/command-line/fd hygiene
 *   spawn.c          4-5 clone, maps and cgroup; the public API
 *   spawn_child.c    6-9 (up to the fork) and 10-13: the child (child_main), the command
 *   spawn_init.c     9 pid 1 (or its degraded-mode stand-in)
 *   spawn_relay.c    14 supervise: pty relay, signals, --timeout, status
 *   spawn_cleanup.c  15 trust scan and log, cgroups
 *   runtime_ns.c     the namespace runtime's struct berth_runtime_ops
 *
 * Every function here reports errors as the static ones of a single file
 * did: a negative return with @err filled (berth_err), unless noted.
 */
#ifndef BERTH_SANDBOX_SPAWN_INT_H
#define BERTH_SANDBOX_SPAWN_INT_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "sandbox.h"
#include "guard.h"
#include "landlock.h"
#include "limits.h"
#include "measure.h"
#include "netns.h"
#include "seccomp.h"
#include "userns.h"

#define MAX_ENV (BERTH_POLICY_ENV_MAX + 1) /* policy.h */
#define BERTH_RPC_FD_NUM 3                 /* docs/protocol.md: BERTH_RPC_FD */
/* Descriptors one message carries: the pty master, the two proxies, the
 * resolver and the declared ports' listeners. */
#define MSG_FDS_MAX (5 + BERTH_TRANSPARENT_PORTS_MAX)

struct sandbox {
	struct berth_rt base; /* first: the runtime interface's view (runtime.h) */
	const struct berth_policy *p;
	const struct berth_runtime_opts *o;
	struct berth_features feat;
	bool use_userns, use_landlock, use_seccomp;
	int pidfd;        /* library API: pidfd of pid 1 */
	bool guard_ready; /* the guard was prepared (its .git state is known) */
	/* --network proxy: the broker's listeners (made in the sandbox's network
	 * namespace, handed to berth at sync 2 and on to hooks.on_egress). */
	int proxy_fd[2];
	uint16_t proxy_port[2];
	/* ... and, so that clients that ignore the proxy variables reach the
	 * declared destinations too (netns.h): a listener on each declared
	 * port, and the sandbox's resolver; also handed over at sync 2. */
	struct berth_policy_ports tports;
	int tfd[BERTH_TRANSPARENT_PORTS_MAX];
	int dns_fd;
	int userns_errno;      /* set when the clone refused a user namespace */
	int feat_userns_errno; /* on the second attempt: why the first one could not */
	bool retry;            /* second attempt: the first one's clone was refused */
	char run_id[17];
	struct berth_ids ids;
	char user[64];
	char home[PATH_MAX];
	struct berth_bpf bpf;
	struct berth_limits lim;
	struct berth_guard guard;
	int ws_fd;
	int review_fd; /* the child: --review's layer (mounts.h), sent at sync 2; -1 */
	/* A container (policy container): its root as berth opened it once
	 * (berth_source_open), and, invoked by root, its detached idmapped
	 * tree; -1 otherwise. */
	int root_src;
	int root_fd;
	/* A container's own seccomp profile (container->seccomp), compiled
	 * before the clone: the child inherits it and loads it after berth's
	 * filter; empty (no insns) without one. */
	struct berth_bpf cbpf;
	/* --ask: the notify filter (berth_seccomp_compile_notify), compiled
	 * before the clone like cbpf; empty without the ask option. */
	struct berth_bpf nbpf;
	int home_fd; /* idmapped tree of the persistent home (policy home_dir), or -1 */
	/* A container on a joined network (a pod's): a detached sysfs of that
	 * namespace, made here, where the parent is in it (the sandbox's user
	 * namespace does not own it: no sysfs could be mounted inside); -1 */
	int sys_fd;
	int evidence_fd; /* --evidence, invoked by root: the detached read-only tree */
	int mount_fds[BERTH_POLICY_MOUNTS_MAX];
	/* The workspace and each --ro/--rw source, opened once with no link
	 * followed (berth_source_open): every mount is made from these. */
	int ws_src;
	int src_fds[BERTH_POLICY_MOUNTS_MAX];
	bool mount_is_dir
	    [BERTH_POLICY_MOUNTS_MAX]; /* per policy mount: the source is a directory (stat by berth, not the sandbox) */
	bool want_pty;
	/* Output only: berth's stdout (bit 1) and/or stderr (bit 2) is a
	 * terminal but its stdin is not; the command gets a pty for those
	 * instead of the caller's terminal (docs/security.md "The
	 * pseudo-terminal"). */
	unsigned out_pty;
	int sock[2];       /* SOCK_SEQPACKET: [0] parent, [1] child */
	int janitor_fd;    /* write end; EOF tells the janitor berth is gone */
	int janitor_lines; /* read end of the janitor's watch lines, or -1 */
	pid_t janitor;
	pid_t child;
	pid_t cmd_pgid; /* degraded mode only: the command's process group */
	int pty_master;
	char *envp[MAX_ENV];
	char *env_store[MAX_ENV]; /* malloc'd NAME=VALUE strings, wiped by cleanup() */
	sigset_t oldmask;
	struct berth_measure meas; /* the command's own measurement (docs/attest.md) */
	bool measured;
	bool measure_failed; /* the caller could not record it: the run was killed */
	struct berth_error measure_err;
};

/* Child -> parent: an error object, or "ready" with an optional fd. */
struct msg {
	int kind; /* 0 ready, 1 error, 2 the command's pid (degraded), 3 measurement */
	struct berth_error err;
	/* kind 0: which descriptors ride along, in this order */
	bool has_pty;      /* the pty master */
	bool has_proxy;    /* the broker's HTTP and SOCKS5 listeners */
	uint16_t ports[2]; /* their ports on the sandbox's loopback */
	int n_transparent; /* with has_proxy: the declared ports' listeners, then the resolver's socket */
	bool has_review;   /* last: --review's layer (docs/review.md) */
	bool has_listener; /* kind 3: the --ask listener rides along (docs/ask.md) */
	struct berth_measure meas; /* kind 3 */
};

/* ---- spawn_channel.c */

/* A "berth: ..." line on stderr unless --quiet; its text is cleaned
 * (text.h) as it may name what the sandbox chose. */
void berth_sb_notice(const struct sandbox *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Replaces the hint of @e (EPERM/EACCES at @step) with the security module's
 * refusal and its fix, when one is known (userns.h). */
void berth_sb_lsm_hint(enum berth_userns_step step, struct berth_error *e);
/* Prints an error the child or the measurement reported, as cli_print_error does. */
void berth_sb_print_err(const struct berth_error *e);
/* Sends @m with up to MSG_FDS_MAX descriptors @fds (SCM_RIGHTS); best effort. */
void berth_sb_send_msg(int sock, const struct msg *m, const int *fds, int nfds);
/* Receives one message: 1 (descriptors in @fds, their number in *@nfds), 0 on
 * EOF, -1 on error or a short message (its descriptors closed). */
int berth_sb_recv_msg(int sock, struct msg *m, int *fds, int *nfds);
/* Sync 2, parent side: the seccomp program as one datagram; 0 or -1 with @err. */
int berth_sb_send_program(int sock, const struct berth_bpf *bpf, struct berth_error *err);
/* Sync 2, child side: the program into static storage; 0 or -1. */
int berth_sb_recv_program(int sock, struct berth_bpf *bpf);
/* Sync 2 without seccomp: one byte, "go"; 0 or -1 with @err. */
int berth_sb_send_go(int sock, struct berth_error *err);
/* Waits for the "go"; 0 or -1. */
int berth_sb_recv_go(int sock);
/* Child: sends @err with @status to the parent and exits with @status. */
__attribute__((noreturn)) void berth_sb_child_fail(int sock, struct berth_error *err, int status);

/* ---- spawn_child.c */

/* A container's Landlock rules (policy container): its root, the kernel's
 * interfaces and berth's tmpfs directories, the workspace and mounts. */
int berth_sb_container_rules(const struct berth_policy *p, struct berth_ll_rule *r, int max);

/*
 * berth_sb_enter_cwd - make @dir (a path the bundle or the process file
 * names) the working directory, resolved inside the process's root: links
 * followed in it (RESOLVE_IN_ROOT), never a /proc magic link
 * (RESOLVE_NO_MAGICLINKS: /proc/self/fd/N, cwd and root lead wherever
 * their descriptor does, runc CVE-2024-21626), and the directory reached
 * checked to be below the root (getcwd(2) says "(unreachable)" for one that
 * is not).  Without openat2 (ENOSYS) a plain chdir(2), checked the same
 * way.  No allocation.  Returns 0, or -1 with errno (ELOOP: a magic link on
 * the way; EXDEV: outside the root; chdir's).
 */
int berth_sb_enter_cwd(const char *dir);
#define BERTH_CWD_HINT                                                                                       \
	"the working directory is a directory of the container's own root; a /proc/PID/fd, cwd or root "     \
	"link "                                                                                              \
	"leads out of it and is refused (runc CVE-2024-21626)"

/*
 * berth_sb_check_ids - whether the calling thread's real, effective and
 * saved uids are @uid and its gids @gid, after a setresuid/setresgid.
 * (uid_t)-1 is refused (EINVAL): to setresuid(2) it means "unchanged", so
 * asking for it keeps whatever id the process had (the host's root, for
 * `berth oci exec`).  No allocation.  Returns 0, or -1 with errno (EPERM:
 * other ids).
 */
int berth_sb_check_ids(uid_t uid, gid_t gid);

/* ---- spawn_prepare.c: steps 1 and 2 */

/* Step 1: refuses what cannot be enforced, or notes what is degraded. */
int berth_sb_check_features(struct sandbox *s, struct berth_error *err);
/* The run's random 16-hex-digit id (s->run_id). */
int berth_sb_make_run_id(struct sandbox *s, struct berth_error *err);
/* The ids inside and outside, the user name and home (s->ids, s->user, s->home). */
int berth_sb_resolve_identity(struct sandbox *s, struct berth_error *err);
/* Compiles the seccomp filter into s->bpf (done while the child builds its root). */
int berth_sb_compile_seccomp(struct sandbox *s, struct berth_error *err);
/* A container's own seccomp profile into s->cbpf (before the clone). */
int berth_sb_compile_container_seccomp(struct sandbox *s, struct berth_error *err);
/* The run's cgroup and rlimits (s->lim). */
int berth_sb_prepare_limits(struct sandbox *s, struct berth_error *err);
/* Notices of the limits that could not be applied (not an error). */
void berth_sb_limits_notices(const struct sandbox *s);
/* Opens the workspace and each mount source with no link followed. */
int berth_sb_plan_mounts(struct sandbox *s, struct berth_error *err);
/* The idmapped trees of the workspace, home and mounts (s->ws_fd, ...). */
int berth_sb_prepare_idmaps(struct sandbox *s, struct berth_error *err);
/* --evidence: the detached read-only tree (s->evidence_fd). */
int berth_sb_prepare_evidence(struct sandbox *s, struct berth_error *err);
/* The workspace's guarded paths (s->guard, s->guard_ready). */
int berth_sb_prepare_guard(struct sandbox *s, struct berth_error *err);
/* Adds NAME=VALUE at envp[*@n], keeping @reserve slots free. */
int berth_sb_add_env(struct sandbox *s, int *n, int reserve, const char *name, const char *value,
		     struct berth_error *err);
/* The command's environment (s->envp), with room for the proxy variables. */
int berth_sb_build_env(struct sandbox *s, struct berth_error *err);
/* Wipes and frees s->env_store. */
void berth_sb_free_env(struct sandbox *s);

/* ---- spawn_janitor.c: step 3 */

/* Clears this copy of berth's environment block (/proc/PID/environ). */
void berth_sb_wipe_environment(void);
/* Reads /proc/@pid/stat (@pid 0: this process) into @buf (@len bytes);
 * returns a pointer to the `)` that ends the command name (which may hold
 * spaces and parentheses), the state and ppid fields after it, or NULL. */
char *berth_sb_proc_stat(long pid, char *buf, size_t len);
/* Overwrites this copy's command line (/proc/PID/cmdline) with @name. */
void berth_sb_wipe_cmdline(const char *name);
/* Forks the janitor (s->janitor, s->janitor_fd, s->janitor_lines). */
int berth_sb_start_janitor(struct sandbox *s, struct berth_error *err);
/* Writes @n bytes of @buf to the janitor (s->janitor_fd, which must be
 * open) with SIGPIPE blocked: a janitor that died (killed) is EPIPE, never
 * the death of berth itself, which would lose the run's end and its record.
 * Returns write(2)'s result. */
ssize_t berth_sb_janitor_send(const struct sandbox *s, const void *buf, size_t n);

/* ---- spawn_child.c: steps 6-9 and 10-13 (never returns) */

__attribute__((noreturn)) void berth_sb_child_main(struct sandbox *s);

/* ---- spawn_init.c: step 9 */

/* Pid 1 from the command's fork to its end: closes berth's descriptors, then
 * reaps and forwards signals (degraded: waits for the command and kills what
 * it left behind) and exits with the command's status. */
__attribute__((noreturn)) void berth_sb_pid1(struct sandbox *s, pid_t cmd);

/* ---- spawn_relay.c: step 14 */

/* The command's measurement arrived: completes it and hands it to the
 * caller; with m->has_listener, fds[0] (of @nfds) is the --ask listener,
 * handed to hooks.on_notify (and set to -1 there: the hook owns it). */
void berth_sb_measured(struct sandbox *s, const struct msg *m, int *fds, int nfds);
/* Relays until the sandbox exits; its status in *@status. */
int berth_sb_supervise(struct sandbox *s, int sfd, int *status);

/* ---- spawn_cleanup.c: step 15 */

/* Step 15: trust scan, cgroups, descriptors (@s itself stays). */
void berth_sb_cleanup(struct sandbox *s);

/* ---- spawn_channel.c (sync 2) */

/* sync 2, --network proxy: hands s->proxy_fd/tfd/dns_fd to hooks.on_egress
 * (which owns them from then on). */
int berth_sb_hand_egress(struct sandbox *s, struct berth_error *err);

#endif
