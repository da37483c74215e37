#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# run-escape.sh BERTH PROBEDIR - the berth escape suite.
#
# Runs every probe built from tests/escape/probes/ inside `BERTH run`, each in
# a fresh workspace owned by the invoking user, and after each one checks on
# the host that nothing changed: the canary file outside the workspace, the
# file in the host $HOME, /etc, the berth binary, the host `sleep` process,
# the TCP/UDP/unix listeners (no byte may arrive), the SysV and POSIX shared
# memory objects, the host name, the workspace guard files.
# Prints TAP (1..N, ok N - name, not ok N - name # reason) and exits non-zero
# if anything failed.  Nothing is skipped: a missing precondition is a
# failure (BERTH_MUST_WORK semantics).  Works as root and as an unprivileged
# user.
set -u

if [ $# -ne 2 ]; then
	echo "usage: $0 BERTH PROBEDIR" >&2
	exit 2
fi
BERTH=$(readlink -f -- "$1")
PROBEDIR=$(readlink -f -- "$2")
PROBE_TIMEOUT=${BERTH_ESCAPE_TIMEOUT:-120}

HOST_UID=$(id -u)
HOST_HOME=$(getent passwd "$HOST_UID" | cut -d: -f6)
[ -n "$HOST_HOME" ] || HOST_HOME=${HOME:-/}
RAND=$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')

TOP=$(mktemp -d "/tmp/berth-escape.XXXXXX") || { echo "Bail out! mktemp failed"; exit 1; }
chmod 755 "$TOP"
OUTSIDE=$TOP/outside
mkdir -p "$OUTSIDE"
CANARY=$OUTSIDE/canary
HOME_CANARY=$HOST_HOME/.berth-escape-canary-$RAND
SHM_NAME=berth-escape-canary-$RAND
ABSTRACT=berth-escape-$RAND
UNIX_PATH=$OUTSIDE/host.sock
LISTENER_LOG=$TOP/listener.log
SLEEP_PID=
CUR_NAME=
LISTENER_PID=
SHM_ID=
SHM_KEY=

cleanup() {
	[ -n "$SLEEP_PID" ] && kill -9 "$SLEEP_PID" 2>/dev/null
	[ -n "$LISTENER_PID" ] && kill "$LISTENER_PID" 2>/dev/null
	[ -n "$SHM_ID" ] && ipcrm -m "$SHM_ID" 2>/dev/null
	rm -f "$HOME_CANARY" "/dev/shm/$SHM_NAME"
	if [ -z "${BERTH_ESCAPE_KEEP:-}" ]; then
		rm -rf "$TOP"
	else
		echo "# kept $TOP"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

sha() { sha256sum -- "$1" 2>/dev/null | cut -d' ' -f1; }

PREFLIGHT=()   # reasons the environment cannot run the suite

# ---------------------------------------------------------------- host side
head -c 4096 /dev/urandom >"$CANARY"
CANARY_SHA=$(sha "$CANARY")
head -c 512 /dev/urandom >"$HOME_CANARY" 2>/dev/null || PREFLIGHT+=("cannot write $HOME_CANARY")
HOME_CANARY_SHA=$(sha "$HOME_CANARY")
head -c 512 /dev/urandom >"/dev/shm/$SHM_NAME" 2>/dev/null || PREFLIGHT+=("cannot write /dev/shm/$SHM_NAME")
SHM_FILE_SHA=$(sha "/dev/shm/$SHM_NAME")

sleep 1000 &
SLEEP_PID=$!
disown "$SLEEP_PID" 2>/dev/null

if command -v python3 >/dev/null 2>&1; then
	python3 - "$LISTENER_LOG" "$ABSTRACT" "$UNIX_PATH" "$TOP/listener.ready" <<'PY' &
import os, select, socket, sys
log_path, abstract, upath, ready = sys.argv[1:5]
log = open(log_path, "a", buffering=1)
tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
tcp.bind(("127.0.0.1", 0))
tcp.listen(16)
port = tcp.getsockname()[1]
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
udp.bind(("127.0.0.1", port))
ab = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
ab.bind("\0" + abstract)
ab.listen(16)
up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
up.bind(upath)
up.listen(16)
names = {tcp: "tcp", ab: "abstract", up: "unix-path"}
with open(ready + ".tmp", "w") as f:
    f.write("%d\n" % port)
os.rename(ready + ".tmp", ready)
conns = {}
while True:
    rl, _, _ = select.select([tcp, udp, ab, up] + list(conns), [], [])
    for s in rl:
        if s is udp:
            data, addr = udp.recvfrom(65536)
            log.write("udp datagram from %r: %r\n" % (addr, data[:64]))
        elif s in names:
            c, addr = s.accept()
            conns[c] = names[s]
            log.write("%s connection accepted from %r\n" % (names[s], addr))
        else:
            data = s.recv(65536)
            if data:
                log.write("%s data: %r\n" % (conns[s], data[:64]))
            else:
                del conns[s]
                s.close()
PY
	LISTENER_PID=$!
	for _ in $(seq 1 100); do
		[ -s "$TOP/listener.ready" ] && break
		sleep 0.1
	done
	PORT=$(cat "$TOP/listener.ready" 2>/dev/null)
	[ -n "$PORT" ] || PREFLIGHT+=("host listener did not start")
else
	PREFLIGHT+=("python3 not found (needed for the host listeners)")
	PORT=
fi
: >"$LISTENER_LOG"

if command -v ipcmk >/dev/null 2>&1; then
	SHM_ID=$(ipcmk -M 4096 -p 0666 2>/dev/null | sed -n 's/.*id: *\([0-9][0-9]*\).*/\1/p')
	SHM_KEY=$(ipcs -m 2>/dev/null | awk -v id="$SHM_ID" '$2 == id { print $1 }')
fi
[ -n "$SHM_ID" ] && [ -n "$SHM_KEY" ] || PREFLIGHT+=("cannot create a host SysV shm segment (ipcmk)")

NS_ARGS=()
NS_ARGS_HOSTNET=()
for ns in mnt pid net ipc uts user cgroup; do
	ino=$(stat -L -c %i "/proc/$$/ns/$ns" 2>/dev/null) || { PREFLIGHT+=("no /proc/$$/ns/$ns"); continue; }
	NS_ARGS+=("$ns=$ino")
	[ "$ns" = net ] || NS_ARGS_HOSTNET+=("$ns=$ino")
done

[ -x "$BERTH" ] || PREFLIGHT+=("berth binary $BERTH not found or not executable")
[ -e /etc/shadow ] || PREFLIGHT+=("/etc/shadow does not exist on the host")
SUID_CANDIDATES=()
for f in /usr/bin/passwd /usr/bin/su /bin/su /usr/bin/mount /usr/bin/chsh /usr/bin/newgrp /usr/bin/gpasswd; do
	if [ -u "$f" ] && [ "$(stat -L -c %u "$f")" = 0 ]; then SUID_CANDIDATES+=("$f"); fi
done
[ "$HOST_UID" = 0 ] && SUID_CANDIDATES=(/workspace/suid-root-true "${SUID_CANDIDATES[@]}")
[ ${#SUID_CANDIDATES[@]} -gt 0 ] || PREFLIGHT+=("no setuid-root binary on the host and not root")
# The i386 probe needs IA32 emulation on the host kernel: outside the sandbox
# its int 0x80 getpid returns (the probe then reports FAIL, exit 1).
if [ -x "$PROBEDIR/i386_int80" ]; then
	"$PROBEDIR/i386_int80" >/dev/null 2>&1
	[ $? -eq 1 ] || PREFLIGHT+=("host kernel has no IA32 emulation (int 0x80 does not return)")
fi

# berth's own first run creates its state and key directories under $HOME
# (~/.config/berth, ~/.local/state/berth); make them before the snapshot so
# that only what a probe leaves behind counts.
WARM=$(mktemp -d /tmp/berth-escape-warm.XXXXXX)
"$BERTH" run --workspace "$WARM" -- true >/dev/null 2>&1 || PREFLIGHT+=("berth run -- true failed")
rm -rf "$WARM"
host_snapshot() {
	SNAP_PASSWD=$(sha /etc/passwd)
	SNAP_SHADOW=$( [ -r /etc/shadow ] && sha /etc/shadow || stat -c '%s %Y' /etc/shadow 2>/dev/null)
	SNAP_ETC=$(ls -A /etc | sha256sum)
	SNAP_ROOT=$(ls -A / | sha256sum)
	SNAP_HOSTNAME=$(cat /proc/sys/kernel/hostname)
	SNAP_BERTH=$(sha "$BERTH")
	SNAP_OUTSIDE=$(ls -A "$OUTSIDE" | sha256sum)
	# (other runs of this suite may add their own canaries meanwhile)
	SNAP_HOME=$(ls -A "$HOST_HOME" 2>/dev/null | grep -v '^\.berth-escape-canary-' | sha256sum)
}
host_snapshot

# Files the probes try to create outside the workspace.
FORBIDDEN=(/etc/berth-escape-probe /usr/bin/berth-escape-probe /berth-escape-probe
	/tmp/berth-escape-probe /tmp/berth-escape-probe-fill /tmp/berth-escape-mem
	/tmp/berth-escape-mnt /sys/berth-escape-probe "$TOP/berth-escape-probe"
	/etc/berth-escape-hostname)

# host_check WS - print the first thing that changed on the host, if any.
host_check() {
	local ws=$1 f left
	# The sandbox must not outlive berth: no process of this probe left.
	# (SIGKILLed processes may take a moment to go: retry for 2 s.)
	for _ in $(seq 1 20); do
		left=$(pgrep -f "^/workspace/$CUR_NAME( |\$)" 2>/dev/null | head -5 | tr '\n' ' ')
		[ -z "$left" ] && break
		sleep 0.1
	done
	[ -z "$left" ] || { echo "processes of the probe still running after berth exited: $left"; return; }
	kill -0 "$SLEEP_PID" 2>/dev/null || { echo "host sleep process $SLEEP_PID was killed"; return; }
	grep -q '^TracerPid:[[:space:]]*0$' "/proc/$SLEEP_PID/status" ||
		{ echo "host sleep process is being traced"; return; }
	if [ -n "$LISTENER_PID" ]; then
		kill -0 "$LISTENER_PID" 2>/dev/null || { echo "host listener died"; return; }
	fi
	[ -s "$LISTENER_LOG" ] && { echo "host listener received: $(head -c 300 "$LISTENER_LOG" | tr '\n' ' ')"; return; }
	[ "$(sha "$CANARY")" = "$CANARY_SHA" ] || { echo "host canary changed"; return; }
	[ "$(ls -A "$OUTSIDE" | sha256sum)" = "$SNAP_OUTSIDE" ] || { echo "new file next to the host canary"; return; }
	[ "$(sha "$HOME_CANARY")" = "$HOME_CANARY_SHA" ] || { echo "host home canary changed"; return; }
	[ "$(ls -A "$HOST_HOME" 2>/dev/null | grep -v '^\.berth-escape-canary-' | sha256sum)" = "$SNAP_HOME" ] ||
		{ echo "the host home listing changed"; return; }
	[ "$(sha "/dev/shm/$SHM_NAME")" = "$SHM_FILE_SHA" ] || { echo "host /dev/shm object changed"; return; }
	if [ -n "$SHM_ID" ]; then
		ipcs -m -i "$SHM_ID" >/dev/null 2>&1 || { echo "host SysV shm segment $SHM_ID vanished"; return; }
	fi
	[ "$(sha /etc/passwd)" = "$SNAP_PASSWD" ] || { echo "/etc/passwd changed"; return; }
	[ "$( [ -r /etc/shadow ] && sha /etc/shadow || stat -c '%s %Y' /etc/shadow 2>/dev/null)" = "$SNAP_SHADOW" ] ||
		{ echo "/etc/shadow changed"; return; }
	[ "$(ls -A /etc | sha256sum)" = "$SNAP_ETC" ] || { echo "the host /etc listing changed"; return; }
	[ "$(ls -A / | sha256sum)" = "$SNAP_ROOT" ] || { echo "the host / listing changed"; return; }
	[ "$(cat /proc/sys/kernel/hostname)" = "$SNAP_HOSTNAME" ] || { echo "host name changed"; return; }
	[ "$(sha "$BERTH")" = "$SNAP_BERTH" ] || { echo "the berth binary changed"; return; }
	for f in "${FORBIDDEN[@]}"; do
		[ -e "$f" ] || [ -L "$f" ] && { echo "$f was created on the host"; return; }
	done
	# Workspace guard state, seen from the host.
	[ -e "$ws/.git/hooks/pre-commit" ] && { echo "$ws/.git/hooks/pre-commit was created"; return; }
	# A trust name the workspace did not have is made inside (no placeholder on
	# the host) and set aside at exit: nothing under the name, the copy kept.
	if [ "$CUR_NAME" = guard_git_config_absent ]; then
		[ -e "$ws/.git/config" ] || [ -L "$ws/.git/config" ] && { echo "$ws/.git/config was left (not set aside)"; return; }
		[ -f "$ws/.git/config.berth-set-aside" ] || { echo "the sandbox's .git/config was not kept as config.berth-set-aside"; return; }
	else
		[ "$(sha "$ws/.git/config")" = "$GIT_CONFIG_SHA" ] || { echo ".git/config changed"; return; }
	fi
	[ -d "$ws/.git" ] && [ ! -L "$ws/.git" ] && [ -f "$ws/.git/HEAD" ] || { echo ".git was moved or replaced"; return; }
	{ [ -f "$ws/.bashrc" ] && [ ! -L "$ws/.bashrc" ] && [ "$(sha "$ws/.bashrc")" = "$BASHRC_SHA" ]; } ||
		{ echo ".bashrc changed or replaced"; return; }
	[ -e "$ws/.vscode/tasks.json" ] || [ -L "$ws/.vscode/tasks.json" ] && { echo "$ws/.vscode/tasks.json exists after the run (not set aside)"; return; }
	if [ "$CUR_NAME" = guard_vscode_create ]; then
		[ -f "$ws/.vscode/tasks.json.berth-set-aside" ] || { echo "the sandbox's .vscode/tasks.json was not kept as tasks.json.berth-set-aside"; return; }
	else
		[ -e "$ws/.vscode" ] && { echo "$ws/.vscode exists after the run"; return; }
	fi
	[ -e "$ws/.envrc" ] || [ -L "$ws/.envrc" ] && { echo "$ws/.envrc exists after the run (not set aside)"; return; }
	if [ "$CUR_NAME" = guard_envrc_create ]; then
		[ -f "$ws/.envrc.berth-set-aside" ] || { echo "the sandbox's .envrc was not kept as .envrc.berth-set-aside"; return; }
	fi
	# No set-user-ID or set-group-ID file or directory left in the workspace.
	local setid
	setid=$(find "$ws" -xdev -perm /6000 ! -name suid-root-true -print -quit 2>/dev/null) # that one the runner made
	[ -n "$setid" ] && { echo "a set-ID file was left on the host: $setid"; return; }
	return 0
}

GIT_CONFIG_CONTENT=$'[core]\n\trepositoryformatversion = 0\n\tbare = false\n'
BASHRC_CONTENT=$'# berth escape suite workspace .bashrc\n'
GIT_CONFIG_SHA=$(printf '%s' "$GIT_CONFIG_CONTENT" | sha256sum | cut -d' ' -f1)
BASHRC_SHA=$(printf '%s' "$BASHRC_CONTENT" | sha256sum | cut -d' ' -f1)

# make_ws NAME - a fresh workspace with the probe, a .git and a .bashrc.
make_ws() {
	local ws=$TOP/ws-$1
	mkdir -p "$ws/.git/hooks" "$ws/.git/objects" "$ws/.git/refs"
	printf '%s' "$GIT_CONFIG_CONTENT" >"$ws/.git/config"
	printf 'ref: refs/heads/main\n' >"$ws/.git/HEAD"
	printf '#!/bin/sh\n' >"$ws/.git/hooks/pre-commit.sample"
	printf '%s' "$BASHRC_CONTENT" >"$ws/.bashrc"
	[ "$1" = guard_git_config_absent ] && rm -f "$ws/.git/config"
	cp -- "$PROBEDIR/$1" "$ws/$1"
	chmod 755 "$ws/$1"
	if [ "$1" = setuid_exec ] && [ "$HOST_UID" = 0 ]; then
		cp /bin/true "$ws/suid-root-true"
		chown 0:0 "$ws/suid-root-true"
		chmod 4755 "$ws/suid-root-true"
	fi
	echo "$ws"
}

# --------------------------------------------------------------- the table
# P NAME EXPECTED-STATUS "BERTH OPTIONS" ARGS...
# EXPECTED-STATUS: a berth exit status, or several separated by '|'.
# Status 0 requires an "ok NAME:" line; any other expected status requires
# that no "ok"/"FAIL" line was printed (the probe was killed).
NAMES=() EXPECTS=() OPTS=() ARGS=()
P() {
	local name=$1 expect=$2 opts=$3
	shift 3
	NAMES+=("$name") EXPECTS+=("$expect") OPTS+=("$opts")
	local a="" x
	for x in "$@"; do a+="$(printf '%q ' "$x")"; done
	ARGS+=("$a")
}

P fs_create_etc 0 ""
P fs_create_usr_bin 0 ""
P fs_create_root 0 ""
P fs_read_shadow 0 ""
P fs_read_host_home 0 "" "$HOME_CANARY"
P fs_root_home_absent 0 ""
P fs_dotdot_workspace 0 ""
P fs_symlink_etc_passwd 0 ""
P fs_symlink_host_canary 0 "" "$CANARY"
P fs_hardlink_passwd 0 ""
P fs_rename_to_etc 0 ""
P fs_rename_from_etc 0 ""
P fs_rename_to_tmp 0 ""
P proc1_root 0 "" "$CANARY"
P proc_self_root 0 "" "$CANARY"
P proc_sys_write 0 ""
P proc_sysrq_trigger 0 "" "$( [ -e /proc/sysrq-trigger ] && echo present || echo absent)"
P proc_kcore_kmsg 0 "" "$( [ -e /proc/kcore ] && echo present || echo absent)"
P proc_host_pid 0 "" "$SLEEP_PID"
P proc1_exe_write 0 ""
P sys_write 0 ""
P sys_mkdir 0 ""
P cgroup_write 0 ""
P mounts_ro 0 ""
P mount_tmpfs 0 ""
P mount_remount_rw 0 ""
P umount_workspace 0 ""
P pivot_root 0 ""
P chroot_escape 0 ""
P fsopen_mount 0 ""
P unshare_user 0 ""
P unshare_mnt 0 ""
P setns_mnt 0 ""
P clone3_ns 0 ""
P clone_newuser 0 ""
P namespaces_distinct 0 "" "${NS_ARGS[@]}"
P ptrace_parent 0 ""
P ptrace_sibling 0 ""
P ptrace_host 0 "" "$SLEEP_PID"
P process_vm_readv 0 "" "$SLEEP_PID"
P kill_host_pid 0 "" "$SLEEP_PID"
P kill_all 0 ""
P bpf_prog 0 ""
P perf_event_open 0 ""
P userfaultfd 0 ""
P io_uring_setup 0 ""
P keyctl 0 ""
P add_key 0 ""
P open_by_handle_at 0 ""
P init_module 0 ""
P kexec_load 0 ""
P reboot 0 ""
P settimeofday 0 ""
P acct 0 ""
P swapon 0 ""
P syslog 0 ""
P iopl 0 ""
P vhangup 0 ""
P sethostname 0 ""
P raw_socket 0 ""
P packet_socket 0 ""
P vsock_socket 0 ""
P tcp_connect_host 0 "" "$PORT"
P tcp_bind 0 "" "$PORT"
P udp_host 0 "" "$PORT"
P unix_abstract_host 0 "" "$ABSTRACT"
P unix_abstract_hostnet 0 "--network host --yes" "$ABSTRACT"
P unix_path_host 0 "" "$UNIX_PATH"
P sysv_ipc_host 0 "" "$SHM_ID" "$SHM_KEY"
P dev_shm_host 0 "" "$SHM_NAME"
P setuid_exec 0 "" "${SUID_CANDIDATES[@]}"
P caps_empty 0 ""
P chown_root 0 ""
P setuid_root 0 ""
P setid_file 0 ""
P nnp_seccomp 0 ""
P securebits 0 ""
P tiocsti 0 ""
P tioclinux 0 ""
P leaked_fds 0 ""
P fork_bomb 0 "--pids 64" 64
P fork_bomb_hang 124 "--pids 64 --timeout 3s"
# Without a cgroup --memory is refused (exit 2): berth sets no RLIMIT_AS (src/sandbox/limits.c)
mkdir -p "$TOP/memprobe"
if "$BERTH" run --dry-run --workspace "$TOP/memprobe" --memory 128M -- true 2>&1 >/dev/null | grep -q "cannot be enforced"; then
	P mem_bomb 2 "--memory 128M" 128
else P mem_bomb "0|137" "--memory 128M" 128; fi
P fd_exhaust 0 "--nofile 256" 256
P rlimit_raise 0 "--nofile 256"
P tmp_fill 0 "--tmp-size 16M" 16
P mknod_dev 0 ""
P dev_host_nodes 0 ""
P dev_listing 0 ""
P guard_git_hook 0 ""
P guard_git_config 0 ""
P guard_git_config_absent 0 ""
P guard_git_rename 0 ""
P guard_bashrc_symlink 0 ""
P guard_vscode_create 0 ""
P guard_envrc_create 0 ""
P x32_syscall 159 ""
P i386_int80 159 ""

# ------------------------------------------------------------------ running
N=$(( ${#NAMES[@]} + 2 ))
echo "1..$N"
FAILED=0
T=0

tap() { # tap OK|NOTOK NAME [REASON]
	T=$((T + 1))
	if [ "$1" = OK ]; then
		echo "ok $T - $2"
	else
		FAILED=$((FAILED + 1))
		echo "not ok $T - $2 # ${3//$'\n'/ }"
	fi
}

if [ ${#PREFLIGHT[@]} -eq 0 ]; then
	tap OK preflight
else
	tap NOTOK preflight "$(IFS=';'; echo "${PREFLIGHT[*]}")"
fi

# Every probe built must be in the table and every table entry built.
declare -A INTABLE=()
for n in "${NAMES[@]}"; do INTABLE[$n]=1; done
missing=""
for n in "${NAMES[@]}"; do [ -x "$PROBEDIR/$n" ] || missing+=" $n(not built)"; done
for f in "$PROBEDIR"/*; do
	b=${f##*/}
	[ -f "$f" ] && [ -x "$f" ] || continue
	case $b in *.*) continue ;; esac
	[ -n "${INTABLE[$b]:-}" ] || missing+=" $b(no table entry)"
done
if [ -z "$missing" ]; then tap OK "probe table matches the built probes"; else tap NOTOK "probe table" "$missing"; fi

for i in "${!NAMES[@]}"; do
	name=${NAMES[$i]} expect=${EXPECTS[$i]}
	CUR_NAME=$name
	if [ ! -x "$PROBEDIR/$name" ]; then
		tap NOTOK "$name" "probe not built"
		continue
	fi
	ws=$(make_ws "$name")
	out=$TOP/out-$name
	eval "args=(${ARGS[$i]})"
	read -r -a opts <<<"${OPTS[$i]}"
	if [ "$name" = leaked_fds ]; then
		timeout -k 10 "$PROBE_TIMEOUT" "$BERTH" run --workspace "$ws" "${opts[@]}" -- \
			"/workspace/$name" "${args[@]}" >"$out" 2>&1 </dev/null 7<"$OUTSIDE" 8<"$CANARY"
	else
		timeout -k 10 "$PROBE_TIMEOUT" "$BERTH" run --workspace "$ws" "${opts[@]}" -- \
			"/workspace/$name" "${args[@]}" >"$out" 2>&1 </dev/null
	fi
	status=$?
	okline=$(grep -m1 "^ok $name: " "$out")
	failline=$(grep -m1 "^FAIL $name: " "$out")
	reason=""
	if ! [[ "|$expect|" == *"|$status|"* ]]; then
		reason="berth exited $status, expected $expect"
		[ "$status" = 124 ] && reason+=" (timeout after ${PROBE_TIMEOUT}s?)"
	elif [ -n "$failline" ]; then
		reason="$failline"
	elif [ "$status" = 0 ] && [ -z "$okline" ]; then
		reason="exit 0 without an ok line"
	elif [ "$status" != 0 ] && [ -n "$okline" ]; then
		reason="printed ok but berth exited $status"
	fi
	[ -z "$reason" ] || reason+=" | output: $(head -c 600 "$out" | tr '\n' ' ')"
	hc=$(host_check "$ws")
	[ -z "$hc" ] || reason="${reason:+$reason; }HOST CHANGED: $hc"
	if [ -z "$reason" ]; then
		tap OK "$name"
		if [ -n "$okline" ]; then echo "#   ${okline#ok }"; else echo "#   $name: berth exited $status as expected"; fi
	else
		tap NOTOK "$name" "$reason"
	fi
	# The next probe starts from a clean host; a change is reported once.
	: >"$LISTENER_LOG"
	host_snapshot
	rm -rf "$ws" 2>/dev/null
done

echo "# $((T - FAILED)) passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
