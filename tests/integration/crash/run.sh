# shellcheck shell=bash
# Crash scenarios of `berth run`'s set-up and end (area `run`; the contract:
# tests/integration/run-crash.sh).  The run's journal (src/util/journal.h)
# names each host-side artifact before it is made; the next berth run
# repairs what the killed one left and records its end.

variant_run() {
	case $1 in
	run.check_probe) echo memory ;;
	run.egress) echo proxy ;;
	*) echo plain ;;
	esac
}

scenario_run() {
	case $1 in
	run.cgroup | run.check_probe)
		if [ "$CGMODE" != cgroup ]; then
			SC_SKIP="no writable cgroup for uid $(id -u): berth makes no cgroup directory"
			return
		fi
		;;
	esac
	case $(variant_run "$1") in
	memory) crash_berth run --memory 512M -- sh -c ": $MARK; sleep 0.2" ;;
	proxy) crash_berth run --network proxy --allow-host example.invalid -- sh -c ": $MARK; sleep 0.2" ;;
	*) crash_berth run -- sh -c ": $MARK; sleep 0.2" ;;
	esac
}

# Where the killed run stood: 0 nothing of it yet, 1 a journal, 2 its
# run.start durable (the command released), 3 its run.json, 4 its
# enforced record, 5 its own run.stop.
# Order: run.swept run.journal_tmp run.journal run.check_probe run.checked
# run.record, then the sandbox's set-up (run.cgroup run.limits run.guard
# run.janitor run.clone run.attach run.ready; run.audit on the audit thread,
# racing them), run.recorded run.egress run.released, run.measured
# run.exited run.cleaned run.ended run.stopped.
run_stage() {
	case $1 in
	run.swept | run.journal_tmp) echo 0 ;;
	run.journal | run.check_probe | run.checked) echo 1 ;;
	run.recorded | run.egress | run.released) echo 2 ;;
	run.measured | run.exited | run.cleaned | run.ended) echo 4 ;;
	run.stopped) echo 5 ;;
	*) echo 3 ;; # run.json written; run.start durable or not (the thread)
	esac
}

check_run() {
	local p=$1 st id
	st=$(run_stage "$p")
	if [ "$st" -eq 0 ]; then
		eq "$p: nothing of the run was made (no journal)" "${#KILLED_IDS[@]}" 0
		hasnt "$p: the next run repairs nothing" "$REPAIR_ERR" "ended without its supervisor"
		eq "$p: no temporary journal left" "$(ls -A "$STATE/live" 2>/dev/null)" ""
		return
	fi
	eq "$p: one journal left by the killed run" "${#KILLED_IDS[@]}" 1
	id=${KILLED_IDS[0]:-none}
	has "$p: the next run says it repaired the run" "$REPAIR_ERR" \
		"berth: run $id ended without its supervisor (pid "
	case $st in
	1)
		# nothing recorded yet; the run directory never got run.json
		eq "$p: no run directory left" "$(ls -d "$STATE/runs/$id" 2>/dev/null)" ""
		eq "$p: no record of the run" "$(count_kind "$id" run.start)" 0
		;;
	3)
		# run.start may or may not be durable yet: the harness checks one
		# run.stop per run.start
		[ -f "$STATE/runs/$id/run.json" ] && pass "$p: run.json stays" ||
			fail "$p: run.json stays" "missing"
		;;
	2 | 4)
		eq "$p: run.stop says the supervisor died" "$(stops_ended "$id")" "supervisor died"
		has "$p: the repair is named" "$REPAIR_ERR" \
			"recorded its end in the audit trail (run.stop, ended: \"supervisor died\")"
		[ -f "$STATE/runs/$id/run.json" ] && pass "$p: run.json stays" ||
			fail "$p: run.json stays" "missing"
		;;
	5)
		eq "$p: its own run.stop only (status 0, no repair record)" "$(stops_ended "$id")" "-"
		hasnt "$p: no end recorded by the repair" "$REPAIR_ERR" "recorded its end"
		;;
	esac
	if [ "$st" -eq 4 ]; then
		"$BERTH" attest "$id" >"$TOP/att.json" 2>"$TOP/att.err"
		eq "$p: attest signs (0)" "$?" 0
		has "$p: attest says the run did not end normally" "$(cat "$TOP/att.err")" \
			"berth: run $id did not end normally (ended: supervisor died): the verdict "
		has "$p: the attestation says ended: supervisor died" "$(cat "$TOP/att.json")" '"ended": "supervisor died"'
		has "$p: and no exit status" "$(cat "$TOP/att.json")" '"exit_status": null'
	fi
	if [ "$st" -eq 5 ]; then
		"$BERTH" attest "$id" >"$TOP/att.json" 2>"$TOP/att.err"
		hasnt "$p: attest of a run that ended: no ended member" "$(cat "$TOP/att.json")" '"ended"'
	fi
}
