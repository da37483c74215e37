# SPDX-License-Identifier: MIT
"""terminal - a shared shell: one bash on a pseudo-terminal, started at the
first call and kept for the app's life, as the app's own uid inside its
sandbox.  run_command types a command and waits for the prompt; send_keys
types keys into whatever runs (an editor, a REPL); read_screen renders the
screen with libvterm (Debian's libvterm0, through ctypes).

Text that comes back never holds an escape sequence or another control
character but newline and tab: the output is filtered, and the screen is
read as characters from libvterm's cells.
"""

import ctypes
import ctypes.util
import os
import pty
import re
import secrets
import select
import signal
import threading
import time

import berth_app

ROWS, COLS = 24, 80
OUT_LIMIT = 256 * 1024
KEEP = 1024 * 1024  # raw output kept for run_command

app = berth_app.App()


class _Rect(ctypes.Structure):
    _fields_ = [("start_row", ctypes.c_int), ("end_row", ctypes.c_int),
                ("start_col", ctypes.c_int), ("end_col", ctypes.c_int)]


class _Pos(ctypes.Structure):
    _fields_ = [("row", ctypes.c_int), ("col", ctypes.c_int)]


_vt = ctypes.CDLL(ctypes.util.find_library("vterm") or "libvterm.so.0")
_vt.vterm_new.restype = ctypes.c_void_p
_vt.vterm_new.argtypes = [ctypes.c_int, ctypes.c_int]
_vt.vterm_set_utf8.argtypes = [ctypes.c_void_p, ctypes.c_int]
_vt.vterm_input_write.restype = ctypes.c_size_t
_vt.vterm_input_write.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
_vt.vterm_obtain_screen.restype = ctypes.c_void_p
_vt.vterm_obtain_screen.argtypes = [ctypes.c_void_p]
_vt.vterm_obtain_state.restype = ctypes.c_void_p
_vt.vterm_obtain_state.argtypes = [ctypes.c_void_p]
_vt.vterm_screen_reset.argtypes = [ctypes.c_void_p, ctypes.c_int]
_vt.vterm_screen_get_text.restype = ctypes.c_size_t
_vt.vterm_screen_get_text.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, _Rect]
_vt.vterm_state_get_cursorpos.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Pos)]
_vt.vterm_output_read.restype = ctypes.c_size_t
_vt.vterm_output_read.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]

# ECMA-48: CSI, OSC/DCS/SOS/PM/APC strings, other escape sequences; then the
# C0 and C1 controls but tab and newline.
_ESC = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[ -/]*[0-~]|\x1b"
                  r"|\x9b[0-?]*[ -/]*[@-~]|[\x9d\x90\x98\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?")
_CTRL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean(text):
    """text without escape sequences or control characters (but \\n, \\t)."""
    text = _ESC.sub("", text)
    text = re.sub(r"\r+\n", "\n", text)  # the tty's onlcr: \n is sent as \r\n
    # a carriage return alone rewrites its line: keep what was written last
    text = "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n"))
    return _CTRL.sub("", text)


KEYS = {
    "Enter": "\r", "Tab": "\t", "Escape": "\x1b", "Backspace": "\x7f", "Space": " ",
    "Up": "\x1b[A", "Down": "\x1b[B", "Right": "\x1b[C", "Left": "\x1b[D",
    "Home": "\x1b[H", "End": "\x1b[F", "PageUp": "\x1b[5~", "PageDown": "\x1b[6~",
    "Delete": "\x1b[3~", "Insert": "\x1b[2~",
}
KEYS.update({"C-%s" % chr(c): chr(c - ord("a") + 1) for c in range(ord("a"), ord("z") + 1)})
KEYS.update({"F%d" % i: s for i, s in enumerate(["\x1bOP", "\x1bOQ", "\x1bOR", "\x1bOS", "\x1b[15~", "\x1b[17~",
                                                  "\x1b[18~", "\x1b[19~", "\x1b[20~", "\x1b[21~"], 1)})


class Shell:
    def __init__(self):
        self.token = secrets.token_hex(8)
        self.lock = threading.Condition()
        self.raw = bytearray()   # the last KEEP bytes of output
        self.base = 0            # stream offset of raw[0]
        self.prompts = []        # (stream offset after the marker, exit status) of each prompt
        self.starts = []         # stream offset after each PS0 marker (a command started)
        self.alive = True
        self.vt = _vt.vterm_new(ROWS, COLS)
        _vt.vterm_set_utf8(self.vt, 1)
        self.screen = _vt.vterm_obtain_screen(self.vt)
        self.state = _vt.vterm_obtain_state(self.vt)
        _vt.vterm_screen_reset(self.screen, 1)
        self.marker = re.compile(rb"\x1b\]7770;" + self.token.encode() + rb";(s|p;(\d+))\x07")
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/workspace", "TERM": "xterm",
            "LANG": "C.UTF-8", "HISTFILE": "/dev/null", "COLUMNS": str(COLS), "LINES": str(ROWS),
            # PS0 is shown once a command is read, PS1 when it ended: the
            # output between the two is the command's, and PS1 carries $?.
            "PS0": "\\[\x1b]7770;%s;s\x07\\]" % self.token,
            "PS1": "\\[\x1b]7770;%s;p;$?\x07\\]$ " % self.token,
            "PS2": "> ",
        }
        for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy",
                  "NO_PROXY", "no_proxy"):
            if k in os.environ:
                env[k] = os.environ[k]
        pid, fd = pty.fork()
        if pid == 0:
            try:
                os.chdir("/workspace")
                import fcntl, struct, termios
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
                os.execve("/bin/bash", ["bash", "--norc", "--noprofile", "-i"], env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        import fcntl, struct, termios
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        threading.Thread(target=self._reader, daemon=True).start()
        self.wait_prompt(0, 10)

    def _reader(self):
        junk = ctypes.create_string_buffer(4096)
        while True:
            try:
                b = os.read(self.fd, 65536)
            except OSError:
                b = b""
            with self.lock:
                if not b:
                    self.alive = False
                    self.lock.notify_all()
                    return
                _vt.vterm_input_write(self.vt, b, len(b))
                # Answers libvterm would send (device reports) are dropped:
                # nothing the screen shows is typed back into the shell.
                while _vt.vterm_output_read(self.vt, junk, len(junk)):
                    pass
                start = self.base + len(self.raw)
                self.raw += b
                # markers may span reads: search from a little before
                tail = max(0, len(self.raw) - len(b) - 64)
                for m in self.marker.finditer(bytes(self.raw), tail):
                    off = self.base + m.end()
                    if off <= start:
                        continue
                    if m.group(1) == b"s":
                        self.starts.append(off)
                    else:
                        self.prompts.append((off, int(m.group(2))))
                if len(self.raw) > KEEP:
                    cut = len(self.raw) - KEEP
                    del self.raw[:cut]
                    self.base += cut
                self.lock.notify_all()

    def wait_prompt(self, n, timeout):
        """Wait for the n+1-th prompt; its (offset, status), or None."""
        end = time.monotonic() + timeout
        with self.lock:
            while len(self.prompts) <= n and self.alive:
                left = end - time.monotonic()
                if left <= 0:
                    return None
                self.lock.wait(left)
            return self.prompts[n] if len(self.prompts) > n else None

    def write(self, data):
        data = data.encode()
        while data:
            _, w, _ = select.select([], [self.fd], [], 5)
            if not w:
                raise berth_app.AppError("the terminal takes no input (a program holds it without reading)")
            data = data[os.write(self.fd, data):]

    def reap(self):
        """The ended shell's exit status (128+N for signal N)."""
        try:
            _, st = os.waitpid(self.pid, 0)
        except ChildProcessError:
            return -1
        return os.waitstatus_to_exitcode(st) if os.WIFEXITED(st) else 128 + os.WTERMSIG(st)

    def text_between(self, a, b):
        with self.lock:
            a, b = max(a, self.base), max(b, self.base)
            chunk = bytes(self.raw[a - self.base:b - self.base])
        chunk = self.marker.sub(b"", chunk)
        return clean(chunk.decode("utf-8", errors="replace"))

    def settle(self, quiet=0.1, most=1.0):
        """Wait until no output came for `quiet` s (at most `most` s)."""
        end = time.monotonic() + most
        last = -1
        while time.monotonic() < end:
            with self.lock:
                n = self.base + len(self.raw)
            if n == last:
                return
            last = n
            time.sleep(quiet)

    def screen_rows(self):
        buf = ctypes.create_string_buffer(COLS * 4 * 6 + 16)
        rows = []
        with self.lock:
            for r in range(ROWS):
                n = _vt.vterm_screen_get_text(self.screen, buf, len(buf), _Rect(r, r + 1, 0, COLS))
                rows.append(clean(buf.raw[:n].decode("utf-8", errors="replace")).rstrip())
            pos = _Pos()
            _vt.vterm_state_get_cursorpos(self.state, ctypes.byref(pos))
        return rows, {"row": pos.row, "col": pos.col}


_shell = None


def shell():
    global _shell
    if _shell is None or not _shell.alive:
        if _shell is not None:
            try:
                os.waitpid(_shell.pid, os.WNOHANG)
            except OSError:
                pass
            os.close(_shell.fd)
        _shell = Shell()
    return _shell


@app.export("run_command")
def run_command(command, timeout_ms=30000):
    if not isinstance(command, str) or not command.strip():
        raise berth_app.InvalidParams("$.command", "a command, not empty")
    if not isinstance(timeout_ms, int) or not 1 <= timeout_ms <= 600000:
        raise berth_app.InvalidParams("$.timeout_ms", "expected 1 to 600000")
    sh = shell()
    with sh.lock:
        n = len(sh.prompts)
        busy = len(sh.starts) >= n  # a command started and its prompt has not come back
        begin = sh.base + len(sh.raw)
    if busy:
        raise berth_app.AppError("the shell is still running a command: send_keys (C-c to stop it), "
                                 "then read_screen")
    sh.write(command.rstrip("\n") + "\n")
    got = sh.wait_prompt(n, timeout_ms / 1000)
    with sh.lock:
        start = next((s for s in sh.starts if s > begin), begin)
        end = got[0] if got else sh.base + len(sh.raw)
    out = sh.text_between(start, end)
    if got:  # the prompt itself ("$ ") closes the output
        out = out[:-2] if out.endswith("$ ") else out
    b = out.encode()
    res = {"output": b[:OUT_LIMIT].decode(errors="ignore"), "truncated": len(b) > OUT_LIMIT,
           "timed_out": got is None and sh.alive}
    if got:
        res["exit_code"] = got[1]
    elif not sh.alive:  # the command ended the shell (`exit`): the next call starts a new one
        res["shell_exited"] = True
        res["exit_code"] = sh.reap()
    return res


@app.export("send_keys")
def send_keys(text=None, keys=None):
    if text is None and not keys:
        raise berth_app.InvalidParams("$", "give text, keys or both")
    if text is not None and not isinstance(text, str):
        raise berth_app.InvalidParams("$.text", "expected string")
    seq = text or ""
    for i, k in enumerate(keys or []):
        if k not in KEYS:
            raise berth_app.InvalidParams("$.keys[%d]" % i, "unknown key `%s`" % clean(str(k))[:40])
        seq += KEYS[k]
    sh = shell()
    sh.write(seq)
    sh.settle()
    return {"bytes": len(seq.encode())}


@app.export("read_screen")
def read_screen():
    sh = shell()
    sh.settle()
    rows, cursor = sh.screen_rows()
    return {"rows": rows, "cursor": cursor, "width": COLS, "height": ROWS,
            "text": "\n".join(rows).rstrip("\n")}


def _stop(*_):
    if _shell is not None:
        try:
            os.killpg(os.getpgid(_shell.pid), signal.SIGHUP)
        except OSError:
            pass


try:
    app.run()
finally:
    _stop()
