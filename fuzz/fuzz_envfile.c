/* SPDX-License-Identifier: MIT */
/*
 * fuzz_envfile.c - libFuzzer target for `--env-file` (src/policy/envfile.c).
 *
 * Invariants (a violation aborts):
 *  - every name handed on matches [A-Za-z_][A-Za-z0-9_]*;
 *  - every value handed on occurs in the input (verbatim, or between the
 *    quotes that were removed) and contains no newline;
 *  - an error names the file and a line number, is a usage error (status 2),
 *    and echoes at most a name: nothing from `=` on (a value) appears in it,
 *    so the quoted part of the message holds no `=`;
 *  - a second parse of the same input gives the same result.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/envfile.h"

struct seen {
	const char *in;
	size_t len;
	int n;
};

static int check(void *ctx, const char *name, const char *value, struct berth_error *err)
{
	struct seen *s = ctx;

	(void)err;
	if (name[0] == '\0' || (name[0] >= '0' && name[0] <= '9'))
		abort();
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      *c == '_'))
			abort();
	if (strchr(value, '\n') != NULL)
		abort();
	if (value[0] != '\0' && memmem(s->in, s->len, value, strlen(value)) == NULL)
		abort();
	s->n++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seen a = {(const char *)data, size, 0}, b = {(const char *)data, size, 0};
	struct berth_error e1 = {0}, e2 = {0};
	int r1, r2;

	if (size > (1U << 16))
		return 0;
	r1 = berth_envfile_parse((const char *)data, size, "F", check, &a, &e1);
	r2 = berth_envfile_parse((const char *)data, size, "F", check, &b, &e2);
	if (r1 != r2 || a.n != b.n || strcmp(e1.msg, e2.msg) != 0)
		abort();
	if (r1 < 0) {
		if (strncmp(e1.msg, "F:", 2) != 0 || e1.status != BERTH_EXIT_USAGE)
			abort();
		const char *q = strchr(e1.msg, '`');
		if (q != NULL) {
			const char *q2 = strchr(q + 1, '`');
			if (q2 == NULL || memchr(q + 1, '=', (size_t)(q2 - q - 1)) != NULL)
				abort();
		}
	}
	return 0;
}
