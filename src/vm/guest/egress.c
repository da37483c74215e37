/* SPDX-License-Identifier: MIT */
/*
 * egress.c - --network proxy in the guest (guest.h; src/vm/proto.h): the
 * listeners the namespace runtime made in the sandbox's network are served
 * by relaying, never by deciding.  Each accepted connection is a stream to
 * the host (OPEN names its listener's kind and, for a transparent one, the
 * address it was made to), each query of the sandbox's resolver a DNS
 * frame whose tag brings the answer back to its client.  The host's egress
 * broker decides on all of it, as it does for the namespace runtime.
 */
#include "guest.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ACCEPTS_PER_READY 16
#define GUEST_DNS_SLOTS (sizeof(((struct guest *)0)->dnsq) / sizeof(((struct guest *)0)->dnsq[0]))

/* The channel's writer of the worker: blocking (the host never stops
 * reading the channel, so a write always completes). */
static int send_frame(void *arg, uint16_t type, uint16_t chan, const void *p, size_t len,
		      struct berth_error *err)
{
	struct guest *g = arg;

	return berth_vm_write(g->chan, type, chan, p, len, err);
}

int guest_egress_hook(void *arg, const struct berth_egress_listeners *l, struct berth_error *err)
{
	struct guest *g = arg;

	g->egress = *l;
	g->has_egress = true;
	g->streams = malloc(sizeof *g->streams);
	if (g->streams == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	berth_vm_mux_init(g->streams, send_frame, g);
	return 0;
}

/* The listeners in a fixed order: http, socks5, the transparent ones, dns. */
static size_t listeners(const struct guest *g, int *fd, const char **kind)
{
	size_t n = 0;

	fd[n] = g->egress.http;
	kind[n++] = "http";
	fd[n] = g->egress.socks5;
	kind[n++] = "socks5";
	for (size_t i = 0; i < g->egress.n_transparent; i++) {
		fd[n] = g->egress.transparent[i];
		kind[n++] = "transparent";
	}
	fd[n] = g->egress.dns;
	kind[n++] = "dns";
	return n;
}

size_t guest_egress_poll(struct guest *g, struct pollfd *p)
{
	int fd[4 + BERTH_EGRESS_TRANSPARENT_MAX];
	const char *kind[4 + BERTH_EGRESS_TRANSPARENT_MAX];
	size_t n;

	if (!g->has_egress)
		return 0;
	n = listeners(g, fd, kind);
	for (size_t i = 0; i < n; i++)
		/* a full set of streams: new connections wait in the backlog */
		p[i] = (struct pollfd){
		    .fd = (strcmp(kind[i], "dns") == 0 || g->streams->n < BERTH_VM_MUX_MAX) ? fd[i] : -1,
		    .events = POLLIN};
	return n + berth_vm_mux_poll(g->streams, p + n);
}

/* A transparent connection's destination: the address it was made to,
 * as text (an IPv4-mapped one as IPv4). */
static int destination(int fd, char *dst, size_t len, unsigned *port)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
		return -1;
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;
		*port = ntohs(a->sin_port);
		return inet_ntop(AF_INET, &a->sin_addr, dst, (socklen_t)len) != NULL ? 0 : -1;
	}
	if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
		*port = ntohs(a->sin6_port);
		if (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr))
			return inet_ntop(AF_INET, a->sin6_addr.s6_addr + 12, dst, (socklen_t)len) != NULL
				   ? 0
				   : -1;
		return inet_ntop(AF_INET6, &a->sin6_addr, dst, (socklen_t)len) != NULL ? 0 : -1;
	}
	return -1;
}

/* One connection accepted: OPEN, then it is a stream like any. */
static int open_stream(struct guest *g, int cfd, const char *kind, struct berth_error *err)
{
	char dst[INET6_ADDRSTRLEN] = "", *s;
	unsigned port = 0;
	struct berth_error e = {0};
	struct berth_vm_mux_stream *st;
	json_t *j;
	int rc;

	if (strcmp(kind, "transparent") == 0 && destination(cfd, dst, sizeof dst, &port) < 0) {
		close(cfd);
		return 0;
	}
	st = berth_vm_mux_add(g->streams, cfd, 0, &e);
	if (st == NULL)
		return 0; /* full: closed */
	j = json_pack("{s:s, s:s, s:i}", "kind", kind, "dst", dst, "port", (int)port);
	s = j != NULL ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(j);
	if (s == NULL) {
		berth_vm_mux_abort(g->streams, st, false);
		return 0;
	}
	rc = berth_vm_write(g->chan, BERTH_VM_OPEN, st->id, s, strlen(s), err);
	free(s);
	return rc;
}

/* Queries of the sandbox's resolver: each tagged, its client kept for the
 * answer (a slot's older query is forgotten: its client asks again). */
static int dns_queries(struct guest *g, int fd, struct berth_error *err)
{
	unsigned char buf[4 + BERTH_VM_DNS_MAX];

	for (int i = 0; i < 64; i++) {
		struct guest_dns_query q = {.used = true, .from_len = sizeof q.from};
		ssize_t n = recvfrom(fd, buf + 4, sizeof buf - 4, MSG_DONTWAIT | MSG_TRUNC,
				     (struct sockaddr *)&q.from, &q.from_len);
		if (n < 0)
			return 0;
		if ((size_t)n > sizeof buf - 4)
			continue; /* truncated: not a stub resolver's query */
		q.tag = ++g->dns_tag;
		g->dnsq[q.tag % GUEST_DNS_SLOTS] = q;
		berth_vm_put_u32(buf, q.tag);
		if (berth_vm_write(g->chan, BERTH_VM_DNS, 0, buf, 4 + (size_t)n, err) < 0)
			return -1;
	}
	return 0;
}

int guest_egress_ready(struct guest *g, const struct pollfd *p, size_t n, struct berth_error *err)
{
	int fd[4 + BERTH_EGRESS_TRANSPARENT_MAX];
	const char *kind[4 + BERTH_EGRESS_TRANSPARENT_MAX];
	size_t nl;

	if (!g->has_egress)
		return 0;
	nl = listeners(g, fd, kind);
	for (size_t i = 0; i < nl && i < n; i++) {
		if (!(p[i].revents & POLLIN))
			continue;
		if (strcmp(kind[i], "dns") == 0) {
			if (dns_queries(g, fd[i], err) < 0)
				return -1;
			continue;
		}
		for (int k = 0; k < ACCEPTS_PER_READY && g->streams->n < BERTH_VM_MUX_MAX; k++) {
			int cfd = accept4(fd[i], NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
			if (cfd < 0)
				break;
			if (open_stream(g, cfd, kind[i], err) < 0)
				return -1;
		}
	}
	return n > nl ? berth_vm_mux_ready(g->streams, p + nl, n - nl, err) : 0;
}

/* The broker's answer to its client, when the tag is one still waiting. */
static int dns_answer(struct guest *g, const struct berth_vm_frame *f, struct berth_error *err)
{
	struct guest_dns_query *q;
	uint32_t tag;

	if (f->len < 4 || f->len > 4 + BERTH_VM_DNS_MAX)
		return berth_err(err, 0, "the host sent a malformed DNS frame (%u bytes)", f->len);
	tag = berth_vm_get_u32(f->payload);
	q = &g->dnsq[tag % GUEST_DNS_SLOTS];
	if (!q->used || q->tag != tag)
		return 0;
	(void)sendto(g->egress.dns, f->payload + 4, f->len - 4, MSG_DONTWAIT | MSG_NOSIGNAL,
		     (struct sockaddr *)&q->from, q->from_len);
	q->used = false;
	return 0;
}

int guest_egress_frame(struct guest *g, const struct berth_vm_frame *f, struct berth_error *err)
{
	if (f->type == BERTH_VM_DNS) {
		if (!g->has_egress)
			return berth_err(err, 0, "the host sent DNS, and the run has no --network proxy");
		return dns_answer(g, f, err) < 0 ? -1 : 1;
	}
	if (!g->has_egress)
		return 0;
	return berth_vm_mux_frame(g->streams, f, err);
}

void guest_egress_close(struct guest *g)
{
	int fd[4 + BERTH_EGRESS_TRANSPARENT_MAX];
	const char *kind[4 + BERTH_EGRESS_TRANSPARENT_MAX];

	if (!g->has_egress)
		return;
	for (size_t i = 0, n = listeners(g, fd, kind); i < n; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	berth_vm_mux_close_all(g->streams);
	free(g->streams);
	g->streams = NULL;
	g->has_egress = false;
}
