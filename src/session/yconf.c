/* SPDX-License-Identifier: MIT */
/*
 * yconf.c - YAML configuration files for sessions (profiles, fleets).
 */
#include "yconf.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/cleanup.h"

int berth_yconf_err(struct berth_error *err, const char *display, const yaml_node_t *n, const char *key,
		    const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return berth_usage_err(err, "%s:%lu:%lu: %s%s%s", display, n ? (unsigned long)n->start_mark.line + 1 : 1UL,
			       n ? (unsigned long)n->start_mark.column + 1 : 1UL, key ? key : "", key ? ": " : "",
			       msg);
}

/* One pass over the events: refuse what the document API would hide
 * (aliases share nodes: a few lines could stand for millions). */
static int prescan(const char *display, const char *buf, size_t len, struct berth_error *err)
{
	yaml_parser_t ps;
	yaml_event_t ev;
	int docs = 0, r = 0;

	if (!yaml_parser_initialize(&ps))
		return berth_err(err, ENOMEM, "out of memory");
	yaml_parser_set_input_string(&ps, (const unsigned char *)buf, len);
	for (;;) {
		if (!yaml_parser_parse(&ps, &ev)) {
			r = berth_usage_err(err, "%s:%lu:%lu: %s", display, (unsigned long)ps.problem_mark.line + 1,
					    (unsigned long)ps.problem_mark.column + 1,
					    ps.problem ? ps.problem : "invalid YAML");
			break;
		}
		yaml_event_type_t t = ev.type;
		unsigned long line = ev.start_mark.line + 1, col = ev.start_mark.column + 1;
		if (t == YAML_ALIAS_EVENT)
			r = berth_usage_err(err, "%s:%lu:%lu: aliases are not allowed here", display, line, col);
		if (t == YAML_DOCUMENT_START_EVENT && ++docs > 1)
			r = berth_usage_err(err, "%s:%lu:%lu: only one YAML document is allowed", display, line, col);
		yaml_event_delete(&ev);
		if (r < 0 || t == YAML_STREAM_END_EVENT)
			break;
	}
	yaml_parser_delete(&ps);
	return r;
}

int berth_yconf_load(const char *display, const char *buf, size_t len, yaml_document_t *doc, struct berth_error *err)
{
	yaml_parser_t ps;
	yaml_node_t *root;

	if (len > BERTH_YCONF_MAX)
		return berth_usage_err(err, "%s: larger than %d bytes", display, BERTH_YCONF_MAX);
	if (memchr(buf, '\0', len) != NULL)
		return berth_usage_err(err, "%s: contains a NUL byte", display);
	if (prescan(display, buf, len, err) < 0)
		return -1;
	if (!yaml_parser_initialize(&ps))
		return berth_err(err, ENOMEM, "out of memory");
	yaml_parser_set_input_string(&ps, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&ps, doc)) {
		berth_usage_err(err, "%s:%lu:%lu: %s", display, (unsigned long)ps.problem_mark.line + 1,
				(unsigned long)ps.problem_mark.column + 1, ps.problem ? ps.problem : "invalid YAML");
		yaml_parser_delete(&ps);
		return -1;
	}
	yaml_parser_delete(&ps);
	root = yaml_document_get_root_node(doc);
	if (root == NULL || root->type != YAML_MAPPING_NODE) {
		berth_yconf_err(err, display, root, NULL, "expected a mapping of keys to values");
		yaml_document_delete(doc);
		return -1;
	}
	return 0;
}

char *berth_yconf_read_file(const char *path, size_t *len, struct berth_error *err)
{
	/* O_NONBLOCK and a regular file only: a FIFO must not hang berth */
	cleanup_close int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	char *buf;
	size_t n = 0;

	if (fd < 0)
		return berth_err(err, errno, "cannot open `%s`", path), err->status = BERTH_EXIT_USAGE, NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		berth_usage_err(err, "`%s` is not a regular file", path);
		berth_err_hint(err, "name a YAML file");
		return NULL;
	}
	buf = malloc(BERTH_YCONF_MAX + 2);
	if (buf == NULL)
		return berth_err(err, ENOMEM, "out of memory"), NULL;
	for (;;) {
		ssize_t r = read(fd, buf + n, BERTH_YCONF_MAX + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			berth_err(err, errno, "cannot read `%s`", path);
			err->status = BERTH_EXIT_USAGE;
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > BERTH_YCONF_MAX) {
			free(buf);
			berth_usage_err(err, "%s: larger than %d bytes", path, BERTH_YCONF_MAX);
			return NULL;
		}
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

const char *berth_yconf_str(const yaml_node_t *n)
{
	return n != NULL && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

int berth_yconf_bool(const yaml_node_t *n, bool *out)
{
	const char *s = berth_yconf_str(n);

	if (s == NULL)
		return -1;
	if (strcmp(s, "true") == 0)
		*out = true;
	else if (strcmp(s, "false") == 0)
		*out = false;
	else
		return -1;
	return 0;
}

void berth_yconf_strv_free(char **v)
{
	for (size_t i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

static int strv_add(char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 2) * sizeof **v);

	if (nv == NULL)
		return -1;
	*v = nv;
	if ((nv[*n] = strdup(s)) == NULL)
		return -1;
	nv[++*n] = NULL;
	return 0;
}

int berth_yconf_strv(yaml_document_t *doc, const char *display, const char *key, yaml_node_t *n, char ***out,
		     size_t *count, struct berth_error *err)
{
	char **v = NULL;
	size_t c = 0;

	*out = NULL;
	*count = 0;
	if (n->type == YAML_SCALAR_NODE) {
		const char *s = berth_yconf_str(n);
		if (s[0] == '\0' || strchr(s, '\n') != NULL)
			return berth_yconf_err(err, display, n, key, "expected a non-empty one-line string");
		if (strv_add(&v, &c, s) < 0)
			return berth_yconf_strv_free(v), berth_err(err, ENOMEM, "out of memory");
	} else if (n->type == YAML_SEQUENCE_NODE) {
		for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
			yaml_node_t *e = yaml_document_get_node(doc, *it);
			const char *s = berth_yconf_str(e);
			if (s == NULL || s[0] == '\0' || strchr(s, '\n') != NULL) {
				berth_yconf_strv_free(v);
				return berth_yconf_err(err, display, e, key, "expected a non-empty one-line string");
			}
			if (strv_add(&v, &c, s) < 0)
				return berth_yconf_strv_free(v), berth_err(err, ENOMEM, "out of memory");
		}
		if (v == NULL && (v = calloc(1, sizeof *v)) == NULL)
			return berth_err(err, ENOMEM, "out of memory");
	} else {
		return berth_yconf_err(err, display, n, key, "expected a string or a list of strings");
	}
	*out = v;
	*count = c;
	return 0;
}
