#!/usr/bin/env bash
# Integration tests for resident apps: `berth rpc`, `berth test`, `berth init`,
# `berth policy` and `berth dev`, with the first-party apps (apps/: filesystem
# is C, notes and code-interpreter are Python) and the fixtures in
# tests/apps/fixtures/ (probe, parity-missing, parity-extra, network-host).
# Every check asserts exact exit statuses and exact strings, and that nothing
# leaks onto the host (files, processes, control sockets).
#
# usage: run-apps-integration.sh /path/to/berth /path/to/repo
#   repo: the checkout that holds apps/ and tests/apps/fixtures/ (apps/filesystem
#   must be built: ninja -C build and its binary in apps/filesystem, as berth_build does).  berth finds the Python SDK itself,
#   next to its binary (../sdk/python).
#
# Works as root and as an unprivileged user (runuser -u bertht -- bash ...): the
# apps and fixtures are copied into a private temporary directory, and
# XDG_STATE_HOME and XDG_RUNTIME_DIR point at fresh temporary directories.
# Output is TAP; exit status 1 if any check failed.  Nothing is skipped: a
# missing precondition is a failure.

set -u
export LC_ALL=C
unset BERTH_TEST_FORCE_OFF BERTH_SDK_PYTHON

if [ $# -ne 2 ]; then
	echo "usage: $0 /path/to/berth /path/to/repo" >&2
	exit 2
fi
BERTH=$(readlink -f -- "$1")
REPO=$(readlink -f -- "$2")
HOSTPY=/usr/bin/python3          # host-side python (root's PATH may hold a pyenv shim)
ME=$(id -u)
IS_ROOT=0; [ "$ME" -eq 0 ] && IS_ROOT=1
UNIQ=$(( ($$ % 9000) + 1000 ))$RANDOM   # unique markers for pgrep patterns and names
T0=$(date +%s)

# shellcheck source=../lib.sh
TAP_DETAIL_LINES=12
. "$(dirname "$0")/../lib.sh"  # T, FAILS, pass, fail, has, hasnt
# ck DESC CONDITION-EXIT-STATUS REASON
ck() { if [ "$2" -eq 0 ]; then pass "$1"; else fail "$1" "$3" "rc=$RC" "stdout: $OUT" "stderr: $ERR"; fi; }
eq() { # eq DESC GOT WANT
	if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'" "rc=$RC" "stdout: $OUT" "stderr: $ERR"; fi
}
hasline() { # hasline DESC HAYSTACK LINE  (a whole line, fixed string)
	if printf '%s\n' "$2" | grep -qxF -- "$3"; then pass "$1"; else fail "$1" "line '$3' not found" "in: $2"; fi
}

TOP=$(mktemp -d /tmp/berth-apps-it.XXXXXX) || { echo "Bail out! mktemp failed"; exit 1; }
chmod 755 "$TOP"      # the apps' sandbox identities must be able to traverse to /app
TD=$TOP/cap; mkdir "$TD"                      # captured output
W=$TOP/w; mkdir "$W"                          # copies of the apps and fixtures (cwd)
export XDG_STATE_HOME=$TOP/state XDG_RUNTIME_DIR=$TOP/run
mkdir -m 700 "$XDG_STATE_HOME" "$XDG_RUNTIME_DIR"
DEVPIDS=()
HOSTPIDS=()
cleanup() {
	local p
	for p in "${DEVPIDS[@]}" "${HOSTPIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for _ in $(seq 50); do
		local alive=0
		for p in "${DEVPIDS[@]}" "${HOSTPIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ $alive -eq 0 ] && break; sleep 0.1
	done
	for p in "${DEVPIDS[@]}" "${HOSTPIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$TOP" 2>/dev/null || { chmod -R u+rwx "$TOP" 2>/dev/null; rm -rf "$TOP"; }
}
trap cleanup EXIT
trap 'cleanup; trap - EXIT; exit 130' INT TERM

RC=; OUT=; ERR=; ERRB=
# ERRB is ERR without the sandbox's one-line notice of how limits are enforced
# ("berth: limits: rlimits (...)"), which berth prints for an unprivileged
# caller without a delegated cgroup (README: "berth says which").
# rpc ARGS... : berth rpc ARGS (stdin /dev/null, cwd $W); sets RC OUT ERR MS (elapsed)
rpc() {
	local t0; t0=$(date +%s%3N)
	timeout -k 5 60 "$BERTH" rpc "$@" </dev/null >"$TD/out" 2>"$TD/err"
	RC=$?
	MS=$(( $(date +%s%3N) - t0 ))
	OUT=$(cat "$TD/out"); ERR=$(cat "$TD/err"); ERRB=$(grep -v '^berth: limits: ' "$TD/err")
}
# bc COMMAND ARGS... : any berth command, same capture
bc() {
	timeout -k 5 120 "$BERTH" "$@" </dev/null >"$TD/out" 2>"$TD/err"
	RC=$?
	OUT=$(cat "$TD/out"); ERR=$(cat "$TD/err"); ERRB=$(grep -v '^berth: limits: ' "$TD/err")
}
# jq-like: js EXPR  reads JSON from $OUT, prints the Python expression on `o`
js() { printf '%s' "$OUT" | "$HOSTPY" -c '
import json, sys
try:
    o = json.loads(sys.stdin.read())
    v = eval(sys.argv[1])
except Exception as e:
    print("<%s: %s>" % (type(e).__name__, e)); sys.exit(0)
print(v if isinstance(v, str) else json.dumps(v, sort_keys=True, separators=(",", ":")))' "$1"; }
# the pids of processes whose command line matches the extended regexp $1
procs() { pgrep -f -- "$1" | tr '\n' ' ' | sed 's/ $//'; }
# wait_for SECONDS COMMAND... : until COMMAND succeeds (0) or time is up (1)
wait_for() {
	local n=$(( $1 * 20 )); shift
	for _ in $(seq "$n"); do "$@" && return 0; sleep 0.05; done
	return 1
}
# start_dev NAME-FOR-CAPTURE DIR... : berth dev in the background; sets DEVPID
start_dev() {
	local cap=$1; shift
	# Should this script die without its EXIT trap, berth dev gets SIGTERM.
	setpriv --pdeathsig TERM -- "$BERTH" dev "$@" </dev/null >"$TD/$cap.out" 2>"$TD/$cap.err" &
	DEVPID=$!
	DEVPIDS+=("$DEVPID")
}
# stop_dev : SIGTERM to $DEVPID, wait at most 10 s; sets DEVRC
stop_dev() {
	kill -TERM "$DEVPID" 2>/dev/null
	for _ in $(seq 100); do kill -0 "$DEVPID" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$DEVPID" 2>/dev/null && kill -KILL "$DEVPID" 2>/dev/null
	wait "$DEVPID"; DEVRC=$?
}
sock() { printf '%s/berth/dev/%s.sock' "$XDG_RUNTIME_DIR" "$1"; }

# The Landlock ABI of this kernel, as berth measures it (landlock_create_ruleset
# with LANDLOCK_CREATE_RULESET_VERSION); the denial's `denied-by:` line names it.
LLABI=$("$HOSTPY" -c '
import ctypes, platform
nr = {"x86_64": 444, "aarch64": 444}.get(platform.machine(), 444)
libc = ctypes.CDLL(None, use_errno=True)
print(max(0, libc.syscall(nr, None, ctypes.c_size_t(0), ctypes.c_uint32(1))))')

# ---------------------------------------------------------------- preconditions
for tool in "$BERTH" "$HOSTPY" /usr/bin/pgrep /usr/bin/timeout /usr/bin/setpriv /usr/bin/make /usr/bin/cc \
	"$REPO/apps/filesystem/filesystem"; do
	if [ -x "$tool" ]; then pass "precondition: $tool is executable"
	else fail "precondition: $tool is executable" "missing (build: tests/run or demo/run build it, or ninja -C build && cp build/apps/filesystem/filesystem apps/filesystem/)"; fi
done
for d in apps/filesystem apps/notes apps/code-interpreter tests/apps/fixtures/probe \
	tests/apps/fixtures/parity-missing tests/apps/fixtures/parity-extra tests/apps/fixtures/network-host; do
	if [ -f "$REPO/$d/berth.yml" ]; then pass "precondition: $d/berth.yml exists"
	else fail "precondition: $d/berth.yml exists" "missing in $REPO"; fi
done
if [ -f "$(dirname "$BERTH")/../sdk/python/berth_app.py" ]; then pass "precondition: the Python SDK is next to berth (../sdk/python)"
else fail "precondition: the Python SDK is next to berth (../sdk/python)" "no $(dirname "$BERTH")/../sdk/python/berth_app.py"; fi
if [ ! -e /tmp/escape.txt ]; then pass "precondition: /tmp/escape.txt does not exist on the host"
else fail "precondition: /tmp/escape.txt does not exist on the host" "it exists (left by someone else?): $(ls -l /tmp/escape.txt)"; fi
if [ "$LLABI" -ge 4 ] 2>/dev/null; then pass "precondition: Landlock ABI >= 4 (got $LLABI)"
else fail "precondition: Landlock ABI >= 4" "got '$LLABI'"; fi

mkdir -p "$W/apps" "$W/fixtures"
cp -r "$REPO/apps/filesystem" "$REPO/apps/notes" "$REPO/apps/code-interpreter" "$W/apps/"
for f in probe parity-missing parity-extra network-host; do cp -r "$REPO/tests/apps/fixtures/$f" "$W/fixtures/"; done
# A probe copy named NAME whose entry is probe-NAME-$UNIQ.py: a unique marker on
# the host's process list.
mkprobe() {
	local name=$1 dir=$W/$1
	cp -r "$W/fixtures/probe" "$dir"
	mv "$dir/probe.py" "$dir/$name-$UNIQ.py"
	sed -i "s/^name: probe\$/name: $name/; s/^entry: probe\\.py\$/entry: $name-$UNIQ.py/" "$dir/berth.yml"
}
mkprobe probe; mkprobe probe-a; mkprobe probe-b
chmod -R u+rwX,go+rX "$W"
cd "$W" || exit 1

STATE=$XDG_STATE_HOME/berth/apps

# ================================================================ 1. the seed demo
rpc filesystem --app-dir apps/filesystem --export write_file --input '{"path":"hello.txt","content":"hello from a sandbox"}'
eq "seed: write_file hello.txt exits 0" "$RC" 0
eq "seed: write_file prints the result" "$OUT" '{"path":"hello.txt","bytes":20}'
eq "seed: write_file prints nothing on stderr but the limits notice" "$ERRB" ""
nl=$(printf '%s\n' "$ERR" | grep -c '^berth: limits: ')
if [ $IS_ROOT -eq 1 ]; then eq "seed: no limits notice for root (cgroups)" "$nl" 0
elif [ "$nl" -le 1 ]; then pass "seed: at most one limits notice for a user ($nl)"
else fail "seed: at most one limits notice for a user" "$nl lines" "$ERR"; fi
HF=$STATE/filesystem/workspace/hello.txt
eq "seed: the file is in \$XDG_STATE_HOME/berth/apps/filesystem/workspace with that content" \
	"$(cat "$HF" 2>&1; echo .)" "hello from a sandbox."
eq "seed: the file is owned by the state dir's owner ($(stat -c %u "$STATE/filesystem" 2>&1))" \
	"$(stat -c %u "$HF" 2>&1)" "$(stat -c %u "$STATE/filesystem" 2>&1)"
eq "seed: the state dir belongs to the caller (uid $ME)" "$(stat -c %u "$STATE/filesystem" 2>&1)" "$ME"
eq "seed: the workspace is 0700" "$(stat -c %a "$STATE/filesystem/workspace" 2>&1)" 700
rpc filesystem --app-dir apps/filesystem --export read_file --input '{"path":"hello.txt"}'
eq "seed: read_file exits 0" "$RC" 0
eq "seed: read_file returns the content" "$OUT" '{"content":"hello from a sandbox"}'

DENIED_BY="denied-by: the kernel — Landlock ruleset (ABI $LLABI, fully enforced) compiled from \"filesystem\"'s berth.yml, applied before the app's first line ran"
ETC=/etc/berth-escape-$UNIQ
for target in /tmp/escape.txt "$ETC"; do
	case $target in
	/tmp/*) fix='fix: add "filesystem:write:/tmp" to capabilities in apps/filesystem/berth.yml' ;;
	*) fix='fix: none available — a filesystem scope may only name /workspace, /context, /tmp, /app' ;;
	esac
	rpc filesystem --app-dir apps/filesystem --export write_file --input "{\"path\":\"$target\",\"content\":\"escaped\"}"
	eq "seed: write_file $target exits 1" "$RC" 1
	has "seed: write_file $target: stdout has \"errno_name\":\"EACCES\"" "$OUT" '"errno_name":"EACCES"'
	eq "seed: write_file $target: stdout is the exact -32001 error" "$OUT" \
		"{\"error\":{\"code\":-32001,\"message\":\"open \`$target\`: Permission denied\",\"data\":{\"errno\":13,\"errno_name\":\"EACCES\",\"syscall\":\"open\",\"path\":\"$target\"}}}"
	hasline "seed: write_file $target: stderr has the BERTH CAPABILITY DENIAL header" "$ERR" "BERTH CAPABILITY DENIAL"
	hasline "seed: write_file $target: exact denied: line" "$ERR" "denied: open(2) on $target (EACCES: permission denied)"
	hasline "seed: write_file $target: exact denied-by: line (Landlock)" "$ERR" "$DENIED_BY"
	hasline "seed: write_file $target: exact fix: line" "$ERR" "$fix"
	eq "seed: write_file $target: the whole stderr" "$ERRB" "berth: open \`$target\`: Permission denied (JSON-RPC -32001)
BERTH CAPABILITY DENIAL
app: filesystem   manifest: apps/filesystem/berth.yml
denied: open(2) on $target (EACCES: permission denied)
$DENIED_BY
$fix"
done
[ ! -e /tmp/escape.txt ] && pass "seed: /tmp/escape.txt does not exist on the host" \
	|| fail "seed: /tmp/escape.txt does not exist on the host" "$(ls -l /tmp/escape.txt 2>&1)"
[ ! -e "$ETC" ] && pass "seed: $ETC does not exist on the host" || fail "seed: $ETC does not exist on the host" "exists"
eq "seed: the workspace holds only hello.txt" "$(ls -A "$STATE/filesystem/workspace" 2>&1 | tr '\n' ' ')" "hello.txt "

# ================================================================ 2. berth test
# check_test NAME : $OUT is a passing berth test run of NAME
check_test() {
	local n nok plan last
	n=$(printf '%s\n' "$OUT" | grep -c '^ok ')
	nok=$(printf '%s\n' "$OUT" | grep -c '^not ok ')
	plan=$(printf '%s\n' "$OUT" | grep -E '^1\.\.[0-9]+$')
	last=$(printf '%s\n' "$OUT" | tail -n 1)
	eq "test $1: exits 0" "$RC" 0
	eq "test $1: last line" "$last" "# $1: $n passed, 0 failed"
	eq "test $1: plan 1..$n and no 'not ok'" "$plan/$nok" "1..$n/0"
	if [ "$n" -ge 2 ]; then pass "test $1: boot and at least one example ran ($n)"
	else fail "test $1: boot and at least one example ran" "$n ok lines" "$OUT" "$ERR"; fi
}
for a in filesystem notes code-interpreter; do
	bc test "apps/$a"
	check_test "$a"
done
# code-interpreter's timeout_ms: its range is in the schema (minimum 1,
# maximum 60000), which every tool format shows and berth enforces before
# the app sees the call (-32602, exit 2, naming the path and the bound).
# (A state directory of its own: the end checks that `berth test` left none.)
bc tools apps/code-interpreter --format mcp
eq "code-interpreter: the tool's schema states timeout_ms's range" \
	"$(printf '%s' "$OUT" | python3 -c 'import json,sys; t=json.load(sys.stdin)["tools"]; p=[x for x in t if x["name"]=="run_code"][0]["inputSchema"]["properties"]["timeout_ms"]; print(p.get("minimum"), p.get("maximum"))')" "1 60000"
while IFS='|' read -r v why; do
	XDG_STATE_HOME=$TOP/ci-state rpc code-interpreter --app-dir apps/code-interpreter --export run_code \
		--input "{\"language\":\"shell\",\"code\":\"echo ran\",\"timeout_ms\":$v}"
	eq "code-interpreter: timeout_ms $v: exit 2" "$RC" 2
	eq "code-interpreter: timeout_ms $v: the message" "$ERRB" "berth: invalid input: \$.timeout_ms: $why (JSON-RPC -32602)"
	hasnt "code-interpreter: timeout_ms $v: the code did not run" "$OUT" "ran"
done <<'EOF_TMO'
0|must be at least 1
-1|must be at least 1
60001|must be at most 60000
9223372036854775807|must be at most 60000
EOF_TMO
XDG_STATE_HOME=$TOP/ci-state rpc code-interpreter --app-dir apps/code-interpreter --export run_code \
	--input '{"language":"shell","code":"echo ran","timeout_ms":60000}'
eq "code-interpreter: timeout_ms 60000 (the maximum) runs" "$RC/$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["stdout"].strip())')" "0/ran"
[ ! -e "$STATE/notes" ] && pass "test: berth test leaves no state in \$XDG_STATE_HOME (notes)" \
	|| fail "test: berth test leaves no state in \$XDG_STATE_HOME (notes)" "$(ls -A "$STATE")"
mkdir -m 755 "$TOP/init"
cd "$TOP/init" || exit 1
bc init demo-py
eq "init: berth init demo-py exits 0" "$RC" 0
eq "init: demo-py holds berth.yml and main.py" "$(ls demo-py 2>&1 | tr '\n' ' ')" "berth.yml main.py "
bc init demo-c --runtime native
eq "init: berth init demo-c --runtime native exits 0" "$RC" 0
[ -x demo-c/demo-c ] && pass "init: demo-c was built (demo-c/demo-c)" || fail "init: demo-c was built" "no demo-c/demo-c" "$OUT" "$ERR"
chmod -R go+rX "$TOP/init"
bc test demo-py
check_test demo-py
bc test demo-c
check_test demo-c
cd "$W" || exit 1

# ================================================================ 3. berth policy
cp -r apps/filesystem fscopy
# app_digest DIR : berth_app_digest() recomputed here (src/supervisor/app_policy.h)
app_digest() { "$HOSTPY" - "$1" <<'EOF'
import hashlib, os, stat, sys
top = sys.argv[1]
lines = []
for root, dirs, files in os.walk(top):
    for n in dirs + files:
        p = os.path.join(root, n)
        rel = os.path.relpath(p, top)
        st = os.lstat(p)
        if stat.S_ISREG(st.st_mode):
            t, h, size = "f", hashlib.sha256(open(p, "rb").read()).hexdigest(), st.st_size
        elif stat.S_ISLNK(st.st_mode):
            t, h, size = "l", hashlib.sha256(os.fsencode(os.readlink(p))).hexdigest(), st.st_size
        elif stat.S_ISDIR(st.st_mode):
            t, h, size = "d", "-", 0
        else:
            t, h, size = "o", "-", 0
        lines.append((os.fsencode(rel), b"%s %04o %d %s %s\n" % (t.encode(), st.st_mode & 0o7777, size, h.encode(), os.fsencode(rel))))
lines.sort()
print("sha256:" + hashlib.sha256(b"".join(l for _, l in lines)).hexdigest())
EOF
}
# policy_checks LABEL : $OUT is one `berth policy --json` object
policy_checks() {
	eq "policy $1: exits 0" "$RC" 0
	eq "policy $1: one line on stdout" "$(printf '%s\n' "$OUT" | wc -l)" 1
	eq "policy $1: keys digest and policy" "$(js 'sorted(o)')" '["digest","policy"]'
	eq "policy $1: digest is sha256: and 64 hex digits" \
		"$(js 'str(__import__("re").fullmatch(r"sha256:[0-9a-f]{64}", o["digest"]) is not None)')" True
	eq "policy $1: policy.app.name" "$(js 'o["policy"]["app"]["name"]')" filesystem
	eq "policy $1: digest = SHA-256 of the canonical policy JSON" \
		"$(js '"sha256:" + __import__("hashlib").sha256(json.dumps(o["policy"], sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()')" \
		"$(js 'o["digest"]')"
}
bc policy apps/filesystem --json
policy_checks apps/filesystem
eq "policy apps/filesystem: /app is the app directory, read-only" "$(js 'o["policy"]["filesystem"]["mounts"]')" \
	"[{\"access\":\"ro\",\"source\":\"$W/apps/filesystem\",\"target\":\"/app\"}]"
eq "policy apps/filesystem: the workspace is the state dir" "$(js 'o["policy"]["filesystem"]["workspace"]')" "$STATE/filesystem/workspace"
eq "policy apps/filesystem: network none" "$(js 'o["policy"]["network"]["mode"]')" none
bc policy fscopy --json
policy_checks fscopy
D1=$(js 'o["digest"]'); A1=$(js 'o["policy"]["app"]["digest"]')
eq "policy fscopy: policy.app.digest is the app directory's digest (recomputed)" "$A1" "$(app_digest fscopy)"
bc policy fscopy --json
policy_checks "fscopy (again)"
eq "policy fscopy: digest stable across two invocations" "$(js 'o["digest"]')" "$D1"
printf '/* changed */\n' >>fscopy/main.c
bc policy fscopy --json
policy_checks "fscopy (main.c changed)"
D2=$(js 'o["digest"]'); A2=$(js 'o["policy"]["app"]["digest"]')
if [ "$D2" != "$D1" ] && [ -n "$D2" ]; then pass "policy fscopy: the digest changes when main.c changes"
else fail "policy fscopy: the digest changes when main.c changes" "$D1 -> $D2"; fi
if [ "$A2" != "$A1" ]; then pass "policy fscopy: policy.app.digest changes when main.c changes"
else fail "policy fscopy: policy.app.digest changes when main.c changes" "$A1 -> $A2"; fi
eq "policy fscopy: the new app digest is the directory's (recomputed)" "$A2" "$(app_digest fscopy)"
cp apps/filesystem/main.c fscopy/main.c
bc policy fscopy --json
eq "policy fscopy: restoring main.c restores the digest" "$(js 'o["digest"]')" "$D1"
chmod 600 fscopy/main.c
bc policy fscopy --json
if [ "$(js 'o["digest"]')" != "$D1" ]; then pass "policy fscopy: a mode change changes the digest"
else fail "policy fscopy: a mode change changes the digest" "unchanged $D1"; fi

# ================================================================ 4. schema validation
rpc filesystem --app-dir apps/filesystem --export write_file --input '{"path":"x"}'
eq "schema: missing required field exits 2" "$RC" 2
eq "schema: missing required field: code -32602" "$(js 'o["error"]["code"]')" -32602
eq "schema: missing required field: data.path" "$(js 'o["error"]["data"]["path"]')" '$'
eq "schema: missing required field: data.reason" "$(js 'o["error"]["data"]["reason"]')" 'missing required property `content`'
eq "schema: missing required field: stderr" "$ERRB" 'berth: invalid input: $: missing required property `content` (JSON-RPC -32602)'
[ ! -e "$STATE/filesystem/workspace/x" ] && pass "schema: the refused call wrote nothing" || fail "schema: the refused call wrote nothing" "x exists"
rpc filesystem --app-dir apps/filesystem --export write_file --input '{"path":7,"content":"x"}'
eq "schema: wrong type exits 2" "$RC" 2
eq "schema: wrong type: code and data" "$(js '[o["error"]["code"], o["error"]["data"]]')" \
	'[-32602,{"path":"$.path","reason":"expected string, got integer"}]'
rpc filesystem --app-dir apps/filesystem --export no_such_export --input '{}'
eq "schema: unknown export exits 2" "$RC" 2
eq "schema: unknown export: code -32601" "$(js 'o["error"]["code"]')" -32601
eq "schema: unknown export: message" "$(js 'o["error"]["message"]')" 'the app `filesystem` has no export `no_such_export`'
rpc filesystem --app-dir apps/filesystem --export write_file --input '[1,2]'
eq "schema: --input [1,2] exits 2" "$RC" 2
eq "schema: --input [1,2]: stderr names it" "$ERR" 'berth: rpc: --input `[1,2]` is not a JSON object'
eq "schema: --input [1,2]: nothing on stdout" "$OUT" ""
rpc filesystem --app-dir apps/filesystem --export write_file --input 'not-json'
eq "schema: --input not-json exits 2" "$RC" 2
has "schema: --input not-json: stderr names it" "$ERR" 'berth: rpc: --input `not-json` is not a JSON object: '
rpc filesystem --app-dir apps/filesystem --export write_file --input '{"path":"a","path":"b","content":""}'
eq "schema: --input with a duplicate key exits 2" "$RC" 2
has "schema: --input with a duplicate key: stderr names it" "$ERR" 'berth: rpc: --input `{"path":"a","path":"b","content":""}` is not a JSON object: '

# ================================================================ 5. export parity
for f in parity-missing parity-extra; do
	case $f in
	parity-missing) what='missing `declared_only`; extra none' ;;
	parity-extra) what='missing none; extra `undeclared`' ;;
	esac
	rpc "$f" --app-dir "fixtures/$f" --export ping --input '{}'
	eq "parity $f: berth rpc exits 125 (the app could not be booted)" "$RC" 125
	eq "parity $f: stderr names what is missing and extra" "$ERRB" \
		"berth: the app \`$f\` serves other exports than fixtures/$f/berth.yml declares: $what
berth: hint: make the exports in fixtures/$f/berth.yml and those the code registers the same"
	eq "parity $f: nothing on stdout" "$OUT" ""
	bc test "fixtures/$f"
	eq "parity $f: berth test exits 1" "$RC" 1
	eq "parity $f: berth test says not ok 1" "$(printf '%s\n' "$OUT" | sed -n 2p)" "not ok 1 - boot and export parity"
done
eq "parity: no process of the refused boots left" "$(procs "rpc parity-(missing|extra) --app-dir fixtures/")" ""

# ================================================================ 6. network:host
# The app reaches only its declared hosts, through berth's egress broker
# (docs/egress.md): it boots, and its policy is in proxy mode with the pattern.
rpc network-host --app-dir fixtures/network-host --export ping --input '{}'
eq "network: an app declaring network:host boots and answers (exit 0)" "$RC:$OUT" "0:{}"
bc policy fixtures/network-host --json
eq "network: berth policy exits 0" "$RC" 0
eq "network: the policy is in proxy mode" "$(js 'o["policy"]["network"]["mode"]')" proxy
eq "network: the policy allows exactly the declared host" "$(js '",".join(o["policy"]["network"]["allow_hosts"])')" "api.example.com:443"
bc test fixtures/network-host
eq "network: berth test passes" "$RC" 0

# ================================================================ 10. logs, without berth dev
PROBE_RE="/app/probe-$UNIQ\\.py"
rpc probe --app-dir probe --export log --input "{\"text\":\"direct-$UNIQ\"}"
eq "logs: log export exits 0" "$RC" 0
eq "logs: log export result" "$OUT" "{}"
hasline "logs: the app's stdout reaches berth's stderr as [probe] ..." "$ERR" "[probe] stdout: direct-$UNIQ"
hasline "logs: the app's stderr reaches berth's stderr as [probe] ..." "$ERR" "[probe] stderr: direct-$UNIQ"
rpc probe --app-dir probe --export ping
eq "rpc: no --input means {} (exit 0)" "$RC" 0
eq "rpc: no process of a one-shot call is left" "$(procs "$PROBE_RE")" ""

# ================================================================ 7. crash and hang under berth dev
start_dev dev1 "$W/probe"
if wait_for 15 test -S "$(sock probe)"; then pass "dev: control socket \$XDG_RUNTIME_DIR/berth/dev/probe.sock appears"
else fail "dev: control socket appears" "no $(sock probe)" "$(cat "$TD/dev1.err")"; fi
eq "dev: the socket directory is 0700" "$(stat -c %a "$XDG_RUNTIME_DIR/berth/dev" 2>&1)" 700
rpc probe --export ping --input '{}'
eq "dev: ping exits 0" "$RC" 0
hasline "dev: says how to call an export" "$(cat "$TD/dev1.err")" "berth: dev:   berth rpc probe --export pid --input '{}'"
eq "dev: ping tag v1, pid 2 in its namespace" "$(js '[o["tag"], o["pid"]]')" '["v1",2]'
B0=$(js 'o["boot"]'); P0=$(procs "$PROBE_RE")
if [[ "$P0" =~ ^[0-9]+$ ]]; then pass "dev: one app process on the host ($P0)"
else fail "dev: one app process on the host" "pgrep: '$P0'"; fi
rpc probe --export ping
eq "dev: ping without --input through berth dev exits 0" "$RC" 0
eq "dev: ping without --input through berth dev answers" "$(js 'o["tag"]')" v1
rpc probe --export crash --input '{}'
eq "dev: crash exits 1" "$RC" 1
eq "dev: crash: error -32002" "$(js 'o["error"]["code"]')" -32002
CRASHMSG='the app `probe` was killed by signal 11 (Segmentation fault) during the call to `crash`; the next call boots it again'
eq "dev: crash: the message names signal 11" "$(js 'o["error"]["message"]')" "$CRASHMSG"
eq "dev: crash: data.signal 11" "$(js 'o["error"]["data"]')" '{"signal":11}'
eq "dev: crash: stderr" "$ERR" "berth: $CRASHMSG (JSON-RPC -32002)"
[ ! -d "/proc/$P0" ] && pass "dev: the crashed process is gone" || fail "dev: the crashed process is gone" "$P0 alive"
rpc probe --export ping --input '{}'
eq "dev: ping after the crash exits 0 (rebooted)" "$RC" 0
B1=$(js 'o["boot"]'); P1=$(procs "$PROBE_RE")
if [ -n "$B1" ] && [ "$B1" != "$B0" ]; then pass "dev: a new boot after the crash"
else fail "dev: a new boot after the crash" "boot $B0 -> $B1"; fi
rpc probe --export hang --timeout 500 --input '{}'
eq "dev: hang --timeout 500 exits 1" "$RC" 1
eq "dev: hang: error -32003" "$(js 'o["error"]["code"]')" -32003
eq "dev: hang: message" "$(js 'o["error"]["message"]')" \
	'the call to `hang` timed out after 500 ms; the app `probe` was stopped (the next call boots it again)'
if [ "$MS" -ge 500 ] && [ "$MS" -lt 1500 ]; then pass "dev: hang: the timeout answer comes within ~1 s (${MS} ms)"
else fail "dev: hang: the timeout answer comes within ~1 s (500-1500 ms)" "took ${MS} ms"; fi
[ ! -d "/proc/$P1" ] && pass "dev: the hung process is gone" || fail "dev: the hung process is gone" "$P1 alive"
rpc probe --export ping --input '{}'
eq "dev: ping after the hang exits 0 (rebooted)" "$RC" 0
B2=$(js 'o["boot"]')
if [ -n "$B2" ] && [ "$B2" != "$B1" ]; then pass "dev: a new boot after the hang"
else fail "dev: a new boot after the hang" "boot $B1 -> $B2"; fi
eq "dev: exactly one app process on the host" "$(procs "$PROBE_RE" | wc -w)" 1
# the control socket's refusals, in docs/mcp.md's order: a NUL byte refuses the whole line
# (jansson would read {"id":1\0,...} as id 1), another app_dir before the bad parameters
R=$("$HOSTPY" -c '
import json,socket,sys
s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f=s.makefile("rb")
def ask(line):
    s.sendall(line + b"\n"); a=json.loads(f.readline()); e=a.get("error") or {}
    return "%s %s %s" % (a.get("id"), e.get("code"), e.get("message") or sorted(a.get("result", {})))
print(ask(b"{\"jsonrpc\":\"2.0\",\"id\":1\0,\"method\":\"info\"}"))
print(ask(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"call\",\"params\":{\"export\":\"ping\",\"input\":5,\"app_dir\":\"/elsewhere\"}}"))
print(ask(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"call\",\"params\":{\"export\":\"ping\",\"timeout_ms\":-1}}"))
print(ask(b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"call\",\"params\":{\"export\":\"ping\",\"input\":[]}}"))
print(ask(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"nope\"}"))
print(ask(b"[5]"))
print(ask(b"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"info\"}"))' "$(sock probe)" 2>&1)
eq "dev: the control socket's refusals and their order" "$R" "None -32700 not JSON
2 -32010 berth dev serves this app from another directory
3 -32602 timeout_ms must be an integer from 0 to 3600000
4 -32602 input must be an object
5 -32601 berth dev knows \`call\`, \`info\` and \`watch\`
None -32601 berth dev knows \`call\`, \`info\` and \`watch\`
6 None ['digest', 'exports', 'name', 'version']"

# ---------------------------------------------------------------- 10. logs under berth dev
rpc probe --export log --input "{\"text\":\"dev-$UNIQ\"}"
eq "dev logs: log export exits 0" "$RC" 0
sleep 0.2
DEVERR=$(cat "$TD/dev1.err")
hasline "dev logs: the app's stdout reaches berth dev's stderr as [probe] ..." "$DEVERR" "[probe] stdout: dev-$UNIQ"
hasline "dev logs: the app's stderr reaches berth dev's stderr as [probe] ..." "$DEVERR" "[probe] stderr: dev-$UNIQ"
hasnt "dev logs: the caller's stderr does not get them" "$ERR" "dev-$UNIQ"

# denials and usage errors through berth dev
rpc probe --export write --input '{"path":"/etc/x","content":"x"}'
eq "dev: a denial through berth dev exits 1" "$RC" 1
eq "dev: the denial's error on stdout (no denial text in data)" "$OUT" \
	'{"error":{"code":-32001,"message":"open `/etc/x`: Permission denied","data":{"errno":13,"errno_name":"EACCES","syscall":"open","path":"/etc/x"}}}'
hasline "dev: the denial block reaches the caller's stderr" "$ERR" "denied: open(2) on /etc/x (EACCES: permission denied)"
hasline "dev: the denial's fix line" "$ERR" "fix: none available — a filesystem scope may only name /workspace, /context, /tmp, /app"
rpc probe --export no_such_export --input '{}'
eq "dev: unknown export through berth dev: code -32601" "$(js 'o["error"]["code"]')" -32601
eq "dev: unknown export through berth dev exits 2, as without berth dev" "$RC" 2
rpc probe --export write --input '{"path":"x"}'
eq "dev: missing field through berth dev: code -32602" "$(js 'o["error"]["code"]')" -32602
eq "dev: missing field through berth dev exits 2, as without berth dev" "$RC" 2

# ================================================================ 8. reload
grep -q '^TAG = "v1"$' "probe/probe-$UNIQ.py" && pass "reload: the probe has TAG v1" || fail "reload: the probe has TAG v1" "not found"
t0=$(date +%s%3N)
sed -i 's/^TAG = "v1"$/TAG = "v2"/' "probe/probe-$UNIQ.py"
reloaded() { grep -q '^berth: dev: reloaded `probe` in ' "$TD/dev1.err"; }
if wait_for 2 reloaded; then pass "reload: the dev log says reloaded \`probe\` within 2 s ($(( $(date +%s%3N) - t0 )) ms)"
else fail "reload: the dev log says reloaded \`probe\` within 2 s" "not seen" "$(tail -n 5 "$TD/dev1.err")"; fi
RL=$(grep '^berth: dev: reloaded `probe` in ' "$TD/dev1.err" | head -n 1)
bc policy probe --json
NEWAPP=$(js 'o["policy"]["app"]["digest"]')
if [[ "$RL" =~ ^berth:\ dev:\ reloaded\ \`probe\`\ in\ [0-9]+\.[0-9]\ ms\ \(digest\ (sha256:[0-9a-f]{64})\)$ ]] && \
	[ "${BASH_REMATCH[1]}" == "$NEWAPP" ]; then pass "reload: the line names the new app digest ($NEWAPP)"
else fail "reload: the line names the new app digest" "line '$RL', berth policy says '$NEWAPP'"; fi
rpc probe --export ping --input '{}'
eq "reload: ping after the edit exits 0" "$RC" 0
eq "reload: ping shows the changed behaviour (tag v2)" "$(js 'o["tag"]')" v2
eq "reload: exactly one app process on the host" "$(procs "$PROBE_RE" | wc -w)" 1

# ---------------------------------------------------------------- stop berth dev
DEVTREE=$(procs "$W/probe") # berth dev, its sandbox's janitor and pid 1
stop_dev
eq "dev: berth dev exits 0 on SIGTERM" "$DEVRC" 0
eq "dev: the last log line says stopping" "$(tail -n 1 "$TD/dev1.err")" "berth: dev: stopping"
eq "dev: no app process left after berth dev stopped" "$(procs "$PROBE_RE")" ""
left=""; for p in $DEVTREE; do [ -d "/proc/$p" ] && left="$left $p"; done
eq "dev: no berth dev process left (was: $DEVTREE)" "$left" ""
[ ! -e "$(sock probe)" ] && pass "dev: no control socket left" || fail "dev: no control socket left" "$(ls -l "$(sock probe)")"
rpc probe --export ping --input '{}'
eq "dev: after berth dev, berth rpc boots the app itself (./probe)" "$RC:$(js 'o["tag"]')" "0:v2"

# ================================================================ 9. isolation between two apps
start_dev dev2 "$W/probe-a" "$W/probe-b"
if wait_for 15 test -S "$(sock probe-b)"; then pass "iso: berth dev serves probe-a and probe-b"
else fail "iso: berth dev serves probe-a and probe-b" "no $(sock probe-b)" "$(cat "$TD/dev2.err")"; fi
A_RE="/app/probe-a-$UNIQ\\.py"; B_RE="/app/probe-b-$UNIQ\\.py"
rpc probe-a --export ping --input '{}'
eq "iso: probe-a answers" "$RC" 0
BA=$(js 'o["boot"]'); PA=$(procs "$A_RE"); PB=$(procs "$B_RE")
if [[ "$PA" =~ ^[0-9]+$ ]] && [[ "$PB" =~ ^[0-9]+$ ]]; then pass "iso: one host process each (probe-a $PA, probe-b $PB)"
else fail "iso: one host process each" "probe-a '$PA' probe-b '$PB'"; fi
for ns in pid net mnt user ipc; do
	a=$(readlink "/proc/$PA/ns/$ns" 2>&1); b=$(readlink "/proc/$PB/ns/$ns" 2>&1); h=$(readlink "/proc/self/ns/$ns")
	if [ -n "$a" ] && [ "$a" != "$b" ] && [ "$a" != "$h" ] && [ "$b" != "$h" ]; then pass "iso: $ns namespaces differ (probe-a, probe-b, host)"
	else fail "iso: $ns namespaces differ" "a '$a' b '$b' host '$h'"; fi
done
if [ $IS_ROOT -eq 1 ]; then
	ua=$(stat -c %u "/proc/$PA" 2>&1); ub=$(stat -c %u "/proc/$PB" 2>&1)
	if [ "$ua" != "$ub" ] && [ "$ua" != 0 ] && [ "$ub" != 0 ]; then pass "iso (root): each app runs as its own non-root host uid ($ua, $ub)"
	else fail "iso (root): each app runs as its own non-root host uid" "probe-a $ua probe-b $ub"; fi
fi

# files
SECRET=s3cret-$UNIQ-$RANDOM
rpc probe-a --export write --input "{\"path\":\"secret.txt\",\"content\":\"$SECRET\"}"
eq "iso files: probe-a writes its secret" "$RC:$OUT" '0:{"bytes":'${#SECRET}'}'
eq "iso files: the secret is in probe-a's state dir on the host" "$(cat "$STATE/probe-a/workspace/secret.txt" 2>&1)" "$SECRET"
rpc probe-a --export read --input '{"path":"/workspace/secret.txt"}'
eq "iso files: probe-a reads it back (control)" "$RC:$(js 'o["content"]')" "0:$SECRET"
for p in secret.txt /workspace/secret.txt ../probe-a/workspace/secret.txt "$STATE/probe-a/workspace/secret.txt" \
	"/proc/$PA/cwd/secret.txt" "/proc/$PA/root/workspace/secret.txt"; do
	rpc probe-b --export read --input "{\"path\":\"$p\"}"
	eq "iso files: probe-b reading $p exits 1" "$RC" 1
	eq "iso files: probe-b reading $p: ENOENT" "$(js 'o["error"]["data"]["errno_name"]')" ENOENT
	hasnt "iso files: probe-b reading $p never gets the secret" "$OUT$ERR" "$SECRET"
done

# signals
rpc probe-b --export kill --input '{"pid":-1,"sig":9}'
# kill(-1) reaches every process of probe-b's own pid namespace except its pid 1
# and itself: there are none, so ESRCH; probe-a is not in that namespace.
eq "iso signals: probe-b kill(-1, SIGKILL) exits 1" "$RC" 1
eq "iso signals: probe-b kill(-1, SIGKILL): ESRCH" "$(js 'o["error"]["data"]["errno_name"]')" ESRCH
rpc probe-b --export kill --input "{\"pid\":$PA,\"sig\":9}"
eq "iso signals: probe-b kill(probe-a's host pid $PA): ESRCH" "$RC:$(js 'o["error"]["data"]["errno_name"]')" 1:ESRCH
sleep 0.3
rpc probe-a --export ping --input '{}'
eq "iso signals: probe-a still answers" "$RC" 0
eq "iso signals: probe-a was not rebooted (same boot token)" "$(js 'o["boot"]')" "$BA"
eq "iso signals: probe-a's host pid unchanged" "$(procs "$A_RE")" "$PA"

# sockets
ABS=berth-it-$UNIQ
rpc probe-a --export listen_unix --input "{\"name\":\"$ABS\"}"
eq "iso sockets: probe-a listens on the abstract socket @$ABS" "$RC:$OUT" "0:{}"
rpc probe-a --export connect_unix --input "{\"name\":\"$ABS\"}"
eq "iso sockets: probe-a reaches its own abstract socket (control)" "$RC:$OUT" '0:{"got":"secret-from-listener\n"}'
# Abstract unix names live in the network namespace: the lookup in probe-b's
# (own, empty) namespace finds nothing, so connect(2) fails ECONNREFUSED before
# Landlock's abstract-socket scope (which would say EPERM) is ever consulted.
rpc probe-b --export connect_unix --input "{\"name\":\"$ABS\"}"
eq "iso sockets: probe-b connect to @$ABS exits 1" "$RC" 1
eq "iso sockets: probe-b connect to @$ABS: ECONNREFUSED" "$(js 'o["error"]["data"]["errno_name"]')" ECONNREFUSED
hasnt "iso sockets: probe-b gets nothing from probe-a's listener" "$OUT" "secret-from-listener"
eq "iso sockets: the host cannot reach @$ABS either (ECONNREFUSED)" "$("$HOSTPY" -c '
import socket, sys, errno
s = socket.socket(socket.AF_UNIX)
try:
    s.connect("\0" + sys.argv[1]); print("CONNECTED")
except OSError as e:
    print(errno.errorcode[e.errno])' "$ABS")" ECONNREFUSED
# TCP: berth's Landlock ruleset handles LANDLOCK_ACCESS_NET_BIND_TCP and
# _CONNECT_TCP with no rule allowing any port (an app has no network), and
# Landlock's socket hooks run before the TCP stack: probe-a cannot even listen
# on 127.0.0.1 (bind EACCES), and probe-b's connect to 127.0.0.1:PORT fails
# EACCES although a host process listens there: separate network namespaces
# (which would give ECONNREFUSED) are never reached.
setpriv --pdeathsig KILL -- "$HOSTPY" -c '
import socket, sys, os
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1])); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    c, _ = s.accept(); open(sys.argv[2], "a").write("ACCEPTED\n"); c.sendall(b"host-secret\n"); c.close()
' "$TD/port" "$TD/accepted" </dev/null >/dev/null 2>&1 &
HOSTPIDS+=($!)
wait_for 5 test -s "$TD/port"; PORT=$(cat "$TD/port" 2>/dev/null)
if [[ "$PORT" =~ ^[0-9]+$ ]]; then pass "iso sockets: a host process listens on 127.0.0.1:$PORT"
else fail "iso sockets: a host process listens on 127.0.0.1" "no port"; PORT=1; fi
rpc probe-a --export listen_tcp --input "{\"port\":$PORT}"
eq "iso sockets: probe-a listen on TCP 127.0.0.1:$PORT exits 1" "$RC" 1
eq "iso sockets: probe-a TCP bind: EACCES (Landlock)" "$(js '[o["error"]["data"]["syscall"], o["error"]["data"]["errno_name"]]')" '["bind","EACCES"]'
rpc probe-b --export connect_tcp --input "{\"port\":$PORT}"
eq "iso sockets: probe-b connect to TCP 127.0.0.1:$PORT exits 1" "$RC" 1
eq "iso sockets: probe-b TCP connect: EACCES (Landlock)" "$(js '[o["error"]["data"]["syscall"], o["error"]["data"]["errno_name"]]')" '["connect","EACCES"]'
hasnt "iso sockets: probe-b gets nothing from the host listener" "$OUT" "host-secret"
[ ! -e "$TD/accepted" ] && pass "iso sockets: the host listener accepted no connection" || fail "iso sockets: the host listener accepted no connection" "$(cat "$TD/accepted")"
# UDP (Landlock does not handle it): probe-a binds 127.0.0.1:PORT2 in its own
# network namespace.  There, the port is bound (its datagrams are not refused);
# in probe-b's namespace nothing is bound (ICMP port unreachable: ECONNREFUSED);
# and the host can bind the same port.
PORT2=$("$HOSTPY" -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
rpc probe-a --export bind_udp --input "{\"port\":$PORT2}"
eq "iso udp: probe-a binds UDP 127.0.0.1:$PORT2" "$RC:$OUT" "0:{}"
rpc probe-a --export send_udp --input "{\"port\":$PORT2}"
eq "iso udp: in probe-a's namespace the port is bound (no refusal)" "$RC:$OUT" '0:{"timed_out":true}'
rpc probe-b --export send_udp --input "{\"port\":$PORT2}"
eq "iso udp: probe-b sending to 127.0.0.1:$PORT2: ECONNREFUSED" "$RC:$(js 'o["error"]["data"]["errno_name"]')" 1:ECONNREFUSED
eq "iso udp: the host can bind UDP 127.0.0.1:$PORT2 (probe-a's bind is not on the host)" "$("$HOSTPY" -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.bind(("127.0.0.1", int(sys.argv[1]))); print("BOUND")
except OSError as e:
    print(e.errno)' "$PORT2")" BOUND

rpc probe-a --export ping --input '{}'
eq "iso: probe-a still the same boot after all probes" "$RC:$(js 'o["boot"]')" "0:$BA"
DEVTREE=$(procs "$W/probe-[ab]")
stop_dev
eq "iso: berth dev exits 0 on SIGTERM" "$DEVRC" 0
eq "iso: no app process left" "$(procs "$A_RE")$(procs "$B_RE")" ""
left=""; for p in $DEVTREE; do [ -d "/proc/$p" ] && left="$left $p"; done
eq "iso: no berth dev process left (was: $DEVTREE)" "$left" ""
[ ! -e "$(sock probe-a)" ] && [ ! -e "$(sock probe-b)" ] && pass "iso: no control sockets left" \
	|| fail "iso: no control sockets left" "$(ls -l "$XDG_RUNTIME_DIR/berth/dev")"

# ================================================================ the end: nothing leaked
for p in "${HOSTPIDS[@]}"; do kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
HOSTPIDS=()
eq "end: no process of this run left on the host" "$(procs "$TOP")$(procs "probe(-[ab])?-$UNIQ\\.py")" ""
eq "end: the control socket directory is empty" "$(ls -A "$XDG_RUNTIME_DIR/berth/dev" 2>&1)" ""
[ ! -e /tmp/escape.txt ] && [ ! -e "$ETC" ] && pass "end: no escape file on the host" || fail "end: no escape file on the host" "found"
eq "end: berth test left no state in \$XDG_STATE_HOME" \
	"$(cd "$STATE" && ls -d notes code-interpreter demo-py demo-c 2>/dev/null)" ""
echo "# took $(( $(date +%s) - T0 )) s as uid $ME"

echo "1..$T"
[ "$FAILS" -eq 0 ] || exit 1
exit 0
