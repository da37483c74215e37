/* SPDX-License-Identifier: MIT */
/*
 * session.h - agent sessions (docs/sessions.md): a detached per-session
 * supervisor holding the pty of one sandboxed agent, its rendered screen,
 * its output log and a control socket.  No central daemon: everything
 * `berth ps` shows is read from the session directories.
 *
 * Places (each directory 0700, owned by the caller):
 *   $XDG_RUNTIME_DIR/berth/sessions/NAME/ (else berth_runtime_dir()'s fallback)
 *       ctl.sock      control socket (same uid only: SO_PEERCRED)
 *       lock          flock(2)ed by the supervisor for its whole life
 *       session.json  metadata (written atomically)
 *       screen.txt    the last screen, written when the agent ended
 *   $XDG_STATE_HOME/berth/sessions/NAME/ (else ~/.local/state/...)
 *       output.log    raw output (64 MiB, then one older output.log.1)
 *       workspace/    the session's own workspace (--repo, or no --workspace)
 */
#ifndef BERTH_SESSION_H
#define BERTH_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#include "../policy/policy.h"
#include "../sandbox/sandbox.h"
#include "../util/error.h"

#define BERTH_SESSION_NAME_MAX 48
#define BERTH_SESSION_LOG_MAX (64LL << 20) /* bytes of output.log before it rotates */

/*
 * berth_session_name_check - a session name: 1..48 of [a-z0-9-], starting
 * with a letter or digit.  Returns 0, or -1 with @err (status 2) naming it.
 */
int berth_session_name_check(const char *name, struct berth_error *err);

/*
 * berth_session_name_derive - PROFILE[-REPO]-HHMMSS (UTC, now), where REPO is
 * the last path component of @repo without `.git`; characters outside
 * [a-z0-9-] become `-`, and the result is cut to 48.  @repo may be NULL.
 */
void berth_session_name_derive(const char *profile, const char *repo, char out[BERTH_SESSION_NAME_MAX + 1]);

/*
 * berth_session_runtime_dir / berth_session_state_dir - the session
 * directories of @name (NULL: the parent directory that lists them).
 * @create: make them (0700) on the way.  A runtime parent that is not a
 * private directory of the caller's uid is refused (another user's /tmp
 * directory must not receive our sessions).
 * Returns 0, or -1 with @err filled.
 */
int berth_session_runtime_dir(const char *name, bool create, char *buf, size_t len, struct berth_error *err);
int berth_session_state_dir(const char *name, bool create, char *buf, size_t len, struct berth_error *err);

/*
 * berth_session_list - the names of every session directory, sorted.
 * Returns the count (*@names a malloc'd array of malloc'd strings), or -1
 * with @err filled.
 */
int berth_session_list(char ***names, struct berth_error *err);

/* berth_session_meta_read - session.json of @name, or NULL with @err
 * (status 2 when there is no such session). */
json_t *berth_session_meta_read(const char *name, struct berth_error *err);

/* berth_session_meta_write - write @meta as session.json of @name:
 * a temporary file renamed over the old one.  Returns 0 or -1. */
int berth_session_meta_write(const char *name, json_t *meta, struct berth_error *err);

/*
 * berth_session_alive - whether the supervisor of @name runs: its lock file
 * is held (a probe with flock(LOCK_SH|LOCK_NB), released at once).
 */
bool berth_session_alive(const char *name);

/*
 * berth_session_request - send one JSON request to the supervisor of @name
 * and read its one-line JSON reply, within @timeout_ms (milliseconds).
 * Returns 0 with *@reply set, or -1 with @err: status 2 when the session does
 * not run (no socket, or it refused the connection), 125 on a timeout or a
 * broken reply.  A reply `{"error":"..."}` is returned as -1 with that text.
 */
int berth_session_request(const char *name, json_t *req, unsigned timeout_ms, json_t **reply,
			  struct berth_error *err);

/*
 * berth_session_connect - a connected control socket of @name whose peer has
 * the caller's uid (SO_PEERCRED), or -1 with @err (status 2).
 */
int berth_session_connect(const char *name, struct berth_error *err);

/* What the supervisor runs. */
struct berth_session_spec {
	const char *name;
	const char *profile;    /* profile name */
	const char *agent;      /* pattern set for the state classifier */
	const char *repo;       /* or NULL */
	const char *type_text;  /* typed (then Enter) once the agent started, or NULL */
	bool managed_workspace; /* the workspace is the session's own (removed by rm --purge) */
	const struct berth_policy *policy;
	const struct berth_runtime_ops *runtime; /* NULL: berth_runtime_default() (spawn --runtime) */
	struct berth_runtime_opts ro;
	int rows, cols; /* initial terminal size */
	int lock_fd;    /* the session's lock, held (berth_session_claim) */
};

/*
 * berth_session_claim - create @name's runtime directory and take its lock;
 * a live session of that name is refused (status 2), a stale one's files
 * are removed.  Returns the lock descriptor, or -1 with @err.
 */
int berth_session_claim(const char *name, struct berth_error *err);

/*
 * berth_session_start - fork the detached supervisor (double fork, setsid,
 * stdio on /dev/null) for @spec and wait until the agent's execve succeeded
 * or failed.  Returns 0 with *@pid the supervisor's pid, or -1 with @err
 * (the sandbox's own refusal or 126/127 status) and no session left running.
 * In both cases @notice (@notice_len bytes; NULL: none wanted) holds the
 * supervisor's notice for the person, "audit: ..." when it recovered the
 * audit log before recording the session (docs/audit.md, "Crashes"), or "".
 */
int berth_session_start(const struct berth_session_spec *spec, pid_t *pid, char *notice, size_t notice_len,
			struct berth_error *err);

/*
 * berth_session_remove - delete @name's runtime directory and its state
 * directory except workspace/ (with @purge, workspace/ too).  A live
 * session is refused (status 2).  Returns 0 or -1 with @err.
 */
int berth_session_remove(const char *name, bool purge, struct berth_error *err);

/* berth_rm_rf - remove @path recursively without following symlinks
 * (openat/unlinkat, each directory opened O_NOFOLLOW).  Returns 0 or -1
 * with @err. */
int berth_rm_rf(const char *path, struct berth_error *err);

#endif

/*
 * berth_session_screen - the rendered screen of @name: live from its
 * supervisor, or the last one kept when the agent ended.  An object
 * {"lines":[...],"rows","cols","cursor":[r,c],"idle_ms","alive"[,"exit"]}.
 * Returns a new reference, or NULL with @err (status 2: no such session or
 * no screen).
 */
json_t *berth_session_screen(const char *name, unsigned timeout_ms, struct berth_error *err);

/*
 * berth_session_status - one row of `berth ps --json` for @name: the
 * metadata plus "state" (the classifier's, or running/stopping/exited/stale),
 * "why", "uptime_s" and "alive".  Never blocks longer than @timeout_ms on a
 * supervisor that does not answer (state "unresponsive").  Returns a new
 * reference, or NULL when @name has no readable metadata.
 */
json_t *berth_session_status(const char *name, unsigned timeout_ms);
