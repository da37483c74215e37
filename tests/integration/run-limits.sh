#!/usr/bin/env bash
# Memory limits that tell the truth (src/sandbox/limits.c): a --memory berth
# enforces as memory (a cgroup), or refuses -- never an RLIMIT_AS that kills
# the runtimes agents are written in (Bun, Node, Go, Java reserve address
# space with MAP_NORESERVE).
#
# usage: run-limits.sh /path/to/berth
#
# Works as root and as an unprivileged user; which half runs is decided by
# what the host gives this caller, and each half asserts what the other
# cannot (nothing is skipped):
#   cgroup (root, or a user in a delegated cgroup): --memory 64M kills a
#     program that touches 200 MiB; the measurement says memory_enforced;
#   rlimits (a user without a delegated cgroup): --memory is refused (exit 2,
#     the value and the ways out named) by run and --dry-run alike, and
#     nothing is recorded; the default run still runs and says memory is not
#     enforced; --allow-degraded --memory 2G runs a 16 GiB MAP_NORESERVE
#     reservation and says memory is not enforced.
# Bounds, for everyone: values past a maximum or malformed are refused with
# the range named, by run and --dry-run alike; the largest valid values are
# read back from the kernel and attested; a kernel value other than the
# policy's (the test build's BERTH_TEST_LIMIT_SKEW) attests PARTIAL, and
# an unknown skew is refused.  The numbers of other commands (peek --lines,
# stop --grace, spawn --size, rpc --timeout) are refused out of range with
# the option, the value and the range named (exit 2).
# As root, in addition: cgroup v1 directories delegated by hand to the user
# `bertht` (mkdir, chown) make --memory 64M enforced for that user too.
# Output is TAP; exit status 1 if any check failed.

set -u
export LC_ALL=C
unset BERTH_TEST_FORCE_OFF BERTH_AUDIT_DIR

if [ $# -ne 1 ]; then
	echo "usage: $0 /path/to/berth" >&2
	exit 2
fi
BERTH=$(readlink -f -- "$1")
ME=$(id -u)
DUSER=bertht

# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"  # T, FAILS, pass, fail, has, hasnt
eq() { if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'" "rc=$RC" "stderr: $ERR"; fi; }

TOP=$(mktemp -d /tmp/berth-limits.XXXXXX) || { echo "Bail out! mktemp failed"; exit 1; }
chmod 755 "$TOP"
WS=$TOP/ws; mkdir "$WS"; chmod 777 "$WS"
DELEG=()   # cgroup directories made for the delegation test (root), removed at exit
cleanup() {
	local d
	for d in "${DELEG[@]}"; do
		[ -d "$d" ] || continue
		find "$d" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null
		rmdir "$d" 2>/dev/null
	done
	rm -rf "$TOP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
export XDG_STATE_HOME=$TOP/state XDG_CONFIG_HOME=$TOP/config

# br ARGS... : berth run ARGS in $WS; sets RC OUT ERR
br() {
	(cd "$WS" && "$BERTH" run "$@" </dev/null >"$TOP/out" 2>"$TOP/err")
	RC=$?
	OUT=$(cat "$TOP/out"); ERR=$(cat "$TOP/err")
}
# a program that allocates and touches 200 MiB
TOUCH200='import sys; b = b"x" * (200 << 20); print("TOUCHED", len(b) >> 20)'
# a runtime's reservation: 16 GiB, MAP_PRIVATE|MAP_ANONYMOUS|MAP_NORESERVE (0x4000)
RESERVE='import mmap; m = mmap.mmap(-1, 16 << 30, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x4000); print("RESERVED", len(m) >> 30)'
last_run() { ls -t "$XDG_STATE_HOME/berth/runs" 2>/dev/null | head -n1; }
jq_() { python3 -c 'import json,sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): v = v[k]
print(json.dumps(v) if not isinstance(v, str) else v)' "$1" "$2" 2>/dev/null; }

# ------------------------------------------------------------ which mode
br -- true
eq "default run: exits 0" "$RC" 0
MODE=cgroup
case $ERR in *"berth: limits: rlimits ("*) MODE=rlimits ;; esac
[ "$ME" -eq 0 ] && eq "root gets cgroups" "$MODE" cgroup
echo "# uid $ME: $MODE"
E=$XDG_STATE_HOME/berth/runs/$(last_run)/enforced.json

if [ "$MODE" = rlimits ]; then
	# -------------------------------------------------------- rlimits: refuse
	has "rlimits: the default run says memory is not enforced" "$ERR" \
		"berth: limits: rlimits (memory: not enforced, the default 8G limit not applied: RLIMIT_AS breaks runtimes;"
	eq "rlimits: measured: memory_enforced false" "$(jq_ "$E" limits.memory_enforced)" false
	eq "rlimits: measured: no RLIMIT_AS" "$(jq_ "$E" limits.rlimits.as)" null
	has "rlimits: attested shortfall: memory not enforced" "$(jq_ "$E" shortfalls)" "memory: not enforced (8589934592 bytes asked)"
	eq "rlimits: verdict PARTIAL" "$(jq_ "$E" verdict)" PARTIAL

	rm -rf "$XDG_STATE_HOME" "$XDG_CONFIG_HOME"
	br --memory 2G -- sh -c 'echo ran > /workspace/ran'
	eq "refuse: --memory 2G exits 2" "$RC" 2
	has "refuse: names the value" "$ERR" "berth: --memory \`2G\` cannot be enforced: this caller has no writable cgroup"
	has "refuse: says only an address-space rlimit is available" "$ERR" "only an address-space rlimit (RLIMIT_AS) is available"
	has "refuse: says why that breaks runtimes" "$ERR" "kills runtimes that reserve large ranges (Bun/JavaScriptCore, Node/V8, Go, Java)"
	has "refuse: hint systemd-run with Delegate=yes" "$ERR" "\`systemd-run --user --scope -p Delegate=yes berth run ...\`"
	ADVICE=$("$BERTH" doctor --json | python3 -c 'import json,sys; print([c for c in json.load(sys.stdin)["checks"] if c["name"] == "resource limits"][0]["fix"].replace("for cgroup limits as this user: ", "", 1))')
	[ -n "$ADVICE" ] && has "refuse: the hint is berth doctor's way to a cgroup on this machine" "$ERR" "berth: hint: $ADVICE; or pass" ||
		fail "refuse: berth doctor gives a way to a cgroup" "no fix in berth doctor --json"
	has "refuse: hint --allow-degraded" "$ERR" "pass \`--allow-degraded\` to run without a memory limit"
	eq "refuse: nothing on stdout" "$OUT" ""
	[ ! -e "$WS/ran" ] && pass "refuse: the command did not run" || fail "refuse: the command did not run" "ran"
	eq "refuse: nothing recorded (no audit log, run record or key)" \
		"$(find "$XDG_STATE_HOME" "$XDG_CONFIG_HOME" -type f 2>/dev/null)" ""
	br --memory 512M --cpus 1 -- true
	eq "refuse: --memory 512M exits 2 too" "$RC" 2
	has "refuse: names 512M" "$ERR" "--memory \`512M\` cannot be enforced"
	br --dry-run --memory 2G -- true
	eq "dry-run: refuses what the run refuses (exit 2)" "$RC" 2
	has "dry-run: the same message" "$ERR" "berth: --memory \`2G\` cannot be enforced"
	eq "dry-run: prints no policy" "$OUT" ""
	br --dry-run --memory 2G --allow-degraded -- true
	eq "dry-run: --allow-degraded --memory 2G accepted" "$RC" 0
	has "dry-run: and prints the policy" "$OUT" "digest: sha256:"
	br --dry-run -- true
	eq "dry-run: the default accepted" "$RC" 0
	eq "refuse: still nothing recorded after the dry runs" \
		"$(find "$XDG_STATE_HOME" "$XDG_CONFIG_HOME" -type f 2>/dev/null)" ""

	# -------------------------------------------------------- rlimits: degraded
	br --allow-degraded --yes --memory 2G -- python3 -c "$RESERVE"
	eq "degraded: --memory 2G runs a 16 GiB MAP_NORESERVE reservation (exit 0)" "$RC" 0
	eq "degraded: the reservation succeeded" "$OUT" "RESERVED 16"
	has "degraded: says memory is not enforced" "$ERR" \
		"berth: not enforced: memory (only an address-space rlimit (RLIMIT_AS) is available"
	has "degraded: the limits line says so too" "$ERR" "memory: not enforced (--allow-degraded)"
	E=$XDG_STATE_HOME/berth/runs/$(last_run)/enforced.json
	eq "degraded: measured: memory_enforced false" "$(jq_ "$E" limits.memory_enforced)" false
	has "degraded: attested: memory not enforced, 2G asked" "$(jq_ "$E" shortfalls)" "memory: not enforced (2147483648 bytes asked)"
	br -- python3 -c "$RESERVE"
	eq "default: the same reservation runs (no RLIMIT_AS by default)" "$OUT" "RESERVED 16"
	br --allow-degraded --yes --memory 64M -- python3 -c "$TOUCH200"
	eq "degraded: honest: 200 MiB touched under an unenforced 64M" "$OUT" "TOUCHED 200"
	D=$("$BERTH" doctor 2>&1)
	has "doctor: says rlimit mode has no memory limit" "$D" "no memory limit in this mode: an explicit --memory is refused (exit 2) unless --allow-degraded"
	has "doctor: says how to get a cgroup" "$D" "fix: for cgroup limits as this user:"
else
	# -------------------------------------------------------- cgroup: enforce
	eq "cgroup: measured: memory_enforced true" "$(jq_ "$E" limits.memory_enforced)" true
	eq "cgroup: memory read back (default 8G)" "$(jq_ "$E" limits.memory)" 8589934592
	br --memory 64M -- python3 -c "$TOUCH200"
	eq "cgroup: --memory 64M kills a program touching 200 MiB (137)" "$RC" 137
	eq "cgroup: ... before it finished" "$OUT" ""
	has "cgroup: berth says the OOM killer ended it at the limit" "$ERR" \
		"berth: the command was killed by the kernel's OOM killer: the sandbox reached its memory limit of 64 MiB (--memory)"
	br --memory 512M -- python3 -c "$TOUCH200"
	eq "cgroup: --memory 512M lets it finish" "$OUT" "TOUCHED 200"
	hasnt "cgroup: no OOM line when nothing was killed" "$ERR" "OOM killer"
	br --memory 512M -- sh -c 'kill -9 $$'
	eq "cgroup: a SIGKILL of its own: 137" "$RC" 137
	hasnt "cgroup: ... and no OOM line for it" "$ERR" "OOM killer"
	br --dry-run --memory 2G -- true
	eq "cgroup: dry-run --memory 2G accepted" "$RC" 0
	br --memory 2G -- python3 -c "$RESERVE"
	eq "cgroup: --memory 2G runs a 16 GiB MAP_NORESERVE reservation" "$OUT" "RESERVED 16"
	E=$XDG_STATE_HOME/berth/runs/$(last_run)/enforced.json
	eq "cgroup: measured: memory.max 2G read back" "$(jq_ "$E" limits.memory)" 2147483648
	hasnt "cgroup: no memory shortfall" "$(jq_ "$E" shortfalls)" "memory"
	D=$("$BERTH" doctor 2>&1)
	hasnt "doctor: no memory refusal in cgroup mode" "$D" "no memory limit in this mode"
fi

# ------------------------------------------------------------ bounds (issue 15): every user
# Values past a maximum, past 2^63 or 2^64, or malformed: exit 2 with the
# option, the value and the range, by the run and --dry-run alike (the same
# parser), and nothing recorded.  Once --memory 2^63..2^64-1 was stored as a
# negative number, applied as no limit, and attested ENFORCED.
rm -rf "$XDG_STATE_HOME" "$XDG_CONFIG_HOME"
while IFS='|' read -r opt val want; do
	br "$opt" "$val" -- sh -c 'echo ran > /workspace/ran'
	eq "bounds: run $opt $val: exit 2" "$RC" 2
	eq "bounds: run $opt $val: the message" "$(head -n1 <<<"$ERR")" "berth: invalid $opt \`$val\`: $want"
	R1=$ERR
	br --dry-run "$opt" "$val" -- true
	eq "bounds: dry-run $opt $val: exit 2" "$RC" 2
	eq "bounds: dry-run $opt $val: the run's message and hint" "$ERR" "$R1"
done <<'EOF_BOUNDS'
--memory|9223372036854775808|too large, expected 16M to 1024T
--memory|18446744073709551615|too large, expected 16M to 1024T
--memory|17179869184G|too large, expected 16M to 1024T
--memory|-1|not a size, expected 16M to 1024T
--tmp-size|18446744073709551616|too large, expected 1M to 1024T
--tmp-size|0|zero, expected 1M to 1024T
--cpus|1e3|not a number of CPUs, expected 0.01 to 1024
--cpus|5.0000|more than 3 decimals, expected 0.01 to 1024
--cpus|0.5000000000|more than 3 decimals, expected 0.01 to 1024
--cpus|0.0005|finer than 0.001 CPU, expected 0.01 to 1024
--pids|+64|not a whole number, expected 2 to 4194304
--nofile|0x100|not a whole number, expected 16 to 1048576
--timeout|8761h|too large, expected 1ms to 8760h
EOF_BOUNDS
[ ! -e "$WS/ran" ] && pass "bounds: no refused command ran" || fail "bounds: no refused command ran" "ran"
eq "bounds: nothing recorded by the refusals" "$(find "$XDG_STATE_HOME" "$XDG_CONFIG_HOME" -type f 2>/dev/null)" ""

# The largest valid values, applied and read back from the kernel: the
# cgroup files (memory.max or memory.limit_in_bytes, pids.max, cpu.max or
# cpu.cfs_*), the /tmp tmpfs (statfs in the sandbox), RLIMIT_NOFILE (and
# RLIMIT_NPROC in rlimit mode), compared by the attestation.
HN=$(ulimit -Hn); [ "$HN" = unlimited ] || [ "$HN" -gt 1048576 ] && HN=1048576
HU=$(ulimit -Hu); [ "$HU" = unlimited ] || [ "$HU" -gt 4194304 ] && HU=4194304
# above berth's own hard limits the sandbox cannot raise them: refused by
# the run and --dry-run alike (once: exit 125 after the start, dry run 0)
if [ "$HN" -lt 1048576 ]; then
	for d in "" --dry-run; do
		br $d --nofile $((HN + 1)) -- true
		eq "hard limit: ${d:-run} --nofile $((HN + 1)): exit 2" "$RC" 2
		eq "hard limit: ${d:-run} --nofile $((HN + 1)): the message" "$(head -n1 <<<"$ERR")" \
			"berth: invalid --nofile \`$((HN + 1))\`: above berth's own hard limit $HN, expected 16 to $HN here"
	done
else
	pass "hard limit: RLIMIT_NOFILE's hard limit allows --nofile 1048576 here"
fi
if [ "$MODE" = rlimits ] && [ "$HU" -lt 4194304 ]; then
	for d in "" --dry-run; do
		br $d --pids $((HU + 1)) -- true
		eq "hard limit: ${d:-run} --pids $((HU + 1)) in rlimit mode: exit 2" "$RC" 2
		has "hard limit: ${d:-run} --pids $((HU + 1)): the message" "$ERR" \
			"berth: invalid --pids \`$((HU + 1))\`: above berth's own hard RLIMIT_NPROC $HU (rlimit mode: no writable cgroup), expected 2 to $HU here"
	done
fi
eq "hard limit: nothing recorded by the refusals" "$(find "$XDG_STATE_HOME" "$XDG_CONFIG_HOME" -type f 2>/dev/null)" ""
if [ "$MODE" = cgroup ]; then
	br --memory 1024T --tmp-size 1024T --pids 4194304 --cpus 1024 --nofile "$HN" -- true
	eq "extremes: the run exits 0" "$RC" 0
	E=$XDG_STATE_HOME/berth/runs/$(last_run)/enforced.json
	eq "extremes: memory 1024T read back" "$(jq_ "$E" limits.memory)" 1125899906842624
	eq "extremes: pids 4194304 read back" "$(jq_ "$E" limits.pids)" 4194304
	eq "extremes: cpu quota of 1024 CPUs read back" "$(jq_ "$E" limits.cpu.quota_us)/$(jq_ "$E" limits.cpu.period_us)" 102400000/100000
	eq "extremes: the /tmp tmpfs of 1024T read back" "$(jq_ "$E" limits.tmp)" 1125899906842624
	eq "extremes: RLIMIT_NOFILE $HN read back" "$(jq_ "$E" limits.rlimits.nofile)" "$HN"
	eq "extremes: no shortfall" "$(jq_ "$E" shortfalls)" "[]"
	eq "extremes: verdict ENFORCED" "$(jq_ "$E" verdict)" ENFORCED
	eq "extremes: berth attest says ENFORCED" "$(cd "$WS" && "$BERTH" attest --last | python3 -c 'import json,sys; print(json.load(sys.stdin)["verdict"])')" ENFORCED
	# one byte past a page: the kernel's rounding is no mismatch
	br --memory 16777217 --tmp-size 1048577 -- true
	E=$XDG_STATE_HOME/berth/runs/$(last_run)/enforced.json
	eq "rounding: memory.max keeps 16777216 (down to a page)" "$(jq_ "$E" limits.memory)" 16777216
	eq "rounding: the tmpfs keeps 1052672 (up to a page)" "$(jq_ "$E" limits.tmp)" 1052672
	eq "rounding: no shortfall" "$(jq_ "$E" shortfalls)" "[]"
	SKEWS="memory|memory limit: asked 67108864 bytes, read back 68157440 (memory.max or memory.limit_in_bytes, rounded down to pages)
pids|pids limit: asked 20, read back 21 (pids.max)
cpu|cpu limit: asked 1000 millicpus, read back 101000 us per 100000 us (cpu.max or cpu.cfs_quota_us)"
else
	br --allow-degraded --yes --tmp-size 1024T --pids "$HU" --nofile "$HN" -- true
	eq "extremes (rlimits): the run exits 0" "$RC" 0
	E=$XDG_STATE_HOME/berth/runs/$(last_run)/enforced.json
	eq "extremes (rlimits): the /tmp tmpfs of 1024T read back" "$(jq_ "$E" limits.tmp)" 1125899906842624
	eq "extremes (rlimits): RLIMIT_NPROC $HU read back" "$(jq_ "$E" limits.rlimits.nproc)" "$HU"
	eq "extremes (rlimits): RLIMIT_NOFILE $HN read back" "$(jq_ "$E" limits.rlimits.nofile)" "$HN"
	eq "extremes (rlimits): the one shortfall is the memory rlimit mode cannot hold" \
		"$(jq_ "$E" shortfalls)" '["memory: not enforced (8589934592 bytes asked): rlimit mode has no cgroup, and berth sets no RLIMIT_AS, which counts reserved address space and breaks runtimes"]'
	br --tmp-size 1048577 -- true
	E=$XDG_STATE_HOME/berth/runs/$(last_run)/enforced.json
	eq "rounding (rlimits): the tmpfs keeps 1052672 (up to a page)" "$(jq_ "$E" limits.tmp)" 1052672
	hasnt "rounding (rlimits): no tmp shortfall" "$(jq_ "$E" shortfalls)" "tmp limit"
	SKEWS=""
fi
# A kernel value other than the policy's (the test build's
# BERTH_TEST_LIMIT_SKEW gives the kernel a little more or less): PARTIAL,
# naming the limit, the value asked and the value read.
SKEWS="${SKEWS:+$SKEWS
}nofile|nofile limit: asked 256, read back 255 (RLIMIT_NOFILE)
tmp|tmp limit: asked 16777216 bytes, read back 17825792 (statfs of the /tmp tmpfs, rounded up to pages)"
if ! grep -q BERTH_TEST_LIMIT_SKEW "$BERTH"; then
	fail "mismatch: a test build" "berth was built without -Dcrash_points=true (tests/run builds it so)"
else
	while IFS='|' read -r what why; do
		if [ "$MODE" = cgroup ]; then
			BERTH_TEST_LIMIT_SKEW=$what br --memory 64M --pids 20 --cpus 1 --nofile 256 --tmp-size 16M -- true
		else
			BERTH_TEST_LIMIT_SKEW=$what br --nofile 256 --tmp-size 16M -- true
		fi
		eq "mismatch $what: the run exits 0" "$RC" 0
		E=$XDG_STATE_HOME/berth/runs/$(last_run)/enforced.json
		eq "mismatch $what: verdict PARTIAL" "$(jq_ "$E" verdict)" PARTIAL
		has "mismatch $what: the shortfall names it" "$(jq_ "$E" shortfalls)" "\"$why\""
		[ "$MODE" = cgroup ] && eq "mismatch $what: the only shortfall" "$(jq_ "$E" shortfalls)" "[\"$why\"]"
	done <<<"$SKEWS"
	# a misspelt switch once skewed nothing, silently: the test it drove
	# passed for the wrong reason.  Refused before the run starts.
	rm -rf "$XDG_STATE_HOME" "$XDG_CONFIG_HOME"
	for what in bogus Memory 'memory,pids' ' tmp'; do
		BERTH_TEST_LIMIT_SKEW=$what br --memory 64M -- sh -c 'echo ran > /workspace/ran'
		eq "skew '$what': exit 2" "$RC" 2
		eq "skew '$what': the message names it and the accepted values" "$ERR" \
			"berth: unknown BERTH_TEST_LIMIT_SKEW \`$what\`
berth: hint: use one of memory, pids, cpu, nofile, tmp (or unset it)"
	done
	[ ! -e "$WS/ran" ] && pass "skew: no refused command ran" || fail "skew: no refused command ran" "ran"
	eq "skew: nothing recorded by the refusals" "$(find "$XDG_STATE_HOME" "$XDG_CONFIG_HOME" -type f 2>/dev/null)" ""
fi

# ------------------------------------------------------------ the numbers of other commands
# Each refused with exit 2 before it looks for the session or the app,
# naming the option, the value and the range (peek's --lines and stop's
# --grace without a value were "unexpected argument"/"unknown option", and
# stop's range read "at most 10m" for `-1` or `abc`).
export XDG_RUNTIME_DIR=$TOP/run; mkdir -p -m 700 "$XDG_RUNTIME_DIR"
rm -rf "$XDG_STATE_HOME" "$XDG_CONFIG_HOME"
cmd() { "$BERTH" "$@" </dev/null >"$TOP/out" 2>"$TOP/err"; RC=$?; OUT=$(cat "$TOP/out"); ERR=$(cat "$TOP/err"); }
LINES_R="give 1 to 10000"
GRACE_R="give 0, or 1ms to 10m (a duration such as 500ms, 5s or 2m)"
SIZE_H="berth: hint: give ROWSxCOLS, 2..500 rows and 10..1000 columns, e.g. 40x120"
RPC_R="want milliseconds (1..3600000), or a duration such as 500ms, 5s or 2m (at most 1h)"
while IFS='|' read -r args want; do
	read -ra A <<<"$args"
	cmd "${A[@]}"
	eq "command bounds: $args: exit 2" "$RC" 2
	want=$(printf '%b' "$want")
	eq "command bounds: $args: the message" "$(head -n "$(wc -l <<<"$want")" <<<"$ERR")" "$want"
	eq "command bounds: $args: nothing on stdout" "$OUT" ""
done <<EOF_CMD
peek s --lines 0|berth: invalid --lines \`0\`: $LINES_R
peek s --lines 10001|berth: invalid --lines \`10001\`: $LINES_R
peek s --lines 18446744073709551617|berth: invalid --lines \`18446744073709551617\`: $LINES_R
peek s --lines -1|berth: invalid --lines \`-1\`: $LINES_R
peek s --lines 1e3|berth: invalid --lines \`1e3\`: $LINES_R
peek s --lines|berth: --lines needs a value: $LINES_R
stop s --grace 10m1ms|berth: invalid --grace \`10m1ms\`: $GRACE_R
stop s --grace 601s|berth: invalid --grace \`601s\`: $GRACE_R
stop s --grace -1|berth: invalid --grace \`-1\`: $GRACE_R
stop s --grace abc|berth: invalid --grace \`abc\`: $GRACE_R
stop s --grace 0.0001|berth: invalid --grace \`0.0001\`: $GRACE_R
stop s --grace|berth: --grace needs a value: give 0, or 1ms to 10m (a duration)
spawn shell --size 1x120|berth: spawn: invalid --size \`1x120\`\n$SIZE_H
spawn shell --size 501x120|berth: spawn: invalid --size \`501x120\`\n$SIZE_H
spawn shell --size 40x9|berth: spawn: invalid --size \`40x9\`\n$SIZE_H
spawn shell --size 40x1001|berth: spawn: invalid --size \`40x1001\`\n$SIZE_H
spawn shell --size 40x|berth: spawn: invalid --size \`40x\`\n$SIZE_H
spawn shell --size -40x120|berth: spawn: invalid --size \`-40x120\`\n$SIZE_H
spawn shell --size 4294967336x120|berth: spawn: invalid --size \`4294967336x120\`\n$SIZE_H
rpc app --export e --timeout 0|berth: rpc: bad --timeout \`0\`: $RPC_R
rpc app --export e --timeout 3600001|berth: rpc: bad --timeout \`3600001\`: $RPC_R
rpc app --export e --timeout 18446744073709551617|berth: rpc: bad --timeout \`18446744073709551617\`: $RPC_R
rpc app --export e --timeout 61m|berth: rpc: bad --timeout \`61m\`: $RPC_R
rpc app --export e --timeout -5|berth: rpc: bad --timeout \`-5\`: $RPC_R
rpc app --export e --timeout 5x|berth: rpc: bad --timeout \`5x\`: $RPC_R
EOF_CMD
eq "command bounds: nothing recorded by the refusals" "$(find "$XDG_STATE_HOME" "$XDG_CONFIG_HOME" -type f 2>/dev/null)" ""

# ------------------------------------------------------------ forced rlimit mode, for everyone
# (BERTH_TEST_FORCE_OFF=cgroup: as if no cgroup were writable)
rm -rf "$XDG_STATE_HOME" "$XDG_CONFIG_HOME"
BERTH_TEST_FORCE_OFF=cgroup br --memory 2G -- true
eq "forced rlimits: --memory 2G refused (2)" "$RC" 2
BERTH_TEST_FORCE_OFF=cgroup br --dry-run --memory 2G -- true
eq "forced rlimits: dry-run refuses it too (2)" "$RC" 2
eq "forced rlimits: nothing recorded by the refusals" "$(find "$XDG_STATE_HOME" "$XDG_CONFIG_HOME" -type f 2>/dev/null)" ""
if [ "$ME" -eq 0 ]; then
	# root: RLIMIT_NPROC does not apply to it, so an explicit --pids is refused (125), dry-run alike
	BERTH_TEST_FORCE_OFF=cgroup br --pids 20 -- true
	eq "forced rlimits, root: --pids 20 refused (125)" "$RC" 125
	has "forced rlimits, root: ... named" "$ERR" "berth: cannot enforce the requested limits: pids (RLIMIT_NPROC does not apply to root)"
	BERTH_TEST_FORCE_OFF=cgroup br --dry-run --pids 20 -- true
	eq "forced rlimits, root: dry-run refuses --pids 20 too (125)" "$RC" 125
	eq "forced rlimits, root: ... and prints no policy" "$OUT" ""
	BERTH_TEST_FORCE_OFF=cgroup br --dry-run --pids 20 --allow-degraded -- true
	eq "forced rlimits, root: dry-run --pids 20 --allow-degraded accepted" "$RC" 0
	eq "forced rlimits, root: nothing recorded by the --pids refusals" "$(find "$XDG_STATE_HOME" "$XDG_CONFIG_HOME" -type f 2>/dev/null)" ""
else
	BERTH_TEST_FORCE_OFF=cgroup br --pids 20 -- true
	eq "forced rlimits, user: --pids 20 runs (RLIMIT_NPROC)" "$RC" 0
fi

# ------------------------------------------------------------ root: a cgroup delegated to a user
# cgroup v2 cannot be built here when the memory controller is bound to v1
# (this machine); cgroup v1 delegation is the same promise: directories the
# user owns, in the memory and pids hierarchies, the user's shell in them.
v1_dir() { # v1_dir CONTROLLER -> this process's cgroup directory in that v1 hierarchy
	local c=$1 rel mnt
	rel=$(awk -F: -v c="$c" '$1 != 0 { n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3 }' /proc/self/cgroup | head -n1)
	mnt=$(awk -v c="$c" '$9 == "cgroup" { n = split($NF, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $5 }' /proc/self/mountinfo | head -n1)
	[ -n "$mnt" ] && [ -n "$rel" ] && [ "${rel#/..}" = "$rel" ] && printf '%s%s\n' "$mnt" "${rel%/}"
}
if [ "$ME" -eq 0 ]; then
	UH=$TOP/user; mkdir "$UH"; chown "$DUSER" "$UH" 2>/dev/null
	if ! id "$DUSER" >/dev/null 2>&1; then
		fail "delegated: user $DUSER exists" "missing (useradd -m $DUSER)"
	elif [ -z "$(v1_dir memory)" ] || [ -z "$(v1_dir pids)" ]; then
		# a cgroup v2 host: the v2 path needs a memory controller there
		V2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
		if [ -n "$V2" ] && grep -qw memory "$V2/cgroup.controllers" 2>/dev/null; then
			P=$V2/berth-deleg-$$; mkdir "$P" "$P/shell"; DELEG+=("$P")
			echo "+memory +pids" >"$P/../cgroup.subtree_control" 2>/dev/null
			echo "+memory +pids" >"$P/cgroup.subtree_control"
			chown "$DUSER" "$P" "$P/cgroup.procs" "$P/cgroup.subtree_control" "$P/shell" "$P/shell/cgroup.procs"
			runuser -u "$DUSER" -- env XDG_STATE_HOME="$UH/state" XDG_CONFIG_HOME="$UH/config" sh -c 'echo $$ >"$1/shell/cgroup.procs" && cd "$2" && exec "$3" run --memory 64M -- python3 -c "$4"' \
				sh "$P" "$WS" "$BERTH" "$TOUCH200" </dev/null >"$TOP/out" 2>"$TOP/err"; RC=$?
			OUT=$(cat "$TOP/out"); ERR=$(cat "$TOP/err")
			eq "delegated v2: $DUSER's --memory 64M kills a 200 MiB toucher (137)" "$RC" 137
			hasnt "delegated v2: not refused" "$ERR" "cannot be enforced"
			eq "delegated v2: the run's cgroup is gone" "$(find "$P" -mindepth 1 -maxdepth 1 -name 'berth-*' -type d)" ""
		else
			fail "delegated: a cgroup v1 memory+pids hierarchy or a cgroup v2 memory controller" "neither"
		fi
	else
		DM=$(v1_dir memory)/berth-deleg-$$ DP=$(v1_dir pids)/berth-deleg-$$
		mkdir "$DM" && DELEG+=("$DM")
		[ "$DP" != "$DM" ] && mkdir "$DP" && DELEG+=("$DP")
		chown "$DUSER" "$DM" "$DM/cgroup.procs" "$DP" "$DP/cgroup.procs"
		# the user's shell moves itself in (its own process: cgroup v1 allows it), then runs berth
		deleg_run() { # deleg_run BERTH-ARGS...
			runuser -u "$DUSER" -- env XDG_STATE_HOME="$UH/state" XDG_CONFIG_HOME="$UH/config" sh -c 'echo $$ >"$1/cgroup.procs" && echo $$ >"$2/cgroup.procs" && cd "$3" && shift 3 && exec "$@"' \
				sh "$DM" "$DP" "$WS" "$BERTH" run "$@" </dev/null >"$TOP/out" 2>"$TOP/err"
			RC=$?
			OUT=$(cat "$TOP/out"); ERR=$(cat "$TOP/err")
		}
		deleg_run --memory 64M -- python3 -c "$TOUCH200"
		eq "delegated v1: $DUSER's --memory 64M kills a 200 MiB toucher (137)" "$RC" 137
		eq "delegated v1: ... before it finished" "$OUT" ""
		hasnt "delegated v1: not refused" "$ERR" "cannot be enforced"
		deleg_run --memory 512M -- python3 -c "$TOUCH200"
		eq "delegated v1: --memory 512M lets it finish" "$OUT" "TOUCHED 200"
		deleg_run --dry-run --memory 2G -- true
		eq "delegated v1: dry-run --memory 2G accepted" "$RC" 0
		eq "delegated v1: the run's cgroups are gone" \
			"$(find "$DM" "$DP" -mindepth 1 -maxdepth 1 -name 'berth-*' -type d)" ""
		eq "delegated v1: the probe's cgroup is gone" \
			"$(find "$DM" "$DP" -mindepth 1 -maxdepth 1 -name 'berth-check-*' -type d)" ""
		# without the delegation the same user is refused
		(cd "$WS" && runuser -u "$DUSER" -- env XDG_STATE_HOME="$UH/state" XDG_CONFIG_HOME="$UH/config" "$BERTH" run --memory 64M -- true </dev/null >"$TOP/out" 2>"$TOP/err"); RC=$?
		eq "undelegated: $DUSER's --memory 64M refused (2)" "$RC" 2
	fi
fi

echo "1..$T"
[ "$FAILS" -eq 0 ] || exit 1
exit 0
