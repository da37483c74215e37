/* SPDX-License-Identifier: MIT */
/*
 * fuzz_denial.c - the audit-record parser and the explanation
 * (src/supervisor/denial.c): the input is a stream of records, each a
 * 2-byte type selector, a 2-byte length and that many bytes of text.
 * Oracles: every string out is NUL-terminated within its buffer, a parsed
 * record's serial is the header's, a port is -1 or 0..65535, an errno is
 * 0..4095, and the explanation always names a kind and either a fix or why
 * none is available.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "supervisor/denial.h"

static void check_str(const char *s, size_t len)
{
	if (memchr(s, '\0', len) == NULL)
		abort();
}

static void check_event(const struct berth_denial_event *ev, const struct berth_policy *p)
{
	struct berth_denial_fix f;

	check_str(ev->d.blockers, sizeof ev->d.blockers);
	check_str(ev->d.path, sizeof ev->d.path);
	check_str(ev->d.addr, sizeof ev->d.addr);
	check_str(ev->d.exe, sizeof ev->d.exe);
	check_str(ev->d.comm, sizeof ev->d.comm);
	check_str(ev->d.ocomm, sizeof ev->d.ocomm);
	check_str(ev->dom.exe, sizeof ev->dom.exe);
	if (ev->has_access && (ev->d.blockers[0] == '\0' || ev->d.port < -1 || ev->d.port > 65535))
		abort();
	if (ev->d.errnum < 0 || ev->d.errnum > 4095)
		abort();
	if (!ev->has_access)
		return;
	berth_denial_explain(&ev->d, p, &f);
	check_str(f.kind, sizeof f.kind);
	check_str(f.rule, sizeof f.rule);
	check_str(f.fix, sizeof f.fix);
	check_str(f.none_why, sizeof f.none_why);
	if (f.kind[0] == '\0' || f.rule[0] == '\0' || (f.fix[0] == '\0') == (f.none_why[0] == '\0'))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int types[] = {1300, 1320, 1423, 1424, 1327, 1400};
	struct berth_denial_asm a = {0};
	struct berth_denial_event ev;
	struct berth_policy p;
	char ws[] = "/work/ws";

	if (size > (1U << 16))
		return 0;
	berth_policy_init(&p);
	p.workspace = ws;
	while (size >= 4) {
		int type = types[data[0] % 6];
		size_t n = (size_t)data[2] | (size_t)data[3] << 8;
		data += 4;
		size -= 4;
		if (n > size)
			n = size;
		/* a copy of exactly @n bytes: the parser must not read past it */
		char *t = malloc(n > 0 ? n : 1);
		if (t == NULL)
			return 0;
		memcpy(t, data, n);
		struct berth_denial_event one = {0};
		unsigned long long serial = 0;
		int r = berth_denial_parse_record(type, t, n, &one, &serial);
		if (r == 1) {
			if (one.serial != serial)
				abort();
			check_event(&one, &p);
		}
		if (berth_denial_feed(&a, type, t, n, &ev) == 1)
			check_event(&ev, &p);
		free(t);
		data += n;
		size -= n;
	}
	if (berth_denial_flush(&a, &ev) == 1)
		check_event(&ev, &p);
	p.workspace = NULL;
	berth_policy_free(&p);
	return 0;
}
