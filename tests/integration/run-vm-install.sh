#!/usr/bin/env bash
# `berth vm install`, `berth vm status`, `berth vm probe` and doctor's VM
# checks (docs/vm.md, "The pinned guest") against the real binary and the
# real Debian mirror of this machine's apt sources: the pinned kernel is
# downloaded (once per machine: the .deb is kept in a cache under /var/tmp,
# keyed by the pin's sha256 and checked like any download), guest.json names
# the pin and the files' digests, a second install gives a byte-identical
# initramfs, a flipped byte in vmlinuz or initramfs.cpio is found and named
# (exit 125), a cached .deb with a wrong sha256 is refused and nothing is
# installed, apt-get's failure and a machine with no Debian mirror are
# errors that say why, and doctor reports qemu, virtiofsd, the guest and
# whether KVM can run it, its test boot ending within its deadline.  The
# guest init is a tiny static program compiled here that does what
# berth-vminit does in probe mode; `berth vm probe --accel tcg` boots it.
#
# usage: run-vm-install.sh /path/to/berth
# Needs cc with a static libc (libc6-dev), cpio, qemu-system-x86 (scripts/deps.sh
# BERTH_VM_DEPS), the network to the Debian mirror the first time.  Works as root
# and as a user (the cache is shared: sticky and world-writable when this makes it;
# BERTH_VM_DEB_CACHE overrides it).  Creates nothing else but a temporary directory.  TAP.
set -u
export LC_ALL=C
if [ $# -lt 1 ]; then
	echo "usage: $0 /path/to/berth" >&2
	exit 2
fi
BERTH=$(readlink -f -- "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib.sh
. "$HERE/../lib.sh"
bail() { echo "Bail out! $*"; exit 1; }
[ -x "$BERTH" ] || bail "no berth binary at $1"
command -v cpio >/dev/null || bail "no cpio: apt-get install cpio (scripts/deps.sh)"
command -v qemu-system-x86_64 >/dev/null || bail "no qemu-system-x86_64: apt-get install --no-install-recommends qemu-system-x86"
D=$(mktemp -d /tmp/berth-vm.XXXXXX) || bail "mktemp failed"
trap 'rm -rf "$D"' EXIT
export XDG_STATE_HOME=$D/state BERTH_VM_DIR=$D/vm
unset BERTH_VMINIT BERTH_VM_APT_DIR
PIN_DEB=e9893e5295d0549b8852611f12a4b8b5f6cc4b8128dcc2086b9847793b904ab7
PIN_VMLINUZ=ed8f0dbdbefe3994093937f5ee934818ae902b88cb0b6bc423811c10d55b87b0
PKG=linux-image-6.12.117+deb13-cloud-amd64
CACHE=${BERTH_VM_DEB_CACHE:-/var/tmp/berth-vm-deb-cache}
if [ ! -d "$CACHE" ]; then
	mkdir -p "$CACHE" && chmod 1777 "$CACHE" || bail "cannot create the cache $CACHE"
fi
export BERTH_VM_DEB_CACHE=$CACHE

eq() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "want: $3" "got: $2"; fi; }
# run ARGS...: berth ARGS; $RC, $OUT, $ERR
run() { "$BERTH" "$@" >"$D/out" 2>"$D/err" </dev/null; RC=$?; OUT=$(cat "$D/out"); ERR=$(cat "$D/err"); }
# js FILE EXPR: the Python expression EXPR over the JSON document j of FILE
js() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
sha() { sha256sum "$1" | cut -d' ' -f1; }

# The guest init of probe mode: devtmpfs, the line on hvc0, power off.
cat >"$D/init.c" <<'C'
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(void)
{
	char line[80];
	int abi, fd, n;
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	n = snprintf(line, sizeof line, "berth-vminit: probe ok landlock_abi=%d\n", abi);
	fd = open("/dev/hvc0", O_WRONLY | O_NOCTTY);
	if (fd >= 0 && write(fd, line, (size_t)n) == n)
		fsync(fd);
	sync();
	reboot(RB_POWER_OFF);
	return 1;
}
C
cc -static -O2 -o "$D/init" "$D/init.c" 2>"$D/cc.err" || bail "cc -static failed: $(head -3 "$D/cc.err")"

# 1. The install, and what it put there.
run vm install --init "$D/init"
eq "install: exit 0" "$RC" 0
has "install: says what it installed" "$OUT" "installed $PKG 6.12.117-1 in $D/vm"
eq "install: the VM directory holds the three files" "$(ls -A "$D/vm" | tr '\n' ' ')" "guest.json initramfs.cpio vmlinuz "
eq "install: vmlinuz is the pinned one" "$(sha "$D/vm/vmlinuz")" "$PIN_VMLINUZ"
eq "install: guest.json names the pinned package" "$(js "$D/vm/guest.json" 'j["kernel"]["package"]+" "+j["kernel"]["version"]+" "+j["kernel"]["deb_sha256"]')" "$PKG 6.12.117-1 $PIN_DEB"
eq "install: guest.json's kernel sha256 is vmlinuz's" "$(js "$D/vm/guest.json" 'j["kernel"]["sha256"]')" "$(sha "$D/vm/vmlinuz")"
eq "install: guest.json's initramfs sha256 is initramfs.cpio's" "$(js "$D/vm/guest.json" 'j["initramfs"]["sha256"]')" "$(sha "$D/vm/initramfs.cpio")"
eq "install: guest.json's init sha256 is the init's" "$(js "$D/vm/guest.json" 'j["init"]["sha256"]')" "$(sha "$D/init")"
eq "install: guest.json lists the modules in load order" "$(js "$D/vm/guest.json" '" ".join(m["name"] for m in j["modules"])')" "vsock.ko.xz vmw_vsock_virtio_transport_common.ko.xz vmw_vsock_virtio_transport.ko.xz"
eq "install: the cache holds the verified .deb" "$(sha "$CACHE/$PIN_DEB.deb")" "$PIN_DEB"
LIST=$(cpio -t --quiet <"$D/vm/initramfs.cpio" | tr '\n' ' ')
eq "initramfs: the entries, sorted" "$LIST" "dev init lib lib/modules lib/modules/6.12.117+deb13-cloud-amd64 lib/modules/6.12.117+deb13-cloud-amd64/vmw_vsock_virtio_transport.ko.xz lib/modules/6.12.117+deb13-cloud-amd64/vmw_vsock_virtio_transport_common.ko.xz lib/modules/6.12.117+deb13-cloud-amd64/vsock.ko.xz mnt newroot proc sys tmp "
LONG=$(cpio -tv --quiet --numeric-uid-gid <"$D/vm/initramfs.cpio")
eq "initramfs: every entry owned 0:0" "$(awk '$3 != 0 || $4 != 0' <<<"$LONG")" ""
eq "initramfs: every mtime 0 (1970)" "$(grep -vc ' 1970 ' <<<"$LONG")" 0
has "initramfs: /init is mode 0755" "$(grep ' init$' <<<"$LONG")" "-rwxr-xr-x"
mkdir "$D/x" && (cd "$D/x" && cpio -id --quiet --no-absolute-filenames <"$D/vm/initramfs.cpio")
if cmp -s "$D/x/init" "$D/init"; then pass "initramfs: /init is the init, byte for byte"; else fail "initramfs: /init is the init" "differs"; fi

# 2. status.
run vm status
eq "status: exit 0 when verified" "$RC" 0
has "status: vmlinuz verified" "$OUT" "vmlinuz:   verified (sha256 $PIN_VMLINUZ)"
has "status: initramfs verified" "$OUT" "initramfs: verified"
run vm status --json
printf '%s' "$OUT" >"$D/status.json"
eq "status --json: verified, the pin" "$(js "$D/status.json" '[j["verified"], j["installed"], j["pin"]["deb_sha256"], j["pin"]["deb_size"], j["dir"]]')" "[True, True, '$PIN_DEB', 34671208, '$D/vm']"

# 3. A second install: the same bytes, replaced as a whole; a killed install's work directory swept.
cp "$D/vm/initramfs.cpio" "$D/first.cpio"
INO=$(stat -c %i "$D/vm/guest.json")
mkdir -p "$D/.vm-install.killed/x"
run vm install --init "$D/init"
eq "second install: exit 0" "$RC" 0
if cmp -s "$D/first.cpio" "$D/vm/initramfs.cpio"; then pass "second install: initramfs.cpio byte-identical"; else fail "second install: initramfs.cpio byte-identical" "differs"; fi
has "second install: the .deb from the cache" "$ERR" "using the cached $CACHE/$PIN_DEB.deb"
[ "$(stat -c %i "$D/vm/guest.json")" != "$INO" ] && pass "second install: a new guest.json" || fail "second install: a new guest.json" "same inode"
eq "second install: nothing else beside the VM directory" "$(ls -A "$D" | grep '^\.vm' | tr '\n' ' ')" ".vm-install.$(id -u).lock "

# 3b. Two installs at once: the second is refused while the first holds the lock.
flock -n "$D/.vm-install.$(id -u).lock" "$BERTH" vm install --init "$D/init" >"$D/out" 2>"$D/err" </dev/null; RC=$?
eq "install while another holds the lock: exit 125" "$RC" 125
has "install while another holds the lock: said" "$(cat "$D/err")" "berth: another \`berth vm install\` is running (it holds \`$D/.vm-install.$(id -u).lock\`)"
# 3c. An install killed at any moment leaves a whole guest (the old or the new), and the next sweeps its work directory.
for at in 0.5 1.5 2.5; do
	"$BERTH" vm install --init "$D/init" >/dev/null 2>&1 </dev/null &
	pid=$!
	sleep "$at"
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	run vm status
	eq "install killed after ${at}s: a whole guest verifies" "$RC" 0
done
run vm install --init "$D/init"
eq "install after the kills: exit 0" "$RC" 0
eq "install after the kills: the killed installs' work directories swept" "$(ls -A "$D" | grep '^\.vm' | tr '\n' ' ')" ".vm-install.$(id -u).lock "
if cmp -s "$D/first.cpio" "$D/vm/initramfs.cpio"; then pass "install after the kills: initramfs.cpio byte-identical"; else fail "install after the kills: initramfs.cpio byte-identical" "differs"; fi

# 3d. User data in the VM directory is never removed: a directory (or a link) under one of the three
# names is refused before anything is made, and a file written into it during the install is kept.
rm -rf "$D/vm5" && mkdir -p "$D/vm5/vmlinuz/precious" && echo keep >"$D/vm5/vmlinuz/precious/file.txt"
run vm install --init "$D/init" --dir "$D/vm5"
eq "a directory named vmlinuz: exit 2" "$RC" 2
has "a directory named vmlinuz: refused, named" "$ERR" "berth: \`$D/vm5\` is not a VM directory (it holds \`vmlinuz\`, not a file berth installs): refusing to replace it"
eq "a directory named vmlinuz: the user's file kept" "$(cat "$D/vm5/vmlinuz/precious/file.txt" 2>&1)" keep
rm -rf "$D/vm5" && mkdir "$D/vm5" && ln -s /etc/hostname "$D/vm5/guest.json"
run vm install --init "$D/init" --dir "$D/vm5"
eq "a link named guest.json: exit 2" "$RC" 2
[ -L "$D/vm5/guest.json" ] && pass "a link named guest.json: kept" || fail "a link named guest.json: kept" "gone"
rm -rf "$D/vm5" && cp -a "$D/vm" "$D/vm5"
"$BERTH" vm install --init "$D/init" --dir "$D/vm5" >"$D/out" 2>"$D/err" </dev/null &
pid=$!
for _ in $(seq 200); do ls -d "$D"/.vm-install.??????/ >/dev/null 2>&1 && break; sleep 0.05; done
echo keep >"$D/vm5/late.txt"
wait "$pid"; RC=$?; ERR=$(cat "$D/err")
eq "a file written during the install: exit 2" "$RC" 2
has "a file written during the install: said at the last look before the swap" "$ERR" "berth: \`$D/vm5\` is not a VM directory (it holds \`late.txt\`, not a file berth installs): refusing to replace it"
eq "a file written during the install: kept" "$(cat "$D/vm5/late.txt" 2>&1)" keep
run vm status --dir "$D/vm5"
eq "a file written during the install: the old guest still verifies" "$RC" 0
eq "a file written during the install: no work directory left" "$(ls -A "$D" | grep -v '\.lock$' | grep -c '^\.vm-install\.')" 0

# 3e. The lock is the caller's own: another user's lock (another name) does not block it, and a file
# under the caller's lock name that is not its own (planted: a link, another owner's) is refused, named.
mkdir -m 1777 "$D/sh" && touch "$D/sh/.vm-install.4242.lock"
ln -s /etc/passwd "$D/sh/.vm-install.$(id -u).lock"
run vm install --init "$D/init" --dir "$D/sh/vm"
eq "a planted link as the lock: exit 125" "$RC" 125
has "a planted link as the lock: refused, named" "$ERR" "berth: the install lock \`$D/sh/.vm-install.$(id -u).lock\` is not a file of yours (uid $(id -u))"
[ ! -e "$D/sh/vm" ] && pass "a planted link as the lock: nothing installed" || fail "a planted link as the lock: nothing installed" "exists"
rm "$D/sh/.vm-install.$(id -u).lock"
if [ "$(id -u)" = 0 ]; then
	touch "$D/sh/.vm-install.0.lock" && chown 65534 "$D/sh/.vm-install.0.lock"
	run vm install --init "$D/init" --dir "$D/sh/vm"
	eq "another user's file as root's lock: exit 125" "$RC" 125
	has "another user's file as root's lock: refused, named" "$ERR" "is not a file of yours (uid 0)"
	rm "$D/sh/.vm-install.0.lock"
fi
run vm install --init "$D/init" --dir "$D/sh/vm"
eq "another user's lock in a shared parent: no matter, exit 0" "$RC" 0
eq "a shared parent: the caller's lock beside the others'" "$(ls -A "$D/sh" | grep '^\.vm' | tr '\n' ' ')" ".vm-install.$(id -u).lock .vm-install.4242.lock "

# 4. A flipped byte in either file: status says which (125), the runtime's check refuses.
flip() { # flip FILE OFFSET
	python3 -c 'import sys
f=open(sys.argv[1],"r+b"); f.seek(int(sys.argv[2])); b=f.read(1); f.seek(int(sys.argv[2])); f.write(bytes([b[0]^1]))' "$1" "$2"
}
for f in vmlinuz initramfs.cpio; do
	rm -rf "$D/bad" && cp -a "$D/vm" "$D/bad"
	flip "$D/bad/$f" 4000
	run vm status --dir "$D/bad"
	eq "flipped byte in $f: status exit 125" "$RC" 125
	has "flipped byte in $f: the file named" "$ERR" "berth: \`$D/bad/$f\` is damaged: sha256 "
	has "flipped byte in $f: the hint" "$ERR" "berth: hint: run \`berth vm install\`"
	has "flipped byte in $f: status says not verified" "$OUT" "guest:     NOT VERIFIED"
	run vm probe --accel tcg --dir "$D/bad"
	eq "flipped byte in $f: no test boot (probe exit 1)" "$RC" 1
	has "flipped byte in $f: the probe says why" "$OUT" "is damaged"
done
run vm status --dir "$D/none"
eq "nothing installed: status exit 125" "$RC" 125
has "nothing installed: said" "$ERR" "berth: no guest installed in \`$D/none\`"

# 5. A cached .deb with a wrong sha256 (the right size): refused, nothing installed, the old guest kept.
mkdir "$D/badcache"
cp "$CACHE/$PIN_DEB.deb" "$D/badcache/$PIN_DEB.deb"
flip "$D/badcache/$PIN_DEB.deb" 1000000
run vm install --init "$D/init" --dir "$D/vm2" --deb-cache "$D/badcache"
eq "bad cached .deb: exit 125" "$RC" 125
has "bad cached .deb: refused, named" "$ERR" "berth: the cached .deb \`$D/badcache/$PIN_DEB.deb\` is not the pinned one: sha256 "
has "bad cached .deb: want the pin" "$ERR" ", want $PIN_DEB"
[ ! -e "$D/vm2" ] && pass "bad cached .deb: nothing installed" || fail "bad cached .deb: nothing installed" "$D/vm2 exists"
cp "$D/vm/guest.json" "$D/guest.before"
run vm install --init "$D/init" --deb-cache "$D/badcache"
eq "bad cached .deb over a good guest: exit 125" "$RC" 125
if cmp -s "$D/guest.before" "$D/vm/guest.json" && cmp -s "$D/first.cpio" "$D/vm/initramfs.cpio"; then
	pass "bad cached .deb over a good guest: the guest as it was"
else
	fail "bad cached .deb over a good guest: the guest as it was" "changed"
fi
run vm status
eq "bad cached .deb over a good guest: still verifies" "$RC" 0
eq "bad cached .deb: no work directory left" "$(ls -A "$D" | grep -v '\.lock$' | grep -c '^\.vm-install\.')" 0

# 5b. Files berth reads judged before a byte is read: a huge sparse or a FIFO cache entry, a FIFO --init,
# a FIFO, a link or an oversized file in the VM directory: refused at once (timeout), named, nothing left.
mkdir "$D/hugecache" "$D/fifocache"
truncate -s 40G "$D/hugecache/$PIN_DEB.deb"
timeout 60 "$BERTH" vm install --init "$D/init" --dir "$D/vm4" --deb-cache "$D/hugecache" >"$D/out" 2>"$D/err" </dev/null; RC=$?; ERR=$(cat "$D/err")
eq "a 40G sparse cached .deb: exit 125" "$RC" 125
has "a 40G sparse cached .deb: its size named, not copied" "$ERR" "berth: the cached .deb \`$D/hugecache/$PIN_DEB.deb\` is not the pinned one: 42949672960 bytes, want 34671208"
has "a 40G sparse cached .deb: the hint" "$ERR" "berth: hint: remove it (\`rm $D/hugecache/$PIN_DEB.deb\`)"
[ ! -e "$D/vm4" ] && pass "a 40G sparse cached .deb: nothing installed" || fail "a 40G sparse cached .deb: nothing installed" "$D/vm4 exists"
eq "a 40G sparse cached .deb: no work directory left" "$(ls -A "$D" | grep -v '\.lock$' | grep -c '^\.vm-install\.')" 0
mkfifo "$D/fifocache/$PIN_DEB.deb" "$D/fifo"
timeout 20 "$BERTH" vm install --init "$D/init" --dir "$D/vm4" --deb-cache "$D/fifocache" >"$D/out" 2>"$D/err" </dev/null; RC=$?; ERR=$(cat "$D/err")
eq "a FIFO as the cached .deb: exit 125, no hang" "$RC" 125
has "a FIFO as the cached .deb: named" "$ERR" "berth: \`$D/fifocache/$PIN_DEB.deb\` is not a regular file"
[ ! -e "$D/vm4" ] && pass "a FIFO as the cached .deb: nothing installed" || fail "a FIFO as the cached .deb: nothing installed" "$D/vm4 exists"
timeout 20 "$BERTH" vm install --init "$D/fifo" --dir "$D/vm4" >"$D/out" 2>"$D/err" </dev/null; RC=$?; ERR=$(cat "$D/err")
eq "a FIFO as --init: exit 125, no hang" "$RC" 125
has "a FIFO as --init: named" "$ERR" "berth: \`$D/fifo\` is not a regular file"
[ ! -e "$D/vm4" ] && pass "a FIFO as --init: nothing installed" || fail "a FIFO as --init: nothing installed" "$D/vm4 exists"
for f in vmlinuz initramfs.cpio guest.json; do
	rm -rf "$D/bad" && cp -a "$D/vm" "$D/bad" && rm "$D/bad/$f" && mkfifo "$D/bad/$f"
	timeout 20 "$BERTH" vm status --dir "$D/bad" >"$D/out" 2>"$D/err" </dev/null; RC=$?; ERR=$(cat "$D/err")
	eq "a FIFO as $f: status exit 125, no hang" "$RC" 125
	has "a FIFO as $f: named" "$ERR" "berth: \`$D/bad/$f\` is not a regular file"
	timeout 30 "$BERTH" vm probe --accel tcg --dir "$D/bad" >"$D/out" 2>"$D/err" </dev/null; RC=$?
	eq "a FIFO as $f: probe exit 1, no hang" "$RC" 1
	BERTH_VM_DIR=$D/bad timeout 60 "$BERTH" doctor --json >"$D/out" 2>/dev/null </dev/null; RC=$?
	[ "$RC" != 124 ] && pass "a FIFO as $f: doctor ends" || fail "a FIFO as $f: doctor ends" "timed out"
done
rm -rf "$D/bad" && cp -a "$D/vm" "$D/bad" && mv "$D/bad/guest.json" "$D/bad/g.json" && ln -s g.json "$D/bad/guest.json"
run vm status --dir "$D/bad"
eq "a symlinked guest.json: status exit 125" "$RC" 125
has "a symlinked guest.json: refused, named" "$ERR" "berth: \`$D/bad/guest.json\` is a symbolic link, not a regular file"
rm -f "$D/bad/guest.json" && python3 -c 'import sys; sys.stdout.write("{\"k\": \"" + "x" * 70000 + "\"}")' >"$D/bad/guest.json"
run vm status --dir "$D/bad"
eq "a 70 KB guest.json: status exit 125" "$RC" 125
has "a 70 KB guest.json: refused, named" "$ERR" "berth: \`$D/bad/guest.json\` is too large: 70009 bytes, at most 65536"

# 5c. A cache entry that is a directory or a link: named, with the fix; a VM directory the caller cannot
# read is not "not installed".
mkdir -p "$D/dircache/$PIN_DEB.deb" "$D/lnkcache"
ln -s "$CACHE/$PIN_DEB.deb" "$D/lnkcache/$PIN_DEB.deb"
run vm install --init "$D/init" --dir "$D/vm4" --deb-cache "$D/dircache"
eq "a directory as the cached .deb: exit 125" "$RC" 125
has "a directory as the cached .deb: named" "$ERR" "berth: \`$D/dircache/$PIN_DEB.deb\` is not a regular file"
has "a directory as the cached .deb: the fix" "$ERR" "berth: hint: remove it (\`rm $D/dircache/$PIN_DEB.deb\`)"
run vm install --init "$D/init" --dir "$D/vm4" --deb-cache "$D/lnkcache"
eq "a link as the cached .deb: exit 125" "$RC" 125
has "a link as the cached .deb: named" "$ERR" "berth: \`$D/lnkcache/$PIN_DEB.deb\` is a symbolic link, not a regular file"
[ ! -e "$D/vm4" ] && pass "a directory or link as the cached .deb: nothing installed" || fail "a directory or link as the cached .deb: nothing installed" "$D/vm4 exists"
if [ "$(id -u)" != 0 ]; then # root reads any directory
	mkdir -p "$D/noperm" && cp -a "$D/vm" "$D/noperm/vm" && chmod 000 "$D/noperm"
	run vm status --dir "$D/noperm/vm"
	chmod 700 "$D/noperm"
	eq "a VM directory that cannot be read: status exit 125" "$RC" 125
	has "a VM directory that cannot be read: not 'not installed'" "$OUT" "guest:     CANNOT BE READ"
	has "a VM directory that cannot be read: EACCES named" "$ERR" "berth: cannot read \`$D/noperm/vm/guest.json\`: Permission denied"
	has "a VM directory that cannot be read: the hint" "$ERR" "berth: hint: check the permissions of"
fi

# 6. apt-get failing, and no Debian mirror: errors that say why, nothing installed.
mkdir -p "$D/apt1/sources.list.d" "$D/apt2/sources.list.d" "$D/nocache"
echo "deb file:$D/no-such-mirror bookworm main" >"$D/apt1/sources.list"
BERTH_VM_APT_DIR=$D/apt1 run vm install --init "$D/init" --dir "$D/vm3" --deb-cache "$D/nocache"
eq "apt-get failing: exit 125" "$RC" 125
has "apt-get failing: its last stderr line in the message" "$ERR" "berth: \`apt-get update\` failed (exit status 100): E: The repository 'file:$D/no-such-mirror trixie Release' does not have a Release file."
[ ! -e "$D/vm3" ] && pass "apt-get failing: nothing installed" || fail "apt-get failing: nothing installed" "$D/vm3 exists"
# apt-get update exits 0 when it cannot read a mirror: its W:/Err: line is named when the download then fails.
mkdir -p "$D/apt3/sources.list.d"
echo "deb http://127.0.0.1:9/debian bookworm main" >"$D/apt3/sources.list"
BERTH_VM_APT_DIR=$D/apt3 run vm install --init "$D/init" --dir "$D/vm3" --deb-cache "$D/nocache"
eq "an unreachable mirror: exit 125" "$RC" 125
has "an unreachable mirror: named, with apt's reason" "$ERR" "berth: the mirror \`http://127.0.0.1:9/debian\` could not be read: W: Failed to fetch http://127.0.0.1:9/debian/dists/trixie/InRelease"
has "an unreachable mirror: the hint" "$ERR" "berth: hint: check the network and the mirror in the apt sources"
[ ! -e "$D/vm3" ] && pass "an unreachable mirror: nothing installed" || fail "an unreachable mirror: nothing installed" "$D/vm3 exists"
printf 'Types: deb\nURIs: https://third-party.invalid/node_20.x\nSuites: nodistro\nComponents: main\nSigned-By: /usr/share/keyrings/nodesource.gpg\n' >"$D/apt2/sources.list.d/nodesource.sources"
echo "deb http://debian.invalid/debian bookworm main" >"$D/apt2/sources.list.d/google.list.disabled"
BERTH_VM_APT_DIR=$D/apt2 run vm install --init "$D/init" --dir "$D/vm3" --deb-cache "$D/nocache"
eq "no Debian mirror: exit 125" "$RC" 125
has "no Debian mirror: the files read are named" "$ERR" "berth: no Debian mirror in the apt sources (read: $D/apt2/sources.list.d/nodesource.sources)"
run vm install --init /bin/true --dir "$D/vm3"
eq "a dynamic init: exit 125" "$RC" 125
has "a dynamic init: refused" "$ERR" "berth: \`$(readlink -f /bin/true)\` is not a static x86-64 executable"
# 6b. Paths refused before anything is made: longer than PATH_MAX (never cut short), `.`/`..`/empty
# components (X/.. would put the lock inside X), relative ones; exit 2, the option named.
LONGP=$D/long/$(python3 -c 'print("/".join(["d" * 200] * 21))')
for opt in --dir --init --deb-cache; do
	run vm install --init "$D/init" "$opt" "$LONGP"
	eq "install $opt longer than PATH_MAX: exit 2" "$RC" 2
	has "install $opt longer than PATH_MAX: named" "$ERR" "berth: $opt \`$D/long/ddd"
	has "install $opt longer than PATH_MAX: ENAMETOOLONG" "$ERR" "is too long: ${#LONGP} bytes, at most 3840"
done
for sub in status probe; do
	run vm "$sub" --dir "$LONGP"
	eq "$sub --dir longer than PATH_MAX: exit 2" "$RC" 2
	has "$sub --dir longer than PATH_MAX: named" "$ERR" "is too long: ${#LONGP} bytes"
	run vm "$sub" --dir rel/vm
	eq "$sub --dir relative: exit 2" "$RC" 2
	has "$sub --dir relative: named, a hint" "$ERR" "berth: --dir \`rel/vm\` is not an absolute path"
done
[ ! -e "$D/long" ] && pass "paths longer than PATH_MAX: nothing made" || fail "paths longer than PATH_MAX: nothing made" "$D/long exists"
for bad in "$D/x6/.." "$D/x6/./vm" "$D/x6//vm" "$D/x6/../vm"; do
	run vm install --init "$D/init" --dir "$bad"
	eq "install --dir $bad: exit 2" "$RC" 2
	has "install --dir $bad: named" "$ERR" "berth: --dir \`$bad\` has an empty, \`.\` or \`..\` component"
done
BERTH_VM_DIR=$D/x6/.. run vm status
eq "BERTH_VM_DIR with ..: exit 2" "$RC" 2
has "BERTH_VM_DIR with ..: named" "$ERR" "berth: BERTH_VM_DIR \`$D/x6/..\` has an empty"
[ ! -e "$D/x6" ] && pass "--dir X/..: nothing made (no lock in X)" || fail "--dir X/..: nothing made" "$(ls -A "$D/x6")"
run vm install --init "$D/init" --dir "$D/vm6" --deb-cache rel/cache
eq "install --deb-cache relative: exit 2" "$RC" 2
has "install --deb-cache relative: named" "$ERR" "berth: --deb-cache \`rel/cache\` is not an absolute path"
run vm install --bogus
eq "an unknown option: exit 2" "$RC" 2

# 7. The probe path: a test boot under TCG reaches the init (the KVM probe's machinery, on an accelerator that works).
run vm probe --accel tcg --json
printf '%s' "$OUT" >"$D/probe.json"
eq "probe under TCG: exit 0" "$RC" 0
eq "probe under TCG: usable, the guest's Landlock ABI" "$(js "$D/probe.json" '[j["usable"], j["booted"], j["landlock_abi"] >= 1, j["elapsed_ms"] <= j["deadline_ms"]]')" "[True, True, True, True]"

# 7a. A killed probe's directory is swept by the next probe (its pid gone); a live one's is not.
mkdir -p "$D/tp/berth-probe.999999999.dead00" "$D/tp/berth-probe.$$.alive0"
TMPDIR=$D/tp "$BERTH" vm probe --accel tcg >/dev/null 2>&1 </dev/null &
pid=$!
sleep 1
kill -KILL "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
TMPDIR=$D/tp run vm probe --accel tcg
eq "probe after a killed one: exit 0" "$RC" 0
eq "probe after a killed one: the dead probes' directories swept, a live one's kept" "$(ls -A "$D/tp" | tr '\n' ' ')" "berth-probe.$$.alive0 "

# 7b. A comma in a path that goes into a qemu option list (TMPDIR, BERTH_VM_DIR, the run directory):
# doubled, so the probe and a real boot work and a path cannot add qemu options (`,path=` of the caller's).
VMINIT=$(dirname "$BERTH")/berth-vminit
mkdir -p "$D/t,mp" "$D/ws" && chmod 0700 "$D/t,mp"
run vm install --init "$VMINIT" --dir "$D/v,m"
eq "install into a directory with a comma: exit 0" "$RC" 0
TMPDIR="$D/t,mp,path=$D/evil" run vm probe --accel tcg --dir "$D/v,m"
eq "probe, TMPDIR missing with ',path=': exit 1, no injection" "$RC" 1
[ ! -e "$D/evil" ] && pass "probe, TMPDIR with ',path=': no file at the injected path" || fail "probe, TMPDIR with ',path=': no file at the injected path" "$D/evil exists"
TMPDIR="$D/t,mp" run vm probe --accel tcg --dir "$D/v,m" --json
printf '%s' "$OUT" >"$D/probe2.json"
eq "probe with a comma in TMPDIR and the VM directory: exit 0, booted" "$RC $(js "$D/probe2.json" 'j["booted"]')" "0 True"
(cd "$D/ws" && TMPDIR="$D/t,mp" XDG_RUNTIME_DIR="$D/t,mp" BERTH_VM_DIR="$D/v,m" BERTH_VM_ACCEL=tcg timeout 120 "$BERTH" run --runtime vm -- sh -c 'echo in-guest' >"$D/out" 2>"$D/err" </dev/null); RC=$?
eq "run --runtime vm with commas in TMPDIR, XDG_RUNTIME_DIR, BERTH_VM_DIR: exit 0" "$RC" 0
has "run --runtime vm with commas: the command ran" "$(cat "$D/out")" "in-guest"
[ "$RC" = 0 ] || sed 's/^/# /' "$D/err"
[ ! -e "$D/evil" ] && pass "commas: nothing at the injected path" || fail "commas: nothing at the injected path" "$D/evil exists"

# 8. doctor: the four checks; the KVM probe ends within its deadline, with a reason when KVM is not usable.
S=$(date +%s%N)
"$BERTH" doctor --json >"$D/doctor.json" 2>"$D/err"; RC=$?
MS=$((($(date +%s%N) - S) / 1000000))
eq "doctor: exit status as the default posture says" "$RC" "$(js "$D/doctor.json" '0 if j["default_posture_enforceable"] else 1')"
check() { js "$D/doctor.json" "[c for c in j['checks'] if c['name'] == '$1'][0]$2"; }
eq "doctor: qemu found, its version" "$(check qemu '["ok"]') $(check qemu '["detail"]' | grep -c 'QEMU emulator version')" "True 1"
eq "doctor: virtiofsd found" "$(check virtiofsd '["ok"]')" "True"
eq "doctor: the guest verified" "$(check 'vm guest' '["ok"]')" "True"
eq "doctor: none of them required" "$(js "$D/doctor.json" '[c["required"] for c in j["checks"] if c["name"] in ("qemu", "virtiofsd", "vm guest", "kvm")]')" "[False, False, False, False]"
KVM_OK=$(check kvm '["ok"]')
KVM_DETAIL=$(check kvm '["detail"]')
if [ "$KVM_OK" = True ]; then
	has "doctor: KVM usable, proved by a test boot" "$KVM_DETAIL" "reached the guest init"
else
	[ -n "$(check kvm '["detail"]')" ] && [ "$KVM_DETAIL" != "not usable: " ] && pass "doctor: KVM not usable, with a reason" ||
		fail "doctor: KVM not usable, with a reason" "no reason" "$KVM_DETAIL"
	has "doctor: KVM not usable: TCG named as the fallback" "$KVM_DETAIL" "falls back to TCG"
fi
eq "doctor: the KVM probe's deadline is 10 s" "$(check kvm '["probe"]["deadline_ms"]')" 10000
eq "doctor: the KVM probe within its deadline" "$(check kvm '["probe"]["elapsed_ms"] <= 10000 + 1000')" "True"
[ "$MS" -lt 25000 ] && pass "doctor: ends in time ($MS ms)" || fail "doctor: ends in time" "$MS ms"
# doctor's KVM test boot is on record for the runtime (accel.h, kvm-probe.json): its outcome, this boot
# of the host, the guest it booted; none when no test boot was made (no usable /dev/kvm)
if [ "$(check kvm '["probe"]["booted"]')" = True ]; then
	eq "doctor's KVM test boot on record: its outcome, this host boot, this guest, 0600" \
		"$(js "$D/vm/kvm-probe.json" '[j["usable"], j["boot_id"], j["kernel_sha256"], j["initramfs_sha256"]]') $(stat -c %a "$D/vm/kvm-probe.json")" \
		"$(js "$D/vm/guest.json" "[$KVM_OK, '$(cat /proc/sys/kernel/random/boot_id)', j['kernel']['sha256'], j['initramfs']['sha256']]") 600"
	# the record is the VM directory's own: an install over it succeeds, and the old guest's record goes
	run vm install --init "$D/init"
	eq "vm install over a directory with a KVM record: exit 0, the record gone" "$RC $([ -e "$D/vm/kvm-probe.json" ] && echo kept || echo gone)" "0 gone"
else
	[ ! -e "$D/vm/kvm-probe.json" ] && pass "no KVM test boot: none on record" || fail "no KVM test boot: none on record" "$(cat "$D/vm/kvm-probe.json")"
fi
BERTH_VM_DIR=$D/none "$BERTH" doctor --json >"$D/doctor2.json" 2>/dev/null
eq "doctor without a guest: the guest check says to install" "$(js "$D/doctor2.json" '[[c["ok"], c["fix"]] for c in j["checks"] if c["name"] == "vm guest"][0]')" "[False, 'run \`berth vm install\`']"
D2=$(js "$D/doctor2.json" '[c["detail"] for c in j["checks"] if c["name"] == "kvm"][0]')
case "$D2" in
*"berth vm install"* | *"no /dev/kvm"* | *"cannot open /dev/kvm"* | *"KVM_CREATE_VM failed"* | *"KVM API"*) pass "doctor without a guest: KVM's probe needs \`berth vm install\` (or the device says no)" ;;
*) fail "doctor without a guest: KVM's probe needs \`berth vm install\`" "$D2" ;;
esac

# 9. Paths that are not UTF-8 or hold control bytes: doctor's text escapes them, the JSON stays valid
# and keeps every field.
ESCD="$D/e"$'\033'"[31mred"
BERTH_VM_DIR=$ESCD "$BERTH" doctor >"$D/out" 2>&1 </dev/null
eq "doctor (text), an ESC in BERTH_VM_DIR: no ESC byte printed" "$(grep -c $'\033' "$D/out")" 0
has "doctor (text), an ESC in BERTH_VM_DIR: shown escaped" "$(cat "$D/out")" "$D/e\\x1b[31mred"
BADU="$D/u"$'\xff'
BERTH_VM_DIR=$BADU run vm status --json
printf '%s' "$OUT" >"$D/s3.json"
eq "status --json, a non-UTF-8 VM directory: exit 125" "$RC" 125
eq "status --json, a non-UTF-8 VM directory: the dir kept, escaped" "$(js "$D/s3.json" 'j["dir"]')" "$D/u\\xff"
has "status --json, a non-UTF-8 VM directory: the error kept" "$(js "$D/s3.json" 'j["error"]["message"]')" "no guest installed in"
run vm probe --accel tcg --json --dir "$BADU"
printf '%s' "$OUT" >"$D/p3.json"
has "probe --json, a non-UTF-8 VM directory: the reason kept" "$(js "$D/p3.json" 'j["reason"]')" "$D/u\\xff"
BERTH_VM_DIR=$BADU "$BERTH" doctor --json >"$D/d3.json" 2>/dev/null </dev/null
has "doctor --json, a non-UTF-8 VM directory: the guest check kept" "$(js "$D/d3.json" '[c["detail"] for c in j["checks"] if c["name"] == "vm guest"][0]')" "$D/u\\xff"

echo "1..$T"
exit $((FAILS > 0))
