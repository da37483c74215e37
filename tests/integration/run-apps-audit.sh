#!/usr/bin/env bash
# Resident apps in the audit trail (docs/audit.md, "Resident apps"): every
# boot of an app is a run (run.start, policy, ..., run.stop), every call a
# tool.call and a tool.result, for `berth rpc` and `berth mcp`; a secret the
# app's manifest declares never reaches the log; when the log cannot be
# written the call fails with -32005 and nothing is reported as done.
#
# usage: run-apps-audit.sh /path/to/berth [repo]
#   repo: the checkout holding apps/filesystem, built (ninja -C build; cp build/apps/filesystem/filesystem apps/filesystem/);
#   default: this script's ../..
#
# Works as root and as an unprivileged user (runuser -u bertht -- bash ...):
# the app is copied into a private temporary directory; BERTH_AUDIT_DIR,
# XDG_STATE_HOME, XDG_CONFIG_HOME and XDG_RUNTIME_DIR point into it.  The
# ENOSPC check mounts a small tmpfs and needs root; as a user the
# unwritable-directory checks cover the fail-closed path.  Prints ok/FAIL
# lines and a count; exit status 1 if any check failed.

set -u
export LC_ALL=C
unset BERTH_TEST_FORCE_OFF

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 /path/to/berth [repo]" >&2
	exit 2
fi
B=$(readlink -f -- "$1")
REPO=$(readlink -f -- "${2:-$(dirname "$0")/../..}")
PY=/usr/bin/python3
ME=$(id -u)
N=0 FAILS=0
ok() { N=$((N + 1)); echo "ok $N - $1"; }
bad() { N=$((N + 1)); FAILS=$((FAILS + 1)); echo "not ok $N - $1"; shift; for l in "$@"; do printf '%s\n' "$l" | head -n 15 | sed 's/^/#   /'; done; }
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1" "got: $2" "want: $3"; fi; }
has() { if printf '%s' "$2" | grep -qF -- "$3"; then ok "$1"; else bad "$1" "'$3' not in:" "$2"; fi; }

[ -x "$REPO/apps/filesystem/filesystem" ] || { echo "FAIL: build apps/filesystem first (ninja -C build; cp build/apps/filesystem/filesystem apps/filesystem/)"; exit 1; }
T=$(mktemp -d /tmp/berth-apps-audit.XXXXXX)
MNT=
cleanup() {
	[ -n "$MNT" ] && umount "$MNT" 2>/dev/null
	chmod -R u+rwX "$T" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
export XDG_STATE_HOME=$T/state XDG_CONFIG_HOME=$T/config XDG_RUNTIME_DIR=$T/run
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
# The app, with a declared secret.
cp -a "$REPO/apps/filesystem" "$T/filesystem"
printf 'secrets: [FS_AUDIT_TOKEN]\n' >>"$T/filesystem/berth.yml"
export FS_AUDIT_TOKEN="tok-$RANDOM$RANDOM-sekrit-value"
APP=$T/filesystem

# kinds RUN_ID: the kinds of a run's records, in order, one line
kinds() { "$B" audit list --run "$1" --json | "$PY" -c 'import sys,json; print(" ".join(json.loads(l)["kind"] for l in sys.stdin))'; }
# field RUN_ID KIND N EXPR: a Python expression over record r (the Nth of that kind, from 0)
field() {
	"$B" audit list --run "$1" --json | "$PY" -c '
import sys, json
rs = [json.loads(l) for l in sys.stdin]
rs = [r for r in rs if r["kind"] == sys.argv[1]]
r = rs[int(sys.argv[2])]
print(eval(sys.argv[3]))' "$2" "$3" "$4"
}
# runs: the run ids in the log, in order of their run.start
runs() { "$B" audit list --kind run.start --json | "$PY" -c 'import sys,json; print(" ".join(json.loads(l)["run_id"] for l in sys.stdin))'; }
verify() { "$B" audit verify 2>&1; }

# The MCP client: initialize (clientInfo.name audit-test), then the calls
# given as JSON lines on its command line, all sent before any answer is
# read (concurrent calls), then end of input.  Prints one answer per line.
cat >"$T/mcp.py" <<'EOF'
import json, subprocess, sys
berth, app, calls = sys.argv[1], sys.argv[2], sys.argv[3:]
p = subprocess.Popen([berth, "mcp", "--app", "filesystem", "--app-dir", app, "--no-dev"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
def send(m): p.stdin.write(json.dumps(m) + "\n"); p.stdin.flush()
def recv():
    while True:
        m = json.loads(p.stdout.readline())
        if "id" in m: return m
send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
      "capabilities": {}, "clientInfo": {"name": "audit-test", "version": "1"}}})
recv()
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
for i, c in enumerate(calls):
    send({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": json.loads(c)})
got = {}
for _ in calls:
    m = recv(); got[m["id"]] = m
for i in range(len(calls)):
    r = got[i + 1].get("result", {})
    print(json.dumps({"isError": r.get("isError", False), "text": r.get("content", [{}])[0].get("text", "")}))
p.stdin.close()
sys.exit(p.wait())
EOF
mcp() { "$PY" "$T/mcp.py" "$B" "$APP" "$@"; }

# ------------------------------------------------------------ berth rpc
export BERTH_AUDIT_DIR=$T/audit
OUT=$("$B" rpc filesystem --app-dir "$APP" --export write_file \
	--input "{\"path\":\"a.txt\",\"content\":\"key=$FS_AUDIT_TOKEN\",\"password\":\"hunter2-hunter2\"}" 2>"$T/err"); RC=$?
eq "rpc: the call succeeds" "$RC:$OUT" '0:{"path":"a.txt","bytes":'$((4 + ${#FS_AUDIT_TOKEN}))'}'
R1=$(runs)
eq "rpc: one run in the log" "$(wc -w <<<"$R1")" 1
eq "rpc: records of the run, in order" "$(kinds "$R1")" "run.start policy tool.call tool.result run.stop"
eq "rpc: run.start names the app and its digest" "$(field "$R1" run.start 0 'r["payload"]["app"], r["payload"]["app_digest"][:7], r["actor"]')" "('filesystem', 'sha256:', 'rpc:uid:$ME')"
eq "rpc: policy has its digest and the app digest" "$(field "$R1" policy 0 'r["payload"]["digest"][:7], r["payload"]["app_digest"][:7], "policy" in r["payload"]')" "('sha256:', 'sha256:', True)"
eq "rpc: tool.call: app, export, call id, actor" "$(field "$R1" tool.call 0 'r["payload"]["app"], r["payload"]["export"], r["payload"]["call_id"], r["actor"]')" "('filesystem', 'write_file', 1, 'rpc:uid:$ME')"
eq "rpc: tool.call: the manifest's secret is redacted in the input" "$(field "$R1" tool.call 0 'r["payload"]["input"]["content"]')" "key=[secret]"
eq "rpc: tool.call: a credential-like key is redacted" "$(field "$R1" tool.call 0 'r["payload"]["input"]["password"]')" "[redacted]"
eq "rpc: tool.result: ok, call id, output size" "$(field "$R1" tool.result 0 'r["payload"]["ok"], r["payload"]["call_id"], r["payload"]["output_bytes"], type(r["payload"]["duration_ms"]).__name__')" "(True, 1, ${#OUT}, 'int')"
eq "rpc: run.stop: reason and calls" "$(field "$R1" run.stop 0 'r["payload"]["reason"], r["payload"]["calls"]')" "('stopped', 1)"
if grep -rqF -- "$FS_AUDIT_TOKEN" "$BERTH_AUDIT_DIR"; then bad "rpc: the secret's value is nowhere in the audit directory"; else ok "rpc: the secret's value is nowhere in the audit directory"; fi
has "rpc: verify intact" "$(verify)" "intact: 5 records"

# A denied call: the error and the denial block are on record.
OUT=$("$B" rpc filesystem --app-dir "$APP" --export write_file --input '{"path":"/etc/x","content":"x"}' 2>"$T/err"); RC=$?
R2=$(runs | awk '{print $2}')
eq "rpc denied: exit 1" "$RC" 1
eq "rpc denied: records in order" "$(kinds "$R2")" "run.start policy tool.call tool.result run.stop"
eq "rpc denied: tool.result has the error code and the denial" "$(field "$R2" tool.result 0 'r["payload"]["ok"], r["payload"]["error"]["code"], r["payload"]["denial"].split(chr(10))[0]')" "(False, -32001, 'BERTH CAPABILITY DENIAL')"

# A call refused for its input, with no app running: nothing booted, nothing recorded.
"$B" rpc filesystem --app-dir "$APP" --export nope >/dev/null 2>&1; RC=$?
eq "rpc unknown export: exit 2, no run" "$RC:$(runs | wc -w)" "2:2"

# ------------------------------------------------------------ berth mcp
export BERTH_AUDIT_DIR=$T/audit-mcp
OUT=$(mcp '{"name":"write_file","arguments":{"path":"m1.txt","content":"one"}}' \
	'{"name":"write_file","arguments":{"path":"m2.txt","content":"two '"$FS_AUDIT_TOKEN"'"}}' \
	'{"name":"read_file","arguments":{"path":"m1.txt"}}' 2>"$T/err"); RC=$?
eq "mcp: three concurrent calls answered, server exits 0" "$RC:$(grep -c '"isError": false' <<<"$OUT")" "0:3"
M1=$(runs)
eq "mcp: one run" "$(wc -w <<<"$M1")" 1
K=$(kinds "$M1")
eq "mcp: run.start and policy first, run.stop last" "$(awk '{print $1, $2, $NF}' <<<"$K")" "run.start policy run.stop"
eq "mcp: three tool.call and three tool.result" "$(tr ' ' '\n' <<<"$K" | sort | uniq -c | awk '$2 ~ /^tool/ {printf "%s=%s ", $2, $1}')" "tool.call=3 tool.result=3 "
eq "mcp: call ids 1, 2, 3 in the calls and the results" "$(field "$M1" tool.call 0 'r["payload"]["call_id"]')$(field "$M1" tool.call 1 'r["payload"]["call_id"]')$(field "$M1" tool.call 2 'r["payload"]["call_id"]') $("$B" audit list --run "$M1" --kind tool.result --json | "$PY" -c 'import sys,json; print(sorted(json.loads(l)["payload"]["call_id"] for l in sys.stdin))')" "123 [1, 2, 3]"
eq "mcp: each tool.result follows its tool.call" "$("$B" audit list --run "$M1" --json | "$PY" -c '
import sys, json
seen = set(); good = True
for l in sys.stdin:
    r = json.loads(l); p = r["payload"]
    if r["kind"] == "tool.call": seen.add(p["call_id"])
    if r["kind"] == "tool.result": good &= p["call_id"] in seen
print(good)')" True
eq "mcp: actors: the client for calls, the uid for the run" "$(field "$M1" tool.call 1 'r["actor"]') $(field "$M1" tool.result 1 'r["actor"]') $(field "$M1" run.start 0 'r["actor"]')" "mcp:client:audit-test mcp:client:audit-test mcp:uid:$ME"
eq "mcp: the secret is redacted in the input" "$(field "$M1" tool.call 1 'r["payload"]["input"]["content"]')" "two [secret]"
if grep -rqF -- "$FS_AUDIT_TOKEN" "$BERTH_AUDIT_DIR"; then bad "mcp: the secret's value is nowhere in the log"; else ok "mcp: the secret's value is nowhere in the log"; fi
has "mcp: verify intact" "$(verify)" "intact: 9 records"

# ------------------------------------------------------------ fail closed: a log berth may not write
WS=$(find "$XDG_STATE_HOME" -type d -name workspace -path '*filesystem*' | head -1)
[ -d "$WS" ] && ok "the app's workspace found" || bad "the app's workspace found" "$(find "$XDG_STATE_HOME" -maxdepth 5)"
export BERTH_AUDIT_DIR=$T/audit-open
mkdir -p "$BERTH_AUDIT_DIR" && chmod 0755 "$BERTH_AUDIT_DIR"   # group/other may read: berth refuses it
OUT=$("$B" rpc filesystem --app-dir "$APP" --export write_file --input '{"path":"refused1.txt","content":"x"}' 2>"$T/err"); RC=$?
eq "audit dir refused: rpc exits 125" "$RC" 125
eq "audit dir refused: rpc prints error -32005" "$("$PY" -c 'import sys,json; print(json.loads(sys.argv[1])["error"]["code"])' "$OUT")" -32005
has "audit dir refused: the message names the cause" "$(cat "$T/err")" "the audit trail cannot record the app's run, so it does not start (fail closed)"
[ ! -e "$WS/refused1.txt" ] && ok "audit dir refused: the app did not write" || bad "audit dir refused: the app did not write"
OUT=$(mcp '{"name":"write_file","arguments":{"path":"refused2.txt","content":"x"}}' 2>"$T/err"); RC=$?
eq "audit dir refused: mcp answers isError with error -32005" "$RC:$("$PY" -c 'import sys,json; m=json.loads(sys.argv[1]); print(m["isError"], "(error -32005)" in m["text"], "fail closed" in m["text"])' "$OUT")" "0:True True True"
[ ! -e "$WS/refused2.txt" ] && ok "audit dir refused: mcp: the app did not write" || bad "audit dir refused: mcp: the app did not write"
eq "audit dir refused: no log was written" "$(ls -A "$BERTH_AUDIT_DIR" | grep -c jsonl)" 0
if [ "$ME" -ne 0 ]; then   # root writes through the mode bits
	export BERTH_AUDIT_DIR=$T/audit-ro
	mkdir -p "$BERTH_AUDIT_DIR" && chmod 0500 "$BERTH_AUDIT_DIR"
	OUT=$(mcp '{"name":"write_file","arguments":{"path":"refused3.txt","content":"x"}}' 2>"$T/err"); RC=$?
	has "unwritable audit dir: mcp answers error -32005" "$OUT" "(error -32005)"
	[ ! -e "$WS/refused3.txt" ] && ok "unwritable audit dir: the app did not write" || bad "unwritable audit dir: the app did not write"
fi

# ------------------------------------------------------------ fail closed: ENOSPC in the middle of a session
if [ "$ME" -eq 0 ]; then
	MNT=$T/small; mkdir -p "$MNT"
	mount -t tmpfs -o size=256k,mode=0700 tmpfs "$MNT"
	export BERTH_AUDIT_DIR=$MNT/audit
	# Records bigger than a page (five 4000-byte strings): a full tmpfs must refuse them.
	big=$("$PY" -c 'import json; print(json.dumps({"name":"write_file","arguments":dict({"path":"big.txt","content":"y"*4000}, **{"pad%d"%i:"z"*4000 for i in range(5)})}))')
	cat >"$T/enospc.py" <<'EOF'
import json, subprocess, sys, os
berth, app, mnt, big = sys.argv[1:5]
p = subprocess.Popen([berth, "mcp", "--app", "filesystem", "--app-dir", app, "--no-dev"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
def call(i, m):
    p.stdin.write(json.dumps(m) + "\n"); p.stdin.flush()
    while True:
        r = json.loads(p.stdout.readline())
        if r.get("id") == i: return r.get("result", r.get("error"))
call(0, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "enospc"}}})
def tool(i, params):
    r = call(i, {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params})
    return "%s|%s" % (r.get("isError", False), r["content"][0]["text"].replace("\n", " "))
print(tool(1, {"name": "write_file", "arguments": {"path": "e1.txt", "content": "1"}}))
with open(os.path.join(mnt, "fill"), "wb") as f:
    try:
        while True: f.write(b"\0" * 65536); f.flush()
    except OSError: pass
print(tool(2, json.loads(big)))
os.unlink(os.path.join(mnt, "fill"))
print(tool(3, {"name": "write_file", "arguments": {"path": "e3.txt", "content": "3"}}))
p.stdin.close()
print("exit=%d" % p.wait())
EOF
	OUT=$("$PY" "$T/enospc.py" "$B" "$APP" "$MNT" "$big" 2>"$T/err")
	L1=$(sed -n 1p <<<"$OUT") L2=$(sed -n 2p <<<"$OUT") L3=$(sed -n 3p <<<"$OUT")
	has "ENOSPC: the first call succeeds" "$L1" "False|"
	has "ENOSPC: the call on a full disk fails with -32005" "$L2" "True|"
	has "ENOSPC: ...error -32005" "$L2" "(error -32005)"
	has "ENOSPC: ...naming the cause" "$L2" "No space left on device"
	has "ENOSPC: ...and withholding the result" "$L2" "fail closed"
	has "ENOSPC: once there is room, the next call succeeds" "$L3" "False|"
	eq "ENOSPC: the server exits 0" "$(sed -n 4p <<<"$OUT")" "exit=0"
	V=$(verify)
	has "ENOSPC: the log verifies intact" "$V" "intact:"
	E=$(runs)
	eq "ENOSPC: two runs (the app was booted again for the trail)" "$(wc -w <<<"$E")" 2
	E1=${E%% *} E2=${E##* }
	eq "ENOSPC: run 1 on record: the first call, and its end with what was lost" "$(kinds "$E1") | $(field "$E1" run.stop 0 '"records_lost" in r["payload"], r["payload"]["reason"]')" "run.start policy tool.call tool.result run.stop | (True, 'audit trail failed')"
	eq "ENOSPC: run 2: the third call" "$(kinds "$E2") | $(field "$E2" tool.call 0 'r["payload"]["input"]["path"]')" "run.start policy tool.call tool.result run.stop | e3.txt"
	umount "$MNT"; MNT=
fi

echo "# $N checks, $FAILS failed"
[ "$FAILS" -eq 0 ]
