#!/bin/bash
# Builds the parser fuzzers with clang (libFuzzer + ASan + UBSan) and runs them
# for a bounded total time (default 30 s, split between them): fuzz_flags (the
# `berth run` options and value parsers), fuzz_manifest (berth.yml and the
# JSON Schema subset) and fuzz_mcp (`berth mcp`'s message handling).
# Usage: fuzz/run-fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
# Split the total: each fuzzer gets a third, at least 1 s.
flags_secs=$(( (secs + 2) / 3 )); [ "$flags_secs" -ge 1 ] || flags_secs=1
manifest_secs=$(( (secs + 1) / 3 )); [ "$manifest_secs" -ge 1 ] || manifest_secs=1
mcp_secs=$(( secs - flags_secs - manifest_secs )); [ "$mcp_secs" -ge 1 ] || mcp_secs=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
clang -g -O1 -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-Isrc fuzz/fuzz_flags.c src/policy/policy.c src/policy/parse.c src/policy/flags.c src/util/error.c src/util/sha256.c \
	$(pkg-config --cflags --libs jansson libcrypto) -o "$out/fuzz_flags"
clang -g -O1 -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-Isrc fuzz/fuzz_manifest.c src/manifest/manifest.c src/manifest/ytree.c src/manifest/diag.c \
	src/manifest/yschema.c src/manifest/capability.c src/manifest/schema.c src/policy/parse.c src/util/error.c \
	$(pkg-config --cflags --libs jansson yaml-0.1) -lm -o "$out/fuzz_manifest"
# berth_mcp_handle on a server of no apps; mcp.c links the app runtime (app.c,
# dev.c), which links the manifest, policy and sandbox code.
clang -g -O1 -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-Isrc fuzz/fuzz_mcp.c src/supervisor/mcp.c src/supervisor/app.c src/supervisor/app_policy.c \
	src/supervisor/lines.c src/supervisor/dev.c src/manifest/manifest.c src/manifest/ytree.c src/manifest/diag.c \
	src/manifest/yschema.c src/manifest/capability.c src/manifest/schema.c src/policy/policy.c src/policy/parse.c \
	src/policy/flags.c src/sandbox/spawn.c src/sandbox/userns.c src/sandbox/mounts.c src/sandbox/guard.c \
	src/sandbox/landlock.c src/sandbox/seccomp.c src/sandbox/caps.c src/sandbox/limits.c src/util/error.c \
	src/util/sha256.c src/util/text.c \
	$(pkg-config --cflags --libs jansson yaml-0.1 libseccomp) $(pkg-config --cflags libcrypto) -ldl -lm -pthread \
	-o "$out/fuzz_mcp"
mkdir -p "$out/corpus" "$out/corpus-manifest" "$out/corpus-mcp"
cp fuzz/corpus/* "$out/corpus/"
cp fuzz/corpus-manifest/* "$out/corpus-manifest/"
cp fuzz/corpus-mcp/* "$out/corpus-mcp/"
cd "$out"
./fuzz_flags -max_total_time="$flags_secs" -max_len=4096 -timeout=10 corpus 2>&1 | tail -n 3
echo "fuzz: fuzz_flags ran ${flags_secs}s without a crash"
./fuzz_manifest -max_total_time="$manifest_secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 corpus-manifest 2>&1 | tail -n 3
echo "fuzz: fuzz_manifest ran ${manifest_secs}s without a crash"
if ! ./fuzz_mcp -max_total_time="$mcp_secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 corpus-mcp >mcp.log 2>&1; then
	grep -m 1 '^fuzz_mcp: ' mcp.log || true # which property broke, and on which line
	tail -n 3 mcp.log
	exit 1
fi
tail -n 3 mcp.log
echo "fuzz: fuzz_mcp ran ${mcp_secs}s without a crash"
