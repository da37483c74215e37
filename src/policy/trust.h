/* SPDX-License-Identifier: MIT */
/*
 * trust.h - the host's trust surface: names in a writable directory that a
 * tool on the host later runs or trusts (docs/security.md, "The host's trust
 * surface").
 *
 * Two kinds of rule:
 *  - git's: a repository's config, hooks, commondir, worktrees and modules,
 *    and what its config points at, found by git's own rules
 *    (src/sandbox/gitrules.h), not by name;
 *  - names: a file or directory with one of these basenames, at any depth,
 *    which an agent, an editor, a shell or a package manager on the host
 *    reads (berth_trust_names); a name holding '/' is a path ending
 *    (".hg/hgrc"), matched where it ends a path.
 * Each name has a treatment:
 *  - BERTH_TRUST_READONLY: what exists at the top of a writable root when
 *    the run starts is read-only in the sandbox; anything the sandbox made
 *    or changed under that name anywhere is set aside when the run ends
 *    (renamed in place to NAME.berth-set-aside);
 *  - BERTH_TRUST_NAMED: writable; each change is named when the run ends.
 * Sources: each class's comment in trust.c.
 */
#ifndef BERTH_TRUST_H
#define BERTH_TRUST_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/error.h"

struct berth_policy;

enum berth_trust {
	BERTH_TRUST_NONE = 0, /* not a trust name */
	BERTH_TRUST_NAMED,    /* named at exit */
	BERTH_TRUST_READONLY, /* read-only at the top, set aside when changed */
};

struct berth_trust_name {
	const char *name; /* basename, or an fnmatch(3) pattern when it holds '*' */
	const char
	    *cls; /* the class: "agents", "instructions", "editors", "shell", "packages", "vcs", "home" */
	enum berth_trust treat; /* the default treatment */
	const char *why;        /* what on the host reads it, for messages */
};

/* The names, NULL-terminated (name == NULL). */
extern const struct berth_trust_name berth_trust_names[];

/* The classes, NULL-terminated, and the git paths `--unprotect` takes
 * (".git/hooks", ".git/config", ".git/commondir", ".git/config.worktree",
 * ".git/worktrees"). */
extern const char *const berth_trust_classes[];
extern const char *const berth_trust_git_paths[];

/*
 * berth_trust_lookup - the treatment of the basename @name under policy @p:
 * its default, made BERTH_TRUST_READONLY by a rules file's `guard.read-only`
 * (the name, a pattern matching it, or its class), BERTH_TRUST_NAMED by
 * `guard.named`, and BERTH_TRUST_NAMED when `--unprotect` names it or its
 * class (writable, still named).  A rules file can only make a name
 * stricter; `--unprotect` (a widening) is the only way to loosen one.
 * @why, when not NULL, receives what reads it (never NULL when the result is
 * not BERTH_TRUST_NONE).
 */
enum berth_trust berth_trust_lookup(const struct berth_policy *p, const char *name, const char **why);

/* berth_trust_lookup_class - berth_trust_lookup, also giving in @cls (when
 * not NULL) the name's class, or "rules" for a name only a rules file
 * adds. */
enum berth_trust berth_trust_lookup_class(const struct berth_policy *p, const char *name, const char **why,
					  const char **cls);

/* berth_trust_lookup_path - as berth_trust_lookup_class for the entry
 * @name in the root-relative directory @dir ("" for the top), also
 * matching the names that are path endings (".hg/hgrc"). */
enum berth_trust berth_trust_lookup_path(const struct berth_policy *p, const char *dir, const char *name,
					 const char **why, const char **cls);

/* berth_trust_path_prefix - does the entry @name in the root-relative
 * directory @dir end a path with the leading directories of a path-ending
 * name (".hg" and "a/.config/git" for ".hg/hgrc" and ".config/git/config")?
 * Such a directory renamed into place, or a link by that name, brings a
 * trust file with it. */
bool berth_trust_path_prefix(const char *dir, const char *name);

/* Is the git path @g (one of berth_trust_git_paths) opted out with
 * `--unprotect`? */
bool berth_trust_git_unprotected(const struct berth_policy *p, const char *g);

/*
 * berth_trust_canonical - the canonical spelling of an `--unprotect` or
 * rules-file argument @arg: a trust name (".vscode/" and "./.vscode" are
 * ".vscode"), a class, a git path (".git/hooks/" is ".git/hooks"), or, when
 * @any_name, any other basename or pattern (a rules file's own additions).
 * Returns a pointer into static storage or into @buf (size @len), or NULL
 * with @err filled (BERTH_EXIT_USAGE) naming @arg and the accepted values.
 */
const char *berth_trust_canonical(const char *arg, bool any_name, char *buf, size_t len,
				  struct berth_error *err);

#endif
