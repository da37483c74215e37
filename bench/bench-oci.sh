#!/usr/bin/env bash
# bench/bench-oci.sh - berth as an OCI runtime against runc, in the same run,
# on the test image of tests/oci/image.sh (no registry) and a podman storage
# of the benchmark's own (tests/oci/common.sh: nothing of the machine's
# podman state is used):
#   podman    `podman run --rm IMAGE /bin/true` with --runtime A, then B,
#             strictly alternating (bench/runtime.c): what a user waits for,
#             podman's own share included
#   runtime   the runtime's own command line on one bundle (the image's root
#             file system as a plain directory, `runc spec`'s config.json with
#             /bin/true and no terminal): create, start, delete --force,
#             alternating A and B: the runtime's share alone
#   density   idle containers (`podman run -d IMAGE sleep 1000000`) started
#             one after another with A, until -d MAX, a failed start, a start
#             slower than 30 s or MemAvailable under 10 %; then the same with
#             B; per container: MemAvailable's drop, and the PSS and RSS of
#             its processes (conmon and everything under it: the runtime's
#             own supervisor, the command)
#
# usage: bench/bench-oci.sh [-n N] [-w W] [-d MAX] [-a RUNTIME] [-c RUNTIME] [-b BERTH]
#   -n N        measured rounds of podman and runtime (default 20; each round runs A once and B once)
#   -w W        warm-up rounds, not reported (default 3)
#   -d MAX      containers of the density test per runtime (default 100; 0: no density test)
#   -a RUNTIME  A: berth or runc (default berth)
#   -c RUNTIME  B: berth or runc (default runc); `-a runc -c runc` checks the script itself
#   -b BERTH    the berth binary (default build/berth)
# As root or as a user (rootless podman).  Needs the packages of
# BERTH_OCI_DEPS in scripts/deps.sh.  Exit 0 after the report; 1 when a
# command fails (its output is shown); 2 on a usage error.
set -euo pipefail
N=20
W=3
MAX=100
A=berth
B=runc
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
BERTH=$repo/build/berth
while getopts 'n:w:d:a:c:b:h' o; do
	case $o in
	n) N=$OPTARG ;;
	w) W=$OPTARG ;;
	d) MAX=$OPTARG ;;
	a) A=$OPTARG ;;
	c) B=$OPTARG ;;
	b) BERTH=$OPTARG ;;
	*) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 2 ;;
	esac
done
[[ $N =~ ^[1-9][0-9]*$ ]] || { echo "bench-oci: -n \`$N\`: a number of rounds, a whole number from 1" >&2; exit 2; }
[[ $W =~ ^[0-9]+$ ]] || { echo "bench-oci: -w \`$W\`: a number of rounds, a whole number from 0" >&2; exit 2; }
[[ $MAX =~ ^[0-9]+$ ]] || { echo "bench-oci: -d \`$MAX\`: a number of containers, a whole number from 0" >&2; exit 2; }
for r in "$A" "$B"; do
	[[ $r == berth || $r == runc ]] || { echo "bench-oci: runtime \`$r\`: berth or runc" >&2; exit 2; }
done
# shellcheck source=../tests/oci/common.sh
. "$repo/tests/oci/common.sh"
# common.sh's TAP helpers are not needed, its functions are; they test
# their commands' statuses themselves.
set +eu
BERTH=$(readlink -f "$BERTH")
if [[ $A == berth || $B == berth ]]; then
	"$BERTH" oci features >/dev/null 2>&1 ||
		{ echo "bench-oci: \`$BERTH oci features\` fails: berth oci is not built (-a runc checks the script)" >&2; exit 1; }
fi
command -v runc >/dev/null || { echo "bench-oci: no runc (scripts/deps.sh: BERTH_OCI_DEPS)" >&2; exit 1; }
CC=$(command -v cc) || { echo "bench-oci: no cc" >&2; exit 1; }

TOP=$(mktemp -d "${TMPDIR:-/tmp}/berth-bench-oci.XXXXXX")
chmod 755 "$TOP"
P=$TOP/podman
cleanup() {
	[ -n "${P:-}" ] && podman_reset "$P"
	rm -rf "$TOP"
}
trap cleanup EXIT
"$CC" -O2 -Wall -o "$TOP/runtime" "$here/runtime.c" || exit 1
oci_image_build "$repo/tests" || { echo "bench-oci: the test image could not be built" >&2; exit 1; }
_oci_podman_conf "$P" && podman_in "$P" import -q "$OCI_IMAGE_TAR" "$OCI_IMAGE" >/dev/null ||
	{ echo "bench-oci: podman import of the test image failed" >&2; exit 1; }

# A wrapper per side (tests/oci/common.sh, oci_wrapper), named after its
# runtime; each with its own state.
wrap() { # wrap SIDE RUNTIME -> the wrapper's path
	if [[ $2 == berth ]]; then OCI_BIN="$(printf '%q' "$BERTH") oci"; else OCI_BIN=$(printf '%q' "$(command -v runc)"); fi
	oci_wrapper "$TOP/$1/$2" "$TOP/$1/state" "$TOP/$1/calls.log" && echo "$TOP/$1/$2"
}
WA=$(wrap a "$A") && WB=$(wrap b "$B") || { echo "bench-oci: cannot write the runtimes' wrappers in $TOP" >&2; exit 1; }

# The podman command of one side, as an argv runtime.c can exec.
pod_argv() { # pod_argv WRAPPER ARGS...
	local w=$1
	shift
	echo /usr/bin/env CONTAINERS_CONF="$P/containers.conf" CONTAINERS_STORAGE_CONF="$P/storage.conf" TMPDIR="$P/tmp" \
		XDG_RUNTIME_DIR="$P/xdg" XDG_DATA_HOME="$P/data" XDG_CONFIG_HOME="$P/config" \
		"$(command -v podman)" --root "$P/storage" --runroot "$P/run" --runtime "$w" "$@"
}
read -r -a podA <<<"$(pod_argv "$WA" run --rm "$OCI_IMAGE" /bin/true)"
read -r -a podB <<<"$(pod_argv "$WB" run --rm "$OCI_IMAGE" /bin/true)"

# The bundle of the runtime benchmark.
BUNDLE=$TOP/bundle
# As a user, `runc spec --rootless` (a user namespace with uidMappings).
mkdir -p "$BUNDLE/rootfs" && tar -C "$BUNDLE/rootfs" -xf "$OCI_IMAGE_TAR" &&
	(cd "$BUNDLE" && runc spec $([ "$(id -u)" -eq 0 ] || echo --rootless)) &&
	python3 - "$BUNDLE/config.json" <<'PY' || { echo "bench-oci: cannot make the bundle in $BUNDLE" >&2; exit 1; }
import json, sys
p = sys.argv[1]
c = json.load(open(p))
c["process"]["terminal"] = False
c["process"]["args"] = ["/bin/true"]
json.dump(c, open(p, "w"), indent=2)
PY
cycle() { # cycle WRAPPER: the script of one create, start, delete --force
	printf 'id=bench-$$; %q create --bundle %q "$id" && %q start "$id" && exec %q delete --force "$id"' "$1" "$BUNDLE" "$1" "$1"
}
rtA=(/bin/sh -c "$(cycle "$WA")")
rtB=(/bin/sh -c "$(cycle "$WB")")

# Each command once on its own: a failure shows its own message.
for c in podA podB rtA rtB; do
	declare -n argv=$c
	if ! out=$("${argv[@]}" 2>&1 </dev/null); then
		echo "bench-oci: FAILED ($c): ${argv[*]}" >&2
		printf '%s\n' "$out" >&2
		exit 1
	fi
	unset -n argv
done

timed() { # timed OUT CMD_A ::: CMD_B
	local out=$1
	shift
	if ! "$TOP/runtime" -n "$N" -w "$W" -- "$@" >"$out" 2>"$TOP/err"; then
		echo "bench-oci: FAILED: $(cat "$TOP/err")" >&2
		exit 1
	fi
}
timed "$TOP/t-podman" "${podA[@]}" ::: "${podB[@]}"
timed "$TOP/t-runtime" "${rtA[@]}" ::: "${rtB[@]}"

# stats FILE TAG -> "median_ms p90_ms min_ms" (median: the mean of the two
# middle values for an even N; p90: nearest rank).
stats() {
	awk -v t="$2" '$1 == t { print $2 }' "$1" | sort -n |
		awk '{ v[NR] = $1 }
		END {
			n = NR
			med = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
			r = int(0.9 * n); if (r < 0.9 * n) r++
			printf "%.1f %.1f %.1f\n", med / 1e6, v[r] / 1e6, v[1] / 1e6
		}'
}

# ------------------------------------------------------------------ density
mem_avail() { awk '/^MemAvailable:/ { print $2 }' /proc/meminfo; }
# pss_rss PID...: the PSS and RSS (KiB) of the PIDs and all their descendants.
pss_rss() {
	local roots=" $* " pids
	pids=$(ps -e -o pid=,ppid= | awk -v r="$roots" '
		{ kid[$2] = kid[$2] " " $1 }
		END {
			n = split(r, q, " ")
			for (i = 1; i <= n; i++) { out = out " " q[i]; m = split(kid[q[i]], k, " "); for (j = 1; j <= m; j++) q[++n] = k[j] }
			print out
		}')
	local p pss=0 rss=0 a b
	for p in $pids; do
		read -r a b < <(awk '/^Pss:/ { p = $2 } /^Rss:/ { r = $2 } END { print p + 0, r + 0 }' "/proc/$p/smaps_rollup" 2>/dev/null || echo "0 0")
		pss=$((pss + a)) rss=$((rss + b))
	done
	echo "$pss $rss"
}
density() { # density SIDE WRAPPER -> "count pss_kib rss_kib memavail_drop_kib stop-reason"
	local w=$2 n=0 before why="-d $MAX reached" t0 t1 ids=() pss rss
	local total
	total=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
	before=$(mem_avail)
	while [ "$n" -lt "$MAX" ]; do
		if [ "$(mem_avail)" -lt $((total / 10)) ]; then why="MemAvailable under 10 %"; break; fi
		t0=$(date +%s)
		local id
		if ! id=$(timeout 30 bash -c '"$@"' sh $(pod_argv "$w" run -d "$OCI_IMAGE" sleep 1000000) 2>"$TOP/err"); then
			why="start $((n + 1)) failed: $(head -c 200 "$TOP/err" | tr '\n' ' ')"
			break
		fi
		t1=$(date +%s)
		ids+=("$id")
		n=$((n + 1))
		[ $((t1 - t0)) -lt 30 ] || { why="start $n took $((t1 - t0)) s"; break; }
	done
	sleep 2 # let the last ones settle
	local drop=$((before - $(mem_avail))) conmons
	conmons=$(podman_in "$P" inspect -f '{{.State.ConmonPid}}' "${ids[@]}" 2>/dev/null | tr '\n' ' ')
	read -r pss rss < <(pss_rss $conmons)
	podman_in "$P" rm -f -t 0 "${ids[@]}" >/dev/null 2>&1 || true
	echo "$n $pss $rss $drop $why"
}
if [ "$MAX" -gt 0 ]; then
	read -r dA_n dA_pss dA_rss dA_drop dA_why < <(density a "$WA")
	read -r dB_n dB_pss dB_rss dB_drop dB_why < <(density b "$WB")
fi

# ------------------------------------------------------------------- report
cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
case $(stat -fc %T /sys/fs/cgroup) in
cgroup2fs) cg=v2 ;;
*) cg=v1; [ -d /sys/fs/cgroup/unified ] && cg="v1 hybrid (cgroup2 at /sys/fs/cgroup/unified)" ;;
esac
if [[ $(id -u) -eq 0 ]]; then caller="root (uid 0), rootful podman"; else caller="user $(id -un) (uid $(id -u)), rootless podman"; fi
cat <<EOF
berth as an OCI runtime: $A (A) against $B (B)
  date     $(date -u '+%Y-%m-%d %H:%M:%S UTC')
  machine  nproc=$(nproc), kernel $(uname -r), CPU ${cpu:-unknown}, cgroups $cg
  caller   $caller; podman $(podman --version | awk '{print $3}'), runc $(runc --version | awk 'NR == 1 {print $3}')
  rounds   N=$N measured (+$W warm-up), alternating A, B, A, B, ... (bench/runtime.c, CLOCK_MONOTONIC, stdio on /dev/null)
  podman   podman run --rm $OCI_IMAGE /bin/true (netns none, overlay storage of its own)
  runtime  RUNTIME create --bundle B ID && RUNTIME start ID && RUNTIME delete --force ID (runc spec, /bin/true)

                    median ms   p90 ms   min ms
EOF
for t in podman runtime; do
	read -r am ap an < <(stats "$TOP/t-$t" A)
	read -r bm bp bn < <(stats "$TOP/t-$t" B)
	printf '  %-8s A %-5s %9s %8s %8s\n' "$t" "$A" "$am" "$ap" "$an"
	printf '  %-8s B %-5s %9s %8s %8s\n' "" "$B" "$bm" "$bp" "$bn"
	printf '  %-8s A/B (medians) %s\n' "" "$(awk -v a="$am" -v b="$bm" 'BEGIN { printf "%.2fx", a / b }')"
done
if [ "$MAX" -gt 0 ]; then
	per() { awk -v v="$1" -v n="$2" 'BEGIN { if (n > 0) printf "%.0f", v / n; else print "-" }'; }
	cat <<EOF

density: idle containers (podman run -d $OCI_IMAGE sleep 1000000), up to $MAX
  (MemAvailable: the whole machine's, noisy where other work runs; PSS and RSS: conmon and all under it)
             containers  KiB each: MemAvailable drop    PSS     RSS   stopped by
EOF
	printf '  A %-6s %10s %28s %7s %7s   %s\n' "$A" "$dA_n" "$(per "$dA_drop" "$dA_n")" "$(per "$dA_pss" "$dA_n")" "$(per "$dA_rss" "$dA_n")" "$dA_why"
	printf '  B %-6s %10s %28s %7s %7s   %s\n' "$B" "$dB_n" "$(per "$dB_drop" "$dB_n")" "$(per "$dB_pss" "$dB_n")" "$(per "$dB_rss" "$dB_n")" "$dB_why"
fi
exit 0
