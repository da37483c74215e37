#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# shellcheck disable=SC2016 # the backticks in the expected lines are berth's, not the shell's
#
# run-nofeature.sh BERTH NOFEATURE - berth on kernels that lack a feature.
#
# NOFEATURE (tests/shim/nofeature.c) takes a feature away the way an old or
# restricted kernel does (a seccomp filter making its system calls fail, or an
# empty /sys/fs/cgroup), so berth's real detection runs, not the
# BERTH_TEST_FORCE_OFF switch.  Under each shim `berth run -- true` must
# print exactly the refusal and hint of docs/security.md ("What berth prints")
# and exit 125, and `--allow-degraded` must exit 0 with exactly the
# `not enforced` lines, and the run's record (runs/ID/enforced.json, `berth
# attest --last`) must not claim the feature: Landlock ruleset ABI 0, no
# seccomp filter of berth's, shared namespaces, no idmapped workspace, rlimit
# mode.  The same runs under BERTH_TEST_FORCE_OFF print the same lines where
# the switch stands for the same kernel.  Prints TAP, exits 1 on a failure.
# Runs as root and as a user (the cgroup shim needs root: skipped for a user,
# whose cgroup-less case run-limits.sh covers).
set -u
export LC_ALL=C
unset BERTH_TEST_FORCE_OFF BERTH_AUDIT_DIR
[ $# -eq 2 ] || { echo "usage: $0 BERTH NOFEATURE" >&2; exit 2; }
BERTH=$(readlink -f -- "$1")
SHIM=$(readlink -f -- "$2")
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
eq() { if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'" "stderr: $ERR"; fi; }
# same DESC GOT WANT: whole texts, the difference shown.  With TODO set (a
# known bug), its result is a TAP TODO: not counted, and flagged when it passes.
TODO=""
same() {
	T=$((T + 1))
	if [ "$2" == "$3" ]; then echo "ok $T - $1${TODO:+ # TODO $TODO}"; return; fi
	[ -n "$TODO" ] || FAILS=$((FAILS + 1))
	echo "not ok $T - $1${TODO:+ # TODO $TODO}"
	diff <(printf '%s\n' "$3") <(printf '%s\n' "$2") | sed -n '2,$p' | sed 's/^/#   /'
}

TOP=$(mktemp -d /tmp/berth-nofeature.XXXXXX) || { echo "Bail out! mktemp failed"; exit 1; }
chmod 755 "$TOP"
trap 'chmod -R u+rwX "$TOP" 2>/dev/null; rm -rf "$TOP"' EXIT
export XDG_STATE_HOME=$TOP/state XDG_CONFIG_HOME=$TOP/config
WS=$TOP/ws
mkdir "$WS" && chmod 755 "$WS"
cd "$WS" || exit 1
ROOT=0; [ "$(id -u)" -eq 0 ] && ROOT=1
RUNS=$XDG_STATE_HOME/berth/runs

# run [SHIM-FEATURE|-] BERTH-ARGS...: RC, OUT, ERR (all of stderr) and SAID:
# stderr without the lines about limits that depend on the host's cgroups
# (the cgroup case reads ERR).
run() {
	local f=$1; shift
	if [ "$f" = - ]; then "$BERTH" run "$@" </dev/null >"$TOP/out" 2>"$TOP/err"
	else "$SHIM" "$f" "$BERTH" run "$@" </dev/null >"$TOP/out" 2>"$TOP/err"; fi
	RC=$?; OUT=$(cat "$TOP/out"); ERR=$(cat "$TOP/err")
	SAID=$(grep -v -e '^berth: limits: ' -e '^berth: not enforced: pids (RLIMIT_NPROC does not apply to root)$' "$TOP/err")
}
forced() { local f=$1; shift; BERTH_TEST_FORCE_OFF=$f run - "$@"; }
# rec KEY.PATH: from the last run's enforced.json
rec() {
	python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d=d[int(k)] if isinstance(d,list) else d.get(k) if isinstance(d,dict) else None
print(json.dumps(d) if not isinstance(d,str) else d)' "$RUNS/$(cat "$RUNS/last" 2>/dev/null)/enforced.json" "$1" 2>/dev/null
}
# has_shortfall DESC TEXT: the last run is PARTIAL and names TEXT, in its
# record and in the signed attestation.
has_shortfall() {
	local att
	eq "$1: the run's record says PARTIAL" "$(rec verdict)" PARTIAL
	has "$1: the record's shortfalls name it" "$(rec shortfalls)" "$2"
	att=$("$BERTH" attest --last 2>&1)
	has "$1: berth attest --last names it" "$att" "$2"
	has "$1: berth attest --last is not ENFORCED" "$att" '"verdict": "PARTIAL"'
}

# refused NAME SHIM-FEATURE WANT: `berth run -- true` under the shim exits
# 125 and prints exactly WANT (SAID).
refused() {
	run "$2" -- true
	eq "$1: refused (125)" "$RC" 125
	same "$1: exactly the refusal and its hint" "$SAID" "$3"
}
# degraded NAME SHIM-FEATURE NOTICES OUT CMD...: CMD under the shim with
# --allow-degraded exits 0, prints exactly NOTICES and prints OUT (what shows
# the feature is really off).
degraded() {
	local name=$1 f=$2 notices=$3 want=$4; shift 4
	run "$f" --allow-degraded --yes -- "$@"
	eq "$name --allow-degraded: runs (0)" "$RC" 0
	same "$name --allow-degraded: exactly the notices" "$SAID" "$notices"
	eq "$name --allow-degraded: really off" "$OUT" "$want"
}
# likewise NAME SWITCH WANT BERTH-ARGS...: under BERTH_TEST_FORCE_OFF=SWITCH
# berth prints WANT (the kernel's lines, or the switch's own).
likewise() {
	local name=$1 sw=$2 want=$3; shift 3
	forced "$sw" "$@"
	same "$name: BERTH_TEST_FORCE_OFF=$sw $*: the same lines" "$SAID" "$want"
}

# The lines of docs/security.md, "What berth prints".
DOCTOR='see `berth doctor`, or pass `--allow-degraded` to run without it'
WIDENING='berth: widening: --allow-degraded: berth runs even when the kernel cannot enforce part of the policy'
LL_REFUSED='berth: landlock is not available: berth refuses to run without it'
LL_ENOSYS="berth: hint: the kernel was built without CONFIG_SECURITY_LANDLOCK; $DOCTOR"
LL_EOPNOTSUPP="berth: hint: landlock is disabled at boot: add \`landlock\` to the \`lsm=\` kernel parameter; $DOCTOR"
LL_NOTICE='berth: not enforced: landlock (file access and TCP rules beyond the mount view)'
SC_REFUSED='berth: seccomp filters are not available: berth refuses to run without it'
SC_HINT="berth: hint: enable CONFIG_SECCOMP_FILTER in the kernel; $DOCTOR"
SC_NOTICE='berth: not enforced: seccomp (dangerous system calls are not filtered)'
US_REFUSED='berth: cannot create a user namespace: berth refuses to run without it'
US_SECCOMP="berth: hint: a seccomp filter above berth (a container runtime's, or the program that started berth) refuses new user namespaces; run berth on the host, or in a container started with \`--security-opt seccomp=unconfined\`; $DOCTOR"
US_FORCED_REFUSED='berth: user namespaces are forced off: berth refuses to run without it'
US_FORCED_HINT="berth: hint: allow them: \`sysctl kernel.unprivileged_userns_clone=1\` (Debian) or \`sysctl kernel.apparmor_restrict_unprivileged_userns=0\` (Ubuntu); $DOCTOR"
US_NOTICE="berth: not enforced: user, mount, pid, ipc, uts, net and cgroup namespaces (no user namespace: Operation not permitted); the command sees the host's files, limited by Landlock only"
GUARD_NOTICE='berth: not enforced: workspace guard (needs mount namespaces)'
ID_KEEP='berth: cannot keep workspace files owned by their host owner'
ID_HINT='berth: hint: use a filesystem that supports idmapped mounts (ext4, xfs, btrfs, tmpfs), or pass `--allow-degraded` (files written will belong to uid 1610612736)'
ID_TAIL='files the sandbox writes belong to host uid 1610612736'
NO_MOUNT_SETATTR='berth: cannot set mount attributes of `/newroot/usr`: Function not implemented'

# ---------------------------------------------------------------- Landlock
refused "landlock ENOSYS" landlock-enosys "$LL_REFUSED"$'\n'"$LL_ENOSYS"
refused "landlock EOPNOTSUPP" landlock-eopnotsupp "$LL_REFUSED"$'\n'"$LL_EOPNOTSUPP"
likewise "landlock (as EOPNOTSUPP)" landlock "$SAID" -- true
BIND='import socket
try:
    socket.socket().bind(("127.0.0.1", 0)); print("BOUND")
except OSError as e: print("ERRNO", e.errno)'
for e in enosys:-38 eopnotsupp:-95; do
	# Really off: a TCP bind, which berth's Landlock rules deny.
	degraded "landlock ${e%:*}" "landlock-${e%:*}" "$WIDENING"$'\n'"$LL_NOTICE" BOUND python3 -c "$BIND"
	eq "landlock ${e%:*} --allow-degraded: the record's ruleset ABI is 0" "$(rec landlock.ruleset_abi)" 0
	eq "landlock ${e%:*} --allow-degraded: the record's status is none" "$(rec landlock.status)" none
	eq "landlock ${e%:*} --allow-degraded: the kernel's answer recorded (-errno)" "$(rec landlock.abi)" "${e#*:}"
	has_shortfall "landlock ${e%:*} --allow-degraded" "landlock: none (ruleset ABI 0)"
done
likewise "landlock --allow-degraded" landlock "$SAID" --allow-degraded --yes -- true

# ---------------------------------------------------------------- seccomp
refused seccomp seccomp "$SC_REFUSED"$'\n'"$SC_HINT"
likewise seccomp seccomp "$SAID" -- true
# Really off: the command has the shim's filter only.
degraded seccomp seccomp "$WIDENING"$'\n'"$SC_NOTICE" Seccomp_filters:1 \
	sh -c 'grep "^Seccomp_filters:" /proc/self/status | tr -d "\t "'
eq "seccomp --allow-degraded: the record has no filter digest of berth's" "$(rec seccomp.filter_sha256)" null
has_shortfall "seccomp --allow-degraded" "seccomp: berth loaded no filter (the 1 in force are not berth's)"
likewise "seccomp --allow-degraded" seccomp "$SAID" --allow-degraded --yes -- true

# ---------------------------------------------------------------- user namespaces
# Refused as a container runtime's seccomp profile refuses them: berth names
# the filter (the switch stands for a sysctl and names those instead).
# As root berth first meets the refusal making the idmapped workspace
# (step 2, spawn_prepare.c), before its own clone: it must be reported as the
# user namespace's refusal, not the filesystem's.
refused userns userns "$US_REFUSED"$'\n'"$US_SECCOMP"
TODO="" likewise userns userns "$US_FORCED_REFUSED"$'\n'"$US_FORCED_HINT" -- true
degraded userns userns "$WIDENING"$'\n'"$US_NOTICE"$'\n'"$GUARD_NOTICE" "$(readlink /proc/self/ns/user)" \
	readlink /proc/self/ns/user
eq "userns --allow-degraded: the record says shared" "$(rec namespaces.user)" shared
has_shortfall "userns --allow-degraded" "user namespace: shared"
likewise "userns --allow-degraded" userns "$SAID" --allow-degraded --yes -- true
TODO=""

# ---------------------------------------------------------------- idmapped mounts
if [ $ROOT -eq 1 ]; then
	# A filesystem that cannot be idmapped (EINVAL), and a kernel before 5.12.
	refused "idmap EINVAL" idmap-einval "$ID_KEEP: cannot make an idmapped mount of \`$WS\`: Invalid argument"$'\n'"$ID_HINT"
	refused "idmap ENOSYS" idmap-enosys "$ID_KEEP: cannot make an idmapped mount of \`$WS\`: Function not implemented"$'\n'"$ID_HINT"
	likewise "idmap (its own cause, the same hint)" idmap "$ID_KEEP: idmapped mounts are forced off: Operation not supported"$'\n'"$ID_HINT" -- true
	# Really off: a file the sandbox writes belongs to host uid 1610612736,
	# not to the workspace's owner (the workspace open to it for this run).
	chmod 777 "$WS"
	degraded "idmap EINVAL" idmap-einval \
		"$WIDENING"$'\n'"berth: not enforced: idmapped mounts (cannot make an idmapped mount of \`$WS\`: Invalid argument); $ID_TAIL" \
		"" sh -c 'echo x >idmap-probe'
	chmod 755 "$WS"
	eq "idmap EINVAL --allow-degraded: the file written belongs to host uid 1610612736" \
		"$(stat -c %u "$WS/idmap-probe" 2>&1)" 1610612736
	rm -f "$WS/idmap-probe"
	eq "idmap EINVAL --allow-degraded: the record says not idmapped" "$(rec workspace_idmapped)" false
	has_shortfall "idmap EINVAL --allow-degraded" "workspace is not an idmapped mount"
	likewise "idmap --allow-degraded (its own cause)" idmap \
		"$WIDENING"$'\n'"berth: not enforced: idmapped mounts (idmapped mounts are forced off: Operation not supported); $ID_TAIL" \
		--allow-degraded --yes -- true
fi
# Without mount_setattr(2) (Linux < 5.12) berth cannot build its mounts at
# all: refused, even degraded (docs/security.md).
run idmap-enosys --allow-degraded --yes -- true
eq "no mount_setattr --allow-degraded: refused (125)" "$RC" 125
has "no mount_setattr --allow-degraded: names the read-only remount" "$SAID" "$NO_MOUNT_SETATTR"

# ---------------------------------------------------------------- cgroups
CPUS=$(nproc)
if [ "$CPUS" -gt 4 ]; then AFF="4 of $CPUS CPUs"; else AFF="4 requested, $CPUS available, not restricted"; fi
LIMITS="berth: limits: rlimits (memory: not enforced, the default 8G limit not applied: RLIMIT_AS breaks runtimes; RLIMIT_NPROC for pids; CPU affinity for cpus: $AFF) (no writable cgroup for this caller)"
if [ $ROOT -eq 1 ]; then
	PIDS='berth: not enforced: pids (RLIMIT_NPROC does not apply to root)'
	run cgroup -- true
	eq "no cgroup mounted: runs on rlimits (0)" "$RC" 0
	same "no cgroup mounted: exactly the limits lines" "$ERR" "$LIMITS"$'\n'"$PIDS"
	eq "no cgroup mounted: the record says rlimits" "$(rec limits.mode)" rlimits
	eq "no cgroup mounted: the record says memory not enforced" "$(rec limits.memory_enforced)" false
	has_shortfall "no cgroup mounted" "memory: not enforced (8589934592 bytes asked)"
	SHIMMED=$ERR
	forced cgroup -- true
	same "no cgroup mounted: BERTH_TEST_FORCE_OFF=cgroup prints the same" "$ERR" "$SHIMMED"
	run cgroup --pids 20 -- true
	eq "no cgroup mounted, --pids 20 as root: refused (125)" "$RC" 125
	same "no cgroup mounted, --pids 20 as root: the refusal" "$ERR" \
		"berth: cannot enforce the requested limits: pids (RLIMIT_NPROC does not apply to root)"$'\n'"berth: hint: mount the cgroup v2 hierarchy at /sys/fs/cgroup, or pass \`--allow-degraded\`; see \`berth doctor\`"
	run cgroup --allow-degraded --yes -- true
	eq "no cgroup mounted --allow-degraded: runs (0)" "$RC" 0
	same "no cgroup mounted --allow-degraded: the widening and the limits lines" "$ERR" "$WIDENING"$'\n'"$LIMITS"$'\n'"$PIDS"
else
	T=$((T + 1)); echo "ok $T - no cgroup mounted # SKIP the shim needs root (a private mount namespace)"
fi

echo "1..$T"
[ "$FAILS" -eq 0 ]
