#!/usr/bin/env bash
# bench/bench-mcp-sdk.sh - `berth mcp` through the official MCP TypeScript SDK
# client (bench/mcp_sdk.mjs; the SDK of tests/mcp/node_modules, installed by
# tests/mcp/run-mcp.sh or `npm ci` there), over stdio and over Streamable HTTP
# (`berth mcp --listen 127.0.0.1:0`), serving a private copy of apps/filesystem:
#   cold: start the server, initialize, the first tools/call answered (N runs);
#   warm: sequential tools/call round trips on one session (10*N calls).
# bench/bench-mcp.sh is the same without Node (a C client, stdio only).
#
# usage: bench/bench-mcp-sdk.sh [-n N] [-b BERTH]   (default N 30)
# Works as root or as an unprivileged user (runuser -u bertht -- bash ...).
set -euo pipefail

N=30
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
[[ $N =~ ^[1-9][0-9]*$ ]] || { echo "bench-mcp-sdk: -n wants a positive integer" >&2; exit 2; }
BERTH=$(readlink -f "$BERTH")
[[ -x $BERTH ]] || { echo "bench-mcp-sdk: berth binary not found: $BERTH (build it first)" >&2; exit 1; }
app=$repo/apps/filesystem
[[ -x $app/filesystem ]] || { echo "bench-mcp-sdk: $app/filesystem is not built (cp build/apps/filesystem/filesystem apps/filesystem/)" >&2; exit 1; }
sdk=$repo/tests/mcp/node_modules
[[ -f $sdk/@modelcontextprotocol/sdk/package.json ]] || { echo "bench-mcp-sdk: no SDK in $sdk (run tests/mcp/run-mcp.sh once, or npm ci there)" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/berth-bench-mcp-sdk.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
export XDG_STATE_HOME=$tmp/state XDG_RUNTIME_DIR=$tmp/run
mkdir -p "$XDG_STATE_HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
cp "$BERTH" "$tmp/berth"
cp -a "$app" "$tmp/filesystem"
# node resolves packages from the script's directory upwards
mkdir "$tmp/js" && cp "$here/mcp_sdk.mjs" "$tmp/js/" && ln -s "$sdk" "$tmp/js/node_modules"
run() { node "$tmp/js/mcp_sdk.mjs" "$@" "$tmp/berth" "$tmp/filesystem" || { echo "bench-mcp-sdk: FAILED: $*" >&2; exit 1; }; }
out=()
for t in stdio http; do
	out+=("$(run cold "$N" "$t")" "$(run warm "$((10 * N))" "$t")")
done
cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
if [[ $(id -u) -eq 0 ]]; then caller="root (uid 0)"; else caller="user $(id -un) (uid $(id -u))"; fi
echo "berth mcp benchmark, official SDK client ($(node -p "require('$sdk/@modelcontextprotocol/sdk/package.json').version"), node $(node --version))"
echo "  date     $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "  machine  nproc=$(nproc), kernel $(uname -r), CPU ${cpu:-unknown}"
echo "  caller   $caller"
echo "  server   berth mcp --app filesystem --app-dir <a private copy> --no-dev [--listen 127.0.0.1:0] (protocol 2025-11-25)"
printf '%s\n' "${out[@]}"
