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

/* A member of a top-level object, as spans into the checked text. */
struct berth_jcs_member {
	const char *key; /* the name's raw canonical text, without quotes */
	size_t klen;
	const char *value; /* the value's text (strings with their quotes) */
	size_t vlen;
};

/*
 * berth_jcs_check - is @s (@len bytes) exactly the RFC 8785 canonical form of
 * one JSON value?  That is: no white space; member names in strictly
 * increasing UTF-16 order (no duplicates); strings valid UTF-8 with only the
 * escapes JCS writes (\" \\ \b \t \n \f \r, \u00xx lowercase for the other
 * controls); every number the ES6 form of the double it denotes (so `1.0`,
 * `1E3`, `-0`, `9007199254740993` are not canonical); depth at most 1000.
 * Equivalent to berth_jcs(parse(s)) == s for a parser that reads numbers as
 * doubles, without building a tree: the audit verifier's fast path.
 * @top: when not NULL and the value is an object, its members are stored
 *       here (at most @max; more is not an error) and their count in @ntop.
 * Returns 0 when canonical, or -1 with @err filled (EBADMSG, with the byte
 * offset and what is wrong there).
 */
int berth_jcs_check(const char *s, size_t len, struct berth_jcs_member *top, size_t max, size_t *ntop,
		    struct berth_error *err);

/*
 * berth_jcs_number - the ES6 Number.prototype.toString() form of @d into
 * @buf (at least 32 bytes).  Returns 0, or -1 with @err filled (EINVAL: NaN
 * or infinite).
 */
int berth_jcs_number(double d, char buf[32], struct berth_error *err);

#endif
