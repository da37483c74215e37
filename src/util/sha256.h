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

#endif
