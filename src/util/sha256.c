/* SPDX-License-Identifier: MIT */

#include "sha256.h"

#include <dlfcn.h>
#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef BERTH_LIBCRYPTO_SONAME
#define BERTH_LIBCRYPTO_SONAME "libcrypto.so.3"
#endif

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
	if (init == NULL || lib.digest == NULL || lib.sha256 == NULL || lib.ctx_new == NULL || lib.ctx_free == NULL ||
	    lib.init == NULL || lib.update == NULL || lib.final == NULL) {
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

static void to_hex(const unsigned char *md, unsigned int n, char hex[65])
{
	static const char digits[] = "0123456789abcdef";

	for (unsigned int i = 0; i < n; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 0xf];
	}
	hex[2 * n] = '\0';
}

int berth_sha256_hex(const void *data, size_t len, char hex[65], struct berth_error *err)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	if (loaded(err) < 0)
		return -1;
	if (lib.digest(data, len, md, &n, lib.sha256(), NULL) != 1 || n != 32)
		return berth_err(err, EINVAL, "sha256 failed in libcrypto");
	to_hex(md, n, hex);
	return 0;
}

struct berth_sha256 {
	EVP_MD_CTX *ctx;
	bool failed;
};

struct berth_sha256 *berth_sha256_new(struct berth_error *err)
{
	struct berth_sha256 *c;

	if (loaded(err) < 0)
		return NULL;
	c = calloc(1, sizeof *c);
	if (c == NULL || (c->ctx = lib.ctx_new()) == NULL || lib.init(c->ctx, lib.sha256(), NULL) != 1) {
		if (c != NULL && c->ctx != NULL)
			lib.ctx_free(c->ctx);
		free(c);
		berth_err(err, ENOMEM, "cannot start a sha256 digest");
		return NULL;
	}
	return c;
}

int berth_sha256_update(struct berth_sha256 *c, const void *data, size_t len)
{
	if (!c->failed && lib.update(c->ctx, data, len) != 1)
		c->failed = true;
	return c->failed ? -1 : 0;
}

int berth_sha256_final(struct berth_sha256 *c, char hex[65], struct berth_error *err)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	bool ok = !c->failed && lib.final(c->ctx, md, &n) == 1 && n == 32;

	lib.ctx_free(c->ctx);
	free(c);
	if (!ok)
		return berth_err(err, EINVAL, "sha256 failed in libcrypto");
	to_hex(md, n, hex);
	return 0;
}
