/* SPDX-License-Identifier: MIT */
/*
 * cmd_mcp.c - `berth mcp` (an MCP server over stdio) and `berth tools`
 * (tool definitions for agent frameworks).  The server is in
 * src/supervisor/mcp.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "../manifest/manifest.h"
#include "../sandbox/sandbox.h"
#include "../sandbox/userns.h"
#include "../runtime/runtime.h"
#include "../supervisor/mcp.h"
#include "../policy/policy.h"
#include "cli.h"

static const char mcp_usage[] =
    "usage: berth mcp --app NAME --app-dir DIR [--app NAME --app-dir DIR ...] [--only EXPORT,...]\n"
    "                 [--warm] [--timeout MS] [--no-dev] [--runtime namespace|vm]\n"
    "                 [--listen ADDR:PORT [--token-file FILE] [--yes]]\n"
    "  serve the apps' exports as MCP tools over stdio (newline-delimited JSON-RPC 2.0;\n"
    "  protocol 2026-07-28 stateless; 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05 through\n"
    "  initialize), or with --listen over the\n"
    "  Streamable HTTP transport at http://ADDR:PORT/mcp (PORT 0: any free one, said on\n"
    "  stderr), every request with `Authorization: Bearer TOKEN`: a token made at each start,\n"
    "  printed on stderr or written to FILE (mode 0600); an Origin that is not loopback gets\n"
    "  403.  An address that is not loopback needs --yes.  One app: tools are named EXPORT;\n"
    "  several: APP__EXPORT.  Apps boot at their first call (--warm: at start), or calls go to a\n"
    "  running `berth dev` for the same app directory (--no-dev: never).  --runtime vm: each app\n"
    "  boots in a microVM (docs/vm.md; seconds under TCG; never through `berth dev`).  Stops\n"
    "  everything on end of input, SIGTERM or SIGINT.  exit status: 0; 2 usage error, invalid\n"
    "  manifest or an app the runtime cannot run; 125 an app could not be booted (--warm), or the\n"
    "  runtime is not usable here (no qemu, no guest: `berth vm install`)\n";

/* The token in @path, mode 0600, whole or not at all (a temporary file
 * renamed over it). */
static int write_token(const char *path, const char *token)
{
	char tmp[PATH_MAX];
	size_t n = strlen(token);

	if (snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof tmp) {
		fprintf(stderr, "berth: mcp: --token-file `%s`: path too long\n", path);
		return -1;
	}
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || fchmod(fd, 0600) < 0 || write(fd, token, n) != (ssize_t)n || write(fd, "\n", 1) != 1 ||
	    fsync(fd) < 0 || close(fd) < 0 || rename(tmp, path) < 0) {
		fprintf(stderr, "berth: mcp: cannot write the token to --token-file `%s`: %s\n", path,
			strerror(errno));
		if (fd >= 0)
			unlink(tmp);
		return -1;
	}
	return 0;
}

struct token_out {
	const char *file; /* --token-file, or NULL: stderr */
	const char *token;
};

/* berth_mcp_listen's ready(): the address is bound; give out the token. */
static int hand_out_token(void *ctx, const char *url)
{
	const struct token_out *t = ctx;

	(void)url;
	if (t->file != NULL)
		return write_token(t->file, t->token);
	fprintf(stderr, "berth: mcp: bearer token: %s\n", t->token);
	return 0;
}

int cmd_mcp(int argc, char **argv)
{
	const char *names[BERTH_MCP_MAX_APPS], *dirs[BERTH_MCP_MAX_APPS], *only[256];
	struct berth_mcp_opts o = {0};
	struct berth_error err = {0};
	size_t n_names = 0, n_dirs = 0, n_only = 0;
	char *only_buf = NULL;
	const char *ps = getenv("BERTH_MCP_PAGE_SIZE"); /* test-only: small pages */
	const char *listen_at = NULL, *token_file = NULL;
	bool yes = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool more = i + 1 < argc;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(mcp_usage, stdout);
			return 0;
		} else if (strcmp(a, "--app") == 0 && more) {
			if (n_names == BERTH_MCP_MAX_APPS)
				goto too_many;
			names[n_names++] = argv[++i];
		} else if (strcmp(a, "--app-dir") == 0 && more) {
			if (n_dirs == BERTH_MCP_MAX_APPS)
				goto too_many;
			dirs[n_dirs++] = argv[++i];
		} else if (strcmp(a, "--only") == 0 && more) {
			free(only_buf);
			only_buf = strdup(argv[++i]);
			n_only = 0;
			for (char *save = NULL, *t = strtok_r(only_buf, ",", &save); t != NULL;
			     t = strtok_r(NULL, ",", &save)) {
				if (n_only == 256) {
					fprintf(stderr, "berth: mcp: --only names at most 256 tools\n");
					free(only_buf);
					return 2;
				}
				only[n_only++] = t;
			}
			if (n_only == 0) {
				/* An empty allowlist must not mean "everything". */
				fprintf(stderr, "berth: mcp: --only `%s` names no tool\n", argv[i]);
				free(only_buf);
				return 2;
			}
		} else if (strcmp(a, "--listen") == 0 && more) {
			listen_at = argv[++i];
		} else if (strcmp(a, "--token-file") == 0 && more) {
			token_file = argv[++i];
		} else if (strcmp(a, "--yes") == 0) {
			yes = true;
		} else if (strcmp(a, "--warm") == 0) {
			o.warm = true;
		} else if (strcmp(a, "--no-dev") == 0) {
			o.no_dev = true;
		} else if (strcmp(a, "--runtime") == 0 && more) {
			if ((o.runtime = berth_runtime_find(argv[++i], &err)) == NULL) {
				cli_print_error(&err);
				free(only_buf);
				return 2;
			}
		} else if (strcmp(a, "--timeout") == 0 && more) {
			struct berth_error terr = {0};
			uint64_t t = 0;
			if (berth_parse_count(argv[++i], "--timeout", 1, 3600000, &t, &terr) < 0) {
				fprintf(stderr,
					"berth: mcp: bad --timeout `%s`: want milliseconds, 1..3600000\n",
					argv[i]);
				free(only_buf);
				return 2;
			}
			o.timeout_ms = (unsigned)t;
		} else {
			fprintf(stderr, "berth: mcp: unknown or incomplete option `%s`\n%s", a, mcp_usage);
			free(only_buf);
			return 2;
		}
	}
	if (n_dirs == 0 || n_names != n_dirs) {
		fprintf(stderr, "berth: mcp: %s\n%s",
			n_dirs == 0 ? "give at least one --app NAME --app-dir DIR"
				    : "give one --app NAME for each --app-dir DIR, in the same order",
			mcp_usage);
		free(only_buf);
		return 2;
	}
	if (token_file != NULL && listen_at == NULL) {
		fprintf(stderr, "berth: mcp: --token-file goes with --listen\n");
		free(only_buf);
		return 2;
	}
	if (listen_at != NULL) {
		bool loopback = false;
		if (berth_mcp_listen_loopback(listen_at, &loopback, &err) < 0) {
			cli_print_error(&err);
			free(only_buf);
			return 2;
		}
		if (!loopback && !yes) {
			fprintf(
			    stderr,
			    "berth: mcp: --listen %s is not a loopback address: whoever reaches it and has "
			    "the token calls the apps\nberth: hint: listen on 127.0.0.1:PORT, or give --yes "
			    "to "
			    "listen on %s anyway\n",
			    listen_at, listen_at);
			free(only_buf);
			return 2;
		}
	}
	if (berth_parse_force_off(getenv("BERTH_TEST_FORCE_OFF"), &o.force_off, &err) < 0) {
		cli_print_error(&err);
		free(only_buf);
		return 2;
	}
	o.test_elicit_url = getenv("BERTH_MCP_TEST_ELICIT_URL"); /* test-only (mcp.h) */
	if (o.test_elicit_url != NULL && o.test_elicit_url[0] == '\0')
		o.test_elicit_url = NULL;
	o.app_dirs = dirs;
	o.app_names = names;
	o.n_apps = n_dirs;
	o.only = only;
	o.n_only = n_only;
	{
		uint64_t n = 0; /* test-only; anything but 1..65536 keeps the default */
		struct berth_error pe = {0};
		o.page_size =
		    ps != NULL && berth_parse_count(ps, "BERTH_MCP_PAGE_SIZE", 1, 65536, &n, &pe) == 0
			? (unsigned)n
			: 0;
	}
	/* An agent that starts `berth mcp` from inside its own berth sandbox
	 * gets a server whose every call fails: say why at once (stderr is
	 * what an MCP client shows of a server). */
	if (!o.warm && !(o.force_off & BERTH_FEAT_USERNS) && berth_userns_inside_berth())
		fprintf(stderr,
			"berth: mcp: this runs inside a berth sandbox, where no app sandbox can start: every "
			"call will fail\nberth: hint: %s\n",
			BERTH_NESTED_HINT);
	struct berth_mcp *m = berth_mcp_new(&o, &err);
	if (m == NULL) {
		cli_print_error(&err);
		free(only_buf);
		return err.status == 2 ? 2 : 125;
	}
	int r;
	if (listen_at != NULL) {
		char token[65];
		unsigned char rnd[32];
		randombytes_buf(rnd, sizeof rnd);
		for (size_t i = 0; i < sizeof rnd; i++)
			snprintf(token + 2 * i, 3, "%02x", rnd[i]);
		struct token_out to = {token_file, token};
		r = berth_mcp_listen(m, listen_at, token, hand_out_token, &to, &err);
	} else {
		r = berth_mcp_run(m, STDIN_FILENO, &err);
	}
	berth_mcp_free(m);
	free(only_buf);
	if (r < 0) {
		cli_print_error(&err);
		return 125;
	}
	return 0;
too_many:
	fprintf(stderr, "berth: mcp: at most %d apps\n", BERTH_MCP_MAX_APPS);
	free(only_buf);
	return 2;
}

/* ---------------------------------------------------------- berth tools */

static const char tools_usage[] =
    "usage: berth tools APP-DIR... [--format F]\n"
    "  print the apps' exports as tool definitions, JSON on standard output.  One app: tools are\n"
    "  named EXPORT; several: APP__EXPORT (as `berth mcp` names them).  F (docs/sdk.md):\n"
    "    mcp            MCP tools/list: {\"tools\":[{name, description, inputSchema, outputSchema}]}\n"
    "    openai         OpenAI Chat Completions function tools\n"
    "    anthropic      Anthropic Messages API tools\n"
    "    openai-agents  OpenAI Responses API / Agents SDK function tools\n"
    "    ai-sdk         Vercel AI SDK: {NAME: {description, inputSchema}}\n"
    "    langchain      LangChain tool fields: [{name, description, schema}]\n";

static const char *const tool_formats[] = {"mcp",           "openai", "anthropic",
					   "openai-agents", "ai-sdk", "langchain"};

/* One export in @format; the mapping docs/sdk.md ("Tool formats") describes,
 * which the client libraries (sdk/typescript/client.js, sdk/python/berth_client.py)
 * take from here rather than repeating it. */
static json_t *tool_def(const char *format, const char *name, const struct berth_export *ex)
{
	if (strcmp(format, "openai") == 0)
		return json_pack("{s:s, s:{s:s, s:s, s:O}}", "type", "function", "function", "name", name,
				 "description", ex->description, "parameters", ex->input);
	if (strcmp(format, "anthropic") == 0)
		return json_pack("{s:s, s:s, s:O}", "name", name, "description", ex->description,
				 "input_schema", ex->input);
	if (strcmp(format, "openai-agents") == 0)
		/* strict mode wants additionalProperties: false and every property
		 * required, which berth's schemas do not say: off. */
		return json_pack("{s:s, s:s, s:s, s:O, s:b}", "type", "function", "name", name, "description",
				 ex->description, "parameters", ex->input, "strict", 0);
	if (strcmp(format, "ai-sdk") == 0)
		return json_pack("{s:s, s:O}", "description", ex->description, "inputSchema", ex->input);
	if (strcmp(format, "langchain") == 0)
		return json_pack("{s:s, s:s, s:O}", "name", name, "description", ex->description, "schema",
				 ex->input);
	return json_pack("{s:s, s:s, s:O, s:O}", "name", name, "description", ex->description, "inputSchema",
			 ex->input, "outputSchema", ex->output);
}

int cmd_tools(int argc, char **argv)
{
	const char *dirs[BERTH_MCP_MAX_APPS], *format = "mcp";
	size_t n_dirs = 0;
	bool known = false;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(tools_usage, stdout);
			return 0;
		} else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc) {
			format = argv[++i];
		} else if (argv[i][0] != '-') {
			if (n_dirs == BERTH_MCP_MAX_APPS) {
				fprintf(stderr, "berth: tools: at most %d apps\n", BERTH_MCP_MAX_APPS);
				return 2;
			}
			dirs[n_dirs++] = argv[i];
		} else {
			fprintf(stderr, "berth: tools: unexpected argument `%s`\n%s", argv[i], tools_usage);
			return 2;
		}
	}
	if (n_dirs == 0) {
		fprintf(stderr, "berth: tools: missing APP-DIR\n%s", tools_usage);
		return 2;
	}
	for (size_t i = 0; i < sizeof tool_formats / sizeof tool_formats[0]; i++)
		known |= strcmp(format, tool_formats[i]) == 0;
	if (!known) {
		fprintf(stderr,
			"berth: tools: unknown --format `%s`: use mcp, openai, anthropic, openai-agents, "
			"ai-sdk or "
			"langchain\n",
			CLI_SAFE(format));
		return 2;
	}
	bool keyed = strcmp(format, "ai-sdk") == 0;
	json_t *tools = keyed ? json_object() : json_array(), *seen = json_object();
	int rc = 0;
	for (size_t a = 0; a < n_dirs && rc == 0; a++) {
		struct berth_manifest man;
		struct berth_diags d = {0};
		struct berth_error err = {0};
		if (berth_manifest_load(dirs[a], dirs[a], &man, &d, &err) < 0) {
			for (size_t i = 0; i < d.n; i++)
				fprintf(stderr, "%s\n", CLI_SAFE(d.items[i].text));
			berth_diags_free(&d);
			cli_print_error(&err);
			rc = err.status == 2 ? 2 : 125;
			break;
		}
		for (size_t i = 0; i < man.n_exports; i++) {
			const struct berth_export *ex = &man.exports[i];
			char name[256];
			if (n_dirs > 1)
				snprintf(name, sizeof name, "%s__%s", man.name, ex->name);
			else
				snprintf(name, sizeof name, "%s", ex->name);
			if (json_object_get(seen, name) != NULL) {
				fprintf(stderr,
					"berth: tools: two apps named `%s`: each tool name must be unique\n",
					CLI_SAFE(man.name));
				rc = 2;
				break;
			}
			json_object_set_new(seen, name, json_true());
			json_t *t = tool_def(format, name, ex);
			if (keyed)
				json_object_set_new(tools, name, t);
			else
				json_array_append_new(tools, t);
		}
		berth_manifest_free(&man);
	}
	json_decref(seen);
	if (rc != 0) {
		json_decref(tools);
		return rc;
	}
	json_t *out = strcmp(format, "mcp") == 0 ? json_pack("{s:o}", "tools", tools) : tools;
	char *s = cli_json_dumps(out, JSON_INDENT(2));
	if (s != NULL)
		printf("%s\n", s);
	free(s);
	json_decref(out);
	return s != NULL ? 0 : 125;
}
