#!/usr/bin/env bash
# Agent sessions end to end (docs/sessions.md): spawn, peek, send, attach (on a
# real pseudo-terminal), logs, ps, stop, rm, profiles, fleets, --repo clones,
# credential risk lines, and what is left behind (processes, sockets,
# cgroups) after stops and after a supervisor is killed with SIGKILL.
# A scripted fake agent (fake-agent.py) draws Claude-like and Codex-like
# screens; the real CLIs are in run-sessions-agents.sh.
#
# usage: run-sessions.sh /path/to/berth [stage-dir]     ok/FAIL lines; exit 1 on a failure
set -u
export LC_ALL=C.UTF-8
unset BERTH_TEST_FORCE_OFF
[ $# -ge 1 ] || { echo "usage: $0 /path/to/berth [stage-dir]" >&2; exit 2; }
BERTH=$(readlink -f -- "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
T=0 FAILS=0
pass() { T=$((T + 1)); echo "ok $T - $1"; }
fail() { T=$((T + 1)); FAILS=$((FAILS + 1)); echo "not ok $T - $1 # $2"; shift 2; local l; for l in "$@"; do printf '%s\n' "$l" | head -n 12 | sed 's/^/#   /'; done; }
eq() { if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'" "stderr: ${ERR:-}"; fi; }
has() { if printf '%s' "$2" | grep -qF -- "$3"; then pass "$1"; else fail "$1" "'$3' not found" "in: $2"; fi; }
hasnt() { if printf '%s' "$2" | grep -qF -- "$3"; then fail "$1" "'$3' found" "in: $2"; else pass "$1"; fi; }

TOP=$(mktemp -d /tmp/berth-sessions.XXXXXX) || exit 1
chmod 755 "$TOP"
export XDG_RUNTIME_DIR=$TOP/run XDG_STATE_HOME=$TOP/state XDG_CONFIG_HOME=$TOP/config
mkdir -p "$XDG_RUNTIME_DIR" "$XDG_CONFIG_HOME/berth/profiles"
chmod 700 "$XDG_RUNTIME_DIR"
# The fake agent, where the sandbox can read it.
FAKE=$TOP/fake; mkdir "$FAKE"; cp "$HERE/fake-agent.py" "$FAKE/"; chmod -R a+rX "$FAKE"
SRV=()
cleanup() {
	"$BERTH" stop --all --grace 0 >/dev/null 2>&1
	local p; for p in "${SRV[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null
	rm -rf "$TOP"
}
trap cleanup EXIT
cd "$TOP" || exit 1

profile() { # profile NAME STYLE [extra yaml lines]
	local n=$1 s=$2; shift 2
	{ echo "agent: $( [ "$s" = claude ] && echo claude || echo codex )"
	  echo "command: [python3, /opt/fake/fake-agent.py, --style, $s]"
	  echo "prompt: type"
	  echo "network: none"
	  echo "options: [--ro, '$FAKE:/opt/fake']"
	  local l; for l in "$@"; do echo "$l"; done; } >"$XDG_CONFIG_HOME/berth/profiles/$n.yml"
}
profile fake-claude claude "credentials: [FAKE_TOKEN]"
profile fake-codex codex
# --memory is refused where only rlimits are available (a user without a delegated
# cgroup; src/sandbox/limits.c, tests/integration/run-limits.sh): there the sessions
# that ask for one run with --allow-degraded, which the person approves with --yes.
MEM=(--memory 256M) DEGR=()
mkdir "$TOP/memprobe"
if "$BERTH" run --dry-run --workspace "$TOP/memprobe" --memory 256M -- true 2>&1 >/dev/null | grep -q "cannot be enforced"; then
	MEM+=(--allow-degraded --yes); DEGR=(--allow-degraded --yes)
fi
profile fake-codex-burst "codex, --paste-burst"

b() { "$BERTH" "$@" </dev/null >"$TOP/out" 2>"$TOP/err"; RC=$?; OUT=$(cat "$TOP/out"); ERR=$(cat "$TOP/err"); }
# wait_screen NAME TEXT: until peek shows TEXT (5 s)
wait_screen() {
	local i; for i in $(seq 50); do
		"$BERTH" peek "$1" 2>/dev/null | grep -qF -- "$2" && return 0; sleep 0.1; done; return 1; }
field() { # field NAME KEY: from berth ps --json
	"$BERTH" ps --json "$1" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r[0].get(sys.argv[1]) if r else "none")' "$2"; }
# All pids in the process tree under $1 (children first found via /proc).
tree() { local p=$1 c; echo "$p"; for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do tree "$c"; done; }
alive_pids() { local p n=0; for p in "$@"; do [ -d /proc/"$p" ] && ! grep -q '^State:.*Z' /proc/"$p"/status 2>/dev/null && n=$((n + 1)); done; echo $n; }
has_classifier=0
have_classifier() { "$BERTH" ps --json "$1" | grep -q 'no state classifier' && has_classifier=0 || has_classifier=1; }

# 1. spawn, peek, send
b spawn fake-claude --name fc --prompt "first words"
eq "spawn: exit 0" "$RC" 0
eq "spawn: prints the name" "$OUT" fc
has "spawn: says how to attach and detach" "$ERR" "berth attach fc"
wait_screen fc "You said: first words" && pass "--prompt typed into a type-prompt profile" || fail "--prompt typed" "" "$("$BERTH" peek fc)"
b peek fc
has "peek: the rendered screen as text" "$OUT" "Welcome to Fake Claude"
has "peek: box drawing rendered" "$OUT" "╭──"
if printf '%s' "$OUT" | grep -q $'\033'; then fail "peek: no escape codes" "ESC found"; else pass "peek: no escape codes"; fi
b peek fc --lines 2
eq "peek --lines 2: the last two non-blank rows" "$(printf '%s\n' "$OUT" | wc -l)" 2
has "peek --lines: bottom of the screen" "$OUT" "? for shortcuts"
b send fc "hello world" --enter
eq "send: exit 0" "$RC" 0
wait_screen fc "You said: hello world" && pass "send --enter: the agent got the line" || fail "send" "" "$("$BERTH" peek fc)"
b send fc abc --key backspace --key backspace --enter
wait_screen fc "You said: a" && pass "send --key backspace" || fail "send --key" "" "$("$BERTH" peek fc)"
b send fc --key nosuchkey
eq "send: unknown --key is a usage error" "$RC" 2
has "send: names the bad key" "$ERR" "nosuchkey"
b send nosuch hi
eq "send to no such session: 2" "$RC" 2
has "send to no such session: says so" "$ERR" "no session \`nosuch\`"

# 1b. Typing into an agent that takes fast input for a paste (Codex-like,
# fake-agent.py --paste-burst): the Enter of --enter is a keystroke of its
# own after a pause, so the line is submitted and not broken in the box;
# lines go as a bracketed paste (the agent switched it on); a one-line
# answer to a question stays keystrokes; requests keep their order.
b spawn fake-codex-burst --name fx
wait_screen fx "Fake Codex" || fail "fx: first screen" "" "$("$BERTH" peek fx)"
b send fx "raw one" --key enter
sleep 1
has "the fake takes text and a CR in one write for a paste: a line break in the box" "$("$BERTH" peek fx)" "› raw one⏎"
hasnt "... and nothing submitted" "$("$BERTH" peek fx)" "You typed fast: raw one"
b send fx --enter
wait_screen fx "You typed fast: raw one⏎" && pass "send --enter alone submits the box" || fail "send --enter alone" "" "$("$BERTH" peek fx)"
b send fx "hello burst" --enter
eq "send --enter: exit 0" "$RC" 0
wait_screen fx "You typed fast: hello burst" && pass "send TEXT --enter submits in a paste-detecting agent" || fail "send to a paste-detecting agent" "" "$("$BERTH" peek fx)"
hasnt "send --enter: no line break left in the box" "$("$BERTH" peek fx)" "hello burst⏎"
b send fx "$(printf 'line one\nline two')" --enter
wait_screen fx "You pasted: line one⏎line two" && pass "text of two lines: one bracketed paste, then Enter" || fail "bracketed paste" "" "$("$BERTH" peek fx)"
"$BERTH" send fx ask --enter >/dev/null; wait_screen fx "Do you want to proceed?"
b send fx 2
wait_screen fx "answered 2" && pass "a one-line answer is typed, not pasted" || fail "answer typed" "" "$("$BERTH" peek fx)"
"$BERTH" send fx first --enter >/dev/null; "$BERTH" send fx second --enter >/dev/null
wait_screen fx "You typed fast: second" && pass "two sends in a row: both submitted" || fail "two sends" "" "$("$BERTH" peek fx)"
eq "two sends in a row: in order" "$("$BERTH" peek fx | grep -o 'You typed fast: [a-z]*$' | tail -2 | tr '\n' ' ')" "You typed fast: first You typed fast: second "
have_classifier fx
if [ $has_classifier = 1 ]; then
	"$BERTH" send fx fail --enter >/dev/null; wait_screen fx "■ unexpected status 401"; sleep 2
	eq "ps: Codex's failed turn (■ unexpected status) is error ($(field fx why))" "$(field fx state)" error
fi
"$BERTH" stop fx --grace 1s >/dev/null 2>&1

# 2. ps
b ps
eq "ps: exit 0" "$RC" 0
has "ps: header" "$OUT" "NAME"
has "ps: lists the session with its profile" "$OUT" "fake-claude"
b ps --json
python3 -c '
import json,sys
r = json.loads(sys.argv[1])[0]
need = ["name","profile","state","uptime_s","workspace","network","policy_digest","pid","started"]
miss = [k for k in need if k not in r]
assert not miss, miss
assert r["policy_digest"].startswith("sha256:") and len(r["policy_digest"]) == 71
assert r["network"] == "none" and r["alive"] is True
' "$OUT" && pass "ps --json: name, profile, state, uptime, workspace, network, policy digest" || fail "ps --json" "fields" "$OUT"
have_classifier fc
if [ $has_classifier = 1 ]; then
	"$BERTH" send fc ask --enter >/dev/null; wait_screen fc "Do you want to proceed?"
	eq "ps: a question with options is blocked ($(field fc why))" "$(field fc state)" blocked
	"$BERTH" send fc 1 >/dev/null; wait_screen fc "answered 1"; sleep 2
	eq "ps: answered, quiet, a reply above the input box: done ($(field fc why))" "$(field fc state)" done
	"$BERTH" send fc work --enter >/dev/null; wait_screen fc "esc to interrupt"
	eq "ps: a spinner with esc to interrupt: working" "$(field fc state)" working
	"$BERTH" send fc "a question in prose? without options" --enter >/dev/null; sleep 6
	eq "ps: a question in prose is not blocked ($(field fc why))" "$(field fc state)" done
	# A failed turn (API Error and the turn's summary under it): error, in
	# ps --json and in the STATE column; a good turn after it: done again.
	"$BERTH" send fc fail --enter >/dev/null; wait_screen fc "API Error: 500"; sleep 2
	eq "ps: a failed turn is error ($(field fc why))" "$(field fc state)" error
	b ps fc
	eq "ps: the STATE column says error" "$(printf '%s\n' "$OUT" | awk '$1 == "fc" {print $3}')" error
	"$BERTH" send fc "all good" --enter >/dev/null; wait_screen fc "You said: all good"; sleep 2
	eq "ps: a good turn after the failed one is done ($(field fc why))" "$(field fc state)" done
else
	eq "ps: state without the classifier" "$(field fc state)" running
fi

# 3. attach on a real pty: redraw, keys, resize, detach
out=$(python3 "$HERE/pty-drive.py" 30x100 'expect:Welcome to Fake Claude' 'send:typed-in\r' 'expect:You said: typed-in' \
	'resize:25x90' 'expect:size 25x90' 'send:\x1d' -- "$BERTH" attach fc 2>&1)
if [ $? -eq 0 ]; then pass "attach: redraw, typing, resize forwarded"; else fail "attach" "driver" "$out"; fi
has "attach: Ctrl-] detaches with status 0" "$out" "exit=0"
has "attach: says it keeps running" "$out" "keeps running"
eq "attach: the session runs after detaching" "$(field fc alive)" True
wait_screen fc "size 25x90" && pass "attach: the agent saw the new size" || fail "resize" "" "$("$BERTH" peek fc)"
b attach fc
eq "attach without a terminal: 2" "$RC" 2

# 4. logs
b logs fc
eq "logs: exit 0" "$RC" 0
has "logs: raw output" "$OUT" "You said: hello world"

# 5. names
b spawn fake-claude --name fc
eq "duplicate live name: 2" "$RC" 2
has "duplicate live name: says so" "$ERR" "a session named \`fc\` is running"
b spawn fake-claude --name Bad_Name
eq "invalid name: 2" "$RC" 2
has "invalid name: names it" "$ERR" "Bad_Name"
b spawn fake-claude --name "$(printf 'a%.0s' $(seq 49))"
eq "49-character name: 2" "$RC" 2
b spawn fake-codex
eq "derived name: exit 0" "$RC" 0
case "$OUT" in fake-codex-[0-9][0-9][0-9][0-9][0-9][0-9]) pass "derived name: PROFILE-HHMMSS ($OUT)";; *) fail "derived name" "$OUT";; esac
DERIVED=$OUT
wait_screen "$DERIVED" "Fake Codex" && pass "codex-like screen rendered" || fail "codex screen" "" "$("$BERTH" peek "$DERIVED")"

# 6. profiles: errors
b spawn nosuchprofile
eq "unknown profile: 2" "$RC" 2
has "unknown profile: names it" "$ERR" "no profile \`nosuchprofile\`"
# a berth binary without its data files (copied alone, or mounted alone into a sandbox)
mkdir -p "$TOP/lonely/bin"; cp "$BERTH" "$TOP/lonely/bin/berth"
"$TOP/lonely/bin/berth" spawn shell --name lonely </dev/null >/dev/null 2>"$TOP/err"; RC=$?; ERR=$(cat "$TOP/err")
eq "built-in profile without berth's data files: 2" "$RC" 2
has "... says the data files are missing, where it looked" "$ERR" "berth's built-in profiles are not installed beside this binary (no \`$TOP/lonely/bin/../data/profiles/shell.yml\`"
rm -rf "$TOP/lonely"
printf 'command: [sh]\ncolour: blue\n' >"$XDG_CONFIG_HOME/berth/profiles/badkey.yml"
b spawn badkey
eq "profile with an unknown key: 2" "$RC" 2
has "profile error: file:line:col" "$ERR" "badkey.yml:2:1: unknown key \`colour\`"
printf 'command: [sh]\nnetwork: everywhere\n' >"$XDG_CONFIG_HOME/berth/profiles/badnet.yml"
b spawn badnet
has "profile bad network: file:line:col and the value" "$ERR" "badnet.yml:2:10: network: expected"
printf 'a: &x [1]\nb: *x\n' >"$XDG_CONFIG_HOME/berth/profiles/alias.yml"
b spawn alias
has "profile aliases refused" "$ERR" "alias.yml:2:4: aliases are not allowed"
# a bad value among the profile's own options (network none, no run option
# given: the spawn crashed, SIGSEGV, before it said anything)
printf 'command: [sh]\nnetwork: none\noptions: [--pids, "0"]\n' >"$XDG_CONFIG_HOME/berth/profiles/badopt.yml"
b spawn badopt --name badopt
eq "profile with a bad option value: 2, the message names the profile's file and the value" "$RC:$ERR" \
	"2:berth: $XDG_CONFIG_HOME/berth/profiles/badopt.yml: options: invalid --pids \`0\`: zero, expected 2 to 4194304
berth: hint: write a whole number in decimal digits, such as \`64\`"
printf 'command: [sh]\nnetwork: none\noptions: [--memory, "18446744073709551616"]\n' >"$XDG_CONFIG_HOME/berth/profiles/badopt.yml"
b spawn badopt --name badopt --pids 64
has "profile with a value past 2^64 - 1, run options given too: the profile's named" "$RC:$ERR" \
	"2:berth: $XDG_CONFIG_HOME/berth/profiles/badopt.yml: options: invalid --memory \`18446744073709551616\`: too large"
[ ! -e "$XDG_RUNTIME_DIR/berth/sessions/badopt" ] && pass "profile with a bad option value: no session left" ||
	fail "profile with a bad option value: leftovers" "$(ls -R "$XDG_RUNTIME_DIR/berth/sessions" 2>&1)"
printf 'network: none\n' >"$XDG_CONFIG_HOME/berth/profiles/nocmd.yml"
b spawn nocmd
has "profile without command" "$ERR" "\`command\` is missing"
printf 'command: [/nonexistent/agent]\nnetwork: none\n' >"$XDG_CONFIG_HOME/berth/profiles/missing.yml"
b spawn missing --name miss
eq "agent not found: 127" "$RC" 127
has "agent not found: says so" "$ERR" "/nonexistent/agent"
[ ! -e "$XDG_RUNTIME_DIR/berth/sessions/miss" ] && [ ! -e "$XDG_STATE_HOME/berth/sessions/miss" ] &&
	pass "agent not found: no session left (runtime nor state directory)" || fail "agent not found: leftovers" "$(ls -R "$XDG_RUNTIME_DIR/berth/sessions" "$XDG_STATE_HOME/berth/sessions" 2>&1)"
printf 'command: [nosuchagent]\nnetwork: none\n' >"$XDG_CONFIG_HOME/berth/profiles/missing-on-path.yml"
b spawn missing-on-path --name miss3
eq "agent not on PATH: 127" "$RC" 127
has "agent not on PATH: the hint names path: in a copy of the profile" "$ERR" "copy the profile to $XDG_CONFIG_HOME/berth/profiles/missing-on-path.yml and name the program with \`path:\`"
mkdir "$TOP/ws-miss"
b spawn missing --name miss2 --workspace "$TOP/ws-miss"
eq "agent not found, --workspace: 127" "$RC" 127
[ ! -e "$XDG_RUNTIME_DIR/berth/sessions/miss2" ] && [ ! -e "$XDG_STATE_HOME/berth/sessions/miss2" ] && [ -d "$TOP/ws-miss" ] &&
	pass "agent not found, --workspace: no session left, the workspace kept" || fail "agent not found, --workspace: leftovers" "$(ls -R "$XDG_RUNTIME_DIR/berth/sessions" "$XDG_STATE_HOME/berth/sessions" "$TOP/ws-miss" 2>&1)"
b spawn fake-claude --name x1 --bogus
eq "unknown spawn option: 2" "$RC" 2
has "unknown spawn option: names it" "$ERR" "--bogus"
b spawn fake-claude --name x1 --memory lots
eq "bad run option: 2" "$RC" 2
has "bad run option: named as berth run does" "$ERR" "--memory"
b spawn shell --name x1 --dns 127.0.0.1
eq "--dns on a profile whose network is none: 2" "$RC" 2
has "--dns on a none profile: names the profile's network, not a --network none never given" "$ERR" "profile \`shell\`'s network is \`none\`"
b spawn shell --name x1 --prompt hi --repo ssh://host/x
eq "--repo other than http(s): 2" "$RC" 2

# 7. credentials: never by default; --seed-auth and --env NAME print a risk line
export FAKE_TOKEN=s3cret
b spawn fake-claude --name cred0
wait_screen cred0 Welcome
"$BERTH" send cred0 "env FAKE_TOKEN" --enter >/dev/null
wait_screen cred0 "FAKE_TOKEN is unset" && pass "credentials not forwarded by default" || fail "credential leaked" "" "$("$BERTH" peek cred0)"
hasnt "no risk line without forwarding" "$ERR" "risk:"
b spawn fake-claude --name cred1 --seed-auth
has "--seed-auth: risk line naming the variable" "$ERR" "risk: \`FAKE_TOKEN\` is forwarded"
wait_screen cred1 Welcome
"$BERTH" send cred1 "env FAKE_TOKEN" --enter >/dev/null
wait_screen cred1 "FAKE_TOKEN is set" && pass "--seed-auth forwards the profile's credential" || fail "--seed-auth" "" "$("$BERTH" peek cred1)"
b spawn fake-codex --name cred2 --env ANTHROPIC_API_KEY=x
has "--env of a credential: risk line" "$ERR" "risk: \`ANTHROPIC_API_KEY\` is forwarded"
printf 'FAKE_TOKEN=from-file\n' >"$TOP/cred.env"
b spawn fake-claude --name cred3 --env-file "$TOP/cred.env"
eq "spawn --env-file: exit 0 (a berth run option)" "$RC" 0
has "--env-file of a credential: risk line" "$ERR" "risk: \`FAKE_TOKEN\` is forwarded"
wait_screen cred3 Welcome
"$BERTH" send cred3 "env FAKE_TOKEN" --enter >/dev/null
wait_screen cred3 "FAKE_TOKEN is set" && pass "--env-file: the variable reaches the agent" || fail "--env-file" "" "$("$BERTH" peek cred3)"
b spawn fake-claude --name ev1 --evidence "$TOP/cred.env"
eq "spawn --evidence: refused (a session copies no evidence): 2" "$RC" 2
has "spawn --evidence: says so" "$ERR" "--evidence is a \`berth run\` option only"
[ ! -e "$XDG_RUNTIME_DIR/berth/sessions/ev1" ] && pass "spawn --evidence: no session" || fail "spawn --evidence: a session" ""
unset FAKE_TOKEN
"$BERTH" stop cred0 cred1 cred2 cred3 --grace 0 >/dev/null 2>&1

# 8. the agent ends by itself; stop; what is left
timeout 20 "$BERTH" logs -f "$DERIVED" >"$TOP/follow" 2>&1 &
FOLLOW=$!
sleep 0.5
"$BERTH" send "$DERIVED" quit --enter >/dev/null
for i in $(seq 50); do [ "$(field "$DERIVED" state)" = exited ] && break; sleep 0.1; done
eq "agent that quits: exited" "$(field "$DERIVED" state)" exited
eq "agent that quits: its exit status" "$(field "$DERIVED" exit_status)" 3
b send "$DERIVED" hello
eq "send to an ended session: 2" "$RC" 2
has "send to an ended session: says it ended" "$ERR" "session \`$DERIVED\` is not running: it has ended"
wait "$FOLLOW"; eq "logs -f: returns when the session ends" "$?" 0
has "logs -f: followed the output to the end" "$(cat "$TOP/follow")" "bye from the fake agent (status 3)"
b peek "$DERIVED"
has "peek after the end: the last screen" "$OUT" "bye from the fake agent (status 3)"
sup=$(field fc pid); run_id=$(field fc run_id)
pids=$(tree "$sup")
b stop fc
eq "stop: exit 0" "$RC" 0
has "stop: says so" "$ERR" "stopped \`fc\`"
eq "stop: ps says exited" "$(field fc state)" exited
eq "stop: every process of the session is gone" "$(alive_pids $pids)" 0
[ ! -e "$XDG_RUNTIME_DIR/berth/sessions/fc/ctl.sock" ] && pass "stop: the control socket is removed" || fail "stop: socket left" ""
if [ "$(id -u)" = 0 ]; then
	left=$(find /sys/fs/cgroup -maxdepth 3 -name "*$run_id*" 2>/dev/null | head -3)
	eq "stop: no cgroup of the run is left" "$left" ""
fi
b stop fc
eq "stop of a stopped session: 2" "$RC" 2
# An agent that ignores SIGHUP and SIGTERM is killed after the grace time.
printf 'command: [sh, -c, "trap \x27\x27 HUP TERM; echo stubborn; while :; do sleep 1; done"]\nnetwork: none\nprompt: none\n' \
	>"$XDG_CONFIG_HOME/berth/profiles/stubborn.yml"
b spawn stubborn --name st1
wait_screen st1 stubborn
sup=$(field st1 pid); pids=$(tree "$sup")
t0=$(date +%s%N)
b stop st1 --grace 1s
t1=$(date +%s%N)
eq "stop of an agent that ignores SIGTERM: exit 0" "$RC" 0
ms=$(( (t1 - t0) / 1000000 ))
[ "$ms" -ge 900 ] && [ "$ms" -lt 6000 ] && pass "stop waited for the grace time, then killed (${ms} ms)" || fail "grace kill" "${ms} ms"
eq "grace kill: no process left" "$(alive_pids $pids)" 0
eq "grace kill: exit status of a killed sandbox" "$(field st1 exit_status)" 137

# 9. SIGKILL of the supervisor ends the sandbox
b spawn fake-claude --name k9
wait_screen k9 "Welcome"
sup=$(field k9 pid); run_id=$(field k9 run_id); pids=$(tree "$sup")
[ "$(alive_pids $pids)" -ge 3 ] && pass "k9: supervisor, sandbox and agent run ($(alive_pids $pids) processes)" || fail "k9 tree" "$pids"
kill -9 "$sup"
for i in $(seq 50); do [ "$(alive_pids $pids)" = 0 ] && break; sleep 0.1; done
eq "kill -9 of the supervisor: no process of the session is left" "$(alive_pids $pids)" 0
eq "kill -9: ps shows the session stale" "$(field k9 state)" stale
if [ "$(id -u)" = 0 ]; then
	for i in $(seq 60); do [ -z "$(find /sys/fs/cgroup -maxdepth 3 -name "*$run_id*" 2>/dev/null)" ] && break; sleep 0.1; done
	eq "kill -9: the janitor removed the run's cgroups" "$(find /sys/fs/cgroup -maxdepth 3 -name "*$run_id*" 2>/dev/null | head -3)" ""
fi
b spawn fake-claude --name k9
eq "a stale name can be reused" "$RC" 0
"$BERTH" stop k9 --grace 0 >/dev/null 2>&1

# 10. rm
b rm cred0
eq "rm: exit 0" "$RC" 0
[ ! -e "$XDG_RUNTIME_DIR/berth/sessions/cred0" ] && [ ! -e "$XDG_STATE_HOME/berth/sessions/cred0/output.log" ] &&
	pass "rm: session files and log gone" || fail "rm leftovers" ""
[ -d "$XDG_STATE_HOME/berth/sessions/cred0/workspace" ] && pass "rm: workspace kept" || fail "rm: workspace" "removed"
b rm cred1 --purge
[ ! -e "$XDG_STATE_HOME/berth/sessions/cred1" ] && pass "rm --purge: workspace removed too" || fail "rm --purge" "$(ls -la "$XDG_STATE_HOME/berth/sessions/cred1")"
b spawn fake-claude --name busy
b rm busy
eq "rm of a running session: 2" "$RC" 2
has "rm of a running session: says to stop it" "$ERR" "berth stop busy"
b rm nosuch
eq "rm of no such session: 2" "$RC" 2

# 11. stop --all
b spawn fake-codex --name all2
b stop --all
eq "stop --all: exit 0" "$RC" 0
eq "stop --all: nothing alive" "$("$BERTH" ps --json | python3 -c 'import json,sys; print(sum(r["alive"] for r in json.load(sys.stdin)))')" 0

# 12. fleets
cat >"$TOP/fleet.yml" <<YML
defaults:
  profile: fake-claude
  options: [--memory, 1G$( [ ${#DEGR[@]} -gt 0 ] && echo ", --allow-degraded")]
agents:
  - name: f-one
    prompt: one
  - name: f-two
    profile: fake-codex
    workspace: ws2
YML
mkdir -p "$TOP/ws2"; chmod 777 "$TOP/ws2"
b fleet up "$TOP/fleet.yml" ${DEGR[@]:+--yes}
eq "fleet up: exit 0" "$RC" 0
eq "fleet up: prints the names" "$OUT" "f-one
f-two"
b fleet ps "$TOP/fleet.yml" --json
eq "fleet ps: both alive" "$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(sorted(r["name"] for r in json.load(sys.stdin) if r["alive"]))')" "['f-one', 'f-two']"
eq "fleet: workspace relative to the file" "$(field f-two workspace)" "$TOP/ws2"
b fleet stop "$TOP/fleet.yml"
eq "fleet stop: exit 0" "$RC" 0
eq "fleet stop: none alive" "$("$BERTH" fleet ps "$TOP/fleet.yml" --json | python3 -c 'import json,sys; print(sum(r["alive"] for r in json.load(sys.stdin)))')" 0
printf 'agents:\n  - name: g1\n    profile: fake-claude\n  - name: g2\n    profile: fake-claude\n    colour: red\n' >"$TOP/bad.yml"
b fleet up "$TOP/bad.yml"
eq "fleet with an unknown key: 2" "$RC" 2
has "fleet error: file:line:col" "$ERR" "bad.yml:6:5: unknown key \`colour\`"
eq "invalid fleet: nothing started" "$(field g1 name)" none
printf 'agents:\n  - name: e1\n    profile: fake-claude\n  - name: e2\n    profile: fake-claude\n    options: [--evidence, %s]\n' "$TOP/bad.yml" >"$TOP/evid.yml"
b fleet up "$TOP/evid.yml" --yes
eq "fleet with --evidence (not a session option): 2" "$RC" 2
has "fleet --evidence: names the agent and the option" "$ERR" "agent \`e2\`: spawn: --evidence is a \`berth run\` option only"
eq "fleet --evidence: nothing started" "$(field e1 name)" none
printf 'agents:\n  - name: h1\n    profile: fake-claude\n  - name: h2\n    profile: missing\n' >"$TOP/half.yml"
b fleet up "$TOP/half.yml"
eq "fleet whose second agent cannot start: 127" "$RC" 127
has "fleet failure names the file, line and agent" "$ERR" "half.yml:4: agent \`h2\`"
has "fleet failure: rolled back" "$ERR" "rolling back 1"
eq "all or none: the first agent is gone" "$(field h1 name)" none
[ ! -e "$XDG_STATE_HOME/berth/sessions/h1" ] && pass "all or none: its workspace removed" || fail "rollback leftovers" ""
printf 'agents:\n  - name: d1\n    profile: fake-claude\n  - name: d1\n    profile: fake-claude\n' >"$TOP/dup.yml"
b fleet up "$TOP/dup.yml"
has "fleet: duplicate agent names refused" "$ERR" "dup.yml:4:5: name: \`d1\` is the name of another agent (line 2)"

# 13. --repo: a local dumb-HTTP git server, reached as a declared IP literal through the broker
mkdir -p "$TOP/srv"
git init -q --bare "$TOP/srv/repo.git"
git clone -q "$TOP/srv/repo.git" "$TOP/src" 2>/dev/null
(cd "$TOP/src" && echo "from the repo" >README && git add README && git -c user.name=t -c user.email=t@t commit -qm init && git push -q origin HEAD 2>/dev/null)
git -C "$TOP/srv/repo.git" update-server-info
chmod -R a+rX "$TOP/srv"
python3 -c '
import http.server, socketserver, sys, functools, os
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
http.server.SimpleHTTPRequestHandler.log_message = lambda *a: None
s = socketserver.ThreadingTCPServer(("127.0.0.1", 0), h)
open(sys.argv[2], "w").write(str(s.server_address[1]))
s.serve_forever()' "$TOP/srv" "$TOP/port" </dev/null >/dev/null 2>&1 &
SRV+=($!)
for i in $(seq 50); do [ -s "$TOP/port" ] && break; sleep 0.1; done
PORT=$(cat "$TOP/port")
b spawn shell --name r1 --repo "http://127.0.0.1:$PORT/repo.git" --allow-host "127.0.0.1:$PORT"
eq "--repo: spawn exit 0" "$RC" 0
has "--repo over plain HTTP: warned" "$ERR" "plain HTTP"
eq "--repo: cloned into the session's workspace" "$(cat "$XDG_STATE_HOME/berth/sessions/r1/workspace/README" 2>&1)" "from the repo"
"$BERTH" send r1 "cat README" --enter >/dev/null
wait_screen r1 "from the repo" && pass "--repo: the agent starts in the clone" || fail "--repo: agent view" "" "$("$BERTH" peek r1)"
b spawn shell --name r2 --repo "http://127.0.0.1:$PORT/nosuch.git" --allow-host "127.0.0.1:$PORT"
eq "failed clone: 125" "$RC" 125
has "failed clone: says so" "$ERR" "git clone of"
[ ! -e "$XDG_STATE_HOME/berth/sessions/r2" ] && [ ! -e "$XDG_RUNTIME_DIR/berth/sessions/r2" ] &&
	pass "failed clone: no session, no workspace left" || fail "failed clone leftovers" "$(ls -R "$XDG_STATE_HOME/berth/sessions/r2" 2>&1)"
b spawn shell --name r3 --repo "http://127.0.0.1:$PORT/repo.git"
eq "clone to an undeclared host: 125" "$RC" 125
[ ! -e "$XDG_STATE_HOME/berth/sessions/r3" ] && pass "clone to an undeclared host: nothing left" || fail "r3 leftovers" ""

# 14. the control socket: private directory, same uid only
[ "$(stat -c %a "$XDG_RUNTIME_DIR/berth/sessions/r1")" = 700 ] && pass "session directory is 0700" || fail "session dir mode" "$(stat -c %a "$XDG_RUNTIME_DIR/berth/sessions/r1")"
if [ "$(id -u)" = 0 ] && id bertht >/dev/null 2>&1; then
	chmod 755 "$XDG_RUNTIME_DIR" "$XDG_RUNTIME_DIR/berth" "$XDG_RUNTIME_DIR/berth/sessions" "$XDG_RUNTIME_DIR/berth/sessions/r1"
	r=$(runuser -u bertht -- python3 -c '
import socket,sys
s=socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1]); s.sendall(b"{\"op\":\"peek\"}\n"); s.settimeout(2); print("answer:", s.recv(100))
except Exception as e: print("refused:", type(e).__name__)' "$XDG_RUNTIME_DIR/berth/sessions/r1/ctl.sock")
	chmod 700 "$XDG_RUNTIME_DIR" "$XDG_RUNTIME_DIR/berth" "$XDG_RUNTIME_DIR/berth/sessions" "$XDG_RUNTIME_DIR/berth/sessions/r1"
	case "$r" in "answer: b''"|refused:*) pass "another uid gets nothing from the control socket ($r)";; *) fail "another uid" "$r";; esac
fi
# 14a. the control protocol's refusals (docs/sessions.md), on the live supervisor: a NUL byte
# refuses the whole line (the request read only up to it would be a stop), a size beyond int leaves
# the size as it is (not 4294967346 rows cast to 50)
r=$(python3 -c '
import json,socket,sys
s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f=s.makefile("rb")
def ask(line):
    s.sendall(line + b"\n"); return json.loads(f.readline())
print(ask(b"{\"op\":\"stop\",\"grace_ms\":0}\0{\"op\":\"info\"}").get("error"))
print(ask(b"{\"op\":\"nope\"}").get("error"))
print(ask(b"{\"op\":\"send\",\"data\":5}").get("error"))
print(ask(b"[\"op\"]").get("error"))
print(ask(b"{\"op\":\"resize\",\"rows\":30,\"cols\":100}"))
print(ask(b"{\"op\":\"resize\",\"rows\":4294967346,\"cols\":80}"))
p=ask(b"{\"op\":\"peek\"}"); print(p["rows"], p["cols"], p["alive"])
i=ask(b"{\"op\":\"info\"}"); print("state", i.get("state"), i.get("alive"))' "$XDG_RUNTIME_DIR/berth/sessions/r1/ctl.sock" 2>&1)
eq "control: the refusals and the sizes, as documented" "$r" "bad request: a NUL byte in the request
unknown op \`nope\`
send needs a string \`data\`
bad request: no \`op\`
{'ok': True}
{'ok': True}
30 100 True
state running True"
# 14b. --persist-home: $HOME kept across sessions of a profile, a tmpfs otherwise
b spawn shell --name ph1 --persist-home
eq "--persist-home: exit 0" "$RC" 0
has "--persist-home: says where" "$ERR" "persistent home: $XDG_STATE_HOME/berth/homes/shell"
"$BERTH" send ph1 'echo persisted-$((2+3)) > ~/marker; echo "w"rote' --enter >/dev/null
wait_screen ph1 "wrote" && pass "--persist-home: the agent writes its home" || fail "persist write" "" "$("$BERTH" peek ph1)"
"$BERTH" stop ph1 --grace 0 >/dev/null 2>&1
eq "--persist-home: the file is on the host" "$(cat "$XDG_STATE_HOME/berth/homes/shell/marker" 2>&1)" "persisted-5"
eq "--persist-home: the file belongs to the caller on the host" "$(stat -c %u "$XDG_STATE_HOME/berth/homes/shell/marker")" "$(id -u)"
eq "--persist-home: the home directory is private" "$(stat -c %a "$XDG_STATE_HOME/berth/homes/shell")" 700
b spawn shell --name ph2 --persist-home
"$BERTH" send ph2 'cat ~/marker' --enter >/dev/null
wait_screen ph2 "persisted-5" && pass "--persist-home: the next session finds it" || fail "persist read" "" "$("$BERTH" peek ph2)"
eq "--persist-home: ps --json names the home" "$(field ph2 home)" "$XDG_STATE_HOME/berth/homes/shell"
b spawn shell --name ph3
"$BERTH" send ph3 'cat ~/marker || echo no-"marker"-here' --enter >/dev/null
wait_screen ph3 "no-marker-here" && pass "without --persist-home: a fresh tmpfs home" || fail "tmpfs home" "" "$("$BERTH" peek ph3)"
"$BERTH" stop ph2 ph3 --grace 0 >/dev/null 2>&1

# 14c. seeded home (profile `home:`), berth's preamble (`instructions:`), --allow-host adding
# to the profile's network, the agent's `path:` (docs/sessions.md, "Seeded home")
cat >"$XDG_CONFIG_HOME/berth/profiles/seeded.yml" <<'EOF'
agent: shell
command: [bash, --norc, --noprofile, -i]
prompt: type
network: api-only
instructions: .agent/AGENTS.md
home:
  .agent.json: |
    {"onboarded": true, "projects": {"/workspace": {"trusted": true}}}
  .agent/settings.toml: "x = 1\n"
EOF
LOGS=$XDG_STATE_HOME/berth/sessions
# run NAME CMD: type CMD into session NAME, wait for its end marker in the output log
run_in() { "$BERTH" send "$1" "$2; echo END-\$((6*7))" --enter >/dev/null; local i; for i in $(seq 50); do
	grep -q "END-42" "$LOGS/$1/output.log" 2>/dev/null && return 0; sleep 0.1; done; return 1; }
b spawn seeded --name sd1 --allow-host example.com --allow-host '*.example.org:8443'
eq "seed: spawn exit 0" "$RC" 0
has "allow-host: the note says the profile's list and the caller's are joined" "$ERR" "network: profile \`seeded\`'s api-only list and your --allow-host patterns: 10 hosts"
HOSTS=$(field sd1 allow_hosts)
WANT=$(python3 -c 'import sys; h=[l.strip() for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")]; print(h + ["example.com", "*.example.org:8443"])' "$HERE/../../data/network/api-only")
eq "allow-host: ps --json lists the preset's hosts and the caller's, in order" "$HOSTS" "$WANT"
run_in sd1 'cat ~/.agent.json ~/.agent/settings.toml; stat -c "mode=%a dir=%A" ~/.agent.json; stat -c "dirmode=%a" ~/.agent; cat ~/.agent/AGENTS.md' ||
	fail "seed: the shell answered" "" "$("$BERTH" peek sd1)"
LOG=$(cat "$LOGS/sd1/output.log")
has "seed: the JSON file is in the fresh home" "$LOG" '{"onboarded": true, "projects": {"/workspace": {"trusted": true}}}'
has "seed: the other file too" "$LOG" "x = 1"
has "seed: files are 0600" "$LOG" "mode=600"
has "seed: directories 0700" "$LOG" "dirmode=700"
has "preamble: in the agent's own instructions file" "$LOG" "# You are running in a berth sandbox"
has "preamble: names /workspace as the writable folder" "$LOG" "/workspace is your writable folder"
has "preamble: names an api-only host" "$LOG" "  - api.anthropic.com"
has "preamble: names the caller's --allow-host" "$LOG" "  - *.example.org:8443"
hasnt "preamble: not a dropped telemetry host" "$LOG" "sentry.io"
has "preamble: a refusal is the sandbox's" "$LOG" "A refusal is the sandbox's, not a bug to work around"
eq "seed: nothing written in the workspace" "$(find "$LOGS/sd1/workspace" \( -name '.agent*' -o -name AGENTS.md \) | wc -l)" 0
"$BERTH" stop sd1 --grace 0 >/dev/null 2>&1
b spawn seeded --name sd2 --network none
has "--network none: says it replaces the profile's network" "$ERR" "network: --network none replaces profile \`seeded\`'s network (api-only)"
eq "--network none: no hosts" "$(field sd2 allow_hosts)" "[]"
run_in sd2 'cat ~/.agent/AGENTS.md' || fail "sd2: the shell answered" ""
has "preamble: no network said so" "$(cat "$LOGS/sd2/output.log")" "Network: none: there is no network at all"
"$BERTH" stop sd2 --grace 0 >/dev/null 2>&1
b spawn shell --name sd3 --allow-host example.com
has "allow-host on a no-network profile: says it replaces \`none\`" "$ERR" "network: --allow-host replaces profile \`shell\`'s network \`none\`"
eq "allow-host on a no-network profile: only the caller's host" "$(field sd3 allow_hosts)" "['example.com']"
"$BERTH" stop sd3 --grace 0 >/dev/null 2>&1

# --persist-home: missing files created; what the agent keeps is never clobbered
PH=$XDG_STATE_HOME/berth/homes/seeded
b spawn seeded --name sp1 --persist-home
eq "persisted seed: spawn exit 0" "$RC" 0
"$BERTH" stop sp1 --grace 0 >/dev/null 2>&1
eq "persisted seed: the JSON file made on the host" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["projects"]["/workspace"]["trusted"])' "$PH/.agent.json" 2>&1)" True
eq "persisted seed: 0600, the caller's" "$(stat -c %a:%u "$PH/.agent.json")" "600:$(id -u)"
grep -q "  - api.anthropic.com" "$PH/.agent/AGENTS.md" && pass "persisted seed: the preamble in the kept home" || fail "persisted preamble" "" "$(cat "$PH/.agent/AGENTS.md" 2>&1)"
# What a signed-in agent keeps: other keys, its own answer to a seeded key, its notes, its settings.
printf '{"token_in_use": "kept", "projects": {"/workspace": {"trusted": false}, "/other": {}}}\n' >"$PH/.agent.json"
printf 'x = 2\n' >"$PH/.agent/settings.toml"
{ printf 'my own notes\n\n'; cat "$PH/.agent/AGENTS.md"; printf 'after the block\n'; } >"$TOP/agents.md" && cp "$TOP/agents.md" "$PH/.agent/AGENTS.md"
ln "$PH/.agent.json" "$TOP/hardlink.json"
b spawn seeded --name sp2 --persist-home --allow-host example.net
eq "persisted seed 2: spawn exit 0" "$RC" 0
"$BERTH" stop sp2 --grace 0 >/dev/null 2>&1
J=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j.get("token_in_use"), j["projects"]["/workspace"]["trusted"], "/other" in j["projects"], j.get("onboarded"))' "$PH/.agent.json" 2>&1)
eq "persisted seed: other keys and the agent's own values kept, the missing key added" "$J" "kept False True True"
eq "persisted seed: rewritten beside, not in place (a hard link keeps the old text)" "$(cat "$TOP/hardlink.json")" '{"token_in_use": "kept", "projects": {"/workspace": {"trusted": false}, "/other": {}}}'
eq "persisted seed: an existing other file is left alone" "$(cat "$PH/.agent/settings.toml")" "x = 2"
A=$(cat "$PH/.agent/AGENTS.md")
has "persisted preamble: the agent's notes kept" "$A" "my own notes"
has "persisted preamble: text after the block kept" "$A" "after the block"
eq "persisted preamble: one block" "$(grep -c 'berth:begin' "$PH/.agent/AGENTS.md")" 1
has "persisted preamble: the block rewritten for this policy" "$A" "  - example.net"
# Symbolic links in the kept home are never followed (the agent may have made them).
printf '{"outside": true}\n' >"$TOP/outside.json"; SUM=$(sha256sum <"$TOP/outside.json")
mkdir "$TOP/outside-dir"
rm "$PH/.agent.json"; ln -s "$TOP/outside.json" "$PH/.agent.json"
rm -rf "$PH/.agent"; ln -s "$TOP/outside-dir" "$PH/.agent"
b spawn seeded --name sp3 --persist-home
eq "symlinks: spawn still starts" "$RC" 0
has "symlinks: the file link is named, not followed" "$ERR" "persistent home: \`~/.agent.json\` is a symbolic link: not followed, not seeded"
has "symlinks: the directory link too" "$ERR" "persistent home: \`~/.agent\` is a symbolic link or not a directory: not followed"
"$BERTH" stop sp3 --grace 0 >/dev/null 2>&1
eq "symlinks: the file outside is unchanged" "$(sha256sum <"$TOP/outside.json")" "$SUM"
eq "symlinks: nothing written in the directory outside" "$(ls -A "$TOP/outside-dir")" ""
[ -L "$PH/.agent.json" ] && [ -L "$PH/.agent" ] && pass "symlinks: the links themselves left as they are" || fail "symlinks: links replaced" "$(ls -la "$PH")"
rm -rf "$PH"

# path: the agent's program on the host (a native installer's ~/.local/bin/NAME ->
# ~/.local/share/NAME/versions/V), mounted read-only and run
FH=$TOP/fakehome; mkdir -p "$FH/.local/bin" "$FH/.local/share/fagent/versions"
printf '#!/bin/sh\necho "fake agent running as $0"\nexec bash --norc --noprofile -i\n' >"$FH/.local/share/fagent/versions/1.2.3"
chmod 755 "$FH/.local/share/fagent/versions/1.2.3"; chmod -R a+rX "$FH"
ln -s ../share/fagent/versions/1.2.3 "$FH/.local/bin/fagent"
printf 'agent: shell\ncommand: [fagent]\nprompt: type\nnetwork: none\npath: ~/.local/bin/fagent\n' >"$XDG_CONFIG_HOME/berth/profiles/pathed.yml"
HOME=$FH "$BERTH" spawn pathed --name pa1 </dev/null >"$TOP/out" 2>"$TOP/err"; RC=$?; ERR=$(cat "$TOP/err")
eq "path: spawn exit 0" "$RC" 0
wait_screen pa1 "fake agent running as /opt/berth/agent/1.2.3" && pass "path: the target runs from its read-only mount" || fail "path: runs" "" "$("$BERTH" peek pa1)"
run_in pa1 'touch /opt/berth/agent/x 2>&1; ls /opt/berth/agent' || fail "pa1: the shell answered" ""
has "path: the mount is read-only" "$(cat "$LOGS/pa1/output.log")" "Read-only file system"
"$BERTH" stop pa1 --grace 0 >/dev/null 2>&1
# path: an npm install (bin/NAME -> ../lib/node_modules/PKG/bin/x): the script needs
# its package and the packages beside it, so the whole node_modules goes in
NM=$FH/npm/lib/node_modules; mkdir -p "$FH/npm/bin" "$NM/fpkg/bin" "$NM/fdep"
printf 'echo "dependency found"\n' >"$NM/fdep/dep.sh"
printf '#!/bin/sh\necho "npm agent running as $0"\n. "$(dirname "$0")/../../fdep/dep.sh"\nexec bash --norc --noprofile -i\n' >"$NM/fpkg/bin/agent.sh"
chmod 755 "$NM/fpkg/bin/agent.sh"; chmod -R a+rX "$FH"
ln -s ../lib/node_modules/fpkg/bin/agent.sh "$FH/npm/bin/fagent"
printf 'agent: shell\ncommand: [fagent]\nprompt: type\nnetwork: none\npath: ~/npm/bin/fagent\n' >"$XDG_CONFIG_HOME/berth/profiles/npmpathed.yml"
HOME=$FH "$BERTH" spawn npmpathed --name pa3 </dev/null >"$TOP/out" 2>"$TOP/err"; RC=$?; ERR=$(cat "$TOP/err")
eq "path: npm layout: spawn exit 0" "$RC" 0
wait_screen pa3 "npm agent running as /opt/berth/agent/node_modules/fpkg/bin/agent.sh" &&
	pass "path: npm layout: runs from the node_modules mount" || fail "path: npm layout: runs" "" "$("$BERTH" peek pa3)"
wait_screen pa3 "dependency found" && pass "path: npm layout: a package beside it is there" ||
	fail "path: npm layout: the package beside it" "" "$("$BERTH" peek pa3)"
"$BERTH" stop pa3 --grace 0 >/dev/null 2>&1
printf 'agent: shell\ncommand: [fagent]\nprompt: type\nnetwork: none\npath: ~/.local/bin/nosuch\n' >"$XDG_CONFIG_HOME/berth/profiles/pathless.yml"
HOME=$FH "$BERTH" spawn pathless --name pa2 </dev/null >"$TOP/out" 2>"$TOP/err"; RC=$?; ERR=$(cat "$TOP/err")
eq "path: missing: exit 2" "$RC" 2
has "path: missing: names the path and where it looked" "$ERR" "the agent \`~/.local/bin/nosuch\` ($FH/.local/bin/nosuch) does not exist"
has "path: missing: says the fix" "$ERR" "install the agent there"
[ ! -e "$LOGS/pa2" ] && pass "path: missing: nothing created" || fail "path: leftovers" ""
printf 'agent: shell\ncommand: [x]\nhome:\n  ../escape: "x"\n' >"$XDG_CONFIG_HOME/berth/profiles/badhome.yml"
b spawn badhome --name bh1
eq "home: a path leaving \$HOME is refused (2)" "$RC" 2
has "home: the message names it" "$ERR" "\`../escape\` is not a home file: no empty, \`.\` or \`..\` component"
printf 'agent: shell\ncommand: [x]\nhome:\n  a.json: "[1]"\n' >"$XDG_CONFIG_HOME/berth/profiles/badhome.yml"
b spawn badhome --name bh2
has "home: a .json file that is not an object is refused" "$ERR" "a .json file must hold one JSON object"

# 15. rules (src/policy/rules.h) hold for spawn: checked before anything is created
"$BERTH" stop --all --grace 0 >/dev/null 2>&1
printf 'allow:\n  networks: [none]\n' >"$XDG_CONFIG_HOME/berth/rules.yml"
b spawn fake-claude --name ru1
eq "rules: an allowed spawn starts" "$RC" 0
b spawn fake-claude --name ru2 --allow-host example.com
eq "rules: a refused network: 2" "$RC" 2
has "rules: names the file and line" "$ERR" "refused by rules ($XDG_CONFIG_HOME/berth/rules.yml:2): networks does not allow proxy"
[ ! -e "$XDG_RUNTIME_DIR/berth/sessions/ru2" ] && [ ! -e "$XDG_STATE_HOME/berth/sessions/ru2" ] &&
	pass "rules: nothing created for a refused spawn" || fail "rules: leftovers" ""
printf 'allow:\n  networks: [none, proxy]\n  hosts: [\x27127.0.0.1:%s\x27]\n' "$PORT" >"$XDG_CONFIG_HOME/berth/rules.yml"
b spawn shell --name ru3 --repo "http://127.0.0.1:$PORT/repo.git" --allow-host "127.0.0.1:$PORT"
eq "rules: a clone reaching hosts the rules do not cover: 2" "$RC" 2
has "rules: the clone is named" "$ERR" "the clone of --repo"
[ ! -e "$XDG_STATE_HOME/berth/sessions/ru3" ] && pass "rules: no clone was made" || fail "rules: clone leftovers" ""
printf 'allow:\n  credentials: []\n' >"$XDG_CONFIG_HOME/berth/rules.yml"
FAKE_TOKEN=x "$BERTH" spawn fake-claude --name ru4 --seed-auth </dev/null >/dev/null 2>"$TOP/err"; RC=$?; ERR=$(cat "$TOP/err")
eq "rules: --seed-auth of a credential the rules refuse: 2" "$RC" 2
has "rules: names credentials" "$ERR" "credentials"
printf 'allow:\n  networks: [none]\n' >"$XDG_CONFIG_HOME/berth/rules.yml"
mkdir -p "$TOP/.berth"; printf 'allow:\n  networks: [none, host]\n  memory: 512M\n' >"$TOP/.berth/rules.yml"
b spawn fake-claude --name ru5 --network host --yes --memory 256M
eq "rules: a project file cannot widen a user file: 2" "$RC" 2
has "rules: the user's file refuses" "$ERR" "$XDG_CONFIG_HOME/berth/rules.yml:2"
b spawn fake-claude --name ru6
eq "rules: the project file narrows (memory default 8G over 512M): 2" "$RC" 2
has "rules: the project's file refuses" "$ERR" ".berth/rules.yml:3): memory"
b spawn fake-claude --name ru7 "${MEM[@]}"
eq "rules: within every file: starts" "$RC" 0
rm -rf "$XDG_CONFIG_HOME/berth/rules.yml" "$TOP/.berth"

# A literal --env value stays off the supervisor's command line (any user can read it with ps).
SEC=s3cret-$RANDOM-$RANDOM
b spawn fake-claude --name envs "${MEM[@]}" --env "MYTOKEN=$SEC"
eq "secrets: spawn with --env NAME=VALUE starts" "$RC" 0
sleep 0.5
hits=0
for c in /proc/[0-9]*/cmdline; do tr '\0' ' ' <"$c" 2>/dev/null | grep -qF "$SEC" && hits=$((hits + 1)); done
eq "secrets: the value is on no process's command line" "$hits" 0
b stop envs --grace 1s

# A session is a run in the audit trail: run.start and policy before the agent starts, run.stop at the end.
export BERTH_AUDIT_DIR=$TOP/audit-sessions
b spawn fake-claude --name aud1 "${MEM[@]}"
eq "audit: a session starts" "$RC" 0
b stop aud1 --grace 1s
KINDS=$("$BERTH" audit --json 2>/dev/null | python3 -c 'import sys, json; print(" ".join(json.loads(l)["kind"] for l in sys.stdin))')
eq "audit: the session's records" "$KINDS" "run.start policy run.stop"
has "audit: the log verifies" "$("$BERTH" audit verify 2>&1)" "intact: 3 records"
# A torn last line (a crash mid-append) is sealed by the session's supervisor, and berth spawn says so,
# as berth run does (the detached supervisor's stderr is /dev/null: the notice came back in its start message).
AF=$(ls "$BERTH_AUDIT_DIR"/audit-*.jsonl | tail -1); AOFF=$(stat -c %s "$AF")
printf '{"torn' >>"$AF"
b spawn fake-claude --name aud2 "${MEM[@]}"
eq "audit: a session starts on a log with a torn last line" "$RC" 0
has "audit: berth spawn prints the recovery" "$ERR" "berth: audit: the last line of \`$AF\` was torn (6 bytes at offset $AOFF, an append a crash interrupted): cut off and sealed with a recovery record"
b stop aud2 --grace 1s
KINDS=$("$BERTH" audit --json 2>/dev/null | python3 -c 'import sys, json; print(" ".join(json.loads(l)["kind"] for l in sys.stdin))')
eq "audit: the recovery record comes first in the session's group" "$KINDS" "run.start policy run.stop audit.recovery run.start policy run.stop"
has "audit: the log verifies after the recovery" "$("$BERTH" audit verify 2>&1)" "intact: 7 records"
b rm aud2
unset BERTH_AUDIT_DIR

# Without XDG_RUNTIME_DIR: /run/user/UID/berth (logind's), else /run/berth for root, else
# /tmp/berth-UID, which must be a private directory of the caller (another user may have made it).
U=$(id -u)
LOGIND=/run/user/$U
if [ -d "$LOGIND" ] && [ "$(stat -c %u:%a "$LOGIND")" = "$U:700" ]; then RD=$LOGIND/berth
elif [ "$U" = 0 ]; then RD=/run/berth
else RD=/tmp/berth-$U; fi
RD_EXISTED=0; [ -e "$RD" ] && RD_EXISTED=1
nox() { env -u XDG_RUNTIME_DIR "$BERTH" "$@" </dev/null >"$TOP/out" 2>"$TOP/err"; RC=$?; OUT=$(cat "$TOP/out"); ERR=$(cat "$TOP/err"); }
nox spawn fake-codex --name rd1 "${MEM[@]}"
eq "runtime dir: spawn without XDG_RUNTIME_DIR starts" "$RC" 0
[ -S "$RD/sessions/rd1/ctl.sock" ] && pass "runtime dir: its control socket is under $RD" \
	|| fail "runtime dir: control socket under $RD" "$(ls -la "$RD" "$RD/sessions" 2>&1)"
eq "runtime dir: $RD is private" "$(stat -c %u:%a "$RD")" "$U:700"
nox ps rd1
has "runtime dir: ps without XDG_RUNTIME_DIR finds it" "$OUT" rd1
nox stop rd1 --grace 1s
eq "runtime dir: stop without XDG_RUNTIME_DIR" "$RC" 0
if [ "$RD" = "/tmp/berth-$U" ]; then
	# A directory in /tmp that is not private is refused, and nothing is started in it.
	mv "$RD" "$RD.keep.$$"
	mkdir -m 755 "$RD"
	nox spawn fake-codex --name rd2 "${MEM[@]}"
	eq "runtime dir: a /tmp/berth-UID open to others is refused (exit 2)" "$RC" 2
	has "runtime dir: the message names it" "$ERR" "\`$RD\` is not a private directory of uid $U"
	has "runtime dir: and says to set XDG_RUNTIME_DIR" "$ERR" "XDG_RUNTIME_DIR"
	eq "runtime dir: nothing was made in it" "$(ls -A "$RD")" ""
	rmdir "$RD"; mv "$RD.keep.$$" "$RD"
fi
[ "$RD_EXISTED" = 0 ] && rm -rf "$RD"

# 17. berth inside a berth sandbox: an agent that calls `berth mcp` (as an
# MCP server) or `berth run` from its session.  Seccomp refuses namespaces
# there and nested user namespaces are capped at 0: every command that
# starts a sandbox says so, with what to do instead, exit 125 -- not the
# host's sysctl hint.  The host's own refusal keeps that hint.
NB=$TOP/nested; mkdir -p "$NB"; cp -r "$HERE/../apps/fixtures/probe" "$NB/probe"; chmod -R a+rX "$NB"
BDIR=$(dirname "$BERTH") SDKPY=${BERTH_SDK_PYTHON:-$(dirname "$BERTH")/../sdk/python}
# berth as it finds its files next to itself: ../data, ../sdk/python (the probe app is python)
NBMOUNTS=(--ro "$BDIR:/opt/b" --ro "$BDIR/../data:/opt/data" --ro "$SDKPY:/opt/sdk/python" --ro "$NB:/opt/nb")
cat >"$NB/inside.sh" <<'EOS'
B=/opt/b/berth
echo "nested-run-begin"; $B run -- true; echo "run=$?"
$B rpc probe --export ping --app-dir /opt/nb/probe; echo "rpc=$?"
$B test /opt/nb/probe; echo "test=$?"
mkdir -p /tmp/r /tmp/s /tmp/w && chmod 700 /tmp/r && cd /tmp/w && XDG_RUNTIME_DIR=/tmp/r XDG_STATE_HOME=/tmp/s $B spawn shell --name nested; echo "spawn=$?"
$B doctor; echo "doctor=$?"
$B mcp --app probe --app-dir /opt/nb/probe </dev/null; echo "mcp=$?"
EOS
printf 'command: [/opt/b/berth, mcp, --app, probe, --app-dir, /opt/nb/probe, --warm]\nnetwork: none\nprompt: none\nagent: shell\noptions: [--ro, "%s:/opt/b", --ro, "%s/../data:/opt/data", --ro, "%s:/opt/sdk/python", --ro, "%s:/opt/nb"]\n' \
	"$BDIR" "$BDIR" "$SDKPY" "$NB" >"$XDG_CONFIG_HOME/berth/profiles/nested-mcp.yml"
b spawn nested-mcp --name nmcp
eq "nested: a session whose agent is berth mcp starts" "$RC" 0
for i in $(seq 50); do [ "$(field nmcp state)" = exited ] && break; sleep 0.1; done
eq "nested: berth mcp --warm inside the session ends with 125" "$(field nmcp exit_status)" 125
b peek nmcp
has "nested: berth mcp says it runs inside a berth sandbox" "$OUT" "cannot start a sandbox inside a berth sandbox"
has "nested: ... and what to do instead" "$OUT" "run berth on the host"
hasnt "nested: ... not the host's sysctl hint" "$OUT" "unprivileged_userns_clone"
mkdir -p "$NB/ws"
OUT=$("$BERTH" run --network none --workspace "$NB/ws" "${NBMOUNTS[@]}" -- sh /opt/nb/inside.sh 2>&1)
for c in run rpc test spawn; do
	has "nested: berth $c inside exits 125" "$OUT" "$c=125"
done
eq "nested: run, rpc, test, spawn all name the berth sandbox" "$(printf '%s\n' "$OUT" | grep -c 'cannot start a sandbox inside a berth sandbox')" 4
hasnt "nested: no sysctl hint inside" "$OUT" "unprivileged_userns_clone"
hasnt "nested: berth run names no limits of a sandbox it cannot start" "$(printf '%s\n' "$OUT" | sed -n '/^nested-run-begin$/,/^run=/p')" "limits:"
has "nested: berth doctor says why" "$OUT" "this is inside a berth sandbox"
has "nested: berth doctor exits 1" "$OUT" "doctor=1"
has "nested: berth mcp (apps boot at the first call) warns at its start" "$OUT" "this runs inside a berth sandbox, where no app sandbox can start: every call will fail"
b run --network none --workspace "$NB/ws" -- true
eq "nested: on the host berth run still works" "$RC" 0
OUT=$(BERTH_TEST_FORCE_OFF=userns "$BERTH" run --network none --workspace "$NB/ws" -- true 2>&1)
has "host: a refused user namespace keeps its own hint" "$OUT" "unprivileged_userns_clone"
hasnt "host: ... and is not taken for a nested sandbox" "$OUT" "inside a berth sandbox"

b stop --all --grace 1s
eq "final stop --all" "$RC" 0

echo "# $T tests, $FAILS failed"
[ "$FAILS" -eq 0 ]
