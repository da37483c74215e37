// SPDX-License-Identifier: MIT
// bench/mcp_sdk.mjs - `berth mcp` as the official MCP TypeScript SDK client
// sees it (@modelcontextprotocol/sdk, tests/mcp's install), over stdio or
// Streamable HTTP (`berth mcp --listen 127.0.0.1:0`).  Run by
// bench/bench-mcp-sdk.sh, which sets NODE_PATH and the XDG directories.
//
//   node mcp_sdk.mjs cold N stdio|http BERTH APPDIR
//     N times: start berth mcp (stdio: the SDK spawns it; http: the server is
//     started and the client connects once it says where it listens),
//     initialize, the first tools/call (write_file, which boots the app)
//     answered; then the process is ended.  After 2 warm-up runs.
//   node mcp_sdk.mjs warm N stdio|http BERTH APPDIR
//     one server and client, after a first call: N sequential tools/call
//     round trips (read_file).
// Prints one line: "<what>: n=N min .. ms, median .. ms, p90 .. ms, max .. ms".
import { spawn } from "node:child_process";
import { performance } from "node:perf_hooks";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, nText, transportKind, berth, appDir] = process.argv.slice(2);
const N = Number(nText);
const argv = ["mcp", "--app", "filesystem", "--app-dir", appDir, "--no-dev"];

async function start() {
	const client = new Client({ name: "bench-mcp-sdk", version: "1" });
	if (transportKind === "stdio") {
		const transport = new StdioClientTransport({ command: berth, args: argv, env: process.env, stderr: "ignore" });
		await client.connect(transport);
		return { client, stop: () => client.close() };
	}
	const child = spawn(berth, [...argv, "--listen", "127.0.0.1:0"], { stdio: ["ignore", "ignore", "pipe"] });
	let err = "";
	const exited = new Promise((r) => child.on("exit", r));
	const where = await new Promise((resolve, reject) => {
		child.stderr.on("data", (b) => {
			err += b;
			const m = /listening on (\S+)/.exec(err);
			if (m && /bearer token: ([0-9a-f]+)/.test(err)) resolve(m[1]);
		});
		child.on("exit", () => reject(new Error(`berth mcp --listen exited: ${err}`)));
	});
	const token = /bearer token: ([0-9a-f]+)/.exec(err)[1];
	const transport = new StreamableHTTPClientTransport(new URL(where), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
	await client.connect(transport);
	return {
		client,
		stop: async () => {
			await transport.terminateSession().catch(() => {});
			await client.close();
			child.kill("SIGTERM");
			await exited;
		},
	};
}

function report(what, v) {
	v.sort((a, b) => a - b);
	const q = (p) => v[Math.min(v.length - 1, Math.floor(p * v.length))];
	const med = v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
	console.log(`${what}: n=${v.length} min ${v[0].toFixed(3)} ms, median ${med.toFixed(3)} ms, p90 ${q(0.9).toFixed(3)} ms, max ${v[v.length - 1].toFixed(3)} ms`);
}

const times = [];
if (mode === "cold") {
	for (let i = -2; i < N; i++) {
		const t0 = performance.now();
		const s = await start();
		const r = await s.client.callTool({ name: "write_file", arguments: { path: `cold-${i}.txt`, content: "x" } });
		const t1 = performance.now();
		if (r.isError) throw new Error(`the first call failed: ${JSON.stringify(r)}`);
		await s.stop();
		if (i >= 0) times.push(t1 - t0);
	}
	report(`cold (${transportKind}, SDK): start -> first tools/call answered`, times);
} else {
	const s = await start();
	await s.client.callTool({ name: "write_file", arguments: { path: "warm.txt", content: "warm" } });
	for (let i = -20; i < N; i++) {
		const t0 = performance.now();
		const r = await s.client.callTool({ name: "read_file", arguments: { path: "warm.txt" } });
		const t1 = performance.now();
		if (r.isError) throw new Error(`a warm call failed: ${JSON.stringify(r)}`);
		if (i >= 0) times.push(t1 - t0);
	}
	await s.stop();
	report(`warm (${transportKind}, SDK): tools/call round trip`, times);
}
process.exit(0);
