#!/usr/bin/env bash
# Integration tests for `berth run`: real programs (sh, coreutils, python3, git,
# curl, util-linux script) run inside the sandbox and every item of the default
# posture (docs/cli-contract.md) is asserted with exact values.
#
# usage: run-integration.sh /path/to/berth
#
# Works as root and as an unprivileged user.  Output is TAP; exit status 1 if
# any check failed.  Nothing is skipped: a missing precondition is a failure.

set -u
export LC_ALL=C
unset BERTH_TEST_FORCE_OFF

if [ $# -ne 1 ]; then
	echo "usage: $0 /path/to/berth" >&2
	exit 2
fi
BERTH=$(readlink -f -- "$1")
HOSTPY=/usr/bin/python3          # host-side python (root's PATH may hold a pyenv shim)
ME=$(id -u)
MYGID=$(id -g)
IS_ROOT=0; [ "$ME" -eq 0 ] && IS_ROOT=1
UNIQ=$(( ($$ % 9000) + 1000 ))    # unique numbers for pgrep patterns
SLEEP_ORPHAN="7$UNIQ"1
SLEEP_KILL="7$UNIQ"2

# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"  # T, FAILS, pass, fail, has, hasnt
# check DESC CONDITION-EXIT-STATUS REASON
ck() { if [ "$2" -eq 0 ]; then pass "$1"; else fail "$1" "$3" "rc=$RC" "stdout: $OUT" "stderr: $ERR"; fi; }
eq() { # eq DESC GOT WANT
	if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'" "rc=$RC" "stderr: $ERR"; fi
}

TOP=$(mktemp -d /tmp/berth-it.XXXXXX) || { echo "Bail out! mktemp failed"; exit 1; }
chmod 755 "$TOP"      # the sandbox's mapped uid must be able to traverse to --ro/--rw sources
TD=$TOP/cap; mkdir "$TD"
WS=$TOP/ws; mkdir "$WS"; chmod 700 "$WS"
BGPIDS=()
cleanup() {
	local p
	for p in "${BGPIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	[ -n "${SRVPID:-}" ] && kill "$SRVPID" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$TOP" 2>/dev/null || { chmod -R u+rwx "$TOP" 2>/dev/null; rm -rf "$TOP"; }
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# br ARGS... : berth run ARGS (stdin /dev/null, cwd = current dir); sets RC OUT ERR
br() {
	"$BERTH" run "$@" <"/dev/null" >"$TD/out" 2>"$TD/err"
	RC=$?
	OUT=$(cat "$TD/out"); ERR=$(cat "$TD/err")
}
now_ms() { date +%s%3N; }
RC=; OUT=; ERR=

cd "$WS" || exit 1

# ---------------------------------------------------------------- preconditions
for tool in "$BERTH" "$HOSTPY" /usr/bin/git /usr/bin/curl /usr/bin/script /usr/bin/pgrep /usr/bin/python3; do
	if [ -x "$tool" ]; then pass "precondition: $tool is executable"
	else fail "precondition: $tool is executable" "missing"; fi
done

# ---------------------------------------------------------------- identity
br -- sh -c 'id -u; id -g; cat /proc/self/uid_map; echo x > written-by-sandbox; echo $USER'
read -r in_uid in_gid < <(printf '%s\n' "$OUT" | sed -n '1p;2p' | tr '\n' ' ')
map=$(printf '%s\n' "$OUT" | sed -n 3p | awk '{print $1, $2, $3}')
in_user=$(printf '%s\n' "$OUT" | sed -n 4p)
eq "identity: trivial command exits 0" "$RC" 0
eq "identity: USER inside is the passwd name of uid $in_uid" "$in_user" "$(getent passwd "$in_uid" | cut -d: -f1)"
if [ $IS_ROOT -eq 1 ]; then
	eq "identity (root caller, root-owned workspace): uid inside is 1000" "$in_uid" 1000
	if [ "${in_uid:-0}" != 0 ]; then pass "identity (root caller): uid inside is not 0"; else fail "identity (root caller): uid inside is not 0" "uid 0"; fi
	host_id=$(echo "$map" | awk '{print $2}')
	if [ -n "$host_id" ] && [ "$host_id" != 0 ] && [ "$(echo "$map" | awk '{print $3}')" = 1 ]; then
		pass "identity (root caller): uid_map maps one id to host id $host_id (not 0)"
	else fail "identity (root caller): uid_map maps to a non-zero host id" "uid_map '$map'"; fi
else
	eq "identity: uid inside equals caller's uid" "$in_uid" "$ME"
	eq "identity: gid inside equals caller's gid" "$in_gid" "$MYGID"
	eq "identity: uid_map is exactly '$ME $ME 1'" "$map" "$ME $ME 1"
fi
eq "identity: file written in workspace owned on host by workspace owner ($(stat -c %u "$WS"))" \
	"$(stat -c %u "$WS/written-by-sandbox" 2>&1)" "$(stat -c %u "$WS")"
rm -f "$WS/written-by-sandbox"
if [ $IS_ROOT -eq 1 ]; then
	BU=$(id -u bertht 2>/dev/null)
	if [ -z "$BU" ]; then fail "identity (root caller): user bertht exists" "no such user"; BU=1001; fi
	WS2=$TOP/ws-bertht; mkdir "$WS2"; chmod 700 "$WS2"; chown bertht:bertht "$WS2"
	br --workspace "$WS2" -- sh -c 'id -u; echo x > f; mkdir d'
	eq "identity (root caller, workspace owned by bertht): uid inside is $BU" "$OUT" "$BU"
	eq "identity (root caller): file written is owned on host by bertht" "$(stat -c %u "$WS2/f" 2>&1)" "$BU"
	eq "identity (root caller): dir created is owned on host by bertht" "$(stat -c %u "$WS2/d" 2>&1)" "$BU"
fi

# ---------------------------------------------------------------- capabilities
br -- sh -c 'grep -E "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):" /proc/self/status'
for c in CapInh CapPrm CapEff CapBnd CapAmb; do
	eq "caps: $c is 0000000000000000" "$(printf '%s\n' "$OUT" | awk -v k="$c:" '$1==k{print $2}')" 0000000000000000
done
eq "caps: NoNewPrivs is 1" "$(printf '%s\n' "$OUT" | awk '$1=="NoNewPrivs:"{print $2}')" 1
eq "caps: Seccomp is 2 (filter)" "$(printf '%s\n' "$OUT" | awk '$1=="Seccomp:"{print $2}')" 2
br -- python3 -c 'import ctypes;libc=ctypes.CDLL(None);print(libc.prctl(27,0,0,0,0))'
eq "caps: securebits == 0xef (NOROOT,NO_SETUID_FIXUP,NO_CAP_AMBIENT_RAISE + all _LOCKED)" "$OUT" 239

# ---------------------------------------------------------------- namespaces
br -- sh -c 'for n in user mnt pid ipc uts net cgroup; do echo "$n $(readlink /proc/self/ns/$n)"; done'
for n in user mnt pid ipc uts net cgroup; do
	inside=$(printf '%s\n' "$OUT" | awk -v n="$n" '$1==n{print $2}')
	host=$(readlink "/proc/self/ns/$n")
	if [ -n "$inside" ] && [ "$inside" != "$host" ]; then pass "ns: $n namespace differs from host ($inside vs $host)"
	else fail "ns: $n namespace differs from host" "inside '$inside' host '$host'"; fi
done
br -- sh -c 'echo $$'
eq "ns: the command (sh -c) has pid 2" "$OUT" 2
br -- hostname
eq "ns: hostname is berth" "$OUT" berth
br -- sh -c 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "'
eq "net: /proc/net/dev lists only lo" "$OUT" lo
br -- python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2)
s.bind(("127.0.0.1", 0)); s.sendto(b"ping", s.getsockname()); print(s.recv(16).decode())'
eq "net: loopback is up (UDP to 127.0.0.1 round-trips)" "$OUT" ping
br -- python3 -c '
import socket
try:
    socket.socket().bind(("127.0.0.1", 0)); print("BOUND")
except OSError as e: print("ERRNO", e.errno)'
eq "net: TCP bind denied by Landlock (EACCES)" "$OUT" "ERRNO 13"

# ---------------------------------------------------------------- pid 1 semantics
br -- sh -c 'exit 7'
eq "pid1: exit status propagated (exit 7)" "$RC" 7
br -- sh -c 'kill -TERM $$'
eq "pid1: killed by SIGTERM -> 143" "$RC" 143
br -- sh -c 'kill -KILL $$'
eq "pid1: killed by SIGKILL -> 137" "$RC" 137
br -- python3 -c '
import os, time
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    if os.fork() == 0:
        time.sleep(0.3)
        os.write(w, b"%d" % os.getppid()); os._exit(0)
    os._exit(0)
os.waitpid(pid, 0)
os.close(w)
ppid = os.read(r, 16).decode()
time.sleep(0.7)
z = 0
for d in os.listdir("/proc"):
    if d.isdigit():
        try: st = open("/proc/%s/stat" % d).read().rsplit(")", 1)[1].split()[0]
        except OSError: continue
        z += st == "Z"
print("PPID", ppid, "ZOMBIES", z)'
eq "pid1: orphan reparented to pid 1 and reaped (no zombies)" "$OUT" "PPID 1 ZOMBIES 0"
br -- sh -c "sleep $SLEEP_ORPHAN >/dev/null 2>&1 & sleep 0.3; exit 0"
sleep 0.3
left=$(pgrep -f "^sleep $SLEEP_ORPHAN\$")
eq "pid1: command exits 0 while a background job runs" "$RC" 0
eq "pid1: orphaned background process killed when the command exits" "$left" ""

# signal forwarding
rm -f "$WS/ready" "$WS/trapped"
"$BERTH" run -- sh -c 'trap "echo got-term > /workspace/trapped; exit 42" TERM; echo ok > /workspace/ready; sleep 60 & wait' \
	</dev/null >/dev/null 2>"$TD/err" &
bp=$!; BGPIDS+=("$bp")
for _ in $(seq 100); do [ -f "$WS/ready" ] && break; sleep 0.05; done
kill -TERM "$bp" 2>/dev/null
wait "$bp"; RC=$?; ERR=$(cat "$TD/err"); OUT=
eq "pid1: SIGTERM to berth forwarded; the command's trap exit status 42 returned" "$RC" 42
eq "pid1: the command's TERM trap ran" "$(cat "$WS/trapped" 2>&1)" got-term
rm -f "$WS/ready" "$WS/trapped"

# berth killed by SIGKILL
"$BERTH" run -- sh -c "sleep $SLEEP_KILL & echo ok > /workspace/ready; wait" </dev/null >/dev/null 2>&1 &
bp=$!; BGPIDS+=("$bp")
for _ in $(seq 100); do [ -f "$WS/ready" ] && pgrep -f "^sleep $SLEEP_KILL\$" >/dev/null && break; sleep 0.05; done
spid=$(pgrep -f "^sleep $SLEEP_KILL\$" | head -n1)
if [ -n "$spid" ]; then pass "sigkill: sandboxed process visible on host before the kill"
else fail "sigkill: sandboxed process visible on host before the kill" "pgrep found no 'sleep $SLEEP_KILL'"; fi
cgdirs=()
if [ -n "$spid" ] && [ $IS_ROOT -eq 1 ]; then
	while IFS=: read -r _ ctl path; do
		case "$path" in */berth-*) ;; *) continue ;; esac
		ctl=${ctl#name=}; [ -z "$ctl" ] && ctl=unified
		for mnt in /sys/fs/cgroup/"$ctl" /sys/fs/cgroup; do
			[ -d "$mnt$path" ] && { cgdirs+=("$mnt$path"); break; }
		done
	done <"/proc/$spid/cgroup"
fi
guard_present_during=$(ls -A "$WS" | grep -cx '\.vscode')
kill -KILL "$bp" 2>/dev/null; wait "$bp" 2>/dev/null
gone=1
for _ in $(seq 40); do pgrep -f "^sleep $SLEEP_KILL\$" >/dev/null || { gone=0; break; }; sleep 0.05; done
ck "sigkill: sandbox processes die within 2 s of berth being SIGKILLed" $gone "still running: $(pgrep -af "^sleep $SLEEP_KILL\$")"
if [ $IS_ROOT -eq 1 ]; then
	if [ ${#cgdirs[@]} -gt 0 ]; then pass "sigkill: run had berth-* cgroup dirs (${#cgdirs[@]})"
	else fail "sigkill: run had berth-* cgroup dirs" "none found in /proc/$spid/cgroup"; fi
	left=""
	for _ in $(seq 40); do
		left=""; for d in "${cgdirs[@]}"; do [ -d "$d" ] && left="$left $d"; done
		[ -z "$left" ] && break; sleep 0.05
	done
	eq "sigkill: the run's berth-* cgroup dirs removed" "$left" ""
fi
eq "sigkill: no guard placeholder in the host workspace during the run (.vscode)" "$guard_present_during" 0
left=""
for _ in $(seq 40); do
	left=$(ls -A "$WS" | grep -xE '\.(vscode|idea|claude|codex|berth|bashrc|bash_profile|bash_login|profile|zshrc|envrc|gitmodules|mcp\.json)' | tr '\n' ' ')
	[ -z "$left" ] && break; sleep 0.05
done
eq "sigkill: no guard placeholders left in the workspace" "$left" ""
rm -f "$WS/ready"

# A guarded name the workspace does not have gets no placeholder (guard.h): during the run it is
# simply absent on the host (a reader fails at once, ENOENT) and inside (below .claude/, .codex/ and
# .vscode/ a file is ENOENT, as agents and editors expect).
PW=$TOP/ph-ws; mkdir "$PW"; chmod 700 "$PW"
"$BERTH" run --workspace "$PW" -- python3 -c '
import os, time
for p in ("/workspace/.claude/settings.json", "/workspace/.codex/config.toml", "/workspace/.vscode/settings.json"):
    try: open(p); print(p, "OPENED", flush=True)
    except OSError as e: print(p, e.errno, flush=True)
open("/workspace/.ph-ready", "w").close(); time.sleep(30)' </dev/null >"$TD/ph.out" 2>"$TD/ph.err" &
php=$!; BGPIDS+=("$php")
for _ in $(seq 100); do [ -e "$PW/.ph-ready" ] && break; sleep 0.05; done
timeout 2 cat "$PW/.envrc" >/dev/null 2>"$TD/ph.cat"; RC=$?
eq "guard: reading a missing .envrc on the host during the run fails at once (exit 1, not 124)" "$RC" 1
has "guard: ... with ENOENT: no placeholder" "$(cat "$TD/ph.cat")" "No such file or directory"
eq "guard: the host workspace holds only what the sandbox wrote during the run" "$(ls -A "$PW" | tr '\n' ' ')" ".ph-ready "
kill "$php" 2>/dev/null; wait "$php" 2>/dev/null
PH=$(cat "$TD/ph.out")
has "guard: .claude/settings.json inside is ENOENT (2)" "$PH" "/workspace/.claude/settings.json 2"
has "guard: .codex/config.toml inside is ENOENT (2)" "$PH" "/workspace/.codex/config.toml 2"
has "guard: .vscode/settings.json inside is ENOENT (2)" "$PH" "/workspace/.vscode/settings.json 2"
eq "guard: nothing but what the sandbox wrote after the run" "$(ls -A "$PW" | tr '\n' ' ')" ".ph-ready "

# ---------------------------------------------------------------- pid 1's command line
# pid 1 is a copy of berth: its argv (host paths, berth's options) is overwritten.
br -- sh -c 'tr "\0" " " </proc/1/cmdline; echo; tr -d "\0" </proc/1/environ | wc -c'
eq "proc: /proc/1/cmdline inside is berth-init, not berth's command line" "$(printf '%s\n' "$OUT" | sed -n 1p | sed 's/ *$//')" "berth-init"
eq "proc: /proc/1/environ inside is all zero bytes (wiped)" "$(printf '%s\n' "$OUT" | sed -n 2p | tr -d ' ')" "0"

# ---------------------------------------------------------------- filesystem
br -- sh -c 'for p in /usr/berth-it /etc/berth-it /bin/berth-it /berth-it; do touch $p 2>&1; done'
for p in /usr /etc /bin /; do
	has "fs: $p is read-only (EROFS)" "$(printf '%s\n' "$OUT" | grep -F "'${p%/}/berth-it'")" "Read-only file system"
done
br -- sh -c 'printf "#!/bin/sh\necho exec-ok\n" > s.sh && chmod +x s.sh && ./s.sh'
eq "fs: /workspace writable and exec allowed" "$OUT" exec-ok
rm -f "$WS/s.sh"
br -- sh -c 'pwd'
eq "fs: command starts in /workspace" "$OUT" /workspace
br -- sh -c 'stat -f -c %T /tmp; stat -c %a /tmp; df -B1 --output=size /tmp | tail -n1 | tr -d " "; echo t > /tmp/t && cat /tmp/t'
eq "fs: /tmp is tmpfs, mode 1777, 1 GiB, writable" "$(echo $OUT)" "tmpfs 1777 1073741824 t"
br --tmp-size 64M -- sh -c 'df -B1 --output=size /tmp "$HOME" | tail -n +2 | tr -d " "'
eq "fs: --tmp-size 64M gives /tmp and HOME 67108864 bytes" "$(echo $OUT)" "67108864 67108864"
br -- sh -c 'echo "$HOME"; echo "$USER"; stat -f -c %T "$HOME"; df -B1 --output=size "$HOME" | tail -n1 | tr -d " "; ls -A "$HOME" | wc -l; echo h > "$HOME/f" && cat "$HOME/f"'
u=$(printf '%s\n' "$OUT" | sed -n 2p)
eq "fs: HOME=/home/\$USER, tmpfs, 1 GiB, empty, writable" "$(echo $OUT)" "/home/$u $u tmpfs 1073741824 0 h"
br -- sh -c 'test -e /root && echo root-visible; ls -A /home'
eq "fs: /root absent and /home holds only the sandbox user's dir" "$OUT" "$u"
br -- sh -c 'echo x > /proc/sys/kernel/hostname' 
has "fs: /proc/sys read-only" "$ERR" "Read-only file system"
br -- sh -c 'touch /sys/berth-it 2>&1; { echo x > /sys/kernel/uevent_helper; } 2>&1; { echo x > /sys/kernel/mm/transparent_hugepage/enabled; } 2>&1; true'
eq "fs: /sys not writable (3 writes fail with EROFS)" "$(printf '%s\n' "$OUT" | grep -c 'Read-only file system')" 3
br -- awk '
	BEGIN { devok["/dev/null"]; devok["/dev/zero"]; devok["/dev/full"]; devok["/dev/random"];
	        devok["/dev/urandom"]; devok["/dev/tty"]; devok["/dev/pts"] }
	{ n++; o = "," $6 ","
	  if (o !~ /,nosuid,/) print "no-nosuid", $5
	  if (o !~ /,nodev,/ && !($5 in devok)) print "no-nodev", $5 }
	END { print "mounts", n }' /proc/self/mountinfo
nm=$(printf '%s\n' "$OUT" | awk '$1=="mounts"{print $2}')
bad=$(printf '%s\n' "$OUT" | grep -v '^mounts ')
if [ "$RC" = 0 ] && [ "${nm:-0}" -ge 10 ] && [ -z "$bad" ]; then pass "fs: all $nm mounts nosuid; nodev except the device nodes"
else fail "fs: all mounts nosuid,nodev" "violations" "$OUT" "$ERR"; fi
br -- sh -c 'ls -A /dev | tr "\n" " "'
eq "fs: /dev holds exactly the expected entries" "$OUT" "fd full null ptmx pts random shm stderr stdin stdout tty urandom zero "
br -- sh -c 'echo x > /dev/null && head -c 4 /dev/zero | od -An -tx1 | tr -d " " && touch /dev/berth-it 2>&1 | grep -c "Read-only"'
eq "fs: /dev/null writable, /dev/zero readable, /dev itself read-only" "$(echo $OUT)" "00000000 1"
br -- sh -c 'ls -A /dev/pts | tr "\n" " "; stat -c %d /dev/pts; stat -f -c %T /dev/pts'
eq "fs: /dev/pts is a new devpts instance (only ptmx, other st_dev than host's)" \
	"$(echo $OUT)" "ptmx $(echo $OUT | awk '{print $2}') devpts"
if [ "$(echo $OUT | awk '{print $2}')" != "$(stat -c %d /dev/pts)" ]; then pass "fs: /dev/pts device differs from the host's"
else fail "fs: /dev/pts device differs from the host's" "same st_dev $(stat -c %d /dev/pts)"; fi

# --ro / --rw
RO=$TOP/rosrc; RW=$TOP/rwsrc; mkdir "$RO" "$RW"; echo ro-content >"$RO/f"; chmod 755 "$RO"; chmod 644 "$RO/f"
br --ro "$RO:/mnt/ro" -- sh -c 'cat /mnt/ro/f; echo x > /mnt/ro/g'
eq "--ro: source readable at DST" "$(printf '%s\n' "$OUT" | head -n1)" ro-content
has "--ro: write fails with EROFS" "$ERR" "Read-only file system"
[ -e "$RO/g" ] && fail "--ro: host unchanged" "$RO/g created" || pass "--ro: host unchanged"
br --rw "$RW:/mnt/rw" --yes -- sh -c 'echo rw-content > /mnt/rw/h'
eq "--rw: write inside exits 0" "$RC" 0
eq "--rw: change visible on host" "$(cat "$RW/h" 2>&1)" rw-content
eq "--rw: host file owned by the source owner" "$(stat -c %u "$RW/h" 2>&1)" "$(stat -c %u "$RW")"
# Sources berth may reach but the sandbox identity may not traverse to (a
# 0700 directory of the caller's on the way): root's runs open them in the
# parent (idmapped trees); a user's sandbox runs as the user, who can.
P7=$TOP/private700; mkdir -p "$P7/dir"; echo deep >"$P7/dir/f"; echo file >"$P7/file"; chmod 700 "$P7"
br --ro "$P7/dir:/mnt/d" --ro "$P7/file:/mnt/f" -- sh -c 'cat /mnt/d/f /mnt/f'
eq "--ro: sources under a 0700 directory (dir and file)" "$RC:$(echo $OUT)" "0:deep file"
hasnt "--ro: no /oldroot in messages" "$ERR" "/oldroot"
br --rw / --yes -- true
eq "refused: --rw / exits 2" "$RC" 2
if [[ "$ERR" == berth:* ]] && printf '%s' "$ERR" | grep -q '`/`'; then pass "refused: --rw / message starts with berth: and names /"
else fail "refused: --rw / message starts with berth: and names /" "stderr: $ERR"; fi
br --ro /proc:/x -- true
eq "refused: --ro /proc:/x exits 2" "$RC" 2
has "refused: --ro /proc:/x names /proc" "$ERR" "/proc"
br --workspace /nonexistent-berth-it -- true
eq "refused: --workspace /nonexistent exits 2" "$RC" 2
has "refused: --workspace /nonexistent names it" "$ERR" "/nonexistent-berth-it"
br --no-such-option -- true
eq "refused: unknown option exits 2" "$RC" 2
has "refused: unknown option named" "$ERR" "--no-such-option"
br --memory
eq "refused: --memory without a value exits 2" "$RC" 2
has "refused: says it needs a value (not an unknown option)" "$ERR" "\`--memory\` needs a value"
br --memory abc -- true
eq "refused: --memory abc exits 2" "$RC" 2
has "refused: --memory abc names abc" "$ERR" "abc"
[[ "$ERR" == berth:* ]] && pass "refused: usage message starts with berth:" || fail "refused: usage message starts with berth:" "stderr: $ERR"

# ---------------------------------------------------------------- exit statuses
br -- /nonexistent-berth-it
eq "exit: missing command -> 127" "$RC" 127
br -- /etc/passwd
eq "exit: non-executable command -> 126" "$RC" 126
br --
eq "exit: no command after -- -> 2" "$RC" 2
br
eq "exit: no command at all -> 2" "$RC" 2
t0=$(now_ms); br --timeout 1s -- sleep 30; t1=$(now_ms)
eq "exit: --timeout 1s -> 124" "$RC" 124
el=$((t1 - t0))
if [ "$el" -ge 900 ] && [ "$el" -lt 3500 ]; then pass "exit: --timeout 1s returns after ${el} ms (0.9-3.5 s)"
else fail "exit: --timeout 1s returns in 0.9-3.5 s" "took ${el} ms"; fi

# ---------------------------------------------------------------- environment
export FOO=bar BERTH_IT_SECRET=s3cret
br -- env
names=$(printf '%s\n' "$OUT" | cut -d= -f1 | sort | tr '\n' ' ')
extra=$(printf '%s\n' "$OUT" | cut -d= -f1 | grep -vxE 'PATH|HOME|TERM|LANG|LC_[A-Z_]+|USER|LOGNAME')
eq "env: only PATH HOME TERM LANG LC_* USER LOGNAME (got: $names)" "$extra" ""
hasnt "env: FOO from berth's environment not passed" "$OUT" "FOO="
eq "env: PATH exact" "$(printf '%s\n' "$OUT" | sed -n 's/^PATH=//p')" /usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin
br --env FOO --env X=1 -- env
eq "env: --env FOO passes FOO=bar" "$(printf '%s\n' "$OUT" | grep '^FOO=')" FOO=bar
eq "env: --env X=1 sets X=1" "$(printf '%s\n' "$OUT" | grep '^X=')" X=1
hasnt "env: --env FOO does not leak other variables" "$OUT" BERTH_IT_SECRET
unset FOO BERTH_IT_SECRET

# ---------------------------------------------------------------- workspace guard
GW=$TOP/gitws; mkdir "$GW"; chmod 700 "$GW"
cd "$GW" || exit 1
git init -q . && echo hello > a.txt && echo ORIG > .profile
nhooks=$(ls .git/hooks | wc -l)
br -- sh -c '
r() { "$@" >/dev/null 2>&1; echo "$1 $?"; }
git add a.txt; echo "add $?"
git -c user.name=berth-it -c user.email=it@berth.invalid commit -qm "from-sandbox"; echo "commit $?"
git branch x; echo "branch $?"
( echo "#!/bin/sh" > .git/hooks/pre-commit ) 2>/dev/null; echo "hook $?"
r git config core.hooksPath /tmp
r mv .git .git2
r rm -rf .git/hooks
r ln -sf /tmp/x .bashrc
test -L .bashrc; echo "islink $?"
( mkdir -p .vscode && echo "{}" > .vscode/tasks.json ) 2>/dev/null; echo "vscode $?"
( echo evil >> .profile ) 2>/dev/null; echo "profile $?"
( echo "[submodule]" > .gitmodules ) 2>/dev/null; echo "gitmodules $?"
( mkdir -p .berth && printf "allow:\n  networks: [host]\n" > .berth/rules.yml ) 2>/dev/null; echo "rules $?"
'
st() { printf '%s\n' "$OUT" | awk -v k="$1" '$1==k{print $2}'; }
eq "guard: git add works" "$(st add)" 0
eq "guard: git commit works" "$(st commit)" 0
eq "guard: git branch works" "$(st branch)" 0
for k in hook git mv rm profile; do
	v=$(st "$k")
	if [ -n "$v" ] && [ "$v" != 0 ]; then pass "guard: '$k' write to a guarded path fails (rc $v)"
	else fail "guard: '$k' write to a guarded path fails" "rc '$v'" "$OUT" "$ERR"; fi
done
# Trust names the workspace does not have are made inside and set aside at
# exit (run-trust.sh checks them in detail); .gitmodules is not guarded (git
# ignores the commands it could name, CVE-2019-19604).
for k in ln vscode gitmodules rules; do eq "guard: '$k' write to a name that does not exist works inside" "$(st "$k")" 0; done
eq "guard: .bashrc made a symlink inside" "$(st islink)" 0
for f in .bashrc .vscode/tasks.json .berth/rules.yml; do
	has "guard: $f set aside at exit" "$ERR" "berth: warning: set aside \`$GW/$f\` as \`$(basename "$f").berth-set-aside\`: "
done
eq "guard: the link .bashrc is kept as .bashrc.berth-set-aside" "$(readlink .bashrc.berth-set-aside 2>&1)" /tmp/x
eq "guard: host commit exists" "$(git log --format=%s 2>&1)" from-sandbox
eq "guard: host branch x exists" "$(git branch --list x --format='%(refname:short)' 2>&1)" x
[ ! -e .git/hooks/pre-commit ] && pass "guard: no pre-commit hook on host" || fail "guard: no pre-commit hook on host" "exists"
hasnt "guard: host .git/config has no hooksPath" "$(cat .git/config)" hooksPath
eq "guard: host .git/hooks intact" "$(ls .git/hooks 2>/dev/null | wc -l)" "$nhooks"
[ -d .git ] && [ ! -e .git2 ] && pass "guard: host .git not moved" || fail "guard: host .git not moved" "$(ls -a)"
eq "guard: host .profile unchanged" "$(cat .profile)" ORIG
eq "guard: the host holds what the sandbox wrote, minus what was set aside" "$(ls -A | tr '\n' ' '):$(ls -A .vscode .berth | tr '\n' ' ')" \
	".bashrc.berth-set-aside .berth .git .gitmodules .profile .vscode a.txt :.berth: rules.yml.berth-set-aside  .vscode: tasks.json.berth-set-aside "
br --unprotect .bashrc --yes -- sh -c 'echo "alias ll=ls" > .bashrc'
eq "guard: --unprotect .bashrc allows writing it (rc)" "$RC" 0
eq "guard: --unprotect .bashrc content on host" "$(cat .bashrc 2>&1)" "alias ll=ls"
cd "$WS" || exit 1

# ---------------------------------------------------------------- network
cat >"$TD/srv.py" <<'EOF'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(sys.argv[2], "a") as f: f.write("REQ %s\n" % self.path)
        self.send_response(200); self.end_headers(); self.wfile.write(b"berth-it-ok")
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + ".tmp", "w").write(str(s.server_address[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()
EOF
: >"$TD/srv.log"
"$HOSTPY" "$TD/srv.py" "$TD/port" "$TD/srv.log" </dev/null >/dev/null 2>&1 &
SRVPID=$!
for _ in $(seq 100); do [ -s "$TD/port" ] && break; sleep 0.05; done
PORT=$(cat "$TD/port" 2>/dev/null)
if [ -n "$PORT" ] && curl -s -m 3 "http://127.0.0.1:$PORT/host" | grep -q berth-it-ok; then pass "net: host listener answers on the host (port $PORT)"
else fail "net: host listener answers on the host" "port '$PORT'"; fi
: >"$TD/srv.log"
br -- curl -sS -m 5 "http://127.0.0.1:$PORT/from-sandbox"
if [ "$RC" != 0 ] && [ -z "$OUT" ]; then pass "net: curl to host loopback listener fails (rc $RC)"
else fail "net: curl to host loopback listener fails" "rc $RC" "$OUT"; fi
sleep 0.2
eq "net: listener saw no request" "$(cat "$TD/srv.log")" ""
br --network host --yes -- curl -sS -m 5 "http://127.0.0.1:$PORT/from-host-net"
eq "net: --network host reaches the listener" "$OUT" berth-it-ok
eq "net: listener saw the --network host request" "$(cat "$TD/srv.log")" "REQ /from-host-net"
kill "$SRVPID" 2>/dev/null; wait "$SRVPID" 2>/dev/null; SRVPID=

# ---------------------------------------------------------------- limits
cat >"$WS/fork.py" <<'EOF'
import os, sys, time
kids = []
try:
    for i in range(200):
        p = os.fork()
        if p == 0:
            time.sleep(3); os._exit(0)
        kids.append(p)
    print("NOLIMIT", len(kids))
except OSError as e:
    print("ERRNO", e.errno)
for k in kids:
    os.kill(k, 9)
for k in kids:
    os.waitpid(k, 0)
EOF
br --pids 20 -- python3 fork.py
eq "limits: --pids 20 fork loop fails with EAGAIN" "$OUT" "ERRNO 11"
br -- python3 fork.py
eq "limits: default pids (512) allows 200 forks" "$OUT" "NOLIMIT 200"
rm -f "$WS/fork.py"
br --nofile 64 -- sh -c 'ulimit -n'
eq "limits: --nofile 64 -> ulimit -n 64" "$OUT" 64
br -- sh -c 'ulimit -n'
eq "limits: default nofile 8192" "$OUT" 8192
br --memory 64M -- python3 -c 'b = bytearray(512 * 1024 * 1024); print("ALLOC_OK")'
if [ "$IS_ROOT" -eq 0 ] && [ "$RC" = 2 ]; then
	# no cgroup for this user: refused, never an RLIMIT_AS (tests/integration/run-limits.sh)
	has "limits: --memory 64M without a cgroup is refused (exit 2)" "$ERR" "--memory \`64M\` cannot be enforced"
elif [ "$RC" = 137 ] && [ -z "$OUT" ]; then
	pass "limits: --memory 64M kills a 512 MiB allocation (cgroup, rc 137)"
else fail "limits: --memory 64M stops a 512 MiB allocation" "rc $RC" "$OUT" "$ERR"; fi
br -- python3 -c 'b = bytearray(512 * 1024 * 1024); print("ALLOC_OK")'
eq "limits: default memory allows the 512 MiB allocation" "$OUT" ALLOC_OK

# ---------------------------------------------------------------- dry-run
br --dry-run --json -- true; j1=$OUT; r1=$RC
br --dry-run --json -- true; j2=$OUT
# without a cgroup --memory needs --allow-degraded (run-limits.sh): then compare with that alone
MEMOK=(); "$BERTH" run --dry-run --memory 1G -- true 2>&1 >/dev/null | grep -q "cannot be enforced" && MEMOK=(--allow-degraded)
br --dry-run --json "${MEMOK[@]}" -- true; j0=$OUT
br --dry-run --json "${MEMOK[@]}" --memory 1G -- true; j3=$OUT
br --dry-run -- true; txt=$OUT
d1=$(printf '%s' "$j1" | grep -oE '"sha256:[0-9a-f]{64}"' | head -n1)
d0=$(printf '%s' "$j0" | grep -oE '"sha256:[0-9a-f]{64}"' | head -n1)
d3=$(printf '%s' "$j3" | grep -oE '"sha256:[0-9a-f]{64}"' | head -n1)
eq "dry-run: exits 0" "$r1" 0
if [ -n "$d1" ] && printf '%s' "$j1" | "$HOSTPY" -c 'import json,sys; json.load(sys.stdin)' 2>/dev/null; then
	pass "dry-run: valid JSON with a sha256:<64 hex> digest"
else fail "dry-run: valid JSON with a sha256:<64 hex> digest" "output: $j1"; fi
[ -n "$j1" ] && [ "$j1" == "$j2" ] && pass "dry-run: identical across two runs" || fail "dry-run: identical across two runs" "differs"
[ -n "$d3" ] && [ -n "$d0" ] && [ "$d0" != "$d3" ] && pass "dry-run: --memory 1G changes the digest" || fail "dry-run: --memory changes the digest" "$d0 vs $d3"
has "dry-run: text form shows the same digest" "$txt" "${d1//\"/}"
br --dry-run -- sh -c 'echo ran > /workspace/dry-ran'
[ ! -e "$WS/dry-ran" ] && pass "dry-run: command not run" || fail "dry-run: command not run" "file written"

# ------------------------------------------------ limits: --dry-run refuses what the run refuses
# Every limit is checked on the policy (berth_policy_validate): a dry run over
# a limit fails as the real run does (status 2, the same stderr), and neither
# writes an audit record or a run directory (issue 14).
LIM=$TOP/limits; mkdir -p "$LIM/state" "$LIM/audit"; chmod 755 "$LIM"
for i in $(seq 1 65); do mkdir -p "$LIM/src/d$i"; done
chmod -R 755 "$LIM/src"
AH=(); for i in $(seq 1 65); do AH+=(--allow-host "h$i.example.com:*"); done
RO=(); for i in $(seq 1 65); do RO+=(--ro "$LIM/src/d$i:/lim/d$i"); done
PT=(); for i in $(seq 1 33); do PT+=(--allow-host "127.0.0.1:$((21000 + i))"); done
EV=(); for i in $(seq 1 244); do EV+=(--env "V$i=$i"); done
limit_same() { # limit_same DESC MESSAGE ARGS...
	local desc=$1 msg=$2 drc dout derr
	shift 2
	BERTH_AUDIT_DIR=$LIM/audit XDG_STATE_HOME=$LIM/state br --dry-run "$@" -- true
	drc=$RC; derr=$ERR; dout=$OUT
	BERTH_AUDIT_DIR=$LIM/audit XDG_STATE_HOME=$LIM/state br "$@" -- sh -c 'echo RAN'
	eq "limits: $desc: --dry-run is refused (exit 2)" "$drc:$dout" "2:"
	eq "limits: $desc: the run is refused the same (exit 2), nothing ran" "$RC:$OUT" "2:"
	has "limits: $desc: the message names the value and the limit" "$derr" "berth: $msg"
	eq "limits: $desc: the run's stderr is the dry run's" "$ERR" "$derr"
	eq "limits: $desc: no audit record, no run directory" "$(find "$LIM/audit" "$LIM/state" -mindepth 1 | head -3)" ""
}
limit_same "65 --allow-host" "too many --allow-host patterns (65, at most 64)" "${AH[@]}"
limit_same "65 --ro" "too many --ro/--rw mounts (65, at most 64)" "${RO[@]}"
limit_same "33 declared ports" "the allow-host patterns declare more than 32 distinct ports" "${PT[@]}"
limit_same "244 --env with the broker" "too many environment variables for the command: 244 given, and berth passes at most 255 (4 of them its own, 8 the egress broker's)" --allow-host example.invalid "${EV[@]}"
# at the limit: the dry run accepts what the run would
br --dry-run --json "${AH[@]:0:128}" -- true
eq "limits: 64 --allow-host: --dry-run accepts them" "$RC" 0
br --dry-run --json "${RO[@]:0:128}" -- true
eq "limits: 64 --ro: --dry-run accepts them" "$RC" 0
br "${RO[@]:0:128}" -- sh -c 'ls /lim | wc -l'
eq "limits: 64 --ro: the run mounts them all" "$RC:$OUT" "0:64"

# ---------------------------------------------------------------- pty
# script merges berth's own stderr notes into the transcript.  With stdin at EOF,
# script sends VEOF while the outer tty is still canonical; berth then switches it
# to raw mode and reads the pending EOF as a NUL byte, which the inner tty echoes
# as "^@" -- a property of the harness, not of berth, so it is stripped.
pty_out=$(script -qc "'$BERTH' run -- tty" /dev/null </dev/null 2>&1 | tr -d '\r' | sed 's/\^@//g' | grep -v '^berth: ')
eq "pty: under a terminal the command's tty is /dev/pts/0 inside" "$pty_out" /dev/pts/0
script -qec "'$BERTH' run -- sh -c 'test -t 0 && test -t 1'" /dev/null </dev/null >/dev/null 2>&1; RC=$?
eq "pty: stdin and stdout are terminals under script" "$RC" 0
br -- sh -c 'test -t 0'
eq "pty: without a terminal, stdin is not a tty" "$RC" 1

# ---------------------------------------------------------------- degraded features
DW=$TOP/degws; mkdir "$DW"; chmod 755 "$DW"
for f in landlock seccomp userns; do
	BERTH_TEST_FORCE_OFF=$f br --workspace "$DW" -- true
	eq "degraded: FORCE_OFF=$f refused with 125" "$RC" 125
	case $f in userns) word="user namespaces" ;; *) word=$f ;; esac
	has "degraded: FORCE_OFF=$f refusal names the feature" "$ERR" "$word"
done
BERTH_TEST_FORCE_OFF=landlock br --workspace "$DW" --allow-degraded --yes -- python3 -c '
import socket
try:
    socket.socket().bind(("127.0.0.1", 0)); print("BOUND")
except OSError as e: print("ERRNO", e.errno)'
eq "degraded: FORCE_OFF=landlock --allow-degraded runs" "$RC" 0
has "degraded: stderr says not enforced: landlock" "$ERR" "not enforced: landlock"
eq "degraded: landlock really off (TCP bind allowed)" "$OUT" BOUND
BERTH_TEST_FORCE_OFF=seccomp br --workspace "$DW" --allow-degraded --yes -- sh -c 'grep "^Seccomp:" /proc/self/status'
eq "degraded: FORCE_OFF=seccomp --allow-degraded runs" "$RC" 0
has "degraded: stderr says not enforced: seccomp" "$ERR" "not enforced: seccomp"
eq "degraded: seccomp really off (Seccomp 0)" "$(echo $OUT)" "Seccomp: 0"
BERTH_TEST_FORCE_OFF=userns br --workspace "$DW" --allow-degraded --yes -- sh -c 'readlink /proc/self/ns/user; grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status | tr -d "\t"; id -u'
eq "degraded: FORCE_OFF=userns --allow-degraded runs" "$RC" 0
has "degraded: stderr says not enforced: user ... namespaces" "$ERR" "not enforced: user"
eq "degraded: userns really off (host user namespace)" "$(printf '%s\n' "$OUT" | sed -n 1p)" "$(readlink /proc/self/ns/user)"
eq "degraded: userns off still drops caps, sets NNP and seccomp" "$(printf '%s\n' "$OUT" | sed -n '2,4p' | tr '\n' ' ')" "CapEff:0000000000000000 NoNewPrivs:1 Seccomp:2 "
if [ "$(printf '%s\n' "$OUT" | sed -n 5p)" != 0 ] && [ -n "$(printf '%s\n' "$OUT" | sed -n 5p)" ]; then pass "degraded: userns off, command does not run as host root"
else fail "degraded: userns off, command does not run as host root" "uid '$(printf '%s\n' "$OUT" | sed -n 5p)'"; fi

# Without a pid namespace nothing ends with pid 1: what the command left behind (setsid, a double fork)
# is adopted by berth's pid 1 (a child subreaper) and killed when the command ends.
MARK=$((RANDOM * 32768 + RANDOM))
BERTH_TEST_FORCE_OFF=userns br --workspace "$DW" --allow-degraded --yes -- sh -c "setsid sleep 3$MARK.1 & (setsid sh -c 'sleep 3$MARK.2 & sleep 3$MARK.3' &); sleep 0.2; exit 3"
eq "degraded: a command that left setsid and double-forked children behind: its status" "$RC" 3
for _ in 1 2 3 4 5 6 7 8 9 10; do pgrep -f "sleep 3$MARK" >/dev/null || break; sleep 0.1; done
eq "degraded: nothing it started outlives the run" "$(pgrep -f "sleep 3$MARK" | wc -l)" 0
pkill -f "sleep 3$MARK" 2>/dev/null

# The kernel itself refuses the user namespace (not the test switch): an
# unprivileged caller inside `unshare -U` with no uid map cannot create one
# (EPERM).  berth has no probe child; its own clone must fail closed.
if [ "$IS_ROOT" -eq 0 ]; then
	unshare -U "$BERTH" run --workspace "$DW" -- true </dev/null >"$TD/out" 2>"$TD/err"; RC=$?; ERR=$(cat "$TD/err")
	eq "userns refused by the kernel: berth refuses with 125" "$RC" 125
	has "userns refused by the kernel: names the feature" "$ERR" "cannot create a user namespace: berth refuses"
	has "userns refused by the kernel: names the cause, the unmapped user namespace around berth" "$ERR" "berth runs in a user namespace that maps no uid for it"
	hasnt "userns refused by the kernel: no sysctl this kernel does not have" "$ERR" "unprivileged_userns_clone"
	unshare -U "$BERTH" run --workspace "$DW" --allow-degraded --yes -- sh -c 'echo RAN' </dev/null >"$TD/out" 2>"$TD/err"; RC=$?
	OUT=$(cat "$TD/out"); ERR=$(cat "$TD/err")
	eq "userns refused by the kernel: --allow-degraded runs without" "$RC:$OUT" "0:RAN"
	has "userns refused by the kernel: --allow-degraded says why" "$ERR" "no user namespace: Operation not permitted"
	eq "userns refused by the kernel: notices printed once" "$(printf '%s\n' "$ERR" | grep -c '^berth: limits:')" 1
fi

# ------------------------------------------ a security module above berth
# berth started by a Landlocked process (an agent that sandboxed itself):
# the user namespace is made, every mount in it refused (EPERM).  The
# message names Landlock and what to do, and suggests neither idmapped
# mounts nor --allow-degraded.  The wrapper handles file access but allows
# all of it below /, so only the mount restriction bites.
cat >"$TD/llwrap.py" <<'PY'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class Attr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]
class PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]
ACCESS = (1 << 13) - 1  # Landlock ABI 1: every file access right
attr = Attr(ACCESS)
fd = libc.syscall(444, ctypes.byref(attr), ctypes.sizeof(attr), 0)  # landlock_create_ruleset
if fd < 0:
    sys.exit("landlock_create_ruleset: " + os.strerror(ctypes.get_errno()))
pb = PathBeneath(ACCESS, os.open("/", os.O_PATH))
if libc.syscall(445, fd, 1, ctypes.byref(pb), 0) < 0:  # landlock_add_rule, PATH_BENEATH
    sys.exit("landlock_add_rule: " + os.strerror(ctypes.get_errno()))
if libc.prctl(38, 1, 0, 0, 0) < 0 or libc.syscall(446, fd, 0) < 0:  # NO_NEW_PRIVS, restrict_self
    sys.exit("landlock_restrict_self: " + os.strerror(ctypes.get_errno()))
os.execv(sys.argv[1], sys.argv[1:])
PY
cd "$WS" || exit 1
/usr/bin/python3 "$TD/llwrap.py" "$BERTH" run -- true </dev/null >"$TD/out" 2>"$TD/err"
RC=$?; OUT=$(cat "$TD/out"); ERR=$(cat "$TD/err")
eq "landlocked caller: berth refuses (125)" "$RC" 125
has "landlocked caller: the step and its errno" "$ERR" "berth: cannot make the mount tree a slave: Operation not permitted"
has "landlocked caller: the hint names Landlock" "$ERR" "berth: hint: a Landlock domain above berth refused mounting inside the new user namespace"
has "landlocked caller: ... and the fix" "$ERR" "start berth from a process that is not Landlocked"
if [ "$(id -u)" = 0 ]; then has "landlocked caller: ... even as root" "$ERR" "even as root"
else has "landlocked caller: ... even as the namespace's owner" "$ERR" "even as the owner of its own namespace"; fi
hasnt "landlocked caller: no idmapped-mount hint" "$ERR" "idmapped"
hasnt "landlocked caller: no --allow-degraded hint" "$ERR" "allow-degraded"
# berth doctor there: the clone works, the namespace is useless; it says so
/usr/bin/python3 "$TD/llwrap.py" "$BERTH" doctor </dev/null >"$TD/out" 2>"$TD/err"
RC=$?; OUT=$(cat "$TD/out"); ERR=$(cat "$TD/err")
eq "landlocked caller: doctor fails (1)" "$RC" 1
has "landlocked caller: doctor says mounting is refused" "$OUT" "user namespaces  can create a user namespace, but mounting in it is refused: Operation not permitted"
has "landlocked caller: doctor's fix names Landlock" "$OUT" "fix: a Landlock domain above berth refused mounting"
"$BERTH" doctor </dev/null >"$TD/out" 2>&1
eq "doctor outside a Landlock domain: user namespaces fine" "$(grep -c 'user namespaces  can create a user namespace$' "$TD/out")" 1

echo "1..$T"
[ "$FAILS" -eq 0 ] || { echo "# $FAILS of $T checks failed"; exit 1; }
exit 0
