/* SPDX-License-Identifier: MIT */
/*
 * parse.c - parsers for sizes, durations and CPU counts given by users.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

static int suffix_shift(const char *s, unsigned *shift)
{
	static const struct {
		const char *sfx;
		unsigned shift;
	} tab[] = {
	    {"", 0},     {"b", 0},  {"k", 10},  {"kb", 10},  {"kib", 10}, {"m", 20},  {"mb", 20},
	    {"mib", 20}, {"g", 30}, {"gb", 30}, {"gib", 30}, {"t", 40},   {"tb", 40}, {"tib", 40},
	};

	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
		if (strcasecmp(s, tab[i].sfx) == 0) {
			*shift = tab[i].shift;
			return 0;
		}
	}
	return -1;
}

int berth_parse_size(const char *s, const char *what, uint64_t *out, struct berth_error *err)
{
	char *end = NULL;
	unsigned long long v;
	unsigned shift = 0;

	if (s == NULL || !isdigit((unsigned char)s[0]))
		goto bad;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || suffix_shift(end, &shift) < 0)
		goto bad;
	if (shift > 0 && v > (UINT64_MAX >> shift))
		goto bad;
	v <<= shift;
	if (v == 0)
		goto bad;
	*out = v;
	return 0;
bad:
	berth_usage_err(err, "invalid %s `%s`", what, s != NULL ? s : "");
	return berth_err_hint(err, "give a positive size such as `512M`, `8G` or `1073741824` (bytes)");
}

int berth_parse_duration_ms(const char *s, const char *what, uint64_t *out, struct berth_error *err)
{
	char *end = NULL;
	double v, mult;

	if (s == NULL || !isdigit((unsigned char)s[0]))
		goto bad;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0)
		goto bad;
	if (*end == '\0' || strcmp(end, "s") == 0)
		mult = 1000;
	else if (strcmp(end, "ms") == 0)
		mult = 1;
	else if (strcmp(end, "m") == 0)
		mult = 60000;
	else if (strcmp(end, "h") == 0)
		mult = 3600000;
	else
		goto bad;
	v *= mult;
	if (!(v >= 1) || v > 1e15)
		goto bad;
	*out = (uint64_t)v;
	return 0;
bad:
	berth_usage_err(err, "invalid %s `%s`", what, s != NULL ? s : "");
	return berth_err_hint(err, "give a duration such as `30s`, `500ms`, `5m` or `1h`");
}

int berth_parse_millicpus(const char *s, uint32_t *out, struct berth_error *err)
{
	char *end = NULL;
	double v;

	if (s == NULL || !isdigit((unsigned char)s[0]))
		goto bad;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !(v >= 0.01) || v > 1024)
		goto bad;
	*out = (uint32_t)(v * 1000 + 0.5);
	return 0;
bad:
	berth_usage_err(err, "invalid --cpus `%s`", s != NULL ? s : "");
	return berth_err_hint(err, "give a number of CPUs between 0.01 and 1024, such as `2` or `0.5`");
}
