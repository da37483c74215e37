#!/usr/bin/env bash
# bench/bench-apps.sh - resident apps: cold `berth rpc`, a warm call to a
# running `berth dev`, and `berth dev`'s reload after an edit, against the
# figures BerthOS publishes for the same operations (cold first tool call
# 625-851 ms, attach to a running sandbox ~260 ms, reload after a change
# ~550 ms).  BerthOS is not installable here (not a Debian or npm package),
# so its published numbers are the comparison; berth's own are measured.
#
# usage: bench/bench-apps.sh [-n N] [-b BERTH]
#   -n N      measured runs of each (default 100; reloads: N/5, at least 10)
#   -b BERTH  berth binary (default: build/berth of this repo)
#
# Works as root or as an unprivileged user.  Exit 0 after the report, 1 if a
# step fails (named), 2 on a usage error.
set -euo pipefail

N=100
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
BERTH="$repo/build/berth"
while getopts 'n:b:h' o; do
	case $o in
	n) N=$OPTARG ;;
	b) BERTH=$OPTARG ;;
	*) sed -n '2,14p' "$0"; exit 2 ;;
	esac
done
[[ $N =~ ^[1-9][0-9]*$ ]] || { echo "bench-apps: -n wants a positive integer" >&2; exit 2; }
BERTH=$(readlink -f "$BERTH")
[[ -x $BERTH ]] || { echo "bench-apps: berth binary not found: $BERTH (build it first)" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/berth-bench-apps.XXXXXX")
devpid=
cleanup() { [[ -n $devpid ]] && kill "$devpid" 2>/dev/null && wait "$devpid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
export XDG_STATE_HOME=$tmp/state XDG_RUNTIME_DIR=$tmp/run
mkdir -p "$XDG_STATE_HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"

# A private copy of the filesystem app (reload edits it), built.
# shellcheck source=../scripts/deps.sh
. "$repo/scripts/deps.sh"
berth_build "$repo" >/dev/null || { echo "bench-apps: FAILED: the build (meson, ninja -C build)" >&2; exit 1; }
cp -a "$repo/apps/filesystem" "$tmp/filesystem"
cc -O2 -Wall -o "$tmp/runtime" "$here/runtime.c"
cc -O2 -Wall -o "$tmp/dev_client" "$here/dev_client.c"

stats() { # stats FILE -> "median p90 min" in ms from ns lines "A <ns>"
	awk '{ print $2 }' "$1" | sort -n | awk '{ v[NR] = $1 }
		END { n = NR; med = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		      r = int(0.9 * n); if (r < 0.9 * n) r++
		      printf "%.2f %.2f %.2f\n", med / 1e6, v[r] / 1e6, v[1] / 1e6 }'
}

# 1. Cold: boot, one call, stop; a new berth process each time.
call=("$BERTH" rpc filesystem --app-dir "$tmp/filesystem" --export write_file
	--input '{"path":"bench.txt","content":"hello from a sandbox"}')
"${call[@]}" >/dev/null || { echo "bench-apps: FAILED: ${call[*]}" >&2; exit 1; }
"$tmp/runtime" -n "$N" -w 5 -- "${call[@]}" >"$tmp/cold" || { echo "bench-apps: FAILED: cold rpc" >&2; exit 1; }
read -r c_med c_p90 c_min < <(stats "$tmp/cold")

# 2. and 3. A running berth dev.
"$BERTH" dev "$tmp/filesystem" 2>"$tmp/dev.log" &
devpid=$!
sock=$XDG_RUNTIME_DIR/berth/dev/filesystem.sock
for _ in $(seq 100); do [[ -S $sock ]] && grep -q 'watching' "$tmp/dev.log" && break; sleep 0.05; done
[[ -S $sock ]] || { echo "bench-apps: FAILED: berth dev did not start:" >&2; cat "$tmp/dev.log" >&2; exit 1; }
warm=$("$tmp/dev_client" call "$sock" "$N" read_file '{"path":"bench.txt"}') ||
	{ echo "bench-apps: FAILED: warm calls" >&2; exit 1; }
R=$((N / 5)); ((R >= 10)) || R=10
reload=$("$tmp/dev_client" reload "$sock" "$R" "$tmp/filesystem/berth.yml") ||
	{ echo "bench-apps: FAILED: reloads" >&2; cat "$tmp/dev.log" >&2; exit 1; }
# Through a new `berth rpc` process each time (what a shell user sees).
attach=("$BERTH" rpc filesystem --export read_file --input '{"path":"bench.txt"}')
"$tmp/runtime" -n "$N" -w 5 -- "${attach[@]}" >"$tmp/attach" || { echo "bench-apps: FAILED: rpc via dev" >&2; exit 1; }
read -r a_med a_p90 a_min < <(stats "$tmp/attach")

cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
if [[ $(id -u) -eq 0 ]]; then caller="root (uid 0)"; else caller="user $(id -un) (uid $(id -u))"; fi
cat <<EOF
berth resident-app benchmark
  date     $(date -u '+%Y-%m-%d %H:%M:%S UTC')
  machine  nproc=$(nproc), kernel $(uname -r), CPU ${cpu:-unknown}
  caller   $caller
  app      apps/filesystem (C SDK), a private copy

cold berth rpc (boot, write_file, stop), N=$N:  median $c_med ms, p90 $c_p90 ms, min $c_min ms
    goal <= 15 ms median; BerthOS cold first tool call 625-851 ms
$warm
    (a client connected to berth dev's control socket; goal <= 0.5 ms p50; BerthOS attach ~260 ms)
berth rpc through berth dev (a new berth process per call), N=$N:  median $a_med ms, p90 $a_p90 ms, min $a_min ms
$reload
    (from the write to berth dev serving the new digest; goal <= 50 ms; BerthOS reload ~550 ms)
EOF
