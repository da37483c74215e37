#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A scripted model server for the real agent CLIs (python3 standard library only).

  mock-model.py --script FILE --log FILE --bodies FILE --port-file FILE [--bind ADDR]
  mock-model.py --origin TEXT --log FILE --port-file FILE [--bind ADDR]

It speaks enough of two APIs for Claude Code and Codex to run real turns:

  Anthropic Messages   POST /v1/messages (streaming SSE or a whole message),
                       POST /v1/messages/count_tokens, GET /v1/models[/ID],
                       HEAD/GET anything else below / (200, empty JSON)
  OpenAI Responses     POST /v1/responses (streaming SSE), GET /v1/models

The script (JSON) names scenarios; a prompt selects one with the marker
`[scenario:NAME]` in a user message.  Each scenario is a list of steps; the
model's n-th answer in a conversation is step n, where n is the number of this
scenario's tool results the client has already sent back.  After the last step
the model answers with the text "scenario NAME finished".  A step is one of

  {"bash": "COMMAND"}            a shell command, through the tool the client
                                 declared for it (Claude: Bash; Codex:
                                 exec_command, shell_command or shell)
  {"tool": "NAME", "input": {}}  exactly this tool call (an MCP tool, Write ...);
                                 a NAME ending in "*" matches the first declared
                                 tool with that prefix.  A tool the client did
                                 not declare is not called: the answer is then
                                 a text naming the problem
  {"text": "TEXT"}               a plain answer, ending the turn

Codex offers an MCP server's tools in a namespace (mcp__SERVER); the script
names such a tool mcp__SERVER__TOOL, and the call carries "namespace" and
"name" apart, as Codex expects.

Tool call ids are deterministic: toolu_NAME_N (Anthropic) and call_NAME_N
(Responses), so the test finds the result of step N of scenario NAME.

Requests without a marker, and requests that declare no tools (side calls
that quote the prompt), get the answer "ok" (step null in the log).  Every
request is one JSON line in --log:

  {"api", "method", "path", "scenario", "step", "emitted" (the tool call or
   text sent), "tools" (names the client declared), "results" (every tool
   result in the request: {"id", "output", "is_error"}), "model", "stream",
   "key" (the x-api-key or Authorization header)}

and its raw body is appended to --bodies (for "this secret never reached the
model" checks).

With --origin, it is instead a plain web server (a host the sandbox may or
may not reach): every request is logged as one line "METHOD PATH HOST" and
answered 200 with TEXT.

The port is written to --port-file once the socket listens.
"""
import argparse
import http.server
import json
import os
import re
import socketserver
import sys
import threading

MARKER = re.compile(r"\[scenario:([A-Za-z0-9_-]+)\]")
SHELL_TOOLS = ("Bash", "exec_command", "shell_command", "shell", "local_shell")


class Recorder:
    def __init__(self, log, bodies):
        self.lock = threading.Lock()
        self.log = open(log, "a", buffering=1)
        self.bodies = open(bodies, "ab")

    def record(self, entry, body):
        with self.lock:
            self.log.write(json.dumps(entry, sort_keys=True) + "\n")
            self.log.flush()
            self.bodies.write(body + b"\n")
            self.bodies.flush()


def text_of(content):
    """All text in a message content (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    out = []
    if isinstance(content, list):
        for b in content:
            if isinstance(b, dict):
                for k in ("text", "input_text"):
                    if isinstance(b.get(k), str):
                        out.append(b[k])
            elif isinstance(b, str):
                out.append(b)
    return "\n".join(out)


def scenario_of(user_texts):
    """The scenario named in the LAST user message that names one."""
    for t in reversed(user_texts):
        m = MARKER.findall(t)
        if m:
            return m[-1]
    return None


def pick_tool(step, declared):
    """(tool name, input object) for a step, given the client's tool names."""
    if "bash" in step:
        for name in SHELL_TOOLS:
            if name in declared:
                cmd = step["bash"]
                if name == "Bash":
                    return name, {"command": cmd, "description": "scripted step"}
                if name == "exec_command":
                    return name, {"cmd": cmd, "yield_time_ms": 10000}
                if name == "shell_command":
                    return name, {"command": cmd}
                return name, {"command": ["bash", "-lc", cmd]}
        return None, {"error": "the client declared no shell tool", "declared": declared}
    name = step["tool"]
    if name.endswith("*"):
        name = next((d for d in declared if d.startswith(name[:-1])), None)
    elif name not in declared:
        name = None
    if name is None:  # the model can only call what the client offered
        return None, {"error": "no declared tool matches " + step["tool"], "declared": declared}
    return name, step.get("input", {})


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "berth-mock-model/1"

    def log_message(self, fmt, *args):  # the JSON log is the record
        pass

    # -- plumbing
    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(n) if n else b""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                data += self.rfile.read(size)
                self.rfile.readline()
        return data

    def send_json(self, code, obj):
        raw = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.send_header("request-id", "req_mock")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(raw)

    def start_sse(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.send_header("request-id", "req_mock")
        self.end_headers()
        self.close_connection = True

    def sse(self, event, data):
        self.wfile.write(("event: %s\ndata: %s\n\n" % (event, json.dumps(data))).encode())
        self.wfile.flush()

    def record(self, entry, raw):
        entry.update(method=self.command, path=self.path,
                     key=self.headers.get("x-api-key") or self.headers.get("Authorization"))
        self.server.recorder.record(entry, raw)

    # -- routes
    def do_HEAD(self):
        self.record({"api": None}, b"")
        self.send_json(200, {})

    def do_GET(self):
        self.record({"api": None}, b"")
        path = self.path.split("?")[0].rstrip("/")
        if path.endswith("/models"):
            models = [{"id": m, "type": "model", "display_name": m, "created_at": "2025-01-01T00:00:00Z",
                       "object": "model", "created": 1735689600, "owned_by": "mock"}
                      for m in ("mock-model", "claude-sonnet-4-5", "gpt-5")]
            return self.send_json(200, {"data": models, "object": "list", "models": models,
                                        "has_more": False, "first_id": "mock-model", "last_id": "gpt-5"})
        if "/models/" in path:
            m = path.rsplit("/", 1)[1]
            return self.send_json(200, {"id": m, "type": "model", "display_name": m,
                                        "created_at": "2025-01-01T00:00:00Z"})
        self.send_json(200, {})

    def do_POST(self):
        raw = self.body()
        try:
            req = json.loads(raw or b"{}")
        except ValueError:
            self.record({"api": None, "error": "body is not JSON"}, raw)
            return self.send_json(400, {"type": "error", "error": {"type": "invalid_request_error",
                                                                   "message": "body is not JSON"}})
        path = self.path.split("?")[0]
        if path.endswith("/messages/count_tokens"):
            self.record({"api": "anthropic", "count_tokens": True}, raw)
            return self.send_json(200, {"input_tokens": max(1, len(raw) // 4)})
        if path.endswith("/messages"):
            return self.anthropic(req, raw)
        if path.endswith("/responses"):
            return self.openai_responses(req, raw)
        self.record({"api": None, "error": "unknown path"}, raw)
        self.send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": "no " + path}})

    def plan(self, api, user_texts, results, declared):
        """The scenario, step number and what to emit: ("tool", name, input) or ("text", text)."""
        scen = scenario_of(user_texts)
        script = self.server.script
        if scen is None:
            return None, None, ("text", "ok")
        if not declared:  # a side call (a title, a summary): it cannot take a tool call
            return scen, None, ("text", "ok")
        steps = script.get(scen)
        if steps is None:
            return scen, None, ("text", "unknown scenario " + scen)
        prefix = ("toolu_%s_" if api == "anthropic" else "call_%s_") % scen
        n = sum(1 for r in results if str(r["id"]).startswith(prefix))
        if n >= len(steps):
            return scen, n, ("text", "scenario %s finished" % scen)
        step = steps[n]
        if "text" in step:
            return scen, n, ("text", step["text"])
        name, inp = pick_tool(step, declared)
        if name is None:
            return scen, n, ("text", json.dumps(inp))
        return scen, n, ("tool", name, inp, prefix + str(n))

    # -- Anthropic Messages
    def anthropic(self, req, raw):
        msgs = req.get("messages") or []
        user_texts, results = [], []
        for m in msgs:
            if m.get("role") != "user":
                continue
            user_texts.append(text_of(m.get("content")))
            if isinstance(m.get("content"), list):
                for b in m["content"]:
                    if isinstance(b, dict) and b.get("type") == "tool_result":
                        results.append({"id": b.get("tool_use_id"), "output": text_of(b.get("content")),
                                        "is_error": bool(b.get("is_error"))})
        declared = [t.get("name") for t in req.get("tools") or [] if isinstance(t, dict)]
        scen, n, what = self.plan("anthropic", user_texts, results, declared)
        model = req.get("model") or "mock-model"
        self.record({"api": "anthropic", "scenario": scen, "step": n, "emitted": list(what),
                     "tools": declared, "results": results, "model": model,
                     "stream": bool(req.get("stream"))}, raw)
        if what[0] == "tool":
            block = {"type": "tool_use", "id": what[3], "name": what[1], "input": what[2]}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": what[1]}
            stop = "end_turn"
        usage = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        msg = {"id": "msg_mock", "type": "message", "role": "assistant", "model": model,
               "content": [block], "stop_reason": stop, "stop_sequence": None, "usage": usage}
        if not req.get("stream"):
            return self.send_json(200, msg)
        self.start_sse()
        self.sse("message_start", {"type": "message_start",
                                   "message": dict(msg, content=[], stop_reason=None,
                                                   usage=dict(usage, output_tokens=1))})
        if block["type"] == "text":
            self.sse("content_block_start", {"type": "content_block_start", "index": 0,
                                             "content_block": {"type": "text", "text": ""}})
            self.sse("ping", {"type": "ping"})
            self.sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                             "delta": {"type": "text_delta", "text": block["text"]}})
        else:
            self.sse("content_block_start", {"type": "content_block_start", "index": 0,
                                             "content_block": dict(block, input={})})
            self.sse("ping", {"type": "ping"})
            js = json.dumps(block["input"])
            half = len(js) // 2  # two deltas: the client must join partial JSON
            for part in (js[:half], js[half:]):
                self.sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                 "delta": {"type": "input_json_delta", "partial_json": part}})
        self.sse("content_block_stop", {"type": "content_block_stop", "index": 0})
        self.sse("message_delta", {"type": "message_delta",
                                   "delta": {"stop_reason": stop, "stop_sequence": None},
                                   "usage": {"output_tokens": 5}})
        self.sse("message_stop", {"type": "message_stop"})

    # -- OpenAI Responses
    def openai_responses(self, req, raw):
        items = req.get("input")
        if isinstance(items, str):
            items = [{"type": "message", "role": "user", "content": items}]
        user_texts, results = [], []
        for it in items or []:
            if not isinstance(it, dict):
                continue
            if it.get("role") == "user" and it.get("type", "message") == "message":
                user_texts.append(text_of(it.get("content")))
            if it.get("type") in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
                out = it.get("output")
                if isinstance(out, dict):
                    out = out.get("content", json.dumps(out))
                elif isinstance(out, list):
                    out = text_of(out)
                results.append({"id": it.get("call_id"), "output": out, "is_error": None})
        declared, in_namespace = [], {}
        for t in req.get("tools") or []:
            if not isinstance(t, dict):
                continue
            declared.append(t.get("name") or t.get("type"))
            # Codex offers an MCP server's tools as {"type": "namespace", "name": "mcp__SERVER",
            # "tools": [...]}: the script names them NAMESPACE__TOOL, the call carries both.
            if t.get("type") == "namespace":
                for u in t.get("tools") or []:
                    if isinstance(u, dict) and u.get("name"):
                        full = "%s__%s" % (t.get("name"), u["name"])
                        declared.append(full)
                        in_namespace[full] = (t.get("name"), u["name"])
        scen, n, what = self.plan("responses", user_texts, results, declared)
        model = req.get("model") or "mock-model"
        self.record({"api": "responses", "scenario": scen, "step": n, "emitted": list(what),
                     "tools": declared, "results": results, "model": model,
                     "stream": bool(req.get("stream"))}, raw)
        rid = "resp_mock_%d" % self.server.next_id()
        if what[0] == "tool":
            item = {"type": "function_call", "id": "fc_" + what[3], "call_id": what[3], "name": what[1],
                    "arguments": json.dumps(what[2]), "status": "completed"}
            if what[1] in in_namespace:
                item["namespace"], item["name"] = in_namespace[what[1]]
        else:
            item = {"type": "message", "id": "msg_" + rid, "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": what[1], "annotations": []}]}
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
        resp = {"id": rid, "object": "response", "created_at": 1735689600, "model": model,
                "status": "in_progress", "output": []}
        if not req.get("stream", True):
            return self.send_json(200, dict(resp, status="completed", output=[item], usage=usage))
        self.start_sse()
        seq = iter(range(1000))
        self.sse("response.created", {"type": "response.created", "sequence_number": next(seq), "response": resp})
        added = dict(item, arguments="") if item["type"] == "function_call" else dict(item, content=[])
        self.sse("response.output_item.added", {"type": "response.output_item.added", "sequence_number": next(seq),
                                                "output_index": 0, "item": added})
        if item["type"] == "function_call":
            self.sse("response.function_call_arguments.delta",
                     {"type": "response.function_call_arguments.delta", "sequence_number": next(seq),
                      "item_id": item["id"], "output_index": 0, "delta": item["arguments"]})
            self.sse("response.function_call_arguments.done",
                     {"type": "response.function_call_arguments.done", "sequence_number": next(seq),
                      "item_id": item["id"], "output_index": 0, "arguments": item["arguments"]})
        else:
            self.sse("response.content_part.added",
                     {"type": "response.content_part.added", "sequence_number": next(seq), "item_id": item["id"],
                      "output_index": 0, "content_index": 0,
                      "part": {"type": "output_text", "text": "", "annotations": []}})
            self.sse("response.output_text.delta",
                     {"type": "response.output_text.delta", "sequence_number": next(seq), "item_id": item["id"],
                      "output_index": 0, "content_index": 0, "delta": what[1]})
            self.sse("response.output_text.done",
                     {"type": "response.output_text.done", "sequence_number": next(seq), "item_id": item["id"],
                      "output_index": 0, "content_index": 0, "text": what[1]})
        self.sse("response.output_item.done", {"type": "response.output_item.done", "sequence_number": next(seq),
                                               "output_index": 0, "item": item})
        self.sse("response.completed", {"type": "response.completed", "sequence_number": next(seq),
                                        "response": dict(resp, status="completed", output=[item], usage=usage)})


class Origin(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def answer(self):
        with self.server.lock:
            self.server.log.write("%s %s %s\n" % (self.command, self.path, self.headers.get("Host", "-")))
            self.server.log.flush()
        raw = self.server.text.encode() + b"\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(raw)

    do_GET = do_POST = do_HEAD = do_PUT = answer


class OriginServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr, text, log):
        super().__init__(addr, Origin)
        self.text = text
        self.log = open(log, "a", buffering=1)
        self.lock = threading.Lock()


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr, script, recorder):
        super().__init__(addr, Handler)
        self.script = script
        self.recorder = recorder
        self._ids = 0
        self._lock = threading.Lock()

    def next_id(self):
        with self._lock:
            self._ids += 1
            return self._ids


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--script")
    ap.add_argument("--origin", metavar="TEXT")
    ap.add_argument("--log", required=True)
    ap.add_argument("--bodies")
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--bind", default="127.0.0.1")
    a = ap.parse_args()
    if a.origin is not None:
        srv = OriginServer((a.bind, 0), a.origin, a.log)
    else:
        if not a.script or not a.bodies:
            ap.error("--script and --bodies are needed (or --origin)")
        with open(a.script) as f:
            script = json.load(f)
        if not isinstance(script, dict) or not all(isinstance(v, list) for v in script.values()):
            sys.exit("mock-model: %s: want an object of scenario name -> list of steps" % a.script)
        srv = Server((a.bind, 0), script, Recorder(a.log, a.bodies))
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
