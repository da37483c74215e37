/* SPDX-License-Identifier: MIT */
/*
 * mcp_http.c - `berth mcp --listen`: the Streamable HTTP transport of MCP
 * (2025-03-26 and later) on one endpoint, /mcp.
 *
 *   POST   one JSON-RPC message.  A request is answered with its response
 *          as application/json (when it is ready: a tools/call waits for
 *          the app); a notification or a response with 202 and no body.
 *   GET    the server's stream (text/event-stream): notifications (logs,
 *          list changes, task status) and our requests (elicitation/create).
 *          What is sent while no stream is open waits for one (up to 1 MiB).
 *   DELETE ends the session.
 *
 * One session at a time: initialize makes one (its id in Mcp-Session-Id, a
 * random 128-bit hex string) and ends the one before, whose id then gets
 * 404 (the spec's "start a new session").  The head is read by the
 * broker's parser (src/broker/http.h, origin mode) and checked by
 * berth_mcp_http_check() (mcp_http.h); every request needs the bearer
 * token.  Connections are kept alive; a head must arrive within 30 s and a
 * connection idle for 5 min is closed.
 */
#include "mcp_int.h"
#include "mcp_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sodium.h>

#include "../util/sys.h"

#define MAX_CONNS (BERTH_MCPI_TRANSPORT_FDS - 1)
#define HEAD_TIMEOUT_MS 30000
#define IDLE_TIMEOUT_MS 300000
#define BACKLOG_MAX (1024 * 1024)     /* bytes held for the stream while none is open */
#define STREAM_MAX (16 * 1024 * 1024) /* bytes a stream's client may leave unread */

enum conn_state { C_HEAD, C_BODY, C_WAIT, C_STREAM, C_CLOSING };

struct conn {
	int fd;
	enum conn_state st;
	struct berth_http_parser p;
	char *in; /* bytes read but not yet taken (pipelined, or a body) */
	size_t in_len, in_cap;
	size_t body_need;
	json_t *wait_id;                 /* C_WAIT: the request id whose response this connection carries */
	struct berth_mcp_http_verdict v; /* the head's, checked before its body is read */
	bool close_after;
	bool sse; /* C_WAIT: the answer goes as an event stream (its head already sent) */
	struct berth_outq out;
	long long since; /* ms: when the current state began */
	long long born;  /* ms: when it was accepted */
	bool authed;     /* a head of it carried the token */
};

struct http {
	struct berth_mcp *m;
	int lfd;
	const char *token;
	char session[40];
	bool have_session;
	struct conn c[MAX_CONNS];
	size_t n;
	struct conn *cur;          /* the connection whose POST is being handled */
	struct conn *stream;       /* the GET stream, or NULL */
	struct berth_outq backlog; /* for the stream, while none is open */
	bool cur_answered;
};

static void conn_reset(struct conn *c)
{
	c->sse = false;
	berth_http_free(&c->p);
	berth_http_init(&c->p, BERTH_HTTP_ORIGIN);
	c->st = C_HEAD;
	c->since = berth_now_ms();
	json_decref(c->wait_id);
	c->wait_id = NULL;
}

static void conn_close(struct http *h, struct conn *c)
{
	if (h->stream == c)
		h->stream = NULL;
	if (h->cur == c)
		h->cur = NULL;
	close(c->fd);
	berth_http_free(&c->p);
	free(c->in);
	json_decref(c->wait_id);
	berth_outq_free(&c->out);
	size_t i = (size_t)(c - h->c);
	memmove(c, c + 1, (h->n - i - 1) * sizeof *c);
	h->n--;
	/* the moved connections' addresses changed */
	if (h->stream != NULL && h->stream > c)
		h->stream--;
}

/* A whole response: status, the session header once there is one, a body. */
static void respond(struct http *h, struct conn *c, int status, const char *ctype, const char *body,
		    size_t len)
{
	const char *text = status == 200   ? "OK"
			   : status == 202 ? "Accepted"
			   : status == 400 ? "Bad Request"
			   : status == 401 ? "Unauthorized"
			   : status == 403 ? "Forbidden"
			   : status == 404 ? "Not Found"
			   : status == 405 ? "Method Not Allowed"
			   : status == 406 ? "Not Acceptable"
			   : status == 411 ? "Length Required"
			   : status == 413 ? "Content Too Large"
			   : status == 415 ? "Unsupported Media Type"
					   : "Error";
	/* the session's id only to a request the checks let through: never in
	 * a refusal, which a client without the token gets */
	bool sid = h->have_session && status < 300;
	char head[600];
	int n = snprintf(
	    head, sizeof head,
	    "HTTP/1.1 %d %s\r\nContent-Length: %zu\r\nCache-Control: no-store\r\n%s%s%s%s%s%s%s%s\r\n",
	    status, text, len, ctype != NULL ? "Content-Type: " : "", ctype != NULL ? ctype : "",
	    ctype != NULL ? "\r\n" : "", sid ? "Mcp-Session-Id: " : "", sid ? h->session : "",
	    sid ? "\r\n" : "",
	    status == 401   ? "WWW-Authenticate: Bearer realm=\"berth mcp\"\r\n"
	    : status == 405 ? "Allow: GET, POST, DELETE\r\n"
			    : "",
	    c->close_after ? "Connection: close\r\n" : "");
	if (berth_outq_put(&c->out, head, (size_t)n) < 0 ||
	    (len > 0 && berth_outq_put(&c->out, body, len) < 0))
		c->close_after = true;
	if (c->close_after)
		c->st = C_CLOSING;
	else
		conn_reset(c);
}

/* An HTTP-level refusal, its reason as a JSON-RPC error (id null). */
static void refuse(struct http *h, struct conn *c, int status, const char *reason)
{
	char *s = NULL;
	json_t *j = json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", "error", "code", -32000,
			      "message", reason);
	if (j != NULL)
		s = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	/* the body of the request may not have been read: end the connection */
	c->close_after = true;
	respond(h, c, status, "application/json", s != NULL ? s : "", s != NULL ? strlen(s) : 0);
	free(s);
}

static void stream_put(struct http *h, const char *line, size_t len)
{
	if (h->stream != NULL && h->stream->out.len > STREAM_MAX) {
		/* a client that does not read its stream loses it, not our memory */
		h->stream->st = C_CLOSING;
		h->stream->out.len = 0;
		h->stream = NULL;
	}
	struct berth_outq *q = h->stream != NULL ? &h->stream->out : &h->backlog;
	if (h->stream == NULL && h->backlog.len + len > BACKLOG_MAX)
		return; /* nobody listens: the oldest stay, the rest is dropped */
	(void)berth_outq_put(q, "event: message\ndata: ", 21);
	(void)berth_outq_put(q, line, len - 1); /* without its newline: one data line */
	(void)berth_outq_put(q, "\n\n", 2);
}

/* The answer on a POST's event stream: one event, one chunk, then the
 * stream's end (the last chunk); the connection is kept. */
static void respond_sse(struct conn *c, const char *line, size_t len)
{
	char head[32];
	int n = snprintf(head, sizeof head, "%zx\r\n", 21 + len + 2);

	if (berth_outq_put(&c->out, head, (size_t)n) < 0 ||
	    berth_outq_put(&c->out, "event: message\ndata: ", 21) < 0 ||
	    berth_outq_put(&c->out, line, len) < 0 || berth_outq_put(&c->out, "\n\n\r\n0\r\n\r\n", 9) < 0)
		c->close_after = true;
	if (c->close_after)
		c->st = C_CLOSING;
	else
		conn_reset(c);
}

/* A POST's answer as an event stream: its head now, and a comment (so that
 * the client sees the call under way); the answer comes in respond_sse(). */
static void start_sse(struct http *h, struct conn *c)
{
	char head[300];
	int n = snprintf(head, sizeof head,
			 "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n"
			 "Transfer-Encoding: chunked\r\n%s%s%s\r\n",
			 h->have_session ? "Mcp-Session-Id: " : "", h->have_session ? h->session : "",
			 h->have_session ? "\r\n" : "");
	static const char hello[] = "f\r\n: berth: call\n\n\r\n";
	(void)berth_outq_put(&c->out, head, (size_t)n);
	(void)berth_outq_put(&c->out, hello, sizeof hello - 1);
	c->sse = true;
}

/* berth_mcp's output (one message, newline included). */
static void http_write(void *ctx, const char *line, size_t len)
{
	struct http *h = ctx;
	json_t *msg = json_loadb(line, len, 0, NULL);
	json_t *id = json_object_get(msg, "id");
	bool response = json_object_get(msg, "method") == NULL;

	if (!response) {
		stream_put(h, line, len);
	} else {
		struct conn *to = NULL;
		for (size_t i = 0; i < h->n && to == NULL; i++)
			if (h->c[i].st == C_WAIT && h->c[i].wait_id != NULL &&
			    json_equal(h->c[i].wait_id, id))
				to = &h->c[i];
		if (to == NULL && json_is_null(id) && h->cur != NULL && !h->cur_answered)
			to = h->cur; /* an error about what it sent: not a request we could name */
		if (to != NULL) {
			if (to == h->cur)
				h->cur_answered = true;
			if (to->sse)
				respond_sse(to, line, len - 1);
			else
				respond(h, to, json_is_null(id) ? 400 : 200, "application/json", line,
					len - 1);
		}
		/* else: its connection is gone; the answer is dropped */
	}
	json_decref(msg);
}

/* The session ends: requests still waiting for their answers get 404
 * (their calls were cancelled), the stream is closed. */
static void end_session(struct http *h, struct conn *except)
{
	if (h->have_session)
		berth_mcpi_end_session(h->m);
	h->have_session = false;
	for (size_t i = 0; i < h->n; i++) {
		struct conn *c = &h->c[i];
		if (c == except || c->st != C_WAIT)
			continue;
		if (!c->sse) {
			refuse(h, c, 404, "the session ended before the answer: initialize again");
			continue;
		}
		/* its stream is open: the answer is an error */
		json_t *e =
		    json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", c->wait_id, "error", "code",
			      -32000, "message", "the session ended before the answer: initialize again");
		char *t = e != NULL ? json_dumps(e, JSON_COMPACT) : NULL;
		json_decref(e);
		c->close_after = true;
		respond_sse(c, t != NULL ? t : "{}", t != NULL ? strlen(t) : 2);
		free(t);
	}
	if (h->stream != NULL) {
		h->stream->st = C_CLOSING;
		h->stream = NULL;
	}
	berth_outq_free(&h->backlog);
}

static void new_session(struct http *h, struct conn *c)
{
	unsigned char r[16];
	end_session(h, c);
	randombytes_buf(r, sizeof r);
	for (size_t i = 0; i < sizeof r; i++)
		snprintf(h->session + 2 * i, 3, "%02x", r[i]);
	h->have_session = true;
}

static void on_post(struct http *h, struct conn *c, const struct berth_mcp_http_verdict *v, const char *body,
		    size_t len)
{
	json_t *msg = json_loadb(body, len, JSON_DECODE_ANY, NULL);
	const char *method = json_string_value(json_object_get(msg, "method"));
	json_t *id = json_object_get(msg, "id");
	bool init = method != NULL && strcmp(method, "initialize") == 0;
	bool request = method != NULL && id != NULL;

	const char *pv = json_string_value(json_object_get(
	    json_object_get(json_object_get(msg, "params"), "_meta"), BERTH_MCP_META_VERSION));
	bool stateless = pv != NULL && strcmp(pv, "2026-07-28") >= 0;

	/* 2026-07-28 requests carry their revision and need no session */
	if (msg != NULL && json_is_object(msg) && !init && !stateless &&
	    !(method != NULL && strcmp(method, "server/discover") == 0)) {
		if (!h->have_session || !h->m->initialized) {
			json_decref(msg);
			return refuse(h, c, 400, "no session: send initialize first");
		}
		if (!v->session_ok) {
			json_decref(msg);
			return refuse(h, c, 400, "missing Mcp-Session-Id");
		}
	}
	if (init)
		new_session(h, c);
	h->cur = c;
	h->cur_answered = false;
	if (request) {
		c->st = C_WAIT;
		c->wait_id = json_incref(id);
		/* a call that may take long is answered on an event stream when the
		 * client takes one (POST: "the JSON or SSE response"); the rest as
		 * JSON */
		size_t an = 0;
		const char *accept = berth_mcp_http_header(&c->p.req, "Accept", &an);
		if (accept != NULL && memmem(accept, an, "text/event-stream", 17) != NULL &&
		    (strcmp(method, "tools/call") == 0 || strcmp(method, "tasks/result") == 0))
			start_sse(h, c);
	}
	berth_mcp_handle(h->m, body, len);
	if (!request && !h->cur_answered)
		respond(h, c, 202, NULL, "", 0);
	h->cur = NULL;
	json_decref(msg);
}

/* A head is in: check it before reading its body (a client without the
 * token gets nothing buffered for it).  Returns false when refused. */
static bool check_head(struct http *h, struct conn *c)
{
	struct berth_mcp_http_state s = {
	    .token = h->token,
	    .session = h->have_session ? h->session : NULL,
	    .version = h->m->initialized ? h->m->version : NULL,
	    .versions = berth_mcpi_versions(),
	};

	berth_mcp_http_check(&c->p.req, &s, &c->v);
	c->authed |= c->v.status == 0; /* refused: it is closed anyway */
	c->close_after = c->v.close;
	if (c->v.status == 0)
		return true;
	refuse(h, c, c->v.status, c->v.reason);
	return false;
}

/* A whole request is in (its head checked): act on it. */
static void on_request(struct http *h, struct conn *c, const char *body, size_t len)
{
	/* the session may have changed while the body came: check again */
	if (!check_head(h, c))
		return;
	if (c->v.method == MCP_HTTP_POST)
		return on_post(h, c, &c->v, body, len);
	if (c->v.method == MCP_HTTP_DELETE) {
		end_session(h, c);
		return respond(h, c, 200, NULL, "", 0);
	}
	/* GET: the server's stream, in place of one open before */
	if (h->stream != NULL)
		h->stream->st = C_CLOSING;
	char head[256];
	int n = snprintf(head, sizeof head,
			 "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n"
			 "Mcp-Session-Id: %s\r\nConnection: close\r\n\r\n",
			 h->session);
	(void)berth_outq_put(&c->out, head, (size_t)n);
	if (h->backlog.len > 0)
		(void)berth_outq_put(&c->out, h->backlog.buf, h->backlog.len);
	berth_outq_free(&h->backlog);
	c->st = C_STREAM;
	h->stream = c;
}

/* Take what the connection's buffer holds: a head, a body. */
static void advance(struct http *h, struct conn *c)
{
	while (c->st == C_HEAD || c->st == C_BODY) {
		if (c->st == C_HEAD) {
			size_t used = 0;
			if (c->in_len == 0)
				return;
			enum berth_http_verdict r = berth_http_feed(&c->p, c->in, c->in_len, &used);
			memmove(c->in, c->in + used, c->in_len - used);
			c->in_len -= used;
			if (r == BERTH_HTTP_NEED_MORE)
				return;
			if (r == BERTH_HTTP_BAD)
				return refuse(h, c, c->p.err.status, c->p.err.reason);
			if (!check_head(h, c))
				return;
			c->body_need = c->p.req.body == BERTH_HTTP_BODY_LENGTH &&
					       c->p.req.content_length <= 8 * 1024 * 1024
					   ? (size_t)c->p.req.content_length
					   : 0;
			if (c->p.req.body == BERTH_HTTP_BODY_LENGTH &&
			    c->p.req.content_length > 8 * 1024 * 1024)
				c->body_need = 0; /* refused by the check, unread */
			c->st = C_BODY;
			c->since = berth_now_ms();
		}
		if (c->in_len < c->body_need)
			return;
		size_t blen = c->body_need;
		char *body = malloc(blen + 1);
		if (body == NULL)
			return refuse(h, c, 500, "out of memory");
		memcpy(body, c->in, blen);
		body[blen] = '\0';
		memmove(c->in, c->in + blen, c->in_len - blen);
		c->in_len -= blen;
		c->st = C_WAIT; /* until on_request says otherwise */
		on_request(h, c, body, blen);
		free(body);
	}
}

static void on_readable(struct http *h, struct conn *c)
{
	if (c->in_cap - c->in_len < 65536) {
		size_t cap = c->in_len + 65536 + 65536;
		char *v = realloc(c->in, cap);
		if (v == NULL) {
			c->st = C_CLOSING;
			return;
		}
		c->in = v;
		c->in_cap = cap;
	}
	ssize_t r = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len);
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0) {
		c->st = C_CLOSING;
		c->out.len = 0;
		return;
	}
	c->in_len += (size_t)r;
	if (c->in_len > (size_t)BERTH_HTTP_MAX_HEAD + 8 * 1024 * 1024 + 65536) {
		c->st = C_CLOSING;
		c->out.len = 0;
		return;
	}
	advance(h, c);
}

static size_t http_fds(void *ctx, struct pollfd *p, size_t max, long long *soonest)
{
	struct http *h = ctx;
	size_t n = 0;

	/* polled even when full: a new connection then takes the place of the
	 * oldest one that never showed the token (evict_one()) */
	p[n++] = (struct pollfd){h->lfd, POLLIN, 0};
	for (size_t i = 0; i < h->n && n < max; i++) {
		struct conn *c = &h->c[i];
		short ev = c->out.len > 0 ? POLLOUT : 0;
		if (c->st == C_HEAD || c->st == C_BODY || c->st == C_STREAM)
			ev |= POLLIN; /* a stream's peer sends nothing: POLLIN says it closed */
		p[n++] = (struct pollfd){c->fd, ev, 0};
		if (c->st == C_HEAD || c->st == C_BODY) {
			long long d =
			    c->since + (c->st == C_HEAD && c->in_len == 0 && c->p.len == 0 ? IDLE_TIMEOUT_MS
											   : HEAD_TIMEOUT_MS);
			if (*soonest < 0 || d < *soonest)
				*soonest = d;
		}
	}
	return n;
}

/* All places are taken: close the oldest connection that never showed the
 * token (idle, or sending its head slowly), so that connections opened by
 * anyone who can reach the port cannot lock the token's holder out.
 * Returns false when every connection has shown it. */
static bool evict_one(struct http *h)
{
	struct conn *old = NULL;
	for (size_t i = 0; i < h->n; i++) {
		struct conn *c = &h->c[i];
		if (!c->authed && (c->st == C_HEAD || c->st == C_BODY || c->st == C_CLOSING) &&
		    (old == NULL || c->born < old->born))
			old = c;
	}
	if (old == NULL)
		return false;
	conn_close(h, old);
	return true;
}

static void http_ready(void *ctx, struct pollfd *p, size_t n)
{
	struct http *h = ctx;
	long long now = berth_now_ms();
	/* the connections as fds() saw them (closing one moves the rest) */
	int fds[MAX_CONNS];
	short rev[MAX_CONNS];
	size_t nc = n > 0 ? n - 1 : 0;

	for (size_t i = 0; i < nc; i++) {
		fds[i] = p[1 + i].fd;
		rev[i] = p[1 + i].revents;
	}
	for (size_t i = 0; i < nc; i++) {
		struct conn *c = NULL;
		for (size_t k = 0; k < h->n; k++)
			if (h->c[k].fd == fds[i])
				c = &h->c[k];
		if (c == NULL)
			continue;
		if ((rev[i] & (POLLIN | POLLHUP | POLLERR)) && c->st == C_STREAM) {
			char b[512];
			ssize_t r = read(c->fd, b, sizeof b);
			if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
				conn_close(h, c);
				continue;
			}
		} else if (rev[i] & (POLLIN | POLLHUP | POLLERR)) {
			on_readable(h, c);
		}
	}
	/* write, time out, close */
	for (size_t i = 0; i < h->n;) {
		struct conn *c = &h->c[i];
		if (c->out.len > 0 && berth_outq_send(&c->out, c->fd) < 0) {
			conn_close(h, c);
			continue;
		}
		if (c->st == C_CLOSING && c->out.len == 0) {
			shutdown(c->fd, SHUT_WR);
			conn_close(h, c);
			continue;
		}
		if ((c->st == C_HEAD || c->st == C_BODY) &&
		    now - c->since >= (c->st == C_HEAD && c->in_len == 0 && c->p.len == 0
					   ? IDLE_TIMEOUT_MS
					   : HEAD_TIMEOUT_MS)) {
			conn_close(h, c);
			continue;
		}
		/* a request pipelined behind an answered one */
		if (c->st == C_HEAD && c->in_len > 0) {
			advance(h, c);
			if (c->out.len > 0)
				continue; /* written next time round */
		}
		i++;
	}
	if (n > 0 && (p[0].revents & POLLIN)) {
		for (int k = 0; k < 16; k++) {
			int fd = accept4(h->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
			if (fd < 0)
				break;
			if (h->n == MAX_CONNS && !evict_one(h)) {
				close(fd); /* every place is a client's with the token */
				continue;
			}
			/* an answer is written in pieces (an event stream's head, then its
			 * event): no Nagle delay behind the client's delayed ACK */
			int one = 1;
			(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
			struct conn *c = &h->c[h->n++];
			memset(c, 0, sizeof *c);
			c->fd = fd;
			berth_http_init(&c->p, BERTH_HTTP_ORIGIN);
			c->st = C_HEAD;
			c->since = now;
			c->born = now;
		}
	}
}

/* Parse a.b.c.d:PORT or [v6]:PORT. */
static int parse_addr(const char *addr, struct sockaddr_storage *ss, socklen_t *len, struct berth_error *err)
{
	char host[64];
	const char *colon;
	memset(ss, 0, sizeof *ss);
	if (addr[0] == '[') {
		const char *close = strchr(addr, ']');
		if (close == NULL || close[1] != ':' || (size_t)(close - addr - 1) >= sizeof host)
			goto bad;
		memcpy(host, addr + 1, (size_t)(close - addr - 1));
		host[close - addr - 1] = '\0';
		colon = close + 1;
	} else {
		colon = strrchr(addr, ':');
		if (colon == NULL || (size_t)(colon - addr) >= sizeof host)
			goto bad;
		memcpy(host, addr, (size_t)(colon - addr));
		host[colon - addr] = '\0';
	}
	char *end = NULL;
	errno = 0;
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (colon[1] < '0' || colon[1] > '9' || *end != '\0' || errno != 0 || port > 65535)
		goto bad;
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	if (addr[0] != '[' && inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		*len = sizeof *s4;
		return 0;
	}
	if (addr[0] == '[' && inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		*len = sizeof *s6;
		return 0;
	}
bad:
	return berth_usage_err(
	    err, "--listen `%s`: want an IP address and a port, 127.0.0.1:PORT or [::1]:PORT", addr);
}

int berth_mcp_listen_loopback(const char *addr, bool *loopback, struct berth_error *err)
{
	struct sockaddr_storage ss;
	socklen_t len;
	if (parse_addr(addr, &ss, &len, err) < 0)
		return -1;
	if (ss.ss_family == AF_INET)
		*loopback = (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
	else
		*loopback = IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&ss)->sin6_addr);
	return 0;
}

int berth_mcp_listen(struct berth_mcp *m, const char *addr, const char *token,
		     int (*ready)(void *ctx, const char *url), void *ready_ctx, struct berth_error *err)
{
	struct sockaddr_storage ss;
	socklen_t len;
	struct http *h;
	int one = 1, r;

	if (parse_addr(addr, &ss, &len, err) < 0)
		return -1;
	if ((h = calloc(1, sizeof *h)) == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	h->m = m;
	h->token = token;
	h->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (h->lfd < 0 || setsockopt(h->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    bind(h->lfd, (struct sockaddr *)&ss, len) < 0 || listen(h->lfd, 64) < 0) {
		r = berth_err(err, errno, "cannot listen on %s", addr);
		if (h->lfd >= 0)
			close(h->lfd);
		free(h);
		return r;
	}
	len = sizeof ss;
	getsockname(h->lfd, (struct sockaddr *)&ss, &len);
	char text[INET6_ADDRSTRLEN], url[INET6_ADDRSTRLEN + 32];
	if (ss.ss_family == AF_INET) {
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, text, sizeof text);
		snprintf(url, sizeof url, "http://%s:%u%s", text,
			 ntohs(((struct sockaddr_in *)&ss)->sin_port), BERTH_MCP_HTTP_PATH);
	} else {
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, text, sizeof text);
		snprintf(url, sizeof url, "http://[%s]:%u%s", text,
			 ntohs(((struct sockaddr_in6 *)&ss)->sin6_port), BERTH_MCP_HTTP_PATH);
	}
	/* the token is given out only once the address is ours */
	if (ready != NULL && ready(ready_ctx, url) < 0) {
		close(h->lfd);
		free(h);
		return berth_err(err, 0, "the token could not be handed out; not listening on %s", addr);
	}
	fprintf(stderr, "berth: mcp: listening on %s\n", url);
	m->o.write = http_write;
	m->o.write_ctx = h;
	struct berth_mcpi_transport t = {h, http_fds, http_ready};
	r = berth_mcpi_loop(m, -1, &t, err);
	while (h->n > 0)
		conn_close(h, &h->c[h->n - 1]);
	berth_outq_free(&h->backlog);
	close(h->lfd);
	m->o.write = NULL;
	free(h);
	return r;
}
