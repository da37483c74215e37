/* SPDX-License-Identifier: MIT */
/*
 * test_dns.c - the broker's resolver (src/broker/dns.c) on a libevent loop
 * against a UDP DNS responder on 127.0.0.1 that counts every query it gets:
 * concurrent requests for one name share one lookup (one A and one AAAA
 * query, every request answered), a cancelled request is not called back,
 * nothing is cached (the next request asks again), different names are
 * separate lookups, a callback may ask for the same name again, and freeing
 * the resolver with lookups in flight calls nothing back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "broker/dns.h"

/* ---- the responder: A 198.51.100.<n> for "a<n>.test", AAAA empty, "slow.test" never answered */

static struct {
	int fd;
	uint16_t port;
	atomic_bool stop;
	atomic_uint queries_a, queries_aaaa;
	pthread_t th;
} srv;

static void *srv_main(void *arg)
{
	uint8_t q[512], a[512];

	(void)arg;
	while (!atomic_load(&srv.stop)) {
		struct pollfd p = {.fd = srv.fd, .events = POLLIN};
		if (poll(&p, 1, 20) <= 0)
			continue;
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(srv.fd, q, sizeof(q), 0, (struct sockaddr *)&from, &fl);
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
			for (size_t k = 0; k < l; k++) /* DNS names are case-insensitive (RFC 4343) */
				name[nl + k] = (char)((q[off + 1 + k] >= 'A' && q[off + 1 + k] <= 'Z')
							  ? q[off + 1 + k] + 32
							  : q[off + 1 + k]);
			nl += l;
			name[nl] = '\0';
			off += 1 + l;
		}
		if (off + 5 > (size_t)n)
			continue;
		off++;
		unsigned qtype = (unsigned)(q[off] << 8 | q[off + 1]);
		off += 4;
		if (qtype == 1)
			atomic_fetch_add(&srv.queries_a, 1);
		else if (qtype == 28)
			atomic_fetch_add(&srv.queries_aaaa, 1);
		if (strcasecmp(name, "slow.test") == 0)
			continue;
		unsigned idx = 0;
		bool known = sscanf(name, "a%u.test", &idx) == 1 && idx < 256;
		memcpy(a, q, off);
		a[2] = 0x84 | (q[2] & 1);
		a[3] = known ? 0x80 : 0x83;
		a[4] = 0, a[5] = 1;
		a[6] = a[7] = a[8] = a[9] = a[10] = a[11] = 0;
		size_t w = off;
		if (known && qtype == 1) {
			uint8_t rr[16] = {0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 198, 51, 100, (uint8_t)idx};
			memcpy(a + w, rr, sizeof(rr));
			w += sizeof(rr);
			a[7] = 1;
		}
		sendto(srv.fd, a, w, 0, (struct sockaddr *)&from, fl);
	}
	return NULL;
}

static int setup(void **state)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);

	(void)state;
	srv.fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(srv.fd >= 0);
	assert_int_equal(bind(srv.fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(srv.fd, (struct sockaddr *)&sa, &sl), 0);
	srv.port = ntohs(sa.sin_port);
	atomic_store(&srv.stop, false);
	assert_int_equal(pthread_create(&srv.th, NULL, srv_main, NULL), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	atomic_store(&srv.stop, true);
	pthread_join(srv.th, NULL);
	close(srv.fd);
	return 0;
}

/* ---- the client side ------------------------------------------------------ */

struct result {
	int calls, status;
	size_t n;
	char addr[64];
	struct berth_dns *d;  /* for again_cb */
	struct result *again; /* again_cb: resolve the same name into this one */
	const char *again_name;
};

static void cb(void *arg, int status, const char *errtext, const struct berth_addr *addrs, size_t n)
{
	struct result *r = arg;

	(void)errtext;
	r->calls++;
	r->status = status;
	r->n = n;
	if (n > 0)
		berth_addr_format(&addrs[0], r->addr, sizeof(r->addr));
}

static void again_cb(void *arg, int status, const char *errtext, const struct berth_addr *addrs, size_t n)
{
	struct result *r = arg;

	cb(arg, status, errtext, addrs, n);
	berth_dns_resolve(r->d, r->again_name, cb, r->again);
}

static struct berth_dns *resolver(struct event_base **base)
{
	struct berth_error err = {0};
	char server[32];

	*base = event_base_new();
	assert_non_null(*base);
	snprintf(server, sizeof(server), "127.0.0.1:%u", srv.port);
	struct berth_dns *d = berth_dns_new(*base, server, &err);
	assert_non_null(d);
	atomic_store(&srv.queries_a, 0);
	atomic_store(&srv.queries_aaaa, 0);
	return d;
}

/* Run the loop until @done() or 10 s. */
static void loop_until(struct event_base *base, bool (*done)(void *), void *arg)
{
	time_t end = time(NULL) + 10;

	while (!done(arg) && time(NULL) < end) {
		struct timeval tv = {.tv_sec = 0, .tv_usec = 20000};
		event_base_loopexit(base, &tv);
		event_base_dispatch(base);
	}
}

struct many {
	struct result *r;
	size_t n;
	size_t skip; /* index not expected to be called (cancelled), or (size_t)-1 */
};

static bool all_called(void *arg)
{
	struct many *m = arg;

	for (size_t i = 0; i < m->n; i++)
		if (i != m->skip && m->r[i].calls == 0)
			return false;
	return true;
}

static void test_concurrent_requests_share_one_lookup(void **state)
{
	struct event_base *base;
	struct berth_dns *d = resolver(&base);
	static struct result r[500];
	struct many m = {r, 500, (size_t)-1};

	(void)state;
	memset(r, 0, sizeof(r));
	for (size_t i = 0; i < m.n; i++)
		assert_non_null(berth_dns_resolve(d, i % 2 ? "a7.test" : "A7.TEST", cb, &r[i]));
	loop_until(base, all_called, &m);
	for (size_t i = 0; i < m.n; i++) {
		assert_int_equal(r[i].calls, 1);
		assert_int_equal(r[i].status, 0);
		assert_int_equal(r[i].n, 1);
		assert_string_equal(r[i].addr, "198.51.100.7");
	}
	assert_int_equal(atomic_load(&srv.queries_a), 1);
	assert_int_equal(atomic_load(&srv.queries_aaaa), 1);
	berth_dns_free(d);
	event_base_free(base);
}

static void test_cancelled_request_is_not_called(void **state)
{
	struct event_base *base;
	struct berth_dns *d = resolver(&base);
	struct result r[3];
	struct many m = {r, 3, 1};

	(void)state;
	memset(r, 0, sizeof(r));
	struct berth_dns_query *q[3];
	for (size_t i = 0; i < 3; i++)
		q[i] = berth_dns_resolve(d, "a9.test", cb, &r[i]);
	berth_dns_cancel(q[1]);
	loop_until(base, all_called, &m);
	usleep(50000);
	event_base_loop(base, EVLOOP_NONBLOCK);
	assert_int_equal(r[0].calls, 1);
	assert_int_equal(r[1].calls, 0);
	assert_int_equal(r[2].calls, 1);
	assert_string_equal(r[2].addr, "198.51.100.9");
	/* The first request cancelled: the lookup still answers the others. */
	memset(r, 0, sizeof(r));
	m.skip = 0;
	for (size_t i = 0; i < 3; i++)
		q[i] = berth_dns_resolve(d, "a10.test", cb, &r[i]);
	berth_dns_cancel(q[0]);
	loop_until(base, all_called, &m);
	assert_int_equal(r[0].calls, 0);
	assert_int_equal(r[1].calls, 1);
	assert_int_equal(r[2].calls, 1);
	berth_dns_free(d);
	event_base_free(base);
}

static void test_nothing_is_cached(void **state)
{
	struct event_base *base;
	struct berth_dns *d = resolver(&base);
	struct result r[2];
	struct many m0 = {&r[0], 1, (size_t)-1}, m1 = {&r[1], 1, (size_t)-1};

	(void)state;
	memset(r, 0, sizeof(r));
	assert_non_null(berth_dns_resolve(d, "a11.test", cb, &r[0]));
	loop_until(base, all_called, &m0);
	assert_int_equal(r[0].calls, 1);
	assert_non_null(berth_dns_resolve(d, "a11.test", cb, &r[1]));
	loop_until(base, all_called, &m1);
	assert_int_equal(r[1].calls, 1);
	assert_string_equal(r[1].addr, "198.51.100.11");
	assert_int_equal(atomic_load(&srv.queries_a), 2); /* asked again: rebinding is seen */
	berth_dns_free(d);
	event_base_free(base);
}

static void test_different_names_and_errors(void **state)
{
	struct event_base *base;
	struct berth_dns *d = resolver(&base);
	struct result r[3];
	struct many m = {r, 3, (size_t)-1};

	(void)state;
	memset(r, 0, sizeof(r));
	berth_dns_resolve(d, "a1.test", cb, &r[0]);
	berth_dns_resolve(d, "a2.test", cb, &r[1]);
	berth_dns_resolve(d, "nosuch.test", cb, &r[2]);
	loop_until(base, all_called, &m);
	assert_string_equal(r[0].addr, "198.51.100.1");
	assert_string_equal(r[1].addr, "198.51.100.2");
	assert_int_equal(r[2].calls, 1);
	assert_int_equal(r[2].status, ENOENT);
	assert_int_equal(atomic_load(&srv.queries_a), 3);
	berth_dns_free(d);
	event_base_free(base);
}

static void test_callback_asks_again(void **state)
{
	struct event_base *base;
	struct berth_dns *d = resolver(&base);
	struct result first = {0}, second = {0}, other = {0};
	struct many m = {&second, 1, (size_t)-1};

	(void)state;
	first.d = d;
	first.again = &second;
	first.again_name = "a12.test";
	assert_non_null(berth_dns_resolve(d, "a12.test", again_cb, &first));
	assert_non_null(
	    berth_dns_resolve(d, "a12.test", cb, &other)); /* a waiter after the one that asks again */
	loop_until(base, all_called, &m);
	assert_int_equal(first.calls, 1);
	assert_int_equal(other.calls, 1);
	assert_int_equal(second.calls, 1);
	assert_string_equal(second.addr, "198.51.100.12");
	assert_int_equal(atomic_load(&srv.queries_a), 2); /* the answered lookup was not joined */
	berth_dns_free(d);
	event_base_free(base);
}

static void test_free_with_lookups_in_flight(void **state)
{
	struct event_base *base;
	struct berth_dns *d = resolver(&base);
	struct result r[4];

	(void)state;
	memset(r, 0, sizeof(r));
	for (size_t i = 0; i < 4; i++)
		assert_non_null(berth_dns_resolve(d, i < 2 ? "slow.test" : "SLOW.test", cb, &r[i]));
	for (int i = 0; i < 5; i++)
		event_base_loop(base, EVLOOP_NONBLOCK);
	usleep(100000);
	event_base_loop(base, EVLOOP_NONBLOCK);
	assert_int_equal(atomic_load(&srv.queries_a), 1);
	berth_dns_free(d); /* no callback, nothing leaked (ASan) */
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(r[i].calls, 0);
	event_base_free(base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_concurrent_requests_share_one_lookup),
	    cmocka_unit_test(test_cancelled_request_is_not_called),
	    cmocka_unit_test(test_nothing_is_cached),
	    cmocka_unit_test(test_different_names_and_errors),
	    cmocka_unit_test(test_callback_asks_again),
	    cmocka_unit_test(test_free_with_lookups_in_flight),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
