/* SPDX-License-Identifier: MIT */
/*
 * test_manifest.c - berth.yml: valid manifests, shorthand expansion, YAML
 * typing, the capability grammar, every kind of problem with its exact
 * position, limits against hostile files, loading from a directory, and the
 * error corpus in tests/manifest-corpus/ (directory from the environment
 * variable BERTH_MANIFEST_CORPUS, set by meson; the test fails without it).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "manifest/manifest.h"
#include "manifest/schema.h"
#include "util/cleanup.h"

#define HEAD "schema_version: 1\nname: fs\nversion: 0.1.0\ndescription: d\nruntime: native\nentry: bin/fs\n"
#define EXPORTS "exports:\n  - name: e\n    description: d\n"

static int parse(const char *yaml, struct berth_manifest *m, struct berth_diags *d, struct berth_error *err)
{
	memset(err, 0, sizeof *err);
	return berth_manifest_parse(yaml, strlen(yaml), NULL, m, d, err);
}

/* All diagnostics, one per line. */
static char *joined(const struct berth_diags *d)
{
	size_t len = 1;
	char *s;

	for (size_t i = 0; i < d->n; i++)
		len += strlen(d->items[i].text) + 1;
	s = malloc(len);
	assert_non_null(s);
	s[0] = '\0';
	for (size_t i = 0; i < d->n; i++) {
		strcat(s, d->items[i].text);
		strcat(s, "\n");
	}
	return s;
}

static void expect_valid(const char *yaml, struct berth_manifest *m)
{
	struct berth_diags d = {0};
	struct berth_error err;

	if (parse(yaml, m, &d, &err) != 0) {
		cleanup_free char *all = joined(&d);
		fail_msg("rejected:\n%s%s", all, err.msg);
	}
	assert_int_equal(d.n, 0);
	berth_diags_free(&d);
}

/* Parse @yaml, expect it invalid with exactly the diagnostics @want. */
static void expect_diags(const char *yaml, const char *want)
{
	struct berth_manifest m;
	struct berth_diags d = {0};
	struct berth_error err;
	cleanup_free char *all = NULL;

	assert_int_equal(parse(yaml, &m, &d, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	assert_null(m.name);
	assert_null(m.exports);
	all = joined(&d);
	assert_string_equal(all, want);
	berth_diags_free(&d);
}

static json_t *J(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, JSON_DECODE_ANY, &e);

	if (j == NULL)
		fail_msg("bad test JSON `%s`: %s", text, e.text);
	return j;
}

static void assert_json(const json_t *got, const char *want)
{
	json_t *w = J(want);

	if (!json_equal((json_t *)got, w)) {
		cleanup_free char *g = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY);
		fail_msg("got %s\nwant %s", g, want);
	}
	json_decref(w);
}

static void test_valid_full(void **state)
{
	struct berth_manifest m;

	(void)state;
	expect_valid("schema_version: 1\n"
		     "name: filesystem\n"
		     "version: 1.2.3-rc.1+build.5\n"
		     "description: Files in the app's workspace\n"
		     "runtime: python\n"
		     "entry: src/main.py\n"
		     "capabilities:\n"
		     "  - filesystem:write:/workspace\n"
		     "  - filesystem:read:/context/docs/*\n"
		     "  - network:host:API.Example.com:443\n"
		     "secrets: [API_TOKEN, _other2]\n"
		     "resources:\n"
		     "  memory: 256M\n"
		     "  cpus: 0.5\n"
		     "  pids: 64\n"
		     "exports:\n"
		     "  - name: write_file\n"
		     "    description: Write a text file\n"
		     "    input: {path: string, content: string}\n"
		     "    output: {bytes: integer}\n"
		     "    examples:\n"
		     "      - input: {path: hello.txt, content: hi}\n"
		     "        output: {bytes: 2}\n"
		     "      - input: {path: /etc/x, content: hi}\n"
		     "        error: EACCES\n"
		     "      - input: {path: a, content: b}\n"
		     "        error: -32000\n"
		     "      - input: {path: a, content: b}\n"
		     "        error: \"-32001\"\n"
		     "      - input: {path: a, content: b}\n"
		     "  - name: read2\n"
		     "    description: Read\n",
		     &m);
	assert_int_equal(m.schema_version, 1);
	assert_string_equal(m.name, "filesystem");
	assert_string_equal(m.version, "1.2.3-rc.1+build.5");
	assert_string_equal(m.description, "Files in the app's workspace");
	assert_int_equal(m.runtime, BERTH_RUNTIME_PYTHON);
	assert_string_equal(berth_runtime_name(m.runtime), "python");
	assert_string_equal(m.entry, "src/main.py");
	assert_int_equal(m.n_caps, 3);
	assert_int_equal(m.caps[0].kind, BERTH_CAP_FS_WRITE);
	assert_string_equal(m.caps[0].scope, "/workspace");
	assert_int_equal(m.caps[1].kind, BERTH_CAP_FS_READ);
	assert_string_equal(m.caps[1].scope, "/context/docs");
	assert_int_equal(m.caps[2].kind, BERTH_CAP_NET_HOST);
	assert_string_equal(m.caps[2].scope, "api.example.com:443");
	assert_int_equal(m.n_secrets, 2);
	assert_string_equal(m.secrets[0], "API_TOKEN");
	assert_string_equal(m.secrets[1], "_other2");
	assert_true(m.resources.has_memory && m.resources.has_millicpus && m.resources.has_pids);
	assert_int_equal(m.resources.memory, 256ULL << 20);
	assert_int_equal(m.resources.millicpus, 500);
	assert_int_equal(m.resources.pids, 64);
	assert_int_equal(m.n_exports, 2);
	struct berth_export *x = &m.exports[0];
	assert_string_equal(x->name, "write_file");
	assert_string_equal(x->description, "Write a text file");
	assert_json(x->input, "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},"
			      "\"content\":{\"type\":\"string\"}},\"required\":[\"path\",\"content\"]}");
	assert_json(x->output, "{\"type\":\"object\",\"properties\":{\"bytes\":{\"type\":\"integer\"}},"
			       "\"required\":[\"bytes\"]}");
	assert_int_equal(x->n_examples, 5);
	assert_int_equal(x->examples[0].expect, BERTH_EXPECT_OUTPUT);
	assert_int_equal(x->examples[0].line, 22);
	assert_json(x->examples[0].input, "{\"path\":\"hello.txt\",\"content\":\"hi\"}");
	assert_json(x->examples[0].output, "{\"bytes\":2}");
	assert_null(x->examples[0].error);
	assert_int_equal(x->examples[1].expect, BERTH_EXPECT_ERRNO);
	assert_string_equal(x->examples[1].error, "EACCES");
	assert_int_equal(x->examples[1].error_errno, EACCES);
	assert_null(x->examples[1].output);
	assert_int_equal(x->examples[2].expect, BERTH_EXPECT_CODE);
	assert_int_equal(x->examples[2].error_code, -32000);
	assert_string_equal(x->examples[2].error, "-32000");
	assert_int_equal(x->examples[3].expect, BERTH_EXPECT_TEXT); /* quoted: a text */
	assert_string_equal(x->examples[3].error, "-32001");
	assert_int_equal(x->examples[4].expect, BERTH_EXPECT_SUCCESS);
	assert_null(x->examples[4].output);
	assert_null(x->examples[4].error);
	/* defaults */
	assert_json(m.exports[1].input, "{\"type\":\"object\",\"properties\":{}}");
	assert_json(m.exports[1].output, "{\"type\":\"object\"}");
	assert_int_equal(m.exports[1].n_examples, 0);
	berth_manifest_free(&m);
	assert_null(m.name);
	berth_manifest_free(&m); /* harmless twice */
}

static void test_minimal(void **state)
{
	struct berth_manifest m;

	(void)state;
	expect_valid(HEAD EXPORTS, &m);
	assert_int_equal(m.runtime, BERTH_RUNTIME_NATIVE);
	assert_int_equal(m.n_caps, 0);
	assert_null(m.caps);
	assert_int_equal(m.n_secrets, 0);
	assert_false(m.resources.has_memory || m.resources.has_millicpus || m.resources.has_pids);
	assert_int_equal(m.n_exports, 1);
	berth_manifest_free(&m);
	/* a flow-style manifest is as good */
	expect_valid("{schema_version: 1, name: a, version: 0.0.0, description: d, runtime: native, entry: a,"
		     " exports: [{name: e, description: d}], capabilities: [], secrets: [], resources: {}}",
		     &m);
	berth_manifest_free(&m);
	/* a JavaScript app (sdk/typescript, docs/sdk.md) */
	expect_valid(
	    "{schema_version: 1, name: a, version: 0.0.0, description: d, runtime: node, entry: index.js,"
	    " exports: [{name: e, description: d}]}",
	    &m);
	assert_int_equal(m.runtime, BERTH_RUNTIME_NODE);
	assert_string_equal(berth_runtime_name(m.runtime), "node");
	assert_string_equal(m.entry, "index.js");
	berth_manifest_free(&m);
}

static void test_shorthand(void **state)
{
	struct berth_manifest m;

	(void)state;
	expect_valid(
	    HEAD
	    "exports:\n"
	    "  - name: e\n"
	    "    description: d\n"
	    "    input: {path: string, \"limit?\": integer, flag: boolean, n: null, l: array, o: object, "
	    "x: number}\n"
	    "    output: {\"a?\": string}\n"
	    "  - name: f\n"
	    "    description: d\n"
	    "    input: {}\n"
	    "    output:\n"
	    "      type: object\n"
	    "      properties:\n"
	    "        opts: {depth: integer, \"name?\": string}\n"
	    "        list: {type: array, items: {x: string}}\n",
	    &m);
	assert_json(m.exports[0].input,
		    "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"limit\":{\"type\":"
		    "\"integer\"},"
		    "\"flag\":{\"type\":\"boolean\"},\"n\":{\"type\":\"null\"},\"l\":{\"type\":\"array\"},"
		    "\"o\":{\"type\":\"object\"},\"x\":{\"type\":\"number\"}},"
		    "\"required\":[\"path\",\"flag\",\"n\",\"l\",\"o\",\"x\"]}");
	/* all optional: no `required` */
	assert_json(m.exports[0].output,
		    "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}}}");
	assert_json(m.exports[1].input, "{\"type\":\"object\",\"properties\":{}}");
	/* the shorthand also works below the top level */
	assert_json(
	    m.exports[1].output,
	    "{\"type\":\"object\",\"properties\":{\"opts\":{\"type\":\"object\",\"properties\":{\"depth\":"
	    "{\"type\":\"integer\"},\"name\":{\"type\":\"string\"}},\"required\":[\"depth\"]},"
	    "\"list\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"x\":"
	    "{\"type\":\"string\"}},\"required\":[\"x\"]}}}}");
	berth_manifest_free(&m);
}

static void test_full_schema(void **state)
{
	struct berth_manifest m;
	char p[128], r[256];

	(void)state;
	expect_valid(HEAD "exports:\n"
			  "  - name: e\n"
			  "    description: d\n"
			  "    input:\n"
			  "      type: object\n"
			  "      description: the input\n"
			  "      properties:\n"
			  "        mode: {type: string, enum: [short, long], default: short}\n"
			  "        n: {type: integer, default: 3}\n"
			  "        r: {type: number, enum: [1, 2.5]}\n"
			  "        tags: {type: array, items: {type: string}, default: [a, b]}\n"
			  "        any: {type: \"null\"}\n"
			  "      required: [mode]\n",
		     &m);
	assert_json(m.exports[0].input,
		    "{\"type\":\"object\",\"description\":\"the input\",\"properties\":{"
		    "\"mode\":{\"type\":\"string\",\"enum\":[\"short\",\"long\"],\"default\":\"short\"},"
		    "\"n\":{\"type\":\"integer\",\"default\":3},\"r\":{\"type\":\"number\",\"enum\":[1,2.5]},"
		    "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"default\":[\"a\",\"b\"]},"
		    "\"any\":{\"type\":\"null\"}},\"required\":[\"mode\"]}");
	assert_int_equal(berth_schema_check(m.exports[0].input, p, sizeof p, r, sizeof r), 0);
	berth_manifest_free(&m);
}

static void test_yaml_typing(void **state)
{
	struct berth_manifest m;

	(void)state;
	expect_valid(HEAD "exports:\n"
			  "  - name: e\n"
			  "    description: d\n"
			  "    input: {}\n"
			  "    examples:\n"
			  "      - input:\n"
			  "          t: true\n"
			  "          f: False\n"
			  "          n: null\n"
			  "          tl: ~\n"
			  "          e:\n"
			  "          i: 42\n"
			  "          neg: -7\n"
			  "          plus: +8\n"
			  "          hex: 0x1F\n"
			  "          oct: 0o17\n"
			  "          fl: 1.5\n"
			  "          exp: 1e3\n"
			  "          dot: .5\n"
			  "          q: \"true\"\n"
			  "          s: '42'\n"
			  "          tagged: !!str 7\n"
			  "          yes_is_a_string: yes\n"
			  "          ver: 1.2.3\n"
			  "          list: [1, a, [b]]\n"
			  "          block: |\n"
			  "            two\n"
			  "            lines\n",
		     &m);
	assert_json(
	    m.exports[0].examples[0].input,
	    "{\"t\":true,\"f\":false,\"n\":null,\"tl\":null,\"e\":null,\"i\":42,\"neg\":-7,\"plus\":8,"
	    "\"hex\":31,\"oct\":15,\"fl\":1.5,\"exp\":1000.0,\"dot\":0.5,\"q\":\"true\",\"s\":\"42\","
	    "\"tagged\":\"7\",\"yes_is_a_string\":\"yes\",\"ver\":\"1.2.3\",\"list\":[1,\"a\",[\"b\"]],"
	    "\"block\":\"two\\nlines\\n\"}");
	assert_true(json_is_real(json_object_get(m.exports[0].examples[0].input, "exp")));
	berth_manifest_free(&m);
}

static void expect_cap(const char *s, enum berth_cap_kind kind, const char *scope)
{
	struct berth_cap cap;
	char reason[512];

	if (berth_capability_parse(s, &cap, reason, sizeof reason) != 0)
		fail_msg("`%s` refused: %s", s, reason);
	assert_int_equal(cap.kind, kind);
	assert_string_equal(cap.scope, scope);
	free(cap.scope);
}

static void expect_cap_error(const char *s, const char *want)
{
	struct berth_cap cap;
	char reason[512];

	if (berth_capability_parse(s, &cap, reason, sizeof reason) == 0)
		fail_msg("`%s` accepted as `%s`", s, cap.scope);
	assert_null(cap.scope);
	if (want != NULL)
		assert_string_equal(reason, want);
	else
		assert_true(reason[0] != '\0');
}

static void test_capabilities(void **state)
{
	(void)state;
	expect_cap("filesystem:read:/workspace", BERTH_CAP_FS_READ, "/workspace");
	expect_cap("filesystem:write:/workspace/*", BERTH_CAP_FS_WRITE, "/workspace");
	expect_cap("filesystem:write:/workspace/a/b/*", BERTH_CAP_FS_WRITE, "/workspace/a/b");
	expect_cap("filesystem:read:/context", BERTH_CAP_FS_READ, "/context");
	expect_cap("filesystem:read:/tmp/x", BERTH_CAP_FS_READ, "/tmp/x");
	expect_cap("filesystem:read:/app/data:v2", BERTH_CAP_FS_READ, "/app/data:v2");
	expect_cap("filesystem:read:/workspace/.hidden/..x", BERTH_CAP_FS_READ, "/workspace/.hidden/..x");
	expect_cap("network:host:example.com", BERTH_CAP_NET_HOST, "example.com");
	expect_cap("network:host:Example.COM:443", BERTH_CAP_NET_HOST, "example.com:443");
	expect_cap("network:host:*.example.com:*", BERTH_CAP_NET_HOST, "*.example.com:*");
	expect_cap("network:host:192.0.2.1:65535", BERTH_CAP_NET_HOST, "192.0.2.1:65535");
	expect_cap("network:host:[::1]", BERTH_CAP_NET_HOST, "[::1]");
	expect_cap("network:host:[2001:DB8::1]:8443", BERTH_CAP_NET_HOST, "[2001:db8::1]:8443");
	/* the broker's grammar (src/broker/hosts.h): what it would never reach is refused here too */
	expect_cap_error("network:host:0.0.0.0", NULL);
	expect_cap_error("network:host:localhost:1", NULL);
	expect_cap_error("network:host:0x7f.1", NULL);
	expect_cap("network:host:a-b.c9", BERTH_CAP_NET_HOST, "a-b.c9");

	expect_cap_error("filesystem",
			 "invalid capability `filesystem`; a capability is `namespace:action:scope`, "
			 "such as `filesystem:write:/workspace` or `network:host:api.example.com:443`");
	expect_cap_error("filesystem:read", NULL);
	expect_cap_error("filesystem:read:",
			 "missing path after `filesystem:read:`; fix: name a path such as "
			 "`/workspace`");
	expect_cap_error("filesystem:exec:/workspace",
			 "unknown action `exec` for `filesystem`; known actions: read, write");
	expect_cap_error("network:connect:x", "unknown action `connect` for `network`; known actions: host");
	expect_cap_error("process:spawn:x",
			 "unknown capability namespace `process`; known namespaces: filesystem, network");
	expect_cap_error(
	    "filesystem:read:workspace",
	    "filesystem scope `workspace` must be an absolute path; a filesystem scope may only name "
	    "/workspace, /context, /tmp, /app or a path below them");
	expect_cap_error("filesystem:read:/etc",
			 "filesystem scope `/etc` is outside the app's paths; a filesystem "
			 "scope may only name /workspace, /context, /tmp, /app or a path below "
			 "them");
	expect_cap_error("filesystem:read:/workspaces", NULL);
	expect_cap_error("filesystem:read:/", NULL);
	expect_cap_error("filesystem:read:/*",
			 "filesystem scope `/*` names the whole filesystem; a filesystem "
			 "scope may only name /workspace, /context, /tmp, /app or a path below "
			 "them");
	expect_cap_error("filesystem:read:/workspace/",
			 "filesystem scope `/workspace/` is not canonical (no `//`, "
			 "`.` components or trailing `/`); fix: write `/workspace`");
	expect_cap_error("filesystem:read:/workspace//a", NULL);
	expect_cap_error("filesystem:read:/workspace/./a", NULL);
	expect_cap_error(
	    "filesystem:read:/workspace/../etc",
	    "filesystem scope `/workspace/../etc` must not contain a `..` component; name the directory "
	    "itself");
	expect_cap_error("filesystem:read:/workspace/a*",
			 "filesystem scope `/workspace/a*` has a `*` that is not "
			 "a trailing `/*`; a wildcard may only end a scope, as in "
			 "`/workspace/*`");
	expect_cap_error("filesystem:read:/workspace/*/x", NULL);
	expect_cap_error("filesystem:read:/workspace/**", NULL);
	expect_cap_error(
	    "filesystem:read:/tmp\x1b[31m",
	    "filesystem scope `/tmp\\x1b[31m` has a control or invisible formatting character; write the "
	    "path in plain characters");
	/* Zero-width, bidirectional and C1 characters hide or reorder a path. */
	expect_cap_error("filesystem:read:/workspace/a\xe2\x80\x8b"
			 "b",
			 NULL);
	expect_cap_error("filesystem:read:/workspace/\xe2\x80\xae"
			 "evil",
			 NULL);
	expect_cap_error("filesystem:read:/workspace/\xc2\x9b", NULL);
	/* /app is read-only: a write there can never be granted. */
	expect_cap_error(
	    "filesystem:write:/app/data",
	    "`filesystem:write:/app/data` can never be granted: /app, the app's own code, is mounted "
	    "read-only; fix: declare `filesystem:read:/app/data`, or write under /workspace");
	expect_cap("filesystem:read:/workspace/donn\xc3\xa9"
		   "es",
		   BERTH_CAP_FS_READ,
		   "/workspace/donn\xc3\xa9"
		   "es");
	expect_cap_error("network:host:", NULL);
	expect_cap_error("network:host:*", "a bare `*` would allow every host; name a host such as "
					   "`api.example.com` or a domain such as `*.example.com`");
	expect_cap_error("network:host:*:443", NULL);
	expect_cap_error("network:host:a.*.com", NULL);
	expect_cap_error("network:host:*.", NULL);
	expect_cap_error("network:host:*.1.2.3.4", NULL);
	expect_cap_error("network:host:-a.com", NULL);
	expect_cap_error("network:host:a-.com", NULL);
	expect_cap_error("network:host:a..com", NULL);
	expect_cap_error("network:host:a_b.com", NULL);
	expect_cap_error("network:host:1.2.3", NULL);
	expect_cap_error("network:host:1.2.3.4.5", NULL);
	expect_cap_error("network:host:01.2.3.4", NULL);
	expect_cap_error("network:host:256.1.1.1", NULL);
	expect_cap_error("network:host:example.com:0",
			 "invalid port `0` in network pattern `example.com:0`; give 1 "
			 "to 65535 (no leading zero) or `*`");
	expect_cap_error("network:host:example.com:65536", NULL);
	expect_cap_error("network:host:example.com:", NULL);
	expect_cap_error("network:host:example.com:http", NULL);
	expect_cap_error("network:host:example.com:080", NULL);
	expect_cap_error("network:host:::1",
			 "network pattern `::1` has more than one `:`; write an IPv6 address in "
			 "brackets, such as `[2001:db8::1]:443`");
	expect_cap_error("network:host:[::1", NULL);
	expect_cap_error("network:host:[nope]", NULL);
	expect_cap_error("network:host:[::1]x", NULL);
	expect_cap_error("network:host:[::1]:99999", NULL);
}

static void test_capabilities_stored_once(void **state)
{
	struct berth_manifest m;

	(void)state;
	expect_valid(HEAD "capabilities:\n"
			  "  - filesystem:write:/workspace\n"
			  "  - filesystem:write:/workspace/*\n"
			  "  - filesystem:read:/workspace\n"
			  "  - filesystem:write:/workspace\n"
			  "  - network:host:a.com\n"
			  "  - network:host:A.com\n" EXPORTS,
		     &m);
	assert_int_equal(m.n_caps, 3);
	assert_int_equal(m.caps[0].kind, BERTH_CAP_FS_WRITE);
	assert_int_equal(m.caps[1].kind, BERTH_CAP_FS_READ);
	assert_int_equal(m.caps[2].kind, BERTH_CAP_NET_HOST);
	berth_manifest_free(&m);
}

/* Several problems at once, each at its exact line and column, sorted by position. */
static void test_many_problems(void **state)
{
	(void)state;
	expect_diags(
	    "schema_version: 1\n"
	    "name: Bad Name\n"
	    "version: 0.1\n"
	    "runtime: native\n"
	    "entry: /abs\n"
	    "capabilities: [filesystem:read:/etc, 'network:host:x.com']\n"
	    "colour: blue\n"
	    "exports:\n"
	    "  - name: e\n"
	    "    description: d\n"
	    "    input: {path: text}\n",
	    "berth.yml:1:1: description: missing required key; fix: add `description: what the app does, in "
	    "one line`\n"
	    "berth.yml:2:7: name: invalid name `Bad Name`; a name is 1 to 63 lowercase letters, digits and "
	    "`-`\n"
	    "berth.yml:3:10: version: invalid version `0.1`; a version is MAJOR.MINOR.PATCH, numbers without "
	    "leading zeros, such as `0.1.0` or `1.2.3-rc.1`\n"
	    "berth.yml:5:8: entry: entry `/abs` is absolute; it must be a path relative to the app "
	    "directory, "
	    "such as `bin/app`\n"
	    "berth.yml:6:16: capabilities[0]: filesystem scope `/etc` is outside the app's paths; a "
	    "filesystem "
	    "scope may only name /workspace, /context, /tmp, /app or a path below them\n"
	    "berth.yml:7:1: colour: unknown key `colour`; known keys: schema_version, name, version, "
	    "description, runtime, entry, capabilities, secrets, credentials, resources, exports\n"
	    "berth.yml:11:19: exports[0].input.path: unknown type `text`; known types: string, integer, "
	    "number, boolean, array, object, null\n");
}

static void test_wrong_types(void **state)
{
	(void)state;
	expect_diags(
	    "schema_version: \"1\"\n"
	    "name: [a]\n"
	    "version: {a: 1}\n"
	    "description: 42\n"
	    "runtime: ~\n"
	    "entry: true\n"
	    "capabilities: filesystem:read:/workspace\n"
	    "secrets: {A: 1}\n"
	    "resources: [1]\n"
	    "exports: {name: e}\n",
	    "berth.yml:1:17: schema_version: expected the integer 1, got a string `1`\n"
	    "berth.yml:2:7: name: expected a name, got a list\n"
	    "berth.yml:3:10: version: expected a version such as `0.1.0`, got a mapping\n"
	    "berth.yml:4:14: description: expected a description, got an integer `42`; fix: quote it "
	    "(`\"42\"`)\n"
	    "berth.yml:5:10: runtime: expected a runtime, got null\n"
	    "berth.yml:6:8: entry: expected a path relative to the app directory, got a boolean `true`; fix: "
	    "quote it (`\"true\"`)\n"
	    "berth.yml:7:15: capabilities: expected a list of capabilities such as `- "
	    "filesystem:write:/workspace`, got a string `filesystem:read:/workspace`\n"
	    "berth.yml:8:10: secrets: expected a list of environment variable names such as `[API_TOKEN]`, "
	    "got "
	    "a mapping\n"
	    "berth.yml:9:12: resources: expected a mapping with `memory`, `cpus` and/or `pids`, got a list\n"
	    "berth.yml:10:10: exports: expected a list of exports (`- name: ...`), got a mapping\n");
}

static void test_example_mismatches(void **state)
{
	(void)state;
	expect_diags(
	    HEAD "exports:\n"
		 "  - name: e\n"
		 "    description: d\n"
		 "    input:\n"
		 "      type: object\n"
		 "      properties:\n"
		 "        path: {type: string}\n"
		 "        opts:\n"
		 "          type: object\n"
		 "          properties:\n"
		 "            mode: {type: string, enum: [a, b]}\n"
		 "        list: {type: array, items: {type: integer}}\n"
		 "      required: [path]\n"
		 "    output: {bytes: integer, name: string}\n"
		 "    examples:\n"
		 "      - input: {path: 7, opts: {mode: c}, list: [1, 2.5, x]}\n"
		 "        output: {bytes: two}\n"
		 "      - input: {opts: {}}\n"
		 "        output: {name: n}\n"
		 "      - input: [1]\n"
		 "        output: 5\n"
		 "      - input: {path: x}\n"
		 "        error: 1.5\n",
	    "berth.yml:22:23: exports[0].examples[0].input.path: expected string, got integer\n"
	    "berth.yml:22:39: exports[0].examples[0].input.opts.mode: value not in enum [\"a\",\"b\"]\n"
	    "berth.yml:22:53: exports[0].examples[0].input.list[1]: expected integer, got number\n"
	    "berth.yml:22:58: exports[0].examples[0].input.list[2]: expected integer, got string\n"
	    "berth.yml:23:25: exports[0].examples[0].output.bytes: expected integer, got string\n"
	    "berth.yml:24:16: exports[0].examples[1].input: missing required property `path`\n"
	    "berth.yml:26:16: exports[0].examples[2].input: expected object, got array\n"
	    "berth.yml:27:17: exports[0].examples[2].output: expected a mapping of the output's expected "
	    "members, got an integer `5`\n"
	    "berth.yml:29:16: exports[0].examples[3].error: expected an errno name such as `EACCES`, a "
	    "JSON-RPC error code such as `-32000`, or a text the error message must contain, got a number "
	    "`1.5`\n");
}

static void test_error_object(void **state)
{
	struct berth_manifest m;
	struct berth_diags d = {0};
	struct berth_error err = {0};
	const char *y = HEAD "exports: []\n";

	(void)state;
	assert_int_equal(berth_manifest_parse(y, strlen(y), "apps/x/berth.yml", &m, &d, &err), -1);
	assert_string_equal(err.msg, "1 problem in `apps/x/berth.yml`");
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	assert_int_equal(err.errnum, 0);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.items[0].line, 7);
	assert_int_equal(d.items[0].col, 10);
	assert_string_equal(d.items[0].text,
			    "apps/x/berth.yml:7:10: exports: at least one export is required; fix: "
			    "add `- name: my_export` with a `description`");
	/* diagnostics are appended: a second parse adds its own, sorted among themselves */
	y = "name: x\n";
	assert_int_equal(berth_manifest_parse(y, strlen(y), "b.yml", &m, &d, &err), -1);
	assert_string_equal(err.msg, "6 problems in `b.yml`");
	assert_int_equal(d.n, 7);
	assert_string_equal(d.items[1].text, "b.yml:1:1: schema_version: missing required key; fix: add "
					     "`schema_version: 1`");
	berth_diags_free(&d);
	assert_int_equal(d.n, 0);
	assert_null(d.items);
}

static void test_many_problems_capped(void **state)
{
	struct berth_manifest m;
	struct berth_diags d = {0};
	struct berth_error err;
	char *y = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&y, &len);

	(void)state;
	assert_non_null(f);
	fputs(HEAD EXPORTS "secrets:\n", f);
	for (int i = 0; i < 300; i++)
		fprintf(f, "  - %d\n", i);
	fclose(f);
	assert_int_equal(parse(y, &m, &d, &err), -1);
	assert_string_equal(err.msg, "300 problems in `berth.yml`");
	assert_int_equal(d.n, BERTH_DIAGS_MAX + 1);
	assert_int_equal(d.dropped, 100);
	assert_string_equal(d.items[BERTH_DIAGS_MAX].text, "berth.yml: 100 more problems not shown");
	assert_int_equal(d.items[0].line, 11);
	berth_diags_free(&d);
	free(y);
}

static void test_hostile(void **state)
{
	struct berth_manifest m;
	struct berth_diags d = {0};
	struct berth_error err;
	char *big;

	(void)state;
	/* billion laughs: refused at the first anchor and alias, nothing expanded */
	expect_diags(
	    "a: &a [\"lol\",\"lol\"]\n"
	    "b: &b [*a,*a,*a]\n",
	    "berth.yml:1:4: anchors (`&a`) are not allowed in a manifest; write the value out in full\n"
	    "berth.yml:2:4: anchors (`&b`) are not allowed in a manifest; write the value out in full\n"
	    "berth.yml:2:8: aliases (`*a`) are not allowed in a manifest; write the value out in full\n"
	    "berth.yml:2:11: aliases (`*a`) are not allowed in a manifest; write the value out in full\n"
	    "berth.yml:2:14: aliases (`*a`) are not allowed in a manifest; write the value out in full\n");
	/* escape sequences and line breaks are shown escaped */
	expect_diags(
	    HEAD EXPORTS "\"bad\\e[2J\\nkey\\u202e\": 1\n",
	    "berth.yml:10:1: bad\\x1b[2J\\nkey\\u202e: unknown key `bad\\x1b[2J\\nkey\\u202e`; known keys: "
	    "schema_version, name, version, description, runtime, entry, capabilities, secrets, credentials, "
	    "resources, "
	    "exports\n");
	/* a NUL byte inside a quoted string */
	expect_diags("schema_version: 1\nname: \"a\\0b\"\nversion: 0.1.0\ndescription: d\nruntime: native\n"
		     "entry: x\n" EXPORTS,
		     "berth.yml:2:7: name: must not contain a NUL byte\n");
	/* nesting */
	big = malloc(1024);
	assert_non_null(big);
	strcpy(big, "a: ");
	for (int i = 0; i < 100; i++)
		strcat(big, "[");
	expect_diags(big,
		     "berth.yml:1:67: nesting deeper than 64 levels; a manifest never needs that much\n");
	free(big);
	/* size */
	big = malloc(BERTH_MANIFEST_MAX_SIZE + 1);
	assert_non_null(big);
	memset(big, '#', BERTH_MANIFEST_MAX_SIZE + 1);
	assert_int_equal(berth_manifest_parse(big, BERTH_MANIFEST_MAX_SIZE + 1, NULL, &m, &d, &err), -1);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.items[0].text,
			    "berth.yml:1:1: the file is 1048577 bytes; a manifest may be at most 1 MiB "
			    "(1048576 bytes)");
	berth_diags_free(&d);
	/* exactly the limit is parsed (a comment: empty) */
	assert_int_equal(berth_manifest_parse(big, BERTH_MANIFEST_MAX_SIZE, NULL, &m, &d, &err), -1);
	assert_string_equal(d.items[0].text,
			    "berth.yml:1:1: the manifest is empty; fix: `berth init NAME` writes "
			    "one, docs/manifest.md describes the format");
	berth_diags_free(&d);
	free(big);
	/* many nodes */
	{
		char *y = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&y, &len);
		assert_non_null(f);
		fputs("a: [", f);
		for (int i = 0; i < BERTH_MANIFEST_MAX_NODES + 10; i++)
			fputs("0,", f);
		fputs("0]\n", f);
		fclose(f);
		assert_true(len <= BERTH_MANIFEST_MAX_SIZE);
		assert_int_equal(parse(y, &m, &d, &err), -1);
		assert_int_equal(d.n, 1);
		assert_non_null(strstr(d.items[0].text, "more than 100000 YAML nodes"));
		berth_diags_free(&d);
		free(y);
	}
}

static void test_enum_limit(void **state)
{
	char *y = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&y, &len);

	(void)state;
	assert_non_null(f);
	fputs(HEAD
	      "exports:\n  - name: e\n    description: d\n    input:\n      type: object\n      properties:\n"
	      "        n: {type: integer, enum: [0",
	      f);
	for (int i = 1; i <= BERTH_SCHEMA_ENUM_MAX; i++)
		fprintf(f, ",%d", i);
	fputs("]}\n", f);
	fclose(f);
	expect_diags(
	    y,
	    "berth.yml:13:34: exports[0].input.properties.n.enum: `enum` lists 257 values; at most 256 are "
	    "allowed; fix: use `type: string` and check the value in the app\n");
	free(y);
}

static char tmpdir[] = "/tmp/test_manifest.XXXXXX";

static void write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void test_load(void **state)
{
	struct berth_manifest m;
	struct berth_diags d = {0};
	struct berth_error err = {0};
	char path[256];
	const char *y = HEAD EXPORTS;
	char *big;

	(void)state;
	assert_non_null(mkdtemp(tmpdir));
	/* missing */
	assert_int_equal(berth_manifest_load(tmpdir, "apps/x", &m, &d, &err), -1);
	assert_int_equal(err.errnum, ENOENT);
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	assert_string_equal(err.msg, "no manifest at `apps/x/berth.yml`: No such file or directory");
	assert_string_equal(err.hint, "`berth init NAME` creates one");
	assert_int_equal(d.n, 0);
	/* not a regular file */
	snprintf(path, sizeof path, "%s/berth.yml", tmpdir);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(berth_manifest_load(tmpdir, NULL, &m, &d, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	assert_non_null(strstr(err.msg, "is not a regular file"));
	assert_int_equal(rmdir(path), 0);
	/* valid */
	write_file(path, y, strlen(y));
	assert_int_equal(berth_manifest_load(tmpdir, "apps/x", &m, &d, &err), 0);
	assert_string_equal(m.name, "fs");
	berth_manifest_free(&m);
	/* invalid: diagnostics named after display_dir */
	write_file(path, "name: x\n", 8);
	assert_int_equal(berth_manifest_load(tmpdir, "apps/x", &m, &d, &err), -1);
	assert_string_equal(err.msg, "6 problems in `apps/x/berth.yml`");
	assert_string_equal(d.items[0].text,
			    "apps/x/berth.yml:1:1: schema_version: missing required key; fix: add "
			    "`schema_version: 1`");
	berth_diags_free(&d);
	/* too large */
	big = malloc(BERTH_MANIFEST_MAX_SIZE + 100);
	assert_non_null(big);
	memset(big, '#', BERTH_MANIFEST_MAX_SIZE + 100);
	write_file(path, big, BERTH_MANIFEST_MAX_SIZE + 100);
	free(big);
	assert_int_equal(berth_manifest_load(tmpdir, "d", &m, &d, &err), -1);
	assert_string_equal(err.msg, "1 problem in `d/berth.yml`");
	assert_string_equal(d.items[0].text,
			    "d/berth.yml:1:1: the file is 1048676 bytes; a manifest may be at most 1 "
			    "MiB (1048576 bytes)");
	berth_diags_free(&d);
	/* a FIFO does not hang */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(berth_manifest_load(tmpdir, NULL, &m, &d, &err), -1);
	assert_non_null(strstr(err.msg, "is not a regular file"));
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(tmpdir), 0);
}

/* ---- the error corpus ---- */

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0;

	if (f == NULL)
		return NULL;
	buf = malloc(BERTH_MANIFEST_MAX_SIZE + 2);
	if (buf != NULL)
		n = fread(buf, 1, BERTH_MANIFEST_MAX_SIZE + 1, f);
	fclose(f);
	if (buf != NULL)
		buf[n] = '\0';
	*len = n;
	return buf;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_corpus(void **state)
{
	const char *dir = getenv("BERTH_MANIFEST_CORPUS");
	DIR *dh;
	struct dirent *e;
	char *names[512];
	size_t n = 0, failed = 0;

	(void)state;
	if (dir == NULL)
		fail_msg("BERTH_MANIFEST_CORPUS is not set; run through `meson test` or set it to "
			 "tests/manifest-corpus");
	dh = opendir(dir);
	if (dh == NULL)
		fail_msg("cannot open corpus `%s`: %s", dir, strerror(errno));
	while ((e = readdir(dh)) != NULL && n < BERTH_ARRAY_SIZE(names))
		if (e->d_name[0] != '.')
			names[n++] = strdup(e->d_name);
	closedir(dh);
	qsort(names, n, sizeof names[0], by_name);
	for (size_t i = 0; i < n; i++) {
		char p[4096];
		size_t len, wlen;
		cleanup_free char *yaml = NULL, *want = NULL, *got = NULL;
		struct berth_manifest m;
		struct berth_diags d = {0};
		struct berth_error err = {0};
		int rc;

		snprintf(p, sizeof p, "%s/%s/berth.yml", dir, names[i]);
		yaml = slurp(p, &len);
		snprintf(p, sizeof p, "%s/%s/expected", dir, names[i]);
		want = slurp(p, &wlen);
		if (yaml == NULL || want == NULL)
			fail_msg("corpus case `%s` lacks berth.yml or expected", names[i]);
		rc = berth_manifest_parse(yaml, len, "berth.yml", &m, &d, &err);
		got = joined(&d);
		if (strcmp(got, want) != 0 || (rc == 0) != (want[0] == '\0')) {
			print_error("corpus case `%s`:\n--- expected\n%s--- got\n%s", names[i], want, got);
			failed++;
		}
		berth_manifest_free(&m);
		berth_diags_free(&d);
		free(names[i]);
	}
	if (n < 20)
		fail_msg("the corpus has %zu cases; expected at least 20", n);
	if (failed > 0)
		fail_msg("%zu of %zu corpus cases differ", failed, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_valid_full),
	    cmocka_unit_test(test_minimal),
	    cmocka_unit_test(test_shorthand),
	    cmocka_unit_test(test_full_schema),
	    cmocka_unit_test(test_yaml_typing),
	    cmocka_unit_test(test_capabilities),
	    cmocka_unit_test(test_capabilities_stored_once),
	    cmocka_unit_test(test_many_problems),
	    cmocka_unit_test(test_wrong_types),
	    cmocka_unit_test(test_example_mismatches),
	    cmocka_unit_test(test_error_object),
	    cmocka_unit_test(test_many_problems_capped),
	    cmocka_unit_test(test_hostile),
	    cmocka_unit_test(test_enum_limit),
	    cmocka_unit_test(test_load),
	    cmocka_unit_test(test_corpus),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
