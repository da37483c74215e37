#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The egress broker's edges outside the broker itself (docs/egress.md,
# docs/audit.md): the values of --dns, --allow-host and --network at the CLI
# (a clear message naming the value, exit 2, nothing written to the audit
# trail, no terminal control bytes echoed), the network preset file (a
# commented-out host stays commented out, a FIFO or /dev/zero does not hang
# berth), and the cap on `net.decision` records in an agent session, which
# is a run too (a sandbox connecting in a loop must not fill the disk).
#
# usage: run-egress-edges.sh /path/to/berth [stage-dir]   (stage-dir: accepted, unused)
#   Works as root and as an unprivileged user.  ok/FAIL lines, a final
#   count; exit 1 on a failure.
set -u
export LC_ALL=C
unset BERTH_TEST_FORCE_OFF
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 /path/to/berth [stage-dir]" >&2; exit 2; }
BERTH=$(readlink -f -- "$1")
T=0 FAILS=0
pass() { T=$((T + 1)); echo "ok $T - $1"; }
fail() { T=$((T + 1)); FAILS=$((FAILS + 1)); echo "not ok $T - $1 # $2"; shift 2; local l; for l in "$@"; do printf '%s\n' "$l" | head -n 8 | sed 's/^/#   /'; done; }
eq() { if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'" "stderr: ${ERR:-}"; fi; }
has() { if printf '%s' "$2" | grep -qF -- "$3"; then pass "$1"; else fail "$1" "'$3' not found" "in: $2"; fi; }
no_esc() { if printf '%s' "$2" | grep -q $'\033'; then fail "$1" "a raw ESC byte reached the terminal" "$2"; else pass "$1"; fi; }

TOP=$(mktemp -d /tmp/berth-egress-edges.XXXXXX) || exit 1
chmod 755 "$TOP"
cleanup() {
	XDG_RUNTIME_DIR=$TOP/run XDG_STATE_HOME=$TOP/state XDG_CONFIG_HOME=$TOP/config \
		"$BERTH" stop --all --grace 0 >/dev/null 2>&1
	rm -rf "$TOP"
}
trap cleanup EXIT
WS=$TOP/ws; mkdir "$WS" && chmod 777 "$WS"
cd "$WS" || exit 1
export BERTH_AUDIT_DIR=$TOP/audit XDG_CONFIG_HOME=$TOP/config
run() { timeout 20 "$BERTH" run "$@" </dev/null >"$TOP/out" 2>"$TOP/err"; RC=$?; OUT=$(cat "$TOP/out"); ERR=$(cat "$TOP/err"); }
records() { [ -d "$BERTH_AUDIT_DIR" ] && "$BERTH" audit --json 2>/dev/null | wc -l | tr -d ' ' || echo 0; }

# 1. --dns is checked with the flags: before, a bad value passed --dry-run and a run
#    wrote run.start, policy and run.stop before the broker refused it.
for v in foo '1.2.3.4:0' '1.2.3.4:053' '1.2.3.4:65536' '0x7f.1' '[::1' '[::1]x' 'fe80::1%eth0' '192.0.2.1,192.0.2.2' ''; do
	run --dns "$v" --dry-run --json -- true
	eq "--dns \`$v\` --dry-run: exit 2" "$RC" 2
	has "--dns \`$v\`: the message names the flag and the value" "$ERR" "invalid --dns \`$v\`: expected"
done
# No one server answers at "any", a multicast group or the broadcast address.
for v in 0.0.0.0 0.0.0.0:53 '[::]' :: 224.0.0.251 239.255.255.250:53 255.255.255.255 ff02::fb '[ff05::1:3]:547'; do
	run --dns "$v" --dry-run --json -- true
	eq "--dns \`$v\` --dry-run: exit 2" "$RC" 2
	eq "--dns \`$v\`: the message says why" "$ERR" "berth: invalid --dns \`$v\`: not a unicast address (unspecified, multicast or broadcast)
berth: hint: name the DNS server's own address, such as \`192.0.2.53\`"
done
run --dns 0.0.0.0 --allow-host example.com -- true
eq "--dns 0.0.0.0: a run exits 2" "$RC" 2
eq "--dns 0.0.0.0: nothing written to the audit trail" "$(records)" 0
run --dns foo -- true
eq "--dns foo: a run exits 2" "$RC" 2
eq "--dns foo: nothing written to the audit trail" "$(records)" 0
run --dns "$(printf '192.0.2.1\033]0;pwned\007')" -- true
no_esc "--dns with control bytes: escaped in the message" "$ERR"
has "--dns with control bytes: shown as \\x1b" "$ERR" 'invalid --dns `192.0.2.1\x1b]0;pwned\x07`'
for v in 192.0.2.53 192.0.2.53:5353 '[2001:db8::53]:53' '2001:db8::53' 223.255.255.254 240.0.0.1 '[fe80::53]'; do
	run --dns "$v" --dry-run --json -- true
	eq "--dns \`$v\`: accepted" "$RC" 0
done

# --network none and --allow-host (or --dns) contradict each other: refused, not a silent proxy.
run --network none --allow-host example.com -- true
eq "--network none --allow-host: exit 2" "$RC" 2
has "--network none --allow-host: says they contradict" "$ERR" "--network none and --allow-host/--dns contradict each other"
eq "--network none --allow-host: nothing written to the audit trail" "$(records)" 0
run --network none --dns 192.0.2.53 --dry-run --json -- true
eq "--network none --dns: exit 2" "$RC" 2
run --allow-host example.com --dry-run --json -- true
has "--allow-host alone still implies the proxy" "$OUT" '"mode":"proxy"'

# 2. --allow-host and --network values with control bytes are escaped, not echoed.
run --allow-host "$(printf 'a\033[2Jb.example')" -- true
eq "--allow-host with ESC: exit 2" "$RC" 2
no_esc "--allow-host with ESC: escaped in the message" "$ERR"
has "--allow-host with ESC: shown as \\x1b" "$ERR" 'invalid --allow-host `a\x1b[2Jb.example`'
run --network "$(printf 'proxy\033[31m')" -- true
eq "--network with ESC: exit 2" "$RC" 2
no_esc "--network with ESC: escaped in the message" "$ERR"
run "--$(printf 'x\033[31m')" -- true
no_esc "an unknown option with ESC: escaped in the message" "$ERR"

# 3. The network preset ($XDG_CONFIG_HOME/berth/network/api-only).
P=$XDG_CONFIG_HOME/berth/network/api-only
mkdir -p "$(dirname "$P")"
hosts() { printf '%s' "$OUT" | python3 -c 'import json,sys; print(",".join(json.load(sys.stdin)["policy"]["network"]["allow_hosts"]))' 2>/dev/null; }
LONG=$(head -c 510 /dev/zero | tr '\0' x)
printf '#%s evil.example\ngood.example\n' "$LONG" >"$P"
run --network api-only --dry-run --json -- true
eq "preset: a 524-byte comment line is refused (exit 2)" "$RC" 2
has "preset: the message names the file and the line" "$ERR" "the network preset \`$P\`, line 1, is longer than 511 bytes"
case $OUT in *evil.example*) fail "preset: the end of a long comment is not a pattern" "$OUT" ;; *) pass "preset: the end of a long comment is not a pattern" ;; esac
printf '#%s\ngood.example\n' "$LONG" >"$P"
run --network api-only --dry-run --json -- true
eq "preset: a 511-byte comment line is a comment" "$RC:$(hosts)" "0:good.example"
printf 'a.example\n\n# c\nb.example # d\n*\n' >"$P"
run --network api-only -- true
eq "preset: a bad pattern: exit 2" "$RC" 2
has "preset: a bad pattern: file and line" "$ERR" "in the network preset \`$P\`, line 5: invalid --allow-host \`*\`"
printf 'a.example\0b.example\n' >"$P"
run --network api-only -- true
has "preset: a NUL byte: exit 2, says so" "$RC:$ERR" "2:berth: the network preset \`$P\` contains a NUL byte"
head -c 70000 /dev/zero | tr '\0' '\n' >"$P"
run --network api-only -- true
has "preset: larger than 64 KiB: exit 2, says so" "$RC:$ERR" "2:berth: the network preset \`$P\` is larger than 65536 bytes"
rm -f "$P"; ln -s /dev/zero "$P"
run --network api-only -- true
has "preset: /dev/zero: exit 2 at once (before: read forever)" "$RC:$ERR" "2:berth: the network preset \`$P\` is not a regular file"
rm -f "$P"; mkfifo "$P"
run --network api-only -- true
has "preset: a FIFO: exit 2 at once (before: blocked in open)" "$RC:$ERR" "2:berth: the network preset \`$P\` is not a regular file"
rm -f "$P"; printf '  a.example  \r\nb.example:443 # x\nc.example' >"$P"
run --network api-only --dry-run --json -- true
eq "preset: CRLF, blanks, comments, no final newline" "$RC:$(hosts)" "0:a.example,b.example:443,c.example"
rm -f "$P"

# 4. An agent session is a run: at most 1000 net.decision records per outcome,
#    then one summary record (before: every refusal recorded, and waited for).
export XDG_RUNTIME_DIR=$TOP/run XDG_STATE_HOME=$TOP/state BERTH_AUDIT_DIR=$TOP/audit-session
mkdir -p "$XDG_RUNTIME_DIR" "$XDG_CONFIG_HOME/berth/profiles" "$TOP/t" && chmod 700 "$XDG_RUNTIME_DIR"
cat >"$TOP/t/flood.py" <<'EOF'
import os, socket, sys
h, p = os.environ["HTTP_PROXY"].rsplit(":", 1)
n = 0
for i in range(int(sys.argv[1])):
    s = socket.create_connection((h[len("http://"):], int(p)))
    s.sendall(b"CONNECT 203.0.113.9:443 HTTP/1.1\r\n\r\n")
    n += s.recv(64).startswith(b"HTTP/1.1 403")
    s.close()
print("refused", n, flush=True)
EOF
chmod -R a+rX "$TOP/t"
printf "command: [python3, /opt/t/flood.py, '1100']\nnetwork: none\nprompt: none\noptions: [--ro, '%s:/opt/t']\n" "$TOP/t" \
	>"$XDG_CONFIG_HOME/berth/profiles/flood.yml"
"$BERTH" spawn flood --name flood --allow-host 127.0.0.1:9 </dev/null >"$TOP/out" 2>"$TOP/err"
eq "session: spawn exits 0" "$?" 0
for _ in $(seq 120); do "$BERTH" ps --json flood 2>/dev/null | grep -q '"alive":true' || break; sleep 0.5; done
has "session: 1100 CONNECTs all refused (403)" "$(cat "$XDG_STATE_HOME/berth/sessions/flood/output.log" 2>&1)" "refused 1100"
NET=$("$BERTH" audit --kind net.decision --json 2>&1 | python3 -c '
import sys, json
refused = 0; summary = None
for l in sys.stdin:
    p = json.loads(l)["payload"]
    if p["decision"] == "refused": refused += 1
    if p["decision"] == "summary": summary = p
print(refused, summary and summary["refused_not_recorded"], summary and summary["recorded_each"])')
eq "session: 1000 refusals recorded one by one, 100 summed up" "$NET" "1000 100 1000"

echo "1..$T"
echo "# $((T - FAILS)) passed, $FAILS failed"
[ "$FAILS" -eq 0 ]
