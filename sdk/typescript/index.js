// SPDX-License-Identifier: MIT
/*
 * @berth/sdk - resident apps in JavaScript/TypeScript (docs/protocol.md).
 *
 *   const { defineApp } = require("@berth/sdk");
 *   defineApp({
 *     tools: {
 *       add: { description: "Add two integers", handler: ({ a, b }) => ({ sum: a + b }) },
 *     },
 *   }).run();
 *
 * The app serves its exports to the berth supervisor over the socket in
 * BERTH_RPC_FD (JSON-RPC 2.0, one message per line, at most 1 MiB).  Calls
 * run concurrently and are answered as they finish (the protocol allows any
 * order); berth/cancel aborts the call's AbortSignal.  No dependencies; zod is
 * an optional peer (schemas given as zod are converted to JSON Schema for the
 * manifest and validate the input before the handler sees it).
 */
"use strict";

const fs = require("node:fs");
const net = require("node:net");
const os = require("node:os");
const util = require("node:util");

const VERSION = "0.1.0";
const MAX_MESSAGE = 1048576;

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;
const EXPORT_FAILED = -32000;
const SYSCALL_FAILED = -32001;
const CANCELLED = -32800;

const LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];
const NAME_RE = /^[a-z][a-z0-9_]{0,63}$/; // the manifest's rule (docs/manifest.md)
const LOG_MAX = 64 * 1024;
const MESSAGE_MAX = 16 * 1024;

/* The schema keywords berth's manifest takes (docs/manifest.md, "Schemas"). */
const SCHEMA_KEYWORDS = new Set([
	"type", "properties", "required", "items", "enum", "description", "minimum", "maximum", "default",
	"contentEncoding", "contentMediaType",
]);

/** Fail the current call: -32000 (the export failed) unless `code` says otherwise. */
class AppError extends Error {
	constructor(message, options = {}) {
		super(String(message));
		this.name = "AppError";
		this.code = options.code === undefined ? EXPORT_FAILED : options.code;
		this.data = options.data;
	}
}

/** Fail the current call with -32602: `path` points into the input ("$.items[2]"). */
class InvalidParams extends AppError {
	constructor(path, reason) {
		super(`invalid params: ${path}: ${reason}`, { code: INVALID_PARAMS, data: { path, reason } });
		this.name = "InvalidParams";
	}
}

let errnoNames = null;
/** The symbolic name of an errno value ("ENOENT"), or undefined. */
function errnoName(number) {
	if (errnoNames === null) {
		errnoNames = new Map();
		for (const [name, value] of Object.entries(os.constants.errno))
			if (!errnoNames.has(value) || name === "EAGAIN" || name === "EOPNOTSUPP" || name === "EDEADLK")
				errnoNames.set(value, name);
	}
	return errnoNames.get(number);
}

/**
 * Name the system call (and path) a Node system error came from, for the
 * -32001 answer; returns the error, for `throw osError(e, "open", p)`.
 * Node's fs errors already carry `syscall` and `path`: they need no wrapping.
 */
function osError(err, syscall, path) {
	err.berthSyscall = syscall;
	if (path !== undefined) err.berthPath = String(path);
	return err;
}

function oneLine(text, limit = MESSAGE_MAX) {
	return String(text).split("\n").join(" ").slice(0, limit);
}

/* An errno from a Node system error ({errno: -2, code: "ENOENT"}), or undefined. */
function systemErrno(err) {
	if (err === null || typeof err !== "object") return undefined;
	if (typeof err.code === "string" && /^E[A-Z0-9]+$/.test(err.code) && err.code in os.constants.errno)
		return os.constants.errno[err.code];
	if (Number.isInteger(err.errno) && err.errno !== 0 && errnoName(Math.abs(err.errno)) !== undefined)
		return Math.abs(err.errno);
	return undefined;
}

function osErrorAnswer(err, errno) {
	const syscall = err.berthSyscall !== undefined ? err.berthSyscall : err.syscall;
	const path = err.berthPath !== undefined ? err.berthPath : err.path;
	const data = { errno };
	const name = errnoName(errno);
	if (name !== undefined) data.errno_name = name;
	if (typeof syscall === "string") data.syscall = syscall;
	if (path !== undefined && path !== null) data.path = String(path);
	const entry = util.getSystemErrorMap().get(-errno);
	const desc = entry !== undefined ? entry[1] : `errno ${errno}`;
	let message;
	if (data.syscall !== undefined && data.path !== undefined) message = `${data.syscall} \`${data.path}\`: ${desc}`;
	else if (data.syscall !== undefined || data.path !== undefined)
		message = `${data.syscall !== undefined ? data.syscall : data.path}: ${desc}`;
	else message = desc;
	return { code: SYSCALL_FAILED, message: oneLine(message), data };
}

/* JSON for the channel: U+0000 and lone surrogates (JSON.stringify escapes
 * both) become U+FFFD, which berth's parser takes (docs/protocol.md). */
const ESCAPE_RE = /\\(u0000|u[dD][89a-fA-F][0-9a-fA-F]{2}|.)/g;
function encode(msg) {
	let text = JSON.stringify(msg);
	if (text.includes("\\u")) text = text.replace(ESCAPE_RE, (m, g) => (g.length === 5 ? "\\ufffd" : m));
	return Buffer.from(text + "\n", "utf8");
}

/* ------------------------------------------------------------ schemas */

function isPlainObject(v) {
	return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * JSON Schema from a schema given to a tool: a plain JSON Schema object is
 * taken as it is; a Standard JSON Schema (zod >= 4.2, `~standard.jsonSchema`)
 * or a schema with a toJSONSchema() method (zod 4) is converted.
 * @param {"input"|"output"} io which side of a transforming schema
 */
function jsonSchemaOf(schema, io = "input") {
	if (schema === undefined || schema === null) return undefined;
	const std = schema["~standard"];
	if (std !== undefined && std.jsonSchema !== undefined && typeof std.jsonSchema[io] === "function")
		return std.jsonSchema[io]({ target: "draft-2020-12" });
	if (typeof schema.toJSONSchema === "function") return schema.toJSONSchema();
	if (std !== undefined || schema._def !== undefined)
		throw new TypeError(
			"this schema cannot give a JSON Schema: use zod >= 4 (or `zod/v4`), or a plain JSON Schema object");
	if (!isPlainObject(schema)) throw new TypeError(`a schema must be an object, not ${typeof schema}`);
	return schema;
}

/**
 * The schema in the subset berth's manifest takes (docs/manifest.md,
 * "Schemas"): other keywords (`$schema`, `additionalProperties`,
 * `minLength`, ...) are left out and their JSON paths pushed onto `dropped`;
 * the ±(2^53-1) bounds zod puts on every int() go too (they say nothing).
 */
function manifestSchema(schema, dropped = [], path = "$") {
	if (!isPlainObject(schema)) return schema;
	const out = {};
	for (const [k, v] of Object.entries(schema)) {
		if (!SCHEMA_KEYWORDS.has(k)) {
			if (k !== "$schema" && !(k === "additionalProperties" && v === false)) dropped.push(`${path}.${k}`);
			continue;
		}
		if ((k === "minimum" || k === "maximum") && Math.abs(v) === Number.MAX_SAFE_INTEGER) continue;
		if (k === "properties" && isPlainObject(v)) {
			out[k] = {};
			for (const [p, s] of Object.entries(v)) out[k][p] = manifestSchema(s, dropped, `${path}.properties.${p}`);
		} else if (k === "items") {
			out[k] = manifestSchema(v, dropped, `${path}.items`);
		} else {
			out[k] = v;
		}
	}
	return out;
}

/* "$.a.b[2]" from a Standard Schema issue path. */
function issuePath(issue) {
	let p = "$";
	for (const seg of issue.path || []) {
		const key = isPlainObject(seg) && "key" in seg ? seg.key : seg;
		p += typeof key === "number" ? `[${key}]` : `.${String(key)}`;
	}
	return p;
}

/* ---------------------------------------------------------------- app */

function normaliseTool(name, spec, handler) {
	if (typeof name !== "string" || !NAME_RE.test(name))
		throw new TypeError(
			`invalid export name ${JSON.stringify(name)}: use a lowercase letter, then lowercase letters, digits and _ (at most 64)`);
	if (typeof spec === "function") spec = { handler: spec };
	if (!isPlainObject(spec)) throw new TypeError(`the tool \`${name}\` must be an object with a handler`);
	const fn = handler || spec.handler || spec.execute;
	if (typeof fn !== "function") throw new TypeError(`the tool \`${name}\` has no handler function`);
	return {
		name,
		description: spec.description,
		input: spec.input !== undefined ? spec.input : spec.inputSchema,
		output: spec.output !== undefined ? spec.output : spec.outputSchema,
		handler: fn,
	};
}

class App {
	constructor(definition = {}) {
		this._tools = new Map();
		this._socket = null;
		this._running = false;
		this._calls = new Map(); // id -> AbortController
		this._inflight = new Set(); // the calls' promises, awaited at end of input
		this.name = definition.name;
		const tools = definition.tools || {};
		if (Array.isArray(tools)) for (const t of tools) this.tool(t.name, t);
		else for (const [name, spec] of Object.entries(tools)) this.tool(name, spec);
	}

	/** Register an export: tool(name, {description, input, output, handler}) or tool(name, spec, handler). */
	tool(name, spec, handler) {
		const t = normaliseTool(name, spec, handler);
		if (this._tools.has(name)) throw new Error(`export \`${name}\` is already registered`);
		if (this._running) throw new Error("exports must be registered before run()");
		this._tools.set(name, t);
		return this;
	}

	/** The export names, in registration order (what berth/ready announces). */
	get exportNames() {
		return [...this._tools.keys()];
	}

	/**
	 * The exports as berth.yml declares them ({name, description, input,
	 * output}), schemas in the manifest's subset.  `dropped` receives the
	 * paths of keywords left out.
	 */
	manifestExports(dropped = []) {
		const out = [];
		for (const t of this._tools.values()) {
			const e = { name: t.name, description: t.description || t.name };
			const input = jsonSchemaOf(t.input, "input");
			const output = jsonSchemaOf(t.output, "output");
			if (input !== undefined) e.input = manifestSchema(input, dropped, `${t.name}.input`);
			if (output !== undefined) e.output = manifestSchema(output, dropped, `${t.name}.output`);
			out.push(e);
		}
		return out;
	}

	/** A berth/log line at an RFC 5424 level; before run() connects, to stderr. */
	log(message, level = "info") {
		if (!LEVELS.includes(level)) throw new RangeError(`unknown log level ${JSON.stringify(level)}`);
		message = String(message).slice(0, LOG_MAX);
		if (this._socket === null) {
			process.stderr.write(`${level}: ${message}\n`);
			return;
		}
		this._send({ jsonrpc: "2.0", method: "berth/log", params: { level, message } });
	}

	/**
	 * Serve calls until berth closes the channel; then the process exits 0
	 * (options.exit false: the promise resolves instead).  Run as
	 * `node index.js --berth-exports`, prints manifestExports() as JSON and
	 * exits.  Without BERTH_RPC_FD it exits 1 with a one-line reason.
	 */
	run(options = {}) {
		const exit = options.exit !== false;
		if (this._running) return Promise.reject(new Error("run() is already running"));
		if (process.argv.includes("--berth-exports")) {
			const dropped = [];
			process.stdout.write(JSON.stringify(this.manifestExports(dropped), null, 2) + "\n");
			for (const d of dropped)
				process.stderr.write(`berth-app: left out \`${d}\`: berth's manifest schemas do not take it\n`);
			process.exit(0);
		}
		this._running = true;
		const value = process.env.BERTH_RPC_FD || "";
		if (!/^[0-9]+$/.test(value)) {
			process.stderr.write(
				`berth-app: BERTH_RPC_FD is ${value === "" ? "not set" : `invalid: \`${value}\``}; resident apps are started by berth (try \`berth test\` or \`berth dev\`)\n`);
			process.exit(1);
		}
		let socket;
		try {
			if (!fs.fstatSync(Number(value)).isSocket()) throw new Error("not a socket");
			// libuv sets close-on-exec on it: programs the app runs cannot speak for it.
			socket = new net.Socket({ fd: Number(value), readable: true, writable: true, allowHalfOpen: true });
		} catch (e) {
			const why = e.code === "EBADF" ? "not an open file descriptor" : e.message;
			process.stderr.write(`berth-app: BERTH_RPC_FD \`${value}\`: ${why}\n`);
			process.exit(1);
		}
		this._socket = socket;
		return new Promise((resolve) => {
			let done = false;
			const finish = () => {
				if (done) return;
				done = true;
				this._socket = null;
				for (const c of this._calls.values()) c.abort(new Error("berth closed the channel"));
				socket.destroy();
				if (exit) process.exit(0);
				resolve();
			};
			// berth closed the channel (or went away mid-answer): stop at once.
			socket.on("error", finish);
			socket.on("close", finish);
			// End of input with our side still open (a half-close): serve an
			// unterminated last line, let the calls in flight answer, then stop.
			socket.on("end", () => {
				this._flushLast();
				Promise.allSettled([...this._inflight]).then(() => {
					if (!done) socket.end();
					finish();
				});
			});
			this._send({ jsonrpc: "2.0", method: "berth/ready", params: { exports: this.exportNames, sdk: "node/" + VERSION } });
			this._readLines(socket);
		});
	}

	_readLines(socket) {
		this._chunks = [];
		this._pending = 0;
		this._discarding = false;
		socket.on("data", (buf) => {
			let start = 0;
			for (;;) {
				const nl = buf.indexOf(10, start);
				if (nl < 0) break;
				if (this._discarding) this._discarding = false;
				else {
					this._chunks.push(buf.subarray(start, nl));
					const line = Buffer.concat(this._chunks);
					this._chunks = [];
					this._pending = 0;
					if (line.length + 1 > MAX_MESSAGE) this._tooLarge();
					else this._serve(line);
				}
				start = nl + 1;
			}
			if (start < buf.length && !this._discarding) {
				this._chunks.push(buf.subarray(start));
				this._pending += buf.length - start;
				// Never more than 1 MiB buffered: answered at once, the rest skipped.
				if (this._pending >= MAX_MESSAGE) {
					this._chunks = [];
					this._pending = 0;
					this._discarding = true;
					this._tooLarge();
				}
			}
		});
	}

	_flushLast() {
		if (this._discarding || this._chunks.length === 0) return;
		const line = Buffer.concat(this._chunks);
		this._chunks = [];
		this._serve(line);
	}

	_tooLarge() {
		this._error(null, INVALID_REQUEST, `invalid request: message larger than ${MAX_MESSAGE} bytes`);
	}

	_serve(line) {
		let text;
		try {
			text = new TextDecoder("utf-8", { fatal: true }).decode(line);
		} catch {
			this._error(null, PARSE_ERROR, "parse error: invalid UTF-8");
			return;
		}
		if (text.trim() === "") return;
		let msg;
		try {
			msg = JSON.parse(text);
		} catch (e) {
			this._error(null, PARSE_ERROR, `parse error: ${oneLine(e.message, 200)}`);
			return;
		}
		if (!isPlainObject(msg)) {
			this._error(null, INVALID_REQUEST, "invalid request: not a JSON object");
			return;
		}
		const hasId = "id" in msg;
		const id = msg.id;
		const method = msg.method;
		if (hasId && !(id === null || typeof id === "string" || Number.isInteger(id)))
			this._error(null, INVALID_REQUEST, "invalid request: `id` must be an integer");
		else if (msg.jsonrpc !== "2.0") this._error(id, INVALID_REQUEST, 'invalid request: `jsonrpc` must be "2.0"');
		else if (typeof method !== "string") this._error(id, INVALID_REQUEST, "invalid request: `method` must be a string");
		else if (!hasId) {
			if (method === "berth/cancel" && isPlainObject(msg.params)) {
				const c = this._calls.get(msg.params.id);
				if (c !== undefined) c.abort(new Error("cancelled by berth"));
			}
		} else if (!this._tools.has(method)) this._error(id, METHOD_NOT_FOUND, `no such export \`${oneLine(method, 200)}\``);
		else if ("params" in msg && !isPlainObject(msg.params))
			this._error(id, INVALID_PARAMS, "invalid params: `params` must be an object", { path: "$", reason: "expected object" });
		else {
			const p = this._call(id, this._tools.get(method), msg.params === undefined ? {} : msg.params);
			this._inflight.add(p);
			p.finally(() => this._inflight.delete(p));
		}
	}

	async _call(id, tool, params) {
		const controller = new AbortController();
		this._calls.set(id, controller);
		const ctx = {
			id,
			signal: controller.signal,
			log: (message, level) => this.log(message, level),
		};
		let result;
		try {
			let input = params;
			const std = tool.input !== undefined && tool.input !== null ? tool.input["~standard"] : undefined;
			if (std !== undefined && typeof std.validate === "function") {
				const r = await std.validate(params);
				if (r.issues !== undefined) {
					const issue = r.issues[0];
					throw new InvalidParams(issuePath(issue), oneLine(issue.message, 1000));
				}
				input = r.value;
			}
			result = await tool.handler(input, ctx);
		} catch (e) {
			this._calls.delete(id);
			this._fail(id, tool.name, e, controller.signal.aborted);
			return;
		}
		this._calls.delete(id);
		if (result === undefined || result === null) result = {};
		if (!isPlainObject(result)) {
			this._error(id, INTERNAL_ERROR,
				`export \`${tool.name}\` returned ${Array.isArray(result) ? "an array" : typeof result}, not an object`);
			return;
		}
		this._answer(id, result);
	}

	_fail(id, name, e, aborted) {
		if (e instanceof AppError) {
			this._error(id, e.code, oneLine(e.message), e.data);
			return;
		}
		if (aborted) {
			this._error(id, CANCELLED, "cancelled");
			return;
		}
		const errno = systemErrno(e);
		if (errno !== undefined) {
			const a = osErrorAnswer(e, errno);
			this._error(id, a.code, a.message, a.data);
			return;
		}
		// A bug in the handler: the stack goes to the app's log, one line to the caller.
		process.stderr.write(`berth-app: export \`${name}\` threw: ${e && e.stack ? e.stack : String(e)}\n`);
		const label = e instanceof Error ? `${e.name}: ${e.message}` : `thrown: ${String(e)}`;
		this._error(id, INTERNAL_ERROR, oneLine(label, 1000));
	}

	_answer(id, result) {
		let line;
		try {
			line = encode({ jsonrpc: "2.0", id, result });
		} catch (e) {
			this._error(id, INTERNAL_ERROR, `result is not JSON: ${oneLine(e.message, 1000)}`);
			return;
		}
		if (line.length > MAX_MESSAGE) {
			this._error(id, INTERNAL_ERROR, `result too large: ${line.length} bytes, the limit is ${MAX_MESSAGE}`);
			return;
		}
		this._write(line);
	}

	_error(id, code, message, data) {
		const error = { code, message };
		if (data !== undefined) error.data = data;
		let line;
		try {
			line = encode({ jsonrpc: "2.0", id, error });
		} catch (e) {
			line = encode({ jsonrpc: "2.0", id, error: { code: INTERNAL_ERROR, message: `error data is not JSON: ${oneLine(e.message, 1000)}` } });
		}
		if (line.length > MAX_MESSAGE)
			line = encode({ jsonrpc: "2.0", id, error: { code: INTERNAL_ERROR, message: `error too large: ${line.length} bytes, the limit is ${MAX_MESSAGE}` } });
		this._write(line);
	}

	_send(msg) {
		const line = encode(msg);
		if (line.length > MAX_MESSAGE) throw new RangeError(`message too large: ${line.length} bytes`);
		this._write(line);
	}

	_write(line) {
		if (this._socket !== null && !this._socket.destroyed) this._socket.write(line);
	}
}

/** A resident app from a definition: {name?, tools: {NAME: {description, input, output, handler}}}. */
function defineApp(definition) {
	return new App(definition);
}

module.exports = {
	defineApp,
	App,
	AppError,
	InvalidParams,
	osError,
	errnoName,
	jsonSchemaOf,
	manifestSchema,
	VERSION,
	MAX_MESSAGE,
	LEVELS,
	codes: {
		PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR,
		EXPORT_FAILED, SYSCALL_FAILED, CANCELLED,
	},
};
