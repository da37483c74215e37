/* SPDX-License-Identifier: MIT */
/*
 * flags_net.c - the network side of `berth run`'s options: --allow-host
 * patterns (the broker's grammar, canonical spelling) and the network presets
 * (`--network api-only`, --forensic) read from the user's or berth's data
 * directory.  Shared with flags.c through flags_int.h.
 */
#include "flags_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "credential.h"
#include "hostpat.h"
#include "../util/cleanup.h"
#include "../util/text.h"

/* --allow-host PATTERN: validated with the broker's own grammar and kept in
 * its canonical spelling (docs/egress.md). */
int berth_fl_add_allow_host(struct berth_policy *p, const char *arg, struct berth_error *err)
{
	struct berth_host_pattern pat;
	char reason[512], canon[300];

	if (berth_host_pattern_parse(arg, &pat, reason, sizeof reason) < 0) {
		char clean[160];
		berth_usage_err(err, "invalid --allow-host `%s`: %s",
				berth_text_clean(clean, sizeof clean, arg), reason);
		return berth_err_hint(
		    err, "write host, *.domain, an IP address or [IPv6], optionally :PORT or :*");
	}
	if (berth_host_pattern_format(&pat, canon, sizeof canon) < 0)
		return berth_err(err, EINVAL, "cannot format --allow-host `%s`", arg);
	return berth_fl_strv_add(&p->allow_hosts, &p->n_allow_hosts, canon, true, err);
}

/* A preset is a short list: a larger file is not one. */
#define PRESET_MAX_BYTES 65536
#define PRESET_LINE_MAX 511

/* Open @path for reading if it is a regular file (a FIFO, a device such as
 * /dev/zero or a directory would block or never end): the fd, -1 when it
 * does not exist, or -2 with @err filled. */
static int open_preset(const char *path, struct berth_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;

	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return -1;
		berth_err(err, errno, "cannot open the network preset `%s`", path);
		return -2;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		return fd;
	close(fd);
	berth_usage_err(err, "the network preset `%s` is not a regular file", path);
	berth_err_hint(err, "write one allow-host pattern per line in a regular file");
	return -2;
}

/*
 * A network preset: allow-host patterns, one per line (`#` comments), from
 * $XDG_CONFIG_HOME/berth/network/NAME (the user's override), else the copy
 * shipped with berth: ../data/network/NAME next to the binary (build tree),
 * or ../share/berth/network/NAME (installed).  A regular file of at most
 * PRESET_MAX_BYTES, lines of at most PRESET_LINE_MAX bytes, no NUL byte: a
 * longer line is refused, not cut (the cut-off end of a `#` comment would
 * have been read as a pattern of its own).
 */
int berth_fl_load_preset(struct berth_policy *p, const char *name, struct berth_error *err)
{
	char path[PATH_MAX], exe[PATH_MAX];
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	cleanup_free char *text = NULL;
	int fd = -1;
	ssize_t n;

	if (xdg != NULL && xdg[0] == '/')
		snprintf(path, sizeof path, "%s/berth/network/%s", xdg, name);
	else if (home != NULL && home[0] == '/')
		snprintf(path, sizeof path, "%s/.config/berth/network/%s", home, name);
	else
		path[0] = '\0';
	if (path[0] != '\0' && (fd = open_preset(path, err)) == -2)
		return -1;
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (fd < 0 && n > 0) {
		exe[n] = '\0';
		*strrchr(exe, '/') = '\0';
		snprintf(path, sizeof path, "%s/../data/network/%s", exe, name);
		if ((fd = open_preset(path, err)) == -1) {
			snprintf(path, sizeof path, "%s/../share/berth/network/%s", exe, name);
			fd = open_preset(path, err);
		}
		if (fd == -2)
			return -1;
	}
	if (fd < 0) {
		berth_usage_err(err, "cannot find the network preset `%s`", name);
		return berth_err_hint(
		    err, "write one allow-host pattern per line in $XDG_CONFIG_HOME/berth/network/%s", name);
	}
	size_t len = 0;
	text = malloc(PRESET_MAX_BYTES + 1);
	while (text != NULL && len <= PRESET_MAX_BYTES) {
		ssize_t r = read(fd, text + len, PRESET_MAX_BYTES + 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r < 0) {
				int e = errno;
				close(fd);
				return berth_err(err, e, "cannot read the network preset `%s`", path);
			}
			break;
		}
		len += (size_t)r;
	}
	close(fd);
	if (text == NULL)
		return berth_err(err, ENOMEM, "out of memory");
	if (len > PRESET_MAX_BYTES) {
		berth_usage_err(err, "the network preset `%s` is larger than %d bytes", path,
				PRESET_MAX_BYTES);
		return berth_err_hint(err, "write one allow-host pattern per line");
	}
	text[len] = '\0';
	if (memchr(text, '\0', len) != NULL) {
		berth_usage_err(err, "the network preset `%s` contains a NUL byte: it is not a text file",
				path);
		return berth_err_hint(err, "write one allow-host pattern per line");
	}
	unsigned lineno = 0;
	for (char *s = text; *s != '\0';) {
		char *nl = strchr(s, '\n'), *e;
		size_t ll = nl != NULL ? (size_t)(nl - s) : strlen(s);
		lineno++;
		if (ll > PRESET_LINE_MAX) {
			berth_usage_err(err, "the network preset `%s`, line %u, is longer than %d bytes",
					path, lineno, PRESET_LINE_MAX);
			return berth_err_hint(err, "write one allow-host pattern per line");
		}
		if (nl != NULL)
			*nl = '\0';
		while (*s == ' ' || *s == '\t')
			s++;
		e = s + strcspn(s, "#\r");
		while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		*e = '\0';
		if (*s != '\0' && berth_fl_add_allow_host(p, s, err) < 0)
			return berth_err_wrap(err, "in the network preset `%s`, line %u", path, lineno);
		if (nl == NULL)
			break;
		s = nl + 1;
	}
	return 0;
}

int berth_fl_add_credential(struct berth_run_opts *o, const char *arg, struct berth_error *err)
{
	struct berth_policy *p = &o->policy;
	struct berth_credential c, *v;
	char reason[512], hp[BERTH_HOST_NAME_MAX + 8];
	int r = berth_credential_parse(arg, &c, reason, sizeof reason);

	if (r == -2)
		return berth_err(err, ENOMEM, "out of memory");
	if (r < 0) {
		berth_usage_err(err, "invalid --credential: %s", reason);
		return berth_err_hint(err, "e.g. --credential GH_TOKEN=env:GH_TOKEN@api.github.com#bearer "
					   "(docs/credentials.md)");
	}
	for (size_t i = 0; i < p->n_credentials; i++)
		if (strcmp(p->credentials[i].name, c.name) == 0) {
			berth_usage_err(err, "--credential `%s` is given twice", c.name);
			berth_credential_clear(&c);
			return berth_err_hint(err,
					      "bind each name once: the name is the variable inside that "
					      "holds the placeholder");
		}
	if (p->n_credentials >= BERTH_CRED_MAX) {
		berth_credential_clear(&c);
		return berth_usage_err(err, "more than %d --credential bindings", BERTH_CRED_MAX);
	}
	if ((v = realloc(p->credentials, (p->n_credentials + 1) * sizeof *v)) == NULL) {
		berth_credential_clear(&c);
		return berth_err(err, ENOMEM, "out of memory");
	}
	p->credentials = v;
	p->credentials[p->n_credentials++] = c;
	snprintf(hp, sizeof hp, "%s:%u", c.host, c.port);
	if (berth_fl_add_allow_host(p, hp, err) < 0)
		return -1;
	if (berth_fl_add_widening(o,
				  "--credential %s: the secret from %s `%s` is sent to https://%s:%u%s in %s "
				  "(the sandbox sees a placeholder)",
				  c.name, berth_cred_source_name(c.source), c.source_arg, c.host, c.port,
				  c.prefix,
				  c.header == BERTH_CRED_BEARER ? "Authorization: Bearer" : c.field) < 0)
		return berth_err(err, ENOMEM, "out of memory");
	return 0;
}
