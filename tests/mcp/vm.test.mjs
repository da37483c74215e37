// SPDX-License-Identifier: MIT
// `berth mcp --runtime vm` (docs/mcp.md, docs/vm.md) through the official MCP
// TypeScript SDK client and its stdio transport: a resident app (the probe
// fixture, Python) booted in a microVM, its tools listed before any boot and
// called in the VM (the guest's kernel, its command line), a write that the
// sandbox inside the VM refuses, the app's workspace shared with the host,
// the audit trail (an `enforced` record naming runtime vm and the pinned
// kernel), and nothing left after the client closes.  One VM boot.  TAP.
// Run through tests/mcp/run-mcp-vm.sh BERTH REPO.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

import {
	BERTH,
	TOP,
	UNIQ,
	alive,
	appCopy,
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
	test,
	waitFor,
} from "./harness.mjs";

const GUEST_KERNEL = "6.12.117+deb13-cloud-amd64"; // src/vm/pins.h
const KERNEL_SHA256 = "ed8f0dbdbefe3994093937f5ee934818ae902b88cb0b6bc423811c10d55b87b0";
const CACHE = process.env.BERTH_VM_DEB_CACHE || "/var/tmp/berth-vm-deb-cache";
const VM_DIR = path.join(TOP, "vm");
const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function text(r) {
	return r?.content?.length === 1 && r.content[0].type === "text" ? r.content[0].text : undefined;
}

/* berth ARGS with env (the XDG dirs, BERTH_VM_DIR): {status, stdout, stderr}. */
function berth(args, env, input = "") {
	const r = spawnSync(BERTH, args, { env: { ...process.env, ...env }, input, encoding: "utf8", timeout: 120000 });
	return { status: r.status, stdout: r.stdout ?? "", stderr: r.stderr ?? "" };
}

/* The audit records of env's trail, oldest first. */
function records(env) {
	const r = berth(["audit", "list", "--json"], env);
	return r.stdout
		.split("\n")
		.filter(Boolean)
		.map((l) => JSON.parse(l));
}

// ---------------------------------------------------------------------------
await test("the guest: berth vm install from the shared .deb cache", async () => {
	if (!fs.existsSync(CACHE)) {
		fs.mkdirSync(CACHE, { recursive: true });
		fs.chmodSync(CACHE, 0o1777);
	}
	const r = berth(["vm", "install", "--dir", VM_DIR, "--deb-cache", CACHE], {});
	eq(r.status, 0, "berth vm install exits 0", r.stderr);
	ok(fs.existsSync(path.join(VM_DIR, "initramfs.cpio")), "the guest is installed");
});

await test("refusals before anything boots", async () => {
	const env = { ...freshXdg("refuse"), BERTH_VM_DIR: VM_DIR };
	const probe = appCopy("probe", "refuse");
	const bogus = berth(["mcp", "--app", "probe", "--app-dir", probe.dir, "--runtime", "bogus"], env);
	eq(bogus.status, 2, "--runtime bogus: exit status 2");
	has(bogus.stderr, "unknown runtime `bogus`; this berth has: namespace, vm", "... naming the runtimes");
	const none = berth(["mcp", "--app", "probe", "--app-dir", probe.dir, "--runtime", "vm"], {
		...env,
		BERTH_VM_DIR: path.join(TOP, "no-guest"),
	});
	eq(none.status, 125, "--runtime vm without an installed guest: exit status 125, at start");
	has(none.stderr, "the app `probe`", "... naming the app", none.stderr);
	has(none.stderr, "berth vm install", "... and the fix");
	eq(none.stdout, "", "... and nothing on the protocol's output");
	// an app with network hosts needs the egress broker, which the VM has not yet
	const net = appCopy("probe", "net");
	const yml = path.join(net.dir, "berth.yml");
	fs.writeFileSync(yml, fs.readFileSync(yml, "utf8").replace("  - filesystem:write:/workspace\n", "  - filesystem:write:/workspace\n  - network:host:api.example.com:443\n"));
	const n = berth(["mcp", "--app", "probe", "--app-dir", net.dir, "--runtime", "vm"], env);
	eq(n.status, 2, "an app with `network:host`: exit status 2, at start");
	has(n.stderr, "the app `probe`: the vm runtime cannot give `--network proxy` yet", "... naming the app and what", n.stderr);
	has(n.stderr, "`--runtime namespace`", "... and the fix");
});

// ---------------------------------------------------------------------------
await test(
	"a resident app in a microVM: tools listed and called through the SDK",
	async () => {
		const probe = appCopy("probe", "vm");
		const env = { ...freshXdg("vm"), BERTH_VM_DIR: VM_DIR };
		const t0 = Date.now();
		const c = await connect({ apps: [["probe", probe.dir]], args: ["--runtime", "vm"], env, tag: "vm" });
		defer(() => c.close());
		const tools = await c.client.listTools();
		const names = tools.tools.map((t) => t.name);
		for (const n of ["ping", "read", "write"]) ok(names.includes(n), `tools/list lists \`${n}\``, names);
		ok(Date.now() - t0 < 5000, `initialize and tools/list are answered before any VM boots (${Date.now() - t0} ms)`);
		eq(procsMatching(/qemu-system-x86_64/).filter((p) => procsMatching(new RegExp(esc(env.XDG_RUNTIME_DIR))).includes(p)), [], "no qemu of this server before the first call");

		// the first call boots the VM (seconds under TCG), then runs in it;
		// a tools/list sent meanwhile waits for the boot (the server's loop
		// boots an app in line, docs/mcp.md) and is answered all the same
		const t1 = Date.now();
		const [osr, during] = await Promise.all([
			c.client.callTool({ name: "read", arguments: { path: "/proc/sys/kernel/osrelease" } }),
			c.client.listTools(),
		]);
		note(`first call (the VM's boot and the app's start): ${Date.now() - t1} ms`);
		eq(during.tools.map((t) => t.name), names, "a tools/list sent while the app boots gets the same tools");
		eq(osr.isError, false, "read /proc/sys/kernel/osrelease: isError false", text(osr), c.stderr());
		eq(osr.structuredContent, { content: `${GUEST_KERNEL}\n` }, "the tool ran on the guest's pinned kernel");
		ok(fs.readFileSync("/proc/sys/kernel/osrelease", "utf8").trim() !== GUEST_KERNEL, "(the host runs another kernel)");
		let parsed;
		try {
			parsed = JSON.parse(text(osr));
		} catch {
			parsed = null;
		}
		eq(parsed, { content: `${GUEST_KERNEL}\n` }, "the text block is the same output as JSON");
		const cmd = await c.client.callTool({ name: "read", arguments: { path: "/proc/cmdline" } });
		has(cmd.structuredContent?.content, "berth.mode=run", "/proc/cmdline is the guest's (berth.mode=run)");
		has(cmd.structuredContent?.content, "console=hvc0", "... booted by berth's qemu line (console=hvc0)");

		const qemu = procsMatching(new RegExp(`qemu-system-x86_64[^]*${esc(env.XDG_RUNTIME_DIR)}`));
		eq(qemu.length, 1, "one qemu serves the app, its run directory in this server's XDG_RUNTIME_DIR");
		eq(procsMatching(probe.marker), [], "no app process on the host: it runs in the guest");

		// the app's workspace is shared with the host (virtiofs), writable
		const w = await c.client.callTool({ name: "write", arguments: { path: "from-vm.txt", content: `vm ${UNIQ}` } });
		eq(w.structuredContent, { bytes: `vm ${UNIQ}`.length }, "write /workspace/from-vm.txt: bytes");
		const host = path.join(env.XDG_STATE_HOME, "berth/apps/probe/workspace/from-vm.txt");
		eq(fs.existsSync(host) ? fs.readFileSync(host, "utf8") : "<missing>", `vm ${UNIQ}`, "the file is in the app's workspace on the host");

		// a message of many frames each way (the channel carries at most 64 KiB
		// a frame): 700 KiB in a request, the same back in an answer
		const big = Array.from({ length: 700 * 1024 }, (_, i) => String.fromCharCode(97 + ((i * 7) % 26))).join("");
		const bw = await c.client.callTool({ name: "write", arguments: { path: "big.txt", content: big } });
		eq(bw.structuredContent, { bytes: big.length }, "a 700 KiB request crosses the channel whole");
		const br = await c.client.callTool({ name: "read", arguments: { path: "big.txt" } });
		ok(br.structuredContent?.content === big, "... and a 700 KiB answer, byte for byte", `got ${br.structuredContent?.content?.length} bytes`);

		// calls at once (8 in flight on the channel, the rest queued): each answered
		const many = await Promise.all(Array.from({ length: 20 }, (_, i) => c.client.callTool({ name: "read", arguments: { path: i % 2 ? "from-vm.txt" : "/proc/sys/kernel/osrelease" } })));
		eq(many.map((r) => r.structuredContent?.content), Array.from({ length: 20 }, (_, i) => (i % 2 ? `vm ${UNIQ}` : `${GUEST_KERNEL}\n`)), "20 calls at once: each gets its own answer");

		// a write outside its grants: refused in the VM, explained, nothing on the host
		const target = `/etc/berth-mcp-vm-${UNIQ}`;
		const d = await c.client.callTool({ name: "write", arguments: { path: target, content: "x" } });
		eq(d.isError, true, "write to /etc: isError true");
		has(text(d), "BERTH CAPABILITY DENIAL", "the text holds the denial block");
		has(text(d), '"errno_name":"EACCES"', "... EACCES, Landlock's");
		has(text(d), "Landlock ruleset (ABI", "... enforced by Landlock in the guest");
		eq(fs.existsSync(target), false, "nothing appeared in the host's /etc");
		const p = await c.client.callTool({ name: "ping", arguments: {} });
		eq(p.structuredContent?.tag, "v1", "the app still serves calls after the denial (the same VM)");
		eq(procsMatching(new RegExp(`qemu-system-x86_64[^]*${esc(env.XDG_RUNTIME_DIR)}`)), qemu, "... on the same qemu");

		// the client closes: berth mcp stops the app (end of file on its channel), the VM powers off
		const proc = c.transport._process;
		const helpers = procsMatching(new RegExp(esc(env.XDG_RUNTIME_DIR)));
		const t2 = Date.now();
		await c.close();
		note(`client.close(): ${Date.now() - t2} ms`);
		const gone = await waitFor(() => !alive(c.pid) && helpers.every((h) => !alive(h)), 15000);
		ok(gone, "berth mcp, qemu and virtiofsd are gone after the client closed", helpers.filter(alive));
		eq(procsMatching(new RegExp(esc(env.XDG_RUNTIME_DIR))), [], "no process names the server's runtime directory");
		eq({ code: proc?.exitCode, sig: proc?.signalCode }, { code: 0, sig: null }, "berth mcp exited 0", c.stderr());
		const rundirs = fs.existsSync(path.join(env.XDG_RUNTIME_DIR, "berth")) ? fs.readdirSync(path.join(env.XDG_RUNTIME_DIR, "berth")).filter((n) => n.startsWith("vm-")) : [];
		eq(rundirs, [], "the VM's run directory is removed");
		eq(mountsOfTop(), [], "no mount of the test's directories on the host");

		// the audit trail: one run, its measurement the VM's
		const recs = records(env);
		const kinds = recs.map((r) => r.kind);
		eq(kinds.slice(0, 3), ["run.start", "policy", "enforced"], "the run: run.start, policy, then enforced");
		eq(kinds.filter((k) => k === "tool.call").length, 27, "27 tool.call records");
		eq(kinds.at(-1), "run.stop", "run.stop last");
		const enf = recs.find((r) => r.kind === "enforced")?.payload ?? {};
		eq(enf.runtime?.name, "vm", "enforced.runtime.name is vm");
		eq(enf.runtime?.guest_kernel, GUEST_KERNEL, "... the guest's kernel");
		eq(enf.runtime?.kernel_sha256, KERNEL_SHA256, "... the pinned vmlinuz's sha256");
		eq(enf.runtime?.accelerator, "tcg", "... tcg");
		eq([enf.verdict, enf.landlock?.status, enf.seccomp?.mode], ["ENFORCED", "full", 2], "... measured in the guest: ENFORCED, Landlock full, seccomp filter mode", enf);
		eq(enf.initramfs_sha256 ?? enf.runtime?.initramfs_sha256, JSON.parse(fs.readFileSync(path.join(VM_DIR, "guest.json"), "utf8")).initramfs.sha256, "... the installed initramfs's sha256");
		eq(new Set(recs.map((r) => r.run_id)).size, 1, "all records are of one run (one boot)");
		const stop = recs.at(-1)?.payload ?? {};
		eq([stop.reason, stop.status, stop.calls], ["stopped", 0, 27], "run.stop: stopped, status 0, 27 calls", stop);
		const v = berth(["audit", "verify"], env);
		eq(v.status, 0, "berth audit verify: the trail is intact", v.stdout + v.stderr);
	},
	150000,
);

// ---------------------------------------------------------------------------
await test(
	"an app that crashes or hangs in its microVM",
	async () => {
		const probe = appCopy("probe", "crash");
		const env = { ...freshXdg("crash"), BERTH_VM_DIR: VM_DIR };
		const c = await connect({ apps: [["probe", probe.dir]], args: ["--runtime", "vm", "--timeout", "3000"], env, tag: "crash" });
		defer(() => c.close());
		const qemuOf = () => procsMatching(new RegExp(`qemu-system-x86_64[^]*${esc(env.XDG_RUNTIME_DIR)}`));
		// SIGSEGV in the app: the guest's sandbox ends, the VM powers off, the
		// relay closes the app's channel: the supervisor sees the app gone
		const cr = await c.client.callTool({ name: "crash", arguments: {} });
		eq(cr.isError, true, "crash (SIGSEGV in the app, in the VM): isError true", text(cr));
		has(text(cr), "(error -32002)", "... error -32002");
		ok(await waitFor(() => qemuOf().length === 0, 15000), "... and its VM is gone", qemuOf());
		const p1 = await c.client.callTool({ name: "ping", arguments: {} });
		eq(p1.structuredContent?.tag, "v1", "the next call boots a fresh VM and is served", text(p1), c.stderr());
		const q1 = qemuOf();
		eq(q1.length, 1, "... by one qemu");
		const t0 = Date.now();
		const h = await c.client.callTool({ name: "hang", arguments: {} });
		const took = Date.now() - t0;
		has(text(h), "(error -32003)", "hang with --timeout 3000: error -32003 (timed out)");
		ok(took >= 2900 && took < 6000, `... after about 3000 ms (${took} ms)`);
		ok(await waitFor(() => q1.every((q) => !alive(q)), 15000), "... and its VM was killed");
		await c.close();
		const stops = records(env).filter((r) => r.kind === "run.stop").map((r) => [r.payload.reason, r.payload.status]);
		eq(stops[0], ["killed by a signal", 139], "two runs on record: the first ended by the crash (SIGSEGV: 128+11, the guest's status)", stops);
		eq(stops[1]?.[0], "call timed out", "... the second by the timeout", stops);
		eq(stops.length, 2, "... and no other");
	},
	150000,
);

// ---------------------------------------------------------------------------
await test(
	"--warm --runtime vm: initialize waits for the boot, the first call does not",
	async () => {
		const probe = appCopy("probe", "warm");
		const env = { ...freshXdg("warm"), BERTH_VM_DIR: VM_DIR };
		const t0 = Date.now();
		const c = await connect({ apps: [["probe", probe.dir]], args: ["--runtime", "vm", "--warm"], env, tag: "warm" });
		defer(() => c.close());
		const init = Date.now() - t0;
		note(`initialize with --warm (the boot first): ${init} ms`);
		ok(init < 60000, "initialize is answered within the SDK's default request timeout (60 s)");
		eq(procsMatching(new RegExp(`qemu-system-x86_64[^]*${esc(env.XDG_RUNTIME_DIR)}`)).length, 1, "the VM runs before the first call");
		const t1 = Date.now();
		const p = await c.client.callTool({ name: "ping", arguments: {} });
		eq(p.structuredContent?.tag, "v1", "the first call is served");
		ok(Date.now() - t1 < init, `... by the booted app, faster than the boot (${Date.now() - t1} ms)`);
	},
	150000,
);

// ---------------------------------------------------------------------------
await test(
	"berth rpc --runtime vm: one call, one VM",
	async () => {
		const probe = appCopy("probe", "rpc");
		const env = { ...freshXdg("rpc"), BERTH_VM_DIR: VM_DIR };
		const r = berth(["rpc", "probe", "--app-dir", probe.dir, "--runtime", "vm", "--export", "read", "--input", '{"path":"/proc/sys/kernel/osrelease"}'], env);
		eq(r.status, 0, "exit status 0", r.stderr);
		eq(r.stdout, `{"content":"${GUEST_KERNEL}\\n"}\n`, "the result: the guest's kernel release");
		has(r.stderr, "berth: microVM: qemu -accel tcg", "the boot says what it runs on");
		const kinds = records(env).map((x) => x.kind);
		eq(kinds, ["run.start", "policy", "enforced", "tool.call", "tool.result", "run.stop"], "its run on record, with the VM's measurement");
		const bad = berth(["rpc", "probe", "--app-dir", probe.dir, "--runtime", "nope", "--export", "ping"], env);
		eq([bad.status, bad.stdout], [2, ""], "--runtime nope: exit status 2");
		has(bad.stderr, "unknown runtime `nope`", "... naming it");
		eq(procsMatching(new RegExp(esc(env.XDG_RUNTIME_DIR))), [], "nothing of it left running");
	},
	150000,
);

await closeAll();
eq(procsMatching(new RegExp(esc(TOP))), [], "end: no process of this run is left");
process.exitCode = finish();
