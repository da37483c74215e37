#!/usr/bin/env bash
# The real Claude Code and Codex CLIs in berth sessions (docs/sessions.md):
# installed from the npm registry into a cache directory, mounted read-only
# into the sandbox, run with their own permission prompts off and the
# api-only network preset.  There is no route to the APIs here: each must
# reach its first screen, and `berth ps` must report a sensible state for it;
# then, from a seeded home, Claude Code's bypass warning (blocked), prompts
# submitted with `berth send --enter` to both, and a failed turn (error).
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
# wait_state NAME STATE: until ps says STATE (15 s; a screen still redrawing is `working`)
wait_state() { local i; for i in $(seq 75); do [ "$(field "$1" state)" = "$2" ] && return 0; sleep 0.2; done; return 1; }
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

# Past the first screens, still without a model: a persistent home seeded as
# if the CLIs had been set up (onboarding done, the fake API key approved,
# /workspace trusted) and nothing else.  Claude Code then stops at its
# bypass-permissions warning (blocked); accepted, a prompt sent with --enter
# is submitted (echoed above the input box) and the turn fails for want of
# a route to the API (error; no retries).  Codex with a provider of its own
# (an env_key, so no login) is at its composer (idle); a prompt sent with
# --enter is submitted (echoed, the composer empty again), also one of two
# lines (a bracketed paste, one prompt).
if [ $classifier = 1 ]; then
	KEY=sk-ant-berth-test-000000000000000000000000
	H=$XDG_STATE_HOME/berth/homes/real-claude; mkdir -p "$H"; chmod 700 "$H"
	printf '{"hasCompletedOnboarding": true, "theme": "dark", "numStartups": 3, "customApiKeyResponses": {"approved": ["%s"], "rejected": []}, "projects": {"/workspace": {"hasTrustDialogAccepted": true, "allowedTools": []}}}\n' "${KEY: -20}" >"$H/.claude.json"
	"$BERTH" spawn real-claude --name claude2 --size 30x100 --persist-home --env "ANTHROPIC_API_KEY=$KEY" \
		--env CLAUDE_CODE_MAX_RETRIES=0 </dev/null >/dev/null 2>"$TOP/err"
	eq "claude2: spawn with a seeded home: exit 0" "$?" 0
	if wait_screen claude2 'Bypass Permissions mode'; then pass "claude2: the bypass-permissions warning"; else fail "claude2: bypass warning" "" "$("$BERTH" peek claude2)"; fi
	wait_state claude2 blocked
	eq "claude2: the bypass warning waits for the user: blocked ($(field claude2 why))" "$(field claude2 state)" blocked
	"$BERTH" send claude2 --key down >/dev/null; sleep 0.5; "$BERTH" send claude2 --enter >/dev/null
	if wait_screen claude2 'bypass permissions on'; then pass "claude2: accepted with send --key down --enter"; else fail "claude2: accept" "" "$("$BERTH" peek claude2)"; fi
	wait_state claude2 idle
	eq "claude2: at its empty input box: idle ($(field claude2 why))" "$(field claude2 state)" idle
	"$BERTH" send claude2 "say hello to berth" --enter >/dev/null
	if wait_screen claude2 '^❯ say hello to berth'; then pass "claude2: send --enter submitted the prompt"; else fail "claude2: prompt submitted" "" "$("$BERTH" peek claude2)"; fi
	if wait_screen claude2 'API Error'; then pass "claude2: the turn fails without a route to the API"; else fail "claude2: API error" "" "$("$BERTH" peek claude2)"; fi
	wait_state claude2 error
	eq "claude2: a failed turn: error ($(field claude2 why))" "$(field claude2 state)" error
	b_ps=$("$BERTH" ps claude2)
	if printf '%s\n' "$b_ps" | awk '$1 == "claude2" {print $3}' | grep -qx error; then pass "claude2: berth ps shows error"; else fail "claude2: ps column" "" "$b_ps"; fi
	echo "# claude2 screen:"; "$BERTH" peek claude2 --lines 10 | sed 's/^/#   /'

	H=$XDG_STATE_HOME/berth/homes/real-codex; mkdir -p "$H/.codex"; chmod 700 "$H"
	printf '%s\n' 'model = "gpt-5"' 'model_provider = "berthtest"' '' '[model_providers.berthtest]' 'name = "berth test"' \
		'base_url = "https://api.openai.com/v1"' 'wire_api = "responses"' 'env_key = "OPENAI_API_KEY"' \
		'request_max_retries = 0' 'stream_max_retries = 0' '' '[projects."/workspace"]' 'trust_level = "trusted"' >"$H/.codex/config.toml"
	"$BERTH" spawn real-codex --name codex2 --size 30x100 --persist-home --env OPENAI_API_KEY=sk-berth-test </dev/null >/dev/null 2>"$TOP/err"
	eq "codex2: spawn with a seeded home: exit 0" "$?" 0
	if wait_screen codex2 'Ask Codex to do anything'; then pass "codex2: at its composer"; else fail "codex2: composer" "" "$("$BERTH" peek codex2)"; fi
	wait_state codex2 idle
	eq "codex2: at its empty composer: idle ($(field codex2 why))" "$(field codex2 state)" idle
	"$BERTH" send codex2 "please read the file README and then summarise what this project does in three sentences" --enter >/dev/null
	if wait_screen codex2 '^› please read the file README and then summarise'; then pass "codex2: send --enter submitted the prompt (not a line break in the composer)"; else fail "codex2: prompt submitted" "" "$("$BERTH" peek codex2)"; fi
	if wait_screen codex2 'Ask Codex to do anything'; then pass "codex2: the composer is empty again"; else fail "codex2: composer empty" "" "$("$BERTH" peek codex2)"; fi
	st=$(field codex2 state)
	case "$st" in working|error) pass "codex2: the submitted turn runs or failed ($st: $(field codex2 why))";; *) fail "codex2: state after the prompt" "$st" "$("$BERTH" peek codex2)";; esac
	"$BERTH" send codex2 --key esc >/dev/null; sleep 1
	"$BERTH" send codex2 "$(printf 'first line of two\nsecond line of two')" --enter >/dev/null
	if wait_screen codex2 '^› first line of two' && "$BERTH" peek codex2 | grep -A1 '^› first line of two' | grep -q '^  second line of two'; then
		pass "codex2: text of two lines is one prompt (a bracketed paste, then Enter)"
	else
		fail "codex2: two lines" "" "$("$BERTH" peek codex2)"
	fi
	echo "# codex2 screen:"; "$BERTH" peek codex2 --lines 10 | sed 's/^/#   /'
	"$BERTH" stop --all --grace 2s >/dev/null 2>&1
fi
eq "stop --all: nothing alive" "$("$BERTH" ps --json | python3 -c 'import json,sys; print(sum(r["alive"] for r in json.load(sys.stdin)))')" 0
echo "# $T tests, $FAILS failed"
[ "$FAILS" -eq 0 ]
