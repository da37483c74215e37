/* SPDX-License-Identifier: MIT */
/*
 * sha256.h - SHA-256 (FIPS 180-4) through OpenSSL's libcrypto, loaded on
 * first use.
 *
 * berth links libcrypto's headers but opens the shared library with
 * dlopen(3) the first time a digest is needed: most runs never hash anything
 * before the command starts, and loading and initialising libcrypto costs
 * about half a millisecond of start-up latency (docs/benchmarks.md).
 */
#ifndef BERTH_SHA256_H
#define BERTH_SHA256_H

#include <stddef.h>

#include "error.h"

/*
 * berth_sha256_hex - SHA-256 of @len bytes at @data, as 64 lowercase hex
 * digits and a NUL in @hex.
 * Returns 0, or -1 with @err filled: libcrypto cannot be loaded (the message
 * names the library and dlerror(3)'s reason), or the digest failed.
 * Thread-safe.
 */
int berth_sha256_hex(const void *data, size_t len, char hex[65], struct berth_error *err);

/* An incremental SHA-256 (for data that is not in memory at once). */
struct berth_sha256;

/*
 * berth_sha256_new - start a digest.  Returns the context, or NULL with @err
 * filled (libcrypto cannot be loaded, ENOMEM).
 */
struct berth_sha256 *berth_sha256_new(struct berth_error *err);

/* berth_sha256_update - add @len bytes at @data.  Returns 0, or -1 (the
 * final call then fails too). */
int berth_sha256_update(struct berth_sha256 *c, const void *data, size_t len);

/*
 * berth_sha256_final - finish: 64 lowercase hex digits and a NUL in @hex, and
 * release @c (always, also on failure).  Returns 0, or -1 with @err filled.
 */
int berth_sha256_final(struct berth_sha256 *c, char hex[65], struct berth_error *err);

#endif
