/* SPDX-License-Identifier: MIT */

#include "sha256.h"

#include <dlfcn.h>
#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>

#ifndef BERTH_LIBCRYPTO_SONAME
#define BERTH_LIBCRYPTO_SONAME "libcrypto.so.3"
#endif

static struct {
	int (*digest)(const void *, size_t, unsigned char *, unsigned int *, const EVP_MD *, ENGINE *);
	const EVP_MD *(*sha256)(void);
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
	if (init == NULL || lib.digest == NULL || lib.sha256 == NULL) {
		snprintf(lib.why, sizeof lib.why, "a symbol is missing");
		lib.digest = NULL;
		return;
	}
	/* berth only hashes: never read openssl.cnf. */
	init(OPENSSL_INIT_NO_LOAD_CONFIG, NULL);
}

int berth_sha256_hex(const void *data, size_t len, char hex[65], struct berth_error *err)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	pthread_once(&once, load);
	if (lib.digest == NULL) {
		berth_err(err, ELIBACC, "cannot load `%s`: %s", BERTH_LIBCRYPTO_SONAME, lib.why);
		return berth_err_hint(err, "install it: `apt-get install libssl3`");
	}
	if (lib.digest(data, len, md, &n, lib.sha256(), NULL) != 1 || n != 32)
		return berth_err(err, EINVAL, "sha256 failed in libcrypto");
	for (unsigned int i = 0; i < n; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 0xf];
	}
	hex[64] = '\0';
	return 0;
}
