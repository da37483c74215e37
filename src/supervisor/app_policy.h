/* SPDX-License-Identifier: MIT */
/*
 * app_policy.h - the manifest compiler: a resident app's berth.yml becomes a
 * berth policy (src/policy/policy.h), the same data `berth run` enforces.
 *
 * What an app's sandbox holds (docs/manifest.md, "What the sandbox holds"):
 *   /app        the app directory, read-only (read and execute)
 *   /workspace  the app's state directory,
 *               $XDG_STATE_HOME/berth/apps/<name>/workspace (0700), kept
 *               across runs; reachable only through a filesystem capability
 *   /context    $XDG_STATE_HOME/berth/apps/<name>/context, mounted only when
 *               a capability names it (read-only unless one grants write)
 *   /tmp        a private tmpfs; reachable only through a capability
 *   /opt/berth/python  the Python SDK, read-only (python runtime only)
 *   /opt/berth/node/@berth/sdk  the JavaScript SDK, read-only (node runtime
 *               only; NODE_PATH=/opt/berth/node makes require("@berth/sdk") work)
 * Landlock allows the system directories (read, execute), /app and the SDK,
 * then exactly the filesystem capabilities.  No network.  Limits from
 * `resources`, else the defaults of `berth run`.
 */
#ifndef BERTH_APP_POLICY_H
#define BERTH_APP_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "../manifest/manifest.h"
#include "../policy/policy.h"
#include "../util/error.h"

#define BERTH_APP_SDK_PYTHON "/opt/berth/python"             /* where the Python SDK is mounted */
#define BERTH_APP_NODE_PATH "/opt/berth/node"                /* NODE_PATH of node apps */
#define BERTH_APP_SDK_NODE BERTH_APP_NODE_PATH "/@berth/sdk" /* where the JavaScript SDK is mounted */

/* Where an app's files are, on the host. */
struct berth_app_paths {
	char app_dir[4096];    /* physical path of the app directory */
	char manifest[4096];   /* how to name its berth.yml in messages (as the user gave it) */
	char state_dir[4096];  /* $XDG_STATE_HOME/berth/apps/<name> */
	char workspace[4096];  /* <state_dir>/workspace */
	char context[4096];    /* <state_dir>/context */
	char sdk_python[4096]; /* the Python SDK directory on the host, or "" */
	char sdk_node[4096];   /* the JavaScript SDK directory (sdk/typescript) on the host, or "" */
	char origin[4096];     /* <state_dir>/origin: the app directory that owns this state */
};

/*
 * berth_app_state_root - the directory that holds every app's state:
 * $XDG_STATE_HOME/berth/apps, or HOME/.local/state/berth/apps (XDG Base
 * Directory Specification; berth_state_path in util/rundir.h).  Writes it
 * into @buf (@len bytes).
 * Returns 0, or -1 with @err filled (neither variable set, or too long).
 */
int berth_app_state_root(char *buf, size_t len, struct berth_error *err);

/*
 * berth_app_resolve - fill @paths for the app in @app_dir (as the user named
 * it) with manifest @m, creating the state directories (0700) when missing
 * (not when @dry).  The state is the app name's; the first app directory
 * that used it is recorded in <state_dir>/origin, and another directory
 * declaring the same name (a copy, a moved app, or an impostor) is warned
 * about on stderr, naming both.
 * @state_root: where apps' state lives; NULL means berth_app_state_root().
 * The Python SDK is looked up in $BERTH_SDK_PYTHON, then next to the berth
 * binary (../sdk/python from build/berth, ../share/berth/sdk/python when
 * installed); the JavaScript SDK of a node app in $BERTH_SDK_NODE, then
 * ../sdk/typescript or ../share/berth/sdk/typescript next to the binary.
 * Returns 0, or -1 with @err filled (the path that could not be created or
 * resolved; the SDK missing for a python or node app).
 */
int berth_app_resolve(const char *app_dir, const struct berth_manifest *m, const char *state_root, bool dry,
		      struct berth_app_paths *paths, struct berth_error *err);

/*
 * berth_app_digest - SHA-256 over the app directory: every entry below it
 * (recursively, not following symlinks), sorted bytewise by relative path,
 * each contributing the line
 *     "<type> <mode, 4 octal digits> <size in bytes> <sha256 of the contents or link target, or -> <path>\n"
 * where type is f (file), d (directory), l (symlink) or o (other).
 * @hex: receives 64 lowercase hex digits.
 * Returns 0, or -1 with @err filled (an unreadable entry is named).
 */
int berth_app_digest(const char *app_dir, char hex[65], struct berth_error *err);

/*
 * berth_app_identity - the app's own sandbox identity when root runs berth:
 * an offset (>= 1) from the run uid, so that no two apps share a host uid.
 * Offsets are handed out in /run/berth/identities (0700, root only, under
 * flock(2)), one per app state directory @key, and kept until reboot (the
 * identity is the running sandbox's only: files it writes are idmapped to
 * their directory's owner).  Not root, or /run unusable: a hash of @key
 * (FNV-1a) in 1..2^30, which may collide.
 */
unsigned berth_app_identity(const char *key);

/*
 * berth_app_policy - compile manifest @m of the app at @paths into @p (which
 * must be initialised with berth_policy_init(); on failure it is left to
 * berth_policy_free()).  @digest_hex: berth_app_digest() of the app.
 * The command is the entry: /app/<entry>, /usr/bin/python3 /app/<entry> or
 * /usr/bin/node /app/<entry>.
 * Environment: BERTH_RPC_FD=3, BERTH_APP=<name>, PYTHONPATH and
 * PYTHONDONTWRITEBYTECODE for python, NODE_PATH for node, and each declared secret from berth's
 * own environment (@getenv_fn).
 * network:host capabilities become the policy's allow-host patterns
 * (network mode proxy: the egress broker, docs/egress.md); a pattern the
 * broker's grammar refuses is an error (status 2).
 * Returns 0, or -1 with @err filled: a declared secret is not set in berth's
 * environment (status 2, the hint names the variable), or the policy breaks
 * a limit of berth_policy_validate (status 2: more than 64 `network:host`
 * capabilities or filesystem grants, more than 32 distinct ports, ...).
 */
int berth_app_policy(const struct berth_manifest *m, const struct berth_app_paths *paths,
		     const char *digest_hex, char *(*getenv_fn)(const char *), struct berth_policy *p,
		     struct berth_error *err);

/* berth_app_needs_network - the first network:host capability of @m, or NULL. */
const char *berth_app_needs_network(const struct berth_manifest *m);

#endif
