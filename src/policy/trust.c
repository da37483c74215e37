/* SPDX-License-Identifier: MIT */
/*
 * trust.c - the names of the host's trust surface and their treatment
 * (trust.h; docs/security.md, "The host's trust surface").
 */
#include "trust.h"

#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "policy.h"

#define RO BERTH_TRUST_READONLY
#define NAMED BERTH_TRUST_NAMED

const struct berth_trust_name berth_trust_names[] = {
    /* Agents' project settings, hooks and MCP servers: Claude Code runs the
	 * hooks of .claude/settings.json and starts the servers of .mcp.json
	 * (its docs, "Hooks", "MCP"); Codex, Cursor, Gemini CLI, Windsurf,
	 * Continue and Amazon Q read theirs from the project the same way.
	 * Read-only: an agent started on the host in that directory (or a
	 * directory below it, where each of them looks first) runs them.
	 * .berth/ holds berth's own project files (rules, docs/rules.md). */
    {".claude", "agents", RO, "the host's Claude Code runs its hooks and MCP servers"},
    {".codex", "agents", RO, "the host's Codex reads its config and MCP servers"},
    {".cursor", "agents", RO, "the host's Cursor reads its rules and MCP servers"},
    {".gemini", "agents", RO, "the host's Gemini CLI reads its settings and MCP servers"},
    {".windsurf", "agents", RO, "the host's Windsurf reads its rules and workflows"},
    {".continue", "agents", RO, "the host's Continue reads its config"},
    {".amazonq", "agents", RO, "the host's Amazon Q reads its rules and MCP servers"},
    {".mcp.json", "agents", RO, "an agent on the host starts the MCP servers it lists"},
    {"opencode.json", "agents", RO, "the host's opencode reads its MCP servers and commands"},
    {".opencode", "agents", RO, "the host's opencode reads its agents, commands and plugins"},
    {".aider.conf.yml", "agents", RO, "the host's aider reads its config (lint and test commands)"},
    {".berth", "agents", RO, "berth on the host reads the project's rules"},
    /* Agents' instructions: text an agent on the host takes as the user's
	 * (CLAUDE.md, AGENTS.md, ...).  Named, not read-only: writing them is
	 * ordinary agent work (/init), and they run nothing by themselves. */
    {"CLAUDE.md", "instructions", NAMED, "the host's Claude Code reads it as instructions"},
    {"CLAUDE.local.md", "instructions", NAMED, "the host's Claude Code reads it as instructions"},
    {"AGENTS.md", "instructions", NAMED, "agents on the host read it as instructions"},
    {"AGENT.md", "instructions", NAMED, "agents on the host read it as instructions"},
    {"GEMINI.md", "instructions", NAMED, "the host's Gemini CLI reads it as instructions"},
    {".cursorrules", "instructions", NAMED, "the host's Cursor reads it as instructions"},
    {".windsurfrules", "instructions", NAMED, "the host's Windsurf reads it as instructions"},
    {".clinerules", "instructions", NAMED, "the host's Cline reads it as instructions"},
    /* Editors: VS Code runs a task with "runOn": "folderOpen" and takes
	 * interpreter and terminal paths from .vscode/settings.json; a dev
	 * container's initializeCommand runs on the host; JetBrains IDEs, Zed
	 * and Fleet keep run configurations and tasks; vim and neovim source
	 * .exrc/.nvimrc/.nvim.lua with 'exrc'; Emacs evaluates .dir-locals.el
	 * (after its safe-local prompt). */
    {".vscode", "editors", RO, "VS Code on the host runs its tasks and reads its settings"},
    {"*.code-workspace", "editors", RO, "VS Code on the host runs its tasks and reads its settings"},
    {".devcontainer", "editors", RO, "a dev container's initializeCommand runs on the host"},
    {".idea", "editors", RO, "JetBrains IDEs on the host run its startup tasks and run configurations"},
    {".zed", "editors", RO, "Zed on the host reads its tasks and settings"},
    {".fleet", "editors", RO, "Fleet on the host reads its run configurations"},
    {".devcontainer.json", "editors", RO, "a dev container's initializeCommand runs on the host"},
    {".exrc", "editors", RO, "vim on the host sources it ('exrc')"},
    {"_exrc", "editors", RO, "vim on the host sources it ('exrc')"},
    {".vimrc", "editors", RO, "vim on the host sources it ('exrc', or as the user's vimrc)"},
    {"_vimrc", "editors", RO, "vim on the host sources it ('exrc')"},
    {".gvimrc", "editors", RO, "gvim on the host sources it ('exrc')"},
    {".nvimrc", "editors", RO, "neovim on the host sources it ('exrc')"},
    {".nvim.lua", "editors", RO, "neovim on the host sources it ('exrc')"},
    {".dir-locals.el", "editors", RO, "Emacs on the host evaluates it"},
    /* Shells and environment loaders: direnv sources .envrc on cd (once
	 * allowed), mise trusts its config by path; the rc files run when the
	 * workspace is a home directory, or is copied or linked into one. */
    {".envrc", "shell", RO, "direnv on the host sources it"},
    {".mise.toml", "shell", RO, "mise on the host runs its hooks and tasks"},
    {"mise.toml", "shell", RO, "mise on the host runs its hooks and tasks"},
    {".mise", "shell", RO, "mise on the host runs its hooks and tasks"},
    {".bashrc", "shell", RO, "bash on the host sources it"},
    {".bash_profile", "shell", RO, "bash on the host sources it"},
    {".bash_login", "shell", RO, "bash on the host sources it"},
    {".bash_logout", "shell", RO, "bash on the host sources it"},
    {".profile", "shell", RO, "the host's login shell sources it"},
    {".zshrc", "shell", RO, "zsh on the host sources it"},
    {".zshenv", "shell", RO, "zsh on the host sources it"},
    {".zprofile", "shell", RO, "zsh on the host sources it"},
    {".zlogin", "shell", RO, "zsh on the host sources it"},
    {".zlogout", "shell", RO, "zsh on the host sources it"},
    /* Package managers and hook managers, which run what these name on the
	 * next install or commit: npm's script-shell, node-options and git in
	 * .npmrc; yarn's yarnPath and plugins; pnpm's .pnpmfile.cjs; bun's
	 * preload; pre-commit's and lefthook's hook commands; husky's hooks;
	 * cargo's runner and rustc-wrapper (.cargo/config.toml); Maven's
	 * .mvn/jvm.config and extensions. */
    {".npmrc", "packages", RO, "npm on the host runs its script-shell and git"},
    {".yarnrc", "packages", RO, "yarn on the host runs its yarn-path"},
    {".yarnrc.yml", "packages", RO, "yarn on the host runs its yarnPath and plugins"},
    {".pnpmfile.cjs", "packages", RO, "pnpm on the host runs it on install"},
    {"bunfig.toml", "packages", RO, "bun on the host runs its preload scripts"},
    {".pre-commit-config.yaml", "packages", RO, "pre-commit on the host runs its hooks on commit"},
    {"lefthook.yml", "packages", RO, "lefthook on the host runs its commands on commit"},
    {".lefthook.yml", "packages", RO, "lefthook on the host runs its commands on commit"},
    {".husky", "packages", RO, "husky's hooks run on the host's commits"},
    {".cargo", "packages", RO, "cargo on the host runs its runner and rustc-wrapper"},
    {".mvn", "packages", RO, "Maven on the host reads its JVM options and extensions"},
    /* Other version control systems' repository config: Mercurial runs
	 * the hooks and loads the extensions of .hg/hgrc (hgrc(5)); jj takes
	 * its editor, pager, aliases and fix tools from the repository's
	 * config. */
    {".hg/hgrc", "vcs", RO, "Mercurial on the host runs its hooks and extensions"},
    {".jj/repo/config.toml", "vcs", RO, "jj on the host runs its aliases, editor and fix tools"},
    /* A home directory's own files, for a workspace that is one, or is
	 * copied or linked into one (a dotfiles repository): git's user
	 * config (core.pager, aliases), ssh's (ProxyCommand) and who may log
	 * in, gnupg's, and the rc files of tmux, fish, readline and gdb. */
    {".gitconfig", "home", RO, "git on the host reads it as the user's config"},
    {".config/git/config", "home", RO, "git on the host reads it as the user's config"},
    {".ssh", "home", RO, "ssh on the host reads its config (ProxyCommand) and authorized_keys"},
    {".gnupg", "home", RO, "gpg on the host reads its config and keys"},
    {".bash_aliases", "home", RO, "bash on the host sources it"},
    {".config/fish/config.fish", "home", RO, "fish on the host sources it"},
    {".tmux.conf", "home", RO, "tmux on the host runs its commands"},
    {".inputrc", "home", RO, "readline on the host binds its macros"},
    {".gdbinit", "home", RO, "gdb on the host runs its commands"},
    {NULL, NULL, BERTH_TRUST_NONE, NULL},
};

const char *const berth_trust_classes[] = {"agents",   "instructions", "editors", "shell",
					   "packages", "vcs",          "home",    NULL};

const char *const berth_trust_git_paths[] = {".git/hooks",           ".git/config",    ".git/commondir",
					     ".git/config.worktree", ".git/worktrees", NULL};

/* A pattern with a '/' names a path ending (".hg/hgrc"): matched by
 * berth_trust_lookup_path only. */
static bool is_path(const char *pattern)
{
	return strchr(pattern, '/') != NULL;
}

static bool matches(const char *pattern, const char *name)
{
	if (is_path(pattern))
		return false;
	if (strchr(pattern, '*') != NULL || strchr(pattern, '?') != NULL || strchr(pattern, '[') != NULL)
		return fnmatch(pattern, name, 0) == 0;
	return strcmp(pattern, name) == 0;
}

static bool listed(char *const *v, size_t n, const char *name, const char *cls)
{
	for (size_t i = 0; i < n; i++)
		if ((cls != NULL && strcmp(v[i], cls) == 0) || strcmp(v[i], name) == 0 || matches(v[i], name))
			return true;
	return false;
}

enum berth_trust berth_trust_lookup(const struct berth_policy *p, const char *name, const char **why)
{
	return berth_trust_lookup_class(p, name, why, NULL);
}

enum berth_trust berth_trust_lookup_class(const struct berth_policy *p, const char *name, const char **why,
					  const char **cls)
{
	const struct berth_trust_name *t = NULL;
	enum berth_trust r = BERTH_TRUST_NONE;
	const char *w = NULL;

	for (size_t i = 0; berth_trust_names[i].name != NULL && t == NULL; i++)
		if (matches(berth_trust_names[i].name, name))
			t = &berth_trust_names[i];
	if (t != NULL) {
		r = t->treat;
		w = t->why;
	}
	if (listed(p->guard_named, p->n_guard_named, name, t != NULL ? t->cls : NULL) &&
	    r < BERTH_TRUST_NAMED) {
		r = BERTH_TRUST_NAMED;
		w = w != NULL ? w : "a rules file names it (guard.named)";
	}
	if (listed(p->guard_ro, p->n_guard_ro, name, t != NULL ? t->cls : NULL)) {
		r = BERTH_TRUST_READONLY;
		w = w != NULL ? w : "a rules file guards it (guard.read-only)";
	}
	if (r == BERTH_TRUST_READONLY &&
	    listed(p->unprotect, p->n_unprotect, name, t != NULL ? t->cls : NULL))
		r = BERTH_TRUST_NAMED;
	if (why != NULL)
		*why = w;
	if (cls != NULL)
		*cls = t != NULL ? t->cls : "rules";
	return r;
}

enum berth_trust berth_trust_lookup_path(const struct berth_policy *p, const char *dir, const char *name,
					 const char **why, const char **cls)
{
	enum berth_trust r = berth_trust_lookup_class(p, name, why, cls);
	char path[4096];

	if (r != BERTH_TRUST_NONE)
		return r;
	if ((size_t)snprintf(path, sizeof path, "%s%s%s", dir, *dir != '\0' ? "/" : "", name) >= sizeof path)
		return r;
	for (size_t i = 0; berth_trust_names[i].name != NULL; i++) {
		const struct berth_trust_name *t = &berth_trust_names[i];
		size_t pl = strlen(path), tl = strlen(t->name);
		if (!is_path(t->name) || tl > pl || strcmp(path + pl - tl, t->name) != 0 ||
		    (pl > tl && path[pl - tl - 1] != '/'))
			continue;
		r = t->treat;
		if (r == BERTH_TRUST_READONLY && (listed(p->unprotect, p->n_unprotect, t->name, t->cls)))
			r = BERTH_TRUST_NAMED;
		if (listed(p->guard_ro, p->n_guard_ro, t->name, t->cls))
			r = BERTH_TRUST_READONLY;
		if (why != NULL)
			*why = t->why;
		if (cls != NULL)
			*cls = t->cls;
		return r;
	}
	return BERTH_TRUST_NONE;
}

bool berth_trust_path_prefix(const char *dir, const char *name)
{
	char path[4096];
	size_t pl;

	if ((size_t)snprintf(path, sizeof path, "%s%s%s", dir, *dir != '\0' ? "/" : "", name) >= sizeof path)
		return false;
	pl = strlen(path);
	for (size_t i = 0; berth_trust_names[i].name != NULL; i++) {
		const char *t = berth_trust_names[i].name;
		for (const char *sl = strchr(t, '/'); sl != NULL; sl = strchr(sl + 1, '/')) {
			size_t k = (size_t)(sl - t); /* t[0..k) is a proper prefix of components */
			if (k <= pl && strncmp(path + pl - k, t, k) == 0 &&
			    (pl == k || path[pl - k - 1] == '/'))
				return true;
		}
	}
	return false;
}

bool berth_trust_git_unprotected(const struct berth_policy *p, const char *g)
{
	for (size_t i = 0; i < p->n_unprotect; i++)
		if (strcmp(p->unprotect[i], g) == 0)
			return true;
	return false;
}

const char *berth_trust_canonical(const char *arg, bool any_name, char *buf, size_t len,
				  struct berth_error *err)
{
	const char *s = arg;
	size_t n;

	/* Accept `/workspace/.bashrc`, `./.bashrc`, `.bashrc`, `.vscode` or `.vscode/`. */
	if (strncmp(s, "/workspace/", 11) == 0)
		s += 11;
	else if (strncmp(s, "./", 2) == 0)
		s += 2;
	n = strlen(s);
	while (n > 0 && s[n - 1] == '/')
		n--;
	for (size_t i = 0; berth_trust_git_paths[i] != NULL; i++)
		if (strlen(berth_trust_git_paths[i]) == n && strncmp(berth_trust_git_paths[i], s, n) == 0)
			return berth_trust_git_paths[i];
	for (size_t i = 0; berth_trust_classes[i] != NULL; i++)
		if (strlen(berth_trust_classes[i]) == n && strncmp(berth_trust_classes[i], s, n) == 0)
			return berth_trust_classes[i];
	for (size_t i = 0; berth_trust_names[i].name != NULL; i++)
		if (strlen(berth_trust_names[i].name) == n && strncmp(berth_trust_names[i].name, s, n) == 0)
			return berth_trust_names[i].name;
	if (any_name && n > 0 && n < len && memchr(s, '/', n) == NULL &&
	    !(n <= 2 && s[0] == '.' && s[n - 1] == '.')) {
		memcpy(buf, s, n);
		buf[n] = '\0';
		return buf;
	}
	berth_usage_err(err, "`%s` is not a guarded name", arg);
	berth_err_hint(
	    err,
	    "guarded: a class (agents, instructions, editors, shell, packages, vcs, home), a name such as "
	    ".vscode, .claude, .envrc, .npmrc (docs/security.md lists them), or .git/hooks, .git/config, "
	    ".git/commondir, .git/config.worktree, .git/worktrees");
	return NULL;
}
