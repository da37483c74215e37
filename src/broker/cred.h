/* SPDX-License-Identifier: MIT */
/*
 * cred.h - the header rewrite of injected credentials (docs/credentials.md):
 * in a request head bound for a credential's host, the placeholder the
 * sandbox was given is replaced by the real value, in the one field the
 * binding names and nowhere else.
 *
 * Pure code: no I/O, no allocation, no global state; safe from any thread.
 * The head is what berth_http_rewrite_origin() writes: a request line, then
 * `Name: value` field lines ending in CRLF, then an empty line.
 *
 * Per field line whose name equals the binding's field (case-insensitive):
 *   bearer       the value is `Bearer TOKEN` (scheme case-insensitive): every
 *                placeholder in TOKEN is replaced;
 *   basic        the value is `Basic B64`: B64 is decoded (RFC 4648 base64),
 *                every placeholder in it replaced, and it is encoded again;
 *                so `user:PLACEHOLDER` and a bare `PLACEHOLDER` both work
 *                (the secret being `user:password` or a password);
 *   x-api-key,
 *   header:F     every placeholder in the value is replaced.
 * A placeholder anywhere else (the request line, another field, the body) is
 * left as it is: a server that echoes a header back to the client would
 * otherwise hand the secret to the sandbox.  A binding whose path prefix the
 * request's path does not start with is not applied, nor one other than `/`
 * when the path (before `?`) has a dot segment (`.` or `..`, its dots
 * written or as %2e), a `\`, or a %2f or %5c: the server may resolve such a
 * path to one outside the prefix.
 */
#ifndef BERTH_BROKER_CRED_H
#define BERTH_BROKER_CRED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../policy/credential.h"

/* One binding as the rewrite applies it. */
struct berth_cred_inject {
	enum berth_cred_header header;
	const char *field;       /* the field name */
	const char *prefix;      /* the path prefix ("/" for all) */
	const char *placeholder; /* what the sandbox has; printable ASCII, no space */
	const char *secret;      /* the real value; printable ASCII (checked when read) */
	size_t secret_len;
};

/*
 * berth_cred_rewrite - the head @head (@len bytes) with @inj[0..n) applied.
 * @path, @path_len: the request's target (origin-form), matched against
 *   each binding's prefix
 * @out, @cap: where the new head goes (NUL-terminated when it fits);
 *   @out may be NULL with @cap 0 to learn the length
 * @used: set to a mask of the bindings that replaced something (bit i for
 *   @inj[i]; @n at most 32)
 * Returns the length of the new head (which may be more than @cap: call
 * again with a buffer that large), or -1 when @head is not a head of that
 * form, @n is over 32, or a Basic value is not base64.
 */
long berth_cred_rewrite(const char *head, size_t len, const char *path, size_t path_len,
			const struct berth_cred_inject *inj, size_t n, char *out, size_t cap, uint32_t *used);

/*
 * berth_cred_host_matches - whether a Host field value @v (@n bytes) names
 * @host on @port: `host` (when @port is 443) or `host:port`, the name
 * case-insensitive, one trailing dot allowed.
 */
bool berth_cred_host_matches(const char *v, size_t n, const char *host, unsigned port);

#endif
