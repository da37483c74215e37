#!/usr/bin/env bash
# bench/bench-egress.sh - download throughput and connection set-up through
# berth's egress broker, against a direct download and against tinyproxy
# (Debian's), in the same run.
#
# A test host in a network namespace of its own (berth-bench-eg, joined to the
# host by the veth pair bbe0/bbe1, 10.213.9.1 on the host, 10.213.9.10 in the
# namespace; both removed on exit) serves SIZE MiB of zeros over HTTP.  Three
# ways to fetch it, alternated in rounds:
#   direct   curl in the host namespace, over the veth link, no proxy
#   tiny     curl through tinyproxy on the host's 127.0.0.1
#   berth    curl inside `berth run --allow-host 10.213.9.10:PORT` through the
#            broker (10.0.0.0/8 is a refused range: the exact literal is declared)
#   berth-t  the same, but curl ignores the proxy (`--noproxy '*'`) and connects
#            to the address itself: the broker's transparent listener for that
#            port (docs/egress.md "Clients that ignore the proxy")
# Reported: medians of MiB/s, and of curl's time to the first byte of a 1-byte
# answer (connection set-up; for berth, 10 requests per round in one sandbox
# after a first one, so that the sandbox's own start does not count), and the
# ratios against the goals.  And small writes: a message in two writes, then
# its 3-byte answer, 300 times per round in one connection (direct) or one
# CONNECT tunnel (berth); round trips of 35 ms or more are a relay waiting
# for a delayed ACK (Nagle's algorithm).
#
# usage: bench/bench-egress.sh [-s SIZE_MIB] [-r ROUNDS] [-b BERTH] [-c BERTH2] [-u USER] [-l]
#   -s  download size, default 1024 MiB     -r  rounds, default 5
#   -b  the berth binary, default build/berth
#   -c  a second berth binary (say, before a change), measured in the same
#       rounds as a fourth row, `berth2`
#   -u  run curl, tinyproxy and berth as USER (the script itself runs as root
#       to make the namespace), e.g. -u bertht
#   -l  the loopback variant: the server on the host's 127.0.0.1, no namespace
#   Needs root, curl, python3, iproute2 and tinyproxy: BERTH_BENCH_DEPS in
#   scripts/deps.sh (installed when missing).  Exit 0 after the report, 1 on a
#   failure, 2 on a usage error.
set -euo pipefail
SIZE=1024
R=5
AS=
LOOP=0
BERTH2=
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BERTH="$(dirname "$here")/build/berth"
while getopts 's:r:b:c:u:lh' o; do
	case $o in
	s) SIZE=$OPTARG ;;
	r) R=$OPTARG ;;
	b) BERTH=$OPTARG ;;
	c) BERTH2=$OPTARG ;;
	u) AS=$OPTARG ;;
	l) LOOP=1 ;;
	*) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 2 ;;
	esac
done
[[ $SIZE =~ ^[1-9][0-9]*$ ]] || { echo "bench-egress: -s \`$SIZE\`: a size in MiB, a whole number from 1" >&2; exit 2; }
[[ $R =~ ^[1-9][0-9]*$ ]] || { echo "bench-egress: -r \`$R\`: a number of rounds, a whole number from 1" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "bench-egress: run as root (it makes a network namespace); -u USER runs the clients as USER" >&2; exit 1; }
[ -z "$AS" ] || id -u "$AS" >/dev/null 2>&1 || { echo "bench-egress: no user \`$AS\`" >&2; exit 2; }
# shellcheck source=scripts/deps.sh
. "$(dirname "$here")/scripts/deps.sh"
berth_ensure_deps "${BERTH_BENCH_DEPS[@]}" || exit 1
BERTH=$(readlink -f "$BERTH")
TINY=$(command -v tinyproxy)
[ -x "$BERTH" ] || { echo "bench-egress: no berth binary at \`$BERTH\` (build it, or pass -b)" >&2; exit 1; }
if [ -n "$BERTH2" ]; then
	BERTH2=$(readlink -f "$BERTH2")
	[ -x "$BERTH2" ] || { echo "bench-egress: no berth binary at \`$BERTH2\` (-c)" >&2; exit 2; }
fi

NS=berth-bench-eg L0=bbe0 L1=bbe1 HOSTA=10.213.9.1 SRV=10.213.9.10 P=8080
tmp=$(mktemp -d /tmp/berth-bench-egress.XXXXXX)
chmod 755 "$tmp"; mkdir -p "$tmp/ws" "$tmp/state"
[ -z "$AS" ] || chown "$AS" "$tmp/ws" "$tmp/state"
# the berth binary where USER can run it (a worktree under /work may not be)
mkdir "$tmp/bin"; cp "$BERTH" "$tmp/bin/berth"; BERTH=$tmp/bin/berth
[ -z "$BERTH2" ] || { cp "$BERTH2" "$tmp/bin/berth2"; BERTH2=$tmp/bin/berth2; }
chmod -R a+rX "$tmp/bin"
pids=()
made_ns=0
cleanup() {
	local p
	set +e # a process that already ended must not stop the clean-up
	for p in "${pids[@]}"; do
		pkill -TERM -P "$p" 2>/dev/null # tinyproxy under runuser
		kill "$p" 2>/dev/null
	done
	if [ "$made_ns" = 1 ]; then # only what this run made (not another run's namespace)
		for p in $(ip netns pids "$NS" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
		ip netns del "$NS" 2>/dev/null
		ip link del "$L0" 2>/dev/null
	fi
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
as() { if [ -n "$AS" ]; then runuser -u "$AS" -- "$@"; else "$@"; fi; }

if [ "$LOOP" = 1 ]; then
	SRV=127.0.0.1 P=$((20000 + RANDOM % 20000)) INNS=()
else
	ip netns list | grep -qw "^$NS" && { echo "bench-egress: namespace $NS exists (another run?); remove it with: ip netns del $NS" >&2; exit 1; }
	ip netns add "$NS"
	made_ns=1
	ip link add "$L0" type veth peer name "$L1" netns "$NS"
	ip addr add "$HOSTA/24" dev "$L0"
	ip link set "$L0" up
	ip -n "$NS" link set lo up
	ip -n "$NS" addr add "$SRV/24" dev "$L1"
	ip -n "$NS" link set "$L1" up
	INNS=(ip netns exec "$NS")
fi

# The server: SIZE MiB of zeros, HTTP/1.1, one response per connection.
"${INNS[@]}" python3 -c '
import http.server, socketserver, sys
size = int(sys.argv[3]) << 20
chunk = b"\0" * (1 << 20)
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        n = size if self.path == "/big" else 1
        self.send_response(200); self.send_header("Content-Length", str(n)); self.send_header("Connection", "close"); self.end_headers()
        while n > 0:
            k = min(n, len(chunk)); self.wfile.write(chunk[:k]); n -= k
    def log_message(self, *a): pass
class S(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True
s = S((sys.argv[1], int(sys.argv[2])), H)
print("ready", flush=True)
s.serve_forever()' "$SRV" "$P" "$SIZE" </dev/null >"$tmp/server.out" 2>&1 &
pids+=($!)
for _ in $(seq 50); do grep -q ready "$tmp/server.out" && break; sleep 0.1; done
grep -q ready "$tmp/server.out" || { echo "bench-egress: the server did not start: $(cat "$tmp/server.out")" >&2; exit 1; }

# The small-writes server: "ok\n" for every 4 bytes received.
P2=$((P + 2))
"${INNS[@]}" python3 -c '
import socket, sys, threading
s = socket.create_server((sys.argv[1], int(sys.argv[2])), reuse_port=False)
def serve(c):
    have = 0
    while True:
        d = c.recv(4096)
        if not d:
            return
        have += len(d)
        while have >= 4:
            have -= 4; c.sendall(b"ok\n")
print("ready", flush=True)
while True:
    c, _ = s.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()' "$SRV" "$P2" </dev/null >"$tmp/pair.out" 2>&1 &
pids+=($!)
for _ in $(seq 50); do grep -q ready "$tmp/pair.out" && break; sleep 0.1; done
grep -q ready "$tmp/pair.out" || { echo "bench-egress: the small-writes server did not start: $(cat "$tmp/pair.out")" >&2; exit 1; }
# Its client, run on the host (direct) or in the sandbox (through the proxy of $HTTPS_PROXY).
cat >"$tmp/ws/wwr.py" <<'PY'
import os, socket, sys, time, urllib.parse
mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
if mode == "direct":
    c = socket.create_connection((host, port))
else:
    p = urllib.parse.urlparse(os.environ.get("HTTPS_PROXY") or os.environ["https_proxy"])
    c = socket.create_connection((p.hostname, p.port))
    c.sendall(b"CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (host.encode(), port, host.encode(), port))
    r = b""
    while b"\r\n\r\n" not in r:
        r += c.recv(4096)
    assert b" 200 " in r.split(b"\r\n")[0], r
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
for i in range(300):
    t = time.perf_counter()
    c.sendall(b"a\n"); c.sendall(b"b\n")
    r = b""
    while len(r) < 3:
        r += c.recv(16)
    print("%.3f" % ((time.perf_counter() - t) * 1000))
PY
chmod 644 "$tmp/ws/wwr.py"

# tinyproxy on the host's loopback, as the caller, on a free port: a port
# already taken makes it exit, and another attempt takes another port.
start_tiny() {
	TP=$((20000 + RANDOM % 20000))
	cat >"$tmp/tiny.conf" <<EOF
Port $TP
Listen 127.0.0.1
Timeout 600
MaxClients 100
Allow 127.0.0.1
LogLevel Critical
EOF
	chmod 644 "$tmp/tiny.conf"
	# (runuser passes the TERM of the clean-up on to tinyproxy; a shell
	# function run with & would leave it behind)
	if [ -n "$AS" ]; then
		runuser -u "$AS" -- "$TINY" -d -c "$tmp/tiny.conf" </dev/null >"$tmp/tiny.out" 2>&1 &
	else
		"$TINY" -d -c "$tmp/tiny.conf" </dev/null >"$tmp/tiny.out" 2>&1 &
	fi
	local pid=$! rc
	pids+=("$pid")
	for _ in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || return 1
		rc=0; curl -s -o /dev/null --noproxy '*' "http://127.0.0.1:$TP/" 2>/dev/null || rc=$?
		[ $rc -ne 7 ] && { sleep 0.2; kill -0 "$pid" 2>/dev/null; return; }
		sleep 0.1
	done
	return 1
}
for attempt in 1 2 3 4 5; do
	start_tiny && break
	[ "$attempt" = 5 ] && { echo "bench-egress: tinyproxy did not start: $(tail -n 3 "$tmp/tiny.out")" >&2; exit 1; }
done

URL=http://$SRV:$P
fmt='%{speed_download} %{time_connect} %{time_starttransfer} %{size_download}\n'
direct() { as curl -s -o /dev/null -w "$fmt" --noproxy '*' "$URL/$1"; }
tiny() { as curl -s -o /dev/null -w "$fmt" -x "http://127.0.0.1:$TP" "$URL/$1"; }
BIN=$BERTH
in_berth() { as env XDG_STATE_HOME="$tmp/state" "$BIN" run --workspace "$tmp/ws" --allow-host "$SRV:$P" --allow-host "$SRV:$P2" -- "$@"; }
via_berth() { in_berth curl --noproxy '' -s -o /dev/null -w "$fmt" "$URL/$1" 2>"$tmp/berth.err"; }
via_berth_t() { BIN=$BERTH in_berth curl --noproxy '*' -s -o /dev/null -w "$fmt" "$URL/$1" 2>"$tmp/berth.err"; }
rows=(berth); [ -z "$BERTH2" ] || rows+=(berth2)
want=$((SIZE << 20))
check() { # check FILE: the last download was whole
	[ "$(tail -n 1 "$1" | awk '{print $4}')" = "$want" ] || { echo "bench-egress: short download in $1: $(tail -n 1 "$1")" >&2; exit 1; }
}
for r in $(seq "$R"); do
	direct big >>"$tmp/direct" && check "$tmp/direct" || { echo "bench-egress: direct failed" >&2; exit 1; }
	rc=0; tiny big >>"$tmp/tiny" || rc=$?
	[ $rc -eq 0 ] && check "$tmp/tiny" || { echo "bench-egress: tinyproxy failed (curl exit $rc): $(tail -n 1 "$tmp/tiny")" >&2; exit 1; }
	for row in "${rows[@]}"; do
		BIN=$BERTH; [ "$row" = berth ] || BIN=$BERTH2
		via_berth big >>"$tmp/$row" && check "$tmp/$row" || { echo "bench-egress: $row failed: $(cat "$tmp/berth.err")" >&2; exit 1; }
	done
	via_berth_t big >>"$tmp/berth-t" && check "$tmp/berth-t" || { echo "bench-egress: berth-t failed: $(cat "$tmp/berth.err")" >&2; exit 1; }
	for k in 1 2 3 4 5 6 7 8 9 10; do
		direct small >>"$tmp/direct.s"; tiny small >>"$tmp/tiny.s"
	done
	for row in "${rows[@]}"; do
		BIN=$BERTH; [ "$row" = berth ] || BIN=$BERTH2
		in_berth sh -c "for k in 0 1 2 3 4 5 6 7 8 9 10; do curl --noproxy \"\" -s -o /dev/null -w '$fmt' $URL/small; done" \
			2>/dev/null | tail -n 10 >>"$tmp/$row.s"
	done
	BIN=$BERTH in_berth sh -c "for k in 0 1 2 3 4 5 6 7 8 9 10; do curl --noproxy '*' -s -o /dev/null -w '$fmt' $URL/small; done" \
		2>/dev/null | tail -n 10 >>"$tmp/berth-t.s"
	as python3 "$tmp/ws/wwr.py" direct "$SRV" "$P2" >>"$tmp/direct.w" || { echo "bench-egress: small writes, direct, failed" >&2; exit 1; }
	for row in "${rows[@]}"; do
		BIN=$BERTH; [ "$row" = berth ] || BIN=$BERTH2
		in_berth python3 /workspace/wwr.py proxy "$SRV" "$P2" >>"$tmp/$row.w" 2>"$tmp/berth.err" ||
			{ echo "bench-egress: small writes, $row, failed: $(cat "$tmp/berth.err")" >&2; exit 1; }
	done
done
wwr() { # wwr FILE: "N of M round trips >= 35 ms, p50 X ms, p99 Y ms"
	sort -n "$1" | awk '{v[NR]=$1; if ($1 >= 35) s++} END {printf "%d of %d round trips >= 35 ms, p50 %.3f ms, p99 %.3f ms", s, NR, v[int((NR+1)/2)], v[int(NR*0.99)]}'
}
med() { sort -n | awk '{v[NR]=$1} END {n=NR; print (n%2) ? v[(n+1)/2] : (v[n/2]+v[n/2+1])/2}'; }
mbs() { awk '{print $1/1048576}' "$1" | med; }
range() { awk '{print $1/1048576}' "$1" | sort -n | awk 'NR==1{lo=$1} {hi=$1} END{printf "%.0f-%.0f", lo, hi}'; }
setup() { awk '{print ($3)*1000}' "$1" | med; } # ms from start to the first byte of the answer
d=$(mbs "$tmp/direct"); t=$(mbs "$tmp/tiny"); b=$(mbs "$tmp/berth"); bt=$(mbs "$tmp/berth-t")
ds=$(setup "$tmp/direct.s"); ts=$(setup "$tmp/tiny.s"); bs=$(setup "$tmp/berth.s"); bts=$(setup "$tmp/berth-t.s")
if [ "$LOOP" = 1 ]; then where="server on the host's 127.0.0.1 (loopback variant)"; else where="server in netns $NS at $SRV over veth $L0"; fi
cat <<EOF
berth egress benchmark
  date     $(date -u '+%Y-%m-%d %H:%M:%S UTC')
  machine  nproc=$(nproc), kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)
  caller   ${AS:-$(id -un)}
  where    $where
  size     $SIZE MiB, $R rounds (set-up: $((R * 10)) small requests each), alternating

          MiB/s median (range)   set-up ms (median, start to first byte)
direct    $d ($(range "$tmp/direct"))    $ds
tinyproxy $t ($(range "$tmp/tiny"))    $ts
berth     $b ($(range "$tmp/berth"))    $bs
berth-t   $bt ($(range "$tmp/berth-t"))    $bts
$(if [ -n "$BERTH2" ]; then b2=$(mbs "$tmp/berth2"); echo "berth2    $b2 ($(range "$tmp/berth2"))    $(setup "$tmp/berth2.s")"; fi)

berth/direct throughput: $(awk -v a="$b" -v b="$d" 'BEGIN{printf "%.2f", a/b}')x (goal >= 0.9)
berth/tinyproxy throughput: $(awk -v a="$b" -v b="$t" 'BEGIN{printf "%.2f", a/b}')x (goal >= 1.0)
berth added set-up over direct: $(awk -v a="$bs" -v b="$ds" 'BEGIN{printf "%.3f", a-b}') ms (goal <= 0.3)
berth-t/direct throughput: $(awk -v a="$bt" -v b="$d" 'BEGIN{printf "%.2f", a/b}')x, berth-t added set-up: $(awk -v a="$bts" -v b="$ds" 'BEGIN{printf "%.3f", a-b}') ms

small writes (two writes, then the answer):
  direct    $(wwr "$tmp/direct.w")
  berth     $(wwr "$tmp/berth.w")
EOF
[ -z "$BERTH2" ] || echo "  berth2    $(wwr "$tmp/berth2.w")"
if [ -n "$BERTH2" ]; then
	b2=$(mbs "$tmp/berth2"); bs2=$(setup "$tmp/berth2.s")
	echo "berth2/direct throughput: $(awk -v a="$b2" -v b="$d" 'BEGIN{printf "%.2f", a/b}')x, berth2/tinyproxy: $(awk -v a="$b2" -v b="$t" 'BEGIN{printf "%.2f", a/b}')x, berth2 added set-up: $(awk -v a="$bs2" -v b="$ds" 'BEGIN{printf "%.3f", a-b}') ms"
fi
