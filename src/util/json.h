/* SPDX-License-Identifier: MIT */
/*
 * json.h - small jansson helpers written once.
 */
#ifndef BERTH_JSON_H
#define BERTH_JSON_H

#include <jansson.h>

/*
 * berth_json_append_printf - append to the array @arr a string printed from
 * @fmt (printf(3)), the way checks list their reasons or problems.  Nothing
 * is appended when memory runs out or the text is not UTF-8 (jansson's
 * json_vsprintf refuses it).
 */
void berth_json_append_printf(json_t *arr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
