#!/bin/bash
# run-podman.sh BERTH - podman (Debian's 4.3) with berth as its OCI runtime
# (`--runtime WRAPPER`, a script that runs `BERTH oci`: tests/oci/common.sh),
# on the test image of tests/oci/image.sh in a podman storage of the test's
# own.  RUNTIME=runc runs every check on runc instead (the same command
# line), which proves the harness; berth's own posture is then asked of runc
# with podman's hardening flags where runc can give it, and the rest is
# skipped (docs/oci.md, "Tests").
#   run, exit statuses (7; 137 after a SIGKILL), run -d + logs, stop (SIGTERM,
#   status), rm, the runtime's own `state`, exec, a tty, -v ro/rw, berth's default posture inside (read-only root, no
#   capabilities, NoNewPrivs, seccomp, mount/unshare/ptrace/raw sockets refused,
#   /proc/kcore unreadable, the host's loopback unreachable, set-user-ID
#   ignored) and the escape probes that apply to a container; fields berth
#   cannot honour (an OCI hook, a device, a sysctl) refused with the field
#   named and nothing left behind; as root, the same basics rootless as bertht.
# As root: rootful podman (and rootless as bertht); as a user: rootless podman,
# skipped with the reason when this user has no subordinate ids.
# Prints TAP; exits 1 if a check failed.
set -u
if [ $# -ne 1 ]; then
	echo "usage: $0 BERTH" >&2
	exit 2
fi
# shellcheck source=common.sh
. "$(dirname "$0")/common.sh"

ME=$(id -un)
if [ "$(id -u)" -ne 0 ]; then
	why=
	grep -q "^$ME:" /etc/subuid 2>/dev/null && grep -q "^$ME:" /etc/subgid 2>/dev/null ||
		why="no subordinate ids for $ME in /etc/subuid and /etc/subgid (as root: usermod --add-subuids FIRST-LAST --add-subgids FIRST-LAST $ME; tests/run does it for bertht)"
	command -v newuidmap >/dev/null || why="no newuidmap (Debian: uidmap)"
	if [ -n "$why" ]; then
		if [ "${BERTH_OCI_MUST_WORK:-0}" = 1 ]; then echo "1..1"; echo "not ok 1 - rootless podman # $why"; exit 1; fi
		echo "1..0 # SKIP rootless podman: $why"
		exit 0
	fi
fi
oci_init "$1"
P=$TOP/podman
_oci_podman_conf "$P" || bail "cannot write the podman configuration in $P"
OCI_CLEANUPS+=("podman_reset $(printf %q "$P")")
pod() { podman_in "$P" --runtime "$OCI_WRAPPER" "$@"; }
IMG=$OCI_IMAGE
MARK=berth-oci-$$-$RANDOM
# Podman's flags that ask runc for berth's posture (the harness check);
# berth must give it without them.
HARD=()
[ "$OCI_RUNTIME" = runc ] && HARD=(--read-only --cap-drop all --security-opt no-new-privileges)

# ---------------------------------------------------------------- lifecycle
if out=$(pod import -q --change 'ENV PATH=/bin:/usr/bin' --change 'CMD ["/bin/sh"]' "$OCI_IMAGE_TAR" "$IMG" 2>&1); then
	pass "podman import of the test root file system as $IMG"
else
	fail "podman import of the test root file system" "failed" "$out"
	echo "1..$T"
	exit 1
fi

out=$(pod run --rm "$IMG" /bin/echo hi 2>"$TOP/err")
rc=$?
is "run --rm IMAGE /bin/echo hi: exit status" "$rc" 0
is "run --rm IMAGE /bin/echo hi: output" "$out" hi
[ "$rc" -eq 0 ] || echo "# $(head -c 600 "$TOP/err")"
is "run --rm: no container state left under the runtime's --root" "$(state_left)" ""

pod run --rm "$IMG" sh -c 'exit 7' >/dev/null 2>"$TOP/err"
is "run --rm IMAGE sh -c 'exit 7': exit status 7" "$?" 7

id=$(pod run -d "$IMG" sleep 1000 2>"$TOP/err")
if [ -n "$id" ]; then
	pod kill -s KILL "$id" >/dev/null 2>&1
	is "a container killed by SIGKILL: podman wait says 137" "$(pod wait "$id" 2>&1)" 137
	pod rm "$id" >/dev/null 2>&1
else
	fail "run -d IMAGE sleep 1000" "no container id" "$(cat "$TOP/err")"
fi

# run -d, logs, the runtime's state, stop (SIGTERM: the command's trap
# exits 0; podman's SIGKILL after -t would be 137), rm.
id=$(pod run -d "$IMG" sh -c ": $MARK; echo started; trap 'echo term; exit 0' TERM; while :; do sleep 0.1; done" 2>"$TOP/err")
if [ -n "$id" ]; then
	pass "run -d: a container id"
	for _ in $(seq 1 50); do [ -n "$(pod logs "$id" 2>/dev/null)" ] && break; sleep 0.1; done
	is "logs: the detached container's output" "$(pod logs "$id" 2>&1)" started
	is "inspect: status running" "$(pod inspect -f '{{.State.Status}}' "$id" 2>&1)" running
	st=$("$OCI_WRAPPER" state "$id" 2>&1)
	is "the runtime's state ID: status running, the same id" \
		"$(printf '%s' "$st" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["status"], d["id"])' 2>&1)" "running $id"
	t0=$(date +%s)
	pod stop -t 20 "$id" >/dev/null 2>"$TOP/err"
	rc=$? t1=$(date +%s)
	is "stop: exit status" "$rc" 0
	if [ $((t1 - t0)) -lt 15 ]; then
		pass "stop: the container ended on SIGTERM ($((t1 - t0)) s)"
	else
		fail "stop: the container ended on SIGTERM" "took $((t1 - t0)) s (the SIGKILL after -t?)"
	fi
	is "stop: exited, exit code 0 (the TERM trap)" "$(pod inspect -f '{{.State.Status}} {{.State.ExitCode}}' "$id" 2>&1)" "exited 0"
	is "logs after stop" "$(pod logs "$id" 2>&1 | tr '\n' ' ')" "started term "
	pod rm "$id" >/dev/null 2>"$TOP/err"
	is "rm: exit status" "$?" 0
	is "rm: the container is gone (ps -a)" "$(pod ps -a -q --no-trunc --filter id="$id" 2>&1)" ""
	is "rm: no state left under the runtime's --root" "$(state_left)" ""
	is "rm: no process of the container left" "$(procs_with "$MARK")" ""
else
	fail "run -d: a container id" "none" "$(cat "$TOP/err")"
fi

# exec: a command in the running container (`berth oci exec`, process.json).
id=$(pod run -d "$IMG" sleep 1000 2>"$TOP/err")
out=$(pod exec "$id" /bin/echo hi-exec 2>&1)
rc=$?
if [ "$rc" -eq 0 ] && [ "$out" = hi-exec ]; then
	pass "exec: a command in the running container"
else
	fail "exec: a command in the running container" "exit $rc" "$out"
fi
[ -n "$id" ] && pod rm -f -t 0 "$id" >/dev/null 2>&1

# A tty: podman gives the container a pseudo-terminal (from the runtime's
# --console-socket) without one of its own.
out=$(pod run --rm -t "$IMG" sh -c 'tty; [ -t 0 ] && [ -t 1 ] && echo both-tty' 2>&1 </dev/null | tr -d '\r')
re='^/dev/pts/[0-9]+'$'\n''both-tty$'
if [[ $out =~ $re ]]; then
	pass "run -t: the command's stdin and stdout are a tty ($(head -1 <<<"$out"))"
else
	fail "run -t: the command's stdin and stdout are a tty" "unexpected output" "$out"
fi

# Bind mounts: :ro is read-only, :rw writable (the directory is 0777: only
# the mount's mode decides).
mkdir -p "$TOP/vol-ro" "$TOP/vol-rw" && echo hello >"$TOP/vol-ro/in" && chmod 0777 "$TOP/vol-rw"
out=$(pod run --rm -v "$TOP/vol-ro:/data:ro" "$IMG" sh -c 'cat /data/in; /probes/oci_try create /data/x' 2>&1)
is "-v DIR:/data:ro: readable, creating a file fails with EROFS" "$(tr '\n' ' ' <<<"$out")" "hello EROFS "
out=$(pod run --rm -v "$TOP/vol-rw:/data:rw" "$IMG" /probes/oci_try write /data/out "from-$MARK" 2>&1)
is "-v DIR:/data:rw: writing a file succeeds" "$out" ok
is "-v DIR:/data:rw: the host sees what was written" "$(cat "$TOP/vol-rw/out" 2>&1)" "from-$MARK"
# A mount's options as asked: a tmpfs's mode= and noexec, a bind's noexec.
cp /bin/true "$TOP/vol-rw/prog" 2>/dev/null || cp "$(command -v true)" "$TOP/vol-rw/prog"
out=$(pod run --rm --tmpfs /scratch:rw,mode=0700,noexec,size=8m -v "$TOP/vol-rw:/data:rw,noexec" "$IMG" sh -c \
	'stat -c %a /scratch; cp /bin/busybox /scratch/bb && /scratch/bb true; echo "tmpfs $?"; /data/prog; echo "bind $?"; /bin/busybox true; echo "root $?"' 2>/dev/null)
is "--tmpfs mode=0700,noexec and -v :noexec: the tmpfs's mode, nothing executes from either (126), the root's do" \
	"$(tr '\n' ' ' <<<"$out")" "700 tmpfs 126 bind 126 root 0 "

# berth.dev/profile: an agent profile's egress and env (berth's own claude
# profile: api-only, its DISABLE_AUTOUPDATER=1); an undeclared host is
# refused by the broker.
if berth_only "--annotation berth.dev/profile=claude: the profile's egress and env"; then
	out=$(pod run --rm --network none --annotation berth.dev/profile=claude "$IMG" sh -c \
		'echo "${HTTP_PROXY:+proxy} $DISABLE_AUTOUPDATER"; /probes/oci_try http-proxy http://undeclared.example/' 2>&1)
	is "--annotation berth.dev/profile=claude: the broker's proxy, the profile's env, an undeclared host refused (403)" \
		"$(tr '\n' ' ' <<<"$out")" "proxy 1 403 berth: refused by the egress policy: undeclared.example:80 (not declared) "
	out=$(pod run --rm --annotation berth.dev/profile=no-such-profile "$IMG" true 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && [[ $out == *"annotations.berth.dev/profile"*"no-such-profile"* ]]; then
		pass "--annotation berth.dev/profile=no-such-profile: refused, the profile named (exit $rc)"
	else
		fail "--annotation berth.dev/profile=no-such-profile: refused, the profile named" "exit $rc" "$out"
	fi
fi

# --------------------------------------------------------- default posture
oci_listener
sleep 1000 &
SLEEP_PID=$!
OCI_CLEANUPS+=("kill $SLEEP_PID")
CANARY=$TOP/canary
echo canary >"$CANARY"
SHM_NAME=berth-oci-canary-$MARK
echo shm >"/dev/shm/$SHM_NAME"
OCI_CLEANUPS+=("rm -f /dev/shm/$SHM_NAME")
KCORE=ENOENT # /proc/kcore exists only with CONFIG_PROC_KCORE
[ -e /proc/kcore ] && KCORE="read 0|EACCES|EPERM"

# row NAME RUNC BERTH CMD: CMD (oci_try, one line) run in the container
# prints BERTH under berth (alternatives separated by |); under runc with
# $HARD, RUNC, or - when runc cannot give berth's answer (skipped).
ROWS=() RUNCS=() BERTHS=() CMDS=()
row() { ROWS+=("$1") RUNCS+=("$2") BERTHS+=("$3") CMDS+=("$4"); }
Z=0000000000000000
row "the root is read-only: creating /oci-probe fails with EROFS" EROFS EROFS "/probes/oci_try create /oci-probe"
row "creating /etc/oci-probe fails with EROFS" EROFS EROFS "/probes/oci_try create /etc/oci-probe"
row "no capability in any set (/proc/self/status)" "CapInh=$Z CapPrm=$Z CapEff=$Z CapBnd=$Z CapAmb=$Z" \
	"CapInh=$Z CapPrm=$Z CapEff=$Z CapBnd=$Z CapAmb=$Z" "/probes/oci_try status CapInh CapPrm CapEff CapBnd CapAmb"
row "NoNewPrivs 1, Seccomp 2 (a filter)" "NoNewPrivs=1 Seccomp=2" "NoNewPrivs=1 Seccomp=2" "/probes/oci_try status NoNewPrivs Seccomp"
row "mount(2) of a tmpfs fails with EPERM" EPERM EPERM "/probes/oci_try mount"
row "unshare(CLONE_NEWUSER) fails with EPERM" - EPERM "/probes/oci_try unshare-user"
row "ptrace(PTRACE_ATTACH) of its own child fails with EPERM" - EPERM "/probes/oci_try ptrace-child"
row "a raw IP socket fails with EPERM" EPERM EPERM "/probes/oci_try raw-socket"
row "/proc/kcore is not readable ($KCORE)" "$KCORE" "$KCORE" "/probes/oci_try read /proc/kcore"
row "the host's 127.0.0.1:PORT is not reachable (ECONNREFUSED: another network namespace; EACCES: Landlock)" \
	"ECONNREFUSED" "ECONNREFUSED|EACCES" "/probes/oci_try connect 127.0.0.1 $PORT"
UROWS=() URUNCS=() UBERTHS=() UCMDS=()
urow() { UROWS+=("$1") URUNCS+=("$2") UBERTHS+=("$3") UCMDS+=("$4"); }
urow "as --user 1000: a set-user-ID-root program keeps uid 1000" "uid=1000/1000/1000 gid=1000/1000/1000" \
	"uid=1000/1000/1000 gid=1000/1000/1000" "/probes/suid-oci-try uids"
urow "as --user 1000: setresuid(0,0,0) fails with EPERM (EINVAL: uid 0 not even mapped)" EPERM "EPERM|EINVAL" "/probes/oci_try setuid0"

# The escape probes of tests/escape that apply in a container (the rest
# need berth run's /workspace, its guard, or host objects the container
# cannot be given): NAME RUNC ARGS..., RUNC "yes" when runc with $HARD
# passes it too (else berth's answer only: skipped under runc).
PROBES=() PRUNC=() PARGS=()
probe() {
	local n=$1 r=$2 a="" x
	shift 2
	for x in "$@"; do a+="$(printf '%q ' "$x")"; done
	PROBES+=("$n") PRUNC+=("$r") PARGS+=("$a")
}
for n in acct bpf_prog caps_empty cgroup_write chroot_escape dev_host_nodes fs_create_etc fs_create_root \
	fs_create_usr_bin fs_root_home_absent fsopen_mount init_module iopl kexec_load mount_remount_rw nnp_seccomp \
	open_by_handle_at packet_socket perf_event_open pivot_root proc1_exe_write raw_socket reboot sethostname \
	setns_mnt settimeofday swapon sys_write syslog unshare_mnt userfaultfd vhangup; do
	probe "$n" yes
done
for n in add_key clone3_ns clone_newuser io_uring_setup keyctl unshare_user securebits vsock_socket sys_mkdir; do
	probe "$n" -
done
probe fs_read_host_home yes "$CANARY"
probe proc1_root yes "$CANARY"
probe proc_self_root yes "$CANARY"
probe proc_host_pid yes "$SLEEP_PID"
probe ptrace_host yes "$SLEEP_PID"
probe kill_host_pid yes "$SLEEP_PID"
probe dev_shm_host yes "$SHM_NAME"
probe udp_host yes "$PORT"
probe unix_abstract_host yes "$LISTEN_ABSTRACT"
probe unix_path_host yes "$LISTEN_PATH"
probe tcp_connect_host - "$PORT"
NS=()
for ns in mnt pid net ipc uts user cgroup; do NS+=("$ns=$(stat -L -c %i "/proc/$$/ns/$ns")"); done
probe namespaces_distinct - "${NS[@]}"
UPROBES=(setuid_root proc_sys_write)

# batch OUT OPTIONS -- "CMD"...: one container runs every CMD, each line of
# output prefixed "@@ I " (within 180 s: no probe may hang).  Not under
# busybox's timeout: its watcher outlives the command, and proc_host_pid
# counts the processes.
batch() {
	local out=$1 script="" i=0
	shift
	local opts=()
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	for c in "$@"; do
		script+="printf '@@ $i '; $c 2>&1 | head -c 2000; echo;"
		i=$((i + 1))
	done
	export -f podman_in
	timeout -k 10 180 bash -c 'podman_in "$@"' bash "$P" --runtime "$OCI_WRAPPER" run --rm "${opts[@]}" "$IMG" \
		sh -c "$script" >"$out" 2>&1
}
# result OUT I: the output of command I in OUT (its first line).
result() { sed -n "s/^@@ $2 //p" "$1" | head -1; }
# judge DESC GOT RUNC BERTH
judge() {
	local want=$4
	if [ "$OCI_RUNTIME" = runc ]; then
		if [ "$3" = - ]; then
			skip "$1" "$BERTH_WHY (runc with ${HARD[*]}: $2)"
			return
		fi
		want=$3
	fi
	if [[ "|$want|" == *"|$2|"* ]]; then pass "$1"; else fail "$1" "got '$2', expected '$want'"; fi
}

how="berth's default posture"
[ "$OCI_RUNTIME" = runc ] && how="runc with ${HARD[*]}"
cmds=("${CMDS[@]}")
for i in "${!PROBES[@]}"; do cmds+=("/probes/${PROBES[$i]} ${PARGS[$i]}"); done
batch "$TOP/posture.out" "${HARD[@]}" -- "${cmds[@]}" ||
	echo "# the posture container exited $?: $(grep -v '^@@' "$TOP/posture.out" | head -c 400)"
for i in "${!ROWS[@]}"; do
	judge "$how: ${ROWS[$i]}" "$(result "$TOP/posture.out" "$i")" "${RUNCS[$i]}" "${BERTHS[$i]}"
done
if [ -s "$LISTEN_LOG" ]; then
	fail "$how: the host listener received nothing" "it logged" "$(cat "$LISTEN_LOG")"
else
	pass "$how: the host listener received nothing"
fi
n=${#ROWS[@]}
for i in "${!PROBES[@]}"; do
	got=$(result "$TOP/posture.out" $((n + i)))
	name=${PROBES[$i]}
	if [ "${PRUNC[$i]}" = - ] && [ "$OCI_RUNTIME" = runc ]; then
		skip "$how: escape probe $name" "$BERTH_WHY (runc with ${HARD[*]}: $got)"
	elif [[ $got == "ok $name: "* ]]; then
		pass "$how: escape probe $name"
		echo "#   ${got#ok }"
	else
		fail "$how: escape probe $name" "${got:-no output}"
	fi
done
ucmds=("${UCMDS[@]}")
for n in "${UPROBES[@]}"; do ucmds+=("/probes/$n"); done
ucmds+=("/probes/setuid_exec /probes/suid-oci-try")
batch "$TOP/posture-user.out" "${HARD[@]}" --user 1000:1000 -- "${ucmds[@]}"
for i in "${!UROWS[@]}"; do
	judge "$how: ${UROWS[$i]}" "$(result "$TOP/posture-user.out" "$i")" "${URUNCS[$i]}" "${UBERTHS[$i]}"
done
n=${#UROWS[@]}
for name in "${UPROBES[@]}" setuid_exec; do
	got=$(result "$TOP/posture-user.out" "$n")
	n=$((n + 1))
	if [[ $got == "ok $name: "* ]]; then
		pass "$how, as --user 1000: escape probe $name"
		echo "#   ${got#ok }"
	else
		fail "$how, as --user 1000: escape probe $name" "${got:-no output}"
	fi
done
# The harness's own proof: without the flags, runc does give podman's
# defaults (a writable root, capabilities): the checks above can fail.
if [ "$OCI_RUNTIME" = runc ]; then
	out=$(pod run --rm "$IMG" sh -c '/probes/oci_try create /oci-probe; /probes/oci_try status CapEff' 2>&1 | tr '\n' ' ')
	if [[ $out == "ok CapEff="* ]] && [[ $out != *"=$Z "* ]]; then
		pass "runc without the flags: a writable root and capabilities (the checks above can fail: $out)"
	else
		fail "runc without the flags: a writable root and capabilities (the checks above can fail)" "got '$out'"
	fi
	out=$(pod run --rm --user 1000:1000 "$IMG" /probes/suid-oci-try uids 2>&1)
	is "runc without no-new-privileges: the image's set-user-ID-root program does give euid 0" "$out" \
		"uid=1000/0/0 gid=1000/1000/1000"
fi
# Read-only where asked, for both runtimes.
out=$(pod run --rm --read-only "$IMG" /probes/oci_try create /oci-probe 2>&1)
is "--read-only: creating /oci-probe fails with EROFS" "$out" EROFS

# ------------------------------------------------ the engine's cgroup
# linux.cgroupsPath: the supervisor joins it in every hierarchy and the
# sandbox's own cgroups are made below it, so what podman reads there
# (stats) counts the container; rm removes it.  Root only: rootless podman
# on cgroup v1 asks for none.
if [ "$(id -u)" -eq 0 ]; then
	id=$(pod run -d "$IMG" sh -c ": $MARK-cg; sleep 1000" 2>"$TOP/err")
	cfg=$OCI_STATE/$id/config.json
	[ "$OCI_RUNTIME" = runc ] && cfg=$(pod inspect -f '{{.OCIConfigPath}}' "$id" 2>/dev/null)
	cgp=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["linux"].get("cgroupsPath", ""))' "$cfg" 2>/dev/null)
	# the sandbox's pid 1 (runc: the command itself)
	cmdpid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sandbox_pid"])' "$OCI_STATE/$id/state.json" 2>/dev/null)
	[ "$OCI_RUNTIME" = runc ] && cmdpid=$(pod inspect -f '{{.State.Pid}}' "$id" 2>/dev/null)
	line=$(grep -E '^[0-9]+:(memory|):' "/proc/$cmdpid/cgroup" 2>/dev/null | head -1)
	if [ -n "$cgp" ] && [[ ${line#*:*:} == "$cgp" || ${line#*:*:} == "$cgp/"* ]]; then
		pass "cgroupsPath: the container's processes are in the engine's cgroup ($line)"
	else
		fail "cgroupsPath: the container's processes are in the engine's cgroup" "cgroupsPath '$cgp', /proc/$cmdpid/cgroup: '$line'" "$(cat "$TOP/err")"
	fi
	# read from the host: inside, the container's cgroup namespace shows
	# its own cgroup as `/` (an exec'd process is in that namespace too)
	esec=$((200000 + RANDOM))
	pod exec -d "$id" sleep "$esec" >/dev/null 2>"$TOP/err"
	for _ in $(seq 50); do epid=$(pgrep -xf "sleep $esec" | head -1) && break; sleep 0.1; done
	out=$(grep -E '^[0-9]+:(memory|):' "/proc/${epid:-0}/cgroup" 2>&1 | head -1)
	if [ -n "$cgp" ] && [[ ${out#*:*:} == "$cgp" || ${out#*:*:} == "$cgp/"* ]]; then
		pass "cgroupsPath: an exec'd process is in it too"
	else
		fail "cgroupsPath: an exec'd process is in it too" "got '$out'"
	fi
	out=$(pod stats --no-stream --format '{{.PIDs}} {{.MemUsage}}' "$id" 2>&1)
	if [[ $out =~ ^[1-9][0-9]*\ [0-9.]+[kMG]?B ]] && [[ $out != "0 "* ]] && [[ $out != *" 0B "* ]]; then
		pass "podman stats counts the container's processes and memory ($out)"
	else
		fail "podman stats counts the container's processes and memory" "got '$out'"
	fi
	pod rm -f -t 0 "$id" >/dev/null 2>&1
	left=
	for h in /sys/fs/cgroup/memory /sys/fs/cgroup/pids /sys/fs/cgroup/unified /sys/fs/cgroup; do
		[ -n "$cgp" ] && [ -d "$h$cgp" ] && left="$left $h$cgp"
	done
	is "cgroupsPath: removed with the container" "$left" ""
fi

# ------------------------------------------------------------------- a pod
# podman pod create: an infra container (catatonit) whose network, IPC and
# UTS namespaces each container of the pod joins, named /proc/PID/ns/TYPE
# with PID from the infra's pid file (under berth its supervisor's, which
# stands for its sandbox's: docs/oci.md, "Pods").  The CRI names a Pod's
# the same way.
POD=berth-pod-$$
PORT_POD=$((20000 + RANDOM % 20000))

if out=$(pod pod create --name "$POD" 2>&1) && out=$(pod pod start "$POD" 2>&1); then
	pass "pod create, pod start: the infra container runs"
	c1=$(pod run -d --pod "$POD" "$IMG" sh -c "nc -l -p $PORT_POD -e /bin/echo from-c1 & exec sleep 1000" 2>"$TOP/err")
	[ -n "$c1" ] || fail "run -d --pod: a container of the pod" "no container id" "$(cat "$TOP/err")"
	ns1=$(pod exec "$c1" sh -c "$NSOF" 2>&1)
	out=$(pod run --rm --pod "$POD" "$IMG" sh -c "$NSOF; echo; hostname" 2>&1)
	ns2=$(head -1 <<<"$out")
	if [[ $ns1 == "ipc:["*"uts:["*"net:["* ]] && [ "$ns1" = "$ns2" ]; then
		pass "two containers of the pod share its network, IPC and UTS namespaces ($ns1)"
	else
		fail "two containers of the pod share its network, IPC and UTS namespaces" "c1: '$ns1', c2: '$ns2'" "$out"
	fi
	ns_not_host "the pod" "$ns2"
	is "a container of the pod has the pod's hostname" "$(sed -n 2p <<<"$out")" "$POD"
	# /sys: a sysfs of the pod's network (the supervisor's, made in it), not
	# the host's, whose network interfaces it would list
	out=$(pod run --rm --pod "$POD" "$IMG" sh -c 'ls /sys/class/net | tr "\n" " "; /probes/oci_try create /sys/x' 2>&1)
	is "a container of the pod: /sys is the pod network's (lo only), read-only" "$(tr '\n' ' ' <<<"$out")" "lo EROFS "
	out=$(pod run --rm --pod "$POD" "$IMG" sh -c "sleep 0.5; nc 127.0.0.1 $PORT_POD </dev/null" 2>&1)
	is "a container reaches another's listener on the pod's loopback" "$out" from-c1
	(exec 3<>"/dev/tcp/127.0.0.1/$PORT_POD") 2>/dev/null
	is "the host's loopback does not reach the pod's listener" "$?" 1
	out=$(pod run --rm --pod "$POD" "${HARD[@]}" "$IMG" sh -c '/probes/oci_try create /oci-probe; /probes/oci_try status CapEff NoNewPrivs Seccomp' 2>&1 | tr '\n' ' ')
	is "a container of the pod: read-only root, no capabilities, NoNewPrivs, seccomp" "$out" "EROFS CapEff=$Z NoNewPrivs=1 Seccomp=2 "
	pod pod rm -f -t 0 "$POD" >/dev/null 2>"$TOP/err"
	is "pod rm -f: exit status" "$?" 0
	is "pod rm -f: no state left under the runtime's --root" "$(state_left)" ""
else
	fail "pod create, pod start" "failed" "$out"
	pod pod rm -f -t 0 "$POD" >/dev/null 2>&1
fi
# Never the host's own namespaces by path: a process in them, this shell
# (rootless: a sleep in podman's user namespace, whose /proc/PID/ns podman
# may read there).
if berth_only "a bundle joining the host's UTS namespace by path is refused"; then
	HN=$$
	if [ "$(id -u)" -ne 0 ]; then
		pod unshare sh -c 'echo $$ >"$1"; exec sleep 1000' sh "$TOP/hostns.pid" >/dev/null 2>&1 &
		OCI_CLEANUPS+=("kill $!")
		for _ in $(seq 50); do [ -s "$TOP/hostns.pid" ] && break; sleep 0.1; done
		HN=$(cat "$TOP/hostns.pid" 2>/dev/null)
		OCI_CLEANUPS+=("kill $HN")
	fi
	for t in uts ipc net; do
		case $t in net) flag=--network ;; *) flag=--$t ;; esac
		out=$(pod run --rm "$flag" "ns:/proc/$HN/ns/$t" "$IMG" /bin/echo joined 2>&1)
		rc=$?
		if [ "$rc" -ne 0 ] && [[ $out == *"joins \`/proc/$HN/ns/$t\`, the host's own"* ]] && [[ $out != *joined* ]]; then
			pass "$flag ns:/proc/PID/ns/$t (the host's own): refused, the path named (exit $rc)"
		else
			fail "$flag ns:/proc/PID/ns/$t (the host's own): refused" "exit $rc" "$out"
		fi
	done
	is "the refused runs: no state left under the runtime's --root" "$(state_left)" ""
fi

# ------------------------------------------- a Pod's network, with egress
# A Kubernetes Pod: the pause container joins the CNI's network namespace
# (path=/run/netns/...), each container joins the pause's by
# /proc/PID/ns/net, and the Pod's annotations (berth.dev/allow-hosts among
# them) reach every container.  Here the "CNI" namespace is one of the
# test's own with a link to a far namespace serving HTTP on 1.2.3.200
# (declared) and 1.2.3.202 (not); the host's network cannot reach either,
# so an answer proves the broker connected from the pod's network, and the
# far side's log shows what arrived.  Root only (namespaces, links).
pod_egress() {
	local pn=berth-pn-$$ fn=berth-pf-$$ la=bpa$$ lb=bpb$$ www=$TOP/pod-www log=$TOP/pod-http.log
	local srv pause ppid out lines=()
	mkdir -p "$www" && echo "from the pod's network $MARK" >"$www/pod.txt" && : >"$log"
	OCI_CLEANUPS+=("ip netns del $pn" "ip netns del $fn")
	if ! { ip netns add "$pn" && ip netns add "$fn" &&
		ip link add "$la" netns "$pn" type veth peer name "$lb" netns "$fn" &&
		ip -n "$pn" addr add 1.2.3.201/24 dev "$la" && ip -n "$fn" addr add 1.2.3.200/24 dev "$lb" &&
		ip -n "$fn" addr add 1.2.3.202/24 dev "$lb" &&
		ip -n "$pn" link set lo up && ip -n "$pn" link set "$la" up &&
		ip -n "$fn" link set lo up && ip -n "$fn" link set "$lb" up; } 2>"$TOP/err"; then
		fail "a Pod's network: the test's namespaces" "ip failed" "$(cat "$TOP/err")"
		return
	fi
	ip netns exec "$fn" setsid python3 "$OCI_DIR/../netns/servers.py" http --root "$www" --log "$log" \
		--bind 1.2.3.200:80 --bind 1.2.3.202:80 </dev/null >"$TOP/pod-srv.out" 2>&1 &
	srv=$!
	OCI_CLEANUPS+=("kill $srv")
	for _ in $(seq 100); do grep -q '^ready' "$TOP/pod-srv.out" 2>/dev/null && break; sleep 0.1; done
	out=$(ip netns exec "$pn" curl -s --noproxy '*' --max-time 5 http://1.2.3.200/pod.txt 2>&1)
	is "a Pod's network: precondition: the far host answers from the pod's network" "$out" "from the pod's network $MARK"
	# (this machine's own network may answer for any address: not with this body)
	out=$(curl -s --noproxy '*' --max-time 2 http://1.2.3.200/pod.txt 2>/dev/null)
	if [[ $out != *"$MARK"* ]]; then pass "a Pod's network: precondition: the host's network does not reach the far host"; else fail "a Pod's network: precondition: the host's network does not reach the far host" "it answered '$out'"; fi
	: >"$log"
	pause=$(pod run -d --network "ns:/run/netns/$pn" --annotation "berth.dev/allow-hosts=1.2.3.200:80" \
		"$IMG" sh -c ": $MARK; exec sleep 1000" 2>"$TOP/err")
	ppid=$(pod inspect -f '{{.State.Pid}}' "$pause" 2>/dev/null)
	if [ -z "$pause" ] || [ -z "$ppid" ] || [ "$ppid" = 0 ]; then
		fail "a Pod's network: the pause container with the annotation runs" "no container" "$(cat "$TOP/err")"
		return
	fi
	pass "a Pod's network: the pause container joins /run/netns/$pn, with berth.dev/allow-hosts"
	out=$(pod run --rm --network "ns:/proc/$ppid/ns/net" --ipc "ns:/proc/$ppid/ns/ipc" --uts "ns:/proc/$ppid/ns/uts" \
		--annotation "berth.dev/allow-hosts=1.2.3.200:80" "$IMG" sh -c ": $MARK
/probes/oci_try http-proxy 'http://1.2.3.200/pod.txt?proxy'
/probes/oci_try http-get 1.2.3.200 80 '/pod.txt?direct'
/probes/oci_try http-proxy 'http://1.2.3.202/pod.txt?other'
/probes/oci_try http-get 1.2.3.202 80 '/pod.txt?other-direct'
readlink /proc/self/ns/ipc
readlink /proc/self/ns/net" 2>&1)
	mapfile -t lines <<<"$out"
	is "a Pod's container, through the proxy: 200 and the far host's body" "${lines[0]:-}" "200 from the pod's network $MARK"
	is "a Pod's container, straight (the transparent listener): 200 and the far host's body" "${lines[1]:-}" "200 from the pod's network $MARK"
	is "a Pod's container: an undeclared host through the proxy: 403 naming the rule" "${lines[2]:-}" \
		"403 berth: refused by the egress policy: 1.2.3.202:80 (not declared)"
	is "a Pod's container: an undeclared host straight: reset (ECONNRESET)" "${lines[3]:-}" ECONNRESET
	is "a Pod's container: the far host got exactly the two declared requests" "$(sort "$log")" \
		"1.2.3.200 GET /pod.txt?direct host=1.2.3.200:80
1.2.3.200 GET /pod.txt?proxy host=1.2.3.200"
	is "a Pod's container shares the pause's IPC namespace" "${lines[4]:-}" \
		"$(pod exec "$pause" readlink /proc/self/ns/ipc 2>&1)"
	local pnet
	pnet=$(ip netns exec "$pn" readlink /proc/self/ns/net)
	if [[ ${lines[5]:-} == net:\[* ]] && [ "${lines[5]}" != "$pnet" ]; then
		pass "a Pod's container with the annotation: a network namespace of its own, not the pod's (${lines[5]})"
	else
		fail "a Pod's container with the annotation: a network namespace of its own" "got '${lines[5]:-}', the pod's $pnet"
	fi
	pod rm -f -t 0 "$pause" >/dev/null 2>&1
	is "a Pod's network: no state left under the runtime's --root" "$(state_left)" ""
}
if [ "$(id -u)" -eq 0 ] && berth_only "a Pod's network, with egress (berth.dev/allow-hosts)"; then pod_egress; fi

# ------------------------------------------------- fields berth cannot honour
# Each is honoured by runc (the field reaches the bundle: the set-up is
# right) and refused by berth, naming the field, with nothing left behind:
# no container, no state under the runtime's --root, no process.
# refused DESC FIELD HONOURED PODMAN-ARGS...: HONOURED OUTPUT is true when
# runc honoured the field.
refused() {
	local desc=$1 field=$2 honoured=$3 rc out before cid
	shift 3
	before=$(wc -l <"$TOP/runtime.log")
	out=$(pod "$@" 2>&1)
	rc=$?
	if [ "$OCI_RUNTIME" = runc ]; then
		if [ "$rc" -eq 0 ] && "$honoured" "$out"; then
			pass "$desc: runc honours it (the field is in the bundle)"
		else
			fail "$desc: runc honours it (the field is in the bundle)" "exit $rc" "$out"
		fi
		skip "$desc: refused by berth, naming \`$field\`, nothing left" "$BERTH_WHY"
		return
	fi
	cid=$(tail -n +"$((before + 1))" "$TOP/runtime.log" | sed -n 's/.* create .* \([0-9a-f]\{64\}\)$/\1/p' | head -1)
	# FIELD may be a glob: rootless podman binds a --device as a mount
	# (`mounts[N]` naming it) where rootful podman writes linux.devices
	# shellcheck disable=SC2053
	if [ "$rc" -eq 126 ] && [[ $out == *\`$field* ]]; then
		pass "$desc: refused (podman exit 126), the error names \`$field\`"
	else
		fail "$desc: refused (podman exit 126), the error names \`$field\`" "exit $rc" "$out"
	fi
	"$honoured" "$out" && fail "$desc: refused before it took effect" "it did" "$out"
	is "$desc: no container left" "$(pod ps -a -q 2>&1)" ""
	is "$desc: no state left under the runtime's --root" "$(state_left)" ""
	# podman's exit command (`podman container cleanup ID`) may still be
	# ending: what is left after 5 s is a failure
	for _ in $(seq 50); do [ -z "$(procs_with "$cid")" ] && break; sleep 0.1; done
	[ -n "$cid" ] && is "$desc: no process of container ${cid:0:12} left" "$(procs_with "$cid")" ""
}
# The hook runs on the host (prestart: in the runtime's namespaces).
mkdir -p "$TOP/hooks"
cat >"$TOP/hooks/berth-test.json" <<EOF
{"version": "1.0.0", "hook": {"path": "$TOP/hook.sh"}, "when": {"always": true}, "stages": ["prestart"]}
EOF
printf '#!/bin/sh\necho ran >>%q\n' "$TOP/hook.ran" >"$TOP/hook.sh"
chmod 755 "$TOP/hook.sh"
hook_ran() { [ "$(cat "$TOP/hook.ran" 2>/dev/null)" = ran ]; }
refused "an OCI hook (--hooks-dir)" hooks.prestart hook_ran --hooks-dir "$TOP/hooks" run --rm "$IMG" true
kmsg_there() { [ "$(tail -1 <<<"$1")" = c ]; }
kmsg_field=linux.devices
[ "$(id -u)" -ne 0 ] && kmsg_field='mounts\[*\]` (destination `/dev/kmsg`)'
refused "a device (--device /dev/kmsg)" "$kmsg_field" kmsg_there \
	run --rm --device /dev/kmsg "$IMG" sh -c '[ -c /dev/kmsg ] && echo c || echo absent'
sysctl_set() { [ "$(tail -1 <<<"$1")" = 1 ]; }
refused "a sysctl (--sysctl kernel.shm_rmid_forced=1)" linux.sysctl.kernel.shm_rmid_forced sysctl_set \
	run --rm --sysctl kernel.shm_rmid_forced=1 "$IMG" cat /proc/sys/kernel/shm_rmid_forced

# ---------------------------------------------------- rootless, as bertht
rootless() {
	local R=$TOP/rootless u=bertht
	id "$u" >/dev/null 2>&1 || { skip "rootless podman as $u" "no user $u (tests/run creates it)"; return; }
	# shellcheck source=../../scripts/deps.sh
	. "$OCI_DIR/../../scripts/deps.sh"
	berth_subids "$u" || { fail "rootless podman as $u" "no subordinate ids, and usermod --add-subuids failed"; return; }
	# $BERTH must be reachable by the user (tests/run: a staged copy, a+rX).
	runuser -u "$u" -- test -x "$BERTH" || { skip "rootless podman as $u" "$BERTH is not executable by $u"; return; }
	mkdir -p "$R" && _oci_podman_conf "$R" && cp "$OCI_IMAGE_TAR" "$R/rootfs.tar" &&
		oci_wrapper "$R/bin/$OCI_RUNTIME" "$R/state" "$R/runtime.log" && chown -R "$u:" "$R" ||
		{ fail "rootless podman as $u" "cannot set up $R"; return; }
	OCI_CLEANUPS+=("as_user $u podman_reset $(printf %q "$R")")
	rpod() { (cd / && as_user "$u" podman_in "$R" --runtime "$R/bin/$OCI_RUNTIME" "$@"); }
	local out
	out=$(rpod import -q "$R/rootfs.tar" "$IMG" 2>&1) || { fail "rootless ($u): podman import" "failed" "$out"; return; }
	out=$(rpod run --rm "$IMG" /bin/echo hi 2>&1)
	is "rootless ($u): run --rm IMAGE /bin/echo hi" "$out" hi
	rpod run --rm "$IMG" sh -c 'exit 7' >/dev/null 2>&1
	is "rootless ($u): exit status 7" "$?" 7
	out=$(rpod run --rm "${HARD[@]}" "$IMG" sh -c '/probes/oci_try create /oci-probe; /probes/oci_try status CapEff NoNewPrivs Seccomp' 2>&1 | tr '\n' ' ')
	is "rootless ($u), $how: read-only root, no capabilities, NoNewPrivs, seccomp" "$out" "EROFS CapEff=$Z NoNewPrivs=1 Seccomp=2 "
	is "rootless ($u): no state left under the runtime's --root" "$(state_left "$R/state")" ""
}
# as_user USER FUNCTION ARGS...: a function of common.sh, as USER.
as_user() { runuser -u "$1" -- bash -c '. "$1"; shift; "$@"' sh "$OCI_DIR/common.sh" "${@:2}"; }
if [ "$(id -u)" -eq 0 ]; then rootless; fi

# ------------------------------------------------------------------- at the end
is "at the end: no container left" "$(pod ps -a -q 2>&1)" ""
is "at the end: no state left under the runtime's --root" "$(state_left)" ""
is "at the end: no process of this suite's containers left" "$(procs_with "$MARK")" ""
echo "1..$T"
[ "$FAILS" -eq 0 ]
