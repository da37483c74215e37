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

# the reasons of the log's recovery records, one a line, oldest first
audit_recoveries() {
	"$BERTH" audit --kind audit.recovery --json 2>/dev/null | sed -n 's/.*"reason":"\([^"]*\)".*/\1/p'
}

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
	AUDIT_R_BEFORE=$(audit_recoveries | wc -l)
	export BERTH_AUDIT_ROTATE_BYTES=1
	crash_berth run -- sh -c ": $MARK; true"
	unset BERTH_AUDIT_ROTATE_BYTES
}

# What the killed run and the repairing one recorded, by where the kill was.
# (Whichever berth opens the log first repairs it -- the repairing run, or
# its sweep of the killed run -- so the records are checked, not who said
# so; tests/integration/run-audit-damage.sh checks the messages.)
check_audit() {
	local p=$1 added want new
	added=$(($(audit_quarantined | wc -l) - AUDIT_Q_BEFORE))
	new=$(audit_recoveries | tail -n +$((AUDIT_R_BEFORE + 1)) | tr '\n' ',')
	case $p in
	audit.quarantine_copy | audit.quarantine_name | audit.quarantine_flag)
		# killed before the log was cut: the repair moves the record
		# (reusing a finished copy): one file, one record of the move
		want="1 log ahead of the signed head,"
		;;
	audit.quarantine_cut | audit.rotate)
		# killed after the cut, before the recovery record: the repair
		# records the file the killed run made
		want="1 unrecorded quarantine,"
		;;
	audit.append | audit.log_synced)
		# the recovery record itself was not signed: moved out too, and
		# both files recorded
		want="2 log ahead of the signed head,unrecorded quarantine,"
		;;
	*)
		# audit.head_written: the killed run's own record is signed
		want="1 log ahead of the signed head,"
		;;
	esac
	eq "$p: quarantine files made, and the recovery records since the kill" "$added $new" "$want"
	eq "$p: no quarantine.tmp or quarantine.pending left" "$(ls -A "$AUDIT_DIR" | grep -cE '^quarantine\.(tmp|pending)$')" 0
}
