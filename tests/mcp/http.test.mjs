// SPDX-License-Identifier: MIT
// `berth mcp` on protocol 2025-11-25 and over the Streamable HTTP transport
// (`berth mcp --listen`), through the official MCP TypeScript SDK client:
// every revision the SDK speaks, over stdio and over HTTP; tasks; URL-mode
// elicitation; the transport's refusals (token, Origin, protocol version,
// sessions, a non-loopback address); and the MCP Inspector's CLI mode.
// TAP output.  Run through tests/mcp/run-mcp-http.sh BERTH REPO.
import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

import {
	CallToolResultSchema,
	CreateTaskResultSchema,
	ElicitRequestSchema,
	GetTaskResultSchema,
	ListTasksResultSchema,
	LoggingMessageNotificationSchema,
	SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";

import { Client as Client2 } from "@modelcontextprotocol/client";
import { StreamableHTTPClientTransport as HTTP2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as Stdio2 } from "@modelcontextprotocol/client/stdio";

import { BERTH, TOP, appCopy, connect, defer, eq, finish, freshXdg, has, listen, note, ok, raw, sleep, test, waitFor } from "./harness.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FS_TOOLS = ["write_file", "read_file", "list_files", "delete_file", "stat"];
const OURS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/* What berth answers a client asking for @rev: that revision, or its latest. */
const answered = (rev) => (OURS.includes(rev) ? rev : "2025-11-25");

async function checkRevision(c, rev, tagText) {
	const want = answered(rev);
	eq(c.version, want, `${tagText}: asked ${rev}, negotiated ${want}`);
	const caps = c.client.getServerCapabilities();
	eq(
		caps?.tasks,
		want >= "2025-11-25" ? { list: {}, cancel: {}, requests: { tools: { call: {} } } } : undefined,
		`${tagText}: capabilities.tasks ${want >= "2025-11-25" ? "offered" : "absent"}`,
	);
	const { tools } = await c.client.listTools();
	eq(tools.map((t) => t.name), FS_TOOLS, `${tagText}: tools/list`);
	eq(tools.every((t) => "outputSchema" in t), want >= "2025-06-18", `${tagText}: outputSchema iff 2025-06-18 or later`);
	eq(
		tools.map((t) => t.execution?.taskSupport),
		FS_TOOLS.map(() => (want >= "2025-11-25" ? "optional" : undefined)),
		`${tagText}: execution.taskSupport optional iff 2025-11-25`,
	);
	const r = await c.client.callTool({ name: "write_file", arguments: { path: `${rev}.txt`, content: rev } });
	eq(r.isError, false, `${tagText}: tools/call succeeds`);
	eq(r.structuredContent, want >= "2025-06-18" ? { path: `${rev}.txt`, bytes: rev.length } : undefined, `${tagText}: structuredContent iff 2025-06-18 or later`);
	const back = await c.client.callTool({ name: "read_file", arguments: { path: `${rev}.txt` } });
	has(back.content?.[0]?.text, rev, `${tagText}: the file written reads back`);
}

note(`the SDK speaks ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}`);

// ---------------------------------------------------------------------------
await test("every revision the SDK speaks, over stdio", async () => {
	const app = appCopy("filesystem", "rev-stdio");
	for (const rev of SUPPORTED_PROTOCOL_VERSIONS) {
		const c = await connect({ apps: [["filesystem", app.dir]], tag: `stdio-${rev}`, revision: rev });
		await checkRevision(c, rev, `stdio ${rev}`);
		await c.close();
	}
}, 120000);

await test("every revision the SDK speaks, over Streamable HTTP (one server, a session each)", async () => {
	const app = appCopy("filesystem", "rev-http");
	const srv = await listen({ apps: [["filesystem", app.dir]], tag: "rev-http" });
	ok(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/.test(srv.url), `it says where it listens: ${srv.url}`);
	ok(/^[0-9a-f]{64}$/.test(srv.token ?? ""), "a 256-bit token is printed on stderr");
	for (const rev of SUPPORTED_PROTOCOL_VERSIONS) {
		const c = await connect({ http: srv, revision: rev });
		await checkRevision(c, rev, `http ${rev}`);
		ok(typeof c.transport.sessionId === "string" && /^[0-9a-f]{32}$/.test(c.transport.sessionId), `http ${rev}: a session id`);
		await c.close();
	}
	eq(await srv.stop(), { code: 0, sig: null }, "berth mcp --listen exits 0 on SIGTERM");
}, 120000);

await test("tool icons (2025-11-25): the app's icon.svg, as a data: URI", async () => {
	const app = appCopy("filesystem", "icons");
	const svg = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 8"><rect width="8" height="8"/></svg>';
	fs.writeFileSync(path.join(app.dir, "icon.svg"), svg);
	fs.chmodSync(path.join(app.dir, "icon.svg"), 0o644);
	const c = await connect({ apps: [["filesystem", app.dir]], tag: "icons" });
	const { tools } = await c.client.listTools();
	const want = [{ src: `data:image/svg+xml;base64,${Buffer.from(svg).toString("base64")}`, mimeType: "image/svg+xml", sizes: ["any"] }];
	ok(tools.length === FS_TOOLS.length && tools.every((t) => JSON.stringify(t.icons) === JSON.stringify(want)), "every tool has the icon", tools[0]?.icons);
	await c.close();
	const old = await connect({ apps: [["filesystem", app.dir]], tag: "icons-old", revision: "2025-06-18" });
	ok((await old.client.listTools()).tools.every((t) => !("icons" in t)), "under 2025-06-18: no icons");
	await old.close();
	fs.writeFileSync(path.join(app.dir, "icon.svg"), "x".repeat(64 * 1024 + 1));
	const big = await connect({ apps: [["filesystem", app.dir]], tag: "icons-big" });
	ok((await big.client.listTools()).tools.every((t) => !("icons" in t)), "an icon over 64 KiB is not used");
	has(big.stderr(), "is not used as the tools' icon", "and stderr says so");
	await big.close();
});

// ---------------------------------------------------------------------------
// 2026-07-28, the stateless revision: the official v2 client
// (@modelcontextprotocol/client), pinned to it and in its "auto" mode (a
// server/discover probe, then no initialize).
async function v2Checks(c, where) {
	eq(c.getNegotiatedProtocolVersion(), "2026-07-28", `${where}: negotiated 2026-07-28`);
	const { tools } = await c.listTools();
	eq(tools.map((t) => t.name), FS_TOOLS, `${where}: tools/list`);
	ok(tools.every((t) => t.outputSchema?.type === "object"), `${where}: every tool has its outputSchema`);
	const r = await c.callTool({ name: "write_file", arguments: { path: "v2.txt", content: "stateless" } });
	eq(r.structuredContent, { path: "v2.txt", bytes: 9 }, `${where}: tools/call answers with structuredContent`);
	const back = await c.callTool({ name: "read_file", arguments: { path: "v2.txt" } });
	has(back.content?.[0]?.text, "stateless", `${where}: and reads back`);
}

await test("2026-07-28 (stateless) with the official v2 client, over stdio and HTTP", async () => {
	const app = appCopy("filesystem", "v2");
	const env = { ...process.env, ...freshXdg("v2") };
	for (const mode of [{ pin: "2026-07-28" }, "auto"]) {
		const m = typeof mode === "string" ? mode : "pinned";
		const c = new Client2({ name: "berth-v2-test", version: "1" }, { versionNegotiation: { mode } });
		await c.connect(new Stdio2({ command: BERTH, args: ["mcp", "--app", "filesystem", "--app-dir", app.dir], env, stderr: "ignore" }));
		await v2Checks(c, `stdio, ${m}`);
		await c.close();
	}
	const srv = await listen({ apps: [["filesystem", app.dir]], tag: "v2-http" });
	for (const mode of [{ pin: "2026-07-28" }, "auto"]) {
		const m = typeof mode === "string" ? mode : "pinned";
		const c = new Client2({ name: "berth-v2-test", version: "1" }, { versionNegotiation: { mode } });
		const t = new HTTP2(new URL(srv.url), { requestInit: { headers: { Authorization: `Bearer ${srv.token}` } } });
		await c.connect(t);
		await v2Checks(c, `http, ${m}`);
		eq(t.sessionId, undefined, `http, ${m}: no Mcp-Session-Id`);
		await c.close();
	}
	// the wire, raw: server/discover, the per-request _meta, an unknown revision
	const s = raw({ apps: [["filesystem", app.dir]], tag: "v2-raw" });
	const meta = (v) => ({ "io.modelcontextprotocol/protocolVersion": v, "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" } });
	const d = await s.request("server/discover", { _meta: meta("2026-07-28") });
	eq(d.result?.supportedVersions, ["2026-07-28"], "server/discover: supportedVersions");
	eq(d.result?._meta?.["io.modelcontextprotocol/serverInfo"]?.name, "berth", "server/discover: serverInfo in _meta");
	const l = await s.request("tools/list", { _meta: meta("2026-07-28") });
	eq([l.result?.resultType, l.result?.ttlMs, l.result?.cacheScope], ["complete", 0, "private"], "tools/list without initialize: resultType complete, ttlMs 0, cacheScope private");
	const u = await s.request("tools/list", { _meta: meta("2027-01-01") });
	eq(u.error?.code, -32022, "an unknown stateless revision: -32022");
	eq(u.error?.data, { supported: ["2026-07-28"], requested: "2027-01-01" }, "with what is supported and what was asked");
	const n = await s.request("tools/list", {});
	eq(n.error, undefined, "a request without _meta after them is served too (the connection is stateless)");
	eq(await s.close(), { code: 0, sig: null }, "exits 0");
}, 90000);

// ---------------------------------------------------------------------------
async function taskChecks(c, where) {
	const made = await c.client.request(
		{ method: "tools/call", params: { name: "write_file", arguments: { path: "task.txt", content: "by a task" }, task: { ttl: 60000 } } },
		CreateTaskResultSchema,
	);
	const id = made.task?.taskId;
	ok(/^task-[0-9a-f]{32}$/.test(id ?? ""), `${where}: tools/call with params.task answers a task`, made);
	eq(made.task?.ttl, 60000, `${where}: the ttl asked for`);
	const result = await c.client.request({ method: "tasks/result", params: { taskId: id } }, CallToolResultSchema);
	eq(result.structuredContent, { path: "task.txt", bytes: 9 }, `${where}: tasks/result is the call's result`);
	eq(result._meta?.["io.modelcontextprotocol/related-task"], { taskId: id }, `${where}: with the related-task _meta`);
	const got = await c.client.request({ method: "tasks/get", params: { taskId: id } }, GetTaskResultSchema);
	eq(got.status, "completed", `${where}: tasks/get: completed`);
	const list = await c.client.request({ method: "tasks/list", params: {} }, ListTasksResultSchema);
	ok(list.tasks.some((t) => t.taskId === id), `${where}: tasks/list has it`);
	// a failed call: status failed, the result has isError
	const bad = await c.client.request(
		{ method: "tools/call", params: { name: "read_file", arguments: { path: "no-such-file" }, task: {} } },
		CreateTaskResultSchema,
	);
	const badRes = await c.client.request({ method: "tasks/result", params: { taskId: bad.task.taskId } }, CallToolResultSchema);
	eq(badRes.isError, true, `${where}: a failing call's task result has isError`);
	eq((await c.client.request({ method: "tasks/get", params: { taskId: bad.task.taskId } }, GetTaskResultSchema)).status, "failed", `${where}: its status is failed`);
	const err = await c.client.request({ method: "tasks/get", params: { taskId: "task-nope" } }, GetTaskResultSchema).catch((e) => e);
	eq(err?.code, -32602, `${where}: an unknown task id is -32602`);
	const again = await c.client.request({ method: "tasks/cancel", params: { taskId: id } }, GetTaskResultSchema).catch((e) => e);
	eq(again?.code, -32602, `${where}: cancelling a completed task is -32602`);
}

await test("tasks (2025-11-25) over stdio and HTTP", async () => {
	const app = appCopy("filesystem", "tasks");
	const c = await connect({ apps: [["filesystem", app.dir]], tag: "tasks" });
	await taskChecks(c, "stdio");
	await c.close();
	const srv = await listen({ apps: [["filesystem", app.dir]], tag: "tasks-http" });
	const h = await connect({ http: srv });
	await taskChecks(h, "http");
	await h.close();
}, 60000);

await test("a long call as a task: working, then cancelled", async () => {
	const app = appCopy("probe", "task-hang");
	const c = await connect({ apps: [["probe", app.dir]], tag: "task-hang" });
	defer(() => c.close());
	const made = await c.client.request({ method: "tools/call", params: { name: "hang", arguments: {}, task: {} } }, CreateTaskResultSchema);
	eq(made.task.status, "working", "the task is working at once (the call sleeps an hour)");
	eq((await c.client.request({ method: "tasks/get", params: { taskId: made.task.taskId } }, GetTaskResultSchema)).status, "working", "tasks/get: still working");
	const waiting = c.client.request({ method: "tasks/result", params: { taskId: made.task.taskId } }, CallToolResultSchema).catch((e) => e);
	const cancelled = await c.client.request({ method: "tasks/cancel", params: { taskId: made.task.taskId } }, GetTaskResultSchema);
	eq(cancelled.status, "cancelled", "tasks/cancel: cancelled");
	eq((await waiting)?.code, -32602, "the waiting tasks/result is answered: the task was cancelled (-32602)");
	const list = await c.client.request({ method: "tasks/list", params: {} }, ListTasksResultSchema);
	eq(list.tasks.map((t) => [t.taskId, t.status]), [[made.task.taskId, "cancelled"]], "tasks/list: cancelled");
	const twice = await c.client.request({ method: "tasks/cancel", params: { taskId: made.task.taskId } }, GetTaskResultSchema).catch((e) => e);
	eq(twice?.code, -32602, "cancelling it again: -32602");
}, 60000);

// ---------------------------------------------------------------------------
async function elicitCase(where, makeConn) {
	const seen = [];
	const logs = [];
	const c = await makeConn([
		[
			ElicitRequestSchema,
			(req) => {
				seen.push(req.params);
				return { action: "accept" };
			},
		],
	], { elicitation: { url: {} } });
	c.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
	const line = await waitFor(() => logs.find((l) => l.logger === "berth" && /elicitation/.test(l.data)), 10000);
	eq(seen, [{ mode: "url", message: "berth test: open this page to approve the grant", url: "https://grant.example/approve?id=1", elicitationId: "berth-test-1" }], `${where}: the client got elicitation/create in URL mode`);
	eq(line?.data, "elicitation berth-test-1: accept", `${where}: the hook heard the client's answer (accept)`);
	await c.close();
	// a client that declares no URL mode: nothing is sent, the hook says why
	const logs2 = [];
	const seen2 = [];
	const d = await makeConn([[ElicitRequestSchema, (req) => (seen2.push(req), { action: "decline" })]], { elicitation: {} });
	d.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs2.push(n.params));
	const l2 = await waitFor(() => logs2.find((l) => l.logger === "berth"), 10000);
	has(l2?.data, "declared no capabilities.elicitation.url", `${where}: a client without URL mode gets none; the hook is told why`);
	eq(seen2.length, 0, `${where}: and no elicitation/create was sent`);
	await d.close();
}

await test("URL-mode elicitation through the hook (BERTH_MCP_TEST_ELICIT_URL)", async () => {
	const app = appCopy("filesystem", "elicit");
	const env = { ...freshXdg("elicit"), BERTH_MCP_TEST_ELICIT_URL: "https://grant.example/approve?id=1" };
	await elicitCase("stdio", (handlers, clientCaps) => connect({ apps: [["filesystem", app.dir]], env, handlers, clientCaps }));
	const srv = await listen({ apps: [["filesystem", app.dir]], tag: "elicit-http", extraEnv: { BERTH_MCP_TEST_ELICIT_URL: "https://grant.example/approve?id=1" } });
	await elicitCase("http", (handlers, clientCaps) => connect({ http: srv, handlers, clientCaps }));
}, 60000);

// ---------------------------------------------------------------------------
await test("Streamable HTTP: what is refused", async () => {
	const app = appCopy("filesystem", "refuse");
	const tokenFile = path.join(TOP, `token-${process.pid}`);
	const srv = await listen({ apps: [["filesystem", app.dir]], tag: "refuse", tokenFile });
	const st = fs.statSync(tokenFile);
	eq(st.mode & 0o777, 0o600, "--token-file is written mode 0600");
	ok(!/bearer token/.test(srv.stderr()), "with --token-file the token is not printed");
	const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } };
	const post = (body, headers = {}) =>
		fetch(srv.url, { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...headers }, body: JSON.stringify(body) });
	const auth = { Authorization: `Bearer ${srv.token}` };
	let r = await post(init);
	eq(r.status, 401, "no token: 401");
	eq(r.headers.get("www-authenticate"), 'Bearer realm="berth mcp"', "with WWW-Authenticate: Bearer");
	r = await post(init, { Authorization: `Bearer ${"0".repeat(64)}` });
	eq(r.status, 401, "a wrong token: 401");
	r = await post(init, { Authorization: `Basic ${srv.token}` });
	eq(r.status, 401, "the token under another scheme: 401");
	r = await post(init, { ...auth, Origin: "http://evil.example" });
	eq(r.status, 403, "Origin http://evil.example: 403");
	r = await post(init, { ...auth, Origin: "http://127.0.0.1.evil.example:80" });
	eq(r.status, 403, "Origin http://127.0.0.1.evil.example: 403");
	r = await post(init, { ...auth, Origin: "null" });
	eq(r.status, 403, "Origin null: 403");
	r = await post(init, { ...auth, "MCP-Protocol-Version": "2099-01-01" });
	eq(r.status, 400, "MCP-Protocol-Version 2099-01-01: 400");
	r = await post(init, { ...auth, Origin: "http://localhost:5173" });
	eq(r.status, 200, "a loopback Origin is allowed: 200");
	const sid = r.headers.get("mcp-session-id");
	ok(/^[0-9a-f]{32}$/.test(sid ?? ""), "initialize gives an Mcp-Session-Id");
	eq((await r.json()).result?.protocolVersion, "2025-11-25", "and the answer");
	// a client without the token learns nothing of the session
	r = await post({ jsonrpc: "2.0", id: 2, method: "tools/list" });
	eq([r.status, r.headers.get("mcp-session-id")], [401, null], "no token: 401 without the session's Mcp-Session-Id");
	r = await post({ jsonrpc: "2.0", id: 2, method: "tools/list" }, { Authorization: `Bearer ${"0".repeat(64)}` });
	eq([r.status, r.headers.get("mcp-session-id")], [401, null], "a wrong token: 401 without it either");
	// a header that decides, given twice: refused, whichever one is loopback or right
	const rawHead = (lines) =>
		new Promise((resolve) => {
			const { port } = new URL(srv.url);
			const body = JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" });
			const s = net.connect(Number(port), "127.0.0.1", () =>
				s.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json\r\n${lines.join("\r\n")}\r\nContent-Length: ${body.length}\r\n\r\n${body}`),
			);
			let out = "";
			s.on("data", (b) => (out += b));
			s.on("error", () => {});
			s.on("close", () => resolve(out));
			s.setTimeout(5000, () => s.destroy());
		});
	const sess = [`Authorization: Bearer ${srv.token}`, `Mcp-Session-Id: ${sid}`, "MCP-Protocol-Version: 2025-11-25"];
	for (const [what, extra] of [
		["Origin (loopback, then not)", ["Origin: http://localhost", "Origin: http://evil.example"]],
		["Authorization (right, then wrong)", [`Authorization: Bearer ${"0".repeat(64)}`]],
		["Mcp-Session-Id", [`Mcp-Session-Id: ${"0".repeat(32)}`]],
	]) {
		const out = await rawHead([...sess, ...extra]);
		has(out.split("\r\n")[0], "400", `${what} given twice: 400`, out);
		has(out, "more than once", "saying so", out);
		ok(!out.includes(sid), "and the session's id is not in the answer", out);
	}
	r = await post({ jsonrpc: "2.0", method: "notifications/initialized" }, { ...auth, "Mcp-Session-Id": sid });
	eq(r.status, 202, "a notification: 202");
	r = await post({ jsonrpc: "2.0", id: 2, method: "tools/list" }, { ...auth, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18" });
	eq(r.status, 400, "MCP-Protocol-Version other than the negotiated one: 400");
	r = await post({ jsonrpc: "2.0", id: 2, method: "tools/list" }, { ...auth });
	eq(r.status, 400, "no Mcp-Session-Id after initialize: 400");
	r = await post({ jsonrpc: "2.0", id: 2, method: "tools/list" }, { ...auth, "Mcp-Session-Id": "0".repeat(32) });
	eq(r.status, 404, "an unknown Mcp-Session-Id: 404");
	// nothing reaches the app without the token
	r = await post({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "write_file", arguments: { path: "leak.txt", content: "x" } } }, { "Mcp-Session-Id": sid });
	eq(r.status, 401, "a tools/call without the token: 401");
	r = await post({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "read_file", arguments: { path: "leak.txt" } } }, { ...auth, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25", Accept: "application/json" });
	const body = await r.json();
	eq(body.result?.isError, true, "and nothing was written: leak.txt does not exist");
	// a tools/call's answer: an event stream when the client takes one, else JSON
	const call = (id, accept) =>
		fetch(srv.url, {
			method: "POST",
			headers: { ...auth, "Content-Type": "application/json", Accept: accept, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25" },
			body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "list_files", arguments: {} } }),
		});
	r = await call(10, "application/json, text/event-stream");
	eq(r.headers.get("content-type"), "text/event-stream", "tools/call, Accept both: answered as an event stream");
	const events = (await r.text()).split("\n\n").filter((e) => e.startsWith("event: message"));
	eq(events.length, 1, "one message event");
	const ev = JSON.parse(events[0]?.replace(/^event: message\ndata: /, "") ?? "null");
	eq([ev?.id, ev?.result?.isError], [10, false], "the call's response");
	r = await call(11, "application/json");
	eq(r.headers.get("content-type"), "application/json", "Accept application/json only: JSON");
	eq((await r.json()).id, 11, "the call's response");
	r = await fetch(srv.url, { method: "PUT", headers: auth });
	eq(r.status, 405, "PUT: 405");
	r = await fetch(srv.url.replace(/\/mcp$/, "/other"), { method: "POST", headers: auth, body: "{}" });
	eq(r.status, 404, "another path: 404");
	r = await fetch(srv.url, { method: "GET", headers: { ...auth, Accept: "text/event-stream" } });
	eq(r.status, 405, "GET without a session: 405 (no stream)");
	r = await fetch(srv.url, { method: "DELETE", headers: { ...auth, "Mcp-Session-Id": sid } });
	eq(r.status, 200, "DELETE ends the session: 200");
	r = await post({ jsonrpc: "2.0", id: 5, method: "tools/list" }, { ...auth, "Mcp-Session-Id": sid });
	eq(r.status, 404, "then its id gets 404");
	eq(await srv.stop(), { code: 0, sig: null }, "exits 0 on SIGTERM");
}, 60000);

await test("Streamable HTTP: connections without the token cannot lock the token's holder out", async () => {
	const app = appCopy("filesystem", "flood");
	const srv = await listen({ apps: [["filesystem", app.dir]], tag: "flood" });
	const { port } = new URL(srv.url);
	// more connections than the server's 71 places, none with the token: half
	// idle, half sending a head slowly (slowloris); each held open
	const socks = [];
	let closed = 0;
	for (let i = 0; i < 90; i++) {
		const s = net.connect(Number(port), "127.0.0.1");
		s.on("error", () => {});
		s.on("close", () => closed++);
		if (i % 2) s.on("connect", () => s.write("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
		socks.push(s);
		await sleep(5);
	}
	await sleep(500);
	const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } };
	let r = null;
	try {
		r = await fetch(srv.url, { method: "POST", signal: AbortSignal.timeout(5000), headers: { Authorization: `Bearer ${srv.token}`, "Content-Type": "application/json", Accept: "application/json" }, body: JSON.stringify(init) });
	} catch (e) {
		note(`initialize behind the flood: ${e}`);
	}
	eq(r?.status, 200, "with 90 connections without the token open, the token's holder is still served (200, within 5 s)");
	ok(closed >= 90 - 71, `the oldest connections without the token were closed to make room (${closed} closed)`);
	for (const s of socks) s.destroy();
	eq(await srv.stop(), { code: 0, sig: null }, "exits 0");
}, 60000);

await test("Streamable HTTP: a session ended while a call waits", async () => {
	const app = appCopy("probe", "http-end");
	const srv = await listen({ apps: [["probe", app.dir]], tag: "http-end" });
	const hdr = { Authorization: `Bearer ${srv.token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
	let r = await fetch(srv.url, { method: "POST", headers: hdr, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } }) });
	const sid = r.headers.get("mcp-session-id");
	await r.text();
	const s = { ...hdr, "Mcp-Session-Id": sid };
	const hang = fetch(srv.url, { method: "POST", headers: s, body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "hang", arguments: {} } }) });
	await sleep(500);
	r = await fetch(srv.url, { method: "DELETE", headers: s });
	eq(r.status, 200, "DELETE while a call waits: 200");
	const h = await hang;
	eq([h.status, h.headers.get("content-type")], [200, "text/event-stream"], "the waiting call's stream (its head sent at once)");
	has(await h.text(), '"id":2,"error":{"code":-32000,"message":"the session ended before the answer', "ends with an error answer: the session ended");
	const json = fetch(srv.url, { method: "POST", headers: { ...hdr, Accept: "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } }) });
	const sid2 = (await json).headers.get("mcp-session-id");
	const s2 = { ...hdr, Accept: "application/json", "Mcp-Session-Id": sid2 };
	const hang2 = fetch(srv.url, { method: "POST", headers: s2, body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "hang", arguments: {} } }) });
	await sleep(500);
	eq((await fetch(srv.url, { method: "DELETE", headers: s2 })).status, 200, "again, with a client that takes JSON only");
	const h2 = await hang2;
	eq(h2.status, 404, "the waiting call is answered 404 (the session ended)");
	has(await h2.text(), "the session ended", "saying so");
	eq(await srv.stop(), { code: 0, sig: null }, "exits 0");
});

function run(args, env = {}) {
	return new Promise((resolve) => {
		execFile(BERTH, args, { env: { ...process.env, ...env }, cwd: TOP, timeout: 15000 }, (e, stdout, stderr) =>
			resolve({ code: e ? (typeof e.code === "number" ? e.code : -1) : 0, stdout, stderr }),
		);
	});
}

await test("a non-loopback address is refused without --yes", async () => {
	const app = appCopy("filesystem", "nonloop");
	const env = freshXdg("nonloop");
	for (const addr of ["0.0.0.0:8931", "192.0.2.7:8931", "[::]:8931"]) {
		const r = await run(["mcp", "--app", "filesystem", "--app-dir", app.dir, "--listen", addr], env);
		eq(r.code, 2, `--listen ${addr}: exit 2`);
		has(r.stderr, `--listen ${addr} is not a loopback address`, `--listen ${addr}: the message names the address`);
		has(r.stderr, "--yes", `--listen ${addr}: and says how to insist`);
	}
	// with --yes the address is tried: a documentation address (RFC 5737) is no address of this host
	const yes = await run(["mcp", "--app", "filesystem", "--app-dir", app.dir, "--listen", "192.0.2.7:0", "--yes"], env);
	eq(yes.code, 125, "--listen 192.0.2.7:0 --yes: past the loopback check, the bind fails: 125");
	has(yes.stderr, "cannot listen on 192.0.2.7:0", "naming the address");
	ok(!/bearer token/.test(yes.stderr), "and no token was given out for it");
	const bad = await run(["mcp", "--app", "filesystem", "--app-dir", app.dir, "--listen", "localhost:99999"], env);
	eq(bad.code, 2, "--listen localhost:99999: exit 2 (not an address and port)");
	has(bad.stderr, "localhost:99999", "the message names it");
});

// ---------------------------------------------------------------------------
function inspector(args) {
	// what `npx @modelcontextprotocol/inspector --cli ...` runs: the package's bin
	const bin = path.join(HERE, "node_modules", ".bin", "mcp-inspector");
	return new Promise((resolve) => {
		// its own HOME: the Inspector keeps a store under ~/.mcp-inspector
		const home = path.join(TOP, "inspector-home");
		fs.mkdirSync(home, { recursive: true });
		const child = spawn(bin, ["--cli", ...args], { cwd: TOP, env: { ...process.env, HOME: home }, stdio: ["ignore", "pipe", "pipe"] });
		let out = "";
		let err = "";
		child.stdout.on("data", (b) => (out += b));
		child.stderr.on("data", (b) => (err += b));
		const t = setTimeout(() => child.kill("SIGKILL"), 60000);
		child.on("exit", (code) => (clearTimeout(t), resolve({ code, out, err })));
	});
}

await test("the MCP Inspector's CLI mode (tools/list) over stdio and HTTP", async () => {
	const app = appCopy("filesystem", "inspector");
	const env = freshXdg("inspector");
	const envArgs = Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
	let r = await inspector([...envArgs, BERTH, "mcp", "--app", "filesystem", "--app-dir", app.dir, "--method", "tools/list"]);
	eq(r.code, 0, "stdio: exit 0", r.err);
	let names;
	try {
		names = JSON.parse(r.out).tools.map((t) => t.name);
	} catch {
		names = r.out;
	}
	eq(names, FS_TOOLS, "stdio: the tools");
	const srv = await listen({ apps: [["filesystem", app.dir]], tag: "inspector-http" });
	r = await inspector([srv.url, "--transport", "http", "--header", `Authorization: Bearer ${srv.token}`, "--method", "tools/list"]);
	eq(r.code, 0, "http: exit 0", r.err);
	try {
		names = JSON.parse(r.out).tools.map((t) => t.name);
	} catch {
		names = r.out;
	}
	eq(names, FS_TOOLS, "http: the tools");
	r = await inspector([srv.url, "--transport", "http", "--method", "tools/list"]);
	ok(r.code !== 0, "http without the token: the Inspector fails", r.out, r.err);
	ok(/\b401\b|auth_required/.test(r.err + r.out), "because the server wants authorization (401: the Inspector says auth_required)", r.out, r.err);
}, 120000);

process.exit(finish());
