// SPDX-License-Identifier: MIT
// The TypeScript client's adapters give what `berth tools --format F` prints
// (their functions aside), and their functions call the tools.
// usage: node adapters.mjs SDK-DIR BERTH APP-DIR...
import { createRequire } from "node:module";
import { execFileSync } from "node:child_process";
import assert from "node:assert/strict";

const [sdk, berth, ...dirs] = process.argv.slice(2);
const { Berth } = createRequire(sdk + "/")("./client.js");
const printed = (f) => JSON.parse(execFileSync(berth, ["tools", ...dirs, "--format", f]));
const data = (v) => JSON.parse(JSON.stringify(v)); // functions dropped

const b = await Berth.start({ apps: dirs, berth });
try {
	const names = (await b.listTools()).map((t) => t.name);
	assert.deepEqual(names, printed("mcp").tools.map((t) => t.name));
	for (const f of ["mcp", "openai", "anthropic", "openai-agents", "ai-sdk", "langchain"])
		assert.deepEqual(await b.toolDefinitions(f), printed(f), f);
	assert.deepEqual(await b.anthropicTools(), printed("anthropic"));
	assert.deepEqual(await b.openaiTools(), printed("openai"));
	const agents = await b.openaiAgentsTools();
	assert.deepEqual(data(agents), printed("openai-agents"));
	const ai = await b.aiSdkTools();
	assert.deepEqual(data(ai), printed("ai-sdk"));
	const wrapped = await b.aiSdkTools({ jsonSchema: (s) => ({ jsonSchema: s }), tool: (t) => ({ wrapped: t }) });
	assert.deepEqual(data(wrapped.tsprobe__note).wrapped.inputSchema.jsonSchema, printed("ai-sdk").tsprobe__note.inputSchema);
	const lc = await b.langchainTools();
	assert.deepEqual(data(lc), printed("langchain"));
	const lcw = await b.langchainTools({ tool: (fn, fields) => ({ fn, fields }) });
	assert.deepEqual(lcw.map((t) => t.fields), printed("langchain"));

	// each adapter's function calls the tool in its sandbox
	const out = await ai.tsprobe__note.execute({ file: "ai.txt", text: "ai-sdk" });
	assert.equal(out.cwd, "/workspace");
	const note = agents.find((t) => t.name === "tsprobe__note");
	assert.match(await note.invoke({}, JSON.stringify({ file: "agents.txt", text: "agents" })), /"bytes":6/);
	assert.match(await note.invoke({}, JSON.stringify({ file: "/app/x", text: "x" })), /EROFS/);
	assert.match(await lc.find((t) => t.name === "tsprobe__note").func({ file: "lc.txt", text: "lc" }), /"cwd":"\/workspace"/);
	await assert.rejects(ai.tsprobe__note.execute({ file: "/app/x", text: "x" }), /EROFS/);
	const use = await b.runToolUse({ type: "tool_use", id: "t1", name: "tsprobe__read", input: { path: "agents.txt" } });
	assert.deepEqual(use, { type: "tool_result", tool_use_id: "t1", content: '{"content":"agents"}', is_error: false });
	const call = await b.runToolCall({ id: "c1", type: "function", function: { name: "tsprobe__read", arguments: '{"path":"lc.txt"}' } });
	assert.deepEqual(call, { role: "tool", tool_call_id: "c1", content: '{"content":"lc"}' });
	await assert.rejects(b.toolDefinitions("gemini"), /unknown tool format "gemini"/);
} finally {
	await b.close();
}
console.log("ts adapters: ok");
