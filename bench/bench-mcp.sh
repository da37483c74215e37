#!/usr/bin/env bash
# bench/bench-mcp.sh - `berth mcp` as an MCP client sees it, measured by a
# small C client (bench/mcp_client.c; no Node, no SDK) over the stdio
# transport, serving a private copy of apps/filesystem:
#   cold: spawn `berth mcp`, initialize, the first tools/call (write_file,
#         which boots the app's sandbox) answered; a new process each run,
#         ended by closing its stdin and reaped (it must exit 0);
#   warm: one server, after a first call: sequential tools/call round trips
#         (read_file).
# BerthOS publishes 625-851 ms for its cold first tool call; it is not
# installable here (not a Debian or npm package), so its published figure is
# the comparison.  Goals: cold median <= 20 ms, warm p50 <= 0.5 ms.
#
# usage: bench/bench-mcp.sh [-n N] [-b BERTH] [-r RUNTIME]
#   -n N      measured runs: cold N, warm 10*N (default 100)
#   -b BERTH  berth binary (default: build/berth of this repo)
#   -r RUNTIME  `berth mcp --runtime RUNTIME` (default: the namespace runtime);
#             `-r vm -n 5`: the app boots in a microVM (docs/vm.md): the cold
#             call includes the boot, the warm ones cross the VM's channel
#
# Works as root or as an unprivileged user (runuser -u bertht -- bash
# bench/bench-mcp.sh): the binary, the app and the client are copied to a
# fresh temp dir first.  Exit 0 after the report, 1 if a step fails (named),
# 2 on a usage error.
set -euo pipefail

N=100
RUNTIME=
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
BERTH="$repo/build/berth"
while getopts 'n:b:r:h' o; do
	case $o in
	n) N=$OPTARG ;;
	b) BERTH=$OPTARG ;;
	r) RUNTIME=$OPTARG ;;
	*) sed -n '2,25p' "$0"; exit 2 ;;
	esac
done
[[ $N =~ ^[1-9][0-9]*$ ]] || { echo "bench-mcp: -n wants a positive integer" >&2; exit 2; }
BERTH=$(readlink -f "$BERTH")
[[ -x $BERTH ]] || { echo "bench-mcp: berth binary not found: $BERTH (build it first)" >&2; exit 1; }
app=$repo/apps/filesystem
if [[ ! -x $app/filesystem ]]; then
	# shellcheck source=../scripts/deps.sh
	. "$repo/scripts/deps.sh"
	berth_build "$repo" >/dev/null || { echo "bench-mcp: FAILED: the build (meson, ninja -C build)" >&2; exit 1; }
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/berth-bench-mcp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# the caller's installed guest (`berth vm install`), before the state moves
[[ $RUNTIME == vm ]] && export BERTH_VM_DIR=${BERTH_VM_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/berth/vm}
export XDG_STATE_HOME=$tmp/state XDG_RUNTIME_DIR=$tmp/run
mkdir -p "$XDG_STATE_HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
# Private copies: a rebuild in the checkout during the run changes nothing.
cp "$BERTH" "$tmp/berth"
cp -a "$app" "$tmp/filesystem"
cc -O2 -Wall -o "$tmp/mcp_client" "$here/mcp_client.c" || { echo "bench-mcp: FAILED: cc mcp_client.c" >&2; exit 1; }

rt=()
[[ -n $RUNTIME ]] && rt=("$RUNTIME")
cold=$("$tmp/mcp_client" cold "$N" "$tmp/berth" "$tmp/filesystem" "${rt[@]}") ||
	{ echo "bench-mcp: FAILED: cold runs" >&2; exit 1; }
warm=$("$tmp/mcp_client" warm "$((10 * N))" "$tmp/berth" "$tmp/filesystem" "${rt[@]}") ||
	{ echo "bench-mcp: FAILED: warm calls" >&2; exit 1; }

cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
if [[ $(id -u) -eq 0 ]]; then caller="root (uid 0)"; else caller="user $(id -un) (uid $(id -u))"; fi
cat <<EOF
berth mcp benchmark
  date     $(date -u '+%Y-%m-%d %H:%M:%S UTC')
  machine  nproc=$(nproc), kernel $(uname -r), CPU ${cpu:-unknown}
  caller   $caller
  server   berth mcp ${RUNTIME:+--runtime $RUNTIME }--app filesystem --app-dir <a private copy> --no-dev (protocol 2025-06-18)

$cold
    (goal <= 20 ms median; BerthOS cold first tool call 625-851 ms)
$warm
    (goal <= 0.5 ms p50)
EOF
