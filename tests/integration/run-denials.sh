#!/usr/bin/env bash
# The denial stream (docs/denials.md) on real programs: python3, curl, node
# and git making refused and allowed calls in `berth run --explain`.
#
# As root, with the kernel's audit turned on for the test (and put back as
# it was at the end): the records name the right blocker, path or address
# and fix, in --explain's summary, in the audit trail (`denial` and
# `denial.summary` records) and in the attestation (count and kinds, which
# --verify checks); refusals the kernel does not report (EROFS of /etc or a
# guarded git path, ENOENT of a path outside the view) are not claimed; a
# ruleset the command stacks logs nothing; the trail gets at most 100
# denial records a run; with the audit off, --explain says so.
# As a user: the same calls fail with the same errno, and --explain says
# Landlock's refusals were not seen and why, and claims none.
#
# usage: run-denials.sh /path/to/berth
# Works as root and as an unprivileged user.  Output is TAP.
set -u
export LC_ALL=C
B=${1:?usage: $0 /path/to/berth}
T=$(mktemp -d "${TMPDIR:-/tmp}/denials.XXXXXX")
export XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config" XDG_RUNTIME_DIR="$T/run"
unset BERTH_AUDIT_DIR
mkdir -p "$XDG_RUNTIME_DIR" && chmod 0700 "$XDG_RUNTIME_DIR"
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

# The kernel's audit switch (AUDIT_GET / AUDIT_SET over netlink), root only.
audit_switch() { # audit_switch get | audit_switch set 0|1
	python3 - "$@" <<'EOF'
import socket, struct, sys
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 9)  # NETLINK_AUDIT
s.bind((0, 0))
if sys.argv[1] == "get":
    s.send(struct.pack("=IHHII", 16, 1000, 1, 1, 0))  # AUDIT_GET, NLM_F_REQUEST
    while True:
        d = s.recv(8192)
        if struct.unpack("=H", d[4:6])[0] == 1000:
            print(struct.unpack("=I", d[20:24])[0])
            break
else:
    body = struct.pack("=11I", 1, int(sys.argv[2]), *([0] * 9))  # mask AUDIT_STATUS_ENABLED
    s.send(struct.pack("=IHHII", 16 + len(body), 1001, 5, 1, 0) + body)  # AUDIT_SET, REQUEST|ACK
    d = s.recv(8192)
    err = struct.unpack("=i", d[16:20])[0]
    sys.exit(0 if err == 0 else 1)
EOF
}
root=false
[ "$(id -u)" = 0 ] && root=true
was=""
if $root; then
	was=$(audit_switch get) || was=""
	case "$was" in 0 | 1) ;; *)
		echo "1..1"
		echo "not ok 1 - read the kernel's audit status (AUDIT_GET): \`$was\`"
		exit 1
		;;
	esac
	audit_switch set 1 || { echo "1..1"; echo "not ok 1 - turn the kernel's audit on"; exit 1; }
fi
cleanup() {
	$root && [ -n "$was" ] && audit_switch set "$was"
	rm -rf "$T"
}
trap cleanup EXIT

W=$T/ws
mkdir -p "$W" "$T/secret"
echo key >"$T/secret/id_rsa"
git -C "$W" init -q . && git -C "$W" config user.email t@t && git -C "$W" config user.name t
cd "$W" || exit 1

# run NAME ARGS... -- CMD: berth run --explain; stdout, stderr and status kept.
run() {
	local name=$1
	shift
	"$B" run --explain "$@" >"$T/$name.out" 2>"$T/$name.err"
	echo $? >"$T/$name.rc"
}
last_run() { "$B" attest --last 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["run_id"])'; }
records() { # records RUN KIND: the payloads, one JSON line each
	"$B" audit --run "$1" --kind "$2" --json | python3 -c '
import json, sys
for l in sys.stdin:
    print(json.dumps(json.loads(l)["payload"], sort_keys=True))'
}

# ---- the refused calls, with their exact errno
cat >"$T/probe.py" <<'EOF'
import errno, os, socket, sys
def tr(what, f):
    try:
        f()
        print(what, "ok")
    except OSError as e:
        print(what, errno.errorcode[e.errno])
def conn():
    s = socket.socket()
    s.settimeout(5)
    s.connect(("1.1.1.1", 80))
tr("connect", conn)
tr("etc", lambda: open("/etc/berth-denials-test", "w"))
tr("secret", lambda: open(sys.argv[1], "r"))
tr("mknod", lambda: os.mknod("/tmp/c", 0o600 | 0o020000, os.makedev(1, 3)))
tr("kill1", lambda: os.kill(1, 0))
tr("tmpfile", lambda: open("/tmp/allowed", "w").write("x"))
EOF
cp "$T/probe.py" "$W/probe.py"
run probe -- sh -c 'python3 probe.py '"$T"'/secret/id_rsa; echo x > .git/hooks/pre-commit; echo hook=$?;
	git config user.name y; echo git=$?; curl -sS --max-time 5 http://1.1.1.1/ >/dev/null 2>&1; echo curl=$?;
	node -e "require(\"net\").connect(80,\"1.1.1.1\").on(\"error\",e=>{console.log(\"node\",e.code);process.exit(3)})"'
o=$T/probe.out e=$T/probe.err
check "berth run --explain: the command's status is its own (node's 3)" "$([ "$(cat "$T/probe.rc")" = 3 ]; echo $?)" "$e"
check "python3 connect under --network none: EACCES" "$(has 'connect EACCES' "$o"; echo $?)" "$o"
check "python3 write under /etc: EROFS" "$(has 'etc EROFS' "$o"; echo $?)" "$o"
check "python3 read of a host path outside the view: ENOENT" "$(has 'secret ENOENT' "$o"; echo $?)" "$o"
check "python3 mknod of a device in /tmp: EACCES" "$(has 'mknod EACCES' "$o"; echo $?)" "$o"
check "python3 signal to pid 1 (berth's, outside the domain): EPERM" "$(has 'kill1 EPERM' "$o"; echo $?)" "$o"
check "python3 write in /tmp: allowed" "$(has 'tmpfile ok' "$o"; echo $?)" "$o"
check "a write to the guarded .git/hooks: refused (status 2 of sh's redirection)" "$(has 'hook=2' "$o"; echo $?)" "$o"
check "git config (the guarded .git/config): refused, status 4" "$(has 'git=4' "$o"; echo $?)" "$o"
check "curl under --network none: status 7" "$(has 'curl=7' "$o"; echo $?)" "$o"
check "node connect under --network none: EACCES" "$(has 'node EACCES' "$o"; echo $?)" "$o"
check "nothing is left on the host by the refused calls" \
	"$([ ! -e /etc/berth-denials-test ] && [ ! -s "$W/.git/hooks/pre-commit" ] && ! grep -q 'name = y' "$W/.git/config"; echo $?)"

if $root; then
	for exe in python3 curl node; do
		check "--explain: $exe's connect, by landlock net.connect_tcp, fix --network proxy --allow-host 1.1.1.1:80" \
			"$(grep -A2 "denied (1): net.connect 1.1.1.1 port 80, by landlock net.connect_tcp (/usr/bin/$exe" "$e" |
				grep -qF 'fix: --network proxy --allow-host 1.1.1.1:80'; echo $?)" "$e"
	done
	check "--explain: mknod, by landlock fs.make_char on /tmp, none available (device nodes)" \
		"$(grep -A2 'denied (1): fs.device /tmp, by landlock fs.make_char (/usr/bin/python3' "$e" |
			grep -qF 'fix: none available: device nodes are never made'; echo $?)" "$e"
	check "--explain: the signal, by landlock scope.signal, EPERM, none available" \
		"$(grep -A2 'denied (1): scope.signal pid .* by landlock scope.signal (/usr/bin/python3.*: EPERM)' "$e" |
			grep -qF 'fix: none available'; echo $?)" "$e"
	check "--explain: the totals (5: net.connect 3, fs.device 1, scope.signal 1)" \
		"$(has 'berth: denials: 5 by Landlock (net.connect 3, fs.device 1, scope.signal 1)' "$e"; echo $?)" "$e"
	check "--explain claims no denial the kernel did not report (/etc, the secret, .git, /tmp's allowed file)" \
		"$(! grep -E '^berth: denied .*(/etc|secret|\.git|/tmp/allowed)' "$e"; echo $?)" "$e"
	check "--explain says which refusals it cannot see (the mount view's EROFS and ENOENT)" \
		"$(has 'not in this count: refusals of the mount view (EROFS' "$e"; echo $?)" "$e"
	id=$(last_run)
	records "$id" denial >"$T/recs"
	check "the audit trail: 5 denial records" "$([ "$(wc -l <"$T/recs")" = 5 ]; echo $?)" "$T/recs"
	check "a denial record: blocker, address, port, errno, exe, rule and fix" \
		"$(grep -F '"exe": "/usr/bin/curl"' "$T/recs" | grep -F '"blockers": "net.connect_tcp"' |
			grep -F '"address": "1.1.1.1"' | grep -F '"port": 80' | grep -F '"errno": 13' |
			grep -F '"fix": "--network proxy --allow-host 1.1.1.1:80"' | grep -qF '"rule": "--network none'; echo $?)" "$T/recs"
	records "$id" denial.summary >"$T/sum"
	check "the denial.summary record: seen, count 5, the kernel's own total 5, kinds" \
		"$(grep -F '"landlock": "seen"' "$T/sum" | grep -F '"count": 5' | grep -F '"kernel_total": 5' |
			grep -qF '"kinds": {"fs.device": 1, "net.connect": 3, "scope.signal": 1}'; echo $?)" "$T/sum"
	"$B" attest --last >"$T/att.json" 2>"$T/att.err"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["denials"]; sys.exit(0 if d["count"]==5 and d["kinds"]=={"fs.device":1,"net.connect":3,"scope.signal":1} and d["landlock"]=="seen" else 1)' "$T/att.json"
	check "the attestation: denials count 5 and its kinds" $? "$T/att.json"
	"$B" attest --verify "$T/att.json" >"$T/v.out" 2>&1
	check "berth attest --verify: the record with denials is valid" $? "$T/v.out"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["denials"]["count"]=0; d["denials"]["kinds"]={}; json.dump(d,open(sys.argv[1],"w"))' "$T/att.json"
	"$B" attest --verify "$T/att.json" >"$T/v.out" 2>&1
	check "berth attest --verify: a record whose denial count was edited is INVALID (exit 1)" \
		"$([ $? = 1 ]; echo $?)" "$T/v.out"

	# ---- a run that makes no refused call
	run clean -- python3 -c 'open("/tmp/x","w").write("x")'
	check "a clean run: status 0, 0 denials, no denied line" \
		"$([ "$(cat "$T/clean.rc")" = 0 ] && has 'berth: denials: 0 by Landlock (none)' "$T/clean.err" &&
			! grep -q '^berth: denied' "$T/clean.err"; echo $?)" "$T/clean.err"
	id=$(last_run)
	check "a clean run: no denial record, a summary of 0" \
		"$([ -z "$(records "$id" denial)" ] && records "$id" denial.summary | grep -qF '"count": 0'; echo $?)"

	# ---- a ruleset the command stacks logs nothing (LOG_SUBDOMAINS_OFF)
	run nested -- python3 -c '
import ctypes, errno, os, struct
libc = ctypes.CDLL(None, use_errno=True)
attr = struct.pack("=QQQ", 1 << 8, 0, 0)  # handled: LANDLOCK_ACCESS_FS_MAKE_REG
fd = libc.syscall(444, attr, 24, 0)
assert fd >= 0, ctypes.get_errno()
assert libc.syscall(446, fd, 0) == 0, ctypes.get_errno()
try:
    open("/tmp/nested", "w")
    print("nested ok")
except OSError as e:
    print("nested", errno.errorcode[e.errno])'
	check "a stacked ruleset refuses (EACCES)" "$(has 'nested EACCES' "$T/nested.out"; echo $?)" "$T/nested.out"
	check "a stacked ruleset's refusal is not logged (0 denials)" \
		"$(has 'berth: denials: 0 by Landlock' "$T/nested.err"; echo $?)" "$T/nested.err"

	# ---- the cap: 150 refused connects, 100 records, all counted
	run flood -- python3 -c '
import socket, time
for i in range(150):
    s = socket.socket()
    try: s.connect(("1.1.1.1", 80))
    except OSError: pass
    s.close()
    time.sleep(0.003)  # the kernel drops what its audit backlog (64) cannot hold'
	id=$(last_run)
	records "$id" denial.summary >"$T/sum"
	# The kernel drops records when its audit backlog (64 by default) is
	# full: the domain's own count, at its end, is the truth.
	got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["count"])' "$T/sum" 2>/dev/null)
	got=${got:-0}
	check "150 refused connects: the kernel's own total is 150, and seen + not logged = 150" \
		"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["kernel_total"]==150 and d["count"]+d.get("not_logged",0)==150 else 1)' "$T/sum"; echo $?)" "$T/sum"
	want=$((got < 100 ? got : 100))
	check "150 refused connects: min(seen, 100) = $want denial records, the rest counted (not_recorded $((got - want)))" \
		"$([ "$(records "$id" denial | wc -l)" = "$want" ] && grep -F "\"recorded\": $want" "$T/sum" | grep -qF "\"not_recorded\": $((got - want))"; echo $?)" "$T/sum"
	# On a loaded machine the kernel may drop more than 50 (its backlog):
	# the cap is then not reached, and the line says so.
	[ "$got" -gt 100 ] || echo "# the kernel logged only $got of 150: the cap of 100 was not reached in this run"
	check "150 refused connects: one distinct line, with the count seen" \
		"$(has "denied ($got): net.connect 1.1.1.1 port 80" "$T/flood.err" &&
			{ [ "$got" = 150 ] || has "the kernel counted 150 Landlock denials for this run: $((150 - got)) of them" "$T/flood.err"; }; echo $?)" "$T/flood.err"

	# ---- no Landlock, or no pid namespace of its own: nothing is claimed
	BERTH_TEST_FORCE_OFF=landlock run nolandlock --allow-degraded --yes -- python3 probe.py "$T/secret/id_rsa"
	check "Landlock forced off: mknod EPERM (the capability), and --explain says Landlock is not in force" \
		"$(has 'mknod EPERM' "$T/nolandlock.out" && has "Landlock's not seen: Landlock is not in force for this run" "$T/nolandlock.err" &&
			! grep -q '^berth: denied' "$T/nolandlock.err"; echo $?)" "$T/nolandlock.err"
	# degraded, the sandbox's identity must reach the workspace on the host's tree
	chmod 0711 "$T"
	BERTH_TEST_FORCE_OFF=userns run nouserns --allow-degraded --yes -- python3 probe.py "$T/secret/id_rsa"
	chmod 0700 "$T"
	check "no user namespace (degraded): the connect still EACCES, and --explain claims no domain" \
		"$(has 'connect EACCES' "$T/nouserns.out" && has "Landlock's not seen: the run's Landlock domain was not identified" "$T/nouserns.err" &&
			! grep -q '^berth: denied' "$T/nouserns.err"; echo $?)" "$T/nouserns.err"

	# ---- berth watch RUN: the denials as they are recorded, then the end
	"$B" run -- sh -c 'sleep 1; python3 -c "import socket; socket.socket().connect((\"192.0.2.7\", 443))" 2>/dev/null; sleep 1' \
		>/dev/null 2>&1 &
	bg=$!
	id=""
	for _ in $(seq 1 50); do
		# the run whose policy's command is this one
		id=$("$B" audit --kind policy --json 2>/dev/null | python3 -c '
import json, sys
for l in sys.stdin:
    r = json.loads(l)
    if "192.0.2.7" in " ".join(r["payload"]["policy"]["command"]):
        print(r["run_id"])' 2>/dev/null)
		[ -n "$id" ] && break
		sleep 0.1
	done
	timeout 20 "$B" watch "$id" >"$T/watch.out" 2>&1
	rc=$?
	wait "$bg"
	check "berth watch RUN: the connect's line and fix while the run goes on, exit 0 at its end" \
		"$([ $rc = 0 ] && has 'denied: net.connect 192.0.2.7 port 443, by landlock net.connect_tcp (/usr/bin/python3' "$T/watch.out" &&
			has '  fix: --network proxy --allow-host 192.0.2.7:443' "$T/watch.out" &&
			has 'denials: 1 by Landlock {"net.connect":1}' "$T/watch.out"; echo $?)" "$T/watch.out"
	"$B" watch 0123456789abcdeX >"$T/watch.out" 2>&1
	check "berth watch of neither a run nor a session: exit 2, says so" \
		"$([ $? = 2 ] && has 'is neither a run id' "$T/watch.out"; echo $?)" "$T/watch.out"

	# ---- with the kernel's audit off, --explain says so and claims nothing
	audit_switch set 0
	run off -- python3 probe.py "$T/secret/id_rsa"
	audit_switch set 1
	check "audit off: the same errno (EACCES)" "$(has 'connect EACCES' "$T/off.out"; echo $?)" "$T/off.out"
	check "audit off: --explain says the kernel's audit is off, and lists no denial" \
		"$(has "Landlock's not seen: the kernel's audit is off" "$T/off.err" && ! grep -q '^berth: denied' "$T/off.err"; echo $?)" "$T/off.err"
else
	check "a user: --explain says Landlock's refusals were not seen, and why (CAP_AUDIT_READ)" \
		"$(has "berth: denials: Landlock's not seen: reading the kernel's audit records needs CAP_AUDIT_READ (root)" "$e"; echo $?)" "$e"
	check "a user: --explain claims no denial" "$(! grep -q '^berth: denied' "$e"; echo $?)" "$e"
	id=$(last_run)
	check "a user: no denial record in the audit trail" "$([ -z "$(records "$id" denial)" ]; echo $?)"
	check "a user: the summary record says not seen, count 0" \
		"$(records "$id" denial.summary | grep -F '"landlock": "not seen"' | grep -qF '"count": 0'; echo $?)"
	run clean -- true
	check "a user: a clean run, status 0" "$([ "$(cat "$T/clean.rc")" = 0 ]; echo $?)" "$T/clean.err"
fi

echo "1..$n"
[ "$fails" = 0 ]
