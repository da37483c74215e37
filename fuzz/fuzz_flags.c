/* SPDX-License-Identifier: MIT */
/*
 * fuzz_flags.c - libFuzzer target for every parser of user input in the
 * policy layer: `berth run` options (argv split on NUL bytes), sizes,
 * durations, CPU counts, and the canonical JSON of what parsed.
 * Inputs are capped at 64 KiB.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/dns.h"
#include "policy/flags.h"
#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *no_env(const char *name)
{
	return strcmp(name, "HOME") == 0 ? "/nonexistent" : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf, *argv[66];
	int argc = 0;
	struct berth_error err;
	struct berth_run_opts o;
	uint64_t u64;
	uint32_t u32;

	if (size > 65536)
		return 0;
	buf = malloc(size + 1);
	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[argc++] = "run";
	for (char *p = buf; p < buf + size && argc < 64; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;
	for (int i = 1; i < argc; i++) {
		berth_parse_size(argv[i], "size", &u64, &err);
		berth_parse_duration_ms(argv[i], "duration", &u64, &err);
		berth_parse_millicpus(argv[i], &u32, &err);
		/* every limit: an accepted value is in its range and was written
		 * in digits (no sign, blank, hex); a refusal is a usage error that
		 * names the range */
		for (int id = 0; id < BERTH_LIMIT_COUNT; id++) {
			const struct berth_limit_def *d = &berth_limit_defs[id];
			uint64_t v = 0;
			memset(&err, 0, sizeof err);
			if (berth_limit_parse((enum berth_limit)id, NULL, argv[i], &v, &err) == 0) {
				if (v < d->min || v > d->max || argv[i][0] < '0' || argv[i][0] > '9' ||
				    strpbrk(argv[i], " \t+-xX") != NULL)
					abort();
			} else if (err.status != BERTH_EXIT_USAGE || strstr(err.msg, d->range) == NULL) {
				abort();
			}
		}
		/* a --dns server: accepted text reads back to itself; a refusal says why */
		char csv[96], again[96];
		memset(&err, 0, sizeof err);
		if (berth_dns_server_parse(argv[i], csv, sizeof csv, &err) == 0) {
			if (berth_dns_server_parse(csv, again, sizeof again, &err) < 0 ||
			    strcmp(csv, again) != 0)
				abort();
		} else if (err.msg[0] == '\0' || err.status != BERTH_EXIT_USAGE) {
			abort();
		}
	}
	memset(&err, 0, sizeof err);
	if (berth_run_parse(argc, argv, no_env, &o, &err) == 0 && !o.help) {
		char hex[65];
		char *json;
		/* what the parser accepts the validator accepts (the run refuses
		 * nothing --dry-run passed) */
		if (berth_policy_validate(&o.policy, &err) < 0)
			abort();
		json = berth_policy_to_json(&o.policy, false, &err);
		free(json);
		berth_policy_digest(&o.policy, hex, &err);
	} else if (err.msg[0] == '\0' && !o.help) {
		abort(); /* a failure must always say why */
	}
	berth_run_opts_free(&o);
	free(buf);
	return 0;
}
