#!/bin/bash
# Builds every parser fuzzer with clang (libFuzzer + ASan + UBSan) in the
# meson build dir build-fuzz (fuzz/meson.build: the core library instrumented
# too; BUILD_FUZZ=DIR for another) and runs them for a bounded total time
# (default 30 s, split evenly, at least 1 s each):
#   fuzz_flags     `berth run` options and value parsers (and --dns servers)
#   fuzz_manifest  berth.yml and the JSON Schema subset
#   fuzz_mcp       `berth mcp`'s message handling
#   fuzz_hosts     egress: allow-host patterns and address literals
#   fuzz_http      egress: HTTP proxy requests and their rewrite
#   fuzz_socks     egress: SOCKS5 requests
#   fuzz_session   sessions: profile and fleet files, the libvterm screen
#   fuzz_termfilter  sessions: agent output on its way to the person's terminal (attach, logs)
#   fuzz_envfile   `berth run --env-file` files
#   fuzz_audit     the audit log's line parser and RFC 8785 canonical JSON
#   fuzz_agent_patterns  agent pattern files (data/agents/) and the state classifier
#   fuzz_rules     rules files (/etc/berth/rules.yml, .berth/rules.yml) and their check
#   fuzz_body      egress: where a plain request's body ends (chunked framing)
#   fuzz_dnsmsg    egress: the sandbox resolver's DNS queries and answers
#   fuzz_gitconfig git config files in the workspace (the trust surface's parser)
#   fuzz_attest    `berth attest --verify` on any document (a fixed test key)
#   fuzz_audit_recover  the audit log's recovery at open (head, torn tail, quarantine)
#   fuzz_control   the session and `berth dev` control sockets' request parsers
#   fuzz_appchan   the app -> berth channel: line framing and each message's decision
#   fuzz_export    `berth export k8s`: its arguments, and the YAML read back by libyaml
#   fuzz_oci       `berth oci`: an OCI bundle's config.json to a policy
#   fuzz_policy_json  the policy's canonical JSON read back (the microVM guest's)
#   fuzz_vm        the microVM guest: the initramfs's newc writer and reader, the apt sources filter
#   fuzz_denial    the kernel's audit records (Landlock, SYSCALL) to denials, and their explanation
#   fuzz_cred      injected credentials: the header rewrite and the --credential grammar
#   fuzz_sshagent  --ssh: the agent protocol the relay parses, key lines and fingerprints
#   fuzz_mcp_http  `berth mcp --listen`: a request head's checks (token, Origin, version, session)
#   fuzz_ask       --ask: the control socket's requests, a held call's decoding and its path against the view
# Usage: fuzz/run-fuzz.sh [SECONDS]
# Exit 0 when none crashed; 1 (with the fuzzer's last lines) otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
[[ $secs =~ ^[0-9]+$ ]] || { echo "fuzz: SECONDS must be a whole number, not \`$secs'" >&2; exit 2; }
bd=${BUILD_FUZZ:-build-fuzz}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# fuzz_session feeds agent output to libvterm behind berth's filter.  With
# BERTH_LIBVTERM_SRC=DIR (libvterm's source tree, e.g. from `apt-get source
# libvterm`), libvterm is compiled in and instrumented too, so ASan sees its
# own out-of-bounds accesses; otherwise the system library (crashes and hangs
# only).
vterm=${BERTH_LIBVTERM_SRC:+$(readlink -f -- "$BERTH_LIBVTERM_SRC")}
# clang's -Wformat-nonliteral also flags vsnprintf(fmt, ap) in helpers that gcc
# accepts, hence the -Wno for this build.
if [ ! -f "$bd/build.ninja" ]; then
	CC=clang meson setup "$bd" -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false -Doptimization=1 \
		-Ddebug=true "-Dc_args=-fsanitize=fuzzer-no-link -fno-sanitize-recover=undefined -Wno-format-nonliteral" \
		"-Dfuzz_libvterm_src=$vterm" >/dev/null || { echo "fuzz: meson setup $bd failed (clang installed?)"; exit 1; }
elif [ "$(meson introspect "$bd" --buildoptions | python3 -c 'import json,sys
print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "fuzz_libvterm_src"))')" != "$vterm" ]; then
	meson configure "$bd" "-Dfuzz_libvterm_src=$vterm" >/dev/null
fi

# name corpus-dir max_len
table=(
	"fuzz_flags corpus 4096"
	"fuzz_manifest corpus-manifest 65536"
	"fuzz_mcp corpus-mcp 65536"
	"fuzz_hosts corpus-hosts 4096"
	"fuzz_http corpus-http 131072"
	"fuzz_socks corpus-socks 4096"
	"fuzz_session corpus-session 65536"
	"fuzz_envfile corpus-envfile 65536"
	"fuzz_audit corpus-audit 65536"
	"fuzz_agent_patterns corpus-agents 65536"
	"fuzz_rules corpus-rules 65536"
	"fuzz_body corpus-body 65536"
	"fuzz_dnsmsg corpus-dnsmsg 1500"
	"fuzz_gitconfig corpus-gitconfig 65536"
	"fuzz_termfilter corpus-termfilter 65536"
	"fuzz_attest corpus-attest 65536"
	"fuzz_audit_recover corpus-audit-recover 65536"
	"fuzz_control corpus-control 65536"
	"fuzz_appchan corpus-appchan 65536"
	"fuzz_export corpus-export 4096"
	"fuzz_oci corpus-oci 65536"
	"fuzz_policy_json corpus-policy-json 65536"
	"fuzz_vm corpus-vm 65536"
	"fuzz_denial corpus-denial 65536"
	"fuzz_cred corpus-cred 65536"
	"fuzz_sshagent corpus-sshagent 65536"
	"fuzz_mcp_http corpus-mcp-http 131072"
	"fuzz_ask corpus-ask 16384"
)
targets=()
for row in "${table[@]}"; do targets+=("fuzz/${row%% *}"); done
ninja -C "$bd" "${targets[@]}" >"$out/build.log" 2>&1 || { tail -n 30 "$out/build.log"; echo "fuzz: the build in $bd failed"; exit 1; }
fz=$(cd "$bd/fuzz" && pwd)
each=$(( secs / ${#table[@]} )); [ "$each" -ge 1 ] || each=1
for row in "${table[@]}"; do
	read -r name corpus maxlen <<<"$row"
	mkdir -p "$out/$corpus"
	cp fuzz/"$corpus"/* "$out/$corpus/"
	if ! (cd "$out" && "$fz/$name" -max_total_time="$each" -max_len="$maxlen" -timeout=10 -rss_limit_mb=2048 \
		"$corpus" >"$name.log" 2>&1); then
		grep -m 1 "^$name: " "$out/$name.log" || true # a property check says which one broke
		tail -n 5 "$out/$name.log"
		echo "fuzz: $name FAILED"
		exit 1
	fi
	tail -n 2 "$out/$name.log"
	echo "fuzz: $name ran ${each}s without a crash"
done
