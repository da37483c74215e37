#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Protocol tests for the SDKs (C, Python, JavaScript) and the first-party apps, TAP output.

    test_apps.py C_FIXTURE [BERTH]   (run by tests/apps/run-apps.sh, which builds both)

C_FIXTURE is tests/apps/fixtures/sdk_test_app.c built against the C SDK.
With BERTH (build/berth), the manifest examples that only hold inside the
sandbox (writing /etc/x) are also run, inside `berth run`.
Every test is a function below; a failed check raises, prints `not ok` and a
diagnostic, and makes the exit status 1.  The manifest examples are read
with PyYAML (Debian python3-yaml), the only package beyond the standard
library, and only for that test.
"""

import errno
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from driver import NODE, PYTHON, TOP, App, app_command, manifest_basics  # noqa: E402

APPS = os.path.join(TOP, "apps")
FIXTURES = os.path.join(TOP, "tests", "apps", "fixtures")
MIB = 1048576

FIXTURE_EXPORTS = ["echo", "fail", "fail_errno", "crash", "log", "big", "nul", "channel_cloexec"]


class Failed(Exception):
    pass


def check(cond, what, got=None):
    if not cond:
        raise Failed(what if got is None else "%s; got %r" % (what, got))


def check_eq(got, want, what):
    if got != want:
        raise Failed("%s: expected %r, got %r" % (what, want, got))


def error_of(answer, code, what):
    check("error" in answer, "%s: expected an error answer" % what, answer)
    check_eq(answer["error"].get("code"), code, what + ": error code")
    check(isinstance(answer["error"].get("message"), str) and answer["error"]["message"],
          "%s: the error needs a message" % what, answer)
    return answer["error"]


def result_of(answer, what):
    check("result" in answer, "%s: expected a result" % what, answer)
    return answer["result"]


# ---- the apps under test ---------------------------------------------------

def subjects(c_fixture):
    """(label, argv, expected exports, sdk) for every app: both SDK fixtures
    and the three first-party apps."""
    out = [("c-sdk", [c_fixture], FIXTURE_EXPORTS, "c/0.1.0"),
           ("python-sdk", [PYTHON, os.path.join(FIXTURES, "sdk_test_app.py")],
            FIXTURE_EXPORTS + ["needs_x"], "python/0.1.0"),
           ("node-sdk", [NODE, os.path.join(FIXTURES, "sdk_test_app.js")], FIXTURE_EXPORTS, "node/0.1.0")]
    for name, sdk in (("filesystem", "c/0.1.0"), ("notes", "python/0.1.0"),
                      ("code-interpreter", "python/0.1.0")):
        d = os.path.join(APPS, name)
        out.append((name, app_command(d), manifest_basics(d)[2], sdk))
    return out


def a_valid_call(label):
    """A call every subject answers with a result, and a check of it."""
    if label in ("c-sdk", "python-sdk", "node-sdk"):
        return "echo", {"k": "v"}, lambda r: check_eq(r, {"k": "v"}, "echo")
    if label == "filesystem":
        return "list_files", {}, lambda r: check(isinstance(r.get("files"), list), "list_files", r)
    if label == "notes":
        return "list_notes", {}, lambda r: check(isinstance(r.get("notes"), list), "list_notes", r)
    return ("run_code", {"language": "shell", "code": "echo ok"},
            lambda r: check_eq(r.get("stdout"), "ok\n", "run_code stdout"))


def valid_call_works(app, label, what):
    method, params, verify = a_valid_call(label)
    verify(result_of(app.call(method, params), "%s (%s)" % (method, what)))


TESTS = []  # protocol and SDK tests, made per subject in main()
APP_TESTS = []


def test(fn):
    APP_TESTS.append(fn)
    return fn


# ---- protocol, for every app ---------------------------------------------

def protocol_tests(label, argv, exports, sdk):
    def ready():
        with App(argv) as app:
            params = app.ready()
            check_eq(params.get("exports"), exports, "berth/ready exports (in registration order)")
            check_eq(params.get("sdk"), sdk, "berth/ready sdk")
            check(app.quiet(0.2), "nothing may follow berth/ready unasked")
            check_eq(app.close(), 0, "exit status at EOF")
            check_eq(app.stdout(), "", "stdout (no protocol on stdout)")
    ready.__doc__ = "%s: berth/ready names the exports and the SDK; EOF exits 0" % label

    def unknown():
        with App(argv) as app:
            app.ready()
            for method in ("no_such_export", "berth/ping", "berth/cancel"):
                rid = app.request(method, {})
                answer = app.response(rid)
                error_of(answer, -32601, method)
            check_eq(app.close(), 0, "exit status")
    unknown.__doc__ = "%s: unknown methods (also berth/*) get -32601 with their id" % label

    def malformed():
        with App(argv) as app:
            app.ready()
            for line in (b"{not json", b'{"jsonrpc":"2.0","id":1,"method":"x"', b"\xff\xfe{}",
                         b'{"jsonrpc":"2.0","id":1,"method":"echo","params":NaN}'):
                app.send_raw(line + b"\n")
                answer = app.recv()
                check_eq(answer.get("id", "missing"), None, "id of a parse error")
                error_of(answer, -32700, "line %r" % line)
            valid_call_works(app, label, "after malformed lines")
            check_eq(app.close(), 0, "exit status")
    malformed.__doc__ = "%s: lines that are not JSON get -32700 (id null) and the app goes on" % label

    def invalid():
        cases = [(b"[1,2]", None), (b"42", None), (b'"str"', None),
                 (b'{"jsonrpc":"2.0","id":5,"result":{}}', 5),
                 (b'{"jsonrpc":"1.0","id":6,"method":"echo"}', 6),
                 (b'{"id":7,"method":"echo"}', 7),
                 (b'{"jsonrpc":"2.0","id":8,"method":42}', 8),
                 (b'{"jsonrpc":"2.0","id":1.5,"method":"echo"}', None),
                 (b'{"jsonrpc":"2.0","id":[1],"method":"echo"}', None)]
        with App(argv) as app:
            app.ready()
            for line, rid in cases:
                app.send_raw(line + b"\n")
                answer = app.recv()
                check_eq(answer.get("id", "missing"), rid, "id answered to %r" % line)
                error_of(answer, -32600, "line %r" % line)
            valid_call_works(app, label, "after invalid requests")
            check_eq(app.close(), 0, "exit status")
    invalid.__doc__ = "%s: JSON that is not a JSON-RPC 2.0 request gets -32600" % label

    def oversized():
        with App(argv) as app:
            app.ready()
            line = b'{"jsonrpc":"2.0","id":99,"method":"echo","params":{"pad":"' + b"a" * (2 * MIB) + b'"}}\n'
            app.send_raw(line)
            answer = app.recv()
            check_eq(answer.get("id", "missing"), None, "id of the oversize error")
            error_of(answer, -32600, "a 2 MiB line")
            # The rest of the big line was discarded, not parsed as more lines.
            valid_call_works(app, label, "after a 2 MiB line")
            check(app.quiet(0.2), "exactly one answer for the oversized line")
            check_eq(app.close(), 0, "exit status")
    oversized.__doc__ = "%s: a 2 MiB line gets one -32600 and a later call still works" % label

    def eof_mid_line():
        with App(argv) as app:
            app.ready()
            app.send_raw(b'{"jsonrpc":"2.0","id":1,"me')
            check_eq(app.close(), 0, "exit status at EOF after half a line")
    eof_mid_line.__doc__ = "%s: EOF in the middle of a line exits 0" % label

    for fn in (ready, unknown, malformed, invalid, oversized, eof_mid_line):
        TESTS.append(fn)


# ---- the SDKs, through their fixtures ------------------------------------

def sdk_tests(label, argv):
    def t_echo():
        with App(argv) as app:
            app.ready()
            value = {"s": "h\u00e9llo \u2603 \U0001F600", "n": [1, 2.5, None, True], "o": {"k": {}}}
            check_eq(result_of(app.call("echo", value), "echo"), value, "echo round trip")
            check_eq(result_of(app.call("echo"), "echo without params"), {}, "no params is {}")
            app.send({"jsonrpc": "2.0", "id": "abc", "method": "echo", "params": {}})
            check_eq(app.recv().get("id"), "abc", "a string id is echoed")
            error_of(app.call("echo", [1, 2]), -32602, "array params")
            check_eq(app.close(), 0, "exit status")
    t_echo.__doc__ = "%s: results round-trip; absent params are {}; array params get -32602" % label

    def t_pipelined():
        with App(argv) as app:
            app.ready()
            reqs = b"".join(json.dumps({"jsonrpc": "2.0", "id": i, "method": "echo", "params": {"i": i}}).encode()
                            + b"\n" for i in range(1, 51))
            # Notifications are never answered, berth/cancel included; blank lines are skipped.
            app.send_raw(b'{"jsonrpc":"2.0","method":"berth/cancel","params":{"id":1}}\n\n   \n'
                         b'{"jsonrpc":"2.0","method":"echo","params":{"i":0}}\n' + reqs)
            for i in range(1, 51):
                answer = app.recv()
                check_eq((answer.get("id"), answer.get("result")), (i, {"i": i}), "answer %d in order" % i)
            check(app.quiet(0.2), "no answer to notifications")
            check_eq(app.close(), 0, "exit status")
    t_pipelined.__doc__ = "%s: 50 pipelined requests are answered in order; notifications never" % label

    def t_limit():
        with App(argv) as app:
            app.ready()
            head = b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}'
            exact = head + b" " * (MIB - 1 - len(head)) + b"\n"
            check_eq(len(exact), MIB, "test line length")
            app.send_raw(exact)
            check_eq(result_of(app.response(1), "a line of exactly 1 MiB"), {}, "1 MiB line")
            over = head.replace(b'"id":1', b'"id":2') + b" " * (MIB - len(head)) + b"\n"
            app.send_raw(over)
            error_of(app.recv(), -32600, "a line of 1 MiB + 1 byte")
            check_eq(result_of(app.call("echo", {"after": 1}), "after"), {"after": 1}, "call after")
            check_eq(app.close(), 0, "exit status")
    t_limit.__doc__ = "%s: a line of exactly 1 MiB is served, one byte more gets -32600" % label

    def t_last_line():
        with App(argv) as app:
            app.ready()
            app.send_raw(b'{"jsonrpc":"2.0","id":3,"method":"echo","params":{"last":true}}')
            app.sock.shutdown(socket.SHUT_WR)
            check_eq(result_of(app.response(3), "last line"), {"last": True}, "unterminated last line")
            check_eq(app.close(), 0, "exit status")
    t_last_line.__doc__ = "%s: a last line without newline is still served before exit 0" % label

    def t_errors():
        with App(argv) as app:
            app.ready()
            err = error_of(app.call("fail"), -32000, "fail")
            check("failed on purpose: 42" in err["message"], "-32000 message", err)
            err = error_of(app.call("fail_errno", {"path": "missing/file"}), -32001, "fail_errno")
            check_eq(err.get("data"), {"errno": errno.ENOENT, "errno_name": "ENOENT", "syscall": "open",
                                       "path": "missing/file"}, "-32001 data")
            check("missing/file" in err["message"] and "open" in err["message"], "-32001 message", err)
            err = error_of(app.call("crash"), -32603, "crash")
            check("\n" not in err["message"], "one-line -32603 message", err)
            err = error_of(app.call("big"), -32603, "big")
            check("too large" in err["message"], "big result message", err)
            check_eq(result_of(app.call("nul"), "nul"), {"text": "a\ufffdb\\u0000"}, "NUL becomes U+FFFD")
            check_eq(result_of(app.call("echo", {"ok": 1}), "after errors"), {"ok": 1}, "still serving")
            check_eq(result_of(app.call("channel_cloexec"), "cloexec"), {"cloexec": True},
                     "the channel is close-on-exec")
            if label == "node-sdk":
                err = error_of(app.call("crash"), -32603, "crash")
                check_eq(err["message"], "RangeError: a bug on two lines", "-32603 names the error, one line")
            check_eq(app.close(), 0, "exit status")
            check_eq(app.stdout(), "", "stdout")
            if label == "python-sdk":
                check("ZeroDivisionError" in app.stderr() and "Traceback" in app.stderr(),
                      "the traceback goes to stderr", app.stderr())
            if label == "node-sdk":
                check("export `crash` threw: RangeError" in app.stderr() and "sdk_test_app.js:" in app.stderr(),
                      "the stack goes to stderr", app.stderr())
    t_errors.__doc__ = "%s: -32000, -32001 with errno data, -32603 for bugs and huge results, NUL" % label

    def t_log():
        with App(argv) as app:
            app.ready()
            notes = []
            check_eq(result_of(app.call("log", notifications=notes), "log"), {"logged": True}, "log result")
            check_eq(notes, [
                {"jsonrpc": "2.0", "method": "berth/log", "params": {"level": "warning", "message": "first line"}},
                {"jsonrpc": "2.0", "method": "berth/log", "params": {"level": "debug", "message": "second line"}},
            ], "berth/log notifications before the answer")
            check_eq(app.close(), 0, "exit status")
    t_log.__doc__ = "%s: the log helper sends berth/log notifications" % label

    def t_no_fd():
        for env, what in (({}, "unset"), ({"BERTH_RPC_FD": "x"}, "invalid"), ({"BERTH_RPC_FD": "77"}, "closed")):
            with App(argv, env=env, rpc_fd=bool(env)) as app:
                status = app.proc.wait(10)
                check(status != 0, "BERTH_RPC_FD %s: a non-zero exit status" % what, status)
                check("BERTH_RPC_FD" in app.stderr() and app.stderr().count("\n") <= 2,
                      "BERTH_RPC_FD %s: one line on stderr naming it" % what, app.stderr())
    t_no_fd.__doc__ = "%s: without a usable BERTH_RPC_FD the app exits non-zero, saying why" % label

    def t_peer_gone():
        with App(argv) as app:
            app.ready()
            app.request("big")
            app.request("echo", {})
            app.sock.close()  # while the app works: its answers hit a closed peer
            check_eq(app.proc.wait(10), 0, "exit status when berth goes away mid-call")
    t_peer_gone.__doc__ = "%s: berth closing the channel mid-call is a normal end (exit 0, no SIGPIPE)" % label

    tests = [t_echo, t_pipelined, t_limit, t_last_line, t_errors, t_log, t_no_fd, t_peer_gone]
    if label == "python-sdk":
        def t_kwargs():
            with App(argv) as app:
                app.ready()
                check_eq(result_of(app.call("needs_x", {"x": 2, "y": 3}), "needs_x"), {"sum": 5}, "kwargs")
                check_eq(result_of(app.call("needs_x", {"x": 2}), "needs_x"), {"sum": 2}, "default")
                err = error_of(app.call("needs_x", {"y": 3}), -32602, "missing x")
                check_eq(err.get("data"), {"path": "$.x", "reason": "required property is missing"}, "data")
                err = error_of(app.call("needs_x", {"x": 1, "z": 3}), -32602, "unexpected z")
                check_eq(err.get("data"), {"path": "$.z", "reason": "unexpected property"}, "data")
                check_eq(app.close(), 0, "exit status")
        t_kwargs.__doc__ = "python-sdk: input properties are keyword arguments; mismatches get -32602"
        tests.append(t_kwargs)
    TESTS.extend(tests)


# ---- filesystem ------------------------------------------------------------

FS = os.path.join(APPS, "filesystem")


@test
def fs_write_read():
    """filesystem: write_file, read_file, stat and delete_file on relative paths"""
    with App.start(FS) as app:
        app.ready()
        os.mkdir(os.path.join(app.workspace, "sub"))
        check_eq(result_of(app.call("write_file", {"path": "sub/h\u00e9.txt", "content": "h\u00e9 \u2603"}), "w"),
                 {"path": "sub/h\u00e9.txt", "bytes": 7}, "write_file result (UTF-8 bytes)")
        with open(os.path.join(app.workspace, "sub", "h\u00e9.txt"), encoding="utf-8") as f:
            check_eq(f.read(), "h\u00e9 \u2603", "content on disk")
        check_eq(result_of(app.call("read_file", {"path": "sub/h\u00e9.txt"}), "r"), {"content": "h\u00e9 \u2603"},
                 "read_file")
        check_eq(result_of(app.call("write_file", {"path": "sub/h\u00e9.txt", "content": "x"}), "w2")["bytes"], 1,
                 "replacing truncates")
        check_eq(result_of(app.call("read_file", {"path": "sub/h\u00e9.txt"}), "r2"), {"content": "x"}, "replaced")
        os.chmod(os.path.join(app.workspace, "sub", "h\u00e9.txt"), 0o640)
        st = result_of(app.call("stat", {"path": "sub/h\u00e9.txt"}), "stat")
        check_eq({k: st.get(k) for k in ("path", "type", "size", "mode")},
                 {"path": "sub/h\u00e9.txt", "type": "file", "size": 1, "mode": "0640"}, "stat")
        check(isinstance(st.get("mtime"), int) and abs(st["mtime"] - time.time()) < 120, "stat mtime", st)
        check_eq(result_of(app.call("stat", {"path": "sub"}), "stat dir")["type"], "dir", "stat of a dir")
        check_eq(result_of(app.call("delete_file", {"path": "sub/h\u00e9.txt"}), "d"), {"deleted": True}, "delete")
        check(not os.path.exists(os.path.join(app.workspace, "sub", "h\u00e9.txt")), "the file is gone")
        err = error_of(app.call("delete_file", {"path": "sub"}), -32001, "delete a directory")
        check_eq(err["data"].get("syscall"), "unlink", "syscall")
        check_eq(app.close(), 0, "exit status")


@test
def fs_list():
    """filesystem: list_files sorts entries and names file, dir and other"""
    with App.start(FS) as app:
        app.ready()
        ws = app.workspace
        os.mkdir(os.path.join(ws, "d"))
        with open(os.path.join(ws, "b.txt"), "w") as f:
            f.write("12345")
        os.symlink("nowhere", os.path.join(ws, "a-link"))
        os.mkfifo(os.path.join(ws, "c-fifo"))
        got = result_of(app.call("list_files", {}), "list_files")
        check_eq(got.get("truncated"), False, "truncated")
        check_eq([(e["name"], e["type"]) for e in got["files"]],
                 [("a-link", "other"), ("b.txt", "file"), ("c-fifo", "other"), ("d", "dir")], "entries")
        check_eq(got["files"][1]["size"], 5, "size of b.txt")
        check_eq(result_of(app.call("list_files", {"path": "d"}), "list d"), {"files": [], "truncated": False},
                 "an empty directory")
        # A FIFO must not hang the app, nor be replaced: write_file only
        # replaces regular files (and symlinks).
        err = error_of(app.call("write_file", {"path": "c-fifo", "content": "x"}, timeout=5), -32000, "fifo")
        check_eq(err["message"], "`c-fifo` is not a regular file", "write to a FIFO")
        check(stat.S_ISFIFO(os.lstat(os.path.join(ws, "c-fifo")).st_mode), "the FIFO is left as it was")
        check_eq(app.close(), 0, "exit status")


@test
def fs_errors():
    """filesystem: ENOENT, ENOTDIR, EISDIR and too-large reads map to errors with errno data"""
    with App.start(FS) as app:
        app.ready()
        err = error_of(app.call("read_file", {"path": "missing.txt"}), -32001, "read a missing file")
        check_eq(err["data"], {"errno": errno.ENOENT, "errno_name": "ENOENT", "syscall": "open",
                               "path": "missing.txt"}, "data")
        err = error_of(app.call("list_files", {"path": "missing"}), -32001, "list a missing dir")
        check_eq(err["data"]["errno_name"], "ENOENT", "errno_name")
        with open(os.path.join(app.workspace, "f"), "w") as f:
            f.write("x")
        err = error_of(app.call("list_files", {"path": "f"}), -32001, "list a file")
        check_eq(err["data"]["errno_name"], "ENOTDIR", "errno_name")
        err = error_of(app.call("read_file", {"path": "."}), -32001, "read a directory")
        check_eq(err["data"]["errno_name"], "EISDIR", "errno_name")
        err = error_of(app.call("stat", {"path": "missing"}), -32001, "stat missing")
        check_eq(err["data"]["syscall"], "stat", "syscall")
        with open(os.path.join(app.workspace, "big"), "w") as f:
            f.write("y" * (512 * 1024))
        check_eq(len(result_of(app.call("read_file", {"path": "big"}), "512 KiB")["content"]), 512 * 1024,
                 "a file of exactly 512 KiB is read")
        with open(os.path.join(app.workspace, "big"), "a") as f:
            f.write("y")
        err = error_of(app.call("read_file", {"path": "big"}), -32000, "read 512 KiB + 1")
        check("larger than" in err["message"], "too large message", err)
        with open(os.path.join(app.workspace, "bin"), "wb") as f:
            f.write(b"\x00\x01\xff")
        err = error_of(app.call("read_file", {"path": "bin"}), -32000, "read binary")
        check("UTF-8" in err["message"], "binary message", err)
        err = error_of(app.call("write_file", {"path": "x"}), -32602, "missing content")
        check_eq(err.get("data"), {"path": "$.content", "reason": "required property is missing"}, "data")
        err = error_of(app.call("read_file", {"path": 5}), -32602, "path not a string")
        check_eq(err.get("data"), {"path": "$.path", "reason": "expected string"}, "data")
        check_eq(app.close(), 0, "exit status")


def fs_temporaries(ws):
    """The names in @ws that look like write_file's temporary files."""
    return sorted(n for n in os.listdir(ws) if n.startswith(".") and n.endswith(".tmp"))


@test
def fs_write_full_disk():
    """filesystem: write_file on a full disk fails naming the path and ENOSPC; the old file stays whole"""
    # The app runs in its own user and mount namespace (unshare -rm: as root
    # and as an unprivileged user) on a 64 KiB tmpfs mounted over its
    # workspace, which holds `f` (0640, "old content") and nothing else.
    # The new content, 256 KiB, cannot fit: the old code truncated `f` and
    # left part of the new content in it.
    ws = tempfile.mkdtemp(prefix="berth-app-full.")
    setup = ('mount -t tmpfs -o size=64k,mode=0755 berth-full "$PWD" && cd "$PWD" && '
             'printf "old content" >f && chmod 0640 f && exec "$0"')
    argv = ["unshare", "-rm", "sh", "-c", setup] + app_command(FS)
    try:
        with App(argv, workspace=ws) as app:
            app.ready()
            err = error_of(app.call("write_file", {"path": "f", "content": "n" * (256 * 1024)}), -32001, "full")
            check_eq(err["message"], "write `f`: No space left on device", "the message")
            check_eq(err["data"], {"errno": errno.ENOSPC, "errno_name": "ENOSPC", "syscall": "write",
                                   "path": "f"}, "data")
            check_eq(result_of(app.call("read_file", {"path": "f"}), "read f"), {"content": "old content"},
                     "the old content, whole")
            check_eq(result_of(app.call("stat", {"path": "f"}), "stat f")["mode"], "0640", "the old mode")
            files = result_of(app.call("list_files", {"path": "."}), "list")["files"]
            check_eq([e["name"] for e in files], ["f"], "no temporary file is left")
            # What fits is still written, and replaces the file.
            check_eq(result_of(app.call("write_file", {"path": "f", "content": "new"}), "small")["bytes"], 3, "fits")
            check_eq(result_of(app.call("read_file", {"path": "f"}), "read f"), {"content": "new"}, "replaced")
            check_eq(result_of(app.call("stat", {"path": "f"}), "stat f")["mode"], "0640", "the mode kept")
            check_eq(app.close(), 0, "exit status")
            check_eq(os.listdir(ws), [], "the tmpfs was the app's own: nothing in the workspace outside it")
    finally:
        shutil.rmtree(ws, ignore_errors=True)


@test
def fs_write_read_only():
    """filesystem: write_file refuses a file the app may not write (0444, another's 0644), as writing in place did"""
    # Replacing by rename needs only the directory's write permission: the
    # atomic write_file replaced a read-only file in a writable directory.
    # As root the app runs as nobody (root may write anything).
    ws = tempfile.mkdtemp(prefix="berth-app-ro.")
    argv = app_command(FS)
    if os.geteuid() == 0:
        os.chown(ws, 65534, 65534)
        argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + argv
    try:
        with App(argv, workspace=ws) as app:
            app.ready()
            check_eq(result_of(app.call("write_file", {"path": "ro.txt", "content": "old"}), "w")["bytes"], 3, "w")
            os.chmod(os.path.join(ws, "ro.txt"), 0o444)
            err = error_of(app.call("write_file", {"path": "ro.txt", "content": "new"}), -32001, "read-only")
            check_eq(err["message"], "open `ro.txt`: Permission denied", "the message")
            check_eq(err["data"], {"errno": errno.EACCES, "errno_name": "EACCES", "syscall": "open",
                                   "path": "ro.txt"}, "data")
            with open(os.path.join(ws, "ro.txt"), encoding="utf-8") as f:
                check_eq(f.read(), "old", "the read-only file keeps its content")
            check_eq(stat.S_IMODE(os.stat(os.path.join(ws, "ro.txt")).st_mode), 0o444, "and its mode")
            if os.geteuid() == 0:
                with open(os.path.join(ws, "root.txt"), "w", encoding="utf-8") as f:
                    f.write("root's")
                os.chmod(os.path.join(ws, "root.txt"), 0o644)
                err = error_of(app.call("write_file", {"path": "root.txt", "content": "x"}), -32001, "root's")
                check_eq(err["message"], "open `root.txt`: Permission denied", "another user's file")
                st = os.stat(os.path.join(ws, "root.txt"))
                check_eq((st.st_uid, open(os.path.join(ws, "root.txt"), encoding="utf-8").read()), (0, "root's"),
                         "another user's file is neither replaced nor taken over")
            check_eq(fs_temporaries(ws), [], "no temporary file is left")
            check_eq(app.close(), 0, "exit status")
    finally:
        shutil.rmtree(ws, ignore_errors=True)


@test
def fs_write_replaces():
    """filesystem: write_file replaces the file by rename: a new inode, the mode kept, new files 0666 less umask"""
    with App.start(FS) as app:
        app.ready()
        ws = app.workspace
        p = os.path.join(ws, "m")
        with open(p, "w") as f:
            f.write("old")
        os.chmod(p, 0o751)
        # A reader that opened the old file keeps reading the old content.
        with open(p) as old:
            ino = os.stat(p).st_ino
            check_eq(result_of(app.call("write_file", {"path": "m", "content": "new!"}), "w")["bytes"], 4, "bytes")
            check_eq(old.read(), "old", "a reader of the old file sees the old content, whole")
        st = os.lstat(p)
        check(st.st_ino != ino, "the file was replaced (rename), not written in place", (ino, st.st_ino))
        check_eq(oct(st.st_mode & 0o7777), oct(0o751), "the mode of the existing file is kept")
        with open(p) as f:
            check_eq(f.read(), "new!", "the new content")
        check_eq(result_of(app.call("write_file", {"path": "new", "content": ""}), "new")["bytes"], 0, "new file")
        umask = os.umask(0)
        os.umask(umask)
        check_eq(oct(os.stat(os.path.join(ws, "new")).st_mode & 0o7777), oct(0o666 & ~umask), "a new file's mode")
        check_eq(fs_temporaries(ws), [], "no temporary file is left")
        err = error_of(app.call("write_file", {"path": "missing/x", "content": "x"}), -32001, "no such dir")
        check_eq(err["message"], "open `missing/x`: No such file or directory", "the message")
        os.mkdir(os.path.join(ws, "d"))
        for path in ("d", "d/", "d/.", "."):
            err = error_of(app.call("write_file", {"path": path, "content": "x"}), -32001, "a directory " + path)
            check_eq(err["data"].get("errno_name"), "EISDIR", "write_file " + path)
        check(os.path.isdir(os.path.join(ws, "d")) and os.listdir(os.path.join(ws, "d")) == [], "d untouched")
        check_eq(fs_temporaries(ws), [], "no temporary file is left")
        check_eq(app.close(), 0, "exit status")


@test
def fs_write_symlinks():
    """filesystem: a symlink at the name or at the temporary's name is not written through"""
    outside = tempfile.mkdtemp(prefix="berth-app-outside.")
    try:
        with App.start(FS) as app:
            app.ready()
            ws = app.workspace
            victim = os.path.join(outside, "victim")
            with open(victim, "w") as f:
                f.write("outside")
            # A symlink at the name is replaced by the file.
            os.symlink(victim, os.path.join(ws, "link"))
            check_eq(result_of(app.call("write_file", {"path": "link", "content": "in"}), "link")["bytes"], 2, "b")
            with open(victim) as f:
                check_eq(f.read(), "outside", "the symlink's target is untouched")
            check(not os.path.islink(os.path.join(ws, "link")), "the symlink was replaced by the file")
            with open(os.path.join(ws, "link")) as f:
                check_eq(f.read(), "in", "the new file's content")
            # A symlink (also a dangling one) planted at the first temporary
            # name, `.NAME.PID.tmp`: O_EXCL refuses it, the next name is used.
            pid = app.proc.pid
            os.symlink(victim, os.path.join(ws, ".t.%d.tmp" % pid))
            os.symlink(os.path.join(outside, "new"), os.path.join(ws, ".u.%d.tmp" % pid))
            for name in ("t", "u"):
                check_eq(result_of(app.call("write_file", {"path": name, "content": "mine"}), name)["bytes"], 4, name)
                with open(os.path.join(ws, name)) as f:
                    check_eq(f.read(), "mine", "the file " + name)
            with open(victim) as f:
                check_eq(f.read(), "outside", "the planted symlink's target is untouched")
            check(not os.path.lexists(os.path.join(outside, "new")), "nothing made through the dangling symlink")
            check_eq(fs_temporaries(ws), [".t.%d.tmp" % pid, ".u.%d.tmp" % pid], "only the planted symlinks")
            check(all(os.path.islink(os.path.join(ws, n)) for n in fs_temporaries(ws)), "they are left as they were")
            check_eq(sorted(os.listdir(outside)), ["victim"], "nothing else outside")
            check_eq(app.close(), 0, "exit status")
    finally:
        shutil.rmtree(outside, ignore_errors=True)


@test
def fs_linkage():
    """filesystem: the binary links libc and jansson only (the SDK statically)"""
    out = subprocess.run(["ldd", os.path.join(FS, "filesystem")], capture_output=True, text=True, check=True).stdout
    libs = sorted(line.split()[0] for line in out.splitlines() if line.strip())
    libs = [lib for lib in libs if not lib.startswith(("linux-vdso", "/lib64/ld-linux", "ld-linux"))]
    check_eq(libs, ["libc.so.6", "libjansson.so.4"], "dynamic libraries")


# ---- notes -----------------------------------------------------------------

NOTES = os.path.join(APPS, "notes")


@test
def notes_persist():
    """notes: add, list, complete; the list survives a second app process"""
    ws = tempfile.mkdtemp(prefix="berth-notes.")
    try:
        with App.start(NOTES, workspace=ws) as app:
            app.ready()
            check_eq(result_of(app.call("list_notes", {}), "list"), {"notes": []}, "empty at first")
            check_eq(result_of(app.call("add_note", {"text": "buy milk"}), "add"), {"id": 1}, "first id")
            check_eq(result_of(app.call("add_note", {"text": "call \u00e9mile"}), "add"), {"id": 2}, "second id")
            check_eq(result_of(app.call("complete_note", {"id": 1}), "complete"), {"id": 1, "done": True}, "done")
            check_eq(app.close(), 0, "exit status")
        with App.start(NOTES, workspace=ws) as app:
            app.ready()
            check_eq(result_of(app.call("list_notes", {}), "list again"), {"notes": [
                {"id": 1, "text": "buy milk", "done": True},
                {"id": 2, "text": "call \u00e9mile", "done": False}]}, "notes in the second process")
            check_eq(result_of(app.call("add_note", {"text": "third"}), "add"), {"id": 3}, "ids go on")
            err = error_of(app.call("complete_note", {"id": 42}), -32000, "complete unknown")
            check("no note with id 42" in err["message"], "message", err)
            error_of(app.call("add_note", {"text": "  "}), -32602, "empty text")
            error_of(app.call("complete_note", {"id": "1"}), -32602, "string id")
            check_eq(app.close(), 0, "exit status")
        check_eq(sorted(os.listdir(ws)), [".notes.lock", "notes.json"], "only notes.json and its lock file in the workspace (no temp files)")
        with open(os.path.join(ws, "notes.json"), encoding="utf-8") as f:
            check_eq(len(json.load(f)["notes"]), 3, "notes.json holds the list")
    finally:
        shutil.rmtree(ws, ignore_errors=True)


@test
def notes_errors():
    """notes: a corrupt or unwritable store gives -32000 / -32001, not a crash"""
    with App.start(NOTES) as app:
        app.ready()
        with open(os.path.join(app.workspace, "notes.json"), "w") as f:
            f.write("{broken")
        err = error_of(app.call("list_notes", {}), -32000, "corrupt notes.json")
        check("notes.json" in err["message"], "message", err)
        os.unlink(os.path.join(app.workspace, "notes.json"))
        os.mkdir(os.path.join(app.workspace, "notes.json"))  # rename over a directory fails
        err = error_of(app.call("list_notes", {}), -32001, "notes.json is a directory")
        check_eq(err["data"]["errno_name"], "EISDIR", "errno_name")
        err = error_of(app.call("add_note", {"text": "x"}), -32001, "add with notes.json a directory")
        check_eq(sorted(os.listdir(app.workspace)), [".notes.lock", "notes.json"], "the temp file was removed (the lock file stays)")
        check_eq(app.close(), 0, "exit status")


# ---- code-interpreter ------------------------------------------------------

CI = os.path.join(APPS, "code-interpreter")


def pid_alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@test
def ci_languages():
    """code-interpreter: python, javascript and shell run in the workspace; exit codes pass through"""
    with App.start(CI) as app:
        app.ready()
        r = result_of(app.call("run_code", {"language": "python", "code": "import os\nprint(os.getcwd())"}), "py")
        check_eq((r["stdout"], r["stderr"], r["exit_code"], r["timed_out"]),
                 (os.path.realpath(app.workspace) + "\n", "", 0, False), "python")
        r = result_of(app.call("run_code", {"language": "javascript", "code": "console.log(6*7); process.exit(4)"}),
                      "js")
        check_eq((r["stdout"], r["exit_code"]), ("42\n", 4), "javascript")
        r = result_of(app.call("run_code", {"language": "shell", "code": "echo out; echo err >&2; exit 3"}), "sh")
        check_eq((r["stdout"], r["stderr"], r["exit_code"], r["stdout_truncated"]), ("out\n", "err\n", 3, False),
                 "shell")
        # The code gets neither the channel nor its variable.
        r = result_of(app.call("run_code", {"language": "shell",
                                            "code": "echo ${BERTH_RPC_FD:-unset}; ls /proc/self/fd"}), "fds")
        check_eq(r["stdout"].split(), ["unset", "0", "1", "2", "3"], "env and open fds (3 is ls's own dir)")
        error_of(app.call("run_code", {"language": "ruby", "code": "p 1"}), -32602, "unknown language")
        error_of(app.call("run_code", {"language": "shell", "code": "true", "timeout_ms": 60001}), -32602,
                 "timeout_ms over the maximum")
        check_eq(app.close(), 0, "exit status")


@test
def ci_timeout():
    """code-interpreter: a timeout kills the whole process group (timed_out, no leftover process)"""
    with App.start(CI) as app:
        app.ready()
        code = "sleep 300 & echo $! > bg.pid; echo started; sleep 300"
        t0 = time.monotonic()
        r = result_of(app.call("run_code", {"language": "shell", "code": code, "timeout_ms": 500}), "timeout")
        elapsed = time.monotonic() - t0
        check_eq((r["timed_out"], r["exit_code"], r.get("signal"), r["stdout"]), (True, 137, "SIGKILL", "started\n"),
                 "a timed-out run")
        check(0.5 <= elapsed < 3.0, "the call ends soon after the timeout", elapsed)
        with open(os.path.join(app.workspace, "bg.pid")) as f:
            bg = int(f.read())
        deadline = time.monotonic() + 2
        while pid_alive(bg) and time.monotonic() < deadline:
            time.sleep(0.05)
        check(not pid_alive(bg), "the background sleep %d was killed" % bg)
        check_eq(app.close(), 0, "exit status")


@test
def ci_leftovers():
    """code-interpreter: background processes die when the code exits, and do not hold the call"""
    with App.start(CI) as app:
        app.ready()
        code = "import subprocess\np = subprocess.Popen(['sleep', '300'])\nopen('bg.pid', 'w').write(str(p.pid))\n"
        t0 = time.monotonic()
        r = result_of(app.call("run_code", {"language": "python", "code": code, "timeout_ms": 20000}), "run")
        check_eq((r["timed_out"], r["exit_code"]), (False, 0), "result")
        check(time.monotonic() - t0 < 5, "the call does not wait for the background process")
        with open(os.path.join(app.workspace, "bg.pid")) as f:
            bg = int(f.read())
        deadline = time.monotonic() + 2
        while pid_alive(bg) and time.monotonic() < deadline:
            time.sleep(0.05)
        check(not pid_alive(bg), "the background sleep %d was killed" % bg)
        check_eq(app.close(), 0, "exit status")


@test
def ci_truncation():
    """code-interpreter: stdout and stderr are cut at 64 KiB each, marked"""
    with App.start(CI) as app:
        app.ready()
        code = "import sys\nsys.stdout.write('a' * 200000)\nsys.stderr.write('b' * 70000)\n"
        r = result_of(app.call("run_code", {"language": "python", "code": code}), "big output")
        check_eq(r["stdout"], "a" * 65536 + "\n[output truncated: %d more bytes]" % (200000 - 65536), "stdout")
        check_eq(r["stderr"], "b" * 65536 + "\n[output truncated: %d more bytes]" % (70000 - 65536), "stderr")
        check_eq((r["stdout_truncated"], r["stderr_truncated"], r["exit_code"]), (True, True, 0), "flags")
        r = result_of(app.call("run_code", {"language": "shell", "code": "head -c 65536 /dev/zero | tr '\\0' c"}),
                      "exactly 64 KiB")
        check_eq((r["stdout"], r["stdout_truncated"]), ("c" * 65536, False), "64 KiB is not truncated")
        check_eq(app.close(), 0, "exit status")


# ---- manifests -------------------------------------------------------------

def example_matches(example, answer):
    """Why an answer fails a manifest example, or None when it passes."""
    if "error" in example:
        if "error" not in answer:
            return "expected an error, got %r" % (answer,)
        want, err = example["error"], answer["error"]
        if isinstance(want, int):
            return None if err.get("code") == want else "expected code %d, got %r" % (want, err)
        if isinstance(want, str) and want.isupper() and want.startswith("E"):
            name = (err.get("data") or {}).get("errno_name")
            return None if name == want else "expected errno %s, got %r" % (want, err)
        return None if str(want) in err.get("message", "") else "expected %r in the message: %r" % (want, err)
    if "result" not in answer:
        return "expected a result, got %r" % (answer,)
    for k, v in (example.get("output") or {}).items():
        if answer["result"].get(k, "<missing>") != v:
            return "%s: expected %r, got %r" % (k, v, answer["result"].get(k, "<missing>"))
    return None


def needs_sandbox(example):
    """Examples whose input names an absolute path outside the workspace (the
    /etc/x denial) only behave as written inside berth's sandbox; run here,
    as root, they would write to the host."""
    return any(isinstance(v, str) and v.startswith("/") for v in example["input"].values())


@test
def manifests_examples():
    """manifests: every example passes, each alone in a fresh workspace and all in order in one"""
    import yaml  # Debian python3-yaml; run-apps.sh installs it
    ran = skipped = 0
    for name in ("filesystem", "notes", "code-interpreter"):
        d = os.path.join(APPS, name)
        with open(os.path.join(d, "berth.yml"), encoding="utf-8") as f:
            m = yaml.safe_load(f)
        check_eq(m.get("schema_version"), 1, "%s: schema_version" % name)
        check_eq(m.get("name"), name, "%s: name" % name)
        check_eq([e["name"] for e in m["exports"]], manifest_basics(d)[2], "%s: the driver reads the exports" % name)
        examples = [(e["name"], x) for e in m["exports"] for x in e.get("examples", [])]
        if name == "code-interpreter":
            # its one refusal, timeout_ms out of range, is the schema's now
            # (minimum/maximum: berth refuses it before the app sees it, so
            # no example may give it; run-apps-integration.sh checks that)
            t = m["exports"][0]["input"]["properties"]["timeout_ms"]
            check_eq((t.get("minimum"), t.get("maximum")), (1, 60000), "%s: timeout_ms's range" % name)
        else:
            check(any("error" in x for _, x in examples), "%s: an error example" % name)
        check(all(x for _, x in examples), "%s: examples" % name)
        runnable = [(n, x) for n, x in examples if not needs_sandbox(x)]
        skipped += len(examples) - len(runnable)
        for export, x in runnable:  # each alone
            with App.start(d) as app:
                app.ready()
                why = example_matches(x, app.call(export, x["input"], timeout=20))
                check(why is None, "%s %s %r (fresh workspace): %s" % (name, export, x["input"], why))
                ran += 1
        with App.start(d) as app:  # all in order
            app.ready()
            for export, x in runnable:
                why = example_matches(x, app.call(export, x["input"], timeout=20))
                check(why is None, "%s %s %r (in order): %s" % (name, export, x["input"], why))
    check(ran >= 15, "enough examples ran", ran)
    print("# %d examples passed; %d need the sandbox (an absolute path outside the workspace)" % (ran, skipped))


def sandbox_examples():
    """Run, in this process, the examples that need berth's sandbox; for
    `test_apps.py --sandbox-examples`, which the test below starts inside
    `berth run`.  Prints one line per example; returns the exit status."""
    import yaml
    ran = failed = 0
    for name in ("filesystem", "notes", "code-interpreter"):
        d = os.path.join(APPS, name)
        with open(os.path.join(d, "berth.yml"), encoding="utf-8") as f:
            m = yaml.safe_load(f)
        for e in m["exports"]:
            for x in e.get("examples", []):
                if not needs_sandbox(x):
                    continue
                with App.start(d) as app:
                    app.ready()
                    answer = app.call(e["name"], x["input"], timeout=20)
                why = example_matches(x, answer)
                ran += 1
                failed += why is not None
                print("%s %s %s %s: %s" % ("FAIL" if why else "pass", name, e["name"], json.dumps(x["input"]),
                                           why or json.dumps(answer)))
    print("%d ran, %d failed" % (ran, failed))
    return 1 if failed or not ran else 0


def sandbox_test(berth):
    def t_sandbox():
        ws = tempfile.mkdtemp(prefix="berth-apps-sandbox.")
        try:
            p = subprocess.run([berth, "run", "--ro", TOP + ":/src", "--timeout", "120s", "--",
                                PYTHON, "/src/tests/apps/test_apps.py", "--sandbox-examples"],
                               cwd=ws, capture_output=True, text=True, timeout=180)
        finally:
            shutil.rmtree(ws, ignore_errors=True)
        for line in (p.stdout + p.stderr).splitlines():
            print("#   " + line)
        check_eq(p.returncode, 0, "exit status of the examples inside berth run")
        check(" 0 failed" in p.stdout and "FAIL" not in p.stdout, "all sandbox examples passed", p.stdout)
    t_sandbox.__doc__ = "manifests: the examples that need the sandbox pass inside berth run"
    return t_sandbox


# ---- main ------------------------------------------------------------------

def main(argv):
    if argv[1:] == ["--sandbox-examples"]:
        return sandbox_examples()
    if len(argv) not in (2, 3):
        print("usage: test_apps.py C_FIXTURE_BINARY [BERTH_BINARY]\n"
              "       test_apps.py --sandbox-examples", file=sys.stderr)
        return 2
    subs = subjects(os.path.abspath(argv[1]))
    if len(argv) == 3:
        APP_TESTS.append(sandbox_test(os.path.abspath(argv[2])))
    for label, cmd, exports, sdk in subs:
        protocol_tests(label, cmd, exports, sdk)
    for label, cmd, _, _ in subs[:3]:  # the SDK fixtures
        sdk_tests(label, cmd)
    only = os.environ.get("BERTH_APPS_ONLY")  # a substring of test descriptions, for debugging
    tests = [t for t in TESTS + APP_TESTS if not only or only in (t.__doc__ or t.__name__)]
    print("1..%d" % len(tests))
    failed = 0
    for i, t in enumerate(tests, 1):
        desc = (t.__doc__ or t.__name__).strip().splitlines()[0]
        t0 = time.monotonic()
        try:
            t()
        except Exception as e:  # noqa: BLE001 - a test that raises failed
            failed += 1
            print("not ok %d - %s" % (i, desc))
            detail = str(e) if isinstance(e, Failed) else traceback.format_exc()
            for line in detail.splitlines():
                print("#   " + line[:2000])
        else:
            print("ok %d - %s (%.2fs)" % (i, desc, time.monotonic() - t0))
        sys.stdout.flush()
    print("# %d of %d failed" % (failed, len(tests)) if failed else "# all %d passed" % len(tests))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
