# shellcheck shell=bash
# Crash scenarios of `berth run --evidence` (area `evidence`; the contract:
# tests/integration/run-crash.sh): the copy into runs/ID/evidence, its
# manifest and its evidence.ingest record, before the sandbox (and its
# janitor) exist.  The journal names the run directory and the copy first.

EVIDENCE_SRC=$TOP/evidence
mkdir -p "$EVIDENCE_SRC/sub"
for f in a b c; do echo "$f" >"$EVIDENCE_SRC/$f"; done
echo d >"$EVIDENCE_SRC/sub/d"

variant_evidence() { echo copy; }

scenario_evidence() {
	crash_berth run --evidence "$EVIDENCE_SRC" -- sh -c ": $MARK; ls /evidence >/dev/null"
}

check_evidence() {
	local p=$1 id
	eq "$p: one journal left by the killed run" "${#KILLED_IDS[@]}" 1
	id=${KILLED_IDS[0]:-none}
	has "$p: the next run says it repaired the run" "$REPAIR_ERR" "berth: run $id ended without its supervisor"
	eq "$p: no partial evidence copy left" "$(ls -d "$STATE/runs/$id/evidence" 2>/dev/null)" ""
	# run.start and policy are durable before the copy starts (cmd_run.c)
	eq "$p: run.stop says the supervisor died" "$(stops_ended "$id")" "supervisor died"
	if [ "$p" = evidence.recorded ]; then
		eq "$p: only the manifest the audit trail refers to stays" \
			"$(ls -A "$STATE/runs/$id" 2>/dev/null)" "evidence.json"
	else
		eq "$p: no run directory left" "$(ls -d "$STATE/runs/$id" 2>/dev/null)" ""
	fi
}
