#!/usr/bin/env bash
# Attacks on the host's trust surface found by the break13 review (issue 13).
# Each check runs the payload inside `berth run`, then the HOST's real tool,
# and asserts that the sandbox's choice did not run (a canary outside every
# writable root) or did not hang the host's tool.  On the code of branch
# break13 (1115ebe) checks 1-5 FAIL; they pass when the findings are fixed.
#
#  1. staged over two runs on two different roots (child, then parent):
#     `a/n/g/{objects,refs,config,hooks/pre-commit}` written by a run on
#     `W/a`, renamed to `a/n/.git` (+ HEAD) by a run on `W` -> the host's
#     `git status` runs core.fsmonitor and `git commit` the pre-commit hook.
#  2. the same with a harmless `a/cl/settings.json` renamed to `a/.claude`.
#  3. the `restore: mv '...'` line berth prints is shell code the sandbox
#     chose: a directory named `q';touch CANARY;'` makes it run a command.
#  4. a FIFO as `HEAD` of a new nested repository is left in place: the
#     host's `git status` at the top of the workspace blocks forever.
#  5. `.vimrc` in the workspace (vim's 'exrc' sources it exactly like the
#     guarded `.exrc`) is neither read-only nor set aside.
#  6. every set-aside name taken in advance (`NAME.berth-set-aside`, `.2` ..
#     `.99`, which the sandbox can create itself): berth only warns "could
#     not set aside", and the top repository's new `.git/commondir` (to a
#     directory whose config has core.fsmonitor) and `.envrc` stay live.
#  7. the exit walk skips every entry whose name holds `.berth-set-aside`,
#     directories included: a repository made in `s.berth-set-aside/` and
#     added to the top's index as a gitlink (a submodule) has its
#     core.fsmonitor run by the host's `git status` at the top, silently;
#     `d.berth-set-aside/.vscode/tasks.json` is not set aside either.
#  8. `--rw PROJ/.vscode` (a trust directory as a root of its own): a new
#     tasks.json in it is not set aside, and the widening line does not say
#     that it is a trust directory (`--rw PROJ/.git` is handled).
#
# usage: run-trust-break13.sh /path/to/berth
# Works as root and as an unprivileged user (the berth binary and a
# writable TMPDIR must be readable by the caller).  Output is TAP.
set -u
export LC_ALL=C
B=${1:?usage: $0 /path/to/berth}
T=$(mktemp -d "${TMPDIR:-/tmp}/break13.XXXXXX")
# berth keeps the directories it saw at the end of runs in its state (trustscan.h): a state of its own
export XDG_STATE_HOME="$T/state"
C=$T/canaries
mkdir -p "$C"
trap 'rm -rf "$T"' EXIT
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { if eval "$2"; then ok "$1"; else not_ok "$1"; fi; }
gitq() { git -c user.email=t@t -c user.name=t "$@" >/dev/null 2>&1; }

# 1 + 2: staged over two runs on different roots
mkdir -p "$T/st/a"
"$B" run --workspace "$T/st/a" -- sh -c "
	mkdir -p n/g/objects n/g/refs n/g/hooks cl
	printf '[core]\n\tfsmonitor = touch $C/fsmonitor\n' > n/g/config
	printf '#!/bin/sh\ntouch $C/hook\n' > n/g/hooks/pre-commit
	chmod +x n/g/hooks/pre-commit
	echo '{\"hooks\":{}}' > cl/settings.json" >"$T/o1" 2>&1
sleep 1.1 # a later clock tick than run 1's files
"$B" run --workspace "$T/st" -- sh -c '
	mv a/n/g a/n/.git
	echo "ref: refs/heads/master" > a/n/.git/HEAD
	mv a/cl a/.claude' >"$T/o2" 2>&1
(cd "$T/st/a/n" && timeout 10 git status >/dev/null 2>&1; gitq commit --allow-empty -m x)
check "staged git dir over two roots: the host's git ran no fsmonitor" '[ ! -e "$C/fsmonitor" ]'
check "staged git dir over two roots: the host's git ran no pre-commit hook" '[ ! -e "$C/hook" ]'
check "staged .claude over two roots: settings.json set aside" \
	'[ ! -e "$T/st/a/.claude/settings.json" ] && [ -e "$T/st/a/.claude/settings.json.berth-set-aside" ]'

# 3: the restore line is shell code
mkdir -p "$T/rq"
"$B" run --workspace "$T/rq" -- sh -c "d=\"q';touch $C/restore;'\"; mkdir -p \"\$d\"; echo x > \"\$d/.envrc\"" \
	>"$T/o3" 2>&1
line=$(grep -o "restore: mv .*" "$T/o3" | head -1)
if [ -z "$line" ]; then
	not_ok "restore line printed for a set-aside .envrc (got: $(head -c 300 "$T/o3"))"
else
	(cd "$T" && bash -c "${line#restore: }" >/dev/null 2>&1)
	check "pasting berth's restore command runs nothing the sandbox chose" '[ ! -e "$C/restore" ]'
fi

# 4: a FIFO HEAD in a new nested repository hangs the host's git status
mkdir -p "$T/ff" && (cd "$T/ff" && git init -q && gitq commit --allow-empty -m i)
"$B" run --workspace "$T/ff" -- sh -c 'git init -q r; rm r/.git/HEAD; mkfifo r/.git/HEAD' >"$T/o4" 2>&1
(cd "$T/ff" && timeout 10 git status >/dev/null 2>&1)
rc=$?
check "a FIFO planted as a nested HEAD does not hang the host's git status (rc $rc)" '[ $rc -ne 124 ]'

# 5: .vimrc is vim's exrc as much as .exrc is
mkdir -p "$T/vr"
"$B" run --workspace "$T/vr" -- sh -c "echo 'call system(\"touch $C/vimrc\")' > .vimrc" >"$T/o5" 2>&1
if command -v vim >/dev/null 2>&1 && command -v script >/dev/null 2>&1; then
	mkdir -p "$T/vh" && printf 'set nocompatible\nset exrc\n' >"$T/vh/.vimrc"
	# interactive start (on a pty): vim -es skips every initialization
	(cd "$T/vr" && HOME=$T/vh timeout 10 script -qc "vim -i NONE +qa" /dev/null </dev/null >/dev/null 2>&1)
	check "vim with 'exrc' on the host did not source the sandbox's .vimrc" '[ ! -e "$C/vimrc" ]'
else
	check "the sandbox's .vimrc was set aside (no vim here to run)" '[ ! -e "$T/vr/.vimrc" ]'
fi

# 6: the set-aside names taken in advance
mkdir -p "$T/ex" && (cd "$T/ex" && git init -q && gitq commit --allow-empty -m i)
"$B" run --workspace "$T/ex" -- sh -c "
	mkdir -p e2/objects e2/refs
	printf '[core]\n\tfsmonitor = touch $C/exhaust\n' > e2/config
	for n in .git/commondir .envrc; do
		touch \$n.berth-set-aside; i=2
		while [ \$i -le 200 ]; do touch \$n.berth-set-aside.\$i; i=\$((i + 1)); done
	done
	echo 'touch $C/exhaust-envrc' > .envrc
	echo ../e2 > .git/commondir" >"$T/o6" 2>&1
(cd "$T/ex" && timeout 10 git status >/dev/null 2>&1; [ -f .envrc ] && bash -c '. ./.envrc' >/dev/null 2>&1)
check "set-aside names taken: the host's git ran no fsmonitor through .git/commondir" '[ ! -e "$C/exhaust" ]'
check "set-aside names taken: the sandbox's .envrc is not live" '[ ! -e "$C/exhaust-envrc" ]'

# 7: names the walk skips
mkdir -p "$T/sk" && (cd "$T/sk" && git init -q && gitq commit --allow-empty -m i)
"$B" run --workspace "$T/sk" -- sh -c "
	git init -q s.berth-set-aside && cd s.berth-set-aside &&
	git -c user.email=a@b -c user.name=a commit -q --allow-empty -m i &&
	git config core.fsmonitor 'touch $C/skipped; false' &&
	h=\$(git rev-parse HEAD) && cd .. &&
	git update-index --add --cacheinfo 160000,\$h,s.berth-set-aside &&
	mkdir -p d.berth-set-aside/.vscode && echo '{}' > d.berth-set-aside/.vscode/tasks.json" >"$T/o7" 2>&1
(cd "$T/sk" && timeout 10 git status >/dev/null 2>&1)
check "a repository under a *.berth-set-aside name: the host's git status ran no fsmonitor" '[ ! -e "$C/skipped" ]'
check "a .vscode under a *.berth-set-aside directory is set aside" \
	'[ ! -e "$T/sk/d.berth-set-aside/.vscode/tasks.json" ]'

# 8: a trust directory as a root of its own
mkdir -p "$T/vs/.vscode" "$T/vsw"
"$B" run --workspace "$T/vsw" --rw "$T/vs/.vscode:/v" -- sh -c 'echo "{}" > /v/tasks.json' >"$T/o8" 2>&1
check "--rw of a .vscode directory: the sandbox's tasks.json is set aside" '[ ! -e "$T/vs/.vscode/tasks.json" ]'

echo "1..$n"
[ "$fails" -eq 0 ]
