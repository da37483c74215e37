// SPDX-License-Identifier: MIT
// A small TAP harness and the helpers the `berth mcp` end-to-end tests share:
// temporary state, app copies with unique markers, SDK clients over the stdio
// transport, a raw JSON-RPC client, and /proc inspection (processes, cgroups,
// mounts).  No test is ever skipped: a missing precondition is a failure.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { isDeepStrictEqual, inspect } from "node:util";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

function need(name) {
	const v = process.env[name];
	if (!v) {
		console.log(`Bail out! ${name} is not set (run tests/mcp/run-mcp.sh BERTH REPO)`);
		process.exit(1);
	}
	return v;
}

export const BERTH = need("BERTH_MCP_BERTH"); // the berth binary
export const TOP = need("BERTH_MCP_TOP"); // this run's temporary directory (0755)
export const SRC = need("BERTH_MCP_SRC"); // pristine copies: filesystem, notes, probe
export const UNIQ = need("BERTH_MCP_UNIQ"); // a marker unique to this run
export const IS_ROOT = process.getuid() === 0;

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/* ------------------------------------------------------------ TAP */

let count = 0;
let failures = 0;
let current = "";

function diag(lines) {
	for (const l of lines)
		for (const s of String(l).split("\n").slice(0, 40)) console.log(`#   ${s}`);
}

function show(v) {
	return typeof v === "string" ? JSON.stringify(v) : inspect(v, { depth: 8, breakLength: 160 });
}

export function ok(cond, desc, ...more) {
	count++;
	const d = current ? `${current}: ${desc}` : desc;
	if (cond) {
		console.log(`ok ${count} - ${d}`);
	} else {
		failures++;
		console.log(`not ok ${count} - ${d}`);
		diag(more);
	}
	return !!cond;
}

export function eq(got, want, desc, ...more) {
	return ok(isDeepStrictEqual(got, want), desc, `got:  ${show(got)}`, `want: ${show(want)}`, ...more);
}

export function has(hay, needle, desc, ...more) {
	return ok(typeof hay === "string" && hay.includes(needle), desc, `looked for: ${show(needle)}`,
		`in: ${show(hay)}`, ...more);
}

export function note(s) {
	for (const l of String(s).split("\n")) console.log(`# ${l}`);
}

const cleanups = [];
/* defer(fn): run fn after the current test (last registered first). */
export function defer(fn) {
	cleanups.push(fn);
}

/* test(name, fn, ms): one group of checks; a throw or the time limit fails it. */
export async function test(name, fn, ms = 30000) {
	current = name;
	const t0 = Date.now();
	let timer;
	try {
		await Promise.race([
			fn(),
			new Promise((_, rej) => {
				timer = setTimeout(() => rej(new Error(`timed out after ${ms} ms`)), ms);
			}),
		]);
	} catch (e) {
		ok(false, `no unexpected exception`, e?.stack ?? String(e), ...(stderrHints.map((f) => f())));
	} finally {
		clearTimeout(timer);
		while (cleanups.length) {
			try {
				await cleanups.pop()();
			} catch (e) {
				note(`cleanup in ${name}: ${e?.message ?? e}`);
			}
		}
		stderrHints.length = 0;
	}
	note(`${name}: ${Date.now() - t0} ms`);
	current = "";
}

const stderrHints = [];

export function finish() {
	console.log(`1..${count}`);
	note(`${count - failures} passed, ${failures} failed`);
	return failures === 0 ? 0 : 1;
}

/* waitFor(fn, ms): poll fn (may be async) until it returns truthy; its value, or undefined. */
export async function waitFor(fn, ms, step = 25) {
	const end = Date.now() + ms;
	for (;;) {
		const v = await fn();
		if (v) return v;
		if (Date.now() >= end) return undefined;
		await sleep(step);
	}
}

/* ------------------------------------------------------------ files */

let nTmp = 0;

/* A fresh XDG_STATE_HOME and XDG_RUNTIME_DIR (0700 each). */
export function freshXdg(tag) {
	const base = path.join(TOP, "xdg", `${tag}-${++nTmp}`);
	fs.mkdirSync(base, { recursive: true, mode: 0o755 });
	const env = {
		XDG_STATE_HOME: path.join(base, "state"),
		XDG_RUNTIME_DIR: path.join(base, "run"),
	};
	fs.mkdirSync(env.XDG_STATE_HOME, { mode: 0o700 });
	fs.mkdirSync(env.XDG_RUNTIME_DIR, { mode: 0o700 });
	return env;
}

const ENTRY = { filesystem: "filesystem", notes: "notes.py", probe: "probe.py", git: "gitapp.py", postgres: "pgapp.py", terminal: "terminal.py", browser: "browser.js" };

/*
 * appCopy(app, tag) - a copy of app (filesystem, notes or probe) at
 * TOP/w/<tag>/<app>, readable by every uid (the sandbox of an app that root
 * runs has its own host uid), whose entry program is renamed
 * <stem>-<tag>-<UNIQ><ext>: a marker for its process's command line
 * (/app/<that name>).  Returns {dir, marker: RegExp of the app process}.
 */
export function appCopy(app, tag) {
	const parent = path.join(TOP, "w", tag);
	fs.mkdirSync(parent, { recursive: true });
	fs.chmodSync(path.join(TOP, "w"), 0o755);
	fs.chmodSync(parent, 0o755);
	const dir = path.join(parent, app);
	fs.cpSync(path.join(SRC, app), dir, { recursive: true });
	fs.chmodSync(dir, 0o755);
	const old = ENTRY[app];
	const ext = path.extname(old);
	const entry = `${path.basename(old, ext)}-${tag}-${UNIQ}${ext}`;
	fs.renameSync(path.join(dir, old), path.join(dir, entry));
	const yml = path.join(dir, "berth.yml");
	const text = fs.readFileSync(yml, "utf8");
	const re = new RegExp(`^entry: ${old.replace(".", "\\.")}$`, "m");
	if (!re.test(text)) throw new Error(`${yml}: no line "entry: ${old}"`);
	fs.writeFileSync(yml, text.replace(re, `entry: ${entry}`));
	return { dir, entry, marker: new RegExp(`/app/${entry.replace(".", "\\.")}(\\0|$)`) };
}

/* ------------------------------------------------------------ /proc */

function cmdline(pid) {
	try {
		return fs.readFileSync(`/proc/${pid}/cmdline`, "latin1");
	} catch {
		return null;
	}
}

/* Live (not zombie) pids whose NUL-separated command line matches re. */
export function procsMatching(re) {
	const out = [];
	for (const d of fs.readdirSync("/proc")) {
		if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
		const c = cmdline(d);
		if (c && re.test(c) && alive(Number(d))) out.push(Number(d));
	}
	return out.sort((a, b) => a - b);
}

/* Is pid a live process (a zombie counts as gone)? */
export function alive(pid) {
	try {
		const st = fs.readFileSync(`/proc/${pid}/stat`, "latin1");
		return st.slice(st.lastIndexOf(")") + 2)[0] !== "Z";
	} catch {
		return false;
	}
}

function cgroupMounts() {
	const out = [];
	for (const line of fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
		const [pre, post] = line.split(" - ");
		if (!post) continue;
		const f = pre.split(" ");
		const [fstype, , opts] = post.split(" ");
		if (fstype !== "cgroup" && fstype !== "cgroup2") continue;
		out.push({ root: f[3], point: f[4], fstype, opts: opts.split(",") });
	}
	return out;
}

/* The berth-* cgroup directories (host paths) that process pid is in. */
export function berthCgroupDirs(pid) {
	let text;
	try {
		text = fs.readFileSync(`/proc/${pid}/cgroup`, "utf8");
	} catch {
		return [];
	}
	const mounts = cgroupMounts();
	const dirs = new Set();
	for (const line of text.trim().split("\n")) {
		const m = /^(\d+):([^:]*):(.*)$/.exec(line);
		if (!m || !m[3].split("/").some((c) => c.startsWith("berth-"))) continue;
		const ctls = m[2] === "" ? [] : m[2].split(",");
		for (const mt of mounts) {
			const match = ctls.length === 0 ? mt.fstype === "cgroup2" : mt.fstype === "cgroup" && ctls.every((c) => mt.opts.includes(c));
			if (!match) continue;
			const rel = mt.root === "/" ? m[3] : m[3].startsWith(mt.root) ? m[3].slice(mt.root.length) : null;
			if (rel === null) continue;
			const p = path.join(mt.point, rel);
			if (fs.existsSync(p)) dirs.add(p);
		}
	}
	return [...dirs].sort();
}

/* Every berth-* directory in the cgroup hierarchies (at most 4 levels down). */
export function allBerthCgroups() {
	const out = new Set();
	const walk = (dir, depth) => {
		let ents;
		try {
			ents = fs.readdirSync(dir, { withFileTypes: true });
		} catch {
			return;
		}
		for (const e of ents) {
			if (!e.isDirectory()) continue;
			const p = path.join(dir, e.name);
			if (e.name.startsWith("berth-")) out.add(p);
			else if (depth < 4) walk(p, depth + 1);
		}
	};
	for (const mt of cgroupMounts()) walk(mt.point, 1);
	return out;
}

/* The pids in cgroup directory dir ([] when it is gone). */
export function cgroupProcs(dir) {
	try {
		return fs.readFileSync(path.join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean);
	} catch {
		return [];
	}
}

/* Mounts of this mount namespace whose source or mount point names TOP. */
export function mountsOfTop() {
	return fs
		.readFileSync("/proc/self/mountinfo", "utf8")
		.split("\n")
		.filter((l) => l.includes(TOP));
}

/* ------------------------------------------------------------ SDK client */

const live = new Set(); // connections to close at exit

/*
 * connect({apps: [[name, dir], ...], args, env, tag}) - the official SDK
 * client over its stdio transport, spawning `berth mcp --app NAME --app-dir
 * DIR ... ARGS`.  env: the XDG dirs (fresh ones unless given) and more.
 * Returns {client, transport, pid, env, stderr(), rx, tx, version}: rx/tx are
 * every JSON-RPC message received/sent, version the negotiated protocol
 * revision (the SDK hands it to transport.setProtocolVersion when defined).
 */
export async function connect({ apps, args = [], env, tag = "mcp", clientCaps = {}, revision, http, handlers = [] }) {
	env = env ?? freshXdg(tag);
	const argv = ["mcp"];
	for (const [name, dir] of apps ?? []) argv.push("--app", name, "--app-dir", dir);
	argv.push(...args);
	let transport;
	let err = "";
	if (http) {
		// http: a server from listen(): the SDK's Streamable HTTP transport with its token
		transport = new StreamableHTTPClientTransport(new URL(http.url), {
			requestInit: { headers: { Authorization: `Bearer ${http.token}` } },
		});
		err = "(see the listening server's stderr)";
	} else {
		transport = new StdioClientTransport({ command: BERTH, args: argv, env, stderr: "pipe", cwd: TOP });
		transport.stderr.on("data", (b) => (err += b.toString("utf8")));
	}
	if (revision) {
		// The SDK always asks for its latest revision: ask for @revision instead,
		// as a client of that revision would (the SDK speaks every one it lists).
		const send0 = transport.send.bind(transport);
		transport.send = (msg, opts) => {
			if (msg.method === "initialize") msg = { ...msg, params: { ...msg.params, protocolVersion: revision } };
			return send0(msg, opts);
		};
	}
	const conn = {
		transport,
		env,
		rx: [],
		tx: [],
		version: null,
		stderr: () => err,
		client: new Client({ name: "berth-mcp-test", version: "1.0.0" }, { capabilities: clientCaps }),
	};
	for (const [schema, fn] of handlers) conn.client.setRequestHandler(schema, fn);
	const setPV = transport.setProtocolVersion?.bind(transport);
	transport.setProtocolVersion = (v) => {
		conn.version = v;
		setPV?.(v); // the HTTP transport sends it as MCP-Protocol-Version
	};
	const hint = () => `berth mcp (${argv.join(" ")}) stderr:\n${err.trim() || "(empty)"}`;
	stderrHints.push(hint);
	await conn.client.connect(transport);
	conn.pid = transport.pid;
	// Record the traffic from now on (the transport calls onmessage/send per message).
	const onmessage = transport.onmessage;
	transport.onmessage = (msg, extra) => {
		conn.rx.push({ t: Date.now(), msg });
		onmessage?.(msg, extra);
	};
	const send = transport.send.bind(transport);
	transport.send = (msg, opts) => {
		conn.tx.push({ t: Date.now(), msg });
		return send(msg, opts);
	};
	live.add(conn);
	conn.close = async () => {
		live.delete(conn);
		if (http) await transport.terminateSession().catch(() => {});
		await conn.client.close();
	};
	return conn;
}

/*
 * listen({apps, args, env, tag, tokenFile}) - `berth mcp --listen 127.0.0.1:0`
 * (Streamable HTTP): resolves once it says where it listens, with {url,
 * token, child, stderr(), stop() -> exit status}.  The token is read from
 * stderr, or from tokenFile when given (--token-file).  Stopped after the test.
 */
export async function listen({ apps, args = [], env, tag = "http", tokenFile, extraEnv = {} }) {
	env = env ?? freshXdg(tag);
	const argv = ["mcp"];
	for (const [name, dir] of apps) argv.push("--app", name, "--app-dir", dir);
	argv.push("--listen", "127.0.0.1:0", ...(tokenFile ? ["--token-file", tokenFile] : []), ...args);
	const child = spawn(BERTH, argv, { env: { ...baseEnv(), ...env, ...extraEnv }, stdio: ["ignore", "ignore", "pipe"], cwd: TOP });
	let err = "";
	const exited = new Promise((r) => child.on("exit", (code, sig) => r({ code, sig })));
	stderrHints.push(() => `berth mcp (${argv.join(" ")}) stderr:\n${err.trim() || "(empty)"}`);
	const where = new Promise((resolve, reject) => {
		child.stderr.on("data", (b) => {
			err += b.toString("utf8");
			const m = /listening on (http:\/\/\S+)/.exec(err);
			if (m) resolve(m[1]);
		});
		exited.then((st) => reject(new Error(`berth mcp --listen exited (${JSON.stringify(st)}) before listening:\n${err}`)));
		setTimeout(() => reject(new Error(`berth mcp --listen said nothing in 15 s:\n${err}`)), 15000).unref();
	});
	const url = await where;
	const token = tokenFile ? fs.readFileSync(tokenFile, "utf8").trim() : /bearer token: ([0-9a-f]+)/.exec(err)?.[1];
	let stopped;
	const stop = () =>
		(stopped ??= (async () => {
			if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
			const t = setTimeout(() => child.kill("SIGKILL"), 10000);
			const st = await exited;
			clearTimeout(t);
			return st;
		})());
	defer(stop);
	return { url, token, child, pid: child.pid, env, stderr: () => err, stop };
}

/* ------------------------------------------------------------ raw JSON-RPC */

/* What the SDK's stdio transport passes on (getDefaultEnvironment). */
function baseEnv() {
	const e = {};
	for (const k of ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"]) if (process.env[k]) e[k] = process.env[k];
	return e;
}

/*
 * raw({apps, args, env}) - `berth mcp` spawned directly, spoken to in
 * newline-delimited JSON-RPC: request(method, params) → the whole response
 * message; notify(method, params); close() → exit status.
 */
export function raw({ apps, args = [], env, tag = "raw" }) {
	env = env ?? freshXdg(tag);
	const argv = ["mcp"];
	for (const [name, dir] of apps) argv.push("--app", name, "--app-dir", dir);
	argv.push(...args);
	const child = spawn(BERTH, argv, { env: { ...baseEnv(), ...env }, stdio: ["pipe", "pipe", "pipe"], cwd: TOP });
	let err = "";
	child.stderr.on("data", (b) => (err += b.toString("utf8")));
	stderrHints.push(() => `berth mcp (raw: ${argv.join(" ")}) stderr:\n${err.trim() || "(empty)"}`);
	const msgs = [];
	const waiters = [];
	const exited = new Promise((r) => child.on("exit", (code, sig) => r({ code, sig })));
	readline.createInterface({ input: child.stdout }).on("line", (l) => {
		let m;
		try {
			m = JSON.parse(l);
		} catch {
			m = { unparsable: l };
		}
		msgs.push(m);
		for (const w of [...waiters]) if (w.pred(m)) (waiters.splice(waiters.indexOf(w), 1), w.resolve(m));
	});
	let nextId = 1;
	const r = {
		child,
		msgs,
		stderr: () => err,
		send(obj) {
			child.stdin.write(JSON.stringify(obj) + "\n");
		},
		waitMsg(pred, ms = 15000) {
			const m = msgs.find(pred);
			if (m) return Promise.resolve(m);
			return new Promise((resolve, reject) => {
				const w = { pred, resolve };
				waiters.push(w);
				setTimeout(() => {
					const i = waiters.indexOf(w);
					if (i >= 0) (waiters.splice(i, 1), reject(new Error(`no matching message in ${ms} ms`)));
				}, ms).unref();
			});
		},
		request(method, params) {
			const id = nextId++;
			r.send(params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params });
			return r.waitMsg((m) => m.id === id && ("result" in m || "error" in m));
		},
		notify(method, params) {
			r.send(params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params });
		},
		async close() {
			child.stdin.end();
			const t = setTimeout(() => child.kill("SIGKILL"), 10000);
			const x = await exited;
			clearTimeout(t);
			return x;
		},
	};
	defer(() => (child.exitCode === null && child.signalCode === null ? r.close() : null));
	return r;
}

/* Close every connection still open (end of the run). */
export async function closeAll() {
	for (const c of [...live]) await c.close().catch(() => {});
}
