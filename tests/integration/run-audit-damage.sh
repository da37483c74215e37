#!/bin/bash
# Damaged and crashed audit logs (issue 15): for every kind of damage -- a
# torn last line, a flipped byte, a truncated file, swapped or deleted
# records, a colliding quarantine name, a bad hash after the signed head, a
# damaged head -- the exact `berth audit verify` verdict, advice and exit
# status, and what the next `berth run` does: its exit status and message,
# whether the command ran, that nothing was lost or overwritten, and, where
# it refuses, that the way out it names works.  Then the audit crash points
# (src/util/crash.h; a build with -Dcrash_points=true): a writer killed at
# each, the next writer, and the verdict.
# Usage: bash run-audit-damage.sh /path/to/berth [tree]
# Needs tests/audit_writer next to berth (build/tests/audit_writer).
# Prints TAP; exits 1 on any failure.
set -uo pipefail
B=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
W=$(dirname "$B")/tests/audit_writer
[ -x "$W" ] || { echo "1..0 # SKIP $W missing (build it with ninja)"; exit 0; }
here=$(cd "$(dirname "$0")" && pwd)
cv=
for c in "${2:-}/contrib/audit-verify.py" "$here/../../contrib/audit-verify.py"; do
	[ -f "$c" ] && { cv=$c; break; }
done
base=$(mktemp -d /tmp/berth-audit-damage.XXXXXX)
trap 'rm -rf "$base"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() {
	n=$((n + 1)) failed=$((failed + 1))
	echo "not ok $n - $1"
	shift
	local l
	for l in "$@"; do printf '%s\n' "$l" | head -n 12 | sed 's/^/#   /'; done
}
check() { # check NAME CMD...
	local name=$1
	shift
	if "$@"; then ok "$name"; else notok "$name"; fi
}
matches() { # matches NAME TEXT ERE: some line of TEXT matches ERE
	if grep -qE -- "$3" <<<"$2"; then ok "$1"; else notok "$1" "want /$3/" "got: $2"; fi
}
lacks() { # lacks NAME TEXT ERE: no line of TEXT matches ERE
	if grep -qE -- "$3" <<<"$2"; then notok "$1" "unwanted /$3/" "got: $2"; else ok "$1"; fi
}
re() { sed 's/[][\.*^$(){}?+|/]/\\&/g' <<<"$1"; } # an ERE matching $1 literally

fresh() { # fresh NAME: a new audit dir and key; cd to the workspace
	T=$base/$1
	mkdir -p "$T/ws"
	export XDG_CONFIG_HOME=$T/cfg BERTH_AUDIT_DIR=$T/audit
	A=$T/audit
	cd "$T/ws" || exit 1
}
L1=audit-0000000000000001.jsonl
Q13=quarantine-00000000000000000013-00000000000000000013
log12() { "$W" "$A" 12 1 >/dev/null 2>>"$base/setup.err"; } # 12 signed records
snap() { (cd "$A" && for f in *; do [ "$f" = lock ] || echo "$f $(sha256sum <"$f" | cut -c1-64)"; done); }
verify() { # verify [ARGS]: $vout, $vrc
	vout=$("$B" audit verify "$@" 2>&1)
	vrc=$?
}
run_next() { # berth run -- touch ran: $rrc, $rerr (without the limits notice)
	rm -f "$T/ws/ran"
	"$B" run -- touch ran >"$T/run.out" 2>"$T/run.err"
	rrc=$?
	rerr=$(grep -v '^berth: limits' "$T/run.err")
}
# verdict NAME STATUS LINE1 [LINE2]: verify exits STATUS and prints exactly
# these lines (EREs, anchored)
verdict() {
	local name=$1 want=$2 l1=$3 l2=${4:-}
	verify
	if [ "$vrc" -eq "$want" ] && grep -qE -- "^$l1\$" <<<"$(sed -n 1p <<<"$vout")" &&
		{ [ -z "$l2" ] || grep -qE -- "^$l2\$" <<<"$(sed -n 2p <<<"$vout")"; } &&
		{ [ "$want" -ne 1 ] || [ "$(wc -l <<<"$vout")" -eq 2 ]; }; then
		ok "$name: verify exits $want: $(sed -n 1p <<<"$vout" | cut -c1-140)"
	else
		notok "$name: verify exits $want with the exact verdict" "rc $vrc, want /^$l1\$/ /^$l2\$/" "got: $vout"
	fi
}
MV="mv $(re "$base")/[a-z0-9-]+/audit $(re "$base")/[a-z0-9-]+/audit\\.damaged-[0-9]{8}T[0-9]{6}Z"
DAMAGED="what to do: berth refuses to extend this log; keep it as evidence and start a new one: \`$MV\`"
# proceeds NAME [KEEP]: the next run ran (0), and the log's first KEEP bytes
# (default: all) are as they were
proceeds() {
	local name=$1 keep=${2:-$(stat -c %s "$A/$L1")} old
	old=$(head -c "$keep" "$A/$L1" | sha256sum)
	run_next
	check "$name: the next berth run runs (0) and so does the command" bash -c '[ $0 -eq 0 ] && [ -e "$1" ]' "$rrc" "$T/ws/ran"
	check "$name: ...and keeps the $keep bytes before the damage as they were" bash -c '[ "$(head -c "$0" "$1" | sha256sum)" = "$2" ]' "$keep" "$A/$L1" "$old"
}
# refused NAME ERE: the next run refuses (125) with that message and the mv
# hint, changes nothing; the mv it names works, and the moved log keeps its
# verdict
refused() {
	local name=$1 before first mvcmd moved
	before=$(snap)
	first=$(sed -n 1p <<<"$vout")
	run_next
	check "$name: the next berth run refuses (125)" [ "$rrc" -eq 125 ]
	check "$name: ...the command did not run" [ ! -e "$T/ws/ran" ]
	matches "$name: ...and says why" "$rerr" "^berth: $2"
	matches "$name: ...and how to recover" "$rerr" "^berth: hint: \`berth audit verify\` says where; berth does not extend a damaged log: keep it as evidence and start a new one with \`$MV\`$"
	check "$name: ...and changed nothing in the audit directory" [ "$(snap)" = "$before" ]
	mvcmd=$(sed -n 's/.*start a new one with `\(mv [^`]*\)`$/\1/p' <<<"$rerr")
	moved=${mvcmd##* }
	$mvcmd
	run_next
	check "$name: after \`mv\` as the hint says, berth run runs (0)" bash -c '[ $0 -eq 0 ] && [ -e "$1" ]' "$rrc" "$T/ws/ran"
	verdict "$name: ...the new log" 0 "intact: 4 records, head [0-9a-f]{64}"
	verify --dir "$moved"
	check "$name: ...and the moved log keeps its verdict" bash -c '[ $0 -eq 1 ] && [ "$1" = "$2" ]' "$vrc" "$(sed -n 1p <<<"$vout")" "${first//$A/$moved}"
}

# --- damage ---
fresh torn
log12
torn='{"actor":"uid:0","hash":"abc'
printf '%s' "$torn" >>"$A/$L1"
verdict "torn last line after the signed head" 1 \
	"BROKEN at record 13 \($(re "$A/$L1"):13\): torn last line of 28 bytes \(an append a crash interrupted\)" \
	"what to do: nothing by hand: the next berth write cuts it off and seals it with a recovery record"
size0=$(($(stat -c %s "$A/$L1") - 28))
proceeds "torn last line" "$size0"
matches "torn last line: the run says what it repaired" "$rerr" "^berth: audit: the last line of \`$(re "$A/$L1")\` was torn \(28 bytes at offset $size0, an append a crash interrupted\): cut off and sealed with a recovery record$"
verify
matches "torn last line: verify names the recovery" "$vout" "^recovered at record 13 \([^)]*\): \{\"file\":\"$L1\",\"length\":28,\"offset\":$size0,\"prefix_hex\":\"$(printf %s "$torn" | od -An -tx1 | tr -d " \n")\",\"reason\":\"torn last line\",\"sha256\":\"[0-9a-f]{64}\"\}$"
matches "torn last line: ...and is intact with the 4 records of the run" "$vout" "^intact: 17 records, head [0-9a-f]{64}$"

fresh cut
log12
truncate -s -10 "$A/$L1"
cutlen=$(($(tail -n 1 "$A/$L1" | wc -c)))
verdict "a signed record cut short (truncated mid-record)" 1 \
	"BROKEN at record 12 \($(re "$A/$L1"):12\): the last record, 12, which the signed head covers, is cut short: $cutlen bytes of it remain \(the file was truncated or damaged; a crash never leaves this\)" \
	"$DAMAGED"
refused "a signed record cut short" "the audit log in \`$(re "$A")\` ends at record 11 but its signed head names record 12: records the head covers were removed, cut short or damaged$"

fresh truncated
log12
head -n 10 "$A/$L1" >"$T/l" && cat "$T/l" >"$A/$L1"
verdict "a truncated file (records 11, 12 cut off)" 1 \
	"BROKEN at record 10 \($(re "$A/$L1"):10\): the signed head names record 12 but the log ends at record 10: records were removed from the tail" \
	"$DAMAGED"
refused "a truncated file" "the audit log in \`$(re "$A")\` ends at record 10 but its signed head names record 12: records the head covers were removed, cut short or damaged$"

fresh flip-middle
log12
python3 - "$A/$L1" <<'PY'
import sys
p = sys.argv[1]; l = open(p, 'rb').readlines(); l[4] = l[4].replace(b'"i":4', b'"i":5', 1); open(p, 'wb').writelines(l)
PY
MIDDLE="what to do: the damage lies before record 12, the last the head signs: berth goes on appending \(a writer checks the tail only\) and verify goes on reporting it; to keep this log as evidence and start a new one: \`$MV\`"
verdict "a flipped byte in record 5" 1 \
	"BROKEN at record 5 \($(re "$A/$L1"):5\): hash does not match the content \(recomputed [0-9a-f]{12}.*, stored [0-9a-f]{12}.*\)" "$MIDDLE"
proceeds "a flipped byte in record 5"
verdict "a flipped byte in record 5: after the run" 1 \
	"BROKEN at record 5 \($(re "$A/$L1"):5\): hash does not match the content \(recomputed [0-9a-f]{12}.*, stored [0-9a-f]{12}.*\)" \
	"${MIDDLE/record 12/record 16}"

fresh flip-last
log12
python3 - "$A/$L1" <<'PY'
import sys
p = sys.argv[1]; l = open(p, 'rb').readlines(); l[11] = l[11].replace(b'"i":11', b'"i":12', 1); open(p, 'wb').writelines(l)
PY
verdict "a flipped byte in the last (signed) record" 1 \
	"BROKEN at record 12 \($(re "$A/$L1"):12\): hash does not match the content \(recomputed [0-9a-f]{12}.*, stored [0-9a-f]{12}.*\)" "$DAMAGED"
refused "a flipped byte in the last record" "the audit log in \`$(re "$A")\` ends at record 11 but its signed head names record 12: records the head covers were removed, cut short or damaged$"

fresh swap
log12
python3 - "$A/$L1" <<'PY'
import sys
p = sys.argv[1]; l = open(p, 'rb').readlines(); l[3], l[4] = l[4], l[3]; open(p, 'wb').writelines(l)
PY
verdict "records 4 and 5 swapped" 1 "BROKEN at record 4 \($(re "$A/$L1"):4\): seq 5 where 4 was expected: records were deleted, reordered or inserted" "$MIDDLE"
proceeds "records 4 and 5 swapped"

fresh swap-last
log12
python3 - "$A/$L1" <<'PY'
import sys
p = sys.argv[1]; l = open(p, 'rb').readlines(); l[10], l[11] = l[11], l[10]; open(p, 'wb').writelines(l)
PY
verdict "the last two records swapped" 1 "BROKEN at record 11 \($(re "$A/$L1"):11\): seq 12 where 11 was expected: records were deleted, reordered or inserted" "$DAMAGED"
refused "the last two records swapped" "the audit log in \`$(re "$A")\` ends at record 11 but its signed head names record 12: records the head covers were removed, cut short or damaged$"

fresh delete
log12
sed -i 5d "$A/$L1"
verdict "record 5 deleted" 1 "BROKEN at record 5 \($(re "$A/$L1"):5\): seq 6 where 5 was expected: records were deleted, reordered or inserted" "$MIDDLE"
proceeds "record 5 deleted"

# A log ahead of its head: the first append of a writer killed between the
# log's sync and the head's.
ahead() {
	log12
	{ BERTH_TEST_CRASH_AT=audit.log_synced "$W" "$A" 1 1 >/dev/null 2>&1; } 2>/dev/null
}
notcovered() { echo "BROKEN at record 13 \($(re "$A/$L1"):13\): records 13..13 are not covered by the signed head \(a crash between the log's and the head's sync, or lines appended without the host key\)"; }
QADVICE="what to do: nothing by hand: the next berth write moves what follows the signed record 12 to a quarantine file beside the log and records it"
crashpoints=1
fresh probe
log12
{ BERTH_TEST_CRASH_AT=audit.log_synced "$W" "$A" 1 1 >/dev/null 2>&1; } 2>/dev/null
[ $? -eq 137 ] || crashpoints=0

if [ "$crashpoints" -eq 1 ]; then
	fresh badhash
	ahead
	sed -i '13s/"i":0/"i":7/' "$A/$L1"
	tailbytes=$(tail -n 1 "$A/$L1")
	keep=$(($(stat -c %s "$A/$L1") - ${#tailbytes} - 1))
	verdict "a bad hash after the signed head" 1 \
		"BROKEN at record 13 \($(re "$A/$L1"):13\): hash does not match the content \(recomputed [0-9a-f]{12}.*, stored [0-9a-f]{12}.*\); it follows record 12, the last the head signs" \
		"$QADVICE"
	proceeds "a bad hash after the signed head" "$keep"
	matches "a bad hash after the signed head: the run says where it moved it" "$rerr" "^berth: audit: records 13\.\.13 of \`$(re "$A")\` were written after the last signed head \(a crash between the two syncs, or lines added by hand\): moved to \`$Q13\.jsonl\`, not taken into the chain$"
	check "...the quarantine file holds the line byte for byte" [ "$(cat "$A/$Q13.jsonl")" = "$tailbytes" ]
	verify
	matches "...verify names the recovery" "$vout" "^recovered at record 13 \([^)]*\): \{\"bytes\":[0-9]+,\"head_seq\":12,\"log_seq\":13,\"quarantined\":\"$Q13\.jsonl\",\"reason\":\"log ahead of the signed head\",\"sha256\":\"$(sha256sum <"$A/$Q13.jsonl" | cut -c1-64)\"\}$"
	matches "...and is intact" "$vout" "^intact: 17 records, head [0-9a-f]{64}$"

	fresh torn-after
	ahead
	printf '{"actor":"torn' >>"$A/$L1"
	verdict "a torn line after an unsigned record" 1 \
		"BROKEN at record 14 \($(re "$A/$L1"):14\): torn last line of 14 bytes \(an append a crash interrupted\); it follows record 12, the last the head signs" \
		"$QADVICE"
	tailbytes=$(tail -n 2 "$A/$L1")
	keep=$(($(stat -c %s "$A/$L1") - ${#tailbytes}))
	proceeds "a torn line after an unsigned record" "$keep"
	check "...the record and the torn line went to the quarantine file, byte for byte" [ "$(cat "$A/$Q13.jsonl")" = "$tailbytes" ]
	verdict "...and the log verifies" 0 "recovered at record 13 \([^)]*\): \{\"bytes\":$((${#tailbytes})),\"head_seq\":12,\"log_seq\":13,\"quarantined\":\"$Q13\.jsonl\",\"reason\":\"log ahead of the signed head\",\"sha256\":\"[0-9a-f]{64}\"\}"

	fresh collide
	ahead
	echo "not berth's" >"$A/$Q13.jsonl"
	chmod 600 "$A/$Q13.jsonl"
	verdict "a colliding quarantine name: verify first names the unsigned record" 1 "$(notcovered)" "$QADVICE"
	keep=$(($(stat -c %s "$A/$L1") - $(tail -n 1 "$A/$L1" | wc -c)))
	proceeds "a colliding quarantine name" "$keep"
	check "a colliding quarantine name: the file that was there is kept as it was" [ "$(cat "$A/$Q13.jsonl")" = "not berth's" ]
	check "...the records go to the next free name" [ -s "$A/$Q13-2.jsonl" ]
	matches "...the run says so" "$rerr" "moved to \`$Q13-2\.jsonl\`, not taken into the chain; \`$(re "$A/$Q13.jsonl")\` was already there, named for the records after the signed record 12, and no recovery record named it \(its writer was killed before it recorded the move\): recorded now$"
	verify
	matches "...verify names both" "$vout" "^recovered at record 14 \([^)]*\): \{\"bytes\":12,\"head_seq\":12,\"quarantined\":\"$Q13\.jsonl\",\"reason\":\"unrecorded quarantine\",\"sha256\":\"$(sha256sum <"$A/$Q13.jsonl" | cut -c1-64)\"\}$"
	matches "...and is intact" "$vout" "^intact: 18 records, head [0-9a-f]{64}$"
else
	echo "# no crash points in this build (meson setup -Dcrash_points=true): the cases that need a killed writer are skipped"
	ok "# SKIP a bad hash after the signed head, a colliding quarantine name: no crash points"
fi

fresh unrecorded
log12
printf '%s\n' '{"seq":13}' >"$A/$Q13.jsonl"
chmod 600 "$A/$Q13.jsonl"
verdict "a quarantine file nobody recorded (an older berth killed while recovering)" 1 \
	"BROKEN at record 13 \($(re "$A/$Q13.jsonl")\): records moved out of the log after record 12, the last the head signs, by a writer that was killed before it recorded the move" \
	"what to do: nothing by hand: the next berth write records it"
pubkey=$T/cfg/berth/keys/host-ed25519.pub.pem
if [ -n "$cv" ]; then
	out=$(python3 "$cv" "$A" "$pubkey" 2>&1)
	check "...contrib/audit-verify.py (no berth) says BROKEN too (1)" bash -c '[ $0 -eq 1 ] && [ "$1" = "BROKEN at record 13 ($2): no recovery record names this quarantine file" ]' $? "$out" "$A/$Q13.jsonl"
fi
proceeds "a quarantine file nobody recorded"
verdict "...recorded by the next run" 0 "recovered at record 13 \([^)]*\): \{\"bytes\":11,\"head_seq\":12,\"quarantined\":\"$Q13\.jsonl\",\"reason\":\"unrecorded quarantine\",\"sha256\":\"[0-9a-f]{64}\"\}"
if [ -n "$cv" ]; then
	check "...and contrib/audit-verify.py agrees: intact" bash -c '[ "$(python3 "$0" "$1" "$2")" = "$(tail -n 1 <<<"$3")" ]' "$cv" "$A" "$pubkey" "$vout"
fi

fresh stray
log12
Q5=quarantine-00000000000000000005-00000000000000000005.jsonl
echo '{}' >"$A/$Q5"
chmod 600 "$A/$Q5"
verdict "a stale quarantine file no record names" 1 \
	"BROKEN at record 5 \($(re "$A/$Q5")\): no recovery record names this quarantine file: records were moved out of the log without a record \(by hand, or by an older berth killed while it recovered\)" \
	"what to do: look at it; to keep it outside the audit directory: \`mv $(re "$A/$Q5") $(re "$T")/\`"
proceeds "a stale quarantine file"
mv "$A/$Q5" "$T/"
verdict "a stale quarantine file: after the mv" 0 "intact: 16 records, head [0-9a-f]{64}"

fresh head-garbage
log12
printf 'garbage' | dd of="$A/head" bs=1 seek=512 conv=notrunc 2>/dev/null
verdict "a damaged head file (bytes of slot 2 overwritten)" 1 \
	"BROKEN at record 12 \($(re "$A")/head\): the signed head is forged or damaged: slot 2 \(bytes 512\.\.1023 of \`head\`\) is neither empty nor a signed head" \
	"$DAMAGED"
refused "a damaged head file" "the audit head in \`$(re "$A")\` is forged or damaged: slot 2 \(bytes 512\.\.1023 of \`head\`\) is neither empty nor a signed head$"

fresh head-truncated
log12
truncate -s 700 "$A/head"
verdict "a truncated head file" 1 \
	"BROKEN at record 12 \($(re "$A")/head\): the signed head is forged or damaged: slot 2 \(bytes 512\.\.1023 of \`head\`\) is neither empty nor a signed head" \
	"$DAMAGED"
refused "a truncated head file" "the audit head in \`$(re "$A")\` is forged or damaged: slot 2 \(bytes 512\.\.1023 of \`head\`\) is neither empty nor a signed head$"

fresh head-deleted
log12
rm "$A/head"
verdict "the head deleted" 1 \
	"BROKEN at record 12 \($(re "$A/$L1"):12\): there is no signed head \(\`head\` was deleted\): the tail cannot be checked" \
	"$DAMAGED"
refused "the head deleted" "the audit log in \`$(re "$A")\` has no signed head \(\`head\` was deleted\): its tail cannot be checked$"

fresh head-emptied
log12
: >"$A/head"
verdict "an emptied head (it signs no record)" 1 \
	"BROKEN at record 12 \($(re "$A/$L1"):12\): records 1..12 are not covered by the signed head \(a crash between the log's and the head's sync, or lines appended without the host key\)" \
	"what to do: nothing by hand: the next berth write moves what follows the signed record 0 to a quarantine file beside the log and records it"
all=$(cat "$A/$L1")
proceeds "an emptied head" 0
check "an emptied head: every record went to the quarantine, byte for byte" [ "$(cat "$A/quarantine-00000000000000000001-00000000000000000012.jsonl")" = "$all" ]
verdict "...and the new chain starts with the record of that" 0 "recovered at record 1 \([^)]*\): \{\"bytes\":[0-9]+,\"head_seq\":0,\"log_seq\":12,\"quarantined\":\"quarantine-00000000000000000001-00000000000000000012\.jsonl\",\"reason\":\"log ahead of the signed head\",\"sha256\":\"[0-9a-f]{64}\"\}"

# --- crash points: a writer killed at each step, then the next writer ---
if [ "$crashpoints" -eq 1 ]; then
	# berth run itself killed at an audit point: the command never runs
	# without its records (run.start and policy are durable first).
	for p in audit.append audit.log_synced audit.quarantine_cut; do
		fresh "run-$p"
		if [ "$p" = audit.quarantine_cut ]; then ahead; else log12; fi
		rm -f "$T/ws/ran"
		{ BERTH_TEST_CRASH_AT=$p "$B" run -- touch ran >/dev/null 2>&1; } 2>/dev/null
		rc=$?
		check "berth run killed at $p (137): the command did not run" bash -c '[ $0 -eq 137 ] && [ ! -e "$1" ]' "$rc" "$T/ws/ran"
		run_next
		check "berth run killed at $p: the next run runs (0)" bash -c '[ $0 -eq 0 ] && [ -e "$1" ]' "$rrc" "$T/ws/ran"
		# (who opens the log first repairs it: the next run, or its sweep of
		# the killed run; the record is what counts)
		verify
		matches "berth run killed at $p: the repair is recorded" "$vout" "^recovered at record [0-9]+ \([^)]*\): \{.*\"quarantined\":\"quarantine-00000000000000000013-[0-9]{20}(-[0-9]+)?\.jsonl\",\"reason\":\"(log ahead of the signed head|unrecorded quarantine)\""
		matches "berth run killed at $p: verify intact after the repair" "$vout" "^intact: [0-9]+ records, head [0-9a-f]{64}$"
	done
	# killed NAME POINT: a writer (one record) killed at POINT exits 137
	killed() {
		{ BERTH_TEST_CRASH_AT=$2 "$W" "$A" 1 1 >/dev/null 2>"$T/kill.err"; } 2>/dev/null
		check "$1: the writer is killed at $2 (137)" [ $? -eq 137 ]
	}
	# next NAME ERE: the next writer succeeds, printing that repair (or none: "")
	next() {
		"$W" "$A" 1 1 >/dev/null 2>"$T/next.err"
		local rc=$?
		if [ -z "$2" ]; then
			check "$1: the next writer succeeds and repairs nothing" bash -c '[ $0 -eq 0 ] && [ ! -s "$1" ]' "$rc" "$T/next.err"
		else
			check "$1: the next writer succeeds" [ "$rc" -eq 0 ]
			matches "$1: ...and says what it repaired" "$(cat "$T/next.err")" "^audit_writer: recovered: $2$"
		fi
		check "$1: no temporary or pending file is left" bash -c '! ls "$0" | grep -qE "^quarantine\.(tmp|pending)$"' "$A"
	}
	moved() { echo "records 13\.\.13 of \`$(re "$A")\` were written after the last signed head \(a crash between the two syncs, or lines added by hand\): moved to \`$Q13\.jsonl\`, not taken into the chain"; }
	for p in audit.append audit.log_synced; do
		fresh "crash-$p"
		log12
		killed "$p" "$p"
		verdict "$p" 1 "$(notcovered)" "$QADVICE"
		next "$p" "$(moved)"
		verdict "$p: after the next writer" 0 "recovered at record 13 \([^)]*\): \{\"bytes\":[0-9]+,\"head_seq\":12,\"log_seq\":13,\"quarantined\":\"$Q13\.jsonl\",\"reason\":\"log ahead of the signed head\",\"sha256\":\"[0-9a-f]{64}\"\}"
		matches "$p: ...intact, 12 + the recovery + 1" "$vout" "^intact: 14 records, head [0-9a-f]{64}$"
	done
	fresh crash-head
	log12
	killed "audit.head_written" audit.head_written
	verdict "audit.head_written (the record is signed)" 0 "intact: 13 records, head [0-9a-f]{64}"
	next "audit.head_written" ""
	fresh crash-rotate
	log12
	{ BERTH_AUDIT_ROTATE_BYTES=1 BERTH_TEST_CRASH_AT=audit.rotate "$W" "$A" 1 1 >/dev/null 2>&1; } 2>/dev/null
	check "audit.rotate: the writer is killed (137), an empty new file stays" bash -c '[ $0 -eq 137 ] && [ ! -s "$1" ] && [ -e "$1" ]' $? "$A/audit-0000000000000013.jsonl"
	verdict "audit.rotate" 0 "intact: 12 records, head [0-9a-f]{64}"
	next "audit.rotate" ""
	check "audit.rotate: the next writer goes on in the new file" [ "$(wc -l <"$A/audit-0000000000000013.jsonl")" -eq 1 ]
	verdict "audit.rotate: after the next writer" 0 "intact: 13 records, head [0-9a-f]{64}"

	# The quarantine's steps: the log is ahead of its head, the next writer
	# is killed while it moves the unsigned record out.
	for p in audit.quarantine_copy audit.quarantine_name audit.quarantine_flag; do
		fresh "crash-$p"
		ahead
		killed "$p" "$p"
		verdict "$p (the log still holds the record)" 1 "$(notcovered)" "$QADVICE"
		next "$p" "$(moved)"
		verify
		matches "$p: the recovery is recorded" "$vout" "^recovered at record 13 \([^)]*\): \{\"bytes\":[0-9]+,(\"copy\":\"made by an earlier writer that was killed before it cut the log\",)?\"head_seq\":12,\"log_seq\":13,\"quarantined\":\"$Q13\.jsonl\",\"reason\":\"log ahead of the signed head\",\"sha256\":\"[0-9a-f]{64}\"\}$"
		matches "$p: ...intact" "$vout" "^intact: 14 records, head [0-9a-f]{64}$"
		check "$p: one quarantine file" [ "$(ls "$A" | grep -c '^quarantine-')" -eq 1 ]
	done
	fresh crash-cut
	ahead
	killed "audit.quarantine_cut" audit.quarantine_cut
	verdict "audit.quarantine_cut (moved, not yet recorded)" 1 \
		"BROKEN at record 13 \($(re "$A/$Q13.jsonl")\): records moved out of the log after record 12, the last the head signs, by a writer that was killed before it recorded the move" \
		"what to do: nothing by hand: the next berth write records it"
	run_next
	check "audit.quarantine_cut: the next berth run runs (0), the command too" bash -c '[ $0 -eq 0 ] && [ -e "$1" ]' "$rrc" "$T/ws/ran"
	matches "audit.quarantine_cut: ...and records the move" "$rerr" "^berth: audit: \`$(re "$A/$Q13.jsonl")\` was already there, named for the records after the signed record 12, and no recovery record named it \(its writer was killed before it recorded the move\): recorded now$"
	verify
	matches "audit.quarantine_cut: verify names it" "$vout" "^recovered at record 13 \([^)]*\): \{\"bytes\":[0-9]+,\"head_seq\":12,\"quarantined\":\"$Q13\.jsonl\",\"reason\":\"unrecorded quarantine\",\"sha256\":\"$(sha256sum <"$A/$Q13.jsonl" | cut -c1-64)\"\}$"
	matches "audit.quarantine_cut: ...intact" "$vout" "^intact: 17 records, head [0-9a-f]{64}$"

	# Killed again while writing the recovery record itself.
	fresh crash-recovery
	ahead
	killed "the recovery record" audit.quarantine_cut
	killed "the recovery record, again" audit.log_synced
	verdict "the recovery record unsigned" 1 "$(notcovered)" "$QADVICE"
	next "the recovery record" "records 13\.\.13 of \`$(re "$A")\` were written after the last signed head \(a crash between the two syncs, or lines added by hand\): moved to \`$Q13-2\.jsonl\`, not taken into the chain; \`$(re "$A/$Q13.jsonl")\` was already there, named for the records after the signed record 12, and no recovery record named it \(its writer was killed before it recorded the move\): recorded now"
	verify
	matches "the recovery record: both files are recorded" "$vout" "^recovered at record 14 \([^)]*\): \{\"bytes\":[0-9]+,\"head_seq\":12,\"quarantined\":\"$Q13\.jsonl\",\"reason\":\"unrecorded quarantine\""
	matches "the recovery record: ...intact" "$vout" "^intact: 15 records, head [0-9a-f]{64}$"
	check "the recovery record: the first quarantine holds the original record 13" bash -c 'grep -q "\"i\":0" "$0" && ! grep -q audit.recovery "$0"' "$A/$Q13.jsonl"
	check "the recovery record: the second holds the unsigned recovery record" grep -q '"kind":"audit.recovery"' "$A/$Q13-2.jsonl"
	fresh crash-recovery-head
	ahead
	killed "the recovery's head" audit.head_written
	verdict "the recovery's head written (the flag stays)" 0 "recovered at record 13 \([^)]*\): .*\"reason\":\"log ahead of the signed head\".*"
	check "the recovery's head: the flag is still there" [ -e "$A/quarantine.pending" ]
	next "the recovery's head" ""
fi

echo "1..$n"
[ "$failed" -eq 0 ]
