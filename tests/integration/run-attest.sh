#!/usr/bin/env bash
# Attestation, evidence, --forensic and secrets, end to end (docs/attest.md,
# docs/security.md): the measurement from inside, the verdict with each kernel
# feature forced off, signed attestations and tampering, evidence copies equal
# to sha256sum of the source and mounted read-only/noexec, and secret values
# absent from every file berth writes and from /proc of every berth process
# but the command.
#
# usage: run-attest.sh /path/to/berth [stage-dir]   TAP-like output, a final
# count; exit 1 on any failure.  Runs as root or as any user.
set -u
export LC_ALL=C
unset BERTH_TEST_FORCE_OFF BERTH_AUDIT_DIR
[ $# -ge 1 ] || { echo "usage: $0 /path/to/berth [stage-dir]" >&2; exit 2; }
BERTH=$(readlink -f -- "$1")
REPO=$(cd "$(dirname "$0")/../.." && pwd)
T=0 FAILS=0
pass() { T=$((T + 1)); echo "ok $T - $1"; }
fail() { T=$((T + 1)); FAILS=$((FAILS + 1)); echo "not ok $T - $1 # $2"; shift 2; local l; for l in "$@"; do printf '%s\n' "$l" | head -n 8 | sed 's/^/#   /'; done; }
eq() { if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'" "stderr: $ERR"; fi; }
has() { if printf '%s' "$2" | grep -qF -- "$3"; then pass "$1"; else fail "$1" "'$3' not found" "in: $2"; fi; }
hasnt() { if printf '%s' "$2" | grep -qF -- "$3"; then fail "$1" "'$3' found" "in: $2"; else pass "$1"; fi; }

TOP=$(mktemp -d /tmp/berth-attest.XXXXXX) || exit 1
chmod 755 "$TOP"
export XDG_STATE_HOME=$TOP/state XDG_CONFIG_HOME=$TOP/config
WS=$TOP/ws; mkdir "$WS"
BGPIDS=()
cleanup() { local p; for p in "${BGPIDS[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; chmod -R u+rwX "$TOP" 2>/dev/null; rm -rf "$TOP"; }
trap cleanup EXIT
cd "$WS" || exit 1
run() { "$BERTH" run "$@" </dev/null >"$TOP/out" 2>"$TOP/err"; RC=$?; OUT=$(cat "$TOP/out"); ERR=$(cat "$TOP/err"); }
RUNS=$XDG_STATE_HOME/berth/runs
last() { cat "$RUNS/last" 2>/dev/null; }
jq_() { python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d=d[int(k)] if isinstance(d,list) else d.get(k) if isinstance(d,dict) else None
print(json.dumps(d) if not isinstance(d,str) else d)' "$@" 2>/dev/null; }
ROOT=0; [ "$(id -u)" -eq 0 ] && ROOT=1

# ---------------------------------------------------------------- 1. measurement
run -- sh -c 'grep -E "^(Seccomp|Seccomp_filters|NoNewPrivs|CapEff):" /proc/self/status | tr -s "\t " " "'
eq "measure: berth run -- sh exits 0" "$RC" 0
ID=$(last); E=$RUNS/$ID/enforced.json
[ -f "$E" ] && pass "measure: runs/$ID/enforced.json written" || fail "measure: enforced.json written" "missing" "$ERR"
eq "measure: run dir is 0700" "$(stat -c %a "$RUNS/$ID")" 700
eq "measure: enforced.json is 0600" "$(stat -c %a "$E")" 600
eq "measure: measured from inside" "$(jq_ "$E" measured)" true
for ns in user mnt pid ipc uts net cgroup; do
	eq "measure: $ns namespace separate" "$(jq_ "$E" namespaces.$ns)" separate
done
# What the command itself then sees in /proc/self/status agrees with the record.
has "measure: seccomp mode agrees with the command's own view" "$OUT" "Seccomp: $(jq_ "$E" seccomp.mode)"
has "measure: filter count agrees" "$OUT" "Seccomp_filters: $(jq_ "$E" seccomp.filters)"
has "measure: NoNewPrivs agrees" "$OUT" "NoNewPrivs: $(jq_ "$E" no_new_privs)"
eq "measure: effective capabilities empty" "$(jq_ "$E" capabilities.effective)" 0000000000000000
eq "measure: bounding set empty" "$(jq_ "$E" capabilities.bounding)" 0000000000000000
eq "measure: seccomp filter digest recorded" "$(jq_ "$E" seccomp.filter_sha256 | grep -cE '^[0-9a-f]{64}$')" 1
ABI=$(jq_ "$E" landlock.abi)
eq "measure: landlock probe refused with EACCES (a ruleset is in force)" "$(jq_ "$E" landlock.probe)" EACCES
if [ "$ABI" -ge 6 ]; then eq "measure: landlock full (ABI $ABI)" "$(jq_ "$E" landlock.status)" full
else eq "measure: landlock partial (ABI $ABI < 6)" "$(jq_ "$E" landlock.status)" partial; fi
eq "measure: nofile rlimit read back" "$(jq_ "$E" limits.rlimits.nofile)" 8192
MODE=$(jq_ "$E" limits.mode)
case $MODE in
cgroup1|cgroup2)
	eq "measure: memory.max read back ($MODE)" "$(jq_ "$E" limits.memory)" 8589934592
	eq "measure: memory_enforced ($MODE)" "$(jq_ "$E" limits.memory_enforced)" true
	eq "measure: pids.max read back ($MODE)" "$(jq_ "$E" limits.pids)" 512
	if [ "$ABI" -ge 6 ]; then eq "verdict: ENFORCED by default" "$(jq_ "$E" verdict)" ENFORCED; fi ;;
rlimits)
	eq "measure: RLIMIT_NPROC read back (rlimits)" "$(jq_ "$E" limits.rlimits.nproc)" 512
	eq "measure: memory not enforced with rlimits" "$(jq_ "$E" limits.memory_enforced)" false
	eq "verdict: PARTIAL with rlimits (no memory limit)" "$(jq_ "$E" verdict)" PARTIAL
	has "verdict: the shortfall says so" "$(jq_ "$E" shortfalls)" "memory: not enforced" ;;
*) fail "measure: limits mode" "unexpected '$MODE'" ;;
esac

# ---------------------------------------------------------------- 2. verdict matrix
FEATS="landlock seccomp cgroup userns"
[ $ROOT -eq 1 ] && FEATS="$FEATS idmap"
for f in $FEATS; do
	BERTH_TEST_FORCE_OFF=$f run --allow-degraded --yes -- true
	eq "matrix: $f forced off, --allow-degraded runs" "$RC" 0
	V=$(jq_ "$RUNS/$(last)/enforced.json" verdict)
	case $V in PARTIAL|NOT_ENFORCED) pass "matrix: $f forced off attests $V, not ENFORCED" ;;
	*) fail "matrix: $f forced off is not ENFORCED" "verdict '$V'" ;; esac
	S=$(jq_ "$RUNS/$(last)/enforced.json" shortfalls)
	case $f in
	landlock) has "matrix: landlock shortfall named" "$S" "landlock: none" ;;
	seccomp) has "matrix: seccomp shortfall named" "$S" "seccomp: mode 0" ;;
	cgroup) has "matrix: cgroup shortfall named" "$S" "memory: not enforced" ;;
	userns) has "matrix: namespace shortfall named" "$S" "mnt namespace: shared" ;;
	idmap) has "matrix: idmap shortfall named" "$S" "idmapped" ;;
	esac
done
BERTH_TEST_FORCE_OFF=landlock,seccomp run --allow-degraded --yes -- true
V=$(jq_ "$RUNS/$(last)/enforced.json" verdict)
eq "matrix: landlock+seccomp forced off is PARTIAL (namespaces still confine)" "$V" PARTIAL

# ---------------------------------------------------------------- 3. attest
run -- true
ID=$(last)
"$BERTH" attest --last --out "$TOP/att.json" 2>"$TOP/err"; RC=$?; ERR=$(cat "$TOP/err")
eq "attest: --last --out exits 0" "$RC" 0
eq "attest: names the run" "$(jq_ "$TOP/att.json" run_id)" "$ID"
eq "attest: host kernel" "$(jq_ "$TOP/att.json" host.kernel)" "$(uname -r)"
eq "attest: policy digest" "$(jq_ "$TOP/att.json" policy_digests.0 | grep -cE '^sha256:[0-9a-f]{64}$')" 1
HEAD=$("$BERTH" audit verify | sed -n 's/^intact: .* head //p')
eq "attest: audit head hash is the log's" "$(jq_ "$TOP/att.json" audit.head_hash)" "$HEAD"
FIRST=$(jq_ "$TOP/att.json" audit.first_seq); LASTS=$(jq_ "$TOP/att.json" audit.last_seq)
SEQS=$("$BERTH" audit list --run "$ID" --json | python3 -c 'import json,sys; s=[json.loads(l)["seq"] for l in sys.stdin if l.strip()]; print(min(s), max(s))')
eq "attest: audit range is the run's records" "$FIRST $LASTS" "$SEQS"
"$BERTH" attest "$ID" >"$TOP/att2.json"; eq "attest: RUN_ID to stdout exits 0" "$?" 0
# --out a directory, or in a directory that does not exist: bad input (2), before any work, nothing written.
mkdir -p "$TOP/outdir"
"$BERTH" attest --last --out "$TOP/outdir" 2>"$TOP/err"; RC=$?; ERR=$(cat "$TOP/err")
eq "attest: --out DIR exits 2" "$RC" 2
eq "attest: --out DIR says so" "$ERR" "berth: --out \`$TOP/outdir\` is a directory
berth: hint: name the file to write, e.g. \`$TOP/outdir/attestation.json\`"
eq "attest: --out DIR: nothing written in it" "$(ls -A "$TOP/outdir" | wc -l)" 0
"$BERTH" attest --last --out "$TOP/nodir/att.json" 2>"$TOP/err"; RC=$?; ERR=$(cat "$TOP/err")
eq "attest: --out in a missing directory exits 2" "$RC" 2
eq "attest: --out in a missing directory says so" "$ERR" "berth: --out \`$TOP/nodir/att.json\`: its directory does not exist
berth: hint: create the directory first, or name a file in an existing one"
"$BERTH" attest --verify "$TOP/att.json" >"$TOP/out" 2>&1; RC=$?
eq "verify: a fresh record is valid (exit 0)" "$RC" 0
has "verify: says valid" "$(cat "$TOP/out")" "valid: run $ID"
PUB=$XDG_CONFIG_HOME/berth/keys/host-ed25519.pub.pem
"$BERTH" attest --verify "$TOP/att.json" --key "$PUB" >/dev/null 2>&1; eq "verify: with --key the host key (exit 0)" "$?" 0
sed 's/"exit_status": 0/"exit_status": 1/' "$TOP/att.json" >"$TOP/t1.json"
"$BERTH" attest --verify "$TOP/t1.json" >"$TOP/out" 2>&1; RC=$?
eq "verify: an edited field is invalid (exit 1)" "$RC" 1
has "verify: says the signature does not verify" "$(cat "$TOP/out")" "the signature does not verify"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["enforced"]["capabilities"]["effective"]="000001ffffffffff"; json.dump(d,open(sys.argv[2],"w"))' "$TOP/att.json" "$TOP/t2.json"
"$BERTH" attest --verify "$TOP/t2.json" >"$TOP/out" 2>&1; eq "verify: an edited measurement is invalid (exit 1)" "$?" 1
has "verify: the verdict no longer follows" "$(cat "$TOP/out")" "the verdict stated is not the one the measurement gives"
openssl genpkey -algorithm ed25519 -out "$TOP/other.pem" 2>/dev/null && openssl pkey -in "$TOP/other.pem" -pubout -out "$TOP/other.pub.pem" 2>/dev/null
# Malformed documents: invalid (exit 1), never a crash -- every member of a real one removed in turn, and bare shapes.
CRASH=$(python3 - "$BERTH" "$TOP/att.json" <<'PY'
import json, subprocess, sys
berth, doc = sys.argv[1], json.load(open(sys.argv[2]))
def paths(o, p=()):
    if isinstance(o, dict):
        for k in o:
            yield p + (k,)
            yield from paths(o[k], p + (k,))
bad = []
for p in list(paths(doc)):
    d = json.loads(json.dumps(doc)); o = d
    for k in p[:-1]: o = o[k]
    del o[p[-1]]
    r = subprocess.run([berth, "attest", "--verify", "-"], input=json.dumps(d).encode(), capture_output=True)
    if r.returncode != 1: bad.append("/".join(p) + ":" + str(r.returncode))
for t in ("{}", '{"signature":"x"}', '{"enforced":{}}', '{"enforced":[]}', '{"audit":1}', "[]"):
    r = subprocess.run([berth, "attest", "--verify", "-"], input=t.encode(), capture_output=True)
    if r.returncode != 1: bad.append(t + ":" + str(r.returncode))
print(" ".join(bad))
PY
)
eq "verify: a document missing any member, or of the wrong shape, is invalid (exit 1, no crash)" "$CRASH" ""
"$BERTH" attest --verify "$TOP/att.json" --key "$TOP/other.pub.pem" >"$TOP/out" 2>&1; RC=$?
eq "verify: wrong trusted key is invalid (exit 1)" "$RC" 1
has "verify: names the keys" "$(cat "$TOP/out")" "not the trusted key"
echo '{"not": "json' >"$TOP/bad.json"
"$BERTH" attest --verify "$TOP/bad.json" >/dev/null 2>&1; eq "verify: not JSON is exit 2" "$?" 2
"$BERTH" attest --verify "$TOP/att.json" --key "$TOP/nope.pem" >/dev/null 2>&1; eq "verify: unreadable key is exit 2" "$?" 2
"$BERTH" attest 0123456789abcdef >/dev/null 2>"$TOP/err"; RC=$?
eq "attest: unknown run is exit 2" "$RC" 2
has "attest: says which" "$(cat "$TOP/err")" "no run \`0123456789abcdef\`"
"$BERTH" attest ../../etc >/dev/null 2>&1; eq "attest: a path as run id is exit 2" "$?" 2
python3 "$REPO/contrib/verify-attestation.py" "$TOP/att.json" "$PUB" >/dev/null; eq "contrib: python3+openssl says valid (exit 0)" "$?" 0
python3 "$REPO/contrib/verify-attestation.py" "$TOP/t1.json" "$PUB" >/dev/null; eq "contrib: edited field invalid (exit 1)" "$?" 1
python3 "$REPO/contrib/verify-attestation.py" "$TOP/att.json" "$TOP/other.pub.pem" >/dev/null; eq "contrib: wrong key invalid (exit 1)" "$?" 1
# A member given twice (a reader that takes the first would see another verdict): refused by both.
sed 's/^{/{"verdict":"ENFORCED",/' "$TOP/att.json" >"$TOP/dup.json"
python3 "$REPO/contrib/verify-attestation.py" "$TOP/dup.json" "$PUB" >/dev/null 2>&1; eq "contrib: a duplicate member is refused (exit 2)" "$?" 2
"$BERTH" attest --verify "$TOP/dup.json" >/dev/null 2>&1; eq "attest --verify: a duplicate member is refused (exit 2)" "$?" 2
# The run directory is outside the audit log's hash chain: a measurement or an
# exit status edited there is not signed (it was: a PARTIAL run attested ENFORCED).
BERTH_TEST_FORCE_OFF=landlock run --allow-degraded --yes -- true
ID=$(last)
eq "attest: landlock forced off is PARTIAL" "$(jq_ "$RUNS/$ID/enforced.json" verdict)" PARTIAL
python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); d["verdict"]="ENFORCED"; d["shortfalls"]=[]; d["landlock"]["status"]="full"
json.dump(d,open(sys.argv[1],"w"))' "$RUNS/$ID/enforced.json"
"$BERTH" attest "$ID" >"$TOP/forged.json" 2>"$TOP/err"; RC=$?
eq "attest: an edited enforced.json is not signed (exit 125)" "$RC" 125
has "attest: says it differs from the audit trail" "$(cat "$TOP/err")" "\`enforced.json\` of run \`$ID\` differs from its \`enforced\` record in the audit trail"
eq "attest: nothing on stdout" "$(wc -c <"$TOP/forged.json")" 0
run -- sh -c 'exit 3'
ID=$(last)
sed -i 's/"exit_status": 3/"exit_status": 0/' "$RUNS/$ID/run.json"
"$BERTH" attest "$ID" >"$TOP/forged.json" 2>"$TOP/err"; RC=$?
eq "attest: an edited exit status is not signed (exit 125)" "$RC" 125
has "attest: says which record disagrees" "$(cat "$TOP/err")" "gives another exit status than its \`run.stop\` record"
eq "attest: nothing on stdout either" "$(wc -c <"$TOP/forged.json")" 0

# ---------------------------------------------------------------- 4. evidence
EV=$TOP/ev; mkdir -p "$EV/case/sub"
echo hello >"$EV/case/a.txt"
printf '#!/bin/sh\necho pwned\n' >"$EV/case/run.sh"; chmod 755 "$EV/case/run.sh"
head -c 300000 /dev/urandom >"$EV/case/sub/blob.bin"
: >"$EV/case/empty"
ln -s /etc/passwd "$EV/case/link"
mkfifo "$EV/case/fifo"
echo single >"$EV/note.txt"
chmod -R a+rX "$EV"
EXPECT=$(cd "$EV" && find case note.txt -type f -print0 | sort -z | xargs -0 sha256sum)
PY='import errno,os,sys
def t(f):
    try: f(); return "ok"
    except OSError as e: return errno.errorcode[e.errno]
print("write", t(lambda: open("/evidence/case/a.txt","w")))
print("create", t(lambda: open("/evidence/new","w")))
print("mkdir", t(lambda: os.mkdir("/evidence/case/d")))
print("exec", t(lambda: os.execv("/evidence/case/run.sh",["x"])))
print("link", os.path.lexists("/evidence/case/link"), "fifo", os.path.lexists("/evidence/case/fifo"))'
timeout 60 "$BERTH" run --evidence "$EV/case" --evidence "$EV/note.txt" -- sh -c "cd /evidence && find case note.txt -type f -print0 | sort -z | xargs -0 sha256sum; grep ' /evidence ' /proc/self/mountinfo; python3 -c '$PY'" </dev/null >"$TOP/out" 2>"$TOP/err"
RC=$?; OUT=$(cat "$TOP/out"); ERR=$(cat "$TOP/err")
eq "evidence: run exits 0 (a FIFO in the tree does not hang the copy)" "$RC" 0
ID=$(last)
eq "evidence: sha256sum inside /evidence equals sha256sum of the source" "$(printf '%s\n' "$OUT" | grep -E '^[0-9a-f]{64}  ')" "$EXPECT"
MAN=$(python3 -c 'import json,sys
for e in json.load(open(sys.argv[1])):
    if e["type"]=="file": print(e["sha256"]+"  "+e["path"])' "$RUNS/$ID/evidence.json" | sort -k2)
eq "evidence: the manifest equals sha256sum of the source" "$MAN" "$(printf '%s\n' "$EXPECT" | sort -k2)"
has "evidence: manifest records the symlink and its target" "$(cat "$RUNS/$ID/evidence.json")" '"target": "/etc/passwd"'
has "evidence: manifest records the fifo" "$(cat "$RUNS/$ID/evidence.json")" '"type": "fifo"'
MI=$(printf '%s\n' "$OUT" | grep ' /evidence ')
for o in ro nosuid nodev noexec; do has "evidence: /evidence is mounted $o" "$(echo "$MI" | awk '{print $6}' | tr , '\n' | grep -x "$o")" "$o"; done
has "evidence: writing a copy fails with EROFS" "$OUT" "write EROFS"
has "evidence: creating a file fails with EROFS" "$OUT" "create EROFS"
has "evidence: mkdir fails with EROFS" "$OUT" "mkdir EROFS"
has "evidence: executing a copy fails with EACCES (noexec, and Landlock grants no execute)" "$OUT" "exec EACCES"
has "evidence: symlinks and FIFOs are not copied" "$OUT" "link False fifo False"
[ -e "$RUNS/$ID/evidence" ] && fail "evidence: the copy is gone after the run" "still there" || pass "evidence: the copy is gone after the run"
# ...also when berth itself is killed with SIGKILL mid-run (its janitor removes it).
"$BERTH" run --evidence "$EV/note.txt" -- sh -c 'touch /workspace/ev-started; sleep 60' </dev/null >/dev/null 2>&1 &
KP=$!
for _ in $(seq 100); do [ -e "$WS/ev-started" ] && break; sleep 0.05; done
KID=$(cat "$RUNS/last" 2>/dev/null)
[ -d "$RUNS/$KID/evidence" ] && pass "evidence: the copy exists while the run goes on" || fail "evidence: the copy exists while the run goes on" "missing"
kill -KILL "$KP"; wait "$KP" 2>/dev/null
for _ in $(seq 100); do [ -e "$RUNS/$KID/evidence" ] || break; sleep 0.05; done
[ -e "$RUNS/$KID/evidence" ] && fail "evidence: the copy is gone after berth is SIGKILLed" "still there" || pass "evidence: the copy is gone after berth is SIGKILLed"
rm -f "$WS/ev-started"
AUD=$("$BERTH" audit list --run "$ID" --json)
K=$(printf '%s\n' "$AUD" | python3 -c 'import json,sys; print(" ".join(json.loads(l)["kind"] for l in sys.stdin if l.strip()))')
eq "evidence: audit order run.start policy evidence.ingest enforced run.stop" "$K" "run.start policy evidence.ingest enforced run.stop"
has "evidence: the audit record holds the manifest hash" "$AUD" "$(sha256sum <(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])),sort_keys=True,separators=(",",":")),end="")' "$RUNS/$ID/evidence.json") | cut -c1-64)"
eq "evidence: attestation carries the evidence summary" "$("$BERTH" attest "$ID" | python3 -c 'import json,sys; print(json.load(sys.stdin)["evidence"]["files"])')" 5
# Bad input: nothing run, nothing left behind.
n0=$(ls "$RUNS" | wc -l)
run --evidence "$TOP/missing" -- true
eq "evidence: a missing path is exit 2" "$RC" 2
has "evidence: names it" "$ERR" "$TOP/missing"
mkdir -p "$TOP/a/x" "$TOP/b/x"; chmod -R a+rX "$TOP/a" "$TOP/b"
run --evidence "$TOP/a/x" --evidence "$TOP/b/x" -- true
eq "evidence: a name collision is exit 2" "$RC" 2
has "evidence: says the name is given twice" "$ERR" "evidence name \`x\` is given twice"
if [ $ROOT -eq 0 ]; then
	echo secret >"$EV/case/locked"; chmod 000 "$EV/case/locked"
	run --evidence "$EV/case" -- true
	eq "evidence: an unreadable file is exit 2" "$RC" 2
	has "evidence: names the unreadable file" "$ERR" "$EV/case/locked"
	rm -f "$EV/case/locked"
else
	# root reads everything: a file on a directory root cannot search is a
	# FUSE matter; here a file that vanishes is the unreadable case instead.
	pass "evidence: unreadable file (checked in the unprivileged run)"
	pass "evidence: (unprivileged run names the file)"
fi
# The run record cannot be written after the copy was made (here `runs/last` is a
# directory): the run does not start and the copy goes too (it was left behind).
mv "$RUNS/last" "$TOP/last.saved"; mkdir "$RUNS/last"
rm -f "$WS/ev-recfail"
run --evidence "$EV/note.txt" -- touch /workspace/ev-recfail
eq "evidence: a run record that cannot be written is exit 125" "$RC" 125
has "evidence: names the run record it could not write" "$ERR" "cannot write \`$RUNS/last\`: Is a directory"
[ -e "$WS/ev-recfail" ] && fail "evidence: the command did not run (no run record)" "it ran" || pass "evidence: the command did not run (no run record)"
LEFT=$(find "$RUNS" -mindepth 2 -maxdepth 2 -name evidence)
eq "evidence: no copy is left when the run record cannot be written" "$LEFT" ""
NDIRS=$(ls "$RUNS" | wc -l)
run -- true
eq "runs: a run whose record cannot be written is exit 125" "$RC" 125
eq "runs: it leaves no run directory behind" "$(ls "$RUNS" | wc -l)" "$NDIRS"
rmdir "$RUNS/last"; mv "$TOP/last.saved" "$RUNS/last"
# A sparse file larger than the disk: refused before a byte is read (not copied until the disk is full).
mkdir -p "$TOP/big"; truncate -s 8T "$TOP/big/huge.img"; chmod -R a+rX "$TOP/big"
S0=$SECONDS
timeout 60 "$BERTH" run --evidence "$TOP/big" -- true </dev/null >"$TOP/out" 2>"$TOP/err"; RC=$?; ERR=$(cat "$TOP/err")
eq "evidence: a file larger than the free space is exit 125" "$RC" 125
has "evidence: names the file and its size" "$ERR" "evidence \`$TOP/big/huge.img\` is 8.0 TiB, and only"
[ $((SECONDS - S0)) -lt 20 ] && pass "evidence: refused at once (not read)" || fail "evidence: refused at once" "$((SECONDS - S0)) s"
rm -rf "$TOP/big"
[ -n "$(last)" ] && [ "$(last)" != "$ID" ] && [ "$(ls "$RUNS" | wc -l)" -gt "$n0" ] && rm -rf "${RUNS:?}/$(last)"
BERTH_TEST_FORCE_OFF=userns run --allow-degraded --yes --evidence "$EV/note.txt" -- true
eq "evidence: without user namespaces berth refuses (exit 125)" "$RC" 125
has "evidence: says why" "$ERR" "--evidence needs the sandbox's own mount namespace"
rm -rf "${RUNS:?}/$(last)"   # this refusal came after the run record (exit 125 is recorded)
LEFT=$(find "$RUNS" -maxdepth 2 -name evidence | wc -l)
eq "evidence: no evidence copy left by the refused runs" "$LEFT" 0
eq "evidence: the refused runs left no run directory" "$(ls "$RUNS" | wc -l)" "$n0"

# ---------------------------------------------------------------- 5. --forensic
run --forensic -- true
eq "forensic: without --evidence is exit 2" "$RC" 2
has "forensic: says why" "$ERR" "--forensic needs the files to triage"
HOSTSECRET=x run --forensic --evidence "$EV/note.txt" --env HOSTSECRET -- true
eq "forensic: --env NAME (a host value) is refused, exit 2" "$RC" 2
printf 'A=1\n' >"$TOP/f.env"
run --forensic --evidence "$EV/note.txt" --env-file "$TOP/f.env" -- true
eq "forensic: --env-file is refused, exit 2" "$RC" 2
run --forensic --evidence "$EV/note.txt" --unprotect .bashrc --yes -- true
eq "forensic: --unprotect is refused, exit 2" "$RC" 2
run --forensic --evidence "$EV/note.txt" --dry-run --json -- true
has "forensic: policy says forensic" "$OUT" '"forensic":true'
has "forensic: network defaults to the api-only broker" "$OUT" '"mode":"proxy"'
has "forensic: evidence mount in the policy" "$OUT" '"evidence":{"flags":["ro","noexec","nosuid","nodev"],"mount":"/evidence"}'
run --forensic --network none --evidence "$EV/note.txt" --dry-run --json -- true
has "forensic: an explicit --network none is kept" "$OUT" '"mode":"none"'
run --forensic --evidence "$EV/note.txt" -- sh -c 'cat /evidence/note.txt; echo "proxy=${HTTPS_PROXY:+set}"'
eq "forensic: runs with the evidence and the broker" "$OUT" "single
proxy=set"

# ---------------------------------------------------------------- 6. secrets
HS=host-secret-$RANDOM$RANDOM; FS=file-secret-$RANDOM$RANDOM; LS=literal-secret-$RANDOM$RANDOM
printf '# secrets\nFILE_SECRET=%s\nexport QUOTED="%s-q"\n' "$FS" "$FS" >"$TOP/s.env"; chmod 644 "$TOP/s.env"
run --env-file "$TOP/s.env" -- sh -c 'echo "$FILE_SECRET $QUOTED"'
eq "secrets: --env-file values reach the command" "$OUT" "$FS $FS-q"
printf 'OK=1\nthis line is wrong\n' >"$TOP/bad.env"
run --env-file "$TOP/bad.env" -- true
eq "secrets: a bad --env-file line is exit 2" "$RC" 2
has "secrets: the error names file:line" "$ERR" "$TOP/bad.env:2: expected NAME=VALUE"
run --env-file "$TOP/nope.env" -- true
eq "secrets: a missing --env-file is exit 2" "$RC" 2
run --env-file "$TOP/s.env" --env HOST_SECRET --env "LIT=$LS" --dry-run -- true
hasnt "secrets: --dry-run hides the file value" "$OUT" "$FS"
hasnt "secrets: --dry-run hides the host value (unset here: refused)" "$OUT" "$HS"
HOST_SECRET=$HS run --env-file "$TOP/s.env" --env HOST_SECRET --dry-run --json -- true
hasnt "secrets: --dry-run --json hides the host value" "$OUT" "$HS"
has "secrets: --dry-run names the file variable" "$OUT" '{"from":"file","name":"FILE_SECRET"}'
# A running sandbox: /proc of berth, the janitor, pid 1 and the command.
HOST_SECRET=$HS "$BERTH" run --env-file "$TOP/s.env" --env HOST_SECRET --env "LIT=$LS" -- sleep 4 </dev/null >/dev/null 2>"$TOP/err" &
BP=$!; BGPIDS+=("$BP")
descend() { local p=$1 c; echo "$p"; for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do descend "$c"; done; }
CMDP=""
for _ in $(seq 50); do
	for p in $(descend "$BP"); do [ "$(cat /proc/"$p"/comm 2>/dev/null)" = sleep ] && CMDP=$p; done
	[ -n "$CMDP" ] && break; sleep 0.1
done
[ -n "$CMDP" ] && pass "secrets: found the command's process" || fail "secrets: found the command's process" "no sleep under $BP"
LEAK="" NP=0
for p in $(descend "$BP"); do
	[ "$p" = "$CMDP" ] && continue
	NP=$((NP + 1))
	for f in cmdline environ; do
		if tr '\0' '\n' </proc/"$p"/$f 2>/dev/null | grep -qE "$HS|$FS|$LS"; then LEAK="$LEAK $p/$f($(cat /proc/"$p"/comm))"; fi
	done
done
[ "$NP" -ge 2 ] && pass "secrets: checked berth and pid 1 ($NP processes)" || fail "secrets: checked berth and pid 1" "only $NP processes"
eq "secrets: no value in /proc/PID/cmdline or environ of berth, janitor, pid 1" "$LEAK" ""
E2=$(tr '\0' '\n' </proc/"$CMDP"/environ 2>/dev/null)
has "secrets: the command itself has the host value (control)" "$E2" "HOST_SECRET=$HS"
has "secrets: the command itself has the file value (control)" "$E2" "FILE_SECRET=$FS"
wait "$BP"
eq "secrets: the run exits 0" "$?" 0
G=$(grep -rlE "$HS|$FS|$LS" "$XDG_STATE_HOME" "$XDG_CONFIG_HOME" "$TOP/err" 2>/dev/null)
eq "secrets: no value in any file berth wrote (state, audit, keys, stderr)" "$G" ""
has "secrets: the audit trail names the variables" "$("$BERTH" audit list --kind policy -n 1 --json)" '"name":"HOST_SECRET"'
"$BERTH" audit verify >/dev/null; eq "secrets: audit chain intact after all runs" "$?" 0

# ---------------------------------------------------------------- 7. secrets across sandboxes
# Two resident apps, the same code: `holder` declares `secrets: [APP_TOKEN]`,
# `other` does not.  Each reports APP_TOKEN from its environment and how many
# /proc/PID/{environ,cmdline} it can see holding the value (read from a file,
# so the value is on no command line), while a third sandbox holds it too.
AS=app-secret-$RANDOM$RANDOM
for a in holder other; do
	mkdir -p "$TOP/apps/$a"
	cat >"$TOP/apps/$a/berth.yml" <<YML
schema_version: 1
name: $a
version: 0.1.0
description: test app for secrets
runtime: python
entry: main.py
$([ $a = holder ] && echo 'secrets: [APP_TOKEN]')
exports:
  - name: peek
    description: what this app sees of APP_TOKEN
    input: {type: object, properties: {}}
    output: {token: string, seen: integer}
YML
	cat >"$TOP/apps/$a/main.py" <<'PY'
import glob, os
import berth_app
app = berth_app.App()
@app.export("peek")
def peek():
    needle = open("/app/needle.txt", "rb").read().strip()
    seen = 0
    for f in glob.glob("/proc/[0-9]*/environ") + glob.glob("/proc/[0-9]*/cmdline"):
        try:
            seen += needle in open(f, "rb").read()
        except OSError:
            pass
    return {"token": os.environ.get("APP_TOKEN", ""), "seen": seen}
app.run()
PY
	echo "$AS" >"$TOP/apps/$a/needle.txt"
done
chmod -R a+rX "$TOP/apps"
APP_TOKEN=$AS "$BERTH" run --env APP_TOKEN -- sleep 5 </dev/null >/dev/null 2>&1 &
BGPIDS+=("$!")
sleep 0.5
OUT=$(APP_TOKEN=$AS "$BERTH" rpc holder --app-dir "$TOP/apps/holder" --export peek --input '{}' 2>"$TOP/err"); ERR=$(cat "$TOP/err")
eq "app secrets: the declaring app gets the value and sees only itself holding it" "$OUT" "{\"token\":\"$AS\",\"seen\":1}"
OUT=$(APP_TOKEN=$AS "$BERTH" rpc other --app-dir "$TOP/apps/other" --export peek --input '{}' 2>"$TOP/err"); ERR=$(cat "$TOP/err")
eq "app secrets: another app gets nothing and sees no process holding it" "$OUT" '{"token":"","seen":0}'
echo "$AS" >"$WS/needle.txt"
OUT=$(APP_TOKEN=$AS "$BERTH" run -- sh -c 'grep -lFf needle.txt /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | wc -l' 2>/dev/null)
rm -f "$WS/needle.txt"
eq "app secrets: another sandbox sees no process holding it" "$OUT" 0
OUT=$(APP_TOKEN=$AS "$BERTH" policy "$TOP/apps/holder" --json)
has "app secrets: the policy names the secret" "$OUT" '{"from":"host","name":"APP_TOKEN"}'
hasnt "app secrets: the policy holds no value" "$OUT" "$AS"
G=$(grep -rlF "$AS" "$XDG_STATE_HOME" "$XDG_CONFIG_HOME" 2>/dev/null)
eq "app secrets: no value in any file berth wrote" "$G" ""
wait

# ---------------------------------------------------------------- 8. retention
BERTH_RUNS_KEEP=1 run -- true
ID=$(last)
eq "retention: BERTH_RUNS_KEEP=1 keeps the newest run only" "$(ls "$RUNS" | tr '\n' ' ')" "$ID last "
"$BERTH" attest --last >/dev/null 2>&1; eq "retention: the kept run still attests" "$?" 0
"$BERTH" audit verify >/dev/null; eq "retention: the audit trail is untouched" "$?" 0

echo "# $((T - FAILS)) passed, $FAILS failed"
[ "$FAILS" -eq 0 ]
