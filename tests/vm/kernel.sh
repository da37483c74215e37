#!/usr/bin/env bash
# kernel.sh CACHE - print the path of the pinned guest kernel (vmlinuz),
# fetched once into CACHE from the Debian mirror berth's tests use: apt with
# a configuration of its own (the host's sources and state untouched), the
# .deb's and the vmlinuz's sha256 checked against the pin (docs/vm.md; the
# same values as src/vm/pins.h), unpacked with dpkg-deb -x.  Exits non-zero,
# saying why on stderr, when it cannot.
set -eu
C=${1:?usage: $0 CACHE}
PKG=linux-image-6.12.117+deb13-cloud-amd64
VER=6.12.117-1
DEB_SHA=e9893e5295d0549b8852611f12a4b8b5f6cc4b8128dcc2086b9847793b904ab7
VMLINUZ=boot/vmlinuz-6.12.117+deb13-cloud-amd64
VMLINUZ_SHA=ed8f0dbdbefe3994093937f5ee934818ae902b88cb0b6bc423811c10d55b87b0
DEB="$C/${PKG}_${VER}_amd64.deb"

if [ -f "$C/x/$VMLINUZ" ] && echo "$VMLINUZ_SHA  $C/x/$VMLINUZ" | sha256sum -c --status; then
	echo "$C/x/$VMLINUZ"
	exit 0
fi
mkdir -p "$C/apt/lists/partial" "$C/apt/cache/archives/partial" "$C/apt/etc/sources.list.d" \
	"$C/apt/etc/apt.conf.d" "$C/apt/etc/preferences.d" "$C/apt/state"
touch "$C/apt/state/status"
# the suite the pin comes from, on the mirror the host's own sources name
MIRROR=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
[ -n "$MIRROR" ] || { echo "kernel.sh: no Debian mirror in /etc/apt/sources.list.d/debian.sources" >&2; exit 1; }
printf 'Types: deb\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
	"$MIRROR" >"$C/apt/etc/sources.list.d/trixie.sources"
cat >"$C/apt/apt.conf" <<CONF
Dir::Etc "$C/apt/etc";
Dir::Etc::sourcelist "/dev/null";
Dir::Etc::sourceparts "$C/apt/etc/sources.list.d";
Dir::State "$C/apt/state";
Dir::State::Lists "$C/apt/lists";
Dir::Cache "$C/apt/cache";
APT::Architecture "amd64";
Debug::NoLocking "true";
CONF
export APT_CONFIG="$C/apt/apt.conf"
if [ ! -f "$DEB" ] || ! echo "$DEB_SHA  $DEB" | sha256sum -c --status; then
	apt-get -q update -o APT::Sandbox::User="$(id -un)" >"$C/update.log" 2>&1 ||
		{ echo "kernel.sh: apt-get update failed (see $C/update.log)" >&2; exit 1; }
	(cd "$C" && apt-get -q download -o APT::Sandbox::User="$(id -un)" "$PKG=$VER") >"$C/download.log" 2>&1 ||
		{ echo "kernel.sh: apt-get download failed (see $C/download.log)" >&2; exit 1; }
	echo "$DEB_SHA  $DEB" | sha256sum -c --status ||
		{ echo "kernel.sh: $DEB does not match the pin" >&2; rm -f "$DEB"; exit 1; }
fi
rm -rf "$C/x"
dpkg-deb -x "$DEB" "$C/x"
echo "$VMLINUZ_SHA  $C/x/$VMLINUZ" | sha256sum -c --status ||
	{ echo "kernel.sh: $VMLINUZ does not match the pin" >&2; exit 1; }
echo "$C/x/$VMLINUZ"
