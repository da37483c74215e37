/* SPDX-License-Identifier: MIT */
/*
 * fuzz_policy_json.c - libFuzzer target for berth_policy_from_json(), the
 * policy the microVM guest reads from the host (src/policy/from_json.c).
 * Any bytes either are refused cleanly (status 125, a message, nothing
 * left in the policy) or read back stably: y = to_json(from_json(x)) reads
 * again to a policy whose JSON is y byte for byte.  Inputs are capped at
 * 64 KiB (the channel's largest frame).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct berth_error err = {0};
	struct berth_policy p, q;
	char *a, *b;

	if (size > 65536)
		return 0;
	if (berth_policy_from_json((const char *)data, size, &p, &err) < 0) {
		/* refused: said, and nothing kept */
		if (err.msg[0] == '\0' || err.status != BERTH_EXIT_INTERNAL || p.workspace != NULL ||
		    p.argv != NULL || p.mounts != NULL || p.env != NULL || p.container != NULL || p.app)
			abort();
		return 0;
	}
	a = berth_policy_to_json(&p, false, &err);
	if (a == NULL)
		abort();
	memset(&err, 0, sizeof err);
	if (berth_policy_from_json(a, strlen(a), &q, &err) < 0)
		abort(); /* its own output refused */
	b = berth_policy_to_json(&q, false, &err);
	if (b == NULL || strcmp(a, b) != 0)
		abort(); /* not stable */
	/* what was read holds no value the JSON cannot carry */
	for (size_t i = 0; i < p.n_env; i++)
		if (p.env[i].value != NULL)
			abort();
	free(a);
	free(b);
	berth_policy_free(&p);
	berth_policy_free(&q);
	return 0;
}
