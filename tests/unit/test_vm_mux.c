/* SPDX-License-Identifier: MIT */
/*
 * test_vm_mux.c - the channel's flow control and streams (src/vm/proto.h,
 * src/vm/mux.h): the new frame types parse and the next one does not;
 * the credit's accounting and the peer's breaches of it; two stream sets
 * joined by an in-memory channel relay bytes, half-closes and resets
 * between real sockets, and a reader that does not read stops its sender
 * at one window.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/buf.h"
#include "vm/proto.h"
#include "vm/mux.h"

static void put_frame(unsigned char *b, uint16_t type, uint16_t chan, uint32_t len)
{
	berth_vm_put_u32(b, BERTH_VM_MAGIC);
	berth_vm_put_u32(b + 4, len);
	berth_vm_put_u16(b + 8, type);
	berth_vm_put_u16(b + 10, chan);
}

static void test_new_types(void **state)
{
	unsigned char b[BERTH_VM_HDR + 4] = {0};
	struct berth_vm_frame f;
	struct berth_error err = {0};
	size_t used;

	(void)state;
	for (uint16_t t = BERTH_VM_OPEN; t <= BERTH_VM_HOME; t++) {
		put_frame(b, t, 17, 4);
		assert_int_equal(berth_vm_parse(b, sizeof b, &f, &used, &err), 1);
		assert_int_equal(f.type, t);
		assert_int_equal(f.chan, 17);
		assert_int_equal(used, sizeof b);
	}
	put_frame(b, BERTH_VM_HOME + 1, 0, 4);
	assert_int_equal(berth_vm_parse(b, sizeof b, &f, &used, &err), -1);
	assert_non_null(strstr(err.msg, "unknown type 18"));
}

static void test_credit(void **state)
{
	struct berth_vm_credit c;
	struct berth_error err = {0};
	unsigned char g[4];

	(void)state;
	berth_vm_credit_init(&c);
	assert_int_equal(c.can_send, BERTH_VM_WINDOW);
	assert_int_equal(c.may_recv, BERTH_VM_WINDOW);
	/* sending spends it; a grant past the window is the peer's breach */
	berth_vm_credit_sent(&c, 1000);
	assert_int_equal(c.can_send, BERTH_VM_WINDOW - 1000);
	berth_vm_put_u32(g, 1001);
	assert_int_equal(berth_vm_credit_grant(&c, g, 4, &err), -1);
	assert_non_null(strstr(err.msg, "granted 1001 bytes"));
	assert_int_equal(c.can_send, BERTH_VM_WINDOW - 1000);
	berth_vm_put_u32(g, 1000);
	assert_int_equal(berth_vm_credit_grant(&c, g, 4, &err), 0);
	assert_int_equal(c.can_send, BERTH_VM_WINDOW);
	assert_int_equal(berth_vm_credit_grant(&c, g, 3, &err), -1); /* not a u32 */
	/* receiving: never past the credit given */
	assert_int_equal(berth_vm_credit_recv(&c, BERTH_VM_WINDOW, &err), 0);
	assert_int_equal(berth_vm_credit_recv(&c, 1, &err), -1);
	assert_non_null(strstr(err.msg, "past its credit of 0"));
	/* grants come in quarter windows, and never more than was taken */
	assert_int_equal(berth_vm_credit_handed(&c, BERTH_VM_WINDOW / 4 - 1), 0);
	assert_int_equal(berth_vm_credit_handed(&c, 1), BERTH_VM_WINDOW / 4);
	assert_int_equal(c.may_recv, BERTH_VM_WINDOW / 4);
	assert_int_equal(berth_vm_credit_handed(&c, BERTH_VM_WINDOW), 3 * BERTH_VM_WINDOW / 4);
	assert_int_equal(c.may_recv, BERTH_VM_WINDOW);
	assert_int_equal(berth_vm_credit_handed(&c, 100), 0);
	assert_int_equal(c.may_recv, BERTH_VM_WINDOW);
}

/* Two sides, each a stream set whose frames go into the other's inbox. */
struct side {
	struct berth_vm_mux ss;
	struct berth_buf inbox; /* frames the other side sent, unread */
	struct side *peer;
	size_t frames_data;
};

static int send_frame(void *arg, uint16_t type, uint16_t chan, const void *p, size_t len,
		      struct berth_error *err)
{
	struct side *s = arg;
	unsigned char h[BERTH_VM_HDR];

	(void)err;
	put_frame(h, type, chan, (uint32_t)len);
	berth_buf_put(&s->peer->inbox, h, sizeof h);
	if (len > 0)
		berth_buf_put(&s->peer->inbox, p, len);
	assert_false(s->peer->inbox.oom);
	if (type == BERTH_VM_DATA)
		s->frames_data++;
	return 0;
}

/* Every frame in @s's inbox to its streams; their return (1 each, or -1). */
static int deliver(struct side *s)
{
	size_t off = 0;
	int rc = 1;

	while (off < s->inbox.len) {
		struct berth_vm_frame f;
		struct berth_error err = {0};
		size_t used;
		assert_int_equal(
		    berth_vm_parse((unsigned char *)s->inbox.p + off, s->inbox.len - off, &f, &used, &err),
		    1);
		if (berth_vm_mux_frame(&s->ss, &f, &err) != 1)
			rc = -1;
		off += used;
	}
	s->inbox.len = 0;
	return rc;
}

/* One poll round of @s's streams (no waiting). */
static void step(struct side *s)
{
	struct pollfd p[BERTH_VM_MUX_MAX];
	struct berth_error err = {0};
	size_t n = berth_vm_mux_poll(&s->ss, p);

	assert_true(poll(p, n, 0) >= 0);
	assert_int_equal(berth_vm_mux_ready(&s->ss, p, n, &err), 0);
}

static void pump(struct side *a, struct side *b, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		step(a);
		step(b);
		deliver(a);
		deliver(b);
	}
}

struct pair {
	struct side a, b;
	int app_a, app_b; /* the sockets' far ends: the client and the broker */
	uint16_t id;
};

static void pair_open(struct pair *p)
{
	int sa[2], sb[2];
	struct berth_error err = {0};

	memset(p, 0, sizeof *p);
	p->a.peer = &p->b;
	p->b.peer = &p->a;
	berth_vm_mux_init(&p->a.ss, send_frame, &p->a);
	berth_vm_mux_init(&p->b.ss, send_frame, &p->b);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sa), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sb), 0);
	struct berth_vm_mux_stream *x = berth_vm_mux_add(&p->a.ss, sa[0], 0, &err);
	assert_non_null(x);
	assert_int_equal(x->id, BERTH_VM_STREAM_FIRST);
	p->id = x->id;
	assert_non_null(berth_vm_mux_add(&p->b.ss, sb[0], p->id, &err));
	p->app_a = sa[1];
	p->app_b = sb[1];
	fcntl(p->app_a, F_SETFL, O_NONBLOCK);
	fcntl(p->app_b, F_SETFL, O_NONBLOCK);
}

static void pair_close(struct pair *p)
{
	berth_vm_mux_close_all(&p->a.ss);
	berth_vm_mux_close_all(&p->b.ss);
	close(p->app_a);
	close(p->app_b);
	berth_buf_free(&p->a.inbox);
	berth_buf_free(&p->b.inbox);
}

static void test_stream_relay(void **state)
{
	struct pair p;
	char buf[64];

	(void)state;
	pair_open(&p);
	/* both ways, then half-closes; the streams end when both did */
	assert_int_equal(write(p.app_a, "hello", 5), 5);
	assert_int_equal(write(p.app_b, "world!", 6), 6);
	pump(&p.a, &p.b, 3);
	assert_int_equal(read(p.app_b, buf, sizeof buf), 5);
	assert_memory_equal(buf, "hello", 5);
	assert_int_equal(read(p.app_a, buf, sizeof buf), 6);
	assert_memory_equal(buf, "world!", 6);
	shutdown(p.app_a, SHUT_WR);
	pump(&p.a, &p.b, 3);
	assert_int_equal(read(p.app_b, buf, sizeof buf), 0); /* the EOF crossed */
	assert_int_equal(p.a.ss.n, 1);
	assert_int_equal(write(p.app_b, "late", 4), 4); /* the other way still open */
	shutdown(p.app_b, SHUT_WR);
	pump(&p.a, &p.b, 3);
	assert_int_equal(read(p.app_a, buf, sizeof buf), 4);
	assert_int_equal(read(p.app_a, buf, sizeof buf), 0);
	assert_int_equal(p.a.ss.n, 0);
	assert_int_equal(p.b.ss.n, 0);
	pair_close(&p);
}

/* The broker's end does not read: A's sender stops at one window, the
 * rest waits in the client's socket, and all of it arrives once read. */
static void test_stream_window(void **state)
{
	struct pair p;
	static unsigned char big[4u << 20], got[4u << 20];
	size_t sent = 0, have = 0;

	(void)state;
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (unsigned char)(i * 7 + (i >> 12));
	pair_open(&p);
	for (int i = 0; i < 200; i++) {
		ssize_t w = sent < sizeof big ? write(p.app_a, big + sent, sizeof big - sent) : 0;
		if (w > 0)
			sent += (size_t)w;
		pump(&p.a, &p.b, 1);
	}
	struct berth_vm_mux_stream *sb = berth_vm_mux_find(&p.b.ss, p.id);
	struct berth_vm_mux_stream *sa = berth_vm_mux_find(&p.a.ss, p.id);
	assert_non_null(sa);
	assert_non_null(sb);
	assert_int_equal(sa->cr.can_send, 0);                      /* A is stopped ... */
	assert_true(sb->out_len - sb->out_off <= BERTH_VM_WINDOW); /* B holds at most a window */
	assert_true(sent < sizeof big);                            /* ... and so is the client */
	while (have < sizeof big) {
		ssize_t r = read(p.app_b, got + have, sizeof got - have);
		if (r > 0)
			have += (size_t)r;
		ssize_t w = sent < sizeof big ? write(p.app_a, big + sent, sizeof big - sent) : 0;
		if (w > 0)
			sent += (size_t)w;
		pump(&p.a, &p.b, 1);
	}
	assert_memory_equal(got, big, sizeof big);
	pair_close(&p);
}

/* CLOSE resets the other end; DATA past the credit and DATA after EOF are
 * breaches; frames of a stream no longer open are dropped; ids. */
static void test_stream_errors(void **state)
{
	struct pair p;
	struct berth_error err = {0};
	char buf[16];
	static unsigned char payload[BERTH_VM_PAYLOAD_MAX];
	struct berth_vm_frame f = {.type = BERTH_VM_DATA, .payload = payload, .len = BERTH_VM_PAYLOAD_MAX};

	(void)state;
	pair_open(&p);
	f.chan = p.id;
	/* the broker's end reads nothing and its socket is full: four frames
	 * fill the window, a fifth is past it */
	while (send(berth_vm_mux_find(&p.b.ss, p.id)->fd, payload, sizeof payload, MSG_DONTWAIT) > 0)
		;
	for (int i = 0; i < 4; i++)
		assert_int_equal(berth_vm_mux_frame(&p.b.ss, &f, &err), 1);
	f.len = 1;
	assert_int_equal(berth_vm_mux_frame(&p.b.ss, &f, &err), -1);
	assert_non_null(strstr(err.msg, "past its credit"));
	/* after EOF, DATA is a breach */
	struct berth_vm_frame eof = {.type = BERTH_VM_EOF, .chan = p.id};
	assert_int_equal(berth_vm_mux_frame(&p.a.ss, &eof, &err), 1);
	f.len = 1;
	assert_int_equal(berth_vm_mux_frame(&p.a.ss, &f, &err), -1);
	assert_non_null(strstr(err.msg, "after its EOF"));
	/* CLOSE: the stream is gone, its socket's peer sees the end */
	struct berth_vm_frame cl = {.type = BERTH_VM_CLOSE, .chan = p.id};
	assert_int_equal(berth_vm_mux_frame(&p.b.ss, &cl, &err), 1);
	assert_int_equal(p.b.ss.n, 0);
	ssize_t r;
	while ((r = read(p.app_b, buf, sizeof buf)) > 0)
		; /* the bytes it had, then the end */
	assert_int_equal(r, 0);
	/* a frame of that stream now: dropped */
	assert_int_equal(berth_vm_mux_frame(&p.b.ss, &f, &err), 1);
	/* a reset of the local end becomes CLOSE to the peer */
	berth_vm_mux_abort(&p.a.ss, berth_vm_mux_find(&p.a.ss, p.id), true);
	assert_int_equal(p.a.ss.n, 0);
	assert_true(p.b.inbox.len >= BERTH_VM_HDR);
	assert_int_equal(berth_vm_get_u16((unsigned char *)p.b.inbox.p + 8), BERTH_VM_CLOSE);
	/* not a stream's frame: stdin's chan, or another type */
	struct berth_vm_frame in = {.type = BERTH_VM_DATA, .chan = BERTH_VM_STDIN};
	assert_int_equal(berth_vm_mux_frame(&p.b.ss, &in, &err), 0);
	struct berth_vm_frame op = {.type = BERTH_VM_OPEN, .chan = 40};
	assert_int_equal(berth_vm_mux_frame(&p.b.ss, &op, &err), 0);
	/* ids: below the first, and one open twice */
	int s2[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s2), 0);
	assert_null(berth_vm_mux_add(&p.b.ss, s2[0], 3, &err));
	assert_int_equal(err.errnum, EINVAL);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s2 + 0), 0);
	assert_non_null(berth_vm_mux_add(&p.b.ss, s2[0], 99, &err));
	int s3[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s3), 0);
	assert_null(berth_vm_mux_add(&p.b.ss, s3[0], 99, &err));
	assert_int_equal(err.errnum, EEXIST);
	close(s3[1]);
	close(s2[1]);
	pair_close(&p);
}

/* A full set refuses (EMFILE) and closes the descriptor; new ids skip the
 * open ones and wrap past 65535 to the first. */
static void test_stream_ids(void **state)
{
	struct berth_vm_mux *ss = malloc(sizeof *ss);
	struct berth_error err = {0};
	int sp[2];

	(void)state;
	struct side dummy = {.peer = &dummy};
	berth_vm_mux_init(ss, send_frame, &dummy);
	for (int i = 0; i < BERTH_VM_MUX_MAX; i++) {
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
		close(sp[1]);
		assert_non_null(berth_vm_mux_add(ss, sp[0], 0, &err));
	}
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
	assert_null(berth_vm_mux_add(ss, sp[0], 0, &err));
	assert_int_equal(err.errnum, EMFILE);
	assert_int_equal(fcntl(sp[0], F_GETFD), -1); /* closed */
	close(sp[1]);
	berth_vm_mux_close_all(ss);
	ss->n = 0;
	ss->next_id = UINT16_MAX;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
	close(sp[1]);
	assert_int_equal(berth_vm_mux_add(ss, sp[0], 0, &err)->id, UINT16_MAX);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
	close(sp[1]);
	assert_int_equal(berth_vm_mux_add(ss, sp[0], 0, &err)->id, BERTH_VM_STREAM_FIRST);
	berth_vm_mux_close_all(ss);
	berth_buf_free(&dummy.inbox);
	free(ss);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_new_types),     cmocka_unit_test(test_credit),
	    cmocka_unit_test(test_stream_relay),  cmocka_unit_test(test_stream_window),
	    cmocka_unit_test(test_stream_errors), cmocka_unit_test(test_stream_ids),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
