// SPDX-License-Identifier: MIT
// Unit tests of the app side (index.js): a child node process gets a socket
// as fd 3 (stdio "pipe" is an AF_UNIX socketpair in Node), as berth gives it.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const { spawn } = require("node:child_process");
const path = require("node:path");
const fs = require("node:fs");
const os = require("node:os");
const { createRequire } = require("node:module");

const SDK = path.resolve(__dirname, "..");
// zod from the tests' npm install (tests/mcp, or BERTH_TEST_NODE_MODULES)
const MODULES = process.env.BERTH_TEST_NODE_MODULES || path.resolve(SDK, "../../tests/mcp/node_modules");

const APP = `
const { defineApp, AppError, InvalidParams, osError } = require(${JSON.stringify(SDK)});
const fs = require("node:fs");
const z = require(${JSON.stringify(path.join(MODULES, "zod"))});
const app = defineApp({ tools: {
  add: { description: "add", input: { type: "object" }, handler: ({ a, b }) => ({ sum: a + b }) },
  nothing: { handler: () => undefined },
  fail: () => { throw new AppError("it broke", { data: { why: 1 } }); },
  bad: () => { throw new InvalidParams("$.x", "expected string"); },
  open: () => fs.readFileSync("/nonexistent/berth-test"),
  named: () => { throw osError(Object.assign(new Error("x"), { code: "EACCES" }), "connect", "/run/x"); },
  bug: () => { null.x; },
  arr: () => [1],
  nul: () => ({ s: "a\\u0000b\\ud800" }),
  slow: (_, ctx) => new Promise((res) => setTimeout(() => res({ slow: true }), 300)),
  wait: (_, ctx) => new Promise((res, rej) => ctx.signal.addEventListener("abort", () => rej(ctx.signal.reason))),
  typed: { input: z.object({ n: z.number().int(), s: z.string().default("d") }), handler: (i) => i },
  logs: (_, ctx) => { ctx.log("hello log", "warning"); return {}; },
}});
app.run();
`;

function start(env = {}) {
	const child = spawn(process.execPath, ["-e", APP], {
		stdio: ["ignore", "pipe", "pipe", "pipe"],
		env: { ...process.env, BERTH_RPC_FD: "3", ...env },
	});
	const sock = child.stdio[3];
	let buf = "";
	const waiters = [];
	const msgs = [];
	let stderr = "";
	child.stderr.on("data", (d) => (stderr += d));
	sock.on("data", (d) => {
		buf += d;
		let nl;
		while ((nl = buf.indexOf("\n")) >= 0) {
			msgs.push(JSON.parse(buf.slice(0, nl)));
			buf = buf.slice(nl + 1);
			while (waiters.length && msgs.length) waiters.shift()(msgs.shift());
		}
	});
	const next = () => new Promise((res) => (msgs.length ? res(msgs.shift()) : waiters.push(res)));
	const exited = new Promise((res) => child.on("exit", (code) => res(code)));
	return {
		child, sock, next, exited,
		stderr: () => stderr,
		send: (m) => sock.write((typeof m === "string" ? m : JSON.stringify(m)) + "\n"),
		call: async (id, method, params) => {
			sock.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
			return next();
		},
	};
}

test("berth/ready, calls, errors, framing and end of file", async () => {
	const a = start();
	const ready = await a.next();
	assert.equal(ready.method, "berth/ready");
	assert.equal(ready.params.sdk, "node/0.1.0");
	assert.deepEqual(ready.params.exports, ["add", "nothing", "fail", "bad", "open", "named", "bug", "arr", "nul", "slow", "wait", "typed", "logs"]);
	assert.deepEqual(await a.call(1, "add", { a: 2, b: 3 }), { jsonrpc: "2.0", id: 1, result: { sum: 5 } });
	assert.deepEqual((await a.call(2, "nothing", {})).result, {});
	assert.deepEqual((await a.call(3, "fail")).error, { code: -32000, message: "it broke", data: { why: 1 } });
	assert.deepEqual((await a.call(4, "bad", {})).error.data, { path: "$.x", reason: "expected string" });
	const open = (await a.call(5, "open", {})).error;
	assert.equal(open.code, -32001);
	assert.deepEqual(open.data, { errno: 2, errno_name: "ENOENT", syscall: "open", path: "/nonexistent/berth-test" });
	assert.equal(open.message, "open `/nonexistent/berth-test`: no such file or directory");
	const named = (await a.call(6, "named", {})).error;
	assert.deepEqual(named.data, { errno: 13, errno_name: "EACCES", syscall: "connect", path: "/run/x" });
	const bug = (await a.call(7, "bug", {})).error;
	assert.equal(bug.code, -32603);
	assert.match(bug.message, /^TypeError: Cannot read properties of null/);
	assert.equal((await a.call(8, "arr", {})).error.message, "export `arr` returned an array, not an object");
	assert.equal((await a.call(9, "nope", {})).error.code, -32601);
	assert.deepEqual((await a.call(10, "add", [1])).error.data, { path: "$", reason: "expected object" });
	a.send("{not json");
	const parse = await a.next();
	assert.equal(parse.id, null);
	assert.equal(parse.error.code, -32700);
	assert.match(parse.error.message, /^parse error: /);
	a.send("[1]");
	assert.equal((await a.next()).error.code, -32600);
	a.send('{"jsonrpc":"1.0","id":11,"method":"add"}');
	assert.deepEqual((await a.next()).id, 11);
	// U+0000 and a lone surrogate become U+FFFD on the wire
	const nul = await a.call(12, "nul", {});
	assert.equal(nul.result.s, "a\ufffdb\ufffd");
	// a line over 1 MiB: -32600 at once, then the channel works again
	a.send('{"jsonrpc":"2.0","id":13,"method":"add","params":{"pad":"' + "x".repeat(1100000) + '"}}');
	const big = await a.next();
	assert.deepEqual(big.error, { code: -32600, message: "invalid request: message larger than 1048576 bytes" });
	assert.equal(big.id, null);
	assert.deepEqual((await a.call(14, "add", { a: 1, b: 1 })).result, { sum: 2 });
	// concurrent calls answer as they finish; berth/cancel aborts a call
	a.send({ jsonrpc: "2.0", id: 15, method: "slow", params: {} });
	a.send({ jsonrpc: "2.0", id: 16, method: "wait", params: {} });
	assert.deepEqual((await a.call(17, "add", { a: 0, b: 0 })).id, 17);
	a.send({ jsonrpc: "2.0", method: "berth/cancel", params: { id: 16 } });
	assert.deepEqual(await a.next(), { jsonrpc: "2.0", id: 16, error: { code: -32800, message: "cancelled" } });
	assert.deepEqual((await a.next()).id, 15);
	// zod validates and fills defaults; an issue is -32602 with its path
	assert.deepEqual((await a.call(18, "typed", { n: 3 })).result, { n: 3, s: "d" });
	const typed = (await a.call(19, "typed", { n: 1.5 })).error;
	assert.equal(typed.code, -32602);
	assert.equal(typed.data.path, "$.n");
	a.send({ jsonrpc: "2.0", id: 20, method: "logs", params: {} });
	assert.deepEqual(await a.next(), { jsonrpc: "2.0", method: "berth/log", params: { level: "warning", message: "hello log" } });
	assert.equal((await a.next()).id, 20);
	a.sock.end();
	assert.equal(await a.exited, 0);
	assert.match(a.stderr(), /export `bug` threw: TypeError/);
});

test("invalid UTF-8 is a parse error", async () => {
	const a = start();
	await a.next();
	a.sock.write(Buffer.from([0x7b, 0xff, 0x7d, 0x0a]));
	assert.deepEqual((await a.next()).error, { code: -32700, message: "parse error: invalid UTF-8" });
	a.sock.end();
	assert.equal(await a.exited, 0);
});

test("without BERTH_RPC_FD the app exits 1 and says why", async () => {
	const r = require("node:child_process").spawnSync(process.execPath, ["-e", APP], {
		env: { ...process.env, BERTH_RPC_FD: "" }, encoding: "utf8",
	});
	assert.equal(r.status, 1);
	assert.match(r.stderr, /^berth-app: BERTH_RPC_FD is not set; resident apps are started by berth/);
});

test("the channel is not inherited by programs the app runs", async () => {
	const code = `
const { defineApp } = require(${JSON.stringify(SDK)});
const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
defineApp({ tools: { fds: () => ({
  channel: fs.readlinkSync("/proc/self/fd/3"),
  fds: execFileSync("sh", ["-c", "for f in /proc/self/fd/*; do readlink $f; done; true"]).toString().trim().split("\\n"),
}) } }).run();`;
	const child = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "ignore", "inherit", "pipe"], env: { ...process.env, BERTH_RPC_FD: "3" } });
	const sock = child.stdio[3];
	let buf = "";
	const lines = [];
	await new Promise((res) => sock.on("data", (d) => {
		buf += d;
		const parts = buf.split("\n");
		buf = parts.pop();
		lines.push(...parts);
		if (lines.length === 1) sock.write('{"jsonrpc":"2.0","id":1,"method":"fds","params":{}}\n');
		if (lines.length === 2) res();
	}));
	const { channel, fds } = JSON.parse(lines[1]).result;
	assert.match(channel, /^socket:/);
	assert.ok(fds.length >= 3, fds.join(" "));
	assert.ok(!fds.includes(channel), `the child holds ${channel}: ${fds.join(" ")}`);
	sock.end();
});

test("bad export names and duplicates are refused at definition", () => {
	const { defineApp } = require(SDK);
	assert.throws(() => defineApp({ tools: { Bad: () => ({}) } }), /invalid export name "Bad"/);
	assert.throws(() => defineApp({ tools: { ok: {} } }), /the tool `ok` has no handler function/);
	const app = defineApp({ tools: { ok: () => ({}) } });
	assert.throws(() => app.tool("ok", () => ({})), /export `ok` is already registered/);
});

test("manifestExports: JSON Schema from zod, in berth's manifest subset", () => {
	const { defineApp } = require(SDK);
	const z = require(path.join(MODULES, "zod"));
	const app = defineApp({ tools: {
		greet: {
			description: "Greet",
			input: z.object({ name: z.string().min(1).describe("who"), times: z.number().int().optional() }),
			output: { type: "object", properties: { greeting: { type: "string" } }, required: ["greeting"] },
			handler: () => ({}),
		},
	} });
	const dropped = [];
	assert.deepEqual(app.manifestExports(dropped), [{
		name: "greet",
		description: "Greet",
		input: { type: "object", properties: { name: { type: "string", description: "who" }, times: { type: "integer" } }, required: ["name"] },
		output: { type: "object", properties: { greeting: { type: "string" } }, required: ["greeting"] },
	}]);
	assert.deepEqual(dropped, ["greet.input.properties.name.minLength"]);
});
