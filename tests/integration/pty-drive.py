#!/usr/bin/env python3
"""Run a command on a real pseudo-terminal and drive it (tests/integration/run-sessions.sh).

usage: pty-drive.py ROWSxCOLS ACTION... -- COMMAND [ARG...]
actions, in order:
  expect:TEXT     wait (5 s) until TEXT appears in the output since the last expect
  send:TEXT       type TEXT (\\r for Enter, \\x1d for Ctrl-])
  resize:RxC      set the window size (the kernel sends SIGWINCH)
  sleep:SECONDS
Prints `ok ACTION` or `FAIL ACTION` per action, then `exit=STATUS`; exits 1 on a failure.
"""
import codecs, fcntl, os, pty, select, struct, sys, termios, time

def set_size(fd, spec):
    r, c = (int(x) for x in spec.split("x"))
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", r, c, 0, 0))

sep = sys.argv.index("--")
size, actions, cmd = sys.argv[1], sys.argv[2:sep], sys.argv[sep + 1:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(cmd[0], cmd)
set_size(fd, size)
seen = b""
bad = 0

def pump(t):
    global seen
    end = time.time() + t
    while True:
        left = end - time.time()
        if left <= 0:
            return
        r, _, _ = select.select([fd], [], [], left)
        if not r:
            return
        try:
            d = os.read(fd, 65536)
        except OSError:
            return
        if not d:
            return
        seen += d
        return

for a in actions:
    kind, _, arg = a.partition(":")
    ok = True
    if kind == "expect":
        want = arg.encode()
        end = time.time() + 5
        while want not in seen and time.time() < end:
            pump(end - time.time())
        ok = want in seen
        if ok:
            seen = seen[seen.index(want) + len(want):]
    elif kind == "send":
        os.write(fd, codecs.decode(arg, "unicode_escape").encode("latin-1"))
    elif kind == "resize":
        set_size(fd, arg)
    elif kind == "sleep":
        end = time.time() + float(arg)
        while time.time() < end:
            pump(end - time.time())
    print(("ok " if ok else "FAIL ") + a, flush=True)
    if not ok:
        bad += 1
        print("  output since the last match: %r" % seen[-600:], flush=True)
# Collect the rest and the exit status (10 s).
end = time.time() + 10
status = None
while time.time() < end:
    p, st = os.waitpid(pid, os.WNOHANG)
    if p == pid:
        status = os.waitstatus_to_exitcode(st)
        for _ in range(20):
            before = len(seen)
            pump(0.05)
            if len(seen) == before:
                break
        break
    pump(0.1)
if status is None:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    status = "timeout"
rest = seen.decode("utf-8", "replace")
print("exit=%s" % status)
print("tail=%r" % rest[-300:])
sys.exit(1 if bad else 0)
