// SPDX-License-Identifier: MIT
// Types of @berth/sdk/client (client.js): berth's apps as tools for an agent loop (docs/sdk.md).

export type ToolFormat = "mcp" | "openai" | "anthropic" | "openai-agents" | "ai-sdk" | "langchain";
export const FORMATS: ToolFormat[];
export const VERSION: string;

export type JsonSchema = { [keyword: string]: unknown };

export interface AppRef {
	/** The manifest's name (default: read from DIR/berth.yml). */
	name?: string;
	dir: string;
}

export interface StartOptions {
	apps: Array<string | AppRef>;
	/** The berth binary (default $BERTH, else "berth" on PATH). */
	berth?: string;
	/** More `berth mcp` flags, e.g. ["--warm"] or ["--runtime", "vm"]. */
	args?: string[];
	env?: { [name: string]: string | undefined };
	stderr?: "inherit" | "pipe" | "ignore";
}

export interface McpTool {
	name: string;
	description?: string;
	inputSchema: JsonSchema;
	outputSchema?: JsonSchema;
}

export interface ToolResult {
	isError: boolean;
	/** What a model should read: the output as JSON, or the error (with berth's denial explanation). */
	text: string;
	/** The export's output object when the call succeeded. */
	output?: Record<string, unknown>;
	content: Array<{ type: string; text?: string; [k: string]: unknown }>;
}

export interface AnthropicTool { name: string; description: string; input_schema: JsonSchema }
export interface OpenAITool { type: "function"; function: { name: string; description: string; parameters: JsonSchema } }
export interface AnthropicToolUse { type: "tool_use"; id: string; name: string; input?: Record<string, unknown> }
export interface AnthropicToolResult { type: "tool_result"; tool_use_id: string; content: string; is_error: boolean }
export interface OpenAIToolCall { id: string; type?: "function"; function: { name: string; arguments: string } }
export interface OpenAIToolMessage { role: "tool"; tool_call_id: string; content: string }

export interface AiSdkTool {
	description: string;
	inputSchema: unknown;
	execute(args: Record<string, unknown>): Promise<unknown>;
}
export interface LangChainToolFields { name: string; description: string; schema: JsonSchema }
export interface LangChainTool extends LangChainToolFields { func(input: Record<string, unknown>): Promise<string> }
export interface OpenAIAgentsTool {
	type: "function";
	name: string;
	description: string;
	parameters: JsonSchema;
	strict: false;
	invoke(runContext: unknown, input: string): Promise<string>;
	needsApproval(): Promise<boolean>;
	isEnabled(): Promise<boolean>;
}

export class BerthError extends Error {
	code?: number;
	data?: unknown;
}

export class Berth {
	static start(options: StartOptions): Promise<Berth>;
	readonly apps: Array<Required<AppRef>>;
	readonly serverInfo?: { name: string; version: string };
	readonly protocolVersion?: string;
	request(method: string, params?: unknown): Promise<any>;
	listTools(): Promise<McpTool[]>;
	callTool(name: string, args?: Record<string, unknown>): Promise<ToolResult>;
	toolDefinitions(format: ToolFormat): Promise<any>;
	anthropicTools(): Promise<AnthropicTool[]>;
	openaiTools(): Promise<OpenAITool[]>;
	runToolUse(block: AnthropicToolUse): Promise<AnthropicToolResult>;
	runToolCall(call: OpenAIToolCall): Promise<OpenAIToolMessage>;
	/** Pass { jsonSchema, tool } from "ai" to get the SDK's own objects. */
	aiSdkTools(): Promise<Record<string, AiSdkTool>>;
	aiSdkTools<T>(helpers: { jsonSchema?: (schema: JsonSchema) => unknown; tool?: (t: AiSdkTool) => T }): Promise<Record<string, T>>;
	/** Pass { tool } from "@langchain/core/tools" to get LangChain tools. */
	langchainTools(): Promise<LangChainTool[]>;
	langchainTools<T>(helpers: { tool: (func: (input: any) => Promise<string>, fields: LangChainToolFields) => T }): Promise<T[]>;
	openaiAgentsTools(): Promise<OpenAIAgentsTool[]>;
	close(): Promise<void>;
}
