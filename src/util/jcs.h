/* SPDX-License-Identifier: MIT */
/*
 * jcs.h - RFC 8785 JSON Canonicalization Scheme (JCS) over jansson values.
 *
 * The canonical form is what berth hashes and signs (audit records, the
 * signed audit head, attestations), so that anyone can recompute the bytes
 * with any RFC 8785 implementation.  Rules applied (RFC 8785 section 3.2):
 *   - no whitespace between tokens;
 *   - object members sorted by their names compared as arrays of UTF-16 code
 *     units (section 3.2.3), recursively; jansson already refuses duplicate
 *     names;
 *   - strings: `"` and `\` escaped, U+0008/0009/000A/000C/000D as \b \t \n
 *     \f \r, the other code points below U+0020 as \u00xx (lowercase hex),
 *     everything else as literal UTF-8 (section 3.2.2.2);
 *   - numbers: the ECMAScript Number.prototype.toString() form (ES6, section
 *     7.1.12.1, cited by RFC 8785 section 3.2.2.3): shortest round-trip
 *     digits, decimal notation for 1e-7 <= |x| < 1e21, otherwise d.ddde+N /
 *     d.ddde-N; -0 is "0";
 *   - literals true, false, null.
 */
#ifndef BERTH_JCS_H
#define BERTH_JCS_H

#include <jansson.h>
#include <stddef.h>

#include "error.h"

/* Largest integer magnitude JCS can carry exactly (2^53, IEEE 754 double). */
#define BERTH_JCS_MAX_SAFE_INT 9007199254740992LL

/*
 * berth_jcs - the RFC 8785 canonical serialisation of @v.
 * @v: any jansson value (object, array, string, integer, real, true, false,
 *     null); nesting depth at most 1000.
 * Returns a malloc(3)'d NUL-terminated string (free it), or NULL with @err
 * filled:
 *   EINVAL  an integer with magnitude above 2^53 that no IEEE 754 double
 *           holds exactly (a JSON number in JCS is a double, so it would not
 *           round-trip: RFC 8785 section 3.2.2.3 / I-JSON, RFC 7493 section
 *           2.2; 2^60 or 10^18 are fine, 2^53+1 is not), a non-finite real, a
 *           string or member name that is not valid UTF-8 or contains U+0000
 *           in a member name (jansson allows it; JCS consumers do not);
 *   ELOOP   nesting deeper than 1000;
 *   ENOMEM  out of memory.
 * String values containing U+0000 are emitted as \u0000.
 * Thread-safe; does not modify @v.
 */
char *berth_jcs(const json_t *v, struct berth_error *err);

/*
 * berth_jcs_len - as berth_jcs, also storing the length in bytes (without the
 * NUL) in @len.
 */
char *berth_jcs_len(const json_t *v, size_t *len, struct berth_error *err);

/*
 * berth_jcs_number - the ES6 Number.prototype.toString() form of @d into
 * @buf (at least 32 bytes).  Returns 0, or -1 with @err filled (EINVAL: NaN
 * or infinite).
 */
int berth_jcs_number(double d, char buf[32], struct berth_error *err);

#endif
