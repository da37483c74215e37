#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `berth test --runtime vm` and `berth dev --runtime vm` (docs/vm.md): a
# resident app (the probe fixture) booted in a microVM, with the real guest
# init installed from the .deb cache the vm suites share.
#   - refusals before a boot: an unknown runtime (2, both commands); an app
#     with `network:host` capabilities (2, named, no qemu);
#   - berth test: the boot's parity and the example pass (0), in a microVM
#     (its notice), no qemu and no state left;
#   - berth dev: a plain `berth rpc` is served by the dev's VM (one qemu);
#     a change of the app's files reboots it in a new VM (a new boot token,
#     still one qemu); SIGTERM ends it with nothing left.
# usage: run-vm-apps.sh /path/to/berth /path/to/source-tree
# As root and as an unprivileged user.  Output is TAP.
set -u
export LC_ALL=C
unset BERTH_TEST_FORCE_OFF
B=$(readlink -f -- "${1:?usage: $0 /path/to/berth /path/to/source}")
SRC=$(readlink -f -- "${2:?usage: $0 /path/to/berth /path/to/source}")
T=$(mktemp -d "${TMPDIR:-/tmp}/vm-apps.XXXXXX")
chmod 755 "$T"
export XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/config" XDG_RUNTIME_DIR="$T/run"
export BERTH_AUDIT_DIR="$T/audit" BERTH_VM_DIR="$T/g"
mkdir -p "$T/state" "$T/config" "$T/run"
chmod 700 "$T/run"
DEVPID=
cleanup() {
	[ -n "$DEVPID" ] && kill -KILL "$DEVPID" 2>/dev/null
	pkill -KILL -f -- "-name $T/run/berth/vm-" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
show() { sed 's/^/# /' "$@"; }
eq() {
	if [ "$2" == "$3" ]; then ok "$1"; else
		not_ok "$1 (got \`$(printf '%s' "$2" | head -c 300 | tr '\n' '|')\`)"
		printf 'want: %s\n' "$3" | show
		show "$T/err"
	fi
}
finish() { echo "1..$n"; [ "$fails" = 0 ]; exit; }
b() { "$B" "$@" </dev/null >"$T/out" 2>"$T/err"; RC=$?; OUT=$(cat "$T/out"); ERR=$(cat "$T/err"); }
vmq() { pgrep -f -- "-name $T/run/berth/vm-"; }
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2]))' "$1" "$2" 2>/dev/null; }
cd "$T" || exit 1
cp -r "$SRC/tests/apps/fixtures/probe" "$T/probe"
cp -r "$SRC/tests/apps/fixtures/network-host" "$T/net"
chmod -R a+rX "$T/probe" "$T/net"

# --- refusals, before a boot
b test --runtime nope probe
eq "test --runtime nope: 2, the runtimes named" "$RC $ERR" "2 berth: unknown runtime \`nope\`; this berth has: namespace, vm"
b dev --runtime nope probe
eq "dev --runtime nope: 2, the runtimes named" "$RC $ERR" "2 berth: unknown runtime \`nope\`; this berth has: namespace, vm"
b test --runtime
eq "test --runtime without a value: 2" "$RC $ERR" "2 berth: test: \`--runtime\` needs a value (namespace or vm)"

CACHE=${BERTH_VM_DEB_CACHE:-/var/tmp/berth-vm-deb-cache}
[ -d "$CACHE" ] || { mkdir -p "$CACHE" && chmod 1777 "$CACHE"; }
"$B" vm install --dir "$T/g" --deb-cache "$CACHE" >"$T/out" 2>"$T/err" </dev/null
rc=$?
eq "berth vm install of the real guest" "$rc" 0
[ "$rc" = 0 ] || finish

b test --runtime vm net
eq "test --runtime vm, an app with network:host: 2, what the runtime cannot do" \
	"$RC $(head -1 "$T/err")" "2 berth: the vm runtime cannot give \`--network proxy\` yet"
b dev --runtime vm net
eq "dev --runtime vm, an app with network:host: 2, at start" \
	"$RC $(grep -c 'cannot give `--network proxy` yet' "$T/err")" "2 1"
eq "... no qemu was started" "$(vmq | wc -l)" 0

# --- berth test
t0=$(date +%s)
b test --runtime vm probe
echo "# berth test (a boot): $(($(date +%s) - t0)) s"
eq "test --runtime vm: 0, the boot's parity passes, nothing fails" \
	"$RC $(printf '%s\n' "$OUT" | grep -c '^ok 1 - boot and export parity') $(printf '%s\n' "$OUT" | grep -c '^not ok')" "0 1 0"
printf '%s\n' "$OUT" | grep -q '^ok 2 - ping example 1' && printf '%s\n' "$OUT" | grep -qx '1\.\.2' &&
	ok "... the ping example passed, plan 1..2" || { not_ok "... the ping example passed, plan 1..2"; show "$T/out"; }
eq "... in a microVM (its notice)" "$(grep -c '^berth: microVM: qemu -accel tcg' "$T/err")" 1
eq "... no qemu, no run directory, no state left" "$(vmq | wc -l)$(ls "$T/run/berth" 2>/dev/null | grep -c '^vm-')$(ls "$T/state/berth" 2>/dev/null | grep -c probe)" 000

# --- berth dev
setpriv --pdeathsig TERM -- "$B" dev --runtime vm probe </dev/null >"$T/dev.out" 2>"$T/dev.err" &
DEVPID=$!
for _ in $(seq 600); do grep -q "watching for changes" "$T/dev.err" 2>/dev/null && break; kill -0 "$DEVPID" 2>/dev/null || break; sleep 0.2; done
grep -q "watching for changes" "$T/dev.err" && ok "dev --runtime vm: the app is ready" || { not_ok "dev --runtime vm: the app is ready"; show "$T/dev.err"; }
eq "... in a microVM (its notice)" "$(grep -c '^berth: microVM: qemu -accel tcg' "$T/dev.err")" 1
b rpc probe --export ping
eq "... a plain berth rpc is served by it (v1)" "$RC $(field "$OUT" tag)" "0 v1"
boot1=$(field "$OUT" boot)
eq "... one qemu runs for it" "$(vmq | wc -l)" 1
q1=$(vmq)
echo "# a change" >>"$T/probe/probe.py"
for _ in $(seq 600); do [ "$(grep -c '^berth: microVM: qemu' "$T/dev.err")" = 2 ] && break; sleep 0.2; done
for _ in $(seq 300); do
	b rpc probe --export ping
	[ "$RC" = 0 ] && [ "$(field "$OUT" boot)" != "$boot1" ] && break
	sleep 0.5
done
eq "... a change of its files reboots it in a new microVM (a new boot token)" \
	"$RC $([ "$(field "$OUT" boot)" != "$boot1" ] && echo new)" "0 new"
eq "... still one qemu, not the first" "$(vmq | wc -l) $([ "$(vmq)" != "$q1" ] && echo other)" "1 other"
kill -TERM "$DEVPID"
wait "$DEVPID"
rc=$?
DEVPID=
eq "... SIGTERM: berth dev exits 0" "$rc" 0
for _ in $(seq 50); do [ -z "$(vmq)" ] && break; sleep 0.2; done
eq "... no qemu, no run directory left" "$(vmq | wc -l)$(ls "$T/run/berth" 2>/dev/null | grep -c '^vm-')" 00
finish
