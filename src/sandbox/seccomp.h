/* SPDX-License-Identifier: MIT */
/*
 * seccomp.h - the berth seccomp filter.
 *
 * The filter is compiled with libseccomp in the parent, before clone, into a
 * classic BPF program (struct sock_fprog); the child only loads the finished
 * program, last, right before execve(2).  The deny list and the reason for
 * each entry are in docs/security.md.
 */
#ifndef BERTH_SECCOMP_H
#define BERTH_SECCOMP_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>

#include "../policy/policy.h"
#include "../util/error.h"

struct berth_bpf {
	struct sock_filter *insns; /* malloc'd program */
	unsigned short len;        /* number of instructions */
	char digest[65];           /* SHA-256 (hex) of the program bytes, once berth_seccomp_digest() ran */
};

/* Options that change the filter, decided by the runtime. */
struct berth_seccomp_opts {
	bool block_affinity; /* deny sched_setaffinity: CPU limit enforced by affinity */
};

/*
 * berth_seccomp_compile - build the filter for @p.
 * Default action: allow.  Denied calls return EPERM (clone3: ENOSYS so libc
 * falls back to clone(2), where the namespace flags are checked); calls made
 * through a foreign ABI (i386 via int 0x80, x32) kill the process.
 * @out: receives the program; release with berth_bpf_free().
 * Returns 0, or -1 with @err filled (libseccomp failure, ENOMEM).
 */
int berth_seccomp_compile(const struct berth_policy *p, const struct berth_seccomp_opts *opts,
			  struct berth_bpf *out, struct berth_error *err);

/*
 * berth_seccomp_digest - fill @bpf->digest with the SHA-256 (hex) of the
 * program bytes.  Not part of compiling: nothing on the way to the command's
 * execve needs it.
 * Returns 0, or -1 with @err filled (EINVAL: no program; ELIBACC: the SHA-256
 * library cannot be used, see src/util/sha256.h).
 */
int berth_seccomp_digest(struct berth_bpf *bpf, struct berth_error *err);

/*
 * berth_seccomp_load - install @bpf on the calling thread with
 * seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC).
 * NO_NEW_PRIVS must already be set.  Async-signal-safe (no allocation), so it
 * may run in the child between clone and execve.
 * Returns 0, or -1 with @err filled (EINVAL/EACCES/EFAULT from the kernel).
 */
int berth_seccomp_load(const struct berth_bpf *bpf, struct berth_error *err);

/*
 * berth_seccomp_load_stacked - berth's filter @bpf and a container's own
 * profile @cbpf (NULL or without a program: @bpf alone), in the order
 * @bpf, @cbpf, @bpf again.  The first copy comes before anything of the
 * profile's can act: a profile may answer seccomp(2) itself with
 * SCMP_ACT_ERRNO and errnoRet 0, a success that loads nothing, and berth's
 * filter must not depend on the profile's goodwill.  The last copy answers
 * where both deny a call (among actions of one precedence the kernel takes
 * the most recent filter's), so that berth's documented errnos stand
 * (docs/seccomp-list.md); the profile makes that one load fail or do
 * nothing only by denying seccomp(2), and then it loses its own errnos,
 * never berth's confinement.  A call runs only when every filter allows
 * it.  NO_NEW_PRIVS must already be set; no allocation on success.
 * Returns 0, or -1 with @err filled as berth_seccomp_load's, wrapped "the
 * container's seccomp profile" for @cbpf, with a hint when the last load
 * fails (the profile must allow seccomp(2)).
 */
int berth_seccomp_load_stacked(const struct berth_bpf *bpf, const struct berth_bpf *cbpf,
			       struct berth_error *err);

/*
 * berth_seccomp_compile_oci - build a container's own filter from @profile,
 * the OCI runtime spec's linux.seccomp object as JSON (config.md):
 * defaultAction (with defaultErrnoRet), syscalls (names, action, errnoRet
 * (default EPERM), args with index 0-5, value, valueTwo, op SCMP_CMP_*),
 * flags, architectures.  Loaded between two copies of berth's own filter
 * (berth_seccomp_load_stacked), so a call runs only when both allow it and
 * berth's errno answers what both deny.  The rules follow runc's reading: a name this
 * libseccomp does not know is skipped; a rule whose action is the default
 * adds nothing; conditions on one argument index AND together, a repeated
 * index makes one rule per condition.  Only the native ABI is filtered:
 * berth's filter kills every call made through another, whatever
 * `architectures` lists.
 * Returns 0 with @out filled (release with berth_bpf_free()), or -1 with
 * @err filled, a usage error (exit status 2) naming what berth refuses:
 *   "linux.seccomp is not a JSON object"
 *   "linux.seccomp: the action `NAME` is not supported by berth"
 *     (SCMP_ACT_NOTIFY: berth runs no listener)
 *   "linux.seccomp: the flag `NAME` is not supported by berth"
 *     (only SECCOMP_FILTER_FLAG_TSYNC and _LOG)
 *   "linux.seccomp: a listenerPath (SCMP_ACT_NOTIFY) is not supported by berth"
 *   "linux.seccomp: the operator `NAME` is not one of SCMP_CMP_*"
 *   "linux.seccomp: errnoRet `N` is not an errno", and malformed entries;
 * or a libseccomp failure (status 125).
 */
int berth_seccomp_compile_oci(const char *profile, struct berth_bpf *out, struct berth_error *err);

/*
 * berth_seccomp_compile_notify - the filter of `berth run --ask`
 * (docs/ask.md): SCMP_ACT_NOTIFY for open(2), openat(2), openat2(2) and
 * creat(2) (those of this ABI), allow for everything else; a foreign ABI
 * kills the process as in berth's own filter.  Loaded after berth's filter
 * (berth_seccomp_load_listener), so a call berth's filter denies never
 * reaches the listener.
 * Returns 0 with @out filled (release with berth_bpf_free()), or -1 with
 * @err filled (libseccomp failure, ENOMEM).
 */
int berth_seccomp_compile_notify(struct berth_bpf *out, struct berth_error *err);

/*
 * berth_seccomp_load_listener - install @bpf with
 * SECCOMP_FILTER_FLAG_NEW_LISTENER on the calling (single-threaded)
 * process.  NO_NEW_PRIVS must already be set.  No allocation.
 * Returns the listener (close-on-exec), or -1 with @err filled (EBUSY: a
 * filter with a listener is already installed).
 */
int berth_seccomp_load_listener(const struct berth_bpf *bpf, struct berth_error *err);

/* berth_bpf_free - release the program (safe on a zeroed struct). */
void berth_bpf_free(struct berth_bpf *bpf);

/*
 * berth_seccomp_available - whether this kernel accepts seccomp filters
 * (prctl(PR_GET_SECCOMP) and SECCOMP_GET_ACTION_AVAIL).  Returns true/false.
 */
bool berth_seccomp_available(void);

#endif
