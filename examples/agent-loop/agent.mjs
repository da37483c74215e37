// SPDX-License-Identifier: MIT
// @ts-check
// A minimal agent loop: a model (the Anthropic Messages API) picks berth tools,
// berth runs them in the apps' sandboxes, the results go back to the model.
//
//   npm install /path/to/berth/sdk/typescript
//   ANTHROPIC_API_KEY=... node agent.mjs "Say hello to Ada" ../../apps/notes
//
// ANTHROPIC_BASE_URL points it at another server (the tests' mock), BERTH at
// the berth binary, MODEL at another model.
import { Berth } from "@berth/sdk/client";

const [prompt, ...apps] = process.argv.slice(2);
if (prompt === undefined || apps.length === 0) {
	console.error("usage: node agent.mjs PROMPT APP-DIR...");
	process.exit(2);
}
const base = process.env.ANTHROPIC_BASE_URL || "https://api.anthropic.com";
const key = process.env.ANTHROPIC_API_KEY || "";
if (key === "") {
	console.error("agent: set ANTHROPIC_API_KEY");
	process.exit(2);
}

/**
 * One Messages API request.
 * @param {{model: string, max_tokens: number, tools: unknown[], messages: Message[]}} body
 * @returns {Promise<{stop_reason: string, content: any[]}>}
 */
async function createMessage(body) {
	const res = await fetch(`${base}/v1/messages`, {
		method: "POST",
		headers: { "content-type": "application/json", "x-api-key": key, "anthropic-version": "2023-06-01" },
		body: JSON.stringify(body),
	});
	const msg = await res.json();
	if (!res.ok) throw new Error(`the model API answered ${res.status}: ${msg.error?.message}`);
	return msg;
}

/** @typedef {{role: "user" | "assistant", content: unknown}} Message */

const berth = await Berth.start({ apps });
try {
	const tools = await berth.anthropicTools(); // berth tools --format anthropic
	/** @type {Message[]} */
	const messages = [{ role: "user", content: prompt }];
	for (let turn = 0; turn < 10; turn++) {
		const msg = await createMessage({
			model: process.env.MODEL || "claude-sonnet-4-5",
			max_tokens: 1024,
			tools,
			messages,
		});
		messages.push({ role: "assistant", content: msg.content });
		if (msg.stop_reason !== "tool_use") {
			for (const c of msg.content) if (c.type === "text") console.log(c.text);
			break;
		}
		const results = [];
		for (const block of msg.content) {
			if (block.type !== "tool_use") continue;
			const result = await berth.runToolUse(block); // in the app's sandbox
			console.error(`agent: ${block.name} -> ${result.is_error ? "error: " : ""}${result.content}`);
			results.push(result);
		}
		messages.push({ role: "user", content: results });
	}
} finally {
	await berth.close();
}
