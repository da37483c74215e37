#!/usr/bin/env bash
# `berth oci` on real containers: the OCI lifecycle as conmon and the
# containerd shim drive it (create, start, state, kill, delete, ps), the
# supervisor as the engine's child (a child subreaper waits for it, as
# conmon and the shim do) exiting with the container's status, the
# container's view (its root, env, hostname, ids), the terminal over
# --console-socket, refusals (exit 1, on stderr and in the --log file,
# nothing left behind), and what a SIGKILL leaves (nothing).
#
# usage: run-oci.sh /path/to/berth
# Needs a statically linked busybox (/usr/bin/busybox, Debian's
# busybox-static) for the containers' root, and python3 for the subreaper.
# Works as root and as an unprivileged user.  Output is TAP.
set -u
export LC_ALL=C
B=${1:?usage: $0 /path/to/berth}
BB=${BUSYBOX:-/usr/bin/busybox}
T=$(mktemp -d "${TMPDIR:-/tmp}/oci.XXXXXX")
R=$T/root
export XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config"
trap 'for d in "$R"/*/; do [ -d "$d" ] && "$B" oci --root "$R" delete --force "$(basename "$d")" >/dev/null 2>&1; done; rm -rf "$T"' EXIT
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { # check NAME COND...
	local name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name"; fi
}
show() { sed 's/^/# /' "$@"; }
# alive PID: a process that has not exited (a zombie has: only its parent
# has not reaped it yet)
alive() { [ -r "/proc/$1/stat" ] && ! sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | grep -q '^[ZX]'; }

if ! file -L "$BB" 2>/dev/null | grep -q 'statically linked'; then
	echo "1..0 # SKIP no statically linked busybox at $BB (apt install busybox-static)"
	exit 0
fi

# The containers' root: busybox and a marker the host does not have.
mkdir -p "$T/rootfs/bin" "$T/rootfs/etc" "$T/rootfs/tmp" "$T/ws"
cp "$BB" "$T/rootfs/bin/busybox"
for c in sh cat echo id sleep hostname ls env tty true tr sort; do ln -s busybox "$T/rootfs/bin/$c"; done
echo "the container's own root" >"$T/rootfs/marker"

# bundle NAME ARGS_JSON [EXTRA_PY]: $T/NAME/config.json, a container with
# its own network namespace (none), EXTRA_PY edits `c` (the config).
bundle() {
	mkdir -p "$T/$1"
	ln -sfn ../rootfs "$T/$1/rootfs"
	python3 - "$T/$1/config.json" "$2" "${3:-}" "$T" <<'EOF'
import json, sys
path, args, extra, T = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
c = {
    "ociVersion": "1.0.2-dev",
    "process": {"user": {"uid": 0, "gid": 0, "umask": 18}, "args": json.loads(args),
                "env": ["PATH=/bin", "FROM_CONFIG=yes"], "cwd": "/",
                "capabilities": {"bounding": ["CAP_CHOWN", "CAP_KILL"], "effective": ["CAP_CHOWN"]},
                "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}]},
    "root": {"path": "rootfs"},
    "hostname": "oci-test",
    "mounts": [{"destination": "/proc", "type": "proc", "source": "proc"},
               {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["mode=755"]},
               {"destination": "/dev/pts", "type": "devpts", "source": "devpts"},
               {"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": ["ro"]},
               {"destination": "/scratch", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}],
    "annotations": {"org.example": "kept"},
    "linux": {"namespaces": [{"type": t} for t in ["pid", "network", "ipc", "uts", "mount"]],
              "resources": {"devices": [{"allow": False, "access": "rwm"}], "pids": {"limit": 64}},
              "maskedPaths": ["/proc/kcore"], "readonlyPaths": ["/proc/sys"]},
}
exec(extra)
json.dump(c, open(path, "w"))
EOF
}

# The engine's side: a child subreaper that runs `create` with the
# container's stdio, reads the pid file and waits for the supervisor, as
# conmon does.  reap ID BUNDLE [start|kill:SIG|startkill:SIG|console|none]
# prints `create RC`, `start RC`, `parent OK|PID`, `status N`.
cat >"$T/reap.py" <<'EOF'
import array, ctypes, os, socket, subprocess, sys, time
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
B, R, T, cid, bundle, what = sys.argv[1:7]
g = [B, "oci", "--root", R, "--log", T + "/log", "--log-format", "json"]
out = open(T + "/" + cid + ".out", "wb")
extra, master, sock = [], None, None
if what == "console":
    path = T + "/" + cid + ".sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    sock.listen(1)
    extra = ["--console-socket", path]
r = subprocess.run(g + ["create", "--bundle", bundle, "--pid-file", T + "/" + cid + ".pid"] + extra + [cid],
                   stdin=subprocess.DEVNULL, stdout=out, stderr=open(T + "/" + cid + ".err", "wb"))
print("create", r.returncode, flush=True)
if r.returncode != 0:
    sys.exit(0)
pid = int(open(T + "/" + cid + ".pid").read())
with open("/proc/%d/stat" % pid) as f:
    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
print("parent", "OK" if ppid == os.getpid() else ppid, flush=True)
if sock is not None:
    c, _ = sock.accept()
    msg, anc, _, _ = c.recvmsg(64, socket.CMSG_LEN(4))
    fds = array.array("i")
    for lvl, typ, data in anc:
        fds.frombytes(data[:4])
    master = fds[0]
    print("console", msg.decode(), flush=True)
if what.startswith("kill:"):
    r = subprocess.run(g + ["kill", cid, what[5:]]); print("kill", r.returncode, flush=True)
if what in ("start", "console") or what.startswith("startkill:"):
    r = subprocess.run(g + ["start", cid], stderr=open(T + "/" + cid + ".start.err", "wb"))
    print("start", r.returncode, flush=True)
if what.startswith("startkill:"):
    time.sleep(0.5)
    r = subprocess.run(g + ["kill", cid, what[10:]]); print("kill", r.returncode, flush=True)
if what == "none":
    sys.exit(0)
if master is not None:
    data = b""
    while True:
        try:
            d = os.read(master, 4096)
        except OSError:
            break
        if not d:
            break
        data += d
    open(T + "/" + cid + ".out", "ab").write(data)
_, st = os.waitpid(pid, 0)
print("status", os.waitstatus_to_exitcode(st) if os.WIFEXITED(st) else 128 + os.WTERMSIG(st), flush=True)
EOF
reap() { python3 "$T/reap.py" "$B" "$R" "$T" "$@" 2>&1; }
state_of() { "$B" oci --root "$R" state "$1" 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["status"], d["pid"])'; }

# 1: features
if "$B" oci features | python3 -c 'import json,sys; f=json.load(sys.stdin); assert f["ociVersionMax"]=="1.1.0" and f["hooks"]==[] and f["linux"]["capabilities"]==[]'; then
	ok "features: runc's document (ociVersionMax 1.1.0, no hooks, no capabilities)"
else
	not_ok "features"
fi

# 2-5: the whole lifecycle, run by a subreaper
bundle b1 '["/bin/sh", "-c", "echo out; echo err >&2; cat /marker; hostname; id -u; tr \"\\\\0\" \"\\\\n\" </proc/$$/environ; ls /scratch >/dev/null && echo scratch; exit 7"]'
got=$(reap c1 "$T/b1" start)
if [ "$got" = "create 0
parent OK
start 0
status 7" ]; then
	ok "create, start: the supervisor is the subreaper's child and exits with the command's status (7)"
else
	not_ok "create, start, wait"
	echo "$got" | sed 's/^/# /'
	show "$T/c1.err" "$T/log"
fi
expected="out
the container's own root
oci-test
0
PATH=/bin
FROM_CONFIG=yes
scratch"
if [ "$(cat "$T/c1.out")" = "$expected" ] && [ "$(cat "$T/c1.err")" = "err" ]; then
	ok "the container's view: its root, hostname, uid 0, exactly config.json's env, a tmpfs mount; stdout and stderr are create's"
else
	not_ok "the container's view"
	show "$T/c1.out"
fi
check "state after the exit: stopped, pid 0" test "$(state_of c1)" = "stopped 0"
grep -q '"level":"warning","msg":"container c1: process.capabilities: 2 capabilities were not granted (CAP_CHOWN, CAP_KILL)' "$T/log" &&
	ok "the log says which capabilities were not granted (JSON lines)" || { not_ok "capabilities in the log"; show "$T/log"; }

# 6-9: created, then running: state, ps, kill TERM (forwarded), delete
bundle b2 '["/bin/sleep", "1000"]'
reap c2 "$T/b2" none >"$T/c2.reap"
if [ "$(state_of c2)" = "created $(cat "$T/c2.pid")" ]; then
	ok "state after create: created, the supervisor's pid"
else
	not_ok "state after create"
	show "$T/c2.reap" "$T/c2.err"
fi
"$B" oci --root "$R" start c2 && sleep 0.3
check "state after start: running" test "$(state_of c2)" = "running $(cat "$T/c2.pid")"
pids=$("$B" oci --root "$R" ps --format json c2)
if python3 -c 'import json,sys; p=json.loads(sys.argv[1]); assert len(p)==3 and p[0]==int(sys.argv[2]) and [open("/proc/%d/cmdline"%x).read().split("\0")[0] for x in p[1:]]==["berth-init","/bin/sleep"]' "$pids" "$(cat "$T/c2.pid")" 2>/dev/null; then
	ok "ps --format json: the supervisor (the pid file's), the sandbox's pid 1 and the command"
else
	not_ok "ps --format json: $pids"
fi
# STOP cannot be forwarded (the supervisor would stop): every process gets it
pstate() { for x in $(python3 -c 'import json,sys; print(*json.loads(sys.argv[1])[1:])' "$pids"); do sed 's/.*) //' "/proc/$x/stat" | cut -c1; done | tr -d '\n'; }
"$B" oci --root "$R" kill c2 STOP && sleep 0.2
stopped=$(pstate)
"$B" oci --root "$R" kill c2 SIGCONT && sleep 0.2
check "kill STOP, CONT: every process of the container stops and continues, the supervisor runs on" test "$stopped:$(pstate):$(state_of c2)" = "TT:SS:running $(cat "$T/c2.pid")"
"$B" oci --root "$R" delete c2 2>"$T/err"
rc=$?
if [ $rc = 1 ] && grep -q "cannot delete container \`c2\` that is not stopped: running" "$T/err"; then
	ok "delete of a running container without --force: refused (1)"
else
	not_ok "delete of a running container: $rc"
	show "$T/err"
fi
sup=$(cat "$T/c2.pid")
sb=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])[1])' "$pids")
"$B" oci --root "$R" delete --force c2
if [ $? = 0 ] && [ ! -e "$R/c2" ] && ! alive "$sup" && ! alive "$sb"; then
	ok "delete --force: the supervisor, the sandbox and the state are gone when it returns"
else
	not_ok "delete --force"
fi

# 10: kill TERM of a running container: forwarded, 128+15
got=$(reap c3 "$T/b2" startkill:TERM)
check "kill TERM: forwarded to the command, the supervisor exits 143" test "$got" = "create 0
parent OK
start 0
kill 0
status 143"
"$B" oci --root "$R" delete c3

# 11: kill of a created container: it never runs; start says so
got=$(reap c4 "$T/b2" kill:SIGINT)
"$B" oci --root "$R" start c4 2>"$T/err"
rc=$?
if [ "$got" = "create 0
parent OK
kill 0
status 130" ] && [ $rc = 1 ] && grep -q "cannot start a container that has stopped" "$T/err"; then
	ok "kill of a created container: it ends before its command runs (130); start refuses (1)"
else
	not_ok "kill of a created container: $got / $rc"
	show "$T/err"
fi
"$B" oci --root "$R" delete c4

# 12: SIGKILL of the supervisor: the sandbox dies with it, state says stopped
reap c5 "$T/b2" none >/dev/null
"$B" oci --root "$R" start c5
sb=$("$B" oci --root "$R" ps --format json c5 | python3 -c 'import json,sys; print(json.load(sys.stdin)[1])')
"$B" oci --root "$R" kill c5 KILL
for i in $(seq 1 50); do alive "$sb" || break; sleep 0.1; done
if [ "$(state_of c5)" = "stopped 0" ] && ! alive "$sb"; then
	ok "kill KILL: the supervisor dies, the sandbox with it; state: stopped"
else
	not_ok "kill KILL: $(state_of c5), sandbox $sb"
fi
"$B" oci --root "$R" kill c5 TERM 2>"$T/err"
rc=$?
check "kill of a stopped container: \"container not running\" (1)" test "$rc:$(head -n1 "$T/err")" = "1:berth: container not running: \`c5\` has stopped"
"$B" oci --root "$R" delete c5

# 13: a command that is not there: start fails and says why, status 127
bundle b3 '["/bin/nothere"]'
got=$(reap c6 "$T/b3" start)
if [ "$got" = "create 0
parent OK
start 1
status 127" ] && grep -q "container \`c6\` did not start: " "$T/c6.start.err"; then
	ok "a command not found: start fails (1) with the reason, the supervisor exits 127"
else
	not_ok "a command not found: $got"
	show "$T/c6.start.err"
fi
"$B" oci --root "$R" delete c6

# 14: the terminal over --console-socket
bundle b4 '["/bin/sh", "-c", "tty; echo on-the-pty; exit 3"]' 'c["process"]["terminal"] = True'
got=$(reap c7 "$T/b4" console)
if [ "$got" = "create 0
parent OK
console console
start 0
status 3" ] && grep -q '^/dev/pts/0' "$T/c7.out" && grep -q 'on-the-pty' "$T/c7.out"; then
	ok "process.terminal: the pty master over --console-socket (SCM_RIGHTS), the command on /dev/pts/0"
else
	not_ok "the terminal: $got"
	show "$T/c7.out" "$T/c7.err"
fi
"$B" oci --root "$R" delete c7
"$B" oci --root "$R" create --bundle "$T/b4" c8 >/dev/null 2>"$T/err"
check "process.terminal without --console-socket: refused (1)" test "$?:$(grep -c 'no --console-socket' "$T/err")" = "1:1"

# 15-16: refusals: exit 1, the message on stderr and in the log, nothing left
bundle b5 '["/bin/true"]' 'c["linux"]["namespaces"] = [{"type": "pid"}, {"type": "mount"}]'
: >"$T/log"
"$B" oci --root "$R" --log "$T/log" --log-format json create --bundle "$T/b5" c9 >/dev/null 2>"$T/err"
rc=$?
if [ $rc = 1 ] && grep -q "berth: config.json: \`linux.namespaces\` has no \`network\`" "$T/err" &&
	grep -q '"level":"error","msg":"config.json: `linux.namespaces` has no `network`' "$T/log" && [ ! -e "$R/c9" ]; then
	ok "a refused bundle: exit 1, on stderr and in the log, no state left"
else
	not_ok "a refused bundle: $rc"
	show "$T/err" "$T/log"
fi
bundle b6 '["/bin/true"]' 'c["hooks"] = {"prestart": [{"path": "/bin/true"}]}'
"$B" oci --root "$R" create --bundle "$T/b6" c9 >/dev/null 2>"$T/err"
check "OCI hooks: refused, named (1)" test "$?:$(grep -c 'config.json: `hooks.prestart` has 1 hook' "$T/err")" = "1:1"
bundle b7 '["/bin/true"]' 'c["mounts"].append({"destination": "/x", "type": "bind", "source": "/nonexistent"})'
"$B" oci --root "$R" create --bundle "$T/b7" c9 >/dev/null 2>"$T/err"
check "a bind of a missing source: refused before anything is made (1)" test "$?:$(grep -c 'mounts\[5\].source' "$T/err"):$(ls "$R" | grep -c c9)" = "1:1:0"

# A network namespace path that is the host's own (an engine naming a pod's
# infra container by its pid, a berth supervisor on the host's network)
bundle b10 '["/bin/true"]' 'c["linux"]["namespaces"][1]["path"] = "/proc/'$$'/ns/net"'
"$B" oci --root "$R" create --bundle "$T/b10" c12 >/dev/null 2>"$T/err"
check "joining the host's own network namespace by path: refused (1), nothing left" test "$?:$(grep -c "the host's own network namespace: the container would share the host's network; berth refuses" "$T/err"):$(ls "$R" | grep -c c12)" = "1:1:0"

# What the sandbox refuses (the image's /dev is a link): create says why (1),
# no state directory, no process
mkdir -p "$T/badroot/bin" && cp -a "$T/rootfs/bin/." "$T/badroot/bin/" && ln -s /tmp "$T/badroot/dev"
bundle b8 '["/bin/true"]' 'c["root"]["path"] = T + "/badroot"'
"$B" oci --root "$R" create --bundle "$T/b8" c10 >/dev/null 2>"$T/err"
rc=$?
left=$(ps -eo pid,args | grep -F -- "--root $R" | grep -v grep)
if [ $rc = 1 ] && [ -s "$T/err" ] && [ ! -e "$R/c10" ] && [ -z "$left" ]; then
	ok "the sandbox cannot be made (/dev a link in the image): create fails (1) saying why, nothing left ($(head -c 120 "$T/err" | head -n1))"
else
	not_ok "a sandbox that cannot be made: $rc"
	show "$T/err"
fi

# process.oomScoreAdj: the supervisor's, which the sandbox inherits
bundle b9 '["/bin/cat", "/proc/self/oom_score_adj"]' 'c["process"]["oomScoreAdj"] = 345'
got=$(reap c11 "$T/b9" start)
check "process.oomScoreAdj 345: the command's" test "$(tail -n1 <<<"$got"):$(cat "$T/c11.out")" = "status 0:345"
"$B" oci --root "$R" delete c11

# 17: ids, an id taken, a missing one, the commands berth does not have
reap d1 "$T/b2" none >/dev/null
"$B" oci --root "$R" create --bundle "$T/b2" d1 >/dev/null 2>"$T/err"
check "an id that exists: refused (1)" test "$?:$(head -n1 "$T/err")" = "1:berth: container \`d1\` already exists"
"$B" oci --root "$R" delete d1
check "delete of a created container (no --force needed)" test ! -e "$R/d1"
"$B" oci --root "$R" delete nothere 2>"$T/err"
check "delete of a missing container: \"does not exist\" (1)" test "$?:$(head -n1 "$T/err")" = "1:berth: container \`nothere\` does not exist"
"$B" oci --root "$R" delete --force nothere
check "delete --force of a missing container: 0" test $? = 0
"$B" oci --root "$R" create --bundle "$T/b2" ../x >/dev/null 2>"$T/err"
check "an invalid id: refused (1)" test "$?:$(grep -c 'invalid container id' "$T/err")" = "1:1"
"$B" oci --root "$R" exec d1 /bin/true 2>"$T/err"
check "exec in a container that is gone: refused (1), named" test "$?:$(head -n1 "$T/err")" = "1:berth: container \`d1\` does not exist"
"$B" oci --root "$R" exec --bogus d1 /bin/true 2>"$T/err"
check "exec: an unknown option refused (1), named" test "$?:$(grep -c 'does not take `--bogus`' "$T/err")" = "1:1"
"$B" oci --systemd-cgroup --root "$R" state d1 2>"$T/err"
check "--systemd-cgroup: refused (1) with the cgroupfs hint" test "$?:$(grep -c 'does not support --systemd-cgroup' "$T/err"):$(grep -c cgroupfs "$T/err")" = "1:1:1"
ln -sf "$(realpath "$B")" "$T/berth-oci"
"$T/berth-oci" --root "$R" list >"$T/out"
check "called as berth-oci: runc's command line itself" test "$?:$(head -n1 "$T/out")" = "0:ID	PID	STATUS	BUNDLE	CREATED	OWNER"

# Nothing of the containers is left: no supervisor, no sandbox.
left=$(ps -eo pid,args | grep -F -- "--root $R" | grep -v grep)
check "no supervisor is left" test -z "$left"

echo "1..$n"
exit $((fails > 0))
