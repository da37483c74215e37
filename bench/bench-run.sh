#!/usr/bin/env bash
# bench/bench-run.sh - start-to-exit latency of `berth run -- /bin/true`
# against bubblewrap, measured in the same run with the two commands
# strictly alternating (berth, bwrap, berth, bwrap, ...).
#
# usage: bench/bench-run.sh [-n N] [-w W] [-b BERTH]
#   -n N      measured rounds (default 200); each round runs both commands once
#   -w W      warm-up rounds, not reported (default 10)
#   -b BERTH  berth binary (default: build/berth next to this script's repo)
#
# Works as root or as an unprivileged user, e.g.
#   runuser -u bertht -- bash bench/bench-run.sh
# (the workspace is a fresh temp dir owned by the caller).
#
# Exit 0 after printing the report; exit 1 (naming the command) if either
# command fails, or 2 on a usage error.
set -euo pipefail

N=200
W=10
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
BERTH="$repo/build/berth"

while getopts 'n:w:b:h' o; do
	case $o in
	n) N=$OPTARG ;;
	w) W=$OPTARG ;;
	b) BERTH=$OPTARG ;;
	*) sed -n '2,16p' "$0"; exit 2 ;;
	esac
done
[[ $N =~ ^[1-9][0-9]*$ ]] || { echo "bench-run: -n wants a positive integer" >&2; exit 2; }
[[ $W =~ ^[0-9]+$ ]] || { echo "bench-run: -w wants a non-negative integer" >&2; exit 2; }

BERTH=$(readlink -f "$BERTH")
BWRAP=$(command -v bwrap || true)
CC=$(command -v cc || true)
[[ -x $BERTH ]] || { echo "bench-run: berth binary not found: $BERTH (build it first)" >&2; exit 1; }
[[ -n $BWRAP ]] || { echo "bench-run: bwrap not found (apt-get install -y bubblewrap)" >&2; exit 1; }
[[ -n $CC ]] || { echo "bench-run: cc not found" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/berth-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
ws="$tmp/workspace"
mkdir "$ws"

"$CC" -O2 -Wall -o "$tmp/runtime" "$here/runtime.c"

berth_cmd=("$BERTH" run -- /bin/true)
bwrap_cmd=("$BWRAP" --ro-bind / / --dev /dev --proc /proc --unshare-all --die-with-parent /bin/true)

# Sanity: each command must succeed once on its own, so a failure is
# reported with its own message rather than as a timing oddity.
cd "$ws"
if ! out=$("${berth_cmd[@]}" 2>&1); then
	echo "bench-run: FAILED: berth: ${berth_cmd[*]}" >&2
	printf '%s\n' "$out" >&2
	exit 1
fi
berth_note=$out   # berth may print a degradation note (e.g. no cgroup for this caller)
if ! out=$("${bwrap_cmd[@]}" 2>&1); then
	echo "bench-run: FAILED: bwrap: ${bwrap_cmd[*]}" >&2
	printf '%s\n' "$out" >&2
	exit 1
fi

if ! "$tmp/runtime" -n "$N" -w "$W" -- "${berth_cmd[@]}" ::: "${bwrap_cmd[@]}" \
	>"$tmp/times" 2>"$tmp/err"; then
	msg=$(cat "$tmp/err")
	case $msg in
	*"command A"*) which=berth ;;
	*"command B"*) which=bwrap ;;
	*) which=timer ;;
	esac
	echo "bench-run: FAILED: $which: $msg" >&2
	exit 1
fi

# stats TAG -> "median_ms p90_ms min_ms" (median: mean of the two middle
# values for even N; p90: nearest rank, ceil(0.9 N)).
stats() {
	awk -v t="$1" '$1 == t { print $2 }' "$tmp/times" | sort -n |
		awk '{ v[NR] = $1 }
		END {
			n = NR
			med = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
			r = int(0.9 * n); if (r < 0.9 * n) r++
			printf "%.3f %.3f %.3f\n", med / 1e6, v[r] / 1e6, v[1] / 1e6
		}'
}
read -r b_med b_p90 b_min < <(stats A)
read -r w_med w_p90 w_min < <(stats B)
ratio=$(awk -v a="$b_med" -v b="$w_med" 'BEGIN { printf "%.2f", a / b }')

cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
[[ -n $cpu ]] || cpu=$(awk -F': *' '/^(Hardware|cpu model|uarch)/ { print $2; exit }' /proc/cpuinfo)
if [[ $(id -u) -eq 0 ]]; then caller="root (uid 0)"; else caller="user $(id -un) (uid $(id -u))"; fi

cat <<EOF
berth start-to-exit latency benchmark
  date     $(date -u '+%Y-%m-%d %H:%M:%S UTC')
  machine  nproc=$(nproc), kernel $(uname -r), CPU ${cpu:-unknown}
  caller   $caller
  rounds   N=$N measured (+$W warm-up), alternating berth, bwrap, berth, bwrap, ...
  timer    CLOCK_MONOTONIC around fork+exec+waitpid (bench/runtime.c), stdio on /dev/null
  berth    (cwd $ws) ${berth_cmd[*]}
  bwrap    ${bwrap_cmd[*]}
EOF
[[ -z $berth_note ]] || printf '  note     berth said: %s\n' "$berth_note"
printf '\n%-7s %11s %11s %11s\n' "" "median ms" "p90 ms" "min ms"
printf '%-7s %11s %11s %11s\n' berth "$b_med" "$b_p90" "$b_min"
printf '%-7s %11s %11s %11s\n' bwrap "$w_med" "$w_p90" "$w_min"
printf '\nratio berth/bwrap (medians): %sx   (goal: <= 1.00x)\n' "$ratio"
exit 0
