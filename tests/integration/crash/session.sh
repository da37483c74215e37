# shellcheck shell=bash disable=SC2034 # SC_SKIP, SC_DIES: read by the harness
# Crash scenarios of the area `session` (the contract:
# tests/integration/run-crash.sh): the points session.* of
# src/session/spawn_args.c (`berth spawn` itself, before the supervisor
# exists: claimed, state_dir, workspace) and src/session/supervise.c (the
# supervisor berth spawn forks, a daemon: its start: dirs, log, socket,
# sandbox, meta; its stop under `berth stop`: stopping, screen, exited,
# run_end).  For the supervisor's points the berth that dies is not the one
# crash_berth started: the scenario sets SC_DIES and this file asserts what
# `berth spawn` (and `berth stop`) said.  tests/integration/run-state-crash.sh
# asserts the same points on its own, with a fresh state per point.
#
# After the kill: nothing of the session runs (the harness's marker check:
# the agent's command holds $MARK), `berth ps` never says running, every
# session.json left is whole JSON, no temporary file, the next spawn of the
# name works and stops, `berth ps` then says exited, `berth rm` (--purge for
# a session with its own workspace) clears it.


variant_session() {
	case $1 in
	session.claimed | session.state_dir | session.workspace) echo own-workspace ;;
	*) echo workspace ;;
	esac
}

# the session's name for POINT: session.state_dir -> c-state-dir
_session_name() {
	local s=${1#session.}
	echo "c-${s//_/-}"
}

# berth spawn (its own workspace for the CLI's points: session.workspace is on
# that path only; else --workspace $WS), then, if it started, berth stop
# (the stop points are reached by the supervisor while it stops).
_session_spawn() { # NAME [--workspace DIR]: the spawn's rc in SESS_RC
	local n=$1
	shift
	(cd "$WS" && "$BERTH" spawn shell --name "$n" "$@" -- -c "sleep 300; : $MARK") \
		</dev/null >"$TOP/sess.out" 2>"$TOP/sess.err"
	SESS_RC=$?
}
scenario_session() {
	local p=$1 n ws=()
	n=$(_session_name "$p")
	[ -n "$CRASH_TRACE" ] && n=t-$(variant_session "$p")
	[ "$(variant_session "$p")" = workspace ] && ws=(--workspace "$WS")
	crash_berth spawn shell --name "$n" "${ws[@]}" -- -c "sleep 300; : $MARK"
	SESS_STOP_RC='' SESS_STOP_ERR=''
	if [ "$SC_RC" -eq 0 ]; then
		(cd "$WS" && "$BERTH" stop "$n") </dev/null >"$TOP/sess.out" 2>"$TOP/sess.err"
		SESS_STOP_RC=$?
		SESS_STOP_ERR=$(grep -v '^berth: limits: ' "$TOP/sess.err")
	fi
	case $p in
	session.claimed | session.state_dir | session.workspace) ;;
	*) [ -n "$CRASH_AT" ] && SC_DIES="the session supervisor" ;;
	esac
	if [ -n "$CRASH_TRACE" ]; then
		"$BERTH" rm --purge "$n" </dev/null >/dev/null 2>&1
	fi
	return 0
}

_session_ps() { "$BERTH" ps 2>/dev/null | awk -v n="$1" '$1 == n { print $3 }'; }
_session_tmps() { find "$STATE" "$XDG_RUNTIME_DIR" -name '*.tmp' 2>/dev/null | sort; }

check_session() {
	local p=$1 n f st want id err
	n=$(_session_name "$p")
	f=$XDG_RUNTIME_DIR/berth/sessions/$n/session.json
	err=$(printf '%s\n' "$SC_ERR" | grep -v '^berth: limits: ')
	case $p in
	session.claimed | session.state_dir | session.workspace)
		eq "$p: berth spawn printed nothing" "$SC_OUT" ""
		eq "$p: berth ps does not list it (no session.json was written)" "$(_session_ps "$n")" ""
		eq "$p: no run of it was begun (no journal)" "${#KILLED_IDS[@]}" 0
		;;
	session.dirs | session.log | session.socket | session.sandbox | session.meta)
		eq "$p: berth spawn says the supervisor died (125)" "$SC_RC:$err" \
			"125:berth: the session supervisor of \`$n\` died while starting"
		st=$(_session_ps "$n")
		case $st in
		"" | stale) pass "$p: berth ps does not show it running ('$st')" ;;
		*) fail "$p: berth ps does not show it running" "state: $st" ;;
		esac
		;;
	*)
		eq "$p: the session started (0)" "$SC_RC" 0
		# not "stopped": the supervisor died before its end line (125)
		eq "$p: berth stop says the supervisor died while stopping (125)" "$SESS_STOP_RC:$SESS_STOP_ERR" \
			"125:berth: the session supervisor of \`$n\` died while stopping it
berth: hint: its sandbox dies with it and the next berth records the run's end; \`berth ps\` shows the session as stale or exited, \`berth rm $n\` clears it"
		case $p in session.stopping | session.screen) want=stale ;; *) want=exited ;; esac
		eq "$p: berth ps says $want" "$(_session_ps "$n")" "$want"
		;;
	esac
	# the run the supervisor began (src/session/supervise.c
	# session_run_begin) is journalled; the next berth run records its end
	case $p in
	session.sandbox | session.meta | session.stopping | session.screen | session.exited)
		eq "$p: one journal left by the killed supervisor" "${#KILLED_IDS[@]}" 1
		id=${KILLED_IDS[0]:-none}
		has "$p: the next run says it repaired the session's run" "$REPAIR_ERR" \
			"berth: run $id ended without its supervisor"
		eq "$p: run.stop says the supervisor died" "$(stops_ended "$id")" "supervisor died"
		;;
	session.run_end)
		eq "$p: the session's run ended on record before the kill (no journal)" "${#KILLED_IDS[@]}" 0
		hasnt "$p: the next run repairs nothing" "$REPAIR_ERR" "ended without its supervisor"
		;;
	esac
	if [ ! -e "$f" ] || python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$f" 2>/dev/null; then
		pass "$p: session.json absent or whole"
	else
		fail "$p: session.json absent or whole" "$(head -c 300 "$f")"
	fi
	eq "$p: no temporary file" "$(_session_tmps)" ""
	# the same name again, not killed this time
	local ws=()
	[ "$(variant_session "$p")" = workspace ] && ws=(--workspace "$WS")
	_session_spawn "$n" "${ws[@]}"
	eq "$p: the next spawn of the name works" "$SESS_RC" 0
	(cd "$WS" && "$BERTH" stop "$n") </dev/null >"$TOP/sess.out" 2>"$TOP/sess.err"
	eq "$p: and stops" "$?:$(grep -v '^berth: limits: ' "$TOP/sess.err")" "0:berth: stopped \`$n\`"
	eq "$p: then berth ps says exited" "$(_session_ps "$n")" exited
	"$BERTH" rm --purge "$n" </dev/null >"$TOP/sess.out" 2>"$TOP/sess.err"
	eq "$p: berth rm --purge clears it" "$?:$(find "$XDG_RUNTIME_DIR/berth/sessions/$n" \
		"$STATE/sessions/$n" 2>/dev/null)" "0:"
}
