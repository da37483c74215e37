#!/usr/bin/env bash
# Attacks on the host's trust surface (and one message race) found by the
# break2 review, after run-trust.sh and run-trust-break13.sh.  Each check
# runs a payload inside `berth run`, then looks at what the HOST's tools
# would read (the host's real git where it matters).  On the code of branch
# break2 (3bdb158) checks 1-11 FAIL; they pass when the findings are fixed.
#
#  1-3. path-ending names (`.hg/hgrc`, `.config/git/config`,
#     `.jj/repo/config.toml`) staged over two runs: run 1 writes
#     `s/h/hgrc`, run 2 renames `s/h` to `p/.hg`: the file keeps its old
#     ctime and its directory is not a trust name, so nothing is set aside
#     and nothing is said.
#  4. a directory berth already knows (a nested repository's `.git`, in
#     $XDG_STATE_HOME/berth/trust/known) moved to a harmless name in run 1,
#     given core.fsmonitor and a pre-commit hook there, moved back in run 2:
#     the host's git runs both; no message in either run.
#  5. the same with a nested `.claude/` (settings.json planted).
#  6. a path-ending name reached through a symbolic link as its directory
#     (`a/.hg -> ../h`, `c/.config -> ../g`), one run: the link is not set
#     aside, so `a/.hg/hgrc` and `c/.config/git/config` are the sandbox's.
#  7. a home-class `.gitconfig` that includes another file (`[include]
#     path = inc/local`): the included file is not guarded; the host's git
#     with that HOME takes the sandbox's core.pager.
#  8. `--rw` of berth's own trust state ($XDG_STATE_HOME/berth/trust) is
#     not refused (the audit directory is): the sandbox adds its staged
#     directory's device and inode to `known`, and a later run without any
#     widening renames it to `.claude` unnoticed.
#  9. the `berth: cannot run ...` message of exit 126/127 is lost when the
#     measurement and the failure arrive in the wakeup that sees the exit
#     (spawn_relay.c: the drain after the loop reads only kind 3).
# 10. `--rw W/.git/hooks` beside the workspace W: the hooks directory,
#     read-only under /workspace, is writable under the --rw target (the
#     hook is live on the host until the run ends), though security.md says
#     a path reachable through two roots is read-only under each.
# 11. --dry-run accepts what the run then refuses: `--ro FILE:/workspace/D`
#     (a file onto a directory; the run fails with 125, not 2).
#
# usage: run-trust-break2.sh /path/to/berth
# Works as root and as an unprivileged user (the berth binary and a
# writable TMPDIR must be readable by the caller).  Output is TAP.
set -u
export LC_ALL=C
B=${1:?usage: $0 /path/to/berth}
T=$(mktemp -d "${TMPDIR:-/tmp}/break2.XXXXXX")
export XDG_STATE_HOME="$T/state"
C=$T/canaries
mkdir -p "$C"
trap 'rm -rf "$T"' EXIT
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { if eval "$2"; then ok "$1"; else not_ok "$1"; fi; }
gitq() { git -c user.email=t@t -c user.name=t "$@" >/dev/null 2>&1; }

# 1-3: path-ending names staged over two runs
W=$T/pe
mkdir -p "$W"
"$B" run --workspace "$W" -- true >/dev/null 2>&1 # the known set exists
"$B" run --workspace "$W" -- sh -c '
	mkdir -p s/h s/g/git s/j/repo
	printf "[hooks]\nupdate = touch /nonexistent\n" > s/h/hgrc
	printf "[core]\n\tpager = touch /nonexistent\n" > s/g/git/config
	printf "[ui]\neditor = \"x\"\n" > s/j/repo/config.toml' >"$T/o1" 2>&1
sleep 1.1 # a later clock tick than run 1's files
"$B" run --workspace "$W" -- sh -c '
	mkdir -p p1 p2 p3/.jj
	mv s/h p1/.hg
	mv s/g p2/.config
	mv s/j/repo p3/.jj/repo' >"$T/o2" 2>&1
check "staged .hg/hgrc: not left live" '[ ! -e "$W/p1/.hg/hgrc" ]'
check "staged .config/git/config: not left live" '[ ! -e "$W/p2/.config/git/config" ]'
check "staged .jj/repo/config.toml: not left live" '[ ! -e "$W/p3/.jj/repo/config.toml" ]'

# 4-5: a known directory moved away, written, moved back
W=$T/mv
mkdir -p "$W/q/.claude" && (cd "$W" && git init -q && gitq commit --allow-empty -m i)
git init -q "$W/x" && (cd "$W/x" && gitq commit --allow-empty -m i)
echo '{}' >"$W/q/.claude/x.json"
"$B" run --workspace "$W" -- true >/dev/null 2>&1 # x/.git and q/.claude are known now
sleep 1.1
"$B" run --workspace "$W" -- sh -c "
	mkdir y; mv x/.git y/g; mv y/g/HEAD y/g/HEAD.k
	printf '[core]\n\tfsmonitor = touch $C/fsmonitor\n' >> y/g/config
	printf '#!/bin/sh\ntouch $C/hook\n' > y/g/hooks/pre-commit; chmod +x y/g/hooks/pre-commit
	mv q/.claude q/cl; echo '{\"hooks\":{}}' > q/cl/settings.json" >"$T/o3" 2>&1
sleep 1.1
"$B" run --workspace "$W" -- sh -c 'mv y/g x/.git; mv x/.git/HEAD.k x/.git/HEAD; mv q/cl q/.claude' >"$T/o4" 2>&1
(cd "$W/x" && timeout 10 git status >/dev/null 2>&1; gitq commit --allow-empty -m y)
check "known .git moved away and back: the host's git ran no fsmonitor and no hook" \
	'[ ! -e "$C/fsmonitor" ] && [ ! -e "$C/hook" ]'
check "known .claude moved away and back: settings.json not left live" '[ ! -e "$W/q/.claude/settings.json" ]'

# 6: a path-ending name through a linked directory
W=$T/ln
mkdir -p "$W"
"$B" run --workspace "$W" -- sh -c "
	mkdir -p h g/git a c
	printf '[hooks]\nupdate = touch $C/hg\n' > h/hgrc
	printf '[core]\n\tpager = touch $C/lnpager; cat\n' > g/git/config
	ln -s ../h a/.hg; ln -s ../g c/.config" >"$T/o5" 2>&1
pager=$(cd "$T" && env -u XDG_CONFIG_HOME -u GIT_PAGER -u PAGER HOME="$W/c" git var GIT_PAGER 2>/dev/null)
check "linked .hg and .config: neither hgrc nor git's user config is the sandbox's" \
	'[ ! -e "$W/a/.hg/hgrc" ] && [ "${pager#touch}" = "$pager" ]'

# 7: what a home-class .gitconfig includes
W=$T/hm
mkdir -p "$W/inc"
printf '[include]\n\tpath = inc/local\n' >"$W/.gitconfig"
sleep 1.1
"$B" run --workspace "$W" -- sh -c "printf '[core]\n\tpager = touch $C/incpager; cat\n' > inc/local" >"$T/o6" 2>&1
pager=$(cd "$T" && env -u XDG_CONFIG_HOME -u GIT_PAGER -u PAGER HOME="$W" git var GIT_PAGER 2>/dev/null)
check "a file the workspace's .gitconfig includes: the host's git does not take the sandbox's pager (got: $pager)" \
	'[ "${pager#touch}" = "$pager" ]'

# 8: berth's trust state as a --rw source
W=$T/kn
mkdir -p "$W"
"$B" run --workspace "$W" -- true >/dev/null 2>&1
"$B" run --yes --workspace "$W" --rw "$XDG_STATE_HOME/berth/trust:/st" -- sh -c '
	mkdir -p s/cl; echo "{\"hooks\":{}}" > s/cl/settings.json
	stat -c "%d %i" s/cl >> /st/known' >"$T/o7" 2>&1
rc=$?
sleep 1.1
"$B" run --workspace "$W" -- sh -c 'mv s/cl s/.claude' >"$T/o8" 2>&1
check "--rw of berth's trust state: refused (rc $rc), or the staged .claude is still caught" \
	'[ "$rc" -eq 2 ] || [ ! -e "$W/s/.claude/settings.json" ]'

# 9: the exec failure's message, every time
W=$T/ex
mkdir -p "$W"
lost=0
# one CPU for berth and its child makes the child's failure and exit land
# before berth's next wakeup (about half of the runs on the code of 3bdb158)
pin=""
command -v taskset >/dev/null 2>&1 && pin="taskset -c 0"
for i in $(seq 30); do
	$pin "$B" run --workspace "$W" -- ./nosuch >/dev/null 2>"$T/e"
	rc=$?
	grep -q '^berth: cannot run `./nosuch`' "$T/e" || lost=$((lost + 1))
	[ "$rc" -eq 127 ] || lost=$((lost + 100))
done
check "exit 127 with its 'berth: cannot run' message in 30 of 30 runs (lost: $lost)" '[ "$lost" -eq 0 ]'

# 10: a guarded directory of the workspace as a --rw root of its own
W=$T/nr
mkdir -p "$W" && (cd "$W" && git init -q)
"$B" run --yes --workspace "$W" --rw "$W/.git/hooks:/h" -- sh -c 'echo "#!/bin/sh" > /h/pre-commit' >"$T/o9" 2>&1
rc=$?
check "--rw of the workspace's .git/hooks: refused (rc $rc) or read-only under the --rw target too" \
	'[ "$rc" -ne 0 ] && ! grep -q "set aside .*pre-commit" "$T/o9"'

# 11: --dry-run refuses what the run refuses
W=$T/dr
mkdir -p "$W/d" && echo x >"$T/f"
"$B" run --workspace "$W" --ro "$T/f:/workspace/d" --dry-run -- true >/dev/null 2>"$T/d.err"
drc=$?
"$B" run --workspace "$W" --ro "$T/f:/workspace/d" -- true >/dev/null 2>"$T/r.err"
rrc=$?
check "--ro FILE:/workspace/DIR: --dry-run exit $drc, the run $rrc (both 2)" '[ "$drc" -eq 2 ] && [ "$rrc" -eq 2 ]'

echo "1..$n"
[ "$fails" -eq 0 ]
