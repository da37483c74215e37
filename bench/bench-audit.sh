#!/usr/bin/env bash
# bench/bench-audit.sh - audit trail throughput:
#   1. durable appends (each berth_audit_append returns after fdatasync of the
#      log and of the signed head) from 1 thread, from N threads of one
#      process (group commit) and from P processes x N threads;
#   2. `berth audit verify` over a log of about SIZE MB, against sha256sum
#      over the same file (both read from the page cache), best of R runs.
#
# usage: bench/bench-audit.sh [-d DIR] [-s SIZE_MB] [-r RUNS] [-b BUILD]
#   -d DIR    where the logs go (default: a temp dir under /var/tmp, i.e. the
#             disk; pass a tmpfs path to take the disk's fdatasync out)
#   -s SIZE   verify log size in MB (default 128)
#   -r RUNS   verify repetitions, best taken (default 5)
#   -b BUILD  build directory (default build/ of this repo)
# Works as root or as a user.  Exit 0 after the report; 1 if a step fails.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(dirname "$here")/build
size=128 runs=5 dir=
while getopts 'd:s:r:b:h' o; do
	case $o in
	d) dir=$OPTARG ;; s) size=$OPTARG ;; r) runs=$OPTARG ;; b) build=$OPTARG ;;
	*) sed -n '2,17p' "$0"; exit 2 ;;
	esac
done
W=$build/tests/audit_writer B=$build/berth
[ -x "$W" ] && [ -x "$B" ] || { echo "bench-audit: build first (ninja -C build)" >&2; exit 1; }
base=$(mktemp -d "${dir:-/var/tmp}/berth-bench-audit.XXXXXX")
trap 'rm -rf "$base"' EXIT
export XDG_CONFIG_HOME=$base/cfg
now() { date +%s.%N; }
rate() { # rate LABEL DIR PROCS COUNT THREADS
	local label=$1 d=$2 procs=$3 count=$4 threads=$5 t0 t1 pids=()
	t0=$(now)
	for _ in $(seq "$procs"); do "$W" "$d" "$count" "$threads" >/dev/null & pids+=($!); done
	for p in "${pids[@]}"; do wait "$p" || { echo "bench-audit: a writer failed" >&2; exit 1; }; done
	t1=$(now)
	"$B" audit verify --dir "$d" >/dev/null || { echo "bench-audit: $label: log not intact" >&2; exit 1; }
	awk -v l="$label" -v n=$((procs * count * threads)) -v t0="$t0" -v t1="$t1" \
		'BEGIN { printf "%-44s %8d records %7.2f s %9.0f records/s\n", l, n, t1 - t0, n / (t1 - t0) }'
}
echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -srm), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# logs in $base ($(df -T "$base" | awk 'NR==2 {print $2}'))"
echo "## durable appends (fdatasync of log and head per group commit)"
rate "1 process x 1 thread" "$base/a1" 1 1000 1
rate "1 process x 8 threads" "$base/a8" 1 500 8
rate "1 process x 64 threads" "$base/a64" 1 200 64
rate "1 process x 256 threads" "$base/a256" 1 100 256
rate "8 processes x 1 thread" "$base/p8" 8 200 1
rate "4 processes x 64 threads" "$base/p4t64" 4 100 64

echo "## verify vs sha256sum (page cache, best of $runs)"
v=$base/verify
records=$(( size * 1000000 / 420 / 64 + 1 ))
"$W" "$v" "$records" 64 300 >/dev/null
f=$(ls "$v"/audit-*.jsonl)
bytes=$(cat $f | wc -c)
best() { # best CMD...: the fastest of $runs runs, in seconds
	local b=999 t0 t1
	for _ in $(seq "$runs"); do
		t0=$(now); "$@" >/dev/null; t1=$(now)
		b=$(awk -v b="$b" -v d="$(awk -v a="$t0" -v c="$t1" 'BEGIN{print c-a}')" 'BEGIN{print (d<b)?d:b}')
	done
	echo "$b"
}
tv=$(best "$B" audit verify --dir "$v")
ts=$(best sha256sum $f)
n=$("$B" audit verify --dir "$v" | sed -n 's/^intact: \([0-9]*\) records.*/\1/p')
awk -v b="$bytes" -v n="$n" -v tv="$tv" -v ts="$ts" 'BEGIN {
	printf "log: %d records, %.1f MB\n", n, b / 1e6
	printf "berth audit verify  %.3f s  %7.1f MB/s\n", tv, b / 1e6 / tv
	printf "sha256sum           %.3f s  %7.1f MB/s\n", ts, b / 1e6 / ts
	printf "verify / sha256sum throughput: %.2fx\n", ts / tv }'
