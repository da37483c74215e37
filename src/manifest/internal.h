/* SPDX-License-Identifier: MIT */
/*
 * internal.h - shared by the files of src/manifest/ only: the YAML tree with
 * positions (ytree.c), the diagnostics context (diag.c), the YAML-level schema
 * reader (yschema.c) and the capability grammar (capability.c).
 */
#ifndef BERTH_MANIFEST_INTERNAL_H
#define BERTH_MANIFEST_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "../util/ynode.h"
#include "manifest.h"
#include "schema.h"

/* ---- the YAML tree (util/ynode.h, built by ytree.c) ---- */

/* The type of a scalar under the YAML 1.2 core schema. */
enum yscalar_type { YT_STR, YT_NULL, YT_BOOL, YT_INT, YT_FLOAT };

/*
 * ytree_parse - build the tree of a single YAML document with
 * berth_ynode_build() (scalars may hold NUL bytes; `!!str` forces a string).
 * YAML-level problems (syntax, anchors, aliases, tags, depth, size) become
 * diagnostics.  Returns the root (NULL when the stream has no document; free
 * it with berth_ynode_free), sets *ok = false when any YAML-level problem was
 * reported (the tree is then not to be validated further).
 */
struct mctx;
struct berth_ynode *ytree_parse(struct mctx *c, const char *buf, size_t len, bool *ok);

enum yscalar_type yscalar_type(const struct berth_ynode *n);

/* True when scalar @n's text is exactly @s (no embedded NUL). */
bool yscalar_is(const struct berth_ynode *n, const char *s);

/* "a string", "an integer", "a list", ... for messages. */
const char *ynode_describe(const struct berth_ynode *n);

/*
 * yjson - convert @n to JSON with core-schema typing; reports problems
 * (duplicate keys, non-scalar keys, out-of-range numbers) with paths below
 * the current one.  Returns a new reference or NULL (problem reported, or
 * out of memory).
 */
json_t *yjson(struct mctx *c, const struct berth_ynode *n);

/* ---- diagnostics context (diag.c) ---- */

#define MCTX_PATH_MAX 1024

struct mctx {
	const char *display; /* file name at the start of each diagnostic */
	struct berth_diags *d;
	size_t first;    /* index in d of this parse's first diagnostic */
	size_t problems; /* reported by this parse, kept or dropped */
	bool oom;
	char path[MCTX_PATH_MAX]; /* the field being checked, `exports[1].input` */
	size_t plen;
	char qbuf[4][512]; /* rotating buffers for quote() */
	unsigned qnext;
};

/* diag - report a problem at @at (NULL: 1:1) for the current path. */
void diag(struct mctx *c, const struct berth_ynode *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* diag_pos - report a problem at an explicit position, without a field path when @with_path is false. */
void diag_pos(struct mctx *c, unsigned line, unsigned col, bool with_path, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/*
 * diag_full - true when no more diagnostics are kept; a caller may then skip
 * work that only improves a message and call diag_drop() instead of diag().
 */
bool diag_full(const struct mctx *c);
void diag_drop(struct mctx *c);
/* diag_finish - sort this parse's diagnostics by position, add the "more not shown" line. */
void diag_finish(struct mctx *c);

/* Path building: push returns the old length to hand to path_pop. */
size_t path_push_key(struct mctx *c, const char *key, size_t len);
size_t path_push_index(struct mctx *c, size_t i);
void path_pop(struct mctx *c, size_t old);

/*
 * quote - a value fit for a one-line message: control and invisible
 * characters escaped, cut at 60 characters.  The result lives until the
 * fourth next call.
 */
const char *quote(struct mctx *c, const char *s, size_t len);
/* got - what @n is, for "expected X, got ...": "a string `foo`", "an integer `5`", "a list", "null". */
const char *got(struct mctx *c, const struct berth_ynode *n);

/* ---- schemas in YAML (yschema.c) ---- */

/*
 * yschema - read the input or output schema of an export (@n may be NULL:
 * the default @default_json is used).  Full schemas and the shorthand are
 * accepted; the top level must be `type: object`.  Problems are reported
 * with positions.  Returns the expanded schema, or NULL when it has problems.
 */
json_t *yschema(struct mctx *c, const struct berth_ynode *n);

/*
 * yvalidate - validate @inst (converted from @yn) against @schema, reporting
 * every mismatch at the position of the YAML node it concerns, below the
 * current path.  @flags: BERTH_SCHEMA_*.  Returns the number of mismatches.
 */
size_t yvalidate(struct mctx *c, const json_t *schema, const json_t *inst, const struct berth_ynode *yn,
		 unsigned flags);

/* ---- helpers ---- */

/* Lists for messages. */
#define SCHEMA_KEYWORD_LIST                                                                                  \
	"type, properties, required, items, enum, description, default, minimum, maximum, contentEncoding, " \
	"contentMediaType"
#define SCHEMA_TYPE_LIST "string, integer, number, boolean, array, object, null"

#endif
