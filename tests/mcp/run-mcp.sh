#!/usr/bin/env bash
# End-to-end tests of `berth mcp` through the official MCP TypeScript SDK client
# (@modelcontextprotocol/sdk, stdio transport), TAP output (mcp.test.mjs).
#
# usage: tests/mcp/run-mcp.sh /path/to/berth /path/to/repo [TEST.mjs]
#   repo: the checkout holding apps/ and tests/apps/fixtures/probe, with
#   apps/filesystem built (ninja -C build; cp build/apps/filesystem/filesystem apps/filesystem/).  Needs node >= 20 and npm
#   (which must reach the registry the first time).
#   TEST.mjs: the tests to run, a file of this directory (default mcp.test.mjs;
#   vm.test.mjs: `berth mcp --runtime vm`, through run-mcp-vm.sh, which needs no
#   apps/filesystem binary).
#
# The SDK (with, for http.test.mjs, the v2 client @modelcontextprotocol/client
# and the MCP Inspector @modelcontextprotocol/inspector) is installed with
# `npm ci` from tests/mcp/package-lock.json into
# tests/mcp/node_modules when this directory is writable (made readable by
# everyone, so that another user can run the suite from the same checkout),
# otherwise into this run's temporary directory.  Works as root and as an
# unprivileged user (runuser -u bertht -- bash tests/mcp/run-mcp.sh ...): the
# apps are copied into a private temporary directory (0755), and every berth
# process gets fresh XDG_STATE_HOME and XDG_RUNTIME_DIR directories.  Exits
# non-zero if any check failed; nothing is skipped.
set -u
export LC_ALL=C
unset BERTH_TEST_FORCE_OFF BERTH_SDK_PYTHON BERTH_MCP_PAGE_SIZE BERTH_MCP_TEST_ELICIT_URL
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

if [ $# -ne 2 ] && [ $# -ne 3 ]; then
	echo "usage: $0 /path/to/berth /path/to/repo [TEST.mjs]" >&2
	exit 2
fi
BERTH=$(readlink -f -- "$1")
REPO=$(readlink -f -- "$2")
TEST=${3:-mcp.test.mjs}
HERE=$(cd "$(dirname "$0")" && pwd)
NODE=${NODE:-/usr/bin/node}
NPM=${NPM:-/usr/bin/npm}
bail() { echo "Bail out! $*"; exit 1; }

[ -x "$BERTH" ] || bail "no berth binary at $1"
[ -f "$HERE/$TEST" ] || bail "no $TEST in $HERE"
{ [ "$TEST" != mcp.test.mjs ] && [ "$TEST" != http.test.mjs ]; } || [ -x "$REPO/apps/filesystem/filesystem" ] || bail "$REPO/apps/filesystem/filesystem is not built (ninja -C build; cp build/apps/filesystem/filesystem apps/filesystem/)"
[ -f "$REPO/tests/apps/fixtures/probe/probe.py" ] || bail "no probe fixture in $REPO/tests/apps/fixtures"
[ -x "$NODE" ] || bail "no node at $NODE"
nv=$("$NODE" -p 'process.versions.node.split(".")[0]') || bail "$NODE does not run"
[ "$nv" -ge 20 ] || bail "node $nv: want >= 20"

TOP=$(mktemp -d /tmp/berth-mcp-test.XXXXXX) || bail "mktemp failed"
chmod 755 "$TOP"      # the apps' sandbox identities must be able to traverse to /app
NODEPID=
# shellcheck disable=SC2317  # invoked by the traps
cleanup() {
	[ -n "$NODEPID" ] && kill -KILL "$NODEPID" 2>/dev/null
	# Anything still running from this run names $TOP on its command line
	# (berth mcp/dev --app-dir $TOP/..., their sandboxes' helpers).
	local p pids=() c
	for p in /proc/[0-9]*; do
		c=$({ tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null) || continue  # a process gone meanwhile
		case "$c" in *"$TOP"/*) pids+=("${p#/proc/}") ;; esac
	done
	[ ${#pids[@]} -gt 0 ] && kill -KILL "${pids[@]}" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$TOP" 2>/dev/null || { chmod -R u+rwx "$TOP" 2>/dev/null; rm -rf "$TOP"; }
}
trap cleanup EXIT
trap 'cleanup; trap - EXIT; exit 130' INT TERM

# ---- the SDK
JS=$TOP/js
if ! { mkdir "$JS" && cp "$HERE"/*.mjs "$HERE/package.json" "$JS/"; }; then bail "cannot stage the tests"; fi
[ -f "$HERE/package-lock.json" ] && cp "$HERE/package-lock.json" "$JS/"
stamp=$HERE/node_modules/.berth-package-lock.json   # the lock file node_modules was installed from
if [ -w "$HERE" ] && ! cmp -s "$HERE/package-lock.json" "$stamp"; then
	echo "# npm: installing the MCP SDK into $HERE/node_modules"
	if [ -f "$HERE/package-lock.json" ]; then
		(cd "$HERE" && "$NPM" ci --no-audit --no-fund --loglevel=error) >&2 || bail "npm ci failed"
	else
		(cd "$HERE" && "$NPM" install --no-audit --no-fund --loglevel=error) >&2 || bail "npm install failed"
		cp "$HERE/package-lock.json" "$JS/"
	fi
	cp "$HERE/package-lock.json" "$stamp"
fi
[ -w "$HERE" ] && [ -d "$HERE/node_modules" ] && chmod -R a+rX "$HERE/node_modules"
if [ -r "$stamp" ] && cmp -s "$HERE/package-lock.json" "$stamp"; then
	ln -s "$HERE/node_modules" "$JS/node_modules"
else
	echo "# npm: installing the MCP SDK into $JS/node_modules"
	[ -f "$JS/package-lock.json" ] || bail "no tests/mcp/package-lock.json and $HERE is not writable"
	(cd "$JS" && npm_config_cache=$TOP/npm-cache "$NPM" ci --no-audit --no-fund --loglevel=error) >&2 ||
		bail "npm ci failed"
fi
echo "# MCP SDK $("$NODE" -p "require('$JS/node_modules/@modelcontextprotocol/sdk/package.json').version"), node $("$NODE" --version), $(id -un)"

# ---- pristine copies of the apps (mcp.test.mjs copies them again per test)
SRC=$TOP/src
if ! { mkdir -p "$SRC" && cp -a "$REPO/apps/filesystem" "$REPO/apps/notes" "$REPO/apps/git" "$REPO/apps/postgres" "$REPO/apps/terminal" "$REPO/apps/browser" "$REPO/tests/apps/fixtures/probe" "$SRC/"; }; then
	bail "cannot copy the apps"
fi
rm -rf "$SRC"/*/__pycache__
chmod -R a+rX "$SRC"

UNIQ=$(( ($$ % 9000) + 1000 ))$RANDOM
BERTH_MCP_REPO=$REPO BERTH_MCP_BERTH=$BERTH BERTH_MCP_TOP=$TOP BERTH_MCP_SRC=$SRC BERTH_MCP_UNIQ=$UNIQ \
	"$NODE" "$JS/$TEST" &
NODEPID=$!
wait "$NODEPID"
rc=$?
NODEPID=
exit $rc
