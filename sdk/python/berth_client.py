# SPDX-License-Identifier: MIT
"""berth_client - berth's resident apps as tools for an agent loop.

Standard library only (Python >= 3.8)::

    import berth_client

    with berth_client.Berth(["apps/notes"]) as berth:
        tools = berth.anthropic_tools()          # for the Messages API
        r = berth.call_tool("add_note", {"text": "milk"})
        print(r.is_error, r.text, r.output)

Calls go through ``berth mcp`` (a subprocess speaking MCP over stdio): the
apps boot in their sandboxes at their first call and stay up until close().
Tool definitions come from ``berth tools --format F`` (docs/sdk.md, "Tool
formats"): this module never rebuilds them, it only attaches the code that
calls the tool, so the formats have one source, berth's.
"""

import json
import os
import re
import subprocess
import threading

__all__ = ["Berth", "BerthError", "ToolResult", "FORMATS", "__version__"]

__version__ = "0.1.0"
PROTOCOL = "2025-06-18"
FORMATS = ("mcp", "openai", "anthropic", "openai-agents", "ai-sdk", "langchain")


class BerthError(Exception):
    """A call that could not give a tool result (berth gone, protocol error)."""

    def __init__(self, message, code=None, data=None):
        super().__init__(message)
        self.code = code
        self.data = data


class ToolResult:
    """The result of a tools/call: ``is_error``, ``text`` (what a model
    should read: the output as JSON, or the error with berth's capability
    denial explanation), ``output`` (the export's output object, or None)
    and ``content`` (the MCP content list)."""

    def __init__(self, result):
        self.is_error = result.get("isError") is True
        self.content = result.get("content") or []
        self.output = result.get("structuredContent")
        self.text = "\n".join(c.get("text", "") for c in self.content if c.get("type") == "text")

    def __repr__(self):
        return "ToolResult(is_error=%r, text=%r)" % (self.is_error, self.text)


_NAME_RE = re.compile(r"^name:[ \t]*([\"']?)([a-z0-9-]+)\1[ \t]*(#.*)?$", re.M)


def _manifest_name(d):
    """The manifest's top-level ``name:`` (app names are [a-z0-9-]), else the
    directory's base name; berth mcp checks it and says so when it differs."""
    try:
        with open(os.path.join(d, "berth.yml"), encoding="utf-8") as f:
            m = _NAME_RE.search(f.read())
    except (OSError, ValueError):
        m = None
    return m.group(2) if m else os.path.basename(os.path.abspath(d))


def _app_spec(app):
    if isinstance(app, (str, os.PathLike)):
        d = os.fspath(app)
        return _manifest_name(d), d
    if isinstance(app, dict) and isinstance(app.get("dir"), str):
        return app.get("name") or _manifest_name(app["dir"]), app["dir"]
    raise TypeError("an app is a directory or {'name': ..., 'dir': ...}")


class Berth:
    """A ``berth mcp`` session serving ``apps`` (directories, or dicts with
    ``name`` and ``dir``; the name defaults to the manifest's ``name:``).  ``berth``: the binary (default $BERTH or
    ``berth``); ``args``: more ``berth mcp`` flags (``["--warm"]``);
    ``env``: its environment; ``stderr``: where its log goes (default
    inherited)."""

    def __init__(self, apps, berth=None, args=(), env=None, stderr=None):
        self.apps = [_app_spec(a) for a in apps]
        if not self.apps:
            raise ValueError("Berth needs at least one app")
        self.berth = berth or os.environ.get("BERTH") or "berth"
        self.env = env
        cmd = [self.berth, "mcp"]
        for name, d in self.apps:
            cmd += ["--app", name, "--app-dir", d]
        cmd += list(args)
        try:
            self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                          env=env)
        except OSError as e:
            raise BerthError("could not start `%s`: %s" % (self.berth, e.strerror or e)) from None
        self._lock = threading.Lock()
        self._next = 1
        self._defs = {}
        r = self.request("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                        "clientInfo": {"name": "berth-sdk-client-py", "version": __version__}})
        self.server_info = r.get("serverInfo")
        self.protocol_version = r.get("protocolVersion")
        self._write({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _write(self, msg):
        try:
            self._proc.stdin.write(json.dumps(msg, separators=(",", ":")).encode() + b"\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            raise BerthError("berth mcp is gone (status %s)" % self._proc.poll()) from None

    def request(self, method, params=None):
        """A raw MCP request (one at a time); returns its result or raises BerthError."""
        with self._lock:
            rid = self._next
            self._next += 1
            self._write({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}})
            while True:
                line = self._proc.stdout.readline()
                if not line:
                    raise BerthError("berth mcp exited (status %s)" % self._proc.wait())
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(msg, dict) or "method" in msg or msg.get("id") != rid:
                    continue  # notifications (list_changed, log) and server requests
                if "error" in msg:
                    e = msg["error"]
                    raise BerthError(e.get("message"), e.get("code"), e.get("data"))
                return msg.get("result", {})

    def list_tools(self):
        """The tools as the MCP server lists them (every page)."""
        tools, cursor = [], None
        while True:
            r = self.request("tools/list", {"cursor": cursor} if cursor else {})
            tools += r.get("tools", [])
            cursor = r.get("nextCursor")
            if not cursor:
                return tools

    def call_tool(self, name, arguments=None):
        """Call a tool; returns a ToolResult.  Raises BerthError only when the
        call could not be made (unknown tool, berth gone)."""
        return ToolResult(self.request("tools/call", {"name": name, "arguments": arguments or {}}))

    def tool_definitions(self, fmt):
        """The definitions in a format of ``berth tools --format`` (mcp,
        openai, anthropic, openai-agents, ai-sdk, langchain), as berth
        prints them for these apps."""
        if fmt not in FORMATS:
            raise ValueError("unknown tool format %r: use %s" % (fmt, ", ".join(FORMATS)))
        if fmt not in self._defs:
            cmd = [self.berth, "tools"] + [d for _, d in self.apps] + ["--format", fmt]
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env, check=False)
            if p.returncode != 0:
                raise BerthError("berth tools failed: %s" % p.stderr.decode(errors="replace").strip())
            self._defs[fmt] = p.stdout.decode()
        return json.loads(self._defs[fmt])

    # ---- adapters ----------------------------------------------------

    def anthropic_tools(self):
        """Anthropic Messages API ``tools``."""
        return self.tool_definitions("anthropic")

    def openai_tools(self):
        """OpenAI Chat Completions ``tools``."""
        return self.tool_definitions("openai")

    def run_tool_use(self, block):
        """Run an Anthropic ``tool_use`` block; returns the ``tool_result`` block."""
        r = self.call_tool(block["name"], block.get("input") or {})
        return {"type": "tool_result", "tool_use_id": block["id"], "content": r.text, "is_error": r.is_error}

    def run_tool_call(self, call):
        """Run an OpenAI Chat Completions tool call; returns the ``tool`` message."""
        try:
            args = json.loads(call["function"].get("arguments") or "{}")
        except ValueError as e:
            return {"role": "tool", "tool_call_id": call["id"], "content": "the arguments are not JSON: %s" % e}
        r = self.call_tool(call["function"]["name"], args)
        return {"role": "tool", "tool_call_id": call["id"], "content": r.text}

    def openai_agents_tools(self, function_tool=None):
        """OpenAI Agents SDK tools.  Pass ``agents.FunctionTool``: each
        becomes FunctionTool(name, description, params_json_schema,
        on_invoke_tool, strict_json_schema=False).  Without it: the
        definitions with an ``on_invoke_tool(ctx, input_json)`` coroutine
        function.  It returns the result text (an error's text when the call
        failed: the model reads it)."""
        out = []
        for d in self.tool_definitions("openai-agents"):
            invoke = self._agents_invoke(d["name"])
            if function_tool is None:
                out.append(dict(d, on_invoke_tool=invoke))
            else:
                out.append(function_tool(name=d["name"], description=d["description"],
                                         params_json_schema=d["parameters"], on_invoke_tool=invoke,
                                         strict_json_schema=d["strict"]))
        return out

    def _agents_invoke(self, name):
        async def invoke(_ctx, input_json):
            try:
                args = json.loads(input_json) if input_json else {}
            except ValueError as e:
                return "the arguments are not JSON: %s" % e
            return self.call_tool(name, args).text
        return invoke

    def langchain_tools(self, structured_tool=None):
        """LangChain (Python) tools.  Pass
        ``langchain_core.tools.StructuredTool``: each becomes
        StructuredTool.from_function(func, name=, description=,
        args_schema=<the JSON Schema>).  Without it: the definitions with a
        ``func(**input)`` that returns the result text and raises
        RuntimeError when the call failed."""
        out = []
        for d in self.tool_definitions("langchain"):
            func = self._langchain_func(d["name"])
            if structured_tool is None:
                out.append(dict(d, func=func))
            else:
                out.append(structured_tool.from_function(func, name=d["name"], description=d["description"],
                                                         args_schema=d["schema"]))
        return out

    def _langchain_func(self, name):
        def func(**kwargs):
            r = self.call_tool(name, kwargs)
            if r.is_error:
                raise RuntimeError(r.text)
            return r.text
        return func

    def close(self):
        """End the session: berth mcp stops every app and exits."""
        if self._proc.poll() is not None:
            return
        try:
            self._proc.stdin.close()
        except OSError:
            pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.terminate()
            self._proc.wait()
        if self._proc.stdout:
            self._proc.stdout.close()
