// SPDX-License-Identifier: MIT
// The first-party apps git, postgres, terminal and browser through `berth mcp` and the
// official MCP SDK client, each against a real service started here:
//   git       Debian's git http-backend behind an HTTPS server on loopback
//             (tests/apps/git-http.py, a CA made here with openssl and shipped
//             in the app copy as ca.pem); host-side checks with the host's git
//   postgres  a cluster made with initdb and started with pg_ctl on a loopback
//             port (once for every check; never the system's service)
//   terminal  bash on a pseudo-terminal, screen rendered by libvterm
//   browser   Debian's headless Chromium, started once, against two HTTP
//             servers of this process on loopback: one declared, one not
// Run through tests/mcp/run-mcp-apps.sh BERTH REPO.  TAP output.
import { execFileSync, spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import readline from "node:readline";

import { BERTH, IS_ROOT, SRC, TOP, alive, appCopy, closeAll, connect, defer, eq, finish, freshXdg, has, ok, procsMatching, sleep, test } from "./harness.mjs";

const REPO = process.env.BERTH_MCP_REPO;
const rnd = () => crypto.randomBytes(8).toString("hex");
const sh = (cmd, args, opts = {}) => execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], ...opts });
const hostGit = (args, opts = {}) =>
	sh("git", ["-c", "user.name=host", "-c", "user.email=host@berth.test", ...args], {
		...opts,
		env: { PATH: "/usr/bin:/bin", HOME: TOP, GIT_CONFIG_NOSYSTEM: "1", ...(opts.env ?? {}) },
	}).trim();
const text = (r) => (r.content ?? []).map((c) => c.text ?? "").join("\n");
const CTRL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

/* berth test APP-DIR with env: {rc, out}. */
function berthTest(dir, env) {
	try {
		return { rc: 0, out: sh(BERTH, ["test", dir], { env: { PATH: process.env.PATH, ...env } }) };
	} catch (e) {
		return { rc: e.status, out: `${e.stdout}${e.stderr}` };
	}
}

/* A free TCP port on 127.0.0.1 (the kernel's choice, released again). */
async function freePort() {
	return await new Promise((res, rej) => {
		const s = net.createServer();
		s.on("error", rej);
		s.listen(0, "127.0.0.1", () => {
			const p = s.address().port;
			s.close(() => res(p));
		});
	});
}

/* Replace the app copy's network capabilities by the one given. */
function declareHost(dir, pattern) {
	const yml = path.join(dir, "berth.yml");
	const lines = fs.readFileSync(yml, "utf8").split("\n");
	const out = [];
	let done = false;
	for (const l of lines) {
		if (/^  - network:host:/.test(l)) {
			if (!done) out.push(`  - network:host:${pattern}`);
			done = true;
		} else out.push(l);
	}
	if (!done) throw new Error(`${yml}: no network capability`);
	fs.writeFileSync(yml, out.join("\n"));
}

/* ------------------------------------------------------------ git */

const G = path.join(TOP, "git");
let gitServer = null;

/* An HTTPS git server (git-http.py) on 127.0.0.1: {port, log, proc}. */
async function startGitServer(tag) {
	const log = path.join(G, `${tag}.log`);
	fs.writeFileSync(log, "");
	const proc = spawn("/usr/bin/python3", [path.join(REPO, "tests/apps/git-http.py"), "--root", path.join(G, "root"),
		"--cert", path.join(G, "srv.pem"), "--key", path.join(G, "srv.key"), "--log", log], { stdio: ["ignore", "pipe", "inherit"] });
	const port = await new Promise((res, rej) => {
		const rl = readline.createInterface({ input: proc.stdout });
		rl.on("line", (l) => {
			const m = /^ready (\d+)$/.exec(l);
			if (m) res(Number(m[1]));
		});
		proc.on("exit", (c) => rej(new Error(`git-http.py exited (${c})`)));
		setTimeout(() => rej(new Error("git-http.py did not start in 10 s")), 10000);
	});
	return { port, log, proc };
}

function gitSetup() {
	fs.mkdirSync(path.join(G, "root"), { recursive: true });
	const o = (args) => sh("openssl", args, { cwd: G });
	o(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=berth git test CA",
		"-keyout", "ca.key", "-out", "ca.pem", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"]);
	o(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", "srv.key", "-out", "srv.csr"]);
	fs.writeFileSync(path.join(G, "ext"), "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n");
	o(["x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "1", "-extfile", "ext", "-out", "srv.pem"]);
	const bare = path.join(G, "root", "r.git");
	hostGit(["init", "-q", "--bare", "-b", "main", bare]);
	hostGit(["-C", bare, "config", "http.receivepack", "true"]);
	// the server side's own hook: it runs in git http-backend, on the server,
	// never in the app (a marker on the host says whether it ran)
	const seed = path.join(G, "seed");
	hostGit(["clone", "-q", bare, seed]);
	fs.writeFileSync(path.join(seed, "README"), "seeded on the host\n");
	hostGit(["-C", seed, "add", "README"]);
	hostGit(["-C", seed, "commit", "-q", "-m", "seed"]);
	hostGit(["-C", seed, "push", "-q", "origin", "main"]);
	return { bare, seed };
}

const HOOKS = ["pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "pre-push", "post-checkout", "post-merge",
	"pre-merge-commit", "reference-transaction", "pre-auto-gc", "post-rewrite", "fsmonitor-watchman", "push-to-checkout"];

await test("git: clone, branch, commit, diff, push, pull over HTTPS through the broker", async () => {
	const { bare, seed } = gitSetup();
	gitServer = await startGitServer("server");
	defer(() => {});
	const evil = await startGitServer("undeclared"); // the same repositories, on a port not declared
	defer(() => evil.proc.kill("SIGKILL"));
	const app = appCopy("git", "git");
	declareHost(app.dir, `127.0.0.1:${gitServer.port}`);
	fs.copyFileSync(path.join(G, "ca.pem"), path.join(app.dir, "ca.pem"));
	fs.chmodSync(path.join(app.dir, "ca.pem"), 0o644);

	const t = berthTest(app.dir, freshXdg("git-test"));
	eq(t.rc, 0, "berth test passes", t.out);

	const c = await connect({ apps: [["git", app.dir]], tag: "git" });
	defer(() => c.close());
	const ws = path.join(c.env.XDG_STATE_HOME, "berth/apps/git/workspace");
	const call = (name, args) => c.client.callTool({ name, arguments: args });
	const tools = (await c.client.listTools()).tools.map((x) => x.name).sort();
	eq(tools, ["branch", "clone", "commit", "diff", "log", "pull", "push", "remote", "status", "write_file"], "tools/list: the git tools");

	const url = `https://127.0.0.1:${gitServer.port}/r.git`;
	let r = await call("clone", { url });
	eq(r.isError, false, "clone succeeds", text(r));
	eq(r.structuredContent?.head, hostGit(["--git-dir", bare, "rev-parse", "main"]), "clone: HEAD is the bare repository's main");
	eq(fs.readFileSync(path.join(ws, "r/README"), "utf8"), "seeded on the host\n", "clone: the work tree holds the file");

	// hooks and a program-running config planted in the workspace's repository from the host
	const mark = path.join(TOP, `hook-ran-${rnd()}`);
	for (const h of HOOKS) {
		const f = path.join(ws, "r/.git/hooks", h);
		fs.writeFileSync(f, `#!/bin/sh\necho "$0" >> /workspace/HOOK-RAN 2>/dev/null\necho "$0" >> ${mark} 2>/dev/null\nexit 0\n`);
		fs.chmodSync(f, 0o755);
	}

	r = await call("branch", { dir: "r", name: "feature" });
	eq(r.structuredContent, { current: "feature", branches: ["feature", "main"] }, "branch: created and checked out", text(r));
	r = await call("write_file", { dir: "r", path: "src/hello.txt", content: "hello from the app\n" });
	eq(r.isError, false, "write_file", text(r));
	r = await call("status", { dir: "r" });
	eq(r.structuredContent?.entries, [{ status: "??", path: "src/hello.txt" }], "status: the new file is untracked", text(r));
	fs.symlinkSync(".git/hooks", path.join(ws, "r/hooks-link"));
	r = await call("write_file", { dir: "r", path: "hooks-link/post-commit", content: "#!/bin/sh\n" });
	has(text(r), "`hooks-link` is a symbolic link; write_file follows none", "write_file follows no link into .git", text(r));
	eq(fs.existsSync(path.join(ws, "r/.git/hooks/post-commit")) && !fs.readFileSync(path.join(ws, "r/.git/hooks/post-commit"), "utf8").includes(mark) ? "written" : "not", "not", "nothing was written through the link");
	fs.unlinkSync(path.join(ws, "r/hooks-link"));
	r = await call("commit", { dir: "r", message: "add hello", all: true });
	eq(r.isError, false, "commit", text(r));
	const commit = r.structuredContent?.commit;
	r = await call("write_file", { dir: "r", path: "src/hello.txt", content: "hello again\n" });
	r = await call("diff", { dir: "r" });
	has(r.structuredContent?.diff, "-hello from the app\n+hello again\n", "diff: the change of the work tree", text(r));
	r = await call("commit", { dir: "r", message: "change hello", paths: ["src/hello.txt"] });
	const commit2 = r.structuredContent?.commit;
	ok(commit2 && commit2 !== commit, "commit of the given paths", text(r));
	r = await call("push", { dir: "r" });
	eq(r.isError, false, "push succeeds", text(r));
	eq(hostGit(["--git-dir", bare, "rev-parse", "feature"]), commit2, "push: the bare repository's feature is the app's commit (host's git)");
	eq(hostGit(["--git-dir", bare, "show", "feature:src/hello.txt"]), "hello again", "push: the content landed");

	// a commit made on the host, pulled by the app
	hostGit(["-C", seed, "pull", "-q", "origin", "main"]);
	fs.writeFileSync(path.join(seed, "HOST"), "from the host\n");
	hostGit(["-C", seed, "add", "HOST"]);
	hostGit(["-C", seed, "commit", "-q", "-m", "host side"]);
	hostGit(["-C", seed, "push", "-q", "origin", "main"]);
	const hostHead = hostGit(["-C", seed, "rev-parse", "HEAD"]);
	r = await call("branch", { dir: "r", name: "main" });
	eq(r.structuredContent?.current, "main", "branch: back to main");
	r = await call("pull", { dir: "r" });
	eq([r.isError, r.structuredContent?.head, r.structuredContent?.changed], [false, hostHead, true], "pull: the host's commit, fast-forwarded", text(r));
	eq(fs.readFileSync(path.join(ws, "r/HOST"), "utf8"), "from the host\n", "pull: the host's file is in the work tree");
	r = await call("log", { dir: "r", max: 1 });
	eq(r.structuredContent?.commits?.[0]?.subject, "host side", "log: the newest commit");

	eq(fs.existsSync(path.join(ws, "HOOK-RAN")) || fs.existsSync(mark), false,
		`no hook planted in the workspace's .git/hooks ran (${HOOKS.length} hooks; commit, checkout, push, pull)`);

	// an undeclared host: refused by the broker, with berth's denial block; nothing reached it
	r = await call("remote", { dir: "r", name: "elsewhere", url: `https://127.0.0.1:${evil.port}/r.git` });
	eq(r.isError, false, "remote: added", text(r));
	r = await call("push", { dir: "r", remote: "elsewhere" });
	eq(r.isError, true, "push to an undeclared host fails", text(r));
	has(text(r), "BERTH CAPABILITY DENIAL", "push to an undeclared host: the denial block");
	has(text(r), `denied: connect(2) to 127.0.0.1:${evil.port} (port ${evil.port} not declared for 127.0.0.1)`, "the denial names the destination");
	has(text(r), `fix: add "network:host:127.0.0.1:${evil.port}" to capabilities in ${app.dir}/berth.yml`, "the denial's fix");
	eq(fs.readFileSync(evil.log, "utf8"), "", "the undeclared server got no request");
	eq(hostGit(["--git-dir", bare, "rev-parse", "main"]), hostHead, "the bare repository is unchanged");
	r = await call("clone", { url: "ssh://127.0.0.1/r.git", dir: "x" });
	eq(r.isError, true, "clone over ssh is refused (https only)");

	// a config key that runs a program: refused, nothing ran
	hostGit(["-C", path.join(ws, "r"), "config", "core.fsmonitor", `echo fsmonitor >> ${mark}`]);
	r = await call("status", { dir: "r" });
	eq(r.isError, true, "status with core.fsmonitor set fails", text(r));
	has(text(r), "the repository's config sets `core.fsmonitor`", "the error names the key");
	eq(fs.existsSync(mark), false, "core.fsmonitor did not run");
	hostGit(["-C", path.join(ws, "r"), "config", "--unset", "core.fsmonitor"]);
	r = await call("status", { dir: "r" });
	eq(r.isError, false, "with the key removed, status works again", text(r));
	fs.writeFileSync(path.join(ws, "r/.git/commondir"), "../../elsewhere\n");
	r = await call("log", { dir: "r" });
	has(text(r), "the repository has a .git/commondir", "a planted commondir (another repository's config and hooks) refuses the call");
	// a repository whose .git is not a valid git directory: git must not go on
	// to a git directory above it (y/.git, never checked, with a clean filter)
	const y = path.join(ws, "y");
	for (const d of [".git/objects/pack", ".git/refs/heads", ".git/info", "sub/.git"]) fs.mkdirSync(path.join(y, d), { recursive: true });
	fs.writeFileSync(path.join(y, ".git/HEAD"), "ref: refs/heads/main\n");
	fs.writeFileSync(path.join(y, ".git/config"), '[filter "x"]\n\tclean = "echo ran >> /workspace/filter-ran; cat"\n');
	fs.writeFileSync(path.join(y, ".git/info/attributes"), "* filter=x\n");
	fs.writeFileSync(path.join(y, "sub/.git/config"), "");
	fs.writeFileSync(path.join(y, "sub/f"), "x\n");
	r = await call("commit", { dir: "y/sub", message: "m", paths: ["f"] });
	eq(r.isError, true, "commit in a directory whose .git is no git directory fails", text(r));
	eq(fs.existsSync(path.join(ws, "filter-ran")), false, "and git did not take the git directory above it (its clean filter did not run)");
	r = await call("status", { dir: "y/sub" });
	eq(fs.existsSync(path.join(ws, "filter-ran")), false, "status neither");
	for (const dir of ["z/.git", "r/.git", "r/.GIT/x"]) {
		r = await call("clone", { url: `https://127.0.0.1:${gitServer.port}/r.git`, dir });
		has(text(r), "no `.git` component", `clone into ${dir} is refused (a tree there would be a git directory)`, text(r));
	}
	eq(fs.existsSync(path.join(ws, "z")), false, "and nothing was cloned");
	eq(procsMatching(/git-http-backend/).length, 0, "no git http-backend left running");
}, 120000);

/* ------------------------------------------------------------ postgres */

// Debian's newest installed server (postgresql-NN puts it in /usr/lib/postgresql/NN/bin)
const pgBin = () => {
	const v = fs.readdirSync("/usr/lib/postgresql").filter((d) => fs.existsSync(`/usr/lib/postgresql/${d}/bin/initdb`));
	if (!v.length) throw new Error("no PostgreSQL server in /usr/lib/postgresql (install postgresql-15: scripts/deps.sh)");
	return `/usr/lib/postgresql/${v.sort((a, b) => Number(b) - Number(a))[0]}/bin`;
};
const PG = { bin: pgBin(), dir: path.join(TOP, "pg"), port: 0, pw: `pw-${rnd()}` };
const asPgUser = (cmd, args) => (IS_ROOT ? sh("runuser", ["-u", "nobody", "--", cmd, ...args]) : sh(cmd, args));
const psql = (sql) => sh("/usr/bin/psql", ["-X", "-q", "-A", "-t", "-h", "127.0.0.1", "-p", String(PG.port), "-U", "berth", "-d", "postgres", "-c", sql],
	{ env: { PATH: "/usr/bin:/bin", PGPASSWORD: PG.pw } }).trim();

async function pgStart() {
	fs.mkdirSync(PG.dir, { mode: 0o700 });
	if (IS_ROOT) sh("chown", ["nobody:nogroup", PG.dir]); // initdb refuses root
	const pwfile = path.join(PG.dir, "pw");
	fs.writeFileSync(pwfile, PG.pw + "\n", { mode: 0o600 });
	if (IS_ROOT) sh("chown", ["nobody:nogroup", pwfile]);
	asPgUser(`${PG.bin}/initdb`, ["-D", path.join(PG.dir, "data"), "-U", "berth", "--auth=scram-sha-256", `--pwfile=${pwfile}`, "-E", "UTF8", "--no-sync"]);
	PG.port = await freePort();
	asPgUser(`${PG.bin}/pg_ctl`, ["-D", path.join(PG.dir, "data"), "-l", path.join(PG.dir, "log"), "-w", "-t", "30", "-o",
		`-c listen_addresses=127.0.0.1 -p ${PG.port} -c unix_socket_directories=${PG.dir} -c fsync=off -c log_statement=all`, "start"]);
	psql("CREATE TABLE items (id int PRIMARY KEY, name text, price numeric, added date); " +
		"INSERT INTO items VALUES (1, 'one', 1.50, '2026-01-02'), (2, 'two', 2.25, '2026-03-04')");
}

function pgStop() {
	try {
		asPgUser(`${PG.bin}/pg_ctl`, ["-D", path.join(PG.dir, "data"), "-m", "immediate", "-w", "stop"]);
	} catch {}
}

/* Every file under dir (a tree of the test's own) whose bytes hold needle. */
function filesHolding(dir, needle) {
	const out = [];
	const walk = (d) => {
		for (const e of fs.readdirSync(d, { withFileTypes: true })) {
			const p = path.join(d, e.name);
			if (e.isDirectory()) walk(p);
			else if (e.isFile()) {
				try {
					if (fs.readFileSync(p).includes(needle)) out.push(p);
				} catch {}
			}
		}
	};
	walk(dir);
	return out;
}

await test("postgres: a real PostgreSQL, read-only by default, the connection string a secret", async () => {
	await pgStart();
	const dsn = `postgresql://berth:${PG.pw}@127.0.0.1:${PG.port}/postgres`;
	const app = appCopy("postgres", "pg");
	declareHost(app.dir, `127.0.0.1:${PG.port}`);
	const t = berthTest(app.dir, { ...freshXdg("pg-test"), POSTGRES_URL: dsn });
	eq(t.rc, 0, "berth test passes", t.out);
	ok(!t.out.includes(PG.pw), "berth test's output does not hold the password");

	const c = await connect({ apps: [["postgres", app.dir]], env: { ...freshXdg("pg"), POSTGRES_URL: dsn }, tag: "pg" });
	defer(() => c.close());
	const call = (name, args) => c.client.callTool({ name, arguments: args });
	const list = await c.client.listTools();
	eq(list.tools.map((x) => x.name).sort(), ["describe_table", "info", "list_tables", "query"], "tools/list: the postgres tools");
	ok(!JSON.stringify(list).includes(PG.pw) && !JSON.stringify(list).includes(dsn), "tools/list holds neither the connection string nor its password");

	let r = await call("query", { sql: "SELECT id, name, price, added FROM items WHERE id >= %s ORDER BY id", params: [1] });
	eq(r.structuredContent, { command: "SELECT 2", row_count: 2, columns: ["id", "name", "price", "added"],
		rows: [[1, "one", "1.50", "2026-01-02"], [2, "two", "2.25", "2026-03-04"]], truncated: false }, "select: the rows", text(r));
	r = await call("query", { sql: "INSERT INTO items VALUES (3, 'three', 3, NULL)" });
	eq(r.isError, true, "INSERT under read-only: isError", text(r));
	has(text(r), "cannot execute INSERT in a read-only transaction", "the Postgres error is surfaced");
	has(text(r), '"sqlstate":"25006"', "with its SQLSTATE");
	r = await call("query", { sql: "SET TRANSACTION READ WRITE" });
	has(text(r), "transaction read-write mode must be set before any query", "the transaction cannot be made read-write");
	r = await call("query", { sql: "SET default_transaction_read_only = off; INSERT INTO items VALUES (4, 'x', 0, NULL)" });
	eq(r.isError, true, "a second statement is refused", text(r));
	r = await call("query", { sql: "SELECT $$;$$ AS a, ';' AS b -- ; comment\n; /* ; */" });
	eq(r.structuredContent?.rows, [[";", ";"]], "a `;` in quotes, dollar quotes and comments is no second statement", text(r));
	r = await call("query", { sql: String.raw`SELECT E'\';' AS e, 'a\' AS s, "x;y" FROM (SELECT 1 AS "x;y") q` });
	eq(r.structuredContent?.rows, [["';", "a\\", 1]], "E'' strings, a plain string's backslash, a quoted identifier", text(r));
	r = await call("query", { sql: String.raw`SELECT 'a\''; DELETE FROM items; --' AS s` });
	eq(r.structuredContent?.rows, [["a\\'; DELETE FROM items; --"]], "a backslash before a quote ends no string (standard_conforming_strings on, forced)", text(r));
	r = await call("query", { sql: "SET standard_conforming_strings = off" });
	r = await call("query", { sql: String.raw`SELECT 'a\'';' AS s` });
	eq(r.structuredContent?.rows, [["a\\';"]], "standard_conforming_strings stays on (a SET in a read-only call is rolled back)", text(r));
	// a placeholder inside quotes: psycopg2 puts the quoted value there, so
	// the text sent is what must hold one statement, not the text given
	const inj = ";COMMIT;BEGIN READ WRITE;INSERT INTO items VALUES (5, NULL, 0, NULL);COMMIT;--";
	r = await call("query", { sql: "SELECT '%s' AS s", params: [inj] });
	eq(r.isError, true, "a %s placeholder in quotes whose value makes a second statement is refused", text(r));
	has(text(r), "one statement per call", "as a second statement", text(r));
	eq(psql("SELECT count(*) FROM items WHERE id = 5"), "0", "host side: nothing was inserted");
	r = await call("query", { sql: "SELECT %s AS s", params: [inj] });
	eq(r.structuredContent?.rows, [[inj]], "the same value at a placeholder outside quotes is one string", text(r));
	eq(psql("SELECT count(*) FROM items"), "2", "host side: the table still has 2 rows");
	r = await call("list_tables", {});
	eq(r.structuredContent?.tables, [{ schema: "public", name: "items", type: "BASE TABLE" }], "list_tables", text(r));
	r = await call("describe_table", { table: "items" });
	eq(r.structuredContent?.columns?.[0], { name: "id", type: "integer", nullable: false }, "describe_table", text(r));
	r = await call("info", {});
	eq(r.structuredContent, { host: "127.0.0.1", port: PG.port, dbname: "postgres", user: "berth", read_only: true }, "info: never the password", text(r));
	await c.close();

	// writes, when the app directory's config.json allows them
	const w = appCopy("postgres", "pgw");
	declareHost(w.dir, `127.0.0.1:${PG.port}`);
	fs.writeFileSync(path.join(w.dir, "config.json"), '{"allow_writes": true}\n');
	fs.chmodSync(path.join(w.dir, "config.json"), 0o644);
	const cw = await connect({ apps: [["postgres", w.dir]], env: { ...freshXdg("pgw"), POSTGRES_URL: dsn }, tag: "pgw" });
	defer(() => cw.close());
	r = await cw.client.callTool({ name: "query", arguments: { sql: "INSERT INTO items VALUES (3, 'three', 3, NULL)" } });
	eq([r.isError, r.structuredContent?.command], [false, "INSERT 0 1"], "allow_writes: INSERT succeeds", text(r));
	eq(psql("SELECT name FROM items WHERE id = 3"), "three", "host side: the row is there");
	r = await cw.client.callTool({ name: "query", arguments: { sql: "INSERT INTO items VALUES (3, 'dup', 3, NULL)" } });
	has(text(r), "duplicate key value violates unique constraint", "a failing write: the Postgres error");
	await cw.close();

	// a server the manifest does not declare: refused, explained
	const o = appCopy("postgres", "pgo");
	const other = await freePort();
	declareHost(o.dir, `127.0.0.1:${other}`);
	const co = await connect({ apps: [["postgres", o.dir]], env: { ...freshXdg("pgo"), POSTGRES_URL: dsn }, tag: "pgo" });
	defer(() => co.close());
	r = await co.client.callTool({ name: "query", arguments: { sql: "SELECT 1" } });
	eq(r.isError, true, "a connection string naming an undeclared port fails", text(r));
	has(text(r), `fix: add "network:host:127.0.0.1:${PG.port}"`, "with the denial block's fix");
	await co.close();

	const logs = [c, cw, co].map((x) => x.stderr()).join("\n") + JSON.stringify([c.rx, cw.rx, co.rx]);
	ok(!logs.includes(PG.pw), "neither berth mcp's stderr nor any message to the client holds the password");
	eq(filesHolding(path.join(TOP, "xdg"), PG.pw), [], "no file of berth's state (audit trail, app state) holds the password");
}, 120000);
pgStop();

/* ------------------------------------------------------------ terminal */

await test("terminal: a shared shell, keys and the rendered screen", async () => {
	const app = appCopy("terminal", "term");
	const t = berthTest(app.dir, freshXdg("term-test"));
	eq(t.rc, 0, "berth test passes", t.out);
	const c = await connect({ apps: [["terminal", app.dir]], tag: "term" });
	defer(() => c.close());
	const call = (name, args) => c.client.callTool({ name, arguments: args });
	eq((await c.client.listTools()).tools.map((x) => x.name).sort(), ["read_screen", "run_command", "send_keys"], "tools/list");

	let r = await call("run_command", { command: "echo hello; echo oops >&2; (exit 4)" });
	eq(r.structuredContent, { output: "hello\noops\n", truncated: false, timed_out: false, exit_code: 4 }, "run_command: output and exit code", text(r));
	r = await call("run_command", { command: "cd /tmp && X=shared" });
	r = await call("run_command", { command: 'echo "$PWD $X"' });
	eq(r.structuredContent?.output, "/tmp shared\n", "the shell is shared: cwd and variables persist between calls");
	r = await call("run_command", { command: String.raw`printf '\033[2J\033[31mred\033[0m \033]0;title\007\033P+q544e\033\\\302\23331m\r\nend\n'` });
	eq(r.structuredContent?.output, "red \nend\n", "escape sequences (CSI, OSC, DCS, a C1 CSI in UTF-8) are filtered out of the output", JSON.stringify(r.structuredContent));
	ok(!CTRL.test(r.structuredContent?.output.replace(/\n/g, "")), "no control character in the output");

	// an interactive program: python's REPL
	r = await call("run_command", { command: "python3 -q", timeout_ms: 1500 });
	eq(r.structuredContent?.timed_out, true, "an interactive program keeps the terminal (timed_out)", text(r));
	r = await call("run_command", { command: "echo no" });
	has(text(r), "still running a command", "run_command while it runs: refused, pointing to send_keys");
	r = await call("send_keys", { text: "print(6 * 7, 'x' * 3)", keys: ["Enter"] });
	eq(r.isError, false, "send_keys", text(r));
	r = await call("read_screen", {});
	const scr = r.structuredContent;
	ok(scr?.rows?.some((l) => l === "42 xxx"), "read_screen shows what the program printed", JSON.stringify(scr?.rows));
	ok(scr?.rows?.some((l) => l === ">>> print(6 * 7, 'x' * 3)"), "read_screen shows the typed line at the prompt", JSON.stringify(scr?.rows));
	eq([scr?.width, scr?.height, scr?.rows?.length], [80, 24, 24], "the screen is 80x24");
	ok(scr?.rows?.every((l) => !CTRL.test(l)), "no control character on the screen's rows");
	r = await call("send_keys", { keys: ["C-d"] });
	r = await call("run_command", { command: "echo back" });
	eq(r.structuredContent?.output, "back\n", "after C-d the shell takes commands again", text(r));

	// clear the screen, then draw with cursor movements: the rendering, not the byte stream
	r = await call("run_command", { command: String.raw`clear; printf 'abc\033[1;2HX\033[5;10Hfar\n'` });
	r = await call("read_screen", {});
	eq(r.structuredContent?.rows?.slice(0, 5), ["aXc", "", "", "", "         far"], "read_screen renders cursor movements", JSON.stringify(r.structuredContent?.rows));

	r = await call("run_command", { command: "exit 7" });
	eq([r.structuredContent?.shell_exited, r.structuredContent?.exit_code, r.structuredContent?.timed_out], [true, 7, false], "exit ends the shell: its status", text(r));
	r = await call("run_command", { command: 'echo "new $X"' });
	eq(r.structuredContent?.output, "new \n", "the next call starts a new shell", text(r));

	// the app's policy holds for the shell
	const probe = `/etc/berth-term-${rnd()}`;
	r = await call("run_command", { command: `echo x > ${probe}` });
	ok(r.structuredContent?.exit_code !== 0, "the shell cannot write /etc", text(r));
	eq(fs.existsSync(probe), false, "nothing was written to the host's /etc");
	r = await call("run_command", { command: "cat /root/.bashrc /home/*/.bashrc 2>&1 | head -1; ls / | tr '\\n' ' '" });
	ok(!/PS1|alias/.test(r.structuredContent?.output ?? ""), "the host's home directories are not there", text(r));
	r = await call("run_command", { command: "exec 3<>/dev/tcp/1.1.1.1/80 && echo connected" });
	ok(!(r.structuredContent?.output ?? "").includes("connected"), "no network (no network capability)", text(r));
}, 90000);

/* ------------------------------------------------------------ browser */

/* An HTTP server on 127.0.0.1 (a free port) answering with routes[path] ({status, headers, body}); every
   connection and request it gets is counted: {port, conns, reqs, close}. */
async function startSite(routes) {
	const http = await import("node:http");
	const st = { conns: 0, reqs: [] };
	const srv = http.createServer((req, res) => {
		st.reqs.push(req.url);
		const r = routes[req.url.split("?")[0]] ?? { status: 404, body: "no such page" };
		res.writeHead(r.status ?? 200, { "Content-Type": "text/html; charset=utf-8", ...(r.headers ?? {}) });
		res.end(typeof r.body === "function" ? r.body(req) : r.body ?? "");
	});
	srv.on("connection", () => st.conns++);
	await new Promise((res) => srv.listen(0, "127.0.0.1", res));
	st.port = srv.address().port;
	st.close = () => { srv.closeAllConnections(); srv.close(); };
	return st;
}

const ppid = (pid) => {
	try {
		const s = fs.readFileSync(`/proc/${pid}/stat`, "latin1");
		return Number(s.slice(s.lastIndexOf(")") + 2).split(" ")[1]);
	} catch {
		return 0;
	}
};
const descends = (pid, from) => {
	for (let p = pid, n = 0; p > 1 && n < 64; p = ppid(p), n++) if (p === from) return true;
	return false;
};
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

await test("browser: headless Chromium through the broker, screenshots as MCP image content", async () => {
	const evil = await startSite({ "/": { body: "<title>undeclared</title>must not be reached" } });
	defer(() => evil.close());
	const title = `berth browser test ${rnd()}`;
	const site = await startSite({
		"/": { body: `<!doctype html><title>${title}</title><style>body{background:#2a6}</style>
			<h1 id="h">Hello from the declared host</h1><p class="p">first paragraph</p>
			<a id="next" href="/next">next</a>
			<form action="/search"><input id="q" name="q"></form>` },
		"/next": { body: "<title>next page</title><p>the second page</p>" },
		"/search": { body: (req) => `<title>search: ${new URL(req.url, "http://x").searchParams.get("q")}</title>` },
		"/away": { status: 302, headers: { Location: `http://127.0.0.1:${evil.port}/` } },
		"/images": { body: `<title>images</title><img src="/none.png"><img src="http://127.0.0.1:${evil.port}/a.png"><img src="https://127.0.0.1:${evil.port}/b.png">` },
	});
	defer(() => site.close());
	// an HTTPS server with a self-signed certificate, declared too, its key pinned in the app's tls-pins.txt
	const tdir = path.join(TOP, "browser-tls");
	fs.mkdirSync(tdir);
	sh("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
		"-addext", "subjectAltName=IP:127.0.0.1", "-keyout", "k.pem", "-out", "c.pem"], { cwd: tdir });
	const https = await import("node:https");
	const tls = { conns: 0, reqs: 0 };
	const tsrv = https.createServer({ key: fs.readFileSync(path.join(tdir, "k.pem")), cert: fs.readFileSync(path.join(tdir, "c.pem")) }, (req, res) => {
		tls.reqs++;
		res.end("<title>over https</title>");
	});
	tsrv.on("connection", () => tls.conns++);
	tsrv.on("tlsClientError", () => {});
	await new Promise((res) => tsrv.listen(0, "127.0.0.1", res));
	defer(() => { tsrv.closeAllConnections(); tsrv.close(); });
	const app = appCopy("browser", "browser");
	declareHost(app.dir, `127.0.0.1:${site.port}`);
	const yml = path.join(app.dir, "berth.yml");
	fs.writeFileSync(yml, fs.readFileSync(yml, "utf8").replace(/^(  - network:host:.*)$/m, `$1\n  - network:host:127.0.0.1:${tsrv.address().port}`));
	const spki = sh("sh", ["-c", "openssl x509 -in c.pem -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64"], { cwd: tdir }).trim();
	fs.writeFileSync(path.join(app.dir, "tls-pins.txt"), `# the test server's key\n${spki}\n`);
	fs.chmodSync(path.join(app.dir, "tls-pins.txt"), 0o644);

	const t = berthTest(app.dir, freshXdg("browser-test"));
	eq(t.rc, 0, "berth test passes (the manifest's examples: a refused host, a screenshot, ...)", t.out);
	const t0 = berthTest(path.join(SRC, "browser"), freshXdg("browser-test0"));
	eq([t0.rc, /# browser: \d+ passed, 0 failed/.test(t0.out)], [0, true], "berth test passes on apps/browser as shipped", t0.out);

	const c = await connect({ apps: [["browser", app.dir]], tag: "browser" });
	defer(() => c.close());
	const call = (name, args) => c.client.callTool({ name, arguments: args });
	eq((await c.client.listTools()).tools.map((x) => x.name).sort(), ["click", "content", "navigate", "read_text", "screenshot", "type"], "tools/list");

	const base = `http://127.0.0.1:${site.port}`;
	let r = await call("navigate", { url: `${base}/` });
	eq([r.isError, r.structuredContent], [false, { url: `${base}/`, title, status: 200 }], "navigate: the title, the URL and the status", text(r));
	eq(site.reqs.slice(0, 1), ["/"], "the declared host got the request");
	r = await call("read_text", {});
	has(r.structuredContent?.text, "Hello from the declared host\n\nfirst paragraph", "read_text: the page's text", text(r));
	r = await call("read_text", { selector: "p.p" });
	eq(r.structuredContent?.text, "first paragraph", "read_text of a selector");
	r = await call("content", {});
	has(r.structuredContent?.html, '<h1 id="h">Hello from the declared host</h1>', "content: the DOM's HTML", text(r));

	r = await call("screenshot", {});
	const img = (r.content ?? []).filter((b) => b.type === "image");
	eq([r.isError, img.length, img[0]?.mimeType], [false, 1, "image/png"], "screenshot: one image content block, image/png", JSON.stringify(r).slice(0, 300));
	const png = Buffer.from(img[0]?.data ?? "", "base64");
	ok(png.length > 0 && png.subarray(0, 8).equals(PNG_MAGIC), "the image is a PNG (magic bytes)", png.subarray(0, 8));
	eq([png.length, png.readUInt32BE(16), png.readUInt32BE(20)], [r.structuredContent?.bytes, 1280, 800], "its size and IHDR dimensions are the output's (1280x800)");
	eq(r.structuredContent?.image, img[0]?.data, "structuredContent carries the same base64 (it conforms to the output schema)");
	const tb = (r.content ?? []).filter((b) => b.type === "text");
	ok(tb.length === 1 && !tb[0].text.includes(img[0]?.data.slice(0, 64)) && JSON.parse(tb[0].text).title === title,
		"the text block is the output's JSON without the image", tb[0]?.text?.slice(0, 200));
	// the page's colour (#2a6 = 34,170,102) is in the picture: a real rendering, not a blank one
	const { inflateSync } = await import("node:zlib");
	const idat = [];
	for (let o = 8; o < png.length; ) {
		const n = png.readUInt32BE(o), type = png.toString("latin1", o + 4, o + 8);
		if (type === "IDAT") idat.push(png.subarray(o + 8, o + 8 + n));
		o += 12 + n;
	}
	const raw = inflateSync(Buffer.concat(idat));
	// 8 bits per channel, RGB(A); the first row's first pixel follows its filter byte, and every
	// filter leaves that pixel as it is (no pixel left of it or above it)
	eq([png[24], [2, 6].includes(png[25]), [raw[1], raw[2], raw[3]]], [8, true, [34, 170, 102]], "the first pixel is the page's background colour", [png[24], png[25], raw.subarray(0, 8)]);

	r = await call("click", { selector: "#next" });
	eq([r.isError, r.structuredContent], [false, { title: "next page", url: `${base}/next`, status: 200 }], "click follows the link (the new page's status: it waited for that navigation)", text(r));
	const tf = Date.now();
	r = await call("navigate", { url: `${base}/next#part`, timeout_ms: 60000 });
	eq([r.isError, r.structuredContent?.url, Date.now() - tf < 30000], [false, `${base}/next#part`, true],
		"navigate to a #fragment of the page answers without a load event (none comes: no 60 s wait)", text(r));
	r = await call("navigate", { url: `${base}/` });
	r = await call("type", { selector: "#q", text: "hello berth", submit: true });
	eq([r.structuredContent?.title, r.structuredContent?.status], ["search: hello berth", 200], "type with submit sends the form", text(r));
	r = await call("click", { selector: "#missing" });
	has(text(r), "no element matches `#missing`", "click on a selector that matches nothing");

	// undeclared: refused by berth's broker, with the denial; nothing reached that server
	const chromium = procsMatching(/chromium-headless-shell/);
	const appPid = procsMatching(app.marker)[0];
	const ours = chromium.filter((p) => descends(p, appPid));
	ok(ours.length >= 2, "Chromium runs inside the app's sandbox (its processes descend from the app)", chromium, appPid);
	for (const [what, url] of [["http", `http://127.0.0.1:${evil.port}/`], ["https (CONNECT)", `https://127.0.0.1:${evil.port}/`], ["a redirect from the declared host", `${base}/away`]]) {
		r = await call("navigate", { url });
		eq(r.isError, true, `navigate to an undeclared host (${what}) fails`, text(r));
		has(text(r), `berth's egress broker refused 127.0.0.1:${evil.port}`, `${what}: the error says the broker refused it`);
		has(text(r), "BERTH CAPABILITY DENIAL", `${what}: the denial block`);
		has(text(r), `denied: connect(2) to 127.0.0.1:${evil.port} (port ${evil.port} not declared for 127.0.0.1)`, `${what}: the denial names the destination`);
		has(text(r), `fix: add "network:host:127.0.0.1:${evil.port}" to capabilities in ${app.dir}/berth.yml`, `${what}: the denial's fix`);
	}
	r = await call("navigate", { url: `${base}/images` });
	eq([r.isError, r.structuredContent?.title, r.structuredContent?.refused], [false, "images", [`127.0.0.1:${evil.port}`]],
		"navigate names the host the broker refused for the page's images (over http and https), not the declared host's 404", text(r));
	eq([evil.conns, evil.reqs], [0, []], "the undeclared server got no connection and no request");
	// https to a declared host: through the broker's tunnel (CONNECT), the certificate taken by its pinned key
	const turl = `https://127.0.0.1:${tsrv.address().port}/`;
	r = await call("navigate", { url: turl });
	eq([r.isError, r.structuredContent], [false, { url: turl, title: "over https", status: 200 }], "https to a declared host (its key in tls-pins.txt): the page", text(r));
	eq(tls.reqs, 1, "the HTTPS server got the request");
	ok(site.reqs.includes("/away"), "the declared host served the redirect");
	r = await call("navigate", { url: "file:///etc/passwd" });
	has(text(r), "only http and https", "file: URLs are not opened");
	r = await call("navigate", { url: `${base}/next` });
	eq(r.structuredContent?.title, "next page", "after the refusals the browser still works (one Chromium for every check)", text(r));
	eq(procsMatching(/chromium-headless-shell/).filter((p) => descends(p, appPid)).includes(ours[0]), true, "the same Chromium served every call");
	await c.close();
	const until = Date.now() + 10000;
	while (ours.some(alive) && Date.now() < until) await sleep(100);
	eq(ours.filter(alive), [], "closing the client stops Chromium (the sandbox is gone)");
}, 120000);

await closeAll();
eq(procsMatching(new RegExp(`${TOP.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/(w|pg)/`)), [], "end: no process of this run is left (apps, postgres)");
if (gitServer) gitServer.proc.kill("SIGKILL");
process.exitCode = finish();
