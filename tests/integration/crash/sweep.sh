# shellcheck shell=bash
# Crash scenarios of the repair itself (area `sweep`; the contract:
# tests/integration/run-crash.sh): a berth killed while it repairs a dead
# run (src/supervisor/orphans.c) leaves the journal for the next one, which
# finishes the repair without recording the run's end twice.

variant_sweep() { echo orphan; }

scenario_sweep() {
	local at=$CRASH_AT trace=$CRASH_TRACE
	# the orphan: a run killed once its command was released
	CRASH_AT=run.released CRASH_TRACE=
	crash_berth run -- sh -c ": $MARK; sleep 5"
	SWEEP_ORPHAN=$(ls "$STATE/live" 2>/dev/null | head -n1)
	wait_gone
	CRASH_AT=$at CRASH_TRACE=$trace
	crash_berth run -- true
}

check_sweep() {
	local p=$1
	eq "$p: the orphan's journal outlived the killed repair" "${KILLED_IDS[*]}" "$SWEEP_ORPHAN"
	has "$p: the next run finished the repair" "$REPAIR_ERR" "berth: run $SWEEP_ORPHAN ended without its supervisor"
	eq "$p: one run.stop, ended: supervisor died" "$(stops_ended "$SWEEP_ORPHAN")" "supervisor died"
}
