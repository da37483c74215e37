#!/usr/bin/env bash
# bench/bench-vm.sh - the microVM runtime (docs/vm.md) against the namespace
# runtime, on this machine's accelerator (TCG unless the runtime uses KVM):
#   1. boot: `berth run --runtime vm -- true` against `berth run -- true`,
#      start to exit, alternating (bench/runtime.c), and the time from
#      berth's start to the command's first byte of output (its first
#      instruction, give or take an execve and a write) and from it to exit;
#   2. workspace writes: dd of SIZE MiB into /workspace with conv=fsync, in
#      the VM (virtiofs) and under the namespace runtime (the host's fs);
#   3. memory per idle VM: PSS and RSS of qemu, virtiofsd and virtiofsd's
#      child while `sleep` runs in the VM.
# usage: bench-vm.sh [-n N] [-s SIZE_MIB] [-b BERTH]
# Needs an installed guest (`berth vm install`, or BERTH_VM_DIR).  Prints a
# Markdown table per part, the machine and the date.  Keep it short: each
# TCG boot is several seconds.
set -eu
export LC_ALL=C
N=5 SIZE=200 B=
while getopts n:s:b: o; do
	case $o in
	n) N=$OPTARG ;;
	s) SIZE=$OPTARG ;;
	b) B=$OPTARG ;;
	*) echo "usage: $0 [-n N] [-s SIZE_MIB] [-b BERTH]" >&2 && exit 2 ;;
	esac
done
HERE=$(cd "$(dirname "$0")" && pwd)
B=${B:-$HERE/../build/berth}
T=$(mktemp -d "${TMPDIR:-/tmp}/bench-vm.XXXXXX")
trap 'rm -rf "$T"' EXIT
cc -O2 -o "$T/runtime" "$HERE/runtime.c"
W=$T/ws
mkdir -p "$W"
cd "$W"
"$B" run --runtime vm -- true >/dev/null 2>"$T/err" || {
	echo "bench-vm: the vm runtime does not run here:" >&2
	cat "$T/err" >&2
	exit 1
}
ms() { awk '{printf "%.0f", $1 / 1e6}'; }
stats() { # stats TAG FILE: median and min (ms) of the TAG lines
	grep "^$1 " "$2" | cut -d' ' -f2 | sort -n | awk '{a[NR] = $1} END {
		m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		printf "%.0f %.0f\n", m / 1e6, a[1] / 1e6 }'
}

echo "## microVM runtime ($(date -u '+%Y-%m-%d %H:%M UTC'), $(id -un), accel: $("$B" run --runtime vm -- true 2>&1 | sed -n 's/^berth: microVM: qemu -accel \([a-z]*\),.*/\1/p'))"
echo
echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(awk '/^MemTotal:/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo), kernel $(uname -r); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

# 1. boot
"$T/runtime" -n "$N" -w 1 -- "$B" run --runtime vm -- true ::: "$B" run -- true >"$T/boot"
read -r vm_med vm_min < <(stats A "$T/boot")
read -r ns_med ns_min < <(stats B "$T/boot")
# first byte and exit, from berth's start
python3 - "$B" "$N" >"$T/first" <<'EOF'
import os, subprocess, sys, time
b, n = sys.argv[1], int(sys.argv[2])
for _ in range(n):
    t0 = time.monotonic()
    p = subprocess.Popen([b, "run", "--runtime", "vm", "--", "echo", "x"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    p.stdout.read(1)
    t1 = time.monotonic()
    p.wait()
    t2 = time.monotonic()
    print("F %d" % int((t1 - t0) * 1e9))
    print("E %d" % int((t2 - t1) * 1e9))
EOF
read -r f_med f_min < <(stats F "$T/first")
read -r e_med e_min < <(stats E "$T/first")
echo "| start to exit of \`true\` (N=$N, alternating) | median | min |"
echo "|---|---|---|"
echo "| \`berth run --runtime vm -- true\` | $vm_med ms | $vm_min ms |"
echo "| \`berth run -- true\` | $ns_med ms | $ns_min ms |"
echo "| ratio (medians) | **$(awk -v a="$vm_med" -v b="$ns_med" 'BEGIN {printf "%.0f", a / b}')×** | |"
echo "| vm: berth's start to the command's first byte (\`echo x\`) | $f_med ms | $f_min ms |"
echo "| vm: first byte to berth's exit (EXIT, power-off, teardown) | $e_med ms | $e_min ms |"
echo

# 2. workspace writes
ddrate() { # ddrate CMD...: the MB/s dd reports on its last line
	"$@" 2>&1 | sed -n 's/.* copied, .*, \([0-9.]*\) \([MG]\)B\/s$/\1 \2/p' | tail -1 |
		awk '{printf "%.0f", $2 == "G" ? $1 * 1000 : $1}'
}
dd_cmd="dd if=/dev/zero of=/workspace/dd.bin bs=1M count=$SIZE conv=fsync"
vm_rates= ns_rates=
for _ in 1 2 3; do
	vm_rates="$vm_rates $(ddrate "$B" run --runtime vm -- sh -c "$dd_cmd; rm -f /workspace/dd.bin")"
	ns_rates="$ns_rates $(ddrate "$B" run -- sh -c "$dd_cmd; rm -f /workspace/dd.bin")"
done
med() { echo "$@" | tr ' ' '\n' | grep . | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
vr=$(med $vm_rates) nr=$(med $ns_rates)
echo "| dd of $SIZE MiB to /workspace, conv=fsync (3 runs each) | median MB/s | runs |"
echo "|---|---|---|"
echo "| vm (virtiofs, cache=auto) | $vr | $vm_rates |"
echo "| namespace runtime (the host's fs) | $nr | $ns_rates |"
echo "| vm / namespace | **$(awk -v a="$vr" -v b="$nr" 'BEGIN {printf "%.2f", a / b}')×** | |"
echo

# 3. memory per idle VM
"$B" run --runtime vm -- sh -c 'echo up; exec sleep 30' >"$T/idle" 2>/dev/null </dev/null &
bp=$!
for _ in $(seq 1 600); do
	grep -q up "$T/idle" 2>/dev/null && break
	sleep 0.1
done
sleep 2
kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/smaps_rollup" 2>/dev/null; }
echo "| idle VM (\`sleep\` in the guest), kB | PSS | RSS |"
echo "|---|---|---|"
tp=0 tr=0
for p in $(cat /proc/"$bp"/task/*/children); do
	name=$(cat /proc/"$p"/comm)
	case $name in qemu-system-x86 | virtiofsd) ;; *) continue ;; esac
	for q in "$p" $(cat /proc/"$p"/task/*/children 2>/dev/null); do
		ps_=$(kb "$q" Pss) rs_=$(kb "$q" Rss)
		[ -n "$ps_" ] || continue
		[ "$q" = "$p" ] && label=$name || label="$name's child"
		echo "| $label | $ps_ | $rs_ |"
		tp=$((tp + ps_)) tr=$((tr + rs_))
	done
done
echo "| **total** | **$tp** | $tr |"
kill -TERM "$bp" 2>/dev/null || true
wait "$bp" 2>/dev/null || true
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
