/* SPDX-License-Identifier: MIT */
/*
 * manifest.h - `berth.yml`, the capability manifest of a resident app.
 *
 * A manifest names an app, its entry program, the capabilities it needs
 * (filesystem scopes, network hosts), the secrets it may receive, its
 * resource limits and the exports (JSON-RPC methods) it serves, each with an
 * input and an output JSON Schema and optional examples.  The format is
 * described in docs/manifest.md.
 *
 * Parsing is strict and reports every problem at once: each problem is one
 * line `DISPLAY:LINE:COL: FIELD.PATH: message` in a `struct berth_diags`,
 * sorted by position.  Nothing here enforces anything: the runner turns a
 * manifest into a policy.
 */
#ifndef BERTH_MANIFEST_H
#define BERTH_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "../util/error.h"

#define BERTH_MANIFEST_SCHEMA 1               /* the only schema_version known */
#define BERTH_MANIFEST_MAX_SIZE (1024 * 1024) /* bytes; larger files are refused */
#define BERTH_MANIFEST_MAX_DEPTH 64           /* nested YAML collections */
#define BERTH_MANIFEST_MAX_NODES 100000       /* YAML nodes in one file */
#define BERTH_DIAGS_MAX 200                   /* diagnostics kept; more are counted */

enum berth_runtime {
	BERTH_RUNTIME_NATIVE = 0, /* `entry` is an executable */
	BERTH_RUNTIME_PYTHON,     /* `entry` is a Python script run by python3 */
	BERTH_RUNTIME_NODE,       /* `entry` is a JavaScript file run by node */
};

enum berth_cap_kind {
	BERTH_CAP_FS_READ = 0, /* filesystem:read:PATH */
	BERTH_CAP_FS_WRITE,    /* filesystem:write:PATH (implies read) */
	BERTH_CAP_NET_HOST,    /* network:host:PATTERN */
};

/* One capability. */
struct berth_cap {
	enum berth_cap_kind kind;
	/*
	 * FS_READ/FS_WRITE: a canonical absolute path in the sandbox, under
	 * /workspace, /context, /tmp or /app, a trailing wildcard component (`/` `*`) stripped.
	 * NET_HOST: the pattern `host`, `*.suffix`, `a.b.c.d` or `[v6]`, each
	 * optionally followed by `:PORT` or `:*`; host names lowercased.
	 */
	char *scope;
};

/* What an example expects from its call. */
enum berth_expect {
	BERTH_EXPECT_SUCCESS = 0, /* neither `output` nor `error`: the call must succeed */
	BERTH_EXPECT_OUTPUT,      /* `output`: succeed, and match it (see berth_example_match) */
	BERTH_EXPECT_ERRNO,       /* `error: EACCES`: fail with data.errno_name equal to it */
	BERTH_EXPECT_CODE,        /* `error: -32000`: fail with this JSON-RPC error code */
	BERTH_EXPECT_TEXT,        /* `error: some text`: fail with a message containing it */
};

struct berth_example {
	json_t *input;  /* the call's params (an object), owned */
	json_t *output; /* expected output (BERTH_EXPECT_OUTPUT), else NULL; owned */
	char *error;    /* the `error` value as text (ERRNO, CODE, TEXT), else NULL */
	enum berth_expect expect;
	int error_errno;      /* BERTH_EXPECT_ERRNO: the errno value of `error` */
	long long error_code; /* BERTH_EXPECT_CODE: the JSON-RPC code */
	unsigned line;        /* 1-based line of the example in the manifest */
};

struct berth_export {
	char *name; /* ^[a-z][a-z0-9_]*$, unique within the manifest */
	char *description;
	json_t *input;  /* JSON Schema of params, shorthand expanded; `type: object`; owned */
	json_t *output; /* JSON Schema of the result, shorthand expanded; `type: object`; owned */
	struct berth_example *examples;
	size_t n_examples;
};

struct berth_resources {
	bool has_memory, has_millicpus, has_pids; /* given in the manifest */
	uint64_t memory;                          /* bytes */
	uint32_t millicpus;                       /* CPU bandwidth in 1/1000 CPU */
	uint32_t pids;                            /* max tasks */
};

struct berth_manifest {
	int schema_version; /* always BERTH_MANIFEST_SCHEMA */
	char *name;         /* ^[a-z0-9-]+$, 1..63 characters */
	char *version;      /* semantic version, as written */
	char *description;
	enum berth_runtime runtime;
	char *entry;            /* path relative to the app directory */
	struct berth_cap *caps; /* in order of first appearance, duplicates stored once */
	size_t n_caps;
	char **secrets; /* environment variable names, unique */
	size_t n_secrets;
	/* credentials: bindings as --credential takes them (src/policy/credential.h,
	 * docs/credentials.md), each NAME once: the secret never enters the app's
	 * sandbox, the broker injects it for the bound host */
	char **credentials;
	size_t n_credentials;
	struct berth_resources resources;
	struct berth_export *exports; /* at least one */
	size_t n_exports;
};

/* One problem found in a manifest. */
struct berth_diag {
	unsigned line, col; /* 1-based position; 0 when the problem has none */
	char *text;         /* the whole line `DISPLAY:LINE:COL: FIELD.PATH: message`, owned */
};

/*
 * A growable list of diagnostics.  Initialise to all zeros (`= {0}`);
 * berth_diags_free() releases it and leaves it empty and reusable.
 */
struct berth_diags {
	struct berth_diag *items;
	size_t n, cap;
	size_t dropped; /* problems found beyond BERTH_DIAGS_MAX, not stored */
};

/* berth_diags_free - release every line of @d and reset it to empty. */
void berth_diags_free(struct berth_diags *d);

/*
 * berth_manifest_parse - parse and validate a berth.yml.
 * @buf, @len: the file's contents (need not be NUL-terminated; at most
 *     BERTH_MANIFEST_MAX_SIZE bytes, larger input is one problem)
 * @display_name: name used at the start of every diagnostic, such as
 *     `apps/x/berth.yml`; NULL means `berth.yml`
 * @m: receives the manifest; it need not be initialised.  On failure it is
 *     left zeroed (berth_manifest_free() on it is harmless).
 * @d: diagnostics are appended here (initialised by the caller), sorted by
 *     position; one line per problem, every problem in the file
 * @err: error object
 * Returns 0 when the manifest is valid (@d unchanged), or -1 with @err
 * filled: status BERTH_EXIT_USAGE and the message "N problems in `DISPLAY`"
 * when the manifest is invalid (the problems are in @d); status
 * BERTH_EXIT_INTERNAL with ENOMEM when memory ran out.
 */
int berth_manifest_parse(const char *buf, size_t len, const char *display_name, struct berth_manifest *m,
			 struct berth_diags *d, struct berth_error *err);

/*
 * berth_manifest_load - read and parse `<app_dir>/berth.yml`.
 * @app_dir: host path of the app directory
 * @display_dir: how to name that directory in messages (e.g. `apps/x`);
 *     NULL means @app_dir.  Diagnostics are named `<display_dir>/berth.yml`.
 * @m, @d: as for berth_manifest_parse()
 * @err: error object
 * Returns 0, or -1 with @err filled: ENOENT when the file does not exist
 * (the hint says `berth init NAME` creates one), the errno of a failed
 * open/read, or a usage error when the path is not a regular file; and as
 * berth_manifest_parse() for an invalid or too large manifest.
 */
int berth_manifest_load(const char *app_dir, const char *display_dir, struct berth_manifest *m,
			struct berth_diags *d, struct berth_error *err);

/* berth_manifest_free - release everything @m owns and zero it. */
void berth_manifest_free(struct berth_manifest *m);

/*
 * berth_capability_parse - parse one capability string `namespace:action:scope`
 * (the grammar of the `capabilities` list, see docs/manifest.md).
 * @s: the capability, NUL-terminated
 * @cap: receives the kind and a malloc'd canonical scope (free cap->scope)
 * @reason, @reason_len: receive why @s is refused, lowercase, one line,
 *     ending with what is allowed or `; fix: ...`
 * Returns 0, or -1 with @reason filled (also when memory ran out).
 */
int berth_capability_parse(const char *s, struct berth_cap *cap, char *reason, size_t reason_len);

/* berth_runtime_name - "native", "python" or "node". */
const char *berth_runtime_name(enum berth_runtime rt);

#endif
