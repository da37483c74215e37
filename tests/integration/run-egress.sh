#!/usr/bin/env bash
# Egress through berth's broker (`berth run --allow-host`), end to end with real
# clients (curl, python urllib) inside the sandbox and servers on the host's
# loopback.  Loopback is a refused range: only an exactly declared IP literal
# reaches it (explicit beats ambient), which is what these tests declare.
# The network-namespace test hosts with DNS and TLS of docs/egress.md are not
# here yet.
#
# usage: run-egress.sh /path/to/berth          TAP output; exit 1 on a failure
set -u
export LC_ALL=C
unset BERTH_TEST_FORCE_OFF
[ $# -eq 1 ] || { echo "usage: $0 /path/to/berth" >&2; exit 2; }
BERTH=$(readlink -f -- "$1")
REPO=$(cd "$(dirname "$0")/../.." && pwd)   # apps/web-fetch
HOSTPY=/usr/bin/python3
T=0 FAILS=0
pass() { T=$((T + 1)); echo "ok $T - $1"; }
fail() { T=$((T + 1)); FAILS=$((FAILS + 1)); echo "not ok $T - $1 # $2"; shift 2; local l; for l in "$@"; do printf '%s\n' "$l" | head -n 6 | sed 's/^/#   /'; done; }
eq() { if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'" "stderr: $ERR"; fi; }
has() { if printf '%s' "$2" | grep -qF -- "$3"; then pass "$1"; else fail "$1" "'$3' not found" "in: $2"; fi; }

TOP=$(mktemp -d /tmp/berth-egress.XXXXXX) || exit 1
chmod 755 "$TOP"
WS=$TOP/ws; mkdir "$WS"
SRV=()
cleanup() { local p; for p in "${SRV[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$TOP"; }
trap cleanup EXIT

# Two HTTP servers on the host's loopback, on ports the kernel picks.
serve() { # serve FILE: starts a server that writes its port to FILE
	"$HOSTPY" -c '
import http.server, socketserver, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ("hello from " + str(self.server.server_address[1]) + " path " + self.path).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
s = socketserver.ThreadingTCPServer(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(s.server_address[1]))
s.serve_forever()' "$1" </dev/null >/dev/null 2>&1 &
	SRV+=($!)
	for _ in $(seq 50); do [ -s "$1" ] && break; sleep 0.1; done
}
serve "$TOP/p1"; serve "$TOP/p2"
P1=$(cat "$TOP/p1"); P2=$(cat "$TOP/p2")
[ -n "$P1" ] && [ -n "$P2" ] && pass "precondition: two host servers ($P1, $P2)" || fail "precondition: host servers" "no port"

cd "$WS" || exit 1
run() { "$BERTH" run "$@" </dev/null >"$TOP/out" 2>"$TOP/err"; RC=$?; OUT=$(cat "$TOP/out"); ERR=$(cat "$TOP/err"); }

# 1. Allowed: curl through HTTP_PROXY, python urllib with an explicit proxy (NO_PROXY, which
#    names the sandbox's own loopback, cleared for that one call: the host server is on 127.0.0.1 too).
run --allow-host "127.0.0.1:$P1" -- sh -c "curl -s --noproxy '' http://127.0.0.1:$P1/a; echo; \
NO_PROXY= no_proxy= python3 -c 'import urllib.request,os; print(urllib.request.build_opener(urllib.request.ProxyHandler({\"http\": os.environ[\"HTTP_PROXY\"]})).open(\"http://127.0.0.1:$P1/b\").read().decode())'"
eq "allowed: berth exits 0" "$RC" 0
eq "allowed: curl and urllib reach the declared host through the broker" "$OUT" "hello from $P1 path /a
hello from $P1 path /b"

# 2. The environment inside.
run --allow-host "127.0.0.1:$P1" -- sh -c 'echo "$HTTP_PROXY|$HTTPS_PROXY|$http_proxy|$ALL_PROXY|$NO_PROXY"'
case $OUT in
http://127.0.0.1:*"|"http://127.0.0.1:*"|"http://127.0.0.1:*"|"socks5h://127.0.0.1:*"|localhost,127.0.0.1,::1") pass "env: proxy variables point at the sandbox's loopback" ;;
*) fail "env: proxy variables" "got '$OUT'" ;;
esac

# 2b. berth owns the proxy variables: --env of one of them is refused, not overridden in silence.
run --allow-host "127.0.0.1:$P1" --env NO_PROXY=example.com -- true
eq "env: --env NO_PROXY with the broker exits 2" "$RC" 2
has "env: and says why" "$ERR" "\`--env NO_PROXY\` cannot be used with the egress broker"

# 3. Undeclared port and undeclared host: 403 naming the rule; summary at exit.
run --allow-host "127.0.0.1:$P1" -- sh -c "curl -s --noproxy '' -o /dev/null -w '%{http_code}' http://127.0.0.1:$P2/; echo; curl -s --noproxy '' -w '%{http_code}' http://203.0.113.7/"
eq "refused: undeclared port and undeclared host get 403" "$(printf '%s\n' "$OUT" | sed -n '1p;$p' | sed 's/.*\(...\)$/\1/' | tr '\n' ' ')" "403 403 "
has "refused: the 403 body names the rule" "$OUT" "203.0.113.7:80 (not declared)"
has "refused: summary line on berth's stderr" "$ERR" "berth: refused: 127.0.0.1:$P2 ("
has "refused: summary line for the other host" "$ERR" "berth: refused: 203.0.113.7:80 (not declared)"

# 4. No way around the broker: a direct connection to the declared host server
#    lands on the broker's listener for that port (docs/egress.md "Clients that
#    ignore the proxy") and reaches the server through it; an undeclared port of
#    the same host, and any other port of the sandbox's own loopback, is refused
#    by Landlock (the namespace has only loopback).
run --allow-host "127.0.0.1:$P1" -- python3 -c "
import socket, errno
for port in ($P1, $P2, 9):
    try:
        s = socket.create_connection(('127.0.0.1', port), timeout=3)
        s.sendall(b'GET /direct HTTP/1.0\\r\\n\\r\\n'); b = b''
        while (d := s.recv(4096)): b += d
        print(b.split(b'\\r\\n\\r\\n')[1].decode())
    except OSError as e: print(errno.errorcode.get(e.errno, e.errno), port)"
eq "direct: the declared literal is reached through the broker, other ports are refused by Landlock" "$(echo $OUT)" "hello from $P1 path /direct EACCES $P2 EACCES 9"

# 4b. TCP Fast Open connects without the hook Landlock checks: seccomp refuses it.
run --allow-host "127.0.0.1:$P1" -- python3 -c "
import socket
for what, f in (('sendto', lambda s: s.sendto(b'x', 0x20000000, ('127.0.0.1', $P1))),
                ('setsockopt', lambda s: s.setsockopt(6, 30, 1))):
    try: f(socket.socket()); print(what, 'ALLOWED')
    except OSError as e: print(what, e.errno)"
eq "direct: TCP Fast Open (sendto MSG_FASTOPEN, TCP_FASTOPEN_CONNECT) is EOPNOTSUPP" "$(echo $OUT)" "sendto 95 setsockopt 95"

# 4c. Landlock's TCP rules cover IPPROTO_TCP sockets only (Linux >= 6.14 and stable kernels): an
#     MPTCP socket bound and connected on the sandbox's loopback past the one-port rule.  seccomp
#     refuses every transport but TCP, UDP and ICMP with EPROTONOSUPPORT (93); TCP and UDP still work.
run --allow-host "127.0.0.1:$P1" -- python3 -c "
import socket
out = []
for name, fam, typ, proto in (('mptcp', 2, 1, 262), ('mptcp6', 10, 1, 262), ('sctp', 2, 1, 132),
                              ('sctp-seqpacket', 2, 5, 0), ('sctp6-seqpacket', 10, 5, 0), ('l2tp', 2, 2, 115),
                              ('udplite', 2, 2, 136), ('smc', 2, 1, 256), ('dccp', 2, 6, 33), ('dccp0', 10, 6, 0)):
    try:
        s = socket.socket(fam, typ, proto)
    except OSError as e:
        out.append('%s %d' % (name, e.errno)); continue
    try:
        s.bind(('127.0.0.1' if fam == 2 else '::1', 0)); s.listen()
        c = socket.socket(fam, typ, proto); c.connect(s.getsockname()); out.append(name + ' CONNECTED')
    except OSError as e:
        out.append('%s made %d' % (name, e.errno))
for name, fam, typ, proto in (('tcp', 2, 1, 6), ('tcp0', 10, 1, 0), ('udp', 2, 2, 17), ('unix-seqpacket', 1, 5, 0)):
    try: socket.socket(fam, typ, proto); out.append(name + ' ok')
    except OSError as e: out.append('%s %d' % (name, e.errno))
print(', '.join(out))"
eq "direct: MPTCP, SCTP, L2TP, UDP-Lite, SMC and DCCP sockets are EPROTONOSUPPORT; TCP, UDP, unix are not" "$OUT" \
	"mptcp 93, mptcp6 93, sctp 93, sctp-seqpacket 93, sctp6-seqpacket 93, l2tp 93, udplite 93, smc 93, dccp 93, dccp0 93, tcp ok, tcp0 ok, udp ok, unix-seqpacket ok"

# 5. No DNS from inside: no resolver is reachable.
run --allow-host "127.0.0.1:$P1" -- python3 -c "
import socket
try: socket.getaddrinfo('example.com', 80); print('RESOLVED')
except socket.gaierror as e: print('NO-DNS')"
eq "dns: names do not resolve inside" "$OUT" "NO-DNS"

# 6. SOCKS5 (socks5h: the broker resolves), allowed and refused.
run --allow-host "127.0.0.1:$P1" -- sh -c "curl -s --noproxy '' --socks5-hostname \"\${ALL_PROXY#socks5h://}\" http://127.0.0.1:$P1/s; echo; curl -s --noproxy '' -o /dev/null -w '%{http_code}' --socks5-hostname \"\${ALL_PROXY#socks5h://}\" http://127.0.0.1:$P2/; echo \" rc=\$?\""
has "socks5: allowed host reached" "$OUT" "hello from $P1 path /s"
has "socks5: undeclared port refused (curl: 97, connection refused by proxy)" "$OUT" "rc=97"

# 6b. A flood of refusals cannot hide the ones after it: the summary says how many it leaves out.
run --allow-host "127.0.0.1:$P1" -- sh -c 'for p in $(seq 1 70); do curl -s --noproxy "" -o /dev/null "http://198.51.100.1:$p/"; done'
eq "summary: 64 destinations listed" "$(printf '%s\n' "$ERR" | grep -c '^berth: refused: 198.51.100.1:')" 64
has "summary: and the rest counted" "$ERR" "berth: refused: ... and 6 more attempts to destinations not listed above"

# 7. A private/loopback literal under a wildcard never passes; bad patterns are usage errors.
run --allow-host "*.example.com" -- curl -s --noproxy '' -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P1/"
eq "explicit beats ambient: 127.0.0.1 is refused when only *.example.com is declared" "$OUT" "403"
run --allow-host "*" -- true
eq "usage: a bare * is refused with exit 2" "$RC" 2
run --allow-host "127.0.0.1:$P1" --network host -- true
eq "usage: --allow-host with --network host is exit 2" "$RC" 2

# 8. The policy records the rules.
"$BERTH" run --allow-host "API.Example.com" --allow-host "*.github.com:443" --dry-run --json -- true >"$TOP/out" 2>&1
OUT=$(cat "$TOP/out")
has "policy: network mode proxy with the canonical patterns" "$OUT" '"network":{"allow_hosts":["api.example.com","*.github.com:443"],"mode":"proxy"}'

# 9. An app: apps/web-fetch with its host list replaced by the test server.
WF=$TOP/web-fetch; cp -r "$REPO/apps/web-fetch" "$WF"; chmod -R a+rX "$WF"
sed -i "s|^  - network:host:example.com\$|  - network:host:127.0.0.1:$P1|; /wikipedia/d" "$WF/berth.yml"
export XDG_STATE_HOME=$TOP/state
"$BERTH" rpc web-fetch --app-dir "$WF" --export fetch_text --input "{\"url\":\"http://127.0.0.1:$P1/app\"}" >"$TOP/out" 2>"$TOP/err"
RC=$?; OUT=$(cat "$TOP/out"); ERR=$(cat "$TOP/err")
eq "app: web-fetch reaches its declared host (exit 0)" "$RC" 0
has "app: web-fetch gets the page" "$OUT" "\"text\":\"hello from $P1 path /app\""
"$BERTH" rpc web-fetch --app-dir "$WF" --export fetch_text --input "{\"url\":\"http://127.0.0.1:$P2/\"}" >"$TOP/out" 2>"$TOP/err"
RC=$?; OUT=$(cat "$TOP/out"); ERR=$(cat "$TOP/err")
has "app: an undeclared port is 403 from the broker" "$OUT" "\"status\":403"
has "app: and berth says so at exit" "$ERR" "berth: refused: 127.0.0.1:$P2"
"$BERTH" policy "$WF" --json >"$TOP/out" 2>&1; OUT=$(cat "$TOP/out")
has "app: the policy is in proxy mode with the declared host" "$OUT" "\"network\":{\"allow_hosts\":[\"127.0.0.1:$P1\"],\"mode\":\"proxy\"}"

# 10. At most 32 distinct declared ports get a listener for clients that ignore the proxy
#     (docs/egress.md): 32 run, 33 are a usage error (exit 2) before anything runs, and the
#     message names what declared them, flags or an app's capabilities.
PORTS=(); for i in $(seq 1 33); do PORTS+=(--allow-host "127.0.0.1:$((20000 + i))"); done
run "${PORTS[@]:0:64}" -- touch ran-32
eq "ports: 32 distinct declared ports run (exit 0)" "$RC:$(ls ran-32 2>/dev/null)" "0:ran-32"
run "${PORTS[@]}" -- touch ran-33
eq "ports: 33 are a usage error (exit 2)" "$RC" 2
has "ports: the message says why" "$ERR" "berth: the allow-host patterns declare more than 32 distinct ports"
eq "ports: and the command did not run" "$(ls ran-33 2>/dev/null)" ""
WF33=$TOP/wf33; cp -r "$WF" "$WF33"
for i in $(seq 1 33); do echo "  - network:host:127.0.0.1:$((20000 + i))"; done >"$TOP/caps33"
sed -i "s/^name: web-fetch\$/name: web-fetch-33/; /network:host:/d; /^capabilities:\$/r $TOP/caps33" "$WF33/berth.yml"
"$BERTH" rpc web-fetch-33 --app-dir "$WF33" --export fetch_text --input '{"url":"http://127.0.0.1/"}' >"$TOP/out" 2>"$TOP/err"
RC=$?; ERR=$(cat "$TOP/err")
eq "ports: an app declaring 33 is a usage error too (exit 2)" "$RC" 2
has "ports: the message names the app's capabilities" "$ERR" "the app's \`network:host\` capabilities declare more than 32 distinct ports"

# 11. Every decision reaches the audit trail as a net.decision record (docs/audit.md).
export BERTH_AUDIT_DIR=$TOP/audit
run --allow-host "127.0.0.1:$P1" -- sh -c "curl -s --noproxy '' -o /dev/null http://127.0.0.1:$P1/x; curl -s --noproxy '' -o /dev/null http://127.0.0.1:$P2/"
NET=$("$BERTH" audit --kind net.decision --json 2>&1 | python3 -c '
import sys, json
for l in sys.stdin:
    p = json.loads(l)["payload"]
    print(p["decision"], p["host"], p["port"], p["address"] or "-", p["bytes_down"] > 0)')
eq "audit: the allowed and the refused connection are recorded, in order" "$NET" "allowed 127.0.0.1 $P1 127.0.0.1 True
refused 127.0.0.1 $P2 - False"
has "audit: the log verifies" "$("$BERTH" audit verify 2>&1)" "intact: 6 records"
unset BERTH_AUDIT_DIR

# ...at most 1000 a run for each outcome, then one summary: a sandbox cannot fill the disk
# through the audit log by asking in a loop.
export BERTH_AUDIT_DIR=$TOP/audit2
run --allow-host "127.0.0.1:$P1" -- python3 -c '
import os, socket
h, p = os.environ["HTTP_PROXY"].rsplit(":", 1)
n = 0
for i in range(1100):
    s = socket.create_connection((h[len("http://"):], int(p)))
    s.sendall(b"CONNECT 203.0.113.9:443 HTTP/1.1\r\nHost: 203.0.113.9:443\r\n\r\n")
    n += s.recv(64).startswith(b"HTTP/1.1 403")
    s.close()
print(n)'
eq "audit cap: 1100 refused CONNECTs all got 403" "$OUT" 1100
NET=$("$BERTH" audit --kind net.decision --json 2>&1 | python3 -c '
import sys, json
refused = 0; summary = None
for l in sys.stdin:
    p = json.loads(l)["payload"]
    if p["decision"] == "refused": refused += 1
    if p["decision"] == "summary": summary = p
print(refused, summary and summary["refused_not_recorded"])')
eq "audit cap: 1000 refusals recorded one by one, 100 summed up" "$NET" "1000 100"
unset BERTH_AUDIT_DIR

# 10. --network api-only: the preset shipped with berth.
"$BERTH" run --network api-only --dry-run --json -- true >"$TOP/out" 2>&1; OUT=$(cat "$TOP/out")
has "api-only: the preset's hosts" "$OUT" '"allow_hosts":["api.anthropic.com","platform.claude.com","api.openai.com","auth.openai.com","chatgpt.com","github.com","codeload.github.com","objects.githubusercontent.com"],"mode":"proxy"'
run --network api-only -- curl -s --noproxy '' -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P1/"
eq "api-only: anything else is 403" "$OUT" "403"

echo "1..$T"
[ "$FAILS" -eq 0 ]
