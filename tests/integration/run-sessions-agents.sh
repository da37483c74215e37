#!/usr/bin/env bash
# The real Claude Code and Codex CLIs in berth sessions (docs/sessions.md):
# installed from the npm registry into a cache directory, mounted read-only
# into the sandbox, run with their own permission prompts off and the
# api-only network preset.  There is no route to the APIs here: each must
# reach its first screen, and `berth ps` must report a sensible state for it.
#
# usage: run-sessions-agents.sh /path/to/berth [stage-dir]   ok/FAIL lines; exit 1 on a failure
#   BERTH_AGENT_CACHE (default /tmp/berth-agent-cache): where the CLIs are installed
#   (npm install --prefix; reused when present, made readable for every user)
set -u
export LC_ALL=C.UTF-8
unset BERTH_TEST_FORCE_OFF
[ $# -ge 1 ] || { echo "usage: $0 /path/to/berth [stage-dir]" >&2; exit 2; }
BERTH=$(readlink -f -- "$1")
CACHE=${BERTH_AGENT_CACHE:-/tmp/berth-agent-cache}
T=0 FAILS=0
pass() { T=$((T + 1)); echo "ok $T - $1"; }
fail() { T=$((T + 1)); FAILS=$((FAILS + 1)); echo "FAIL $T - $1 # $2"; shift 2; local l; for l in "$@"; do printf '%s\n' "$l" | head -n 40 | sed 's/^/#   /'; done; }
eq() { if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'"; fi; }

if [ ! -x "$CACHE/node_modules/.bin/claude" ] || [ ! -e "$CACHE/node_modules/.bin/codex" ]; then
	mkdir -p "$CACHE" && npm install --no-audit --no-fund --loglevel=error --prefix "$CACHE" \
		@anthropic-ai/claude-code @openai/codex >&2 || { echo "FAIL 1 - npm install of the CLIs into $CACHE"; exit 1; }
	chmod -R a+rX "$CACHE" 2>/dev/null
fi
[ -x "$CACHE/node_modules/.bin/claude" ] && pass "Claude Code installed ($(sed -n 's/.*"version": "\(.*\)".*/\1/p' "$CACHE/node_modules/@anthropic-ai/claude-code/package.json"))" || fail "claude installed" ""
[ -e "$CACHE/node_modules/.bin/codex" ] && pass "Codex installed ($(sed -n 's/.*"version": "\(.*\)".*/\1/p' "$CACHE/node_modules/@openai/codex/package.json"))" || fail "codex installed" ""
# The flags the built-in profiles use exist in these versions.
"$CACHE/node_modules/.bin/claude" --help 2>&1 | grep -q -- '--dangerously-skip-permissions' && pass "claude has --dangerously-skip-permissions" || fail "claude flag" ""
"$CACHE/node_modules/.bin/codex" --help 2>&1 | grep -q -- '--dangerously-bypass-approvals-and-sandbox' && pass "codex has --dangerously-bypass-approvals-and-sandbox" || fail "codex flag" ""

TOP=$(mktemp -d /tmp/berth-sessions-agents.XXXXXX) || exit 1
chmod 755 "$TOP"
export XDG_RUNTIME_DIR=$TOP/run XDG_STATE_HOME=$TOP/state XDG_CONFIG_HOME=$TOP/config
mkdir -p "$XDG_RUNTIME_DIR" "$XDG_CONFIG_HOME/berth/profiles"; chmod 700 "$XDG_RUNTIME_DIR"
trap '"$BERTH" stop --all --grace 0 >/dev/null 2>&1; rm -rf "$TOP"' EXIT
cd "$TOP" || exit 1
# The built-in profiles' command lines, with the binaries from the cache.
for a in claude codex; do
	data=$(dirname "$BERTH")/../data/profiles/$a.yml
	{ grep -v '^command:' "$data"
	  sed -n 's/^command: \[\([a-z]*\), \(.*\)\]/command: [\/opt\/agents\/node_modules\/.bin\/\1, \2]/p' "$data"
	  echo "options: [--ro, '$CACHE:/opt/agents']"; } >"$XDG_CONFIG_HOME/berth/profiles/real-$a.yml"
done
grep -q 'dangerously-skip-permissions' "$XDG_CONFIG_HOME/berth/profiles/real-claude.yml" && pass "real-claude profile derived from the built-in one" || fail "profile" "$(cat "$XDG_CONFIG_HOME/berth/profiles/real-claude.yml")"

field() { "$BERTH" ps --json "$1" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r[0].get(sys.argv[1]) if r else "none")' "$2"; }
wait_screen() { local i; for i in $(seq 300); do "$BERTH" peek "$1" 2>/dev/null | grep -qE -- "$2" && return 0; sleep 0.2; done; return 1; }
classifier=1
for a in claude codex; do
	"$BERTH" spawn "real-$a" --name "$a" --size 40x120 </dev/null >"$TOP/out" 2>"$TOP/err"
	eq "$a: spawn exit 0" "$?" 0
	eq "$a: network api-only (through the broker)" "$(field "$a" network)" proxy
done
"$BERTH" ps --json | grep -q 'no state classifier' && classifier=0
# Claude Code: its welcome screen; without a route to the API it says so (and may exit).
if wait_screen claude 'Claude Code|Welcome to Claude'; then pass "claude: first screen"; else fail "claude: first screen" "" "$("$BERTH" peek claude)" "$(tail -c 2000 "$XDG_STATE_HOME/berth/sessions/claude/output.log")"; fi
sleep 3
st=$(field claude state)
case "$st" in
exited|blocked|idle|working|done) pass "claude: ps state is sensible ($st: $(field claude why))";;
running) [ $classifier = 0 ] && pass "claude: ps state running (no classifier in this build)" || fail "claude state" "$st";;
*) fail "claude: ps state" "$st" "$("$BERTH" peek claude)";;
esac
# Codex: its sign-in screen with numbered choices: waiting for the user.
if wait_screen codex 'Welcome to Codex|Sign in'; then pass "codex: first screen"; else fail "codex: first screen" "" "$("$BERTH" peek codex)" "$(tail -c 2000 "$XDG_STATE_HOME/berth/sessions/codex/output.log")"; fi
sleep 2
st=$(field codex state)
if [ $classifier = 1 ]; then
	eq "codex: the sign-in choice is blocked ($(field codex why))" "$st" blocked
else
	eq "codex: ps state running (no classifier in this build)" "$st" running
fi
echo "# claude screen:"; "$BERTH" peek claude --lines 12 | sed 's/^/#   /'
echo "# codex screen:"; "$BERTH" peek codex --lines 12 | sed 's/^/#   /'
"$BERTH" stop --all --grace 2s >/dev/null 2>&1
eq "stop --all: nothing alive" "$("$BERTH" ps --json | python3 -c 'import json,sys; print(sum(r["alive"] for r in json.load(sys.stdin)))')" 0
echo "# $T tests, $FAILS failed"
[ "$FAILS" -eq 0 ]
