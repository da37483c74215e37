#!/usr/bin/env bash
# berth killed between the steps of its session and app state changes
# (issue 15, part 1, the crash points `session.*` and `app.*` of
# src/session/spawn_args.c, src/session/supervise.c and
# src/supervisor/app_policy.c; src/util/crash.h):
# at each point, SIGKILL, then assert that
#   - nothing is left running (the session's agent, the app);
#   - no state is half-written: no temporary file, no empty `origin`, every
#     session.json left is whole JSON, `berth ps` never shows a killed
#     session as running (`stale`: the supervisor is gone; `exited` once the
#     end was written);
#   - the next `berth spawn` of the same name, or `berth rpc` of the same app,
#     works, and prints no false warning; `berth rm` clears a stale session;
#   - the audit trail verifies.
# A trace run first proves that a spawn, a stop and a first boot pass every
# point named here, so no check passes because its point is never reached.
# tests/integration/crash/{session,app}.sh hold the same scenarios for the
# crash-point harness (tests/integration/run-crash.sh).
#
# usage: run-state-crash.sh /path/to/berth /path/to/repo   (repo: holds apps/notes)
# Needs a -Dcrash_points=true build (tests/run's); in another build every
# check is a TAP SKIP.  Works as root and as an unprivileged user.
# Output is TAP; exit status 1 if any check failed.

set -u
export LC_ALL=C
unset BERTH_TEST_FORCE_OFF BERTH_AUDIT_DIR BERTH_TEST_CRASH_AT BERTH_TEST_CRASH_TRACE BERTH_TEST_WRITE_ERRNO

if [ $# -ne 2 ]; then
	echo "usage: $0 /path/to/berth /path/to/repo" >&2
	exit 2
fi
B=$(readlink -f -- "$1")
REPO=$(readlink -f -- "$2")
HOSTPY=/usr/bin/python3

TOP=$(mktemp -d /tmp/berth-state-crash.XXXXXX) || { echo "Bail out! mktemp failed"; exit 1; }
chmod 755 "$TOP"
export XDG_STATE_HOME=$TOP/state XDG_RUNTIME_DIR=$TOP/run XDG_CONFIG_HOME=$TOP/config HOME=$TOP/home
mkdir -m 700 "$XDG_STATE_HOME" "$XDG_RUNTIME_DIR" "$XDG_CONFIG_HOME" "$HOME"
mkdir "$TOP/ws"
cleanup() {
	"$B" stop --all --grace 0 >/dev/null 2>&1
	pkill -KILL -f "MARK$UNIQ" 2>/dev/null
	rm -rf "$TOP"
}
trap cleanup EXIT
cp -r "$REPO/apps/notes" "$TOP/notes"
chmod -R a+rX "$TOP/notes"
NOTES=$TOP/notes
UNIQ=$$$RANDOM
cd "$TOP/ws" || exit 1

N=0 FAILS=0
pass() { N=$((N + 1)); echo "ok $N - $1"; }
skip() { N=$((N + 1)); echo "ok $N - $1 # SKIP $2"; }
bad() {
	N=$((N + 1)); FAILS=$((FAILS + 1)); echo "not ok $N - $1"; shift
	local l; for l in "$@"; do printf '%s\n' "$l" | head -n 12 | sed 's/^/#   /'; done
}
eq() { if [ "$2" == "$3" ]; then pass "$1"; else bad "$1" "got:  $2" "want: $3" "stderr: $ERR"; fi; }
RC=0 OUT='' ERR=''
b() { # b ARGS...: RC OUT ERR (ERR without the `berth: limits:` notice)
	# (the braces: bash's own "Killed" line for a killed berth goes nowhere)
	{ "$B" "$@" </dev/null >"$TOP/out" 2>"$TOP/err"; } 2>/dev/null; RC=$?
	OUT=$(cat "$TOP/out"); ERR=$(grep -v '^berth: limits: ' "$TOP/err")
}
# the state of session NAME in `berth ps` ("" when not listed)
ps_state() { "$B" ps 2>/dev/null | awk -v n="$1" '$1 == n { print $3 }'; }
tmps() { find "$XDG_STATE_HOME" "$XDG_RUNTIME_DIR" -name '*.tmp' 2>/dev/null | sort; }
# wait up to 5 s for no process matching $1
gone() { for _ in $(seq 50); do pgrep -f -- "$1" >/dev/null || return 0; sleep 0.1; done; return 1; }
json_ok() { [ ! -e "$1" ] || "$HOSTPY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$1"; }

SESSION_CLI="session.claimed session.state_dir session.workspace"
SESSION_START="session.dirs session.log session.socket session.sandbox session.meta"
SESSION_STOP="session.stopping session.screen session.exited session.run_end"
APP_POINTS="app.state_dir app.origin app.workspace app.identity"

# --- the trace: every point is on the path ---
BERTH_TEST_CRASH_TRACE=$TOP/trace b spawn shell --name tr -- -c "sleep 300; : MARK$UNIQ" # its own workspace
BERTH_TEST_CRASH_TRACE=$TOP/trace b stop tr
(cd "$TOP" && BERTH_TEST_CRASH_TRACE=$TOP/trace "$B" rpc notes --app-dir "$NOTES" --export list_notes --input '{}' \
	</dev/null >/dev/null 2>&1)
"$B" rm --purge tr >/dev/null 2>&1
if [ ! -s "$TOP/trace" ]; then
	for p in $SESSION_CLI $SESSION_START $SESSION_STOP $APP_POINTS; do
		skip "$p" "a build without -Dcrash_points=true has no crash points"
	done
	echo "1..$N"
	exit 0
fi
want_app="app.state_dir app.origin app.workspace"
[ "$(id -u)" -eq 0 ] && want_app="$want_app app.identity" # a new identity is written for root only
got=$(awk '$1 ~ /^(session|app)\./ { print $1 }' "$TOP/trace" | tr '\n' ' ')
eq "trace: a spawn, a stop and a first boot pass every point, in order" "$got" \
	"$SESSION_CLI $SESSION_START $SESSION_STOP $want_app "
rm -rf "$XDG_STATE_HOME/berth/apps"

# --- sessions: berth spawn killed before the supervisor exists ---
i=0
for p in $SESSION_CLI; do
	i=$((i + 1)); name=cs$i
	BERTH_TEST_CRASH_AT=$p b spawn shell --name "$name" -- -c "sleep 300; : MARK$UNIQ-$p"
	eq "$p: berth spawn killed (137), nothing printed" "$RC:$OUT" "137:"
	if gone "MARK$UNIQ-$p"; then pass "$p: nothing of the session runs"; else bad "$p: nothing of the session runs" "$(pgrep -af "MARK$UNIQ-$p")"; fi
	eq "$p: berth ps does not list it (no session.json was written)" "$(ps_state "$name")" ""
	eq "$p: no temporary file" "$(tmps)" ""
	b spawn shell --name "$name" -- -c "sleep 300; : MARK$UNIQ-$p"
	eq "$p: the next spawn of the name works" "$RC" 0
	b stop "$name"
	eq "$p: and stops" "$RC:$ERR" "0:berth: stopped \`$name\`"
	b rm --purge "$name"
	left=$(find "$XDG_RUNTIME_DIR/berth/sessions/$name" "$XDG_STATE_HOME/berth/sessions/$name" 2>/dev/null)
	eq "$p: berth rm --purge clears it" "$RC:$left" "0:"
done

# --- sessions: killed while starting ---
for p in $SESSION_START; do
	i=$((i + 1)); name=cs$i
	BERTH_TEST_CRASH_AT=$p b spawn shell --name "$name" --workspace "$TOP/ws" -- -c "sleep 300; : MARK$UNIQ-$p"
	eq "$p: berth spawn says the supervisor died (125)" "$RC:$ERR" \
		"125:berth: the session supervisor of \`$name\` died while starting"
	if gone "MARK$UNIQ-$p"; then pass "$p: nothing of the session runs"; else bad "$p: nothing of the session runs" "$(pgrep -af "MARK$UNIQ-$p")"; fi
	st=$(ps_state "$name")
	case $st in "" | stale) pass "$p: berth ps does not show it running ('$st')" ;; *) bad "$p: berth ps does not show it running" "state: $st" ;; esac
	if json_ok "$XDG_RUNTIME_DIR/berth/sessions/$name/session.json"; then pass "$p: session.json absent or whole"; else bad "$p: session.json absent or whole"; fi
	eq "$p: no temporary file" "$(tmps)" ""
	b spawn shell --name "$name" --workspace "$TOP/ws" -- -c "sleep 300; : MARK$UNIQ-$p"
	eq "$p: the next spawn of the name works" "$RC" 0
	b stop "$name"
	eq "$p: and stops" "$RC:$ERR" "0:berth: stopped \`$name\`"
	eq "$p: then berth ps says exited" "$(ps_state "$name")" exited
	b rm "$name"
	eq "$p: berth rm clears it" "$RC" 0
done

# --- sessions: killed while stopping ---
for p in $SESSION_STOP; do
	i=$((i + 1)); name=cs$i
	BERTH_TEST_CRASH_AT=$p b spawn shell --name "$name" --workspace "$TOP/ws" -- -c "sleep 300; : MARK$UNIQ-$p"
	eq "$p: the session starts" "$RC" 0
	b stop "$name"
	# not "stopped": the supervisor died before its end line (125)
	eq "$p: berth stop says the supervisor died while stopping (125)" "$RC:$ERR" "125:berth: the session supervisor of \`$name\` died while stopping it
berth: hint: its sandbox dies with it and the next berth records the run's end; \`berth ps\` shows the session as stale or exited, \`berth rm $name\` clears it"
	if gone "MARK$UNIQ-$p"; then pass "$p: nothing of the session runs"; else bad "$p: nothing of the session runs" "$(pgrep -af "MARK$UNIQ-$p")"; fi
	case $p in session.stopping | session.screen) want=stale ;; *) want=exited ;; esac
	eq "$p: berth ps says $want" "$(ps_state "$name")" "$want"
	if json_ok "$XDG_RUNTIME_DIR/berth/sessions/$name/session.json"; then pass "$p: session.json whole"; else bad "$p: session.json whole"; fi
	eq "$p: no temporary file" "$(tmps)" ""
	b spawn shell --name "$name" --workspace "$TOP/ws" -- -c "sleep 300; : MARK$UNIQ-$p"
	eq "$p: the next spawn of the name works" "$RC" 0
	b stop "$name"
	eq "$p: and stops" "$RC" 0
	b rm "$name"
	eq "$p: berth rm clears it" "$RC" 0
done

# --- apps: killed during a first boot ---
cd "$TOP" || exit 1
for p in $APP_POINTS; do
	export XDG_STATE_HOME=$TOP/state-$p # a fresh state (for root: a new identity)
	mkdir -m 700 "$XDG_STATE_HOME"
	st=$XDG_STATE_HOME/berth/apps/notes
	BERTH_TEST_CRASH_AT=$p b rpc notes --app-dir "$NOTES" --export add_note --input '{"text":"one"}'
	if [ "$p" = app.identity ] && [ "$(id -u)" -ne 0 ]; then
		eq "$p: not on an unprivileged caller's path (a hashed identity): the call works" "$RC:$OUT" '0:{"id":1}'
	else
		eq "$p: berth rpc killed (137), nothing answered" "$RC:$OUT" "137:"
	fi
	if [ ! -e "$st/origin" ] || [ "$(cat "$st/origin")" = "$NOTES" ]; then
		pass "$p: origin absent or whole (never empty)"
	else
		bad "$p: origin absent or whole (never empty)" "origin: '$(cat "$st/origin")'"
	fi
	eq "$p: no temporary file" "$(find "$XDG_STATE_HOME" -name '*.tmp')" ""
	b rpc notes --app-dir "$NOTES" --export add_note --input '{"text":"two"}'
	[ "$p" = app.identity ] && [ "$(id -u)" -ne 0 ] && w='0:{"id":2}:' || w='0:{"id":1}:'
	eq "$p: the next call works and prints no warning" "$RC:$OUT:$ERR" "$w"
	eq "$p: origin names the app directory" "$(cat "$st/origin")" "$NOTES"
	b audit verify
	eq "$p: the audit trail verifies" "$RC:$(printf '%s' "$OUT" | cut -d: -f1)" "0:intact"
done
export XDG_STATE_HOME=$TOP/state
b audit verify
eq "sessions: the audit trail verifies" "$RC:$(printf '%s' "$OUT" | cut -d: -f1)" "0:intact"

echo "1..$N"
[ "$FAILS" -eq 0 ]
