/* SPDX-License-Identifier: MIT */
/*
 * fuzz_oci.c - libFuzzer target for `berth oci`'s config.json converter
 * (src/oci/bundle*.c), on any JSON document.
 *
 * Invariants (a violation aborts):
 *  - a document that is no object, or any refusal, fails with a usage error
 *    (status 2) whose message starts with "config.json" (it names the JSON
 *    path), unless the cause is the host's (errno set: ENOMEM);
 *  - an accepted document gives a policy with a container whose root and
 *    cwd are absolute, a command, and that berth_policy_validate() accepts
 *    again and berth_policy_to_json() writes;
 *  - a second conversion of the same document gives the same answer.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci/oci.h"

static char bundle[64];

static void remove_bundle(void)
{
	char root[96];

	snprintf(root, sizeof root, "%s/rootfs", bundle);
	rmdir(root);
	rmdir(bundle);
}

static void make_bundle(void)
{
	char root[96];

	if (bundle[0] != '\0')
		return;
	atexit(remove_bundle);
	snprintf(bundle, sizeof bundle, "/tmp/fuzz-oci-%d", (int)getpid());
	snprintf(root, sizeof root, "%s/rootfs", bundle);
	mkdir(bundle, 0700);
	mkdir(root, 0700);
}

static int convert(const json_t *cfg, struct berth_error *err, char **json)
{
	struct berth_oci_bundle b;
	int r = berth_oci_bundle_convert(cfg, bundle, "fuzz", &b, err);

	*json = NULL;
	if (r == 0) {
		const struct berth_container *c = b.policy.container;
		struct berth_error e = {0};
		if (c == NULL || c->root == NULL || c->root[0] != '/' || c->cwd == NULL || c->cwd[0] != '/' ||
		    b.policy.argc == 0 || b.policy.argv[0] == NULL || b.policy.argv[b.policy.argc] != NULL)
			abort();
		if (berth_policy_validate(&b.policy, &e) < 0)
			abort();
		*json = berth_policy_to_json(&b.policy, false, &e);
		if (*json == NULL)
			abort();
	}
	berth_oci_bundle_free(&b);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct berth_error e1 = {0}, e2 = {0};
	json_error_t je;
	json_t *cfg;
	char *j1, *j2;
	int r1, r2;

	if (size > (1U << 16))
		return 0;
	make_bundle();
	cfg = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
	if (cfg == NULL)
		return 0;
	r1 = convert(cfg, &e1, &j1);
	r2 = convert(cfg, &e2, &j2);
	if (r1 != r2 || strcmp(e1.msg, e2.msg) != 0 || (j1 == NULL) != (j2 == NULL) ||
	    (j1 != NULL && strcmp(j1, j2) != 0))
		abort();
	if (r1 < 0 && e1.errnum == 0 &&
	    (e1.status != BERTH_EXIT_USAGE || strncmp(e1.msg, "config.json", 11) != 0))
		abort();
	free(j1);
	free(j2);
	json_decref(cfg);
	return 0;
}
