/* SPDX-License-Identifier: MIT */
/*
 * tls.c - the run's CA, leaf certificates and the broker's TLS contexts (tls.h).
 */
#include "tls.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

struct berth_tls_ca {
	EVP_PKEY *key;      /* the CA's */
	X509 *cert;         /* self-signed */
	EVP_PKEY *leaf_key; /* every leaf's */
};

/* What the SNI check of one accepted connection needs (SSL ex data). */
struct sni_state {
	const char *host;
	int refused;
	char sent[256];
};

static int sni_index = -1;
static pthread_once_t sni_once = PTHREAD_ONCE_INIT;

static void sni_state_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp)
{
	(void)parent;
	(void)ad;
	(void)idx;
	(void)argl;
	(void)argp;
	free(ptr);
}

static void sni_index_init(void)
{
	sni_index = SSL_get_ex_new_index(0, NULL, NULL, NULL, sni_state_free);
}

static int ossl_err(struct berth_error *err, const char *what)
{
	unsigned long e = ERR_get_error();
	char buf[256] = "";

	if (e != 0)
		ERR_error_string_n(e, buf, sizeof buf);
	ERR_clear_error();
	return berth_err(err, EIO, "%s%s%s", what, buf[0] ? ": " : "", buf);
}

static int add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;

	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
	if ((ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value)) == NULL)
		return -1;
	int r = X509_add_ext(cert, ext, -1);
	X509_EXTENSION_free(ext);
	return r == 1 ? 0 : -1;
}

/* A certificate for @pub with a random 128-bit serial, valid from an hour ago for @secs seconds. */
static X509 *cert_new(EVP_PKEY *pub, const char *cn, long secs)
{
	X509 *c = X509_new();
	unsigned char serial[16];
	BIGNUM *bn = NULL;
	X509_NAME *name;

	if (c == NULL || RAND_bytes(serial, sizeof serial) != 1)
		goto fail;
	serial[0] &= 0x7f; /* positive */
	if ((bn = BN_bin2bn(serial, sizeof serial, NULL)) == NULL ||
	    BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(c)) == NULL)
		goto fail;
	BN_free(bn);
	bn = NULL;
	if (X509_set_version(c, 2) != 1 || X509_gmtime_adj(X509_getm_notBefore(c), -3600) == NULL ||
	    X509_gmtime_adj(X509_getm_notAfter(c), secs) == NULL || X509_set_pubkey(c, pub) != 1 ||
	    (name = X509_get_subject_name(c)) == NULL ||
	    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0) != 1)
		goto fail;
	return c;
fail:
	BN_free(bn);
	X509_free(c);
	return NULL;
}

struct berth_tls_ca *berth_tls_ca_new(const char *const *hosts, size_t n, struct berth_error *err)
{
	struct berth_tls_ca *ca = calloc(1, sizeof *ca);
	char cn[64], *nc = NULL;
	unsigned char id[6];
	size_t nclen = 16;

	if (ca == NULL)
		return berth_err(err, ENOMEM, "out of memory"), NULL;
	if (n == 0 || n > 64) {
		free(ca);
		return berth_err(err, EINVAL, "a run's CA is for 1 to 64 host names, not %zu", n), NULL;
	}
	for (size_t i = 0; i < n; i++)
		nclen += strlen(hosts[i]) + 16;
	if ((nc = malloc(nclen)) == NULL) {
		free(ca);
		return berth_err(err, ENOMEM, "out of memory"), NULL;
	}
	strcpy(nc, "critical");
	for (size_t i = 0; i < n; i++) {
		strcat(nc, ",permitted;DNS:");
		strcat(nc, hosts[i]);
	}
	if (RAND_bytes(id, sizeof id) != 1)
		goto fail;
	snprintf(cn, sizeof cn, "berth run CA %02x%02x%02x%02x%02x%02x", id[0], id[1], id[2], id[3], id[4],
		 id[5]);
	if ((ca->key = EVP_EC_gen("P-256")) == NULL || (ca->leaf_key = EVP_EC_gen("P-256")) == NULL ||
	    (ca->cert = cert_new(ca->key, cn, (long)BERTH_TLS_CA_DAYS * 86400)) == NULL ||
	    X509_set_issuer_name(ca->cert, X509_get_subject_name(ca->cert)) != 1 ||
	    add_ext(ca->cert, ca->cert, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") < 0 ||
	    add_ext(ca->cert, ca->cert, NID_key_usage, "critical,keyCertSign,cRLSign") < 0 ||
	    add_ext(ca->cert, ca->cert, NID_subject_key_identifier, "hash") < 0 ||
	    add_ext(ca->cert, ca->cert, NID_name_constraints, nc) < 0 ||
	    X509_sign(ca->cert, ca->key, EVP_sha256()) <= 0)
		goto fail;
	free(nc);
	return ca;
fail:
	free(nc);
	ossl_err(err, "cannot make the run's certificate authority");
	berth_tls_ca_free(ca);
	return NULL;
}

void berth_tls_ca_free(struct berth_tls_ca *ca)
{
	if (ca == NULL)
		return;
	EVP_PKEY_free(ca->key);
	EVP_PKEY_free(ca->leaf_key);
	X509_free(ca->cert);
	free(ca);
}

char *berth_tls_ca_pem(const struct berth_tls_ca *ca, size_t *len, struct berth_error *err)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *data, *out = NULL;
	long n;

	if (b != NULL && PEM_write_bio_X509(b, ca->cert) == 1 && (n = BIO_get_mem_data(b, &data)) > 0 &&
	    (out = malloc((size_t)n + 1)) != NULL) {
		memcpy(out, data, (size_t)n);
		out[n] = '\0';
		*len = (size_t)n;
	}
	BIO_free(b);
	if (out == NULL)
		berth_err(err, ENOMEM, "cannot write the run's CA certificate");
	return out;
}

/* A leaf for @host signed by @ca (NULL when OpenSSL fails). */
static X509 *leaf_new(struct berth_tls_ca *ca, const char *host)
{
	char san[300];
	X509 *c = cert_new(ca->leaf_key, host, (long)BERTH_TLS_LEAF_HOURS * 3600);

	snprintf(san, sizeof san, "DNS:%s", host);
	if (c == NULL || X509_set_issuer_name(c, X509_get_subject_name(ca->cert)) != 1 ||
	    add_ext(c, ca->cert, NID_basic_constraints, "critical,CA:FALSE") < 0 ||
	    add_ext(c, ca->cert, NID_key_usage, "critical,digitalSignature") < 0 ||
	    add_ext(c, ca->cert, NID_ext_key_usage, "serverAuth") < 0 ||
	    add_ext(c, ca->cert, NID_subject_alt_name, san) < 0 ||
	    add_ext(c, ca->cert, NID_authority_key_identifier, "keyid:always") < 0 ||
	    X509_sign(c, ca->key, EVP_sha256()) <= 0) {
		X509_free(c);
		return NULL;
	}
	return c;
}

static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
		       unsigned int inlen, void *arg)
{
	(void)ssl;
	(void)arg;
	for (unsigned i = 0; i < inlen;) {
		unsigned l = in[i];
		if (i + 1 + l > inlen)
			break;
		if (l == 8 && memcmp(in + i + 1, "http/1.1", 8) == 0) {
			*out = in + i + 1;
			*outlen = 8;
			return SSL_TLSEXT_ERR_OK;
		}
		i += 1 + l;
	}
	return SSL_TLSEXT_ERR_NOACK; /* no ALPN: HTTP/1.1 (a client offering h2 only gets none) */
}

static int sni_check(SSL *ssl, int *alert, void *arg)
{
	struct sni_state *s = SSL_get_ex_data(ssl, sni_index);
	const char *name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
	size_t hl;

	(void)arg;
	if (s == NULL)
		return SSL_TLSEXT_ERR_ALERT_FATAL;
	snprintf(s->sent, sizeof s->sent, "%s", name != NULL ? name : "");
	hl = strlen(s->host);
	/* one trailing dot is the same name */
	if (name != NULL && strncasecmp(name, s->host, hl) == 0 &&
	    (name[hl] == '\0' || (name[hl] == '.' && name[hl + 1] == '\0')))
		return SSL_TLSEXT_ERR_OK;
	s->refused = 1;
	*alert = SSL_AD_UNRECOGNIZED_NAME;
	return SSL_TLSEXT_ERR_ALERT_FATAL;
}

SSL_CTX *berth_tls_server_ctx(struct berth_error *err)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());

	pthread_once(&sni_once, sni_index_init);
	if (ctx == NULL || sni_index < 0 || SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) {
		SSL_CTX_free(ctx);
		return ossl_err(err, "cannot make the broker's TLS server context"), NULL;
	}
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_NO_TICKET);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_tlsext_servername_callback(ctx, sni_check);
	SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
	return ctx;
}

int berth_tls_server_prepare(SSL *ssl, struct berth_tls_ca *ca, const char *host, struct berth_error *err)
{
	struct sni_state *s = calloc(1, sizeof *s);
	X509 *leaf = leaf_new(ca, host);
	int ok = s != NULL && leaf != NULL && SSL_use_certificate(ssl, leaf) == 1 &&
		 SSL_use_PrivateKey(ssl, ca->leaf_key) == 1 && SSL_set_ex_data(ssl, sni_index, s) == 1;

	X509_free(leaf); /* the SSL holds its own reference */
	if (!ok) {
		free(s);
		return ossl_err(err, "cannot present a certificate to the sandbox");
	}
	s->host = host;
	return 0;
}

int berth_tls_sni_refused(SSL *ssl, const char **sni)
{
	struct sni_state *s = sni_index >= 0 ? SSL_get_ex_data(ssl, sni_index) : NULL;

	*sni = s != NULL ? s->sent : "";
	return s != NULL && s->refused;
}

SSL_CTX *berth_tls_client_ctx(struct berth_error *err)
{
	static const unsigned char alpn[] = "\x08http/1.1";
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());

	if (ctx == NULL || SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_set_default_verify_paths(ctx) != 1 ||
	    SSL_CTX_set_alpn_protos(ctx, alpn, sizeof alpn - 1) != 0) {
		SSL_CTX_free(ctx);
		return ossl_err(err, "cannot make the broker's TLS client context"), NULL;
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
	return ctx;
}

int berth_tls_client_prepare(SSL *ssl, const char *host, struct berth_error *err)
{
	if (SSL_set_tlsext_host_name(ssl, host) != 1 || SSL_set1_host(ssl, host) != 1)
		return ossl_err(err, "cannot set the upstream's name");
	SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	return 0;
}
