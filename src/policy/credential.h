/* SPDX-License-Identifier: MIT */
/*
 * credential.h - injected credentials (docs/credentials.md): a binding says
 * which secret may be sent to which destination and in which header.  The
 * sandbox sees only a placeholder; the egress broker puts the real value in
 * the request's header on its way to the bound host (src/broker/cred.h).
 *
 *   BINDING = NAME "=" SOURCE "@" HOST [ ":" PORT ] [ PATH-PREFIX ] [ "#" HEADER ]
 *   SOURCE  = "env:" VAR          a variable of berth's caller (then cleared in berth)
 *           | "file:" PATH        a regular file, mode 0600 or stricter, the caller's
 *           | "cmd:" COMMAND      the output of `/bin/sh -c COMMAND` (exit status 0)
 *   HOST    = a DNS name, as an allow-host NAME (hostpat.h); no wildcard, no address
 *   PORT    = 1-65535, default 443
 *   PATH-PREFIX = "/" ...         default "/": every path; no `@`, `#`, `?`, space
 *   HEADER  = "bearer"            Authorization: Bearer VALUE (default)
 *           | "x-api-key"         x-api-key: VALUE
 *           | "basic"             Authorization: Basic base64(VALUE), VALUE being user:password
 *           | "header:" FIELD     FIELD: VALUE (a token, not a hop-by-hop or framing field)
 *
 * The split is at the last `@`, so a command may hold `@`s.  NAME is the
 * environment variable that carries the placeholder inside (a shell name, not
 * one berth owns).  Pure code: no I/O, no allocation but the result's strings.
 */
#ifndef BERTH_POLICY_CREDENTIAL_H
#define BERTH_POLICY_CREDENTIAL_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/error.h"

#define BERTH_CRED_MAX 16              /* bindings of one run */
#define BERTH_CRED_NAME_MAX 64         /* bytes of NAME */
#define BERTH_CRED_PREFIX_MAX 512      /* bytes of PATH-PREFIX */
#define BERTH_CRED_SECRET_MAX 16384    /* bytes of a secret's value */
#define BERTH_CRED_FIELD_MAX 64        /* bytes of a header:FIELD name */
#define BERTH_CRED_SOURCE_ARG_MAX 4096 /* bytes of VAR, PATH or COMMAND */

enum berth_cred_source {
	BERTH_CRED_SRC_ENV = 1,
	BERTH_CRED_SRC_FILE = 2,
	BERTH_CRED_SRC_CMD = 3,
};

enum berth_cred_header {
	BERTH_CRED_BEARER = 1,
	BERTH_CRED_X_API_KEY = 2,
	BERTH_CRED_BASIC = 3,
	BERTH_CRED_HEADER = 4,
};

/* One binding; plain data (no secret in it). */
struct berth_credential {
	char *name; /* the variable holding the placeholder inside */
	enum berth_cred_source source;
	char *source_arg; /* VAR, PATH (absolute) or COMMAND */
	char *host;       /* lowercase DNS name */
	unsigned port;    /* 1-65535 */
	char *prefix;     /* path prefix, starts with "/" */
	enum berth_cred_header header;
	char *field; /* the header's field name as sent ("Authorization", "x-api-key", FIELD) */
};

/*
 * berth_credential_parse - parse one binding @s into @c (its strings
 * malloc'd; release with berth_credential_clear()).
 * @reason, @len: on failure a one-line message (lowercase, values in
 * backticks, control bytes escaped) naming the fix.
 * Returns 0; -1 with @reason when @s is not a binding; -2 when out of memory.
 */
int berth_credential_parse(const char *s, struct berth_credential *c, char *reason, size_t len);

/* berth_credential_clear - free @c's strings and zero it.  Safe on a zeroed one. */
void berth_credential_clear(struct berth_credential *c);

/*
 * berth_credential_format - the canonical text of @c, which
 * berth_credential_parse() reads back to the same binding:
 * `NAME=env:VAR@HOST:PORT/PREFIX#HEADER`.  @buf, @len: output; a
 * BERTH_CRED_TEXT_MAX buffer is always enough.  Returns 0, or -1 when it
 * does not fit.
 */
#define BERTH_CRED_TEXT_MAX                                                                                  \
	(BERTH_CRED_NAME_MAX + BERTH_CRED_SOURCE_ARG_MAX + 300 + BERTH_CRED_PREFIX_MAX +                     \
	 BERTH_CRED_FIELD_MAX + 32)
int berth_credential_format(const struct berth_credential *c, char *buf, size_t len);

/* berth_cred_source_name - "env", "file" or "cmd". */
const char *berth_cred_source_name(enum berth_cred_source s);

/* berth_cred_header_name - "bearer", "x-api-key", "basic" or "header". */
const char *berth_cred_header_name(enum berth_cred_header h);

/*
 * berth_cred_dot_segment - whether the path segment @s (@n bytes) is `.` or
 * `..`, each dot written as itself or as `%2e` (RFC 3986 5.2.4 resolves it):
 * the grammar refuses such a PREFIX, the broker's rewrite never matches a
 * path holding one (src/broker/cred.c).
 */
bool berth_cred_dot_segment(const char *s, size_t n);

#endif
