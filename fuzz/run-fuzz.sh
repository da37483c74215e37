#!/bin/bash
# Builds the policy-parser fuzzer with clang (libFuzzer + ASan + UBSan) and runs
# it for a bounded time (default 30 s).  Usage: fuzz/run-fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
clang -g -O1 -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-Isrc fuzz/fuzz_flags.c src/policy/policy.c src/policy/parse.c src/policy/flags.c src/util/error.c src/util/sha256.c \
	$(pkg-config --cflags --libs jansson libcrypto) -o "$out/fuzz_flags"
mkdir -p "$out/corpus"
cp fuzz/corpus/* "$out/corpus/"
cd "$out"
./fuzz_flags -max_total_time="$secs" -max_len=4096 -timeout=10 corpus 2>&1 | tail -n 3
echo "fuzz: fuzz_flags ran ${secs}s without a crash"
