/* SPDX-License-Identifier: MIT */
/*
 * rundir.h - berth's per-user directories: the runtime directory (where
 * `berth dev` keeps its control sockets and sessions keep theirs), the state
 * and configuration directories, and `mkdir -p` for them.
 */
#ifndef BERTH_RUNDIR_H
#define BERTH_RUNDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/*
 * berth_home_dir - the caller's home for berth's state and configuration
 * defaults: $HOME when it is an absolute path, else the home directory of
 * the real uid's passwd entry (getpwuid_r(3); HOME is unset under `env -i`).
 * Returns a path (valid until the next call in this thread), or NULL when
 * neither is an absolute path.
 */
const char *berth_home_dir(void);

/*
 * berth_home_check - berth never creates a home: when the state or the
 * configuration directory would be placed under berth_home_dir() (its XDG
 * variable is not an absolute path) and that directory does not exist,
 * refuse.  Returns 0 (also when no home can be named: the caller that needs
 * one says so), or -1 with @err filled: a usage error (status 2) naming
 * HOME (or the passwd entry's home when HOME is not set) and how to fix it.
 */
int berth_home_check(struct berth_error *err);

/*
 * berth_runtime_dir - the runtime directory of the calling user (real uid)
 * into @buf (@len bytes), the first of:
 *   1. $XDG_RUNTIME_DIR/berth when XDG_RUNTIME_DIR is an absolute path (XDG
 *      Base Directory Specification, "XDG_RUNTIME_DIR");
 *   2. /run/user/UID/berth when /run/user/UID is a directory owned by the
 *      caller with no group or other access (the one systemd-logind makes);
 *   3. /run/berth for root (/run is root's: no other user can take the name);
 *   4. /tmp/berth-UID.
 * The choice depends only on the environment and those directories, so every
 * berth of one user finds the same one.  With @create the directory is made,
 * mode 0700 (its parent must exist).  In every case, if it exists it must be
 * a directory (not a symlink) of the caller's uid with no group or other
 * permission bits: in /tmp another user could have made it first to route
 * our sockets, or to refuse us service.
 * Returns 0, or -1 with @err filled: ENAMETOOLONG when the path does not
 * fit; the mkdir(2)/lstat(2) error; a usage error (exit status 2) naming the
 * directory and telling to set XDG_RUNTIME_DIR when it is not private.
 */
int berth_runtime_dir(bool create, char *buf, size_t len, struct berth_error *err);

/*
 * berth_mkdir_private - make @path (mode 0700; its parent must exist) unless
 * it exists, then require it to be a directory (not a symlink) of the
 * caller's uid with no group or other permission bits.  Returns 0, or -1
 * with @err filled: the mkdir(2)/lstat(2) error, or a usage error (status 2)
 * "`PATH` is not a private directory of uid UID: refusing to use it".
 */
int berth_mkdir_private(const char *path, struct berth_error *err);

/*
 * berth_runtime_subdir - @sub ("sessions", "dev") of berth_runtime_dir()
 * into @buf (@len bytes); with @create both are made and @sub must be
 * private (berth_mkdir_private).  Returns 0, or -1 with @err filled (as
 * those two; a usage error when the path does not fit in @len).
 */
int berth_runtime_subdir(const char *sub, bool create, char *buf, size_t len, struct berth_error *err);

/*
 * berth_state_path, berth_config_path - where berth keeps @sub ("runs",
 * "apps", "trust/known", "" for the top) of the calling user's state and
 * configuration, into @buf (@len bytes): $XDG_STATE_HOME/berth/@sub (or
 * $XDG_CONFIG_HOME) when the variable is an absolute path, else
 * HOME/.local/state/berth/@sub (HOME/.config/berth/@sub), HOME being
 * berth_home_dir() (root's too: its passwd entry when HOME is unset).
 * Returns 0, or -1 with errno EINVAL (no absolute variable nor home) or
 * ENAMETOOLONG (it does not fit); each caller words its own message.
 */
int berth_state_path(const char *sub, char *buf, size_t len);
int berth_config_path(const char *sub, char *buf, size_t len);

/*
 * berth_mkdir_parents - mkdir(2), mode @mode, each missing directory above
 * the last component of @path (absolute).  Returns 0, or -1 with @err
 * filled (the mkdir(2) error naming the directory; ENAMETOOLONG).
 */
int berth_mkdir_parents(const char *path, mode_t mode, struct berth_error *err);

/*
 * berth_mkdirs - `mkdir -p` of @path (absolute): the directories made on the
 * way mode 0700 (they hold berth's state: nobody else's business), the last
 * one @mode (set with chmod(2) when it existed with another mode).
 * Returns 0, or -1 with @err filled: the mkdir(2)/chmod(2) error naming the
 * directory, ENAMETOOLONG, or a usage error when @path is not a directory.
 */
int berth_mkdirs(const char *path, mode_t mode, struct berth_error *err);

/*
 * berth_trust_state_path - the file where the trust scan keeps the
 * directories it saw (src/sandbox/trustscan.h) into @buf (@len bytes):
 * $XDG_STATE_HOME/berth/trust/known when XDG_STATE_HOME is an absolute
 * path, else HOME/.local/state/berth/trust/known (berth_home_dir()).
 * Returns 0, or -1 when neither names an absolute path or it does not fit.
 * The directory that holds it must never be inside a writable mount of a
 * sandbox (src/audit/exposure.c): the sandbox could teach berth to trust a
 * directory it staged.
 */
int berth_trust_state_path(char *buf, size_t len);

#endif
