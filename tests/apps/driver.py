#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""driver - run a resident app the way berth does, without the sandbox.

The app gets a connected AF_UNIX socket as fd 3 and BERTH_RPC_FD=3, a
temporary working directory standing in for /workspace, stdin /dev/null, and
stdout/stderr captured to files.  Python apps run as /usr/bin/python3
<entry> with PYTHONPATH=sdk/python (berth mounts the same directory at
/opt/berth/python); node apps as /usr/bin/node <entry> with NODE_PATH a
directory whose @berth/sdk is sdk/typescript (berth: /opt/berth/node).
Standard library only.

As a command:
    tests/apps/driver.py APP_DIR                      # print berth/ready
    tests/apps/driver.py APP_DIR METHOD '{"k": "v"}'  # ... and one call's answer
"""

import json
import os
import re
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON_SDK = os.path.join(TOP, "sdk", "python")
PYTHON = "/usr/bin/python3"
NODE = "/usr/bin/node"
NODE_SDK = os.path.join(TOP, "sdk", "typescript")
_node_path = None


def node_path():
    """A directory holding @berth/sdk -> sdk/typescript, for NODE_PATH (made once)."""
    global _node_path
    if _node_path is None:
        d = tempfile.mkdtemp(prefix="berth-node-path.")
        os.mkdir(os.path.join(d, "@berth"))
        os.symlink(NODE_SDK, os.path.join(d, "@berth", "sdk"))
        import atexit
        atexit.register(shutil.rmtree, d, True)
        _node_path = d
    return _node_path


class ProtocolError(Exception):
    pass


def manifest_basics(app_dir):
    """runtime, entry and export names from berth.yml, by a line-based reading
    of the subset our manifests use (top-level scalars, `  - name:` items)."""
    runtime = entry = None
    exports = []
    section = None
    with open(os.path.join(app_dir, "berth.yml"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            m = re.match(r"([a-z_]+):\s*(.*?)\s*(#.*)?$", line)
            if m:
                section = m.group(1)
                if section == "runtime":
                    runtime = m.group(2)
                elif section == "entry":
                    entry = m.group(2)
                continue
            m = re.match(r"  - name:\s*(\S+)\s*$", line)
            if section == "exports" and m:
                exports.append(m.group(1))
    if runtime not in ("native", "python", "node") or not entry:
        raise ValueError("%s/berth.yml: no runtime or entry" % app_dir)
    return runtime, entry, exports


def app_command(app_dir):
    runtime, entry, _ = manifest_basics(app_dir)
    path = os.path.join(os.path.abspath(app_dir), entry)
    return [PYTHON, path] if runtime == "python" else [NODE, path] if runtime == "node" else [path]


class App:
    """A running app and our end of its channel."""

    def __init__(self, argv, workspace=None, env=None, rpc_fd=True):
        self.own_workspace = workspace is None
        self.workspace = workspace or tempfile.mkdtemp(prefix="berth-app-ws.")
        self.logdir = tempfile.mkdtemp(prefix="berth-app-log.")
        self.sock, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        base = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": self.workspace,
                "PYTHONPATH": PYTHON_SDK, "PYTHONDONTWRITEBYTECODE": "1", "NODE_PATH": node_path()}
        if rpc_fd:
            base["BERTH_RPC_FD"] = "3"
        base.update(env or {})
        cfd = child.fileno()

        def as_fd_3():
            if cfd != 3:
                os.dup2(cfd, 3)  # the copy is inheritable
            else:
                os.set_inheritable(3, True)

        self.stdout_path = os.path.join(self.logdir, "stdout")
        self.stderr_path = os.path.join(self.logdir, "stderr")
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(argv, cwd=self.workspace, env=base, stdin=subprocess.DEVNULL,
                                         stdout=out, stderr=err, pass_fds=(3,), preexec_fn=as_fd_3)
        child.close()
        self.buf = b""
        self.next_id = 1

    @classmethod
    def start(cls, app_dir, **kw):
        return cls(app_command(app_dir), **kw)

    # ---- raw traffic ----

    def send_raw(self, data):
        self.sock.sendall(data)

    def send(self, msg):
        self.send_raw(json.dumps(msg).encode() + b"\n")

    def recv_line(self, timeout=10.0):
        """The next line from the app (bytes, no newline); None at EOF."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ProtocolError("no message from the app within %.1f s; stderr: %s"
                                    % (timeout, self.stderr()[-500:]))
            r, _, _ = select.select([self.sock], [], [], left)
            if not r:
                continue
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                if self.buf:
                    raise ProtocolError("unterminated last line: %r" % self.buf[:200])
                return None
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line

    def recv(self, timeout=10.0):
        line = self.recv_line(timeout)
        if line is None:
            raise ProtocolError("the app closed the channel; stderr: %s" % self.stderr()[-500:])
        try:
            return json.loads(line)
        except ValueError:
            raise ProtocolError("the app sent a line that is not JSON: %r" % line[:200])

    def quiet(self, seconds=0.3):
        """True when the app sends nothing for `seconds`."""
        if self.buf:
            return False
        r, _, _ = select.select([self.sock], [], [], seconds)
        return not r

    # ---- protocol ----

    def ready(self, timeout=10.0):
        msg = self.recv(timeout)
        if msg.get("method") != "berth/ready" or "id" in msg or msg.get("jsonrpc") != "2.0":
            raise ProtocolError("expected the berth/ready notification first, got %r" % (msg,))
        return msg["params"]

    def request(self, method, params=None, rid=None):
        """Send a request; returns its id."""
        if rid is None:
            rid, self.next_id = self.next_id, self.next_id + 1
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return rid

    def response(self, rid, timeout=10.0, notifications=None):
        """The answer to request rid; notifications met on the way go to the
        `notifications` list (an error if not given)."""
        while True:
            msg = self.recv(timeout)
            if "id" not in msg:
                if notifications is None:
                    raise ProtocolError("unexpected notification %r" % (msg,))
                notifications.append(msg)
                continue
            if msg.get("id") != rid or msg.get("jsonrpc") != "2.0":
                raise ProtocolError("expected the answer to id %r, got %r" % (rid, msg))
            if ("result" in msg) == ("error" in msg):
                raise ProtocolError("an answer needs exactly one of result and error: %r" % (msg,))
            return msg

    def call(self, method, params=None, timeout=10.0, notifications=None):
        """Call an export; returns the whole answer object."""
        return self.response(self.request(method, params), timeout, notifications)

    # ---- the end ----

    def close(self, timeout=10.0):
        """Close our end (EOF for the app) and wait; returns its exit status."""
        try:
            self.sock.close()
        finally:
            try:
                return self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise ProtocolError("the app did not exit within %.1f s of EOF" % timeout)

    def stdout(self):
        with open(self.stdout_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def stderr(self):
        with open(self.stderr_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def cleanup(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.sock.close()
        shutil.rmtree(self.logdir, ignore_errors=True)
        if self.own_workspace:
            shutil.rmtree(self.workspace, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cleanup()


def main(argv):
    if len(argv) not in (2, 4):
        print(__doc__.strip().split("As a command:")[1], file=sys.stderr)
        return 2
    with App.start(argv[1]) as app:
        print(json.dumps(app.ready()))
        if len(argv) == 4:
            print(json.dumps(app.call(argv[2], json.loads(argv[3]), notifications=[])))
        status = app.close()
        sys.stderr.write(app.stderr())
        return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
