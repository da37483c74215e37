// SPDX-License-Identifier: MIT
// The adapters inside the real frameworks (npm, pinned in tests/mcp/package.json):
// the Vercel AI SDK's generateText and the OpenAI Agents SDK's Runner each run a
// scripted model whose tool call berth runs in the app's sandbox, and the tool
// result goes back to the model; LangChain.js's tool() takes the definition and
// invokes it.
// usage: node frameworks.mjs NODE_MODULES SDK-DIR BERTH APP-DIR
import { createRequire } from "node:module";
import assert from "node:assert/strict";

const [nm, sdk, berthBin, dir] = process.argv.slice(2);
const req = createRequire(nm + "/");
const { generateText, tool, jsonSchema, stepCountIs } = req("ai");
const { MockLanguageModelV4 } = req("ai/test");
const lc = req("@langchain/core/tools");
const agents = req("@openai/agents-core");
const { Berth } = createRequire(sdk + "/")("./client.js");

const usage = {
	inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
	outputTokens: { total: 1, text: 1, reasoning: 0 },
};
const b = await Berth.start({ apps: [dir], berth: berthBin });
try {
	// Vercel AI SDK: a model that calls `note`, then reads its result
	const seen = [];
	const model = new MockLanguageModelV4({
		doGenerate: async (options) => {
			seen.push(options);
			if (seen.length === 1)
				return {
					content: [{ type: "tool-call", toolCallId: "call-1", toolName: "note", input: JSON.stringify({ file: "ai-sdk.txt", text: "from the AI SDK" }) }],
					finishReason: { unified: "tool-calls", raw: undefined }, usage, warnings: [],
				};
			return { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] };
		},
	});
	const r = await generateText({
		model,
		tools: await b.aiSdkTools({ tool, jsonSchema }),
		prompt: "write a note",
		stopWhen: stepCountIs(3),
	});
	assert.equal(r.text, "done");
	// the model was offered the tool with berth's schema
	const offered = seen[0].tools.find((t) => t.name === "note");
	assert.deepEqual(offered.inputSchema, (await b.toolDefinitions("ai-sdk")).note.inputSchema);
	const results = r.steps[0].toolResults;
	assert.equal(results.length, 1);
	assert.equal(results[0].output.cwd, "/workspace");
	assert.equal(results[0].output.bytes, 15);

	// LangChain.js: tool(func, {name, description, schema}) with berth's JSON Schema
	const tools = await b.langchainTools({ tool: lc.tool });
	const note = tools.find((t) => t.name === "note");
	assert.ok(note instanceof lc.StructuredTool || typeof note.invoke === "function");
	assert.equal(note.description, (await b.toolDefinitions("langchain"))[0].description);
	const out = await note.invoke({ file: "langchain.txt", text: "from LangChain" });
	assert.equal(JSON.parse(out).cwd, "/workspace");
	await assert.rejects(note.invoke({ file: "/app/x", text: "x" }), /EROFS/);

	// OpenAI Agents SDK: the FunctionTool objects, as they are, in an Agent run
	const requests = [];
	const agentModel = {
		async getResponse(request) {
			requests.push(request);
			if (requests.length === 1)
				return {
					usage: new agents.Usage(),
					output: [{ type: "function_call", callId: "call-1", name: "note", status: "completed",
						arguments: JSON.stringify({ file: "agents-sdk.txt", text: "from the Agents SDK" }) }],
				};
			return {
				usage: new agents.Usage(),
				output: [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "noted" }] }],
			};
		},
		async *getStreamedResponse() {
			throw new Error("not used");
		},
	};
	const agent = new agents.Agent({ name: "noter", instructions: "write notes", model: agentModel, tools: await b.openaiAgentsTools() });
	const run = await new agents.Runner({ tracingDisabled: true }).run(agent, "write a note");
	assert.equal(run.finalOutput, "noted");
	const sent = requests[0].tools.find((t) => t.name === "note");
	assert.deepEqual(JSON.parse(JSON.stringify(sent)), (await b.toolDefinitions("openai-agents")).find((t) => t.name === "note"));
	const back = requests[1].input.at(-1);
	assert.equal(back.type, "function_call_result");
	assert.equal(back.callId, "call-1");
	assert.equal(JSON.parse(back.output.text).cwd, "/workspace");
} finally {
	await b.close();
}
console.log("frameworks: ok");
