#!/usr/bin/env bash
# The real Claude Code and Codex CLIs in berth sessions (docs/sessions.md):
# installed from the npm registry into a cache directory, mounted read-only
# into the sandbox, run with their own permission prompts off and the
# api-only network preset.  There is no route to the APIs here: each must
# reach its ready prompt at once (the profiles' seeded home: no onboarding,
# trust or bypass dialog), and `berth ps` must report a sensible state for it;
# then, from a home seeded without the bypass acceptance, Claude Code's bypass
# warning (blocked), prompts submitted with `berth send --enter` to both, and a
# failed turn (error).
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
fail() { T=$((T + 1)); FAILS=$((FAILS + 1)); echo "not ok $T - $1 # $2"; shift 2; local l; for l in "$@"; do printf '%s\n' "$l" | head -n 40 | sed 's/^/#   /'; done; }
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
# (a third argument: that many seconds instead)
wait_state() { local i; for i in $(seq $((${3:-15} * 5))); do [ "$(field "$1" state)" = "$2" ] && return 0; sleep 0.2; done; return 1; }
wait_screen() { local i; for i in $(seq 300); do "$BERTH" peek "$1" 2>/dev/null | grep -qE -- "$2" && return 0; sleep 0.2; done; return 1; }
classifier=1
for a in claude codex; do
	"$BERTH" spawn "real-$a" --name "$a" --size 40x120 </dev/null >"$TOP/out" 2>"$TOP/err"
	eq "$a: spawn exit 0" "$?" 0
	eq "$a: network api-only (through the broker)" "$(field "$a" network)" proxy
done
"$BERTH" ps --json | grep -q 'no state classifier' && classifier=0
# The profiles seed the fresh home (docs/sessions.md, "Seeded home"): each CLI's first screen is its
# ready prompt, not onboarding, a theme choice, sign-in, folder trust or the bypass-permissions warning.
dialogs='Choose the text style|Select login method|trust this folder|Trust this folder|Bypass Permissions mode|Yes, I accept|Sign in with ChatGPT|Sign in another way|Detected a custom API key|Unable to connect to Anthropic'
if wait_screen claude 'bypass permissions on'; then pass "claude: first screen is the prompt"; else fail "claude: first screen is the prompt" "" "$("$BERTH" peek claude)" "$(tail -c 2000 "$XDG_STATE_HOME/berth/sessions/claude/output.log")"; fi
sleep 3
scr=$("$BERTH" peek claude)
if printf '%s' "$scr" | grep -qE -- "$dialogs"; then fail "claude: no first-run dialog" "a dialog is on the screen" "$scr"; else pass "claude: no first-run dialog"; fi
printf '%s' "$scr" | grep -q '^❯' && pass "claude: the input line" || fail "claude: the input line" "" "$scr"
eq "claude: still running at its prompt" "$(field claude alive)" True
st=$(field claude state)
if [ $classifier = 1 ]; then
	case "$st" in idle|done) pass "claude: ps state at the prompt ($st: $(field claude why))";; *) fail "claude: ps state" "$st" "$scr";; esac
else
	eq "claude: ps state running (no classifier in this build)" "$st" running
fi
if wait_screen codex 'Ask Codex to do anything'; then pass "codex: first screen is the prompt"; else fail "codex: first screen is the prompt" "" "$("$BERTH" peek codex)" "$(tail -c 2000 "$XDG_STATE_HOME/berth/sessions/codex/output.log")"; fi
sleep 2
scr=$("$BERTH" peek codex)
if printf '%s' "$scr" | grep -qE -- "$dialogs"; then fail "codex: no first-run dialog" "a dialog is on the screen" "$scr"; else pass "codex: no first-run dialog"; fi
# Codex may draw a busy screen (its animated logo) for a while after the
# prompt first shows: its status line is waited for, not read once.
has_yolo=0
wait_screen codex 'YOLO mode' && has_yolo=1
scr=$("$BERTH" peek codex)
eq "codex: its approvals and sandbox are off (YOLO mode)" "$has_yolo" 1
eq "codex: still running at its prompt" "$(field codex alive)" True
# A screen still redrawing is `working`: codex may animate for a while after
# its status line shows, so the state is waited for (15 s), not read once.
st=$(field codex state)
if [ $classifier = 1 ]; then wait_state codex idle || wait_state codex done 1; st=$(field codex state); fi
if [ $classifier = 1 ]; then
	case "$st" in idle|done) pass "codex: ps state at the prompt ($st: $(field codex why))";; *) fail "codex: ps state" "$st" "$scr";; esac
else
	eq "codex: ps state running (no classifier in this build)" "$st" running
fi
# The preamble is in each agent's own instructions file, in its home, naming the hosts it may reach;
# the workspace has none of it.  Typed as a shell escape (`!`): no model is asked.
q="-e 'berth sandbox' -e platform.claude.com -e auth.openai.com"
"$BERTH" send claude "!grep $q ~/.claude/CLAUDE.md | cat" >/dev/null; sleep 1; "$BERTH" send claude --key enter >/dev/null
"$BERTH" send codex "!grep $q ~/.codex/AGENTS.md | cat" >/dev/null; sleep 1; "$BERTH" send codex --key enter >/dev/null
for a in claude codex; do
	wait_screen "$a" '- auth.openai.com'; scr=$("$BERTH" peek "$a")
	printf '%s' "$scr" | grep -q 'You are running in a berth sandbox' && printf '%s' "$scr" | grep -q -- '- platform.claude.com' && printf '%s' "$scr" | grep -q -- '- auth.openai.com' &&
		pass "$a: the preamble in its home names the api-only hosts" || fail "$a: preamble" "" "$("$BERTH" peek "$a")"
	eq "$a: nothing of berth's in the workspace" "$(find "$XDG_STATE_HOME/berth/sessions/$a/workspace" -type f \( -name CLAUDE.md -o -name AGENTS.md -o -name .claude.json -o -name settings.json -o -name config.toml \) | wc -l)" 0
done
# path: Claude Code laid out as its native installer does (~/.local/bin/claude -> ~/.local/share/claude/
# versions/V, here the npm package's native executable), run from its read-only mount: the prompt again.
V=$(sed -n 's/.*"version": "\(.*\)".*/\1/p' "$CACHE/node_modules/@anthropic-ai/claude-code/package.json")
NATIVE=$(readlink -f "$CACHE/node_modules/@anthropic-ai/claude-code-linux-x64/claude" 2>/dev/null)
if [ -f "$NATIVE" ]; then
	NH=$TOP/nativehome; mkdir -p "$NH/.local/bin" "$NH/.local/share/claude/versions"
	ln "$NATIVE" "$NH/.local/share/claude/versions/$V" 2>/dev/null || cp "$NATIVE" "$NH/.local/share/claude/versions/$V"
	ln -s "../share/claude/versions/$V" "$NH/.local/bin/claude"; chmod -R a+rX "$NH"
	{ cat "$(dirname "$BERTH")/../data/profiles/claude.yml"; echo "path: ~/.local/bin/claude"; } >"$XDG_CONFIG_HOME/berth/profiles/native-claude.yml"
	HOME=$NH "$BERTH" spawn native-claude --name native --network none </dev/null >"$TOP/out" 2>"$TOP/err"
	eq "native: spawn exit 0" "$?" 0
	eq "native: runs the versions file from its mount" "$(field native command)" "['/opt/berth/agent/$V', '--dangerously-skip-permissions']"
	if wait_screen native 'bypass permissions on'; then pass "native: first screen is the prompt"; else fail "native: first screen" "" "$("$BERTH" peek native)"; fi
	sleep 2; scr=$("$BERTH" peek native)
	if printf '%s' "$scr" | grep -qE -- "$dialogs|missing or broken"; then fail "native: no dialog, no install warning" "" "$scr"; else pass "native: no dialog, no install warning"; fi
else
	fail "native: the npm package's native executable" "not found under $CACHE"
fi
echo "# claude screen:"; "$BERTH" peek claude --lines 12 | sed 's/^/#   /'
echo "# codex screen:"; "$BERTH" peek codex --lines 12 | sed 's/^/#   /'
"$BERTH" stop --all --grace 2s >/dev/null 2>&1

# Past the first screens, still without a model: a persistent home seeded as
# if the CLIs had been set up (onboarding done, the fake API key approved,
# /workspace trusted) but the bypass warning not accepted.  Claude Code then stops at its
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
	# The profile's seed accepts the warning for a fresh home; a kept home's own value wins (the merge
	# adds only missing keys), so this home asks again.
	mkdir -p "$H/.claude"; printf '{"skipDangerousModePermissionPrompt": false}\n' >"$H/.claude/settings.json"
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
	# Codex redraws its footer while its first requests fail (no route to the API here), for a few seconds
	# on a loaded machine
	wait_state codex2 idle 45
	st=$(field codex2 state); if [ "$st" = idle ]; then pass "codex2: at its empty composer: idle"; else fail "codex2: at its empty composer: idle" "$st: $(field codex2 why)" "$("$BERTH" peek codex2)"; fi
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
