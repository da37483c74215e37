/* SPDX-License-Identifier: MIT */
/*
 * fuzz_rules.c - libFuzzer target for rules files (src/policy/rules.c,
 * src/util/ynode.c).
 *
 * The input is one rules file.  When it is accepted, it is checked against
 * a few fixed policies.  Inputs are capped at 64 KiB.
 *
 * Invariants (a violation aborts):
 *  - a refused file says why ("fuzz.yml:LINE:COL: ..."), with status
 *    BERTH_EXIT_USAGE (or BERTH_EXIT_INTERNAL when out of memory), and is
 *    not added;
 *  - every denial reads "refused by rules (fuzz.yml:LINE): ..." with a
 *    LINE inside the file, and has status BERTH_EXIT_USAGE;
 *  - the narrowest policy (network none, no workspace, no mounts, env,
 *    unprotect or degraded mode, the smallest valid limits) is refused only
 *    for its network;
 *  - adding the same file twice refuses exactly what it refused once (files
 *    only narrow; a file never widens another).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "policy/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_at(bool ok, int line)
{
	if (!ok) {
		fprintf(stderr, "%s: invariant at line %d broken\n", __FILE__, line);
		abort();
	}
}
#define check(ok) check_at((ok), __LINE__)

/* Lines as YAML counts them (YAML 1.1 line breaks, which libyaml follows):
 * LF, CR, CRLF (one), NEL (U+0085), LS (U+2028) and PS (U+2029). */
static unsigned lines_in(const uint8_t *d, size_t n)
{
	unsigned l = 1;
	for (size_t i = 0; i < n; i++) {
		if (d[i] == '\n' || (d[i] == '\r' && (i + 1 == n || d[i + 1] != '\n')))
			l++;
		else if (d[i] == 0xc2 && i + 1 < n && d[i + 1] == 0x85)
			l++;
		else if (d[i] == 0xe2 && i + 2 < n && d[i + 1] == 0x80 &&
			 (d[i + 2] == 0xa8 || d[i + 2] == 0xa9))
			l++;
	}
	return l;
}

static int verdict(const struct berth_rules *r, const struct berth_policy *p, const char *mode,
		   unsigned maxline, char *msg, size_t len)
{
	struct berth_error err = {0};
	struct berth_widening_ctx ctx = {.network_mode = mode};
	unsigned line = 0;
	int rc = berth_rules_check(r, p, &ctx, &err);

	check(rc == 0 || rc == -1);
	if (rc == -1) {
		check(err.status == BERTH_EXIT_USAGE);
		check(sscanf(err.msg, "refused by rules (fuzz.yml:%u):", &line) == 1);
		check(line >= 1 && line <= maxline);
		snprintf(msg, len, "%s", err.msg);
	} else {
		msg[0] = '\0';
	}
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct berth_error err = {0};
	struct berth_rules *r, *twice;
	struct berth_policy p;
	char m1[BERTH_ERR_MSG_MAX], m2[BERTH_ERR_MSG_MAX];
	char *hosts[] = {(char *)"api.example.com", (char *)"*.example.org:8443", (char *)"10.1.2.3:*"};
	char *unprotect[] = {(char *)".envrc"};
	struct berth_env env[] = {{(char *)"ANTHROPIC_API_KEY", (char *)"x", true},
				  {(char *)"LANG", (char *)"C", false}};
	struct berth_mount mnt = {(char *)"/srv/data", (char *)"/data", true};
	unsigned maxline = lines_in(data, size);

	if (size > 65536)
		return 0;
	r = berth_rules_new(&err);
	twice = berth_rules_new(&err);
	check(r != NULL && twice != NULL);
	if (berth_rules_add(r, (const char *)data, size, "fuzz.yml", &err) < 0) {
		check(strncmp(err.msg, "fuzz.yml", 8) == 0 || err.status == BERTH_EXIT_INTERNAL);
		check(err.status == BERTH_EXIT_USAGE || err.status == BERTH_EXIT_INTERNAL);
		check(berth_rules_count(r) == 0);
		berth_rules_free(r);
		berth_rules_free(twice);
		return 0;
	}
	check(berth_rules_add(twice, (const char *)data, size, "fuzz.yml", &err) == 0);
	check(berth_rules_add(twice, (const char *)data, size, "fuzz.yml", &err) == 0);

	/* The narrowest policy: only `networks` can refuse it. */
	memset(&p, 0, sizeof p);
	p.network = BERTH_NET_NONE;
	/* the smallest limits a policy may have (policy.h's range table):
	 * rules judge only a valid policy (berth_rules_check validates first) */
	p.tmp_size = berth_limit_defs[BERTH_LIMIT_TMP_SIZE].min;
	p.memory = berth_limit_defs[BERTH_LIMIT_MEMORY].min;
	p.millicpus = (uint32_t)berth_limit_defs[BERTH_LIMIT_CPUS].min;
	p.pids = (uint32_t)berth_limit_defs[BERTH_LIMIT_PIDS].min;
	p.nofile = (uint32_t)berth_limit_defs[BERTH_LIMIT_NOFILE].min;
	if (verdict(r, &p, "none", maxline, m1, sizeof m1) < 0)
		check(strstr(m1, "): networks does not allow none") != NULL);

	/* A wide policy, under each network mode. */
	p.workspace = (char *)"/home/u/project";
	p.mounts = &mnt;
	p.n_mounts = 1;
	p.unprotect = unprotect;
	p.n_unprotect = 1;
	p.env = env;
	p.n_env = 2;
	p.allow_degraded = true;
	/* the largest */
	p.memory = berth_limit_defs[BERTH_LIMIT_MEMORY].max;
	p.millicpus = (uint32_t)berth_limit_defs[BERTH_LIMIT_CPUS].max;
	p.pids = (uint32_t)berth_limit_defs[BERTH_LIMIT_PIDS].max;
	static const char *const modes[] = {"none", "proxy", "api-only", "host"};
	for (size_t i = 0; i < 4; i++) {
		p.network = i == 3 ? BERTH_NET_HOST : i == 0 ? BERTH_NET_NONE : BERTH_NET_PROXY;
		p.allow_hosts = i == 1 || i == 2 ? hosts : NULL;
		p.n_allow_hosts = i == 1 || i == 2 ? 3 : 0;
		int a = verdict(r, &p, modes[i], maxline, m1, sizeof m1);
		int b = verdict(twice, &p, modes[i], maxline, m2, sizeof m2);
		check(a == b && strcmp(m1, m2) == 0);
	}
	berth_rules_free(r);
	berth_rules_free(twice);
	return 0;
}
