/* SPDX-License-Identifier: MIT */
/*
 * ynode.h - berth's one YAML front end: a document as a tree of nodes that
 * remember their line and column, built from libyaml's event API.  Every YAML
 * file berth reads goes through berth_ynode_build(): manifests (src/manifest/,
 * which collect many diagnostics), rules files and agent pattern files
 * (berth_ynode_parse(), which stops at the first problem), session profiles
 * and fleets (src/session/yconf.c).
 *
 * The event API (rather than yaml_parser_load) lets the builder refuse what a
 * configuration file never needs and an attacker would use: aliases (the
 * "billion laughs" expansion), anchors and tags (unless the caller allows
 * them), more than one document, nesting deeper than a limit, more nodes
 * than a limit.  The tree is therefore at most linear in the input, and
 * recursion over it is bounded by the caller's depth limit (freeing a tree
 * does not recurse).
 *
 * Each caller words its own messages: the builder hands every problem to a
 * callback as data (struct berth_yproblem), so the diagnostics of each file
 * kind stay what its users know.
 */
#ifndef BERTH_YNODE_H
#define BERTH_YNODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* Limits of berth_ynode_parse() (rules files, agent pattern files). */
#define BERTH_YNODE_MAX_SIZE (1 << 20) /* bytes */
#define BERTH_YNODE_MAX_DEPTH 16
#define BERTH_YNODE_MAX_NODES 20000

enum berth_ynode_kind { BERTH_YN_SCALAR, BERTH_YN_SEQ, BERTH_YN_MAP };

struct berth_ynode {
	enum berth_ynode_kind kind;
	unsigned line, col; /* 1-based, of the node's first character */
	char *s;    /* scalars: the text, NUL-terminated; NUL bytes before len only with BERTH_YB_NUL */
	size_t len; /* scalars: bytes of s */
	bool plain; /* scalars: plain (unquoted) style, not forced to a string by a `!`/`!!str` tag */
	struct berth_ynode **kids; /* seq items, or map key, value, key, value ... */
	size_t n, cap;
	struct berth_ynode *next; /* the tree's next node in document order (the builder's chain) */
};

/* What berth_ynode_build() found wrong; handed to the caller's callback. */
enum berth_yproblem_kind {
	BERTH_YP_SYNTAX, /* libyaml refused the text: text = problem (may be NULL), context (may be NULL) */
	BERTH_YP_READER, /* the bytes are not UTF-8 (or UTF-16): text = problem (may be NULL), offset, value */
	BERTH_YP_DOCUMENT, /* a second document starts here */
	BERTH_YP_ALIAS,    /* an alias; text = the anchor it names */
	BERTH_YP_ANCHOR,   /* an anchor; text = its name */
	BERTH_YP_TAG,      /* a tag the caller does not accept; text = the tag as libyaml resolved it */
	BERTH_YP_NUL,      /* a scalar holds a NUL byte (unless BERTH_YB_NUL) */
	BERTH_YP_NODES,    /* more than max_nodes nodes; the node here is the first one too many */
	BERTH_YP_DEPTH,    /* a collection here nests deeper than max_depth */
};

struct berth_yproblem {
	enum berth_yproblem_kind kind;
	unsigned line, col;  /* 1-based; BERTH_YP_READER: computed from offset (columns in characters) */
	const char *text;    /* see the kinds above */
	const char *context; /* BERTH_YP_SYNTAX: what was being read, or NULL */
	unsigned context_line, context_col;
	size_t offset; /* BERTH_YP_READER: byte offset */
	int value;     /* BERTH_YP_READER: the bad byte or code point, or -1 */
};

/* berth_yopts.flags */
#define BERTH_YB_TAGS_ANY 0x1 /* ignore every tag (never BERTH_YP_TAG) */
#define BERTH_YB_TAGS_CORE                                                                                   \
	0x2              /* accept `!`/`!!str` on scalars (the node is then not plain), `!!seq`, `!!map` */
#define BERTH_YB_NUL 0x4 /* scalars may hold NUL bytes (never BERTH_YP_NUL) */

struct berth_yopts {
	unsigned max_depth; /* nested collections; 0: no limit */
	size_t max_nodes;   /* 0: no limit */
	unsigned flags;     /* BERTH_YB_* */
	/*
	 * problem - called for each problem.  Return -1 to stop; for aliases,
	 * anchors, tags and NUL bytes, 0 to go on (an alias then stands as an
	 * empty scalar) or 1 to accept what was found (not counted as a problem).
	 * Syntax, reader, document, node and depth problems always stop.
	 */
	int (*problem)(void *opaque, const struct berth_yproblem *p);
	void *opaque;
};

/*
 * berth_ynode_build - build the tree of one YAML document from @buf (@len
 * bytes; the caller checks its size limit first).
 * Sets *@root to the tree, or NULL when the stream has no document; after a
 * problem the tree is what was built before it (free it in every case).
 * Returns 0 when no problem was reported, 1 when one was, -1 (errno ENOMEM)
 * when out of memory.
 */
int berth_ynode_build(const char *buf, size_t len, const struct berth_yopts *o, struct berth_ynode **root);

/*
 * berth_ynode_parse - parse a berth configuration file (rules, agent
 * patterns): no anchors, aliases, tags or NUL bytes, at most
 * BERTH_YNODE_MAX_SIZE bytes, BERTH_YNODE_MAX_DEPTH levels and
 * BERTH_YNODE_MAX_NODES nodes; stops at the first problem.
 * @origin: file name for messages ("ORIGIN:LINE:COL: ...").
 * Returns 0 and sets *@root (NULL for an empty document), or -1 with @err
 * filled: BERTH_EXIT_USAGE for YAML syntax errors and the refusals listed
 * above; BERTH_EXIT_INTERNAL (ENOMEM) when out of memory.
 */
int berth_ynode_parse(const char *buf, size_t len, const char *origin, struct berth_ynode **root,
		      struct berth_error *err);

/* berth_ynode_free - release a tree from berth_ynode_build/parse, given its root (NULL is fine). */
void berth_ynode_free(struct berth_ynode *n);

/* Mapping helpers: number of pairs; key and value of pair @i. */
static inline size_t berth_ymap_size(const struct berth_ynode *m)
{
	return m->n / 2;
}
static inline struct berth_ynode *berth_ymap_key(const struct berth_ynode *m, size_t i)
{
	return m->kids[2 * i];
}
static inline struct berth_ynode *berth_ymap_val(const struct berth_ynode *m, size_t i)
{
	return m->kids[2 * i + 1];
}

/* "a scalar", "a list", "a mapping", for messages. */
const char *berth_ynode_describe(const struct berth_ynode *n);

/*
 * Typed readers.  Each returns 0 with the value, or -1 with @err filled
 * (BERTH_EXIT_USAGE) as "ORIGIN:LINE:COL: KEY must be ..., got ...".
 * berth_ynode_bool: plain true/false only (YAML 1.2 core schema).
 * berth_ynode_uint: a plain decimal integer in [@min, @max].
 * berth_ynode_str: any scalar but a plain null (`~`, `null`, empty).
 */
int berth_ynode_bool(const struct berth_ynode *n, const char *origin, const char *key, bool *out,
		     struct berth_error *err);
int berth_ynode_uint(const struct berth_ynode *n, const char *origin, const char *key, uint64_t min,
		     uint64_t max, uint64_t *out, struct berth_error *err);
int berth_ynode_str(const struct berth_ynode *n, const char *origin, const char *key, const char **out,
		    struct berth_error *err);

/*
 * berth_ynode_err - fill @err (BERTH_EXIT_USAGE) with "ORIGIN:LINE:COL: "
 * (position of @at, or 1:1 when NULL) and the formatted message.  Returns -1.
 */
int berth_ynode_err(struct berth_error *err, const char *origin, const struct berth_ynode *at,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
