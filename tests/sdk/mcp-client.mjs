// SPDX-License-Identifier: MIT
// The tsprobe app (written with @berth/sdk) through `berth mcp`, called by the
// official MCP TypeScript SDK client.  usage: node mcp-client.mjs NODE_MODULES BERTH APP-DIR
import { createRequire } from "node:module";
import assert from "node:assert/strict";

const [nm, berth, dir] = process.argv.slice(2);
const require = createRequire(nm + "/");
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

const client = new Client({ name: "berth-sdk-test", version: "0.0.0" });
await client.connect(new StdioClientTransport({
	command: berth, args: ["mcp", "--app", "tsprobe", "--app-dir", dir], env: process.env, stderr: "inherit",
}));
const { tools } = await client.listTools();
assert.deepEqual(tools.map((t) => t.name), ["note", "read"]);
assert.deepEqual(tools[0].inputSchema.required, ["file", "text"]);
const ok = await client.callTool({ name: "note", arguments: { file: "mcp.txt", text: "from the MCP client" } });
assert.equal(ok.isError, undefined === ok.isError ? undefined : false);
assert.equal(ok.structuredContent.cwd, "/workspace");
assert.equal(ok.structuredContent.bytes, 19);
const denied = await client.callTool({ name: "note", arguments: { file: "/app/index.js", text: "x" } });
assert.equal(denied.isError, true);
assert.match(denied.content[0].text, /EROFS/);
const bad = await client.callTool({ name: "note", arguments: { file: 3, text: "x" } }).catch((e) => e);
assert.ok(bad instanceof Error ? /-32602|expected string/.test(bad.message) : bad.isError, JSON.stringify(bad));
await client.close();
console.log("mcp client: ok");
