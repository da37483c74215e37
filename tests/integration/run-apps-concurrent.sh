#!/usr/bin/env bash
# First-party apps under concurrent calls (issue 15, part 4): every
# `berth rpc` boots its own instance of the app on the one state directory,
# so several at once are several processes on one workspace.
#   - berth's own app state: eight first boots at once make one `origin`,
#     whole, naming the app directory, and none of them warns;
#   - notes (the only first-party app that keeps state: filesystem writes
#     the caller's files, code-interpreter and web-fetch keep nothing):
#     8 callers x 20 add_note at once give 160 distinct ids, exactly 1..160,
#     and list_notes holds exactly the 160 notes with the ids handed out;
#     8 callers completing their own notes at once lose no change; a
#     temporary file a killed writer left is swept by the next write;
#   - berth's run journal: 20 `berth run` at once, three times over, all
#     start (each sweeps live/ for killed berths' temporaries, and must not
#     take another's journal being made for one).
#
# usage: run-apps-concurrent.sh /path/to/berth /path/to/repo
# Works as root and as an unprivileged user.  Output is TAP; exit status 1 if
# any check failed.

set -u
export LC_ALL=C
unset BERTH_TEST_FORCE_OFF BERTH_AUDIT_DIR BERTH_TEST_CRASH_AT BERTH_TEST_WRITE_ERRNO

if [ $# -ne 2 ]; then
	echo "usage: $0 /path/to/berth /path/to/repo" >&2
	exit 2
fi
B=$(readlink -f -- "$1")
REPO=$(readlink -f -- "$2")
HOSTPY=/usr/bin/python3
WORKERS=8 ADDS=20

TOP=$(mktemp -d /tmp/berth-apps-conc.XXXXXX) || { echo "Bail out! mktemp failed"; exit 1; }
chmod 755 "$TOP" # the app's sandbox identity traverses to /app
export XDG_STATE_HOME=$TOP/state XDG_RUNTIME_DIR=$TOP/run XDG_CONFIG_HOME=$TOP/config
mkdir -m 700 "$XDG_STATE_HOME" "$XDG_RUNTIME_DIR" "$XDG_CONFIG_HOME"
cleanup() { wait 2>/dev/null; rm -rf "$TOP"; }
trap cleanup EXIT
cp -r "$REPO/apps/notes" "$TOP/notes"
chmod -R a+rX "$TOP/notes"
NOTES=$TOP/notes
STATE=$XDG_STATE_HOME/berth/apps/notes
cd "$TOP" || exit 1

N=0 FAILS=0
pass() { N=$((N + 1)); echo "ok $N - $1"; }
bad() {
	N=$((N + 1)); FAILS=$((FAILS + 1)); echo "not ok $N - $1"; shift
	local l; for l in "$@"; do printf '%s\n' "$l" | head -n 12 | sed 's/^/#   /'; done
}
eq() { if [ "$2" == "$3" ]; then pass "$1"; else bad "$1" "got:  $2" "want: $3"; fi; }
rpc() { timeout -k 5 60 "$B" rpc notes --app-dir "$NOTES" --export "$@" </dev/null; }
# stderr without the one-line notice of how limits are enforced
errs() { cat "$@" 2>/dev/null | grep -v '^berth: limits: '; }

# --- eight first boots at once ---
for w in $(seq $WORKERS); do
	(rpc list_notes --input '{}' >"$TOP/boot.$w.out" 2>"$TOP/boot.$w.err"; echo $? >"$TOP/boot.$w.rc") &
done
wait
eq "first boots at once: all $WORKERS exit 0" "$(cat "$TOP"/boot.*.rc | sort -u)" 0
eq "first boots at once: each answers the empty list" "$(sort -u "$TOP"/boot.*.out)" '{"notes":[]}'
eq "first boots at once: none warns or fails" "$(errs "$TOP"/boot.*.err)" ""
eq "first boots at once: origin holds the app directory, whole" "$(cat "$STATE/origin")" "$NOTES"
eq "first boots at once: no temporary file in the app's state" \
	"$(find "$STATE" -name '*.tmp' -o -name '.origin.*' | sort)" ""

# --- 8 x 20 add_note at once ---
for w in $(seq $WORKERS); do
	(
		for i in $(seq $ADDS); do
			out=$(rpc add_note --input "{\"text\":\"w$w-$i\"}" 2>>"$TOP/add.$w.err"); rc=$?
			printf '%s %s %s\n' "$rc" "w$w-$i" "$out"
		done >"$TOP/add.$w.out"
	) &
done
wait
total=$((WORKERS * ADDS))
eq "concurrent adds: every call exits 0" "$(cat "$TOP"/add.*.out | cut -d' ' -f1 | sort -u)" 0
eq "concurrent adds: no call wrote to stderr" "$(errs "$TOP"/add.*.err)" ""
ids=$(cat "$TOP"/add.*.out | sed -n 's/.* {"id":\([0-9]*\)}$/\1/p' | sort -n)
eq "concurrent adds: $total ids handed out" "$(printf '%s\n' "$ids" | grep -c .)" "$total"
eq "concurrent adds: the ids are exactly 1..$total (unique, none skipped)" "$ids" "$(seq $total)"
rpc list_notes --input '{}' >"$TOP/list.json" 2>"$TOP/list.err"
want=$(cat "$TOP"/add.*.out | sed -n 's/^0 \([^ ]*\) {"id":\([0-9]*\)}$/\2 \1 false/p' | sort -n)
got=$("$HOSTPY" -c '
import json, sys
for n in json.load(open(sys.argv[1]))["notes"]:
    print(n["id"], n["text"], str(n["done"]).lower())' "$TOP/list.json" | sort -n)
eq "concurrent adds: list_notes holds exactly the $total notes, each with the id its call got" "$got" "$want"

# --- 8 callers completing their own notes at once ---
for w in $(seq $WORKERS); do
	(
		for id in $(grep -h " w$w-" "$TOP"/add.*.out | sed -n 's/.*{"id":\([0-9]*\)}$/\1/p'); do
			rpc complete_note --input "{\"id\":$id}" >/dev/null 2>>"$TOP/done.$w.err" || echo "fail $id"
		done >"$TOP/done.$w.out"
	) &
done
wait
eq "concurrent completes: every call succeeded" "$(cat "$TOP"/done.*.out)" ""
rpc list_notes --input '{}' >"$TOP/list2.json" 2>/dev/null
eq "concurrent completes: all $total notes are done, none lost" \
	"$("$HOSTPY" -c '
import json, sys
ns = json.load(open(sys.argv[1]))["notes"]
print(len(ns), sorted(set(n["done"] for n in ns)))' "$TOP/list2.json")" "$total [True]"

# --- a killed writer's temporary file ---
: >"$STATE/workspace/.notes.k1ll3d.tmp"
rpc add_note --input '{"text":"after"}' >"$TOP/after.out" 2>/dev/null
eq "a killed writer's temporary: the next add works" "$(cat "$TOP/after.out")" "{\"id\":$((total + 1))}"
eq "a killed writer's temporary: swept under the lock" \
	"$(find "$STATE/workspace" -name '*.tmp')" ""

# --- 20 runs at once: one's sweep of live/ never takes another's journal ---
mkdir -m 700 "$TOP/ws"
for round in 1 2 3; do
	for w in $(seq 20); do
		("$B" run --workspace "$TOP/ws" -- true </dev/null >/dev/null 2>"$TOP/run.$round.$w.err"
			echo $? >"$TOP/run.$round.$w.rc") &
	done
	wait
done
eq "20 runs at once (3 rounds): every one exits 0" "$(cat "$TOP"/run.*.rc | sort -u)" 0
eq "20 runs at once: none says a word about its journal" "$(errs "$TOP"/run.*.err)" ""
eq "20 runs at once: no journal or temporary left in live/" "$(ls -A "$XDG_STATE_HOME/berth/live")" ""

echo "1..$N"
[ "$FAILS" -eq 0 ]
