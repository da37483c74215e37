// SPDX-License-Identifier: MIT
// Type-checked (tsc --strict --noEmit) by tests/sdk/run-sdk.sh against
// sdk/typescript's declarations: an app and an agent loop as a TypeScript
// user writes them.  The @ts-expect-error lines must stay errors.
import { defineApp, AppError, InvalidParams, type CallContext } from "@berth/sdk";
import { Berth, type AnthropicTool, type ToolResult } from "@berth/sdk/client";
import { z } from "zod";

const app = defineApp({
	tools: {
		greet: {
			description: "Greet",
			input: z.object({ name: z.string(), times: z.number().int().optional() }),
			output: z.object({ greeting: z.string() }),
			handler: async ({ name, times }, ctx: CallContext) => {
				ctx.log(`greeting ${name}`, "info");
				if (ctx.signal.aborted) throw new AppError("cancelled", { code: -32800 });
				const n: number = times ?? 1;
				return { greeting: `hello, ${name}`.repeat(n) };
			},
		},
		plain: {
			input: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
			handler: (input) => {
				if (typeof input.path !== "string") throw new InvalidParams("$.path", "expected string");
				return { path: input.path };
			},
		},
	},
});
app.tool("later", { description: "added later" }, () => ({}));

defineApp({
	tools: {
		typed: {
			input: z.object({ name: z.string() }),
			// @ts-expect-error: `nope` is not in the input schema
			handler: ({ nope }) => ({ nope }),
		},
	},
});
// @ts-expect-error: a log level RFC 5424 does not have
app.log("x", "verbose");

async function loop(): Promise<void> {
	const berth = await Berth.start({ apps: ["apps/notes"], args: ["--warm"] });
	const tools: AnthropicTool[] = await berth.anthropicTools();
	const r: ToolResult = await berth.callTool(tools[0].name, { text: "x" });
	const block = await berth.runToolUse({ type: "tool_use", id: "t", name: "add_note", input: {} });
	const ai = await berth.aiSdkTools();
	await ai["add_note"].execute({ text: "y" });
	const lc = await berth.langchainTools({ tool: (func, fields) => ({ func, ...fields }) });
	const agents = await berth.openaiAgentsTools();
	console.log(r.isError, r.text, block.is_error, lc[0].name, agents[0].strict);
	// @ts-expect-error: not a format of berth tools
	await berth.toolDefinitions("gemini");
	await berth.close();
}
void loop;
void app.run({ exit: true });
