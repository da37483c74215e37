/* SPDX-License-Identifier: MIT */
/*
 * appchan.c - a message from a resident app, decided (appchan.h): the
 * rules app.c and app_call.c apply to what the app sends, in functions that
 * need neither the app nor its sandbox.
 */
#include "appchan.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../manifest/schema.h"
#include "../util/text.h"

void berth_appmsg_parse(const char *line, size_t len, struct berth_appmsg *m)
{
	json_error_t je;
	json_t *params;

	memset(m, 0, sizeof *m);
	m->msg = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_object(m->msg)) {
		snprintf(m->bad, sizeof m->bad, "%s", m->msg == NULL ? je.text : "not an object");
		json_decref(m->msg);
		m->msg = NULL;
		m->kind = BERTH_APPMSG_BAD;
		return;
	}
	m->method = json_string_value(json_object_get(m->msg, "method"));
	params = json_object_get(m->msg, "params");
	if (m->method != NULL && strcmp(m->method, "berth/log") == 0) {
		m->level = json_string_value(json_object_get(params, "level"));
		m->text = json_string_value(json_object_get(params, "message"));
		if (m->level == NULL)
			m->level = "info";
		if (m->text == NULL)
			m->text = "";
	}
	if (m->method != NULL && strcmp(m->method, "berth/ready") == 0)
		m->exports = json_object_get(params, "exports");
	if (json_object_get(m->msg, "id") != NULL) {
		json_t *id = json_object_get(m->msg, "id");
		m->kind = BERTH_APPMSG_ANSWER;
		m->id_ok = json_is_integer(id);
		m->id = m->id_ok ? (long long)json_integer_value(id) : 0;
	} else if (m->method == NULL) {
		m->kind = BERTH_APPMSG_NONE;
	} else if (m->level != NULL) {
		m->kind = BERTH_APPMSG_LOG;
	} else if (strcmp(m->method, "berth/ready") == 0) {
		m->kind = BERTH_APPMSG_READY;
	} else {
		m->kind = BERTH_APPMSG_OTHER;
	}
}

void berth_appmsg_free(struct berth_appmsg *m)
{
	json_decref(m->msg);
	memset(m, 0, sizeof *m);
}

static int fail(struct berth_call_error *ce, int code, json_t *data, const char *message)
{
	ce->code = code;
	snprintf(ce->message, sizeof ce->message, "%s", message);
	json_decref(ce->data);
	ce->data = data;
	return -1;
}

int berth_appmsg_error(const json_t *error, struct berth_call_error *ce)
{
	json_t *code = json_object_get(error, "code"), *data = json_object_get(error, "data");
	const char *message = json_string_value(json_object_get(error, "message"));
	char clean[1024];
	json_int_t c = json_is_integer(code) ? json_integer_value(code) : BERTH_RPC_INTERNAL;

	/* The app's words, not a terminal's commands; a code beyond the
	 * protocol's 32-bit range is no code. */
	berth_text_clean(clean, sizeof clean, message != NULL ? message : "the app failed");
	if (c < INT32_MIN || c > INT32_MAX)
		c = BERTH_RPC_INTERNAL;
	/* Codes that say what berth did (crash, timeout, bad output) are
	 * berth's to give: an app using them is reporting its own failure. */
	if (c == BERTH_RPC_CRASHED || c == BERTH_RPC_TIMEOUT || c == BERTH_RPC_BAD_OUTPUT)
		c = BERTH_RPC_APP_ERROR;
	return fail(ce, (int)c, json_is_object(data) ? json_incref(data) : NULL, clean);
}

int berth_appmsg_outcome(const struct berth_appmsg *m, const struct berth_export *ex, json_t **result,
			 struct berth_call_error *ce)
{
	json_t *error = json_object_get(m->msg, "error"), *res = json_object_get(m->msg, "result");
	char path[512], reason[512], msg[1100];

	memset(ce, 0, sizeof *ce);
	*result = NULL;
	if (error != NULL)
		return berth_appmsg_error(error, ce);
	if (!json_is_object(res)) {
		snprintf(msg, sizeof msg, "the app answered `%s` without a result object", ex->name);
		return fail(ce, BERTH_RPC_BAD_OUTPUT, NULL, msg);
	}
	if (berth_schema_validate(ex->output, res, path, sizeof path, reason, sizeof reason) < 0) {
		snprintf(msg, sizeof msg, "invalid output: %s: %s", path, reason);
		return fail(ce, BERTH_RPC_BAD_OUTPUT, json_pack("{s:s, s:s}", "path", path, "reason", reason),
			    msg);
	}
	*result = res;
	return 0;
}

static const struct berth_export *find(const struct berth_export *ex, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(ex[i].name, name) == 0)
			return &ex[i];
	return NULL;
}

static void add(char *list, size_t size, const char *name)
{
	size_t used = strlen(list);

	snprintf(list + used, size - used, "%s`%s`", list[0] ? ", " : "", name);
}

int berth_appmsg_parity(const json_t *announced, const struct berth_export *ex, size_t n, char *missing,
			char *extra, size_t size)
{
	size_t i;
	json_t *v;

	missing[0] = extra[0] = '\0';
	if (!json_is_array(announced))
		return -1;
	for (size_t k = 0; k < n; k++) {
		bool found = false;
		json_array_foreach(announced, i, v)
			if (json_is_string(v) && strcmp(json_string_value(v), ex[k].name) == 0)
				found = true;
		if (!found)
			add(missing, size, ex[k].name);
	}
	json_array_foreach(announced, i, v) {
		const char *name = json_string_value(v);
		char clean[160];

		if (name != NULL)
			name = berth_text_clean(clean, sizeof clean, name);
		if (name == NULL || find(ex, n, name) == NULL)
			add(extra, size, name != NULL ? name : "(not a string)");
	}
	return missing[0] == '\0' && extra[0] == '\0' ? 0 : 1;
}
