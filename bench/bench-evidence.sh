#!/usr/bin/env bash
# bench/bench-evidence.sh - evidence ingest (`berth run --evidence DIR`) of a
# tree of SIZE MiB against `sha256sum` over the same files: one read, hash and
# copy, against hash only.  Both read from the page cache (the tree is read
# once before timing); rounds alternate berth and sha256sum.
#
# usage: bench/bench-evidence.sh [-s MIB] [-n ROUNDS] [-b BERTH]
#   -s MIB    tree size (default 1024): 16 files of MIB/32 MiB, the other half
#             in 4 KiB..256 KiB files across 32 directories
#   -n N      rounds (default 3); the report gives the median of each
#   -b BERTH  berth binary (default: build/berth of this repo)
# Works as root or as a user; everything lives in a temp dir removed at exit.
# Prints MB/s of each and the ratio (goal in issue 6: berth >= 0.9x sha256sum).
set -euo pipefail
MIB=1024 N=3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BERTH=$(dirname "$here")/build/berth
while getopts 's:n:b:h' o; do
	case $o in s) MIB=$OPTARG ;; n) N=$OPTARG ;; b) BERTH=$OPTARG ;; *) sed -n '2,14p' "$0"; exit 2 ;; esac
done
top=$(mktemp -d /tmp/berth-bench-ev.XXXXXX)
trap 'chmod -R u+rwX "$top" 2>/dev/null; rm -rf "$top"' EXIT
export XDG_STATE_HOME=$top/state XDG_CONFIG_HOME=$top/config
tree=$top/tree; mkdir -p "$tree" "$top/ws"
big=$(( MIB / 32 ))
for i in $(seq 16); do head -c $(( big << 20 )) /dev/urandom >"$tree/big$i.bin"; done
python3 - "$tree" $(( (MIB << 20) / 2 )) <<'PY'
import os, random, sys
root, want = sys.argv[1], int(sys.argv[2])
random.seed(6); n = 0; done = 0
while done < want:
    d = os.path.join(root, "d%02d" % (n % 32)); os.makedirs(d, exist_ok=True)
    size = min(random.randint(4096, 262144), want - done)
    with open(os.path.join(d, "f%06d" % n), "wb") as f: f.write(os.urandom(size))
    done += size; n += 1
PY
files=$(find "$tree" -type f | wc -l)
bytes=$(find "$tree" -type f -printf '%s\n' | awk '{s+=$1} END {print s}')
find "$tree" -type f -print0 | xargs -0 cat >/dev/null   # warm the page cache
now() { date +%s.%N; }
bt=() st=()
cd "$top/ws"
for r in $(seq "$N"); do
	t0=$(now); "$BERTH" run --evidence "$tree" -- true 2>/dev/null; t1=$(now)
	(cd "$tree" && find . -type f -print0 | xargs -0 sha256sum >/dev/null); t2=$(now)
	bt+=("$(python3 -c "print($t1 - $t0)")"); st+=("$(python3 -c "print($t2 - $t1)")")
done
med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
B=$(med "${bt[@]}"); S=$(med "${st[@]}")
echo "tree: $files files, $bytes bytes ($(( bytes >> 20 )) MiB), page cache warm; $N rounds, median"
python3 - "$bytes" "$B" "$S" <<'PY'
import sys
n, b, s = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
print("berth run --evidence (read once, SHA-256, copy, manifest, audit): %.2f s  %.0f MB/s" % (b, n / b / 1e6))
print("sha256sum over the same files:                                  %.2f s  %.0f MB/s" % (s, n / s / 1e6))
print("ratio (berth throughput / sha256sum throughput): %.2fx" % (s / b))
PY
