/* SPDX-License-Identifier: MIT */
/*
 * envfile.c - `--env-file FILE` (envfile.h).
 */
#include "envfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/cleanup.h"

static bool name_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       (!first && c >= '0' && c <= '9');
}

bool berth_env_name_valid(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!name_char(s[i], i == 0))
			return false;
	return true;
}

int berth_envfile_parse(const char *buf, size_t len, const char *fname,
			int (*add)(void *ctx, const char *name, const char *value, struct berth_error *err),
			void *ctx, struct berth_error *err)
{
	size_t lineno = 0;

	if (len > BERTH_ENVFILE_MAX) {
		berth_usage_err(err, "%s: longer than %u bytes", fname, BERTH_ENVFILE_MAX);
		return berth_err_hint(err, "keep environment files small: one NAME=VALUE per line");
	}
	if (memchr(buf, '\0', len) != NULL) {
		const char *z = memchr(buf, '\0', len);
		size_t l = 1;
		for (const char *c = buf; c < z; c++)
			l += *c == '\n';
		berth_usage_err(err, "%s:%zu: a NUL byte", fname, l);
		return berth_err_hint(err, "an environment file is text: NAME=VALUE lines");
	}
	for (size_t off = 0; off < len;) {
		const char *line = buf + off, *nl = memchr(line, '\n', len - off);
		size_t n = nl != NULL ? (size_t)(nl - line) : len - off;
		const char *p = line, *end, *eq, *v;
		size_t vlen;
		int r;

		off += n + (nl != NULL);
		lineno++;
		if (n > BERTH_ENVFILE_LINE_MAX) {
			berth_usage_err(err, "%s:%zu: line longer than %u bytes", fname, lineno,
					BERTH_ENVFILE_LINE_MAX);
			return berth_err_hint(err, "put long values in a file the sandbox reads instead");
		}
		end = line + n;
		if (end > line && end[-1] == '\r')
			end--;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p == end || *p == '#')
			continue;
		if ((size_t)(end - p) > 7 && strncmp(p, "export", 6) == 0 && (p[6] == ' ' || p[6] == '\t')) {
			p += 7;
			while (p < end && (*p == ' ' || *p == '\t'))
				p++;
		}
		eq = memchr(p, '=', (size_t)(end - p));
		if (eq == NULL) {
			berth_usage_err(err, "%s:%zu: expected NAME=VALUE", fname, lineno);
			return berth_err_hint(err,
					      "write one NAME=VALUE per line; `#` starts a comment line");
		}
		if (!berth_env_name_valid(p, (size_t)(eq - p))) {
			berth_usage_err(err, "%s:%zu: invalid variable name `%.*s`", fname, lineno,
					(int)(eq - p > 64 ? 64 : eq - p), p);
			return berth_err_hint(
			    err, "a name is made of A-Z, a-z, 0-9 and _, and does not start with a digit");
		}
		v = eq + 1;
		vlen = (size_t)(end - v);
		if (vlen >= 2 && (v[0] == '"' || v[0] == '\'') && v[vlen - 1] == v[0]) {
			v++;
			vlen -= 2;
		}
		{
			cleanup_free char *name = strndup(p, (size_t)(eq - p));
			char *value = strndup(v, vlen);
			if (name == NULL || value == NULL) {
				free(value);
				return berth_err(err, ENOMEM, "out of memory");
			}
			r = add(ctx, name, value, err);
			explicit_bzero(value, vlen);
			free(value);
		}
		if (r < 0) {
			return berth_err_wrap(err, "%s:%zu", fname, lineno);
		}
	}
	return 0;
}

int berth_envfile_load(const char *path,
		       int (*add)(void *ctx, const char *name, const char *value, struct berth_error *err),
		       void *ctx, struct berth_error *err)
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	size_t len = 0, cap = 4096;
	char *buf;
	int r;

	if (fd < 0) {
		int e = errno;
		berth_usage_err(err, "cannot read --env-file `%s`: %s", path, strerror(e));
		err->errnum = e;
		return berth_err_hint(err, "name a readable file of NAME=VALUE lines");
	}
	buf = malloc(cap);
	if (buf == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	for (;;) {
		ssize_t n;
		if (len == cap) {
			char *nb;
			if (cap > BERTH_ENVFILE_MAX)
				break;
			nb = malloc(cap * 2);
			if (nb == NULL) {
				explicit_bzero(buf, len);
				free(buf);
				return berth_err(err, ENOMEM, "out of memory");
			}
			memcpy(nb, buf, len);
			explicit_bzero(buf, len);
			free(buf);
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			explicit_bzero(buf, len);
			free(buf);
			berth_usage_err(err, "cannot read --env-file `%s`: %s", path, strerror(e));
			return berth_err_hint(err, "name a readable file of NAME=VALUE lines");
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	r = berth_envfile_parse(buf, len, path, add, ctx, err);
	explicit_bzero(buf, len);
	free(buf);
	return r;
}
