/* SPDX-License-Identifier: MIT */

#include "sha256.h"

#include <dlfcn.h>
#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <sodium.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hex.h"

#ifndef BERTH_LIBCRYPTO_SONAME
#define BERTH_LIBCRYPTO_SONAME "libcrypto.so.3"
#endif

/* ---- libsodium: small buffers ---- */

static pthread_once_t sodium_once = PTHREAD_ONCE_INIT;
static bool sodium_ok;

static void sodium_load(void)
{
	sodium_ok = sodium_init() >= 0;
}

int berth_sodium_ready(struct berth_error *err)
{
	pthread_once(&sodium_once, sodium_load);
	return sodium_ok ? 0 : berth_err(err, ELIBACC, "libsodium failed to initialise (sodium_init)");
}

/* ---- libcrypto: bulk data, resolved on first use ---- */

static struct {
	int (*digest)(const void *, size_t, unsigned char *, unsigned int *, const EVP_MD *, ENGINE *);
	const EVP_MD *(*sha256)(void);
	EVP_MD_CTX *(*ctx_new)(void);
	void (*ctx_free)(EVP_MD_CTX *);
	int (*init)(EVP_MD_CTX *, const EVP_MD *, ENGINE *);
	int (*update)(EVP_MD_CTX *, const void *, size_t);
	int (*final)(EVP_MD_CTX *, unsigned char *, unsigned int *);
	char why[200];
} lib;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_bool bulk;

static void load(void)
{
	int (*init)(uint64_t, const OPENSSL_INIT_SETTINGS *);
	void *h = dlopen(BERTH_LIBCRYPTO_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (h == NULL) {
		snprintf(lib.why, sizeof lib.why, "%s", dlerror());
		return;
	}
	*(void **)&init = dlsym(h, "OPENSSL_init_crypto");
	*(void **)&lib.digest = dlsym(h, "EVP_Digest");
	*(void **)&lib.sha256 = dlsym(h, "EVP_sha256");
	*(void **)&lib.ctx_new = dlsym(h, "EVP_MD_CTX_new");
	*(void **)&lib.ctx_free = dlsym(h, "EVP_MD_CTX_free");
	*(void **)&lib.init = dlsym(h, "EVP_DigestInit_ex");
	*(void **)&lib.update = dlsym(h, "EVP_DigestUpdate");
	*(void **)&lib.final = dlsym(h, "EVP_DigestFinal_ex");
	if (init == NULL || lib.digest == NULL || lib.sha256 == NULL || lib.ctx_new == NULL ||
	    lib.ctx_free == NULL || lib.init == NULL || lib.update == NULL || lib.final == NULL) {
		snprintf(lib.why, sizeof lib.why, "a symbol is missing");
		lib.digest = NULL;
		return;
	}
	/* berth only hashes: never read openssl.cnf. */
	init(OPENSSL_INIT_NO_LOAD_CONFIG, NULL);
}

static int loaded(struct berth_error *err)
{
	pthread_once(&once, load);
	if (lib.digest != NULL)
		return 0;
	berth_err(err, ELIBACC, "cannot load `%s`: %s", BERTH_LIBCRYPTO_SONAME, lib.why);
	return berth_err_hint(err, "install it: `apt-get install libssl3`");
}

void berth_sha256_prefer_bulk(void)
{
	atomic_store(&bulk, true);
}

int berth_sha256_hex(const void *data, size_t len, char hex[65], struct berth_error *err)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	if (len <= BERTH_SHA256_SMALL_MAX && !atomic_load(&bulk)) {
		if (berth_sodium_ready(err) < 0)
			return -1;
		crypto_hash_sha256(md, data, len);
		berth_hex(md, crypto_hash_sha256_BYTES, hex);
		return 0;
	}
	if (loaded(err) < 0)
		return -1;
	if (lib.digest(data, len, md, &n, lib.sha256(), NULL) != 1 || n != 32)
		return berth_err(err, EINVAL, "sha256 failed in libcrypto");
	berth_hex(md, n, hex);
	return 0;
}

/*
 * Until BERTH_SHA256_SMALL_MAX bytes have been added the data is only kept
 * in @buf (libsodium hashes it at the end); past that, libcrypto takes over
 * with what was kept.  SHA-256 of the same bytes is the same whichever
 * library computes it.
 */
struct berth_sha256 {
	EVP_MD_CTX *ctx; /* NULL while the data is small */
	unsigned char *buf;
	size_t len, cap;
	bool failed;
	struct berth_error why; /* the reason when failed */
};

static int go_bulk(struct berth_sha256 *c)
{
	if (loaded(&c->why) < 0)
		return -1;
	c->ctx = lib.ctx_new();
	if (c->ctx == NULL || lib.init(c->ctx, lib.sha256(), NULL) != 1 ||
	    (c->len > 0 && lib.update(c->ctx, c->buf, c->len) != 1))
		return berth_err(&c->why, ENOMEM, "cannot continue a sha256 digest in libcrypto");
	free(c->buf);
	c->buf = NULL;
	c->len = c->cap = 0;
	return 0;
}

struct berth_sha256 *berth_sha256_new(struct berth_error *err)
{
	struct berth_sha256 *c;

	if (berth_sodium_ready(err) < 0)
		return NULL;
	c = calloc(1, sizeof *c);
	if (c == NULL) {
		berth_err(err, ENOMEM, "cannot start a sha256 digest");
		return NULL;
	}
	if (atomic_load(&bulk) && go_bulk(c) < 0) {
		*err = c->why;
		if (c->ctx != NULL)
			lib.ctx_free(c->ctx);
		free(c);
		return NULL;
	}
	return c;
}

int berth_sha256_update(struct berth_sha256 *c, const void *data, size_t len)
{
	if (c->failed)
		return -1;
	if (c->ctx == NULL && len > BERTH_SHA256_SMALL_MAX - c->len && go_bulk(c) < 0) {
		c->failed = true;
		return -1;
	}
	if (c->ctx != NULL) {
		if (lib.update(c->ctx, data, len) != 1) {
			berth_err(&c->why, EINVAL, "sha256 failed in libcrypto");
			c->failed = true;
		}
		return c->failed ? -1 : 0;
	}
	if (c->len + len > c->cap) {
		size_t cap = c->cap ? c->cap : 1024;
		unsigned char *p;

		while (cap < c->len + len)
			cap *= 2;
		if (cap > BERTH_SHA256_SMALL_MAX)
			cap = BERTH_SHA256_SMALL_MAX;
		p = realloc(c->buf, cap);
		if (p == NULL) {
			berth_err(&c->why, ENOMEM, "out of memory in a sha256 digest");
			c->failed = true;
			return -1;
		}
		c->buf = p;
		c->cap = cap;
	}
	if (len > 0)
		memcpy(c->buf + c->len, data, len);
	c->len += len;
	return 0;
}

int berth_sha256_final(struct berth_sha256 *c, char hex[65], struct berth_error *err)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 32;
	bool ok = !c->failed;

	if (ok && c->ctx != NULL)
		ok = lib.final(c->ctx, md, &n) == 1 && n == 32;
	else if (ok)
		crypto_hash_sha256(md, c->buf != NULL ? c->buf : md, c->len);
	if (c->ctx != NULL)
		lib.ctx_free(c->ctx);
	if (!ok) {
		if (c->failed)
			*err = c->why;
		else
			berth_err(err, EINVAL, "sha256 failed in libcrypto");
	}
	free(c->buf);
	free(c);
	if (!ok)
		return -1;
	berth_hex(md, n, hex);
	return 0;
}
