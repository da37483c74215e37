/* SPDX-License-Identifier: MIT */
/*
 * fakeaddr.c - addresses for declared names (see fakeaddr.h).
 */
#include "fakeaddr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static void addr_of(size_t i, uint8_t out[4])
{
	uint32_t v = BERTH_FAKEADDR_NET + 1 + (uint32_t)i;

	out[0] = (uint8_t)(v >> 24);
	out[1] = (uint8_t)(v >> 16);
	out[2] = (uint8_t)(v >> 8);
	out[3] = (uint8_t)v;
}

static bool declared_literal(const struct berth_fakeaddr_map *m, const uint8_t a[4])
{
	struct berth_addr x = {.family = AF_INET};

	memcpy(x.bytes, a, 4);
	for (size_t i = 0; i < m->npats; i++)
		if (m->pats[i].kind == BERTH_HOST_LITERAL &&
		    berth_addr_same_destination(&m->pats[i].addr, &x))
			return true;
	return false;
}

/* Whether @pats[@i] is a NAME pattern, and the first of the patterns to
 * declare that name (so that each name is counted once). */
static bool first_exact(const struct berth_host_pattern *pats, size_t i)
{
	if (pats[i].kind != BERTH_HOST_NAME)
		return false;
	for (size_t j = 0; j < i; j++)
		if (pats[j].kind == BERTH_HOST_NAME && strcmp(pats[j].name, pats[i].name) == 0)
			return false;
	return true;
}

static bool exact(const struct berth_fakeaddr_map *m, const char *name)
{
	for (size_t i = 0; i < m->npats; i++)
		if (m->pats[i].kind == BERTH_HOST_NAME && strcmp(m->pats[i].name, name) == 0)
			return true;
	return false;
}

int berth_fakeaddr_init(struct berth_fakeaddr_map *m, const struct berth_host_pattern *pats, size_t npats)
{
	memset(m, 0, sizeof *m);
	m->names = calloc(BERTH_FAKEADDR_MAX, sizeof *m->names);
	if (m->names == NULL) {
		errno = ENOMEM;
		return -1;
	}
	m->pats = pats;
	m->npats = npats;
	for (size_t i = 0; i < npats; i++)
		m->reserved += first_exact(pats, i);
	for (size_t i = 0; npats > 0 && i < BERTH_FAKEADDR_MAX; i++) {
		uint8_t a[4];
		addr_of(i, a);
		m->skips_left += declared_literal(m, a);
	}
	return 0;
}

void berth_fakeaddr_free(struct berth_fakeaddr_map *m)
{
	free(m->names);
	memset(m, 0, sizeof *m);
}

int berth_fakeaddr_assign(struct berth_fakeaddr_map *m, const char *name, uint8_t out[4])
{
	size_t l = name != NULL ? strnlen(name, BERTH_HOST_NAME_MAX + 1) : 0;

	if (l == 0 || l > BERTH_HOST_NAME_MAX || m->names == NULL)
		return -1;
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->names[i], name) == 0) {
			addr_of(i, out);
			return 0;
		}
	bool mine = exact(m, name);
	/* what is left for names no NAME pattern declares: beyond the reserve */
	if (!mine && BERTH_FAKEADDR_MAX - m->n - m->skips_left <= m->reserved)
		return -1;
	while (m->n < BERTH_FAKEADDR_MAX) {
		size_t i = m->n++;
		addr_of(i, out);
		if (declared_literal(m, out)) {
			m->skips_left--;
			continue; /* stays "": never handed out */
		}
		memcpy(m->names[i], name, l + 1);
		if (mine)
			m->reserved--;
		return 0;
	}
	return -1;
}

const char *berth_fakeaddr_lookup(const struct berth_fakeaddr_map *m, const uint8_t a[4])
{
	uint32_t v = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];

	if (m->names == NULL || v <= BERTH_FAKEADDR_NET || v - BERTH_FAKEADDR_NET - 1 >= m->n)
		return NULL;
	const char *n = m->names[v - BERTH_FAKEADDR_NET - 1];
	return n[0] != '\0' ? n : NULL;
}
