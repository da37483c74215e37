# shellcheck shell=bash
# Crash scenarios of the audit trail (area `audit`; the contract:
# tests/integration/run-crash.sh): the group commit (audit.append,
# audit.log_synced, audit.head_written), rotation (audit.rotate) and the
# quarantine of records no signed head covers (audit.quarantine_copy, _name,
# _flag, _cut), src/audit/audit_commit.c and audit_recover.c.
#
# One scenario reaches every point in one `berth run`: first a writer is
# killed between the log's sync and the head's (tests/audit_writer, built
# next to berth; without it the points are skips), so the log is ahead of
# its signed head;
# the berth run under test then opens the log by moving the unsigned record
# to a quarantine file, rotates (BERTH_AUDIT_ROTATE_BYTES=1) and writes and
# signs the recovery record -- and is killed at the point.  The repairing
# `berth run` must record whatever that left, and the verdict is then
# `intact:` with every quarantine file named by a recovery record (verify
# checks that), no quarantine.tmp or quarantine.pending left.

AUDIT_DIR=$STATE/audit

variant_audit() { echo recover; }

# the quarantine files of the log, one a line
audit_quarantined() { ls "$AUDIT_DIR" 2>/dev/null | grep -E '^quarantine-[0-9]{20}-[0-9]{20}(-[0-9]+)?\.jsonl$'; }

scenario_audit() {
	local w
	w=$(dirname "$BERTH")/tests/audit_writer
	if [ ! -x "$w" ]; then
		# (a berth run killed instead would be a second killed run)
		SC_SKIP="tests/audit_writer is not next to berth (ninja -C build tests/audit_writer)"
		return
	fi
	{ BERTH_TEST_CRASH_AT=audit.log_synced "$w" "$AUDIT_DIR" 1 1 </dev/null >/dev/null 2>&1; } 2>/dev/null
	AUDIT_Q_BEFORE=$(audit_quarantined | wc -l)
	export BERTH_AUDIT_ROTATE_BYTES=1
	crash_berth run -- sh -c ": $MARK; true"
	unset BERTH_AUDIT_ROTATE_BYTES
}

check_audit() {
	local p=$1 added want moved recorded
	added=$(($(audit_quarantined | wc -l) - AUDIT_Q_BEFORE))
	moved="berth: audit: records [0-9]+\.\.[0-9]+ of \`$AUDIT_DIR\` were written after the last signed head \(a crash between the two syncs, or lines added by hand\): moved to \`quarantine-[0-9-]+\.jsonl\`, not taken into the chain"
	recorded="\`$AUDIT_DIR/quarantine-[0-9-]+\.jsonl\` was already there, named for the records after the signed record [0-9]+, and no recovery record named it \(its writer was killed before it recorded the move\): recorded now"
	case $p in
	audit.quarantine_copy | audit.quarantine_name | audit.quarantine_flag)
		# killed before the log was cut: the next run moves the record
		# (reusing a finished copy), one quarantine file
		want=1
		grep -qE "^$moved$" <<<"$REPAIR_ERR" && pass "$p: the repairing run moved the unsigned record and said so" ||
			fail "$p: the repairing run moved the unsigned record and said so" "no such line" "$REPAIR_ERR"
		;;
	audit.quarantine_cut | audit.rotate)
		# killed after the cut, before the recovery record: recorded by the next run
		want=1
		grep -qE "^berth: audit: $recorded$" <<<"$REPAIR_ERR" && pass "$p: the repairing run recorded the move" ||
			fail "$p: the repairing run recorded the move" "no such line" "$REPAIR_ERR"
		;;
	audit.append | audit.log_synced)
		# the recovery record itself was not signed: moved out too, and
		# both files recorded
		want=2
		grep -qE "^$moved; $recorded$" <<<"$REPAIR_ERR" && pass "$p: the repairing run moved the unsigned recovery record and recorded the first move" ||
			fail "$p: the repairing run moved the unsigned recovery record and recorded the first move" "no such line" "$REPAIR_ERR"
		;;
	*)
		# audit.head_written: the recovery is signed; nothing to repair
		want=1
		hasnt "$p: the repairing run had nothing of the audit trail to repair" "$REPAIR_ERR" "berth: audit:"
		;;
	esac
	eq "$p: quarantine files made" "$added" "$want"
	eq "$p: no quarantine.tmp or quarantine.pending left" "$(ls -A "$AUDIT_DIR" | grep -cE '^quarantine\.(tmp|pending)$')" 0
}
