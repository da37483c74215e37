/* SPDX-License-Identifier: MIT */
/*
 * runtimes.c - the table of runtimes (runtimes.def): berth_runtime_find()
 * and berth_runtime_default().
 */
#include <stdio.h>
#include <string.h>

#include "runtime.h"

#define BERTH_RUNTIME(id) &berth_runtime_##id,
static const struct berth_runtime_ops *const runtimes[] = {
#include "runtimes.def"
};
#undef BERTH_RUNTIME

const struct berth_runtime_ops *berth_runtime_default(void)
{
	return runtimes[0];
}

const struct berth_runtime_ops *berth_runtime_find(const char *name, struct berth_error *err)
{
	char have[256] = "";
	size_t n = 0;

	if (name == NULL)
		return runtimes[0];
	for (size_t i = 0; i < sizeof runtimes / sizeof runtimes[0]; i++) {
		if (strcmp(runtimes[i]->name, name) == 0)
			return runtimes[i];
		n += (size_t)snprintf(have + n, n < sizeof have ? sizeof have - n : 0, "%s%s", i ? ", " : "",
				      runtimes[i]->name);
	}
	/* an empty name (`--runtime ''`, an unset variable) is no choice: never
	 * taken as the default in silence */
	if (name[0] == '\0') {
		berth_usage_err(err, "empty runtime name; this berth has: %s", have);
		berth_err_hint(err, "name one (`--runtime %s`), or leave `--runtime` out for the default, %s",
			       runtimes[0]->name, runtimes[0]->name);
		return NULL;
	}
	berth_usage_err(err, "unknown runtime `%.64s`; this berth has: %s", name, have);
	return NULL;
}
