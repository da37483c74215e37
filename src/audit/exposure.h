/* SPDX-License-Identifier: MIT */
/*
 * exposure.h - no sandbox may reach the audit log or the host key.
 *
 * A sandbox that could write the log could rewrite it; one that could read
 * the host's private key could sign a rewritten log's head and forge
 * attestations (docs/audit.md, "What it does and does not protect";
 * docs/attest.md).  Every front end that builds a sandbox checks its policy
 * here before anything starts: `berth run`, `berth spawn` and `berth fleet
 * up` (a fleet file's `workspace:` and `options:` come from a repository),
 * and resident apps (their directory is mounted at /app).
 */
#ifndef BERTH_AUDIT_EXPOSURE_H
#define BERTH_AUDIT_EXPOSURE_H

#include <stddef.h>

#include "../policy/policy.h"
#include "../util/error.h"

/*
 * berth_audit_exposure_check - refuse @p when its workspace, a mount's
 * source (--ro, --rw, an app's /app), the persistent home, or one of the
 * @n_extra host paths @extra (copied into the sandbox, e.g. --evidence;
 * named @extra_flag in the message) contains, or lies inside, the audit
 * directory (berth_audit_dir), the host key directory
 * (berth_hostkey_dir), the trust scan's known set, the run records
 * (state `runs/`) or the runtime directory (the control sockets of sessions
 * and `berth dev`: a socket is connected to through a read-only mount too);
 * or holds the whole of the state's `sessions/`, `apps/` or `homes/` (a
 * part of them, a session's or app's own, is mounted by design); or, for
 * the workspace, the persistent home and a --rw source, contains or lies
 * inside berth's configuration directory (the rules files and profiles the
 * next berth obeys) or holds berth's own executable (/proc/self/exe).  Paths are compared
 * physically: realpath(3) of the longest existing prefix, the rest appended
 * (a dangling symbolic link in it followed), so a symbolic link does not
 * hide either directory, even before berth has created it.
 * Returns 0, or -1 with @err filled: status BERTH_EXIT_USAGE (2) and
 * "--workspace `W` would give the sandbox the audit log (`D`)" or "...
 * would let the sandbox replace berth's own executable (`E`)" with a hint;
 * or an error of berth_audit_dir / berth_hostkey_dir (no HOME: status 125).
 */
int berth_audit_exposure_check(const struct berth_policy *p, char *const *extra, size_t n_extra,
			       const char *extra_flag, struct berth_error *err);

#endif
