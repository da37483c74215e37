# SPDX-License-Identifier: MIT
"""The Python client's adapters give what `berth tools --format F` prints
(their functions aside), and their functions call the tools.
usage: PYTHONPATH=sdk/python python3 adapters.py BERTH APP-DIR..."""

import asyncio
import json
import subprocess
import sys

import berth_client

berth, dirs = sys.argv[1], sys.argv[2:]


def printed(fmt):
    return json.loads(subprocess.run([berth, "tools"] + dirs + ["--format", fmt], check=True,
                                     stdout=subprocess.PIPE).stdout)


def data(defs):
    return [{k: v for k, v in d.items() if not callable(v)} for d in defs]


class FakeFunctionTool:  # the constructor of agents.FunctionTool
    def __init__(self, **kw):
        self.kw = kw


class FakeStructuredTool:  # langchain_core.tools.StructuredTool
    @classmethod
    def from_function(cls, func, **kw):
        return dict(kw, func=func)


with berth_client.Berth(dirs, berth=berth) as b:
    assert [t["name"] for t in b.list_tools()] == [t["name"] for t in printed("mcp")["tools"]]
    for fmt in berth_client.FORMATS:
        assert b.tool_definitions(fmt) == printed(fmt), fmt
    assert b.anthropic_tools() == printed("anthropic")
    assert b.openai_tools() == printed("openai")
    agents = b.openai_agents_tools()
    assert data(agents) == printed("openai-agents")
    fts = b.openai_agents_tools(FakeFunctionTool)
    assert [(t.kw["name"], t.kw["params_json_schema"], t.kw["strict_json_schema"]) for t in fts] == \
        [(d["name"], d["parameters"], d["strict"]) for d in printed("openai-agents")]
    lc = b.langchain_tools()
    assert data(lc) == printed("langchain")
    lcs = b.langchain_tools(FakeStructuredTool)
    assert [{"name": t["name"], "description": t["description"], "schema": t["args_schema"]} for t in lcs] == \
        printed("langchain")

    note = next(t for t in agents if t["name"] == "tsprobe__note")
    text = asyncio.run(note["on_invoke_tool"](None, json.dumps({"file": "py-agents.txt", "text": "py"})))
    assert json.loads(text)["cwd"] == "/workspace", text
    assert "EROFS" in asyncio.run(note["on_invoke_tool"](None, '{"file": "/app/x", "text": "x"}'))
    func = next(t for t in lc if t["name"] == "tsprobe__read")["func"]
    assert json.loads(func(path="py-agents.txt")) == {"content": "py"}
    try:
        func(path="/nonexistent")
        raise AssertionError("no error")
    except RuntimeError as e:
        assert "ENOENT" in str(e), e
    r = b.run_tool_use({"type": "tool_use", "id": "t1", "name": "tsprobe__read", "input": {"path": "py-agents.txt"}})
    assert r == {"type": "tool_result", "tool_use_id": "t1", "content": '{"content":"py"}', "is_error": False}, r
    r = b.call_tool("tsprobe__note", {"file": "/app/x", "text": "x"})
    assert r.is_error and "EROFS" in r.text and r.output is None, r
    try:
        b.tool_definitions("gemini")
        raise AssertionError("no error")
    except ValueError as e:
        assert "unknown tool format 'gemini'" in str(e)
print("python adapters: ok")
