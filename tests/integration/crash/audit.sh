# shellcheck shell=bash
# The audit trail's crash points (src/audit/audit_commit.c, audit_recover.c)
# for the crash-point harness (tests/integration/run-crash.sh), which sources
# this file, exports BERTH_TEST_CRASH_AT=audit.<step>, calls scenario_audit,
# then check_audit.  $B is berth, $T a fresh directory ($T/ws the workspace,
# the state and config homes fresh under $T); `check NAME CMD...` is the
# harness's assertion.
#
# The scenario reaches every audit point in one `berth run`: the log is left
# ahead of its signed head first (a writer killed between the log's sync and
# the head's), so the run under test opens it by moving the unsigned record
# to a quarantine file (audit.quarantine_copy, _name, _flag, _cut), rotates
# (BERTH_AUDIT_ROTATE_BYTES=1: audit.rotate) and writes the recovery record
# (audit.append, audit.log_synced, audit.head_written) -- killed at the
# harness's point.  The next berth run must repair and record whatever that
# left, and `berth audit verify` then say intact, every quarantine file named
# by a recovery record.

crash_audit_dir() {
	echo "${BERTH_AUDIT_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/berth/audit}"
}

scenario_audit() {
	local w
	w=$(dirname "$B")/tests/audit_writer
	cd "$T/ws" || return 1
	if [ -x "$w" ]; then
		env -u BERTH_TEST_CRASH_AT "$w" "$(crash_audit_dir)" 2 1 >/dev/null 2>&1
		{ BERTH_TEST_CRASH_AT=audit.log_synced "$w" "$(crash_audit_dir)" 1 1 >/dev/null 2>&1; } 2>/dev/null
	else
		env -u BERTH_TEST_CRASH_AT "$B" run -- true >/dev/null 2>&1
		{ BERTH_TEST_CRASH_AT=audit.log_synced "$B" run -- true >/dev/null 2>&1; } 2>/dev/null
	fi
	{ BERTH_AUDIT_ROTATE_BYTES=1 "$B" run -- touch ran >/dev/null 2>"$T/audit-crash.err"; } 2>/dev/null
}

check_audit() {
	local a out rc named files
	a=$(crash_audit_dir)
	cd "$T/ws" || return 1
	env -u BERTH_TEST_CRASH_AT "$B" run -- true >/dev/null 2>"$T/audit-next.err"
	rc=$?
	check "audit ($BERTH_TEST_CRASH_AT): the next berth run runs (0)" [ "$rc" -eq 0 ]
	out=$(env -u BERTH_TEST_CRASH_AT "$B" audit verify 2>&1)
	rc=$?
	check "audit ($BERTH_TEST_CRASH_AT): verify says intact (0)" \
		bash -c '[ $0 -eq 0 ] && [[ $(tail -n 1 <<<"$1") =~ ^intact:\ [0-9]+\ records,\ head\ [0-9a-f]{64}$ ]]' "$rc" "$out"
	named=$(grep -c '^recovered at record [0-9]* (.*"quarantined":"quarantine-' <<<"$out")
	files=$(find "$a" -maxdepth 1 -name 'quarantine-*.jsonl' | wc -l)
	check "audit ($BERTH_TEST_CRASH_AT): the move of the unsigned record is recorded ($named records, $files files)" \
		bash -c '[ $0 -ge 1 ] && [ $0 -eq $1 ]' "$named" "$files"
	check "audit ($BERTH_TEST_CRASH_AT): no quarantine.tmp or quarantine.pending is left" \
		bash -c '[ ! -e "$0/quarantine.tmp" ] && [ ! -e "$0/quarantine.pending" ]' "$a"
	check "audit ($BERTH_TEST_CRASH_AT): the signed records before the crash are still in the chain" \
		bash -c '[ "$("$0" audit list 2>/dev/null | grep -c "test.append\|run.start")" -ge 2 ]' "$B"
}
