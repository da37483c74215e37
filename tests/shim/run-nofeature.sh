#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
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
# same DESC GOT WANT: whole texts, the difference shown.
same() {
	if [ "$2" == "$3" ]; then pass "$1"
	else fail "$1" "text differs" "$(diff <(printf '%s\n' "$3") <(printf '%s\n' "$2") | sed -n '2,$p')"; fi
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

# run [SHIM-FEATURE|-] BERTH-ARGS...: RC, OUT, ERR (all of stderr) and LINES:
# stderr without the lines about limits that depend on the host's cgroups
# (the cgroup case reads ERR).
run() {
	local f=$1; shift
	if [ "$f" = - ]; then "$BERTH" run "$@" </dev/null >"$TOP/out" 2>"$TOP/err"
	else "$SHIM" "$f" "$BERTH" run "$@" </dev/null >"$TOP/out" 2>"$TOP/err"; fi
	RC=$?; OUT=$(cat "$TOP/out"); ERR=$(cat "$TOP/err")
	LINES=$(grep -v -e '^berth: limits: ' -e '^berth: not enforced: pids (RLIMIT_NPROC does not apply to root)$' "$TOP/err")
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
run landlock-enosys -- true
eq "landlock ENOSYS: refused (125)" "$RC" 125
same "landlock ENOSYS: the refusal names the kernel option" "$LINES" "$LL_REFUSED"$'\n'"$LL_ENOSYS"
run landlock-eopnotsupp -- true
eq "landlock EOPNOTSUPP: refused (125)" "$RC" 125
same "landlock EOPNOTSUPP: the refusal names lsm=" "$LINES" "$LL_REFUSED"$'\n'"$LL_EOPNOTSUPP"
SHIMMED=$LINES
forced landlock -- true
same "landlock: BERTH_TEST_FORCE_OFF=landlock prints what the kernel without it (EOPNOTSUPP) makes berth print" \
	"$LINES" "$SHIMMED"
BIND='import socket
try:
    socket.socket().bind(("127.0.0.1", 0)); print("BOUND")
except OSError as e: print("ERRNO", e.errno)'
for e in enosys:-38 eopnotsupp:-95; do
	run "landlock-${e%:*}" --allow-degraded --yes -- python3 -c "$BIND"
	eq "landlock ${e%:*} --allow-degraded: runs (0)" "$RC" 0
	same "landlock ${e%:*} --allow-degraded: exactly the notice" "$LINES" "$WIDENING"$'\n'"$LL_NOTICE"
	eq "landlock ${e%:*} --allow-degraded: really off (a TCP bind is allowed)" "$OUT" BOUND
	eq "landlock ${e%:*} --allow-degraded: the record's ruleset ABI is 0" "$(rec landlock.ruleset_abi)" 0
	eq "landlock ${e%:*} --allow-degraded: the record's status is none" "$(rec landlock.status)" none
	eq "landlock ${e%:*} --allow-degraded: the kernel's answer recorded (-errno)" "$(rec landlock.abi)" "${e#*:}"
	has_shortfall "landlock ${e%:*} --allow-degraded" "landlock: none (ruleset ABI 0)"
	SHIMMED=$LINES
done
forced landlock --allow-degraded --yes -- true
same "landlock --allow-degraded: the switch's notices are the kernel's" "$LINES" "$SHIMMED"

# ---------------------------------------------------------------- seccomp
run seccomp -- true
eq "seccomp: refused (125)" "$RC" 125
same "seccomp: the refusal names the kernel option" "$LINES" "$SC_REFUSED"$'\n'"$SC_HINT"
SHIMMED=$LINES
forced seccomp -- true
same "seccomp: BERTH_TEST_FORCE_OFF=seccomp prints the same" "$LINES" "$SHIMMED"
run seccomp --allow-degraded --yes -- sh -c 'grep "^Seccomp_filters:" /proc/self/status | tr -d "\t "'
eq "seccomp --allow-degraded: runs (0)" "$RC" 0
same "seccomp --allow-degraded: exactly the notice" "$LINES" "$WIDENING"$'\n'"$SC_NOTICE"
eq "seccomp --allow-degraded: really off (the shim's filter only)" "$OUT" "Seccomp_filters:1"
eq "seccomp --allow-degraded: the record has no filter digest of berth's" "$(rec seccomp.filter_sha256)" null
has_shortfall "seccomp --allow-degraded" "seccomp: berth loaded no filter (the 1 in force are not berth's)"
SHIMMED=$LINES
forced seccomp --allow-degraded --yes -- true
same "seccomp --allow-degraded: the switch's notices are the kernel's" "$LINES" "$SHIMMED"

# ---------------------------------------------------------------- user namespaces
# Refused as a container runtime's seccomp profile refuses them: berth names
# the filter (the switch stands for a sysctl and names those instead).
# As root berth first meets the refusal making the idmapped workspace
# (step 2, spawn_prepare.c), before its own clone, and blames the filesystem:
# a known bug, TODO until fixed.
TODO=""; [ $ROOT -eq 1 ] && TODO=" # TODO root: the idmapping's user namespace is refused first and reported as an idmap failure"
tpass() { T=$((T + 1)); echo "ok $T - $1$TODO"; }
tsame() {
	if [ "$2" == "$3" ]; then tpass "$1"; else
		T=$((T + 1)); [ -n "$TODO" ] || FAILS=$((FAILS + 1))
		echo "not ok $T - $1$TODO"
		diff <(printf '%s\n' "$3") <(printf '%s\n' "$2") | sed -n '2,$p' | sed 's/^/#   /'
	fi
}
run userns -- true
eq "userns: refused (125)" "$RC" 125
tsame "userns: the refusal names the seccomp filter above berth" "$LINES" "$US_REFUSED"$'\n'"$US_SECCOMP"
forced userns -- true
same "userns: BERTH_TEST_FORCE_OFF=userns names the sysctls" "$LINES" "$US_FORCED_REFUSED"$'\n'"$US_FORCED_HINT"
run userns --allow-degraded --yes -- readlink /proc/self/ns/user
eq "userns --allow-degraded: runs (0)" "$RC" 0
tsame "userns --allow-degraded: exactly the notices" "$LINES" "$WIDENING"$'\n'"$US_NOTICE"$'\n'"$GUARD_NOTICE"
eq "userns --allow-degraded: really off (the host's user namespace)" "$OUT" "$(readlink /proc/self/ns/user)"
eq "userns --allow-degraded: the record says shared" "$(rec namespaces.user)" shared
has_shortfall "userns --allow-degraded" "user namespace: shared"
SHIMMED=$LINES
forced userns --allow-degraded --yes -- true
tsame "userns --allow-degraded: the switch's notices are the kernel's" "$LINES" "$SHIMMED"
TODO=""

# ---------------------------------------------------------------- idmapped mounts
if [ $ROOT -eq 1 ]; then
	# A filesystem that cannot be idmapped (EINVAL), and a kernel before 5.12.
	for e in einval:"Invalid argument" enosys:"Function not implemented"; do
		run "idmap-${e%%:*}" -- true
		eq "idmap ${e%%:*}: refused (125)" "$RC" 125
		same "idmap ${e%%:*}: the refusal names the workspace and the errno" "$LINES" \
			"$ID_KEEP: cannot make an idmapped mount of \`$WS\`: ${e#*:}"$'\n'"$ID_HINT"
	done
	forced idmap -- true
	same "idmap: BERTH_TEST_FORCE_OFF=idmap gives the same hint" "$LINES" \
		"$ID_KEEP: idmapped mounts are forced off: Operation not supported"$'\n'"$ID_HINT"
	run idmap-einval --allow-degraded --yes -- true
	eq "idmap einval --allow-degraded: runs (0)" "$RC" 0
	same "idmap einval --allow-degraded: exactly the notice" "$LINES" \
		"$WIDENING"$'\n'"berth: not enforced: idmapped mounts (cannot make an idmapped mount of \`$WS\`: Invalid argument); $ID_TAIL"
	eq "idmap einval --allow-degraded: the record says not idmapped" "$(rec workspace_idmapped)" false
	has_shortfall "idmap einval --allow-degraded" "workspace is not an idmapped mount"
	forced idmap --allow-degraded --yes -- true
	same "idmap --allow-degraded: the switch's notice" "$LINES" \
		"$WIDENING"$'\n'"berth: not enforced: idmapped mounts (idmapped mounts are forced off: Operation not supported); $ID_TAIL"
fi
# Without mount_setattr(2) (Linux < 5.12) berth cannot build its mounts at
# all: refused, even degraded (docs/security.md).
run idmap-enosys --allow-degraded --yes -- true
eq "no mount_setattr --allow-degraded: refused (125)" "$RC" 125
has "no mount_setattr --allow-degraded: names the read-only remount" "$LINES" "$NO_MOUNT_SETATTR"

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
		"berth: cannot enforce the requested limits: pids (RLIMIT_NPROC does not apply to root)"$'\n'"berth: hint: run as root or in a delegated cgroup v2 subtree, or pass \`--allow-degraded\`; see \`berth doctor\`"
	run cgroup --allow-degraded --yes -- true
	eq "no cgroup mounted --allow-degraded: runs (0)" "$RC" 0
	same "no cgroup mounted --allow-degraded: the widening and the limits lines" "$ERR" "$WIDENING"$'\n'"$LIMITS"$'\n'"$PIDS"
else
	T=$((T + 1)); echo "ok $T - no cgroup mounted # SKIP the shim needs root (a private mount namespace)"
fi

echo "1..$T"
[ "$FAILS" -eq 0 ]
