/* SPDX-License-Identifier: MIT */
/*
 * aptsrc.c - Debian mirrors among the apt sources (aptsrc.h).
 */
#include "aptsrc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../util/buf.h"
#include "../util/cleanup.h"

/* Debian's distributions by codename and alias (debian-archive's dists/). */
static const char *const debian_suites[] = {
    "sid",     "unstable", "experimental", "testing",  "stable", "oldstable", "oldoldstable", "jessie",
    "stretch", "buster",   "bullseye",     "bookworm", "trixie", "forky",     "duke",
};

bool berth_apt_debian_suite(const char *suite)
{
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(debian_suites); i++)
		if (strcmp(suite, debian_suites[i]) == 0)
			return true;
	return false;
}

/* One entry of either format, its values as whitespace-separated lists. */
struct entry {
	char *types, *uris, *suites, *signed_by, *arch, *enabled;
};

static void entry_free(struct entry *e)
{
	free(e->types);
	free(e->uris);
	free(e->suites);
	free(e->signed_by);
	free(e->arch);
	free(e->enabled);
	memset(e, 0, sizeof *e);
}

/* Whether the whitespace- (or comma-) separated list @list holds @word. */
static bool list_has(const char *list, const char *word, const char *seps)
{
	size_t wl = strlen(word);

	for (const char *p = list; p != NULL && *p != '\0';) {
		size_t n;

		p += strspn(p, seps);
		n = strcspn(p, seps);
		if (n == wl && strncmp(p, word, n) == 0)
			return true;
		p += n;
	}
	return false;
}

static bool any_debian_suite(const char *suites)
{
	char word[64];

	for (const char *p = suites; p != NULL && *p != '\0';) {
		size_t n;

		p += strspn(p, " \t");
		n = strcspn(p, " \t");
		if (n > 0 && n < sizeof word) {
			memcpy(word, p, n);
			word[n] = '\0';
			if (berth_apt_debian_suite(word))
				return true;
		}
		p += n;
	}
	return false;
}

static bool debian_keyring(const char *signed_by)
{
	static const char prefix[] = "/usr/share/keyrings/debian-archive-";
	size_t len;

	if (signed_by == NULL)
		return true; /* apt's trusted keys: the entry stands or falls by its suite */
	signed_by += strspn(signed_by, " \t");
	len = strcspn(signed_by, " \t\n");
	if (signed_by[len + strspn(signed_by + len, " \t\n")] != '\0')
		return false; /* several keys, or an inline key block */
	return len > sizeof prefix - 1 + 4 && strncmp(signed_by, prefix, sizeof prefix - 1) == 0 &&
	       strncmp(signed_by + len - 4, ".gpg", 4) == 0 && memchr(signed_by, '/', len) != NULL &&
	       strstr(signed_by, "/..") == NULL;
}

static bool fetchable_uri(const char *u, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)u[i] <= 0x20 || u[i] == 0x7f || u[i] == '[' || u[i] == ']' || u[i] == '"')
			return false;
	return (n > 7 && strncmp(u, "http://", 7) == 0) || (n > 8 && strncmp(u, "https://", 8) == 0) ||
	       (n > 5 && strncmp(u, "file:", 5) == 0) || (n > 7 && strncmp(u, "mirror+", 7) == 0);
}

static bool same_uri(const char *a, const char *b, size_t bn)
{
	size_t an = strlen(a);

	while (an > 0 && a[an - 1] == '/')
		an--;
	while (bn > 0 && b[bn - 1] == '/')
		bn--;
	return an == bn && strncmp(a, b, an) == 0;
}

/* Append the entry's URIs when it is a Debian mirror; the count added or -1. */
static int take_entry(const struct entry *e, char ***uris, size_t *n, struct berth_error *err)
{
	int added = 0;

	if (e->types == NULL || e->uris == NULL || e->suites == NULL || !list_has(e->types, "deb", " \t"))
		return 0;
	if (e->enabled != NULL && strcasecmp(e->enabled, "no") == 0)
		return 0;
	if (!any_debian_suite(e->suites) || !debian_keyring(e->signed_by))
		return 0;
	if (e->arch != NULL && !list_has(e->arch, "amd64", " \t,"))
		return 0;
	for (const char *p = e->uris; *p != '\0';) {
		size_t len;
		bool dup = false;
		cleanup_free char *u = NULL;

		p += strspn(p, " \t");
		len = strcspn(p, " \t");
		if (len == 0)
			break;
		for (size_t i = 0; i < *n && !dup; i++)
			dup = same_uri((*uris)[i], p, len);
		if (!dup && fetchable_uri(p, len)) {
			u = strndup(p, len);
			if (u == NULL || berth_strv_push(uris, n, u) < 0)
				return berth_err(err, ENOMEM, "cannot read the apt sources");
			added++;
		}
		p += len;
	}
	return added;
}

/* Set *@field to a copy of @v (@n bytes), or append it after a space (continuation). */
static int field_put(char **field, const char *v, size_t n, bool append)
{
	size_t old = append && *field != NULL ? strlen(*field) : 0;
	char *s;

	if (!append) {
		free(*field);
		*field = NULL;
	}
	s = realloc(*field, old + n + 2);
	if (s == NULL)
		return -1;
	if (old > 0)
		s[old++] = ' ';
	memcpy(s + old, v, n);
	s[old + n] = '\0';
	*field = s;
	return 0;
}

static char **deb822_field(struct entry *e, const char *key, size_t kn)
{
	static const struct {
		const char *name;
		size_t off;
	} keys[] = {
	    {"Types", offsetof(struct entry, types)},        {"URIs", offsetof(struct entry, uris)},
	    {"Suites", offsetof(struct entry, suites)},      {"Signed-By", offsetof(struct entry, signed_by)},
	    {"Architectures", offsetof(struct entry, arch)}, {"Enabled", offsetof(struct entry, enabled)},
	};

	for (size_t i = 0; i < BERTH_ARRAY_SIZE(keys); i++)
		if (strlen(keys[i].name) == kn && strncasecmp(key, keys[i].name, kn) == 0)
			return (char **)((char *)e + keys[i].off);
	return NULL;
}

static int parse_deb822(const char *text, char ***uris, size_t *n, struct berth_error *err)
{
	struct entry e = {0};
	char **cur = NULL; /* the field a continuation line belongs to */
	int total = 0, r;

	for (const char *line = text;; line++) {
		size_t len = strcspn(line, "\n");
		const char *colon;
		size_t vs;

		if (len == 0 || strspn(line, " \t") == len) { /* a blank line ends a paragraph */
			r = take_entry(&e, uris, n, err);
			entry_free(&e);
			cur = NULL;
			if (r < 0)
				return -1;
			total += r;
		} else if (line[0] == '#') {
			/* a comment, inside a paragraph or not */
		} else if (line[0] == ' ' || line[0] == '\t') {
			if (cur != NULL && field_put(cur, line, len, true) < 0)
				goto oom;
		} else if ((colon = memchr(line, ':', len)) != NULL) {
			cur = deb822_field(&e, line, (size_t)(colon - line));
			vs = (size_t)(colon + 1 - line);
			vs += strspn(line + vs, " \t");
			if (vs > len)
				vs = len;
			if (cur != NULL && field_put(cur, line + vs, len - vs, false) < 0)
				goto oom;
		}
		line += len;
		if (*line == '\0')
			break;
	}
	r = take_entry(&e, uris, n, err);
	entry_free(&e);
	return r < 0 ? -1 : total + r;
oom:
	entry_free(&e);
	return berth_err(err, ENOMEM, "cannot read the apt sources");
}

/* The options of a one-line entry, `[a=b c=d]`, into @e. */
static int one_line_opts(const char *opts, size_t len, struct entry *e)
{
	for (size_t i = 0; i < len;) {
		size_t w, k;
		const char *eq;

		i += strspn(opts + i, " \t");
		w = strcspn(opts + i, " \t");
		if (w > len - i)
			w = len - i;
		eq = memchr(opts + i, '=', w);
		if (eq != NULL) {
			k = (size_t)(eq - (opts + i));
			if (k > 0 && (opts[i + k - 1] == '+' || opts[i + k - 1] == '-'))
				k--;
			char **f = k == 9 && strncasecmp(opts + i, "signed-by", 9) == 0 ? &e->signed_by
				   : k == 4 && strncasecmp(opts + i, "arch", 4) == 0    ? &e->arch
											: NULL;
			if (f != NULL && field_put(f, eq + 1, (size_t)(opts + i + w - (eq + 1)), false) < 0)
				return -1;
		}
		i += w;
	}
	return 0;
}

/* One line `deb [opts] URI SUITE COMP...` into @e; false when it is not one. */
static int one_line_entry(const char *line, size_t len, struct entry *e)
{
	const char *p = line + strspn(line, " \t"), *end = line + len;
	size_t w = strcspn(p, " \t");

	if (p >= end || *p == '#' || w > (size_t)(end - p))
		return 0;
	if (field_put(&e->types, p, w, false) < 0)
		return -1;
	p += w;
	p += strspn(p, " \t");
	if (p < end && *p == '[') {
		const char *close = memchr(p, ']', (size_t)(end - p));
		if (close == NULL)
			return 0;
		if (one_line_opts(p + 1, (size_t)(close - p - 1), e) < 0)
			return -1;
		p = close + 1;
		p += strspn(p, " \t");
	}
	w = strcspn(p, " \t");
	if (p >= end || w == 0 || w > (size_t)(end - p) || field_put(&e->uris, p, w, false) < 0)
		return p >= end || w == 0 ? 0 : -1;
	p += w;
	p += strspn(p, " \t");
	w = strcspn(p, " \t");
	if (p >= end || w == 0 || w > (size_t)(end - p))
		return 0;
	return field_put(&e->suites, p, w, false) < 0 ? -1 : 1;
}

static int parse_one_line(const char *text, char ***uris, size_t *n, struct berth_error *err)
{
	int total = 0;

	for (const char *line = text; *line != '\0';) {
		size_t len = strcspn(line, "\n");
		struct entry e = {0};
		int r = one_line_entry(line, len, &e);

		if (r > 0)
			r = take_entry(&e, uris, n, err);
		else if (r < 0)
			r = berth_err(err, ENOMEM, "cannot read the apt sources");
		entry_free(&e);
		if (r < 0)
			return -1;
		total += r;
		line += len;
		if (*line == '\n')
			line++;
	}
	return total;
}

int berth_apt_debian_uris(const char *text, enum berth_apt_format fmt, char ***uris, size_t *n,
			  struct berth_error *err)
{
	switch (fmt) {
	case BERTH_APT_ONE_LINE:
		return parse_one_line(text, uris, n, err);
	case BERTH_APT_DEB822:
		return parse_deb822(text, uris, n, err);
	default:
		return berth_err(err, EINVAL, "unknown apt sources format %d", (int)fmt);
	}
}
