# SPDX-License-Identifier: MIT
"""git - clone, branch, commit, diff, push and pull in the app's workspace.

Every remote is reached over HTTPS through berth's egress broker: only the
hosts berth.yml declares answer.  git runs with no system or global config,
no hooks (core.hooksPath=/dev/null), no transport but https, and only after
the repository's own config was checked against a list of keys that run
nothing: a repository in the workspace is data, and nothing planted in it
(a hook, core.fsmonitor, a filter, an alias) is ever run by this app.
"""

import os
import re
import subprocess

import berth_app

WORKSPACE = "/workspace"
CA_FILE = "/app/ca.pem"  # a private CA to trust, shipped with the app (optional)
OUT_LIMIT = 256 * 1024
TIMEOUT_S = 120

app = berth_app.App()

# Keys of a repository's config that make git run or read nothing the
# repository chose (git-config(1)); anything else refuses the call.  An
# allow-list: a key this app does not know is not inert.  A subset of
# berth's own list for the host's trust surface (berth_git_key_inert,
# src/sandbox/gitrules.c): what clone, commit, branch, push and pull write.
INERT = re.compile(
    r"^(core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase|precomposeunicode"
    r"|symlinks|autocrlf|eol|safecrlf|quotepath|abbrev|compression|looseCompression)"
    r"|extensions\.(objectformat|worktreeconfig)"
    r"|remote\.[^.\s]+(\.[^.\s]+)*\.(url|pushurl|fetch|push|tagopt|prune|mirror)"
    r"|branch\.[^\s]+\.(remote|merge|rebase|pushremote)"
    r"|user\.(name|email)|init\.defaultbranch|pull\.(rebase|ff)|push\.default"
    r"|gc\.auto|fetch\.prune|advice\.[a-z]+)$",
    re.IGNORECASE)

BASE = [
    "git",
    "-c", "core.hooksPath=/dev/null",      # githooks(5): no hook of the repository runs
    "-c", "core.fsmonitor=false",
    "-c", "core.pager=cat", "-c", "core.editor=false", "-c", "core.askPass=",
    "-c", "credential.helper=",
    "-c", "protocol.allow=never", "-c", "protocol.https.allow=always",
    "-c", "submodule.recurse=false",
    "-c", "safe.bareRepository=explicit",
    "-c", "init.defaultBranch=main",
    "-c", "user.name=berth git app", "-c", "user.email=git-app@berth.invalid",
]
if os.path.isfile(CA_FILE):
    BASE += ["-c", "http.sslCAInfo=" + CA_FILE]

ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/tmp",
    "LC_ALL": "C",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_CEILING_DIRECTORIES": WORKSPACE,
    "GIT_ATTR_NOSYSTEM": "1",
}
# The broker's listeners; NO_PROXY is left out so that every request goes
# through them (it names only the sandbox's own loopback).
for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
    if k in os.environ:
        ENV[k] = os.environ[k]

PROXY_REFUSAL = re.compile(r"CONNECT tunnel failed, response 403|Received HTTP code 403 from proxy")
URL = re.compile(r"^https://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:([0-9]{1,5}))?(/[^\s]*)?$")


def _check_dir(dir):
    """The repository directory: a relative path below /workspace."""
    if not isinstance(dir, str) or dir == "" or dir.startswith("/") or "\0" in dir:
        raise berth_app.InvalidParams("$.dir", "a relative path below /workspace, not empty")
    parts = dir.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise berth_app.InvalidParams("$.dir", "no empty, `.` or `..` component")
    # a repository in a `.git` (a clone of a tree that looks like a git
    # directory, config and all) would be another repository's git directory
    if any(p.lower() == ".git" for p in parts):
        raise berth_app.InvalidParams("$.dir", "no `.git` component (a repository's git directory is not a repository)")
    return os.path.join(WORKSPACE, dir)


def _check_url(url, field="$.url"):
    m = URL.match(url) if isinstance(url, str) else None
    if m is None:
        raise berth_app.InvalidParams(field, "only https:// URLs (git over plain HTTP is neither private nor authenticated; "
                                             "other transports run programs), without user or password")
    return m.group(1).strip("[]"), int(m.group(3) or 443)


def _repo_config(top):
    """The repository's own config, checked: every key must be inert."""
    gitdir = os.path.join(top, ".git")
    if os.path.islink(gitdir) or not os.path.isdir(gitdir):
        raise berth_app.AppError("`%s` is not a repository this app made: no .git directory" % os.path.relpath(top, WORKSPACE))
    p = subprocess.run(["git", "config", "--file", os.path.join(gitdir, "config"), "--list", "-z"],
                       env=ENV, capture_output=True, timeout=TIMEOUT_S)
    if p.returncode not in (0, 1):
        raise berth_app.AppError("cannot read the repository's config: %s" % p.stderr.decode(errors="replace").strip())
    for entry in p.stdout.split(b"\0"):
        if not entry:
            continue
        key = entry.decode(errors="replace").partition("\n")[0]
        if not INERT.match(key):
            raise berth_app.AppError(
                "the repository's config sets `%s`, which this app does not run git with "
                "(only keys that run nothing are allowed); remove it with `git config --unset %s`" % (key, key),
                {"key": key})
    # git also takes config from config.worktree (extensions.worktreeConfig)
    # and the config and hooks of the directory `commondir` names
    # (gitrepository-layout(5)): this app's clones have neither.
    for name in ("config.worktree", "commondir"):
        if os.path.lexists(os.path.join(gitdir, name)):
            raise berth_app.AppError("the repository has a .git/%s, which this app does not run git with; remove it" % name)


def _git(args, cwd=None, check=True, input=None):
    if len(args) > 1 and args[0] == "-C":
        # the repository is the one checked, never one git would discover
        # above it (when top/.git is not a valid git directory, git goes on
        # to the parents: a git directory whose config was never read)
        top = args[1]
        args = args[:2] + ["--git-dir=" + os.path.join(top, ".git"), "--work-tree=" + top] + args[2:]
    try:
        p = subprocess.run(BASE + args, cwd=cwd or WORKSPACE, env=ENV, capture_output=True,
                           timeout=TIMEOUT_S, input=input)
    except subprocess.TimeoutExpired:
        raise berth_app.AppError("git %s took longer than %d s" % (args[0], TIMEOUT_S))
    out = p.stdout.decode(errors="replace")
    err = p.stderr.decode(errors="replace")
    if check and p.returncode != 0:
        _fail(args, p.returncode, err or out)
    return p.returncode, out, err


def _fail(args, status, text, url=None):
    text = text.strip()[-4000:]
    data = {"exit_status": status}
    if url is not None and PROXY_REFUSAL.search(text):
        host, port = _check_url(url)
        # berth explains the refusal against the manifest (the denial block)
        data.update(errno=13, errno_name="EACCES", syscall="connect", host=host, port=port)
        raise berth_app.AppError("berth's egress broker refused %s:%d (not declared in berth.yml): %s"
                                 % (host, port, text), data, code=-32001)
    raise berth_app.AppError("git %s failed (exit status %d): %s" % (args[0], status, text), data)


def _remote_url(top, remote):
    rc, out, _ = _git(["-C", top, "remote", "get-url", "--push", remote], check=False)
    if rc != 0:
        raise berth_app.AppError("no remote `%s`" % remote)
    url = out.strip()
    _check_url(url, "remote `%s`" % remote)
    return url


def _repo(dir):
    top = _check_dir(dir)
    _repo_config(top)
    return top


def _head(top):
    rc, out, _ = _git(["-C", top, "rev-parse", "--verify", "-q", "HEAD"], check=False)
    return out.strip() if rc == 0 else None


def _branch_name(name, field):
    if not isinstance(name, str) or name.startswith("-") or subprocess.run(
            ["git", "check-ref-format", "--branch", name], env=ENV, capture_output=True).returncode != 0:
        raise berth_app.InvalidParams(field, "not a valid branch name")
    return name


def _some(d):
    """d without its None members (an empty repository has no HEAD)."""
    return {k: v for k, v in d.items() if v is not None}


def _cut(text):
    b = text.encode()
    return b[:OUT_LIMIT].decode(errors="ignore"), len(b) > OUT_LIMIT


@app.export("clone")
def clone(url, dir=None, branch=None):
    _check_url(url)
    if dir is None:
        dir = re.sub(r"\.git$", "", url.rstrip("/").rsplit("/", 1)[-1]) or "repo"
    top = _check_dir(dir)
    if os.path.lexists(top):
        raise berth_app.AppError("`%s` exists already in the workspace" % dir)
    args = ["clone", "--no-recurse-submodules", "--", url, top]
    if branch is not None:
        args[1:1] = ["--branch", _branch_name(branch, "$.branch")]
    rc, out, err = _git(args, check=False)
    if rc != 0:
        _fail(["clone"], rc, err or out, url)
    _, cur, _ = _git(["-C", top, "branch", "--show-current"])
    return _some({"dir": dir, "head": _head(top), "branch": cur.strip()})


@app.export("status")
def status(dir):
    top = _repo(dir)
    _, out, _ = _git(["-C", top, "status", "--porcelain=v1", "-z", "--branch", "--untracked-files=all"])
    entries, branch = [], None
    items = out.split("\0")
    i = 0
    while i < len(items):
        it = items[i]
        i += 1
        if not it:
            continue
        if it.startswith("## "):
            branch = it[3:]
            continue
        e = {"status": it[:2], "path": it[3:]}
        if it[0] in "RC":  # a rename's source follows
            e["from"] = items[i]
            i += 1
        entries.append(e)
    return {"branch": branch, "clean": not entries, "entries": entries}


@app.export("log")
def log(dir, max=20):
    top = _repo(dir)
    if not isinstance(max, int) or not 1 <= max <= 1000:
        raise berth_app.InvalidParams("$.max", "expected 1 to 1000")
    if _head(top) is None:
        return {"commits": []}
    _, out, _ = _git(["-C", top, "log", "-n", str(max), "-z", "--format=%H%x1f%an <%ae>%x1f%aI%x1f%s"])
    commits = []
    for rec in out.split("\0"):
        rec = rec.strip("\n")
        if rec:
            c, a, d, s = rec.split("\x1f", 3)
            commits.append({"commit": c, "author": a, "date": d, "subject": s})
    return {"commits": commits}


@app.export("branch")
def branch(dir, name=None, start=None, checkout=True):
    top = _repo(dir)
    if name is not None:
        _branch_name(name, "$.name")
        exists = _git(["-C", top, "show-ref", "--verify", "-q", "refs/heads/" + name], check=False)[0] == 0
        if not exists:
            args = ["-C", top, "branch", "--", name]
            if start is not None:
                if not isinstance(start, str) or start.startswith("-"):
                    raise berth_app.InvalidParams("$.start", "a revision, not an option")
                args.append(start)
            _git(args)
        if checkout:
            _git(["-C", top, "checkout", "-q", name, "--"])
    _, cur, _ = _git(["-C", top, "branch", "--show-current"])
    _, out, _ = _git(["-C", top, "for-each-ref", "--format=%(refname:short)", "refs/heads/"])
    return {"current": cur.strip(), "branches": [b for b in out.split("\n") if b]}


@app.export("write_file")
def write_file(dir, path, content):
    top = _repo(dir)
    if not isinstance(path, str) or path.startswith("/") or any(p in ("", ".", "..", ".git") for p in path.split("/")):
        raise berth_app.InvalidParams("$.path", "a relative path in the work tree, not in .git")
    target = os.path.join(top, path)
    # No component is followed as a link: a cloned tree may hold `x -> .git/hooks`
    # or `x -> ../other-repo`, through which a write would land in a git
    # directory; the last one, a link, is replaced (the rename), not written through.
    cur = top
    for part in path.split("/")[:-1]:
        cur = os.path.join(cur, part)
        if os.path.islink(cur):
            raise berth_app.AppError("`%s` is a symbolic link; write_file follows none" % os.path.relpath(cur, top))
        if not os.path.exists(cur):
            try:
                os.mkdir(cur)
            except OSError as e:
                raise berth_app.os_error(e, "mkdir", os.path.relpath(cur, top))
    tmp = target + ".berth-tmp"
    try:
        with open(tmp, "x", encoding="utf-8") as f:
            f.write(content)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise berth_app.os_error(e, "write", path)
    return {"path": path, "bytes": len(content.encode())}


@app.export("commit")
def commit(dir, message, paths=None, all=False):
    top = _repo(dir)
    if not isinstance(message, str) or not message.strip():
        raise berth_app.InvalidParams("$.message", "a non-empty message")
    if paths:
        if not isinstance(paths, list) or not all_str(paths):
            raise berth_app.InvalidParams("$.paths", "a list of paths")
        _git(["-C", top, "add", "--"] + paths)
    if all:
        _git(["-C", top, "add", "-A"])
    rc, out, err = _git(["-C", top, "commit", "-q", "--no-verify", "-F", "-"], check=False,
                        input=message.encode())
    if rc != 0:
        _fail(["commit"], rc, err or out)
    return {"commit": _head(top)}


def all_str(xs):
    return all(isinstance(x, str) and not x.startswith("-") for x in xs)


@app.export("diff")
def diff(dir, staged=False, rev=None):
    top = _repo(dir)
    args = ["-C", top, "diff", "--no-ext-diff", "--no-textconv", "--no-color"]
    if staged:
        args.append("--cached")
    if rev is not None:
        if not isinstance(rev, str) or rev.startswith("-"):
            raise berth_app.InvalidParams("$.rev", "a revision, not an option")
        args.append(rev)
    args.append("--")
    _, out, _ = _git(args)
    text, cut = _cut(out)
    return {"diff": text, "truncated": cut}


def _remote_op(op, dir, remote, branch):
    top = _repo(dir)
    if not isinstance(remote, str) or not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", remote):
        raise berth_app.InvalidParams("$.remote", "a remote's name")
    url = _remote_url(top, remote)
    if branch is None:
        branch = _git(["-C", top, "branch", "--show-current"])[1].strip()
        if not branch:
            raise berth_app.AppError("no branch is checked out; give `branch`")
    _branch_name(branch, "$.branch")
    return top, url, branch


@app.export("remote")
def remote(dir, name=None, url=None):
    top = _repo(dir)
    if name is not None:
        if not isinstance(name, str) or not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", name):
            raise berth_app.InvalidParams("$.name", "a remote's name: letters, digits, `.`, `_`, `-`")
        if url is None:
            raise berth_app.InvalidParams("$.url", "give the remote's https:// URL")
        _check_url(url)
        exists = _git(["-C", top, "remote", "get-url", name], check=False)[0] == 0
        _git(["-C", top, "remote", "set-url" if exists else "add", "--", name, url])
    _, out, _ = _git(["-C", top, "config", "--get-regexp", r"^remote\..*\.url$"], check=False)
    remotes = {}
    for line in out.splitlines():
        k, _, v = line.partition(" ")
        remotes[k[len("remote."):-len(".url")]] = v
    return {"remotes": remotes}


@app.export("push")
def push(dir, remote="origin", branch=None):
    top, url, branch = _remote_op("push", dir, remote, branch)
    rc, out, err = _git(["-C", top, "push", "--no-verify", "--porcelain", remote,
                         "refs/heads/%s:refs/heads/%s" % (branch, branch)], check=False)
    if rc != 0:
        _fail(["push"], rc, err or out, url)
    return {"remote": remote, "branch": branch, "commit": _head(top), "output": _cut(out + err)[0]}


@app.export("pull")
def pull(dir, remote="origin", branch=None):
    top, url, branch = _remote_op("pull", dir, remote, branch)
    before = _head(top)
    rc, out, err = _git(["-C", top, "pull", "--ff-only", "--no-rebase", remote, branch], check=False)
    if rc != 0:
        _fail(["pull"], rc, err or out, url)
    after = _head(top)
    return _some({"remote": remote, "branch": branch, "before": before, "head": after, "changed": before != after})


app.run()
