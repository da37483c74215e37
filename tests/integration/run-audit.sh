#!/bin/bash
# The audit trail end to end: records of `berth run`, tamper detection,
# crash recovery, fail-closed on ENOSPC/EFBIG, concurrent writers, long lines,
# rotation, secrets.
# Usage: bash run-audit.sh /path/to/berth [stage-dir]
# Needs tests/audit_writer next to berth (build/tests/audit_writer).
# Prints ok/FAIL lines and a count; exits 1 on any failure.
set -uo pipefail
B=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
W=$(dirname "$B")/tests/audit_writer
here=$(cd "$(dirname "$0")" && pwd)
[ -x "$W" ] || { echo "FAIL: $W missing (build it with ninja)"; exit 1; }
base=$(mktemp -d /tmp/berth-audit.XXXXXX)
shm=$(mktemp -d /dev/shm/berth-audit.XXXXXX)
mnt=
cleanup() {
	[ -n "$mnt" ] && umount "$mnt" 2>/dev/null
	rm -rf "$base" "$shm"
}
trap cleanup EXIT
cd "$base" || exit 1
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "not ok - $1"; }
check() { # check NAME CMD...
	local name=$1; shift
	if "$@"; then ok "$name"; else bad "$name"; fi
}

# fresh NAME: a new audit dir and key dir; sets A (audit dir) and exports
fresh() {
	T=$base/$1
	mkdir -p "$T"
	export XDG_CONFIG_HOME=$T/cfg BERTH_AUDIT_DIR=$T/audit
	A=$T/audit
	mkdir -p "$T/ws"
	cd "$T/ws" || exit 1   # the workspace: `touch ran` inside creates $T/ws/ran
}
logf() { ls "$A"/audit-*.jsonl | tail -1; }
verify_out() { "$B" audit verify 2>&1; }

# expect_broken NAME PATTERN: verify exits 1 and prints BROKEN ... PATTERN
expect_broken() {
	local out rc
	out=$("$B" audit verify 2>&1); rc=$?
	local pat="^BROKEN at record [0-9]* (.*): .*$2"
	[[ $2 == ^BROKEN* ]] && pat=$2   # a full pattern: record number and line too
	if [ "$rc" -eq 1 ] && grep -q "$pat" <<<"$out"; then ok "$1"
	else bad "$1 (rc $rc: $out)"; fi
}

# --- records of berth run ---
fresh basic
"$B" run -- true; rc=$?
check "berth run -- true exits 0" [ "$rc" -eq 0 ]
"$B" run -- sh -c 'exit 7'; rc=$?
check "the command's status passes through" [ "$rc" -eq 7 ]
kinds=$("$B" audit --json | python3 -c 'import sys,json; print(" ".join(json.loads(l)["kind"] for l in sys.stdin))')
check "two runs wrote run.start policy enforced run.stop twice" [ "$kinds" = "run.start policy enforced run.stop run.start policy enforced run.stop" ]
stop=$("$B" audit --kind run.stop -n 1 --json | python3 -c 'import sys,json; print(json.loads(sys.stdin.read())["payload"]["status"])')
check "run.stop carries the exit status" [ "$stop" = 7 ]
run=$("$B" audit -n 1 --json | python3 -c 'import sys,json; print(json.loads(sys.stdin.read())["run_id"])')
n=$("$B" audit --run "$run" | wc -l)
check "--run selects one run's 4 records" [ "$n" -eq 4 ]
dig=$("$B" audit --kind policy -n 1 --json | python3 -c 'import sys,json; print(json.loads(sys.stdin.read())["payload"]["digest"])')
want=$("$B" run --dry-run --json -- sh -c 'exit 7' | python3 -c 'import sys,json; print(json.loads(sys.stdin.read())["digest"])')
check "the policy record's digest is the policy's digest" [ "$dig" = "$want" ]
out=$(verify_out)
check "verify: intact: 8 records" grep -q "^intact: 8 records, head [0-9a-f]\{64\}$" <<<"$out"
check "audit dir is 0700" [ "$(stat -c %a "$A")" = 700 ]
check "log, head, lock are 0600" [ "$(stat -c %a "$(logf)" "$A/head" "$A/lock" | sort -u)" = 600 ]
check "private key 0600, key dir 0700" [ "$(stat -c %a "$T/cfg/berth/keys/host-ed25519.pem" "$T/cfg/berth/keys")" = "$(printf '600\n700')" ]
# The independent verifier (python3 and openssl, no berth) agrees.
cv=
for c in "${2:-}/contrib/audit-verify.py" "$here/../../contrib/audit-verify.py"; do
	[ -f "$c" ] && { cv=$c; break; }
done
if [ -z "$cv" ]; then
	bad "contrib/audit-verify.py not found (copy contrib/ into the stage)"
else
	pub=$T/cfg/berth/keys/host-ed25519.pub.pem
	check "contrib/audit-verify.py (no berth): same verdict" \
		bash -c '[ "$(python3 "$0" "$1" "$2")" = "$("$3" audit verify)" ]' "$cv" "$A" "$pub" "$B"
fi
check "usage error: -n 0 exits 2" bash -c '"$0" audit -n 0 >/dev/null 2>&1; [ $? -eq 2 ]' "$B"
check "usage error: unknown option exits 2" bash -c '"$0" audit --bogus >/dev/null 2>&1; [ $? -eq 2 ]' "$B"

# The sandbox must not reach the log or the key.
"$B" run --workspace "$T" -- touch ran 2>"$T/err"; rc=$?
check "a workspace containing the audit log is refused (2)" bash -c '[ $0 -eq 2 ] && grep -q "would give the sandbox the audit log" "$1"' "$rc" "$T/err"
"$B" run --ro "$T/cfg/berth/keys:/k" -- true 2>"$T/err"; rc=$?
check "mounting the key directory is refused (2)" bash -c '[ $0 -eq 2 ] && grep -q "would give the sandbox berth.s host key" "$1"' "$rc" "$T/err"
"$B" run --ro "$T/cfg/berth/keys/host-ed25519.pem:/workspace/k" -- true 2>"$T/err"; rc=$?
check "mounting the private key file is refused (2)" [ "$rc" -eq 2 ]
# --evidence copies into the sandbox: a copy of the key is the key.
"$B" run --evidence "$T/cfg/berth/keys" -- cat /evidence/keys/host-ed25519.pem >"$T/out" 2>"$T/err"; rc=$?
check "--evidence of the key directory is refused (2)" bash -c '[ $0 -eq 2 ] && grep -q "^berth: --evidence .* would give the sandbox berth.s host key" "$1"' "$rc" "$T/err"
check "...and no key reached the command" bash -c '! grep -q PRIVATE "$0"' "$T/out"
ln -sfn "$T/cfg" "$T/cfg-link"
"$B" run --evidence "$T/cfg-link" -- true 2>"$T/err"; rc=$?
check "--evidence through a symlink to the config directory is refused (2)" [ "$rc" -eq 2 ]
"$B" run --evidence "$A" -- true 2>"$T/err"; rc=$?
check "--evidence of the audit directory is refused (2)" bash -c '[ $0 -eq 2 ] && grep -q "would give the sandbox the audit log" "$1"' "$rc" "$T/err"
check "...and nothing was recorded for the refused runs" grep -q "^intact: 8 records" <<<"$(verify_out)"
fds=$("$B" run -- sh -c 'ls -l /proc/self/fd/ | tail -n +2' 2>/dev/null)
check "no file descriptor of the log, head, lock or key reaches the sandbox ($(wc -l <<<"$fds") fds)" \
	bash -c '[ -n "$0" ] && ! grep -qE "audit|head|lock|keys|\.jsonl" <<<"$0"' "$fds"

# Nor berth's other directories: the rules and profiles the next berth obeys
# (writable mounts), the run records, every session's or app's state at once,
# and the control sockets (a socket is connected to through a read-only
# mount too).  A session's or app's own part stays mountable.
S=$T/state R=$T/rt
mkdir -p "$T/cfg/berth/profiles" "$S/berth/runs" "$S/berth/sessions/one" "$S/berth/apps" "$R/berth" "$T/ws"
chmod 700 "$R" "$R/berth"
before=$(verify_out)
refused() { # refused DESC WHAT ARGS...: exit 2 naming WHAT, the command never ran
	local desc=$1 what=$2
	shift 2
	rm -f "$T/ws/ran"
	XDG_STATE_HOME=$S XDG_RUNTIME_DIR=$R "$B" run --yes "$@" -- touch /workspace/ran 2>"$T/err"
	local rc=$?
	check "$desc: refused (2), naming $what" bash -c '[ $0 -eq 2 ] && grep -qF "would give the sandbox $1" "$2"' "$rc" "$what" "$T/err"
	check "$desc: the command did not run" [ ! -e "$T/ws/ran" ]
}
cd "$T/ws" || exit 1
refused "--rw of the profiles" "berth's rules files and profiles" --rw "$T/cfg/berth/profiles:/p"
refused "--rw of the config home (the key is named first)" "berth's host key" --rw "$T/cfg:/c"
refused "--ro of the run records" "berth's run records" --ro "$S/berth/runs:/r"
refused "--rw of every session" "every agent session's files" --rw "$S/berth/sessions:/s"
refused "--ro of every app's state" "every resident app's state" --ro "$S/berth/apps:/a"
refused "--ro of the runtime directory" "the control sockets of berth's sessions" --ro "$R/berth:/rt"
check "...and nothing was recorded for those" [ "$(verify_out)" = "$before" ]
XDG_STATE_HOME=$S XDG_RUNTIME_DIR=$R "$B" run --ro "$T/cfg/berth/profiles:/p" -- true 2>"$T/err"
check "--ro of the profiles runs (0): read-only, they are not secret" [ $? -eq 0 ]
XDG_STATE_HOME=$S XDG_RUNTIME_DIR=$R "$B" run --yes --rw "$S/berth/sessions/one:/one" -- true 2>"$T/err"
check "--rw of one session's own directory runs (0)" [ $? -eq 0 ]
cd - >/dev/null || exit 1

# --- tamper detection ---
tamper() { # tamper NAME: a fresh log of 3 runs (12 records) to damage
	fresh "$1"
	for i in 1 2 3; do "$B" run -- true || return 1; done
}
tamper edit
python3 - "$(logf)" <<'PY'
import sys
p=sys.argv[1]; b=bytearray(open(p,'rb').read())
i=b.index(b'"status":0'); b[i+9]=ord('1'); open(p,'wb').write(b)
PY
expect_broken "edited byte detected" "hash does not match"
if [ -n "$cv" ]; then
	out=$(python3 "$cv" "$A" "$T/cfg/berth/keys/host-ed25519.pub.pem"); rc=$?
	check "contrib/audit-verify.py finds the edited byte too" bash -c '[ $0 -eq 1 ] && grep -q "^BROKEN at record 4 .*hash does not match" <<<"$1"' "$rc" "$out"
fi
tamper delete
sed -i 5d "$(logf)"
expect_broken "deleted record detected" "seq 6 where 5 was expected"
tamper reorder
python3 - "$(logf)" <<'PY'
import sys
p=sys.argv[1]; l=open(p).readlines(); l[3],l[4]=l[4],l[3]; open(p,'w').writelines(l)
PY
expect_broken "reordered records detected" "seq 5 where 4 was expected"
tamper truncate
sed -i '$d' "$(logf)"
expect_broken "truncated tail detected" "records were removed from the tail"
"$B" run -- touch ran 2>"$T/err"; rc=$?
check "berth run refuses to extend a truncated log (125)" [ "$rc" -eq 125 ]
check "...and the command did not run" [ ! -e "$T/ws/ran" ]
check "...and says why" grep -q "signed head names record 12" "$T/err"
tamper replace
cp "$(logf)" "$T/orig"
mv "$A" "$T/audit-a"
for i in 1 2 3; do "$B" run -- sh -c 'exit 1'; done
cp "$(logf)" "$T/other"; rm -rf "$A"; mv "$T/audit-a" "$A"
cp "$T/other" "$(logf)"
expect_broken "replaced file (same length, other content) detected" "differs from the signed head: the log was replaced"
tamper forge
python3 - "$A/head" <<'PY'
import sys
p=sys.argv[1]; b=bytearray(open(p,'rb').read())
for s in (0,512):
    i=b.find(b'"seq":12',s,s+512)
    if i>=0: b[i+7]=ord('1')
open(p,'wb').write(b)
PY
expect_broken "forged head (seq changed) detected" "forged or damaged: the signature over seq 11 does not verify"
# berth run accepts a head slot that is byte for byte the signature its own
# key makes (Ed25519 is deterministic) and verifies any other: one bit of
# either slot's signature changed must still stop the run.
for which in newer older; do
	tamper "sigbit-$which"
	python3 - "$A/head" "$which" <<'PY'
import json, sys
p, which = sys.argv[1], sys.argv[2]
b = bytearray(open(p, 'rb').read())
seqs = [json.loads(b[s:s+512].decode().strip())["seq"] for s in (0, 512)]
s = (0, 512)[seqs.index(max(seqs) if which == "newer" else min(seqs))]
i = b.index(b'"sig":"', s, s + 512) + 7 + 127
b[i] = ord('0') if b[i] != ord('0') else ord('1')
open(p, 'wb').write(b)
PY
	"$B" run -- touch ran 2>"$T/err"; rc=$?
	check "one bit of the $which head slot's signature changed: berth run refuses (125)" [ "$rc" -eq 125 ]
	check "...the command did not run" [ ! -e "$T/ws/ran" ]
	check "...and says the head does not verify" grep -q "forged or damaged: the signature over seq .* does not verify" "$T/err"
done
tamper otherkey
mv "$T/cfg" "$T/cfg-real"
"$B" run -- touch ran 2>"$T/err"; rc=$?
check "a head signed by another key: berth run refuses (125)" [ "$rc" -eq 125 ]
check "...the command did not run" [ ! -e "$T/ws/ran" ]
check "...and says another key signed the log, with the way out" \
	bash -c 'grep -q "forged or damaged: .*made by another key" "$0" && grep -q "hint: .*XDG_CONFIG_HOME.*BERTH_AUDIT_DIR" "$0"' "$T/err"
mv "$T/cfg" "$T/cfg-other"; mv "$T/cfg-real" "$T/cfg"
out=$("$B" audit verify --key "$T/cfg-other/berth/keys/host-ed25519.pub.pem" 2>&1); rc=$?
check "verify --key OTHER.pem: BROKEN, exit 1" bash -c '[ $0 -eq 1 ] && grep -q "does not verify with the host key" <<<"$1"' "$rc" "$out"
out=$("$B" audit verify --key "$T/cfg/berth/keys/host-ed25519.pub.pem" 2>&1); rc=$?
check "verify --key RIGHT.pem: intact" bash -c '[ $0 -eq 0 ] && grep -q "^intact: 12 records" <<<"$1"' "$rc" "$out"
"$B" audit verify --key /nonexistent.pem >/dev/null 2>&1; rc=$?
check "verify --key missing file: exit 2" [ "$rc" -eq 2 ]
tamper deletehead
rm "$A/head"
expect_broken "deleted head detected" "no signed head"
# Anything but a regular file in the place of a log file, the head or the
# lock (a FIFO blocked every reader for ever, waiting for a writer): readers
# fail with 125 at once, writers refuse the run.
for what in log head lock; do
	tamper "fifo-$what"
	case $what in log) f=$A/audit-0000000000000099.jsonl ;; *) f=$A/$what; rm "$f" ;; esac
	mkfifo -m 600 "$f"
	out=$(timeout 10 "$B" audit verify 2>&1); rc=$?
	check "a FIFO as the $what: verify exits 125 at once" [ "$rc" -eq 125 ]
	check "...and names it" grep -qF "\`$f\` is not a regular file" <<<"$out"
	timeout 10 "$B" audit list >/dev/null 2>&1; rc=$?
	want=125; [ "$what" = head ] && want=0 # list does not read the head
	check "a FIFO as the $what: audit list exits $want at once" [ "$rc" -eq "$want" ]
	timeout 10 "$B" run -- touch ran 2>"$T/err"; rc=$?
	check "a FIFO as the $what: berth run refuses (125)" [ "$rc" -eq 125 ]
	check "...the command did not run" [ ! -e "$T/ws/ran" ]
	check "...and says why" grep -qF "\`$f\` is not a regular file" "$T/err"
done

# --- crash: torn last line, head behind the log ---
fresh torn
"$B" run -- true
printf '{"actor":"uid:0","hash":"abc' >>"$(logf)"
expect_broken "torn line reported by verify" "torn last line of 28 bytes"
"$B" run -- true 2>"$T/err"; rc=$?
check "next run proceeds after a crash (0)" [ "$rc" -eq 0 ]
check "...and reports the repair" grep -q "was torn (28 bytes at offset" "$T/err"
out=$(verify_out)
check "verify intact after the recovery record" grep -q "^intact: 9 records" <<<"$out"
check "verify names the recovery" grep -q "recovered at record 5 .*torn last line" <<<"$out"
fresh headlag
"$B" run -- true; cp "$A/head" "$T/head.old"; "$B" run -- true
cp "$T/head.old" "$A/head"
expect_broken "head behind the log reported" "records 5..8 are not covered by the signed head"
"$B" audit verify >/dev/null 2>&1
"$W" "$A" 1 1 >/dev/null 2>"$T/err"
check "next write seals a head behind the log" grep -q "written after the last signed head" "$T/err"
check "...verify intact: the unsigned records 5..8 are not in the chain" grep -q "^intact: 6 records" <<<"$(verify_out)"
check "...they are in a quarantine file, byte for byte" bash -c '[ "$(wc -l <"$0"/quarantine-00000000000000000005-00000000000000000008.jsonl)" -eq 4 ]' "$A"
# Lines appended by hand, with a correct hash chain but no head over them, are not laundered
# into the chain by the next write: they go to the quarantine too.
fresh launder
"$B" run -- true
python3 - "$(logf)" <<'PY'
import sys, json, hashlib
p = sys.argv[1]; last = json.loads(open(p).read().splitlines()[-1])
rec = {"actor": "uid:0", "kind": "note", "payload": {"note": "FORGED BY HAND"}, "prev": last["hash"],
       "run_id": last["run_id"], "seq": last["seq"] + 1, "ts": last["ts"]}
canon = json.dumps(rec, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
rec["hash"] = hashlib.sha256(canon.encode()).hexdigest()
open(p, "a").write(json.dumps(rec, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n")
PY
"$B" run -- true 2>"$T/err"
check "a hand-appended record: the next run moves it out" grep -q "moved to .quarantine-" "$T/err"
check "...and verify is intact without it" bash -c '"$0" audit verify | grep -q "^intact: 9 records" && ! "$0" audit list | grep -q "FORGED BY HAND"' "$B"
# Real kill -9 in the middle of appending 256 KiB records.
fresh kill9
killed=0
for i in 1 2 3 4 5 6; do
	"$W" "$A" 100000 2 100 64 >/dev/null 2>&1 &
	pid=$!
	sleep 0.$((RANDOM % 4 + 2))
	kill -9 "$pid" 2>/dev/null && killed=$((killed + 1))
	wait "$pid" 2>/dev/null
	"$W" "$A" 1 1 >/dev/null 2>>"$T/recovered" || { bad "writer after kill -9 #$i failed"; break; }
done
check "6 writers killed with SIGKILL mid-append" [ "$killed" -eq 6 ]
out=$(verify_out)
check "log verifies intact after 6 kill -9s" grep -q "^intact:" <<<"$out"
# Each recovery is a line "audit_writer: recovered: ..."; as #-comments (a
# bare line in the middle of the TAP stream is not TAP).
echo "# kill -9: $(grep -c recovered "$T/recovered") recoveries"
head -n 3 "$T/recovered" | cut -c1-300 | sed 's/^/#   /'

# --- fail closed ---
# A writer stopped while holding the lock (here: flock(1) holding it) must
# not hang every later run: the wait is bounded and the run refused.
fresh stuck
"$B" run -- true
flock "$A/lock" sleep 30 &
holder=$!
sleep 0.3
t0=$(date +%s%N)
BERTH_AUDIT_LOCK_TIMEOUT_MS=500 "$B" run -- touch ran 2>"$T/err"; rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
pkill -P "$holder" 2>/dev/null; kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
check "a held lock: berth run refuses (125) after the bounded wait (${ms} ms)" bash -c '[ $0 -eq 125 ] && [ $1 -lt 10000 ]' "$rc" "$ms"
check "...the command did not run" [ ! -e "$T/ws/ran" ]
check "...and says who holds what" grep -q "another berth process holds it" "$T/err"
"$B" run -- true; rc=$?
check "...and runs again once the lock is free" [ "$rc" -eq 0 ]
# the wait's own bounds: strtol(3) took `abc` and `-5` for no wait and
# 99999999999999999999 for LONG_MAX ms (a held lock hung the run for ages)
for v in abc -5 ' 50' 1e3 99999999999999999999 3600001 ''; do
	BERTH_AUDIT_LOCK_TIMEOUT_MS=$v "$B" run -- touch ran 2>"$T/err"; rc=$?
	check "BERTH_AUDIT_LOCK_TIMEOUT_MS='$v': refused (125), naming the value and the range, nothing ran" \
		bash -c '[ $0 -eq 125 ] && [ ! -e "$1" ] && [ "$(grep -v "^berth: limits: " "$2" | head -n 1)" = "berth: invalid BERTH_AUDIT_LOCK_TIMEOUT_MS \`$3\`: expected 0 to 3600000 (milliseconds)" ]' \
		"$rc" "$T/ws/ran" "$T/err" "$v"
done
BERTH_AUDIT_LOCK_TIMEOUT_MS=3600000 "$B" run -- true; rc=$?
check "BERTH_AUDIT_LOCK_TIMEOUT_MS=3600000 (the maximum): runs" [ "$rc" -eq 0 ]
fresh efbig
"$B" run -- true
before=$(sha256sum "$(logf)" | cut -d' ' -f1)
size=$(stat -c %s "$(logf)")
# RLIMIT_FSIZE in 1 KiB blocks: the next records fit only partly (EFBIG).
(trap '' XFSZ; ulimit -f $(( (size + 1023) / 1024 )); exec "$B" run -- touch ran) 2>"$T/err"; rc=$?
check "EFBIG: berth run refuses (125)" [ "$rc" -eq 125 ]
check "EFBIG: the command did not run" [ ! -e "$T/ws/ran" ]
check "EFBIG: the message names the cause" grep -q "cannot write the audit log.*File too large" "$T/err"
check "EFBIG: nothing half-written (log unchanged)" [ "$(sha256sum "$(logf)" | cut -d' ' -f1)" = "$before" ]
check "EFBIG: verify intact, 4 records" grep -q "^intact: 4 records" <<<"$(verify_out)"
if [ "$(id -u)" -eq 0 ]; then
	fresh enospc
	mnt=$T/small; mkdir -p "$mnt"
	mount -t tmpfs -o size=128k,mode=0700 tmpfs "$mnt"
	export BERTH_AUDIT_DIR=$mnt/audit; A=$BERTH_AUDIT_DIR
	"$B" run -- true
	dd if=/dev/zero of="$mnt/fill" bs=1k count=1000 2>/dev/null
	before=$(sha256sum "$(logf)" | cut -d' ' -f1)
	# 20 arguments of 300 bytes: records larger than a page, so the
	# full tmpfs must refuse them.
	long=$(printf 'x%.0s' $(seq 300))
	"$B" run -- touch ran $(for i in $(seq 20); do echo "$long"; done) 2>"$T/err"; rc=$?
	check "ENOSPC: berth run refuses (125)" [ "$rc" -eq 125 ]
	check "ENOSPC: the command did not run" [ ! -e "$T/ws/ran" ]
	check "ENOSPC: the message names the cause" grep -q "No space left on device" "$T/err"
	check "ENOSPC: nothing half-written" [ "$(sha256sum "$(logf)" | cut -d' ' -f1)" = "$before" ]
	rm "$mnt/fill"
	"$B" run -- true; rc=$?
	check "ENOSPC: runs again once there is space" [ "$rc" -eq 0 ]
	check "ENOSPC: verify intact, 8 records" grep -q "^intact: 8 records" <<<"$(verify_out)"
	umount "$mnt"; mnt=
elif unshare -Urm true 2>/dev/null; then
	# Unprivileged: a tmpfs in a user+mount namespace, written by the
	# core library through tests/audit_writer (berth run would take the
	# namespace's uid 0 for root).
	fresh enospc
	out=$(unshare -Urm bash -c '
		set -u; m=$1/small; mkdir -p "$m"; mount -t tmpfs -o size=128k,mode=0700 tmpfs "$m" || exit 9
		"$2" "$m/audit" 1 1 >/dev/null || exit 8
		dd if=/dev/zero of="$m/fill" bs=1k count=1000 2>/dev/null
		before=$(sha256sum "$m"/audit/audit-*.jsonl)
		"$2" "$m/audit" 1 1 100 3 2>&1; echo "rc=$?"
		[ "$(sha256sum "$m"/audit/audit-*.jsonl)" = "$before" ] && echo unchanged
		"$3" audit verify --dir "$m/audit"' _ "$T" "$W" "$B" 2>&1)
	check "ENOSPC (user namespace tmpfs): the append fails with the cause" grep -q "No space left on device" <<<"$out"
	check "ENOSPC: the writer exits 1" grep -q "^rc=1$" <<<"$out"
	check "ENOSPC: nothing half-written" grep -q "^unchanged$" <<<"$out"
	check "ENOSPC: verify intact, 1 record" grep -q "^intact: 1 records" <<<"$out"
else
	echo "# ENOSPC on a small tmpfs needs root or user namespaces; EFBIG above covers the fail-closed path"
fi
fresh unwritable
if [ "$(id -u)" -ne 0 ]; then   # root writes through the mode bits
	mkdir -p "$A"; chmod 0500 "$A"
	"$B" run -- touch ran 2>"$T/err"; rc=$?
	check "unwritable audit dir: berth run refuses (125)" [ "$rc" -eq 125 ]
	check "unwritable audit dir: the command did not run" [ ! -e "$T/ws/ran" ]
	chmod 0700 "$A"
fi
"$B" run -- touch ran; rc=$?
check "control: a run that may write creates the file" bash -c '[ $0 -eq 0 ] && [ -e ran ]' "$rc"
mkdir -p "$T/wide"; chmod 0755 "$T/wide"
BERTH_AUDIT_DIR=$T/wide "$B" run -- true 2>"$T/err"; rc=$?
check "group/other-readable audit dir refused (125) with a hint" bash -c '[ $0 -eq 125 ] && grep -q "chmod 700" "$1"' "$rc" "$T/err"

# --- concurrency, long lines, rotation ---
fresh concurrent
export BERTH_AUDIT_DIR=$shm/c; A=$BERTH_AUDIT_DIR
pids=()
for i in 1 2 3 4 5 6 7 8; do "$W" "$A" 1000 1 >/dev/null 2>>"$base/writer.err" & pids+=($!); done
okw=0; for p in "${pids[@]}"; do wait "$p" && okw=$((okw + 1)); done
check "8 writer processes x 1000 records all succeeded" [ "$okw" -eq 8 ]
check "8 x 1000: verify intact, 8000 records" grep -q "^intact: 8000 records" <<<"$(verify_out)"
# A live writer's records are never another writer's crash to repair.
norecovery() { # norecovery WHAT: no writer so far reported a recovery
	if grep -q "recovered" "$base/writer.err" 2>/dev/null; then
		bad "$1: no writer recovered anything ($(grep -m1 recovered "$base/writer.err" | cut -c1-200))"
	else
		ok "$1: no writer recovered anything"
	fi
}
norecovery "8 x 1000"
check "8 x 1000: no quarantine file" bash -c '! ls "$0" | grep -q quarantine' "$A"
# A log over 1 MiB is verified in parallel chunks: damage far from the start
# must still be reported at the right record and line.
cp -a "$A" "$shm/c-copy"
A=$shm/c-copy; export BERTH_AUDIT_DIR=$A
python3 - "$(logf)" <<'PY'
import sys
p=sys.argv[1]; l=open(p,'rb').readlines()
l[5999]=l[5999].replace(b'"filler":"x',b'"filler":"y',1); open(p,'wb').writelines(l)
PY
expect_broken "large log: edited record 6000 found at line 6000" "^BROKEN at record 6000 (.*audit-0000000000000001.jsonl:6000): hash does not match"
cp "$shm/c/$(basename "$(logf)")" "$(logf)"
check "large log: restored copy intact" grep -q "^intact: 8000 records" <<<"$(verify_out)"
mid=$(( $(wc -l <"$(logf)") / 2 + 1 ))
sed -i "${mid}d" "$(logf)"
expect_broken "large log: record deleted at the middle ($mid)" "^BROKEN at record $mid (.*:$mid): seq $((mid + 1)) where $mid was expected"
cp "$shm/c/$(basename "$(logf)")" "$(logf)"
python3 - "$(logf)" 7000 <<'PY'
import sys
p=sys.argv[1]; i=int(sys.argv[2]); l=open(p,'rb').readlines(); l[i-1],l[i]=l[i],l[i-1]; open(p,'wb').writelines(l)
PY
expect_broken "large log: records 7000/7001 swapped" "^BROKEN at record 7000 (.*:7000): seq 7001 where 7000 was expected"
export BERTH_AUDIT_DIR=$shm/c; A=$BERTH_AUDIT_DIR
pids=()
for i in 1 2 3 4; do "$W" "$A" 250 8 >/dev/null 2>>"$base/writer.err" & pids+=($!); done
okw=0; for p in "${pids[@]}"; do wait "$p" && okw=$((okw + 1)); done
check "4 processes x 8 threads x 250 (group commit) intact, 16000 records" \
	bash -c '[ $0 -eq 4 ] && "$1" audit verify | grep -q "^intact: 16000 records"' "$okw" "$B"
norecovery "4 x 8 x 250"
# Rotation by one process while others append: the chain still holds.
export BERTH_AUDIT_DIR=$shm/rot; A=$BERTH_AUDIT_DIR
pids=()
for i in 1 2 3 4 5 6 7 8; do BERTH_AUDIT_ROTATE_BYTES=20000 "$W" "$A" 250 2 >/dev/null 2>>"$base/writer.err" & pids+=($!); done
okw=0; for p in "${pids[@]}"; do wait "$p" && okw=$((okw + 1)); done
nf=$(ls "$A"/audit-*.jsonl | wc -l)
check "8 processes x 2 threads rotating every 20 kB ($nf files): intact, 4000 records" \
	bash -c '[ $0 -eq 8 ] && [ $1 -gt 20 ] && "$2" audit verify | grep -q "^intact: 4000 records"' "$okw" "$nf" "$B"
norecovery "8 x 2 rotating"
check "8 x 2 rotating: no quarantine file" bash -c '! ls "$0" | grep -q quarantine' "$A"
fresh long
"$W" "$A" 2 1 100 300 >/dev/null 2>>"$base/writer.err"   # 300 strings of 4000 bytes: lines of 1.2 MB
len=$("$B" audit --json -n 1 | wc -c)
check "a 1.2 MB line reads back whole ($len bytes)" [ "$len" -gt 1200000 ]
check "long lines verify intact" grep -q "^intact: 2 records" <<<"$(verify_out)"
fresh rotate
export BERTH_AUDIT_ROTATE_BYTES=2000
for i in 1 2 3 4 5; do "$B" run -- true; done
nf=$(ls "$A"/audit-*.jsonl | wc -l)
check "rotation at 2000 bytes made several files ($nf)" [ "$nf" -ge 3 ]
check "the chain verifies across rotated files, 20 records" grep -q "^intact: 20 records" <<<"$(verify_out)"
# A torn line in a file that is due for rotation is sealed in that file.
printf '{"actor":"torn' >>"$(logf)"
BERTH_AUDIT_ROTATE_BYTES=1 "$B" run -- true 2>/dev/null
check "a torn line at rotation time is sealed, then the log rotates" grep -q "^intact: 25 records" <<<"$(verify_out)"
unset BERTH_AUDIT_ROTATE_BYTES
# the rotation size's own bounds, 1 to 1 TiB: strtoull(3) took ` 5` and
# `+5`, `0` for "rotate always", and 99999999999999999999 for ULLONG_MAX
# (a log that never rotates)
n0=$(cat "$A"/audit-*.jsonl | wc -l)
while IFS='|' read -r v why; do
	BERTH_AUDIT_ROTATE_BYTES=$v "$B" run -- touch ran 2>"$T/err"; rc=$?
	check "BERTH_AUDIT_ROTATE_BYTES='$v': refused (125) as $why, naming the value and the range, nothing ran" \
		bash -c '[ $0 -eq 125 ] && [ ! -e "$1" ] && [ "$(grep -v "^berth: limits: " "$2" | head -n 2)" = "berth: invalid BERTH_AUDIT_ROTATE_BYTES \`$3\`: $4, expected 1 to 1099511627776
berth: hint: write a whole number in decimal digits, such as \`64\`" ]' \
		"$rc" "$T/ws/ran" "$T/err" "$v" "$why"
done <<'EOF_ROT'
abc|not a whole number
-5|not a whole number
+5|not a whole number
 50|not a whole number
1e3|not a whole number
0|zero
99999999999999999999|too large
1099511627777|too large
EOF_ROT
check "...and the refusals wrote no record" [ "$(cat "$A"/audit-*.jsonl | wc -l)" -eq "$n0" ]
BERTH_AUDIT_ROTATE_BYTES=1099511627776 "$B" run -- true; rc=$?
check "BERTH_AUDIT_ROTATE_BYTES=1099511627776 (the maximum): runs" [ "$rc" -eq 0 ]
rm "$(ls "$A"/audit-*.jsonl | sed -n 2p)"
expect_broken "a deleted middle file is detected" "where .* was expected"

# --- secrets ---
fresh secrets
sec=s3cr3t-$RANDOM-value-$RANDOM
"$B" run --env API_TOKEN="$sec" -- sh -c "echo $sec >/dev/null"
AUDIT_WRITER_SECRET=$sec "$W" "$A" 3 1 >/dev/null 2>>"$base/writer.err"
check "a declared secret appears in no file berth wrote" bash -c '! grep -rqF "$0" "$1" "$2"' "$sec" "$A" "$T/cfg"
check "...but the records are there (argv with [secret])" bash -c '"$0" audit --kind run.start --json | grep -qF "echo [secret]"' "$B"
check "...and the log verifies" grep -q "^intact: 7 records" <<<"$(verify_out)"

echo "# $pass passed, $fail failed"
[ "$fail" -eq 0 ]
