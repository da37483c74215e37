/* SPDX-License-Identifier: MIT */
/*
 * ynode.h - a small YAML document as a tree of nodes that remember their
 * line and column, for berth's own configuration files (agent pattern files,
 * rules files).  Built from libyaml's event API so that what a configuration
 * file never needs and an attacker would use is refused: anchors and aliases
 * ("billion laughs"), tags, more than one document, nesting deeper than
 * BERTH_YNODE_MAX_DEPTH, more than BERTH_YNODE_MAX_NODES nodes, input over
 * BERTH_YNODE_MAX_SIZE bytes.  The tree is therefore at most linear in the
 * input and recursion over it is bounded.
 *
 * (Resident-app manifests have their own tree in src/manifest/, which
 * collects many diagnostics; these files stop at the first problem.)
 */
#ifndef BERTH_YNODE_H
#define BERTH_YNODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define BERTH_YNODE_MAX_SIZE (1 << 20) /* bytes */
#define BERTH_YNODE_MAX_DEPTH 16
#define BERTH_YNODE_MAX_NODES 20000

enum berth_ynode_kind { BERTH_YN_SCALAR, BERTH_YN_SEQ, BERTH_YN_MAP };

struct berth_ynode {
	enum berth_ynode_kind kind;
	unsigned line, col; /* 1-based, of the node's first character */
	char *s;            /* scalars: the text, NUL-terminated (embedded NULs refused) */
	bool plain;         /* scalars: plain (unquoted) style */
	struct berth_ynode **kids; /* seq items, or map key, value, key, value ... */
	size_t n, cap;
};

/*
 * berth_ynode_parse - parse one YAML document.
 * @origin: file name for messages ("ORIGIN:LINE:COL: ...").
 * Returns 0 and sets *@root (NULL for an empty document), or -1 with @err
 * filled: BERTH_EXIT_USAGE for YAML syntax errors and the refusals listed
 * above; BERTH_EXIT_INTERNAL (ENOMEM) when out of memory.
 */
int berth_ynode_parse(const char *buf, size_t len, const char *origin, struct berth_ynode **root,
		      struct berth_error *err);

/* berth_ynode_free - release a tree (NULL is fine). */
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

/* "a string", "a list", "a mapping", for messages. */
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
int berth_ynode_uint(const struct berth_ynode *n, const char *origin, const char *key, uint64_t min, uint64_t max,
		     uint64_t *out, struct berth_error *err);
int berth_ynode_str(const struct berth_ynode *n, const char *origin, const char *key, const char **out,
		    struct berth_error *err);

/*
 * berth_ynode_err - fill @err (BERTH_EXIT_USAGE) with "ORIGIN:LINE:COL: "
 * (position of @at, or 1:1 when NULL) and the formatted message.  Returns -1.
 */
int berth_ynode_err(struct berth_error *err, const char *origin, const struct berth_ynode *at, const char *fmt,
		    ...) __attribute__((format(printf, 4, 5)));

#endif
