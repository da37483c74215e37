#!/usr/bin/env bash
# On-demand grants, `berth run --ask` (docs/ask.md), on real programs
# (python3, cat, curl) with an approver that answers through `berth approve`
# and `berth deny` from another process, as a human at another shell would:
# a grant hands in exactly the approved file (its bytes), a write grant
# writes the host file, --always answers the same path again without a new
# ask, a denial and a timed-out ask give the errno a run without --ask gives
# and the BERTH CAPABILITY DENIAL block on the caller's stderr; a symbolic
# link swapped in between the ask and the grant (the file itself, or a
# directory on its path) opens nothing; a path the sandbox rewrites in its
# memory after the ask changes nothing; the audit trail has ask,
# ask.decision and run.stop's "ask" counts; --dry-run takes --ask; without --ask no
# listener is installed.
#
# usage: run-ask.sh /path/to/berth
# Works as root and as an unprivileged user.  Output is TAP.
set -u
export LC_ALL=C
B=${1:?usage: $0 /path/to/berth}
T=$(mktemp -d "${TMPDIR:-/tmp}/ask.XXXXXX")
H=$(mktemp -d /var/tmp/berth-ask.XXXXXX) # host files outside the sandbox's view
export XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config" XDG_RUNTIME_DIR="$T/run"
unset BERTH_AUDIT_DIR
mkdir -p "$XDG_RUNTIME_DIR" "$T/ws" && chmod 0700 "$XDG_RUNTIME_DIR"
trap '[ -n "${KEEP:-}" ] || rm -rf "$T" "$H"' EXIT
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { # check NAME CONDITION-STATUS [DETAIL-FILE]
	if [ "$2" = 0 ]; then ok "$1"; else
		not_ok "$1"
		[ -n "${3:-}" ] && sed 's/^/# /' "$3" | head -n 40
	fi
}
has() { grep -qF -- "$1" "$2"; }
cd "$T/ws" || exit 1

# run NAME [berth-run-args...] -- COMMAND: no controlling terminal (setsid),
# so the asks go to the control socket only; out/err in $T/NAME.{out,err}
run() {
	local name=$1
	shift
	setsid -w "$B" run --workspace "$T/ws" "$@" </dev/null >"$T/$name.out" 2>"$T/$name.err"
	echo $? >"$T/$name.rc"
}
# approver NAME N VERB [ARGS] [-- PRE-COMMAND]: waits for ask N in
# $T/NAME.err, runs PRE-COMMAND, then `berth VERB RUN N ARGS`
approver() {
	local name=$1 num=$2 verb=$3 args=() pre="" line run i
	shift 3
	while [ $# -gt 0 ]; do
		if [ "$1" = -- ]; then shift; pre="$*"; break; fi
		args+=("$1")
		shift
	done
	for i in $(seq 200); do
		line=$(grep -m1 -o "ask $num of run [0-9a-f]*" "$T/$name.err" 2>/dev/null) && break
		sleep 0.05
	done
	run=${line##* }
	echo "$run" >"$T/$name.run"
	[ -n "$pre" ] && eval "$pre"
	"$B" "$verb" "$run" "$num" "${args[@]}" >"$T/$name.ans" 2>&1
	echo $? >"$T/$name.ansrc"
}

printf 'APPROVED-CONTENT\n' >"$H/a"
printf 'SECRET\n' >"$H/other"
mkdir "$H/d" "$H/e"
printf 'IN-D\n' >"$H/d/f"
printf 'SECRET-E\n' >"$H/e/f"
chmod -R a+rX "$H"

# ---- without --ask: no listener, no filter of its own
run plain -- sh -c 'grep Seccomp_filters /proc/self/status; cat '"$H"'/a; echo "rc=$?"'
run asked --ask --ask-timeout 300ms -- sh -c 'grep Seccomp_filters /proc/self/status'
p=$(awk '/Seccomp_filters/{print $2}' "$T/plain.out")
a=$(awk '/Seccomp_filters/{print $2}' "$T/asked.out")
check "without --ask no listener's filter is loaded ($p filters), with it one more ($a)" \
	"$([ -n "$p" ] && [ "$a" = $((p + 1)) ]; echo $?)" "$T/asked.err"
check "without --ask the out-of-view read is ENOENT at once, no ask" \
	"$(has 'No such file or directory' "$T/plain.err" && has 'rc=1' "$T/plain.out" && ! has 'ask 1' "$T/plain.err"; echo $?)" "$T/plain.err"

# ---- python3: a granted read is the approved file's bytes
approver py 1 approve &
run py --ask -- python3 -c 'import sys; sys.stdout.write(open("'"$H"'/a").read())'
wait
check "python3: a granted read hands in the approved file (its bytes exactly)" \
	"$([ "$(cat "$T/py.out")" = APPROVED-CONTENT ] && [ "$(cat "$T/py.rc")" = 0 ] && ! has 'BERTH CAPABILITY DENIAL' "$T/py.err"; echo $?)" "$T/py.err"
check "berth approve exits 0" "$([ "$(cat "$T/py.ansrc")" = 0 ]; echo $?)" "$T/py.ans"
run_py=$(cat "$T/py.run")
check "the ask line names the run, the program, the access and the path" \
	"$(grep -q "ask 1 of run $run_py: python3 (pid [0-9]*) wants to read $H/a" "$T/py.err"; echo $?)" "$T/py.err"
"$B" audit --run "$run_py" --json >"$T/py.audit" 2>&1
check "the audit trail: ask, ask.decision (granted, by berth approve) and run.stop's ask counts" \
	"$(python3 - "$T/py.audit" <<'EOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
kinds = [r.get("kind") for r in recs]
d = [r["payload"] for r in recs if r.get("kind") == "ask.decision"]
s = [r["payload"]["ask"] for r in recs if r.get("kind") == "run.stop"]
ok = "ask" in kinds and len(d) == 1 and d[0]["decision"] == "granted" and d[0]["by"] == "berth approve" \
    and len(s) == 1 and s[0]["asks"] == 1 and s[0]["granted"] == 1 and s[0]["kinds"]["fs.read"] == 1
sys.exit(0 if ok else 1)
EOF
echo $?)" "$T/py.audit"

# ---- cat: a denial is the policy's errno, with the block on cat's stderr
approver cat 1 deny &
run cat --ask -- cat "$H/a"
wait
check "cat: a denied read fails as without --ask (ENOENT, exit 1)" \
	"$([ "$(cat "$T/cat.rc")" = 1 ] && has "cat: $H/a: No such file or directory" "$T/cat.err" && [ ! -s "$T/cat.out" ]; echo $?)" "$T/cat.err"
check "cat: the BERTH CAPABILITY DENIAL block is on its stderr, before its error" \
	"$(awk '/BERTH CAPABILITY DENIAL/{b=NR} /No such file/{e=NR} END{exit !(b && e && b < e)}' "$T/cat.err" &&
		has "denied: openat(2) on $H/a for reading (ENOENT: no such file or directory)" "$T/cat.err" &&
		has "denied-by: a human (berth deny)" "$T/cat.err" && has "fix: --ro $H/a" "$T/cat.err"; echo $?)" "$T/cat.err"

# ---- a timed-out ask is a denial with the exact errno
start=$(date +%s%N)
run timeout --ask --ask-timeout 500ms -- python3 -c '
try:
    open("'"$H"'/a")
except OSError as e:
    print("errno", e.errno)'
ms=$((($(date +%s%N) - start) / 1000000))
run timeout0 -- python3 -c '
try:
    open("'"$H"'/a")
except OSError as e:
    print("errno", e.errno)'
check "a timed-out ask: errno 2 (ENOENT), as the run without --ask ($(cat "$T/timeout0.out")), after the deadline (${ms} ms)" \
	"$([ "$(cat "$T/timeout.out")" = "errno 2" ] && [ "$(cat "$T/timeout0.out")" = "errno 2" ] && [ "$ms" -ge 500 ] &&
		has 'denied-by: no answer in 500 ms (--ask-timeout)' "$T/timeout.err"; echo $?)" "$T/timeout.err"

# ---- a write grant writes the host file; --always answers the next ask
printf 'host\n' >"$H/w"
chmod a+rw "$H/w"
approver write 1 approve --always &
run write --ask -- python3 -c '
for i in range(2):
    with open("'"$H"'/w", "a") as f:
        f.write("from-sandbox\n")
print("done")'
wait
check "python3: a write grant appends to the host file; --always grants the second open without an ask" \
	"$([ "$(cat "$T/write.out")" = done ] && [ "$(cat "$H/w")" = "$(printf 'host\nfrom-sandbox\nfrom-sandbox')" ] &&
		! has 'ask 2 of run' "$T/write.err"; echo $?)" "$T/write.err"

# ---- curl: file:// through a grant
approver curl 1 approve &
run curl --ask -- curl -sS "file://$H/a"
wait
check "curl: file:// of a granted path reads the approved file" \
	"$([ "$(cat "$T/curl.out")" = APPROVED-CONTENT ]; echo $?)" "$T/curl.err"

# ---- a symbolic link swapped in between the ask and the grant
approver swap 1 approve -- 'mv "$H/a" "$H/a.real"; ln -s other "$H/a"' &
run swap --ask -- python3 -c '
import sys
try:
    sys.stdout.write(open("'"$H"'/a").read())
except OSError as e:
    print("errno", e.errno)'
wait
check "a symlink swapped in before the grant: nothing is opened (ELOOP), no byte of the link's target read" \
	"$([ "$(cat "$T/swap.out")" = "errno 40" ] && ! has SECRET "$T/swap.out"; echo $?)" "$T/swap.out"
rm -f "$H/a"
mv "$H/a.real" "$H/a"
approver swapdir 1 approve -- 'mv "$H/d" "$H/d.real"; ln -s e "$H/d"' &
run swapdir --ask -- python3 -c '
import sys
try:
    sys.stdout.write(open("'"$H"'/d/f").read())
except OSError as e:
    print("errno", e.errno)'
wait
check "a directory on the path swapped for a symlink before the grant: nothing is opened" \
	"$([ "$(cat "$T/swapdir.out")" = "errno 40" ] && ! has SECRET "$T/swapdir.out"; echo $?)" "$T/swapdir.out"
rm -f "$H/d"
mv "$H/d.real" "$H/d"

# ---- the path rewritten in the sandbox's memory after the ask
# ---- a read grant is read-only to the inode too: its metadata cannot be
# changed through it (fchmod, utimes, setxattr: EROFS), the host file keeps
# its mode
printf 'META\n' >"$H/meta" && chmod 0644 "$H/meta"
approver meta 1 approve &
run meta --ask -- python3 -c '
import os
fd = os.open("'"$H"'/meta", os.O_RDONLY)
for name, f in [("fchmod", lambda: os.fchmod(fd, 0o666)), ("utime", lambda: os.utime(fd, (0, 0))),
                ("setxattr", lambda: os.setxattr(fd, "user.berth", b"1"))]:
    try:
        f(); print(name, "changed")
    except OSError as e:
        print(name, e.errno)
print(os.read(fd, 5).decode())
'
wait
check "a read grant cannot change the host file's mode, times or attributes (EROFS), and reads it" \
	"$([ "$(cat "$T/meta.out")" = "$(printf 'fchmod 30\nutime 30\nsetxattr 30\nMETA')" ] && [ "$(stat -c %a "$H/meta")" = 644 ]; echo $?)" "$T/meta.out"

# ---- a FIFO approved: looked up (O_PATH) and refused, never opened (an open
# would release a writer blocked in its open(2) outside)
mkfifo "$H/fifo" && chmod a+rw "$H/fifo"
( exec 3>"$H/fifo"; echo opened >"$H/fifo.marker"; sleep 2 ) &
fifo_writer=$!
approver fifo 1 approve &
run fifo --ask -- cat "$H/fifo"
wait $!
sleep 0.3
check "an approved FIFO is refused (ENXIO) without being opened: its writer outside still waits" \
	"$([ ! -e "$H/fifo.marker" ] && has 'ENXIO' "$T/fifo.err" && [ "$(cat "$T/fifo.rc")" != 0 ]; echo $?)" "$T/fifo.err"
kill $fifo_writer 2>/dev/null
wait $fifo_writer 2>/dev/null

# ---- the limit tells nothing: past it, a path the host has and one it has
# not both get the limit's block (else the block would be a silent oracle
# of which host paths exist)
run oracle --ask --ask-timeout 100ms -- python3 -c '
import os, sys
for i in range(22):
    try: os.open("'"$H"'/other", os.O_RDONLY)
    except OSError: pass
sys.stderr.write("PROBE\n"); sys.stderr.flush()
for p in ["'"$H"'/other", "'"$H"'/not-there"]:
    try: os.open(p, os.O_RDONLY)
    except OSError as e: print(p, e.errno)
'
sed -n '/^PROBE$/,$p' "$T/oracle.err" >"$T/oracle.tail"
check "past the ask limit a missing host path gets the same ENOENT and limit block as a present one" \
	"$([ "$(grep -c '^BERTH CAPABILITY DENIAL' "$T/oracle.tail")" = 2 ] && has "$H/not-there 2" "$T/oracle.out" && has "$H/other 2" "$T/oracle.out"; echo $?)" "$T/oracle.tail"

approver mem 1 approve -- 'sleep 0.6' &
run mem --ask -- python3 -c '
import ctypes, os, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(b"'"$H"'/a".ljust(200, b"\0"))
def flip():
    time.sleep(0.3)  # the ask is made by then: the path now names the other file
    ctypes.memmove(buf, b"'"$H"'/other\0", len(b"'"$H"'/other") + 1)
threading.Thread(target=flip).start()
fd = libc.open(buf, os.O_RDONLY)
if fd < 0:
    print("errno", ctypes.get_errno())
else:
    sys.stdout.write(os.read(fd, 100).decode())'
wait
check "a path the sandbox rewrites after the ask: the approved file is opened, not the new one" \
	"$([ "$(cat "$T/mem.out")" = APPROVED-CONTENT ]; echo $?)" "$T/mem.out"
check "... and the rewritten path was never asked" "$(! has 'ask 2 of run' "$T/mem.err"; echo $?)" "$T/mem.err"

# ---- what the sandbox's view answers is never asked
run inview --ask --ask-timeout 200ms -- sh -c 'cat /etc/hostname >/dev/null && echo x >/tmp/x && cat /tmp/x && echo y > y && cat y && cat /nonexistent/f 2>/dev/null; echo done'
check "reads of system directories, /tmp, the workspace and paths the host lacks are never asked" \
	"$([ "$(cat "$T/inview.out")" = "$(printf 'x\ny\ndone')" ] && ! has 'ask 1' "$T/inview.err"; echo $?)" "$T/inview.err"

# ---- `//tmp/F` is the sandbox's /tmp/F: never asked, never the host's /tmp/F
# (a host file of that name exists: the old code asked, and a grant handed it in)
HT=$(mktemp /tmp/berth-ask-hosttmp.XXXXXX) && printf 'HOST-TMP\n' >"$HT" && chmod a+r "$HT"
approver slashes 1 approve &
approver_pid=$!
run slashes --ask --ask-timeout 2s -- sh -c 'echo in-sandbox >'"$HT"'; cat /'"$HT"'; cat //etc/hostname >/dev/null && echo sys-ok'
kill $approver_pid 2>/dev/null
wait $approver_pid 2>/dev/null
check "//tmp/F and //etc/F are the sandbox's view: no ask, the sandbox's own file, never the host's" \
	"$([ "$(cat "$T/slashes.out")" = "$(printf 'in-sandbox\nsys-ok')" ] && ! has 'ask 1' "$T/slashes.err" && [ "$(cat "$HT")" = HOST-TMP ]; echo $?)" "$T/slashes.err"
rm -f "$HT"

# ---- the terminal: a prompt on berth's controlling terminal when its stdin
# is not that terminal; y grants, n denies (the block on the caller's stderr)
term() { # term ANSWER OUT: berth in a pty of its own (its controlling terminal), stdin /dev/null
	python3 - "$B" "$T/ws" "$H/a" "$1" >"$2" 2>&1 <<'EOF2'
import os, pty, select, sys, time
berth, ws, path, answer = sys.argv[1:5]
pid, fd = pty.fork()
if pid == 0:
    os.execvp("sh", ["sh", "-c", 'exec "$0" run --workspace "$1" --ask -- cat "$2" </dev/null', berth, ws, path])
out, sent, end = b"", False, time.time() + 20
while time.time() < end:
    r, _, _ = select.select([fd], [], [], 0.2)
    if r:
        try:
            d = os.read(fd, 4096)
        except OSError:
            break
        if not d:
            break
        out += d
    if not sent and b"denied in 60 s: " in out:
        os.write(fd, answer.encode() + b"\n")
        sent = True
_, st = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
print("status", os.waitstatus_to_exitcode(st))
EOF2
}
term y "$T/termy"
check "the terminal: a prompt on berth's controlling terminal; y hands the file in" \
	"$(has "wants to read $H/a, outside the sandbox's view" "$T/termy" && has 'APPROVED-CONTENT' "$T/termy" && has 'status 0' "$T/termy"; echo $?)" "$T/termy"
term n "$T/termn"
check "the terminal: n denies, the block on cat's stderr, cat's ENOENT (exit 1)" \
	"$(has 'denied-by: a human (terminal)' "$T/termn" && has 'No such file or directory' "$T/termn" && has 'status 1' "$T/termn" && ! has APPROVED "$T/termn"; echo $?)" "$T/termn"

# ---- egress (--network proxy): a request for an undeclared host is held in
# the broker; a grant declares HOST:PORT for the rest of the run
if [ -r /run/berth-test-hosts/env ] && bash "$(dirname "$0")/../netns/hosts.sh" status >/dev/null 2>&1; then
	# shellcheck disable=SC1091
	. /run/berth-test-hosts/env
	approver net 1 approve &
	run net --ask --dns "$BTH_DNS" --allow-host "web.$BTH_ZONE" -- sh -c \
		'curl -sS -o /dev/null -w "%{http_code}\n" "http://other.'"$BTH_ZONE"'/"; curl -sS -o /dev/null -w "%{http_code}\n" "http://other.'"$BTH_ZONE"'/again"'
	wait
	check "egress: a granted host is reached (200), and declared for the rest of the run (no second ask)" \
		"$([ "$(cat "$T/net.out")" = "$(printf '200\n200')" ] && has "wants to connect to other.$BTH_ZONE:80" "$T/net.err" && ! has 'ask 2 of run' "$T/net.err"; echo $?)" "$T/net.err"
	approver netd 1 deny &
	run netd --ask --dns "$BTH_DNS" --allow-host "web.$BTH_ZONE" -- curl -sS -o /dev/null -w "%{http_code}\n" "http://other.$BTH_ZONE/"
	wait
	check "egress: a denied host is refused by the broker (403), named" \
		"$([ "$(cat "$T/netd.out")" = 403 ] && has "refused: other.$BTH_ZONE:80 (not declared; not granted (berth run --ask))" "$T/netd.err"; echo $?)" "$T/netd.err"
	run nett --ask --ask-timeout 300ms --dns "$BTH_DNS" --allow-host "web.$BTH_ZONE" -- curl -sS -o /dev/null -w "%{http_code}\n" "http://other.$BTH_ZONE/"
	check "egress: a timed-out ask is a refusal (403)" \
		"$([ "$(cat "$T/nett.out")" = 403 ] && has 'ask 1: denied connecting to' "$T/nett.err"; echo $?)" "$T/nett.err"
	"$B" audit --run "$(cat "$T/net.run")" --kind ask --json >"$T/net.audit" 2>&1
	check "egress: the ask is recorded (access connect, the address)" \
		"$(grep -q '"access":"connect"' "$T/net.audit" && grep -q "\"address\":\"other.$BTH_ZONE:80\"" "$T/net.audit"; echo $?)" "$T/net.audit"
else
	for what in "a granted host" "a denied host" "a timed-out ask" "the ask recorded"; do
		n=$((n + 1))
		echo "ok $n # SKIP egress: $what (the test hosts are not up: tests/netns/hosts.sh up)"
	done
fi

# ---- the commands and flags
"$B" run --ask --dry-run -- true >"$T/dry.out" 2>&1
r1=$?
"$B" run --ask --ask-timeout 5s --dry-run --json -- true >"$T/dryj.out" 2>&1
r2=$?
check "--dry-run takes --ask (text and --json say the deadline)" \
	"$([ $r1 = 0 ] && [ $r2 = 0 ] && has 'ask: on, each ask denied after 60000 ms' "$T/dry.out" && has '"ask":{"timeout_ms":5000}' "$T/dryj.out"; echo $?)" "$T/dry.out"
"$B" run --ask-timeout 5s -- true >"$T/u1" 2>&1
r1=$?
"$B" run --ask --ask-timeout 5ms -- true >"$T/u2" 2>&1
r2=$?
check "--ask-timeout without --ask, or out of range: exit 2, named" \
	"$([ $r1 = 2 ] && [ $r2 = 2 ] && has '--ask-timeout is the deadline of --ask' "$T/u1" && has '--ask-timeout `5ms` is out of range' "$T/u2"; echo $?)" "$T/u2"
"$B" approve "$run_py" 1 >"$T/u3" 2>&1
r1=$?
"$B" approve nothex 1 >"$T/u4" 2>&1
r2=$?
"$B" deny "$run_py" 0 >"$T/u5" 2>&1
r3=$?
check "berth approve of an ended run, a bad run id or ask id: exit 2, named" \
	"$([ $r1 = 2 ] && [ $r2 = 2 ] && [ $r3 = 2 ] && has 'no --ask control socket' "$T/u3" && has '`nothex` is not a run id' "$T/u4" && has '`0` is not an ask id' "$T/u5"; echo $?)" "$T/u3"
approver sock 1 deny -- 'stat -c %a "$XDG_STATE_HOME/berth/runs/$(cat "$T/sock.run")/ask.sock" >"$T/sock.mode"; "$B" asks "$(cat "$T/sock.run")" >"$T/sock.list"; "$B" approve "$(cat "$T/sock.run")" 7 >"$T/sock.no" 2>&1; echo $? >"$T/sock.norc"' &
run sock --ask -- cat "$H/a"
wait
check "the control socket is 0600; berth asks lists the waiting ask; an id that waits for nothing: exit 1" \
	"$([ "$(cat "$T/sock.mode")" = 600 ] && grep -q "^1 read [0-9]* cat [0-9]* $H/a\$" "$T/sock.list" && [ "$(cat "$T/sock.norc")" = 1 ] && has 'ask 7 waits no more' "$T/sock.no"; echo $?)" "$T/sock.list"

"$B" attest "$(cat "$T/sock.run")" --out "$T/att.json" >"$T/att.err" 2>&1 && "$B" attest --verify "$T/att.json" >>"$T/att.err" 2>&1
r1=$?
check "the attestation counts the run's asks by kind and decision (no path), and verifies" \
	"$([ $r1 = 0 ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
a = json.dumps(d)
r = [v for v in d.values() if isinstance(v, dict) and "asks" in v] or [d]
x = r[0].get("asks") if "asks" in r[0] else None
sys.exit(0 if x and x["count"] == 1 and x["denied"] == 1 and x["kinds"] == {"fs.read": 1, "fs.write": 0, "net.connect": 0} and sys.argv[2] not in a else 1)' "$T/att.json" "$H/a"; echo $?)" "$T/att.err"

echo "1..$n"
[ $fails = 0 ]
