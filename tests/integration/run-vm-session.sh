#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# An agent session in a microVM (`berth spawn --runtime vm`, docs/vm.md and
# docs/sessions.md), with the real guest init installed from the .deb cache
# the vm suites share.  One boot carries the session's checks:
#   - the refusals first, before anything is made: an unknown runtime (2),
#     --review (2: not yet),
#     a seeded home file over one HOME frame (2, named, no session left),
#     no guest installed (125, `berth vm install`);
#   - a session of a profile with a seeded home (`home:`, `instructions:`):
#     the agent runs in the guest's kernel; the home's files are there as a
#     fresh namespace-runtime home has them (bytes, 0600, directories 0700,
#     berth's preamble); `berth send`/`peek`/the output log and the control
#     socket's resize reach it (the guest's terminal gets the new size);
#   - `berth stop`: the session exited, no qemu nor run directory left.
# usage: run-vm-session.sh /path/to/berth /path/to/source-tree
# As root and as an unprivileged user.  Output is TAP.
set -u
export LC_ALL=C
unset BERTH_TEST_FORCE_OFF
B=$(readlink -f -- "${1:?usage: $0 /path/to/berth /path/to/source}")
T=$(mktemp -d "${TMPDIR:-/tmp}/vm-session.XXXXXX")
chmod 755 "$T"
export XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config" XDG_RUNTIME_DIR="$T/run"
export BERTH_AUDIT_DIR="$T/audit" BERTH_VM_DIR="$T/g"
mkdir -p "$T/state" "$T/config/berth/profiles" "$T/run"
chmod 700 "$T/run"
cleanup() {
	"$B" stop --all --grace 0 >/dev/null 2>&1
	pkill -KILL -f "$T/run/berth/vm-" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
show() { sed 's/^/# /' "$@"; }
eq() {
	if [ "$2" == "$3" ]; then ok "$1"; else
		not_ok "$1 (got \`$(printf '%s' "$2" | head -c 300 | tr '\n' '|')\`)"
		printf 'want: %s\n' "$3" | show
		show "$T/err"
	fi
}
has() { if printf '%s' "$2" | grep -qF -- "$3"; then ok "$1"; else
	not_ok "$1 (\`$3\` not found)"; printf '%s\n' "$2" | head -20 | show; fi; }
finish() { echo "1..$n"; [ "$fails" = 0 ]; exit; }
b() { "$B" "$@" </dev/null >"$T/out" 2>"$T/err"; RC=$?; OUT=$(cat "$T/out"); ERR=$(cat "$T/err"); }
vmq() { pgrep -f -- "-name $T/run/berth/vm-"; }
LOGS=$XDG_STATE_HOME/berth/sessions
# run_in NAME CMD: type CMD into the session, wait for its own end marker
# in the output log (the typed line holds only the sum, not the marker)
K=0
run_in() {
	K=$((K + 1))
	"$B" send "$1" "$2; echo END-\$((1000+$K))" --enter >/dev/null
	local i
	for i in $(seq 300); do
		grep -q "END-$((1000 + K))" "$LOGS/$1/output.log" 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}
cd "$T" || exit 1

cat >"$T/config/berth/profiles/seeded.yml" <<'EOF'
agent: shell
command: [bash, --norc, --noprofile, -i]
prompt: type
network: none
instructions: .agent/AGENTS.md
home:
  .agent.json: |
    {"onboarded": true, "projects": {"/workspace": {"trusted": true}}}
  .agent/settings.toml: "x = 1\n"
EOF
# one seeded file of 65530 bytes (a profile takes 64 KiB): over a HOME
# frame's 65528 for it (64 KiB less its path and a NUL)
{
	printf 'agent: shell\ncommand: [bash]\nnetwork: none\nhome:\n  big.txt: "'
	head -c 65530 /dev/zero | tr '\0' x
	printf '"\n'
} >"$T/config/berth/profiles/bigseed.yml"

# --- refusals, before a boot and before anything of a session is made
b spawn seeded --name nope1 --runtime nope
eq "spawn --runtime nope: 2, the runtimes named" "$RC $(head -1 "$T/err")" \
	"2 berth: unknown runtime \`nope\`; this berth has: namespace, vm"
b spawn seeded --name rev1 --runtime vm --review
eq "spawn --runtime vm --review: 2, not yet (a session's checkpoints are the namespace runtime's)" \
	"$RC $(head -1 "$T/err")" "2 berth: the vm runtime cannot give \`--review\` yet (docs/review.md)"
BERTH_VM_DIR=$T/none "$B" spawn seeded --name noguest --runtime vm </dev/null >"$T/out" 2>"$T/err"
rc=$?
eq "spawn --runtime vm, no guest installed: 125, names \`berth vm install\`" \
	"$rc $(grep -c 'berth vm install' "$T/err")" "125 1"

CACHE=${BERTH_VM_DEB_CACHE:-/var/tmp/berth-vm-deb-cache}
[ -d "$CACHE" ] || { mkdir -p "$CACHE" && chmod 1777 "$CACHE"; }
"$B" vm install --dir "$T/g" --deb-cache "$CACHE" >"$T/out" 2>"$T/err" </dev/null
rc=$?
eq "berth vm install of the real guest" "$rc" 0
[ "$rc" = 0 ] || finish
KREL=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["kernel"]["release"])' "$T/g/guest.json")

b spawn bigseed --name big1 --runtime vm
eq "spawn --runtime vm, a seeded file over a HOME frame: 2, the file and the limit named" \
	"$RC $(head -1 "$T/err")" \
	"2 berth: the seeded home's \`~/big.txt\` is 65530 bytes, over the 65528 bytes of a file the vm runtime's channel carries (its HOME frame: 65536 less the path and a NUL)"
eq "... no session of it, no VM" "$(ls "$LOGS" "$T/run/berth/sessions" 2>/dev/null | grep -c '^big1$')$(vmq | wc -l)" 00

# --- the session
t0=$(date +%s)
b spawn seeded --name vs1 --runtime vm --size 30x100
eq "spawn --runtime vm: exit 0, prints the name" "$RC $OUT" "0 vs1"
echo "# spawn (a boot): $(($(date +%s) - t0)) s"
eq "... a qemu runs for it" "$(vmq | wc -l)" 1
run_in vs1 'uname -r; cat ~/.agent.json ~/.agent/settings.toml; stat -c "mode=%a" ~/.agent.json; stat -c "dirmode=%a" ~/.agent; head -2 ~/.agent/AGENTS.md; stty size' ||
	not_ok "the session's shell answered"
LOG=$(cat "$LOGS/vs1/output.log" 2>/dev/null)
has "the agent runs in the guest's kernel ($KREL)" "$LOG" "$KREL"
[ "$KREL" != "$(uname -r)" ] || echo "# the host runs the guest's kernel release too: the check above proves less"
has "seed: the JSON file is in the fresh home" "$LOG" '{"onboarded": true, "projects": {"/workspace": {"trusted": true}}}'
has "seed: the other file too" "$LOG" "x = 1"
has "seed: files are 0600" "$LOG" "mode=600"
has "seed: directories 0700" "$LOG" "dirmode=700"
has "preamble: in the agent's own instructions file" "$LOG" "# You are running in a berth sandbox"
has "the guest's terminal has the session's size (30x100)" "$LOG" "30 100"
# a resize through the control socket (what `berth attach` sends): the
# supervisor's TIOCSWINSZ on the host's pty reaches the guest as WINSZ
python3 -c '
import json,socket,sys
s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f=s.makefile("rb")
s.sendall(b"{\"op\":\"resize\",\"rows\":25,\"cols\":90}\n"); print(json.loads(f.readline()))' \
	"$XDG_RUNTIME_DIR/berth/sessions/vs1/ctl.sock" >"$T/rs" 2>&1
sleep 1
run_in vs1 'echo SIZE=$(stty size | tr " " x)' || not_ok "the shell answered after the resize"
has "a resize reaches the guest's terminal (25x90)" "$(cat "$LOGS/vs1/output.log")" "SIZE=25x90"
"$B" peek vs1 >"$T/peek" 2>&1
has "berth peek shows the guest's screen" "$(cat "$T/peek")" "SIZE=25x90"
b stop vs1 --grace 0
eq "berth stop: 0" "$RC" 0
for _ in $(seq 50); do [ -z "$(vmq)" ] && break; sleep 0.2; done
eq "... no qemu left" "$(vmq | wc -l)" 0
eq "... no run directory left" "$(ls "$T/run/berth" | grep -c '^vm-')" 0
b ps --json vs1
eq "... the session exited" "$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["alive"])')" False
finish
