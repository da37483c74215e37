#!/usr/bin/env bash
# bench/bench-ask.sh - what `berth run --ask` (docs/ask.md) costs.
#
#  1. start-to-exit latency of a run that makes no refused call, with --ask
#     (every open(2) of the command goes through berth's listener and is
#     continued) against the same run without it, strictly alternating:
#     `/bin/true` (the loader's few opens) and `python3 -c pass` (about a
#     hundred opens);
#  2. the time from a refused call to its prompt: the command notes the wall
#     clock right before each open of a host file outside its view, and the
#     driver notes when berth's `ask N of run ...` line arrives on berth's
#     stderr; each ask is then denied with `berth deny` (at most 20 a run:
#     the prompts' cap a minute).
#
# usage: bench/bench-ask.sh [-n N] [-w W] [-c C] [-b BERTH]
#   -n N      measured rounds of 1 (default 50); -w W warm-up rounds (default 3)
#   -c C      refused opens for 2 (default 20, at most 20)
#   -b BERTH  berth binary (default: build/berth next to this script's repo)
# Root or a user.  Exit 0 after the report; 1 when a run fails; 2 usage error.
set -euo pipefail
N=50 W=3 C=20
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BERTH="$(dirname "$here")/build/berth"
while getopts 'n:w:c:b:h' o; do
	case $o in
	n) N=$OPTARG ;;
	w) W=$OPTARG ;;
	c) C=$OPTARG ;;
	b) BERTH=$OPTARG ;;
	*) sed -n '2,20p' "$0"; exit 2 ;;
	esac
done
[[ $N =~ ^[1-9][0-9]*$ && $W =~ ^[0-9]+$ && $C =~ ^[1-9][0-9]*$ && $C -le 20 ]] ||
	{ echo "bench-ask: -n, -c want positive integers (-c at most 20), -w a non-negative one" >&2; exit 2; }
BERTH=$(readlink -f "$BERTH")
[[ -x $BERTH ]] || { echo "bench-ask: berth binary not found: $BERTH (build it first)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/berth-bench-ask.XXXXXX")
host=$(mktemp -d /var/tmp/berth-bench-ask.XXXXXX)
trap 'rm -rf "$tmp" "$host"' EXIT
export XDG_STATE_HOME="$tmp/state" XDG_CONFIG_HOME="$tmp/config"
unset BERTH_AUDIT_DIR
mkdir -p "$tmp/ws"
for i in $(seq 0 $((C - 1))); do echo x >"$host/f$i"; done
chmod -R a+rX "$host"
cd "$tmp/ws"
setsid -w python3 - "$BERTH" "$N" "$W" "$C" "$host" <<'PY'
import re, statistics, subprocess, sys, time
berth, N, W, C, host = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]

def run(argv):
    t0 = time.monotonic_ns()
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    t1 = time.monotonic_ns()
    if r.returncode != 0:
        sys.exit(f"bench-ask: FAILED: {' '.join(argv)}: status {r.returncode}: {r.stderr.decode()[-400:]}")
    return (t1 - t0) / 1e6

def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * len(v)))]

for cmd in (["/bin/true"], ["python3", "-c", "pass"]):
    on, off = [], []
    for i in range(W + N):
        a = run([berth, "run", "--ask", "--", *cmd])
        b = run([berth, "run", "--", *cmd])
        if i >= W:
            on.append(a)
            off.append(b)
    mo, mf = statistics.median(on), statistics.median(off)
    print(f"{' '.join(cmd)}: --ask median {mo:.1f} ms (p90 {q(on, 0.9):.1f}), without {mf:.1f} ms "
          f"(p90 {q(off, 0.9):.1f}); ratio {mo / mf:.3f} ({N} rounds, alternating)")

prog = (
    "import sys, time\n"
    f"for i in range({C}):\n"
    "    print(time.time_ns(), flush=True)\n"
    "    try:\n"
    f"        open('{host}/f%d' % i)\n"
    "    except OSError:\n"
    "        pass\n"
)
p = subprocess.Popen([berth, "run", "--ask", "--", "python3", "-c", prog], stdin=subprocess.DEVNULL,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
lat = []
for i in range(C):
    t_call = int(p.stdout.readline())
    while True:
        line = p.stderr.readline()
        if not line:
            sys.exit("bench-ask: FAILED: berth ended before its ask line")
        m = re.search(r"ask (\d+) of run ([0-9a-f]{16})", line)
        if m:
            break
    lat.append((time.time_ns() - t_call) / 1e6)
    subprocess.run([berth, "deny", m.group(2), m.group(1)], check=True, stdout=subprocess.DEVNULL)
p.wait()
print(f"refused open to its prompt: median {statistics.median(lat):.2f} ms, p90 {q(lat, 0.9):.2f} ms, "
      f"max {max(lat):.2f} ms ({C} asks)")
PY
