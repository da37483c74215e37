#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Egress through berth's broker against the test hosts of tests/netns/hosts.sh:
# servers in network namespaces behind veth links, on public-looking addresses,
# with DNS (dnsmasq, logging every query) given to the broker with `--dns`, TLS
# with a CA trusted only through an explicit file, a dumb-HTTP git repository,
# a rebinding DNS responder, and servers on a private address that record any
# connection they get.  Clients run inside `berth run`; what they must not
# reach is checked on the far side (the servers' logs), not only by the
# client's error.  What each check covers: docs/egress.md, "Test hosts".
#
# usage: run-netns-egress.sh /path/to/berth [stage-dir]     (stage-dir: accepted, unused)
#   The hosts are found through $BERTH_TEST_HOSTS_DIR/env (default
#   /run/berth-test-hosts/env), written by `tests/netns/hosts.sh up` (root).
#   Run by root with no hosts up, the script brings them up itself and removes
#   them at exit.  Run by another user with no hosts up, it fails (a skipped
#   test would pass silently).  TAP output, a final count; exit 1 on a failure.
set -u
export LC_ALL=C
unset BERTH_TEST_FORCE_OFF
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 /path/to/berth [stage-dir]" >&2; exit 2; }
BERTH=$(readlink -f -- "$1")
HERE=$(cd "$(dirname "$0")/.." && pwd)   # tests/
HOSTS_DIR=${BERTH_TEST_HOSTS_DIR:-/run/berth-test-hosts}
T=0 FAILS=0
pass() { T=$((T + 1)); echo "ok $T - $1"; }
fail() { T=$((T + 1)); FAILS=$((FAILS + 1)); echo "not ok $T - $1 # $2"; shift 2; local l; for l in "$@"; do printf '%s\n' "$l" | head -n 8 | sed 's/^/#   /'; done; }
eq() { if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'" "stderr: $ERR"; fi; }
has() { if printf '%s' "$2" | grep -qF -- "$3"; then pass "$1"; else fail "$1" "'$3' not found" "in: $2" "stderr: $ERR"; fi; }
hasnt() { if printf '%s' "$2" | grep -qF -- "$3"; then fail "$1" "'$3' found" "in: $2"; else pass "$1"; fi; }
finish() { echo "1..$T"; echo "# $((T - FAILS)) passed, $FAILS failed"; [ "$FAILS" -eq 0 ]; exit; }

OWN_HOSTS=0
TOP=$(mktemp -d /tmp/berth-netns.XXXXXX) || exit 1
chmod 755 "$TOP"
cleanup() {
	[ -n "${BERTH_PID:-}" ] && kill "$BERTH_PID" 2>/dev/null && wait "$BERTH_PID" 2>/dev/null
	[ "$OWN_HOSTS" -eq 1 ] && bash "$HERE/netns/hosts.sh" down
	rm -rf "$TOP"
}
trap cleanup EXIT

if [ ! -f "$HOSTS_DIR/env" ]; then
	if [ "$(id -u)" -eq 0 ]; then
		OWN_HOSTS=1
		bash "$HERE/netns/hosts.sh" up >&2 || { fail "test hosts: hosts.sh up" "failed"; finish; }
	else
		fail "test hosts are up" "$HOSTS_DIR/env missing: run \`tests/netns/hosts.sh up\` as root first"
		finish
	fi
fi
# shellcheck disable=SC1090,SC1091
. "$HOSTS_DIR/env"
Z=$BTH_ZONE WEB=web.$BTH_ZONE OTHER=other.$BTH_ZONE
TAG=$(id -u)-$$-$RANDOM   # names made unique per run, so that logs are read for this run only

WS=$TOP/ws; mkdir "$WS" && chmod 777 "$WS"
cp "$BTH_CA" "$WS/ca.pem" && cp "$HERE/netns/probe.py" "$WS/probe.py" && chmod a+r "$WS"/* || exit 1
cd "$WS" || exit 1
run() { "$BERTH" run --dns "$BTH_DNS" "$@" </dev/null >"$TOP/out" 2>"$TOP/err"; RC=$?; OUT=$(cat "$TOP/out"); ERR=$(cat "$TOP/err"); }
# Lines a server log gained since a mark: mark LOG; ...; since LOG
mark() { wc -l <"$1" | tr -d ' '; }
since() { tail -n +"$(($2 + 1))" "$1"; }
records() { since "$BTH_RECORD_LOG" "$REC0" | wc -l | tr -d ' '; }

# 0. The hosts answer from the host's namespace: what is refused below is refused
#    by berth, not unreachable.
ERR=
OUT=$(curl -s --noproxy '*' --max-time 5 "http://$BTH_WEB4/hello.txt"; curl -s --noproxy '*' --max-time 5 \
	--cacert "$BTH_CA" --resolve "$WEB:443:$BTH_WEB4" "https://$WEB/hello.txt"; curl -s --noproxy '*' \
	--max-time 5 "http://$BTH_OTHER4/"; curl -s --noproxy '*' --max-time 5 "http://$BTH_PRIV4/")
eq "precondition: web (HTTP, HTTPS), other and private hosts answer directly from the host" "$OUT" \
	"hello from the berth test host
hello from the berth test host
reached $BTH_OTHER4:80
reached $BTH_PRIV4:80"
REC0=$(mark "$BTH_RECORD_LOG")   # from here on, nothing may reach the other and private hosts

# 1. Allowed: curl (HTTP, HTTPS with the CA file), python urllib, git clone over dumb HTTP(S).
run --allow-host "$WEB" -- sh -c "curl -s http://$WEB/hello.txt; curl -s --cacert ca.pem https://$WEB/hello.txt; \
curl -s -o /dev/null https://$WEB/hello.txt; echo \"no CA: \$?\"; \
SSL_CERT_FILE=/workspace/ca.pem python3 -c 'import urllib.request as u
for s in (\"http\", \"https\"): print(u.urlopen(s + \"://$WEB/whoami\", timeout=10).read().decode().strip())'"
eq "allowed: berth exits 0" "$RC" 0
eq "allowed: curl HTTP and HTTPS (CA from --cacert); without the CA file curl refuses the certificate (60); python urllib HTTP and HTTPS (SSL_CERT_FILE)" \
	"$OUT" "hello from the berth test host
hello from the berth test host
no CA: 60
host=$WEB server=$BTH_WEB4:80 path=/whoami
host=$WEB server=$BTH_WEB4:443 path=/whoami"
run --allow-host "$WEB" -- sh -c "git clone -q http://$WEB/repo.git /tmp/a && cat /tmp/a/README && \
GIT_SSL_CAINFO=/workspace/ca.pem git clone -q https://$WEB/repo.git /tmp/b && git -C /tmp/b log --format=%s"
eq "allowed: git clone of the dumb-HTTP repository over http and https (GIT_SSL_CAINFO)" "$RC:$OUT" "0:cloned over dumb HTTP
readme
init"

# 2. Undeclared host and undeclared port: 403 naming the rule, plain HTTP and CONNECT,
#    the summary at exit, and the undeclared host saw nothing.
run --allow-host "$WEB" -- sh -c "curl -s -w '%{http_code}\n' http://$OTHER/; \
curl -s -w '%{http_code}\n' http://$WEB:8080/hello.txt; \
curl -s -o /dev/null -w '%{http_connect}' https://$OTHER/; echo \" rc=\$?\"; \
curl -s -o /dev/null -w '%{http_connect}' https://$WEB:8080/; echo \" rc=\$?\""
eq "refused: undeclared host and port, plain HTTP (403 with the rule) and CONNECT (403, curl 56)" "$OUT" \
	"berth: refused by the egress policy: $OTHER:80 (not declared)
403
berth: refused by the egress policy: $WEB:8080 (port 8080 not declared for $WEB)
403
403 rc=56
403 rc=56"
has "refused: summary line at exit (host)" "$ERR" "berth: refused: $OTHER:80 (not declared)"
has "refused: summary line at exit (port)" "$ERR" "berth: refused: $WEB:8080 (port 8080 not declared for $WEB)"
eq "refused: the undeclared host got no connection" "$(records)" 0

# 3. No way around the broker.  A direct connection to an undeclared address lands on the
#    broker's own listener for that port (the sandbox's local route, docs/egress.md "Clients
#    that ignore the proxy") and is reset, unsent (curl 56); on a port nobody declared
#    Landlock refuses the connect (EACCES); a direct DNS query, to any server, reaches only the
#    sandbox's own resolver, which answers no undeclared name.
H0=$(mark "$BTH_HTTP_LOG")
run --allow-host "$WEB" -- sh -c "curl -s --noproxy '*' http://$BTH_WEB4/direct-$TAG; echo \"curl \$?\"; \
python3 probe.py talk $BTH_WEB4 80 /direct-$TAG; python3 probe.py talk $BTH_WEB6 80 /direct-$TAG; \
python3 probe.py connect $BTH_WEB4 7; python3 probe.py connect $BTH_DNS 53; python3 probe.py dns $BTH_DNS inside-$TAG.$Z"
# curl says 56 (recv failure) when the reset comes after its connect completed, 7 when the broker's
# reset is already the socket's error as curl checks the connect (a loaded machine): both are the
# broker's reset of an unsent connection; the server's log below proves nothing got through.
eq "direct: undeclared literal reset (curl 56, or 7 if the reset beat curl's connect check), other port and DNS over TCP EACCES, DNS query answered inside; getaddrinfo fails" \
	"$(echo $OUT | sed 's/^curl 7 /curl 56 /')" "curl 56 connected reset connected reset EACCES EACCES sent gaierror"
has "direct: the summary names the refused literal" "$ERR" "berth: refused: $BTH_WEB4:80 (not declared)"
hasnt "direct: the web server got no request" "$(since "$BTH_HTTP_LOG" "$H0")" "direct-$TAG"
sleep 0.3
hasnt "dns: the DNS server got no query from inside" "$(cat "$BTH_DNS_LOG")" "inside-$TAG"

# 4. The sandbox cannot use its own loopback for a relay over TCP (bind EACCES; a listen
#    without bind gets a port, but connecting to it is EACCES); a relay over a unix socket
#    is possible, and what it forwards is filtered all the same.
run --allow-host "$WEB" -- python3 probe.py listen
eq "relay: no TCP listener on the sandbox's loopback can be reached" "$(echo $OUT)" "bind EACCES connect EACCES"
run --allow-host "$WEB" -- python3 probe.py relay "$WEB" "$OTHER"
eq "relay: chained through an in-sandbox relay, allowed CONNECT works, undeclared CONNECT and plain 403, CONNECT inside a tunnel goes to the declared host (501 from it)" \
	"$OUT" "HTTP/1.0 200 OK
host=$WEB server=$BTH_WEB4:80 path=/whoami
HTTP/1.1 403 Forbidden
berth: refused by the egress policy: $OTHER:80 (not declared)
HTTP/1.1 403 Forbidden
berth: refused by the egress policy: $OTHER:80 (not declared)
HTTP/1.0 501 Unsupported method ('CONNECT')"
eq "relay: the undeclared host got no connection" "$(records)" 0

# 5. Host header that disagrees with the target: 400, and nothing sent upstream.
H0=$(mark "$BTH_HTTP_LOG")
run --allow-host "$WEB" --allow-host "$OTHER" -- python3 probe.py http \
	"GET http://$WEB/hostcheck-$TAG HTTP/1.1\r\nHost: $OTHER\r\n\r\n"
eq "host header: a Host that disagrees with the absolute-form target is 400" "$(echo "$OUT" | head -n 1)" \
	"HTTP/1.1 400 Bad Request"
hasnt "host header: the web server got nothing" "$(since "$BTH_HTTP_LOG" "$H0")" "hostcheck-$TAG"
eq "host header: the other host got nothing" "$(records)" 0

# 6. SOCKS5 (socks5h: the name goes to the broker), allowed and refused.
run --allow-host "$WEB" -- sh -c "curl -s --socks5-hostname \"\${ALL_PROXY#socks5h://}\" http://$WEB/whoami; \
curl -s -x \"\$ALL_PROXY\" --cacert ca.pem https://$WEB/whoami; \
curl -s -x \"\$ALL_PROXY\" http://$OTHER/; echo \"rc=\$?\"; python3 probe.py socks $OTHER 80; \
python3 probe.py socks $WEB 8080; python3 probe.py socks $WEB 80 'GET /whoami HTTP/1.0\r\nHost: $WEB\r\n\r\n'"
eq "socks5: allowed (curl socks5h HTTP and HTTPS, raw), undeclared host and port refused (curl 97, reply 2)" "$OUT" \
	"host=$WEB server=$BTH_WEB4:80 path=/whoami
host=$WEB server=$BTH_WEB4:443 path=/whoami
rc=97
rep=2
rep=2
rep=0
HTTP/1.0 200 OK
host=$WEB server=$BTH_WEB4:80 path=/whoami"
eq "socks5: the undeclared host got no connection" "$(records)" 0

# 7. A declared name that resolves to a private address, or to a mix of public and private,
#    is refused; the private host saw nothing.
run --allow-host "private.$Z" --allow-host "private6.$Z" --allow-host "mixed.$Z" -- sh -c \
	"for h in private private6 mixed; do curl -s -w '%{http_code}\n' http://\$h.$Z/; done; \
python3 probe.py socks private.$Z 80"
eq "private: a declared name resolving to 10/8, fc00::/7, or public+private is 403 (and SOCKS 2)" "$OUT" \
	"berth: refused by the egress policy: private.$Z:80 (\`private.$Z\` resolves to $BTH_PRIV4: private (10.0.0.0/8))
403
berth: refused by the egress policy: private6.$Z:80 (\`private6.$Z\` resolves to $BTH_PRIV6: unique local (fc00::/7))
403
berth: refused by the egress policy: mixed.$Z:80 (\`mixed.$Z\` resolves to $BTH_PRIV4: private (10.0.0.0/8))
403
rep=2"
eq "private: the private host got no connection" "$(records)" 0

# 8. No DNS query for a refused name: undeclared names (CONNECT, plain, SOCKS) and a
#    declared name on an undeclared port are refused before any query; a declared name
#    is asked (the log is live: this check can fail).
run --allow-host "*.wild.$Z" -- sh -c "curl -s -o /dev/null -w '%{http_code} ' http://exfil-a-$TAG.$Z/; \
curl -s -o /dev/null -w '%{http_connect} ' https://exfil-b-$TAG.$Z/; \
python3 probe.py socks exfil-c-$TAG.$Z 80; curl -s -o /dev/null -w '%{http_code} ' http://exfil-d-$TAG.wild.$Z:8080/; \
curl -s -o /dev/null -w '%{http_code} ' http://exfil-e-$TAG.wild.$Z.evil.example/; \
curl -s http://asked-$TAG.wild.$Z/hello.txt"
eq "no dns: refused names get 403 / SOCKS 2, the declared one is reached" "$(echo $OUT)" \
	"403 403 rep=2 403 403 hello from the berth test host"
for _ in $(seq 20); do grep -q "asked-$TAG" "$BTH_DNS_LOG" && break; sleep 0.1; done
has "no dns: the declared name was asked (the query log works)" "$(cat "$BTH_DNS_LOG")" "query[A] asked-$TAG.wild.$Z from "
hasnt "no dns: no query for any refused name" "$(cat "$BTH_DNS_LOG")" "exfil-"

# 9. Rebinding: the responder answers a name's first query with the public web server and
#    every later one with the private address.  The broker connects to what it checked;
#    the second request is refused and the private server records nothing.
R=r-$TAG.rebind.$Z
"$BERTH" run --dns "$BTH_REBIND_DNS" --allow-host "*.rebind.$Z" -- sh -c "curl -s http://$R/whoami; \
curl -s -w '%{http_code}\n' http://$R/whoami; python3 probe.py socks $R 80; \
curl -s -o /dev/null -w '%{http_connect}\n' https://$R/" </dev/null >"$TOP/out" 2>"$TOP/err"
RC=$?; OUT=$(cat "$TOP/out"); ERR=$(cat "$TOP/err")
eq "rebinding: first answer (public) reached, later answers (private) refused over HTTP, SOCKS and CONNECT" "$OUT" \
	"host=$R server=$BTH_WEB4:80 path=/whoami
berth: refused by the egress policy: $R:80 (\`$R\` resolves to $BTH_PRIV4: private (10.0.0.0/8))
403
rep=2
403"
has "rebinding: the responder did change its answer" "$(grep -F "$R A " "$BTH_REBIND_LOG" | head -n 2 | tr '\n' ' ')" \
	"$R A -> $BTH_WEB4 $R A -> $BTH_PRIV4"
eq "rebinding: the private host got no connection" "$(records)" 0

# 10. IPv6: a declared [v6] literal and a name with only an AAAA record work (HTTP, HTTPS);
#     an undeclared v6 literal and a name of an undeclared host are refused.
run --allow-host "[$BTH_WEB6]" --allow-host "v6.$Z" -- sh -c "curl -s http://[$BTH_WEB6]/whoami; \
curl -s --cacert ca.pem https://[$BTH_WEB6]/whoami; curl -s http://v6.$Z/whoami; \
curl -s --cacert ca.pem https://v6.$Z/whoami; curl -s -w '%{http_code}\n' http://[$BTH_OTHER6]/; \
curl -s -o /dev/null -w '%{http_connect}\n' https://[$BTH_OTHER6]/"
eq "ipv6: declared literal and AAAA-only name reached (HTTP, HTTPS); undeclared literal 403" "$OUT" \
	"host=[$BTH_WEB6] server=$BTH_WEB6:80 path=/whoami
host=[$BTH_WEB6] server=$BTH_WEB6:443 path=/whoami
host=v6.$Z server=$BTH_WEB6:80 path=/whoami
host=v6.$Z server=$BTH_WEB6:443 path=/whoami
berth: refused by the egress policy: [$BTH_OTHER6]:80 (not declared)
403
403"
eq "ipv6: the undeclared host got no connection" "$(records)" 0

# 11. Odd IPv4 spellings (inet_aton(3) reads them as addresses) of the loopback, of the
#     metadata address and of the private host, under wide wildcards and a declared public
#     literal.  Sent raw (curl would rewrite them first), the parsers refuse every one of them
#     (400, SOCKS 1: http.h, socks.h); the private host records nothing.  curl's own rewrite
#     to the dotted quad then gets 403 like any undeclared literal (--noproxy '': NO_PROXY
#     names 127.0.0.1, which would send curl straight to Landlock's EACCES instead).
ODD="2130706433 0x7f.1 017700000001 0xa9.0376.0xa9fe 181733130 0xa.0xd5.7.10 012.0325.07.012 10.213.1802"
run --allow-host "*.$Z:*" --allow-host "$BTH_WEB4:*" -- sh -c "for h in $ODD; do \
python3 probe.py http \"GET http://\$h/ HTTP/1.1\\r\\nHost: \$h\\r\\n\\r\\n\" | tr '\\n' ' '; \
python3 probe.py http \"CONNECT \$h:80 HTTP/1.1\\r\\nHost: \$h:80\\r\\n\\r\\n\" | head -n 1 | tr '\\n' ' '; \
python3 probe.py socks \$h 80; done; curl -s -w '%{http_code}\\n' http://181733130/; curl -s --noproxy '' -w '%{http_code}\\n' http://0x7f.1/"
want=
for _ in $ODD; do
	want+="HTTP/1.1 400 Bad Request berth: bad target host: not an IPv4 address in dotted-quad form (four decimal numbers 0-255, no leading zeros) HTTP/1.1 400 Bad Request rep=1
"
done
eq "odd IPv4: $ODD are 400 (plain, CONNECT) and SOCKS 1; curl's rewrites are 403" "$OUT" "${want}berth: refused by the egress policy: $BTH_PRIV4:80 (not declared)
403
berth: refused by the egress policy: 127.0.0.1:80 (not declared)
403"
eq "odd IPv4: the private host got no connection" "$(records)" 0

# 12. The metadata address under the widest wildcards: as a literal, in IPv6 forms, and as
#     the answer for a declared name.
run --allow-host "*.test:*" --allow-host "*.$Z" -- sh -c "for u in http://169.254.169.254/latest/meta-data/ \
http://[::ffff:169.254.169.254]/ http://[fd00:ec2::254]/ http://meta.$Z/latest/; do curl -s -w '%{http_code}\n' \$u; done"
eq "metadata: 169.254.169.254 (literal, v4-mapped), fd00:ec2::254 and a name answering it are 403 under *.test:*" "$OUT" \
	"berth: refused by the egress policy: 169.254.169.254:80 (not declared)
403
berth: refused by the egress policy: [::ffff:169.254.169.254]:80 (not declared)
403
berth: refused by the egress policy: [fd00:ec2::254]:80 (not declared)
403
berth: refused by the egress policy: meta.$Z:80 (\`meta.$Z\` resolves to 169.254.169.254: cloud metadata (169.254.169.254))
403"

# 12b. This machine's own addresses: a declared name whose DNS answers the host's
#      interface address (here the host side of the veth, a public-looking address)
#      would reach services the host binds to 0.0.0.0; refused unless that exact
#      literal is declared.
python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("0.0.0.0", 0)); s.listen(8)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1])); __import__("os").rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    c, _ = s.accept(); open(sys.argv[2], "a").write("hit\n")
    c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 4\r\n\r\nhost"); c.close()' "$TOP/selfport" "$TOP/selfhits" &
SELF_PID=$!
for _ in $(seq 50); do [ -s "$TOP/selfport" ] && break; sleep 0.1; done
SP=$(cat "$TOP/selfport")
run --allow-host "self.$Z:$SP" -- curl -s -w '\n%{http_code}' "http://self.$Z:$SP/"
has "self: a declared name answering the host's own address is 403" "$OUT" "resolves to $BTH_HOST4: an address of this machine"
eq "self: the host's service got no connection" "$(cat "$TOP/selfhits" 2>/dev/null | wc -l | tr -d ' ')" 0
run --allow-host "$BTH_HOST4:$SP" -- curl -s "http://$BTH_HOST4:$SP/"
eq "self: the exact literal, declared, reaches it (explicit beats ambient)" "$OUT" "host"
# 12c. An address the host gains while berth runs (DHCP, a VPN, SLAAC temporary addresses
#      in a session that runs for days) is this machine's too: the broker reads the list
#      again when it is older than a second.  Root only: it gives the host an address.
if [ "$(id -u)" -eq 0 ] && [ -n "${BTH_LATE4:-}" ]; then
	: >"$TOP/selfhits"; rm -f "$WS/started" "$WS/go"
	"$BERTH" run --dns "$BTH_DNS" --allow-host "late.$Z:$SP" -- sh -c "touch started; while [ ! -e go ]; do sleep 0.1; done; \
		curl -s -w '\n%{http_code}' http://late.$Z:$SP/" </dev/null >"$TOP/out" 2>"$TOP/err" &
	LATE_PID=$!
	for _ in $(seq 100); do [ -e "$WS/started" ] && break; sleep 0.1; done
	ip addr add "$BTH_LATE4/32" dev "$BTH_HOST_LINK"
	sleep 1.2; touch "$WS/go"; wait "$LATE_PID"
	ip addr del "$BTH_LATE4/32" dev "$BTH_HOST_LINK"
	OUT=$(cat "$TOP/out"); ERR=$(cat "$TOP/err"); rm -f "$WS/started" "$WS/go"
	has "late: an address the host gained after berth started is refused (403)" "$OUT" \
		"resolves to $BTH_LATE4: an address of this machine"
	eq "late: the host's service got no connection" "$(wc -l <"$TOP/selfhits" | tr -d ' ')" 0
fi
kill "$SELF_PID" 2>/dev/null; wait "$SELF_PID" 2>/dev/null

# 13. 1000 concurrent CONNECT tunnels through one sandbox, each echoing 4 KiB, with
#     berth's resident memory measured from /proc before and while all are open.
#     The bound: 32 KiB per tunnel, 32 MiB for 1000.  A tunnel's state in berth's memory
#     is a connection record (about 1 KiB with its 16 checked addresses) and two libevent
#     bufferevents (under 1 KiB each); the bytes move through pipes by splice(2), which is
#     kernel memory, not berth's RSS (a tunnel that cannot get its pipes copies through
#     buffers of at most 256 KiB per direction).  About 7-10 KiB per tunnel measured; 32 KiB
#     leaves 3x room for allocator slack, and fails for any per-tunnel user-space buffer of
#     a pipe's size (64 KiB) or for memory that grows with the connections accepted.
N=1000
D=$WS/tun; mkdir "$D" && chmod 777 "$D"
"$BERTH" run --dns "$BTH_DNS" --allow-host "echo.$Z:7" -- python3 probe.py tunnels "$N" "echo.$Z" 7 /workspace/tun \
	</dev/null >"$TOP/out" 2>"$TOP/err" &
BERTH_PID=$!
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$BERTH_PID/status" 2>/dev/null; }
waitfile() { # waitfile FILE SECONDS: until FILE exists or berth ended
	local _
	for _ in $(seq $(($2 * 10))); do
		[ -f "$1" ] && return 0
		kill -0 "$BERTH_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
waitfile "$D/ready" 30; RSS0=$(rss)
touch "$D/start"
waitfile "$D/open" 90; RSS1=$(rss); FDS=$(ls "/proc/$BERTH_PID/fd" 2>/dev/null | wc -l)
touch "$D/go"
waitfile "$D/done" 90; RSS2=$(rss)
touch "$D/end"
wait "$BERTH_PID"; RC=$?; BERTH_PID=
ERR=$(cat "$TOP/err")
NOFILE=$(ulimit -Hn)
[ "$NOFILE" != unlimited ] && [ "$NOFILE" -lt $((6 * N + 200)) ] &&
	echo "# note: the hard RLIMIT_NOFILE here is $NOFILE; berth raises its soft limit toward it and holds six descriptors per spliced tunnel (two sockets, two pipes)"
eq "1000 tunnels: all opened (CONNECT 200)" "$(cat "$D/open" 2>/dev/null)" "OK $N"
eq "1000 tunnels: all carried 4 KiB both ways" "$(cat "$D/done" 2>/dev/null)" "echoed $N of $N"
eq "1000 tunnels: berth exits 0" "$RC" 0
GROW=$(( ${RSS1:-0} > ${RSS2:-0} ? ${RSS1:-0} - ${RSS0:-0} : ${RSS2:-0} - ${RSS0:-0} ))
echo "# berth RSS: ${RSS0:-?} KiB at start, ${RSS1:-?} KiB with the tunnels open ($FDS fds), ${RSS2:-?} KiB after the echo"
if [ -n "$RSS0" ] && [ -n "$RSS1" ] && [ -n "$RSS2" ] && [ "$GROW" -lt $((32 * 1024)) ]; then
	pass "1000 tunnels: berth's RSS grew by $GROW KiB (bound 32 MiB)"
else
	fail "1000 tunnels: berth's RSS grew by $GROW KiB (bound 32 MiB)" "start ${RSS0:-?}, open ${RSS1:-?}, echoed ${RSS2:-?}"
fi

# 14. Clients that ignore the proxy variables (docs/egress.md "Clients that ignore the
#     proxy"): Node's built-in fetch, a C program with getaddrinfo(3) and connect(2), python's
#     plain socket, getent; each reaches exactly the declared destinations, through the broker
#     (the servers see the broker's connection; the summary and the refusals are as for the
#     proxies), and nothing else: other ports, other names, the metadata address, a private
#     literal, and the host's own loopback services.
cc -O1 -o "$TOP/connect" "$HERE/netns/connect.c" && cp "$TOP/connect" "$WS/connect" && chmod 755 "$WS/connect" ||
	fail "proxy-less: build the C client" "cc failed"
LSRV=$TOP/loopsrv.log; : >"$LSRV"; chmod 666 "$LSRV"
python3 -c '
import http.server, socketserver, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        open(sys.argv[1], "a").write(self.path + "\n")
        self.send_response(200); self.send_header("Content-Length", "9"); self.end_headers(); self.wfile.write(b"loopback\n")
    def log_message(self, *a): pass
s = socketserver.TCPServer(("127.0.0.1", 0), H); open(sys.argv[2], "w").write(str(s.server_address[1])); s.serve_forever()
' "$LSRV" "$TOP/loopport" &
LPID=$!
for _ in $(seq 50); do [ -s "$TOP/loopport" ] && break; sleep 0.1; done
LPORT=$(cat "$TOP/loopport")
printf '%s\n' 'for (const u of process.argv.slice(2)) {' \
	"  try { const r = await fetch(u); console.log(r.status, (await r.text()).trim()); }" \
	"  catch (e) { console.log('error', e.cause?.code ?? e.message); }" '}' >"$WS/fetch.mjs"
chmod 644 "$WS/fetch.mjs"
H0=$(mark "$BTH_HTTP_LOG")
run --allow-host "$WEB" --allow-host "echo.$Z:7" --allow-host "$BTH_WEB4:8080" --allow-host "meta.$Z" \
	--allow-host "$WEB:$LPORT" -- sh -c "
NODE_EXTRA_CA_CERTS=/workspace/ca.pem node fetch.mjs http://$WEB/hello.txt?nofetch-$TAG https://$WEB/hello.txt http://$OTHER/ \
  http://$WEB:8081/ http://$BTH_WEB4:8080/hello.txt http://meta.$Z/ http://$BTH_PRIV4/ http://127.0.0.1:$LPORT/in-$TAG
./connect echo.$Z 7 ping-$TAG; ./connect $BTH_WEB4 7 x; ./connect $OTHER 80 x; ./connect 169.254.169.254 80 x
python3 -c 'import socket; s = socket.create_connection((\"$BTH_WEB4\", 8080), timeout=5); s.sendall(b\"GET /hello.txt HTTP/1.0\r\n\r\n\"); print(s.recv(4096).split(b\"\r\n\")[0].decode())'
getent hosts $WEB | sed 's/ .*//'; getent hosts $OTHER; echo getent \$?"
eq "proxy-less: berth exits 0" "$RC" 0
eq "proxy-less: node fetch, C client, python socket, getent reach exactly the declared destinations" "$OUT" \
"200 hello from the berth test host
200 hello from the berth test host
error ENOTFOUND
error EACCES
200 hello from the berth test host
error ECONNRESET
error ECONNRESET
error ECONNRESET
ping-$TAG
reset
getaddrinfo
reset
HTTP/1.0 200 OK
198.18.0.1
getent 2"
has "proxy-less: the declared host saw node's request (through the broker)" "$(since "$BTH_HTTP_LOG" "$H0")" "GET /hello.txt?nofetch-$TAG host=$WEB"
has "proxy-less: summary: an undeclared name is refused at lookup" "$ERR" "berth: refused: $OTHER (name lookup: not declared)"
has "proxy-less: summary: a declared name that resolves to the metadata address" "$ERR" "meta.$Z:80 (\`meta.$Z\` resolves to 169.254.169.254: cloud metadata"
has "proxy-less: summary: a private literal" "$ERR" "berth: refused: $BTH_PRIV4:80 (not declared)"
has "proxy-less: summary: the sandbox's own 127.0.0.1 is not the host's" "$ERR" "berth: refused: 127.0.0.1:$LPORT (not declared)"
has "proxy-less: summary: a declared literal on another port" "$ERR" "berth: refused: $BTH_WEB4:7 (port 7 not declared for $BTH_WEB4)"
eq "proxy-less: the host's loopback service got nothing" "$(cat "$LSRV")" ""

# 15. A declared loopback literal works for clients that honour NO_PROXY (which names
#     127.0.0.1, so they connect directly) and for those that use the proxy: the model
#     gateway on the host's loopback (docs/agents.md).
: >"$LSRV"
run --allow-host "127.0.0.1:$LPORT" -- sh -c "curl -s http://127.0.0.1:$LPORT/direct-$TAG; \
curl -s --proxy \"\$HTTP_PROXY\" http://127.0.0.1:$LPORT/proxied-$TAG; node fetch.mjs http://127.0.0.1:$LPORT/node-$TAG"
eq "loopback literal: curl direct (NO_PROXY), curl through the proxy, node fetch" "$OUT" "loopback
loopback
200 loopback"
eq "loopback literal: the host's server saw the three requests" "$(cat "$LSRV")" "/direct-$TAG
/proxied-$TAG
/node-$TAG"
kill "$LPID" 2>/dev/null; wait "$LPID" 2>/dev/null

# 16. The resolver's 4094 addresses: names asked for under a wildcard take them all but
#     the reserve of the exactly declared names, so that the declared host asked for
#     afterwards still gets one and is reached, by a client that ignores the proxy and by
#     a CONNECT to its address spelt IPv4-mapped; nothing was resolved for real.
cat >"$WS/fill.py" <<'PY'
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(5)
def ask(name):
    s.sendto(struct.pack('>HHHHHH', 1, 0x100, 1, 0, 0, 0) + b''.join(bytes([len(l)]) + l.encode() for l in name.split('.')) + b'\0\0\1\0\1', ('127.0.0.1', 53))
    return s.recv(512)[3] & 15
n = 0
while ask('n%d-%s.wild.%s' % (n, sys.argv[1], sys.argv[2])) == 0: n += 1
print(n, ask('more-%s.wild.%s' % (sys.argv[1], sys.argv[2])))
PY
chmod a+r "$WS/fill.py"
D0=$(mark "$BTH_DNS_LOG") H0=$(mark "$BTH_HTTP_LOG")
run --allow-host "*.wild.$Z" --allow-host "$WEB" -- sh -c "python3 fill.py $TAG $Z; A=\$(getent hosts $WEB | cut -d' ' -f1); \
curl -s --noproxy '*' http://$WEB/hello.txt?fill-$TAG; curl -s -p http://[::ffff:\$A]/hello.txt?mapped-$TAG"
eq "resolver full: the wildcard got all but one address (SERVFAIL after), the declared name still answers, directly and mapped" \
	"$OUT" "4093 2
hello from the berth test host
hello from the berth test host"
has "resolver full: the web server saw the direct request" "$(since "$BTH_HTTP_LOG" "$H0")" "GET /hello.txt?fill-$TAG host=$WEB"
has "resolver full: and the one to the IPv4-mapped address" "$(since "$BTH_HTTP_LOG" "$H0")" "GET /hello.txt?mapped-$TAG"
hasnt "resolver full: no name under the wildcard was resolved for real" "$(since "$BTH_DNS_LOG" "$D0")" "-$TAG.wild"
has "resolver full: the summary says why the last name got no address" "$ERR" "berth: refused: more-$TAG.wild.$Z (name lookup: more declared names asked for than the resolver has addresses)"

eq "end: nothing reached the undeclared or private hosts during the whole run" "$(records)" 0
finish
