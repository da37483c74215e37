#!/bin/bash
# Remakes the seeds of the fuzzers that need signed inputs from real runs of
# the build, signed with the fixed, public key of fuzz/fuzz_key.h:
#   fuzz/corpus-attest/         attestations of `berth run` runs (a plain run,
#                               one with a feature forced off, one that failed)
#   fuzz/corpus-audit-recover/  the audit log those runs wrote, in
#                               fuzz_audit_recover's input format (3 layout
#                               bytes, then the log): head signed at the end,
#                               behind it, torn last line, rotated files
# Usage: fuzz/make-seeds.sh /path/to/berth   (as a user who can run berth)
set -euo pipefail
berth=$(readlink -f -- "${1:?usage: make-seeds.sh /path/to/berth}")
cd "$(dirname "$0")"
top=$(mktemp -d)
trap 'rm -rf "$top"' EXIT
key() { sed -n "/$1/,/\\\\n\"$/p" fuzz_key.h | sed -n 's/^\t"\(.*\)\\n".*/\1/p'; }
mkdir -p "$top/config/berth/keys" "$top/ws"
chmod 700 "$top/config" "$top/config/berth" "$top/config/berth/keys"
key 'define FUZZ_KEY_PRIV_PEM' >"$top/config/berth/keys/host-ed25519.pem"
key 'define FUZZ_KEY_PUB_PEM' >"$top/config/berth/keys/host-ed25519.pub.pem"
chmod 600 "$top/config/berth/keys/host-ed25519.pem"
export XDG_CONFIG_HOME=$top/config XDG_STATE_HOME=$top/state
cd "$top/ws"
"$berth" run -- true </dev/null >/dev/null
"$berth" attest --last --out "$top/att-plain.json"
BERTH_TEST_FORCE_OFF=landlock,seccomp "$berth" run --allow-degraded --yes -- true </dev/null >/dev/null
"$berth" attest --last --out "$top/att-partial.json"
"$berth" run --env X=1 -- sh -c 'exit 3' </dev/null >/dev/null || true
"$berth" attest --last --out "$top/att-exit3.json"
cd - >/dev/null
for f in plain partial exit3; do
	"$berth" attest --verify "$top/att-$f.json" --key "$top/config/berth/keys/host-ed25519.pub.pem" >/dev/null
	cp "$top/att-$f.json" "corpus-attest/$f.json"
done
log=$(ls "$top"/state/berth/audit/audit-*.jsonl | head -n 1)
n=$(wc -l <"$log")
# flags: 1 head signed over record K; |8 an older head in slot 0; |16 rotate
# after record S; 0 no head (every record is past it); a torn last line.
seed() { printf "\\x$(printf %02x "$1")\\x$(printf %02x "$2")\\x$(printf %02x "$3")" >"corpus-audit-recover/$4"; cat >>"corpus-audit-recover/$4"; }
seed 1 "$n" 0 head-at-end <"$log"
seed 9 "$((n - 2))" 0 head-behind <"$log"
seed 17 "$n" 3 rotated <"$log"
seed 0 0 0 no-head <"$log"
head -c -40 "$log" | seed 1 "$((n - 1))" 0 torn-last-line
head -n 2 "$log" | seed 5 2 0 rechained
echo "seeds: $(ls corpus-attest | wc -l) attestations, $(ls corpus-audit-recover | wc -l) logs of $n records"
