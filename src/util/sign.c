/* SPDX-License-Identifier: MIT */

#include "sign.h"
#include "rundir.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <limits.h>
#include <pwd.h>
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "hex.h"
#include "sha256.h" /* berth_sodium_ready */
#include "sys.h"

/* ---- PEM for the two fixed Ed25519 DER forms (RFC 8410) ---- */

/* PKCS #8 OneAsymmetricKey v1, id-Ed25519, CurvePrivateKey of 32 bytes. */
static const unsigned char der_priv_prefix[16] = {0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06,
						  0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20};
/* SubjectPublicKeyInfo, id-Ed25519, BIT STRING of 32 bytes. */
static const unsigned char der_pub_prefix[12] = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03,
						 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void pem_encode(const char *label, const unsigned char *der, size_t n, char *out, size_t size)
{
	size_t o = (size_t)snprintf(out, size, "-----BEGIN %s-----\n", label);

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)der[i] << 16 | (i + 1 < n ? (uint32_t)der[i + 1] << 8 : 0) |
			     (i + 2 < n ? der[i + 2] : 0);

		out[o++] = b64[v >> 18 & 63];
		out[o++] = b64[v >> 12 & 63];
		out[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? b64[v & 63] : '=';
	}
	snprintf(out + o, size - o, "\n-----END %s-----\n", label);
}

/* Decode the base64 body of the first `-----BEGIN label-----` block. */
static int pem_decode(const char *text, const char *label, unsigned char *der, size_t cap, size_t *n)
{
	char begin[64], end[64];
	const char *p, *q;
	uint32_t acc = 0;
	int bits = 0, pad = 0;

	snprintf(begin, sizeof begin, "-----BEGIN %s-----", label);
	snprintf(end, sizeof end, "-----END %s-----", label);
	p = strstr(text, begin);
	if (p == NULL)
		return -1;
	p += strlen(begin);
	q = strstr(p, end);
	if (q == NULL)
		return -1;
	*n = 0;
	for (; p < q; p++) {
		const char *c;

		if (*p == '\n' || *p == '\r' || *p == ' ' || *p == '\t')
			continue;
		if (*p == '=') {
			pad++;
			continue;
		}
		if (pad || (c = strchr(b64, *p)) == NULL || *p == '\0')
			return -1;
		acc = acc << 6 | (uint32_t)(c - b64);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (*n >= cap)
				return -1;
			der[(*n)++] = (unsigned char)(acc >> bits & 0xff);
		}
	}
	return pad > 2 ? -1 : 0;
}

/* ---- key files ---- */

int berth_hostkey_dir(char *buf, size_t size, struct berth_error *err)
{
	if (berth_config_path("keys", buf, size) == 0)
		return 0;
	if (errno == EINVAL)
		return berth_err(
		    err, EINVAL,
		    "cannot place the host key: neither XDG_CONFIG_HOME nor HOME is an absolute path");
	return berth_err(err, ENAMETOOLONG, "host key directory path is too long");
}

int berth_mkdirs_private(const char *path, struct berth_error *err)
{
	char tmp[4096];
	size_t n = strlen(path);

	if (n >= sizeof tmp)
		return berth_err(err, ENAMETOOLONG, "path `%s` is too long", path);
	memcpy(tmp, path, n + 1);
	for (char *p = tmp + 1;; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;

			*p = '\0';
			if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
				return berth_err(err, errno, "cannot create directory `%s`", tmp);
			*p = c;
			if (c == '\0')
				break;
		}
	}
	return 0;
}

/* The public key and libsodium's 64-byte secret key (seed || public key)
 * from the 32-byte seed (RFC 8032 5.1.5). */
static void keypair_from_seed(struct berth_hostkey *k)
{
	crypto_sign_ed25519_seed_keypair(k->pub, k->sk, k->seed);
}

static int read_small(int dfd, const char *name, char *buf, size_t cap, struct stat *st,
		      struct berth_error *err)
{
	cleanup_close int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;

	if (fd < 0)
		return berth_err(err, errno, "cannot open `%s`", name);
	if (fstat(fd, st) < 0)
		return berth_err(err, errno, "cannot stat `%s`", name);
	if (!S_ISREG(st->st_mode))
		return berth_err(err, EPERM, "`%s` is not a regular file", name);
	n = read(fd, buf, cap - 1);
	if (n < 0)
		return berth_err(err, errno, "cannot read `%s`", name);
	buf[n] = '\0';
	return 0;
}

/* @name made whole (fsync'd, its directory too) or not at all.  link(2),
 * not rename(2): when two processes create the key at once, exactly one wins
 * (0) and the other loads the winner's key (1). */
static int write_new(int dfd, const char *dir, const char *name, const char *text, mode_t mode,
		     struct berth_error *err)
{
	char shown[PATH_MAX];

	snprintf(shown, sizeof shown, "%s/%s", dir, name);
	return berth_write_atomic_at(dfd, name, shown, text, strlen(text), mode,
				     BERTH_WRITE_DURABLE | BERTH_WRITE_EXCL | BERTH_WRITE_MODE, err);
}

static int write_pub(int dfd, const char *dir, const unsigned char pub[32], struct berth_error *err)
{
	unsigned char der[44];
	char pem[256];
	int rc;

	memcpy(der, der_pub_prefix, 12);
	memcpy(der + 12, pub, 32);
	pem_encode("PUBLIC KEY", der, sizeof der, pem, sizeof pem);
	rc = write_new(dfd, dir, BERTH_HOSTKEY_PUB_FILE, pem, 0644, err);
	return rc < 0 ? -1 : 0;
}

static int generate(struct berth_hostkey *k, int dfd, const char *dir, struct berth_error *err)
{
	unsigned char der[48];
	char pem[256];
	int rc;

	randombytes_buf(k->seed, 32); /* getrandom(2); libsodium aborts rather than return weak bytes */
	keypair_from_seed(k);
	memcpy(der, der_priv_prefix, 16);
	memcpy(der + 16, k->seed, 32);
	pem_encode("PRIVATE KEY", der, sizeof der, pem, sizeof pem);
	explicit_bzero(der, sizeof der);
	rc = write_new(dfd, dir, BERTH_HOSTKEY_PRIV_FILE, pem, 0600, err);
	explicit_bzero(pem, sizeof pem);
	if (rc != 0)
		return rc; /* 1: somebody else created it first */
	unlinkat(dfd, BERTH_HOSTKEY_PUB_FILE, 0);
	if (write_pub(dfd, dir, k->pub, err) < 0)
		return -1;
	if (fsync(dfd) < 0)
		return berth_err(err, errno, "cannot sync the key directory");
	return 0;
}

static int load_existing(struct berth_hostkey *k, int dfd, const char *dir, struct berth_error *err)
{
	char text[2048];
	unsigned char der[64], pub[32];
	size_t n = 0;
	struct stat st;
	int rc;

	if (read_small(dfd, BERTH_HOSTKEY_PRIV_FILE, text, sizeof text, &st, err) < 0)
		return berth_err_wrap(err, "host key `%s/%s`", k->dir, BERTH_HOSTKEY_PRIV_FILE);
	if (st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
		explicit_bzero(text, sizeof text);
		berth_err(err, EPERM,
			  "host key `%s/%s` is not owned by uid %u with mode 0600 (mode %04o, owner %u)",
			  k->dir, BERTH_HOSTKEY_PRIV_FILE, (unsigned)geteuid(),
			  (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
		return berth_err_hint(err, "`chmod 600 %s/%s`, or remove it to generate a new key", k->dir,
				      BERTH_HOSTKEY_PRIV_FILE);
	}
	rc = pem_decode(text, "PRIVATE KEY", der, sizeof der, &n);
	explicit_bzero(text, sizeof text);
	if (rc < 0 || n != 48 || memcmp(der, der_priv_prefix, 16) != 0) {
		explicit_bzero(der, sizeof der);
		return berth_err(err, EINVAL, "host key `%s/%s` is not an Ed25519 PKCS #8 PEM private key",
				 k->dir, BERTH_HOSTKEY_PRIV_FILE);
	}
	memcpy(k->seed, der + 16, 32);
	explicit_bzero(der, sizeof der);
	keypair_from_seed(k);
	/* The public file: rewrite it when missing (a crash during creation),
	 * refuse when it names another key. */
	if (read_small(dfd, BERTH_HOSTKEY_PUB_FILE, text, sizeof text, &st, err) < 0) {
		if (err->errnum != ENOENT)
			return berth_err_wrap(err, "host public key");
		/* Not an error any more: callers that look at the message (a run's
		 * audit job does) must not see it.  Also the case of two first
		 * uses at once, the other between its key and its public file. */
		berth_err_clear(err);
		return write_pub(dfd, dir, k->pub, err);
	}
	if (pem_decode(text, "PUBLIC KEY", der, sizeof der, &n) < 0 || n != 44 ||
	    memcmp(der, der_pub_prefix, 12) != 0)
		return berth_err(err, EINVAL, "`%s/%s` is not an Ed25519 public key PEM", k->dir,
				 BERTH_HOSTKEY_PUB_FILE);
	memcpy(pub, der + 12, 32);
	if (memcmp(pub, k->pub, 32) != 0)
		return berth_err(err, EINVAL, "`%s/%s` does not match the private key `%s`", k->dir,
				 BERTH_HOSTKEY_PUB_FILE, BERTH_HOSTKEY_PRIV_FILE);
	return 0;
}

int berth_hostkey_load_dir(struct berth_hostkey *k, const char *dir, bool create, struct berth_error *err)
{
	cleanup_close int dfd = -1;
	struct stat st;
	int rc;

	memset(k, 0, sizeof *k);
	if (berth_sodium_ready(err) < 0)
		return -1;
	if (strlen(dir) >= sizeof k->dir)
		return berth_err(err, ENAMETOOLONG, "host key directory path is too long");
	strcpy(k->dir, dir);
	if (create && berth_mkdirs_private(dir, err) < 0)
		return -1;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return berth_err(err, errno, "cannot open the host key directory `%s`", dir);
	if (fstat(dfd, &st) < 0)
		return berth_err(err, errno, "cannot stat `%s`", dir);
	if ((st.st_mode & 002) != 0 || st.st_uid != geteuid()) {
		berth_err(err, EPERM, "host key directory `%s` is writable by others or not owned by uid %u",
			  dir, (unsigned)geteuid());
		return berth_err_hint(err, "`chmod 700 %s`", dir);
	}
	for (int attempt = 0; attempt < 3; attempt++) {
		rc = faccessat(dfd, BERTH_HOSTKEY_PRIV_FILE, F_OK, AT_SYMLINK_NOFOLLOW);
		if (rc == 0 || !create) {
			if (rc < 0) {
				berth_err(err, ENOENT, "no host key in `%s`", dir);
				break;
			}
			rc = load_existing(k, dfd, dir, err);
		} else {
			rc = generate(k, dfd, dir, err);
			if (rc == 1)
				continue; /* lost the race: load the winner's key */
		}
		if (rc == 0) {
			k->loaded = true;
			return 0;
		}
		break;
	}
	explicit_bzero(k->seed, sizeof k->seed);
	explicit_bzero(k->sk, sizeof k->sk);
	return -1;
}

int berth_hostkey_load(struct berth_hostkey *k, bool create, struct berth_error *err)
{
	char dir[4096];

	if (berth_hostkey_dir(dir, sizeof dir, err) < 0)
		return -1;
	return berth_hostkey_load_dir(k, dir, create, err);
}

int berth_pubkey_load_pem(const char *path, unsigned char pub[32], struct berth_error *err)
{
	char text[4096];
	unsigned char der[64];
	size_t n = 0;
	struct stat st;

	if (read_small(AT_FDCWD, path, text, sizeof text, &st, err) < 0)
		return -1;
	if (pem_decode(text, "PUBLIC KEY", der, sizeof der, &n) < 0 || n != 44 ||
	    memcmp(der, der_pub_prefix, 12) != 0)
		return berth_err(err, EINVAL,
				 "`%s` is not an Ed25519 public key PEM (SubjectPublicKeyInfo, RFC 8410)",
				 path);
	memcpy(pub, der + 12, 32);
	return 0;
}

void berth_hostkey_clear(struct berth_hostkey *k)
{
	explicit_bzero(k, sizeof *k);
}

int berth_sign(const struct berth_hostkey *k, const void *msg, size_t len, unsigned char sig[64],
	       struct berth_error *err)
{
	if (berth_sodium_ready(err) < 0)
		return -1;
	if (!k->loaded)
		return berth_err(err, EINVAL, "no host key loaded");
	if (crypto_sign_ed25519_detached(sig, NULL, msg, len, k->sk) != 0)
		return berth_err(err, EINVAL, "Ed25519 signing failed in libsodium");
	return 0;
}

int berth_verify(const unsigned char pub[32], const void *msg, size_t len, const unsigned char sig[64],
		 struct berth_error *err)
{
	if (berth_sodium_ready(err) < 0)
		return -1;
	if (crypto_sign_ed25519_verify_detached(sig, msg, len, pub) == 0)
		return 0;
	return berth_err(err, EBADMSG, "the Ed25519 signature does not verify");
}
