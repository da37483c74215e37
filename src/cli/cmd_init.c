/* SPDX-License-Identifier: MIT */
/*
 * cmd_init.c - `berth init NAME [--runtime native|python|node] [--dir DIR]`: a
 * new resident app that passes `berth test` unchanged.
 *
 * python: berth.yml and main.py (the SDK is mounted by berth at run time).
 * node: berth.yml and index.js (@berth/sdk, sdk/typescript, likewise mounted).
 * native: berth.yml, main.c and a Makefile that compiles main.c with the C
 * SDK's sources (found next to the berth binary); berth runs `make` once so
 * the entry exists.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

#include "../util/sys.h"

static const char init_usage[] =
    "usage: berth init NAME [--runtime native|python|node] [--dir DIR]\n"
    "  create DIR (default ./NAME) with a berth.yml and a working `hello` export\n"
    "  (python by default; node writes index.js for the JavaScript SDK; native\n"
    "  builds a C program with the C SDK)\n";

static const char manifest_fmt[] = "# %s - a berth resident app (docs/manifest.md).\n"
				   "schema_version: 1\n"
				   "name: %s\n"
				   "version: 0.1.0\n"
				   "description: Greets by name and counts greetings in its workspace\n"
				   "runtime: %s\n"
				   "entry: %s\n"
				   "capabilities:\n"
				   "  - filesystem:write:/workspace\n"
				   "resources: {memory: 256M, cpus: 1, pids: 32}\n"
				   "exports:\n"
				   "  - name: hello\n"
				   "    description: Say hello to someone\n"
				   "    input:\n"
				   "      type: object\n"
				   "      properties:\n"
				   "        name: {type: string, description: who to greet}\n"
				   "      required: [name]\n"
				   "    output: {greeting: string, count: integer}\n"
				   "    examples:\n"
				   "      - input: {name: world}\n"
				   "        output: {greeting: \"hello, world\"}\n"
				   "      - input: {name: \"\"}\n"
				   "        error: the name is empty\n";

static const char python_main[] =
    "# SPDX-License-Identifier: MIT\n"
    "\"\"\"A berth resident app: `hello` greets and counts greetings in /workspace.\"\"\"\n"
    "\n"
    "import berth_app\n"
    "\n"
    "app = berth_app.App()\n"
    "\n"
    "\n"
    "@app.export(\"hello\")\n"
    "def hello(name):\n"
    "    if not name:\n"
    "        raise berth_app.AppError(\"the name is empty\")\n"
    "    # Paths are not checked here: the sandbox lets this app write\n"
    "    # /workspace only (berth.yml), and the kernel refuses the rest.\n"
    "    try:\n"
    "        with open(\"count\", \"a+\", encoding=\"utf-8\") as f:\n"
    "            f.seek(0)\n"
    "            count = int(f.read() or 0) + 1\n"
    "            f.seek(0)\n"
    "            f.truncate()\n"
    "            f.write(str(count))\n"
    "    except OSError as e:\n"
    "        raise berth_app.os_error(e, \"open\", \"count\")\n"
    "    return {\"greeting\": \"hello, \" + name, \"count\": count}\n"
    "\n"
    "\n"
    "app.run()\n";

static const char node_main[] =
    "// SPDX-License-Identifier: MIT\n"
    "// A berth resident app: `hello` greets and counts greetings in /workspace.\n"
    "// @berth/sdk is mounted by berth (NODE_PATH); docs/sdk.md.\n"
    "\"use strict\";\n"
    "\n"
    "const fs = require(\"node:fs/promises\");\n"
    "const { defineApp, AppError } = require(\"@berth/sdk\");\n"
    "\n"
    "defineApp({\n"
    "  tools: {\n"
    "    hello: {\n"
    "      description: \"Say hello to someone\",\n"
    "      // The same schemas as berth.yml (`node index.js --berth-exports` prints them).\n"
    "      input: {\n"
    "        type: \"object\",\n"
    "        properties: { name: { type: \"string\", description: \"who to greet\" } },\n"
    "        required: [\"name\"],\n"
    "      },\n"
    "      async handler({ name }) {\n"
    "        if (!name) throw new AppError(\"the name is empty\");\n"
    "        // Paths are not checked here: the sandbox lets this app write\n"
    "        // /workspace only (berth.yml), and the kernel refuses the rest.\n"
    "        let count = 0;\n"
    "        try {\n"
    "          count = Number(await fs.readFile(\"count\", \"utf8\")) || 0;\n"
    "        } catch (e) {\n"
    "          if (e.code !== \"ENOENT\") throw e; // -32001 with errno, syscall and path\n"
    "        }\n"
    "        count += 1;\n"
    "        await fs.writeFile(\"count\", String(count));\n"
    "        return { greeting: \"hello, \" + name, count };\n"
    "      },\n"
    "    },\n"
    "  },\n"
    "}).run();\n";

static const char c_main[] =
    "/* SPDX-License-Identifier: MIT */\n"
    "/* A berth resident app: `hello` greets and counts greetings in /workspace. */\n"
    "#include <errno.h>\n"
    "#include <stdio.h>\n"
    "\n"
    "#include <berth-app.h>\n"
    "\n"
    "static json_t *hello(berth_call *call, json_t *input, void *user_data)\n"
    "{\n"
    "\tconst char *name = json_string_value(json_object_get(input, \"name\"));\n"
    "\tlong count = 0;\n"
    "\tFILE *f;\n"
    "\n"
    "\t(void)user_data;\n"
    "\tif (name == NULL || name[0] == '\\0')\n"
    "\t\treturn berth_app_fail(call, \"the name is empty\");\n"
    "\t/* Paths are not checked here: the sandbox lets this app write\n"
    "\t * /workspace only (berth.yml), and the kernel refuses the rest. */\n"
    "\tf = fopen(\"count\", \"a+\");\n"
    "\tif (f == NULL)\n"
    "\t\treturn berth_app_fail_errno(call, errno, \"open\", \"count\");\n"
    "\trewind(f);\n"
    "\tif (fscanf(f, \"%ld\", &count) != 1)\n"
    "\t\tcount = 0;\n"
    "\tfclose(f);\n"
    "\tf = fopen(\"count\", \"w\");\n"
    "\tif (f == NULL)\n"
    "\t\treturn berth_app_fail_errno(call, errno, \"open\", \"count\");\n"
    "\tfprintf(f, \"%ld\", ++count);\n"
    "\tfclose(f);\n"
    "\treturn json_pack(\"{s:s+, s:I}\", \"greeting\", \"hello, \", name, \"count\", (json_int_t)count);\n"
    "}\n"
    "\n"
    "int main(void)\n"
    "{\n"
    "\tberth_app *app = berth_app_new();\n"
    "\n"
    "\tif (app == NULL || berth_app_export(app, \"hello\", hello, NULL) < 0)\n"
    "\t\treturn 1;\n"
    "\tint r = berth_app_run(app);\n"
    "\tberth_app_free(app);\n"
    "\treturn r < 0 ? 1 : 0;\n"
    "}\n";

static const char makefile_fmt[] =
    "# Builds %s with the berth C SDK, compiled in (the binary needs libc and\n"
    "# libjansson only).  BERTH_SDK is the SDK directory (sdk/c in berth's tree).\n"
    "BERTH_SDK ?= %s\n"
    "CFLAGS ?= -O2 -g -Wall -Wextra\n"
    "\n"
    "%s: main.c $(BERTH_SDK)/src/app.c $(BERTH_SDK)/include/berth-app.h\n"
    "\t$(CC) -std=gnu11 $(CFLAGS) -I$(BERTH_SDK)/include -o $@ main.c $(BERTH_SDK)/src/app.c -ljansson\n"
    "\n"
    "clean:\n"
    "\trm -f %s\n"
    "\n"
    ".PHONY: clean\n";

/* Write @text to @dir/@name (new file only, whole or not at all: a temporary
 * file, fsync, link); print what failed, with the errno (ENOSPC...). */
static int write_file(const char *dir, const char *name, const char *text, mode_t mode)
{
	char path[PATH_MAX];
	struct berth_error err = {0};

	snprintf(path, sizeof path, "%s/%s", dir, name);
	int r =
	    berth_write_atomic(path, text, strlen(text), mode, BERTH_WRITE_DURABLE | BERTH_WRITE_EXCL, &err);
	if (r == 1)
		berth_err(&err, EEXIST, "cannot write `%s`", path);
	if (r != 0) {
		fprintf(stderr, "berth: init: %s\n", CLI_SAFE(err.msg));
		return -1;
	}
	return 0;
}

/* A write failed midway: take back the directory this init made, so that no
 * half-made app stays (and a second `berth init` with the same name works). */
static void undo_init(const char *dir)
{
	static const char *const made[] = {"berth.yml", "main.py", "index.js", "main.c", "Makefile"};
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof made / sizeof made[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, made[i]);
		unlink(path);
	}
	if (rmdir(dir) == 0)
		fprintf(stderr, "berth: init: removed `%s` again: nothing was created\n", dir);
	else
		fprintf(stderr, "berth: init: could not remove `%s`: %s\n", dir, strerror(errno));
}

/* The C SDK next to the berth binary: ../sdk/c (build tree), or
 * ../share/berth/sdk/c (installed). */
static int find_sdk_c(char *out, size_t len)
{
	char exe[PATH_MAX], cand[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	const char *env = getenv("BERTH_SDK_C");
	struct stat st;

	if (env != NULL && env[0] != '\0')
		return realpath(env, out) != NULL && strlen(out) < len ? 0 : -1;
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	const char *rel[] = {"../sdk/c", "../share/berth/sdk/c"};
	for (size_t i = 0; i < 2; i++) {
		snprintf(cand, sizeof cand, "%s/%s/src/app.c", exe, rel[i]);
		if (stat(cand, &st) == 0) {
			snprintf(cand, sizeof cand, "%s/%s", exe, rel[i]);
			return realpath(cand, out) != NULL ? 0 : -1;
		}
	}
	return -1;
}

int cmd_init(int argc, char **argv)
{
	const char *name = NULL, *runtime = "python", *dir = NULL;
	char buf[8192], sdk[PATH_MAX], path[PATH_MAX];
	regex_t re;
	bool ok;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(init_usage, stdout);
			return 0;
		} else if (strcmp(argv[i], "--runtime") == 0 && i + 1 < argc) {
			runtime = argv[++i];
		} else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
			dir = argv[++i];
		} else if (argv[i][0] != '-' && name == NULL) {
			name = argv[i];
		} else {
			fprintf(stderr, "berth: init: unexpected argument `%s`\n%s", argv[i], init_usage);
			return 2;
		}
	}
	if (name == NULL) {
		fprintf(stderr, "berth: init: missing NAME\n%s", init_usage);
		return 2;
	}
	regcomp(&re, "^[a-z0-9-]{1,63}$", REG_EXTENDED | REG_NOSUB);
	ok = regexec(&re, name, 0, NULL, 0) == 0;
	regfree(&re);
	if (!ok) {
		fprintf(stderr, "berth: init: bad app name `%s`: use 1 to 63 of a-z, 0-9 and -\n", name);
		return 2;
	}
	if (strcmp(runtime, "native") != 0 && strcmp(runtime, "python") != 0 &&
	    strcmp(runtime, "node") != 0) {
		fprintf(stderr, "berth: init: unknown runtime `%s`: use native, python or node\n", runtime);
		return 2;
	}
	bool native = strcmp(runtime, "native") == 0, node = strcmp(runtime, "node") == 0;
	if (native && find_sdk_c(sdk, sizeof sdk) < 0) {
		fprintf(stderr,
			"berth: init: cannot find the berth C SDK next to this berth\n"
			"berth: hint: set BERTH_SDK_C to the sdk/c directory of berth's source tree\n");
		return 2;
	}
	if (dir == NULL)
		dir = name;
	if (mkdir(dir, 0755) < 0) {
		fprintf(stderr, "berth: init: cannot create `%s`: %s\n", dir, strerror(errno));
		if (errno == EEXIST)
			fprintf(stderr, "berth: hint: choose another --dir; berth init never writes into an "
					"existing directory\n");
		return 2;
	}
	snprintf(buf, sizeof buf, manifest_fmt, name, name, runtime,
		 native ? name
		 : node ? "index.js"
			: "main.py");
	if (write_file(dir, "berth.yml", buf, 0644) < 0) {
		undo_init(dir);
		return 125;
	}
	if (!native) {
		if (write_file(dir, node ? "index.js" : "main.py", node ? node_main : python_main, 0644) <
		    0) {
			undo_init(dir);
			return 125;
		}
		printf("berth: created the %s app `%s` in %s\n  try: berth test %s\n", runtime, name, dir,
		       dir);
		return 0;
	}
	snprintf(buf, sizeof buf, makefile_fmt, name, sdk, name, name);
	if (write_file(dir, "main.c", c_main, 0644) < 0 || write_file(dir, "Makefile", buf, 0644) < 0) {
		undo_init(dir);
		return 125;
	}
	/* Build it once, so `berth test` works unchanged. */
	pid_t pid = fork();
	if (pid == 0) {
		execlp("make", "make", "-s", "-C", dir, (char *)NULL);
		_exit(127);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		snprintf(path, sizeof path, "%s", dir);
		fprintf(stderr,
			"berth: init: created `%s`, but `make -C %s` failed\n"
			"berth: hint: install a C compiler and libjansson-dev, then run make -C %s\n",
			path, path, path);
		return 125;
	}
	printf("berth: created and built the native app `%s` in %s\n  try: berth test %s\n", name, dir, dir);
	return 0;
}
