/* SPDX-License-Identifier: MIT */
/*
 * test_cred.c - injected credentials' pure parts and TLS: the binding
 * grammar (src/policy/credential.c), the header rewrite and the Host check
 * (src/broker/cred.c), and the run's CA (src/broker/tls.c) in an in-memory
 * handshake: the leaf verifies for the bound host only, a wrong or missing
 * SNI is refused with unrecognized_name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "broker/cred.h"
#include "broker/tls.h"
#include "policy/credential.h"
#include "policy/flags.h"
#include "policy/policy.h"

/* ---- the binding grammar ------------------------------------------------- */

static void parses_to(const char *in, const char *canon)
{
	struct berth_credential c, d;
	char why[512] = "", text[BERTH_CRED_TEXT_MAX], again[BERTH_CRED_TEXT_MAX];

	assert_int_equal(berth_credential_parse(in, &c, why, sizeof why), 0);
	assert_int_equal(berth_credential_format(&c, text, sizeof text), 0);
	assert_string_equal(text, canon);
	/* the canonical text reads back to the same binding */
	assert_int_equal(berth_credential_parse(text, &d, why, sizeof why), 0);
	assert_int_equal(berth_credential_format(&d, again, sizeof again), 0);
	assert_string_equal(again, canon);
	berth_credential_clear(&c);
	berth_credential_clear(&d);
}

static void refused(const char *in, const char *why_part)
{
	struct berth_credential c;
	char why[512] = "";

	assert_int_equal(berth_credential_parse(in, &c, why, sizeof why), -1);
	if (strstr(why, why_part) == NULL)
		fail_msg("`%s`: reason `%s` lacks `%s`", in, why, why_part);
	assert_null(c.name);
	assert_null(c.host);
}

static void test_parse(void **state)
{
	struct berth_credential c;
	char why[512];

	(void)state;
	parses_to("GH=env:GH_TOKEN@api.github.com", "GH=env:GH_TOKEN@api.github.com:443/#bearer");
	parses_to("K=file:/home/u/.key@API.Example.COM.:8443/v1/#x-api-key",
		  "K=file:/home/u/.key@api.example.com:8443/v1/#x-api-key");
	parses_to("G=cmd:gh auth token --user me@github.com#basic",
		  "G=cmd:gh auth token --user me@github.com:443/#basic");
	parses_to("T=cmd:pass show a@b@h.example:1/x#header:X-Auth-Token",
		  "T=cmd:pass show a@b@h.example:1/x#header:X-Auth-Token");
	/* the split is at the last `@`: a command keeps its own */
	assert_int_equal(berth_credential_parse("A=cmd:echo x@y@z.example", &c, why, sizeof why), 0);
	assert_string_equal(c.source_arg, "echo x@y");
	assert_string_equal(c.host, "z.example");
	assert_int_equal(c.port, 443);
	assert_string_equal(c.prefix, "/");
	assert_string_equal(c.field, "Authorization");
	assert_int_equal(c.header, BERTH_CRED_BEARER);
	berth_credential_clear(&c);
	assert_int_equal(berth_credential_parse("A=env:V@h.example#x-api-key", &c, why, sizeof why), 0);
	assert_string_equal(c.field, "x-api-key");
	berth_credential_clear(&c);
	berth_credential_clear(&c); /* twice is safe */
}

static void test_parse_refused(void **state)
{
	(void)state;
	refused("GH", "write NAME=SOURCE@HOST");
	refused("=env:X@h.example", "invalid credential name");
	refused("1A=env:X@h.example", "invalid credential name");
	refused("A-B=env:X@h.example", "invalid credential name");
	refused("PATH=env:X@h.example", "is a variable berth sets inside");
	refused("HTTPS_PROXY=env:X@h.example", "is a variable berth sets inside");
	refused("SSL_CERT_FILE=env:X@h.example", "is a variable berth sets inside");
	refused("BERTH_X=env:X@h.example", "is a variable berth sets inside");
	refused("A=env:X", "names no destination");
	refused("A=env:X@", "names no host");
	refused("A=env:X@*.example.com", "bound to one host name");
	refused("A=env:X@10.0.0.5", "bound to one host name");
	refused("A=env:X@[2001:db8::1]", "invalid");
	refused("A=env:X@localhost", "invalid host");
	refused("A=env:X@h_x.example", "invalid host");
	refused("A=env:X@h.example:0", "invalid port");
	refused("A=env:X@h.example:65536", "invalid port");
	refused("A=env:X@h.example:08", "invalid port");
	refused("A=env:X@h.example:", "invalid port");
	refused("A=env:X@h.example/a b", "invalid path prefix");
	refused("A=env:X@h.example/a?b", "invalid path prefix");
	refused("A=env:X@h.example/a/../b", "a path the server resolves");
	refused("A=env:X@h.example/v1/.", "a path the server resolves");
	refused("A=env:X@h.example/%2e%2E/x", "a path the server resolves");
	refused("A=env:X@h.example/a%2fb", "a path the server resolves");
	refused("A=env:X@h.example/a\\b", "a path the server resolves");
	refused("A=env:X@h.example#bogus", "unknown credential header");
	refused("A=env:X@h.example#header:", "invalid header field");
	refused("A=env:X@h.example#header:a b", "invalid header field");
	refused("A=env:X@h.example#header:Host", "frames or routes the request");
	refused("A=env:X@h.example#header:content-length", "frames or routes the request");
	refused("A=env:X@h.example#header:Proxy-Authorization", "frames or routes the request");
	refused("A=vault:X@h.example", "unknown credential source");
	refused("A=env:1X@h.example", "invalid variable");
	refused("A=env:@h.example", "invalid variable");
	refused("A=file:rel/path@h.example", "not an absolute path");
	refused("A=cmd:  @h.example", "command is empty");
	refused("A=cmd:a\nb@h.example", "control character");
}

/* --credential in `berth run`'s options: the policy, the declared host, the
 * widening; the policy's canonical JSON reads back to the same JSON */
static void test_flag_and_policy_json(void **state)
{
	char *argv[] = {"run",
			"--credential",
			"GH=cmd:gh auth token@api.github.com/repos/#basic",
			"--credential",
			"K=env:KEY@api.example.com:8443",
			"--",
			"true",
			NULL};
	struct berth_run_opts o;
	struct berth_policy back;
	struct berth_error err = {0};

	(void)state;
	assert_int_equal(berth_run_parse(7, argv, getenv, &o, &err), 0);
	assert_int_equal(o.policy.n_credentials, 2);
	assert_int_equal(o.policy.network, BERTH_NET_PROXY);
	assert_int_equal(o.policy.n_allow_hosts, 2);
	assert_string_equal(o.policy.allow_hosts[0], "api.github.com:443");
	assert_string_equal(o.policy.allow_hosts[1], "api.example.com:8443");
	assert_int_equal(o.n_widenings, 2);
	assert_non_null(strstr(o.widenings[0],
			       "--credential GH: the secret from cmd `gh auth token` is sent to "
			       "https://api.github.com:443/repos/ in Authorization"));
	char *j = berth_policy_to_json(&o.policy, false, &err);
	assert_non_null(j);
	assert_non_null(strstr(j, "\"credentials\":[\"GH=cmd:gh auth token@api.github.com:443/repos/#basic\","
				  "\"K=env:KEY@api.example.com:8443/#bearer\"]"));
	berth_policy_init(&back);
	assert_int_equal(berth_policy_from_json(j, strlen(j), &back, &err), 0);
	char *j2 = berth_policy_to_json(&back, false, &err);
	assert_non_null(j2);
	assert_string_equal(j, j2);
	free(j);
	free(j2);
	berth_policy_free(&back);
	berth_run_opts_free(&o);

	/* the same name twice; a credential's name given to --env too */
	char *twice[] = {
	    "run", "--credential", "A=env:X@a.example", "--credential", "A=env:Y@b.example", "--", "true",
	    NULL};
	assert_int_equal(berth_run_parse(7, twice, getenv, &o, &err), -1);
	assert_int_equal(err.status, 2);
	assert_non_null(strstr(err.msg, "--credential `A` is given twice"));
	berth_run_opts_free(&o);
	char *both[] = {"run", "--credential", "A=env:X@a.example", "--env", "A=1", "--", "true", NULL};
	assert_int_equal(berth_run_parse(7, both, getenv, &o, &err), -1);
	assert_non_null(strstr(err.msg, "--credential A and --env A"));
	berth_run_opts_free(&o);
	char *none[] = {"run", "--network", "none", "--credential", "A=env:X@a.example", "--", "true", NULL};
	assert_int_equal(berth_run_parse(7, none, getenv, &o, &err), -1);
	assert_int_equal(err.status, 2);
	berth_run_opts_free(&o);
}

/* ---- the rewrite --------------------------------------------------------- */

static const char PH[] = "berth-cred-T-0123456789abcdef0123456789abcdef";
static const char SECRET[] = "s3cr3t-value";

static struct berth_cred_inject inj(enum berth_cred_header h, const char *field, const char *prefix)
{
	return (struct berth_cred_inject){.header = h,
					  .field = field,
					  .prefix = prefix,
					  .placeholder = PH,
					  .secret = SECRET,
					  .secret_len = strlen(SECRET)};
}

/* @head rewritten with @in; the length query and the write agree */
static char *rw(const char *head, const char *path, const struct berth_cred_inject *in, size_t n,
		uint32_t *used)
{
	uint32_t u2 = 0;
	long k = berth_cred_rewrite(head, strlen(head), path, strlen(path), in, n, NULL, 0, used);
	assert_true(k >= 0);
	char *out = malloc((size_t)k + 1);
	assert_non_null(out);
	assert_int_equal(
	    berth_cred_rewrite(head, strlen(head), path, strlen(path), in, n, out, (size_t)k + 1, &u2), k);
	assert_int_equal(*used, u2);
	assert_int_equal(strlen(out), (size_t)k);
	return out;
}

static void test_rewrite_bearer(void **state)
{
	struct berth_cred_inject b = inj(BERTH_CRED_BEARER, "Authorization", "/");
	char head[1024];
	uint32_t used;
	char *o;

	(void)state;
	snprintf(head, sizeof head,
		 "GET /x?t=%s HTTP/1.1\r\nHost: h.example\r\nauthorization: bearer %s\r\nX-Echo: %s\r\n"
		 "Connection: close\r\n\r\n",
		 PH, PH, PH);
	o = rw(head, "/x", &b, 1, &used);
	assert_int_equal(used, 1);
	/* the bound field only: the request line and another field keep the placeholder */
	char want[1024];
	snprintf(want, sizeof want,
		 "GET /x?t=%s HTTP/1.1\r\nHost: h.example\r\nauthorization: bearer %s\r\nX-Echo: %s\r\n"
		 "Connection: close\r\n\r\n",
		 PH, SECRET, PH);
	assert_string_equal(o, want);
	free(o);
	/* no Bearer scheme: nothing replaced */
	snprintf(head, sizeof head, "GET / HTTP/1.1\r\nAuthorization: Token %s\r\n\r\n", PH);
	o = rw(head, "/", &b, 1, &used);
	assert_int_equal(used, 0);
	assert_string_equal(o, head);
	free(o);
	/* no placeholder: the header as it was, nothing used */
	o = rw("GET / HTTP/1.1\r\nAuthorization: Bearer other\r\n\r\n", "/", &b, 1, &used);
	assert_int_equal(used, 0);
	assert_string_equal(o, "GET / HTTP/1.1\r\nAuthorization: Bearer other\r\n\r\n");
	free(o);
}

static void test_rewrite_basic(void **state)
{
	struct berth_cred_inject b = inj(BERTH_CRED_BASIC, "Authorization", "/");
	uint32_t used;
	char *o;
	/* base64("x-access-token:" PH) and base64("x-access-token:s3cr3t-value") */
	const char *in =
	    "GET / HTTP/1.1\r\nAuthorization: Basic "
	    "eC1hY2Nlc3MtdG9rZW46YmVydGgtY3JlZC1ULTAxMjM0NTY3ODlhYmNkZWYwMTIzNDU2Nzg5YWJjZGVm\r\n\r\n";

	(void)state;
	o = rw(in, "/", &b, 1, &used);
	assert_int_equal(used, 1);
	assert_string_equal(
	    o, "GET / HTTP/1.1\r\nAuthorization: Basic eC1hY2Nlc3MtdG9rZW46czNjcjN0LXZhbHVl\r\n\r\n");
	free(o);
	/* base64 of text without the placeholder: untouched */
	o = rw("GET / HTTP/1.1\r\nAuthorization: Basic dTpw\r\n\r\n", "/", &b, 1, &used);
	assert_int_equal(used, 0);
	assert_string_equal(o, "GET / HTTP/1.1\r\nAuthorization: Basic dTpw\r\n\r\n");
	free(o);
	/* not base64: refused */
	const char *bad = "GET / HTTP/1.1\r\nAuthorization: Basic ***\r\n\r\n";
	assert_int_equal(berth_cred_rewrite(bad, strlen(bad), "/", 1, &b, 1, NULL, 0, &used), -1);
}

static void test_rewrite_fields_and_prefix(void **state)
{
	struct berth_cred_inject v[2] = {inj(BERTH_CRED_X_API_KEY, "x-api-key", "/v1/"),
					 inj(BERTH_CRED_HEADER, "X-Auth", "/")};
	char head[1024], want[1024];
	uint32_t used;
	char *o;

	(void)state;
	snprintf(head, sizeof head, "POST /v1/m HTTP/1.1\r\nX-API-Key: %s\r\nx-auth: a%sb%s\r\n\r\n", PH, PH,
		 PH);
	o = rw(head, "/v1/m", v, 2, &used);
	assert_int_equal(used, 3);
	snprintf(want, sizeof want, "POST /v1/m HTTP/1.1\r\nX-API-Key: %s\r\nx-auth: a%sb%s\r\n\r\n", SECRET,
		 SECRET, SECRET);
	assert_string_equal(o, want);
	free(o);
	/* outside /v1/: only the binding for every path applies */
	o = rw(head, "/v2/m", v, 2, &used);
	assert_int_equal(used, 2);
	snprintf(want, sizeof want, "POST /v1/m HTTP/1.1\r\nX-API-Key: %s\r\nx-auth: a%sb%s\r\n\r\n", PH,
		 SECRET, SECRET);
	assert_string_equal(o, want);
	free(o);
	/* a prefix is a prefix of bytes: /v1 does not match /v1/ */
	o = rw(head, "/v1", v, 1, &used);
	assert_int_equal(used, 0);
	free(o);
}

/* A path that a server normalizes out of the prefix (dot segments, an
 * encoded or backward slash) does not get the secret: the prefix is the
 * binding's narrowing, and what a server serves for /v1/../headers is /headers. */
static void test_rewrite_prefix_not_escaped(void **state)
{
	struct berth_cred_inject b = inj(BERTH_CRED_BEARER, "Authorization", "/v1/");
	const char *escape[] = {
	    "/v1/../headers",      "/v1/..",           "/v1/%2e%2e/headers",  "/v1/.%2E/headers",
	    "/v1/%2E./headers",    "/v1/./../headers", "/v1/x/../../headers", "/v1/..%2fheaders",
	    "/v1/%2F..%2Fheaders", "/v1/..\\headers",  "/v1/%5c..%5cheaders", "/v1/a/..?x=1"};
	const char *fine[] = {"/v1/m", "/v1/..x/m", "/v1/x..", "/v1/.well/m", "/v1/m?p=/../x", "/v1/%2e%2ex"};
	char head[1024];
	uint32_t used;
	char *o;

	(void)state;
	snprintf(head, sizeof head, "GET / HTTP/1.1\r\nAuthorization: Bearer %s\r\n\r\n", PH);
	for (size_t i = 0; i < sizeof escape / sizeof escape[0]; i++) {
		o = rw(head, escape[i], &b, 1, &used);
		if (used != 0 || strstr(o, SECRET) != NULL)
			fail_msg("the secret went to `%s`", escape[i]);
		free(o);
	}
	for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++) {
		o = rw(head, fine[i], &b, 1, &used);
		if (used != 1 || strstr(o, SECRET) == NULL)
			fail_msg("the secret did not go to `%s`", fine[i]);
		free(o);
	}
	/* the binding for every path is not narrowed: nothing to escape */
	b.prefix = "/";
	o = rw(head, "/v1/../headers", &b, 1, &used);
	assert_int_equal(used, 1);
	free(o);
}

static void test_rewrite_bad_heads(void **state)
{
	struct berth_cred_inject b = inj(BERTH_CRED_BEARER, "Authorization", "/");
	const char *bad[] = {"",
			     "GET / HTTP/1.1\r\n",
			     "GET / HTTP/1.1\r\nNoColon\r\n\r\n",
			     "GET / HTTP/1.1\r\n\r\nextra",
			     "\r\n\r\n",
			     "GET / HTTP/1.1\nA: b\n\n"};
	uint32_t used;
	char small[8];

	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(berth_cred_rewrite(bad[i], strlen(bad[i]), "/", 1, &b, 1, NULL, 0, &used),
				 -1);
	/* a buffer too small: the length is still returned, nothing past it written */
	const char *h = "GET / HTTP/1.1\r\n\r\n";
	memset(small, 'x', sizeof small);
	assert_int_equal(berth_cred_rewrite(h, strlen(h), "/", 1, &b, 1, small, 4, &used), (long)strlen(h));
	assert_int_equal(small[4], 'x');
	/* more than 32 bindings */
	struct berth_cred_inject many[33];
	for (size_t i = 0; i < 33; i++)
		many[i] = b;
	assert_int_equal(berth_cred_rewrite(h, strlen(h), "/", 1, many, 33, NULL, 0, &used), -1);
}

static void test_host_matches(void **state)
{
	(void)state;
	assert_true(berth_cred_host_matches("h.example", 9, "h.example", 443));
	assert_true(berth_cred_host_matches("H.Example.", 10, "h.example", 443));
	assert_true(berth_cred_host_matches("h.example:443", 13, "h.example", 443));
	assert_true(berth_cred_host_matches("h.example:8443", 14, "h.example", 8443));
	assert_false(berth_cred_host_matches("h.example", 9, "h.example", 8443));
	assert_false(berth_cred_host_matches("h.example:444", 13, "h.example", 443));
	assert_false(berth_cred_host_matches("h.example.evil", 14, "h.example", 443));
	assert_false(berth_cred_host_matches("xh.example", 10, "h.example", 443));
	assert_false(berth_cred_host_matches("h.exampl", 8, "h.example", 443));
	assert_false(berth_cred_host_matches("h.example:", 10, "h.example", 443));
	assert_false(berth_cred_host_matches("h.example:4a3", 13, "h.example", 443));
	assert_false(berth_cred_host_matches("h.example:0443", 14, "h.example", 443));
	assert_false(berth_cred_host_matches("", 0, "h.example", 443));
}

/* ---- the run's CA, in an in-memory handshake ---------------------------- */

/* Handshake a client (trusting only @ca, checking @host, sending @sni) with a
 * server prepared for @bound; returns 1 when both ends finished, 0 when not,
 * *@sni_refused the server's view. */
static int handshake(struct berth_tls_ca *ca, const char *bound, const char *sni, const char *host,
		     int *sni_refused)
{
	struct berth_error err = {0};
	SSL_CTX *sctx = berth_tls_server_ctx(&err), *cctx = SSL_CTX_new(TLS_client_method());
	size_t len;
	char *pem = berth_tls_ca_pem(ca, &len, &err);
	BIO *pb = BIO_new_mem_buf(pem, (int)len), *b1 = NULL, *b2 = NULL;
	X509 *cert = PEM_read_bio_X509(pb, NULL, NULL, NULL);
	const char *sent;

	assert_non_null(sctx);
	assert_non_null(cert);
	X509_STORE_add_cert(SSL_CTX_get_cert_store(cctx), cert);
	SSL_CTX_set_verify(cctx, SSL_VERIFY_PEER, NULL);
	SSL *s = SSL_new(sctx), *c = SSL_new(cctx);
	assert_int_equal(berth_tls_server_prepare(s, ca, bound, &err), 0);
	if (sni != NULL)
		SSL_set_tlsext_host_name(c, sni);
	SSL_set1_host(c, host);
	BIO_new_bio_pair(&b1, 0, &b2, 0);
	SSL_set_bio(s, b1, b1);
	SSL_set_bio(c, b2, b2);
	SSL_set_accept_state(s);
	SSL_set_connect_state(c);
	int cd = 0, sd = 0;
	for (int i = 0; i < 20 && !(cd && sd); i++) {
		int r;
		if (!cd && (r = SSL_do_handshake(c)) == 1)
			cd = 1;
		else if (!cd && SSL_get_error(c, r) != SSL_ERROR_WANT_READ)
			break;
		if (!sd && (r = SSL_do_handshake(s)) == 1)
			sd = 1;
		else if (!sd && SSL_get_error(s, r) != SSL_ERROR_WANT_READ)
			break;
	}
	*sni_refused = berth_tls_sni_refused(s, &sent);
	ERR_clear_error();
	SSL_free(s);
	SSL_free(c);
	SSL_CTX_free(sctx);
	SSL_CTX_free(cctx);
	X509_free(cert);
	BIO_free(pb);
	free(pem);
	return cd && sd;
}

static void test_ca(void **state)
{
	const char *hosts[] = {"api.example.com", "git.example.org"};
	struct berth_error err = {0};
	struct berth_tls_ca *ca = berth_tls_ca_new(hosts, 2, &err);
	int refused = 0;
	size_t len = 0;

	(void)state;
	assert_non_null(ca);
	char *pem = berth_tls_ca_pem(ca, &len, &err);
	assert_non_null(pem);
	assert_int_equal(strncmp(pem, "-----BEGIN CERTIFICATE-----\n", 28), 0);
	assert_null(strstr(pem, "PRIVATE KEY")); /* the certificate, never the key */
	/* the CA: CA:TRUE with pathlen 0, name constraints for the bound hosts */
	BIO *b = BIO_new_mem_buf(pem, (int)len);
	X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
	assert_non_null(x);
	assert_int_equal(X509_check_ca(x), 1);
	NAME_CONSTRAINTS *nc = X509_get_ext_d2i(x, NID_name_constraints, NULL, NULL);
	assert_non_null(nc);
	assert_int_equal(sk_GENERAL_SUBTREE_num(nc->permittedSubtrees), 2);
	NAME_CONSTRAINTS_free(nc);
	X509_free(x);
	BIO_free(b);
	free(pem);

	assert_int_equal(handshake(ca, "api.example.com", "api.example.com", "api.example.com", &refused), 1);
	assert_int_equal(refused, 0);
	assert_int_equal(handshake(ca, "api.example.com", "API.example.com.", "api.example.com", &refused),
			 1);
	/* SNI of another name, or none: refused by the server */
	assert_int_equal(handshake(ca, "api.example.com", "evil.example.com", "evil.example.com", &refused),
			 0);
	assert_int_equal(refused, 1);
	assert_int_equal(handshake(ca, "api.example.com", NULL, "api.example.com", &refused), 0);
	assert_int_equal(refused, 1);
	/* the leaf does not verify for a name it is not for */
	assert_int_equal(handshake(ca, "api.example.com", "api.example.com", "other.example.com", &refused),
			 0);
	assert_int_equal(refused, 0);
	berth_tls_ca_free(ca);

	/* a CA for no host, or for too many, is refused */
	assert_null(berth_tls_ca_new(hosts, 0, &err));
	berth_tls_ca_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_parse_refused),
	    cmocka_unit_test(test_flag_and_policy_json),
	    cmocka_unit_test(test_rewrite_bearer),
	    cmocka_unit_test(test_rewrite_basic),
	    cmocka_unit_test(test_rewrite_fields_and_prefix),
	    cmocka_unit_test(test_rewrite_prefix_not_escaped),
	    cmocka_unit_test(test_rewrite_bad_heads),
	    cmocka_unit_test(test_host_matches),
	    cmocka_unit_test(test_ca),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
