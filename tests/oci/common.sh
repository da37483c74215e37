# shellcheck shell=bash
# The set-up both oci suites share (sourced by tests/oci/run-podman.sh and
# run-containerd.sh; docs/oci.md, "Tests").  oci_init BERTH:
#   - picks the runtime: RUNTIME=berth (`berth oci`), RUNTIME=runc (proves the
#     harness on the same command line), or unset: berth, and runc when this
#     berth has no `oci` command yet (its checks of berth's own posture are
#     then skipped: "# SKIP berth oci not built"; BERTH_OCI_MUST_WORK=1 makes
#     every skip a failure);
#   - makes $TOP (removed at exit) with the runtime's wrapper $OCI_WRAPPER
#     (oci_wrapper: the runtime with its state under $OCI_STATE, each call
#     logged to $TOP/runtime.log);
#   - builds (or finds in the cache) the test image (tests/oci/image.sh).
# podman runs with a configuration and storage of the test's own
# (podman_in DIR ...: nothing of the machine's podman state is read or written).
OCI_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib.sh
. "$OCI_DIR/../lib.sh"
# shellcheck source=image.sh
. "$OCI_DIR/image.sh"

# TAP: a check that cannot run here (a skip fails under BERTH_OCI_MUST_WORK=1),
# and a check that is known to fail for now (TODO: visible, not counted).
skip() { # skip DESC REASON
	T=$((T + 1))
	if [ "${BERTH_OCI_MUST_WORK:-0}" = 1 ]; then
		FAILS=$((FAILS + 1))
		echo "not ok $T - $1 # skipped, and BERTH_OCI_MUST_WORK=1: $2"
	else
		echo "ok $T - $1 # SKIP $2"
	fi
}
todo() { # todo DESC REASON [DETAIL...]
	T=$((T + 1))
	local d=$1 r=${2//$'\n'/\\n}
	shift 2
	echo "not ok $T - $d # TODO $r"
	local l
	for l in "$@"; do printf '%s\n' "$l" | head -n "${TAP_DETAIL_LINES:-8}" | sed 's/^/#   /'; done
}
bail() {
	echo "Bail out! $*"
	exit 1
}
# is DESC GOT WANT: pass if GOT is exactly WANT.
is() {
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got '$2', expected '$3'"; fi
}

OCI_CLEANUPS=()
oci_cleanup() {
	local i
	for ((i = ${#OCI_CLEANUPS[@]} - 1; i >= 0; i--)); do eval "${OCI_CLEANUPS[$i]}" >/dev/null 2>&1; done
	if [ -n "${BERTH_OCI_KEEP:-}" ]; then echo "# kept $TOP"; else rm -rf "$TOP"; fi
}

# oci_init BERTH: see the top of this file.  Sets BERTH, TOP, OCI_RUNTIME
# (berth|runc), OCI_BIN (its command, shell-quoted), BERTH_WHY (empty when
# berth is the runtime, else why its own checks are skipped), OCI_WRAPPER,
# OCI_STATE, OCI_IMAGE_TAR, OCI_IMAGE_ARCHIVE.
oci_init() {
	BERTH=$(readlink -f -- "$1") || bail "no berth binary $1"
	[ -x "$BERTH" ] || bail "$BERTH is not executable"
	TOP=$(mktemp -d /tmp/berth-oci.XXXXXX) || bail "mktemp failed"
	chmod 755 "$TOP"
	trap oci_cleanup EXIT
	trap 'exit 130' INT TERM
	OCI_RUNTIME=${RUNTIME:-berth}
	BERTH_WHY=
	case $OCI_RUNTIME in
	runc) BERTH_WHY="RUNTIME=runc" ;;
	berth)
		local out rc
		out=$("$BERTH" oci features 2>&1)
		rc=$?
		if [ "$rc" -ne 0 ]; then
			# Only a berth without the command falls back; a failing `features` is a failure.
			if [ -z "${RUNTIME:-}" ] && [[ $out == *"unknown command \`oci\`"* ]]; then
				OCI_RUNTIME=runc
				BERTH_WHY="berth oci not built"
			else
				bail "berth oci features failed (exit $rc): $out"
			fi
		fi
		;;
	*) bail "RUNTIME=$OCI_RUNTIME: expected berth or runc" ;;
	esac
	if [ "$OCI_RUNTIME" = berth ]; then
		OCI_BIN="$(printf '%q' "$BERTH") oci"
	else
		OCI_BIN=$(command -v runc) || bail "no runc (Debian: runc)"
		OCI_BIN=$(printf '%q' "$OCI_BIN")
	fi
	OCI_STATE=$TOP/state
	# Named after the runtime: podman decides by the name what the runtime
	# supports (runtime_supports_json, in the test's containers.conf).
	OCI_WRAPPER=$TOP/bin/$OCI_RUNTIME
	oci_wrapper "$OCI_WRAPPER" "$OCI_STATE" "$TOP/runtime.log" || bail "cannot make $OCI_WRAPPER"
	oci_image_build "$OCI_DIR/.." || bail "the test image could not be built"
	local why=
	[ -n "$BERTH_WHY" ] && why="; the checks of berth's own posture are skipped: $BERTH_WHY"
	echo "# runtime: $OCI_RUNTIME ($OCI_BIN)$why"
}

# oci_wrapper PATH STATE LOG: the runtime's wrapper at PATH: the runtime
# with its state in STATE unless the engine names its own --root
# (containerd's shim does; podman does not), each call logged to LOG.
oci_wrapper() {
	mkdir -p "${1%/*}" "$2" || return 1
	: >"$3" || return 1
	cat >"$1" <<EOF
#!/bin/sh
echo "\$*" >>$(printf '%q' "$3")
case " \$* " in
*" --root "* | *" --root="*) exec $OCI_BIN "\$@" ;;
esac
exec $OCI_BIN --root $(printf '%q' "$2") "\$@"
EOF
	chmod 755 "$1"
}

# berth_only DESC: true when berth is the runtime; else the check is skipped
# (printed) and false is returned.
berth_only() {
	[ -z "$BERTH_WHY" ] && return 0
	skip "$1" "$BERTH_WHY"
	return 1
}

# state_left [DIR]: the container state directories left under the
# runtime's --root (DIR, default $OCI_STATE): none once every container was
# removed, or refused.
state_left() { find "${1:-$OCI_STATE}" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | head -5 | tr '\n' ' '; }

# procs_with MARKER: the processes whose command line holds MARKER.
procs_with() { pgrep -f -- "$1" 2>/dev/null | tr '\n' ' '; }

# ------------------------------------------------------------- namespaces
# NSOF: a shell command printing the ipc, uts and net namespaces of the
# process it runs in, on one line ("ipc:[N] uts:[N] net:[N] ").
NSOF='for t in ipc uts net; do readlink /proc/self/ns/$t; done | tr "\n" " "'
# ns_not_host WHO NSLINE: one check per namespace of NSLINE (NSOF's
# output): a namespace, and not the host's (this shell's).
ns_not_host() {
	local who=$1 line=$2 host a b k
	host=$(sh -c "$NSOF")
	for k in 1 2 3; do
		a=$(cut -d' ' -f$k <<<"$line") b=$(cut -d' ' -f$k <<<"$host")
		if [[ $a == [a-z]*:\[[0-9]*\] ]] && [ "$a" != "$b" ]; then
			pass "$who's ${a%%:*} namespace is not the host's"
		else
			fail "$who's namespace is not the host's" "$who '$a', host '$b'"
		fi
	done
}

# ------------------------------------------------------------------- podman
# A podman of the test's own in DIR: configuration, storage, run and temp
# directories, network configuration (none is made: every container gets
# netns=none), events and logs all under DIR.
#
# containers.conf: podman asks RLIMIT_NOFILE 1048576 of the runtime, more
# than the hard limit where root cannot raise it (no CAP_SYS_RESOURCE, docs/oci.md
# "Host set-up"), and runc then fails with "error setting rlimit type 7":
# default_ulimits pins the container's limits below any hard limit.
# cgroupfs and file events: there may be no systemd or journald.
# BERTH_OCI_STORAGE_DRIVER=vfs: the images' root file systems as plain
# directories (podman's default is overlay).
_oci_podman_conf() {
	local d=$1
	mkdir -p "$d/tmp" "$d/xdg" "$d/data" "$d/config" || return 1
	chmod 700 "$d/xdg"
	cat >"$d/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]
netns = "none"
log_driver = "k8s-file"

[network]
network_config_dir = "$d/networks"

[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
tmp_dir = "$d/tmp"
static_dir = "$d/storage/libpod"
volume_path = "$d/storage/volumes"
image_copy_tmp_dir = "$d/tmp"
runtime_supports_json = ["crun", "runc", "berth"]
EOF
	cat >"$d/storage.conf" <<EOF
[storage]
driver = "${BERTH_OCI_STORAGE_DRIVER:-overlay}"
graphroot = "$d/storage"
runroot = "$d/run"
rootless_storage_path = "$d/storage"
EOF
}

# podman_in DIR ARGS...: podman with DIR's configuration and storage.  As
# root the image commands (import, save, load) run in a mount namespace of
# their own with a tmpfs on /var/lib: podman 4.3 keeps containers/image's
# blob-info cache in /var/lib/containers/cache for root, wherever the
# storage is, and has no setting for it.
podman_in() {
	local d=$1
	shift
	local env=(CONTAINERS_CONF="$d/containers.conf" CONTAINERS_STORAGE_CONF="$d/storage.conf"
		TMPDIR="$d/tmp" XDG_RUNTIME_DIR="$d/xdg" XDG_DATA_HOME="$d/data" XDG_CONFIG_HOME="$d/config")
	local cmd=(podman --root "$d/storage" --runroot "$d/run")
	if [ "$(id -u)" -eq 0 ]; then
		case " $* " in
		*" import "* | *" save "* | *" load "*)
			env "${env[@]}" unshare -m --propagation private \
				sh -c 'mount -t tmpfs -o mode=0755 berth-oci /var/lib && exec "$@"' sh "${cmd[@]}" "$@"
			return
			;;
		esac
	fi
	env "${env[@]}" "${cmd[@]}" "$@"
}

# podman_reset DIR: every container of DIR's podman removed, its storage
# deleted (as a user, inside podman's user namespace: the layers belong to
# subordinate ids) and the rootless pause process ended.
podman_reset() {
	local d=$1 pid
	[ -f "$d/containers.conf" ] || return 0
	podman_in "$d" rm -a -f -t 0 >/dev/null 2>&1
	if [ "$(id -u)" -ne 0 ]; then
		podman_in "$d" unshare rm -rf "$d/storage" "$d/run" >/dev/null 2>&1
		pid=$(cat "$d/tmp/pause.pid" 2>/dev/null)
		[ -n "$pid" ] && kill "$pid" 2>/dev/null
	fi
	rm -rf "$d/storage" "$d/run" 2>/dev/null
	# The overlay driver's own mount of its home, if podman left it.
	grep -q " $d/storage/overlay " /proc/self/mountinfo 2>/dev/null && umount "$d/storage/overlay"
	return 0
}

# ---------------------------------------------------------- host listeners
# oci_listener: a TCP listener and a UDP socket on the host's 127.0.0.1:PORT,
# an abstract unix socket @$LISTEN_ABSTRACT and a path one at $LISTEN_PATH;
# what arrives is logged to $LISTEN_LOG (which must stay empty).  Sets PORT.
oci_listener() {
	LISTEN_LOG=$TOP/listener.log
	LISTEN_ABSTRACT=berth-oci-$RANDOM$RANDOM
	LISTEN_PATH=$TOP/host.sock
	python3 - "$LISTEN_LOG" "$LISTEN_ABSTRACT" "$LISTEN_PATH" "$TOP/listener.port" <<'PY' &
import os, select, socket, sys
log_path, abstract, upath, ready = sys.argv[1:5]
log = open(log_path, "a", buffering=1)
tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
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
while True:
    for s in select.select([tcp, udp, ab, up], [], [])[0]:
        if s is udp:
            data, addr = udp.recvfrom(65536)
            log.write("udp datagram from %r\n" % (addr,))
        else:
            c, addr = s.accept()
            log.write("%s connection from %r\n" % (names[s], addr))
            c.close()
PY
	local pid=$!
	OCI_CLEANUPS+=("kill $pid")
	local _
	for _ in $(seq 1 100); do
		[ -s "$TOP/listener.port" ] && break
		sleep 0.05
	done
	PORT=$(cat "$TOP/listener.port" 2>/dev/null)
	[ -n "$PORT" ] || bail "the host listener did not start (python3)"
}
