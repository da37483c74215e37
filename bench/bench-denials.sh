#!/usr/bin/env bash
# bench/bench-denials.sh - what the denial stream (docs/denials.md) costs.
#
#  1. start-to-exit latency of `berth run -- /bin/true` (a run that makes no
#     refused call) with the stream on (the kernel's audit on: berth reads
#     its Landlock records, waits for the run's domain record before the
#     go and for the domain's end after the exit) against the same binary
#     with it off (the audit off: berth only asks the kernel whether it is
#     on), strictly alternating on, off, on, off, ...; the audit switch is
#     flipped between the runs, outside the timed part;
#  2. the time from a refused call (a TCP connect under --network none) to
#     its `denial` record in the audit trail: the command notes the wall
#     clock right before each connect; the record's `ts` is when berth
#     appended it (millisecond resolution).
#
# usage: bench/bench-denials.sh [-n N] [-w W] [-c C] [-b BERTH]
#   -n N      measured rounds of 1 (default 100); -w W warm-up rounds (default 5)
#   -c C      refused connects for 2 (default 50, at most 100: the trail's cap)
#   -b BERTH  berth binary (default: build/berth next to this script's repo)
# Root only (the kernel's audit is turned on and off, and put back as it
# was).  Exit 0 after the report; 1 when a run fails; 2 usage error.
set -euo pipefail
N=100 W=5 C=50
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BERTH="$(dirname "$here")/build/berth"
while getopts 'n:w:c:b:h' o; do
	case $o in
	n) N=$OPTARG ;;
	w) W=$OPTARG ;;
	c) C=$OPTARG ;;
	b) BERTH=$OPTARG ;;
	*) sed -n '2,21p' "$0"; exit 2 ;;
	esac
done
[[ $N =~ ^[1-9][0-9]*$ && $W =~ ^[0-9]+$ && $C =~ ^[1-9][0-9]*$ && $C -le 100 ]] ||
	{ echo "bench-denials: -n, -c want positive integers (-c at most 100), -w a non-negative one" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "bench-denials: root only (it turns the kernel's audit on and off)" >&2; exit 2; }
BERTH=$(readlink -f "$BERTH")
[[ -x $BERTH ]] || { echo "bench-denials: berth binary not found: $BERTH (build it first)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/berth-bench-denials.XXXXXX")
export XDG_STATE_HOME="$tmp/state" XDG_CONFIG_HOME="$tmp/config"
unset BERTH_AUDIT_DIR
mkdir -p "$tmp/ws"
cd "$tmp/ws"
python3 - "$BERTH" "$N" "$W" "$C" "$tmp" <<'EOF'
import json, os, socket, statistics, struct, subprocess, sys, time
berth, N, W, C, tmp = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]

def audit(cmd, val=0):
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 9)
    s.bind((0, 0))
    if cmd == "get":
        s.send(struct.pack("=IHHII", 16, 1000, 1, 1, 0))
        while True:
            d = s.recv(8192)
            if struct.unpack("=H", d[4:6])[0] == 1000:
                return struct.unpack("=I", d[20:24])[0]
    body = struct.pack("=11I", 1, val, *([0] * 9))
    s.send(struct.pack("=IHHII", 16 + len(body), 1001, 5, 1, 0) + body)
    s.recv(8192)

was = audit("get")
def run(argv):
    t0 = time.monotonic_ns()
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    t1 = time.monotonic_ns()
    if r.returncode != 0:
        sys.exit(f"bench-denials: FAILED: {' '.join(argv)}: status {r.returncode}: {r.stderr.decode()[-400:]}")
    return (t1 - t0) / 1e6

try:
    on, off = [], []
    for i in range(W + N):
        audit("set", 1)
        a = run([berth, "run", "--", "/bin/true"])
        audit("set", 0)
        b = run([berth, "run", "--", "/bin/true"])
        if i >= W:
            on.append(a)
            off.append(b)
    ratios = sorted(x / y for x, y in zip(on, off))
    # 2: refused call -> record
    audit("set", 1)
    prog = ("import socket, time\n"
            f"for i in range({C}):\n"
            "    s = socket.socket(); t = time.time_ns()\n"
            "    try: s.connect(('192.0.2.1', 80))\n"
            "    except OSError: pass\n"
            "    print(t, flush=True); s.close(); time.sleep(0.02)\n")
    r = subprocess.run([berth, "run", "--", "python3", "-c", prog], capture_output=True, text=True)
    calls = [int(x) for x in r.stdout.split()]
    rid = json.loads(subprocess.run([berth, "attest", "--last"], capture_output=True, text=True).stdout)["run_id"]
    recs = subprocess.run([berth, "audit", "--run", rid, "--kind", "denial", "--json"], capture_output=True,
                          text=True).stdout.splitlines()
    from datetime import datetime
    ts = [datetime.strptime(json.loads(l)["ts"], "%Y-%m-%dT%H:%M:%S.%fZ").timestamp() * 1e3 for l in recs]
finally:
    audit("set", was)
if len(ts) != len(calls):
    print(f"note: {len(calls)} refused connects, {len(ts)} records (the kernel's audit backlog dropped some)")
lat = sorted(t - c / 1e6 for t, c in zip(ts, calls))
def q(v, p):
    return v[min(len(v) - 1, int(p * len(v)))]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
print("berth denial stream benchmark")
print(f"  date     {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}")
print(f"  machine  nproc={os.cpu_count()}, kernel {os.uname().release}, CPU {cpu}, load {os.getloadavg()[0]:.2f}")
print(f"  rounds   N={N} (+{W} warm-up), alternating stream on (audit on), off (audit off)")
print(f"\n1. berth run -- /bin/true      median ms   p90 ms   min ms")
for name, v in (("stream on", sorted(on)), ("stream off", sorted(off))):
    print(f"   {name:<26} {statistics.median(v):9.2f} {q(v, 0.9):8.2f} {v[0]:8.2f}")
print(f"   ratio on/off, pair by pair: median {statistics.median(ratios):.2f}x "
      f"(min {ratios[0]:.2f}, max {ratios[-1]:.2f})")
print(f"\n2. refused connect -> its denial record ({len(lat)} of {len(calls)}): median {statistics.median(lat):.1f} ms, "
      f"p90 {q(lat, 0.9):.1f} ms, max {lat[-1]:.1f} ms")
EOF
rm -rf "$tmp"
