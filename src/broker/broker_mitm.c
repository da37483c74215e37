/* SPDX-License-Identifier: MIT */
/*
 * broker_mitm.c - the RELAY state of a connection to a bound credential's
 * host (docs/credentials.md): TLS terminated with a leaf of the run's CA
 * (tls.h), the SNI checked against the connection's host, one request read
 * (origin-form, its Host checked too), its head rewritten with
 * berth_http_rewrite_origin() (Connection: close) and berth_cred_rewrite(),
 * and sent over a second TLS connection to the real server, whose
 * certificate is verified; the response goes back as it comes.  One request
 * per connection: what the client sends after the body is dropped.
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "../util/sys.h"
#include "broker_int.h"
#include "cred.h"
#include "../util/text.h"
#include "tls.h"

struct mitm {
	struct berth_http_parser http;
	bool head_done, closing, up_eof, responded;
	struct berth_body body;
	const struct berth_broker_cred *binds[BERTH_CRED_MAX];
	uint64_t uses[BERTH_CRED_MAX];
	size_t nb;
	size_t dropped;
	struct event *flush; /* closing: waits until the client's bytes left the socket's buffer */
	uint64_t flush_t0;
};

#define FLUSH_POLL_MS 20

/* Bytes not yet written to the client's socket: the TLS filter's and the socket's. */
static size_t client_pending(struct conn *c)
{
	struct bufferevent *u = bufferevent_get_underlying(c->cl);

	return evbuffer_get_length(bufferevent_get_output(c->cl)) +
	       (u != NULL ? evbuffer_get_length(bufferevent_get_output(u)) : 0);
}

static void flush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	struct mitm *m = c->mitm;
	struct timeval tv = {.tv_sec = 0, .tv_usec = FLUSH_POLL_MS * 1000};

	(void)fd;
	(void)what;
	if (client_pending(c) == 0 || berth_now_ms() - m->flush_t0 >= CLOSING_LINGER_MS) {
		berth_bk_conn_free(c);
		return;
	}
	evtimer_add(m->flush, &tv);
}

/* The connection ends once what the client is owed reached its socket (at most CLOSING_LINGER_MS). */
static void end_after_flush(struct conn *c)
{
	struct mitm *m = c->mitm;

	struct timeval now = {0, 0};

	/* never freed here: the callers go on with @c */
	if (m->flush == NULL && (m->flush = evtimer_new(c->b->base, flush_cb, c)) == NULL) {
		c->st = C_CLOSING; /* conn_timer frees it */
		berth_bk_timer_in(c, 0);
		return;
	}
	m->flush_t0 = berth_now_ms();
	evtimer_add(m->flush, &now);
}

bool berth_bk_mitm_wanted(const struct conn *c)
{
	if (c->dec.is_literal)
		return false;
	for (size_t i = 0; i < c->b->ncreds; i++)
		if (c->b->creds[i].port == c->dec.port && strcmp(c->b->creds[i].host, c->dec.host) == 0)
			return true;
	return false;
}

int berth_bk_mitm_init(struct berth_broker *b, struct berth_error *err)
{
	if (b->ncreds == 0)
		return 0;
	if (b->ca == NULL)
		return berth_err(err, EINVAL, "broker: credentials without a CA");
	if ((b->srv_ctx = berth_tls_server_ctx(err)) == NULL ||
	    (b->cli_ctx = berth_tls_client_ctx(err)) == NULL)
		return -1;
	return 0;
}

void berth_bk_mitm_fini(struct berth_broker *b)
{
	SSL_CTX_free(b->srv_ctx);
	SSL_CTX_free(b->cli_ctx);
	b->srv_ctx = b->cli_ctx = NULL;
}

static void refusal(struct conn *c, const char *why)
{
	char hp[BERTH_HOST_NAME_MAX + 16], text[BERTH_HOST_REASON_MAX];

	berth_bk_host_port(c, hp, sizeof hp);
	snprintf(text, sizeof text, "%s (%s)", hp, why);
	berth_bk_remember_refusal(c->b, text, false);
	berth_bk_stat_add(c->b, &c->b->st.refused, 1);
}

/* An HTTP error over the client's TLS, then the end of the connection. */
static void answer(struct conn *c, int status, const char *reason)
{
	char buf[BERTH_HTTP_REPLY_MAX];
	int n = berth_http_format_error(buf, sizeof buf, status, reason);

	c->mitm->closing = true;
	if (c->up != NULL) {
		bufferevent_free(c->up);
		c->up = NULL;
	}
	if (n > 0)
		bufferevent_write(c->cl, buf, (size_t)n);
	end_after_flush(c);
}

static void up_count(struct conn *c, size_t n, bool up)
{
	if (up) {
		c->bytes_up += n;
		berth_bk_stat_add(c->b, &c->b->st.bytes_up, n);
	} else {
		c->bytes_down += n;
		berth_bk_stat_add(c->b, &c->b->st.bytes_down, n);
	}
	c->last_ms = berth_now_ms();
}

static void wipe_free(const void *data, size_t len, void *arg)
{
	(void)arg;
	explicit_bzero((void *)data, len);
	free((void *)data);
}

/* The head rewritten for upstream, or NULL (answered). */
static char *rewrite(struct conn *c, size_t *len)
{
	struct mitm *m = c->mitm;
	struct berth_http_request *req = &m->http.req;
	struct berth_cred_inject inj[BERTH_CRED_MAX];
	struct berth_http_error e = {0};
	char *head = NULL, *out = NULL;
	uint32_t used = 0;
	long n, k;

	for (size_t i = 0; i < m->nb; i++)
		inj[i] = (struct berth_cred_inject){.header = m->binds[i]->header,
						    .field = m->binds[i]->field,
						    .prefix = m->binds[i]->prefix,
						    .placeholder = m->binds[i]->placeholder,
						    .secret = m->binds[i]->secret,
						    .secret_len = m->binds[i]->secret_len};
	n = berth_http_rewrite_origin(req, NULL, 0, &e);
	if (n < 0 || (head = malloc((size_t)n + 1)) == NULL ||
	    berth_http_rewrite_origin(req, head, (size_t)n + 1, &e) != n) {
		free(head);
		answer(c, e.status != 0 ? e.status : 500, n < 0 ? e.reason : "out of memory");
		return NULL;
	}
	k = berth_cred_rewrite(head, (size_t)n, req->path, req->path_len, inj, m->nb, NULL, 0, &used);
	if (k >= 0 && (out = malloc((size_t)k + 1)) != NULL &&
	    berth_cred_rewrite(head, (size_t)n, req->path, req->path_len, inj, m->nb, out, (size_t)k + 1,
			       &used) != k) {
		explicit_bzero(out, (size_t)k + 1);
		free(out);
		out = NULL;
	}
	free(head);
	if (out == NULL) {
		answer(c, k < 0 ? 400 : 500,
		       k < 0 ? "the credential's header is malformed" : "out of memory");
		return NULL;
	}
	for (size_t i = 0; i < m->nb; i++)
		if (used & (1u << i))
			m->uses[i]++;
	*len = (size_t)k;
	return out;
}

/* The request head is in: check its Host, rewrite it, send it. */
static void request_in(struct conn *c)
{
	struct mitm *m = c->mitm;
	struct berth_http_request *req = &m->http.req;
	const struct berth_http_header *host = NULL;
	char why[BERTH_HOST_REASON_MAX];
	size_t len = 0;
	char *out;

	if (req->connect) {
		refusal(c, "CONNECT inside a terminated tunnel");
		answer(c, 405, "CONNECT inside a tunnel to a credential's host");
		return;
	}
	for (size_t i = 0; i < req->n_headers; i++)
		if (req->headers[i].name_len == 4 && strncasecmp(req->headers[i].name, "host", 4) == 0)
			host = &req->headers[i];
	if (host == NULL ||
	    !berth_cred_host_matches(host->value, host->value_len, c->dec.host, c->dec.port)) {
		char clean[160];
		snprintf(why, sizeof why, "Host `%s` is not the bound host %s",
			 berth_text_clean(clean, sizeof clean, host != NULL ? host->value : ""), c->dec.host);
		refusal(c, why);
		answer(c, 421, why);
		return;
	}
	if ((out = rewrite(c, &len)) == NULL)
		return;
	/* by reference, not copied: the head that holds the value is wiped
	 * as soon as the TLS filter has encrypted it */
	if (evbuffer_add_reference(bufferevent_get_output(c->up), out, len, wipe_free, NULL) < 0) {
		wipe_free(out, len, NULL);
		answer(c, 500, "out of memory");
		return;
	}
	up_count(c, len, true);
	berth_body_init(&m->body,
			req->body == BERTH_HTTP_BODY_CHUNKED  ? BERTH_BODY_CHUNKED
			: req->body == BERTH_HTTP_BODY_LENGTH ? BERTH_BODY_LENGTH
							      : BERTH_BODY_NONE,
			req->content_length);
	m->head_done = true;
}

static void cl_read(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	struct mitm *m = c->mitm;
	struct evbuffer *in = bufferevent_get_input(bev);

	c->last_ms = berth_now_ms();
	if (m->closing) { /* answered: what follows is not read */
		evbuffer_drain(in, evbuffer_get_length(in));
		return;
	}
	while (!m->closing && evbuffer_get_length(in) > 0) {
		struct evbuffer_iovec v;
		size_t used = 0;
		if (evbuffer_peek(in, -1, NULL, &v, 1) < 1)
			break;
		if (!m->head_done) {
			enum berth_http_verdict r = berth_http_feed(&m->http, v.iov_base, v.iov_len, &used);
			evbuffer_drain(in, used);
			if (r == BERTH_HTTP_BAD)
				answer(c, m->http.err.status, m->http.err.reason);
			else if (r == BERTH_HTTP_DONE)
				request_in(c);
			continue;
		}
		if (berth_body_done(&m->body)) { /* one request per connection */
			m->dropped += evbuffer_get_length(in);
			evbuffer_drain(in, evbuffer_get_length(in));
			if (m->dropped > CLOSING_READ_MAX) {
				berth_bk_conn_free(c);
				return;
			}
			break;
		}
		long k = berth_body_feed(&m->body, v.iov_base, v.iov_len);
		if (k < 0) {
			answer(c, 400, "malformed chunked body");
			break;
		}
		evbuffer_remove_buffer(in, bufferevent_get_output(c->up), (size_t)k);
		up_count(c, (size_t)k, true);
		if (evbuffer_get_length(bufferevent_get_output(c->up)) >= c->b->bufmax) {
			bufferevent_disable(bev, EV_READ); /* up_write resumes */
			break;
		}
	}
}

static void cl_write(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	struct mitm *m = c->mitm;

	if ((m->closing || m->up_eof) && m->flush == NULL &&
	    evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		end_after_flush(c);
	else if (c->up != NULL && !m->up_eof &&
		 evbuffer_get_length(bufferevent_get_output(bev)) <= c->b->bufmax / 2)
		bufferevent_enable(c->up, EV_READ);
}

static void cl_event(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;
	const char *sni = "";
	SSL *ssl = bufferevent_openssl_get_ssl(bev);

	if (what & BEV_EVENT_CONNECTED)
		return; /* the handshake is done: the request follows */
	if (c->mitm->flush != NULL)
		return; /* ending already: end_after_flush() frees it */
	if (ssl != NULL && berth_tls_sni_refused(ssl, &sni)) {
		char why[BERTH_HOST_REASON_MAX], clean[160];
		if (sni[0] == '\0')
			snprintf(why, sizeof why, "TLS without SNI to a credential's host");
		else
			snprintf(why, sizeof why, "TLS SNI `%s` is not the bound host %s",
				 berth_text_clean(clean, sizeof clean, sni), c->dec.host);
		refusal(c, why);
		/* the alert is in the socket's output: it goes before the close */
		c->mitm->closing = true;
		if (c->up != NULL) {
			bufferevent_free(c->up);
			c->up = NULL;
		}
		end_after_flush(c);
		return;
	}
	berth_bk_conn_free(c);
}

static void up_read(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t n = evbuffer_get_length(in);

	c->mitm->responded = c->mitm->responded || n > 0;
	evbuffer_remove_buffer(in, bufferevent_get_output(c->cl), n);
	up_count(c, n, false);
	if (evbuffer_get_length(bufferevent_get_output(c->cl)) >= c->b->bufmax) /* cl_write resumes */
		bufferevent_disable(bev, EV_READ);
}

/* The upstream took the client's bytes: read the client again. */
static void up_write(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	if (!c->mitm->closing && evbuffer_get_length(bufferevent_get_output(bev)) <= c->b->bufmax / 2)
		bufferevent_enable(c->cl, EV_READ);
}

static void up_event(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;
	struct mitm *m = c->mitm;
	SSL *ssl = bufferevent_openssl_get_ssl(bev);

	if (what & BEV_EVENT_CONNECTED)
		return;
	if (what & BEV_EVENT_EOF) {
		up_read(bev, c);
		m->up_eof = true;
		if (m->flush == NULL)
			end_after_flush(c);
		return;
	}
	/* an error: a certificate that is not verified is the likely one */
	long vr = ssl != NULL ? SSL_get_verify_result(ssl) : X509_V_OK;
	char why[BERTH_HOST_REASON_MAX];
	if (vr != X509_V_OK)
		snprintf(why, sizeof why, "the server's certificate is not trusted: %s",
			 X509_verify_cert_error_string(vr));
	else
		snprintf(why, sizeof why, "TLS to the server failed");
	ERR_clear_error();
	if (vr != X509_V_OK)
		refusal(c, why);
	if (m->responded) {
		berth_bk_conn_free(c);
		return;
	}
	answer(c, 502, why);
}

int berth_bk_mitm_start(struct conn *c, const void *reply, size_t len)
{
	struct berth_broker *b = c->b;
	struct berth_error err = {0};
	struct mitm *m = calloc(1, sizeof *m);
	struct bufferevent *f;
	SSL *s = NULL, *u = NULL;

	if (m == NULL)
		return -1;
	c->mitm = m;
	berth_http_init(&m->http, BERTH_HTTP_ORIGIN);
	for (size_t i = 0; i < b->ncreds && m->nb < BERTH_CRED_MAX; i++)
		if (b->creds[i].port == c->dec.port && strcmp(b->creds[i].host, c->dec.host) == 0)
			m->binds[m->nb++] = &b->creds[i];
	if (len > 0)
		bufferevent_write(c->cl, reply, len);
	bufferevent_enable(c->cl, EV_READ | EV_WRITE);
	bufferevent_enable(c->up, EV_READ | EV_WRITE);
	/* as the splice relay: no Nagle delay on a small write after an
	 * unacknowledged one (a TLS record's head, then its body: 40 ms each
	 * waiting for a delayed ACK); best effort */
	(void)setsockopt(bufferevent_getfd(c->cl), IPPROTO_TCP, TCP_NODELAY, &(int){1}, sizeof(int));
	(void)setsockopt(bufferevent_getfd(c->up), IPPROTO_TCP, TCP_NODELAY, &(int){1}, sizeof(int));
	/* the TLS filters stop filling a socket's output at this mark (and wait for it to drain) */
	bufferevent_setwatermark(c->cl, EV_WRITE, 0, b->bufmax / 2);
	bufferevent_setwatermark(c->up, EV_WRITE, 0, b->bufmax / 2);
	if ((s = SSL_new(b->srv_ctx)) == NULL || berth_tls_server_prepare(s, b->ca, c->dec.host, &err) < 0 ||
	    (f = bufferevent_openssl_filter_new(b->base, c->cl, s, BUFFEREVENT_SSL_ACCEPTING,
						BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		SSL_free(s);
		return -1;
	}
	c->cl = f;
	if ((u = SSL_new(b->cli_ctx)) == NULL || berth_tls_client_prepare(u, c->dec.host, &err) < 0 ||
	    (f = bufferevent_openssl_filter_new(b->base, c->up, u, BUFFEREVENT_SSL_CONNECTING,
						BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		SSL_free(u);
		return -1;
	}
	c->up = f;
	bufferevent_openssl_set_allow_dirty_shutdown(c->cl, 1);
	bufferevent_openssl_set_allow_dirty_shutdown(c->up, 1);
	bufferevent_setcb(c->cl, cl_read, cl_write, cl_event, c);
	bufferevent_setcb(c->up, up_read, up_write, up_event, c);
	bufferevent_enable(c->cl, EV_READ | EV_WRITE);
	bufferevent_enable(c->up, EV_READ | EV_WRITE);
	return 0;
}

void berth_bk_mitm_free(struct conn *c)
{
	struct mitm *m = c->mitm;

	for (size_t i = 0; i < m->nb; i++)
		if (m->uses[i] > 0 && c->b->on_cred != NULL)
			c->b->on_cred(m->binds[i]->name, m->binds[i]->host, m->binds[i]->port, m->uses[i],
				      c->b->data);
	if (m->flush != NULL)
		event_free(m->flush);
	berth_http_free(&m->http);
	free(m);
	c->mitm = NULL;
}
