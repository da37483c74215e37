/* SPDX-License-Identifier: MIT */
/*
 * fuzz_manifest.c - libFuzzer target for berth.yml (berth_manifest_parse) and
 * the JSON Schema subset.  Inputs are capped at 64 KiB.
 *
 * Besides memory errors it checks what the rest of berth relies on:
 *  - an invalid manifest always says why, and every diagnostic is one line
 *    starting with the display name, free of control characters (a hostile
 *    manifest must not drive the user's terminal);
 *  - a valid manifest has at least one export with unique names, schemas that
 *    pass berth_schema_check() with `type: object` at the top, examples whose
 *    inputs (and partial outputs) validate, and capabilities that parse again
 *    to themselves;
 *  - the same bytes read as JSON go through berth_schema_check() and, if they
 *    are a schema, through the validator with themselves as the instance.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "manifest/manifest.h"
#include "manifest/schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_diags(const struct berth_diags *d)
{
	for (size_t i = 0; i < d->n; i++) {
		const unsigned char *t = (const unsigned char *)d->items[i].text;
		if (strncmp((const char *)t, "berth.yml:", 10) != 0)
			abort();
		for (; *t != '\0'; t++)
			if (*t < 0x20 || *t == 0x7f)
				abort();
	}
}

static int count_only(void *opaque, const struct berth_schema_seg *segs, size_t n, const char *reason)
{
	char path[512];

	(void)opaque;
	berth_schema_format_path(segs, n, path, sizeof path);
	if (reason[0] == '\0')
		abort();
	return 0;
}

static void check_valid(const struct berth_manifest *m)
{
	char path[256], reason[512];

	if (m->n_exports == 0 || m->name == NULL || m->version == NULL || m->entry == NULL)
		abort();
	for (size_t i = 0; i < m->n_exports; i++) {
		const struct berth_export *x = &m->exports[i];
		if (x->name == NULL || x->description == NULL)
			abort();
		for (size_t j = 0; j < i; j++)
			if (strcmp(x->name, m->exports[j].name) == 0)
				abort();
		if (berth_schema_check(x->input, path, sizeof path, reason, sizeof reason) < 0 ||
		    berth_schema_check(x->output, path, sizeof path, reason, sizeof reason) < 0)
			abort();
		if (strcmp(json_string_value(json_object_get(x->input, "type")), "object") != 0 ||
		    strcmp(json_string_value(json_object_get(x->output, "type")), "object") != 0)
			abort();
		for (size_t j = 0; j < x->n_examples; j++) {
			const struct berth_example *ex = &x->examples[j];
			if (berth_schema_validate(x->input, ex->input, path, sizeof path, reason,
						  sizeof reason) < 0)
				abort();
			if (ex->output != NULL &&
			    berth_schema_validate_all(x->output, ex->output, BERTH_SCHEMA_PARTIAL, count_only,
						      NULL) != 0)
				abort();
			if ((ex->expect == BERTH_EXPECT_OUTPUT) != (ex->output != NULL))
				abort();
		}
	}
	for (size_t i = 0; i < m->n_caps; i++) {
		static const char *const ns[] = {"filesystem:read:", "filesystem:write:", "network:host:"};
		char again[8192];
		struct berth_cap cap;
		snprintf(again, sizeof again, "%s%s", ns[m->caps[i].kind], m->caps[i].scope);
		if (berth_capability_parse(again, &cap, reason, sizeof reason) < 0 ||
		    cap.kind != m->caps[i].kind || strcmp(cap.scope, m->caps[i].scope) != 0)
			abort();
		free(cap.scope);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct berth_manifest m;
	struct berth_diags d = {0};
	struct berth_error err = {0};
	json_t *j;

	if (size > 65536)
		return 0;
	if (berth_manifest_parse((const char *)data, size, NULL, &m, &d, &err) == 0) {
		if (d.n != 0)
			abort();
		check_valid(&m);
	} else if (err.msg[0] == '\0' || (err.errnum == 0 && d.n == 0)) {
		abort(); /* a failure must always say why */
	}
	check_diags(&d);
	berth_manifest_free(&m);
	berth_diags_free(&d);

	j = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
	if (j != NULL) {
		char path[256], reason[512];
		if (berth_schema_check(j, path, sizeof path, reason, sizeof reason) == 0)
			berth_schema_validate_all(j, j, 0, count_only, NULL);
		json_decref(j);
	}
	return 0;
}
