#!/usr/bin/env bash
# Run journals berth did not write (issue 15; src/util/journal.c,
# src/supervisor/orphans.c): the next berth repairs what a journal in
# live/ names with the rights of whoever runs it (root, often), so it must
# take only what berth itself makes for that run.  A journal that names a
# process list it does not own, a file to write `1` into, a tree, a run
# directory or an audit directory elsewhere leaves all of them as they were,
# and each is named; a FIFO in live/ does not hang the next berth; and no
# sandbox is given live/ (the exposure check refuses it).  And the janitor
# killed while the run goes on costs the run neither its status nor its
# run.stop record (berth's writes to it never raise SIGPIPE).
#
# usage: run-journal-attack.sh /path/to/berth
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

TOP=$(mktemp -d /tmp/berth-journal-attack.XXXXXX) || { echo "Bail out! mktemp failed"; exit 1; }
chmod 755 "$TOP"
export XDG_STATE_HOME=$TOP/state XDG_RUNTIME_DIR=$TOP/run XDG_CONFIG_HOME=$TOP/config HOME=$TOP/home
mkdir -m 700 "$XDG_STATE_HOME" "$XDG_RUNTIME_DIR" "$XDG_CONFIG_HOME" "$HOME"
mkdir "$TOP/ws"
VICTIM_PID=
cleanup() {
	[ -n "$VICTIM_PID" ] && kill -KILL "$VICTIM_PID" 2>/dev/null
	rm -rf "$TOP"
}
trap cleanup EXIT
cd "$TOP/ws" || exit 1
LIVE=$XDG_STATE_HOME/berth/live
ID=0123456789abcdef

"$B" run -- true >/dev/null 2>&1 || { echo "Bail out! berth run -- true fails here"; exit 1; }

# --- a journal naming what berth never made ---
V=$TOP/victim
mkdir -p "$V/procs" "$V/berth-$ID" "$V/tree/sub" "$V/rd/evidence" "$V/aud"
echo precious >"$V/tree/sub/file"
echo precious >"$V/rd/.x.tmp"
echo precious >"$V/rd/evidence/f"
echo "hello world" >"$V/target"
sleep 300 &
VICTIM_PID=$!
# cgroup.procs listing the victim; cgroup.kill a link to a file of the user's
echo "$VICTIM_PID" >"$V/procs/cgroup.procs"
echo "$VICTIM_PID" >"$V/berth-$ID/cgroup.procs"
ln -s "$V/target" "$V/procs/cgroup.kill"
ln -s "$V/target" "$V/berth-$ID/cgroup.kill"
printf 'berth-run-journal 1\nrun %s\npid 1\naudit %s\nrundir %s\ncgroup %s\ncgroup %s\ntree %s\ntree /\n' \
	"$ID" "$V/aud" "$V/rd" "$V/procs" "$V/berth-$ID" "$V/tree" >"$LIVE/$ID"
before=$(cd "$V" && find . | sort)
err=$("$B" run -- true 2>&1 >/dev/null)
rc=$?
eq "the run after a planted journal exits 0" "$rc" 0
sleep 0.3
if kill -0 "$VICTIM_PID" 2>/dev/null; then pass "the process its cgroup.procs lists lives"; else fail "the process its cgroup.procs lists lives" "killed"; fi
eq "the file behind its cgroup.kill is unchanged" "$(cat "$V/target")" "hello world"
eq "nothing it names was removed" "$(cd "$V" && find . | sort)" "$before"
eq "no audit log was made in the directory it names" "$(ls -A "$V/aud")" ""
has "a cgroup that is no cgroup is named" "$err" "berth: run $ID: its journal names \`$V/procs\` as a cgroup of the run, which berth does not make: left alone"
has "a berth-ID directory that is no cgroup is named" "$err" "berth: run $ID: its journal names \`$V/berth-$ID\` as a cgroup of the run, which berth does not make: left alone"
has "a tree elsewhere is named" "$err" "berth: run $ID: its journal names \`$V/tree\` as a tree of the run, which berth does not make: left alone"
has "the tree / is named" "$err" "berth: run $ID: its journal names \`/\` as a tree of the run, which berth does not make: left alone"
has "a run directory elsewhere is named" "$err" "berth: run $ID: its journal names \`$V/rd\` as the run directory, which is not berth's: left alone"
has "an audit directory without a log is named" "$err" "berth: run $ID: its journal names \`$V/aud\` as the audit directory, which holds no audit log of berth's: its end is not recorded"
eq "the planted journal is gone" "$(ls -A "$LIVE")" ""
err=$("$B" run -- true 2>&1 >/dev/null)
hasnt "the run after that names no journal" "$err" "journal"
hasnt "nor repairs a run" "$err" "ended without its supervisor"
{ kill -KILL "$VICTIM_PID" && wait "$VICTIM_PID"; } 2>/dev/null
VICTIM_PID=

# --- runs/RUN_ID a link to another directory ---
RUNS=$XDG_STATE_HOME/berth/runs
mkdir -p "$V/elsewhere/evidence"
echo precious >"$V/elsewhere/.y.tmp"
echo precious >"$V/elsewhere/evidence.json"
echo precious >"$V/elsewhere/evidence/f"
ln -s "$V/elsewhere" "$RUNS/$ID"
printf 'berth-run-journal 1\nrun %s\npid 1\naudit %s\nrundir %s\ntree %s\n' \
	"$ID" "$XDG_STATE_HOME/berth/audit" "$RUNS/$ID" "$RUNS/$ID/evidence" >"$LIVE/$ID"
err=$("$B" run -- true 2>&1 >/dev/null)
eq "a run directory that is a link: nothing behind it removed" "$(cd "$V/elsewhere" && find . | sort | tr '\n' ' ')" ". ./.y.tmp ./evidence ./evidence.json ./evidence/f "
has "and the run directory is named" "$err" "berth: run $ID: its journal names \`$RUNS/$ID\` as the run directory, which is not berth's: left alone"
has "and its tree" "$err" "berth: run $ID: its journal names \`$RUNS/$ID/evidence\` as a tree of the run, which berth does not make: left alone"
rm -f "$RUNS/$ID"

# --- a live/ of another user (root only: chown) ---
if [ "$(id -u)" -eq 0 ] && id bertht >/dev/null 2>&1; then
	chown bertht "$LIVE"
	echo "hello world" >"$V/target2"
	sleep 300 &
	VICTIM_PID=$!
	mkdir -p "$V/p2"
	echo "$VICTIM_PID" >"$V/p2/cgroup.procs"
	printf 'berth-run-journal 1\nrun %s\npid 1\naudit \ncgroup %s\n' "$ID" "$V/p2" >"$LIVE/$ID"
	chown bertht "$LIVE/$ID"
	err=$("$B" run -- true 2>&1 >/dev/null)
	rc=$?
	eq "a live/ another user owns: berth run refuses (2)" "$rc" 2
	has "naming it" "$err" "berth: \`$LIVE\` is not a private directory of uid 0: refusing to use it"
	eq "and its journal is not read" "$(ls -A "$LIVE")" "$ID"
	if kill -0 "$VICTIM_PID" 2>/dev/null; then pass "nor what it names killed"; else fail "nor what it names killed" "killed"; fi
	{ kill -KILL "$VICTIM_PID" && wait "$VICTIM_PID"; } 2>/dev/null
	VICTIM_PID=
	chown root "$LIVE" "$LIVE/$ID"
	err=$("$B" run -- true 2>&1 >/dev/null)
	rc=$?
	eq "owned again by root: the run works" "$rc" 0
	has "and the journal is repaired, its foreign cgroup left alone" "$err" "berth: run $ID: its journal names \`$V/p2\` as a cgroup of the run, which berth does not make: left alone"
else
	T=$((T + 1)); echo "ok $T - a live/ of another user # SKIP needs root (chown)"
fi

# --- a FIFO in live/, as a journal and as a temporary one ---
mkfifo "$LIVE/aaaaaaaaaaaaaaaa" "$LIVE/.aaaaaaaaaaaaaaab.tmp"
out=$(timeout 20 "$B" run -- echo ran 2>/dev/null)
rc=$?
eq "a FIFO in live/ does not hang berth run" "$rc $out" "0 ran"
timeout 20 "$B" attest aaaaaaaaaaaaaaaa >/dev/null 2>&1
rc=$?
eq "nor berth attest (no such run: 2)" "$rc" 2
rm -f "$LIVE/aaaaaaaaaaaaaaaa" "$LIVE/.aaaaaaaaaaaaaaab.tmp"

# --- live/ given to a sandbox ---
err=$("$B" run --workspace "$LIVE" -- true 2>&1)
rc=$?
eq "--workspace live/ is refused (2)" "$rc" 2
has "and the refusal names the run journals" "$err" "berth: --workspace \`$LIVE\` would give the sandbox berth's run journals (\`$LIVE\`)"
err=$("$B" run --ro "$LIVE:/data" -- true 2>&1)
rc=$?
eq "--ro live/ is refused (2)" "$rc" 2
has "and the refusal names the run journals" "$err" "berth: --ro \`$LIVE\` would give the sandbox berth's run journals (\`$LIVE\`)"

# --- the janitor killed while the run goes on ---
# berth writes to it at the end: a dead janitor was SIGPIPE, and berth died
# with the command's status and its run.stop lost (exit 141).
"$B" run -- sh -c 'sleep 2; exit 7' >/dev/null 2>"$TOP/jan.err" &
P=$!
J=
for _ in $(seq 50); do
	J=$(pgrep -P "$P" -f berth-janitor)
	[ -n "$J" ] && break
	sleep 0.05
done
if [ -n "$J" ]; then
	JID=$(ls "$LIVE")
	kill -KILL "$J"
	wait "$P"
	rc=$?
	eq "the janitor killed: berth run exits with the command's status" "$rc" 7
	eq "and leaves no journal" "$(ls -A "$LIVE")" ""
	has "and records the run's end" "$("$B" audit --run "$JID" 2>&1)" '{"duration_ms":'
	has "with its status" "$("$B" audit --run "$JID" 2>&1)" '"status":7}'
else
	wait "$P"
	T=$((T + 1)); echo "ok $T - the janitor killed # SKIP this run has no janitor for this caller"
fi

out=$("$B" audit verify 2>&1)
rc=$?
eq "the audit trail verifies" "$rc" 0
has "intact" "$out" "intact: "

echo "1..$T"
[ "$FAILS" -eq 0 ]
