# SPDX-License-Identifier: MIT
"""berth_app - the Python SDK for berth resident apps.

A resident app runs inside a berth sandbox and serves *exports* to the berth
supervisor over the JSON-RPC 2.0 channel of docs/protocol.md.  This module
does the protocol; an app only writes functions::

    import berth_app

    app = berth_app.App()

    @app.export("add")
    def add(a, b=0):
        return {"sum": a + b}

    app.run()

Handlers take the call's input object as keyword arguments (``{"a": 1}``
calls ``add(a=1)``) and return the output object as a ``dict`` (``None``
means ``{}``).  To fail a call, raise:

- ``berth_app.AppError("message")`` -> error -32000 (the export failed);
- an ``OSError`` -> error -32001 with ``data`` = ``{errno, errno_name,
  syscall, path}``; wrap it as ``raise berth_app.os_error(e, "open", path)``
  to name the system call (the path defaults to ``e.filename``);
- ``berth_app.InvalidParams("$.path", "expected string")`` -> -32602;
- anything else -> -32603 with a one-line message; the traceback goes to
  stderr (the app's log), never to the caller.

Standard library only; Python 3.8 or later.  The SDK is sequential: one call
at a time, in order.
"""

import errno as _errno
import inspect
import json
import os
import re
import sys
import traceback

__all__ = ["App", "AppError", "InvalidParams", "os_error", "errno_name", "MAX_MESSAGE", "__version__"]

__version__ = "0.1.0"

#: The largest protocol message in either direction, newline included.
MAX_MESSAGE = 1048576

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
EXPORT_FAILED = -32000
SYSCALL_FAILED = -32001
CANCELLED = -32800

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

_NAME_RE = re.compile(r"[a-z][a-z0-9_]{0,127}\Z")  # the manifest's rule
_LOG_MAX = 64 * 1024
_MESSAGE_MAX = 16 * 1024
_READ_CHUNK = 256 * 1024

# errno.errorcode keeps the last alias Python defined; use the names glibc's
# strerrorname_np() gives, as the C SDK does.
_ALIASES = {"EWOULDBLOCK": "EAGAIN", "ENOTSUP": "EOPNOTSUPP", "EDEADLOCK": "EDEADLK"}


class AppError(Exception):
    """Fail the current call with ``code`` (default -32000, the export
    failed), ``message`` and optional JSON-serialisable ``data``."""

    def __init__(self, message, data=None, code=EXPORT_FAILED):
        super().__init__(message)
        self.message = str(message)
        self.data = data
        self.code = code


class InvalidParams(AppError):
    """Fail the current call with -32602: the input is not what the export
    takes.  ``path`` points into the input (``"$.items[2]"``, ``"$"`` for
    the whole input), ``reason`` says what is wrong."""

    def __init__(self, path, reason):
        super().__init__("invalid params: %s: %s" % (path, reason), {"path": path, "reason": reason},
                         INVALID_PARAMS)


def errno_name(number):
    """The symbolic name of an errno value ("ENOENT"), or None."""
    name = _errno.errorcode.get(number)
    return _ALIASES.get(name, name)


def os_error(exc, syscall, path=None):
    """Name the system call (and path) an ``OSError`` came from, for the
    -32001 answer; returns ``exc`` so that you can ``raise os_error(e, "open")``.

    ``syscall`` is the call's name as in section 2 of the manual; ``path``
    defaults to ``exc.filename``."""
    exc.berth_syscall = syscall
    if path is not None:
        exc.berth_path = path
    return exc


def _text(value):
    """A str for JSON from a str, bytes or os.PathLike."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _one_line(text, limit=_MESSAGE_MAX):
    text = " ".join(str(text).split("\n"))
    return text[:limit]


def _os_error_answer(exc):
    syscall = getattr(exc, "berth_syscall", None)
    path = getattr(exc, "berth_path", None)
    if path is None and isinstance(exc.filename, (str, bytes, os.PathLike)):
        path = exc.filename
    data = {"errno": exc.errno}
    name = errno_name(exc.errno)
    if name is not None:
        data["errno_name"] = name
    if syscall is not None:
        data["syscall"] = str(syscall)
    if path is not None:
        data["path"] = _text(path)
    desc = exc.strerror or os.strerror(exc.errno)
    if syscall is not None and path is not None:
        message = "%s `%s`: %s" % (syscall, data["path"], desc)
    elif syscall is not None or path is not None:
        message = "%s: %s" % (syscall if syscall is not None else data["path"], desc)
    else:
        message = desc
    return SYSCALL_FAILED, _one_line(message), data


class _Closed(Exception):
    """The peer went away."""


class App:
    """A resident app: register exports with :meth:`export`, then :meth:`run`."""

    def __init__(self):
        self._exports = {}
        self._fd = -1
        self._running = False

    def export(self, name=None):
        """Decorator registering a function as the export ``name`` (default:
        the function's name).  Names follow the manifest's rule: a lowercase
        letter, then lowercase letters, digits and ``_`` (at most 128).
        Exports are announced in registration order."""

        def register(fn):
            export_name = fn.__name__ if name is None else name
            if not isinstance(export_name, str) or not _NAME_RE.match(export_name):
                raise ValueError("invalid export name %r: use a lowercase letter, then lowercase letters, "
                                 "digits and _" % (export_name,))
            if export_name in self._exports:
                raise ValueError("export %r is already registered" % export_name)
            if self._running:
                raise RuntimeError("exports must be registered before run()")
            self._exports[export_name] = fn
            return fn

        if callable(name):  # used bare: @app.export
            fn, name = name, None
            return register(fn)
        return register

    def log(self, message, level="info"):
        """Send a structured log line (berth/log) at an RFC 5424 ``level``.
        Before run() connects, the line goes to stderr instead.  Messages
        longer than 64 KiB are cut."""
        if level not in LEVELS:
            raise ValueError("unknown log level %r" % (level,))
        message = str(message)[:_LOG_MAX]
        if self._fd < 0:
            print("%s: %s" % (level, message), file=sys.stderr, flush=True)
            return
        self._send({"jsonrpc": "2.0", "method": "berth/log", "params": {"level": level, "message": message}})

    # ---- the loop ----------------------------------------------------

    def run(self):
        """Serve calls until berth closes the channel, then return (the app
        should exit with status 0).

        The channel is the descriptor in ``BERTH_RPC_FD``.  Exports are
        announced with berth/ready, then requests are served one at a time.
        Lines that are not JSON get -32700; JSON that is not a JSON-RPC 2.0
        request gets -32600; a line over 1 MiB gets -32600 as soon as the
        limit is passed and its rest is skipped (never buffered); unknown
        methods get -32601.  Notifications are not answered: berth/cancel is
        ignored, because the call it names is over by the time this
        sequential loop reads it.  Blank lines are skipped.

        Raises SystemExit(1) with a one-line reason when the channel is
        missing or fails."""
        if self._running:
            raise RuntimeError("run() is already running")
        self._running = True
        value = os.environ.get("BERTH_RPC_FD", "")
        if not value.isdigit():
            raise SystemExit("berth-app: BERTH_RPC_FD is %s; resident apps are started by berth"
                             % ("not set" if not value else "invalid: `%s`" % value))
        fd = int(value)
        try:
            # Not inherited: programs the app runs must not speak for it.
            os.set_inheritable(fd, False)
            os.set_blocking(fd, True)
        except OSError as e:
            raise SystemExit("berth-app: BERTH_RPC_FD `%s`: %s" % (value, e.strerror))
        self._fd = fd
        try:
            self._send({"jsonrpc": "2.0", "method": "berth/ready",
                        "params": {"exports": list(self._exports), "sdk": "python/" + __version__}})
            for line in self._lines():
                if line is None:
                    self._answer_error(None, INVALID_REQUEST,
                                       "invalid request: message larger than %d bytes" % MAX_MESSAGE)
                else:
                    self._serve(line)
        except _Closed:
            pass
        except OSError as e:
            raise SystemExit("berth-app: the channel failed: %s" % (e.strerror or e))
        finally:
            self._fd = -1
            try:
                os.close(fd)
            except OSError:
                pass

    def _lines(self):
        """Yield each line without its newline, or None once for a line over
        the limit (whose rest is then skipped)."""
        buf = bytearray()
        start = scanned = 0
        discarding = eof = False
        while True:
            if discarding:
                i = buf.find(b"\n", start)
                if i >= 0:
                    discarding = False
                    start = scanned = i + 1
                    continue
                del buf[:]
                start = scanned = 0
            else:
                i = buf.find(b"\n", scanned)
                if i >= 0:
                    line = bytes(buf[start:i])
                    start = scanned = i + 1
                    yield line
                    continue
                scanned = len(buf)
                if len(buf) - start >= MAX_MESSAGE:
                    discarding = True
                    del buf[:]
                    start = scanned = 0
                    yield None
                    continue
            if eof:
                if not discarding and len(buf) > start:
                    line = bytes(buf[start:])
                    start = scanned = len(buf)
                    yield line
                return
            if start > 0:
                del buf[:start]
                scanned -= start
                start = 0
            want = min(_READ_CHUNK, MAX_MESSAGE - len(buf))
            try:
                chunk = os.read(self._fd, want)
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                eof = True
            buf += chunk

    def _serve(self, line):
        if not line.strip(b" \t\r\n"):
            return
        try:
            msg = json.loads(line.decode("utf-8"), parse_constant=_reject_constant)
        except (ValueError, RecursionError) as e:
            self._answer_error(None, PARSE_ERROR, "parse error: %s" % _one_line(e, 200))
            return
        if not isinstance(msg, dict):
            self._answer_error(None, INVALID_REQUEST, "invalid request: not a JSON object")
            return
        has_id = "id" in msg
        rid = msg.get("id")
        method = msg.get("method")
        if has_id and not (rid is None or isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool))):
            self._answer_error(None, INVALID_REQUEST, "invalid request: `id` must be an integer")
        elif msg.get("jsonrpc") != "2.0":
            self._answer_error(rid, INVALID_REQUEST, 'invalid request: `jsonrpc` must be "2.0"')
        elif not isinstance(method, str):
            self._answer_error(rid, INVALID_REQUEST, "invalid request: `method` must be a string")
        elif not has_id:
            pass  # a notification: berth/cancel or unknown (see run())
        elif method not in self._exports:
            self._answer_error(rid, METHOD_NOT_FOUND, "no such export `%s`" % _one_line(method, 200))
        elif "params" in msg and not isinstance(msg["params"], dict):
            self._answer_error(rid, INVALID_PARAMS, "invalid params: `params` must be an object",
                               {"path": "$", "reason": "expected object"})
        else:
            self._call(rid, method, msg.get("params", {}))

    def _call(self, rid, name, params):
        fn = self._exports[name]
        try:
            _check_params(fn, params)
            result = fn(**params)
        except AppError as e:
            self._answer_error(rid, e.code, _one_line(e.message), e.data)
            return
        except OSError as e:
            if e.errno is None:
                self._answer_error(rid, EXPORT_FAILED, _one_line(e))
            else:
                self._answer_error(rid, *_os_error_answer(e))
            return
        except Exception as e:  # noqa: BLE001 - any bug in a handler becomes -32603
            traceback.print_exc(file=sys.stderr)
            sys.stderr.flush()
            self._answer_error(rid, INTERNAL_ERROR, _one_line("%s: %s" % (type(e).__name__, e), 1000))
            return
        if result is None:
            result = {}
        if not isinstance(result, dict):
            self._answer_error(rid, INTERNAL_ERROR,
                               "export `%s` returned %s, not a dict" % (name, type(result).__name__))
            return
        self._answer(rid, result)

    # ---- writing -----------------------------------------------------

    def _answer(self, rid, result):
        try:
            line = _encode({"jsonrpc": "2.0", "id": rid, "result": result})
        except (TypeError, ValueError, RecursionError) as e:
            self._answer_error(rid, INTERNAL_ERROR, "result is not JSON: %s" % _one_line(e, 1000))
            return
        if len(line) > MAX_MESSAGE:
            self._answer_error(rid, INTERNAL_ERROR,
                               "result too large: %d bytes, the limit is %d" % (len(line), MAX_MESSAGE))
            return
        self._write(line)

    def _answer_error(self, rid, code, message, data=None):
        error = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        try:
            line = _encode({"jsonrpc": "2.0", "id": rid, "error": error})
        except (TypeError, ValueError, RecursionError) as e:
            line = _encode({"jsonrpc": "2.0", "id": rid, "error": {
                "code": INTERNAL_ERROR, "message": "error data is not JSON: %s" % _one_line(e, 1000)}})
        if len(line) > MAX_MESSAGE:
            line = _encode({"jsonrpc": "2.0", "id": rid, "error": {
                "code": INTERNAL_ERROR,
                "message": "error too large: %d bytes, the limit is %d" % (len(line), MAX_MESSAGE)}})
        self._write(line)

    def _send(self, msg):
        line = _encode(msg)
        if len(line) > MAX_MESSAGE:
            raise ValueError("message too large: %d bytes" % len(line))
        self._write(line)

    def _write(self, data):
        view = memoryview(data)
        while view:
            try:
                n = os.write(self._fd, view)
            except (BrokenPipeError, ConnectionResetError):
                raise _Closed() from None
            view = view[n:]


def _reject_constant(name):
    raise ValueError("%s is not JSON" % name)


_ESCAPE_RE = re.compile(r"\\(u0000|.)")


def _encode(msg):
    # ensure_ascii=False keeps text as UTF-8; a lone surrogate (from an
    # undecodable file name) cannot be UTF-8 and becomes "?".
    text = json.dumps(msg, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    # Strings never carry U+0000 (docs/protocol.md): the escape \u0000
    # becomes \ufffd.  Backslashes only occur in escapes, so matching escape
    # by escape from the left finds exactly the NULs.
    if "\\u0000" in text:
        text = _ESCAPE_RE.sub(lambda m: "\\ufffd" if m.group(1) == "u0000" else m.group(0), text)
    return text.encode("utf-8", "replace") + b"\n"


def _check_params(fn, params):
    """Raise InvalidParams when the input's properties do not fit fn's
    keyword parameters, before calling it."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    accepted = set()
    var_kw = False
    for p in sig.parameters.values():
        if p.kind == p.VAR_KEYWORD:
            var_kw = True
        elif p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            accepted.add(p.name)
            if p.default is p.empty and p.name not in params:
                raise InvalidParams("$.%s" % p.name, "required property is missing")
    if not var_kw:
        for key in params:
            if key not in accepted:
                raise InvalidParams("$.%s" % key, "unexpected property")
