// SPDX-License-Identifier: MIT
// A client that mcp.test.mjs kills with SIGKILL: it connects the SDK client
// to `berth mcp --app probe --app-dir DIR`, calls ping (booting the app),
// leaves a `hang` call in flight, prints {"berth": PID, "ping": isError} on
// one line and waits to be killed.
//   node kill-child.mjs BERTH PROBE-DIR     (XDG_* from the environment)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [berth, dir] = process.argv.slice(2);
const env = { XDG_STATE_HOME: process.env.XDG_STATE_HOME, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR };
const transport = new StdioClientTransport({ command: berth, args: ["mcp", "--app", "probe", "--app-dir", dir], env, stderr: "inherit" });
const client = new Client({ name: "berth-mcp-kill-child", version: "1.0.0" }, { capabilities: {} });
await client.connect(transport);
const ping = await client.callTool({ name: "ping", arguments: {} });
client.callTool({ name: "hang", arguments: {} }, undefined, { timeout: 3600000 }).catch(() => {});
await new Promise((r) => setTimeout(r, 300));
process.stdout.write(JSON.stringify({ berth: transport.pid, ping: ping.isError }) + "\n");
setInterval(() => {}, 1 << 30);
