// SPDX-License-Identifier: MIT
/*
 * @berth/sdk/client - berth's resident apps as tools for an agent loop.
 *
 *   const { Berth } = require("@berth/sdk/client");
 *   const berth = await Berth.start({ apps: ["apps/notes"] });
 *   const tools = berth.anthropicTools();          // for the Messages API
 *   const r = await berth.callTool("add_note", { text: "milk" });
 *   await berth.close();
 *
 * Calls go through `berth mcp` (a subprocess speaking MCP over stdio): the
 * apps boot in their sandboxes at their first call and stay up until
 * close().  Tool definitions come from `berth tools --format F` (docs/sdk.md,
 * "Tool formats"): this file never rebuilds them, it only attaches the code
 * that calls the tool, so the formats have one source, berth's.
 */
"use strict";

const { spawn, execFile } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const VERSION = "0.1.0";
const PROTOCOL = "2025-06-18";
const FORMATS = ["mcp", "openai", "anthropic", "openai-agents", "ai-sdk", "langchain"];

/** A call that failed before it could give a tool result (berth gone, protocol error). */
class BerthError extends Error {
	constructor(message, options = {}) {
		super(message);
		this.name = "BerthError";
		this.code = options.code;
		this.data = options.data;
	}
}

/* The app's name: its manifest's top-level `name:` line (app names are
 * [a-z0-9-], docs/manifest.md), else the directory's base name; berth mcp
 * checks it against the manifest and says so when it differs. */
function manifestName(dir) {
	let text = "";
	try {
		text = fs.readFileSync(path.join(dir, "berth.yml"), "utf8");
	} catch {
		// berth mcp names the missing manifest
	}
	const m = /^name:[ \t]*(["']?)([a-z0-9-]+)\1[ \t]*(#.*)?$/m.exec(text);
	return m !== null ? m[2] : path.basename(path.resolve(dir));
}

function appSpec(a) {
	if (typeof a === "string") return { name: manifestName(a), dir: a };
	if (a === null || typeof a !== "object" || typeof a.dir !== "string")
		throw new TypeError("an app is a directory or {name, dir}");
	return { name: a.name || manifestName(a.dir), dir: a.dir };
}

/* The text of a tools/call result: its text parts, one per line. */
function resultText(result) {
	const parts = [];
	for (const c of result.content || []) if (c.type === "text") parts.push(c.text);
	return parts.join("\n");
}

class Berth {
	/**
	 * Start `berth mcp` for the apps and initialise the MCP session.
	 * options: apps (directories or {name, dir}; name defaults to the
	 * manifest's `name:`), berth (the berth
	 * binary, default $BERTH or "berth"), args (more `berth mcp` flags:
	 * "--warm", "--runtime", "vm"), env, stderr ("inherit" or "pipe").
	 */
	static async start(options = {}) {
		const b = new Berth(options);
		await b._init();
		return b;
	}

	constructor(options = {}) {
		const apps = (options.apps || []).map(appSpec);
		if (apps.length === 0) throw new TypeError("Berth.start needs at least one app");
		this.apps = apps;
		this.berth = options.berth || process.env.BERTH || "berth";
		this.env = options.env || process.env;
		const args = ["mcp"];
		for (const a of apps) args.push("--app", a.name, "--app-dir", a.dir);
		args.push(...(options.args || []));
		this._child = spawn(this.berth, args, {
			stdio: ["pipe", "pipe", options.stderr || "inherit"],
			env: this.env,
		});
		this._next = 1;
		this._pending = new Map();
		this._buf = "";
		this._closed = null;
		this._defs = new Map();
		this.serverInfo = undefined;
		this._stderr = "";
		if (this._child.stderr) {
			// stderr: "pipe": the last of berth's messages go into the errors
			this._child.stderr.setEncoding("utf8");
			this._child.stderr.on("data", (d) => (this._stderr = (this._stderr + d).slice(-4096)));
		}
		this._child.stdout.setEncoding("utf8");
		this._child.stdout.on("data", (s) => this._data(s));
		const gone = (why) => {
			if (this._closed !== null) return;
			this._closed = why;
			for (const p of this._pending.values()) p.reject(new BerthError(`berth mcp ${why}`));
			this._pending.clear();
		};
		this._child.on("error", (e) => gone(`could not start \`${this.berth}\`: ${e.message}`));
		this._child.on("close", (code, sig) => {
			const said = this._stderr.trim();
			gone((sig ? `was killed by ${sig}` : `exited with status ${code}`) + (said ? `: ${said}` : ""));
		});
		this._child.stdin.on("error", () => {});
	}

	_data(s) {
		this._buf += s;
		let nl;
		while ((nl = this._buf.indexOf("\n")) >= 0) {
			const line = this._buf.slice(0, nl);
			this._buf = this._buf.slice(nl + 1);
			if (line.trim() === "") continue;
			let msg;
			try {
				msg = JSON.parse(line);
			} catch {
				continue; // not ours to answer: berth mcp writes only JSON-RPC here
			}
			if (msg.id === undefined || msg.method !== undefined) continue; // notifications, server requests
			const p = this._pending.get(msg.id);
			if (p === undefined) continue;
			this._pending.delete(msg.id);
			if (msg.error !== undefined)
				p.reject(new BerthError(msg.error.message, { code: msg.error.code, data: msg.error.data }));
			else p.resolve(msg.result);
		}
	}

	_send(msg) {
		this._child.stdin.write(JSON.stringify(msg) + "\n");
	}

	/** A raw MCP request; resolves with its result, rejects with a BerthError. */
	request(method, params) {
		if (this._closed !== null) return Promise.reject(new BerthError(`berth mcp ${this._closed}`));
		const id = this._next++;
		return new Promise((resolve, reject) => {
			this._pending.set(id, { resolve, reject });
			this._send({ jsonrpc: "2.0", id, method, params });
		});
	}

	async _init() {
		const r = await this.request("initialize", {
			protocolVersion: PROTOCOL,
			capabilities: {},
			clientInfo: { name: "berth-sdk-client", version: VERSION },
		});
		this.serverInfo = r.serverInfo;
		this.protocolVersion = r.protocolVersion;
		this._send({ jsonrpc: "2.0", method: "notifications/initialized" });
	}

	/** The tools as the MCP server lists them (every page). */
	async listTools() {
		const tools = [];
		let cursor;
		do {
			const r = await this.request("tools/list", cursor === undefined ? {} : { cursor });
			tools.push(...r.tools);
			cursor = r.nextCursor;
		} while (cursor !== undefined && cursor !== null);
		return tools;
	}

	/**
	 * Call a tool.  Resolves with {isError, text, output, content}: `output`
	 * is the structured result (the export's output object) when it
	 * succeeded, `text` what a model should read (the error, with berth's
	 * capability-denial explanation, when isError).  Rejects only when the
	 * call could not be made (unknown tool, berth gone).
	 */
	async callTool(name, args = {}) {
		const r = await this.request("tools/call", { name, arguments: args });
		return {
			isError: r.isError === true,
			text: resultText(r),
			output: r.structuredContent,
			content: r.content,
		};
	}

	/**
	 * The tool definitions in a format of `berth tools --format` (mcp,
	 * openai, anthropic, openai-agents, ai-sdk, langchain), as berth prints
	 * them for these apps.  Cached per format.
	 */
	async toolDefinitions(format) {
		if (!FORMATS.includes(format))
			throw new RangeError(`unknown tool format ${JSON.stringify(format)}: use ${FORMATS.join(", ")}`);
		if (!this._defs.has(format)) {
			const args = ["tools", ...this.apps.map((a) => a.dir), "--format", format];
			const out = await new Promise((resolve, reject) =>
				execFile(this.berth, args, { env: this.env, maxBuffer: 64 << 20 }, (err, stdout, stderr) =>
					err ? reject(new BerthError(`berth tools failed: ${String(stderr).trim() || err.message}`)) : resolve(stdout)));
			this._defs.set(format, JSON.parse(out));
		}
		return structuredClone(this._defs.get(format));
	}

	/* ------------------------------------------------------- adapters */

	/** Anthropic Messages API `tools` (plain data: the API calls no code). */
	anthropicTools() {
		return this.toolDefinitions("anthropic");
	}

	/** OpenAI Chat Completions `tools`. */
	openaiTools() {
		return this.toolDefinitions("openai");
	}

	/**
	 * Run one Anthropic `tool_use` content block; resolves with the
	 * `tool_result` block to send back in the next user message.
	 */
	async runToolUse(block) {
		const r = await this.callTool(block.name, block.input || {});
		return { type: "tool_result", tool_use_id: block.id, content: r.text, is_error: r.isError };
	}

	/** Run one OpenAI Chat Completions tool call; resolves with the `tool` message. */
	async runToolCall(call) {
		let args = {};
		try {
			args = call.function.arguments ? JSON.parse(call.function.arguments) : {};
		} catch (e) {
			return { role: "tool", tool_call_id: call.id, content: `the arguments are not JSON: ${e.message}` };
		}
		const r = await this.callTool(call.function.name, args);
		return { role: "tool", tool_call_id: call.id, content: r.text };
	}

	/**
	 * Vercel AI SDK tools: {NAME: {description, inputSchema, execute}}, for
	 * generateText({tools}).  Pass {jsonSchema} from "ai" to wrap each schema
	 * as the SDK wants it (jsonSchema(schema)), and {tool} from "ai" to wrap
	 * each definition with tool().  `execute` resolves with the output object
	 * and throws when the call failed (the SDK reports it as a tool error).
	 */
	async aiSdkTools(helpers = {}) {
		const defs = await this.toolDefinitions("ai-sdk");
		const out = {};
		for (const [name, d] of Object.entries(defs)) {
			const t = {
				description: d.description,
				inputSchema: helpers.jsonSchema ? helpers.jsonSchema(d.inputSchema) : d.inputSchema,
				execute: (args) => this._execute(name, args),
			};
			out[name] = helpers.tool ? helpers.tool(t) : t;
		}
		return out;
	}

	/**
	 * LangChain.js / LangGraph.js tools.  Pass {tool} from
	 * "@langchain/core/tools": each becomes tool(func, {name, description,
	 * schema}) (a JSON Schema schema, which LangChain takes), ready for
	 * createReactAgent or ToolNode.  Without it: [{name, description,
	 * schema, func}].  func resolves with the result text.
	 */
	async langchainTools(helpers = {}) {
		const defs = await this.toolDefinitions("langchain");
		return defs.map((d) => {
			const func = async (input) => {
				const r = await this.callTool(d.name, input || {});
				if (r.isError) throw new Error(r.text);
				return r.text;
			};
			return helpers.tool ? helpers.tool(func, d) : { ...d, func };
		});
	}

	/**
	 * OpenAI Agents SDK (@openai/agents) function tools: the definition
	 * ({type: "function", name, description, parameters, strict}) with the
	 * SDK's FunctionTool members (invoke(runContext, inputJson),
	 * needsApproval, isEnabled), usable as Agent({tools}) without importing
	 * the SDK.  invoke resolves with the result text (an error's text when
	 * the call failed: the model reads it).
	 */
	async openaiAgentsTools() {
		const defs = await this.toolDefinitions("openai-agents");
		return defs.map((d) => ({
			...d,
			invoke: async (_runContext, input) => {
				let args;
				try {
					args = typeof input === "string" && input !== "" ? JSON.parse(input) : input || {};
				} catch (e) {
					return `the arguments are not JSON: ${e.message}`;
				}
				return (await this.callTool(d.name, args)).text;
			},
			needsApproval: async () => false,
			isEnabled: async () => true,
		}));
	}

	async _execute(name, args) {
		const r = await this.callTool(name, args || {});
		if (r.isError) throw new Error(r.text);
		return r.output !== undefined ? r.output : r.text;
	}

	/** End the session: berth mcp stops every app and exits. */
	async close() {
		if (this._child.exitCode !== null || this._child.signalCode !== null) return;
		const exited = new Promise((resolve) => this._child.once("exit", resolve));
		this._child.stdin.end();
		const t = setTimeout(() => this._child.kill("SIGTERM"), 10000);
		await exited;
		clearTimeout(t);
	}
}

module.exports = { Berth, BerthError, FORMATS, VERSION };
