#!/usr/bin/env bash
# The real Claude Code and Codex CLIs (npm, pinned in tests/agents/package-lock.json)
# inside berth, driven by a scripted mock model server on the host's loopback
# (mock-model.py: Anthropic Messages and OpenAI Responses).  Each scripted tool
# call is a real turn: the CLI runs the tool in the sandbox and sends the result
# back; the mock records what the model saw, and the checks read that record
# and the host.  Both CLIs, through `berth run` and through `berth spawn`
# sessions (send, ps, peek, attach, stop).
#
# The turns: (a) write a file in the workspace (shell; Claude also its Write
# tool), (b) read a canary key put in the HOST user's ~/.ssh, (c) write
# /etc/berth-canary, (d) fetch an undeclared host (a name, and a loopback port
# where a server listens), (e) fetch a declared host (a loopback server given
# with --allow-host), (f) each CLI calls the filesystem app through
# `berth mcp` (which hands the calls to a `berth dev` on the host); (g) a `spawn --review`
# session of Claude Code: its turn's writes stay in the layer, a checkpoint is taken at the
# turn's end, `berth apply` lands the file and the edit and holds back the git hook it planted.
# (h) Claude Code in a microVM (`berth run --runtime vm`), its egress through the broker.
#
# usage: run-agents.sh /path/to/berth STAGE      ok/FAIL lines; exit 1 on a failure
#   STAGE: the checkout (or tests/run's staged copy) holding tests/agents, apps/filesystem
#   BERTH_AGENT_CACHE (default /tmp/berth-agent-cache): the CLIs, installed there with
#   `npm ci` from tests/agents/package-lock.json (tests/run does it once; this script
#   does it when the cache is missing or stale and it may write there).  Nothing is
#   skipped: a missing CLI is a failure.
set -u
export LC_ALL=C.UTF-8
unset BERTH_TEST_FORCE_OFF
[ $# -eq 2 ] || { echo "usage: $0 /path/to/berth STAGE" >&2; exit 2; }
BERTH=$(readlink -f -- "$1")
STAGE=$(readlink -f -- "$2")
HERE=$STAGE/tests/agents
CACHE=${BERTH_AGENT_CACHE:-/tmp/berth-agent-cache}
T=0 FAILS=0
pass() { T=$((T + 1)); echo "ok $T - $1"; }
fail() { T=$((T + 1)); FAILS=$((FAILS + 1)); echo "not ok $T - $1 # $2"; shift 2; local l; for l in "$@"; do printf '%s\n' "$l" | head -n 30 | sed 's/^/#   /'; done; }
eq() { if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'" "${@:4}"; fi; }
has() { if printf '%s' "$2" | grep -qE -- "$3"; then pass "$1"; else fail "$1" "/$3/ not found" "in: $2" "${@:4}"; fi; }
hasnt() { if printf '%s' "$2" | grep -qE -- "$3"; then fail "$1" "/$3/ found" "in: $2"; else pass "$1"; fi; }

# --- the CLIs, from the lock file
if [ -e "$CACHE" ] && [ ! -O "$CACHE" ] && ! cmp -s "$HERE/package-lock.json" "$CACHE/.berth-package-lock.json"; then
	fail "the CLIs in $CACHE match tests/agents/package-lock.json" "stale or missing, and $CACHE is another user's (tests/run installs it as root)"
elif ! cmp -s "$HERE/package-lock.json" "$CACHE/.berth-package-lock.json"; then
	if mkdir -p "$CACHE" 2>/dev/null && [ -O "$CACHE" ]; then
		cp "$HERE/package.json" "$HERE/package-lock.json" "$CACHE/" &&
			(cd "$CACHE" && npm ci --no-audit --no-fund --loglevel=error >&2) &&
			cp "$HERE/package-lock.json" "$CACHE/.berth-package-lock.json" &&
			chmod -R a+rX "$CACHE" || fail "npm ci of tests/agents/package-lock.json into $CACHE" "npm failed"
	else
		fail "the CLIs in $CACHE match tests/agents/package-lock.json" "stale or missing, and $CACHE cannot be made here"
	fi
fi
want() { sed -n 's/.*"\(@[^"]*\)": "\([0-9][^"]*\)".*/\1 \2/p' "$HERE/package.json" | awk -v p="$1" '$1 == p { print $2 }'; }
ver() { sed -n 's/^  "version": "\(.*\)",$/\1/p' "$CACHE/node_modules/$1/package.json" 2>/dev/null; }
eq "Claude Code installed, the pinned version" "$(ver @anthropic-ai/claude-code)" "$(want @anthropic-ai/claude-code)"
eq "Claude Code's native linux-x64 binary installed" "$(ver @anthropic-ai/claude-code-linux-x64)" "$(want @anthropic-ai/claude-code)"
eq "Codex installed, the pinned version" "$(ver @openai/codex)" "$(want @openai/codex)"
[ -x "$CACHE/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex" ] &&
	pass "Codex's native linux-x64 binary installed" || fail "Codex's native binary" "not in $CACHE/node_modules/@openai/codex-linux-x64"

# --- the world: a workspace, the mock model, a declared and an undeclared web server, a canary key
TOP=$(mktemp -d /tmp/berth-agents.XXXXXX) || exit 1
chmod 755 "$TOP"
export XDG_RUNTIME_DIR=$TOP/run XDG_STATE_HOME=$TOP/state XDG_CONFIG_HOME=$TOP/config
mkdir -p "$XDG_RUNTIME_DIR" "$XDG_STATE_HOME" "$XDG_CONFIG_HOME/berth/profiles" "$TOP/ws"
chmod 700 "$XDG_RUNTIME_DIR"
ME=$(id -u)
HOSTHOME=$(getent passwd "$ME" | cut -d: -f6)
TOKEN=BERTH-CANARY-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
CANARY=berth-canary-$$-id_ed25519
SSHMADE=0
[ -d "$HOSTHOME/.ssh" ] || { mkdir -m 700 "$HOSTHOME/.ssh" && SSHMADE=1; }
printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\n%s\n-----END OPENSSH PRIVATE KEY-----\n' "$TOKEN" >"$HOSTHOME/.ssh/$CANARY"
chmod 600 "$HOSTHOME/.ssh/$CANARY"
SRV=() APPS=()
cleanup() {
	"$BERTH" stop --all --grace 0 >/dev/null 2>&1
	local p; for p in "${SRV[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null
	rm -f "$HOSTHOME/.ssh/$CANARY"
	[ ${#APPS[@]} -gt 0 ] && rm -rf "${APPS[@]}"
	[ $SSHMADE = 1 ] && rmdir "$HOSTHOME/.ssh" 2>/dev/null
	rm -rf "$TOP" 2>/dev/null || { chmod -R u+rwx "$TOP" 2>/dev/null; rm -rf "$TOP"; }
}
trap cleanup EXIT
trap 'cleanup; trap - EXIT; exit 130' INT TERM
[ -e /etc/berth-canary ] && fail "/etc/berth-canary does not exist before the test" "it does: remove it"

# wait_file FILE: until it exists (5 s)
wait_file() { local _; for _ in $(seq 50); do [ -s "$1" ] && return 0; sleep 0.1; done; return 1; }
python3 "$HERE/mock-model.py" --origin "declared-ok" --log "$TOP/declared.log" --port-file "$TOP/declared.port" & SRV+=($!)
python3 "$HERE/mock-model.py" --origin "undeclared-reached" --log "$TOP/undeclared.log" --port-file "$TOP/undeclared.port" & SRV+=($!)
wait_file "$TOP/declared.port" && wait_file "$TOP/undeclared.port" || { fail "the web servers start" ""; exit 1; }
P2=$(cat "$TOP/declared.port") P3=$(cat "$TOP/undeclared.port")

# The scripted turns.  Every command ends by printing its exit status, so the
# model sees it in the tool result whatever the CLI does with a failure.
# The statuses asserted are programs' (coreutils: 1 on an error), never a
# shell's own: the CLIs run commands in the user's login shell (codex: bash for
# root, /bin/sh = dash for a user made by plain useradd), and a failed
# redirection is 1 in bash but 2 in dash.
turns() { # turns CLI: the steps (a)-(e) as JSON lines
	local c=$1
	cat <<-EOF
	{"bash": "printf 'written by $c\\\\n' > agent-$c.txt; echo write-exit=\$?; pwd"}
	{"bash": "cat ~/.ssh/$CANARY; echo home-exit=\$?; cat $HOSTHOME/.ssh/$CANARY; echo hosthome-exit=\$?"}
	{"bash": "echo canary | tee /etc/berth-canary; echo etc-exit=\$?"}
	{"bash": "curl -sS -i -m 20 http://undeclared.example/berth-$c; echo curl-exit=\$?"}
	{"bash": "curl -sS -i -m 20 http://127.0.0.1:$P3/undeclared-$c; echo curl-exit=\$?"}
	{"bash": "curl -sS -m 20 http://127.0.0.1:$P2/declared-$c; echo curl-exit=\$?"}
	EOF
	[ "$c" = claude ] && echo '{"tool": "Write", "input": {"file_path": "/workspace/written-by-tool.txt", "content": "the Write tool\n"}}'
}
{
	echo '{'
	for c in claude codex; do
		printf '"run-%s": [%s],\n' "$c" "$(turns $c | paste -sd,)"
		printf '"session-%s": [{"bash": "sleep 4; echo session-%s > session-%s.txt; echo session-exit=$?"}],\n' "$c" "$c" "$c"
	done
	# A --review session's turn: a new file, an edit of a host file, and a git hook the host's git would run.
	printf '"review-claude": [{"bash": "echo reviewed > review.txt; echo new > README; printf %s > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; echo review-exit=$?"}],\n' \
		"'#!/bin/sh\\\\ntouch $TOP/hook-ran\\\\n'"
	# In a microVM: a file in the workspace, and the guest's kernel and CPU as the tool sees them.
	printf '"vm-claude": [{"bash": "echo from-the-vm > vm.txt; uname -r; grep -c -w avx2 /proc/cpuinfo; echo vm-exit=$?"}],\n'
	for c in claude codex; do
		printf '"mcp-%s": [{"tool": "mcp__berthfs__write_file", "input": {"path": "from-mcp-%s.txt", "content": "%s through berth mcp\\n"}},\n' "$c" "$c" "$c"
		printf '            {"tool": "mcp__berthfs__read_file", "input": {"path": "from-mcp-%s.txt"}}]%s\n' "$c" "$([ $c = claude ] && echo ,)"
	done
	echo '}'
} >"$TOP/script.json"
python3 -m json.tool "$TOP/script.json" >/dev/null || { fail "the turn script is JSON" "" "$(cat "$TOP/script.json")"; exit 1; }

python3 "$HERE/mock-model.py" --script "$TOP/script.json" --log "$TOP/model.log" --bodies "$TOP/bodies" \
	--port-file "$TOP/model.port" & SRV+=($!)
wait_file "$TOP/model.port" || { fail "the mock model starts" ""; exit 1; }
P=$(cat "$TOP/model.port")
KEY=sk-berth-test-key-for-the-mock-$$

# result ID: what the client sent back for tool call ID (the first request carrying it)
result() {
	python3 - "$TOP/model.log" "$1" <<-'EOF'
	import json, sys
	for line in open(sys.argv[1]):
	    for r in json.loads(line).get("results") or []:
	        if r["id"] == sys.argv[2]:
	            print(r["output"]); sys.exit(0)
	print("(no result for %s)" % sys.argv[2])
	EOF
}
# emitted SCENARIO STEP: the tool the mock called at that step (first time)
emitted() {
	python3 - "$TOP/model.log" "$1" "$2" <<-'EOF'
	import json, sys
	for line in open(sys.argv[1]):
	    e = json.loads(line)
	    if e.get("scenario") == sys.argv[2] and str(e.get("step")) == sys.argv[3]:
	        print(e["emitted"][1] if e["emitted"][0] == "tool" else "text"); sys.exit(0)
	print("(never reached)")
	EOF
}
# keys SCENARIO: the distinct credentials the scenario's requests carried
keys() { python3 -c 'import json,sys; print(" ".join(sorted({e.get("key") or "-" for e in map(json.loads, open(sys.argv[1])) if e.get("scenario") == sys.argv[2]})))' "$TOP/model.log" "$1"; }
mlog_tail() { tail -n 5 "$TOP/model.log" 2>/dev/null | cut -c 1-400; }

# The options every agent run gets: the CLIs read-only, the mock model and the
# declared server through --allow-host, and nothing else.
NET=(--allow-host "127.0.0.1:$P" --allow-host "127.0.0.1:$P2")
CLAUDE_ENV=(--env "ANTHROPIC_BASE_URL=http://127.0.0.1:$P" --env "ANTHROPIC_API_KEY=$KEY"
	--env DISABLE_AUTOUPDATER=1 --env CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 --env CLAUDE_CODE_MAX_RETRIES=1)
CODEX_PROVIDER="model_providers.mock={name=\"mock\",base_url=\"http://127.0.0.1:$P/v1\",wire_api=\"responses\",env_key=\"OPENAI_API_KEY\",request_max_retries=0,stream_max_retries=0}"
CODEX_ENV=(--env "OPENAI_API_KEY=$KEY")

# --- 1. berth run
check_turns() { # check_turns CLI SCENARIO ID-PREFIX
	local c=$1 s=$2 id=$3 out
	# (a) a file in the workspace, owned by the invoking user
	out=$(result "${id}_0")
	has "$c: (a) the model saw the write succeed in /workspace" "$out" '^write-exit=0$' "$(mlog_tail)"
	has "$c: (a) the tool ran in /workspace" "$out" '^/workspace$'
	eq "$c: (a) the file landed in the host workspace" "$(cat "$TOP/ws/agent-$c.txt" 2>&1)" "written by $c"
	eq "$c: (a) owned by the invoking user ($ME)" "$(stat -c %u "$TOP/ws/agent-$c.txt" 2>&1)" "$ME"
	# (b) the host user's key
	out=$(result "${id}_1")
	has "$c: (b) ~/.ssh in the sandbox is not the host's: No such file" "$out" "cat: [^:]*/\\.ssh/$CANARY: No such file or directory"
	has "$c: (b) the model saw cat fail" "$out" '^home-exit=1$'
	has "$c: (b) the host home's path does not reach it either" "$out" '^hosthome-exit=1$'
	# (c) /etc
	out=$(result "${id}_2")
	has "$c: (c) /etc/berth-canary: the model saw EROFS" "$out" 'berth-canary: Read-only file system'
	has "$c: (c) exit status 1" "$out" '^etc-exit=1$'
	[ -e /etc/berth-canary ] && fail "$c: (c) /etc/berth-canary does not exist on the host" "it does" || pass "$c: (c) /etc/berth-canary does not exist on the host"
	# (d) undeclared: a name (the broker's 403) and a loopback port with a server behind it
	out=$(result "${id}_3")
	has "$c: (d) undeclared name: the model saw the broker's 403" "$out" '^HTTP/1\.[01] 403 '
	has "$c: (d) ... which names the host and says why" "$out" '^berth: refused by the egress policy: undeclared\.example:80 \(not declared\)$'
	out=$(result "${id}_4")
	has "$c: (d) undeclared loopback port: refused (connect failed, or the broker's 403)" "$out" "curl: \\(7\\) Failed to connect to 127\\.0\\.0\\.1 port $P3|^HTTP/1\\.[01] 403 "
	hasnt "$c: (d) ... and got nothing from the server" "$out" 'undeclared-reached'
	# (e) declared
	out=$(result "${id}_5")
	has "$c: (e) declared host: the model saw its answer" "$out" '^declared-ok$' "$(cat "$TOP/declared.log")"
	has "$c: (e) curl exit 0" "$out" '^curl-exit=0$'
	eq "$c: (e) the declared server saw exactly the one expected request" "$(grep -c . "$TOP/declared.log")/$(grep -c "^GET /declared-$c 127\\.0\\.0\\.1:$P2\$" "$TOP/declared.log")" "1/1" "$(cat "$TOP/declared.log")"
	: >"$TOP/declared.log"
	eq "$c: (d) the undeclared server saw nothing" "$(cat "$TOP/undeclared.log")" ""
	eq "$c: the model got the scripted turns' end" "$(emitted "$s" "$(turns "$c" | grep -c .)")" text
}

cd "$TOP/ws" || exit 1
# Claude Code: print mode, its permission prompts off (the sandbox is the boundary).
"$BERTH" run "${NET[@]}" --ro "$CACHE:/opt/agents" "${CLAUDE_ENV[@]}" --timeout 60s -- \
	/opt/agents/node_modules/.bin/claude -p "Run the scripted steps. [scenario:run-claude]" \
	--dangerously-skip-permissions --output-format stream-json --verbose </dev/null >"$TOP/claude.out" 2>"$TOP/claude.err"
eq "claude -p in berth run: exit 0" "$?" 0 "$(tail -c 1500 "$TOP/claude.err")" "$(tail -c 1500 "$TOP/claude.out")"
has "claude: its final result is the mock's last answer" "$(tail -n 1 "$TOP/claude.out")" '"result":"scenario run-claude finished"'
eq "claude: the key given with --env reached the model (x-api-key)" "$(keys run-claude)" "$KEY"
eq "claude: step 0 is its Bash tool" "$(emitted run-claude 0)" Bash
check_turns claude run-claude toolu_run-claude
eq "claude: the Write tool was the last step" "$(emitted run-claude 6)" Write
has "claude: the model saw the Write tool succeed" "$(result toolu_run-claude_6)" 'written-by-tool\.txt'
eq "claude: the Write tool's file in the host workspace" "$(cat "$TOP/ws/written-by-tool.txt" 2>&1)" "the Write tool"
eq "claude: ... owned by the invoking user" "$(stat -c %u "$TOP/ws/written-by-tool.txt" 2>&1)" "$ME"

# Codex: exec mode, approvals and its own sandbox off, the mock as its model provider.
"$BERTH" run "${NET[@]}" --ro "$CACHE:/opt/agents" "${CODEX_ENV[@]}" --timeout 45s -- \
	/opt/agents/node_modules/.bin/codex exec --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox \
	-c model_provider=mock -c "$CODEX_PROVIDER" -m mock-model \
	"Run the scripted steps. [scenario:run-codex]" </dev/null >"$TOP/codex.out" 2>"$TOP/codex.err"
eq "codex exec in berth run: exit 0" "$?" 0 "$(tail -c 1500 "$TOP/codex.err")"
eq "codex: its last message is the mock's last answer" "$(tail -n 1 "$TOP/codex.out")" "scenario run-codex finished" "$(tail -c 1500 "$TOP/codex.err")"
eq "codex: the key given with --env reached the model (Bearer)" "$(keys run-codex)" "Bearer $KEY"
eq "codex: step 0 is its exec_command tool" "$(emitted run-codex 0)" exec_command
check_turns codex run-codex call_run-codex

# --- 2. berth spawn sessions: send a prompt, ps says working then done, peek, attach, stop
for a in claude codex; do
	data=$(dirname "$BERTH")/../data/profiles/$a.yml
	{ grep -v '^command:' "$data"
	  sed -n 's/^command: \[\([a-z]*\), \(.*\)\]/command: [\/opt\/agents\/node_modules\/.bin\/\1, \2]/p' "$data"
	  echo "persist_home: true"
	  echo "options: [--ro, '$CACHE:/opt/agents']"; } >"$XDG_CONFIG_HOME/berth/profiles/mock-$a.yml"
done
# Their homes, seeded the way a user who ran them once has them, with exactly
# the answers docs/agents.md gives: no first-run dialog (onboarding, folder
# trust, API key approval, bypass-permissions warning; Codex: folder trust).
H=$XDG_STATE_HOME/berth/homes
mkdir -p "$H/mock-claude" "$H/mock-codex/.codex"
chmod 700 "$XDG_STATE_HOME/berth" "$H" "$H/mock-claude" "$H/mock-codex"
cat >"$H/mock-claude/.claude.json" <<EOF
{"hasCompletedOnboarding": true, "bypassPermissionsModeAccepted": true,
 "customApiKeyResponses": {"approved": ["${KEY: -20}"], "rejected": []},
 "projects": {"/workspace": {"hasTrustDialogAccepted": true}}}
EOF
cat >"$H/mock-codex/.codex/config.toml" <<EOF
model = "mock-model"
model_provider = "mock"
[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:$P/v1"
wire_api = "responses"
env_key = "OPENAI_API_KEY"
request_max_retries = 0
stream_max_retries = 0
[projects."/workspace"]
trust_level = "trusted"
EOF

field() { "$BERTH" ps --json "$1" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r[0].get(sys.argv[1]) if r else "none")' "$2"; }
wait_screen() { local _; for _ in $(seq "${3:-150}"); do "$BERTH" peek "$1" 2>/dev/null | grep -qE -- "$2" && return 0; sleep 0.2; done; return 1; }
wait_state() { # wait_state NAME REGEX [tries of 0.2 s]: until ps says a matching state; prints what it saw
	local _ st seen=; for _ in $(seq "${3:-100}"); do st=$(field "$1" state); seen="$seen $st"
		[[ $st =~ ^($2)$ ]] && { echo "$st"; return 0; }; sleep 0.2; done; echo "$(echo "$seen" | tr ' ' '\n' | uniq | paste -sd' ')"; return 1; }
for a in claude codex; do
	env=("${CLAUDE_ENV[@]}"); [ $a = codex ] && env=("${CODEX_ENV[@]}")
	mkdir -p "$TOP/ws-$a"
	"$BERTH" spawn "mock-$a" --name "$a" --workspace "$TOP/ws-$a" --size 40x120 "${NET[@]}" "${env[@]}" \
		</dev/null >"$TOP/spawn.out" 2>"$TOP/spawn.err"
	eq "$a session: spawn exit 0" "$?" 0 "$(cat "$TOP/spawn.err")"
	eq "$a session: network through the broker" "$(field "$a" network)" proxy
	st=$(wait_state "$a" 'idle|done' 150)
	eq "$a session: waits at its input box (no first-run dialog)" "$st" idle "$("$BERTH" peek "$a")"
	# One send with --enter: berth types the text, then Enter as a keystroke of its own after a pause
	# (Codex takes a burst of text ending in Enter for a paste and would not submit it).
	"$BERTH" send "$a" "Run the session step. [scenario:session-$a]" --enter >/dev/null 2>&1
	eq "$a session: send --enter exit 0" "$?" 0
	# The scripted tool call sleeps 4 s: once the model has sent it, ps must say working.
	for _ in $(seq 300); do [ "$(emitted "session-$a" 0)" != "(never reached)" ] && break; sleep 0.1; done
	eq "$a session: the prompt reached the model, which called its shell tool" "$(emitted "session-$a" 0)" "$([ $a = claude ] && echo Bash || echo exec_command)" "$("$BERTH" peek "$a")" "$(mlog_tail)"
	# If it did not, the checks below fail at once instead of waiting for a turn that cannot come.
	w=1; [ "$(emitted "session-$a" 0)" = "(never reached)" ] && w=0
	if [ $w = 1 ]; then
		st=$(wait_state "$a" working 15)
		eq "$a session: ps says working while the tool runs" "$st" working "$("$BERTH" peek "$a")"
	else
		fail "$a session: ps says working while the tool runs" "no tool runs: the model was never reached"
	fi
	[ -e "$TOP/ws-$a/session-$a.txt" ] && fail "$a session: ... and the tool had not finished" "it had: the check proves nothing"
	wait_screen "$a" "scenario session-$a finished" $((w ? 100 : 1)) &&
		pass "$a session: peek shows the model's answer" || fail "$a session: the answer on screen" "" "$("$BERTH" peek "$a")" "$(mlog_tail)"
	st=$(wait_state "$a" 'done|idle' $((w ? 50 : 1)))
	has "$a session: ps says the turn is over" "$st" '^(done|idle)$' "$("$BERTH" peek "$a")"
	id=toolu_session-${a}_0; [ $a = codex ] && id=call_session-${a}_0
	has "$a session: the model saw the tool's result" "$(result "$id")" 'session-exit=0'
	eq "$a session: the file in the session's workspace" "$(cat "$TOP/ws-$a/session-$a.txt" 2>&1)" "session-$a"
	eq "$a session: owned by the invoking user" "$(stat -c %u "$TOP/ws-$a/session-$a.txt" 2>&1)" "$ME"
	out=$(python3 "$STAGE/tests/integration/pty-drive.py" 40x120 "expect:$([ $w = 1 ] && echo "session-$a finished" || echo "scenario:session-$a")" 'send:\x1d' -- \
		"$BERTH" attach "$a" 2>&1)
	eq "$a session: attach redraws the screen, Ctrl-] detaches" "$?" 0 "$out"
	eq "$a session: still alive after the detach" "$(field "$a" alive)" True
	"$BERTH" stop "$a" --grace 2s >/dev/null 2>&1
	eq "$a session: stop exit 0" "$?" 0
	eq "$a session: stopped" "$(field "$a" alive)" False
done

# --- 2b. a --review session (Claude Code): the turn's writes stay in the layer, a checkpoint is
# taken at the turn's end, the host's tree changes only on `berth apply`, which holds the hook back.
R=$TOP/ws-review
mkdir -p "$R" && git -C "$R" init -q && echo old >"$R/README" || fail "review: the workspace" "git init failed"
"$BERTH" spawn mock-claude --name review --workspace "$R" --review --size 40x120 "${NET[@]}" "${CLAUDE_ENV[@]}" \
	</dev/null >"$TOP/spawn.out" 2>"$TOP/spawn.err"
eq "review session: spawn --review exit 0" "$?" 0 "$(cat "$TOP/spawn.err")"
st=$(wait_state review 'idle|done' 150)
eq "review session: waits at its input box" "$st" idle "$("$BERTH" peek review)"
"$BERTH" send review "Run the review step. [scenario:review-claude]" --enter >/dev/null 2>&1
wait_screen review "scenario review-claude finished" 150 &&
	pass "review session: the turn ended (peek shows the model's answer)" || fail "review session: the turn's end on screen" "" "$("$BERTH" peek review)" "$(mlog_tail)"
has "review session: the model saw its writes succeed in the layer" "$(result toolu_review-claude_0)" '^review-exit=0$' "$(mlog_tail)"
eq "review session: while it runs, the host's tree is untouched" \
	"$(cat "$R/README")/$([ -e "$R/review.txt" ] && echo leaked)/$([ -e "$R/.git/hooks/pre-commit" ] && echo hook)" "old//"
cps=
for _ in $(seq 100); do
	cps=$("$BERTH" checkpoints review --json 2>&1 | python3 -c 'import json,sys; c=json.load(sys.stdin)["checkpoints"]; print(" ".join("%d:%d" % (x["id"], x["entries"]) for x in c))' 2>&1)
	[ -n "$cps" ] && break; sleep 0.2
done
has "review session: a checkpoint at the turn's end holds its 3 changes" "$cps" '^1:[3-9]' "$("$BERTH" checkpoints review 2>&1)"
out=$("$BERTH" apply review 2>&1); rc=$?
eq "review session: apply while it runs is refused (2)" "$rc" 2 "$out"
"$BERTH" stop review --grace 2s >/dev/null 2>&1
eq "review session: stop exit 0" "$?" 0
out=$("$BERTH" diff review 2>&1)
has "review session: the diff shows the new file" "$out" '^\+\+\+ b/review\.txt$'
has "review session: ... the edit" "$out" '^\+new$'
has "review session: ... and names the hook as guarded" "$out" 'guarded'
out=$("$BERTH" apply review 2>&1); rc=$?
eq "review session: apply holds the hook back (1)" "$rc" 1 "$out"
has "review session: ... and names it" "$out" "held back: .*\.git/hooks/pre-commit"
eq "review session: the new file and the edit landed" "$(cat "$R/review.txt" 2>&1)/$(cat "$R/README" 2>&1)" "reviewed/new"
eq "review session: the hook is not in the host's .git" "$([ -e "$R/.git/hooks/pre-commit" ] && echo planted)" ""
git -C "$R" -c user.name=t -c user.email=t@t commit -q --allow-empty -m x >/dev/null 2>&1
eq "review session: the host's git commit ran no planted hook" "$([ -e "$TOP/hook-ran" ] && echo ran)" ""

# --- 2c. Claude Code in a microVM (`berth run --runtime vm`, docs/vm.md): the guest from the
# vm suites' .deb cache, its egress to the mock model through the host's broker.  Under TCG the
# guest's CPU is qemu's `max` (the x86-64-v3 instructions a modern binary like Claude Code's
# needs; with `qemu64` it died of SIGILL, status 132, before its first request).
VMC=${BERTH_VM_DEB_CACHE:-/var/tmp/berth-vm-deb-cache}
[ -d "$VMC" ] || { mkdir -p "$VMC" && chmod 1777 "$VMC"; }
"$BERTH" vm install --dir "$TOP/g" --deb-cache "$VMC" </dev/null >"$TOP/vmi.out" 2>"$TOP/vmi.err"
eq "vm: berth vm install of the guest" "$?" 0 "$(tail -n 5 "$TOP/vmi.err")"
KREL=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["kernel"]["release"])' "$TOP/g/guest.json" 2>&1)
mkdir -p "$TOP/ws-vm"
(cd "$TOP/ws-vm" && BERTH_VM_DIR=$TOP/g "$BERTH" run --runtime vm "${NET[@]}" --ro "$CACHE:/opt/agents" "${CLAUDE_ENV[@]}" \
	--timeout 240s -- /opt/agents/node_modules/.bin/claude -p "Run the vm step. [scenario:vm-claude]" \
	--dangerously-skip-permissions --output-format stream-json --verbose </dev/null >"$TOP/vm.out" 2>"$TOP/vm.err")
eq "vm: claude -p in berth run --runtime vm: exit 0" "$?" 0 "$(tail -c 1500 "$TOP/vm.err")"
has "vm: its final result is the mock's last answer" "$(tail -n 1 "$TOP/vm.out")" '"result":"scenario vm-claude finished"'
out=$(result toolu_vm-claude_0)
has "vm: the tool ran in the guest's kernel ($KREL), not the host's ($(uname -r))" "$out" "^$(printf '%s' "$KREL" | sed 's/[.+]/\\&/g')\$" "$(mlog_tail)"
has "vm: ... on a CPU with AVX2 (qemu's max under TCG)" "$out" '^[1-9][0-9]*$'
has "vm: ... and its status was 0" "$out" '^vm-exit=0$'
eq "vm: its file is in the host's workspace, the invoking user's" \
	"$(cat "$TOP/ws-vm/vm.txt" 2>&1)/$(stat -c %u "$TOP/ws-vm/vm.txt" 2>&1)" "from-the-vm/$ME"

# --- 3. MCP: both CLIs call `berth mcp`, which hands the calls to a `berth dev` on the host
# (berth mcp in the sandbox cannot create the app's own sandbox there: no nested namespaces).
# berth mcp hands a call to berth dev only for the same app directory path, so
# the app is mounted at its host path: outside /tmp, which berth builds itself.
APP=$(mktemp -d /var/tmp/berth-agents-app.XXXXXX) || exit 1
APPS+=("$APP"); chmod 755 "$APP"; rmdir "$APP"
cp -a "$STAGE/apps/filesystem" "$APP" && chmod -R a+rX "$APP"
# berth dev gets runtime and state directories of its own, so that the sandbox
# sees its control socket and nothing else of berth's (no session sockets).
# Both ends of that socket want the peer to have their own uid (SO_PEERCRED).
# A root-run berth's sandbox has host uid 1610612736 (BERTH_ROOT_HOST_UID), so
# root runs berth dev as that uid: then berth dev sees its own uid on the peer,
# and berth mcp inside sees berth dev as its own uid too.
mkdir -m 700 "$TOP/devrun" "$TOP/devstate"
DEVSTATE=$TOP/devstate
if [ "$ME" -eq 0 ]; then
	chown 1610612736:1610612736 "$TOP/devrun" "$TOP/devstate"
	asdev=(setpriv --reuid 1610612736 --regid 1610612736 --clear-groups env HOME="$TOP/devstate")
else
	asdev=()
fi
"${asdev[@]}" env XDG_RUNTIME_DIR="$TOP/devrun" XDG_STATE_HOME="$DEVSTATE" XDG_CONFIG_HOME="$DEVSTATE/config" "$BERTH" dev "$APP" \
	</dev/null >"$TOP/dev.out" 2>"$TOP/dev.err" & SRV+=($!)
for _ in $(seq 100); do [ -S "$TOP/devrun/berth/dev/filesystem.sock" ] && break; sleep 0.1; done
[ -S "$TOP/devrun/berth/dev/filesystem.sock" ] && pass "mcp: berth dev serves the filesystem app" ||
	fail "mcp: berth dev's control socket" "" "$(cat "$TOP/dev.err")"
mkdir "$TOP/mcpconf"
cat >"$TOP/mcpconf/mcp.json" <<EOF
{"mcpServers": {"berthfs": {"type": "stdio", "command": "/opt/berth/berth",
  "args": ["mcp", "--app", "filesystem", "--app-dir", "$APP"],
  "env": {"XDG_RUNTIME_DIR": "/run/berth-dev"}}}}
EOF
chmod -R a+rX "$TOP/mcpconf"
MCPRO=(--ro "$BERTH:/opt/berth/berth" --ro "$APP:$APP" --ro "$TOP/devrun/berth:/run/berth-dev/berth")
# Claude Code: --mcp-config.  Codex: an mcp_servers table (its tools come in a namespace, mcp__berthfs).
"$BERTH" run "${NET[@]}" --ro "$CACHE:/opt/agents" "${MCPRO[@]}" --ro "$TOP/mcpconf:/opt/berth-mcp" \
	"${CLAUDE_ENV[@]}" --timeout 60s -- \
	/opt/agents/node_modules/.bin/claude -p "Use the filesystem app. [scenario:mcp-claude]" \
	--mcp-config /opt/berth-mcp/mcp.json --strict-mcp-config --dangerously-skip-permissions --output-format stream-json --verbose \
	</dev/null >"$TOP/mcp.out" 2>"$TOP/mcp.err"
eq "mcp: claude -p exit 0" "$?" 0 "$(tail -c 1500 "$TOP/mcp.err")"
has "mcp: claude connected to berth mcp" "$(head -n 1 "$TOP/mcp.out")" '"name":"berthfs","status":"connected"' "$(head -c 1500 "$TOP/mcp.out")"
"$BERTH" run "${NET[@]}" --ro "$CACHE:/opt/agents" "${MCPRO[@]}" "${CODEX_ENV[@]}" --timeout 45s -- \
	/opt/agents/node_modules/.bin/codex exec --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox \
	-c model_provider=mock -c "$CODEX_PROVIDER" -m mock-model \
	-c "mcp_servers.berthfs={command=\"/opt/berth/berth\",args=[\"mcp\",\"--app\",\"filesystem\",\"--app-dir\",\"$APP\"],env={XDG_RUNTIME_DIR=\"/run/berth-dev\"}}" \
	"Use the filesystem app. [scenario:mcp-codex]" </dev/null >"$TOP/mcpx.out" 2>"$TOP/mcpx.err"
eq "mcp: codex exec exit 0" "$?" 0 "$(tail -c 1500 "$TOP/mcpx.err")"
for c in claude codex; do
	id=toolu_mcp-$c; [ $c = codex ] && id=call_mcp-$c
	eq "mcp, $c: the berth tools were offered to the model" "$(emitted "mcp-$c" 0)" mcp__berthfs__write_file "$(mlog_tail)"
	has "mcp, $c: the model saw write_file's result" "$(result "${id}_0")" "\"path\": ?\"from-mcp-$c\.txt\", ?\"bytes\": ?$((${#c} + 19))" "$(tail -c 1500 "$TOP/dev.err")"
	has "mcp, $c: the model saw read_file return the content" "$(result "${id}_1")" "$c through berth mcp"
	eq "mcp, $c: the file is in the app's own workspace, not the agent's" "$(cat "$DEVSTATE/berth/apps/filesystem/workspace/from-mcp-$c.txt" 2>&1)/$([ -e "$TOP/ws/from-mcp-$c.txt" ] && echo leaked)" "$c through berth mcp/"
done

# --- everything the model saw
if grep -qF -- "$TOKEN" "$TOP/bodies"; then
	fail "the canary key's bytes appear in no request the model received" "found in $TOP/bodies"
else
	pass "the canary key's bytes appear in no request the model received ($(grep -c . "$TOP/model.log") requests)"
fi
[ -s "$TOP/bodies" ] && pass "the mock model received request bodies" || fail "request bodies" "none"
echo "# $T tests, $FAILS failed"
[ "$FAILS" -eq 0 ]
