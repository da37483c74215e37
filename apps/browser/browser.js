// SPDX-License-Identifier: MIT
// browser: a headless Chromium (Debian's chromium-headless-shell) driven
// through the DevTools protocol, inside the app's sandbox.
//
// Chromium is started once, at the first call, and kept for the app's life
// (one tab).  It talks DevTools over --remote-debugging-pipe: it reads
// commands on its fd 3 and writes answers and events on its fd 4, each
// message one JSON text ended by a NUL byte; no TCP port is opened.  All of
// its traffic goes to berth's egress broker (--proxy-server, the sandbox's
// HTTP_PROXY), which lets through only the hosts berth.yml declares: the app
// checks no host itself.  A refusal by the broker (its 403, or the CONNECT
// it refused for https) is reported as berth's protocol asks (errno EACCES,
// syscall connect, host, port: docs/protocol.md, "Errors"), and berth adds
// its denial block when the manifest indeed does not declare that host.
//
// --no-sandbox: Chromium's own sandbox needs user namespaces and seccomp of
// its own, which berth's sandbox (seccomp: no namespace creation) refuses;
// the app already runs confined by the kernel (README.md).
"use strict";

const { spawn } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const { defineApp, AppError, InvalidParams } = require("@berth/sdk");

const CANDIDATES = ["/usr/lib/chromium/chromium-headless-shell", "/usr/lib/chromium/chromium"];
const START_TIMEOUT_MS = 30000;
const TEXT_LIMIT = 256 * 1024;
// A protocol message is at most 1 MiB (docs/protocol.md): the base64 of a
// screenshot must leave room for the rest of the answer.
const PNG_LIMIT = 600 * 1024;
const REFUSAL = /^berth: refused by the egress policy: /;
const WIDTH = 1280;
const HEIGHT = 800;

/* ------------------------------------------------------------ DevTools over the pipe */

class Chromium {
	constructor() {
		this.nextId = 0;
		this.waiting = new Map(); // id -> {resolve, reject, method}
		this.listeners = new Set(); // (message) => void, for events
		this.stderr = []; // Chromium's last lines, for an error when it dies
		this.dead = null; // why it is gone, once it is
	}

	static binary() {
		for (const b of CANDIDATES) if (fs.existsSync(b)) return b;
		throw new AppError(`no Chromium: none of ${CANDIDATES.join(", ")} exists; fix: apt-get install chromium-headless-shell`);
	}

	/*
	 * The public keys tls-pins.txt (next to this file) names: one base64
	 * SHA-256 of a certificate's SubjectPublicKeyInfo a line, `#` comments.
	 * Chromium takes a chain that does not validate when a certificate in it
	 * has one of these keys (a private CA's or a server's own), as git's
	 * ca.pem does for apps/git; Chromium trusts no PEM file of ours.
	 */
	static pins() {
		let text;
		try {
			text = fs.readFileSync(path.join(__dirname, "tls-pins.txt"), "utf8");
		} catch (e) {
			if (e.code === "ENOENT") return [];
			throw e;
		}
		const out = [];
		text.split("\n").forEach((l, i) => {
			l = l.replace(/#.*/, "").trim();
			if (l === "") return;
			if (!/^[A-Za-z0-9+/]{43}=$/.test(l))
				throw new AppError(`tls-pins.txt:${i + 1}: \`${l.slice(0, 60)}\` is not the base64 of a SHA-256; fix: openssl x509 -in CERT -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`);
			out.push(l);
		});
		return out;
	}

	async start() {
		this.profile = fs.mkdtempSync(path.join("/tmp", "browser-profile-"));
		const proxy = process.env.HTTPS_PROXY || process.env.HTTP_PROXY;
		const args = [
			"--headless",
			"--no-sandbox", // berth is the sandbox (see the top of this file)
			"--remote-debugging-pipe",
			`--user-data-dir=${this.profile}`,
			"--disable-dev-shm-usage", // shared memory in /tmp, not /dev/shm
			"--no-zygote",
			"--disable-gpu",
			"--disable-background-networking",
			"--disable-component-update",
			"--disable-domain-reliability",
			"--disable-sync",
			"--disable-breakpad",
			"--disable-extensions",
			"--disable-quic",
			"--no-first-run",
			"--no-default-browser-check",
			"--mute-audio",
			"--hide-scrollbars",
			`--window-size=${WIDTH},${HEIGHT}`,
		];
		// Every request to the broker, loopback included (Chromium would
		// otherwise go to 127.0.0.1 directly, which Landlock refuses anyway).
		// Without network capabilities there is no proxy and no network.
		const pins = Chromium.pins();
		if (pins.length) args.push(`--ignore-certificate-errors-spki-list=${pins.join(",")}`);
		if (proxy) args.push(`--proxy-server=${proxy}`, "--proxy-bypass-list=<-loopback>");
		else args.push("--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>");
		args.push("about:blank");
		this.proc = spawn(Chromium.binary(), args, {
			stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"],
			env: { PATH: "/usr/bin:/bin", HOME: process.env.HOME || "/tmp", LANG: "C.UTF-8" },
		});
		this.proc.stderr.setEncoding("utf8");
		let partial = "";
		this.proc.stderr.on("data", (s) => {
			const lines = (partial + s).split("\n");
			partial = lines.pop();
			for (const l of lines) {
				this.stderr.push(l);
				if (this.stderr.length > 20) this.stderr.shift();
			}
		});
		this.out = this.proc.stdio[3];
		this.in = this.proc.stdio[4];
		this.out.on("error", () => {});
		let buf = Buffer.alloc(0);
		this.in.on("data", (chunk) => {
			buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
			let i;
			while ((i = buf.indexOf(0)) >= 0) {
				const text = buf.subarray(0, i).toString("utf8");
				buf = buf.subarray(i + 1);
				let m;
				try {
					m = JSON.parse(text);
				} catch {
					continue;
				}
				this.dispatch(m);
			}
		});
		const started = new Promise((resolve, reject) => {
			this.proc.on("error", (e) => reject(e));
			this.proc.on("exit", (code, sig) => {
				this.dead = `Chromium exited (${sig ? `signal ${sig}` : `status ${code}`}): ${this.stderr.slice(-5).join(" | ")}`;
				for (const w of this.waiting.values()) w.reject(new AppError(this.dead));
				this.waiting.clear();
				reject(new AppError(this.dead));
			});
			this.send("Browser.getVersion", {}, undefined, START_TIMEOUT_MS).then(resolve, reject);
		});
		this.version = await started;
		const { targetId } = await this.send("Target.createTarget", { url: "about:blank" });
		const { sessionId } = await this.send("Target.attachToTarget", { targetId, flatten: true });
		this.session = sessionId;
		for (const d of ["Page.enable", "Network.enable", "Runtime.enable"]) await this.page(d);
		await this.page("Page.setLifecycleEventsEnabled", { enabled: true });
		const tree = await this.page("Page.getFrameTree");
		this.frameId = tree.frameTree.frame.id;
	}

	dispatch(m) {
		if (m.id !== undefined) {
			const w = this.waiting.get(m.id);
			if (!w) return;
			this.waiting.delete(m.id);
			clearTimeout(w.timer);
			if (m.error) w.reject(new AppError(`DevTools ${w.method}: ${m.error.message}`, { data: { devtools_code: m.error.code } }));
			else w.resolve(m.result);
			return;
		}
		for (const l of this.listeners) l(m);
	}

	send(method, params = {}, sessionId, timeoutMs = 30000) {
		if (this.dead) return Promise.reject(new AppError(this.dead));
		const id = ++this.nextId;
		const msg = { id, method, params };
		if (sessionId) msg.sessionId = sessionId;
		return new Promise((resolve, reject) => {
			const timer = setTimeout(() => {
				this.waiting.delete(id);
				reject(new AppError(`DevTools ${method}: no answer in ${timeoutMs} ms`));
			}, timeoutMs);
			this.waiting.set(id, { resolve, reject, method, timer });
			this.out.write(JSON.stringify(msg) + "\0");
		});
	}

	page(method, params, timeoutMs) {
		return this.send(method, params, this.session, timeoutMs);
	}

	/* Evaluate an expression in the page; its value (JSON), or an AppError with the exception. */
	async evaluate(expression) {
		const r = await this.page("Runtime.evaluate", { expression, returnByValue: true, awaitPromise: true });
		if (r.exceptionDetails) {
			const d = r.exceptionDetails;
			throw new AppError(`in the page: ${d.exception?.description?.split("\n")[0] ?? d.text}`);
		}
		return r.result.value;
	}

	close() {
		if (this.proc && !this.dead) this.proc.kill("SIGKILL");
		if (this.profile) fs.rmSync(this.profile, { recursive: true, force: true });
	}
}

let browser = null;
let queue = Promise.resolve();

/* Run fn(browser) after the calls before it (one tab: calls take turns), starting Chromium if needed. */
function withBrowser(fn) {
	const run = queue.then(async () => {
		if (browser && browser.dead) {
			browser.close();
			browser = null;
		}
		if (!browser) {
			const b = new Chromium();
			try {
				await b.start();
			} catch (e) {
				b.close();
				// a system error (the profile directory refused) keeps its errno: -32001 and berth's denial block
				throw e instanceof AppError || e.syscall ? e : new AppError(`cannot start Chromium: ${e.message}`);
			}
			browser = b;
		}
		return fn(browser);
	});
	queue = run.catch(() => {});
	return run;
}

/* ------------------------------------------------------------ navigation */

function checkUrl(url) {
	let u;
	try {
		u = new URL(url);
	} catch {
		throw new InvalidParams("$.url", "not a URL");
	}
	if (u.protocol !== "http:" && u.protocol !== "https:")
		throw new AppError(`only http and https URLs are opened, not \`${u.protocol}\``);
	return u;
}

function hostPort(url) {
	const u = new URL(url);
	const port = u.port ? Number(u.port) : u.protocol === "https:" ? 443 : 80;
	return { host: u.hostname.replace(/^\[(.*)\]$/, "$1"), port };
}

/* The broker refused url: berth's form of an egress refusal (docs/protocol.md, "Errors"). */
function refused(url, why) {
	const { host, port } = hostPort(url);
	return new AppError(`berth's egress broker refused ${host}:${port}: ${why}`, {
		code: -32001,
		data: { errno: 13, errno_name: "EACCES", syscall: "connect", host, port, url },
	});
}

/* Wait until pred(event) or the deadline; resolves with the event or null. */
function waitFor(b, pred, ms) {
	return new Promise((resolve) => {
		const l = (m) => {
			if (pred(m)) done(m);
		};
		const timer = setTimeout(() => done(null), ms);
		const done = (v) => {
			clearTimeout(timer);
			b.listeners.delete(l);
			resolve(v);
		};
		b.listeners.add(l);
	});
}

/*
 * Load url in the tab: the main document's response (its status, the URL
 * after redirects), then the load event (or the deadline: a page whose
 * subresources hang is still answered).
 */
async function load(b, start, timeoutMs) {
	const reqs = new Map(); // requestId -> the URL asked for (after redirects)
	const loads = new Set(); // the loaderIds whose load event came
	const finished = new Set(); // requestIds whose body is all there
	const docs = new Map(); // loaderId -> the main document's response
	const urls = new Map(); // requestId -> URL, every request
	let failed = null;
	const subs = []; // this navigation's other requests the broker may have refused: {requestId, url, tunnel}
	const track = (m) => {
		const p = m.params;
		if (m.method === "Network.requestWillBeSent" && p.type === "Document" && p.frameId === b.frameId)
			reqs.set(p.requestId, p.request.url);
		else if (m.method === "Network.responseReceived" && p.response.status === 403 && !(p.type === "Document" && p.frameId === b.frameId))
			subs.push({ requestId: p.requestId, url: p.response.url, loaderId: p.loaderId });
		else if (m.method === "Network.loadingFailed" && p.errorText === "net::ERR_TUNNEL_CONNECTION_FAILED" && !reqs.has(p.requestId))
			subs.push({ requestId: p.requestId, tunnel: true, loaderId: null });
		else if (m.method === "Network.responseReceived" && p.type === "Document" && p.frameId === b.frameId)
			docs.set(p.loaderId, { requestId: p.requestId, status: p.response.status, url: p.response.url });
		else if (m.method === "Network.loadingFailed" && reqs.has(p.requestId) && p.type === "Document")
			failed = { url: reqs.get(p.requestId), error: p.errorText };
		else if (m.method === "Network.loadingFinished") finished.add(p.requestId);
		if (m.method === "Network.requestWillBeSent") urls.set(p.requestId, p.request.url);
		else if (m.method === "Page.lifecycleEvent" && p.name === "load") loads.add(p.loaderId);
	};
	b.listeners.add(track);
	try {
		const nav = await start();
		if (nav && nav.errorText) {
			const url = failed?.url ?? nav.url;
			// A CONNECT the broker refused (https): Chromium sees only the failed tunnel.
			if (nav.errorText === "net::ERR_TUNNEL_CONNECTION_FAILED")
				throw refused(url, `${nav.errorText} (the broker did not open the tunnel: a host not declared, or one it could not reach)`);
			throw new AppError(`navigation to ${url} failed: ${nav.errorText}`, { data: { url, error: nav.errorText } });
		}
		// This navigation's own load event (a late one of the page before must not
		// end the wait); a navigation within the document (a #fragment) has no
		// loader and no load event.
		if (nav && nav.loaderId && !loads.has(nav.loaderId))
			await waitFor(b, (m) => m.method === "Page.lifecycleEvent" && m.params.name === "load" && m.params.loaderId === nav.loaderId, timeoutMs);
		const doc = nav && nav.loaderId ? docs.get(nav.loaderId) : undefined;
		if (doc && doc.status === 403) {
			const text = await body(b, doc, finished);
			if (REFUSAL.test(text)) throw refused(doc.url, text.trim());
		}
		if (doc) doc.refused = await refusedSubresources(b, subs, urls, finished, nav.loaderId);
		return doc ?? null;
	} finally {
		b.listeners.delete(track);
	}
}

/*
 * The HOST:PORT the broker refused to the page's subresources (images,
 * scripts, frames): a 403 with the broker's text, or a tunnel it would not
 * open.  Sorted, each once, at most 64; berth's audit trail has every one.
 */
async function refusedSubresources(b, subs, urls, finished, loaderId) {
	const out = new Set();
	for (const s of subs.slice(0, 64)) {
		const url = s.url ?? urls.get(s.requestId);
		if (!url || (s.loaderId && s.loaderId !== loaderId)) continue;
		if (!s.tunnel && !REFUSAL.test(await body(b, s, finished, true))) continue;
		try {
			const { host, port } = hostPort(url);
			out.add(host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`);
		} catch {
			/* not a URL with a host */
		}
	}
	return [...out].sort();
}

/* The text of the response @doc (the broker's refusal is a short text/plain one), or "". */
async function body(b, doc, finished, sub = false) {
	if (!finished.has(doc.requestId))
		await waitFor(b, (m) => m.method === "Network.loadingFinished" && m.params.requestId === doc.requestId, sub ? 1000 : 5000);
	try {
		const r = await b.page("Network.getResponseBody", { requestId: doc.requestId });
		return r.base64Encoded ? Buffer.from(r.body, "base64").toString("utf8") : r.body;
	} catch {
		if (sub) return "";
		// no longer kept: the document's own text, when it is plain text
		return (await b.evaluate("document.contentType === 'text/plain' && document.body ? document.body.innerText : ''")) ?? "";
	}
}

async function pageInfo(b, doc) {
	const info = await b.evaluate("({title: document.title, url: location.href})");
	const out = { url: info.url, title: info.title };
	if (doc) out.status = doc.status;
	if (doc && doc.refused && doc.refused.length) out.refused = doc.refused;
	return out;
}

/*
 * Run act() (a click, a key) and wait for a navigation of the tab it started:
 * one that began while act ran or within 500 ms after; null when none did.
 * Listening starts before act, whose input event can start the navigation
 * before its own answer comes.
 */
async function settle(b, timeoutMs, act) {
	const docs = new Map(); // loaderId -> the main document's response
	const loads = new Set();
	let started = null;
	const track = (m) => {
		const p = m.params;
		if (m.method === "Network.responseReceived" && p.type === "Document" && p.frameId === b.frameId)
			docs.set(p.loaderId, { status: p.response.status, url: p.response.url, requestId: p.requestId });
		else if (m.method === "Page.lifecycleEvent" && p.name === "load") loads.add(p.loaderId);
		else if (m.method === "Page.frameStartedNavigating" && p.frameId === b.frameId && !started) started = p;
	};
	b.listeners.add(track);
	try {
		await act();
		if (!started) await waitFor(b, (m) => m.method === "Page.frameStartedNavigating" && m.params.frameId === b.frameId, 500);
		const loader = started?.loaderId;
		if (!loader || started.navigationType === "sameDocument") return null;
		if (!loads.has(loader))
			await waitFor(b, (m) => m.method === "Page.lifecycleEvent" && m.params.name === "load" && m.params.loaderId === loader, timeoutMs);
		return docs.get(loader) ?? null;
	} finally {
		b.listeners.delete(track);
	}
}

/* The element's centre, scrolled into view, or an error naming the selector. */
async function locate(b, selector) {
	const r = await b.evaluate(`(() => {
		const e = document.querySelector(${JSON.stringify(selector)});
		if (!e) return null;
		e.scrollIntoView({block: "center", inline: "center"});
		const r = e.getBoundingClientRect();
		return {x: r.left + r.width / 2, y: r.top + r.height / 2, w: r.width, h: r.height};
	})()`);
	if (r === null) throw new AppError(`no element matches \`${selector}\``, { data: { selector } });
	if (r.w === 0 && r.h === 0) throw new AppError(`the element \`${selector}\` is not visible (no size)`, { data: { selector } });
	return r;
}

/* PNG's width and height (IHDR). */
function pngSize(buf) {
	return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}

const clip = (s, n) => (s.length > n ? { text: s.slice(0, n), truncated: true } : { text: s, truncated: false });

/* ------------------------------------------------------------ exports */

defineApp({
	tools: {
		navigate: {
			description: "Open a URL in the tab",
			async handler({ url, timeout_ms = 20000 }) {
				checkUrl(url);
				return withBrowser(async (b) => {
					const doc = await load(b, () => b.page("Page.navigate", { url }).then((r) => ({ ...r, url })), timeout_ms);
					return pageInfo(b, doc);
				});
			},
		},
		read_text: {
			description: "The page's visible text",
			async handler({ selector, max_chars = TEXT_LIMIT }) {
				return withBrowser(async (b) => {
					const sel = selector === undefined ? "null" : JSON.stringify(selector);
					const t = await b.evaluate(`(() => { const s = ${sel}; const e = s === null ? document.body : document.querySelector(s);
						return e === null ? null : (e.innerText ?? e.textContent ?? ""); })()`);
					if (t === null) {
						if (selector !== undefined) throw new AppError(`no element matches \`${selector}\``, { data: { selector } });
						return { text: "", truncated: false, ...(await pageInfo(b)) };
					}
					return { ...clip(t, max_chars), ...(await pageInfo(b)) };
				});
			},
		},
		content: {
			description: "The page's HTML (the DOM now, after scripts)",
			async handler({ max_chars = TEXT_LIMIT }) {
				return withBrowser(async (b) => {
					const h = await b.evaluate("document.documentElement ? document.documentElement.outerHTML : ''");
					const c = clip(h, max_chars);
					return { html: c.text, truncated: c.truncated, ...(await pageInfo(b)) };
				});
			},
		},
		screenshot: {
			description: "A PNG of the page",
			async handler({ full_page = false }) {
				return withBrowser(async (b) => {
					let params = { format: "png", captureBeyondViewport: full_page };
					let scale = 1;
					for (;;) {
						const r = await b.page("Page.captureScreenshot", params, 60000);
						const buf = Buffer.from(r.data, "base64");
						if (buf.length <= PNG_LIMIT || scale < 0.2) {
							if (buf.length > PNG_LIMIT)
								throw new AppError(`the screenshot is ${buf.length} bytes even at scale ${scale}; at most ${PNG_LIMIT} fit in an answer`);
							return { image: r.data, bytes: buf.length, ...pngSize(buf), scale, ...(await pageInfo(b)) };
						}
						// Too large for one protocol message: the same area, smaller.
						const m = await b.page("Page.getLayoutMetrics");
						const area = full_page ? m.cssContentSize : m.cssVisualViewport;
						scale /= 2;
						params = {
							format: "png",
							captureBeyondViewport: full_page,
							clip: { x: 0, y: 0, width: area.width ?? area.clientWidth, height: area.height ?? area.clientHeight, scale },
						};
					}
				});
			},
		},
		click: {
			description: "Click the element a CSS selector names",
			async handler({ selector, timeout_ms = 20000 }) {
				return withBrowser(async (b) => {
					const p = await locate(b, selector);
					const ev = (type) => b.page("Input.dispatchMouseEvent", { type, x: p.x, y: p.y, button: "left", clickCount: 1 });
					await ev("mouseMoved");
					await ev("mousePressed");
					return pageInfo(b, await settle(b, timeout_ms, () => ev("mouseReleased")));
				});
			},
		},
		type: {
			description: "Type text into the element a CSS selector names",
			async handler({ selector, text, submit = false, timeout_ms = 20000 }) {
				return withBrowser(async (b) => {
					await locate(b, selector);
					await b.evaluate(`document.querySelector(${JSON.stringify(selector)}).focus()`);
					await b.page("Input.insertText", { text });
					let doc = null;
					if (submit) {
						const key = (type) =>
							b.page("Input.dispatchKeyEvent", { type, key: "Enter", code: "Enter", windowsVirtualKeyCode: 13, text: type === "keyDown" ? "\r" : undefined });
						doc = await settle(b, timeout_ms, async () => {
							await key("keyDown");
							await key("keyUp");
						});
					}
					return pageInfo(b, doc);
				});
			},
		},
	},
})
	.run({ exit: false })
	.then(() => {
		if (browser) browser.close();
		process.exit(0);
	});
