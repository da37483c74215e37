/* SPDX-License-Identifier: MIT */
/*
 * sign.h - Ed25519 signatures (RFC 8032) with berth's host key, through
 * libsodium (crypto_sign_ed25519_*).  Not OpenSSL: loading and initialising
 * libcrypto's Ed25519 (dlopen, relocations, the OpenSSL 3 provider set-up on
 * the first key) cost about 9 M instructions at every `berth run`, libsodium's
 * key set-up and one signature about 0.2 M (docs/benchmarks.md).  The key
 * files are read and written here without any library: Ed25519 PKCS #8 and
 * SubjectPublicKeyInfo DER have fixed prefixes (RFC 8410 section 10).
 *
 * The host key lives in $XDG_CONFIG_HOME/berth/keys/ (when XDG_CONFIG_HOME is
 * unset or not absolute: $HOME/.config/berth/keys/, HOME falling back to the
 * passwd entry, XDG Base Directory
 * Specification 0.8):
 *   host-ed25519.pem      the private key, PKCS #8 PEM ("PRIVATE KEY"), 0600
 *   host-ed25519.pub.pem  the public key, SubjectPublicKeyInfo PEM ("PUBLIC
 *                         KEY", RFC 8410), 0644
 * The directory is created 0700 (and its parents 0700 when missing).  Both
 * files are standard, so a signature over a message file checks without berth:
 *   openssl pkeyutl -verify -pubin -inkey host-ed25519.pub.pem -rawin \
 *           -in MSG -sigfile SIG
 */
#ifndef BERTH_SIGN_H
#define BERTH_SIGN_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "hex.h" /* berth_hex, berth_unhex: here for the callers that found them here */

#define BERTH_HOSTKEY_PRIV_FILE "host-ed25519.pem"
#define BERTH_HOSTKEY_PUB_FILE "host-ed25519.pub.pem"

struct berth_hostkey {
	unsigned char pub[32];  /* Ed25519 public key, raw (RFC 8032 5.1.5) */
	unsigned char seed[32]; /* private key, raw 32-byte seed; wiped by berth_hostkey_clear */
	char dir[4096];         /* the key directory it was loaded from */
	bool loaded;
	unsigned char sk[64]; /* libsodium's secret key: seed || pub; wiped by berth_hostkey_clear */
};

/*
 * berth_hostkey_dir - the key directory path ($XDG_CONFIG_HOME/berth/keys or
 * $HOME/.config/berth/keys) into @buf of @size bytes.
 * Returns 0, or -1 with @err filled: EINVAL when neither XDG_CONFIG_HOME nor
 * HOME is an absolute path; ENAMETOOLONG when it does not fit.
 */
int berth_hostkey_dir(char *buf, size_t size, struct berth_error *err);

/*
 * berth_mkdirs_private - `mkdir -p` of @path (absolute), mode 0700 for every
 * directory it creates (the key directory here, the audit directory in
 * src/audit).  Existing directories are left as they are.
 * Returns 0, or -1 with @err filled (ENAMETOOLONG beyond 4095 bytes, or the
 * mkdir(2) error naming the directory).
 */
int berth_mkdirs_private(const char *path, struct berth_error *err);

/*
 * berth_hostkey_load - load the host key from berth_hostkey_dir(), or from
 * @dir when berth_hostkey_load_dir is used.
 * @create: when the private key file does not exist, generate a key
 *          (libsodium's randombytes_buf, i.e. getrandom(2)), write both files (O_EXCL, fsync, then
 *          rename(2) into place, so a concurrent first use ends with one key)
 *          and load it.
 * Returns 0 with @k filled, or -1 with @err filled:
 *   ENOENT   no key and @create is false;
 *   EPERM    the private key file is not a regular file owned by the caller
 *            or is readable/writable by group or others (mode must be 0600
 *            or stricter), or the directory is writable by others;
 *   EINVAL   the file is not an Ed25519 PKCS #8 PEM key, or the public key
 *            file does not match the private key;
 *   ELIBACC  libsodium failed to initialise (sodium_init);
 *   other    errno of mkdir/open/write/fsync/rename (EACCES, ENOSPC, EIO...).
 * On failure @k holds no key material.
 */
int berth_hostkey_load(struct berth_hostkey *k, bool create, struct berth_error *err);
int berth_hostkey_load_dir(struct berth_hostkey *k, const char *dir, bool create, struct berth_error *err);

/*
 * berth_sign - Ed25519 signature (RFC 8032 "pure" Ed25519, no prehash) of
 * the @len bytes at @msg with @k, into @sig.
 * Returns 0, or -1 with @err filled (EINVAL: @k not loaded; ELIBACC:
 * sodium_init failed).  Thread-safe.
 */
int berth_sign(const struct berth_hostkey *k, const void *msg, size_t len, unsigned char sig[64],
	       struct berth_error *err);

/*
 * berth_verify - check an Ed25519 signature @sig over @msg with the raw
 * public key @pub.
 * Returns 0 when the signature is valid; -1 otherwise, with @err filled:
 *   EBADMSG  the signature does not verify (the message says so), which
 *            includes a @pub that is not a usable Ed25519 public key:
 *            libsodium refuses small-order public keys and non-canonical
 *            signatures (s >= L, RFC 8032 5.1.7), as RFC 8032 allows;
 *   ELIBACC  sodium_init failed.
 * Thread-safe.
 */
int berth_verify(const unsigned char pub[32], const void *msg, size_t len, const unsigned char sig[64],
		 struct berth_error *err);

/*
 * berth_pubkey_load_pem - read a SubjectPublicKeyInfo PEM Ed25519 public key
 * (such as host-ed25519.pub.pem) from @path into @pub.
 * Returns 0, or -1 with @err filled (errno of open/read; EINVAL: not an
 * Ed25519 public key PEM).
 */
int berth_pubkey_load_pem(const char *path, unsigned char pub[32], struct berth_error *err);

/* berth_hostkey_clear - wipe the key material in @k (explicit_bzero). */
void berth_hostkey_clear(struct berth_hostkey *k);

#endif
