# shellcheck shell=bash
# The test image of the oci suites, built without a registry (sourced by
# tests/oci/common.sh).  oci_image_build sets
#   OCI_IMAGE_TAR      the root file system as a tar (for `podman import`)
#   OCI_IMAGE_ARCHIVE  the same image as an OCI archive, named $OCI_IMAGE
#                      (`podman save --format oci-archive`: for `ctr image import`)
# The root file system: busybox-static as /bin/busybox with one symlink per
# applet in /bin; every escape probe of tests/escape/probes and
# tests/oci/probes/oci_try.c, linked statically (gcc -static), in /probes;
# /probes/suid-oci-try, a set-user-ID-root copy of oci_try; /etc/passwd and
# /etc/group (root, berth 1000, nobody); an empty /usr/bin, /data (for bind
# mounts) and no /root.  Every file is owned by 0:0 in the tar.
#
# Built once per content and cached: the key is the SHA-256 of the sources,
# this file, busybox and the compiler's version, under $BERTH_OCI_CACHE
# (default ${TMPDIR:-/tmp}/berth-oci-cache-UID), so both suites of a run (and
# later runs) share one build; a build of another key is removed.  Some 5 s
# on 2 cores the first time.
OCI_IMAGE=localhost/berth-test:1

# oci_image_build SRCDIR: SRCDIR is the tests/ directory.  Returns 1 (and
# says why on stderr) when the image cannot be built.
oci_image_build() {
	local tests=$1 cache key dir tmp f
	cache=${BERTH_OCI_CACHE:-${TMPDIR:-/tmp}/berth-oci-cache-$(id -u)}
	if [ -e "$cache" ] && [ ! -O "$cache" ]; then
		echo "oci image: $cache belongs to another user: remove it or set BERTH_OCI_CACHE" >&2
		return 1
	fi
	mkdir -p "$cache" && chmod 700 "$cache" || return 1
	local busybox
	busybox=$(command -v busybox) || { echo "oci image: no busybox (Debian: busybox-static)" >&2; return 1; }
	# busybox-static's binary is static; the dynamic one of the busybox package would not run in the image.
	if ldd "$busybox" >/dev/null 2>&1; then
		echo "oci image: $busybox is dynamically linked: install busybox-static" >&2
		return 1
	fi
	key=$({
		cat "${BASH_SOURCE[0]}" "$tests"/escape/probes/*.c "$tests"/escape/probes/*.h "$tests"/oci/probes/*.c "$busybox"
		gcc --version
	} | sha256sum | cut -c1-16)
	dir=$cache/img-$key
	# shellcheck disable=SC2034 # for the caller
	OCI_IMAGE_TAR=$dir/rootfs.tar
	# shellcheck disable=SC2034
	OCI_IMAGE_ARCHIVE=$dir/image.oci.tar
	(
		flock 9
		# each use marks its image; only images no run used for a day go
		# (another tree's run, with other probes, may be using its own now)
		[ -f "$dir/done" ] && touch "$dir/done" && exit 0
		for f in "$cache"/img-*; do
			[ -e "$f" ] && [ "$f" != "$dir" ] && [ -z "$(find "$f/done" -newermt '-1 day' 2>/dev/null)" ] &&
				rm -rf "$f"
		done
		tmp=$(mktemp -d "$cache/build.XXXXXX") || exit 1
		trap 'rm -rf "$tmp"' EXIT
		_oci_rootfs "$tests" "$busybox" "$tmp/rootfs" || exit 1
		tar --numeric-owner --owner=0 --group=0 --sort=name --mtime=@0 -C "$tmp/rootfs" -cf "$tmp/rootfs.tar" . ||
			exit 1
		_oci_archive "$tmp" || exit 1
		mkdir -p "$dir" && mv "$tmp/rootfs.tar" "$tmp/image.oci.tar" "$dir/" && touch "$dir/done"
	) 9>"$cache/lock"
}

# _oci_rootfs TESTS BUSYBOX DIR: the root file system in DIR.
_oci_rootfs() {
	local tests=$1 busybox=$2 root=$3 a src n pids=() fails=0
	mkdir -p "$root"/{bin,usr/bin,etc,proc,sys,dev,tmp,data,probes,home/berth} || return 1
	chmod 1777 "$root/tmp"
	cp "$busybox" "$root/bin/busybox" || return 1
	for a in $("$busybox" --list); do
		[ -e "$root/bin/$a" ] || ln -s busybox "$root/bin/$a"
	done
	printf 'root:x:0:0:root:/root:/bin/sh\nberth:x:1000:1000:berth:/home/berth:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$root/etc/passwd"
	printf 'root:x:0:\nberth:x:1000:\nnogroup:x:65534:\n' >"$root/etc/group"
	# Statically linked (the image has no libc), stripped; two at a time (2 cores).
	for src in "$tests"/escape/probes/*.c "$tests"/oci/probes/*.c; do
		n=${src##*/}
		n=${n%.c}
		gcc -static -s -std=gnu11 -Wall -Wextra -Werror -o "$root/probes/$n" "$src" &
		pids+=($!)
		if [ ${#pids[@]} -ge 2 ]; then
			wait "${pids[0]}" || fails=$((fails + 1))
			pids=("${pids[@]:1}")
		fi
	done
	for a in "${pids[@]}"; do wait "$a" || fails=$((fails + 1)); done
	[ "$fails" -eq 0 ] || { echo "oci image: $fails probes did not compile (gcc -static: libc6-dev)" >&2; return 1; }
	cp "$root/probes/oci_try" "$root/probes/suid-oci-try" && chmod 4755 "$root/probes/suid-oci-try"
}

# _oci_archive DIR: DIR/rootfs.tar imported into a throwaway podman storage
# in DIR and saved as DIR/image.oci.tar.
_oci_archive() {
	local d=$1 rc=0
	mkdir -p "$d/podman"
	_oci_podman_conf "$d/podman"
	podman_in "$d/podman" import -q --change 'ENV PATH=/bin:/usr/bin' --change 'CMD ["/bin/sh"]' \
		"$d/rootfs.tar" "$OCI_IMAGE" >/dev/null &&
		podman_in "$d/podman" save -q --format oci-archive -o "$d/image.oci.tar" "$OCI_IMAGE" || rc=1
	podman_reset "$d/podman"
	[ "$rc" -eq 0 ] || echo "oci image: podman import/save failed" >&2
	return "$rc"
}
