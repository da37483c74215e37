#!/usr/bin/env bash
# bench/bench-review.sh - what --review costs (docs/review.md):
#   1. start-to-exit latency of `berth run --review -- /bin/true` against
#      `berth run -- /bin/true`, strictly alternating (bench/runtime.c);
#   2. on a 10,000-file repository whose every file the run changed:
#      `berth diff RUN` against `git diff` of the same change, and the time of
#      `berth apply RUN` (and of `git apply` of git's patch, for scale);
#   3. a session (`berth spawn --review`, the fake agent of tests/integration)
#      whose first turn changes every file of that tree and whose second
#      changes one: the time of each turn's checkpoint (the audit record's
#      duration_ms), and the bytes the checkpoints keep against the layer's.
#
# usage: bench/bench-review.sh [-n N] [-w W] [-f FILES] [-b BERTH]
#   -n N      measured rounds of part 1 (default 100), and of each diff in part 2 (5)
#   -w W      warm-up rounds of part 1 (default 5)
#   -f FILES  files in the tree of part 2 (default 10000, in 100 directories)
#   -b BERTH  berth binary (default: build/berth next to this script's repo)
# Needs cc, git and python3.  Works as root or as an unprivileged user.  Exit 0 after the
# report; 1 when a command fails (named); 2 on a usage error.
set -euo pipefail

N=100 W=5 FILES=10000
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BERTH="$(dirname "$here")/build/berth"
while getopts 'n:w:f:b:h' o; do
	case $o in
	n) N=$OPTARG ;;
	w) W=$OPTARG ;;
	f) FILES=$OPTARG ;;
	b) BERTH=$OPTARG ;;
	*) sed -n '2,16p' "$0"; exit 2 ;;
	esac
done
[[ $N =~ ^[1-9][0-9]*$ && $W =~ ^[0-9]+$ && $FILES =~ ^[1-9][0-9]*$ ]] || { echo "bench-review: -n, -w, -f want counts" >&2; exit 2; }
BERTH=$(readlink -f "$BERTH")
command -v git >/dev/null || { echo "bench-review: git not found" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/berth-bench-review.XXXXXX")
trap 'chmod -R u+rwX "$tmp"; rm -rf "$tmp"' EXIT
export XDG_STATE_HOME=$tmp/state XDG_CONFIG_HOME=$tmp/config BERTH_RUNS_KEEP=50
cc -O2 -Wall -o "$tmp/runtime" "$here/runtime.c"

echo "# bench-review: $(uname -srm), $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC'), uid $(id -u)"

# ---- 1. start latency
mkdir "$tmp/ws" && cd "$tmp/ws"
for c in "--review" ""; do
	# shellcheck disable=SC2086
	"$BERTH" run $c -- /bin/true >/dev/null 2>&1 || { echo "bench-review: FAILED: berth run $c -- /bin/true" >&2; exit 1; }
done
"$tmp/runtime" -n "$N" -w "$W" -- "$BERTH" run --review -- /bin/true ::: "$BERTH" run -- /bin/true >"$tmp/lat"
ma=$(awk '$1 == "A" { print $2 }' "$tmp/lat" | sort -n | awk '{ v[NR] = $1 } END { printf "%d\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
mb=$(awk '$1 == "B" { print $2 }' "$tmp/lat" | sort -n | awk '{ v[NR] = $1 } END { printf "%d\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
echo "## start-to-exit of /bin/true, $N rounds alternating: --review $((${ma%.*} / 1000)) us, default $((${mb%.*} / 1000)) us, ratio $(awk -v a="$ma" -v b="$mb" 'BEGIN { printf "%.2f", a / b }')"

# ---- 2. a tree of $FILES files, every one changed by the run
ws=$tmp/tree
mkdir "$ws"
dirs=100
per=$(((FILES + dirs - 1) / dirs))
for d in $(seq 1 $dirs); do
	mkdir "$ws/d$d"
	for f in $(seq 1 "$per"); do
		printf 'line one of %d/%d\nline two\nline three\nline four\nline five\n' "$d" "$f" >"$ws/d$d/f$f.txt"
	done
done
git -C "$ws" init -q && git -C "$ws" add -A && git -C "$ws" -c gc.auto=0 -c user.email=b@e -c user.name=bench commit -qm tree
cp -a "$ws" "$tmp/gitcopy"
edit='for f in d*/f*.txt; do sed -i "3s/.*/line three, changed/" "$f"; done'
(cd "$tmp/gitcopy" && sh -c "$edit")
start=$(date +%s%N)
"$BERTH" run --review --review-size 512M --workspace "$ws" -- sh -c "$edit" >/dev/null 2>"$tmp/run.err" || { cat "$tmp/run.err" >&2; exit 1; }
run_ns=$(($(date +%s%N) - start))
id=$(cat "$XDG_STATE_HOME/berth/runs/last")
median() { sort -n | awk '{ v[NR] = $1 } END { printf "%d\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
timeit() { local s; s=$(date +%s%N); "$@" >/dev/null 2>&1 || true; echo $(($(date +%s%N) - s)); }
bd=$(for _ in $(seq 1 5); do timeit "$BERTH" diff "$id"; done | median)
gd=$(for _ in $(seq 1 5); do timeit git -C "$tmp/gitcopy" diff; done | median)
lines=$("$BERTH" diff "$id" | wc -l)
glines=$(git -C "$tmp/gitcopy" diff | wc -l)
git -C "$tmp/gitcopy" diff >"$tmp/patch"
cp -a "$ws" "$tmp/applycopy"
ga=$(timeit git -C "$tmp/applycopy" apply "$tmp/patch")
ba=$(timeit "$BERTH" apply "$id")
changed=$(cd "$ws" && git status --porcelain | wc -l)
echo "## $FILES files, each changed (the run itself, collection included: $((run_ns / 1000000)) ms)"
printf '%-28s %10s\n' "berth diff RUN (median of 5)" "$((bd / 1000000)) ms" "git diff (median of 5)" "$((gd / 1000000)) ms" \
	"berth apply RUN" "$((ba / 1000000)) ms" "git apply PATCH" "$((ga / 1000000)) ms"
echo "diff ratio berth/git: $(awk -v a="$bd" -v b="$gd" 'BEGIN { printf "%.2f", a / b }'); apply/git diff: $(awk -v a="$ba" -v b="$gd" 'BEGIN { printf "%.2f", a / b }')"
echo "output lines: berth diff $lines, git diff $glines; files git sees changed after apply: $changed"
[ "$changed" -eq "$FILES" ] || { echo "bench-review: apply landed $changed of $FILES files" >&2; exit 1; }

# ---- 3. checkpoints of a $FILES-file layer, in a session
export XDG_RUNTIME_DIR=$tmp/xrun
mkdir -p "$XDG_RUNTIME_DIR" "$XDG_CONFIG_HOME/berth/profiles" "$tmp/fake"
chmod 700 "$XDG_RUNTIME_DIR"
cp "$(dirname "$here")/tests/integration/fake-agent.py" "$tmp/fake/"
chmod -R a+rX "$tmp/fake"
printf 'agent: claude\ncommand: [python3, /opt/fake/fake-agent.py]\nprompt: none\nnetwork: none\noptions: [--ro, "%s:/opt/fake"]\n' \
	"$tmp/fake" >"$XDG_CONFIG_HOME/berth/profiles/bench-fake.yml"
rm -rf "$tmp/cpws" && cp -a "$tmp/gitcopy" "$tmp/cpws" && git -C "$tmp/cpws" checkout -q -- .
"$BERTH" spawn bench-fake --name bench-cp --workspace "$tmp/cpws" --review --review-size 512M >/dev/null 2>"$tmp/spawn.err" ||
	{ cat "$tmp/spawn.err" >&2; exit 1; }
trap '"$BERTH" stop bench-cp --grace 0 >/dev/null 2>&1; chmod -R u+rwX "$tmp"; rm -rf "$tmp"' EXIT
cp_wait() { # cp_wait N: until N checkpoints are listed (120 s)
	local i
	for i in $(seq 1200); do
		[ "$("$BERTH" checkpoints --json bench-cp | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["checkpoints"]))')" -ge "$1" ] && return 0
		sleep 0.1
	done
	echo "bench-review: no checkpoint $1" >&2; exit 1
}
sleep 2
"$BERTH" send bench-cp "sh $edit" --enter >/dev/null && cp_wait 1
"$BERTH" send bench-cp 'sh echo once more >> d1/f1.txt' --enter >/dev/null && cp_wait 2
run=$("$BERTH" ps --json bench-cp | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["run_id"])')
"$BERTH" stop bench-cp >/dev/null 2>&1
"$BERTH" audit list --run "$run" --kind checkpoint --json >"$tmp/cps.json"
store=$(find "$XDG_STATE_HOME/berth/runs/$run/review/blobs" -type f -printf '%s\n' | awk '{ n++; b += $1 } END { printf "%d bytes in %d files", b, n }')
python3 - "$tmp/cps.json" "$store" <<'PY'
import json, sys
t = open(sys.argv[1]).read()
try:
    recs = json.loads(t)
except ValueError:
    recs = [json.loads(l) for l in t.splitlines() if l.strip()]
if isinstance(recs, dict):
    recs = recs.get("records", [])
cps = [r["payload"] for r in recs if r["kind"] == "checkpoint"]
print("## checkpoints of a session's layer (a turn changing every file, then one changing one file)")
for p in cps:
    print("checkpoint %d: %d entries, %d changed since the one before, %d bytes in the layer: %d ms" % (
        p["checkpoint"], p["entries"], p["changed"], p["bytes"], p["duration_ms"]))
print("kept by the checkpoints and the end's change set together (blobs/, by content): %s" % sys.argv[2])
PY
