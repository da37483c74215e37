/* SPDX-License-Identifier: MIT */
/*
 * parse.c - parsers for the sizes, counts, durations and CPU counts users
 * give.  Decimal digits only: strtoull(3) and strtod(3) take a sign, leading
 * blanks, hex, exponents, "inf" and wrap "-1" to 2^64 - 1, and a value that
 * is then cast to a signed type or multiplied by a suffix turns into "no
 * limit".  Every product is checked before it is made.  The ranges are
 * checked by berth_limit_check (validate.c).
 */
#include <errno.h>
#include <stdio.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../util/text.h"
#include "policy.h"

/* The reasons a text is refused before its range is looked at. */
#define R_TOO_LARGE "too large"

/* scan_digits - decimal digits at *@s into @v, advancing *@s.  Returns the
 * number of digits, or -1 when the value passes 2^64 - 1. */
static int scan_digits(const char **s, uint64_t *v)
{
	int n = 0;

	*v = 0;
	for (; **s >= '0' && **s <= '9'; (*s)++, n++) {
		unsigned d = (unsigned)(**s - '0');
		if (*v > (UINT64_MAX - d) / 10)
			return -1;
		*v = *v * 10 + d;
	}
	return n;
}

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

/* scan_size - DIGITS[SUFFIX] in bytes.  Returns NULL or the reason. */
static const char *scan_size(const char *s, uint64_t *out)
{
	unsigned shift = 0;
	int n = scan_digits(&s, out);

	if (n == 0)
		return "not a size";
	if (suffix_shift(s, &shift) < 0)
		return n < 0 ? R_TOO_LARGE : "not a size";
	if (n < 0 || *out > (UINT64_MAX >> shift))
		return R_TOO_LARGE;
	*out <<= shift;
	return NULL;
}

static const char *scan_count(const char *s, uint64_t *out)
{
	int n = scan_digits(&s, out);

	if (n == 0 || (*s != '\0' && n > 0))
		return "not a whole number";
	return n < 0 ? R_TOO_LARGE : NULL;
}

/* scan_fixed - DIGITS[.DIGITS] times @mult, the fraction scaled by @mult
 * exactly and written in @frac_max digits at most (9 or fewer).  @inexact
 * names a finer value, @too_long one written with more digits than that:
 * "5.0000" CPUs is refused like "0.0005", as the documented "at most 3
 * decimals" says (the manifest's `cpus` is the same parser). */
static const char *scan_fixed(const char **s, uint64_t mult, int frac_max, const char *what,
			      const char *inexact, const char *too_long, uint64_t *out)
{
	uint64_t i, f = 0, scale = 1;
	int n = scan_digits(s, &i), k = 0;

	if (n == 0)
		return what;
	if (**s == '.') {
		(*s)++;
		for (; **s >= '0' && **s <= '9'; (*s)++, k++) {
			if (k == frac_max) { /* durations: 9, a nanosecond, far below any unit */
				while (**s == '0')
					(*s)++;
				/* "5.0000": the value is exact, its spelling too long */
				if (**s >= '1' && **s <= '9')
					return inexact;
				return **s == '\0' ? too_long : what;
			}
			f = f * 10 + (uint64_t)(**s - '0');
			scale *= 10;
		}
		if (k == 0)
			return what;
	}
	if (n < 0 || i > UINT64_MAX / mult)
		return R_TOO_LARGE;
	/* f < 10^9 and mult <= 3.6e6: f * mult fits */
	if (f * mult % scale != 0)
		return inexact;
	if (i * mult > UINT64_MAX - f * mult / scale)
		return R_TOO_LARGE;
	*out = i * mult + f * mult / scale;
	return NULL;
}

static const char *scan_cpus(const char *s, uint64_t *out)
{
	const char *r = scan_fixed(&s, 1000, 3, "not a number of CPUs", "finer than 0.001 CPU",
				   "more than 3 decimals", out);

	if (r == NULL && *s != '\0')
		return "not a number of CPUs";
	return r;
}

static const char *scan_duration(const char *s, uint64_t *out)
{
	static const struct {
		const char *unit;
		uint64_t ms;
	} units[] = {{"", 1000}, {"s", 1000}, {"ms", 1}, {"m", 60000}, {"h", 3600000}};
	const char *p = s;
	size_t len;

	while ((*p >= '0' && *p <= '9') || *p == '.')
		p++;
	len = (size_t)(p - s);
	for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
		if (strcmp(p, units[u].unit) != 0)
			continue;
		char num[64];
		const char *q = num;
		if (len == 0)
			return "not a duration";
		if (len >= sizeof num)
			return memchr(s, '.', len) != NULL ? "not a duration" : R_TOO_LARGE;
		memcpy(num, s, len);
		num[len] = '\0';
		const char *r = scan_fixed(&q, units[u].ms, 9, "not a duration", "finer than a millisecond",
					   "finer than a millisecond", out);
		return r == NULL && *q != '\0' ? "not a duration" : r;
	}
	return "not a duration";
}

static const char *const kind_hint[] = {
    [BERTH_LIMIT_KIND_SIZE] = "write a size in bytes, or with a suffix K, M, G or T (powers of 1024), "
			      "such as `512M` or `8G`",
    [BERTH_LIMIT_KIND_COUNT] = "write a whole number in decimal digits, such as `64`",
    [BERTH_LIMIT_KIND_CPUS] = "write a number of CPUs with at most 3 decimals, such as `2` or `0.5`",
    [BERTH_LIMIT_KIND_DURATION] = "write a duration with a unit ms, s (the default), m or h, such as "
				  "`30s`, `500ms`, `1.5m` or `2h`",
};

/* refuse - the message of every refusal: the setting, the text, why, the range. */
static int refuse(const char *what, const char *given, const char *why, const char *range,
		  enum berth_limit_kind kind, struct berth_error *err)
{
	char clean[96];

	berth_usage_err(err, "invalid %s `%s`: %s, expected %s", what,
			berth_text_clean(clean, sizeof clean, given), why, range);
	return berth_err_hint(err, "%s", kind_hint[kind]);
}

int berth_limit_refuse(const char *what, const char *given, const char *why, enum berth_limit id,
		       struct berth_error *err)
{
	const struct berth_limit_def *d = &berth_limit_defs[id];

	return refuse(what != NULL ? what : d->option, given, why, d->range, d->kind, err);
}

static const char *scan(enum berth_limit_kind kind, const char *s, uint64_t *v)
{
	switch (kind) {
	case BERTH_LIMIT_KIND_SIZE:
		return scan_size(s, v);
	case BERTH_LIMIT_KIND_COUNT:
		return scan_count(s, v);
	case BERTH_LIMIT_KIND_CPUS:
		return scan_cpus(s, v);
	case BERTH_LIMIT_KIND_DURATION:
		return scan_duration(s, v);
	default:
		return "not a number";
	}
}

int berth_limit_parse(enum berth_limit id, const char *what, const char *s, uint64_t *out,
		      struct berth_error *err)
{
	const struct berth_limit_def *d = &berth_limit_defs[id];
	const char *why;
	uint64_t v = 0;

	if (s == NULL)
		s = "";
	why = scan(d->kind, s, &v);
	if (why != NULL)
		return berth_limit_refuse(what, s, why, id, err);
	if (berth_limit_check(id, what, v, s, err) < 0)
		return -1;
	*out = v;
	return 0;
}

int berth_parse_size(const char *s, const char *what, uint64_t *out, struct berth_error *err)
{
	const char *why = scan_size(s != NULL ? s : "", out);

	if (why == NULL && *out == 0)
		why = "zero";
	if (why != NULL)
		return refuse(what, s != NULL ? s : "", why, "1 to 18446744073709551615 bytes",
			      BERTH_LIMIT_KIND_SIZE, err);
	return 0;
}

int berth_parse_duration_ms(const char *s, const char *what, uint64_t *out, struct berth_error *err)
{
	uint64_t v = 0;

	if (berth_limit_parse(BERTH_LIMIT_TIMEOUT, what, s, &v, err) < 0)
		return -1;
	*out = v;
	return 0;
}

int berth_parse_millicpus(const char *s, uint32_t *out, struct berth_error *err)
{
	uint64_t v = 0;

	if (berth_limit_parse(BERTH_LIMIT_CPUS, NULL, s, &v, err) < 0)
		return -1;
	*out = (uint32_t)v; /* at most BERTH_MILLICPUS_MAX */
	return 0;
}

int berth_parse_count(const char *s, const char *what, uint64_t min, uint64_t max, uint64_t *out,
		      struct berth_error *err)
{
	char range[48];
	uint64_t v = 0;
	const char *why = scan_count(s != NULL ? s : "", &v);

	if (why == NULL && (v < min || v > max))
		why = v == 0 ? "zero" : v < min ? "too small" : "too large";
	if (why != NULL) {
		snprintf(range, sizeof range, "%" PRIu64 " to %" PRIu64, min, max);
		return refuse(what, s != NULL ? s : "", why, range, BERTH_LIMIT_KIND_COUNT, err);
	}
	*out = v;
	return 0;
}
