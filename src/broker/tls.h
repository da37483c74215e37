/* SPDX-License-Identifier: MIT */
/*
 * tls.h - the TLS side of injected credentials (docs/credentials.md): the
 * certificate authority made for one run, the leaf certificates it signs for
 * the bound hosts, and the OpenSSL contexts the broker terminates and
 * re-encrypts with.
 *
 * The CA: an ECDSA P-256 key and a self-signed certificate made in memory
 * when the run starts (the key is never written anywhere); basicConstraints
 * CA:TRUE, pathlen 0, keyUsage keyCertSign, and nameConstraints permitting
 * the bound host names only, so that even a client that trusts it trusts it
 * for nothing else; valid from an hour before it was made for
 * BERTH_TLS_CA_DAYS days.  A leaf is minted for each terminated connection
 * (one P-256 key per CA), valid for BERTH_TLS_LEAF_HOURS hours, subjectAltName
 * the host, extendedKeyUsage serverAuth.
 *
 * Upstream, the real server's certificate is verified against the host's
 * trust store as OpenSSL finds it (its default paths: /etc/ssl/certs, or the
 * SSL_CERT_FILE / SSL_CERT_DIR of berth's environment) and its name against
 * the bound host (SSL_set1_host); TLS 1.2 or later on both sides; ALPN
 * http/1.1 only (the rewrite reads HTTP/1.1).
 */
#ifndef BERTH_BROKER_TLS_H
#define BERTH_BROKER_TLS_H

#include <stddef.h>

#include <openssl/ssl.h>

#include "../util/error.h"

#define BERTH_TLS_CA_DAYS 30
#define BERTH_TLS_LEAF_HOURS 24

struct berth_tls_ca;

/*
 * berth_tls_ca_new - a CA for the host names @hosts[0..n) (1 to 64 names).
 * Returns it, or NULL with @err filled (ENOMEM, or EIO naming the OpenSSL
 * step that failed).
 */
struct berth_tls_ca *berth_tls_ca_new(const char *const *hosts, size_t n, struct berth_error *err);

/* berth_tls_ca_free - release @ca (its keys are cleared by OpenSSL).  Safe on NULL. */
void berth_tls_ca_free(struct berth_tls_ca *ca);

/*
 * berth_tls_ca_pem - the CA's certificate (not its key) in PEM, malloc'd
 * and NUL-terminated, its length in *@len.  Returns NULL with @err (ENOMEM).
 */
char *berth_tls_ca_pem(const struct berth_tls_ca *ca, size_t *len, struct berth_error *err);

/*
 * berth_tls_server_ctx - the context the broker accepts sandbox clients
 * with.  Each SSL made from it must get berth_tls_server_prepare() before
 * its handshake.  Returns NULL with @err filled.
 */
SSL_CTX *berth_tls_server_ctx(struct berth_error *err);

/*
 * berth_tls_server_prepare - @ssl (from berth_tls_server_ctx()) will present
 * a fresh leaf for @host (kept by @ssl) and refuse a ClientHello whose SNI
 * is absent or not @host (alert unrecognized_name; @host must outlive the
 * handshake).  Returns 0, or -1 with @err filled.
 */
int berth_tls_server_prepare(SSL *ssl, struct berth_tls_ca *ca, const char *host, struct berth_error *err);

/*
 * berth_tls_sni_refused - whether @ssl's handshake failed because of its
 * SNI (absent or another name); *@sni the name the client sent, or "".
 */
int berth_tls_sni_refused(SSL *ssl, const char **sni);

/*
 * berth_tls_client_ctx - the context the broker connects to real servers
 * with (verification as above).  Returns NULL with @err filled.
 */
SSL_CTX *berth_tls_client_ctx(struct berth_error *err);

/*
 * berth_tls_client_prepare - @ssl will send SNI @host and accept only a
 * certificate for @host that chains to the trust store.  Returns 0, or -1
 * with @err filled.
 */
int berth_tls_client_prepare(SSL *ssl, const char *host, struct berth_error *err);

#endif
