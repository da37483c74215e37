/* SPDX-License-Identifier: MIT */
/*
 * fuzz_socks.c - libFuzzer target for the egress broker's SOCKS5 parser
 * (src/broker/socks.c).  Inputs are capped at 4 KiB (a greeting and a
 * request are at most 257 + 262 bytes).
 *
 * The first byte chooses how the rest is fed: 0 at once, otherwise pieces
 * of 1 to (first byte & 15) + 1 bytes from a generator it seeds.  Besides
 * memory errors it checks:
 *  - the sequence of verdicts, the bytes consumed at each, every reply and
 *    the request are the same fed at once and in pieces;
 *  - a REPLY is `05 00`; a refusal's reply is empty, `05 FF`, SOCKS4's 8-byte
 *    rejection or a 10-byte SOCKS5 reply whose REP is `rep` (1, 7 or 8);
 *  - a request has a port, a host that normalises to itself, and address
 *    bytes that match the host for IPv4 and IPv6;
 *  - berth_socks_format_reply() writes 10 bytes for every code 0-8 and
 *    refuses others.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/socks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct trace {
	int n;
	enum berth_socks_verdict v[3];
	size_t at[3];
	uint8_t reply[3][BERTH_SOCKS_REPLY_MAX];
	size_t reply_len[3];
	struct berth_socks_parser p;
};

static uint32_t rng_state;

static uint32_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

static void run(struct trace *t, const uint8_t *d, size_t n, size_t max_piece)
{
	size_t pos = 0;
	enum berth_socks_verdict v = BERTH_SOCKS_NEED_MORE;

	memset(t, 0, sizeof *t);
	berth_socks_init(&t->p);
	while (pos < n) {
		size_t piece = max_piece == 0 ? n - pos : 1 + rng() % max_piece, c = 0;

		if (piece > n - pos)
			piece = n - pos;
		v = berth_socks_feed(&t->p, d + pos, piece, &c);
		if (c > piece || (v == BERTH_SOCKS_NEED_MORE && c != piece) ||
		    (v != BERTH_SOCKS_NEED_MORE && c == 0))
			abort();
		pos += c;
		if (v == BERTH_SOCKS_NEED_MORE)
			continue;
		if (t->n == 3)
			abort(); /* at most REPLY, then DONE or BAD */
		t->v[t->n] = v;
		t->at[t->n] = pos;
		memcpy(t->reply[t->n], t->p.reply, t->p.reply_len);
		t->reply_len[t->n] = t->p.reply_len;
		t->n++;
		if (v != BERTH_SOCKS_REPLY)
			break;
	}
}

static void check_done(const struct berth_socks_request *r)
{
	char host[BERTH_TARGET_HOST_MAX + 1], text[BERTH_TARGET_HOST_MAX + 1];
	enum berth_target_kind kind;
	const char *why;
	static const uint8_t zero[16];

	if (r->port == 0 ||
	    berth_http_normalize_host(r->host, strlen(r->host), r->kind == BERTH_TARGET_IPV6, host, &kind,
				      &why) != 0 ||
	    strcmp(host, r->host) != 0 || kind != r->kind)
		abort();
	if (r->kind == BERTH_TARGET_NAME && memcmp(r->addr, zero, 16) != 0)
		abort();
	if (r->kind == BERTH_TARGET_IPV4 &&
	    (inet_ntop(AF_INET, r->addr, text, sizeof text) == NULL || strcmp(text, r->host) != 0 ||
	     memcmp(r->addr + 4, zero, 12) != 0))
		abort();
	if (r->kind == BERTH_TARGET_IPV6 &&
	    (inet_ntop(AF_INET6, r->addr, text, sizeof text) == NULL || strcmp(text, r->host) != 0))
		abort();
}

static void check_bad(const struct berth_socks_parser *p)
{
	static const uint8_t v4[8] = {0, 91, 0, 0, 0, 0, 0, 0};

	if (p->reason[0] == '\0')
		abort();
	if (p->rep >= 0) {
		if (p->reply_len != 10 || p->reply[0] != 5 || p->reply[1] != p->rep || p->reply[3] != 1 ||
		    (p->rep != 1 && p->rep != 7 && p->rep != 8))
			abort();
	} else if (!(p->reply_len == 0 || (p->reply_len == 2 && memcmp(p->reply, "\x05\xff", 2) == 0) ||
		     (p->reply_len == 8 && memcmp(p->reply, v4, 8) == 0))) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct trace a, b;
	uint8_t out[BERTH_SOCKS_REPLY_MAX];

	if (size < 1 || size > 4096)
		return 0;
	rng_state = 0x9e3779b9u ^ (uint32_t)data[0] * 2654435761u;
	run(&a, data + 1, size - 1, 0);
	run(&b, data + 1, size - 1, data[0] == 0 ? 0 : (size_t)(data[0] & 15) + 1);
	if (a.n != b.n)
		abort();
	for (int i = 0; i < a.n; i++) {
		if (a.v[i] != b.v[i] || a.at[i] != b.at[i] || a.reply_len[i] != b.reply_len[i] ||
		    memcmp(a.reply[i], b.reply[i], a.reply_len[i]) != 0)
			abort();
		if (a.v[i] == BERTH_SOCKS_REPLY &&
		    (i != 0 || a.reply_len[i] != 2 || memcmp(a.reply[i], "\x05\x00", 2) != 0))
			abort();
	}
	if (a.n > 0 && a.v[a.n - 1] == BERTH_SOCKS_DONE) {
		if (memcmp(&a.p.req, &b.p.req, sizeof a.p.req) != 0)
			abort();
		check_done(&a.p.req);
	}
	if (a.n > 0 && a.v[a.n - 1] == BERTH_SOCKS_BAD) {
		if (a.p.rep != b.p.rep || strcmp(a.p.reason, b.p.reason) != 0)
			abort();
		check_bad(&a.p);
	}
	if (size >= 2) {
		int n = berth_socks_format_reply(out, sizeof out, (enum berth_socks_rep)data[1], NULL);

		if ((data[1] <= 8 && (n != 10 || out[1] != data[1])) || (data[1] > 8 && n != -1))
			abort();
	}
	return 0;
}
