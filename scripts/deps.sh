# shellcheck shell=bash
# Debian packages berth needs to build, test and demo.  Sourced by demo/run,
# tests/run and .ci/run: as root, missing packages are installed; as a user,
# the missing ones are named.
# libssl-dev and libevent-dev (libevent_openssl): --credential's TLS termination (docs/credentials.md).
BERTH_BUILD_DEPS=(meson ninja-build pkg-config gcc libc6-dev libseccomp-dev libyaml-dev libjansson-dev
	libssl-dev libsodium-dev libcmocka-dev libevent-dev libc-ares-dev libvterm-dev)
# python3-psycopg2: apps/postgres's client library (libpq); libvterm0: apps/terminal renders its
# screen with it (through ctypes; libvterm-dev above pulls it in for the build too).
# chromium-headless-shell (bookworm-security's, 156 as of 2026-12), fonts-dejavu-core: apps/browser's
# headless Chromium and the fonts its pages and screenshots are drawn with.
BERTH_RUN_DEPS=(git python3 curl procps util-linux python3-psycopg2 libvterm0 chromium-headless-shell
	fonts-dejavu-core)
# python3-yaml: the SDK tests read manifests; nodejs: code-interpreter's javascript;
# iproute2, dnsmasq-base (the binary only: no system service, port 53 untouched) and
# openssl: the egress test hosts of tests/netns/hosts.sh; the audit tests check signatures with
# openssl(1), as contrib/audit-verify.py does.
# openssh-server and openssh-client: tests/integration/run-ssh.sh (berth run --ssh) starts an
# sshd of its own on loopback (its own config and host key; installing the package starts no
# service where policy-rc.d or no init forbids it, and the test never uses the system's).
# postgresql-15, postgresql-client-15: tests/mcp/apps.test.mjs makes a cluster of its own (initdb,
# pg_ctl on a loopback port; Debian's service is never started or used) for apps/postgres.
# clang-format: .ci/run's format lane (scripts/check-format.sh, clang-format 14).
# python3-kubernetes: the Kubernetes API schema that tests/integration/k8s-validate.py checks
# `berth export k8s` against (kubectl cannot validate without a cluster).
BERTH_TEST_DEPS=(make clang libclang-rt-14-dev bubblewrap python3-yaml nodejs iproute2 dnsmasq-base openssl
	clang-format python3-kubernetes postgresql-15 postgresql-client-15 openssh-server openssh-client)
# The oci suites (tests/oci: podman and containerd with berth as their OCI runtime, docs/oci.md):
# runc, the reference runtime on the same command line; busybox-static, the test image's /bin
# (it replaces the dynamic busybox package); uidmap (newuidmap) and catatonit (the pause
# process) for rootless podman; conmon is podman's.  Nothing is started by installing them:
# run-containerd.sh starts a containerd of its own.
BERTH_OCI_DEPS=(podman conmon runc containerd busybox-static uidmap catatonit)
# The microVM runtime (docs/vm.md): qemu-system-x86 (qemu-system-x86_64, qboot.rom and, through
# qemu-system-common, /usr/lib/qemu/virtiofsd), installed without its recommends (no GUI, no
# firmware zoo: berth_ensure_deps --no-install-recommends); cpio: tests/unit/test_vm.c reads
# berth's initramfs back with GNU cpio.
BERTH_VM_DEPS=(qemu-system-x86 cpio)
# Only bench/bench-egress.sh (not the tests): tinyproxy is the proxy the broker is measured against.
BERTH_BENCH_DEPS=(curl python3 iproute2 tinyproxy)

# berth_ensure_deps [--no-install-recommends] PACKAGE...
berth_ensure_deps() {
	local missing=() p opts=()
	if [ "${1:-}" = --no-install-recommends ]; then
		opts=("$1")
		shift
	fi
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -eq 0 ]; then
		echo "berth: installing ${missing[*]}" >&2
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq >/dev/null && apt-get install -y -qq "${opts[@]}" "${missing[@]}" >/dev/null || {
			echo "berth: apt-get install ${missing[*]} failed" >&2
			return 1
		}
	else
		echo "berth: missing Debian packages: ${missing[*]}" >&2
		echo "berth: hint: sudo apt-get install -y ${opts[*]} ${missing[*]}" >&2
		return 1
	fi
}

# berth_build TOP [MESON-OPTION...]: set up (with the options, the first time) and build TOP/build.
berth_build() {
	local top=$1
	shift
	if [ ! -f "$top/build/build.ninja" ]; then
		meson setup "$top/build" "$top" "$@" >/dev/null || return 1
	fi
	{ ninja -C "$top/build" >/dev/null || ninja -C "$top/build"; } || return 1
	# The native first-party app, built by meson (apps/filesystem/meson.build):
	# its entry is a binary in the app directory, the one the tour and the
	# test scripts use.
	install -m 0755 "$top/build/apps/filesystem/filesystem" "$top/apps/filesystem/filesystem"
}

# berth_subids USER (as root): USER's subordinate uids and gids for rootless
# podman, 65536 of each above every range in /etc/subuid and /etc/subgid,
# unless USER has some (useradd adds them only where /etc/subuid existed).
berth_subids() {
	local u=$1 sub
	grep -q "^$u:" /etc/subuid 2>/dev/null && grep -q "^$u:" /etc/subgid 2>/dev/null && return 0
	sub=$(cat /etc/subuid /etc/subgid 2>/dev/null |
		awk -F: '$2 + $3 > m { m = $2 + $3 } END { print (m > 100000 ? m : 100000) }')
	usermod --add-subuids "$sub-$((sub + 65535))" --add-subgids "$sub-$((sub + 65535))" "$u"
}
