#!/usr/bin/env bash
# The caller's terminal when berth's stdin is NOT a terminal but its stdout
# or stderr is (`make | berth run -- cmd`, `berth run -- cmd < file`): the
# command used to inherit the caller's terminal on fd 1/2, and could turn its
# echo off, make it exclusive (TIOCEXCL: every later open(2) of it fails with
# EBUSY), stop its output (TCOOFF: the caller's next write hangs), resize it,
# read the keys typed meanwhile, or take it as its controlling terminal when
# it was nobody's.  Now those descriptors are a pty of the sandbox's own,
# relayed by berth, through the same output filter as `berth attach`.
#
# usage: run-terminal.sh /path/to/berth [stage-dir]
#
# Works as root and as an unprivileged user.  Output is TAP; exit status 1 if
# any check failed.  Nothing is skipped: a missing precondition is a failure.
set -u
export LC_ALL=C
unset BERTH_TEST_FORCE_OFF

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 /path/to/berth [stage-dir]" >&2
	exit 2
fi
BERTH=$(readlink -f -- "$1")
HOSTPY=/usr/bin/python3
PTYCAP=$(readlink -f -- "$(dirname "$0")/../pty-capture.py")

# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"  # T, FAILS, pass, fail, has, hasnt
eq() { if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'" "$OUT"; fi; }

TOP=$(mktemp -d /tmp/berth-terminal.XXXXXX) || { echo "Bail out! mktemp failed"; exit 1; }
chmod 755 "$TOP"
cleanup() { rm -rf "$TOP"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir "$TOP/ws"
cd "$TOP/ws" || exit 1

for tool in "$BERTH" "$HOSTPY"; do
	if [ -x "$tool" ]; then pass "precondition: $tool is executable"
	else fail "precondition: $tool is executable" "missing"; fi
done

# The host side: a fresh pty (nobody's controlling terminal) as berth's
# stdout and stderr, /dev/null as its stdin; prints KEY VALUE lines.
cat >"$TOP/drive.py" <<'EOF'
import fcntl, os, pty, select, struct, subprocess, sys, termios, time
berth, mode = sys.argv[1], sys.argv[2]
inner = r'''
import errno, fcntl, os, struct, sys, termios
def t(k, f):
    try:
        f(); r = "0"
    except OSError as e:
        r = errno.errorcode.get(e.errno, str(e.errno))
    sys.stderr.write("%s %s\n" % (k, r))
fd = int(sys.argv[1])
def noecho():
    a = termios.tcgetattr(fd); a[3] &= ~termios.ECHO; termios.tcsetattr(fd, termios.TCSANOW, a)
t("isatty", lambda: None if os.isatty(fd) else (_ for _ in ()).throw(OSError(errno.ENOTTY, "")))
t("noecho", noecho)
t("excl", lambda: fcntl.ioctl(fd, termios.TIOCEXCL))
t("winsz", lambda: fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 3, 7, 0, 0)))
t("sctty", lambda: fcntl.ioctl(fd, termios.TIOCSCTTY, 0))
os.set_blocking(fd, False)
t("read", lambda: os.read(fd, 64))
sys.stderr.flush()
# Last, with nothing written after it (it stops the output of the terminal it is on).
termios.tcflow(fd, termios.TCOOFF)
'''
m, s = pty.openpty()
name = os.ttyname(s)
fcntl.ioctl(s, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
stdout = s if mode in ("both", "out") else subprocess.DEVNULL
stderr = s if mode in ("both", "err") else subprocess.DEVNULL
fd = "1" if mode in ("both", "out") else "2"
# What the command writes to its fd 2 reaches the pty only when fd 2 is on it;
# in mode "out" the report goes through fd 1.
script = inner if mode != "out" else inner.replace("sys.stderr", "sys.stdout")
os.write(m, b"typed-ahead\n")   # keys the user typed meanwhile: the sandbox must not read them
p = subprocess.Popen([berth, "run", "--", "python3", "-c", script, fd], stdin=subprocess.DEVNULL,
                     stdout=stdout, stderr=stderr)
got = b""
deadline = time.time() + 60
while time.time() < deadline:
    r, _, _ = select.select([m], [], [], 0.2)
    if r:
        try:
            d = os.read(m, 65536)
        except OSError:
            break
        got += d
    elif p.poll() is not None:
        break
try:
    p.wait(timeout=5)
except subprocess.TimeoutExpired:
    p.kill()
    p.wait()
for line in got.decode(errors="replace").replace("\r", "").splitlines():
    if " " in line and not line.startswith("berth:"):
        print(line)
print("rc", p.returncode)
a = termios.tcgetattr(s)
print("host_echo", "on" if a[3] & termios.ECHO else "off")
print("host_winsz", "%dx%d" % struct.unpack("HHHH", fcntl.ioctl(s, termios.TIOCGWINSZ, b"\0" * 8))[:2])
try:
    os.close(os.open(name, os.O_RDWR | os.O_NOCTTY))
    print("host_reopen", "0")
except OSError as e:
    print("host_reopen", e.errno)
# TCOOFF on the host's terminal would stop this write from reaching the master.
os.set_blocking(s, False)
try:
    os.write(s, b"after\n")
except BlockingIOError:
    pass
r, _, _ = select.select([m], [], [], 2)
print("host_output", "flows" if r and b"after" in os.read(m, 4096) else "stopped")
os.set_blocking(s, False)
try:
    left = os.read(s, 64)
except BlockingIOError:
    left = b""
print("host_typed_ahead", "kept" if b"typed-ahead" in left else "stolen")
EOF

for mode in both out err; do
	OUT=$("$HOSTPY" "$TOP/drive.py" "$BERTH" "$mode" 2>&1)
	k() { printf '%s\n' "$OUT" | awk -v k="$1" '$1==k{print $2; exit}'; }
	eq "$mode: the command ran (rc 0)" "$(k rc)" 0
	eq "$mode: the command's fd is still a terminal (isatty)" "$(k isatty)" 0
	eq "$mode: the host terminal's echo is still on" "$(k host_echo)" on
	eq "$mode: the host terminal's size is unchanged (40x100)" "$(k host_winsz)" 40x100
	eq "$mode: the host terminal can be opened again (no TIOCEXCL on it)" "$(k host_reopen)" 0
	eq "$mode: the host terminal's output still flows (no TCOOFF on it)" "$(k host_output)" flows
	eq "$mode: the keys typed meanwhile were not read by the sandbox" "$(k host_typed_ahead)" kept
	eq "$mode: reading the keys inside finds none (EAGAIN)" "$(k read)" EAGAIN
done

# A command that closes its terminal and runs on must not make berth spin.
OUT=$("$HOSTPY" - "$BERTH" <<'EOF'
import os, pty, resource, subprocess, sys
m, s = pty.openpty()
p = subprocess.run([sys.argv[1], "run", "--", "sh", "-c", "exec >/dev/null 2>&1; sleep 2"],
                   stdin=subprocess.DEVNULL, stdout=s, stderr=s)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(p.returncode, "busy" if u.ru_utime + u.ru_stime > 1.0 else "idle")
EOF
)
eq "a command that closed its terminal: berth waits idle (rc 0)" "$OUT" "0 idle"

# What the command writes to a terminal reaches the caller's terminal through the same filter as
# `berth attach`: colours and text pass; OSC 52 (clipboard), tmux passthrough and C1 controls do not.
# Both ways a terminal reaches berth: stdin a terminal (the interactive pty), and only stdout one;
# and a burst: 256 KiB before the sequences, printed right before the exit, so that berth reads the
# last of it after the command is gone (its drain: CI once saw every sequence pass unfiltered there).
for how in interactive output burst1 burst2 burst3 burst4; do
fmt="A\\033[31mRED\\033[0m\\033]52;c;cHduZWQ=\\007B\\033Ptmux;\\033\\033]52;c;eA==\\007\\033\\\\C\\302\\235D\\n"
# report requests: title and icon label, colour, DECRQSS, XTGETTCAP
fmt+="E\\033[21tF\\033[20tG\\033]11;?\\007H\\033P\$qm\\033\\\\I\\033P+q544e\\033\\\\J\\033]4;1;?\\007K\\n"
args=(printf "$fmt")
case $how in burst*) args=(printf "%0262144d$fmt" 0) ;; esac
stdin=pty
[ "$how" = output ] && stdin=null
OUT=$("$HOSTPY" "$PTYCAP" --stdin "$stdin" -- "$BERTH" run -- "${args[@]}")
rc=${OUT%% *} hex=${OUT#* }
hex_tail=${hex: -600}
has_hex() { case "$hex" in *"$(printf '%s' "$1" | od -An -tx1 | tr -d ' \n')"*) return 0 ;; esac; return 1; }
eq "$how: the command ran (rc 0)" "$rc" 0
has_hex $'A\033[31mRED\033[0m' && pass "$how: colours and text pass" || fail "$how: colours and text pass" "$hex_tail"
has_hex ']52;' && fail "$how: no OSC 52 reaches the caller's terminal" "$hex_tail" || pass "$how: no OSC 52 reaches the caller's terminal"
has_hex 'tmux;' && fail "$how: no tmux passthrough" "$hex_tail" || pass "$how: no tmux passthrough"
has_hex $'\302\235' && fail "$how: no C1 control (U+009D)" "$hex_tail" || pass "$how: no C1 control (U+009D)"
has_hex 'B' && has_hex 'C' && has_hex 'D' && pass "$how: the text around them is kept" || fail "$how: the text around them is kept" "$hex_tail"
has_hex $'\033[21t' && fail "$how: no title report request (CSI 21 t)" "$hex_tail" || pass "$how: no title report request (CSI 21 t)"
has_hex $'\033[20t' && fail "$how: no icon label report request (CSI 20 t)" "$hex_tail" || pass "$how: no icon label report request (CSI 20 t)"
has_hex ';?' && fail "$how: no colour report request (OSC 11;? / 4;1;?)" "$hex_tail" || pass "$how: no colour report request (OSC 11;? / 4;1;?)"
has_hex $'\033P' && fail "$how: no DCS (DECRQSS, XTGETTCAP)" "$hex_tail" || pass "$how: no DCS (DECRQSS, XTGETTCAP)"
has_hex 'EFG' && has_hex 'HIJ' && has_hex 'K' && pass "$how: the text around the requests is kept" || fail "$how: the text around the requests is kept" "$hex_tail"
done

echo "1..$T"
[ "$FAILS" -eq 0 ] || { echo "# $FAILS of $T checks failed"; exit 1; }
exit 0
