#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run a command with its stdout on a fresh pseudo-terminal and print what
reached that terminal: `STATUS HEX` (the command's exit status, then every
byte read from the pty master, hex-encoded).  The tests of the terminal
filter (what a sandboxed command may not send to the caller's terminal) use
it for both runtimes.

usage: pty-capture.py [--stdin pty|null] [--stderr pty|null] [--idle SECONDS] -- COMMAND [ARG...]
  --stdin   the command's stdin: the same pty (an interactive run) or /dev/null (default pty)
  --stderr  the command's stderr: the same pty or /dev/null (default null)
  --idle    stop reading after SECONDS without output (default 10)
"""
import os, pty, select, subprocess, sys


def main():
    a, stdin, stderr, idle = sys.argv[1:], "pty", "null", 10.0
    while a and a[0] != "--":
        if len(a) < 2 or a[0] not in ("--stdin", "--stderr", "--idle"):
            print(__doc__.strip().splitlines()[-4], file=sys.stderr)
            return 2
        if a[0] == "--idle":
            idle = float(a[1])
        elif a[1] not in ("pty", "null"):
            print(f"pty-capture: {a[0]} {a[1]!r}: use pty or null", file=sys.stderr)
            return 2
        elif a[0] == "--stdin":
            stdin = a[1]
        else:
            stderr = a[1]
        a = a[2:]
    if len(a) < 2:
        print(__doc__.strip().splitlines()[-4], file=sys.stderr)
        return 2
    m, s = pty.openpty()
    p = subprocess.Popen(a[1:], stdin=s if stdin == "pty" else subprocess.DEVNULL, stdout=s,
                         stderr=s if stderr == "pty" else subprocess.DEVNULL)
    os.close(s)
    buf = b""
    while True:
        r, _, _ = select.select([m], [], [], idle)
        if not r:
            break
        try:
            d = os.read(m, 65536)
        except OSError:
            break
        if not d:
            break
        buf += d
    p.wait()
    print(p.returncode, buf.hex())
    return 0


if __name__ == "__main__":
    sys.exit(main())
