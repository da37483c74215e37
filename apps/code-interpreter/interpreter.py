# SPDX-License-Identifier: MIT
"""code-interpreter - a resident app that runs Python, JavaScript or shell code.

Each call writes the code to a temporary file, runs the interpreter on it in
its own session and process group with /workspace as the working directory,
and collects stdout and stderr (64 KiB each; the rest is counted and
dropped).  When the timeout passes, or when the interpreter exits, the whole
process group is killed, so nothing started by the code outlives the call.
A process that leaves the group (setsid) escapes that kill but not the
sandbox, which berth tears down with the app.
"""

import os
import selectors
import signal
import subprocess
import tempfile
import time

import berth_app

LANGUAGES = {
    "python": (["/usr/bin/python3"], ".py"),
    "javascript": (["/usr/bin/node"], ".js"),
    "shell": (["/bin/sh"], ".sh"),
}
DEFAULT_TIMEOUT_MS = 10000
MAX_TIMEOUT_MS = 60000
OUTPUT_MAX = 64 * 1024
DRAIN_S = 0.5  # after the kill, how long to wait for the pipes to close
WORKSPACE = os.getcwd()  # berth starts the app in /workspace

app = berth_app.App()


class _Capture:
    """The first OUTPUT_MAX bytes of a stream, and how many more there were."""

    def __init__(self):
        self.data = bytearray()
        self.dropped = 0

    def add(self, chunk):
        room = max(0, OUTPUT_MAX - len(self.data))
        self.data += chunk[:room]
        self.dropped += max(0, len(chunk) - room)

    def text(self):
        text = self.data.decode("utf-8", "replace")
        if self.dropped:
            text += "\n[output truncated: %d more bytes]" % self.dropped
        return text


def _leader_exited(pid):
    # WNOWAIT: leave the zombie in place, so that its pid (the group id)
    # cannot be reused before the group is killed.
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def _kill_group(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _pump(sel, streams, until):
    """Read the registered pipes until all are closed or `until` returns true."""
    while sel.get_map() and not until():
        for key, _ in sel.select(timeout=0.05):
            chunk = os.read(key.fd, 65536)
            if chunk:
                streams[key.fd].add(chunk)
            else:
                sel.unregister(key.fd)


def _run(argv, timeout_s):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BERTH_")}
    env["PYTHONUNBUFFERED"] = "1"  # keep what a timed-out script printed
    try:
        proc = subprocess.Popen(argv, cwd=WORKSPACE, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True, close_fds=True)
    except OSError as e:
        raise berth_app.os_error(e, "execve", argv[0])
    out, err = _Capture(), _Capture()
    streams = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
    deadline = time.monotonic() + timeout_s
    timed_out = False
    with selectors.DefaultSelector() as sel:
        for fd in streams:
            sel.register(fd, selectors.EVENT_READ)

        def leader_done_or_late():
            nonlocal timed_out
            if time.monotonic() >= deadline:
                timed_out = True
                return True
            return _leader_exited(proc.pid)

        _pump(sel, streams, leader_done_or_late)
        # Both pipes closed (or the leader exited, or time ran out): wait
        # for the leader within what is left of the timeout.
        while not timed_out and not _leader_exited(proc.pid):
            if time.monotonic() >= deadline:
                timed_out = True
                break
            time.sleep(0.01)
        _kill_group(proc.pid)  # the leader is at worst a zombie: its pgid is still ours
        proc.wait()
        drain_until = time.monotonic() + DRAIN_S
        _pump(sel, streams, lambda: time.monotonic() >= drain_until)
    proc.stdout.close()
    proc.stderr.close()
    result = {
        "stdout": out.text(),
        "stderr": err.text(),
        "exit_code": proc.returncode if proc.returncode >= 0 else 128 - proc.returncode,
        "timed_out": timed_out,
        "stdout_truncated": out.dropped > 0,
        "stderr_truncated": err.dropped > 0,
    }
    if proc.returncode < 0:
        result["signal"] = signal.Signals(-proc.returncode).name
    return result


@app.export("run_code")
def run_code(language, code, timeout_ms=DEFAULT_TIMEOUT_MS):
    if language not in LANGUAGES:
        raise berth_app.InvalidParams("$.language", "expected one of " + ", ".join(LANGUAGES))
    if not isinstance(code, str):
        raise berth_app.InvalidParams("$.code", "expected string")
    if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int):
        raise berth_app.InvalidParams("$.timeout_ms", "expected integer")
    if not 1 <= timeout_ms <= MAX_TIMEOUT_MS:
        raise berth_app.InvalidParams("$.timeout_ms", "must be between 1 and %d" % MAX_TIMEOUT_MS)
    argv, suffix = LANGUAGES[language]
    try:
        fd, path = tempfile.mkstemp(prefix="berth-code-", suffix=suffix)
    except OSError as e:
        raise berth_app.os_error(e, "open", tempfile.gettempdir())
    try:
        try:
            with os.fdopen(fd, "w", encoding="utf-8", errors="surrogatepass") as f:
                f.write(code)
        except OSError as e:
            raise berth_app.os_error(e, "write", path)
        return _run(argv + [path], timeout_ms / 1000.0)
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass


if __name__ == "__main__":
    app.run()
