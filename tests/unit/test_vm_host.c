/* SPDX-License-Identifier: MIT */
/*
 * test_vm_host.c - the vm runtime's host half of the channel (src/vm/
 * channel.c, relay.c) against a fake guest on a socketpair: sync 1 to 3
 * with the hooks in order, the POLICY bytes and START's digest, the guest's
 * ERROR as the run's error, a failing hook sending no GO, a measurement of
 * the wrong size, the boot deadline naming the console's last line, and
 * the relay of stdio and EXIT, the RPC channel (chan 3: both ways, its
 * ends, the VM's death, a flood the supervisor does not read yet); the
 * stream of src/vm/stream.c on its own (its bound, its end, a reader
 * gone); and check()'s refusals.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "util/sha256.h"
#include "policy/credential.h"
#include "vm/vm_int.h"

enum guest_mode {
	G_OK,
	G_ERROR,
	G_BAD_MEASURE,
	G_OLD_PROTO,
	G_SILENT,
	G_RELAY,
	G_RPC,
	G_RPC_DIE,
	G_RPC_FLOOD
};

/* G_RPC_FLOOD: what the guest's command writes on its fd 3 at once */
#define FLOOD_BYTES (5u * BERTH_VM_STREAM_MAX / 2)

struct guest {
	int fd;
	enum guest_mode mode;
	/* what it saw */
	char policy[BERTH_VM_PAYLOAD_MAX + 1];
	char start[BERTH_VM_PAYLOAD_MAX + 1];
	uint32_t go[2];
	int n_go;
	bool saw_eof_after_ready; /* the host sent no GO and closed */
	char stdin_got[64];
	char rpc_got[64]; /* G_RPC: what came on chan 3 before its EOF */
	bool rpc_eof;
};

static struct berth_vm_frame gnext(struct guest *g, struct berth_vm_reader *r, bool *eof)
{
	struct berth_vm_frame f = {0};
	struct berth_error e = {0};

	*eof = berth_vm_read(g->fd, r, &f, &e) != 1;
	return f;
}

static void gsend(struct guest *g, uint16_t type, uint16_t chan, const void *p, size_t n)
{
	struct berth_error e = {0};

	berth_vm_write(g->fd, type, chan, p, n, &e);
}

/* G_RPC...: the command's side of chan 3 (after GO 3). */
static void guest_rpc(struct guest *g, struct berth_vm_reader *r)
{
	static unsigned char big[BERTH_VM_PAYLOAD_MAX];
	struct berth_vm_frame f;
	unsigned char b[4];
	size_t k = 0;
	bool eof;

	if (g->mode == G_RPC_FLOOD) {
		/* in order: byte i is i % 251, frames the most the channel takes */
		for (size_t off = 0; off < FLOOD_BYTES; off += sizeof big) {
			size_t n = FLOOD_BYTES - off < sizeof big ? FLOOD_BYTES - off : sizeof big;
			for (size_t i = 0; i < n; i++)
				big[i] = (unsigned char)((off + i) % 251);
			gsend(g, BERTH_VM_DATA, BERTH_VM_RPC, big, n);
		}
		gsend(g, BERTH_VM_EOF, BERTH_VM_RPC, NULL, 0);
	} else {
		gsend(g, BERTH_VM_DATA, BERTH_VM_RPC, "ready\n", 6);
	}
	if (g->mode == G_RPC_DIE)
		return; /* the VM gone: no EOF, no EXIT */
	while (g->mode == G_RPC) {
		f = gnext(g, r, &eof);
		if (eof)
			return;
		if (f.type == BERTH_VM_EOF && f.chan == BERTH_VM_RPC) {
			g->rpc_eof = true;
			break;
		}
		if (f.type == BERTH_VM_DATA && f.chan == BERTH_VM_RPC && k + f.len < sizeof g->rpc_got) {
			memcpy(g->rpc_got + k, f.payload, f.len);
			k += f.len;
		}
	}
	if (g->mode == G_RPC) {
		gsend(g, BERTH_VM_DATA, BERTH_VM_RPC, "answer", 6);
		gsend(g, BERTH_VM_EOF, BERTH_VM_RPC, NULL, 0);
	}
	berth_vm_put_u32(b, 0);
	gsend(g, BERTH_VM_EXIT, 0, b, sizeof b);
}

static void *guest_main(void *arg)
{
	struct guest *g = arg;
	static struct berth_vm_reader r;
	struct berth_vm_frame f;
	struct berth_measure m;
	unsigned char b[4];
	bool eof;
	const char *hello = g->mode == G_OLD_PROTO ? "{\"proto\":0}" : "{\"proto\":1,\"landlock_abi\":6}";

	berth_vm_reader_init(&r);
	if (g->mode == G_SILENT)
		return NULL;
	gsend(g, BERTH_VM_HELLO, 0, hello, strlen(hello));
	f = gnext(g, &r, &eof);
	if (eof || f.type != BERTH_VM_POLICY)
		return NULL;
	memcpy(g->policy, f.payload, f.len);
	f = gnext(g, &r, &eof);
	if (eof || f.type != BERTH_VM_START)
		return NULL;
	memcpy(g->start, f.payload, f.len);
	if (g->mode == G_ERROR) {
		const char *e =
		    "{\"status\":127,\"message\":\"command `nope` not found\",\"hint\":\"check PATH\"}";
		gsend(g, BERTH_VM_ERROR, 0, e, strlen(e));
		return NULL;
	}
	gsend(g, BERTH_VM_DATA, BERTH_VM_STDERR, "notice\n", 7);
	gsend(g, BERTH_VM_READY, 0, NULL, 0);
	f = gnext(g, &r, &eof);
	if (eof) {
		g->saw_eof_after_ready = true;
		return NULL;
	}
	g->go[g->n_go++] = berth_vm_get_u32(f.payload);
	memset(&m, 0, sizeof m);
	m.valid = true;
	m.landlock_ruleset_abi = 6;
	gsend(g, BERTH_VM_MEASURE, 0, &m, g->mode == G_BAD_MEASURE ? sizeof m - 1 : sizeof m);
	f = gnext(g, &r, &eof);
	if (eof)
		return NULL;
	g->go[g->n_go++] = berth_vm_get_u32(f.payload);
	if (g->mode == G_RELAY) {
		gsend(g, BERTH_VM_DATA, BERTH_VM_STDOUT, "out!", 4);
		gsend(g, BERTH_VM_DATA, BERTH_VM_STDERR, "err!", 4);
		gsend(g, BERTH_VM_EOF, BERTH_VM_STDOUT, NULL, 0);
		size_t k = 0;
		for (;;) {
			f = gnext(g, &r, &eof);
			if (eof || f.type == BERTH_VM_EOF)
				break;
			if (f.type == BERTH_VM_DATA && k + f.len < sizeof g->stdin_got) {
				memcpy(g->stdin_got + k, f.payload, f.len);
				k += f.len;
			}
		}
		berth_vm_put_u32(b, 3);
		gsend(g, BERTH_VM_EXIT, 0, b, sizeof b);
	}
	if (g->mode >= G_RPC)
		guest_rpc(g, &r);
	close(g->fd);
	g->fd = -1;
	return NULL;
}

/* The supervisor's hooks, recording their order. */
struct hooks_seen {
	char order[8];
	int n;
	bool fail_release;
	char run_id[17];
	int abi;
};

static int h_release(void *arg, struct berth_error *err)
{
	struct hooks_seen *h = arg;

	h->order[h->n++] = 'R';
	if (h->fail_release)
		return berth_err(err, 0, "the audit trail cannot record this run");
	return 0;
}

static int h_measured(void *arg, const char *run_id, const struct berth_measure *m, struct berth_error *err)
{
	struct hooks_seen *h = arg;

	(void)err;
	h->order[h->n++] = 'M';
	snprintf(h->run_id, sizeof h->run_id, "%s", run_id);
	h->abi = m->landlock_ruleset_abi;
	return 0;
}

struct fixture {
	struct berth_policy p;
	struct berth_runtime_opts o;
	struct hooks_seen seen;
	struct vm_rt vm;
	struct guest g;
	pthread_t t;
	bool joined;
	int errp[2]; /* the command's stderr, read by the test */
	char dir[64];
};

static void setup(struct fixture *x, enum guest_mode mode)
{
	int sp[2];
	char path[128];
	FILE *f;

	memset(x, 0, sizeof *x);
	berth_policy_init(&x->p);
	x->p.argv = calloc(2, sizeof *x->p.argv);
	x->p.argv[0] = strdup("true");
	x->p.argc = 1;
	x->p.env = calloc(1, sizeof *x->p.env);
	x->p.env[0].name = strdup("TOKEN");
	x->p.env[0].value = strdup("s3cret");
	x->p.n_env = 1;
	x->p.pids_set = true;
	x->p.evidence_dir = strdup("/var/evidence-copy");
	x->o.hooks =
	    (struct berth_run_hooks){.arg = &x->seen, .before_release = h_release, .on_measured = h_measured};
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
	assert_int_equal(pipe2(x->errp, O_CLOEXEC), 0);
	snprintf(x->dir, sizeof x->dir, "/tmp/test_vm_host.XXXXXX");
	assert_non_null(mkdtemp(x->dir));
	snprintf(path, sizeof path, "%s/console.log", x->dir);
	f = fopen(path, "w");
	fputs("[    0.1] booting\n[    1.2] the last line\n\n", f);
	fclose(f);
	x->vm.p = &x->p;
	x->vm.o = &x->o;
	snprintf(x->vm.run_id, sizeof x->vm.run_id, "0123456789abcdef");
	snprintf(x->vm.dir, sizeof x->vm.dir, "%s", x->dir);
	snprintf(x->vm.console, sizeof x->vm.console, "%s", path);
	x->vm.uid = 1000;
	x->vm.gid = 1000;
	x->vm.qemu = x->vm.virtiofsd = -1;
	x->vm.qemu_pidfd = x->vm.pty_master = x->vm.sfd = -1;
	x->vm.io.in = x->vm.io.out = x->vm.io.pty_slave = -1;
	x->vm.io.err = x->errp[1];
	berth_vm_stream_init(&x->vm.rpc, -1, BERTH_VM_RPC);
	x->vm.boot_timeout_ms = 5000;
	x->vm.handoff = x->vm.dns = -1;
	berth_vm_credit_init(&x->vm.stdin_cr);
	x->vm.rd = malloc(sizeof *x->vm.rd);
	berth_vm_reader_init(x->vm.rd);
	x->vm.chan = sp[0];
	fcntl(sp[0], F_SETFL, O_NONBLOCK);
	x->g.fd = sp[1];
	x->g.mode = mode;
	pthread_create(&x->t, NULL, guest_main, &x->g);
}

static void join(struct fixture *x)
{
	if (!x->joined)
		pthread_join(x->t, NULL);
	x->joined = true;
}

static void teardown(struct fixture *x)
{
	char path[128];

	if (x->vm.chan >= 0)
		close(x->vm.chan);
	x->vm.chan = -1;
	join(x);
	if (x->g.fd >= 0)
		close(x->g.fd);
	close(x->errp[0]);
	close(x->errp[1]);
	if (x->vm.io.in >= 0)
		close(x->vm.io.in);
	if (x->vm.io.out >= 0)
		close(x->vm.io.out);
	free(x->vm.rd);
	free(x->vm.outq);
	berth_vm_stream_close(&x->vm.rpc);
	berth_policy_free(&x->p);
	snprintf(path, sizeof path, "%s/console.log", x->dir);
	unlink(path);
	rmdir(x->dir);
}

static void test_handshake(void **state)
{
	struct fixture x;
	struct berth_error err = {0};
	char digest[65], *want, got[16] = "";

	(void)state;
	setup(&x, G_OK);
	assert_int_equal(berth_vm_handshake(&x.vm, &err), 0);
	join(&x);
	/* POLICY is the canonical JSON, byte for byte; START holds its digest */
	want = berth_policy_to_json(&x.p, false, &err);
	assert_string_equal(x.g.policy, want);
	assert_int_equal(berth_sha256_hex(want, strlen(want), digest, &err), 0);
	free(want);
	json_t *s = json_loads(x.g.start, 0, NULL);
	assert_non_null(s);
	assert_string_equal(json_string_value(json_object_get(s, "digest")), digest);
	assert_string_equal(json_string_value(json_object_get(s, "run_id")), "0123456789abcdef");
	assert_int_equal(json_integer_value(json_object_get(s, "uid")), 1000);
	assert_int_equal(json_integer_value(json_object_get(s, "gid")), 1000);
	assert_true(json_is_false(json_object_get(s, "tty")));
	assert_true(json_is_false(json_object_get(s, "memory_set")));
	assert_true(json_is_true(json_object_get(s, "pids_set")));
	assert_string_equal(json_string_value(json_object_get(s, "evidence_dir")), "/var/evidence-copy");
	json_t *e0 = json_array_get(json_object_get(s, "env"), 0);
	assert_string_equal(json_string_value(json_object_get(e0, "name")), "TOKEN");
	assert_string_equal(json_string_value(json_object_get(e0, "value")), "s3cret");
	json_decref(s);
	/* the value is not in the policy's bytes (its sha256 is) */
	assert_null(strstr(x.g.policy, "s3cret"));
	/* GO 2 after before_release, GO 3 after on_measured */
	assert_int_equal(x.g.n_go, 2);
	assert_int_equal(x.g.go[0], 2);
	assert_int_equal(x.g.go[1], 3);
	assert_int_equal(x.seen.n, 2);
	assert_memory_equal(x.seen.order, "RM", 2);
	assert_string_equal(x.seen.run_id, "0123456789abcdef");
	assert_int_equal(x.seen.abi, 6);
	assert_true(x.vm.measured);
	assert_int_equal(x.vm.hello_landlock_abi, 6);
	/* DATA before READY (a guest notice) reached the command's stderr */
	assert_int_equal(read(x.errp[0], got, sizeof got - 1), 7);
	assert_string_equal(got, "notice\n");
	struct berth_enforced en;
	x.vm.base.ops = &berth_runtime_vm;
	berth_rt_enforced(&x.vm.base, &en);
	assert_int_equal(en.landlock_abi, 6);
	assert_ptr_equal(berth_rt_measure(&x.vm.base), &x.vm.meas);
	assert_string_equal(berth_rt_run_id(&x.vm.base), "0123456789abcdef");
	teardown(&x);
}

static void test_guest_error(void **state)
{
	struct fixture x;
	struct berth_error err = {0};

	(void)state;
	setup(&x, G_ERROR);
	assert_int_equal(berth_vm_handshake(&x.vm, &err), -1);
	assert_int_equal(err.status, 127);
	assert_string_equal(err.msg, "command `nope` not found");
	assert_string_equal(err.hint, "check PATH");
	assert_int_equal(x.seen.n, 0); /* no hook ran */
	teardown(&x);
}

static void test_release_fails_no_go(void **state)
{
	struct fixture x;
	struct berth_error err = {0};

	(void)state;
	setup(&x, G_OK);
	x.seen.fail_release = true;
	assert_int_equal(berth_vm_handshake(&x.vm, &err), -1);
	assert_string_equal(err.msg, "the audit trail cannot record this run");
	close(x.vm.chan); /* what free() does: the guest sees the end, no GO */
	x.vm.chan = -1;
	join(&x);
	assert_true(x.g.saw_eof_after_ready);
	assert_int_equal(x.g.n_go, 0);
	assert_int_equal(x.seen.n, 1);
	teardown(&x);
}

static void test_bad_measure(void **state)
{
	struct fixture x;
	struct berth_error err = {0};

	(void)state;
	setup(&x, G_BAD_MEASURE);
	assert_int_equal(berth_vm_handshake(&x.vm, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_INTERNAL);
	assert_non_null(strstr(err.msg, "measurement is"));
	assert_false(x.vm.measured);
	assert_int_equal(x.seen.n, 1); /* on_measured never ran */
	teardown(&x);
}

static void test_old_proto(void **state)
{
	struct fixture x;
	struct berth_error err = {0};

	(void)state;
	setup(&x, G_OLD_PROTO);
	assert_int_equal(berth_vm_handshake(&x.vm, &err), -1);
	assert_non_null(strstr(err.msg, "another protocol"));
	assert_non_null(strstr(err.hint, "berth vm install"));
	teardown(&x);
}

/* No HELLO by the deadline: 125, naming the console's last line. */
static void test_boot_deadline(void **state)
{
	struct fixture x;
	struct berth_error err = {0};

	(void)state;
	setup(&x, G_SILENT);
	x.vm.boot_timeout_ms = 300;
	assert_int_equal(berth_vm_handshake(&x.vm, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_INTERNAL);
	assert_int_equal(err.errnum, ETIMEDOUT);
	assert_non_null(strstr(err.msg, "sent no its HELLO within 0 s"));
	assert_non_null(strstr(err.msg, "`[    1.2] the last line`"));
	teardown(&x);
}

static void test_relay(void **state)
{
	struct fixture x;
	struct berth_error err = {0};
	int in[2], outp[2], status = -1;
	char buf[64] = "";

	(void)state;
	setup(&x, G_RELAY);
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	assert_int_equal(pipe2(outp, O_CLOEXEC), 0);
	x.vm.io.in = in[0];
	x.vm.io.out = outp[1];
	assert_int_equal(berth_vm_handshake(&x.vm, &err), 0);
	assert_int_equal(read(x.errp[0], buf, 7), 7); /* the notice */
	assert_int_equal(write(in[1], "typed", 5), 5);
	close(in[1]);
	assert_int_equal(berth_vm_relay(&x.vm, -1, -1), 0);
	assert_int_equal(berth_vm_status(&x.vm, &status, &err), 0);
	assert_int_equal(status, 3);
	/* stdout got its bytes and its end (the guest's EOF closed it) */
	memset(buf, 0, sizeof buf);
	assert_int_equal(read(outp[0], buf, sizeof buf), 4);
	assert_string_equal(buf, "out!");
	assert_int_equal(read(outp[0], buf, sizeof buf), 0);
	assert_int_equal(x.vm.io.out, -1);
	memset(buf, 0, sizeof buf);
	assert_int_equal(read(x.errp[0], buf, sizeof buf), 4);
	assert_string_equal(buf, "err!");
	join(&x);
	assert_string_equal(x.g.stdin_got, "typed");
	close(outp[0]);
	teardown(&x);
}

/* The app supervisor's end of an RPC channel: @x's relay gets a copy of
 * the other (what the runtime's setup_rpc makes of opts.rpc_fd). */
static int rpc_setup(struct fixture *x)
{
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	berth_vm_stream_init(&x->vm.rpc, sv[1], BERTH_VM_RPC); /* blocking, as a caller's may be */
	return sv[0];
}

/* Everything @fd gives until its end, at most @max bytes (blocking). */
static size_t read_to_eof(int fd, unsigned char *buf, size_t max)
{
	size_t k = 0;
	ssize_t n;

	while (k < max && (n = read(fd, buf + k, max - k)) > 0)
		k += (size_t)n;
	return k;
}

/* chan 3 both ways: the guest's bytes reach the supervisor, the
 * supervisor's reach the guest, and each side's end (a shut write side) is
 * the other's EOF; the relay's end closes the supervisor's channel. */
static void test_rpc_relay(void **state)
{
	struct fixture x;
	struct berth_error err = {0};
	unsigned char buf[64] = "";
	int status = -1;

	(void)state;
	setup(&x, G_RPC);
	int sup = rpc_setup(&x);
	assert_int_equal(berth_vm_handshake(&x.vm, &err), 0);
	/* a request, then the supervisor's stop: end of file on its end */
	assert_int_equal(write(sup, "req-1", 5), 5);
	assert_int_equal(shutdown(sup, SHUT_WR), 0);
	assert_int_equal(berth_vm_relay(&x.vm, -1, -1), 0);
	assert_int_equal(berth_vm_status(&x.vm, &status, &err), 0);
	assert_int_equal(status, 0);
	join(&x);
	assert_string_equal(x.g.rpc_got, "req-1");
	assert_true(x.g.rpc_eof);
	assert_int_equal(read_to_eof(sup, buf, sizeof buf - 1), 12);
	assert_string_equal((char *)buf, "ready\nanswer");
	assert_false(berth_vm_stream_active(&x.vm.rpc)); /* closed at the relay's end */
	close(sup);
	teardown(&x);
}

/* The VM ends without EOF on chan 3: the supervisor gets what was sent,
 * then its end of file (the app gone with the VM). */
static void test_rpc_vm_death(void **state)
{
	struct fixture x;
	struct berth_error err = {0};
	unsigned char buf[64] = "";
	int status = -1;

	(void)state;
	setup(&x, G_RPC_DIE);
	int sup = rpc_setup(&x);
	assert_int_equal(berth_vm_handshake(&x.vm, &err), 0);
	assert_int_equal(berth_vm_relay(&x.vm, -1, -1), 0);
	assert_int_equal(berth_vm_status(&x.vm, &status, &err), -1); /* no EXIT */
	assert_int_equal(read_to_eof(sup, buf, sizeof buf - 1), 6);
	assert_string_equal((char *)buf, "ready\n");
	close(sup);
	teardown(&x);
}

struct flood {
	struct fixture *x;
	int r;
};

static void *relay_main(void *arg)
{
	struct flood *fl = arg;

	fl->r = berth_vm_relay(&fl->x->vm, -1, -1);
	return NULL;
}

/* More than the stream's bound at once, while the supervisor reads
 * nothing: the relay stops reading the channel (the guest waits) instead
 * of failing with ENOBUFS or losing bytes; every byte arrives, in order. */
static void test_rpc_flood(void **state)
{
	struct fixture x;
	struct berth_error err = {0};
	struct flood fl = {&x, -1};
	unsigned char *buf = malloc(FLOOD_BYTES + 1);
	pthread_t t;
	int status = -1;

	(void)state;
	setup(&x, G_RPC_FLOOD);
	int sup = rpc_setup(&x);
	assert_int_equal(berth_vm_handshake(&x.vm, &err), 0);
	assert_int_equal(pthread_create(&t, NULL, relay_main, &fl), 0);
	usleep(300000); /* the supervisor busy: the guest fills the stream */
	assert_int_equal(read_to_eof(sup, buf, FLOOD_BYTES + 1), FLOOD_BYTES);
	pthread_join(t, NULL);
	assert_int_equal(fl.r, 0);
	assert_int_equal(berth_vm_status(&x.vm, &status, &err), 0);
	assert_int_equal(status, 0);
	for (size_t i = 0; i < FLOOD_BYTES; i++)
		if (buf[i] != (unsigned char)(i % 251))
			fail_msg("byte %zu is %u, not %zu", i, buf[i], i % 251);
	free(buf);
	close(sup);
	teardown(&x);
}

/* src/vm/stream.c on its own: the bound, flushing, the end, a reader gone. */
static void test_stream(void **state)
{
	struct berth_vm_stream s;
	struct berth_error err = {0};
	static unsigned char chunk[65536];
	int sv[2], ch[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ch), 0);
	berth_vm_stream_init(&s, sv[0], BERTH_VM_RPC); /* blocking: MSG_DONTWAIT does it */
	assert_int_equal(berth_vm_stream_events(&s), POLLIN);
	/* nobody reads sv[1]: the socket takes some, the rest is queued */
	size_t sent = 0;
	while (!berth_vm_stream_full(&s)) {
		assert_int_equal(berth_vm_stream_data(&s, chunk, sizeof chunk, &err), 0);
		sent += sizeof chunk;
	}
	assert_true(berth_vm_stream_pending(&s) >= BERTH_VM_STREAM_HIGH);
	assert_true(berth_vm_stream_pending(&s) <= BERTH_VM_STREAM_MAX);
	assert_int_equal(berth_vm_stream_events(&s), POLLIN | POLLOUT);
	/* a peer past the bound is refused, named, nothing queued */
	while (berth_vm_stream_pending(&s) + sizeof chunk <= BERTH_VM_STREAM_MAX) {
		assert_int_equal(berth_vm_stream_data(&s, chunk, sizeof chunk, &err), 0);
		sent += sizeof chunk;
	}
	size_t before = berth_vm_stream_pending(&s);
	assert_int_equal(berth_vm_stream_data(&s, chunk, sizeof chunk, &err), -1);
	assert_int_equal(err.errnum, ENOBUFS);
	assert_non_null(strstr(err.msg, "channel 3"));
	assert_int_equal(berth_vm_stream_pending(&s), before);
	/* the channel's EOF: the write side is shut only after the last byte */
	berth_vm_stream_eof(&s);
	assert_false(s.wr_shut);
	assert_int_equal(berth_vm_stream_data(&s, "x", 1, &err), -1); /* data after EOF */
	size_t k = 0;
	unsigned char *sink = malloc(1 << 16);
	for (;;) {
		ssize_t n = read(sv[1], sink, 1 << 16);
		if (n > 0) {
			k += (size_t)n;
			assert_int_equal(berth_vm_stream_flush(&s, &err), 0);
			continue;
		}
		break;
	}
	free(sink);
	assert_true(s.wr_shut);
	assert_int_equal(berth_vm_stream_pending(&s), 0);
	assert_int_equal(k, sent); /* every byte taken, none twice */
	/* pump: the socket's bytes as DATA on chan 3, its end as EOF, once */
	struct berth_vm_reader *rd = malloc(sizeof *rd);
	struct berth_vm_frame f;
	berth_vm_reader_init(rd);
	assert_int_equal(write(sv[1], "hi", 2), 2);
	assert_int_equal(berth_vm_stream_pump(&s, ch[0], &err), 0);
	assert_int_equal(berth_vm_read(ch[1], rd, &f, &err), 1);
	assert_int_equal(f.type, BERTH_VM_DATA);
	assert_int_equal(f.chan, BERTH_VM_RPC);
	assert_int_equal(f.len, 2);
	assert_memory_equal(f.payload, "hi", 2);
	assert_int_equal(shutdown(sv[1], SHUT_WR), 0);
	assert_int_equal(berth_vm_stream_pump(&s, ch[0], &err), 0);
	assert_int_equal(berth_vm_read(ch[1], rd, &f, &err), 1);
	assert_int_equal(f.type, BERTH_VM_EOF);
	assert_int_equal(f.chan, BERTH_VM_RPC);
	assert_true(s.rd_eof);
	assert_int_equal(berth_vm_stream_events(&s), 0);
	assert_int_equal(berth_vm_stream_pump(&s, ch[0], &err), 0); /* once */
	fcntl(ch[1], F_SETFL, O_NONBLOCK);
	assert_int_equal(berth_vm_read(ch[1], rd, &f, &err), 0);
	berth_vm_stream_close(&s);
	berth_vm_stream_close(&s); /* safe twice */
	close(sv[1]);
	/* a reader gone: EPIPE drops the bytes, never SIGPIPE, never an error */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	berth_vm_stream_init(&s, sv[0], BERTH_VM_RPC);
	close(sv[1]);
	assert_int_equal(berth_vm_stream_data(&s, "lost", 4, &err), 0);
	assert_true(s.wr_gone);
	assert_int_equal(berth_vm_stream_pending(&s), 0);
	assert_int_equal(berth_vm_stream_data(&s, "more", 4, &err), 0);
	assert_int_equal(berth_vm_stream_pending(&s), 0);
	berth_vm_stream_close(&s);
	free(rd);
	close(ch[0]);
	close(ch[1]);
}

static void test_check_refusals(void **state)
{
	struct berth_policy p;
	struct berth_error err = {0};

	(void)state;
	berth_policy_init(&p);
	/* --network proxy is carried (through the host's broker): with no
	 * guest installed it fails as --network none does, for the guest */
	setenv("BERTH_VM_DIR", "/nonexistent/berth-vm", 1);
	p.network = BERTH_NET_PROXY;
	assert_int_equal(berth_runtime_vm.check(&p, NULL, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_INTERNAL);
	assert_null(strstr(err.msg, "network"));
	struct berth_credential cred = {0};
	p.credentials = &cred;
	p.n_credentials = 1;
	assert_int_equal(berth_runtime_vm.check(&p, NULL, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	assert_string_equal(err.msg, "the vm runtime cannot inject credentials (`--credential`) yet");
	p.credentials = NULL;
	p.n_credentials = 0;
	p.network = BERTH_NET_HOST;
	assert_int_equal(berth_runtime_vm.check(&p, NULL, &err), -1);
	assert_string_equal(err.msg, "the vm runtime cannot give `--network host` yet");
	p.network = BERTH_NET_NONE;
	/* a session's seeded home is carried (HOME frames): the check goes on
	 * to the guest (not installed here); a file over one frame (64 KiB less
	 * its path and a NUL) and more files than BERTH_VM_HOME_FILES_MAX are
	 * refused (2), before any boot */
	struct berth_home_file hf = {.path = ".gitconfig", .data = "x", .len = 1};
	struct berth_runtime_opts o = {.home_files = &hf, .n_home_files = 1};
	memset(&err, 0, sizeof err);
	assert_int_equal(berth_runtime_vm.check(&p, &o, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_INTERNAL);
	assert_non_null(strstr(err.hint, "berth vm install"));
	static char big[BERTH_VM_PAYLOAD_MAX];
	hf.data = big;
	hf.len = BERTH_VM_PAYLOAD_MAX - strlen(".gitconfig") - 1; /* exactly one frame: carried */
	memset(&err, 0, sizeof err);
	assert_int_equal(berth_runtime_vm.check(&p, &o, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_INTERNAL);
	hf.len++;
	memset(&err, 0, sizeof err);
	assert_int_equal(berth_runtime_vm.check(&p, &o, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	assert_string_equal(err.msg,
			    "the seeded home's `~/.gitconfig` is 65526 bytes, over the 65525 bytes of "
			    "a file the vm runtime's channel carries (its HOME frame: 65536 less the "
			    "path and a NUL)");
	struct berth_home_file many[BERTH_VM_HOME_FILES_MAX + 1];
	for (size_t i = 0; i < (sizeof many / sizeof many[0]); i++)
		many[i] = (struct berth_home_file){.path = "f", .data = "", .len = 0};
	o = (struct berth_runtime_opts){.home_files = many, .n_home_files = (sizeof many / sizeof many[0])};
	memset(&err, 0, sizeof err);
	assert_int_equal(berth_runtime_vm.check(&p, &o, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	assert_string_equal(err.msg, "the seeded home has 257 files, over the 256 the vm runtime's channel "
				     "carries (HOME frames)");
	o = (struct berth_runtime_opts){.force_off = 1};
	assert_int_equal(berth_runtime_vm.check(&p, &o, &err), -1);
	assert_string_equal(err.msg, "the vm runtime cannot take BERTH_TEST_FORCE_OFF yet");
	/* no guest installed: 125, naming `berth vm install` */
	setenv("BERTH_VM_DIR", "/nonexistent/berth-vm", 1);
	assert_int_equal(berth_runtime_vm.check(&p, NULL, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_INTERNAL);
	assert_non_null(strstr(err.hint, "berth vm install"));
	/* a resident app and its RPC channel are the vm runtime's now: the
	 * check goes on to the guest (not installed here) */
	p.app = true;
	o = (struct berth_runtime_opts){.has_rpc = true, .rpc_fd = 3};
	memset(&err, 0, sizeof err);
	assert_int_equal(berth_runtime_vm.check(&p, &o, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_INTERNAL);
	assert_null(strstr(err.msg, "resident app"));
	assert_null(strstr(err.msg, "RPC"));
	p.app = false;
	unsetenv("BERTH_VM_DIR");
	berth_policy_free(&p);
}

/* POLICY and START over one frame's payload are refused by check (2),
 * naming the size, the limit and the fix; one byte under passes on to the
 * next check (the guest). */
static void test_check_payloads(void **state)
{
	struct berth_policy p;
	struct berth_error err = {0};
	char *big = malloc(40000);

	(void)state;
	assert_non_null(big);
	memset(big, 'v', 39999);
	big[39999] = '\0';
	berth_policy_init(&p);
	p.env = calloc(2, sizeof *p.env);
	p.env[0] = (struct berth_env){.name = strdup("A"), .value = strdup(big)};
	p.n_env = 1;
	setenv("BERTH_VM_DIR", "/nonexistent/berth-vm", 1);
	/* 40000 bytes of values: under the limit, the next refusal is the guest's */
	assert_int_equal(berth_runtime_vm.check(&p, NULL, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_INTERNAL);
	p.env[1] = (struct berth_env){.name = strdup("B"), .value = strdup(big)};
	p.n_env = 2;
	err = (struct berth_error){0};
	assert_int_equal(berth_runtime_vm.check(&p, NULL, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	assert_non_null(strstr(err.msg, "the run's START is "));
	assert_non_null(strstr(err.msg, "(79998 of them the --env values), over the 65536 bytes"));
	assert_non_null(strstr(err.hint, "--runtime namespace"));
	/* a policy whose JSON is over the limit: its mounts */
	free(p.env[1].name);
	free(p.env[1].value);
	p.n_env = 1;
	p.mounts = calloc(20, sizeof *p.mounts);
	for (int i = 0; i < 20; i++) {
		char dst[4100];
		snprintf(dst, sizeof dst, "/data/%d/%.4000s", i, big);
		p.mounts[i] = (struct berth_mount){.src = strdup(dst), .dst = strdup(dst)};
	}
	p.n_mounts = 20;
	err = (struct berth_error){0};
	assert_int_equal(berth_runtime_vm.check(&p, NULL, &err), -1);
	assert_int_equal(err.status, BERTH_EXIT_USAGE);
	assert_non_null(strstr(err.msg, "the policy is "));
	assert_non_null(strstr(err.msg, "bytes as JSON, over the 65536 bytes"));
	unsetenv("BERTH_VM_DIR");
	free(big);
	berth_policy_free(&p);
}

/* The command's budget in the guest (docs/vm.md, "Memory"). */
static void test_mem_budget(void **state)
{
	struct berth_policy p;

	(void)state;
	berth_policy_init(&p);
	/* the default --memory (8 GiB): as far as /tmp (1 GiB) and 512 MiB need */
	assert_int_equal(berth_vm_mem_budget(&p), (1ULL << 30) + (512ULL << 20));
	p.tmp_size = 64ULL << 20;
	assert_int_equal(berth_vm_mem_budget(&p), 1ULL << 30);
	/* an explicit --memory is the budget */
	p.memory = 3ULL << 30;
	p.memory_set = true;
	assert_int_equal(berth_vm_mem_budget(&p), 3ULL << 30);
	p.memory = 256ULL << 20;
	assert_int_equal(berth_vm_mem_budget(&p), 256ULL << 20);
	/* never over 16 GiB (nor half the host's RAM) */
	p.memory = 1ULL << 40;
	assert_true(berth_vm_mem_budget(&p) <= 16ULL << 30);
	berth_policy_free(&p);
}

/* qemu is given the verified guest as descriptors: its argv names
 * /proc/self/fd paths for the kernel and initramfs, the console and
 * virtiofsd's socket by descriptor, and no file of the guest or run
 * directory. */
static void test_qemu_argv(void **state)
{
	struct vm_rt *vm = calloc(1, sizeof *vm);
	struct vm_qemu_argv a;
	int kernel = -1, initrd = -1, fdset = 0, fs = 0, accel = -1;

	(void)state;
	assert_non_null(vm);
	vm->mem_bytes = 1792ULL << 20;
	snprintf(vm->smp, sizeof vm->smp, "2");
	vm->accel = "tcg";
	snprintf(vm->dir, sizeof vm->dir, "/run/berth/vm-0123456789abcdef");
	snprintf(vm->fs_sock, sizeof vm->fs_sock, "%s/fs.sock", vm->dir);
	snprintf(vm->console, sizeof vm->console, "%s/console.log", vm->dir);
	assert_int_equal(berth_vm_qemu_argv(vm, &a), 0);
	for (int i = 0; a.argv[i] != NULL; i++) {
		assert_null(strstr(a.argv[i], "vmlinuz"));
		assert_null(strstr(a.argv[i], "initramfs"));
		assert_null(strstr(a.argv[i], "fs.sock"));
		assert_null(strstr(a.argv[i], "console.log"));
		/* the run directory only as qemu's -name, a label */
		if (strstr(a.argv[i], vm->dir) != NULL)
			assert_string_equal(a.argv[i - 1], "-name");
		if (strcmp(a.argv[i], "-kernel") == 0)
			kernel = i + 1;
		if (strcmp(a.argv[i], "-initrd") == 0)
			initrd = i + 1;
		if (strcmp(a.argv[i], "-add-fd") == 0 && strcmp(a.argv[i + 1], "fd=7,set=1") == 0)
			fdset++;
		if (strcmp(a.argv[i], "file,id=c0,path=/dev/fdset/1") == 0)
			fdset++;
		if (strcmp(a.argv[i], "socket,id=fs0,fd=6") == 0)
			fs++;
		if (strcmp(a.argv[i], "-accel") == 0)
			accel = i + 1;
	}
	/* TCG runs the vCPUs in one thread (the guest kernel's live patching
	 * raced under MTTCG: docs/vm.md); KVM is KVM */
	assert_true(accel > 0);
	assert_string_equal(a.argv[accel], "tcg,thread=single");
	assert_true(kernel > 0 && initrd > 0);
	assert_string_equal(a.argv[kernel], "/proc/self/fd/4");
	assert_string_equal(a.argv[initrd], "/proc/self/fd/5");
	assert_int_equal(fdset, 2);
	assert_int_equal(fs, 1);
	vm->accel = "kvm";
	assert_int_equal(berth_vm_qemu_argv(vm, &a), 0);
	assert_string_equal(a.argv[accel], "kvm");
	free(vm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_handshake),
	    cmocka_unit_test(test_guest_error),
	    cmocka_unit_test(test_release_fails_no_go),
	    cmocka_unit_test(test_bad_measure),
	    cmocka_unit_test(test_old_proto),
	    cmocka_unit_test(test_boot_deadline),
	    cmocka_unit_test(test_relay),
	    cmocka_unit_test(test_rpc_relay),
	    cmocka_unit_test(test_rpc_vm_death),
	    cmocka_unit_test(test_rpc_flood),
	    cmocka_unit_test(test_stream),
	    cmocka_unit_test(test_check_refusals),
	    cmocka_unit_test(test_check_payloads),
	    cmocka_unit_test(test_mem_budget),
	    cmocka_unit_test(test_qemu_argv),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
