#!/bin/bash
# Builds every parser fuzzer with clang (libFuzzer + ASan + UBSan) and runs
# them for a bounded total time (default 30 s, split evenly, at least 1 s
# each):
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
# Usage: fuzz/run-fuzz.sh [SECONDS]
# Exit 0 when none crashed; 1 (with the fuzzer's last lines) otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
CF=(-g -O1 -std=gnu11 -D_GNU_SOURCE -DBERTH_VERSION="\"fuzz\"" -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -Isrc)

# The files split out of spawn.c and audit.c (src/sandbox/spawn_int.h, src/audit/audit_int.h).
spawn_src=(src/sandbox/spawn.c src/sandbox/spawn_channel.c src/sandbox/spawn_prepare.c src/sandbox/spawn_janitor.c
	src/sandbox/spawn_child.c src/sandbox/spawn_init.c src/sandbox/spawn_relay.c src/sandbox/spawn_cleanup.c
	src/sandbox/spawn_broker.c)
audit_src=(src/audit/audit.c src/audit/audit_files.c src/audit/audit_redact.c src/audit/audit_record.c
	src/audit/audit_head.c src/audit/audit_recover.c src/audit/audit_commit.c src/audit/audit_verify.c)
manifest_src=(src/manifest/manifest.c src/manifest/ytree.c src/manifest/diag.c src/manifest/yschema.c
	src/manifest/capability.c src/manifest/schema.c src/broker/hosts.c src/broker/addr.c)
# mcp.c links the app runtime (app.c, dev.c), hence the manifest, policy and sandbox code.
mcp_src=(src/supervisor/mcp.c src/supervisor/app.c src/supervisor/app_audit.c src/supervisor/app_call.c
	src/supervisor/app_policy.c src/supervisor/lines.c
	src/supervisor/dev.c "${manifest_src[@]}" src/policy/policy.c src/policy/sysdirs.c src/policy/validate.c src/policy/parse.c src/policy/flags.c
	src/policy/envfile.c src/policy/trust.c src/sandbox/measure.c "${spawn_src[@]}" src/sandbox/userns.c src/sandbox/mounts.c src/sandbox/guard.c
	src/sandbox/gitrules.c src/sandbox/trustscan.c src/sandbox/landlock.c
	src/sandbox/seccomp.c src/sandbox/caps.c src/sandbox/limits.c src/sandbox/netns.c src/util/error.c src/util/sha256.c
	src/util/text.c src/util/rundir.c src/util/termfilter.c src/broker/broker.c src/broker/broker_request.c src/broker/broker_relay.c
	src/broker/broker_resolver.c src/broker/body.c src/broker/dns.c src/broker/dnsmsg.c src/broker/fakeaddr.c src/broker/http.c
	src/broker/socks.c "${audit_src[@]}" src/audit/queue.c src/audit/exposure.c src/util/jcs.c src/util/sign.c src/supervisor/evidence.c)

# fuzz_session feeds agent output to libvterm behind berth's filter.  With
# BERTH_LIBVTERM_SRC=DIR (libvterm's source tree, e.g. from `apt-get source
# libvterm`), libvterm is compiled in and instrumented too, so ASan sees its
# own out-of-bounds accesses; otherwise the system library (crashes and hangs
# only).
if [ -n "${BERTH_LIBVTERM_SRC:-}" ]; then
	vterm=("$BERTH_LIBVTERM_SRC"/src/*.c -I"$BERTH_LIBVTERM_SRC"/include -I"$BERTH_LIBVTERM_SRC"/src)
else
	read -r -a vterm <<<"$(pkg-config --cflags --libs vterm)"
fi

# shellcheck disable=SC2046  # word splitting of pkg-config output is wanted
{
	clang "${CF[@]}" fuzz/fuzz_flags.c src/policy/policy.c src/policy/sysdirs.c src/policy/validate.c src/policy/parse.c src/policy/flags.c src/policy/envfile.c src/policy/trust.c \
		src/broker/hosts.c src/broker/addr.c src/broker/dns.c src/util/text.c src/util/error.c src/util/sha256.c \
		$(pkg-config --cflags --libs jansson libcrypto libsodium libevent libcares) -ldl -pthread -o "$out/fuzz_flags"
	clang "${CF[@]}" fuzz/fuzz_manifest.c "${manifest_src[@]}" src/policy/parse.c src/util/error.c \
		$(pkg-config --cflags --libs jansson yaml-0.1) -lm -o "$out/fuzz_manifest"
	clang "${CF[@]}" fuzz/fuzz_mcp.c "${mcp_src[@]}" \
		$(pkg-config --cflags --libs jansson yaml-0.1 libseccomp libevent libcares libsodium) \
		$(pkg-config --cflags libcrypto) -ldl -lm -pthread -o "$out/fuzz_mcp"
	clang "${CF[@]}" fuzz/fuzz_hosts.c src/broker/addr.c src/broker/hosts.c -o "$out/fuzz_hosts"
	clang "${CF[@]}" fuzz/fuzz_http.c src/broker/http.c -o "$out/fuzz_http"
	clang "${CF[@]}" fuzz/fuzz_socks.c src/broker/socks.c src/broker/http.c -o "$out/fuzz_socks"
	clang "${CF[@]}" fuzz/fuzz_session.c src/session/profile.c src/session/fleet.c src/session/yconf.c \
		src/session/screen.c src/session/spawn_args.c src/session/session.c src/session/supervise.c src/session/home_seed.c \
		src/policy/rules.c src/util/ynode.c \
		"${mcp_src[@]}" \
		"${vterm[@]}" $(pkg-config --cflags --libs jansson yaml-0.1 libseccomp libevent libcares libsodium) \
		$(pkg-config --cflags libcrypto) -ldl -lm -pthread -o "$out/fuzz_session"
	clang "${CF[@]}" fuzz/fuzz_envfile.c src/policy/envfile.c src/util/error.c -o "$out/fuzz_envfile"
	clang "${CF[@]}" fuzz/fuzz_audit.c "${audit_src[@]}" src/util/jcs.c src/util/sign.c src/util/rundir.c src/util/sha256.c \
		src/util/error.c $(pkg-config --cflags --libs jansson libsodium) $(pkg-config --cflags libcrypto) -ldl -pthread \
		-o "$out/fuzz_audit"
	clang "${CF[@]}" fuzz/fuzz_agent_patterns.c src/session/agent_state.c src/util/ynode.c src/util/error.c \
		$(pkg-config --cflags --libs yaml-0.1) -o "$out/fuzz_agent_patterns"
	clang "${CF[@]}" fuzz/fuzz_rules.c src/policy/rules.c src/util/ynode.c src/policy/policy.c src/policy/sysdirs.c src/policy/validate.c src/policy/parse.c src/policy/trust.c \
		src/policy/flags.c src/policy/envfile.c src/broker/hosts.c src/broker/addr.c src/broker/dns.c src/util/text.c \
		src/util/error.c src/util/sha256.c \
		$(pkg-config --cflags --libs jansson libcrypto libsodium yaml-0.1 libevent libcares) -ldl -pthread -o "$out/fuzz_rules"
	clang "${CF[@]}" fuzz/fuzz_body.c src/broker/body.c -o "$out/fuzz_body"
	clang "${CF[@]}" fuzz/fuzz_dnsmsg.c src/broker/dnsmsg.c -o "$out/fuzz_dnsmsg"
	clang "${CF[@]}" fuzz/fuzz_gitconfig.c src/sandbox/gitrules.c src/util/error.c -o "$out/fuzz_gitconfig"
	clang "${CF[@]}" fuzz/fuzz_termfilter.c src/util/termfilter.c -o "$out/fuzz_termfilter"
}

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
)
each=$(( secs / ${#table[@]} )); [ "$each" -ge 1 ] || each=1
for row in "${table[@]}"; do
	read -r name corpus maxlen <<<"$row"
	mkdir -p "$out/$corpus"
	cp fuzz/"$corpus"/* "$out/$corpus/"
	if ! (cd "$out" && ./"$name" -max_total_time="$each" -max_len="$maxlen" -timeout=10 -rss_limit_mb=2048 \
		"$corpus" >"$name.log" 2>&1); then
		grep -m 1 "^$name: " "$out/$name.log" || true # a property check says which one broke
		tail -n 5 "$out/$name.log"
		echo "fuzz: $name FAILED"
		exit 1
	fi
	tail -n 2 "$out/$name.log"
	echo "fuzz: $name ran ${each}s without a crash"
done
