/* SPDX-License-Identifier: MIT */
/*
 * trustaside.c - how the trust scan (trustscan.c, trustwatch.c) acts and
 * reports: an entry renamed aside in its own directory, under a name the
 * sandbox cannot have taken in advance, with the shell command that puts it
 * back; the report's lines; the names berth itself gave.
 */
#include "trustscan_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void berth_ts_line(struct scan *sc, const char *fmt, ...)
{
	struct berth_trust_report *o = sc->out;
	va_list ap;
	char *s = NULL;

	if (o->n_lines >= BERTH_TRUST_REPORT_LINES) {
		o->n_more++;
		return;
	}
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s == NULL) {
		sc->oom = true;
		return;
	}
	o->lines[o->n_lines++] = s;
}

/* "ROOT/REL/NAME" for messages. */
void berth_ts_shown(const struct scan *sc, const char *rel, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s%s", sc->root, *rel != '\0' ? "/" : "", rel, name != NULL ? "/" : "",
		 name != NULL ? name : "");
}

/* @path quoted for a POSIX shell into @out: '...' with each ' as '\'',
 * or bash's $'...' with \xHH for a byte that is not printable ASCII, so
 * that the restore command berth prints is exactly the two paths, whatever
 * the sandbox named them. */
static void shq(const char *path, char *out, size_t len)
{
	bool plain = true;
	size_t o = 0;

	for (const unsigned char *c = (const unsigned char *)path; *c != '\0'; c++)
		plain = plain && *c >= 0x20 && *c < 0x7f;
#define PUT(ch)                                                                                              \
	do {                                                                                                 \
		if (o + 1 < len)                                                                             \
			out[o++] = (ch);                                                                     \
	} while (0)
	if (plain) {
		PUT('\'');
		for (const char *c = path; *c != '\0'; c++) {
			if (*c == '\'') {
				PUT('\'');
				PUT('\\');
				PUT('\'');
				PUT('\'');
			} else {
				PUT(*c);
			}
		}
		PUT('\'');
	} else {
		PUT('$');
		PUT('\'');
		for (const unsigned char *c = (const unsigned char *)path; *c != '\0'; c++) {
			if (*c >= 0x20 && *c < 0x7f && *c != '\'' && *c != '\\') {
				PUT((char)*c);
			} else {
				char hx[5];
				snprintf(hx, sizeof hx, "\\x%02x", *c);
				for (int k = 0; k < 4; k++)
					PUT(hx[k]);
			}
		}
		PUT('\'');
	}
#undef PUT
	out[o < len ? o : len - 1] = '\0';
}

/* The name berth renames @name to when NAME.berth-set-aside is taken:
 * NAME.berth-set-aside-XXXXXXXX, eight hex digits from getrandom(2), so
 * that the sandbox cannot take every name in advance and leave what it
 * planted in place. */
static void aside_name(const char *name, char *to, size_t len)
{
	unsigned int r = 0;

	if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
		struct timespec t;
		clock_gettime(CLOCK_MONOTONIC, &t);
		r = (unsigned int)(t.tv_nsec ^ (t.tv_sec << 20) ^ getpid());
	}
	snprintf(to, len, "%.200s" SET_ASIDE "-%08x", name, r);
}

/* Rename @name in @dfd aside (aside_name).  A directory the sandbox made
 * unwritable (chmod 0555; the same uid as berth, when berth is not root) is
 * made writable for the rename and given its mode back. */
void berth_ts_set_aside(struct scan *sc, int dfd, const char *rel, const char *name, const char *why)
{
	char to[NAME_MAX + 1], path[PATH_MAX], dir[PATH_MAX], newpath[PATH_MAX + NAME_MAX + 2];
	char q_old[2 * PATH_MAX], q_new[2 * PATH_MAX + 2 * NAME_MAX];
	struct stat ds;
	bool chmodded = false;
	int e = 0;

	berth_ts_shown(sc, rel, name, path, sizeof path);
	berth_ts_shown(sc, rel, NULL, dir, sizeof dir);
	for (int n = 0; n < 9; n++) {
		/* NAME.berth-set-aside when it is free; when the sandbox took it,
		 * a name it cannot have guessed */
		if (n == 0 || (n == 1 && chmodded && e == EACCES))
			snprintf(to, sizeof to, "%.200s" SET_ASIDE, name);
		else
			aside_name(name, to, sizeof to);
		if (syscall(SYS_renameat2, dfd, name, dfd, to, RENAME_NOREPLACE) == 0) {
			e = 0;
			break;
		}
		e = errno;
		if (e == EACCES && !chmodded && fstat(dfd, &ds) == 0 &&
		    fchmod(dfd, (ds.st_mode & 07777) | 0300) == 0) {
			chmodded = true;
			continue;
		}
		if (e != EEXIST)
			break;
	}
	if (chmodded)
		(void)fchmod(dfd, ds.st_mode & 07777);
	if (e == 0) {
		sc->out->n_set_aside++;
		snprintf(newpath, sizeof newpath, "%s/%s", dir, to);
		shq(newpath, q_new, sizeof q_new);
		shq(path, q_old, sizeof q_old);
		berth_ts_line(
		    sc, "set aside `%s` as `%s`: the sandbox made or changed it, and %s; restore: mv %s %s",
		    path, to, why, q_new, q_old);
		return;
	}
	sc->out->n_failed++;
	berth_ts_line(
	    sc,
	    "could not set aside `%s` (%s), and %s: it is still there and live; remove it before you run "
	    "anything there",
	    path, strerror(e), why);
}

/* A name berth set aside: NAME.berth-set-aside-XXXXXXXX (or, from berth
 * before that, NAME.berth-set-aside[.N]).  No host tool reads such a name;
 * only files are skipped (a directory is walked whatever its name). */
bool berth_ts_set_aside_name(const char *name)
{
	const char *m = strstr(name, SET_ASIDE);

	while (m != NULL) {
		const char *t = m + strlen(SET_ASIDE);
		if (*t == '\0' || (t[0] == '-' && strlen(t) == 9 && strspn(t + 1, "0123456789abcdef") == 8) ||
		    (t[0] == '.' && t[1] != '\0' && strspn(t + 1, "0123456789") == strlen(t + 1)))
			return true;
		m = strstr(m + 1, SET_ASIDE);
	}
	return false;
}
