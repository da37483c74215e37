#!/bin/bash
# tests/vm/guest-harness.sh - berth-vminit in a real microVM, without the host
# runtime (`berth run --runtime vm` replaces this developer tool once its own
# tests boot the guest): a staging tree served by virtiofsd, an initramfs of
# berth-vminit alone, the pinned kernel under TCG, and tests/vm/guest_driver.c
# on the channel in place of berth.  Prints TAP.
#
# usage: tests/vm/guest-harness.sh BUILD_DIR     (as root; the kernel's .deb
#        is fetched once into /var/tmp/berth-vm-cache, through apt with a
#        private configuration, and checked against its pinned sha256;
#        BERTH_HARNESS_KEEP=1 keeps the consoles and logs in /tmp)
#
# Checks: probe mode prints its one line; a run writes into the host's
# workspace (owned there by U), its output and exit status come back, the
# sandbox inside refuses /etc/shadow and a write to /usr, and its
# measurement's verdict is ENFORCED with the cgroup v2 limits; a POLICY that
# does not match START's digest is refused with ERROR (status 125); a pty
# with its window size, SIGNAL, --timeout, and a host that hangs up (the
# sandbox killed, the VM off).
set -u
build=$(readlink -f -- "${1:?usage: guest-harness.sh BUILD_DIR}")
vminit=$build/berth-vminit
driver=$build/tests/vm_guest_driver
[ "$(id -u)" = 0 ] || { echo "guest-harness: run as root (mounts, virtiofsd)" >&2; exit 2; }
[ -x "$vminit" ] && [ -x "$driver" ] || { echo "guest-harness: build $vminit and $driver first" >&2; exit 2; }

# The pins (src/vm/pins.h, docs/vm.md's contract).
kpkg=linux-image-6.12.117+deb13-cloud-amd64
kver=6.12.117-1
deb_sha=e9893e5295d0549b8852611f12a4b8b5f6cc4b8128dcc2086b9847793b904ab7
vmlinuz_path=boot/vmlinuz-6.12.117+deb13-cloud-amd64
vmlinuz_sha=ed8f0dbdbefe3994093937f5ee934818ae902b88cb0b6bc423811c10d55b87b0
cache=/var/tmp/berth-vm-cache
deb=$cache/${kpkg}_${kver}_amd64.deb

# Re-run inside a private mount namespace: every mount below goes with it.
if [ -z "${BERTH_HARNESS_NS:-}" ]; then
	BERTH_HARNESS_NS=1 exec unshare -m --propagation private -- "$0" "$@"
fi

n=0
fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); fail=1; echo "not ok $n - $1"; shift; for l in "$@"; do echo "#   $l"; done; }

top=$(mktemp -d /tmp/berth-vm-harness.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	umount -R "$top/staging" 2>/dev/null
	if [ -n "${BERTH_HARNESS_KEEP:-}" ]; then echo "# kept $top" >&2; else rm -rf "$top"; fi
}
trap cleanup EXIT

# ---- the kernel: the pinned .deb, through apt with a private configuration
# (the mirror is the host's own, read from its sources), checked by sha256
fetch_kernel() {
	local a=$cache/apt-harness uri
	uri=$(sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/debian.sources | head -n 1)
	[ -n "$uri" ] || { echo "# no URIs in /etc/apt/sources.list.d/debian.sources" >&2; return 1; }
	mkdir -p "$a/state/lists/partial" "$a/cache/archives/partial" "$a/etc/apt.conf.d" "$a/etc/preferences.d"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri trixie main" >"$a/etc/sources.list"
	local opts=(-o "Dir::State=$a/state" -o "Dir::Cache=$a/cache" -o "Dir::Etc=$a/etc"
		-o "Dir::Etc::sourcelist=$a/etc/sources.list" -o "Dir::Etc::sourceparts=-"
		-o "APT::Architecture=amd64" -o "Acquire::Languages=none")
	apt-get "${opts[@]}" update >"$top/apt.log" 2>&1 &&
		(cd "$cache" && apt-get "${opts[@]}" download "$kpkg=$kver" >>"$top/apt.log" 2>&1)
}
mkdir -p "$cache"
if ! echo "$deb_sha  $deb" | sha256sum -c --status 2>/dev/null; then
	fetch_kernel || { echo "Bail out! cannot fetch $kpkg $kver: $(tail -n 3 "$top/apt.log" 2>/dev/null)"; exit 1; }
fi
echo "$deb_sha  $deb" | sha256sum -c --status || { echo "Bail out! $deb does not match its pinned sha256"; exit 1; }
dpkg-deb -x "$deb" "$top/kernel" || { echo "Bail out! dpkg-deb -x $deb"; exit 1; }
kernel=$top/kernel/$vmlinuz_path
echo "$vmlinuz_sha  $kernel" | sha256sum -c --status || { echo "Bail out! $kernel does not match its pinned sha256"; exit 1; }

# ---- the initramfs: /init and the contract's directories
mkdir -p "$top/initrd"/{dev,proc,sys,mnt,newroot,tmp}
install -m 0755 "$vminit" "$top/initrd/init"
(cd "$top/initrd" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$top/initramfs.cpio" ||
	{ echo "Bail out! cpio"; exit 1; }

# ---- U: the test user when there is one (tests/run makes bertht), else 1000
if id bertht >/dev/null 2>&1; then
	uid=$(id -u bertht) gid=$(id -g bertht) user=bertht
else
	uid=1000 gid=1000 user=berth
fi

# ---- the staging tree, as the host runtime builds it (docs/vm.md, "The
# design"): a tmpfs of read-only system directories, links copied as links,
# and the workspace read-write at its own path
ws=$top/ws/project
mkdir -p "$ws"
chown "$uid:$gid" "$top/ws" "$ws"
st=$top/staging
mkdir -p "$st"
mount -t tmpfs -o mode=0755 tmpfs "$st"
for d in /usr /bin /sbin /lib /lib64 /lib32 /libx32 /etc; do
	if [ -L "$d" ]; then
		cp -P "$d" "$st$d"
	elif [ -d "$d" ]; then
		mkdir -p "$st$d"
		mount --rbind "$d" "$st$d" && mount -o remount,bind,ro "$st$d"
	fi
done
mkdir -p "$st"/{dev,proc,sys,tmp,run,home} "$st$ws"
mount --bind "$ws" "$st$ws"

# ---- one boot: virtiofsd on the staging tree, qemu, the driver on the channel
# boot NAME MODE [DRIVER ARGS...]: leaves $top/NAME.{console,out,err,rc}
boot() {
	local name=$1 mode=$2 fs=$top/$1.fs.sock ch=$top/$1.ch.sock
	shift 2
	/usr/lib/qemu/virtiofsd "--socket-path=$fs" -o "source=$st" -o sandbox=namespace -o cache=none \
		>"$top/$name.virtiofsd.log" 2>&1 &
	local vfs=$!
	pids+=("$vfs")
	for _ in $(seq 50); do [ -S "$fs" ] && break; sleep 0.1; done
	timeout 300 qemu-system-x86_64 -nodefaults -no-user-config -M q35,memory-backend=mem \
		-object memory-backend-memfd,id=mem,size=512M,share=on -accel tcg -bios /usr/share/qemu/qboot.rom \
		-m 512 -smp 1 -display none -kernel "$kernel" -initrd "$top/initramfs.cpio" \
		-append "console=hvc0 quiet panic=-1 berth.mode=$mode" \
		-chardev "file,id=c0,path=$top/$name.console" -device virtio-serial-pci -device virtconsole,chardev=c0 \
		-chardev "socket,id=ch,path=$ch,server=on,wait=off" -device virtserialport,chardev=ch,name=berth.0 \
		-chardev "socket,id=fs0,path=$fs" -device vhost-user-fs-pci,chardev=fs0,tag=root \
		-no-reboot -sandbox on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny \
		>"$top/$name.qemu.log" 2>&1 &
	local q=$!
	pids+=("$q")
	if [ "$mode" = run ]; then
		timeout 300 "$driver" "$ch" --uid "$uid" --gid "$gid" --user "$user" "$@" \
			>"$top/$name.out" 2>"$top/$name.err"
		echo $? >"$top/$name.rc"
	fi
	wait "$q"
	echo $? >"$top/$name.qrc"
	kill "$vfs" 2>/dev/null
	wait "$vfs" 2>/dev/null
}
show() { for f in "$@"; do [ -f "$f" ] && sed -n '1,40p' "$f" | sed "s|^|$(basename "$f"): |"; done; }

echo "1..17"

# 1: probe mode
boot probe probe
if tr -d '\r' <"$top/probe.console" | grep -qx 'berth-vminit: probe ok landlock_abi=[1-9][0-9]*' &&
	[ "$(cat "$top/probe.qrc")" = 0 ]; then
	ok "probe mode: $(grep -o 'landlock_abi=[0-9]*' "$top/probe.console"), and qemu ended (power off)"
else
	notok "probe mode prints its line and powers off" "qemu rc $(cat "$top/probe.qrc")" \
		"$(show "$top/probe.console" "$top/probe.qemu.log")"
fi

# 2-8: a run
boot run run -- --workspace "$ws" -- sh -c \
	"cat /proc/self/cgroup; echo hi > /workspace/f; cat /etc/shadow; echo shadow=\$?; touch /usr/x 2>&1; echo usr=\$?; echo to-stderr >&2; exit 7"
diag=("rc $(cat "$top/run.rc" 2>/dev/null)" "$(show "$top/run.out" "$top/run.err" "$top/run.console")")
if [ "$(cat "$top/run.rc" 2>/dev/null)" = 7 ] && grep -qx 'exit: 7' "$top/run.err"; then
	ok "the command's exit status (7) comes back in EXIT"
else
	notok "the command's exit status (7) comes back in EXIT" "${diag[@]}"
fi
if grep -qx ready "$top/run.err" && grep -q '^measure: [0-9]* bytes$' "$top/run.err"; then
	ok "sync 2 and 3: READY and MEASURE (this build's size), each answered with GO"
else
	notok "sync 2 and 3: READY and MEASURE, each answered with GO" "${diag[@]}"
fi
if [ "$(cat "$ws/f" 2>/dev/null)" = hi ] && [ "$(stat -c %u "$ws/f" 2>/dev/null)" = "$uid" ]; then
	ok "the file the command wrote is in the host's workspace, owned by uid $uid"
else
	notok "the file the command wrote is in the host's workspace, owned by uid $uid" "${diag[@]}"
fi
if grep -qx 'shadow=1' "$top/run.out" && grep -q 'shadow: Permission denied' "$top/run.err" &&
	! grep -q 'root:' "$top/run.out"; then
	ok "/etc/shadow is refused inside (EACCES, nothing of it printed)"
else
	notok "/etc/shadow is refused inside" "${diag[@]}"
fi
if grep -qx 'usr=1' "$top/run.out" && [ ! -e /usr/x ]; then
	ok "a write to /usr is refused inside, and nothing reached the host's /usr"
else
	notok "a write to /usr is refused inside" "${diag[@]}"
fi
if grep -qx 'to-stderr' "$top/run.err" && ! grep -q 'to-stderr' "$top/run.out"; then
	ok "stdout and stderr come back on their own channels"
else
	notok "stdout and stderr come back on their own channels" "${diag[@]}"
fi

if grep -qx 'verdict: ENFORCED' "$top/run.err" &&
	grep -q '^limits: mode 1 memory 8589934592 pids 512 landlock_abi [1-9][0-9]* seccomp 2 nnp 1 cap_eff 0$' "$top/run.err"; then
	ok "the measurement's verdict is ENFORCED: cgroup v2 limits (8 GiB, 512 tasks) in the delegated cgroup, Landlock, seccomp, NO_NEW_PRIVS, no capability"
else
	notok "the measurement's verdict is ENFORCED, with the cgroup v2 limits" "${diag[@]}"
fi

# 9-10: a corrupted POLICY
boot corrupt run --corrupt -- --workspace "$ws" -- sh -c "echo ran > /workspace/corrupt"
if [ "$(cat "$top/corrupt.rc" 2>/dev/null)" = 125 ] &&
	grep -q '^error: {"hint":.*"message":"the policy'"'"'s sha256 is `[0-9a-f]*`, and START says `[0-9a-f]*`","status":125}' \
		"$top/corrupt.err"; then
	ok "a POLICY that is not START's digest: ERROR status 125, naming both digests"
else
	notok "a POLICY that is not START's digest is refused with ERROR" "rc $(cat "$top/corrupt.rc" 2>/dev/null)" \
		"$(show "$top/corrupt.err" "$top/corrupt.console")"
fi
if [ ! -e "$ws/corrupt" ] && [ "$(cat "$top/corrupt.qrc")" = 0 ]; then
	ok "... the command never ran, and the VM powered off"
else
	notok "... the command never ran, and the VM powered off" "qemu rc $(cat "$top/corrupt.qrc")"
fi

# 11: the same policy in other bytes (indented), with their own digest
boot pretty run --pretty -- --workspace "$ws" -- sh -c "echo ran > /workspace/pretty"
if [ "$(cat "$top/pretty.rc" 2>/dev/null)" = 125 ] && [ ! -e "$ws/pretty" ] &&
	grep -q '^error: .*"message":"the policy read in the guest serialises to other bytes than the host'"'"'s","status":125}' \
		"$top/pretty.err"; then
	ok "a policy that is not in its canonical bytes (its digest right): ERROR 125, the command never ran"
else
	notok "a policy not in its canonical bytes is refused" "rc $(cat "$top/pretty.rc" 2>/dev/null)" \
		"$(show "$top/pretty.err" "$top/pretty.console")"
fi

# 12: a pty, its size from START, then from WINSZ
boot tty run --tty --winsz 40 120 -- --workspace "$ws" -- sh -c \
	'echo "tty=$(test -t 0 && test -t 2 && echo yes) $(stty size)"; sleep 3; stty size'
if [ "$(cat "$top/tty.rc" 2>/dev/null)" = 0 ] && tr -d '\r' <"$top/tty.out" | grep -qx 'tty=yes 24 80' &&
	tr -d '\r' <"$top/tty.out" | grep -qx '40 120'; then
	ok "tty: the command's stdio is a pty, 24x80 from START, then 40x120 from WINSZ"
else
	notok "tty: a pty with START's size, then WINSZ's" "rc $(cat "$top/tty.rc" 2>/dev/null)" \
		"$(show "$top/tty.out" "$top/tty.err" "$top/tty.console")"
fi

# 13: SIGNAL reaches the command
boot sig run --signal 15 -- --workspace "$ws" -- sh -c 'trap "echo got-term; exit 42" TERM; echo armed; sleep 60 & wait'
if [ "$(cat "$top/sig.rc" 2>/dev/null)" = 42 ] && grep -qx got-term "$top/sig.out"; then
	ok "SIGNAL 15 reaches the command (its trap ran, status 42)"
else
	notok "SIGNAL 15 reaches the command" "rc $(cat "$top/sig.rc" 2>/dev/null)" \
		"$(show "$top/sig.out" "$top/sig.err" "$top/sig.console")"
fi

# 14: stdin given before the command ran, and more output than one frame
boot io run --stdin 'hello-in' -- --workspace "$ws" -- sh -c 'cat; echo; seq 1 50000'
if [ "$(cat "$top/io.rc" 2>/dev/null)" = 0 ] && [ "$(head -n 1 "$top/io.out")" = hello-in ] &&
	[ "$(wc -l <"$top/io.out")" = 50001 ] && [ "$(tail -n 1 "$top/io.out")" = 50000 ]; then
	ok "stdin sent before the command ran reaches it; $(wc -c <"$top/io.out") bytes of output come back whole"
else
	notok "stdin and a long output" "rc $(cat "$top/io.rc" 2>/dev/null)" "$(show "$top/io.err" "$top/io.console")"
fi

# 15: --timeout
boot timeout run -- --workspace "$ws" --timeout 2s -- sleep 60
if [ "$(cat "$top/timeout.rc" 2>/dev/null)" = 124 ]; then
	ok "--timeout 2s: the sandbox is killed, EXIT 124"
else
	notok "--timeout 2s gives EXIT 124" "rc $(cat "$top/timeout.rc" 2>/dev/null)" \
		"$(show "$top/timeout.err" "$top/timeout.console")"
fi

# 16-17: the host hangs up: the sandbox is killed, the VM powers off
t0=$(date +%s)
boot hangup run --hangup -- --workspace "$ws" -- sh -c 'sleep 20; echo late > /workspace/late'
t1=$(date +%s)
if grep -qx hangup "$top/hangup.err" && [ "$(cat "$top/hangup.qrc")" = 0 ] && [ $((t1 - t0)) -lt 20 ]; then
	ok "a host that hangs up: the VM powers off at once ($((t1 - t0)) s)"
else
	notok "a host that hangs up: the VM powers off" "qemu rc $(cat "$top/hangup.qrc") after $((t1 - t0)) s" \
		"$(show "$top/hangup.err" "$top/hangup.console")"
fi
sleep 1
if [ ! -e "$ws/late" ]; then
	ok "... and the command was killed with it (it never wrote its file)"
else
	notok "... and the command was killed with it"
fi
exit $fail
