/* SPDX-License-Identifier: MIT */
/*
 * json.c - see json.h.
 */
#include "json.h"

#include <stdarg.h>

void berth_json_append_printf(json_t *arr, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	json_array_append_new(arr, json_vsprintf(fmt, ap));
	va_end(ap);
}
