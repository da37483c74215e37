#!/usr/bin/env bash
# `berth oci` under the real engines: containerd (a private instance: its own
# root, state and socket under a temporary directory; `ctr run
# --runc-binary`, the runc v2 shim) and podman (its own storage, conmon,
# `--runtime`), each with a local busybox root (no image is pulled, no network
# is configured: `--network none`, or a network namespace this script makes).
#
# usage: run-oci-engines.sh /path/to/berth
# The engines need root: as another user only the runtime binary's own
# checks run, the engines' are TAP skips.  Needs
# busybox-static; containerd + ctr + containerd-shim-runc-v2 and podman +
# conmon each where installed (a missing one is a skip of its part).
# Output is TAP.
set -u
export LC_ALL=C
B=$(realpath "${1:?usage: $0 /path/to/berth}")
BB=${BUSYBOX:-/usr/bin/busybox}
if ! file -L "$BB" 2>/dev/null | grep -q 'statically linked'; then
	echo "1..0 # SKIP no statically linked busybox at $BB (apt install busybox-static)"
	exit 0
fi
T=$(mktemp -d /tmp/oci-eng.XXXXXX)
ctrd=
cleanup() {
	[ -n "$ctrd" ] && kill "$ctrd" 2>/dev/null && wait "$ctrd" 2>/dev/null
	for d in "$T"/ocistate/*/; do [ -d "$d" ] && "$B" oci --root "$T/ocistate" delete --force "$(basename "$d")" >/dev/null 2>&1; done
	[ -d "$T/pstore" ] && podman --root "$T/pstore" --runroot "$T/prun" rm -af >/dev/null 2>&1
	umount "$T/netns" 2>/dev/null
	umount -R "$T/pstore" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
n=0 fails=0 skips=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
skip() { n=$((n + 1)); skips=$((skips + 1)); echo "ok $n # SKIP $1"; }
show() { sed 's/^/# /' "$@"; }

mkdir -p "$T/rootfs/bin" "$T/rootfs/etc" "$T/rootfs/tmp" "$T/rootfs/proc" "$T/rootfs/sys" "$T/rootfs/dev"
cp "$BB" "$T/rootfs/bin/busybox"
for c in sh cat echo id sleep tty readlink true; do ln -s busybox "$T/rootfs/bin/$c"; done
# The binary an engine is given: a two-line wrapper, as docs/kubernetes.md
# installs it, and the `berth-oci` link
printf '#!/bin/sh\nexec %s oci "$@"\n' "$B" >"$T/berth-oci-wrapper"
chmod 0755 "$T/berth-oci-wrapper"
ln -s "$B" "$T/berth-oci"

# What an engine asks first (podman info, containerd): the version in runc's form
out=$("$T/berth-oci" --version)
if [ $? = 0 ] && [ "$(sed -n 2p <<<"$out")" = "spec: 1.1.0" ] && grep -q '^berth-oci version ' <<<"$out"; then
	ok "berth-oci --version: runc's form (the spec version on its own line)"
else
	not_ok "berth-oci --version"
	echo "$out" | show
fi
out=$("$T/berth-oci-wrapper" --root "$T/ocistate" state nothere 2>&1)
if [ $? = 1 ] && [ "$out" = "berth: container \`nothere\` does not exist" ]; then
	ok "the two-line wrapper: berth oci's command line, runc's words for a missing container"
else
	not_ok "the wrapper: $out"
fi
if [ "$(id -u)" != 0 ]; then
	skip "containerd: the engine runs as root"
	skip "podman: the engine runs as root (rootless podman keeps its own runtime settings)"
	echo "1..$n"
	exit $((fails > 0))
fi

# ---------------------------------------------------------- containerd
if command -v containerd >/dev/null && command -v ctr >/dev/null && command -v containerd-shim-runc-v2 >/dev/null; then
	cat >"$T/containerd.toml" <<EOF
version = 2
root = "$T/ctrd/root"
state = "$T/ctrd/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$T/ctrd.sock"
[ttrpc]
  address = "$T/ctrd.ttrpc"
EOF
	containerd --config "$T/containerd.toml" >"$T/containerd.log" 2>&1 &
	ctrd=$!
	C=(ctr --address "$T/ctrd.sock")
	for i in $(seq 1 100); do "${C[@]}" version >/dev/null 2>&1 && break; sleep 0.1; done
	R=(--runc-binary "$T/berth-oci-wrapper" --runc-root "$T/ocistate")
	out=$(timeout 60 "${C[@]}" run --rm "${R[@]}" --rootfs "$T/rootfs" e1 /bin/sh -c 'echo hi from ctr; id -u; exit 4' 2>&1)
	rc=$?
	if [ $rc = 4 ] && [ "$out" = "hi from ctr
0" ]; then
		ok "containerd: ctr run --rm through the runc v2 shim, the wrapper as the runc binary: output, status 4"
	else
		not_ok "containerd: ctr run --rm: $rc"
		echo "$out" | show
		tail -5 "$T/containerd.log" | show
	fi
	R=(--runc-binary "$T/berth-oci" --runc-root "$T/ocistate")
	timeout 60 "${C[@]}" run -d "${R[@]}" --rootfs "$T/rootfs" e2 /bin/sh -c 'sleep 1000 & sleep 1000' >/dev/null 2>"$T/err"
	sleep 0.5
	np=$("${C[@]}" task ps e2 2>/dev/null | tail -n +2 | wc -l)
	if [ "$np" = 4 ] && "${C[@]}" task ls | grep -q '^e2 .*RUNNING'; then
		ok "containerd: ctr run -d, ctr task ps (berth oci ps --format json): the supervisor, the sandbox's pid 1, sh, sleep"
	else
		not_ok "containerd: ctr task ps: $np processes"
		show "$T/err"
		"${C[@]}" task ls | show
	fi
	timeout 20 "${C[@]}" task kill e2
	for i in $(seq 1 50); do "${C[@]}" task ls | grep -q '^e2 .*STOPPED' && break; sleep 0.1; done
	st=$("${C[@]}" task ls | awk '$1 == "e2" {print $3}')
	timeout 20 "${C[@]}" task rm e2 >/dev/null 2>&1
	"${C[@]}" container rm e2 >/dev/null 2>&1
	if [ "$st" = STOPPED ] && [ ! -e "$T/ocistate/e2" ]; then
		ok "containerd: ctr task kill (TERM, forwarded), task rm: stopped, berth's state removed"
	else
		not_ok "containerd: kill and rm: $st"
		ls "$T/ocistate" | show
	fi
	timeout 60 "${C[@]}" run -d "${R[@]}" --rootfs "$T/rootfs" e3 /bin/sleep 1000 >/dev/null 2>&1
	timeout 20 "${C[@]}" task rm -f e3 >/dev/null 2>&1
	rc=$?
	"${C[@]}" container rm e3 >/dev/null 2>&1
	if [ $rc = 0 ] && [ ! -e "$T/ocistate/e3" ] && ! pgrep -f -- "--root $T/ocistate" >/dev/null; then
		ok "containerd: ctr task rm -f of a running task (delete --force): nothing left"
	else
		not_ok "containerd: task rm -f: $rc"
	fi
	out=$(timeout 60 script -eqc "ctr --address $T/ctrd.sock run -t --rm --runc-binary $T/berth-oci --runc-root $T/ocistate --rootfs $T/rootfs e4 /bin/sh -c 'tty; exit 6'" /dev/null 2>&1)
	rc=$?
	if [ $rc = 6 ] && grep -q '/dev/pts/0' <<<"$out"; then
		ok "containerd: ctr run -t: the pty over --console-socket, status 6"
	else
		not_ok "containerd: ctr run -t: $rc"
		echo "$out" | show
	fi
	out=$(timeout 60 "${C[@]}" run --rm --privileged "${R[@]}" --rootfs "$T/rootfs" e5 /bin/true 2>&1)
	rc=$?
	if [ $rc != 0 ] && grep -q 'OCI runtime create failed: config.json: `linux.devices` is not supported by berth oci' <<<"$out"; then
		ok "containerd: --privileged is refused, the reason in ctr's error (the shim reads berth's JSON log)"
	else
		not_ok "containerd: --privileged: $rc"
		echo "$out" | show
	fi
	"${C[@]}" container rm e5 >/dev/null 2>&1
	kill "$ctrd" 2>/dev/null
	wait "$ctrd" 2>/dev/null
	ctrd=
else
	skip "containerd: not installed (containerd, ctr, containerd-shim-runc-v2)"
fi

# ---------------------------------------------------------- podman
if command -v podman >/dev/null && command -v conmon >/dev/null; then
	P=(podman --root "$T/pstore" --runroot "$T/prun" --runtime "$T/berth-oci" --cgroup-manager cgroupfs)
	# podman's default rlimits may be above this host's hard limits, which
	# berth does not raise without CAP_SYS_RESOURCE (nor does runc)
	U=(--ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
	out=$(timeout 120 "${P[@]}" run --rm "${U[@]}" --network none --rootfs "$T/rootfs" /bin/sh -c 'echo hi from podman; id -u; exit 3' 2>&1)
	rc=$?
	if [ $rc = 3 ] && [ "$out" = "hi from podman
0" ]; then
		ok "podman: run --rm through conmon, berth-oci as the runtime: output, status 3"
	else
		not_ok "podman: run --rm: $rc"
		echo "$out" | show
	fi
	id=$(timeout 120 "${P[@]}" run -d "${U[@]}" --network none --rootfs "$T/rootfs" /bin/sleep 1000 2>"$T/err")
	timeout 60 "${P[@]}" stop -t 5 "$id" >/dev/null 2>&1
	st=$("${P[@]}" ps -a --format '{{.ID}} {{.Status}}' | awk -v id="${id:0:12}" '$1 == id {print $2, $3}')
	"${P[@]}" rm "$id" >/dev/null 2>&1
	if [ "$st" = "Exited (143)" ]; then
		ok "podman: run -d, stop: the TERM forwarded, Exited (143)"
	else
		not_ok "podman: run -d, stop: $st"
		show "$T/err"
	fi
	id=$(timeout 120 "${P[@]}" run -d "${U[@]}" --network none --rootfs "$T/rootfs" /bin/sleep 1000 2>"$T/err")
	out=$(timeout 60 "${P[@]}" exec "$id" /bin/sh -c 'echo in-exec; exit 4' 2>&1)
	rc=$?
	"${P[@]}" rm -f "$id" >/dev/null 2>&1
	if [ $rc = 4 ] && [ "$out" = in-exec ]; then
		ok "podman: exec runs in the container, its status 4"
	else
		not_ok "podman: exec: $rc"
		echo "$out" | show
	fi
	# a network namespace this script makes, joined by path (a pod's)
	touch "$T/netns"
	if unshare --net="$T/netns" true 2>/dev/null; then
		want=$(nsenter --net="$T/netns" readlink /proc/self/ns/net)
		out=$(timeout 120 "${P[@]}" run --rm "${U[@]}" --network "ns:$T/netns" --rootfs "$T/rootfs" /bin/readlink /proc/self/ns/net 2>&1)
		if [ "$out" = "$want" ]; then
			ok "podman: --network ns:PATH: the supervisor joins that namespace, the container shares it ($want)"
		else
			not_ok "podman: --network ns:PATH: got \`$out\`, want \`$want\`"
		fi
	else
		skip "podman: no network namespace could be made for the join test"
	fi
	out=$(timeout 120 "${P[@]}" run --rm "${U[@]}" --network host --rootfs "$T/rootfs" /bin/true 2>&1)
	rc=$?
	if [ $rc != 0 ] && grep -q 'has no `network`: the container would share the host'"'"'s network; berth refuses' <<<"$out"; then
		ok "podman: --network host is refused, berth's reason in podman's error"
	else
		not_ok "podman: --network host: $rc"
		echo "$out" | show
	fi
else
	skip "podman: not installed (podman, conmon)"
fi

echo "1..$n"
exit $((fails > 0))
