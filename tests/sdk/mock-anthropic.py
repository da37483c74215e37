#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A mock of the Anthropic Messages API (POST /v1/messages) with one scripted
tool call, for the agent-loop examples (examples/agent-loop).

The first request must offer the tool --tool (in `tools`, with an
`input_schema`); the answer is a `tool_use` of it with --input.  The next
request must carry the `tool_result` of that tool_use (in the last user
message); the answer ends the turn with a text quoting the result.  Anything
else is an `invalid_request_error` (HTTP 400), a missing x-api-key or
anthropic-version header an HTTP 401/400, as the real API answers.  Every
request body is appended as one JSON line to --log.

usage: mock-anthropic.py --tool NAME --input JSON --log FILE --port-file FILE
  listens on 127.0.0.1, an ephemeral port written to --port-file once bound.
"""

import argparse
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOOL_USE_ID = "toolu_mock_01"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--port-file", required=True)
    opts = ap.parse_args()
    tool_input = json.loads(opts.input)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, fmt, *args):
            sys.stderr.write("mock-anthropic: " + fmt % args + "\n")

        def reply(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def fail(self, status, kind, message):
            self.reply(status, {"type": "error", "error": {"type": kind, "message": message}})

        def do_POST(self):
            if self.path != "/v1/messages":
                return self.fail(404, "not_found_error", "no route %s" % self.path)
            if not self.headers.get("x-api-key"):
                return self.fail(401, "authentication_error", "x-api-key header is required")
            if not self.headers.get("anthropic-version"):
                return self.fail(400, "invalid_request_error", "anthropic-version header is required")
            try:
                req = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
            except ValueError:
                return self.fail(400, "invalid_request_error", "the body is not JSON")
            with open(opts.log, "a", encoding="utf-8") as f:
                f.write(json.dumps(req) + "\n")
            for k in ("model", "max_tokens", "messages"):
                if k not in req:
                    return self.fail(400, "invalid_request_error", "%s: Field required" % k)
            tools = {t.get("name"): t for t in req.get("tools", [])}
            if opts.tool not in tools or "input_schema" not in tools[opts.tool]:
                return self.fail(400, "invalid_request_error", "the tool %s is not offered" % opts.tool)
            last = req["messages"][-1]
            results = [c for c in last.get("content", []) if isinstance(c, dict)
                       and c.get("type") == "tool_result"] if isinstance(last.get("content"), list) else []
            base = {"type": "message", "role": "assistant", "model": req["model"], "stop_sequence": None,
                    "usage": {"input_tokens": 12, "output_tokens": 8}}
            if not results:
                return self.reply(200, dict(base, id="msg_mock_01", stop_reason="tool_use", content=[
                    {"type": "text", "text": "I will call %s." % opts.tool},
                    {"type": "tool_use", "id": TOOL_USE_ID, "name": opts.tool, "input": tool_input}]))
            r = results[0]
            if r.get("tool_use_id") != TOOL_USE_ID:
                return self.fail(400, "invalid_request_error", "tool_result for an unknown tool_use_id")
            content = r.get("content")
            if isinstance(content, list):
                content = "".join(c.get("text", "") for c in content if isinstance(c, dict))
            return self.reply(200, dict(base, id="msg_mock_02", stop_reason="end_turn", content=[
                {"type": "text", "text": "The tool answered: %s" % content}]))

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tmp = opts.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, opts.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
