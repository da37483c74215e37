#!/usr/bin/env bash
# The end-of-run trust scan when berth AND its janitor are both killed (a
# whole process group or cgroup killed, the OOM killer; issue 15 with the
# trust surface of issue 13): the run journal names the writable roots, the
# trust lists and the start (src/sandbox/trustrepair.c), and the next berth
# sets aside what the sandbox planted, as the janitor would have
# (src/supervisor/orphans.c).  Also: a janitor that did scan says so in the
# journal (no second scan), and a journal root that is a link is not
# followed.
#
# usage: run-trust-killed.sh /path/to/berth
# Works as root and as an unprivileged user.  Output is TAP; exit status 1
# if any check failed.

set -u
export LC_ALL=C
unset BERTH_TEST_FORCE_OFF BERTH_AUDIT_DIR BERTH_TEST_CRASH_AT BERTH_TEST_CRASH_TRACE BERTH_TEST_CRASH_LOG

if [ $# -ne 1 ]; then
	echo "usage: $0 /path/to/berth" >&2
	exit 2
fi
B=$(readlink -f -- "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib.sh
. "$HERE/../lib.sh"
eq() { if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'"; fi; }
check() { local d=$1; shift; if "$@"; then pass "$d"; else fail "$d" "failed: $*"; fi; }

TOP=$(mktemp -d /tmp/berth-trust-killed.XXXXXX) || { echo "Bail out! mktemp failed"; exit 1; }
chmod 755 "$TOP"
export XDG_STATE_HOME=$TOP/state XDG_RUNTIME_DIR=$TOP/run XDG_CONFIG_HOME=$TOP/config HOME=$TOP/home
mkdir -m 700 "$XDG_STATE_HOME" "$XDG_RUNTIME_DIR" "$XDG_CONFIG_HOME" "$HOME"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
RUNPID=
cleanup() {
	[ -n "$RUNPID" ] && kill -KILL "$RUNPID" 2>/dev/null
	pkill -KILL -f "MARK-$$-" 2>/dev/null
	rm -rf "$TOP"
}
trap cleanup EXIT
LIVE=$XDG_STATE_HOME/berth/live
PWNED=$TOP/pwned
mkdir "$TOP/plain"
(cd "$TOP/plain" && "$B" run -- true) >/dev/null 2>&1 || { echo "Bail out! berth run -- true fails here"; exit 1; }

# The sandbox's plant: a VS Code task file (a trust name absent at the start,
# so not bound read-only) and a new repository with a hook, then it waits.
PLANT="mkdir -p .vscode sub && echo '{\"tasks\":[]}' > .vscode/tasks.json && git init -q sub &&
printf '#!/bin/sh\\necho hook > $PWNED\\n' > sub/.git/hooks/post-checkout && chmod +x sub/.git/hooks/post-checkout &&
echo planted; exec sleep 300"

# start_run WS TAG: berth run in WS in a session of its own; waits for the plant
start_run() {
	local ws=$1 tag=$2
	(cd "$ws" && exec setsid "$B" run -- sh -c "$PLANT; : MARK-$$-$tag") >"$TOP/run.out" 2>"$TOP/run.err" &
	RUNPID=$!
	for _ in $(seq 100); do grep -q planted "$TOP/run.out" 2>/dev/null && return 0; sleep 0.1; done
	return 1
}
# janitor_of PID: the janitor berth PID forked, waited for (up to 5 s): it
# is found by the name it gives itself after the fork, which a loaded
# machine may not have run yet (CI: found none, so only berth was killed and
# the live janitor did its repair before the premise was checked).
janitor_of() {
	local j
	for _ in $(seq 50); do
		j=$(pgrep -P "$1" -x berth-janitor 2>/dev/null || pgrep -P "$1" -f '^berth-janitor')
		[ -n "$j" ] && { echo "$j"; return 0; }
		sleep 0.1
	done
	return 1
}

# --- berth and its janitor killed together ---
WS=$TOP/ws1
mkdir "$WS" && git -C "$WS" init -q
start_run "$WS" a || fail "the run plants" "$(cat "$TOP/run.err")"
J=$(janitor_of "$RUNPID")
check "the janitor runs beside berth" test -n "$J"
kill -KILL $J "$RUNPID" # the janitor first: between the two it would scan
wait "$RUNPID" 2>/dev/null || :
RUNPID=
for _ in $(seq 50); do pgrep -f "MARK-$$-a" >/dev/null || break; sleep 0.1; done
check "nothing of the sandbox runs (it died with berth)" sh -c "! pgrep -f 'MARK-$$-[a]' >/dev/null"
check "the plant is there: nobody scanned (premise)" test -f "$WS/.vscode/tasks.json" -a -x "$WS/sub/.git/hooks/post-checkout"
ID=$(ls "$LIVE")
eq "one journal is left" "$(ls "$LIVE" | wc -l)" 1
has "it names the workspace as a trust root" "$(cat "$LIVE/$ID")" "trust-root $WS"
hasnt "and no scan was done" "$(cat "$LIVE/$ID")" "trust-done"
(cd "$TOP/plain" && "$B" run -- true) >"$TOP/next.out" 2>"$TOP/next.err"
eq "the next berth run works (0)" "$?" 0
ERR=$(cat "$TOP/next.err")
check "the task file is set aside" test ! -e "$WS/.vscode/tasks.json" -a -f "$WS/.vscode/tasks.json.berth-set-aside"
check "the hook is set aside" test ! -e "$WS/sub/.git/hooks/post-checkout" -a -f "$WS/sub/.git/hooks/post-checkout.berth-set-aside"
has "the next berth names the task file, with its restore line" "$ERR" \
	"berth: run $ID: set aside \`$WS/.vscode/tasks.json\` as \`tasks.json.berth-set-aside\`: the sandbox made or changed it, and VS Code on the host runs its tasks"
has "... and the hook" "$ERR" "berth: run $ID: set aside \`$WS/sub/.git/hooks/post-checkout\` as \`post-checkout.berth-set-aside\`"
has "... and the repository the sandbox made" "$ERR" "berth: run $ID: the sandbox made or changed the git repository \`$WS/sub/.git\`"
has "... and that the run ended without its supervisor" "$ERR" "berth: run $ID ended without its supervisor"
git -C "$WS/sub" commit -q --allow-empty -m x >/dev/null 2>&1
git -C "$WS/sub" checkout -q -b other >/dev/null 2>&1
check "the host's git ran no hook (checkout)" test ! -e "$PWNED"
# the check can fail: the hook put back runs at the next checkout
mv "$WS/sub/.git/hooks/post-checkout.berth-set-aside" "$WS/sub/.git/hooks/post-checkout"
git -C "$WS/sub" checkout -q -b third >/dev/null 2>&1
check "... while the hook put back would run (the check can fail)" test -e "$PWNED"
rm -f "$PWNED" "$WS/sub/.git/hooks/post-checkout"
eq "the journal is gone" "$(ls "$LIVE")" ""
(cd "$TOP/plain" && "$B" run -- true) >/dev/null 2>"$TOP/next.err"
eq "the run after says nothing more" "$(grep -v "^berth: limits: " "$TOP/next.err")" ""

# --- only berth killed: the janitor scans and says so; no second scan ---
WS=$TOP/ws2
mkdir "$WS" && git -C "$WS" init -q
start_run "$WS" b || fail "the second run plants" "$(cat "$TOP/run.err")"
J=$(janitor_of "$RUNPID")
check "the second run's janitor runs beside berth" test -n "$J"
kill -KILL "$RUNPID"
wait "$RUNPID" 2>/dev/null
RUNPID=
ID=
for _ in $(seq 100); do
	ID=$(ls "$LIVE" 2>/dev/null | head -1)
	[ -n "$ID" ] && grep -q '^trust-done' "$LIVE/$ID" 2>/dev/null && break
	sleep 0.1
done
has "the janitor noted its scan in the journal" "$(cat "$LIVE/$ID" 2>/dev/null)" "trust-done 1"
check "the janitor set the task file aside" test -f "$WS/.vscode/tasks.json.berth-set-aside"
# the journal stays locked until the janitor is done (it still removes the
# run's evidence copy after its note): the next berth sweeps only after that
for _ in $(seq 100); do kill -0 $J 2>/dev/null || break; sleep 0.1; done
check "the janitor ended" eval "! kill -0 $J 2>/dev/null"
(cd "$TOP/plain" && "$B" run -- true) >/dev/null 2>"$TOP/next.err"
ERR=$(cat "$TOP/next.err")
hasnt "the next berth does not scan again" "$ERR" "set aside"
hasnt "... nor names the repository again" "$ERR" "made or changed the git repository"
has "it records the run's end" "$ERR" "berth: run $ID ended without its supervisor"

# --- a workspace with a newline in its name (escaped in the journal) ---
WS=$TOP/$'ws\n3'
mkdir "$WS" && git -C "$WS" init -q
start_run "$WS" c || fail "the third run plants" "$(cat "$TOP/run.err")"
J=$(janitor_of "$RUNPID")
kill -KILL $J "$RUNPID" # the janitor first: between the two it would scan
wait "$RUNPID" 2>/dev/null || :
RUNPID=
for _ in $(seq 50); do pgrep -f "MARK-$$-c" >/dev/null || break; sleep 0.1; done
check "newline: the plant is there (premise)" test -f "$WS/.vscode/tasks.json"
has "newline: the journal escapes it" "$(cat "$LIVE"/* 2>/dev/null)" "trust-root $TOP/ws%0a3"
(cd "$TOP/plain" && "$B" run -- true) >/dev/null 2>"$TOP/next.err"
check "newline: the next berth sets the task file aside" test ! -e "$WS/.vscode/tasks.json" -a -f "$WS/.vscode/tasks.json.berth-set-aside"

# --- a symlink planted at a trust name beside the plant (break3) ---
# The repair read the guard again from what the run left, and the guard
# refuses a trust name that is a symlink: the whole scan failed ("guarded
# path ... is a symlink") and the task file beside it stayed live.  The
# janitor, prepared at the start, sets both aside.
WS=$TOP/ws4
mkdir "$WS" && git -C "$WS" init -q
PLANT="mkdir -p .vscode && echo '{\"tasks\":[]}' > .vscode/tasks.json && ln -s /nonexistent .envrc && echo planted; exec sleep 300" \
	start_run "$WS" d || fail "link: the run plants" "$(cat "$TOP/run.err")"
J=$(janitor_of "$RUNPID")
kill -KILL $J "$RUNPID" # the janitor first: between the two it would scan
wait "$RUNPID" 2>/dev/null || :
RUNPID=
for _ in $(seq 50); do pgrep -f "MARK-$$-d" >/dev/null || break; sleep 0.1; done
check "link: the plant and the link are there (premise)" test -f "$WS/.vscode/tasks.json" -a -L "$WS/.envrc"
(cd "$TOP/plain" && "$B" run -- true) >/dev/null 2>"$TOP/next.err"
ERR=$(cat "$TOP/next.err")
hasnt "link: the scan is not refused" "$ERR" "the trust-surface scan of its workspace failed"
check "link: the task file is set aside" test ! -e "$WS/.vscode/tasks.json" -a -f "$WS/.vscode/tasks.json.berth-set-aside"
check "link: the link is set aside" test ! -L "$WS/.envrc" -a -L "$WS/.envrc.berth-set-aside"

# --- a HEAD the sandbox broke (break3) ---
# The janitor puts back the HEAD it kept at the start; the repair read the
# HEAD as the run left it, not valid, so kept none: the host's git said "not
# a git repository" in the workspace.  The journal keeps it (trust-head).
WS=$TOP/ws5
mkdir "$WS" && git -C "$WS" init -q
PLANT="echo garbage > .git/HEAD && echo planted; exec sleep 300" start_run "$WS" e ||
	fail "HEAD: the run breaks it" "$(cat "$TOP/run.err")"
J=$(janitor_of "$RUNPID")
kill -KILL $J "$RUNPID" # the janitor first: between the two it would scan
wait "$RUNPID" 2>/dev/null || :
RUNPID=
for _ in $(seq 50); do pgrep -f "MARK-$$-e" >/dev/null || break; sleep 0.1; done
eq "HEAD: broken (premise)" "$(cat "$WS/.git/HEAD")" garbage
(cd "$TOP/plain" && "$B" run -- true) >/dev/null 2>"$TOP/next.err"
has "HEAD: the next berth restores it, and says so" "$(cat "$TOP/next.err")" \
	"restored \`$WS/.git/HEAD\` to what it was when the run started"
check "HEAD: the host's git takes the repository again" sh -c "git -C '$WS' rev-parse --git-dir >/dev/null 2>&1"

# --- a journal whose trust root is a link: not followed ---
TG=$TOP/target
mkdir -p "$TG/.vscode"
echo '{}' >"$TG/.vscode/tasks.json"
ln -s "$TG" "$TOP/link"
FID=0123456789abcdef
printf 'berth-run-journal 1\nrun %s\npid 1\naudit %s\ntrust-root %s\ntrust-start %s\n' \
	"$FID" "$XDG_STATE_HOME/berth/audit" "$TOP/link" "$(date +%s).000000000" >"$LIVE/$FID"
chmod 600 "$LIVE/$FID"
touch "$TG/.vscode/tasks.json"
(cd "$TOP/plain" && "$B" run -- true) >/dev/null 2>"$TOP/next.err"
ERR=$(cat "$TOP/next.err")
has "a root named through a link is refused, by name" "$ERR" \
	"berth: run $FID: its journal names \`$TOP/link\` as a writable root, which is not a directory by its real path: not scanned"
check "nothing behind the link was set aside" test -f "$TG/.vscode/tasks.json" -a ! -e "$TG/.vscode/tasks.json.berth-set-aside"
# ... and a start that is not SEC.NSEC
printf 'berth-run-journal 1\nrun %s\npid 1\naudit %s\ntrust-root %s\ntrust-start %s\n' \
	"$FID" "$XDG_STATE_HOME/berth/audit" "$TG" "0" >"$LIVE/$FID"
chmod 600 "$LIVE/$FID"
(cd "$TOP/plain" && "$B" run -- true) >/dev/null 2>"$TOP/next.err"
has "a start that is not SEC.NSEC: named, nothing scanned" "$(cat "$TOP/next.err")" \
	"berth: run $FID: its journal's trust-start \`0\` is not SEC.NSEC: its workspace was not scanned"
check "... and nothing set aside" test -f "$TG/.vscode/tasks.json" -a ! -e "$TG/.vscode/tasks.json.berth-set-aside"

echo "1..$T"
[ "$FAILS" -eq 0 ]
