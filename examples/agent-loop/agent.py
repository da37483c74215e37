#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A minimal agent loop: a model (the Anthropic Messages API) picks berth
tools, berth runs them in the apps' sandboxes, the results go back to the
model.  Standard library only.

    PYTHONPATH=/path/to/berth/sdk/python ANTHROPIC_API_KEY=... \\
        python3 agent.py "Say hello to Ada" ../../apps/notes

ANTHROPIC_BASE_URL points it at another server (the tests' mock), BERTH at
the berth binary, MODEL at another model.
"""

import json
import os
import sys
import urllib.error
import urllib.request

import berth_client


def create_message(base, key, body):
    req = urllib.request.Request(base + "/v1/messages", data=json.dumps(body).encode(), method="POST", headers={
        "content-type": "application/json", "x-api-key": key, "anthropic-version": "2023-06-01"})
    try:
        with urllib.request.urlopen(req, timeout=120) as res:
            return json.load(res)
    except urllib.error.HTTPError as e:
        raise SystemExit("agent: the model API answered %d: %s" % (e.code, e.read().decode(errors="replace")))


def main():
    if len(sys.argv) < 3:
        raise SystemExit("usage: agent.py PROMPT APP-DIR...")
    prompt, apps = sys.argv[1], sys.argv[2:]
    base = os.environ.get("ANTHROPIC_BASE_URL", "https://api.anthropic.com")
    key = os.environ.get("ANTHROPIC_API_KEY") or sys.exit("agent: set ANTHROPIC_API_KEY")
    with berth_client.Berth(apps) as berth:
        tools = berth.anthropic_tools()  # berth tools --format anthropic
        messages = [{"role": "user", "content": prompt}]
        for _ in range(10):
            msg = create_message(base, key, {"model": os.environ.get("MODEL", "claude-sonnet-4-5"),
                                             "max_tokens": 1024, "tools": tools, "messages": messages})
            messages.append({"role": "assistant", "content": msg["content"]})
            if msg["stop_reason"] != "tool_use":
                for c in msg["content"]:
                    if c["type"] == "text":
                        print(c["text"])
                break
            results = []
            for block in msg["content"]:
                if block["type"] == "tool_use":
                    result = berth.run_tool_use(block)  # in the app's sandbox
                    print("agent: %s -> %s%s" % (block["name"], "error: " if result["is_error"] else "",
                                                 result["content"]), file=sys.stderr)
                    results.append(result)
            messages.append({"role": "user", "content": results})


if __name__ == "__main__":
    main()
