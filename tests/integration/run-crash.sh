#!/usr/bin/env bash
# The crash-point harness (issue 15): berth killed (SIGKILL) at every named
# step of every multi-step change it makes on the host leaves nothing behind,
# and the audit trail verifies or says exactly what happened, with the repair
# recorded.  The points are src/util/crash.h's berth_crash_point("AREA.STEP"),
# compiled only in a `-Dcrash_points=true` build (tests/run's).
#
# usage: run-crash.sh /path/to/berth [TREE]
#
# How it goes.  The points are listed with grep over src/ (TREE/src, or the
# tree this script is in).  Each AREA (the part of a name before the dot)
# has one file, tests/integration/crash/AREA.sh; an area without one FAILS.
# The file is sourced once and defines three functions:
#   variant_AREA POINT   prints the name of the scenario that reaches POINT
#                        (points sharing a name share the trace pass's run)
#   scenario_AREA POINT  runs the commands of that scenario: the berth that
#                        is to die is started with `crash_berth ARGS...`
#                        (in $WS, stdin /dev/null; sets SC_RC, SC_OUT, SC_ERR),
#                        anything before it with plain "$BERTH" (or `br`).
#                        When the berth that dies at POINT is a daemon the
#                        started berth forked (a session's supervisor), the
#                        scenario waits for the started berth (and what it
#                        starts after, e.g. `berth stop`) and sets
#                        SC_DIES="WHAT DIES": the exit status of the started
#                        berth is then for check_AREA to assert (in SC_RC),
#                        and the harness asserts instead that the pid in the
#                        point's crash-log line (written just before the
#                        point sends itself SIGKILL) is not the started
#                        berth's and is gone within 8 s.
#                        It may set SC_SKIP=REASON when this host cannot
#                        reach POINT for this caller (no writable cgroup):
#                        the point is then a TAP skip with REASON, never a pass.
#   check_AREA POINT     after the kill, the wait and the repairing next
#                        `berth run` (its stderr in REPAIR_ERR): the area's own
#                        assertions (pass/fail/has/eq ...).  It may set
#                        SC_VERIFY_RC and SC_VERIFY_SAYS when `berth audit
#                        verify` is to say something else than `intact:`.
# First pass (trace): each variant runs once with BERTH_TEST_CRASH_TRACE;
# a point its variant never reaches FAILS.  A trace that holds nothing at all
# means a build without crash points: the whole suite is a TAP skip.
# Second pass, for every point: the scenario with BERTH_TEST_CRASH_AT=POINT,
# then these checks, common to every area:
#   - berth died by SIGKILL (exit 137) and the point was reached (its line
#     in BERTH_TEST_CRASH_LOG); with SC_DIES, the daemon of that line died
#     (see above);
#   - within a bounded wait (8 s), no process of the run is left: none whose
#     command line holds the scenario's marker ($MARK), none whose working
#     directory is the workspace (the janitor);
#   - the next `berth run -- true` exits 0;
#   - the area's checks (check_AREA);
#   - no cgroup directory the killed run's journal named exists, nor any
#     berth-RUN_ID below their parents; no mount below this suite's
#     directory; the workspace lists as it did before; no journal is left in
#     the state directory's live/;
#   - `berth audit verify` exits ${SC_VERIFY_RC:-0} and says
#     ${SC_VERIFY_SAYS:-intact: }; for every run id berth killed, its
#     run.stop records are as many as its run.start records (0 or 1: none
#     twice, none missing).
# Variables an area file may use: BERTH TOP WS STATE (XDG_STATE_HOME/berth;
# XDG_RUNTIME_DIR and XDG_CONFIG_HOME are fresh ones under TOP too) MARK CGMODE (cgroup or
# rlimits for this caller), KILLED_IDS (run ids of journals found right after
# the kill), KILLED_JOURNALS (their text); helpers: br (RC OUT ERR),
# crash_berth, wait_gone, count_kind ID KIND, stops_ended ID, pass, fail, has,
# hasnt, eq.
# Works as root and as an unprivileged user (cgroups delegated or absent:
# the cgroup points are then skips that name why).  Output is TAP; exit
# status 1 if any check failed.

set -u
export LC_ALL=C
unset BERTH_TEST_FORCE_OFF BERTH_AUDIT_DIR BERTH_TEST_CRASH_AT BERTH_TEST_CRASH_TRACE BERTH_TEST_CRASH_LOG

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 /path/to/berth [TREE]" >&2
	exit 2
fi
BERTH=$(readlink -f -- "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
TREE=${2:-$HERE/../..}
SRC=$TREE/src
CRASHDIR=$HERE/crash

# shellcheck source=../lib.sh
. "$HERE/../lib.sh"
eq() { if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'" "stderr: ${SC_ERR:-}" "repair: ${REPAIR_ERR:-}"; fi; }
skip() { T=$((T + 1)); echo "ok $T - $1 # SKIP $2"; }

TOP=$(mktemp -d /tmp/berth-crash.XXXXXX) || { echo "Bail out! mktemp failed"; exit 1; }
chmod 755 "$TOP"
WS=$TOP/ws
mkdir "$WS"
cleanup() { rm -rf "$TOP"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
export XDG_STATE_HOME=$TOP/state XDG_CONFIG_HOME=$TOP/config XDG_RUNTIME_DIR=$TOP/run
mkdir -m 700 "$XDG_RUNTIME_DIR" # (sessions: their sockets and session.json)
STATE=$XDG_STATE_HOME/berth
MARK=berth-crash-mark-$$
echo "seed" >"$WS/file"
mkdir "$WS/dir" && echo x >"$WS/dir/x"

br() {
	(cd "$WS" && "$BERTH" run "$@" </dev/null >"$TOP/out" 2>"$TOP/err")
	RC=$?
	OUT=$(cat "$TOP/out"); ERR=$(cat "$TOP/err")
}
CRASH_AT=
CRASH_TRACE=
CRASH_LOG=$TOP/crash.log
crash_berth() {
	{ # (the shell's own "Killed" line goes to /dev/null)
		(
			cd "$WS" || exit 1
			[ -n "$CRASH_AT" ] && export BERTH_TEST_CRASH_AT=$CRASH_AT BERTH_TEST_CRASH_LOG=$CRASH_LOG
			[ -n "$CRASH_TRACE" ] && export BERTH_TEST_CRASH_TRACE=$CRASH_TRACE
			echo "$BASHPID" >"$TOP/sc.pid"
			exec "$BERTH" "$@" </dev/null >"$TOP/sc.out" 2>"$TOP/sc.err"
		)
	} 2>/dev/null
	SC_RC=$?
	SC_OUT=$(cat "$TOP/sc.out"); SC_ERR=$(cat "$TOP/sc.err")
}
# processes of a run: the marker in the command line, or the workspace as
# the working directory (berth's janitor); prints their pids
run_procs() {
	local p c
	for p in /proc/[0-9]*; do
		[ "${p#/proc/}" = "$$" ] && continue
		c=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
		case $c in *"$MARK"*) echo "${p#/proc/} $c"; continue ;; esac
		[ "$(readlink "$p/cwd" 2>/dev/null)" = "$WS" ] && echo "${p#/proc/} $c"
	done
}
# wait_gone: up to 8 s for run_procs to be empty; 0 when it is
wait_gone() {
	local i
	for i in $(seq 80); do
		[ -z "$(run_procs)" ] && return 0
		sleep 0.1
	done
	return 1
}
# daemon_gone PID: up to 8 s for PID to be gone (or a zombie); 0 when it is
daemon_gone() {
	local i
	for i in $(seq 80); do
		[ -e "/proc/$1" ] || return 0
		case $(sed -E 's/^.*\) (.).*/\1/' "/proc/$1/stat" 2>/dev/null) in Z | X | "") return 0 ;; esac
		sleep 0.1
	done
	return 1
}
# the records of run ID of kind KIND, one JSON line each
records() { "$BERTH" audit --run "$1" --kind "$2" --json 2>/dev/null; }
count_kind() { records "$1" "$2" | grep -c . ; }
# the "ended" members of run ID's run.stop records, one a line
stops_ended() {
	records "$1" run.stop | python3 -c 'import json,sys
for l in sys.stdin:
    l = l.strip()
    if l: print(json.loads(l).get("payload", {}).get("ended", "-"))'
}
listing() { (cd "$WS" && find . -printf '%p %y %s\n' | sort); }

# ------------------------------------------------------------ the points
mapfile -t POINTS < <(grep -rhoE 'berth_crash_point\("[a-z0-9_]+\.[a-z0-9_]+"\)' "$SRC" |
	sed -E 's/.*\("([^"]+)"\)/\1/' | sort -u)
if [ "${#POINTS[@]}" -eq 0 ]; then
	echo "Bail out! no berth_crash_point() in $SRC"
	exit 1
fi
mapfile -t AREAS < <(printf '%s\n' "${POINTS[@]}" | cut -d. -f1 | sort -u)
echo "# ${#POINTS[@]} crash points in ${#AREAS[@]} areas: ${AREAS[*]}"

# this caller's limits: cgroups (root, or delegated) or rlimits
br -- true
CGMODE=cgroup
case $ERR in *"berth: limits: rlimits ("*) CGMODE=rlimits ;; esac
eq "a first run works (uid $(id -u), limits: $CGMODE)" "$RC" 0

declare -A HAVE
for a in "${AREAS[@]}"; do
	if [ -f "$CRASHDIR/$a.sh" ]; then
		# shellcheck disable=SC1090
		. "$CRASHDIR/$a.sh"
		HAVE[$a]=1
	else
		fail "area $a has a scenario file" "no tests/integration/crash/$a.sh" \
			"points: $(printf '%s\n' "${POINTS[@]}" | grep "^$a\." | tr '\n' ' ')"
	fi
done

# ------------------------------------------------------------ pass 1: trace
declare -A TRACED
TRACE_ALL=$TOP/trace.all
: >"$TRACE_ALL"
for p in "${POINTS[@]}"; do
	a=${p%%.*}
	[ -n "${HAVE[$a]:-}" ] || continue
	v=$a/$("variant_$a" "$p")
	[ -n "${TRACED[$v]:-}" ] && continue
	CRASH_AT= CRASH_TRACE=$TOP/trace.$$
	rm -f "$CRASH_TRACE"
	SC_SKIP= SC_DIES=
	"scenario_$a" "$p"
	TRACED[$v]=$(cut -d' ' -f1 "$CRASH_TRACE" 2>/dev/null | sort -u | tr '\n' ' ')
	cat "$CRASH_TRACE" >>"$TRACE_ALL" 2>/dev/null
	CRASH_TRACE=
	wait_gone
done
if [ ! -s "$TRACE_ALL" ]; then
	T=$((T + 1))
	echo "ok $T # SKIP $BERTH has no crash points (built without -Dcrash_points=true): no traced run wrote a line"
	echo "1..$T"
	exit 0
fi

# ------------------------------------------------------------ pass 2: kill
BEFORE=$(listing)
for p in "${POINTS[@]}"; do
	a=${p%%.*}
	[ -n "${HAVE[$a]:-}" ] || continue
	v=$a/$("variant_$a" "$p")
	rm -f "$CRASH_LOG"
	SC_SKIP= SC_DIES= SC_VERIFY_RC= SC_VERIFY_SAYS= REPAIR_ERR=
	CRASH_AT=$p
	"scenario_$a" "$p"
	CRASH_AT=
	if [ -n "$SC_SKIP" ]; then
		skip "$p: reached and repaired" "$SC_SKIP"
		continue
	fi
	case " ${TRACED[$v]} " in
	*" $p "*) ;;
	*)
		fail "$p: its scenario ($v) reaches it" "not in the trace" "traced: ${TRACED[$v]}"
		wait_gone
		(cd "$WS" && "$BERTH" run -- true </dev/null >/dev/null 2>&1)
		continue
		;;
	esac
	mapfile -t KILLED_IDS < <(ls "$STATE/live" 2>/dev/null | grep -E '^[0-9a-f]{16}$')
	KILLED_JOURNALS=$(cat "$STATE/live"/[0-9a-f]* 2>/dev/null)
	ok=1
	if [ -z "$SC_DIES" ]; then
		[ "$SC_RC" -eq 137 ] || { ok=0; fail "$p: berth dies by SIGKILL (137)" "exit $SC_RC" "stderr: $SC_ERR"; }
	fi
	grep -q "^$p [0-9]*$" "$CRASH_LOG" 2>/dev/null ||
		{ ok=0; fail "$p: the point is reached (crash log)" "no line" "log: $(cat "$CRASH_LOG" 2>/dev/null)"; }
	if [ -z "$SC_DIES" ]; then
		[ $ok -eq 1 ] && pass "$p: berth killed there (137)"
	elif [ $ok -eq 1 ]; then
		# a daemon berth forked: it is not ours to wait for; the point
		# logs its pid just before it sends itself SIGKILL
		dpid=$(sed -n "s/^$p \([0-9]*\)$/\1/p" "$CRASH_LOG" | head -n1)
		if [ "$dpid" = "$(cat "$TOP/sc.pid" 2>/dev/null)" ]; then
			fail "$p: $SC_DIES is killed there, not the berth started" "the started berth (pid $dpid) died"
		elif daemon_gone "$dpid"; then
			pass "$p: $SC_DIES (pid $dpid) killed there"
		else
			fail "$p: $SC_DIES (pid $dpid) killed there" "still alive after 8 s" "$(cat "/proc/$dpid/status" 2>/dev/null | head -n3)"
		fi
	fi
	wait_gone || fail "$p: no process of the run left (8 s)" "left" "$(run_procs)"
	(cd "$WS" && "$BERTH" run -- true </dev/null >"$TOP/rep.out" 2>"$TOP/rep.err")
	RRC=$?
	REPAIR_ERR=$(cat "$TOP/rep.err")
	eq "$p: the next berth run works" "$RRC" 0
	"check_$a" "$p"
	left=
	while read -r kind path; do
		[ "$kind" = cgroup ] || continue
		[ -e "$path" ] && left="$left $path"
		for id in "${KILLED_IDS[@]}"; do
			[ -e "$(dirname "$path")/berth-$id" ] && left="$left $(dirname "$path")/berth-$id"
		done
	done <<<"$KILLED_JOURNALS"
	eq "$p: no cgroup directory of the run left" "$left" ""
	eq "$p: no mount left" "$(grep -c " $TOP" /proc/self/mountinfo)" 0
	eq "$p: the workspace as before" "$(listing)" "$BEFORE"
	eq "$p: no run journal left" "$(ls -A "$STATE/live" 2>/dev/null)" ""
	V=$("$BERTH" audit verify 2>&1)
	VRC=$?
	if [ "$VRC" -eq "${SC_VERIFY_RC:-0}" ] && printf '%s' "$V" | grep -qF -- "${SC_VERIFY_SAYS:-intact: }"; then
		pass "$p: audit verify exits ${SC_VERIFY_RC:-0}: ${SC_VERIFY_SAYS:-intact}"
	else
		fail "$p: audit verify exits ${SC_VERIFY_RC:-0}: ${SC_VERIFY_SAYS:-intact}" "exit $VRC" "$V"
	fi
	bad=
	for id in "${KILLED_IDS[@]}"; do
		s=$(count_kind "$id" run.start) e=$(count_kind "$id" run.stop)
		[ "$s" = "$e" ] && [ "$e" -le 1 ] || bad="$bad $id:start=$s,stop=$e"
	done
	eq "$p: each killed run has one run.stop per run.start" "$bad" ""
done

# ------------------------------------------------------------ part 5 beyond the points
# A live run is never marked: its journal is locked while it runs.
(cd "$WS" && "$BERTH" run -- sh -c ": $MARK; sleep 2" </dev/null >/dev/null 2>&1) &
LIVE=$!
for i in $(seq 50); do [ -n "$(ls "$STATE/live" 2>/dev/null)" ] && break; sleep 0.1; done
LID=$(ls "$STATE/live" 2>/dev/null | head -n1)
br -- true
eq "live run: another berth run meanwhile works" "$RC" 0
hasnt "live run: it is not reported as ended" "$ERR" "ended without its supervisor"
eq "live run: no run.stop while it runs" "$(count_kind "$LID" run.stop)" 0
sleep 0.5
"$BERTH" attest "$LID" >"$TOP/att.json" 2>"$TOP/att.err"
has "live run: attest says it is still running" "$(cat "$TOP/att.json")" '"ended": "running"'
wait "$LIVE"
eq "live run: it ends normally (0)" "$?" 0
eq "live run: one run.stop, its own" "$(stops_ended "$LID")" "-"

# Two berths repair one dead run: exactly one run.stop.
CRASH_AT=run.released
crash_berth run -- sh -c ": $MARK; sleep 5"
CRASH_AT=
DEAD=$(ls "$STATE/live" 2>/dev/null | head -n1)
eq "concurrent repair: berth killed after release" "$SC_RC" 137
wait_gone
(cd "$WS" && "$BERTH" run -- true </dev/null >"$TOP/c1" 2>&1) &
C1=$!
(cd "$WS" && "$BERTH" run -- true </dev/null >"$TOP/c2" 2>&1) &
C2=$!
wait "$C1"; R1=$?
wait "$C2"; R2=$?
eq "concurrent repair: both berths work" "$R1 $R2" "0 0"
eq "concurrent repair: one run.stop, ended: supervisor died" "$(stops_ended "$DEAD")" "supervisor died"
eq "concurrent repair: one of them said so" "$(cat "$TOP/c1" "$TOP/c2" | grep -c "run $DEAD ended without its supervisor")" 1
eq "concurrent repair: no journal left" "$(ls -A "$STATE/live")" ""

# A resident app's run (src/supervisor/app_audit.c) keeps a journal too
# (src/supervisor/run.c): berth killed while it boots the app is repaired,
# and its end recorded, by the next berth run.
FSBIN=
for f in "$TREE/apps/filesystem/filesystem" "$(dirname "$BERTH")/apps/filesystem/filesystem"; do
	[ -x "$f" ] && { FSBIN=$f; break; }
done
if [ -n "$FSBIN" ]; then
	mkdir -p "$WS/../apps" && cp -r "$TREE/apps/filesystem" "$TOP/apps/" && cp "$FSBIN" "$TOP/apps/filesystem/"
	rpc_at() {
		{ (cd "$TOP" && BERTH_TEST_CRASH_AT=$1 BERTH_TEST_CRASH_LOG=$CRASH_LOG "$BERTH" rpc filesystem \
			--app-dir apps/filesystem --export write_file --input '{"path":"a.txt","content":"x"}' \
			</dev/null >"$TOP/out" 2>"$TOP/err"); } 2>/dev/null
	}
	rpc_at ""
	[ -z "$(grep -a . "$TOP/out")" ] && FSBIN=
fi
if [ -n "$FSBIN" ]; then
	rm -f "$CRASH_LOG"
	rpc_at run.recorded
	grep -q '^run.recorded ' "$CRASH_LOG" 2>/dev/null && pass "app: berth rpc killed at run.recorded" ||
		fail "app: berth rpc killed at run.recorded" "no crash log line" "$(cat "$TOP/err")"
	APPRUN=$(ls "$STATE/live" 2>/dev/null | head -n1)
	# its janitor holds the journal's lock until it is done (up to 8 s)
	for i in $(seq 80); do
		python3 -c 'import fcntl, sys; fcntl.flock(open(sys.argv[1]), fcntl.LOCK_EX | fcntl.LOCK_NB)' \
			"$STATE/live/$APPRUN" 2>/dev/null && break
		sleep 0.1
	done
	br -- true
	eq "app: the next berth run works" "$RC" 0
	has "app: it repaired the app's run" "$ERR" "berth: run $APPRUN ended without its supervisor"
	eq "app: its run.stop says the supervisor died" "$(stops_ended "$APPRUN")" "supervisor died"
	eq "app: no journal left" "$(ls -A "$STATE/live")" ""
	V=$("$BERTH" audit verify 2>&1)
	has "app: audit verify: intact" "$V" "intact: "
else
	skip "app: a resident app's killed boot is repaired" \
		"no apps/filesystem/filesystem built in $TREE, or it does not boot here: $(head -n1 "$TOP/err" 2>/dev/null)"
fi

# berth never creates a home that does not exist (src/util/rundir.h).
NOHOME=$TOP/no-such-home
(cd "$WS" && env -u XDG_STATE_HOME -u XDG_CONFIG_HOME HOME="$NOHOME" "$BERTH" run -- true </dev/null >"$TOP/out" 2>"$TOP/err")
eq "HOME missing: berth run refuses (2)" "$?" 2
eq "HOME missing: the message names HOME and the fix" "$(cat "$TOP/err")" \
"berth: HOME \`$NOHOME\` is not an existing directory: berth keeps its state and keys under the home (~/.local/state/berth, ~/.config/berth) and does not create one
berth: hint: set HOME to an existing directory, or set both XDG_STATE_HOME and XDG_CONFIG_HOME to absolute paths"
[ ! -e "$NOHOME" ] && pass "HOME missing: it is not created" || fail "HOME missing: it is not created" "$(find "$NOHOME")"
(cd "$WS" && env -u XDG_CONFIG_HOME HOME="$NOHOME" "$BERTH" audit verify </dev/null >"$TOP/out" 2>"$TOP/err")
eq "HOME missing: with only XDG_STATE_HOME set, refused too (keys live in the config dir)" "$?" 2
(cd "$WS" && HOME="$NOHOME" "$BERTH" run -- true </dev/null >"$TOP/out" 2>"$TOP/err")
eq "HOME missing: XDG_STATE_HOME and XDG_CONFIG_HOME set: the run works" "$?" 0
[ ! -e "$NOHOME" ] && pass "HOME missing: still not created" || fail "HOME missing: still not created" "$(find "$NOHOME")"

echo "1..$T"
[ "$FAILS" -eq 0 ]
