/* SPDX-License-Identifier: MIT */
/*
 * test_broker.c - the broker's engine end to end on 127.0.0.1: the broker
 * runs in a thread with an HTTP and a SOCKS5 listener; the test runs a
 * poll(2) echo server, a one-at-a-time HTTP server that records the request
 * bytes it got, and a UDP DNS responder answering A records from a table and
 * logging every name asked, which the broker uses as its DNS server.
 *
 * Loopback is a refused range, so an upstream is reached by declaring the
 * exact literal 127.0.0.1:PORT (explicit literals beat the ranges); names
 * (resolved through the test DNS) are used for what must be refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "broker/broker.h"
#include "broker/socks.h"
#include "util/sys.h"

/* ---- sockets ------------------------------------------------------------- */

static int listen_tcp(uint16_t *port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;

	assert_true(fd >= 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 1024), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	*port = ntohs(sa.sin_port);
	return fd;
}

static int dial(uint16_t port)
{
	struct sockaddr_in sa = {
	    .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct timeval tv = {.tv_sec = 10};
	int e = 0;

	/* Three tries: a loaded CI machine once refused one connect (the
	 * errno is printed when all three fail). */
	for (int attempt = 0; attempt < 3; attempt++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		assert_true(fd >= 0);
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return fd;
		e = errno;
		close(fd);
		usleep(100000);
	}
	fail_msg("connect to 127.0.0.1:%u: %s", port, strerror(e));
	return -1;
}

static void send_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
		assert_true(w > 0);
		c += w;
		n -= (size_t)w;
	}
}

static void send_str(int fd, const char *s)
{
	send_all(fd, s, strlen(s));
}

static void recv_exact(int fd, void *p, size_t n)
{
	char *c = p;

	while (n > 0) {
		ssize_t r = recv(fd, c, n, 0);
		assert_true(r > 0);
		c += r;
		n -= (size_t)r;
	}
}

/* Everything until EOF (or @cap), NUL-terminated. */
static size_t recv_all(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	ssize_t r;

	while (n + 1 < cap && (r = recv(fd, buf + n, cap - 1 - n, 0)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	return n;
}

/* The reply head, up to and including the empty line. */
static void recv_head(int fd, char *buf, size_t cap)
{
	size_t n = 0;

	while (n + 1 < cap) {
		assert_int_equal(recv(fd, buf + n, 1, 0), 1);
		n++;
		buf[n] = '\0';
		if (n >= 4 && memcmp(buf + n - 4, "\r\n\r\n", 4) == 0)
			return;
	}
	fail_msg("reply head too long");
}

/* ---- the echo server ----------------------------------------------------- */

static struct {
	int lfd;
	uint16_t port;
	atomic_int accepted;
	atomic_bool stop;
	pthread_t th;
} echo;

static void *echo_main(void *arg)
{
	static struct pollfd p[2048];
	static char buf[65536];
	nfds_t n = 1;

	(void)arg;
	p[0] = (struct pollfd){.fd = echo.lfd, .events = POLLIN};
	while (!atomic_load(&echo.stop)) {
		if (poll(p, n, 50) <= 0)
			continue;
		for (nfds_t i = n; i-- > 1;) {
			if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			ssize_t r = read(p[i].fd, buf, sizeof(buf));
			if (r > 0) {
				size_t off = 0;
				while (off < (size_t)r) {
					ssize_t w = send(p[i].fd, buf + off, (size_t)r - off, MSG_NOSIGNAL);
					if (w <= 0)
						break;
					off += (size_t)w;
				}
				continue;
			}
			close(p[i].fd);
			p[i] = p[--n];
		}
		if ((p[0].revents & POLLIN) && n < 2048) {
			int fd = accept(echo.lfd, NULL, NULL);
			if (fd >= 0) {
				atomic_fetch_add(&echo.accepted, 1);
				p[n++] = (struct pollfd){.fd = fd, .events = POLLIN};
			}
		}
	}
	for (nfds_t i = 1; i < n; i++)
		close(p[i].fd);
	return NULL;
}

/* ---- the HTTP server ----------------------------------------------------- */

#define HTTP_REPLY "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello"

static struct {
	int lfd;
	uint16_t port;
	atomic_bool stop;
	pthread_t th;
	pthread_mutex_t mu;
	char last[8192];
} web = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void *web_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&web.stop)) {
		struct pollfd p = {.fd = web.lfd, .events = POLLIN};
		if (poll(&p, 1, 50) <= 0)
			continue;
		int fd = accept(web.lfd, NULL, NULL);
		if (fd < 0)
			continue;
		struct timeval tv = {.tv_sec = 5};
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		char req[8192];
		size_t n = 0;
		ssize_t r;
		while (n + 1 < sizeof(req) && (r = read(fd, req + n, sizeof(req) - 1 - n)) > 0) {
			n += (size_t)r;
			req[n] = '\0';
			if (strstr(req, "\r\n\r\n") != NULL)
				break;
		}
		/* and whatever else arrives soon after the head: a body, or bytes
		 * that must not arrive (a pipelined request) */
		tv = (struct timeval){.tv_usec = 200000};
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		while (n + 1 < sizeof(req) && (r = read(fd, req + n, sizeof(req) - 1 - n)) > 0)
			n += (size_t)r;
		req[n] = '\0';
		pthread_mutex_lock(&web.mu);
		memcpy(web.last, req, n + 1);
		pthread_mutex_unlock(&web.mu);
		send(fd, HTTP_REPLY, strlen(HTTP_REPLY), MSG_NOSIGNAL);
		close(fd);
	}
	return NULL;
}

/* ---- the DNS responder --------------------------------------------------- */

static const struct {
	const char *name;
	const char *a[2];
} dns_table[] = {
    {"private.test", {"10.0.0.1", NULL}},
    {"loop.test", {"127.0.0.1", NULL}},
    {"mixed.test", {"93.184.215.14", "169.254.169.254"}},
};

static struct {
	int fd;
	uint16_t port;
	atomic_bool stop;
	pthread_t th;
	pthread_mutex_t mu;
	char log[8192]; /* every name asked, each followed by '\n' */
} dns = {.mu = PTHREAD_MUTEX_INITIALIZER};

static bool dns_asked(const char *name)
{
	char line[300];

	snprintf(line, sizeof(line), "\n%s\n", name);
	pthread_mutex_lock(&dns.mu);
	bool r = strncmp(dns.log, line + 1, strlen(line + 1)) == 0 || strstr(dns.log, line) != NULL;
	pthread_mutex_unlock(&dns.mu);
	return r;
}

static void *dns_main(void *arg)
{
	uint8_t q[512], a[512];

	(void)arg;
	while (!atomic_load(&dns.stop)) {
		struct pollfd p = {.fd = dns.fd, .events = POLLIN};
		if (poll(&p, 1, 50) <= 0)
			continue;
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(dns.fd, q, sizeof(q), 0, (struct sockaddr *)&from, &fl);
		if (n < 17)
			continue;
		char name[256] = "";
		size_t off = 12, nl = 0;
		while (off < (size_t)n && q[off] != 0 && q[off] < 64) {
			size_t l = q[off];
			if (off + 1 + l > (size_t)n || nl + l + 2 > sizeof(name))
				break;
			if (nl > 0)
				name[nl++] = '.';
			memcpy(name + nl, q + off + 1, l);
			nl += l;
			name[nl] = '\0';
			off += 1 + l;
		}
		if (off + 5 > (size_t)n)
			continue;
		off++; /* root */
		unsigned qtype = (unsigned)(q[off] << 8 | q[off + 1]);
		off += 4;
		pthread_mutex_lock(&dns.mu);
		size_t ll = strlen(dns.log);
		if (ll + nl + 2 < sizeof(dns.log))
			snprintf(dns.log + ll, sizeof(dns.log) - ll, "%s\n", name);
		pthread_mutex_unlock(&dns.mu);
		int row = -1;
		for (size_t i = 0; i < sizeof(dns_table) / sizeof(dns_table[0]); i++)
			if (strcasecmp(dns_table[i].name, name) == 0)
				row = (int)i;
		memcpy(a, q, off);
		a[2] = 0x84 | (q[2] & 1);     /* QR, AA, RD copied */
		a[3] = row < 0 ? 0x83 : 0x80; /* RA, NXDOMAIN or NOERROR */
		a[4] = 0, a[5] = 1;           /* QDCOUNT */
		a[6] = a[7] = a[8] = a[9] = a[10] = a[11] = 0;
		size_t w = off, count = 0;
		for (int k = 0; row >= 0 && qtype == 1 && k < 2 && dns_table[row].a[k] != NULL; k++) {
			uint8_t rr[16] = {0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4};
			inet_pton(AF_INET, dns_table[row].a[k], rr + 12);
			memcpy(a + w, rr, 16);
			w += 16;
			count++;
		}
		a[7] = (uint8_t)count;
		sendto(dns.fd, a, w, 0, (struct sockaddr *)&from, fl);
	}
	return NULL;
}

/* ---- the broker ---------------------------------------------------------- */

#define MAX_DECISIONS 64

static struct {
	struct berth_broker *b;
	uint16_t http_port, socks_port;
	pthread_t th;
	pthread_mutex_t mu;
	size_t n;
	struct {
		enum berth_broker_kind kind;
		enum berth_broker_outcome outcome;
		char host[256], address[64], reason[600];
		unsigned port;
		uint64_t up, down;
	} d[MAX_DECISIONS];
} bk = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void on_decision(const struct berth_broker_decision *d, void *data)
{
	(void)data;
	pthread_mutex_lock(&bk.mu);
	if (bk.n < MAX_DECISIONS) {
		bk.d[bk.n].kind = d->kind;
		bk.d[bk.n].outcome = d->outcome;
		snprintf(bk.d[bk.n].host, sizeof(bk.d[0].host), "%s", d->host);
		snprintf(bk.d[bk.n].address, sizeof(bk.d[0].address), "%s", d->address);
		snprintf(bk.d[bk.n].reason, sizeof(bk.d[0].reason), "%s", d->reason);
		bk.d[bk.n].port = d->port;
		bk.d[bk.n].up = d->bytes_up;
		bk.d[bk.n].down = d->bytes_down;
		bk.n++;
	}
	pthread_mutex_unlock(&bk.mu);
}

static void *broker_main(void *arg)
{
	assert_int_equal(berth_broker_run(arg), 0);
	return NULL;
}

/* The next start() also serves these (then forgets them): the sandbox's
 * resolver and a transparent listener. */
static struct {
	int dns_fd, transparent_fd, handoff_fd, tagged_fd;
} extra = {-1, -1, -1, -1};

/* Start a broker allowing @pats (NULL-terminated texts; "%E" and "%W" become the echo and web ports). */
static void start(const char *const *pats, unsigned max_tunnels, unsigned header_ms)
{
	struct berth_host_pattern p[8];
	size_t n = 0;
	char dns_server[32], reason[512];
	struct berth_error err;

	for (; pats[n] != NULL; n++) {
		char text[300];
		const char *s = pats[n];
		if (strstr(s, "%E") != NULL)
			snprintf(text, sizeof(text), "127.0.0.1:%u", echo.port);
		else if (strstr(s, "%W") != NULL)
			snprintf(text, sizeof(text), "127.0.0.1:%u", web.port);
		else
			snprintf(text, sizeof(text), "%s", s);
		assert_int_equal(berth_host_pattern_parse(text, &p[n], reason, sizeof(reason)), 0);
	}
	snprintf(dns_server, sizeof(dns_server), "127.0.0.1:%u", dns.port);
	struct berth_broker_opts o = {
	    .patterns = p,
	    .n_patterns = n,
	    .dns_server = dns_server,
	    .max_tunnels = max_tunnels,
	    .header_timeout_ms = header_ms,
	    .connect_timeout_ms = 5000,
	    .on_decision = on_decision,
	};
	bk.n = 0;
	bk.b = berth_broker_new(&o, &err);
	if (bk.b == NULL)
		fail_msg("berth_broker_new: %s", err.msg);
	assert_int_equal(berth_broker_add_listener(bk.b, listen_tcp(&bk.http_port), BERTH_BROKER_HTTP, &err),
			 0);
	assert_int_equal(
	    berth_broker_add_listener(bk.b, listen_tcp(&bk.socks_port), BERTH_BROKER_SOCKS5, &err), 0);
	if (extra.dns_fd >= 0)
		assert_int_equal(berth_broker_add_listener(bk.b, extra.dns_fd, BERTH_BROKER_DNS, &err), 0);
	if (extra.transparent_fd >= 0)
		assert_int_equal(
		    berth_broker_add_listener(bk.b, extra.transparent_fd, BERTH_BROKER_TRANSPARENT, &err), 0);
	if (extra.handoff_fd >= 0)
		assert_int_equal(
		    berth_broker_add_listener(bk.b, extra.handoff_fd, BERTH_BROKER_HANDOFF, &err), 0);
	if (extra.tagged_fd >= 0)
		assert_int_equal(
		    berth_broker_add_listener(bk.b, extra.tagged_fd, BERTH_BROKER_DNS_TAGGED, &err), 0);
	extra.dns_fd = extra.transparent_fd = extra.handoff_fd = extra.tagged_fd = -1;
	assert_int_equal(pthread_create(&bk.th, NULL, broker_main, bk.b), 0);
}

static void stop(void)
{
	berth_broker_stop(bk.b);
	pthread_join(bk.th, NULL);
	berth_broker_free(bk.b);
	bk.b = NULL;
}

static void clear_dns_log(void)
{
	pthread_mutex_lock(&dns.mu);
	dns.log[0] = '\0';
	pthread_mutex_unlock(&dns.mu);
}

/* A CONNECT through the HTTP listener; returns the fd, the reply head in @head. */
static int proxy_connect(const char *target, char *head, size_t cap)
{
	char req[512];
	int fd = dial(bk.http_port);

	snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target);
	send_str(fd, req);
	recv_head(fd, head, cap);
	return fd;
}

static int group_setup(void **state)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	struct rlimit rl;

	(void)state;
	signal(SIGPIPE, SIG_IGN);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 16384) {
		rl.rlim_cur = rl.rlim_max < 16384 ? rl.rlim_max : 16384;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	echo.lfd = listen_tcp(&echo.port);
	web.lfd = listen_tcp(&web.port);
	dns.fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(dns.fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(dns.fd, (struct sockaddr *)&sa, &sl), 0);
	dns.port = ntohs(sa.sin_port);
	assert_int_equal(pthread_create(&echo.th, NULL, echo_main, NULL), 0);
	assert_int_equal(pthread_create(&web.th, NULL, web_main, NULL), 0);
	assert_int_equal(pthread_create(&dns.th, NULL, dns_main, NULL), 0);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	atomic_store(&echo.stop, true);
	atomic_store(&web.stop, true);
	atomic_store(&dns.stop, true);
	pthread_join(echo.th, NULL);
	pthread_join(web.th, NULL);
	pthread_join(dns.th, NULL);
	return 0;
}

/* ---- tests ---------------------------------------------------------------- */

static void test_connect_tunnel(void **state)
{
	static const char *const pats[] = {"%E", NULL};
	char head[512], target[64], buf[65536];
	static char big[65536];

	(void)state;
	start(pats, 0, 0);
	snprintf(target, sizeof(target), "127.0.0.1:%u", echo.port);
	int fd = proxy_connect(target, head, sizeof(head));
	assert_string_equal(head, "HTTP/1.1 200 Connection established\r\n\r\n");
	send_str(fd, "ping");
	recv_exact(fd, buf, 4);
	assert_memory_equal(buf, "ping", 4);
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)(i * 7);
	for (int round = 0; round < 32; round++) { /* 2 MiB through bounded buffers */
		send_all(fd, big, sizeof(big));
		recv_exact(fd, buf, sizeof(buf));
		assert_memory_equal(buf, big, sizeof(big));
	}
	shutdown(fd, SHUT_WR);
	assert_int_equal(recv(fd, buf, 1, 0), 0); /* the half-close travels both ways */
	close(fd);
	usleep(100000);
	stop();
	assert_int_equal(bk.n, 1);
	assert_int_equal(bk.d[0].outcome, BERTH_BROKER_ALLOWED);
	assert_string_equal(bk.d[0].address, "127.0.0.1");
	assert_int_equal(bk.d[0].up, 4 + 32 * sizeof(big));
	assert_int_equal(bk.d[0].down, 4 + 32 * sizeof(big));
}

static void test_plain_get(void **state)
{
	static const char *const pats[] = {"%W", NULL};
	char req[512], expect[512], buf[4096];

	(void)state;
	start(pats, 0, 0);
	int fd = dial(bk.http_port);
	snprintf(req, sizeof(req),
		 "GET http://127.0.0.1:%u/path?q=1 HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nUser-Agent: t/1\r\n"
		 "Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic eDp5\r\nAccept: */*\r\n\r\n",
		 web.port, web.port);
	send_str(fd, req);
	recv_all(fd, buf, sizeof(buf));
	close(fd);
	assert_string_equal(buf, HTTP_REPLY);
	snprintf(expect, sizeof(expect),
		 "GET /path?q=1 HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nUser-Agent: t/1\r\nAccept: */*\r\n"
		 "Via: 1.1 berth\r\nConnection: close\r\n\r\n",
		 web.port);
	pthread_mutex_lock(&web.mu);
	assert_string_equal(web.last, expect);
	pthread_mutex_unlock(&web.mu);
	stop();
}

/* Bytes after a plain request's body (a pipelined second request) reach nobody. */
static void test_pipelined_plain(void **state)
{
	static const char *const pats[] = {"%W", NULL};
	char req[1024], expect[512], buf[4096];

	(void)state;
	start(pats, 0, 0);
	int fd = dial(bk.http_port);
	snprintf(
	    req, sizeof(req),
	    "POST http://127.0.0.1:%u/up HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Length: 5\r\n\r\nabcde"
	    "GET http://evil.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n",
	    web.port, web.port);
	send_str(fd, req);
	recv_all(fd, buf, sizeof(buf));
	close(fd);
	assert_string_equal(buf, HTTP_REPLY);
	snprintf(expect, sizeof(expect),
		 "POST /up HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Length: 5\r\nVia: 1.1 berth\r\n"
		 "Connection: close\r\n\r\nabcde",
		 web.port);
	pthread_mutex_lock(&web.mu);
	assert_string_equal(web.last, expect);
	pthread_mutex_unlock(&web.mu);
	usleep(100000);
	stop();
	assert_int_equal(bk.n, 1);
	/* the forwarded head and the body: what the client sent upstream, not only its body */
	assert_int_equal(bk.d[0].up, strlen(expect));
	assert_false(dns_asked("evil.test"));
}

/* A chunked body is forwarded as framed, and nothing after its end. */
static void test_chunked_body(void **state)
{
	static const char *const pats[] = {"%W", NULL};
	char req[1024], expect[512], buf[4096];

	(void)state;
	start(pats, 0, 0);
	int fd = dial(bk.http_port);
	snprintf(
	    req, sizeof(req),
	    "POST http://127.0.0.1:%u/c HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nTransfer-Encoding: chunked\r\n\r\n"
	    "5;x=1\r\nhello\r\n0\r\nT: v\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n",
	    web.port, web.port);
	send_str(fd, req);
	recv_all(fd, buf, sizeof(buf));
	close(fd);
	assert_string_equal(buf, HTTP_REPLY);
	snprintf(expect, sizeof(expect),
		 "POST /c HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nTransfer-Encoding: chunked\r\nVia: 1.1 berth\r\n"
		 "Connection: close\r\n\r\n5;x=1\r\nhello\r\n0\r\nT: v\r\n\r\n",
		 web.port);
	pthread_mutex_lock(&web.mu);
	assert_string_equal(web.last, expect);
	pthread_mutex_unlock(&web.mu);
	usleep(100000);
	assert_int_equal(bk.n, 1);
	assert_int_equal(bk.d[0].up, strlen(expect)); /* the head and the framed body, as forwarded */

	/* a malformed chunk size: the connection ends, nothing after the head goes on */
	fd = dial(bk.http_port);
	snprintf(
	    req, sizeof(req),
	    "POST http://127.0.0.1:%u/d HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nTransfer-Encoding: chunked\r\n\r\n"
	    "zz\r\nGET /smuggled HTTP/1.1\r\n\r\n",
	    web.port, web.port);
	send_str(fd, req);
	recv_all(fd, buf, sizeof(buf));
	close(fd);
	usleep(300000);
	pthread_mutex_lock(&web.mu);
	assert_null(strstr(web.last, "smuggled"));
	pthread_mutex_unlock(&web.mu);
	stop();
}

static void test_undeclared_host(void **state)
{
	static const char *const pats[] = {"allowed.test", NULL};
	char head[512], body[512];

	(void)state;
	clear_dns_log();
	start(pats, 0, 0);
	int fd = proxy_connect("evil.test:443", head, sizeof(head));
	assert_non_null(strstr(head, "HTTP/1.1 403 "));
	recv_all(fd, body, sizeof(body));
	assert_string_equal(body, "berth: refused by the egress policy: evil.test:443 (not declared)\n");
	close(fd);
	/* plain HTTP too, not only CONNECT */
	fd = dial(bk.http_port);
	send_str(fd, "GET http://other.test/x HTTP/1.1\r\nHost: other.test\r\n\r\n");
	recv_head(fd, head, sizeof(head));
	assert_non_null(strstr(head, "HTTP/1.1 403 "));
	close(fd);
	stop();
	assert_false(dns_asked("evil.test"));
	assert_false(dns_asked("other.test"));
	assert_int_equal(bk.n, 2);
	assert_int_equal(bk.d[0].outcome, BERTH_BROKER_REFUSED);
	assert_string_equal(bk.d[0].reason, "not declared");
}

static void test_undeclared_port(void **state)
{
	static const char *const pats[] = {"allowed.test", NULL};
	char head[512], body[512];

	(void)state;
	clear_dns_log();
	start(pats, 0, 0);
	int fd = proxy_connect("allowed.test:8080", head, sizeof(head));
	assert_non_null(strstr(head, "HTTP/1.1 403 "));
	recv_all(fd, body, sizeof(body));
	assert_non_null(strstr(body, "allowed.test:8080 (port 8080 not declared for allowed.test)"));
	close(fd);
	assert_int_equal(berth_broker_refused_count(bk.b), 1);
	char line[600];
	assert_int_equal(berth_broker_refused(bk.b, 0, line, sizeof(line)), 0);
	assert_string_equal(line, "allowed.test:8080 (port 8080 not declared for allowed.test)");
	stop();
	assert_false(dns_asked("allowed.test"));
}

static void test_private_answer(void **state)
{
	static const char *const pats[] = {"private.test", "loop.test:*", "mixed.test",
					   "missing.test", "%E",          NULL};
	char head[512], body[512], target[64];

	(void)state;
	clear_dns_log();
	start(pats, 0, 0);
	int fd = proxy_connect("private.test:443", head, sizeof(head));
	assert_non_null(strstr(head, "HTTP/1.1 403 "));
	recv_all(fd, body, sizeof(body));
	assert_non_null(strstr(body, "`private.test` resolves to 10.0.0.1: private (10.0.0.0/8)"));
	close(fd);
	assert_true(dns_asked("private.test"));

	/* a name resolving to the echo server's address: no connection is made */
	int before = atomic_load(&echo.accepted);
	snprintf(target, sizeof(target), "loop.test:%u", echo.port);
	fd = proxy_connect(target, head, sizeof(head));
	assert_non_null(strstr(head, "HTTP/1.1 403 "));
	close(fd);
	/* one private address among public ones refuses the name */
	fd = proxy_connect("mixed.test:443", head, sizeof(head));
	assert_non_null(strstr(head, "HTTP/1.1 403 "));
	recv_all(fd, body, sizeof(body));
	assert_non_null(strstr(body, "169.254.169.254: cloud metadata"));
	close(fd);
	/* no such name: 502 */
	fd = proxy_connect("missing.test:443", head, sizeof(head));
	assert_non_null(strstr(head, "HTTP/1.1 502 "));
	close(fd);
	usleep(100000);
	assert_int_equal(atomic_load(&echo.accepted), before);
	stop();
	assert_string_equal(bk.d[0].address, "10.0.0.1");
	assert_int_equal(bk.d[0].outcome, BERTH_BROKER_REFUSED);
	assert_int_equal(bk.d[3].outcome, BERTH_BROKER_FAILED);
}

static void test_socks(void **state)
{
	static const char *const pats[] = {"%E", NULL};
	uint8_t rep[32], req[64];
	char buf[16];

	(void)state;
	clear_dns_log();
	start(pats, 0, 0);
	int fd = dial(bk.socks_port);
	send_all(fd, "\x05\x01\x00", 3);
	recv_exact(fd, rep, 2);
	assert_memory_equal(rep, "\x05\x00", 2);
	uint8_t r1[10] = {5, 1, 0, 1, 127, 0, 0, 1, (uint8_t)(echo.port >> 8), (uint8_t)echo.port};
	send_all(fd, r1, sizeof(r1));
	recv_exact(fd, rep, 10);
	assert_int_equal(rep[0], 5);
	assert_int_equal(rep[1], 0);
	assert_int_equal(rep[3], 1);
	/* BND.ADDR and BND.PORT are zero: not the host's own address and port */
	assert_memory_equal(rep + 4, "\0\0\0\0\0\0", 6);
	send_str(fd, "socks!");
	recv_exact(fd, buf, 6);
	assert_memory_equal(buf, "socks!", 6);
	close(fd);

	fd = dial(bk.socks_port);
	size_t n = 0;
	memcpy(req,
	       "\x05\x01\x00\x05\x01\x00\x03\x09"
	       "evil.test\x01\xbb",
	       3 + 5 + 9 + 2);
	n = 3 + 5 + 9 + 2;
	send_all(fd, req, n);
	recv_exact(fd, rep, 2 + 10);
	assert_memory_equal(rep, "\x05\x00", 2);
	assert_int_equal(rep[2], 5);
	assert_int_equal(rep[3], BERTH_SOCKS_NOT_ALLOWED);
	assert_int_equal(recv(fd, rep, 1, 0), 0);
	close(fd);
	stop();
	assert_false(dns_asked("evil.test"));
	/* the allowed tunnel is reported when it ends, which may be after the refusal */
	assert_int_equal(bk.n, 2);
	int refused = bk.d[0].outcome == BERTH_BROKER_REFUSED ? 0 : 1;
	assert_int_equal(bk.d[refused].outcome, BERTH_BROKER_REFUSED);
	assert_string_equal(bk.d[refused].host, "evil.test");
	assert_int_equal(bk.d[1 - refused].outcome, BERTH_BROKER_ALLOWED);
	assert_int_equal(bk.d[1 - refused].up, 6);
}

static void test_bad_requests(void **state)
{
	static const char *const pats[] = {"%W", NULL};
	char req[512], head[512];
	static char big[20000];

	(void)state;
	start(pats, 0, 300);
	/* Host disagrees with the target */
	int fd = dial(bk.http_port);
	snprintf(req, sizeof(req), "GET http://127.0.0.1:%u/ HTTP/1.1\r\nHost: other.test\r\n\r\n", web.port);
	send_str(fd, req);
	recv_head(fd, head, sizeof(head));
	assert_non_null(strstr(head, "HTTP/1.1 400 "));
	close(fd);
	/* one field line above 8 KiB */
	fd = dial(bk.http_port);
	memset(big, 'a', sizeof(big));
	memcpy(big, "X-Big: ", 7);
	snprintf(req, sizeof(req), "GET http://127.0.0.1:%u/ HTTP/1.1\r\n", web.port);
	send_str(fd, req);
	send(fd, big, sizeof(big), MSG_NOSIGNAL);
	send(fd, "\r\n\r\n", 4, MSG_NOSIGNAL);
	recv_head(fd, head, sizeof(head));
	assert_non_null(strstr(head, "HTTP/1.1 431 "));
	close(fd);
	/* the head does not arrive in time */
	fd = dial(bk.http_port);
	send_str(fd, "GET http://127.0.0.1/ HTTP/1.1\r\n");
	recv_head(fd, head, sizeof(head));
	assert_non_null(strstr(head, "HTTP/1.1 408 "));
	close(fd);
	/* garbage on the SOCKS port: closed, no crash */
	fd = dial(bk.socks_port);
	send_str(fd, "GET / HTTP/1.1\r\n\r\n");
	assert_true(recv_all(fd, head, sizeof(head)) <= 2);
	close(fd);
	struct berth_broker_stats st;
	berth_broker_stats(bk.b, &st);
	assert_int_equal(st.bad_requests, 4);
	stop();
}

static void test_tunnel_cap(void **state)
{
	static const char *const pats[] = {"%E", NULL};
	char head[512], target[64];

	(void)state;
	start(pats, 2, 0);
	snprintf(target, sizeof(target), "127.0.0.1:%u", echo.port);
	int a = proxy_connect(target, head, sizeof(head));
	assert_non_null(strstr(head, " 200 "));
	int b = proxy_connect(target, head, sizeof(head));
	assert_non_null(strstr(head, " 200 "));
	int c = proxy_connect(target, head, sizeof(head));
	assert_non_null(strstr(head, "HTTP/1.1 503 "));
	close(c);
	close(a);
	usleep(200000); /* the broker sees the close and frees the slot */
	c = proxy_connect(target, head, sizeof(head));
	assert_non_null(strstr(head, " 200 "));
	close(b);
	close(c);
	stop();
}

static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmRSS: %ld kB", &v) == 1)
			break;
	if (f != NULL)
		fclose(f);
	return v;
}

#define MANY 1000

static void test_many_tunnels(void **state)
{
	static const char *const pats[] = {"%E", NULL};
	static int fds[MANY];
	char head[512], target[64], msg[4096], buf[4096];

	(void)state;
	start(pats, 0, 0);
	snprintf(target, sizeof(target), "127.0.0.1:%u", echo.port);
	close(proxy_connect(target, head, sizeof(head))); /* warm up */
	long before = rss_kib();
	for (int i = 0; i < MANY; i++) {
		fds[i] = proxy_connect(target, head, sizeof(head));
		assert_non_null(strstr(head, " 200 "));
	}
	memset(msg, 'm', sizeof(msg));
	for (int i = 0; i < MANY; i++)
		send_all(fds[i], msg, sizeof(msg));
	for (int i = 0; i < MANY; i++) {
		recv_exact(fds[i], buf, sizeof(buf));
		assert_memory_equal(buf, msg, sizeof(msg));
	}
	struct berth_broker_stats st;
	berth_broker_stats(bk.b, &st);
	assert_true(st.tunnels >= MANY);
	long grew = rss_kib() - before;
	print_message("RSS grew by %ld KiB for %d tunnels\n", grew, MANY);
	assert_true(grew < 32 * 1024); /* about 3 MiB; ASan builds use more */
	for (int i = 0; i < MANY; i++)
		close(fds[i]);
	stop(); /* tunnels the broker has not seen close yet are closed and reported by free */
	assert_true(bk.n >= 1);
}

/* ---- a reader that stops: the relay waits, it does not spin -------------- */

static struct {
	int lfd;
	uint16_t port;
	atomic_bool stalled;
	atomic_size_t sent;
	pthread_t th;
} drip;

/* Accept one connection and send it 64-byte pieces, each its own segment
 * (TCP_NODELAY), until a send has waited 300 ms (everything in between is
 * full); then close.  Byte k of the stream is k % 251. */
static void *drip_main(void *arg)
{
	struct timeval tv = {.tv_usec = 300000};
	unsigned char piece[64];
	size_t k = 0;
	int one = 1;

	(void)arg;
	int fd = accept(drip.lfd, NULL, NULL);
	assert_true(fd >= 0);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	for (;;) {
		for (size_t i = 0; i < sizeof(piece); i++)
			piece[i] = (unsigned char)((k + i) % 251);
		ssize_t w = send(fd, piece, sizeof(piece), MSG_NOSIGNAL);
		if (w > 0) {
			k += (size_t)w;
			if ((size_t)w == sizeof(piece))
				continue;
		} else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
			fail_msg("drip: send: %s", strerror(errno));
		}
		break; /* a send waited 300 ms (or wrote part): stalled */
	}
	atomic_store(&drip.sent, k);
	atomic_store(&drip.stalled, true);
	close(fd);
	return NULL;
}

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The upstream sends small segments faster than the client reads: once the
 * client's socket is full the relay's pipe fills with small pieces (a pipe
 * holds 16 pieces, however small) and the upstream's bytes wait in its
 * socket.  The broker must then wait for the client, not poll the upstream
 * again and again (it did: a read event stayed on while nothing could move,
 * a busy loop on one CPU).  Every byte still arrives, in order.
 */
static void test_stalled_reader(void **state)
{
	char pat[64], head[512], target[64];
	static unsigned char buf[1 << 20];
	int small = 4096;

	(void)state;
	drip.lfd = listen_tcp(&drip.port);
	atomic_store(&drip.stalled, false);
	snprintf(pat, sizeof(pat), "127.0.0.1:%u", drip.port);
	const char *const pats[] = {pat, NULL};
	start(pats, 0, 0);
	assert_int_equal(pthread_create(&drip.th, NULL, drip_main, NULL), 0);

	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons(bk.http_port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct timeval tv = {.tv_sec = 10};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)); /* before connect: the window */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	snprintf(target, sizeof(target), "127.0.0.1:%u", drip.port);
	char req[256];
	snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target);
	send_str(fd, req);
	recv_head(fd, head, sizeof(head));
	assert_string_equal(head, "HTTP/1.1 200 Connection established\r\n\r\n");

	for (int i = 0; i < 300 && !atomic_load(&drip.stalled); i++)
		usleep(50000);
	assert_true(atomic_load(&drip.stalled));
	usleep(200000);
	double t0 = cpu_seconds();
	usleep(1000000);
	double used = cpu_seconds() - t0;
	print_message("CPU while the reader waits: %.3f s in 1 s (%zu bytes sent)\n", used,
		      atomic_load(&drip.sent));
	assert_true(used < 0.25);

	/* Drain with a full-size window.  Through the 4 KiB one (far under loopback's 64 KiB MSS)
	 * the 7 MB depend on window updates and zero-window probes, and once, under ASan on a
	 * loaded CI machine, the drain outlasted meson's 300 s timeout with nothing said.  The
	 * whole drain also has a deadline of its own, so a slow one fails with the count. */
	int big = 4 << 20;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	int64_t deadline = berth_now_ms() + 60000;
	size_t got = 0;
	ssize_t r;
	while ((r = recv(fd, buf, sizeof(buf), 0)) > 0) {
		if (berth_now_ms() > deadline)
			fail_msg("drain: %zu of %zu bytes after 60 s", got, atomic_load(&drip.sent));
		for (ssize_t i = 0; i < r; i++)
			if (buf[i] != (unsigned char)((got + (size_t)i) % 251))
				fail_msg("byte %zu: %u, want %zu", got + (size_t)i, buf[i],
					 (got + (size_t)i) % 251);
		got += (size_t)r;
	}
	assert_int_equal(r, 0);
	assert_int_equal(got, atomic_load(&drip.sent));
	close(fd);
	pthread_join(drip.th, NULL);
	close(drip.lfd);
	usleep(100000);
	stop();
	assert_int_equal(bk.n, 1);
	assert_int_equal(bk.d[0].outcome, BERTH_BROKER_ALLOWED);
	assert_int_equal(bk.d[0].down, got);
}

/* ---- small writes in a row: no Nagle delay in the relay ------------------ */

static struct {
	int lfd;
	uint16_t port;
	pthread_t th;
} pair;

/* Accept one connection; answer "ok\n" to every 4 bytes (a message the
 * client sends in two writes), until EOF. */
static void *pair_main(void *arg)
{
	char buf[256];
	size_t have = 0;
	ssize_t r;

	(void)arg;
	int fd = accept(pair.lfd, NULL, NULL);
	assert_true(fd >= 0);
	while ((r = recv(fd, buf, sizeof(buf), 0)) > 0)
		for (have += (size_t)r; have >= 4; have -= 4)
			send(fd, "ok\n", 3, MSG_NOSIGNAL);
	close(fd);
	return NULL;
}

/* TCP_NODELAY on this process's TCP socket connected to 127.0.0.1:@peer
 * (the broker's own descriptors live in this process); -1 if none. */
static int nodelay_of_socket_to(uint16_t peer)
{
	for (int fd = 3; fd < 4096; fd++) {
		struct sockaddr_in sa;
		socklen_t sl = sizeof(sa);
		int v = 0, type = 0;
		socklen_t vl = sizeof(v), tl = sizeof(type);
		if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_STREAM)
			continue;
		if (getpeername(fd, (struct sockaddr *)&sa, &sl) < 0 || sa.sin_family != AF_INET ||
		    ntohs(sa.sin_port) != peer)
			continue;
		if (getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &vl) == 0)
			return v != 0;
	}
	return -1;
}

/*
 * A message sent in two small writes, answered after both arrive, 200 times
 * in one tunnel: with Nagle's algorithm on the relay's sockets the second
 * write waits for the ACK of the first, which the server may delay by 40 ms
 * (it did: up to 61 of 280 round trips took 44 ms through `berth run`).  Both
 * of the relay's sockets have TCP_NODELAY, and no round trip takes 35 ms.
 */
static void test_small_writes(void **state)
{
	char pat[64], head[512], target[64], buf[8];
	int one = 1, slow = 0;
	double worst = 0;

	(void)state;
	pair.lfd = listen_tcp(&pair.port);
	snprintf(pat, sizeof(pat), "127.0.0.1:%u", pair.port);
	const char *const pats[] = {pat, NULL};
	start(pats, 0, 0);
	assert_int_equal(pthread_create(&pair.th, NULL, pair_main, NULL), 0);
	snprintf(target, sizeof(target), "127.0.0.1:%u", pair.port);
	int fd = proxy_connect(target, head, sizeof(head));
	assert_string_equal(head, "HTTP/1.1 200 Connection established\r\n\r\n");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (int i = 0; i < 200; i++) {
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		send_str(fd, "a\n");
		send_str(fd, "b\n");
		recv_exact(fd, buf, 3);
		clock_gettime(CLOCK_MONOTONIC, &b);
		assert_memory_equal(buf, "ok\n", 3);
		double ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
		worst = ms > worst ? ms : worst;
		slow += ms >= 35;
	}
	print_message("200 round trips of two small writes: %d took 35 ms or more, worst %.1f ms\n", slow,
		      worst);
	struct sockaddr_in me;
	socklen_t ml = sizeof(me);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&me, &ml), 0);
	assert_int_equal(nodelay_of_socket_to(pair.port), 1);          /* the broker's upstream socket */
	assert_int_equal(nodelay_of_socket_to(ntohs(me.sin_port)), 1); /* its client socket */
	assert_int_equal(slow, 0);
	close(fd);
	pthread_join(pair.th, NULL);
	close(pair.lfd);
	stop();
}

/* Random bytes and random cuts of valid requests on both ports: answered or closed, never a crash. */
static void test_garbage(void **state)
{
	static const char *const pats[] = {"%E", "*.test", NULL};
	static const char *const seeds[] = {"CONNECT 127.0.0.1:1 HTTP/1.1\r\n\r\n",
					    "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n",
					    "\x05\x01\x00\x05\x01\x00\x03\x06"
					    "a.test\x00\x50",
					    "\x04\x01\x00\x50\x7f\x00\x00\x01\x00"};
	char buf[512], head[512], target[64];
	unsigned seed = 12345;

	(void)state;
	start(pats, 0, 300);
	for (int i = 0; i < 300; i++) {
		int fd = dial(i % 2 ? bk.socks_port : bk.http_port);
		const char *s = seeds[rand_r(&seed) % 4];
		size_t n = strlen(s) + (s[0] == 5 ? 6 : 0);
		memcpy(buf, s, n);
		for (int k = rand_r(&seed) % 4; k-- > 0;)
			buf[rand_r(&seed) % n] = (char)rand_r(&seed);
		n = (size_t)rand_r(&seed) % (n + 1);
		send(fd, buf, n, MSG_NOSIGNAL);
		if (rand_r(&seed) % 2)
			shutdown(fd, SHUT_WR);
		struct timeval tv = {.tv_sec = 0, .tv_usec = 20000};
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		recv(fd, buf, sizeof(buf), 0);
		close(fd);
	}
	snprintf(target, sizeof(target), "127.0.0.1:%u", echo.port);
	int fd = proxy_connect(target, head, sizeof(head));
	assert_non_null(strstr(head, " 200 "));
	close(fd);
	stop();
}

static void test_dns_server_option(void **state)
{
	struct berth_error err;
	struct berth_broker_opts o = {.dns_server = "127.0.0.1:0x35"};

	(void)state;
	assert_null(berth_broker_new(&o, &err));
	assert_non_null(strstr(err.msg, "invalid DNS server `127.0.0.1:0x35`"));
	o.dns_server = "[::1]:5353";
	struct berth_broker *b = berth_broker_new(&o, &err);
	assert_non_null(b);
	berth_broker_stop(b); /* before run: run returns at once */
	assert_int_equal(berth_broker_run(b), 0);
	berth_broker_free(b);
}

/* One query to the resolver at @port: the answer's RCODE, ANCOUNT and (for
 * one A record) its address in @a. */
static void resolve_via(uint16_t port, const char *name, unsigned qtype, int *rcode, int *ancount,
			uint8_t a[4])
{
	uint8_t q[300], r[512];
	size_t o = 12;
	struct sockaddr_in sa = {
	    .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct timeval tv = {.tv_sec = 5};

	memset(q, 0, 12);
	q[0] = 0xAB, q[1] = 0xCD, q[2] = 1, q[5] = 1;
	for (const char *p = name; *p != '\0';) {
		const char *dot = strchr(p, '.');
		size_t l = dot != NULL ? (size_t)(dot - p) : strlen(p);
		q[o++] = (uint8_t)l;
		memcpy(q + o, p, l);
		o += l;
		p += l + (dot != NULL);
	}
	q[o++] = 0, q[o++] = (uint8_t)(qtype >> 8), q[o++] = (uint8_t)qtype, q[o++] = 0, q[o++] = 1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	assert_int_equal(sendto(fd, q, o, 0, (struct sockaddr *)&sa, sizeof sa), (ssize_t)o);
	ssize_t n = recv(fd, r, sizeof r, 0);
	close(fd);
	assert_true(n >= 12);
	assert_int_equal(r[0], 0xAB);
	assert_int_equal(r[1], 0xCD);
	*rcode = r[3] & 0xF;
	*ancount = r[7];
	if (*ancount == 1) {
		assert_int_equal(n, (ssize_t)o + 16);
		memcpy(a, r + o + 12, 4);
	}
}

/* The sandbox's resolver and a transparent listener (docs/egress.md
 * "Clients that ignore the proxy"): declared names get an address of the
 * resolver's own and nothing is resolved for real until a connection; an
 * undeclared name is NXDOMAIN and a refusal; a connection (or a proxy
 * request) to a given address means its name; a transparent connection to
 * an undeclared destination is reset. */
static void test_resolver(void **state)
{
	static const char *const pats[] = {"loop.test", "*.wild.test", NULL};
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof sa;
	uint16_t rport, tport;
	uint8_t a[4] = {0}, a2[4] = {0};
	int rc, an;
	char head[512], body[512], want[64];

	(void)state;
	clear_dns_log();
	extra.dns_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(extra.dns_fd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(getsockname(extra.dns_fd, (struct sockaddr *)&sa, &sl), 0);
	rport = ntohs(sa.sin_port);
	extra.transparent_fd = listen_tcp(&tport);
	start(pats, 0, 0);

	resolve_via(rport, "Loop.Test", 1, &rc, &an, a);
	assert_int_equal(rc, 0);
	assert_int_equal(an, 1);
	assert_memory_equal(a, ((uint8_t[]){198, 18, 0, 1}), 4);
	resolve_via(rport, "loop.test", 28, &rc, &an, a2); /* AAAA: no record */
	assert_int_equal(rc, 0);
	assert_int_equal(an, 0);
	resolve_via(rport, "x.wild.test", 1, &rc, &an, a2);
	assert_int_equal(rc, 0);
	assert_int_equal(an, 1);
	assert_memory_equal(a2, ((uint8_t[]){198, 18, 0, 2}), 4);
	resolve_via(rport, "loop.test", 1, &rc, &an, a2); /* the same address again */
	assert_memory_equal(a, a2, 4);
	resolve_via(rport, "evil.test", 1, &rc, &an, a2);
	assert_int_equal(rc, 3); /* NXDOMAIN */
	assert_int_equal(an, 0);
	/* the resolver never asked the real DNS for anything */
	assert_false(dns_asked("loop.test"));
	assert_false(dns_asked("evil.test"));

	/* a CONNECT to the given address is a request for the name: resolved
	 * now, and refused for its real (loopback) address */
	int fd = proxy_connect("198.18.0.1:80", head, sizeof(head));
	assert_non_null(strstr(head, "HTTP/1.1 403 "));
	recv_all(fd, body, sizeof(body));
	assert_non_null(strstr(body, "loop.test:80 (`loop.test` resolves to 127.0.0.1: loopback"));
	close(fd);
	assert_true(dns_asked("loop.test"));
	/* the same address as an IPv4-mapped IPv6 one (a dual-stack client's
	 * spelling of it, in CONNECT or SOCKS5's IPv6 form) means the name too */
	fd = proxy_connect("[::ffff:198.18.0.1]:80", head, sizeof(head));
	assert_non_null(strstr(head, "HTTP/1.1 403 "));
	recv_all(fd, body, sizeof(body));
	assert_non_null(strstr(body, "loop.test:80 (`loop.test` resolves to 127.0.0.1: loopback"));
	close(fd);
	/* an address in the range that was never given is only itself */
	fd = proxy_connect("198.18.0.9:80", head, sizeof(head));
	assert_non_null(strstr(head, "HTTP/1.1 403 "));
	recv_all(fd, body, sizeof(body));
	assert_non_null(strstr(body, "198.18.0.9:80 (not declared)"));
	close(fd);

	/* transparent: 127.0.0.1:tport is not declared: reset, nothing sent */
	fd = dial(tport);
	/* the reset may come before the send (the broker does not wait for a
	 * byte): then the send, not the recv, is the one that sees it */
	static const char get[] = "GET / HTTP/1.0\r\n\r\n";
	char c;
	errno = 0;
	if (send(fd, get, sizeof get - 1, MSG_NOSIGNAL) < 0) {
		assert_true(errno == ECONNRESET || errno == EPIPE);
	} else {
		errno = 0;
		assert_true(recv(fd, &c, 1, 0) < 0);
		assert_int_equal(errno, ECONNRESET);
	}
	close(fd);
	stop();
	snprintf(want, sizeof want, "127.0.0.1:%u (not declared)", tport);
	bool dns_rec = false, tr_rec = false;
	for (size_t i = 0; i < bk.n; i++) {
		if (bk.d[i].kind == BERTH_BROKER_DNS && strcmp(bk.d[i].host, "evil.test") == 0) {
			dns_rec = true;
			assert_int_equal(bk.d[i].outcome, BERTH_BROKER_REFUSED);
			assert_int_equal(bk.d[i].port, 0);
			assert_string_equal(bk.d[i].reason, "not declared");
		}
		if (bk.d[i].kind == BERTH_BROKER_TRANSPARENT) {
			tr_rec = true;
			assert_int_equal(bk.d[i].outcome, BERTH_BROKER_REFUSED);
			assert_string_equal(bk.d[i].host, "127.0.0.1");
			assert_int_equal(bk.d[i].port, tport);
		}
	}
	assert_true(dns_rec);
	assert_true(tr_rec);
}

/* A flood of refused lookups (free for the sandbox) takes at most half of
 * the summary's list: a connection refused after it is still named. */
static void test_lookup_flood(void **state)
{
	static const char *const pats[] = {"allowed.test", NULL};
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof sa;
	uint8_t a[4];
	int rc, an;
	char head[512], line[600], name[64];

	(void)state;
	extra.dns_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(extra.dns_fd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(getsockname(extra.dns_fd, (struct sockaddr *)&sa, &sl), 0);
	uint16_t rport = ntohs(sa.sin_port);
	start(pats, 0, 0);
	for (int i = 0; i < BERTH_BROKER_REFUSED_MAX + 8; i++) {
		snprintf(name, sizeof name, "flood%d.test", i);
		resolve_via(rport, name, 1, &rc, &an, a);
		assert_int_equal(rc, 3);
	}
	int fd = proxy_connect("evil.test:443", head, sizeof(head));
	assert_non_null(strstr(head, "HTTP/1.1 403 "));
	close(fd);
	size_t n = berth_broker_refused_count(bk.b), lookups = 0;
	bool named = false;
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(berth_broker_refused(bk.b, i, line, sizeof line), 0);
		lookups += strstr(line, "(name lookup: ") != NULL;
		named = named || strcmp(line, "evil.test:443 (not declared)") == 0;
	}
	assert_int_equal(lookups, BERTH_BROKER_REFUSED_MAX / 2);
	assert_true(named);
	assert_int_equal(berth_broker_refused_unlisted(bk.b), BERTH_BROKER_REFUSED_MAX / 2 + 8);
	stop();
}

/* One connection handed over on @sock (struct berth_broker_handoff and one
 * descriptor, or none when @with_fd is false); returns our end. */
static int hand_over(int sock, uint32_t kind, const char *dst, uint32_t port, size_t size, bool with_fd)
{
	struct berth_broker_handoff h = {.kind = kind, .port = port};
	int sp[2];
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = &h, .iov_len = size};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	snprintf(h.dst, sizeof h.dst, "%s", dst);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
	if (with_fd) {
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof u.buf;
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &sp[1], sizeof(int));
	}
	assert_int_equal(sendmsg(sock, &mh, MSG_NOSIGNAL), (ssize_t)size);
	close(sp[1]);
	struct timeval tv = {.tv_sec = 5};
	setsockopt(sp[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	return sp[0];
}

/* Connections handed over on a BERTH_BROKER_HANDOFF socket (a microVM's,
 * src/vm/relay.c) are decided as the listeners' are: a transparent one on
 * the claimed destination (declared: relayed; undeclared: refused and
 * closed, unsent), an HTTP one on its request; a malformed message is
 * dropped with its descriptor, an unparsable destination refused as
 * unknown.  Tagged DNS answers carry their query's tag back. */
static void test_handoff(void **state)
{
	static const char *const pats[] = {"%E", "loop.test", NULL};
	int hs[2], ds[2], fd;
	char head[512], buf[64], dst[64];
	uint8_t q[64], r[600];
	size_t o = 12;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, hs), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, ds), 0);
	extra.handoff_fd = hs[1];
	extra.tagged_fd = ds[1];
	start(pats, 0, 0);

	/* transparent, declared: the bytes reach the echo server and return */
	fd = hand_over(hs[0], BERTH_BROKER_TRANSPARENT, "127.0.0.1", echo.port,
		       sizeof(struct berth_broker_handoff), true);
	send_str(fd, "ping");
	recv_exact(fd, buf, 4);
	assert_memory_equal(buf, "ping", 4);
	close(fd);
	/* transparent, undeclared port: closed, nothing relayed */
	fd = hand_over(hs[0], BERTH_BROKER_TRANSPARENT, "127.0.0.1", web.port,
		       sizeof(struct berth_broker_handoff), true);
	assert_true(recv(fd, buf, sizeof buf, 0) <= 0);
	close(fd);
	/* not an address: refused as a destination unknown */
	fd = hand_over(hs[0], BERTH_BROKER_TRANSPARENT, "127.0.0.1:80", 80,
		       sizeof(struct berth_broker_handoff), true);
	assert_true(recv(fd, buf, sizeof buf, 0) <= 0);
	close(fd);
	/* HTTP: a CONNECT as on the HTTP listener */
	fd = hand_over(hs[0], BERTH_BROKER_HTTP, "", 0, sizeof(struct berth_broker_handoff), true);
	snprintf(dst, sizeof dst, "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n", echo.port);
	send_str(fd, dst);
	recv_head(fd, head, sizeof head);
	assert_non_null(strstr(head, "HTTP/1.1 200 "));
	close(fd);
	/* malformed: short, or an unknown kind: the descriptor is closed */
	fd = hand_over(hs[0], BERTH_BROKER_TRANSPARENT, "127.0.0.1", echo.port, 8, true);
	assert_int_equal(recv(fd, buf, sizeof buf, 0), 0);
	close(fd);
	fd = hand_over(hs[0], 9, "127.0.0.1", echo.port, sizeof(struct berth_broker_handoff), true);
	assert_int_equal(recv(fd, buf, sizeof buf, 0), 0);
	close(fd);
	close(hand_over(hs[0], BERTH_BROKER_HTTP, "", 0, sizeof(struct berth_broker_handoff), false));

	/* tagged DNS: the tag comes back with the answer */
	memset(q, 0, sizeof q);
	memcpy(q, "\x01\x02\x03\x04", 4);
	q[4] = 0x12, q[5] = 0x34, q[6] = 1, q[9] = 1;
	o = 16;
	static const uint8_t qname[] = "\x04loop\x04test";
	memcpy(q + o, qname, sizeof qname);
	o += sizeof qname;
	q[o++] = 0, q[o++] = 1, q[o++] = 0, q[o++] = 1;
	assert_int_equal(send(ds[0], q, o, 0), (ssize_t)o);
	struct timeval tv = {.tv_sec = 5};
	setsockopt(ds[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	ssize_t n = recv(ds[0], r, sizeof r, 0);
	assert_true(n >= 16);
	assert_memory_equal(r, "\x01\x02\x03\x04\x12\x34", 6);
	assert_int_equal(r[4 + 3] & 0xF, 0);                /* NOERROR */
	assert_int_equal(r[4 + 7], 1);                      /* one answer */
	assert_int_equal(send(ds[0], "\x01\x02", 2, 0), 2); /* no tag and query: no answer */
	stop();

	bool allowed = false, refused = false, unknown = false, http = false;
	for (size_t i = 0; i < bk.n; i++) {
		if (bk.d[i].kind == BERTH_BROKER_TRANSPARENT && bk.d[i].outcome == BERTH_BROKER_ALLOWED &&
		    bk.d[i].port == echo.port && strcmp(bk.d[i].host, "127.0.0.1") == 0)
			allowed = true;
		if (bk.d[i].kind == BERTH_BROKER_TRANSPARENT && bk.d[i].outcome == BERTH_BROKER_REFUSED &&
		    bk.d[i].port == web.port && strstr(bk.d[i].reason, "not declared") != NULL)
			refused = true;
		if (bk.d[i].kind == BERTH_BROKER_TRANSPARENT && bk.d[i].outcome == BERTH_BROKER_REFUSED &&
		    strcmp(bk.d[i].reason, "the destination of the connection is unknown") == 0)
			unknown = true;
		if (bk.d[i].kind == BERTH_BROKER_HTTP && bk.d[i].outcome == BERTH_BROKER_ALLOWED)
			http = true;
	}
	assert_true(allowed);
	assert_true(refused);
	assert_true(unknown);
	assert_true(http);
	close(hs[0]);
	close(ds[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_connect_tunnel),  cmocka_unit_test(test_plain_get),
	    cmocka_unit_test(test_pipelined_plain), cmocka_unit_test(test_chunked_body),
	    cmocka_unit_test(test_undeclared_host), cmocka_unit_test(test_undeclared_port),
	    cmocka_unit_test(test_private_answer),  cmocka_unit_test(test_socks),
	    cmocka_unit_test(test_bad_requests),    cmocka_unit_test(test_tunnel_cap),
	    cmocka_unit_test(test_many_tunnels),    cmocka_unit_test(test_dns_server_option),
	    cmocka_unit_test(test_garbage),         cmocka_unit_test(test_stalled_reader),
	    cmocka_unit_test(test_small_writes),    cmocka_unit_test(test_resolver),
	    cmocka_unit_test(test_lookup_flood),    cmocka_unit_test(test_handoff),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
