#!/usr/bin/env bash
# bench/bench-sessions.sh - N concurrent idle agent sessions: how long spawning
# them takes, what each costs in memory (PSS and RSS of the supervisor, the
# janitor, the sandbox's pid 1 and the idle agent), and that `berth stop --all`
# leaves nothing behind: no process, no control socket, no lock holder, no
# cgroup of a run, no descriptor growth in the calling shell.
#
# The agent is the `shell` profile's idle bash (no network), each session in
# its own sandbox with its own pty, libvterm screen and control socket.
#
# usage: bench/bench-sessions.sh [-n SESSIONS] [-b BERTH] [-o 'RUN OPTIONS']   (default 100, no options)
#   -o '--network api-only': each supervisor also runs the egress broker
#   Exit 0 after the report when nothing leaked, 1 otherwise.
set -uo pipefail
N=100
OPTS=""
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BERTH="$(dirname "$here")/build/berth"
while getopts 'n:b:o:h' o; do
	case $o in
	n) N=$OPTARG ;;
	o) OPTS=$OPTARG ;;
	b) BERTH=$OPTARG ;;
	*) sed -n '2,15p' "$0"; exit 2 ;;
	esac
done
BERTH=$(readlink -f "$BERTH")
TOP=$(mktemp -d /tmp/berth-bench-sessions.XXXXXX)
chmod 755 "$TOP"
export XDG_RUNTIME_DIR=$TOP/run XDG_STATE_HOME=$TOP/state XDG_CONFIG_HOME=$TOP/config
mkdir -p "$XDG_RUNTIME_DIR"; chmod 700 "$XDG_RUNTIME_DIR"
trap '"$BERTH" stop --all --grace 0 >/dev/null 2>&1; rm -rf "$TOP"' EXIT
cd "$TOP" || exit 1
bad=0
tree() { local p=$1 c; echo "$p"; for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do tree "$c"; done; }
cg_count() { find /sys/fs/cgroup -maxdepth 4 -type d -name 'berth-*' 2>/dev/null | wc -l; }
fds_before=$(ls /proc/$$/fd | wc -l)
cg_before=$(cg_count)
mem_before=$(awk '/MemAvailable/ {print $2}' /proc/meminfo)

t0=$(date +%s.%N)
for i in $(seq "$N"); do
	# shellcheck disable=SC2086  # OPTS is a list of options
	"$BERTH" spawn shell --name "b$i" --size 24x80 $OPTS </dev/null >/dev/null 2>"$TOP/err" || { echo "spawn b$i failed: $(cat "$TOP/err")"; bad=1; break; }
done
t1=$(date +%s.%N)
sleep 2
alive=$("$BERTH" ps --json | python3 -c 'import json,sys; print(sum(r["alive"] for r in json.load(sys.stdin)))')
mem_after=$(awk '/MemAvailable/ {print $2}' /proc/meminfo)
cg_during=$(cg_count)
# Memory per session: every process of each session's tree.
all=()
pss=0 rss=0 sup_pss=0 nproc=0 sup_fds=0
for i in $(seq "$N"); do
	sup=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$XDG_RUNTIME_DIR/berth/sessions/b$i/session.json" 2>/dev/null) || continue
	sup_fds=$((sup_fds + $(ls /proc/"$sup"/fd 2>/dev/null | wc -l)))
	for p in $(tree "$sup"); do
		all+=("$p")
		nproc=$((nproc + 1))
		read -r a b < <(awk '/^Pss:/ {p=$2} /^Rss:/ {r=$2} END {print p+0, r+0}' /proc/"$p"/smaps_rollup 2>/dev/null)
		pss=$((pss + a)); rss=$((rss + b))
		[ "$p" = "$sup" ] && sup_pss=$((sup_pss + a))
	done
done
echo "sessions: $N spawned in $(echo "$t1 - $t0" | bc) s ($(echo "scale=1; ($t1 - $t0) * 1000 / $N" | bc) ms each), $alive alive"
echo "processes: $nproc ($(echo "scale=2; $nproc / $N" | bc) per session); supervisor descriptors: $(echo "scale=1; $sup_fds / $N" | bc) each"
echo "memory per session: PSS $(echo "scale=0; $pss / $N" | bc) KiB (supervisor alone $(echo "scale=0; $sup_pss / $N" | bc) KiB), RSS $(echo "scale=0; $rss / $N" | bc) KiB"
echo "MemAvailable dropped by $(( (mem_before - mem_after) / N )) KiB per session; berth cgroups: $cg_before before, $cg_during with the sessions"
[ "$alive" = "$N" ] || { echo "LEAK/FAIL: $alive of $N alive"; bad=1; }

t2=$(date +%s.%N)
"$BERTH" stop --all --grace 2s 2>"$TOP/err" || { echo "stop --all failed: $(tail -3 "$TOP/err")"; bad=1; }
t3=$(date +%s.%N)
echo "stop --all: $(echo "$t3 - $t2" | bc) s"
sleep 1
left=0
for p in "${all[@]}"; do [ -d /proc/"$p" ] && ! grep -q '^State:.*Z' /proc/"$p"/status 2>/dev/null && left=$((left + 1)); done
socks=$(find "$XDG_RUNTIME_DIR" -name ctl.sock | wc -l)
still=$("$BERTH" ps --json | python3 -c 'import json,sys; print(sum(r["alive"] for r in json.load(sys.stdin)))')
fds_after=$(ls /proc/$$/fd | wc -l)
cg_after=$(cg_count)
echo "after stop --all: processes left $left, sockets left $socks, sessions alive $still, cgroups $cg_before -> $cg_after, shell fds $fds_before -> $fds_after"
[ "$left" = 0 ] && [ "$socks" = 0 ] && [ "$still" = 0 ] && [ "$cg_after" -le "$cg_before" ] && [ "$fds_after" = "$fds_before" ] || { echo "LEAK"; bad=1; }
"$BERTH" rm --purge $(seq -f 'b%g' "$N") 2>/dev/null
[ -z "$(ls "$XDG_STATE_HOME/berth/sessions" 2>/dev/null)" ] || { echo "LEAK: state left after rm --purge"; bad=1; }
[ $bad = 0 ] && echo "no leaks"
exit $bad
