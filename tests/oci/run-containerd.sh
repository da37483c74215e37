#!/bin/bash
# run-containerd.sh BERTH - containerd (Debian's 1.6) with berth as the
# runc-compatible binary of its runc shim (`ctr run --runc-binary WRAPPER`,
# io.containerd.runc.v2: tests/oci/common.sh), on the test image of
# tests/oci/image.sh imported from its OCI archive; and first the runtime's
# own command line as the shim drives it, on a bundle of that image.
# RUNTIME=runc runs the same checks on runc (docs/oci.md, "Tests").
#   the runtime: create (the container waits before its command: state
#   `created`), start (`running`, the command's output), kill TERM
#   (`stopped`), delete (no state, no process); as root and as a user (runc:
#   a rootless bundle, `runc spec --rootless`; berth makes its own user
#   namespace)
#   containerd, as root: a containerd of the test's own (root, state, sockets
#   under its directory; no CRI plugin), stopped at the end; nothing of the
#   machine's containerd is used.  run --rm (output, exit status 7), run -d
#   then the task commands: ls (RUNNING), ps, the runtime's own state, kill
#   (SIGTERM: the exit status of the command's trap), delete; SIGKILL gives
#   137; a tty; berth's posture inside; a device berth cannot honour refused
#   with the field named and nothing left behind.  As a user this part is
#   skipped: containerd without root needs rootlesskit (not set up here).
# Prints TAP; exits 1 if a check failed.
set -u
if [ $# -ne 1 ]; then
	echo "usage: $0 BERTH" >&2
	exit 2
fi
# shellcheck source=common.sh
. "$(dirname "$0")/common.sh"
oci_init "$1"
MARK=berth-oci-$$-$RANDOM

# --------------------------------------------- the runtime's command line
BUNDLE=$TOP/bundle
mkdir -p "$BUNDLE/rootfs" && tar -C "$BUNDLE/rootfs" -xf "$OCI_IMAGE_TAR" || bail "cannot unpack the test image in $BUNDLE"
rootless=
[ "$(id -u)" -ne 0 ] && [ "$OCI_RUNTIME" = runc ] && rootless=--rootless
(cd "$BUNDLE" && runc spec $rootless) || bail "runc spec failed"
python3 - "$BUNDLE/config.json" "$MARK" <<'PY' || bail "cannot edit $BUNDLE/config.json"
import json, sys
p, mark = sys.argv[1:3]
c = json.load(open(p))
c["process"]["terminal"] = False
c["process"]["args"] = ["/bin/sh", "-c", ": %s; trap 'exit 3' TERM; echo started; while :; do sleep 0.1; done" % mark]
json.dump(c, open(p, "w"), indent=2)
PY
R=("$OCI_WRAPPER")
rstate() { "${R[@]}" state "$1" 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["status"], d["pid"])' 2>/dev/null; }
ID=c-runtime-$$
"${R[@]}" create --bundle "$BUNDLE" --pid-file "$TOP/pid" "$ID" >"$TOP/cmd.out" 2>"$TOP/err" </dev/null
rc=$?
is "create: exit status" "$rc" 0
if [ "$rc" -eq 0 ]; then
	pid=$(cat "$TOP/pid" 2>/dev/null)
	is "state after create: created, the pid of --pid-file" "$(rstate "$ID")" "created $pid"
	is "after create the command has not run yet" "$(cat "$TOP/cmd.out")" ""
	"${R[@]}" start "$ID" >/dev/null 2>&1
	is "start: exit status" "$?" 0
	for _ in $(seq 1 50); do [ -s "$TOP/cmd.out" ] && break; sleep 0.1; done
	is "after start the command runs (its output)" "$(cat "$TOP/cmd.out")" started
	is "state after start: running, the same pid" "$(rstate "$ID")" "running $pid"
	"${R[@]}" kill "$ID" TERM >/dev/null 2>&1
	is "kill ID TERM: exit status" "$?" 0
	for _ in $(seq 1 50); do [[ $(rstate "$ID") == stopped* ]] && break; sleep 0.1; done
	is "state after kill: stopped" "$(rstate "$ID" | cut -d' ' -f1)" stopped
	"${R[@]}" delete "$ID" >/dev/null 2>&1
	is "delete: exit status" "$?" 0
	"${R[@]}" state "$ID" >/dev/null 2>&1
	rc=$?
	[ "$rc" -ne 0 ] && pass "state after delete: fails (exit $rc)" || fail "state after delete: fails" "exit 0"
else
	echo "# $(head -c 600 "$TOP/err")"
	"${R[@]}" delete --force "$ID" >/dev/null 2>&1
fi
is "the runtime: no state left under its --root" "$(state_left)" ""
is "the runtime: no process of the container left" "$(procs_with "$MARK")" ""

# ------------------------------------------------------------- containerd
if [ "$(id -u)" -ne 0 ]; then
	skip "containerd with the runtime as its runc binary" "as a user: containerd without root needs rootlesskit, not set up by this suite"
	echo "1..$T"
	[ "$FAILS" -eq 0 ]
	exit
fi
if ! command -v containerd >/dev/null || ! command -v ctr >/dev/null; then bail "no containerd or ctr (Debian: containerd)"; fi

C=$TOP/containerd
mkdir -p "$C/fifo" || bail "cannot make $C"
SOCK=$C/containerd.sock
# Only what ctr needs: no CRI (it wants CNI and a pause image), no
# /opt/containerd (the opt plugin), no snapshotters but the overlay and
# native ones.
cat >"$C/config.toml" <<EOF
version = 2
root = "$C/root"
state = "$C/state"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
EOF
containerd --config "$C/config.toml" >"$C/containerd.log" 2>&1 &
CPID=$!
OCI_CLEANUPS+=("stop_containerd")
NS=berth-test
ctr_() { ctr --address "$SOCK" -n "$NS" "$@"; }
# The runtime's state of namespace $NS (the shim names its --root itself).
RSTATE=$OCI_STATE/$NS
# BERTH_OCI_SNAPSHOTTER=native: the root file systems as plain directories
# (containerd's default is overlayfs).
SNAP=${BERTH_OCI_SNAPSHOTTER:-overlayfs}
RUN=(--snapshotter "$SNAP" --fifo-dir "$C/fifo" --runc-binary "$OCI_WRAPPER" --runc-root "$OCI_STATE")
stop_containerd() {
	local c
	for c in $(ctr_ task ls -q 2>/dev/null); do ctr_ task kill -s SIGKILL "$c"; done
	sleep 0.2
	for c in $(ctr_ task ls -q 2>/dev/null); do ctr_ task delete -f "$c"; done
	for c in $(ctr_ container ls -q 2>/dev/null); do ctr_ container delete "$c"; done
	kill "$CPID" 2>/dev/null
	wait "$CPID" 2>/dev/null
	# The snapshotter's mounts (left when a container could not be deleted).
	grep -o " $C/[^ ]*" /proc/self/mountinfo | sort -r | xargs -r -n1 umount -l 2>/dev/null
}
for _ in $(seq 1 100); do
	ctr_ version >/dev/null 2>&1 && break
	kill -0 "$CPID" 2>/dev/null || break
	sleep 0.1
done
ctr_ version >/dev/null 2>&1 || bail "containerd did not start: $(tail -5 "$C/containerd.log")"
pass "containerd of the test's own is serving on $SOCK"
IMG=$OCI_IMAGE

out=$(ctr_ image import "$OCI_IMAGE_ARCHIVE" 2>&1)
if [ "$(ctr_ image ls -q 2>&1)" = "$IMG" ]; then
	pass "ctr image import of the test image's OCI archive: $IMG"
else
	fail "ctr image import of the test image's OCI archive" "no $IMG" "$out"
	echo "1..$T"
	exit 1
fi

out=$(ctr_ run --rm "${RUN[@]}" "$IMG" c-echo /bin/echo hi 2>"$TOP/err")
rc=$?
is "run --rm IMAGE /bin/echo hi: exit status" "$rc" 0
is "run --rm IMAGE /bin/echo hi: output" "$out" hi
[ "$rc" -eq 0 ] || echo "# $(head -c 600 "$TOP/err")"
ctr_ run --rm "${RUN[@]}" "$IMG" c-exit sh -c 'exit 7' >/dev/null 2>&1
is "run --rm IMAGE sh -c 'exit 7': exit status 7" "$?" 7
is "run --rm: no state left under the runtime's --root" "$(state_left "$RSTATE")" ""

# run -d, then the task commands (skipped when run -d failed: they would
# only repeat it).
before=$(wc -l <"$TOP/runtime.log")
if out=$(ctr_ run -d "${RUN[@]}" "$IMG" c-life sh -c ": $MARK; trap 'exit 3' TERM; while :; do sleep 0.1; done" 2>&1); then
	pass "run -d: exit status 0"
	calls=$(tail -n +"$((before + 1))" "$TOP/runtime.log" |
		awk '{for (i = 1; i <= NF; i++) if ($i ~ /^(create|start|state|kill|delete)$/) { print $i; break }}' | tr '\n' ' ')
	if [[ $calls == "create start"* ]]; then
		pass "run -d: the shim called the runtime's create, then start ($calls)"
	else
		fail "run -d: the shim called the runtime's create, then start" "calls: $calls" "$(tail -5 "$TOP/runtime.log")"
	fi
	line=$(ctr_ task ls 2>&1 | awk '$1 == "c-life"')
	pid=$(awk '{print $2}' <<<"$line")
	is "task ls: c-life RUNNING" "$(awk '{print $1, $3}' <<<"$line")" "c-life RUNNING"
	ps=$(ctr_ task ps c-life 2>&1 | awk 'NR > 1 {print $1}' | tr '\n' ' ')
	if [[ " $ps " == *" $pid "* ]]; then
		pass "task ps: lists the container's process $pid (the task's pid)"
	else
		fail "task ps: lists the container's process $pid (the task's pid)" "got '$ps'"
	fi
	st=$("$OCI_WRAPPER" --root "$RSTATE" state c-life 2>&1)
	is "the runtime's state c-life: running, pid $pid" \
		"$(printf '%s' "$st" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["status"], d["pid"])' 2>/dev/null)" \
		"running $pid"
	ctr_ task kill c-life >/dev/null 2>&1
	is "task kill (SIGTERM): exit status" "$?" 0
	for _ in $(seq 1 50); do [ "$(ctr_ task ls 2>/dev/null | awk '$1 == "c-life" {print $3}')" = STOPPED ] && break; sleep 0.1; done
	is "task ls after kill: STOPPED" "$(ctr_ task ls 2>&1 | awk '$1 == "c-life" {print $3}')" STOPPED
	out=$(ctr_ task delete c-life 2>&1)
	rc=$?
	is "task delete: exit status" "$rc" 0
	has "task delete: the exit code of the command's TERM trap (3)" "$out" "exit with non-zero exit code 3"
else
	fail "run -d: exit status 0" "failed" "$out"
fi
ctr_ container delete c-life >/dev/null 2>&1
is "container delete: no container left" "$(ctr_ container ls -q 2>&1)" ""
is "delete: no state left under the runtime's --root" "$(state_left "$RSTATE")" ""
is "delete: no process of the container left" "$(procs_with "$MARK")" ""

# SIGKILL: the waiting `ctr run` exits 128+9.
ctr_ run --rm "${RUN[@]}" "$IMG" c-kill sleep 1000 >/dev/null 2>&1 &
runpid=$!
for _ in $(seq 1 50); do [ "$(ctr_ task ls 2>/dev/null | awk '$1 == "c-kill" {print $3}')" = RUNNING ] && break; sleep 0.1; done
ctr_ task kill -s SIGKILL c-kill >/dev/null 2>&1
wait "$runpid"
is "task kill -s SIGKILL: the waiting ctr run exits 137" "$?" 137

# A tty: the shim hands the runtime a --console-socket.
out=$(script -qec "$(printf '%q ' ctr --address "$SOCK" -n "$NS" run --rm -t "${RUN[@]}" "$IMG" c-tty sh -c 'tty; [ -t 0 ] && echo in-tty')" /dev/null </dev/null 2>&1 | tr -d '\r\0')
if grep -qE '^(\^@)?/dev/pts/[0-9]+$' <<<"$out" && grep -qx in-tty <<<"$out"; then
	pass "run -t: the command's stdin is a tty ($(grep -oE '/dev/pts/[0-9]+' <<<"$out"))"
else
	fail "run -t: the command's stdin is a tty" "unexpected output" "$out"
fi

# berth's posture inside; runc is asked for it with ctr's flags (its
# default capabilities dropped one by one: ctr 1.6 knows no ALL).
HARD=()
if [ "$OCI_RUNTIME" = runc ]; then
	HARD=(--read-only --seccomp)
	for c in CHOWN DAC_OVERRIDE FSETID FOWNER MKNOD NET_RAW SETGID SETUID SETFCAP SETPCAP NET_BIND_SERVICE SYS_CHROOT \
		KILL AUDIT_WRITE; do HARD+=(--cap-drop "CAP_$c"); done
	how="runc with --read-only --seccomp and every capability dropped"
else
	how="berth's default posture"
fi
Z=0000000000000000
out=$(ctr_ run --rm "${RUN[@]}" "${HARD[@]}" "$IMG" c-posture sh -c \
	'/probes/oci_try create /oci-probe; /probes/oci_try status CapInh CapPrm CapEff CapBnd CapAmb NoNewPrivs Seccomp; /probes/oci_try mount' 2>&1 | tr '\n' ' ')
is "$how: read-only root, no capabilities, NoNewPrivs 1, Seccomp 2, mount(2) EPERM" "$out" \
	"EROFS CapInh=$Z CapPrm=$Z CapEff=$Z CapBnd=$Z CapAmb=$Z NoNewPrivs=1 Seccomp=2 EPERM "
if [ "$OCI_RUNTIME" = runc ]; then
	out=$(ctr_ run --rm "${RUN[@]}" "$IMG" c-plain /probes/oci_try status CapEff 2>&1)
	if [ "$out" != "CapEff=$Z" ] && [[ $out == CapEff=* ]]; then
		pass "runc without the flags: capabilities (the check above can fail: $out)"
	else
		fail "runc without the flags: capabilities (the check above can fail)" "got '$out'"
	fi
fi

# A device: runc adds it; berth refuses the bundle naming linux.devices,
# and nothing is left: no task, no state, no process.
before=$(wc -l <"$TOP/runtime.log")
out=$(ctr_ run --rm "${RUN[@]}" --device /dev/kmsg "$IMG" c-dev sh -c ": $MARK; [ -c /dev/kmsg ] && echo c || echo absent" 2>&1)
rc=$?
if [ "$OCI_RUNTIME" = runc ]; then
	if [ "$rc" -eq 0 ] && [ "$out" = c ]; then
		pass "--device /dev/kmsg: runc adds it (the field is in the bundle)"
	else
		fail "--device /dev/kmsg: runc adds it (the field is in the bundle)" "exit $rc" "$out"
	fi
	skip "--device /dev/kmsg: refused by berth, naming \`linux.devices\`, nothing left" "$BERTH_WHY"
else
	if [ "$rc" -ne 0 ] && [[ $out == *"\`linux.devices"* ]]; then
		pass "--device /dev/kmsg: refused, the error names \`linux.devices\`"
	else
		fail "--device /dev/kmsg: refused, the error names \`linux.devices\`" "exit $rc" "$out"
	fi
	ctr_ container delete c-dev >/dev/null 2>&1
	is "--device: no task left" "$(ctr_ task ls -q 2>&1)" ""
	is "--device: no state left under the runtime's --root" "$(state_left "$RSTATE")" ""
	is "--device: no process left" "$(procs_with "$MARK")" ""
fi
ctr_ container delete c-dev >/dev/null 2>&1

# ------------------------------------------- a Pod, as the CRI makes one
# containerd's CRI runs a Pod's pause container first, then each container
# of the Pod with linux.namespaces network, ipc and uts path=/proc/PID/ns/TYPE,
# PID the pause task's (the runtime's pid file: under berth the pause's
# supervisor, which stands for its sandbox): `ctr run --with-ns` makes that
# bundle.
if ctr_ run -d "${RUN[@]}" "$IMG" c-pause sh -c ": $MARK; exec sleep 1000" >/dev/null 2>"$TOP/err"; then
	ppid=$(ctr_ task ls 2>/dev/null | awk '$1 == "c-pause" {print $2}')
	ns1=$(ctr_ task exec --exec-id ns c-pause sh -c "$NSOF" 2>&1)
	WITH=(--with-ns "network:/proc/$ppid/ns/net" --with-ns "ipc:/proc/$ppid/ns/ipc" --with-ns "uts:/proc/$ppid/ns/uts")
	out=$(ctr_ run --rm "${RUN[@]}" "${WITH[@]}" "$IMG" c-app sh -c "$NSOF" 2>&1)
	if [[ $ns1 == "ipc:["*"uts:["*"net:["* ]] && [ "$out" = "$ns1" ]; then
		pass "a Pod's container joins the pause container's network, IPC and UTS namespaces ($ns1)"
	else
		fail "a Pod's container joins the pause container's network, IPC and UTS namespaces" "pause: '$ns1'" "$out"
	fi
	ns_not_host "the Pod" "$ns1"
	if berth_only "a Pod's container: berth's posture (no capabilities, NoNewPrivs, seccomp)"; then
		out=$(ctr_ run --rm "${RUN[@]}" "${WITH[@]}" "$IMG" c-app /probes/oci_try status CapEff NoNewPrivs Seccomp 2>&1 | tr '\n' ' ')
		is "a Pod's container: berth's posture (no capabilities, NoNewPrivs, seccomp)" "$out" "CapEff=0000000000000000 NoNewPrivs=1 Seccomp=2 "
	fi
	ctr_ task kill -s SIGKILL c-pause >/dev/null 2>&1
	for _ in $(seq 1 50); do [ "$(ctr_ task ls 2>/dev/null | awk '$1 == "c-pause" {print $3}')" = STOPPED ] && break; sleep 0.1; done
	ctr_ task delete c-pause >/dev/null 2>&1
	# the pause gone, its pid names nothing of the Pod's: refused, nothing made
	out=$(ctr_ run --rm "${RUN[@]}" "${WITH[@]}" "$IMG" c-app /bin/echo joined 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ] && [[ $out != *joined* ]]; then pass "the pause container gone: its namespaces' paths are refused (exit $rc)"; else fail "the pause container gone: its namespaces' paths are refused" "exit $rc" "$out"; fi
	ctr_ container delete c-app >/dev/null 2>&1
else
	fail "run -d: the Pod's pause container" "failed" "$(cat "$TOP/err")"
fi
ctr_ container delete c-pause >/dev/null 2>&1
is "the Pod: no state left under the runtime's --root" "$(state_left "$RSTATE")" ""

is "at the end: no task left" "$(ctr_ task ls -q 2>&1)" ""
is "at the end: no container left" "$(ctr_ container ls -q 2>&1)" ""
is "at the end: no state left under the runtime's --root" "$(state_left "$RSTATE")" ""
echo "1..$T"
[ "$FAILS" -eq 0 ]
