# shellcheck shell=bash
# Crash scenarios of the area `session` for tests/integration/run-crash.sh:
# the points session.* of src/session/spawn_args.c (berth spawn before the
# supervisor: claimed, state_dir, workspace) and src/session/supervise.c (the
# supervisor's start: dirs, log, socket, sandbox, meta; its stop: stopping,
# screen, exited, run_end).  The harness exports BERTH_TEST_CRASH_AT, runs scenario_session,
# then check_session; $B is berth, $T a fresh directory ($T/ws the workspace,
# the state and configuration directories fresh ones under it), `check NAME
# CMD...` the harness's assertion.  tests/integration/run-state-crash.sh
# asserts the same on its own, point by point, with exact messages.

_session_env() {
	export XDG_RUNTIME_DIR=$T/run
	[ -d "$XDG_RUNTIME_DIR" ] || mkdir -m 700 "$XDG_RUNTIME_DIR"
}

# A spawn (the session's own workspace: session.workspace is on the path) and,
# when it started, a stop: every session.* point is on the path.
scenario_session() {
	_session_env
	"$B" spawn shell --name crash -- -c "sleep 300; : berth-crash-session-$T" \
		</dev/null >"$T/session.out" 2>"$T/session.err"
	echo $? >"$T/session.rc"
	if [ "$(cat "$T/session.rc")" -eq 0 ]; then
		"$B" stop crash </dev/null >>"$T/session.out" 2>>"$T/session.err"
		echo $? >"$T/session.stop.rc"
	fi
	return 0
}

_session_gone() { # nothing of the session's agent runs (within 5 s)
	for _ in $(seq 50); do pgrep -f -- "berth-crash-session-$T" >/dev/null || return 0; sleep 0.1; done
	return 1
}
_session_not_running() { # `berth ps`: absent, stale (supervisor gone) or exited
	local st
	st=$("$B" ps 2>/dev/null | awk '$1 == "crash" { print $3 }')
	case $st in "" | stale | exited) return 0 ;; *) return 1 ;; esac
}
_session_whole() { # session.json absent or whole JSON; no temporary file
	local f=$T/run/berth/sessions/crash/session.json
	[ -z "$(find "$T" -name '*.tmp' 2>/dev/null)" ] || return 1
	[ ! -e "$f" ] || python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$f"
}
_session_again() ( # the same name starts again, and stops (not killed this time)
	unset BERTH_TEST_CRASH_AT
	"$B" spawn shell --name crash -- -c "sleep 300; : berth-crash-session-$T" \
		</dev/null >/dev/null 2>&1 || return 1
	"$B" stop crash </dev/null >/dev/null 2>&1 || return 1
	[ "$("$B" ps 2>/dev/null | awk '$1 == "crash" { print $3 }')" = exited ]
)

check_session() {
	_session_env
	check "session ($BERTH_TEST_CRASH_AT): nothing of the session runs" _session_gone
	check "session ($BERTH_TEST_CRASH_AT): berth ps does not show it running" _session_not_running
	check "session ($BERTH_TEST_CRASH_AT): no half-written session state" _session_whole
	check "session ($BERTH_TEST_CRASH_AT): the next spawn of the name works" _session_again
	check "session ($BERTH_TEST_CRASH_AT): berth rm --purge clears it" env -u BERTH_TEST_CRASH_AT "$B" rm --purge crash
}
