#!/usr/bin/env python3
"""A scripted stand-in for a coding agent's terminal UI (tests/integration/run-sessions.sh).

It draws a Claude-like or a Codex-like screen with cursor addressing on the
alternate screen, reads keys in raw mode and answers:
  TEXT<Enter>  a reply line "You said: TEXT" above the input box (a finished turn)
  ask<Enter>   a permission question with numbered options (a blocked screen)
  1 / 2        answers the question
  work<Enter>  a spinner line with "esc to interrupt" for 2 seconds
  env NAME<Enter>  shows whether NAME is set ("NAME is set" / "NAME is unset")
  fail<Enter>  a failed turn, as the real agents show one: "● API Error: 500 ..." and the
               turn summary (claude), "■ unexpected status 401 Unauthorized: ..." (codex)
  sh CMD<Enter>  runs CMD with /bin/sh in its directory (an agent's edits: run-review-sessions.sh),
               then answers "ran turn N (status S)", N counting the `sh` turns from 1
  quit<Enter>  exits with status 3
The status line shows the window size; it is redrawn on SIGWINCH.

--paste-burst: like Codex 0.171 (codex-rs/tui paste_burst.rs), bracketed paste is
switched on (CSI ? 2004 h) and pasted text (ESC [ 200 ~ ... ESC [ 201 ~) goes
into the input box, its line breaks shown as "⏎"; characters that come less
than 8 ms apart are a paste too, and an Enter within 120 ms after such a burst
is a line break in the box, not a submit.  A submitted line that held a
bracketed paste is answered "You pasted: TEXT", one that held a burst "You
typed fast: TEXT".
"""
import os, signal, subprocess, sys, termios, time, tty, select

style = sys.argv[sys.argv.index("--style") + 1] if "--style" in sys.argv else "claude"
paste_burst = "--paste-burst" in sys.argv
history = []
shells = []
question = False
working_until = 0.0
typed = ""
out = sys.stdout

def size():
    try:
        s = os.get_terminal_size(1)
        return s.lines, s.columns
    except OSError:
        return 24, 80

def draw():
    rows, cols = size()
    w = max(20, min(cols, 100) - 2)
    buf = ["\033[H\033[2J"]
    if style == "claude":
        buf.append("\033[1m* Welcome to Fake Claude!\033[0m\r\n\r\n")
        buf.append("  cwd: " + os.getcwd() + "\r\n\r\n")
    else:
        buf.append("\033[1m>_ Fake Codex\033[0m (research preview)\r\n\r\n")
        buf.append("  directory: " + os.getcwd() + "\r\n\r\n")
    for h in history[-(rows - 14):]:
        if h.startswith("\0"):  # drawn as is
            buf.append(h[1:] + "\r\n")
        else:
            buf.append(("● " if style == "claude" else "codex ") + h + "\r\n")
    if question:
        buf.append("\r\n Do you want to proceed?\r\n")
        buf.append(" ❯ 1. Yes\r\n   2. No, and tell Claude what to do differently (esc)\r\n")
    elif time.time() < working_until:
        buf.append("\r\n✻ Thinking… (2s · esc to interrupt)\r\n")
    buf.append("\r\n")
    if question:
        # Like Claude Code and Codex: the dialog takes the input box's place.
        out.write("".join(buf))
        out.flush()
        return
    if style == "claude":
        buf.append("╭" + "─" * w + "╮\r\n")
        buf.append("│ > " + typed + " " * max(0, w - 3 - len(typed)) + "│\r\n")
        buf.append("╰" + "─" * w + "╯\r\n")
        buf.append("  ? for shortcuts   size %dx%d\r\n" % (rows, cols))
        cur_row = buf_rows(buf) - 2
        buf.append("\033[%d;%dH" % (cur_row, 5 + len(typed)))
    else:
        buf.append("› " + typed + "\r\n\r\n")
        buf.append("  ⏎ send   ⌃J newline   ⌃C quit   size %dx%d\r\n" % (rows, cols))
        cur_row = buf_rows(buf) - 2
        buf.append("\033[%d;%dH" % (cur_row, 3 + len(typed)))
    out.write("".join(buf))
    out.flush()

def buf_rows(buf):
    return "".join(buf).count("\n") + 1

def on_winch(*_):
    draw()

def main():
    global typed, question, working_until
    fd = 0
    old = termios.tcgetattr(fd)
    tty.setraw(fd)
    out.write("\033[?1049h")
    if paste_burst:
        out.write("\033[?2004h")
    signal.signal(signal.SIGWINCH, on_winch)
    status = 0
    pasting = False
    pasted = ""         # the line in the box holds pasted text: "bracketed" or "burst"
    last_char = 0.0     # when the last plain character came
    burst = 0           # plain characters in a row, each < 8 ms after the one before
    burst_end = 0.0     # an Enter before this time is a line break (120 ms after a burst)
    try:
        draw()
        while True:
            timeout = 0.2 if time.time() < working_until + 0.5 else None
            r, _, _ = select.select([fd], [], [], timeout)
            if not r:
                draw()
                continue
            data = os.read(fd, 1024).decode("utf-8", "replace")
            if not data:
                break
            now = time.time()
            i = 0
            while i < len(data):
                ch = data[i]
                i += 1
                if paste_burst and data.startswith("\033[200~", i - 1):
                    pasting, pasted = True, "bracketed"
                    i += 5
                    continue
                if paste_burst and data.startswith("\033[201~", i - 1):
                    pasting = False
                    i += 5
                    continue
                if pasting:
                    typed += "⏎" if ch in "\r\n" else ch
                    continue
                if paste_burst and ch >= " ":
                    # one read of several characters: they came at once
                    burst = burst + 1 if now - last_char < 0.008 or i > 1 else 1
                    last_char = now
                    if burst >= 3:
                        pasted = pasted or "burst"
                        burst_end = now + 0.120
                if paste_burst and ch in "\r\n" and now < burst_end:
                    typed += "⏎"
                    continue
                if question and ch in "12":
                    history.append("answered " + ch)
                    question = False
                elif ch in "\r\n":
                    line, typed = typed, ""
                    was_pasted, pasted, burst = pasted, "", 0
                    if line == "quit":
                        status = 3
                        return
                    if line == "ask":
                        question = True
                    elif line == "work":
                        working_until = time.time() + 2
                    elif line.startswith("sh "):
                        # working while it runs, as a real agent shows its tool call
                        working_until = time.time() + 86400
                        draw()
                        rc = subprocess.call(["/bin/sh", "-c", line[3:]], stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                        working_until = 0.0
                        shells.append(line)
                        history.append("ran turn %d (status %d)" % (len(shells), rc))
                    elif line.startswith("env "):
                        name = line[4:]
                        history.append(name + (" is set" if os.environ.get(name) else " is unset"))
                    elif line == "fail":
                        if style == "claude":
                            history.append("API Error: 500 mock api_error. This is a server-side issue")
                            history.append("\0✻ Churned for 0s")
                        else:
                            history.append("\0■ unexpected status 401 Unauthorized: mock error 401")
                    elif line and was_pasted == "bracketed":
                        history.append("You pasted: " + line)
                    elif line and was_pasted:
                        history.append("You typed fast: " + line)
                    elif line:
                        if style == "claude":  # Claude Code echoes the prompt above its answer
                            history.append("\0❯ " + line)
                        history.append("You said: " + line)
                elif ch == "\x7f":
                    typed = typed[:-1]
                elif ch == "\x03":
                    status = 130
                    return
                elif ch >= " ":
                    typed += ch
            draw()
    finally:
        out.write("\033[?1049l")
        out.write("bye from the fake agent (status %d)\r\n" % status)
        out.flush()
        termios.tcsetattr(fd, termios.TCSADRAIN, old)
        if status:
            os._exit(status)

main()
