/* SPDX-License-Identifier: MIT */
/*
 * sha256.h - SHA-256 (FIPS 180-4).
 *
 * Two libraries, chosen by size, because berth's hot paths hash either a few
 * hundred bytes or many megabytes:
 *   - up to BERTH_SHA256_SMALL_MAX bytes (audit records, the policy JSON, the
 *     seccomp program): libsodium's crypto_hash_sha256, linked, no set-up
 *     cost;
 *   - larger data (evidence files, app binaries, `berth audit verify`):
 *     OpenSSL's libcrypto, opened with dlopen(3) on first use for its SHA-NI
 *     speed (about 1.5 GB/s here against libsodium's 0.3 GB/s).
 * Loading and initialising libcrypto costs about 4 M instructions (over a
 * millisecond), which `berth run` no longer pays before its command starts
 * (docs/benchmarks.md, "Start latency and the audit trail").
 */
#ifndef BERTH_SHA256_H
#define BERTH_SHA256_H

#include <stddef.h>

#include "error.h"

/*
 * berth_sodium_ready - sodium_init() once per process (thread-safe).
 * Returns 0, or -1 with @err filled (ELIBACC) when libsodium cannot start.
 */
int berth_sodium_ready(struct berth_error *err);

/* Inputs up to this many bytes are hashed with libsodium. */
#define BERTH_SHA256_SMALL_MAX 65536

/*
 * berth_sha256_prefer_bulk - from now on, hash every input with libcrypto
 * whatever its size (for commands that hash many small buffers back to back,
 * such as `berth audit verify`, where throughput matters and the load cost is
 * paid once).  Process-wide and thread-safe; there is no way back.
 */
void berth_sha256_prefer_bulk(void);

/*
 * berth_sha256_hex - SHA-256 of @len bytes at @data, as 64 lowercase hex
 * digits and a NUL in @hex.
 * Returns 0, or -1 with @err filled: ELIBACC when the library the size calls
 * for cannot be loaded or initialised (the message names libcrypto and
 * dlerror(3)'s reason, or sodium_init), EINVAL when libcrypto's digest failed.
 * Thread-safe.
 */
int berth_sha256_hex(const void *data, size_t len, char hex[65], struct berth_error *err);

/* An incremental SHA-256 (for data that is not in memory at once). */
struct berth_sha256;

/*
 * berth_sha256_new - start a digest.  Returns the context, or NULL with @err
 * filled (ELIBACC: libsodium cannot be initialised, or libcrypto cannot be
 * loaded after berth_sha256_prefer_bulk(); ENOMEM).  The first
 * BERTH_SHA256_SMALL_MAX bytes are kept in memory; the digest moves to
 * libcrypto when more are added.
 */
struct berth_sha256 *berth_sha256_new(struct berth_error *err);

/* berth_sha256_update - add @len bytes at @data.  Returns 0, or -1 (out of
 * memory, or libcrypto cannot be loaded for a large digest); the final call
 * then fails too, with that reason. */
int berth_sha256_update(struct berth_sha256 *c, const void *data, size_t len);

/*
 * berth_sha256_final - finish: 64 lowercase hex digits and a NUL in @hex, and
 * release @c (always, also on failure).  Returns 0, or -1 with @err filled.
 */
int berth_sha256_final(struct berth_sha256 *c, char hex[65], struct berth_error *err);

#endif
