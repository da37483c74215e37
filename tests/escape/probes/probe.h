/* SPDX-License-Identifier: MIT */
/*
 * probe.h - tiny helpers shared by the escape probes (libc only).
 *
 * Every probe defines PROBE_NAME before including this file, attempts ONE
 * escape and reports exactly one line on stdout:
 *   ok <name>: <what was refused, with which errno>      (exit 0)
 *   FAIL <name>: <what happened instead>                   (exit 1)
 * Output goes through write(2) so that nothing is lost if a later step kills
 * the process.
 */
#ifndef BERTH_ESCAPE_PROBE_H
#define BERTH_ESCAPE_PROBE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PROBE_NAME
#error "define PROBE_NAME before including probe.h"
#endif

static inline const char *errname(int e)
{
	const char *n = e ? strerrorname_np(e) : "0";
	return n ? n : "E?";
}

__attribute__((format(printf, 2, 0))) static void probe_vline(const char *tag, const char *fmt, va_list ap)
{
	char buf[2048];
	int n = snprintf(buf, sizeof buf, "%s %s: ", tag, PROBE_NAME);
	if (n < 0 || (size_t)n >= sizeof buf)
		n = 0;
	int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
	if (m < 0)
		m = 0;
	n += m;
	if ((size_t)n > sizeof buf - 2)
		n = (int)sizeof buf - 2;
	buf[n++] = '\n';
	ssize_t off = 0;
	while (off < n) {
		ssize_t w = write(STDOUT_FILENO, buf + off, (size_t)(n - off));
		if (w <= 0)
			break;
		off += w;
	}
}

__attribute__((format(printf, 1, 2), noreturn, unused)) static void pass(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	probe_vline("ok", fmt, ap);
	va_end(ap);
	_exit(0);
}

__attribute__((format(printf, 1, 2), noreturn, unused)) static void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	probe_vline("FAIL", fmt, ap);
	va_end(ap);
	_exit(1);
}

/* A probe that needs an argument the runner did not give cannot test. */
__attribute__((unused)) static const char *need_arg(int argc, char **argv, int i, const char *what)
{
	if (argc <= i || !argv[i] || !*argv[i])
		fail("missing argument %d (%s): cannot test", i, what);
	return argv[i];
}

/*
 * expect_err - the call described by @what returned @ret with errno @err;
 * it must have failed (ret == -1) with errno @want.  Returns on success.
 */
__attribute__((unused)) static void expect_err(const char *what, long ret, int err, int want)
{
	if (ret != -1)
		fail("%s succeeded (returned %ld), expected %s", what, ret, errname(want));
	if (err != want)
		fail("%s failed with %s, expected %s", what, errname(err), errname(want));
}

/* As expect_err, but either of two errnos is accepted (both documented). */
__attribute__((unused)) static void expect_err2(const char *what, long ret, int err, int want1, int want2)
{
	if (ret != -1)
		fail("%s succeeded (returned %ld), expected %s or %s", what, ret, errname(want1),
		     errname(want2));
	if (err != want1 && err != want2)
		fail("%s failed with %s, expected %s or %s", what, errname(err), errname(want1),
		     errname(want2));
}

/* Read a "Key:\tvalue" line of /proc/self/status into @out. */
__attribute__((unused)) static int status_field(const char *path, const char *key, char *out, size_t outlen)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	char line[512];
	size_t kl = strlen(key);
	int found = -1;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
			const char *v = line + kl + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			snprintf(out, outlen, "%s", v);
			out[strcspn(out, "\n")] = 0;
			found = 0;
			break;
		}
	}
	fclose(f);
	return found;
}

#endif
