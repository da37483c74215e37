/* SPDX-License-Identifier: MIT */
/*
 * sshagent.h - `berth run --ssh` (docs/credentials.md, "--ssh"): an SSH agent
 * socket in the sandbox's view that lists and signs with the allowed keys
 * only, relayed by the supervisor to its caller's agent (SSH_AUTH_SOCK);
 * the --ssh-host keys pinned in a known_hosts file and an ssh_config that
 * checks them.  Every other agent operation is answered SSH_AGENT_FAILURE
 * without reaching the caller's agent.
 */
#ifndef BERTH_SUPERVISOR_SSHAGENT_H
#define BERTH_SUPERVISOR_SSHAGENT_H

#include <stdint.h>

#include "../policy/policy.h"
#include "../util/error.h"

/* The sandbox's view: the directory, its agent socket, known_hosts and config. */
#define BERTH_SSH_DIR "/run/berth/ssh"
#define BERTH_SSH_SOCK BERTH_SSH_DIR "/agent.sock"
#define BERTH_SSH_KNOWN_HOSTS BERTH_SSH_DIR "/known_hosts"
#define BERTH_SSH_CONFIG "/etc/ssh/ssh_config"

/* One signature made for the sandbox (strings valid during the call). */
struct berth_ssh_sign_event {
	const char *key;      /* the key's SHA256 fingerprint */
	uint64_t count;       /* signatures with this key in the run, this one included */
	const char *kind;     /* "userauth", "sshsig" or "other" (what was signed) */
	const char *user;     /* userauth: the user name, else NULL */
	const char *host;     /* userauth bound to a host key that a --ssh-host pinned: its name, else NULL */
	const char *host_key; /* userauth bound to a host key: its fingerprint, else NULL */
	const char *ns;       /* sshsig: its namespace ("git", "file"), else NULL */
};

typedef void (*berth_ssh_sign_fn)(const struct berth_ssh_sign_event *e, void *arg);
typedef void (*berth_ssh_notice_fn)(const char *line, void *arg);

struct berth_ssh_run;

/*
 * berth_ssh_prepare - for @p's --ssh keys and --ssh-host keys (neither:
 * *@out NULL, 0): with keys, check that the caller's agent (SSH_AUTH_SOCK)
 * holds each; make RUNDIR/ssh (@run_id) with the agent socket (listening),
 * known_hosts and the ssh config, mount it read-only at BERTH_SSH_DIR and
 * the config over BERTH_SSH_CONFIG (when the host has one), and set
 * SSH_AUTH_SOCK in @p's environment.  Call after the widenings are
 * confirmed, before the sandbox is made.  Returns 0, or -1 with @err: a
 * usage error (status 2) for no agent, or a key not in it (with the
 * `ssh-add` hint), or the error of a file or socket.
 */
int berth_ssh_prepare(struct berth_policy *p, const char *run_id, struct berth_ssh_run **out,
		      struct berth_error *err);

/*
 * berth_ssh_start - serve the socket on a thread of its own; @sign gets each
 * signature (on a relay thread, serialised), @notice the refusal lines at
 * berth_ssh_stop.  Returns 0, or -1 with @err.
 */
int berth_ssh_start(struct berth_ssh_run *s, berth_ssh_sign_fn sign, berth_ssh_notice_fn notice, void *arg,
		    struct berth_error *err);

/* berth_ssh_stop - end every connection and the thread; the refusal lines,
 * once each kind, to the notice function.  Safe when not started. */
void berth_ssh_stop(struct berth_ssh_run *s);

/* berth_ssh_run_free - stop, close and free @s.  Safe on NULL. */
void berth_ssh_run_free(struct berth_ssh_run *s);

#endif
