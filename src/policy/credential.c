/* SPDX-License-Identifier: MIT */
/*
 * credential.c - the credential binding grammar (credential.h).
 */
#include "credential.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hostpat.h"
#include "../util/text.h"

static int fail(char *reason, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(char *reason, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (reason != NULL && len > 0) {
		va_start(ap, fmt);
		vsnprintf(reason, len, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* @a with control bytes escaped, in a buffer of the enclosing block */
#define CLEAN(a) berth_text_clean((char[160]){0}, 160, (a))

static bool shell_name(const char *s, size_t n)
{
	if (n == 0 || n > BERTH_CRED_NAME_MAX || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

/* RFC 9110 5.6.2 tchar */
static bool token(const char *s)
{
	if (*s == '\0' || strlen(s) > BERTH_CRED_FIELD_MAX)
		return false;
	for (; *s != '\0'; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      strchr("!#$%&'*+-.^_`|~", *s) != NULL))
			return false;
	return true;
}

/* Fields that frame or route the request, or belong to one hop only:
 * a secret there would change where or how long the request is. */
static bool reserved_field(const char *f)
{
	static const char *const r[] = {"host",
					"content-length",
					"transfer-encoding",
					"connection",
					"keep-alive",
					"te",
					"trailer",
					"upgrade",
					"proxy-authorization",
					"proxy-connection",
					"proxy-authenticate",
					NULL};
	for (size_t i = 0; r[i] != NULL; i++)
		if (strcasecmp(f, r[i]) == 0)
			return true;
	return false;
}

/* The names berth sets inside under the egress broker (docs/egress.md) and
 * the certificate variables of docs/credentials.md. */
static bool berths_name(const char *n)
{
	static const char *const own[] = {"PATH",
					  "HOME",
					  "USER",
					  "LOGNAME",
					  "HTTP_PROXY",
					  "HTTPS_PROXY",
					  "http_proxy",
					  "https_proxy",
					  "ALL_PROXY",
					  "all_proxy",
					  "NO_PROXY",
					  "no_proxy",
					  "SSL_CERT_FILE",
					  "NODE_EXTRA_CA_CERTS",
					  "REQUESTS_CA_BUNDLE",
					  "CURL_CA_BUNDLE",
					  "GIT_SSL_CAINFO",
					  NULL};
	for (size_t i = 0; own[i] != NULL; i++)
		if (strcmp(n, own[i]) == 0)
			return true;
	return strncmp(n, "BERTH_", 6) == 0;
}

static int parse_header(const char *h, struct berth_credential *c, char *reason, size_t len)
{
	const char *field = NULL;

	if (strcmp(h, "bearer") == 0) {
		c->header = BERTH_CRED_BEARER;
		field = "Authorization";
	} else if (strcmp(h, "x-api-key") == 0) {
		c->header = BERTH_CRED_X_API_KEY;
		field = "x-api-key";
	} else if (strcmp(h, "basic") == 0) {
		c->header = BERTH_CRED_BASIC;
		field = "Authorization";
	} else if (strncmp(h, "header:", 7) == 0) {
		c->header = BERTH_CRED_HEADER;
		field = h + 7;
		if (!token(field))
			return fail(reason, len,
				    "invalid header field `%s` in a credential binding: write a field name "
				    "such as `X-Auth-Token` (letters, digits, `-`; at most 64 bytes)",
				    field);
		if (reserved_field(field))
			return fail(
			    reason, len,
			    "a credential cannot go in `%s`: that field frames or routes the request; "
			    "name another field",
			    field);
	} else {
		return fail(reason, len,
			    "unknown credential header `%s`: use `#bearer` (default), `#x-api-key`, `#basic` "
			    "or `#header:FIELD`",
			    CLEAN(h));
	}
	c->field = strdup(field);
	return c->field == NULL ? -2 : 0;
}

/* credential.h */
bool berth_cred_dot_segment(const char *s, size_t n)
{
	size_t dots = 0;

	for (size_t i = 0; i < n; dots++) {
		if (s[i] == '.')
			i++;
		else if (n - i >= 3 && s[i] == '%' && s[i + 1] == '2' && (s[i + 2] == 'e' || s[i + 2] == 'E'))
			i += 3;
		else
			return false;
	}
	return dots == 1 || dots == 2;
}

/* a prefix the broker's rewrite never matches (src/broker/cred.c):
 * a dot segment, or a slash encoded or backward */
static bool path_resolves(const char *p)
{
	const char *seg = p + 1;

	if (strchr(p, '\\') != NULL || strcasestr(p, "%2f") != NULL || strcasestr(p, "%5c") != NULL)
		return true;
	for (const char *q = seg;; q++)
		if (*q == '/' || *q == '\0') {
			if (berth_cred_dot_segment(seg, (size_t)(q - seg)))
				return true;
			if (*q == '\0')
				return false;
			seg = q + 1;
		}
}

static int parse_dest(char *d, struct berth_credential *c, char *reason, size_t len)
{
	char *slash = strchr(d, '/'), *colon;
	struct berth_host_pattern pat;
	char why[BERTH_HOST_REASON_MAX];

	if (slash != NULL) {
		if (strlen(slash) > BERTH_CRED_PREFIX_MAX)
			return fail(reason, len,
				    "the path prefix of a credential binding is longer than 512 "
				    "bytes%s",
				    "");
		for (const char *p = slash; *p != '\0'; p++)
			if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f || *p == '?' ||
			    *p == '#' || *p == '@')
				return fail(reason, len,
					    "invalid path prefix `%s` in a credential binding: write a path "
					    "such as `/v1/` (no space, `?`, `#`, `@` or control character)",
					    CLEAN(slash));
		if (path_resolves(slash))
			return fail(reason, len,
				    "invalid path prefix `%s` in a credential binding: a path the server "
				    "resolves to another (a `.` or `..` segment, `%%2e` or not, a `%%2f`, "
				    "`%%5c` or `\\`) never matches; write the path it resolves to",
				    CLEAN(slash));
		c->prefix = strdup(slash);
		*slash = '\0';
	} else {
		c->prefix = strdup("/");
	}
	if (c->prefix == NULL)
		return -2;
	c->port = 443;
	if ((colon = strchr(d, ':')) != NULL) {
		char *end = NULL;
		unsigned long v = strtoul(colon + 1, &end, 10);
		if (colon[1] < '1' || colon[1] > '9' || *end != '\0' || v > 65535)
			return fail(reason, len,
				    "invalid port `%s` in a credential binding: write 1-65535 (443 when "
				    "none is given)",
				    CLEAN(colon + 1));
		c->port = (unsigned)v;
		*colon = '\0';
	}
	if (*d == '\0')
		return fail(reason, len, "a credential binding names no host: write NAME=SOURCE@HOST%s", "");
	if (berth_host_pattern_parse(d, &pat, why, sizeof why) < 0)
		return fail(reason, len, "invalid host in a credential binding: %s", CLEAN(why));
	if (pat.kind != BERTH_HOST_NAME)
		return fail(reason, len,
			    "a credential is bound to one host name, not `%s`: name the host exactly "
			    "(`api.example.com`)",
			    CLEAN(d));
	c->host = strdup(pat.name);
	return c->host == NULL ? -2 : 0;
}

static int parse_source(const char *s, struct berth_credential *c, char *reason, size_t len)
{
	const char *arg;

	if (strncmp(s, "env:", 4) == 0) {
		c->source = BERTH_CRED_SRC_ENV;
		arg = s + 4;
		if (!shell_name(arg, strlen(arg)))
			return fail(reason, len,
				    "invalid variable `%s` in a credential source: write env:NAME, a "
				    "variable of berth's environment",
				    CLEAN(arg));
	} else if (strncmp(s, "file:", 5) == 0) {
		c->source = BERTH_CRED_SRC_FILE;
		arg = s + 5;
		if (arg[0] != '/')
			return fail(reason, len,
				    "the credential file `%s` is not an absolute path: write file:/PATH",
				    CLEAN(arg));
	} else if (strncmp(s, "cmd:", 4) == 0) {
		c->source = BERTH_CRED_SRC_CMD;
		arg = s + 4;
		if (arg[strspn(arg, " \t")] == '\0')
			return fail(reason, len, "the credential command is empty: write cmd:COMMAND%s", "");
	} else {
		return fail(reason, len,
			    "unknown credential source `%s`: write env:VAR, file:/PATH or cmd:COMMAND",
			    CLEAN(s));
	}
	if (strlen(arg) > BERTH_CRED_SOURCE_ARG_MAX)
		return fail(reason, len, "the credential source is longer than 4096 bytes%s", "");
	for (const char *p = arg; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 && *p != '\t')
			return fail(reason, len, "the credential source `%s` holds a control character",
				    CLEAN(arg));
	c->source_arg = strdup(arg);
	return c->source_arg == NULL ? -2 : 0;
}

int berth_credential_parse(const char *s, struct berth_credential *c, char *reason, size_t len)
{
	char *copy = NULL, *eq, *at, *hash;
	int r;

	memset(c, 0, sizeof *c);
	if (s == NULL || (eq = strchr(s, '=')) == NULL)
		return fail(
		    reason, len,
		    "invalid credential binding `%s`: write NAME=SOURCE@HOST[:PORT][/PREFIX][#HEADER]",
		    CLEAN(s != NULL ? s : ""));
	if (!shell_name(s, (size_t)(eq - s)))
		return fail(reason, len,
			    "invalid credential name in `%s`: NAME is the variable that holds the "
			    "placeholder inside (letters, digits, `_`, at most 64 bytes)",
			    CLEAN(s));
	if ((copy = strdup(s)) == NULL)
		return -2;
	copy[eq - s] = '\0';
	if (berths_name(copy)) {
		r = fail(reason, len,
			 "the credential name `%s` is a variable berth sets inside: choose another",
			 CLEAN(copy));
		goto out;
	}
	char *rest = copy + (eq - s) + 1;
	if ((at = strrchr(rest, '@')) == NULL) {
		r = fail(reason, len,
			 "the credential binding `%s` names no destination: write NAME=SOURCE@HOST "
			 "(a secret is only ever sent to its host)",
			 CLEAN(s));
		goto out;
	}
	*at = '\0';
	if ((c->name = strdup(copy)) == NULL) {
		r = -2;
		goto out;
	}
	if ((hash = strchr(at + 1, '#')) != NULL)
		*hash++ = '\0';
	if ((r = parse_source(rest, c, reason, len)) == 0 && (r = parse_dest(at + 1, c, reason, len)) == 0)
		r = parse_header(hash != NULL ? hash : "bearer", c, reason, len);
out:
	free(copy);
	if (r < 0)
		berth_credential_clear(c);
	return r;
}

void berth_credential_clear(struct berth_credential *c)
{
	if (c == NULL)
		return;
	free(c->name);
	free(c->source_arg);
	free(c->host);
	free(c->prefix);
	free(c->field);
	memset(c, 0, sizeof *c);
}

const char *berth_cred_source_name(enum berth_cred_source s)
{
	return s == BERTH_CRED_SRC_ENV ? "env" : s == BERTH_CRED_SRC_FILE ? "file" : "cmd";
}

const char *berth_cred_header_name(enum berth_cred_header h)
{
	return h == BERTH_CRED_BEARER      ? "bearer"
	       : h == BERTH_CRED_X_API_KEY ? "x-api-key"
	       : h == BERTH_CRED_BASIC     ? "basic"
					   : "header";
}

int berth_credential_format(const struct berth_credential *c, char *buf, size_t len)
{
	const char *h = berth_cred_header_name(c->header);
	int n =
	    snprintf(buf, len, "%s=%s:%s@%s:%u%s#%s%s%s", c->name, berth_cred_source_name(c->source),
		     c->source_arg, c->host, c->port, c->prefix, h, c->header == BERTH_CRED_HEADER ? ":" : "",
		     c->header == BERTH_CRED_HEADER ? c->field : "");
	return n < 0 || (size_t)n >= len ? -1 : 0;
}
