#!/usr/bin/env bash
# The microVM runtime (`berth run --runtime vm`, docs/vm.md) on a real qemu
# (TCG), virtiofsd and the pinned guest kernel, with the stand-in guest init
# tests/vm/fake-init.c (built beside berth as tests/vm-fake-init) in a test
# initramfs, until berth-vminit is there:
#   - refusals: an unknown runtime, --network host (exit 2, the message;
#     --network proxy is carried, run-vm-egress.sh), no installed guest and a corrupted one (125, naming `berth
#     vm install`); --dry-run refuses exactly what the run refuses and
#     prints the same policy and digest as the namespace runtime's;
#   - a boot: the file the guest's uid U creates in the workspace is the
#     caller's on the host; writes to /usr, the staging root and a --ro
#     source fail EROFS in the guest even with capabilities; stdin, stdout,
#     stderr and the exit status cross the channel; nothing is left behind;
#   - the guest's ERROR is the run's (its status and message), --timeout is
#     124, and a SIGKILL of berth takes qemu and virtiofsd with it (the
#     janitor) and removes the run directory.
# usage: run-vm.sh /path/to/berth /path/to/source-tree
# As root and as an unprivileged user.  Output is TAP.
set -u
export LC_ALL=C
B=${1:?usage: $0 /path/to/berth /path/to/source}
SRC=${2:?usage: $0 /path/to/berth /path/to/source}
INIT=${BERTH_VM_FAKE_INIT:-$(dirname "$B")/tests/vm-fake-init}
T=$(mktemp -d "${TMPDIR:-/tmp}/vm.XXXXXX")
export XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config" XDG_RUNTIME_DIR="$T/run"
mkdir -p "$T/state" "$T/config" "$T/run"
chmod 700 "$T/run"
# qemu names its run directory (-name), the only path in its argv: the
# guest's files and sockets are descriptors (docs/vm.md, "qemu")
vmq() { pgrep -f -- "-name $T/run/berth/vm-"; }
trap 'pkill -KILL -f -- "-name $T/run/berth/vm-" 2>/dev/null; rm -rf "$T"' EXIT
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { # check NAME COND...
	local name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name"; fi
}
show() { sed 's/^/# /' "$@"; }
# alive PID: a process that has not exited (a zombie has)
alive() { [ -r "/proc/$1/stat" ] && ! sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | grep -q '^[ZX]'; }
# tree PID: PID's descendants (qemu, virtiofsd and its sandbox child, the janitor)
tree() {
	local c
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		echo "$c"
		tree "$c"
	done
}
W=$T/ws
mkdir -p "$W"
cd "$W" || exit 1

# --- refusals (no boot)
"$B" run --runtime nope -- true >"$T/out" 2>"$T/err"
rc=$?
check "an unknown runtime: exit 2, the runtimes named" \
	test "$rc" = 2 -a "$(cat "$T/err")" = 'berth: unknown runtime `nope`; this berth has: namespace, vm'
for dry in "" --dry-run; do
	"$B" run $dry --runtime vm --network proxy --allow-host example.com -- true >"$T/out" 2>"$T/err"
	rc=$?
	# carried (tests/integration/run-vm-egress.sh): no guest is installed here
	check "--runtime vm --network proxy ${dry:-(run)}: not refused for the network (125, for the guest)" \
		test "$rc" = 125 -a "$(grep -c 'network' "$T/err")" = 0
	"$B" run $dry --runtime vm --network host --yes -- true >"$T/out" 2>"$T/err"
	rc=$?
	check "--runtime vm --network host ${dry:-(run)}: exit 2" \
		test "$rc" = 2 -a "$(head -1 "$T/err")" = 'berth: the vm runtime cannot give `--network host` yet'
	BERTH_VM_DIR=$T/none "$B" run $dry --runtime vm -- true >"$T/out" 2>"$T/err"
	rc=$?
	check "no installed guest ${dry:-(run)}: exit 125, names \`berth vm install\`" \
		test "$rc" = 125 -a -s "$T/err" -a ! -s "$T/out"
	grep -q 'berth vm install' "$T/err" || { not_ok "... the hint names berth vm install"; show "$T/err"; }
done
check "nothing of a refused run in the runtime directory" test -z "$(ls -A "$T/run/berth" 2>/dev/null | grep vm-)"

# an empty runtime name is no choice: refused (2) as an unknown one, dry run too
for dry in "" --dry-run; do
	"$B" run $dry --runtime '' -- true >"$T/out" 2>"$T/err"
	rc=$?
	check "--runtime '' ${dry:-(run)}: exit 2, the runtimes named, nothing printed" \
		test "$rc" = 2 -a "$(head -1 "$T/err")" = 'berth: empty runtime name; this berth has: namespace, vm' -a ! -s "$T/out"
done
# a policy or a START over one channel frame (64 KiB): refused by check, dry run too
big=$(head -c 1200 /dev/zero | tr '\0' v)
envs=()
for i in $(seq 1 60); do envs+=(--env "V$i=$big"); done
long=$(printf 'a%.0s' $(seq 1 200))
ros=()
for i in $(seq 1 40); do
	mkdir -p "$T/ro/$i/$long/$long/$long/$long"
	ros+=(--ro "$T/ro/$i/$long/$long/$long/$long:/data/$i/$long/$long/$long/$long")
done
for dry in "" --dry-run; do
	"$B" run $dry --runtime vm "${envs[@]}" -- true >"$T/out" 2>"$T/err"
	rc=$?
	check "60 --env of 1200 bytes, --runtime vm ${dry:-(run)}: exit 2, START's size, the values', the limit" \
		test "$rc" = 2 -a -n "$(head -1 "$T/err" | grep -x 'berth: the run.s START is [0-9]* bytes (72000 of them the --env values), over the 65536 bytes the vm runtime.s channel carries (its START frame)')" \
		-a ! -s "$T/out"
	"$B" run $dry --runtime vm "${ros[@]}" -- true >"$T/out" 2>"$T/err"
	rc=$?
	check "40 long --ro, --runtime vm ${dry:-(run)}: exit 2, the policy's size and the limit, the fix" \
		test "$rc" = 2 -a -n "$(head -1 "$T/err" | grep -x 'berth: the policy is [0-9]* bytes as JSON, over the 65536 bytes the vm runtime.s channel carries (its POLICY frame)')" \
		-a "$(grep -c 'hint: .*--runtime namespace' "$T/err")" = 1
done
"$B" run --dry-run "${ros[@]}" -- true >/dev/null 2>&1
check "... the namespace runtime takes that policy (0)" test "$?" = 0
check "nothing of a refused run in the runtime directory" test -z "$(ls -A "$T/run/berth" 2>/dev/null | grep vm-)"

# --- the guest: the pinned kernel, the fake init in an initramfs
# The pinned kernel as `berth vm install` fetches and verifies it (with the
# real guest init, berth-vminit beside berth, used at the end), from the
# .deb cache the vm-install suite shares (one download per machine).
CACHE=${BERTH_VM_DEB_CACHE:-/var/tmp/berth-vm-deb-cache}
[ -d "$CACHE" ] || { mkdir -p "$CACHE" && chmod 1777 "$CACHE"; }
"$B" vm install --dir "$T/real" --deb-cache "$CACHE" >"$T/kout" 2>"$T/kerr" </dev/null
real_rc=$?
check "berth vm install of the real guest (its kernel boots the fake init too)" test "$real_rc" = 0
K=
[ "$real_rc" = 0 ] && K=$T/real/vmlinuz
if [ -z "$K" ] || [ ! -x "$INIT" ]; then
	not_ok "the pinned kernel and the fake init (kernel: ${K:-none}, init: $INIT)"
	show "$T/kerr"
	echo "1..$n"
	exit 1
fi
G=$T/guest
mkdir -p "$G/ir/dev" "$G/ir/proc" "$G/ir/sys" "$G/ir/newroot" "$G/ir/tmp" "$G/ir/mnt"
cp "$INIT" "$G/ir/init" && chmod 755 "$G/ir/init"
(cd "$G/ir" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0 >"$G/initramfs.cpio")
cp "$K" "$G/vmlinuz"
guest_json() { # guest_json KERNEL-SHA
	printf '{"kernel":{"package":"linux-image-6.12.117+deb13-cloud-amd64","version":"6.12.117-1",'
	printf '"deb_sha256":"e9893e5295d0549b8852611f12a4b8b5f6cc4b8128dcc2086b9847793b904ab7","sha256":"%s"},' "$1"
	printf '"initramfs":{"sha256":"%s"},"init":{"sha256":"%s"},"modules":[]}\n' \
		"$(sha256sum <"$G/initramfs.cpio" | cut -d' ' -f1)" "$(sha256sum <"$G/ir/init" | cut -d' ' -f1)"
}
KSHA=$(sha256sum <"$G/vmlinuz" | cut -d' ' -f1)
guest_json "$KSHA" >"$G/guest.json"
export BERTH_VM_DIR=$G

# a guest.json whose kernel is not the pin, and an initramfs that does not match
cp "$G/guest.json" "$G/guest.json.good"
guest_json "$(printf '%064d' 0)" >"$G/guest.json"
"$B" run --runtime vm -- true >"$T/out" 2>"$T/err"
rc=$?
check "a guest.json whose kernel is not the pin: 125" test "$rc" = 125
grep -q 'is not the pinned one: kernel.sha256 is .0\{64\}., berth pins' "$T/err" || { not_ok "... names the pin"; show "$T/err"; }
cp "$G/guest.json.good" "$G/guest.json"
cp "$G/initramfs.cpio" "$G/initramfs.good"
printf 'X' | dd of="$G/initramfs.cpio" bs=1 seek=200 conv=notrunc status=none
"$B" run --dry-run --runtime vm -- true >"$T/out" 2>"$T/err"
rc=$?
check "a corrupted initramfs.cpio: 125 (dry run too), named, hint \`berth vm install\`" \
	test "$rc" = 125 -a "$(grep -c 'initramfs.cpio. is damaged: sha256 \|hint: .*berth vm install' "$T/err")" = 2
cp "$G/initramfs.good" "$G/initramfs.cpio"

"$B" run --dry-run --json --runtime vm -- true >"$T/vm.json" 2>"$T/err"
rc=$?
"$B" run --dry-run --json -- true >"$T/ns.json" 2>/dev/null
check "--dry-run --runtime vm: 0, the same policy and digest as the namespace runtime's, the runtime named" \
	test "$rc" = 0 -a -s "$T/vm.json" -a "$(sed 's/"runtime":"vm",//' "$T/vm.json")" = "$(sed 's/"runtime":"namespace",//' "$T/ns.json")" \
	-a "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["runtime"], json.load(open(sys.argv[2]))["runtime"])' "$T/vm.json" "$T/ns.json" 2>&1)" = "vm namespace"
"$B" run --dry-run --runtime vm -- true >"$T/out" 2>/dev/null
check "--dry-run --runtime vm (text): a line \`runtime: vm\` before the digest's" \
	test "$(tail -2 "$T/out" | head -1)" = "runtime: vm" -a -n "$(tail -1 "$T/out" | grep -x 'digest: sha256:[0-9a-f]\{64\}')"

# --- a boot: ids, read-only shares, stdio, the status
RO=$T/ro.txt
echo original >"$RO"
t0=$(date +%s)
echo typed-in | "$B" run --runtime vm --ro "$RO:/data/ro.txt" -- true >"$T/out" 2>"$T/err"
rc=$?
echo "# boot and run: $(($(date +%s) - t0)) s"
check "the guest's exit status is berth's (7)" test "$rc" = 7
check "a file the guest's uid U made in the workspace is the caller's on the host" \
	test "$(stat -c %u:%g "$W/vm-made" 2>/dev/null)" = "$(id -u):$(id -g)" -a "$(cat "$W/vm-made" 2>/dev/null)" = "made in the guest"
grep -qx 'ws-create ok' "$T/out" || { not_ok "the workspace was writable"; show "$T/out" "$T/err"; }
check "a write to /usr in the guest (with capabilities) fails EROFS" grep -qx 'usr-create EROFS' "$T/out"
check "a mkdir in the staging root fails EROFS" grep -qx 'root-mkdir EROFS' "$T/out"
check "a write to the --ro source fails EROFS, the host file unchanged" \
	test "$(grep -x 'ro-write.*' "$T/out")" = "ro-write EROFS" -a "$(cat "$RO")" = original
check "stdin reached the guest, stdout came back" grep -qx 'stdin: typed-in' "$T/out"
if [ -e /etc/shadow ] && [ "$(stat -c %a /etc/shadow)" != 644 ]; then
	check "the host's /etc/shadow cannot be read in the guest, with capabilities (through virtiofsd)" \
		grep -qx 'shadow-caps EACCES' "$T/out"
	check "... nor as U without them (the guest kernel's check)" grep -qx 'shadow-nocaps EACCES' "$T/out"
fi
check "stderr came back on stderr" grep -qx 'to stderr' "$T/err"
# the default --memory (8 GiB): the budget is /tmp's 1 GiB + 512 MiB (at
# most half the host's RAM), the guest's RAM 256 MiB more (docs/vm.md, "Memory")
half=$(($(awk '/^MemTotal:/ {print $2}' /proc/meminfo) / 2048))
want_mib=$(((half < 1536 ? half : 1536) + 256))
check "the accelerator and the guest's size ($want_mib MiB) are said" grep -qx "berth: microVM: qemu -accel tcg, $want_mib MiB, [0-9]* vCPUs\( (not KVM: .*)\)\?" "$T/err"
check "nothing is left: no run directory, no qemu" \
	test -z "$(ls -A "$T/run/berth" 2>/dev/null | grep vm-)" -a -z "$(vmq)"
[ "$fails" = 0 ] || show "$T/out" "$T/err"

# --- the guest's ERROR is the run's
"$B" run --runtime vm -- error >"$T/out" 2>"$T/err"
rc=$?
check "the guest's ERROR: its status (126) and message" \
	test "$rc" = 126 -a "$(grep -c -x 'berth: cannot execute `error`: fake' "$T/err")" = 1

# --- --timeout: 124; when berth returns, no process of the run is left:
# qemu, virtiofsd and virtiofsd's sandbox child (which outlived berth by a
# second) are waited for
"$B" run --runtime vm --timeout 3s -- hang >"$T/out" 2>"$T/err" </dev/null &
bp=$!
procs=
for _ in $(seq 1 100); do
	procs=$(tree "$bp")
	# qemu, and virtiofsd's child (a grandchild of berth's)
	[ -n "$(vmq)" ] && [ -n "$(for p in $(pgrep -P "$bp" -x virtiofsd); do pgrep -P "$p"; done)" ] && break
	sleep 0.1
done
procs=$(tree "$bp")
wait "$bp"
rc=$?
left=
for p in $procs; do alive "$p" && left="$left $p($(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null | head -c 60))"; done
check "--timeout: 124, said, nothing left: no process of the run ($(echo $procs | wc -w) seen${left:+, alive:$left})" \
	test "$rc" = 124 -a -z "$left" -a "$(echo $procs | wc -w)" -ge 4 -a -z "$(vmq)" -a -z "$(ls -A "$T/run/berth" 2>/dev/null | grep vm-)"
grep -q 'timeout of 3000 ms expired' "$T/err" || { not_ok "... the timeout is said"; show "$T/err"; }

# --- a terminal: START says so with its size, SIGWINCH is a WINSZ, raw keys
if command -v python3 >/dev/null; then
	python3 "$SRC/tests/integration/pty-drive.py" 30x100 sleep:20 'expect:start tty=true rows=30 cols=100' \
		resize:40x120 'expect:winsz 40 120' send:q -- "$B" run --runtime vm -- tty >"$T/pty" 2>&1
	check "on a terminal: the guest is told tty, 30x100; a resize reaches it; a raw key ends it (exit 0)" \
		test "$(grep -c '^ok ' "$T/pty")" = 5 -a "$(grep -c -x exit=0 "$T/pty")" = 1
	grep -q '^FAIL' "$T/pty" && show "$T/pty"
fi

# --- the library calls (apps, sessions): start, pidfd, measure, wait, free
DRV=$(dirname "$B")/tests/vm-start-driver
W2=$T/ws2
mkdir -p "$W2"
"$DRV" stdio "$W2" true >"$T/drv" 2>&1
check "start() with has_stdio: runs, measured, stdin and stdout and stderr cross, wait gives 7" \
	test "$(grep -c -x -e started -e 'pidfd ok' -e 'measured abi=6' -e 'out: stdin: typed' -e 'err: to stderr' \
		-e status=7 "$T/drv")" = 6
"$DRV" pty "$W2" tty >"$T/drvp" 2>&1
check "start() with want_pty: the guest is told its 30x100, a key on the master ends it (status 0)" \
	test "$(grep -c -x -e 'out: start tty=true rows=30 cols=100' -e status=0 "$T/drvp")" = 2
check "... nothing left" test -z "$(vmq)" -a -z "$(ls -A "$T/run/berth" 2>/dev/null | grep vm-)"
grep -q -x status=0 "$T/drvp" && grep -q -x status=7 "$T/drv" || show "$T/drv" "$T/drvp"

# --- berth's signals reach the command (SIGNAL frames)
"$B" run --runtime vm -- hang >"$T/out" 2>"$T/err" </dev/null &
bp=$!
for _ in $(seq 1 600); do
	grep -q hanging "$T/out" 2>/dev/null && break
	sleep 0.1
done
kill -TERM "$bp"
wait "$bp"
rc=$?
check "SIGTERM to berth: relayed to the command, which exits 128+15" test "$rc" = 143
check "... nothing left" test -z "$(vmq)" -a -z "$(ls -A "$T/run/berth" 2>/dev/null | grep vm-)"

# --- a signal while the guest boots ends the start: 128+N, said, nothing left
"$B" run --runtime vm -- true >"$T/out" 2>"$T/err" </dev/null &
bp=$!
for _ in $(seq 1 100); do
	[ -n "$(vmq)" ] && break
	sleep 0.05
done
kill -INT "$bp"
wait "$bp"
rc=$?
check "SIGINT while the guest boots: 130, the start said interrupted, nothing left" \
	test "$rc" = 130 -a "$(grep -c "interrupted by signal 2" "$T/err")" = 1 -a -z "$(vmq)" \
	-a -z "$(ls -A "$T/run/berth" 2>/dev/null | grep vm-)"

# --- SIGKILL of berth: qemu and virtiofsd die, the run directory goes
"$B" run --runtime vm -- hang >"$T/out" 2>"$T/err" </dev/null &
bp=$!
for _ in $(seq 1 100); do
	[ -n "$(vmq)" ] && [ -n "$(ls -A "$T/run/berth" 2>/dev/null | grep vm-)" ] && break
	sleep 0.1
done
qp=$(vmq)
fsd=$(pgrep -P "$bp" -x virtiofsd | head -1)
sleep 2
kill -KILL "$bp"
wait "$bp" 2>/dev/null
gone=no
for _ in $(seq 1 100); do
	if [ -z "$(vmq)" ] && ! alive "${fsd:-0}" &&
		[ -z "$(ls -A "$T/run/berth" 2>/dev/null | grep vm-)" ]; then
		gone=yes
		break
	fi
	sleep 0.1
done
check "berth SIGKILLed: qemu ($qp) and virtiofsd ($fsd) die, the run directory goes" \
	test -n "$qp" -a -n "$fsd" -a "$gone" = yes

# --- berth and its janitor both SIGKILLed: qemu dies (PDEATHSIG), the next
# berth's sweep removes the run directory its journal names
"$B" run --runtime vm -- hang >"$T/out" 2>"$T/err" </dev/null &
bp=$!
for _ in $(seq 1 600); do
	grep -q hanging "$T/out" 2>/dev/null && break
	sleep 0.1
done
jp=$(pgrep -P "$bp" -x berth | head -1)
[ -n "$jp" ] && kill -KILL "$jp"
sleep 0.3
kill -KILL "$bp"
wait "$bp" 2>/dev/null
for _ in $(seq 1 50); do
	[ -z "$(vmq)" ] && break
	sleep 0.1
done
left=$(ls -A "$T/run/berth" 2>/dev/null | grep -c vm-)
"$B" run -- true >"$T/out" 2>"$T/err"
check "berth and its janitor SIGKILLed: qemu dies, the next berth removes the run directory" \
	test -n "$jp" -a "$left" = 1 -a -z "$(vmq)" -a -z "$(ls -A "$T/run/berth" 2>/dev/null | grep vm-)"
grep -q 'ended without its supervisor' "$T/err" || { not_ok "... and says so"; show "$T/err"; }

# --- the real guest init (berth-vminit, installed above): a command run by
# the guest's namespace runtime, and its attestation
if [ "$real_rc" = 0 ]; then
	echo hello-real >"$W/in-real.txt"
	BERTH_VM_DIR=$T/real "$B" run --runtime vm -- sh -c \
		'id -u; cat /workspace/in-real.txt; echo made >/workspace/out-real.txt; cat /etc/shadow; touch /usr/x; exit 3' \
		>"$T/out" 2>"$T/err" </dev/null
	rc=$?
	U=$(id -u)
	[ "$U" = 0 ] && U=1000
	check "the real guest: the command's status (3), run as U ($U), reads the workspace" \
		test "$rc" = 3 -a "$(head -2 "$T/out" | tr '\n' ' ')" = "$U hello-real "
	check "... what it writes in the workspace is the caller's" \
		test "$(stat -c %u:%g "$W/out-real.txt" 2>/dev/null)" = "$(id -u):$(id -g)"
	check "... /etc/shadow is refused, /usr is read-only" \
		test "$(grep -c -e 'shadow: Permission denied' -e "/usr/x': Read-only file system" "$T/err")" = 2
	[ "$fails" = 0 ] || show "$T/out" "$T/err"
	# a reader that stops early (`| head -1`): the command gets SIGPIPE as
	# under the namespace runtime (141), instead of running on in the guest
	out=$(
		BERTH_VM_DIR=$T/real timeout 200 "$B" run --runtime vm -- yes 2>"$T/err" </dev/null | head -1
		echo "${PIPESTATUS[0]}"
	)
	rc=$(echo "$out" | tail -1)
	# (CI prints only the `not ok` lines: the reason goes in the name)
	why=
	[ "$rc" = 141 ] || why=" (got $rc: $(grep -v '^berth: microVM:' "$T/err" | head -c 300 | tr '\n' ' '))"
	check "... a reader gone (| head -1): the command gets SIGPIPE, 141, at once$why" \
		test "$rc" = 141 -a "$(echo "$out" | head -1)" = y
	[ "$rc" = 141 ] || show "$T/err"
	# the attestation (docs/attest.md, `runtime`): the microVM, the guest
	# it booted as verified (the pin's kernel, guest.json's initramfs), TCG,
	# the guest's kernel, and the guest's own measurement's verdict
	"$B" attest --last --out "$T/att.json" >/dev/null 2>"$T/err"
	want_ir=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["initramfs"]["sha256"])' "$T/real/guest.json")
	got=$(python3 -c 'import json,sys
d=json.load(open(sys.argv[1])); r=d["enforced"]["runtime"]
print(r["name"], r["kernel_sha256"], r["initramfs_sha256"], r["accelerator"], r["guest_kernel"], d["verdict"])' \
		"$T/att.json" 2>&1)
	check "... its attestation: runtime vm, the pinned kernel, the installed initramfs, tcg, ENFORCED" \
		test "$got" = "vm ed8f0dbdbefe3994093937f5ee934818ae902b88cb0b6bc423811c10d55b87b0 $want_ir tcg 6.12.117+deb13-cloud-amd64 ENFORCED"
	[ "$got" = "vm ed8f0dbdbefe3994093937f5ee934818ae902b88cb0b6bc423811c10d55b87b0 $want_ir tcg 6.12.117+deb13-cloud-amd64 ENFORCED" ] ||
		echo "# got: $got" "$(cat "$T/err")"
	"$B" attest --verify "$T/att.json" >"$T/out" 2>&1
	check "... which berth attest --verify finds valid (0)" test "$?" = 0
	# the pin: the same record naming another kernel, signed again by this
	# host's key (so only the pin check can refuse it), is INVALID to berth
	# and to contrib/verify-attestation.py (python3 and openssl only)
	K=$XDG_CONFIG_HOME/berth/keys
	python3 "$SRC/contrib/verify-attestation.py" "$T/att.json" "$K/host-ed25519.pub.pem" >"$T/out" 2>&1
	check "... contrib/verify-attestation.py finds it valid too (0)" test "$?" = 0
	python3 - "$T/att.json" "$T/att-k.json" "$K/host-ed25519.pem" <<'PYEOF'
import json, subprocess, sys
d = json.load(open(sys.argv[1]))
d.pop("signature")
d["enforced"]["runtime"]["kernel_sha256"] = "0" * 64
canon = json.dumps(d, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
open(sys.argv[2] + ".msg", "wb").write(canon)
sig = subprocess.run(["openssl", "pkeyutl", "-sign", "-inkey", sys.argv[3], "-rawin", "-in", sys.argv[2] + ".msg"],
                     capture_output=True, check=True).stdout
pub = json.load(open(sys.argv[1]))["signature"]["public_key"]
d["signature"] = {"alg": "Ed25519", "public_key": pub, "value": sig.hex()}
json.dump(d, open(sys.argv[2], "w"))
PYEOF
	"$B" attest --verify "$T/att-k.json" >"$T/out" 2>&1
	rc=$?
	check "... the record re-signed with another kernel: INVALID (1), naming the pin ($rc)" \
		test "$rc" = 1 -a "$(grep -c "not the one this berth pins" "$T/out")" = 1 -a "$(grep -c "signature" "$T/out")" = 0
	python3 "$SRC/contrib/verify-attestation.py" "$T/att-k.json" "$K/host-ed25519.pub.pem" >"$T/out" 2>&1
	rc=$?
	check "... and to contrib/verify-attestation.py (1, the pin) ($rc)" \
		test "$rc" = 1 -a "$(grep -c "not the pinned" "$T/out")" = 1
	# the accelerator (accel.h): KVM only on a KVM test boot of this guest
	# on record for this boot of the host; a record of an earlier boot, or
	# of another guest, leaves the run on TCG (and says why, when there is a
	# /dev/kvm it does not use)
	kr=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["initramfs"]["sha256"])' "$T/real/guest.json")
	for forged in "an earlier boot:00000000-0000-0000-0000-000000000000:$kr" \
		"another guest:$(cat /proc/sys/kernel/random/boot_id):$(printf '%064d' 0)"; do
		IFS=: read -r what bid irs <<<"$forged"
		printf '{"accel":"kvm","usable":true,"boot_id":"%s","kernel_sha256":"%s","initramfs_sha256":"%s","elapsed_ms":300,"reason":"forged"}\n' \
			"$bid" ed8f0dbdbefe3994093937f5ee934818ae902b88cb0b6bc423811c10d55b87b0 "$irs" >"$T/real/kvm-probe.json"
		chmod 600 "$T/real/kvm-probe.json"
		BERTH_VM_DIR=$T/real timeout 200 "$B" run --runtime vm -- true >"$T/out" 2>"$T/err" </dev/null
		rc=$?
		said=yes
		[ -e /dev/kvm ] && ! grep -q "qemu -accel tcg.*(not KVM: the KVM test boot on record .*$what" "$T/err" && said=no
		check "... a KVM test boot on record of $what: TCG, and why ($rc, $said)" \
			test "$rc" = 0 -a "$said" = yes -a "$(grep -c 'qemu -accel tcg' "$T/err")" = 1
	done
	rm -f "$T/real/kvm-probe.json"
	# the caller's terminal on stdout and stderr while stdin is not one
	# (`berth run --runtime vm -- cmd </dev/null` in a terminal): what the
	# guest writes there goes through the terminal filter, as the namespace
	# runtime's pty relay (tests/integration/run-terminal.sh)
	seq='A\033]52;c;cHduZWQ=\007B\033P+q544e\033\\C\n'
	out=$(BERTH_VM_DIR=$T/real python3 "$SRC/tests/pty-capture.py" --stdin null --stderr pty --idle 120 -- \
		"$B" run --runtime vm -- sh -c "printf '$seq'; printf '${seq/A/E}' >&2")
	out=$(python3 -c 'import sys; rc, h = sys.argv[1].split(" ", 1); b = bytes.fromhex(h)
print(rc, int(b"]52;" in b), int(b"\x1bP" in b), int(b"AB" in b and b"EB" in b))' "$out")
	check "... stdout and stderr a terminal, stdin not: no OSC 52, no DCS reaches it, the text does ($out)" \
		test "$out" = "0 0 0 1"
	# a /tmp filled past its size (the default 1 GiB, as large as the guest's
	# RAM was): ENOSPC for the writer, the guest lives on and the run ends;
	# meanwhile qemu is not root (root's runs as an id of its own)
	BERTH_VM_DIR=$T/real "$B" run --runtime vm -- sh -c \
		'head -c 1100M /dev/zero >/tmp/f; echo head=$?; head -c 1 /dev/zero >/tmp/g; echo again=$?; echo alive' \
		>"$T/out" 2>"$T/err" </dev/null &
	bp=$!
	quid=
	for _ in $(seq 1 300); do
		q=$(pgrep -P "$bp" -f qemu-system | head -1)
		[ -n "$q" ] && quid=$(awk '/^Uid:/ {print $2 ":" $3 ":" $4 ":" $5}' /proc/"$q"/status 2>/dev/null) && [ -n "$quid" ] && break
		sleep 0.1
	done
	wait "$bp"
	rc=$?
	check "the real guest: a write past /tmp's 1 GiB is ENOSPC (head 1), the command goes on, the run ends 0" \
		test "$rc" = 0 -a "$(tr '\n' ' ' <"$T/out")" = "head=1 again=1 alive " \
		-a "$(grep -c 'No space left on device' "$T/err")" -ge 1
	[ "$rc" = 0 ] || show "$T/out" "$T/err"
	if [ "$(id -u)" = 0 ]; then
		check "... root's qemu ran as a uid of its own, not 0 ($quid)" \
			test -n "$quid" -a "${quid%%:*}" != 0 -a "$quid" = "${quid%%:*}:${quid%%:*}:${quid%%:*}:${quid%%:*}"
	else
		check "... qemu ran as the caller ($quid)" test "$quid" = "$(id -u):$(id -u):$(id -u):$(id -u)"
	fi
	# a small guest (--memory 256M: RAM 512 MiB): /tmp (200M) fills to
	# ENOSPC, not the guest's RAM; a command over --memory is OOM-killed
	# (137), said, and the run ends normally
	if command -v python3 >/dev/null; then
		BERTH_VM_DIR=$T/real timeout 200 "$B" run --runtime vm --memory 256M --tmp-size 200M -- sh -c \
			'head -c 300M /dev/zero >/tmp/f; echo head=$?; exec python3 -c "b = b\"a\" * (400 << 20)"' \
			>"$T/out" 2>"$T/err" </dev/null
		rc=$?
		check "the real guest, --memory 256M --tmp-size 200M: /tmp is ENOSPC, the allocation OOM-killed (137), said (rc $rc, out $(tr '\n' ' ' <"$T/out"), err $(grep -v -e 'No space' -e 'ran out of memory' "$T/err" | head -c 300 | tr '\n' ' '))" \
			test "$rc" = 137 -a "$(cat "$T/out")" = "head=1" -a "$(grep -c 'No space left on device' "$T/err")" -ge 1 \
			-a "$(grep -c -x 'berth: the command ran out of memory: the OOM killer ended 1 of its processes at its --memory limit, 256 MiB' "$T/err")" = 1
		[ "$rc" = 137 ] || show "$T/out" "$T/err"
	fi
	# the egress broker's other networks (--network api-only, --dns, --forensic's
	# api-only) are --network proxy underneath, carried by the guest's streams:
	# accepted, dry run and run alike (run-vm-egress.sh runs --network proxy)
	for f in "--network api-only" "--dns 192.0.2.53 --allow-host example.com"; do
		# shellcheck disable=SC2086
		BERTH_VM_DIR=$T/real "$B" run --dry-run --runtime vm $f -- true >"$T/out" 2>"$T/err"
		rc=$?
		check "--runtime vm $f --dry-run: accepted (0), runtime vm said" \
			test "$rc" = 0 -a "$(grep -c '^runtime: vm$' "$T/out")" = 1
	done
	# the smallest guests boot (a resident app's 64 MiB budget: RAM 320 MiB,
	# /berth's memory.max what is left past the guest's reserve)
	BERTH_VM_DIR=$T/real timeout 200 "$B" run --runtime vm --memory 64M -- sh -c 'echo small' \
		>"$T/out" 2>"$T/err" </dev/null
	rc=$?
	why=
	[ "$rc" = 0 ] || why=" (got $rc: $(grep -v '^berth: microVM:' "$T/err" | head -c 300 | tr '\n' ' '))"
	check "the real guest, --memory 64M: boots and runs (0)$why" test "$rc" = 0 -a "$(cat "$T/out")" = small
	# the guest's files replaced after the check, before qemu starts: what
	# boots is the verified bytes (sealed copies), not the new files
	cp -a "$T/real" "$T/real2"
	mkdir -p "$T/pause"
	BERTH_VM_DIR=$T/real2 BERTH_TEST_PAUSE_VM_VERIFIED=$T/pause "$B" run --runtime vm -- echo booted-verified \
		>"$T/out" 2>"$T/err" </dev/null &
	bp=$!
	for _ in $(seq 1 100); do
		[ -e "$T/pause/paused" ] && break
		sleep 0.1
	done
	head -c 65536 /dev/urandom >"$T/junk"
	cat "$T/junk" >"$T/real2/vmlinuz"              # rewritten in place
	cp "$T/junk" "$T/real2/initramfs.new" && mv "$T/real2/initramfs.new" "$T/real2/initramfs.cpio" # replaced
	touch "$T/pause/go"
	wait "$bp"
	rc=$?
	check "the guest's files rewritten and replaced after the check: the verified guest boots all the same (0)" \
		test -e "$T/pause/paused" -a "$rc" = 0 -a "$(cat "$T/out")" = booted-verified
	BERTH_VM_DIR=$T/real2 "$B" run --runtime vm -- true >/dev/null 2>"$T/err" </dev/null
	check "... and the next run refuses them (125)" test "$?" = 125
	# a namespace run's record names its runtime too
	"$B" run -- true >/dev/null 2>&1
	"$B" attest --last --out "$T/att2.json" >/dev/null 2>&1
	check "... and a namespace run's says runtime namespace" \
		test "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["enforced"]["runtime"])' "$T/att2.json" 2>&1)" = "{'name': 'namespace'}"
else
	not_ok "the real guest: not installed"
	show "$T/kerr"
fi

echo "1..$n"
[ "$fails" = 0 ]
