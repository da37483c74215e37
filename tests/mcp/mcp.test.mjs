// SPDX-License-Identifier: MIT
// End-to-end tests of `berth mcp` (src/supervisor/mcp.c) through the official
// MCP TypeScript SDK client and its stdio transport, plus raw JSON-RPC where the
// SDK cannot ask for something (older protocol revisions).  TAP output.
// Run through tests/mcp/run-mcp.sh BERTH REPO, which sets the environment.
import { execFileSync, spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";

import {
	LoggingMessageNotificationSchema,
	McpError,
	ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

import {
	BERTH,
	IS_ROOT,
	TOP,
	UNIQ,
	alive,
	allBerthCgroups,
	appCopy,
	berthCgroupDirs,
	cgroupProcs,
	closeAll,
	connect,
	defer,
	eq,
	finish,
	freshXdg,
	has,
	mountsOfTop,
	note,
	ok,
	procsMatching,
	raw,
	sleep,
	test,
	waitFor,
} from "./harness.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FS_TOOLS = ["write_file", "read_file", "list_files", "delete_file", "stat"];
const NOTES_TOOLS = ["add_note", "list_notes", "complete_note"];
const VERSION = execFileSync(BERTH, ["--version"], { encoding: "utf8" }).trim().replace(/^berth /, "");
const rnd = () => crypto.randomBytes(6).toString("hex");
const CG_BEFORE = allBerthCgroups(); // berth-* cgroups that existed before this run
const cgParents = new Set(); // where this run's apps got their berth-* cgroups

/* What a promise rejects with (an McpError, say), or {resolved: value}. */
async function rejection(p) {
	try {
		const v = await p;
		return { resolved: v };
	} catch (e) {
		return e;
	}
}

/* The content of a tool result's single text block. */
function text(r) {
	return r?.content?.length === 1 && r.content[0].type === "text" ? r.content[0].text : undefined;
}

function checkOkResult(r, want, desc) {
	eq(r.isError, false, `${desc}: isError false`);
	eq(r.structuredContent, want, `${desc}: structuredContent is the output`);
	eq(r.content?.length, 1, `${desc}: one content block`);
	eq(r.content?.[0]?.type, "text", `${desc}: a text block`);
	let parsed;
	try {
		parsed = JSON.parse(text(r));
	} catch {
		parsed = `<not JSON: ${text(r)}>`;
	}
	eq(parsed, want, `${desc}: the text block is the output as JSON`);
}

/* Start `berth dev DIR` with env; returns {dev, out(), exit, stop()} (stopped after the test). */
function startDev(dir, env) {
	let out = "";
	const dev = spawn(BERTH, ["dev", dir], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"], cwd: TOP });
	dev.stdout.on("data", (x) => (out += x));
	dev.stderr.on("data", (x) => (out += x));
	const exit = new Promise((r) => dev.on("exit", (code, sig) => r({ code, sig })));
	const stop = async () => {
		if (dev.exitCode === null && dev.signalCode === null) dev.kill("SIGTERM");
		return Promise.race([exit, sleep(5000).then(() => (dev.kill("SIGKILL"), exit))]);
	};
	defer(stop);
	return { dev, out: () => out, exit, stop };
}

/* Host pids of the processes below @pid (berth mcp's sandbox helpers: the janitor and the sandbox's
 * pid 1, which overwrite their copy of berth's argv, and the app), from the ppid in /proc/PID/stat. */
function descendants(pid) {
	const parent = new Map();
	for (const d of fs.readdirSync("/proc")) {
		if (!/^\d+$/.test(d)) continue;
		try {
			const st = fs.readFileSync(`/proc/${d}/stat`, "utf8");
			parent.set(Number(d), Number(st.slice(st.lastIndexOf(")") + 2).split(" ")[1]));
		} catch {
			/* gone meanwhile */
		}
	}
	const out = [];
	for (let changed = true; changed; ) {
		changed = false;
		for (const [p, pp] of parent)
			if ((pp === pid || out.includes(pp)) && !out.includes(p)) {
				out.push(p);
				changed = true;
			}
	}
	return out;
}

// ---------------------------------------------------------------------------
await test("initialize (SDK)", async () => {
	const fsApp = appCopy("filesystem", "init");
	const c = await connect({ apps: [["filesystem", fsApp.dir]], tag: "init" });
	defer(() => c.close());
	eq(c.client.getServerVersion(), { name: "berth", version: VERSION }, "serverInfo is {name: berth, version: `berth --version`}");
	eq(c.version, "2025-11-25", "the SDK (which asks for its latest revision) gets berth's latest, 2025-11-25");
	eq(
		c.client.getServerCapabilities(),
		{ tools: { listChanged: true }, logging: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
		"capabilities: tools.listChanged, logging and tasks (tools/call)",
	);
	ok(typeof c.client.getInstructions() === "string" && c.client.getInstructions().length > 0, "instructions are a non-empty string");
	eq(await c.client.ping(), {}, "ping answers {}");
});

await test("initialize (raw JSON-RPC): revisions", async () => {
	const fsApp = appCopy("filesystem", "rev");
	for (const rev of ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "1999-01-01"]) {
		const want = rev === "1999-01-01" ? "2025-11-25" : rev;
		const s = raw({ apps: [["filesystem", fsApp.dir]], tag: `rev-${rev}` });
		const init = await s.request("initialize", {
			protocolVersion: rev,
			capabilities: {},
			clientInfo: { name: "raw", version: "1" },
		});
		eq(init.result?.protocolVersion, want, `${rev}: protocolVersion answered ${want}`);
		eq(init.result?.serverInfo, { name: "berth", version: VERSION }, `${rev}: serverInfo`);
		s.notify("notifications/initialized");
		const list = await s.request("tools/list", {});
		const tools = list.result?.tools ?? [];
		eq(tools.map((t) => t.name), FS_TOOLS, `${rev}: tools/list names`);
		const structured = want >= "2025-06-18";
		eq(
			tools.map((t) => "outputSchema" in t),
			FS_TOOLS.map(() => structured),
			structured ? `${rev}: every tool has an outputSchema` : `${rev}: no tool has an outputSchema`,
		);
		const call = await s.request("tools/call", { name: "write_file", arguments: { path: `rev-${rev}.txt`, content: rev } });
		const out = { path: `rev-${rev}.txt`, bytes: rev.length };
		eq(
			Object.keys(call.result ?? {}).sort(),
			structured ? ["content", "isError", "structuredContent"] : ["content", "isError"],
			structured ? `${rev}: the call result has structuredContent` : `${rev}: the call result has no structuredContent`,
		);
		if (structured) eq(call.result?.structuredContent, out, `${rev}: structuredContent is the output`);
		eq(JSON.parse(text(call.result) ?? "null"), out, `${rev}: the text block is the output as JSON`);
		if (rev === "2025-03-26") {
			const again = await s.request("initialize", { protocolVersion: rev, capabilities: {}, clientInfo: { name: "raw", version: "1" } });
			eq(again.error?.code, -32600, `${rev}: a second initialize is refused (-32600)`);
			const unknown = await s.request("resources/list", {});
			eq(unknown.error?.code, -32601, `${rev}: an unknown method is -32601`);
		}
		eq(await s.close(), { code: 0, sig: null }, `${rev}: berth mcp exits 0 at end of input`);
	}
	const s = raw({ apps: [["filesystem", fsApp.dir]], tag: "rev-pre" });
	const early = await s.request("tools/list", {});
	eq(early.error?.code, -32600, "tools/list before initialize is refused (-32600)");
	const sid = await (s.send({ jsonrpc: "2.0", id: "req-α", method: "ping" }), s.waitMsg((m) => m.id === "req-α"));
	eq(sid, { jsonrpc: "2.0", id: "req-α", result: {} }, "ping with a string id: answered with that id");
	s.send({ jsonrpc: "2.0", id: 9 }); // neither request nor response
	eq((await s.waitMsg((m) => m.id === 9)).error?.code, -32600, "a message without a method is -32600");
	s.child.stdin.write("{not json\n");
	eq((await s.waitMsg((m) => m.id === null && m.error?.code === -32700)).error?.code, -32700, "a line that is not JSON is -32700 (id null)");
	eq(await s.close(), { code: 0, sig: null }, "berth mcp exits 0 at end of input");
});

// ---------------------------------------------------------------------------
await test("tools/list", async () => {
	const fsApp = appCopy("filesystem", "list");
	const c = await connect({ apps: [["filesystem", fsApp.dir]], tag: "list" });
	defer(() => c.close());
	const r = await c.client.listTools();
	eq(r.tools.map((t) => t.name), FS_TOOLS, "names, in manifest order");
	eq(r.nextCursor, undefined, "one page: no nextCursor");
	ok(r.tools.every((t) => t.inputSchema?.type === "object" && t.outputSchema?.type === "object"), "every tool has an inputSchema and an outputSchema of type object");
	const wf = r.tools.find((t) => t.name === "write_file");
	eq(wf?.description, "Write a text file (creating or replacing it)", "write_file: description from berth.yml");
	eq(
		wf?.inputSchema,
		{
			type: "object",
			properties: {
				path: { type: "string", description: "path relative to /workspace, or absolute" },
				content: { type: "string", description: "the whole new content, UTF-8 text" },
			},
			required: ["path", "content"],
		},
		"write_file: inputSchema from berth.yml",
	);
	eq(
		wf?.outputSchema,
		{ type: "object", properties: { path: { type: "string" }, bytes: { type: "integer" } }, required: ["path", "bytes"] },
		"write_file: outputSchema is the shorthand {path: string, bytes: integer} expanded",
	);
	eq(procsMatching(fsApp.marker), [], "listing tools boots no app");
});

await test("tools/list pagination (BERTH_MCP_PAGE_SIZE=2)", async () => {
	const fsApp = appCopy("filesystem", "page");
	const c = await connect({ apps: [["filesystem", fsApp.dir]], env: { ...freshXdg("page"), BERTH_MCP_PAGE_SIZE: "2" } });
	defer(() => c.close());
	const pages = [];
	let cursor;
	for (let i = 0; i < 10; i++) {
		const r = await c.client.listTools(cursor === undefined ? undefined : { cursor });
		pages.push({ names: r.tools.map((t) => t.name), next: r.nextCursor });
		cursor = r.nextCursor;
		if (cursor === undefined) break;
	}
	eq(pages.map((p) => p.names.length), [2, 2, 1], "three pages of 2, 2 and 1 tools");
	eq(pages.map((p) => typeof p.next), ["string", "string", "undefined"], "nextCursor on every page but the last");
	eq(pages.flatMap((p) => p.names), FS_TOOLS, "following nextCursor yields all 5 tools exactly once, in order");
	const bad = await rejection(c.client.listTools({ cursor: "not-a-cursor" }));
	ok(bad instanceof McpError, "an invalid cursor: the SDK raises McpError", bad);
	eq(bad?.code, -32602, "an invalid cursor is -32602");
	const past = await rejection(c.client.listTools({ cursor: "tools:99" }));
	eq(past?.code, -32602, "a cursor past the end is -32602");
});

await test("--only", async () => {
	const fsApp = appCopy("filesystem", "only");
	const c = await connect({ apps: [["filesystem", fsApp.dir]], args: ["--only", "write_file,read_file"], tag: "only" });
	defer(() => c.close());
	eq((await c.client.listTools()).tools.map((t) => t.name), ["write_file", "read_file"], "--only write_file,read_file lists those two");
	const e = await rejection(c.client.callTool({ name: "stat", arguments: { path: "." } }));
	eq(e?.code, -32602, "a tool left out is an unknown tool (-32602)");
	eq((await c.client.callTool({ name: "write_file", arguments: { path: "o.txt", content: "o" } })).isError, false, "a listed tool works");
});

// ---------------------------------------------------------------------------
await test("tools/call write_file, read_file", async () => {
	const fsApp = appCopy("filesystem", "call");
	const c = await connect({ apps: [["filesystem", fsApp.dir]], tag: "call" });
	defer(() => c.close());
	await c.client.listTools(); // the SDK then validates structuredContent against outputSchema
	const content = `hello from MCP ${UNIQ}\nhéllo ✓ — ünïcode\n`;
	const w = await c.client.callTool({ name: "write_file", arguments: { path: "hello.txt", content } });
	checkOkResult(w, { path: "hello.txt", bytes: Buffer.byteLength(content) }, "write_file");
	const r = await c.client.callTool({ name: "read_file", arguments: { path: "hello.txt" } });
	checkOkResult(r, { content }, "read_file");
	const host = path.join(c.env.XDG_STATE_HOME, "berth/apps/filesystem/workspace/hello.txt");
	eq(fs.existsSync(host) ? fs.readFileSync(host, "utf8") : "<missing>", content, "the file is in $XDG_STATE_HOME/berth/apps/filesystem/workspace with that content");
	const l = await c.client.callTool({ name: "list_files", arguments: {} });
	eq(l.structuredContent, { files: [{ name: "hello.txt", type: "file", size: Buffer.byteLength(content) }], truncated: false }, "list_files shows it");
	const missing = await c.client.callTool({ name: "read_file", arguments: { path: "nope.txt" } });
	eq(missing.isError, true, "read_file of a missing file: isError true");
	eq(missing.structuredContent, undefined, "a failed call has no structuredContent");
	has(text(missing), "(error -32001)", "a failed call's text names the error code");
	has(text(missing), '"errno_name":"ENOENT"', "a failed call's text carries the errno");
	eq(procsMatching(fsApp.marker).length, 1, "exactly one app process serves the calls");
});

await test("capability denial", async () => {
	const fsApp = appCopy("filesystem", "deny");
	const c = await connect({ apps: [["filesystem", fsApp.dir]], tag: "deny" });
	defer(() => c.close());
	const target = `/etc/berth-mcp-${UNIQ}-${rnd()}`;
	const r = await c.client.callTool({ name: "write_file", arguments: { path: target, content: "x" } });
	eq(r.isError, true, "write_file outside the sandbox: isError true");
	eq(r.structuredContent, undefined, "no structuredContent");
	const t = text(r) ?? "";
	has(t, "BERTH CAPABILITY DENIAL", "the text holds the denial block");
	has(t, `denied: open(2) on ${target} (`, "the text says `denied: open(2) on /etc/...`");
	has(t, "app: filesystem", "the denial names the app");
	has(t, "(error -32001)", "the text names error -32001");
	eq(fs.existsSync(target), false, "nothing appeared on the host");
	const after = await c.client.callTool({ name: "write_file", arguments: { path: "still-fine.txt", content: "ok" } });
	eq(after.isError, false, "the app still serves calls after the denial");
});

// ---------------------------------------------------------------------------
await test("50 concurrent calls", async () => {
	const fsApp = appCopy("filesystem", "conc");
	const c = await connect({ apps: [["filesystem", fsApp.dir]], tag: "conc" });
	defer(() => c.close());
	const N = 50;
	const files = Array.from({ length: N }, (_, i) => ({ path: `f${i}.txt`, content: `file ${i} ${UNIQ} ${rnd()}\n`.repeat(i + 1) }));
	const t0 = Date.now();
	const writes = await Promise.allSettled(files.map((f) => c.client.callTool({ name: "write_file", arguments: f })));
	const wok = writes.filter((w, i) => w.status === "fulfilled" && w.value.isError === false && w.value.structuredContent?.path === files[i].path && w.value.structuredContent?.bytes === Buffer.byteLength(files[i].content));
	eq(wok.length, N, `${N} concurrent write_file calls all succeed with the right output`, ...writes.filter((w) => w.status === "rejected" || w.value.isError).slice(0, 3).map((w) => JSON.stringify(w.reason?.message ?? w.value)));
	const reads = await Promise.allSettled(files.map((f) => c.client.callTool({ name: "read_file", arguments: { path: f.path } })));
	const rok = reads.filter((r, i) => r.status === "fulfilled" && r.value.isError === false && r.value.structuredContent?.content === files[i].content && JSON.parse(text(r.value)).content === files[i].content);
	eq(rok.length, N, `${N} concurrent read_file calls all return their file's content`);
	note(`100 calls in ${Date.now() - t0} ms`);
	const ws = path.join(c.env.XDG_STATE_HOME, "berth/apps/filesystem/workspace");
	eq(files.filter((f) => fs.readFileSync(path.join(ws, f.path), "utf8") === f.content).length, N, "all 50 files are on the host with their content");
	const ids = c.rx.filter((m) => "id" in m.msg && ("result" in m.msg || "error" in m.msg)).map((m) => m.msg.id);
	eq(new Set(ids).size, ids.length, "every response id is answered once");
});

// ---------------------------------------------------------------------------
await test("cancellation", async () => {
	const probe = appCopy("probe", "cancel");
	const TIMEOUT = 2000;
	const c = await connect({ apps: [["probe", probe.dir]], args: ["--timeout", String(TIMEOUT)], tag: "cancel" });
	defer(() => c.close());
	const p0 = await c.client.callTool({ name: "ping", arguments: {} });
	eq(p0.isError, false, "ping before: ok (the app is booted)");
	const boot0 = p0.structuredContent?.boot;
	const ac = new AbortController();
	const t0 = Date.now();
	setTimeout(() => ac.abort("test-cancel"), 300);
	const e = await rejection(c.client.callTool({ name: "hang", arguments: {} }, undefined, { signal: ac.signal }));
	const tRej = Date.now() - t0;
	ok(e instanceof McpError, "the aborted call rejects (McpError)", e);
	has(e?.message, "test-cancel", "with the abort reason");
	ok(tRej >= 250 && tRej < 1500, `it rejects when aborted (~300 ms; took ${tRej} ms)`);
	const hangReq = c.tx.find((m) => m.msg.method === "tools/call" && m.msg.params?.name === "hang");
	const hangId = hangReq?.msg.id;
	ok(hangId !== undefined, "the hang request was sent");
	const cancelled = c.tx.find((m) => m.msg.method === "notifications/cancelled");
	eq(cancelled?.msg.params?.requestId, hangId, "the SDK sent notifications/cancelled for it");

	// The app (sequential) is still asleep in `hang`; berth sent it
	// berth/cancel and keeps the call's slot until the call's deadline
	// (--timeout), when it kills the app.  What happens to a ping meanwhile?
	// It is sent 1.2 s after the hang (still inside the hang's 2 s): its
	// own deadline (--timeout, from when it is sent) then leaves the app's
	// restart 1.2 s, not the 0.3 s of an at-once ping (a loaded machine's
	// boot took longer than that).
	await sleep(Math.max(0, t0 + 1200 - Date.now()));
	const t1 = Date.now();
	const p1 = await c.client.callTool({ name: "ping", arguments: {} });
	const tPing = Date.now() - t1;
	const sinceHang = Date.now() - t0;
	note(`ping after the cancel: ${tPing} ms (${sinceHang} ms after hang was sent): ${JSON.stringify(p1)}`);
	eq(p1.isError, false, "a ping after the cancelled hang succeeds", `result: ${JSON.stringify(p1)}`);
	ok(tPing < TIMEOUT + 3000, `it is answered within --timeout + 3 s (${tPing} ms)`);
	const p2 = await c.client.callTool({ name: "ping", arguments: {} });
	eq(p2.isError, false, "a second ping succeeds");
	ok(p2.structuredContent?.boot !== boot0, "the hung app was stopped at the hang's deadline: the second ping is served by a fresh boot", `boot before ${boot0}, after ${p2.structuredContent?.boot}`);
	// Past the hang's deadline: still no answer for the cancelled request.
	await sleep(Math.max(0, t0 + TIMEOUT + 700 - Date.now()));
	eq(c.rx.filter((m) => m.msg.id === hangId).map((m) => m.msg), [], "the server sent nothing for the cancelled request (not even after its deadline)");
	eq(procsMatching(probe.marker).length, 1, "one app process is left serving");
});

await test("crash and timeout", async () => {
	const probe = appCopy("probe", "crash");
	const c = await connect({ apps: [["probe", probe.dir]], args: ["--timeout", "1000"], tag: "crash" });
	defer(() => c.close());
	const p0 = await c.client.callTool({ name: "ping", arguments: {} });
	eq(p0.isError, false, "ping: ok");
	const cr = await c.client.callTool({ name: "crash", arguments: {} });
	eq(cr.isError, true, "crash (SIGSEGV in the app): isError true");
	has(text(cr), "(error -32002)", "crash: error -32002");
	const p1 = await c.client.callTool({ name: "ping", arguments: {} });
	eq(p1.isError, false, "ping after the crash: ok");
	ok(p1.structuredContent?.boot !== p0.structuredContent?.boot, "served by a fresh boot");
	const t0 = Date.now();
	const h = await c.client.callTool({ name: "hang", arguments: {} });
	const took = Date.now() - t0;
	eq(h.isError, true, "hang with --timeout 1000: isError true");
	has(text(h), "(error -32003)", "hang: error -32003 (timed out)");
	ok(took >= 950 && took < 3000, `after about 1000 ms (${took} ms)`);
	const p2 = await c.client.callTool({ name: "ping", arguments: {} });
	eq(p2.isError, false, "ping after the timeout: ok");
	ok(p2.structuredContent?.boot !== p1.structuredContent?.boot, "served by a fresh boot (the hung app was stopped)");
	eq(procsMatching(probe.marker).length, 1, "one app process");
});

// ---------------------------------------------------------------------------
await test("invalid arguments and unknown tools", async () => {
	const fsApp = appCopy("filesystem", "args");
	const c = await connect({ apps: [["filesystem", fsApp.dir]], tag: "args" });
	defer(() => c.close());
	const e1 = await rejection(c.client.callTool({ name: "write_file", arguments: { path: 1, content: "x" } }));
	ok(e1 instanceof McpError, "write_file {path: 1}: the SDK raises McpError", e1);
	eq(e1?.code, -32602, "write_file {path: 1}: code -32602 (invalid params)");
	eq(e1?.data, { path: "$.path", reason: "expected string, got integer" }, "its data: {path: $.path, reason: expected string, got integer}");
	const e2 = await rejection(c.client.callTool({ name: "write_file", arguments: { path: "a.txt" } }));
	eq(e2?.code, -32602, "write_file without content: -32602");
	eq(e2?.data, { path: "$", reason: "missing required property `content`" }, "its data: {path: $, reason: missing required property `content`}");
	const e3 = await rejection(c.client.callTool({ name: "no_such_tool", arguments: {} }));
	ok(e3 instanceof McpError, "an unknown tool: McpError", e3);
	eq(e3?.code, -32602, "an unknown tool: -32602");
	has(e3?.message, "no_such_tool", "the message names the tool");
	eq(procsMatching(fsApp.marker), [], "the app never saw them: it was not even booted");
	eq(fs.existsSync(path.join(c.env.XDG_STATE_HOME, "berth/apps/filesystem/workspace/a.txt")), false, "no file was written");
	const good = await c.client.callTool({ name: "write_file", arguments: { path: "a.txt", content: "x" } });
	eq(good.isError, false, "a valid call afterwards succeeds");
	eq(procsMatching(fsApp.marker).length, 1, "and boots the app");
	const e4 = await rejection(c.client.callTool({ name: "write_file", arguments: { path: "b.txt", content: ["x"] } }));
	eq(e4?.code, -32602, "with the app running, {content: [..]}: -32602");
	eq(fs.existsSync(path.join(c.env.XDG_STATE_HOME, "berth/apps/filesystem/workspace/b.txt")), false, "and the app did not write b.txt");
});

// ---------------------------------------------------------------------------
await test("two apps", async () => {
	const fsApp = appCopy("filesystem", "two");
	const notes = appCopy("notes", "two");
	const c = await connect({ apps: [["filesystem", fsApp.dir], ["notes", notes.dir]], tag: "two" });
	defer(() => c.close());
	const r = await c.client.listTools();
	eq(r.tools.map((t) => t.name), [...FS_TOOLS.map((n) => `filesystem__${n}`), ...NOTES_TOOLS.map((n) => `notes__${n}`)], "tools are named APP__EXPORT, app by app");
	const w = await c.client.callTool({ name: "filesystem__write_file", arguments: { path: "two.txt", content: "2" } });
	checkOkResult(w, { path: "two.txt", bytes: 1 }, "filesystem__write_file");
	const a = await c.client.callTool({ name: "notes__add_note", arguments: { text: `note ${UNIQ}` } });
	checkOkResult(a, { id: 1 }, "notes__add_note");
	const l = await c.client.callTool({ name: "notes__list_notes", arguments: {} });
	checkOkResult(l, { notes: [{ id: 1, text: `note ${UNIQ}`, done: false }] }, "notes__list_notes");
	eq(fs.readFileSync(path.join(c.env.XDG_STATE_HOME, "berth/apps/filesystem/workspace/two.txt"), "utf8"), "2", "filesystem's workspace holds two.txt");
	eq(fs.existsSync(path.join(c.env.XDG_STATE_HOME, "berth/apps/notes/workspace/two.txt")), false, "notes' workspace does not");
	const e = await rejection(c.client.callTool({ name: "write_file", arguments: { path: "x", content: "x" } }));
	eq(e?.code, -32602, "an unprefixed name is an unknown tool (-32602)");
	eq([procsMatching(fsApp.marker).length, procsMatching(notes.marker).length], [1, 1], "one process per app");
});

// ---------------------------------------------------------------------------
await test("logging", async () => {
	const probe = appCopy("probe", "log");
	const c = await connect({ apps: [["probe", probe.dir]], tag: "log" });
	defer(() => c.close());
	const msgs = [];
	c.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => msgs.push(n.params));
	eq(await c.client.setLoggingLevel("debug"), {}, "logging/setLevel debug answers {}");
	const word = `log-${UNIQ}-${rnd()}`;
	const r = await c.client.callTool({ name: "log", arguments: { text: word } });
	checkOkResult(r, {}, "log");
	const got = await waitFor(() => msgs.find((m) => m.data === `stderr: ${word}`), 3000);
	eq(got, { level: "info", logger: "probe", data: `stderr: ${word}` }, "the app's stderr line arrives as notifications/message (info, logger probe)");
	const gotOut = await waitFor(() => msgs.find((m) => m.data === `stdout: ${word}`), 3000);
	eq(gotOut, { level: "info", logger: "probe", data: `stdout: ${word}` }, "and its stdout line too");
	eq(await c.client.setLoggingLevel("error"), {}, "logging/setLevel error answers {}");
	const word2 = `quiet-${UNIQ}-${rnd()}`;
	await c.client.callTool({ name: "log", arguments: { text: word2 } });
	await waitFor(() => c.stderr().includes(`[probe] stderr: ${word2}`), 3000);
	await sleep(700);
	eq(msgs.filter((m) => String(m.data).includes(word2)), [], "at level error, info lines are not sent");
	has(c.stderr(), `[probe] stderr: ${word2}`, "(they still reach berth's stderr)");
	const bad = await rejection(c.client.setLoggingLevel("loud"));
	eq(bad?.code, -32602, "an unknown level is -32602");
});

// ---------------------------------------------------------------------------
await test("list_changed through berth dev", async () => {
	const probe = appCopy("probe", "dev");
	const env = freshXdg("dev");
	const sock = path.join(env.XDG_RUNTIME_DIR, "berth/dev/probe.sock");
	const d = startDev(probe.dir, env);
	ok(await waitFor(() => fs.existsSync(sock), 15000), "berth dev's control socket appears", d.out());
	const c = await connect({ apps: [["probe", probe.dir]], env, tag: "dev" });
	defer(() => c.close());
	/* stderr and stdout are two pipes: the line may be read after initialize's answer. */
	await waitFor(() => c.stderr().includes("is served by a running `berth dev`"), 3000);
	has(c.stderr(), "is served by a running `berth dev`", "berth mcp attaches to the running berth dev");
	const changed = [];
	c.client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed.push(Date.now()));
	const before = await c.client.listTools();
	const oldDesc = "Answer with the build tag, the pid inside the sandbox and a token fixed at boot";
	eq(before.tools.find((t) => t.name === "ping")?.description, oldDesc, "ping's description before");
	const p0 = await c.client.callTool({ name: "ping", arguments: {} });
	eq(p0.isError, false, "ping through berth dev: ok");
	eq(procsMatching(probe.marker).length, 1, "one app process (berth dev's; berth mcp booted none)");

	const yml = path.join(probe.dir, "berth.yml");
	const newDesc = `Ping, described anew by the MCP test ${UNIQ}`;
	const src = fs.readFileSync(yml, "utf8");
	ok(src.includes(`description: ${oldDesc}\n`), "berth.yml holds ping's description");
	const t0 = Date.now();
	fs.writeFileSync(yml, src.replace(`description: ${oldDesc}\n`, `description: ${newDesc}\n`));
	/* berth dev reboots the app before it says so: seconds on a loaded machine; a deadline, not a speed */
	const at = await waitFor(() => changed[0], 15000);
	ok(at !== undefined, `notifications/tools/list_changed arrives (within 15 s)${at ? ` (${at - t0} ms)` : ""}`, d.out());
	const after = await c.client.listTools();
	eq(after.tools.find((t) => t.name === "ping")?.description, newDesc, "listTools then shows the new description");
	eq(after.tools.map((t) => t.name), before.tools.map((t) => t.name), "and the same tools");

	// A new export: the code first (berth dev's reload then fails export parity), then the manifest.
	const py = path.join(probe.dir, probe.entry);
	const code = fs.readFileSync(py, "utf8");
	const n0 = changed.length;
	fs.writeFileSync(py, code.replace("\napp.run()", `\n@app.export("echo")\ndef echo(text):\n    return {"text": text}\n\n\napp.run()`));
	await sleep(600);
	fs.appendFileSync(yml, `  - name: echo\n    description: Echo ${UNIQ}\n    input: {text: string}\n    output: {text: string}\n`);
	const at2 = await waitFor(() => changed.length > n0, 15000);
	ok(at2, "list_changed again after an export was added", d.out());
	const added = await c.client.listTools();
	eq(added.tools.map((t) => t.name).filter((n) => n === "echo"), ["echo"], "listTools shows the new export `echo`");
	const echo = await c.client.callTool({ name: "echo", arguments: { text: UNIQ } });
	eq(echo.structuredContent, { text: UNIQ }, "calling it works (through the reloaded berth dev)", JSON.stringify(echo), d.out());

	d.dev.kill("SIGTERM");
	const ex = await Promise.race([d.exit, sleep(8000).then(() => "still running")]);
	eq(ex, { code: 0, sig: null }, "berth dev exits 0 on SIGTERM", d.out());
	eq(await waitFor(() => procsMatching(probe.marker).length === 0, 5000), true, "its app process is gone");
	const local = await c.client.callTool({ name: "ping", arguments: {} });
	eq(local.isError, false, "with berth dev gone, berth mcp boots the app itself", JSON.stringify(local), c.stderr());
	eq(procsMatching(probe.marker).length, 1, "its own app process");
	const msgs = [];
	c.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => msgs.push(n.params));
	await c.client.setLoggingLevel("debug");
	const word = `devlog-${UNIQ}-${rnd()}`;
	eq((await c.client.callTool({ name: "log", arguments: { text: word } })).isError, false, "log on the app it booted: ok");
	const got = await waitFor(() => msgs.find((m) => m.data === `stderr: ${word}`), 3000);
	eq(got, { level: "info", logger: "probe", data: `stderr: ${word}` }, "its stderr line arrives as notifications/message (as without berth dev)", `berth mcp stderr:\n${c.stderr()}`);
	/* stdout and stderr are two pipes: the notification may be read first. */
	await waitFor(() => c.stderr().includes(`[probe] stderr: ${word}`), 3000);
	has(c.stderr(), `[probe] stderr: ${word}`, "and reaches berth mcp's stderr");
});

// The recipe for list_changed is "wait for berth dev's control socket, then
// edit the app"; an edit made at once must not be lost.
await test("berth dev notices a change made as soon as its control socket appears", async () => {
	const probe = appCopy("probe", "race");
	const env = freshXdg("race");
	const d = startDev(probe.dir, env);
	ok(await waitFor(() => fs.existsSync(path.join(env.XDG_RUNTIME_DIR, "berth/dev/probe.sock")), 15000, 2), "the control socket appears", d.out());
	const yml = path.join(probe.dir, "berth.yml");
	fs.writeFileSync(yml, fs.readFileSync(yml, "utf8").replace("description: Sleep for an hour\n", `description: Sleep for an hour (${UNIQ})\n`));
	const reloaded = await waitFor(() => d.out().includes("berth: dev: reloaded `probe`"), 2000);
	ok(reloaded, "berth dev reloads the app within 2 s of the edit", `berth dev output:\n${d.out()}`);
	const c = await connect({ apps: [["probe", probe.dir]], env, tag: "race" });
	defer(() => c.close());
	await waitFor(() => c.stderr().includes("is served by a running `berth dev`"), 3000);
	has(c.stderr(), "is served by a running `berth dev`", "berth mcp attaches to it");
	eq((await c.client.callTool({ name: "ping", arguments: {} })).isError, false, "a call through it works");
});

await test("berth dev serving the app from another directory", async () => {
	const a = appCopy("probe", "deva");
	const b = appCopy("probe", "devb");
	const env = freshXdg("devab");
	const d = startDev(a.dir, env);
	ok(await waitFor(() => fs.existsSync(path.join(env.XDG_RUNTIME_DIR, "berth/dev/probe.sock")), 15000), "berth dev (directory A) is up", d.out());
	const c = await connect({ apps: [["probe", b.dir]], env, tag: "devb" });
	defer(() => c.close());
	const p = await c.client.callTool({ name: "ping", arguments: {} });
	eq(p.isError, false, "a call for directory B is served (not by A's berth dev)", JSON.stringify(p), `berth mcp stderr:\n${c.stderr()}`);
	const p2 = await c.client.callTool({ name: "ping", arguments: {} });
	eq(p2.isError, false, "the next call too");
	eq(procsMatching(b.marker).length, 1, "by an app booted from directory B");
	eq(procsMatching(a.marker).length, 1, "A's berth dev keeps its own app");
});

// ---------------------------------------------------------------------------
/* Wait up to 5 s for everything of one server to be gone; check each part. */
async function checkGone(what, pids, marker, cgdirs) {
	const gone = await waitFor(() => pids.every((p) => !alive(p)) && procsMatching(marker).length === 0, 5000);
	eq(gone ? [] : pids.filter(alive), [], `${what}: berth mcp and its sandbox helpers exit within 5 s`);
	eq(procsMatching(marker), [], `${what}: no app process left`);
	if (IS_ROOT) ok(cgdirs.length > 0, `${what}: (root) the app ran in berth-* cgroups (${cgdirs.length})`);
	for (const d of cgdirs) cgParents.add(path.dirname(d));
	const left = await waitFor(() => cgdirs.every((d) => !fs.existsSync(d)), 5000);
	eq(left ? [] : cgdirs.filter((d) => fs.existsSync(d)), [], `${what}: its berth-* cgroup directories are removed`);
	eq(mountsOfTop(), [], `${what}: no mount of the test's directories left on the host`);
}

await test("cleanup after client.close()", async () => {
	const fsApp = appCopy("filesystem", "close");
	const c = await connect({ apps: [["filesystem", fsApp.dir]], tag: "close" });
	defer(() => c.close());
	const w = await c.client.callTool({ name: "write_file", arguments: { path: "x.txt", content: "x" } });
	eq(w.isError, false, "a call (boots the app)");
	const apps = procsMatching(fsApp.marker);
	eq(apps.length, 1, "one app process");
	const cg = apps.flatMap(berthCgroupDirs);
	const pids = [...new Set([c.pid, ...descendants(c.pid), ...apps])];
	ok(pids.length >= 3, `berth mcp, its helpers and the app are visible (${pids.join(" ")})`);
	const proc = c.transport._process; // the SDK's ChildProcess (to read berth mcp's exit status)
	const t0 = Date.now();
	await c.close();
	const took = Date.now() - t0;
	ok(took < 1900, `client.close() returns before the SDK's 2 s SIGTERM fallback: berth exits at end of input (${took} ms)`);
	eq({ code: proc?.exitCode, sig: proc?.signalCode }, { code: 0, sig: null }, "berth mcp exited 0 (not by a signal)");
	ok(!c.stderr().includes("signal 15"), "berth mcp was not SIGTERMed", c.stderr());
	await checkGone("close", pids, fsApp.marker, cg);
});

await test("cleanup after the client is SIGKILLed", async () => {
	const probe = appCopy("probe", "kill");
	const env = freshXdg("kill");
	const child = spawn(process.execPath, [path.join(HERE, "kill-child.mjs"), BERTH, probe.dir], {
		env: { ...process.env, ...env },
		stdio: ["ignore", "pipe", "pipe"],
		cwd: TOP,
	});
	let childErr = "";
	child.stderr.on("data", (b) => (childErr += b));
	const childExit = new Promise((r) => child.on("exit", (code, sig) => r({ code, sig })));
	defer(async () => {
		if (child.exitCode === null && child.signalCode === null) {
			child.kill("SIGKILL");
			await childExit;
		}
	});
	const line = await new Promise((resolve) => {
		const rl = readline.createInterface({ input: child.stdout });
		rl.once("line", resolve);
		childExit.then(() => resolve(null));
	});
	let info = {};
	try {
		info = JSON.parse(line);
	} catch {
		info = { bad: line };
	}
	ok(Number.isInteger(info.berth), "the child connected and reports berth mcp's pid", line, childErr);
	eq(info.ping, false, "the child's ping succeeded (isError false)");
	const apps = procsMatching(probe.marker);
	eq(apps.length, 1, "one app process (a hang call in flight)");
	const cg = apps.flatMap(berthCgroupDirs);
	const pids = [...new Set([info.berth, ...descendants(info.berth), ...apps])].filter(Number.isInteger);
	child.kill("SIGKILL");
	eq(await childExit, { code: null, sig: "SIGKILL" }, "the client died of SIGKILL");
	await checkGone("SIGKILL", pids, probe.marker, cg);
});

await closeAll();
await test("end", async () => {
	// New berth-* cgroups next to the ones this run's apps had, still there and
	// empty after 5 s, are leaks (a concurrent berth run's live ones hold processes).
	const fresh = () => [...allBerthCgroups()].filter((d) => !CG_BEFORE.has(d) && cgParents.has(path.dirname(d)));
	await waitFor(() => fresh().length === 0, 5000, 100);
	eq(fresh().filter((d) => cgroupProcs(d).length === 0), [], `no new empty berth-* cgroup directory left in ${[...cgParents].join(" ") || "(none used)"}`);
	eq(mountsOfTop(), [], "no mount of the test's directories on the host");
});
eq(procsMatching(new RegExp(TOP.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))), [], "end: no process of this run is left");
process.exitCode = finish();
