/* SPDX-License-Identifier: MIT */
/*
 * capability.c - the capability grammar of berth.yml:
 *
 *   filesystem:read:PATH     PATH canonical, absolute, under /workspace,
 *   filesystem:write:PATH    /context, /tmp or /app; a trailing wildcard component means
 *                            the directory itself (`/workspace/` then `*`)
 *   network:host:PATTERN     the allow-host grammar of src/policy/hostpat.h (docs/egress.md):
 *                            host, *.suffix, a.b.c.d or [v6], each with :PORT or :*
 *
 * Filesystem scopes are checked lexically, never against the host: they name
 * paths inside the sandbox, and the runner maps them to mounts.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../policy/hostpat.h"
#include "../policy/hostpath.h"
#include "../util/cleanup.h"
#include "internal.h"

#define FS_ROOTS_TEXT "/workspace, /context, /tmp, /app"
#define FS_ROOTS_RULE "a filesystem scope may only name " FS_ROOTS_TEXT " or a path below them"
#define SCOPE_MAX 4096

static const char *const fs_roots[] = {"/workspace", "/context", "/tmp", "/app"};

/* A value for a message: printable ASCII as is, anything else as \xNN, cut at 80 bytes. */
static const char *cq(char *buf, size_t len, const char *s)
{
	size_t o = 0;

	for (size_t i = 0; s[i] != '\0'; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (i >= 80 || o + 8 >= len) {
			snprintf(buf + o, len - o, "...");
			return buf;
		}
		if (ch >= 0x20 && ch < 0x7f)
			buf[o++] = (char)ch;
		else if (ch == '\n')
			o += (size_t)snprintf(buf + o, len - o, "\\n");
		else if (ch == '\r')
			o += (size_t)snprintf(buf + o, len - o, "\\r");
		else if (ch == '\t')
			o += (size_t)snprintf(buf + o, len - o, "\\t");
		else
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", ch);
	}
	buf[o] = '\0';
	return buf;
}

/* ---- filesystem scopes ---- */

static int fs_scope(const char *scope, char **out, char *reason, size_t reason_len)
{
	char q[400], canon[PATH_MAX], path[SCOPE_MAX + 1];
	size_t len = strlen(scope);
	bool dotdot = false, uncanon = false;

	if (len > SCOPE_MAX)
		return berth_reasonf(reason, reason_len, "filesystem scope is longer than %d bytes",
				     SCOPE_MAX);
	if (scope[0] != '/')
		return berth_reasonf(reason, reason_len,
				     "filesystem scope `%s` must be an absolute path; " FS_ROOTS_RULE,
				     cq(q, sizeof q, scope));
	memcpy(path, scope, len + 1);
	if (len >= 2 && strcmp(path + len - 2, "/*") == 0) {
		len -= 2;
		path[len] = '\0';
	}
	if (strchr(path, '*') != NULL)
		return berth_reasonf(
		    reason, reason_len,
		    "filesystem scope `%s` has a `*` that is not a trailing `/*`; a wildcard may only end a "
		    "scope, as in `/workspace/*`",
		    cq(q, sizeof q, scope));
	if (len <= 1) /* the root, given with or without the wildcard */
		return berth_reasonf(reason, reason_len,
				     "filesystem scope `%s` names the whole filesystem; " FS_ROOTS_RULE,
				     cq(q, sizeof q, scope));
	for (const char *p = path + 1;; p++) {
		const char *e = strchrnul(p, '/');
		size_t n = (size_t)(e - p);
		if (n == 0 || (n == 1 && p[0] == '.'))
			uncanon = true;
		else if (n == 2 && p[0] == '.' && p[1] == '.')
			dotdot = true;
		if (*e == '\0')
			break;
		p = e;
	}
	if (dotdot)
		return berth_reasonf(
		    reason, reason_len,
		    "filesystem scope `%s` must not contain a `..` component; name the directory itself",
		    cq(q, sizeof q, scope));
	if (uncanon) {
		char q2[400];
		if (!berth_path_lexical_abs(path, canon)) /* absolute and short: cannot fail */
			snprintf(canon, sizeof canon, "%s", path);
		return berth_reasonf(
		    reason, reason_len,
		    "filesystem scope `%s` is not canonical (no `//`, `.` components or trailing `/`); fix: "
		    "write `%s`",
		    cq(q, sizeof q, scope), cq(q2, sizeof q2, canon));
	}
	for (size_t i = 0; i < BERTH_ARRAY_SIZE(fs_roots); i++) {
		size_t rl = strlen(fs_roots[i]);
		if (strncmp(path, fs_roots[i], rl) == 0 && (path[rl] == '\0' || path[rl] == '/')) {
			*out = strdup(path);
			if (*out == NULL)
				return berth_reasonf(reason, reason_len, "out of memory");
			return 0;
		}
	}
	return berth_reasonf(reason, reason_len,
			     "filesystem scope `%s` is outside the app's paths; " FS_ROOTS_RULE,
			     cq(q, sizeof q, scope));
}

/* Whether @p holds a character that hides or reorders text on a terminal:
 * C0 controls, DEL, C1 controls, zero-width and bidirectional formatting
 * characters, the BOM. */
static bool invisible(const unsigned char *p)
{
	for (; *p != '\0'; p++) {
		if (*p < 0x20 || *p == 0x7f)
			return true;
		if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			return true; /* U+0080-U+009F */
		if (p[0] == 0xe2 && p[1] == 0x80 &&
		    ((p[2] >= 0x8b && p[2] <= 0x8f) || (p[2] >= 0xaa && p[2] <= 0xae)))
			return true; /* U+200B-U+200F, U+202A-U+202E */
		if (p[0] == 0xe2 && p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9)
			return true; /* U+2066-U+2069 */
		if (p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf)
			return true; /* U+FEFF */
	}
	return false;
}

/* ---- network patterns ---- */

/* One grammar for `--allow-host` and `network:host:`: the broker's parser
 * (src/policy/hostpat.h), whose canonical text is what the policy records. */
static int net_pattern(const char *scope, char **out, char *reason, size_t reason_len)
{
	struct berth_host_pattern p;
	char canon[BERTH_HOST_PATTERN_STRLEN], why[BERTH_HOST_REASON_MAX];

	if (berth_host_pattern_parse(scope, &p, why, sizeof why) < 0)
		return berth_reasonf(reason, reason_len, "%s", why);
	if (berth_host_pattern_format(&p, canon, sizeof canon) < 0)
		return berth_reasonf(reason, reason_len, "network pattern `%s` cannot be written back",
				     scope);
	*out = strdup(canon);
	if (*out == NULL)
		return berth_reasonf(reason, reason_len, "out of memory");
	return 0;
}

int berth_capability_parse(const char *s, struct berth_cap *cap, char *reason, size_t reason_len)
{
	char q[400], q2[200];
	const char *c1, *c2, *scope;
	size_t nlen, alen;

	cap->scope = NULL;
	if (s[0] == '\0')
		return berth_reasonf(reason, reason_len,
				     "empty capability; a capability is `namespace:action:scope`, such as "
				     "`filesystem:write:/workspace` or `network:host:api.example.com:443`");
	c1 = strchr(s, ':');
	c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
	if (c1 == NULL || c2 == NULL)
		return berth_reasonf(
		    reason, reason_len,
		    "invalid capability `%s`; a capability is `namespace:action:scope`, such as "
		    "`filesystem:write:/workspace` or `network:host:api.example.com:443`",
		    cq(q, sizeof q, s));
	nlen = (size_t)(c1 - s);
	alen = (size_t)(c2 - c1 - 1);
	scope = c2 + 1;
	if (nlen == 10 && strncmp(s, "filesystem", nlen) == 0) {
		if (alen == 4 && strncmp(c1 + 1, "read", 4) == 0) {
			cap->kind = BERTH_CAP_FS_READ;
		} else if (alen == 5 && strncmp(c1 + 1, "write", 5) == 0) {
			cap->kind = BERTH_CAP_FS_WRITE;
		} else {
			snprintf(q2, sizeof q2, "%.*s", (int)alen, c1 + 1);
			return berth_reasonf(
			    reason, reason_len,
			    "unknown action `%s` for `filesystem`; known actions: read, write",
			    cq(q, sizeof q, q2));
		}
		if (*scope == '\0')
			return berth_reasonf(reason, reason_len,
					     "missing path after `%s`; fix: name a path such as `/workspace`",
					     cq(q, sizeof q, s));
		if (invisible((const unsigned char *)scope))
			return berth_reasonf(
			    reason, reason_len,
			    "filesystem scope `%s` has a control or invisible formatting character; "
			    "write the "
			    "path in plain characters",
			    cq(q, sizeof q, scope));
		if (fs_scope(scope, &cap->scope, reason, reason_len) < 0)
			return -1;
		if (cap->kind == BERTH_CAP_FS_WRITE && strncmp(cap->scope, "/app", 4) == 0 &&
		    (cap->scope[4] == '\0' || cap->scope[4] == '/')) {
			free(cap->scope);
			cap->scope = NULL;
			return berth_reasonf(
			    reason, reason_len,
			    "`%s` can never be granted: /app, the app's own code, is mounted read-only; fix: "
			    "declare `filesystem:read:%s`, or write under /workspace",
			    cq(q, sizeof q, s), cq(q2, sizeof q2, scope));
		}
		return 0;
	}
	if (nlen == 7 && strncmp(s, "network", nlen) == 0) {
		if (!(alen == 4 && strncmp(c1 + 1, "host", 4) == 0)) {
			snprintf(q2, sizeof q2, "%.*s", (int)alen, c1 + 1);
			return berth_reasonf(reason, reason_len,
					     "unknown action `%s` for `network`; known actions: host",
					     cq(q, sizeof q, q2));
		}
		cap->kind = BERTH_CAP_NET_HOST;
		if (*scope == '\0')
			return berth_reasonf(
			    reason, reason_len,
			    "missing host after `%s`; fix: name a host such as `api.example.com:443`",
			    cq(q, sizeof q, s));
		return net_pattern(scope, &cap->scope, reason, reason_len);
	}
	snprintf(q2, sizeof q2, "%.*s", (int)nlen, s);
	return berth_reasonf(reason, reason_len,
			     "unknown capability namespace `%s`; known namespaces: filesystem, network",
			     cq(q, sizeof q, q2));
}
