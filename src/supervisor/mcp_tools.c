/* SPDX-License-Identifier: MIT */
/*
 * mcp_tools.c - `berth mcp`'s tools and their results: the tool list (an
 * app's exports, prefixed by the app's name when it serves more than one,
 * filtered by --only), a call's answer as a tool result (isError for a
 * failed call, so that the model sees it), and the calls in progress.
 */
#include "mcp_int.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "../util/text.h"

/* ---------------------------------------------------------- tools */

static bool structured(const struct berth_mcp *m)
{
	return strcmp(m->version, "2025-06-18") >= 0;
}

static void tool_name(const struct berth_mcp *m, const struct mcp_app *a, const char *export, char *buf,
		      size_t len)
{
	if (m->n_apps > 1)
		snprintf(buf, len, "%s__%s", berth_app_manifest(a->app)->name, export);
	else
		snprintf(buf, len, "%s", export);
}

static bool served(const struct berth_mcp *m, const char *tool, const char *export)
{
	if (m->o.n_only == 0)
		return true;
	for (size_t i = 0; i < m->o.n_only; i++)
		if (strcmp(m->o.only[i], tool) == 0 || strcmp(m->o.only[i], export) == 0)
			return true;
	return false;
}

/* Every tool, in order: app by app, export by export. */
json_t *berth_mcpi_all_tools(const struct berth_mcp *m)
{
	json_t *v = json_array();

	for (size_t i = 0; i < m->n_apps; i++) {
		const struct berth_manifest *man = berth_app_manifest(m->apps[i].app);
		for (size_t k = 0; k < man->n_exports; k++) {
			const struct berth_export *ex = &man->exports[k];
			char name[256];
			tool_name(m, &m->apps[i], ex->name, name, sizeof name);
			if (!served(m, name, ex->name))
				continue;
			json_t *t = json_pack("{s:s, s:s, s:O}", "name", name, "description", ex->description,
					      "inputSchema", ex->input);
			if (t != NULL && structured(m))
				json_object_set(t, "outputSchema", ex->output);
			if (t != NULL && berth_mcpi_tasks_on(m)) {
				/* 2025-11-25: any call may run as a task; icons */
				json_object_set_new(t, "execution",
						    json_pack("{s:s}", "taskSupport", "optional"));
				if (m->apps[i].icons != NULL)
					json_object_set(t, "icons", m->apps[i].icons);
			}
			json_array_append_new(v, t);
		}
	}
	return v;
}

json_t *berth_mcpi_app_icons(const char *dir)
{
	static const char *const files[][2] = {{"icon.svg", "image/svg+xml"}, {"icon.png", "image/png"}};

	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char path[PATH_MAX];
		struct stat st;
		snprintf(path, sizeof path, "%s/%s", dir, files[i][0]);
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
		    st.st_size > BERTH_MCP_ICON_MAX) {
			fprintf(stderr,
				"berth: mcp: %s is not used as the tools' icon: not a regular file of 1 to "
				"%d bytes\n",
				path, BERTH_MCP_ICON_MAX);
			close(fd);
			continue;
		}
		unsigned char *data = malloc((size_t)st.st_size);
		ssize_t n = data != NULL ? read(fd, data, (size_t)st.st_size) : -1;
		close(fd);
		if (n != st.st_size) {
			free(data);
			continue;
		}
		size_t b64 = sodium_base64_ENCODED_LEN((size_t)n, sodium_base64_VARIANT_ORIGINAL);
		char *uri = malloc(b64 + 64);
		if (uri == NULL) {
			free(data);
			return NULL;
		}
		int off = snprintf(uri, 64, "data:%s;base64,", files[i][1]);
		sodium_bin2base64(uri + off, b64, data, (size_t)n, sodium_base64_VARIANT_ORIGINAL);
		free(data);
		json_t *v = json_pack("[{s:s, s:s}]", "src", uri, "mimeType", files[i][1]);
		if (v != NULL && i == 0) /* a vector image: any size */
			json_object_set_new(json_array_get(v, 0), "sizes", json_pack("[s]", "any"));
		free(uri);
		return v;
	}
	return NULL;
}

/* The app and export of tool @name, or NULL. */
struct mcp_app *berth_mcpi_find_tool(struct berth_mcp *m, const char *name, const char **export)
{
	for (size_t i = 0; i < m->n_apps; i++) {
		const struct berth_manifest *man = berth_app_manifest(m->apps[i].app);
		for (size_t k = 0; k < man->n_exports; k++) {
			char tn[256];
			tool_name(m, &m->apps[i], man->exports[k].name, tn, sizeof tn);
			if (strcmp(tn, name) == 0 && served(m, tn, man->exports[k].name)) {
				*export = man->exports[k].name;
				return &m->apps[i];
			}
		}
	}
	return NULL;
}

json_t *berth_mcpi_tool_names_of(const struct berth_mcp *m, const struct mcp_app *a)
{
	json_t *v = json_array();
	const struct berth_manifest *man = berth_app_manifest(a->app);

	for (size_t k = 0; k < man->n_exports; k++) {
		json_t *e = json_pack("{s:s, s:s, s:O, s:O}", "name", man->exports[k].name, "description",
				      man->exports[k].description, "input", man->exports[k].input, "output",
				      man->exports[k].output);
		json_array_append_new(v, e);
	}
	(void)m;
	return v;
}

/* ---------------------------------------------------------- results */

static json_t *text_block(const char *text)
{
	return json_pack("{s:s, s:s}", "type", "text", "text", text);
}

/* Whether @s is base64 (RFC 4648, section 4: the standard alphabet, padded). */
static bool is_base64(const char *s, size_t n)
{
	size_t pad = 0;

	if (n == 0 || n % 4 != 0)
		return false;
	while (pad < 2 && s[n - 1 - pad] == '=')
		pad++;
	for (size_t i = 0; i < n - pad; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '+' && s[i] != '/')
			return false;
	return true;
}

/* Image and audio content (mcp_int.h). */
void berth_mcpi_media_blocks(const char *version, const json_t *schema, const json_t *output, json_t *content,
			     json_t *text_out)
{
	const json_t *props = json_object_get(schema, "properties");
	const char *k;
	json_t *ps;

	json_object_foreach((json_t *)props, k, ps) {
		const char *mt = json_string_value(json_object_get(ps, "contentMediaType"));
		const char *enc = json_string_value(json_object_get(ps, "contentEncoding"));
		json_t *v = json_object_get((json_t *)output, k);
		const char *kind = NULL;
		if (mt == NULL || enc == NULL || strcmp(enc, "base64") != 0 || !json_is_string(v))
			continue;
		if (strncmp(mt, "image/", 6) == 0)
			kind = "image";
		else if (strncmp(mt, "audio/", 6) == 0 && strcmp(version, "2025-03-26") >= 0)
			kind = "audio";
		if (kind == NULL || !is_base64(json_string_value(v), json_string_length(v)))
			continue; /* shown as text, as any other member */
		json_array_append_new(content,
				      json_pack("{s:s, s:O, s:s}", "type", kind, "data", v, "mimeType", mt));
		json_object_del(text_out, k);
	}
}

void berth_mcpi_finish_ok(struct berth_mcp *m, json_t *req_id, const json_t *schema, json_t *output)
{
	json_t *shown = json_copy(output), *content = json_array();
	json_t *r = NULL;

	if (shown != NULL && content != NULL) {
		json_array_append_new(content, json_null()); /* the text block's place */
		if (schema != NULL)
			berth_mcpi_media_blocks(m->version, schema, output, content, shown);
		char *text = json_dumps(shown, JSON_COMPACT);
		json_array_set_new(content, 0, text_block(text != NULL ? text : "{}"));
		free(text);
		r = json_pack("{s:O, s:b}", "content", content, "isError", false);
	}
	json_decref(shown);
	json_decref(content);
	if (r != NULL && structured(m))
		json_object_set(r, "structuredContent", output);
	berth_mcpi_deliver(m, req_id, r);
}

const json_t *berth_mcpi_output_schema(const struct mcp_app *a, const char *export)
{
	const struct berth_manifest *man = berth_app_manifest(a->app);

	for (size_t k = 0; export != NULL && k < man->n_exports; k++)
		if (strcmp(man->exports[k].name, export) == 0)
			return man->exports[k].output;
	return NULL;
}

/* A failed call is a tool result with isError, so that the model sees it
 * (MCP: "tool execution errors"). */
void berth_mcpi_finish_error(struct berth_mcp *m, json_t *req_id, int code, const char *message, json_t *data,
			     const char *denial)
{
	char *data_text = data != NULL ? json_dumps(data, JSON_COMPACT) : NULL;
	char *text = NULL;

	if (asprintf(&text, "%s (error %d)%s%s%s%s", message, code, data_text ? "\ndata: " : "",
		     data_text ? data_text : "", denial ? "\n\n" : "", denial ? denial : "") < 0)
		text = NULL;
	const char *t = text != NULL ? text : message;
	size_t cap = 3 * strlen(t) + 1;
	char *fixed = malloc(cap);
	if (fixed != NULL)
		berth_utf8_fix(fixed, cap, t); /* an app's text may be cut inside a character */
	berth_mcpi_deliver(m, req_id,
			   json_pack("{s:[o], s:b}", "content", text_block(fixed != NULL ? fixed : "error"),
				     "isError", true));
	free(fixed);
	free(text);
	free(data_text);
}

ssize_t berth_mcpi_find_pending(const struct berth_mcp *m, const struct mcp_app *a, bool via_dev,
				long long call_id)
{
	for (size_t i = 0; i < m->n_pend; i++)
		if (m->pend[i].app == a && m->pend[i].via_dev == via_dev && m->pend[i].call_id == call_id)
			return (ssize_t)i;
	return -1;
}

void berth_mcpi_pend_remove(struct berth_mcp *m, size_t i)
{
	json_decref(m->pend[i].req_id);
	json_decref(m->pend[i].args);
	memmove(&m->pend[i], &m->pend[i + 1], (m->n_pend - i - 1) * sizeof *m->pend);
	m->n_pend--;
}

/* A local call finished (berth_app_process / berth_app_expire). */
void berth_mcpi_local_done(void *ctx, long long id, json_t *result, const struct berth_call_error *ce)
{
	struct done_ctx *d = ctx;
	ssize_t i = berth_mcpi_find_pending(d->m, d->a, false, id);

	if (i < 0)
		return; /* cancelled */
	json_t *req_id = json_incref(d->m->pend[i].req_id);
	const json_t *schema = berth_mcpi_output_schema(d->a, d->m->pend[i].export);
	berth_mcpi_pend_remove(d->m, (size_t)i);
	if (result != NULL)
		berth_mcpi_finish_ok(d->m, req_id, schema, result);
	else
		berth_mcpi_finish_error(d->m, req_id, ce->code, ce->message, ce->data, ce->denial);
	json_decref(req_id);
}

int berth_mcpi_add_pending(struct berth_mcp *m, json_t *req_id, struct mcp_app *a, long long call_id,
			   bool via_dev, long long deadline)
{
	if (m->n_pend == m->cap_pend) {
		size_t cap = m->cap_pend ? m->cap_pend * 2 : 32;
		struct pending *v = realloc(m->pend, cap * sizeof *v);
		if (v == NULL)
			return -1;
		m->pend = v;
		m->cap_pend = cap;
	}
	m->pend[m->n_pend++] =
	    (struct pending){json_incref(req_id), NULL, NULL, a, call_id, via_dev, deadline};
	return 0;
}
