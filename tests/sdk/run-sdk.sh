#!/usr/bin/env bash
# The JavaScript SDK and the agent-loop clients (docs/sdk.md), TAP output:
#   - sdk/typescript's unit tests (node:test);
#   - `berth init --runtime node` makes an app that passes `berth test`;
#   - tests/sdk/fixtures/tsprobe (@berth/sdk with zod in its node_modules)
#     passes `berth test`, its `--berth-exports` are its manifest's, and it is
#     called through `berth mcp` by the official MCP TypeScript SDK client;
#   - the clients' adapters (sdk/typescript/client.js, sdk/python/berth_client.py)
#     give exactly what `berth tools --format F` prints, and their functions
#     run the tools in the sandbox; in the real Vercel AI SDK, OpenAI Agents
#     SDK and LangChain.js too (tests/sdk/frameworks.mjs);
#   - examples/agent-loop (TypeScript, Python) against a mock of the Anthropic
#     Messages API (tests/sdk/mock-anthropic.py): the scripted tool_use runs in
#     the app's sandbox (the file it wrote is in its workspace) and its
#     tool_result goes back to the model.
#
# usage: tests/sdk/run-sdk.sh /path/to/berth /path/to/repo
# Needs node >= 20 and npm; zod, typescript, @types/node, the MCP SDK, ai,
# @langchain/core and @openai/agents-core come from tests/mcp's npm install
# (package-lock.json, pinned versions), shared with the mcp suite
# (tests/mcp/run-mcp.sh).
# Works as root and as an unprivileged user; exits non-zero if any check
# failed; nothing is skipped.
set -u
export LC_ALL=C
unset BERTH_TEST_FORCE_OFF BERTH_SDK_PYTHON BERTH_SDK_NODE NODE_PATH
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

if [ $# -ne 2 ]; then
	echo "usage: $0 /path/to/berth /path/to/repo" >&2
	exit 2
fi
BERTH=$(readlink -f -- "$1")
REPO=$(readlink -f -- "$2")
HERE=$REPO/tests/sdk
MCPDIR=$REPO/tests/mcp
NODE=${NODE:-/usr/bin/node}
NPM=${NPM:-/usr/bin/npm}
bail() { echo "Bail out! $*"; exit 1; }
[ -x "$BERTH" ] || bail "no berth binary at $1"
[ -x "$NODE" ] || bail "no node at $NODE"
nv=$("$NODE" -p 'process.versions.node.split(".")[0]') || bail "$NODE does not run"
[ "$nv" -ge 20 ] || bail "node $nv: want >= 20"

TOP=$(mktemp -d /tmp/berth-sdk-test.XXXXXX) || bail "mktemp failed"
chmod 755 "$TOP" # the apps' sandbox identities must be able to traverse to /app
MOCKPID=
# shellcheck disable=SC2317  # invoked by the traps
cleanup() {
	[ -n "$MOCKPID" ] && kill "$MOCKPID" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$TOP" 2>/dev/null || { chmod -R u+rwx "$TOP" 2>/dev/null; rm -rf "$TOP"; }
}
trap cleanup EXIT
trap 'cleanup; trap - EXIT; exit 130' INT TERM
export XDG_STATE_HOME=$TOP/state XDG_RUNTIME_DIR=$TOP/run
mkdir -m 700 "$XDG_STATE_HOME" "$XDG_RUNTIME_DIR" || bail "cannot make the state directories"

# ---- npm: tests/mcp's install (as run-mcp.sh makes it), else a private one
stamp=$MCPDIR/node_modules/.berth-package-lock.json
if [ -w "$MCPDIR" ] && ! cmp -s "$MCPDIR/package-lock.json" "$stamp"; then
	echo "# npm: installing tests/mcp's packages into $MCPDIR/node_modules"
	(cd "$MCPDIR" && "$NPM" ci --no-audit --no-fund --loglevel=error) >&2 || bail "npm ci failed"
	cp "$MCPDIR/package-lock.json" "$stamp"
	chmod -R a+rX "$MCPDIR/node_modules"
fi
if [ -r "$stamp" ] && cmp -s "$MCPDIR/package-lock.json" "$stamp"; then
	NM=$MCPDIR/node_modules
else
	echo "# npm: installing tests/mcp's packages into $TOP/js/node_modules"
	mkdir "$TOP/js" && cp "$MCPDIR/package.json" "$MCPDIR/package-lock.json" "$TOP/js/" || bail "cannot stage npm"
	(cd "$TOP/js" && npm_config_cache=$TOP/npm-cache "$NPM" ci --no-audit --no-fund --loglevel=error) >&2 ||
		bail "npm ci failed"
	NM=$TOP/js/node_modules
fi
[ -f "$NM/zod/package.json" ] && [ -f "$NM/typescript/bin/tsc" ] || bail "no zod or typescript in $NM"
echo "# zod $("$NODE" -p "require('$NM/zod/package.json').version"), MCP SDK $("$NODE" -p "require('$NM/@modelcontextprotocol/sdk/package.json').version"), node $("$NODE" --version), $(id -un)"

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"
	[ -f "$TOP/out" ] && sed 's/^/# /' "$TOP/out" | tail -40
}
check() { # check NAME CMD...: ok when CMD exits 0 (its output in $TOP/out)
	local name=$1; shift
	if "$@" >"$TOP/out" 2>&1; then ok "$name"; else not_ok "$name (status $?)"; fi
}

# ---- 1. the app SDK's unit tests
check "sdk/typescript unit tests (node --test)" env BERTH_TEST_NODE_MODULES="$NM" \
	"$NODE" --test "$REPO/sdk/typescript/test/"

# ---- the declarations: a TypeScript app and client (tests/sdk/typecheck/app.ts,
# its @ts-expect-error lines must stay errors) and the example, checked with tsc
typecheck() {
	cat >"$TOP/tsconfig.json" <<JSON
{ "compilerOptions": { "strict": true, "noEmit": true, "allowJs": true, "checkJs": true,
    "target": "es2022", "module": "node16", "moduleResolution": "node16",
    "types": ["node"], "typeRoots": ["$NM/@types"], "baseUrl": ".",
    "paths": { "@berth/sdk": ["$REPO/sdk/typescript/index.d.ts"],
               "@berth/sdk/client": ["$REPO/sdk/typescript/client.d.ts"],
               "zod": ["$NM/zod/index.d.cts"] } },
  "files": ["$HERE/typecheck/app.ts", "$REPO/examples/agent-loop/agent.mjs"] }
JSON
	"$NODE" "$NM/typescript/bin/tsc" -p "$TOP/tsconfig.json"
}
check "tsc --strict: sdk/typescript's declarations, a typed app and client, the example" typecheck

# ---- 2. berth init --runtime node, then berth test
cd "$TOP" || bail "cd $TOP"
if "$BERTH" init hello-node --runtime node --dir "$TOP/hello-node" >"$TOP/out" 2>&1 &&
	[ -f "$TOP/hello-node/index.js" ] && grep -qx 'runtime: node' "$TOP/hello-node/berth.yml" &&
	grep -qx 'entry: index.js' "$TOP/hello-node/berth.yml"; then
	ok "berth init --runtime node writes berth.yml and index.js"
else
	not_ok "berth init --runtime node writes berth.yml and index.js"
fi
chmod -R a+rX "$TOP/hello-node"
check "the scaffolded node app passes berth test" "$BERTH" test "$TOP/hello-node"
"$BERTH" init x --runtime deno --dir "$TOP/deno" >"$TOP/out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -qx 'berth: init: unknown runtime `deno`: use native, python or node' "$TOP/out" &&
	[ ! -e "$TOP/deno" ]; then
	ok "berth init refuses an unknown runtime (status 2), nothing made"
else
	not_ok "berth init refuses an unknown runtime (status $rc)"
fi
# the SDK missing: the error names the variable that fixes it
BERTH_SDK_NODE=$TOP/nothing "$BERTH" test "$TOP/hello-node" >"$TOP/out" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q 'cannot find the berth JavaScript SDK for the node app `hello-node`' "$TOP/out" &&
	grep -q 'hint: set BERTH_SDK_NODE' "$TOP/out"; then
	ok "a node app without the SDK: the error names BERTH_SDK_NODE (status $rc)"
else
	not_ok "a node app without the SDK: the error names BERTH_SDK_NODE (status $rc)"
fi

# ---- 3. tsprobe: the SDK with zod
APP=$TOP/tsprobe
cp -a "$HERE/fixtures/tsprobe" "$APP" && mkdir "$APP/node_modules" && cp -a "$NM/zod" "$APP/node_modules/" ||
	bail "cannot stage tsprobe"
chmod -R a+rX "$APP"
check "tsprobe (@berth/sdk + zod) passes berth test" "$BERTH" test "$APP"
# its --berth-exports are its manifest's (the SDK found by a developer's NODE_PATH)
mkdir -p "$TOP/np/@berth" && ln -s "$REPO/sdk/typescript" "$TOP/np/@berth/sdk"
same_exports() {
	(cd "$APP" && NODE_PATH=$TOP/np "$NODE" index.js --berth-exports) >"$TOP/exports.json" &&
		"$BERTH" tools "$APP" --format mcp >"$TOP/tools.json" &&
		"$NODE" -e '
const a = require(process.argv[1]), t = require(process.argv[2]).tools;
const b = t.map((x) => ({ name: x.name, description: x.description, input: x.inputSchema, output: x.outputSchema }));
require("node:assert/strict").deepEqual(a, b);' "$TOP/exports.json" "$TOP/tools.json"
}
check "tsprobe: node index.js --berth-exports gives its manifest's exports" same_exports
out=$("$BERTH" rpc tsprobe --app-dir "$APP" --export note --input '{"file":"rpc.txt","text":"via rpc"}' 2>"$TOP/out")
rc=$?
ws=$XDG_STATE_HOME/berth/apps/tsprobe/workspace
if [ $rc -eq 0 ] && [ "$(cat "$ws/rpc.txt" 2>/dev/null)" = "via rpc" ] &&
	printf '%s' "$out" | "$NODE" -e 'const o = JSON.parse(require("fs").readFileSync(0)); process.exit(o.cwd === "/workspace" && o.bytes === 7 ? 0 : 1)'; then
	ok "berth rpc: the node app wrote rpc.txt in its workspace, from /workspace"
else
	echo "$out" >>"$TOP/out"
	not_ok "berth rpc: the node app wrote rpc.txt in its workspace (status $rc)"
fi
"$BERTH" rpc tsprobe --app-dir "$APP" --export note --input '{"file":"/app/index.js","text":"x"}' >"$TOP/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q 'EROFS' "$TOP/out" && grep -q 'BERTH CAPABILITY DENIAL' "$TOP/out" &&
	cmp -s "$APP/index.js" "$HERE/fixtures/tsprobe/index.js"; then
	ok "berth rpc: writing /app is denied (EROFS, explained), the app is unchanged"
else
	not_ok "berth rpc: writing /app is denied (status $rc)"
fi
check "the official MCP SDK client calls tsprobe through berth mcp" \
	"$NODE" "$HERE/mcp-client.mjs" "$NM" "$BERTH" "$APP"
if [ "$(cat "$ws/mcp.txt" 2>/dev/null)" = "from the MCP client" ]; then
	ok "the MCP call wrote mcp.txt in the workspace"
else
	not_ok "the MCP call wrote mcp.txt in the workspace"
fi

# ---- 4. the adapters are `berth tools --format` (two apps: APP__EXPORT names)
tools_refusals() {
	local out rc
	out=$("$BERTH" tools "$APP" --format gemini 2>&1)
	rc=$?
	[ $rc -eq 2 ] && [ "$out" = 'berth: tools: unknown --format `gemini`: use mcp, openai, anthropic, openai-agents, ai-sdk or langchain' ] ||
		{ echo "unknown format: $rc $out"; return 1; }
	out=$("$BERTH" tools "$APP" "$APP" --format anthropic 2>&1)
	rc=$?
	[ $rc -eq 2 ] && [ "$out" = 'berth: tools: two apps named `tsprobe`: each tool name must be unique' ] ||
		{ echo "two apps of one name: $rc $out"; return 1; }
}
check "berth tools: an unknown format and two apps of one name are refused (status 2), nothing printed" tools_refusals
check "TypeScript client: adapters equal berth tools --format, their functions call the tools" \
	"$NODE" "$HERE/adapters.mjs" "$REPO/sdk/typescript" "$BERTH" "$APP" "$TOP/hello-node"
check "Python client: adapters equal berth tools --format, their functions call the tools" \
	env PYTHONPATH="$REPO/sdk/python" python3 "$HERE/adapters.py" "$BERTH" "$APP" "$TOP/hello-node"
if [ "$(cat "$ws/agents.txt" 2>/dev/null)" = agents ] && [ "$(cat "$ws/py-agents.txt" 2>/dev/null)" = py ]; then
	ok "the adapters' calls wrote their files in the workspace"
else
	not_ok "the adapters' calls wrote their files in the workspace"
fi
check "in the frameworks: Vercel AI SDK generateText, OpenAI Agents SDK Runner, LangChain.js tool() run berth tools" \
	"$NODE" "$HERE/frameworks.mjs" "$NM" "$REPO/sdk/typescript" "$BERTH" "$APP"
if [ "$(cat "$ws/ai-sdk.txt" 2>/dev/null)" = "from the AI SDK" ] &&
	[ "$(cat "$ws/agents-sdk.txt" 2>/dev/null)" = "from the Agents SDK" ] &&
	[ "$(cat "$ws/langchain.txt" 2>/dev/null)" = "from LangChain" ]; then
	ok "the frameworks' tool calls wrote their files in the workspace"
else
	not_ok "the frameworks' tool calls wrote their files in the workspace"
fi

# ---- 5. the agent-loop examples against the mock model server
python3 "$HERE/mock-anthropic.py" --tool note --input '{"file":"agent.txt","text":"written by the agent"}' \
	--log "$TOP/mock.log" --port-file "$TOP/port" 2>"$TOP/mock.err" &
MOCKPID=$!
for _ in $(seq 100); do [ -s "$TOP/port" ] && break; sleep 0.1; done
[ -s "$TOP/port" ] || bail "the mock model server did not start: $(cat "$TOP/mock.err")"
ANTHROPIC_BASE_URL=http://127.0.0.1:$(cat "$TOP/port")
export ANTHROPIC_BASE_URL ANTHROPIC_API_KEY=test-key
EX=$TOP/agent-loop
cp -a "$REPO/examples/agent-loop" "$EX" || bail "cannot copy the example"
# npm-installable from the tree (copied, not linked: --install-links; no registry)
check "npm install sdk/typescript into the example" \
	sh -c "cd '$EX' && npm_config_cache='$TOP/npm-cache' '$NPM' install --install-links --offline --no-audit --no-fund --loglevel=error '$REPO/sdk/typescript'"
agent_ran() { # agent_ran LANG: the tool ran in the sandbox, its result went back to the model
	local lang=$1
	rm -f "$ws/agent.txt"
	: >"$TOP/mock.log"
	if [ "$lang" = ts ]; then
		(cd "$EX" && BERTH=$BERTH "$NODE" agent.mjs "Write the note" "$APP") >"$TOP/agent.out" 2>"$TOP/agent.err"
	else
		(cd "$EX" && BERTH=$BERTH PYTHONPATH=$REPO/sdk/python python3 agent.py "Write the note" "$APP") \
			>"$TOP/agent.out" 2>"$TOP/agent.err"
	fi || { cat "$TOP/agent.err"; return 1; }
	[ "$(cat "$ws/agent.txt" 2>/dev/null)" = "written by the agent" ] || { echo "no agent.txt in $ws"; return 1; }
	grep -q '^The tool answered: {"bytes":20,"cwd":"/workspace","uid":' "$TOP/agent.out" || { cat "$TOP/agent.out"; return 1; }
	# the second request carried the tool_result, the first offered the tool as berth prints it
	"$NODE" -e '
const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
const assert = require("node:assert/strict");
assert.equal(lines.length, 2);
assert.deepEqual(lines[0].tools, JSON.parse(require("child_process").execFileSync(process.argv[2], ["tools", process.argv[3], "--format", "anthropic"])));
const r = lines[1].messages.at(-1).content[0];
assert.equal(r.type, "tool_result");
assert.equal(r.tool_use_id, "toolu_mock_01");
assert.equal(r.is_error, false);
assert.match(r.content, /"cwd":"\/workspace"/);' "$TOP/mock.log" "$BERTH" "$APP"
}
check "examples/agent-loop/agent.mjs: the model's tool_use ran in the sandbox, tool_result sent back" agent_ran ts
check "examples/agent-loop/agent.py: the model's tool_use ran in the sandbox, tool_result sent back" agent_ran py

echo "1..$n"
[ "$failed" -eq 0 ]
