#!/usr/bin/env bash
# Regressions from an attack pass on resident apps, berth mcp, sessions and the
# audit trail: what a hostile agent, MCP client, repository or other local user
# could do, and now cannot.
#  1. berth dev: a runtime directory that is another user's symbolic link is
#     refused before anything is created through it
#  2. berth attach / berth logs on a terminal: the agent's output cannot drive
#     the person's terminal (OSC 52 clipboard, tmux passthrough, kitty's
#     graphics APC, C1 controls); text, colours and titles pass; detaching
#     switches off the modes the agent switched on; logs into a pipe stay raw
#  3. values from a fleet file or a directory name (a repository's) never
#     reach the terminal as escape sequences: errors, berth ps
#  4. berth audit list: an MCP client's name and arguments (C1, bidirectional
#     controls) are shown as escapes
#  5. no session, fleet agent or resident app gets the audit log or the host
#     key (as berth run already refused): a fleet file's workspace or options,
#     spawn's --workspace/--ro, an app directory that holds them
#  6. a fleet file takes nothing from the host beyond its profile without the
#     person's --yes: credentials (seed_auth, --env NAME, --env-file), host
#     mounts (--ro/--rw), --evidence, a workspace outside the file's directory
#     (`workspace: /etc` as root was a writable /etc); a `--yes` among the
#     file's own options approves nothing
#  7. JSON that berth prints for people (berth rpc's result and error, berth
#     tools, ps --json, peek --json) carries an app's or a manifest's C1 and
#     bidirectional characters as \u escapes: U+009D ... U+009C is an OSC 52
#     to xterm
#
# usage: run-hostile-apps.sh /path/to/berth [stage-dir]   ok/FAIL lines; exit 1 on a failure
#   stage-dir: holds apps/filesystem (built) and data/; default: the checkout
#   above this script.  Works as root and as an unprivileged user.
set -u
export LC_ALL=C.UTF-8
unset BERTH_TEST_FORCE_OFF
[ $# -ge 1 ] || { echo "usage: $0 /path/to/berth [stage-dir]" >&2; exit 2; }
BERTH=$(readlink -f -- "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
STAGE=$(readlink -f -- "${2:-$HERE/../..}")
T=0 FAILS=0
pass() { T=$((T + 1)); echo "ok $T - $1"; }
fail() { T=$((T + 1)); FAILS=$((FAILS + 1)); echo "not ok $T - $1 # $2"; shift 2; local l; for l in "$@"; do printf '%s\n' "$l" | head -n 12 | sed 's/^/#   /'; done; }
eq() { if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'" "stderr: ${ERR:-}"; fi; }
has() { if printf '%s' "$2" | grep -qF -- "$3"; then pass "$1"; else fail "$1" "'$3' not found" "in: $2"; fi; }
hasnt() { if printf '%s' "$2" | grep -qF -- "$3"; then fail "$1" "'$3' found" "in: $2"; else pass "$1"; fi; }
# noesc DESC TEXT: no ESC, no C1 control (raw or UTF-8), no U+202E in TEXT
noesc() {
	if printf '%s' "$2" | LC_ALL=C grep -qP '\x1b|\xc2[\x80-\x9f]|\xe2\x80\xae'; then
		fail "$1" "escape or control found" "$(printf '%s' "$2" | od -c | head -n 8)"
	else pass "$1"; fi
}

TOP=$(mktemp -d /tmp/berth-hostile.XXXXXX) || exit 1
chmod 755 "$TOP"
export XDG_RUNTIME_DIR=$TOP/run XDG_STATE_HOME=$TOP/state XDG_CONFIG_HOME=$TOP/config BERTH_AUDIT_DIR=$TOP/audit
mkdir -p "$XDG_RUNTIME_DIR" "$XDG_CONFIG_HOME"
chmod 700 "$XDG_RUNTIME_DIR"
DEVPID=
cleanup() {
	"$BERTH" stop --all --grace 0 >/dev/null 2>&1
	[ -n "$DEVPID" ] && kill "$DEVPID" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$TOP"
}
trap cleanup EXIT
cd "$TOP" || exit 1
b() { "$BERTH" "$@" </dev/null >"$TOP/out" 2>"$TOP/err"; RC=$?; OUT=$(cat "$TOP/out"); ERR=$(cat "$TOP/err"); }

# 1. berth dev: $XDG_RUNTIME_DIR/berth (or /tmp/berth-UID) as another user's
# symbolic link.  berth dev used to create `dev/` through it before refusing.
mkdir -m 1777 "$TOP/sticky"
mkdir -m 777 "$TOP/elsewhere"
ln -s "$TOP/elsewhere" "$TOP/sticky/berth"
cp -a "$STAGE/apps/filesystem" "$TOP/fsapp"
XDG_RUNTIME_DIR=$TOP/sticky timeout 20 "$BERTH" dev "$TOP/fsapp" </dev/null >"$TOP/out" 2>"$TOP/err"
RC=$? ERR=$(cat "$TOP/err")
eq "dev: a runtime directory that is a symbolic link: exit 2" "$RC" 2
has "dev: says why" "$ERR" "\`$TOP/sticky/berth\` is not a private directory of uid $(id -u): refusing to use it"
eq "dev: nothing was created through the link" "$(ls -A "$TOP/elsewhere")" ""
rm "$TOP/sticky/berth"

# 2. attach and logs: an agent that writes what would drive the person's terminal
mkdir "$TOP/ws"
cat >"$TOP/ws/evil.sh" <<'EOF'
#!/bin/sh
while :; do
	printf 'MARK\033[1;31mred\033[0m\033]0;TITLE\007\033[?1003h\033[?2004h\033[?25l\033(0'
	printf '\033]52;c;ZWNobyBwd25lZA==\007\033Ptmux;\033\033]52;c;eA==\007\033\\'
	printf '\033_Gf=100,t=f;L2V0Yy9wYXNzd2Q=\033\\\302\23552;c;eA==\007\302\2332J\033\n]52;c;eA==\007END\n'
	sleep 0.3
done
EOF
chmod 755 "$TOP/ws" "$TOP/ws/evil.sh"
b spawn shell --name ev --workspace "$TOP/ws" -- -c /workspace/evil.sh
eq "spawn: the hostile agent starts" "$RC" 0
for i in $(seq 50); do grep -q END "$XDG_STATE_HOME/berth/sessions/ev/output.log" 2>/dev/null && break; sleep 0.1; done
ATT=$(python3 - "$BERTH" <<'EOF'
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1], "attach", "ev"])
got = b""
end = time.time() + 2.5
while time.time() < end:
    r, _, _ = select.select([fd], [], [], 0.2)
    if r:
        try:
            got += os.read(fd, 65536)
        except OSError:
            break
os.write(fd, b"\x1d")
time.sleep(0.5)
try:
    while select.select([fd], [], [], 0.5)[0]:
        d = os.read(fd, 65536)
        if not d:
            break
        got += d
except OSError:
    pass
os.waitpid(pid, 0)
sys.stdout.buffer.write(got)
EOF
)
has "attach: the agent's text reaches the terminal" "$ATT" "MARK"
has "attach: colours pass" "$ATT" $'\033[1;31mred'
has "attach: the title passes" "$ATT" $'\033]0;TITLE\a'
hasnt "attach: no OSC 52 (the host's clipboard)" "$ATT" $'\033]52'
hasnt "attach: no tmux passthrough" "$ATT" $'\033Ptmux'
hasnt "attach: no kitty graphics APC (a host file by name)" "$ATT" $'\033_G'
hasnt "attach: no UTF-8 C1 OSC" "$ATT" $'\302\235'
hasnt "attach: no UTF-8 C1 CSI" "$ATT" $'\302\233'
# ESC LF ] 52: the terminal runs LF inside the sequence and reads an OSC 52
hasnt "attach: ESC LF ] is not an OSC either" "$ATT" $']52;c;eA==\a'
# Detaching leaves no mode the agent switched on (mouse reports would be typed into the shell)
TAIL=${ATT##*MARK}
for mode in '[?1003l' '[?2004l' '[?25h' '(B'; do
	has "attach: the detach resets $mode" "$TAIL" $'\033'"$mode"
done
# berth logs on a terminal is filtered the same way; into a pipe it is raw
LOGTTY=$(python3 - "$BERTH" <<'EOF'
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1], "logs", "ev"])
got = b""
while True:
    try:
        d = os.read(fd, 65536)
    except OSError:
        break
    if not d:
        break
    got += d
os.waitpid(pid, 0)
sys.stdout.buffer.write(got)
EOF
)
has "logs on a terminal: the text" "$LOGTTY" "MARK"
hasnt "logs on a terminal: no OSC 52" "$LOGTTY" $'\033]52'
hasnt "logs on a terminal: no UTF-8 C1" "$LOGTTY" $'\302\235'
b logs ev
has "logs into a pipe: raw, as written" "$OUT" $'\033]52;c;ZWNobyBwd25lZA=='
b stop ev --grace 0
eq "stop the hostile agent" "$RC" 0

# 3. values from a repository's files: a fleet file, a directory's name
printf 'agents:\n  - name: d\n    profile: "sh\\e]52;c;eA==\\a"\n    workspace: ws\n' >"$TOP/f1.yml"
b fleet up "$TOP/f1.yml"
eq "fleet: a profile name with an escape: exit 2" "$RC" 2
has "fleet: the name is shown escaped" "$ERR" 'invalid profile name `sh\x1b]52;c;eA==\x07`'
noesc "fleet: no escape reaches stderr" "$ERR"
mkdir "$TOP/ws"$'\033]0;PWNED\a' && chmod 755 "$TOP/ws"$'\033]0;PWNED\a'
printf 'agents:\n  - name: e\n    profile: shell\n    workspace: "ws\\e]0;PWNED\\a"\n    args: [-c, "sleep 60"]\n' >"$TOP/f2.yml"
b fleet up "$TOP/f2.yml"
eq "fleet: a workspace whose name holds an escape starts" "$RC" 0
b ps
has "ps: the workspace is shown escaped" "$OUT" 'ws\x1b]0;PWNED\x07'
noesc "ps: no escape reaches stdout" "$OUT"
b fleet ps "$TOP/f2.yml"
noesc "fleet ps: no escape reaches stdout" "$OUT"
b fleet stop "$TOP/f2.yml"
eq "fleet stop" "$RC" 0

# 4. the audit trail shows what an MCP client sent, escaped
MCPOUT=$(python3 - "$BERTH" "$TOP/fsapp" <<'EOF'
import json, subprocess, sys
p = subprocess.Popen([sys.argv[1], "mcp", "--app", "filesystem", "--app-dir", sys.argv[2], "--no-dev"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
def send(m):
    p.stdin.write((json.dumps(m) + "\n").encode()); p.stdin.flush()
    return json.loads(p.stdout.readline())
send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
      "params": {"protocolVersion": "2025-06-18", "clientInfo": {"name": "cl\u202eient\u009b31m"}}})
r = send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
          "params": {"name": "read_file", "arguments": {"path": "x\u202ey\u009b2Jz"}}})
p.stdin.close(); p.wait()
print(r["result"]["isError"])
EOF
)
eq "mcp: the call ran (and failed: no such file)" "$MCPOUT" True
b audit list
eq "audit list: exit 0" "$RC" 0
has "audit list: the client's name, escaped" "$OUT" 'mcp:client:cl\u{202e}ient\x9b31m'
has "audit list: the arguments, escaped" "$OUT" '"input":{"path":"x\u{202e}y\x9b2Jz"}'
noesc "audit list: no C1 or bidirectional control reaches stdout" "$OUT"
b audit list --json
has "audit list --json: as stored, JSON-escaped" "$OUT" '"path":"x\u202Ey\u009B2Jz"'
b audit verify
eq "audit verify: intact" "$RC" 0

# 5. the audit log and the host key stay out of every sandbox.  Here they are
# the defaults under XDG_STATE_HOME and XDG_CONFIG_HOME.
unset BERTH_AUDIT_DIR
b run --workspace "$TOP/ws" -- true # makes the key and the log
eq "run: the key and the log exist" "$RC" 0
KEYDIR=$XDG_CONFIG_HOME/berth/keys AUDDIR=$XDG_STATE_HOME/berth/audit
KEYLINE=$(sed -n 2p "$KEYDIR/host-ed25519.pem")
refused() { # refused DESC DIR-NAMED : exit 2, the message, no session left, the key in no log
	eq "$1: exit 2" "$RC" 2
	has "$1: says what it would expose" "$ERR" "would give the sandbox"
	has "$1: names the directory" "$ERR" "(\`$2\`)"
	local left; left=$("$BERTH" ps 2>/dev/null | awk 'NR > 1 && $1 ~ /^x/' | wc -l)
	eq "$1: no session was started" "$left" 0
	if grep -rqF -- "$KEYLINE" "$XDG_STATE_HOME/berth/sessions" 2>/dev/null; then
		fail "$1: the private key reached no output" "found in a session log"
	else pass "$1: the private key reached no output"; fi
}
SHOWKEY=(-- -c 'cat /workspace/berth/keys/host-ed25519.pem /k/host-ed25519.pem 2>&1; sleep 2')
b spawn shell --name x1 --workspace "$XDG_CONFIG_HOME" "${SHOWKEY[@]}"
refused "spawn --workspace XDG_CONFIG_HOME" "$KEYDIR"
b spawn shell --name x2 --workspace "$TOP/ws" --ro "$KEYDIR:/k" "${SHOWKEY[@]}"
refused "spawn --ro KEYDIR" "$KEYDIR"
b spawn shell --name x3 --workspace "$XDG_STATE_HOME" "${SHOWKEY[@]}"
refused "spawn --workspace XDG_STATE_HOME" "$AUDDIR"
ln -s "$XDG_CONFIG_HOME" "$TOP/innocent"
printf 'agents:\n  - name: x4\n    profile: shell\n    workspace: innocent\n    args: [-c, "cat /workspace/berth/keys/host-ed25519.pem; sleep 2"]\n' >"$TOP/f3.yml"
b fleet up "$TOP/f3.yml"
refused "fleet: a workspace that is a link to XDG_CONFIG_HOME" "$KEYDIR"
printf 'agents:\n  - name: x5\n    profile: shell\n    workspace: ws\n    options: [--ro, "%s:/k"]\n    args: [-c, "cat /k/host-ed25519.pem; sleep 2"]\n' "$KEYDIR" >"$TOP/f4.yml"
b fleet up "$TOP/f4.yml"
refused "fleet: options --ro KEYDIR" "$KEYDIR"
# A resident app whose directory holds the key directory (mounted at /app)
cp "$TOP/fsapp/berth.yml" "$TOP/fsapp/filesystem" "$XDG_CONFIG_HOME/"
b rpc filesystem --app-dir "$XDG_CONFIG_HOME" --export read_file --input '{"path":"/app/berth/keys/host-ed25519.pem"}'
eq "rpc: an app directory that holds the key: exit 2" "$RC" 2
has "rpc: says so" "$ERR" "the app directory \`$XDG_CONFIG_HOME\` would give the sandbox berth's host key"
hasnt "rpc: the key is not printed" "$OUT" "PRIVATE KEY"
rm -f "$XDG_CONFIG_HOME/berth.yml" "$XDG_CONFIG_HOME/filesystem"

# 6. what a fleet file takes from the host needs the person's --yes
mkdir -p "$TOP/repo/proj" "$TOP/outside"
chmod 755 "$TOP/repo" "$TOP/repo/proj" "$TOP/outside"
echo SECRET-FILE-CONTENT >"$TOP/outside/secret"
chmod 644 "$TOP/outside/secret"
export FLEET_TEST_TOKEN=tok-$RANDOM$RANDOM
SHOW='cat /k/secret /workspace/secret 2>/dev/null; echo env=$FLEET_TEST_TOKEN; touch /workspace/planted; sleep 2'
fleet_refused() { # fleet_refused DESC FILE-BODY EXPECTED-LINE
	printf '%s' "$2" >"$TOP/repo/fleet.yml"
	b fleet up "$TOP/repo/fleet.yml"
	eq "$1: exit 2 without --yes" "$RC" 2
	has "$1: says what it takes" "$ERR" "$3"
	has "$1: asks for --yes" "$ERR" "pass --yes to \`berth fleet up\` (nothing was started)"
	eq "$1: no session was started" "$("$BERTH" ps --json u1 | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" 0
	if [ -e "$TOP/outside/planted" ] || grep -rqF -e SECRET-FILE-CONTENT -e "$FLEET_TEST_TOKEN" "$XDG_STATE_HOME/berth/sessions" 2>/dev/null; then
		fail "$1: nothing leaked" "a planted file or the secret in a log"
	else pass "$1: nothing leaked"; fi
}
AG='agents:\n  - name: u1\n    profile: shell\n'
fleet_refused "fleet: a workspace outside the file's directory" \
	"$(printf "${AG}"'    workspace: ../outside\n    args: [-c, "%s"]\n' "$SHOW")" \
	"from the fleet file: workspace: \`$TOP/outside\` is outside the fleet file's directory \`$TOP/repo\`"
fleet_refused "fleet: --workspace in options" \
	"$(printf "${AG}"'    workspace: proj\n    options: [--wor, %s]\n    args: [-c, "%s"]\n' "$TOP/outside" "$SHOW")" \
	"workspace: \`$TOP/outside\` is outside"
fleet_refused "fleet: --ro of a host directory" \
	"$(printf "${AG}"'    workspace: proj\n    options: ["--ro=%s:/k"]\n    args: [-c, "%s"]\n' "$TOP/outside" "$SHOW")" \
	"options: --ro mounts your \`$TOP/outside\` at \`/k\`"
fleet_refused "fleet: --env NAME from the environment" \
	"$(printf "${AG}"'    workspace: proj\n    options: [--env, FLEET_TEST_TOKEN]\n    args: [-c, "%s"]\n' "$SHOW")" \
	"options: --env FLEET_TEST_TOKEN forwards \`FLEET_TEST_TOKEN\` from your environment"
fleet_refused "fleet: seed_auth" \
	"$(printf "${AG}"'    workspace: proj\n    seed_auth: true\n    args: [-c, "%s"]\n' "$SHOW")" \
	"seed_auth: forwards the profile's credentials"
fleet_refused "fleet: a widening approved by the file's own --yes" \
	"$(printf "${AG}"'    workspace: proj\n    options: [--network, host, --yes]\n    args: [-c, "%s"]\n' "$SHOW")" \
	"widening: --network host"
# Inside its own directory, with only what the profile gives: no --yes needed
# (--memory is refused without a cgroup, run-limits.sh: there another limit of the person's)
MEMOPT="--memory, 512M"
mkdir -p "$TOP/memprobe"
"$BERTH" run --dry-run --workspace "$TOP/memprobe" --memory 512M -- true 2>&1 >/dev/null | grep -q "cannot be enforced" && MEMOPT="--pids, 64"
printf "${AG}"'    workspace: proj\n    options: [%s]\n    args: [-c, "sleep 2"]\n' "$MEMOPT" >"$TOP/repo/fleet.yml"
b fleet up "$TOP/repo/fleet.yml"
eq "fleet: a workspace inside the file's directory starts without --yes" "$RC" 0
b fleet stop "$TOP/repo/fleet.yml"
# With the person's --yes, the outside workspace is used, and said
printf "${AG}"'    workspace: ../outside\n    args: [-c, "sleep 2"]\n' >"$TOP/repo/fleet.yml"
b fleet up "$TOP/repo/fleet.yml" --yes
eq "fleet up --yes: starts" "$RC" 0
has "fleet up --yes: still says what it takes" "$ERR" "is outside the fleet file's directory"
b fleet stop "$TOP/repo/fleet.yml"

# 7. JSON printed for people: an app's answer and a manifest's text
mkdir "$TOP/c1app"
cat >"$TOP/c1app/berth.yml" <<'EOF'
schema_version: 1
name: c1app
version: 0.1.0
description: answers with C1 and bidirectional controls
runtime: python
entry: app.py
exports:
  - name: out
    description: "C1 controls \u009d0;T\u009c and U+202E \u202e"
    output: {s: string}
  - name: fail
    description: an error whose data holds them
EOF
cat >"$TOP/c1app/app.py" <<'EOF'
import json, os, socket
s = socket.socket(fileno=int(os.environ["BERTH_RPC_FD"]))
def send(m):
    s.sendall((json.dumps(m) + "\n").encode())
send({"jsonrpc": "2.0", "method": "berth/ready", "params": {"exports": ["out", "fail"]}})
for line in s.makefile("rb"):
    m = json.loads(line)
    if m["method"] == "out":
        send({"jsonrpc": "2.0", "id": m["id"], "result": {"s": "a\u009d52;c;ZWNobyBwd25lZA==\u009cb\u202ec \u4e2d"}})
    else:
        send({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32000, "message": "no\u001b]0;PWN\u0007\u009b2J\u202e", "data": {"x": "\u009d0;T\u009c\u202e"}}})
EOF
chmod -R a+rX "$TOP/c1app"
b rpc c1app --app-dir "$TOP/c1app" --export out
eq "rpc: the call succeeds" "$RC" 0
eq "rpc: C1 and bidirectional characters as \\u escapes, other text as it is" "$OUT" '{"s":"a\u009d52;c;ZWNobyBwd25lZA==\u009cb\u202ec 中"}'
noesc "rpc: no C1 or bidirectional control reaches stdout" "$OUT"
b rpc c1app --app-dir "$TOP/c1app" --export fail
eq "rpc: an app error: exit 1" "$RC" 1
has "rpc: the error's data escaped" "$OUT$ERR" '"x":"\u009d0;T\u009c\u202e"'
noesc "rpc: no C1 or bidirectional control in the error" "$OUT$ERR"
b tools "$TOP/c1app"
eq "tools: exit 0" "$RC" 0
has "tools: the manifest's description escaped" "$OUT" 'C1 controls \u009d0;T\u009c and U+202E \u202e'
noesc "tools: no C1 or bidirectional control reaches stdout" "$OUT"
python3 -c 'import json,sys; json.loads(sys.argv[1])' "$OUT" && pass "tools: still valid JSON" || fail "tools: valid JSON" "" "$OUT"

# 8. lines on the channel that are no JSON object (docs/protocol.md): warned about and skipped,
# with jansson's reason or "not an object" before berth/ready, without one after it
mkdir "$TOP/junkapp"
cat >"$TOP/junkapp/berth.yml" <<'EOF'
schema_version: 1
name: junkapp
version: 0.1.0
description: sends lines that are no JSON object around its answers
runtime: python
entry: app.py
exports:
  - name: out
    description: answers after junk
    output: {s: string}
EOF
cat >"$TOP/junkapp/app.py" <<'EOF'
import json, os, socket
s = socket.socket(fileno=int(os.environ["BERTH_RPC_FD"]))
def raw(b):
    s.sendall(b + b"\n")
raw(b'[1,2]')
raw(b'5')
raw(b'{"a":1,"a":2}')
raw(b'{"jsonrpc":"2.0","method":"berth/log","params":{"level":7,"message":"level-not-a-string"}}')
raw(json.dumps({"jsonrpc": "2.0", "method": "berth/ready", "params": {"exports": ["out"]}}).encode())
for line in s.makefile("rb"):
    m = json.loads(line)
    raw(b'[3]')
    raw(b'{"jsonrpc":"2.0","method":"berth/bogus"}')
    raw(b'{"jsonrpc":"2.0"}')
    raw(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {"s": "after-junk"}}).encode())
EOF
chmod -R a+rX "$TOP/junkapp"
b rpc junkapp --app-dir "$TOP/junkapp" --export out
eq "junk lines: the call succeeds" "$RC" 0
eq "junk lines: the answer" "$OUT" '{"s":"after-junk"}'
eq "junk lines: each warned about, as documented" "$(printf '%s\n' "$ERR" | grep '^\[junkapp\]')" \
"[junkapp] warning: the app sent a line that is not a JSON object (not an object)
[junkapp] warning: the app sent a line that is not a JSON object ('[' or '{' expected near '5')
[junkapp] warning: the app sent a line that is not a JSON object (duplicate object key near '\"a\"')
[junkapp] level-not-a-string
[junkapp] warning: the app sent a line that is not a JSON object
[junkapp] warning: ignored an unexpected \`berth/bogus\` message from the app"

echo "# $T tests, $FAILS failed"
[ "$FAILS" -eq 0 ]
