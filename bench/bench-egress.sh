#!/usr/bin/env bash
# bench/bench-egress.sh - download throughput and connection set-up through
# berth's egress broker, against a direct download and against tinyproxy
# (Debian's), in the same run.
#
# A host HTTP server on 127.0.0.1 serves SIZE bytes of zeros.  Three ways:
#   direct   curl on the host, no proxy
#   tiny     curl on the host through tinyproxy on 127.0.0.1
#   berth    curl inside `berth run --allow-host 127.0.0.1:PORT` through the broker
#            (loopback is a refused range: the exact literal is declared)
# Each is run R times, alternating; medians of MB/s and of curl's
# time to the first byte of a 1-byte answer (connection set-up through the proxy:
# for berth, 10 requests in one sandbox after a first one, so that the sandbox's
# own start does not count as connection set-up).
#
# usage: bench/bench-egress.sh [-s SIZE_MIB] [-r ROUNDS] [-b BERTH]
#   defaults: 1024 MiB, 5 rounds.  Needs curl, python3 and tinyproxy
#   (apt-get install -y tinyproxy).  Exit 0 after the report, 1 on a failure.
set -euo pipefail
SIZE=1024
R=5
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BERTH="$(dirname "$here")/build/berth"
while getopts 's:r:b:h' o; do
	case $o in
	s) SIZE=$OPTARG ;;
	r) R=$OPTARG ;;
	b) BERTH=$OPTARG ;;
	*) sed -n '2,18p' "$0"; exit 2 ;;
	esac
done
BERTH=$(readlink -f "$BERTH")
TINY=$(command -v tinyproxy || true)
[ -x "$BERTH" ] && [ -n "$TINY" ] || { echo "bench-egress: need build/berth and tinyproxy" >&2; exit 1; }

tmp=$(mktemp -d /tmp/berth-bench-egress.XXXXXX)
chmod 755 "$tmp"; mkdir -p "$tmp/ws" "$tmp/state"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

# The server: SIZE MiB of zeros, HTTP/1.1, one response per connection.
python3 -c '
import http.server, socketserver, sys
size = int(sys.argv[2]) << 20
chunk = b"\0" * (1 << 20)
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        n = size if self.path == "/big" else 1
        self.send_response(200); self.send_header("Content-Length", str(n)); self.send_header("Connection", "close"); self.end_headers()
        while n > 0:
            k = min(n, len(chunk)); self.wfile.write(chunk[:k]); n -= k
    def log_message(self, *a): pass
class S(socketserver.ThreadingMixIn, socketserver.TCPServer): daemon_threads = True
s = S(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(s.server_address[1]))
s.serve_forever()' "$tmp/port" "$SIZE" </dev/null >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
P=$(cat "$tmp/port")

# tinyproxy on the host's loopback.
TP=$((P + 1))
cat >"$tmp/tiny.conf" <<EOF
Port $TP
Listen 127.0.0.1
Timeout 600
MaxClients 100
Allow 127.0.0.1
LogLevel Critical
EOF
"$TINY" -d -c "$tmp/tiny.conf" </dev/null >/dev/null 2>&1 &
pids+=($!)
sleep 0.5

fmt='%{speed_download} %{time_connect} %{time_starttransfer}\n'
direct() { curl -s -o /dev/null -w "$fmt" "http://127.0.0.1:$P/$1"; }
tiny() { curl -s -o /dev/null -w "$fmt" -x "http://127.0.0.1:$TP" "http://127.0.0.1:$P/$1"; }
via_berth() {
	XDG_STATE_HOME=$tmp/state "$BERTH" run --workspace "$tmp/ws" --allow-host "127.0.0.1:$P" -- \
		curl -s -o /dev/null -w "$fmt" --noproxy '' "http://127.0.0.1:$P/$1" 2>/dev/null
}
for r in $(seq "$R"); do
	direct big >>"$tmp/direct" || { echo "bench-egress: direct failed" >&2; exit 1; }
	tiny big >>"$tmp/tiny" || { echo "bench-egress: tinyproxy failed" >&2; exit 1; }
	via_berth big >>"$tmp/berth" || { echo "bench-egress: berth failed" >&2; exit 1; }
	# set-up: 10 small requests each; through berth, in one sandbox after a
	# first request (the sandbox's own start, with its audit records, is
	# not connection set-up)
	for k in 1 2 3 4 5 6 7 8 9 10; do
		direct small >>"$tmp/direct.s"; tiny small >>"$tmp/tiny.s"
	done
	XDG_STATE_HOME=$tmp/state "$BERTH" run --workspace "$tmp/ws" --allow-host "127.0.0.1:$P" -- sh -c \
		"for k in 0 1 2 3 4 5 6 7 8 9 10; do curl -s -o /dev/null -w '$fmt' --noproxy '' http://127.0.0.1:$P/small; done" \
		2>/dev/null | tail -n 10 >>"$tmp/berth.s"
done
med() { sort -n | awk '{v[NR]=$1} END {n=NR; print (n%2) ? v[(n+1)/2] : (v[n/2]+v[n/2+1])/2}'; }
mbs() { awk '{print $1/1048576}' "$1" | med; }
setup() { awk '{print ($3)*1000}' "$1" | med; } # ms from start to the first byte of the answer
d=$(mbs "$tmp/direct"); t=$(mbs "$tmp/tiny"); b=$(mbs "$tmp/berth")
ds=$(setup "$tmp/direct.s"); ts=$(setup "$tmp/tiny.s"); bs=$(setup "$tmp/berth.s")
cat <<EOF
berth egress benchmark
  date     $(date -u '+%Y-%m-%d %H:%M:%S UTC')
  machine  nproc=$(nproc), kernel $(uname -r)
  caller   $(id -un) (uid $(id -u))
  size     $SIZE MiB, $R rounds (set-up: $((R * 10)) small requests each), alternating

          MiB/s (median)   set-up ms (median, start to first byte)
direct    $d    $ds
tinyproxy $t    $ts
berth     $b    $bs

berth/direct throughput: $(awk -v a="$b" -v b="$d" 'BEGIN{printf "%.2f", a/b}')x (goal >= 0.9)
berth/tinyproxy throughput: $(awk -v a="$b" -v b="$t" 'BEGIN{printf "%.2f", a/b}')x (goal >= 1.0)
berth added set-up over direct: $(awk -v a="$bs" -v b="$ds" 'BEGIN{printf "%.3f", a-b}') ms (goal <= 0.3)
EOF
