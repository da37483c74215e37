/* SPDX-License-Identifier: MIT */
/*
 * gitrules.h - git's own rules, as berth needs them to reason about the
 * repositories in a tree the sandbox could write (issue 13, the host's trust
 * surface; /work/notes/trust-contract.md §3).
 *
 * Pure host-side code: nothing is mounted, nothing printed.  Every file is
 * reached relative to a directory fd, never through a symbolic link
 * (O_NOFOLLOW for one name; openat2(2) RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH
 * for a path of several components, with a component-by-component
 * O_NOFOLLOW walk where openat2 is missing), and every read is bounded.
 *
 * Where git would follow a link that berth refuses to follow, the answer is
 * the one that is safe for berth's caller (each function says which).
 *
 * Sources of the rules (git 2.39 to 2.47 behave the same here):
 *  - setup.c: is_git_directory(), validate_headref(), get_common_dir_noenv();
 *  - gitrepository-layout(5): HEAD, objects/, refs/, commondir, worktrees/;
 *  - git-config(1) "CONFIGURATION FILE" (syntax, includes, booleans) and
 *    its variable list (what each key makes git do);
 *  - githooks(5) for core.hooksPath.
 * No git code is copied; the parser was checked against `git config --file F
 * --list` (tests/unit/test_gitrules.c does so on every run).
 */
#ifndef BERTH_GITRULES_H
#define BERTH_GITRULES_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/error.h"

#define BERTH_GIT_CONFIG_MAX (1 << 20)  /* bytes of one config file read at most */
#define BERTH_GIT_INCLUDE_DEPTH 10      /* git's own include depth limit (config.c MAX_INCLUDE_DEPTH) */
#define BERTH_GIT_HEAD_MAX 255          /* bytes of HEAD (or its link target) git looks at */
#define BERTH_GIT_COMMONDIR_MAX 4096    /* bytes of a `commondir` file read at most */
#define BERTH_GIT_GITFILE_MAX (1 << 20) /* git's limit on a `.git` file (setup.c) */

/*
 * berth_git_head_valid - would git's validate_headref() (setup.c) accept
 * `HEAD` in @dirfd?
 * @dirfd: the directory that may be a git directory
 *
 * Valid is:
 *  - a symbolic link whose target (read with readlinkat(2), never followed)
 *    starts with "refs/";
 *  - a regular file whose first BERTH_GIT_HEAD_MAX bytes start with "ref:",
 *    optional white space (space, tab, CR, LF) and "refs/";
 *  - a regular file starting with 40 hexadecimal digits (a SHA-1 object id,
 *    or the first 40 of a SHA-256 one).  As in git, what follows the digits
 *    is not examined: git's get_oid_hex_any() parses a fixed number of
 *    digits, so "<40 hex>junk" is a HEAD git takes and so is it here.
 * Anything else is invalid: absent, a directory, a FIFO or device (opened
 * O_NONBLOCK and refused), garbage, or unreadable.
 * Returns true when valid.  Never fails otherwise; errno is not meaningful.
 */
bool berth_git_head_valid(int dirfd);

/*
 * berth_git_is_gitdir - would git take @dirfd as a git directory
 * (setup.c is_git_directory(), gitrepository-layout(5))?
 * @dirfd: the candidate directory
 *
 * True when HEAD is valid (berth_git_head_valid()) and `objects` and `refs`
 * pass git's access(X_OK) in the common directory: @dirfd itself, or, when a
 * `commondir` file exists in @dirfd, the directory its content names (one
 * trailing run of LF/CR stripped, as git does; relative to @dirfd unless
 * absolute).  `objects`/`refs` count when they are a directory, a symbolic
 * link (git follows it and berth does not: it may name a directory) or a
 * non-directory with an execute bit (access(X_OK) passes for it too).
 * Fail closed towards "yes, a git directory" where berth cannot see what git
 * would see: a `commondir` that is a symbolic link, larger than
 * BERTH_GIT_COMMONDIR_MAX or not a regular file, or whose path crosses a
 * symbolic link, leaves only HEAD to decide.  An empty `commondir` (git dies
 * on it) or one naming nothing is not a git directory.
 * Returns the answer; never fails otherwise.
 */
bool berth_git_is_gitdir(int dirfd);

/*
 * berth_git_config_fn - one key of a config file.
 * @section: section name, lower-cased ("" for a key before any header;
 *           for `[a.b "c"]` it is "a.b")
 * @subsection: as written in `[section "sub"]` (case-sensitive), lower-cased
 *           for the deprecated `[section.sub]`, or NULL when there is none
 * @key: the key, lower-cased
 * @value: the value after unquoting, escapes and continuations, or NULL for
 *         a bare `key` (a boolean true).  A NUL byte in the text ends the
 *         value as a C string, which is how git uses it too
 * @line: 1-based line the key starts on
 * @arg: the caller's pointer
 * Return 0 to go on; a positive value stops the parse, which then returns it.
 * (A negative value stops it too, but is then indistinguishable from -1.)
 */
typedef int (*berth_git_config_fn)(const char *section, const char *subsection, const char *key,
				   const char *value, unsigned line, void *arg);

/*
 * berth_git_config_parse - parse config text the way git-config(1)
 * "CONFIGURATION FILE" describes it and git's config.c reads it.
 * @buf, @len: the text (need not be NUL-terminated; may hold NUL bytes)
 * @fn, @arg: called once per key, in order
 * @err: filled on a syntax error
 *
 * Syntax (git-config(1)): an optional UTF-8 byte-order mark; `[section]`
 * with section characters [A-Za-z0-9.-]; `[section "sub"]` (white space
 * before the quote, `\x` yields x, no newline, `]` right after the closing
 * quote); the deprecated `[section.sub]`, lower-cased; `key = value` and a
 * bare `key`, keys [A-Za-z][A-Za-z0-9-]* (git allows only space and tab
 * between key and `=`); `#` and `;` comments, also after a value outside
 * double quotes; double quotes anywhere in a value; the escapes \n \t \b \"
 * \\ and backslash-newline continuation; white space (space, tab, CR, LF)
 * trimmed at both ends outside quotes, each inner white-space byte kept as
 * one space; CRLF read as LF; a header and a key may share a line.
 * Returns 0 at the end of the text, the callback's non-zero value when it
 * stopped the parse, or -1 on a syntax error git would reject, with @err
 * (errnum EINVAL) naming the line: the line of the offending byte, or of the
 * end of the text (git's own message names the same line except when a
 * header or quote is cut off by the end of the text).  Syntax errors: `[]`,
 * a header cut short or with a bad character, an unterminated subsection or
 * value quote, a key not starting with a letter, anything but `=` after a
 * key (so `key # comment` is an error, as in git), an unknown escape.
 * One deliberate difference: a NUL byte in a quoted subsection is an error
 * here.  git accepts it but then uses the variable's name as a C string, so
 * it sees another key than the one written (`[alias "co\0"] x = !cmd` is
 * alias.co to git, `[submodule "recurse\0"] url = 1` is submodule.recurse);
 * refusing the file is the fail-closed answer.
 */
int berth_git_config_parse(const char *buf, size_t len, berth_git_config_fn fn, void *arg,
			   struct berth_error *err);

/*
 * berth_git_config_read - read a config file and parse it.
 * @dirfd: directory to look in
 * @name: file name, or a relative path of several components (resolved
 *        beneath @dirfd; no component may be a symbolic link or "..")
 * @fn, @arg, @err: as berth_git_config_parse()
 *
 * Returns what berth_git_config_parse() returns, or -1 with @err filled:
 *  - errnum ENOENT: no such file (callers test it: an absent file is fine);
 *  - ELOOP: @name (or a component of it) is a symbolic link;
 *  - EXDEV: @name leads outside @dirfd (absolute, or "..");
 *  - EINVAL: not a regular file (directory, FIFO, device, socket);
 *  - E2BIG: larger than BERTH_GIT_CONFIG_MAX bytes (at open or while read);
 *  - any errno of openat2(2)/openat(2)/read(2), e.g. EACCES, EIO, ENOMEM.
 */
int berth_git_config_read(int dirfd, const char *name, berth_git_config_fn fn, void *arg,
			  struct berth_error *err);

/*
 * berth_git_key_inert - is the key one that makes git run no program and
 * read no other file or directory, whatever its value?
 * @section, @subsection, @key: as given to a berth_git_config_fn
 *
 * An allow-list (fail closed: anything unlisted is active).  Section and key
 * are compared case-insensitively; the subsection must be absent for keys
 * git reads without one (so `[core "x"] bare` is active) and present for the
 * remote., branch. and submodule. keys.  Listed (git-config(1) says what
 * each does):
 *  core.{repositoryformatversion, filemode, bare, logallrefupdates,
 *   ignorecase, precomposeunicode, symlinks, autocrlf, eol, safecrlf,
 *   checkstat, trustctime, quotepath, abbrev, compression, loosecompression,
 *   whitespace, warnambiguousrefs, preloadindex, untrackedcache, splitindex,
 *   commitgraph, multipackindex, checkroundtripencoding, sparsecheckoutcone};
 *  extensions.{objectformat, refstorage, worktreeconfig, noop};
 *  remote.<name>.{url, pushurl, fetch, push, tagopt, prune, mirror, promisor,
 *   partialclonefilter} (an `ext::` URL runs a command only when
 *   protocol.ext.allow says so, and protocol.* is active);
 *  branch.<name>.{remote, merge, rebase, pushremote, description};
 *  submodule.<name>.{url, active, branch, fetchrecursesubmodules, ignore,
 *   shallow} (not .update, whose `!command` runs);
 *  user.{name, email}; init.defaultbranch; gc.auto; index.*;
 *  pull.{rebase, ff}; push.{default, autosetupremote}; fetch.prune;
 *  merge.{ff, conflictstyle}; rebase.{autosquash, autostash}; color.ui;
 *  status.showuntrackedfiles; advice.*; maintenance.{auto, strategy};
 *  lfs.repositoryformatversion.
 * Not listed, so active, among others: core.fsmonitor, core.pager,
 * core.editor, core.sshcommand, core.hookspath, core.worktree, core.askpass,
 * core.gitproxy, core.excludesfile, core.attributesfile,
 * core.alternaterefscommand, core.sharedrepository, core.protectntfs and
 * core.protecthfs (turned off, a checkout writes paths git refuses for
 * safety), extensions.partialclone (lazy fetches on any command), alias.*,
 * filter.*, diff.external, diff.*.command/textconv, merge.*.driver,
 * credential.*, gpg.*, pager.*, include.*, includeif.*, url.*, protocol.*,
 * http.*, safe.*, sequence.editor, uploadpack.*, receive.*,
 * remote.*.uploadpack/receivepack/vcs/proxy, submodule.*.update,
 * submodule.recurse.
 * Returns true when inert.  NULL @section or @key: false.
 */
bool berth_git_key_inert(const char *section, const char *subsection, const char *key);

/*
 * berth_git_config_first_active - the first key of a config file that is
 * not inert (berth_git_key_inert()).
 * @dirfd, @name: the file, as berth_git_config_read()
 * @out: receives "section.subsection.key" (or "section.key"; just "key"
 *       before any header), NUL-terminated, truncated to @outlen
 * @outlen: size of @out (0: nothing written)
 * @err: filled on failure
 * Returns 1 (found: @out names it), 0 (every key inert, or the file is
 * absent), or -1 with @err filled as berth_git_config_read() does
 * (unreadable, a link, too big, a syntax error): callers treat such a file as
 * not inert.
 */
int berth_git_config_first_active(int dirfd, const char *name, char *out, size_t outlen,
				  struct berth_error *err);

/*
 * struct berth_git_refs - what one config file points at (last value wins,
 * as in git, for the single-valued fields).
 * @includes: include.path and every includeIf.<condition>.path, in file
 *   order, resolved (git-config(1) "Includes"): "~/x" and "~" against
 *   @home, "~user/x" against that user's home (getpwnam_r(3)), a relative
 *   path joined to @config_dir ("<config_dir>/<path>", not normalised, no
 *   link resolved), an absolute one kept.  A path starting with
 *   "%(prefix)/" (git's install prefix) is kept as written.  The condition
 *   is ignored: any may hold.  [include "x"] path is not an include (git
 *   reads only include.path).  Includes of included files are not followed:
 *   the caller reads each one (at most BERTH_GIT_INCLUDE_DEPTH deep) with
 *   its own directory as @config_dir.
 * @hooks_path: core.hooksPath after "~"/"~user" expansion, else raw (a
 *   relative one stays relative: git resolves it against the top of the
 *   worktree, see githooks(5)); NULL when unset
 * @worktree: core.worktree raw; NULL when unset
 * @worktree_config: extensions.worktreeConfig as a boolean (git honours it
 *   only with core.repositoryFormatVersion 1; the caller decides)
 * @bare: core.bare as a boolean
 */
struct berth_git_refs {
	char **includes;
	size_t n_includes;
	char *hooks_path;
	char *worktree;
	bool worktree_config;
	bool bare;
};

/*
 * berth_git_config_refs - read what @dirfd/@name points at.
 * @dirfd, @name: the config file, as berth_git_config_read()
 * @config_dir: absolute directory of the file (for relative includes)
 * @home: the host user's home for "~", or NULL
 * @out: filled (zeroed first); free with berth_git_refs_free(), also after
 *       a failure
 * @err: filled on failure
 * Booleans per git-config(1): true/yes/on, a bare key or a non-zero integer
 * (with an optional k/m/g suffix) are true; false/no/off, 0 and the empty
 * value are false.
 * Returns 0 (also when the file is absent: @out stays empty), or -1 with
 * @err filled: what berth_git_config_read() reports, or EINVAL where git
 * itself would fail on the file: include.path, includeIf.*.path,
 * core.hooksPath or core.worktree without a value, a "~" path with no @home,
 * a relative include with no absolute @config_dir, "~user" of an unknown
 * user (ENOENT), a bad boolean in core.bare or extensions.worktreeConfig;
 * ENOMEM; E2BIG when a resolved path would exceed PATH_MAX.
 */
int berth_git_config_refs(int dirfd, const char *name, const char *config_dir, const char *home,
			  struct berth_git_refs *out, struct berth_error *err);

/*
 * berth_git_refs_free - free what berth_git_config_refs() filled and zero
 * it.  @r may be NULL.
 */
void berth_git_refs_free(struct berth_git_refs *r);

/*
 * berth_git_read_gitfile - the directory a `.git` file names (setup.c
 * read_gitfile_gently(), gitrepository-layout(5) ".git" as a file).
 * @dirfd: the directory holding the file (a worktree top, a submodule)
 * @name: its name, usually ".git" (a path beneath @dirfd allowed, as
 *        berth_git_config_read())
 * @out: receives the path after "gitdir: ", trailing LF/CR stripped, as
 *       written: relative paths are relative to @dirfd (git joins them to
 *       the file's directory); not checked to be a git directory (the
 *       caller opens it and asks berth_git_is_gitdir())
 * @outlen: size of @out
 * @err: filled on failure
 * Returns 1 (a `.git` file: @out filled), 0 (absent, or a directory: no
 * `.git` file there), or -1 with @err filled where git would not take the
 * file either, or berth cannot read it without following a link: ELOOP (a
 * symbolic link), EINVAL (not a regular file, no "gitdir: " at the start,
 * no path after it; a NUL byte in it, where git would read the name up to
 * the NUL: refused, fail closed), E2BIG (over BERTH_GIT_GITFILE_MAX
 * bytes, git's own limit; or the path longer than @outlen - 1), or any
 * errno of open(2)/read(2).
 */
int berth_git_read_gitfile(int dirfd, const char *name, char *out, size_t outlen, struct berth_error *err);

/*
 * berth_git_commondir_ok - does the `commondir` file in @dirfd name the
 * repository that holds @dirfd (gitrepository-layout(5) "commondir",
 * "worktrees/<id>/")?
 * @dirfd: a git directory
 *
 * The expected directory is @dirfd itself, or @dirfd/../.. when the parent
 * of @dirfd is the directory entry `worktrees` of its own parent (compared by
 * st_dev/st_ino, no names read from /proc).  The file's content (trailing
 * LF/CR stripped; relative to @dirfd unless absolute) is resolved with
 * RESOLVE_NO_SYMLINKS and its st_dev/st_ino compared with the expected one.
 * Returns true when harmless: no `commondir`, or it names the expected
 * directory.  False for anything else, including what berth cannot check
 * without following a link (the file or a path component is a symbolic
 * link), an empty file (git dies on it), a larger one than
 * BERTH_GIT_COMMONDIR_MAX, a name that does not resolve, or any I/O error.
 */
bool berth_git_commondir_ok(int dirfd);

#endif
