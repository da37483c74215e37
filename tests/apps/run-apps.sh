#!/bin/bash
# Protocol tests for the resident-app SDKs (sdk/c, sdk/python) and the
# first-party apps (apps/*), outside the sandbox, TAP output.  Builds what it
# tests: the C SDK and apps/filesystem (ninja -C build; berth_build copies the
# app's binary into apps/filesystem) and the C SDK test fixture.  The manifest examples that need the sandbox (the /etc/x
# denial) run inside build/berth.  Exits non-zero if anything failed.
#   tests/apps/run-apps.sh            (from anywhere)
#   BERTH_APPS_ONLY=notes tests/apps/run-apps.sh    (tests whose name has "notes")
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../../scripts/deps.sh
. "$top/scripts/deps.sh"
# python3-yaml reads the manifests' examples; nodejs runs the javascript ones.
berth_ensure_deps meson ninja-build pkg-config gcc libjansson-dev python3 python3-yaml nodejs || exit 1

fail_build() { echo "1..0 # the build failed: $*"; exit 1; }

berth_build "$top" >/dev/null || fail_build "meson setup build && ninja -C build"

tmp=$(mktemp -d /tmp/berth-apps-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
pc="env PKG_CONFIG_PATH=$top/build/meson-uninstalled pkg-config berth-app-uninstalled"
# shellcheck disable=SC2046  # word splitting of the pkg-config flags is wanted
cc -std=gnu11 -Wall -Wextra -Werror $($pc --cflags) -o "$tmp/sdk_test_app" \
	"$top/tests/apps/fixtures/sdk_test_app.c" $($pc --libs) || fail_build "the C SDK fixture"

/usr/bin/python3 "$top/tests/apps/test_apps.py" "$tmp/sdk_test_app" "$top/build/berth"
